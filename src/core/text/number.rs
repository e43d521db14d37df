//! A JSON number literal read as `serde_json` reads it: integers as `u64`/`i64` where they fit (`-0` as the float
//! -0.0), everything else as the nearest `f64`; `None` when the text is not a number literal or its value is beyond
//! the `f64` range. One definition for every parser of the crate (`wtf::parse`, the providers' JSON, the validator's
//! `Number(text)`), so none of them needs `serde_json`'s deserializer (issue 43: it and its float parser were in
//! both wasm modules for this alone).

use serde_json::{Number, Value};

/// The value of `text` if it is exactly one JSON number literal (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
pub fn json_number(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let digits =
        |from: usize| bytes.get(from..).map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_digit()).count());
    let negative = bytes.first() == Some(&b'-');
    let mut at = usize::from(negative);
    let int = digits(at);
    if int == 0 || (int > 1 && bytes.get(at) == Some(&b'0')) {
        return None;
    }
    at += int;
    let mut integer = true;
    if bytes.get(at) == Some(&b'.') {
        let fraction = digits(at + 1);
        if fraction == 0 {
            return None;
        }
        at += 1 + fraction;
        integer = false;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exponent = digits(at);
        if exponent == 0 {
            return None;
        }
        at += exponent;
        integer = false;
    }
    if at != bytes.len() {
        return None;
    }
    if integer {
        let magnitude = text.get(usize::from(negative)..).and_then(|m| m.parse::<u64>().ok());
        match (magnitude, negative) {
            (Some(m), false) => return Some(Value::Number(Number::from(m))),
            // As serde_json: -0 and magnitudes past i64::MIN are floats.
            (Some(m), true) => {
                let n = (m as i64).wrapping_neg();
                return Number::from_f64(-(m as f64))
                    .map(Value::Number)
                    .filter(|_| n >= 0)
                    .or(Some(Value::Number(Number::from(n))));
            }
            (None, _) => {}
        }
    }
    let x: f64 = text.parse().ok()?;
    Number::from_f64(x).filter(|_| x.is_finite()).map(Value::Number)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use proptest::prelude::*;

    fn serde(text: &str) -> Option<Value> {
        serde_json::from_str::<Value>(text).ok().filter(Value::is_number)
    }

    /// (serde_json also skips whitespace around the literal; the callers hand over the literal alone.)
    #[test]
    fn reads_numbers_as_serde_json_does() {
        for text in [
            "0",
            "-0",
            "1",
            "-1",
            "0.5",
            "-0.0",
            "1e2",
            "1E+2",
            "1e-2",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "9007199254740993",
            "1e400",
            "-1e400",
            "1e-400",
            "0.1",
            "2.2250738585072011e-308",
            "00",
            "01",
            "-",
            "+1",
            "1.",
            ".5",
            "1e",
            "1e+",
            "--1",
            "1.5.5",
            "",
            "0x10",
            "Infinity",
            "NaN",
            "1_000",
            "١",
        ] {
            let ours = json_number(text);
            assert_eq!(ours, serde(text), "{text:?}");
            if let (Some(Value::Number(a)), Some(Value::Number(b))) = (&ours, &serde(text)) {
                assert_eq!(a.as_f64().map(f64::to_bits), b.as_f64().map(f64::to_bits), "{text:?}: the sign of zero");
            }
        }
    }

    proptest! {
        #[test]
        fn any_literal_reads_as_serde_json_reads_it(
            sign in proptest::bool::ANY, int in "(0|[1-9][0-9]{0,24})", fraction in proptest::option::of("[0-9]{1,25}"),
            exponent in proptest::option::of(("[eE]", "[+-]?", 0u32..420)),
        ) {
            let mut text = format!("{}{int}", if sign { "-" } else { "" });
            if let Some(f) = fraction {
                text.push('.');
                text.push_str(&f);
            }
            if let Some((e, s, n)) = exponent {
                text.push_str(&format!("{e}{s}{n}"));
            }
            let (ours, theirs) = (json_number(&text), serde(&text));
            prop_assert_eq!(&ours, &theirs, "{}", text);
            if let (Some(Value::Number(a)), Some(Value::Number(b))) = (&ours, &theirs) {
                prop_assert_eq!(a.as_f64().map(f64::to_bits), b.as_f64().map(f64::to_bits), "{}", text);
            }
        }

        #[test]
        fn any_text_is_a_number_exactly_when_serde_json_says_so(text in "[-+0-9.eE]{0,12}") {
            prop_assert_eq!(json_number(&text), serde(&text));
        }
    }
}
