// `agent-loop-wasm` on Deno (export condition "deno"). Two ways to the wasm, both without `--allow-read` or
// `--allow-net` (a `fetch` of a `file:` URL would need one):
// - A Deno with source-phase Wasm imports (2.9 here) imports the .wasm itself through ./wasm-source.js (`import
//   source`): its module loader reads and compiles it, so this entry neither decodes nor compiles anything, which
//   halves the import (issue 17's cold start).
// - Older ones (the SPEC K-9.2.2 floor is 1.40) cannot parse `import source`: that dynamic import fails, and the
//   wasm comes from ./wasm.js as base64, decoded here and compiled by `initSync`.
// Either way it shares the instance holder of dist/web/, so `agent-loop-wasm/web` in the same program is this very
// instance. The built-in providers (issue 43) are plain JS, imported on their first request.
import { initSync } from "../web/core.js";

export * from "../web/api.js";

function decode(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

let module;
try {
  ({ wasmModule: module } = await import("./wasm-source.js"));
} catch {
  module = decode((await import("./wasm.js")).wasmBase64);
}
initSync({ module });
