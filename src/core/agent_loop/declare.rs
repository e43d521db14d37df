//! `declareToolChanges` (L-3.4.2): before every request, write the difference between the tools the transcript
//! declares and the tools `context.tools` can execute into a system message, so that replaying the transcript
//! yields exactly the executable set. Reads caller values, mutates none.

use crate::core::declare::tools::role;
use crate::core::fast::FastPaths;
use crate::core::host::Kind;

/// Whether `message[key]?.length` is truthy.
fn has_entries<H: FastPaths>(h: &H, message: &H::V, key: &str) -> Result<bool, H::V> {
    let list = h.get(message, key)?;
    if h.kind(&list).is_nullish() {
        return Ok(false);
    }
    if !h.kind(&list).is_object_like() && h.kind(&list) != Kind::String {
        return Ok(false);
    }
    Ok(h.truthy(&h.get(&list, "length")?))
}

/// A copy of a system message with its tool fields replaced (empty lists omitted, placed last).
fn with_tool_changes<H: FastPaths>(h: &H, message: &H::V, added: &[H::V], removed: &[H::V]) -> Result<H::V, H::V> {
    let copy = h.shallow_copy(message)?;
    h.delete(&copy, "toolsAdded")?;
    h.delete(&copy, "toolsRemoved")?;
    if !added.is_empty() {
        h.set(&copy, "toolsAdded", &h.array(added))?;
    }
    if !removed.is_empty() {
        h.set(&copy, "toolsRemoved", &h.array(removed))?;
    }
    Ok(copy)
}

/// L-3.4.2. Returns the messages to inject (the pending ones, possibly with one system message
/// rewritten or inserted). Errors are values thrown by caller getters.
pub fn declare_tool_changes<H: FastPaths>(h: &H, context: &H::V, pending: &[H::V]) -> Result<Vec<H::V>, H::V> {
    let mut roles = Vec::with_capacity(pending.len());
    for message in pending {
        roles.push(role(h, message)?);
    }
    let system_index = roles.iter().rposition(|r| r.as_deref() == Some("system"));

    // The pending system messages replay after the transcript, except the one that will carry the changes.
    let mut extra = Vec::new();
    for (index, message) in pending.iter().enumerate() {
        if Some(index) != system_index && roles.get(index).is_some_and(|r| r.as_deref() == Some("system")) {
            extra.push((h.get(message, "toolsRemoved")?, h.get(message, "toolsAdded")?));
        }
    }
    let messages = h.get(context, "messages")?;
    let tools = h.get(context, "tools")?;
    let (added, removed) = h.tool_changes(&messages, &extra, &tools)?;
    let unchanged = added.is_empty() && removed.is_empty();

    if let Some(index) = system_index {
        let Some(system) = pending.get(index) else {
            return Ok(pending.to_vec());
        };
        if unchanged && !has_entries(h, system, "toolsAdded")? && !has_entries(h, system, "toolsRemoved")? {
            return Ok(pending.to_vec());
        }
        let rewritten = with_tool_changes(h, system, &added, &removed)?;
        let mut out = pending.to_vec();
        if let Some(slot) = out.get_mut(index) {
            *slot = rewritten;
        }
        return Ok(out);
    }
    if unchanged {
        return Ok(pending.to_vec());
    }
    let mut entries =
        vec![("role", h.constant("system")), ("content", h.constant("")), ("timestamp", h.number(h.date_now()))];
    if !added.is_empty() {
        entries.push(("toolsAdded", h.array(&added)));
    }
    if !removed.is_empty() {
        entries.push(("toolsRemoved", h.array(&removed)));
    }
    let update = h.object(&entries);
    let insert_at = roles.iter().position(|r| r.as_deref() != Some("system")).unwrap_or(pending.len());
    let mut out = pending.to_vec();
    out.insert(insert_at, update);
    Ok(out)
}
