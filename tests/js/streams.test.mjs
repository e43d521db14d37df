// File-level tests of the stream classes in pkg-template/streams.js (SPEC API-1.5.1–API-1.5.3).
// They import the template file directly, so they run without a wasm build; with AGENT_LOOP_IMPL=reference they run
// on pi-ai 1.6.0's classes, the behaviour these copy.
import { test } from "node:test";
import assert from "node:assert/strict";

const { EventStream, AssistantMessageEventStream, createAssistantMessageEventStream } =
  process.env.AGENT_LOOP_IMPL === "reference" ? await import("@earendil-works/pi-ai") : await import("../../pkg-template/streams.js");
/** The marker and `hasResult()` are this library's (the core's handle on a stream); pi-ai's classes have neither. */
const OURS = process.env.AGENT_LOOP_IMPL !== "reference";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** "pending", or ["resolved", value], after letting timers and microtasks run. */
async function state(promise) {
  let seen = "pending";
  promise.then((value) => {
    seen = ["resolved", value];
  });
  await sleep(5);
  return seen;
}

async function drain(stream) {
  const out = [];
  for await (const event of stream) out.push(event);
  return out;
}

const endsAt = (name) => new EventStream((e) => e.type === name, (e) => e.value);

function assistantMessage(overrides = {}) {
  return {
    role: "assistant",
    content: [],
    api: "faux",
    provider: "faux",
    model: "m",
    usage: {
      input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: Date.now(),
    ...overrides,
  };
}

test("API-1.5.1 a completing event ends the stream, is still delivered and sets the result", async () => {
  const s = endsAt("end");
  s.push({ type: "a" });
  s.push({ type: "end", value: 42 });
  assert.deepEqual((await drain(s)).map((e) => e.type), ["a", "end"]);
  assert.equal(await s.result(), 42);
});

test("API-1.5.1 push after done is ignored", async () => {
  const s = endsAt("end");
  s.push({ type: "end", value: 1 });
  s.push({ type: "late", value: 2 });
  s.end(3);
  assert.deepEqual((await drain(s)).map((e) => e.type), ["end"]);
  assert.equal(await s.result(), 1, "the first result wins");

  const t = endsAt("end");
  t.end();
  t.push({ type: "end", value: 9 });
  assert.deepEqual(await drain(t), []);
  assert.equal(await state(t.result()), "pending");
});

test("API-1.5.1 end() without a result leaves result() pending", async () => {
  const s = endsAt("end");
  s.push({ type: "a" });
  s.end();
  assert.deepEqual((await drain(s)).map((e) => e.type), ["a"]);
  assert.equal(await state(s.result()), "pending");
  if (OURS) assert.equal(s.hasResult(), false, "the core learns at once that no result will come");
});

test("API-1.5.1 end(r) sets the result only when r is not undefined", async () => {
  const s = endsAt("end");
  s.end(undefined);
  assert.equal(await state(s.result()), "pending");
  s.end(null);
  assert.deepEqual(await state(s.result()), ["resolved", null]);

  const t = endsAt("end");
  t.end(0);
  assert.equal(await t.result(), 0);
  assert.equal(t.result(), t.result(), "result() returns one promise");
});

test("API-1.5.1 iteration after done drains the queued events", async () => {
  const s = endsAt("end");
  for (let i = 0; i < 5; i++) s.push({ type: "n", value: i });
  s.end("r");
  if (OURS) assert.equal(s.hasResult(), true);
  assert.deepEqual((await drain(s)).map((e) => e.value), [0, 1, 2, 3, 4]);
  assert.deepEqual(await drain(s), [], "each event is delivered once");
  assert.equal(await s.result(), "r");
});

test("API-1.5.1 a waiting consumer receives events in order and stops at the end", async () => {
  const s = endsAt("end");
  const seen = drain(s);
  await sleep(1);
  s.push({ type: "n", value: 1 });
  await sleep(1);
  s.push({ type: "n", value: 2 });
  s.push({ type: "n", value: 3 });
  s.push({ type: "end", value: "done" });
  s.push({ type: "n", value: 4 });
  assert.deepEqual((await seen).map((e) => e.value), [1, 2, 3, "done"]);
});

test("API-1.5.1 end() wakes a waiting consumer", async () => {
  const s = endsAt("end");
  const it = s[Symbol.asyncIterator]();
  const pending = it.next();
  s.end();
  assert.deepEqual(await pending, { value: undefined, done: true });
  assert.deepEqual(await it.next(), { value: undefined, done: true });
});

test("API-1.5.1 break ends one reader only; a new reader continues the queue", async () => {
  const s = endsAt("end");
  for (let i = 0; i < 4; i++) s.push({ type: "n", value: i });
  const first = [];
  for await (const e of s) {
    first.push(e.value);
    if (e.value === 1) break;
  }
  s.end();
  assert.deepEqual(first, [0, 1]);
  assert.deepEqual((await drain(s)).map((e) => e.value), [2, 3]);
});

test("API-1.5.1 many events keep their order across queue compaction", async () => {
  const s = new EventStream((e) => e === -1, () => "r");
  const n = 50_000;
  for (let i = 0; i < n; i++) s.push(i);
  const out = [];
  const it = s[Symbol.asyncIterator]();
  for (let i = 0; i < n / 2; i++) out.push((await it.next()).value);
  for (let i = n; i < n + 3000; i++) s.push(i); // interleave pushes with a half-drained queue
  s.push(-1);
  for (;;) {
    const step = await it.next();
    if (step.done) break;
    out.push(step.value);
  }
  assert.equal(out.length, n + 3001);
  for (let i = 0; i < n + 3000; i++) assert.equal(out[i], i);
  assert.equal(out[n + 3000], -1);
  assert.equal(await s.result(), "r");
});

test("API-1.5.1 result() never rejects: no unhandled rejection from a stream left pending", async () => {
  const rejections = [];
  const onRejection = (reason) => rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  try {
    // Streams that end without a result, are abandoned, or are never read: nobody awaits result().
    const a = endsAt("end");
    a.end();
    const b = createAssistantMessageEventStream();
    b.push({ type: "start", partial: assistantMessage({ stopReason: "pending" }) });
    b.end();
    const c = new AssistantMessageEventStream();
    c.result();
    a.result();
    await drain(a);
    await drain(b);
    await sleep(20);
    assert.deepEqual(rejections, []);
    assert.equal(await state(b.result()), "pending");
  } finally {
    process.off("unhandledRejection", onRejection);
  }
});

test("API-1.5.2 AssistantMessageEventStream completes on done with done.message", async () => {
  const s = createAssistantMessageEventStream();
  assert.ok(s instanceof AssistantMessageEventStream);
  assert.ok(s instanceof EventStream);
  const msg = assistantMessage();
  s.push({ type: "start", partial: msg });
  s.push({ type: "text_start", contentIndex: 0, partial: msg });
  s.push({ type: "done", reason: "stop", message: msg });
  s.push({ type: "text_delta", contentIndex: 0, delta: "late", partial: msg });
  assert.deepEqual((await drain(s)).map((e) => e.type), ["start", "text_start", "done"]);
  assert.equal(await s.result(), msg);
});

test("API-1.5.2 AssistantMessageEventStream completes on error with error.error", async () => {
  const s = new AssistantMessageEventStream();
  const failure = assistantMessage({ stopReason: "error", errorMessage: "boom" });
  s.push({ type: "error", reason: "error", error: failure });
  assert.equal(await s.result(), failure);
  assert.equal(typeof failure.durationMs, "number");
});

test("API-1.5.2 durationMs is the rounded monotonic time since creation, added as the last key", async () => {
  const s = new AssistantMessageEventStream();
  const msg = assistantMessage();
  await sleep(30);
  s.push({ type: "done", reason: "stop", message: msg });
  assert.ok(Number.isInteger(msg.durationMs));
  assert.ok(msg.durationMs >= 25 && msg.durationMs < 5000, `durationMs ${msg.durationMs}`);
  const keys = Object.keys(msg);
  assert.equal(keys[keys.length - 1], "durationMs");
});

test("API-1.5.2 end(message) stamps durationMs and sets the result", async () => {
  const s = new AssistantMessageEventStream();
  const msg = assistantMessage();
  s.end(msg);
  assert.equal(typeof msg.durationMs, "number");
  assert.equal(await s.result(), msg);
});

test("API-1.5.2 an existing durationMs is kept", async () => {
  const s = new AssistantMessageEventStream();
  const msg = assistantMessage({ durationMs: 1234 });
  s.push({ type: "done", reason: "stop", message: msg });
  assert.equal(msg.durationMs, 1234);
});

test("API-1.5.2 a message whose timestamp predates the stream is not timed", async () => {
  const old = assistantMessage({ timestamp: Date.now() - 60_000 });
  const s = new AssistantMessageEventStream();
  s.push({ type: "done", reason: "stop", message: old });
  assert.equal("durationMs" in old, false);
  assert.equal(await s.result(), old);
});

test("API-1.5.2 nothing is timed once the stream is done", async () => {
  const s = new AssistantMessageEventStream();
  const first = assistantMessage();
  s.push({ type: "done", reason: "stop", message: first });
  const second = assistantMessage({ timestamp: Date.now() + 10 });
  s.end(second);
  s.push({ type: "error", reason: "error", error: second });
  assert.equal("durationMs" in second, false);
  assert.equal(await s.result(), first);

  const ended = new AssistantMessageEventStream();
  ended.end();
  const late = assistantMessage({ timestamp: Date.now() + 10 });
  ended.push({ type: "done", reason: "stop", message: late });
  assert.equal("durationMs" in late, false);
});

test("API-1.5.3 the stream marker is a non-enumerable prototype property", { skip: !OURS && "the marker is ours" }, () => {
  const plain = new EventStream(() => false, () => undefined);
  const assistant = createAssistantMessageEventStream();
  for (const s of [plain, assistant]) {
    assert.equal(s.__agentLoopWasmStream, true);
    assert.equal(Object.prototype.hasOwnProperty.call(s, "__agentLoopWasmStream"), false);
    const keys = [];
    for (const key in s) keys.push(key);
    assert.equal(keys.includes("__agentLoopWasmStream"), false);
    assert.equal(typeof s.hasResult, "function");
  }
  class Custom extends EventStream {}
  assert.equal(new Custom(() => false, () => 0).__agentLoopWasmStream, true);
});

test("L-3.6.4 hasResult() reports whether a result is set or may still come", { skip: !OURS && "hasResult() is ours" }, () => {
  const open = endsAt("end");
  assert.equal(open.hasResult(), true, "not done: a result may still come");
  open.push({ type: "end", value: 1 });
  assert.equal(open.hasResult(), true);

  const bare = createAssistantMessageEventStream();
  bare.push({ type: "start", partial: assistantMessage({ stopReason: "pending" }) });
  bare.end();
  assert.equal(bare.hasResult(), false);
});
