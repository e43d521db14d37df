//! The loop of §3: run start (prompt or continuation), the main loop with its polling points
//! S0/S1/S2/F, the request boundary and streaming (L-3.5, L-3.6), hard exits, and the clean endings
//! of D1 and D2. Tool batches are in `tools`; event delivery and callbacks in `run`.

use super::declare::inject::declare_tool_changes;
use super::fast::{EventCode, Pumped};
use super::host::HostFuture;
use super::host::Kind;
use super::run::{Run, Stop, abandon_deadline};
use super::tools::{Batch, Call, Resumed, timeout_ms};
use super::validate::js_number_to_string;
use crate::core::fast::FastPaths;
use futures::FutureExt;
use futures::future::{Either, Fuse, LocalBoxFuture, select};
use std::future::Future;

const REQUEST_ABORTED: &str = "Request was aborted";
const STREAM_ENDED: &str = "Stream ended without a done or error event";

/// How long a foreign stream's `result()` is awaited after it ended without a terminal event.
const FOREIGN_RESULT_WAIT_MS: f64 = 1000.0;

/// A run ready to be driven, prepared synchronously at the entry point.
pub struct Start<V> {
    /// The working context (a copy of the caller's, L-3.1.3 / D6).
    pub context: V,
    /// `Some(initial messages)` for prompt runs, `None` for continuations.
    pub initial: Option<Vec<V>>,
    /// A turn interrupted between its assistant message and its tool results (`Agent.resume`). Boxed, as everywhere
    /// a run's future holds it: only resumed runs have one, and every run's future would be sized for it.
    pub resumed: Option<Box<Resumed<V>>>,
}

/// L-3.1.3: declares tools on the prompts and builds the working context. Synchronous, before any
/// event; an `Err` is a value a caller getter threw.
pub fn start_prompt_run<H: FastPaths>(h: &H, prompts: &H::V, context: &H::V) -> Result<Start<H::V>, H::V> {
    let prompts = h.array_items(prompts)?;
    let initial = declare_tool_changes(h, context, &prompts)?;
    let working = h.shallow_copy(context)?;
    let messages = working_copy(h, context)?;
    for message in &initial {
        h.array_push(&messages, message)?;
    }
    h.set(&working, "messages", &messages)?;
    Ok(Start { context: working, initial: Some(initial), resumed: None })
}

/// The D6 copy of `context.messages`: one host call for an array (a long transcript crosses no
/// boundary element by element, issue 17), the items of anything else as before.
fn working_copy<H: FastPaths>(h: &H, context: &H::V) -> Result<H::V, H::V> {
    let messages = h.get(context, "messages")?;
    if h.kind(&messages) == Kind::Array { h.shallow_copy(&messages) } else { Ok(h.array(&h.array_items(&messages)?)) }
}

/// L-3.1.4: the continuation guards (exact texts, plain `Error`) and the D6 copy.
pub fn start_continue_run<H: FastPaths>(h: &H, context: &H::V) -> Result<Start<H::V>, H::V> {
    let messages = working_copy(h, context)?;
    let count = h.array_len(&messages)?;
    if count == 0 {
        return Err(h.error("Cannot continue: no messages in context", false));
    }
    if super::declare::tools::role(h, &h.array_get(&messages, count - 1)?)?.as_deref() == Some("assistant") {
        return Err(h.error("Cannot continue from message role: assistant", false));
    }
    let working = h.shallow_copy(context)?;
    h.set(&working, "messages", &messages)?;
    Ok(Start { context: working, initial: None, resumed: None })
}

/// A continuation that first finishes an interrupted tool batch (the D6 copy, no tail guard).
pub fn start_resumed_run<H: FastPaths>(h: &H, context: &H::V, resumed: Resumed<H::V>) -> Result<Start<H::V>, H::V> {
    let messages = working_copy(h, context)?;
    let working = h.shallow_copy(context)?;
    h.set(&working, "messages", &messages)?;
    Ok(Start { context: working, initial: None, resumed: Some(Box::new(resumed)) })
}

/// Issue 30 (T-4.10.5): `agentLoopContinue` with `config.approvals` (`agent_end.approvals` with `decisions`):
/// finishes the batch that waited, with the decisions, then goes on as a continuation. `Err(TypeError)` for a
/// malformed approvals object, `Err(Error)` when the context has no tool call waiting.
pub fn start_approved_run<H: FastPaths>(
    h: &H,
    context: &H::V,
    approvals: &H::V,
    function: &str,
) -> Result<Start<H::V>, super::args::ArgError<H::V>> {
    let checked = super::approvals::check_approvals(h, function, "config.approvals", approvals)?;
    let messages = working_copy(h, context)?;
    let items = h.array_items(&messages)?;
    let Some(resumed) = continuation(h, &items, checked)? else {
        let text = format!("{function}: the context's last assistant message has no tool call waiting for a result");
        return Err(super::args::ArgError::Thrown(h.error(&text, false)));
    };
    let working = h.shallow_copy(context)?;
    h.set(&working, "messages", &messages)?;
    Ok(Start { context: working, initial: None, resumed: Some(Box::new(resumed)) })
}

/// An assistant message and the tool results after it.
pub type OpenTurn<V> = (V, Vec<V>);

/// The turn a continuation finishes: the transcript's last assistant message and the tool results after it, when
/// some of its tool calls have no result yet (else `None`: nothing waits).
pub fn open_turn<H: FastPaths>(h: &H, messages: &[H::V]) -> Result<Option<OpenTurn<H::V>>, H::V> {
    let mut existing = Vec::new();
    let mut assistant = None;
    for message in messages.iter().rev() {
        match super::declare::tools::role(h, message)?.as_deref() {
            Some("toolResult") => existing.push(message.clone()),
            Some("assistant") => {
                assistant = Some(message.clone());
                break;
            }
            _ => break,
        }
    }
    let Some(assistant) = assistant else { return Ok(None) };
    existing.reverse();
    let answered = |id: &H::V| existing.iter().any(|m| h.get(m, "toolCallId").is_ok_and(|x| h.same(&x, id)));
    let open = super::tools::tool_calls(h, &assistant)?.iter().any(|c| !answered(&c.id));
    Ok(open.then_some((assistant, existing)))
}

/// The resumed turn of a continuation with decisions (nothing was interrupted: no call is refused as interrupted).
pub fn continuation<H: FastPaths>(
    h: &H,
    messages: &[H::V],
    approvals: super::approvals::Approvals<H::V>,
) -> Result<Option<Resumed<H::V>>, H::V> {
    Ok(open_turn(h, messages)?.map(|(assistant, existing)| Resumed {
        assistant,
        existing,
        completed: approvals.completed,
        decisions: approvals.decisions,
        interrupted: false,
    }))
}

/// Drives a prepared run to its end. Resolves with newMessages, or with the value a failing sink
/// threw (L-3.10.4). Every other failure ends inside the run (D1, D2): `agent_end` is always last.
pub async fn drive<H: FastPaths>(run: &Run<'_, H>, initial: Option<Vec<H::V>>) -> Result<H::V, H::V> {
    drive_start(run, initial, None).await
}

/// `drive`, for a start that may resume an interrupted turn. Its steps are functions of their own (the opening
/// events, the loop, the ending): this future is part of every in-flight run, and a future keeps every local held
/// across two of its awaits in space none of its other awaits share (see `run_loop`).
pub async fn drive_start<H: FastPaths>(
    run: &Run<'_, H>,
    initial: Option<Vec<H::V>>,
    resumed: Option<Box<Resumed<H::V>>>,
) -> Result<H::V, H::V> {
    let outcome = match resumed {
        Some(resumed) => {
            drop(initial);
            Box::pin(run_resumed(run, resumed)).await
        }
        None => match open_run(run, initial).await {
            Err(stop) => Err(stop),
            // Moved out and dropped: a scrutinee still in place would be held through the whole loop.
            opened => {
                drop(opened);
                run_loop(run, None).await
            }
        },
    };
    end_run(run, outcome).await
}

/// The run's ending (D1, D2): a failure or an abort ends cleanly; resolves with newMessages, or with the value a
/// failing sink threw (L-3.10.4).
async fn end_run<H: FastPaths>(run: &Run<'_, H>, outcome: Result<(), Stop>) -> Result<H::V, H::V> {
    let ended = match outcome {
        Ok(()) | Err(Stop::EmitFailed) => Ok(()),
        Err(Stop::Failed(message)) => end_with_failure(run, &message).await,
        Err(Stop::Aborted) => end_after_abort(run).await,
    };
    let _ = ended;
    match run.emitter.failure() {
        Some(thrown) => Err(thrown),
        None => Ok(run.new_messages.clone()),
    }
}

/// The opening events of a run with prompts (`agentLoop`) or without (`agentLoopContinue`).
async fn open_run<H: FastPaths>(run: &Run<'_, H>, initial: Option<Vec<H::V>>) -> Result<(), Stop> {
    match initial {
        Some(initial) => announce_prompts(run, initial).await,
        None => {
            run.emit_type("agent_start").await?;
            run.emit_type("turn_start").await
        }
    }
}

async fn announce_prompts<H: FastPaths>(run: &Run<'_, H>, initial: Vec<H::V>) -> Result<(), Stop> {
    let h = run.h;
    for message in &initial {
        h.array_push(&run.new_messages, message).map_err(|e| run.fail(&e))?;
    }
    run.emit_type("agent_start").await?;
    run.emit_type("turn_start").await?;
    for message in &initial {
        run.emit_message("message_start", message).await?;
        run.emit_message("message_end", message).await?;
    }
    // The prompts live on in `newMessages` and the context; holding them here too for the whole run would keep a
    // JS value slot each (issue 17: the externref table grows to the most slots ever held at once).
    Ok(())
}

async fn run_resumed<H: FastPaths>(run: &Run<'_, H>, resumed: Box<Resumed<H::V>>) -> Result<(), Stop> {
    run.emit_type("agent_start").await?;
    run.emit_type("turn_start").await?;
    run_loop(run, Some(resumed)).await
}

/// Polls a queue getter (S0, S1, S2, F). Nothing is polled once aborted (D2.1). What it returns is
/// kept as undelivered until injected, so a failure never loses it (D1.2).
async fn poll<H: FastPaths>(run: &Run<'_, H>, getter: &str) -> Result<usize, Stop> {
    let h = run.h;
    run.check_abort()?;
    let Some(value) = run.call_hook(getter, &[]).await? else {
        return Ok(0);
    };
    if h.kind(&value).is_nullish() {
        return Ok(0);
    }
    if h.kind(&value) != Kind::Array {
        return Err(Stop::Failed(format!("{getter} must return an array of messages")));
    }
    let messages = h.array_items(&value).map_err(|e| run.fail(&e))?;
    let count = messages.len();
    run.ending.borrow_mut().undelivered.extend(messages);
    Ok(count)
}

fn pending_count<H: FastPaths>(run: &Run<'_, H>) -> usize {
    run.ending.borrow().undelivered.len()
}

/// L-3.2.1: applies a `prepareNextTurn` / `prepareRequest` update; returns its `messages`.
fn apply_update<H: FastPaths>(
    run: &Run<'_, H>,
    hook: &str,
    update: Option<H::V>,
    with_messages: bool,
) -> Result<Vec<H::V>, Stop> {
    let h = run.h;
    let Some(update) = update else {
        return Ok(Vec::new());
    };
    if !h.truthy(&update) {
        return Ok(Vec::new());
    }
    let invalid = |detail: &str| Stop::Failed(format!("{hook} returned an invalid update: {detail}"));
    if !h.kind(&update).is_object_like() {
        return Err(invalid("expected an object"));
    }
    let get = |obj: &H::V, key: &str| h.get(obj, key).map_err(|e| run.fail(&e));
    let context = get(&update, "context")?;
    if !h.kind(&context).is_nullish() {
        if !h.kind(&context).is_object_like() {
            return Err(invalid("context must be an object"));
        }
        if h.kind(&get(&context, "messages")?) != Kind::Array {
            return Err(invalid("context.messages must be an array"));
        }
    }
    let messages = if with_messages {
        let messages = get(&update, "messages")?;
        match h.kind(&messages) {
            Kind::Undefined | Kind::Null => Vec::new(),
            Kind::Array => h.array_items(&messages).map_err(|e| run.fail(&e))?,
            _ => return Err(invalid("messages must be an array")),
        }
    } else {
        Vec::new()
    };
    let model = get(&update, "model")?;
    let level = get(&update, "thinkingLevel")?;
    let config = run.config();
    let next = h.shallow_copy(&config).map_err(|e| run.fail(&e))?;
    let model = if h.kind(&model).is_nullish() { get(&config, "model")? } else { model };
    let reasoning = match h.kind(&level) {
        Kind::Undefined => get(&config, "reasoning")?,
        _ if h.as_string(&level).as_deref() == Some("off") => h.undefined(),
        _ => level,
    };
    h.set(&next, "model", &model).map_err(|e| run.fail(&e))?;
    h.set(&next, "reasoning", &reasoning).map_err(|e| run.fail(&e))?;
    run.set_config(next);
    if !h.kind(&context).is_nullish() {
        run.set_context(context);
    }
    Ok(messages)
}

/// A finished turn. Its `{message, toolResults, context, newMessages}` object is built the first time a hook gets it
/// (finishTurn, then the next turn's prepareNextTurn, both the same object), and not at all without those hooks.
/// Building it reads nothing from JS: the context and `newMessages` are the run's, so a late build sees what an
/// early one would (only prepareNextTurn and prepareRequest replace the context, and they come after).
/// Its `toolResults` is one array, the same object in that turn object and in the `turn_end` event, as in the
/// reference (a finishTurn that adds to it changes what `turn_end` carries).
struct Turn<V> {
    message: V,
    results: V,
    object: Option<V>,
}

impl<V: Clone> Turn<V> {
    fn new<H: FastPaths<V = V>>(h: &H, message: V, results: &[V]) -> Self {
        Turn { message, results: h.array(results), object: None }
    }

    fn object<H: FastPaths<V = V>>(&mut self, run: &Run<'_, H>) -> V {
        if let Some(object) = &self.object {
            return object.clone();
        }
        let object = turn_context(run, &self.message, &self.results);
        self.object = Some(object.clone());
        object
    }
}

/// `{message, toolResults, context, newMessages}` handed to finishTurn and prepareNextTurn.
fn turn_context<H: FastPaths>(run: &Run<'_, H>, message: &H::V, results: &H::V) -> H::V {
    let h = run.h;
    h.object(&[
        ("message", message.clone()),
        ("toolResults", results.clone()),
        ("context", run.context()),
        ("newMessages", run.new_messages.clone()),
    ])
}

/// Injects everything undelivered (prepared first, then queued) after declaring tool changes.
async fn inject_pending<H: FastPaths>(run: &Run<'_, H>) -> Result<(), Stop> {
    let pending = run.ending.borrow().undelivered.clone();
    let declared = declare_tool_changes(run.h, &run.context(), &pending).map_err(|e| run.fail(&e))?;
    run.ending.borrow_mut().undelivered.clear();
    for message in &declared {
        run.inject(message).await?;
    }
    Ok(())
}

fn stop_reason<H: FastPaths>(run: &Run<'_, H>, message: &H::V) -> Option<String> {
    run.h.get(message, "stopReason").ok().and_then(|v| run.h.as_string(&v))
}

/// The `action` of a finishTurn decision (L-3.8.2); reading it may throw like the hook itself.
fn decision_action<H: FastPaths>(run: &Run<'_, H>, decision: &Option<H::V>) -> Result<Option<String>, Stop> {
    let h = run.h;
    match decision {
        Some(d) if h.kind(d).is_object_like() => Ok(h.as_string(&h.get(d, "action").map_err(|e| run.fail(&e))?)),
        _ => Ok(None),
    }
}

/// §3.2 main loop. Its steps are separate functions (`after_message`, `tool_batch`, `end_turn`) so that what one
/// step holds across its awaits does not sit in the loop's own future beside the stream it reads: a future keeps
/// every local held across two awaits in space shared by none of its other awaits, and this future is part of every
/// in-flight run (issue 34: the wasm memory kept after a burst of runs is their peak).
async fn run_loop<H: FastPaths>(run: &Run<'_, H>, mut resumed: Option<Box<Resumed<H::V>>>) -> Result<(), Stop> {
    if resumed.is_none() {
        // A resumed turn polls at S1, after its tool batch, as the interrupted run would have.
        poll(run, "getSteeringMessages").await?; // S0
    }
    let mut last_turn: Option<Box<Turn<H::V>>> = None;
    let mut continue_once = false;
    loop {
        let mut more_tool_calls = true;
        while more_tool_calls || pending_count(run) > 0 {
            run.breathe().await;
            // Nothing but the loop's own state is held across the stream's reading.
            let (message, resuming) = match resumed.take() {
                Some(r) => (r.assistant.clone(), Some(r)),
                None => (next_assistant_message(run, &mut last_turn).await?, None),
            };
            // Boxed, once a step: a run spends its time waiting on the stream (a provider's reply), not in its tool
            // batch, whose future is the larger one; inline, every run's future would be sized for the batch.
            match Box::pin(after_message(run, message, resuming, &mut last_turn)).await? {
                Some(next) => (more_tool_calls, continue_once) = next,
                None => return Ok(()),
            }
        }
        let follow_ups = poll(run, "getFollowUpMessages").await?; // F
        if follow_ups > 0 {
            continue_once = false;
            continue;
        }
        if continue_once {
            continue_once = false;
            continue;
        }
        break;
    }
    run.emit_agent_end().await
}

/// The rest of a turn once its assistant message is in: the hard exit, the tool batch, then `end_turn`. `None` when
/// the run ended here; else whether more tool calls follow and whether finishTurn asked to continue. Only the
/// message is held across the batch (see `run_loop`).
async fn after_message<H: FastPaths>(
    run: &Run<'_, H>,
    message: H::V,
    resuming: Option<Box<Resumed<H::V>>>,
    last_turn: &mut Option<Box<Turn<H::V>>>,
) -> Result<Option<(bool, bool)>, Stop> {
    let (calls, truncated) = match message_calls(run, &message)? {
        Some((calls, _)) if calls.is_empty() => return end_turn(run, message, Vec::new(), false, last_turn).await,
        Some(found) => found,
        None => return hard_exit(run, &message, None).await.map(|()| None),
    };
    let (batch, results) = tool_batch(run, &message, calls, truncated, resuming).await?;
    after_batch(run, message, batch, results, last_turn).await
}

/// A reply's tool calls and whether it was cut off (`stopReason` "length"); `None` for an error or abort reply.
type FoundCalls<V> = Option<(Vec<Call<V>>, bool)>;

fn message_calls<H: FastPaths>(run: &Run<'_, H>, message: &H::V) -> Result<FoundCalls<H::V>, Stop> {
    let reason = stop_reason(run, message);
    if matches!(reason.as_deref(), Some("error") | Some("aborted")) {
        return Ok(None);
    }
    let calls = super::tools::tool_calls(run.h, message).map_err(|e| run.fail(&e))?;
    Ok(Some((calls, reason.as_deref() == Some("length"))))
}

/// The batch's results into the context, then the pause (issue 30) or `end_turn`.
async fn after_batch<H: FastPaths>(
    run: &Run<'_, H>,
    message: H::V,
    batch: Batch<H::V>,
    results: Vec<H::V>,
    last_turn: &mut Option<Box<Turn<H::V>>>,
) -> Result<Option<(bool, bool)>, Stop> {
    let Batch { messages, terminate, paused } = batch;
    for result in &messages {
        run.append(result)?;
    }
    drop(messages);
    if let Some(pause) = paused {
        // T-4.10.2: calls wait for a person. The turn ends here without finishTurn (its batch is not
        // complete) and without polling a queue: what is queued is delivered when the turn goes on.
        run.emit_turn_end(&message, &run.h.array(&results)).await?;
        return run.emit_agent_end_paused(&pause).await.map(|()| None);
    }
    end_turn(run, message, results, !terminate, last_turn).await
}

/// The turn's tool batch: the resumed one, every call failed (a truncated reply, a limit reached), or executed.
/// Returns the batch and every result of the turn. The rare paths are boxed: inline, every run's future would be
/// sized for them.
async fn tool_batch<H: FastPaths>(
    run: &Run<'_, H>,
    message: &H::V,
    calls: Vec<Call<H::V>>,
    truncated: bool,
    resuming: Option<Box<Resumed<H::V>>>,
) -> Result<(Batch<H::V>, Vec<H::V>), Stop> {
    if let Some(r) = resuming {
        // Only a run resumed from a checkpoint takes this path, and its future is the largest of the loop's.
        return Box::pin(run.resume_tool_calls(message, &calls, &r)).await;
    }
    let batch = if truncated {
        Box::pin(run.fail_truncated(&calls)).await?
    } else if let Some(reached) = run.limit_before_batch(calls.len()) {
        // L-3.12.4: a limit stops the run before its batch; every call gets a result naming it.
        let batch = Box::pin(run.fail_limited(&calls, &reached.message)).await?;
        run.hold_stop(reached);
        batch
    } else {
        run.count_tool_calls(calls.len());
        run.execute_tool_calls(message, &calls).await?
    };
    let all = batch.messages.clone();
    Ok((batch, all))
}

/// The end of a turn (D2.3, finishTurn, `turn_end`, the limits, S1). `None` when the run ended here; else whether
/// more tool calls follow and whether finishTurn asked to continue.
async fn end_turn<H: FastPaths>(
    run: &Run<'_, H>,
    message: H::V,
    results: Vec<H::V>,
    more_tool_calls: bool,
    last_turn: &mut Option<Box<Turn<H::V>>>,
) -> Result<Option<(bool, bool)>, Stop> {
    let h = run.h;
    if run.aborted() {
        return hard_exit(run, &message, Some(h.array(&results))).await.map(|()| None); // D2.3
    }
    let mut turn = Turn::new(h, message, &results);
    drop(results);
    let decision = match run.hook("finishTurn")? {
        Some(f) => Some(run.call_fn(&f, &[turn.object(run), run.signal.clone()]).await?),
        None => None,
    };
    let action = decision_action(run, &decision)?;
    drop(decision);
    run.emit_turn_end(&turn.message, &turn.results).await?;
    *last_turn = Some(Box::new(turn));
    if let Some(reached) = run.take_stop() {
        return run.emit_agent_end_limited(&reached).await.map(|()| None);
    }
    if action.as_deref() == Some("end") {
        return run.emit_agent_end().await.map(|()| None);
    }
    let mut continue_once = action.as_deref() == Some("continue");
    drop(action);
    if let Some(reached) = run.limit_before_request() {
        // L-3.12.3: no further request and no queue poll (queued messages stay queued). The stop is reported
        // when the run would have gone on by itself (tool results for the model, finishTurn's "continue");
        // after a final answer the run ends as it would have.
        if more_tool_calls || continue_once {
            return run.emit_agent_end_limited(&reached).await.map(|()| None);
        }
        return run.emit_agent_end().await.map(|()| None);
    }
    let steered = poll(run, "getSteeringMessages").await?; // S1
    if more_tool_calls || steered > 0 {
        continue_once = false;
    }
    Ok(Some((more_tool_calls, continue_once)))
}

/// The start of a turn up to its assistant message: prepareNextTurn and S2 after the first turn,
/// the pending messages, prepareRequest, the request and its stream (in newMessages on return).
async fn next_assistant_message<H: FastPaths>(
    run: &Run<'_, H>,
    last_turn: &mut Option<Box<Turn<H::V>>>,
) -> Result<H::V, Stop> {
    let h = run.h;
    if let Some(turn) = last_turn {
        // Boxed, once a turn: inline, its future (the largest here) would size every run's for the stream's reading.
        Box::pin(next_turn(run, turn)).await?;
    }
    // The last turn serves prepareNextTurn only: held through the request, its message and results would be two more
    // handles in every run waiting on its stream (issue 34: the externref table grows to the most ever held at once).
    // Cleared in place: a turn moved out here would take space of its own in this future.
    *last_turn = None;
    before_request(run).await?;
    let message = stream_assistant_response(run).await?;
    h.array_push(&run.new_messages, &message).map_err(|e| run.fail(&e))?;
    Ok(message)
}

/// After the first turn: prepareNextTurn, S2, `turn_start`.
async fn next_turn<H: FastPaths>(run: &Run<'_, H>, turn: &mut Turn<H::V>) -> Result<(), Stop> {
    run.check_abort()?;
    let queued = run.ending.borrow().undelivered.clone();
    let update = match run.hook("prepareNextTurn")? {
        Some(f) => Some(run.call_fn(&f, &[turn.object(run)]).await?),
        None => None,
    };
    let prepared = apply_update(run, "prepareNextTurn", update, true)?;
    if !prepared.is_empty() {
        let mut all = prepared;
        all.extend(queued.iter().cloned());
        run.ending.borrow_mut().undelivered = all;
    }
    if queued.is_empty() {
        poll(run, "getSteeringMessages").await?; // S2
    }
    run.emit_type("turn_start").await
}

/// The pending messages, then prepareRequest.
async fn before_request<H: FastPaths>(run: &Run<'_, H>) -> Result<(), Stop> {
    let h = run.h;
    inject_pending(run).await?;
    run.check_abort()?;
    // `config.prepareRequest?.({context, model, thinkingLevel}, signal)`: the hook is read first, and the
    // model and level only when it exists.
    let update = match run.hook("prepareRequest")? {
        Some(f) => {
            let request = h.object(&[
                ("context", run.context()),
                ("model", h.get(&run.config(), "model").map_err(|e| run.fail(&e))?),
                ("thinkingLevel", thinking_level(run)),
            ]);
            Some(run.call_fn(&f, &[request, run.signal.clone()]).await?)
        }
        None => None,
    };
    apply_update(run, "prepareRequest", update, false)?;
    Ok(())
}

/// L-3.7.1 / D2.3: finishTurn with its decision ignored, then `turn_end`, `agent_end`. After an error or abort
/// reply (`results` None) the reference hands finishTurn and `turn_end` two empty arrays; after an abort during the
/// tools (D2.3) the turn's results are one array for both, as at the end of any other turn.
async fn hard_exit<H: FastPaths>(run: &Run<'_, H>, message: &H::V, results: Option<H::V>) -> Result<(), Stop> {
    let h = run.h;
    let array = || results.clone().unwrap_or_else(|| h.array(&[]));
    // The decision is ignored and the run ends either way; a failing finishTurn changes nothing.
    if let Ok(Some(f)) = run.hook("finishTurn") {
        let _ = run.call_fn(&f, &[turn_context(run, message, &array()), run.signal.clone()]).await;
    }
    run.emit_turn_end(message, &array()).await?;
    run.emit_agent_end().await
}

fn thinking_level<H: FastPaths>(run: &Run<'_, H>) -> H::V {
    let h = run.h;
    match h.get(&run.config(), "reasoning") {
        Ok(level) if !h.kind(&level).is_nullish() => level,
        _ => h.constant("off"),
    }
}

/// API-1.4.2: DEFAULT_AGENT_IDENTITY overlaid field by field with `config.identity`.
pub fn request_identity<H: FastPaths>(h: &H, config: &H::V) -> Result<H::V, H::V> {
    let attribution = h.object(&[
        ("name", h.constant("pi")),
        ("url", h.constant("https://pi.dev")),
        ("categories", h.array(&[h.constant("cli-agent")])),
    ]);
    let merged = h.object(&[("attribution", attribution)]);
    let identity = h.get(config, "identity")?;
    if h.truthy(&identity) && h.kind(&identity).is_object_like() {
        for key in ["userAgent", "attribution", "version"] {
            let value = h.get(&identity, key)?;
            if h.kind(&value) != Kind::Undefined {
                h.set(&merged, key, &value)?;
            }
        }
    }
    Ok(merged)
}

/// The request boundary (L-3.5.1) and the stream (L-3.6). Returns the final assistant message,
/// already in the context (not yet in newMessages).
async fn stream_assistant_response<H: FastPaths>(run: &Run<'_, H>) -> Result<H::V, Stop> {
    // The request is a function of its own, boxed (once a step): what it holds across its awaits (the messages, the
    // config, the model, the key, the hooks' calls) is not held beside the stream's reading, where a run spends its
    // time (see `run_loop`).
    let (source, mut watch) = match Box::pin(request(run)).await {
        Ok(Requested::Source(source, watch)) => (source, watch),
        Ok(Requested::Ended(message)) => return Ok(message),
        Err(stop) => return Err(stop),
    };
    read_stream(run, &source, &mut watch).await
}

enum Requested<'h, H: FastPaths> {
    /// The stream function's answer, and the watch its reading goes on with.
    Source(H::V, RequestWatch<'h, H>),
    /// The request went idle (D3.2): its message, ended.
    Ended(H::V),
}

/// transformContext, convertToLlm, getApiKey, then the call of the stream function.
async fn request<'h, H: FastPaths>(run: &Run<'h, H>) -> Result<Requested<'h, H>, Stop> {
    let h = run.h;
    run.check_abort()?;
    let fail = |e: H::V| run.fail(&e);
    let mut messages = run.context_messages()?;
    if let Some(transformed) = run.call_hook("transformContext", &[messages.clone(), run.signal.clone()]).await? {
        if h.kind(&transformed) != Kind::Array {
            return Err(Stop::Failed("transformContext must return an array of messages".into()));
        }
        messages = transformed;
    }
    let llm = run.call_hook("convertToLlm", &[messages]).await?.unwrap_or_else(|| h.undefined());
    if h.kind(&llm) != Kind::Array {
        return Err(Stop::Failed("convertToLlm must return an array of messages".into()));
    }
    let transcript = h.object(&[("messages", llm)]);
    let config = run.config();
    let model = h.get(&config, "model").map_err(fail)?;
    let mut api_key = h.undefined();
    if run.hook("getApiKey")?.is_some() {
        let provider = h.get(&model, "provider").map_err(fail)?;
        if let Some(key) = run.call_hook("getApiKey", &[provider]).await? {
            api_key = key;
        }
    }
    if !h.truthy(&api_key) {
        api_key = h.get(&config, "apiKey").map_err(fail)?;
    }
    let options = h.shallow_copy(&config).map_err(fail)?;
    h.set(&options, "apiKey", &api_key).map_err(fail)?;
    h.set(&options, "identity", &request_identity(h, &config).map_err(fail)?).map_err(fail)?;
    let mut watch = RequestWatch::new(run, timeout_ms(h, &config, "streamIdleTimeoutMs"));
    h.set(&options, "signal", &watch.signal()).map_err(fail)?;
    run.check_abort()?; // D2.4: no request once aborted
    run.count_request();
    let undefined = h.undefined();
    let source = match watch.watch(h.call(&run.stream_fn, &undefined, &[model, transcript, options])).await {
        Watched::Value(Ok(source)) => source,
        Watched::Value(Err(e)) => return Err(run.fail(&e)),
        Watched::Idle(ms) => {
            return Box::pin(end_idle(run, &run.context_messages()?, None, ms)).await.map(Requested::Ended);
        }
        Watched::Abandoned => return Err(Stop::Failed(REQUEST_ABORTED.into())),
    };
    Ok(Requested::Source(source, watch))
}

/// Watches one request: the D4 deadline after an abort, and with `streamIdleTimeoutMs` (D3.2) an
/// idle timer that restarts at every event, on a child signal that follows the run's signal.
struct RequestWatch<'h, H: FastPaths> {
    h: &'h H,
    run_signal: H::V,
    deadline: Fuse<LocalBoxFuture<'h, ()>>,
    parent_abort: Fuse<HostFuture<()>>,
    /// The idle timeout and the controller of the child signal (boxed: only with `streamIdleTimeoutMs`, and the watch
    /// is held beside the stream's reading in every run in flight, issue 34).
    idle: Option<Box<Idle<H::V>>>,
}

/// The idle timeout (ms), the controller of the child signal and the signal.
type Idle<V> = (f64, V, V);

enum Watched<T> {
    Value(T),
    Idle(f64),
    Abandoned,
}

impl<'h, H: FastPaths> RequestWatch<'h, H> {
    fn new(run: &Run<'h, H>, idle_ms: f64) -> Self {
        let h = run.h;
        let idle = (idle_ms > 0.0).then(|| {
            let (controller, signal) = h.abort_controller();
            Box::new((idle_ms, controller, signal))
        });
        let parent_abort =
            if idle.is_some() { h.wait_abort(&run.signal) } else { futures::future::pending().boxed_local() };
        RequestWatch {
            h,
            run_signal: run.signal.clone(),
            deadline: abandon_deadline(h, &run.signal, run.abort_grace_ms).fuse(),
            parent_abort: parent_abort.fuse(),
            idle,
        }
    }

    /// The signal the stream function gets.
    fn signal(&self) -> H::V {
        self.idle.as_deref().map_or_else(|| self.run_signal.clone(), |(_, _, signal)| signal.clone())
    }

    async fn watch<T>(&mut self, fut: impl Future<Output = T>) -> Watched<T> {
        let h = self.h;
        let fut = fut.fuse();
        futures::pin_mut!(fut);
        let mut timer = match self.idle.as_deref() {
            Some((ms, _, _)) => h.sleep(*ms),
            None => futures::future::pending().boxed_local(),
        }
        .fuse();
        loop {
            futures::select_biased! {
                v = fut => return Watched::Value(v),
                () = &mut self.parent_abort => {
                    if let Some((_, controller, _)) = self.idle.as_deref() {
                        let reason = h.get(&self.run_signal, "reason").unwrap_or_else(|_| h.undefined());
                        h.abort(controller, &reason);
                    }
                }
                () = timer => {
                    let ms = self.idle.as_deref().map_or(0.0, |(ms, _, _)| *ms);
                    if let Some((_, controller, _)) = self.idle.as_deref() {
                        let reason = h.error(&idle_message(ms), false);
                        let _ = h.set(&reason, "name", &h.constant("TimeoutError"));
                        h.abort(controller, &reason);
                    }
                    return Watched::Idle(ms);
                }
                () = &mut self.deadline => return Watched::Abandoned,
            }
        }
    }
}

fn idle_message(ms: f64) -> String {
    format!("Stream idle timeout: no event from the provider for {} ms", js_number_to_string(ms))
}

/// D3.2: the stream went quiet. The message ends with `stopReason: "error"` (the partial kept),
/// so the loop takes the hard exit. Its callers box it: it is rare and larger than what they await otherwise, and
/// inline it would size every run's future for it (issue 17, memory per in-flight run).
async fn end_idle<H: FastPaths>(run: &Run<'_, H>, messages: &H::V, slot: Option<usize>, ms: f64) -> Result<H::V, Stop> {
    let h = run.h;
    // Cloned out first: reading the array may run caller code, and no borrow is held across that.
    let placed = run.ending.borrow().partial.clone();
    let partial = placed.and_then(|(array, index)| read_index(h, &array, index));
    let message = match (slot, partial) {
        (Some(_), Some(partial)) => {
            let copy = h.shallow_copy(&partial).map_err(|e| run.fail(&e))?;
            h.set(&copy, "stopReason", &h.constant("error")).map_err(|e| run.fail(&e))?;
            h.set(&copy, "errorMessage", &h.string(&idle_message(ms))).map_err(|e| run.fail(&e))?;
            copy
        }
        _ => failure_message(run, &h.constant("error"), &idle_message(ms)),
    };
    finish_message(run, messages, slot, &message).await
}

/// Iterates an assistant message event source (L-3.6.1 – L-3.6.4).
async fn read_stream<H: FastPaths>(
    run: &Run<'_, H>,
    source: &H::V,
    watch: &mut RequestWatch<'_, H>,
) -> Result<H::V, Stop> {
    let h = run.h;
    let fail = |e: H::V| run.fail(&e);
    let not_iterable = || Stop::Failed("streamFn must return an async iterable of assistant message events".into());
    let iterator = match h.async_iterator(source) {
        Ok(Some(it)) => it,
        Ok(None) => return Err(not_iterable()),
        Err(e) => return Err(fail(e)),
    };
    let messages = run.context_messages()?;
    // Where the streamed partial sits in `messages`, once `start` arrived.
    let mut slot: Option<usize> = None;
    loop {
        run.breathe().await;
        let mut pumped = h.pump(source, None, &messages, slot, run.emitter.observing_sink()).map_err(fail)?;
        if let Pumped::Empty = pumped {
            let event = match watch.watch(h.iterator_next(&iterator)).await {
                Watched::Value(event) => event,
                Watched::Idle(ms) => {
                    h.iterator_return(&iterator);
                    return Box::pin(end_idle(run, &messages, slot, ms)).await;
                }
                Watched::Abandoned => {
                    h.iterator_return(&iterator);
                    return Err(Stop::Failed(REQUEST_ABORTED.into()));
                }
            };
            let event = match event {
                Ok(Some(event)) => event,
                Ok(None) => break,
                Err(e) => return Err(fail(e)),
            };
            pumped = h.pump(source, Some(event), &messages, slot, run.emitter.observing_sink()).map_err(fail)?;
        }
        let (code, event) = match pumped {
            Pumped::Delivered | Pumped::Empty => continue,
            Pumped::Update(update) => {
                run.emit(update).await?;
                continue;
            }
            Pumped::SinkFailed(thrown) => return Err(run.emitter.record_failure(thrown)),
            Pumped::Event(code, event) => (code, event),
        };
        match code {
            EventCode::Start => {
                let partial = h.get(&event, "partial").map_err(fail)?;
                h.array_push(&messages, &partial).map_err(fail)?;
                let index = h.array_len(&messages).map_err(fail)?.saturating_sub(1);
                slot = Some(index);
                run.ending.borrow_mut().partial = Some((messages.clone(), index));
                let copy = h.shallow_copy(&partial).map_err(fail)?;
                // Boxed, once a reply: the largest await of the reading, which every run waiting on its stream holds.
                Box::pin(run.emit_message("message_start", &copy)).await?;
            }
            // Without a partial in place there is nothing to update (with one, `pump` did it).
            EventCode::Block => {}
            code @ (EventCode::Done | EventCode::Error) => {
                let (kind, field) = if code == EventCode::Done { ("done", "message") } else { ("error", "error") };
                let fallback = h.get(&event, field).map_err(fail)?;
                // Boxed, as the ending below: once a step, and larger than the reading's own awaits (issue 34).
                return Box::pin(async {
                    let final_message = match source_result(run, source, None).await {
                        Some(result) => result,
                        None if h.kind(&fallback).is_object_like() => fallback,
                        None => return Err(Stop::Failed(format!("Assistant message event \"{kind}\" has no {field}"))),
                    };
                    finish_message(run, &messages, slot, &final_message).await
                })
                .await;
            }
            EventCode::Other => {}
        }
    }
    // L-3.6.4: ended without a terminal event.
    Box::pin(async {
        match source_result(run, source, Some(FOREIGN_RESULT_WAIT_MS)).await {
            Some(final_message) => finish_message(run, &messages, slot, &final_message).await,
            None => Err(Stop::Failed(STREAM_ENDED.into())),
        }
    })
    .await
}

/// `await source.result()` when the source has one and it yields an object. With `wait_ms`, our
/// own streams answer at once that no result will come; foreign ones get `wait_ms`.
async fn source_result<H: FastPaths>(run: &Run<'_, H>, source: &H::V, wait_ms: Option<f64>) -> Option<H::V> {
    let h = run.h;
    let result = h.get(source, "result").ok()?;
    if h.kind(&result) != Kind::Function {
        return None;
    }
    // Our own streams answer at once whether a result will come.
    let has_result = h.get(source, "hasResult").unwrap_or_else(|_| h.undefined());
    if wait_ms.is_some() && h.kind(&has_result) == Kind::Function {
        let known = h.call_sync(&has_result, source, &[]).ok()?;
        if !h.truthy(&known) {
            return None;
        }
    }
    let pending = h.call(&result, source, &[]);
    let settled = match wait_ms {
        None => run.guarded(pending).await?,
        Some(ms) => match select(pending, h.sleep(ms)).await {
            Either::Left((v, _)) => v,
            Either::Right(_) => return None,
        },
    };
    match settled {
        Ok(v) if h.kind(&v).is_object_like() => Some(v),
        _ => None,
    }
}

/// L-3.6.3: stamps `thinkingLevel`, puts the final message in place of the partial (or appends
/// it after a `message_start`), and emits `message_end`.
async fn finish_message<H: FastPaths>(
    run: &Run<'_, H>,
    messages: &H::V,
    slot: Option<usize>,
    final_message: &H::V,
) -> Result<H::V, Stop> {
    let h = run.h;
    let fail = |e: H::V| run.fail(&e);
    h.set(final_message, "thinkingLevel", &thinking_level(run)).map_err(fail)?;
    run.count_spent(final_message);
    match slot {
        Some(index) => h.array_set(messages, index, final_message).map_err(fail)?,
        None => {
            h.array_push(messages, final_message).map_err(fail)?;
        }
    }
    run.ending.borrow_mut().partial = None;
    if slot.is_none() {
        let copy = h.shallow_copy(final_message).map_err(fail)?;
        run.emit_message("message_start", &copy).await?;
    }
    run.emit_message("message_end", final_message).await?;
    Ok(final_message.clone())
}

/// D2.4: an abort seen between steps. Nothing open and nothing drained → just `agent_end`;
/// otherwise the turn ends with a synthesized aborted assistant message.
async fn end_after_abort<H: FastPaths>(run: &Run<'_, H>) -> Result<(), Stop> {
    let nothing_open = !run.turn_open() && run.ending.borrow().undelivered.is_empty();
    if nothing_open {
        return run.emit_agent_end().await;
    }
    end_with_failure(run, REQUEST_ABORTED).await
}

/// D1.2: ends the run cleanly after a callback failure; calls no callback but the sink.
async fn end_with_failure<H: FastPaths>(run: &Run<'_, H>, error_message: &str) -> Result<(), Stop> {
    let h = run.h;
    let stop_reason = h.string(if run.aborted() { "aborted" } else { "error" });
    if !run.turn_open() {
        run.emit_type("turn_start").await?;
    }
    let undelivered = std::mem::take(&mut run.ending.borrow_mut().undelivered);
    if !undelivered.is_empty() {
        // The tools are not re-declared here: that would read caller objects again.
        for message in &undelivered {
            run.inject(message).await?;
        }
    }
    let slot = run.ending.borrow_mut().partial.take();
    let partial = slot.and_then(|(messages, index)| read_index(h, &messages, index).map(|p| (messages, index, p)));
    let message = match partial {
        Some((messages, index, partial)) => {
            let copy = h.shallow_copy(&partial).unwrap_or_else(|_| h.object(&[]));
            let _ = h.set(&copy, "stopReason", &stop_reason);
            let _ = h.set(&copy, "errorMessage", &h.string(error_message));
            let _ = h.array_set(&messages, index, &copy);
            let _ = h.array_push(&run.new_messages, &copy);
            run.emit_message("message_end", &copy).await?;
            copy
        }
        None => {
            let message = failure_message(run, &stop_reason, error_message);
            run.emit_message("message_start", &message).await?;
            run.emit_message("message_end", &message).await?;
            if let Ok(messages) = run.context_messages() {
                let _ = h.array_push(&messages, &message);
            }
            let _ = h.array_push(&run.new_messages, &message);
            message
        }
    };
    run.emit_turn_end(&message, &h.array(&[])).await?;
    run.emit_agent_end().await
}

/// An assistant message without output, for the model `model` (its `api`, `provider`, `id`; unreadable
/// fields stay undefined): `{role, content, api, provider, model, usage: zero, stopReason,
/// errorMessage?, timestamp}`. `text_block` puts one empty text block in `content` (D1.2, A-5.6.1);
/// without it `content` is empty (P-6.1.3).
pub fn empty_assistant<H: FastPaths>(
    h: &H,
    model: &H::V,
    text_block: bool,
    stop_reason: &H::V,
    error_message: Option<&str>,
) -> H::V {
    let field = |key: &str| {
        if h.kind(model).is_object_like() { h.get(model, key).unwrap_or_else(|_| h.undefined()) } else { h.undefined() }
    };
    let content = if text_block {
        h.array(&[h.object(&[("type", h.constant("text")), ("text", h.constant(""))])])
    } else {
        h.array(&[])
    };
    let mut entries = vec![
        ("role", h.constant("assistant")),
        ("content", content),
        ("api", field("api")),
        ("provider", field("provider")),
        ("model", field("id")),
        ("usage", zero_usage(h)),
        ("stopReason", stop_reason.clone()),
    ];
    if let Some(text) = error_message {
        entries.push(("errorMessage", h.string(text)));
    }
    entries.push(("timestamp", h.number(h.date_now())));
    h.object(&entries)
}

/// The D1.2 shape, with the current config's model.
pub fn failure_message<H: FastPaths>(run: &Run<'_, H>, stop_reason: &H::V, error_message: &str) -> H::V {
    let h = run.h;
    let model = h.get(&run.config(), "model").unwrap_or_else(|_| h.undefined());
    empty_assistant(h, &model, true, stop_reason, Some(error_message))
}

/// S-2.1.2.
pub fn zero_usage<H: FastPaths>(h: &H) -> H::V {
    let zero = || h.number(0.0);
    let cost = h.object(&[
        ("input", zero()),
        ("output", zero()),
        ("cacheRead", zero()),
        ("cacheWrite", zero()),
        ("total", zero()),
    ]);
    h.object(&[
        ("input", zero()),
        ("output", zero()),
        ("cacheRead", zero()),
        ("cacheWrite", zero()),
        ("totalTokens", zero()),
        ("cost", cost),
    ])
}

/// `array[index]`, if it can be read.
fn read_index<H: FastPaths>(h: &H, array: &H::V, index: usize) -> Option<H::V> {
    if index >= h.array_len(array).ok()? {
        return None;
    }
    h.array_get(array, index).ok()
}
