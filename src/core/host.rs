//! The host abstraction: everything the core needs from the JavaScript world, and nothing more.
//! The core never names a JS type; it sees caller values as opaque `Host::V` handles and reaches
//! them only through this trait, so a scripted host can drive it natively in `cargo test`.

use futures::future::LocalBoxFuture;
use std::rc::Rc;

/// A future returned by the host. Single-threaded: nothing here is `Send`.
pub type HostFuture<T> = LocalBoxFuture<'static, T>;

/// A Rust function JS can call: arguments in, return value out.
pub type NativeFn<V> = Rc<dyn Fn(&[V]) -> V>;

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
    /// `error`, carrying a stable `code` (E-8.6: a `TypeError` when `type_error`): the engine marks it so that the
    /// package's error classes recognise it. Here, a `code` property.
    fn coded_error(&self, message: &str, type_error: bool, code: &'static str) -> Self::V {
        let error = self.error(message, type_error);
        let _ = self.set(&error, "code", &self.constant(code));
        error
    }
    /// A JS `RangeError` with this message: what the reference throws for a depth its stack cannot take.
    fn range_error(&self, message: &str) -> Self::V {
        self.error(message, false)
    }
    /// A JS `SyntaxError` with this message: what `new RegExp` throws for a schema's pattern.
    fn syntax_error(&self, message: &str) -> Self::V {
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
    /// Whether an object is plain: its prototype `null`, or one whose own prototype is `null` (`Object.prototype` of
    /// any realm). A class instance is not. May run a proxy's `getPrototypeOf` trap.
    fn plain_object(&self, v: &Self::V) -> Result<bool, Self::V> {
        Ok(self.kind(v) == Kind::Object)
    }

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
    /// The message of a thrown value (E-8.3.1): `value.message` for errors and error-like objects
    /// (string `message` and `name`), else `String(value)`.
    fn error_message(&self, err: &Self::V) -> String;

    // ---- JSON through the engine's own `JSON` (S-2.8.3)
    /// `JSON.stringify(v)` or `JSON.stringify(v, null, 2)`; `Ok(None)` when the result is undefined.
    fn json_stringify(&self, v: &Self::V, pretty: bool) -> Result<Option<String>, Self::V>;
    fn json_parse(&self, text: &str) -> Result<Self::V, Self::V>;
    /// `JSON.parse(text)` of the JS string `text`, read by the engine where it is: a checkpoint row of megabytes is
    /// not copied into the host's memory (issue 34). Errors are the engine's `SyntaxError`.
    fn json_parse_value(&self, text: &Self::V) -> Result<Self::V, Self::V> {
        self.json_parse(&self.as_string(text).unwrap_or_default())
    }
    /// `JSON.parse(JSON.stringify(v))` at any depth (`undefined` when the text is), the text never leaving the engine:
    /// a snapshot of a transcript holding megabytes of images is not copied into the host's memory (issue 34).
    fn json_clone(&self, v: &Self::V) -> Result<Self::V, Self::V> {
        match self.json_stringify(v, false)? {
            Some(text) => self.json_parse(&text),
            None => Ok(self.undefined()),
        }
    }
    /// `RegExp.prototype.test` of `pattern` compiled as pi-schema's `sharedRegex` compiles it: with the `u` flag, else
    /// (older schemas escape characters `u` rejects, as `\\-`) without it; `None` when neither compiles.
    fn regex_test(&self, pattern: &str, text: &str) -> Option<bool>;
    /// The message `new RegExp(pattern)` throws for a pattern `regex_test` rejects (`None`: the host cannot say).
    fn regex_error(&self, _pattern: &str) -> Option<String> {
        None
    }
    /// Format `regex`: whether `new RegExp(text, "u")` compiles. The default asks `regex_test`, which also accepts
    /// patterns valid only without the flag.
    fn regex_unicode(&self, text: &str) -> bool {
        self.regex_test(text, "").is_some()
    }
    /// Format `url`: `URL.canParse(text)`; `None` when the host has no URL parser (the validator approximates it).
    fn url_can_parse(&self, _text: &str) -> Option<bool> {
        None
    }

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
