//! Tool calls that wait for a person (issue 30, T-4.10): the request a waiting call announces, the pause a batch
//! ends in, and the decisions that continue it (`agent_loop::continuation` finds the turn). Shared by the loop
//! (`agentLoopContinue` with `config.approvals`) and the Agent (`approve`, `deny`); no JS type, no queue.

use super::args::ArgError;
use super::host::Kind;
use crate::core::fast::FastPaths;

/// A pause's field names (`agent_end.approvals`, `config.approvals`, `st.approvals`, and what snapshots and checkpoints
/// store), one constant each. Code outside this module names a field only through these: `core::tests::layers` fails on
/// a literal such as `items(h, held, "decisions")` anywhere else.
pub mod field {
    pub const REQUESTS: &str = "requests";
    pub const COMPLETED_TOOLS: &str = "completedTools";
    pub const DECISIONS: &str = "decisions";
}

/// Every field of a pause, in writing order: the one definition. `index.d.ts`'s `ToolApprovals` is checked against it
/// (`tests/js/dts-names.test.mjs`).
pub const FIELDS: [&str; 3] = [field::REQUESTS, field::COMPLETED_TOOLS, field::DECISIONS];

/// Where a paused batch stands: the calls that wait (their requests, in source order) and the calls of the batch
/// that ended without their result message in the transcript yet (`{toolCallId, toolName, result, isError}`).
pub struct Pause<V> {
    pub requests: Vec<V>,
    pub completed: Vec<V>,
}

/// `{requests, completedTools}`: what `agent_end.approvals` carries, and (with `decisions`) what a continuation takes.
pub fn pause_object<H: FastPaths>(h: &H, pause: &Pause<H::V>) -> H::V {
    h.object(&[(field::REQUESTS, h.array(&pause.requests)), (field::COMPLETED_TOOLS, h.array(&pause.completed))])
}

/// `{requests, completedTools, decisions}`: a pause with its decisions so far, as an Agent holds it (`st.approvals`).
pub fn decided_object<H: FastPaths>(h: &H, requests: &[H::V], completed: &[H::V], decisions: &[H::V]) -> H::V {
    h.object(&[
        (field::REQUESTS, h.array(requests)),
        (field::COMPLETED_TOOLS, h.array(completed)),
        (field::DECISIONS, h.array(decisions)),
    ])
}

/// The request a waiting call announces: `{toolCallId, toolName, args, reason?, data?}`, `args` validated, `reason`
/// and `data` from `beforeToolCall`'s `{approval: {reason, data}}` when it gave them.
pub fn approval_request<H: FastPaths>(h: &H, id: &H::V, name: &H::V, args: &H::V, payload: Option<&H::V>) -> H::V {
    let mut entries = vec![("toolCallId", id.clone()), ("toolName", name.clone()), ("args", args.clone())];
    if let Some(payload) = payload.filter(|p| h.kind(p).is_object_like()) {
        for key in ["reason", "data"] {
            let value = h.get(payload, key).unwrap_or_else(|_| h.undefined());
            if h.kind(&value) != Kind::Undefined {
                entries.push((key, value));
            }
        }
    }
    h.object(&entries)
}

/// The `tool_approval_request` event of a request (its fields, after `type`).
pub fn request_event<H: FastPaths>(h: &H, request: &H::V) -> Result<H::V, H::V> {
    let event = h.object(&[("type", h.constant("tool_approval_request"))]);
    for (key, value) in h.entries(request)? {
        h.set(&event, &key, &value)?;
    }
    Ok(event)
}

/// The error result text of a denied call, which the model sees.
pub fn denied_text(id: &str, reason: Option<&str>) -> String {
    match reason {
        Some(reason) if !reason.is_empty() => format!("Tool call \"{id}\" was denied: {reason}"),
        _ => format!("Tool call \"{id}\" was denied"),
    }
}

fn id_of<H: FastPaths>(h: &H, v: &H::V) -> H::V {
    h.get(v, "toolCallId").unwrap_or_else(|_| h.undefined())
}

/// The decision about the call `id`, if there is one.
pub fn decision_for<'a, H: FastPaths>(h: &H, decisions: &'a [H::V], id: &H::V) -> Option<&'a H::V> {
    decisions.iter().find(|d| h.same(&id_of(h, d), id))
}

/// What a decision says: `Some(args)` (the edited arguments, or `None`) when approved, `Err(reason)` when denied.
pub enum Verdict<V> {
    Approved(Option<V>),
    Denied(Option<String>),
}

pub fn verdict<H: FastPaths>(h: &H, decision: &H::V) -> Verdict<H::V> {
    let read = |key: &str| h.get(decision, key).unwrap_or_else(|_| h.undefined());
    if h.truthy(&read("approved")) {
        let args = read("args");
        Verdict::Approved((h.kind(&args) != Kind::Undefined).then_some(args))
    } else {
        Verdict::Denied(h.as_string(&read("reason")))
    }
}

/// A checked `{requests, completedTools?, decisions?}`.
pub struct Approvals<V> {
    pub requests: Vec<V>,
    pub completed: Vec<V>,
    pub decisions: Vec<V>,
}

/// Checks an approvals object (`path` names it): each request an object with a string `toolCallId`, each decision
/// `{toolCallId, approved: boolean, args?, reason?: string}` naming a request, at most one decision per call.
pub fn check_approvals<H: FastPaths>(
    h: &H,
    function: &str,
    path: &str,
    value: &H::V,
) -> Result<Approvals<H::V>, ArgError<H::V>> {
    let bad = |detail: String| ArgError::Type(format!("{function}: {path}{detail}"));
    if h.kind(value) != Kind::Object {
        return Err(bad(" must be an object (agent_end.approvals)".into()));
    }
    let list = |key: &str, required: bool| -> Result<Vec<H::V>, ArgError<H::V>> {
        let v = h.get(value, key)?;
        match h.kind(&v) {
            Kind::Undefined if !required => Ok(Vec::new()),
            Kind::Array => {
                let items = h.array_items(&v)?;
                for (i, item) in items.iter().enumerate() {
                    if h.kind(item) != Kind::Object || h.kind(&h.get(item, "toolCallId")?) != Kind::String {
                        return Err(bad(format!(".{key}[{i}] must be an object with a string toolCallId")));
                    }
                }
                Ok(items)
            }
            _ => Err(bad(format!(".{key} must be an array"))),
        }
    };
    let requests = list(field::REQUESTS, true)?;
    let completed = list(field::COMPLETED_TOOLS, false)?;
    let decisions = list(field::DECISIONS, false)?;
    let name = |v: &H::V| h.as_string(&id_of(h, v)).unwrap_or_default();
    for (i, decision) in decisions.iter().enumerate() {
        let id = id_of(h, decision);
        if !requests.iter().any(|r| h.same(&id_of(h, r), &id)) {
            return Err(bad(format!(".decisions[{i}]: no tool call \"{}\" is waiting for approval", name(decision))));
        }
        if decisions.iter().take(i).any(|d| h.same(&id_of(h, d), &id)) {
            return Err(bad(format!(".decisions[{i}]: tool call \"{}\" is decided twice", name(decision))));
        }
        if h.kind(&h.get(decision, "approved")?) != Kind::Bool {
            return Err(bad(format!(".decisions[{i}].approved must be a boolean")));
        }
        let reason = h.get(decision, "reason")?;
        if !matches!(h.kind(&reason), Kind::Undefined | Kind::String) {
            return Err(bad(format!(".decisions[{i}].reason must be a string")));
        }
    }
    Ok(Approvals { requests, completed, decisions })
}
