//! IP address text (RFC 2673 dotted quads, RFC 4291 IPv6), for the `ipv4`/`ipv6` formats and URI hosts.

use crate::core::text;

pub(crate) fn digits_value(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Four decimal octets without leading zeros.
pub(crate) fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && !(p.len() > 1 && p.starts_with('0'))
                && digits_value(p).is_some_and(|v| v <= 255)
        })
}

/// IPv6 text: eight groups, or fewer around one `::`, the last two possibly an IPv4 address.
pub(crate) fn is_ipv6(s: &str) -> bool {
    let hex_group = |g: &str| !g.is_empty() && g.len() <= 4 && g.bytes().all(|c| c.is_ascii_hexdigit());
    let count = |part: &str, last: bool| -> Option<usize> {
        if part.is_empty() {
            return Some(0);
        }
        let groups: Vec<&str> = part.split(':').collect();
        let mut n = 0usize;
        for (i, g) in groups.iter().enumerate() {
            if last && i.saturating_add(1) == groups.len() && g.contains('.') {
                if !is_ipv4(g) {
                    return None;
                }
                n = n.saturating_add(2);
            } else if hex_group(g) {
                n = n.saturating_add(1);
            } else {
                return None;
            }
        }
        Some(n)
    };
    match text::split_once(s, "::") {
        Some((head, tail)) => {
            if text::find(tail, "::").is_some() {
                return false;
            }
            match (count(head, false), count(tail, true)) {
                (Some(h), Some(t)) => h.saturating_add(t) <= 7,
                _ => false,
            }
        }
        None => count(s, true) == Some(8),
    }
}
