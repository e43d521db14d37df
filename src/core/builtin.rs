//! What `streamBuiltin` (D7, §6) shares with the core: the names of the four built-in wire formats,
//! and the P-6.1.1 lone `error` event for an api none of them serves (it never throws, P-6.1.2).
//! The providers themselves live in `src/providers/` (bytes) and `src/js/providers/` (fetch).

use super::agent_loop::empty_assistant;
use crate::core::fast::FastPaths;

/// The names of the built-in wire formats, in the order `BUILTIN_APIS` lists them.
pub const BUILTIN_APIS: [&str; 4] =
    ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"];

/// The single `error` event of a request no built-in provider can serve.
pub fn unavailable_event<H: FastPaths>(h: &H, model: &H::V) -> H::V {
    let api = if h.kind(model).is_object_like() {
        h.get(model, "api").unwrap_or_else(|_| h.undefined())
    } else {
        h.undefined()
    };
    let api_text = h.as_string(&api).unwrap_or_else(|| h.error_message(&api));
    let text = format!("No built-in provider for api \"{api_text}\". Pass streamFn or call setDefaultStreamFn().");
    let message = empty_assistant(h, model, false, &h.constant("error"), Some(&text));
    h.object(&[("type", h.constant("error")), ("reason", h.constant("error")), ("error", message)])
}
