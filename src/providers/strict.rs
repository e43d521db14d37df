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
#[allow(clippy::unwrap_used)]
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
}
