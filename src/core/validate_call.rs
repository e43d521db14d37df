//! `validateToolArguments` on host values (T-4.3): `FastPaths::check_tool_call` (the reference in
//! `fast::check_call`, the JS twin in `validate.js`), then, for a Standard Schema, its answer awaited (T-4.3.8). The
//! transcript is never modified.

use super::fast::check_call::validation_error;
use super::fast::{Checked, FastPaths};
use super::host::Kind;
use super::tool_schema;
use std::rc::Rc;

/// Validates `args` (the possibly prepared arguments of `call`) against `tool.parameters` and
/// returns the arguments `execute` gets; throws (as `Err`) an `Error` with the exact T-4.3.5 text. A Standard
/// Schema's `validate` is awaited (T-4.3.8).
pub async fn validate_tool_call<H: FastPaths>(h: &H, tool: &H::V, call: &H::V, args: &H::V) -> Result<H::V, H::V> {
    match h.check_tool_call(tool, call, args)? {
        Checked::Args(args) => Ok(args),
        Checked::Standard(answer) => {
            let answer = h.settle(&answer).await?;
            standard_outcome(h, call, args, &answer)
        }
    }
}

/// `validate_tool_call` for callers that cannot wait: `None` when a Standard Schema's `validate` answered with a
/// promise.
pub fn validate_tool_call_now<H: FastPaths>(
    h: &H,
    tool: &H::V,
    call: &H::V,
    args: &H::V,
) -> Result<Option<H::V>, H::V> {
    match h.check_tool_call(tool, call, args)? {
        Checked::Args(args) => Ok(Some(args)),
        Checked::Standard(answer) if is_thenable(h, &answer)? => {
            observe(h, &answer);
            Ok(None)
        }
        Checked::Standard(answer) => standard_outcome(h, call, args, &answer).map(Some),
    }
}

/// Gives a promise nobody will await a do-nothing handler for both outcomes, so its rejection is not reported
/// as unhandled. A `then` that throws is ignored: the answer is dropped either way.
fn observe<H: FastPaths>(h: &H, promise: &H::V) {
    let noop = h.shared_function("noop", &|| {
        let h = h.clone();
        Rc::new(move |_: &[H::V]| h.undefined())
    });
    if let Ok(then) = h.get(promise, "then") {
        let _ = h.call_sync(&then, promise, &[noop.clone(), noop]);
    }
}

fn is_thenable<H: FastPaths>(h: &H, v: &H::V) -> Result<bool, H::V> {
    Ok(h.kind(v).is_object_like() && h.kind(&h.get(v, "then")?) == Kind::Function)
}

/// A Standard Schema's settled answer: its `value`, or the T-4.3.5 error with its issues (T-4.3.8).
pub fn standard_outcome<H: FastPaths>(h: &H, call: &H::V, args: &H::V, answer: &H::V) -> Result<H::V, H::V> {
    match tool_schema::standard_answer(h, answer)? {
        Ok(value) => Ok(value),
        Err(errors) => Err(validation_error(h, call, args, &errors)?),
    }
}
