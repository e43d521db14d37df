// `agent-loop-wasm` on Cloudflare Workers / workerd (export condition "workerd"): Workers compile .wasm imports
// to a `WebAssembly.Module` at upload time (no fetch, no eval of bytes), so the loop's instance is created
// synchronously. The built-in providers (issue 43) are plain JS, imported on their first request.
import wasmModule from "./agent_loop_wasm_bg.wasm";
import { initSync } from "./core.js";

export * from "./api.js";

initSync({ module: wasmModule });
