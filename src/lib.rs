//! agent-loop-wasm: an LLM agent loop. `core` is the loop itself and knows no JS types; `js` is the
//! wasm-bindgen binding, the only place that names `JsValue`. The built-in providers are JS
//! (`pkg-template/providers/`, issue 43).

pub mod core;

/// The wasm build's allocator: talc instead of std's dlmalloc, 1.4 KiB gzip less of the download (issue 43). One
/// thread, so its lock is a no-op; memory comes from `memory.grow` and is never given back (as with dlmalloc).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

#[cfg(target_arch = "wasm32")]
mod js;

// The two places the core asks the engine without a `Host` (issue 43: each replaces core's float machinery in the
// wasm): numbers to text and back. Their callers are pure functions (the validator, the JSON reader and writer).

/// `String(n)` of the engine the wasm build runs on: `core::text::number::js_number_to_string` there (its Rust
/// reference is the native definition, held to the engine by `tests/fixtures/number-strings.txt`).
#[cfg(target_arch = "wasm32")]
pub(crate) fn engine_number_to_string(n: f64) -> String {
    js::number_to_string(n)
}

/// `Number(text)` of the engine the wasm build runs on, for a JSON number literal: `core::text::number::json_number`
/// there (natively Rust's parser, the definition the engine is held to).
#[cfg(target_arch = "wasm32")]
pub(crate) fn engine_parse_number(text: &str) -> f64 {
    js::parse_number(text)
}
