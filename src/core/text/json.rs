//! JavaScript views of a `serde_json::Value`: `JSON.stringify` (compact and pretty), `Object.keys` order, `===`, JSON
//! equality and JSON Pointer segments. Pure functions; recursion is bounded by the value's own depth,
//! which the caller has checked (see `mod.rs`).

use serde_json::{Map, Value};
use std::fmt::Write as _;

use super::number::{as_f64, js_number_to_string};
use crate::core::sort;

/// The entries of an object in `Object.keys` order: array-index keys ascending, then the others in insertion order.
pub(crate) fn js_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    js_order(map.iter().collect())
}

/// Entries reordered as a JavaScript object lists its keys: array-index keys ascending, then the others in order.
pub(crate) fn js_order<'k, T>(entries: Vec<(&'k String, T)>) -> Vec<(&'k String, T)> {
    let mut indexes: Vec<(u32, &'k String, T)> = Vec::new();
    let mut others: Vec<(&'k String, T)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        match array_index(k) {
            Some(i) => indexes.push((i, k, v)),
            None => others.push((k, v)),
        }
    }
    if indexes.is_empty() {
        return others;
    }
    let mut keys: Vec<u64> = indexes.iter().enumerate().map(|(at, (i, _, _))| sort::key(*i, at)).collect();
    sort::sort_keys(&mut keys);
    let mut entries: Vec<Option<(&'k String, T)>> = indexes.into_iter().map(|(_, k, v)| Some((k, v))).collect();
    let mut out: Vec<(&'k String, T)> = Vec::with_capacity(entries.len() + others.len());
    out.extend(keys.into_iter().filter_map(|key| entries.get_mut(sort::position(key)).and_then(Option::take)));
    out.extend(others);
    out
}

/// The keys of an object in `Object.keys` order.
pub(crate) fn js_keys(map: &Map<String, Value>) -> Vec<&String> {
    js_entries(map).into_iter().map(|(k, _)| k).collect()
}

/// A canonical array index (`"0"`, `"17"`, up to 2^32 - 2), which JavaScript objects list first.
fn array_index(key: &str) -> Option<u32> {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b.first() == Some(&b'0')) {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    if n <= 4_294_967_294 { u32::try_from(n).ok() } else { None }
}

/// `JSON.stringify(value)` of a value whose strings may hold lone-surrogate stand-ins (`wtf`): each is written as
/// the `\udXXX` escape `JSON.stringify` writes for the lone surrogate.
pub fn js_json_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, None, 0, true);
    out
}

/// `JSON.stringify(value)` of a value whose strings are text as it is, stand-in code points included: the provider
/// request body, where a caller's lone surrogates travel as markers (`providers::marker`) and a private-use
/// character of the caller's must go out as itself.
pub fn js_json_stringify_verbatim(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, None, 0, false);
    out
}

/// `JSON.stringify(value, null, 2)`: the text of `Received arguments` in validation errors.
pub fn js_json_stringify_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, Some(2), 0, true);
    out
}

/// One step of writing: a value, or the punctuation that follows the members of an array or object.
enum Step<'v> {
    Value(&'v Value, usize),
    /// A new line before an array item.
    Item(usize),
    /// A new line and the key before an object member.
    Key(&'v str, usize),
    Comma,
    Close(char, usize),
}

/// Writes `value` without recursion, so any depth of value is safe to print (E-8.4.1).
fn write_json(out: &mut String, value: &Value, indent: Option<usize>, level: usize, stand_ins: bool) {
    let mut steps = vec![Step::Value(value, level)];
    while let Some(step) = steps.pop() {
        match step {
            Step::Key(k, level) => {
                newline(out, indent, level);
                write_string(out, k, stand_ins);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
            }
            Step::Item(level) => newline(out, indent, level),
            Step::Comma => out.push(','),
            Step::Close(c, level) => {
                newline(out, indent, level);
                out.push(c);
            }
            Step::Value(v, level) => write_scalar_or_open(out, v, level, &mut steps, stand_ins),
        }
    }
}

fn write_scalar_or_open<'v>(
    out: &mut String,
    value: &'v Value,
    level: usize,
    steps: &mut Vec<Step<'v>>,
    stand_ins: bool,
) {
    let inner = level.saturating_add(1);
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let x = as_f64(n);
            // JSON.stringify writes a non-finite number as null (serde_json never holds one).
            if x.is_finite() {
                out.push_str(&js_number_to_string(x));
            } else {
                out.push_str("null");
            }
        }
        Value::String(s) => write_string(out, s, stand_ins),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Array(items) => {
            out.push('[');
            steps.push(Step::Close(']', level));
            for (i, item) in items.iter().enumerate().rev() {
                steps.push(Step::Value(item, inner));
                steps.push(Step::Item(inner));
                if i > 0 {
                    steps.push(Step::Comma);
                }
            }
        }
        Value::Object(map) => {
            out.push('{');
            steps.push(Step::Close('}', level));
            let mut member = |i: usize, k: &'v String, v: &'v Value| {
                steps.push(Step::Value(v, inner));
                steps.push(Step::Key(k, inner));
                if i > 0 {
                    steps.push(Step::Comma);
                }
            };
            // Most objects have no array-index key: their order is their own, with no reordered copy.
            if map.keys().any(|k| array_index(k).is_some()) {
                js_entries(map).into_iter().enumerate().rev().for_each(|(i, (k, v))| member(i, k, v));
            } else {
                map.iter().enumerate().rev().for_each(|(i, (k, v))| member(i, k, v));
            }
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(width) = indent {
        out.push('\n');
        for _ in 0..width.saturating_mul(level) {
            out.push(' ');
        }
    }
}

/// A JSON string as `JSON.stringify` writes it: `"`, `\` and the controls escaped (the short forms where JSON has
/// them), and with `stand_ins` a lone surrogate's stand-in as the surrogate's escape. Unescaped runs are copied whole.
fn write_string(out: &mut String, s: &str, stand_ins: bool) {
    out.push('"');
    let mut run = 0;
    for (at, byte) in s.bytes().enumerate() {
        // The escape's short form, or the code unit of a `\uXXXX` escape; and the bytes it replaces.
        let (escape, len): (Result<&str, u32>, usize) = match byte {
            b'"' => (Ok("\\\""), 1),
            b'\\' => (Ok("\\\\"), 1),
            b'\x08' => (Ok("\\b"), 1),
            b'\x0c' => (Ok("\\f"), 1),
            b'\n' => (Ok("\\n"), 1),
            b'\r' => (Ok("\\r"), 1),
            b'\t' => (Ok("\\t"), 1),
            0..0x20 => (Err(u32::from(byte)), 1),
            // The stand-ins (U+10F800 and up) are the only 4-byte characters led by 0xF4 that need a look.
            0xF4 if stand_ins => {
                let c = s.get(at..).and_then(|t| t.chars().next());
                match c.and_then(|c| Some((crate::core::text::wtf::surrogate_of(c)?, c.len_utf8()))) {
                    Some((unit, len)) => (Err(u32::from(unit)), len),
                    None => continue,
                }
            }
            _ => continue,
        };
        out.push_str(s.get(run..at).unwrap_or_default());
        run = at + len;
        match escape {
            Ok(short) => out.push_str(short),
            Err(unit) => {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out.push_str(s.get(run..).unwrap_or_default());
    out.push('"');
}

/// `a === b`: primitives by value (numbers as `f64`), objects and arrays by identity.
pub(crate) fn strict_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => as_f64(x) == as_f64(y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => std::ptr::eq(a, b),
        _ => false,
    }
}

/// Whether `v` is a primitive (not an object or array).
pub(crate) fn is_primitive(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

/// JSON equality as `const`, `enum` and `uniqueItems` compare: arrays in order, objects by keys in any order.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| json_equal(p, q)))
        }
        _ => strict_equal(a, b),
    }
}

/// `String(v)` as `Array.prototype.join` writes an element (`null` as empty text).
pub(crate) fn js_join_element(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number_to_string(as_f64(n)),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(js_join_element).collect::<Vec<_>>().join(","),
        Value::Object(_) => "[object Object]".to_string(),
    }
}

/// A JSON value as a property key (`String(v)`), for `dependentRequired` lists that hold non-strings.
pub(crate) fn js_property_key(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        other => js_join_element(other),
    }
}

/// Enum values as listed in `expected one of …`: at most 20, then how many more.
pub(crate) fn list_values(values: &[Value]) -> String {
    const LISTED: usize = 20;
    let Some(listed) = values.get(..LISTED).filter(|_| values.len() > LISTED) else {
        return js_json_stringify(&Value::Array(values.to_vec()));
    };
    let text = js_json_stringify(&Value::Array(listed.to_vec()));
    let open = text.strip_suffix(']').unwrap_or(&text);
    format!("{open}, ... and {} more]", values.len().saturating_sub(LISTED))
}

/// `path` (a JSON Pointer) extended by one key.
pub(crate) fn pointer(path: &str, key: &str) -> String {
    let mut out = String::with_capacity(path.len().saturating_add(key.len()).saturating_add(1));
    out.push_str(path);
    out.push('/');
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `path` extended by an array index.
pub(crate) fn pointer_index(path: &str, index: usize) -> String {
    format!("{path}/{index}")
}

/// A JSON Pointer segment's text: `~1` is `/`, `~0` is `~` (RFC 6901).
pub(crate) fn unescape(segment: &str) -> String {
    super::replace(&super::replace(segment, "~1", "/"), "~0", "~")
}

/// A JSON Pointer as the dotted path a model sees: `/edits/0/oldText` → `edits.0.oldText`, `""` → `root`.
pub(crate) fn dotted_path(pointer: &str) -> String {
    let Some(rest) = pointer.strip_prefix('/') else {
        return if pointer.is_empty() { "root".to_string() } else { pointer.to_string() };
    };
    rest.split('/').map(unescape).collect::<Vec<_>>().join(".")
}

/// The nesting depth of a value (a scalar is 1), counted without recursion; stops counting past `limit`.
pub fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d.saturating_add(1)))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d.saturating_add(1)))),
            _ => {}
        }
    }
    false
}

/// Keyword lookup without hashing: schema nodes and tool arguments are small objects, and
/// serde_json's ordered map hashes every key with SipHash. Large objects still use the index.
pub(crate) trait Kw {
    fn kw(&self, key: &str) -> Option<&Value>;
}

impl Kw for Map<String, Value> {
    fn kw(&self, key: &str) -> Option<&Value> {
        if self.len() > 8 {
            return self.get(key);
        }
        self.iter().find_map(|(k, v)| (k == key).then_some(v))
    }
}

impl Kw for Value {
    fn kw(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(o) => o.kw(key),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The request body's writer writes numbers as `Number.prototype.toString` (`js_number_to_string`, whose own test
    /// holds the cases).
    #[test]
    fn numbers_as_js_writes_them() {
        assert_eq!(
            js_json_stringify_verbatim(&json!([1.0, -1.0, -0.0, 0.5, 1e21, 1e20, 0.000001, 1e-7, -2.5e-10, 100.0])),
            "[1,-1,0,0.5,1e+21,100000000000000000000,0.000001,1e-7,-2.5e-10,100]"
        );
    }

    #[test]
    fn integers_beyond_2_53_are_the_double_js_reads() {
        assert_eq!(js_json_stringify_verbatim(&json!(9007199254740993u64)), "9007199254740992");
        assert_eq!(js_json_stringify_verbatim(&json!(u64::MAX)), "18446744073709552000");
        assert_eq!(js_json_stringify_verbatim(&json!(-9007199254740993i64)), "-9007199254740992");
        assert_eq!(js_json_stringify_verbatim(&json!([9007199254740992u64, -5])), "[9007199254740992,-5]");
    }

    #[test]
    fn array_index_keys_first_in_ascending_order() {
        let mut map = Map::new();
        for key in ["b", "10", "2", "01", "4294967295", "4294967294", "-1", "0", "a"] {
            map.insert(key.into(), json!(1));
        }
        assert_eq!(
            js_json_stringify_verbatim(&Value::Object(map)),
            r#"{"0":1,"2":1,"10":1,"4294967294":1,"b":1,"01":1,"4294967295":1,"-1":1,"a":1}"#
        );
    }

    #[test]
    fn strings_escaped_as_json_stringify_does() {
        let s = "q\"b\\s\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}\u{2028}é😀\u{FDD0}";
        assert_eq!(
            js_json_stringify_verbatim(&json!({ "k\n": s })),
            "{\"k\\n\":\"q\\\"b\\\\s\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\u{2028}é😀\u{FDD0}\"}"
        );
        // A stand-in code point: the caller's own character in a request body, a lone surrogate elsewhere.
        let stand_in = json!("a\u{10F83D}b\u{10FFFF}");
        assert_eq!(js_json_stringify_verbatim(&stand_in), "\"a\u{10F83D}b\u{10FFFF}\"");
        assert_eq!(js_json_stringify(&stand_in), r#""a\ud83db\udfff""#);
    }

    #[test]
    fn stringify_like_javascript() {
        let v: Value =
            serde_json::from_str(r#"{"b":1.0,"2":[1e21,0.5,-0.0],"a":"x\"\n\u0001é","1":{},"c":[]}"#).unwrap();
        assert_eq!(js_json_stringify(&v), r#"{"1":{},"2":[1e+21,0.5,0],"b":1,"a":"x\"\n\u0001é","c":[]}"#);
        assert_eq!(
            js_json_stringify_pretty(&json!({"n": "ten", "extra": 1, "l": [1, {"a": null}]})),
            "{\n  \"n\": \"ten\",\n  \"extra\": 1,\n  \"l\": [\n    1,\n    {\n      \"a\": null\n    }\n  ]\n}"
        );
        assert_eq!(js_json_stringify_pretty(&json!([])), "[]");
        assert_eq!(js_json_stringify_pretty(&json!("s")), "\"s\"");
    }

    #[test]
    fn key_order_puts_array_indexes_first() {
        let v: Value = serde_json::from_str(r#"{"b":1,"10":2,"a":3,"2":4,"01":5,"4294967295":6}"#).unwrap();
        let keys: Vec<&str> = js_keys(v.as_object().unwrap()).into_iter().map(String::as_str).collect();
        assert_eq!(keys, ["2", "10", "b", "a", "01", "4294967295"]);
    }

    #[test]
    fn enum_lists_are_cut_after_twenty() {
        let values: Vec<Value> = (1..=22).map(Value::from).collect();
        assert_eq!(list_values(&values), "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20, ... and 2 more]");
        assert_eq!(list_values(&[json!(null), json!(0)]), "[null,0]");
    }

    #[test]
    fn paths() {
        assert_eq!(dotted_path(""), "root");
        assert_eq!(dotted_path("/edits/0/oldText"), "edits.0.oldText");
        assert_eq!(dotted_path(&pointer(&pointer("", "a/b"), "c~d")), "a/b.c~d");
    }

    #[test]
    fn equality() {
        assert!(json_equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!json_equal(&json!([1]), &json!({"0": 1})));
        let o = json!({});
        assert!(strict_equal(&o, &o));
        assert!(!strict_equal(&o, &json!({})));
    }

    #[test]
    fn printing_any_depth_needs_no_recursion() {
        let mut v = json!(1);
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        let text = js_json_stringify(&v);
        // Pretty text grows with the square of the depth; look inside the value for a shallower part.
        let mut inner = &v;
        for _ in 0..97_000 {
            inner = inner.get(0).unwrap_or(inner);
        }
        let pretty_len = js_json_stringify_pretty(inner).len();
        let deep = depth_exceeds(&v, 512);
        // serde_json drops recursively: take the value apart by hand.
        let mut stack = vec![v];
        while let Some(mut v) = stack.pop() {
            if let Value::Array(items) = &mut v {
                stack.append(items);
            }
        }
        assert_eq!(text.len(), 200_001);
        assert!(pretty_len > 6_000);
        assert!(deep);
    }

    #[test]
    fn depth() {
        let mut v = json!(1);
        for _ in 0..600 {
            v = json!([v]);
        }
        assert!(depth_exceeds(&v, 512));
        assert!(!depth_exceeds(&json!([[1]]), 3));
        assert!(depth_exceeds(&json!([[1]]), 2));
    }
}
