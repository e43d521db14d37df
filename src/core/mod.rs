//! The agent loop, its tool pipeline and argument validation, written against the `Host` trait.
//! Nothing here names a JS type.

pub mod agent;
pub mod agent_loop;
pub mod args;
pub mod builtin;
pub mod checkpoint;
pub mod declare;
pub mod fxhash;
pub mod host;
pub mod run;
pub mod snapshot;
pub mod tools;
pub mod transcript;
pub mod validate;
pub mod validate_call;
pub mod wtf;

#[cfg(test)]
pub mod test_host;

#[cfg(test)]
mod tests;
