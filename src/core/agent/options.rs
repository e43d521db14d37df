//! `new Agent(options)`: the options a run reads, their checks and defaults, and the initial state.

use crate::core::agent_state::init::Initial;
use crate::core::agent_state::{MODES, get};
use crate::core::args::{ArgError, CONFIG_HOOKS, Checker};
use crate::core::checkpoint;
use crate::core::declare::tools::{declaration_value, role};
use crate::core::fast::FastPaths;
use crate::core::host::Kind;

/// Options that become public fields of the same name, with their defaults.
const FIELDS: [&str; 27] = [
    "convertToLlm",
    "transformContext",
    "getApiKey",
    "onPayload",
    "onResponse",
    "onProviderStreamEvent",
    "beforeToolCall",
    "afterToolCall",
    "finishTurn",
    "prepareRequest",
    "prepareNextTurn",
    "prepareNextTurnWithContext",
    "sessionId",
    "thinkingBudgets",
    "transport",
    "maxRetryDelayMs",
    "toolExecution",
    "identity",
    "toolTimeoutMs",
    "streamIdleTimeoutMs",
    "abortGraceMs",
    "maxParallelTools",
    "apiKey",
    "maxTokens",
    "temperature",
    "headers",
    "fetch",
];

/// Options that become public fields only when given (issue 32), so that an agent without them has the reference's
/// fields; read from the agent when a run starts.
pub const OPTIONAL_FIELDS: [&str; 3] = ["limits", "totalLimits", "compaction"];

/// Fields copied from the agent into every run's loop config, besides the model,
/// reasoning, the queue getters and the prepareNextTurn wrapper.
pub(crate) const FORWARDED: [&str; 23] = [
    "sessionId",
    "onPayload",
    "onResponse",
    "onProviderStreamEvent",
    "transport",
    "thinkingBudgets",
    "maxRetryDelayMs",
    "identity",
    "toolExecution",
    "beforeToolCall",
    "afterToolCall",
    "finishTurn",
    "prepareRequest",
    "convertToLlm",
    "transformContext",
    "getApiKey",
    "toolTimeoutMs",
    "streamIdleTimeoutMs",
    "abortGraceMs",
    "maxParallelTools",
    "apiKey",
    "maxTokens",
    "temperature",
];

/// The agent's optional hooks a run checks (E-8.1), in the order it reads them.
pub const AGENT_HOOKS: [&str; 8] = [
    "transformContext",
    "getApiKey",
    "beforeToolCall",
    "afterToolCall",
    "finishTurn",
    "prepareRequest",
    "prepareNextTurn",
    "prepareNextTurnWithContext",
];

pub(crate) fn check_mode<H: FastPaths>(
    h: &H,
    c: &Checker<'_, H>,
    v: &H::V,
    path: &str,
) -> Result<String, ArgError<H::V>> {
    match h.as_string(v) {
        Some(mode) if MODES.contains(&mode.as_str()) => Ok(mode),
        _ => Err(ArgError::Type(format!("{}: {path} must be \"all\" or \"one-at-a-time\"", c.function))),
    }
}

/// `new Agent(options)`: checks the options, sets the public fields on `agent` and fills
/// the state object `st`.
pub fn init<H: FastPaths>(
    h: &H,
    agent: &H::V,
    st: &H::V,
    options: &H::V,
    default_stream_fn: &H::V,
) -> Result<(), ArgError<H::V>> {
    let c = Checker::new(h, "Agent");
    let options = if h.kind(options).is_nullish() { h.object(&[]) } else { options.clone() };
    c.object(&options, "options")?;
    let initial = get(h, &options, "initialState")?;
    if !h.kind(&initial).is_nullish() {
        c.object(&initial, "options.initialState")?;
    }
    for hook in CONFIG_HOOKS.iter().copied().chain(["convertToLlm", "prepareNextTurnWithContext"]) {
        if hook == "getSteeringMessages" || hook == "getFollowUpMessages" {
            continue;
        }
        // The path is written only for a value to check (most hooks are absent).
        let value = get(h, &options, hook)?;
        if !h.kind(&value).is_nullish() {
            c.function(&value, &format!("options.{hook}"))?;
        }
    }
    c.limits(&options, "options")?;
    c.budgets(&options, "options", true)?;
    c.compaction(&options, "options")?;
    let on_checkpoint = get(h, &options, "onCheckpoint")?;
    c.optional_function(&on_checkpoint, "options.onCheckpoint")?;
    let mut modes = Vec::new();
    for key in ["steeringMode", "followUpMode"] {
        let v = get(h, &options, key)?;
        modes.push(if h.kind(&v) == Kind::Undefined {
            "one-at-a-time".to_string()
        } else {
            check_mode(h, &c, &v, &format!("options.{key}"))?
        });
    }

    // Initial state.
    let (mut tools, mut messages, mut system_prompt, mut model, mut level) =
        (Vec::new(), Vec::new(), h.undefined(), h.undefined(), h.undefined());
    if !h.kind(&initial).is_nullish() {
        let t = get(h, &initial, "tools")?;
        if !h.kind(&t).is_nullish() {
            c.tools(&t, "options.initialState.tools")?;
            tools = h.array_items(&t)?;
        }
        let m = get(h, &initial, "messages")?;
        if !h.kind(&m).is_nullish() {
            c.messages(&m, "options.initialState.messages")?;
            messages = h.array_items(&m)?;
        }
        system_prompt = get(h, &initial, "systemPrompt")?;
        model = get(h, &initial, "model")?;
        level = get(h, &initial, "thinkingLevel")?;
    }
    let first_is_system = match messages.first() {
        Some(m) => role(h, m)?.as_deref() == Some("system"),
        None => false,
    };
    let prompt_text = h.as_string(&system_prompt).unwrap_or_default();
    if !first_is_system && (!prompt_text.is_empty() || !tools.is_empty()) {
        // The caller's string itself: a Rust copy would turn a lone surrogate into U+FFFD (issue 13).
        let content =
            if h.kind(&system_prompt) == Kind::String { system_prompt.clone() } else { h.string(&prompt_text) };
        let mut entries = vec![("role", h.constant("system")), ("content", content)];
        if !tools.is_empty() {
            let mut declarations = Vec::with_capacity(tools.len());
            for tool in &tools {
                declarations.push(declaration_value(h, tool)?);
            }
            entries.push(("toolsAdded", h.array(&declarations)));
        }
        entries.push(("timestamp", h.number(0.0)));
        messages.insert(0, h.object(&entries));
    }
    let model = if h.kind(&model).is_nullish() { default_model(h) } else { model };
    let level = if h.kind(&level).is_nullish() { h.constant("off") } else { level };
    let initial = Initial {
        model,
        thinking_level: level,
        tools: h.array(&tools),
        messages: h.array(&messages),
        steering_mode: mode_value(h, modes.first()),
        follow_up_mode: mode_value(h, modes.get(1)),
        on_checkpoint: on_checkpoint.clone(),
        agent: agent.clone(),
    };
    h.init_state(st, &initial)?;
    if h.kind(&on_checkpoint) == Kind::Function {
        checkpoint::init(h, st, 0.0)?;
    }

    // Public fields: copied in one pass (one crossing on a JS host), then the three with defaults.
    h.copy_fields(&options, agent, &FIELDS)?;
    for (field, default) in [("convertToLlm", None), ("transport", Some("auto")), ("toolExecution", Some("parallel"))] {
        if h.kind(&h.get(agent, field)?).is_nullish() {
            let value = default.map_or_else(|| h.default_convert_to_llm(), |text| h.constant(text));
            h.set(agent, field, &value)?;
        }
    }
    // Issue 32: public fields too, but only when given, so that an agent without limits has the reference's fields.
    for field in OPTIONAL_FIELDS {
        let value = get(h, &options, field)?;
        if h.kind(&value) != Kind::Undefined {
            h.set(agent, field, &value)?;
        }
    }
    let stream_fn = get(h, &options, "streamFn")?;
    let stream_fn = if h.kind(&stream_fn).is_nullish() { default_stream_fn.clone() } else { stream_fn };
    h.set(agent, "streamFunction", &stream_fn)?;
    Ok(())
}

/// A checked queue mode as a JS string: one of `MODES`, the default when none was given.
fn mode_value<H: FastPaths>(h: &H, mode: Option<&String>) -> H::V {
    let mode = mode.map_or("one-at-a-time", String::as_str);
    match MODES.iter().find(|m| **m == mode) {
        Some(known) => h.constant(known),
        None => h.string(mode),
    }
}

/// A-5.1.3's default model.
pub fn default_model<H: FastPaths>(h: &H) -> H::V {
    let zero = || h.number(0.0);
    let unknown = || h.constant("unknown");
    let cost = h.object(&[("input", zero()), ("output", zero()), ("cacheRead", zero()), ("cacheWrite", zero())]);
    h.object(&[
        ("id", unknown()),
        ("name", unknown()),
        ("api", unknown()),
        ("provider", unknown()),
        ("baseUrl", h.constant("")),
        ("reasoning", h.boolean(false)),
        ("input", h.array(&[])),
        ("cost", cost),
        ("contextWindow", zero()),
        ("maxTokens", zero()),
    ])
}
