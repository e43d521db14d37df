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

// ------------------------------------------------------------------------------------------------------------------
// Issue 13: values JS holds without trouble, through the built-in providers (a real loopback server). Seeded
// classes — lone surrogates, deep nesting, cyclic, BigInt, a throwing toJSON, a throwing getter — are put into the
// prompt, a history message's content or custom field, a tool result's details, a tool call's arguments, a tool
// schema, or the provider's stream (lone-surrogate escapes, deeply nested arguments). Invariants, whatever the
// outcome: the prompt settles, its run ends with agent_end, nothing traps (no RuntimeError anywhere, no
// unhandled rejection, no uncaught exception), and the instance still runs a clean Agent afterwards.
// ------------------------------------------------------------------------------------------------------------------

const { startProviderServer, providerModel, wire, event: sseEvent } = await import("./provider-server.mjs");
const { deep: deepValue, bounded } = await import("./reliability-helpers.mjs");

const CLASSES = {
  "lone surrogate": () => pick(["a\uD800b", "\uDFFF", "x\uD83D", "\uDBFF\uDBFFz"]),
  "deep nesting": () => deepValue(pick([130, 1000, 3000]), pick(["array", "object"])),
  cyclic: () => {
    const o = { a: 1 };
    o.self = o;
    return o;
  },
  BigInt: () => ({ n: 10n }),
  "throwing toJSON": () => ({ toJSON() { throw new Error("fuzz toJSON"); } }),
  "throwing getter": () => Object.defineProperty({}, "x", { enumerable: true, get() { throw new Error("fuzz getter"); } }),
};
const PLACES = ["prompt", "message content", "custom field", "details", "tool arguments", "tool schema", "provider stream"];
const text = (v) => (typeof v === "string" ? v : "plain");
const userMsg = (content, extra = {}) => ({ role: "user", content, timestamp: 1, ...extra });
const callMsg = (args) => ({
  role: "assistant", content: [{ type: "toolCall", id: "call_h", name: "echo", arguments: args }], api: "x", provider: "x",
  model: "m", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "toolUse", timestamp: 1,
});
const resultMsg = (details) => ({ role: "toolResult", toolCallId: "call_h", toolName: "echo", content: [{ type: "text", text: "r" }], details, isError: false, timestamp: 1 });
const echoTool = (parameters = { type: "object", properties: {} }) => ({
  name: "echo", label: "echo", description: "echoes", parameters,
  execute: async () => ({ content: [{ type: "text", text: "echoed" }], details: {} }),
});

/** A streamed reply of `api` carrying the hostile class (only strings and nesting can come over the wire). */
function hostileReply(api, cls) {
  // (Streamed arguments 3,000 deep take seconds today: the fuzz keeps to 600.)
  const args = cls === "deep nesting" ? { v: deepValue(pick([130, 600])) } : { v: "x\uD83D" };
  const escaped = (s) => JSON.stringify(s); // JSON.stringify writes a lone surrogate as its \u escape
  if (cls === "lone surrogate" && rand() < 0.5) {
    // Text with a lone surrogate escape.
    return wire[api].text("start").replace(/"start"|start/, (m) => (m.startsWith('"') ? escaped("a\uD83Db") : escaped("a\uD83Db").slice(1, -1)));
  }
  return wire[api].tools([{ id: "call_s", name: "echo", args }]);
}

function hostileCase(api, place, cls) {
  const v = CLASSES[cls]();
  const s = typeof v === "string";
  switch (place) {
    case "prompt": return { prompt: s ? v : userMsg([{ type: "text", text: "hi" }], { meta: v }) };
    case "message content": return { history: [userMsg(s ? v : [{ type: "text", text: "old", extra: v }])] };
    case "custom field": return { history: [userMsg("old", { meta: v })] };
    case "details": return { history: [userMsg("old"), callMsg({}), resultMsg(v)] };
    case "tool arguments": return { history: [userMsg("old"), callMsg({ v }), resultMsg({})] };
    case "tool schema": return { tools: [echoTool(s ? { type: "object", description: v, properties: { [v]: { type: "string" } } } : { type: "object", properties: { v: cls === "deep nesting" ? v : { type: "string", default: v } } })] };
    case "provider stream": return { reply: hostileReply(api, cls) };
  }
  throw new Error(place);
}

test(`issue 13: hostile values through the built-in providers end every run with agent_end, never trap, and the instance still works (seed ${SEED})`, { skip: IS_REFERENCE && "built-in providers are ours", timeout: 120_000 }, async () => {
  const server = await startProviderServer();
  const unhandled = [];
  const uncaught = [];
  const onUnhandled = (r) => unhandled.push(String(r?.stack ?? r));
  const onUncaught = (e) => uncaught.push(String(e?.stack ?? e));
  process.on("unhandledRejection", onUnhandled);
  process.on("uncaughtException", onUncaught);
  const problems = [];
  const thrown = [];
  const seen = new Map();
  try {
    for (let i = 0; i < 120; i++) {
      const api = APIS[i % APIS.length];
      const place = pick(PLACES);
      const cls = place === "provider stream" ? pick(["lone surrogate", "deep nesting"]) : pick(Object.keys(CLASSES));
      const where = `case ${i} (${api}, ${cls} in ${place}, seed ${SEED})`;
      seen.set(`${cls} in ${place}`, (seen.get(`${cls} in ${place}`) ?? 0) + 1);
      const c = hostileCase(api, place, cls);
      const began = Date.now();
      if (process.env.FUZZ_TRACE) process.stderr.write(`# ${where}\n`);
      const r = server.route();
      r.repeat = true;
      // The hostile reply once (a tool call runs), then a plain answer for every later request.
      if (c.reply) r.reply({ sse: c.reply });
      r.reply({ sse: wire[api].text("ok") });
      const events = [];
      try {
        const agent = new ours.Agent({ initialState: { model: providerModel(api, r.baseUrl), tools: c.tools ?? [echoTool()], messages: c.history ?? [] }, getApiKey: () => "k" });
        agent.subscribe((e) => events.push(e.type));
        await bounded(agent.prompt(c.prompt ?? "go").catch((e) => {
          if (/RuntimeError|unreachable/.test(`${e?.name} ${e?.message}`)) problems.push(`${where}: prompt rejected with ${e?.name}: ${e?.message}`);
        }), 10_000, where);
        await bounded(agent.waitForIdle(), 10_000, `${where} idle`);
        const last = agent.state.messages.at(-1);
        if (events.length > 0 && events.at(-1) !== "agent_end") problems.push(`${where}: last event ${events.at(-1)}`);
        if (/RuntimeError|unreachable/.test(String(last?.errorMessage))) problems.push(`${where}: ${last.errorMessage}`);
        if (process.env.FUZZ_TRACE) process.stderr.write(`#   ${Date.now() - began} ms, ${r.requests.length} requests, ${events.at(-1)}, ${last?.stopReason}: ${String(last?.errorMessage).slice(0, 150)}\n`);
      } catch (e) {
        // A JS error for a value the library cannot take is allowed (counted); a trap, a hang or a bug of this test is not.
        if (/RuntimeError|unreachable|HANG|ReferenceError/.test(`${e?.name} ${e?.message}`)) problems.push(`${where}: ${e?.name}: ${e?.message}`);
        else thrown.push(`${cls} in ${place}: ${e?.name}: ${e?.message}`);
        if (process.env.FUZZ_TRACE) process.stderr.write(`#   threw ${e?.name}: ${e?.message}\n`);
      }
    }
    // The instance still works: a clean Agent on a fresh route gets its answer.
    const r = server.route();
    r.reply({ sse: wire["anthropic-messages"].text("still fine") });
    const agent = new ours.Agent({ initialState: { model: providerModel("anthropic-messages", r.baseUrl) }, getApiKey: () => "k" });
    await bounded(agent.prompt("hi"), 5000, "clean agent");
    assert.equal(agent.state.messages.at(-1).content[0].text, "still fine");
  } finally {
    process.off("unhandledRejection", onUnhandled);
    process.off("uncaughtException", onUncaught);
    await server.close();
  }
  if (process.env.FUZZ_TRACE) process.stderr.write(`# issue 13 fuzz: ${thrown.length} JS errors: ${[...new Set(thrown)].join(" | ")}\n`);
  assert.deepEqual(problems, []);
  assert.deepEqual(unhandled, []);
  assert.deepEqual(uncaught, []);
  assert.ok(seen.size >= 20, `at least 20 class × place combinations generated (got ${seen.size})`);
});

// Issue 13, the reference's outcome for each class × place (every combination, not sampled). Each case runs twice on
// the same server, on pi-agent-core 1.6.0 with pi-ai's anthropic provider and on ours, and the outcomes (thrown or how
// the run ended, requests made, the next prompt) must be equal. What the reference does: a value that is never sent (details,
// custom fields, extra block fields) or that JSON holds (lone surrogates, 3,000-deep nesting) gives a request and the
// scripted answer, and the same Agent's next prompt works too; a cycle, BigInt or throwing toJSON/getter in a history
// tool call's arguments gives an error message (the reference: `Converting circular structure to JSON …`); in a tool
// schema, the JSON error is thrown (the reference throws it from `new Agent`). The first group fails on the
// secrets-wire branch alone (`streamBuiltin: context.messages must be an array` before any request); the request
// projection (only the fields a wire format reads, JS values kept where Rust cannot hold them) fixed them.
const NEVER_SENT = ["custom field", "details", "message content", "prompt"];

/** pi-agent-core 1.6.0's Agent with pi-ai 1.6.0's own provider for the wire format, on the same loopback server. */
async function referenceAgentClass(api) {
  const { Agent } = await import("@earendil-works/pi-agent-core");
  const { streamSimple } = await import(`@earendil-works/pi-ai/api/${api}`);
  return class extends Agent {
    constructor(options) {
      super({ ...options, streamFn: streamSimple });
    }
  };
}
const referenceAgents = Object.fromEntries(await Promise.all(APIS.map(async (api) => [api, await referenceAgentClass(api)])));

/**
 * How a case ends with `AgentClass` on a fresh route answering "ok": thrown (by the constructor or the prompt, with
 * the error's class and first line), or the last message (the answer's text or that an error message ended the run) and the request
 * count, then the same for a second prompt when the first one answered.
 */
async function outcomeOf(server, api, c, AgentClass) {
  const r = server.route();
  r.repeat = true;
  r.reply({ sse: wire[api].text("ok") });
  const ended = (agent) => {
    const last = agent.state.messages.at(-1);
    if (last?.stopReason === "error") return `error message: ${last.errorMessage}`;
    return `answer ${JSON.stringify(last?.content?.[0]?.text)}`;
  };
  let agent;
  try {
    agent = new AgentClass({ initialState: { model: providerModel(api, r.baseUrl), tools: c.tools ?? [echoTool()], messages: c.history ?? [] }, getApiKey: () => "k" });
    await bounded(agent.prompt(c.prompt ?? "go"), 10_000, "prompt");
  } catch (e) {
    if (/HANG/.test(e?.message)) throw e;
    return { ended: `threw ${e?.constructor?.name}: ${String(e?.message).split("\n")[0]}`, requests: r.requests.length };
  }
  const first = { ended: ended(agent), requests: r.requests.length };
  if (first.ended !== 'answer "ok"') return first;
  await bounded(agent.prompt("next"), 10_000, "next prompt");
  return { ...first, next: ended(agent), requestsAfterNext: r.requests.length };
}
const SENT = ["tool arguments", "tool schema"];

test("issue 13: each class × place has the reference's outcome through each built-in provider (pi-agent-core with pi-ai's provider, same server), error texts included", { skip: IS_REFERENCE && "built-in providers are ours (this test runs the reference beside them)", timeout: 240_000 }, async (t) => {
  const server = await startProviderServer();
  try {
    for (const api of APIS) await classesByPlace(t, server, api);
  } finally {
    await server.close();
  }
});

async function classesByPlace(t, server, api) {
    await t.test(`${api} control: a plain custom field, details and schema — request sent, next prompt works`, async () => {
      const r = server.route();
      r.repeat = true;
      r.reply({ sse: wire[api].text("ok") });
      const history = [userMsg("old", { meta: { a: 1 } }), callMsg({ v: 1 }), resultMsg({ d: [1] })];
      const agent = new ours.Agent({ initialState: { model: providerModel(api, r.baseUrl), tools: [echoTool({ type: "object", properties: { v: { type: "number" } } })], messages: history }, getApiKey: () => "k" });
      await bounded(agent.prompt("go"), 10_000, "prompt");
      assert.equal(agent.state.messages.at(-1).content[0].text, "ok");
      await bounded(agent.prompt("next"), 10_000, "next prompt");
      assert.equal(r.requests.length, 2);
    });
    for (const cls of Object.keys(CLASSES)) {
      const representable = cls === "lone surrogate" || cls === "deep nesting";
      for (const place of [...NEVER_SENT, ...SENT]) {
        const works = representable || NEVER_SENT.includes(place);
        const outcome = works ? "request sent, answer kept, next prompt works" : place === "tool arguments" ? "an error message" : "the JSON error is thrown";
        await t.test(`${api}: ${cls} in ${place}: ${outcome}, as the reference`, {}, async () => {
          // One value per case, shared by both sides (a class draws at random).
          const c = hostileCase(api, place, cls);
          const want = await outcomeOf(server, api, c, referenceAgents[api]);
          const got = await outcomeOf(server, api, c, ours.Agent);
          const stated = { ended: 'answer "ok"', requests: 1, next: 'answer "ok"', requestsAfterNext: 2 };
          if (cls === "deep nesting" && want.ended === "error message: Maximum call stack size exceeded") {
            // The reference gave no answer: its SDK overflowed its own stack on the deepest schemas (3,000 levels,
            // OpenAI's formats); ours sends them (as the differentials skip what the reference overflows on).
            assert.deepEqual(got, stated);
            return;
          }
          // The reference's outcome is the expectation, error texts included, but for P-6.1.9: ours names where the
          // value that cannot be sent is (the history's tool call), then gives the reference's text ...
          const named = (o) => ({ ...o, ended: o.ended.replace("error message: ", "error message: context.messages[2].content[0].arguments: ") });
          assert.deepEqual(got, !works && place === "tool arguments" ? named(want) : want);
          // ... and it is the one this file states, so the comparison cannot pass on two equal wrong answers.
          if (!works && place === "tool schema") assert.match(want.ended, /^threw /);
          else if (!works) assert.deepEqual({ ...want, ended: want.ended.split(":")[0] }, { ended: "error message", requests: 0 });
          else assert.deepEqual(want, stated);
        });
      }
    }
}
