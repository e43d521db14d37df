//! Native tests of the core through the scripted `TestHost`: exact event sequences per rule.

mod agent;
mod approvals;
mod compaction;
mod durable;
mod failures;
mod future_size;
mod layers;
mod limits;
mod loop_rules;
mod props;
mod standard_schema;
mod support;
mod timeouts;
mod tools;
mod traces;
