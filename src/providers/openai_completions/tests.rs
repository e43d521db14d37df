//! §6.6 fixtures: request bodies compared whole, and SSE streams (fixtures/*.sse, written from the
//! wire format) driven through the decoder in random chunks. Event sequences were checked against
//! pi-ai 1.6.0 where the spec agrees with it (differences are noted at the test).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use super::*;
use crate::providers::request::test_driver::{json_value, names, run, usage};
use crate::providers::{Assembler, RequestInput, WireFormat};
use proptest::prelude::*;
use serde_json::{Value, json};

fn model() -> Value {
    json!({"id": "gpt-x", "name": "x", "api": "openai-completions", "provider": "openai",
           "baseUrl": "https://api.openai.com/v1/", "reasoning": true, "input": ["text", "image"],
           "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
           "contextWindow": 128000, "maxTokens": 16384})
}

fn local_model() -> Value {
    json!({"id": "qwen", "name": "q", "api": "openai-completions", "provider": "llama.cpp",
           "baseUrl": "http://127.0.0.1:8080/v1", "reasoning": false, "input": ["text"],
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
           "contextWindow": 0, "maxTokens": 0})
}

fn build(model: &Value, messages: &[Value], options: &Value, key: Option<&str>) -> HttpRequest {
    let messages = &crate::providers::json::from_values(messages);
    let input = RequestInput { model, messages, options, api_key: key, messages_json_len: None };
    OpenAiCompletions.build_request(&input).unwrap()
}

/// A transcript touching every mapping rule (the same one fed to pi-ai to compare bodies).
fn rich_transcript() -> Vec<Value> {
    serde_json::from_str(include_str!("fixtures/transcript.json")).unwrap()
}

#[test]
fn s_6_6_request_full_body_matches_reference() {
    let options = json!({"reasoning": "high", "temperature": 0.3, "sessionId": "sess-1", "toolChoice": "auto",
                         "samplingParams": {"top_p": 0.8}});
    let request = build(&model(), &rich_transcript(), &options, Some("sk-1"));
    assert_eq!(request.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(
        request.headers,
        vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("authorization".to_string(), "Bearer sk-1".to_string())
        ]
    );
    // pi-ai 1.6.0 sends the same body plus `store: false`, and heads tool-result images with
    // "Attached image(s) from tool result:" where §6.6 says "Tool result image:".
    let expected = json!({
        "model": "gpt-x",
        "messages": [
            {"role": "developer", "content": "You are terse.\n\nLater update\n\nNo lies."},
            {"role": "user", "content": [
                {"type": "text", "text": "Look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}]},
            {"role": "assistant", "content": "Reading.", "reasoning_content": "Plan", "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]},
            {"role": "tool", "content": "line1\nline2", "tool_call_id": "call_a"},
            {"role": "user", "content": [
                {"type": "text", "text": "Tool result image:"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,REVG"}}]},
            {"role": "assistant", "content": "Again.", "tool_calls": [
                {"id": "call_9_1x7rido1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"b\"}"}}]},
            {"role": "tool", "content": "(no tool output)", "tool_call_id": "call_9_1x7rido1"},
            {"role": "user", "content": "Go on"}
        ],
        "stream": true,
        "prompt_cache_key": "sess-1",
        "stream_options": {"include_usage": true},
        "max_completion_tokens": 16384,
        "temperature": 0.3,
        "tools": [{"type": "function", "function": {"name": "read", "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}],
        "tool_choice": "auto",
        "reasoning_effort": "high",
        "top_p": 0.8
    });
    assert_eq!(request.body, expected);
    let keys: Vec<&String> = request.body.as_object().unwrap().keys().collect();
    let expected_keys: Vec<&String> = expected.as_object().unwrap().keys().collect();
    assert_eq!(keys, expected_keys);
}

#[test]
fn s_6_6_request_local_server_minimal() {
    let messages = vec![
        json!({"role": "system", "content": "Sys", "timestamp": 0}),
        json!({"role": "user", "content": "hi", "timestamp": 1}),
    ];
    let request = build(&local_model(), &messages, &json!({"reasoning": "high", "sessionId": "s"}), None);
    assert_eq!(request.url, "http://127.0.0.1:8080/v1/chat/completions");
    assert_eq!(request.headers, vec![("content-type".to_string(), "application/json".to_string())]);
    assert_eq!(
        request.body,
        json!({"model": "qwen", "messages": [{"role": "system", "content": "Sys"}, {"role": "user", "content": "hi"}],
               "stream": true, "stream_options": {"include_usage": true}})
    );
}

#[test]
fn s_6_6_request_compat_switches() {
    let mut model = local_model();
    model["reasoning"] = json!(true);
    model["maxTokens"] = json!(2048);
    model["thinkingLevelMap"] = json!({"low": "lite", "medium": null});
    model["compat"] = json!({"supportsUsageInStreaming": false, "maxTokensField": "max_completion_tokens",
        "supportsDeveloperRole": true, "requiresNonNullAssistantContent": true, "requiresToolResultName": true,
        "requiresReasoningContentOnAssistantMessages": true});
    let messages = vec![
        json!({"role": "system", "content": "Sys", "timestamp": 0}),
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "AA", "mimeType": "image/png"}], "timestamp": 1}),
        json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "t", "arguments": {"a": [1]}}],
               "api": "openai-completions", "provider": "llama.cpp", "model": "qwen", "stopReason": "toolUse", "timestamp": 2}),
        json!({"role": "toolResult", "toolCallId": "c1", "toolName": "t", "content": [{"type": "image", "data": "BB", "mimeType": "image/png"}], "isError": false, "timestamp": 3}),
    ];
    let body = build(&model, &messages, &json!({"reasoning": "low", "toolChoice": "required"}), None).body;
    assert_eq!(
        body,
        json!({
            "model": "qwen",
            "messages": [
                {"role": "developer", "content": "Sys"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "(image omitted: model does not support images)"}]},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "t", "arguments": "{\"a\":[1]}"}}], "reasoning_content": ""},
                {"role": "tool", "content": "(tool image omitted: model does not support images)", "tool_call_id": "c1", "name": "t"}
            ],
            "stream": true,
            "max_completion_tokens": 2048,
            "tool_choice": "required",
            "reasoning_effort": "lite"
        })
    );
    // A null map entry omits the effort; xhigh/max become high; supportsReasoningEffort false omits it.
    let body = build(&model, &messages, &json!({"reasoning": "medium"}), None).body;
    assert!(body.get("reasoning_effort").is_none());
    let body = build(&model, &messages, &json!({"reasoning": "max"}), None).body;
    assert_eq!(body["reasoning_effort"], "high");
    model["compat"]["supportsReasoningEffort"] = json!(false);
    let body = build(&model, &messages, &json!({"reasoning": "low"}), None).body;
    assert!(body.get("reasoning_effort").is_none());
}

#[test]
fn s_6_6_request_max_tokens_field_and_cache_key_rules() {
    let messages = vec![json!({"role": "user", "content": "hi", "timestamp": 1})];
    let mut m = local_model();
    m["maxTokens"] = json!(1000);
    assert_eq!(build(&m, &messages, &json!({}), None).body["max_tokens"], 1000);
    m["compat"] = json!({"maxTokensField": "max_tokens"});
    m["provider"] = json!("openai");
    assert_eq!(build(&m, &messages, &json!({"maxTokens": 10}), None).body["max_tokens"], 10);
    let mut m = model();
    m["baseUrl"] = json!("");
    let body = build(&m, &messages, &json!({"sessionId": "s", "cacheRetention": "none"}), Some("k")).body;
    assert!(body.get("prompt_cache_key").is_none());
    let long = "k".repeat(100);
    let body = build(&m, &messages, &json!({"sessionId": long}), Some("k")).body;
    assert_eq!(body["prompt_cache_key"], "k".repeat(64));
}

#[test]
fn tool_call_ids_normalised_like_the_reference() {
    // Values computed with pi-ai 1.6.0's normaliser.
    assert_eq!(normalize_tool_call_id("call_abc|fc_1", false), "call_abc_fc_1");
    assert_eq!(short_hash("call_abc|fc_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), "sbtd1t3g86n");
    assert_eq!(short_hash(""), "k4n83c7h0j2b");
    assert_eq!(short_hash("a|b😀"), "f9xu5wylk6ie");
    assert_eq!(normalize_tool_call_id("a|b😀", false), "a_b__");
    assert_eq!(normalize_tool_call_id(&"x".repeat(50), true), "x".repeat(40));
    assert_eq!(normalize_tool_call_id(&"x".repeat(50), false), "x".repeat(50));
}

fn stream(model: &Value, fixture: &str) -> (Value, Vec<String>) {
    run(&OpenAiCompletions, model, &json!({}), fixture)
}

#[test]
fn s_6_6_stream_text_with_usage_only_final_chunk() {
    let (message, events) = stream(&model(), include_str!("fixtures/text.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
    assert_eq!(message["content"], json!([{"type": "text", "text": "Hello, wörld 🌍!"}]));
    assert_eq!(message["responseId"], "chatcmpl-1");
    assert_eq!(message["responseModel"], "gpt-x-2025");
    assert_eq!(message["stopReason"], "stop");
    assert_eq!(message["rawStopReason"], "stop");
    assert_eq!(message["usage"], usage(20.0, 9.0, 100.0, 0.0, &[("reasoning", 3.0)], [1.0, 2.0, 0.0, 0.0]));
}

#[test]
fn p_6_1_4_completions_blocks_stay_open_and_close_in_content_order() {
    let (message, events) = stream(&model(), include_str!("fixtures/thinking.sse"));
    assert_eq!(
        events,
        names(&[
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "text_start",
            "text_delta",
            "thinking_delta",
            "text_delta",
            "thinking_end",
            "text_end",
            "done"
        ])
    );
    assert_eq!(
        message["content"],
        json!([{"type": "thinking", "thinking": "Let me think. More.", "thinkingSignature": "reasoning_content"},
               {"type": "text", "text": "Answer done"}])
    );
    // The model echoed its own id: no responseModel.
    assert!(message.get("responseModel").is_none());
}

#[test]
fn p_6_4_1_parallel_interleaved_tool_calls_with_index_starting_at_1() {
    let (message, events) = stream(&model(), include_str!("fixtures/tools_index1.sse"));
    assert_eq!(
        events,
        names(&[
            "start",
            "text_start",
            "text_delta",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "text_end",
            "toolcall_end",
            "toolcall_end",
            "done"
        ])
    );
    assert_eq!(
        message["content"],
        json!([
            {"type": "text", "text": "Checking."},
            {"type": "toolCall", "id": "call_A", "name": "read", "arguments": {"path": "a.txt"}},
            {"type": "toolCall", "id": "call_B", "name": "grep", "arguments": {"pattern": "x\ty"}}
        ])
    );
    assert_eq!(message["stopReason"], "toolUse");
    assert_eq!(message["rawStopReason"], "tool_calls");
    assert_eq!(message["usage"], usage(50.0, 20.0, 0.0, 0.0, &[("reasoning", 0.0)], [1.0, 2.0, 0.0, 0.0]));
}

#[test]
fn p_6_4_1_missing_id_becomes_call_n_and_id_only_fragments_join() {
    // pi-ai leaves the id "" where §6.6 says call_<n>.
    let (message, events) = stream(&model(), include_str!("fixtures/tools_no_id.sse"));
    assert_eq!(
        events,
        names(&[
            "start",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "toolcall_end",
            "done"
        ])
    );
    assert_eq!(
        message["content"],
        json!([
            {"type": "toolCall", "id": "call_0", "name": "ls", "arguments": {}},
            {"type": "toolCall", "id": "only-id", "name": "cat", "arguments": {"f": 1}}
        ])
    );
}

#[test]
fn s_6_6_refusal_streams_as_text() {
    // pi-ai 1.6.0 drops `refusal`; §6.6 maps it to text.
    let (message, events) = stream(&model(), include_str!("fixtures/refusal.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
    assert_eq!(message["content"], json!([{"type": "text", "text": "I can't help with that."}]));
}

#[test]
fn s_6_6_error_chunk_ends_the_stream() {
    let (message, events) = stream(&model(), include_str!("fixtures/error_chunk.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_end", "error"]));
    assert_eq!(message["content"], json!([{"type": "text", "text": "Partial"}]));
    assert_eq!(message["stopReason"], "error");
    assert_eq!(message["errorMessage"], "Rate limit exceeded");
    let (message, _) = stream(&model(), "data: {\"error\":\"boom\"}\n\n");
    assert_eq!(message["errorMessage"], "\"boom\"");
}

#[test]
fn s_6_6_missing_finish_reason_is_an_error_unless_compat_says_none_come() {
    let fixture = include_str!("fixtures/no_finish.sse");
    let (message, events) = stream(&model(), fixture);
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_delta", "text_end", "error"]));
    assert_eq!(message["errorMessage"], "Stream ended without finish_reason");
    assert!(message.get("rawStopReason").is_none());

    let mut m = model();
    m["compat"] = json!({"supportsFinishReason": false});
    let (message, events) = stream(&m, fixture);
    assert_eq!(events.last().unwrap(), "done");
    assert_eq!(message["stopReason"], "stop");
    let (message, _) =
        stream(&m, include_str!("fixtures/tools_no_id.sse").replace("\"tool_calls\"}", "null}").as_str());
    assert_eq!(message["stopReason"], "toolUse");
}

#[test]
fn s_6_10_length_truncates_a_tool_call() {
    let (message, events) = stream(&model(), include_str!("fixtures/length.sse"));
    assert_eq!(
        events,
        names(&[
            "start",
            "text_start",
            "text_delta",
            "toolcall_start",
            "toolcall_delta",
            "text_end",
            "toolcall_end",
            "done"
        ])
    );
    assert_eq!(message["stopReason"], "length");
    let call = &message["content"][1];
    assert_eq!(call["arguments"], json!({}));
    let error = call["argumentsError"].as_str().unwrap();
    assert!(error.ends_with("\n\nReceived arguments:\n{\"text\": \"abc"), "{error}");
}

#[test]
fn s_6_10_content_filter_is_provider_finish_reason_error() {
    let (message, events) = stream(&model(), include_str!("fixtures/content_filter.sse"));
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_end", "error"]));
    assert_eq!(message["errorMessage"], "Provider finish_reason: content_filter");
    assert_eq!(message["rawStopReason"], "content_filter");
}

#[test]
fn s_6_10_usage_inside_the_choice_and_top_level_cached_tokens() {
    let (message, _) = stream(&model(), include_str!("fixtures/choice_usage.sse"));
    assert_eq!(message["usage"], usage(20.0, 2.0, 10.0, 0.0, &[("reasoning", 0.0)], [1.0, 2.0, 0.0, 0.0]));
    assert_eq!(message["responseModel"], "kimi");
}

#[test]
fn s_6_10_usage_cache_write_and_deepseek_hits() {
    let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,\"prompt_cache_hit_tokens\":30,\"prompt_tokens_details\":{\"cache_write_tokens\":50},\"reasoning_tokens\":4}}\n\ndata: [DONE]\n\n";
    let (message, _) = stream(&model(), sse);
    assert_eq!(message["usage"], usage(20.0, 5.0, 30.0, 50.0, &[("reasoning", 4.0)], [1.0, 2.0, 0.0, 0.0]));
}

#[test]
fn p_6_3_2_non_json_data_is_an_error_and_done_stops_reading() {
    let (message, events) =
        stream(&model(), "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {oops\n\n");
    assert_eq!(events, names(&["start", "text_start", "text_delta", "text_end", "error"]));
    assert_eq!(message["errorMessage"], "Invalid JSON in provider stream: {oops");
    let sse = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n";
    let (message, events) = stream(&model(), sse);
    assert_eq!(events, names(&["start", "done"]));
    assert_eq!(message["content"], json!([]));
}

proptest! {
    #[test]
    fn mapper_never_panics_on_arbitrary_json(events in prop::collection::vec((json_value(), prop::option::weighted(0.1, "(\\[DONE\\]|.{0,6})")), 0..16)) {
        let model = model();
        let options = json!({});
        let messages: Vec<Value> = Vec::new();
        let input = RequestInput { model: &model, messages: &crate::providers::json::from_values(&messages), options: &options, api_key: None, messages_json_len: None };
        let mut mapper = OpenAiCompletions.mapper(&input);
        let mut asm = Assembler::for_model(&model, true);
        for (data, text) in &events {
            mapper.on_event(None, &Json::from_value(data.clone()), &mut asm);
            if let Some(text) = text {
                mapper.on_text(None, text, &mut asm);
            }
        }
        mapper.on_end(&mut asm);
        prop_assert!(asm.finished());
    }

    #[test]
    fn request_never_panics_on_arbitrary_messages(messages in prop::collection::vec(json_value(), 0..6), options in json_value()) {
        let model = model();
        let input = RequestInput { model: &model, messages: &crate::providers::json::from_values(&messages), options: &options, api_key: Some("k"), messages_json_len: None };
        prop_assert!(OpenAiCompletions.build_request(&input).is_ok());
    }
}

/// Issue 13: tool-call fragments with fields of the wrong type, and calls no fragment named, end
/// the stream with an error naming the fragment and field (pi-ai reads them as missing and hands
/// the agent a call `{id: "", name: ""}`, which a replaying server repeats without end).
#[test]
fn issue_13_malformed_tool_call_fragments_are_stream_errors() {
    let chunk = |tool_calls: Value| {
        let data = json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": tool_calls}}]});
        format!("data: {data}\n\n")
    };
    let good = json!({"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}});
    let with = |key: &str, value: Value| {
        let mut fragment = good.clone();
        fragment[key] = value;
        fragment
    };
    let function = |key: &str, value: Value| {
        let mut fragment = good.clone();
        fragment["function"][key] = value;
        fragment
    };
    let finish = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let at = "choices[0].delta.tool_calls[0]";
    let cases = [
        (chunk(json!([with("index", json!("0"))])), format!("{at}: \"index\" must be an integer ≥ 0, got a string")),
        (chunk(json!([with("index", json!(-1))])), format!("{at}: \"index\" must be an integer ≥ 0, got a number")),
        (chunk(json!([with("index", json!(1.5))])), format!("{at}: \"index\" must be an integer ≥ 0, got a number")),
        (chunk(json!([with("id", json!(7))])), format!("{at}: \"id\" must be a string, got a number")),
        (chunk(json!([with("function", json!("f"))])), format!("{at}: \"function\" must be an object, got a string")),
        (
            chunk(json!([function("name", json!(["f"]))])),
            format!("{at}.function: \"name\" must be a string, got an array"),
        ),
        (
            chunk(json!([function("arguments", json!({"a": 1}))])),
            format!("{at}.function: \"arguments\" must be a string, got an object"),
        ),
        (chunk(json!(["call"])), format!("{at} must be an object, got a string")),
        (chunk(json!({"index": 0})), "choices[0].delta: \"tool_calls\" must be an array, got an object".into()),
        (
            chunk(json!([{"index": 0, "id": "call_1", "function": {"arguments": "{}"}}])),
            "tool call 0: no fragment carried \"function.name\"".into(),
        ),
        (chunk(json!([function("name", json!(null))])), "tool call 0: no fragment carried \"function.name\"".into()),
    ];
    for (body, want) in cases {
        let (message, events) = stream(&model(), &format!("{body}{finish}"));
        assert_eq!(events.last().map(String::as_str), Some("error"), "{body}");
        assert_eq!(message["stopReason"], "error");
        assert_eq!(message["errorMessage"], format!("Malformed openai-completions stream: {want}"), "{body}");
    }
    // The well-formed fragment is a tool call; null fields read as missing (servers send them).
    let (message, _) = stream(&model(), &format!("{}{finish}", chunk(json!([good.clone()]))));
    assert_eq!(message["stopReason"], "toolUse");
    assert_eq!(message["content"], json!([{"type": "toolCall", "id": "call_1", "name": "f", "arguments": {}}]));
    let nulls = json!([{"index": 0, "id": "call_1", "type": null, "function": {"name": "f", "arguments": null}}, {"index": null, "id": "call_1", "function": null}]);
    let (message, _) = stream(&model(), &format!("{}{finish}", chunk(nulls)));
    assert_eq!(message["stopReason"], "toolUse");
    assert_eq!(message["content"], json!([{"type": "toolCall", "id": "call_1", "name": "f", "arguments": {}}]));
}

#[test]
fn issue_33_reasoning_details_merge_keep_the_signature_and_close_into_the_thinking_signature() {
    let chunk = |details: Value| {
        format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"reasoning_details": details}}]}))
    };
    let fmt = "anthropic-claude-v1";
    let sse = [
        chunk(json!([{"type": "reasoning.text", "text": "", "signature": "", "format": fmt, "index": 0}])),
        chunk(json!([{"type": "reasoning.text", "text": "Think", "format": fmt, "index": 0}])),
        chunk(json!([{"type": "reasoning.text", "text": "ing.", "format": fmt, "index": 0}])),
        chunk(json!([{"type": "reasoning.text", "signature": "SIG", "format": fmt, "index": 0}])),
        chunk(json!([{"type": "reasoning.encrypted", "data": "opaque", "id": "r1"}, {"type": "unknown"}, 7])),
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".into(),
    ]
    .concat();
    let (message, events) = stream(&model(), &sse);
    assert_eq!(events, ["start", "thinking_start", "text_start", "text_delta", "thinking_end", "text_end", "done"]);
    let thinking = &message["content"][0];
    assert_eq!(thinking["thinking"], "", "details are replay data, not text");
    let details: Value = serde_json::from_str(thinking["thinkingSignature"].as_str().unwrap()).unwrap();
    // `signature ||= …` drops the empty one, then the signature-only detail's joins (the reference drops that one).
    assert_eq!(
        details,
        json!([{"type": "reasoning.text", "text": "Thinking.", "format": fmt, "index": 0, "signature": "SIG"},
               {"type": "reasoning.encrypted", "data": "opaque", "id": "r1"}])
    );
    // `index ??= …`, as `id`: a first fragment without one takes the next fragment's, at the end of its keys.
    let sse = [
        chunk(json!([{"type": "reasoning.text", "text": "A", "format": fmt}])),
        chunk(json!([{"type": "reasoning.text", "text": "B", "format": fmt, "index": 0}])),
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".into(),
    ]
    .concat();
    let (message, _) = stream(&model(), &sse);
    let signature = message["content"][0]["thinkingSignature"].as_str().unwrap();
    assert_eq!(signature, r#"[{"type":"reasoning.text","text":"AB","format":"anthropic-claude-v1","index":0}]"#);
}
