// `agent-loop-wasm/web` on Deno: the main Deno entry initialises synchronously, so `init`/`initSync` only resolve.
export * from "./index.js";
export { init, initSync } from "../web/core.js";
