//! The stateful `Agent` (§5). The JS facade keeps the agent's values in a plain state object (`st`, see `state`)
//! that it passes to every call, so nothing here holds a JS value between calls (no reference cycle through the
//! wasm instance, no borrow across a callback).
//!
//! - `state`: the state object's keys, the `Queue` selector and small readers.
//! - `options`: construction.
//! - `queues`, `drain`: the queues as the caller edits them, and as a run polls them.
//! - `reducer`, `convert`: the reducer and the default `convertToLlm`, references of fast paths.
//! - `lifecycle`: runs.
//! - `snapshot`: snapshots and restore (D8).
//! - `approvals`: tool calls waiting for a person (issue 30): `approve`, `deny`, the pause guard.

pub mod approvals;
pub mod convert;
pub mod drain;
pub mod lifecycle;
pub mod options;
pub mod queues;
pub mod reducer;
pub mod snapshot;
pub mod state;

pub use drain::{drain, peek};
pub use lifecycle::{
    ASSISTANT_TAIL, CONTINUE_BUSY, NOTHING_TO_CONTINUE, PROMPT_BUSY, RESET_BUSY, RESUME_BUSY, RunFuture, continue_run,
    decide, prompt, reset, resume,
};
pub use options::{AGENT_HOOKS, default_model, init};
pub use queues::{clear, enqueue, peek_queued, set_mode, state_changed, subscribe, take_queued};
pub use reducer::reduce;
pub use snapshot::{apply_snapshot, parse_restore, parse_snapshot, snapshot};
pub use state::Queue;
