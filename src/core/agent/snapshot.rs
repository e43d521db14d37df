//! Snapshots (D8): `agent.snapshot()` and both halves of `Agent.restore` (checking, then applying). The pure format
//! checks and migrations are `core::snapshot`; checkpoints fold into a snapshot in `core::checkpoint`.

use crate::core::agent_state::key;
use crate::core::agent_state::{Queue, get, items};
use crate::core::args::{ArgError, Checker};
use crate::core::checkpoint;
use crate::core::errors;
use crate::core::fast::FastPaths;
use crate::core::fxhash::FxSet;
use crate::core::host::Kind;
use crate::core::snapshot::field;

// ---- snapshots (D8)

/// Walks a value the way `JSON.stringify` would and names the first part it cannot hold
/// (a function, symbol, BigInt, or a cycle), as `messages[3].details.fn`. Iterative, with no
/// depth limit of its own: a transcript holds whatever JS can hold (issue 13).
fn unserializable<H: FastPaths>(h: &H, root: &H::V, prefix: &str) -> Option<String> {
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
pub fn snapshot<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) -> Result<H::V, H::V> {
    let mut names = Vec::new();
    for tool in items(h, st, key::TOOLS)? {
        if h.kind(&tool).is_object_like() {
            names.push(get(h, &tool, "name")?);
        }
    }
    let mut entries = vec![
        (field::FORMAT, h.string(crate::core::snapshot::FORMAT)),
        (field::VERSION, h.number(crate::core::snapshot::VERSION as f64)),
        (field::MODEL, get(h, st, key::MODEL)?),
        (field::THINKING_LEVEL, get(h, st, key::THINKING_LEVEL)?),
        (field::MESSAGES, h.array(&items(h, st, key::MESSAGES)?)),
        // Messages a running loop drained but has not delivered yet still count as queued.
        (field::STEERING_QUEUE, h.array(&checkpoint::durable_queue(h, st, Queue::Steering)?)),
        (field::FOLLOW_UP_QUEUE, h.array(&checkpoint::durable_queue(h, st, Queue::FollowUp)?)),
        (field::STEERING_MODE, get(h, st, key::STEERING_MODE)?),
        (field::FOLLOW_UP_MODE, get(h, st, key::FOLLOW_UP_MODE)?),
    ];
    let session = get(h, agent, "sessionId")?;
    if h.kind(&session) != Kind::Undefined {
        entries.push((field::SESSION_ID, session));
    }
    entries.push((field::TOOL_NAMES, h.array(&names)));
    // Durability: where the checkpoints stand, and a run in progress for `resume()` to pick up.
    if let Some(seq) = checkpoint::stored_seq(h, st)? {
        entries.push((field::CHECKPOINT_SEQ, seq));
    }
    if h.truthy(&get(h, st, key::ACTIVE)?) || h.truthy(&get(h, st, key::INTERRUPTED)?) {
        entries.push((field::RUNNING, h.boolean(true)));
        let completed = items(h, st, key::COMPLETED_TOOLS)?;
        if !completed.is_empty() {
            entries.push((field::COMPLETED_TOOLS, h.array(&completed)));
        }
    }
    // Issue 30: a pause and its decisions so far.
    let approvals = get(h, st, key::APPROVALS)?;
    if h.kind(&approvals) == Kind::Object {
        entries.push((field::APPROVALS, approvals));
    }
    // Issue 32: the agent's usage totals, once a reply reported usage.
    let usage = get(h, st, key::TOTAL_USAGE)?;
    if h.kind(&usage) == Kind::Object {
        entries.push((field::USAGE, usage));
    }
    let picture = h.object(&entries);
    if let Some(path) = unserializable(h, &picture, "") {
        return Err(errors::coded(
            h,
            errors::NOT_SERIALIZABLE,
            &format!("Agent.snapshot: {path} is not JSON-serializable"),
        ));
    }
    h.json_clone(&picture)
}

/// A refusal of `Agent.restore` (D8.3): an `Error` with its exact text, coded `RESTORE_REFUSED` (E-8.6).
fn refused<H: FastPaths>(h: &H, message: &str) -> H::V {
    errors::coded(h, errors::RESTORE_REFUSED, message)
}

/// The checking half of `Agent.restore` (D8.2, D8.3): parses, migrates and checks a snapshot
/// (object or JSON text) into a fresh plain value; throws the exact D8.3 `Error`s.
pub fn parse_snapshot<H: FastPaths>(h: &H, input: &H::V) -> Result<H::V, H::V> {
    let value = if h.kind(input) == Kind::String {
        // Parsed by the engine, where the text is, so its SyntaxError text is what the message shows.
        h.json_parse_value(input)
            .map_err(|e| refused(h, &format!("Agent.restore: snapshot is not valid JSON: {}", h.error_message(&e))))?
    } else {
        if !h.kind(input).is_object_like() {
            return Err(refused(h, "Agent.restore: not an agent-loop-wasm snapshot"));
        }
        if let Some(path) = unserializable(h, input, "") {
            return Err(refused(h, &format!("Agent.restore: invalid snapshot: {path}: not JSON-serializable")));
        }
        input.clone()
    };
    // A fresh plain copy, made in the engine (any depth, lone surrogates kept: issue 13; the text never in the
    // host's memory: issue 34), migrated and checked in place.
    let fresh = h.json_clone(&value)?;
    crate::core::snapshot::migrate(h, &fresh).map_err(|message| refused(h, &message))?;
    Ok(fresh)
}

/// The checking half of `Agent.restore` for every input it takes: a snapshot (object or JSON
/// text), or an array of checkpoints in order, optionally after a snapshot (each element may be
/// JSON text). Checkpoints are folded into the snapshot's state (checkpoint.rs).
pub fn parse_restore<H: FastPaths>(h: &H, input: &H::V) -> Result<H::V, H::V> {
    if h.kind(input) != Kind::Array {
        return parse_snapshot(h, input);
    }
    let mut list = h.array_items(input)?;
    for (i, item) in list.iter_mut().enumerate() {
        if h.kind(item) == Kind::String {
            // Parsed where the text is: a row of megabytes is not copied into the host (issue 34).
            *item = h.json_parse_value(item).map_err(|e| {
                refused(h, &format!("Agent.restore: checkpoints[{i}] is not valid JSON: {}", h.error_message(&e)))
            })?;
        }
    }
    let is_snapshot = |v: &H::V| {
        h.kind(v).is_object_like()
            && h.get(v, field::FORMAT).ok().and_then(|f| h.as_string(&f)).as_deref()
                == Some(crate::core::snapshot::FORMAT)
    };
    let (data, seq, rest) = match list.first() {
        Some(first) if is_snapshot(first) => {
            let data = parse_snapshot(h, first)?;
            let seq = h.as_number(&get(h, &data, field::CHECKPOINT_SEQ)?).unwrap_or(0.0);
            (data, seq, list.get(1..).unwrap_or_default())
        }
        Some(first)
            if h.kind(first).is_object_like()
                && h.get(first, checkpoint::field::FORMAT).ok().and_then(|f| h.as_string(&f)).as_deref()
                    == Some(checkpoint::FORMAT) =>
        {
            (h.object(&[]), 0.0, &list[..])
        }
        // Neither a snapshot nor checkpoints (an empty list too): D8.3's error.
        _ => return Err(refused(h, "Agent.restore: not an agent-loop-wasm snapshot")),
    };
    checkpoint::fold(h, &data, rest, seq).map_err(|e| match e {
        ArgError::Type(message) => refused(h, &message),
        ArgError::Thrown(v) => v,
    })?;
    for (key, default) in [(field::STEERING_MODE, "one-at-a-time"), (field::FOLLOW_UP_MODE, "one-at-a-time")] {
        if h.kind(&get(h, &data, key)?) == Kind::Undefined {
            h.set(&data, key, &h.constant(default))?;
        }
    }
    Ok(data)
}

/// The applying half of `Agent.restore`: `data` was checked by `parse_snapshot`, `agent` is a new
/// idle instance built from the options; `tools` (optional) become its tools.
pub fn apply_snapshot<H: FastPaths>(
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
    h.set(st, key::TOOLS, &h.array(&tools))?;
    for (from, to) in [
        (field::MODEL, key::MODEL),
        (field::THINKING_LEVEL, key::THINKING_LEVEL),
        (field::MESSAGES, key::MESSAGES),
        (field::STEERING_QUEUE, key::STEERING),
        (field::FOLLOW_UP_QUEUE, key::FOLLOW_UP),
        (field::STEERING_MODE, key::STEERING_MODE),
        (field::FOLLOW_UP_MODE, key::FOLLOW_UP_MODE),
    ] {
        h.set(st, to, &get(h, data, from)?)?;
    }
    let session = get(h, data, field::SESSION_ID)?;
    if h.kind(&session) != Kind::Undefined {
        h.set(agent, "sessionId", &session)?;
    }
    h.set(st, key::INTERRUPTED, &h.boolean(h.truthy(&get(h, data, field::RUNNING)?)))?;
    let completed = get(h, data, field::COMPLETED_TOOLS)?;
    h.set(
        st,
        key::COMPLETED_TOOLS,
        &h.array(&if h.kind(&completed) == Kind::Array { h.array_items(&completed)? } else { Vec::new() }),
    )?;
    let approvals = get(h, data, field::APPROVALS)?;
    super::approvals::hold(h, st, (h.kind(&approvals) == Kind::Object).then_some(&approvals))?;
    let usage = get(h, data, field::USAGE)?;
    if h.kind(&usage) == Kind::Object {
        h.set(st, key::TOTAL_USAGE, &usage)?;
    }
    if h.kind(&get(h, st, key::ON_CHECKPOINT)?) == Kind::Function {
        let seq = h.as_number(&get(h, data, field::CHECKPOINT_SEQ)?).unwrap_or(0.0);
        checkpoint::adopt(h, agent, st, seq)?;
    }
    Ok(())
}
