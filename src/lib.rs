//! agent-loop-wasm: an LLM agent loop. `core` is the loop itself and knows no JS types; `js` is the
//! wasm-bindgen binding, the only place that names `JsValue`.

pub mod core;
pub mod providers;

#[cfg(target_arch = "wasm32")]
mod js;

/// `String(n)` of the engine the wasm build runs on: `core::text::number::js_number_to_string` there (its Rust
/// reference is the native definition, held to the engine by `tests/fixtures/number-strings.txt`). The one place the
/// core asks the engine without a `Host`: its callers are pure functions (the validator's texts, the JSON writer).
#[cfg(target_arch = "wasm32")]
pub(crate) fn engine_number_to_string(n: f64) -> String {
    js::number_to_string(n)
}
