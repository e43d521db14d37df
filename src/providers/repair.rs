//! The final parse of a tool call's arguments at `toolcall_end` (P-6.4.3) and of provider stream data
//! (P-6.3.2): `JSON.parse`, then once more after a linear repair pass, as pi-ai does. Pure text in,
//! `serde_json::Value` or an error message out; no JS types.
//!
//! The strict parser follows V8's `JSON.parse` (src/json/json-parser.cc) step by step so that the
//! error messages are the ones current V8 throws, position, line and column included (checked against
//! Chromium 156 on 28,000 generated inputs). Node 20's older V8 differs in two ways: no
//! ` (line … column …)` suffix, and a missing `:` after a non-first key is reported as an unexpected
//! token rather than `Expected ':' after property name`. What `JSON.parse` accepts but a
//! `serde_json::Value` cannot hold is mapped, never rejected: lone surrogates become U+FFFD, numbers
//! beyond the f64 range (±Infinity in JS) become `null`. Nesting deeper than `MAX_DEPTH` containers is
//! rejected with `Maximum nesting depth (512) exceeded in JSON at position …` (E-8.4.1; V8 has no such
//! limit). It is iterative, so no input reaches a stack limit.

#![deny(clippy::arithmetic_side_effects)]

use serde_json::{Map, Value};

use super::marker::push_lone_surrogate;

/// The most nested containers any JSON parser here accepts (E-8.4.1).
pub const MAX_DEPTH: usize = 512;

/// The parser message for arguments that are valid JSON but not an object, as P-6.4.3 words it
/// (pi-ai 1.6.0 itself says `Tool arguments must be a JSON object`).
pub const NOT_AN_OBJECT: &str = "Tool call arguments must be a JSON object";

/// The final arguments of a tool call (P-6.4.3). `Ok`: the arguments object (blank text → `{}`).
/// `Err`: the complete `argumentsError` text,
/// `"<parser message | Tool call arguments must be a JSON object>\n\nReceived arguments:\n<text>"`.
pub fn parse_tool_arguments(text: &str) -> Result<Map<String, Value>, String> {
    if is_js_blank(text) {
        return Ok(Map::new());
    }
    let message = match parse_json_with_repair(text) {
        Ok(Value::Object(map)) => return Ok(map),
        Ok(_) => NOT_AN_OBJECT.to_string(),
        Err(message) => message,
    };
    Err(format!("{message}\n\nReceived arguments:\n{text}"))
}

/// `JSON.parse(text)`; if that fails and the repair pass changes the text, `JSON.parse(repaired)`
/// (whose message is then the one reported, positions in the repaired text, as pi-ai does).
pub fn parse_json_with_repair(text: &str) -> Result<Value, String> {
    let first = match parse_json(text) {
        Ok(value) => return Ok(value),
        Err(message) => message,
    };
    let repaired = repair_json(text);
    if repaired == text { Err(first) } else { parse_json(&repaired) }
}

/// Strict `JSON.parse` semantics; `Err` is V8's `SyntaxError` message.
pub fn parse_json(text: &str) -> Result<Value, String> {
    let mut parser = Strict { text, bytes: text.as_bytes(), pos: 0 };
    parser.parse().map_err(|err| err.message(text))
}

/// The repair pass (linear, one scan): inside strings, raw control characters become escapes
/// (`\b \f \n \r \t` by name, the others `\u00xx`) and a backslash that starts no valid escape
/// (including `\u` without four hex digits, and a backslash at the very end) is doubled. Text
/// outside strings is untouched.
pub fn repair_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !in_string {
            out.push(c);
            in_string = c == '"';
            continue;
        }
        match c {
            '"' => {
                out.push(c);
                in_string = false;
            }
            '\\' => {
                let next = chars.peek().map(|&(_, n)| n);
                match next {
                    Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => {
                        out.push('\\');
                        if let Some((_, n)) = chars.next() {
                            out.push(n);
                        }
                    }
                    Some('u') if has_four_hex(text, at.saturating_add(2)) => {
                        // `\uXXXX`: copy all six characters (all ASCII).
                        out.push_str(text.get(at..at.saturating_add(6)).unwrap_or_default());
                        for _ in 0..5 {
                            chars.next();
                        }
                    }
                    // Doubled; the next character is then read on its own.
                    _ => out.push_str("\\\\"),
                }
            }
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let n = u32::from(c);
                out.push_str("\\u00");
                out.push(hex_digit(n >> 4));
                out.push(hex_digit(n & 0xF));
            }
            c => out.push(c),
        }
    }
    out
}

fn has_four_hex(text: &str, from: usize) -> bool {
    text.as_bytes()
        .get(from..from.saturating_add(4))
        .is_some_and(|d| d.len() == 4 && d.iter().all(u8::is_ascii_hexdigit))
}

fn hex_digit(n: u32) -> char {
    char::from_digit(n, 16).unwrap_or('0')
}

/// JavaScript's `String.prototype.trim` emptiness: JS whitespace (which includes U+FEFF but not
/// U+0085, unlike Rust's `char::is_whitespace`) and line terminators.
fn is_js_blank(text: &str) -> bool {
    const JS_SPACE: [char; 14] = [
        '\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{a0}', '\u{1680}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}',
        '\u{3000}', '\u{feff}',
    ];
    text.chars().all(|c| JS_SPACE.contains(&c) || ('\u{2000}'..='\u{200a}').contains(&c))
}

/// A number literal already checked against the JSON grammar, as `serde_json` represents it
/// (integers as `u64`/`i64` when they fit, else `f64`); beyond the f64 range (JS: ±Infinity) → null.
pub(crate) fn json_number(text: &str) -> Value {
    crate::core::text::number::json_number(text).unwrap_or(Value::Null)
}

/// V8's `JsonToken`: the token class of a character (by its first byte; non-ASCII is ILLEGAL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Number,
    String,
    Illegal,
    Eos,
    /// Every other class (brackets, literals' first letters, `:`, `,`, whitespace): V8 words these
    /// alike in its messages.
    Other,
}

fn token_of(byte: Option<u8>) -> Token {
    match byte {
        None => Token::Eos,
        Some(b'"') => Token::String,
        Some(b'-' | b'0'..=b'9') => Token::Number,
        Some(b'{' | b'}' | b'[' | b']' | b't' | b'f' | b'n' | b' ' | b'\t' | b'\r' | b'\n' | b':' | b',') => {
            Token::Other
        }
        Some(_) => Token::Illegal,
    }
}

/// V8's JSON message templates that carry a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Template {
    UnterminatedString,
    ExpectedPropNameOrRBrace,
    ExpectedCommaOrRBrack,
    ExpectedCommaOrRBrace,
    ExpectedDoubleQuotedPropertyName,
    ExponentPartMissingNumber,
    ExpectedColonAfterPropertyName,
    UnterminatedFractionalNumber,
    UnexpectedNonWhiteSpaceCharacter,
    BadEscapedCharacter,
    BadControlCharacter,
    BadUnicodeEscape,
    NoNumberAfterMinusSign,
    /// Not V8: the nesting limit (E-8.4.1).
    TooDeep,
}

impl Template {
    fn head(self) -> &'static str {
        match self {
            Template::UnterminatedString => "Unterminated string in JSON",
            Template::ExpectedPropNameOrRBrace => "Expected property name or '}' in JSON",
            Template::ExpectedCommaOrRBrack => "Expected ',' or ']' after array element in JSON",
            Template::ExpectedCommaOrRBrace => "Expected ',' or '}' after property value in JSON",
            Template::ExpectedDoubleQuotedPropertyName => "Expected double-quoted property name in JSON",
            Template::ExponentPartMissingNumber => "Exponent part is missing a number in JSON",
            Template::ExpectedColonAfterPropertyName => "Expected ':' after property name in JSON",
            Template::UnterminatedFractionalNumber => "Unterminated fractional number in JSON",
            Template::UnexpectedNonWhiteSpaceCharacter => "Unexpected non-whitespace character after JSON",
            Template::BadEscapedCharacter => "Bad escaped character in JSON",
            Template::BadControlCharacter => "Bad control character in string literal in JSON",
            Template::BadUnicodeEscape => "Bad Unicode escape in JSON",
            Template::NoNumberAfterMinusSign => "No number after minus sign in JSON",
            Template::TooDeep => "Maximum nesting depth (512) exceeded in JSON",
        }
    }
}

/// A parse failure at a byte offset of the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ErrorKind {
    /// V8 `ReportUnexpectedToken(token, template)`.
    Template(Template),
    /// V8 `ReportUnexpectedToken(token)` without a template: the message depends on the token.
    Unexpected(Token),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ParseError {
    kind: ErrorKind,
    /// Byte offset in the source of the character V8's cursor stands on.
    at: usize,
}

/// V8's context window around an unexpected token (`kMaxContextCharacters`) and the source length
/// from which it is used (`kMinOriginalSourceLengthForContext`), in UTF-16 units.
const CONTEXT: usize = 10;
const MIN_LENGTH_FOR_CONTEXT: usize = 2 * CONTEXT + 1;

impl ParseError {
    /// The message V8 would throw. Positions are UTF-16 offsets, as in JS. Computed once, on failure.
    fn message(self, text: &str) -> String {
        let at = floor_boundary(text, self.at);
        let prefix = text.get(..at).unwrap_or_default();
        let position = utf16_len(prefix);
        let located = |head: &str| {
            let (line, column) = line_and_column(prefix);
            format!("{head} at position {position} (line {line} column {column})")
        };
        match self.kind {
            ErrorKind::Template(template) => located(template.head()),
            ErrorKind::Unexpected(Token::Eos) => "Unexpected end of JSON input".to_string(),
            ErrorKind::Unexpected(Token::Number) => located("Unexpected number in JSON"),
            ErrorKind::Unexpected(Token::String) => located("Unexpected string in JSON"),
            ErrorKind::Unexpected(Token::Illegal | Token::Other) => {
                if matches!(text, "[object Object]" | "undefined" | "Infinity" | "NaN") {
                    return format!("\"{text}\" is not valid JSON");
                }
                let units: Vec<u16> = text.encode_utf16().collect();
                let slice = |from: usize, to: usize| String::from_utf16_lossy(units.get(from..to).unwrap_or_default());
                let token = slice(position, position.saturating_add(1));
                let length = units.len();
                if length < MIN_LENGTH_FOR_CONTEXT {
                    format!("Unexpected token '{token}', \"{text}\" is not valid JSON")
                } else if position < CONTEXT {
                    let context = slice(0, position.saturating_add(CONTEXT));
                    format!("Unexpected token '{token}', \"{context}\"... is not valid JSON")
                } else if position < length.saturating_sub(CONTEXT) {
                    let context = slice(position.saturating_sub(CONTEXT), position.saturating_add(CONTEXT));
                    format!("Unexpected token '{token}', ...\"{context}\"... is not valid JSON")
                } else {
                    let context = slice(position.saturating_sub(CONTEXT), length);
                    format!("Unexpected token '{token}', ...\"{context}\" is not valid JSON")
                }
            }
        }
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at = at.saturating_sub(1);
    }
    at
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// V8's `CalculateFileLocation`: lines end at `\n`, `\r` or `\r\n`; the column counts UTF-16 units.
fn line_and_column(prefix: &str) -> (usize, usize) {
    let bytes = prefix.as_bytes();
    let mut line = 1usize;
    let mut line_start = 0usize;
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        if b == b'\r' && bytes.get(i.saturating_add(1)) == Some(&b'\n') {
            i = i.saturating_add(1);
        }
        if b == b'\r' || b == b'\n' {
            line = line.saturating_add(1);
            line_start = i.saturating_add(1);
        }
        i = i.saturating_add(1);
    }
    (line, utf16_len(prefix.get(line_start..).unwrap_or_default()).saturating_add(1))
}

/// An open container while parsing.
enum Frame {
    Object(Map<String, Value>, String),
    Array(Vec<Value>),
}

/// V8's `JsonParser`, iteratively (its continuation stack is `stack`).
struct Strict<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// Byte offset of the cursor.
    pos: usize,
}

type Parsed<T> = Result<T, ParseError>;

impl Strict<'_> {
    fn parse(&mut self) -> Parsed<Value> {
        let value = self.parse_value()?;
        self.skip_whitespace();
        if self.peek().is_some() {
            return Err(self.fail(Template::UnexpectedNonWhiteSpaceCharacter));
        }
        Ok(value)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn advance(&mut self) {
        self.pos = self.pos.saturating_add(1);
    }

    fn fail(&self, template: Template) -> ParseError {
        ParseError { kind: ErrorKind::Template(template), at: self.pos }
    }

    /// V8 `ReportUnexpectedCharacter` at the cursor.
    fn unexpected(&self) -> ParseError {
        ParseError { kind: ErrorKind::Unexpected(token_of(self.peek())), at: self.pos }
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.advance();
        }
    }

    /// V8 `Check`: skip whitespace, consume `byte` if it is next.
    fn check(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        let found = self.peek() == Some(byte);
        if found {
            self.advance();
        }
        found
    }

    /// V8 `Expect` with a template (whitespace already skipped).
    fn expect(&mut self, byte: u8, template: Template) -> Parsed<()> {
        if self.peek() == Some(byte) {
            self.advance();
            Ok(())
        } else {
            Err(self.fail(template))
        }
    }

    /// V8 `ExpectNext(STRING, template)` then `ScanJsonPropertyKey`.
    fn property_key(&mut self, template: Template) -> Parsed<String> {
        self.skip_whitespace();
        self.expect(b'"', template)?;
        self.scan_string()
    }

    /// V8 `ExpectNext(COLON, ExpectedColonAfterPropertyName)`. (V8 before 12 passed no template after
    /// a non-first key, reporting the token instead; current V8 uses the template after every key.)
    fn colon(&mut self) -> Parsed<()> {
        self.skip_whitespace();
        self.expect(b':', Template::ExpectedColonAfterPropertyName)
    }

    /// V8 `ParseJsonValue`: produce values, then consume them into their containers.
    fn parse_value(&mut self) -> Parsed<Value> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            // Produce a value (or open a container and go on to its first member).
            let mut value = loop {
                self.skip_whitespace();
                match self.peek() {
                    Some(b'"') => {
                        self.advance();
                        break Value::String(self.scan_string()?);
                    }
                    Some(b'-' | b'0'..=b'9') => break self.parse_number()?,
                    Some(b'{') => {
                        if stack.len() >= MAX_DEPTH {
                            return Err(self.fail(Template::TooDeep));
                        }
                        self.advance();
                        if self.check(b'}') {
                            break Value::Object(Map::new());
                        }
                        let key = self.property_key(Template::ExpectedPropNameOrRBrace)?;
                        self.colon()?;
                        stack.push(Frame::Object(Map::new(), key));
                    }
                    Some(b'[') => {
                        if stack.len() >= MAX_DEPTH {
                            return Err(self.fail(Template::TooDeep));
                        }
                        self.advance();
                        if self.check(b']') {
                            break Value::Array(Vec::new());
                        }
                        stack.push(Frame::Array(Vec::new()));
                    }
                    Some(b't') => {
                        self.scan_literal(b"true")?;
                        break Value::Bool(true);
                    }
                    Some(b'f') => {
                        self.scan_literal(b"false")?;
                        break Value::Bool(false);
                    }
                    Some(b'n') => {
                        self.scan_literal(b"null")?;
                        break Value::Null;
                    }
                    _ => return Err(self.unexpected()),
                }
            };
            // Consume it: store into the open container; close containers that end here.
            loop {
                match stack.pop() {
                    None => return Ok(value),
                    Some(Frame::Object(mut map, key)) => {
                        map.insert(key, value);
                        if self.check(b',') {
                            let key = self.property_key(Template::ExpectedDoubleQuotedPropertyName)?;
                            self.colon()?;
                            stack.push(Frame::Object(map, key));
                            break;
                        }
                        self.expect(b'}', Template::ExpectedCommaOrRBrace)?;
                        value = Value::Object(map);
                    }
                    Some(Frame::Array(mut list)) => {
                        list.push(value);
                        if self.check(b',') {
                            stack.push(Frame::Array(list));
                            break;
                        }
                        self.expect(b']', Template::ExpectedCommaOrRBrack)?;
                        value = Value::Array(list);
                    }
                }
            }
        }
    }

    /// V8 `ScanLiteral`: the cursor is on the literal's first letter.
    fn scan_literal(&mut self, literal: &[u8]) -> Parsed<()> {
        let end = self.pos.saturating_add(literal.len());
        if self.bytes.get(self.pos..end) == Some(literal) {
            self.pos = end;
            return Ok(());
        }
        self.advance();
        for &expected in literal.get(1..).unwrap_or_default() {
            match self.peek() {
                Some(b) if b == expected => self.advance(),
                _ => return Err(self.unexpected()),
            }
        }
        Err(self.unexpected())
    }

    /// V8 `ParseJsonNumber`.
    fn parse_number(&mut self) -> Parsed<Value> {
        let start = self.pos;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.advance();
        }
        if self.peek() == Some(b'0') {
            self.advance();
            // A leading zero may only be followed by a fraction or an exponent.
            if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(ParseError { kind: ErrorKind::Unexpected(Token::Number), at: self.pos });
            }
        } else {
            let digits = self.pos;
            self.skip_digits();
            if self.pos == digits {
                return Err(self.fail(Template::NoNumberAfterMinusSign));
            }
        }
        if self.peek() == Some(b'.') {
            self.advance();
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.fail(Template::UnterminatedFractionalNumber));
            }
            self.skip_digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.advance();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.advance();
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return Err(self.fail(Template::ExponentPartMissingNumber));
            }
            self.skip_digits();
        }
        Ok(json_number(self.text.get(start..self.pos).unwrap_or_default()))
    }

    fn skip_digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.advance();
        }
    }

    /// V8 `ScanJsonString` + `DecodeString`: the cursor is after the opening quote. Escaped surrogate
    /// pairs are joined; lone surrogates (kept by JS) are encoded as `marker::push_lone_surrogate` does.
    fn scan_string(&mut self) -> Parsed<String> {
        let mut out = String::new();
        let mut high: Option<u16> = None;
        loop {
            let rest = self.bytes.get(self.pos..).unwrap_or_default();
            let run = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(rest.len());
            if run > 0 {
                flush_high(&mut high, &mut out);
                let end = self.pos.saturating_add(run);
                // The stop bytes are ASCII, so `end` is a character boundary.
                out.push_str(self.text.get(self.pos..end).unwrap_or_default());
                self.pos = end;
            }
            match self.peek() {
                None => return Err(self.fail(Template::UnterminatedString)),
                Some(b'"') => {
                    self.advance();
                    flush_high(&mut high, &mut out);
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.advance();
                    let decoded = match self.peek() {
                        // V8 reads the next UTF-16 unit: end of input, or above U+00FF, is an
                        // unexpected token; U+0080..U+00FF is a bad escape like any other letter.
                        None => return Err(self.unexpected()),
                        Some(b) if b >= 0xC4 => return Err(self.unexpected()),
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let unit = self.scan_unicode_escape()?;
                            let is_low = (0xDC00..=0xDFFF).contains(&unit);
                            match high.take() {
                                Some(h) if is_low => out.push(combine_surrogates(h, unit)),
                                Some(h) => {
                                    push_lone_surrogate(&mut out, h);
                                    push_unit(unit, &mut high, &mut out);
                                }
                                None => push_unit(unit, &mut high, &mut out),
                            }
                            self.advance();
                            continue;
                        }
                        Some(_) => return Err(self.fail(Template::BadEscapedCharacter)),
                    };
                    flush_high(&mut high, &mut out);
                    out.push(decoded);
                    self.advance();
                }
                Some(_) => return Err(self.fail(Template::BadControlCharacter)),
            }
        }
    }

    /// V8 `ScanUnicodeCharacter`: the cursor is on `u`; it ends on the last hex digit, or on the first
    /// character that is not one (where the error is reported).
    fn scan_unicode_escape(&mut self) -> Parsed<u16> {
        let mut unit = 0u16;
        for _ in 0..4 {
            self.advance();
            match self.peek() {
                Some(d) if d.is_ascii_hexdigit() => unit = unit.wrapping_mul(16).wrapping_add(hex_value(d)),
                _ => return Err(self.fail(Template::BadUnicodeEscape)),
            }
        }
        Ok(unit)
    }
}

/// A decoded `\uXXXX` unit with no pending high surrogate before it.
fn push_unit(unit: u16, high: &mut Option<u16>, out: &mut String) {
    if (0xD800..=0xDBFF).contains(&unit) {
        *high = Some(unit);
    } else {
        push_lone_surrogate(out, unit);
    }
}

fn flush_high(high: &mut Option<u16>, out: &mut String) {
    if let Some(unit) = high.take() {
        push_lone_surrogate(out, unit);
    }
}

/// The character of a surrogate pair.
pub(crate) fn combine_surrogates(high: u16, low: u16) -> char {
    let hi = u32::from(high).saturating_sub(0xD800);
    let lo = u32::from(low).saturating_sub(0xDC00);
    char::from_u32(0x10000u32.saturating_add(hi << 10).saturating_add(lo)).unwrap_or('\u{FFFD}')
}

/// The value of an ASCII hex digit (0 for anything else).
pub(crate) fn hex_value(d: u8) -> u16 {
    match d {
        b'0'..=b'9' => u16::from(d.wrapping_sub(b'0')),
        b'a'..=b'f' => u16::from(d.wrapping_sub(b'a').wrapping_add(10)),
        b'A'..=b'F' => u16::from(d.wrapping_sub(b'A').wrapping_add(10)),
        _ => 0,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
    #![allow(clippy::arithmetic_side_effects)]

    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn err(text: &str) -> String {
        parse_json(text).unwrap_err()
    }

    fn args_err(text: &str) -> String {
        parse_tool_arguments(text).unwrap_err()
    }

    #[test]
    fn p_6_4_3_blank_is_empty_object() {
        for text in ["", "  ", "\n\t\r ", "\u{feff}", "\u{a0}\u{2028}\u{3000}"] {
            assert_eq!(parse_tool_arguments(text), Ok(Map::new()), "{text:?}");
        }
        // U+0085 is whitespace for Rust but not for JS's trim.
        assert!(parse_tool_arguments("\u{85}").is_err());
    }

    #[test]
    fn p_6_4_3_valid_objects() {
        let m = parse_tool_arguments(r#" {"a": [1, -0.5e2, true, null], "b": {"c": "\u00e9\n"}, "__proto__": 1} "#)
            .unwrap();
        assert_eq!(Value::Object(m), json!({"a": [1, -50.0, true, null], "b": {"c": "é\n"}, "__proto__": 1}));
        // Duplicate keys: last value, first position (as JSON.parse).
        let m = parse_tool_arguments(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(m["a"], json!(3));
    }

    #[test]
    fn p_6_4_3_non_objects() {
        for text in ["[1]", "1", "\"s\"", "null", "true", " [] "] {
            assert_eq!(args_err(text), format!("{NOT_AN_OBJECT}\n\nReceived arguments:\n{text}"));
        }
    }

    #[test]
    fn p_6_4_3_messages_as_pi_ai_on_v8() {
        // Messages observed from pi-ai's parseToolCallArguments (V8), with the (line, column)
        // suffix of current V8.
        let cases = [
            (r#"{"a":"#, "Unexpected end of JSON input"),
            ("{", "Expected property name or '}' in JSON at position 1 (line 1 column 2)"),
            (r#"{"a":1,}"#, "Expected double-quoted property name in JSON at position 7 (line 1 column 8)"),
            (r#"{"a" 1}"#, "Expected ':' after property name in JSON at position 5 (line 1 column 6)"),
            (r#"{"a":tru}"#, r#"Unexpected token '}', "{"a":tru}" is not valid JSON"#),
            ("{a:1}", "Expected property name or '}' in JSON at position 1 (line 1 column 2)"),
            (r#"{"a":1} x"#, "Unexpected non-whitespace character after JSON at position 8 (line 1 column 9)"),
            ("NaN", r#""NaN" is not valid JSON"#),
            ("undefined", r#""undefined" is not valid JSON"#),
            ("abc", r#"Unexpected token 'a', "abc" is not valid JSON"#),
            (r#"{"a":-}"#, "No number after minus sign in JSON at position 6 (line 1 column 7)"),
            (r#"{"a":1e}"#, "Exponent part is missing a number in JSON at position 7 (line 1 column 8)"),
            (r#"{"a":1.}"#, "Unterminated fractional number in JSON at position 7 (line 1 column 8)"),
            (r#"{"a":01}"#, "Unexpected number in JSON at position 6 (line 1 column 7)"),
            (r#"{"a":1"#, "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)"),
            ("[1", "Expected ',' or ']' after array element in JSON at position 2 (line 1 column 3)"),
            (r#"{"a":"x"#, "Unterminated string in JSON at position 7 (line 1 column 8)"),
            (
                "{\n  \"a\": 1,\r\n  \"b\" 2}",
                "Expected ':' after property name in JSON at position 19 (line 3 column 7)",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(args_err(text), format!("{message}\n\nReceived arguments:\n{text}"), "{text}");
        }
    }

    #[test]
    fn p_6_4_3_unexpected_token_context_windows() {
        // Expectations taken from Chromium 156's JSON.parse. Sources of ≥ 21 UTF-16 units get ten
        // units of context on each side of the token, with ellipses where cut.
        assert_eq!(
            err(r#"{"abcdefghijkl": x, "mnopqrstuv": 1}"#),
            r#"Unexpected token 'x', ..."fghijkl": x, "mnopqr"... is not valid JSON"#
        );
        assert_eq!(
            err(r#"{"k": x123456789012345678}"#),
            r#"Unexpected token 'x', "{"k": x123456789"... is not valid JSON"#
        );
        assert_eq!(
            err(r#"{"k123456789012345678": x}"#),
            r#"Unexpected token 'x', ..."2345678": x}" is not valid JSON"#
        );
        // A window edge inside a surrogate pair: the half becomes U+FFFD.
        assert_eq!(
            err("{\"😀😀😀😀😀😀😀😀😀😀\": x}"),
            "Unexpected token 'x', ...\"\u{FFFD}😀😀😀\": x}\" is not valid JSON"
        );
        assert_eq!(err(r#"{"a":1,"b"}"#), "Expected ':' after property name in JSON at position 10 (line 1 column 11)");
        assert_eq!(
            err(r#"{"a":1,"b" 2}"#),
            "Expected ':' after property name in JSON at position 11 (line 1 column 12)"
        );
    }

    #[test]
    fn p_6_4_3_positions_are_utf16_units() {
        assert_eq!(err("{\"😀\":1,}"), "Expected double-quoted property name in JSON at position 8 (line 1 column 9)");
        assert_eq!(
            err("{\"é\":1 x}"),
            "Expected ',' or '}' after property value in JSON at position 7 (line 1 column 8)"
        );
    }

    #[test]
    fn p_6_4_3_string_errors() {
        assert_eq!(
            err("\"a\u{1}\""),
            "Bad control character in string literal in JSON at position 2 (line 1 column 3)"
        );
        assert_eq!(err(r#""\q""#), "Bad escaped character in JSON at position 2 (line 1 column 3)");
        assert_eq!(err(r#""\u12x4""#), "Bad Unicode escape in JSON at position 5 (line 1 column 6)");
        assert_eq!(err(r#""\u12"#), "Bad Unicode escape in JSON at position 5 (line 1 column 6)");
        assert_eq!(err(r#""\"#), "Unexpected end of JSON input");
        assert_eq!(err("\"\\é\""), "Bad escaped character in JSON at position 2 (line 1 column 3)");
        assert_eq!(err("\"\\€\""), "Unexpected token '€', \"\"\\€\"\" is not valid JSON");
    }

    #[test]
    fn p_6_4_3_repair_pass() {
        // Raw control characters inside strings, invalid escapes: repaired.
        let m = parse_tool_arguments("{\"code\": \"line1\nline2\ttab\u{1}\", \"path\": \"C:\\dir\\x\"}").unwrap();
        assert_eq!(Value::Object(m), json!({"code": "line1\nline2\ttab\u{1}", "path": "C:\\dir\\x"}));
        assert_eq!(repair_json("{\"a\":\"\u{8}\u{c}\u{1f}\"}"), "{\"a\":\"\\b\\f\\u001f\"}");
        assert_eq!(repair_json(r#"{"a":"\u12G\uABCD\q\\\""}"#), r#"{"a":"\\u12G\uABCD\\q\\\""}"#);
        assert_eq!(repair_json(r#""\"#), r#""\\"#);
        // Outside strings nothing changes.
        assert_eq!(repair_json("{\n\"a\" :\t1}"), "{\n\"a\" :\t1}");
        // An unrepairable text reports the first message if repair changed nothing, else the
        // repaired text's message (positions in the repaired text), as pi-ai.
        assert!(args_err(r#"{"a":1,}"#).starts_with("Expected double-quoted property name in JSON at position 7"));
        // Here the strict message would be "Bad control character … at position 6"; the repaired text
        // `{"a":"\n",}` fails at position 10 instead (V8 on the original says position 6).
        assert!(args_err("{\"a\":\"\n\",}").starts_with("Expected double-quoted property name in JSON at position 10"));
    }

    #[test]
    fn p_6_4_3_values_js_keeps_but_serde_cannot() {
        let lone = parse_json(r#"["\ud800", "\udc00x", "\ud83d\ude00", "\ud83d\ud83d"]"#).unwrap();
        let units: Vec<Vec<u16>> =
            lone.as_array().unwrap().iter().map(|s| crate::core::text::wtf::to_utf16(s.as_str().unwrap())).collect();
        assert_eq!(units, [vec![0xD800], vec![0xDC00, 0x78], vec![0xD83D, 0xDE00], vec![0xD83D, 0xD83D]]);
        assert_eq!(parse_json("[1e400, -1e400, 1e-400]"), Ok(json!([null, null, 0.0])));
        assert_eq!(parse_json("-0"), Ok(json!(-0.0)));
        assert_eq!(parse_json("12345678901234567890123"), Ok(json!(1.2345678901234568e22)));
    }

    #[test]
    fn e_8_4_1_depth_limit() {
        let ok = format!("{}{}", "[".repeat(512), "]".repeat(512));
        assert!(parse_json(&ok).is_ok());
        let deep = format!("{}{}", "[".repeat(513), "]".repeat(513));
        assert_eq!(
            parse_json(&deep).unwrap_err(),
            "Maximum nesting depth (512) exceeded in JSON at position 512 (line 1 column 513)"
        );
        // No stack use proportional to the input.
        assert!(parse_json(&"[{\"a\":".repeat(200_000)).is_err());
    }

    /// A 1.6 MB string of escapes and raw newlines: repaired once it parses, and repairing again changes nothing.
    /// (Named for what it checks: it measures no time, so it says nothing about linearity.)
    #[test]
    fn repair_of_a_large_string_parses_and_is_idempotent() {
        let big = format!("{{\"s\": \"{}\"}}", "a\\\"\\u00e9\n".repeat(200_000));
        let repaired = repair_json(&big);
        assert_eq!(repair_json(&repaired), repaired);
        assert!(parse_json(&repaired).is_ok());
    }

    /// Arbitrary JSON values (also used by the stream-data parser's tests).
    pub(crate) fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn p_6_4_3_strict_parse_equals_serde_json_on_valid_json(value in arb_json(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&value).unwrap() } else { value.to_string() };
            prop_assert_eq!(parse_json(&text), Ok(serde_json::from_str::<Value>(&text).unwrap()));
            prop_assert_eq!(repair_json(&text), text.clone());
        }

        #[test]
        fn p_6_4_3_any_text_never_panics(text in any::<String>()) {
            let _ = parse_tool_arguments(&text);
            let repaired = repair_json(&text);
            let _ = parse_json(&repaired);
            // Strict success implies serde_json agrees, unless JS-only values were mapped.
            if let Ok(v) = parse_json(&text)
                && let Ok(s) = serde_json::from_str::<Value>(&text)
            {
                prop_assert_eq!(v, s);
            }
        }

        #[test]
        fn p_6_4_3_jsonish_text_never_panics(parts in proptest::collection::vec(proptest::sample::select(vec![
            "{", "}", "[", "]", ":", ",", "\"", "\\", "\\u", "\\uD83D", "\\uDE00", "a", "1", "-", ".", "e", "0", "true",
            "nul", " ", "\n", "\r", "\u{1}", "é", "😀", "\\é", "\\😀",
        ]), 0..40)) {
            let text = parts.concat();
            let _ = parse_tool_arguments(&text);
            let _ = repair_json(&text);
        }
    }
}
