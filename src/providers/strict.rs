//! Field checks for the stream items the wire formats turn into content (issue 13, P-6.1.2): a
//! tool call, index or delta whose fields have the wrong type or are missing ends the stream with
//! one clear error naming the item and the field, instead of a block with made-up fields (a tool
//! call `{id: "|", name: ""}` that no tool answers and a replaying server repeats forever).

use super::json::Json;

/// The JSON type of a value, as the messages name it.
pub fn type_name(value: Option<&Json<'_>>) -> &'static str {
    match value {
        None => "missing",
        Some(Json::Null) => "null",
        Some(Json::Bool(_)) => "a boolean",
        Some(Json::Number(_)) => "a number",
        Some(Json::String(_)) => "a string",
        Some(Json::Array(_)) => "an array",
        Some(Json::Object(_)) => "an object",
    }
}

/// `Malformed <format> stream: <item>: "<field>" must be <expected>, got <type>`.
pub fn message(format: &str, item: &str, field: &str, expected: &str, got: Option<&Json<'_>>) -> String {
    format!("Malformed {format} stream: {item}: \"{field}\" must be {expected}, got {}", type_name(got))
}

/// A field that must be a non-empty string.
pub fn required_str<'j>(format: &str, item: &str, parent: &'j Json<'_>, field: &str) -> Result<&'j str, String> {
    let value = parent.get(field);
    match value.and_then(Json::as_str) {
        Some(text) if !text.is_empty() => Ok(text),
        Some(_) => Err(format!("Malformed {format} stream: {item}: \"{field}\" must be a non-empty string, got \"\"")),
        None => Err(message(format, item, field, "a non-empty string", value)),
    }
}

/// A field that must be a string (empty allowed: a delta may be empty).
pub fn required_string<'j>(format: &str, item: &str, parent: &'j Json<'_>, field: &str) -> Result<&'j str, String> {
    let value = parent.get(field);
    value.and_then(Json::as_str).ok_or_else(|| message(format, item, field, "a string", value))
}

/// A field that may be missing or `null`, else must be a string.
pub fn optional_str<'j>(
    format: &str,
    item: &str,
    parent: &'j Json<'_>,
    field: &str,
) -> Result<Option<&'j str>, String> {
    match parent.get(field) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(text)) => Ok(Some(text)),
        other => Err(message(format, item, field, "a string", other)),
    }
}

/// A field that may be missing or `null`, else must be an integer ≥ 0 (an array index).
pub fn optional_index(format: &str, item: &str, parent: &Json<'_>, field: &str) -> Result<Option<u64>, String> {
    match parent.get(field) {
        None | Some(Json::Null) => Ok(None),
        Some(value) => match value.as_u64() {
            Some(index) => Ok(Some(index)),
            None => Err(message(format, item, field, "an integer ≥ 0", Some(value))),
        },
    }
}

/// A field that must be an integer ≥ 0.
pub fn required_index(format: &str, item: &str, parent: &Json<'_>, field: &str) -> Result<u64, String> {
    let value = parent.get(field);
    value.and_then(Json::as_u64).ok_or_else(|| message(format, item, field, "an integer ≥ 0", value))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::providers::json::parse;

    #[test]
    fn issue_13_messages_name_the_item_field_and_type() {
        let item = parse(r#"{"call_id":5,"name":"","id":null,"index":-1,"ok":"x","i":3}"#).unwrap();
        fn err<T: std::fmt::Debug>(r: Result<T, String>) -> String {
            r.unwrap_err()
        }
        assert_eq!(
            err(required_str("f", "item x", &item, "call_id")),
            "Malformed f stream: item x: \"call_id\" must be a non-empty string, got a number"
        );
        assert_eq!(
            err(required_str("f", "item x", &item, "name")),
            "Malformed f stream: item x: \"name\" must be a non-empty string, got \"\""
        );
        assert_eq!(
            err(required_str("f", "item x", &item, "absent")),
            "Malformed f stream: item x: \"absent\" must be a non-empty string, got missing"
        );
        assert_eq!(required_str("f", "i", &item, "ok"), Ok("x"));
        assert_eq!(optional_str("f", "i", &item, "id"), Ok(None));
        assert_eq!(optional_str("f", "i", &item, "absent"), Ok(None));
        assert_eq!(
            err(optional_str("f", "i", &item, "i")),
            "Malformed f stream: i: \"i\" must be a string, got a number"
        );
        assert_eq!(optional_index("f", "i", &item, "i"), Ok(Some(3)));
        assert_eq!(
            err(optional_index("f", "i", &item, "index")),
            "Malformed f stream: i: \"index\" must be an integer ≥ 0, got a number"
        );
        assert_eq!(
            err(required_index("f", "i", &item, "ok")),
            "Malformed f stream: i: \"ok\" must be an integer ≥ 0, got a string"
        );
        assert_eq!(required_index("f", "i", &item, "i"), Ok(3));
        assert_eq!(required_string("f", "i", &item, "name"), Ok(""));
        assert_eq!(
            err(required_string("f", "i", &item, "id")),
            "Malformed f stream: i: \"id\" must be a string, got null"
        );
    }

    use crate::providers::request::test_driver;
    use crate::providers::{WireFormat, anthropic, google, openai_completions, openai_responses};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// Each wire format with its model and a few valid events (the frame a hostile piece is put into).
    fn formats() -> Vec<(Box<dyn WireFormat>, Value, Vec<&'static str>)> {
        let model = |api: &str| json!({"id": "m", "api": api, "provider": "p", "cost": {}});
        vec![
            (
                Box::new(openai_completions::OpenAiCompletions),
                model("openai-completions"),
                vec![
                    r#"{"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}"#,
                    r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"t","arguments":"{\"x\":"}}]}}]}"#,
                    r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
                    "[DONE]",
                ],
            ),
            (
                Box::new(openai_responses::OpenAiResponses),
                model("openai-responses"),
                vec![
                    r#"{"type":"response.created","response":{"id":"r"}}"#,
                    r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c","name":"t"}}"#,
                    r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\":1}"}"#,
                    r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c","name":"t"}}"#,
                    r#"{"type":"response.completed","response":{"status":"completed"}}"#,
                ],
            ),
            (
                Box::new(anthropic::AnthropicMessages),
                model("anthropic-messages"),
                vec![
                    r#"{"type":"message_start","message":{"id":"m","usage":{}}}"#,
                    r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"t","input":{}}}"#,
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
                    r#"{"type":"content_block_stop","index":0}"#,
                    r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
                    r#"{"type":"message_stop"}"#,
                ],
            ),
            (
                Box::new(google::GoogleGenerativeAi),
                model("google-generative-ai"),
                vec![
                    r#"{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}"#,
                    r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"t","args":{"x":1}}}]},"finishReason":"STOP"}]}"#,
                ],
            ),
        ]
    }

    /// Issue 13's hostile stream pieces: lone surrogates (escaped, as a provider can send them),
    /// deep nesting (as data, as an argument text, as arguments), and fields of the wrong type.
    fn hostile(depth: usize, surrogate: &str) -> Vec<String> {
        let open = "[".repeat(depth);
        let close = "]".repeat(depth);
        let nested = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        vec![
            format!(r#"{{"choices":[{{"index":0,"delta":{{"content":"x{surrogate}y"}}}}]}}"#),
            format!(r#"{{"type":"response.output_text.delta","output_index":0,"delta":"{surrogate}"}}"#),
            format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"input_json_delta","partial_json":"{{\"{surrogate}\":\"{surrogate}\"}}"}}}}"#),
            format!(r#"{{"candidates":[{{"content":{{"parts":[{{"text":"{surrogate}","thought":true}}]}}}}]}}"#),
            format!(r#"{{"{surrogate}":{open}{close}}}"#),
            format!("{open}{close}"),
            format!(r#"{{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{open}"}}"#),
            format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"input_json_delta","partial_json":"{open}"}}}}"#),
            format!(r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":"{}"}}}}]}}}}]}}"#, nested.replace('"', "\\\"")),
            format!(r#"{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"t{surrogate}","args":{nested}}}}}]}}}}]}}"#),
            r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":5,"name":[]}}"#.into(),
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":null,"name":"t"}}"#.into(),
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b"}]}}]}"#.into(),
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"t","args":[1]}}]}}]}"#.into(),
        ]
    }

    #[test]
    fn issue_13_hostile_pieces_are_json_apart_from_their_surrogates() {
        for piece in hostile(3, "x") {
            assert!(serde_json::from_str::<Value>(&piece).is_ok(), "{piece}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Issue 13 / P-6.1.2: whatever hostile pieces a stream carries, every wire format ends it
        /// with exactly one terminal event (last), never panics, and never finishes a message with
        /// a tool call whose id or name it did not receive as a non-empty string.
        #[test]
        fn issue_13_hostile_stream_pieces_end_with_one_terminal_event(
            format in 0usize..4,
            picks in prop::collection::vec((any::<bool>(), 0usize..64), 1..10),
            depth in prop::sample::select(vec![1usize, 64, 200, 3000]),
            surrogate in prop::sample::select(vec!["\\ud800", "\\udfff", "\\ud83d", "\\ud83d\\ude00", "\\uDBFF\\u0041"]),
        ) {
            let formats = formats();
            let (wire, model, valid) = &formats[format];
            let bad = hostile(depth, surrogate);
            let mut sse = String::new();
            for (use_valid, n) in picks {
                let data = if use_valid { valid[n % valid.len()].to_string() } else { bad[n % bad.len()].clone() };
                sse.push_str("data: ");
                sse.push_str(&data);
                sse.push_str("\n\n");
            }
            let (message, names) = test_driver::run(wire.as_ref(), model, &json!({"timestamp": 1}), &sse);
            let terminal = names.iter().filter(|n| *n == "done" || *n == "error").count();
            prop_assert_eq!(terminal, 1, "{:?}", names);
            prop_assert!(names.last().is_some_and(|n| n == "done" || n == "error"));
            // A call the stream ended on (an error message) never runs; a finished message's calls do.
            let finished = names.last().is_some_and(|n| n == "done");
            for block in message["content"].as_array().into_iter().flatten().filter(|_| finished) {
                if block["type"] == "toolCall" {
                    prop_assert!(block["id"].as_str().is_some_and(|s| !s.is_empty()), "{}", block);
                    prop_assert!(block["name"].as_str().is_some_and(|s| !s.is_empty()), "{}", block);
                }
            }
        }
    }
}
