//! JavaScript number semantics the validator needs: `Number(text)`, `multipleOf` (and, from `core::text::number`,
//! `Number.prototype.toString`).
//! Pure functions on `f64`; nothing here may panic, whatever the input.

use crate::core::text::number::json_number;
pub use crate::core::text::number::{as_f64, is_integer, js_number_to_string};
use serde_json::{Number, Value};

/// A JSON value for a finite `x`: an integer when it has no fraction and fits, else a float. `None` for NaN/Infinity.
pub(crate) fn number_value(x: f64) -> Option<Value> {
    if x == 0.0 && x.is_sign_negative() {
        // `Math.trunc(-0.5)` and `+"-0"` are -0 in JS: kept as a float, which JSON text writes as 0.
        return Number::from_f64(x).map(Value::Number);
    }
    if is_integer(x) && x.abs() < 9_007_199_254_740_992.0 {
        // In range and without fraction: the cast is exact (and turns -0 into 0, which JSON prints as 0 anyway).
        return Some(Value::from(x as i64));
    }
    Number::from_f64(x).map(Value::Number)
}

/// Whitespace as ECMAScript's `String.prototype.trim` and `StringToNumber` strip it.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// `text.trim()` in JavaScript.
pub(crate) fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// JavaScript's `Number(text)` (also unary `+text`): NaN when the text is not a numeric literal.
pub(crate) fn js_string_to_number(text: &str) -> f64 {
    let s = js_trim(text);
    if s.is_empty() {
        return 0.0;
    }
    let bytes = s.as_bytes();
    if bytes.len() > 2 && bytes.first() == Some(&b'0') {
        let radix = match bytes.get(1) {
            Some(b'x' | b'X') => 16,
            Some(b'o' | b'O') => 8,
            Some(b'b' | b'B') => 2,
            _ => 0,
        };
        if radix != 0 {
            return s.get(2..).map_or(f64::NAN, |d| parse_radix(d, radix));
        }
    }
    let (sign, unsigned) = match bytes.first() {
        Some(b'+') => (1.0, s.get(1..).unwrap_or("")),
        Some(b'-') => (-1.0, s.get(1..).unwrap_or("")),
        _ => (1.0, s),
    };
    if unsigned == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_unsigned_decimal(unsigned) {
        return f64::NAN;
    }
    sign * unsigned_decimal_value(unsigned)
}

/// `text.parse::<f64>()` (Rust's grammar: a sign, then `inf`, `infinity` or `nan` in any case, or a decimal such
/// as `1.`, `.5`, `1e5`), with the same values, through [`unsigned_decimal_value`]: one float parser in the wasm.
pub(crate) fn parse_f64(text: &str) -> Option<f64> {
    let (sign, unsigned) = match text.as_bytes().first() {
        Some(b'+') => (1.0, text.get(1..)?),
        Some(b'-') => (-1.0, text.get(1..)?),
        _ => (1.0, text),
    };
    if unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity") {
        return Some(sign * f64::INFINITY);
    }
    if unsigned.eq_ignore_ascii_case("nan") {
        return Some(f64::NAN);
    }
    is_unsigned_decimal(unsigned).then(|| sign * unsigned_decimal_value(unsigned))
}

/// The value of a text [`is_unsigned_decimal`] accepts, correctly rounded to nearest, ties to even.
///
/// serde_json's parser (with `float_roundtrip`, correctly rounded) reads it once rewritten in JSON's grammar: no
/// leading zeros, a digit before the point, none after a point without fraction. It refuses only values beyond
/// `f64::MAX`, which are Infinity. `str::parse::<f64>` would add core's own decimal parser and tables (~12 KB).
fn unsigned_decimal_value(s: &str) -> f64 {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (s.get(..i).unwrap_or(""), s.get(i..).unwrap_or("")),
        None => (s, ""),
    };
    let (int, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let int = int.trim_start_matches('0');
    let mut json = String::with_capacity(s.len().saturating_add(1));
    json.push_str(if int.is_empty() { "0" } else { int });
    if !fraction.is_empty() {
        json.push('.');
        json.push_str(fraction);
    }
    json.push_str(exponent);
    // Read as a JSON literal: an integer up to u64::MAX converts exactly-rounded.
    json_number(&json).and_then(|v| v.as_f64()).unwrap_or(f64::INFINITY)
}

/// `StrUnsignedDecimalLiteral` without `Infinity`: `1`, `1.`, `.5`, `1.5e-3`.
fn is_unsigned_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_digits = count_digits(b, i);
    i = i.saturating_add(int_digits);
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i = i.saturating_add(1);
        frac_digits = count_digits(b, i);
        i = i.saturating_add(frac_digits);
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i = i.saturating_add(1);
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i = i.saturating_add(1);
        }
        let exp_digits = count_digits(b, i);
        if exp_digits == 0 {
            return false;
        }
        i = i.saturating_add(exp_digits);
    }
    i == b.len()
}

fn count_digits(b: &[u8], from: usize) -> usize {
    b.get(from..).map_or(0, |rest| rest.iter().take_while(|c| c.is_ascii_digit()).count())
}

/// Digits of a `0x`/`0o`/`0b` literal, correctly rounded; NaN when empty or with another character.
fn parse_radix(digits: &str, radix: u32) -> f64 {
    if digits.is_empty() {
        return f64::NAN;
    }
    let bits_per_digit: i32 = match radix {
        16 => 4,
        8 => 3,
        _ => 1,
    };
    let mut acc: u128 = 0;
    let mut sticky = false;
    let mut extra_digits: i32 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else {
            return f64::NAN;
        };
        if acc >> 120 == 0 {
            acc = (acc << bits_per_digit) | u128::from(d);
        } else {
            // 120+ significant bits are kept: the rest only decides rounding (a sticky bit) and the scale.
            sticky |= d != 0;
            extra_digits = extra_digits.saturating_add(1);
        }
    }
    if sticky {
        acc |= 1;
    }
    let scale = extra_digits.saturating_mul(bits_per_digit);
    // `as f64` rounds to nearest, ties to even; scaling by a power of two is exact (or overflows to Infinity).
    (acc as f64) * 2f64.powi(scale)
}

/// Whether `v` is a multiple of `d`, exactly for decimals (0.0075 is a multiple of 0.0001), as pi-schema decides it.
/// `isMultiple(v, d)` for a BigInt `v` (its decimal digits): exact, and false for a fractional or zero `d`.
pub(crate) fn is_bigint_multiple(digits: &str, d: f64) -> bool {
    if !is_integer(d) || d == 0.0 {
        return false;
    }
    let magnitude = digits.trim_start_matches('-');
    if d.abs() >= 1.7e38 {
        return magnitude == "0";
    }
    let d = d.abs() as u128;
    let rest = magnitude
        .bytes()
        .fold(0u128, |r, c| (r.saturating_mul(10).saturating_add(u128::from(c.saturating_sub(b'0')))) % d);
    rest == 0
}

pub(crate) fn is_multiple(v: f64, d: f64) -> bool {
    let q = v / d;
    if is_integer(q) {
        return true;
    }
    if !q.is_finite() {
        return v % d == 0.0;
    }
    let (Some((vc, ve)), Some((dc, de))) = (decimal(v), decimal(d)) else {
        return false;
    };
    if dc == 0 {
        return false;
    }
    if ve >= de {
        let k = ve.saturating_sub(de);
        mul_mod(vc.checked_rem(dc).unwrap_or(0), pow10_mod(k, dc), dc) == 0
    } else {
        let k = de.saturating_sub(ve);
        match pow10(k).and_then(|p| dc.checked_mul(p)) {
            Some(divisor) => vc.checked_rem(divisor) == Some(0),
            // A divisor beyond u128 is larger than any coefficient: only 0 is a multiple of it.
            None => vc == 0,
        }
    }
}

/// `|x|` as an integer coefficient and a power of ten, read from its JavaScript text.
fn decimal(x: f64) -> Option<(u128, i64)> {
    let text = js_number_to_string(x.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text.as_str(), "0"));
    let exponent: i64 = exponent.trim_start_matches('+').parse().ok()?;
    let fraction = mantissa.split_once('.').map_or(0, |(_, f)| f.len());
    let mut coefficient: u128 = 0;
    for c in mantissa.chars().filter(char::is_ascii_digit) {
        coefficient = coefficient.checked_mul(10)?.checked_add(u128::from(c.to_digit(10)?))?;
    }
    let fraction = i64::try_from(fraction).ok()?;
    Some((coefficient, exponent.saturating_sub(fraction)))
}

fn pow10(k: i64) -> Option<u128> {
    let k = u32::try_from(k).ok()?;
    10u128.checked_pow(k)
}

/// `(a * b) % m` without overflow, for `a, b < m`.
fn mul_mod(mut a: u128, mut b: u128, m: u128) -> u128 {
    if m == 0 {
        return 0;
    }
    let mut result: u128 = 0;
    a = a.checked_rem(m).unwrap_or(0);
    while b > 0 {
        if b & 1 == 1 {
            result = add_mod(result, a, m);
        }
        a = add_mod(a, a, m);
        b >>= 1;
    }
    result
}

fn add_mod(a: u128, b: u128, m: u128) -> u128 {
    // a, b < m < 2^127 here (coefficients have at most 21 digits), so the sum cannot overflow; wrapping keeps it safe.
    a.wrapping_add(b).checked_rem(m).unwrap_or(0)
}

fn pow10_mod(k: i64, m: u128) -> u128 {
    if m == 0 {
        return 0;
    }
    let mut result = 1u128.checked_rem(m).unwrap_or(0);
    let mut base = 10u128.checked_rem(m).unwrap_or(0);
    let mut e = u64::try_from(k).unwrap_or(0);
    while e > 0 {
        if e & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        e >>= 1;
    }
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn string_to_number_matches_javascript() {
        let cases: &[(&str, f64)] = &[
            ("", 0.0),
            ("   ", 0.0),
            (" 12 ", 12.0),
            ("0x10", 16.0),
            ("0X1f", 31.0),
            ("0o17", 15.0),
            ("0b101", 5.0),
            ("1e3", 1000.0),
            ("-1.5", -1.5),
            ("+2", 2.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("\u{a0}7\u{feff}", 7.0),
            ("1e400", f64::INFINITY),
        ];
        for (s, want) in cases {
            assert_eq!(js_string_to_number(s), *want, "{s:?}");
        }
        for bad in
            ["abc", "1a", "0x", "-0x10", "infinity", "inf", "NaN", "1e", ".", "+", "1_000", "12n", "0x1g", "1 2", "e5"]
        {
            assert!(js_string_to_number(bad).is_nan(), "{bad:?}");
        }
        assert_eq!(js_string_to_number("0x1fffffffffffff"), 9007199254740991.0);
        assert_eq!(js_string_to_number("0x20000000000001"), 9007199254740992.0);
        assert_eq!(js_string_to_number("0x100000000000000000000000000000000000000"), 2f64.powi(152));
    }

    /// Decimal texts Rust's parser reads (correctly rounded): the same `f64`, bit for bit, through serde_json.
    fn same_as_rust_parse(text: &str) {
        let want = text.parse::<f64>().ok();
        let got = parse_f64(text);
        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{text:?}");
        let lower = text.to_ascii_lowercase();
        if let Some(want) = want.filter(|_| !lower.contains("inf") && !lower.contains("nan")) {
            assert_eq!(js_string_to_number(text).to_bits(), want.to_bits(), "{text:?}");
        }
    }

    #[test]
    fn decimal_values_match_rust_parse() {
        for text in [
            "0",
            "-0",
            "+0",
            "00",
            "007",
            "0.5",
            ".5",
            "5.",
            "5.e3",
            ".5e-3",
            "1E+5",
            "1e-5",
            "000.000e0",
            "1e400",
            "-1e400",
            "1e-400",
            "0e99999999999999999999",
            "1e99999999999999999999",
            "1e-99999999999999999999",
            "9007199254740993",
            "9007199254740993.0000000000000000001",
            "2.2250738585072011e-308",
            "2.2250738585072012e-308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.9999999999999999999999999999999999999999999999999999999999999999999999",
            "123456789012345678901234567890",
            "0.1",
            "0.30000000000000004",
            "inf",
            "-Infinity",
            "NaN",
            "nan",
            "+inf",
            "",
            ".",
            "e5",
            "1e",
            "1e+",
            "+",
            "-",
            "1.2.3",
            "0x10",
            " 1",
            "1_0",
        ] {
            same_as_rust_parse(text);
        }
    }

    proptest::proptest! {
        #[test]
        fn decimal_values_match_rust_parse_random(
            int in "[0-9]{0,25}", fraction in proptest::option::of("[0-9]{0,25}"),
            exponent in proptest::option::of(-400i32..400), upper in proptest::bool::ANY,
        ) {
            let mut text = int;
            if let Some(f) = fraction {
                text.push('.');
                text.push_str(&f);
            }
            if let Some(e) = exponent {
                text.push_str(&format!("{}{e}", if upper { 'E' } else { 'e' }));
            }
            same_as_rust_parse(&text);
        }

        #[test]
        fn decimal_values_match_rust_parse_bits(bits in proptest::num::u64::ANY) {
            let x = f64::from_bits(bits);
            if x.is_finite() {
                same_as_rust_parse(&format!("{x:e}"));
                same_as_rust_parse(&format!("{x}"));
                same_as_rust_parse(&format!("{:.30e}", x));
            }
        }
    }

    #[test]
    fn multiple_of_is_exact_for_decimals() {
        assert!(is_multiple(0.0075, 0.0001));
        assert!(is_multiple(4.5, 1.5));
        assert!(is_multiple(0.3, 0.1));
        assert!(!is_multiple(0.35, 0.1));
        assert!(!is_multiple(1e-8, 0.1));
        assert!(is_multiple(10.0, 2.0));
        assert!(!is_multiple(7.0, 2.0));
        assert!(!is_multiple(1.0, 0.0));
        assert!(!is_multiple(0.0, 0.0));
        assert!(is_multiple(123456789.123, 0.001));
    }

    #[test]
    fn number_values() {
        assert_eq!(number_value(42.0).unwrap(), serde_json::json!(42));
        let zero = number_value(-0.0).unwrap();
        assert!(zero.as_f64().unwrap().is_sign_negative() && zero.as_f64() == Some(0.0));
        assert_eq!(number_value(1.5).unwrap(), serde_json::json!(1.5));
        assert!(number_value(f64::NAN).is_none());
    }
}
