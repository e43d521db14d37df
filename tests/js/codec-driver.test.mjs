// pkg-template/providers/driver.js, the HTTP driver of the built-in providers, over real loopback HTTP
// (provider-server.mjs: node:http on 127.0.0.1): an api no wire format serves (P-6.1.1),
// api keys and their checks (P-6.2.3), the request (headers merge, onPayload), HTTP errors (P-6.2.5), retries,
// Retry-After, timeouts (P-6.2.6), abort (P-6.1.5), the body read chunk by chunk (P-6.1.8, P-6.3), the hooks (P-6.2.4),
// secrets kept out of errors (issue 13) and "never throws" (P-6.1.1, P-6.1.2). The expected texts are those the suites
// of the built package (providers-http, providers-stream, secrets-wire) hold it to.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { AssistantMessageEventStream } from "../../pkg-template/streams.js";
import { streamBuiltin as driver } from "../../pkg-template/providers/driver.js";
import { APIS, data, drain, event, providerModel, startProviderServer, wire } from "./provider-server.mjs";

const KEY_VARS = [
  "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY",
  "XAI_API_KEY", "DEEPSEEK_API_KEY", "MISTRAL_API_KEY", "CEREBRAS_API_KEY",
];
for (const v of KEY_VARS) delete process.env[v];

const server = await startProviderServer();
after(() => server.close());

/** `streamBuiltin` as api.js calls it: a fresh AssistantMessageEventStream the driver fills. */
function streamBuiltin(model, context, options) {
  const stream = new AssistantMessageEventStream();
  driver(model, context, options, stream);
  return stream;
}

const T = { timeout: 5000 };
const KEY = "sk-driver";
const API = "openai-completions";
const ctx = (...messages) => ({ messages: messages.length ? messages : [{ role: "user", content: "hi", timestamp: 1 }] });
const fail = (status, message, headers = {}) => ({ status, headers, body: { error: { message } } });
const RA0 = { "retry-after": "0" };
const closedWithin = (request, ms = 1000) => Promise.race([request.closed, new Promise((r) => setTimeout(() => r("open"), ms))]);
const squash = (types) => types.filter((t, i) => !(t.endsWith("_delta") && types[i - 1] === t)).join(" ");
const DRIVER_DIR = fileURLToPath(new URL("../../pkg-template/providers/", import.meta.url));

async function withEnv(vars, fn) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (entries) => {
    for (const [k, v] of Object.entries(entries)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(saved);
  }
}

/**
 * Runs one request against a fresh route answering `steps`. `waits`: the milliseconds of every timer the driver set
 * (its retry waits and timeouts, found by the caller's file in the stack); `cancelled`: those cleared before firing.
 */
async function run(steps, options = {}, { api = API, model = {}, context = ctx(), during } = {}) {
  const r = server.route();
  r.reply(...steps);
  const [realSetTimeout, realClearTimeout] = [globalThis.setTimeout, globalThis.clearTimeout];
  const [waits, cancelled, pending] = [[], [], new Map()];
  globalThis.setTimeout = function (fn, ms, ...rest) {
    if (!new Error().stack.includes(DRIVER_DIR)) return realSetTimeout.call(this, fn, ms, ...rest);
    waits.push(ms);
    const handle = realSetTimeout.call(this, (...args) => (pending.delete(handle), fn(...args)), ms, ...rest);
    pending.set(handle, ms);
    return handle;
  };
  globalThis.clearTimeout = function (handle) {
    if (pending.has(handle)) cancelled.push(pending.get(handle)), pending.delete(handle);
    return realClearTimeout.call(this, handle);
  };
  try {
    const s = streamBuiltin(providerModel(api, r.baseUrl, model), context, { apiKey: KEY, ...options });
    if (during) during(r);
    const out = await drain(s);
    return { ...out, route: r, requests: r.requests, waits, cancelled };
  } finally {
    [globalThis.setTimeout, globalThis.clearTimeout] = [realSetTimeout, realClearTimeout];
  }
}

/** A fetch answering `response` (a function of the call, or a value) and recording its calls. */
function fakeFetch(response) {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init });
    return typeof response === "function" ? response(url, init) : response;
  };
  return { calls, fetch };
}
const model = (api = API, baseUrl = "http://127.0.0.1:9", extra = {}) => providerModel(api, baseUrl, extra);
/** A 200 response whose body reader hands out `chunks` (any values), then ends. */
const chunked = (chunks, extra = {}) => {
  let i = 0;
  const reader = { read: async () => (i < chunks.length ? { done: false, value: chunks[i++] } : { done: true }), cancel() { reader.cancelled = true; }, ...extra };
  return { reader, response: { status: 200, headers: new Headers(), body: { getReader: () => reader } } };
};
const utf8 = (s) => new TextEncoder().encode(s);

// ------------------------------------------------------------------------------------------------------------------
// P-6.1.1, P-6.1.3: the unavailable event and the message at start
// ------------------------------------------------------------------------------------------------------------------

test("P-6.1.1 unavailable_event: an api no wire format serves → one error event, pushed at once, naming it", T, async () => {
  const hostile = new Proxy({}, { get() { throw new Error("trap"); } });
  const cases = [
    [{ api: "bedrock-converse-stream", provider: "x", id: "m" }, "bedrock-converse-stream"],
    [null, "undefined"], [undefined, "undefined"], [42, "undefined"], [{ provider: "x" }, "undefined"],
    [{ api: 5 }, "5"], [{ api: {} }, "[object Object]"], [{ api: "toString" }, "toString"], [hostile, "undefined"],
  ];
  for (const [m, name] of cases) {
    const events = [];
    assert.doesNotThrow(() => driver(m, ctx(), {}, { push: (e) => events.push(e) }));
    assert.equal(events.length, 1, "pushed synchronously");
    const [e] = events;
    assert.equal(e.type, "error");
    assert.equal(e.reason, "error");
    const { timestamp, ...rest } = e.error;
    const field = (k) => (m !== null && typeof m === "object" && m !== hostile ? m[k] : undefined);
    assert.deepEqual(rest, {
      role: "assistant", content: [], api: field("api"), provider: field("provider"), model: field("id"),
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "error",
      errorMessage: `No built-in provider for api "${name}". Pass streamFn or call setDefaultStreamFn().`,
    });
    assert.equal(typeof timestamp, "number");
  }
});

test("P-6.1.3 the message at `start`: empty content, zero usage, stopReason pending, no errorMessage key; one object", T, async () => {
  let atStart;
  const r = server.route();
  r.reply({ sse: wire[API].text("yo") });
  const before = Date.now();
  const x = await drain(streamBuiltin(model(API, r.baseUrl), ctx(), { apiKey: KEY }), {
    onEvent: (e) => {
      if (e.type === "start") atStart = structuredClone(e.partial);
    },
  });
  const { timestamp, ...rest } = atStart;
  assert.deepEqual(rest, {
    role: "assistant", content: [], api: API, provider: "openai", model: "gpt-test",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "pending",
  });
  assert.ok(timestamp >= before && timestamp <= Date.now());
  assert.equal(x.result.timestamp, timestamp);
  for (const e of x.events) assert.equal(e.type === "done" ? e.message : e.partial, x.result);
});

test("stream_builtin: nothing but the unavailable event happens synchronously; the request starts in a microtask", T, async () => {
  const events = [];
  const { calls, fetch } = fakeFetch(new Response("{}", { status: 400 }));
  driver(model(), ctx(), { fetch, maxRetries: 0 }, { push: (e) => events.push(e) });
  assert.equal(events.length, 0);
  assert.equal(calls.length, 0);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(calls.length, 1);
  assert.deepEqual(events.map((e) => e.type), ["error"]);
  assert.equal(events[0].error.errorMessage, "HTTP 400: {}");
});

// ------------------------------------------------------------------------------------------------------------------
// The context and its projection
// ------------------------------------------------------------------------------------------------------------------

test("P-6.1.2 a context without a messages array → `streamBuiltin: context.messages must be an array`, no request", T, async () => {
  const hostile = new Proxy({}, { get() { throw new Error("trap"); } });
  for (const context of [null, undefined, 5, "context", () => {}, { messages: 3 }, { messages: null }, { messages: { length: 0 } }, hostile]) {
    const { calls, fetch } = fakeFetch(new Response("", { status: 200 }));
    const x = await drain(streamBuiltin(model(), context, { fetch, maxRetries: 0 }));
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.result.errorMessage, "streamBuiltin: context.messages must be an array");
    assert.equal(calls.length, 0);
  }
});

test("projection: a value that cannot be sent is named by its path (projectMessages' error), no request", T, async () => {
  const cyclic = {};
  cyclic.self = cyclic;
  const call = (args) => ({ role: "assistant", content: [{ type: "toolCall", id: "c1", name: "f", arguments: args }], timestamp: 2 });
  for (const [args, message] of [
    [{ n: 1n }, "context.messages[1].content[0].arguments: Do not know how to serialize a BigInt"],
    [cyclic, /^context\.messages\[1\]\.content\[0\]\.arguments: Converting circular structure to JSON/],
  ]) {
    const { calls, fetch } = fakeFetch(new Response("", { status: 200 }));
    const x = await drain(streamBuiltin(model(), ctx({ role: "user", content: "hi", timestamp: 1 }, call(args)), { fetch, apiKey: KEY }));
    assert.deepEqual(x.types, ["error"]);
    if (typeof message === "string") assert.equal(x.result.errorMessage, message);
    else assert.match(x.result.errorMessage, message);
    assert.equal(calls.length, 0);
  }
});

test("projection: strings reach the body whole — long texts, lone surrogates, the marker characters, forwarded arguments", T, async () => {
  const long = "ä".repeat(5000) + "\uD800" + "\uFDD0s0.1\uFDD1";
  const args = { path: "x".repeat(3000), lone: "\uDC00", n: [1, 2.5, null] };
  const messages = [
    { role: "user", content: long, timestamp: 1 },
    { role: "assistant", content: [{ type: "text", text: "\uFDD0" }, { type: "toolCall", id: "c1", name: "f", arguments: args }], timestamp: 2, stopReason: "toolUse" },
    { role: "toolResult", toolCallId: "c1", toolName: "f", content: [{ type: "text", text: "done \uD83D" }], isError: false, timestamp: 3 },
  ];
  let seen;
  const { fetch } = fakeFetch((url, init) => {
    seen = init.body;
    return new Response("{}", { status: 400 });
  });
  await drain(streamBuiltin(model(), { messages }, { fetch, apiKey: KEY, maxRetries: 0 }));
  const body = JSON.parse(seen);
  assert.equal(body.messages[0].content, long);
  const assistant = body.messages[1];
  assert.equal(assistant.content, "\uFDD0");
  assert.deepEqual(JSON.parse(assistant.tool_calls[0].function.arguments), args);
  assert.equal(body.messages[2].content, "done \uD83D");
  assert.ok(seen.includes("\\ud800") && seen.includes("\\udc00"), "lone surrogates written as JSON.stringify writes them");
});

test("projection: a forwarded arguments object reaches onPayload as the caller's own value (restored, not copied)", T, async () => {
  const args = { city: "Paris", when: { day: 1 } };
  const messages = [
    { role: "user", content: "go", timestamp: 1 },
    { role: "assistant", content: [{ type: "toolCall", id: "toolu_1", name: "weather", arguments: args }], timestamp: 2, stopReason: "toolUse" },
    { role: "toolResult", toolCallId: "toolu_1", toolName: "weather", content: [{ type: "text", text: "sunny" }], isError: false, timestamp: 3 },
  ];
  let input;
  const { fetch } = fakeFetch(new Response("{}", { status: 400 }));
  await drain(streamBuiltin(model("anthropic-messages"), { messages }, { apiKey: KEY, fetch, maxRetries: 0, onPayload: (p) => void (input = p.messages[1].content[0].input) }));
  assert.equal(input, args);
});

test("projection: a tool schema holding a marker character goes whole (projectMessages' second way)", T, async () => {
  const parameters = { type: "object", properties: { a: { type: "string", description: "odd \uFDD0 text \uD800" } }, required: ["a"] };
  const messages = [
    { role: "system", content: "Be brief.", toolsAdded: [{ name: "f", description: "F", parameters }], timestamp: 0 },
    { role: "user", content: "go", timestamp: 1 },
  ];
  let sent;
  const { fetch } = fakeFetch((url, init) => ((sent = JSON.parse(init.body)), new Response("{}", { status: 400 })));
  await drain(streamBuiltin(model(), { messages }, { apiKey: KEY, fetch, maxRetries: 0 }));
  assert.deepEqual(sent.tools[0].function.parameters, parameters);
  assert.equal(sent.messages[0].content, "Be brief.");
});

// ------------------------------------------------------------------------------------------------------------------
// API keys (P-6.2.3, issue 13)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.2.3 key lookup: options.apiKey, else options.env[VAR], else the environment; empty strings skipped", T, async () => {
  const sent = async (options, env = {}) => {
    const r = server.route();
    r.reply({ sse: wire["anthropic-messages"].text("ok") });
    const x = await withEnv(env, () => drain(streamBuiltin(model("anthropic-messages", r.baseUrl), ctx(), options)));
    return [x.result.errorMessage ?? x.result.stopReason, r.requests[0]?.headers["x-api-key"]];
  };
  assert.deepEqual(await sent({ apiKey: "sk-option" }, { ANTHROPIC_API_KEY: "sk-env" }), ["stop", "sk-option"]);
  assert.deepEqual(await sent({ apiKey: "", env: { ANTHROPIC_API_KEY: "sk-options-env" } }, { ANTHROPIC_API_KEY: "sk-env" }), ["stop", "sk-options-env"]);
  assert.deepEqual(await sent({ apiKey: 5, env: { ANTHROPIC_API_KEY: "" } }, { ANTHROPIC_API_KEY: "sk-env" }), ["stop", "sk-env"]);
  assert.deepEqual(await sent({ env: "not an object" }, { ANTHROPIC_API_KEY: "sk-env" }), ["stop", "sk-env"]);
  assert.deepEqual(await sent({}), ["No API key for provider: anthropic", undefined]);
});

test("P-6.2.3 google: GEMINI_API_KEY then GOOGLE_API_KEY, options.env before the environment per variable", T, async () => {
  const key = async (options, env) => {
    const { calls, fetch } = fakeFetch(new Response("{}", { status: 400 }));
    await withEnv(env, () => drain(streamBuiltin(model("google-generative-ai"), ctx(), { fetch, maxRetries: 0, ...options })));
    return calls[0]?.init.headers["x-goog-api-key"];
  };
  assert.equal(await key({ env: { GOOGLE_API_KEY: "sk-google-opt" } }, { GEMINI_API_KEY: "sk-gemini-env" }), "sk-gemini-env");
  assert.equal(await key({ env: { GEMINI_API_KEY: "sk-gemini-opt" } }, { GOOGLE_API_KEY: "sk-google-env" }), "sk-gemini-opt");
  assert.equal(await key({}, { GOOGLE_API_KEY: "sk-google-env" }), "sk-google-env");
});

test("issue 13: a key with CR, LF or NUL is refused before any request, naming its source, never the key", T, async () => {
  const refused = (source) => `Invalid API key in ${source}: it contains a line break or NUL character (the request was not sent)`;
  for (const bad of ["\n", "\r", "\0", "\r\n"]) {
    const key = `sk-secret${bad}injected: header`;
    for (const [options, source] of [[{ apiKey: key }, "options.apiKey"], [{ env: { OPENAI_API_KEY: key } }, "options.env.OPENAI_API_KEY"]]) {
      const { calls, fetch } = fakeFetch(new Response("", { status: 200 }));
      const x = await drain(streamBuiltin(model(), ctx(), { fetch, ...options }));
      assert.deepEqual(x.types, ["error"]);
      assert.equal(x.result.errorMessage, refused(source));
      assert.equal(calls.length, 0);
      assert.ok(!JSON.stringify(x.events).includes("sk-secret"));
    }
    if (bad === "\0") continue; // process.env cuts a value at NUL
    const x = await withEnv({ OPENAI_API_KEY: key }, () => drain(streamBuiltin(model(), ctx(), {})));
    assert.equal(x.result.errorMessage, refused("the environment variable OPENAI_API_KEY"));
  }
});

test("issue 13: a key echoed in an error body or a stream error is redacted (6+ bytes; longest secret first)", T, async () => {
  const key = "sk-proj-0123456789abcdef";
  let x = await run([{ status: 401, body: { error: { message: `Incorrect API key provided: ${key}. See your dashboard.` } } }], { apiKey: key });
  assert.equal(x.result.errorMessage, "HTTP 401: Incorrect API key provided: [redacted]. See your dashboard.");
  x = await run([{ sse: data({ error: { message: `bad key ${key}` } }) }], { apiKey: key });
  assert.deepEqual(x.types, ["start", "error"]);
  assert.ok(!x.result.errorMessage.includes(key) && x.result.errorMessage.includes("[redacted]"), x.result.errorMessage);
  // A header value and its token; the key is a prefix of the token: the longer one goes first, whole.
  x = await run([fail(400, `got sk-proj-0 and Bearer sk-proj-0-longer and ab12`)], { apiKey: "sk-proj-0", headers: { "X-Api-Key": "ab12", authorization: "Bearer sk-proj-0-longer" } });
  assert.equal(x.result.errorMessage, "HTTP 400: got [redacted] and [redacted] and ab12");
  // Five ASCII bytes are not scrubbed; five characters of two bytes each are.
  x = await run([fail(400, "keys abcde and ééééé")], { apiKey: "abcde", headers: { cookie: "ééééé" } });
  assert.equal(x.result.errorMessage, "HTTP 400: keys abcde and [redacted]");
});

test("issue 13: credential headers of the caller are redacted from fetch's TypeError, which is not retried", T, async () => {
  const calls = [];
  const x = await drain(streamBuiltin(model(), ctx(), {
    fetch: (url, init) => (calls.push(url), fetch(url, init)),
    maxRetries: 2,
    headers: { Authorization: "Bearer sk-header-secret\nX-Evil: 1" },
  }));
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, 'Headers.append: "[redacted]" is an invalid header value.');
  assert.equal(calls.length, 1);
});

// ------------------------------------------------------------------------------------------------------------------
// The request: headers, onPayload, fetch
// ------------------------------------------------------------------------------------------------------------------

test("P-6.2.1 headers: provider defaults < model.headers < options.headers, case-insensitive, null/undefined remove", T, async () => {
  const { calls, fetch } = fakeFetch(new Response("{}", { status: 400 }));
  await drain(streamBuiltin(
    model(API, "http://127.0.0.1:9", { headers: { AUTHORIZATION: "Bearer from-model", "X-Model": "m", "X-Both": "model", "X-Gone": "g", "X-Num": 5 } }),
    ctx(),
    { fetch, apiKey: KEY, maxRetries: 0, headers: { "x-both": "options", "x-gone": null, "Content-Type": undefined, "X-Extra": "e" } },
  ));
  assert.equal(calls.length, 1);
  const { url, init } = calls[0];
  assert.equal(url, "http://127.0.0.1:9/chat/completions");
  assert.equal(init.method, "POST");
  assert.deepEqual(init.headers, { AUTHORIZATION: "Bearer from-model", "X-Model": "m", "X-Num": 5, "x-both": "options", "X-Extra": "e" });
  assert.equal(typeof init.body, "string");
  assert.equal(JSON.parse(init.body).model, "gpt-test");
  assert.equal(init.signal, undefined, "no timeout: the caller's signal (none)");
});

test("P-6.2.1 headers that are not an object are ignored; a hostile headers object sends the defaults", T, async () => {
  const hostile = new Proxy({ a: 1 }, { ownKeys() { throw new Error("trap"); } });
  for (const headers of ["not an object", 5, hostile]) {
    const { calls, fetch } = fakeFetch(new Response("{}", { status: 400 }));
    await drain(streamBuiltin(model(API, "http://127.0.0.1:9", { headers: "not an object" }), ctx(), { fetch, apiKey: KEY, maxRetries: 0, headers }));
    assert.equal(calls[0].init.headers.Authorization ?? calls[0].init.headers.authorization, `Bearer ${KEY}`);
  }
});

test("P-6.2.4 onPayload: gets the body and the model; a value replaces it, undefined keeps it; awaited", T, async () => {
  const seen = [];
  let x = await run([{ sse: wire[API].text("ok") }], { onPayload: (p, m) => (seen.push([p.model, m.id]), undefined) });
  assert.equal(x.result.stopReason, "stop");
  assert.deepEqual(seen, [["gpt-test", "gpt-test"]]);
  assert.equal(x.requests[0].body.model, "gpt-test");
  x = await run([{ sse: wire[API].text("ok") }], { onPayload: async (p) => ({ ...p, model: "replaced", extra: [1] }) });
  assert.equal(x.requests[0].body.model, "replaced");
  assert.deepEqual(x.requests[0].body.extra, [1]);
  x = await run([{ sse: wire[API].text("ok") }], { onPayload: () => null });
  assert.equal(x.requests[0].raw, "null");
});

test("P-6.2.4 onPayload returning an unsendable value ends the request with JSON.stringify's error; no request", T, async () => {
  const x = await run([{ sse: wire[API].text("never") }], { onPayload: () => ({ n: 1n }) });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "Do not know how to serialize a BigInt");
  assert.equal(x.requests.length, 0);
});

test("P-6.2.4 a throwing or rejecting hook → error with its message (onPayload: no request; onResponse: no start)", T, async () => {
  for (const hook of ["onPayload", "onResponse", "onProviderStreamEvent"]) {
    for (const style of ["throw", "reject", "non-Error"]) {
      const fn =
        style === "throw" ? () => { throw new Error(`${hook} broke`); }
        : style === "reject" ? async () => { throw new Error(`${hook} broke`); }
        : () => { throw `${hook} broke`; }; // eslint-disable-line no-throw-literal
      const x = await run([{ sse: wire[API].text("ok") }], { [hook]: fn });
      assert.equal(x.result.stopReason, "error");
      assert.equal(x.result.errorMessage, `${hook} broke`);
      assert.equal(x.requests.length, hook === "onPayload" ? 0 : 1);
      assert.deepEqual(x.types, hook === "onProviderStreamEvent" ? ["start", "error"] : ["error"]);
    }
  }
});

test("P-6.2.4 async hooks are awaited in order with the stream; onProviderStreamEvent gets a copy of each event", T, async () => {
  const log = [];
  const x = await run([{ sse: wire[API].text("abc") }], {
    async onPayload() { await new Promise((r) => setTimeout(r, 5)); log.push("payload"); },
    async onResponse() { await new Promise((r) => setTimeout(r, 5)); log.push("response"); },
    async onProviderStreamEvent(d) {
      await new Promise((r) => setTimeout(r, 1));
      log.push(d.choices.length ? Object.keys(d.choices[0].delta).join() || d.choices[0].finish_reason : "usage");
      if (d.choices[0]?.delta.content !== undefined) d.choices[0].delta.content = "MUTATED";
    },
  });
  assert.equal(x.result.stopReason, "stop");
  assert.equal(x.result.content[0].text, "abc", "the mapper read its own parse, not the hook's copy");
  assert.deepEqual(log, ["payload", "response", "role,content", "content", "stop", "usage"]);
});

test("P-6.2.4 onProviderStreamEvent: each event's ops are applied before the next event's hook (one chunk)", T, async () => {
  const r = server.route();
  r.reply({ sse: wire[API].text("hello world, in pieces"), chunks: "whole" });
  const pushed = [];
  const seen = [];
  driver(model(API, r.baseUrl), ctx(), { apiKey: KEY, onProviderStreamEvent: () => seen.push(pushed.filter((t) => t === "text_delta").length) }, { push: (e) => pushed.push(e.type) });
  while (!["done", "error"].includes(pushed.at(-1))) await new Promise((res) => setTimeout(res, 5));
  assert.equal(pushed.at(-1), "done");
  // "hello world, in pieces": 5 deltas, one event each, then the finish and usage events.
  assert.deepEqual(seen, [0, 0, 1, 2, 3, 4, 5, 5]);
});

test("P-6.1.2 fetch: options.fetch, else globalThis.fetch; neither → `No fetch function available: pass options.fetch`", T, async () => {
  const saved = globalThis.fetch;
  globalThis.fetch = undefined;
  try {
    const x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, fetch: "not a function" }));
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.result.errorMessage, "No fetch function available: pass options.fetch");
  } finally {
    globalThis.fetch = saved;
  }
  const r = server.route();
  r.reply({ sse: wire[API].text("global") });
  const x = await drain(streamBuiltin(model(API, r.baseUrl), ctx(), { apiKey: KEY, fetch: 5 }));
  assert.equal(x.result.content[0].text, "global");
});

test("P-6.1.2 odd fetch results: a sync throw, a non-promise, a missing or failing body", T, async () => {
  const one = async (options) => drain(streamBuiltin(model(), ctx(), { apiKey: KEY, maxRetries: 0, ...options }));
  let x = await one({ fetch: () => { throw new Error("sync fetch failure"); } });
  assert.equal(x.result.errorMessage, "sync fetch failure");
  x = await one({ fetch: () => 42 });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "HTTP 0: ");
  x = await one({ fetch: async () => ({ status: 200, headers: new Headers(), body: null }) });
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.errorMessage, "Reflect.get called on non-object");
  x = await one({ fetch: async () => new Response(new ReadableStream({ pull(c) { c.error(new Error("read failed")); } }), { status: 200 }) });
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.errorMessage, "read failed");
  x = await one({ fetch: async () => ({ status: 200, headers: new Headers(), body: { getReader: () => ({}) } }) });
  assert.deepEqual(x.types, ["start", "error"]);
  assert.match(x.result.errorMessage, /undefined/, "calling a missing read");
});

// ------------------------------------------------------------------------------------------------------------------
// HTTP errors (P-6.2.5)
// ------------------------------------------------------------------------------------------------------------------

for (const api of APIS) {
  test(`P-6.2.5 ${api}: 400 {error:{message}} → a lone error \`HTTP 400: <message>\`, not retried`, T, async () => {
    const x = await run([fail(400, "model: field required"), { sse: wire[api].text("never") }], {}, { api });
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.final.reason, "error");
    assert.equal(x.result.errorMessage, "HTTP 400: model: field required");
    assert.deepEqual(x.result.content, []);
    assert.equal(x.requests.length, 1);
  });
}

test("P-6.2.5 a huge error body is read up to 64 KiB only, and the rest is cancelled", T, async () => {
  const x = await run([{ status: 400, body: "E".repeat(300 * 1024), minChunk: 4096, maxChunk: 16384, gapMs: 1 }]);
  assert.equal(x.result.errorMessage, `HTTP 400: ${"E".repeat(64 * 1024)}`);
  assert.equal(await closedWithin(x.requests[0]), true);
});

// ------------------------------------------------------------------------------------------------------------------
// Retries (P-6.2.6)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.2.6 500 retried: maxRetries 0/1/2/1.9 → 1/2/3/2 requests, then `HTTP 500: <message>`; default is 2", T, async () => {
  for (const [maxRetries, count] of [[0, 1], [1, 2], [2, 3], [1.9, 2], [undefined, 3], [-1, 3], [NaN, 3], ["5", 3]]) {
    const steps = Array.from({ length: 4 }, (_, i) => fail(500, `boom ${i + 1}`, RA0));
    const x = await run(steps, maxRetries === undefined ? {} : { maxRetries });
    assert.equal(x.requests.length, count, `maxRetries ${maxRetries}`);
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.result.errorMessage, `HTTP 500: boom ${count}`);
    for (const q of x.requests) assert.equal(q.raw, x.requests[0].raw, "every attempt sends the same body");
  }
});

test("P-6.2.6 retryable statuses 408, 409, 429, 500–599 then success; 400/401/403/404/422 are not retried", T, async () => {
  for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) {
    const x = await run([fail(status, "try again", RA0), { sse: wire[API].text("fine") }]);
    assert.equal(x.requests.length, 2, `status ${status}`);
    assert.equal(x.result.stopReason, "stop");
    assert.equal(squash(x.types), "start text_start text_delta text_end done");
  }
  for (const status of [400, 401, 403, 404, 422]) {
    const x = await run([fail(status, "no", RA0), { sse: wire[API].text("fine") }]);
    assert.equal(x.requests.length, 1, `status ${status}`);
    assert.equal(x.result.errorMessage, `HTTP ${status}: no`);
  }
});

test("P-6.2.6 Retry-After: seconds (a decimal, inf or nan), an HTTP date, else the backoff", { timeout: 30000 }, async () => {
  const waitFor = async (value) => {
    const x = await run([fail(503, "busy", value === undefined ? {} : { "retry-after": value }), { sse: wire[API].text("ok") }]);
    assert.equal(x.result.stopReason, "stop", `Retry-After ${value}`);
    assert.equal(x.waits.length, 1);
    return x.waits[0];
  };
  for (const [value, ms] of [["0", 0], ["1", 1000], [" 0.25 ", 250], ["+.5", 500], ["1.", 1000], ["-5", 0], ["NaN", 0], ["-inf", 0], ["2e-1", 200], [new Date(Date.now() - 60_000).toUTCString(), 0]]) {
    assert.equal(await waitFor(value), ms, `Retry-After ${JSON.stringify(value)}`);
  }
  const future = await waitFor(new Date(Date.now() + 2000).toUTCString());
  assert.ok(future > 0 && future <= 2000, `a date 1-2 s ahead: ${future}`);
  for (const value of [undefined, "soon", "0x10", "1e", ""]) {
    const ms = await waitFor(value);
    assert.ok(ms >= 400 && ms <= 600, `Retry-After ${JSON.stringify(value)}: the backoff (${ms})`);
  }
});

test("P-6.2.6 without Retry-After the backoff is 500 ms ± 20 %, then 1 s ± 20 %", T, async () => {
  const x = await run([fail(500, "a"), fail(500, "b"), fail(500, "c")], { maxRetries: 2 });
  assert.equal(x.requests.length, 3);
  assert.equal(x.waits.length, 2);
  assert.ok(x.waits[0] >= 400 && x.waits[0] <= 600, `first wait ${x.waits[0]}`);
  assert.ok(x.waits[1] >= 800 && x.waits[1] <= 1200, `second wait ${x.waits[1]}`);
  assert.equal(x.result.errorMessage, "HTTP 500: c");
});

test("P-6.2.6 a network error is retried, then reported with its cause; above maxRetryDelayMs it is not", T, async () => {
  let x = await run([{ dropBeforeHeaders: true }, { dropBeforeHeaders: true }], { maxRetries: 1 });
  assert.equal(x.requests.length, 2);
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "fetch failed: other side closed (UND_ERR_SOCKET)");
  x = await run([{ dropBeforeHeaders: true }, { sse: wire[API].text("recovered") }], { maxRetries: 1 });
  assert.equal(x.result.content[0].text, "recovered");
  x = await run([{ dropBeforeHeaders: true }, { sse: wire[API].text("never") }], { maxRetries: 5, maxRetryDelayMs: 300 });
  assert.equal(x.requests.length, 1);
  assert.deepEqual(x.waits, []);
});

test("issue 13: deterministic fetch failures are not retried; a caller's own Error is", T, async () => {
  let calls = 0;
  let x = await drain(streamBuiltin(model(API, "http://127.0.0.1:99999"), ctx(), { apiKey: KEY, maxRetries: 2, fetch: (u, i) => (calls++, fetch(u, i)) }));
  assert.equal(x.result.errorMessage, "Failed to parse URL from http://127.0.0.1:99999/chat/completions: Invalid URL (ERR_INVALID_URL)");
  assert.equal(calls, 1);
  calls = 0;
  x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, maxRetries: 1, maxRetryDelayMs: 0, fetch: () => (calls++, Promise.reject(new Error("flaky"))) }));
  assert.equal(x.result.errorMessage, "flaky");
  assert.equal(calls, 2);
  calls = 0;
  const fixed = Object.assign(new Error("cassette mismatch"), { retryable: false });
  x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, maxRetries: 3, fetch: () => (calls++, Promise.reject(fixed)) }));
  assert.equal(x.result.errorMessage, "cassette mismatch");
  assert.equal(calls, 1);
});

for (const api of APIS) {
  test(`P-6.2.6 ${api}: never retried after the first event — connection dropped mid-stream → error, partial kept`, T, async () => {
    const text = "A fairly long answer that will be cut off in the middle of the stream.";
    const sse = wire[api].text(text);
    const x = await run([{ sse, dropAfter: Math.floor(sse.length / 2) }, { sse: wire[api].text("retry") }], {}, { api });
    assert.equal(x.requests.length, 1);
    assert.equal(x.types[0], "start");
    assert.equal(x.final.type, "error");
    assert.equal(x.result.errorMessage, "terminated: other side closed (UND_ERR_SOCKET)");
    assert.ok(x.result.content[0].text.length > 0 && text.startsWith(x.result.content[0].text));
  });
}

// ------------------------------------------------------------------------------------------------------------------
// Timeouts (P-6.2.6)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.2.6 timeoutMs bounds the wait for headers; the timed-out request is cancelled; one timer of timeoutMs", T, async () => {
  const x = await run([{ stallBeforeHeaders: true }], { timeoutMs: 150, maxRetries: 0 });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "Request timed out after 150 ms");
  assert.deepEqual(x.waits, [150]);
  assert.equal(await closedWithin(x.requests[0], 500), true);
});

test("P-6.2.6 a timed-out attempt is retried like a network error; a timer not needed is cleared", T, async () => {
  let x = await run([{ stallBeforeHeaders: true }, { sse: wire[API].text("second try") }], { timeoutMs: 100.5, maxRetries: 1 });
  assert.equal(x.requests.length, 2);
  assert.equal(x.result.content[0].text, "second try");
  assert.equal(x.waits[0], 100.5);
  assert.ok(x.cancelled.includes(100.5), "the second attempt's timer was cleared when its headers came");
  x = await run([{ stallBeforeHeaders: true }], { timeoutMs: 50.5, maxRetries: 0 });
  assert.equal(x.result.errorMessage, "Request timed out after 50.5 ms");
});

test("P-6.2.6 timeoutMs: fetch gets its own signal, aborted with the timeout's Error; odd values mean no timeout", T, async () => {
  let reason;
  const fetchFn = (url, init) => new Promise((_, reject) => init.signal.addEventListener("abort", () => {
    reason = init.signal.reason;
    reject(reason);
  }));
  const x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, maxRetries: 0, timeoutMs: 30, fetch: fetchFn }));
  assert.equal(x.result.errorMessage, "Request timed out after 30 ms");
  assert.ok(reason instanceof Error && reason.message === "Request timed out after 30 ms");
  for (const timeoutMs of [0, -5, Infinity, "soon"]) {
    const { calls, fetch } = fakeFetch(new Response("{}", { status: 400 }));
    const signal = new AbortController().signal;
    await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, maxRetries: 0, timeoutMs, fetch, signal }));
    assert.equal(calls[0].init.signal, signal, `timeoutMs ${timeoutMs}: the caller's signal as it is`);
  }
});

// ------------------------------------------------------------------------------------------------------------------
// Abort (P-6.1.5)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.1.5 aborted while waiting for the headers (with and without timeoutMs): the connection is closed", T, async () => {
  for (const timeoutMs of [undefined, 5000]) {
    const controller = new AbortController();
    const x = await run([{ stallBeforeHeaders: true }], { signal: controller.signal, timeoutMs }, {
      during: async (r) => {
        await r.waitForRequests(1);
        controller.abort();
      },
    });
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.result.stopReason, "aborted");
    assert.equal(x.result.errorMessage, "Request was aborted");
    assert.equal(await closedWithin(x.requests[0]), true);
    if (timeoutMs) assert.deepEqual(x.cancelled, [5000]);
  }
});

for (const api of APIS) {
  test(`P-6.1.5 ${api}: aborted mid-stream — partial content kept, reason aborted, connection closed`, T, async () => {
    const controller = new AbortController();
    const text = "Streaming a long answer, word by word, until the user gives up on it.";
    const sse = wire[api].text(text);
    const x = await run([{ sse, stallAfter: Math.floor(sse.length * 0.6) }], { signal: controller.signal }, {
      api,
      during: async (r) => {
        await r.waitForRequests(1);
        while (r.requests[0].bytesSent < Math.floor(sse.length * 0.6)) await new Promise((res) => setTimeout(res, 5));
        setTimeout(() => controller.abort(), 30);
      },
    });
    assert.match(x.types.join(" "), /^start text_start( text_delta)+( text_end)? error$/);
    assert.equal(x.result.stopReason, "aborted");
    assert.equal(x.result.errorMessage, "Request was aborted");
    const kept = x.result.content[0].text;
    assert.ok(kept.length > 0 && text.startsWith(kept) && kept !== text, `kept ${JSON.stringify(kept)}`);
    assert.equal(await closedWithin(x.requests[0]), true);
  });
}

test("P-6.1.5 an abort inside onProviderStreamEvent: the next read sees it; tool-call arguments kept partial", T, async () => {
  const controller = new AbortController();
  const args = { path: "a/very/long/path/name/that/streams/slowly.txt", more: "x".repeat(40) };
  const sse = wire[API].tools([{ id: "c1", name: "read", args }]);
  let deltas = 0;
  const x = await run([{ sse, stallAfter: Math.floor(sse.length * 0.7) }], {
    signal: controller.signal,
    onProviderStreamEvent: (d) => {
      if (d.choices?.[0]?.delta?.tool_calls && ++deltas === 6) controller.abort();
    },
  });
  assert.equal(x.result.stopReason, "aborted");
  const call = x.result.content.find((b) => b.type === "toolCall");
  assert.equal(call.id, "c1");
  assert.ok(args.path.startsWith(call.arguments.path ?? ""), JSON.stringify(call.arguments));
});

test("P-6.2.6 abort cancels a retry wait (its timer cleared)", T, async () => {
  const controller = new AbortController();
  const x = await run([fail(503, "busy", { "retry-after": "5" }), { sse: wire[API].text("never") }], { signal: controller.signal }, {
    during: async (r) => {
      await r.waitForRequests(1);
      setTimeout(() => controller.abort(), 50);
    },
  });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "Request was aborted");
  assert.equal(x.requests.length, 1);
  assert.deepEqual(x.waits, [5000]);
  assert.deepEqual(x.cancelled, [5000]);
});

test("P-6.1.2 a signal without addEventListener is not an abort; a throwing `aborted` getter is one at the first wait", T, async () => {
  let x = await run([{ sse: wire[API].text("fine") }], { signal: { aborted: false }, fetch: (url, init) => fetch(url, { ...init, signal: undefined }) });
  assert.equal(x.result.stopReason, "stop", x.result.errorMessage);
  assert.equal(x.result.content[0].text, "fine");
  // `signal.aborted` throwing reads as not aborted for the checks, but ends the first wait on the signal (a read).
  const signal = { get aborted() { throw new Error("getter"); }, addEventListener() {}, removeEventListener() {} };
  x = await run([{ sse: wire[API].text("fine") }], { signal, fetch: (url, init) => fetch(url, { ...init, signal: undefined }) });
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.stopReason, "aborted");
});

test("P-6.1.5 an abort after done changes nothing; an error while aborted reads as aborted", T, async () => {
  const controller = new AbortController();
  let x = await run([{ sse: wire[API].text("complete") }], { signal: controller.signal });
  controller.abort();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(x.result.stopReason, "stop");
  assert.equal(x.final.type, "done");
  const late = new AbortController();
  x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, signal: late.signal, onResponse: () => { late.abort(); throw new Error("hook"); }, fetch: async () => new Response("", { status: 200 }) }));
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.stopReason, "aborted");
  assert.equal(x.result.errorMessage, "Request was aborted");
});

// ------------------------------------------------------------------------------------------------------------------
// The body (P-6.1.8, P-6.3)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.1.5 after `[DONE]` the body is read to its end (a browser shows a cancelled request as failed); after a final JSON event it is cancelled; an abort while reading on adds nothing", T, async () => {
  const sse = wire[API].text("whole");
  assert.ok(sse.includes("data: [DONE]"), "openai-completions ends with [DONE]");
  const read = [];
  const done = chunked([utf8(sse), utf8(": trailing comment\n\n")], {});
  const wrapped = { ...done.reader, read: async () => { const r = await done.reader.read(); read.push(r.done ? "end" : "chunk"); return r; } };
  wrapped.cancel = () => { wrapped.cancelled = true; };
  let x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, fetch: async () => ({ ...done.response, body: { getReader: () => wrapped } }) }));
  assert.equal(x.final.type, "done");
  assert.deepEqual(read, ["chunk", "chunk", "end"], "read on to the end");
  assert.equal(wrapped.cancelled, undefined, "never cancelled");
  // Anthropic's reply ends with message_stop (JSON): the rest is not read.
  const anthropic = chunked([utf8(wire["anthropic-messages"].text("whole")), utf8(": more\n\n")]);
  x = await drain(streamBuiltin(model("anthropic-messages"), ctx(), { apiKey: KEY, fetch: async () => anthropic.response }));
  assert.equal(x.final.type, "done");
  assert.equal(anthropic.reader.cancelled, true, `cancelled after message_stop (${x.types.join(" ")})`);
  // An abort while the body is read on after [DONE]: the request stays done, the reader is cancelled.
  const controller = new AbortController();
  let release;
  const stall = chunked([utf8(sse)]);
  const slow = { read: async () => (stall.reader.read().then((r) => (r.done ? new Promise((res) => (release = res)) : r))), cancel() { slow.cancelled = true; release?.({ done: true }); } };
  const pending = drain(streamBuiltin(model(), ctx(), { apiKey: KEY, signal: controller.signal, fetch: async () => ({ ...stall.response, body: { getReader: () => slow } }) }));
  x = await pending; // the request is done: [DONE] came in the first chunk; the body is still being read
  assert.equal(slow.cancelled, undefined);
  controller.abort();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual([x.final.type, x.result.stopReason, x.types.at(-1)], ["done", "stop", "done"]);
  assert.equal(slow.cancelled, true, "the reader cancelled on the abort");
});

test("P-6.1.8 chunking: 1-byte chunks, CRLF, a BOM and a comment give the same events as one chunk", T, async () => {
  const sse = "\uFEFF: comment\r\n\r\n" + wire[API].reply({ text: "Hello, wörld 🌍!", calls: [{ id: "c1", name: "f", args: { a: "ü" } }] }).replace(/\n/g, "\r\n");
  const whole = await run([{ sse, chunks: "whole" }]);
  const bytes = await run([{ sse, chunks: [1] }]);
  for (const x of [whole, bytes]) {
    assert.equal(x.result.stopReason, "toolUse", x.result.errorMessage);
    assert.equal(x.result.content[0].text, "Hello, wörld 🌍!");
    assert.deepEqual(x.result.content[1].arguments, { a: "ü" });
  }
  assert.deepEqual(bytes.types, whole.types);
});

test("P-6.3 chunks: ArrayBuffer and other views are read; anything else → error, the reader cancelled", T, async () => {
  const text = utf8(wire[API].text("views"));
  const half = text.length >> 1;
  const ok = chunked([text.slice(0, half).buffer, new DataView(text.buffer, half, 10), new Uint16Array(text.slice(half + 10, half + 20).buffer), text.subarray(half + 20)]);
  let x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, fetch: async () => ok.response }));
  assert.equal(x.result.stopReason, "stop", x.result.errorMessage);
  assert.equal(x.result.content[0].text, "views");
  const bad = chunked([text.subarray(0, 10), "a string"]);
  x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, fetch: async () => bad.response }));
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.errorMessage, "Provider stream chunk is not an ArrayBuffer or a view of one");
  assert.equal(bad.reader.cancelled, true);
});

test("P-6.3 a chunk whose `value` getter throws is skipped; one without `done` ends the stream", T, async () => {
  const text = utf8(wire[API].text("skip"));
  let i = 0;
  const reader = {
    read: async () => {
      i++;
      if (i === 1) return { done: false, get value() { throw new Error("getter"); } };
      if (i === 2) return { done: false, value: text };
      return {};
    },
  };
  const x = await drain(streamBuiltin(model(), ctx(), { apiKey: KEY, fetch: async () => ({ status: 200, body: { getReader: () => reader } }) }));
  assert.equal(x.result.stopReason, "stop", x.result.errorMessage);
});

test("P-6.3.1 maxStreamEventBytes bounds one event (the decoder's error, the reader cancelled); odd values → 64 MiB", T, async () => {
  const sse = wire[API].text("x".repeat(300));
  let x = await run([{ sse, stallAtEnd: true }], { maxStreamEventBytes: 100.7 });
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.errorMessage, "Provider stream event exceeds the limit of 100 bytes (maxStreamEventBytes)");
  assert.equal(await closedWithin(x.requests[0]), true);
  for (const maxStreamEventBytes of [0, 0.5, -1, NaN, "100"]) {
    x = await run([{ sse }], { maxStreamEventBytes });
    assert.equal(x.result.stopReason, "stop", `${maxStreamEventBytes}`);
  }
});

test("P-6.3.2 data that is not JSON → `Invalid JSON in provider stream: <first 200>`; [DONE] is nothing", T, async () => {
  const bad = `{"choices": [${"y".repeat(300)}`;
  const x = await run([{ sse: data({ id: "c", choices: [{ index: 0, delta: { content: "so far" } }] }) + data(bad) + data("[DONE]"), chunks: "whole" }]);
  assert.equal(x.result.stopReason, "error");
  assert.equal(x.result.errorMessage, `Invalid JSON in provider stream: ${bad.slice(0, 200)}`);
  assert.equal(x.types.at(-1), "error");
  assert.equal(x.types.filter((t) => t === "error").length, 1);
});

test("P-6.1.4 a completely empty 200 body → start, error (the wire format's end text), no content", T, async () => {
  const x = await run([{ sse: "" }]);
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(typeof x.result.errorMessage, "string");
  assert.ok(x.result.errorMessage.length > 0);
  assert.deepEqual(x.result.content, []);
});

test("P-6.2.4 a throwing onProviderStreamEvent and a finished stream both cancel the body (the server sees the close)", T, async () => {
  let x = await run([{ sse: wire[API].text("x".repeat(200)), stallAtEnd: true }], { onProviderStreamEvent: () => { throw new Error("stop reading"); } });
  assert.equal(x.result.errorMessage, "stop reading");
  assert.equal(await closedWithin(x.requests[0]), true);
  // A provider error event finishes the assembler: the rest of the body is not read.
  x = await run([{ sse: data({ error: { message: "Overloaded" } }), stallAtEnd: true }]);
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(await closedWithin(x.requests[0]), true);
});

for (const api of APIS) {
  test(`§6 ${api}: a text reply and a tool call over random chunks — events, one message object`, T, async () => {
    const args = { city: "Paris", list: [1, 2.5, null], nested: { ok: true } };
    const x = await run([{ sse: wire[api].reply({ text: "Hello there", calls: [{ id: "call_1", name: "weather", args }] }) }], {}, { api });
    assert.equal(x.result.stopReason, "toolUse", x.result.errorMessage);
    assert.equal(x.result.content[0].text, "Hello there");
    const call = x.result.content.find((b) => b.type === "toolCall");
    assert.deepEqual(call.arguments, args);
    assert.equal(x.types[0], "start");
    assert.equal(x.types.at(-1), "done");
    for (const e of x.events) assert.equal(e.type === "done" ? e.message : e.partial, x.result);
    assert.ok(x.result.usage.input > 0);
  });
}

test("§6 twelve concurrent streams on one signal each get their own reply (one shared abort listener)", T, async () => {
  const controller = new AbortController();
  let added = 0;
  const signal = controller.signal;
  const add = signal.addEventListener.bind(signal);
  signal.addEventListener = (...a) => (added++, add(...a));
  const runs = await Promise.all(Array.from({ length: 12 }, (_, i) => {
    const api = APIS[i % 4];
    return run([{ sse: wire[api].text(`reply ${i}`) }], { signal, fetch: (url, init) => fetch(url, { ...init, signal: undefined }) }, { api });
  }));
  runs.forEach((x, i) => assert.equal(x.result.content[0].text, `reply ${i}`));
  assert.ok(added < 12 * 3, `listeners added: ${added}`);
});
