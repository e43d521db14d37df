//! The stateful `Agent` (§5). The JS facade keeps the agent's values in a plain state object (`st`, see
//! `core::agent_state`) that it passes to every call, so nothing here holds a JS value between calls (no reference
//! cycle through the wasm instance, no borrow across a callback).
//!
//! - `core::agent_state` (a module of its own, so the fast-path layer can name its references without naming this
//!   module, which calls that layer): the state object's keys, the `Queue` selector and small readers; `drain`, the
//!   queues as a run polls them; `reducer` and `convert` (the default `convertToLlm`).
//! - `options`: construction.
//! - `queues`: the queues as the caller edits them.
//! - `lifecycle`: runs.
//! - `snapshot`: snapshots and restore (D8).
//! - `approvals`: tool calls waiting for a person (issue 30): `approve`, `deny`, the pause guard.

pub mod approvals;
pub mod lifecycle;
pub mod options;
pub mod queues;
pub mod snapshot;

pub use crate::core::agent_state::Queue;
pub use crate::core::agent_state::drain::{drain, peek};
pub use crate::core::agent_state::reducer::reduce;
pub use lifecycle::{
    ASSISTANT_TAIL, CONTINUE_BUSY, NOTHING_TO_CONTINUE, PROMPT_BUSY, RESET_BUSY, RESUME_BUSY, RunFuture, continue_run,
    decide, prompt, reset, resume,
};
pub use options::{AGENT_HOOKS, default_model, init};
pub use queues::{clear, enqueue, peek_queued, set_mode, state_changed, subscribe, take_queued};
pub use snapshot::{apply_snapshot, parse_restore, parse_snapshot, snapshot};
