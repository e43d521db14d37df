//! Compaction (L-3.13, issue 45): the parts of it that are decisions on a transcript — the option, the estimate of
//! what a request sends, the projection that replaces compacted turns by their summary, the cut between what is
//! summarized and what is kept, the text a summary request sends, and the entry a compaction appends. Reads the
//! caller's messages, never mutates them.

use super::host::{Host, HostFuture, Kind};
use super::transcript::{content_text, current_system_message};

/// The role of a compaction entry (pi-coding-agent's `CompactionSummaryMessage`).
pub const ROLE: &str = "compactionSummary";
/// What wraps a summary in the user message the projection sends in the entry's place (pi-coding-agent's texts).
pub const PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const SUFFIX: &str = "\n</summary>";
/// The summary request's system prompt.
pub const SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";
/// The built-in instructions of a first summary.
pub const INSTRUCTIONS: &str = "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.\n\nUse this EXACT format:\n\n## Goal\n[What is the user trying to accomplish?]\n\n## Constraints & Preferences\n- [Requirements the user stated, or \"(none)\"]\n\n## Progress\n### Done\n- [x] [Completed tasks]\n\n### In Progress\n- [ ] [Current work]\n\n### Blocked\n- [Issues, if any]\n\n## Key Decisions\n- **[Decision]**: [Brief rationale]\n\n## Next Steps\n1. [What should happen next]\n\n## Critical Context\n- [Data needed to continue: ids, values, file paths, exact error messages, or \"(none)\"]\n\nKeep each section concise.";
/// The built-in instructions when a previous summary is folded in.
pub const UPDATE_INSTRUCTIONS: &str = "The messages above are NEW conversation messages to incorporate into the existing summary in <previous-summary> tags. Keep everything of the previous summary that still matters, add the new progress, decisions and context, move finished items from \"In Progress\" to \"Done\", and update \"Next Steps\". Use the same EXACT format as the previous summary (Goal, Constraints & Preferences, Progress, Key Decisions, Next Steps, Critical Context). Keep exact ids, values, file paths and error messages.";
/// A tool result is cut to this many characters in a summary request.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;
/// The characters an image counts for in the estimate.
const IMAGE_CHARS: f64 = 4800.0;
/// The default `keepRecentTokens` at most, and its share of the window.
const KEEP_RECENT_MAX: f64 = 20_000.0;
const KEEP_RECENT_SHARE: f64 = 0.25;
const DEFAULT_FRACTION: f64 = 0.8;

/// When a request is compacted first: past a share of the window, or past a token count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    Fraction(f64),
    Tokens(f64),
}

/// How the summary is written (L-3.13.6).
#[derive(Clone, Debug)]
pub enum Summarize<V> {
    Model,
    Drop,
    Function(V),
}

/// `config.compaction`, read once when a run starts (L-3.13.1).
#[derive(Clone, Debug)]
pub struct Options<V> {
    pub trigger: Trigger,
    pub keep_recent_tokens: Option<f64>,
    pub context_window: Option<f64>,
    pub summarize: Summarize<V>,
    pub instructions: Option<String>,
}

impl<V> Options<V> {
    /// The window of a request whose model says `model_window`, or `None` when there is none to compact against.
    pub fn window(&self, model_window: Option<f64>) -> Option<f64> {
        self.context_window.or(model_window).filter(|w| w.is_finite() && *w > 0.0)
    }

    /// Whether an estimate of `tokens` passes the trigger in `window`.
    pub fn passes(&self, tokens: f64, window: f64) -> bool {
        match self.trigger {
            Trigger::Fraction(f) => tokens > f * window,
            Trigger::Tokens(t) => tokens > t,
        }
    }

    /// The recent tokens kept whole in `window`.
    pub fn keep_recent(&self, window: f64) -> f64 {
        self.keep_recent_tokens.unwrap_or_else(|| KEEP_RECENT_MAX.min((window * KEEP_RECENT_SHARE).floor()))
    }
}

/// Why `config.compaction` cannot be read.
#[derive(Debug)]
pub enum Unreadable<V> {
    /// The field (`""`: the option itself) and what it must be.
    Field(&'static str, &'static str),
    /// A getter threw this.
    Thrown(V),
}

/// `config.compaction` as L-3.13.1 reads it: `None` when off.
pub fn read_options<H: Host>(h: &H, v: &H::V) -> Result<Option<Options<H::V>>, Unreadable<H::V>> {
    use Unreadable::Field;
    let defaults = || Options {
        trigger: Trigger::Fraction(DEFAULT_FRACTION),
        keep_recent_tokens: None,
        context_window: None,
        summarize: Summarize::Model,
        instructions: None,
    };
    match h.kind(v) {
        Kind::Undefined | Kind::Null => return Ok(None),
        Kind::Bool => return Ok(h.truthy(v).then(defaults)),
        Kind::Object => {}
        _ => return Err(Field("", "true, false or an object")),
    }
    let field = |key: &'static str| h.get(v, key).map_err(Unreadable::Thrown);
    let mut options = defaults();
    let trigger = field("trigger")?;
    if !h.kind(&trigger).is_nullish() {
        const TRIGGER: &str = "{ fraction } (0 < fraction <= 1) or { tokens } (a positive integer)";
        if h.kind(&trigger) != Kind::Object {
            return Err(Field("trigger", TRIGGER));
        }
        let fraction = h.get(&trigger, "fraction").map_err(Unreadable::Thrown)?;
        let tokens = h.get(&trigger, "tokens").map_err(Unreadable::Thrown)?;
        options.trigger = match (h.kind(&fraction).is_nullish(), h.kind(&tokens).is_nullish()) {
            (false, true) => match h.as_number(&fraction) {
                Some(f) if f > 0.0 && f <= 1.0 => Trigger::Fraction(f),
                _ => return Err(Field("trigger", TRIGGER)),
            },
            (true, false) => match h.as_number(&tokens) {
                Some(t) if is_count(t) && t > 0.0 => Trigger::Tokens(t),
                _ => return Err(Field("trigger", TRIGGER)),
            },
            _ => return Err(Field("trigger", TRIGGER)),
        };
    }
    let keep = field("keepRecentTokens")?;
    if !h.kind(&keep).is_nullish() {
        match h.as_number(&keep) {
            Some(k) if is_count(k) => options.keep_recent_tokens = Some(k),
            _ => return Err(Field("keepRecentTokens", "a non-negative integer")),
        }
    }
    let window = field("contextWindow")?;
    if !h.kind(&window).is_nullish() {
        match h.as_number(&window) {
            Some(w) if is_count(w) && w > 0.0 => options.context_window = Some(w),
            _ => return Err(Field("contextWindow", "a positive integer")),
        }
    }
    let summarize = field("summarize")?;
    options.summarize = match h.kind(&summarize) {
        Kind::Undefined | Kind::Null => Summarize::Model,
        Kind::Function => Summarize::Function(summarize),
        _ => match h.as_string(&summarize).as_deref() {
            Some("model") => Summarize::Model,
            Some("drop") => Summarize::Drop,
            _ => return Err(Field("summarize", "\"model\", \"drop\" or a function")),
        },
    };
    let instructions = field("instructions")?;
    if !h.kind(&instructions).is_nullish() {
        match h.as_string(&instructions) {
            Some(text) => options.instructions = Some(text),
            None => return Err(Field("instructions", "a string")),
        }
    }
    Ok(Some(options))
}

/// A non-negative integer that a JS number holds exactly.
fn is_count(n: f64) -> bool {
    n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0
}

// ---- the estimate (L-3.13.3)

fn role<H: Host>(h: &H, message: &H::V) -> Result<Option<String>, H::V> {
    if !h.kind(message).is_object_like() {
        return Ok(None);
    }
    Ok(h.as_string(&h.get(message, "role")?))
}

/// A string's length as JS counts it (UTF-16 units).
fn js_len(s: &str) -> f64 {
    s.encode_utf16().count() as f64
}

/// The characters of a `content`: a string as is, text blocks' texts, 4,800 per image.
fn content_chars<H: Host>(h: &H, content: &H::V) -> Result<f64, H::V> {
    if let Some(text) = h.as_string(content) {
        return Ok(js_len(&text));
    }
    if h.kind(content) != Kind::Array {
        return Ok(0.0);
    }
    let mut chars = 0.0;
    for block in h.array_items(content)? {
        if !h.kind(&block).is_object_like() {
            continue;
        }
        match h.as_string(&h.get(&block, "type")?).as_deref() {
            Some("text") => chars += h.as_string(&h.get(&block, "text")?).map_or(0.0, |t| js_len(&t)),
            Some("image") => chars += IMAGE_CHARS,
            _ => {}
        }
    }
    Ok(chars)
}

/// The characters L-3.13.3 counts for one message.
pub fn message_chars<H: Host>(h: &H, message: &H::V) -> Result<f64, H::V> {
    let Some(role) = role(h, message)? else { return Ok(0.0) };
    match role.as_str() {
        "user" | "toolResult" => content_chars(h, &h.get(message, "content")?),
        "assistant" => {
            let content = h.get(message, "content")?;
            if h.kind(&content) != Kind::Array {
                return Ok(0.0);
            }
            let mut chars = 0.0;
            for block in h.array_items(&content)? {
                if !h.kind(&block).is_object_like() {
                    continue;
                }
                match h.as_string(&h.get(&block, "type")?).as_deref() {
                    Some("text") => chars += h.as_string(&h.get(&block, "text")?).map_or(0.0, |t| js_len(&t)),
                    Some("thinking") => chars += h.as_string(&h.get(&block, "thinking")?).map_or(0.0, |t| js_len(&t)),
                    Some("toolCall") => {
                        chars += h.as_string(&h.get(&block, "name")?).map_or(0.0, |t| js_len(&t));
                        let args = h.get(&block, "arguments")?;
                        chars += h.json_stringify(&args, false)?.map_or(0.0, |t| js_len(&t));
                    }
                    _ => {}
                }
            }
            Ok(chars)
        }
        "system" => {
            let mut chars = content_chars(h, &h.get(message, "content")?)?;
            let sections = h.get(message, "sections")?;
            if h.kind(&sections).is_object_like() {
                for (_, section) in h.entries(&sections)? {
                    chars += h.as_string(&section).map_or(0.0, |t| js_len(&t));
                }
            }
            let tools = h.get(message, "toolsAdded")?;
            if !h.kind(&tools).is_nullish() {
                chars += h.json_stringify(&tools, false)?.map_or(0.0, |t| js_len(&t));
            }
            Ok(chars)
        }
        ROLE => Ok(h.as_string(&h.get(message, "summary")?).map_or(0.0, |t| js_len(&t))),
        _ => Ok(0.0),
    }
}

/// `ceil(chars / 4)` of one message.
pub fn message_tokens<H: Host>(h: &H, message: &H::V) -> Result<f64, H::V> {
    Ok((message_chars(h, message)? / 4.0).ceil())
}

/// The context tokens an assistant message's usage reports, when it can be trusted (not `error`/`aborted`, > 0).
fn reported_tokens<H: Host>(h: &H, message: &H::V) -> Result<Option<f64>, H::V> {
    if role(h, message)?.as_deref() != Some("assistant") {
        return Ok(None);
    }
    let stop = h.as_string(&h.get(message, "stopReason")?);
    if matches!(stop.as_deref(), Some("error" | "aborted")) {
        return Ok(None);
    }
    let usage = h.get(message, "usage")?;
    if !h.kind(&usage).is_object_like() {
        return Ok(None);
    }
    let figure = |key: &str| -> Result<f64, H::V> {
        Ok(h.as_number(&h.get(&usage, key)?).filter(|n| n.is_finite()).unwrap_or(0.0))
    };
    let total = figure("totalTokens")?;
    let tokens = if total != 0.0 {
        total
    } else {
        figure("input")? + figure("output")? + figure("cacheRead")? + figure("cacheWrite")?
    };
    Ok((tokens > 0.0).then_some(tokens))
}

/// L-3.13.3: what the `projected` messages send, in tokens; only replies from `trusted_from` on (after the last
/// compaction entry) are trusted for their usage.
pub fn estimate<H: Host>(h: &H, projected: &[H::V], trusted_from: usize) -> Result<f64, H::V> {
    let mut trailing = 0.0;
    for (i, message) in projected.iter().enumerate().rev() {
        if i >= trusted_from
            && let Some(reported) = reported_tokens(h, message)?
        {
            return Ok(reported + trailing);
        }
        trailing += message_tokens(h, message)?;
    }
    Ok(trailing)
}

// ---- the projection (L-3.13.4)

/// What a request sends of a transcript that holds compaction entries.
pub struct Projection<V> {
    /// `[head?, summary, ...kept, ...after]`, or the transcript itself when it holds no entry.
    pub messages: Vec<V>,
    /// Where the live messages (kept and after) start in `messages`.
    pub live_from: usize,
    /// Where the messages after the last entry start in `messages` (their usage measured what is sent now).
    pub trusted_from: usize,
    /// The last entry's summary, folded into the next one.
    pub previous_summary: Option<String>,
}

/// The projection of `transcript` (L-3.13.4).
pub fn project<H: Host>(h: &H, transcript: &[H::V]) -> Result<Projection<H::V>, H::V> {
    let mut last = None;
    for (i, message) in transcript.iter().enumerate().rev() {
        if role(h, message)?.as_deref() == Some(ROLE) {
            last = Some(i);
            break;
        }
    }
    let Some(at) = last else {
        return Ok(Projection { messages: transcript.to_vec(), live_from: 0, trusted_from: 0, previous_summary: None });
    };
    let entry = transcript.get(at).cloned().unwrap_or_else(|| h.undefined());
    let kept = h.as_number(&h.get(&entry, "keptMessages")?).filter(|k| is_count(*k)).unwrap_or(0.0) as usize;
    let summary = h.as_string(&h.get(&entry, "summary")?).unwrap_or_default();
    // The kept messages: walking back from the entry, skipping other entries.
    let mut first_kept = at;
    let mut taken = 0;
    while taken < kept && first_kept > 0 {
        first_kept -= 1;
        if role(h, transcript.get(first_kept).unwrap_or(&entry))?.as_deref() != Some(ROLE) {
            taken += 1;
        }
    }
    let before = transcript.get(..first_kept).unwrap_or_default();
    let mut messages = Vec::new();
    // The replayed head; when it has none to give (no system message with a timestamp or tools), the system
    // messages themselves, so that a system prompt is never dropped.
    match current_system_message(h, before)? {
        Some(head) => messages.push(head),
        None => {
            for message in before {
                if role(h, message)?.as_deref() == Some("system") {
                    messages.push(message.clone());
                }
            }
        }
    }
    let text = h.object(&[("type", h.constant("text")), ("text", h.string(&format!("{PREFIX}{summary}{SUFFIX}")))]);
    let timestamp = h.get(&entry, "timestamp")?;
    messages.push(h.object(&[("role", h.constant("user")), ("content", h.array(&[text])), ("timestamp", timestamp)]));
    let live_from = messages.len();
    for message in transcript.get(first_kept..).unwrap_or_default() {
        if role(h, message)?.as_deref() != Some(ROLE) {
            messages.push(message.clone());
        }
    }
    let trusted_from = live_from + taken;
    Ok(Projection { messages, live_from, trusted_from, previous_summary: Some(summary) })
}

/// What a request hands `transformContext`/`convertToLlm` when compaction is on (L-3.13.4): the `messages` array
/// itself while nothing was compacted, else a fresh array of the projection.
pub fn request_messages<H: Host>(h: &H, messages: &H::V) -> Result<H::V, H::V> {
    let projection = project(h, &h.array_items(messages)?)?;
    Ok(if projection.previous_summary.is_none() { messages.clone() } else { h.array(&projection.messages) })
}

// ---- the cut (L-3.13.5)

/// Where the kept part of `live` starts: walking back from the newest, adding estimates until `keep_recent` is
/// reached, then forward to the nearest `user` or `assistant` message. `None`: nothing before it to summarize.
pub fn cut<H: Host>(h: &H, live: &[H::V], keep_recent: f64) -> Result<Option<usize>, H::V> {
    let mut kept = 0.0;
    let mut reached = None;
    for (i, message) in live.iter().enumerate().rev() {
        kept += message_tokens(h, message)?;
        if kept >= keep_recent {
            reached = Some(i);
            break;
        }
    }
    // The budget holds every live message: nothing is summarized.
    let Some(from) = reached else { return Ok(None) };
    for (i, message) in live.iter().enumerate().skip(from) {
        if matches!(role(h, message)?.as_deref(), Some("user" | "assistant")) {
            return Ok(summarizes_something(h, live, i)?.then_some(i));
        }
    }
    // No user or assistant message after the point (only tool results and system messages): keep the newest
    // assistant before it with its results, as pi-coding-agent does.
    for (i, message) in live.iter().enumerate().take(from).rev() {
        if matches!(role(h, message)?.as_deref(), Some("user" | "assistant")) {
            return Ok(summarizes_something(h, live, i)?.then_some(i));
        }
    }
    Ok(None)
}

/// Whether keeping `live[at..]` leaves a message other than a system one to summarize.
fn summarizes_something<H: Host>(h: &H, live: &[H::V], at: usize) -> Result<bool, H::V> {
    for message in live.get(..at).unwrap_or_default() {
        if role(h, message)?.as_deref() != Some("system") {
            return Ok(true);
        }
    }
    Ok(false)
}

// ---- the summary request (L-3.13.6)

/// `text` cut to `max` UTF-16 units (never inside a pair) with pi-coding-agent's marker.
fn truncate_for_summary(text: &str, max: usize) -> String {
    let units = text.encode_utf16().count();
    if units <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        if used + c.len_utf16() > max {
            break;
        }
        used += c.len_utf16();
        out.push(c);
    }
    out.push_str("\n\n[... ");
    out.push_str(&(units - max).to_string());
    out.push_str(" more characters truncated]");
    out
}

/// The summarized messages as pi-coding-agent's `serializeConversation` writes them: `[User]: …`, `[Assistant]: …`,
/// `[Assistant tool calls]: name(key=value; …)`, `[Tool result]: …` (cut), blank-line separated; thinking and other
/// roles left out.
pub fn serialize<H: Host>(h: &H, messages: &[H::V]) -> Result<String, H::V> {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match role(h, message)?.as_deref() {
            Some("user") => {
                let text = content_text(h, &h.get(message, "content")?, "")?;
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Some("assistant") => {
                let content = h.get(message, "content")?;
                if h.kind(&content) != Kind::Array {
                    continue;
                }
                let mut calls = Vec::new();
                let mut has_text = false;
                for block in h.array_items(&content)? {
                    if !h.kind(&block).is_object_like() {
                        continue;
                    }
                    match h.as_string(&h.get(&block, "type")?).as_deref() {
                        Some("text") => has_text = true,
                        Some("toolCall") => {
                            let name = h.as_string(&h.get(&block, "name")?).unwrap_or_default();
                            let args = h.get(&block, "arguments")?;
                            let mut pairs = Vec::new();
                            if h.kind(&args).is_object_like() {
                                for (key, value) in h.entries(&args)? {
                                    let json = h.json_stringify(&value, false)?.unwrap_or_else(|| "undefined".into());
                                    pairs.push(format!("{key}={json}"));
                                }
                            }
                            calls.push(format!("{name}({})", pairs.join(", ")));
                        }
                        _ => {}
                    }
                }
                if has_text {
                    parts.push(format!("[Assistant]: {}", content_text(h, &content, "\n")?));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Some("toolResult") => {
                let text = content_text(h, &h.get(message, "content")?, "")?;
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS)));
                }
            }
            _ => {}
        }
    }
    Ok(parts.join("\n\n"))
}

/// The user message text of a summary request.
pub fn request_text(conversation: &str, previous: Option<&str>, instructions: Option<&str>) -> String {
    let mut text = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(previous) = previous {
        text.push_str(&format!("<previous-summary>\n{previous}\n</previous-summary>\n\n"));
    }
    text.push_str(instructions.unwrap_or(if previous.is_some() { UPDATE_INSTRUCTIONS } else { INSTRUCTIONS }));
    text
}

/// The summary of the `"drop"` strategy.
pub fn drop_summary(removed: usize) -> String {
    let mut text = removed.to_string();
    text.push_str(if removed == 1 { " earlier message was" } else { " earlier messages were" });
    text.push_str(" removed to fit the context window.");
    text
}

/// The entry a compaction appends (L-3.13.2).
pub struct Entry<'a, V> {
    pub summary: &'a str,
    pub tokens_before: f64,
    pub tokens_after: f64,
    pub kept_messages: usize,
    pub reason: &'static str,
    pub usage: Option<V>,
    pub timestamp: f64,
}

impl<V: Clone> Entry<'_, V> {
    pub fn to_value<H: Host<V = V>>(&self, h: &H) -> V {
        #[allow(clippy::cast_precision_loss)] // message counts stay far below 2^53
        let kept = self.kept_messages as f64;
        let mut fields = vec![
            ("role", h.constant(ROLE)),
            ("summary", h.string(self.summary)),
            ("tokensBefore", h.number(self.tokens_before)),
            ("tokensAfter", h.number(self.tokens_after)),
            ("keptMessages", h.number(kept)),
            ("reason", h.constant(self.reason)),
            ("timestamp", h.number(self.timestamp)),
        ];
        if let Some(usage) = &self.usage {
            fields.push(("usage", usage.clone()));
        }
        h.object(&fields)
    }
}

// ---- the fast paths' references (`FastPaths::compaction_*`; the package runs pkg-template/compaction.js instead)

/// `FastPaths::compaction_plan`: the compaction a request needs (L-3.13.5), or `None`: `{ reason, tokensBefore,
/// messages (the summarized ones, system messages left out), keptMessages, previousSummary? }`.
pub fn plan<H: Host>(h: &H, messages: &H::V, options: &H::V, model: &H::V) -> Result<Option<H::V>, H::V> {
    let options = match read_options(h, options) {
        Ok(Some(options)) => options,
        Ok(None) | Err(Unreadable::Field(..)) => return Ok(None),
        Err(Unreadable::Thrown(e)) => return Err(e),
    };
    let model_window = if h.kind(model).is_object_like() { h.as_number(&h.get(model, "contextWindow")?) } else { None };
    let Some(window) = options.window(model_window) else { return Ok(None) };
    let transcript = h.array_items(messages)?;
    let projection = project(h, &transcript)?;
    let tokens_before = estimate(h, &projection.messages, projection.trusted_from)?;
    if !options.passes(tokens_before, window) {
        return Ok(None);
    }
    let live = projection.messages.get(projection.live_from..).unwrap_or_default();
    let Some(at) = cut(h, live, options.keep_recent(window))? else { return Ok(None) };
    let mut summarized = Vec::new();
    for message in live.get(..at).unwrap_or_default() {
        if role(h, message)?.as_deref() != Some("system") {
            summarized.push(message.clone());
        }
    }
    #[allow(clippy::cast_precision_loss)] // message counts stay far below 2^53
    let kept = (live.len() - at) as f64;
    let mut fields = vec![
        ("reason", h.constant("threshold")),
        ("tokensBefore", h.number(tokens_before)),
        ("messages", h.array(&summarized)),
        ("keptMessages", h.number(kept)),
    ];
    if let Some(previous) = &projection.previous_summary {
        fields.push(("previousSummary", h.string(previous)));
    }
    Ok(Some(h.object(&fields)))
}

/// A plan's field.
fn plan_field<H: Host>(h: &H, plan: &H::V, key: &str) -> Result<H::V, H::V> {
    h.get(plan, key)
}

/// `FastPaths::compaction_entry`: the entry of `plan` with `summary` and `usage` (L-3.13.2), `tokensAfter` the
/// estimate of the transcript projected with it.
pub fn entry<H: Host>(
    h: &H,
    messages: &H::V,
    plan: &H::V,
    summary: &H::V,
    usage: &H::V,
    now: f64,
) -> Result<H::V, H::V> {
    let summary = h.as_string(summary).unwrap_or_default();
    let number = |key: &str| -> Result<f64, H::V> { Ok(h.as_number(&plan_field(h, plan, key)?).unwrap_or(0.0)) };
    let reason = match h.as_string(&plan_field(h, plan, "reason")?).as_deref() {
        Some("overflow") => "overflow",
        _ => "threshold",
    };
    let kept = number("keptMessages")?;
    let entry = Entry {
        summary: &summary,
        tokens_before: number("tokensBefore")?,
        tokens_after: 0.0,
        kept_messages: if is_count(kept) { kept as usize } else { 0 },
        reason,
        usage: h.kind(usage).is_object_like().then(|| usage.clone()),
        timestamp: now,
    }
    .to_value(h);
    let mut after = h.array_items(messages)?;
    after.push(entry.clone());
    let next = project(h, &after)?;
    h.set(&entry, "tokensAfter", &h.number(estimate(h, &next.messages, next.trusted_from)?))?;
    Ok(entry)
}

/// `FastPaths::compaction_summarize` (L-3.13.6): `{ summary, usage }`, or the error whose message is
/// `compaction_end.errorMessage`. The caller bounds it (D4) and checks the abort.
#[allow(clippy::too_many_arguments)]
pub fn summarize<H: Host>(
    h: &H,
    plan: &H::V,
    options: &H::V,
    model: &H::V,
    stream_fn: &H::V,
    config: &H::V,
    identity: &H::V,
    signal: &H::V,
) -> HostFuture<Result<H::V, H::V>> {
    let (h, plan, options, model) = (h.clone(), plan.clone(), options.clone(), model.clone());
    let (stream_fn, config, identity, signal) = (stream_fn.clone(), config.clone(), identity.clone(), signal.clone());
    Box::pin(async move {
        let failed = |h: &H, text: &str| h.error(&format!("Compaction failed: {text}"), false);
        let summarized = h.array_items(&plan_field(&h, &plan, "messages")?)?;
        let previous = h.as_string(&plan_field(&h, &plan, "previousSummary")?);
        let parsed = match read_options(&h, &options) {
            Ok(Some(parsed)) => parsed,
            _ => return Err(failed(&h, "compaction is off")),
        };
        let (summary, usage) = match parsed.summarize {
            Summarize::Drop => (drop_summary(summarized.len()), h.undefined()),
            Summarize::Function(f) => {
                let args = h.object(&[
                    ("model", model.clone()),
                    ("signal", signal.clone()),
                    ("previousSummary", previous.as_deref().map_or_else(|| h.undefined(), |p| h.string(p))),
                    ("reason", plan_field(&h, &plan, "reason")?),
                ]);
                let answer = h.call(&f, &h.undefined(), &[h.array(&summarized), args]).await;
                let answer = answer.map_err(|e| failed(&h, &h.error_message(&e)))?;
                const SHAPE: &str = "compaction.summarize must return a string or { summary, usage? }";
                if let Some(summary) = h.as_string(&answer) {
                    (summary, h.undefined())
                } else if h.kind(&answer) == Kind::Object {
                    let read = |key: &str| h.get(&answer, key).map_err(|e| failed(&h, &h.error_message(&e)));
                    let Some(summary) = h.as_string(&read("summary")?) else { return Err(failed(&h, SHAPE)) };
                    (summary, read("usage")?)
                } else {
                    return Err(failed(&h, SHAPE));
                }
            }
            Summarize::Model => {
                let text =
                    request_text(&serialize(&h, &summarized)?, previous.as_deref(), parsed.instructions.as_deref());
                let now = h.number(h.date_now());
                let system = h.object(&[
                    ("role", h.constant("system")),
                    ("content", h.constant(SYSTEM_PROMPT)),
                    ("timestamp", now.clone()),
                ]);
                let block = h.object(&[("type", h.constant("text")), ("text", h.string(&text))]);
                let user =
                    h.object(&[("role", h.constant("user")), ("content", h.array(&[block])), ("timestamp", now)]);
                let transcript = h.object(&[("messages", h.array(&[system, user]))]);
                // The request's options as the loop's (L-3.5.1): the key, the identity; reasoning off.
                let get_api_key = h.get(&config, "getApiKey")?;
                let mut api_key = h.undefined();
                if h.kind(&get_api_key) == Kind::Function {
                    let provider = h.get(&model, "provider")?;
                    api_key = h
                        .call(&get_api_key, &config, &[provider])
                        .await
                        .map_err(|e| failed(&h, &h.error_message(&e)))?;
                }
                if !h.truthy(&api_key) {
                    api_key = h.get(&config, "apiKey")?;
                }
                let request = h.shallow_copy(&config)?;
                h.set(&request, "apiKey", &api_key)?;
                h.set(&request, "identity", &identity)?;
                h.set(&request, "reasoning", &h.undefined())?;
                h.set(&request, "signal", &signal)?;
                let source = h.call(&stream_fn, &h.undefined(), &[model, transcript, request]).await;
                let source = source.map_err(|e| failed(&h, &h.error_message(&e)))?;
                let message = final_message(&h, &source).await?;
                let stop = h.as_string(&h.get(&message, "stopReason")?).unwrap_or_default();
                match stop.as_str() {
                    "stop" => {}
                    "length" => return Err(failed(&h, "the summary hit the output token limit")),
                    _ => {
                        let detail = h.as_string(&h.get(&message, "errorMessage")?).unwrap_or(stop);
                        return Err(failed(&h, &detail));
                    }
                }
                let usage = h.get(&message, "usage")?;
                (content_text(&h, &h.get(&message, "content")?, "\n")?, usage)
            }
        };
        if summary.trim().is_empty() {
            return Err(failed(&h, "the summary is empty"));
        }
        let usage = if h.kind(&usage).is_object_like() { usage } else { h.undefined() };
        Ok(h.object(&[("summary", h.string(&summary)), ("usage", usage)]))
    })
}

/// The final message of a summary's stream: its `done` event's `message` or `error` event's `error`, else its
/// `result()`.
async fn final_message<H: Host>(h: &H, source: &H::V) -> Result<H::V, H::V> {
    let failed = |e: H::V| h.error(&format!("Compaction failed: {}", h.error_message(&e)), false);
    if let Some(iterator) = h.async_iterator(source).map_err(failed)? {
        while let Some(event) = h.iterator_next(&iterator).await.map_err(failed)? {
            if !h.kind(&event).is_object_like() {
                continue;
            }
            match h.as_string(&h.get(&event, "type").map_err(failed)?).as_deref() {
                Some("done") => return h.get(&event, "message").map_err(failed),
                Some("error") => return h.get(&event, "error").map_err(failed),
                _ => {}
            }
        }
    }
    let result = h.get(source, "result").map_err(failed)?;
    if h.kind(&result) == Kind::Function {
        let message = h.call(&result, source, &[]).await.map_err(failed)?;
        if h.kind(&message).is_object_like() {
            return Ok(message);
        }
    }
    Err(h.error("Compaction failed: the summary's stream ended without a done or error event", false))
}
