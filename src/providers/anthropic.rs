//! `anthropic-messages` (§6.8): the Messages API. Builds the request (system blocks, alternating
//! roles, tool results, cache breakpoints, budget thinking) from the cleaned transcript and maps
//! `event:` + `data:` stream events onto the assembler by content-block index.

use super::assemble::{Assembler, BlockKind, StopReason, Usage};
use super::json::{Json, NULL, Scanner};
use super::request::{
    ANTHROPIC_BASE_URL, api_key, base_url, compat_bool, has_header, invalid_json_message, is_openrouter, max_tokens,
    merge_sampling, model_reasons, object, openrouter_billed_cost, option_number, option_str, put, thinking_level,
    thinking_limits,
};
use super::strict;
use super::transcript::{self, block_type, role, str_field};
use super::{HttpRequest, RequestInput, StreamMapper, WireFormat};
use serde_json::{Map, Value, json};
use std::borrow::Cow;

pub struct AnthropicMessages;

pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Without a known limit `max_tokens` (required) is 4096 (P-6.2.7).
const DEFAULT_MAX_TOKENS: u64 = 4096;
const ERROR_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

impl WireFormat for AnthropicMessages {
    fn build_request(&self, input: &RequestInput<'_>) -> Result<HttpRequest, String> {
        let model = input.model;
        let key = api_key(input);
        let header_auth = ["authorization", "x-api-key", "cf-aig-authorization"].iter().any(|h| has_header(input, h));
        if key.is_none() && !header_auth {
            return Err(format!("No API key for provider: {}", str_field(model, "provider")));
        }
        let t = transcript::prepare(input, Some(&normalize_tool_call_id));
        let level = thinking_level(input.options);
        let thinking = level.filter(|_| model_reasons(model));
        let (limit, budget) = match thinking {
            Some(level) => {
                let limits = thinking_limits(input, level, Some(DEFAULT_MAX_TOKENS));
                (limits.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS), Some(limits.budget))
            }
            None => (max_tokens(input).unwrap_or(DEFAULT_MAX_TOKENS), None),
        };
        let cache_control = match option_str(input.options, "cacheRetention") {
            Some("none") => None,
            Some("long") if compat_bool(model, "supportsLongCacheRetention") != Some(false) => {
                Some(object([("type", Value::from("ephemeral")), ("ttl", Value::from("1h"))]))
            }
            _ => Some(object([("type", Value::from("ephemeral"))])),
        };

        let mut messages = convert_messages(&t, compat_bool(model, "allowEmptySignature") == Some(true));
        if let Some(cache) = &cache_control {
            mark_last_block(&mut messages, cache);
        }
        let mut body = Map::new();
        put(&mut body, "model", Value::from(str_field(model, "id")));
        put(&mut body, "messages", Value::Array(messages));
        put(&mut body, "max_tokens", Value::from(limit));
        put(&mut body, "stream", Value::from(true));
        if !t.system_prompt.is_empty() {
            let mut block = Map::new();
            put(&mut block, "type", Value::from("text"));
            put(&mut block, "text", Value::from(t.system_prompt.as_str()));
            if let Some(cache) = &cache_control {
                put(&mut block, "cache_control", cache.clone());
            }
            put(&mut body, "system", Value::Array(vec![Value::Object(block)]));
        }
        if budget.is_none()
            && let Some(temperature) = option_number(input.options, "temperature")
        {
            put(&mut body, "temperature", Value::from(temperature));
        }
        if !t.tools.is_empty() {
            put(&mut body, "tools", Value::Array(t.tools.iter().map(convert_tool).collect()));
        }
        if let Some(budget) = budget {
            // The API requires a budget of at least 1024; 0 (no room) asks for the minimum.
            let budget = if budget == 0 { 1024 } else { budget };
            put(
                &mut body,
                "thinking",
                object([("type", Value::from("enabled")), ("budget_tokens", Value::from(budget))]),
            );
        }
        match input.options.get("toolChoice") {
            Some(Value::String(choice)) if !choice.is_empty() => {
                put(&mut body, "tool_choice", object([("type", Value::from(choice.as_str()))]));
            }
            Some(choice @ Value::Object(_)) => {
                put(&mut body, "tool_choice", choice.clone());
            }
            _ => {}
        }
        merge_sampling(&mut body, input, level);

        let mut headers = vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("anthropic-version".to_string(), ANTHROPIC_VERSION.to_string()),
            ("anthropic-dangerous-direct-browser-access".to_string(), "true".to_string()),
        ];
        if let Some(key) = key {
            headers.push(("x-api-key".to_string(), key.to_string()));
        }
        let url = format!("{}/v1/messages", base_url(model, ANTHROPIC_BASE_URL));
        Ok(HttpRequest { url, headers, body: Value::Object(body) })
    }

    fn stream_mapper(&self, input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        Box::new(Mapper {
            model_id: str_field(input.model, "id").to_string(),
            openrouter: is_openrouter(input.model),
            ..Mapper::default()
        })
    }
}

/// P-6.5.2: outside `[A-Za-z0-9_-]` → `_` (one per UTF-16 unit, as the reference), at most 64.
pub fn normalize_tool_call_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len().min(64));
    for c in id.chars() {
        let (replacement, count) =
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' { (c, 1) } else { ('_', c.len_utf16()) };
        for _ in 0..count {
            if out.len() == 64 {
                return out;
            }
            out.push(replacement);
        }
    }
    out
}

/// `{name, description, input_schema}`; the schema keeps only what the API accepts at its root.
fn convert_tool(tool: &Value) -> Value {
    let parameters = tool.get("parameters");
    let field = |key: &str| parameters.and_then(|p| p.get(key)).cloned();
    let mut schema = Map::new();
    put(&mut schema, "type", Value::from("object"));
    put(&mut schema, "properties", field("properties").unwrap_or_else(|| json!({})));
    put(&mut schema, "required", field("required").unwrap_or_else(|| json!([])));
    for key in ["additionalProperties", "$defs", "definitions"] {
        if let Some(value) = field(key) {
            put(&mut schema, key, value);
        }
    }
    object([
        ("name", Value::from(str_field(tool, "name"))),
        ("description", Value::from(str_field(tool, "description"))),
        ("input_schema", Value::Object(schema)),
    ])
}

fn image_block(image: &Json<'_>) -> Value {
    let source = object([
        ("type", Value::from("base64")),
        ("media_type", Value::from(image.str("mimeType"))),
        ("data", Value::from(image.str("data"))),
    ]);
    object([("type", Value::from("image")), ("source", source)])
}

fn text_block(text: &str) -> Value {
    object([("type", Value::from("text")), ("text", Value::from(text))])
}

fn thinking_block(thinking: &str, signature: &str) -> Value {
    object([
        ("type", Value::from("thinking")),
        ("thinking", Value::from(thinking)),
        ("signature", Value::from(signature)),
    ])
}

/// §6.8 Messages: alternating roles, user-side entries merged.
fn convert_messages(t: &transcript::Transcript, allow_empty_signature: bool) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(t.messages.len());
    let mut index = 0;
    while let Some(message) = t.messages.get(index) {
        index += 1;
        match message.role() {
            "user" => push_user(&mut out, user_blocks(message)),
            "assistant" => {
                let content = assistant_blocks(message, allow_empty_signature);
                if !content.is_empty() {
                    out.push(object([("role", Value::from("assistant")), ("content", Value::Array(content))]));
                }
            }
            "toolResult" => {
                // All consecutive results go in one user message, error images after them.
                let mut results = Vec::new();
                let mut error_images = Vec::new();
                let mut current = Some(message);
                while let Some(result) = current.filter(|m| m.role() == "toolResult") {
                    results.push(tool_result(result, &mut error_images));
                    current = t.messages.get(index);
                    if current.is_some_and(|m| m.role() == "toolResult") {
                        index += 1;
                    }
                }
                results.extend(error_images);
                push_user(&mut out, results);
            }
            _ => {}
        }
    }
    out
}

fn push_user(out: &mut Vec<Value>, content: Vec<Value>) {
    if content.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut().filter(|m| role(m) == "user")
        && let Some(existing) = last.get_mut("content").and_then(Value::as_array_mut)
    {
        existing.extend(content);
        return;
    }
    out.push(object([("role", Value::from("user")), ("content", Value::Array(content))]));
}

fn user_blocks(message: &Json<'_>) -> Vec<Value> {
    if let Some(text) = message.get("content").and_then(Json::as_str) {
        return if text.trim().is_empty() { Vec::new() } else { vec![text_block(text)] };
    }
    message
        .blocks()
        .iter()
        .filter_map(|block| match block.kind() {
            "text" if !block.str("text").trim().is_empty() => Some(text_block(block.str("text"))),
            "image" => Some(image_block(block)),
            _ => None,
        })
        .collect()
}

fn assistant_blocks(message: &Json<'_>, allow_empty_signature: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for block in message.blocks() {
        match block.kind() {
            "text" if !block.str("text").trim().is_empty() => out.push(text_block(block.str("text"))),
            "thinking" => {
                let signature = block.str("thinkingSignature");
                let thinking = block.str("thinking");
                if block.get("redacted").and_then(Json::as_bool) == Some(true) {
                    out.push(object([("type", Value::from("redacted_thinking")), ("data", Value::from(signature))]));
                } else if !signature.trim().is_empty() {
                    out.push(thinking_block(thinking, signature));
                } else if thinking.trim().is_empty() {
                } else if allow_empty_signature {
                    out.push(thinking_block(thinking, ""));
                } else {
                    // Unsigned thinking (an interrupted stream) cannot be replayed as thinking.
                    out.push(text_block(thinking));
                }
            }
            "toolCall" => {
                let input = block.get("arguments").filter(|a| !a.is_null()).map_or_else(|| json!({}), Json::to_value);
                out.push(object([
                    ("type", Value::from("tool_use")),
                    ("id", Value::from(block.str("id"))),
                    ("name", Value::from(block.str("name"))),
                    ("input", input),
                ]));
            }
            _ => {}
        }
    }
    out
}

/// One `tool_result` block; an error result's images are replaced and queued in `error_images`.
fn tool_result(result: &Json<'_>, error_images: &mut Vec<Value>) -> Value {
    let is_error = result.get("isError").and_then(Json::as_bool).unwrap_or(false);
    let content = result.blocks();
    let images: Vec<&Json> = content.iter().filter(|b| b.kind() == "image").collect();
    let replaced;
    let content = if is_error && !images.is_empty() {
        let id = result.str("toolCallId");
        let caption = format!("Images from the error result of tool call {id} ({}):", result.str("toolName"));
        error_images.push(text_block(&caption));
        error_images.extend(images.into_iter().map(image_block));
        replaced = transcript::replace_images(content, ERROR_IMAGE_PLACEHOLDER);
        &replaced[..]
    } else {
        content
    };
    object([
        ("type", Value::from("tool_result")),
        ("tool_use_id", Value::from(result.str("toolCallId"))),
        ("content", result_content(content)),
        ("is_error", Value::from(is_error)),
    ])
}

/// Texts only → one string (joined by "\n"); with images → blocks, headed by a placeholder text
/// when there is no text.
fn result_content(content: &[Json<'_>]) -> Value {
    if !content.iter().any(|b| b.kind() == "image") {
        let texts: Vec<&str> = content.iter().filter(|b| b.kind() == "text").map(|b| b.str("text")).collect();
        return Value::String(texts.join("\n"));
    }
    let mut out: Vec<Value> = content
        .iter()
        .filter_map(|block| match block.kind() {
            "text" => Some(text_block(block.str("text"))),
            "image" => Some(image_block(block)),
            _ => None,
        })
        .collect();
    if !out.iter().any(|b| block_type(b) == "text") {
        out.insert(0, text_block("(see attached image)"));
    }
    Value::Array(out)
}

/// The cache breakpoint on the last content block of the last message (a user-side one).
fn mark_last_block(messages: &mut [Value], cache: &Value) {
    let Some(last) = messages.last_mut().filter(|m| role(m) == "user") else { return };
    if let Some(Value::Object(block)) = last.get_mut("content").and_then(Value::as_array_mut).and_then(|c| c.last_mut())
        && matches!(block.get("type").and_then(Value::as_str), Some("text" | "image" | "tool_result"))
    {
        put(block, "cache_control", cache.clone());
    }
}

/// The outcome a `message_delta` stop reason asks for (§6.10).
#[derive(Clone, Debug)]
enum Stop {
    Done(StopReason),
    Error(String),
}

#[derive(Default)]
struct Mapper {
    model_id: String,
    /// OpenRouter adds its billed cost to `message_delta`'s usage (issue 33).
    openrouter: bool,
    /// Content blocks open by Anthropic `index` (ignored kinds are not here).
    open: Vec<(String, BlockKind)>,
    usage: Usage,
    stop: Option<(String, Stop)>,
    /// The block key of the last scanned delta (its allocation is reused).
    key: String,
}

/// An index written as plain digits, the usual case (`block_key` needs no formatting machinery).
fn plain_index(digits: &str) -> bool {
    digits.len() < 20 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The wire format's name in stream errors.
const FORMAT: &str = "anthropic-messages";

/// The block key of a `content_block_*` event. Issue 13: its `index` must be an integer ≥ 0
/// (another value would open, feed or close a block no other event names).
fn block_key(event: &str, data: &Json<'_>) -> Result<String, String> {
    match data.get("index") {
        Some(Json::Number(digits)) if plain_index(digits) => {
            let mut key = String::with_capacity(digits.len().saturating_add(1));
            key.push('b');
            key.push_str(digits);
            Ok(key)
        }
        _ => strict::required_index(FORMAT, event, data, "index").map(|index| format!("b{index}")),
    }
}

/// `<event> (index <n>)`, naming the item in a stream error.
fn item_label(event: &str, key: &str) -> String {
    format!("{event} (index {})", key.trim_start_matches('b'))
}

/// The `content_block_delta` types that carry content (others, e.g. citations, are ignored).
#[derive(Clone, Copy)]
enum DeltaType {
    Text,
    Thinking,
    Signature,
    InputJson,
}

impl DeltaType {
    fn named(name: &str) -> Option<Self> {
        match name {
            "text_delta" => Some(DeltaType::Text),
            "thinking_delta" => Some(DeltaType::Thinking),
            "signature_delta" => Some(DeltaType::Signature),
            "input_json_delta" => Some(DeltaType::InputJson),
            _ => None,
        }
    }

    /// The member of the `delta` that carries the content.
    fn field(self) -> &'static str {
        match self {
            DeltaType::Text => "text",
            DeltaType::Thinking => "thinking",
            DeltaType::Signature => "signature",
            DeltaType::InputJson => "partial_json",
        }
    }
}

/// A delta event (nearly every event of a stream) in the shape Anthropic sends it,
/// `{"type":"content_block_delta","index":N,"delta":{"type":T,"<T.field()>":S}}` with any
/// whitespace and escapes: its index digits, delta type and content. Any other text: `None`.
fn scan_block_delta(data: &str) -> Option<(&str, DeltaType, Cow<'_, str>)> {
    let mut scan = Scanner::new(data);
    scan.open("type")?;
    scan.string_is("content_block_delta")?;
    scan.next("index")?;
    // `block_key` formats other numbers through serde_json: left to the general path.
    let index = scan.number().filter(|digits| plain_index(digits))?;
    scan.next("delta")?;
    scan.open("type")?;
    let kind = DeltaType::named(&scan.string()?)?;
    scan.next(kind.field())?;
    let value = scan.string()?;
    scan.close()?;
    scan.close()?;
    scan.end()?;
    Some((index, kind, value))
}

impl Mapper {
    fn open_kind(&self, key: &str) -> Option<BlockKind> {
        self.open.iter().find(|(k, _)| k == key).map(|(_, kind)| *kind)
    }

    fn message_start(&mut self, data: &Json<'_>, asm: &mut Assembler) {
        let message = data.get("message").unwrap_or(&NULL);
        if let Some(id) = message.get("id").and_then(Json::as_str) {
            asm.meta("responseId", Value::from(id));
        }
        if let Some(name) = message.get("model").and_then(Json::as_str).filter(|m| *m != self.model_id) {
            asm.meta("responseModel", Value::from(name));
        }
        let usage = message.get("usage").unwrap_or(&NULL);
        let count = |key: &str| usage.num(key).unwrap_or(0.0);
        self.usage = Usage {
            input: count("input_tokens"),
            output: count("output_tokens"),
            cache_read: count("cache_read_input_tokens"),
            cache_write: count("cache_creation_input_tokens"),
            cache_write_1h: Some(
                usage.get("cache_creation").and_then(|c| c.num("ephemeral_1h_input_tokens")).unwrap_or(0.0),
            ),
            reasoning: None,
            ..Usage::default()
        };
        asm.usage(&self.usage);
    }

    /// Issue 13: the fields a block is made of must have their types (`Err`: the stream's error).
    fn block_start(&mut self, data: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        let event = "content_block_start";
        let key = block_key(event, data)?;
        let label = item_label(event, &key);
        let block = match data.get("content_block") {
            Some(block) if block.is_object() => block,
            other => return Err(strict::message(FORMAT, &label, "content_block", "an object", other)),
        };
        let label = format!("{label} content_block");
        let kind = match strict::required_str(FORMAT, &label, block, "type")? {
            "text" => {
                let text = strict::optional_str(FORMAT, &label, block, "text")?.unwrap_or_default();
                asm.open_block(&key, BlockKind::Text);
                if !text.is_empty() {
                    // Initial text is kept, as part of text_start (no delta event).
                    asm.set_field(&key, "text", Value::from(text));
                }
                BlockKind::Text
            }
            "thinking" => {
                let thinking = strict::optional_str(FORMAT, &label, block, "thinking")?.unwrap_or_default();
                let signature = strict::optional_str(FORMAT, &label, block, "signature")?.unwrap_or_default();
                asm.open_block(&key, BlockKind::Thinking);
                if !thinking.is_empty() {
                    asm.set_field(&key, "thinking", Value::from(thinking));
                }
                match signature {
                    "" => asm.set_field(&key, "thinkingSignature", Value::from("")),
                    signature => asm.append_signature(&key, "thinkingSignature", signature),
                }
                BlockKind::Thinking
            }
            "redacted_thinking" => {
                asm.redacted_thinking(&key, strict::required_string(FORMAT, &label, block, "data")?);
                return Ok(());
            }
            "tool_use" => {
                let id = strict::required_str(FORMAT, &label, block, "id")?;
                let name = strict::required_str(FORMAT, &label, block, "name")?;
                asm.tool_start(&key, id, name);
                BlockKind::ToolCall
            }
            // Server tools, citations, fallbacks: not content here; their deltas and stop are ignored.
            _ => return Ok(()),
        };
        self.open.retain(|(k, _)| *k != key);
        self.open.push((key, kind));
        Ok(())
    }

    fn block_delta(&mut self, data: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        let event = "content_block_delta";
        let key = block_key(event, data)?;
        let label = item_label(event, &key);
        let delta = match data.get("delta") {
            Some(delta) if delta.is_object() => delta,
            other => return Err(strict::message(FORMAT, &label, "delta", "an object", other)),
        };
        let label = format!("{label} delta");
        if let Some(kind) = DeltaType::named(strict::required_str(FORMAT, &label, delta, "type")?) {
            let value = strict::required_string(FORMAT, &label, delta, kind.field())?;
            self.apply_delta(&key, kind, value, asm);
        }
        Ok(())
    }

    /// A `content_block_delta` of type `kind` carrying `value` for block `key`.
    fn apply_delta(&mut self, key: &str, kind: DeltaType, value: &str, asm: &mut Assembler) {
        let Some(block) = self.open_kind(key).filter(|_| asm.has_open(key)) else { return };
        match (kind, block) {
            (DeltaType::Text, BlockKind::Text) => asm.sent_delta(key, BlockKind::Text, value),
            (DeltaType::Thinking, BlockKind::Thinking) => asm.sent_delta(key, BlockKind::Thinking, value),
            (DeltaType::Signature, BlockKind::Thinking) => asm.append_signature(key, "thinkingSignature", value),
            (DeltaType::InputJson, BlockKind::ToolCall) => asm.tool_args_delta(key, value),
            _ => {}
        }
    }

    fn block_stop(&mut self, data: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        let key = block_key("content_block_stop", data)?;
        if self.open_kind(&key).is_some() {
            self.open.retain(|(k, _)| *k != key);
            asm.close(&key);
        }
        Ok(())
    }

    fn message_delta(&mut self, data: &Json<'_>, asm: &mut Assembler) {
        let delta = data.get("delta").unwrap_or(&NULL);
        if let Some(reason) = delta.get("stop_reason").and_then(Json::as_str).filter(|r| !r.is_empty()) {
            let stop = match reason {
                "end_turn" | "pause_turn" | "stop_sequence" => Stop::Done(StopReason::Stop),
                "max_tokens" => Stop::Done(StopReason::Length),
                "tool_use" => Stop::Done(StopReason::ToolUse),
                "refusal" => Stop::Error(
                    delta
                        .get("stop_details")
                        .and_then(|d| d.get("explanation"))
                        .and_then(Json::as_str)
                        .filter(|e| !e.is_empty())
                        .unwrap_or("The model refused to complete the request")
                        .to_string(),
                ),
                "sensitive" => Stop::Error("Provider stopped with: sensitive".into()),
                other => {
                    asm.fail(format!("Unhandled stop reason: {other}"), Some(other.to_string()));
                    return;
                }
            };
            self.stop = Some((reason.to_string(), stop));
        }
        // Cumulative counts: what is present overrides (§6.10).
        if let Some(usage) = data.get("usage").filter(|u| u.is_object()) {
            let set = |slot: &mut f64, key: &str| {
                if let Some(n) = usage.num(key) {
                    *slot = n;
                }
            };
            set(&mut self.usage.input, "input_tokens");
            set(&mut self.usage.output, "output_tokens");
            set(&mut self.usage.cache_read, "cache_read_input_tokens");
            set(&mut self.usage.cache_write, "cache_creation_input_tokens");
            if let Some(n) = usage.get("cache_creation").and_then(|c| c.num("ephemeral_1h_input_tokens")) {
                self.usage.cache_write_1h = Some(n);
            }
            if let Some(n) = usage.get("output_tokens_details").and_then(|d| d.num("thinking_tokens")) {
                self.usage.reasoning = Some(n);
            }
        }
        let billed = data.get("usage").filter(|_| self.openrouter).and_then(openrouter_billed_cost);
        asm.usage(&Usage { billed, ..self.usage.clone() });
    }

    fn message_stop(&mut self, asm: &mut Assembler) {
        match self.stop.clone() {
            Some((raw, Stop::Done(reason))) => asm.finish(reason, Some(raw)),
            Some((raw, Stop::Error(message))) => asm.fail(message, Some(raw)),
            None => asm.fail("Anthropic stream ended without a stop reason", None),
        }
    }
}

impl StreamMapper for Mapper {
    fn on_event(&mut self, event: Option<&str>, data: &Json<'_>, asm: &mut Assembler) {
        let kind = data.get("type").and_then(Json::as_str).or(event).unwrap_or("");
        match kind {
            "message_start" => self.message_start(data, asm),
            "content_block_start" | "content_block_delta" | "content_block_stop" => {
                let checked = match kind {
                    "content_block_start" => self.block_start(data, asm),
                    "content_block_delta" => self.block_delta(data, asm),
                    _ => self.block_stop(data, asm),
                };
                if let Err(message) = checked {
                    asm.fail(message, None);
                }
            }
            "message_delta" => self.message_delta(data, asm),
            "message_stop" => self.message_stop(asm),
            "error" => {
                let error = data.get("error").unwrap_or(data);
                let message = match (error.get("message"), data.get("message")) {
                    (Some(Json::String(m)), _) | (_, Some(Json::String(m))) => m.to_string(),
                    _ => data.to_string(),
                };
                asm.fail(message, None);
            }
            _ => {} // ping and unknown events
        }
    }

    fn on_event_text(&mut self, _event: Option<&str>, data: &str, asm: &mut Assembler) -> bool {
        let Some((index, kind, value)) = scan_block_delta(data) else { return false };
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push('b');
        key.push_str(index);
        self.apply_delta(&key, kind, &value, asm);
        self.key = key;
        true
    }

    /// Anthropic names every event: a `ping` or an event it does not read is skipped whatever its data, one it reads
    /// fails on data that is not JSON; empty data (outside a ping) is left to `on_unparsed`, as pi-ai fails it too.
    fn on_text(&mut self, event: Option<&str>, data: &str, asm: &mut Assembler) -> bool {
        match event {
            Some("error") => asm.fail(data, None),
            Some("ping") => {}
            _ if data.trim().is_empty() => return false,
            None
            | Some(
                "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop",
            ) => asm.fail(invalid_json_message(data), None),
            Some(_) => {}
        }
        true
    }

    /// A stream cut before `message_stop` is an error that keeps the stop reason `message_delta` gave (as pi-ai's
    /// message does: its `rawStopReason` is written when the delta arrives).
    fn on_end(&mut self, asm: &mut Assembler) {
        asm.fail("Anthropic stream ended before message_stop", self.stop.as_ref().map(|(raw, _)| raw.clone()));
    }
}

#[cfg(test)]
mod tests;
