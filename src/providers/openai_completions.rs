//! `openai-completions` (§6.6): OpenAI Chat Completions and the servers that speak it (llama.cpp,
//! vLLM, Ollama, LM Studio, OpenRouter, Groq, …). Builds the request from the cleaned transcript
//! and maps `data:` chunks (until `[DONE]`) onto the assembler; blocks stay open until the end.

use super::assemble::{Assembler, BlockKind, StopReason, Usage};
use super::json::Json;
use super::repair::parse_json;
use super::request::{
    OPENAI_BASE_URL, api_key, base_url, compat_bool, compat_str, first_chars, invalid_json_message, is_openrouter,
    mapped_effort, max_tokens, merge_sampling, missing_openai_key, model_reasons, object, openrouter_billed_cost,
    option_number, option_str, put, thinking_level,
};
use super::strict;
use super::transcript::{self, str_field};
use super::{HttpRequest, RequestInput, StreamMapper, WireFormat};
use crate::core::text::json::js_json_stringify_verbatim;
use serde_json::{Map, Value, json};

pub struct OpenAiCompletions;

/// The reasoning fields servers stream (and accept back), in the order they are read.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];
const TEXT_KEY: &str = "text";
/// The wire format's name in stream errors.
const FORMAT: &str = "openai-completions";
const THINKING_KEY: &str = "thinking";

impl WireFormat for OpenAiCompletions {
    fn build_request(&self, input: &RequestInput<'_>) -> Result<HttpRequest, String> {
        let model = input.model;
        let base = base_url(model, OPENAI_BASE_URL);
        let provider = str_field(model, "provider");
        let is_openai = provider == "openai" || base.contains("api.openai.com");
        let normalize = |id: &str| normalize_tool_call_id(id, provider == "openai");
        let t = transcript::prepare(input, Some(&normalize));
        let level = thinking_level(input.options);

        let mut body = Map::new();
        put(&mut body, "model", Value::from(str_field(model, "id")));
        put(&mut body, "messages", Value::Array(convert_messages(model, &t, is_openai)));
        put(&mut body, "stream", Value::from(true));
        if base.contains("api.openai.com")
            && option_str(input.options, "cacheRetention") != Some("none")
            && let Some(session) = option_str(input.options, "sessionId")
        {
            put(&mut body, "prompt_cache_key", Value::from(first_chars(session, 64)));
        }
        if compat_bool(model, "supportsUsageInStreaming") != Some(false) {
            put(&mut body, "stream_options", object([("include_usage", Value::from(true))]));
        }
        if let Some(limit) = max_tokens(input) {
            let field = match compat_str(model, "maxTokensField") {
                Some(field @ ("max_tokens" | "max_completion_tokens")) => field,
                _ if is_openai => "max_completion_tokens",
                _ => "max_tokens",
            };
            put(&mut body, field, Value::from(limit));
        }
        if let Some(temperature) = option_number(input.options, "temperature") {
            put(&mut body, "temperature", Value::from(temperature));
        }
        if !t.tools.is_empty() {
            let tools: Vec<Value> = t
                .tools
                .iter()
                .map(|tool| {
                    let function = object([
                        ("name", Value::from(str_field(tool, "name"))),
                        ("description", Value::from(str_field(tool, "description"))),
                        ("parameters", tool.get("parameters").cloned().unwrap_or_else(|| json!({}))),
                    ]);
                    object([("type", Value::from("function")), ("function", function)])
                })
                .collect();
            put(&mut body, "tools", Value::Array(tools));
        }
        if let Some(choice) = input.options.get("toolChoice").filter(|c| truthy(c)) {
            put(&mut body, "tool_choice", choice.clone());
        }
        if let Some(level) = level
            && model_reasons(model)
            && compat_bool(model, "supportsReasoningEffort") != Some(false)
            && let Some(effort) = mapped_effort(model, level)
        {
            put(&mut body, "reasoning_effort", Value::from(effort));
        }
        merge_sampling(&mut body, input, level);

        let url = format!("{base}/chat/completions");
        // P-6.2.3: without a key a known cloud service fails here; any other server gets no Authorization.
        if let Some(missing) = missing_openai_key(input, &url) {
            return Err(missing);
        }
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(key) = api_key(input) {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        Ok(HttpRequest { url, headers, body: Value::Object(body) })
    }

    fn stream_mapper(&self, input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        Box::new(Mapper {
            model_id: str_field(input.model, "id").to_string(),
            openrouter: is_openrouter(input.model),
            supports_finish_reason: compat_bool(input.model, "supportsFinishReason") != Some(false),
            ..Mapper::default()
        })
    }
}

/// Tool-call ids for Chat Completions: a Responses id `"<call_id>|<item_id>"` becomes
/// `<call_id>_<item_id>` (characters outside `[A-Za-z0-9_-]` → `_`), shortened with a hash past 40
/// characters; OpenAI's own ids are cut at 40.
pub fn normalize_tool_call_id(id: &str, provider_is_openai: bool) -> String {
    if let Some((call, item)) = id.split_once('|') {
        let (call, item) = (sanitize_id(call), sanitize_id(item));
        let combined = if item.is_empty() { call.clone() } else { format!("{call}_{item}") };
        if combined.len() <= 40 {
            return combined;
        }
        let hash = first_chars(&short_hash(id), 8);
        let prefix = first_chars(&call, 40usize.saturating_sub(hash.len() + 1).max(1));
        return format!("{prefix}_{hash}");
    }
    if provider_is_openai && id.encode_utf16().count() > 40 {
        return first_chars(id, 40);
    }
    id.to_string()
}

/// Characters outside `[A-Za-z0-9_-]` → `_` (one per UTF-16 unit, as a JS regex replace does).
pub fn sanitize_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out
}

/// A fast deterministic 53-bit-style string hash (two 32-bit lanes, base 36), over UTF-16 units.
fn short_hash(text: &str) -> String {
    let (mut h1, mut h2): (u32, u32) = (0xdead_beef, 0x41c6_ce57);
    for unit in text.encode_utf16() {
        h1 = (h1 ^ u32::from(unit)).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ u32::from(unit)).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS.get((n % 36) as usize).copied().unwrap_or(b'0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn data_url(image: &Json<'_>) -> Value {
    let url = format!("data:{};base64,{}", image.str("mimeType"), image.str("data"));
    object([("type", Value::from("image_url")), ("image_url", object([("url", Value::from(url))]))])
}

/// §6.6 Messages: the system head, then user / assistant / tool messages.
fn convert_messages(model: &Value, t: &transcript::Transcript, is_openai: bool) -> Vec<Value> {
    let mut out = Vec::with_capacity(t.messages.len() + 1);
    if !t.system_prompt.is_empty() {
        let developer = model_reasons(model) && compat_bool(model, "supportsDeveloperRole").unwrap_or(is_openai);
        let role = if developer { "developer" } else { "system" };
        out.push(object([("role", Value::from(role)), ("content", Value::from(t.system_prompt.as_str()))]));
    }
    let images_supported = model.get("input").and_then(Value::as_array).is_some_and(|a| a.iter().any(|i| i == "image"));
    let mut results: Vec<&Json> = Vec::new();
    for message in &t.messages {
        if message.role() == "toolResult" {
            results.push(message);
            continue;
        }
        push_tool_results(&mut out, &mut results, model, images_supported);
        match message.role() {
            "user" => {
                if let Some(user) = convert_user(message) {
                    out.push(user);
                }
            }
            "assistant" => {
                if let Some(assistant) = convert_assistant(model, message) {
                    out.push(assistant);
                }
            }
            _ => {}
        }
    }
    push_tool_results(&mut out, &mut results, model, images_supported);
    out
}

fn convert_user(message: &Json<'_>) -> Option<Value> {
    if let Some(text) = message.get("content").and_then(Json::as_str) {
        return Some(object([("role", Value::from("user")), ("content", Value::from(text))]));
    }
    let parts: Vec<Value> = message
        .blocks()
        .iter()
        .filter_map(|block| match block.kind() {
            "text" if !block.str("text").is_empty() => {
                Some(object([("type", Value::from("text")), ("text", Value::from(block.str("text")))]))
            }
            "image" => Some(data_url(block)),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| object([("role", Value::from("user")), ("content", Value::Array(parts))]))
}

fn convert_assistant(model: &Value, message: &Json<'_>) -> Option<Value> {
    let content = message.blocks();
    let details = reasoning_details_to_send(content);
    let text: String = content
        .iter()
        .filter(|b| b.kind() == "text" && !b.str("text").trim().is_empty())
        .map(|b| b.str("text"))
        .collect();
    let thinking: Vec<&Json> =
        content.iter().filter(|b| b.kind() == "thinking" && !b.str("thinking").trim().is_empty()).collect();
    let joined_thinking = thinking.iter().map(|b| b.str("thinking")).collect::<Vec<_>>().join("\n");
    let calls: Vec<Value> = content
        .iter()
        .filter(|b| b.kind() == "toolCall")
        .map(|call| {
            let arguments = call.get("arguments").map_or_else(|| json!({}), Json::to_value);
            let arguments = js_json_stringify_verbatim(&arguments);
            let function = object([("name", Value::from(call.str("name"))), ("arguments", Value::from(arguments))]);
            object([("id", Value::from(call.str("id"))), ("type", Value::from("function")), ("function", function)])
        })
        .collect();

    let mut out = Map::new();
    put(&mut out, "role", Value::from("assistant"));
    let content = if !text.is_empty() {
        Value::String(text)
    } else if compat_bool(model, "requiresNonNullAssistantContent") == Some(true) {
        "".into()
    } else {
        Value::Null
    };
    let has_content = content.as_str().is_some_and(|s| !s.is_empty());
    put(&mut out, "content", content);
    // Issue 33: streamed `reasoning_details` (kept as the thinking block's signature, JSON) go back as they came, so
    // a signed or encrypted thinking turn can be replayed (OpenRouter); they replace the plain reasoning field.
    // Replay the streamed reasoning under the field it came in (its thinkingSignature).
    if let Some(first) = thinking.first().filter(|_| details.is_none()) {
        let field = first.str("thinkingSignature");
        if REASONING_FIELDS.contains(&field) {
            put(&mut out, field, Value::from(joined_thinking.as_str()));
        }
    }
    let has_calls = !calls.is_empty();
    if has_calls {
        put(&mut out, "tool_calls", Value::Array(calls));
    }
    if let Some(details) = details {
        put(&mut out, "reasoning_details", Value::Array(details));
    }
    if compat_bool(model, "requiresReasoningContentOnAssistantMessages") == Some(true)
        && model_reasons(model)
        && !out.contains_key("reasoning_content")
    {
        put(&mut out, "reasoning_content", Value::from(joined_thinking));
    }
    (has_content || has_calls).then_some(Value::Object(out))
}

/// The `reasoning_details` an assistant message sends back (the reference's rule): those of the first thinking block
/// whose signature is a JSON array of valid details, else the encrypted details (with an id) kept as tool calls'
/// `thoughtSignature`s.
fn reasoning_details_to_send(content: &[Json<'_>]) -> Option<Vec<Value>> {
    let parse = |text: &str| parse_json(text).ok();
    let signed = content.iter().filter(|b| b.kind() == "thinking").find_map(|block| {
        let Value::Array(details) = parse(block.str("thinkingSignature"))? else { return None };
        (!details.is_empty() && details.iter().all(is_reasoning_detail)).then_some(details)
    });
    if signed.is_some() {
        return signed;
    }
    let legacy: Vec<Value> = content
        .iter()
        .filter(|b| b.kind() == "toolCall")
        .filter_map(|call| parse(call.str("thoughtSignature")))
        .filter(|d| {
            is_reasoning_detail(d)
                && d.get("type").and_then(Value::as_str) == Some("reasoning.encrypted")
                && d.get("id").and_then(Value::as_str).is_some_and(|id| !id.is_empty())
                && d.get("data").and_then(Value::as_str).is_some_and(|data| !data.is_empty())
        })
        .collect();
    (!legacy.is_empty()).then_some(legacy)
}

/// A reasoning detail as OpenRouter defines them: `reasoning.text` (`text`, optional `signature`),
/// `reasoning.summary` (`summary`) or `reasoning.encrypted` (`data`); `id`, `format`, `index` typed when present.
fn is_reasoning_detail(detail: &Value) -> bool {
    let Some(d) = detail.as_object() else { return false };
    let typed = |key: &str, ok: fn(&Value) -> bool| d.get(key).is_none_or(ok);
    if !(typed("id", |v| v.is_null() || v.is_string())
        && typed("format", Value::is_string)
        && typed("index", Value::is_number))
    {
        return false;
    }
    let string = |key: &str| d.get(key).is_some_and(Value::is_string);
    match d.get("type").and_then(Value::as_str) {
        Some("reasoning.summary") => string("summary"),
        Some("reasoning.encrypted") => string("data"),
        // Issue 33: OpenRouter streams Anthropic's signature as a `reasoning.text` detail without `text`; it is
        // kept (the reference drops it, and the thinking goes back unsigned).
        Some("reasoning.text") => {
            (string("text") || d.get("signature").and_then(Value::as_str).is_some_and(|s| !s.is_empty()))
                && d.get("text").is_none_or(Value::is_string)
                && typed("signature", |v| v.is_null() || v.is_string())
        }
        _ => false,
    }
}

/// Appends a streamed detail as the reference merges them: consecutive `reasoning.text` (and `reasoning.summary`)
/// fragments join into one entry (text appended, the first non-empty signature, missing `id`/`format` filled);
/// encrypted ones stay separate.
fn append_reasoning_detail(details: &mut Vec<Value>, detail: Map<String, Value>) {
    let kind = detail.get("type").and_then(Value::as_str).unwrap_or("");
    let field = match kind {
        "reasoning.text" => "text",
        "reasoning.summary" => "summary",
        _ => "",
    };
    if let Some(Value::Object(last)) = details.last_mut()
        && !field.is_empty()
        && last.get("type").and_then(Value::as_str) == Some(kind)
    {
        let more = detail.get(field).and_then(Value::as_str).unwrap_or("");
        if let Some(Value::String(text)) = last.get_mut(field) {
            text.push_str(more);
        }
        let falsy = |v: Option<&Value>| match v {
            None | Some(Value::Null) | Some(Value::Bool(false)) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Number(n)) => n.as_f64() == Some(0.0),
            _ => false,
        };
        // JS `last.k ||= detail.k` (`??=` for `id` and `index`): a missing value on the right leaves the key out.
        let replace = [
            ("signature", kind == "reasoning.text" && falsy(last.get("signature"))),
            ("id", last.get("id").is_none_or(Value::is_null)),
            ("format", falsy(last.get("format"))),
            ("index", last.get("index").is_none_or(Value::is_null)),
        ];
        for (key, replace) in replace {
            if replace {
                match detail.get(key) {
                    Some(value) => last.insert(key.to_string(), value.clone()),
                    None => last.shift_remove(key),
                };
            }
        }
        return;
    }
    details.push(Value::Object(detail));
}

/// One `tool` message per result; their images (if supported) in one following user message.
fn push_tool_results(out: &mut Vec<Value>, results: &mut Vec<&Json>, model: &Value, images_supported: bool) {
    if results.is_empty() {
        return;
    }
    let mut images = Vec::new();
    for result in results.drain(..) {
        let content = result.blocks();
        let text = content.iter().filter(|b| b.kind() == "text").map(|b| b.str("text")).collect::<Vec<_>>();
        let text = text.join("\n");
        let result_images: Vec<&Json> = content.iter().filter(|b| b.kind() == "image").collect();
        let text = if !text.trim().is_empty() {
            text
        } else if !result_images.is_empty() {
            "(see attached image)".to_string()
        } else {
            "(no tool output)".to_string()
        };
        let mut message = Map::new();
        put(&mut message, "role", Value::from("tool"));
        put(&mut message, "content", Value::from(text));
        put(&mut message, "tool_call_id", Value::from(result.str("toolCallId")));
        let name = result.str("toolName");
        if compat_bool(model, "requiresToolResultName") == Some(true) && !name.is_empty() {
            put(&mut message, "name", Value::from(name));
        }
        out.push(Value::Object(message));
        if images_supported {
            images.extend(result_images.into_iter().map(data_url));
        }
    }
    if !images.is_empty() {
        let mut content = vec![object([("type", Value::from("text")), ("text", Value::from("Tool result image:"))])];
        content.extend(images);
        out.push(object([("role", Value::from("user")), ("content", Value::Array(content))]));
    }
}

#[derive(Default)]
struct ToolCallSlot {
    key: String,
    index: Option<i64>,
    ids: Vec<String>,
    /// The id was made up (`call_<n>`); a later fragment's id replaces it.
    synthetic_id: bool,
    named: bool,
}

#[derive(Default)]
struct Mapper {
    model_id: String,
    /// OpenRouter reports the billed cost in its usage (issue 33).
    openrouter: bool,
    supports_finish_reason: bool,
    response_id: bool,
    response_model: bool,
    thinking_open: bool,
    finish_reason: Option<String>,
    calls: Vec<ToolCallSlot>,
}

impl Mapper {
    fn chunk(&mut self, chunk: &Json<'_>, asm: &mut Assembler) {
        if let Some(error) = chunk.get("error").filter(|e| e.truthy()) {
            let message = match error.get("message") {
                Some(Json::String(m)) if !m.is_empty() => m.to_string(),
                Some(m) if m.truthy() => m.to_string(),
                _ => error.to_string(),
            };
            asm.fail(message, self.finish_reason.clone());
            return;
        }
        if !self.response_id
            && let Some(id) = chunk.get("id").and_then(Json::as_str).filter(|s| !s.is_empty())
        {
            self.response_id = true;
            asm.meta("responseId", Value::from(id));
        }
        if !self.response_model
            && let Some(name) = chunk.get("model").and_then(Json::as_str).filter(|s| !s.is_empty())
            && name != self.model_id
        {
            self.response_model = true;
            asm.meta("responseModel", Value::from(name));
        }
        let choice = chunk.get("choices").and_then(Json::as_array).and_then(<[_]>::first);
        let usage = chunk.get("usage").filter(|u| u.truthy()).or_else(|| choice.and_then(|c| c.get("usage")));
        if let Some(usage) = usage.filter(|u| u.is_object()) {
            let mut usage_now = chat_usage(usage);
            if self.openrouter {
                usage_now.billed = openrouter_billed_cost(usage);
            }
            asm.usage(&usage_now);
        }
        let Some(choice) = choice else { return };
        match choice.get("finish_reason") {
            Some(Json::String(reason)) if !reason.is_empty() => self.finish_reason = Some(reason.to_string()),
            Some(reason) if reason.truthy() => self.finish_reason = Some(reason.to_string()),
            _ => {}
        }
        let Some(delta) = choice.get("delta").filter(|d| d.is_object()) else { return };
        let reasoning = REASONING_FIELDS
            .iter()
            .find_map(|field| delta.get(field).and_then(Json::as_str).filter(|s| !s.is_empty()).map(|s| (*field, s)));
        if let Some((field, text)) = reasoning {
            asm.thinking_delta(THINKING_KEY, text);
            if !self.thinking_open {
                self.thinking_open = true;
                asm.set_field(THINKING_KEY, "thinkingSignature", Value::from(field));
            }
        }
        // Issue 33: `reasoning_details` (OpenRouter) are replay data, not text: kept whole and written once, as the
        // thinking block's signature (JSON), when the block closes, so the next request can send them back.
        if let Some(Json::Array(details)) = delta.get("reasoning_details") {
            for detail in details {
                let Value::Object(detail) = detail.to_value() else { continue };
                if !is_reasoning_detail(&Value::Object(detail.clone())) {
                    continue;
                }
                if !self.thinking_open {
                    self.thinking_open = true;
                    asm.open_block(THINKING_KEY, BlockKind::Thinking);
                    asm.set_field(THINKING_KEY, "thinkingSignature", Value::from(""));
                }
                if let Some(Value::Array(kept)) = asm.at_close(THINKING_KEY, "thinkingSignature") {
                    append_reasoning_detail(kept, detail);
                }
            }
        }
        for field in ["content", "refusal"] {
            if let Some(text) = delta.get(field).and_then(Json::as_str).filter(|s| !s.is_empty()) {
                asm.text_delta(TEXT_KEY, text);
            }
        }
        // Issue 33: Mistral's reasoning models (Magistral) stream `content` as typed parts: `{type: "thinking",
        // thinking: [{type: "text", text}]}` and `{type: "text", text}` (the reference writes `[object Object]`).
        if let Some(Json::Array(parts)) = delta.get("content") {
            for part in parts {
                match part.get("type").and_then(Json::as_str) {
                    Some("text") => {
                        if let Some(text) = part.get("text").and_then(Json::as_str).filter(|s| !s.is_empty()) {
                            asm.text_delta(TEXT_KEY, text);
                        }
                    }
                    Some("thinking") => {
                        let inner = part.get("thinking").and_then(Json::as_array).unwrap_or_default();
                        for text in inner.iter().filter_map(|t| t.get("text").and_then(Json::as_str)) {
                            if !text.is_empty() {
                                asm.thinking_delta(THINKING_KEY, text);
                                self.thinking_open = true;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let fragments = match delta.get("tool_calls") {
            None | Some(Json::Null) => &[][..],
            Some(Json::Array(fragments)) => fragments,
            other => {
                let text = strict::message(FORMAT, "choices[0].delta", "tool_calls", "an array", other);
                asm.fail(text, None);
                return;
            }
        };
        for (position, fragment) in fragments.iter().enumerate() {
            if let Err(text) = self.tool_fragment(position, fragment, asm) {
                asm.fail(text, None);
                return;
            }
        }
    }

    /// P-6.4.1: fragments by `index` (fallback `id`); the first carries id and name. Issue 13: a
    /// field of the wrong type is the stream's error, never read as missing.
    fn tool_fragment(&mut self, position: usize, fragment: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        let label = format!("choices[0].delta.tool_calls[{position}]");
        if !fragment.is_object() {
            return Err(format!(
                "Malformed {FORMAT} stream: {label} must be an object, got {}",
                strict::type_name(Some(fragment))
            ));
        }
        let index = strict::optional_index(FORMAT, &label, fragment, "index")?.and_then(|i| i64::try_from(i).ok());
        let id = strict::optional_str(FORMAT, &label, fragment, "id")?.filter(|s| !s.is_empty());
        let function = match fragment.get("function") {
            None | Some(Json::Null) => None,
            Some(function) if function.is_object() => Some(function),
            other => return Err(strict::message(FORMAT, &label, "function", "an object", other)),
        };
        let function_label = format!("{label}.function");
        let field = |key: &str| match function {
            Some(function) => strict::optional_str(FORMAT, &function_label, function, key),
            None => Ok(None),
        };
        let name = field("name")?.unwrap_or("");
        let arguments = field("arguments")?.unwrap_or("");
        let found = index
            .and_then(|i| self.calls.iter().position(|c| c.index == Some(i)))
            .or_else(|| id.and_then(|id| self.calls.iter().position(|c| c.ids.iter().any(|known| known == id))));
        let slot = match found.and_then(|position| self.calls.get_mut(position)) {
            Some(slot) => {
                if slot.index.is_none() {
                    slot.index = index;
                }
                if let Some(id) = id {
                    if slot.synthetic_id {
                        slot.synthetic_id = false;
                        asm.set_field(&slot.key, "id", Value::from(id));
                    }
                    if !slot.ids.iter().any(|known| known == id) {
                        slot.ids.push(id.to_string());
                    }
                }
                if !slot.named && !name.is_empty() {
                    slot.named = true;
                    asm.set_field(&slot.key, "name", Value::from(name));
                }
                slot
            }
            None => {
                let n = self.calls.len();
                let key = format!("tool{n}");
                let block_id = id.map_or_else(|| format!("call_{n}"), str::to_string);
                asm.tool_start(&key, &block_id, name);
                self.calls.push(ToolCallSlot {
                    key,
                    index,
                    ids: id.map(str::to_string).into_iter().collect(),
                    synthetic_id: id.is_none(),
                    named: !name.is_empty(),
                });
                let Some(slot) = self.calls.last_mut() else { return Ok(()) };
                slot
            }
        };
        asm.tool_args_delta(&slot.key, arguments);
        Ok(())
    }

    /// Issue 13: a call no fragment named cannot run (its id may be the made-up `call_<n>`).
    fn unnamed_call(&self) -> Option<String> {
        let (position, _) = self.calls.iter().enumerate().find(|(_, call)| !call.named)?;
        Some(format!("Malformed {FORMAT} stream: tool call {position}: no fragment carried \"function.name\""))
    }

    /// §6.10: the recorded finish reason decides; none is an error unless the server never sends one.
    fn end(&mut self, asm: &mut Assembler) {
        if let Some(text) = self.unnamed_call() {
            asm.fail(text, self.finish_reason.clone());
            return;
        }
        match self.finish_reason.clone() {
            Some(reason) => match reason.as_str() {
                "stop" | "end" => asm.finish(StopReason::Stop, Some(reason)),
                "length" => asm.finish(StopReason::Length, Some(reason)),
                "tool_calls" | "function_call" => asm.finish(StopReason::ToolUse, Some(reason)),
                _ => asm.fail(format!("Provider finish_reason: {reason}"), Some(reason)),
            },
            None if !self.supports_finish_reason => {
                let reason = if asm.has_tool_calls() { StopReason::ToolUse } else { StopReason::Stop };
                asm.finish(reason, None);
            }
            None => asm.fail("Stream ended without finish_reason", None),
        }
    }
}

/// §6.10 Chat usage.
fn chat_usage(usage: &Json<'_>) -> Usage {
    let prompt = usage.num("prompt_tokens").unwrap_or(0.0);
    let details = usage.get("prompt_tokens_details");
    let cache_read = details
        .and_then(|d| d.num("cached_tokens"))
        .or_else(|| usage.num("prompt_cache_hit_tokens"))
        .or_else(|| usage.num("cached_tokens"))
        .unwrap_or(0.0);
    let cache_write = details.and_then(|d| d.num("cache_write_tokens")).unwrap_or(0.0);
    let reasoning = usage
        .get("completion_tokens_details")
        .and_then(|d| d.num("reasoning_tokens"))
        .filter(|n| *n != 0.0)
        .or_else(|| usage.num("reasoning_tokens"))
        .unwrap_or(0.0);
    Usage {
        input: (prompt - cache_read - cache_write).max(0.0),
        output: usage.num("completion_tokens").unwrap_or(0.0),
        cache_read,
        cache_write,
        cache_write_1h: None,
        reasoning: Some(reasoning),
        ..Usage::default()
    }
}

impl StreamMapper for Mapper {
    fn on_event(&mut self, _event: Option<&str>, data: &Json<'_>, asm: &mut Assembler) {
        if data.is_object() {
            self.chunk(data, asm);
        }
    }

    /// `[DONE]` ends the reply and other text fails it; empty data is left to `on_unparsed`.
    fn on_text(&mut self, _event: Option<&str>, data: &str, asm: &mut Assembler) -> bool {
        match data.trim() {
            "[DONE]" => self.end(asm),
            "" => return false,
            _ => asm.fail(invalid_json_message(data), None),
        }
        true
    }

    fn on_end(&mut self, asm: &mut Assembler) {
        self.end(asm);
    }
}

#[cfg(test)]
mod tests;
