// `agent-loop-wasm` on Cloudflare Workers / workerd (export condition "workerd"): Workers compile .wasm imports
// to a `WebAssembly.Module` at upload time (no fetch, no eval of bytes), so the loop's instance is created
// synchronously, and the built-in providers' (issue 43) from its compiled module on their first request.
import wasmModule from "./agent_loop_wasm_bg.wasm";
import providersModule from "./agent_loop_providers_bg.wasm";
import { initSync, setProvidersSource } from "./core.js";

export * from "./api.js";

setProvidersSource(() => providersModule);
initSync({ module: wasmModule });
