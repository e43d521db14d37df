//! The Agent's state object (`st`): the plain JS object the facade (`pkg-template/agent.js`) keeps per agent and
//! hands to every call, so nothing on the Rust side holds a JS value between calls. `KEYS` is the one definition of
//! its fields; the JS twins and the facade's typedef are checked against it (`tests/js/agent-state-keys.test.mjs`).
//! With it, the references of the fast paths the Agent's runs take: `reducer`, `drain` (the queue polls,
//! ) and `convert` (the default `convertToLlm`, A-5.1.2). Nothing here names the fast-path layer, which names
//! these (`core::fast`); the Agent's operations that call it are `core::agent`.

pub mod convert;
pub mod drain;
pub mod reducer;

use crate::core::host::{Host, Kind};

/// Every field of the state object, with what it holds: the one definition. Rust code reads and writes them by these
/// names (a test in `core::tests::layers` finds every key the core uses on `st` and requires it here), and the facade's
/// JSDoc typedef (`AgentStateObject` in `pkg-template/agent.js`) and the JS twins are checked against this list by
/// `tests/js/agent-state-keys.test.mjs`.
pub const KEYS: [(&str, &str); 29] = [
    ("model", "the `Model` (A-5.1.3); `agent.state.model`"),
    ("thinkingLevel", "`\"off\"` or a reasoning level; `agent.state.thinkingLevel`"),
    ("tools", "the tools, a copy of the caller's array; `agent.state.tools`"),
    ("messages", "the transcript; `agent.state.messages`"),
    ("isStreaming", "a run is in progress; `agent.state.isStreaming`"),
    ("streamingMessage", "the partial assistant message while it streams (A-5.2.2)"),
    ("pendingToolCalls", "a `Set` of the ids of tool calls executing now (A-5.2.2)"),
    ("errorMessage", "the last run's error, if it ended with one"),
    ("steering", "the steering queue (A-5.3)"),
    ("followUp", "the follow-up queue (A-5.3)"),
    ("steeringMode", "`\"all\"` or `\"one-at-a-time\"`"),
    ("followUpMode", "`\"all\"` or `\"one-at-a-time\"`"),
    ("steeringLeftByAbort", "steering an aborted run left queued, delivered first by the next prompt (issue 14.2)"),
    ("listeners", "the `Set` of subscribed listeners"),
    ("active", "the run in progress: `{controller, signal, promise, resolve}`, else undefined"),
    ("agent", "the `Agent` instance the state belongs to"),
    ("onCheckpoint", "the caller's checkpoint callback, or undefined (checkpoints off)"),
    ("ck", "checkpoint bookkeeping (`core::checkpoint`), present only when checkpoints are on"),
    ("transitSteering", "drained steering not yet in the transcript (still queued for checkpoints)"),
    ("transitFollowUp", "drained follow-ups not yet in the transcript"),
    ("completedTools", "ended tool calls whose result message is not in the transcript yet (kept across a restore)"),
    ("endedTools", "the same, since the last checkpoint"),
    ("interrupted", "a restored agent was mid-run: `resume()` picks it up"),
    ("approvals", "calls waiting for a person (issue 30): `{requests, completedTools, decisions}`, or undefined"),
    ("pendingApprovals", "the requests of `approvals` without a decision; `agent.state.pendingApprovals`"),
    ("totalUsage", "the agent's usage totals over its life (issue 32), all zero until a reply reports usage"),
    ("runUsage", "the usage totals of the current or last run (issue 32), all zero until a reply reports usage"),
    ("limitReached", "the limit that stopped the last run (issue 32): `{limit, scope, max, value, message}`"),
    ("view", "the `agent.state` object the facade hands out (set by `pkg-template/agent.js`)"),
];

/// The two queue modes: what `steeringMode` and `followUpMode` may hold, in options, snapshots and checkpoints.
pub const MODES: [&str; 2] = ["all", "one-at-a-time"];

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
