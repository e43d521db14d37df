//! Tool calls waiting for a person on the Agent (issue 30, A-5.8): `approve`, `deny`, the guard that keeps
//! `prompt()`/`continue()` from running past a pause, and what a run's events change in `st.approvals`. The run
//! that continues the pause is started by `lifecycle`; the pause itself is the loop's (`core::approvals`).

use crate::core::agent_state::key;
use crate::core::agent_state::{get, items};
use crate::core::approvals::{decided_object, field};
use crate::core::args::ArgError;
use crate::core::checkpoint;
use crate::core::errors;
use crate::core::fast::FastPaths;
use crate::core::host::Kind;
use crate::core::run::Boundary;
use crate::core::validate_call::validate_tool_call_now;

fn id_of<H: FastPaths>(h: &H, v: &H::V) -> H::V {
    h.get(v, "toolCallId").unwrap_or_else(|_| h.undefined())
}

fn text_of<H: FastPaths>(h: &H, v: &H::V) -> String {
    h.as_string(v).unwrap_or_else(|| h.error_message(v))
}

/// `st.approvals` when the agent holds a pause: `{requests, completedTools, decisions}`.
pub fn held<H: FastPaths>(h: &H, st: &H::V) -> Result<Option<H::V>, H::V> {
    let approvals = get(h, st, key::APPROVALS)?;
    Ok((h.kind(&approvals) == Kind::Object).then_some(approvals))
}

/// Sets (or, with `None`, ends) the pause the agent holds, and `st.pendingApprovals`, the undecided requests that
/// `agent.state.pendingApprovals` shows. Every change of `st.approvals` goes through here.
pub fn hold<H: FastPaths>(h: &H, st: &H::V, approvals: Option<&H::V>) -> Result<(), H::V> {
    match approvals {
        Some(approvals) => {
            h.set(st, key::APPROVALS, approvals)?;
            h.set(st, key::PENDING_APPROVALS, &h.array(&undecided(h, approvals)?))
        }
        None => {
            h.set(st, key::APPROVALS, &h.undefined())?;
            h.set(st, key::PENDING_APPROVALS, &h.array(&[]))
        }
    }
}

/// The requests of a pause that have no decision yet, in request order.
pub fn undecided<H: FastPaths>(h: &H, approvals: &H::V) -> Result<Vec<H::V>, H::V> {
    let decisions = items(h, approvals, field::DECISIONS)?;
    let requests = items(h, approvals, field::REQUESTS)?;
    Ok(requests.into_iter().filter(|r| !decisions.iter().any(|d| h.same(&id_of(h, d), &id_of(h, r)))).collect())
}

/// `prompt()` and `continue()` refuse to start while a pause holds (never a silently dropped call).
pub fn refuse_while_paused<H: FastPaths>(h: &H, st: &H::V) -> Result<(), H::V> {
    let Some(approvals) = held(h, st)? else { return Ok(()) };
    let waiting = undecided(h, &approvals)?;
    if waiting.is_empty() {
        return Err(errors::coded(
            h,
            errors::APPROVALS_PENDING,
            "Agent has decided tool approvals to carry out: call resume() first",
        ));
    }
    let ids: Vec<String> = waiting.iter().map(|r| text_of(h, &id_of(h, r))).collect();
    Err(errors::coded(
        h,
        errors::APPROVALS_PENDING,
        &format!(
            "Agent has tool calls waiting for approval ({}): approve() or deny() each of them first, or reset()",
            ids.join(", ")
        ),
    ))
}

/// `approve(toolCallId, {args?})` / `deny(toolCallId, {reason?})` up to the decision stored in `st.approvals` (a new
/// object, so checkpoints see the change). `Ok(true)` when it was the last undecided call: the run goes on.
pub fn decide<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    id: &H::V,
    options: &H::V,
    approved: bool,
) -> Result<bool, ArgError<H::V>> {
    let function = if approved { "Agent.approve" } else { "Agent.deny" };
    if h.kind(id) != Kind::String {
        return Err(ArgError::Type(format!("{function}: toolCallId must be a string")));
    }
    if !h.kind(options).is_nullish() && h.kind(options) != Kind::Object {
        return Err(ArgError::Type(format!("{function}: options must be an object")));
    }
    let option = |key: &str| -> Result<H::V, H::V> {
        if h.kind(options).is_nullish() { Ok(h.undefined()) } else { h.get(options, key) }
    };
    let name = text_of(h, id);
    let not_waiting = || {
        ArgError::Thrown(errors::coded(
            h,
            errors::INVALID_APPROVAL,
            &format!("{function}: no tool call \"{name}\" is waiting for approval"),
        ))
    };
    let Some(approvals) = held(h, st)? else { return Err(not_waiting()) };
    let requests = items(h, &approvals, field::REQUESTS)?;
    let Some(request) = requests.iter().find(|r| h.same(&id_of(h, r), id)) else { return Err(not_waiting()) };
    let decisions = items(h, &approvals, field::DECISIONS)?;
    if let Some(earlier) = decisions.iter().find(|d| h.same(&id_of(h, d), id)) {
        let was = if h.truthy(&get(h, earlier, "approved")?) { "approved" } else { "denied" };
        return Err(ArgError::Thrown(errors::coded(
            h,
            errors::INVALID_APPROVAL,
            &format!("{function}: tool call \"{name}\" was already {was}"),
        )));
    }
    let decision = if approved {
        if h.kind(&option("arguments")?) != Kind::Undefined {
            return Err(ArgError::Type(
                "Agent.approve: options.arguments is not an option; edited arguments go in options.args".into(),
            ));
        }
        let args = option("args")?;
        let mut entries = vec![("toolCallId", id.clone()), ("approved", h.boolean(true))];
        if h.kind(&args) != Kind::Undefined {
            check_edited(h, st, request, &args, &name)?;
            entries.push(("args", args));
        }
        h.object(&entries)
    } else {
        let reason = option("reason")?;
        let mut entries = vec![("toolCallId", id.clone()), ("approved", h.boolean(false))];
        match h.kind(&reason) {
            Kind::Undefined => {}
            Kind::String => entries.push(("reason", reason)),
            _ => return Err(ArgError::Type("Agent.deny: options.reason must be a string".into())),
        }
        h.object(&entries)
    };
    let mut all = decisions;
    all.push(decision);
    let last = requests.iter().all(|r| all.iter().any(|d| h.same(&id_of(h, d), &id_of(h, r))));
    let next = decided_object(h, &requests, &items(h, &approvals, field::COMPLETED_TOOLS)?, &all);
    hold(h, st, Some(&next))?;
    // A durable point: the decision survives a crash before the run goes on.
    checkpoint::request(h, agent, st);
    Ok(last)
}

/// edited arguments are validated now, so the person learns at once what is wrong (the run validates them
/// again). A tool the agent no longer has is left to the run, which reports it as for any call.
fn check_edited<H: FastPaths>(h: &H, st: &H::V, request: &H::V, args: &H::V, name: &str) -> Result<(), ArgError<H::V>> {
    let tool_name = get(h, request, "toolName")?;
    let tool = items(h, st, key::TOOLS)?
        .into_iter()
        .find(|t| h.kind(t).is_object_like() && h.get(t, "name").is_ok_and(|n| h.same(&n, &tool_name)));
    let Some(tool) = tool else { return Ok(()) };
    let block = h.object(&[
        ("type", h.constant("toolCall")),
        ("id", id_of(h, request)),
        ("name", tool_name),
        ("arguments", args.clone()),
    ]);
    // A Standard Schema that validates asynchronously is left to the run, which awaits it (T-4.3.8).
    match validate_tool_call_now(h, &tool, &block, args) {
        Ok(_) => Ok(()),
        Err(e) => Err(ArgError::Thrown(errors::coded(
            h,
            errors::INVALID_APPROVAL,
            &format!("Agent.approve: options.args of tool call \"{name}\" are invalid: {}", h.error_message(&e)),
        ))),
    }
}

/// What a run's event (a `boundary`) changes in `st.approvals` (before the reducer): a `turn_end` ends a decided
/// pause (its batch is complete, every result in the transcript); `agent_end.approvals` is a new pause. `true` at a
/// durable point.
pub fn on_event<H: FastPaths>(h: &H, st: &H::V, boundary: Boundary, event: &H::V) -> Result<bool, H::V> {
    if boundary == Boundary::TurnEnd {
        if let Some(approvals) = held(h, st)?
            && undecided(h, &approvals)?.is_empty()
        {
            hold(h, st, None)?;
        }
        return Ok(false);
    }
    if boundary != Boundary::AgentEnd {
        return Ok(false);
    }
    let pause = get(h, event, "approvals")?;
    if h.kind(&pause) != Kind::Object {
        return Ok(false);
    }
    let requests = items(h, &pause, field::REQUESTS)?;
    let approvals = decided_object(h, &requests, &items(h, &pause, field::COMPLETED_TOOLS)?, &[]);
    hold(h, st, Some(&approvals))?;
    Ok(true)
}
