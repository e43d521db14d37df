//! The loop's exports (feature `loop`). Each checks its arguments (E-8.1), resolves the stream function
//! (API-1.3.2) and hands the work to `core`.

use super::executor::{spawn, spawn_promise};
use super::host::JsHost;
use crate::core::agent_loop::{Start, drive_start, start_approved_run, start_continue_run, start_prompt_run};
use crate::core::args::{ArgError, Checker};
use crate::core::host::Host;
use crate::core::run::{Emitter, Run, SinkMode};
use crate::core::tools::{Call, Resumed, ToolEnv, outcome_object};
use crate::core::validate_call::validate_tool_call_now;
use futures::FutureExt;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

thread_local! {
    /// `setDefaultStreamFn`'s value. Borrowed only for a clone, never across a call into JS.
    static DEFAULT_STREAM_FN: RefCell<JsValue> = const { RefCell::new(JsValue::UNDEFINED) };
}

pub(crate) fn to_js(e: ArgError<JsValue>) -> JsValue {
    e.into_thrown(&JsHost)
}

/// API-1.3.2: the argument, else `config.streamFn`, else the default, else the built-in stream function. The config
/// was checked (`Checker::config`), so its `streamFn` is a function, `undefined` or `null`.
fn resolve_stream_fn(stream_fn: &JsValue, config: &JsValue, builtin: &JsValue) -> JsValue {
    let given = |f: &JsValue| !f.is_undefined() && !f.is_null();
    if given(stream_fn) {
        return stream_fn.clone();
    }
    if let Ok(configured) = JsHost.get(config, "streamFn")
        && given(&configured)
    {
        return configured;
    }
    let default = DEFAULT_STREAM_FN.with(|d| d.borrow().clone());
    if default.is_undefined() { builtin.clone() } else { default }
}

pub(super) struct LoopArgs<'a> {
    pub(super) function: &'a str,
    pub(super) prompts: Option<&'a JsValue>,
    pub(super) context: &'a JsValue,
    pub(super) config: &'a JsValue,
    pub(super) emit: Option<&'a JsValue>,
    pub(super) signal: &'a JsValue,
    pub(super) stream_fn: &'a JsValue,
}

fn check_loop_args(a: &LoopArgs<'_>) -> Result<(), ArgError<JsValue>> {
    if super::host::loop_args_look_valid(a.prompts, a.context, a.config, a.emit, a.signal, a.stream_fn)? {
        return Ok(());
    }
    check_loop_args_fully(a)
}

/// E-8.1: the full check of a loop entry's arguments, which names what is wrong; the reference of the one-step check
/// `loop_args_look_valid` (its twin in snippets/args.js), held to it by tests/js/parity.test.mjs.
pub(super) fn check_loop_args_fully(a: &LoopArgs<'_>) -> Result<(), ArgError<JsValue>> {
    let c = Checker::new(&JsHost, a.function);
    if let Some(prompts) = a.prompts {
        c.messages(prompts, "prompts")?;
    }
    c.context(a.context, "context")?;
    c.config(a.config, "config")?;
    if let Some(emit) = a.emit {
        c.function(emit, "emit")?;
    }
    c.signal(a.signal, "signal")?;
    c.optional_function(a.stream_fn, "streamFn")
}

/// Checks, guards and prepares a run synchronously; the returned start is driven later.
fn prepare(a: &LoopArgs<'_>) -> Result<Start<JsValue>, JsValue> {
    check_loop_args(a).map_err(to_js)?;
    match a.prompts {
        Some(prompts) => start_prompt_run(&JsHost, prompts, a.context),
        None => {
            // Issue 30: a continuation that carries out decided approvals.
            let approvals = JsHost.get(a.config, "approvals")?;
            if approvals.is_undefined() || approvals.is_null() {
                start_continue_run(&JsHost, a.context)
            } else {
                start_approved_run(&JsHost, a.context, &approvals, a.function).map_err(to_js)
            }
        }
    }
}

/// What a run is made of, until its first poll makes the `Run` (issue 17, memory per in-flight run). A future keeps
/// the space of every value it captured for its whole life, even once that value is moved on; boxed, these ~100
/// bytes are given back when the run starts instead of staying in every run's future.
struct RunArgs {
    start: Start<JsValue>,
    config: JsValue,
    signal: JsValue,
    stream_fn: JsValue,
    emitter: Emitter<JsHost>,
}

/// A run, its initial messages and the turn it resumes (what `drive_start` takes).
type Opened = (Run<'static, JsHost>, Option<Vec<JsValue>>, Option<Box<Resumed<JsValue>>>);

/// The run made of its arguments, and how it starts. In a plain function: the box is freed when this returns, where one
/// destructured in an async fn is freed only when that future ends, and would stay allocated for the whole run
/// (issue 34).
#[allow(clippy::boxed_local)] // the point: the box is freed here
fn open(args: Box<RunArgs>) -> Opened {
    let RunArgs { start, config, signal, stream_fn, emitter } = *args;
    (Run::new(&JsHost, start.context, config, signal, stream_fn, emitter), start.initial, start.resumed)
}

async fn drive_run(args: Box<RunArgs>) -> Result<JsValue, JsValue> {
    let (run, initial, resumed) = open(args);
    drive_start(&run, initial, resumed).await
}

/// An observing run (`agentLoop`), ended by calling its sink with the result and `true`: the sink is the run's one
/// handle on its event stream (issue 34: every handle a run holds is a slot of the externref table while it waits).
async fn drive_observed(args: Box<RunArgs>) {
    let (run, initial, resumed) = open(args);
    let result = drive_start(&run, initial, resumed).await.unwrap_or(JsValue::UNDEFINED);
    if let Some(sink) = run.emitter.js_sink() {
        let _ = JsHost.call_sync(sink, &JsValue::UNDEFINED, &[result, JsValue::TRUE]);
    }
}

/// A value the run keeps for its whole life. `undefined` (no signal, the usual case) becomes wasm-bindgen's constant,
/// which takes no slot of the externref table, and neither do its clones; any other value is a clone (issue 17: the
/// table grows to the most slots ever held at once, and a run hands its signal to every hook).
fn held(v: &JsValue) -> JsValue {
    if v.is_undefined() { JsValue::UNDEFINED } else { v.clone() }
}

/// Starts an observational run: `sink(event)` takes each event, `sink(result, true)` ends it.
fn spawn_observed(a: LoopArgs<'_>, sink: &JsValue, builtin: &JsValue) -> Result<(), JsValue> {
    let start = prepare(&a)?;
    let emitter = Emitter::new(sink.clone(), SinkMode::Observe);
    let (config, signal, stream_fn) =
        (a.config.clone(), held(a.signal), resolve_stream_fn(a.stream_fn, a.config, builtin));
    spawn(drive_observed(Box::new(RunArgs { start, config, signal, stream_fn, emitter })));
    Ok(())
}

fn spawn_barrier(a: LoopArgs<'_>, emit: &JsValue, builtin: &JsValue) -> js_sys::Promise {
    let start = match prepare(&a) {
        Ok(start) => start,
        Err(e) => return js_sys::Promise::reject(&e),
    };
    let emitter = Emitter::new(emit.clone(), SinkMode::Barrier);
    let (config, signal, stream_fn) =
        (a.config.clone(), held(a.signal), resolve_stream_fn(a.stream_fn, a.config, builtin));
    spawn_promise(drive_run(Box::new(RunArgs { start, config, signal, stream_fn, emitter })))
}

#[wasm_bindgen(js_name = agentLoop)]
pub fn agent_loop(
    prompts: JsValue,
    context: JsValue,
    config: JsValue,
    signal: JsValue,
    stream_fn: JsValue,
    sink: JsValue,
    builtin: JsValue,
) -> Result<(), JsValue> {
    let a = LoopArgs {
        function: "agentLoop",
        prompts: Some(&prompts),
        context: &context,
        config: &config,
        emit: None,
        signal: &signal,
        stream_fn: &stream_fn,
    };
    spawn_observed(a, &sink, &builtin)
}

#[wasm_bindgen(js_name = agentLoopContinue)]
pub fn agent_loop_continue(
    context: JsValue,
    config: JsValue,
    signal: JsValue,
    stream_fn: JsValue,
    sink: JsValue,
    builtin: JsValue,
) -> Result<(), JsValue> {
    let a = LoopArgs {
        function: "agentLoopContinue",
        prompts: None,
        context: &context,
        config: &config,
        emit: None,
        signal: &signal,
        stream_fn: &stream_fn,
    };
    spawn_observed(a, &sink, &builtin)
}

#[wasm_bindgen(js_name = runAgentLoop)]
#[allow(clippy::too_many_arguments)]
pub fn run_agent_loop(
    prompts: JsValue,
    context: JsValue,
    config: JsValue,
    emit: JsValue,
    signal: JsValue,
    stream_fn: JsValue,
    builtin: JsValue,
) -> js_sys::Promise {
    let a = LoopArgs {
        function: "runAgentLoop",
        prompts: Some(&prompts),
        context: &context,
        config: &config,
        emit: Some(&emit),
        signal: &signal,
        stream_fn: &stream_fn,
    };
    spawn_barrier(a, &emit, &builtin)
}

#[wasm_bindgen(js_name = runAgentLoopContinue)]
pub fn run_agent_loop_continue(
    context: JsValue,
    config: JsValue,
    emit: JsValue,
    signal: JsValue,
    stream_fn: JsValue,
    builtin: JsValue,
) -> js_sys::Promise {
    let a = LoopArgs {
        function: "runAgentLoopContinue",
        prompts: None,
        context: &context,
        config: &config,
        emit: Some(&emit),
        signal: &signal,
        stream_fn: &stream_fn,
    };
    spawn_barrier(a, &emit, &builtin)
}

fn check_run_tool_call(tool_call: &JsValue, options: &JsValue) -> Result<(), ArgError<JsValue>> {
    let h = JsHost;
    let c = Checker::new(&h, "runToolCall");
    c.object(tool_call, "toolCall")?;
    c.object(options, "options")?;
    c.tools(&h.get(options, "tools")?, "options.tools")?;
    if h.kind(&h.get(options, "tools")?).is_nullish() {
        return Err(ArgError::Type("runToolCall: options.tools must be an array".into()));
    }
    for hook in ["beforeToolCall", "afterToolCall", "onUpdate"] {
        c.optional_function(&h.get(options, hook)?, &format!("options.{hook}"))?;
    }
    c.signal(&h.get(options, "signal")?, "options.signal")?;
    c.limits(options, "options")
}

#[wasm_bindgen(js_name = runToolCall)]
pub fn run_tool_call(tool_call: JsValue, options: JsValue) -> js_sys::Promise {
    if let Err(e) = check_run_tool_call(&tool_call, &options) {
        return js_sys::Promise::reject(&to_js(e));
    }
    spawn_promise(async move {
        let h = JsHost;
        let call = Call::read(&h, &tool_call)?;
        let get = |k: &str| h.get(&options, k);
        let grace_ms = match get("abortGraceMs")?.as_f64() {
            Some(ms) if ms >= 0.0 => ms,
            _ => 5000.0,
        };
        let tools = get("tools")?;
        let assistant = get("assistantMessage")?;
        let context = get("context")?;
        let signal = get("signal")?;
        let env = ToolEnv {
            h: &h,
            tools,
            assistant: &assistant,
            context,
            hooks: options.clone(),
            signal: &signal,
            grace_ms,
            tool_timeout_ms: crate::core::tools::timeout_ms(&h, &options, "toolTimeoutMs"),
            halted: None,
            tool_index: Default::default(),
            updates: Default::default(),
        };
        let on_update = get("onUpdate")?;
        let signal = env.signal.clone();
        let deliver = |partial: JsValue| {
            let on_update = on_update.clone();
            let signal = signal.clone();
            async move {
                if on_update.is_function() {
                    // Awaited like an update (T-4.9.1), but bounded by the D4 deadline.
                    let update = JsHost.call(&on_update, &JsValue::UNDEFINED, &[partial]);
                    let h = JsHost;
                    let deadline = crate::core::run::abandon_deadline(&h, &signal, grace_ms);
                    let _ = futures::future::select(update, deadline).await;
                }
            }
            .boxed_local()
        };
        let outcome = env.run_call(&call, deliver).await;
        Ok(outcome_object(&h, &outcome))
    })
}

#[wasm_bindgen(js_name = validateToolArguments)]
pub fn validate_tool_arguments(tool: JsValue, tool_call: JsValue) -> Result<JsValue, JsValue> {
    let h = JsHost;
    let c = Checker::new(&h, "validateToolArguments");
    c.object(&tool, "tool").map_err(to_js)?;
    c.object(&tool_call, "toolCall").map_err(to_js)?;
    let args = h.get(&tool_call, "arguments")?;
    match validate_tool_call_now(&h, &tool, &tool_call, &args)? {
        Some(args) => Ok(args),
        None => Err(h.error(
            "validateToolArguments: the tool's Standard Schema validates asynchronously (its validate returned a \
             promise); validateToolArguments cannot wait for it (a run and runToolCall do)",
            true,
        )),
    }
}

#[wasm_bindgen(js_name = setDefaultStreamFn)]
pub fn set_default_stream_fn(stream_fn: JsValue) -> Result<(), JsValue> {
    let c = Checker::new(&JsHost, "setDefaultStreamFn");
    c.optional_function(&stream_fn, "streamFn").map_err(to_js)?;
    let value = if stream_fn.is_null() { JsValue::UNDEFINED } else { stream_fn };
    DEFAULT_STREAM_FN.with(|d| d.replace(value));
    Ok(())
}

/// Issue 45: how the package loads its compaction module (pkg-template/compaction.js, not in the loop's download):
/// a function answering the module or a promise of it, registered by the entry before its first run.
#[wasm_bindgen(js_name = setCompactionLoader)]
pub fn set_compaction_loader(loader: JsValue) {
    super::host::set_compaction_loader(loader);
}

/// The default set by `setDefaultStreamFn`, or undefined (the wrapper then answers `streamBuiltin`).
#[wasm_bindgen(js_name = getDefaultStreamFn)]
pub fn get_default_stream_fn() -> JsValue {
    DEFAULT_STREAM_FN.with(|d| d.borrow().clone())
}

#[wasm_bindgen(js_name = defaultAgentIdentity)]
pub fn default_agent_identity() -> JsValue {
    let h = JsHost;
    crate::core::agent_loop::request_identity(&h, &h.object(&[])).unwrap_or(JsValue::UNDEFINED)
}

#[wasm_bindgen(js_name = builtinApis)]
pub fn builtin_apis() -> JsValue {
    let h = JsHost;
    let names: Vec<JsValue> = crate::core::builtin::BUILTIN_APIS.iter().map(|a| h.string(a)).collect();
    h.array(&names)
}

#[wasm_bindgen(js_name = snapshotVersion)]
pub fn snapshot_version() -> u32 {
    crate::core::snapshot::VERSION as u32
}
