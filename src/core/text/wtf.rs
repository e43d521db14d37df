//! JS strings on the Rust side without loss: a lone UTF-16 surrogate (which a Rust `String` cannot hold) is kept as
//! one stand-in code point, and JSON text (as `JSON.stringify` writes it) parses into a `serde_json::Value` and back
//! without serde_json's recursion limit, its refusal of `\ud800`, or a recursive `Drop` (issue 13).
//!
//! The stand-ins are U+10F800–U+10FFFF (the last 2,048 code points of plane 16, private use): surrogate `0xD800 + k`
//! is `U+10F800 + k`. One code point per surrogate keeps JSON Schema lengths (code points, where pi-schema counts an
//! unpaired surrogate as one) and equality exact. The cost: a string that really holds one of those private-use
//! characters reads as holding the lone surrogate.

use serde_json::{Map, Value};

use super::STAND_IN_BASE;
const SURROGATE_BASE: u32 = 0xD800;

/// The stand-in of a UTF-16 unit that is a surrogate (`0xD800..=0xDFFF`).
pub fn stand_in(unit: u16) -> Option<char> {
    let unit = u32::from(unit);
    if !(0xD800..=0xDFFF).contains(&unit) {
        return None;
    }
    char::from_u32(STAND_IN_BASE + (unit - SURROGATE_BASE))
}

/// The lone surrogate a stand-in stands for.
pub fn surrogate_of(c: char) -> Option<u16> {
    let c = u32::from(c);
    if c < STAND_IN_BASE {
        return None;
    }
    u16::try_from(c - STAND_IN_BASE + SURROGATE_BASE).ok()
}

/// `s.length` in JS: UTF-16 units, a stand-in counting as the one lone surrogate it is.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(|c| if surrogate_of(c).is_some() { 1 } else { c.len_utf16() }).sum()
}

/// Whether `s` holds a stand-in (a cheap byte test: every stand-in is `F4 8F [A0-BF] ..` in UTF-8).
pub fn has_stand_in(s: &str) -> bool {
    let b = s.as_bytes();
    // `contains` on bytes is a memchr: the usual text, with no 0xF4 at all, costs one fast scan.
    b.contains(&0xF4) && b.windows(3).any(|w| matches!(w, [0xF4, 0x8F, x] if *x >= 0xA0))
}

/// `s` as the UTF-16 units of the JS string it stands for.
pub fn to_utf16(s: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match surrogate_of(c) {
            Some(unit) => out.push(unit),
            None => {
                let mut buf = [0u16; 2];
                out.extend_from_slice(c.encode_utf16(&mut buf));
            }
        }
    }
    out
}

/// A JS string's UTF-16 units as a Rust string, lone surrogates as stand-ins.
pub fn from_utf16(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok(c) => out.push(c),
            Err(e) => out.extend(stand_in(e.unpaired_surrogate())),
        }
    }
    out
}

/// Drops a value without recursion: serde_json's own `Drop` recurses once per level, which a deep value
/// (a tool argument nested 100,000 levels, as JS holds it) would overflow.
pub fn drop_deep(value: Value) {
    let mut stack = match value {
        Value::Array(items) => items,
        Value::Object(map) => map.into_iter().map(|(_, v)| v).collect(),
        _ => return,
    };
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// A container being filled while parsing: the items so far, or the members so far and the key of the next one.
enum Open {
    Array(Vec<Value>),
    Object(Map<String, Value>, String),
}

struct Reader<'t> {
    text: &'t str,
    at: usize,
}

/// Parses JSON text (`JSON.parse`'s grammar) into a value, without recursion and at any depth. Escaped lone
/// surrogates (`JSON.stringify` writes them as `\ud800`) become stand-ins; duplicate keys keep the last value at the
/// first key's place, as `JSON.parse` does. `Err` describes the first syntax error.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut r = Reader { text, at: 0 };
    let mut open: Vec<Open> = Vec::new();
    loop {
        // A value, or the start of a non-empty container (then the loop reads its first item).
        r.space();
        let mut value = match r.peek() {
            Some(b'[') => {
                r.at += 1;
                r.space();
                if r.eat(b']') {
                    Value::Array(Vec::new())
                } else {
                    open.push(Open::Array(Vec::new()));
                    continue;
                }
            }
            Some(b'{') => {
                r.at += 1;
                r.space();
                if r.eat(b'}') {
                    Value::Object(Map::new())
                } else {
                    let key = r.key()?;
                    open.push(Open::Object(Map::new(), key));
                    continue;
                }
            }
            Some(b'"') => Value::String(r.string()?),
            Some(b't') => r.word("true", Value::Bool(true))?,
            Some(b'f') => r.word("false", Value::Bool(false))?,
            Some(b'n') => r.word("null", Value::Null)?,
            _ => r.number()?,
        };
        // Hand the value to its container; close every container that ends here.
        loop {
            r.space();
            match open.last_mut() {
                None => {
                    return if r.at == r.text.len() { Ok(value) } else { Err(r.unexpected()) };
                }
                Some(Open::Array(items)) => {
                    items.push(value);
                    if r.eat(b',') {
                        break;
                    }
                    if !r.eat(b']') {
                        return Err(r.unexpected());
                    }
                }
                Some(Open::Object(map, key)) => {
                    map.insert(std::mem::take(key), value);
                    if r.eat(b',') {
                        r.space();
                        *key = r.key()?;
                        break;
                    }
                    if !r.eat(b'}') {
                        return Err(r.unexpected());
                    }
                }
            }
            value = match open.pop() {
                Some(Open::Array(items)) => Value::Array(items),
                Some(Open::Object(map, _)) => Value::Object(map),
                None => return Err(r.unexpected()),
            };
        }
    }
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn unexpected(&self) -> String {
        match self.text.get(self.at..).and_then(|rest| rest.chars().next()) {
            Some(c) => format!("Unexpected token '{c}' at position {}", self.at),
            None => "Unexpected end of JSON input".to_string(),
        }
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.text.get(self.at..).is_some_and(|rest| rest.starts_with(word)) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.unexpected())
        }
    }

    /// A member's key and the `:` after it.
    fn key(&mut self) -> Result<String, String> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let key = self.string()?;
        self.space();
        if !self.eat(b':') {
            return Err(self.unexpected());
        }
        Ok(key)
    }

    /// A number token, read as serde_json reads it (so numbers compare and print as before).
    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.at += 1;
        }
        let token = self.text.get(start..self.at).unwrap_or_default();
        match super::number::json_number(token) {
            Some(n) => Ok(n),
            _ => {
                self.at = start;
                Err(self.unexpected())
            }
        }
    }

    /// A string literal (at its opening quote).
    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let bytes = self.text.as_bytes();
        let start = self.at;
        // Most strings have no escape: one slice.
        while let Some(&b) = bytes.get(self.at) {
            match b {
                b'"' => {
                    let s = self.text.get(start..self.at).unwrap_or_default().to_string();
                    self.at += 1;
                    return Ok(s);
                }
                b'\\' => break,
                0..=0x1F => return Err(self.unexpected()),
                _ => self.at += 1,
            }
        }
        let mut out = self.text.get(start..self.at).unwrap_or_default().to_string();
        loop {
            let Some(c) = self.text.get(self.at..).and_then(|rest| rest.chars().next()) else {
                return Err("Unterminated string in JSON".to_string());
            };
            match c {
                '"' => {
                    self.at += 1;
                    return Ok(out);
                }
                '\\' => {
                    self.at += 1;
                    self.escape(&mut out)?;
                }
                '\u{0}'..='\u{1F}' => return Err(self.unexpected()),
                c => {
                    out.push(c);
                    self.at += c.len_utf8();
                }
            }
        }
    }

    /// One escape (after its backslash), appended to `out`.
    fn escape(&mut self, out: &mut String) -> Result<(), String> {
        let Some(b) = self.peek() else {
            return Err("Unterminated string in JSON".to_string());
        };
        self.at += 1;
        let c = match b {
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
                if (0xD800..=0xDBFF).contains(&unit) && self.text.get(self.at..).is_some_and(|r| r.starts_with("\\u")) {
                    let back = self.at;
                    self.at += 2;
                    let low = self.hex4()?;
                    if (0xDC00..=0xDFFF).contains(&low) {
                        let pair = [unit, low];
                        out.extend(char::decode_utf16(pair).filter_map(Result::ok));
                        return Ok(());
                    }
                    self.at = back; // not a pair: the next escape is read on its own
                }
                match char::from_u32(u32::from(unit)).or_else(|| stand_in(unit)) {
                    Some(c) => c,
                    None => return Err(self.unexpected()),
                }
            }
            _ => {
                self.at -= 1;
                return Err(self.unexpected());
            }
        };
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u16, String> {
        let digits = self.text.get(self.at..self.at + 4).ok_or_else(|| "Bad Unicode escape in JSON".to_string())?;
        let unit = u16::from_str_radix(digits, 16).map_err(|_| "Bad Unicode escape in JSON".to_string())?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("Bad Unicode escape in JSON".to_string());
        }
        self.at += 4;
        Ok(unit)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::core::text::json::js_json_stringify;
    use serde_json::json;

    #[test]
    fn utf16_len_counts_a_stand_in_as_one_unit() {
        let lone = parse(r#""/\udfff""#).unwrap();
        assert_eq!(utf16_len(lone.as_str().unwrap()), 2);
        assert_eq!(utf16_len("/é"), 2);
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len(""), 0);
    }

    #[test]
    fn parses_what_serde_json_parses() {
        for text in [
            r#"{"b":1.0,"2":[1e21,0.5,-0,-0.0,123456789012345678901],"a":"x\"\n\u0001é\/","1":{},"c":[],"d":null}"#,
            "  [ true , false , null , \"\" , { } , [ ] ]  ",
            "-12.5e-3",
            "\"\\ud83d\\ude00 \u{1F600}\"",
        ] {
            assert_eq!(parse(text).unwrap(), serde_json::from_str::<Value>(text).unwrap(), "{text}");
        }
    }

    #[test]
    fn lone_surrogates_become_stand_ins_and_print_back() {
        let text = r#"{"k\udbff":["x\ud800","\udc00\ud83d","\ud83d\ude00","\ud800\ud800\udc00"]}"#;
        let v = parse(text).unwrap();
        let key = v.as_object().unwrap().keys().next().unwrap().clone();
        assert_eq!(key, "k\u{10FBFF}");
        assert_eq!(v["k\u{10FBFF}"][0], json!("x\u{10F800}"));
        assert_eq!(v["k\u{10FBFF}"][1], json!("\u{10FC00}\u{10F83D}"));
        assert_eq!(v["k\u{10FBFF}"][2], json!("\u{1F600}"));
        assert_eq!(v["k\u{10FBFF}"][3], json!("\u{10F800}\u{10000}"));
        // As `JSON.stringify` writes it: lone surrogates escaped, pairs as the character.
        assert_eq!(
            js_json_stringify(&v),
            "{\"k\\udbff\":[\"x\\ud800\",\"\\udc00\\ud83d\",\"\u{1F600}\",\"\\ud800\u{10000}\"]}"
        );
        assert_eq!(to_utf16("x\u{10F800}\u{1F600}"), vec![0x78, 0xD800, 0xD83D, 0xDE00]);
        assert_eq!(from_utf16(&[0x78, 0xD800, 0xD83D, 0xDE00, 0xDFFF]), "x\u{10F800}\u{1F600}\u{10FFFF}");
        assert!(has_stand_in("a\u{10F800}") && !has_stand_in("a\u{10F7FF}\u{1F600}"));
    }

    #[test]
    fn any_depth_parses_prints_and_drops_without_recursion() {
        let depth = 200_000;
        let text = format!("{}1{}", "[{\"a\":".repeat(depth), "}]".repeat(depth));
        let v = parse(&text).unwrap();
        assert_eq!(js_json_stringify(&v), text);
        drop_deep(v);
    }

    #[test]
    fn syntax_errors_are_errors() {
        for text in
            ["", "[", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "tru", "\"a", "\"\\x\"", "\"\\u12\"", "1 2", "[1]]", "-"]
        {
            assert!(parse(text).is_err(), "{text:?}");
        }
    }
}
