//! What a run's poll of a queue takes: the selection by mode, and the reference of
//! `FastPaths::queue_poller` (its JS twin is `queuePoller` in `src/js/snippets/agent.js`).

use super::key;
use super::{Queue, get, items};
use crate::core::host::{Host, Kind};
use std::rc::Rc;

/// The selection `peek` shows and `drain` removes: all, or the first one.
pub fn peek<H: Host>(h: &H, st: &H::V, queue: Queue) -> Result<Vec<H::V>, H::V> {
    let (list, mode) = queue.keys();
    let all = items(h, st, list)?;
    if h.as_string(&get(h, st, mode)?).as_deref() == Some("all") {
        return Ok(all);
    }
    Ok(all.into_iter().take(1).collect())
}

/// `Host::queue_poller` built from `drain`: a getter's throw gives an empty poll.
pub fn native_queue_poller<H: Host + Clone + 'static>(h: &H, st: &H::V, queue: Queue, skip: bool) -> H::V {
    let skip = std::cell::Cell::new(skip);
    let (host, st) = (h.clone(), st.clone());
    h.function(Rc::new(move |_args: &[H::V]| {
        let h = &host;
        if skip.replace(false) {
            return h.array(&[]);
        }
        h.array(&drain(h, &st, queue).unwrap_or_default())
    }))
}

pub fn drain<H: Host>(h: &H, st: &H::V, queue: Queue) -> Result<Vec<H::V>, H::V> {
    let (list, _) = queue.keys();
    let selected = peek(h, st, queue)?;
    let rest: Vec<H::V> = items(h, st, list)?.into_iter().skip(selected.len()).collect();
    h.set(st, list, &h.array(&rest))?;
    if !selected.is_empty() && h.kind(&get(h, st, key::CK)?).is_object_like() {
        // Not a durable point: until they are in the transcript, checkpoints still count them as
        // queued, so a crash in between delivers them again instead of losing them.
        let transit = get(h, st, queue.transit())?;
        if h.kind(&transit) == Kind::Array {
            for message in &selected {
                h.array_push(&transit, message)?;
            }
        }
    }
    Ok(selected)
}
