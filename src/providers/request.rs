//! Request helpers shared by the wire formats (P-6.1.6, P-6.2.3, P-6.2.7, P-6.2.8): key variable
//! names, base URLs, output-token limits, thinking budgets and levels, sampling parameters, small
//! readers of `model`/`options` JSON, and the object builders (`object`, `put`) the provider
//! modules use instead of `json!`. Pure functions of JSON; no HTTP, no wire shapes.

use super::json::Json;
use serde_json::{Map, Value};

/// What a wire format needs to build a request (P-6.2, §6.6–§6.9).
pub struct RequestInput<'a> {
    /// The `Model` as JSON.
    pub model: &'a Value,
    /// The transcript (`Message[]`) as JSON, after `convertToLlm`: a tree that borrows its strings from the
    /// projection's text (each message is read a few times and never kept whole, so it is not a `Value`).
    pub messages: &'a [Json<'a>],
    /// The stream options as JSON (functions dropped): `reasoning`, `maxTokens`, `temperature`,
    /// `toolChoice`, `sessionId`, `cacheRetention`, `thinkingBudgets`, `samplingParams`, `headers`.
    pub options: &'a Value,
    /// The resolved API key (P-6.2.3), if any. Never echoed into errors or events.
    pub api_key: Option<&'a str>,
    /// The UTF-16 length of `messages` as JSON, as the binding got it from JS (`marker::json_len` of the projection's
    /// text), when it has it: the P-6.2.7 estimate then need not write the whole transcript again. `None`: the
    /// estimate serialises `messages`.
    pub messages_json_len: Option<usize>,
}

pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const GOOGLE_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The thinking levels a request may carry (`options.reasoning`; `"off"` and others = none).
pub const THINKING_LEVELS: [&str; 6] = ["minimal", "low", "medium", "high", "xhigh", "max"];

/// P-6.2.3: the environment variables holding the key for `model.provider`, in lookup order.
pub fn api_key_env_vars(provider: &str) -> &'static [&'static str] {
    match provider {
        "openai" => &["OPENAI_API_KEY"],
        "anthropic" => &["ANTHROPIC_API_KEY"],
        "google" => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        _ => &[],
    }
}

/// P-6.2.3: the hosts of the cloud services behind the built-in providers' default base URLs and the catalogue's
/// entries. A request to one of them needs a key, so without one it fails before it is sent; any other host (a local
/// server, a proxy) gets the request without `Authorization`.
const CLOUD_HOSTS: [&str; 9] = [
    "api.openai.com",
    "api.anthropic.com",
    "generativelanguage.googleapis.com",
    "openrouter.ai",
    "api.groq.com",
    "api.x.ai",
    "api.deepseek.com",
    "api.mistral.ai",
    "api.cerebras.ai",
];

/// The lowercased host of an `http(s)://host[:port]/…` URL (`None` for anything else).
fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = host.split(':').next().unwrap_or_default().trim_end_matches('.');
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// P-6.2.3, the OpenAI APIs: `No API key for provider: <provider>` when `url` goes to a known cloud service and
/// neither a key nor an `Authorization` header was given; `None` (send without a key) for every other host.
pub fn missing_openai_key(input: &RequestInput<'_>, url: &str) -> Option<String> {
    if api_key(input).is_some() || has_header(input, "authorization") {
        return None;
    }
    let host = url_host(url)?;
    CLOUD_HOSTS.contains(&host.as_str()).then(|| {
        let provider = input.model.get("provider").and_then(Value::as_str).unwrap_or_default();
        format!("No API key for provider: {provider}")
    })
}

/// P-6.1.6: `model.baseUrl` without trailing `/`, or `default` when it is missing or empty.
pub fn base_url(model: &Value, default: &str) -> String {
    let given = model.get("baseUrl").and_then(Value::as_str).unwrap_or("").trim_end_matches('/');
    if given.is_empty() { default.trim_end_matches('/').to_string() } else { given.to_string() }
}

/// `options.<key>` as a finite number.
pub fn option_number(options: &Value, key: &str) -> Option<f64> {
    options.get(key).and_then(Value::as_f64).filter(|n| n.is_finite())
}

/// `options.<key>` as a string.
pub fn option_str<'a>(options: &'a Value, key: &str) -> Option<&'a str> {
    options.get(key).and_then(Value::as_str)
}

/// `model.compat.<key>` as a boolean (`None` when unset or not a boolean).
/// OpenRouter, by provider or base URL (the reference's test): its streamed usage carries the billed cost.
pub fn is_openrouter(model: &Value) -> bool {
    let field = |key: &str| model.get(key).and_then(Value::as_str).unwrap_or("");
    field("provider") == "openrouter" || field("baseUrl").contains("openrouter.ai")
}

/// Issue 33: the cost OpenRouter billed, from a streamed `usage` (`cost`, `is_byok`, `cost_details`), resolved as the
/// reference resolves it: without BYOK `cost`; with BYOK `cost` plus the upstream cost (given, or prompt + completions).
/// `None` when the accounting is missing or not a finite number ≥ 0.
pub fn openrouter_billed_cost(usage: &Json<'_>) -> Option<f64> {
    let valid = |n: Option<f64>| n.filter(|n| n.is_finite() && *n >= 0.0);
    let cost = valid(usage.get("cost").and_then(Json::as_f64))?;
    match usage.get("is_byok") {
        Some(Json::Bool(false)) => Some(cost),
        Some(Json::Bool(true)) => {
            let details = usage.get("cost_details").filter(|d| d.truthy())?;
            let upstream = match details.get("upstream_inference_cost") {
                Some(Json::Null) => {
                    let prompt = valid(details.get("upstream_inference_prompt_cost").and_then(Json::as_f64))?;
                    let completions = valid(details.get("upstream_inference_completions_cost").and_then(Json::as_f64))?;
                    Some(prompt + completions)
                }
                other => other.and_then(Json::as_f64),
            };
            valid(upstream).map(|upstream| cost + upstream)
        }
        _ => None,
    }
}

pub fn compat_bool(model: &Value, key: &str) -> Option<bool> {
    model.get("compat").and_then(|c| c.get(key)).and_then(Value::as_bool)
}

/// `model.compat.<key>` as a string.
pub fn compat_str<'a>(model: &'a Value, key: &str) -> Option<&'a str> {
    model.get("compat").and_then(|c| c.get(key)).and_then(Value::as_str)
}

/// `model.reasoning === true`.
pub fn model_reasons(model: &Value) -> bool {
    model.get("reasoning").and_then(Value::as_bool).unwrap_or(false)
}

/// A token count from JSON: finite, floored, negative → 0.
fn tokens(value: Option<f64>) -> Option<u64> {
    // `as` saturates for huge values; negatives and NaN were filtered.
    value.filter(|n| n.is_finite()).map(|n| if n <= 0.0 { 0 } else { n.floor() as u64 })
}

/// `est` of P-6.2.7: the JSON length (UTF-16 units, as `JSON.stringify(...).length`) of the
/// request messages, divided by 4 and rounded up. Markers count as their originals (`marker`).
pub fn estimate_tokens(messages: &[Json<'_>]) -> u64 {
    let values: Vec<Value> = messages.iter().map(Json::to_value).collect();
    let json = crate::core::text::json::js_json_stringify_verbatim(&Value::Array(values));
    (super::marker::json_len(&json) as u64).div_ceil(4)
}

/// P-6.2.7 context cap: `contextWindow − est − max(4096, ⌈0.15·est⌉)`, at least 1; `None` when
/// `model.contextWindow` is not positive.
pub fn context_cap(input: &RequestInput<'_>) -> Option<u64> {
    let window = tokens(input.model.get("contextWindow").and_then(Value::as_f64)).filter(|w| *w > 0)?;
    let est = match input.messages_json_len {
        Some(len) => (len as u64).div_ceil(4),
        None => estimate_tokens(input.messages),
    };
    let margin = 4096u64.max((est.saturating_mul(15)).div_ceil(100));
    Some(window.saturating_sub(est).saturating_sub(margin).max(1))
}

fn capped(max_tokens: u64, input: &RequestInput<'_>) -> Option<u64> {
    if max_tokens == 0 {
        return None;
    }
    Some(context_cap(input).map_or(max_tokens, |cap| max_tokens.min(cap)))
}

/// P-6.2.7: `options.maxTokens ?? model.maxTokens`, capped by the context window; `None` (field
/// omitted) when that is 0 or unknown.
pub fn max_tokens(input: &RequestInput<'_>) -> Option<u64> {
    let given =
        option_number(input.options, "maxTokens").or_else(|| input.model.get("maxTokens").and_then(Value::as_f64));
    capped(tokens(given).unwrap_or(0), input)
}

/// Output limit and thinking budget for budget-based thinking (Anthropic, Google).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThinkingLimits {
    /// The output-token limit to send (`None`: omit the field).
    pub max_tokens: Option<u64>,
    pub budget: u64,
}

/// The default budget of a level (`xhigh`, `max` count as `high`).
pub fn default_budget(level: &str) -> u64 {
    match clamp_level(level) {
        "minimal" => 1024,
        "low" => 2048,
        "medium" => 8192,
        _ => 16384,
    }
}

/// P-6.2.7 budget-based thinking: budget = `thinkingBudgets[level]` or the default (after
/// `xhigh`/`max` → `high`); an explicit `options.maxTokens` becomes `min(given + budget,
/// model.maxTokens)`, then the context cap applies; `fallback_max` stands in for a missing limit
/// (Anthropic: 4096); if the limit is ≤ budget, budget = `max(0, limit − 1024)`.
pub fn thinking_limits(input: &RequestInput<'_>, level: &str, fallback_max: Option<u64>) -> ThinkingLimits {
    let level = clamp_level(level);
    let mut budget = input
        .options
        .get("thinkingBudgets")
        .and_then(|b| b.get(level))
        .and_then(Value::as_f64)
        .and_then(|n| tokens(Some(n)))
        .unwrap_or_else(|| default_budget(level));
    let model_max = tokens(input.model.get("maxTokens").and_then(Value::as_f64)).unwrap_or(0);
    let max_tokens = match tokens(option_number(input.options, "maxTokens")) {
        // An unknown model limit (0) caps nothing.
        Some(given) if model_max > 0 => capped(given.saturating_add(budget).min(model_max), input),
        Some(given) => capped(given.saturating_add(budget), input),
        None => capped(model_max, input),
    }
    .or(fallback_max);
    if let Some(limit) = max_tokens
        && limit <= budget
    {
        budget = limit.saturating_sub(1024);
    }
    ThinkingLimits { max_tokens, budget }
}

/// The requested thinking level (`options.reasoning`), or `None` for off, missing or unknown.
pub fn thinking_level(options: &Value) -> Option<&str> {
    option_str(options, "reasoning").filter(|l| THINKING_LEVELS.contains(l))
}

/// `xhigh` and `max` → `high`; other levels unchanged.
pub fn clamp_level(level: &str) -> &str {
    match level {
        "xhigh" | "max" => "high",
        other => other,
    }
}

/// The provider's name for a level: `model.thinkingLevelMap[level]` when a string, `None` when
/// that entry is `null` (omit), else the level with `xhigh`/`max` → `high`.
pub fn mapped_effort(model: &Value, level: &str) -> Option<String> {
    match model.get("thinkingLevelMap").and_then(|m| m.get(level)) {
        Some(Value::String(name)) => Some(name.clone()),
        Some(Value::Null) => None,
        _ => Some(clamp_level(level).to_string()),
    }
}

/// P-6.2.8: `model.samplingParams`, `model.samplingParamsByThinkingLevel[level]` (`"off"` without
/// a level) and `options.samplingParams`, merged in that order into `target` (existing keys keep
/// their place, as `Object.assign`).
pub fn merge_sampling(target: &mut Map<String, Value>, input: &RequestInput<'_>, level: Option<&str>) {
    let by_level = input.model.get("samplingParamsByThinkingLevel").and_then(|m| m.get(level.unwrap_or("off")));
    let sources = [input.model.get("samplingParams"), by_level, input.options.get("samplingParams")];
    for source in sources.into_iter().flatten().filter_map(Value::as_object) {
        for (key, value) in source {
            target.insert(key.clone(), value.clone());
        }
    }
}

/// Whether header `name` (any case) has a non-blank value after merging `model.headers` and
/// `options.headers` (a later value wins; `null` removes).
pub fn has_header(input: &RequestInput<'_>, name: &str) -> bool {
    let mut value: Option<bool> = None;
    for headers in [input.model.get("headers"), input.options.get("headers")].into_iter().flatten() {
        for (key, v) in headers.as_object().into_iter().flatten() {
            if key.eq_ignore_ascii_case(name) {
                value = Some(v.as_str().is_some_and(|s| !s.trim().is_empty()));
            }
        }
    }
    value.unwrap_or(false)
}

/// The resolved key, if non-empty.
pub fn api_key<'a>(input: &RequestInput<'a>) -> Option<&'a str> {
    input.api_key.filter(|k| !k.is_empty())
}

/// The first `n` characters of `text`.
pub fn first_chars(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

/// A JSON object of `entries`, in order. The provider modules build their JSON with this and `put`
/// rather than `json!`, whose expansion inlines a `to_value`, its error path, a key allocation, an
/// insert and a drop for every key (with them the release wasm was 20 KB / 4 KiB gzip larger).
pub fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in entries {
        put(&mut map, key, value);
    }
    Value::Object(map)
}

/// `map[key] = value` (an existing key keeps its place, as `Object.assign`).
pub fn put(map: &mut Map<String, Value>, key: &str, value: Value) {
    map.insert(key.to_string(), value);
}

/// `Invalid JSON in provider stream: <first 200 characters>` (P-6.3.2).
pub fn invalid_json_message(data: &str) -> String {
    format!("Invalid JSON in provider stream: {}", first_chars(data, 200))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
pub(crate) mod test_driver {
    //! Drives a wire format over an SSE fixture the way the binding does: random-size byte
    //! chunks → `SseDecoder` → JSON → mapper → `apply_native`; returns the final message and the
    //! event names (`start` first).
    use super::super::assemble::apply_native;
    use super::super::sse::{SseDecoder, SseEvent, SseEvents};
    use super::super::{Assembler, RequestInput, WireFormat};
    use serde_json::{Value, json};

    /// Arbitrary JSON whose object keys (and some strings) come from a wire format's `keys`, other
    /// strings from the regex `strings`, nested up to `depth`: for the mappers' never-panic tests.
    pub(crate) fn keyed_json(
        keys: &'static [&'static str],
        strings: &'static str,
        depth: u32,
    ) -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            strings.prop_map(Value::String),
            proptest::sample::select(keys).prop_map(|k| Value::String(k.to_string())),
        ];
        leaf.prop_recursive(depth, 64, 8, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec((proptest::sample::select(keys), inner), 0..8)
                    .prop_map(|entries| Value::Object(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    /// Whether `sse.rs` is still the stub (it yields nothing); then a tiny local splitter stands in.
    fn decoder_is_stub() -> bool {
        let mut out = SseEvents::new();
        let mut d = SseDecoder::new();
        d.push(b"data: 1\n\n", &mut out).unwrap();
        d.finish(&mut out).unwrap();
        out.is_empty()
    }

    fn local_split(text: &str) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let (mut event, mut data): (Option<String>, Vec<String>) = (None, Vec::new());
        let normalised = text.replace("\r\n", "\n");
        for line in normalised.split('\n') {
            if line.is_empty() {
                if !data.is_empty() {
                    out.push(SseEvent { event: event.take(), data: data.join("\n"), id: None, retry: None });
                }
                event = None;
                data.clear();
            } else if let Some(rest) = line.strip_prefix("data:") {
                data.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            } else if let Some(rest) = line.strip_prefix("event:") {
                event = Some(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            }
        }
        if !data.is_empty() {
            out.push(SseEvent { event, data: data.join("\n"), id: None, retry: None });
        }
        out
    }

    /// Splits `bytes` into chunks of 1..=23 bytes chosen by a small LCG seeded with `seed`.
    fn chunks(bytes: &[u8], seed: u64) -> Vec<&[u8]> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let size = (((state >> 33) % 23) + 1) as usize;
            let (head, tail) = rest.split_at(size.min(rest.len()));
            out.push(head);
            rest = tail;
        }
        out
    }

    pub fn decode(sse: &str, seed: u64) -> Vec<SseEvent> {
        if decoder_is_stub() {
            return local_split(sse);
        }
        let mut decoder = SseDecoder::new();
        let mut batch = SseEvents::new();
        let mut events = Vec::new();
        for chunk in chunks(sse.as_bytes(), seed) {
            batch.clear();
            decoder.push(chunk, &mut batch).unwrap();
            events.extend(batch.iter().map(|e| e.to_event()));
        }
        batch.clear();
        decoder.finish(&mut batch).unwrap();
        events.extend(batch.iter().map(|e| e.to_event()));
        events
    }

    pub fn initial_message(model: &Value) -> Value {
        json!({
            "role": "assistant", "content": [], "api": model["api"], "provider": model["provider"],
            "model": model["id"],
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "pending",
        })
    }

    /// Runs `sse` through `format`'s mapper with several chunkings, with and without the mapper's
    /// `on_event_text` shortcut (as the binding with and without `onProviderStreamEvent`); all
    /// must agree.
    pub fn run(format: &dyn WireFormat, model: &Value, options: &Value, sse: &str) -> (Value, Vec<String>) {
        let mut first: Option<(Value, Vec<String>)> = None;
        for seed in 0..6 {
            for shortcut in [true, false] {
                let got = run_once(format, model, options, sse, seed, shortcut);
                match &first {
                    None => first = Some(got),
                    Some(expected) => {
                        assert_eq!(
                            &got, expected,
                            "chunking with seed {seed} (shortcut {shortcut}) changed the result"
                        );
                    }
                }
            }
        }
        first.unwrap()
    }

    fn run_once(
        format: &dyn WireFormat,
        model: &Value,
        options: &Value,
        sse: &str,
        seed: u64,
        shortcut: bool,
    ) -> (Value, Vec<String>) {
        let input = RequestInput { model, messages: &[], options, api_key: Some("k"), messages_json_len: None };
        let mut mapper = format.mapper(&input);
        let mut asm = Assembler::for_model(model, keep_open(model));
        for event in decode(sse, seed) {
            if asm.finished() {
                break;
            }
            if shortcut && mapper.on_event_text(event.event.as_deref(), &event.data, &mut asm) {
                continue;
            }
            match super::super::json::parse_data(&event.data) {
                Some(data) => mapper.on_event(event.event.as_deref(), &data, &mut asm),
                None => super::super::on_unparsed(mapper.as_mut(), event.event.as_deref(), &event.data, &mut asm),
            }
        }
        if !asm.finished() {
            mapper.on_end(&mut asm);
        }
        let mut message = initial_message(model);
        let mut names = vec!["start".to_string()];
        for op in asm.drain() {
            if let Some(name) = apply_native(&mut message, &op) {
                names.push(name);
            }
        }
        assert!(asm.finished(), "the mapper must finish the assembler");
        (message, names)
    }

    fn keep_open(model: &Value) -> bool {
        model["api"] == "openai-completions"
    }

    /// `event: <name>` (optional) + `data: <json>` events, blank-line separated.
    pub fn sse(events: &[(Option<&str>, Value)]) -> String {
        let mut out = String::new();
        for (name, data) in events {
            if let Some(name) = name {
                out.push_str(&format!("event: {name}\n"));
            }
            out.push_str(&format!("data: {data}\n\n"));
        }
        out
    }

    /// Arbitrary JSON biased towards the keys and values the mappers and transcript read.
    pub fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let keys = prop::sample::select(vec![
            "id",
            "model",
            "choices",
            "delta",
            "content",
            "refusal",
            "reasoning_content",
            "reasoning",
            "tool_calls",
            "index",
            "function",
            "name",
            "arguments",
            "finish_reason",
            "usage",
            "prompt_tokens",
            "completion_tokens",
            "prompt_tokens_details",
            "cached_tokens",
            "error",
            "message",
            "type",
            "text",
            "thinking",
            "signature",
            "partial_json",
            "content_block",
            "stop_reason",
            "stop_details",
            "input_tokens",
            "output_tokens",
            "cache_creation",
            "data",
            "role",
            "toolCallId",
            "toolName",
            "isError",
            "thinkingSignature",
            "redacted",
            "stopReason",
            "provider",
            "api",
            "mimeType",
            "input",
            "sections",
            "toolsAdded",
            "toolsRemoved",
            "x",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            (-1e20f64..1e20).prop_map(Value::from),
            prop::sample::select(vec![
                "",
                "stop",
                "length",
                "tool_calls",
                "x",
                "{\"a\":",
                "[DONE]",
                "user",
                "assistant",
                "toolResult",
                "system",
                "toolCall",
                "thinking",
                "text",
                "image",
                "tool_use",
                "text_delta",
                "thinking_delta",
                "input_json_delta",
                "signature_delta",
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
                "redacted_thinking",
                "end_turn",
                "refusal",
                "anthropic-messages",
                "anthropic",
                "m1",
                "error",
            ])
            .prop_map(Value::from),
            ".{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    pub fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Usage as the assembler renders it.
    pub fn usage(input: f64, output: f64, read: f64, write: f64, extra: &[(&str, f64)], cost: [f64; 4]) -> Value {
        let mut object = serde_json::Map::new();
        object.insert("input".into(), json!(input));
        object.insert("output".into(), json!(output));
        object.insert("cacheRead".into(), json!(read));
        object.insert("cacheWrite".into(), json!(write));
        for (k, v) in extra {
            object.insert((*k).into(), json!(v));
        }
        object.insert("totalTokens".into(), json!(input + output + read + write));
        // pi-ai's `calculateCost`: rate per token × count; a 1-hour cache write at twice the input rate.
        let long = extra.iter().find(|(k, _)| *k == "cacheWrite1h").map_or(0.0, |(_, v)| *v);
        let c = [
            (cost[0] / 1e6) * input,
            (cost[1] / 1e6) * output,
            (cost[2] / 1e6) * read,
            (cost[3] * (write - long) + cost[0] * 2.0 * long) / 1e6,
        ];
        object.insert(
            "cost".into(),
            json!({"input": c[0], "output": c[1], "cacheRead": c[2], "cacheWrite": c[3], "total": c[0] + c[1] + c[2] + c[3],
                   "totalFromProvider": false}),
        );
        Value::Object(object)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input<'a>(model: &'a Value, messages: &'a [Json<'a>], options: &'a Value) -> RequestInput<'a> {
        RequestInput { model, messages, options, api_key: None, messages_json_len: None }
    }

    #[test]
    fn p_6_2_3_key_variables_per_provider() {
        assert_eq!(api_key_env_vars("openai"), ["OPENAI_API_KEY"]);
        assert_eq!(api_key_env_vars("google"), ["GEMINI_API_KEY", "GOOGLE_API_KEY"]);
        assert_eq!(api_key_env_vars("cerebras"), ["CEREBRAS_API_KEY"]);
        assert!(api_key_env_vars("local").is_empty());
    }

    #[test]
    fn p_6_1_6_base_url_trailing_slash_and_default() {
        assert_eq!(base_url(&json!({"baseUrl": "http://x/v1/"}), OPENAI_BASE_URL), "http://x/v1");
        assert_eq!(base_url(&json!({"baseUrl": ""}), ANTHROPIC_BASE_URL), "https://api.anthropic.com");
        assert_eq!(base_url(&json!({}), GOOGLE_BASE_URL), GOOGLE_BASE_URL);
    }

    #[test]
    fn p_6_2_7_max_tokens_option_model_zero_and_cap() {
        let model = json!({"maxTokens": 8000, "contextWindow": 0});
        let none: Vec<Json> = Vec::new();
        assert_eq!(max_tokens(&input(&model, &none, &json!({}))), Some(8000));
        assert_eq!(max_tokens(&input(&model, &none, &json!({"maxTokens": 100}))), Some(100));
        assert_eq!(max_tokens(&input(&model, &none, &json!({"maxTokens": 0}))), None);
        assert_eq!(max_tokens(&input(&json!({"maxTokens": 0}), &none, &json!({}))), None);

        // est = ⌈len/4⌉; cap = window − est − max(4096, ⌈0.15·est⌉).
        let values = vec![json!({"role": "user", "content": "x".repeat(100_000)})];
        let messages = crate::providers::json::from_values(&values);
        let est = estimate_tokens(&messages);
        assert_eq!(est, (serde_json::to_string(&values).unwrap().len() as u64).div_ceil(4));
        let model = json!({"maxTokens": 64000, "contextWindow": 40000});
        let cap = 40000 - est - 4096u64.max((est * 15).div_ceil(100));
        assert_eq!(max_tokens(&input(&model, &messages, &json!({}))), Some(cap));
        let tiny = json!({"maxTokens": 64000, "contextWindow": 100});
        assert_eq!(max_tokens(&input(&tiny, &messages, &json!({}))), Some(1));
    }

    #[test]
    fn p_6_2_7_thinking_budgets() {
        let none: Vec<Json> = Vec::new();
        let model = json!({"maxTokens": 32000, "contextWindow": 0});
        let limits = thinking_limits(&input(&model, &none, &json!({})), "medium", None);
        assert_eq!(limits, ThinkingLimits { max_tokens: Some(32000), budget: 8192 });
        let limits = thinking_limits(&input(&model, &none, &json!({"maxTokens": 1000})), "xhigh", None);
        assert_eq!(limits, ThinkingLimits { max_tokens: Some(17384), budget: 16384 });
        let limits = thinking_limits(&input(&model, &none, &json!({"maxTokens": 30000})), "low", None);
        assert_eq!(limits, ThinkingLimits { max_tokens: Some(32000), budget: 2048 });
        let options = json!({"thinkingBudgets": {"high": 5000}});
        let limits = thinking_limits(&input(&model, &none, &options), "max", None);
        assert_eq!(limits.budget, 5000);
        let small = json!({"maxTokens": 4000, "contextWindow": 0});
        let limits = thinking_limits(&input(&small, &none, &json!({})), "high", None);
        assert_eq!(limits, ThinkingLimits { max_tokens: Some(4000), budget: 2976 });
        let zero = json!({"maxTokens": 0});
        let limits = thinking_limits(&input(&zero, &none, &json!({})), "high", Some(4096));
        assert_eq!(limits, ThinkingLimits { max_tokens: Some(4096), budget: 3072 });
    }

    #[test]
    fn p_6_2_8_sampling_merge_order() {
        let model = json!({"samplingParams": {"top_p": 0.9, "top_k": 40},
                           "samplingParamsByThinkingLevel": {"high": {"top_k": 20}, "off": {"min_p": 0.1}}});
        let options = json!({"samplingParams": {"top_p": 0.5}});
        let none: Vec<Json> = Vec::new();
        let mut target = Map::new();
        target.insert("model".into(), json!("m"));
        target.insert("top_p".into(), json!(1));
        merge_sampling(&mut target, &input(&model, &none, &options), Some("high"));
        assert_eq!(Value::Object(target.clone()), json!({"model": "m", "top_p": 0.5, "top_k": 20}));
        assert_eq!(target.keys().collect::<Vec<_>>(), ["model", "top_p", "top_k"]);
        let mut off = Map::new();
        merge_sampling(&mut off, &input(&model, &none, &json!({})), None);
        assert_eq!(Value::Object(off), json!({"top_p": 0.9, "top_k": 40, "min_p": 0.1}));
    }

    #[test]
    fn levels_and_effort_mapping() {
        assert_eq!(thinking_level(&json!({"reasoning": "off"})), None);
        assert_eq!(thinking_level(&json!({"reasoning": "max"})), Some("max"));
        assert_eq!(thinking_level(&json!({})), None);
        let model = json!({"thinkingLevelMap": {"low": "lite", "high": null}});
        assert_eq!(mapped_effort(&model, "low").as_deref(), Some("lite"));
        assert_eq!(mapped_effort(&model, "high"), None);
        assert_eq!(mapped_effort(&model, "xhigh").as_deref(), Some("high"));
    }

    #[test]
    fn auth_headers_merge_with_null_removal() {
        let none: Vec<Json> = Vec::new();
        let model = json!({"headers": {"Authorization": "Bearer x"}});
        assert!(has_header(&input(&model, &none, &json!({})), "authorization"));
        assert!(!has_header(&input(&model, &none, &json!({"headers": {"authorization": null}})), "authorization"));
        assert!(!has_header(&input(&json!({}), &none, &json!({"headers": {"x-api-key": "  "}})), "x-api-key"));
    }

    #[test]
    fn a_known_cloud_host_without_a_key_fails_before_the_request() {
        let none: Vec<Json> = Vec::new();
        let openai = json!({"provider": "openai"});
        let missing = |model: &Value, options: &Value, key: Option<&str>, url: &str| {
            let mut given = input(model, &none, options);
            given.api_key = key;
            missing_openai_key(&given, url)
        };
        let no_key = Some("No API key for provider: openai".to_string());
        assert_eq!(missing(&openai, &json!({}), None, "https://api.openai.com/v1/responses"), no_key);
        assert_eq!(missing(&openai, &json!({}), Some(""), "https://API.OpenAI.com:443/v1/chat/completions"), no_key);
        let groq = json!({"provider": "groq"});
        assert_eq!(
            missing(&groq, &json!({}), None, "https://api.groq.com/openai/v1/chat/completions"),
            Some("No API key for provider: groq".to_string())
        );
        // A key or an Authorization header: sent.
        assert_eq!(missing(&openai, &json!({}), Some("sk-1"), "https://api.openai.com/v1/responses"), None);
        assert_eq!(
            missing(
                &openai,
                &json!({"headers": {"Authorization": "Bearer t"}}),
                None,
                "https://api.openai.com/v1/responses"
            ),
            None
        );
        // Any other host: a local server or a proxy, sent without Authorization.
        for url in [
            "http://127.0.0.1:8080/v1/responses",
            "http://localhost:11434/v1/chat/completions",
            "https://api.openai.com.example.org/v1",
            "https://proxy.example/api.openai.com/v1",
            "not a url",
        ] {
            assert_eq!(missing(&openai, &json!({}), None, url), None, "{url}");
        }
    }
}
