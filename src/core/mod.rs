//! The agent loop, its tool pipeline and argument validation, written against the `Host` trait.
//! Nothing here names a JS type.

pub mod agent;
pub mod agent_loop;
pub mod agent_state;
pub mod approvals;
pub mod args;
pub mod budget;
pub mod builtin;
pub mod checkpoint;
pub mod compaction;
pub mod declare;
pub mod errors;
pub mod fast;
pub mod fxhash;
pub mod host;
pub mod local;
pub mod places;
pub mod run;
pub mod snapshot;
pub mod sort;
pub mod text;
pub mod tool_schema;
pub mod tools;
pub mod transcript;
pub mod validate;
pub mod validate_call;

#[cfg(test)]
pub mod test_host;

#[cfg(test)]
mod tests;
