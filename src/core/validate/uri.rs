//! URI grammars for the `uri`, `uri-reference` and `url` formats (see `format.rs`): RFC 3986 in ASCII, case-insensitive
//! as pi-schema's regexes are, and an approximation of `URL.canParse` for hosts that do not answer it themselves.

use super::ip::is_ipv6;

fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

fn is_sub_delim(c: u8) -> bool {
    matches!(c, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=')
}

/// Whether every character of `s` is in `allowed` or a `%XX` escape.
fn all_chars(s: &str, allowed: impl Fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            let ok = b.get(i.saturating_add(1)).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i.saturating_add(2)).is_some_and(u8::is_ascii_hexdigit);
            if !ok {
                return false;
            }
            i = i.saturating_add(3);
        } else if allowed(c) {
            i = i.saturating_add(1);
        } else {
            return false;
        }
    }
    true
}

fn is_pchar(c: u8) -> bool {
    is_unreserved(c) || is_sub_delim(c) || c == b':' || c == b'@'
}

fn is_query_char(c: u8) -> bool {
    is_pchar(c) || c == b'/' || c == b'?'
}

fn is_authority(a: &str) -> bool {
    let (userinfo, hostport) = match a.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, a),
    };
    if userinfo.is_some_and(|u| !all_chars(u, |c| is_unreserved(c) || is_sub_delim(c) || c == b':')) {
        return false;
    }
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        let Some((literal, after)) = rest.split_once(']') else {
            return false;
        };
        if !(is_ipv6(literal) || is_ipvfuture(literal)) {
            return false;
        }
        (None, after)
    } else {
        match hostport.find(':') {
            Some(i) => (hostport.get(..i), hostport.get(i..).unwrap_or("")),
            None => (Some(hostport), ""),
        }
    };
    if host.is_some_and(|h| !all_chars(h, |c| is_unreserved(c) || is_sub_delim(c))) {
        return false;
    }
    port.is_empty() || port.strip_prefix(':').is_some_and(|p| p.bytes().all(|c| c.is_ascii_digit()))
}

fn is_ipvfuture(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['v', 'V']) else {
        return false;
    };
    let Some((version, body)) = rest.split_once('.') else {
        return false;
    };
    !version.is_empty()
        && version.bytes().all(|c| c.is_ascii_hexdigit())
        && !body.is_empty()
        && body.bytes().all(|c| is_unreserved(c) || is_sub_delim(c) || c == b':')
}

/// Query and fragment after a hier-part or relative part: `[?query][#fragment]`.
fn split_tail(s: &str) -> Option<(&str, bool)> {
    let (before_fragment, fragment) = match s.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (s, None),
    };
    if fragment.is_some_and(|f| !all_chars(f, is_query_char)) {
        return None;
    }
    let (part, query) = match before_fragment.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (before_fragment, None),
    };
    if query.is_some_and(|q| !all_chars(q, is_query_char)) {
        return None;
    }
    Some((part, true))
}

/// A hier-part or relative part: `//authority path`, `/path`, or a rootless path whose first segment obeys `first`.
fn is_part(part: &str, first: fn(u8) -> bool) -> bool {
    let segments_ok = |path: &str| path.split('/').all(|seg| all_chars(seg, is_pchar));
    if let Some(rest) = part.strip_prefix("//") {
        let end = rest.find('/').unwrap_or(rest.len());
        return is_authority(rest.get(..end).unwrap_or("")) && segments_ok(rest.get(end..).unwrap_or(""));
    }
    if let Some(path) = part.strip_prefix('/') {
        // `/` alone, or a first segment that is not empty (`//` was an authority).
        return path.is_empty() || (!path.starts_with('/') && segments_ok(path));
    }
    if part.is_empty() {
        return true;
    }
    let (head, tail) = part.split_once('/').unwrap_or((part, ""));
    !head.is_empty() && all_chars(head, first) && segments_ok(tail)
}

fn scheme_end(s: &str) -> Option<usize> {
    let colon = s.find(':')?;
    let scheme = s.as_bytes().get(..colon)?;
    let ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'));
    ok.then_some(colon)
}

/// `uri`: a scheme, then an RFC 3986 hier-part, query and fragment.
pub(crate) fn is_uri(s: &str) -> bool {
    let Some(colon) = scheme_end(s) else {
        return false;
    };
    let rest = s.get(colon.saturating_add(1)..).unwrap_or("");
    split_tail(rest).is_some_and(|(part, _)| is_part(part, is_pchar))
}

/// A relative reference: its first path segment has no `:`.
pub(crate) fn is_relative_ref(s: &str) -> bool {
    split_tail(s).is_some_and(|(part, _)| is_part(part, |c| is_pchar(c) && c != b':'))
}

/// An approximation of `URL.canParse` for hosts that do not provide it: a scheme, and for the special schemes a host.
pub(crate) fn is_url(s: &str) -> bool {
    let s = s.trim_matches(|c: char| c <= ' ');
    if s.chars().any(|c| matches!(c, '\t' | '\n' | '\r')) {
        return is_url(&s.replace(['\t', '\n', '\r'], ""));
    }
    let Some(colon) = scheme_end(s) else {
        return false;
    };
    let scheme = s.get(..colon).unwrap_or("").to_ascii_lowercase();
    let rest = s.get(colon.saturating_add(1)..).unwrap_or("");
    if !matches!(scheme.as_str(), "http" | "https" | "ws" | "wss" | "ftp") {
        return true;
    }
    let after = rest.trim_start_matches(['/', '\\']);
    let end = after.find(['/', '\\', '?', '#']).unwrap_or(after.len());
    let authority = after.get(..end).unwrap_or("");
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if hostport.starts_with('[') {
        match hostport.split_once(']') {
            Some((h, p)) => (h.get(1..).unwrap_or(""), p.strip_prefix(':')),
            None => return false,
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    let host_ok = if hostport.starts_with('[') {
        is_ipv6(host)
    } else {
        !host.is_empty()
            && !host.chars().any(|c| {
                matches!(c, '#' | '%' | '/' | ':' | '<' | '>' | '?' | '@' | '[' | '\\' | ']' | '^' | '|') || c <= ' '
            })
    };
    let port_ok = port.is_none_or(|p| {
        p.is_empty() || (p.bytes().all(|c| c.is_ascii_digit()) && p.parse::<u32>().is_ok_and(|v| v <= 65535))
    });
    host_ok && port_ok
}
