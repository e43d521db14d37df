//! The stateful `Agent` (§5): construction, queues, the run lifecycle with its event reducer and
//! awaited listeners, and run failure. The JS facade keeps the agent's values in a plain state
//! object (`st`) that it passes to every call, so nothing here holds a JS value between calls
//! (no reference cycle through the wasm instance, no borrow across a callback).

use super::agent_loop::{
    Resumed, Start, drive_start, empty_assistant, start_continue_run, start_prompt_run, start_resumed_run,
};
use super::args::{ArgError, CONFIG_HOOKS, Checker};
use super::checkpoint;
use super::declare::{declaration, role};
use super::fxhash::FxSet;
use super::host::{Host, Kind};
use super::run::{Emitter, NativeSink, Run};
use super::transcript::current_system_message;
use super::validate::js_json_stringify;
use super::wtf;
use futures::FutureExt;
use futures::future::LocalBoxFuture;
use std::rc::Rc;

pub const PROMPT_BUSY: &str =
    "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
pub const CONTINUE_BUSY: &str = "Agent is already processing. Wait for completion before continuing.";
pub const RESET_BUSY: &str = "Agent is already processing. Wait for completion before resetting.";
pub const NOTHING_TO_CONTINUE: &str = "No messages to continue from";
pub const ASSISTANT_TAIL: &str = "Cannot continue from message role: assistant";
pub const RESUME_BUSY: &str = "Agent is already processing. Wait for completion before resuming.";

/// Options that become public fields of the same name, with their defaults.
const FIELDS: [&str; 27] = [
    "convertToLlm",
    "transformContext",
    "getApiKey",
    "onPayload",
    "onResponse",
    "onProviderStreamEvent",
    "beforeToolCall",
    "afterToolCall",
    "finishTurn",
    "prepareRequest",
    "prepareNextTurn",
    "prepareNextTurnWithContext",
    "sessionId",
    "thinkingBudgets",
    "transport",
    "maxRetryDelayMs",
    "toolExecution",
    "identity",
    "toolTimeoutMs",
    "streamIdleTimeoutMs",
    "abortGraceMs",
    "maxParallelTools",
    "apiKey",
    "maxTokens",
    "temperature",
    "headers",
    "fetch",
];

/// Fields copied from the agent into every run's loop config, besides the model,
/// reasoning, the queue getters and the prepareNextTurn wrapper.
const FORWARDED: [&str; 23] = [
    "sessionId",
    "onPayload",
    "onResponse",
    "onProviderStreamEvent",
    "transport",
    "thinkingBudgets",
    "maxRetryDelayMs",
    "identity",
    "toolExecution",
    "beforeToolCall",
    "afterToolCall",
    "finishTurn",
    "prepareRequest",
    "convertToLlm",
    "transformContext",
    "getApiKey",
    "toolTimeoutMs",
    "streamIdleTimeoutMs",
    "abortGraceMs",
    "maxParallelTools",
    "apiKey",
    "maxTokens",
    "temperature",
];

/// The agent's optional hooks a run checks (E-8.1), in the order it reads them.
pub const AGENT_HOOKS: [&str; 8] = [
    "transformContext",
    "getApiKey",
    "beforeToolCall",
    "afterToolCall",
    "finishTurn",
    "prepareRequest",
    "prepareNextTurn",
    "prepareNextTurnWithContext",
];

const MODES: [&str; 2] = ["all", "one-at-a-time"];

type Thrown<V> = V;

fn get<H: Host>(h: &H, obj: &H::V, key: &str) -> Result<H::V, H::V> {
    h.get(obj, key)
}

fn items<H: Host>(h: &H, obj: &H::V, key: &str) -> Result<Vec<H::V>, H::V> {
    let v = h.get(obj, key)?;
    if h.kind(&v) == Kind::Array { h.array_items(&v) } else { Ok(Vec::new()) }
}

/// `st[key]` when it is an array, else a new empty one.
fn list_or_empty<H: Host>(h: &H, st: &H::V, key: &str) -> Result<H::V, H::V> {
    let v = h.get(st, key)?;
    if h.kind(&v) == Kind::Array { Ok(v) } else { Ok(h.array(&[])) }
}

/// A copy of the array `st[key]` (a new empty one when it is not an array), made in one call.
fn copied<H: Host>(h: &H, st: &H::V, key: &str) -> Result<H::V, H::V> {
    let v = h.get(st, key)?;
    if h.kind(&v) == Kind::Array { h.shallow_copy(&v) } else { Ok(h.array(&[])) }
}

/// The default `convertToLlm`: keeps the four LLM roles.
fn default_convert_to_llm<H: Host + Clone>(h: &H) -> H::V {
    let host = h.clone();
    h.function(Rc::new(move |args: &[H::V]| {
        let h = &host;
        let Some(messages) = args.first() else { return h.array(&[]) };
        let kept: Vec<H::V> = h
            .array_items(messages)
            .unwrap_or_default()
            .into_iter()
            .filter(|m| {
                matches!(role(h, m).ok().flatten().as_deref(), Some("system" | "user" | "assistant" | "toolResult"))
            })
            .collect();
        h.array(&kept)
    }))
}

fn check_mode<H: Host>(h: &H, c: &Checker<'_, H>, v: &H::V, path: &str) -> Result<String, ArgError<H::V>> {
    match h.as_string(v) {
        Some(mode) if MODES.contains(&mode.as_str()) => Ok(mode),
        _ => Err(ArgError::Type(format!("{}: {path} must be \"all\" or \"one-at-a-time\"", c.function))),
    }
}

/// `new Agent(options)`: checks the options, sets the public fields on `agent` and fills
/// the state object `st`.
pub fn init<H: Host + Clone>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    options: &H::V,
    default_stream_fn: &H::V,
) -> Result<(), ArgError<H::V>> {
    let c = Checker::new(h, "Agent");
    let options = if h.kind(options).is_nullish() { h.object(&[]) } else { options.clone() };
    c.object(&options, "options")?;
    let initial = get(h, &options, "initialState")?;
    if !h.kind(&initial).is_nullish() {
        c.object(&initial, "options.initialState")?;
    }
    for hook in CONFIG_HOOKS.iter().copied().chain(["convertToLlm", "streamFn", "prepareNextTurnWithContext"]) {
        if hook == "getSteeringMessages" || hook == "getFollowUpMessages" {
            continue;
        }
        c.optional_function(&get(h, &options, hook)?, &format!("options.{hook}"))?;
    }
    c.limits(&options, "options")?;
    let on_checkpoint = get(h, &options, "onCheckpoint")?;
    c.optional_function(&on_checkpoint, "options.onCheckpoint")?;
    let mut modes = Vec::new();
    for key in ["steeringMode", "followUpMode"] {
        let v = get(h, &options, key)?;
        modes.push(if h.kind(&v) == Kind::Undefined {
            "one-at-a-time".to_string()
        } else {
            check_mode(h, &c, &v, &format!("options.{key}"))?
        });
    }

    // Initial state.
    let (mut tools, mut messages, mut system_prompt, mut model, mut level) =
        (Vec::new(), Vec::new(), h.undefined(), h.undefined(), h.undefined());
    if !h.kind(&initial).is_nullish() {
        let t = get(h, &initial, "tools")?;
        if !h.kind(&t).is_nullish() {
            c.tools(&t, "options.initialState.tools")?;
            tools = h.array_items(&t)?;
        }
        let m = get(h, &initial, "messages")?;
        if !h.kind(&m).is_nullish() {
            c.messages(&m, "options.initialState.messages")?;
            messages = h.array_items(&m)?;
        }
        system_prompt = get(h, &initial, "systemPrompt")?;
        model = get(h, &initial, "model")?;
        level = get(h, &initial, "thinkingLevel")?;
    }
    let first_is_system = match messages.first() {
        Some(m) => role(h, m)?.as_deref() == Some("system"),
        None => false,
    };
    let prompt_text = h.as_string(&system_prompt).unwrap_or_default();
    if !first_is_system && (!prompt_text.is_empty() || !tools.is_empty()) {
        // The caller's string itself: a Rust copy would turn a lone surrogate into U+FFFD (issue 13).
        let content =
            if h.kind(&system_prompt) == Kind::String { system_prompt.clone() } else { h.string(&prompt_text) };
        let mut entries = vec![("role", h.constant("system")), ("content", content)];
        if !tools.is_empty() {
            let mut declarations = Vec::with_capacity(tools.len());
            for tool in &tools {
                declarations.push(declaration(h, tool)?.value);
            }
            entries.push(("toolsAdded", h.array(&declarations)));
        }
        entries.push(("timestamp", h.number(0.0)));
        messages.insert(0, h.object(&entries));
    }
    let model = if h.kind(&model).is_nullish() { default_model(h) } else { model };
    let level = if h.kind(&level).is_nullish() { h.constant("off") } else { level };
    let state = [
        ("model", model),
        ("thinkingLevel", level),
        ("tools", h.array(&tools)),
        ("messages", h.array(&messages)),
        ("isStreaming", h.boolean(false)),
        ("streamingMessage", h.undefined()),
        ("pendingToolCalls", h.new_set(&[])),
        ("errorMessage", h.undefined()),
        ("steering", h.array(&[])),
        ("followUp", h.array(&[])),
        ("steeringLeftByAbort", h.array(&[])),
        ("steeringMode", h.string(modes.first().map_or("one-at-a-time", |m| m.as_str()))),
        ("followUpMode", h.string(modes.get(1).map_or("one-at-a-time", |m| m.as_str()))),
        ("listeners", h.new_set(&[])),
        ("active", h.undefined()),
        // Durability (checkpoint.rs): drained messages and ended tool calls not yet in the
        // transcript, and whether a restored agent was interrupted mid-run.
        ("onCheckpoint", on_checkpoint.clone()),
        ("agent", agent.clone()),
        ("transitSteering", h.array(&[])),
        ("transitFollowUp", h.array(&[])),
        ("completedTools", h.array(&[])),
        ("endedTools", h.array(&[])),
        ("interrupted", h.boolean(false)),
    ];
    for (key, value) in &state {
        h.set(st, key, value)?;
    }
    if h.kind(&on_checkpoint) == Kind::Function {
        checkpoint::init(h, st, 0.0)?;
    }

    // Public fields.
    for field in FIELDS {
        let value = get(h, &options, field)?;
        let value = match (field, h.kind(&value)) {
            ("convertToLlm", k) if k.is_nullish() => {
                h.default_convert_to_llm().unwrap_or_else(|| default_convert_to_llm(h))
            }
            ("transport", k) if k.is_nullish() => h.constant("auto"),
            ("toolExecution", k) if k.is_nullish() => h.constant("parallel"),
            _ => value,
        };
        h.set(agent, field, &value)?;
    }
    let stream_fn = get(h, &options, "streamFn")?;
    let stream_fn = if h.kind(&stream_fn).is_nullish() { default_stream_fn.clone() } else { stream_fn };
    h.set(agent, "streamFunction", &stream_fn)?;
    Ok(())
}

/// A-5.1.3's default model.
pub fn default_model<H: Host>(h: &H) -> H::V {
    let zero = || h.number(0.0);
    let unknown = || h.constant("unknown");
    let cost = h.object(&[("input", zero()), ("output", zero()), ("cacheRead", zero()), ("cacheWrite", zero())]);
    h.object(&[
        ("id", unknown()),
        ("name", unknown()),
        ("api", unknown()),
        ("provider", unknown()),
        ("baseUrl", h.constant("")),
        ("reasoning", h.boolean(false)),
        ("input", h.array(&[])),
        ("cost", cost),
        ("contextWindow", zero()),
        ("maxTokens", zero()),
    ])
}

// ---- queues

/// Which queue: `("steering", "steeringMode")` or `("followUp", "followUpMode")`.
#[derive(Clone, Copy)]
pub enum Queue {
    Steering,
    FollowUp,
}

impl Queue {
    pub fn keys(self) -> (&'static str, &'static str) {
        match self {
            Queue::Steering => ("steering", "steeringMode"),
            Queue::FollowUp => ("followUp", "followUpMode"),
        }
    }
    /// Where drained messages wait until they are in the transcript (checkpoint.rs).
    pub fn transit(self) -> &'static str {
        match self {
            Queue::Steering => "transitSteering",
            Queue::FollowUp => "transitFollowUp",
        }
    }
}

/// A durable point outside a run's awaits: the agent is read from the state object.
fn changed<H: Host + Clone>(h: &H, st: &H::V) {
    if let Ok(agent) = get(h, st, "agent") {
        checkpoint::request(h, &agent, st);
    }
}

/// `agent.state.<field> = value` went through a setter: a durable point (checkpoint.rs).
pub fn state_changed<H: Host + Clone>(h: &H, st: &H::V) {
    changed(h, st);
}

pub fn enqueue<H: Host + Clone>(
    h: &H,
    st: &H::V,
    queue: Queue,
    message: &H::V,
    function: &str,
) -> Result<(), ArgError<H::V>> {
    Checker::new(h, function).message(message, "message")?;
    let (list, _) = queue.keys();
    h.array_push(&get(h, st, list)?, message)?;
    changed(h, st);
    Ok(())
}

/// The selection `peek` shows and `drain` removes: all, or the first one.
pub fn peek<H: Host>(h: &H, st: &H::V, queue: Queue) -> Result<Vec<H::V>, H::V> {
    let (list, mode) = queue.keys();
    let all = items(h, st, list)?;
    if h.as_string(&get(h, st, mode)?).as_deref() == Some("all") {
        return Ok(all);
    }
    Ok(all.into_iter().take(1).collect())
}

/// `Host::queue_poller` built from `drain`: a getter's throw gives an empty poll.
pub fn native_queue_poller<H: Host + Clone + 'static>(h: &H, st: &H::V, queue: Queue, skip: bool) -> H::V {
    let skip = std::cell::Cell::new(skip);
    let (host, st) = (h.clone(), st.clone());
    h.function(Rc::new(move |_args: &[H::V]| {
        let h = &host;
        if skip.replace(false) {
            return h.array(&[]);
        }
        h.array(&drain(h, &st, queue).unwrap_or_default())
    }))
}

pub fn drain<H: Host>(h: &H, st: &H::V, queue: Queue) -> Result<Vec<H::V>, H::V> {
    let (list, _) = queue.keys();
    let selected = peek(h, st, queue)?;
    let rest: Vec<H::V> = items(h, st, list)?.into_iter().skip(selected.len()).collect();
    h.set(st, list, &h.array(&rest))?;
    if !selected.is_empty() && h.kind(&get(h, st, "ck")?).is_object_like() {
        // Not a durable point: until they are in the transcript, checkpoints still count them as
        // queued, so a crash in between delivers them again instead of losing them.
        let transit = get(h, st, queue.transit())?;
        if h.kind(&transit) == Kind::Array {
            for message in &selected {
                h.array_push(&transit, message)?;
            }
        }
    }
    Ok(selected)
}

pub fn clear<H: Host + Clone>(h: &H, st: &H::V, queue: Queue) -> Result<(), H::V> {
    h.set(st, queue.keys().0, &h.array(&[]))?;
    changed(h, st);
    Ok(())
}

pub fn set_mode<H: Host + Clone>(h: &H, st: &H::V, queue: Queue, mode: &H::V) -> Result<(), ArgError<H::V>> {
    let (_, key) = queue.keys();
    let c = Checker::new(h, "Agent");
    let mode = check_mode(h, &c, mode, key)?;
    h.set(st, key, &h.string(&mode))?;
    changed(h, st);
    Ok(())
}

pub fn peek_queued<H: Host>(h: &H, st: &H::V) -> Result<H::V, H::V> {
    let steering = peek(h, st, Queue::Steering)?;
    let selected = if steering.is_empty() { peek(h, st, Queue::FollowUp)? } else { steering };
    Ok(h.array(&selected))
}

/// `takeQueuedMessages(predicate)` (issue 14.4, pi's newer Agent): removes the queued steering and
/// follow-up messages `predicate(message)` selects and answers them, steering first, each in queue
/// order. The rest keep their queue and mode. The predicate runs on a copy of the queues, and the
/// queues are rebuilt afterwards by identity, so a predicate that queues or clears meanwhile loses
/// nothing it did; a throwing predicate removes nothing.
pub fn take_queued<H: Host>(h: &H, st: &H::V, predicate: &H::V) -> Result<H::V, Thrown<H::V>> {
    Checker::new(h, "Agent.takeQueuedMessages").function(predicate, "predicate").map_err(|e| e.into_thrown(h))?;
    let mut selected = Vec::new();
    for queue in [Queue::Steering, Queue::FollowUp] {
        for message in items(h, st, queue.keys().0)? {
            if h.truthy(&h.call_sync(predicate, &h.undefined(), std::slice::from_ref(&message))?) {
                selected.push(message);
            }
        }
    }
    let mut taken = Vec::new();
    for queue in [Queue::Steering, Queue::FollowUp] {
        let (list, _) = queue.keys();
        let (picked, kept): (Vec<H::V>, Vec<H::V>) =
            items(h, st, list)?.into_iter().partition(|m| selected.iter().any(|s| h.same(s, m)));
        if !picked.is_empty() {
            h.set(st, list, &h.array(&kept))?;
            taken.extend(picked);
        }
    }
    Ok(h.array(&taken))
}

// ---- subscriptions

/// Adds a listener (once, like a `Set`) and returns the function that removes it.
pub fn subscribe<H: Host + Clone>(h: &H, st: &H::V, listener: &H::V) -> Result<H::V, ArgError<H::V>> {
    Checker::new(h, "Agent.subscribe").function(listener, "listener")?;
    h.set_add(&get(h, st, "listeners")?, listener)?;
    let (host, st, listener) = (h.clone(), st.clone(), listener.clone());
    Ok(h.function(Rc::new(move |_args: &[H::V]| {
        let h = &host;
        if let Ok(listeners) = get(h, &st, "listeners") {
            let _ = h.set_delete(&listeners, &listener);
        }
        h.undefined()
    })))
}

// ---- reset

pub fn reset<H: Host + Clone>(h: &H, st: &H::V) -> Result<(), H::V> {
    if h.truthy(&get(h, st, "active")?) {
        return Err(h.error(RESET_BUSY, false));
    }
    let messages = items(h, st, "messages")?;
    let baseline = current_system_message(h, &messages)?;
    h.set(st, "messages", &h.array(baseline.as_slice()))?;
    h.set(st, "isStreaming", &h.boolean(false))?;
    h.set(st, "streamingMessage", &h.undefined())?;
    h.set(st, "pendingToolCalls", &h.new_set(&[]))?;
    h.set(st, "errorMessage", &h.undefined())?;
    h.set(st, "interrupted", &h.boolean(false))?;
    h.set(st, "completedTools", &h.array(&[]))?;
    h.set(st, "endedTools", &h.array(&[]))?;
    h.set(st, "steeringLeftByAbort", &h.array(&[]))?;
    clear(h, st, Queue::Steering)?;
    clear(h, st, Queue::FollowUp)
}

// ---- runs

pub type RunFuture<V> = LocalBoxFuture<'static, Result<(), V>>;

/// A run's config, stream function, and its start (or the value preparing it threw).
type Prepared<V> = (V, V, Result<Start<V>, V>);

/// `prompt(message | messages | text, images?)`.
pub fn prompt<H: Host + Clone>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    input: &H::V,
    images: &H::V,
) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    if h.truthy(&get(h, st, "active")?) {
        return Err(h.error(PROMPT_BUSY, false));
    }
    let c = Checker::new(h, "Agent.prompt");
    let messages = match h.kind(input) {
        Kind::Array => {
            c.messages(input, "messages").map_err(|e| e.into_thrown(h))?;
            h.array_items(input)?
        }
        Kind::String => {
            let text = h.object(&[("type", h.constant("text")), ("text", input.clone())]);
            let mut content = vec![text];
            if !h.kind(images).is_nullish() {
                content.extend(c.array(images, "images").map_err(|e| e.into_thrown(h))?);
            }
            let message = h.object(&[
                ("role", h.constant("user")),
                ("content", h.array(&content)),
                ("timestamp", h.number(h.date_now())),
            ]);
            vec![message]
        }
        _ => {
            c.message(input, "message").map_err(|e| e.into_thrown(h))?;
            vec![input.clone()]
        }
    };
    check_state(h, agent, st, "Agent.prompt").map_err(|e| e.into_thrown(h))?;
    let mut prompts = take_steering_left_by_abort(h, st)?;
    prompts.extend(messages);
    Ok(start_run(h, agent, st, Some(prompts), false, None))
}

/// Issue 14.2: the steering messages an aborted run left queued (D2 polls no queue after the abort)
/// were written before the next prompt, so they go first in its batch, in queue order, whatever the
/// steering mode. Steering queued while the agent was idle is not marked: the prompt goes first and
/// the run's initial poll (S0) delivers it, as in the reference.
fn take_steering_left_by_abort<H: Host>(h: &H, st: &H::V) -> Result<Vec<H::V>, H::V> {
    let left = items(h, st, "steeringLeftByAbort")?;
    if left.is_empty() {
        return Ok(left);
    }
    h.set(st, "steeringLeftByAbort", &h.array(&[]))?;
    let (taken, kept): (Vec<H::V>, Vec<H::V>) =
        items(h, st, "steering")?.into_iter().partition(|m| left.iter().any(|l| h.same(l, m)));
    h.set(st, "steering", &h.array(&kept))?;
    // Out of the queue but not in the transcript yet: checkpoints still count them as queued.
    if h.kind(&get(h, st, "ck")?).is_object_like() {
        let transit = get(h, st, "transitSteering")?;
        for message in &taken {
            h.array_push(&transit, message)?;
        }
    }
    Ok(taken)
}

/// `continue()`.
pub fn continue_run<H: Host + Clone>(h: &H, agent: &H::V, st: &H::V) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    if h.truthy(&get(h, st, "active")?) {
        return Err(h.error(CONTINUE_BUSY, false));
    }
    // Element by element, stopping at the first non-system message: no copy of the transcript.
    let messages = list_or_empty(h, st, "messages")?;
    let count = h.array_len(&messages)?;
    let mut all_system = true;
    for i in 0..count {
        if role(h, &h.array_get(&messages, i)?)?.as_deref() != Some("system") {
            all_system = false;
            break;
        }
    }
    if count == 0 || all_system {
        return Err(h.error(NOTHING_TO_CONTINUE, false));
    }
    let last = h.array_get(&messages, count - 1)?;
    check_state(h, agent, st, "Agent.continue").map_err(|e| e.into_thrown(h))?;
    if role(h, &last)?.as_deref() == Some("assistant") {
        return match run_queued(h, agent, st)? {
            Some(run) => Ok(run),
            None => Err(h.error(ASSISTANT_TAIL, false)),
        };
    }
    Ok(start_run(h, agent, st, None, false, None))
}

/// `resume()`: picks up a run that a crash interrupted, from what the checkpoints (or a snapshot)
/// recorded. An agent that was not mid-run resolves at once. An interrupted turn's missing tool
/// calls run (and only those), then the run goes on; a transcript ending in a user or tool-result
/// message continues as `continue()` would (the interrupted request is made again); queued
/// messages are delivered as the interrupted run would have delivered them.
pub fn resume<H: Host + Clone>(h: &H, agent: &H::V, st: &H::V) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    if h.truthy(&get(h, st, "active")?) {
        return Err(h.error(RESUME_BUSY, false));
    }
    let idle = |h: &H| -> Result<RunFuture<H::V>, Thrown<H::V>> {
        h.set(st, "interrupted", &h.boolean(false))?;
        h.set(st, "completedTools", &h.array(&[]))?;
        changed(h, st);
        Ok(futures::future::ready(Ok(())).boxed_local())
    };
    if !h.truthy(&get(h, st, "interrupted")?) {
        return Ok(futures::future::ready(Ok(())).boxed_local());
    }
    let messages = items(h, st, "messages")?;
    check_state(h, agent, st, "Agent.resume").map_err(|e| e.into_thrown(h))?;
    // The last assistant message and the tool results after it.
    let mut existing = Vec::new();
    let mut assistant = None;
    for message in messages.iter().rev() {
        match role(h, message)?.as_deref() {
            Some("toolResult") => existing.push(message.clone()),
            Some("assistant") => {
                assistant = Some(message.clone());
                break;
            }
            _ => break,
        }
    }
    existing.reverse();
    let Some(last) = messages.last() else { return idle(h) };
    if role(h, last)?.as_deref() == Some("system")
        && messages.iter().all(|m| role(h, m).ok().flatten().as_deref() == Some("system"))
    {
        return idle(h);
    }
    let Some(assistant) = assistant else {
        // A user, custom or tool-result tail without its assistant message: a continuation.
        return Ok(start_run(h, agent, st, None, false, None));
    };
    let stop = get(h, &assistant, "stopReason").ok().and_then(|r| h.as_string(&r));
    if matches!(stop.as_deref(), Some("error") | Some("aborted")) {
        return idle(h); // the run had ended at that message (a hard exit)
    }
    let calls = super::tools::tool_calls(h, &assistant)?;
    let answered = |id: &H::V| existing.iter().any(|m| h.get(m, "toolCallId").is_ok_and(|x| h.same(&x, id)));
    if calls.iter().any(|c| !answered(&c.id)) {
        let completed = items(h, st, "completedTools")?;
        let resumed = Resumed { assistant, existing, completed };
        return Ok(start_run(h, agent, st, None, false, Some(resumed)));
    }
    if !existing.is_empty() {
        return Ok(start_run(h, agent, st, None, false, None));
    }
    // The turn was complete: deliver what is queued, as the interrupted run would have.
    match run_queued(h, agent, st)? {
        Some(run) => Ok(run),
        None => idle(h),
    }
}

/// after an assistant message: a run of the queued steering (its initial poll skipped),
/// else of the queued follow-ups; `None` when both queues are empty.
fn run_queued<H: Host + Clone>(h: &H, agent: &H::V, st: &H::V) -> Result<Option<RunFuture<H::V>>, H::V> {
    let steering = drain(h, st, Queue::Steering)?;
    if !steering.is_empty() {
        return Ok(Some(start_run(h, agent, st, Some(steering), true, None)));
    }
    let follow_ups = drain(h, st, Queue::FollowUp)?;
    if !follow_ups.is_empty() {
        return Ok(Some(start_run(h, agent, st, Some(follow_ups), false, None)));
    }
    Ok(None)
}

/// E-8.1 for the state a run would start from: tools, messages, hooks, numbers.
/// A host that finds every field valid in one step skips the reads below; anything else is checked
/// here, which names what is wrong.
fn check_state<H: Host>(h: &H, agent: &H::V, st: &H::V, function: &str) -> Result<(), ArgError<H::V>> {
    if h.agent_state_valid(agent, st)? {
        return Ok(());
    }
    let c = Checker::new(h, function);
    c.tools(&get(h, st, "tools")?, "state.tools")?;
    c.messages(&get(h, st, "messages")?, "state.messages")?;
    c.object(&get(h, st, "model")?, "state.model")?;
    c.function(&get(h, agent, "convertToLlm")?, "agent.convertToLlm")?;
    c.function(&get(h, agent, "streamFunction")?, "agent.streamFunction")?;
    for hook in AGENT_HOOKS {
        c.optional_function(&get(h, agent, hook)?, &format!("agent.{hook}"))?;
    }
    c.limits(agent, "agent")
}

/// The loop config of one run, captured at its start.
fn loop_config<H: Host + Clone>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    signal: &H::V,
    skip_initial_steering: bool,
) -> Result<H::V, H::V> {
    let level = get(h, st, "thinkingLevel")?;
    let reasoning = if h.as_string(&level).as_deref() == Some("off") { h.undefined() } else { level };
    let config = h.object(&[("model", get(h, st, "model")?), ("reasoning", reasoning)]);
    h.copy_fields(agent, &config, &FORWARDED)?;
    let with_context = get(h, agent, "prepareNextTurnWithContext")?;
    let legacy = get(h, agent, "prepareNextTurn")?;
    if h.truthy(&with_context) || h.truthy(&legacy) {
        let (host, agent, signal) = (h.clone(), agent.clone(), signal.clone());
        let wrapper = h.function(Rc::new(move |args: &[H::V]| {
            let h = &host;
            let ctx = args.first().cloned().unwrap_or_else(|| h.undefined());
            let undefined = h.undefined();
            let outcome = match get(h, &agent, "prepareNextTurnWithContext") {
                Ok(f) if h.kind(&f) == Kind::Function => h.call_sync(&f, &agent, &[ctx, signal.clone()]),
                Ok(_) => match get(h, &agent, "prepareNextTurn") {
                    Ok(f) if h.kind(&f) == Kind::Function => h.call_sync(&f, &agent, std::slice::from_ref(&signal)),
                    Ok(_) => Ok(undefined),
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            };
            // A throw becomes a rejected thenable the loop awaits.
            match outcome {
                Ok(v) => v,
                Err(e) => h.rejected(&e),
            }
        }));
        h.set(&config, "prepareNextTurn", &wrapper)?;
    }
    h.set(&config, "getSteeringMessages", &h.queue_poller(st, Queue::Steering, skip_initial_steering))?;
    h.set(&config, "getFollowUpMessages", &h.queue_poller(st, Queue::FollowUp, false))?;
    h.copy_fields(agent, &config, &["headers", "fetch"])?;
    Ok(config)
}

/// Starts a run under the lifecycle: the returned future resolves once the run and its
/// `agent_end` listeners settled; it never rejects for run failures.
fn start_run<H: Host + Clone>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    prompts: Option<Vec<H::V>>,
    skip_initial_steering: bool,
    resumed: Option<Resumed<H::V>>,
) -> RunFuture<H::V> {
    let (controller, signal) = h.abort_controller();
    let (promise, resolve) = h.deferred();
    let active =
        h.object(&[("controller", controller), ("signal", signal.clone()), ("promise", promise), ("resolve", resolve)]);
    let setup = (|| -> Result<Prepared<H::V>, H::V> {
        h.set(st, "active", &active)?;
        h.set(st, "steeringLeftByAbort", &h.array(&[]))?;
        h.set(st, "isStreaming", &h.boolean(true))?;
        h.set(st, "streamingMessage", &h.undefined())?;
        h.set(st, "errorMessage", &h.undefined())?;
        h.set(st, "interrupted", &h.boolean(false))?;
        // Each `start_*` makes the working copy of the transcript (D6) in one host call, so the
        // transcript itself goes in here: no crossing per message (issue 17).
        let context = h.object(&[("messages", list_or_empty(h, st, "messages")?), ("tools", copied(h, st, "tools")?)]);
        let config = loop_config(h, agent, st, &signal, skip_initial_steering)?;
        let stream_fn = get(h, agent, "streamFunction")?;
        let start = match (&prompts, resumed) {
            (_, Some(resumed)) => start_resumed_run(h, &context, resumed),
            (Some(messages), None) => start_prompt_run(h, &h.array(messages), &context),
            (None, None) => start_continue_run(h, &context),
        };
        // A durable point: a crash from here on leaves a run to resume.
        checkpoint::request(h, agent, st);
        Ok((config, stream_fn, start))
    })();
    let (h, st) = (h.clone(), st.clone());
    async move {
        let failure = match setup {
            Err(e) => Some(e),
            Ok((_, _, Err(e))) => Some(e),
            Ok((config, stream_fn, Ok(start))) => {
                let sink = event_sink(&h, &st, &signal);
                let run = Run::new(&h, start.context, config, signal.clone(), stream_fn, Emitter::native(sink));
                drive_start(&run, start.initial, start.resumed).await.err()
            }
        };
        if let Some(thrown) = failure {
            handle_run_failure(&h, &st, &signal, &thrown).await;
        }
        if h.signal_aborted(&signal) {
            let _ = items(&h, &st, "steering").and_then(|left| h.set(&st, "steeringLeftByAbort", &h.array(&left)));
        }
        finish_run(&h, &st);
        changed(&h, &st);
        Ok(())
    }
    .boxed_local()
}

/// The reducer then every listener, awaited in subscription order.
fn event_sink<H: Host + Clone>(h: &H, st: &H::V, signal: &H::V) -> NativeSink<H::V> {
    let (h, st, signal) = (h.clone(), st.clone(), signal.clone());
    Rc::new(move |event: H::V| {
        let (h, st, signal) = (h.clone(), st.clone(), signal.clone());
        async move {
            if h.reduce_agent_event(&st, &event)? {
                let agent = get(&h, &st, "agent")?;
                checkpoint::flush(&h, &agent, &st).await?;
            }
            call_listeners(&h, &st, &event, &signal, false).await
        }
        .boxed_local()
    })
}

/// `for (const listener of listeners) await listener(event, signal)` over the agent's `Set` of listeners, as
/// the reference dispatches: live (one subscribed during the dispatch hears this event, one removed before its
/// turn does not), each awaited before the next is called. The first throw or rejection ends it, unless
/// `swallow` (the failure events of ): then the walk goes on after the listener that failed.
async fn call_listeners<H: Host>(h: &H, st: &H::V, event: &H::V, signal: &H::V, swallow: bool) -> Result<(), H::V> {
    let listeners = get(h, st, "listeners")?;
    if !h.kind(&listeners).is_object_like() {
        return Ok(());
    }
    let mut cursor = None;
    loop {
        let failed = match h.call_listeners(&listeners, &mut cursor, event, signal) {
            Ok(Some(returned)) => h.settle(&returned).await.err(),
            Ok(None) => return Ok(()),
            Err(e) => Some(e),
        };
        match failed {
            Some(e) if !swallow => return Err(e),
            // Nothing to go on with: the list itself failed.
            Some(_) if cursor.is_none() => return Ok(()),
            _ => {}
        }
    }
}

/// Drops the entries of the list `st[key]` that `keep` rejects (only when one does).
fn retain<H: Host>(h: &H, st: &H::V, key: &str, keep: impl Fn(&H::V) -> bool) -> Result<(), H::V> {
    let list = items(h, st, key)?;
    if list.iter().all(&keep) {
        return Ok(());
    }
    let kept: Vec<H::V> = list.into_iter().filter(|v| keep(v)).collect();
    h.set(st, key, &h.array(&kept))
}

/// Applies an event to the state; `true` at a durable point (a message in the transcript, a tool
/// call ended) when the agent writes checkpoints.
pub fn reduce<H: Host>(h: &H, st: &H::V, event: &H::V) -> Result<bool, H::V> {
    let kind = h.as_string(&get(h, event, "type")?).unwrap_or_default();
    let durable = h.kind(&get(h, st, "ck")?).is_object_like();
    match kind.as_str() {
        "message_start" | "message_update" => h.set(st, "streamingMessage", &get(h, event, "message")?)?,
        "message_end" => {
            h.set(st, "streamingMessage", &h.undefined())?;
            let message = get(h, event, "message")?;
            h.array_push(&get(h, st, "messages")?, &message)?;
            if durable {
                for key in ["transitSteering", "transitFollowUp"] {
                    retain(h, st, key, |m| !h.same(m, &message))?;
                }
                if role(h, &message)?.as_deref() == Some("toolResult") {
                    let id = get(h, &message, "toolCallId")?;
                    retain(h, st, "completedTools", |r| {
                        !h.same(&get(h, r, "toolCallId").unwrap_or_else(|_| h.undefined()), &id)
                    })?;
                }
                return Ok(true);
            }
        }
        "tool_execution_start" | "tool_execution_end" => {
            let id = get(h, event, "toolCallId")?;
            let mut ids: Vec<H::V> = h.set_items(&get(h, st, "pendingToolCalls")?)?;
            ids.retain(|x| !h.same(x, &id));
            if kind == "tool_execution_start" {
                ids.push(id.clone());
            }
            h.set(st, "pendingToolCalls", &h.new_set(&ids))?;
            if durable && kind == "tool_execution_end" {
                // Ended but its result message comes later (a parallel batch emits them in source
                // order at its end): kept so that a resume does not run it again.
                let record = h.object(&[
                    ("toolCallId", id),
                    ("toolName", get(h, event, "toolName")?),
                    ("result", get(h, event, "result")?),
                    ("isError", get(h, event, "isError")?),
                ]);
                h.array_push(&get(h, st, "completedTools")?, &record)?;
                h.array_push(&get(h, st, "endedTools")?, &record)?;
                return Ok(true);
            }
        }
        "turn_end" => {
            let message = get(h, event, "message")?;
            if role(h, &message)?.as_deref() == Some("assistant") {
                let error = get(h, &message, "errorMessage")?;
                if h.truthy(&error) {
                    h.set(st, "errorMessage", &error)?;
                }
            }
        }
        "agent_end" => h.set(st, "streamingMessage", &h.undefined())?,
        _ => {}
    }
    Ok(false)
}

/// a listener threw, so the loop stopped; the failure events go through the reducer and
/// listeners, whose own errors are swallowed so the agent always becomes idle.
async fn handle_run_failure<H: Host + Clone>(h: &H, st: &H::V, signal: &H::V, thrown: &H::V) {
    let model = get(h, st, "model").unwrap_or_else(|_| h.undefined());
    let stop_reason = if h.signal_aborted(signal) { "aborted" } else { "error" };
    let message = h.error_message(thrown);
    let failure = empty_assistant(h, &model, true, &h.constant(stop_reason), Some(&message));
    let events = [
        h.object(&[("type", h.constant("message_start")), ("message", failure.clone())]),
        h.object(&[("type", h.constant("message_end")), ("message", failure.clone())]),
        h.object(&[("type", h.constant("turn_end")), ("message", failure.clone()), ("toolResults", h.array(&[]))]),
        h.object(&[("type", h.constant("agent_end")), ("messages", h.array(&[failure]))]),
    ];
    let agent = get(h, st, "agent").unwrap_or_else(|_| h.undefined());
    for event in events {
        if let Ok(true) = reduce(h, st, &event) {
            let _ = checkpoint::flush(h, &agent, st).await;
        }
        let _ = call_listeners(h, st, &event, signal, true).await;
    }
    let _ = h.set(st, "errorMessage", &h.string(&message));
}

/// Clears the runtime state and resolves `waitForIdle()`.
fn finish_run<H: Host>(h: &H, st: &H::V) {
    // What the run drained or ended without committing is gone from the live agent too.
    let _ = h.set(st, "transitSteering", &h.array(&[]));
    let _ = h.set(st, "transitFollowUp", &h.array(&[]));
    let _ = h.set(st, "completedTools", &h.array(&[]));
    let _ = h.set(st, "endedTools", &h.array(&[]));
    let _ = h.set(st, "isStreaming", &h.boolean(false));
    let _ = h.set(st, "streamingMessage", &h.undefined());
    let _ = h.set(st, "pendingToolCalls", &h.new_set(&[]));
    if let Ok(resolve) = get(h, st, "active").and_then(|active| get(h, &active, "resolve")) {
        let _ = h.call_sync(&resolve, &h.undefined(), &[]);
    }
    let _ = h.set(st, "active", &h.undefined());
}

// ---- snapshots (D8)

/// Walks a value the way `JSON.stringify` would and names the first part it cannot hold
/// (a function, symbol, BigInt, or a cycle), as `messages[3].details.fn`. Iterative, with no
/// depth limit of its own: a transcript holds whatever JS can hold (issue 13).
fn unserializable<H: Host>(h: &H, root: &H::V, prefix: &str) -> Option<String> {
    /// One node seen: its parent's index and its key or index there.
    enum Seg {
        Root,
        Key(usize, String),
        Index(usize, usize),
    }
    enum Step<V> {
        Visit(V, usize),
        Leave(Option<u64>),
    }
    let mut nodes: Vec<Seg> = vec![Seg::Root];
    let path_of = |nodes: &[Seg], mut at: usize| -> String {
        let mut parts: Vec<String> = Vec::new();
        loop {
            match nodes.get(at) {
                Some(Seg::Key(parent, key)) => {
                    parts.push(key.clone());
                    at = *parent;
                }
                Some(Seg::Index(parent, i)) => {
                    parts.push(format!("[{i}]"));
                    at = *parent;
                }
                _ => break,
            }
        }
        let mut path = prefix.to_string();
        for part in parts.iter().rev() {
            if !part.starts_with('[') && !path.is_empty() {
                path.push('.');
            }
            path.push_str(part);
        }
        path
    };
    // The objects on the current path: by identity number when the host has one, else by `same`.
    let mut ancestor_ids: FxSet<u64> = FxSet::default();
    let mut ancestors: Vec<H::V> = Vec::new();
    let mut steps = vec![Step::Visit(root.clone(), 0)];
    while let Some(step) = steps.pop() {
        let (v, at) = match step {
            Step::Visit(v, at) => (v, at),
            Step::Leave(Some(id)) => {
                ancestor_ids.remove(&id);
                continue;
            }
            Step::Leave(None) => {
                ancestors.pop();
                continue;
            }
        };
        match h.kind(&v) {
            Kind::Function | Kind::Other => return Some(path_of(&nodes, at)),
            Kind::Array | Kind::Object => {}
            _ => continue,
        }
        let id = h.object_id(&v).map(|id| id as u64);
        let cyclic = match id {
            Some(id) => !ancestor_ids.insert(id),
            None => ancestors.iter().any(|a| h.same(a, &v)),
        };
        if cyclic {
            return Some(path_of(&nodes, at));
        }
        if id.is_none() {
            ancestors.push(v.clone());
        }
        steps.push(Step::Leave(id));
        let first_child = steps.len();
        if h.kind(&v) == Kind::Array {
            for (i, item) in h.array_items(&v).unwrap_or_default().into_iter().enumerate() {
                nodes.push(Seg::Index(at, i));
                steps.push(Step::Visit(item, nodes.len() - 1));
            }
        } else {
            let Ok(fields) = h.entries(&v) else {
                return Some(path_of(&nodes, at));
            };
            for (key, value) in fields {
                if h.kind(&value) != Kind::Undefined {
                    nodes.push(Seg::Key(at, key));
                    steps.push(Step::Visit(value, nodes.len() - 1));
                }
            }
        }
        // Children in order: the first one is visited first.
        if let Some(children) = steps.get_mut(first_child..) {
            children.reverse();
        }
    }
    None
}

/// `agent.snapshot()` (D8.1): a JSON-compatible deep copy of the committed state.
pub fn snapshot<H: Host>(h: &H, agent: &H::V, st: &H::V) -> Result<H::V, H::V> {
    let mut names = Vec::new();
    for tool in items(h, st, "tools")? {
        if h.kind(&tool).is_object_like() {
            names.push(get(h, &tool, "name")?);
        }
    }
    let mut entries = vec![
        ("format", h.string(super::snapshot::FORMAT)),
        ("version", h.number(super::snapshot::VERSION as f64)),
        ("model", get(h, st, "model")?),
        ("thinkingLevel", get(h, st, "thinkingLevel")?),
        ("messages", h.array(&items(h, st, "messages")?)),
        // Messages a running loop drained but has not delivered yet still count as queued.
        ("steeringQueue", h.array(&checkpoint::durable_queue(h, st, "transitSteering", "steering")?)),
        ("followUpQueue", h.array(&checkpoint::durable_queue(h, st, "transitFollowUp", "followUp")?)),
        ("steeringMode", get(h, st, "steeringMode")?),
        ("followUpMode", get(h, st, "followUpMode")?),
    ];
    let session = get(h, agent, "sessionId")?;
    if h.kind(&session) != Kind::Undefined {
        entries.push(("sessionId", session));
    }
    entries.push(("toolNames", h.array(&names)));
    // Durability: where the checkpoints stand, and a run in progress for `resume()` to pick up.
    let ck = get(h, st, "ck")?;
    if h.kind(&ck).is_object_like() {
        entries.push(("checkpointSeq", get(h, &ck, "seq")?));
    }
    if h.truthy(&get(h, st, "active")?) || h.truthy(&get(h, st, "interrupted")?) {
        entries.push(("running", h.boolean(true)));
        let completed = items(h, st, "completedTools")?;
        if !completed.is_empty() {
            entries.push(("completedTools", h.array(&completed)));
        }
    }
    let picture = h.object(&entries);
    if let Some(path) = unserializable(h, &picture, "") {
        return Err(h.error(&format!("Agent.snapshot: {path} is not JSON-serializable"), true));
    }
    let text = h.json_stringify(&picture, false)?.unwrap_or_default();
    h.json_parse(&text)
}

/// The checking half of `Agent.restore` (D8.2, D8.3): parses, migrates and checks a snapshot
/// (object or JSON text) into a fresh plain value; throws the exact D8.3 `Error`s.
pub fn parse_snapshot<H: Host>(h: &H, input: &H::V) -> Result<H::V, H::V> {
    let text = match h.as_string(input) {
        Some(text) => {
            // Parsed by the engine first, so its SyntaxError text is what the message shows.
            h.json_parse(&text).map_err(|e| {
                h.error(&format!("Agent.restore: snapshot is not valid JSON: {}", h.error_message(&e)), false)
            })?;
            text
        }
        None => {
            if !h.kind(input).is_object_like() {
                return Err(h.error("Agent.restore: not an agent-loop-wasm snapshot", false));
            }
            if let Some(path) = unserializable(h, input, "") {
                return Err(h.error(&format!("Agent.restore: invalid snapshot: {path}: not JSON-serializable"), false));
            }
            h.json_stringify(input, false)?.unwrap_or_default()
        }
    };
    // Lone surrogates and any depth survive (issue 13): `restore` takes whatever `snapshot()` made.
    let value =
        wtf::parse(&text).map_err(|e| h.error(&format!("Agent.restore: snapshot is not valid JSON: {e}"), false))?;
    let migrated = super::snapshot::migrate(value).map_err(|message| h.error(&message, false))?;
    let migrated = serde_json::Value::Object(migrated);
    let text = js_json_stringify(&migrated);
    wtf::drop_deep(migrated);
    h.json_parse(&text)
}

/// The checking half of `Agent.restore` for every input it takes: a snapshot (object or JSON
/// text), or an array of checkpoints in order, optionally after a snapshot (each element may be
/// JSON text). Checkpoints are folded into the snapshot's state (checkpoint.rs).
pub fn parse_restore<H: Host>(h: &H, input: &H::V) -> Result<H::V, H::V> {
    if h.kind(input) != Kind::Array {
        return parse_snapshot(h, input);
    }
    let mut list = h.array_items(input)?;
    for (i, item) in list.iter_mut().enumerate() {
        if let Some(text) = h.as_string(item) {
            *item = h.json_parse(&text).map_err(|e| {
                h.error(&format!("Agent.restore: checkpoints[{i}] is not valid JSON: {}", h.error_message(&e)), false)
            })?;
        }
    }
    let is_snapshot = |v: &H::V| {
        h.kind(v).is_object_like()
            && h.get(v, "format").ok().and_then(|f| h.as_string(&f)).as_deref() == Some(super::snapshot::FORMAT)
    };
    let (data, seq, rest) = match list.first() {
        Some(first) if is_snapshot(first) => {
            let data = parse_snapshot(h, first)?;
            let seq = h.as_number(&get(h, &data, "checkpointSeq")?).unwrap_or(0.0);
            (data, seq, list.get(1..).unwrap_or_default())
        }
        Some(first)
            if h.kind(first).is_object_like()
                && h.get(first, "format").ok().and_then(|f| h.as_string(&f)).as_deref() == Some(checkpoint::FORMAT) =>
        {
            (h.object(&[]), 0.0, &list[..])
        }
        // Neither a snapshot nor checkpoints (an empty list too): D8.3's error.
        _ => return Err(h.error("Agent.restore: not an agent-loop-wasm snapshot", false)),
    };
    checkpoint::fold(h, &data, rest, seq).map_err(|e| match e {
        ArgError::Type(message) => h.error(&message, false),
        ArgError::Thrown(v) => v,
    })?;
    for (key, default) in [("steeringMode", "one-at-a-time"), ("followUpMode", "one-at-a-time")] {
        if h.kind(&get(h, &data, key)?) == Kind::Undefined {
            h.set(&data, key, &h.constant(default))?;
        }
    }
    Ok(data)
}

/// The applying half of `Agent.restore`: `data` was checked by `parse_snapshot`, `agent` is a new
/// idle instance built from the options; `tools` (optional) become its tools.
pub fn apply_snapshot<H: Host>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    data: &H::V,
    tools: &H::V,
) -> Result<(), ArgError<H::V>> {
    if !h.kind(tools).is_nullish() {
        Checker::new(h, "Agent.restore").tools(tools, "options.tools")?;
    }
    let tools = if h.kind(tools).is_nullish() { Vec::new() } else { h.array_items(tools)? };
    h.set(st, "tools", &h.array(&tools))?;
    for (from, to) in [
        ("model", "model"),
        ("thinkingLevel", "thinkingLevel"),
        ("messages", "messages"),
        ("steeringQueue", "steering"),
        ("followUpQueue", "followUp"),
        ("steeringMode", "steeringMode"),
        ("followUpMode", "followUpMode"),
    ] {
        h.set(st, to, &get(h, data, from)?)?;
    }
    let session = get(h, data, "sessionId")?;
    if h.kind(&session) != Kind::Undefined {
        h.set(agent, "sessionId", &session)?;
    }
    h.set(st, "interrupted", &h.boolean(h.truthy(&get(h, data, "running")?)))?;
    let completed = get(h, data, "completedTools")?;
    h.set(
        st,
        "completedTools",
        &h.array(&if h.kind(&completed) == Kind::Array { h.array_items(&completed)? } else { Vec::new() }),
    )?;
    if h.kind(&get(h, st, "onCheckpoint")?) == Kind::Function {
        let seq = h.as_number(&get(h, data, "checkpointSeq")?).unwrap_or(0.0);
        checkpoint::adopt(h, agent, st, seq)?;
    }
    Ok(())
}
