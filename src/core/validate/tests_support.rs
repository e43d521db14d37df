//! Test helpers: a `PatternMatcher` backed by the `regex` crate (close to ECMAScript for the patterns tests use).

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use super::PatternMatcher;

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

/// What `validate_tool_arguments` answers, in the tables' words: the coerced value as JSON, the error lines
/// (`path: message`), or `THROW <message>` for a schema problem.
pub(crate) fn answer(schema: &Value, args: &Value) -> String {
    match super::validate_tool_arguments("t", schema, args, &TestRegex) {
        Ok(v) => crate::core::text::json::js_json_stringify(&v),
        Err(text) => match text.strip_prefix("Validation failed for tool \"t\":\n") {
            Some(rest) => rest
                .split("\n\nReceived arguments:\n")
                .next()
                .unwrap_or("")
                .lines()
                .map(|l| l.strip_prefix("  - ").unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n"),
            None => format!("THROW {text}"),
        },
    }
}

/// Checks every `[schema, arguments, expected]` line of a table.
#[allow(clippy::panic)]
pub(crate) fn expect_all(table: &str) {
    let mut failures = Vec::new();
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = match serde_json::from_str(line) {
            Ok(case) => case,
            Err(e) => panic!("bad table line {line}: {e}"),
        };
        let (schema, args, want) = match case.as_array().map(Vec::as_slice) {
            Some([schema, args, Value::String(want)]) => (schema, args, want),
            _ => panic!("bad table line {line}"),
        };
        let got = answer(schema, args);
        if &got != want {
            failures.push(format!("schema {schema}\nargs   {args}\nwant   {want}\ngot    {got}\n"));
        }
    }
    assert!(failures.is_empty(), "{} case(s) differ:\n{}", failures.len(), failures.join("\n"));
}
