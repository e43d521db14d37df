//! The fast-path layer: operations the loop could do through `Host`'s primitives one read at a
//! time, but which a host may do in one crossing instead.
//!
//! Each operation here has two implementations that must agree exactly, read for read and write for
//! write:
//!
//! - the **reference**, in Rust, generic over `Host`: the trait's default method. It is what
//!   `cargo test` runs on the scripted `TestHost`, and it is the definition of the behaviour;
//! - the **JS twin**, in a snippet under `src/js/snippets/`: what the wasm build runs on `JsHost`,
//!   one crossing instead of one per field.
//!
//! | method | reference | JS twin |
//! | --- | --- | --- |
//! | `pump` | `fast::pump::pump` | `pump.js`: `pumpEvent`, `pumpQueued` |
//! | `call_listeners` | `fast::listeners::call_listeners` | `agent.js`: `callListeners` |
//! | `check_tool_call` | `fast::check_call::check_tool_call` (the validator of `core::validate`) | `validate.js`: `checkToolCall` |
//! | `json_copy` (`ViewPaths`) | `fast::view::json_copy` | `view.js`: `jsonCopy` |
//! | `patch_copy` (`ViewPaths`) | `fast::view::patch_copy` | `view.js`: `patchCopy` |
//! | `view_string` (`ViewPaths`) | `None` (the reference writes no long-string markers) | `view.js`: `viewString` |
//! | `first_bad_message` | `fast::args::first_bad_message` | `args.js`: `firstBadMessage` |
//! | `agent_state_valid` | `false` (always check in full) | `args.js`: `agentStateValid` |
//! | `tool_changes` | `declare::tools::tool_changes` | `declare.js`: `toolChanges` |
//! | `init_state` | `agent_state::init::init_state` | `agent.js`: `initState` |
//! | `begin_run_state` | `agent_state::init::begin_run_state` | `agent.js`: `beginRunState` |
//! | `end_run_state` | `agent_state::init::end_run_state` | `agent.js`: `endRunState` |
//! | `reduce_agent_event` | `agent_state::reducer::reduce` | `agent.js`: `reduceAgentEvent` |
//! | `queue_poller` | `agent_state::drain::native_queue_poller` | `agent.js`: `queuePoller` |
//! | `default_convert_to_llm` | `agent_state::convert::default_convert_to_llm` | `agent.js`: `defaultConvertToLlm` |
//! | `json_text_kept`, `json_parse_kept` | `fast::view::json_text_kept`, `json_parse_kept` (nothing kept) | `view.js`: `jsonTextKept`, `parseKept` |
//!
//! `tests/js/parity.test.mjs` runs both on the same inputs in the loop module built with the test-only `parity`
//! feature (the reference on `JsHost` through its `__fastPath` export, which the package's wasm lacks, so a
//! reference a twin replaces is not shipped) and requires the same results and the
//! same reads and writes in the same order. To add a fast path: write the reference here (or in the
//! domain module it belongs to, as long as that module does not call the fast path itself), add the
//! method with its default, override it on `JsHost` with the twin, and add a parity case.
//!
//! Layering: this module depends on `host` and on the modules holding references (`agent_state::reducer`,
//! `agent_state::drain`, `agent_state::convert`, `declare::tools`, `text`, and for `check_call` `validate` and
//! `tool_schema`); `check_call` itself calls the view's fast paths, so those are the trait `ViewPaths` of `view`,
//! below `FastPaths`, which `check_call` names instead of this module. The modules that *call* fast paths
//! (`args`, `validate_call`, `agent_loop` with its `declare`, `agent::lifecycle`) depend on it. Nothing
//! below it imports it.

pub mod args;
pub mod check_call;
pub mod listeners;
pub mod pump;
pub mod view;

use super::agent_state::Queue;
pub use super::declare::tools::ToolChanges;
use super::host::HostFuture;
pub use check_call::Checked;
pub use pump::{EventCode, Pumped};
pub use view::ViewPaths;

/// The fused operations, each with its reference as the default method (see the module docs).
pub trait FastPaths: ViewPaths {
    /// One step of L-3.6.2 for `event`, or with `None` for the next event already queued in
    /// `source` when that is one of this library's own streams (taken synchronously; the reference
    /// sees none, so the loop awaits the iterator). A block event while the partial sits at
    /// `messages[slot]` replaces it there (`messages[slot] = event.partial`) and makes the update
    /// `{type: "message_update", assistantMessageEvent: event, message: {...event.partial}}`, which
    /// with `sink` is handed to `sink` synchronously. Errors are values thrown by caller getters
    /// while reading the event (not by the sink). The JS twin may, with `None`, deliver several
    /// queued block events to `sink` before answering `Delivered` (the loop does nothing between two
    /// of them).
    fn pump(
        &self,
        source: &Self::V,
        event: Option<Self::V>,
        messages: &Self::V,
        slot: Option<usize>,
        sink: Option<&Self::V>,
    ) -> Result<Pumped<Self::V>, Self::V> {
        pump::pump(self, source, event, messages, slot, sink)
    }

    /// `for (const f of listeners) await f(a, b)`, one stretch at a time: calls the functions of the `Set` (or
    /// array) `listeners` in order, iterating it live as `for … of` does (one subscribed meanwhile is called, one
    /// removed before its turn is not), and stops at the first that returns something to await:
    /// `Some(value)`, which the caller awaits (`settle`) before calling again with the same `cursor`; `None` once
    /// every one was called. `cursor` starts `None` and carries the iteration. A listener's throw is `Err` with the
    /// cursor kept, so a caller that swallows it can go on with the next listener; a failure of the list itself is
    /// `Err` with the cursor `None`.
    fn call_listeners(
        &self,
        listeners: &Self::V,
        cursor: &mut Option<Self::V>,
        a: &Self::V,
        b: &Self::V,
    ) -> Result<Option<Self::V>, Self::V> {
        listeners::call_listeners(self, listeners, cursor, a, b)
    }

    /// T-4.3: validates `args` (the possibly prepared arguments of `call`) against `tool.parameters` up to a
    /// Standard Schema's answer: the arguments `execute` gets (JSON Schema: the coerced copy), or what the schema's
    /// `validate` returned (maybe a promise, T-4.3.8); throws (as `Err`) the error of T-4.3.1 or T-4.3.5 with its exact
    /// text and class. The JS twin validates on the JS values themselves (reads in its own order: the reference reads
    /// the schema through `JSON.stringify`), so the loop's download carries no validator (issue 43).
    fn check_tool_call(&self, tool: &Self::V, call: &Self::V, args: &Self::V) -> Result<Checked<Self::V>, Self::V> {
        check_call::check_tool_call(self, tool, call, args)
    }

    /// E-8.1 over a list of messages (an array): the index of the first entry that is not a
    /// message, with `true` when it is not even an object (else its `role` is not a string).
    /// Errors are values thrown by caller getters.
    fn first_bad_message(&self, list: &Self::V) -> Result<Option<(usize, bool)>, Self::V> {
        args::first_bad_message(self, list)
    }

    /// `true` when every field a run of the Agent checks (E-8.1: the state's tools, messages and model,
    /// the agent's functions, hooks and numbers) is valid, read in the order the check reads them;
    /// `false` sends the run through the check itself, which names what is wrong. The reference always
    /// answers `false` (the full check is the reference).
    fn agent_state_valid(&self, _agent: &Self::V, _st: &Self::V) -> Result<bool, Self::V> {
        Ok(false)
    }

    /// L-3.4.2's comparison in one step: replays the tool fields of every system message of
    /// `messages` (an array; anything else declares nothing), then the pairs `(toolsRemoved,
    /// toolsAdded)` of `extra`, and compares the declared tools with `tools` (`context.tools`) by
    /// declaration text. Returns the declarations to add and the `{name}` objects to remove, both
    /// empty when nothing changed. (The JS twin may resume from a remembered scan of the same
    /// transcript when it can tell its prefix is unchanged.)
    fn tool_changes(&self, messages: &Self::V, extra: &[(Self::V, Self::V)], tools: &Self::V) -> ToolChanges<Self::V> {
        super::declare::tools::tool_changes(self, messages, extra, tools)
    }

    /// The state a new Agent starts with: `initial`'s values and a fresh empty value for every other field,
    /// written to `st` in `agent_state::init::init_state`'s order.
    fn init_state(&self, st: &Self::V, initial: &super::agent_state::init::Initial<Self::V>) -> Result<(), Self::V> {
        super::agent_state::init::init_state(self, st, initial)
    }

    /// A run starts: `active` and the fields a run resets, in `agent_state::init::begin_run_state`'s order.
    fn begin_run_state(&self, st: &Self::V, active: &Self::V) -> Result<(), Self::V> {
        super::agent_state::init::begin_run_state(self, st, active)
    }

    /// A run ended: the fields it clears, in `agent_state::init::end_run_state`'s order.
    fn end_run_state(&self, st: &Self::V) -> Result<(), Self::V> {
        super::agent_state::init::end_run_state(self, st)
    }

    /// The Agent's reducer on one event: `true` at a durable point.
    fn reduce_agent_event(&self, st: &Self::V, event: &Self::V) -> Result<bool, Self::V> {
        super::agent_state::reducer::reduce(self, st, event)
    }

    /// The function a run polls for the agent's steering (or follow-up) queue: each call
    /// drains the selection of `queue` and returns it as an array; with `skip`, the first call
    /// returns an empty array instead. (The JS twin is a function of its own, so a poll never
    /// crosses into the core.)
    fn queue_poller(&self, st: &Self::V, queue: Queue, skip: bool) -> Self::V {
        super::agent_state::drain::native_queue_poller(self, st, queue, skip)
    }

    /// The agent's default `convertToLlm`: a function keeping the messages with one of the
    /// four LLM roles (the JS twin filters in the engine instead of crossing per message).
    fn default_convert_to_llm(&self) -> Self::V {
        super::agent_state::convert::default_convert_to_llm(self)
    }

    /// The JSON text of `v` with every long string (and every string holding the projection marker character) left in
    /// the engine, a marker in its place, and the table of what was left (`undefined` when nothing was): what Rust
    /// reads of a snapshot holding megabytes of images is small and structural (issue 34). `json_parse_kept` puts the
    /// strings back. The reference leaves nothing (the text is `JSON.stringify`'s, the table `undefined`): on a
    /// native host the strings are in memory anyway. The pair must round-trip: `json_parse_kept(json_text_kept(v))`
    /// is `JSON.parse(JSON.stringify(v))` for both (`tests/js/parity.test.mjs`).
    fn json_text_kept(&self, v: &Self::V) -> Result<(Option<String>, Self::V), Self::V> {
        view::json_text_kept(self, v)
    }

    /// `JSON.parse(text)`, each whole-marker string replaced by the value `table` keeps for it (`json_text_kept`).
    fn json_parse_kept(&self, text: &str, table: &Self::V) -> Result<Self::V, Self::V> {
        view::json_parse_kept(self, text, table)
    }

    // ---- compaction (issue 45, L-3.13). The JS twins are pkg-template/compaction.js, a module of its own that the
    // package loads on a run's first compaction check (not in the loop's download); the references are
    // `core::compaction`, which `cargo test` and the parity test run.

    /// L-3.13.1 for a `compaction` option: `None` when it can be read, else the field (`""` for the option itself)
    /// and what it must be. Errors are values thrown by caller getters. (The twin is in snippets/args.js: the check
    /// runs when a run starts, before the module below is loaded.)
    fn compaction_problem(&self, v: &Self::V) -> Result<Option<(String, String)>, Self::V> {
        match super::compaction::read_options(self, v) {
            Ok(_) => Ok(None),
            Err(super::compaction::Unreadable::Field(field, what)) => Ok(Some((field.into(), what.into()))),
            Err(super::compaction::Unreadable::Thrown(e)) => Err(e),
        }
    }

    /// Resolves (with nothing to read) once the twins can answer (natively at once; in the package, once their
    /// module is loaded).
    fn compaction_ready(&self) -> HostFuture<Result<Self::V, Self::V>> {
        Box::pin(std::future::ready(Ok(self.undefined())))
    }

    /// L-3.13.5: the compaction a request over `messages` (the transcript array) needs, or `None`.
    fn compaction_plan(
        &self,
        messages: &Self::V,
        options: &Self::V,
        model: &Self::V,
    ) -> Result<Option<Self::V>, Self::V> {
        super::compaction::plan(self, messages, options, model)
    }

    /// L-3.13.4: what a request hands `transformContext`/`convertToLlm`.
    fn compaction_project(&self, messages: &Self::V) -> Result<Self::V, Self::V> {
        super::compaction::request_messages(self, messages)
    }

    /// L-3.13.2: the entry of `plan` with its summary (the caller's string, never copied through Rust by the twin).
    fn compaction_entry(
        &self,
        messages: &Self::V,
        plan: &Self::V,
        summary: &Self::V,
        usage: &Self::V,
        now: f64,
    ) -> Result<Self::V, Self::V> {
        super::compaction::entry(self, messages, plan, summary, usage, now)
    }

    /// L-3.13.6: `{ summary, usage }`, or an error whose message is `compaction_end.errorMessage`. A model summary's
    /// request options are `config`'s with the key (`getApiKey`, else `config.apiKey`), `identity`, reasoning off and
    /// `signal`.
    #[allow(clippy::too_many_arguments)]
    fn compaction_summarize(
        &self,
        plan: &Self::V,
        options: &Self::V,
        model: &Self::V,
        stream_fn: &Self::V,
        config: &Self::V,
        identity: &Self::V,
        signal: &Self::V,
    ) -> HostFuture<Result<Self::V, Self::V>> {
        super::compaction::summarize(self, plan, options, model, stream_fn, config, identity, signal)
    }
}
