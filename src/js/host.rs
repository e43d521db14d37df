//! `Host` on the real JS engine: every operation that may run caller code goes through a snippet
//! (snippets.rs) that catches, either declared with `catch` or (the hottest: property reads, calls,
//! the stream pump) reporting the throw itself through `checked` or a `protocol` code, so a throwing
//! getter or proxy becomes `Err`, never an unwind or a trap.

use super::protocol::{bad_message, call_flag, checked, kind_code, pump, settled};
// The free functions this file calls and does not define: the JS snippets, declared in snippets.rs.
use super::snippets::*;
use crate::core::agent::Queue;
use crate::core::agent_state::init::Initial;
use crate::core::args;
use crate::core::fast::{Checked, EventCode, FastPaths, Pumped, ToolChanges, ViewPaths};
use crate::core::fxhash::FxMap;
use crate::core::host::{Host, HostFuture, Kind, NativeFn};
use crate::core::places::{Key, Places};
use crate::core::text::wtf;
use crate::core::tool_schema::{self, ToolSchema};
use futures::FutureExt;
use js_sys::{Array, Function, Object, Promise, Reflect};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::task::{Context, Poll, Waker};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// Set to `call_flag::THREW` by the snippets when a checked call threw (`failed` in snippets/calls.js). Its address
/// is handed to JS once; the snippets write it, this side reads it right after each checked call.
static CALL_FAILED: AtomicI32 = AtomicI32::new(call_flag::CLEAR);

thread_local! {
    static FLAG_INSTALLED: Cell<bool> = const { Cell::new(false) };
}

/// Runs a checked helper call: `Err(thrown)` when the helper reported a throw.
fn checked<T>(call: impl FnOnce() -> T) -> Result<T, JsValue> {
    if !FLAG_INSTALLED.with(Cell::get) {
        set_failure_flag(&wasm_bindgen::memory(), CALL_FAILED.as_ptr() as usize as u32);
        FLAG_INSTALLED.with(|i| i.set(true));
    }
    let value = call();
    if CALL_FAILED.load(Ordering::Relaxed) == call_flag::CLEAR {
        return Ok(value);
    }
    CALL_FAILED.store(call_flag::CLEAR, Ordering::Relaxed);
    Err(take_caught())
}

/// How an awaited JS promise ended: a `settled` code and the value.
type Outcome = (u8, JsValue);

enum Slot {
    Waiting(Option<Waker>),
    Settled(Outcome),
}

thread_local! {
    /// Awaits in flight, by slot number (`Key::to_number`): a place is reused, a number never is, so a late outcome
    /// for a dropped await finds no slot and is discarded.
    static SLOTS: RefCell<Places<Slot>> = RefCell::new(Places::default());
    static SETTLE_INSTALLED: Cell<bool> = const { Cell::new(false) };
}

/// Called by the snippets' one settle function (snippets/waits.js) (from a promise reaction, never inside a borrow).
fn settle(slot: f64, code: u8, value: JsValue) {
    let waker = SLOTS.with(|slots| {
        let mut slots = slots.try_borrow_mut().ok()?;
        let entry = slots.get_mut(Key::from_number(slot as u64))?;
        let Slot::Waiting(waker) = entry else { return None };
        let waker = waker.take();
        *entry = Slot::Settled((code, value));
        waker
    });
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// A JS promise awaited through a numbered slot: the snippets report its outcome to `settle`, which
/// wakes the task. Dropping it frees the slot.
struct Awaited {
    slot: u64,
}

/// A number no place answers to (only with 2^32 awaits in flight at once): the await ends rejected at its first poll.
const NO_SLOT: u64 = u64::MAX >> 11;

impl Awaited {
    /// Takes a slot and lets `register` hand its number to the helper that settles it.
    fn start(register: impl FnOnce(f64)) -> Self {
        if !SETTLE_INSTALLED.with(Cell::get) {
            let f = Closure::<dyn Fn(f64, u8, JsValue)>::new(settle);
            set_settle(&f.into_js_value());
            SETTLE_INSTALLED.with(|i| i.set(true));
        }
        let key =
            SLOTS.with(|slots| slots.try_borrow_mut().ok().and_then(|mut slots| slots.insert(Slot::Waiting(None))));
        let slot = key.map_or(NO_SLOT, Key::to_number);
        #[allow(clippy::cast_precision_loss)] // slot numbers stay below 2^53
        register(slot as f64);
        Awaited { slot }
    }
}

impl Future for Awaited {
    type Output = Outcome;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        SLOTS.with(|slots| {
            let Ok(mut slots) = slots.try_borrow_mut() else {
                // Never expected (no borrow is held across JS); try again on the next turn.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            };
            match slots.get_mut(Key::from_number(self.slot)) {
                Some(Slot::Waiting(waker)) => {
                    *waker = Some(cx.waker().clone());
                    Poll::Pending
                }
                Some(Slot::Settled(_)) => match slots.remove(Key::from_number(self.slot)) {
                    Some(Slot::Settled(outcome)) => Poll::Ready(outcome),
                    _ => Poll::Ready((settled::REJECTED, JsValue::UNDEFINED)),
                },
                None => Poll::Ready((settled::REJECTED, JsValue::UNDEFINED)),
            }
        })
    }
}

impl Drop for Awaited {
    fn drop(&mut self) {
        SLOTS.with(|slots| {
            if let Ok(mut slots) = slots.try_borrow_mut() {
                slots.remove(Key::from_number(self.slot));
            }
        });
    }
}

fn into_result((code, value): Outcome) -> Result<JsValue, JsValue> {
    if code == settled::REJECTED { Err(value) } else { Ok(value) }
}

/// What dropping an unfinished wait must undo.
enum Undo {
    /// Call a helper's `cancel` (it settles the promise, so nothing waits on it forever).
    Cancel(JsValue),
    /// Take the slot off this signal's shared abort listener (`unwatchAbort`; the last one removes it).
    Unwatch(JsValue),
}

/// An awaited helper outcome that is undone when dropped before it settles.
struct Cancellable {
    awaited: Awaited,
    /// `None` once settled (nothing left to undo).
    undo: Option<Undo>,
}

impl Cancellable {
    /// `handle` is a helper's `{promise, cancel}`.
    fn new(handle: &JsValue) -> Self {
        let mut cancel = None;
        let awaited = Awaited::start(|slot| cancel = Some(await_handle(handle, slot)));
        Cancellable { awaited, undo: cancel.map(Undo::Cancel) }
    }

    /// The abort of `signal`, through the snippets' one listener per signal (`watchAbort`); `None` when the wait
    /// can never end (not an event target).
    fn abort_of(signal: &JsValue) -> Option<Self> {
        let mut watching = false;
        let awaited = Awaited::start(|slot| watching = watch_abort(signal, slot));
        watching.then(|| Cancellable { awaited, undo: Some(Undo::Unwatch(signal.clone())) })
    }
}

impl Future for Cancellable {
    type Output = Result<JsValue, JsValue>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match Pin::new(&mut self.awaited).poll(cx) {
            Poll::Ready(outcome) => {
                self.undo = None;
                Poll::Ready(into_result(outcome))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Cancellable {
    fn drop(&mut self) {
        match self.undo.take() {
            Some(Undo::Cancel(cancel)) => {
                if let Some(f) = cancel.dyn_ref::<Function>() {
                    let _ = f.call0(&JsValue::UNDEFINED);
                }
            }
            #[allow(clippy::cast_precision_loss)] // slot numbers stay below 2^53
            Some(Undo::Unwatch(signal)) => unwatch_abort(&signal, self.awaited.slot as f64),
            None => {}
        }
    }
}

#[derive(Clone, Copy, Default)]
pub struct JsHost;

/// A cached JS string for a property key or constant, with the text it was made from.
struct CachedKey {
    address: usize,
    text: Box<str>,
    value: JsValue,
}

impl std::ops::Deref for CachedKey {
    type Target = JsValue;
    fn deref(&self) -> &JsValue {
        &self.value
    }
}

/// Cached JS strings for property keys and constants, almost always string literals: each is kept in one of the two
/// slots of a set chosen by its address, found without hashing its text (a turn reads a few hundred keys). The text is
/// compared too, so a reused address never returns a wrong key. A new key takes the set's first slot and moves the
/// one there to the second: the last two keys of a set stay (checked: no key of an Agent turn is made twice).
const KEY_SETS: usize = 1024;

thread_local! {
    static KEYS: RefCell<Vec<Option<Rc<CachedKey>>>> = RefCell::new(vec![None; 2 * KEY_SETS]);
}

/// A JS string from Rust text, lone surrogates (as `wtf` stand-ins) restored.
pub fn js_string(s: &str) -> JsValue {
    if wtf::has_stand_in(s) { js_sys::JsString::from_char_code(&wtf::to_utf16(s)).into() } else { JsValue::from_str(s) }
}

/// A JS string as Rust text without loss: wasm-bindgen turns a lone surrogate into U+FFFD, so a string showing one is
/// read again as its UTF-16 units (a lone surrogate becomes its `wtf` stand-in).
pub fn rust_string(v: &JsValue) -> Option<String> {
    let s = v.as_string()?;
    if crate::core::text::find(&s, "\u{FFFD}").is_none() {
        return Some(s);
    }
    Some(wtf::from_utf16(&code_units(v)))
}

thread_local! {
    /// JS arrays of static key lists (`Host::copy_fields`), by the list's address: a few entries.
    static KEY_LISTS: RefCell<FxMap<(usize, usize), Rc<JsValue>>> = RefCell::new(FxMap::default());
    /// `Host::shared_function`'s functions, made once per name for the life of the instance.
    static SHARED_FUNCTIONS: RefCell<FxMap<&'static str, JsValue>> = RefCell::new(FxMap::default());
}

fn key_list(keys: &'static [&'static str]) -> Rc<JsValue> {
    let slot = (keys.as_ptr() as usize, keys.len());
    if let Some(list) = KEY_LISTS.with(|lists| lists.borrow().get(&slot).cloned()) {
        return list;
    }
    let list: Rc<JsValue> = Rc::new(keys.iter().map(|k| JsValue::from_str(k)).collect::<Array>().into());
    KEY_LISTS.with(|lists| lists.borrow_mut().insert(slot, list.clone()));
    list
}

/// `true` when every argument of `agentLoop`/`agentLoopContinue`/`runAgentLoop*` that E-8.1 checks is valid (read
/// in the order `Checker` reads them; an absent `prompts` or `emit` is not checked); `false` means: check them
/// with `Checker`, which names what is wrong.
#[cfg(feature = "loop")]
pub fn loop_args_look_valid(
    prompts: Option<&JsValue>,
    context: &JsValue,
    config: &JsValue,
    emit: Option<&JsValue>,
    signal: &JsValue,
    stream_fn: &JsValue,
) -> Result<bool, JsValue> {
    let (hooks, timers) = (key_list(&args::CONFIG_HOOKS), key_list(&args::TIMERS));
    let none = JsValue::UNDEFINED;
    let (prompts, has_prompts) = (prompts.unwrap_or(&none), prompts.is_some());
    let (emit, has_emit) = (emit.unwrap_or(&none), emit.is_some());
    loop_args_valid(prompts, has_prompts, context, config, emit, has_emit, signal, stream_fn, &hooks, &timers)
}

/// The cached JS string for `k`, shared (an `Rc` clone costs no externref table slot).
fn key(k: &str) -> Rc<CachedKey> {
    let address = k.as_ptr() as usize;
    // Fibonacci hashing of the address: literals sit a few bytes apart, the high bits spread them.
    let first = 2 * ((address.wrapping_mul(0x9E37_79B9) >> 22) % KEY_SETS);
    let same = |slot: &Option<Rc<CachedKey>>| slot.as_ref().is_some_and(|c| c.address == address && &*c.text == k);
    let found = KEYS.with(|keys| {
        let keys = keys.borrow();
        keys.get(first..first + 2).and_then(|set| set.iter().find(|slot| same(slot)).cloned().flatten())
    });
    found.unwrap_or_else(|| {
        let made = Rc::new(CachedKey { address, text: k.into(), value: js_string(k) });
        KEYS.with(|keys| {
            if let Some([a, b]) = keys.borrow_mut().get_mut(first..first + 2) {
                *b = a.replace(made.clone());
            }
        });
        made
    })
}

/// The hottest shapes (one per tool call or more) as JS object literals: V8 builds a literal from
/// its boilerplate, several times faster than an object with computed keys.
fn literal(entries: &[(&str, JsValue)]) -> Option<JsValue> {
    Some(match entries {
        [("type", t), ("message", m)] => type_message(t, m),
        [("type", t), ("toolCallId", id), ("toolName", name), ("args", args)] => tool_start_event(t, id, name, args),
        [("type", t), ("toolCallId", id), ("toolName", name), ("result", r), ("isError", e), ("durationMs", ms)] => {
            tool_end_event(t, id, name, r, e, ms)
        }
        [
            ("role", role),
            ("toolCallId", id),
            ("toolName", name),
            ("content", content),
            ("details", details),
            ("usage", usage),
            ("isError", e),
            ("durationMs", ms),
            ("timestamp", at),
        ] => tool_result_message(role, id, name, content, details, usage, e, ms, at),
        _ => return None,
    })
}

impl Host for JsHost {
    type V = JsValue;

    fn undefined(&self) -> JsValue {
        JsValue::UNDEFINED
    }
    fn null(&self) -> JsValue {
        JsValue::NULL
    }
    fn boolean(&self, b: bool) -> JsValue {
        JsValue::from_bool(b)
    }
    fn number(&self, n: f64) -> JsValue {
        JsValue::from_f64(n)
    }
    fn string(&self, s: &str) -> JsValue {
        js_string(s)
    }
    fn constant(&self, s: &'static str) -> JsValue {
        key(s).value.clone()
    }
    fn object(&self, entries: &[(&str, JsValue)]) -> JsValue {
        if let Some(object) = literal(entries) {
            return object;
        }
        // One crossing for the common small shapes (events, content blocks).
        match entries {
            [(k1, v1)] => return object1(&key(k1), v1),
            [(k1, v1), (k2, v2)] => return object2(&key(k1), v1, &key(k2), v2),
            [(k1, v1), (k2, v2), (k3, v3)] => return object3(&key(k1), v1, &key(k2), v2, &key(k3), v3),
            [(k1, v1), (k2, v2), (k3, v3), (k4, v4)] => {
                return object4(&key(k1), v1, &key(k2), v2, &key(k3), v3, &key(k4), v4);
            }
            [(k1, v1), (k2, v2), (k3, v3), (k4, v4), (k5, v5)] => {
                return object5(&key(k1), v1, &key(k2), v2, &key(k3), v3, &key(k4), v4, &key(k5), v5);
            }
            [(k1, v1), (k2, v2), (k3, v3), (k4, v4), (k5, v5), (k6, v6)] => {
                return object6(&key(k1), v1, &key(k2), v2, &key(k3), v3, &key(k4), v4, &key(k5), v5, &key(k6), v6);
            }
            _ => {}
        }
        let mut pairs = Vec::with_capacity(entries.len() * 2);
        for (k, v) in entries {
            pairs.push(key(k).value.clone());
            pairs.push(v.clone());
        }
        object_n(pairs)
    }
    fn array(&self, values: &[JsValue]) -> JsValue {
        match values {
            [] => Array::new().into(),
            _ => array_of(values.to_vec()),
        }
    }
    fn function(&self, f: NativeFn<JsValue>) -> JsValue {
        let closure = Closure::<dyn Fn(Array) -> JsValue>::new(move |args: Array| {
            let args: Vec<JsValue> = args.to_vec();
            f(&args)
        });
        // The JS function owns the closure: it stays callable as long as JS holds it, and with
        // weak refs the Rust side is freed once it is garbage collected.
        variadic(&closure.into_js_value())
    }
    fn bind_first(&self, f: &JsValue, first: &JsValue) -> JsValue {
        bind_first(f, first)
    }
    fn shared_function(&self, name: &'static str, make: &dyn Fn() -> NativeFn<JsValue>) -> JsValue {
        if let Some(f) = SHARED_FUNCTIONS.with(|fs| fs.borrow().get(name).cloned()) {
            return f;
        }
        let f = self.function(make());
        SHARED_FUNCTIONS.with(|fs| fs.borrow_mut().insert(name, f.clone()));
        f
    }
    fn range_error(&self, message: &str) -> JsValue {
        js_sys::RangeError::new(message).into()
    }
    fn syntax_error(&self, message: &str) -> JsValue {
        js_sys::SyntaxError::new(message).into()
    }
    fn error(&self, message: &str, type_error: bool) -> JsValue {
        let error: JsValue =
            if type_error { js_sys::TypeError::new(message).into() } else { js_sys::Error::new(message).into() };
        if wtf::has_stand_in(message) {
            // A name or value quoted in the message holds a lone surrogate: the message keeps it.
            let _ = Reflect::set(&error, &key("message"), &js_string(message));
        }
        error
    }

    fn coded_error(&self, message: &str, type_error: bool, code: &'static str) -> JsValue {
        brand_error(&self.error(message, type_error), code)
    }

    fn kind(&self, v: &JsValue) -> Kind {
        match kind_of(v) {
            kind_code::UNDEFINED => Kind::Undefined,
            kind_code::NULL => Kind::Null,
            kind_code::BOOL => Kind::Bool,
            kind_code::NUMBER => Kind::Number,
            kind_code::STRING => Kind::String,
            kind_code::ARRAY => Kind::Array,
            kind_code::FUNCTION => Kind::Function,
            kind_code::OBJECT => Kind::Object,
            _ => Kind::Other,
        }
    }
    fn as_string(&self, v: &JsValue) -> Option<String> {
        rust_string(v)
    }
    fn as_number(&self, v: &JsValue) -> Option<f64> {
        v.as_f64()
    }
    fn truthy(&self, v: &JsValue) -> bool {
        v.is_truthy()
    }
    fn same(&self, a: &JsValue, b: &JsValue) -> bool {
        Object::is(a, b)
    }
    fn plain_object(&self, v: &JsValue) -> Result<bool, JsValue> {
        plain_object(v)
    }

    fn get(&self, obj: &JsValue, k: &str) -> Result<JsValue, JsValue> {
        let k = key(k);
        checked(|| get_checked(obj, &k))
    }
    fn set(&self, obj: &JsValue, k: &str, value: &JsValue) -> Result<(), JsValue> {
        Reflect::set(obj, &key(k), value).map(|_| ())
    }
    fn delete(&self, obj: &JsValue, k: &str) -> Result<(), JsValue> {
        let obj: &Object = obj.unchecked_ref();
        Reflect::delete_property(obj, &key(k)).map(|_| ())
    }
    fn shallow_copy(&self, obj: &JsValue) -> Result<JsValue, JsValue> {
        copy(obj)
    }
    fn array_items(&self, arr: &JsValue) -> Result<Vec<JsValue>, JsValue> {
        items(arr)
    }
    fn array_push(&self, arr: &JsValue, value: &JsValue) -> Result<(), JsValue> {
        push(arr, value)
    }
    fn array_set(&self, arr: &JsValue, index: usize, value: &JsValue) -> Result<(), JsValue> {
        let index = u32::try_from(index).map_err(|_| JsValue::from_str("array index out of range"))?;
        Reflect::set_u32(arr, index, value).map(|_| ())
    }
    fn array_len(&self, arr: &JsValue) -> Result<usize, JsValue> {
        let len = Reflect::get(arr, &key("length"))?;
        Ok(len.as_f64().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as usize).unwrap_or(0))
    }
    fn copy_fields(&self, from: &JsValue, to: &JsValue, keys: &'static [&'static str]) -> Result<(), JsValue> {
        copy_fields(from, to, &key_list(keys))
    }
    fn array_get(&self, arr: &JsValue, index: usize) -> Result<JsValue, JsValue> {
        let index = u32::try_from(index).map_err(|_| JsValue::from_str("array index out of range"))?;
        Reflect::get_u32(arr, index)
    }
    fn entries(&self, obj: &JsValue) -> Result<Vec<(String, JsValue)>, JsValue> {
        let pairs = entries(obj)?;
        Ok(pairs
            .iter()
            .map(|pair| {
                let pair: Array = pair.unchecked_into();
                (rust_string(&pair.get(0)).unwrap_or_default(), pair.get(1))
            })
            .collect())
    }
    fn new_set(&self, values: &[JsValue]) -> JsValue {
        new_set(&values.iter().collect::<Array>())
    }
    fn set_items(&self, set: &JsValue) -> Result<Vec<JsValue>, JsValue> {
        set_items(set).map(|a| a.to_vec())
    }
    fn rejected(&self, reason: &JsValue) -> JsValue {
        Promise::reject(reason).into()
    }
    fn deferred(&self) -> (JsValue, JsValue) {
        let pair = deferred();
        (pair.get(0), pair.get(1))
    }

    fn call(&self, f: &JsValue, this: &JsValue, args: &[JsValue]) -> HostFuture<Result<JsValue, JsValue>> {
        match self.call_sync(f, this, args) {
            Ok(value) => self.settle(&value),
            Err(e) => futures::future::ready(Err(e)).boxed_local(),
        }
    }
    fn settle(&self, value: &JsValue) -> HostFuture<Result<JsValue, JsValue>> {
        // An abandoned wait (D4) leaves only the helper's reaction on the promise: a small JS
        // closure that dies with it, holding no Rust memory (the slot goes with the future).
        let mut awaiting = Ok(false);
        let awaited = Awaited::start(|slot| awaiting = await_thenable(value, slot));
        match awaiting {
            Err(e) => futures::future::ready(Err(e)).boxed_local(),
            Ok(false) => futures::future::ready(Ok(value.clone())).boxed_local(),
            Ok(true) => awaited.map(into_result).boxed_local(),
        }
    }
    fn call_sync(&self, f: &JsValue, this: &JsValue, args: &[JsValue]) -> Result<JsValue, JsValue> {
        // Reflect.apply, never `f.call(...)`: a caller's function may have an own `call` property.
        match args {
            [] => checked(|| apply0(f, this)),
            [a] => checked(|| apply1(f, this, a)),
            [a, b] => checked(|| apply2(f, this, a, b)),
            [a, b, c, d] => checked(|| apply4(f, this, a, b, c, d)),
            _ => apply(f, this, args.to_vec()),
        }
    }
    fn set_add(&self, set: &JsValue, v: &JsValue) -> Result<(), JsValue> {
        set_add(set, v)
    }
    fn set_delete(&self, set: &JsValue, v: &JsValue) -> Result<(), JsValue> {
        set_delete(set, v)
    }
    fn error_message(&self, err: &JsValue) -> String {
        error_message(err)
    }

    fn json_stringify(&self, v: &JsValue, pretty: bool) -> Result<Option<String>, JsValue> {
        if !pretty {
            // Any depth JS holds (a snapshot of a transcript holding deep tool arguments, issue 13).
            return stringify(v);
        }
        let text = js_sys::JSON::stringify_with_replacer_and_space(v, &JsValue::NULL, &JsValue::from_f64(2.0))?;
        Ok(JsValue::from(text).as_string())
    }
    fn json_clone(&self, v: &JsValue) -> Result<JsValue, JsValue> {
        json_clone(v)
    }
    fn json_parse_value(&self, text: &JsValue) -> Result<JsValue, JsValue> {
        parse_text(text)
    }
    fn json_parse(&self, text: &str) -> Result<JsValue, JsValue> {
        if wtf::has_stand_in(text) {
            // Raw stand-ins (from text read with `as_string`) are lone surrogates: the engine's text holds them as
            // such, where JSON.parse takes them inside a string as they are.
            return parse_text(&js_string(text));
        }
        js_sys::JSON::parse(text)
    }
    fn regex_test(&self, pattern: &str, text: &str) -> Option<bool> {
        if wtf::has_stand_in(pattern) || wtf::has_stand_in(text) {
            return regex_test_values(&js_string(pattern), &js_string(text)).as_bool();
        }
        regex_test(pattern, text).as_bool()
    }
    fn regex_error(&self, pattern: &str) -> Option<String> {
        regex_error(&js_string(pattern))
    }
    fn regex_unicode(&self, text: &str) -> bool {
        regex_unicode(&js_string(text))
    }
    fn url_can_parse(&self, text: &str) -> Option<bool> {
        Some(url_can_parse(&js_string(text)))
    }

    fn now(&self) -> f64 {
        now()
    }
    fn date_now(&self) -> f64 {
        js_sys::Date::now()
    }
    fn sleep(&self, ms: f64) -> HostFuture<()> {
        Cancellable::new(&timer(ms)).map(|_| ()).boxed_local()
    }

    fn signal_aborted(&self, signal: &JsValue) -> bool {
        signal_aborted(signal)
    }
    fn wait_abort(&self, signal: &JsValue) -> HostFuture<()> {
        if signal.is_undefined() || signal.is_null() {
            return futures::future::pending().boxed_local();
        }
        match Cancellable::abort_of(signal) {
            Some(wait) => wait.map(|_| ()).boxed_local(),
            None => futures::future::pending().boxed_local(),
        }
    }
    fn abort_controller(&self) -> (JsValue, JsValue) {
        let pair = abort_controller();
        (pair.get(0), pair.get(1))
    }
    fn abort(&self, controller: &JsValue, reason: &JsValue) {
        let _ = abort(controller, reason);
    }

    fn async_iterator(&self, source: &JsValue) -> Result<Option<JsValue>, JsValue> {
        let it = async_iterator(source)?;
        Ok(if it.is_undefined() { None } else { Some(it) })
    }
    fn iterator_next(&self, it: &JsValue) -> HostFuture<Result<Option<JsValue>, JsValue>> {
        let mut started = Ok(());
        let awaited = Awaited::start(|slot| started = next_into(it, slot));
        match started {
            Err(e) => futures::future::ready(Err(e)).boxed_local(),
            Ok(()) => awaited
                .map(|(code, value)| match code {
                    settled::REJECTED => Err(value),
                    settled::DONE => Ok(None),
                    _ => Ok(Some(value)),
                })
                .boxed_local(),
        }
    }
    fn object_id(&self, v: &JsValue) -> Option<f64> {
        object_id(v).as_f64()
    }
    fn collected_ids(&self) -> Vec<f64> {
        let ids = take_collected();
        if ids.is_undefined() { Vec::new() } else { js_sys::Float64Array::from(ids).to_vec() }
    }
    fn iterator_return(&self, it: &JsValue) {
        iterator_return(it);
    }
}

thread_local! {
    /// Issue 45: the entry's loader of the compaction module, and the module once loaded.
    static COMPACTION_LOADER: RefCell<JsValue> = const { RefCell::new(JsValue::UNDEFINED) };
    static COMPACTION: RefCell<JsValue> = const { RefCell::new(JsValue::UNDEFINED) };
}

pub fn set_compaction_loader(loader: JsValue) {
    COMPACTION_LOADER.with(|l| l.replace(loader));
}

/// The compaction module and its function `name` (the module is loaded: `compaction_ready` resolved first).
fn compaction_fn(name: &str) -> Result<(JsValue, JsValue), JsValue> {
    let module = COMPACTION.with(|m| m.borrow().clone());
    let f = JsHost.get(&module, name)?;
    Ok((module, f))
}

/// Calls the compaction module's `name` with `args`, synchronously.
fn compaction_call(name: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let (module, f) = compaction_fn(name)?;
    JsHost.call_sync(&f, &module, args)
}

/// The JS twins of the fast paths (`core::fast`): each one crossing instead of one per field, checked against the
/// Rust references by `tests/js/parity.test.mjs`.
impl FastPaths for JsHost {
    fn compaction_problem(&self, v: &JsValue) -> Result<Option<(String, String)>, JsValue> {
        let problem = compaction_problem(v)?;
        if problem.is_undefined() {
            return Ok(None);
        }
        let part = |i: u32| Reflect::get_u32(&problem, i).ok().and_then(|p| p.as_string()).unwrap_or_default();
        Ok(Some((part(0), part(1))))
    }
    fn compaction_ready(&self) -> HostFuture<Result<JsValue, JsValue>> {
        if COMPACTION.with(|m| !m.borrow().is_undefined()) {
            return futures::future::ready(Ok(JsValue::UNDEFINED)).boxed_local();
        }
        let loader = COMPACTION_LOADER.with(|l| l.borrow().clone());
        if !loader.is_function() {
            let e = self.error("compaction: this entry of the package did not register its compaction module", false);
            return futures::future::ready(Err(e)).boxed_local();
        }
        self.call(&loader, &JsValue::UNDEFINED, &[])
            .map(|loaded| {
                let module = loaded?;
                COMPACTION.with(|m| m.replace(module));
                Ok(JsValue::UNDEFINED)
            })
            .boxed_local()
    }
    fn compaction_plan(
        &self,
        messages: &JsValue,
        options: &JsValue,
        model: &JsValue,
    ) -> Result<Option<JsValue>, JsValue> {
        let planned = compaction_call("plan", &[messages.clone(), options.clone(), model.clone()])?;
        Ok((!planned.is_null() && !planned.is_undefined()).then_some(planned))
    }
    fn compaction_project(&self, messages: &JsValue) -> Result<JsValue, JsValue> {
        compaction_call("project", std::slice::from_ref(messages))
    }
    fn compaction_entry(
        &self,
        messages: &JsValue,
        plan: &JsValue,
        summary: &JsValue,
        usage: &JsValue,
        now: f64,
    ) -> Result<JsValue, JsValue> {
        let args = [messages.clone(), plan.clone(), summary.clone(), usage.clone(), JsValue::from_f64(now)];
        compaction_call("entry", &args)
    }
    #[allow(clippy::too_many_arguments)]
    fn compaction_summarize(
        &self,
        plan: &JsValue,
        options: &JsValue,
        model: &JsValue,
        stream_fn: &JsValue,
        config: &JsValue,
        identity: &JsValue,
        signal: &JsValue,
    ) -> HostFuture<Result<JsValue, JsValue>> {
        match compaction_fn("summarize") {
            Ok((module, summarize)) => {
                let args = [plan, options, model, stream_fn, config, identity, signal].map(Clone::clone);
                self.call(&summarize, &module, &args)
            }
            Err(e) => futures::future::ready(Err(e)).boxed_local(),
        }
    }
    fn pump(
        &self,
        source: &JsValue,
        event: Option<JsValue>,
        messages: &JsValue,
        slot: Option<usize>,
        sink: Option<&JsValue>,
    ) -> Result<Pumped<JsValue>, JsValue> {
        let index = slot.map_or(pump::NO_SLOT, |i| i as f64);
        let undefined = JsValue::UNDEFINED;
        let sink = sink.unwrap_or(&undefined);
        let code = match &event {
            None => pump_queued(source, messages, index, sink),
            Some(event) => pump_event(event, messages, index, sink),
        };
        Ok(match code {
            pump::THREW => return Err(take_pumped()),
            pump::DELIVERED => Pumped::Delivered,
            pump::UPDATE => Pumped::Update(take_pumped()),
            pump::SINK_FAILED => Pumped::SinkFailed(take_pumped()),
            pump::EMPTY => Pumped::Empty,
            pump::START => Pumped::Event(EventCode::Start, take_pumped()),
            pump::BLOCK => Pumped::Event(EventCode::Block, take_pumped()),
            pump::DONE => Pumped::Event(EventCode::Done, take_pumped()),
            pump::ERROR => Pumped::Event(EventCode::Error, take_pumped()),
            _ => Pumped::Event(EventCode::Other, take_pumped()), // pump::OTHER
        })
    }
    fn tool_changes(&self, messages: &JsValue, extra: &[(JsValue, JsValue)], tools: &JsValue) -> ToolChanges<JsValue> {
        let flat = extra.iter().flat_map(|(removed, added)| [removed.clone(), added.clone()]).collect();
        let changes = tool_changes(messages, flat, tools)?;
        if changes.is_undefined() {
            // A tool's parameters the reference refuses (T-4.7): its error names the tool.
            return crate::core::declare::tools::tool_changes(self, messages, extra, tools);
        }
        if changes.is_null() {
            return Ok((Vec::new(), Vec::new()));
        }
        let changes = Array::from(&changes);
        Ok((Array::from(&changes.get(0)).to_vec(), Array::from(&changes.get(1)).to_vec()))
    }
    fn agent_state_valid(&self, agent: &JsValue, st: &JsValue) -> Result<bool, JsValue> {
        agent_state_valid(agent, st, &key_list(&crate::core::agent::AGENT_HOOKS), &key_list(&args::TIMERS))
    }
    fn init_state(&self, st: &JsValue, i: &Initial<JsValue>) -> Result<(), JsValue> {
        init_state(
            st,
            &i.model,
            &i.thinking_level,
            &i.tools,
            &i.messages,
            &i.steering_mode,
            &i.follow_up_mode,
            &i.on_checkpoint,
            &i.agent,
        )
    }
    fn begin_run_state(&self, st: &JsValue, active: &JsValue) -> Result<(), JsValue> {
        begin_run_state(st, active)
    }
    fn end_run_state(&self, st: &JsValue) -> Result<(), JsValue> {
        end_run_state(st)
    }
    fn reduce_agent_event(&self, st: &JsValue, event: &JsValue) -> Result<bool, JsValue> {
        reduce_agent_event(st, event)
    }
    fn queue_poller(&self, st: &JsValue, queue: Queue, skip: bool) -> JsValue {
        let (list, mode) = queue.keys();
        queue_poller(st, &key(list), &key(mode), &key(queue.transit()), skip)
    }
    fn first_bad_message(&self, list: &JsValue) -> Result<Option<(usize, bool)>, JsValue> {
        // `bad_message::ALL_MESSAGES` (-1), or `index * 2 + why`.
        let code = first_bad_message(list)?;
        if code < 0.0 {
            return Ok(None);
        }
        let code = code as usize;
        Ok(Some((code / 2, code % 2 == bad_message::NOT_OBJECT)))
    }
    fn default_convert_to_llm(&self) -> JsValue {
        default_convert_to_llm()
    }
    fn json_text_kept(&self, v: &JsValue) -> Result<(Option<String>, JsValue), JsValue> {
        let text = json_text_kept(v)?;
        Ok((text, take_kept()))
    }
    fn json_parse_kept(&self, text: &str, table: &JsValue) -> Result<JsValue, JsValue> {
        if table.is_undefined() {
            return self.json_parse(text);
        }
        parse_kept(text, table)
    }
    fn call_listeners(
        &self,
        listeners: &JsValue,
        cursor: &mut Option<JsValue>,
        a: &JsValue,
        b: &JsValue,
    ) -> Result<Option<JsValue>, JsValue> {
        let from = cursor.take().unwrap_or(JsValue::UNDEFINED);
        match checked(|| call_listeners(listeners, &from, a, b)) {
            Ok(false) => Ok(None),
            Ok(true) => {
                *cursor = take_cursor();
                Ok(Some(take_listened()))
            }
            Err(e) => {
                // A listener threw: the helper left the iterator to go on with after it.
                *cursor = take_cursor();
                Err(e)
            }
        }
    }
    fn check_tool_call(&self, tool: &JsValue, call: &JsValue, args: &JsValue) -> Result<Checked<JsValue>, JsValue> {
        match check_tool_call(tool, call, args)? {
            checked::STANDARD => Ok(Checked::Standard(take_checked())),
            checked::UNREADABLE => {
                // The reasons are `tool_schema`'s, so the schema is classified again for its words.
                let parameters = self.get(tool, "parameters")?;
                let reason = match tool_schema::classify(self, &parameters)? {
                    ToolSchema::Unreadable(reason) => reason,
                    // A getter that answered otherwise the second time.
                    _ => tool_schema::NOT_A_SCHEMA.to_string(),
                };
                Err(tool_schema::unreadable_error(self, tool, &reason)?)
            }
            _ => Ok(Checked::Args(take_checked())), // checked::ARGS
        }
    }
}

/// The validator's view (the fast paths the reference of `check_tool_call` runs on): only the parity test's reference
/// reaches them in the wasm build, whose own validation is `checkToolCall`.
impl ViewPaths for JsHost {
    fn json_copy(&self, v: &JsValue) -> Result<(Option<String>, JsValue), JsValue> {
        let text = json_copy(v)?;
        Ok((text, take_copy()))
    }
    fn view_string(&self, index: usize) -> Option<String> {
        view_string(u32::try_from(index).ok()?)
    }
    fn patch_copy(&self, copy: &JsValue, patches: &str) -> Result<JsValue, JsValue> {
        patch_copy(copy, patches)
    }
}
