//! Replaying a transcript's system messages (A-5.4.4, P-6.5.1): the current system prompt and
//! the replayed head, one system message equal to replaying all of them. Reads, never mutates.

use super::declare::tools::role;
use super::host::{Host, Kind};

/// Text blocks of a message's content joined with `separator` (a string content is itself).
pub fn content_text<H: Host>(h: &H, content: &H::V, separator: &str) -> Result<String, H::V> {
    if let Some(text) = h.as_string(content) {
        return Ok(text);
    }
    if h.kind(content) != Kind::Array {
        return Ok(String::new());
    }
    let mut parts = Vec::new();
    for block in h.array_items(content)? {
        if !h.kind(&block).is_object_like() {
            continue;
        }
        if h.as_string(&h.get(&block, "type")?).as_deref() == Some("text") {
            let text = h.get(&block, "text")?;
            parts.push(h.as_string(&text).unwrap_or_else(|| h.error_message(&text)));
        }
    }
    Ok(parts.join(separator))
}

/// `getCurrentSystemMessage`: contents joined by blank lines, sections patched by name (null
/// removes), `toolsAdded` = the current tools, `timestamp` of the first system message.
pub fn current_system_message<H: Host>(h: &H, messages: &[H::V]) -> Result<Option<H::V>, H::V> {
    let mut contents: Vec<String> = Vec::new();
    let mut sections: Vec<(String, H::V)> = Vec::new();
    let mut tools: Vec<(String, H::V)> = Vec::new();
    let mut timestamp: Option<H::V> = None;
    for message in messages {
        if role(h, message)?.as_deref() != Some("system") {
            continue;
        }
        if timestamp.is_none() {
            let t = h.get(message, "timestamp")?;
            if !h.kind(&t).is_nullish() {
                timestamp = Some(t);
            }
        }
        let text = content_text(h, &h.get(message, "content")?, "\n")?;
        if !text.is_empty() {
            contents.push(text);
        }
        let patch = h.get(message, "sections")?;
        if h.kind(&patch).is_object_like() {
            // Map semantics: a re-set section keeps its place, a removed one loses it.
            for (name, value) in h.entries(&patch)? {
                if h.kind(&value) == Kind::Null {
                    sections.retain(|(n, _)| *n != name);
                } else if let Some(slot) = sections.iter_mut().find(|(n, _)| *n == name) {
                    slot.1 = value;
                } else {
                    sections.push((name, value));
                }
            }
        }
        for removed in list(h, &h.get(message, "toolsRemoved")?)? {
            let name = name_of(h, &removed)?;
            tools.retain(|(n, _)| *n != name);
        }
        for added in list(h, &h.get(message, "toolsAdded")?)? {
            let name = name_of(h, &added)?;
            match tools.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = added,
                None => tools.push((name, added)),
            }
        }
    }
    if timestamp.is_none() && tools.is_empty() {
        return Ok(None);
    }
    let mut entries = vec![("role", h.constant("system")), ("content", h.string(&contents.join("\n\n")))];
    if !sections.is_empty() {
        let object = h.object(&[]);
        for (name, value) in &sections {
            h.set(&object, name, value)?;
        }
        entries.push(("sections", object));
    }
    if !tools.is_empty() {
        let values: Vec<H::V> = tools.into_iter().map(|(_, t)| t).collect();
        entries.push(("toolsAdded", h.array(&values)));
    }
    entries.push(("timestamp", timestamp.unwrap_or_else(|| h.number(0.0))));
    Ok(Some(h.object(&entries)))
}

/// `getCurrentSystemPrompt`: the replayed head's content, then its non-null sections.
pub fn current_system_prompt<H: Host>(h: &H, messages: &[H::V]) -> Result<String, H::V> {
    let Some(head) = current_system_message(h, messages)? else {
        return Ok(String::new());
    };
    let mut parts = vec![content_text(h, &h.get(&head, "content")?, "\n")?];
    let sections = h.get(&head, "sections")?;
    if h.kind(&sections).is_object_like() {
        for (_, value) in h.entries(&sections)? {
            if let Some(text) = h.as_string(&value) {
                parts.push(text);
            }
        }
    }
    parts.retain(|p| !p.is_empty());
    Ok(parts.join("\n\n"))
}

fn list<H: Host>(h: &H, v: &H::V) -> Result<Vec<H::V>, H::V> {
    if h.kind(v) == Kind::Array { h.array_items(v) } else { Ok(Vec::new()) }
}

fn name_of<H: Host>(h: &H, tool: &H::V) -> Result<String, H::V> {
    let name = h.get(tool, "name")?;
    Ok(h.as_string(&name).unwrap_or_else(|| h.error_message(&name)))
}
