// Issue 34, run by memory-payloads.test.mjs in a fresh Node process (so that the wasm memory it measures starts as a
// new instance's): requests whose images and texts weigh megabytes, sent by the built-in providers to a loopback
// server, and the growth of the instance's linear memory (`WebAssembly.Memory`'s buffer, which never shrinks) they
// cost. The body of each scenario's first request is compared, byte for byte, with the one pi-ai 1.6.0's own
// provider sends for the same context. Prints one JSON line.
import http from "node:http";
import { createRequire } from "node:module";
import { wire, providerModel, APIS } from "./provider-server.mjs";

const require = createRequire(import.meta.url);
const lib = await import("../../pkg/dist/node/index.mjs");
const glue = require("../../pkg/dist/node/agent_loop_wasm.js");
const [scenario, argsJson] = process.argv.slice(2);
const args = JSON.parse(argsJson);
const MiB = 1024 * 1024;
const KEY = "test-key";

let keep = false;
/** When set, the SSE answer instead of `wire[api].text("ok")`. */
let answer = null;
const kept = [];
let lastLength = 0;
let api = "openai-completions";
const server = http.createServer((req, res) => {
  const parts = [];
  req.on("data", (d) => parts.push(d));
  req.on("end", () => {
    const body = Buffer.concat(parts);
    // Dropped at once: a keep-alive socket keeps its last request (and this closure) alive, which would count as
    // memory the package kept.
    parts.length = 0;
    lastLength = body.length;
    if (keep) kept.push(body);
    // One connection per request: a client's pooled connection idle through a long request of the other library
    // would be closed by the server's keep-alive timeout and fail its next request with ECONNRESET.
    res.writeHead(200, { "content-type": "text/event-stream", connection: "close" });
    res.end(answer ?? wire[api].text("ok"));
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
// Settled where the two differ by design, not by size: pi-ai 1.6.0 sends `store: false` where the model's compat
// allows it (the spec's openai-completions never does), and the spec clamps `maxTokens` to what the context window
// leaves (P-6.2.7), which these requests' megabytes would exhaust.
const model = (which) => providerModel(which, baseUrl, { compat: { supportsStore: false }, contextWindow: 1e9 });

async function ours(which, context) {
  api = which;
  let final;
  for await (const e of lib.streamBuiltin(model(which), context, { apiKey: KEY })) final = e;
  if (final.type !== "done") throw new Error(`ours: ${final.error?.errorMessage}`);
}

/** pi-ai's provider of `which` on the SSE answer `sse` (a warm-up: its module and code paths loaded before the JS
 *  baseline, so the JS figure counts what the requests keep, not pi-ai's code). */
async function warmReference(which, context, sse) {
  const saved = answer;
  api = which;
  answer = sse ?? null;
  const { streamSimple } = await import(`@earendil-works/pi-ai/api/${which}`);
  await final(streamSimple(model(which), context, { apiKey: KEY }));
  answer = saved;
}

async function reference(which, context) {
  api = which;
  const { streamSimple } = await import(`@earendil-works/pi-ai/api/${which}`);
  let final;
  for await (const e of streamSimple(model(which), context, { apiKey: KEY })) final = e;
  if (final.type !== "done") throw new Error(`reference: ${final.error?.errorMessage}`);
}

/** Ours and then the reference on `context`: whether the bodies are the same bytes (for google-generative-ai, the
 *  same JSON: Google's SDK writes its own key order), and their length. */
async function sameBytes(which, context) {
  keep = true;
  kept.length = 0;
  await ours(which, context);
  await reference(which, context);
  keep = false;
  const [a, b] = kept.splice(0);
  if (process.env.SHOW_DIFF && !a.equals(b)) {
    let i = 0;
    while (a[i] === b[i]) i++;
    console.error(which, i, a.subarray(Math.max(0, i - 100), i + 100).toString(), "\n---\n", b.subarray(Math.max(0, i - 100), i + 100).toString());
  }
  const same = which === "google-generative-ai" ? sameJson(a, b) : a.equals(b);
  return { same, length: a.length };
}

/** Equal JSON values, objects compared by their entries whatever their order. */
function sameJson(a, b) {
  const sorted = (v) =>
    Array.isArray(v) ? v.map(sorted) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
  return JSON.stringify(sorted(JSON.parse(a.toString("utf8")))) === JSON.stringify(sorted(JSON.parse(b.toString("utf8"))));
}

const memory = () => glue.wasmMemoryBytes();
if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
/**
 * What JS keeps besides the instance's linear memory, after a full GC: the heap (strings, objects) and the external
 * memory (buffers) other than the wasm memory, which `external` counts too. A JS-side table holding the payloads
 * would show here, where the wasm figure cannot see it.
 */
function jsBytes() {
  globalThis.gc();
  globalThis.gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external - memory();
}
// pi-ai's providers are imported where the scenario first uses them, as before: importing them up front made pi-ai's
// own requests fail with ECONNRESET on Node 18. Their module code is counted in the JS figure; it stays well below
// the budget.
/** jsBytes() where the scenario takes its wasm baseline (after its first warm-up), for `out.jsGrown`. */
let jsBase;
const baseline = () => {
  jsBase ??= jsBytes();
  return memory();
};
const letters = (n, seed) => {
  // Base64-like data, different per image (no two strings the same, as real images are not).
  const head = seed.toString(36).padStart(8, "0");
  return head + "A".repeat(n - head.length);
};

function imagesContext(size, count) {
  return {
    messages: Array.from({ length: count }, (_, i) => ({
      role: "user",
      content: [{ type: "text", text: `Screenshot ${i}` }, { type: "image", data: letters(size, i + 1), mimeType: "image/png" }],
      timestamp: i,
    })),
  };
}

function toolResultContext(which, size) {
  const text = "line of output, with \"quotes\", é and 😀\n".repeat(Math.ceil(size / 40)).slice(0, size);
  const m = model(which);
  return {
    messages: [
      // Blocks, not a string: pi-ai's anthropic-messages sends a string content as it is, the spec's as a block.
      { role: "user", content: [{ type: "text", text: "run it" }], timestamp: 1 },
      { role: "assistant", content: [{ type: "toolCall", id: "call_1", name: "run", arguments: { cmd: "cat big.log" } }], api: which,
        provider: m.provider, model: m.id, stopReason: "toolUse", timestamp: 2,
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } },
      { role: "toolResult", toolCallId: "call_1", toolName: "run", content: [{ type: "text", text }], isError: false, timestamp: 3 },
    ],
    tools: [{ name: "run", description: "Runs a command", parameters: { type: "object", properties: { cmd: { type: "string" } } } }],
  };
}

/** A tool call whose arguments (`{"path": …, "content": <size characters>}`) stream in 16 KiB fragments, one SSE
 *  event each, as a coding agent's "write this file" does. */
function streamedCall(which, size) {
  const content = "const x = \"é😀\";\n".repeat(Math.ceil(size / 16)).slice(0, size);
  const args = JSON.stringify({ path: "big.js", content });
  const frags = [];
  for (let at = 0; at < args.length; at += 16384) frags.push(args.slice(at, at + 16384));
  const data = (v) => `data: ${JSON.stringify(v)}\n\n`;
  if (which === "openai-completions") {
    const chunk = (delta, extra = {}) => data({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, ...extra }] });
    let sse = chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write", arguments: "" } }] });
    for (const f of frags) sse += chunk({ tool_calls: [{ index: 0, function: { arguments: f } }] });
    sse += chunk({}, { finish_reason: "tool_calls" });
    return { sse: sse + "data: [DONE]\n\n", args };
  }
  const event = (name, v) => `event: ${name}\n${data(v)}`;
  let sse = event("message_start", { type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude", content: [], usage: { input_tokens: 1, output_tokens: 1 } } });
  sse += event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "write", input: {} } });
  for (const f of frags) sse += event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: f } });
  sse += event("content_block_stop", { type: "content_block_stop", index: 0 });
  sse += event("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } });
  sse += event("message_stop", { type: "message_stop" });
  return { sse, args };
}

/** The final message of a stream (ours or the reference's) on `context`. */
async function final(stream) {
  let last;
  for await (const e of stream) last = e;
  return last;
}

/**
 * The scenario, in a function of its own: once it returns, its locals (the payloads) are out of every frame, so the
 * JS figure after it counts what the package kept, not what this script's own stack still held.
 */
async function runScenario(out) {
    if (scenario === "images") {
      // The first request of the instance grows its memory by what any request needs: measured from after it.
      await ours(args.api, imagesContext(2048, 2));
      await warmReference(args.api, imagesContext(2048, 2));
      const base = baseline();
      out.bytes = await sameBytes(args.api, imagesContext(args.mib * MiB, args.count));
      const afterFirst = memory() - base;
      for (let round = 1; round < args.rounds; round++) await ours(args.api, imagesContext(args.mib * MiB, args.count));
      out.grownFirst = afterFirst;
      out.grown = memory() - base;
      out.bodyLength = lastLength;
    } else if (scenario === "tool-result") {
      out.apis = {};
      for (const which of args.apis) await warmReference(which, toolResultContext(which, 2048));
      for (const which of args.apis) {
        await ours(which, toolResultContext(which, 2048));
        const base = baseline();
        const bytes = await sameBytes(which, toolResultContext(which, args.mib * MiB));
        await ours(which, toolResultContext(which, args.mib * MiB));
        out.apis[which] = { ...bytes, grown: memory() - base };
      }
    } else if (scenario === "validate") {
      // A tool call of megabytes validated (what the loop does before every execute): the arguments' long strings stay
      // in JS where the schema only asks for strings.
      const tool = { name: "write", description: "w", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] } };
      const call = (size) => ({ type: "toolCall", id: "c1", name: "write", arguments: { path: "big.js", content: "x".repeat(size) } });
      lib.validateToolArguments(tool, call(MiB));
      const base = baseline();
      const result = lib.validateToolArguments(tool, call(args.mib * MiB));
      out.valid = result.content.length === args.mib * MiB;
      out.grown = memory() - base;
    } else if (scenario === "tool-args") {
      out.apis = {};
      const context = { messages: [{ role: "user", content: "write it", timestamp: 1 }] };
      for (const which of args.apis) await warmReference(which, context, streamedCall(which, MiB).sse);
      for (const which of args.apis) {
        api = which;
        // The warm-up streams 1 MiB the same way: what a stream needs whatever its size (the decoder's buffers, one
        // network chunk's operations) is grown by then; what the 20 MB call adds on top must not depend on its size.
        answer = streamedCall(which, MiB).sse;
        await final(lib.streamBuiltin(model(which), context, { apiKey: KEY }));
        const base = baseline();
        const { sse, args: text } = streamedCall(which, args.mib * MiB);
        answer = sse;
        const ourEnd = await final(lib.streamBuiltin(model(which), context, { apiKey: KEY }));
        const grown = memory() - base;
        const { streamSimple } = await import(`@earendil-works/pi-ai/api/${which}`);
        const theirEnd = await final(streamSimple(model(which), context, { apiKey: KEY }));
        const ourCall = ourEnd.message.content.find((b) => b.type === "toolCall");
        const theirCall = theirEnd.message.content.find((b) => b.type === "toolCall");
        out.apis[which] = {
          type: ourEnd.type,
          sameArguments: JSON.stringify(ourCall.arguments) === JSON.stringify(theirCall.arguments),
          exact: JSON.stringify(ourCall.arguments) === text,
          grown,
        };
      }
      answer = null;
    } else if (scenario === "sse-line") {
      // One SSE line of megabytes: a text, a thinking text or a whole tool call in one delta (Gemini sends a call in
      // one chunk; any API may send a long delta). The warm-up streams the same shape at 1 MiB, already past the
      // point where a line leaves wasm memory as it arrives, so what the big one adds must not depend on its size.
      out.cases = {};
      const context = { messages: [{ role: "user", content: "go", timestamp: 1 }] };
      const content = (size) => "line \"é😀\" \\ end\n".repeat(Math.ceil(size / 20)).slice(0, size);
      const shape = (kind, size) =>
        kind === "text" ? { text: content(size) }
        : kind === "thinking" ? { thinking: content(size), text: "done" }
        : { calls: [{ id: "call_1", name: "write", args: { path: "big.js", content: content(size), n: [1, 2.5] } }] };
      // Each event whole but for `partial` (the message so far, compared at the end as `message`); consecutive deltas of
      // one block joined, so that where a library cut a long delta (network chunks) does not count, only what it said.
      const run = async (stream) => {
        const events = [];
        let last;
        for await (const e of stream) {
          const { partial: _partial, message: _message, error: _error, ...rest } = e;
          const previous = events.at(-1);
          if (typeof rest.delta === "string" && previous?.type === rest.type && previous.contentIndex === rest.contentIndex) {
            previous.delta += rest.delta;
          } else {
            events.push(rest);
          }
          last = e;
        }
        return { events: events.map((x) => JSON.stringify(x)), message: last.type === "done" ? last.message : last.error };
      };
      for (const which of args.apis ?? APIS) {
        for (const kind of args.kinds) {
          if (kind === "thinking" && (which === "openai-responses" || which === "google-generative-ai")) continue;
          api = which;
          answer = wire[which].reply({ ...shape(kind, MiB), whole: true });
          await final(lib.streamBuiltin(model(which), context, { apiKey: KEY }));
          await warmReference(which, context, answer);
          const base = baseline();
          answer = wire[which].reply({ ...shape(kind, args.mib * MiB), whole: true });
          const ourRun = await run(lib.streamBuiltin(model(which), context, { apiKey: KEY }));
          const grown = memory() - base;
          const { streamSimple } = await import(`@earendil-works/pi-ai/api/${which}`);
          const theirRun = await run(streamSimple(model(which), context, { apiKey: KEY }));
          const strip = (m) => JSON.stringify({ content: m.content, stopReason: m.stopReason, errorMessage: m.errorMessage });
          out.cases[`${which} ${kind}`] = {
            lineBytes: answer.length,
            sameEvents: ourRun.events.length === theirRun.events.length && ourRun.events.every((e, i) => e === theirRun.events[i]),
          // The first difference, for a failure to explain itself: index, lengths and the two events' starts.
          firstDifference: (() => {
            const i = ourRun.events.findIndex((e, k) => e !== theirRun.events[k]);
            const at = i === -1 && ourRun.events.length !== theirRun.events.length ? ourRun.events.length : i;
            if (at === -1) return undefined;
            const head = (e) => (e === undefined ? "(none)" : `${e.length} chars: ${e.slice(0, 160)}`);
            return `event ${at} of ${ourRun.events.length} (pi-ai: ${theirRun.events.length}); ours ${head(ourRun.events[at])}; pi-ai ${head(theirRun.events[at])}`;
          })(),
            sameMessage: strip(ourRun.message) === strip(theirRun.message),
            stopReason: ourRun.message.stopReason,
            error: ourRun.message.errorMessage,
            grown,
          };
        }
      }
      answer = null;
    } else {
      throw new Error(`unknown scenario ${scenario}`);
    }
}

const out = {};
try {
  await runScenario(out);
} catch (e) {
  out.error = String(e?.stack ?? e);
}
// The scenario's payloads are out of reach now (only `out`'s small figures remain): what JS still holds.
answer = null;
// One turn of the event loop first: a finished run's last callbacks (the executor dropping its futures, and with them
// the JS values Rust held) run in a task after the stream's end was delivered.
await new Promise((r) => setTimeout(r, 0));
out.jsGrown = jsBytes() - jsBase;
server.close();
console.log(JSON.stringify(out));
