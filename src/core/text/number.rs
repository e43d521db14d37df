//! Numbers as JS text: `js_number_to_string` (`String(n)`, the engine's own in the wasm build), and `json_number`, a
//! JSON number literal read as `serde_json` reads it: integers as `u64`/`i64` where they fit (`-0` as the float -0.0),
//! everything else as the nearest `f64`; `None` when the text is not a number literal or its value is beyond the
//! `f64` range. One definition for every parser of the crate (`wtf::parse`, the providers' JSON, the validator's
//! `Number(text)`), so none of them needs `serde_json`'s deserializer (issue 43: it and its float parser were in
//! both wasm modules for this alone).

use serde_json::{Number, Value};

/// JavaScript's `Number.prototype.toString()` for an `f64` (`1`, `1.5`, `1e+21`, `1e-7`, `NaN`, `-Infinity`). In the
/// wasm build the engine's own `String(n)` answers (issue 43: Rust's float formatting was in each wasm module for this
/// alone); natively, and as the definition the engine is held to, `reference_number_to_string` (tests: the cases
/// below and `tests/fixtures/number-strings.txt`, written by Node's `String`). A safe integer (a timestamp, a token
/// count: most numbers the library writes, a snapshot's thousands of them) is written here without asking anyone: its
/// digits are the integer's (-0 is `0`), and integer formatting is no float machinery.
pub fn js_number_to_string(n: f64) -> String {
    const SAFE: f64 = 9_007_199_254_740_991.0; // Number.MAX_SAFE_INTEGER: every such integer is an exact f64
    if n.fract() == 0.0 && n.abs() <= SAFE {
        return (n as i64).to_string();
    }
    #[cfg(target_arch = "wasm32")]
    {
        crate::engine_number_to_string(n)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        reference_number_to_string(n)
    }
}

/// `js_number_to_string` in Rust: the shortest round-trip digits, placed as ECMAScript's Number::toString places them.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
fn reference_number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_string();
    }
    if n == 0.0 {
        return "0".to_string();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let (digits, point) = shortest_digits(n.abs());
    let mut out = String::new();
    if n < 0.0 {
        out.push('-');
    }
    let k = digits.len() as i64;
    if k <= point && point <= 21 {
        out.push_str(&digits);
        for _ in k..point {
            out.push('0');
        }
    } else if 0 < point && point <= 21 {
        let (a, b) = digits.split_at(usize::try_from(point).unwrap_or(0).min(digits.len()));
        out.push_str(a);
        out.push('.');
        out.push_str(b);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        for _ in point..0 {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let e = point.saturating_sub(1);
        let mut chars = digits.chars();
        if let Some(first) = chars.next() {
            out.push(first);
        }
        let rest: String = chars.collect();
        if !rest.is_empty() {
            out.push('.');
            out.push_str(&rest);
        }
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.unsigned_abs().to_string());
    }
    out
}

/// The shortest round-trip decimal digits of a finite positive `x`, and the position of the decimal point relative
/// to them (`x = 0.d1d2… × 10^point`), as ECMAScript's Number::toString defines `n`.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
fn shortest_digits(x: f64) -> (String, i64) {
    // Rust's `{}` prints the shortest digits that round-trip, positionally ("0.00000012345", "1e21" in full): the
    // digits of `{:e}`, without its LowerExp code (`f64` Display is in the wasm anyway, for serde's messages).
    let s = x.to_string();
    let (int, fraction) = s.split_once('.').unwrap_or((s.as_str(), ""));
    let all = format!("{int}{fraction}");
    let significant = all.trim_start_matches('0');
    let leading_zeros = i64::try_from(all.len().saturating_sub(significant.len())).unwrap_or(0);
    let point = i64::try_from(int.len()).unwrap_or(0).saturating_sub(leading_zeros);
    (significant.trim_end_matches('0').to_string(), point)
}

/// Whether `x` is a finite number without fraction (`Number.isInteger`).
pub fn is_integer(x: f64) -> bool {
    x.is_finite() && x.trunc() == x
}

/// The `f64` of a JSON number (integers beyond 2^53 round, as `JSON.parse` does).
pub fn as_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

/// The number `JSON.parse` reads from `text` if it is exactly one JSON number literal, and finite: `json_number`'s
/// value as a float, without a `serde_json` value (the loop's module carries none, issue 43).
pub fn json_number_f64(text: &str) -> Option<f64> {
    number_literal(text)?;
    let x = literal_value(text);
    x.is_finite().then_some(x)
}

/// Whether `text` is exactly one JSON number literal (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`): `Some(true)`
/// for an integer (no fraction, no exponent), `Some(false)` for another number, `None` for anything else.
fn number_literal(text: &str) -> Option<bool> {
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
    (at == bytes.len()).then_some(integer)
}

/// The value of `text` if it is exactly one JSON number literal (see `number_literal`).
pub fn json_number(text: &str) -> Option<Value> {
    let integer = number_literal(text)?;
    let negative = text.starts_with('-');
    if integer {
        let magnitude = text.get(usize::from(negative)..).and_then(|m| m.parse::<u64>().ok());
        match (magnitude, negative) {
            (Some(m), false) => return Some(Value::Number(Number::from(m))),
            // As serde_json: -0 and magnitudes past i64::MIN are floats.
            (Some(m), true) => {
                let n = (m as i64).wrapping_neg();
                return Some(if n < 0 { Value::from(n) } else { Value::from(-(m as f64)) });
            }
            (None, _) => {}
        }
    }
    let x = literal_value(text);
    Number::from_f64(x).filter(|_| x.is_finite()).map(Value::Number)
}

/// The nearest `f64` of a JSON number literal (±Infinity past the range), correctly rounded. In the wasm build the
/// engine reads it (`Number(text)`: ECMAScript rounds a decimal literal to nearest, ties to even, as Rust's parser
/// does; issue 43: core's decimal parser and its power-of-five tables, ~15 KB, were in the loop's module for this
/// alone); natively Rust's `str::parse`, the definition `tests/js/number-literals.test.mjs` holds the engine to.
fn literal_value(text: &str) -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        crate::engine_parse_number(text)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        text.parse().unwrap_or(f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use proptest::prelude::*;

    /// The engine's `String(n)` for 2,398 doubles (scripts/number-strings.mjs ran Node's): the reference agrees on every
    /// one (the wasm build asks the engine itself).
    #[test]
    fn number_strings_match_the_engine() {
        let fixture = include_str!("../../../tests/fixtures/number-strings.txt");
        let mut checked = 0;
        for line in fixture.lines() {
            let (bits, want) = line.split_once(' ').unwrap();
            let x = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
            assert_eq!(reference_number_to_string(x), want, "bits {bits}");
            assert_eq!(js_number_to_string(x), want, "bits {bits} (with the safe-integer path)");
            checked += 1;
        }
        assert_eq!(checked, 2398);
    }

    /// The engine's `Number(text)` for 1,024 JSON number literals (scripts/number-strings.mjs ran Node's), the exact
    /// midpoints between neighbouring doubles among them: Rust's parser, `json_number`'s float natively, reads each
    /// to the same bits (the wasm build asks the engine: tests/js/number-literals.test.mjs).
    #[test]
    fn number_literals_match_the_engine() {
        let fixture = include_str!("../../../tests/fixtures/number-literals.txt");
        let mut checked = 0;
        for line in fixture.lines() {
            let (text, bits) = line.split_once(' ').unwrap();
            let want = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
            let got = json_number(text).map(|v| as_f64(v.as_number().unwrap()).to_bits());
            assert_eq!(got, want.is_finite().then_some(want.to_bits()), "{text}");
            assert_eq!(json_number_f64(text).map(f64::to_bits), got, "{text}: json_number_f64");
            checked += 1;
        }
        assert_eq!(checked, 1024);
        for text in ["", "-", "01", "1.", ".5", "1e", "+1", "1 ", "0x10", "1e400", "-1e400"] {
            assert_eq!(json_number_f64(text), None, "{text:?}");
        }
    }

    #[test]
    fn to_string_matches_javascript() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (0.5, "0.5"),
            (-1.5, "-1.5"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-6, "0.000001"),
            (0.0000012, "0.0000012"),
            (1.2345678901234568e21, "1.2345678901234568e+21"),
            (-2.5e-10, "-2.5e-10"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (2.5e22, "2.5e+22"),
            (0.1 + 0.2, "0.30000000000000004"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (100.0, "100"),
            (123.456, "123.456"),
            (9007199254740993.0, "9007199254740992"),
        ];
        for (x, want) in cases {
            assert_eq!(js_number_to_string(*x), *want, "{x}");
        }
    }

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
        fn shortest_digits_are_those_of_lower_exp(bits in proptest::num::u64::ANY) {
            let x = f64::from_bits(bits).abs();
            if x.is_finite() && x != 0.0 {
                let e = format!("{x:e}");
                let (mantissa, exponent) = e.split_once('e').unwrap();
                let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
                proptest::prop_assert_eq!(shortest_digits(x), (digits, exponent.parse::<i64>().unwrap() + 1));
            }
        }
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
