//! The one incremental Server-Sent Events decoder shared by every built-in provider (P-6.3.1, P-6.1.8):
//! bytes → UTF-8 text → lines → events. It knows nothing of JSON or of any provider, and it never looks
//! at a byte twice: between chunks it keeps only a ≤ 3-byte UTF-8 carry, the unfinished line (or, for a
//! long data line, its pieces) and the fields of the event being built.
//!
//! Framing follows the WHATWG "event stream interpretation" algorithm, with two deliberate choices:
//! - at end of input (`finish`) an unterminated last line is processed and a pending event that has
//!   data is dispatched (P-6.3.1; WHATWG would discard it);
//! - `id` and `retry` are reported per event (the last valid `id` / `retry` field of the lines that
//!   built this event), not as connection state carried from earlier events. Carrying a
//!   last-event-id forward would copy it into every later event, which is not linear in the input.

//!
//! Memory is bounded (issue 13): one line and one event's data may hold at most `limit` bytes
//! (default [`DEFAULT_MAX_EVENT_BYTES`]), every buffer grows fallibly (`try_reserve`), so an oversized
//! or unallocatable event is an [`SseError`], never an abort. A long `data` line is appended straight
//! to the event's data (not copied there from a line buffer at its end), and a large event's data is
//! moved, not copied, into [`SseEvents`], which frees it on `clear`.

#![deny(clippy::arithmetic_side_effects)]

/// Default bound on one line and on one event's data: 64 MiB (the `maxStreamEventBytes` option).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// A partial `data` line this long goes straight into the event's data buffer.
const DIRECT_DATA_AFTER: usize = 4096;

/// A long data line is collected in pieces of this size, joined once when the line ends: growing
/// one buffer by doubling would leave every smaller buffer behind as a hole too small for the next,
/// about twice the line's size in all, where pieces plus the joined copy cost exactly twice.
const PIECE: usize = 1024 * 1024;

/// Event data at least this long is moved into [`SseEvents`] rather than copied.
const MOVE_DATA_AFTER: usize = 64 * 1024;

/// `SseEvents::clear` drops a text buffer grown past this, so one huge chunk is not kept for good.
const KEEP_TEXT_CAPACITY: usize = 1024 * 1024;

/// Once a line's data has been handed out (`SseDecoder::take_spill`), the rest of it is collected in pieces this
/// small: only what arrived since the last hand-out is held.
const SPILL_PIECE: usize = 64 * 1024;

/// Why decoding stopped. The decoder is unusable afterwards (the stream is abandoned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseError {
    /// A line or an event's data would exceed `limit` bytes.
    TooLarge { limit: usize },
    /// A buffer could not grow to `bytes` bytes (the allocator refused).
    OutOfMemory { bytes: usize },
}

impl SseError {
    /// The stream error text (the `errorMessage` of the request's final `error` event).
    pub fn message(&self) -> String {
        match self {
            SseError::TooLarge { limit } => {
                format!("Provider stream event exceeds the limit of {limit} bytes (maxStreamEventBytes)")
            }
            SseError::OutOfMemory { bytes } => {
                format!("Out of memory reading the provider stream: a buffer of {bytes} bytes could not be allocated")
            }
        }
    }
}

/// Appends `s` to `buf` if the result stays within `limit` bytes, growing `buf` fallibly: at most
/// doubling (not the allocator's guess), never past the limit.
fn append(buf: &mut String, s: &str, limit: usize) -> Result<(), SseError> {
    let need = buf.len().checked_add(s.len()).filter(|n| *n <= limit).ok_or(SseError::TooLarge { limit })?;
    if need > buf.capacity() {
        let target = need.max(buf.capacity().saturating_mul(2).min(limit)).max(64.min(limit));
        buf.try_reserve_exact(target.saturating_sub(buf.len())).map_err(|_| SseError::OutOfMemory { bytes: target })?;
    }
    buf.push_str(s);
    Ok(())
}

/// An owned copy of `s`, allocated fallibly.
fn copy(s: &str) -> Result<String, SseError> {
    let mut out = String::new();
    append(&mut out, s, usize::MAX)?;
    Ok(out)
}

/// One dispatched event, owned (tests and callers that keep events build it with
/// [`SseEventRef::to_event`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field's value; `None` when the event had none (or an empty one), i.e. the
    /// WHATWG default type `message`.
    pub event: Option<String>,
    /// The `data` lines of the event joined with `\n`.
    pub data: String,
    /// The last `id` field of this event (values containing U+0000 are ignored, as WHATWG says).
    pub id: Option<String>,
    /// The last `retry` field of this event whose value is ASCII digits only and fits a `u64`.
    pub retry: Option<u64>,
}

/// One dispatched event as [`SseEvents`] lends it: the same fields as [`SseEvent`], borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEventRef<'a> {
    pub event: Option<&'a str>,
    /// With `spilled`, only the end of the data: what came after the caller took the rest (`take_spill`).
    pub data: &'a str,
    pub id: Option<&'a str>,
    pub retry: Option<u64>,
    /// The data's beginning was handed to the caller (`SseDecoder::take_spill`); the event's data is that text
    /// followed by `data`.
    pub spilled: bool,
}

impl SseEventRef<'_> {
    pub fn to_event(&self) -> SseEvent {
        SseEvent {
            event: self.event.map(str::to_string),
            data: self.data.to_string(),
            id: self.id.map(str::to_string),
            retry: self.retry,
        }
    }
}

/// The events dispatched by one or more `push` calls, their texts side by side in one buffer:
/// a caller that clears and refills it per network chunk allocates nothing per event once the
/// buffer has grown to a chunk's size.
/// Large event data is held apart, moved in whole from the decoder.
#[derive(Debug, Default)]
pub struct SseEvents {
    text: String,
    spans: Vec<Span>,
    owned: Vec<String>,
    /// How many events were pushed with `spilled` since the last `clear`.
    spilled: usize,
}

/// Where one event's data is.
#[derive(Clone, Copy, Debug)]
enum Data {
    /// A byte range of `SseEvents::text`.
    Text(usize, usize),
    /// An index into `SseEvents::owned`.
    Owned(usize),
}

/// Byte ranges of one event's fields in `SseEvents::text`.
#[derive(Clone, Copy, Debug)]
struct Span {
    /// Empty for "no event type".
    event: (usize, usize),
    data: Data,
    id: Option<(usize, usize)>,
    retry: Option<u64>,
    spilled: bool,
}

impl SseEvents {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Forgets the events, keeping the allocations of ordinary size (large data is freed).
    pub fn clear(&mut self) {
        if self.text.capacity() > KEEP_TEXT_CAPACITY {
            self.text = String::new();
        }
        self.text.clear();
        self.spans.clear();
        self.owned.clear();
        self.spilled = 0;
    }

    /// How many of the events were spilled (see [`SseEventRef::spilled`]).
    pub fn spilled(&self) -> usize {
        self.spilled
    }

    /// The events in dispatch order.
    pub fn iter(&self) -> impl Iterator<Item = SseEventRef<'_>> {
        self.spans.iter().map(|span| {
            let field = |(start, end): (usize, usize)| self.text.get(start..end).unwrap_or_default();
            let event = field(span.event);
            let data = match span.data {
                Data::Text(start, end) => field((start, end)),
                Data::Owned(i) => self.owned.get(i).map(String::as_str).unwrap_or_default(),
            };
            SseEventRef {
                event: (!event.is_empty()).then_some(event),
                data,
                id: span.id.map(field),
                retry: span.retry,
                spilled: span.spilled,
            }
        })
    }

    /// Adds an event; data of [`MOVE_DATA_AFTER`] bytes or more is taken from `data` (left empty).
    fn push(
        &mut self,
        event: &str,
        data: &mut String,
        id: Option<&str>,
        retry: Option<u64>,
        spilled: bool,
    ) -> Result<(), SseError> {
        let text = &mut self.text;
        let mut add = |s: &str| {
            let start = text.len();
            append(text, s, usize::MAX).map(|()| (start, text.len()))
        };
        let event = add(event)?;
        let id = id.map(&mut add).transpose()?;
        let data = if data.len() >= MOVE_DATA_AFTER {
            self.owned.try_reserve(1).map_err(|_| SseError::OutOfMemory { bytes: std::mem::size_of::<String>() })?;
            self.owned.push(std::mem::take(data));
            Data::Owned(self.owned.len().saturating_sub(1))
        } else {
            let (start, end) = add(data)?;
            Data::Text(start, end)
        };
        self.spans.try_reserve(1).map_err(|_| SseError::OutOfMemory { bytes: std::mem::size_of::<Span>() })?;
        self.spans.push(Span { event, data, id, retry, spilled });
        self.spilled = self.spilled.saturating_add(usize::from(spilled));
        Ok(())
    }
}

/// Incremental decoder: feed network chunks with [`SseDecoder::push`], then call
/// [`SseDecoder::finish`] once at end of input. Events are appended to `out` as soon as their
/// terminating blank line has been seen.
#[derive(Debug)]
pub struct SseDecoder {
    /// The most bytes one line, or one event's data, may hold.
    limit: usize,
    /// The unfinished line is a `data` line being collected in `pieces` for `data` (its prefix
    /// and separator already handled).
    data_line: bool,
    /// The rest of a long data line so far (see [`PIECE`]), and their total length.
    pieces: Vec<String>,
    pieces_len: usize,
    /// The first bytes of a UTF-8 sequence split across chunks (at most 3; always a valid prefix).
    carry: Vec<u8>,
    /// Whether the first decoded character (a possible BOM) has been looked at.
    bom_checked: bool,
    /// The last line ended with `\r`: a `\n` at the start of the next text belongs to it (P-6.1.8).
    after_cr: bool,
    /// The unfinished current line.
    line: String,
    /// The event being built (WHATWG: event type buffer, data buffer).
    event: String,
    /// The data lines joined with `\n` (WHATWG keeps a trailing `\n` and strips it at dispatch; here
    /// `has_data` says whether a data line came).
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<u64>,
    /// A data line holding this many bytes may be handed to the caller (`take_spill`); `usize::MAX`: never.
    spill_after: usize,
    /// The event's data so far was handed to the caller, this many bytes of it.
    spilled: Option<usize>,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::with_limit(DEFAULT_MAX_EVENT_BYTES)
    }
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder whose lines and event data may hold at most `limit` bytes each.
    pub fn with_limit(limit: usize) -> Self {
        SseDecoder {
            limit,
            data_line: false,
            pieces: Vec::new(),
            pieces_len: 0,
            carry: Vec::new(),
            bom_checked: false,
            after_cr: false,
            line: String::new(),
            event: String::new(),
            data: String::new(),
            has_data: false,
            id: None,
            retry: None,
            spill_after: usize::MAX,
            spilled: None,
        }
    }

    /// Issue 34: lets a long data line leave the decoder as it arrives. Once a data line holds `after` bytes,
    /// `take_spill` hands out what the event's data holds so far, and later calls what arrived since; the event is
    /// then dispatched with `spilled` and only the data that came after the last hand-out. The limit still counts
    /// the whole data.
    pub fn spill_long_lines(&mut self, after: usize) {
        self.spill_after = after;
    }

    /// Calls `each` with the event data held so far (in order, maybe in several parts) and forgets it, when the
    /// current line is a data line past the `spill_long_lines` threshold or its data was spilled before. Returns
    /// whether it handed anything out.
    pub fn take_spill(&mut self, each: &mut dyn FnMut(&str)) -> bool {
        let held = self.data.len().saturating_add(self.pieces_len);
        if !self.data_line || held == 0 || (self.spilled.is_none() && held < self.spill_after) {
            return false;
        }
        each(&self.data);
        self.data.clear();
        for piece in &self.pieces {
            each(piece);
        }
        // The last piece's allocation is kept for what comes next; the rest are freed.
        let last = self.pieces.pop();
        self.pieces.clear();
        if let Some(mut last) = last {
            last.clear();
            self.pieces.push(last);
        }
        self.pieces_len = 0;
        self.spilled = Some(self.spilled.unwrap_or(0).saturating_add(held));
        true
    }

    /// The bytes of the event's data held by the caller.
    fn spilled_len(&self) -> usize {
        self.spilled.unwrap_or(0)
    }

    /// Decodes one network chunk. Cost: proportional to `bytes.len()` plus the events produced.
    pub fn push(&mut self, bytes: &[u8], out: &mut SseEvents) -> Result<(), SseError> {
        let rest = self.complete_carry(bytes, out)?;
        // The common case, checked at the speed of `from_utf8`: the whole chunk is valid.
        if let Ok(text) = std::str::from_utf8(rest) {
            return self.feed_text(text, out);
        }
        let total = rest.len();
        let mut seen = 0usize;
        for chunk in rest.utf8_chunks() {
            self.feed_text(chunk.valid(), out)?;
            let invalid = chunk.invalid();
            seen = seen.saturating_add(chunk.valid().len()).saturating_add(invalid.len());
            if invalid.is_empty() {
                continue;
            }
            if seen == total && is_truncated_prefix(invalid) {
                // The chunk ends inside a character: wait for its remaining bytes.
                self.carry.extend_from_slice(invalid);
            } else {
                // WHATWG UTF-8 decode: one U+FFFD per maximal invalid subpart, which is exactly how
                // `utf8_chunks` splits the input.
                self.feed_text("\u{FFFD}", out)?;
            }
        }
        Ok(())
    }

    /// End of input: flushes the decoder (an incomplete character becomes U+FFFD, like a streaming
    /// `TextDecoder`'s final call), processes an unterminated last line, and dispatches a pending
    /// event that has data. The decoder is then reset and may decode a new stream.
    pub fn finish(&mut self, out: &mut SseEvents) -> Result<(), SseError> {
        if !self.carry.is_empty() {
            self.carry.clear();
            self.feed_text("\u{FFFD}", out)?;
        }
        if self.data_line {
            self.end_data_line("")?;
        } else if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out)?;
        }
        self.dispatch(out)?;
        let spill_after = self.spill_after;
        *self = Self::with_limit(self.limit);
        self.spill_after = spill_after;
        Ok(())
    }

    /// Completes a character split across chunks, taking bytes from the front of `bytes`; returns
    /// the bytes not consumed.
    fn complete_carry<'b>(&mut self, bytes: &'b [u8], out: &mut SseEvents) -> Result<&'b [u8], SseError> {
        let Some(&lead) = self.carry.first() else { return Ok(bytes) };
        let need = sequence_len(lead);
        let mut used = 0usize;
        while self.carry.len() < need {
            let Some(&b) = bytes.get(used) else { return Ok(&[]) };
            if !valid_continuation(lead, self.carry.len(), b) {
                // The carried bytes are a maximal invalid subpart; `b` starts afresh.
                self.carry.clear();
                self.feed_text("\u{FFFD}", out)?;
                return Ok(bytes.get(used..).unwrap_or_default());
            }
            self.carry.push(b);
            used = used.saturating_add(1);
        }
        let carry = std::mem::take(&mut self.carry);
        match std::str::from_utf8(&carry) {
            Ok(s) => self.feed_text(s, out)?,
            // Unreachable: every byte was checked above. Stay total anyway.
            Err(_) => self.feed_text("\u{FFFD}", out)?,
        }
        self.carry = carry;
        self.carry.clear();
        Ok(bytes.get(used..).unwrap_or_default())
    }

    /// Splits decoded text into lines; each byte is examined once.
    fn feed_text(&mut self, text: &str, out: &mut SseEvents) -> Result<(), SseError> {
        let mut text = text;
        if text.is_empty() {
            return Ok(());
        }
        if !self.bom_checked {
            self.bom_checked = true;
            text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        }
        if self.after_cr && !text.is_empty() {
            self.after_cr = false;
            text = text.strip_prefix('\n').unwrap_or(text);
        }
        let bytes = text.as_bytes();
        let mut start = 0usize;
        let mut i = 0usize;
        while let Some(offset) = bytes.get(i..).and_then(find_line_end) {
            i = i.saturating_add(offset);
            let b = bytes.get(i).copied().unwrap_or(b'\n');
            // `\r` and `\n` are ASCII, so both ends are character boundaries.
            let piece = text.get(start..i).unwrap_or_default();
            if self.data_line {
                self.end_data_line(piece)?;
            } else if self.line.is_empty() {
                if piece.len() > self.limit {
                    return Err(SseError::TooLarge { limit: self.limit });
                }
                self.process_line(piece, out)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                append(&mut line, piece, self.limit)?;
                self.process_line(&line, out)?;
                line.clear();
                self.line = line; // keep the allocation
            }
            i = i.saturating_add(1);
            if b == b'\r' {
                match bytes.get(i) {
                    Some(b'\n') => i = i.saturating_add(1),
                    Some(_) => {}
                    // `\r` ends this text: a `\n` starting the next chunk is part of this line end.
                    None => self.after_cr = true,
                }
            }
            start = i;
        }
        self.keep_partial(text.get(start..).unwrap_or_default())
    }

    /// Keeps the start of an unfinished line. A long `data` line goes to `pieces` as it arrives,
    /// not to the line buffer, so it is not held (and copied) once more as a line.
    fn keep_partial(&mut self, rest: &str) -> Result<(), SseError> {
        if self.data_line {
            return self.push_piece(rest);
        }
        append(&mut self.line, rest, self.limit)?;
        if self.line.len() >= DIRECT_DATA_AFTER && self.line.starts_with("data:") {
            let line = std::mem::take(&mut self.line);
            let value = line.get("data:".len()..).unwrap_or_default();
            self.push_data(value.strip_prefix(' ').unwrap_or(value))?;
            self.data_line = true;
        }
        Ok(())
    }

    /// WHATWG: process one line (without its line end).
    fn process_line(&mut self, line: &str, out: &mut SseEvents) -> Result<(), SseError> {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line.starts_with(':') {
            return Ok(()); // comment (keep-alive)
        }
        // The two fields every event has, without searching for the colon.
        if let Some(value) = line.strip_prefix("data:") {
            return self.push_data(value.strip_prefix(' ').unwrap_or(value));
        }
        if let Some(value) = line.strip_prefix("event:") {
            self.event.clear();
            return append(&mut self.event, value.strip_prefix(' ').unwrap_or(value), self.limit);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => {
                self.event.clear();
                append(&mut self.event, value, self.limit)?;
            }
            "data" => self.push_data(value)?,
            "id" if !value.contains('\0') => self.id = Some(copy(value)?),
            "retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Appends to the pieces of a long data line, within the limit for the event's data.
    fn push_piece(&mut self, text: &str) -> Result<(), SseError> {
        let total = self
            .data
            .len()
            .saturating_add(self.pieces_len)
            .saturating_add(text.len())
            .saturating_add(self.spilled_len());
        if total > self.limit {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        // A decoder that hands long lines out never holds one past its threshold: small pieces, so the 1 MiB ones do
        // not leave holes that a later line cannot reuse (wasm memory only grows).
        let size = if self.spilled.is_some() || self.spill_after != usize::MAX { SPILL_PIECE } else { PIECE };
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = self.pieces.last().map_or(0, |p| p.capacity().saturating_sub(p.len())).min(rest.len());
            while cut > 0 && !rest.is_char_boundary(cut) {
                cut = cut.saturating_sub(1);
            }
            if cut == 0 {
                let mut piece = String::new();
                piece.try_reserve_exact(size).map_err(|_| SseError::OutOfMemory { bytes: size })?;
                self.pieces.try_reserve(1).map_err(|_| SseError::OutOfMemory { bytes: size })?;
                self.pieces.push(piece);
                continue;
            }
            let (head, tail) = rest.split_at(cut);
            if let Some(last) = self.pieces.last_mut() {
                last.push_str(head);
            }
            self.pieces_len = self.pieces_len.saturating_add(head.len());
            rest = tail;
        }
        Ok(())
    }

    /// The long data line ended with `tail`: its pieces are joined into `data`, one exact allocation.
    fn end_data_line(&mut self, tail: &str) -> Result<(), SseError> {
        self.data_line = false;
        let total = self.data.len().saturating_add(self.pieces_len).saturating_add(tail.len());
        if total.saturating_add(self.spilled_len()) > self.limit {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        self.data
            .try_reserve_exact(total.saturating_sub(self.data.len()))
            .map_err(|_| SseError::OutOfMemory { bytes: total })?;
        for piece in self.pieces.drain(..) {
            self.data.push_str(&piece);
        }
        self.pieces = Vec::new();
        self.pieces_len = 0;
        self.data.push_str(tail);
        Ok(())
    }

    fn push_data(&mut self, value: &str) -> Result<(), SseError> {
        let sep = usize::from(self.has_data);
        if self.spilled_len().saturating_add(self.data.len()).saturating_add(sep).saturating_add(value.len())
            > self.limit
        {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        if self.has_data {
            append(&mut self.data, "\n", self.limit)?;
        }
        append(&mut self.data, value, self.limit)?;
        self.has_data = true;
        Ok(())
    }

    /// WHATWG: dispatch the event (only if its data buffer is non-empty), then reset the fields
    /// (the buffers keep their allocations for the next event).
    fn dispatch(&mut self, out: &mut SseEvents) -> Result<(), SseError> {
        let id = self.id.take();
        let retry = self.retry.take();
        let spilled = self.spilled.take().is_some();
        if std::mem::take(&mut self.has_data) {
            out.push(&self.event, &mut self.data, id.as_deref(), retry, spilled)?;
        }
        self.event.clear();
        self.data.clear();
        Ok(())
    }
}

/// The position of the first `\n` or `\r`. Every byte of a stream goes through here, so it looks
/// at eight bytes at a time: `x - 0x01..01 & !x & 0x80..80` is non-zero exactly when a byte of
/// `x` is zero, and `x` is the word XOR the byte sought, repeated.
fn find_line_end(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let mut start = 0usize;
    for chunk in bytes.chunks_exact(8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk).map(u64::from_le_bytes) else { break };
        if has_zero_byte(word ^ (ONES.wrapping_mul(u64::from(b'\n'))))
            || has_zero_byte(word ^ (ONES.wrapping_mul(u64::from(b'\r'))))
        {
            break;
        }
        start = start.saturating_add(8);
    }
    let found = bytes.get(start..)?.iter().position(|&b| b == b'\n' || b == b'\r')?;
    Some(start.saturating_add(found))
}

/// `retry` values: ASCII digits only; values that overflow `u64` are ignored.
fn parse_retry(value: &str) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.bytes().try_fold(0u64, |acc, b| {
        let digit = if b.is_ascii_digit() { u64::from(b.wrapping_sub(b'0')) } else { return None };
        acc.checked_mul(10)?.checked_add(digit)
    })
}

/// The length of the UTF-8 sequence a lead byte starts (0 for a byte that cannot lead one).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 0,
    }
}

/// Whether `b` may follow the `have` bytes already collected for a sequence led by `lead`
/// (the second byte has narrower ranges after E0, ED, F0 and F4).
fn valid_continuation(lead: u8, have: usize, b: u8) -> bool {
    let range = match (have, lead) {
        (1, 0xE0) => 0xA0..=0xBF,
        (1, 0xED) => 0x80..=0x9F,
        (1, 0xF0) => 0x90..=0xBF,
        (1, 0xF4) => 0x80..=0x8F,
        _ => 0x80..=0xBF,
    };
    range.contains(&b)
}

/// Whether `bytes` is a proper prefix of a valid UTF-8 sequence (a character cut by a chunk end).
fn is_truncated_prefix(bytes: &[u8]) -> bool {
    let Some((&lead, rest)) = bytes.split_first() else { return false };
    let need = sequence_len(lead);
    if need == 0 || bytes.len() >= need {
        return false;
    }
    rest.iter().enumerate().all(|(i, &b)| valid_continuation(lead, i.saturating_add(1), b))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
    #![allow(clippy::arithmetic_side_effects)]

    use super::*;
    use proptest::prelude::*;

    fn ev(data: &str) -> SseEvent {
        SseEvent { data: data.to_string(), ..SseEvent::default() }
    }

    fn named(event: &str, data: &str) -> SseEvent {
        SseEvent { event: Some(event.to_string()), data: data.to_string(), ..SseEvent::default() }
    }

    /// Feeds `chunks` one by one, then finishes.
    fn decode_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = SseEvents::new();
        let mut events = Vec::new();
        for c in chunks {
            // Cleared between chunks, as the driver does.
            out.clear();
            d.push(c, &mut out).unwrap();
            events.extend(owned(&out));
        }
        out.clear();
        d.finish(&mut out).unwrap();
        events.extend(owned(&out));
        events
    }

    /// `decode_chunks` with long lines spilled after `after` bytes, put together as the driver does: a spilled
    /// event's data is what `take_spill` handed out since the last spilled event, then its own `data`.
    fn decode_spilling(chunks: &[&[u8]], after: usize, limit: usize) -> Result<(Vec<SseEvent>, usize), SseError> {
        let mut d = SseDecoder::with_limit(limit);
        d.spill_long_lines(after);
        let mut out = SseEvents::new();
        let mut events = Vec::new();
        let mut held = String::new();
        let mut spills = 0usize;
        let collect = |out: &SseEvents, held: &mut String, events: &mut Vec<SseEvent>| {
            assert!(out.spilled() <= 1, "at most one spilled event per push");
            for e in out.iter() {
                let mut owned = e.to_event();
                if e.spilled {
                    owned.data = std::mem::take(held) + &owned.data;
                }
                events.push(owned);
            }
        };
        for c in chunks {
            out.clear();
            d.push(c, &mut out)?;
            collect(&out, &mut held, &mut events);
            if d.take_spill(&mut |s| held.push_str(s)) {
                spills += 1;
            }
        }
        out.clear();
        d.finish(&mut out)?;
        collect(&out, &mut held, &mut events);
        assert!(held.is_empty(), "every spilled text belongs to an event");
        Ok((events, spills))
    }

    fn owned(events: &SseEvents) -> Vec<SseEvent> {
        events.iter().map(|e| e.to_event()).collect()
    }

    fn decode(bytes: &[u8]) -> Vec<SseEvent> {
        decode_chunks(&[bytes])
    }

    /// Feeds every byte as its own chunk.
    fn decode_bytewise(bytes: &[u8]) -> Vec<SseEvent> {
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        decode_chunks(&chunks)
    }

    /// A non-incremental model of the same rules: whole-input lossy UTF-8 decode (what a
    /// `TextDecoder` produces for the whole input), BOM strip, split into lines, WHATWG fields.
    fn reference(bytes: &[u8]) -> Vec<SseEvent> {
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
        let mut lines = Vec::new();
        let mut cur = String::new();
        let mut chars = text.chars().peekable();
        let mut terminated = true;
        while let Some(c) = chars.next() {
            match c {
                '\r' => {
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    lines.push(std::mem::take(&mut cur));
                    terminated = true;
                }
                '\n' => {
                    lines.push(std::mem::take(&mut cur));
                    terminated = true;
                }
                c => {
                    cur.push(c);
                    terminated = false;
                }
            }
        }
        if !terminated {
            lines.push(cur);
        }
        lines.push(String::new()); // EOF dispatch
        let (mut out, mut event, mut data, mut id, mut retry) = (Vec::new(), String::new(), None::<String>, None, None);
        for line in lines {
            if line.is_empty() {
                if let Some(d) = data.take() {
                    out.push(SseEvent {
                        event: (!event.is_empty()).then(|| event.clone()),
                        data: d,
                        id: id.clone(),
                        retry,
                    });
                }
                event.clear();
                id = None;
                retry = None;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (f, v) = match line.split_once(':') {
                Some((f, v)) => (f.to_string(), v.strip_prefix(' ').unwrap_or(v).to_string()),
                None => (line.clone(), String::new()),
            };
            match f.as_str() {
                "event" => event = v,
                "data" => match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(&v);
                    }
                    None => data = Some(v),
                },
                "id" if !v.contains('\0') => id = Some(v),
                "retry" if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
                    if let Ok(n) = v.parse::<u64>() {
                        retry = Some(n);
                    }
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn p_6_3_1_basic_events_and_event_names() {
        let out = decode(b"event: ping\ndata: {\"a\":1}\n\ndata: two\n\n");
        assert_eq!(out, vec![named("ping", "{\"a\":1}"), ev("two")]);
    }

    #[test]
    fn p_6_3_1_multi_line_data_joined_with_newline() {
        assert_eq!(decode(b"data: a\ndata:b\ndata\ndata:  c\n\n"), vec![ev("a\nb\n\n c")]);
    }

    #[test]
    fn p_6_3_1_one_leading_space_stripped_only() {
        assert_eq!(decode(b"data:   x \n\n"), vec![ev("  x ")]);
        assert_eq!(decode(b"data:\tx\n\n"), vec![ev("\tx")]);
    }

    #[test]
    fn p_6_3_1_comments_and_unknown_fields_ignored() {
        let out = decode(b": keep-alive\n:\nfoo: bar\nDATA: no\ndata: yes\n: between\n\n");
        assert_eq!(out, vec![ev("yes")]);
    }

    #[test]
    fn p_6_3_1_event_without_data_is_not_dispatched_and_resets_type() {
        // WHATWG: an empty data buffer means no dispatch; the event type is reset anyway.
        assert_eq!(decode(b"event: a\n\ndata: x\n\n"), vec![ev("x")]);
        assert_eq!(decode(b"id: 1\nretry: 5\n\n"), vec![]);
        // An empty `data` line does set data: the event is dispatched with empty data.
        assert_eq!(decode(b"data\n\n"), vec![ev("")]);
        assert_eq!(decode(b"data:\n\n"), vec![ev("")]);
        assert_eq!(decode(b"event: e\ndata:\n\n"), vec![named("e", "")]);
    }

    #[test]
    fn p_6_3_1_line_without_colon_is_field_with_empty_value() {
        assert_eq!(decode(b"data\ndata\n\n"), vec![ev("\n")]);
        assert_eq!(decode(b"event\ndata: x\n\n"), vec![ev("x")]);
    }

    #[test]
    fn p_6_3_1_id_and_retry_fields() {
        let out = decode(b"id: 42\nretry: 1500\ndata: x\n\ndata: y\n\nid\nretry: 12a\ndata: z\n\n");
        assert_eq!(
            out,
            vec![
                SseEvent { data: "x".into(), id: Some("42".into()), retry: Some(1500), event: None },
                ev("y"),
                SseEvent { data: "z".into(), id: Some(String::new()), ..SseEvent::default() },
            ]
        );
        // A NUL in the id: ignored. Retry: digits only, no sign, no space, no overflow.
        assert_eq!(decode(b"id: a\0b\ndata: x\n\n")[0].id, None);
        assert_eq!(decode(b"retry: -1\ndata: x\n\n")[0].retry, None);
        assert_eq!(decode(b"retry:  7\ndata: x\n\n")[0].retry, None);
        assert_eq!(decode(b"retry:\ndata: x\n\n")[0].retry, None);
        assert_eq!(decode(b"retry: 99999999999999999999999\ndata: x\n\n")[0].retry, None);
        assert_eq!(decode(b"retry: 18446744073709551615\ndata: x\n\n")[0].retry, Some(u64::MAX));
        // The last valid field wins.
        assert_eq!(
            decode(b"retry: 1\nretry: x\nid: a\nid: b\ndata: x\n\n")[0],
            SseEvent { data: "x".into(), id: Some("b".into()), retry: Some(1), event: None }
        );
    }

    #[test]
    fn p_6_3_1_all_three_line_endings() {
        let expected = vec![named("e", "a\nb"), ev("c")];
        assert_eq!(decode(b"event: e\ndata: a\ndata: b\n\ndata: c\n\n"), expected);
        assert_eq!(decode(b"event: e\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"), expected);
        assert_eq!(decode(b"event: e\rdata: a\rdata: b\r\rdata: c\r\r"), expected);
        assert_eq!(decode(b"event: e\rdata: a\r\ndata: b\n\r\ndata: c\r\n\r"), expected);
    }

    #[test]
    fn p_6_1_8_crlf_split_across_chunks_is_one_line_end() {
        // The reference's Anthropic parser reads the lone "\n" as a blank line; here it is not.
        let out = decode_chunks(&[b"event: a\r", b"\ndata: x\r", b"\n", b"data: y\r", b"\n\r", b"\n"]);
        assert_eq!(out, vec![named("a", "x\ny")]);
        // A `\r` at a chunk end followed by something else is a line end on its own.
        assert_eq!(decode_chunks(&[b"data: x\r", b"\r"]), vec![ev("x")]);
        assert_eq!(decode_chunks(&[b"data: x\r", b"data: y\r\r"]), vec![ev("x\ny")]);
        // Empty chunks between `\r` and `\n` do not break the pair.
        assert_eq!(decode_chunks(&[b"data: x\r", b"", b"\n", b"", b"\r", b"", b"\n"]), vec![ev("x")]);
        // `\r\n\r\n` byte by byte.
        assert_eq!(decode_bytewise(b"data: a\r\n\r\ndata: b\r\n\r\n"), vec![ev("a"), ev("b")]);
    }

    #[test]
    fn p_6_3_1_split_utf8_characters_are_joined() {
        let text = "data: h\u{e9}\u{20ac}\u{1F600}\u{4e2d}\n\n".as_bytes();
        let expected = vec![ev("h\u{e9}\u{20ac}\u{1F600}\u{4e2d}")];
        assert_eq!(decode_bytewise(text), expected);
        for cut in 0..text.len() {
            assert_eq!(decode_chunks(&[&text[..cut], &text[cut..]]), expected, "cut at {cut}");
        }
        // A 4-byte character spread over three chunks with empty chunks in between.
        let smile = "\u{1F600}".as_bytes();
        let out = decode_chunks(&[b"data: ", &smile[..1], b"", &smile[1..3], &smile[3..], b"\n\n"]);
        assert_eq!(out, vec![ev("\u{1F600}")]);
    }

    #[test]
    fn p_6_3_1_invalid_utf8_becomes_replacement_characters() {
        // Maximal subparts, as TextDecoder: E2 82 (truncated) then 'x' → one U+FFFD; lone
        // continuation bytes → one each; overlong C0 80 → two; surrogate ED A0 80 → three.
        let bytes = b"data: a\xE2\x82xb\x80\x80c\xC0\x80d\xED\xA0\x80e\xF4\x90\x80\x80\n\n";
        let expected =
            "a\u{FFFD}xb\u{FFFD}\u{FFFD}c\u{FFFD}\u{FFFD}d\u{FFFD}\u{FFFD}\u{FFFD}e\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}";
        assert_eq!(decode(bytes), vec![ev(expected)]);
        assert_eq!(decode_bytewise(bytes), vec![ev(expected)]);
        // A truncated character at the very end of input: one U+FFFD at finish.
        assert_eq!(decode_chunks(&[b"data: a\xF0\x9F\x98"]), vec![ev("a\u{FFFD}")]);
        // A carried prefix broken by the next chunk's first byte: the byte is decoded afresh.
        assert_eq!(decode_chunks(&[b"data: \xE2\x82", b"\nq\n\n"]), vec![ev("\u{FFFD}")]);
        assert_eq!(decode_chunks(&[b"data: \xE2", b"\xE2\x82\xAC\n\n"]), vec![ev("\u{FFFD}\u{20ac}")]);
    }

    #[test]
    fn p_6_3_1_leading_bom_dropped_once() {
        assert_eq!(decode(b"\xEF\xBB\xBFdata: x\n\n"), vec![ev("x")]);
        // Split BOM.
        assert_eq!(decode_chunks(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]), vec![ev("x")]);
        // Only the first one: a second BOM makes the field name "\u{FEFF}data", unknown.
        assert_eq!(decode(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n"), vec![ev("y")]);
        // A BOM later in the stream is ordinary text.
        assert_eq!(decode(b"data: \xEF\xBB\xBFx\n\n"), vec![ev("\u{FEFF}x")]);
    }

    #[test]
    fn p_6_3_1_eof_flushes_pending_event() {
        assert_eq!(decode(b"data: x\n"), vec![ev("x")]);
        assert_eq!(decode(b"data: x"), vec![ev("x")]);
        assert_eq!(decode(b"event: e\ndata: x\r"), vec![named("e", "x")]);
        assert_eq!(decode(b"event: e\n"), vec![]);
        assert_eq!(decode(b": only a comment"), vec![]);
        assert_eq!(decode(b""), vec![]);
        // finish resets: the decoder can be used again, BOM handling included.
        let mut d = SseDecoder::new();
        let mut out = SseEvents::new();
        d.push(b"data: a", &mut out).unwrap();
        d.finish(&mut out).unwrap();
        d.push(b"\xEF\xBB\xBFdata: b\n\n", &mut out).unwrap();
        d.finish(&mut out).unwrap();
        assert_eq!(owned(&out), vec![ev("a"), ev("b")]);
    }

    #[test]
    fn p_6_3_1_events_dispatched_as_soon_as_blank_line_arrives() {
        let mut d = SseDecoder::new();
        let mut out = SseEvents::new();
        d.push(b"data: a\n", &mut out).unwrap();
        assert!(out.is_empty());
        d.push(b"\n", &mut out).unwrap();
        assert_eq!(owned(&out), vec![ev("a")]);
        d.push(b"data: b\r", &mut out).unwrap();
        d.push(b"\r", &mut out).unwrap();
        assert_eq!(owned(&out), vec![ev("a"), ev("b")]);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn find_line_end_finds_the_first_line_end_at_every_offset() {
        for len in 0..20 {
            for at in 0..=len {
                for end in [b'\n', b'\r'] {
                    let mut bytes = vec![b'x'; len];
                    if at < len {
                        bytes[at] = end;
                        // Near misses and a later line end must not confuse it.
                        bytes.extend_from_slice(b"\x0b\x0c\x8a\x8d\n");
                    }
                    let expected = bytes.iter().position(|&b| b == b'\n' || b == b'\r');
                    assert_eq!(find_line_end(&bytes), expected, "len {len}, at {at}");
                }
            }
        }
        assert_eq!(find_line_end(&b"\x0b\x0c\x8a\x8d\x0e\x09\x00\xff\x0b\x0c\x8a\x8d"[..]), None);
    }

    #[test]
    fn p_6_3_1_long_line_across_many_chunks() {
        let payload = "x".repeat(100_000);
        let text = format!("data: {payload}\n\n");
        let chunks: Vec<&[u8]> = text.as_bytes().chunks(7).collect();
        assert_eq!(decode_chunks(&chunks), vec![ev(&payload)]);
    }

    #[test]
    fn p_6_3_1_matches_reference_model_on_fixed_corpus() {
        let corpus: &[&[u8]] = &[
            b"event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: ping\ndata: {}\n\n",
            b"data: [DONE]\n\n",
            b"\r\n\r\ndata: x\r\n",
            b"data: a\r\r\rdata: b",
            b"\xEF\xBB\xBF: c\rdata:\xFF\n\n",
        ];
        for bytes in corpus {
            assert_eq!(decode(bytes), reference(bytes));
            assert_eq!(decode_bytewise(bytes), reference(bytes));
        }
    }

    /// Feeds `chunks` to a decoder with `limit`; the events, or the first error.
    fn decode_limited(chunks: &[&[u8]], limit: usize) -> Result<Vec<SseEvent>, SseError> {
        let mut d = SseDecoder::with_limit(limit);
        let mut out = SseEvents::new();
        let mut events = Vec::new();
        for c in chunks {
            out.clear();
            d.push(c, &mut out)?;
            events.extend(owned(&out));
        }
        out.clear();
        d.finish(&mut out)?;
        events.extend(owned(&out));
        Ok(events)
    }

    #[test]
    fn issue_34_a_long_data_line_leaves_the_decoder_as_it_arrives() {
        let line = "x".repeat(300_000);
        let bytes = format!("event: delta\ndata: {{\"a\":1}}\ndata: {line}\ndata: tail\n\ndata: small\n\n");
        let chunks: Vec<&[u8]> = bytes.as_bytes().chunks(65536).collect();
        let (events, spills) = decode_spilling(&chunks, 100_000, usize::MAX).unwrap();
        assert_eq!(events, vec![named("delta", &format!("{{\"a\":1}}\n{line}\ntail")), ev("small")]);
        // Handed out after the second, third and fourth chunk (past the threshold from 2 * 65536 bytes on); the
        // fifth ends the line, which then leaves with its event.
        assert_eq!(spills, 3);
        let mut d = SseDecoder::new();
        d.spill_long_lines(100_000);
        let mut out = SseEvents::new();
        for c in &chunks[..2] {
            d.push(c, &mut out).unwrap();
            d.take_spill(&mut |_| {});
            // What stays in the decoder is at most one chunk.
            assert!(d.data.len() + d.pieces_len <= 65536, "{}", d.data.len() + d.pieces_len);
        }
        // Below the threshold nothing is handed out, and events are not marked.
        let (events, spills) = decode_spilling(&chunks, 400_000, usize::MAX).unwrap();
        assert_eq!(spills, 0);
        assert_eq!(events.len(), 2);
        // The limit counts what was handed out.
        let limited = decode_spilling(&chunks, 100_000, 200_000);
        assert_eq!(limited, Err(SseError::TooLarge { limit: 200_000 }));
    }

    #[test]
    fn issue_13_line_and_event_limits_are_errors_not_aborts() {
        let too_large = Err(SseError::TooLarge { limit: 16 });
        // Exactly at the limit: fine ("data: " is 6 bytes, the line is 16).
        assert_eq!(decode_limited(&[b"data: 0123456789\n\n"], 16), Ok(vec![ev("0123456789")]));
        // One byte over, in one line: the line is refused, whether whole or split.
        assert_eq!(decode_limited(&[b"data: 0123456789a\n\n"], 16), too_large);
        assert_eq!(decode_limited(&[b"data: 01234", b"56789a", b"\n\n"], 16), too_large);
        // An unterminated line at end of input counts too.
        assert_eq!(decode_limited(&[b"data: 0123456789abc"], 16), too_large);
        // Comments and unknown fields are lines as well.
        assert_eq!(decode_limited(&[b": 0123456789abcdefgh\n"], 16), too_large);
        // Short lines whose joined data exceeds the limit: the event is refused.
        assert_eq!(decode_limited(&[b"data: 012345678\ndata: 0123456\n\n"], 16), too_large);
        assert_eq!(decode_limited(&[b"data: 01234567\ndata: 0123456\n\n"], 16), Ok(vec![ev("01234567\n0123456")]));
        // The limit is per event: many events of the limit's size are fine.
        let many = b"data: 0123456789\n\n".repeat(50);
        assert_eq!(decode_limited(&[&many], 16).map(|e| e.len()), Ok(50));
        // Text of the message.
        assert_eq!(
            SseError::TooLarge { limit: 16 }.message(),
            "Provider stream event exceeds the limit of 16 bytes (maxStreamEventBytes)"
        );
    }

    #[test]
    fn issue_13_default_limit_is_64_mib() {
        assert_eq!(SseDecoder::new().limit, 64 * 1024 * 1024);
        // `finish` resets the decoder but keeps its limit.
        let mut d = SseDecoder::with_limit(10);
        let mut out = SseEvents::new();
        d.finish(&mut out).unwrap();
        assert_eq!(d.push(b"data: 0123456789\n\n", &mut out), Err(SseError::TooLarge { limit: 10 }));
    }

    #[test]
    fn issue_13_an_allocation_the_allocator_refuses_is_an_error() {
        // A limit above what can be allocated: the reservation fails and says so (no abort).
        let mut buf = String::from("x");
        let huge = usize::MAX / 2;
        assert!(matches!(
            append(&mut buf, &"y".repeat(64), huge).and_then(|()| {
                // Force a growth to an impossible size.
                buf.try_reserve_exact(huge).map_err(|_| SseError::OutOfMemory { bytes: huge })
            }),
            Err(SseError::OutOfMemory { .. })
        ));
        let mut small = String::with_capacity(4);
        small.push_str("abcd");
        // Growing past capacity requests a doubling at most, never beyond the limit.
        append(&mut small, "e", 6).unwrap();
        assert_eq!((small.as_str(), small.capacity()), ("abcde", 6));
    }

    #[test]
    fn issue_13_long_data_lines_go_straight_to_the_data_and_large_data_is_moved() {
        let payload = "z".repeat(3 * MOVE_DATA_AFTER);
        let text = format!("event: big\ndata: {payload}\ndata:  tail\n\ndata: small\n\n");
        for size in [1000, 4095, 4096, 4097, 65536] {
            let chunks: Vec<&[u8]> = text.as_bytes().chunks(size).collect();
            let mut d = SseDecoder::with_limit(payload.len() + 7);
            let mut out = SseEvents::new();
            let mut events = Vec::new();
            for c in &chunks {
                out.clear();
                d.push(c, &mut out).unwrap();
                // The data of the big event never sat in the line buffer whole.
                assert!(d.line.capacity() < 2 * DIRECT_DATA_AFTER, "line buffer {}", d.line.capacity());
                // Nor was the data buffer grown by doubling while the line went on: pieces hold it.
                if d.data_line {
                    assert!(d.data.capacity() <= size + DIRECT_DATA_AFTER, "data buffer {}", d.data.capacity());
                    assert!(d.pieces.iter().all(|p| p.capacity() == PIECE));
                }
                events.extend(owned(&out));
                if out.iter().any(|e| e.event == Some("big")) {
                    assert_eq!(out.owned.len(), 1, "the large data is held apart");
                    assert!(d.data.capacity() < MOVE_DATA_AFTER, "and was moved, not copied");
                }
            }
            out.clear();
            d.finish(&mut out).unwrap();
            events.extend(owned(&out));
            let expected = vec![named("big", &format!("{payload}\n tail")), ev("small")];
            assert_eq!(events, expected, "chunks of {size}");
            assert_eq!(events, reference(text.as_bytes()));
        }
        // One byte over the limit on the direct path is still refused.
        let chunks: Vec<&[u8]> = text.as_bytes().chunks(4096).collect();
        assert_eq!(decode_limited(&chunks, payload.len() + 5), Err(SseError::TooLarge { limit: payload.len() + 5 }));
        // `clear` frees the held-apart data.
        let mut out = SseEvents::new();
        let mut d = SseDecoder::new();
        d.push(text.as_bytes(), &mut out).unwrap();
        out.clear();
        assert!(out.owned.capacity() > 0 && out.owned.is_empty());
    }

    /// Bytes biased toward the interesting ones: line ends, colons, field names, split UTF-8.
    fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
        let atom = prop_oneof![
            4 => proptest::sample::select(vec![
                &b"\n"[..], b"\r", b"\r\n", b"data:", b"data: ", b"event: ", b"id:", b"retry: ", b":", b" ", b"12",
                b"\xEF\xBB\xBF", "\u{1F600}".as_bytes(), "\u{20ac}".as_bytes(), b"\0",
            ])
            .prop_map(<[u8]>::to_vec),
            1 => any::<u8>().prop_map(|b| vec![b]),
            1 => "[a-z]{1,4}".prop_map(String::into_bytes),
        ];
        proptest::collection::vec(atom, 0..40).prop_map(|v| v.concat())
    }

    /// `bytes` cut at the given offsets (taken modulo its length + 1, in order).
    fn cut_at(bytes: &[u8], cuts: Vec<usize>) -> Vec<&[u8]> {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut prev = 0;
        for c in cuts {
            chunks.push(&bytes[prev..c]);
            prev = c;
        }
        chunks.push(&bytes[prev..]);
        chunks
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn issue_13_long_lines_any_chunking_match_reference(
            fields in proptest::collection::vec((
                proptest::sample::select(vec!["data:", "data: ", "data:  ", ": ", "event: ", "id: ", "dat"]),
                0usize..9000,
                proptest::sample::select(vec!["\n", "\r\n", "\r", "\n\n"]),
            ), 1..5),
            cuts in proptest::collection::vec(any::<usize>(), 0..6),
        ) {
            let mut bytes = Vec::new();
            for (i, (field, len, end)) in fields.iter().enumerate() {
                bytes.extend_from_slice(field.as_bytes());
                bytes.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *len));
                bytes.extend_from_slice(end.as_bytes());
            }
            let chunks = cut_at(&bytes, cuts);
            prop_assert_eq!(decode_chunks(&chunks), reference(&bytes));
        }

        /// Issue 34: a long data line handed out as it arrives gives the same events, whatever the chunking and
        /// the threshold, and the limit still counts the whole data.
        #[test]
        fn issue_34_spilled_long_lines_any_chunking_match_reference(
            fields in proptest::collection::vec((
                proptest::sample::select(vec!["data:", "data: ", "data:  ", ": ", "event: ", "id: ", "dat", "\n"]),
                0usize..9000,
                proptest::sample::select(vec!["\n", "\r\n", "\r", "\n\n", "é"]),
            ), 1..6),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
            after in 1usize..6000,
            limit in prop_oneof![Just(usize::MAX), 100usize..20000],
        ) {
            let mut bytes = Vec::new();
            for (i, (field, len, end)) in fields.iter().enumerate() {
                bytes.extend_from_slice(field.as_bytes());
                bytes.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *len));
                bytes.extend_from_slice(end.as_bytes());
            }
            let chunks = cut_at(&bytes, cuts);
            let plain = decode_limited(&chunks, limit);
            let spilled = decode_spilling(&chunks, after, limit).map(|(events, _)| events);
            prop_assert_eq!(&spilled, &plain);
            if limit == usize::MAX {
                prop_assert_eq!(spilled, Ok(reference(&bytes)));
            }
        }

        #[test]
        fn p_6_3_1_any_bytes_any_chunking_never_panics_and_matches_reference(
            bytes in prop_oneof![sse_bytes(), proptest::collection::vec(any::<u8>(), 0..200)],
            cuts in proptest::collection::vec(any::<usize>(), 0..8),
        ) {
            let chunks = cut_at(&bytes, cuts);
            let expected = reference(&bytes);
            prop_assert_eq!(&decode_chunks(&chunks), &expected);
            prop_assert_eq!(&decode_bytewise(&bytes), &expected);
        }
    }
}
