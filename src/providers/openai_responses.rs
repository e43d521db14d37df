//! `openai-responses` (§6.7): builds the `POST <base>/responses` request from the transcript and
//! maps the Responses stream (`event:` + `data:` with the same `type`) onto the `Assembler`.
//! Owns only this wire format; the transcript clean-up, token limits and sampling merge are the
//! shared rules of `transcript.rs` and `request.rs`.

use super::assemble::{Assembler, BlockKind, StopReason, Usage};
use super::json::Json;
use super::repair::parse_json;
use super::request::{self, OPENAI_BASE_URL, object, put};
use super::strict;
use super::transcript::{self, Transcript, is_same_model};
use super::{HttpRequest, RequestInput, StreamMapper, WireFormat};
use crate::core::text::json::js_json_stringify_verbatim;
use serde_json::{Map, Value, json};

pub struct OpenAiResponses;

/// The API rejects `max_output_tokens` below 16.
const MIN_OUTPUT_TOKENS: u64 = 16;
/// Item ids and `prompt_cache_key` longer than this are rejected.
const MAX_ID_CHARS: usize = 64;

impl WireFormat for OpenAiResponses {
    fn build_request(&self, input: &RequestInput<'_>) -> Result<HttpRequest, String> {
        let model = input.model;
        let url = format!("{}/responses", request::base_url(model, OPENAI_BASE_URL));
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        // P-6.2.3: without a key a known cloud service fails here; any other server gets no Authorization.
        if let Some(missing) = request::missing_openai_key(input, &url) {
            return Err(missing);
        }
        if let Some(key) = request::api_key(input) {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        Ok(HttpRequest { url, headers, body: request_body(input) })
    }

    fn stream_mapper(&self, _input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        Box::new(ResponsesMapper::default())
    }
}

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

fn request_body(input: &RequestInput<'_>) -> Value {
    let (model, options) = (input.model, input.options);
    let transcript = transcript::prepare(input, None);
    let level = request::thinking_level(options).filter(|_| request::model_reasons(model));
    let mut body = Map::new();
    put(&mut body, "model", model.get("id").cloned().unwrap_or_else(|| Value::from("")));
    put(&mut body, "input", Value::Array(input_items(model, &transcript)));
    put(&mut body, "stream", Value::Bool(true));
    if let Some(key) = prompt_cache_key(options) {
        put(&mut body, "prompt_cache_key", Value::from(key));
    }
    put(&mut body, "store", Value::from(false));
    if let Some(max) = request::max_tokens(input) {
        put(&mut body, "max_output_tokens", Value::from(max.max(MIN_OUTPUT_TOKENS)));
    }
    if let Some(t) = options.get("temperature").filter(|t| !t.is_null()) {
        put(&mut body, "temperature", t.clone());
    }
    if !transcript.tools.is_empty() {
        let tools = transcript.tools.iter().map(function_tool).collect();
        put(&mut body, "tools", Value::Array(tools));
    }
    if let Some(choice) = options.get("toolChoice").filter(|c| !c.is_null()) {
        put(&mut body, "tool_choice", choice.clone());
    }
    match level {
        // A level mapped to `null` is not supported by the model: no reasoning fields.
        Some(level) => {
            if let Some(effort) = request::mapped_effort(model, level) {
                put(
                    &mut body,
                    "reasoning",
                    object([("effort", Value::from(effort)), ("summary", Value::from("auto"))]),
                );
                put(&mut body, "include", Value::Array(vec![Value::from("reasoning.encrypted_content")]));
            }
        }
        // §6.7: level off sends an effort only when the model maps "off" to a string.
        None if request::model_reasons(model) => {
            if let Some(off) = model.get("thinkingLevelMap").and_then(|m| m.get("off")).and_then(Value::as_str) {
                put(&mut body, "reasoning", object([("effort", Value::from(off))]));
            }
        }
        None => {}
    }
    request::merge_sampling(&mut body, input, level);
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
    object([
        ("type", Value::from("function")),
        ("name", tool.get("name").cloned().unwrap_or_else(|| Value::from(""))),
        ("description", tool.get("description").cloned().unwrap_or_else(|| Value::from(""))),
        ("parameters", tool.get("parameters").cloned().unwrap_or_else(|| json!({}))),
        ("strict", Value::Bool(false)),
    ])
}

/// The `input` items: the system head, then one or more items per transcript message.
fn input_items(model: &Value, transcript: &Transcript) -> Vec<Value> {
    let mut items = Vec::new();
    if !transcript.system_prompt.is_empty() {
        let developer =
            request::model_reasons(model) && request::compat_bool(model, "supportsDeveloperRole") != Some(false);
        let role = if developer { "developer" } else { "system" };
        items.push(object([("role", Value::from(role)), ("content", Value::from(transcript.system_prompt.as_str()))]));
    }
    for (n, message) in transcript.messages.iter().enumerate() {
        match message.get("role").and_then(Json::as_str) {
            Some("user") => {
                let content = user_content(message.get("content"));
                if !content.is_empty() {
                    items.push(object([("role", Value::from("user")), ("content", Value::Array(content))]));
                }
            }
            Some("assistant") => assistant_items(model, message, n, &mut items),
            Some("toolResult") => {
                let id = message.str("toolCallId");
                let call_id = id.split('|').next().unwrap_or_default();
                let output = tool_output(model, message.get("content"));
                items.push(object([
                    ("type", Value::from("function_call_output")),
                    ("call_id", Value::from(call_id)),
                    ("output", output),
                ]));
            }
            _ => {}
        }
    }
    items
}

fn user_content(content: Option<&Json<'_>>) -> Vec<Value> {
    match content {
        Some(Json::String(text)) => vec![input_text(text)],
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Json::as_str) {
                Some("text") => Some(input_text(part.str("text"))),
                Some("image") => Some(input_image(part)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn input_image(part: &Json<'_>) -> Value {
    let url = format!("data:{};base64,{}", part.str("mimeType"), part.str("data"));
    object([("type", Value::from("input_image")), ("detail", Value::from("auto")), ("image_url", Value::from(url))])
}

fn input_text(text: &str) -> Value {
    object([("type", Value::from("input_text")), ("text", Value::from(text))])
}

/// Tool-result text (joined by "\n"); with images on an image model, an `input_text` +
/// `input_image` list as the reference sends.
fn tool_output(model: &Value, content: Option<&Json<'_>>) -> Value {
    let parts = content.and_then(Json::as_array).unwrap_or_default();
    let text = parts.iter().filter(|p| p.kind() == "text").map(|p| p.str("text")).collect::<Vec<_>>().join("\n");
    let images: Vec<&Json> = parts.iter().filter(|p| p.kind() == "image").collect();
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
        list.push(input_text(&text));
    }
    list.extend(images.into_iter().map(input_image));
    Value::Array(list)
}

fn assistant_items(model: &Value, message: &Json<'_>, n: usize, items: &mut Vec<Value>) {
    let same_model = is_same_model(message, model);
    let blocks = message.get("content").and_then(Json::as_array).unwrap_or_default();
    let mut text_blocks = 0usize;
    for block in blocks {
        match block.get("type").and_then(Json::as_str) {
            Some("thinking") if same_model => {
                // The signature is the whole reasoning item the stream delivered (encrypted content).
                let item = block
                    .get("thinkingSignature")
                    .and_then(Json::as_str)
                    .and_then(|s| parse_json(s).ok().filter(Value::is_object));
                items.extend(item);
            }
            Some("text") => {
                let signature = block.get("textSignature").and_then(Json::as_str).and_then(parse_text_signature);
                let fallback = if text_blocks == 0 { format!("msg_{n}") } else { format!("msg_{n}_{text_blocks}") };
                text_blocks += 1;
                let (id, phase) = match signature {
                    Some((id, phase)) => (shorten_id(id), phase),
                    None => (fallback, None),
                };
                let text = object([
                    ("type", Value::from("output_text")),
                    ("text", Value::from(block.str("text"))),
                    ("annotations", Value::Array(Vec::new())),
                ]);
                let mut item = Map::new();
                put(&mut item, "type", Value::from("message"));
                put(&mut item, "role", Value::from("assistant"));
                put(&mut item, "content", Value::Array(vec![text]));
                put(&mut item, "status", Value::from("completed"));
                put(&mut item, "id", Value::from(id));
                if let Some(phase) = phase {
                    put(&mut item, "phase", Value::from(phase));
                }
                items.push(Value::Object(item));
            }
            Some("toolCall") => {
                let full_id = block.str("id");
                let mut ids = full_id.split('|');
                let call_id = ids.next().unwrap_or_default();
                let item_id = ids.next().filter(|id| same_model && id.starts_with("fc_"));
                let arguments = match block.get("arguments") {
                    Some(args) if !args.is_null() => js_json_stringify_verbatim(&args.to_value()),
                    _ => "{}".into(),
                };
                let mut item = Map::new();
                put(&mut item, "type", Value::from("function_call"));
                if let Some(item_id) = item_id {
                    put(&mut item, "id", Value::from(item_id));
                }
                put(&mut item, "call_id", Value::from(call_id));
                put(&mut item, "name", Value::from(block.str("name")));
                put(&mut item, "arguments", Value::from(arguments));
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
        && let Ok(parsed) = parse_json(signature)
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

/// The wire format's name in stream errors.
const FORMAT: &str = "openai-responses";

/// The fields of a `function_call` item that make a tool call.
struct CallFields<'j> {
    call_id: &'j str,
    name: &'j str,
    id: &'j str,
    arguments: Option<&'j str>,
}

/// Issue 13: `call_id` and `name` must be non-empty strings, `id` and `arguments` strings if sent.
fn call_fields<'j>(item: &'j Json<'_>, output_index: Option<u64>) -> Result<CallFields<'j>, String> {
    let label = match output_index {
        Some(index) => format!("function_call item (output_index {index})"),
        None => "function_call item".to_string(),
    };
    Ok(CallFields {
        call_id: strict::required_str(FORMAT, &label, item, "call_id")?,
        name: strict::required_str(FORMAT, &label, item, "name")?,
        id: strict::optional_str(FORMAT, &label, item, "id")?.unwrap_or_default(),
        arguments: strict::optional_str(FORMAT, &label, item, "arguments")?,
    })
}

impl StreamMapper for ResponsesMapper {
    fn on_event(&mut self, event: Option<&str>, data: &Json<'_>, asm: &mut Assembler) {
        let kind = data.get("type").and_then(Json::as_str).or(event).unwrap_or_default();
        if let Err(message) = self.event(kind, data, asm) {
            asm.fail(message, None);
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
                    let message =
                        format!("OpenAI Responses stream completed with an unfinished tool call: {name} ({id})");
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
    /// One parsed event; `Err` is a malformed item (issue 13), the stream's error.
    fn event(&mut self, kind: &str, data: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        match kind {
            "response.created" => {
                if let Some(id) = data.get("response").and_then(|r| r.get("id")).filter(|id| id.is_string()) {
                    asm.meta("responseId", id.to_value());
                }
            }
            "response.output_item.added" => {
                if let Some(item) = data.get("item") {
                    self.create_slot(output_index(kind, data)?, item, asm)?;
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let delta = strict::required_string(FORMAT, kind, data, "delta")?;
                if let Some(slot) = self.slot_mut(kind, data, SlotKind::Message)? {
                    slot.streamed = true;
                    asm.text_delta(&slot.key, delta);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = strict::required_string(FORMAT, kind, data, "delta")?;
                if let Some(slot) = self.slot_mut(kind, data, SlotKind::Reasoning)? {
                    slot.streamed = true;
                    asm.thinking_delta(&slot.key, delta);
                }
            }
            // Issue 33: a summary part that ends adds a blank line, as a delta (the reference's events); the block's
            // final text is the item's, without the last one.
            "response.reasoning_summary_part.done" => {
                if let Some(slot) = self.slot_mut(kind, data, SlotKind::Reasoning)? {
                    slot.streamed = true;
                    asm.thinking_delta(&slot.key, "\n\n");
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = strict::required_string(FORMAT, kind, data, "delta")?;
                if let Some(slot) = self.slot_mut(kind, data, SlotKind::FunctionCall)? {
                    asm.tool_args_delta(&slot.key, delta);
                }
            }
            "response.function_call_arguments.done" => {
                let full = strict::required_string(FORMAT, kind, data, "arguments")?;
                if let Some(slot) = self.slot_mut(kind, data, SlotKind::FunctionCall)? {
                    asm.tool_args_complete(&slot.key, full);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = data.get("item") {
                    self.item_done(output_index(kind, data)?, item, asm)?;
                }
            }
            "response.completed" | "response.incomplete" => {
                if let Some(response) = data.get("response") {
                    self.terminal(response, asm);
                }
            }
            "response.failed" => {
                let response = data.get("response");
                let raw = response.and_then(|r| r.get("status")).and_then(Json::as_str).map(str::to_string);
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
        Ok(())
    }

    fn find(&self, output_index: Option<u64>, item_id: Option<&str>) -> Option<usize> {
        match output_index {
            Some(index) => self.slots.iter().position(|s| s.output_index == Some(index)),
            None => item_id.and_then(|id| self.slots.iter().position(|s| s.item_id.as_deref() == Some(id))),
        }
    }

    fn slot_mut(&mut self, kind: &str, data: &Json<'_>, slot_kind: SlotKind) -> Result<Option<&mut Slot>, String> {
        let index = output_index(kind, data)?;
        let item_id = strict::optional_str(FORMAT, kind, data, "item_id")?;
        let Some(found) = self.find(index, item_id) else { return Ok(None) };
        Ok(self.slots.get_mut(found).filter(|s| s.kind == slot_kind))
    }

    /// `output_item.added` (or a `.done` without one): a reasoning item opens a thinking block,
    /// a function call a tool block, a message waits for its first text.
    fn create_slot(
        &mut self,
        output_index: Option<u64>,
        item: &Json<'_>,
        asm: &mut Assembler,
    ) -> Result<Option<usize>, String> {
        let kind = match item.get("type").and_then(Json::as_str) {
            Some("reasoning") => SlotKind::Reasoning,
            Some("message") => SlotKind::Message,
            Some("function_call") => SlotKind::FunctionCall,
            _ => return Ok(None),
        };
        let item_id = strict::optional_str(FORMAT, "output item", item, "id")?.map(str::to_string);
        let key = format!("item{}", self.next_key);
        self.next_key += 1;
        let mut call = None;
        match kind {
            SlotKind::Reasoning => asm.open_block(&key, BlockKind::Thinking),
            SlotKind::Message => {}
            SlotKind::FunctionCall => {
                let fields = call_fields(item, output_index)?;
                let id = format!("{}|{}", fields.call_id, fields.id);
                asm.tool_start(&key, &id, fields.name);
                if let Some(args) = fields.arguments.filter(|a| !a.is_empty()) {
                    asm.tool_args_delta(&key, args);
                }
                self.unfinished.push((id.clone(), fields.name.to_string()));
                call = Some((id, fields.name.to_string()));
            }
        }
        // A repeated output_index replaces the older slot.
        if let Some(old) = output_index.and_then(|i| self.slots.iter().position(|s| s.output_index == Some(i))) {
            self.slots.remove(old);
        }
        self.slots.push(Slot { output_index, item_id, kind, key, streamed: false, call });
        Ok(Some(self.slots.len() - 1))
    }

    /// `output_item.done`: completes the block from the final item and closes it.
    fn item_done(&mut self, output_index: Option<u64>, item: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        let item_id = strict::optional_str(FORMAT, "output item", item, "id")?;
        let found = match self.find(output_index, item_id) {
            Some(found) => Some(found),
            None => self.create_slot(output_index, item, asm)?,
        };
        let Some(index) = found else { return Ok(()) };
        let Some(slot) = self.slots.get(index) else { return Ok(()) };
        let item_type = item.get("type").and_then(Json::as_str);
        match (slot.kind, item_type) {
            (SlotKind::Reasoning, Some("reasoning")) => {
                let text = joined_texts(item.get("summary"), "\n\n");
                let text = if text.is_empty() { joined_texts(item.get("content"), "\n\n") } else { text };
                if !slot.streamed {
                    asm.thinking_delta(&slot.key, &text);
                } else if !text.is_empty() {
                    // The item's text is the block's final text (the reference's rule).
                    asm.set_field(&slot.key, "thinking", Value::String(text));
                }
                let signature = item.to_string();
                asm.set_field(&slot.key, "thinkingSignature", Value::String(signature));
                asm.close(&slot.key);
            }
            (SlotKind::Message, Some("message")) => {
                let text = if slot.streamed { String::new() } else { message_text(item) };
                if slot.streamed || !text.is_empty() {
                    asm.text_delta(&slot.key, &text);
                    if slot.streamed {
                        // The item's text is the block's final text (the reference's rule).
                        asm.set_field(&slot.key, "text", Value::String(message_text(item)));
                    }
                    let mut signature = Map::new();
                    put(&mut signature, "v", Value::from(1));
                    if let Some(id) = item.get("id").filter(|id| id.is_string()) {
                        put(&mut signature, "id", id.to_value());
                    }
                    if let Some(phase) = item.get("phase").filter(|p| p.as_str().is_some_and(|p| !p.is_empty())) {
                        put(&mut signature, "phase", phase.to_value());
                    }
                    let signature = Value::Object(signature).to_string();
                    asm.set_field(&slot.key, "textSignature", Value::String(signature));
                    asm.close(&slot.key);
                }
            }
            (SlotKind::FunctionCall, Some("function_call")) => {
                let fields = call_fields(item, output_index)?;
                if let Some(args) = fields.arguments.filter(|a| !a.is_empty()) {
                    asm.tool_args_complete(&slot.key, args);
                }
                asm.close(&slot.key);
                if let Some(call) = &slot.call {
                    self.unfinished.retain(|c| c != call);
                }
            }
            _ => return Ok(()),
        }
        self.slots.remove(index);
        Ok(())
    }

    /// `response.completed` / `response.incomplete`: ids, usage and status (last one wins).
    fn terminal(&mut self, response: &Json<'_>, asm: &mut Assembler) {
        if let Some(id) = response.get("id").filter(|id| id.is_string()) {
            asm.meta("responseId", id.to_value());
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            asm.usage(&responses_usage(usage));
        }
        let text = |v: Option<&Json<'_>>| v.and_then(Json::as_str).map(str::to_string);
        self.terminal = Some(Terminal {
            status: text(response.get("status")),
            reason: text(response.get("incomplete_details").and_then(|d| d.get("reason"))),
            error: response.get("error").filter(|e| e.is_object()).map(|_| failure_message(Some(response))),
        });
    }
}

/// An event's `output_index`: missing (the item id then finds the slot) or an integer ≥ 0.
fn output_index(kind: &str, data: &Json<'_>) -> Result<Option<u64>, String> {
    strict::optional_index(FORMAT, kind, data, "output_index")
}

/// The `text` fields of a list of parts, joined.
fn joined_texts(parts: Option<&Json<'_>>, separator: &str) -> String {
    let parts = parts.and_then(Json::as_array).unwrap_or_default();
    parts.iter().filter_map(|p| p.get("text").and_then(Json::as_str)).collect::<Vec<_>>().join(separator)
}

/// A message item's text: its `output_text` texts and `refusal`s.
fn message_text(item: &Json<'_>) -> String {
    let parts = item.get("content").and_then(Json::as_array).unwrap_or_default();
    parts
        .iter()
        .filter_map(|p| match p.get("type").and_then(Json::as_str) {
            Some("output_text") => p.get("text").and_then(Json::as_str),
            _ => p.get("refusal").and_then(Json::as_str),
        })
        .collect()
}

fn scalar_text(value: &Json<'_>) -> Option<String> {
    match value {
        Json::String(s) => Some(s.to_string()),
        Json::Number(_) => Some(value.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The error text of a failed response (§6.7).
fn failure_message(response: Option<&Json<'_>>) -> String {
    let error = response.and_then(|r| r.get("error")).filter(|e| e.is_object());
    if let Some(error) = error {
        let code = error.get("code").and_then(scalar_text).filter(|c| !c.is_empty());
        let message = error.get("message").and_then(scalar_text).filter(|m| !m.is_empty());
        return format!("{}: {}", code.as_deref().unwrap_or("unknown"), message.as_deref().unwrap_or("no message"));
    }
    let reason = response.and_then(|r| r.get("incomplete_details")).and_then(|d| d.get("reason"));
    match reason.and_then(Json::as_str).filter(|r| !r.is_empty()) {
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
fn responses_usage(usage: &Json<'_>) -> Usage {
    let number = |v: Option<&Json<'_>>| v.and_then(Json::as_f64).unwrap_or(0.0);
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
        ..Usage::default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::super::assemble::apply_native;
    use super::super::request::test_driver;
    use super::*;
    use proptest::prelude::*;

    fn model() -> Value {
        json!({
            "id": "gpt-5", "name": "GPT-5", "api": "openai-responses", "provider": "openai",
            "baseUrl": "https://api.openai.com/v1", "input": ["text", "image"], "reasoning": true,
            "cost": {"input": 2.0, "output": 8.0, "cacheRead": 0.5, "cacheWrite": 0.0},
            "contextWindow": 0, "maxTokens": 8,
        })
    }

    fn run(sse: &str) -> (Value, Vec<String>) {
        test_driver::run(&OpenAiResponses, &model(), &json!({}), sse)
    }

    /// The wire framing: `event: <type>` + `data:` carrying the same `type` and a sequence number.
    fn sse(events: &[Value]) -> String {
        let events: Vec<(Option<&str>, Value)> = events
            .iter()
            .enumerate()
            .map(|(n, data)| {
                let mut data = data.clone();
                data["sequence_number"] = json!(n);
                let kind = events.get(n).and_then(|e| e["type"].as_str());
                (kind, data)
            })
            .collect();
        test_driver::sse(&events)
    }

    /// Event names after the binding's `start`.
    fn names(list: &str) -> Vec<String> {
        std::iter::once("start").chain(list.split_whitespace()).map(str::to_string).collect()
    }

    fn created() -> Value {
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}})
    }

    fn completed(status: &str, extra: Value) -> Value {
        let mut response = json!({
            "id": "resp_1", "status": status,
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40},
                      "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 5}, "total_tokens": 120},
        });
        for (k, v) in extra.as_object().unwrap() {
            response[k] = v.clone();
        }
        let kind = if status == "incomplete" { "response.incomplete" } else { "response.completed" };
        json!({"type": kind, "response": response})
    }

    /// 60 input, 20 output, 40 cached at 2/8/0.5 per million.
    fn usage() -> Value {
        let c = [(2.0 / 1e6) * 60.0, (8.0 / 1e6) * 20.0, (0.5 / 1e6) * 40.0];
        json!({"input": 60.0, "output": 20.0, "cacheRead": 40.0, "cacheWrite": 0.0, "reasoning": 5.0, "totalTokens": 120.0,
               "cost": {"input": c[0], "output": c[1], "cacheRead": c[2], "cacheWrite": 0.0,
                        "total": c[0] + c[1] + c[2] + 0.0, "totalFromProvider": false}})
    }

    fn expected(content: Value, tail: Value) -> Value {
        let mut message = test_driver::initial_message(&model());
        message["content"] = content;
        for (k, v) in tail.as_object().unwrap() {
            message[k] = v.clone();
        }
        message
    }

    // ---- stream fixtures ----

    #[test]
    fn p_6_7_text_stream_with_text_signature() {
        let body = sse(&[
            created(),
            json!({"type": "response.in_progress", "response": {"id": "resp_1"}}),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}}),
            json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0,
                   "part": {"type": "output_text", "text": "", "annotations": []}}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Hel"}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "lo wörld"}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": " 👋"}),
            json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Hello wörld 👋"}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "phase": "final_answer",
                            "content": [{"type": "output_text", "text": "Hello wörld 👋", "annotations": []}]}}),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("text_start text_delta text_delta text_delta text_end done"));
        let want = expected(
            json!([{"type": "text", "text": "Hello wörld 👋",
                    "textSignature": "{\"v\":1,\"id\":\"msg_1\",\"phase\":\"final_answer\"}"}]),
            json!({"responseId": "resp_1", "usage": usage(), "stopReason": "stop", "rawStopReason": "completed"}),
        );
        assert_eq!(message, want);
    }

    fn reasoning_item() -> Value {
        json!({"type": "reasoning", "id": "rs_1",
               "summary": [{"type": "summary_text", "text": "First part"}, {"type": "summary_text", "text": "Second"}],
               "encrypted_content": "gAAAAB-secret"})
    }

    #[test]
    fn p_6_7_thinking_summary_parts_and_reasoning_signature() {
        let delta = |summary_index: u64, delta: &str| {
            json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
                   "summary_index": summary_index, "delta": delta})
        };
        let body = sse(&[
            created(),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0,
                   "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            delta(0, "First "),
            delta(0, "part"),
            json!({"type": "response.reasoning_summary_part.done", "item_id": "rs_1", "output_index": 0, "summary_index": 0}),
            json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0, "summary_index": 1}),
            delta(1, "Second"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_item()}),
            json!({"type": "response.output_item.added", "output_index": 1,
                   "item": {"type": "message", "id": "msg_2", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "item_id": "msg_2", "output_index": 1, "delta": "Answer"}),
            json!({"type": "response.output_item.done", "output_index": 1,
                   "item": {"type": "message", "id": "msg_2", "role": "assistant",
                            "content": [{"type": "output_text", "text": "Answer"}]}}),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(
            events,
            names(
                "thinking_start thinking_delta thinking_delta thinking_delta thinking_delta thinking_end text_start text_delta text_end done"
            )
        );
        let signature = serde_json::to_string(&reasoning_item()).unwrap();
        let want = expected(
            json!([
                {"type": "thinking", "thinking": "First part\n\nSecond", "thinkingSignature": signature},
                {"type": "text", "text": "Answer", "textSignature": "{\"v\":1,\"id\":\"msg_2\"}"},
            ]),
            json!({"responseId": "resp_1", "usage": usage(), "stopReason": "stop", "rawStopReason": "completed"}),
        );
        assert_eq!(message, want);
    }

    #[test]
    fn p_6_7_reasoning_without_deltas_takes_the_item_text() {
        let body = sse(&[
            created(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning_item()}),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("thinking_start thinking_delta thinking_end done"));
        assert_eq!(message["content"][0]["thinking"], "First part\n\nSecond");
    }

    fn call_added(index: u64, call: &str, item: &str, name: &str) -> Value {
        json!({"type": "response.output_item.added", "output_index": index,
               "item": {"type": "function_call", "id": item, "call_id": call, "name": name, "arguments": "", "status": "in_progress"}})
    }

    fn args_delta(index: u64, item: &str, delta: &str) -> Value {
        json!({"type": "response.function_call_arguments.delta", "item_id": item, "output_index": index, "delta": delta})
    }

    fn call_done(index: u64, call: &str, item: &str, name: &str, args: &str) -> Value {
        json!({"type": "response.output_item.done", "output_index": index,
               "item": {"type": "function_call", "id": item, "call_id": call, "name": name, "arguments": args, "status": "completed"}})
    }

    #[test]
    fn p_6_7_interleaved_parallel_tool_calls_end_in_tool_use() {
        let body = sse(&[
            created(),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "delta": "Checking."}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]}}),
            call_added(1, "call_a", "fc_a", "weather"),
            call_added(2, "call_b", "fc_b", "time"),
            args_delta(1, "fc_a", "{\"city\":"),
            args_delta(2, "fc_b", "{\"zone\":\"UTC\"}"),
            args_delta(1, "fc_a", "\"Paris\"}"),
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_b", "output_index": 2, "arguments": "{\"zone\":\"UTC\"}"}),
            call_done(2, "call_b", "fc_b", "time", "{\"zone\":\"UTC\"}"),
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_a", "output_index": 1, "arguments": "{\"city\":\"Paris\"}"}),
            call_done(1, "call_a", "fc_a", "weather", "{\"city\":\"Paris\"}"),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(
            events,
            names(
                "text_start text_delta text_end toolcall_start toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_end toolcall_end done"
            )
        );
        let want = expected(
            json!([
                {"type": "text", "text": "Checking.", "textSignature": "{\"v\":1,\"id\":\"msg_1\"}"},
                {"type": "toolCall", "id": "call_a|fc_a", "name": "weather", "arguments": {"city": "Paris"}},
                {"type": "toolCall", "id": "call_b|fc_b", "name": "time", "arguments": {"zone": "UTC"}},
            ]),
            json!({"responseId": "resp_1", "usage": usage(), "stopReason": "toolUse", "rawStopReason": "completed"}),
        );
        assert_eq!(message, want);
    }

    #[test]
    fn p_6_7_arguments_done_replaces_the_streamed_text() {
        let body = sse(&[
            created(),
            call_added(0, "call_a", "fc_a", "f"),
            args_delta(0, "fc_a", "{\"a\":"),
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_a", "output_index": 0, "arguments": "{\"a\":2}"}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "function_call", "id": "fc_a", "call_id": "call_a", "name": "f", "arguments": ""}}),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("toolcall_start toolcall_delta toolcall_end done"));
        assert_eq!(message["content"][0]["arguments"], json!({"a": 2}));
        assert_eq!(message["stopReason"], "toolUse");
    }

    #[test]
    fn p_6_7_refusal_is_text() {
        let body = sse(&[
            created(),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "message", "id": "msg_r", "role": "assistant", "content": []}}),
            json!({"type": "response.refusal.delta", "item_id": "msg_r", "output_index": 0, "content_index": 0, "delta": "I can't "}),
            json!({"type": "response.refusal.delta", "item_id": "msg_r", "output_index": 0, "content_index": 0, "delta": "help with that."}),
            json!({"type": "response.refusal.done", "item_id": "msg_r", "output_index": 0, "refusal": "I can't help with that."}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "message", "id": "msg_r", "role": "assistant",
                            "content": [{"type": "refusal", "refusal": "I can't help with that."}]}}),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("text_start text_delta text_delta text_end done"));
        let want = expected(
            json!([{"type": "text", "text": "I can't help with that.", "textSignature": "{\"v\":1,\"id\":\"msg_r\"}"}]),
            json!({"responseId": "resp_1", "usage": usage(), "stopReason": "stop", "rawStopReason": "completed"}),
        );
        assert_eq!(message, want);
    }

    #[test]
    fn p_6_7_message_done_without_added_or_deltas_still_yields_its_text() {
        let body = sse(&[
            created(),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "message", "id": "msg_x", "role": "assistant",
                            "content": [{"type": "output_text", "text": "Whole"}, {"type": "output_text", "text": " text"}]}}),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("text_start text_delta text_end done"));
        assert_eq!(
            message["content"],
            json!([{"type": "text", "text": "Whole text", "textSignature": "{\"v\":1,\"id\":\"msg_x\"}"}])
        );
    }

    #[test]
    fn p_6_7_error_event_nested_and_top_level() {
        for error in [
            json!({"type": "error", "error": {"type": "invalid_request_error", "code": "bad_thing", "message": "Something broke", "param": null}}),
            json!({"type": "error", "code": "bad_thing", "message": "Something broke", "param": null}),
        ] {
            let text_added = json!({"type": "response.output_item.added", "output_index": 0,
                                    "item": {"type": "message", "id": "m", "role": "assistant", "content": []}});
            let delta =
                json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "delta": "Par"});
            let (message, events) =
                run(&sse(&[created(), text_added, delta, error, completed("completed", json!({}))]));
            assert_eq!(events, names("text_start text_delta text_end error"));
            let want = expected(
                json!([{"type": "text", "text": "Par"}]),
                json!({"responseId": "resp_1", "stopReason": "error", "errorMessage": "Error Code bad_thing: Something broke"}),
            );
            assert_eq!(message, want);
        }
    }

    #[test]
    fn p_6_7_response_failed_messages() {
        let cases = [
            (
                json!({"status": "failed", "error": {"code": "server_error", "message": "The model failed"}}),
                "server_error: The model failed",
            ),
            (json!({"status": "failed", "error": {"message": "No code"}}), "unknown: No code"),
            (
                json!({"status": "failed", "incomplete_details": {"reason": "max_output_tokens"}}),
                "incomplete: max_output_tokens",
            ),
            (json!({"status": "failed"}), "Unknown error (no error details in response)"),
        ];
        for (response, text) in cases {
            let (message, events) = run(&sse(&[created(), json!({"type": "response.failed", "response": response})]));
            assert_eq!(events, names("error"));
            let want = expected(
                json!([]),
                json!({"responseId": "resp_1", "stopReason": "error", "errorMessage": text, "rawStopReason": "failed"}),
            );
            assert_eq!(message, want);
        }
    }

    #[test]
    fn p_6_7_no_terminal_event_is_an_error() {
        let body = sse(&[
            created(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m", "content": []}}),
            json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "delta": "cut"}),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("text_start text_delta text_end error"));
        let want = expected(
            json!([{"type": "text", "text": "cut"}]),
            json!({"responseId": "resp_1", "stopReason": "error",
                   "errorMessage": "OpenAI Responses stream ended before a terminal response event"}),
        );
        assert_eq!(message, want);
        let (message, events) = run("");
        assert_eq!(events, names("error"));
        assert_eq!(message["errorMessage"], "OpenAI Responses stream ended before a terminal response event");
    }

    /// Issue 13: malformed function_call items and deltas end the stream with an error naming the
    /// item and field; no tool call with invented fields survives as the message's content.
    #[test]
    fn issue_13_malformed_items_are_stream_errors() {
        let added = |item: Value| json!({"type": "response.output_item.added", "output_index": 0, "item": item});
        let done = |item: Value| json!({"type": "response.output_item.done", "output_index": 0, "item": item});
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""});
        let with = |key: &str, value: Value| {
            let mut item = call.clone();
            item[key] = value;
            item
        };
        let without = |key: &str| {
            let mut item = call.clone();
            item.as_object_mut().unwrap().remove(key);
            item
        };
        let item0 = "function_call item (output_index 0)";
        let cases: Vec<(Vec<Value>, String)> = vec![
            (
                vec![added(with("call_id", json!(5)))],
                format!("{item0}: \"call_id\" must be a non-empty string, got a number"),
            ),
            (vec![added(with("name", json!(null)))], format!("{item0}: \"name\" must be a non-empty string, got null")),
            (vec![added(with("name", json!("")))], format!("{item0}: \"name\" must be a non-empty string, got \"\"")),
            (vec![added(without("call_id"))], format!("{item0}: \"call_id\" must be a non-empty string, got missing")),
            (vec![added(with("id", json!(["fc"])))], "output item: \"id\" must be a string, got an array".into()),
            (
                vec![added(with("arguments", json!({"a": 1})))],
                format!("{item0}: \"arguments\" must be a string, got an object"),
            ),
            // A .done without an .added creates the call from the done item: the same checks.
            (
                vec![done(with("call_id", json!({})))],
                format!("{item0}: \"call_id\" must be a non-empty string, got an object"),
            ),
            // The done item of a well-formed call is checked too.
            (
                vec![added(call.clone()), done(with("arguments", json!(7)))],
                format!("{item0}: \"arguments\" must be a string, got a number"),
            ),
            (
                vec![json!({"type": "response.output_item.added", "output_index": "0", "item": call.clone()})],
                "response.output_item.added: \"output_index\" must be an integer ≥ 0, got a string".into(),
            ),
            (
                vec![json!({"type": "response.output_item.added", "output_index": -1, "item": call.clone()})],
                "response.output_item.added: \"output_index\" must be an integer ≥ 0, got a number".into(),
            ),
            (
                vec![
                    added(call.clone()),
                    json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": 3}),
                ],
                "response.function_call_arguments.delta: \"delta\" must be a string, got a number".into(),
            ),
            (
                vec![
                    added(call.clone()),
                    json!({"type": "response.function_call_arguments.delta", "output_index": 0.5, "delta": "{"}),
                ],
                "response.function_call_arguments.delta: \"output_index\" must be an integer ≥ 0, got a number".into(),
            ),
            (
                vec![
                    added(call.clone()),
                    json!({"type": "response.function_call_arguments.delta", "item_id": 1, "delta": "{"}),
                ],
                "response.function_call_arguments.delta: \"item_id\" must be a string, got a number".into(),
            ),
            (
                vec![added(call.clone()), json!({"type": "response.function_call_arguments.done", "output_index": 0})],
                "response.function_call_arguments.done: \"arguments\" must be a string, got missing".into(),
            ),
            (
                vec![json!({"type": "response.output_text.delta", "output_index": 0, "delta": null})],
                "response.output_text.delta: \"delta\" must be a string, got null".into(),
            ),
            (
                vec![json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": false})],
                "response.reasoning_summary_text.delta: \"delta\" must be a string, got a boolean".into(),
            ),
        ];
        for (events, want) in cases {
            let mut all = vec![created()];
            all.extend(events.iter().cloned());
            all.push(completed("completed", json!({})));
            let (message, names) = run(&sse(&all));
            assert_eq!(names.last().map(String::as_str), Some("error"), "{events:?}");
            assert_eq!(message["stopReason"], "error");
            assert_eq!(message["errorMessage"], format!("Malformed openai-responses stream: {want}"), "{events:?}");
            // A call opened before the bad event keeps its real fields; none has invented ones.
            for block in message["content"].as_array().unwrap() {
                assert_eq!(block["id"], "call_1|fc_1", "{events:?}");
                assert_eq!(block["name"], "f");
            }
        }
        // The well-formed stream of the same items is a tool call (the checks refuse only bad fields).
        let (message, _) =
            run(&sse(&[created(), added(call.clone()), done(call.clone()), completed("completed", json!({}))]));
        assert_eq!(message["stopReason"], "toolUse");
        // Without an item id the call id is `<call_id>|`, as the reference builds it.
        let (message, _) =
            run(&sse(&[created(), added(without("id")), done(without("id")), completed("completed", json!({}))]));
        assert_eq!(message["content"][0]["id"], "call_1|");
    }

    #[test]
    fn p_6_10_truncated_by_max_output_tokens_is_length() {
        let body = sse(&[
            created(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m", "content": []}}),
            json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "delta": "The answer is"}),
            completed("incomplete", json!({"incomplete_details": {"reason": "max_output_tokens"}})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("text_start text_delta text_end done"));
        let want = expected(
            json!([{"type": "text", "text": "The answer is"}]),
            json!({"responseId": "resp_1", "usage": usage(), "stopReason": "length",
                   "rawStopReason": "incomplete.max_output_tokens"}),
        );
        assert_eq!(message, want);
    }

    #[test]
    fn p_6_10_truncated_tool_call_is_length_with_an_arguments_error() {
        let body = sse(&[
            created(),
            call_added(0, "call_a", "fc_a", "write"),
            args_delta(0, "fc_a", "{\"path\":\"a.txt\",\"text\":\"abc"),
            completed("incomplete", json!({"incomplete_details": {"reason": "max_output_tokens"}})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("toolcall_start toolcall_delta toolcall_end done"));
        assert_eq!(message["stopReason"], "length");
        let call = &message["content"][0];
        assert_eq!(call["arguments"], json!({}));
        let error = call["argumentsError"].as_str().unwrap();
        assert!(error.ends_with("\n\nReceived arguments:\n{\"path\":\"a.txt\",\"text\":\"abc"), "{error}");
    }

    #[test]
    fn p_6_10_other_terminal_statuses() {
        let cases = [
            (
                "incomplete",
                json!({"incomplete_details": {"reason": "content_filter"}}),
                Err("Response incomplete: content_filter"),
                "incomplete.content_filter",
            ),
            ("incomplete", json!({}), Err("Response incomplete without a provider reason"), "incomplete"),
            ("cancelled", json!({}), Err("Response cancelled"), "cancelled"),
            ("failed", json!({"error": {"code": "x", "message": "y"}}), Err("x: y"), "failed"),
            ("in_progress", json!({}), Ok("stop"), "in_progress"),
            ("queued", json!({}), Ok("stop"), "queued"),
            ("paused", json!({}), Err("Unhandled stop reason: paused"), "paused"),
        ];
        for (status, extra, outcome, raw) in cases {
            let (message, events) = run(&sse(&[created(), completed(status, extra)]));
            assert_eq!(message["rawStopReason"], raw);
            match outcome {
                Ok(reason) => {
                    assert_eq!(events, names("done"));
                    assert_eq!(message["stopReason"], reason);
                }
                Err(text) => {
                    assert_eq!(events, names("error"));
                    assert_eq!(message["errorMessage"], text);
                }
            }
        }
    }

    #[test]
    fn p_6_7_completed_with_an_unfinished_tool_call_is_an_error() {
        let body = sse(&[
            created(),
            call_added(0, "call_a", "fc_a", "f"),
            args_delta(0, "fc_a", "{}"),
            completed("completed", json!({})),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("toolcall_start toolcall_delta toolcall_end error"));
        assert_eq!(
            message["errorMessage"],
            "OpenAI Responses stream completed with an unfinished tool call: f (call_a|fc_a)"
        );
    }

    #[test]
    fn p_6_7_usage_only_terminal_and_unknown_events() {
        let body = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r9\"}}\n\n\
                    : keep-alive\n\n\
                    event: response.web_search_call.in_progress\ndata: {\"type\":\"response.web_search_call.in_progress\",\"output_index\":0}\n\n\
                    event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"web_search_call\",\"id\":\"ws\"}}\n\n\
                    event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r9\",\"status\":\"completed\",\"usage\":{\"input_tokens\":7,\"output_tokens\":3}}}\n\n";
        let (message, events) = run(body);
        assert_eq!(events, names("done"));
        let cost = json!({"input": (2.0 / 1e6) * 7.0, "output": (8.0 / 1e6) * 3.0, "cacheRead": 0.0, "cacheWrite": 0.0,
                          "total": (2.0 / 1e6) * 7.0 + (8.0 / 1e6) * 3.0, "totalFromProvider": false});
        let want = expected(
            json!([]),
            json!({"responseId": "r9", "usage": {"input": 7.0, "output": 3.0, "cacheRead": 0.0, "cacheWrite": 0.0,
                                                  "reasoning": 0.0, "totalTokens": 10.0, "cost": cost},
                   "stopReason": "stop", "rawStopReason": "completed"}),
        );
        assert_eq!(message, want);
    }

    // ---- request fixtures ----

    fn usage_zero() -> Value {
        json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
    }

    fn assistant(model: &str, content: Value) -> Value {
        json!({"role": "assistant", "api": "openai-responses", "provider": "openai", "model": model, "content": content,
               "usage": usage_zero(), "stopReason": "toolUse", "timestamp": 2})
    }

    fn build(model: &Value, messages: &[Value], options: Value, key: Option<&str>) -> HttpRequest {
        let messages = &crate::providers::json::from_values(messages);
        let input = RequestInput { model, messages, options: &options, api_key: key, messages_json_len: None };
        OpenAiResponses.build_request(&input).unwrap()
    }

    #[test]
    fn p_6_7_request_reasoning_model_full_body() {
        let signature =
            json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"}).to_string();
        let messages = [
            json!({"role": "system", "content": "You are helpful.", "sections": {"a": "Sec A", "b": null},
                   "toolsAdded": [{"name": "get", "description": "Get it", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}],
                   "timestamp": 0}),
            json!({"role": "user", "content": "hi", "timestamp": 1}),
            assistant(
                "gpt-5",
                json!([
                    {"type": "thinking", "thinking": "hmm", "thinkingSignature": signature},
                    {"type": "text", "text": "Hello", "textSignature": "{\"v\":1,\"id\":\"msg_abc\",\"phase\":\"commentary\"}"},
                    {"type": "text", "text": "Second"},
                    {"type": "toolCall", "id": "call_1|fc_1", "name": "get", "arguments": {"x": "y"}},
                ]),
            ),
            json!({"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "get", "isError": false, "timestamp": 3,
                   "content": [{"type": "text", "text": "res"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
            json!({"role": "user", "timestamp": 4,
                   "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "BBBB", "mimeType": "image/jpeg"}]}),
        ];
        let mut model = model();
        model["thinkingLevelMap"] = json!({"high": "high"});
        let options = json!({"reasoning": "high", "maxTokens": 4, "temperature": 0.5, "toolChoice": "auto", "sessionId": "sess-1"});
        let request = build(&model, &messages, options, Some("sk-test"));
        assert_eq!(request.url, "https://api.openai.com/v1/responses");
        assert_eq!(
            request.headers,
            vec![
                ("content-type".to_string(), "application/json".to_string()),
                ("authorization".to_string(), "Bearer sk-test".to_string())
            ]
        );
        let want = json!({
            "model": "gpt-5",
            "input": [
                {"role": "developer", "content": "You are helpful.\n\nSec A"},
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
                 "status": "completed", "id": "msg_abc", "phase": "commentary"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Second", "annotations": []}],
                 "status": "completed", "id": "msg_1_1"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get", "arguments": "{\"x\":\"y\"}"},
                {"type": "function_call_output", "call_id": "call_1",
                 "output": [{"type": "input_text", "text": "res"},
                            {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAAA"}]},
                {"role": "user", "content": [{"type": "input_text", "text": "look"},
                                             {"type": "input_image", "detail": "auto", "image_url": "data:image/jpeg;base64,BBBB"}]},
            ],
            "stream": true,
            "prompt_cache_key": "sess-1",
            "store": false,
            "max_output_tokens": 16,
            "temperature": 0.5,
            "tools": [{"type": "function", "name": "get", "description": "Get it",
                       "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}, "strict": false}],
            "tool_choice": "auto",
            "reasoning": {"effort": "high", "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
        });
        assert_eq!(request.body, want);
        assert_eq!(serde_json::to_string(&request.body).unwrap(), serde_json::to_string(&want).unwrap(), "key order");
    }

    #[test]
    fn p_6_7_request_plain_model_foreign_history_no_key() {
        let long_id = "x".repeat(70);
        let messages = [
            json!({"role": "system", "content": [{"type": "text", "text": "Sys"}], "timestamp": 0}),
            json!({"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 1}),
            assistant(
                "other-model",
                json!([
                    {"type": "thinking", "thinking": "secret", "thinkingSignature": "{\"type\":\"reasoning\",\"id\":\"rs_9\"}"},
                    {"type": "text", "text": "A", "textSignature": long_id},
                    {"type": "toolCall", "id": "call_9|fc_9", "name": "get", "arguments": {}},
                    {"type": "toolCall", "id": "plain", "name": "get", "arguments": {"n": 1}},
                ]),
            ),
            json!({"role": "toolResult", "toolCallId": "call_9|fc_9", "toolName": "get", "isError": true, "timestamp": 3,
                   "content": [{"type": "text", "text": "boom"}, {"type": "text", "text": "again"}]}),
            json!({"role": "toolResult", "toolCallId": "plain", "toolName": "get", "isError": false, "timestamp": 3, "content": []}),
            json!({"role": "user", "content": [], "timestamp": 4}),
            json!({"role": "assistant", "api": "openai-responses", "provider": "local", "model": "llama", "stopReason": "stop",
                   "content": [{"type": "text", "text": "B", "textSignature": long_id}], "timestamp": 5}),
        ];
        let model = json!({"id": "llama", "api": "openai-responses", "provider": "local", "baseUrl": "http://localhost:8080/v1/",
                           "input": ["text"], "reasoning": false, "maxTokens": 0, "contextWindow": 0});
        let options =
            json!({"reasoning": "high", "sessionId": "s", "cacheRetention": "none", "samplingParams": {"top_p": 0.9}});
        let request = build(&model, &messages, options, None);
        assert_eq!(request.url, "http://localhost:8080/v1/responses");
        assert_eq!(request.headers, vec![("content-type".to_string(), "application/json".to_string())]);
        let hashed = shorten_id(long_id.clone());
        assert!(hashed.starts_with("msg_") && hashed.len() <= 64 && hashed != long_id);
        let want = json!({
            "model": "llama",
            "input": [
                {"role": "system", "content": "Sys"},
                {"role": "user", "content": [{"type": "input_text", "text": "q"}]},
                // The clean-up dropped the foreign text signature: the fallback id.
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A", "annotations": []}],
                 "status": "completed", "id": "msg_1"},
                {"type": "function_call", "call_id": "call_9", "name": "get", "arguments": "{}"},
                {"type": "function_call", "call_id": "plain", "name": "get", "arguments": "{\"n\":1}"},
                {"type": "function_call_output", "call_id": "call_9", "output": "boom\nagain"},
                {"type": "function_call_output", "call_id": "plain", "output": "(no tool output)"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "B", "annotations": []}],
                 "status": "completed", "id": hashed},
            ],
            "stream": true,
            "store": false,
            "top_p": 0.9,
        });
        assert_eq!(request.body, want);
    }

    #[test]
    fn p_6_7_request_reasoning_levels() {
        let mut model = model();
        let body = |model: &Value, options: Value| build(model, &[], options, Some("k")).body;
        // Level off: nothing unless thinkingLevelMap.off is a string.
        assert_eq!(body(&model, json!({})).get("reasoning"), None);
        model["thinkingLevelMap"] = json!({"off": null, "medium": "low"});
        assert_eq!(body(&model, json!({})).get("reasoning"), None);
        model["thinkingLevelMap"] = json!({"off": "minimal", "medium": "low"});
        let off = body(&model, json!({}));
        assert_eq!(off["reasoning"], json!({"effort": "minimal"}));
        assert_eq!(off.get("include"), None);
        // A mapped level.
        let medium = body(&model, json!({"reasoning": "medium"}));
        assert_eq!(medium["reasoning"], json!({"effort": "low", "summary": "auto"}));
        assert_eq!(medium["include"], json!(["reasoning.encrypted_content"]));
        // max_output_tokens from the model, developer role switched off by compat.
        model["maxTokens"] = json!(32000);
        model["compat"] = json!({"supportsDeveloperRole": false});
        let messages = [json!({"role": "system", "content": "S", "timestamp": 0})];
        let request = build(&model, &messages, json!({}), Some("k"));
        assert_eq!(request.body["max_output_tokens"], json!(32000));
        assert_eq!(request.body["input"], json!([{"role": "system", "content": "S"}]));
        // prompt_cache_key is clamped to 64 characters.
        let key = build(&model, &[], json!({"sessionId": "k".repeat(80)}), Some("k")).body["prompt_cache_key"].clone();
        assert_eq!(key, json!("k".repeat(64)));
    }

    // ---- never panics ----

    fn arb_json(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
        test_driver::keyed_json(keys, "[a-z_.|{}\":0-9 ]{0,12}", 5)
    }

    const KEYS: &[&str] = &[
        "type",
        "response",
        "item",
        "output_index",
        "item_id",
        "delta",
        "arguments",
        "id",
        "call_id",
        "name",
        "status",
        "usage",
        "error",
        "code",
        "message",
        "incomplete_details",
        "reason",
        "summary",
        "content",
        "text",
        "refusal",
        "phase",
        "summary_index",
        "content_index",
        "input_tokens",
        "output_tokens",
        "input_tokens_details",
        "cached_tokens",
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.output_text.delta",
        "response.refusal.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "reasoning",
        "function_call",
        "output_text",
        "completed",
        "incomplete",
        "max_output_tokens",
        "role",
        "model",
        "provider",
        "api",
        "toolCall",
        "thinking",
        "thinkingSignature",
        "textSignature",
        "user",
        "assistant",
        "toolResult",
        "system",
        "image",
        "toolsAdded",
        "parameters",
        "reasoning",
        "thinkingLevelMap",
        "off",
        "high",
        "sessionId",
        "maxTokens",
        "samplingParams",
        "input",
        "baseUrl",
    ];

    proptest! {
        #[test]
        fn p_6_1_2_mapper_never_panics(events in proptest::collection::vec(
            (proptest::option::of(proptest::sample::select(KEYS)), arb_json(KEYS)), 0..24)) {
            let model = model();
            let options = json!({});
            let input = RequestInput { model: &model, messages: &[], options: &options, api_key: None, messages_json_len: None };
            let mut mapper = OpenAiResponses.mapper(&input);
            let mut asm = Assembler::for_model(&model, false);
            let mut message = test_driver::initial_message(&model);
            for (event, data) in &events {
                if asm.finished() { break; }
                mapper.on_event(*event, &Json::from_value(data.clone()), &mut asm);
                mapper.on_text(*event, "[DONE]", &mut asm);
            }
            mapper.on_end(&mut asm);
            prop_assert!(asm.finished());
            for op in asm.drain() { let _ = apply_native(&mut message, &op); }
        }

        #[test]
        fn p_6_1_2_request_never_panics(model in arb_json(KEYS), messages in proptest::collection::vec(arb_json(KEYS), 0..6),
                                        options in arb_json(KEYS)) {
            let input = RequestInput { model: &model, messages: &crate::providers::json::from_values(&messages), options: &options, api_key: Some("k"), messages_json_len: None };
            let _ = OpenAiResponses.build_request(&input);
        }
    }
}
