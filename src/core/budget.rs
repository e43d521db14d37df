//! Issue 32: a run's usage totals and the budgets (`limits`) that end it cleanly. Owns the limit fields, their
//! checks, the figures a run counts, and the texts of a stop; it decides nothing about the loop's flow (`agent_loop`
//! asks it at its two check points: before a model request, before a tool batch). Pure numbers besides reading
//! limit objects and `usage` through `Host`.

use super::host::{Host, Kind};
use super::validate::js_number_to_string;

/// The fields of `limits` (the loop config's, the Agent's): per run.
pub const RUN_LIMITS: [&str; 6] =
    ["maxTurns", "maxModelRequests", "maxTokens", "maxCostUsd", "maxDurationMs", "maxToolCalls"];
/// The fields of the Agent's `totalLimits`: over the agent's whole life (its `totalUsage`).
pub const TOTAL_LIMITS: [&str; 2] = ["maxTokens", "maxCostUsd"];
/// The limits that count things: positive integers. The others are positive numbers (Infinity: no limit).
const COUNTS: [&str; 3] = ["maxTurns", "maxModelRequests", "maxToolCalls"];

/// The usage fields summed into totals, as `Usage` has them (S-2.1), then `cost`'s.
pub const USAGE_FIELDS: [&str; 5] = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"];
pub const COST_FIELDS: [&str; 5] = ["input", "output", "cacheRead", "cacheWrite", "total"];

/// Whether `n` (a limit field's value, `None` when it is not a number) is a valid value of `field`: `Err` names
/// what it must be. Counts are positive integers, the others positive numbers; `Infinity` is no limit.
pub fn check_limit(field: &str, n: Option<f64>) -> Result<(), &'static str> {
    let count = COUNTS.contains(&field);
    let ok = match n {
        Some(n) if count => n == f64::INFINITY || (n >= 1.0 && n.is_finite() && n.fract() == 0.0),
        Some(n) => n > 0.0,
        None => false,
    };
    if ok {
        Ok(())
    } else if count {
        Err("a positive integer or Infinity")
    } else {
        Err("a positive number or Infinity")
    }
}

/// One set of limits; `None` = no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub turns: Option<f64>,
    pub requests: Option<f64>,
    pub tokens: Option<f64>,
    pub cost: Option<f64>,
    pub duration: Option<f64>,
    pub tool_calls: Option<f64>,
}

impl Limits {
    /// Reads `owner[key]` (already checked at the API boundary; what cannot be read or is not a number is no limit).
    pub fn read<H: Host>(h: &H, owner: &H::V, key: &str) -> Limits {
        let Ok(limits) = h.get(owner, key) else { return Limits::default() };
        if h.kind(&limits) != Kind::Object {
            return Limits::default();
        }
        let total = key == "totalLimits";
        let field = |name: &str| -> Option<f64> {
            if total && !TOTAL_LIMITS.contains(&name) {
                return None;
            }
            h.get(&limits, name).ok().and_then(|v| h.as_number(&v)).filter(|n| *n > 0.0 && *n != f64::INFINITY)
        };
        Limits {
            turns: field("maxTurns"),
            requests: field("maxModelRequests"),
            tokens: field("maxTokens"),
            cost: field("maxCostUsd"),
            duration: field("maxDurationMs"),
            tool_calls: field("maxToolCalls"),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }
}

/// What a run has counted so far (the agent's figures add what the agent spent before the run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub turns: f64,
    pub requests: f64,
    pub tool_calls: f64,
    pub tokens: f64,
    pub cost: f64,
    pub elapsed_ms: f64,
    /// L-3.12.6: why the cost cannot be counted (a reply reported tokens but no cost), from the first such reply.
    pub uncounted: Option<String>,
}

/// The limits a run checks: its own, and the agent's over its life with what the agent spent before this run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budget {
    pub run: Limits,
    pub total: Limits,
    /// The agent's `totalUsage` when the run started: `totalTokens` and `cost.total`.
    pub spent_before: (f64, f64),
}

impl Budget {
    pub fn is_empty(&self) -> bool {
        self.run.is_empty() && self.total.is_empty()
    }

    /// Before a run starts: the agent's totals alone (`prompt()` and `continue()` refuse to start).
    pub fn before_start(&self) -> Option<Reached> {
        Budget { run: Limits::default(), ..*self }.spending(&Figures::default())
    }

    /// Before a model request (after a turn ended): turns, requests, tokens, cost, duration.
    pub fn before_request(&self, f: &Figures) -> Option<Reached> {
        let run = &self.run;
        let at_least = |limit: Option<f64>, value: f64| limit.filter(|max| value >= *max);
        if let Some(max) = at_least(run.turns, f.turns) {
            return Some(Reached::new("maxTurns", Scope::Run, max, f.turns, 0.0));
        }
        if let Some(max) = at_least(run.requests, f.requests) {
            return Some(Reached::new("maxModelRequests", Scope::Run, max, f.requests, 0.0));
        }
        self.spending(f)
    }

    /// Before a tool batch of `batch` calls: tool calls (the batch would pass the limit), tokens, cost, duration.
    pub fn before_batch(&self, f: &Figures, batch: usize) -> Option<Reached> {
        let wanted = f.tool_calls + batch as f64;
        if let Some(max) = self.run.tool_calls.filter(|max| wanted > *max) {
            return Some(Reached::new("maxToolCalls", Scope::Run, max, f.tool_calls, batch as f64));
        }
        self.spending(f)
    }

    fn spending(&self, f: &Figures) -> Option<Reached> {
        let at_least = |limit: Option<f64>, value: f64| limit.filter(|max| value >= *max);
        let run = &self.run;
        if let Some(max) = at_least(run.tokens, f.tokens) {
            return Some(Reached::new("maxTokens", Scope::Run, max, f.tokens, 0.0));
        }
        if let Some(max) = run.cost {
            if let Some(why) = &f.uncounted {
                return Some(Reached::uncounted(Scope::Run, max, f.cost, why));
            }
            if f.cost >= max {
                return Some(Reached::new("maxCostUsd", Scope::Run, max, f.cost, 0.0));
            }
        }
        if let Some(max) = at_least(run.duration, f.elapsed_ms) {
            return Some(Reached::new("maxDurationMs", Scope::Run, max, f.elapsed_ms.round(), 0.0));
        }
        let (tokens, cost) = (self.spent_before.0 + f.tokens, self.spent_before.1 + f.cost);
        if let Some(max) = at_least(self.total.tokens, tokens) {
            return Some(Reached::new("maxTokens", Scope::Agent, max, tokens, 0.0));
        }
        if let Some(max) = self.total.cost {
            if let Some(why) = &f.uncounted {
                return Some(Reached::uncounted(Scope::Agent, max, cost, why));
            }
            if cost >= max {
                return Some(Reached::new("maxCostUsd", Scope::Agent, max, cost, 0.0));
            }
        }
        None
    }

    /// Whether a cost limit applies (the run's or the agent's): only then is a reply without a cost a stop.
    pub fn limits_cost(&self) -> bool {
        self.run.cost.is_some() || self.total.cost.is_some()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `limits`: this run's figures.
    Run,
    /// The Agent's `totalLimits`: its figures over its life.
    Agent,
}

/// A limit that stops the run: which, where, the limit and the figure, and the text the caller sees.
#[derive(Clone, Debug, PartialEq)]
pub struct Reached {
    pub limit: &'static str,
    pub scope: Scope,
    pub max: f64,
    pub value: f64,
    pub message: String,
    /// L-3.12.6: a cost limit that could not be checked (`uncounted: true` in `limitReached`).
    pub uncounted: bool,
}

/// Dollars for a message: 2 decimals, or up to 6 below a cent. Integer arithmetic: float formatting would pull
/// Rust's float printer into the wasm (about 16 KiB).
fn usd(x: f64) -> String {
    let x = if x.is_finite() && x > 0.0 { x } else { 0.0 };
    if x == 0.0 || x >= 0.01 {
        let cents = (x * 100.0).round() as u64;
        let mut out = (cents / 100).to_string();
        out.push('.');
        push_padded(&mut out, cents % 100, 2);
        out
    } else {
        let micros = (x * 1e6).round() as u64;
        let mut out = String::from("0.");
        push_padded(&mut out, micros, 6);
        out.trim_end_matches('0').to_string()
    }
}

/// `n` in decimal, zeros in front up to `width` digits: `format!("{n:0width$}")` without `<u64 as Display>` and
/// `Formatter::pad_integral`'s padding (`to_string` of an integer skips the formatter).
fn push_padded(out: &mut String, n: u64, width: usize) {
    let digits = n.to_string();
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(&digits);
}

impl Reached {
    /// `more`: for `maxToolCalls`, the calls of the batch refused.
    fn new(limit: &'static str, scope: Scope, max: f64, value: f64, more: f64) -> Reached {
        let n = js_number_to_string;
        let agent = if scope == Scope::Agent { "agent " } else { "" };
        let total = if scope == Scope::Agent { " in total" } else { "" };
        let what = match limit {
            "maxTurns" => format!("turn limit of {} reached", n(max)),
            "maxModelRequests" => format!("model request limit of {} reached", n(max)),
            "maxToolCalls" => {
                format!("tool call limit of {} reached ({} run, {} more requested)", n(max), n(value), n(more))
            }
            "maxTokens" => format!("{agent}token limit of {} reached ({} tokens used{total})", n(max), n(value)),
            "maxCostUsd" => format!("{agent}cost limit of ${} reached (${} spent{total})", usd(max), usd(value)),
            _ => format!("time limit of {} ms reached ({} ms elapsed)", n(max), n(value)),
        };
        let value = if limit == "maxToolCalls" { value + more } else { value };
        Reached { limit, scope, max, value, message: format!("Run stopped: {what}"), uncounted: false }
    }

    /// L-3.12.6: a cost limit that cannot be checked, and `why` (see `uncounted_cost`).
    fn uncounted(scope: Scope, max: f64, value: f64, why: &str) -> Reached {
        let agent = if scope == Scope::Agent { "agent " } else { "" };
        let message = format!("Run stopped: {agent}cost limit of ${} cannot be checked: {why}", usd(max));
        Reached { limit: "maxCostUsd", scope, max, value, message, uncounted: true }
    }

    /// `{limit, scope, max, value, message}`: `agent_end.limitReached` and `agent.state.limitReached`.
    pub fn to_value<H: Host>(&self, h: &H) -> H::V {
        let value = h.object(&[
            ("limit", h.constant(self.limit)),
            ("scope", h.constant(if self.scope == Scope::Run { "run" } else { "agent" })),
            ("max", h.number(self.max)),
            ("value", h.number(self.value)),
            ("message", h.string(&self.message)),
        ]);
        if self.uncounted {
            // Set apart so that every other stop keeps the five keys it always had.
            let _ = h.set(&value, "uncounted", &h.boolean(true));
        }
        value
    }
}

/// `usage.totalTokens` and `usage.cost.total` of a message (what is not a finite number counts 0).
pub fn spent<H: Host>(h: &H, message: &H::V) -> (f64, f64) {
    let number = |obj: &H::V, key: &str| {
        h.get(obj, key).ok().and_then(|v| h.as_number(&v)).filter(|n| n.is_finite()).unwrap_or(0.0)
    };
    let Ok(usage) = h.get(message, "usage") else { return (0.0, 0.0) };
    if !h.kind(&usage).is_object_like() {
        return (0.0, 0.0);
    }
    let cost = match h.get(&usage, "cost") {
        Ok(cost) if h.kind(&cost).is_object_like() => number(&cost, "total"),
        _ => 0.0,
    };
    (number(&usage, "totalTokens"), cost)
}

/// L-3.12.6: why a reply's cost cannot be counted, when it reported tokens (`spent`'s first figure) but no cost:
/// the reply's model (`message.model`, else `model.id`) has no prices in `model.cost` (the run's model), or it has
/// prices and the reply came without a cost anyway (a stream function that fills in no cost).
pub fn uncounted_cost<H: Host>(h: &H, message: &H::V, model: &H::V) -> String {
    let text = |obj: &H::V, key: &str| h.get(obj, key).ok().and_then(|v| h.as_string(&v)).filter(|s| !s.is_empty());
    let id = text(message, "model").or_else(|| text(model, "id")).unwrap_or_else(|| "?".into());
    let priced = match h.get(model, "cost") {
        Ok(cost) if h.kind(&cost).is_object_like() => COST_FIELDS[..4]
            .iter()
            .any(|k| h.get(&cost, k).ok().and_then(|v| h.as_number(&v)).is_some_and(|n| n.is_finite() && n > 0.0)),
        _ => false,
    };
    if priced {
        format!("a reply of model \"{id}\" reported tokens but no cost")
    } else {
        format!("model \"{id}\" has no prices (set model.cost)")
    }
}

/// A usage's figures (`USAGE_FIELDS`, then `COST_FIELDS`), or `None` when it adds nothing (no usage object, or
/// every figure 0), so that agents whose models report no usage keep no totals (and their checkpoints and snapshots
/// stay as before). A figure that is not a finite number counts 0. Reads in the order of the JS twin
/// (`reduceAgentEvent` in src/js/snippets/agent.js) and of `totalUsage()` (pkg-template/usage.js).
pub type UsageFigures = ([f64; 5], [f64; 5]);

pub fn read_usage<H: Host>(h: &H, usage: &H::V) -> Result<Option<UsageFigures>, H::V> {
    if !h.kind(usage).is_object_like() {
        return Ok(None);
    }
    let mut counts = [0.0; 5];
    for (slot, key) in counts.iter_mut().zip(USAGE_FIELDS) {
        *slot = finite(h, &h.get(usage, key)?);
    }
    let cost = h.get(usage, "cost")?;
    let mut costs = [0.0; 5];
    if h.kind(&cost).is_object_like() {
        for (slot, key) in costs.iter_mut().zip(COST_FIELDS) {
            *slot = finite(h, &h.get(&cost, key)?);
        }
    }
    if counts.iter().chain(costs.iter()).all(|n| *n == 0.0) {
        return Ok(None);
    }
    Ok(Some((counts, costs)))
}

fn finite<H: Host>(h: &H, v: &H::V) -> f64 {
    h.as_number(v).filter(|n| n.is_finite()).unwrap_or(0.0)
}

/// New totals: `before` (a totals object, or undefined for none) plus `figures`. Totals:
/// `{input, output, cacheRead, cacheWrite, totalTokens, cost: {input, output, cacheRead, cacheWrite, total}}`.
pub fn add_figures<H: Host>(h: &H, before: &H::V, figures: &UsageFigures) -> Result<H::V, H::V> {
    let (mut counts, mut costs) = *figures;
    if h.kind(before).is_object_like() {
        for (slot, key) in counts.iter_mut().zip(USAGE_FIELDS) {
            *slot += finite(h, &h.get(before, key)?);
        }
        let cost = h.get(before, "cost")?;
        if h.kind(&cost).is_object_like() {
            for (slot, key) in costs.iter_mut().zip(COST_FIELDS) {
                *slot += finite(h, &h.get(&cost, key)?);
            }
        }
    }
    Ok(totals_object(h, &counts, &costs))
}

pub fn totals_object<H: Host>(h: &H, counts: &[f64; 5], costs: &[f64; 5]) -> H::V {
    let cost: Vec<(&str, H::V)> = COST_FIELDS.iter().zip(costs).map(|(k, v)| (*k, h.number(*v))).collect();
    let mut entries: Vec<(&str, H::V)> = USAGE_FIELDS.iter().zip(counts).map(|(k, v)| (*k, h.number(*v))).collect();
    entries.push(("cost", h.object(&cost)));
    h.object(&entries)
}

/// Zero totals (what `agent.state.totalUsage` shows before any usage).
pub fn zero_totals<H: Host>(h: &H) -> H::V {
    totals_object(h, &[0.0; 5], &[0.0; 5])
}

/// A stored totals object (a checkpoint's or a snapshot's `usage`): `Err(detail)` when it is not one.
pub fn check_totals<H: Host>(h: &H, v: &H::V) -> Result<H::V, String> {
    if h.kind(v) != Kind::Object {
        return Err(" must be an object".into());
    }
    let number = |obj: &H::V, key: &str, path: &str| -> Result<f64, String> {
        match h.get(obj, key).ok().and_then(|v| h.as_number(&v)) {
            Some(n) if n.is_finite() && n >= 0.0 => Ok(n),
            _ => Err(format!("{path}{key} must be a non-negative number")),
        }
    };
    let mut counts = [0.0; 5];
    for (slot, key) in counts.iter_mut().zip(USAGE_FIELDS) {
        *slot = number(v, key, ".")?;
    }
    let cost = h.get(v, "cost").map_err(|_| ".cost must be an object".to_string())?;
    if h.kind(&cost) != Kind::Object {
        return Err(".cost must be an object".into());
    }
    let mut costs = [0.0; 5];
    for (slot, key) in costs.iter_mut().zip(COST_FIELDS) {
        *slot = number(&cost, key, ".cost.")?;
    }
    Ok(totals_object(h, &counts, &costs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_limit_and_the_figure() {
        let f = Figures {
            turns: 5.0,
            requests: 5.0,
            tool_calls: 4.0,
            tokens: 1200.0,
            cost: 0.52,
            elapsed_ms: 61234.4,
            uncounted: None,
        };
        let b = |run: Limits| Budget { run, ..Budget::default() };
        let msg = |r: Option<Reached>| r.map(|r| r.message).unwrap_or_default();
        assert_eq!(
            msg(b(Limits { turns: Some(5.0), ..Limits::default() }).before_request(&f)),
            "Run stopped: turn limit of 5 reached"
        );
        assert_eq!(
            msg(b(Limits { cost: Some(0.5), ..Limits::default() }).before_request(&f)),
            "Run stopped: cost limit of $0.50 reached ($0.52 spent)"
        );
        assert_eq!(
            msg(b(Limits { tokens: Some(1000.0), ..Limits::default() }).before_batch(&f, 1)),
            "Run stopped: token limit of 1000 reached (1200 tokens used)"
        );
        assert_eq!(
            msg(b(Limits { duration: Some(60000.0), ..Limits::default() }).before_request(&f)),
            "Run stopped: time limit of 60000 ms reached (61234 ms elapsed)"
        );
        assert_eq!(
            msg(b(Limits { tool_calls: Some(5.0), ..Limits::default() }).before_batch(&f, 2)),
            "Run stopped: tool call limit of 5 reached (4 run, 2 more requested)"
        );
        assert_eq!(msg(b(Limits { tool_calls: Some(5.0), ..Limits::default() }).before_batch(&f, 1)), "");
        assert_eq!(
            msg(b(Limits { requests: Some(3.0), ..Limits::default() }).before_request(&f)),
            "Run stopped: model request limit of 3 reached"
        );
        let agent = Budget {
            total: Limits { cost: Some(5.0), ..Limits::default() },
            spent_before: (0.0, 4.5),
            ..Budget::default()
        };
        assert_eq!(
            msg(agent.before_request(&f)),
            "Run stopped: agent cost limit of $5.00 reached ($5.02 spent in total)"
        );
        assert_eq!(usd(0.0012), "0.0012");
        assert_eq!(usd(12.345), "12.35");
        assert_eq!(usd(0.5), "0.50");
        assert_eq!(usd(f64::NAN), "0.00");
        // The same text as the formatter's zero padding it replaces.
        for x in
            [0.0_f64, 1e-7, 4.9e-7, 5e-7, 0.000_001, 0.000_12, 0.009_999_9, 0.01, 0.05, 0.1, 1.0, 3.07, 99.999, 1e9]
        {
            let old = if x >= 0.01 || x == 0.0 {
                let cents = (x * 100.0).round() as u64;
                format!("{}.{:02}", cents / 100, cents % 100)
            } else {
                format!("0.{:06}", (x * 1e6).round() as u64).trim_end_matches('0').to_string()
            };
            assert_eq!(usd(x), old, "{x}");
        }
        // Below every limit: nothing.
        assert_eq!(b(Limits { turns: Some(6.0), cost: Some(1.0), ..Limits::default() }).before_request(&f), None);
    }
}
