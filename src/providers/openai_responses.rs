//! `openai-responses` (§6.7): builds the `POST <base>/responses` request from the transcript and
//! maps the Responses stream (`event:` + `data:` with the same `type`) onto the `Assembler`.
//! Owns only this wire format; the transcript clean-up, token limits and sampling merge are the
//! shared rules of `transcript.rs` and `request.rs`.

use super::assemble::{Assembler, BlockKind, StopReason, Usage};
use super::{HttpRequest, RequestInput, StreamMapper, WireFormat};
use serde_json::{Map, Value, json};

pub struct OpenAiResponses;

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The API rejects `max_output_tokens` below 16.
const MIN_OUTPUT_TOKENS: f64 = 16.0;
/// Item ids and `prompt_cache_key` longer than this are rejected.
const MAX_ID_CHARS: usize = 64;

impl WireFormat for OpenAiResponses {
    fn build_request(&self, input: &RequestInput<'_>) -> Result<HttpRequest, String> {
        let model = input.model;
        let url = format!("{}/responses", shared::base_url(model, DEFAULT_BASE_URL));
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        // P-6.2.3: without a key no Authorization is sent (local servers).
        if let Some(key) = input.api_key.filter(|k| !k.is_empty()) {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        Ok(HttpRequest { url, headers, body: request_body(input) })
    }

    fn mapper(&self, _input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        Box::new(ResponsesMapper::default())
    }
}

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

fn request_body(input: &RequestInput<'_>) -> Value {
    let (model, options) = (input.model, input.options);
    let transcript = shared::transcript(model, input.messages);
    let level = shared::thinking_level(model, options);
    let mut body = Map::new();
    body.insert("model".into(), model.get("id").cloned().unwrap_or_else(|| json!("")));
    body.insert("input".into(), Value::Array(input_items(model, &transcript)));
    body.insert("stream".into(), json!(true));
    if let Some(key) = prompt_cache_key(options) {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    body.insert("store".into(), json!(false));
    if let Some(max) = shared::max_tokens(model, options, input.messages) {
        body.insert("max_output_tokens".into(), shared::number(max.max(MIN_OUTPUT_TOKENS)));
    }
    if let Some(t) = options.get("temperature").filter(|t| !t.is_null()) {
        body.insert("temperature".into(), t.clone());
    }
    if !transcript.tools.is_empty() {
        let tools = transcript.tools.iter().map(function_tool).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = options.get("toolChoice").filter(|c| !c.is_null()) {
        body.insert("tool_choice".into(), choice.clone());
    }
    if is_true(model.get("reasoning")) {
        let level_map = model.get("thinkingLevelMap");
        match &level {
            Some(level) => {
                let effort = level_map.and_then(|m| m.get(level.as_str())).and_then(Value::as_str).unwrap_or(level);
                body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
                body.insert("include".into(), json!(["reasoning.encrypted_content"]));
            }
            // §6.7: level off sends an effort only when the model maps "off" to a string.
            None => {
                if let Some(off) = level_map.and_then(|m| m.get("off")).and_then(Value::as_str) {
                    body.insert("reasoning".into(), json!({"effort": off}));
                }
            }
        }
    }
    shared::merge_sampling(&mut body, model, options, level.as_deref());
    Value::Object(body)
}

/// `options.sessionId`, unless caching is off, clamped to the API's 64 characters.
fn prompt_cache_key(options: &Value) -> Option<String> {
    if options.get("cacheRetention").and_then(Value::as_str) == Some("none") {
        return None;
    }
    let id = options.get("sessionId").and_then(Value::as_str)?;
    Some(id.chars().take(MAX_ID_CHARS).collect())
}

fn function_tool(tool: &Value) -> Value {
    json!({
        "type": "function",
        "name": tool.get("name").cloned().unwrap_or_else(|| json!("")),
        "description": tool.get("description").cloned().unwrap_or_else(|| json!("")),
        "parameters": tool.get("parameters").cloned().unwrap_or_else(|| json!({})),
        "strict": false,
    })
}

/// The `input` items: the system head, then one or more items per transcript message.
fn input_items(model: &Value, transcript: &shared::Transcript) -> Vec<Value> {
    let mut items = Vec::new();
    if !transcript.system.is_empty() {
        let developer = is_true(model.get("reasoning"))
            && model.get("compat").and_then(|c| c.get("supportsDeveloperRole")).and_then(Value::as_bool) != Some(false);
        let role = if developer { "developer" } else { "system" };
        items.push(json!({"role": role, "content": transcript.system}));
    }
    for (n, message) in transcript.messages.iter().enumerate() {
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                let content = user_content(message.get("content"));
                if !content.is_empty() {
                    items.push(json!({"role": "user", "content": content}));
                }
            }
            Some("assistant") => assistant_items(model, message, n, &mut items),
            Some("toolResult") => {
                let id = message.get("toolCallId").and_then(Value::as_str).unwrap_or_default();
                let call_id = id.split('|').next().unwrap_or_default();
                let output = tool_output(model, message.get("content"));
                items.push(json!({"type": "function_call_output", "call_id": call_id, "output": output}));
            }
            _ => {}
        }
    }
    items
}

fn user_content(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(text)) => vec![json!({"type": "input_text", "text": text})],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => Some(json!({"type": "input_text", "text": str_field(part, "text")})),
                Some("image") => Some(input_image(part)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn input_image(part: &Value) -> Value {
    let url = format!("data:{};base64,{}", str_field(part, "mimeType"), str_field(part, "data"));
    json!({"type": "input_image", "detail": "auto", "image_url": url})
}

/// Tool-result text (joined by "\n"); with images on an image model, an `input_text` +
/// `input_image` list as the reference sends.
fn tool_output(model: &Value, content: Option<&Value>) -> Value {
    let parts = content.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let text = parts.iter().filter(|p| is_type(p, "text")).map(|p| str_field(p, "text")).collect::<Vec<_>>().join("\n");
    let images: Vec<&Value> = parts.iter().filter(|p| is_type(p, "image")).collect();
    let has_text = !text.trim().is_empty();
    if images.is_empty() || !supports_images(model) {
        let output = if has_text {
            text
        } else if images.is_empty() {
            "(no tool output)".into()
        } else {
            "(see attached image)".into()
        };
        return Value::String(output);
    }
    let mut list = Vec::new();
    if has_text {
        list.push(json!({"type": "input_text", "text": text}));
    }
    list.extend(images.into_iter().map(input_image));
    Value::Array(list)
}

fn assistant_items(model: &Value, message: &Value, n: usize, items: &mut Vec<Value>) {
    let same_model = shared::same_model(model, message);
    let blocks = message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut text_blocks = 0usize;
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("thinking") if same_model => {
                // The signature is the whole reasoning item the stream delivered (encrypted content).
                let item = block.get("thinkingSignature").and_then(Value::as_str).and_then(|s| {
                    serde_json::from_str::<Value>(s).ok().filter(Value::is_object)
                });
                items.extend(item);
            }
            Some("text") => {
                let signature = block.get("textSignature").and_then(Value::as_str).and_then(parse_text_signature);
                let fallback = if text_blocks == 0 { format!("msg_{n}") } else { format!("msg_{n}_{text_blocks}") };
                text_blocks += 1;
                let (id, phase) = match signature {
                    Some((id, phase)) => (shorten_id(id), phase),
                    None => (fallback, None),
                };
                let mut item = json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": str_field(block, "text"), "annotations": []}],
                    "status": "completed",
                    "id": id,
                });
                if let (Some(phase), Some(map)) = (phase, item.as_object_mut()) {
                    map.insert("phase".into(), json!(phase));
                }
                items.push(item);
            }
            Some("toolCall") => {
                let full_id = str_field(block, "id");
                let mut ids = full_id.split('|');
                let call_id = ids.next().unwrap_or_default();
                let item_id = ids.next().filter(|id| same_model && id.starts_with("fc_"));
                let arguments = match block.get("arguments") {
                    Some(args) if !args.is_null() => serde_json::to_string(args).unwrap_or_else(|_| "{}".into()),
                    _ => "{}".into(),
                };
                let mut item = Map::new();
                item.insert("type".into(), json!("function_call"));
                if let Some(item_id) = item_id {
                    item.insert("id".into(), json!(item_id));
                }
                item.insert("call_id".into(), json!(call_id));
                item.insert("name".into(), json!(str_field(block, "name")));
                item.insert("arguments".into(), json!(arguments));
                items.push(Value::Object(item));
            }
            _ => {}
        }
    }
}

/// A text signature: JSON `{v:1, id, phase?}`, or (older messages) the item id itself.
fn parse_text_signature(signature: &str) -> Option<(String, Option<String>)> {
    if signature.is_empty() {
        return None;
    }
    if signature.starts_with('{')
        && let Ok(parsed) = serde_json::from_str::<Value>(signature)
        && parsed.get("v").and_then(Value::as_f64) == Some(1.0)
        && let Some(id) = parsed.get("id").and_then(Value::as_str)
    {
        let phase = parsed
            .get("phase")
            .and_then(Value::as_str)
            .filter(|p| *p == "commentary" || *p == "final_answer")
            .map(str::to_string);
        return Some((id.to_string(), phase));
    }
    Some((signature.to_string(), None))
}

/// Ids over 64 characters become `msg_<hash>` (stable for the same id).
fn shorten_id(id: String) -> String {
    if id.encode_utf16().count() <= MAX_ID_CHARS {
        return id;
    }
    // FNV-1a, 64-bit: short, deterministic, no dependency.
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("msg_{hash:016x}")
}

fn supports_images(model: &Value) -> bool {
    model.get("input").and_then(Value::as_array).is_some_and(|list| list.iter().any(|i| i == "image"))
}

fn is_type(value: &Value, kind: &str) -> bool {
    value.get("type").and_then(Value::as_str) == Some(kind)
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn is_true(value: Option<&Value>) -> bool {
    value.and_then(Value::as_bool) == Some(true)
}

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum SlotKind {
    Reasoning,
    Message,
    FunctionCall,
}

/// One output item being streamed, found by `output_index` (else by item id).
struct Slot {
    output_index: Option<u64>,
    item_id: Option<String>,
    kind: SlotKind,
    /// The assembler key of its block.
    key: String,
    /// A text or thinking delta arrived (the block exists and holds streamed text).
    streamed: bool,
    /// The summary/content part the last thinking delta belonged to (parts are blank-line separated).
    part: Option<(bool, u64)>,
    /// For tool calls: the id and name, for the unfinished-call check.
    call: Option<(String, String)>,
}

/// What the terminal `response.completed`/`response.incomplete` said.
struct Terminal {
    status: Option<String>,
    reason: Option<String>,
    error: Option<String>,
}

#[derive(Default)]
struct ResponsesMapper {
    slots: Vec<Slot>,
    next_key: u64,
    terminal: Option<Terminal>,
    /// Tool calls whose `output_item.done` has not arrived: (id, name).
    unfinished: Vec<(String, String)>,
}

impl StreamMapper for ResponsesMapper {
    fn on_event(&mut self, event: Option<&str>, data: &Value, asm: &mut Assembler) {
        let kind = data.get("type").and_then(Value::as_str).or(event).unwrap_or_default();
        match kind {
            "response.created" => {
                if let Some(id) = data.get("response").and_then(|r| r.get("id")).filter(|id| id.is_string()) {
                    asm.meta("responseId", id.clone());
                }
            }
            "response.output_item.added" => {
                if let Some(item) = data.get("item") {
                    self.create_slot(output_index(data), item, asm);
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(slot) = self.slot_mut(data, SlotKind::Message) {
                    slot.streamed = true;
                    asm.text_delta(&slot.key, str_field(data, "delta"));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let part = (kind.contains("summary"), index_field(data, "summary_index", "content_index"));
                if let Some(slot) = self.slot_mut(data, SlotKind::Reasoning) {
                    if slot.streamed && slot.part.is_some_and(|p| p != part) {
                        asm.thinking_delta(&slot.key, "\n\n");
                    }
                    slot.part = Some(part);
                    slot.streamed = true;
                    asm.thinking_delta(&slot.key, str_field(data, "delta"));
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(slot) = self.slot_mut(data, SlotKind::FunctionCall) {
                    asm.tool_args_delta(&slot.key, str_field(data, "delta"));
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(slot) = self.slot_mut(data, SlotKind::FunctionCall)
                    && let Some(full) = data.get("arguments").and_then(Value::as_str)
                {
                    asm.tool_args_complete(&slot.key, full);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = data.get("item") {
                    self.item_done(output_index(data), item, asm);
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(response) = data.get("response") {
                    self.terminal(response, asm);
                }
            }
            "response.failed" => {
                let response = data.get("response");
                let raw = response.and_then(|r| r.get("status")).and_then(Value::as_str).map(str::to_string);
                asm.fail(failure_message(response), raw);
            }
            "error" => {
                let field = |key: &str| data.get(key).or_else(|| data.get("error").and_then(|e| e.get(key)));
                let code = field("code").and_then(scalar_text).unwrap_or_else(|| "unknown".into());
                let message = field("message").and_then(scalar_text).unwrap_or_else(|| "Unknown error".into());
                asm.fail(format!("Error Code {code}: {message}"), None);
            }
            _ => {}
        }
    }

    fn on_end(&mut self, asm: &mut Assembler) {
        if asm.finished() {
            return;
        }
        let Some(terminal) = &self.terminal else {
            asm.fail("OpenAI Responses stream ended before a terminal response event", None);
            return;
        };
        let raw = match (&terminal.status, &terminal.reason) {
            (Some(status), Some(reason)) => Some(format!("{status}.{reason}")),
            (status, _) => status.clone(),
        };
        match map_status(terminal) {
            Ok(StopReason::Stop) if asm.has_tool_calls() => {
                // The agent runs every call of the final message: refuse calls that never completed.
                if let Some((id, name)) = self.unfinished.first() {
                    let message = format!("OpenAI Responses stream completed with an unfinished tool call: {name} ({id})");
                    asm.fail(message, raw);
                } else {
                    asm.finish(StopReason::ToolUse, raw);
                }
            }
            Ok(reason) => asm.finish(reason, raw),
            Err(message) => asm.fail(message, raw),
        }
    }
}

impl ResponsesMapper {
    fn find(&self, output_index: Option<u64>, item_id: Option<&str>) -> Option<usize> {
        match output_index {
            Some(index) => self.slots.iter().position(|s| s.output_index == Some(index)),
            None => item_id.and_then(|id| self.slots.iter().position(|s| s.item_id.as_deref() == Some(id))),
        }
    }

    fn slot_mut(&mut self, data: &Value, kind: SlotKind) -> Option<&mut Slot> {
        let index = self.find(output_index(data), data.get("item_id").and_then(Value::as_str))?;
        self.slots.get_mut(index).filter(|s| s.kind == kind)
    }

    /// `output_item.added` (or a `.done` without one): a reasoning item opens a thinking block,
    /// a function call a tool block, a message waits for its first text.
    fn create_slot(&mut self, output_index: Option<u64>, item: &Value, asm: &mut Assembler) -> Option<usize> {
        let kind = match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => SlotKind::Reasoning,
            Some("message") => SlotKind::Message,
            Some("function_call") => SlotKind::FunctionCall,
            _ => return None,
        };
        let key = format!("item{}", self.next_key);
        self.next_key += 1;
        let item_id = item.get("id").and_then(Value::as_str).map(str::to_string);
        let mut call = None;
        match kind {
            SlotKind::Reasoning => asm.open_block(&key, BlockKind::Thinking),
            SlotKind::Message => {}
            SlotKind::FunctionCall => {
                let id = format!("{}|{}", str_field(item, "call_id"), str_field(item, "id"));
                let name = str_field(item, "name").to_string();
                asm.tool_start(&key, &id, &name);
                if let Some(args) = item.get("arguments").and_then(Value::as_str).filter(|a| !a.is_empty()) {
                    asm.tool_args_delta(&key, args);
                }
                self.unfinished.push((id.clone(), name.clone()));
                call = Some((id, name));
            }
        }
        // A repeated output_index replaces the older slot.
        if let Some(old) = output_index.and_then(|i| self.slots.iter().position(|s| s.output_index == Some(i))) {
            self.slots.remove(old);
        }
        self.slots.push(Slot { output_index, item_id, kind, key, streamed: false, part: None, call });
        Some(self.slots.len() - 1)
    }

    /// `output_item.done`: completes the block from the final item and closes it.
    fn item_done(&mut self, output_index: Option<u64>, item: &Value, asm: &mut Assembler) {
        let found = self.find(output_index, item.get("id").and_then(Value::as_str));
        let Some(index) = found.or_else(|| self.create_slot(output_index, item, asm)) else { return };
        let Some(slot) = self.slots.get(index) else { return };
        let item_type = item.get("type").and_then(Value::as_str);
        match (slot.kind, item_type) {
            (SlotKind::Reasoning, Some("reasoning")) => {
                if !slot.streamed {
                    let text = joined_texts(item.get("summary"), "\n\n");
                    let text = if text.is_empty() { joined_texts(item.get("content"), "\n\n") } else { text };
                    asm.thinking_delta(&slot.key, &text);
                }
                let signature = serde_json::to_string(item).unwrap_or_default();
                asm.set_field(&slot.key, "thinkingSignature", Value::String(signature));
                asm.close(&slot.key);
            }
            (SlotKind::Message, Some("message")) => {
                let text = if slot.streamed { String::new() } else { message_text(item) };
                if slot.streamed || !text.is_empty() {
                    asm.text_delta(&slot.key, &text);
                    let mut signature = Map::new();
                    signature.insert("v".into(), json!(1));
                    if let Some(id) = item.get("id").filter(|id| id.is_string()) {
                        signature.insert("id".into(), id.clone());
                    }
                    if let Some(phase) = item.get("phase").filter(|p| p.as_str().is_some_and(|p| !p.is_empty())) {
                        signature.insert("phase".into(), phase.clone());
                    }
                    let signature = Value::Object(signature).to_string();
                    asm.set_field(&slot.key, "textSignature", Value::String(signature));
                    asm.close(&slot.key);
                }
            }
            (SlotKind::FunctionCall, Some("function_call")) => {
                if let Some(args) = item.get("arguments").and_then(Value::as_str).filter(|a| !a.is_empty()) {
                    asm.tool_args_complete(&slot.key, args);
                }
                asm.close(&slot.key);
                if let Some(call) = &slot.call {
                    self.unfinished.retain(|c| c != call);
                }
            }
            _ => return,
        }
        self.slots.remove(index);
    }

    /// `response.completed` / `response.incomplete`: ids, usage and status (last one wins).
    fn terminal(&mut self, response: &Value, asm: &mut Assembler) {
        if let Some(id) = response.get("id").filter(|id| id.is_string()) {
            asm.meta("responseId", id.clone());
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            asm.usage(&responses_usage(usage));
        }
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        self.terminal = Some(Terminal {
            status: text(response.get("status")),
            reason: text(response.get("incomplete_details").and_then(|d| d.get("reason"))),
            error: response.get("error").filter(|e| e.is_object()).map(|_| failure_message(Some(response))),
        });
    }
}

fn output_index(data: &Value) -> Option<u64> {
    data.get("output_index").and_then(Value::as_u64)
}

fn index_field(data: &Value, first: &str, second: &str) -> u64 {
    data.get(first).or_else(|| data.get(second)).and_then(Value::as_u64).unwrap_or(0)
}

/// The `text` fields of a list of parts, joined.
fn joined_texts(parts: Option<&Value>, separator: &str) -> String {
    let parts = parts.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join(separator)
}

/// A message item's text: its `output_text` texts and `refusal`s.
fn message_text(item: &Value) -> String {
    let parts = item.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    parts
        .iter()
        .filter_map(|p| match p.get("type").and_then(Value::as_str) {
            Some("output_text") => p.get("text").and_then(Value::as_str),
            _ => p.get("refusal").and_then(Value::as_str),
        })
        .collect()
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The error text of a failed response (§6.7).
fn failure_message(response: Option<&Value>) -> String {
    let error = response.and_then(|r| r.get("error")).filter(|e| e.is_object());
    if let Some(error) = error {
        let code = error.get("code").and_then(scalar_text).filter(|c| !c.is_empty());
        let message = error.get("message").and_then(scalar_text).filter(|m| !m.is_empty());
        return format!("{}: {}", code.as_deref().unwrap_or("unknown"), message.as_deref().unwrap_or("no message"));
    }
    let reason = response.and_then(|r| r.get("incomplete_details")).and_then(|d| d.get("reason"));
    match reason.and_then(Value::as_str).filter(|r| !r.is_empty()) {
        Some(reason) => format!("incomplete: {reason}"),
        None => "Unknown error (no error details in response)".into(),
    }
}

/// §6.10 for Responses; `Ok(Stop)` becomes `toolUse` when the message has tool calls.
fn map_status(terminal: &Terminal) -> Result<StopReason, String> {
    match terminal.status.as_deref() {
        None | Some("completed" | "in_progress" | "queued") => Ok(StopReason::Stop),
        Some("incomplete") => match terminal.reason.as_deref() {
            Some("max_output_tokens") => Ok(StopReason::Length),
            Some(reason) => Err(format!("Response incomplete: {reason}")),
            None => Err("Response incomplete without a provider reason".into()),
        },
        Some("failed") => {
            Err(terminal.error.clone().unwrap_or_else(|| "Unknown error (no error details in response)".into()))
        }
        Some("cancelled") => Err("Response cancelled".into()),
        Some(other) => Err(format!("Unhandled stop reason: {other}")),
    }
}

/// §6.10: cached tokens are part of `input_tokens`.
fn responses_usage(usage: &Value) -> Usage {
    let number = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(0.0);
    let details = |key: &str, field: &str| number(usage.get(key).and_then(|d| d.get(field)));
    let cache_read = details("input_tokens_details", "cached_tokens");
    let cache_write = details("input_tokens_details", "cache_write_tokens");
    Usage {
        input: number(usage.get("input_tokens")) - cache_read - cache_write,
        output: number(usage.get("output_tokens")),
        cache_read,
        cache_write,
        cache_write_1h: None,
        reasoning: Some(details("output_tokens_details", "reasoning_tokens")),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared rules (P-6.1.6, P-6.2.7, P-6.2.8, P-6.5). TEMPORARY stand-ins until `transcript.rs` and
// `request.rs` land; every shared call of this file and of `google.rs` goes through this module,
// which will then only forward to them.
// ---------------------------------------------------------------------------------------------

pub(super) mod shared {
    use serde_json::{Map, Value};

    /// The cleaned request transcript (P-6.5).
    pub struct Transcript {
        /// The system prompt text of the replayed head (content, then non-null sections).
        pub system: String,
        /// The current tools (declarations).
        pub tools: Vec<Value>,
        /// The non-system messages, cleaned.
        pub messages: Vec<Value>,
    }

    /// A token count as JSON: an integer when it is one (`16`, not `16.0`).
    pub fn number(n: f64) -> Value {
        if n.fract() == 0.0 && n.abs() < 9.0e15 { Value::from(n as i64) } else { Value::from(n) }
    }

    /// P-6.1.6: `model.baseUrl` without trailing `/`, else the default.
    pub fn base_url(model: &Value, default: &str) -> String {
        let base = model.get("baseUrl").and_then(Value::as_str).unwrap_or_default().trim_end_matches('/');
        if base.is_empty() { default.to_string() } else { base.to_string() }
    }

    /// Whether an assistant message came from this very model.
    pub fn same_model(model: &Value, message: &Value) -> bool {
        ["provider", "api"].iter().all(|k| message.get(*k).is_some() && message.get(*k) == model.get(*k))
            && message.get("model").is_some()
            && message.get("model") == model.get("id")
    }

    pub fn transcript(_model: &Value, messages: &[Value]) -> Transcript {
        let text_of = |content: Option<&Value>| match content {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let mut system = String::new();
        if let Some(head) = messages.first().filter(|m| m.get("role").and_then(Value::as_str) == Some("system")) {
            let mut parts = vec![text_of(head.get("content"))];
            if let Some(sections) = head.get("sections").and_then(Value::as_object) {
                parts.extend(sections.values().filter_map(Value::as_str).map(str::to_string));
            }
            system = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n\n");
        }
        let mut tools: Vec<Value> = Vec::new();
        for message in messages.iter().filter(|m| m.get("role").and_then(Value::as_str) == Some("system")) {
            for removed in message.get("toolsRemoved").and_then(Value::as_array).into_iter().flatten() {
                tools.retain(|t| t.get("name") != removed.get("name"));
            }
            for added in message.get("toolsAdded").and_then(Value::as_array).into_iter().flatten() {
                tools.retain(|t| t.get("name") != added.get("name"));
                tools.push(added.clone());
            }
        }
        let messages = messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) != Some("system"))
            .filter(|m| !matches!(m.get("stopReason").and_then(Value::as_str), Some("error" | "aborted")))
            .cloned()
            .collect();
        Transcript { system, tools, messages }
    }

    /// The thinking level of the request (`None` = off).
    pub fn thinking_level(model: &Value, options: &Value) -> Option<String> {
        let level = options.get("reasoning").and_then(Value::as_str).filter(|l| *l != "off")?;
        (model.get("reasoning").and_then(Value::as_bool) == Some(true)).then(|| level.to_string())
    }

    /// P-6.2.7 `maxTokens` (`None` = omit the field).
    pub fn max_tokens(model: &Value, options: &Value, _messages: &[Value]) -> Option<f64> {
        let given = options.get("maxTokens").and_then(Value::as_f64);
        given.or_else(|| model.get("maxTokens").and_then(Value::as_f64)).filter(|n| *n > 0.0)
    }

    /// P-6.2.7 budget-based thinking: `(maxTokens, budget)`.
    pub fn thinking_budget(model: &Value, options: &Value, level: &str, messages: &[Value]) -> (Option<f64>, f64) {
        let level = if matches!(level, "xhigh" | "max") { "high" } else { level };
        let budget = options
            .get("thinkingBudgets")
            .and_then(|b| b.get(level))
            .and_then(Value::as_f64)
            .unwrap_or(match level {
                "minimal" => 1024.0,
                "low" => 2048.0,
                "medium" => 8192.0,
                _ => 16384.0,
            });
        let model_max = model.get("maxTokens").and_then(Value::as_f64).unwrap_or(0.0);
        let max = match options.get("maxTokens").and_then(Value::as_f64) {
            Some(given) => Some((given + budget).min(model_max)),
            None => max_tokens(model, options, messages),
        };
        match max {
            Some(max) if max <= budget => (Some(max), (max - 1024.0).max(0.0)),
            other => (other, budget),
        }
    }

    /// P-6.2.8: model, per-level, then option sampling parameters, merged last.
    pub fn merge_sampling(target: &mut Map<String, Value>, model: &Value, options: &Value, level: Option<&str>) {
        let by_level = model.get("samplingParamsByThinkingLevel").and_then(|m| m.get(level.unwrap_or("off")));
        for source in [model.get("samplingParams"), by_level, options.get("samplingParams")].into_iter().flatten() {
            if let Some(object) = source.as_object() {
                for (k, v) in object {
                    target.insert(k.clone(), v.clone());
                }
            }
        }
    }
}
