//! A scripted, deterministic, single-threaded `Host` for native tests (compiled only for tests).
//!
//! - [`TV`] models JS values with identity (objects, arrays and functions are `Rc`s).
//! - [`TestHost`] implements [`Host`] with JS semantics (Reflect-style property access, `Object.is`,
//!   `JSON.stringify` formatting, promises that run eagerly like JS) and drives futures on a
//!   `LocalPool` with a VIRTUAL clock: when everything is stalled, time jumps to the next timer.
//! - [`FauxProvider`] mirrors pi-ai's faux provider; [`Recorder`] records loop events.
//!
//! Panics are allowed here: this file is test support only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing, dead_code)]

use super::host::{Host, HostFuture, Kind};
use futures::FutureExt;
use futures::executor::{LocalPool, LocalSpawner};
use futures::future::LocalBoxFuture;
use futures::task::{ArcWake, LocalSpawnExt};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

/// `Date.now()` at virtual time 0.
pub const EPOCH_MS: f64 = 1_700_000_000_000.0;

// =====================================================================================
// Values
// =====================================================================================

/// A synchronous function body: `(host, this, args) -> Ok(return value) | Err(thrown value)`.
pub type SyncBody = Rc<dyn Fn(&TestHost, &TV, &[TV]) -> Result<TV, TV>>;
/// An async function body: its future is created (and polled once) at call time, like a JS async
/// function, and keeps running even if the caller stops awaiting it.
pub type AsyncBody = Rc<dyn Fn(&TestHost, &TV, &[TV]) -> LocalBoxFuture<'static, Result<TV, TV>>>;
/// A function made by `Host::function`.
pub type NativeBody = Rc<dyn Fn(&[TV]) -> TV>;
/// A property getter: `(this) -> value | thrown`.
pub type Getter = Rc<dyn Fn(&TV) -> Result<TV, TV>>;
/// A property setter: `(this, value) -> () | thrown`.
pub type Setter = Rc<dyn Fn(&TV, &TV) -> Result<(), TV>>;

/// A JS value. Cloning a reference value clones the handle, never the value (identity is kept).
#[derive(Clone)]
pub enum TV {
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// A symbol (`Kind::Other`); compared by identity.
    Sym(Rc<str>),
    Arr(Rc<RefCell<Vec<TV>>>),
    /// Any non-callable object (plain, Error, AbortController, AbortSignal, Promise).
    Obj(Rc<Object>),
    /// A callable object; `class` is `Class::Function`.
    Func(Rc<Object>),
}

/// The storage of an object or function.
pub struct Object {
    props: RefCell<Vec<Prop>>,
    pub class: Class,
    frozen: Cell<bool>,
    /// `obj[Symbol.asyncIterator]`.
    async_iter: RefCell<Option<TV>>,
}

struct Prop {
    key: String,
    slot: Slot,
    enumerable: bool,
}

#[derive(Clone)]
enum Slot {
    Data(TV),
    Accessor(Option<Getter>, Option<Setter>),
}

/// What kind of object a `TV::Obj` / `TV::Func` is.
pub enum Class {
    Plain,
    /// `instanceof Error` (message and name are own non-enumerable properties).
    Error,
    Function(Body),
    AbortController {
        state: Rc<AbortState>,
        signal: TV,
    },
    AbortSignal(Rc<AbortState>),
    Promise(Rc<PromiseState>),
    /// A `Set` (items in insertion order, SameValueZero-unique).
    Set(RefCell<Vec<TV>>),
}

pub enum Body {
    Sync(SyncBody),
    Async(AsyncBody),
    Native(NativeBody),
}

impl Object {
    fn new(class: Class, props: Vec<Prop>) -> Rc<Object> {
        Rc::new(Object { props: RefCell::new(props), class, frozen: Cell::new(false), async_iter: RefCell::new(None) })
    }
    fn find(&self, key: &str) -> Option<Slot> {
        self.props.borrow().iter().find(|p| p.key == key).map(|p| p.slot.clone())
    }
    /// Own enumerable keys in JS order: integer keys ascending, then the rest in insertion order.
    fn own_keys(&self) -> Vec<String> {
        let props = self.props.borrow();
        let mut ints: Vec<(u32, String)> = props
            .iter()
            .filter(|p| p.enumerable)
            .filter_map(|p| array_index(&p.key).map(|i| (i, p.key.clone())))
            .collect();
        ints.sort_by_key(|(i, _)| *i);
        let mut keys: Vec<String> = ints.into_iter().map(|(_, k)| k).collect();
        keys.extend(props.iter().filter(|p| p.enumerable && array_index(&p.key).is_none()).map(|p| p.key.clone()));
        keys
    }
}

fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|i| *i != u32::MAX)
}

fn data(key: &str, v: TV, enumerable: bool) -> Prop {
    Prop { key: key.to_string(), slot: Slot::Data(v), enumerable }
}

impl From<&str> for TV {
    fn from(s: &str) -> TV {
        TV::Str(s.to_string())
    }
}
impl From<String> for TV {
    fn from(s: String) -> TV {
        TV::Str(s)
    }
}
impl From<f64> for TV {
    fn from(n: f64) -> TV {
        TV::Num(n)
    }
}
impl From<bool> for TV {
    fn from(b: bool) -> TV {
        TV::Bool(b)
    }
}
impl From<serde_json::Value> for TV {
    fn from(v: serde_json::Value) -> TV {
        TV::from_json(&v)
    }
}

impl TV {
    // ---- constructors
    pub fn str(s: &str) -> TV {
        TV::Str(s.to_string())
    }
    pub fn num(n: f64) -> TV {
        TV::Num(n)
    }
    pub fn bool(b: bool) -> TV {
        TV::Bool(b)
    }
    pub fn symbol(description: &str) -> TV {
        TV::Sym(Rc::from(description))
    }
    pub fn arr(items: Vec<TV>) -> TV {
        TV::Arr(Rc::new(RefCell::new(items)))
    }
    /// A plain object with these own enumerable keys in this order (a later duplicate replaces).
    pub fn obj(entries: &[(&str, TV)]) -> TV {
        let o = TV::Obj(Object::new(Class::Plain, Vec::new()));
        for (k, v) in entries {
            o.set(k, v.clone());
        }
        o
    }
    /// `new Error(message)`.
    pub fn error(message: &str) -> TV {
        TV::error_named("Error", message)
    }
    /// `new TypeError(message)`.
    pub fn type_error(message: &str) -> TV {
        TV::error_named("TypeError", message)
    }
    /// An `Error` instance whose `name` is `name`.
    pub fn error_named(name: &str, message: &str) -> TV {
        TV::Obj(Object::new(
            Class::Error,
            vec![data("message", TV::str(message), false), data("name", TV::str(name), false)],
        ))
    }
    /// A synchronous function.
    pub fn func(f: impl Fn(&TestHost, &TV, &[TV]) -> Result<TV, TV> + 'static) -> TV {
        TV::Func(Object::new(Class::Function(Body::Sync(Rc::new(f))), Vec::new()))
    }
    /// An async function (returns a promise when called).
    pub fn async_func(f: impl Fn(&TestHost, &TV, &[TV]) -> LocalBoxFuture<'static, Result<TV, TV>> + 'static) -> TV {
        TV::Func(Object::new(Class::Function(Body::Async(Rc::new(f))), Vec::new()))
    }
    pub fn from_json(v: &serde_json::Value) -> TV {
        use serde_json::Value;
        match v {
            Value::Null => TV::Null,
            Value::Bool(b) => TV::Bool(*b),
            Value::Number(n) => TV::Num(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => TV::Str(s.clone()),
            Value::Array(a) => TV::arr(a.iter().map(TV::from_json).collect()),
            Value::Object(m) => {
                let o = TV::obj(&[]);
                for (k, v) in m {
                    o.set(k, TV::from_json(v));
                }
                o
            }
        }
    }
    /// What `JSON.parse(JSON.stringify(v))` gives, as serde JSON (undefined/functions dropped in
    /// objects, `null` in arrays; integral numbers become JSON integers). Getters run (a throwing
    /// one panics); `toJSON` is not called. Top-level undefined becomes `null`.
    pub fn to_json(&self) -> serde_json::Value {
        let text = Stringifier::new(None, false).top(self).unwrap_or_else(|e| panic!("to_json: {e:?}"));
        match text {
            Some(text) => serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
            None => serde_json::Value::Null,
        }
    }

    // ---- inspection
    pub fn kind(&self) -> Kind {
        match self {
            TV::Undefined => Kind::Undefined,
            TV::Null => Kind::Null,
            TV::Bool(_) => Kind::Bool,
            TV::Num(_) => Kind::Number,
            TV::Str(_) => Kind::String,
            TV::Sym(_) => Kind::Other,
            TV::Arr(_) => Kind::Array,
            TV::Func(_) => Kind::Function,
            TV::Obj(_) => Kind::Object,
        }
    }
    pub fn is_undefined(&self) -> bool {
        matches!(self, TV::Undefined)
    }
    pub fn is_null(&self) -> bool {
        matches!(self, TV::Null)
    }
    pub fn is_func(&self) -> bool {
        matches!(self, TV::Func(_))
    }
    /// `instanceof Error`.
    pub fn is_error(&self) -> bool {
        matches!(self, TV::Obj(o) if matches!(o.class, Class::Error))
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            TV::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_num(&self) -> Option<f64> {
        match self {
            TV::Num(n) => Some(*n),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            TV::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// `Object.is(self, other)`.
    pub fn same(&self, other: &TV) -> bool {
        match (self, other) {
            (TV::Undefined, TV::Undefined) | (TV::Null, TV::Null) => true,
            (TV::Bool(a), TV::Bool(b)) => a == b,
            (TV::Num(a), TV::Num(b)) => {
                (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
            }
            (TV::Str(a), TV::Str(b)) => a == b,
            (TV::Sym(a), TV::Sym(b)) => Rc::ptr_eq(a, b),
            (TV::Arr(a), TV::Arr(b)) => Rc::ptr_eq(a, b),
            (TV::Obj(a), TV::Obj(b)) | (TV::Func(a), TV::Func(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
    /// JS truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            TV::Undefined | TV::Null => false,
            TV::Bool(b) => *b,
            TV::Num(n) => !(n.is_nan() || *n == 0.0),
            TV::Str(s) => !s.is_empty(),
            _ => true,
        }
    }

    // ---- property access (getters run; no `Reflect` TypeError for primitives here)
    /// `self[key]`; panics when a getter throws. Primitives give undefined.
    pub fn get(&self, key: &str) -> TV {
        self.try_get(key).unwrap_or_else(|e| panic!("getter {key:?} threw {e:?}"))
    }
    /// `self[key]`, with a throwing getter as `Err`.
    pub fn try_get(&self, key: &str) -> Result<TV, TV> {
        match self {
            TV::Arr(a) => {
                let a = a.borrow();
                if key == "length" {
                    return Ok(TV::Num(a.len() as f64));
                }
                Ok(array_index(key).and_then(|i| a.get(i as usize).cloned()).unwrap_or(TV::Undefined))
            }
            TV::Str(s) if key == "length" => Ok(TV::Num(s.encode_utf16().count() as f64)),
            TV::Obj(o) | TV::Func(o) => match o.find(key) {
                Some(Slot::Data(v)) => Ok(v),
                Some(Slot::Accessor(Some(g), _)) => g(self),
                Some(Slot::Accessor(None, _)) => Ok(TV::Undefined),
                None => Ok(match (&o.class, key) {
                    (Class::AbortSignal(s), "aborted") => TV::Bool(s.aborted.get()),
                    (Class::AbortSignal(s), "reason") => s.reason.borrow().clone(),
                    (Class::AbortController { signal, .. }, "signal") => signal.clone(),
                    (Class::AbortController { state, .. }, "abort") => {
                        let state = state.clone();
                        TV::Func(Object::new(
                            Class::Function(Body::Native(Rc::new(move |args: &[TV]| {
                                state.abort(args.first().cloned().unwrap_or(TV::Undefined));
                                TV::Undefined
                            }))),
                            Vec::new(),
                        ))
                    }
                    _ => TV::Undefined,
                }),
            },
            _ => Ok(TV::Undefined),
        }
    }
    /// `self[index]` for arrays.
    pub fn at(&self, index: usize) -> TV {
        self.get(&index.to_string())
    }
    /// Follows a dotted path: `"content.0.text"`.
    pub fn path(&self, path: &str) -> TV {
        path.split('.').fold(self.clone(), |v, k| v.get(k))
    }
    /// `self[key]` as a string; panics when it is not one.
    pub fn str_at(&self, key: &str) -> String {
        match self.get(key) {
            TV::Str(s) => s,
            other => panic!("{key:?} is not a string: {other:?} in {self:?}"),
        }
    }
    /// `self[key]` as a number; panics when it is not one.
    pub fn num_at(&self, key: &str) -> f64 {
        match self.get(key) {
            TV::Num(n) => n,
            other => panic!("{key:?} is not a number: {other:?} in {self:?}"),
        }
    }
    /// A snapshot of an array's items (empty for non-arrays).
    pub fn items(&self) -> Vec<TV> {
        match self {
            TV::Arr(a) => a.borrow().clone(),
            _ => Vec::new(),
        }
    }
    /// Array length (0 for non-arrays).
    pub fn len(&self) -> usize {
        match self {
            TV::Arr(a) => a.borrow().len(),
            _ => 0,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Own enumerable keys in JS order.
    pub fn keys(&self) -> Vec<String> {
        match self {
            TV::Obj(o) | TV::Func(o) => o.own_keys(),
            TV::Arr(a) => (0..a.borrow().len()).map(|i| i.to_string()).collect(),
            _ => Vec::new(),
        }
    }
    /// Whether `key` is an own property (enumerable or not).
    pub fn has_own(&self, key: &str) -> bool {
        match self {
            TV::Obj(o) | TV::Func(o) => o.props.borrow().iter().any(|p| p.key == key),
            TV::Arr(a) => array_index(key).is_some_and(|i| (i as usize) < a.borrow().len()),
            _ => false,
        }
    }
    /// `self[key] = v` (ignoring setters' errors is not done: a throwing setter panics).
    pub fn set(&self, key: &str, v: TV) {
        self.try_set(key, v).unwrap_or_else(|e| panic!("setter {key:?} threw {e:?}"))
    }
    fn try_set(&self, key: &str, v: TV) -> Result<(), TV> {
        match self {
            TV::Arr(a) => {
                let mut a = a.borrow_mut();
                if key == "length" {
                    let n = v.as_num().unwrap_or(0.0).max(0.0) as usize;
                    a.resize(n, TV::Undefined);
                } else if let Some(i) = array_index(key) {
                    let i = i as usize;
                    if i >= a.len() {
                        a.resize(i + 1, TV::Undefined);
                    }
                    a[i] = v;
                }
                Ok(())
            }
            TV::Obj(o) | TV::Func(o) => {
                if o.frozen.get() {
                    return Ok(());
                }
                let existing = o.find(key);
                match existing {
                    Some(Slot::Accessor(_, Some(setter))) => setter(self, &v),
                    Some(Slot::Accessor(_, None)) => Ok(()),
                    Some(Slot::Data(_)) => {
                        let mut props = o.props.borrow_mut();
                        if let Some(p) = props.iter_mut().find(|p| p.key == key) {
                            p.slot = Slot::Data(v);
                        }
                        Ok(())
                    }
                    None => {
                        if matches!(o.class, Class::AbortSignal(_)) && matches!(key, "aborted" | "reason") {
                            return Ok(()); // prototype getters without setters
                        }
                        o.props.borrow_mut().push(data(key, v, true));
                        Ok(())
                    }
                }
            }
            _ => Ok(()),
        }
    }
    /// `delete self[key]`.
    pub fn delete(&self, key: &str) {
        match self {
            TV::Obj(o) | TV::Func(o) if !o.frozen.get() => o.props.borrow_mut().retain(|p| p.key != key),
            TV::Arr(a) => {
                if let Some(i) = array_index(key)
                    && let Some(slot) = a.borrow_mut().get_mut(i as usize)
                {
                    *slot = TV::Undefined;
                }
            }
            _ => {}
        }
    }
    /// `arr.push(v)`; panics for non-arrays.
    pub fn push(&self, v: TV) {
        match self {
            TV::Arr(a) => a.borrow_mut().push(v),
            _ => panic!("push on a non-array {self:?}"),
        }
    }
    /// Defines (or replaces) `key` as an enumerable accessor with this getter and no setter.
    pub fn define_getter(&self, key: &str, getter: impl Fn(&TV) -> Result<TV, TV> + 'static) {
        self.define_accessor(key, Some(Rc::new(getter)), None);
    }
    /// Defines `key` as a getter that always throws `thrown` (hostile input).
    pub fn throwing_getter(&self, key: &str, thrown: TV) {
        self.define_getter(key, move |_| Err(thrown.clone()));
    }
    /// Defines `key` as an enumerable accessor.
    pub fn define_accessor(&self, key: &str, getter: Option<Getter>, setter: Option<Setter>) {
        if let TV::Obj(o) | TV::Func(o) = self {
            let mut props = o.props.borrow_mut();
            let slot = Slot::Accessor(getter, setter);
            match props.iter_mut().find(|p| p.key == key) {
                Some(p) => p.slot = slot,
                None => props.push(Prop { key: key.to_string(), slot, enumerable: true }),
            }
        }
    }
    /// Defines a non-enumerable data property (hidden from spread and JSON).
    pub fn define_hidden(&self, key: &str, v: TV) {
        if let TV::Obj(o) | TV::Func(o) = self {
            let mut props = o.props.borrow_mut();
            props.retain(|p| p.key != key);
            props.push(data(key, v, false));
        }
    }
    /// `Object.freeze(self)` (shallow): later sets and deletes are silently ignored.
    pub fn freeze(&self) {
        if let TV::Obj(o) | TV::Func(o) = self {
            o.frozen.set(true);
        }
    }
    /// Sets `self[Symbol.asyncIterator] = f`.
    pub fn set_async_iterator(&self, f: TV) {
        if let TV::Obj(o) | TV::Func(o) = self {
            o.async_iter.replace(Some(f));
        }
    }
    /// A deep copy of plain data (like `structuredClone`); functions and special objects are kept
    /// by reference, getters are read.
    pub fn deep_clone(&self) -> TV {
        match self {
            TV::Arr(a) => TV::arr(a.borrow().iter().map(TV::deep_clone).collect()),
            TV::Obj(o) if matches!(o.class, Class::Plain | Class::Error) => {
                let copy = if matches!(o.class, Class::Error) {
                    TV::error_named(&self.get("name").js_string(), &self.get("message").js_string())
                } else {
                    TV::obj(&[])
                };
                for k in o.own_keys() {
                    copy.set(&k, self.get(&k).deep_clone());
                }
                copy
            }
            other => other.clone(),
        }
    }
    /// `String(self)` (no `toString` overrides).
    pub fn js_string(&self) -> String {
        js_string(self, 0)
    }
}

fn js_string(v: &TV, depth: usize) -> String {
    match v {
        TV::Undefined => "undefined".into(),
        TV::Null => "null".into(),
        TV::Bool(b) => b.to_string(),
        TV::Num(n) => js_number(*n),
        TV::Str(s) => s.clone(),
        TV::Sym(d) => format!("Symbol({d})"),
        TV::Arr(a) => {
            if depth > 32 {
                return String::new();
            }
            a.borrow()
                .iter()
                .map(|x| if matches!(x, TV::Undefined | TV::Null) { String::new() } else { js_string(x, depth + 1) })
                .collect::<Vec<_>>()
                .join(",")
        }
        TV::Func(_) => "function () { [native code] }".into(),
        TV::Obj(o) => match &o.class {
            Class::Error => {
                let name = v.try_get("name").map(|n| n.js_string()).unwrap_or_default();
                let message = v.try_get("message").map(|m| m.js_string()).unwrap_or_default();
                if message.is_empty() { name } else { format!("{name}: {message}") }
            }
            Class::AbortSignal(_) => "[object AbortSignal]".into(),
            Class::AbortController { .. } => "[object AbortController]".into(),
            Class::Promise(_) => "[object Promise]".into(),
            Class::Set(_) => "[object Set]".into(),
            _ => "[object Object]".into(),
        },
    }
}

/// `Number.prototype.toString()` for a double.
pub fn js_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let sign = if e >= 0 { "+" } else { "-" };
        if k == 1 {
            format!("{digits}e{sign}{}", e.abs())
        } else {
            format!("{}.{}e{sign}{}", &digits[..1], &digits[1..], e.abs())
        }
    };
    if x < 0.0 { format!("-{body}") } else { body }
}

impl fmt::Debug for TV {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        debug_render(self, &mut out, 0);
        f.write_str(&out)
    }
}

fn debug_render(v: &TV, out: &mut String, depth: usize) {
    if depth > 8 {
        out.push('…');
        return;
    }
    match v {
        TV::Str(s) => out.push_str(&format!("{s:?}")),
        TV::Arr(a) => {
            out.push('[');
            for (i, x) in a.borrow().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                debug_render(x, out, depth + 1);
            }
            out.push(']');
        }
        TV::Obj(o) | TV::Func(o) => {
            match &o.class {
                Class::Plain => {}
                Class::Error => out.push_str(&js_string(v, 0)),
                Class::Function(_) => out.push_str("[Function]"),
                Class::AbortController { state, .. } => {
                    out.push_str(&format!("AbortController(aborted={})", state.aborted.get()))
                }
                Class::AbortSignal(state) => out.push_str(&format!("AbortSignal(aborted={})", state.aborted.get())),
                Class::Promise(_) => out.push_str("Promise"),
                Class::Set(items) => {
                    out.push_str("Set");
                    debug_render(&TV::arr(items.borrow().clone()), out, depth + 1);
                }
            }
            let props = o.props.borrow();
            let visible: Vec<&Prop> = props.iter().filter(|p| p.enumerable).collect();
            if visible.is_empty() && !matches!(o.class, Class::Plain) {
                return;
            }
            out.push('{');
            for (i, p) in visible.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&p.key);
                out.push_str(": ");
                match &p.slot {
                    Slot::Data(x) => debug_render(x, out, depth + 1),
                    Slot::Accessor(..) => out.push_str("<accessor>"),
                }
            }
            out.push('}');
        }
        other => out.push_str(&js_string(other, 0)),
    }
}

// =====================================================================================
// JSON.stringify
// =====================================================================================

struct Stringifier<'a> {
    host: Option<&'a TestHost>,
    pretty: bool,
    stack: Vec<*const ()>,
}

fn ptr_of(v: &TV) -> Option<*const ()> {
    match v {
        TV::Arr(a) => Some(Rc::as_ptr(a) as *const ()),
        TV::Obj(o) | TV::Func(o) => Some(Rc::as_ptr(o) as *const ()),
        _ => None,
    }
}

/// `JSON.stringify`'s `QuoteJSONString`.
pub fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl<'a> Stringifier<'a> {
    fn new(host: Option<&'a TestHost>, pretty: bool) -> Self {
        Stringifier { host, pretty, stack: Vec::new() }
    }
    fn top(&mut self, v: &TV) -> Result<Option<String>, TV> {
        self.value("", v.clone(), 0)
    }
    fn value(&mut self, key: &str, mut v: TV, depth: usize) -> Result<Option<String>, TV> {
        if let (Some(h), TV::Obj(_) | TV::Func(_)) = (self.host, &v) {
            let to_json = v.try_get("toJSON")?;
            if to_json.is_func() {
                v = h.call_sync(&to_json, &v, &[TV::str(key)])?;
            }
        }
        Ok(match &v {
            TV::Undefined | TV::Func(_) | TV::Sym(_) => None,
            TV::Null => Some("null".into()),
            TV::Bool(b) => Some(b.to_string()),
            TV::Num(n) => Some(if n.is_finite() { js_number(*n) } else { "null".into() }),
            TV::Str(s) => Some(json_quote(s)),
            TV::Arr(_) | TV::Obj(_) => {
                let ptr = ptr_of(&v).unwrap_or(std::ptr::null());
                if self.stack.contains(&ptr) {
                    return Err(TV::type_error("Converting circular structure to JSON"));
                }
                self.stack.push(ptr);
                let out = if let TV::Arr(a) = &v { self.array(a, depth) } else { self.object(&v, depth) };
                self.stack.pop();
                Some(out?)
            }
        })
    }
    fn wrap(&self, open: char, close: char, items: Vec<String>, depth: usize) -> String {
        if items.is_empty() {
            return format!("{open}{close}");
        }
        if !self.pretty {
            return format!("{open}{}{close}", items.join(","));
        }
        let inner = "  ".repeat(depth + 1);
        let outer = "  ".repeat(depth);
        format!("{open}\n{inner}{}\n{outer}{close}", items.join(&format!(",\n{inner}")))
    }
    fn array(&mut self, a: &Rc<RefCell<Vec<TV>>>, depth: usize) -> Result<String, TV> {
        let items = a.borrow().clone();
        let mut parts = Vec::new();
        for (i, x) in items.into_iter().enumerate() {
            parts.push(self.value(&i.to_string(), x, depth + 1)?.unwrap_or_else(|| "null".into()));
        }
        Ok(self.wrap('[', ']', parts, depth))
    }
    fn object(&mut self, v: &TV, depth: usize) -> Result<String, TV> {
        let mut parts = Vec::new();
        for k in v.keys() {
            let x = v.try_get(&k)?;
            if let Some(s) = self.value(&k, x, depth + 1)? {
                let sep = if self.pretty { ": " } else { ":" };
                parts.push(format!("{}{sep}{s}", json_quote(&k)));
            }
        }
        Ok(self.wrap('{', '}', parts, depth))
    }
}

// =====================================================================================
// Promises
// =====================================================================================

/// The state of a promise object.
pub struct PromiseState {
    state: RefCell<PState>,
    next_id: Cell<u64>,
}

enum PState {
    Pending(Vec<(u64, Waker)>),
    Settled(Result<TV, TV>),
}

impl PromiseState {
    fn new() -> Rc<PromiseState> {
        Rc::new(PromiseState { state: RefCell::new(PState::Pending(Vec::new())), next_id: Cell::new(0) })
    }
    /// Settles once; later calls are ignored.
    fn settle(&self, r: Result<TV, TV>) {
        let wakers = {
            let mut st = self.state.borrow_mut();
            match &mut *st {
                PState::Settled(_) => return,
                PState::Pending(w) => {
                    let w = std::mem::take(w);
                    *st = PState::Settled(r);
                    w
                }
            }
        };
        for (_, w) in wakers {
            w.wake();
        }
    }
    pub fn is_settled(&self) -> bool {
        matches!(*self.state.borrow(), PState::Settled(_))
    }
}

struct PromiseWait {
    p: Rc<PromiseState>,
    id: u64,
}

impl PromiseWait {
    fn new(p: Rc<PromiseState>) -> Self {
        let id = p.next_id.get();
        p.next_id.set(id + 1);
        PromiseWait { p, id }
    }
}

impl Future for PromiseWait {
    type Output = Result<TV, TV>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut st = self.p.state.borrow_mut();
        match &mut *st {
            PState::Settled(r) => Poll::Ready(r.clone()),
            PState::Pending(w) => {
                match w.iter_mut().find(|(id, _)| *id == self.id) {
                    Some(entry) => entry.1 = cx.waker().clone(),
                    None => w.push((self.id, cx.waker().clone())),
                }
                Poll::Pending
            }
        }
    }
}

impl Drop for PromiseWait {
    fn drop(&mut self) {
        if let Ok(mut st) = self.p.state.try_borrow_mut()
            && let PState::Pending(w) = &mut *st
        {
            w.retain(|(id, _)| *id != self.id);
        }
    }
}

/// Settles a promise made by [`TestHost::deferred`].
#[derive(Clone)]
pub struct Resolver {
    host: TestHost,
    p: Rc<PromiseState>,
}

impl Resolver {
    /// Resolves (adopting a thenable, like JS).
    pub fn resolve(&self, v: TV) {
        self.host.settle_promise(self.p.clone(), Ok(v));
    }
    pub fn reject(&self, e: TV) {
        self.p.settle(Err(e));
    }
}

// =====================================================================================
// Abort
// =====================================================================================

/// The shared state of an AbortController and its signal.
pub struct AbortState {
    aborted: Cell<bool>,
    reason: RefCell<TV>,
    listeners: RefCell<Vec<(u64, Option<Waker>)>>,
    next_id: Cell<u64>,
}

impl AbortState {
    fn abort(&self, reason: TV) {
        if self.aborted.get() {
            return;
        }
        let reason =
            if reason.is_undefined() { TV::error_named("AbortError", "This operation was aborted") } else { reason };
        self.aborted.set(true);
        self.reason.replace(reason);
        let listeners = std::mem::take(&mut *self.listeners.borrow_mut());
        for (_, w) in listeners {
            if let Some(w) = w {
                w.wake();
            }
        }
    }
    pub fn listener_count(&self) -> usize {
        self.listeners.borrow().len()
    }
}

struct AbortWait {
    state: Rc<AbortState>,
    id: u64,
}

impl Future for AbortWait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.state.aborted.get() {
            return Poll::Ready(());
        }
        let mut listeners = self.state.listeners.borrow_mut();
        match listeners.iter_mut().find(|(id, _)| *id == self.id) {
            Some(entry) => entry.1 = Some(cx.waker().clone()),
            None => listeners.push((self.id, Some(cx.waker().clone()))),
        }
        Poll::Pending
    }
}

impl Drop for AbortWait {
    fn drop(&mut self) {
        if let Ok(mut l) = self.state.listeners.try_borrow_mut() {
            l.retain(|(id, _)| *id != self.id);
        }
    }
}

// =====================================================================================
// Timers and the executor
// =====================================================================================

struct TimerShared {
    fired: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

struct TimerEntry {
    id: u64,
    deadline: f64,
    shared: Rc<TimerShared>,
}

struct Sleep {
    inner: Rc<Inner>,
    id: u64,
    shared: Rc<TimerShared>,
}

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.shared.fired.get() {
            return Poll::Ready(());
        }
        self.shared.waker.replace(Some(cx.waker().clone()));
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if !self.shared.fired.get()
            && let Ok(mut timers) = self.inner.timers.try_borrow_mut()
        {
            timers.retain(|t| t.id != self.id);
        }
    }
}

struct MainWake(AtomicBool);

impl ArcWake for MainWake {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        arc_self.0.store(true, Ordering::SeqCst);
    }
}

struct Inner {
    pool: RefCell<LocalPool>,
    spawner: LocalSpawner,
    now: Cell<f64>,
    next_timer_id: Cell<u64>,
    timers: RefCell<Vec<TimerEntry>>,
    abort_states: RefCell<Vec<Weak<AbortState>>>,
}

/// The scripted host. Cheap to clone (an `Rc`).
#[derive(Clone)]
pub struct TestHost(Rc<Inner>);

impl Default for TestHost {
    fn default() -> Self {
        TestHost::new()
    }
}

impl TestHost {
    pub fn new() -> Self {
        let pool = LocalPool::new();
        let spawner = pool.spawner();
        TestHost(Rc::new(Inner {
            pool: RefCell::new(pool),
            spawner,
            now: Cell::new(0.0),
            next_timer_id: Cell::new(0),
            timers: RefCell::new(Vec::new()),
            abort_states: RefCell::new(Vec::new()),
        }))
    }

    /// Drives `fut` to completion with spawned tasks; when everything is stalled, advances virtual
    /// time to the earliest timer and fires it (one timer at a time, like JS macrotasks). Panics
    /// when stalled with no timer left. Tasks still pending when `fut` completes stay in the pool.
    /// Must not be called from inside a future it drives.
    pub fn run<F: Future>(&self, fut: F) -> F::Output {
        let flag = Arc::new(MainWake(AtomicBool::new(true)));
        let waker = futures::task::waker(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut fut = std::pin::pin!(fut);
        loop {
            if flag.0.swap(false, Ordering::SeqCst)
                && let Poll::Ready(v) = fut.as_mut().poll(&mut cx)
            {
                return v;
            }
            self.0.pool.borrow_mut().run_until_stalled();
            if flag.0.load(Ordering::SeqCst) {
                continue;
            }
            if !self.fire_next_timer() {
                panic!("deadlock: run stalled with no pending timer");
            }
        }
    }

    /// Runs spawned tasks and fires timers until nothing is left to do (lets abandoned work finish).
    pub fn settle(&self) {
        loop {
            self.0.pool.borrow_mut().run_until_stalled();
            if !self.fire_next_timer() {
                break;
            }
        }
    }

    /// Runs spawned tasks, firing timers due up to `now() + ms`, then sets the clock there.
    pub fn advance(&self, ms: f64) {
        let target = self.now() + ms;
        loop {
            self.0.pool.borrow_mut().run_until_stalled();
            let due = self.next_deadline().is_some_and(|d| d <= target);
            if !due || !self.fire_next_timer() {
                break;
            }
        }
        if self.0.now.get() < target {
            self.0.now.set(target);
        }
    }

    fn next_deadline(&self) -> Option<f64> {
        self.0.timers.borrow().iter().map(|t| t.deadline).reduce(f64::min)
    }

    fn fire_next_timer(&self) -> bool {
        let entry = {
            let mut timers = self.0.timers.borrow_mut();
            let best = timers
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| a.deadline.total_cmp(&b.deadline).then(a.id.cmp(&b.id)))
                .map(|(i, _)| i);
            match best {
                Some(i) => timers.remove(i),
                None => return false,
            }
        };
        if entry.deadline > self.0.now.get() {
            self.0.now.set(entry.deadline);
        }
        entry.shared.fired.set(true);
        if let Some(w) = entry.shared.waker.take() {
            w.wake();
        }
        true
    }

    /// Timers created by `sleep` that have neither fired nor been dropped.
    pub fn pending_timers(&self) -> usize {
        self.0.timers.borrow().len()
    }

    /// Abort listeners (`wait_abort` futures) still registered on any signal of this host.
    pub fn abort_listener_count(&self) -> usize {
        let mut states = self.0.abort_states.borrow_mut();
        states.retain(|w| w.strong_count() > 0);
        states.iter().filter_map(Weak::upgrade).map(|s| s.listener_count()).sum()
    }

    /// Spawns a background task on the pool.
    pub fn spawn_local(&self, fut: impl Future<Output = ()> + 'static) {
        self.0.spawner.spawn_local(fut).expect("spawn on a live pool");
    }

    /// The pool's spawner.
    pub fn spawner(&self) -> LocalSpawner {
        self.0.spawner.clone()
    }

    /// Runs `f` at virtual time `ms` (or as soon as possible if that is in the past).
    pub fn at(&self, ms: f64, f: impl FnOnce(&TestHost) + 'static) {
        let sleep = Host::sleep(self, (ms - self.now()).max(0.0));
        let h = self.clone();
        self.spawn_local(async move {
            sleep.await;
            f(&h);
        });
    }

    /// Aborts `controller` (with the default AbortError reason) at virtual time `ms`.
    pub fn abort_at(&self, controller: &TV, ms: f64) {
        let controller = controller.clone();
        self.at(ms, move |h| h.abort(&controller, &TV::Undefined));
    }

    /// A synchronous scripted function (see [`SyncBody`]).
    pub fn func(&self, f: impl Fn(&TestHost, &TV, &[TV]) -> Result<TV, TV> + 'static) -> TV {
        TV::func(f)
    }

    /// An async scripted function (see [`AsyncBody`]).
    pub fn async_func(
        &self,
        f: impl Fn(&TestHost, &TV, &[TV]) -> LocalBoxFuture<'static, Result<TV, TV>> + 'static,
    ) -> TV {
        TV::async_func(f)
    }

    /// A pending promise and its resolver.
    pub fn deferred_promise(&self) -> (TV, Resolver) {
        let p = PromiseState::new();
        (promise_value(p.clone()), Resolver { host: self.clone(), p })
    }

    /// `Promise.resolve(v)` for a non-thenable `v`.
    pub fn resolved(&self, v: TV) -> TV {
        let p = PromiseState::new();
        p.settle(Ok(v));
        promise_value(p)
    }

    /// Awaits a promise or thenable (`await v`); plain values resolve at once.
    pub fn await_value(&self, v: &TV) -> HostFuture<Result<TV, TV>> {
        if let TV::Obj(o) = v
            && let Class::Promise(p) = &o.class
        {
            return PromiseWait::new(p.clone()).boxed_local();
        }
        if let TV::Obj(_) | TV::Func(_) = v {
            let then = match v.try_get("then") {
                Ok(t) => t,
                Err(e) => return futures::future::ready(Err(e)).boxed_local(),
            };
            if then.is_func() {
                let p = PromiseState::new();
                let wait = PromiseWait::new(p.clone());
                let (resolve, reject) = self.resolving_functions(&p);
                let h = self.clone();
                let v = v.clone();
                // Like Promise.resolve(thenable): `then` is called in a later job.
                self.spawn_local(async move {
                    if let Err(e) = h.call_sync(&then, &v, &[resolve, reject]) {
                        p.settle(Err(e));
                    }
                });
                return wait.boxed_local();
            }
        }
        futures::future::ready(Ok(v.clone())).boxed_local()
    }

    fn resolving_functions(&self, p: &Rc<PromiseState>) -> (TV, TV) {
        let h = self.clone();
        let pr = p.clone();
        let resolve = TV::Func(Object::new(
            Class::Function(Body::Native(Rc::new(move |args: &[TV]| {
                h.settle_promise(pr.clone(), Ok(args.first().cloned().unwrap_or(TV::Undefined)));
                TV::Undefined
            }))),
            Vec::new(),
        ));
        let pj = p.clone();
        let reject = TV::Func(Object::new(
            Class::Function(Body::Native(Rc::new(move |args: &[TV]| {
                pj.settle(Err(args.first().cloned().unwrap_or(TV::Undefined)));
                TV::Undefined
            }))),
            Vec::new(),
        ));
        (resolve, reject)
    }

    /// Settles `p` with `r`, adopting `r` when it is a thenable.
    fn settle_promise(&self, p: Rc<PromiseState>, r: Result<TV, TV>) {
        match r {
            Ok(v) if is_thenable_candidate(&v) => {
                let wait = self.await_value(&v);
                self.spawn_local(async move {
                    let r = wait.await;
                    p.settle(r);
                });
            }
            r => p.settle(r),
        }
    }

    /// Starts an async body: polls it once now (the synchronous part of a JS async function runs
    /// inside the call), then keeps driving it in a background task; returns its promise.
    fn start_async(&self, mut fut: LocalBoxFuture<'static, Result<TV, TV>>) -> TV {
        let p = PromiseState::new();
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(r) => self.settle_promise(p.clone(), r),
            Poll::Pending => {
                let h = self.clone();
                let pd = p.clone();
                // The driver polls the future again at once, re-registering real wakers.
                self.spawn_local(async move {
                    let r = fut.await;
                    h.settle_promise(pd, r);
                });
            }
        }
        promise_value(p)
    }

    /// An async-iterable stream object scripted by `steps`.
    pub fn stream(&self, steps: Vec<StreamStep>) -> TestStream {
        let state = Rc::new(StreamState {
            steps: RefCell::new(steps.into()),
            returned: Cell::new(false),
            next_calls: Cell::new(0),
        });
        let st = state.clone();
        let next = TV::async_func(move |h, _this, _args| {
            let st = st.clone();
            let h = h.clone();
            async move {
                st.next_calls.set(st.next_calls.get() + 1);
                loop {
                    if st.returned.get() {
                        return Ok(iter_result(TV::Undefined, true));
                    }
                    let step = st.steps.borrow_mut().pop_front();
                    match step {
                        None | Some(StreamStep::End) => {
                            st.steps.borrow_mut().push_front(StreamStep::End);
                            return Ok(iter_result(TV::Undefined, true));
                        }
                        Some(StreamStep::Event(v)) => return Ok(iter_result(v, false)),
                        Some(StreamStep::Throw(e)) => return Err(e),
                        Some(StreamStep::Delay(ms)) => Host::sleep(&h, ms).await,
                    }
                }
            }
            .boxed_local()
        });
        let st = state.clone();
        let ret = TV::func(move |_h, _this, _args| {
            st.returned.set(true);
            Ok(iter_result(TV::Undefined, true))
        });
        let iterator = TV::obj(&[("next", next), ("return", ret)]);
        let source = TV::obj(&[]);
        let it = iterator.clone();
        source.set_async_iterator(TV::func(move |_h, _this, _args| Ok(it.clone())));
        TestStream { source, state }
    }
}

fn is_thenable_candidate(v: &TV) -> bool {
    match v {
        TV::Obj(o) if matches!(o.class, Class::Promise(_)) => true,
        TV::Obj(_) | TV::Func(_) => v.try_get("then").map(|t| t.is_func()).unwrap_or(true),
        _ => false,
    }
}

fn promise_value(p: Rc<PromiseState>) -> TV {
    TV::Obj(Object::new(Class::Promise(p), Vec::new()))
}

fn iter_result(value: TV, done: bool) -> TV {
    TV::obj(&[("value", value), ("done", TV::Bool(done))])
}

/// One step of a scripted stream.
#[derive(Clone, Debug)]
pub enum StreamStep {
    /// `next()` resolves with this value.
    Event(TV),
    /// Waits this many virtual ms, then goes on with the next step (within the same `next()`).
    Delay(f64),
    /// `next()` rejects with this value.
    Throw(TV),
    /// `next()` reports done (now and forever).
    End,
}

struct StreamState {
    steps: RefCell<VecDeque<StreamStep>>,
    returned: Cell<bool>,
    next_calls: Cell<usize>,
}

/// A scripted async-iterable: `source` is the object to hand to the loop.
#[derive(Clone)]
pub struct TestStream {
    pub source: TV,
    state: Rc<StreamState>,
}

impl TestStream {
    /// Whether the iterator's `return()` was called.
    pub fn return_called(&self) -> bool {
        self.state.returned.get()
    }
    /// How many times `next()` was called.
    pub fn next_calls(&self) -> usize {
        self.state.next_calls.get()
    }
}

// =====================================================================================
// Host
// =====================================================================================

fn non_object(op: &str) -> TV {
    TV::type_error(&format!("Reflect.{op} called on non-object"))
}

impl crate::core::fast::ViewPaths for TestHost {}
impl crate::core::fast::FastPaths for TestHost {}

impl Host for TestHost {
    type V = TV;

    fn undefined(&self) -> TV {
        TV::Undefined
    }
    fn null(&self) -> TV {
        TV::Null
    }
    fn boolean(&self, b: bool) -> TV {
        TV::Bool(b)
    }
    fn number(&self, n: f64) -> TV {
        TV::Num(n)
    }
    fn string(&self, s: &str) -> TV {
        TV::str(s)
    }
    fn object(&self, entries: &[(&str, TV)]) -> TV {
        TV::obj(entries)
    }
    fn array(&self, items: &[TV]) -> TV {
        TV::arr(items.to_vec())
    }
    fn function(&self, f: Rc<dyn Fn(&[TV]) -> TV>) -> TV {
        TV::Func(Object::new(Class::Function(Body::Native(f)), Vec::new()))
    }
    fn bind_first(&self, f: &TV, first: &TV) -> TV {
        let (h, f, first) = (self.clone(), f.clone(), first.clone());
        self.function(Rc::new(move |args: &[TV]| {
            let all: Vec<TV> = std::iter::once(first.clone()).chain(args.iter().cloned()).collect();
            h.call_sync(&f, &TV::Undefined, &all).unwrap_or(TV::Undefined)
        }))
    }
    fn error(&self, message: &str, type_error: bool) -> TV {
        if type_error { TV::type_error(message) } else { TV::error(message) }
    }
    fn syntax_error(&self, message: &str) -> TV {
        TV::error_named("SyntaxError", message)
    }

    fn kind(&self, v: &TV) -> Kind {
        v.kind()
    }
    fn as_string(&self, v: &TV) -> Option<String> {
        v.as_str().map(str::to_string)
    }
    fn as_number(&self, v: &TV) -> Option<f64> {
        v.as_num()
    }
    fn truthy(&self, v: &TV) -> bool {
        v.truthy()
    }
    fn same(&self, a: &TV, b: &TV) -> bool {
        a.same(b)
    }

    fn get(&self, obj: &TV, key: &str) -> Result<TV, TV> {
        match obj {
            TV::Obj(_) | TV::Func(_) | TV::Arr(_) => obj.try_get(key),
            _ => Err(non_object("get")),
        }
    }
    fn set(&self, obj: &TV, key: &str, value: &TV) -> Result<(), TV> {
        match obj {
            TV::Obj(_) | TV::Func(_) | TV::Arr(_) => obj.try_set(key, value.clone()),
            _ => Err(non_object("set")),
        }
    }
    fn delete(&self, obj: &TV, key: &str) -> Result<(), TV> {
        match obj {
            TV::Obj(_) | TV::Func(_) | TV::Arr(_) => {
                obj.delete(key);
                Ok(())
            }
            _ => Err(non_object("deleteProperty")),
        }
    }
    fn shallow_copy(&self, obj: &TV) -> Result<TV, TV> {
        match obj {
            TV::Arr(a) => Ok(TV::arr(a.borrow().clone())),
            TV::Obj(_) | TV::Func(_) => {
                let copy = TV::obj(&[]);
                for k in obj.keys() {
                    copy.try_set(&k, obj.try_get(&k)?)?;
                }
                Ok(copy)
            }
            TV::Str(s) => {
                let copy = TV::obj(&[]);
                for (i, c) in s.chars().enumerate() {
                    copy.set(&i.to_string(), TV::Str(c.to_string()));
                }
                Ok(copy)
            }
            _ => Ok(TV::obj(&[])),
        }
    }
    fn array_items(&self, arr: &TV) -> Result<Vec<TV>, TV> {
        match arr {
            TV::Arr(a) => Ok(a.borrow().clone()),
            TV::Undefined | TV::Null => Err(TV::type_error(&format!("{} is not iterable", arr.js_string()))),
            TV::Str(s) => Ok(s.chars().map(|c| TV::Str(c.to_string())).collect()),
            TV::Obj(_) | TV::Func(_) => {
                // Array-like: `length` and indices.
                let len = arr.try_get("length")?.as_num().filter(|n| n.is_finite() && *n > 0.0).unwrap_or(0.0) as usize;
                (0..len).map(|i| arr.try_get(&i.to_string())).collect()
            }
            _ => Ok(Vec::new()),
        }
    }
    fn array_push(&self, arr: &TV, value: &TV) -> Result<(), TV> {
        match arr {
            TV::Arr(a) => {
                a.borrow_mut().push(value.clone());
                Ok(())
            }
            TV::Undefined | TV::Null => {
                Err(TV::type_error(&format!("Cannot read properties of {} (reading 'push')", arr.js_string())))
            }
            _ => Err(TV::type_error("a.push is not a function")),
        }
    }
    fn array_set(&self, arr: &TV, index: usize, value: &TV) -> Result<(), TV> {
        self.set(arr, &index.to_string(), value)
    }
    fn array_len(&self, arr: &TV) -> Result<usize, TV> {
        let len = self.get(arr, "length")?;
        Ok(len.as_num().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as usize).unwrap_or(0))
    }

    fn entries(&self, obj: &TV) -> Result<Vec<(String, TV)>, TV> {
        match obj {
            TV::Undefined | TV::Null => Err(TV::type_error("Cannot convert undefined or null to object")),
            TV::Obj(_) | TV::Func(_) | TV::Arr(_) => {
                obj.keys().into_iter().map(|k| obj.try_get(&k).map(|v| (k, v))).collect()
            }
            TV::Str(s) => Ok(s.chars().enumerate().map(|(i, c)| (i.to_string(), TV::Str(c.to_string()))).collect()),
            _ => Ok(Vec::new()),
        }
    }
    fn new_set(&self, items: &[TV]) -> TV {
        let mut unique: Vec<TV> = Vec::new();
        for item in items {
            let zero =
                |v: &TV| if let TV::Num(n) = v { if *n == 0.0 { TV::Num(0.0) } else { v.clone() } } else { v.clone() };
            let item = zero(item);
            if !unique.iter().any(|u| u.same(&item)) {
                unique.push(item);
            }
        }
        TV::Obj(Object::new(Class::Set(RefCell::new(unique)), Vec::new()))
    }
    fn set_add(&self, set: &TV, v: &TV) -> Result<(), TV> {
        match set {
            TV::Obj(o) => match &o.class {
                Class::Set(items) => {
                    let mut items = items.borrow_mut();
                    if !items.iter().any(|u| u.same(v)) {
                        items.push(v.clone());
                    }
                    Ok(())
                }
                _ => Err(TV::type_error("set.add is not a function")),
            },
            _ => Err(TV::type_error("set.add is not a function")),
        }
    }
    fn set_delete(&self, set: &TV, v: &TV) -> Result<(), TV> {
        match set {
            TV::Obj(o) => match &o.class {
                Class::Set(items) => {
                    items.borrow_mut().retain(|u| !u.same(v));
                    Ok(())
                }
                _ => Err(TV::type_error("set.delete is not a function")),
            },
            _ => Err(TV::type_error("set.delete is not a function")),
        }
    }
    fn set_items(&self, set: &TV) -> Result<Vec<TV>, TV> {
        match set {
            TV::Obj(o) => match &o.class {
                Class::Set(items) => Ok(items.borrow().clone()),
                _ => Err(TV::type_error(&format!("{} is not iterable", set.js_string()))),
            },
            TV::Arr(a) => Ok(a.borrow().clone()),
            TV::Str(s) => Ok(s.chars().map(|c| TV::Str(c.to_string())).collect()),
            _ => Err(TV::type_error(&format!("{} is not iterable", set.js_string()))),
        }
    }
    fn rejected(&self, reason: &TV) -> TV {
        let p = PromiseState::new();
        p.settle(Err(reason.clone()));
        promise_value(p)
    }
    fn deferred(&self) -> (TV, TV) {
        let p = PromiseState::new();
        let (resolve, _reject) = self.resolving_functions(&p);
        (promise_value(p), resolve)
    }

    fn call(&self, f: &TV, this: &TV, args: &[TV]) -> HostFuture<Result<TV, TV>> {
        match self.call_sync(f, this, args) {
            Err(e) => futures::future::ready(Err(e)).boxed_local(),
            Ok(v) => self.await_value(&v),
        }
    }
    fn call_sync(&self, f: &TV, this: &TV, args: &[TV]) -> Result<TV, TV> {
        let TV::Func(o) = f else {
            return Err(TV::type_error(&format!("{} is not a function", f.js_string())));
        };
        match &o.class {
            Class::Function(Body::Sync(body)) => {
                let body = body.clone();
                body(self, this, args)
            }
            Class::Function(Body::Async(body)) => {
                let body = body.clone();
                let fut = body(self, this, args);
                Ok(self.start_async(fut))
            }
            Class::Function(Body::Native(body)) => {
                let body = body.clone();
                Ok(body(args))
            }
            _ => Err(TV::type_error("not a function")),
        }
    }
    fn error_message(&self, err: &TV) -> String {
        let object_tag = |v: &TV| match v {
            TV::Arr(_) => "[object Array]".to_string(),
            TV::Func(_) => "[object Function]".to_string(),
            TV::Obj(o) if matches!(o.class, Class::Error) => "[object Error]".to_string(),
            _ => "[object Object]".to_string(),
        };
        match err {
            TV::Obj(o) if matches!(o.class, Class::Error) => match err.try_get("message") {
                Ok(m) => m.js_string(),
                Err(_) => object_tag(err),
            },
            TV::Obj(_) | TV::Func(_) | TV::Arr(_) => {
                let message = err.try_get("message");
                let name = err.try_get("name");
                match (message, name) {
                    (Ok(TV::Str(m)), Ok(TV::Str(_))) => m,
                    (Err(_), _) | (Ok(TV::Str(_)), Err(_)) => object_tag(err),
                    _ => err.js_string(),
                }
            }
            other => other.js_string(),
        }
    }

    fn json_stringify(&self, v: &TV, pretty: bool) -> Result<Option<String>, TV> {
        Stringifier::new(Some(self), pretty).top(v)
    }
    fn json_parse(&self, text: &str) -> Result<TV, TV> {
        // JS's JSON.parse has no depth limit of serde_json's kind, and keeps lone surrogates (stand-ins here).
        crate::core::text::wtf::parse(text)
            .map(|v| TV::from_json(&v))
            .map_err(|e| TV::error_named("SyntaxError", &format!("{e} in JSON")))
    }
    fn regex_test(&self, pattern: &str, text: &str) -> Option<bool> {
        regex::Regex::new(pattern).ok().map(|re| re.is_match(text))
    }

    fn now(&self) -> f64 {
        self.0.now.get()
    }
    fn date_now(&self) -> f64 {
        EPOCH_MS + self.0.now.get()
    }
    fn sleep(&self, ms: f64) -> HostFuture<()> {
        // setTimeout: NaN and negative delays are 0.
        let ms = if ms.is_nan() || ms < 0.0 { 0.0 } else { ms };
        let id = self.0.next_timer_id.get();
        self.0.next_timer_id.set(id + 1);
        let shared = Rc::new(TimerShared { fired: Cell::new(false), waker: RefCell::new(None) });
        self.0.timers.borrow_mut().push(TimerEntry { id, deadline: self.now() + ms, shared: shared.clone() });
        Sleep { inner: self.0.clone(), id, shared }.boxed_local()
    }

    fn signal_aborted(&self, signal: &TV) -> bool {
        if signal.kind().is_nullish() {
            return false;
        }
        self.get(signal, "aborted").map(|v| v.truthy()).unwrap_or(false)
    }
    fn wait_abort(&self, signal: &TV) -> HostFuture<()> {
        let state = match signal {
            TV::Obj(o) => match &o.class {
                Class::AbortSignal(s) => s.clone(),
                _ => return futures::future::pending().boxed_local(),
            },
            _ => return futures::future::pending().boxed_local(),
        };
        if state.aborted.get() {
            return futures::future::ready(()).boxed_local();
        }
        let id = state.next_id.get();
        state.next_id.set(id + 1);
        state.listeners.borrow_mut().push((id, None));
        AbortWait { state, id }.boxed_local()
    }
    fn abort_controller(&self) -> (TV, TV) {
        let state = Rc::new(AbortState {
            aborted: Cell::new(false),
            reason: RefCell::new(TV::Undefined),
            listeners: RefCell::new(Vec::new()),
            next_id: Cell::new(0),
        });
        self.0.abort_states.borrow_mut().push(Rc::downgrade(&state));
        let signal = TV::Obj(Object::new(Class::AbortSignal(state.clone()), Vec::new()));
        let controller = TV::Obj(Object::new(Class::AbortController { state, signal: signal.clone() }, Vec::new()));
        (controller, signal)
    }
    fn abort(&self, controller: &TV, reason: &TV) {
        if let TV::Obj(o) = controller
            && let Class::AbortController { state, .. } = &o.class
        {
            state.abort(reason.clone());
            return;
        }
        // A foreign controller: `controller.abort(reason)`, errors ignored.
        if let Ok(f) = controller.try_get("abort") {
            let _ = self.call_sync(&f, controller, std::slice::from_ref(reason));
        }
    }

    fn async_iterator(&self, source: &TV) -> Result<Option<TV>, TV> {
        let f = match source {
            TV::Obj(o) | TV::Func(o) => o.async_iter.borrow().clone(),
            _ => None,
        };
        let Some(f) = f.filter(TV::is_func) else {
            return Ok(None);
        };
        let it = self.call_sync(&f, source, &[])?;
        Ok(if it.is_undefined() { None } else { Some(it) })
    }
    fn iterator_next(&self, it: &TV) -> HostFuture<Result<Option<TV>, TV>> {
        let started = match it {
            TV::Undefined | TV::Null => {
                Err(TV::type_error(&format!("Cannot read properties of {} (reading 'next')", it.js_string())))
            }
            _ => it.try_get("next").and_then(|next| self.call_sync(&next, it, &[])),
        };
        let result = match started {
            Err(e) => return futures::future::ready(Err(e)).boxed_local(),
            Ok(r) => self.await_value(&r),
        };
        async move {
            let r = result.await?;
            if !r.kind().is_object_like() {
                return Err(TV::type_error(&format!("Iterator result {} is not an object", r.js_string())));
            }
            if r.try_get("done")?.truthy() { Ok(None) } else { Ok(Some(r.try_get("value")?)) }
        }
        .boxed_local()
    }
    fn iterator_return(&self, it: &TV) {
        if it.kind().is_nullish() {
            return;
        }
        if let Ok(f) = it.try_get("return")
            && f.is_func()
        {
            let _ = self.call_sync(&f, it, &[]);
        }
    }
}

// =====================================================================================
// Faux provider
// =====================================================================================

/// `{type: "text", text}`.
pub fn faux_text(text: &str) -> TV {
    TV::obj(&[("type", TV::str("text")), ("text", TV::str(text))])
}

/// `{type: "thinking", thinking}`.
pub fn faux_thinking(thinking: &str) -> TV {
    TV::obj(&[("type", TV::str("thinking")), ("thinking", TV::str(thinking))])
}

/// `{type: "toolCall", id, name, arguments}`.
pub fn faux_tool_call(id: &str, name: &str, args: serde_json::Value) -> TV {
    TV::obj(&[
        ("type", TV::str("toolCall")),
        ("id", TV::str(id)),
        ("name", TV::str(name)),
        ("arguments", TV::from_json(&args)),
    ])
}

/// Zero usage (S-2.1.2).
pub fn faux_usage() -> TV {
    TV::from_json(&serde_json::json!({
        "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    }))
}

/// `fauxAssistantMessage(content, {stopReason})`. `timestamp` is left undefined (keeping its key
/// position) and filled with `Date.now()` when the message is streamed.
pub fn faux_assistant(content: Vec<TV>, stop_reason: &str) -> TV {
    TV::obj(&[
        ("role", TV::str("assistant")),
        ("content", TV::arr(content)),
        ("api", TV::str("faux")),
        ("provider", TV::str("faux")),
        ("model", TV::str("faux-1")),
        ("usage", faux_usage()),
        ("stopReason", TV::str(stop_reason)),
        ("timestamp", TV::Undefined),
    ])
}

/// An assistant message with `stopReason: "error"` and this `errorMessage`.
pub fn faux_assistant_error(content: Vec<TV>, error_message: &str) -> TV {
    let m = faux_assistant(content, "error");
    m.delete("timestamp");
    m.set("errorMessage", TV::str(error_message));
    m.set("timestamp", TV::Undefined);
    m
}

/// The faux provider's default model object.
pub fn faux_model() -> TV {
    TV::from_json(&serde_json::json!({
        "id": "faux-1", "name": "Faux Model", "api": "faux", "provider": "faux",
        "baseUrl": "http://localhost:0", "reasoning": false, "input": ["text", "image"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000, "maxTokens": 16384
    }))
}

/// A user message `{role: "user", content: text, timestamp}`.
pub fn user_message(text: &str) -> TV {
    TV::obj(&[("role", TV::str("user")), ("content", TV::str(text)), ("timestamp", TV::num(EPOCH_MS))])
}

/// `(context, options) -> assistant message` (Err = thrown while resolving: a lone `error` event).
pub type FauxResponder = Rc<dyn Fn(&TV, &TV) -> Result<TV, TV>>;

/// One scripted response.
#[derive(Clone)]
pub enum FauxResponse {
    Message(TV),
    Respond(FauxResponder),
}

/// One request the faux stream function received.
#[derive(Clone)]
pub struct FauxCall {
    pub model: TV,
    /// The context object passed (`{messages}`).
    pub context: TV,
    /// A snapshot of `context.messages` at call time.
    pub messages: Vec<TV>,
    pub options: TV,
    /// The returned event source.
    pub source: TV,
    generator: Rc<FauxGen>,
}

impl FauxCall {
    /// Whether the consumer called the iterator's `return()`.
    pub fn return_called(&self) -> bool {
        self.generator.returned.get()
    }
    /// The final message (the shared partial) once the stream finished.
    pub fn final_message(&self) -> Option<TV> {
        self.generator.final_message.borrow().clone()
    }
}

struct FauxInner {
    host: TestHost,
    queue: RefCell<VecDeque<FauxResponse>>,
    calls: RefCell<Vec<FauxCall>>,
    chunk_delay_ms: Cell<f64>,
}

/// A scripted provider mirroring pi-ai's faux provider, streaming through ONE shared partial
/// message that is mutated as it goes and ends as `done.message` / `error.error`.
#[derive(Clone)]
pub struct FauxProvider(Rc<FauxInner>);

impl FauxProvider {
    pub fn new(host: &TestHost) -> Self {
        FauxProvider(Rc::new(FauxInner {
            host: host.clone(),
            queue: RefCell::new(VecDeque::new()),
            calls: RefCell::new(Vec::new()),
            chunk_delay_ms: Cell::new(0.0),
        }))
    }
    /// Queues an assistant message (deep-cloned per request, like `structuredClone`).
    pub fn push(&self, message: TV) -> &Self {
        self.0.queue.borrow_mut().push_back(FauxResponse::Message(message));
        self
    }
    /// Queues a responder called with `(context, options)` at request time.
    pub fn push_fn(&self, f: impl Fn(&TV, &TV) -> TV + 'static) -> &Self {
        self.0.queue.borrow_mut().push_back(FauxResponse::Respond(Rc::new(move |c, o| Ok(f(c, o)))));
        self
    }
    /// Queues any response.
    pub fn push_response(&self, r: FauxResponse) -> &Self {
        self.0.queue.borrow_mut().push_back(r);
        self
    }
    /// Virtual ms waited before every delta chunk (default 0: no timer at all).
    pub fn set_chunk_delay(&self, ms: f64) -> &Self {
        self.0.chunk_delay_ms.set(ms);
        self
    }
    /// Responses not yet used.
    pub fn pending(&self) -> usize {
        self.0.queue.borrow().len()
    }
    pub fn calls(&self) -> Vec<FauxCall> {
        self.0.calls.borrow().clone()
    }
    pub fn call_count(&self) -> usize {
        self.0.calls.borrow().len()
    }
    /// The stream function `(model, context, options) => source`.
    pub fn stream_fn(&self) -> TV {
        let inner = self.0.clone();
        TV::func(move |h, _this, args| {
            let arg = |i: usize| args.get(i).cloned().unwrap_or(TV::Undefined);
            let (model, context, options) = (arg(0), arg(1), arg(2));
            let messages = context.try_get("messages").unwrap_or(TV::Undefined).items();
            let signal = options.try_get("signal").unwrap_or(TV::Undefined);
            let step = inner.queue.borrow_mut().pop_front();
            let generator =
                Rc::new(FauxGen::new(h, &model, &context, &options, step, signal, inner.chunk_delay_ms.get()));
            let source = generator.source();
            inner.calls.borrow_mut().push(FauxCall {
                model,
                context,
                messages,
                options,
                source: source.clone(),
                generator,
            });
            Ok(source)
        })
    }
}

enum FauxStep {
    Start,
    BlockStart(usize),
    Delta(usize, String),
    BlockEnd(usize),
    Finish,
    /// A lone `error` event with this message (no response, or a responder threw).
    LoneError(TV),
}

struct FauxGen {
    host: TestHost,
    /// The resolved response (clone), when there is one.
    message: TV,
    partial: TV,
    steps: RefCell<VecDeque<FauxStep>>,
    /// Tool-call JSON text received so far, per content index.
    json_text: RefCell<Vec<String>>,
    signal: TV,
    delay_ms: f64,
    finished: Cell<bool>,
    returned: Cell<bool>,
    final_message: RefCell<Option<TV>>,
}

/// Chunks of 3 then 4 characters, alternating; `[""]` for an empty string.
fn faux_chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut chunks = Vec::new();
    let mut i = 0;
    let mut size = 3;
    while i < chars.len() {
        let end = (i + size).min(chars.len());
        chunks.push(chars[i..end].iter().collect());
        i = end;
        size = if size == 3 { 4 } else { 3 };
    }
    if chunks.is_empty() {
        chunks.push(String::new());
    }
    chunks
}

fn model_field(model: &TV, key: &str, fallback: &str) -> TV {
    match model.try_get(key) {
        Ok(TV::Str(s)) => TV::Str(s),
        _ => TV::str(fallback),
    }
}

impl FauxGen {
    fn new(
        h: &TestHost,
        model: &TV,
        context: &TV,
        options: &TV,
        step: Option<FauxResponse>,
        signal: TV,
        delay_ms: f64,
    ) -> Self {
        let api = model_field(model, "api", "faux");
        let provider = model_field(model, "provider", "faux");
        let model_id = model_field(model, "id", "faux-1");
        let error_message = |text: &str| {
            TV::obj(&[
                ("role", TV::str("assistant")),
                ("content", TV::arr(Vec::new())),
                ("api", api.clone()),
                ("provider", provider.clone()),
                ("model", model_id.clone()),
                ("usage", faux_usage()),
                ("stopReason", TV::str("error")),
                ("errorMessage", TV::str(text)),
                ("timestamp", TV::num(h.date_now())),
            ])
        };
        let resolved = match step {
            None => Err(error_message("No more faux responses queued")),
            Some(FauxResponse::Message(m)) => Ok(m),
            Some(FauxResponse::Respond(f)) => f(context, options).map_err(|e| error_message(&h.error_message(&e))),
        };
        let mut steps = VecDeque::new();
        let (message, partial) = match resolved {
            Err(lone) => {
                steps.push_back(FauxStep::LoneError(lone.clone()));
                (lone.clone(), lone)
            }
            Ok(m) => {
                // cloneMessage: structuredClone, then api/provider/model from the request model.
                let m = m.deep_clone();
                m.set("api", api);
                m.set("provider", provider);
                m.set("model", model_id);
                if m.get("timestamp").is_undefined() {
                    m.set("timestamp", TV::num(h.date_now()));
                }
                if m.get("usage").is_undefined() {
                    m.set("usage", faux_usage());
                }
                let partial = Host::shallow_copy(h, &m).expect("plain message");
                partial.set("content", TV::arr(Vec::new()));
                partial.set("stopReason", TV::str("pending"));
                steps.push_back(FauxStep::Start);
                for (i, block) in m.get("content").items().iter().enumerate() {
                    steps.push_back(FauxStep::BlockStart(i));
                    let text = match block.get("type").as_str() {
                        Some("text") => block.get("text").js_string(),
                        Some("thinking") => block.get("thinking").js_string(),
                        _ => h.json_stringify(&block.get("arguments"), false).ok().flatten().unwrap_or_default(),
                    };
                    for chunk in faux_chunks(&text) {
                        steps.push_back(FauxStep::Delta(i, chunk));
                    }
                    steps.push_back(FauxStep::BlockEnd(i));
                }
                steps.push_back(FauxStep::Finish);
                (m, partial)
            }
        };
        FauxGen {
            host: h.clone(),
            message,
            partial,
            steps: RefCell::new(steps),
            json_text: RefCell::new(Vec::new()),
            signal,
            delay_ms,
            finished: Cell::new(false),
            returned: Cell::new(false),
            final_message: RefCell::new(None),
        }
    }

    fn source(self: &Rc<Self>) -> TV {
        let g = self.clone();
        let next = TV::async_func(move |_h, _this, _args| {
            let g = g.clone();
            async move {
                Ok(match g.next_event().await {
                    Some(event) => iter_result(event, false),
                    None => iter_result(TV::Undefined, true),
                })
            }
            .boxed_local()
        });
        let g = self.clone();
        let ret = TV::func(move |_h, _this, _args| {
            g.returned.set(true);
            g.finish(None);
            Ok(iter_result(TV::Undefined, true))
        });
        let iterator = TV::obj(&[("next", next), ("return", ret)]);
        let g = self.clone();
        let result = TV::async_func(move |_h, _this, _args| {
            let g = g.clone();
            async move {
                while g.next_event().await.is_some() {}
                Ok(g.final_message.borrow().clone().unwrap_or_else(|| g.partial.clone()))
            }
            .boxed_local()
        });
        let source = TV::obj(&[("result", result)]);
        let it = iterator.clone();
        source.set_async_iterator(TV::func(move |_h, _this, _args| Ok(it.clone())));
        source
    }

    fn finish(&self, final_message: Option<TV>) {
        self.finished.set(true);
        self.steps.borrow_mut().clear();
        if let Some(m) = final_message {
            self.final_message.replace(Some(m));
        }
    }

    fn aborted(&self) -> bool {
        Host::signal_aborted(&self.host, &self.signal)
    }

    fn abort_event(&self) -> TV {
        let p = &self.partial;
        p.set("stopReason", TV::str("aborted"));
        p.set("errorMessage", TV::str("Request was aborted"));
        p.set("timestamp", TV::num(self.host.date_now()));
        self.finish(Some(p.clone()));
        TV::obj(&[("type", TV::str("error")), ("reason", TV::str("aborted")), ("error", p.clone())])
    }

    async fn next_event(&self) -> Option<TV> {
        if self.finished.get() {
            return None;
        }
        let step = self.steps.borrow_mut().pop_front()?;
        if matches!(step, FauxStep::Delta(..)) && self.delay_ms > 0.0 {
            Host::sleep(&self.host, self.delay_ms).await;
            if self.finished.get() {
                return None;
            }
        }
        if matches!(step, FauxStep::Start | FauxStep::BlockStart(_) | FauxStep::Delta(..)) && self.aborted() {
            return Some(self.abort_event());
        }
        Some(self.apply(step))
    }

    fn apply(&self, step: FauxStep) -> TV {
        let p = &self.partial;
        let event = |kind: &str, i: usize, extra: &[(&str, TV)]| {
            let e = TV::obj(&[("type", TV::str(kind)), ("contentIndex", TV::num(i as f64))]);
            for (k, v) in extra {
                e.set(k, v.clone());
            }
            e.set("partial", p.clone());
            e
        };
        let block_of = |i: usize| self.message.get("content").at(i);
        let kind_of = |i: usize| match block_of(i).get("type").as_str() {
            Some("text") => "text",
            Some("thinking") => "thinking",
            _ => "toolcall",
        };
        match step {
            FauxStep::Start => TV::obj(&[("type", TV::str("start")), ("partial", p.clone())]),
            FauxStep::BlockStart(i) => {
                let b = block_of(i);
                let fresh = match kind_of(i) {
                    "text" => TV::obj(&[("type", TV::str("text")), ("text", TV::str(""))]),
                    "thinking" => TV::obj(&[("type", TV::str("thinking")), ("thinking", TV::str(""))]),
                    _ => TV::obj(&[
                        ("type", TV::str("toolCall")),
                        ("id", b.get("id")),
                        ("name", b.get("name")),
                        ("arguments", TV::obj(&[])),
                    ]),
                };
                p.get("content").push(fresh);
                let kind = kind_of(i);
                event(&format!("{kind}_start"), i, &[])
            }
            FauxStep::Delta(i, chunk) => {
                let target = p.get("content").at(i);
                let kind = kind_of(i);
                match kind {
                    "text" | "thinking" => {
                        let key = if kind == "text" { "text" } else { "thinking" };
                        target.set(key, TV::Str(format!("{}{chunk}", target.get(key).js_string())));
                    }
                    _ => {
                        let mut texts = self.json_text.borrow_mut();
                        if texts.len() <= i {
                            texts.resize(i + 1, String::new());
                        }
                        texts[i].push_str(&chunk);
                        target.set("arguments", TV::from_json(&parse_partial_json(&texts[i])));
                    }
                }
                event(&format!("{kind}_delta"), i, &[("delta", TV::Str(chunk))])
            }
            FauxStep::BlockEnd(i) => {
                let b = block_of(i);
                let target = p.get("content").at(i);
                match kind_of(i) {
                    "text" => event("text_end", i, &[("content", b.get("text"))]),
                    "thinking" => event("thinking_end", i, &[("content", b.get("thinking"))]),
                    _ => {
                        target.set("arguments", b.get("arguments"));
                        event("toolcall_end", i, &[("toolCall", target)])
                    }
                }
            }
            FauxStep::Finish => {
                let reason = self.message.get("stopReason");
                p.set("stopReason", reason.clone());
                self.finish(Some(p.clone()));
                if matches!(reason.as_str(), Some("error") | Some("aborted")) {
                    TV::obj(&[("type", TV::str("error")), ("reason", reason), ("error", p.clone())])
                } else {
                    TV::obj(&[("type", TV::str("done")), ("reason", reason), ("message", p.clone())])
                }
            }
            FauxStep::LoneError(message) => {
                self.finish(Some(message.clone()));
                TV::obj(&[("type", TV::str("error")), ("reason", TV::str("error")), ("error", message)])
            }
        }
    }
}

/// Best-effort parse of a JSON object prefix (closes open strings and brackets, drops an
/// incomplete tail); at least `{}`.
pub fn parse_partial_json(text: &str) -> serde_json::Value {
    fn repair(s: &str) -> String {
        let mut stack = Vec::new();
        let (mut in_str, mut esc) = (false, false);
        for c in s.chars() {
            if in_str {
                if esc {
                    esc = false;
                } else if c == '\\' {
                    esc = true;
                } else if c == '"' {
                    in_str = false;
                }
                continue;
            }
            match c {
                '"' => in_str = true,
                '{' => stack.push('}'),
                '[' => stack.push(']'),
                '}' | ']' => {
                    stack.pop();
                }
                _ => {}
            }
        }
        let mut out = s.to_string();
        if in_str {
            if esc {
                out.pop();
            }
            out.push('"');
        }
        out.extend(stack.iter().rev());
        out
    }
    let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect();
    for &cut in cuts.iter().rev() {
        if let Ok(v @ serde_json::Value::Object(_)) = serde_json::from_str(&repair(&text[..cut])) {
            return v;
        }
    }
    serde_json::json!({})
}

// =====================================================================================
// Event recorder
// =====================================================================================

/// Records the events a sink receives.
#[derive(Clone, Default)]
pub struct Recorder(Rc<RefCell<Vec<TV>>>);

impl Recorder {
    pub fn new() -> Self {
        Recorder::default()
    }
    /// A synchronous sink function pushing each event (returns undefined).
    pub fn sink(&self) -> TV {
        let events = self.0.clone();
        TV::func(move |_h, _this, args| {
            events.borrow_mut().push(args.first().cloned().unwrap_or(TV::Undefined));
            Ok(TV::Undefined)
        })
    }
    /// An async sink: records the event at once, then resolves after `delay_ms` virtual ms.
    pub fn async_sink(&self, delay_ms: f64) -> TV {
        let events = self.0.clone();
        TV::async_func(move |h, _this, args| {
            events.borrow_mut().push(args.first().cloned().unwrap_or(TV::Undefined));
            let sleep = Host::sleep(h, delay_ms);
            async move {
                sleep.await;
                Ok(TV::Undefined)
            }
            .boxed_local()
        })
    }
    pub fn events(&self) -> Vec<TV> {
        self.0.borrow().clone()
    }
    /// Events of one type.
    pub fn of_type(&self, kind: &str) -> Vec<TV> {
        self.events().into_iter().filter(|e| e.get("type").as_str() == Some(kind)).collect()
    }
    pub fn types(&self) -> Vec<String> {
        self.events().iter().map(|e| e.get("type").js_string()).collect()
    }
    /// `"message_start:user"`, `"tool_execution_end:call-1"`, `"turn_start"`.
    pub fn labels(&self) -> Vec<String> {
        self.events().iter().map(event_label).collect()
    }
    pub fn clear(&self) {
        self.0.borrow_mut().clear();
    }
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }
}

/// The label of one event (see [`Recorder::labels`]).
pub fn event_label(e: &TV) -> String {
    let kind = e.get("type").js_string();
    if kind.starts_with("message_") {
        format!("{kind}:{}", e.get("message").get("role").js_string())
    } else if kind.starts_with("tool_execution_") || kind == "tool_approval_request" {
        format!("{kind}:{}", e.get("toolCallId").js_string())
    } else {
        kind
    }
}

// =====================================================================================
// Tests of the host itself
// =====================================================================================

#[cfg(test)]
mod tests {
    use super::*;
    use futures::future::{Either, select};
    use serde_json::json;

    fn ok_fn(v: TV) -> TV {
        TV::func(move |_h, _this, _args| Ok(v.clone()))
    }

    #[test]
    fn identity_and_object_is() {
        let h = TestHost::new();
        let a = TV::obj(&[("k", TV::num(1.0))]);
        let b = a.clone();
        assert!(h.same(&a, &b));
        let copy = h.shallow_copy(&a).unwrap();
        assert!(!h.same(&a, &copy));
        assert_eq!(copy.to_json(), json!({"k": 1}));
        assert!(h.same(&TV::num(f64::NAN), &TV::num(f64::NAN)));
        assert!(!h.same(&TV::num(0.0), &TV::num(-0.0)));
        assert!(h.same(&TV::str("x"), &TV::str("x")));
        assert!(!h.same(&TV::arr(vec![]), &TV::arr(vec![])));
        assert!(!h.same(&TV::Undefined, &TV::Null));
        // Arrays hold handles: an object pushed is the same object read back.
        let arr = h.array(&[]);
        h.array_push(&arr, &a).unwrap();
        assert!(h.same(&h.array_items(&arr).unwrap()[0], &a));
        let arr_copy = h.shallow_copy(&arr).unwrap();
        assert!(h.same(&arr_copy.at(0), &a));
    }

    #[test]
    fn kinds_and_truthiness() {
        let h = TestHost::new();
        assert_eq!(h.kind(&TV::Undefined), Kind::Undefined);
        assert_eq!(h.kind(&TV::arr(vec![])), Kind::Array);
        assert_eq!(h.kind(&ok_fn(TV::Undefined)), Kind::Function);
        assert_eq!(h.kind(&TV::error("x")), Kind::Object);
        assert_eq!(h.kind(&TV::symbol("s")), Kind::Other);
        for v in [TV::Undefined, TV::Null, TV::Bool(false), TV::num(0.0), TV::num(-0.0), TV::num(f64::NAN), TV::str("")]
        {
            assert!(!h.truthy(&v), "{v:?}");
        }
        for v in [TV::str("0"), TV::num(-1.0), TV::arr(vec![]), TV::obj(&[])] {
            assert!(h.truthy(&v), "{v:?}");
        }
    }

    #[test]
    fn properties_follow_reflect() {
        let h = TestHost::new();
        let o = TV::obj(&[("a", TV::num(1.0)), ("b", TV::num(2.0))]);
        h.set(&o, "a", &TV::num(3.0)).unwrap();
        h.set(&o, "c", &TV::num(4.0)).unwrap();
        assert_eq!(o.keys(), vec!["a", "b", "c"]);
        h.delete(&o, "b").unwrap();
        assert_eq!(o.to_json(), json!({"a": 3, "c": 4}));
        assert!(h.get(&TV::Undefined, "x").is_err());
        assert!(h.get(&TV::str("abc"), "length").is_err(), "Reflect.get on a primitive throws");
        assert!(h.set(&TV::Null, "x", &TV::Null).is_err());
        let arr = TV::arr(vec![TV::num(1.0), TV::num(2.0)]);
        assert_eq!(h.array_len(&arr).unwrap(), 2);
        h.array_set(&arr, 1, &TV::str("x")).unwrap();
        assert_eq!(arr.to_json(), json!([1, "x"]));
        assert!(h.array_push(&o, &TV::Null).is_err());
        // Integer keys come first, ascending, like JS.
        let ordered = TV::obj(&[("b", TV::num(1.0)), ("2", TV::num(2.0)), ("1", TV::num(3.0))]);
        assert_eq!(h.json_stringify(&ordered, false).unwrap().unwrap(), r#"{"1":3,"2":2,"b":1}"#);
        // Frozen objects ignore writes silently (Reflect.set returns false).
        o.freeze();
        h.set(&o, "a", &TV::num(9.0)).unwrap();
        assert_eq!(o.get("a").as_num(), Some(3.0));
        assert_eq!(h.entries(&o).unwrap().len(), 2);
    }

    #[test]
    fn throwing_getters_are_errors() {
        let h = TestHost::new();
        let o = TV::obj(&[("ok", TV::num(1.0))]);
        o.throwing_getter("bad", TV::error("boom"));
        let e = h.get(&o, "bad").unwrap_err();
        assert_eq!(h.error_message(&e), "boom");
        assert_eq!(h.error_message(&h.shallow_copy(&o).unwrap_err()), "boom");
        assert_eq!(h.error_message(&h.json_stringify(&o, false).unwrap_err()), "boom");
        assert!(h.entries(&o).is_err());
        // A counting getter runs on every read.
        let reads = Rc::new(Cell::new(0));
        let r = reads.clone();
        o.define_getter("count", move |_| {
            r.set(r.get() + 1);
            Ok(TV::num(r.get() as f64))
        });
        h.get(&o, "count").unwrap();
        h.get(&o, "count").unwrap();
        assert_eq!(reads.get(), 2);
        // error_message falls back to the object tag when reading message throws.
        let hostile = TV::obj(&[]);
        hostile.throwing_getter("message", TV::str("no"));
        assert_eq!(h.error_message(&hostile), "[object Object]");
    }

    #[test]
    fn error_messages_per_e_8_3_1() {
        let h = TestHost::new();
        assert_eq!(h.error_message(&TV::error("plain")), "plain");
        assert_eq!(h.error_message(&h.error("typed", true)), "typed");
        assert_eq!(h.error("x", true).get("name").as_str(), Some("TypeError"));
        let like = TV::obj(&[("name", TV::str("Custom")), ("message", TV::str("like an error"))]);
        assert_eq!(h.error_message(&like), "like an error");
        let no_name = TV::obj(&[("message", TV::str("m"))]);
        assert_eq!(h.error_message(&no_name), "[object Object]");
        assert_eq!(h.error_message(&TV::str("text")), "text");
        assert_eq!(h.error_message(&TV::num(42.0)), "42");
        assert_eq!(h.error_message(&TV::num(1.5)), "1.5");
        assert_eq!(h.error_message(&TV::Undefined), "undefined");
        assert_eq!(h.error_message(&TV::Null), "null");
        assert_eq!(h.error_message(&TV::arr(vec![TV::num(1.0), TV::Null, TV::str("a")])), "1,,a");
        // Errors' message and name are not enumerable.
        assert_eq!(h.json_stringify(&TV::error("x"), false).unwrap().as_deref(), Some("{}"));
        assert!(h.shallow_copy(&TV::error("x")).unwrap().keys().is_empty());
    }

    #[test]
    fn js_number_formatting() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-42.0, "-42"),
            (1.5, "1.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (1.25e-10, "1.25e-10"),
            (2.5e300, "2.5e+300"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (1700000000000.0, "1700000000000"),
        ];
        for (x, s) in cases {
            assert_eq!(js_number(x), s, "{x}");
        }
    }

    #[test]
    fn json_stringify_compact_and_pretty() {
        let h = TestHost::new();
        let v = TV::obj(&[
            ("a", TV::num(1.0)),
            ("u", TV::Undefined),
            ("f", ok_fn(TV::Undefined)),
            ("arr", TV::arr(vec![TV::Undefined, TV::num(2.5), ok_fn(TV::Null), TV::num(f64::NAN)])),
            ("empty", TV::obj(&[])),
            ("none", TV::arr(vec![])),
            ("s", TV::str("q\"\\\n\u{1}é")),
        ]);
        assert_eq!(
            h.json_stringify(&v, false).unwrap().unwrap(),
            r#"{"a":1,"arr":[null,2.5,null,null],"empty":{},"none":[],"s":"q\"\\\n\u0001é"}"#
        );
        let pretty = h.json_stringify(&TV::from_json(&json!({"a": [1, {"b": null}], "c": {}})), true).unwrap().unwrap();
        assert_eq!(pretty, "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}");
        assert_eq!(h.json_stringify(&TV::Undefined, false).unwrap(), None);
        assert_eq!(h.json_stringify(&ok_fn(TV::Null), true).unwrap(), None);
        assert_eq!(h.json_stringify(&TV::str("x"), true).unwrap().as_deref(), Some("\"x\""));
        // toJSON is honoured; cycles throw a TypeError.
        let dated = TV::obj(&[("toJSON", ok_fn(TV::str("custom")))]);
        assert_eq!(h.json_stringify(&TV::arr(vec![dated]), false).unwrap().as_deref(), Some("[\"custom\"]"));
        let cyclic = TV::obj(&[]);
        cyclic.set("self", cyclic.clone());
        let e = h.json_stringify(&cyclic, false).unwrap_err();
        assert_eq!(e.get("name").as_str(), Some("TypeError"));
    }

    #[test]
    fn json_parse_and_conversions() {
        let h = TestHost::new();
        let v = h.json_parse(r#"{"z":1,"a":[true,null,"s",1.5],"__proto__":{}}"#).unwrap();
        assert_eq!(v.keys(), vec!["z", "a", "__proto__"]);
        assert_eq!(h.json_stringify(&v, false).unwrap().unwrap(), r#"{"z":1,"a":[true,null,"s",1.5],"__proto__":{}}"#);
        let e = h.json_parse("{").unwrap_err();
        assert!(e.is_error());
        assert_eq!(e.get("name").as_str(), Some("SyntaxError"));
        assert_eq!(TV::from_json(&json!({"x": [1, 2]})).to_json(), json!({"x": [1, 2]}));
        assert_eq!(v.path("a.3").as_num(), Some(1.5));
        assert_eq!(h.regex_test("^a+$", "aaa"), Some(true));
        assert_eq!(h.regex_test("(", "x"), None);
    }

    #[test]
    fn sets_and_promise_helpers() {
        let h = TestHost::new();
        let a = TV::obj(&[]);
        let set = h.new_set(&[TV::str("x"), a.clone(), TV::str("x"), a.clone(), TV::num(0.0), TV::num(-0.0)]);
        assert_eq!(h.set_items(&set).unwrap().len(), 3);
        assert!(h.set_items(&TV::obj(&[])).is_err());
        let (promise, resolve) = h.deferred();
        let f = ok_fn(promise);
        let out = h.run(async {
            let pending = h.call(&f, &TV::Undefined, &[]);
            h.call_sync(&resolve, &TV::Undefined, &[TV::str("done")]).unwrap();
            pending.await
        });
        assert_eq!(out.unwrap().as_str(), Some("done"));
        let r = h.rejected(&TV::str("no"));
        let out = h.run(h.call(&ok_fn(r), &TV::Undefined, &[]));
        assert_eq!(out.unwrap_err().as_str(), Some("no"));
    }

    #[test]
    fn sync_and_async_calls() {
        let h = TestHost::new();
        let log = Rc::new(RefCell::new(Vec::<String>::new()));
        let l = log.clone();
        let sync = h.func(move |_h, this, args| {
            l.borrow_mut().push(format!("sync {}", args.len()));
            Ok(this.clone())
        });
        let l = log.clone();
        let asynchronous = h.async_func(move |h, _this, args| {
            // Runs inside `call`, like the synchronous prefix of a JS async function.
            l.borrow_mut().push("async start".into());
            let l = l.clone();
            let h = h.clone();
            let arg = args.first().cloned().unwrap_or(TV::Undefined);
            async move {
                h.sleep(10.0).await;
                l.borrow_mut().push("async end".into());
                if arg.truthy() { Ok(arg) } else { Err(TV::error("falsy")) }
            }
            .boxed_local()
        });
        let throwing = h.func(|_h, _this, _args| Err(TV::error("thrown")));
        let this = TV::obj(&[]);
        let f1 = h.call(&sync, &this, &[TV::Null]);
        let f2 = h.call(&asynchronous, &TV::Undefined, &[TV::str("v")]);
        assert_eq!(*log.borrow(), vec!["sync 1", "async start"]);
        let (r1, r2) = h.run(async { (f1.await, f2.await) });
        assert!(r1.unwrap().same(&this));
        assert_eq!(r2.unwrap().as_str(), Some("v"));
        assert_eq!(h.now(), 10.0);
        let e = h.run(h.call(&asynchronous, &TV::Undefined, &[TV::Null])).unwrap_err();
        assert_eq!(h.error_message(&e), "falsy");
        assert_eq!(h.error_message(&h.run(h.call(&throwing, &TV::Undefined, &[])).unwrap_err()), "thrown");
        assert!(h.run(h.call(&TV::num(1.0), &TV::Undefined, &[])).is_err());
        // call_sync of an async function returns its promise; the body keeps running unawaited.
        log.borrow_mut().clear();
        let p = h.call_sync(&asynchronous, &TV::Undefined, &[TV::str("x")]).unwrap();
        assert_eq!(p.js_string(), "[object Promise]");
        h.settle();
        assert_eq!(*log.borrow(), vec!["async start", "async end"]);
        // Host::function
        let native = h.function(Rc::new(|args: &[TV]| TV::num(args.len() as f64)));
        assert_eq!(h.call_sync(&native, &TV::Undefined, &[TV::Null, TV::Null]).unwrap().as_num(), Some(2.0));
    }

    #[test]
    fn abandoned_async_calls_keep_running() {
        let h = TestHost::new();
        let done = Rc::new(Cell::new(false));
        let d = done.clone();
        let slow = h.async_func(move |h, _this, _args| {
            let h = h.clone();
            let d = d.clone();
            async move {
                h.sleep(1000.0).await;
                d.set(true);
                Ok(TV::Undefined)
            }
            .boxed_local()
        });
        let raced = h.run(async {
            match select(h.call(&slow, &TV::Undefined, &[]), h.sleep(10.0)).await {
                Either::Left(_) => "call",
                Either::Right(_) => "timeout",
            }
        });
        assert_eq!(raced, "timeout");
        assert_eq!(h.now(), 10.0);
        assert!(!done.get());
        assert_eq!(h.pending_timers(), 1, "the abandoned body's timer is still pending");
        h.settle();
        assert!(done.get());
        assert_eq!(h.now(), 1000.0);
        assert_eq!(h.pending_timers(), 0);
    }

    #[test]
    fn thenables_are_adopted() {
        let h = TestHost::new();
        let thenable = TV::obj(&[]);
        thenable.set(
            "then",
            TV::func(|h, _this, args| {
                let resolve = args[0].clone();
                h.call_sync(&resolve, &TV::Undefined, &[TV::str("from then")])?;
                Ok(TV::Undefined)
            }),
        );
        let f = ok_fn(thenable);
        assert_eq!(h.run(h.call(&f, &TV::Undefined, &[])).unwrap().as_str(), Some("from then"));
        let hostile = TV::obj(&[]);
        hostile.throwing_getter("then", TV::str("then getter"));
        let f = ok_fn(hostile);
        assert_eq!(h.run(h.call(&f, &TV::Undefined, &[])).unwrap_err().as_str(), Some("then getter"));
    }

    #[test]
    fn virtual_timers() {
        let h = TestHost::new();
        assert_eq!(h.date_now(), EPOCH_MS);
        let order = Rc::new(RefCell::new(Vec::new()));
        let out = h.run(async {
            let o1 = order.clone();
            let o2 = order.clone();
            let a = async {
                h.sleep(50.0).await;
                o1.borrow_mut().push(("a", h.now()));
            };
            let b = async {
                h.sleep(20.0).await;
                o2.borrow_mut().push(("b", h.now()));
            };
            futures::join!(a, b);
            h.now()
        });
        assert_eq!(out, 50.0);
        assert_eq!(*order.borrow(), vec![("b", 20.0), ("a", 50.0)]);
        assert_eq!(h.date_now(), EPOCH_MS + 50.0);
        // A losing sleep is dropped, and its timer with it.
        h.run(async {
            let _ = select(h.sleep(5.0), h.sleep(500.0)).await;
        });
        assert_eq!(h.now(), 55.0);
        assert_eq!(h.pending_timers(), 0);
        let s = h.sleep(1.0);
        assert_eq!(h.pending_timers(), 1);
        drop(s);
        assert_eq!(h.pending_timers(), 0);
        // `at` and `advance`.
        let hit = Rc::new(Cell::new(0.0));
        let hh = hit.clone();
        h.at(100.0, move |h| hh.set(h.now()));
        h.advance(10.0);
        assert_eq!((h.now(), hit.get()), (65.0, 0.0));
        h.advance(100.0);
        assert_eq!((h.now(), hit.get()), (165.0, 100.0));
    }

    #[test]
    #[should_panic(expected = "deadlock: run stalled with no pending timer")]
    fn stalled_run_panics() {
        let h = TestHost::new();
        h.run(futures::future::pending::<()>());
    }

    #[test]
    fn abort_wakes_and_deregisters() {
        let h = TestHost::new();
        let (controller, signal) = h.abort_controller();
        assert!(!h.signal_aborted(&signal));
        assert!(h.get(&controller, "signal").unwrap().same(&signal));
        let w1 = h.wait_abort(&signal);
        let w2 = h.wait_abort(&signal);
        assert_eq!(h.abort_listener_count(), 2);
        drop(w2);
        assert_eq!(h.abort_listener_count(), 1);
        h.abort_at(&controller, 30.0);
        h.run(w1);
        assert_eq!(h.now(), 30.0);
        assert!(h.signal_aborted(&signal));
        assert_eq!(h.get(&signal, "aborted").unwrap().as_bool(), Some(true));
        assert_eq!(h.get(&signal, "reason").unwrap().get("name").as_str(), Some("AbortError"));
        assert_eq!(h.abort_listener_count(), 0);
        // Already aborted: resolves at once, registers nothing.
        h.run(h.wait_abort(&signal));
        assert_eq!(h.abort_listener_count(), 0);
        // No signal: never resolves.
        let out = h.run(async {
            match select(h.wait_abort(&TV::Undefined), h.sleep(5.0)).await {
                Either::Left(_) => "aborted",
                Either::Right(_) => "slept",
            }
        });
        assert_eq!(out, "slept");
        // A reason is kept; the method form works too; a plain object "signal" is read via `aborted`.
        let (c2, s2) = h.abort_controller();
        let abort = h.get(&c2, "abort").unwrap();
        h.call_sync(&abort, &c2, &[TV::str("why")]).unwrap();
        assert_eq!(s2.get("reason").as_str(), Some("why"));
        assert!(h.signal_aborted(&TV::obj(&[("aborted", TV::Bool(true))])));
        // A dropped waiter on a live signal deregisters.
        let (_c3, s3) = h.abort_controller();
        h.run(async {
            let _ = select(h.wait_abort(&s3), h.sleep(1.0)).await;
        });
        assert_eq!(h.abort_listener_count(), 0);
    }

    #[test]
    fn scripted_streams() {
        let h = TestHost::new();
        let s = h.stream(vec![
            StreamStep::Event(TV::num(1.0)),
            StreamStep::Delay(25.0),
            StreamStep::Event(TV::num(2.0)),
            StreamStep::Throw(TV::error("broken")),
        ]);
        let it = h.async_iterator(&s.source).unwrap().unwrap();
        let (a, b, c) =
            h.run(async { (h.iterator_next(&it).await, h.iterator_next(&it).await, h.iterator_next(&it).await) });
        assert_eq!(a.unwrap().unwrap().as_num(), Some(1.0));
        assert_eq!(b.unwrap().unwrap().as_num(), Some(2.0));
        assert_eq!(h.error_message(&c.unwrap_err()), "broken");
        assert_eq!(h.now(), 25.0);
        assert!(h.run(h.iterator_next(&it)).unwrap().is_none(), "out of steps: done");
        assert_eq!(s.next_calls(), 4);
        assert!(!s.return_called());
        h.iterator_return(&it);
        assert!(s.return_called());

        let s = h.stream(vec![StreamStep::End, StreamStep::Event(TV::Null)]);
        let it = h.async_iterator(&s.source).unwrap().unwrap();
        assert!(h.run(h.iterator_next(&it)).unwrap().is_none());
        assert!(h.run(h.iterator_next(&it)).unwrap().is_none(), "End is sticky");

        assert!(h.async_iterator(&TV::obj(&[])).unwrap().is_none());
        assert!(h.async_iterator(&TV::Undefined).unwrap().is_none());
        let bad = TV::obj(&[]);
        bad.set_async_iterator(TV::func(|_h, _this, _args| Err(TV::str("no iterator"))));
        assert!(h.async_iterator(&bad).is_err());
        // A `next` resolving to a non-object is a TypeError.
        let odd = TV::obj(&[("next", ok_fn(TV::num(3.0)))]);
        let e = h.run(h.iterator_next(&odd)).unwrap_err();
        assert_eq!(h.error_message(&e), "Iterator result 3 is not an object");
    }

    /// Reads a faux source to the end.
    fn drain(h: &TestHost, source: &TV) -> Vec<TV> {
        let it = h.async_iterator(source).unwrap().unwrap();
        h.run(async {
            let mut events = Vec::new();
            while let Some(e) = h.iterator_next(&it).await.unwrap() {
                events.push(e);
            }
            events
        })
    }

    fn types(events: &[TV]) -> Vec<String> {
        events.iter().map(|e| e.str_at("type")).collect()
    }

    fn request(h: &TestHost, faux: &FauxProvider, messages: Vec<TV>, signal: TV) -> TV {
        let context = TV::obj(&[("messages", TV::arr(messages))]);
        let options = TV::obj(&[("apiKey", TV::str("k")), ("signal", signal)]);
        h.call_sync(&faux.stream_fn(), &TV::Undefined, &[faux_model(), context, options]).unwrap()
    }

    #[test]
    fn faux_streams_text() {
        let h = TestHost::new();
        let faux = FauxProvider::new(&h);
        faux.push(faux_assistant(vec![faux_text("Hello world")], "stop"));
        let source = request(&h, &faux, vec![user_message("hi")], TV::Undefined);
        let events = drain(&h, &source);
        assert_eq!(
            types(&events),
            vec!["start", "text_start", "text_delta", "text_delta", "text_delta", "text_delta", "text_end", "done"]
        );
        let deltas: Vec<String> =
            events.iter().filter(|e| e.str_at("type") == "text_delta").map(|e| e.str_at("delta")).collect();
        assert_eq!(deltas, vec!["Hel", "lo w", "orl", "d"]);
        let partial = events[0].get("partial");
        for e in &events[..events.len() - 1] {
            assert!(e.get("partial").same(&partial), "one shared partial");
        }
        assert_eq!(events[1].num_at("contentIndex"), 0.0);
        assert_eq!(events[6].str_at("content"), "Hello world");
        let done = &events[7];
        assert_eq!(done.str_at("reason"), "stop");
        let message = done.get("message");
        assert!(message.same(&partial));
        assert_eq!(message.str_at("stopReason"), "stop");
        assert_eq!(message.path("content.0.text").as_str(), Some("Hello world"));
        assert_eq!(message.num_at("timestamp"), EPOCH_MS);
        assert_eq!(
            message.keys(),
            vec!["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"]
        );
        let result = source.get("result");
        let r = h.run(h.call(&result, &source, &[])).unwrap();
        assert!(r.same(&message));
        assert_eq!(faux.call_count(), 1);
        let call = &faux.calls()[0];
        assert_eq!(call.messages.len(), 1);
        assert_eq!(call.options.str_at("apiKey"), "k");
        assert!(call.final_message().unwrap().same(&message));
        assert!(!call.return_called());
    }

    #[test]
    fn faux_streams_thinking_and_tool_calls() {
        let h = TestHost::new();
        let faux = FauxProvider::new(&h);
        let scripted = faux_assistant(
            vec![faux_thinking("hmm"), faux_tool_call("call-1", "echo", json!({"text": "hi there", "n": 12}))],
            "toolUse",
        );
        faux.push(scripted.clone());
        let source = request(&h, &faux, vec![], TV::Undefined);
        let events = drain(&h, &source);
        let t = types(&events);
        assert_eq!(&t[..4], &["start", "thinking_start", "thinking_delta", "thinking_end"]);
        assert_eq!(t[4], "toolcall_start");
        assert!(t[5..t.len() - 2].iter().all(|x| x == "toolcall_delta"));
        assert_eq!(&t[t.len() - 2..], &["toolcall_end", "done"]);
        let json_text: String =
            events.iter().filter(|e| e.str_at("type") == "toolcall_delta").map(|e| e.str_at("delta")).collect();
        assert_eq!(json_text, r#"{"text":"hi there","n":12}"#);
        // Partial arguments grow, always an object.
        for e in events.iter().filter(|e| e.str_at("type") == "toolcall_delta") {
            assert_eq!(e.num_at("contentIndex"), 1.0);
            assert!(matches!(e.path("partial.content.1.arguments"), TV::Obj(_)));
        }
        let end = &events[events.len() - 2];
        let call = end.get("toolCall");
        assert_eq!(
            call.to_json(),
            json!({"type": "toolCall", "id": "call-1", "name": "echo", "arguments": {"text": "hi there", "n": 12}})
        );
        assert!(call.same(&end.path("partial.content.1")));
        let done = events.last().unwrap();
        assert_eq!(done.str_at("reason"), "toolUse");
        assert_eq!(done.path("message.content.0.thinking").as_str(), Some("hmm"));
        // The scripted message itself is never mutated (cloned per request).
        assert!(scripted.get("timestamp").is_undefined());
    }

    #[test]
    fn partial_json() {
        assert_eq!(parse_partial_json(""), json!({}));
        assert_eq!(parse_partial_json("{\"a\": \"hel"), json!({"a": "hel"}));
        assert_eq!(parse_partial_json("{\"a\": 12"), json!({"a": 12}));
        assert_eq!(parse_partial_json("{\"a\": tr"), json!({}));
        assert_eq!(parse_partial_json("{\"a\": [1, {\"b\""), json!({"a": [1, {}]}));
    }

    #[test]
    fn faux_abort_between_chunks() {
        let h = TestHost::new();
        let faux = FauxProvider::new(&h);
        faux.set_chunk_delay(10.0);
        faux.push(faux_assistant(vec![faux_text("abcdefghijklmnop")], "stop"));
        let (controller, signal) = h.abort_controller();
        h.abort_at(&controller, 25.0);
        let source = request(&h, &faux, vec![], signal);
        let events = drain(&h, &source);
        assert_eq!(types(&events), vec!["start", "text_start", "text_delta", "text_delta", "error"]);
        let error = events.last().unwrap();
        assert_eq!(error.str_at("reason"), "aborted");
        let message = error.get("error");
        assert!(message.same(&events[0].get("partial")));
        assert_eq!(message.str_at("stopReason"), "aborted");
        assert_eq!(message.str_at("errorMessage"), "Request was aborted");
        assert_eq!(message.path("content.0.text").as_str(), Some("abcdefg"));
        assert_eq!(h.now(), 30.0);
        assert_eq!(h.pending_timers(), 0);

        // Aborted before the request: a lone error.
        let faux = FauxProvider::new(&h);
        faux.push(faux_assistant(vec![faux_text("x")], "stop"));
        let (controller, signal) = h.abort_controller();
        h.abort(&controller, &TV::Undefined);
        let events = drain(&h, &request(&h, &faux, vec![], signal));
        assert_eq!(types(&events), vec!["error"]);
        assert_eq!(events[0].path("error.stopReason").as_str(), Some("aborted"));
    }

    #[test]
    fn faux_errors() {
        let h = TestHost::new();
        let faux = FauxProvider::new(&h);
        let events = drain(&h, &request(&h, &faux, vec![], TV::Undefined));
        assert_eq!(types(&events), vec!["error"]);
        assert_eq!(events[0].str_at("reason"), "error");
        let message = events[0].get("error");
        assert_eq!(message.str_at("errorMessage"), "No more faux responses queued");
        assert_eq!(message.str_at("model"), "faux-1");
        assert_eq!(message.get("content").len(), 0);

        // A scripted error message streams its content, then `error`.
        faux.push(faux_assistant_error(vec![faux_text("partial")], "provider exploded"));
        let events = drain(&h, &request(&h, &faux, vec![], TV::Undefined));
        assert_eq!(types(&events), vec!["start", "text_start", "text_delta", "text_delta", "text_end", "error"]);
        let error = events.last().unwrap();
        assert_eq!(error.str_at("reason"), "error");
        assert_eq!(error.path("error.errorMessage").as_str(), Some("provider exploded"));

        // A responder sees the context and options; `return()` is recorded.
        faux.push_fn(|context, options| {
            let n = context.get("messages").len();
            faux_assistant(vec![faux_text(&format!("{n} {}", options.str_at("apiKey")))], "stop")
        });
        let source = request(&h, &faux, vec![user_message("a"), user_message("b")], TV::Undefined);
        let it = h.async_iterator(&source).unwrap().unwrap();
        let first = h.run(h.iterator_next(&it)).unwrap().unwrap();
        assert_eq!(first.path("partial.stopReason").as_str(), Some("pending"));
        h.iterator_return(&it);
        assert!(h.run(h.iterator_next(&it)).unwrap().is_none());
        let calls = faux.calls();
        assert!(calls[2].return_called());
        assert_eq!(faux.call_count(), 3);
        assert_eq!(faux.pending(), 0);
        let r = h.run(h.call(&source.get("result"), &source, &[])).unwrap();
        assert_eq!(r.get("content").len(), 0, "stopped before any block");
    }

    #[test]
    fn faux_responder_sees_context() {
        let h = TestHost::new();
        let faux = FauxProvider::new(&h);
        faux.push_fn(|context, options| {
            let n = context.get("messages").len();
            faux_assistant(vec![faux_text(&format!("{n} {}", options.str_at("apiKey")))], "stop")
        });
        let events = drain(&h, &request(&h, &faux, vec![user_message("a"), user_message("b")], TV::Undefined));
        assert_eq!(events.last().unwrap().path("message.content.0.text").as_str(), Some("2 k"));
    }

    #[test]
    fn recorder_labels() {
        let h = TestHost::new();
        let rec = Recorder::new();
        let sink = rec.sink();
        let user = user_message("hi");
        for e in [
            TV::obj(&[("type", TV::str("agent_start"))]),
            TV::obj(&[("type", TV::str("message_start")), ("message", user.clone())]),
            TV::obj(&[("type", TV::str("tool_execution_end")), ("toolCallId", TV::str("c1"))]),
        ] {
            h.call_sync(&sink, &TV::Undefined, &[e]).unwrap();
        }
        assert_eq!(rec.types(), vec!["agent_start", "message_start", "tool_execution_end"]);
        assert_eq!(rec.labels(), vec!["agent_start", "message_start:user", "tool_execution_end:c1"]);
        assert!(rec.events()[1].get("message").same(&user));
        assert_eq!(rec.of_type("message_start").len(), 1);
        let slow = rec.async_sink(5.0);
        h.run(h.call(&slow, &TV::Undefined, &[TV::obj(&[("type", TV::str("x"))])])).unwrap();
        assert_eq!((rec.len(), h.now()), (4, 5.0));
    }
}
