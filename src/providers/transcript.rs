//! The request transcript (P-6.5), shared by every wire format: the replayed system head (system
//! prompt text and current tools) and pi-ai's clean-up of the conversation. JSON in, JSON out:
//! it never builds a wire format's shapes and never touches HTTP.
//!
//! How a wire format uses it:
//!
//! ```text
//! let t = transcript::prepare(input, Some(&my_normalize_id)); // or None: ids kept as they are
//! t.system_prompt // String: content, then non-null sections, blank-line joined ("" = send none)
//! t.tools         // Vec<Value>: current tools as declared ({name, description, parameters, ..})
//! t.messages      // Vec<Cow<Json>>: only "user", "assistant", "toolResult" messages, in order
//! ```
//!
//! What `t.messages` guarantees (P-6.5.2): `content` is a string (user only) or an array (never
//! null); images are placeholder texts when `model.input` lacks `"image"`; no `error`/`aborted`
//! assistant messages; assistant messages of another provider/api/model carry no thinking blocks,
//! no `textSignature`, no `thoughtSignature`; tool-call ids went through `normalize_id` and the
//! matching results' `toolCallId` follow; every tool call of a kept assistant message has a result
//! before the next assistant or user message (a synthetic `isError` "No result provided" one if
//! needed). Blocks are otherwise the caller's values (fields may still be missing or mistyped:
//! read them with the helpers below, which never panic).

use super::RequestInput;
use super::json::Json;
use serde_json::Value;
use std::borrow::Cow;

/// What a wire format sends: see the module documentation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transcript<'a> {
    pub system_prompt: String,
    pub tools: Vec<Value>,
    /// The caller's message itself where the clean-up changes nothing (most user and tool-result messages), else
    /// the changed copy: a long transcript is not copied to be read once.
    pub messages: Vec<Cow<'a, Json<'a>>>,
}

pub const USER_IMAGE_OMITTED: &str = "(image omitted: model does not support images)";
pub const TOOL_IMAGE_OMITTED: &str = "(tool image omitted: model does not support images)";
pub const NO_RESULT_PROVIDED: &str = "No result provided";

/// P-6.5.1 + P-6.5.2: the head of the transcript and the cleaned conversation. Later system
/// messages are not sent (their content only reaches the prompt through the replayed head).
pub fn prepare<'a>(input: &RequestInput<'a>, normalize_id: Option<&dyn Fn(&str) -> String>) -> Transcript<'a> {
    // Each message's role is read once: a long transcript is far larger than the caches, and every pass over it
    // costs a miss per message.
    let roles: Vec<Role> = input.messages.iter().map(Role::of).collect();
    let system = input.messages.iter().zip(&roles).filter(|(_, r)| **r == Role::System).map(|(m, _)| m);
    let (system_prompt, tools) = head(system);
    let messages = clean_up_with_roles(input.messages, &roles, input.model, normalize_id)
        .into_iter()
        .filter(|(r, _)| matches!(r, Role::User | Role::Assistant | Role::ToolResult))
        .map(|(_, m)| m)
        .collect();
    Transcript { system_prompt, tools, messages }
}

/// A message's `role`, read once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    User,
    Assistant,
    ToolResult,
    System,
    Other,
}

impl Role {
    fn of(message: &Json<'_>) -> Role {
        match message.role() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "system" => Role::System,
            _ => Role::Other,
        }
    }
}

/// Replays every system message in order (A-5.4.4): the prompt text (non-empty contents joined by
/// blank lines, then the non-null sections as patched by name) and the current tools
/// (`toolsRemoved`, then `toolsAdded`, per message; a re-added name keeps its place).
pub fn system_head(messages: &[Json<'_>]) -> (String, Vec<Value>) {
    head(messages.iter().filter(|m| m.role() == "system"))
}

/// `system_head` of the system messages.
fn head<'v, 'a: 'v>(system_messages: impl Iterator<Item = &'v Json<'a>>) -> (String, Vec<Value>) {
    let mut contents: Vec<String> = Vec::new();
    // Insertion-ordered like a JS Map: setting an existing name keeps its place.
    let mut sections: Vec<(&'v str, &'v Json<'a>)> = Vec::new();
    let mut tools: Vec<(&'v str, &'v Json<'a>)> = Vec::new();
    for message in system_messages {
        let text = content_text(message.get("content"), "\n");
        if !text.is_empty() {
            contents.push(text);
        }
        if let Some(Json::Object(patch)) = message.get("sections") {
            for (name, value) in patch {
                let name: &str = name;
                if value.is_null() {
                    sections.retain(|(n, _)| *n != name);
                } else if let Some(slot) = sections.iter_mut().find(|(n, _)| *n == name) {
                    slot.1 = value;
                } else {
                    sections.push((name, value));
                }
            }
        }
        for removed in message.get("toolsRemoved").and_then(Json::as_array).into_iter().flatten() {
            let name = removed.str("name");
            tools.retain(|(n, _)| *n != name);
        }
        for added in message.get("toolsAdded").and_then(Json::as_array).into_iter().flatten() {
            if !added.is_object() {
                continue;
            }
            let name = added.str("name");
            match tools.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = added,
                None => tools.push((name, added)),
            }
        }
    }
    let mut parts = vec![contents.join("\n\n")];
    parts.extend(sections.iter().filter_map(|(_, v)| v.as_str()).map(str::to_string));
    parts.retain(|p| !p.is_empty());
    (parts.join("\n\n"), tools.into_iter().map(|(_, t)| t.to_value()).collect())
}

/// P-6.5.2 on the whole transcript, system messages included (they stay in place, except that one
/// between a tool call and its results moves after the results).
pub fn clean_up<'a>(
    messages: &'a [Json<'a>],
    model: &Value,
    normalize_id: Option<&dyn Fn(&str) -> String>,
) -> Vec<Cow<'a, Json<'a>>> {
    let roles: Vec<Role> = messages.iter().map(Role::of).collect();
    clean_up_with_roles(messages, &roles, model, normalize_id).into_iter().map(|(_, m)| m).collect()
}

/// `clean_up` with each message's role (`roles[i]` is that of `messages[i]`), kept beside each output message.
fn clean_up_with_roles<'a>(
    messages: &'a [Json<'a>],
    roles: &[Role],
    model: &Value,
    normalize_id: Option<&dyn Fn(&str) -> String>,
) -> Vec<(Role, Cow<'a, Json<'a>>)> {
    let images_supported = model.get("input").and_then(Value::as_array).is_some_and(|a| a.iter().any(|i| i == "image"));
    let mut renamed: Vec<(String, String)> = Vec::new();
    let transformed: Vec<(Role, Cow<'a, Json<'a>>)> = messages
        .iter()
        .zip(roles)
        .filter_map(|(m, role)| Some((m, members(m)?, *role)))
        .map(|(value, map, role)| {
            let message = if unchanged(value, role, model, images_supported, normalize_id, &renamed) {
                Cow::Borrowed(value)
            } else {
                Cow::Owned(transform(map, model, images_supported, normalize_id, &mut renamed))
            };
            (role, message)
        })
        .collect();

    // Second pass: synthetic results for unanswered calls; system messages held behind results.
    let mut out = Vec::with_capacity(transformed.len());
    let mut pending: Vec<(String, String)> = Vec::new(); // (id, name) of the last assistant's calls
    let mut answered: Vec<String> = Vec::new();
    let mut held: Vec<(Role, Cow<'a, Json<'a>>)> = Vec::new();
    for (role, message) in transformed {
        match role {
            Role::Assistant => {
                close_pending(&mut out, &mut pending, &mut answered, &mut held);
                if matches!(message.str("stopReason"), "error" | "aborted") {
                    continue;
                }
                let calls: Vec<(String, String)> = message
                    .blocks()
                    .iter()
                    .filter(|b| b.kind() == "toolCall")
                    .map(|b| (b.str("id").to_string(), b.str("name").to_string()))
                    .collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                out.push((role, message));
            }
            Role::ToolResult => {
                answered.push(message.str("toolCallId").to_string());
                out.push((role, message));
            }
            Role::System if !pending.is_empty() => held.push((role, message)),
            Role::User => {
                close_pending(&mut out, &mut pending, &mut answered, &mut held);
                out.push((role, message));
            }
            _ => out.push((role, message)),
        }
    }
    close_pending(&mut out, &mut pending, &mut answered, &mut held);
    out
}

fn close_pending<'a>(
    out: &mut Vec<(Role, Cow<'a, Json<'a>>)>,
    pending: &mut Vec<(String, String)>,
    answered: &mut Vec<String>,
    held: &mut Vec<(Role, Cow<'a, Json<'a>>)>,
) {
    for (id, name) in pending.drain(..) {
        if !answered.contains(&id) {
            out.push((
                Role::ToolResult,
                Cow::Owned(Json::Object(vec![
                    (Cow::Borrowed("role"), Json::String(Cow::Borrowed("toolResult"))),
                    (Cow::Borrowed("toolCallId"), Json::String(Cow::Owned(id))),
                    (Cow::Borrowed("toolName"), Json::String(Cow::Owned(name))),
                    (Cow::Borrowed("content"), Json::Array(vec![text_block(NO_RESULT_PROVIDED)])),
                    (Cow::Borrowed("isError"), Json::Bool(true)),
                    (Cow::Borrowed("timestamp"), Json::Number(Cow::Borrowed("0"))),
                ])),
            ));
        }
    }
    answered.clear();
    out.append(held);
}

/// Whether `transform` would give back `message` as it is, key order included: then the caller's value is used
/// and nothing is copied. Mirrors `transform` case by case (a property test holds them together).
fn unchanged(
    message: &Json<'_>,
    role: Role,
    model: &Value,
    images_supported: bool,
    normalize_id: Option<&dyn Fn(&str) -> String>,
    renamed: &[(String, String)],
) -> bool {
    let content = match message.get("content") {
        None | Some(Json::Null) => return false,
        Some(content) => content,
    };
    let has_image = || content.as_array().is_some_and(|blocks| blocks.iter().any(|b| b.kind() == "image"));
    match role {
        Role::User => images_supported || !has_image(),
        Role::ToolResult => {
            let id = message.str("toolCallId");
            content.is_array() && (images_supported || !has_image()) && !renamed.iter().any(|(old, _)| old == id)
        }
        Role::Assistant => {
            let Some(blocks) = content.as_array() else { return false };
            let same = is_same_model(message, model);
            blocks.iter().all(|block| match block.kind() {
                "thinking" => {
                    same && (block.get("redacted").and_then(Json::as_bool).unwrap_or(false)
                        || !block.str("thinkingSignature").is_empty()
                        || !block.str("thinking").trim().is_empty())
                }
                // `text_block` of its text: exactly `{type, text}` in that order, the text a string.
                "text" if !same => members(block)
                    .is_some_and(|b| matches!(b, [(k1, _), (k2, v)] if k1 == "type" && k2 == "text" && v.is_string())),
                "toolCall" => {
                    if !block.is_object() {
                        return true;
                    }
                    (same || block.get("thoughtSignature").is_none())
                        && normalize_id.is_none_or(|normalize| {
                            let id = block.str("id");
                            normalize(id) == id
                        })
                }
                _ => true,
            })
        }
        _ => true,
    }
}

/// The first pass on one message: content, images, thinking and signatures, tool-call ids.
fn transform<'a>(
    message: &[(Cow<'a, str>, Json<'a>)],
    model: &Value,
    images_supported: bool,
    normalize_id: Option<&dyn Fn(&str) -> String>,
    renamed: &mut Vec<(String, String)>,
) -> Json<'a> {
    let mut members = message.to_vec();
    dedup(&mut members);
    let mut message = Json::Object(members);
    if message.get("content").is_none_or(Json::is_null) {
        put(&mut message, "content", Json::Array(Vec::new()));
    }
    let role = message.str("role").to_string();
    match role.as_str() {
        "user" if !images_supported => {
            if let Some(Json::Array(content)) = message.get("content") {
                let replaced = replace_images(content, USER_IMAGE_OMITTED);
                put(&mut message, "content", Json::Array(replaced));
            }
        }
        "toolResult" => {
            match message.get("content") {
                Some(Json::Array(content)) if !images_supported => {
                    let replaced = replace_images(content, TOOL_IMAGE_OMITTED);
                    put(&mut message, "content", Json::Array(replaced));
                }
                Some(Json::Array(_)) => {}
                Some(Json::String(text)) => {
                    let text = Json::Array(vec![text_block(text)]);
                    put(&mut message, "content", text);
                }
                _ => {
                    put(&mut message, "content", Json::Array(Vec::new()));
                }
            }
            let id = message.str("toolCallId");
            if let Some((_, new_id)) = renamed.iter().rev().find(|(old, _)| old == id) {
                let new_id = Json::String(Cow::Owned(new_id.clone()));
                put(&mut message, "toolCallId", new_id);
            }
        }
        "assistant" => {
            let same = is_same_model(&message, model);
            // Taken out of the copy (it is put back in its place below), not copied again.
            let content = match get_mut(&mut message, "content") {
                Some(Json::Array(content)) => std::mem::take(content),
                _ => Vec::new(),
            };
            let mut kept = Vec::with_capacity(content.len());
            for block in content {
                match block.kind() {
                    "thinking" => {
                        let signed = !block.str("thinkingSignature").is_empty();
                        let redacted = block.get("redacted").and_then(Json::as_bool).unwrap_or(false);
                        if same && (redacted || signed || !block.str("thinking").trim().is_empty()) {
                            kept.push(block);
                        }
                    }
                    "text" if !same => kept.push(text_block(block.str("text"))),
                    "toolCall" => {
                        let mut call = block;
                        if let Json::Object(members) = &mut call {
                            dedup(members);
                            if !same {
                                members.retain(|(k, _)| k != "thoughtSignature");
                            }
                        }
                        if call.is_object()
                            && let Some(normalize) = normalize_id
                        {
                            let id = call.str("id").to_string();
                            let new_id = normalize(&id);
                            if new_id != id {
                                renamed.push((id, new_id.clone()));
                                put(&mut call, "id", Json::String(Cow::Owned(new_id)));
                            }
                        }
                        kept.push(call);
                    }
                    _ => kept.push(block),
                }
            }
            put(&mut message, "content", Json::Array(kept));
        }
        _ => {}
    }
    message
}

/// An object's members with each key once, at its first place, holding its last value (what `JSON.parse` and
/// `serde_json` make of a repeated key), so that `put` and `Json::get` agree. Unique keys (always, for text
/// `JSON.stringify` wrote) are left as they are.
fn dedup(members: &mut Vec<(Cow<'_, str>, Json<'_>)>) {
    let mut i = 1;
    while i < members.len() {
        let repeated = members.get(..i).and_then(|seen| {
            let key = &members.get(i)?.0;
            seen.iter().position(|(k, _)| k == key)
        });
        match repeated {
            Some(first) => {
                let (_, value) = members.remove(i);
                if let Some(slot) = members.get_mut(first) {
                    slot.1 = value;
                }
            }
            None => i += 1,
        }
    }
}

/// `object[key] = value` on a deduplicated object: in its place when present, else last.
fn put<'a>(object: &mut Json<'a>, key: &'static str, value: Json<'a>) {
    let Json::Object(members) = object else { return };
    match members.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => members.push((Cow::Borrowed(key), value)),
    }
}

fn get_mut<'j, 'a>(object: &'j mut Json<'a>, key: &str) -> Option<&'j mut Json<'a>> {
    match object {
        Json::Object(members) => members.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

/// An object's members, or `None`.
fn members<'j, 'a>(value: &'j Json<'a>) -> Option<&'j [(Cow<'a, str>, Json<'a>)]> {
    match value {
        Json::Object(members) => Some(members),
        _ => None,
    }
}

/// Images replaced by one `placeholder` text per run of images (a placeholder text already there
/// absorbs the images that follow it).
pub fn replace_images<'a>(content: &[Json<'a>], placeholder: &'static str) -> Vec<Json<'a>> {
    let mut out = Vec::with_capacity(content.len());
    let mut previous_was_placeholder = false;
    for block in content {
        if block.kind() == "image" {
            if !previous_was_placeholder {
                out.push(text_block(placeholder));
            }
            previous_was_placeholder = true;
            continue;
        }
        previous_was_placeholder = block.get("text").and_then(Json::as_str) == Some(placeholder);
        out.push(block.clone());
    }
    out
}

/// A `{type: "text", text}` block.
fn text_block<'a>(text: &str) -> Json<'a> {
    Json::Object(vec![
        (Cow::Borrowed("type"), Json::String(Cow::Borrowed("text"))),
        (Cow::Borrowed("text"), Json::String(Cow::Owned(text.to_string()))),
    ])
}

/// Whether an assistant message came from this model (same provider, api and id; a missing or non-string field
/// equals only another such).
pub fn is_same_model(message: &Json<'_>, model: &Value) -> bool {
    fn text(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str)
    }
    message.is_object()
        && message.get("provider").and_then(Json::as_str) == text(model.get("provider"))
        && message.get("api").and_then(Json::as_str) == text(model.get("api"))
        && message.get("model").and_then(Json::as_str) == text(model.get("id"))
}

/// The message's `role`, or "".
pub fn role(message: &Value) -> &str {
    str_field(message, "role")
}

/// A block's `type`, or "".
pub fn block_type(block: &Value) -> &str {
    str_field(block, "type")
}

/// A string field, or "" when missing or not a string.
pub fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    field(value, key).and_then(Value::as_str).unwrap_or("")
}

/// `value.get(key)` for an object: a message or block has a few short keys, and comparing them in order costs
/// less than hashing `key` (serde_json's ordered map hashes with SipHash on every lookup).
pub fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    let map = value.as_object()?;
    if map.len() > 16 {
        return map.get(key);
    }
    map.iter().find_map(|(k, v)| (k == key).then_some(v))
}

/// A string content itself, else its text blocks joined with `separator`.
pub fn content_text(content: Option<&Json<'_>>, separator: &str) -> String {
    match content {
        Some(Json::String(text)) => text.to_string(),
        Some(Json::Array(items)) => {
            items.iter().filter(|b| b.kind() == "text").map(|b| b.str("text")).collect::<Vec<_>>().join(separator)
        }
        _ => String::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values(messages: &[Cow<'_, Json<'_>>]) -> Vec<Value> {
        messages.iter().map(|m| m.to_value()).collect()
    }

    fn model() -> Value {
        json!({"id": "m1", "api": "anthropic-messages", "provider": "anthropic", "input": ["text"]})
    }

    fn input<'a>(model: &'a Value, messages: &'a [Json<'a>], options: &'a Value) -> RequestInput<'a> {
        RequestInput { model, messages, options, api_key: None, messages_json_len: None }
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "parameters": {"type": "object"}})
    }

    fn assistant(content: Value, stop: &str) -> Value {
        json!({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
               "model": "m1", "stopReason": stop, "timestamp": 1})
    }

    fn result(id: &str) -> Value {
        json!({"role": "toolResult", "toolCallId": id, "toolName": "t", "content": [{"type": "text", "text": "ok"}],
               "isError": false, "timestamp": 2})
    }

    #[test]
    fn p_6_5_1_head_joins_contents_and_sections_and_replays_tools() {
        let messages = vec![
            json!({"role": "system", "content": "Base.", "sections": {"a": "A1", "b": "B"},
                   "toolsAdded": [tool("x", "X"), tool("y", "Y")], "timestamp": 0}),
            json!({"role": "user", "content": "hi", "timestamp": 1}),
            json!({"role": "system", "content": [{"type": "text", "text": "More"}, {"type": "text", "text": "lines"}],
                   "sections": {"a": "A2", "b": null, "c": "C"}, "toolsRemoved": [{"name": "x"}],
                   "toolsAdded": [tool("z", "Z"), tool("y", "Y2")], "timestamp": 2}),
            json!({"role": "system", "content": "", "sections": {"b": "B again"}, "timestamp": 3}),
        ];
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        assert_eq!(t.system_prompt, "Base.\n\nMore\nlines\n\nA2\n\nC\n\nB again");
        assert_eq!(t.tools, vec![tool("y", "Y2"), tool("z", "Z")]);
        assert_eq!(values(&t.messages), vec![json!({"role": "user", "content": "hi", "timestamp": 1})]);
    }

    #[test]
    fn p_6_5_1_no_system_messages_gives_empty_head() {
        let messages = vec![json!({"role": "user", "content": null, "timestamp": 1})];
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        assert_eq!(t.system_prompt, "");
        assert!(t.tools.is_empty());
        assert_eq!(values(&t.messages), vec![json!({"role": "user", "content": [], "timestamp": 1})]);
    }

    #[test]
    fn p_6_5_2_images_become_placeholders_without_image_input() {
        let messages = vec![
            json!({"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "data": "AA", "mimeType": "image/png"},
                {"type": "image", "data": "BB", "mimeType": "image/png"}], "timestamp": 1}),
            assistant(json!([{"type": "toolCall", "id": "c1", "name": "t", "arguments": {}}]), "toolUse"),
            json!({"role": "toolResult", "toolCallId": "c1", "toolName": "t", "isError": false, "timestamp": 2,
                   "content": [{"type": "image", "data": "CC", "mimeType": "image/png"}]}),
        ];
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        assert_eq!(
            t.messages[0].to_value()["content"],
            json!([{"type": "text", "text": "look"}, {"type": "text", "text": USER_IMAGE_OMITTED}])
        );
        assert_eq!(t.messages[2].to_value()["content"], json!([{"type": "text", "text": TOOL_IMAGE_OMITTED}]));

        let vision =
            json!({"id": "m1", "api": "anthropic-messages", "provider": "anthropic", "input": ["text", "image"]});
        let t = prepare(&input(&vision, &messages, &options), None);
        assert_eq!(t.messages[0].to_value()["content"][2]["type"], "image");
    }

    #[test]
    fn p_6_5_2_error_and_aborted_assistants_are_skipped() {
        let messages = vec![
            json!({"role": "user", "content": "a", "timestamp": 1}),
            assistant(json!([{"type": "text", "text": "partial"}]), "error"),
            assistant(json!([{"type": "text", "text": "partial"}]), "aborted"),
            json!({"role": "user", "content": "b", "timestamp": 1}),
        ];
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        assert_eq!(t.messages.iter().map(|m| m.role()).collect::<Vec<_>>(), ["user", "user"]);
    }

    #[test]
    fn p_6_5_2_other_model_loses_thinking_and_signatures() {
        let content = json!([
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
            {"type": "text", "text": "hello", "textSignature": "ts"},
            {"type": "toolCall", "id": "c1", "name": "t", "arguments": {"a": 1}, "thoughtSignature": "x"},
        ]);
        let mut other = assistant(content.clone(), "toolUse");
        other["model"] = json!("m2");
        let messages = vec![other, result("c1")];
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        assert_eq!(
            t.messages[0].to_value()["content"],
            json!([{"type": "text", "text": "hello"}, {"type": "toolCall", "id": "c1", "name": "t", "arguments": {"a": 1}}])
        );
        // The same model keeps everything.
        let messages = vec![assistant(content.clone(), "toolUse"), result("c1")];
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        assert_eq!(t.messages[0].to_value()["content"], content);
    }

    #[test]
    fn p_6_5_2_same_model_drops_only_empty_unsigned_thinking() {
        let content = json!([
            {"type": "thinking", "thinking": "  "},
            {"type": "thinking", "thinking": "", "thinkingSignature": "enc"},
            {"type": "thinking", "thinking": "", "redacted": true, "thinkingSignature": "r"},
            {"type": "thinking", "thinking": "real"},
        ]);
        let messages = vec![assistant(content, "stop")];
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        assert_eq!(t.messages[0].to_value()["content"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn p_6_5_2_ids_normalised_and_results_renamed() {
        let long = format!("call|{}", "x".repeat(80));
        let messages = vec![
            assistant(json!([{"type": "toolCall", "id": long, "name": "t", "arguments": {}}]), "toolUse"),
            result(&long),
        ];
        let normalize = |id: &str| id.replace('|', "_").chars().take(10).collect::<String>();
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), Some(&normalize));
        assert_eq!(t.messages[0].to_value()["content"][0]["id"], "call_xxxxx");
        assert_eq!(t.messages[1].to_value()["toolCallId"], "call_xxxxx");
    }

    #[test]
    fn p_6_5_2_missing_results_are_synthesised_before_next_turn_and_at_end() {
        let messages = vec![
            assistant(
                json!([{"type": "toolCall", "id": "a", "name": "t", "arguments": {}},
                       {"type": "toolCall", "id": "b", "name": "u", "arguments": {}}]),
                "toolUse",
            ),
            result("a"),
            json!({"role": "user", "content": "next", "timestamp": 3}),
            assistant(json!([{"type": "toolCall", "id": "c", "name": "v", "arguments": {}}]), "toolUse"),
        ];
        let (model, options) = (model(), json!({}));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), None);
        let summary: Vec<String> = t.messages.iter().map(|m| format!("{}:{}", m.role(), m.str("toolCallId"))).collect();
        assert_eq!(summary, ["assistant:", "toolResult:a", "toolResult:b", "user:", "assistant:", "toolResult:c"]);
        assert_eq!(
            t.messages[2].to_value(),
            json!({"role": "toolResult", "toolCallId": "b", "toolName": "u",
                   "content": [{"type": "text", "text": "No result provided"}], "isError": true, "timestamp": 0})
        );
    }

    #[test]
    fn p_6_5_2_system_message_between_call_and_results_moves_after_them() {
        let messages = vec![
            assistant(json!([{"type": "toolCall", "id": "a", "name": "t", "arguments": {}}]), "toolUse"),
            json!({"role": "system", "content": "update", "timestamp": 2}),
            result("a"),
            json!({"role": "user", "content": "next", "timestamp": 3}),
        ];
        let messages = crate::providers::json::from_values(&messages);
        let cleaned = clean_up(&messages, &model(), None);
        let roles: Vec<&str> = cleaned.iter().map(|m| m.role()).collect();
        assert_eq!(roles, ["assistant", "toolResult", "system", "user"]);
        // Only one result: the held system message did not close the call early.
        assert_eq!(cleaned.iter().filter(|m| m.role() == "toolResult").count(), 1);
    }

    #[test]
    fn malformed_messages_never_panic() {
        let messages = vec![
            json!(null),
            json!(3),
            json!({"role": "assistant", "content": "text?"}),
            json!({"role": "assistant", "content": [null, 1, {"type": "toolCall"}]}),
            json!({"role": "toolResult", "content": {"x": 1}}),
            json!({"role": "system", "toolsAdded": [1, {"name": 2}], "toolsRemoved": "x", "sections": [1]}),
        ];
        let (model, options) = (json!(null), json!(null));
        let messages = crate::providers::json::from_values(&messages);
        let t = prepare(&input(&model, &messages, &options), Some(&|s: &str| s.to_string()));
        // Two assistants (content coerced to arrays) and the result answering the id-less call.
        let roles: Vec<&str> = t.messages.iter().map(|m| m.role()).collect();
        assert_eq!(roles, ["assistant", "assistant", "toolResult"]);
        assert_eq!(t.messages[0].to_value()["content"], json!([]));
        assert_eq!(t.messages[2].to_value()["content"], json!([]));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod unchanged_tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Map, json};

    /// An object of some of `entries` (the first `required` always), in a generated order.
    fn object_of(required: usize, entries: Vec<(&'static str, BoxedStrategy<Value>)>) -> BoxedStrategy<Value> {
        let n = entries.len();
        let (keys, values): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
        (
            values,
            proptest::collection::vec(any::<bool>(), n),
            Just(()).prop_perturb(move |_, mut rng| {
                let mut order: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    order.swap(i, rng.random_range(0..=i));
                }
                order
            }),
        )
            .prop_map(move |(values, present, order)| {
                let mut map = Map::new();
                for i in order {
                    if i < required || present[i] {
                        map.insert(keys[i].to_string(), values[i].clone());
                    }
                }
                Value::Object(map)
            })
            .boxed()
    }

    fn one_of(values: &[Value]) -> BoxedStrategy<Value> {
        proptest::sample::select(values.to_vec()).boxed()
    }

    fn block() -> BoxedStrategy<Value> {
        let any_block = object_of(
            1,
            vec![
                (
                    "type",
                    one_of(&[json!("text"), json!("thinking"), json!("toolCall"), json!("image"), json!("other")]),
                ),
                ("text", one_of(&[json!("hi"), json!(" "), json!(3)])),
                ("thinking", one_of(&[json!("hmm"), json!(""), json!("  ")])),
                ("thinkingSignature", one_of(&[json!("sig"), json!("")])),
                ("redacted", one_of(&[json!(true), json!(false)])),
                ("thoughtSignature", one_of(&[json!("t")])),
                ("id", one_of(&[json!("call_1"), json!("a|b"), json!("x".repeat(45)), json!(7)])),
                ("textSignature", one_of(&[json!("s")])),
            ],
        );
        let text = object_of(2, vec![("type", one_of(&[json!("text")])), ("text", one_of(&[json!("hi"), json!(3)]))]);
        let call = object_of(
            2,
            vec![
                ("type", one_of(&[json!("toolCall")])),
                ("id", one_of(&[json!("call_1"), json!("a|b")])),
                ("thoughtSignature", one_of(&[json!("t")])),
            ],
        );
        let thinking = object_of(
            2,
            vec![
                ("type", one_of(&[json!("thinking")])),
                ("thinking", one_of(&[json!("hmm"), json!(" ")])),
                ("thinkingSignature", one_of(&[json!("sig"), json!("")])),
                ("redacted", one_of(&[json!(true), json!(false)])),
            ],
        );
        let image = Just(json!({"type": "image", "data": "AA", "mimeType": "image/png"})).boxed();
        prop_oneof![3 => text, 3 => call, 2 => thinking, 1 => image, 2 => any_block].boxed()
    }

    fn message() -> BoxedStrategy<Value> {
        let content = prop_oneof![
            1 => Just(Value::Null),
            1 => Just(json!("text")),
            1 => Just(json!(5)),
            6 => proptest::collection::vec(block(), 1..4).prop_map(Value::Array),
        ];
        object_of(
            2,
            vec![
                ("role", one_of(&[json!("user"), json!("assistant"), json!("toolResult"), json!("system")])),
                ("content", content.boxed()),
                ("provider", one_of(&[json!("anthropic"), json!("other")])),
                ("api", one_of(&[json!("anthropic-messages")])),
                ("model", one_of(&[json!("m1")])),
                ("toolCallId", one_of(&[json!("call_1"), json!("a|b")])),
                ("timestamp", one_of(&[json!(1)])),
            ],
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Where `unchanged` says so, `transform` gives the message back byte for byte (key order included).
        #[test]
        fn unchanged_agrees_with_transform(
            m in message(),
            images in any::<bool>(),
            normalizes in any::<bool>(),
            renames in any::<bool>(),
        ) {
            let model = json!({"id": "m1", "api": "anthropic-messages", "provider": "anthropic",
                               "input": if images { json!(["text", "image"]) } else { json!(["text"]) }});
            let normalize = |id: &str| id.replace('|', "_");
            let normalize_id: Option<&dyn Fn(&str) -> String> = if normalizes { Some(&normalize) } else { None };
            let renamed = if renames { vec![("call_1".to_string(), "call_2".to_string())] } else { Vec::new() };
            let text = serde_json::to_string(&m).unwrap();
            let m = crate::providers::json::parse(&text).unwrap();
            if unchanged(&m, Role::of(&m), &model, images, normalize_id, &renamed) {
                let mut renamed = renamed.clone();
                let out = transform(members(&m).unwrap(), &model, images, normalize_id, &mut renamed);
                prop_assert_eq!(serde_json::to_string(&out.to_value()).unwrap(), text);
            }
        }
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
        let text = r#"{"a":1,"b":2,"a":3,"c":4,"b":5}"#;
        let mut members = match crate::providers::json::parse(text) {
            Some(Json::Object(members)) => members,
            _ => Vec::new(),
        };
        dedup(&mut members);
        let serde: Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&Json::Object(members).to_value()).unwrap(), r#"{"a":3,"b":5,"c":4}"#);
        assert_eq!(serde.to_string(), r#"{"a":3,"b":5,"c":4}"#);
        let mut unique = vec![(Cow::Borrowed("x"), Json::Null), (Cow::Borrowed("y"), Json::Bool(true))];
        dedup(&mut unique);
        assert_eq!(unique, vec![(Cow::Borrowed("x"), Json::Null), (Cow::Borrowed("y"), Json::Bool(true))]);
    }

    #[test]
    fn the_common_messages_are_not_copied() {
        let model = json!({"id": "m1", "api": "a", "provider": "p", "input": ["text"]});
        let messages = vec![
            json!({"role": "user", "content": "hi", "timestamp": 1}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "yes"},
                   {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}],
                   "api": "b", "provider": "q", "model": "m2", "stopReason": "toolUse", "timestamp": 2}),
            json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                   "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 3}),
        ];
        let messages = crate::providers::json::from_values(&messages);
        let cleaned = clean_up(&messages, &model, Some(&|id: &str| id.to_string()));
        assert!(cleaned.iter().all(|m| matches!(m, Cow::Borrowed(_))), "{cleaned:?}");
        // A text block with a signature, from another model, is rewritten: a copy.
        let signed =
            vec![json!({"role": "assistant", "content": [{"type": "text", "text": "yes", "textSignature": "s"}],
                                 "api": "b", "provider": "q", "model": "m2", "stopReason": "stop", "timestamp": 2})];
        let signed = crate::providers::json::from_values(&signed);
        let cleaned = clean_up(&signed, &model, None);
        assert!(matches!(cleaned[..], [Cow::Owned(_)]));
        assert_eq!(
            cleaned[0].to_value(),
            json!({"role": "assistant", "content": [{"type": "text", "text": "yes"}],
                   "api": "b", "provider": "q", "model": "m2", "stopReason": "stop", "timestamp": 2})
        );
    }
}
