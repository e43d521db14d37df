// Built-in providers over real HTTP (SPEC P-6.1.2, P-6.1.5, P-6.2.4–P-6.2.6): HTTP error texts, retries (counted on
// the server; maxRetries, Retry-After, maxRetryDelayMs, backoff, network errors, never after the first event), abort
// before the request / while waiting for headers / mid-stream / during a retry wait (the server sees the connection
// close), timeoutMs, the hooks, and "never throws" for bad models, options and contexts.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { APIS, drain, providerModel, startProviderServer, wire } from "./provider-server.mjs";
import { P, bug, clearKeyEnv, ctx, squash, streamBuiltin } from "./providers-common.mjs";

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());

const KEY = "sk-http";
const API = "anthropic-messages";
const fail = (status, message, headers = {}) => ({ status, headers, body: { error: { message } } });
const now = () => Date.now();
/** Resolves true if the request's connection closed before its response ended, "open" if not within `ms`. */
const closedWithin = (request, ms = 1000) => Promise.race([request.closed, new Promise((r) => setTimeout(() => r("open"), ms))]);

const PKG_DIST = fileURLToPath(new URL("../../pkg/dist/", import.meta.url));

/**
 * Runs one request. `waits`: the milliseconds of every timer the package itself set meanwhile (its retry waits), read
 * from the `setTimeout` calls whose caller is in pkg/dist, so a wait is checked as asked for, not by a clock.
 */
async function run(steps, options = {}, { api = API, model = {}, during } = {}) {
  const r = server.route();
  r.reply(...steps);
  const started = now();
  const [realSetTimeout, realClearTimeout] = [globalThis.setTimeout, globalThis.clearTimeout];
  const [waits, cancelled, pending] = [[], [], new Map()];
  globalThis.setTimeout = function (fn, ms, ...rest) {
    if (!new Error().stack.includes(PKG_DIST)) return realSetTimeout.call(this, fn, ms, ...rest);
    waits.push(ms);
    const handle = realSetTimeout.call(this, (...args) => (pending.delete(handle), fn(...args)), ms, ...rest);
    pending.set(handle, ms);
    return handle;
  };
  globalThis.clearTimeout = function (handle) {
    // A timer of the package's that had not fired yet.
    if (pending.has(handle)) cancelled.push(pending.get(handle)), pending.delete(handle);
    return realClearTimeout.call(this, handle);
  };
  try {
    const s = streamBuiltin(providerModel(api, r.baseUrl, model), ctx(), { apiKey: KEY, ...options });
    if (during) during(r);
    const out = await drain(s);
    return { ...out, route: r, requests: r.requests, ms: now() - started, waits, cancelled };
  } finally {
    [globalThis.setTimeout, globalThis.clearTimeout] = [realSetTimeout, realClearTimeout];
  }
}

// ------------------------------------------------------------------------------------------------------------------
// HTTP errors (P-6.2.5)
// ------------------------------------------------------------------------------------------------------------------

for (const api of APIS) {
  test(`P-6.2.5 ${api}: 400 {error:{message}} → a lone error \`HTTP 400: <message>\`, not retried`, P, async () => {
    const x = await run([fail(400, "model: field required"), { sse: wire[api].text("never") }], {}, { api });
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.final.reason, "error");
    assert.equal(x.result.stopReason, "error");
    assert.equal(x.result.errorMessage, "HTTP 400: model: field required");
    assert.deepEqual(x.result.content, []);
    assert.equal(x.requests.length, 1);
  });
}

test("P-6.2.5 detail: error.message, then message, then a string error, else the body text", P, async () => {
  const cases = [
    [{ status: 401, body: { message: "Invalid API key" } }, "HTTP 401: Invalid API key"],
    [{ status: 403, body: { error: "forbidden here" } }, "HTTP 403: forbidden here"],
    [{ status: 404, body: "Not Found: /v1/messages" }, "HTTP 404: Not Found: /v1/messages"],
    [{ status: 422, body: { error: { code: 1 }, detail: "x" } }, 'HTTP 422: {"error":{"code":1},"detail":"x"}'],
    [{ status: 400, body: "" }, "HTTP 400: "],
  ];
  for (const [step, message] of cases) {
    const x = await run([step]);
    assert.equal(x.result.errorMessage, message);
    assert.equal(x.requests.length, 1);
  }
});

test("P-6.2.5 a huge error body is read up to 64 KiB only", P, async () => {
  const x = await run([{ status: 400, body: "E".repeat(300 * 1024), minChunk: 4096, maxChunk: 16384 }]);
  assert.equal(x.result.errorMessage, `HTTP 400: ${"E".repeat(64 * 1024)}`);
});

// ------------------------------------------------------------------------------------------------------------------
// Retries (P-6.2.6)
// ------------------------------------------------------------------------------------------------------------------

const RA0 = { "retry-after": "0" };

test("P-6.2.6 500 retried: maxRetries 0/1/2 → 1/2/3 requests, then `HTTP 500: <message>`; default is 2", P, async () => {
  for (const [maxRetries, count] of [[0, 1], [1, 2], [2, 3], [undefined, 3]]) {
    const steps = Array.from({ length: 4 }, (_, i) => fail(500, `boom ${i + 1}`, RA0));
    const x = await run(steps, maxRetries === undefined ? {} : { maxRetries });
    assert.equal(x.requests.length, count, `maxRetries ${maxRetries}`);
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.result.errorMessage, `HTTP 500: boom ${count}`);
    // every attempt carries the same request
    for (const q of x.requests) assert.deepEqual(q.body, x.requests[0].body);
  }
});

test("P-6.2.6 retryable statuses 408, 409, 429, 500–599 then success; 400/401/403/404/422 are not retried", P, async () => {
  for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) {
    const x = await run([fail(status, "try again", RA0), { sse: wire[API].text("fine") }]);
    assert.equal(x.requests.length, 2, `status ${status}`);
    assert.equal(x.result.stopReason, "stop");
    assert.equal(squash(x.types), "start text_start text_delta* text_end done");
  }
  for (const status of [400, 401, 403, 404, 422]) {
    const x = await run([fail(status, "no", RA0), { sse: wire[API].text("fine") }]);
    assert.equal(x.requests.length, 1, `status ${status}`);
    assert.equal(x.result.errorMessage, `HTTP ${status}: no`);
  }
});

test("P-6.2.6 Retry-After is honoured (0 s → at once, 1 s → 1 s instead of the 500 ms backoff)", P, async () => {
  let x = await run([fail(503, "busy", RA0), { sse: wire[API].text("ok") }]);
  assert.equal(x.requests.length, 2);
  assert.deepEqual(x.waits, [0], "Retry-After 0: no wait (the backoff would be 400-600 ms)");
  x = await run([fail(429, "busy", { "retry-after": "1" }), { sse: wire[API].text("ok") }]);
  assert.equal(x.result.stopReason, "stop");
  assert.deepEqual(x.waits, [1000], "Retry-After 1: one second");
});

test("P-6.2.6 Retry-After as an HTTP date in the past → retried at once", P, async () => {
  const x = await run([fail(503, "busy", { "retry-after": new Date(Date.now() - 60_000).toUTCString() }), { sse: wire[API].text("ok") }]);
  assert.equal(x.requests.length, 2);
  assert.deepEqual(x.waits, [0]);
});

test("P-6.2.6 a wait above maxRetryDelayMs is not retried (default 60000; explicit 500)", P, async () => {
  let x = await run([fail(429, "slow down", { "retry-after": "120" }), { sse: wire[API].text("ok") }]);
  assert.equal(x.requests.length, 1);
  assert.equal(x.result.errorMessage, "HTTP 429: slow down");
  assert.deepEqual(x.waits, [], "no wait before giving up");
  x = await run([fail(429, "slow down", { "retry-after": "1" }), { sse: wire[API].text("ok") }], { maxRetryDelayMs: 500 });
  assert.equal(x.requests.length, 1);
  assert.equal(x.result.errorMessage, "HTTP 429: slow down");
  assert.deepEqual(x.waits, []);
});

test("P-6.2.6 without Retry-After the backoff is 500 ms ± 20 %", P, async () => {
  const x = await run([fail(500, "a"), fail(500, "b")], { maxRetries: 1 });
  assert.equal(x.requests.length, 2);
  assert.equal(x.waits.length, 1);
  assert.ok(x.waits[0] >= 400 && x.waits[0] <= 600, `asked to wait ${x.waits[0]} ms`);
  assert.equal(x.result.errorMessage, "HTTP 500: b");
});

test("P-6.2.6 a network error (socket closed before the headers) is retried, then reported", P, async () => {
  let x = await run([{ dropBeforeHeaders: true }, { dropBeforeHeaders: true }], { maxRetries: 1 });
  assert.equal(x.requests.length, 2);
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.stopReason, "error");
  assert.equal(x.result.errorMessage, "fetch failed: other side closed (UND_ERR_SOCKET)"); // Node's message and its cause, as pi-ai words it
  x = await run([{ dropBeforeHeaders: true }, { sse: wire[API].text("recovered") }], { maxRetries: 1 });
  assert.equal(x.requests.length, 2);
  assert.equal(x.result.content[0].text, "recovered");
  x = await run([{ dropBeforeHeaders: true }, { sse: wire[API].text("never") }], { maxRetries: 0 });
  assert.equal(x.requests.length, 1);
  assert.equal(x.result.errorMessage, "fetch failed: other side closed (UND_ERR_SOCKET)");
});

test("P-6.2.6 a network error whose backoff is above maxRetryDelayMs is not retried either", P, async () => {
  // The first backoff is 400-600 ms: a cap of 300 ends the request at once; the default cap still retries it.
  let x = await run([{ dropBeforeHeaders: true }, { sse: wire[API].text("never") }], { maxRetries: 5, maxRetryDelayMs: 300 });
  assert.equal(x.requests.length, 1);
  assert.equal(x.result.errorMessage, "fetch failed: other side closed (UND_ERR_SOCKET)");
  assert.deepEqual(x.waits, [], "no wait before giving up");
  x = await run([{ dropBeforeHeaders: true }, { sse: wire[API].text("again") }], { maxRetries: 5 });
  assert.equal(x.requests.length, 2);
  assert.equal(x.result.content[0].text, "again");
});

for (const api of APIS) {
  test(`P-6.2.6 ${api}: never retried after the first event — connection dropped mid-stream → error, partial kept`, P, async () => {
    const sse = wire[api].text("A fairly long answer that will be cut off in the middle of the stream.");
    const x = await run([{ sse, dropAfter: Math.floor(sse.length / 2) }, { sse: wire[api].text("retry") }], {}, { api });
    assert.equal(x.requests.length, 1);
    assert.equal(x.types[0], "start");
    assert.equal(x.final.type, "error");
    assert.equal(x.result.stopReason, "error");
    assert.equal(typeof x.result.errorMessage, "string");
    assert.ok(x.result.errorMessage.length > 0);
    assert.equal(x.types.filter((t) => t === "done").length, 0);
    assert.ok(x.result.content[0].text.length > 0, "partial text kept");
    assert.ok("A fairly long answer that will be cut off in the middle of the stream.".startsWith(x.result.content[0].text));
  });
}

test("P-6.2.6 a provider error event after 200 is not retried", P, async () => {
  const x = await run([{ sse: 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n' }, { sse: wire[API].text("x") }]);
  assert.equal(x.requests.length, 1);
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.errorMessage, "Overloaded");
});

test("P-6.2.6 timeoutMs bounds the wait for response headers", P, async () => {
  const x = await run([{ stallBeforeHeaders: true }], { timeoutMs: 150, maxRetries: 0 });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "Request timed out after 150 ms");
  assert.deepEqual(x.waits, [150], "one timer, of timeoutMs");
});

test(
  "P-6.2.6/E-8.4.4 the request that timed out is cancelled (the server sees its connection close)",
  bug("streamBuiltin's timeoutMs only races fetch() against a timer (src/js/providers.rs `send`): the fetch itself is never aborted, so the HTTP connection stays open after `Request timed out after N ms` (and every timed-out retry leaks one more)"),
  async () => {
    const x = await run([{ stallBeforeHeaders: true }], { timeoutMs: 100, maxRetries: 0 });
    assert.equal(x.result.errorMessage, "Request timed out after 100 ms");
    assert.equal(await closedWithin(x.requests[0], 500), true);
  },
);

test("P-6.2.6 a timed-out attempt is retried like a network error", P, async () => {
  const x = await run([{ stallBeforeHeaders: true }, { sse: wire[API].text("second try") }], { timeoutMs: 100, maxRetries: 1 });
  assert.equal(x.requests.length, 2);
  assert.equal(x.result.content[0].text, "second try");
});

// ------------------------------------------------------------------------------------------------------------------
// Abort (P-6.1.5)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.1.5 aborted before the call: a lone error, reason aborted, `Request was aborted`, no request", P, async () => {
  for (const api of APIS) {
    const controller = new AbortController();
    controller.abort();
    const x = await run([{ sse: wire[api].text("never") }], { signal: controller.signal }, { api });
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.final.reason, "aborted");
    assert.equal(x.result.stopReason, "aborted");
    assert.equal(x.result.errorMessage, "Request was aborted");
    assert.deepEqual(x.result.content, []);
    assert.equal(x.requests.length, 0);
  }
});

test("P-6.1.5 aborted while waiting for the headers: lone aborted error; the connection is closed", P, async () => {
  const controller = new AbortController();
  const x = await run([{ stallBeforeHeaders: true }], { signal: controller.signal }, {
    during: async (r) => {
      await r.waitForRequests(1);
      controller.abort();
    },
  });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.stopReason, "aborted");
  assert.equal(x.result.errorMessage, "Request was aborted");
  assert.equal(await closedWithin(x.requests[0]), true);
});

for (const api of APIS) {
  test(`P-6.1.5 ${api}: aborted mid-stream — partial content kept, reason aborted, connection closed`, P, async () => {
    const controller = new AbortController();
    const text = "Streaming a long answer, word by word, until the user gives up on it.";
    const sse = wire[api].text(text);
    const x = await run([{ sse, stallAfter: Math.floor(sse.length * 0.6) }], {
      signal: controller.signal,
      onProviderStreamEvent: () => {},
    }, {
      api,
      during: async (r) => {
        await r.waitForRequests(1);
        while (r.requests[0].bytesSent < Math.floor(sse.length * 0.6)) await new Promise((res) => setTimeout(res, 5));
        setTimeout(() => controller.abort(), 30);
      },
    });
    // start, the text so far, optionally its text_end (P-6.1.4 leaves closing open blocks on abort unspecified), error
    assert.match(x.types.join(" "), /^start text_start( text_delta)+( text_end)? error$/);
    assert.equal(x.final.reason, "aborted");
    assert.equal(x.result.stopReason, "aborted");
    assert.equal(x.result.errorMessage, "Request was aborted");
    const kept = x.result.content[0].text;
    assert.ok(kept.length > 0 && text.startsWith(kept) && kept !== text, `kept ${JSON.stringify(kept)}`);
    assert.equal(await closedWithin(x.requests[0]), true, "the server saw the request close");
  });
}

test("P-6.1.5 abort during a tool-call stream keeps the partial arguments", P, async () => {
  const controller = new AbortController();
  const args = { path: "a/very/long/path/name/that/streams/slowly.txt", more: "x".repeat(40) };
  const sse = wire["openai-completions"].tools([{ id: "c1", name: "read", args }]);
  let deltas = 0;
  const x = await run([{ sse, stallAfter: Math.floor(sse.length * 0.7) }], {
    signal: controller.signal,
    onProviderStreamEvent: (d) => {
      if (d.choices?.[0]?.delta?.tool_calls && ++deltas === 6) controller.abort();
    },
  }, { api: "openai-completions" });
  assert.equal(x.result.stopReason, "aborted");
  const call = x.result.content.find((b) => b.type === "toolCall");
  assert.equal(call.id, "c1");
  assert.equal(typeof call.arguments, "object");
  assert.ok(args.path.startsWith(call.arguments.path ?? ""), JSON.stringify(call.arguments));
});

test("P-6.1.5 an abort with a custom reason still reads `Request was aborted`", P, async () => {
  const controller = new AbortController();
  controller.abort(new Error("user pressed stop"));
  const x = await run([{ sse: wire[API].text("never") }], { signal: controller.signal });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.stopReason, "aborted");
  assert.equal(x.result.errorMessage, "Request was aborted");
});

test(
  "P-6.1.2 a signal-like option without addEventListener is not an abort",
  bug("an options.signal that is not an EventTarget (e.g. {aborted: false}) ends every stream as `aborted`/`Request was aborted` right after `start` (or after the first failed attempt): helpers.js onAbort calls signal.addEventListener inside the Promise executor, so the missing method rejects the promise instead of failing on_abort(); host.rs wait_abort's Cancellable then completes and read_body/send treat that as an abort although signal.aborted is false. Repro: streamBuiltin(model, ctx, {signal: {aborted: false}, fetch: (u, i) => fetch(u, {...i, signal: undefined})}) → start, error(aborted)"),
  async () => {
    const x = await run([{ sse: wire[API].text("fine") }], {
      signal: { aborted: false },
      fetch: (url, init) => fetch(url, { ...init, signal: undefined }),
    });
    assert.equal(x.result.stopReason, "stop", x.result.errorMessage);
    assert.equal(x.result.content[0]?.text, "fine");
  },
);

test("P-6.2.6 abort cancels a retry wait", P, async () => {
  const controller = new AbortController();
  const x = await run([fail(503, "busy", { "retry-after": "5" }), { sse: wire[API].text("never") }], { signal: controller.signal }, {
    during: async (r) => {
      await r.waitForRequests(1);
      setTimeout(() => controller.abort(), 50);
    },
  });
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.stopReason, "aborted");
  assert.equal(x.result.errorMessage, "Request was aborted");
  assert.equal(x.requests.length, 1);
  assert.deepEqual(x.waits, [5000], "Retry-After 5");
  assert.deepEqual(x.cancelled, [5000], "the wait was cut short by the abort, not waited out");
});

test("P-6.1.5 an abort after done changes nothing", P, async () => {
  const controller = new AbortController();
  const x = await run([{ sse: wire[API].text("complete") }], { signal: controller.signal });
  controller.abort();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(x.result.stopReason, "stop");
  assert.equal(x.final.type, "done");
});

// ------------------------------------------------------------------------------------------------------------------
// Hooks (P-6.2.4)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.2.4 onResponse gets {status, headers} (lower-case names) and the model, once per attempt", P, async () => {
  const seen = [];
  const x = await run(
    [fail(503, "busy", { ...RA0, "x-request-id": "req-1" }), { sse: wire[API].text("ok"), headers: { "x-request-id": "req-2", "X-Mixed-Case": "v" } }],
    { onResponse: (info, model) => seen.push({ status: info.status, id: info.headers["x-request-id"], mixed: info.headers["x-mixed-case"], type: info.headers["content-type"], model: model.id }) },
  );
  assert.equal(x.result.stopReason, "stop");
  assert.deepEqual(seen, [
    { status: 503, id: "req-1", mixed: undefined, type: "application/json", model: "claude-test" },
    { status: 200, id: "req-2", mixed: "v", type: "text/event-stream", model: "claude-test" },
  ]);
});

for (const api of APIS) {
  test(`P-6.2.4 ${api}: onProviderStreamEvent gets every parsed event (data JSON) and the model`, P, async () => {
    const seen = [];
    const sse = wire[api].text("hello");
    const x = await run([{ sse }], { onProviderStreamEvent: (d, m) => seen.push([d, m.id]) }, { api });
    assert.equal(x.result.stopReason, "stop");
    const parsed = sse
      .split("\n\n")
      .map((block) => block.split("\n").find((l) => l.startsWith("data: "))?.slice(6))
      .filter((d) => d !== undefined && d !== "[DONE]")
      .map((d) => JSON.parse(d));
    assert.deepEqual(seen, parsed.map((d) => [d, providerModel(api, "").id]));
  });
}

test("P-6.2.4 a throwing or rejecting hook → error with its message (onPayload: no request; onResponse: no start)", P, async () => {
  for (const hook of ["onPayload", "onResponse", "onProviderStreamEvent"]) {
    for (const style of ["throw", "reject", "non-Error"]) {
      const fn =
        style === "throw" ? () => { throw new Error(`${hook} broke`); }
        : style === "reject" ? async () => { throw new Error(`${hook} broke`); }
        : () => { throw `${hook} broke`; }; // eslint-disable-line no-throw-literal
      const x = await run([{ sse: wire[API].text("ok") }], { [hook]: fn });
      assert.equal(x.result.stopReason, "error", `${hook} ${style}`);
      assert.equal(x.result.errorMessage, `${hook} broke`, `${hook} ${style}`);
      assert.equal(x.requests.length, hook === "onPayload" ? 0 : 1);
      assert.deepEqual(x.types, hook === "onProviderStreamEvent" ? ["start", "error"] : ["error"], `${hook} ${style}`);
    }
  }
});

test("P-6.2.4 a throwing onProviderStreamEvent cancels the body (the server sees the close)", P, async () => {
  const sse = wire[API].text("x".repeat(200));
  const x = await run([{ sse, stallAtEnd: true }], { onProviderStreamEvent: () => { throw new Error("stop reading"); } });
  assert.equal(x.result.errorMessage, "stop reading");
  assert.equal(await closedWithin(x.requests[0]), true);
});

test("P-6.2.4 async hooks are awaited in order with the stream", P, async () => {
  const log = [];
  const x = await run([{ sse: wire[API].text("abc") }], {
    async onPayload() { await new Promise((r) => setTimeout(r, 10)); log.push("payload"); },
    async onResponse() { await new Promise((r) => setTimeout(r, 10)); log.push("response"); },
    async onProviderStreamEvent(d) { await new Promise((r) => setTimeout(r, 1)); log.push(d.type); },
  });
  assert.equal(x.result.stopReason, "stop");
  assert.deepEqual(log.slice(0, 3), ["payload", "response", "message_start"]);
  assert.equal(log.at(-1), "message_stop");
});

// ------------------------------------------------------------------------------------------------------------------
// Never throws (P-6.1.1, P-6.1.2)
// ------------------------------------------------------------------------------------------------------------------

function recordingFetch() {
  const calls = [];
  const fetch = (url, init) => {
    calls.push({ url, init });
    return Promise.reject(new TypeError("network down (recording fetch)"));
  };
  return { calls, fetch };
}

test("P-6.1.1 an unknown api (or a missing/non-object model) → a lone error naming it", P, async () => {
  for (const [model, api] of [[{ api: "bedrock-converse-stream", provider: "x", id: "m" }, "bedrock-converse-stream"], [null, "undefined"], [undefined, "undefined"], [42, "undefined"], [{ provider: "x" }, "undefined"]]) {
    let stream;
    assert.doesNotThrow(() => (stream = streamBuiltin(model, ctx(), {})));
    const x = await drain(stream);
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.result.stopReason, "error");
    assert.equal(x.result.errorMessage, `No built-in provider for api "${api}". Pass streamFn or call setDefaultStreamFn().`);
  }
});

test("P-6.1.2 streamBuiltin returns synchronously and never throws for odd options (fetch failures become errors)", P, async () => {
  const calls = [];
  const fetch = async (url, init) => {
    calls.push({ url, init });
    return new Response('{"error":{"message":"recorded"}}', { status: 400 });
  };
  const r = server.route();
  r.repeat = true;
  r.reply(fail(400, "bad request"));
  const model = providerModel("openai-completions", r.baseUrl);
  const weird = [
    undefined, null, "options", 5, [],
    { fetch, maxRetries: 0, headers: "not an object" },
    { fetch, maxRetries: -1, maxRetryDelayMs: NaN, timeoutMs: "soon" },
    { fetch, maxRetries: 0, temperature: "hot", maxTokens: -5, reasoning: 3, samplingParams: 7 },
    { fetch: () => { throw new Error("sync fetch failure"); }, maxRetries: 0 },
    { fetch: () => 42, maxRetries: 0 },
    { fetch: async () => ({ status: 200, headers: new Headers(), body: null }), maxRetries: 0 },
    { fetch: async () => ({ status: 200, headers: new Headers(), body: { getReader: () => ({ read: async () => { throw new Error("read failed"); } }) } }), maxRetries: 0 },
  ];
  for (const options of weird) {
    let stream;
    assert.doesNotThrow(() => (stream = streamBuiltin(model, ctx(), options)), JSON.stringify(options));
    const x = await Promise.race([drain(stream), new Promise((_, rej) => setTimeout(() => rej(new Error("no terminal event")), 3000))]);
    assert.equal(x.final.type, "error", JSON.stringify(options));
    assert.equal(x.result.stopReason, "error");
    assert.equal(typeof x.result.errorMessage, "string");
  }
  assert.ok(calls.length >= 3);
  assert.ok(calls.every((c) => c.url === `${r.baseUrl}/chat/completions` && c.init.method === "POST"));
  assert.ok(r.requests.length >= 5, "options without fetch use globalThis.fetch");
});

test("P-6.1.2 an error-ish fetch result: sync throw and read failure keep their messages", P, async () => {
  const model = providerModel("openai-completions", "http://x.invalid");
  let x = await drain(streamBuiltin(model, ctx(), { maxRetries: 0, fetch: () => { throw new Error("sync fetch failure"); } }));
  assert.equal(x.result.errorMessage, "sync fetch failure");
  x = await drain(streamBuiltin(model, ctx(), {
    maxRetries: 0,
    fetch: async () => new Response(new ReadableStream({ pull(c) { c.error(new Error("read failed")); } }), { status: 200 }),
  }));
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.errorMessage, "read failed");
});

test(
  "P-6.1.2 a context that is not an object with a messages array → error event, no request",
  bug("streamBuiltin treats a non-object context (null, 5, \"x\") or a non-array context.messages as an empty transcript and sends the request anyway (src/js/providers.rs `run`: `_ => Vec::new()`), so a caller bug becomes a paid, empty API call instead of an error event"),
  async () => {
    for (const context of [null, 5, "context", { messages: 3 }, { messages: null }]) {
      const { fetch, calls } = recordingFetch();
      let stream;
      assert.doesNotThrow(() => (stream = streamBuiltin(providerModel("openai-completions", "http://127.0.0.1:9"), context, { fetch, maxRetries: 0 })));
      const x = await drain(stream);
      assert.deepEqual(x.types, ["error"], JSON.stringify(context));
      assert.equal(calls.length, 0, `${JSON.stringify(context)}: a request was sent`);
    }
  },
);

test("P-6.1.2 a non-object context never throws (error event or a request, never an exception)", P, async () => {
  for (const context of [null, undefined, 5, "context", { messages: 3 }]) {
    const { fetch } = recordingFetch();
    let stream;
    assert.doesNotThrow(() => (stream = streamBuiltin(providerModel("openai-completions", "http://127.0.0.1:9"), context, { fetch, maxRetries: 0 })));
    const x = await drain(stream);
    assert.equal(x.final.type, "error");
  }
});

test("P-6.1.2 hostile model and messages (throwing getters, cycles) → error event or request, never an exception", P, async () => {
  const cyclic = { role: "user", content: "hi", timestamp: 1 };
  cyclic.self = cyclic;
  const hostile = new Proxy({}, { get() { throw new Error("trap"); } });
  const { fetch } = recordingFetch();
  for (const [model, context] of [
    [hostile, ctx()],
    [providerModel("openai-completions", "http://127.0.0.1:9"), { messages: [cyclic] }],
    [providerModel("openai-completions", "http://127.0.0.1:9"), hostile],
    [{ ...providerModel("openai-completions", "http://127.0.0.1:9"), headers: hostile }, ctx()],
  ]) {
    let stream;
    assert.doesNotThrow(() => (stream = streamBuiltin(model, context, { fetch, maxRetries: 0 })));
    const x = await Promise.race([drain(stream), new Promise((_, rej) => setTimeout(() => rej(new Error("no terminal event")), 3000))]);
    assert.equal(x.final.type, "error");
  }
});

test("§1.1 BUILTIN_APIS lists the four wire formats", P, async () => {
  const { BUILTIN_APIS } = await import("./providers-common.mjs");
  assert.deepEqual([...BUILTIN_APIS].sort(), [...APIS].sort());
  assert.ok(Object.isFrozen(BUILTIN_APIS));
});
