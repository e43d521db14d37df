//! The assistant messages the loop writes itself: an empty one for a model (P-6.1.3, and with a text block the D1.2
//! failure shape), a zero usage, and the `thinkingLevel` every final message is stamped with.

use crate::core::budget::{COST_FIELDS, USAGE_FIELDS};
use crate::core::fast::FastPaths;
use crate::core::run::Run;

pub(super) const REQUEST_ABORTED: &str = "Request was aborted";

pub(super) fn thinking_level<H: FastPaths>(run: &Run<'_, H>) -> H::V {
    let h = run.h;
    match h.get(&run.config(), "reasoning") {
        Ok(level) if !h.kind(&level).is_nullish() => level,
        _ => h.constant("off"),
    }
}

/// An assistant message without output, for the model `model` (its `api`, `provider`, `id`; unreadable
/// fields stay undefined): `{role, content, api, provider, model, usage: zero, stopReason,
/// errorMessage?, timestamp}`. `text_block` puts one empty text block in `content` (D1.2, A-5.6.1);
/// without it `content` is empty (P-6.1.3).
pub fn empty_assistant<H: FastPaths>(
    h: &H,
    model: &H::V,
    text_block: bool,
    stop_reason: &H::V,
    error_message: Option<&str>,
) -> H::V {
    let field = |key: &str| {
        if h.kind(model).is_object_like() { h.get(model, key).unwrap_or_else(|_| h.undefined()) } else { h.undefined() }
    };
    let content = if text_block {
        h.array(&[h.object(&[("type", h.constant("text")), ("text", h.constant(""))])])
    } else {
        h.array(&[])
    };
    let mut entries = vec![
        ("role", h.constant("assistant")),
        ("content", content),
        ("api", field("api")),
        ("provider", field("provider")),
        ("model", field("id")),
        ("usage", zero_usage(h)),
        ("stopReason", stop_reason.clone()),
    ];
    if let Some(text) = error_message {
        entries.push(("errorMessage", h.string(text)));
    }
    entries.push(("timestamp", h.number(h.date_now())));
    h.object(&entries)
}

/// The D1.2 shape, with the current config's model.
pub fn failure_message<H: FastPaths>(run: &Run<'_, H>, stop_reason: &H::V, error_message: &str) -> H::V {
    let h = run.h;
    let model = h.get(&run.config(), "model").unwrap_or_else(|_| h.undefined());
    empty_assistant(h, &model, true, stop_reason, Some(error_message))
}

/// S-2.1.2: zero usage, the fields of `core::budget`'s usage record in its order.
pub fn zero_usage<H: FastPaths>(h: &H) -> H::V {
    let zeros = |fields: &[&'static str]| fields.iter().map(|f| (*f, h.number(0.0))).collect::<Vec<_>>();
    let cost = h.object(&zeros(&COST_FIELDS));
    let mut usage = zeros(&USAGE_FIELDS);
    usage.push(("cost", cost));
    h.object(&usage)
}

/// `array[index]`, if it can be read.
pub(super) fn read_index<H: FastPaths>(h: &H, array: &H::V, index: usize) -> Option<H::V> {
    if index >= h.array_len(array).ok()? {
        return None;
    }
    h.array_get(array, index).ok()
}
