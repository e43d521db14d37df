//! The loop of §3: the main loop with its polling points S0/S1/S2/F, turns, tool batches as the loop sees them, hard
//! exits, and the clean endings of D1 and D2. How a run starts is `start`; the request boundary and the stream
//! (L-3.5, L-3.6) are `stream`; the assistant messages the loop makes itself are `messages`. Tool batches are in
//! `tools`; event delivery and callbacks in `run`.

mod compact;
mod declare;
mod messages;
mod start;
mod stream;

pub use declare::declare_tool_changes;
pub use messages::{empty_assistant, failure_message, zero_usage};
pub use start::{
    Start, continuation, open_turn, start_approved_run, start_continue_run, start_prompt_run, start_resumed_run,
};
pub use stream::request_identity;

use super::host::Kind;
use super::run::{Run, Stop};
use super::tools::{Batch, Call, Resumed};
use crate::core::fast::FastPaths;
use messages::{REQUEST_ABORTED, read_index, thinking_level};
use stream::stream_assistant_response;

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
            // Boxed (ARCHITECTURE, "A run's future"): the batch's future is the larger one.
            match Box::pin(after_message(run, message, resuming, &mut last_turn)).await? {
                Step::Next { more_tool_calls: more, continue_once: again } => {
                    (more_tool_calls, continue_once) = (more, again)
                }
                Step::Ended => return Ok(()),
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

/// What follows a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The run ended inside the turn: its `agent_end` is out.
    Ended,
    /// The run goes on. `more_tool_calls`: the batch's results go back to the model; `continue_once`: finishTurn
    /// said "continue" after a final answer.
    Next { more_tool_calls: bool, continue_once: bool },
}

/// The rest of a turn once its assistant message is in: the hard exit, the tool batch, then `end_turn`. Only the
/// message is held across the batch (see `run_loop`).
async fn after_message<H: FastPaths>(
    run: &Run<'_, H>,
    message: H::V,
    resuming: Option<Box<Resumed<H::V>>>,
    last_turn: &mut Option<Box<Turn<H::V>>>,
) -> Result<Step, Stop> {
    let (calls, truncated) = match message_calls(run, &message)? {
        Some((calls, _)) if calls.is_empty() => return end_turn(run, message, Vec::new(), false, last_turn).await,
        Some(found) => found,
        None => return hard_exit(run, &message, None).await.map(|()| Step::Ended),
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
) -> Result<Step, Stop> {
    let Batch { messages, terminate, paused } = batch;
    for result in &messages {
        run.append(result)?;
    }
    drop(messages);
    if let Some(pause) = paused {
        // T-4.10.2: calls wait for a person. The turn ends here without finishTurn (its batch is not
        // complete) and without polling a queue: what is queued is delivered when the turn goes on.
        run.emit_turn_end(&message, &run.h.array(&results)).await?;
        return run.emit_agent_end_paused(&pause).await.map(|()| Step::Ended);
    }
    end_turn(run, message, results, !terminate, last_turn).await
}

/// The turn's tool batch: the resumed one, every call failed (a truncated reply, a limit reached), or executed.
/// Returns the batch and every result of the turn. The rare paths are boxed (ARCHITECTURE, "A run's future").
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

/// The end of a turn (D2.3, finishTurn, `turn_end`, the limits, S1).
async fn end_turn<H: FastPaths>(
    run: &Run<'_, H>,
    message: H::V,
    results: Vec<H::V>,
    more_tool_calls: bool,
    last_turn: &mut Option<Box<Turn<H::V>>>,
) -> Result<Step, Stop> {
    let h = run.h;
    if run.aborted() {
        return hard_exit(run, &message, Some(h.array(&results))).await.map(|()| Step::Ended); // D2.3
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
        return run.emit_agent_end_limited(&reached).await.map(|()| Step::Ended);
    }
    if action.as_deref() == Some("end") {
        return run.emit_agent_end().await.map(|()| Step::Ended);
    }
    let mut continue_once = action.as_deref() == Some("continue");
    drop(action);
    if let Some(reached) = run.limit_before_request() {
        // L-3.12.3: no further request and no queue poll (queued messages stay queued). The stop is reported
        // when the run would have gone on by itself (tool results for the model, finishTurn's "continue");
        // after a final answer the run ends as it would have.
        if more_tool_calls || continue_once {
            return run.emit_agent_end_limited(&reached).await.map(|()| Step::Ended);
        }
        return run.emit_agent_end().await.map(|()| Step::Ended);
    }
    let steered = poll(run, "getSteeringMessages").await?; // S1
    if more_tool_calls || steered > 0 {
        continue_once = false;
    }
    Ok(Step::Next { more_tool_calls, continue_once })
}

/// The start of a turn up to its assistant message: prepareNextTurn and S2 after the first turn,
/// the pending messages, prepareRequest, the request and its stream (in newMessages on return).
async fn next_assistant_message<H: FastPaths>(
    run: &Run<'_, H>,
    last_turn: &mut Option<Box<Turn<H::V>>>,
) -> Result<H::V, Stop> {
    let h = run.h;
    if let Some(turn) = last_turn {
        // Boxed (ARCHITECTURE, "A run's future"): the largest future here, once a turn.
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
    if run.compaction.is_some() {
        // Boxed (ARCHITECTURE, "A run's future"): only runs with compaction hold its future.
        Box::pin(compact::compact_if_needed(run)).await?;
    }
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
