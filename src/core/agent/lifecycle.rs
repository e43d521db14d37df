//! The run lifecycle: `prompt`, `continue`, `resume`, `reset`; a run's config, its event sink (the
//! reducer, then the awaited listeners) and its ending, including the failure ending of.

use super::approvals;
use super::options::{AGENT_HOOKS, FORWARDED};
use super::queues::{changed, clear};
use crate::core::agent_loop::{
    Start, drive_start, empty_assistant, start_continue_run, start_prompt_run, start_resumed_run,
};
use crate::core::agent_state::drain::drain;
use crate::core::agent_state::key;
use crate::core::agent_state::reducer::reduce;
use crate::core::agent_state::{Queue, Thrown, copied, get, items, list_or_empty};
use crate::core::approvals::{decided_object, field};
use crate::core::args::{ArgError, Checker};
use crate::core::budget::{Budget, Limits};
use crate::core::checkpoint;
use crate::core::declare::tools::role;
use crate::core::errors;
use crate::core::fast::FastPaths;
use crate::core::host::Kind;
use crate::core::run::{Boundary, Emitter, NativeSink, Run};
use crate::core::tools::Resumed;
use crate::core::transcript::current_system_message;
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

// ---- reset

pub fn reset<H: FastPaths>(h: &H, st: &H::V) -> Result<(), H::V> {
    if h.truthy(&get(h, st, key::ACTIVE)?) {
        return Err(errors::coded(h, errors::AGENT_BUSY, RESET_BUSY));
    }
    let messages = items(h, st, key::MESSAGES)?;
    let baseline = current_system_message(h, &messages)?;
    h.set(st, key::MESSAGES, &h.array(baseline.as_slice()))?;
    h.set(st, key::IS_STREAMING, &h.boolean(false))?;
    h.set(st, key::STREAMING_MESSAGE, &h.undefined())?;
    h.set(st, key::PENDING_TOOL_CALLS, &h.new_set(&[]))?;
    h.set(st, key::ERROR_MESSAGE, &h.undefined())?;
    h.set(st, key::INTERRUPTED, &h.boolean(false))?;
    h.set(st, key::COMPLETED_TOOLS, &h.array(&[]))?;
    h.set(st, key::ENDED_TOOLS, &h.array(&[]))?;
    h.set(st, key::STEERING_LEFT_BY_ABORT, &h.array(&[]))?;
    // Issue 32: the last run's figures go; the agent's totals (`totalUsage`) are kept: they are its bill.
    h.set(st, key::RUN_USAGE, &h.undefined())?;
    h.set(st, key::LIMIT_REACHED, &h.undefined())?;
    // the calls waiting for approval go with the transcript that held them.
    approvals::hold(h, st, None)?;
    clear(h, st, Queue::Steering)?;
    clear(h, st, Queue::FollowUp)
}

// ---- runs

pub type RunFuture<V> = LocalBoxFuture<'static, Result<(), V>>;

/// A run's config, stream function, and its start (or the value preparing it threw).
type Prepared<V> = (V, V, Result<Start<V>, V>, Budget);

/// `prompt(message | messages | text, images?)`.
pub fn prompt<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    input: &H::V,
    images: &H::V,
) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    if h.truthy(&get(h, st, key::ACTIVE)?) {
        return Err(errors::coded(h, errors::AGENT_BUSY, PROMPT_BUSY));
    }
    approvals::refuse_while_paused(h, st)?;
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
    refuse_over_budget(h, agent, st, "Agent.prompt")?;
    let mut prompts = take_steering_left_by_abort(h, st)?;
    prompts.extend(messages);
    Ok(start_run(h, agent, st, Some(prompts), false, None))
}

/// Issue 14.2: the steering messages an aborted run left queued (D2 polls no queue after the abort)
/// were written before the next prompt, so they go first in its batch, in queue order, whatever the
/// steering mode. Steering queued while the agent was idle is not marked: the prompt goes first and
/// the run's initial poll (S0) delivers it, as in the reference.
fn take_steering_left_by_abort<H: FastPaths>(h: &H, st: &H::V) -> Result<Vec<H::V>, H::V> {
    let left = items(h, st, key::STEERING_LEFT_BY_ABORT)?;
    if left.is_empty() {
        return Ok(left);
    }
    h.set(st, key::STEERING_LEFT_BY_ABORT, &h.array(&[]))?;
    let (taken, kept): (Vec<H::V>, Vec<H::V>) =
        items(h, st, key::STEERING)?.into_iter().partition(|m| left.iter().any(|l| h.same(l, m)));
    h.set(st, key::STEERING, &h.array(&kept))?;
    // Out of the queue but not in the transcript yet: checkpoints still count them as queued.
    if h.kind(&get(h, st, key::CK)?).is_object_like() {
        let transit = get(h, st, key::TRANSIT_STEERING)?;
        for message in &taken {
            h.array_push(&transit, message)?;
        }
    }
    Ok(taken)
}

/// `continue()`.
pub fn continue_run<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    options: &H::V,
) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    if h.truthy(&get(h, st, key::ACTIVE)?) {
        return Err(errors::coded(h, errors::AGENT_BUSY, CONTINUE_BUSY));
    }
    if !h.kind(options).is_nullish() {
        if h.kind(options) != Kind::Object {
            return Err(errors::coded(h, errors::INVALID_ARGUMENT, "Agent.continue: options must be an object"));
        }
        let given = h.get(options, "approvals")?;
        if h.kind(&given) != Kind::Undefined {
            return continue_with_approvals(h, agent, st, &given);
        }
    }
    approvals::refuse_while_paused(h, st)?;
    // Element by element, stopping at the first non-system message: no copy of the transcript.
    let messages = list_or_empty(h, st, key::MESSAGES)?;
    let count = h.array_len(&messages)?;
    let mut all_system = true;
    for i in 0..count {
        if role(h, &h.array_get(&messages, i)?)?.as_deref() != Some("system") {
            all_system = false;
            break;
        }
    }
    if count == 0 || all_system {
        return Err(errors::coded(h, errors::CANNOT_CONTINUE, NOTHING_TO_CONTINUE));
    }
    let last = h.array_get(&messages, count - 1)?;
    check_state(h, agent, st, "Agent.continue").map_err(|e| e.into_thrown(h))?;
    refuse_over_budget(h, agent, st, "Agent.continue")?;
    if role(h, &last)?.as_deref() == Some("assistant") {
        return match run_queued(h, agent, st)? {
            Some(run) => Ok(run),
            None => Err(errors::coded(h, errors::CANNOT_CONTINUE, ASSISTANT_TAIL)),
        };
    }
    Ok(start_run(h, agent, st, None, false, None))
}

/// `continue({ approvals })` takes a pause from outside (`agent_end.approvals`, with `decisions`): the Agent
/// holds it as its own (state, checkpoints) and, once every waiting call is decided, carries the decisions out as
/// `approve()`/`deny()` would. The transcript must end with the assistant message whose calls wait. For a server
/// that keeps no Agent between requests (agent-loop-wasm/ui's stateless route).
fn continue_with_approvals<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    given: &H::V,
) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    approvals::refuse_while_paused(h, st)?;
    let checked = crate::core::approvals::check_approvals(h, "Agent.continue", "options.approvals", given)
        .map_err(|e| e.into_thrown(h))?;
    check_state(h, agent, st, "Agent.continue").map_err(|e| e.into_thrown(h))?;
    refuse_over_budget(h, agent, st, "Agent.continue")?;
    if crate::core::agent_loop::open_turn(h, &items(h, st, key::MESSAGES)?)?.is_none() {
        let text = "Agent.continue: the transcript's last assistant message has no tool call waiting for a result";
        return Err(errors::coded(h, errors::CANNOT_CONTINUE, text));
    }
    // A copy, as a checkpoint stores it: the caller's objects are not kept.
    let pause = h.json_clone(&decided_object(h, &checked.requests, &checked.completed, &checked.decisions))?;
    approvals::hold(h, st, Some(&pause))?;
    checkpoint::request(h, agent, st);
    changed(h, st);
    if !approvals::undecided(h, &pause)?.is_empty() {
        return Ok(futures::future::ready(Ok(())).boxed_local());
    }
    start_approved(h, agent, st)
}

/// `resume()`: picks up a run that a crash interrupted, from what the checkpoints (or a snapshot)
/// recorded. An agent that was not mid-run resolves at once. An interrupted turn's missing tool
/// calls run (and only those), then the run goes on; a transcript ending in a user or tool-result
/// message continues as `continue()` would (the interrupted request is made again); queued
/// messages are delivered as the interrupted run would have delivered them.
pub fn resume<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    if h.truthy(&get(h, st, key::ACTIVE)?) {
        return Err(errors::coded(h, errors::AGENT_BUSY, RESUME_BUSY));
    }
    let idle = |h: &H| -> Result<RunFuture<H::V>, Thrown<H::V>> {
        h.set(st, key::INTERRUPTED, &h.boolean(false))?;
        h.set(st, key::COMPLETED_TOOLS, &h.array(&[]))?;
        changed(h, st);
        Ok(futures::future::ready(Ok(())).boxed_local())
    };
    let paused = approvals::held(h, st)?;
    if let Some(held) = &paused
        && !approvals::undecided(h, held)?.is_empty()
    {
        // A pause holds (its request was stored even if the run's end was not): nothing runs until it is decided.
        return idle(h);
    }
    if !h.truthy(&get(h, st, key::INTERRUPTED)?) {
        if paused.is_some() {
            // Decided, but the run that carries the decisions out never started (a crash in between).
            return start_approved(h, agent, st);
        }
        return Ok(futures::future::ready(Ok(())).boxed_local());
    }
    let messages = items(h, st, key::MESSAGES)?;
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
    let calls = crate::core::tools::tool_calls(h, &assistant)?;
    let answered = |id: &H::V| existing.iter().any(|m| h.get(m, "toolCallId").is_ok_and(|x| h.same(&x, id)));
    if calls.iter().any(|c| !answered(&c.id)) {
        let mut completed = items(h, st, key::COMPLETED_TOOLS)?;
        let mut decisions = Vec::new();
        if let Some(held) = &paused {
            completed.extend(items(h, held, field::COMPLETED_TOOLS)?);
            decisions = items(h, held, field::DECISIONS)?;
        }
        let resumed = Resumed { assistant, existing, completed, decisions, interrupted: true };
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

/// `approve()` / `deny()`: records the decision; the one that decides the last waiting call starts the run
/// that carries them out (the promise settles when that run has ended), any other resolves at once.
pub fn decide<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    id: &H::V,
    options: &H::V,
    approved: bool,
) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    let last = approvals::decide(h, agent, st, id, options, approved).map_err(|e| e.into_thrown(h))?;
    if !last || h.truthy(&get(h, st, key::ACTIVE)?) {
        return Ok(futures::future::ready(Ok(())).boxed_local());
    }
    start_approved(h, agent, st)
}

/// The run that goes on from a decided pause: the waiting turn's batch with the decisions, then the loop.
fn start_approved<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) -> Result<RunFuture<H::V>, Thrown<H::V>> {
    let Some(held) = approvals::held(h, st)? else { return Ok(futures::future::ready(Ok(())).boxed_local()) };
    check_state(h, agent, st, "Agent.approve").map_err(|e| e.into_thrown(h))?;
    let messages = items(h, st, key::MESSAGES)?;
    let Some((assistant, existing)) = crate::core::agent_loop::open_turn(h, &messages)? else {
        // The transcript no longer holds the waiting calls (it was replaced): nothing to carry out.
        approvals::hold(h, st, None)?;
        changed(h, st);
        return Ok(futures::future::ready(Ok(())).boxed_local());
    };
    let mut completed = items(h, &held, field::COMPLETED_TOOLS)?;
    completed.extend(items(h, st, key::COMPLETED_TOOLS)?);
    let decisions = items(h, &held, field::DECISIONS)?;
    let resumed = Resumed { assistant, existing, completed, decisions, interrupted: false };
    Ok(start_run(h, agent, st, None, false, Some(resumed)))
}

/// after an assistant message: a run of the queued steering (its initial poll skipped),
/// else of the queued follow-ups; `None` when both queues are empty.
fn run_queued<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) -> Result<Option<RunFuture<H::V>>, H::V> {
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
fn check_state<H: FastPaths>(h: &H, agent: &H::V, st: &H::V, function: &str) -> Result<(), ArgError<H::V>> {
    if h.agent_state_valid(agent, st)? {
        return Ok(());
    }
    check_state_fully(h, agent, st, function)
}

/// `check_state` field by field: the reference the fast path `agent_state_valid` answers for.
pub(crate) fn check_state_fully<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    function: &str,
) -> Result<(), ArgError<H::V>> {
    let c = Checker::new(h, function);
    c.tools(&get(h, st, key::TOOLS)?, "state.tools")?;
    c.messages(&get(h, st, key::MESSAGES)?, "state.messages")?;
    c.object(&get(h, st, key::MODEL)?, "state.model")?;
    c.function(&get(h, agent, "convertToLlm")?, "agent.convertToLlm")?;
    c.function(&get(h, agent, "streamFunction")?, "agent.streamFunction")?;
    for hook in AGENT_HOOKS {
        c.optional_function(&get(h, agent, hook)?, &format!("agent.{hook}"))?;
    }
    c.limits(agent, "agent")?;
    c.budgets(agent, "agent", true)?;
    c.compaction(agent, "agent")
}

/// Issue 32: the limits of an Agent's run: its `limits`, and its `totalLimits` against what it spent before.
fn agent_budget<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) -> Budget {
    let total = get(h, st, key::TOTAL_USAGE).ok().filter(|t| h.kind(t).is_object_like());
    let spent_before = total.map_or((0.0, 0.0), |t| {
        let tokens = get(h, &t, "totalTokens").ok().and_then(|v| h.as_number(&v)).unwrap_or(0.0);
        let cost = get(h, &t, "cost")
            .ok()
            .filter(|c| h.kind(c).is_object_like())
            .and_then(|c| get(h, &c, "total").ok())
            .and_then(|v| h.as_number(&v))
            .unwrap_or(0.0);
        (tokens, cost)
    });
    Budget { run: Limits::read(h, agent, "limits"), total: Limits::read(h, agent, "totalLimits"), spent_before }
}

/// Issue 32: `prompt()` and `continue()` start no run once the agent's `totalLimits` are reached.
fn refuse_over_budget<H: FastPaths>(h: &H, agent: &H::V, st: &H::V, function: &str) -> Result<(), H::V> {
    let budget = agent_budget(h, agent, st);
    if budget.total.is_empty() {
        return Ok(());
    }
    match budget.before_start() {
        Some(reached) => {
            let what = reached.message.strip_prefix("Run stopped: ").unwrap_or(&reached.message);
            let text = format!("{function}: {what}; raise agent.totalLimits.{} to run again", reached.limit);
            Err(errors::coded(h, errors::LIMIT_REACHED, &text))
        }
        None => Ok(()),
    }
}

/// The loop config of one run, captured at its start.
fn loop_config<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    signal: &H::V,
    skip_initial_steering: bool,
) -> Result<H::V, H::V> {
    let level = get(h, st, key::THINKING_LEVEL)?;
    let reasoning = if h.as_string(&level).as_deref() == Some("off") { h.undefined() } else { level };
    let config = h.object(&[("model", get(h, st, key::MODEL)?), ("reasoning", reasoning)]);
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
    // Issue 45: only when the agent has one, so that a run without it has the reference's config.
    let compaction = get(h, agent, "compaction")?;
    if h.kind(&compaction) != Kind::Undefined {
        h.set(&config, "compaction", &compaction)?;
    }
    Ok(config)
}

/// Starts a run under the lifecycle: the returned future resolves once the run and its
/// `agent_end` listeners settled; it never rejects for run failures.
fn start_run<H: FastPaths>(
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
        h.begin_run_state(st, &active)?;
        let budget = agent_budget(h, agent, st);
        // Each `start_*` makes the working copy of the transcript (D6) in one host call, so the
        // transcript itself goes in here: no crossing per message (issue 17).
        let context =
            h.object(&[("messages", list_or_empty(h, st, key::MESSAGES)?), ("tools", copied(h, st, key::TOOLS)?)]);
        let config = loop_config(h, agent, st, &signal, skip_initial_steering)?;
        let stream_fn = get(h, agent, "streamFunction")?;
        let start = match (&prompts, resumed) {
            (_, Some(resumed)) => start_resumed_run(h, &context, resumed),
            (Some(messages), None) => start_prompt_run(h, &h.array(messages), &context),
            (None, None) => start_continue_run(h, &context),
        };
        // A durable point: a crash from here on leaves a run to resume.
        checkpoint::request(h, agent, st);
        Ok((config, stream_fn, start, budget))
    })();
    let (h, st) = (h.clone(), st.clone());
    async move {
        let failure = match setup {
            Err(e) => Some(e),
            Ok((_, _, Err(e), _)) => Some(e),
            Ok((config, stream_fn, Ok(start), budget)) => {
                let sink = event_sink(&h, &st, &signal);
                let run = Run::new(&h, start.context, config, signal.clone(), stream_fn, Emitter::native(sink));
                run.set_budget(budget);
                drive_start(&run, start.initial, start.resumed).await.err()
            }
        };
        if let Some(thrown) = failure {
            handle_run_failure(&h, &st, &signal, &thrown).await;
        }
        if h.signal_aborted(&signal) {
            let _ =
                items(&h, &st, key::STEERING).and_then(|left| h.set(&st, key::STEERING_LEFT_BY_ABORT, &h.array(&left)));
        }
        finish_run(&h, &st);
        changed(&h, &st);
        Ok(())
    }
    .boxed_local()
}

/// The reducer then every listener, awaited in subscription order.
fn event_sink<H: FastPaths>(h: &H, st: &H::V, signal: &H::V) -> NativeSink<H::V> {
    let (h, st, signal) = (h.clone(), st.clone(), signal.clone());
    Rc::new(move |boundary: Boundary, event: H::V| {
        let (h, st, signal) = (h.clone(), st.clone(), signal.clone());
        async move {
            if approvals::on_event(&h, &st, boundary, &event)? {
                let agent = get(&h, &st, key::AGENT)?;
                checkpoint::flush(&h, &agent, &st).await?;
            }
            if h.reduce_agent_event(&st, &event)? {
                let agent = get(&h, &st, key::AGENT)?;
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
async fn call_listeners<H: FastPaths>(
    h: &H,
    st: &H::V,
    event: &H::V,
    signal: &H::V,
    swallow: bool,
) -> Result<(), H::V> {
    let listeners = get(h, st, key::LISTENERS)?;
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

/// a listener threw, so the loop stopped; the failure events go through the reducer and
/// listeners, whose own errors are swallowed so the agent always becomes idle.
async fn handle_run_failure<H: FastPaths>(h: &H, st: &H::V, signal: &H::V, thrown: &H::V) {
    let model = get(h, st, key::MODEL).unwrap_or_else(|_| h.undefined());
    let stop_reason = if h.signal_aborted(signal) { "aborted" } else { "error" };
    let message = h.error_message(thrown);
    let failure = empty_assistant(h, &model, true, &h.constant(stop_reason), Some(&message));
    let events = [
        h.object(&[("type", h.constant("message_start")), ("message", failure.clone())]),
        h.object(&[("type", h.constant("message_end")), ("message", failure.clone())]),
        h.object(&[("type", h.constant("turn_end")), ("message", failure.clone()), ("toolResults", h.array(&[]))]),
        h.object(&[("type", h.constant("agent_end")), ("messages", h.array(&[failure]))]),
    ];
    let agent = get(h, st, key::AGENT).unwrap_or_else(|_| h.undefined());
    for event in events {
        if let Ok(true) = reduce(h, st, &event) {
            let _ = checkpoint::flush(h, &agent, st).await;
        }
        let _ = call_listeners(h, st, &event, signal, true).await;
    }
    let _ = h.set(st, key::ERROR_MESSAGE, &h.string(&message));
}

/// Clears the runtime state and resolves `waitForIdle()`.
fn finish_run<H: FastPaths>(h: &H, st: &H::V) {
    // What the run drained or ended without committing is gone from the live agent too (the state is the library's
    // own object: no write of it throws).
    let _ = h.end_run_state(st);
    // A decided pause is over once the run that carried it out ended, however it ended (a listener failure too).
    if let Ok(Some(held)) = approvals::held(h, st)
        && approvals::undecided(h, &held).is_ok_and(|waiting| waiting.is_empty())
    {
        let _ = approvals::hold(h, st, None);
    }
    if let Ok(resolve) = get(h, st, key::ACTIVE).and_then(|active| get(h, &active, "resolve")) {
        let _ = h.call_sync(&resolve, &h.undefined(), &[]);
    }
    let _ = h.set(st, key::ACTIVE, &h.undefined());
}
