//! JavaScript views of a `serde_json::Value`: `JSON.stringify` (compact and pretty), `Object.keys` order, `===`, JSON
//! equality, type names and JSON Pointer segments. Pure functions; recursion is bounded by the value's own depth,
//! which the caller has checked (see `mod.rs`).

use serde_json::{Map, Value};

use super::number::{as_f64, is_integer, js_number_to_string};

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
    indexes.sort_by_key(|(i, _, _)| *i);
    let mut out: Vec<(&'k String, T)> = indexes.into_iter().map(|(_, k, v)| (k, v)).collect();
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

/// `JSON.stringify(value)`.
pub fn js_json_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, None, 0);
    out
}

/// `JSON.stringify(value, null, 2)`: the text of `Received arguments` in validation errors.
pub fn js_json_stringify_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, Some(2), 0);
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
fn write_json(out: &mut String, value: &Value, indent: Option<usize>, level: usize) {
    let mut steps = vec![Step::Value(value, level)];
    while let Some(step) = steps.pop() {
        match step {
            Step::Key(k, level) => {
                newline(out, indent, level);
                write_string(out, k);
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
            Step::Value(v, level) => write_scalar_or_open(out, v, level, &mut steps),
        }
    }
}

fn write_scalar_or_open<'v>(out: &mut String, value: &'v Value, level: usize, steps: &mut Vec<Step<'v>>) {
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
        Value::String(s) => write_string(out, s),
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
            for (i, (k, v)) in js_entries(map).into_iter().enumerate().rev() {
                steps.push(Step::Value(v, inner));
                steps.push(Step::Key(k, inner));
                if i > 0 {
                    steps.push(Step::Comma);
                }
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

fn write_string(out: &mut String, s: &str) {
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
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            // A lone surrogate's stand-in, escaped as well-formed `JSON.stringify` writes it.
            c => match crate::core::wtf::surrogate_of(c) {
                Some(unit) => out.push_str(&format!("\\u{unit:04x}")),
                None => out.push(c),
            },
        }
    }
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

/// The type named in `expected …, got <type>`.
pub(crate) fn type_name(v: &Value) -> &'static str {
    if let Some(value) = super::special::special(v) {
        return value.type_name();
    }
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if is_integer(as_f64(n)) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
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

/// A JSON Pointer as the dotted path a model sees: `/edits/0/oldText` → `edits.0.oldText`, `""` → `root`.
pub(crate) fn dotted_path(pointer: &str) -> String {
    let Some(rest) = pointer.strip_prefix('/') else {
        return if pointer.is_empty() { "root".to_string() } else { pointer.to_string() };
    };
    rest.split('/').map(|segment| segment.replace("~1", "/").replace("~0", "~")).collect::<Vec<_>>().join(".")
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
