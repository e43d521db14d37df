// The wasm instance behind every entry under dist/web/ (and dist/deno/): `index.js` (browsers, bundlers,
// plain ESM), `workerd.js`, `slim.js` (`agent-loop-wasm/web`) and `../deno/index.js` all share this one module, so
// a page or bundle that imports both `agent-loop-wasm` and `agent-loop-wasm/web` gets ONE instance.
//
// `core` is the object `api.js` and `agent.js` call into. Until `init`/`initSync` succeeds its functions throw the
// "not initialized" error (SPEC E-8.3.2); afterwards they are the wasm-bindgen glue's own functions (no wrapper
// on the hot path). The few constant-valued functions `api.js` calls while it is being evaluated (its
// `VERSION`-style exports) answer from PRE_INIT, the values scripts/build.mjs read from this very build's wasm:
// ES module evaluation runs `api.js` before the body of any entry that imports it, so even `index.js`, which
// awaits `init` at top level, evaluates `api.js` before the wasm is there.
import * as glue from "./agent_loop_wasm.js";
import { codedError } from "./errors.js";

const NOT_INITIALIZED = 'agent-loop-wasm is not initialized: await init() from "agent-loop-wasm/web" first';
const PRE_INIT = {}; // @build: replaced by scripts/build.mjs with { name: "<JSON of the result>" }

function notInitialized() {
  throw codedError("NOT_INITIALIZED", NOT_INITIALIZED);
}

const core = {};
const names = Object.keys(glue).filter(
  (name) => name !== "default" && name !== "initSync" && typeof glue[name] === "function",
);
for (const name of names) {
  const json = Object.prototype.hasOwnProperty.call(PRE_INIT, name) ? PRE_INIT[name] : undefined;
  core[name] = json === undefined ? notInitialized : () => JSON.parse(json);
}

let ready = false;
function activate() {
  if (ready) return;
  for (const name of names) core[name] = glue[name];
  ready = true;
}

function isOptionsObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Loads and instantiates the wasm. `input`: a URL, `Request`, `Response`, bytes, `WebAssembly.Module`, a promise of
 * one of these, or `{ module_or_path }`. Without it the file beside the glue is fetched
 * (`new URL("agent_loop_wasm_bg.wasm", import.meta.url)`). Later calls reuse the first instance.
 */
export async function init(input) {
  if (ready) return;
  await glue.default(input === undefined || isOptionsObject(input) ? input : { module_or_path: input });
  activate();
}

/** Instantiates the wasm synchronously from its bytes or a compiled `WebAssembly.Module` (or `{ module }`). */
export function initSync(bytesOrModule) {
  if (ready) return;
  glue.initSync(isOptionsObject(bytesOrModule) ? bytesOrModule : { module: bytesOrModule });
  activate();
}

export default core;
