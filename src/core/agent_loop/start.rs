//! How a run starts (L-3.1): the working context and the initial messages of a prompt run, a continuation, a run
//! resumed after a crash (`Agent.resume`) and one resumed with approval decisions, all prepared synchronously at the
//! entry point, before any event.

use super::declare::declare_tool_changes;
use crate::core::fast::FastPaths;
use crate::core::host::Kind;
use crate::core::tools::Resumed;

/// A run ready to be driven, prepared synchronously at the entry point.
pub struct Start<V> {
    /// The working context (a copy of the caller's, L-3.1.3 / D6).
    pub context: V,
    /// `Some(initial messages)` for prompt runs, `None` for continuations.
    pub initial: Option<Vec<V>>,
    /// A turn interrupted between its assistant message and its tool results (`Agent.resume`). Boxed: only resumed
    /// runs have one (ARCHITECTURE, "A run's future").
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
    if crate::core::declare::tools::role(h, &h.array_get(&messages, count - 1)?)?.as_deref() == Some("assistant") {
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
) -> Result<Start<H::V>, crate::core::args::ArgError<H::V>> {
    let checked = crate::core::approvals::check_approvals(h, function, "config.approvals", approvals)?;
    let messages = working_copy(h, context)?;
    let items = h.array_items(&messages)?;
    let Some(resumed) = continuation(h, &items, checked)? else {
        let text = format!("{function}: the context's last assistant message has no tool call waiting for a result");
        return Err(crate::core::args::ArgError::Thrown(h.error(&text, false)));
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
        match crate::core::declare::tools::role(h, message)?.as_deref() {
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
    let open = crate::core::tools::tool_calls(h, &assistant)?.iter().any(|c| !answered(&c.id));
    Ok(open.then_some((assistant, existing)))
}

/// The resumed turn of a continuation with decisions (nothing was interrupted: no call is refused as interrupted).
pub fn continuation<H: FastPaths>(
    h: &H,
    messages: &[H::V],
    approvals: crate::core::approvals::Approvals<H::V>,
) -> Result<Option<Resumed<H::V>>, H::V> {
    Ok(open_turn(h, messages)?.map(|(assistant, existing)| Resumed {
        assistant,
        existing,
        completed: approvals.completed,
        decisions: approvals.decisions,
        interrupted: false,
    }))
}
