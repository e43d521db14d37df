// The two implementations the bench compares, behind one small indirection, so a change of the
// package layout (pkg/dist/...) is fixed here and nowhere else.
//
//   ours      → agent-loop-wasm from pkg/ (Node entry; override with BENCH_OURS_ENTRY=/abs/path.mjs)
//   reference → @earendil-works/pi-agent-core 1.6.0 + the stream classes of @earendil-works/pi-ai 1.6.0
//
// Each loader returns { name, agentLoop, runAgentLoop, createAssistantMessageEventStream, ... }.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const PKG = join(ROOT, "pkg");

/** Candidate Node entries of our package, newest layout first. */
const OUR_NODE_ENTRIES = ["dist/node/index.mjs", "dist/node/index.js"];
/** Our browser entry (K-9.1.2) and the wasm file beside it. */
export const OUR_WEB_ENTRY = join(PKG, "dist/web/index.js");
export const OUR_WEB_WASM = join(PKG, "dist/web/agent_loop_wasm_bg.wasm");

export function ourNodeEntry() {
  if (process.env.BENCH_OURS_ENTRY) return process.env.BENCH_OURS_ENTRY;
  for (const rel of OUR_NODE_ENTRIES) {
    const p = join(PKG, rel);
    if (existsSync(p)) return p;
  }
  return null;
}

/** Any .wasm file of our package (for its size when the web entry is missing). */
export function ourWasmFile() {
  for (const rel of ["dist/web/agent_loop_wasm_bg.wasm", "dist/node/agent_loop_wasm_bg.wasm", "dist/deno/agent_loop_wasm_bg.wasm"]) {
    const p = join(PKG, rel);
    if (existsSync(p)) return p;
  }
  return null;
}

/** pkg/ is rebuilt in place (removed, then written again): wait a while for a build in progress. */
async function waitForEntry(ms = 120_000) {
  const until = Date.now() + ms;
  let entry = ourNodeEntry();
  if (!entry) process.stderr.write(`[bench] ${PKG} has no Node entry; waiting up to ${ms / 1000} s for a build in progress\n`);
  while (!entry && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 1000));
    entry = ourNodeEntry();
  }
  if (entry) await new Promise((r) => setTimeout(r, 2000)); // let the build finish writing
  return entry;
}

export async function loadOurs() {
  const entry = ourNodeEntry() ?? (await waitForEntry());
  if (!entry) throw new Error(`our package is not built: none of ${OUR_NODE_ENTRIES.join(", ")} under ${PKG}`);
  const m = await import(pathToFileURL(entry).href);
  return { name: "ours", entry, ...pick(m), streamBuiltin: m.streamBuiltin, wasmMemory: () => findWasmMemory(entry) };
}

export async function loadReference() {
  const core = await import("@earendil-works/pi-agent-core");
  const ai = await import("@earendil-works/pi-ai");
  return {
    name: "reference",
    entry: "@earendil-works/pi-agent-core",
    ...pick({ ...core, createAssistantMessageEventStream: ai.createAssistantMessageEventStream }),
    wasmMemory: () => null,
  };
}

export function load(name) {
  if (name === "ours") return loadOurs();
  if (name === "reference") return loadReference();
  throw new Error(`unknown implementation ${name}`);
}

function pick(m) {
  return {
    agentLoop: m.agentLoop,
    runAgentLoop: m.runAgentLoop,
    createAssistantMessageEventStream: m.createAssistantMessageEventStream,
  };
}

// ---- reaching the wasm instance

const captured = [];
let hooked = false;

/**
 * Records every WebAssembly instance created from now on (call before loading our package). With
 * `wrapImports(imports) → imports` and `wrapExports(exports) → object`, the instance's imports and
 * exports can be replaced by instrumented ones (used by bench/profile.mjs to count crossings).
 * The hook changes nothing else: the constructed instance is returned as is unless wrapExports is given.
 */
export function captureWasmInstances({ wrapImports, wrapExports } = {}) {
  if (hooked) return captured;
  hooked = true;
  const Instance = WebAssembly.Instance;
  WebAssembly.Instance = new Proxy(Instance, {
    construct(target, [module, imports]) {
      const instance = new target(module, wrapImports ? wrapImports(imports) : imports);
      captured.push(instance);
      if (!wrapExports) return instance;
      return { exports: wrapExports(instance.exports) };
    },
  });
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async function (source, imports) {
    const result = await instantiate.call(this, source, wrapImports ? wrapImports(imports) : imports);
    captured.push(result.instance ?? result);
    return result;
  };
  return captured;
}

/**
 * The wasm instance's linear memory (and wasm-bindgen's externref table) of our package, if reachable:
 * 1. web-target glue (ESM `agent_loop_wasm.js` beside the entry): `initSync()` returns the already
 *    initialised instance's exports;
 * 2. an instance recorded by `captureWasmInstances()` (the nodejs-target glue exports neither).
 * Returns { memory, table, via } or null.
 */
export async function findWasmMemory(entry = ourNodeEntry()) {
  const dir = dirname(entry);
  const p = join(dir, "agent_loop_wasm.js");
  if (existsSync(p)) {
    try {
      const g = await import(pathToFileURL(p).href);
      const ex = typeof g.initSync === "function" ? g.initSync() : null;
      if (ex?.memory instanceof WebAssembly.Memory) {
        return { memory: ex.memory, table: ex.__wbindgen_externrefs ?? null, via: "web glue initSync()" };
      }
    } catch {
      // CJS glue or not initialised through this module
    }
  }
  for (const instance of captured) {
    const ex = instance.exports;
    if (ex?.memory instanceof WebAssembly.Memory && "__wbindgen_start" in ex) {
      return { memory: ex.memory, table: ex.__wbindgen_externrefs ?? null, via: "captured WebAssembly.Instance" };
    }
  }
  return null;
}
