//! Markers for caller values the Rust tree does not hold itself (issue 13): the binding leaves a
//! string Rust cannot hold exactly (a lone surrogate, or the marker character) or an opaque,
//! only-forwarded value (tool-call `arguments`) in JS and puts `\u{FDD0}<s|v><index>.<len>\u{FDD1}`
//! in its place; `len` is the original's JSON length in UTF-16 units (a string's without quotes).
//! The wire formats pass markers through like any text; this module only measures them.

/// Starts a marker. A caller string containing it is itself carried as a marker.
pub const START: char = crate::core::text::PROJECTION_START;
pub const END: char = crate::core::text::PROJECTION_END;

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

/// The index of the string marker that `text` is, when it is exactly one (issue 34: a stream line's long strings
/// kept by the host).
pub fn whole_string(text: &str) -> Option<usize> {
    let (kind, _, size) = parse(text)?;
    if kind != b's' || size != text.len() {
        return None;
    }
    let digits = text.get(START.len_utf8() + 1..)?;
    digits.split('.').next()?.parse().ok()
}

/// Whether JSON `text` may hold the marker character, raw or escaped (`\ufdd0` in any case): a stream line that may
/// is read the way a long one is, so that the character stands only for markers (issue 34).
pub fn may_hold_start(text: &str) -> bool {
    if text.contains(START) {
        return true;
    }
    let bytes = text.as_bytes();
    let mut at = 0usize;
    while let Some(found) = bytes.get(at..).and_then(|rest| rest.windows(2).position(|w| w == b"\\u")) {
        let hex = at + found + 2;
        if bytes.get(hex..hex + 4).is_some_and(|h| h.eq_ignore_ascii_case(b"fdd0")) {
            return true;
        }
        at = hex;
    }
    false
}

/// `text.encode_utf16().count()` without decoding: one unit per character (every byte that does not continue
/// a UTF-8 sequence) and a second for each 4-byte one (its lead byte is 0xF0 or above). A counting loop the
/// compiler turns into wide compares, where decoding went character by character.
pub fn utf16_count(text: &str) -> usize {
    text.bytes().map(|b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0)).sum()
}

/// The UTF-16 length of JSON `text` as JS sees it once the markers' originals are back: a string
/// marker counts as its original's escaped length, a value marker with its two quotes as its
/// original's JSON length (P-6.2.7 `est`).
pub fn json_len(text: &str) -> usize {
    if !text.contains(START) {
        return utf16_count(text);
    }
    let mut total = 0usize;
    let mut rest = text;
    while let Some(at) = rest.find(START) {
        let (head, tail) = rest.split_at(at);
        total += utf16_count(head);
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
    total + utf16_count(rest)
}

/// One step from a JSON value to a member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Every string of `value` that holds a marker, with its path (depth first, in order): where the
/// binding puts the originals back into the parsed body. Iterative, so any depth is fine.
pub fn marked_strings(value: &serde_json::Value) -> Vec<(Vec<Step<'_>>, &str)> {
    use serde_json::Value;
    let mut found = Vec::new();
    // Only containers and marked strings are worth a path.
    let wanted = |v: &Value| match v {
        Value::String(s) => s.contains(START),
        Value::Array(_) | Value::Object(_) => true,
        _ => false,
    };
    let mut stack: Vec<(Vec<Step<'_>>, &Value)> = if wanted(value) { vec![(Vec::new(), value)] } else { Vec::new() };
    while let Some((path, value)) = stack.pop() {
        match value {
            Value::String(s) => found.push((path, s.as_str())),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev().filter(|(_, v)| wanted(v)) {
                    let mut p = path.clone();
                    p.push(Step::Index(i));
                    stack.push((p, item));
                }
            }
            Value::Object(map) => {
                let members: Vec<_> = map.iter().filter(|(_, v)| wanted(v)).collect();
                for (key, item) in members.into_iter().rev() {
                    let mut p = path.clone();
                    p.push(Step::Key(key));
                    stack.push((p, item));
                }
            }
            _ => {}
        }
    }
    found
}

/// Provider text the other way round: a lone surrogate escape (`"\\ud83d"`, which `JSON.parse`
/// keeps) is decoded as the host's stand-in for it (`core::text::wtf`), so the binding restores it
/// wherever Rust text becomes a JS string; other units are pushed as they are.
pub fn push_lone_surrogate(out: &mut String, unit: u16) {
    match crate::core::text::wtf::stand_in(unit) {
        Some(c) => out.push(c),
        None => out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}')),
    }
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
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {

    #[test]
    fn utf16_count_is_encode_utf16_count() {
        for text in [
            "",
            "ascii only",
            "é",
            "naïve café",
            "日本語",
            "😀",
            "a😀b\u{10F800}c",
            "\u{FDD0}v1.2\u{FDD1}",
            "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}",
        ] {
            assert_eq!(super::utf16_count(text), text.encode_utf16().count(), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn utf16_count_matches_any_string(text in proptest::prelude::any::<String>()) {
            proptest::prop_assert_eq!(super::utf16_count(&text), text.encode_utf16().count());
        }
    }

    use super::*;
    use crate::providers::{RequestInput, wire_format};
    use serde_json::{Value, json};

    /// Every string of `value` (keys left out), in order.
    fn strings(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(map) => map.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }

    #[test]
    fn the_four_wire_formats_pass_markers_through_whole() {
        let text = string_marker(0, 10); // "cut \ud83d"
        let system = string_marker(1, 10);
        let name = string_marker(2, 9);
        let arguments = value_marker(3, 17);
        let messages = vec![
            json!({"role": "system", "content": system, "timestamp": 0}),
            json!({"role": "user", "content": text, "timestamp": 1}),
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "call_1", "name": name, "arguments": arguments}],
                   "api": "x", "provider": "x", "model": "x", "stopReason": "toolUse", "timestamp": 2}),
            json!({"role": "toolResult", "toolCallId": "call_1", "toolName": name, "content": [{"type": "text", "text": "ok"}],
                   "isError": false, "timestamp": 3}),
        ];
        for api in ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"] {
            let model = json!({"id": "m", "api": api, "provider": "p", "input": ["text"], "maxTokens": 8000, "contextWindow": 0});
            let options = json!({});
            let input = RequestInput {
                model: &model,
                messages: &crate::providers::json::from_values(&messages),
                options: &options,
                api_key: Some("k"),
                messages_json_len: None,
            };
            let body = wire_format(api).unwrap().build_request(&input).unwrap().body;
            let mut sent = Vec::new();
            strings(&body, &mut sent);
            for marker in [&text, &system, &name] {
                assert!(sent.contains(marker), "{api}: {marker:?} not sent whole in {body}");
            }
            // Forwarded arguments: the value itself, or (OpenAI) its JSON text, which is the quoted marker.
            let forwarded =
                if api.starts_with("openai") { serde_json::to_string(&arguments).unwrap() } else { arguments.clone() };
            assert!(sent.contains(&forwarded), "{api}: arguments not forwarded in {body}");
        }
    }

    #[test]
    fn marked_strings_are_found_with_their_paths_at_any_depth() {
        let m = string_marker(0, 6);
        let body = json!({"a": [1, "plain", format!("x{m}")], "b": {"c": m}, "d": m});
        assert!(marked_strings(&json!("plain")).is_empty());
        assert_eq!(marked_strings(&json!(m)), vec![(vec![], m.as_str())]);
        let found = marked_strings(&body);
        let expected_a = format!("x{m}");
        assert_eq!(
            found,
            vec![
                (vec![Step::Key("a"), Step::Index(2)], expected_a.as_str()),
                (vec![Step::Key("b"), Step::Key("c")], m.as_str()),
                (vec![Step::Key("d")], m.as_str()),
            ]
        );
        // 10,000 levels: no recursion.
        let mut deep = json!(m);
        for _ in 0..10_000 {
            deep = Value::Array(vec![deep]);
        }
        let found = marked_strings(&deep);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0.len(), 10_000);
        // Dropping a deep Value recurses in serde_json itself: forget it (test only).
        std::mem::forget(deep);
    }

    #[test]
    fn est_counts_markers_as_their_originals() {
        // A user text of 4 + 600 JSON characters (a hundred `\ud83d`) against 604 plain ones.
        let model =
            json!({"id": "m", "api": "openai-completions", "provider": "p", "maxTokens": 9000, "contextWindow": 5000});
        let options = json!({});
        let with_marker =
            vec![json!({"role": "user", "content": format!("cut {}", string_marker(0, 600)), "timestamp": 1})];
        let plain = vec![json!({"role": "user", "content": format!("cut {}", "Z".repeat(600)), "timestamp": 1})];
        let est = |messages: &[Value]| {
            crate::providers::request::estimate_tokens(&crate::providers::json::from_values(messages))
        };
        assert_eq!(est(&with_marker), est(&plain));
        let cap = |messages: &[Value]| {
            let messages = &crate::providers::json::from_values(messages);
            let input =
                RequestInput { model: &model, messages, options: &options, api_key: None, messages_json_len: None };
            crate::providers::request::max_tokens(&input)
        };
        assert_eq!(cap(&with_marker), cap(&plain));
        assert_eq!(cap(&plain), Some(5000 - est(&plain) - 4096));
    }

    #[test]
    fn lone_surrogates_decode_to_the_hosts_stand_ins() {
        use crate::core::text::wtf;
        let mut text = String::from("a");
        push_lone_surrogate(&mut text, 0xD83D);
        text.push('b');
        push_lone_surrogate(&mut text, 0xDFFF);
        assert!(wtf::has_stand_in(&text));
        assert_eq!(wtf::to_utf16(&text), [0x61, 0xD83D, 0x62, 0xDFFF]);
        // A well-formed pair stays one character.
        assert!(!wtf::has_stand_in("x😀"));
        assert_eq!(wtf::to_utf16("x😀"), [0x78, 0xD83D, 0xDE00]);
    }

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
