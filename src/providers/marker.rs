//! Markers for caller values the Rust tree does not hold itself (issue 13): the binding leaves a
//! string Rust cannot hold exactly (a lone surrogate, or the marker character) or an opaque,
//! only-forwarded value (tool-call `arguments`) in JS and puts `\u{FDD0}<s|v><index>.<len>\u{FDD1}`
//! in its place; `len` is the original's JSON length in UTF-16 units (a string's without quotes).
//! The wire formats pass markers through like any text; this module only measures them.

/// Starts a marker. A caller string containing it is itself carried as a marker.
pub const START: char = '\u{FDD0}';
pub const END: char = '\u{FDD1}';

/// A marker parsed from the start of `text` (which begins with `START`): its kind (`s` or `v`),
/// the original's JSON length, and the marker's length in bytes.
fn parse(text: &str) -> Option<(u8, usize, usize)> {
    let rest = text.strip_prefix(START)?;
    let kind = *rest.as_bytes().first()?;
    if kind != b's' && kind != b'v' {
        return None;
    }
    let end = rest.find(END)?;
    let (index, len) = rest.get(1..end)?.split_once('.')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let len: usize = len.parse().ok()?;
    Some((kind, len, START.len_utf8() + end + END.len_utf8()))
}

/// The UTF-16 length of JSON `text` as JS sees it once the markers' originals are back: a string
/// marker counts as its original's escaped length, a value marker with its two quotes as its
/// original's JSON length (P-6.2.7 `est`).
pub fn json_len(text: &str) -> usize {
    if !text.contains(START) {
        return if text.is_ascii() { text.len() } else { text.encode_utf16().count() };
    }
    let mut total = 0usize;
    let mut rest = text;
    while let Some(at) = rest.find(START) {
        let (head, tail) = rest.split_at(at);
        total += head.encode_utf16().count();
        match parse(tail) {
            Some((kind, len, size)) => {
                let quoted = head.ends_with('"') && tail.get(size..).is_some_and(|t| t.starts_with('"'));
                // The quotes around a value marker are part of the value's own JSON length.
                total = if kind == b'v' && quoted { total - 1 + len } else { total + len };
                rest = tail.get(size..).unwrap_or_default();
                if kind == b'v' && quoted {
                    rest = rest.get(1..).unwrap_or_default();
                }
            }
            None => {
                total += 1;
                rest = tail.get(START.len_utf8()..).unwrap_or_default();
            }
        }
    }
    total + rest.encode_utf16().count()
}

/// A string marker as the binding writes it (for tests of the wire formats).
#[cfg(test)]
pub fn string_marker(index: usize, len: usize) -> String {
    format!("{START}s{index}.{len}{END}")
}

/// A value marker as the binding writes it (for tests of the wire formats).
#[cfg(test)]
pub fn value_marker(index: usize, len: usize) -> String {
    format!("{START}v{index}.{len}{END}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_its_utf16_length() {
        assert_eq!(json_len(r#"{"a":"x"}"#), 9);
        assert_eq!(json_len("\"é😀\""), 5);
    }

    #[test]
    fn string_markers_count_as_the_escaped_original() {
        // `"a\ud800b"` as JSON.stringify writes it: a, six characters of escape, b.
        let text = format!("[\"a{}b\"]", string_marker(3, 8));
        assert_eq!(json_len(&text), "[\"a".len() + 8 + "b\"]".len());
        // Twice in one string, and next to another marker.
        let text = format!("\"{}{}\"", string_marker(0, 6), string_marker(12, 1));
        assert_eq!(json_len(&text), 2 + 6 + 1);
    }

    #[test]
    fn value_markers_count_as_the_original_json_with_their_quotes() {
        // `{"arguments":{"n":1}}` with the arguments left in JS (`{"n":1}` is 7 long).
        let text = format!("{{\"arguments\":\"{}\"}}", value_marker(0, 7));
        assert_eq!(json_len(&text), r#"{"arguments":{"n":1}}"#.len());
    }

    #[test]
    fn a_stray_start_character_counts_as_one() {
        let text = format!("\"{START}x{START}s1.{END}\"");
        // Not markers: every character counts as itself.
        assert_eq!(json_len(&text), 9);
    }
}
