//! `google-generative-ai` (§6.9): builds the `streamGenerateContent?alt=sse` request from the
//! transcript and maps Gemini's `data:` chunks (no terminator) onto the `Assembler`. Owns only
//! this wire format; the transcript clean-up, token limits and sampling merge are shared rules.
//!
//! Generated tool-call ids are `<name>_<timestamp>_<n>`: the timestamp is `options.timestamp`
//! (a number of ms the caller puts into the options JSON, e.g. the message's `Date.now()`),
//! else 0; `n` counts the calls of the message and skips ids already used in it.

use super::assemble::{Assembler, BlockKind, StopReason, Usage};
use super::json::Json;
use super::partial_json::{self, Patch, PatchOp, PathSeg, Scalar};
use super::request::{self, GOOGLE_BASE_URL, object, put};
use super::strict;
use super::transcript::{self, is_same_model};
use super::{HttpRequest, RequestInput, StreamMapper, WireFormat};
use serde_json::{Map, Value, json};
use std::borrow::Cow;

pub struct GoogleGenerativeAi;

/// Schemas nested deeper than this are sent unchanged below that depth.
const MAX_SCHEMA_DEPTH: usize = 256;

impl WireFormat for GoogleGenerativeAi {
    fn build_request(&self, input: &RequestInput<'_>) -> Result<HttpRequest, String> {
        let model = input.model;
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        match request::api_key(input) {
            Some(key) => headers.push(("x-goog-api-key".to_string(), key.to_string())),
            // P-6.2.3: an auth header given in model.headers/options.headers stands in for the key.
            None if request::has_header(input, "x-goog-api-key") || request::has_header(input, "authorization") => {}
            None => {
                let provider = model.get("provider").and_then(Value::as_str).unwrap_or_default();
                return Err(format!("No API key for provider: {provider}"));
            }
        }
        let id = model.get("id").and_then(Value::as_str).unwrap_or_default();
        let url = format!("{}/models/{id}:streamGenerateContent?alt=sse", request::base_url(model, GOOGLE_BASE_URL));
        Ok(HttpRequest { url, headers, body: request_body(input) })
    }

    fn stream_mapper(&self, input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        let timestamp = input.options.get("timestamp").and_then(Value::as_f64).filter(|t| t.is_finite() && *t >= 0.0);
        Box::new(GoogleMapper::new(timestamp.map_or(0, |t| t as u64)))
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
    put(&mut body, "contents", Value::Array(contents(model, &transcript.messages)));
    if !transcript.system_prompt.is_empty() {
        put(
            &mut body,
            "systemInstruction",
            object([("parts", Value::Array(vec![text_part(&transcript.system_prompt)]))]),
        );
    }
    if !transcript.tools.is_empty() {
        let declarations: Vec<Value> = transcript.tools.iter().map(function_declaration).collect();
        put(&mut body, "tools", Value::Array(vec![object([("functionDeclarations", Value::Array(declarations))])]));
        let mode = match options.get("toolChoice").and_then(Value::as_str) {
            Some("none") => Some("NONE"),
            Some("any") => Some("ANY"),
            Some("auto") => Some("AUTO"),
            _ => None,
        };
        if let Some(mode) = mode {
            put(&mut body, "toolConfig", object([("functionCallingConfig", object([("mode", Value::from(mode))]))]));
        }
    }
    let mut config = Map::new();
    let (max_tokens, thinking) = match level {
        Some(level) => {
            let limits = request::thinking_limits(input, level, None);
            (
                limits.max_tokens,
                Some(object([("includeThoughts", Value::Bool(true)), ("thinkingBudget", Value::from(limits.budget))])),
            )
        }
        None => (request::max_tokens(input), None),
    };
    if let Some(max) = max_tokens {
        put(&mut config, "maxOutputTokens", Value::from(max));
    }
    if let Some(t) = options.get("temperature").filter(|t| !t.is_null()) {
        put(&mut config, "temperature", t.clone());
    }
    if let Some(thinking) = thinking {
        put(&mut config, "thinkingConfig", thinking);
    }
    request::merge_sampling(&mut config, input, level);
    if !config.is_empty() {
        put(&mut body, "generationConfig", Value::Object(config));
    }
    Value::Object(body)
}

fn function_declaration(tool: &Value) -> Value {
    let parameters = tool.get("parameters").cloned().unwrap_or_else(|| json!({}));
    object([
        ("name", tool.get("name").cloned().unwrap_or_else(|| Value::from(""))),
        ("description", tool.get("description").cloned().unwrap_or_else(|| Value::from(""))),
        ("parametersJsonSchema", const_as_enum(parameters, false, 0)),
    ])
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
                put(&mut out, "enum", Value::Array(vec![value]));
            }
            Value::Object(out)
        }
        other => other,
    }
}

/// `{role, parts}`.
fn turn(role: &str, parts: Vec<Value>) -> Value {
    object([("role", Value::from(role)), ("parts", Value::Array(parts))])
}

/// `{text}`.
fn text_part(text: &str) -> Value {
    object([("text", Value::from(text))])
}

/// The `contents` turns of the transcript (§6.9).
fn contents(model: &Value, messages: &[Cow<'_, Json<'_>>]) -> Vec<Value> {
    let mut turns: Vec<Value> = Vec::new();
    // Tool results in a row share one user turn; their images follow it.
    let mut responses: Vec<Value> = Vec::new();
    let mut image_turns: Vec<Value> = Vec::new();
    for message in messages {
        let role = message.get("role").and_then(Json::as_str);
        if role != Some("toolResult") {
            flush_tool_results(&mut turns, &mut responses, &mut image_turns);
        }
        match role {
            Some("user") => {
                let parts = user_parts(message.get("content"));
                if !parts.is_empty() {
                    turns.push(turn("user", parts));
                }
            }
            Some("assistant") => {
                let parts = model_parts(model, message);
                if !parts.is_empty() {
                    turns.push(turn("model", parts));
                }
            }
            Some("toolResult") => {
                let (response, images) = function_response(model, message);
                responses.push(response);
                if !images.is_empty() {
                    let mut parts = vec![text_part("Tool result image:")];
                    parts.extend(images);
                    image_turns.push(turn("user", parts));
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
        turns.push(turn("user", std::mem::take(responses)));
    }
    turns.append(image_turns);
}

fn user_parts(content: Option<&Json<'_>>) -> Vec<Value> {
    match content {
        Some(Json::String(text)) => vec![text_part(text)],
        Some(Json::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Json::as_str) {
                Some("text") => Some(text_part(part.str("text"))),
                Some("image") => Some(inline_data(part)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn inline_data(image: &Json<'_>) -> Value {
    let data = object([("mimeType", Value::from(image.str("mimeType"))), ("data", Value::from(image.str("data")))]);
    object([("inlineData", data)])
}

/// An assistant message's parts; signatures (and thoughts) only for the same model.
fn model_parts(model: &Value, message: &Json<'_>) -> Vec<Value> {
    let same_model = is_same_model(message, model);
    let signature = |block: &Json, key: &str| {
        block.get(key).and_then(Json::as_str).filter(|s| same_model && is_base64(s)).map(str::to_string)
    };
    let with_signature = |mut part: Map<String, Value>, signature: Option<String>| {
        if let Some(signature) = signature {
            put(&mut part, "thoughtSignature", Value::from(signature));
        }
        Value::Object(part)
    };
    let blocks = message.get("content").and_then(Json::as_array).unwrap_or_default();
    let mut parts = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Json::as_str) {
            Some("text") => {
                let (text, signature) = (block.str("text"), signature(block, "textSignature"));
                // An empty part is kept only when it carries a signature Gemini wants echoed.
                if !text.trim().is_empty() || signature.is_some() {
                    let mut part = Map::new();
                    put(&mut part, "text", Value::from(text));
                    parts.push(with_signature(part, signature));
                }
            }
            Some("thinking") if same_model => {
                let (text, signature) = (block.str("thinking"), signature(block, "thinkingSignature"));
                if !text.trim().is_empty() || signature.is_some() {
                    let mut part = Map::new();
                    put(&mut part, "thought", Value::Bool(true));
                    put(&mut part, "text", Value::from(text));
                    parts.push(with_signature(part, signature));
                }
            }
            Some("toolCall") => {
                let args = block.get("arguments").filter(|a| !a.is_null()).map_or_else(|| json!({}), Json::to_value);
                let mut part = Map::new();
                put(&mut part, "functionCall", object([("name", Value::from(block.str("name"))), ("args", args)]));
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
        && s.len().is_multiple_of(4)
        && s.len() - body.len() <= 2
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A tool result as a `functionResponse` part, plus its images (for a following user turn).
fn function_response(model: &Value, message: &Json<'_>) -> (Value, Vec<Value>) {
    let parts = message.get("content").and_then(Json::as_array).unwrap_or_default();
    let of_type = |kind: &'static str| parts.iter().filter(move |p| p.kind() == kind);
    let text = of_type("text").map(|p| p.str("text")).collect::<Vec<_>>().join("\n");
    let supports_images = model.get("input").and_then(Value::as_array).is_some_and(|l| l.iter().any(|i| i == "image"));
    let images: Vec<Value> = if supports_images { of_type("image").map(inline_data).collect() } else { Vec::new() };
    let value = if !text.trim().is_empty() {
        text
    } else if images.is_empty() {
        String::new()
    } else {
        "(see attached image)".into()
    };
    let is_error = message.get("isError").and_then(Json::as_bool) == Some(true);
    let response = object([(if is_error { "error" } else { "output" }, Value::from(value))]);
    let name = message.str("toolName");
    (object([("functionResponse", object([("name", Value::from(name)), ("response", response)]))]), images)
}

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

/// The wire format's name in stream errors.
const FORMAT: &str = "google-generative-ai";

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
    /// Gemini 3's streamed call (`willContinue`), whose arguments arrive as `partialArgs` (issue 33).
    streamed: Option<StreamedCall>,
}

/// A call whose arguments stream as `partialArgs` (`{jsonPath, stringValue | numberValue | boolValue | nullValue,
/// willContinue}`): the value built so far, and the path of a string that continues in the next fragment.
struct StreamedCall {
    key: String,
    args: Value,
    continuing: Option<Vec<PathSeg>>,
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
            streamed: None,
            response_model: None,
        }
    }

    fn new_key(&mut self) -> String {
        self.next_key += 1;
        format!("part{}", self.next_key)
    }

    fn text_part(&mut self, part: &Json<'_>, text: &str, asm: &mut Assembler) {
        let kind = if part.get("thought").and_then(Json::as_bool) == Some(true) {
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
            asm.sent_delta(&key, BlockKind::Thinking, text);
        } else {
            asm.sent_delta(&key, BlockKind::Text, text);
        }
        // A later part without a signature keeps the block's earlier one.
        if let Some(signature) = part.get("thoughtSignature").and_then(Json::as_str).filter(|s| !s.is_empty()) {
            let field = if kind == BlockKind::Thinking { "thinkingSignature" } else { "textSignature" };
            asm.set_field(&key, field, Value::from(signature));
        }
    }

    /// One part of `candidates[0].content.parts`. Issue 13: fields of the wrong type are the
    /// stream's error (`Err`), never read as missing.
    fn part(&mut self, position: usize, part: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        let label = format!("candidates[0].content.parts[{position}]");
        if !part.is_object() {
            let got = strict::type_name(Some(part));
            return Err(format!("Malformed {FORMAT} stream: {label} must be an object, got {got}"));
        }
        strict::optional_str(FORMAT, &label, part, "thoughtSignature")?;
        if let Some(text) = strict::optional_str(FORMAT, &label, part, "text")? {
            self.text_part(part, text, asm);
        }
        match part.get("functionCall") {
            None | Some(Json::Null) => Ok(()),
            Some(call) if call.is_object() => self.function_call(&format!("{label}.functionCall"), part, call, asm),
            other => Err(strict::message(FORMAT, &label, "functionCall", "an object", other)),
        }
    }

    /// A whole call: start, one delta with its JSON text, end. `name` is required, `id` and
    /// `args` (an object) optional. Gemini 3 may stream a call instead (issue 33): a part with `name` and
    /// `willContinue: true` starts it, parts without `name` carry `partialArgs`, and the first part without
    /// `willContinue` ends it — one call, its arguments assembled, a `toolcall_delta` per fragment.
    fn function_call(
        &mut self,
        label: &str,
        part: &Json<'_>,
        call: &Json<'_>,
        asm: &mut Assembler,
    ) -> Result<(), String> {
        let continues = call.get("willContinue").and_then(Json::as_bool) == Some(true);
        let named = call.get("name").is_some_and(|n| !matches!(n, Json::Null));
        if !named && self.streamed.is_some() {
            self.partial_args(label, call, asm)?;
            if !continues {
                self.end_streamed(asm);
            }
            return Ok(());
        }
        self.end_streamed(asm);
        let name = strict::required_str(FORMAT, label, call, "name")?.to_string();
        let given = strict::optional_str(FORMAT, label, call, "id")?;
        let args = match call.get("args") {
            None | Some(Json::Null) => "{}".to_string(),
            Some(args) if args.is_object() => args.to_string(),
            other => return Err(strict::message(FORMAT, label, "args", "an object", other)),
        };
        self.current = None;
        let given = given.filter(|id| !id.is_empty() && !self.ids.iter().any(|i| i == id));
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
        if let Some(signature) = part.get("thoughtSignature").and_then(Json::as_str).filter(|s| !s.is_empty()) {
            asm.set_field(&key, "thoughtSignature", Value::from(signature));
        }
        if continues && call.get("args").is_none_or(|a| matches!(a, Json::Null)) {
            self.streamed = Some(StreamedCall { key, args: Value::Object(Map::new()), continuing: None });
            return self.partial_args(label, call, asm);
        }
        asm.tool_args_delta(&key, &args);
        asm.close(&key);
        Ok(())
    }

    /// Applies a streamed call's `partialArgs` to its arguments: each fragment sets (or, continuing a string,
    /// appends to) the value at its `jsonPath`, creating the objects and arrays on the way, and emits one
    /// `toolcall_delta` whose `delta` is the fragment as JSON.
    fn partial_args(&mut self, label: &str, call: &Json<'_>, asm: &mut Assembler) -> Result<(), String> {
        let Some(streamed) = self.streamed.as_mut() else { return Ok(()) };
        let fragments = match call.get("partialArgs") {
            None | Some(Json::Null) => return Ok(()),
            Some(Json::Array(fragments)) => fragments,
            other => return Err(strict::message(FORMAT, label, "partialArgs", "an array", other)),
        };
        for (position, fragment) in fragments.iter().enumerate() {
            let label = format!("{label}.partialArgs[{position}]");
            let path_text = strict::required_str(FORMAT, &label, fragment, "jsonPath")?;
            let path = parse_json_path(path_text).ok_or_else(|| {
                format!("Malformed {FORMAT} stream: {label}.jsonPath is not a path this provider reads: {path_text}")
            })?;
            let mut patches = Vec::new();
            ensure_containers(&mut streamed.args, &path, &mut patches);
            let continues = fragment.get("willContinue").and_then(Json::as_bool) == Some(true);
            let op = if let Some(text) = strict::optional_str(FORMAT, &label, fragment, "stringValue")? {
                if streamed.continuing.as_ref() == Some(&path) {
                    PatchOp::AppendString(text.to_string())
                } else {
                    PatchOp::SetString(text.to_string())
                }
            } else if let Some(Json::Number(n)) = fragment.get("numberValue") {
                PatchOp::SetValue(Scalar::number(n))
            } else if let Some(Json::Bool(b)) = fragment.get("boolValue") {
                PatchOp::SetValue(Scalar::Bool(*b))
            } else if fragment.get("nullValue").is_some() {
                PatchOp::SetValue(Scalar::Null)
            } else {
                continue;
            };
            streamed.continuing =
                (continues && matches!(op, PatchOp::SetString(_) | PatchOp::AppendString(_))).then(|| path.clone());
            let patch = Patch { path, op };
            partial_json::apply(&mut streamed.args, &patch);
            patches.push(patch);
            asm.tool_args_patched(&streamed.key, &fragment.to_string(), patches);
        }
        Ok(())
    }

    /// Closes the streamed call (if any) with the arguments its fragments built.
    fn end_streamed(&mut self, asm: &mut Assembler) {
        if let Some(streamed) = self.streamed.take() {
            asm.tool_args_complete(&streamed.key, &streamed.args.to_string());
            asm.close(&streamed.key);
        }
    }
}

/// `$.a.b[0].c` (also `['a']`) as path segments; `None` for anything else.
fn parse_json_path(text: &str) -> Option<Vec<PathSeg>> {
    let mut rest = text.strip_prefix('$')?;
    let mut path = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let (key, tail) = after.split_at(end);
            if key.is_empty() {
                return None;
            }
            path.push(PathSeg::Key(key.to_string()));
            rest = tail;
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let (inner, tail) = after.split_at(end);
            rest = tail.strip_prefix(']')?;
            let quoted = inner
                .strip_prefix('\'')
                .and_then(|i| i.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|i| i.strip_suffix('"')));
            match quoted {
                Some(key) => path.push(PathSeg::Key(key.to_string())),
                None => path.push(PathSeg::Index(inner.parse().ok()?)),
            }
        } else {
            return None;
        }
    }
    (!path.is_empty()).then_some(path)
}

/// Creates the containers `path` passes through (an object before a key, an array before an index; missing array
/// items before an index as `null`), recording each creation as a patch for the live JS value.
fn ensure_containers(root: &mut Value, path: &[PathSeg], patches: &mut Vec<Patch>) {
    let mut node = root;
    for (depth, next) in path.iter().enumerate().skip(1) {
        let Some(seg) = path.get(depth - 1) else { return };
        let here = path.get(..depth).unwrap_or_default().to_vec();
        // Fill an array up to the index the path takes.
        if let (PathSeg::Index(i), Value::Array(list)) = (seg, &mut *node) {
            while list.len() < *i {
                let mut filler = here.clone();
                if let Some(PathSeg::Index(last)) = filler.last_mut() {
                    *last = list.len();
                }
                patches.push(Patch { path: filler, op: PatchOp::SetValue(Scalar::Null) });
                list.push(Value::Null);
            }
        }
        let wanted_array = matches!(next, PathSeg::Index(_));
        let slot = match (seg, node) {
            (PathSeg::Key(k), Value::Object(map)) => {
                if !map.get(k).is_some_and(|v| v.is_array() == wanted_array && (v.is_array() || v.is_object())) {
                    let op = if wanted_array { PatchOp::SetArray } else { PatchOp::SetObject };
                    map.insert(
                        k.clone(),
                        if wanted_array { Value::Array(Vec::new()) } else { Value::Object(Map::new()) },
                    );
                    patches.push(Patch { path: here, op });
                }
                map.get_mut(k)
            }
            (PathSeg::Index(i), Value::Array(list)) => {
                if !list.get(*i).is_some_and(|v| v.is_array() == wanted_array && (v.is_array() || v.is_object())) {
                    let op = if wanted_array { PatchOp::SetArray } else { PatchOp::SetObject };
                    let value = if wanted_array { Value::Array(Vec::new()) } else { Value::Object(Map::new()) };
                    if let Some(slot) = list.get_mut(*i) {
                        *slot = value;
                    } else {
                        list.push(value);
                    }
                    patches.push(Patch { path: here, op });
                }
                list.get_mut(*i)
            }
            _ => None,
        };
        let Some(slot) = slot else { return };
        node = slot;
    }
    // The last segment: an array index past the end gets `null`s before it.
    if let (Some(PathSeg::Index(i)), Value::Array(list)) = (path.last(), node) {
        while list.len() < *i {
            let mut filler = path.to_vec();
            if let Some(PathSeg::Index(last)) = filler.last_mut() {
                *last = list.len();
            }
            patches.push(Patch { path: filler, op: PatchOp::SetValue(Scalar::Null) });
            list.push(Value::Null);
        }
    }
}

impl StreamMapper for GoogleMapper {
    fn on_event(&mut self, _event: Option<&str>, data: &Json<'_>, asm: &mut Assembler) {
        if let Some(error) = data.get("error").filter(|e| e.is_object()) {
            // The reference's wording: `got status: <STATUS>. <the chunk as JSON>`.
            let status = error.get("status").or_else(|| error.get("code"));
            let status = match status {
                Some(Json::String(s)) => s.to_string(),
                Some(other @ Json::Number(_)) => other.to_string(),
                _ => "UNKNOWN".into(),
            };
            asm.fail(format!("got status: {status}. {data}"), None);
            return;
        }
        if !self.response_id_sent
            && let Some(id) = data.get("responseId").filter(|id| id.as_str().is_some_and(|s| !s.is_empty()))
        {
            self.response_id_sent = true;
            asm.meta("responseId", id.to_value());
        }
        if let Some(version) = data.get("modelVersion").and_then(Json::as_str).filter(|v| !v.is_empty())
            && self.response_model.as_deref() != Some(version)
        {
            self.response_model = Some(version.to_string());
            asm.meta("responseModel", Value::from(version));
        }
        let candidate = data.get("candidates").and_then(Json::as_array).and_then(<[_]>::first);
        let parts = candidate.and_then(|c| c.get("content")).and_then(|c| c.get("parts")).and_then(Json::as_array);
        for (position, part) in parts.into_iter().flatten().enumerate() {
            if let Err(message) = self.part(position, part, asm) {
                asm.fail(message, None);
                return;
            }
        }
        if let Some(reason) = candidate.and_then(|c| c.get("finishReason")).and_then(Json::as_str) {
            // §6.10: a reason the API does not define ends the stream at once, before the chunk's usage (pi-ai's
            // mapping throws there).
            if !FINISH_REASONS.contains(&reason) {
                asm.fail(format!("Unhandled stop reason: {reason}"), Some(reason.to_string()));
                return;
            }
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
        self.end_streamed(asm);
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

/// The finish reasons the Gemini API defines (`FinishReason`): `STOP`, the two of `length`, and those that end the
/// reply with `Provider stopped with: <REASON>` (§6.10). Any other is `Unhandled stop reason: <REASON>`.
const FINISH_REASONS: [&str; 19] = [
    "STOP",
    "MAX_TOKENS",
    "CONTINUATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "SAFETY",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
    "RECITATION",
    "FINISH_REASON_UNSPECIFIED",
    "OTHER",
    "LANGUAGE",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "NO_IMAGE",
];

/// §6.10: cached tokens are part of `promptTokenCount`; thoughts count as output; `totalTokens` is the API's.
fn google_usage(usage: &Json<'_>) -> Usage {
    let number = |key: &str| usage.get(key).and_then(Json::as_f64).unwrap_or(0.0);
    let (cache_read, thoughts) = (number("cachedContentTokenCount"), number("thoughtsTokenCount"));
    Usage {
        input: number("promptTokenCount") - cache_read,
        output: number("candidatesTokenCount") + thoughts,
        cache_read,
        cache_write: 0.0,
        cache_write_1h: None,
        reasoning: Some(thoughts),
        // Issue 33: the API's own total, which also counts tool-use prompt tokens (code execution), as the reference.
        total: Some(number("totalTokenCount")),
        billed: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::super::assemble::apply_native;
    use super::super::request::test_driver;
    use super::*;
    use proptest::prelude::*;

    const NOW: u64 = 1_700_000_000_000;

    fn model() -> Value {
        json!({
            "id": "gemini-2.5-flash", "name": "Gemini 2.5 Flash", "api": "google-generative-ai", "provider": "google",
            "baseUrl": "https://generativelanguage.googleapis.com/v1beta", "input": ["text", "image"], "reasoning": true,
            "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.075, "cacheWrite": 0.0},
            "contextWindow": 0, "maxTokens": 8000,
        })
    }

    fn run(sse: &str) -> (Value, Vec<String>) {
        test_driver::run(&GoogleGenerativeAi, &model(), &json!({"timestamp": NOW}), sse)
    }

    /// Gemini's framing: `data:` lines only, no terminator.
    fn sse(chunks: &[Value]) -> String {
        let events: Vec<(Option<&str>, Value)> = chunks.iter().map(|c| (None, c.clone())).collect();
        test_driver::sse(&events)
    }

    fn names(list: &str) -> Vec<String> {
        std::iter::once("start").chain(list.split_whitespace()).map(str::to_string).collect()
    }

    fn chunk(parts: Value, finish: Option<&str>) -> Value {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(reason) = finish {
            candidate["finishReason"] = json!(reason);
        }
        json!({"candidates": [candidate], "modelVersion": "gemini-2.5-flash-001", "responseId": "resp-g1"})
    }

    fn usage_metadata() -> Value {
        json!({"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 10,
               "cachedContentTokenCount": 30, "totalTokenCount": 130})
    }

    /// 70 input, 30 output (20 + 10 thoughts), 30 cached.
    fn usage() -> Value {
        let c = [(0.3 / 1e6) * 70.0, (2.5 / 1e6) * 30.0, (0.075 / 1e6) * 30.0, 0.0];
        json!({"input": 70.0, "output": 30.0, "cacheRead": 30.0, "cacheWrite": 0.0, "reasoning": 10.0, "totalTokens": 130.0,
               "cost": {"input": c[0], "output": c[1], "cacheRead": c[2], "cacheWrite": c[3], "total": c[0] + c[1] + c[2] + c[3],
                        "totalFromProvider": false}})
    }

    fn expected(content: Value, tail: Value) -> Value {
        let mut message = test_driver::initial_message(&model());
        message["content"] = content;
        message["responseId"] = json!("resp-g1");
        message["responseModel"] = json!("gemini-2.5-flash-001");
        for (k, v) in tail.as_object().unwrap() {
            message[k] = v.clone();
        }
        message
    }

    // ---- stream fixtures ----

    #[test]
    fn issue_33_streamed_call_assembles_its_partial_args() {
        let part = |call: Value| chunk(json!([{"functionCall": call}]), None);
        let arg = |path: &str, value: Value| {
            let mut fragment = json!({"jsonPath": path});
            if let (Some(f), Some(v)) = (fragment.as_object_mut(), value.as_object()) {
                f.extend(v.clone());
            }
            fragment
        };
        let body = sse(&[
            part(json!({"name": "cook", "willContinue": true})),
            part(
                json!({"partialArgs": [arg("$.r.items[1].name", json!({"stringValue": "Ri", "willContinue": true}))], "willContinue": true}),
            ),
            part(
                json!({"partialArgs": [arg("$.r.items[1].name", json!({"stringValue": "ce"}))], "willContinue": true}),
            ),
            part(
                json!({"partialArgs": [arg("$.r['n']", json!({"numberValue": 2})), arg("$.ok", json!({"boolValue": true}))], "willContinue": true}),
            ),
            part(json!({"partialArgs": [arg("$.none", json!({"nullValue": null}))]})),
            chunk(json!([{"functionCall": {"name": "whole", "args": {"a": 1}}}]), Some("STOP")),
        ]);
        let (message, events) = run(&body);
        assert_eq!(
            events,
            names(
                "toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_delta toolcall_delta toolcall_end toolcall_start toolcall_delta toolcall_end done"
            )
        );
        let calls = message["content"].as_array().unwrap();
        assert_eq!(calls[0]["name"], "cook");
        assert_eq!(
            calls[0]["arguments"],
            json!({"r": {"items": [null, {"name": "Rice"}], "n": 2}, "ok": true, "none": null})
        );
        assert_eq!(calls[1]["arguments"], json!({"a": 1}));
        assert_eq!(message["stopReason"], "toolUse");
    }

    #[test]
    fn issue_33_json_paths() {
        use super::super::partial_json::PathSeg::{Index, Key};
        assert_eq!(parse_json_path("$.a[2]['b.c']"), Some(vec![Key("a".into()), Index(2), Key("b.c".into())]));
        for bad in ["a", "$", "$.", "$[x]", "$.a[1", "$..a"] {
            assert_eq!(parse_json_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn p_6_9_text_stream() {
        let mut last = chunk(json!([{"text": "!"}]), Some("STOP"));
        last["usageMetadata"] = usage_metadata();
        let body = sse(&[chunk(json!([{"text": "Hel"}]), None), chunk(json!([{"text": "lo wörld 👋"}]), None), last]);
        let (message, events) = run(&body);
        assert_eq!(events, names("text_start text_delta text_delta text_delta text_end done"));
        let want = expected(
            json!([{"type": "text", "text": "Hello wörld 👋!"}]),
            json!({"usage": usage(), "stopReason": "stop", "rawStopReason": "STOP"}),
        );
        assert_eq!(message, want);
    }

    #[test]
    fn p_6_9_thinking_then_text_with_signatures_crlf_framing() {
        let chunks = [
            chunk(json!([{"text": "Let me ", "thought": true, "thoughtSignature": "c2lnMQ=="}]), None),
            chunk(json!([{"text": "think.", "thought": true}]), None),
            chunk(json!([{"text": "Answer", "thoughtSignature": "c2lnMg=="}]), None),
            chunk(json!([{"text": "", "thoughtSignature": "c2lnMw=="}]), Some("STOP")),
        ];
        let body = sse(&chunks).replace('\n', "\r\n");
        let (message, events) = run(&body);
        // Issue 33: the empty text part carrying the signature is a delta too (as the reference emits it).
        assert_eq!(
            events,
            names(
                "thinking_start thinking_delta thinking_delta thinking_end text_start text_delta text_delta text_end done"
            )
        );
        let want = expected(
            json!([
                {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "c2lnMQ=="},
                {"type": "text", "text": "Answer", "textSignature": "c2lnMw=="},
            ]),
            json!({"stopReason": "stop", "rawStopReason": "STOP"}),
        );
        assert_eq!(message, want);
    }

    #[test]
    fn p_6_9_interleaved_and_parallel_tool_calls() {
        let body = sse(&[
            chunk(json!([{"text": "Looking up."}]), None),
            chunk(
                json!([{"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "QUJD"}]),
                None,
            ),
            chunk(json!([{"text": "And "}, {"text": "time."}]), None),
            chunk(
                json!([
                    {"functionCall": {"name": "time", "args": {"zone": "UTC", "list": [1, 2.5, null]}, "id": "call_x"}},
                    {"functionCall": {"name": "time", "id": "call_x"}},
                    {"functionCall": {"name": "weather", "args": {}}},
                ]),
                Some("STOP"),
            ),
        ]);
        let (message, events) = run(&body);
        assert_eq!(
            events,
            names(
                "text_start text_delta text_end toolcall_start toolcall_delta toolcall_end text_start text_delta text_delta \
                 text_end toolcall_start toolcall_delta toolcall_end toolcall_start toolcall_delta toolcall_end \
                 toolcall_start toolcall_delta toolcall_end done"
            )
        );
        let want = expected(
            json!([
                {"type": "text", "text": "Looking up."},
                {"type": "toolCall", "id": format!("weather_{NOW}_1"), "name": "weather", "arguments": {"city": "Paris"},
                 "thoughtSignature": "QUJD"},
                {"type": "text", "text": "And time."},
                {"type": "toolCall", "id": "call_x", "name": "time", "arguments": {"zone": "UTC", "list": [1, 2.5, null]}},
                // A repeated id is replaced by a generated one; missing args are `{}`.
                {"type": "toolCall", "id": format!("time_{NOW}_2"), "name": "time", "arguments": {}},
                {"type": "toolCall", "id": format!("weather_{NOW}_3"), "name": "weather", "arguments": {}},
            ]),
            json!({"stopReason": "toolUse", "rawStopReason": "STOP"}),
        );
        assert_eq!(message, want);
    }

    /// Issue 13: parts and functionCall fields of the wrong type (or a call without a name) end
    /// the stream with an error naming the part and field.
    #[test]
    fn issue_13_malformed_parts_are_stream_errors() {
        let call = |call: Value| json!({"functionCall": call});
        let at = "candidates[0].content.parts[1]";
        let cases = [
            (call(json!({"args": {}})), format!("{at}.functionCall: \"name\" must be a non-empty string, got missing")),
            (call(json!({"name": 5})), format!("{at}.functionCall: \"name\" must be a non-empty string, got a number")),
            (call(json!({"name": ""})), format!("{at}.functionCall: \"name\" must be a non-empty string, got \"\"")),
            (call(json!({"name": "f", "id": 1})), format!("{at}.functionCall: \"id\" must be a string, got a number")),
            (
                call(json!({"name": "f", "args": "{}"})),
                format!("{at}.functionCall: \"args\" must be an object, got a string"),
            ),
            (
                call(json!({"name": "f", "args": [1]})),
                format!("{at}.functionCall: \"args\" must be an object, got an array"),
            ),
            (json!({"functionCall": "f"}), format!("{at}: \"functionCall\" must be an object, got a string")),
            (json!({"text": 5}), format!("{at}: \"text\" must be a string, got a number")),
            (
                json!({"text": "x", "thoughtSignature": 5}),
                format!("{at}: \"thoughtSignature\" must be a string, got a number"),
            ),
            (json!("text"), format!("{at} must be an object, got a string")),
        ];
        for (part, want) in cases {
            let good = json!({"functionCall": {"name": "ok", "id": "c1", "args": {}}});
            let (message, events) = run(&sse(&[chunk(json!([good, part]), Some("STOP"))]));
            assert_eq!(events.last().map(String::as_str), Some("error"), "{part}");
            assert_eq!(message["stopReason"], "error");
            assert_eq!(message["errorMessage"], format!("Malformed google-generative-ai stream: {want}"), "{part}");
            // The good call before it stays as it was; no call with invented fields follows.
            assert_eq!(
                message["content"],
                json!([{"type": "toolCall", "id": "c1", "name": "ok", "arguments": {}}]),
                "{part}"
            );
        }
        let (message, _) = run(&sse(&[chunk(
            json!([{"text": null, "functionCall": {"name": "f", "id": null, "args": null}}]),
            Some("STOP"),
        )]));
        assert_eq!(message["stopReason"], "toolUse");
        assert_eq!(message["content"][0]["name"], "f");
        assert_eq!(message["content"][0]["arguments"], json!({}));
    }

    #[test]
    fn p_6_9_generated_ids_without_timestamp_use_zero() {
        let body = sse(&[chunk(json!([{"functionCall": {"name": "f", "args": {"a": 1}}}]), Some("STOP"))]);
        let (message, _) = test_driver::run(&GoogleGenerativeAi, &model(), &json!({}), &body);
        assert_eq!(message["content"][0]["id"], "f_0_1");
    }

    #[test]
    fn p_6_9_usage_only_final_chunk() {
        let body = sse(&[
            chunk(json!([{"text": "Hi"}]), Some("STOP")),
            json!({"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1}, "modelVersion": "gemini-2.5-flash-001"}),
            json!({"usageMetadata": usage_metadata(), "modelVersion": "gemini-2.5-flash-001"}),
        ]);
        let (message, events) = run(&body);
        assert_eq!(events, names("text_start text_delta text_end done"));
        let want = expected(
            json!([{"type": "text", "text": "Hi"}]),
            json!({"usage": usage(), "stopReason": "stop", "rawStopReason": "STOP"}),
        );
        assert_eq!(message, want);
    }

    #[test]
    fn p_6_10_safety_refusal_is_an_error() {
        let blocked = json!({"candidates": [{"finishReason": "SAFETY", "index": 0,
                              "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true}]}],
                             "modelVersion": "gemini-2.5-flash-001", "responseId": "resp-g1"});
        let (message, events) = run(&sse(&[chunk(json!([{"text": "I can"}]), None), blocked]));
        assert_eq!(events, names("text_start text_delta text_end error"));
        let want = expected(
            json!([{"type": "text", "text": "I can"}]),
            json!({"stopReason": "error", "errorMessage": "Provider stopped with: SAFETY", "rawStopReason": "SAFETY"}),
        );
        assert_eq!(message, want);
    }

    /// A finish reason the API does not define ends the stream at its chunk (its usage unread), as pi-ai's mapping
    /// throws `Unhandled stop reason` there.
    #[test]
    fn p_6_10_an_unknown_finish_reason_is_unhandled() {
        let odd = json!({"candidates": [{"finishReason": "STOPPED", "index": 0}],
                         "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}});
        let (message, events) = run(&sse(&[chunk(json!([{"text": "I can"}]), None), odd]));
        assert_eq!(events, names("text_start text_delta text_end error"));
        assert_eq!(message["errorMessage"], "Unhandled stop reason: STOPPED");
        assert_eq!(message["rawStopReason"], "STOPPED");
        assert_eq!(message["usage"]["input"], 0, "the chunk's usage is not read");
    }

    #[test]
    fn p_6_9_error_chunk_carries_the_provider_message() {
        let error = json!({"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}});
        let (message, events) = run(&sse(&[
            chunk(json!([{"text": "Par"}]), None),
            error.clone(),
            chunk(json!([{"text": "x"}]), Some("STOP")),
        ]));
        assert_eq!(events, names("text_start text_delta text_end error"));
        let want = expected(
            json!([{"type": "text", "text": "Par"}]),
            json!({"stopReason": "error", "errorMessage": format!("got status: RESOURCE_EXHAUSTED. {error}")}),
        );
        assert_eq!(message, want);
        assert!(message["errorMessage"].as_str().unwrap().contains("Resource has been exhausted (e.g. check quota)."));
    }

    #[test]
    fn p_6_9_no_finish_reason_is_an_error() {
        let (message, events) = run(&sse(&[chunk(json!([{"text": "cut"}]), None)]));
        assert_eq!(events, names("text_start text_delta text_end error"));
        let want = expected(
            json!([{"type": "text", "text": "cut"}]),
            json!({"stopReason": "error", "errorMessage": "Google stream ended without a finish reason"}),
        );
        assert_eq!(message, want);
        let (message, events) = run("");
        assert_eq!(events, names("error"));
        assert_eq!(message["errorMessage"], "Google stream ended without a finish reason");
    }

    #[test]
    fn p_6_10_max_tokens_and_continuation_are_length() {
        for reason in ["MAX_TOKENS", "CONTINUATION"] {
            let (message, events) = run(&sse(&[chunk(json!([{"text": "The answer is"}]), Some(reason))]));
            assert_eq!(events, names("text_start text_delta text_end done"));
            let want = expected(
                json!([{"type": "text", "text": "The answer is"}]),
                json!({"stopReason": "length", "rawStopReason": reason}),
            );
            assert_eq!(message, want);
        }
        // With tool calls, MAX_TOKENS stays `length`; `STOP` would be `toolUse`.
        let body = sse(&[chunk(json!([{"functionCall": {"name": "f", "args": {}}}]), Some("MAX_TOKENS"))]);
        assert_eq!(run(&body).0["stopReason"], "length");
    }

    // ---- request fixtures ----

    fn usage_zero() -> Value {
        json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
    }

    fn build(model: &Value, messages: &[Value], options: Value, key: Option<&str>) -> Result<HttpRequest, String> {
        let messages = &crate::providers::json::from_values(messages);
        GoogleGenerativeAi.build_request(&RequestInput {
            model,
            messages,
            options: &options,
            api_key: key,
            messages_json_len: None,
        })
    }

    #[test]
    fn p_6_9_request_full_body() {
        let messages = [
            json!({"role": "system", "content": "You are helpful.", "timestamp": 0,
                   "toolsAdded": [{"name": "get", "description": "Get it", "parameters": {"type": "object",
                       "properties": {"x": {"type": "string", "const": "k"}, "n": {"const": 3}, "b": {"const": true}}}}]}),
            json!({"role": "user", "content": "hi", "timestamp": 1}),
            json!({"role": "assistant", "api": "google-generative-ai", "provider": "google", "model": "gemini-2.5-flash",
                   "usage": usage_zero(), "stopReason": "toolUse", "timestamp": 2, "content": [
                       {"type": "thinking", "thinking": "hmm", "thinkingSignature": "c2lnMQ=="},
                       {"type": "text", "text": "Hello", "textSignature": "c2lnMg=="},
                       {"type": "text", "text": "  "},
                       {"type": "toolCall", "id": "get_1", "name": "get", "arguments": {"x": "y"}, "thoughtSignature": "c2lnMw=="},
                       {"type": "toolCall", "id": "get_2", "name": "get", "arguments": {"x": "z"}, "thoughtSignature": "not base64!"}]}),
            json!({"role": "toolResult", "toolCallId": "get_1", "toolName": "get", "isError": false, "timestamp": 3,
                   "content": [{"type": "text", "text": "res"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
            json!({"role": "toolResult", "toolCallId": "get_2", "toolName": "get", "isError": true, "timestamp": 3,
                   "content": [{"type": "text", "text": "bad"}]}),
            json!({"role": "user", "timestamp": 4,
                   "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "BBBB", "mimeType": "image/jpeg"}]}),
        ];
        let options = json!({"reasoning": "medium", "maxTokens": 100, "temperature": 0.5, "toolChoice": "none"});
        let request = build(&model(), &messages, options, Some("gk")).unwrap();
        assert_eq!(
            request.url,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            request.headers,
            vec![
                ("content-type".to_string(), "application/json".to_string()),
                ("x-goog-api-key".to_string(), "gk".to_string())
            ]
        );
        let want = json!({
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [
                    {"thought": true, "text": "hmm", "thoughtSignature": "c2lnMQ=="},
                    {"text": "Hello", "thoughtSignature": "c2lnMg=="},
                    {"functionCall": {"name": "get", "args": {"x": "y"}}, "thoughtSignature": "c2lnMw=="},
                    {"functionCall": {"name": "get", "args": {"x": "z"}}},
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "get", "response": {"output": "res"}}},
                    {"functionResponse": {"name": "get", "response": {"error": "bad"}}},
                ]},
                {"role": "user", "parts": [{"text": "Tool result image:"}, {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]},
                {"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/jpeg", "data": "BBBB"}}]},
            ],
            "systemInstruction": {"parts": [{"text": "You are helpful."}]},
            "tools": [{"functionDeclarations": [{"name": "get", "description": "Get it", "parametersJsonSchema": {"type": "object",
                "properties": {"x": {"type": "string", "enum": ["k"]}, "n": {"enum": [3]}, "b": {"const": true}}}}]}],
            "toolConfig": {"functionCallingConfig": {"mode": "NONE"}},
            // P-6.2.7: min(100 + 8192, 8000) = 8000 ≤ 8192, so the budget is 8000 − 1024.
            "generationConfig": {"maxOutputTokens": 8000, "temperature": 0.5,
                                 "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 6976}},
        });
        assert_eq!(request.body, want);
        assert_eq!(serde_json::to_string(&request.body).unwrap(), serde_json::to_string(&want).unwrap(), "key order");
    }

    #[test]
    fn p_6_9_request_plain_model_foreign_history() {
        let messages = [
            json!({"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "image", "data": "B", "mimeType": "image/png"}],
                   "timestamp": 1}),
            json!({"role": "assistant", "api": "openai-responses", "provider": "openai", "model": "gpt-5", "stopReason": "toolUse",
                   "usage": usage_zero(), "timestamp": 2, "content": [
                       {"type": "thinking", "thinking": "secret", "thinkingSignature": "c2lnMQ=="},
                       {"type": "text", "text": "A", "textSignature": "c2lnMg=="},
                       {"type": "toolCall", "id": "call_1|fc_1", "name": "get", "arguments": {"n": 1}, "thoughtSignature": "c2lnMw=="}]}),
            json!({"role": "toolResult", "toolCallId": "call_1|fc_1", "toolName": "get", "isError": false, "timestamp": 3,
                   "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
            json!({"role": "assistant", "api": "openai-responses", "provider": "openai", "model": "gpt-5", "stopReason": "error",
                   "usage": usage_zero(), "timestamp": 4, "content": [{"type": "text", "text": "dropped"}]}),
            json!({"role": "user", "content": "next", "timestamp": 5}),
        ];
        let model = json!({"id": "gemma-3", "api": "google-generative-ai", "provider": "google", "baseUrl": "http://localhost:9/v1beta/",
                           "input": ["text"], "reasoning": false, "maxTokens": 0, "contextWindow": 0,
                           "samplingParams": {"topK": 40}});
        let request = build(&model, &messages, json!({"reasoning": "high", "toolChoice": "none"}), Some("gk")).unwrap();
        assert_eq!(request.url, "http://localhost:9/v1beta/models/gemma-3:streamGenerateContent?alt=sse");
        let want = json!({
            "contents": [
                {"role": "user", "parts": [{"text": "q"}, {"text": "(image omitted: model does not support images)"}]},
                {"role": "model", "parts": [{"text": "A"}, {"functionCall": {"name": "get", "args": {"n": 1}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "get",
                    "response": {"output": "(tool image omitted: model does not support images)"}}}]},
                {"role": "user", "parts": [{"text": "next"}]},
            ],
            "generationConfig": {"topK": 40},
        });
        assert_eq!(request.body, want);
    }

    #[test]
    fn p_6_2_3_key_or_auth_header_required() {
        let no_key = build(&model(), &[], json!({}), None);
        assert_eq!(no_key, Err("No API key for provider: google".to_string()));
        let with_header = build(&model(), &[], json!({"headers": {"Authorization": "Bearer t"}}), None).unwrap();
        assert_eq!(with_header.headers, vec![("content-type".to_string(), "application/json".to_string())]);
        let mut model = model();
        model["headers"] = json!({"x-goog-api-key": "from-model"});
        assert!(build(&model, &[], json!({}), None).is_ok());
        let removed = build(&model, &[], json!({"headers": {"x-goog-api-key": null}}), None);
        assert_eq!(removed, Err("No API key for provider: google".to_string()));
    }

    #[test]
    fn p_6_9_request_thinking_budget_tool_choice_and_empty_config() {
        let tools = [json!({"role": "system", "content": "", "timestamp": 0,
                            "toolsAdded": [{"name": "f", "description": "d", "parameters": {"type": "object"}}]})];
        let body = |model: &Value, options: Value| build(model, &tools, options, Some("k")).unwrap().body;
        let model = model();
        // No explicit maxTokens: the model limit, the level's budget (thinkingBudgets wins).
        let high = body(&model, json!({"reasoning": "high", "thinkingBudgets": {"high": 4000}, "toolChoice": "any"}));
        assert_eq!(
            high["generationConfig"],
            json!({"maxOutputTokens": 8000, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 4000}})
        );
        assert_eq!(high["toolConfig"], json!({"functionCallingConfig": {"mode": "ANY"}}));
        assert_eq!(high.get("systemInstruction"), None);
        // Level off: no thinkingConfig; toolChoice auto → AUTO; unknown choices send nothing.
        let off = body(&model, json!({"toolChoice": "auto"}));
        assert_eq!(off["generationConfig"], json!({"maxOutputTokens": 8000}));
        assert_eq!(off["toolConfig"], json!({"functionCallingConfig": {"mode": "AUTO"}}));
        assert_eq!(body(&model, json!({"toolChoice": {"type": "function"}})).get("toolConfig"), None);
        // Nothing to configure: no generationConfig at all.
        let mut bare = model.clone();
        bare["maxTokens"] = json!(0);
        assert_eq!(body(&bare, json!({})).get("generationConfig"), None);
    }

    #[test]
    fn p_6_9_const_becomes_enum_only_in_schema_positions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "const": {"type": "string", "const": "a"},
                "mode": {"anyOf": [{"const": "x"}, {"const": 1.5}, {"const": null}]},
                "list": {"type": "array", "items": {"const": 2}, "default": [{"const": "keep"}]},
                "kept": {"const": "c", "enum": ["c", "d"]},
            },
            "$defs": {"d": {"const": "z"}},
            "examples": [{"const": "data"}],
            "const": "root",
        });
        let want = json!({
            "type": "object",
            "properties": {
                "const": {"type": "string", "enum": ["a"]},
                "mode": {"anyOf": [{"enum": ["x"]}, {"enum": [1.5]}, {"const": null}]},
                "list": {"type": "array", "items": {"enum": [2]}, "default": [{"const": "keep"}]},
                "kept": {"const": "c", "enum": ["c", "d"]},
            },
            "$defs": {"d": {"enum": ["z"]}},
            "examples": [{"const": "data"}],
            "enum": ["root"],
        });
        assert_eq!(const_as_enum(schema, false, 0), want);
    }

    // ---- never panics ----

    fn arb_json(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
        test_driver::keyed_json(keys, "[a-zA-Z_=+/ ]{0,12}", 6)
    }

    const KEYS: &[&str] = &[
        "candidates",
        "content",
        "parts",
        "text",
        "thought",
        "thoughtSignature",
        "functionCall",
        "name",
        "args",
        "id",
        "finishReason",
        "usageMetadata",
        "promptTokenCount",
        "candidatesTokenCount",
        "thoughtsTokenCount",
        "cachedContentTokenCount",
        "responseId",
        "modelVersion",
        "error",
        "code",
        "message",
        "status",
        "STOP",
        "MAX_TOKENS",
        "SAFETY",
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
        "properties",
        "items",
        "anyOf",
        "const",
        "enum",
        "reasoning",
        "maxTokens",
        "headers",
        "toolChoice",
        "none",
        "timestamp",
        "google-generative-ai",
        "google",
        "isError",
        "toolName",
        "arguments",
        "input",
        "data",
        "mimeType",
        "type",
    ];

    proptest! {
        #[test]
        fn p_6_1_2_mapper_never_panics(chunks in proptest::collection::vec(arb_json(KEYS), 0..24),
                                       options in arb_json(KEYS)) {
            let model = model();
            let input = RequestInput { model: &model, messages: &[], options: &options, api_key: None, messages_json_len: None };
            let mut mapper = GoogleGenerativeAi.mapper(&input);
            let mut asm = Assembler::for_model(&model, false);
            let mut message = test_driver::initial_message(&model);
            for data in &chunks {
                if asm.finished() { break; }
                mapper.on_event(None, &Json::from_value(data.clone()), &mut asm);
            }
            mapper.on_end(&mut asm);
            prop_assert!(asm.finished());
            for op in asm.drain() { let _ = apply_native(&mut message, &op); }
        }

        #[test]
        fn p_6_1_2_request_never_panics(model in arb_json(KEYS), messages in proptest::collection::vec(arb_json(KEYS), 0..6),
                                        options in arb_json(KEYS), key in proptest::option::of("[a-z]{0,3}")) {
            let input = RequestInput { model: &model, messages: &crate::providers::json::from_values(&messages), options: &options, api_key: key.as_deref(), messages_json_len: None };
            let _ = GoogleGenerativeAi.build_request(&input);
        }
    }
}
