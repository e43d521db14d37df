//! stub: being written (final parse and repair of tool arguments)
pub fn parse_tool_arguments(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        _ => Err(format!("Tool call arguments must be a JSON object\n\nReceived arguments:\n{text}")),
    }
}
