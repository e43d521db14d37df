//! What the built-in providers (D7, §6) share with the core: the names of their four wire formats. The providers
//! themselves are JS (`pkg-template/providers/`, issue 43); `tests/js/dts-names.test.mjs` holds their `wireFormat`
//! to this list.

/// The names of the built-in wire formats, in the order `BUILTIN_APIS` lists them.
pub const BUILTIN_APIS: [&str; 4] =
    ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"];
