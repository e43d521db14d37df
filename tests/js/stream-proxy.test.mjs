// `streamProxy` (issue 14.1) against a loopback proxy server: the request it sends, the proxy events it reads back,
// the partial message it rebuilds, HTTP errors, a cut stream, malformed events and abort; and the export check
// (every export of pi-agent-core 1.6.0 exists here with the same kind). Run also with AGENT_LOOP_IMPL=reference.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import * as reference from "@earendil-works/pi-agent-core";
import { createRequire } from "node:module";
import { IS_REFERENCE, agentLoop, streamProxy } from "./impl.mjs";

const T = { timeout: 10000 };
const model = {
  id: "proxied-model", name: "Proxied", api: "openai-completions", provider: "acme", baseUrl: "", reasoning: false,
  input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100,
};
const usage = (input, output) => ({
  input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const context = { systemPrompt: "be brief", messages: [{ role: "user", content: "hi", timestamp: 1 }] };

/** A proxy server on 127.0.0.1: each request gets the next scripted handler; requests are recorded. */
async function startProxy(handlers) {
  const requests = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, raw });
      const handler = handlers.shift();
      if (handler) handler(res, req);
      else res.writeHead(404).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** Writes proxy events as `data:` lines, each in its own chunk; `last` ends the response. */
function sse(events, { end = true, tailWithoutNewline, gapMs = 0 } = {}) {
  return async (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const e of events) {
      res.write(`data: ${JSON.stringify(e)}\n\n`);
      if (gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    if (tailWithoutNewline) res.write(`data: ${JSON.stringify(tailWithoutNewline)}`);
    if (end) res.end();
  };
}

async function collect(stream) {
  const events = [];
  for await (const e of stream) events.push(e);
  return { events, result: await stream.result() };
}

const kind = (v) =>
  typeof v === "function" ? (/^class[\s{]/.test(Function.prototype.toString.call(v)) ? "class" : "function") : typeof v;

test("issue 14.1: every export of pi-agent-core 1.6.0 exists with the same kind, in every entry", T, async () => {
  const names = Object.keys(reference).sort();
  assert.deepEqual(names, ["Agent", "DEFAULT_AGENT_IDENTITY", "agentLoop", "agentLoopContinue", "runAgentLoop",
    "runAgentLoopContinue", "runToolCall", "setDefaultStreamFn", "streamProxy"]);
  const entries = IS_REFERENCE
    ? { reference }
    : {
        "dist/node/index.mjs": await import("../../pkg/dist/node/index.mjs"),
        "dist/node/index.cjs": createRequire(import.meta.url)("../../pkg/dist/node/index.cjs"),
        "dist/web/slim.js (the API dist/web and dist/deno re-export)": await import("../../pkg/dist/web/slim.js"),
      };
  for (const [entry, ours] of Object.entries(entries)) {
    for (const name of names) {
      assert.ok(name in ours, `${entry}: missing export ${name}`);
      assert.equal(kind(ours[name]), kind(reference[name]), `${entry}: kind of ${name}`);
    }
    assert.equal(kind(ours.Agent), "class");
    assert.equal(kind(ours.streamProxy), "function");
    assert.deepEqual(ours.DEFAULT_AGENT_IDENTITY, reference.DEFAULT_AGENT_IDENTITY);
  }
});

test("streamProxy: the request, then text, thinking and a tool call rebuilt into one partial message", T, async () => {
  const toolCall = { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt", n: 2 } };
  const proxy = await startProxy([sse([
    { type: "start" },
    { type: "thinking_start", contentIndex: 0 },
    { type: "thinking_delta", contentIndex: 0, delta: "let me " },
    { type: "thinking_delta", contentIndex: 0, delta: "think" },
    { type: "thinking_end", contentIndex: 0, contentSignature: "sig-think" },
    { type: "text_start", contentIndex: 1 },
    { type: "text_delta", contentIndex: 1, delta: "Hel" },
    { type: "text_delta", contentIndex: 1, delta: "lo" },
    { type: "text_end", contentIndex: 1, contentSignature: "sig-text" },
    { type: "toolcall_start", contentIndex: 2, id: "call_1", toolName: "read" },
    { type: "toolcall_delta", contentIndex: 2, delta: '{"path": "a.t' },
    { type: "toolcall_delta", contentIndex: 2, delta: 'xt", "n": 2}' },
    { type: "toolcall_end", contentIndex: 2, toolCall },
    { type: "done", reason: "toolUse", usage: usage(5, 7) },
  ])]);
  try {
    const controller = new AbortController();
    const stream = streamProxy(model, context, {
      proxyUrl: proxy.url, authToken: "tok-1", signal: controller.signal, temperature: 0.5, maxTokens: 64,
      reasoning: "low", sessionId: "s-1", headers: { "x-a": "1" }, apiKey: "never-sent", onPayload: () => {},
    });
    const { events, result } = await collect(stream);
    assert.deepEqual(events.map((e) => e.type), [
      "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end", "text_start", "text_delta",
      "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end", "done",
    ]);
    // One partial object throughout, which is the final message.
    const partial = events[0].partial;
    assert.ok(events.slice(0, -1).every((e) => e.partial === partial));
    assert.equal(events.at(-1).message, partial);
    assert.equal(result, partial);
    assert.deepEqual(events[6].delta, "Hel");
    assert.equal(events[8].content, "Hello");
    assert.equal(events[4].content, "let me think");
    assert.deepEqual(events[10].partial.content[2].arguments, events[11].partial.content[2].arguments);
    assert.equal(events[12].toolCall, partial.content[2]);
    const { timestamp, durationMs, ...rest } = result;
    assert.equal(typeof timestamp, "number");
    assert.equal(typeof durationMs, "number"); // set by the stream class at done, as pi-ai's
    assert.deepEqual(rest, {
      role: "assistant", stopReason: "toolUse", api: "openai-completions", provider: "acme", model: "proxied-model",
      usage: usage(5, 7),
      content: [
        { type: "thinking", thinking: "let me think", thinkingSignature: "sig-think" },
        { type: "text", text: "Hello", textSignature: "sig-text" },
        toolCall,
      ],
    });
    assert.equal(proxy.requests.length, 1);
    const [req] = proxy.requests;
    assert.equal(req.method, "POST");
    assert.equal(req.url, "/api/stream");
    assert.equal(req.headers.authorization, "Bearer tok-1");
    assert.equal(req.headers["content-type"], "application/json");
    // The exact bytes: model, context, then the forwarded options in their order (no key, no signal, no hooks).
    assert.equal(req.raw, JSON.stringify({
      model, context,
      options: { temperature: 0.5, maxTokens: 64, reasoning: "low", sessionId: "s-1", headers: { "x-a": "1" } },
    }));
  } finally {
    await proxy.close();
  }
});

test("streamProxy: live tool arguments while the call streams", T, async () => {
  const proxy = await startProxy([sse([
    { type: "start" },
    { type: "toolcall_start", contentIndex: 0, id: "c", toolName: "write" },
    { type: "toolcall_delta", contentIndex: 0, delta: '{"path": "a.t' },
    { type: "toolcall_delta", contentIndex: 0, delta: 'xt", "body": "x' },
    { type: "toolcall_delta", contentIndex: 0, delta: 'yz"}' },
    { type: "toolcall_end", contentIndex: 0, toolCall: { type: "toolCall", id: "c", name: "write", arguments: { path: "a.txt", body: "xyz" } } },
    { type: "done", reason: "toolUse", usage: usage(1, 1) },
  ], { gapMs: 40 })]);
  try {
    const seen = [];
    for await (const e of streamProxy(model, context, { proxyUrl: proxy.url, authToken: "t" })) {
      if (e.type === "toolcall_delta") seen.push(structuredClone(e.partial.content[0].arguments));
    }
    assert.deepEqual(seen, [{ path: "a.t" }, { path: "a.txt", body: "x" }, { path: "a.txt", body: "xyz" }]);
  } finally {
    await proxy.close();
  }
});

for (const [name, handler, message] of [
  ["a JSON error body", (res) => res.writeHead(500, { "content-type": "application/json" }).end('{"error":"quota exceeded"}'), "Proxy error: quota exceeded"],
  ["a non-JSON error body", (res) => res.writeHead(502).end("<html>bad gateway</html>"), "Proxy error: 502 Bad Gateway"],
  ["a JSON body without error", (res) => res.writeHead(401, { "content-type": "application/json" }).end("{}"), "Proxy error: 401 Unauthorized"],
  ["a cut stream (no done)", sse([{ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "par" }]), "Connection closed by proxy server before the response completed"],
  ["a delta for a block of another type", sse([{ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "thinking_delta", contentIndex: 0, delta: "x" }]), "Received thinking_delta for non-thinking content"],
  ["a toolcall_delta after its end", sse([{ type: "start" }, { type: "toolcall_start", contentIndex: 0, id: "c", toolName: "t" }, { type: "toolcall_end", contentIndex: 0, toolCall: { arguments: {} } }, { type: "toolcall_delta", contentIndex: 0, delta: "{" }]), "Received toolcall_delta for non-toolCall content"],
]) {
  test(`streamProxy: ${name} ends the stream with an error event, "${message}"`, T, async () => {
    const proxy = await startProxy([handler]);
    try {
      const { events, result } = await collect(streamProxy(model, context, { proxyUrl: proxy.url, authToken: "t" }));
      const last = events.at(-1);
      assert.equal(last.type, "error");
      assert.equal(last.reason, "error");
      assert.equal(last.error.stopReason, "error");
      assert.equal(last.error.errorMessage, message);
      assert.equal(result, last.error);
    } finally {
      await proxy.close();
    }
  });
}

test("streamProxy: a malformed data line ends the stream with the parse error; other lines are ignored", T, async () => {
  const proxy = await startProxy([(res) => {
    res.writeHead(200);
    res.write(": comment\nevent: x\ndata: \n");
    res.write(`data: ${JSON.stringify({ type: "start" })}\n`);
    res.end("data: {not json}\n");
  }]);
  try {
    const { events } = await collect(streamProxy(model, context, { proxyUrl: proxy.url, authToken: "t" }));
    assert.deepEqual(events.map((e) => e.type), ["start", "error"]);
    let expected;
    try { JSON.parse("{not json}"); } catch (e) { expected = e.message; }
    assert.equal(events[1].error.errorMessage, expected);
  } finally {
    await proxy.close();
  }
});

test("streamProxy: the last event without a newline still counts; events after done are dropped", T, async () => {
  const proxy = await startProxy([sse([{ type: "start" }], {
    tailWithoutNewline: { type: "done", reason: "stop", usage: usage(2, 3) },
  })]);
  try {
    const { events, result } = await collect(streamProxy(model, context, { proxyUrl: proxy.url, authToken: "t" }));
    assert.deepEqual(events.map((e) => e.type), ["start", "done"]);
    assert.equal(result.stopReason, "stop");
    assert.deepEqual(result.usage, usage(2, 3));
  } finally {
    await proxy.close();
  }
});

test("streamProxy: abort mid-stream ends with reason aborted", T, async () => {
  const proxy = await startProxy([sse([{ type: "start" }, { type: "text_start", contentIndex: 0 }], { end: false })]);
  try {
    const controller = new AbortController();
    const stream = streamProxy(model, context, { proxyUrl: proxy.url, authToken: "t", signal: controller.signal });
    const events = [];
    for await (const e of stream) {
      events.push(e);
      if (e.type === "text_start") controller.abort();
    }
    assert.deepEqual(events.map((e) => e.type), ["start", "text_start", "error"]);
    assert.equal(events[2].reason, "aborted");
    assert.equal(events[2].error.stopReason, "aborted");
    assert.equal(events[2].error.errorMessage, "Request aborted by user");
  } finally {
    await proxy.close();
  }
});

test("streamProxy as an agentLoop stream function: a tool call, its result, the answer", T, async () => {
  const call = { type: "toolCall", id: "c1", name: "echo", arguments: { text: "ping" } };
  const proxy = await startProxy([
    sse([{ type: "start" }, { type: "toolcall_start", contentIndex: 0, id: "c1", toolName: "echo" },
      { type: "toolcall_delta", contentIndex: 0, delta: '{"text":"ping"}' },
      { type: "toolcall_end", contentIndex: 0, toolCall: call }, { type: "done", reason: "toolUse", usage: usage(1, 1) }]),
    sse([{ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "pong" },
      { type: "text_end", contentIndex: 0 }, { type: "done", reason: "stop", usage: usage(1, 1) }]),
  ]);
  try {
    const echo = {
      name: "echo", label: "Echo", description: "echo",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      execute: async (_id, args) => ({ content: [{ type: "text", text: args.text }], details: {} }),
    };
    const stream = agentLoop([{ role: "user", content: "go", timestamp: 1 }], { systemPrompt: "", messages: [], tools: [echo] },
      { model, convertToLlm: (m) => m }, undefined,
      (m, c, o) => streamProxy(m, c, { ...o, proxyUrl: proxy.url, authToken: "t" }));
    const messages = await stream.result();
    assert.deepEqual(messages.map((m) => m.role).slice(-4), ["user", "assistant", "toolResult", "assistant"]);
    assert.equal(messages.at(-2).content[0].text, "ping");
    assert.equal(messages.at(-1).content[0].text, "pong");
    assert.equal(proxy.requests.length, 2);
    const second = JSON.parse(proxy.requests[1].raw);
    assert.deepEqual(second.context.messages.map((m) => m.role).slice(-3), ["user", "assistant", "toolResult"]);
  } finally {
    await proxy.close();
  }
});

test("streamProxy: misuse is a TypeError naming the argument", { ...T, skip: IS_REFERENCE && "E-8.1 is ours" }, () => {
  assert.throws(() => streamProxy(undefined, context, { proxyUrl: "x" }), { name: "TypeError", message: "streamProxy: model must be an object" });
  assert.throws(() => streamProxy(model, context, undefined), { name: "TypeError", message: "streamProxy: options must be an object" });
});

test("streamProxy: hostile option and model getters end the stream with an error event, never a rejection", { ...T, skip: IS_REFERENCE && "the reference leaves its stream open" }, async () => {
  const rejections = [];
  const onRejection = (e) => rejections.push(e);
  process.on("unhandledRejection", onRejection);
  try {
    const hostile = (what) => new Proxy({}, { get: () => { throw new Error(`${what} exploded`); } });
    for (const [m, o, message] of [
      [model, hostile("options"), "options exploded"],
      [hostile("model"), { proxyUrl: "http://127.0.0.1:9", authToken: "t" }, "model exploded"],
    ]) {
      const { events, result } = await collect(streamProxy(m, context, o));
      assert.deepEqual(events.map((e) => e.type), ["error"]);
      assert.equal(result.stopReason, "error");
      assert.equal(result.errorMessage, message);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(rejections, []);
  } finally {
    process.off("unhandledRejection", onRejection);
  }
});
