//! The reference of `FastPaths::call_listeners`. The JS twin is `callListeners` in
//! `src/js/snippets/agent.js`.

use crate::core::host::{Host, Kind};

/// The reference of `FastPaths::call_listeners` (see there). It re-reads the listeners at every step
/// and calls the first one not called yet (a `Set`'s order and liveness, except that one removed and
/// added again is not called twice), stopping after every call (awaiting a plain value is
/// immediate); the JS twin walks the `Set`'s own iterator and stops only at thenables.
pub fn call_listeners<H: Host>(
    h: &H,
    listeners: &H::V,
    cursor: &mut Option<H::V>,
    a: &H::V,
    b: &H::V,
) -> Result<Option<H::V>, H::V> {
    let called = cursor.take().unwrap_or_else(|| h.array(&[]));
    let done = h.array_items(&called)?;
    let current = match h.kind(listeners) {
        Kind::Array => h.array_items(listeners)?,
        _ => h.set_items(listeners)?,
    };
    *cursor = Some(called.clone());
    let Some(f) = current.into_iter().find(|f| !done.iter().any(|d| h.same(d, f))) else {
        return Ok(None);
    };
    h.array_push(&called, &f)?;
    Ok(Some(h.call_sync(&f, &h.undefined(), &[a.clone(), b.clone()])?))
}
