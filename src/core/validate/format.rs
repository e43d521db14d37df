//! `format` checks (T-4.3.4): `date`, `date-time`, `time`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uri`,
//! `uri-reference`, `url`, `uuid`, `regex`, `json-pointer`, with the grammar of pi-schema's checks (adapted there
//! from TypeBox); other formats pass. Hand-written matchers, no regex engine; `regex` and `url` ask the host.

use super::PatternMatcher;
use super::ip::{digits_value, is_ipv4, is_ipv6};
use super::uri::{is_relative_ref, is_uri, is_url};

/// Whether `text` has format `name`; `None` for a format that is not checked.
pub(crate) fn check(name: &str, text: &str, re: &dyn PatternMatcher) -> Option<bool> {
    Some(match name {
        "date" => is_date(text),
        "date-time" => is_date_time(text),
        "time" => is_time(text),
        "duration" => is_duration(text),
        "email" => is_email(text),
        "hostname" => is_hostname(text, re),
        "ipv4" => is_ipv4(text),
        "ipv6" => is_ipv6(text),
        "uri" => is_uri(text),
        "uri-reference" => is_uri(text) || is_relative_ref(text),
        "url" => re.url_can_parse(text).unwrap_or_else(|| is_url(text)),
        "uuid" => is_uuid(text),
        "regex" => re.is_regex(text),
        "json-pointer" => is_json_pointer(text),
        _ => return None,
    })
}

/// `YYYY-MM-DD` with a real day of the month.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return false;
    }
    let (Some(year), Some(month), Some(day)) =
        (s.get(0..4).and_then(digits_value), s.get(5..7).and_then(digits_value), s.get(8..10).and_then(digits_value))
    else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `HH:MM:SS[.frac](Z|±HH:MM)`, a leap second only at 23:59:60 UTC.
fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    let two = |i: usize| s.get(i..i.saturating_add(2)).and_then(digits_value);
    if b.len() < 9 || b.get(2) != Some(&b':') || b.get(5) != Some(&b':') {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) = (two(0), two(3), two(6)) else {
        return false;
    };
    let mut i = 8;
    if b.get(i) == Some(&b'.') {
        let frac =
            b.get(i.saturating_add(1)..).map_or(0, |rest| rest.iter().take_while(|c| c.is_ascii_digit()).count());
        if frac == 0 {
            return false;
        }
        i = i.saturating_add(1).saturating_add(frac);
    }
    let (sign, tz_hour, tz_minute) = match b.get(i) {
        Some(b'Z' | b'z') if b.len() == i.saturating_add(1) => (0i64, 0, 0),
        Some(sign @ (b'+' | b'-')) if b.len() == i.saturating_add(6) && b.get(i.saturating_add(3)) == Some(&b':') => {
            let (Some(h), Some(m)) = (two(i.saturating_add(1)), two(i.saturating_add(4))) else {
                return false;
            };
            (if *sign == b'-' { -1 } else { 1 }, h, m)
        }
        _ => return false,
    };
    if hour > 23 || minute > 59 || second > 60 || tz_hour > 23 || tz_minute > 59 {
        return false;
    }
    if second < 60 {
        return true;
    }
    // Every part has at most two digits, so these cannot overflow.
    let minutes = |h: u32, m: u32| i64::from(h.saturating_mul(60).saturating_add(m));
    let utc = minutes(hour, minute).saturating_sub(sign.saturating_mul(minutes(tz_hour, tz_minute)));
    utc.rem_euclid(1440) == 1439
}

/// A date and a time joined by one `T` (either case).
fn is_date_time(s: &str) -> bool {
    let mut parts = s.split(['T', 't']);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(date), Some(time), None) => is_date(date) && is_time(time),
        _ => false,
    }
}

/// ISO 8601 durations: `P[nY[nM[nD]]|nM[nD]|nD][T…]`, `PT…`, `PnW`; units contiguous and in order.
fn is_duration(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('P') else {
        return false;
    };
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    if time.is_none()
        && let Some(weeks) = date.strip_suffix('W')
        && !weeks.is_empty()
        && weeks.bytes().all(|c| c.is_ascii_digit())
    {
        return true;
    }
    let date_ok = date.is_empty() || units_in_order(date, b"YMD");
    let time_ok = match time {
        Some(t) => !t.is_empty() && units_in_order(t, b"HMS"),
        None => true,
    };
    date_ok && time_ok && !(date.is_empty() && time.is_none())
}

/// `n<U>` groups whose units are a contiguous run of `order` (`1Y2M`, `2M3D`; not `1Y3D`).
fn units_in_order(s: &str, order: &[u8]) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let mut last: Option<usize> = None;
    while i < b.len() {
        let digits = b.get(i..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count());
        if digits == 0 {
            return false;
        }
        i = i.saturating_add(digits);
        let Some(pos) = b.get(i).and_then(|u| order.iter().position(|o| o == u)) else {
            return false;
        };
        if last.is_some_and(|l| pos != l.saturating_add(1)) {
            return false;
        }
        last = Some(pos);
        i = i.saturating_add(1);
    }
    last.is_some()
}

const ATEXT_SPECIALS: &[u8] = b"!#$%&'*+/=?^_`{|}~-";

fn is_atext(c: u8) -> bool {
    c.is_ascii_alphanumeric() || ATEXT_SPECIALS.contains(&c)
}

/// A domain label of an e-mail address: `[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?`.
fn is_ldh_label(l: &str) -> bool {
    let b = l.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
}

fn is_email(s: &str) -> bool {
    let domain = if let Some(quoted) = s.strip_prefix('"') {
        let mut chars = quoted.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    end = Some(i);
                    break;
                }
                '\\' => match chars.next() {
                    Some((_, e)) if (' '..='~').contains(&e) => {}
                    _ => return false,
                },
                _ => {}
            }
        }
        let Some(end) = end else {
            return false;
        };
        match quoted.get(end.saturating_add(1)..).and_then(|r| r.strip_prefix('@')) {
            Some(domain) => domain,
            None => return false,
        }
    } else {
        let Some((local, domain)) = s.split_once('@') else {
            return false;
        };
        if local.is_empty() || !local.split('.').all(|atom| !atom.is_empty() && atom.bytes().all(is_atext)) {
            return false;
        }
        domain
    };
    if let Some(literal) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match literal.get(..5) {
            Some(prefix) if prefix.eq_ignore_ascii_case("ipv6:") => {
                literal.get(5..).is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit() || c == b':'))
            }
            _ => is_ipv4(literal),
        };
    }
    domain.split('.').all(is_ldh_label)
}

/// `hostname`: labels of letters, digits and inner hyphens (or `xn--` labels with valid punycode), at most 253 long.
fn is_hostname(s: &str, re: &dyn PatternMatcher) -> bool {
    if s.is_empty() || crate::core::text::wtf::utf16_len(s) > 253 || s.ends_with('.') {
        return false;
    }
    s.split('.').all(|label| {
        let len = crate::core::text::wtf::utf16_len(label);
        len > 0 && len <= 63 && (is_puny_label(label, re) || is_ascii_label(label))
    })
}

fn is_ascii_label(l: &str) -> bool {
    let b = l.as_bytes();
    !l.starts_with('-')
        && !l.ends_with('-')
        && b.get(2..4) != Some(b"--")
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

/// Code points IDNA permits in a label (RFC 5892): letters, digits, combining marks, a few separators, and the
/// exceptional code points whose context the full rules check. Asked of the host's Unicode-aware regexes.
const PERMITTED: &str = "^(?:\\p{L}|\\p{Nd}|\\p{Mn}|\\p{Mc}|[-+.,:/\u{b7}\u{375}\u{5f3}\u{5f4}\u{200c}\u{200d}\u{30fb}\u{df}\u{3c2}\u{6fd}\u{6fe}\u{f0b}\u{3007}])$";
const COMBINING_MARK: &str = "^(?:\\p{Mn}|\\p{Mc}|\\p{Me})";
const DISALLOWED: [char; 10] = [
    '\u{640}', '\u{7fa}', '\u{302e}', '\u{302f}', '\u{3031}', '\u{3032}', '\u{3033}', '\u{3034}', '\u{3035}',
    '\u{303b}',
];

/// `l.toLowerCase()` as far as [`is_puny_label`] can tell: only an all-ASCII body decodes, and the one non-ASCII
/// character that lowercases to ASCII alone is U+212A KELVIN SIGN (`k`; U+0130 gives `i` + U+0307). Other non-ASCII
/// characters are kept as they are, failing the decoding as their lowercase would. `str::to_lowercase` would bring
/// 15 KB of Unicode tables into the wasm.
fn label_to_lowercase(l: &str) -> String {
    l.chars().map(|c| if c == '\u{212A}' { 'k' } else { c.to_ascii_lowercase() }).collect()
}

/// An `xn--` label whose punycode decodes to a U-label: a non-ASCII character, valid hyphens, no leading combining
/// mark, only permitted code points. (pi-schema also applies the contextual and bidi rules; those are not reproduced.)
fn is_puny_label(l: &str, re: &dyn PatternMatcher) -> bool {
    let lower = label_to_lowercase(l);
    let Some(body) = lower.strip_prefix("xn--") else {
        return false;
    };
    if body.rfind('-') == Some(0) {
        return false;
    }
    let Some(decoded) = punycode_decode(body) else {
        return false;
    };
    let chars: Vec<char> = decoded.chars().collect();
    let is = |pattern: &str, c: &char| re.is_match(pattern, &c.to_string()) == Some(true);
    !decoded.is_ascii()
        && chars.first() != Some(&'-')
        && chars.last() != Some(&'-')
        && !(chars.get(2) == Some(&'-') && chars.get(3) == Some(&'-'))
        && !chars.first().is_some_and(|c| is(COMBINING_MARK, c))
        && chars.iter().all(|c| !DISALLOWED.contains(c) && is(PERMITTED, c))
}

/// RFC 3492 decoding; `None` for malformed input.
fn punycode_decode(input: &str) -> Option<String> {
    const BASE: u32 = 36;
    let (basic, extended) = match input.rfind('-') {
        Some(i) => (input.get(..i)?, input.get(i.saturating_add(1)..)?),
        None => ("", input),
    };
    if !basic.is_ascii() {
        return None;
    }
    let mut output: Vec<char> = basic.chars().collect();
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut chars = extended.chars().peekable();
    while chars.peek().is_some() {
        let old_i = i;
        let mut w = 1u32;
        let mut k = BASE;
        loop {
            let c = chars.next()?;
            let digit = match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' => c.to_digit(36)?.checked_add(26)?.checked_rem(36)?,
                _ => return None,
            };
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = k.saturating_sub(bias).clamp(1, 26);
            if digit < t {
                break;
            }
            w = w.checked_mul(BASE.checked_sub(t)?)?;
            k = k.checked_add(BASE)?;
        }
        let len = u32::try_from(output.len()).ok()?.checked_add(1)?;
        bias = adapt(i.checked_sub(old_i)?, len, old_i == 0);
        n = n.checked_add(i.checked_div(len)?)?;
        i = i.checked_rem(len)?;
        output.insert(usize::try_from(i).ok()?, char::from_u32(n)?);
        i = i.checked_add(1)?;
    }
    Some(output.into_iter().collect())
}

fn adapt(delta: u32, points: u32, first: bool) -> u32 {
    let mut delta = if first { delta / 700 } else { delta / 2 };
    delta = delta.saturating_add(delta.checked_div(points).unwrap_or(0));
    let mut k: u32 = 0;
    while delta > 455 {
        delta /= 35;
        k = k.saturating_add(36);
    }
    k.saturating_add(delta.saturating_mul(36).checked_div(delta.saturating_add(38)).unwrap_or(0))
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(
            |(i, c)| {
                if matches!(i, 8 | 13 | 18 | 23) { *c == b'-' } else { c.is_ascii_hexdigit() }
            },
        )
}

fn is_json_pointer(s: &str) -> bool {
    if !(s.is_empty() || s.starts_with('/')) {
        return false;
    }
    let b = s.as_bytes();
    b.iter().enumerate().all(|(i, c)| *c != b'~' || matches!(b.get(i.saturating_add(1)), Some(b'0' | b'1')))
}
