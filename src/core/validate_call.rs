//! `validateToolArguments` on host values (T-4.3): the argumentsError check, then the pure
//! validator of `validate` on a JSON copy of the arguments. The transcript is never modified.

use super::host::{Host, Kind};
use super::validate::{PatternMatcher, coerce_and_validate, format_validation_error, schema_problem};

struct HostPatterns<'a, H: Host>(&'a H);

impl<H: Host> PatternMatcher for HostPatterns<'_, H> {
    fn is_match(&self, pattern: &str, text: &str) -> Option<bool> {
        self.0.regex_test(pattern, text)
    }
}

/// A JSON copy of a host value as serde_json sees it (`undefined` → `null`).
fn to_json<H: Host>(h: &H, v: &H::V) -> Result<serde_json::Value, H::V> {
    match h.json_stringify(v, false)? {
        Some(text) => serde_json::from_str(&text).map_err(|e| h.error(&e.to_string(), false)),
        None => Ok(serde_json::Value::Null),
    }
}

fn from_json<H: Host>(h: &H, v: &serde_json::Value) -> Result<H::V, H::V> {
    let text = serde_json::to_string(v).map_err(|e| h.error(&e.to_string(), false))?;
    h.json_parse(&text)
}

/// Validates `args` (the possibly prepared arguments of `call`) against `tool.parameters` and
/// returns the coerced copy; throws (as `Err`) an `Error` with the exact T-4.3.5 text.
pub fn validate_tool_call<H: Host>(h: &H, tool: &H::V, call: &H::V, args: &H::V) -> Result<H::V, H::V> {
    let name_value = h.get(tool, "name")?;
    let name = h.as_string(&name_value).unwrap_or_else(|| h.error_message(&name_value));
    if h.kind(call).is_object_like() {
        let arguments_error = h.get(call, "argumentsError")?;
        if h.truthy(&arguments_error) {
            let detail = h.as_string(&arguments_error).unwrap_or_else(|| h.error_message(&arguments_error));
            return Err(h.error(&format!("Invalid arguments for tool \"{name}\": {detail}"), false));
        }
    }
    let parameters = h.get(tool, "parameters")?;
    if h.kind(&parameters) == Kind::Undefined {
        return Err(h.error("A schema must be an object or a boolean, got undefined", false));
    }
    let schema = to_json(h, &parameters)?;
    if let Some(problem) = schema_problem(&schema, &HostPatterns(h)) {
        return Err(h.error(&problem, false));
    }
    let value = to_json(h, args)?;
    match coerce_and_validate(&schema, &value, &HostPatterns(h)) {
        Ok(coerced) => from_json(h, &coerced),
        Err(errors) => {
            let received = h.json_stringify(args, true)?.unwrap_or_else(|| "undefined".to_string());
            Err(h.error(&format_validation_error(&name, &errors, &received), false))
        }
    }
}
