//! The reference of `FastPaths::first_bad_message` (E-8.1 over a list of messages). The JS twin is
//! `firstBadMessage` in `src/js/snippets/args.js`.

use crate::core::host::{Host, Kind};

/// The reference of `FastPaths::first_bad_message` (see there).
pub fn first_bad_message<H: Host>(h: &H, list: &H::V) -> Result<Option<(usize, bool)>, H::V> {
    // Index by index, each entry and then its `role`, as the twin reads them.
    for i in 0..h.array_len(list)? {
        let m = h.array_get(list, i)?;
        if !matches!(h.kind(&m), Kind::Object | Kind::Function) {
            return Ok(Some((i, true)));
        }
        if h.kind(&h.get(&m, "role")?) != Kind::String {
            return Ok(Some((i, false)));
        }
    }
    Ok(None)
}
