// `agent-loop-wasm` for browsers, bundlers (Vite, webpack 5, …) and plain ES modules / CDNs (SPEC K-9.2): the
// wasm beside this file is fetched and instantiated by top-level await, so importers get a ready API. The URL is
// relative to this module (K-9.2.1), never to the page; bundlers see the `new URL(…, import.meta.url)` literal
// and emit the .wasm as an asset.
import { init } from "./core.js";

export * from "./api.js";

await init(new URL("agent_loop_wasm_bg.wasm", import.meta.url));
