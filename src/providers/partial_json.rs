//! The live `arguments` of a streaming tool call (P-6.4.2): a tolerant, incremental JSON parser that
//! turns argument fragments into patches on a root object `{}`. It keeps its state between fragments
//! and never looks at a byte twice; it builds no JS values (the binding applies the patches).
//!
//! What the live value shows:
//! - containers appear when opened; an object key appears once its value starts;
//! - a string appears when it starts (at the end of the fragment it started in, possibly empty) and
//!   grows by one `AppendString` per fragment; escapes are decoded, an incomplete escape (`\`,
//!   `\u00`, a high surrogate awaiting its low half) is held back until complete;
//! - numbers, `true`, `false` and `null` appear only once the delimiter that ends them (whitespace,
//!   `,`, `}` or `]`) has arrived: `{"n": 12` shows `{}`, because `12` may still become `123`;
//! - a non-object root leaves `{}`; malformed input freezes the last good value (no more patches).
//!
//! Inside strings the parser is exactly as tolerant as the final parse's repair pass (P-6.4.3, see
//! `repair.rs`), so the live value converges to the final one: raw control characters are kept, a
//! backslash before a character that cannot follow it (or `\u` without four hex digits) is a literal
//! backslash. Lone surrogates (`"\ud800"`, legal for `JSON.parse`) are kept, encoded as
//! `marker::push_lone_surrogate` does.
//!
//! Limits: 512 nested containers (`MAX_DEPTH`) and 1 KiB of keys along the path of a live value
//! (`MAX_PATH_KEY_BYTES`); beyond either the live value freezes. The second limit keeps the total
//! patch payload (every patch carries its full path) linear in the input even for adversarial keys.

#![deny(clippy::arithmetic_side_effects)]

use serde_json::{Map, Value};

use crate::core::host::{Host, Kind};

use super::marker::push_lone_surrogate;
use super::repair::{MAX_DEPTH, combine_surrogates, hex_value};

/// The most key bytes the path of a live value may hold; a longer path freezes the live value.
pub const MAX_PATH_KEY_BYTES: usize = 1024;

/// One step of a patch path from the root object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// A complete number, `true`, `false` or `null`: what `JSON.parse` gives for it (a number past the range of a double
/// is `Null`, as the final parse's repair makes it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Number(f64),
}

impl Scalar {
    /// The scalar of a JSON number literal (`Null` past the range of a double).
    pub fn number(text: &str) -> Scalar {
        crate::core::text::number::json_number_f64(text).map_or(Scalar::Null, Scalar::Number)
    }

    pub fn to_value(self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(b),
            // Integers as serde_json reads them (so native fixtures compare with `json!`), -0 a float as there.
            Scalar::Number(x)
                if x.fract() == 0.0 && x.abs() <= 9_007_199_254_740_992.0 && (x != 0.0 || x.is_sign_positive()) =>
            {
                Value::from(x as i64)
            }
            Scalar::Number(x) => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
        }
    }
}

/// What a patch does at its path (the last segment names the slot in its parent container).
#[derive(Clone, Debug, PartialEq)]
pub enum PatchOp {
    /// A new empty object.
    SetObject,
    /// A new empty array.
    SetArray,
    /// A complete number, `true`, `false` or `null`.
    SetValue(Scalar),
    /// A string starts: its decoded text so far (maybe empty).
    SetString(String),
    /// Decoded text appended to the string at the path.
    AppendString(String),
}

/// One change to the live value. Applied in order to `{}` (with [`apply`]) they give the live value.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    pub path: Vec<PathSeg>,
    pub op: PatchOp,
}

/// Where the parser is between two characters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    /// Before the root value.
    #[default]
    Start,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,` in an object: a key.
    Key,
    /// Inside a key string.
    InKey,
    /// After a key: `:`.
    Colon,
    /// After `:` or `,` in an array: a value.
    Value,
    /// After `[`: a value or `]`.
    FirstElement,
    /// Inside a string value.
    InString,
    /// Inside a number or literal (its text is in `scalar`).
    Scalar,
    /// After a value: `,` or the closing bracket.
    AfterValue,
    /// The root object closed; only whitespace may follow.
    Done,
    /// Malformed input (or a limit) was met: nothing changes any more.
    Frozen,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Object,
    /// `len`: the number of elements started so far (the index of the next one).
    Array {
        len: usize,
    },
}

/// Progress through an escape sequence inside a string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Escape {
    #[default]
    None,
    /// After `\`.
    Backslash,
    /// After `\u` and `n` hex digits (kept as typed, for the literal fallback).
    Unicode { digits: [u8; 4], n: usize },
}

/// String decoding state: shared by keys and string values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct StrDecoder {
    escape: Escape,
    /// A `\uD800`–`\uDBFF` escape waiting for a `\uDC00`–`\uDFFF` escape to pair with.
    high: Option<u16>,
}

/// The incremental parser. Feed fragments with [`PartialJson::push`].
#[derive(Debug, Default)]
pub struct PartialJson {
    state: State,
    /// Open containers, the root object first.
    stack: Vec<Frame>,
    /// The path of the innermost open container (one segment per container below the root).
    path: Vec<PathSeg>,
    /// The bytes of the `Key` segments in `path`.
    path_key_bytes: usize,
    /// The key being read, or the key of the value about to start.
    key: String,
    /// The slot (in the innermost container) of the string or scalar being read.
    slot: Option<PathSeg>,
    /// Decoded string text not yet sent.
    text: String,
    /// Whether the current string value has been announced with `SetString`.
    announced: bool,
    /// The text of the number or literal being read.
    scalar: String,
    dec: StrDecoder,
    /// A number beyond the f64 range was read (`JSON.parse` gives ±Infinity, a `Value` holds `null`).
    lossy: bool,
    /// Work units (bytes examined + patch payload), for the linearity test.
    #[cfg(test)]
    ops: u64,
}

impl PartialJson {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the text so far is one whole object, within the limits, whose every value `JSON.parse` and this
    /// crate's parsers read alike: then `JSON.parse` of the text, where the text is, is the final arguments
    /// (issue 34). `false` does not mean invalid, only that the text must be parsed here.
    pub fn clean(&self) -> bool {
        self.state == State::Done && !self.lossy
    }

    /// Feeds the next fragment of the arguments text; patches for the changes it brings are appended
    /// to `out`. Cost: proportional to the fragment plus the patches produced.
    pub fn push(&mut self, fragment: &str, out: &mut Vec<Patch>) {
        let bytes = fragment.as_bytes();
        let mut i = 0usize;
        while i < bytes.len() {
            match self.state {
                State::Frozen => break,
                State::InKey => {
                    let (next, closed) = scan_string(&mut self.dec, &mut self.key, fragment, i);
                    self.tick(next.saturating_sub(i));
                    i = next;
                    if closed {
                        self.state = State::Colon;
                    }
                }
                State::InString => {
                    let (next, closed) = scan_string(&mut self.dec, &mut self.text, fragment, i);
                    self.tick(next.saturating_sub(i));
                    i = next;
                    if closed {
                        self.flush_string(out);
                        self.slot = None;
                        self.state = State::AfterValue;
                    }
                }
                _ => {
                    let Some(c) = fragment.get(i..).and_then(|rest| rest.chars().next()) else { break };
                    self.tick(c.len_utf8());
                    i = i.saturating_add(c.len_utf8());
                    self.structural(c, out);
                }
            }
        }
        if self.state == State::InString {
            self.flush_string(out);
        }
    }

    /// One character outside strings.
    fn structural(&mut self, c: char, out: &mut Vec<Patch>) {
        let ws = matches!(c, ' ' | '\t' | '\n' | '\r');
        match self.state {
            State::Start => match c {
                _ if ws => {}
                '{' => {
                    self.stack.push(Frame::Object);
                    self.state = State::FirstKey;
                }
                // A non-object root leaves `{}`.
                _ => self.freeze(),
            },
            State::FirstKey | State::Key => match c {
                _ if ws => {}
                '"' => {
                    self.key.clear();
                    self.dec = StrDecoder::default();
                    self.state = State::InKey;
                }
                '}' if self.state == State::FirstKey => self.close(),
                _ => self.freeze(),
            },
            State::Colon => match c {
                _ if ws => {}
                ':' => self.state = State::Value,
                _ => self.freeze(),
            },
            State::Value | State::FirstElement => match c {
                _ if ws => {}
                ']' if self.state == State::FirstElement => self.close(),
                _ => self.start_value(c, out),
            },
            State::Scalar => match c {
                _ if ws || matches!(c, ',' | '}' | ']') => {
                    self.finish_scalar(out);
                    if self.state != State::Frozen {
                        self.state = State::AfterValue;
                        self.structural(c, out);
                    }
                }
                _ if c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.') => self.scalar.push(c),
                _ => self.freeze(),
            },
            State::AfterValue => match (c, self.stack.last()) {
                _ if ws => {}
                (',', Some(Frame::Object)) => self.state = State::Key,
                (',', Some(Frame::Array { .. })) => self.state = State::Value,
                ('}', Some(Frame::Object)) | (']', Some(Frame::Array { .. })) => self.close(),
                _ => self.freeze(),
            },
            State::Done => {
                if !ws {
                    self.freeze();
                }
            }
            // Handled by `push` (strings) or nothing to do.
            State::InKey | State::InString | State::Frozen => {}
        }
    }

    /// The first character of a value in the innermost container.
    fn start_value(&mut self, c: char, out: &mut Vec<Patch>) {
        let seg = match self.stack.last_mut() {
            Some(Frame::Object) => PathSeg::Key(std::mem::take(&mut self.key)),
            Some(Frame::Array { len }) => {
                let seg = PathSeg::Index(*len);
                *len = len.saturating_add(1);
                seg
            }
            None => return self.freeze(),
        };
        let key_bytes = match &seg {
            PathSeg::Key(k) => k.len(),
            PathSeg::Index(_) => 0,
        };
        if self.path_key_bytes.saturating_add(key_bytes) > MAX_PATH_KEY_BYTES {
            return self.freeze();
        }
        match c {
            '{' | '[' => {
                if self.stack.len() >= MAX_DEPTH {
                    return self.freeze();
                }
                let (op, frame, state) = if c == '{' {
                    (PatchOp::SetObject, Frame::Object, State::FirstKey)
                } else {
                    (PatchOp::SetArray, Frame::Array { len: 0 }, State::FirstElement)
                };
                self.emit(out, &seg, op);
                self.path.push(seg);
                self.path_key_bytes = self.path_key_bytes.saturating_add(key_bytes);
                self.stack.push(frame);
                self.state = state;
            }
            '"' => {
                self.slot = Some(seg);
                self.text.clear();
                self.announced = false;
                self.dec = StrDecoder::default();
                self.state = State::InString;
            }
            '-' | '0'..='9' | 't' | 'f' | 'n' => {
                self.slot = Some(seg);
                self.scalar.clear();
                self.scalar.push(c);
                self.state = State::Scalar;
            }
            _ => self.freeze(),
        }
    }

    /// A number or literal met its delimiter.
    fn finish_scalar(&mut self, out: &mut Vec<Patch>) {
        let value = match self.scalar.as_str() {
            "true" => Scalar::Bool(true),
            "false" => Scalar::Bool(false),
            "null" => Scalar::Null,
            s if is_json_number(s) => {
                let value = Scalar::number(s);
                self.lossy |= value == Scalar::Null;
                value
            }
            _ => return self.freeze(),
        };
        self.tick(self.scalar.len());
        if let Some(seg) = self.slot.take() {
            self.emit(out, &seg, PatchOp::SetValue(value));
        }
    }

    /// Sends the decoded text of the current string value: `SetString` the first time, then
    /// `AppendString` when there is new text.
    fn flush_string(&mut self, out: &mut Vec<Patch>) {
        let Some(seg) = self.slot.take() else { return };
        if !self.announced {
            self.announced = true;
            let text = std::mem::take(&mut self.text);
            self.emit(out, &seg, PatchOp::SetString(text));
        } else if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            self.emit(out, &seg, PatchOp::AppendString(text));
        }
        self.slot = Some(seg);
    }

    fn close(&mut self) {
        self.stack.pop();
        if self.stack.is_empty() {
            self.state = State::Done;
            return;
        }
        if let Some(PathSeg::Key(k)) = self.path.pop() {
            self.path_key_bytes = self.path_key_bytes.saturating_sub(k.len());
        }
        self.state = State::AfterValue;
    }

    fn freeze(&mut self) {
        self.state = State::Frozen;
        self.stack = Vec::new();
        self.path = Vec::new();
        self.key = String::new();
        self.text = String::new();
        self.scalar = String::new();
        self.slot = None;
    }

    /// Appends a patch at `self.path` + `seg`.
    fn emit(&mut self, out: &mut Vec<Patch>, seg: &PathSeg, op: PatchOp) {
        let mut path = Vec::with_capacity(self.path.len().saturating_add(1));
        path.extend(self.path.iter().cloned());
        path.push(seg.clone());
        // Work: one unit per segment, per key byte (ancestors and this slot) and per payload byte.
        let seg_key_bytes = match seg {
            PathSeg::Key(k) => k.len(),
            PathSeg::Index(_) => 0,
        };
        let payload = match &op {
            PatchOp::SetString(s) | PatchOp::AppendString(s) => s.len(),
            PatchOp::SetValue(_) | PatchOp::SetObject | PatchOp::SetArray => 1,
        };
        self.tick(path.len().saturating_add(self.path_key_bytes).saturating_add(seg_key_bytes).saturating_add(payload));
        out.push(Patch { path, op });
    }

    #[cfg(test)]
    fn tick(&mut self, n: usize) {
        self.ops = self.ops.saturating_add(n as u64);
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn tick(&mut self, _n: usize) {}
}

/// Reads string content from `fragment[i..]` into `out` until the closing quote (consumed) or the end
/// of the fragment. Returns the index after the last byte consumed and whether the string closed.
/// Runs without quotes and backslashes are copied in one piece.
fn scan_string(dec: &mut StrDecoder, out: &mut String, fragment: &str, mut i: usize) -> (usize, bool) {
    let bytes = fragment.as_bytes();
    loop {
        if dec.escape == Escape::None && dec.high.is_none() {
            let rest = bytes.get(i..).unwrap_or_default();
            let run = rest.iter().position(|&b| b == b'"' || b == b'\\').unwrap_or(rest.len());
            let end = i.saturating_add(run);
            // `"` and `\` are ASCII, so `end` is a character boundary.
            out.push_str(fragment.get(i..end).unwrap_or_default());
            i = end;
        }
        let Some(c) = fragment.get(i..).and_then(|rest| rest.chars().next()) else { return (i, false) };
        i = i.saturating_add(c.len_utf8());
        if dec.step(c, out) {
            return (i, true);
        }
    }
}

impl StrDecoder {
    /// One string character; returns true at the closing quote. The fallbacks mirror the repair pass
    /// (P-6.4.3): a backslash that starts no valid escape is a literal backslash, and the character
    /// after it is read afresh.
    fn step(&mut self, c: char, out: &mut String) -> bool {
        match self.escape {
            Escape::None => match c {
                '"' => {
                    self.flush_high(out);
                    return true;
                }
                '\\' => self.escape = Escape::Backslash,
                _ => {
                    self.flush_high(out);
                    out.push(c);
                }
            },
            Escape::Backslash => {
                let decoded = match c {
                    '"' | '\\' | '/' => c,
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        self.escape = Escape::Unicode { digits: [0; 4], n: 0 };
                        return false;
                    }
                    _ => {
                        self.escape = Escape::None;
                        self.flush_high(out);
                        out.push('\\');
                        return self.step(c, out);
                    }
                };
                self.escape = Escape::None;
                self.flush_high(out);
                out.push(decoded);
            }
            Escape::Unicode { mut digits, n } => {
                if !c.is_ascii_hexdigit() {
                    // Not an escape after all: `\u` and the digits so far are literal text.
                    self.escape = Escape::None;
                    self.flush_high(out);
                    out.push_str("\\u");
                    for &d in digits.get(..n).unwrap_or_default() {
                        out.push(char::from(d));
                    }
                    return self.step(c, out);
                }
                if let Some(d) = digits.get_mut(n) {
                    *d = c as u8; // ASCII hex digit
                }
                let n = n.saturating_add(1);
                if n < 4 {
                    self.escape = Escape::Unicode { digits, n };
                    return false;
                }
                self.escape = Escape::None;
                let unit = digits.iter().fold(0u16, |acc, &d| acc.wrapping_mul(16).wrapping_add(hex_value(d)));
                self.unit(unit, out);
            }
        }
        false
    }

    /// A `\uXXXX` code unit: pairs surrogates as `JSON.parse` does; a lone one is kept, encoded
    /// as `marker::push_lone_surrogate` does.
    fn unit(&mut self, unit: u16, out: &mut String) {
        let is_low = (0xDC00..=0xDFFF).contains(&unit);
        if let Some(high) = self.high.take() {
            if is_low {
                out.push(combine_surrogates(high, unit));
                return;
            }
            push_lone_surrogate(out, high);
        }
        if (0xD800..=0xDBFF).contains(&unit) {
            self.high = Some(unit);
        } else {
            push_lone_surrogate(out, unit);
        }
    }

    /// A held-back high surrogate that will not be paired: kept as a lone one.
    fn flush_high(&mut self, out: &mut String) {
        if let Some(unit) = self.high.take() {
            push_lone_surrogate(out, unit);
        }
    }
}

/// JSON number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let digits_from = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i = i.saturating_add(1);
        }
        i
    };
    let mut i = usize::from(b.first() == Some(&b'-'));
    match b.get(i) {
        Some(b'0') => i = i.saturating_add(1),
        Some(b'1'..=b'9') => i = digits_from(i),
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        let start = i.saturating_add(1);
        i = digits_from(start);
        if i == start {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i = i.saturating_add(1);
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i = i.saturating_add(1);
        }
        let start = i;
        i = digits_from(start);
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// Applies one patch to `root` (a reference applier for tests and native fixtures; the binding does
/// the same on the JS object). A patch whose parent does not exist is ignored; never panics.
pub fn apply(root: &mut Value, patch: &Patch) {
    let Some((last, parents)) = patch.path.split_last() else {
        match &patch.op {
            PatchOp::AppendString(s) => {
                if let Value::String(t) = root {
                    t.push_str(s);
                }
            }
            op => *root = new_value(op),
        }
        return;
    };
    let mut node = root;
    for seg in parents {
        let next = match (seg, node) {
            (PathSeg::Key(k), Value::Object(map)) => map.get_mut(k),
            (PathSeg::Index(i), Value::Array(list)) => list.get_mut(*i),
            _ => None,
        };
        let Some(next) = next else { return };
        node = next;
    }
    if let PatchOp::AppendString(s) = &patch.op {
        let target = match (last, node) {
            (PathSeg::Key(k), Value::Object(map)) => map.get_mut(k),
            (PathSeg::Index(i), Value::Array(list)) => list.get_mut(*i),
            _ => None,
        };
        if let Some(Value::String(t)) = target {
            t.push_str(s);
        }
        return;
    }
    let value = new_value(&patch.op);
    match (last, node) {
        (PathSeg::Key(k), Value::Object(map)) => {
            map.insert(k.clone(), value);
        }
        (PathSeg::Index(i), Value::Array(list)) => {
            if let Some(slot) = list.get_mut(*i) {
                *slot = value;
            } else if *i == list.len() {
                list.push(value);
            }
        }
        _ => {}
    }
}

fn new_value(op: &PatchOp) -> Value {
    match op {
        PatchOp::SetObject => Value::Object(Map::new()),
        PatchOp::SetArray => Value::Array(Vec::new()),
        PatchOp::SetValue(v) => v.to_value(),
        PatchOp::SetString(s) | PatchOp::AppendString(s) => Value::String(s.clone()),
    }
}

/// Applies one patch to `root`, an object of the host, exactly as `apply` does to a `Value` (a patch whose parent does
/// not exist is ignored). Errors are values a caller's getter threw: none on the objects `partial_arguments` makes.
pub fn apply_on_host<H: Host>(h: &H, root: &H::V, patch: &Patch) -> Result<(), H::V> {
    // The root is always the object the caller made: a patch of the root itself changes nothing (as `apply` on `{}`
    // would only for a non-object root, which the parser never patches into place).
    let Some((last, parents)) = patch.path.split_last() else { return Ok(()) };
    let slot = |node: &H::V, seg: &PathSeg| -> Result<Option<H::V>, H::V> {
        Ok(match (seg, h.kind(node)) {
            (PathSeg::Key(k), Kind::Object) => Some(h.get(node, k)?).filter(|v| h.kind(v) != Kind::Undefined),
            (PathSeg::Index(i), Kind::Array) if *i < h.array_len(node)? => Some(h.array_get(node, *i)?),
            _ => None,
        })
    };
    let mut node = root.clone();
    for seg in parents {
        match slot(&node, seg)? {
            Some(next) => node = next,
            None => return Ok(()),
        }
    }
    let value = match &patch.op {
        PatchOp::AppendString(s) => match slot(&node, last)?.and_then(|v| h.as_string(&v)) {
            Some(text) => h.string(&(text + s)),
            None => return Ok(()),
        },
        PatchOp::SetObject => h.object(&[]),
        PatchOp::SetArray => h.array(&[]),
        PatchOp::SetString(s) => h.string(s),
        PatchOp::SetValue(Scalar::Null) => h.null(),
        PatchOp::SetValue(Scalar::Bool(b)) => h.boolean(*b),
        PatchOp::SetValue(Scalar::Number(x)) => h.number(*x),
    };
    match (last, h.kind(&node)) {
        (PathSeg::Key(k), Kind::Object) => h.set(&node, k, &value),
        (PathSeg::Index(i), Kind::Array) => {
            let len = h.array_len(&node)?;
            if *i < len {
                h.array_set(&node, *i, &value)
            } else if *i == len {
                h.array_push(&node, &value)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// The live arguments after all of `text` as an object of the host (`parse_partial`, built in the engine): what the
/// loop's `partialToolArguments` answers `streamProxy` (P-6.4.2).
pub fn partial_arguments<H: Host>(h: &H, text: &str) -> Result<H::V, H::V> {
    let mut parser = PartialJson::new();
    let mut patches = Vec::new();
    parser.push(text, &mut patches);
    let root = h.object(&[]);
    for patch in &patches {
        apply_on_host(h, &root, patch)?;
    }
    Ok(root)
}

/// Feeds all of `text` at once and applies the patches to `{}`: the live value after `text`.
pub fn parse_partial(text: &str) -> Value {
    let mut parser = PartialJson::new();
    let mut patches = Vec::new();
    parser.push(text, &mut patches);
    let mut root = Value::Object(Map::new());
    for patch in &patches {
        apply(&mut root, patch);
    }
    root
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
    #![allow(clippy::arithmetic_side_effects)]

    use super::*;
    use crate::core::test_host::TestHost;
    use crate::core::text::json::js_json_stringify;
    use proptest::prelude::*;
    use serde_json::json;

    /// The patches of `pieces` fed one by one, applied by both appliers (`apply` on a `Value`, `apply_on_host` on an
    /// object of the host, as the loop's `partialToolArguments` does), each as JS would print it.
    fn both_appliers(pieces: &[&str]) -> (String, String) {
        let mut parser = PartialJson::new();
        let mut patches = Vec::new();
        for piece in pieces {
            parser.push(piece, &mut patches);
        }
        let h = TestHost::new();
        let root = h.object(&[]);
        let mut value = json!({});
        for patch in &patches {
            apply_on_host(&h, &root, patch).unwrap();
            apply(&mut value, patch);
        }
        (js_json_stringify(&root.to_json()), js_json_stringify(&value))
    }

    fn key(k: &str) -> PathSeg {
        PathSeg::Key(k.to_string())
    }

    /// Feeds `fragments` one by one; returns the live value after each and the final patches.
    fn feed(fragments: &[&str]) -> (Vec<Value>, Vec<Patch>) {
        let mut p = PartialJson::new();
        let mut root = json!({});
        let mut values = Vec::new();
        let mut all = Vec::new();
        for f in fragments {
            let mut out = Vec::new();
            p.push(f, &mut out);
            for patch in &out {
                apply(&mut root, patch);
            }
            all.extend(out);
            values.push(root.clone());
        }
        (values, all)
    }

    /// The live value after feeding `text` one character at a time.
    fn charwise(text: &str) -> Value {
        let mut buf = [0u8; 4];
        let pieces: Vec<String> = text.chars().map(|c| c.encode_utf8(&mut buf).to_string()).collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        feed(&refs).0.pop().unwrap_or_else(|| json!({}))
    }

    #[test]
    fn p_6_4_2_values_grow_fragment_by_fragment() {
        let (values, _) =
            feed(&[r#"{"path": "/tm"#, r#"p/a.txt", "n": 12"#, r#", "ok": tr"#, r#"ue, "list": [1, "x"#, r#"y"]}"#]);
        assert_eq!(
            values,
            vec![
                json!({"path": "/tm"}),
                json!({"path": "/tmp/a.txt"}),
                json!({"path": "/tmp/a.txt", "n": 12}),
                json!({"path": "/tmp/a.txt", "n": 12, "ok": true, "list": [1, "x"]}),
                json!({"path": "/tmp/a.txt", "n": 12, "ok": true, "list": [1, "xy"]}),
            ]
        );
    }

    #[test]
    fn p_6_4_2_exact_patches() {
        let (_, patches) = feed(&[r#"{"a": {"b": ["#, r#""hi"#, r#" there", 1.5, null]"#, "}}"]);
        let ab = || vec![key("a"), key("b")];
        let ab0 = || vec![key("a"), key("b"), PathSeg::Index(0)];
        assert_eq!(
            patches,
            vec![
                Patch { path: vec![key("a")], op: PatchOp::SetObject },
                Patch { path: ab(), op: PatchOp::SetArray },
                Patch { path: ab0(), op: PatchOp::SetString("hi".into()) },
                Patch { path: ab0(), op: PatchOp::AppendString(" there".into()) },
                Patch { path: vec![key("a"), key("b"), PathSeg::Index(1)], op: PatchOp::SetValue(Scalar::Number(1.5)) },
                Patch { path: vec![key("a"), key("b"), PathSeg::Index(2)], op: PatchOp::SetValue(Scalar::Null) },
            ]
        );
    }

    #[test]
    fn p_6_4_2_string_appears_when_it_starts_even_empty() {
        let (values, patches) = feed(&[r#"{"a": ""#, "", "x", r#"""#, "}"]);
        assert_eq!(values[0], json!({"a": ""}));
        assert_eq!(values[2], json!({"a": "x"}));
        // No empty appends: one SetString, one AppendString.
        assert_eq!(patches.len(), 2);
    }

    #[test]
    fn p_6_4_2_key_appears_once_its_value_starts() {
        assert_eq!(parse_partial(r#"{"a"#), json!({}));
        assert_eq!(parse_partial(r#"{"a""#), json!({}));
        assert_eq!(parse_partial(r#"{"a" :"#), json!({}));
        assert_eq!(parse_partial(r#"{"a" : ["#), json!({"a": []}));
        assert_eq!(parse_partial(r#"{"a" : {"#), json!({"a": {}}));
        assert_eq!(parse_partial(r#"{"a" : ""#), json!({"a": ""}));
        assert_eq!(parse_partial(r#"{"a" : 1"#), json!({}));
        assert_eq!(parse_partial(r#"{"a" : 1 "#), json!({"a": 1}));
    }

    #[test]
    fn p_6_4_2_scalars_appear_only_when_terminated() {
        assert_eq!(parse_partial(r#"{"a": -12.5e3"#), json!({}));
        // What JS reads: the number's double (an integral one is an integer `Value`).
        assert_eq!(parse_partial(r#"{"a": -12.5e3}"#), json!({"a": -12500}));
        assert_eq!(parse_partial(r#"{"a": -0.5e0 }"#), json!({"a": -0.5}));
        assert_eq!(parse_partial(r#"{"a": [1, 2"#), json!({"a": [1]}));
        assert_eq!(parse_partial(r#"{"a": [1, 2]"#), json!({"a": [1, 2]}));
        assert_eq!(parse_partial(r#"{"a": tru"#), json!({}));
        assert_eq!(parse_partial(r#"{"a": true"#), json!({}));
        assert_eq!(parse_partial("{\"a\": true\n"), json!({"a": true}));
        assert_eq!(parse_partial(r#"{"a": false,"b":null}"#), json!({"a": false, "b": null}));
        // Out of f64 range: JSON.parse gives ±Infinity, not representable here → null.
        assert_eq!(parse_partial(r#"{"a": 1e400, "b": -1e400}"#), json!({"a": null, "b": null}));
        // Past 2^53 the double JS reads (12345678901234567168).
        assert_eq!(parse_partial(r#"{"a": 12345678901234567890}"#), json!({"a": 12345678901234567890.0}));
        assert_eq!(
            js_json_stringify(&parse_partial(r#"{"a": 12345678901234567890}"#)),
            r#"{"a":12345678901234567000}"#
        );
    }

    #[test]
    fn p_6_4_2_escapes_decoded_and_incomplete_ones_held_back() {
        let text = r#"{"s": "a\n\t\"\\\/\b\f\r\u00e9\uD83D\uDE00z"}"#;
        let expected = json!({"s": "a\n\t\"\\/\u{8}\u{c}\r\u{e9}\u{1F600}z"});
        assert_eq!(parse_partial(text), expected);
        assert_eq!(charwise(text), expected);
        // Held back: a lone backslash, a partial \u, a high surrogate awaiting its pair.
        assert_eq!(parse_partial(r#"{"s": "a\"#), json!({"s": "a"}));
        assert_eq!(parse_partial(r#"{"s": "a\u00"#), json!({"s": "a"}));
        assert_eq!(parse_partial(r#"{"s": "a\uD83D"#), json!({"s": "a"}));
        assert_eq!(parse_partial(r#"{"s": "a\uD83D\"#), json!({"s": "a"}));
        assert_eq!(parse_partial(r#"{"s": "a\uD83D\uDE"#), json!({"s": "a"}));
        assert_eq!(parse_partial(r#"{"s": "a\uD83D\uDE00"#), json!({"s": "a\u{1F600}"}));
        // Escapes split over fragments.
        let (values, _) = feed(&[r#"{"s": "x\"#, "u", "D8", "3D", r#"\"#, "uDE00", r#"\"#, "n", r#""}"#]);
        assert_eq!(
            values.iter().map(|v| v["s"].as_str().unwrap()).collect::<Vec<_>>(),
            vec!["x", "x", "x", "x", "x", "x\u{1F600}", "x\u{1F600}", "x\u{1F600}\n", "x\u{1F600}\n"]
        );
    }

    #[test]
    fn p_6_4_2_lone_surrogates_are_kept() {
        let units = |v: &Value, key: &str| crate::core::text::wtf::to_utf16(v[key].as_str().unwrap());
        assert_eq!(units(&parse_partial(r#"{"s": "\uD800"}"#), "s"), [0xD800]);
        assert_eq!(units(&parse_partial(r#"{"s": "\uDC00x"}"#), "s"), [0xDC00, 0x78]);
        assert_eq!(units(&parse_partial(r#"{"s": "\uD800\uD800\uDC00"}"#), "s"), [0xD800, 0xD800, 0xDC00]);
        assert_eq!(units(&parse_partial(r#"{"s": "\uD800\n"}"#), "s"), [0xD800, 0x0A]);
        assert_eq!(units(&parse_partial(r#"{"s": "\uD800\u0041"}"#), "s"), [0xD800, 0x41]);
        let keyed = parse_partial(r#"{"\uD800": 1}"#);
        let key = keyed.as_object().unwrap().keys().next().unwrap();
        assert_eq!(crate::core::text::wtf::to_utf16(key), [0xD800]);
    }

    #[test]
    fn p_6_4_2_string_tolerance_matches_the_repair_pass() {
        // Raw control characters are kept; a bad escape is a literal backslash.
        assert_eq!(parse_partial("{\"s\": \"a\nb\tc\u{1}\"}"), json!({"s": "a\nb\tc\u{1}"}));
        assert_eq!(parse_partial(r#"{"s": "C:\dir\x"}"#), json!({"s": "C:\\dir\\x"}));
        assert_eq!(parse_partial(r#"{"s": "\u12G"}"#), json!({"s": "\\u12G"}));
        assert_eq!(parse_partial(r#"{"s": "\u12"}"#), json!({"s": "\\u12"}));
        assert_eq!(parse_partial(r#"{"s": "\u"}"#), json!({"s": "\\u"}));
        assert_eq!(parse_partial(r#"{"s": "\u\"}"#), json!({"s": "\\u\"}"}));
        let lone = parse_partial(r#"{"s": "\uD83D\q"}"#);
        assert_eq!(crate::core::text::wtf::to_utf16(lone["s"].as_str().unwrap()), [0xD83D, 0x5C, 0x71]);
        assert_eq!(parse_partial(r#"{"s": "\é"}"#), json!({"s": "\\é"}));
    }

    #[test]
    fn p_6_4_2_non_object_root_leaves_empty_object() {
        for text in [r#"[1, 2]"#, r#""str""#, "12 ", "true ", "null ", "x", "\u{FEFF}{}"] {
            let (_, patches) = feed(&[text]);
            assert!(patches.is_empty(), "{text}");
            assert_eq!(parse_partial(text), json!({}));
        }
        assert_eq!(parse_partial(""), json!({}));
        assert_eq!(parse_partial("  \n"), json!({}));
    }

    #[test]
    fn p_6_4_2_malformed_input_freezes_last_good_value() {
        let cases = [
            (r#"{"a": 1, "b": x, "c": 2}"#, json!({"a": 1})),
            (r#"{"a": 1,}"#, json!({"a": 1})),
            (r#"{"a": [1,], "b": 2}"#, json!({"a": [1]})),
            (r#"{"a": 01, "b": 2}"#, json!({})),
            (r#"{"a": 1.}"#, json!({})),
            (r#"{"a": "s" "b": 2}"#, json!({"a": "s"})),
            (r#"{"a" 1}"#, json!({})),
            (r#"{a: 1}"#, json!({})),
            (r#"{"a": [1 2]}"#, json!({"a": [1]})),
            (r#"{"a": {"b": 1]}"#, json!({"a": {"b": 1}})),
            (r#"{"a": 1} {"b": 2}"#, json!({"a": 1})),
            (r#"{"a": truex}"#, json!({})),
            (r#"{"a": 1"b"}"#, json!({})),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_partial(text), expected, "{text}");
            assert_eq!(charwise(text), expected, "{text}");
            // Frozen: nothing more, whatever follows.
            let mut p = PartialJson::new();
            let mut out = Vec::new();
            p.push(text, &mut out);
            out.clear();
            p.push(r#", "z": "more"}"#, &mut out);
            assert!(out.is_empty(), "{text}");
        }
    }

    #[test]
    fn p_6_4_2_duplicate_keys_last_wins() {
        assert_eq!(parse_partial(r#"{"a": 1, "b": 2, "a": [3]}"#), json!({"a": [3], "b": 2}));
        let v = parse_partial(r#"{"a": 1, "b": 2, "a": "x"}"#);
        assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(parse_partial(r#"{"__proto__": {"x": 1}}"#), json!({"__proto__": {"x": 1}}));
    }

    #[test]
    fn e_8_4_1_nesting_limit_512() {
        // The root object plus 511 arrays = 512 containers: fine.
        let ok = format!("{{\"a\":{}{}}}", "[".repeat(511), "]".repeat(511));
        let v = parse_partial(&ok);
        let mut node = &v["a"];
        for _ in 0..510 {
            node = &node[0];
        }
        assert_eq!(node, &json!([]));
        // One more freezes the live value where it stood.
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(512), "]".repeat(512));
        let v = parse_partial(&deep);
        let mut node = &v["a"];
        for _ in 0..510 {
            node = &node[0];
        }
        assert_eq!(node, &json!([]));
        // A very deep input does not overflow anything.
        let v = parse_partial(&format!("{{\"a\":{}", "[".repeat(100_000)));
        assert!(v["a"].is_array());
    }

    #[test]
    fn p_6_4_2_long_key_path_freezes_live_value() {
        let k = "k".repeat(600);
        let text = format!("{{\"{k}\": {{\"{k}\": 1, \"x\": 2}}, \"y\": 3}}");
        // The second key would make the path 1200 key bytes: frozen with the first container open.
        assert_eq!(parse_partial(&text), json!({ k.clone(): {} }));
        let ok = format!("{{\"{k}\": {{\"{}\": 1}}}}", "k".repeat(424));
        assert_eq!(parse_partial(&ok), json!({ k.clone(): { "k".repeat(424): 1 } }));
    }

    #[test]
    fn apply_ignores_patches_without_parent() {
        let mut root = json!({"a": [1]});
        apply(&mut root, &Patch { path: vec![key("x"), key("y")], op: PatchOp::SetArray });
        apply(&mut root, &Patch { path: vec![key("a"), PathSeg::Index(5)], op: PatchOp::SetArray });
        apply(&mut root, &Patch { path: vec![key("a"), key("b")], op: PatchOp::SetArray });
        apply(&mut root, &Patch { path: vec![key("a"), PathSeg::Index(0)], op: PatchOp::AppendString("x".into()) });
        assert_eq!(root, json!({"a": [1]}));
        apply(&mut root, &Patch { path: vec![key("a"), PathSeg::Index(1)], op: PatchOp::SetString("s".into()) });
        apply(&mut root, &Patch { path: vec![key("a"), PathSeg::Index(1)], op: PatchOp::AppendString("t".into()) });
        apply(
            &mut root,
            &Patch { path: vec![key("a"), PathSeg::Index(0)], op: PatchOp::SetValue(Scalar::Number(2.0)) },
        );
        assert_eq!(root, json!({"a": [2, "st"]}));
        apply(&mut root, &Patch { path: vec![], op: PatchOp::SetObject });
        assert_eq!(root, json!({}));
    }

    /// Realistic arguments of about `size` bytes: a file write with a long escaped string plus an
    /// array of small edit objects.
    fn document(size: usize) -> String {
        let mut s = String::from("{\"path\": \"src/main.rs\", \"content\": \"");
        let line = "fn main() {\\n    println!(\\\"hello, world \\u00e9\\\");\\n}\\n\\t// caf\u{e9} \\uD83D\\uDE00\\n";
        while s.len() < size / 2 {
            s.push_str(line);
        }
        s.push_str("\", \"edits\": [");
        let mut i = 0u64;
        while s.len() < size {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&format!(
                "{{\"line\": {i}, \"ok\": true, \"ratio\": -{i}.25e-3, \"text\": \"edit {i}\", \"tags\": [null, false]}}"
            ));
            i += 1;
        }
        s.push_str("]}");
        s
    }

    /// Work units and patch count for feeding `text` in `step`-byte fragments (ASCII-boundary safe).
    fn measure(text: &str, step: usize) -> (u64, usize, Value) {
        let mut p = PartialJson::new();
        let mut root = json!({});
        let mut patches = 0;
        let mut out = Vec::new();
        let mut i = 0;
        while i < text.len() {
            let mut end = (i + step).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            p.push(&text[i..end], &mut out);
            patches += out.len();
            for patch in out.drain(..) {
                apply(&mut root, &patch);
            }
            i = end;
        }
        (p.ops, patches, root)
    }

    #[test]
    fn p_6_4_2_linear_work_4mib_vs_1mib_in_16_byte_fragments() {
        let small = document(1 << 20);
        let large = document(4 << 20);
        let (ops_small, patches_small, v_small) = measure(&small, 16);
        let (ops_large, patches_large, v_large) = measure(&large, 16);
        assert_eq!(v_small, serde_json::from_str::<Value>(&small).unwrap());
        assert_eq!(v_large, serde_json::from_str::<Value>(&large).unwrap());
        let ratio = ops_large as f64 / ops_small as f64;
        let patch_ratio = patches_large as f64 / patches_small as f64;
        eprintln!(
            "linearity: 1 MiB → {ops_small} ops, {patches_small} patches; 4 MiB → {ops_large} ops, \
             {patches_large} patches; ops ratio {ratio:.3}, patch ratio {patch_ratio:.3}"
        );
        assert!((3.8..=4.2).contains(&ratio), "ops ratio {ratio}");
        assert!((3.8..=4.2).contains(&patch_ratio), "patch ratio {patch_ratio}");
        // Work per input byte stays small (bytes examined + paths + payload).
        assert!(ops_large < 4 * large.len() as u64, "{ops_large} ops for {} bytes", large.len());
    }

    #[test]
    fn p_6_4_2_linear_work_deep_long_keys_and_one_big_string() {
        // Adversarial shapes: keys near the path limit with an array of many small scalars, and a
        // single huge string fed in tiny fragments at depth 100.
        let shape_a = |n: usize| {
            let k = "k".repeat(1000);
            format!("{{\"{k}\": [{}0]}}", "1,".repeat(n))
        };
        let shape_b =
            |n: usize| format!("{}{{\"s\": \"{}\"}}{}", "{\"a\":".repeat(100), "x".repeat(n), "}".repeat(100));
        for (name, make) in [("long key", &shape_a as &dyn Fn(usize) -> String), ("deep string", &shape_b)] {
            let (small, large) = (make(1 << 16), make(1 << 18));
            let (ops_small, _, _) = measure(&small, 16);
            let (ops_large, _, _) = measure(&large, 16);
            let ratio = ops_large as f64 / ops_small as f64;
            eprintln!("linearity ({name}): {ops_small} → {ops_large} ops, ratio {ratio:.3}");
            assert!((3.8..=4.2).contains(&ratio), "{name}: ratio {ratio}");
        }
    }

    /// Arbitrary JSON values with short keys (serde_json limits nesting to 128 on parse).
    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
            "[a\"\\\\\n\u{0}-\u{1f}é😀/ ]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("[a-z\"\\\\é😀\n]{0,6}", inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn arb_object() -> impl Strategy<Value = Value> {
        proptest::collection::vec(("[a-z\"\\\\é😀\n]{0,6}", arb_value()), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().collect()))
    }

    /// Splits `text` at the given byte offsets (moved to character boundaries).
    fn fragments(text: &str, cuts: &[usize]) -> Vec<String> {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
        cuts.sort_unstable();
        let mut out = Vec::new();
        let mut prev = 0;
        for mut c in cuts {
            while !text.is_char_boundary(c) {
                c += 1;
            }
            if c >= prev {
                out.push(text[prev..c].to_string());
                prev = c;
            }
        }
        out.push(text[prev..].to_string());
        out
    }

    fn feed_owned(pieces: &[String]) -> Value {
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        feed(&refs).0.pop().unwrap_or_else(|| json!({}))
    }

    /// Inputs near JSON: fragments of JSON syntax, escapes and junk.
    fn jsonish() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            4 => proptest::sample::select(vec![
                "{", "}", "[", "]", ":", ",", "\"", "\\", "\\u", "\\uD83D", "\\uDE00", "\\n", " ", "\n", "true", "null",
                "-1.5e3", "0", "\"k\":",
            ])
            .prop_map(str::to_string),
            1 => "[a-f0-9]{1,4}",
            1 => any::<char>().prop_map(|c| c.to_string()),
        ];
        prop_oneof![proptest::collection::vec(atom, 0..40).prop_map(|v| format!("{{{}", v.concat())), any::<String>(),]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        #[test]
        fn p_6_4_2_valid_objects_in_random_fragments_equal_serde_json(
            value in arb_object(),
            pretty in any::<bool>(),
            cuts in proptest::collection::vec(any::<usize>(), 0..24),
        ) {
            let text = if pretty { serde_json::to_string_pretty(&value).unwrap() } else { value.to_string() };
            // Compared as JS reads them (`JSON.stringify` of the doubles): serde_json keeps integers past 2^53 exact.
            let expected = js_json_stringify(&serde_json::from_str(&text).unwrap());
            prop_assert_eq!(js_json_stringify(&feed_owned(&fragments(&text, &cuts))), expected.clone());
            prop_assert_eq!(js_json_stringify(&charwise(&text)), expected);
        }

        /// The two appliers of the patches (`apply` on a `Value`, `apply_on_host` on the engine's objects) give the
        /// same live value, for a valid document and for junk, fed whole (as `partial_arguments` does) and in
        /// fragments (string appends).
        #[test]
        fn p_6_4_2_the_host_applier_equals_the_value_applier(
            value in arb_object(),
            junk in jsonish(),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            for text in [value.to_string(), junk] {
                let pieces = fragments(&text, &cuts);
                let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
                for feed in [vec![text.as_str()], pieces] {
                    let (host, value) = both_appliers(&feed);
                    prop_assert_eq!(host, value, "{:?}", feed);
                }
            }
            let h = TestHost::new();
            let text = r#"{"a": [1, {"b": "c\u00e9"}], "n": -0.5e1, "t": true }"#;
            prop_assert_eq!(js_json_stringify(&partial_arguments(&h, text).unwrap().to_json()), js_json_stringify(&parse_partial(text)));
        }

        #[test]
        fn p_6_4_2_any_input_never_panics_and_fragmentation_does_not_matter(
            text in jsonish(),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            let whole = parse_partial(&text);
            prop_assert!(whole.is_object());
            prop_assert_eq!(&feed_owned(&fragments(&text, &cuts)), &whole);
            prop_assert_eq!(&charwise(&text), &whole);
        }

        #[test]
        fn p_6_4_2_live_value_converges_to_the_final_parse(text in jsonish()) {
            // Whenever the final parse (strict, then repaired) yields an object, the live value
            // after the whole text is that object.
            if let Ok(map) = super::super::repair::parse_tool_arguments(&text) {
                prop_assert_eq!(parse_partial(&text), Value::Object(map));
            }
        }
    }
}
