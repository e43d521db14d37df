//! agent-loop-wasm: an LLM agent loop. `core` is the loop itself and knows no JS types; `js` is the
//! wasm-bindgen binding, the only place that names `JsValue`.

pub mod core;
pub mod providers;

#[cfg(target_arch = "wasm32")]
mod js;
