//! `google-generative-ai` (§6.9): builds the `streamGenerateContent?alt=sse` request from the
//! transcript and maps Gemini's `data:` chunks (no terminator) onto the `Assembler`. Owns only
//! this wire format; the transcript clean-up, token limits and sampling merge are shared rules.
//!
//! Generated tool-call ids are `<name>_<timestamp>_<n>`: the timestamp is `options.timestamp`
//! (a number of ms the caller puts into the options JSON, e.g. the message's `Date.now()`),
//! else 0; `n` counts the calls of the message and skips ids already used in it.

use super::assemble::{Assembler, BlockKind, StopReason, Usage};
use super::openai_responses::shared;
use super::{HttpRequest, RequestInput, StreamMapper, WireFormat};
use serde_json::{Map, Value, json};

pub struct GoogleGenerativeAi;

const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";
/// Schemas nested deeper than this are sent unchanged below that depth.
const MAX_SCHEMA_DEPTH: usize = 256;

impl WireFormat for GoogleGenerativeAi {
    fn build_request(&self, input: &RequestInput<'_>) -> Result<HttpRequest, String> {
        let model = input.model;
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        match input.api_key.filter(|k| !k.is_empty()) {
            Some(key) => headers.push(("x-goog-api-key".to_string(), key.to_string())),
            // P-6.2.3: an auth header given in model.headers/options.headers stands in for the key.
            None if has_auth_header(model, input.options) => {}
            None => {
                let provider = model.get("provider").and_then(Value::as_str).unwrap_or_default();
                return Err(format!("No API key for provider: {provider}"));
            }
        }
        let id = model.get("id").and_then(Value::as_str).unwrap_or_default();
        let url = format!("{}/models/{id}:streamGenerateContent?alt=sse", shared::base_url(model, DEFAULT_BASE_URL));
        Ok(HttpRequest { url, headers, body: request_body(input) })
    }

    fn mapper(&self, input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        let timestamp = input.options.get("timestamp").and_then(Value::as_f64).filter(|t| t.is_finite() && *t >= 0.0);
        Box::new(GoogleMapper::new(timestamp.map_or(0, |t| t as u64)))
    }
}

/// Whether the merged headers (model < options, `null` removes) carry an auth header.
fn has_auth_header(model: &Value, options: &Value) -> bool {
    let mut present: Vec<String> = Vec::new();
    for source in [model.get("headers"), options.get("headers")].into_iter().flatten() {
        for (name, value) in source.as_object().into_iter().flatten() {
            let name = name.to_ascii_lowercase();
            present.retain(|n| *n != name);
            if value.as_str().is_some_and(|v| !v.trim().is_empty()) {
                present.push(name);
            }
        }
    }
    present.iter().any(|n| n == "x-goog-api-key" || n == "authorization")
}

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

fn request_body(input: &RequestInput<'_>) -> Value {
    let (model, options) = (input.model, input.options);
    let transcript = shared::transcript(model, input.messages);
    let level = shared::thinking_level(model, options);
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents(model, &transcript.messages)));
    if !transcript.system.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": [{"text": transcript.system}]}));
    }
    if !transcript.tools.is_empty() {
        let declarations: Vec<Value> = transcript.tools.iter().map(function_declaration).collect();
        body.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
        let mode = match options.get("toolChoice").and_then(Value::as_str) {
            Some("none") => Some("NONE"),
            Some("any") => Some("ANY"),
            Some("auto") => Some("AUTO"),
            _ => None,
        };
        if let Some(mode) = mode {
            body.insert("toolConfig".into(), json!({"functionCallingConfig": {"mode": mode}}));
        }
    }
    let mut config = Map::new();
    let (max_tokens, thinking) = match &level {
        Some(level) => {
            let (max, budget) = shared::thinking_budget(model, options, level, input.messages);
            (max, Some(json!({"includeThoughts": true, "thinkingBudget": shared::number(budget)})))
        }
        None => (shared::max_tokens(model, options, input.messages), None),
    };
    if let Some(max) = max_tokens.filter(|m| *m > 0.0) {
        config.insert("maxOutputTokens".into(), shared::number(max));
    }
    if let Some(t) = options.get("temperature").filter(|t| !t.is_null()) {
        config.insert("temperature".into(), t.clone());
    }
    if let Some(thinking) = thinking {
        config.insert("thinkingConfig".into(), thinking);
    }
    shared::merge_sampling(&mut config, model, options, level.as_deref());
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    Value::Object(body)
}

fn function_declaration(tool: &Value) -> Value {
    let parameters = tool.get("parameters").cloned().unwrap_or_else(|| json!({}));
    json!({
        "name": tool.get("name").cloned().unwrap_or_else(|| json!("")),
        "description": tool.get("description").cloned().unwrap_or_else(|| json!("")),
        "parametersJsonSchema": const_as_enum(parameters, false, 0),
    })
}

/// Keywords whose values are subschemas (or lists of them).
const SUBSCHEMA_KEYS: [&str; 16] = [
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords whose values map names to subschemas.
const NAME_MAP_KEYS: [&str; 6] =
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];

/// Gemini ignores `const` in `parametersJsonSchema` but honours `enum`: a string or number
/// `const` becomes a one-value `enum` (only in schema positions, not in literal data).
fn const_as_enum(schema: Value, name_map: bool, depth: usize) -> Value {
    if depth > MAX_SCHEMA_DEPTH {
        return schema;
    }
    match schema {
        Value::Array(list) => Value::Array(list.into_iter().map(|s| const_as_enum(s, false, depth + 1)).collect()),
        Value::Object(object) => {
            let mut out: Map<String, Value> = object
                .into_iter()
                .map(|(key, value)| {
                    let value = if name_map || SUBSCHEMA_KEYS.contains(&key.as_str()) {
                        const_as_enum(value, false, depth + 1)
                    } else if NAME_MAP_KEYS.contains(&key.as_str()) {
                        const_as_enum(value, true, depth + 1)
                    } else {
                        value
                    };
                    (key, value)
                })
                .collect();
            let rewrite = !name_map
                && !out.contains_key("enum")
                && out.get("const").is_some_and(|c| c.is_string() || c.is_number());
            if rewrite && let Some(value) = out.shift_remove("const") {
                out.insert("enum".into(), Value::Array(vec![value]));
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// The `contents` turns of the transcript (§6.9).
fn contents(model: &Value, messages: &[Value]) -> Vec<Value> {
    let mut turns: Vec<Value> = Vec::new();
    // Tool results in a row share one user turn; their images follow it.
    let mut responses: Vec<Value> = Vec::new();
    let mut image_turns: Vec<Value> = Vec::new();
    for message in messages {
        let role = message.get("role").and_then(Value::as_str);
        if role != Some("toolResult") {
            flush_tool_results(&mut turns, &mut responses, &mut image_turns);
        }
        match role {
            Some("user") => {
                let parts = user_parts(message.get("content"));
                if !parts.is_empty() {
                    turns.push(json!({"role": "user", "parts": parts}));
                }
            }
            Some("assistant") => {
                let parts = model_parts(model, message);
                if !parts.is_empty() {
                    turns.push(json!({"role": "model", "parts": parts}));
                }
            }
            Some("toolResult") => {
                let (response, images) = function_response(model, message);
                responses.push(response);
                if !images.is_empty() {
                    let mut parts = vec![json!({"text": "Tool result image:"})];
                    parts.extend(images);
                    image_turns.push(json!({"role": "user", "parts": parts}));
                }
            }
            _ => {}
        }
    }
    flush_tool_results(&mut turns, &mut responses, &mut image_turns);
    turns
}

fn flush_tool_results(turns: &mut Vec<Value>, responses: &mut Vec<Value>, image_turns: &mut Vec<Value>) {
    if !responses.is_empty() {
        turns.push(json!({"role": "user", "parts": std::mem::take(responses)}));
    }
    turns.append(image_turns);
}

fn user_parts(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(text)) => vec![json!({"text": text})],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => Some(json!({"text": str_field(part, "text")})),
                Some("image") => Some(inline_data(part)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn inline_data(image: &Value) -> Value {
    json!({"inlineData": {"mimeType": str_field(image, "mimeType"), "data": str_field(image, "data")}})
}

/// An assistant message's parts; signatures (and thoughts) only for the same model.
fn model_parts(model: &Value, message: &Value) -> Vec<Value> {
    let same_model = shared::same_model(model, message);
    let signature = |block: &Value, key: &str| {
        block.get(key).and_then(Value::as_str).filter(|s| same_model && is_base64(s)).map(str::to_string)
    };
    let with_signature = |mut part: Map<String, Value>, signature: Option<String>| {
        if let Some(signature) = signature {
            part.insert("thoughtSignature".into(), json!(signature));
        }
        Value::Object(part)
    };
    let blocks = message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut parts = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let (text, signature) = (str_field(block, "text"), signature(block, "textSignature"));
                // An empty part is kept only when it carries a signature Gemini wants echoed.
                if !text.trim().is_empty() || signature.is_some() {
                    let mut part = Map::new();
                    part.insert("text".into(), json!(text));
                    parts.push(with_signature(part, signature));
                }
            }
            Some("thinking") if same_model => {
                let (text, signature) = (str_field(block, "thinking"), signature(block, "thinkingSignature"));
                if !text.trim().is_empty() || signature.is_some() {
                    let mut part = Map::new();
                    part.insert("thought".into(), json!(true));
                    part.insert("text".into(), json!(text));
                    parts.push(with_signature(part, signature));
                }
            }
            Some("toolCall") => {
                let args = block.get("arguments").filter(|a| !a.is_null()).cloned().unwrap_or_else(|| json!({}));
                let mut part = Map::new();
                part.insert("functionCall".into(), json!({"name": str_field(block, "name"), "args": args}));
                parts.push(with_signature(part, signature(block, "thoughtSignature")));
            }
            _ => {}
        }
    }
    parts
}

/// Gemini signatures are base64 bytes; anything else would be rejected.
fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !s.is_empty()
        && s.len() % 4 == 0
        && s.len() - body.len() <= 2
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A tool result as a `functionResponse` part, plus its images (for a following user turn).
fn function_response(model: &Value, message: &Value) -> (Value, Vec<Value>) {
    let parts = message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let of_type = |kind: &'static str| parts.iter().filter(move |p| p.get("type").and_then(Value::as_str) == Some(kind));
    let text = of_type("text").map(|p| str_field(p, "text")).collect::<Vec<_>>().join("\n");
    let supports_images =
        model.get("input").and_then(Value::as_array).is_some_and(|l| l.iter().any(|i| i == "image"));
    let images: Vec<Value> = if supports_images { of_type("image").map(inline_data).collect() } else { Vec::new() };
    let value = if !text.trim().is_empty() {
        text
    } else if images.is_empty() {
        String::new()
    } else {
        "(see attached image)".into()
    };
    let is_error = message.get("isError").and_then(Value::as_bool) == Some(true);
    let response = if is_error { json!({"error": value}) } else { json!({"output": value}) };
    let name = str_field(message, "toolName");
    (json!({"functionResponse": {"name": name, "response": response}}), images)
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

struct GoogleMapper {
    timestamp: u64,
    /// The open text or thinking block: its assembler key and kind.
    current: Option<(String, BlockKind)>,
    next_key: u64,
    /// Tool calls of the message (for the `<n>` of generated ids) and their ids.
    calls: u64,
    ids: Vec<String>,
    finish_reason: Option<String>,
    response_id_sent: bool,
    response_model: Option<String>,
}

impl GoogleMapper {
    fn new(timestamp: u64) -> Self {
        GoogleMapper {
            timestamp,
            current: None,
            next_key: 0,
            calls: 0,
            ids: Vec::new(),
            finish_reason: None,
            response_id_sent: false,
            response_model: None,
        }
    }

    fn new_key(&mut self) -> String {
        self.next_key += 1;
        format!("part{}", self.next_key)
    }

    fn text_part(&mut self, part: &Value, text: &str, asm: &mut Assembler) {
        let kind = if part.get("thought").and_then(Value::as_bool) == Some(true) {
            BlockKind::Thinking
        } else {
            BlockKind::Text
        };
        let key = match &self.current {
            Some((key, current)) if *current == kind => key.clone(),
            _ => {
                let key = self.new_key();
                self.current = Some((key.clone(), kind));
                key
            }
        };
        if kind == BlockKind::Thinking {
            asm.thinking_delta(&key, text);
        } else {
            asm.text_delta(&key, text);
        }
        // A later part without a signature keeps the block's earlier one.
        if let Some(signature) = part.get("thoughtSignature").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            let field = if kind == BlockKind::Thinking { "thinkingSignature" } else { "textSignature" };
            asm.set_field(&key, field, json!(signature));
        }
    }

    /// A whole call: start, one delta with its JSON text, end.
    fn function_call(&mut self, part: &Value, call: &Value, asm: &mut Assembler) {
        self.current = None;
        let name = str_field(call, "name").to_string();
        let given = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty() && !self.ids.iter().any(|i| i == id));
        let id = match given {
            Some(id) => id.to_string(),
            None => loop {
                self.calls += 1;
                let candidate = format!("{name}_{}_{}", self.timestamp, self.calls);
                if !self.ids.contains(&candidate) {
                    break candidate;
                }
            },
        };
        self.ids.push(id.clone());
        let key = self.new_key();
        asm.tool_start(&key, &id, &name);
        if let Some(signature) = part.get("thoughtSignature").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            asm.set_field(&key, "thoughtSignature", json!(signature));
        }
        let args = call.get("args").filter(|a| !a.is_null()).cloned().unwrap_or_else(|| json!({}));
        asm.tool_args_delta(&key, &args.to_string());
        asm.close(&key);
    }
}

impl StreamMapper for GoogleMapper {
    fn on_event(&mut self, _event: Option<&str>, data: &Value, asm: &mut Assembler) {
        if let Some(error) = data.get("error").filter(|e| e.is_object()) {
            // The reference's wording: `got status: <STATUS>. <the chunk as JSON>`.
            let status = error.get("status").or_else(|| error.get("code"));
            let status = match status {
                Some(Value::String(s)) => s.clone(),
                Some(other @ Value::Number(_)) => other.to_string(),
                _ => "UNKNOWN".into(),
            };
            asm.fail(format!("got status: {status}. {data}"), None);
            return;
        }
        if !self.response_id_sent
            && let Some(id) = data.get("responseId").filter(|id| id.as_str().is_some_and(|s| !s.is_empty()))
        {
            self.response_id_sent = true;
            asm.meta("responseId", id.clone());
        }
        if let Some(version) = data.get("modelVersion").and_then(Value::as_str).filter(|v| !v.is_empty())
            && self.response_model.as_deref() != Some(version)
        {
            self.response_model = Some(version.to_string());
            asm.meta("responseModel", json!(version));
        }
        let candidate = data.get("candidates").and_then(|c| c.get(0));
        let parts = candidate.and_then(|c| c.get("content")).and_then(|c| c.get("parts")).and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                self.text_part(part, text, asm);
            }
            if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
                self.function_call(part, call, asm);
            }
        }
        if let Some(reason) = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        if let Some(usage) = data.get("usageMetadata").filter(|u| u.is_object()) {
            asm.usage(&google_usage(usage));
        }
    }

    fn on_end(&mut self, asm: &mut Assembler) {
        if asm.finished() {
            return;
        }
        let Some(reason) = self.finish_reason.clone() else {
            asm.fail("Google stream ended without a finish reason", None);
            return;
        };
        match reason.as_str() {
            "STOP" if asm.has_tool_calls() => asm.finish(StopReason::ToolUse, Some(reason)),
            "STOP" => asm.finish(StopReason::Stop, Some(reason)),
            "MAX_TOKENS" | "CONTINUATION" => asm.finish(StopReason::Length, Some(reason)),
            _ => asm.fail(format!("Provider stopped with: {reason}"), Some(reason)),
        }
    }
}

/// §6.10: cached tokens are part of `promptTokenCount`; thoughts count as output.
fn google_usage(usage: &Value) -> Usage {
    let number = |key: &str| usage.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let (cache_read, thoughts) = (number("cachedContentTokenCount"), number("thoughtsTokenCount"));
    Usage {
        input: number("promptTokenCount") - cache_read,
        output: number("candidatesTokenCount") + thoughts,
        cache_read,
        cache_write: 0.0,
        cache_write_1h: None,
        reasoning: Some(thoughts),
    }
}
