//! JS text on the Rust side: the three private-use encodings that let Rust hold what a JS value holds, and the
//! `JSON.stringify` writer with JS semantics. Each encoding has a twin in the JS snippets, which must use the same
//! code points (`tests/js/boundary-constants.test.mjs` compares them).
//!
//! | encoding | code points | written by | read by | why |
//! | --- | --- | --- | --- | --- |
//! | lone-surrogate stand-ins | U+10F800–U+10FFFF: surrogate `0xD800 + k` is `STAND_IN_BASE + k` | `wtf::parse`, `wtf::from_utf16`, the JS host's string reads | `wtf`, `json::js_json_stringify` (writes `\udXXX` back) | a Rust `String` cannot hold an unpaired UTF-16 surrogate; one code point per surrogate keeps lengths and equality exact |
//! | the view mark | `VIEW_MARK` (U+10F7FE) + a kind letter (+ digits or an index) | `view.js` (`viewText`) | `validate::special` | tool arguments that JSON cannot hold (NaN, ±Infinity, BigInt, undefined, bytes, cycles) validated as pi-schema types them |
//! | projection markers | `PROJECTION_START` (U+FDD0) `s` index `.` length `PROJECTION_END` (U+FDD1) | `view.js` (`jsonTextKept`: a snapshot's long strings, issue 34) | `view.js` (`parseKept`); Rust carries them as text | a snapshot's structure reaches Rust without its long strings |
//!
//! The collisions each one accepts (a caller string that really holds one of these private-use characters) are
//! named in the README's Differences.
//!
//! `json` is the `JSON.stringify` of a `serde_json::Value` with JS semantics (key order, number formatting, stand-ins
//! written as the escapes JS writes), plus the other JS views of a value the validator and the snapshots need.

pub mod json;
pub mod number;
pub mod wtf;

/// The stand-in of the lone surrogate U+D800; the others follow in order up to U+10FFFF.
pub const STAND_IN_BASE: u32 = 0x10_F800;
/// The first character of every marker in the validator's view of a value.
pub const VIEW_MARK: char = '\u{10F7FE}';
/// Starts a marker of a string kept in JS (`jsonTextKept`). A caller string containing it is itself kept as a marker.
pub const PROJECTION_START: char = '\u{FDD0}';
/// Ends a marker of a string kept in JS.
pub const PROJECTION_END: char = '\u{FDD1}';

/// Where `needle` first occurs in `hay`, as a byte offset (`Some(0)` for an empty needle), as `str::find` finds it.
/// `str`'s own substring search (`contains`, `find`, `split_once`, `replace` of a `&str`, or of a `char` outside
/// ASCII) would do, but its searcher slices with a check whose panic formats the text it failed on: that panic alone
/// keeps core's `slice_error_fail`, `<char as Debug>` and the Unicode printable tables in the wasm. A byte search
/// finds the same offsets (in UTF-8, a whole character's bytes match only at a character boundary).
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.as_bytes().windows(needle.len()).position(|w| w == needle.as_bytes())
}

/// `s.split_once(separator)` for a non-empty separator, without `str`'s searcher (see [`find`]).
pub fn split_once<'a>(s: &'a str, separator: &str) -> Option<(&'a str, &'a str)> {
    let at = find(s, separator).filter(|_| !separator.is_empty())?;
    Some((s.get(..at)?, s.get(at.saturating_add(separator.len())..)?))
}

/// `s.replace(from, to)` for a non-empty `from`, without `str`'s searcher (see [`find`]).
pub fn replace(s: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some((head, tail)) = split_once(rest, from) {
        out.push_str(head);
        out.push_str(to);
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `find`, `split_once` and `replace` answer as `str`'s own, on ASCII and multi-byte text.
    #[test]
    fn search_matches_str() {
        let hays = ["", "a", "::", "a::b::c", "é::ü", "\u{FFFD}x\u{FFFD}", "~1~0~01", "éé", "nullnull"];
        let needles = ["::", "\u{FFFD}", "~1", "~0", "é", "null", "x", "zz"];
        for hay in hays {
            for needle in needles {
                assert_eq!(find(hay, needle), hay.find(needle), "{hay:?} {needle:?}");
                assert_eq!(split_once(hay, needle), hay.split_once(needle), "{hay:?} {needle:?}");
                assert_eq!(replace(hay, needle, "/"), hay.replace(needle, "/"), "{hay:?} {needle:?}");
            }
            assert_eq!(find(hay, ""), Some(0));
        }
    }
}
