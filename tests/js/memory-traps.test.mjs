// Issue 13: bounded memory and no trap anywhere, on the built package. Each case runs
// memory-traps-child.mjs in its own Node process (--expose-gc, a capped JS heap, and for the trap
// cases a wasm memory capped at 64 MiB with --wasm-max-mem-pages), because the cases move tens of
// megabytes or poison the instance. The child reports what it saw as JSON, including every uncaught
// exception and unhandled rejection; each case asserts there were none and that stderr is empty.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { IS_REFERENCE } from "./impl.mjs";
import { runChild } from "./child-runner.mjs";

const CHILD = fileURLToPath(new URL("./memory-traps-child.mjs", import.meta.url));
const OURS = { skip: IS_REFERENCE && "ours only (wasm memory, the poisoned instance)", timeout: 60000 };
const MiB = 1024 * 1024;
const POISONED = "agent-loop-wasm: the WebAssembly instance failed and can no longer be used (RuntimeError: unreachable)";
/** 64 MiB of wasm memory: room for the package, not for the payloads the trap cases send. */
const CAPPED = ["--wasm-max-mem-pages=1024"];

async function child(scenario, args, flags = []) {
  const { out, stderr } = await runChild(CHILD, scenario, args, { nodeFlags: ["--expose-gc", "--max-old-space-size=1536", ...flags] });
  assert.equal(stderr, "", "nothing on stderr");
  assert.deepEqual(out.uncaught, [], "no uncaught exception, no unhandled rejection");
  return out;
}

const DONE_TYPES = ["start", "text_start", "text_delta", "text_end", "done"];

test("issue 13: one SSE line over the 64 MiB default ends the request with a stream error, the instance stays usable", OURS, async () => {
  const out = await child("line-limit", { size: 64 * MiB + MiB });
  assert.deepEqual(out.big, {
    types: ["start", "error"],
    stopReason: "error",
    errorMessage: "Provider stream event exceeds the limit of 67108864 bytes (maxStreamEventBytes)",
    textLength: 0,
  });
  assert.equal(out.closedEarly, true, "the response body was cancelled");
  // The decoder held at most the limit (plus its ordinary buffers), not a copy per stage.
  assert.ok(out.grown <= 80 * MiB, `wasm memory grew ${out.grown} bytes`);
  assert.deepEqual(out.after, { types: DONE_TYPES, stopReason: "stop", textLength: 4 }, "the next request works");
});

test("issue 13: maxStreamEventBytes sets the limit; a line under it is delivered whole", OURS, async () => {
  const over = await child("line-limit", { size: 2 * MiB, limit: MiB });
  assert.deepEqual(over.big, {
    types: ["start", "error"],
    stopReason: "error",
    errorMessage: "Provider stream event exceeds the limit of 1048576 bytes (maxStreamEventBytes)",
    textLength: 0,
  });
  assert.deepEqual(over.after, { types: DONE_TYPES, stopReason: "stop", textLength: 4 }, "a small event under the same limit");
  const under = await child("line-limit", { size: 900 * 1024, limit: MiB });
  assert.deepEqual(under.big, { types: DONE_TYPES, stopReason: "stop", textLength: 900 * 1024 });
  assert.deepEqual(under.after, { types: DONE_TYPES, stopReason: "stop", textLength: 4 });
});

test("issue 13: an oversized line through agentLoop ends the run with the error message and agent_end", OURS, async () => {
  const out = await child("line-limit-loop", { size: 2 * MiB, limit: MiB });
  const error = "Provider stream event exceeds the limit of 1048576 bytes (maxStreamEventBytes)";
  assert.deepEqual(out.events, [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", role: "user" },
    { type: "message_end", role: "user" },
    { type: "message_start", role: "assistant", stopReason: "pending" },
    { type: "message_end", role: "assistant", stopReason: "error", errorMessage: error },
    { type: "turn_end", role: "assistant", stopReason: "error", errorMessage: error },
    { type: "agent_end", messages: ["user", "assistant"] },
  ]);
  assert.equal(out.next, null, "not poisoned: the next call works");
});

test("issue 13: a 20 MB line costs at most ~3x its size in wasm memory, and a second one grows nothing", OURS, async () => {
  const size = 20 * MiB;
  const out = await child("big-line-memory", { size });
  const whole = { types: DONE_TYPES, stopReason: "stop", textLength: size };
  assert.deepEqual(out.first, whole);
  assert.deepEqual(out.second, whole);
  assert.ok(out.firstGrowth <= 3.25 * size, `first line grew wasm memory by ${out.firstGrowth} bytes (${(out.firstGrowth / size).toFixed(2)}x)`);
  // Reused, not grown again: at most a few pages where the heap's layout differs the second time (Node 18 once grew
  // 2 pages, 128 KiB, against the 20 MB line), never another copy of the line.
  assert.ok(out.secondGrowth <= MiB, `the memory of the first line is reused: the second grew it by ${out.secondGrowth} bytes`);
});

test("issue 13: 1,000 validations with fresh 100 KB schemas keep wasm memory flat", OURS, async () => {
  const out = await child("fresh-schemas", { count: 1000, schemaBytes: 100 * 1024 });
  const { marks } = out;
  assert.ok(marks[1000] - marks[300] <= MiB, `grew ${marks[1000] - marks[300]} bytes from call 300 to 1000`);
  assert.ok(marks[1000] - marks[100] <= 8 * MiB, `grew ${marks[1000] - marks[100]} bytes from call 100 to 1000`);
});

test("issue 13: the schema cache keeps nothing for parameters objects JS has dropped", OURS, async () => {
  const out = await child("collected-schemas", { count: 200 });
  assert.equal(out.validated, 200);
  assert.ok(out.alive <= 2, `${out.alive} of the dropped parameters objects still held after collection`);
});

test("issue 13: finished runs and requests leave no task on the executor", OURS, async () => {
  const { before, after } = await child("no-live-tasks", {});
  assert.deepEqual({ before, after }, { before: 0, after: 0 });
});

test("issue 13/43: an event larger than the capped wasm memory is read in JS: the built-in providers use no wasm memory", OURS, async () => {
  // maxStreamEventBytes above what the capped wasm memory could hold: 100 MiB of short data lines, then a line of
  // 100 MiB that is not JSON (the P-6.3.2 error). Neither touches wasm memory, which stays as it was.
  const out = await child("sse-huge-event", { size: 100 * MiB }, CAPPED);
  assert.deepEqual(out.big, { types: DONE_TYPES, stopReason: "stop", textLength: 1 });
  assert.deepEqual(out.after, { types: DONE_TYPES, stopReason: "stop", textLength: 4 });
  assert.equal(out.grew, 0, "wasm memory did not grow");
  assert.equal(out.next, null, "not poisoned");
  const invalid = await child("sse-huge-event", { size: 100 * MiB, invalid: true }, CAPPED);
  assert.deepEqual(invalid.big.types, ["start", "error"]);
  assert.match(invalid.big.errorMessage, /^Invalid JSON in provider stream: /);
  assert.deepEqual(invalid.after, { types: DONE_TYPES, stopReason: "stop", textLength: 4 });
  assert.equal(invalid.grew, 0, "wasm memory did not grow");
});

/** The events of a loop run whose tool call was executing when the instance trapped (D1.2 ending from JS). */
const TRAPPED_DURING_TOOL = [
  { type: "agent_start" },
  { type: "turn_start" },
  { type: "message_start", role: "system" },
  { type: "message_end", role: "system" },
  { type: "message_start", role: "user" },
  { type: "message_end", role: "user" },
  { type: "message_start", role: "assistant", stopReason: "toolUse" },
  { type: "message_end", role: "assistant", stopReason: "toolUse" },
  { type: "tool_execution_start" },
  { type: "tool_execution_end", isError: true, text: POISONED },
  { type: "message_start", role: "toolResult" },
  { type: "message_end", role: "toolResult" },
  { type: "turn_end", role: "assistant", stopReason: "toolUse" },
  { type: "turn_start" },
  { type: "message_start", role: "assistant", stopReason: "error", errorMessage: POISONED },
  { type: "message_end", role: "assistant", stopReason: "error", errorMessage: POISONED },
  { type: "turn_end", role: "assistant", stopReason: "error", errorMessage: POISONED },
  { type: "agent_end", messages: ["system", "user", "assistant", "toolResult", "assistant"] },
];

for (const mode of ["agentLoop", "runAgentLoop"]) {
  test(`issue 13, E-8.4.2: a trap inside a ${mode} run ends it from JS (tool result, error message, agent_end) and poisons the instance`, OURS, async () => {
    // A tool's error message of 80 MiB, read whole into the 64 MiB of wasm memory: that allocation aborts.
    const out = await child("trap-in-run", { size: 80 * MiB, mode }, CAPPED);
    assert.deepEqual(out.events, TRAPPED_DURING_TOOL);
    assert.deepEqual(out.result, ["system", "user", "assistant", "toolResult", "assistant"]);
    assert.equal(out.next, POISONED, "the next call throws the poisoned error");
  });
}

test("issue 13, E-8.4.2: a trap inside an Agent run: failure events to listeners, prompt() resolves, the agent is idle", OURS, async () => {
  const out = await child("trap-in-run", { size: 80 * MiB, mode: "agent" }, CAPPED);
  assert.deepEqual(out.events, [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", role: "user" },
    { type: "message_end", role: "user" },
    { type: "message_start", role: "assistant", stopReason: "toolUse" },
    { type: "message_end", role: "assistant", stopReason: "toolUse" },
    { type: "tool_execution_start" },
    // as for a listener failure.
    { type: "message_start", role: "assistant", stopReason: "error", errorMessage: POISONED },
    { type: "message_end", role: "assistant", stopReason: "error", errorMessage: POISONED },
    { type: "turn_end", role: "assistant", stopReason: "error", errorMessage: POISONED },
    { type: "agent_end", messages: ["assistant"] },
  ]);
  assert.deepEqual(out.result, {
    outcome: "resolved",
    isStreaming: false,
    errorMessage: POISONED,
    pendingToolCalls: 0,
    roles: ["system", "user", "assistant", "assistant"],
    idle: true,
  });
  assert.equal(out.next, POISONED);
  assert.equal(out.promptError, POISONED, "a new Agent is refused too");
});

test("issue 13: stream chunks are read as a TextDecoder reads them (any view's bytes, an ArrayBuffer); others end the request", OURS, async () => {
  const { streamBuiltin } = await import("../../pkg/dist/node/index.mjs");
  const sse = (text) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
  const body = `${sse("")}${sse("héllo")}data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;
  const bytes = new TextEncoder().encode(body);
  const model = { id: "m", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9/v1", input: ["text"], maxTokens: 100 };
  const run = async (chunks) => {
    const fetch = async () =>
      new Response(new ReadableStream({ start(c) { for (const chunk of chunks) c.enqueue(chunk); c.close(); } }), { status: 200 });
    let last;
    for await (const event of streamBuiltin(model, { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "k", fetch })) last = event;
    return last.type === "done" ? last.message.content[0].text : `${last.type}: ${last.error.errorMessage}`;
  };
  const half = 40;
  // A DataView and a Uint16Array over parts of one buffer, with offsets; then an ArrayBuffer.
  const padded = new Uint8Array(bytes.length + 8);
  padded.set(bytes, 4);
  const view = new DataView(padded.buffer, 4, half);
  const rest = bytes.slice(half);
  assert.equal(await run([view, rest.buffer]), "héllo");
  const even = bytes.length % 2 === 0 ? bytes : Uint8Array.from([...bytes, 10]);
  assert.equal(await run([new Uint16Array(even.buffer.slice(0))]), "héllo");
  assert.equal(await run(["data: x\n\n"]), "error: Provider stream chunk is not an ArrayBuffer or a view of one");
});
