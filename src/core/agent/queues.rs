//! The steering and follow-up queues as the caller edits them, the subscriptions, and the durable point
//! every edit makes (`checkpoint::request`).

use super::options::check_mode;
use crate::core::agent_state::drain::peek;
use crate::core::agent_state::key;
use crate::core::agent_state::{Queue, Thrown, get, items};
use crate::core::args::{ArgError, Checker};
use crate::core::checkpoint;
use crate::core::fast::FastPaths;
use std::rc::Rc;

/// A durable point outside a run's awaits: the agent is read from the state object.
pub(crate) fn changed<H: FastPaths>(h: &H, st: &H::V) {
    if let Ok(agent) = get(h, st, key::AGENT) {
        checkpoint::request(h, &agent, st);
    }
}

/// `agent.state.<field> = value` went through a setter: a durable point (checkpoint.rs).
pub fn state_changed<H: FastPaths>(h: &H, st: &H::V) {
    changed(h, st);
}

pub fn enqueue<H: FastPaths>(
    h: &H,
    st: &H::V,
    queue: Queue,
    message: &H::V,
    function: &str,
) -> Result<(), ArgError<H::V>> {
    Checker::new(h, function).message(message, "message")?;
    let (list, _) = queue.keys();
    h.array_push(&get(h, st, list)?, message)?;
    changed(h, st);
    Ok(())
}

pub fn clear<H: FastPaths>(h: &H, st: &H::V, queue: Queue) -> Result<(), H::V> {
    h.set(st, queue.keys().0, &h.array(&[]))?;
    changed(h, st);
    Ok(())
}

pub fn set_mode<H: FastPaths>(h: &H, st: &H::V, queue: Queue, mode: &H::V) -> Result<(), ArgError<H::V>> {
    let (_, key) = queue.keys();
    let c = Checker::new(h, "Agent");
    let mode = check_mode(h, &c, mode, key)?;
    h.set(st, key, &h.string(&mode))?;
    changed(h, st);
    Ok(())
}

pub fn peek_queued<H: FastPaths>(h: &H, st: &H::V) -> Result<H::V, H::V> {
    let steering = peek(h, st, Queue::Steering)?;
    let selected = if steering.is_empty() { peek(h, st, Queue::FollowUp)? } else { steering };
    Ok(h.array(&selected))
}

/// `takeQueuedMessages(predicate)` (issue 14.4, pi's newer Agent): removes the queued steering and
/// follow-up messages `predicate(message)` selects and answers them, steering first, each in queue
/// order. The rest keep their queue and mode. The predicate runs on a copy of the queues, and the
/// queues are rebuilt afterwards by identity, so a predicate that queues or clears meanwhile loses
/// nothing it did; a throwing predicate removes nothing.
pub fn take_queued<H: FastPaths>(h: &H, st: &H::V, predicate: &H::V) -> Result<H::V, Thrown<H::V>> {
    Checker::new(h, "Agent.takeQueuedMessages").function(predicate, "predicate").map_err(|e| e.into_thrown(h))?;
    let mut selected = Vec::new();
    for queue in [Queue::Steering, Queue::FollowUp] {
        for message in items(h, st, queue.keys().0)? {
            if h.truthy(&h.call_sync(predicate, &h.undefined(), std::slice::from_ref(&message))?) {
                selected.push(message);
            }
        }
    }
    let mut taken = Vec::new();
    for queue in [Queue::Steering, Queue::FollowUp] {
        let (list, _) = queue.keys();
        let (picked, kept): (Vec<H::V>, Vec<H::V>) =
            items(h, st, list)?.into_iter().partition(|m| selected.iter().any(|s| h.same(s, m)));
        if !picked.is_empty() {
            h.set(st, list, &h.array(&kept))?;
            taken.extend(picked);
        }
    }
    Ok(h.array(&taken))
}

// ---- subscriptions

/// Adds a listener (once, like a `Set`) and returns the function that removes it.
pub fn subscribe<H: FastPaths>(h: &H, st: &H::V, listener: &H::V) -> Result<H::V, ArgError<H::V>> {
    Checker::new(h, "Agent.subscribe").function(listener, "listener")?;
    h.set_add(&get(h, st, key::LISTENERS)?, listener)?;
    let (host, st, listener) = (h.clone(), st.clone(), listener.clone());
    Ok(h.function(Rc::new(move |_args: &[H::V]| {
        let h = &host;
        if let Ok(listeners) = get(h, &st, key::LISTENERS) {
            let _ = h.set_delete(&listeners, &listener);
        }
        h.undefined()
    })))
}
