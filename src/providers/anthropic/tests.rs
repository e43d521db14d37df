//! §6.8 fixtures: request bodies compared whole, and SSE streams (fixtures/*.sse, written from the
//! wire format) driven through the decoder in random chunks. Event sequences were checked against
//! pi-ai 1.6.0 where the spec agrees with it (differences are noted at the test).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use super::*;
use crate::providers::request::test_driver::{json_value, names, run, sse, usage};
use crate::providers::{Assembler, RequestInput, WireFormat};
use proptest::prelude::*;
use serde_json::{Value, json};

fn model() -> Value {
    json!({"id": "claude-x", "name": "x", "api": "anthropic-messages", "provider": "anthropic",
           "baseUrl": "https://api.anthropic.com/", "reasoning": true, "input": ["text", "image"],
           "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
           "contextWindow": 200000, "maxTokens": 64000})
}

const COST: [f64; 4] = [3.0, 15.0, 0.3, 3.75];

fn build(model: &Value, messages: &[Value], options: &Value, key: Option<&str>) -> Result<HttpRequest, String> {
    let messages = &crate::providers::json::from_values(messages);
    let input = RequestInput { model, messages, options, api_key: key, messages_json_len: None };
    AnthropicMessages.build_request(&input)
}

#[test]
fn s_6_8_request_full_body() {
    let messages: Vec<Value> = serde_json::from_str(include_str!("fixtures/transcript.json")).unwrap();
    let options = json!({"reasoning": "medium", "temperature": 0.3, "toolChoice": "auto", "maxTokens": 8000});
    let request = build(&model(), &messages, &options, Some("sk-ant-1")).unwrap();
    assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
    let headers: Vec<(&str, &str)> = request.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        headers,
        [
            ("content-type", "application/json"),
            ("anthropic-version", "2023-06-01"),
            ("anthropic-dangerous-direct-browser-access", "true"),
            ("x-api-key", "sk-ant-1")
        ]
    );
    // pi-ai 1.6.0 sends the same content, except: it keeps consecutive user messages apart (§6.8
    // merges them) and string user content as a string, adds `eager_input_streaming` and a cache
    // breakpoint to the last tool, `display: "summarized"` to `thinking`, and the interleaved-
    // thinking beta.
    let image = |data: &str, mime: &str| json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}});
    let expected = json!({
        "model": "claude-x",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Look"}, image("QUJD", "image/png")]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Plan", "signature": "sig1"},
                {"type": "redacted_thinking", "data": "red1"},
                {"type": "text", "text": "unsigned"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a.txt"}},
                {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {"path": "b.txt"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "line1\nline2", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "failed\n(image attached after the tool results)", "is_error": true},
                {"type": "text", "text": "Images from the error result of tool call toolu_b (read):"},
                image("REVG", "image/jpeg"),
                image("R0hJ", "image/jpeg"),
                {"type": "text", "text": "And then?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Again."},
                {"type": "tool_use", "id": "call_9_fc_0123___", "name": "read", "input": {"path": "c"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_9_fc_0123___", "is_error": false,
                 "content": [{"type": "text", "text": "(see attached image)"}, image("SktM", "image/png")]}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_z", "name": "read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_z", "content": "No result provided", "is_error": true},
                {"type": "text", "text": "Go on", "cache_control": {"type": "ephemeral"}}]}
        ],
        "max_tokens": 16192,
        "stream": true,
        "system": [{"type": "text", "text": "You are terse.\n\nNo lies.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "read", "description": "Read a file", "input_schema": {
            "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}}],
        "thinking": {"type": "enabled", "budget_tokens": 8192},
        "tool_choice": {"type": "auto"}
    });
    assert_eq!(request.body, expected);
}

#[test]
fn s_6_8_request_plain_defaults_temperature_and_long_cache() {
    let mut m = model();
    m["reasoning"] = json!(false);
    m["maxTokens"] = json!(0);
    m["baseUrl"] = json!("");
    m["samplingParams"] = json!({"top_k": 5});
    let messages = vec![
        json!({"role": "user", "content": "hi", "timestamp": 1}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "  "}], "api": "anthropic-messages",
               "provider": "anthropic", "model": "claude-x", "stopReason": "stop", "timestamp": 2}),
        json!({"role": "user", "content": [{"type": "text", "text": "again"}], "timestamp": 3}),
    ];
    let options = json!({"reasoning": "high", "temperature": 0.5, "cacheRetention": "long", "toolChoice": {"type": "tool", "name": "x"}});
    let request = build(&m, &messages, &options, Some("k")).unwrap();
    assert_eq!(request.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(
        request.body,
        json!({
            "model": "claude-x",
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "hi"},
                {"type": "text", "text": "again", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}],
            "max_tokens": 4096,
            "stream": true,
            "temperature": 0.5,
            "tool_choice": {"type": "tool", "name": "x"},
            "top_k": 5
        })
    );
    let request = build(&m, &messages, &json!({"cacheRetention": "none"}), Some("k")).unwrap();
    assert!(request.body["messages"][0]["content"][1].get("cache_control").is_none());
}

#[test]
fn p_6_2_7_anthropic_budget_fits_small_limits() {
    let mut m = model();
    m["maxTokens"] = json!(4000);
    let messages = vec![json!({"role": "user", "content": "hi", "timestamp": 1})];
    let body = build(&m, &messages, &json!({"reasoning": "high"}), Some("k")).unwrap().body;
    assert_eq!(body["max_tokens"], 4000);
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2976}));
    m["maxTokens"] = json!(1000);
    let body = build(&m, &messages, &json!({"reasoning": "minimal"}), Some("k")).unwrap().body;
    assert_eq!(body["thinking"]["budget_tokens"], 1024);
}

#[test]
fn p_6_2_3_missing_key_fails_unless_an_auth_header_is_given() {
    let messages = vec![json!({"role": "user", "content": "hi", "timestamp": 1})];
    assert_eq!(build(&model(), &messages, &json!({}), None).unwrap_err(), "No API key for provider: anthropic");
    assert_eq!(build(&model(), &messages, &json!({}), Some("")).unwrap_err(), "No API key for provider: anthropic");
    let request = build(&model(), &messages, &json!({"headers": {"Authorization": "Bearer t"}}), None).unwrap();
    assert!(request.headers.iter().all(|(k, _)| k != "x-api-key"));
    let mut m = model();
    m["headers"] = json!({"x-api-key": "from-model"});
    assert!(build(&m, &messages, &json!({}), None).is_ok());
}

#[test]
fn p_6_5_2_anthropic_ids() {
    assert_eq!(normalize_tool_call_id("call_1|fc+/="), "call_1_fc___");
    assert_eq!(normalize_tool_call_id("a😀b"), "a__b");
    assert_eq!(normalize_tool_call_id(&"x".repeat(80)), "x".repeat(64));
    assert_eq!(normalize_tool_call_id(&format!("{}😀", "x".repeat(63))), format!("{}_", "x".repeat(63)));
}

fn stream(fixture: &str) -> (Value, Vec<String>) {
    run(&AnthropicMessages, &model(), &json!({}), fixture)
}

#[test]
fn s_6_8_stream_text_keeps_initial_text_and_ignores_ping() {
    let (message, events) = stream(include_str!("fixtures/text.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
    assert_eq!(message["content"], json!([{"type": "text", "text": "Hello, wörld 🌍!"}]));
    assert_eq!(message["responseId"], "msg_01");
    assert_eq!(message["responseModel"], "claude-x-20250101");
    assert_eq!(message["stopReason"], "stop");
    assert_eq!(message["rawStopReason"], "end_turn");
    assert_eq!(message["usage"], usage(25.0, 12.0, 100.0, 0.0, &[("cacheWrite1h", 0.0)], COST));
}

#[test]
fn s_6_8_stream_thinking_signatures_tools_and_ignored_server_blocks() {
    let (message, events) = stream(include_str!("fixtures/thinking_tools.sse"));
    assert_eq!(
        events,
        names(&[
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ])
    );
    assert_eq!(
        message["content"],
        json!([
            {"type": "thinking", "thinking": "Need the file.", "thinkingSignature": "EqQBCgIYAhIkCpart2"},
            {"type": "text", "text": "Reading both."},
            {"type": "toolCall", "id": "toolu_A", "name": "read", "arguments": {"path": "a.txt"}},
            {"type": "toolCall", "id": "toolu_B", "name": "read", "arguments": {"path": "b.txt"}}
        ])
    );
    assert_eq!(message["stopReason"], "toolUse");
    assert!(message.get("responseModel").is_none());
    // message_delta values override message_start's (input 10 → 12).
    assert_eq!(message["usage"], usage(12.0, 80.0, 0.0, 40.0, &[("cacheWrite1h", 40.0), ("reasoning", 30.0)], COST));
}

#[test]
fn s_6_8_stream_redacted_thinking_opens_and_closes_at_once() {
    // pi-ai shows the text "[Reasoning redacted]"; the spec's block has an empty `thinking`.
    let (message, events) = stream(include_str!("fixtures/redacted.sse"));
    assert_eq!(
        events,
        names(&["start", "thinking_start", "thinking_end", "text_start", "text_delta", "text_end", "done"])
    );
    assert_eq!(
        message["content"],
        json!([
            {"type": "thinking", "thinking": "", "thinkingSignature": "EmwKAhgBEgy3va", "redacted": true},
            {"type": "text", "text": "Done."}
        ])
    );
}

#[test]
fn s_6_10_refusal_uses_the_explanation() {
    let (message, events) = stream(include_str!("fixtures/refusal.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_end", "error"]));
    assert_eq!(message["errorMessage"], "Policy violation");
    assert_eq!(message["rawStopReason"], "refusal");
    assert_eq!(message["stopReason"], "error");
    let plain = include_str!("fixtures/refusal.sse")
        .replace(",\"stop_details\":{\"type\":\"refusal\",\"explanation\":\"Policy violation\"}", "");
    let (message, _) = stream(&plain);
    assert_eq!(message["errorMessage"], "The model refused to complete the request");
}

#[test]
fn s_6_10_sensitive_and_unknown_stop_reasons() {
    let fixture = include_str!("fixtures/text.sse");
    let (message, _) = stream(&fixture.replace("end_turn", "sensitive"));
    assert_eq!(message["errorMessage"], "Provider stopped with: sensitive");
    let (message, events) = stream(&fixture.replace("end_turn", "model_context_window_exceeded"));
    assert_eq!(message["errorMessage"], "Unhandled stop reason: model_context_window_exceeded");
    assert_eq!(message["rawStopReason"], "model_context_window_exceeded");
    assert_eq!(events.last().unwrap(), "error");
    for (raw, reason) in
        [("pause_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("tool_use", "toolUse")]
    {
        let (message, _) = stream(&fixture.replace("end_turn", raw));
        assert_eq!(message["stopReason"], reason, "{raw}");
        assert_eq!(message["rawStopReason"], raw);
    }
}

#[test]
fn s_6_8_error_event_ends_with_its_message() {
    // pi-ai puts the raw event data in errorMessage and leaves the text block unclosed.
    let (message, events) = stream(include_str!("fixtures/error_event.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_end", "error"]));
    assert_eq!(message["errorMessage"], "Overloaded");
    assert_eq!(message["content"], json!([{"type": "text", "text": "Partial"}]));
    let (message, _) = stream("event: error\ndata: upstream exploded\n\n");
    assert_eq!(message["errorMessage"], "upstream exploded");
}

#[test]
fn s_6_8_missing_message_stop_is_an_error() {
    let (message, events) = stream(include_str!("fixtures/no_stop.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_end", "error"]));
    assert_eq!(message["errorMessage"], "Anthropic stream ended before message_stop");
    assert_eq!(message["content"], json!([{"type": "text", "text": "Cut"}]));
    assert_eq!(message["rawStopReason"], "end_turn", "message_delta's stop reason stays");
    let (message, _) = stream("");
    assert_eq!(message["errorMessage"], "Anthropic stream ended before message_stop");
    assert_eq!(message.get("rawStopReason"), None);
}

/// A `ping` whose data is not JSON is a ping: skipped, as pi-ai skips it (the mapper decides every Anthropic event;
/// `on_unparsed` adds its invalid-JSON failure only where a mapper does not).
#[test]
fn p_6_3_2_a_ping_that_is_not_json_is_skipped() {
    let fixture = include_str!("fixtures/text.sse").replacen(
        "event: message_start",
        "event: ping\ndata: {\"type\":\"ping\"\n\nevent: message_start",
        1,
    );
    assert!(fixture.contains("data: {\"type\":\"ping\"\n"));
    let (message, events) = stream(&fixture);
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
    assert_eq!(message["content"], json!([{"type": "text", "text": "Hello, wörld 🌍!"}]));
}

#[test]
fn s_6_10_max_tokens_truncates_a_tool_call() {
    // pi-ai leaves the call unclosed with its live partial arguments; here it closes at the end
    // and the final parse reports the truncated text (P-6.4.3).
    let (message, events) = stream(include_str!("fixtures/max_tokens.sse"));
    assert_eq!(events, names(&["start", "toolcall_start", "toolcall_delta", "toolcall_end", "done"]));
    assert_eq!(message["stopReason"], "length");
    let call = &message["content"][0];
    assert_eq!(call["arguments"], json!({}));
    assert!(call["argumentsError"].as_str().unwrap().ends_with("Received arguments:\n{\"text\": \"abc"));
}

#[test]
fn s_6_8_block_indices_of_ignored_blocks_do_not_break_later_ones() {
    let events = [
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "m", "model": "claude-x", "usage": {}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "web_search_tool_result", "content": []}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lost"}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        ),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "kept"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "thinking_delta", "thinking": "wrong kind"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 9, "delta": {"type": "text_delta", "text": "unknown index"}}),
        ),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 1})),
        (Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ];
    let (message, names_seen) = stream(&sse(&events));
    assert_eq!(names_seen, names(&["start", "text_start", "text_delta", "text_end", "done"]));
    assert_eq!(message["content"], json!([{"type": "text", "text": "kept"}]));
}

#[test]
fn s_6_8_thinking_start_with_initial_content_and_signature() {
    let events = [
        (Some("message_start"), json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}})),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "Pre", "signature": "S1"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "S2"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "fix"}}),
        ),
        (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ];
    let (message, names_seen) = stream(&sse(&events));
    assert_eq!(names_seen, names(&["start", "thinking_start", "thinking_delta", "thinking_end", "done"]));
    assert_eq!(message["content"], json!([{"type": "thinking", "thinking": "Prefix", "thinkingSignature": "S1S2"}]));
    assert_eq!(message["responseModel"], Value::Null);
}

#[test]
fn p_6_3_2_invalid_json_in_a_message_event() {
    let (message, events) = stream("event: message_start\ndata: {\"type\":\"message_start\"\n\n");
    assert_eq!(events, names(&["start", "error"]));
    assert_eq!(message["errorMessage"], "Invalid JSON in provider stream: {\"type\":\"message_start\"");
}

proptest! {
    #[test]
    fn mapper_never_panics_on_arbitrary_json(
        events in prop::collection::vec((prop::option::of(prop::sample::select(vec![
            "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
            "message_stop", "ping", "error", "x"])), json_value(), prop::option::weighted(0.1, "(\\[DONE\\]|.{0,6})")), 0..16)
    ) {
        let model = model();
        let options = json!({});
        let messages: Vec<Value> = Vec::new();
        let input = RequestInput { model: &model, messages: &crate::providers::json::from_values(&messages), options: &options, api_key: None, messages_json_len: None };
        let mut mapper = AnthropicMessages.mapper(&input);
        let mut asm = Assembler::for_model(&model, false);
        for (event, data, text) in &events {
            mapper.on_event(*event, &Json::from_value(data.clone()), &mut asm);
            if let Some(text) = text {
                mapper.on_text(*event, text, &mut asm);
            }
        }
        mapper.on_end(&mut asm);
        prop_assert!(asm.finished());
    }

    #[test]
    fn request_never_panics_on_arbitrary_messages(messages in prop::collection::vec(json_value(), 0..6), options in json_value()) {
        let model = model();
        let input = RequestInput { model: &model, messages: &crate::providers::json::from_values(&messages), options: &options, api_key: Some("k"), messages_json_len: None };
        prop_assert!(AnthropicMessages.build_request(&input).is_ok());
    }
}

/// Feeds `datas` after opening blocks 0 (text), 1 (thinking) and 2 (tool call), each data text
/// through `on_event_text` first when `shortcut`, else (or when it declines) parsed, as the
/// binding does; returns the operations and how many events took the shortcut.
fn map_deltas(datas: &[String], shortcut: bool) -> (Vec<crate::providers::MessageOp>, usize) {
    let model = model();
    let (options, messages) = (json!({}), Vec::new());
    let input = RequestInput {
        model: &model,
        messages: &crate::providers::json::from_values(&messages),
        options: &options,
        api_key: None,
        messages_json_len: None,
    };
    let mut mapper = AnthropicMessages.mapper(&input);
    let mut asm = Assembler::for_model(&model, false);
    let start = [
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#,
    ];
    let mut taken = 0;
    for data in start.iter().map(|s| s.to_string()).chain(datas.iter().cloned()) {
        if shortcut && mapper.on_event_text(Some("content_block_delta"), &data, &mut asm) {
            taken += 1;
            continue;
        }
        match crate::providers::json::parse_data(&data) {
            Some(json) => mapper.on_event(Some("content_block_delta"), &json, &mut asm),
            None => crate::providers::on_unparsed(mapper.as_mut(), Some("content_block_delta"), &data, &mut asm),
        }
    }
    (asm.drain().collect(), taken)
}

#[test]
fn s_6_8_delta_shortcut_takes_the_usual_shape_and_agrees() {
    let datas: Vec<String> = [
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi \"you\" \u00e9\ud83d\ude00"}}"#,
        r#" { "type" : "content_block_delta" , "index" : 1 , "delta" : { "type" : "thinking_delta" , "thinking" : "hm" } } "#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"sig"}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (fast, taken) = map_deltas(&datas, true);
    assert_eq!(taken, 4);
    assert_eq!(fast, map_deltas(&datas, false).0);
    // Other shapes take the general path.
    let others: Vec<String> = [
        r#"{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}"#,
        r#"{"type":"content_block_delta","index":1.0,"delta":{"type":"text_delta","text":"x"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","more":1}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud800"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} x"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(map_deltas(&others, true).1, 0);
}

/// Texts near the usual delta shape: other member orders, extra or repeated members, numbers and
/// strings of every form, escapes, whitespace, trailing text.
fn near_delta() -> impl Strategy<Value = String> {
    let ws = prop::sample::select(vec!["", "", "", " ", "\n ", "\t"]);
    let string = prop_oneof![
        "[a-z \"\\\\é😀\n{}:,]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        prop::sample::select(vec![
            r#""\u00e9""#,
            r#""\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\x""#,
            r#""a\/b""#,
            r#""unterminated"#,
        ])
        .prop_map(str::to_string),
    ];
    let value = prop_oneof![
        4 => string.clone(),
        1 => prop::sample::select(vec!["null", "1", "{}", "[\"x\"]", "true"]).prop_map(str::to_string),
    ];
    let top_type = prop::sample::select(vec![
        r#""content_block_delta""#,
        r#""content_block_delta""#,
        r#""content\u005fblock_delta""#,
        r#""message_delta""#,
    ]);
    let index = prop_oneof![
        3 => prop::sample::select(vec!["0", "1", "2", "3"]),
        1 => prop::sample::select(vec!["-1", "1.0", "1e0", "01", "00", r#""1""#, "null", "99999999999999999999"]),
    ];
    let delta_type = prop::sample::select(vec![
        r#""text_delta""#,
        r#""thinking_delta""#,
        r#""signature_delta""#,
        r#""input_json_delta""#,
        r#""citations_delta""#,
        r#""text\u005fdelta""#,
    ]);
    // Mostly the field that goes with the delta type.
    let field = prop::option::weighted(
        0.2,
        prop::sample::select(vec![r#""text""#, r#""thinking""#, r#""signature""#, r#""partial_json""#, r#""x""#]),
    );
    let extra = prop::option::weighted(0.15, prop::sample::select(vec![r#""index":2"#, r#""x":1"#, r#""text":"dup""#]));
    let swap = prop::bool::weighted(0.1);
    (ws, top_type, index, delta_type, field, value, extra, swap, prop::option::weighted(0.05, "[ x}]")).prop_map(
        |(w, top_type, index, delta_type, field, value, extra, swap, tail)| {
            let field = field.unwrap_or(match delta_type {
                r#""thinking_delta""# => r#""thinking""#,
                r#""signature_delta""# => r#""signature""#,
                r#""input_json_delta""# => r#""partial_json""#,
                _ => r#""text""#,
            });
            let delta = match (extra, swap) {
                (Some(extra), true) => format!("{{{w}{extra},\"type\":{delta_type},{field}:{value}}}"),
                (Some(extra), false) => format!("{{\"type\":{w}{delta_type},{field}:{value},{extra}{w}}}"),
                (None, _) => format!("{{{w}\"type\"{w}:{delta_type},{w}{field}:{w}{value}{w}}}"),
            };
            let members =
                [format!("\"type\":{top_type}"), format!("{w}\"index\":{w}{index}"), format!("\"delta\":{delta}")];
            let body = if swap && extra.is_none() {
                format!("{},{},{}", members[1], members[0], members[2])
            } else {
                members.join(",")
            };
            format!("{w}{{{body}}}{w}{}", tail.unwrap_or_default())
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn s_6_8_delta_shortcut_agrees_with_the_parsed_path(datas in prop::collection::vec(near_delta(), 1..6)) {
        // About one event in six takes the shortcut; the others test its refusals.
        let (fast, _) = map_deltas(&datas, true);
        let (general, _) = map_deltas(&datas, false);
        prop_assert_eq!(fast, general);
    }
}

/// Issue 13: block events whose index, block or delta fields have the wrong type, and tool_use
/// blocks without an id or name, end the stream with an error naming the event and field.
#[test]
fn issue_13_malformed_blocks_and_deltas_are_stream_errors() {
    let start = json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude-x", "usage": {"input_tokens": 1, "output_tokens": 1}}});
    let tool = json!({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}});
    let block_start =
        |index: Value, block: Value| json!({"type": "content_block_start", "index": index, "content_block": block});
    let delta = |index: Value, delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
    let with = |key: &str, value: Value| {
        let mut block = tool.clone();
        block[key] = value;
        block
    };
    let tail = [
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ];
    let opened = || block_start(json!(0), tool.clone());
    let at = "content_block_start (index 0) content_block";
    let cases: Vec<(Vec<Value>, String)> = vec![
        (
            vec![block_start(json!(0), with("id", json!(5)))],
            format!("{at}: \"id\" must be a non-empty string, got a number"),
        ),
        (
            vec![block_start(json!(0), with("name", json!(null)))],
            format!("{at}: \"name\" must be a non-empty string, got null"),
        ),
        (
            vec![block_start(json!(0), with("name", json!("")))],
            format!("{at}: \"name\" must be a non-empty string, got \"\""),
        ),
        (
            vec![block_start(json!("0"), tool.clone())],
            "content_block_start: \"index\" must be an integer ≥ 0, got a string".into(),
        ),
        (
            vec![block_start(json!(-1), tool.clone())],
            "content_block_start: \"index\" must be an integer ≥ 0, got a number".into(),
        ),
        (
            vec![json!({"type": "content_block_start", "content_block": tool.clone()})],
            "content_block_start: \"index\" must be an integer ≥ 0, got missing".into(),
        ),
        (
            vec![block_start(json!(0), json!("tool_use"))],
            "content_block_start (index 0): \"content_block\" must be an object, got a string".into(),
        ),
        (
            vec![block_start(json!(0), json!({"type": 1}))],
            format!("{at}: \"type\" must be a non-empty string, got a number"),
        ),
        (
            vec![block_start(json!(0), json!({"type": "text", "text": 1}))],
            format!("{at}: \"text\" must be a string, got a number"),
        ),
        (
            vec![block_start(json!(0), json!({"type": "redacted_thinking"}))],
            format!("{at}: \"data\" must be a string, got missing"),
        ),
        (
            vec![opened(), delta(json!(0), json!({"type": "input_json_delta", "partial_json": {"a": 1}}))],
            "content_block_delta (index 0) delta: \"partial_json\" must be a string, got an object".into(),
        ),
        (
            vec![opened(), delta(json!(0.5), json!({"type": "input_json_delta", "partial_json": "{"}))],
            "content_block_delta: \"index\" must be an integer ≥ 0, got a number".into(),
        ),
        (
            vec![opened(), delta(json!(0), json!(null))],
            "content_block_delta (index 0): \"delta\" must be an object, got null".into(),
        ),
        (
            vec![opened(), delta(json!(0), json!({"partial_json": "{"}))],
            "content_block_delta (index 0) delta: \"type\" must be a non-empty string, got missing".into(),
        ),
        (
            vec![opened(), json!({"type": "content_block_stop", "index": true})],
            "content_block_stop: \"index\" must be an integer ≥ 0, got a boolean".into(),
        ),
    ];
    for (events, want) in cases {
        let mut all = vec![start.clone()];
        all.extend(events.iter().cloned());
        all.extend(tail.iter().cloned());
        let body = sse(&all.iter().map(|e| (e["type"].as_str(), e.clone())).collect::<Vec<_>>());
        let (message, names) = stream(&body);
        assert_eq!(names.last().map(String::as_str), Some("error"), "{events:?}");
        assert_eq!(message["stopReason"], "error");
        assert_eq!(message["errorMessage"], format!("Malformed anthropic-messages stream: {want}"), "{events:?}");
        for block in message["content"].as_array().unwrap() {
            assert_eq!(block["id"], "toolu_1", "{events:?}");
            assert_eq!(block["name"], "f");
        }
    }
    // The same events well-formed: a tool call; an unknown delta type is still ignored.
    let mut all = vec![start.clone(), opened(), delta(json!(0), json!({"type": "citations_delta", "citation": 1}))];
    all.extend(tail.iter().cloned());
    let body = sse(&all.iter().map(|e| (e["type"].as_str(), e.clone())).collect::<Vec<_>>());
    let (message, _) = stream(&body);
    assert_eq!(message["stopReason"], "toolUse");
    assert_eq!(message["content"], json!([{"type": "toolCall", "id": "toolu_1", "name": "f", "arguments": {}}]));
}
