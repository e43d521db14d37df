//! A scripted, deterministic, single-threaded `Host` for native tests (compiled only for tests).
//!
//! - [`TV`] models JS values with identity (objects, arrays and functions are `Rc`s).
//! - [`TestHost`] implements [`Host`] with JS semantics (Reflect-style property access, `Object.is`,
//!   `JSON.stringify` formatting, promises that run eagerly like JS) and drives futures on a
//!   `LocalPool` with a VIRTUAL clock: when everything is stalled, time jumps to the next timer.
//! - [`FauxProvider`] mirrors pi-ai's faux provider; [`Recorder`] records loop events.
//!
//! Panics are allowed here: this file is test support only.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    dead_code
)]

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
    AbortController { state: Rc<AbortState>, signal: TV },
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
        let mut ints: Vec<(u32, String)> =
            props.iter().filter(|p| p.enumerable).filter_map(|p| array_index(&p.key).map(|i| (i, p.key.clone()))).collect();
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
        TV::Obj(Object::new(Class::Error, vec![data("message", TV::str(message), false), data("name", TV::str(name), false)]))
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
            (TV::Num(a), TV::Num(b)) => (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative()),
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
                if let Some(i) = array_index(key) {
                    if let Some(slot) = a.borrow_mut().get_mut(i as usize) {
                        *slot = TV::Undefined;
                    }
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
        if k == 1 { format!("{digits}e{sign}{}", e.abs()) } else { format!("{}.{}e{sign}{}", &digits[..1], &digits[1..], e.abs()) }
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
                Class::Error => out.push_str(&format!("{}", js_string(v, 0))),
                Class::Function(_) => out.push_str("[Function]"),
                Class::AbortController { state, .. } => out.push_str(&format!("AbortController(aborted={})", state.aborted.get())),
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
        if let Ok(mut st) = self.p.state.try_borrow_mut() {
            if let PState::Pending(w) = &mut *st {
                w.retain(|(id, _)| *id != self.id);
            }
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
        let reason = if reason.is_undefined() {
            TV::error_named("AbortError", "This operation was aborted")
        } else {
            reason
        };
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
        if !self.shared.fired.get() {
            if let Ok(mut timers) = self.inner.timers.try_borrow_mut() {
                timers.retain(|t| t.id != self.id);
            }
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
            if flag.0.swap(false, Ordering::SeqCst) {
                if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                    return v;
                }
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
    pub fn async_func(&self, f: impl Fn(&TestHost, &TV, &[TV]) -> LocalBoxFuture<'static, Result<TV, TV>> + 'static) -> TV {
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
        if let TV::Obj(o) = v {
            if let Class::Promise(p) = &o.class {
                return PromiseWait::new(p.clone()).boxed_local();
            }
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
    fn error(&self, message: &str, type_error: bool) -> TV {
        if type_error { TV::type_error(message) } else { TV::error(message) }
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
            TV::Obj(_) | TV::Func(_) | TV::Arr(_) => obj.keys().into_iter().map(|k| obj.try_get(&k).map(|v| (k, v))).collect(),
            TV::Str(s) => Ok(s.chars().enumerate().map(|(i, c)| (i.to_string(), TV::Str(c.to_string()))).collect()),
            _ => Ok(Vec::new()),
        }
    }
    fn new_set(&self, items: &[TV]) -> TV {
        let mut unique: Vec<TV> = Vec::new();
        for item in items {
            let zero = |v: &TV| if let TV::Num(n) = v { if *n == 0.0 { TV::Num(0.0) } else { v.clone() } } else { v.clone() };
            let item = zero(item);
            if !unique.iter().any(|u| u.same(&item)) {
                unique.push(item);
            }
        }
        TV::Obj(Object::new(Class::Set(RefCell::new(unique)), Vec::new()))
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
        serde_json::from_str::<serde_json::Value>(text)
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
        if let TV::Obj(o) = controller {
            if let Class::AbortController { state, .. } = &o.class {
                state.abort(reason.clone());
                return;
            }
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
            TV::Undefined | TV::Null => Err(TV::type_error(&format!(
                "Cannot read properties of {} (reading 'next')",
                it.js_string()
            ))),
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
        if let Ok(f) = it.try_get("return") {
            if f.is_func() {
                let _ = self.call_sync(&f, it, &[]);
            }
        }
    }
}
