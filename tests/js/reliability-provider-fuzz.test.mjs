// E-8.4 / P-6.1.2 for the built-in providers: malformed byte streams (random bytes, truncated and
// corrupted SSE, hostile JSON) go through streamBuiltin for each wire format; every stream must end
// with exactly one terminal event (done or error), nothing may throw, and afterwards the same
// instance still runs a normal loop. Seeded (printed) so a failure can be replayed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { IS_REFERENCE, agentLoop, createAssistantMessageEventStream } from "./impl.mjs";
import * as ours from "../../pkg/dist/node/index.mjs";

const { streamBuiltin } = ours;

const SEED = Number(process.env.PROVIDER_FUZZ_SEED ?? Date.now() % 1e9);
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}
const rand = rng(SEED);
const pick = (list) => list[Math.floor(rand() * list.length)];

const APIS = ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"];
const VALID = {
  "openai-completions": ['{"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}', '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"t","arguments":"{\\"x\\":"}}]}}]}', '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}', "[DONE]"],
  "openai-responses": ['{"type":"response.created","response":{"id":"r"}}', '{"type":"response.output_text.delta","delta":"hi"}', '{"type":"response.completed","response":{"status":"completed"}}'],
  "anthropic-messages": ['{"type":"message_start","message":{"id":"m","usage":{}}}', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}', '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}', '{"type":"message_stop"}'],
  "google-generative-ai": ['{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}', '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"t","args":{"x":1}}}]},"finishReason":"STOP"}]}'],
};
const HOSTILE = ['{"choices":null}', '{"type":null}', "[1,2,3]", '"str"', "null", "{", '{"a":1e999}', '{"\\ud800":1}', '{"candidates":[{"content":{"parts":[{"functionCall":{"name":null}}]}}]}', '{"type":"content_block_delta","index":99,"delta":{"type":"input_json_delta","partial_json":"]]]"}}', '{"type":"response.output_item.done","item":{"type":"function_call"}}', "x".repeat(5000)];

function randomBytes(n) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

function body(api) {
  const kind = Math.floor(rand() * 4);
  if (kind === 0) return randomBytes(1 + Math.floor(rand() * 600));
  const lines = [];
  const n = 1 + Math.floor(rand() * 12);
  for (let i = 0; i < n; i++) {
    const data = rand() < 0.6 ? pick(VALID[api]) : pick(HOSTILE);
    const event = api === "openai-responses" || api === "anthropic-messages" ? `event: ${pick(["x", "message_delta", "error", ""])}\n` : "";
    lines.push(`${rand() < 0.1 ? ": comment\n" : ""}${event}data: ${data}${pick(["\n\n", "\r\n\r\n", "\r\r", "\n"])}`);
  }
  let bytes = new TextEncoder().encode(lines.join(""));
  if (kind === 2) bytes = bytes.slice(0, Math.floor(rand() * bytes.length)); // truncated
  if (kind === 3) for (let i = 0; i < 5; i++) bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256); // corrupted
  return bytes;
}

function fakeFetch(bytes) {
  return async () => {
    let offset = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        const size = 1 + Math.floor(rand() * 64);
        controller.enqueue(bytes.slice(offset, offset + size));
        offset += size;
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

const model = (api) => ({ id: "m", name: "m", api, provider: "fuzz", baseUrl: "http://127.0.0.1:9/v1", input: ["text"], reasoning: false, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 100 });
const context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };

test(`E-8.4 / P-6.1.2 malformed provider byte streams end with one terminal event, never a throw (seed ${SEED})`, { skip: IS_REFERENCE && "built-in providers are ours", timeout: 60_000 }, async () => {
  const unhandled = [];
  const onUnhandled = (r) => unhandled.push(String(r));
  process.on("unhandledRejection", onUnhandled);
  try {
    for (let i = 0; i < 400; i++) {
      const api = APIS[i % APIS.length];
      const stream = streamBuiltin(model(api), context, { apiKey: "k", fetch: fakeFetch(body(api)), maxRetries: 0 });
      const types = [];
      for await (const event of stream) types.push(event.type);
      const terminal = types.filter((t) => t === "done" || t === "error");
      assert.equal(terminal.length, 1, `case ${i} (${api}): one terminal event, got ${types.join(",")}`);
      assert.ok(types.at(-1) === "done" || types.at(-1) === "error", `case ${i}: terminal event last`);
      const message = await stream.result();
      assert.equal(typeof message.stopReason, "string");
    }
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  assert.deepEqual(unhandled, []);
  // The same instance still runs a normal loop.
  const streamFn = () => {
    const s = createAssistantMessageEventStream();
    const m = { role: "assistant", content: [{ type: "text", text: "ok" }], api: "x", provider: "x", model: "m", usage: {}, stopReason: "stop", timestamp: 1 };
    queueMicrotask(() => { s.push({ type: "start", partial: m }); s.push({ type: "done", reason: "stop", message: m }); });
    return s;
  };
  const run = agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, { model: model("x"), convertToLlm: (m) => m }, undefined, streamFn);
  const labels = [];
  for await (const e of run) labels.push(e.type);
  assert.deepEqual(labels, ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
});
