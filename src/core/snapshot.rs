//! Agent snapshots (D8): the versioned, JSON-compatible picture of an agent, its step-by-step
//! migrations, and the checks `Agent.restore` applies before anything is changed. Building the
//! snapshot from live values and applying it are in `agent`; this module works on a fresh plain copy
//! of a snapshot (`JSON.parse` of its text), reading its structure through the host: the loop's wasm
//! carries no JSON tree of its own for it (issue 43).

use super::agent_state::MODES;
use super::approvals;
use super::fast::FastPaths;
use super::host::{Host, Kind};
use super::validate::js_number_to_string;

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

/// One migration step: a snapshot of version `v` (a fresh plain value the step may change in place) made the same
/// snapshot at version `v + 1`.
type Migration<H> = fn(&H, &<H as Host>::V) -> Result<(), String>;

/// `migrations()[i]` turns version `i + 1` into version `i + 2`. Version 1 is the first format, so there is nothing
/// to migrate yet; a format change appends its step here (with fixtures).
fn migrations<H: FastPaths>() -> [Migration<H>; 0] {
    []
}

fn restore_error(detail: &str) -> String {
    format!("Agent.restore: {detail}")
}

fn invalid(path: &str, problem: &str) -> String {
    restore_error(&format!("invalid snapshot: {path}: {problem}"))
}

/// Checks the envelope of `snapshot` (a fresh plain value: `JSON.parse` of a snapshot's text), migrates it in place
/// to `VERSION` and checks every field. `Err` is the exact message of the `Error` `Agent.restore` throws; nothing has
/// been applied at that point. Reads only the structure: the messages' contents are never visited.
pub fn migrate<H: FastPaths>(h: &H, snapshot: &H::V) -> Result<(), String> {
    let not_ours = || restore_error("not an agent-loop-wasm snapshot");
    let get = |key: &str| h.get(snapshot, key).map_err(|e| h.error_message(&e));
    if h.kind(snapshot) != Kind::Object || h.as_string(&get(field::FORMAT)?).as_deref() != Some(FORMAT) {
        return Err(not_ours());
    }
    let version = get(field::VERSION)?;
    let version = match h.kind(&version) {
        Kind::Number => h.as_number(&version).unwrap_or(f64::NAN),
        Kind::Undefined => return Err(restore_error("unknown snapshot version undefined")),
        _ => return Err(restore_error(&format!("unknown snapshot version {}", describe(h, &version)))),
    };
    let max = VERSION as f64;
    if version.fract() == 0.0 && version > max {
        // `to_string`, not `{VERSION}`: an integer's `Display` is formatter code the wasm otherwise does without.
        let supported = VERSION.to_string();
        return Err(restore_error(&format!(
            "snapshot version {} is newer than this library supports ({supported})",
            js_number_to_string(version)
        )));
    }
    if version.fract() != 0.0 || version < 1.0 {
        return Err(restore_error(&format!("unknown snapshot version {}", js_number_to_string(version))));
    }
    let mut current = version as usize;
    while current < VERSION as usize {
        let Some(step) = migrations::<H>().get(current - 1).copied() else {
            return Err(restore_error(&format!("unknown snapshot version {current}")));
        };
        step(h, snapshot)?;
        current += 1;
        h.set(snapshot, field::VERSION, &h.number(current as f64)).map_err(|e| h.error_message(&e))?;
    }
    check(h, snapshot).map_err(|e| match e {
        Problem::Invalid(message) => message,
        Problem::Thrown(thrown) => h.error_message(&thrown),
    })
}

/// What `check` found: the D8.3 message, or a value a read threw (never, on a fresh plain value).
enum Problem<V> {
    Invalid(String),
    Thrown(V),
}

impl<V> From<V> for Problem<V> {
    fn from(thrown: V) -> Self {
        Problem::Thrown(thrown)
    }
}

fn describe<H: Host>(h: &H, v: &H::V) -> String {
    h.as_string(v).or_else(|| h.json_stringify(v, false).ok().flatten()).unwrap_or_default()
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Undefined => "undefined",
        Kind::Null => "null",
        Kind::Bool => "a boolean",
        Kind::Number => "a number",
        Kind::String => "a string",
        Kind::Array => "an array",
        Kind::Object | Kind::Function | Kind::Other => "an object",
    }
}

fn expect_messages<H: FastPaths>(h: &H, snapshot: &H::V, key: &str) -> Result<(), Problem<H::V>> {
    let list = h.get(snapshot, key)?;
    let kind = h.kind(&list);
    if kind != Kind::Array {
        return Err(Problem::Invalid(invalid(key, &format!("expected an array, got {}", kind_name(kind)))));
    }
    match h.first_bad_message(&list)? {
        None => Ok(()),
        Some((i, true)) => Err(Problem::Invalid(invalid(&format!("{key}[{i}]"), "expected an object"))),
        Some((i, false)) => Err(Problem::Invalid(invalid(&format!("{key}[{i}].role"), "expected a string"))),
    }
}

/// The fields of a current-version snapshot (D8.1).
fn check<H: FastPaths>(h: &H, snapshot: &H::V) -> Result<(), Problem<H::V>> {
    let fail = |path: &str, problem: &str| Err(Problem::Invalid(invalid(path, problem)));
    let kind = |key: &str| -> Result<(H::V, Kind), Problem<H::V>> {
        let v = h.get(snapshot, key)?;
        let k = h.kind(&v);
        Ok((v, k))
    };
    let non_negative =
        |v: &H::V, integer: bool| h.as_number(v).is_some_and(|n| n >= 0.0 && (!integer || n.fract() == 0.0));
    if kind(field::MODEL)?.1 != Kind::Object {
        return fail(field::MODEL, "expected an object");
    }
    if kind(field::THINKING_LEVEL)?.1 != Kind::String {
        return fail(field::THINKING_LEVEL, "expected a string");
    }
    expect_messages(h, snapshot, field::MESSAGES)?;
    expect_messages(h, snapshot, field::STEERING_QUEUE)?;
    expect_messages(h, snapshot, field::FOLLOW_UP_QUEUE)?;
    for key in [field::STEERING_MODE, field::FOLLOW_UP_MODE] {
        let (mode, _) = kind(key)?;
        if !h.as_string(&mode).is_some_and(|mode| MODES.contains(&mode.as_str())) {
            return fail(key, "expected \"all\" or \"one-at-a-time\"");
        }
    }
    if !matches!(kind(field::SESSION_ID)?.1, Kind::Undefined | Kind::String) {
        return fail(field::SESSION_ID, "expected a string");
    }
    match kind(field::TOOL_NAMES)? {
        (_, Kind::Undefined) => {}
        (names, Kind::Array) => {
            for (i, name) in h.array_items(&names)?.iter().enumerate() {
                if h.kind(name) != Kind::String {
                    return fail(&format!("{}[{i}]", field::TOOL_NAMES), "expected a string");
                }
            }
        }
        _ => return fail(field::TOOL_NAMES, "expected an array"),
    }
    // Durability fields (optional): the last checkpoint stored, a run to resume.
    match kind(field::CHECKPOINT_SEQ)? {
        (_, Kind::Undefined) => {}
        (seq, Kind::Number) if non_negative(&seq, true) => {}
        _ => return fail(field::CHECKPOINT_SEQ, "expected a non-negative integer"),
    }
    if !matches!(kind(field::RUNNING)?.1, Kind::Undefined | Kind::Bool) {
        return fail(field::RUNNING, "expected a boolean");
    }
    if !matches!(kind(field::COMPLETED_TOOLS)?.1, Kind::Undefined | Kind::Array) {
        return fail(field::COMPLETED_TOOLS, "expected an array");
    }
    // Issue 30: tool calls waiting for a person.
    match kind(field::APPROVALS)? {
        (_, Kind::Undefined) => {}
        (pause, Kind::Object) => {
            for key in approvals::FIELDS {
                if h.kind(&h.get(&pause, key)?) != Kind::Array {
                    return fail(&format!("{}.{key}", field::APPROVALS), "expected an array");
                }
            }
        }
        _ => return fail(field::APPROVALS, "expected an object"),
    }
    // Issue 32: the agent's usage totals.
    match kind(field::USAGE)? {
        (_, Kind::Undefined) => {}
        (usage, Kind::Object) => {
            for key in crate::core::budget::USAGE_FIELDS {
                if !non_negative(&h.get(&usage, key)?, false) {
                    return fail(&format!("{}.{key}", field::USAGE), "expected a non-negative number");
                }
            }
            let cost = h.get(&usage, "cost")?;
            if h.kind(&cost) != Kind::Object {
                return fail(&format!("{}.cost", field::USAGE), "expected an object");
            }
            for key in crate::core::budget::COST_FIELDS {
                if !non_negative(&h.get(&cost, key)?, false) {
                    return fail(&format!("{}.cost.{key}", field::USAGE), "expected a non-negative number");
                }
            }
        }
        _ => return fail(field::USAGE, "expected an object"),
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::core::test_host::{TV, TestHost};
    use serde_json::{Value, json};

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

    /// `migrate` on the host's copy of `v`: the copy as it is afterwards, or the message.
    fn run(v: &Value) -> Result<Value, String> {
        let h = TestHost::new();
        let snapshot = TV::from_json(v);
        migrate(&h, &snapshot).map(|()| snapshot.to_json())
    }

    /// `check` reads every field of `FIELDS`: a snapshot with any one of them `null` is refused, and the error names it
    /// (the envelope's two have errors of their own).
    #[test]
    fn d8_1_every_field_is_checked() {
        for key in FIELDS {
            let mut v = fixture();
            v[key] = Value::Null;
            let error = run(&v).unwrap_err();
            match key {
                field::FORMAT => assert_eq!(error, "Agent.restore: not an agent-loop-wasm snapshot"),
                field::VERSION => assert_eq!(error, "Agent.restore: unknown snapshot version null"),
                _ => assert!(error.starts_with(&format!("Agent.restore: invalid snapshot: {key}: ")), "{key}: {error}"),
            }
        }
    }

    #[test]
    fn d8_3_current_version_passes_unchanged() {
        assert_eq!(run(&fixture()).unwrap(), fixture());
    }

    #[test]
    fn d8_3_envelope_errors_are_exact() {
        assert_eq!(run(&json!([])).unwrap_err(), "Agent.restore: not an agent-loop-wasm snapshot");
        assert_eq!(run(&json!("x")).unwrap_err(), "Agent.restore: not an agent-loop-wasm snapshot");
        assert_eq!(run(&json!({"format": "x"})).unwrap_err(), "Agent.restore: not an agent-loop-wasm snapshot");
        let with = |key: &str, value: Value| {
            let mut v = fixture();
            v[key] = value;
            run(&v).unwrap_err()
        };
        assert_eq!(
            with("version", json!(2)),
            "Agent.restore: snapshot version 2 is newer than this library supports (1)"
        );
        assert_eq!(with("version", json!(0)), "Agent.restore: unknown snapshot version 0");
        assert_eq!(with("version", json!(1.5)), "Agent.restore: unknown snapshot version 1.5");
        assert_eq!(with("version", json!("1")), "Agent.restore: unknown snapshot version 1");
        assert_eq!(with("version", json!([1])), "Agent.restore: unknown snapshot version [1]");
        let mut v = fixture();
        v.as_object_mut().unwrap().remove("version");
        assert_eq!(run(&v).unwrap_err(), "Agent.restore: unknown snapshot version undefined");
    }

    #[test]
    fn d8_3_field_errors_name_the_path() {
        let with = |key: &str, value: Value| {
            let mut v = fixture();
            v[key] = value;
            run(&v).unwrap_err()
        };
        assert_eq!(
            with("messages", json!([{"role": "user"}, {"role": "assistant"}, {"role": 3}])),
            "Agent.restore: invalid snapshot: messages[2].role: expected a string"
        );
        assert_eq!(
            with("followUpQueue", json!([1])),
            "Agent.restore: invalid snapshot: followUpQueue[0]: expected an object"
        );
        assert_eq!(
            with("steeringQueue", json!([[]])),
            "Agent.restore: invalid snapshot: steeringQueue[0]: expected an object"
        );
        assert_eq!(
            with("steeringMode", json!("some")),
            "Agent.restore: invalid snapshot: steeringMode: expected \"all\" or \"one-at-a-time\""
        );
        assert_eq!(
            with("messages", json!({})),
            "Agent.restore: invalid snapshot: messages: expected an array, got an object"
        );
        assert_eq!(
            with("toolNames", json!(["a", 2])),
            "Agent.restore: invalid snapshot: toolNames[1]: expected a string"
        );
        assert_eq!(
            with("checkpointSeq", json!(1.5)),
            "Agent.restore: invalid snapshot: checkpointSeq: expected a non-negative integer"
        );
        assert_eq!(
            with("approvals", json!({})),
            format!("Agent.restore: invalid snapshot: approvals.{}: expected an array", approvals::FIELDS[0])
        );
        let usage = json!({"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": -1}});
        assert_eq!(
            with("usage", usage),
            "Agent.restore: invalid snapshot: usage.cost.total: expected a non-negative number"
        );
        assert_eq!(
            with("usage", json!({"input": "1"})),
            "Agent.restore: invalid snapshot: usage.input: expected a non-negative number"
        );
        let mut v = fixture();
        v.as_object_mut().unwrap().remove("messages");
        assert_eq!(run(&v).unwrap_err(), "Agent.restore: invalid snapshot: messages: expected an array, got undefined");
    }
}
