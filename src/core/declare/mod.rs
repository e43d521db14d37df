//! Tools as the model sees them (L-3.4): `tools` reads declarations and replays what a transcript declares, the
//! reference of the `tool_changes` fast path. Writing the changes into a request's messages (`declareToolChanges`)
//! calls that fast path, so it lives with the loop (`agent_loop::declare`): nothing here names the fast-path layer.

pub mod tools;
