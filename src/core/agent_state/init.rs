//! The state's writes in bulk, the references of three fast paths: what a new Agent starts with (A-5.1.3,
//! `FastPaths::init_state`), and what a run sets when it starts and clears when it ends (A-5.5,
//! `FastPaths::begin_run_state`, `FastPaths::end_run_state`). The JS twins are `initState`, `beginRunState` and
//! `endRunState` in `src/js/snippets/agent.js`.

use super::key;
use crate::core::host::Host;

/// What `new Agent` computed for the state from its options; every other field starts empty.
pub struct Initial<V> {
    pub model: V,
    pub thinking_level: V,
    /// Fresh arrays of the tools and the messages (the caller's arrays are not kept).
    pub tools: V,
    pub messages: V,
    pub steering_mode: V,
    pub follow_up_mode: V,
    /// The caller's checkpoint callback, or undefined (checkpoints off).
    pub on_checkpoint: V,
    pub agent: V,
}

/// Writes every field of a new agent's state object `st` (made by the facade's `newStateObject`), in this order,
/// each empty list and set a fresh one. Errors are values a setter threw (none on the facade's object).
pub fn init_state<H: Host>(h: &H, st: &H::V, initial: &Initial<H::V>) -> Result<(), H::V> {
    let i = initial;
    let state = [
        (key::MODEL, i.model.clone()),
        (key::THINKING_LEVEL, i.thinking_level.clone()),
        (key::TOOLS, i.tools.clone()),
        (key::MESSAGES, i.messages.clone()),
        (key::IS_STREAMING, h.boolean(false)),
        (key::STREAMING_MESSAGE, h.undefined()),
        (key::PENDING_TOOL_CALLS, h.new_set(&[])),
        (key::ERROR_MESSAGE, h.undefined()),
        (key::STEERING, h.array(&[])),
        (key::FOLLOW_UP, h.array(&[])),
        (key::STEERING_LEFT_BY_ABORT, h.array(&[])),
        (key::STEERING_MODE, i.steering_mode.clone()),
        (key::FOLLOW_UP_MODE, i.follow_up_mode.clone()),
        (key::LISTENERS, h.new_set(&[])),
        (key::ACTIVE, h.undefined()),
        // Durability (checkpoint.rs): drained messages and ended tool calls not yet in the transcript, and whether a
        // restored agent was interrupted mid-run.
        (key::ON_CHECKPOINT, i.on_checkpoint.clone()),
        (key::AGENT, i.agent.clone()),
        (key::TRANSIT_STEERING, h.array(&[])),
        (key::TRANSIT_FOLLOW_UP, h.array(&[])),
        (key::COMPLETED_TOOLS, h.array(&[])),
        (key::ENDED_TOOLS, h.array(&[])),
        (key::INTERRUPTED, h.boolean(false)),
        (key::APPROVALS, h.undefined()),
        (key::PENDING_APPROVALS, h.array(&[])),
        (key::TOTAL_USAGE, h.undefined()),
        (key::RUN_USAGE, h.undefined()),
        (key::LIMIT_REACHED, h.undefined()),
    ];
    write(h, st, &state)
}

/// The reference of `FastPaths::begin_run_state`: a run starts (`active` is its `{controller, signal, promise,
/// resolve}`): streaming, nothing of the last run's error, interruption, usage or limit left.
pub fn begin_run_state<H: Host>(h: &H, st: &H::V, active: &H::V) -> Result<(), H::V> {
    let state = [
        (key::ACTIVE, active.clone()),
        (key::STEERING_LEFT_BY_ABORT, h.array(&[])),
        (key::IS_STREAMING, h.boolean(true)),
        (key::STREAMING_MESSAGE, h.undefined()),
        (key::ERROR_MESSAGE, h.undefined()),
        (key::INTERRUPTED, h.boolean(false)),
        (key::RUN_USAGE, h.undefined()),
        (key::LIMIT_REACHED, h.undefined()),
    ];
    write(h, st, &state)
}

/// The reference of `FastPaths::end_run_state`: a run ended. What it drained or ended without committing is gone
/// from the live agent too; nothing streams, no tool call is pending.
pub fn end_run_state<H: Host>(h: &H, st: &H::V) -> Result<(), H::V> {
    let state = [
        (key::TRANSIT_STEERING, h.array(&[])),
        (key::TRANSIT_FOLLOW_UP, h.array(&[])),
        (key::COMPLETED_TOOLS, h.array(&[])),
        (key::ENDED_TOOLS, h.array(&[])),
        (key::IS_STREAMING, h.boolean(false)),
        (key::STREAMING_MESSAGE, h.undefined()),
        (key::PENDING_TOOL_CALLS, h.new_set(&[])),
    ];
    write(h, st, &state)
}

/// Writes `fields` to `st` in order; the first write that throws ends it.
fn write<H: Host>(h: &H, st: &H::V, fields: &[(&str, H::V)]) -> Result<(), H::V> {
    for (key, value) in fields {
        h.set(st, key, value)?;
    }
    Ok(())
}
