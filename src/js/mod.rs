//! The wasm-bindgen binding: the only place that names `JsValue`. The `loop` feature is the loop's exports (`api`,
//! `agent`); the built-in providers are JS (`pkg-template/providers/`, issue 43). The test-only `parity` feature
//! adds `parity` (`__fastPath`) to the loop's: never in the package.
//! The npm wrapper (`pkg-template/api.js`) gives the exports their public names and arities.

#[cfg(feature = "loop")]
mod agent;
#[cfg(feature = "loop")]
mod api;
mod executor;
mod host;
#[cfg(feature = "parity")]
mod parity;
mod protocol;
mod snippets;

use wasm_bindgen::prelude::*;

/// `String(n)`: the engine's Number::toString (see `crate::engine_number_to_string`).
pub(crate) fn number_to_string(n: f64) -> String {
    js_sys::Number::from(n).to_string_with_radix(10).map(String::from).unwrap_or_default()
}

/// `Number(text)` of a JSON number literal (see `crate::engine_parse_number`).
pub(crate) fn parse_number(text: &str) -> f64 {
    js_sys::parse_float(text)
}

/// Bytes of the instance's linear memory (tests: what a payload cost for good; it never shrinks).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    core::arch::wasm32::memory_size::<0>() as f64 * 65536.0
}

#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
