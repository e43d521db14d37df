//! Values JSON has no words for (issue 13): tool arguments built in code may hold `NaN`, `±Infinity`, BigInts,
//! `undefined` (an array item or a hole), a `Uint8Array` or a reference back to an enclosing object, and pi-schema
//! validates them as JS values. The host writes each as a *marker*: a string of `MARK` and a kind letter (and, for
//! BigInts, the digits; for values it must hand back as they are, an index into its own list). The validator reads
//! markers through `special` and gives them pi-schema's types, names and coercions; the host turns markers that
//! coercion put into its result back into the values they stand for.
//!
//! `MARK` is a private-use code point outside the stand-ins of lone surrogates (`wtf.rs`): a caller string made of
//! `MARK` and one of these forms would read as a marker here. (The package validates with the JS twin,
//! `snippets/validate.js`, which reads the values themselves: the collision is this reference's alone.)

use serde_json::{Map, Value};

/// The first character of every marker.
pub const MARK: char = crate::core::text::VIEW_MARK;

/// What a marker stands for (BigInts and bytes borrow their text from the marker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special<'a> {
    NaN,
    Infinity,
    NegInfinity,
    /// The decimal digits (with a leading `-` when negative).
    BigInt(&'a str),
    Undefined,
    /// A `Uint8Array` (pi-schema's `bytes`): its bytes as decimal numbers, each after a comma.
    Bytes(&'a str),
    /// An object met again inside itself: an object whose members are not read again.
    Cycle,
}

/// The special value `v` is a marker of, if it is one.
pub(crate) fn special(v: &Value) -> Option<Special<'_>> {
    let Value::String(s) = v else {
        return None;
    };
    let rest = s.strip_prefix(MARK)?;
    let mut chars = rest.chars();
    let kind = chars.next()?;
    let tail = chars.as_str();
    let indexed = || !tail.is_empty() && tail.bytes().all(|c| c.is_ascii_digit());
    match kind {
        'n' if tail.is_empty() => Some(Special::NaN),
        '+' if tail.is_empty() => Some(Special::Infinity),
        '-' if tail.is_empty() => Some(Special::NegInfinity),
        'u' if tail.is_empty() => Some(Special::Undefined),
        'b' if is_integer_text(tail) => Some(Special::BigInt(tail)),
        'y' => {
            let (index, bytes) = tail.split_at_checked(tail.find(',').unwrap_or(tail.len())).unwrap_or((tail, ""));
            let is_byte = |b: &str| !b.is_empty() && b.len() <= 3 && b.bytes().all(|c| c.is_ascii_digit());
            let valid = !index.is_empty()
                && index.bytes().all(|c| c.is_ascii_digit())
                && (bytes.is_empty() || bytes.get(1..).is_some_and(|list| list.split(',').all(is_byte)));
            valid.then_some(Special::Bytes(bytes))
        }
        'c' if indexed() => Some(Special::Cycle),
        _ => None,
    }
}

/// `-?(0|[1-9][0-9]*)`.
fn is_integer_text(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) && (digits.len() == 1 || !digits.starts_with('0'))
}

/// The marker of a BigInt.
pub(crate) fn bigint(digits: &str) -> Value {
    Value::String(format!("{MARK}b{digits}"))
}

/// The marker of `undefined`.
pub(crate) fn undefined() -> Value {
    Value::String(format!("{MARK}u"))
}

/// A `Uint8Array`'s members as pi-schema's coercion copies them (`{ ...value }`): `"0"`, `"1"`, ... to the bytes.
pub(crate) fn bytes_members(bytes: &str) -> Map<String, Value> {
    let list = bytes.get(1..).unwrap_or_default();
    list.split(',')
        .filter(|b| !b.is_empty())
        .enumerate()
        .map(|(i, b)| (i.to_string(), Value::from(b.parse::<u64>().unwrap_or_default())))
        .collect()
}

/// Integer digits (`-?[0-9]+`) as a number when within the safe integers `±(2^53 - 1)`.
pub(crate) fn safe_integer(digits: &str) -> Option<f64> {
    let n: i64 = digits.parse().ok()?;
    (n.unsigned_abs() <= 9_007_199_254_740_991).then_some(n as f64)
}

/// How many bytes a `Bytes` marker holds.
pub(crate) fn bytes_len(bytes: &str) -> usize {
    bytes.bytes().filter(|c| *c == b',').count()
}

impl<'a> Special<'a> {
    /// The value as the number keywords compare it (`NaN` for non-numbers, which fails every bound).
    pub(crate) fn numeric(self) -> Option<f64> {
        match self {
            Special::NaN => Some(f64::NAN),
            Special::Infinity => Some(f64::INFINITY),
            Special::NegInfinity => Some(f64::NEG_INFINITY),
            // Our decimal parser: `str::parse::<f64>` would add core's (~12 KB).
            Special::BigInt(digits) => Some(super::parse_f64(digits).unwrap_or(f64::NAN)),
            _ => None,
        }
    }

    /// A BigInt's digits.
    pub(crate) fn digits(self) -> Option<&'a str> {
        match self {
            Special::BigInt(digits) => Some(digits),
            _ => None,
        }
    }

    /// Whether it has the `type` name (pi-schema's type checks).
    pub(crate) fn has_type(self, name: &str) -> bool {
        matches!(
            (name, self),
            ("bigint", Special::BigInt(_))
                | ("bytes", Special::Bytes(_))
                | ("undefined", Special::Undefined)
                | ("object", Special::Cycle)
        )
    }

    /// The name in `expected …, got <name>`.
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            Special::NaN => "NaN",
            Special::Infinity => "Infinity",
            Special::NegInfinity => "-Infinity",
            Special::BigInt(_) => "bigint",
            Special::Undefined => "undefined",
            Special::Bytes(_) => "bytes",
            Special::Cycle => "object",
        }
    }

    /// The value is a BigInt equal to `n`.
    pub(crate) fn is_bigint(self, n: i64) -> bool {
        matches!(self, Special::BigInt(d) if d.parse::<i64>() == Ok(n))
    }

    /// The value as a safe-integer number, for a BigInt in `±(2^53 - 1)` (TypeBox's TryNumber).
    pub(crate) fn safe_number(self) -> Option<f64> {
        safe_integer(self.digits()?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn m(rest: &str) -> Value {
        Value::String(format!("{MARK}{rest}"))
    }

    #[test]
    fn markers_read_back_as_their_kinds() {
        assert_eq!(special(&m("n")), Some(Special::NaN));
        assert_eq!(special(&m("+")), Some(Special::Infinity));
        assert_eq!(special(&m("-")), Some(Special::NegInfinity));
        assert_eq!(special(&m("u")), Some(Special::Undefined));
        assert_eq!(special(&m("b-12")), Some(Special::BigInt("-12")));
        assert_eq!(special(&m("b0")), Some(Special::BigInt("0")));
        assert_eq!(special(&m("y3")), Some(Special::Bytes("")));
        assert_eq!(special(&m("y3,1,255")), Some(Special::Bytes(",1,255")));
        assert_eq!(bytes_members(",1,255"), serde_json::json!({"0": 1, "1": 255}).as_object().cloned().unwrap());
        assert_eq!(special(&m("c0")), Some(Special::Cycle));
        assert_eq!(special(&bigint("7")), Some(Special::BigInt("7")));
        assert_eq!(special(&undefined()), Some(Special::Undefined));
    }

    #[test]
    fn other_strings_are_not_markers() {
        for text in ["", "n", "NaN", "\u{10F7FD}n"] {
            assert_eq!(special(&Value::String(text.to_string())), None, "{text:?}");
        }
        for rest in ["", "nn", "b", "b01", "b-", "b1.5", "y", "yx", "y1,", "y1,,2", "y1,1234", "c", "q", "u0"] {
            assert_eq!(special(&m(rest)), None, "{rest:?}");
        }
        assert_eq!(special(&Value::Null), None);
    }

    /// The validator on a view: `Ok(coerced)` (the view itself when nothing changed) or the error lines.
    fn run(schema: Value, view: Value) -> Result<Value, Vec<String>> {
        struct NoRegex;
        impl crate::core::validate::PatternMatcher for NoRegex {
            fn is_match(&self, _: &str, _: &str) -> Option<bool> {
                Some(true)
            }
        }
        match crate::core::validate::coerce_and_validate_view(&schema, &view, &NoRegex) {
            Ok(coerced) => Ok(coerced.unwrap_or(view)),
            Err(errors) => Err(errors.into_iter().map(|e| format!("{}: {}", e.path, e.message)).collect()),
        }
    }

    fn prop(t: Value) -> Value {
        serde_json::json!({"type": "object", "properties": {"n": t}})
    }

    #[test]
    fn the_validator_types_markers_as_pi_schema_does() {
        use serde_json::json;
        let got = |t: Value, v: Value| run(prop(t), json!({ "n": v }));
        // NaN and the infinities are `typeof` number yet no JSON Schema number; text for a string.
        assert_eq!(got(json!({"type": "number"}), m("n")), Err(vec!["n: expected number, got NaN".into()]));
        assert_eq!(got(json!({"type": "integer"}), m("-")), Err(vec!["n: expected integer, got -Infinity".into()]));
        assert_eq!(got(json!({"type": "string"}), m("n")), Ok(json!({"n": "NaN"})));
        assert_eq!(got(json!({"type": "string"}), m("+")), Ok(json!({"n": "Infinity"})));
        // With any number keyword NaN and the infinities fail; the explanation finds no bound, as pi-schema's.
        assert_eq!(got(json!({"maximum": 5}), m("n")), Err(vec!["root: invalid".into()]));
        assert_eq!(got(json!({"minimum": 5}), m("+")), Err(vec!["root: invalid".into()]));
        assert_eq!(got(json!({}), m("n")), Ok(json!({"n": m("n")})));
        // NaN stops a type list at its first type.
        assert_eq!(
            got(json!({"type": ["null", "string"]}), m("n")),
            Err(vec!["n: expected null or string, got NaN".into()])
        );
        // BigInts: numbers in the safe range, text, 0n/1n booleans; exact multiples.
        assert_eq!(got(json!({"type": "integer"}), m("b10")), Ok(json!({"n": 10})));
        assert_eq!(got(json!({"type": "string"}), m("b-10")), Ok(json!({"n": "-10"})));
        assert_eq!(got(json!({"type": "boolean"}), m("b1")), Ok(json!({"n": true})));
        assert_eq!(
            got(json!({"type": "integer"}), m("b1180591620717411303424")).unwrap_err(),
            vec!["n: expected integer, got bigint"]
        );
        assert_eq!(got(json!({"multipleOf": 0.1}), m("b0")), Err(vec!["n: expected a multiple of 0.1".into()]));
        assert_eq!(
            got(json!({"multipleOf": 3}), m("b1180591620717411303424")),
            Err(vec!["n: expected a multiple of 3".into()])
        );
        assert!(got(json!({"multipleOf": 2}), m("b1180591620717411303424")).is_ok());
        // pi-schema's own types, and coercion into them.
        assert_eq!(got(json!({"type": "bigint"}), json!(5.7)), Ok(json!({"n": m("b5")})));
        assert_eq!(got(json!({"type": "bigint"}), json!("12n")), Ok(json!({"n": m("b12")})));
        assert_eq!(got(json!({"type": "bigint"}), json!("-0")), Ok(json!({"n": m("b0")})));
        assert_eq!(got(json!({"type": "undefined"}), json!("null")), Ok(json!({"n": m("u")})));
        assert_eq!(
            got(json!({"type": "bytes", "minLength": 3}), m("y0,1,2")),
            Err(vec!["n: expected at least 3 bytes".into()])
        );
        assert_eq!(got(json!({"type": "object"}), m("y0,1")), Err(vec!["n: expected object, got bytes".into()]));
        // A Uint8Array whose members coercion changes becomes a plain object, as `{ ...bytes }`.
        let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert_eq!(got(strings, m("y0,7")), Ok(json!({"n": {"0": "7"}})));
        // undefined: absent when optional, then `missing`; an array item converts like null.
        assert_eq!(
            run(json!({"required": ["n"], "properties": {"n": {"type": "number"}}}), json!({"n": m("u")})),
            Err(vec!["n: missing".into()])
        );
        assert!(run(json!({"required": ["n"], "properties": {"n": {}}}), json!({"n": m("u")})).is_ok());
        assert_eq!(
            run(json!({"additionalProperties": false}), json!({"x": m("u")})),
            Err(vec!["x: unknown field".into()])
        );
        assert_eq!(run(json!({"items": {"type": "number"}}), json!([m("u")])), Ok(json!([0])));
        assert_eq!(run(json!({"items": {"type": "string"}}), json!([m("u")])), Ok(json!([""])));
        assert_eq!(
            run(json!({"items": {"type": "object"}}), json!([m("u")])),
            Err(vec!["0: expected object, got undefined".into()])
        );
        // A cycle cut short is an object.
        assert!(got(json!({"type": "object"}), m("c0")).is_ok());
    }

    #[test]
    fn numbers_names_and_types() {
        assert!(Special::NaN.numeric().unwrap().is_nan());
        assert_eq!(Special::BigInt("-5").numeric(), Some(-5.0));
        assert_eq!(Special::Undefined.numeric(), None);
        assert_eq!(Special::BigInt("9007199254740991").safe_number(), Some(9_007_199_254_740_991.0));
        assert_eq!(Special::BigInt("9007199254740992").safe_number(), None);
        assert_eq!(Special::BigInt("1180591620717411303424").safe_number(), None);
        assert!(Special::BigInt("1").is_bigint(1) && !Special::BigInt("2").is_bigint(1));
        assert!(Special::Cycle.has_type("object") && !Special::Bytes("").has_type("object"));
        assert!(!Special::NaN.has_type("number") && !Special::BigInt("1").has_type("integer"));
        assert_eq!(Special::NegInfinity.type_name(), "-Infinity");
    }
}
