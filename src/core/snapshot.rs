//! Agent snapshots (D8): the versioned, JSON-compatible picture of an agent, its step-by-step
//! migrations, and the checks `Agent.restore` applies before anything is changed. Building the
//! snapshot from live values and applying it are in `agent`; this module is pure JSON.

use super::agent_state::MODES;
use super::approvals;
use super::text::wtf::drop_deep;
use super::validate::js_number_to_string;
use serde_json::{Map, Value};

pub const FORMAT: &str = "agent-loop-wasm/agent-snapshot";
pub const VERSION: u64 = 1;

/// A snapshot's field names (D8.1), one constant each; a checkpoint carries those it shares under the same names
/// (`checkpoint::field`). Code outside this module names a field only through these: `core::tests::layers` fails on a
/// literal such as `get(h, data, "checkpointSeq")` anywhere else.
pub mod field {
    pub const FORMAT: &str = "format";
    pub const VERSION: &str = "version";
    pub const MODEL: &str = "model";
    pub const THINKING_LEVEL: &str = "thinkingLevel";
    pub const MESSAGES: &str = "messages";
    pub const STEERING_QUEUE: &str = "steeringQueue";
    pub const FOLLOW_UP_QUEUE: &str = "followUpQueue";
    pub const STEERING_MODE: &str = "steeringMode";
    pub const FOLLOW_UP_MODE: &str = "followUpMode";
    pub const SESSION_ID: &str = "sessionId";
    pub const TOOL_NAMES: &str = "toolNames";
    pub const CHECKPOINT_SEQ: &str = "checkpointSeq";
    pub const RUNNING: &str = "running";
    pub const COMPLETED_TOOLS: &str = "completedTools";
    pub const APPROVALS: &str = "approvals";
    pub const USAGE: &str = "usage";
}

/// Every field of a snapshot, in the order `agent.snapshot()` writes them: the one definition. `check` reads each (a
/// test below holds it to that), and `index.d.ts`'s `AgentSnapshot` is checked against this list
/// (`tests/js/dts-names.test.mjs`).
pub const FIELDS: [&str; 16] = [
    field::FORMAT,
    field::VERSION,
    field::MODEL,
    field::THINKING_LEVEL,
    field::MESSAGES,
    field::STEERING_QUEUE,
    field::FOLLOW_UP_QUEUE,
    field::STEERING_MODE,
    field::FOLLOW_UP_MODE,
    field::SESSION_ID,
    field::TOOL_NAMES,
    field::CHECKPOINT_SEQ,
    field::RUNNING,
    field::COMPLETED_TOOLS,
    field::APPROVALS,
    field::USAGE,
];

/// One migration step: a snapshot of version `v` in, the same snapshot at version `v + 1` out.
type Migration = fn(Map<String, Value>) -> Result<Map<String, Value>, String>;

/// `MIGRATIONS[i]` turns version `i + 1` into version `i + 2`. Version 1 is the first format, so
/// there is nothing to migrate yet; a format change appends its step here (with fixtures).
const MIGRATIONS: [Migration; 0] = [];

fn restore_error(detail: &str) -> String {
    format!("Agent.restore: {detail}")
}

fn invalid(path: &str, problem: &str) -> String {
    restore_error(&format!("invalid snapshot: {path}: {problem}"))
}

/// Checks the envelope, migrates to `VERSION` and checks every field. `Err` is the exact message
/// of the `Error` `Agent.restore` throws; nothing has been applied at that point.
pub fn migrate(mut value: Value) -> Result<Map<String, Value>, String> {
    // Checked in place, so a rejected snapshot (of any depth) is dropped without recursion.
    let outcome = match &mut value {
        Value::Object(snapshot) => migrate_map(snapshot),
        _ => Err(restore_error("not an agent-loop-wasm snapshot")),
    };
    match (outcome, value) {
        (Ok(()), Value::Object(snapshot)) => Ok(snapshot),
        (Ok(()), other) => {
            drop_deep(other);
            Err(restore_error("not an agent-loop-wasm snapshot"))
        }
        (Err(e), other) => {
            drop_deep(other);
            Err(e)
        }
    }
}

fn migrate_map(snapshot: &mut Map<String, Value>) -> Result<(), String> {
    if snapshot.get(field::FORMAT).and_then(Value::as_str) != Some(FORMAT) {
        return Err(restore_error("not an agent-loop-wasm snapshot"));
    }
    let version = match snapshot.get(field::VERSION) {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(other) => return Err(restore_error(&format!("unknown snapshot version {}", describe(other)))),
        None => return Err(restore_error("unknown snapshot version undefined")),
    };
    let max = VERSION as f64;
    if version.fract() == 0.0 && version > max {
        return Err(restore_error(&format!(
            "snapshot version {} is newer than this library supports ({VERSION})",
            js_number_to_string(version)
        )));
    }
    if version.fract() != 0.0 || version < 1.0 {
        return Err(restore_error(&format!("unknown snapshot version {}", js_number_to_string(version))));
    }
    let mut current = version as usize;
    while current < VERSION as usize {
        let Some(step) = MIGRATIONS.get(current - 1) else {
            return Err(restore_error(&format!("unknown snapshot version {current}")));
        };
        *snapshot = step(std::mem::take(snapshot))?;
        current += 1;
        snapshot.insert(field::VERSION.into(), Value::from(current));
    }
    check(snapshot)
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => super::text::json::js_json_stringify(other),
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn expect_messages(snapshot: &Map<String, Value>, key: &str) -> Result<(), String> {
    let Some(Value::Array(messages)) = snapshot.get(key) else {
        let got = snapshot.get(key).map_or("undefined", kind_name);
        return Err(invalid(key, &format!("expected an array, got {got}")));
    };
    for (i, message) in messages.iter().enumerate() {
        let Value::Object(fields) = message else {
            return Err(invalid(&format!("{key}[{i}]"), "expected an object"));
        };
        if !matches!(fields.get("role"), Some(Value::String(_))) {
            return Err(invalid(&format!("{key}[{i}].role"), "expected a string"));
        }
    }
    Ok(())
}

/// The fields of a current-version snapshot (D8.1).
fn check(snapshot: &Map<String, Value>) -> Result<(), String> {
    if !matches!(snapshot.get(field::MODEL), Some(Value::Object(_))) {
        return Err(invalid(field::MODEL, "expected an object"));
    }
    if !matches!(snapshot.get(field::THINKING_LEVEL), Some(Value::String(_))) {
        return Err(invalid(field::THINKING_LEVEL, "expected a string"));
    }
    expect_messages(snapshot, field::MESSAGES)?;
    expect_messages(snapshot, field::STEERING_QUEUE)?;
    expect_messages(snapshot, field::FOLLOW_UP_QUEUE)?;
    for key in [field::STEERING_MODE, field::FOLLOW_UP_MODE] {
        match snapshot.get(key).and_then(Value::as_str) {
            Some(mode) if MODES.contains(&mode) => {}
            _ => return Err(invalid(key, "expected \"all\" or \"one-at-a-time\"")),
        }
    }
    match snapshot.get(field::SESSION_ID) {
        None | Some(Value::String(_)) => {}
        Some(_) => return Err(invalid(field::SESSION_ID, "expected a string")),
    }
    match snapshot.get(field::TOOL_NAMES) {
        None => {}
        Some(Value::Array(names)) => {
            for (i, name) in names.iter().enumerate() {
                if !name.is_string() {
                    return Err(invalid(&format!("{}[{i}]", field::TOOL_NAMES), "expected a string"));
                }
            }
        }
        Some(_) => return Err(invalid(field::TOOL_NAMES, "expected an array")),
    }
    // Durability fields (optional): the last checkpoint stored, a run to resume.
    match snapshot.get(field::CHECKPOINT_SEQ) {
        None => {}
        Some(Value::Number(n)) if n.as_f64().is_some_and(|n| n >= 0.0 && n.fract() == 0.0) => {}
        Some(_) => return Err(invalid(field::CHECKPOINT_SEQ, "expected a non-negative integer")),
    }
    match snapshot.get(field::RUNNING) {
        None | Some(Value::Bool(_)) => {}
        Some(_) => return Err(invalid(field::RUNNING, "expected a boolean")),
    }
    match snapshot.get(field::COMPLETED_TOOLS) {
        None | Some(Value::Array(_)) => {}
        Some(_) => return Err(invalid(field::COMPLETED_TOOLS, "expected an array")),
    }
    // Issue 30: tool calls waiting for a person.
    match snapshot.get(field::APPROVALS) {
        None => {}
        Some(Value::Object(pause)) => {
            for key in approvals::FIELDS {
                if !matches!(pause.get(key), Some(Value::Array(_))) {
                    return Err(invalid(&format!("{}.{key}", field::APPROVALS), "expected an array"));
                }
            }
        }
        Some(_) => return Err(invalid(field::APPROVALS, "expected an object")),
    }
    // Issue 32: the agent's usage totals.
    match snapshot.get(field::USAGE) {
        None => {}
        Some(Value::Object(usage)) => {
            let number = |v: Option<&Value>| v.and_then(Value::as_f64).is_some_and(|n| n >= 0.0);
            for key in crate::core::budget::USAGE_FIELDS {
                if !number(usage.get(key)) {
                    return Err(invalid(&format!("{}.{key}", field::USAGE), "expected a non-negative number"));
                }
            }
            let Some(Value::Object(cost)) = usage.get("cost") else {
                return Err(invalid(&format!("{}.cost", field::USAGE), "expected an object"));
            };
            for key in crate::core::budget::COST_FIELDS {
                if !number(cost.get(key)) {
                    return Err(invalid(&format!("{}.cost.{key}", field::USAGE), "expected a non-negative number"));
                }
            }
        }
        Some(_) => return Err(invalid(field::USAGE, "expected an object")),
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture() -> Value {
        json!({
            "format": FORMAT, "version": 1,
            "model": {"id": "m", "api": "faux", "provider": "faux"},
            "thinkingLevel": "off",
            "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
            "steeringQueue": [], "followUpQueue": [{"role": "user", "content": "later", "timestamp": 2}],
            "steeringMode": "one-at-a-time", "followUpMode": "all",
            "sessionId": "s1", "toolNames": ["echo"]
        })
    }

    /// `check` reads every field of `FIELDS`: a snapshot with any one of them `null` is refused, and the error names it
    /// (the envelope's two have errors of their own).
    #[test]
    fn d8_1_every_field_is_checked() {
        for key in FIELDS {
            let mut v = fixture();
            v[key] = Value::Null;
            let error = migrate(v).unwrap_err();
            match key {
                field::FORMAT => assert_eq!(error, "Agent.restore: not an agent-loop-wasm snapshot"),
                field::VERSION => assert_eq!(error, "Agent.restore: unknown snapshot version null"),
                _ => assert!(error.starts_with(&format!("Agent.restore: invalid snapshot: {key}: ")), "{key}: {error}"),
            }
        }
    }

    #[test]
    fn d8_3_current_version_passes_unchanged() {
        let migrated = migrate(fixture()).unwrap();
        assert_eq!(Value::Object(migrated), fixture());
    }

    /// Issue 13: a snapshot holding lone surrogates (stand-ins) and values of any depth migrates and prints back
    /// exactly; a rejected one of any depth is dropped without recursion.
    #[test]
    fn d8_3_deep_values_and_lone_surrogates_survive() {
        use crate::core::text::{json::js_json_stringify, wtf};
        let deep = format!("{}1{}", "[".repeat(200_000), "]".repeat(200_000));
        let mut text = js_json_stringify(&fixture());
        text = text.replacen(r#""content":"hi""#, &format!(r#""content":"h\ud800","details":{deep}"#), 1);
        assert!(text.contains(r#""content":"h\ud800","details":[[["#));
        let migrated = migrate(wtf::parse(&text).unwrap()).unwrap();
        let migrated = Value::Object(migrated);
        assert_eq!(js_json_stringify(&migrated), text);
        wtf::drop_deep(migrated);
        assert_eq!(migrate(wtf::parse(&deep).unwrap()).unwrap_err(), "Agent.restore: not an agent-loop-wasm snapshot");
        let bad = text.replacen(r#""thinkingLevel":"off""#, r#""thinkingLevel":1"#, 1);
        assert_eq!(
            migrate(wtf::parse(&bad).unwrap()).unwrap_err(),
            "Agent.restore: invalid snapshot: thinkingLevel: expected a string"
        );
    }

    #[test]
    fn d8_3_envelope_errors_are_exact() {
        assert_eq!(migrate(json!([])).unwrap_err(), "Agent.restore: not an agent-loop-wasm snapshot");
        assert_eq!(migrate(json!({"format": "x"})).unwrap_err(), "Agent.restore: not an agent-loop-wasm snapshot");
        let mut v = fixture();
        v["version"] = json!(2);
        assert_eq!(
            migrate(v).unwrap_err(),
            "Agent.restore: snapshot version 2 is newer than this library supports (1)"
        );
        let mut v = fixture();
        v["version"] = json!(0);
        assert_eq!(migrate(v).unwrap_err(), "Agent.restore: unknown snapshot version 0");
        let mut v = fixture();
        v["version"] = json!(1.5);
        assert_eq!(migrate(v).unwrap_err(), "Agent.restore: unknown snapshot version 1.5");
        let mut v = fixture();
        v["version"] = json!("1");
        assert_eq!(migrate(v).unwrap_err(), "Agent.restore: unknown snapshot version 1");
    }

    #[test]
    fn d8_3_field_errors_name_the_path() {
        let mut v = fixture();
        v["messages"] = json!([{"role": "user"}, {"role": "assistant"}, {"role": 3}]);
        assert_eq!(migrate(v).unwrap_err(), "Agent.restore: invalid snapshot: messages[2].role: expected a string");
        let mut v = fixture();
        v["followUpQueue"] = json!([1]);
        assert_eq!(migrate(v).unwrap_err(), "Agent.restore: invalid snapshot: followUpQueue[0]: expected an object");
        let mut v = fixture();
        v["steeringMode"] = json!("some");
        assert_eq!(
            migrate(v).unwrap_err(),
            "Agent.restore: invalid snapshot: steeringMode: expected \"all\" or \"one-at-a-time\""
        );
        let mut v = fixture();
        v.as_object_mut().unwrap().remove("messages");
        assert_eq!(
            migrate(v).unwrap_err(),
            "Agent.restore: invalid snapshot: messages: expected an array, got undefined"
        );
    }
}
