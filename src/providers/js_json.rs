//! JSON text exactly as JS writes the same value: `JSON.stringify(JSON.parse(text))` of serde_json's text, in one
//! pass and without JS. The request body goes to `fetch` as this text when no `onPayload` hook needs it as objects,
//! so it must be byte for byte what the object path sends:
//!
//! - an object's array-index keys (`"0"` … `"4294967294"`, canonical) come first, ascending, then the others in
//!   order, as JS orders an object's own keys;
//! - numbers as JS's `Number.prototype.toString` (`1`, not `1.0`; `0.000001`, not `1e-6`; `1e+21`; `-0` is `0`), and
//!   integers beyond 2^53 as the double JS would parse them to;
//! - strings escaped as `JSON.stringify` escapes them (a Rust string has no lone surrogate to escape).
//!
//! Values deeper than `MAX_DEPTH` give `None` (the caller takes the object path); the body's depth is bounded by
//! serde_json's own parse limit anyway.

use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

const MAX_DEPTH: usize = 1000;
/// 2^53: integers up to it are doubles exactly.
const EXACT: u64 = 1 << 53;

/// `value` as JS's `JSON.stringify` writes it (see the module documentation); `None` past `MAX_DEPTH`.
pub fn to_string(value: &Value) -> Option<String> {
    let mut out = String::new();
    write_value(&mut out, value, 0)?;
    Some(out)
}

fn write_value(out: &mut String, value: &Value, depth: usize) -> Option<()> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            let depth = deeper(depth)?;
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, depth)?;
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map, deeper(depth)?)?,
    }
    Some(())
}

fn deeper(depth: usize) -> Option<usize> {
    (depth < MAX_DEPTH).then_some(depth + 1)
}

fn write_object(out: &mut String, map: &Map<String, Value>, depth: usize) -> Option<()> {
    out.push('{');
    let mut first = true;
    let mut entry = |out: &mut String, key: &str, value: &Value| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        write_str(out, key);
        out.push(':');
        write_value(out, value, depth)
    };
    if map.keys().any(|k| array_index(k).is_some()) {
        let mut indexed: Vec<(u32, &str, &Value)> =
            map.iter().filter_map(|(k, v)| Some((array_index(k)?, k.as_str(), v))).collect();
        indexed.sort_unstable_by_key(|(i, _, _)| *i);
        for (_, key, value) in indexed {
            entry(out, key, value)?;
        }
        for (key, value) in map.iter().filter(|(k, _)| array_index(k).is_none()) {
            entry(out, key, value)?;
        }
    } else {
        for (key, value) in map {
            entry(out, key, value)?;
        }
    }
    out.push('}');
    Some(())
}

/// The key as an array index: canonical decimal digits, at most 2^32 − 2.
fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    let canonical = match bytes {
        [] => false,
        [b'0'] => true,
        [b'0', ..] => false,
        _ => bytes.len() <= 10 && bytes.iter().all(u8::is_ascii_digit),
    };
    if !canonical {
        return None;
    }
    key.parse::<u32>().ok().filter(|i| *i != u32::MAX)
}

/// `JSON.stringify` of a string: `"`, `\`, and the controls escaped (the short forms where JSON has them).
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let mut run = 0;
    for (at, byte) in s.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\x08' => "\\b",
            b'\x0c' => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(s.get(run..at).unwrap_or_default());
        run = at + 1;
        if escape.is_empty() {
            out.push_str("\\u00");
            for nibble in [byte >> 4, byte & 0xf] {
                out.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
            }
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(s.get(run..).unwrap_or_default());
    out.push('"');
}

fn write_number(out: &mut String, n: &Number) {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) if u <= EXACT => {
            let _ = write!(out, "{u}");
        }
        (None, Some(i)) if i.unsigned_abs() <= EXACT => {
            let _ = write!(out, "{i}");
        }
        _ => write_f64(out, n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// `Number.prototype.toString()` of a double (ECMAScript Number::toString, radix 10) from its shortest
/// round-trip digits, which serde_json writes as `d[.ddd][e±x]`.
pub fn write_f64(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push_str("null");
        return;
    }
    if x == 0.0 {
        out.push('0');
        return;
    }
    if x < 0.0 {
        out.push('-');
    }
    // serde_json's own writer (no `core::fmt`): the shortest digits that read back as `x`.
    let shortest = serde_json::to_string(&x.abs()).unwrap_or_default();
    let (mantissa, exponent) = match shortest.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.trim_start_matches('+').parse::<i32>().unwrap_or(0)),
        None => (shortest.as_str(), 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // value = 0.DIGITS × 10^n, DIGITS without leading or trailing zeros.
    let mut n = int.len() as i32 + exponent;
    let mut digits: String = int.chars().chain(frac.chars()).collect();
    let leading = digits.len() - digits.trim_start_matches('0').len();
    n -= leading as i32;
    digits = digits.trim_start_matches('0').trim_end_matches('0').to_string();
    let k = digits.len() as i32;
    if k == 0 {
        out.push('0');
    } else if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (whole, rest) = digits.split_at(n as usize);
        out.push_str(whole);
        out.push('.');
        out.push_str(rest);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn js(x: f64) -> String {
        let mut out = String::new();
        write_f64(&mut out, x);
        out
    }

    /// `String(x)` in Node for each, written down once.
    #[test]
    fn numbers_as_js_writes_them() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1"),
            (-1.0, "-1"),
            (0.5, "0.5"),
            (-0.0, "0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1.2345678901234568e21, "1.2345678901234568e+21"),
            (0.000001, "0.000001"),
            (0.0000012, "0.0000012"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (123.456, "123.456"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-2.5e-10, "-2.5e-10"),
            (100.0, "100"),
            (1.5, "1.5"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ];
        for (x, want) in cases {
            assert_eq!(js(*x), *want, "{x:e}");
        }
    }

    #[test]
    fn integers_beyond_2_53_are_the_double_js_reads() {
        assert_eq!(to_string(&json!(9007199254740993u64)).unwrap(), "9007199254740992");
        assert_eq!(to_string(&json!(u64::MAX)).unwrap(), "18446744073709552000");
        assert_eq!(to_string(&json!(-9007199254740993i64)).unwrap(), "-9007199254740992");
        assert_eq!(to_string(&json!([9007199254740992u64, -5])).unwrap(), "[9007199254740992,-5]");
    }

    #[test]
    fn array_index_keys_first_in_ascending_order() {
        let mut map = Map::new();
        for key in ["b", "10", "2", "01", "4294967295", "4294967294", "-1", "0", "a"] {
            map.insert(key.into(), json!(1));
        }
        assert_eq!(
            to_string(&Value::Object(map)).unwrap(),
            r#"{"0":1,"2":1,"10":1,"4294967294":1,"b":1,"01":1,"4294967295":1,"-1":1,"a":1}"#
        );
    }

    #[test]
    fn strings_escaped_as_json_stringify_does() {
        let s = "q\"b\\s\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}\u{2028}é😀\u{FDD0}";
        assert_eq!(
            to_string(&json!({ "k\n": s })).unwrap(),
            "{\"k\\n\":\"q\\\"b\\\\s\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\u{2028}é😀\u{FDD0}\"}"
        );
    }

    #[test]
    fn too_deep_is_none_not_a_stack_overflow() {
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(to_string(&deep).is_some());
        assert_eq!(to_string(&json!([deep])), None);
    }
}
