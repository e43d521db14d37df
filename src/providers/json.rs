//! The parsed `data` of one provider stream event (P-6.3.2): a small JSON tree that borrows its
//! strings and number texts from the event's text, read by the wire formats' mappers. Built by a
//! strict fast parser that accepts only what `serde_json` accepts and yields the same values; any
//! other text (lone surrogates, deep nesting, out-of-range numbers, syntax errors) is left to the
//! `serde_json` → repair chain, whose `Value` is converted. Per event this costs a few vectors,
//! not a `serde_json::Map` (an index map with SipHash and a `String` per key) per object.
//! `Scanner` reads a wire format's commonest event, of one known shape, without building a tree.

#![deny(clippy::arithmetic_side_effects)]

use serde_json::{Map, Value};
use std::borrow::Cow;

/// One JSON value. Object members keep their order and duplicates (the last one counts).
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    /// The number's text: valid JSON number syntax, finite as an f64.
    Number(Cow<'a, str>),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// What a missing field reads as, where a mapper wants a value to look into.
pub static NULL: Json<'static> = Json::Null;

/// Nesting the fast parser takes on (deeper text goes to the fallback, which allows more).
const FAST_DEPTH: usize = 64;

/// Stream data as the driver reads it: the fast parser, else `JSON.parse` with the repair pass (P-6.3.2). `None`:
/// not JSON (`[DONE]`, garbage), for `StreamMapper::on_text`.
pub fn parse_data(text: &str) -> Option<Json<'_>> {
    if let Some(fast) = parse(text) {
        return Some(fast);
    }
    super::repair::parse_json_with_repair(text).ok().map(Json::from_value)
}

/// A JSON array's items: the fast parser, else `JSON.parse` for what it leaves (deep nesting), converted. `None`:
/// not JSON, or not an array.
pub fn parse_array(text: &str) -> Option<Vec<Json<'_>>> {
    match parse(text) {
        Some(Json::Array(items)) => Some(items),
        Some(_) => None,
        None => match super::repair::parse_json(text) {
            Ok(Value::Array(items)) => Some(items.into_iter().map(Json::from_value).collect()),
            _ => None,
        },
    }
}

/// Strict JSON (what `serde_json::from_str::<Value>` accepts, minus the rare cases above).
pub fn parse(text: &str) -> Option<Json<'_>> {
    let mut parser = Parser { text, bytes: text.as_bytes(), pos: 0 };
    let value = parser.value(FAST_DEPTH)?;
    parser.skip_whitespace();
    (parser.pos == text.len()).then_some(value)
}

/// Owned trees of `values` (tests build their messages as `Value`s).
#[cfg(test)]
pub fn from_values(values: &[Value]) -> Vec<Json<'static>> {
    values.iter().cloned().map(Json::from_value).collect()
}

impl<'a> Json<'a> {
    /// An owned tree with the same content as `value`.
    pub fn from_value(value: Value) -> Json<'static> {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Number(n) => Json::Number(Cow::Owned(n.to_string())),
            Value::String(s) => Json::String(Cow::Owned(s)),
            Value::Array(items) => Json::Array(items.into_iter().map(Json::from_value).collect()),
            Value::Object(map) => {
                Json::Object(map.into_iter().map(|(k, v)| (Cow::Owned(k), Json::from_value(v))).collect())
            }
        }
    }

    /// The `serde_json::Value` that parsing this value's JSON text gives.
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(text) => super::repair::json_number(text),
            Json::String(s) => Value::String(s.to_string()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(members) => {
                // Map::insert keeps a repeated key at its first position with the last value, as
                // serde_json's own parse does.
                let mut map = Map::new();
                for (key, value) in members {
                    map.insert(key.to_string(), value.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// The member `key` of an object (the last one when repeated).
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A string member, or "" when missing or not a string.
    pub fn str(&self, key: &str) -> &str {
        self.get(key).and_then(Json::as_str).unwrap_or("")
    }

    /// A message's `role`, or "".
    pub fn role(&self) -> &str {
        self.str("role")
    }

    /// A block's `type`, or "".
    pub fn kind(&self) -> &str {
        self.str("type")
    }

    /// A message's content blocks (empty for a string or missing content).
    pub fn blocks(&self) -> &[Json<'a>] {
        self.get("content").and_then(Json::as_array).unwrap_or(&[])
    }

    /// A finite number member (missing, null or not a number → `None`).
    pub fn num(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Json::as_f64).filter(|n| n.is_finite())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            // One decimal parser in the wasm (serde_json's): the same values as `str::parse`.
            Json::Number(text) => crate::core::validate::parse_f64(text),
            _ => None,
        }
    }

    /// As `Value::as_i64`: integers written without fraction or exponent that fit (`-0` is a float).
    pub fn as_i64(&self) -> Option<i64> {
        let text = self.integer_text()?;
        text.parse().ok().filter(|n| *n != 0 || !text.starts_with('-'))
    }

    /// As `Value::as_u64`.
    pub fn as_u64(&self) -> Option<u64> {
        self.integer_text()?.parse().ok()
    }

    fn integer_text(&self) -> Option<&str> {
        match self {
            Json::Number(text) if !text.contains(['.', 'e', 'E']) => Some(text),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Json::Array(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    /// JavaScript truthiness of the value.
    pub fn truthy(&self) -> bool {
        match self {
            Json::Null => false,
            Json::Bool(b) => *b,
            Json::Number(_) => self.as_f64().is_some_and(|f| f != 0.0),
            Json::String(s) => !s.is_empty(),
            _ => true,
        }
    }
}

/// The JSON text `serde_json` writes for the same value (`Value`'s `Display`).
impl std::fmt::Display for Json<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // Small unsigned integers print as written; serde_json rewrites anything else (1e2 → 100.0).
            Json::Number(text) if text.len() < 20 && text.bytes().all(|b| b.is_ascii_digit()) => f.write_str(text),
            other => other.to_value().fmt(f),
        }
    }
}

/// Reads one JSON text front to back for a caller that expects one exact shape (a wire format's
/// commonest event), building no tree. Each step accepts exactly what the tree parser accepts at
/// that point; any surprise (another member, another order, a value of another type) is `None`,
/// and the caller then parses the text in full. Nesting stays far below `FAST_DEPTH`.
/// Its steps are inlined into the one caller each has: as calls they were a third of the scan.
pub struct Scanner<'a>(Parser<'a>);

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Self {
        Scanner(Parser { text, bytes: text.as_bytes(), pos: 0 })
    }

    /// `{` and the name of its first member, `key`, with its `:`.
    #[inline(always)]
    pub fn open(&mut self, key: &str) -> Option<()> {
        self.0.eat(b'{')?;
        self.key(key)
    }

    /// `,` and the name of the next member, `key`, with its `:`.
    #[inline(always)]
    pub fn next(&mut self, key: &str) -> Option<()> {
        self.0.eat(b',')?;
        self.key(key)
    }

    #[inline(always)]
    fn key(&mut self, key: &str) -> Option<()> {
        self.0.eat(b'"')?;
        self.rest_of_string_is(key)?;
        self.0.eat(b':')
    }

    /// A string value equal to `expected`.
    #[inline(always)]
    pub fn string_is(&mut self, expected: &str) -> Option<()> {
        self.0.eat(b'"')?;
        self.rest_of_string_is(expected)
    }

    /// After an opening quote: the string equals `expected` (plain text: no quote, backslash or
    /// control character). Compared as written, the usual case, else decoded (escapes).
    #[inline(always)]
    fn rest_of_string_is(&mut self, expected: &str) -> Option<()> {
        let written = self.0.bytes.get(self.0.pos..)?;
        if written.starts_with(expected.as_bytes()) && written.get(expected.len()).is_some_and(|&b| b == b'"') {
            self.0.pos = self.0.pos.checked_add(expected.len())?.checked_add(1)?;
            return Some(());
        }
        (self.0.string()? == expected).then_some(())
    }

    /// The `}` after the last member.
    #[inline(always)]
    pub fn close(&mut self) -> Option<()> {
        self.0.eat(b'}')
    }

    /// A string value.
    #[inline(always)]
    pub fn string(&mut self) -> Option<Cow<'a, str>> {
        self.0.eat(b'"')?;
        self.0.string()
    }

    /// A number value's text (as `Json::Number` holds it).
    pub fn number(&mut self) -> Option<&'a str> {
        self.0.skip_whitespace();
        match self.0.number()? {
            Json::Number(Cow::Borrowed(text)) => Some(text),
            _ => None,
        }
    }

    /// Only whitespace is left.
    pub fn end(mut self) -> Option<()> {
        self.0.skip_whitespace();
        (self.0.pos == self.0.text.len()).then_some(())
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

// `peek` and `bump` run per byte: inlined even at opt-level "z" (as calls they were a fifth of the parse).
impl<'a> Parser<'a> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Whether the next byte is `byte` (an `Option` comparison is a call at opt-level "z").
    #[inline(always)]
    fn at(&self, byte: u8) -> bool {
        self.peek().is_some_and(|b| b == byte)
    }

    #[inline(always)]
    fn bump(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    /// Moves past the bytes before the first one that `stop` accepts.
    #[inline(always)]
    fn skip_until(&mut self, stop: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(|b| !stop(b)) {
            self.bump();
        }
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        self.skip_until(|b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r'));
    }

    #[inline(always)]
    fn eat(&mut self, byte: u8) -> Option<()> {
        // Compact JSON, the usual case, has no whitespace to skip.
        if !self.at(byte) {
            self.skip_whitespace();
        }
        self.at(byte).then(|| self.bump())
    }

    fn literal(&mut self, word: &str, value: Json<'a>) -> Option<Json<'a>> {
        let end = self.pos.checked_add(word.len())?;
        (self.text.get(self.pos..end) == Some(word)).then(|| {
            self.pos = end;
            value
        })
    }

    fn value(&mut self, depth: usize) -> Option<Json<'a>> {
        self.skip_whitespace();
        match self.peek()? {
            b'{' => {
                self.bump();
                let depth = depth.checked_sub(1)?;
                if self.eat(b'}').is_some() {
                    return Some(Json::Object(Vec::new()));
                }
                // Provider events are small objects: one allocation for most of them.
                let mut members = Vec::with_capacity(8);
                loop {
                    self.eat(b'"')?;
                    let key = self.string()?;
                    self.eat(b':')?;
                    members.push((key, self.value(depth)?));
                    self.skip_whitespace();
                    match self.peek()? {
                        b',' => self.bump(),
                        b'}' => break,
                        _ => return None,
                    }
                }
                self.bump();
                Some(Json::Object(members))
            }
            b'[' => {
                self.bump();
                let depth = depth.checked_sub(1)?;
                let mut items = Vec::new();
                if self.eat(b']').is_some() {
                    return Some(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth)?);
                    self.skip_whitespace();
                    match self.peek()? {
                        b',' => self.bump(),
                        b']' => break,
                        _ => return None,
                    }
                }
                self.bump();
                Some(Json::Array(items))
            }
            b'"' => {
                self.bump();
                self.string().map(Json::String)
            }
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        self.skip_until(|b| !b.is_ascii_digit());
        self.pos.saturating_sub(start)
    }

    fn number(&mut self) -> Option<Json<'a>> {
        let start = self.pos;
        if self.at(b'-') {
            self.bump();
        }
        match self.peek()? {
            b'0' => self.bump(),
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        let mut plain = true;
        if self.at(b'.') {
            self.bump();
            plain = false;
            (self.digits() > 0).then_some(())?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.bump();
            plain = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.bump();
            }
            (self.digits() > 0).then_some(())?;
        }
        let text = self.text.get(start..self.pos)?;
        // Beyond the f64 range serde_json refuses the text (and the repair parser says null).
        if (!plain || text.len() > 18) && !crate::core::validate::parse_f64(text).is_some_and(f64::is_finite) {
            return None;
        }
        Some(Json::Number(Cow::Borrowed(text)))
    }

    /// The rest of a string after its opening quote: borrowed unless it has escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let special = |b: u8| matches!(b, b'"' | b'\\' | 0..=0x1f);
        let start = self.pos;
        self.skip_until(special);
        if self.peek()? == b'"' {
            let text = self.text.get(start..self.pos)?;
            self.bump();
            return Some(Cow::Borrowed(text));
        }
        let mut out = String::new();
        let mut run = start;
        loop {
            self.skip_until(special);
            out.push_str(self.text.get(run..self.pos)?);
            match self.peek()? {
                b'"' => {
                    self.bump();
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    self.bump();
                    self.escape(&mut out)?;
                    run = self.pos;
                }
                _ => return None,
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Option<()> {
        let byte = self.peek()?;
        self.bump();
        let c = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                match unit {
                    0xD800..=0xDBFF => {
                        // Only a pair is a character here; a lone half goes to the fallback (U+FFFD).
                        if self.peek() != Some(b'\\') {
                            return None;
                        }
                        self.bump();
                        if self.peek() != Some(b'u') {
                            return None;
                        }
                        self.bump();
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        super::repair::combine_surrogates(unit, low)
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => char::from_u32(u32::from(unit))?,
                }
            }
            _ => return None,
        };
        out.push(c);
        Some(())
    }

    fn hex4(&mut self) -> Option<u16> {
        let end = self.pos.checked_add(4)?;
        let digits = self.text.as_bytes().get(self.pos..end)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        self.pos = end;
        Some(digits.iter().fold(0u16, |n, d| (n << 4) | super::repair::hex_value(*d)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the fast parser gives must be what serde_json gives; what it refuses, serde_json or
    /// the repair parser must decide.
    fn check(text: &str) {
        match parse(text) {
            Some(fast) => {
                let serde = serde_json::from_str::<Value>(text).unwrap_or_else(|e| panic!("{text:?}: serde says {e}"));
                assert_eq!(fast.to_value(), serde, "{text:?}");
                assert_eq!(fast.to_string(), serde.to_string(), "{text:?}");
                assert_eq!(Json::from_value(serde.clone()).to_value(), serde, "{text:?}");
            }
            None => {
                if let Ok(value) = serde_json::from_str::<Value>(text) {
                    // Allowed refusals only.
                    let deep = text.matches(['[', '{']).count() > FAST_DEPTH;
                    assert!(deep || text.contains("\\u"), "{text:?} refused, serde gives {value}");
                }
            }
        }
    }

    #[test]
    fn p_6_3_2_fast_parse_agrees_with_serde_json() {
        for text in [
            r#"{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#,
            r#" { "a" : [ 1 , -2.5e3 , true , false , null , "x\"y\\z\/\b\f\n\r\t\u00e9\ud83d\ude00" ] } "#,
            r#"{"a":1,"a":2,"b":{"a":3}}"#,
            r#"[0, -0, 1e400, 18446744073709551616, 9223372036854775807, -9223372036854775808, 0.1]"#,
            r#"{"n": 01}"#,
            r#"[1e-400, -1e-400, 5e-324, 1.7976931348623157e308, 2e308, 123456789012345678901234567890]"#,
            r#"{"n": 1.}"#,
            r#"{"n": -}"#,
            r#"{"s": "\ud800"}"#,
            r#"{"s": "\udc00x"}"#,
            r#"{"s": "\u12"}"#,
            "{\"s\": \"tab\there\"}",
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            r#"[1,2"#,
            "",
            "[DONE]",
            "nul",
            "truex",
        ] {
            check(text);
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).is_none());
        // Too deep for serde_json too: the repair parser's value.
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        assert_eq!(parse_data(&deep).map(|j| j.to_value()), super::super::repair::parse_json_with_repair(&deep).ok());
    }

    #[test]
    fn request_messages_parse_as_serde_json_reads_them() {
        // The projection's text (JSON.stringify of the read fields): the fast parser, borrowed strings.
        let text = r#"[{"role":"user","content":"a \"quoted\" word","timestamp":1},{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":"\ufdd0v0.2\ufdd1"}],"usage":{"input":1e+21,"output":0.1},"stopReason":"toolUse","timestamp":2}]"#;
        let items = parse_array(text).unwrap();
        let serde: Vec<Value> = serde_json::from_str(text).unwrap();
        assert_eq!(items.iter().map(Json::to_value).collect::<Vec<_>>(), serde);
        assert!(matches!(items[0].get("role"), Some(Json::String(Cow::Borrowed("user")))));
        // Deeper than the fast parser goes: JSON.parse's value (`repair::parse_json`), converted.
        let deep = format!(
            r#"[{{"role":"user","content":[{{"type":"text","text":{}1{}}}]}}]"#,
            "[".repeat(80),
            "]".repeat(80)
        );
        assert!(parse(&deep).is_none());
        let items = parse_array(&deep).unwrap();
        assert_eq!(
            items.iter().map(Json::to_value).collect::<Vec<_>>(),
            serde_json::from_str::<Vec<Value>>(&deep).unwrap()
        );
        // Not an array, or not JSON.
        assert!(parse_array(r#"{"role":"user"}"#).is_none());
        assert!(parse_array("[1,").is_none());
        // A lone surrogate (the projection marks such strings, so its text never holds one) reads as JSON.parse reads
        // it: the crate's stand-in for it (`core::text::wtf`).
        let lone = parse_array(r#"["\ud800"]"#).unwrap();
        assert_eq!(lone[0].as_str(), Some("\u{10F800}"));
    }

    #[test]
    fn p_6_3_2_numbers_read_as_serde_json_reads_them() {
        for text in ["0", "-0", "7", "-7", "1.5", "1e2", "18446744073709551615", "18446744073709551616", "-1"] {
            let fast = parse(text).unwrap();
            let serde: Value = serde_json::from_str(text).unwrap();
            assert_eq!(fast.as_i64(), serde.as_i64(), "{text}");
            assert_eq!(fast.as_u64(), serde.as_u64(), "{text}");
            assert_eq!(fast.as_f64(), serde.as_f64(), "{text}");
        }
    }

    #[test]
    fn p_6_3_2_fallback_values_are_kept() {
        // A lone surrogate: serde_json refuses, JSON.parse keeps it (and so do we, encoded).
        let data = parse_data(r#"{"s":"a\ud800b"}"#).unwrap();
        assert_eq!(crate::core::text::wtf::to_utf16(data.str("s")), [0x61, 0xD800, 0x62]);
        assert!(parse_data("[DONE]").is_none());
    }

    use crate::providers::repair::tests::arb_json;

    /// `{"k":<string>,"n":<number>}` through the Scanner.
    fn scan_pair(text: &str) -> Option<(Cow<'_, str>, &str)> {
        let mut scan = Scanner::new(text);
        scan.open("k")?;
        let k = scan.string()?;
        scan.next("n")?;
        let n = scan.number()?;
        scan.close()?;
        scan.end()?;
        Some((k, n))
    }

    /// Texts near `{"k":"…","n":…}`: escaped and other names, strings, numbers, whitespace, order.
    fn near_pair() -> impl Strategy<Value = String> {
        let ws = proptest::sample::select(vec!["", "", " ", "\n\t"]);
        let name = proptest::sample::select(vec![r#""k""#, r#""k""#, r#""k""#, r#""\u006b""#, r#""kk""#, r#""n""#]);
        let string = prop_oneof![
            "[a-z\"\\\\é\u{1F600}\t]{0,4}".prop_map(|s| serde_json::to_string(&s).unwrap()),
            proptest::sample::select(vec![r#""\ud800""#, r#""\u00e9\/""#, r#""open"#, "1"]).prop_map(str::to_string),
        ];
        let number = proptest::sample::select(vec!["0", "-0", "12", "-1.5e3", "01", "1.", "-", "1e400", "\"1\""]);
        let tail = proptest::sample::select(vec!["", "", "", "", "x", "}"]);
        (ws, name, string, number, proptest::bool::weighted(0.2), tail).prop_map(
            |(w, name, string, number, swap, tail)| {
                let (first, second) = (format!("{w}{name}{w}:{w}{string}"), format!("\"n\":{w}{number}{w}"));
                let body = if swap { format!("{second},{first}") } else { format!("{first},{second}") };
                format!("{w}{{{body}}}{w}{tail}")
            },
        )
    }

    proptest! {
        #[test]
        fn p_6_3_2_fast_parse_equals_serde_json_on_valid_json(value in arb_json(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&value).unwrap() } else { value.to_string() };
            let fast = parse(&text);
            prop_assert!(fast.is_some(), "{}", text);
            prop_assert_eq!(fast.unwrap().to_value(), value);
        }

        #[test]
        fn p_6_3_2_scanner_agrees_with_the_tree_parser(text in near_pair()) {
            let tree = parse(&text);
            let member = |key: &str, value: Json<'static>| (Cow::Owned(key.to_string()), value);
            match scan_pair(&text) {
                Some((k, n)) => {
                    let expected = Json::Object(vec![
                        member("k", Json::String(Cow::Owned(k.into_owned()))),
                        member("n", Json::Number(Cow::Owned(n.to_string()))),
                    ]);
                    prop_assert_eq!(tree, Some(expected), "{}", text);
                }
                // Refused: the text is not that shape (or not JSON).
                None => {
                    let shape = match &tree {
                        Some(Json::Object(members)) => matches!(
                            members.as_slice(),
                            [(k, Json::String(_)), (n, Json::Number(_))] if k == "k" && n == "n"
                        ),
                        _ => false,
                    };
                    prop_assert!(!shape, "{}", text);
                }
            }
        }

        #[test]
        fn p_6_3_2_fast_parse_never_disagrees(text in "[\\[\\]{}\",:0-9eE.+\\- a-z\\\\]{0,24}") {
            check(&text);
        }
    }
}
