// `agent-loop-wasm` on Deno (export condition "deno"): the wasm travels inside ./wasm.js as base64, so loading it
// needs no `--allow-read`/`--allow-net` (a `fetch` of a `file:` URL would) and no Deno 2 feature
// (`import source` of .wasm works without flags in Deno 2.9, but not in the 1.x floor of SPEC K-9.2.2). It shares
// the instance holder of dist/web/, so `agent-loop-wasm/web` in the same program is this very instance.
import { initSync } from "../web/core.js";
import { wasmBase64 } from "./wasm.js";

export * from "../web/api.js";

const text = atob(wasmBase64);
const bytes = new Uint8Array(text.length);
for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
initSync({ module: bytes });
