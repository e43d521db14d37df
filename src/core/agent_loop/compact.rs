//! Compaction inside the loop (L-3.13, issue 45): before a request whose estimate passes the trigger, the plan, the
//! summary, the entry and their events. The work on the transcript is `FastPaths::compaction_*` (in the package a JS
//! module loaded on the first check, so that the loop's download does not carry it; the references are
//! `core::compaction`).

use super::messages::REQUEST_ABORTED;
use super::stream::request_identity;
use crate::core::fast::FastPaths;
use crate::core::host::Kind;
use crate::core::run::{Run, Stop};

/// L-3.13.5: compacts when the request's estimate passes the trigger. A failed compaction is not a failed run
/// (L-3.13.8): the request goes out as it is. An abort during it ends the run (D2).
pub(super) async fn compact_if_needed<H: FastPaths>(run: &Run<'_, H>) -> Result<(), Stop> {
    let Some(options) = run.compaction.as_ref() else { return Ok(()) };
    let h = run.h;
    let fail = |e: H::V| run.fail(&e);
    let settled = |outcome: Option<Result<H::V, H::V>>| match outcome {
        _ if run.aborted() => Err(REQUEST_ABORTED.to_string()),
        None => Err(REQUEST_ABORTED.to_string()),
        Some(Err(e)) => Err(h.error_message(&e)),
        Some(Ok(v)) => Ok(v),
    };
    // The module's load (the package's own file, no caller code: not bounded by D4); a failure fails the run
    // (L-3.13.11).
    if let Err(e) = h.compaction_ready().await {
        return Err(run.fail(&e));
    }
    let messages = run.context_messages()?;
    let config = run.config();
    let model = h.get(&config, "model").map_err(fail)?;
    let Some(plan) = h.compaction_plan(&messages, options, &model).map_err(fail)? else { return Ok(()) };
    let field = |key: &str| h.get(&plan, key).map_err(fail);
    let (reason, tokens_before) = (field("reason")?, field("tokensBefore")?);
    #[allow(clippy::cast_precision_loss)] // message counts stay far below 2^53
    let count = h.number(h.array_len(&field("messages")?).map_err(fail)? as f64);
    let start = event(run, "compaction_start", &reason, &tokens_before, ("messages", count));
    emit_all(run, vec![("compaction_start", start)]).await?;
    // Only a model summary (the default) makes a request, counted as the loop's are; the twin asks `getApiKey` and
    // builds its options as the loop does (L-3.5.1), reasoning off.
    let how = if h.kind(options) == Kind::Object { h.get(options, "summarize").map_err(fail)? } else { h.undefined() };
    if h.kind(&how).is_nullish() || h.as_string(&how).as_deref() == Some("model") {
        run.count_request();
    }
    let identity = request_identity(h, &config).map_err(fail)?;
    let summary = h.compaction_summarize(&plan, options, &model, &run.stream_fn, &config, &identity, &run.signal);
    let (entry, end) = match settled(run.guarded(summary).await) {
        Ok(written) => {
            let (text, usage) = (h.get(&written, "summary").map_err(fail)?, h.get(&written, "usage").map_err(fail)?);
            let entry = h.compaction_entry(&messages, &plan, &text, &usage, h.date_now()).map_err(fail)?;
            let tokens_after = h.get(&entry, "tokensAfter").map_err(fail)?;
            let end = event(run, "compaction_end", &reason, &tokens_before, ("message", entry.clone()));
            h.set(&end, "tokensAfter", &tokens_after).map_err(fail)?;
            (Some(entry), end)
        }
        Err(text) => (None, event(run, "compaction_end", &reason, &tokens_before, ("errorMessage", h.string(&text)))),
    };
    if let Some(entry) = entry {
        // As `Run::inject`: the entry's two events, then into the context and newMessages.
        run.count_spent(&entry);
        let message = |kind| h.object(&[("type", h.constant(kind)), ("message", entry.clone())]);
        emit_all(run, vec![("message_start", message("message_start")), ("message_end", message("message_end"))])
            .await?;
        run.append(&entry)?;
    }
    emit_all(run, vec![("compaction_end", end)]).await?;
    run.check_abort()
}

/// `{ type, reason, tokensBefore, <key>: value }` (then `compaction_end`'s `tokensAfter`).
fn event<H: FastPaths>(
    run: &Run<'_, H>,
    kind: &'static str,
    reason: &H::V,
    tokens_before: &H::V,
    (key, value): (&str, H::V),
) -> H::V {
    let h = run.h;
    h.object(&[
        ("type", h.constant(kind)),
        ("reason", reason.clone()),
        ("tokensBefore", tokens_before.clone()),
        (key, value),
    ])
}

/// Emits `events` in order (one await site for all of compaction's events).
async fn emit_all<H: FastPaths>(run: &Run<'_, H>, events: Vec<(&'static str, H::V)>) -> Result<(), Stop> {
    for (kind, event) in events {
        run.emit(kind, event).await?;
    }
    Ok(())
}
