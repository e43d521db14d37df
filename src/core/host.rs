//! The host abstraction: everything the core needs from the JavaScript world, and nothing more.
//! The core never names a JS type; it sees caller values as opaque `Host::V` handles and reaches
//! them only through this trait, so a scripted host can drive it natively in `cargo test`.

use futures::future::LocalBoxFuture;
use std::rc::Rc;

/// A future returned by the host. Single-threaded: nothing here is `Send`.
pub type HostFuture<T> = LocalBoxFuture<'static, T>;

/// A Rust function JS can call: arguments in, return value out.
pub type NativeFn<V> = Rc<dyn Fn(&[V]) -> V>;

/// The kind of an assistant message event, as the loop dispatches on it (L-3.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventCode {
    Start,
    /// `text_*`, `thinking_*`, `toolcall_*`.
    Block,
    Done,
    Error,
    /// Anything else, a non-object, or a missing `type`.
    Other,
}

impl EventCode {
    pub fn of(kind: &str) -> EventCode {
        match kind {
            "start" => EventCode::Start,
            "text_start" | "text_delta" | "text_end" | "thinking_start" | "thinking_delta" | "thinking_end"
            | "toolcall_start" | "toolcall_delta" | "toolcall_end" => EventCode::Block,
            "done" => EventCode::Done,
            "error" => EventCode::Error,
            _ => EventCode::Other,
        }
    }
}

/// What kind of value a handle holds, as JavaScript's `typeof` plus the array/null split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Undefined,
    Null,
    Bool,
    Number,
    String,
    Array,
    Function,
    /// Any other object (plain objects, class instances, promises, ...).
    Object,
    /// Symbols, BigInts and whatever else a host cannot describe.
    Other,
}

impl Kind {
    pub fn is_nullish(self) -> bool {
        matches!(self, Kind::Undefined | Kind::Null)
    }
    /// True for values a property can be read from: objects, arrays, functions.
    pub fn is_object_like(self) -> bool {
        matches!(self, Kind::Array | Kind::Function | Kind::Object)
    }
}

/// What one step of reading an assistant message event source produced (`Host::pump`).
pub enum Pumped<V> {
    /// Nothing queued: await the iterator.
    Empty,
    /// A block event with the partial in place whose `message_update` the observing sink took.
    Delivered,
    /// The same, when there is no observing sink: the `message_update` event to emit.
    Update(V),
    /// The observing sink threw this for the `message_update` event.
    SinkFailed(V),
    /// Any other event, with its code, for the loop to handle.
    Event(EventCode, V),
}

/// What `Host::tool_changes` found: `(toolsAdded, toolsRemoved)`, or the value a getter threw.
pub type ToolChanges<V> = Result<(Vec<V>, Vec<V>), V>;

/// The JS engine as the core sees it. `V` is a handle to a JS value; cloning a handle never copies
/// the value it points to (identity is kept: a message appears as the same object everywhere).
///
/// Every method that may run caller code (getters, proxies, functions) returns `Err(thrown value)`
/// instead of unwinding, so a hostile caller object can never trap the instance.
pub trait Host: Clone + 'static {
    type V: Clone + 'static;

    // ---- creating values
    fn undefined(&self) -> Self::V;
    fn null(&self) -> Self::V;
    fn boolean(&self, b: bool) -> Self::V;
    fn number(&self, n: f64) -> Self::V;
    fn string(&self, s: &str) -> Self::V;
    /// A string that recurs (event types, keys): hosts may cache it.
    fn constant(&self, s: &'static str) -> Self::V {
        self.string(s)
    }
    /// A new plain object whose own keys are `entries` in the given order.
    fn object(&self, entries: &[(&str, Self::V)]) -> Self::V;
    /// A new plain array.
    fn array(&self, items: &[Self::V]) -> Self::V;
    /// A JS function that calls `f` with its arguments and returns what `f` returns. The function
    /// must stay callable for as long as JS holds it (it may be called long after a run ended).
    fn function(&self, f: NativeFn<Self::V>) -> Self::V;
    /// A JS function that calls `f` (with `this` undefined) with `first` before its own
    /// arguments and returns what `f` returns: one native function serves many callers.
    fn bind_first(&self, f: &Self::V, first: &Self::V) -> Self::V;
    /// The native function `make()` as a value that the host may keep and hand out again for the same `name`
    /// (`make` must then not capture per-call state). The default makes a new one every time; the JS host keeps
    /// one per name, so no closure, and no finalizer entry, is made per use.
    fn shared_function(&self, name: &'static str, make: &dyn Fn() -> NativeFn<Self::V>) -> Self::V {
        let _ = name;
        self.function(make())
    }
    /// A JS `TypeError` (or `Error` when `type_error` is false) with this message.
    fn error(&self, message: &str, type_error: bool) -> Self::V;
    /// A JS `RangeError` with this message: what the reference throws for a depth its stack cannot take.
    fn range_error(&self, message: &str) -> Self::V {
        self.error(message, false)
    }

    // ---- inspecting values
    fn kind(&self, v: &Self::V) -> Kind;
    fn as_string(&self, v: &Self::V) -> Option<String>;
    fn as_number(&self, v: &Self::V) -> Option<f64>;
    /// JavaScript truthiness.
    fn truthy(&self, v: &Self::V) -> bool;
    /// `Object.is(a, b)`.
    fn same(&self, a: &Self::V, b: &Self::V) -> bool;

    // ---- properties (may run getters / proxy traps)
    fn get(&self, obj: &Self::V, key: &str) -> Result<Self::V, Self::V>;
    fn set(&self, obj: &Self::V, key: &str, value: &Self::V) -> Result<(), Self::V>;
    /// `delete obj[key]`.
    fn delete(&self, obj: &Self::V, key: &str) -> Result<(), Self::V>;
    /// `{...obj}` for objects, `[...arr]` for arrays.
    fn shallow_copy(&self, obj: &Self::V) -> Result<Self::V, Self::V>;
    /// The items of an array (a snapshot of its current elements).
    fn array_items(&self, arr: &Self::V) -> Result<Vec<Self::V>, Self::V>;
    fn array_push(&self, arr: &Self::V, value: &Self::V) -> Result<(), Self::V>;
    /// Replaces `arr[index]`; `index` must be below the length.
    fn array_set(&self, arr: &Self::V, index: usize, value: &Self::V) -> Result<(), Self::V>;
    fn array_len(&self, arr: &Self::V) -> Result<usize, Self::V>;
    /// `to[key] = from[key]` for each key in order (getters and setters run as they would).
    /// (A host may do it in one crossing.)
    fn copy_fields(&self, from: &Self::V, to: &Self::V, keys: &'static [&'static str]) -> Result<(), Self::V> {
        for key in keys {
            self.set(to, key, &self.get(from, key)?)?;
        }
        Ok(())
    }
    /// `arr[index]`. (The default snapshots the whole array; hosts read the one element.)
    fn array_get(&self, arr: &Self::V, index: usize) -> Result<Self::V, Self::V> {
        Ok(self.array_items(arr)?.get(index).cloned().unwrap_or_else(|| self.undefined()))
    }
    /// `Object.entries(obj)`.
    fn entries(&self, obj: &Self::V) -> Result<Vec<(String, Self::V)>, Self::V>;
    /// `new Set(items)`.
    fn new_set(&self, items: &[Self::V]) -> Self::V;
    /// `[...set]`.
    fn set_items(&self, set: &Self::V) -> Result<Vec<Self::V>, Self::V>;
    /// `Promise.reject(reason)`, for native functions that must fail asynchronously.
    fn rejected(&self, reason: &Self::V) -> Self::V;
    /// A pending promise and the function that resolves it.
    fn deferred(&self) -> (Self::V, Self::V);

    // ---- calling caller code
    /// Calls `f` with `this` and `args`. `f` runs synchronously inside `call` (so calls made in a
    /// row start in that order within one tick); the returned future only awaits the outcome.
    /// A synchronous throw, a rejection, or a thenable that
    /// rejects all become `Err`; a returned thenable is awaited.
    fn call(&self, f: &Self::V, this: &Self::V, args: &[Self::V]) -> HostFuture<Result<Self::V, Self::V>>;
    /// Awaits `v` as `await v` would: a thenable's outcome, else `v` itself.
    fn settle(&self, v: &Self::V) -> HostFuture<Result<Self::V, Self::V>> {
        let host = self.clone();
        let identity = self.function(Rc::new(move |args: &[Self::V]| match args.first() {
            Some(v) => v.clone(),
            None => host.undefined(),
        }));
        self.call(&identity, &self.undefined(), std::slice::from_ref(v))
    }
    /// Calls `f` synchronously, without awaiting what it returns (used for observational sinks).
    fn call_sync(&self, f: &Self::V, this: &Self::V, args: &[Self::V]) -> Result<Self::V, Self::V>;
    /// Adds `v` to the JS `Set` `set` (once, as `Set.prototype.add`).
    fn set_add(&self, set: &Self::V, v: &Self::V) -> Result<(), Self::V>;
    /// Removes `v` from the JS `Set` `set`.
    fn set_delete(&self, set: &Self::V, v: &Self::V) -> Result<(), Self::V>;
    /// `for (const f of listeners) await f(a, b)`, one stretch at a time: calls the functions of the `Set` (or
    /// array) `listeners` in order, iterating it live as `for … of` does (one subscribed meanwhile is called, one
    /// removed before its turn is not), and stops at the first that returns something to await:
    /// `Some(value)`, which the caller awaits (`settle`) before calling again with the same `cursor`; `None` once
    /// every one was called. `cursor` starts `None` and carries the iteration. A listener's throw is `Err` with the
    /// cursor kept, so a caller that swallows it can go on with the next listener; a failure of the list itself is
    /// `Err` with the cursor `None`. This
    /// default re-reads the listeners at every step and calls the first one not called yet (a `Set`'s order and
    /// liveness, except that one removed and added again is not called twice), stopping after every call
    /// (awaiting a plain value is immediate); the JS host walks the `Set`'s own iterator and stops only at thenables.
    fn call_listeners(
        &self,
        listeners: &Self::V,
        cursor: &mut Option<Self::V>,
        a: &Self::V,
        b: &Self::V,
    ) -> Result<Option<Self::V>, Self::V> {
        let called = cursor.take().unwrap_or_else(|| self.array(&[]));
        let done = self.array_items(&called)?;
        let current = match self.kind(listeners) {
            Kind::Array => self.array_items(listeners)?,
            _ => self.set_items(listeners)?,
        };
        *cursor = Some(called.clone());
        let Some(f) = current.into_iter().find(|f| !done.iter().any(|d| self.same(d, f))) else {
            return Ok(None);
        };
        self.array_push(&called, &f)?;
        Ok(Some(self.call_sync(&f, &self.undefined(), &[a.clone(), b.clone()])?))
    }
    /// The message of a thrown value (E-8.3.1): `value.message` for errors and error-like objects
    /// (string `message` and `name`), else `String(value)`.
    fn error_message(&self, err: &Self::V) -> String;

    // ---- JSON through the engine's own `JSON` (S-2.8.3)
    /// `JSON.stringify(v)` or `JSON.stringify(v, null, 2)`; `Ok(None)` when the result is undefined.
    fn json_stringify(&self, v: &Self::V, pretty: bool) -> Result<Option<String>, Self::V>;
    fn json_parse(&self, text: &str) -> Result<Self::V, Self::V>;
    /// A copy of `v` and its `JSON.stringify` text, reading `v` once. The JS host copies with
    /// `structuredClone` as the reference does (throwing its errors) and stringifies the clone;
    /// this default makes a fresh `JSON.parse` of the text (`null` when the text is undefined).
    fn json_copy(&self, v: &Self::V) -> Result<(Option<String>, Self::V), Self::V> {
        let text = self.json_stringify(v, false)?;
        let copy = match &text {
            Some(text) => self.json_parse(text)?,
            None => self.null(),
        };
        Ok((text, copy))
    }
    /// The validated arguments: `copy` (the clone `json_copy` made) with `patches` applied. `patches` is the JSON
    /// text of a list of `[path, value]` (set), `[path]` (delete) and `[path, 0, 0]` (wrap into a one-item array)
    /// entries; a path is a list of keys and indices, and the empty path is the whole copy. Values may hold markers
    /// (`validate::special`), which the JS host turns back into the values they stand for. This default reads and
    /// writes through `get`/`set`/`delete`.
    fn patch_copy(&self, copy: &Self::V, patches: &str) -> Result<Self::V, Self::V> {
        use serde_json::Value;
        let parsed = crate::core::wtf::parse(patches).map_err(|e| self.error(&e, false))?;
        let key = |k: &Value| k.as_str().map_or_else(|| k.to_string(), str::to_string);
        let parse = |v: &Value| self.json_parse(&crate::core::validate::js_json_stringify(v));
        let mut root = copy.clone();
        for patch in parsed.as_array().map(Vec::as_slice).unwrap_or_default() {
            let Value::Array(patch) = patch else { continue };
            let (Some(Value::Array(path)), value, wrap) = (patch.first(), patch.get(1), patch.len() == 3) else {
                continue;
            };
            let Some((last, parents)) = path.split_last() else {
                root = match value {
                    _ if wrap => self.array(&[root]),
                    Some(value) => parse(value)?,
                    None => root,
                };
                continue;
            };
            let mut node = root.clone();
            for k in parents {
                node = self.get(&node, &key(k))?;
            }
            match value {
                _ if wrap => {
                    let item = self.get(&node, &key(last))?;
                    self.set(&node, &key(last), &self.array(&[item]))?;
                }
                Some(value) => self.set(&node, &key(last), &parse(value)?)?,
                None => self.delete(&node, &key(last))?,
            }
        }
        crate::core::wtf::drop_deep(parsed);
        Ok(root)
    }
    /// `new RegExp(pattern, "u").test(text)`; `None` when the pattern is invalid.
    fn regex_test(&self, pattern: &str, text: &str) -> Option<bool>;

    // ---- time
    /// Monotonic milliseconds (`performance.now()`).
    fn now(&self) -> f64;
    /// Wall clock Unix milliseconds (`Date.now()`).
    fn date_now(&self) -> f64;
    /// Resolves after `ms` milliseconds; dropping the future clears the timer.
    fn sleep(&self, ms: f64) -> HostFuture<()>;

    // ---- abort signals (an `AbortSignal`, or undefined for none)
    fn signal_aborted(&self, signal: &Self::V) -> bool;
    /// Resolves once `signal` is aborted (never for undefined); dropping it removes the listener.
    fn wait_abort(&self, signal: &Self::V) -> HostFuture<()>;
    /// A new `AbortController`, returned with its signal.
    fn abort_controller(&self) -> (Self::V, Self::V);
    /// `controller.abort(reason)`.
    fn abort(&self, controller: &Self::V, reason: &Self::V);

    // ---- async iteration
    /// `source[Symbol.asyncIterator]()`, or `Ok(None)` when `source` is not async-iterable.
    fn async_iterator(&self, source: &Self::V) -> Result<Option<Self::V>, Self::V>;
    /// `await it.next()`: `Ok(Some(value))` until the iterator reports `done`.
    fn iterator_next(&self, it: &Self::V) -> HostFuture<Result<Option<Self::V>, Self::V>>;
    /// One step of L-3.6.2 for `event`, or with `None` for the next event already queued in
    /// `source` when that is one of this library's own streams (taken synchronously; this default
    /// sees none, so the loop awaits the iterator). A block event while the partial sits at
    /// `messages[slot]` replaces it there (`messages[slot] = event.partial`) and makes the update
    /// `{type: "message_update", assistantMessageEvent: event, message: {...event.partial}}`, which
    /// with `sink` is handed to `sink` synchronously. Errors are values thrown by caller getters
    /// while reading the event (not by the sink). A host may do it all in one step, and with
    /// `None` may deliver several queued block events to `sink` before answering `Delivered`
    /// (the loop does nothing between two of them).
    fn pump(
        &self,
        _source: &Self::V,
        event: Option<Self::V>,
        messages: &Self::V,
        slot: Option<usize>,
        sink: Option<&Self::V>,
    ) -> Result<Pumped<Self::V>, Self::V> {
        let Some(event) = event else {
            return Ok(Pumped::Empty);
        };
        let code = if self.kind(&event).is_object_like() {
            let kind = self.get(&event, "type")?;
            self.as_string(&kind).map_or(EventCode::Other, |k| EventCode::of(&k))
        } else {
            EventCode::Other
        };
        let (EventCode::Block, Some(index)) = (code, slot) else {
            return Ok(Pumped::Event(code, event));
        };
        let partial = self.get(&event, "partial")?;
        self.array_set(messages, index, &partial)?;
        let copy = self.shallow_copy(&partial)?;
        let update = self.object(&[
            ("type", self.constant("message_update")),
            ("assistantMessageEvent", event.clone()),
            ("message", copy),
        ]);
        let Some(sink) = sink else {
            return Ok(Pumped::Update(update));
        };
        match self.call_sync(sink, &self.undefined(), &[update]) {
            Ok(_) => Ok(Pumped::Delivered),
            Err(e) => Ok(Pumped::SinkFailed(e)),
        }
    }
    /// L-3.4.2's comparison in one step: replays the tool fields of every system message of
    /// `messages` (an array; anything else declares nothing), then the pairs `(toolsRemoved,
    /// toolsAdded)` of `extra`, and compares the declared tools with `tools` (`context.tools`) by
    /// declaration text. Returns the declarations to add and the `{name}` objects to remove, both
    /// empty when nothing changed. (A host may do it without a crossing per tool, and may resume
    /// from a remembered scan of the same transcript when it can tell its prefix is unchanged.)
    fn tool_changes(&self, messages: &Self::V, extra: &[(Self::V, Self::V)], tools: &Self::V) -> ToolChanges<Self::V>
    where
        Self: Sized,
    {
        super::declare::tool_changes(self, messages, extra, tools)
    }
    /// The Agent's reducer on one event: `true` at a durable point. (A host may apply
    /// it in one crossing.)
    fn reduce_agent_event(&self, st: &Self::V, event: &Self::V) -> Result<bool, Self::V>
    where
        Self: Sized,
    {
        super::agent::reduce(self, st, event)
    }
    /// The function a run polls for the agent's steering (or follow-up) queue: each call
    /// drains the selection of `queue` and returns it as an array; with `skip`, the first call
    /// returns an empty array instead. (A host may make it a function of its own, so a poll never
    /// crosses into the core.)
    fn queue_poller(&self, st: &Self::V, queue: super::agent::Queue, skip: bool) -> Self::V
    where
        Self: Sized + Clone + 'static,
    {
        super::agent::native_queue_poller(self, st, queue, skip)
    }
    /// `true` when every field a run of the Agent checks (E-8.1: the state's tools, messages and model,
    /// the agent's functions, hooks and numbers) is valid, read in the order the check reads them;
    /// `false` sends the run through the check itself, which names what is wrong. (A host may look in
    /// one step; the default always checks.)
    fn agent_state_valid(&self, _agent: &Self::V, _st: &Self::V) -> Result<bool, Self::V> {
        Ok(false)
    }
    /// E-8.1 over a list of messages (an array): the index of the first entry that is not a
    /// message, with `true` when it is not even an object (else its `role` is not a string).
    /// Errors are values thrown by caller getters. (A host may check without a crossing per message.)
    fn first_bad_message(&self, list: &Self::V) -> Result<Option<(usize, bool)>, Self::V> {
        for (i, m) in self.array_items(list)?.iter().enumerate() {
            if !matches!(self.kind(m), Kind::Object | Kind::Function) {
                return Ok(Some((i, true)));
            }
            if self.kind(&self.get(m, "role")?) != Kind::String {
                return Ok(Some((i, false)));
            }
        }
        Ok(None)
    }
    /// The agent's default `convertToLlm` as a host function, when the host has one
    /// (one filter in the engine instead of a crossing per message); `None` builds it natively.
    fn default_convert_to_llm(&self) -> Option<Self::V> {
        None
    }
    /// A number identifying the object `v` for as long as it lives (never reused), for caches
    /// keyed by identity like the reference's `WeakMap`s; `None` for primitives or when unsupported.
    fn object_id(&self, _v: &Self::V) -> Option<f64> {
        None
    }
    /// Ids (from `object_id`) of objects the engine has collected since the last call, so caches
    /// keyed by them can forget those entries; empty when unsupported.
    fn collected_ids(&self) -> Vec<f64> {
        Vec::new()
    }
    /// Calls `it.return()` if present, without awaiting it.
    fn iterator_return(&self, it: &Self::V);
}
