//! Tool declarations (L-3.4.1) and what the transcript declares: the reading half of `declareToolChanges`, and
//! the reference of `FastPaths::tool_changes` (its JS twin is `toolChanges` in `src/js/snippets/declare.js`).
//! Reads caller values, mutates none.

use crate::core::fxhash::FxMap;
use crate::core::host::{Host, Kind};
use crate::core::tool_schema::{self, ToolSchema};

/// What `FastPaths::tool_changes` finds: `(toolsAdded, toolsRemoved)`, or the value a getter threw.
pub type ToolChanges<V> = Result<(Vec<V>, Vec<V>), V>;

/// Tools by name in `Map` order: re-setting a name keeps its place, deleting then setting moves it last.
struct ToolSet<V> {
    entries: Vec<(String, V)>,
}

impl<V: Clone> ToolSet<V> {
    fn new() -> Self {
        ToolSet { entries: Vec::new() }
    }
    fn set(&mut self, name: String, tool: V) {
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = tool,
            None => self.entries.push((name, tool)),
        }
    }
    fn delete(&mut self, name: &str) {
        self.entries.retain(|(n, _)| n != name);
    }
}

/// A tool as the model sees it, and its JSON text (two tools are equal when the texts are).
pub struct Declaration<V> {
    pub name: String,
    pub value: V,
    pub text: String,
}

/// `String(value)` for names: tool names are strings in practice, anything else is shown as JS would.
fn name_of<H: Host>(h: &H, tool: &H::V) -> Result<String, H::V> {
    let name = h.get(tool, "name")?;
    Ok(h.as_string(&name).unwrap_or_else(|| h.error_message(&name)))
}

/// `{name, description, parameters: JSON round-trip, constrainedSampling? }` (L-3.4.1); the parameters of a Standard
/// Schema are its converter's JSON Schema (T-4.3.8).
pub fn declaration<H: Host>(h: &H, tool: &H::V) -> Result<Declaration<H::V>, H::V> {
    let (name_value, value) = declared(h, tool)?;
    let text = h.json_stringify(&value, false)?.unwrap_or_default();
    let name = h.as_string(&name_value).unwrap_or_else(|| h.error_message(&name_value));
    Ok(Declaration { name, value, text })
}

/// A tool's declaration value alone (`declaration` without its name and text).
pub fn declaration_value<H: Host>(h: &H, tool: &H::V) -> Result<H::V, H::V> {
    Ok(declared(h, tool)?.1)
}

/// The tool's `name` as read, and its declaration value.
fn declared<H: Host>(h: &H, tool: &H::V) -> Result<(H::V, H::V), H::V> {
    let name_value = h.get(tool, "name")?;
    let description = h.get(tool, "description")?;
    let parameters = h.get(tool, "parameters")?;
    // T-4.3.8: a Standard Schema is declared by the JSON Schema its converter writes.
    let parameters = match tool_schema::classify(h, &parameters)? {
        ToolSchema::Json => parameters,
        ToolSchema::Standard(props) => tool_schema::standard_json_schema(h, &props)?,
        ToolSchema::Unreadable(reason) => {
            let name = h.as_string(&name_value).unwrap_or_else(|| h.error_message(&name_value));
            return Err(h.error(&tool_schema::unreadable_message(&name, &reason), true));
        }
    };
    let parameters = match h.json_stringify(&parameters, false)? {
        Some(text) => h.json_parse(&text)?,
        None => h.undefined(),
    };
    let constrained = h.get(tool, "constrainedSampling")?;
    let mut entries = vec![("name", name_value.clone()), ("description", description), ("parameters", parameters)];
    if h.kind(&constrained) != Kind::Undefined {
        entries.push(("constrainedSampling", constrained));
    }
    Ok((name_value, h.object(&entries)))
}

pub fn role<H: Host>(h: &H, message: &H::V) -> Result<Option<String>, H::V> {
    if !h.kind(message).is_object_like() {
        return Ok(None);
    }
    let role = h.get(message, "role")?;
    Ok(h.as_string(&role))
}

fn items_of<H: Host>(h: &H, list: &H::V) -> Result<Vec<H::V>, H::V> {
    match h.kind(list) {
        Kind::Array => h.array_items(list),
        _ => Ok(Vec::new()),
    }
}

/// Replays one system message's tool fields into `tools` (toolsRemoved first, then toolsAdded).
fn replay<H: Host>(h: &H, tools: &mut ToolSet<H::V>, removed: &H::V, added: &H::V) -> Result<(), H::V> {
    for removed in items_of(h, removed)? {
        let name = name_of(h, &removed)?;
        tools.delete(&name);
    }
    for added in items_of(h, added)? {
        let name = name_of(h, &added)?;
        tools.set(name, added);
    }
    Ok(())
}

/// The reference of `FastPaths::tool_changes`, step by step: one read per field, tools compared by declaration text.
pub fn tool_changes<H: Host>(h: &H, messages: &H::V, extra: &[(H::V, H::V)], tools: &H::V) -> ToolChanges<H::V> {
    let mut declared = ToolSet::new();
    if h.kind(messages) == Kind::Array {
        for message in h.array_items(messages)? {
            if role(h, &message)?.as_deref() == Some("system") {
                let (removed, added) = (h.get(&message, "toolsRemoved")?, h.get(&message, "toolsAdded")?);
                replay(h, &mut declared, &removed, &added)?;
            }
        }
    }
    for (removed, added) in extra {
        replay(h, &mut declared, removed, added)?;
    }

    // Compared by declaration text; the declaration value itself is built only for tools that are added.
    let mut executable = Vec::new();
    for tool in items_of(h, tools)? {
        let text = declaration(h, &tool)?.text;
        executable.push((name_of(h, &tool)?, text, tool));
    }
    let mut declared_texts = Vec::with_capacity(declared.entries.len());
    for (name, tool) in &declared.entries {
        declared_texts.push((name.clone(), declaration(h, tool)?.text));
    }
    let declared_by_name: FxMap<&str, &str> = declared_texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let executable_by_name: FxMap<&str, &str> = executable.iter().map(|(n, t, _)| (n.as_str(), t.as_str())).collect();

    let mut added = Vec::new();
    for (name, text, tool) in &executable {
        if declared_by_name.get(name.as_str()) != Some(&text.as_str()) {
            added.push(declaration_value(h, tool)?);
        }
    }
    let removed = declared_texts
        .iter()
        .filter(|(n, text)| executable_by_name.get(n.as_str()) != Some(&text.as_str()))
        .map(|(n, _)| h.object(&[("name", h.string(n))]))
        .collect();
    Ok((added, removed))
}
