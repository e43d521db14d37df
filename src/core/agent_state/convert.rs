//! The agent's default `convertToLlm`, the reference of `FastPaths::default_convert_to_llm` (its JS twin
//! is `defaultConvertToLlm` in `src/js/snippets/agent.js`).

use crate::core::declare::tools::role;
use crate::core::host::Host;
use std::rc::Rc;

/// The default `convertToLlm`: keeps the four LLM roles.
pub fn default_convert_to_llm<H: Host + Clone>(h: &H) -> H::V {
    let host = h.clone();
    h.function(Rc::new(move |args: &[H::V]| {
        let h = &host;
        let Some(messages) = args.first() else { return h.array(&[]) };
        let kept: Vec<H::V> = h
            .array_items(messages)
            .unwrap_or_default()
            .into_iter()
            .filter(|m| {
                matches!(role(h, m).ok().flatten().as_deref(), Some("system" | "user" | "assistant" | "toolResult"))
            })
            .collect();
        h.array(&kept)
    }))
}
