//! The Agent's state object (`st`): the plain JS object the facade (`pkg-template/agent.js`) keeps per agent and
//! hands to every call, so nothing on the Rust side holds a JS value between calls. `KEYS` is the one definition of
//! its fields; the JS twins and the facade's typedef are checked against it (`tests/js/agent-state-keys.test.mjs`).
//! With it, the references of the fast paths the Agent takes: `init` (the state a new agent starts with, A-5.1.3),
//! `reducer`, `drain` (the queue polls, A-5.5.1) and `convert` (the default `convertToLlm`, A-5.1.2). Nothing here names the fast-path layer, which names
//! these (`core::fast`); the Agent's operations that call it are `core::agent`.

pub mod convert;
pub mod drain;
pub mod init;
pub mod reducer;

use crate::core::host::{Host, Kind};

/// The state object's field names, one constant each (in `KEYS` order, which says what each holds). Code outside this
/// module names a field only through these: `core::tests::layers` fails on a `st, "<field>"` literal anywhere else.
pub mod key {
    pub const MODEL: &str = "model";
    pub const THINKING_LEVEL: &str = "thinkingLevel";
    pub const TOOLS: &str = "tools";
    pub const MESSAGES: &str = "messages";
    pub const IS_STREAMING: &str = "isStreaming";
    pub const STREAMING_MESSAGE: &str = "streamingMessage";
    pub const PENDING_TOOL_CALLS: &str = "pendingToolCalls";
    pub const ERROR_MESSAGE: &str = "errorMessage";
    pub const STEERING: &str = "steering";
    pub const FOLLOW_UP: &str = "followUp";
    pub const STEERING_MODE: &str = "steeringMode";
    pub const FOLLOW_UP_MODE: &str = "followUpMode";
    pub const STEERING_LEFT_BY_ABORT: &str = "steeringLeftByAbort";
    pub const LISTENERS: &str = "listeners";
    pub const ACTIVE: &str = "active";
    pub const AGENT: &str = "agent";
    pub const ON_CHECKPOINT: &str = "onCheckpoint";
    pub const CK: &str = "ck";
    pub const TRANSIT_STEERING: &str = "transitSteering";
    pub const TRANSIT_FOLLOW_UP: &str = "transitFollowUp";
    pub const COMPLETED_TOOLS: &str = "completedTools";
    pub const ENDED_TOOLS: &str = "endedTools";
    pub const INTERRUPTED: &str = "interrupted";
    pub const APPROVALS: &str = "approvals";
    pub const PENDING_APPROVALS: &str = "pendingApprovals";
    pub const TOTAL_USAGE: &str = "totalUsage";
    pub const RUN_USAGE: &str = "runUsage";
    pub const LIMIT_REACHED: &str = "limitReached";
    pub const VIEW: &str = "view";
}

/// Every field of the state object, with what it holds: the one definition. Rust code reads and writes them by these
/// names (a test in `core::tests::layers` finds every key the core uses on `st` and requires it here), and the facade's
/// JSDoc typedef (`AgentStateObject` in `pkg-template/agent.js`) and the JS twins are checked against this list by
/// `tests/js/agent-state-keys.test.mjs`.
pub const KEYS: [(&str, &str); 29] = [
    (key::MODEL, "the `Model` (A-5.1.3); `agent.state.model`"),
    (key::THINKING_LEVEL, "`\"off\"` or a reasoning level; `agent.state.thinkingLevel`"),
    (key::TOOLS, "the tools, a copy of the caller's array; `agent.state.tools`"),
    (key::MESSAGES, "the transcript; `agent.state.messages`"),
    (key::IS_STREAMING, "a run is in progress; `agent.state.isStreaming`"),
    (key::STREAMING_MESSAGE, "the partial assistant message while it streams (A-5.2.2)"),
    (key::PENDING_TOOL_CALLS, "a `Set` of the ids of tool calls executing now (A-5.2.2)"),
    (key::ERROR_MESSAGE, "the last run's error, if it ended with one"),
    (key::STEERING, "the steering queue (A-5.3)"),
    (key::FOLLOW_UP, "the follow-up queue (A-5.3)"),
    (key::STEERING_MODE, "`\"all\"` or `\"one-at-a-time\"`"),
    (key::FOLLOW_UP_MODE, "`\"all\"` or `\"one-at-a-time\"`"),
    (
        key::STEERING_LEFT_BY_ABORT,
        "steering an aborted run left queued, delivered first by the next prompt (issue 14.2)",
    ),
    (key::LISTENERS, "the `Set` of subscribed listeners"),
    (key::ACTIVE, "the run in progress: `{controller, signal, promise, resolve}`, else undefined"),
    (key::AGENT, "the `Agent` instance the state belongs to"),
    (key::ON_CHECKPOINT, "the caller's checkpoint callback, or undefined (checkpoints off)"),
    (key::CK, "checkpoint bookkeeping (`core::checkpoint`), present only when checkpoints are on"),
    (key::TRANSIT_STEERING, "drained steering not yet in the transcript (still queued for checkpoints)"),
    (key::TRANSIT_FOLLOW_UP, "drained follow-ups not yet in the transcript"),
    (
        key::COMPLETED_TOOLS,
        "ended tool calls whose result message is not in the transcript yet (kept across a restore)",
    ),
    (key::ENDED_TOOLS, "the same, since the last checkpoint"),
    (key::INTERRUPTED, "a restored agent was mid-run: `resume()` picks it up"),
    (key::APPROVALS, "calls waiting for a person (issue 30): `{requests, completedTools, decisions}`, or undefined"),
    (key::PENDING_APPROVALS, "the requests of `approvals` without a decision; `agent.state.pendingApprovals`"),
    (key::TOTAL_USAGE, "the agent's usage totals over its life (issue 32), all zero until a reply reports usage"),
    (key::RUN_USAGE, "the usage totals of the current or last run (issue 32), all zero until a reply reports usage"),
    (key::LIMIT_REACHED, "the limit that stopped the last run (issue 32): `{limit, scope, max, value, message}`"),
    (key::VIEW, "the `agent.state` object the facade hands out (made by `pkg-template/agent.js` on its first read)"),
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
            Queue::Steering => (key::STEERING, key::STEERING_MODE),
            Queue::FollowUp => (key::FOLLOW_UP, key::FOLLOW_UP_MODE),
        }
    }
    /// Where drained messages wait until they are in the transcript (checkpoint.rs).
    pub fn transit(self) -> &'static str {
        match self {
            Queue::Steering => key::TRANSIT_STEERING,
            Queue::FollowUp => key::TRANSIT_FOLLOW_UP,
        }
    }
}
