// `agent-loop-wasm` on Cloudflare Workers / workerd (export condition "workerd"): Workers compile .wasm imports
// to a `WebAssembly.Module` at upload time (no fetch, no eval of bytes), so the instance is created synchronously.
import wasmModule from "./agent_loop_wasm_bg.wasm";
import { initSync } from "./core.js";

export * from "./api.js";

initSync({ module: wasmModule });
