//! The Agent's reducer: how each event changes the state object. The reference of
//! `FastPaths::reduce_agent_event`; its JS twin is `reduceAgentEvent` in `src/js/snippets/agent.js`, and the
//! facade's failure path (`pkg-template/agent.js`) is a third copy for when the instance is gone.

use super::key;
use super::{get, items};
use crate::core::budget::{add_figures, read_usage};
use crate::core::declare::tools::role;
use crate::core::host::Host;

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
    let durable = h.kind(&get(h, st, key::CK)?).is_object_like();
    match kind.as_str() {
        "message_start" | "message_update" => h.set(st, key::STREAMING_MESSAGE, &get(h, event, "message")?)?,
        "message_end" => {
            h.set(st, key::STREAMING_MESSAGE, &h.undefined())?;
            let message = get(h, event, "message")?;
            h.array_push(&get(h, st, key::MESSAGES)?, &message)?;
            let role = role(h, &message)?;
            // a model reply's usage adds to the agent's totals and the run's (none while it adds nothing);
            // so does a compaction's summary request (L-3.13.10).
            if matches!(role.as_deref(), Some("assistant" | crate::core::compaction::ROLE))
                && let Some(figures) = read_usage(h, &get(h, &message, "usage")?)?
            {
                for field in [key::TOTAL_USAGE, key::RUN_USAGE] {
                    let totals = add_figures(h, &get(h, st, field)?, &figures)?;
                    h.set(st, field, &totals)?;
                }
            }
            if durable {
                for field in [key::TRANSIT_STEERING, key::TRANSIT_FOLLOW_UP] {
                    retain(h, st, field, |m| !h.same(m, &message))?;
                }
                if role.as_deref() == Some("toolResult") {
                    let id = get(h, &message, "toolCallId")?;
                    retain(h, st, key::COMPLETED_TOOLS, |r| {
                        !h.same(&get(h, r, "toolCallId").unwrap_or_else(|_| h.undefined()), &id)
                    })?;
                }
                return Ok(true);
            }
        }
        "tool_execution_start" | "tool_execution_end" => {
            let id = get(h, event, "toolCallId")?;
            let mut ids: Vec<H::V> = h.set_items(&get(h, st, key::PENDING_TOOL_CALLS)?)?;
            ids.retain(|x| !h.same(x, &id));
            if kind == "tool_execution_start" {
                ids.push(id.clone());
            }
            h.set(st, key::PENDING_TOOL_CALLS, &h.new_set(&ids))?;
            if durable && kind == "tool_execution_end" {
                // Ended but its result message comes later (a parallel batch emits them in source
                // order at its end): kept so that a resume does not run it again.
                let record = h.object(&[
                    ("toolCallId", id),
                    ("toolName", get(h, event, "toolName")?),
                    ("result", get(h, event, "result")?),
                    ("isError", get(h, event, "isError")?),
                ]);
                h.array_push(&get(h, st, key::COMPLETED_TOOLS)?, &record)?;
                h.array_push(&get(h, st, key::ENDED_TOOLS)?, &record)?;
                return Ok(true);
            }
        }
        "turn_end" => {
            let message = get(h, event, "message")?;
            if role(h, &message)?.as_deref() == Some("assistant") {
                let error = get(h, &message, "errorMessage")?;
                if h.truthy(&error) {
                    h.set(st, key::ERROR_MESSAGE, &error)?;
                }
            }
        }
        "agent_end" => {
            h.set(st, key::STREAMING_MESSAGE, &h.undefined())?;
            // Issue 32: a limit stopped the run.
            let reached = get(h, event, "limitReached")?;
            if h.kind(&reached).is_object_like() {
                h.set(st, key::LIMIT_REACHED, &reached)?;
                h.set(st, key::ERROR_MESSAGE, &get(h, &reached, "message")?)?;
            }
        }
        _ => {}
    }
    Ok(false)
}
