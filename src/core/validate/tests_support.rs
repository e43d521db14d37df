//! Test helpers: a `PatternMatcher` backed by the `regex` crate (close to ECMAScript for the patterns tests use).

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use super::{coerce_and_validate, PatternMatcher, SchemaError};

pub(crate) struct TestRegex;

thread_local! {
    static CACHE: RefCell<HashMap<String, Option<regex::Regex>>> = RefCell::new(HashMap::new());
}

impl PatternMatcher for TestRegex {
    fn is_match(&self, pattern: &str, text: &str) -> Option<bool> {
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let re = cache.entry(pattern.to_string()).or_insert_with(|| regex::Regex::new(pattern).ok());
            re.as_ref().map(|r| r.is_match(text))
        })
    }
}

/// Coerce and validate with the test matcher.
pub(crate) fn run(schema: &Value, args: &Value) -> Result<Value, Vec<SchemaError>> {
    coerce_and_validate(schema, args, &TestRegex)
}

/// The errors as `path: message` lines.
pub(crate) fn errors(schema: &Value, args: &Value) -> Vec<String> {
    match run(schema, args) {
        Ok(v) => vec![format!("OK {v}")],
        Err(errors) => errors.into_iter().map(|e| format!("{}: {}", e.path, e.message)).collect(),
    }
}

/// The coerced value, or the errors joined.
pub(crate) fn coerced(schema: &Value, args: &Value) -> Value {
    match run(schema, args) {
        Ok(v) => v,
        Err(errors) => Value::String(
            errors.into_iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>().join(" | "),
        ),
    }
}
