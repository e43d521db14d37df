//! API misuse checks (E-8.1): wrong argument types and missing required configuration become a
//! `TypeError` naming the argument, before any guard, event or callback.

use super::budget;
use super::errors;
use super::host::Kind;
use super::tool_schema::{self, ToolSchema};
use crate::core::fast::FastPaths;

pub enum ArgError<V> {
    /// The message of the `TypeError` to throw: `<function>: <path> must be <expectation>`.
    Type(String),
    /// A getter or proxy trap threw while the arguments were read: rethrown as is.
    Thrown(V),
}

impl<V> ArgError<V> {
    /// The value to throw: a `TypeError` with the message, or what a getter threw.
    pub fn into_thrown<H: FastPaths<V = V>>(self, h: &H) -> V {
        match self {
            ArgError::Type(message) => errors::coded(h, errors::INVALID_ARGUMENT, &message),
            ArgError::Thrown(v) => v,
        }
    }
}

impl<V> From<V> for ArgError<V> {
    fn from(thrown: V) -> Self {
        ArgError::Thrown(thrown)
    }
}

pub struct Checker<'a, H: FastPaths> {
    pub h: &'a H,
    pub function: &'a str,
}

const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// The D3–D5 timer fields `limits` checks, in order (`timeoutMs` not on a loop config).
pub const TIMERS: [&str; 4] = ["toolTimeoutMs", "streamIdleTimeoutMs", "abortGraceMs", "timeoutMs"];

/// The optional functions of a loop config, checked by `config` (`streamFn`: API-1.3.2, used when no argument gives one).
pub const CONFIG_HOOKS: [&str; 10] = [
    "streamFn",
    "transformContext",
    "getApiKey",
    "finishTurn",
    "prepareRequest",
    "prepareNextTurn",
    "getSteeringMessages",
    "getFollowUpMessages",
    "beforeToolCall",
    "afterToolCall",
];

impl<'a, H: FastPaths> Checker<'a, H> {
    pub fn new(h: &'a H, function: &'a str) -> Self {
        Checker { h, function }
    }

    fn bad(&self, path: &str, expectation: &str) -> ArgError<H::V> {
        ArgError::Type(format!("{}: {path} must be {expectation}", self.function))
    }

    pub fn object(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        if matches!(self.h.kind(v), Kind::Object | Kind::Function) { Ok(()) } else { Err(self.bad(path, "an object")) }
    }

    pub fn function(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        if self.h.kind(v) == Kind::Function { Ok(()) } else { Err(self.bad(path, "a function")) }
    }

    pub fn optional_function(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        if self.h.kind(v).is_nullish() { Ok(()) } else { self.function(v, path) }
    }

    pub fn array(&self, v: &H::V, path: &str) -> Result<Vec<H::V>, ArgError<H::V>> {
        if self.h.kind(v) != Kind::Array {
            return Err(self.bad(path, "an array"));
        }
        Ok(self.h.array_items(v)?)
    }

    /// A message: an object with a string `role`.
    pub fn message(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        self.object(v, path)?;
        let role = self.h.get(v, "role")?;
        if self.h.kind(&role) != Kind::String {
            return Err(self.bad(&format!("{path}.role"), "a string"));
        }
        Ok(())
    }

    /// Every entry a message (`message`), checked by the host in one step: a long transcript is
    /// checked at every run start (issue 17).
    pub fn messages(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        if self.h.kind(v) != Kind::Array {
            return Err(self.bad(path, "an array"));
        }
        match self.h.first_bad_message(v)? {
            None => Ok(()),
            Some((i, true)) => Err(self.bad(&format!("{path}[{i}]"), "an object")),
            Some((i, false)) => Err(self.bad(&format!("{path}[{i}].role"), "a string")),
        }
    }

    /// A tool: an object with a string `name`, a function `execute`, and if present `parameters` that is JSON Schema or
    /// a Standard Schema with a JSON Schema converter (T-4.3.8).
    pub fn tool(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        let h = self.h;
        self.object(v, path)?;
        let name = h.get(v, "name")?;
        let Some(name) = h.as_string(&name) else {
            return Err(self.bad(&format!("{path}.name"), "a string"));
        };
        self.function(&h.get(v, "execute")?, &format!("{path}.execute"))?;
        let parameters = h.get(v, "parameters")?;
        if h.kind(&parameters) != Kind::Undefined {
            self.object(&parameters, &format!("{path}.parameters"))?;
            if let ToolSchema::Unreadable(reason) = tool_schema::classify(h, &parameters)? {
                return Err(ArgError::Type(format!("{}: {path}.parameters (tool \"{name}\") {reason}", self.function)));
            }
        }
        Ok(())
    }

    pub fn tools(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        if self.h.kind(v).is_nullish() {
            return Ok(());
        }
        for (i, t) in self.array(v, path)?.iter().enumerate() {
            self.tool(t, &format!("{path}[{i}]"))?;
        }
        Ok(())
    }

    pub fn context(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        self.object(v, path)?;
        self.messages(&self.h.get(v, "messages")?, &format!("{path}.messages"))?;
        self.tools(&self.h.get(v, "tools")?, &format!("{path}.tools"))
    }

    pub fn signal(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        let h = self.h;
        if h.kind(v).is_nullish() {
            return Ok(());
        }
        let ok = matches!(h.kind(v), Kind::Object)
            && h.kind(&h.get(v, "aborted")?) == Kind::Bool
            && h.kind(&h.get(v, "addEventListener")?) == Kind::Function;
        if ok { Ok(()) } else { Err(self.bad(path, "an AbortSignal")) }
    }

    /// D3–D5 numbers: timers are finite in 0…2147483647 (abortGraceMs may be Infinity);
    /// maxParallelTools is a positive integer.
    pub fn limits(&self, owner: &H::V, prefix: &str) -> Result<(), ArgError<H::V>> {
        let h = self.h;
        for key in TIMERS {
            if key == "timeoutMs" && prefix.ends_with("config") {
                continue; // the stream option of the same name belongs to providers
            }
            let v = h.get(owner, key)?;
            if h.kind(&v) == Kind::Undefined {
                continue;
            }
            let ok = match h.as_number(&v) {
                Some(n) if key == "abortGraceMs" && n == f64::INFINITY => true,
                Some(n) => n.is_finite() && (0.0..=MAX_TIMER_MS).contains(&n),
                None => false,
            };
            if !ok {
                let what = if key == "abortGraceMs" {
                    "a number between 0 and 2147483647, or Infinity"
                } else {
                    "a finite number between 0 and 2147483647"
                };
                return Err(self.bad(&format!("{prefix}.{key}"), what));
            }
        }
        let v = h.get(owner, "maxParallelTools")?;
        if h.kind(&v) != Kind::Undefined {
            let ok = matches!(h.as_number(&v), Some(n) if n.is_finite() && n >= 1.0 && n.fract() == 0.0);
            if !ok {
                return Err(self.bad(&format!("{prefix}.maxParallelTools"), "a positive integer"));
            }
        }
        Ok(())
    }

    /// Issue 32: `owner.limits` (and with `agent`, `owner.totalLimits`): nullish, or an object whose fields are
    /// nullish or valid limits (`budget::check_limit`).
    pub fn budgets(&self, owner: &H::V, prefix: &str, agent: bool) -> Result<(), ArgError<H::V>> {
        let h = self.h;
        let keys: &[&str] = if agent { &["limits", "totalLimits"] } else { &["limits"] };
        for key in keys {
            let limits = h.get(owner, key)?;
            if h.kind(&limits).is_nullish() {
                continue;
            }
            if h.kind(&limits) != Kind::Object {
                return Err(self.bad(&format!("{prefix}.{key}"), "an object"));
            }
            let fields: &[&str] = if *key == "limits" { &budget::RUN_LIMITS } else { &budget::TOTAL_LIMITS };
            for field in fields {
                let v = h.get(&limits, field)?;
                if h.kind(&v).is_nullish() {
                    continue;
                }
                budget::check_limit(field, h.as_number(&v))
                    .map_err(|what| self.bad(&format!("{prefix}.{key}.{field}"), what))?;
            }
        }
        Ok(())
    }

    /// Issue 45: `owner.compaction` (L-3.13.1).
    pub fn compaction(&self, owner: &H::V, prefix: &str) -> Result<(), ArgError<H::V>> {
        let v = self.h.get(owner, "compaction")?;
        match self.h.compaction_problem(&v)? {
            None => Ok(()),
            Some((field, what)) => {
                let path = if field.is_empty() {
                    format!("{prefix}.compaction")
                } else {
                    format!("{prefix}.compaction.{field}")
                };
                Err(self.bad(&path, &what))
            }
        }
    }

    pub fn config(&self, v: &H::V, path: &str) -> Result<(), ArgError<H::V>> {
        let h = self.h;
        self.object(v, path)?;
        self.object(&h.get(v, "model")?, &format!("{path}.model"))?;
        self.function(&h.get(v, "convertToLlm")?, &format!("{path}.convertToLlm"))?;
        for hook in CONFIG_HOOKS {
            self.optional_function(&h.get(v, hook)?, &format!("{path}.{hook}"))?;
        }
        self.limits(v, path)?;
        self.budgets(v, path, false)?;
        self.compaction(v, path)
    }
}
