// Issue 34: building a request whose payload is big (ten 1.5 MB images and a 10 MB tool result) against
// `JSON.stringify` of the same messages, and the wasm memory it leaves behind. `streamBuiltin` is called with an
// `options.fetch` that notes the time and answers 400 at once: the span is the request's building. Medians of 9
// rounds after 2 untimed, alternating with the stringify. Not a test; prints a table.
//   node --expose-gc bench/payload-build.mjs [--pkg DIR]   (DIR: another build's pkg/, e.g. a checkout of an older commit)
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const arg = (name, dflt) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : dflt);
const pkg = resolve(arg("pkg", new URL("../pkg", import.meta.url).pathname));
const lib = await import(pathToFileURL(`${pkg}/dist/node/index.mjs`).href);
const glue = createRequire(import.meta.url)(`${pkg}/dist/node/agent_loop_wasm.js`);
const MiB = 1024 * 1024;
const image = (i) => `${i}`.padEnd(1.5 * MiB, "A");
const messages = [
  ...Array.from({ length: 10 }, (_, i) => ({ role: "user", content: [{ type: "text", text: `shot ${i}` }, { type: "image", data: image(i), mimeType: "image/png" }], timestamp: i })),
  { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "cat", arguments: { path: "log" } }], api: "x", provider: "x", model: "x", stopReason: "toolUse", timestamp: 11 },
  { role: "toolResult", toolCallId: "c1", toolName: "cat", content: [{ type: "text", text: "log line\n".repeat(10 * MiB / 9) }], isError: false, timestamp: 12 },
];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| wire format | ours: request built (ms) | JSON.stringify(messages) (ms) | ours / stringify | wasm memory after (MiB) |`);
console.log(`|---|---|---|---|---|`);
for (const api of ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"]) {
  const model = { id: "m", name: "m", api, provider: "p", baseUrl: "http://127.0.0.1:9", reasoning: false, input: ["text", "image"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e9, maxTokens: 100 };
  const ours = [];
  const plain = [];
  for (let round = 0; round < 11; round++) {
    globalThis.gc?.();
    let sent = 0;
    const start = performance.now();
    const fetch = async () => {
      sent = performance.now();
      return new Response("{}", { status: 400 });
    };
    for await (const e of lib.streamBuiltin(model, { messages }, { apiKey: "k", fetch, maxRetries: 0 })) void e;
    const t0 = performance.now();
    JSON.stringify(messages);
    const t1 = performance.now();
    if (round >= 2) {
      ours.push(sent - start);
      plain.push(t1 - t0);
    }
  }
  const o = median(ours);
  const p = median(plain);
  console.log(`| ${api} | ${o.toFixed(1)} | ${p.toFixed(1)} | ${(o / p).toFixed(2)}× | ${(glue.wasmMemoryBytes() / MiB).toFixed(1)} |`);
}
