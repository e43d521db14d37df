//! The stable codes of the errors the library throws itself (E-8.6, issue 42). Each code names one kind of refusal;
//! the error keeps its message and its class (`Error` or `TypeError`, as before) and carries the code, which the JS
//! classes of `pkg-template/errors.js` (`InvalidArgumentError`, `AgentBusyError`, …) recognise with `instanceof`.
//! Errors a caller's callback threw pass through unchanged: they have no code.

/// An argument or option that is not what the API takes (every E-8.1 check): a `TypeError`.
pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
/// `prompt()`, `continue()`, `resume()` or `reset()` while the Agent runs.
pub const AGENT_BUSY: &str = "AGENT_BUSY";
/// `prompt()` or `continue()` while tool calls wait for approval, or decided calls wait for `resume()`.
pub const APPROVALS_PENDING: &str = "APPROVALS_PENDING";
/// `approve()` or `deny()` of a call that is not waiting, was already decided, or with invalid edited arguments.
pub const INVALID_APPROVAL: &str = "INVALID_APPROVAL";
/// `continue()` with nothing to continue from (no messages, or an assistant message last).
pub const CANNOT_CONTINUE: &str = "CANNOT_CONTINUE";
/// `prompt()` or `continue()` once the Agent's `totalLimits` are reached.
pub const LIMIT_REACHED: &str = "LIMIT_REACHED";
/// `Agent.restore()` refusing a snapshot or checkpoints (not ours, too new, a gap, invalid JSON).
pub const RESTORE_REFUSED: &str = "RESTORE_REFUSED";
/// `Agent.snapshot()` of a state that JSON cannot hold: a `TypeError`.
pub const NOT_SERIALIZABLE: &str = "NOT_SERIALIZABLE";

/// Every code the core throws, with whether its errors are `TypeError`s (the JS side adds its own: see
/// `pkg-template/errors.js`, whose table must hold these; `tests/js/error-codes.test.mjs` compares).
pub const CORE_CODES: [(&str, bool); 8] = [
    (INVALID_ARGUMENT, true),
    (AGENT_BUSY, false),
    (APPROVALS_PENDING, false),
    (INVALID_APPROVAL, false),
    (CANNOT_CONTINUE, false),
    (LIMIT_REACHED, false),
    (RESTORE_REFUSED, false),
    (NOT_SERIALIZABLE, true),
];

/// Whether errors of `code` are `TypeError`s.
pub fn is_type_error(code: &str) -> bool {
    CORE_CODES.iter().any(|(c, t)| *c == code && *t)
}

/// The error to throw for `code`, with `message` as it has always read.
pub fn coded<H: crate::core::host::Host>(h: &H, code: &'static str, message: &str) -> H::V {
    h.coded_error(message, is_type_error(code), code)
}
