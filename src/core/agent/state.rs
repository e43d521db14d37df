//! The Agent's state object (`st`): the plain JS object the facade (`pkg-template/agent.js`) keeps per agent and
//! hands to every call, so nothing on the Rust side holds a JS value between calls. `KEYS` is the one definition of
//! its fields; the JS twins and the facade's typedef are checked against it (`tests/js/agent-state-keys.test.mjs`).

use crate::core::host::{Host, Kind};

pub(crate) type Thrown<V> = V;

pub(crate) fn get<H: Host>(h: &H, obj: &H::V, key: &str) -> Result<H::V, H::V> {
    h.get(obj, key)
}

pub(crate) fn items<H: Host>(h: &H, obj: &H::V, key: &str) -> Result<Vec<H::V>, H::V> {
    let v = h.get(obj, key)?;
    if h.kind(&v) == Kind::Array { h.array_items(&v) } else { Ok(Vec::new()) }
}

/// `st[key]` when it is an array, else a new empty one.
pub(crate) fn list_or_empty<H: Host>(h: &H, st: &H::V, key: &str) -> Result<H::V, H::V> {
    let v = h.get(st, key)?;
    if h.kind(&v) == Kind::Array { Ok(v) } else { Ok(h.array(&[])) }
}

/// A copy of the array `st[key]` (a new empty one when it is not an array), made in one call.
pub(crate) fn copied<H: Host>(h: &H, st: &H::V, key: &str) -> Result<H::V, H::V> {
    let v = h.get(st, key)?;
    if h.kind(&v) == Kind::Array { h.shallow_copy(&v) } else { Ok(h.array(&[])) }
}

/// Which queue: `("steering", "steeringMode")` or `("followUp", "followUpMode")`.
#[derive(Clone, Copy)]
pub enum Queue {
    Steering,
    FollowUp,
}

impl Queue {
    pub fn keys(self) -> (&'static str, &'static str) {
        match self {
            Queue::Steering => ("steering", "steeringMode"),
            Queue::FollowUp => ("followUp", "followUpMode"),
        }
    }
    /// Where drained messages wait until they are in the transcript (checkpoint.rs).
    pub fn transit(self) -> &'static str {
        match self {
            Queue::Steering => "transitSteering",
            Queue::FollowUp => "transitFollowUp",
        }
    }
}
