// `agent-loop-wasm/web`: the whole API plus explicit initialisation, for hosts without top-level await or with
// custom wasm hosting. Call `await init()` (or `initSync(bytesOrModule)`) first; until then API calls throw
// `agent-loop-wasm is not initialized: await init() from "agent-loop-wasm/web" first`.
export { init, initSync } from "./core.js";
export * from "./api.js";
