// Issue 34: big payloads stay out of wasm memory. A request's images, long texts and tool results are left in JS
// (markers in the text the wire formats build, the originals put into the body in JS), so the instance's linear
// memory, which never shrinks, grows by no more than a small budget whatever the payloads weigh. Each scenario runs
// memory-payloads-child.mjs in a fresh Node process and also compares the body with pi-ai 1.6.0's, byte for byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { IS_REFERENCE } from "./impl.mjs";
import { runChild } from "./child-runner.mjs";

const CHILD = fileURLToPath(new URL("./memory-payloads-child.mjs", import.meta.url));
const OURS = { skip: IS_REFERENCE && "ours only (wasm memory)", timeout: 120000 };
const MiB = 1024 * 1024;
/** The README's budget: the most a request of any size may add to the instance's memory once it is warm. */
const BUDGET = 1 * MiB;

/**
 * What JS may still hold once a scenario's requests ended (heap and buffers after a full GC, the wasm memory apart):
 * below the smallest payload here (1.5 MB), so a JS-side table that kept any payload fails.
 */
const JS_BUDGET = 1 * MiB;

async function child(scenario, args) {
  const out = (await runChild(CHILD, scenario, args, { nodeFlags: ["--max-old-space-size=3072", "--expose-gc"], killAfterMs: 110000 })).out;
  assert.equal(out.error, undefined, out.error);
  assert.equal(typeof out.jsGrown, "number", "the JS side was measured");
  assert.ok(out.jsGrown < JS_BUDGET, `${scenario}: JS still holds ${out.jsGrown} more bytes after a full GC`);
  return out;
}

test("issue 34: ten 1.5 MB images, 20 requests through openai-completions: wasm memory grows by less than 1 MiB, bytes as pi-ai's", OURS, async () => {
  const out = await child("images", { api: "openai-completions", mib: 1.5, count: 10, rounds: 20 });
  assert.equal(out.bytes.same, true, "the body is pi-ai's, byte for byte");
  assert.ok(out.bytes.length > 15 * MiB, `a ${out.bytes.length}-byte body`);
  assert.ok(out.grown < BUDGET, `wasm memory grew ${out.grown} bytes over 20 requests of ${out.bodyLength} bytes`);
});

test("issue 34: a 50 MB tool result, every wire format: wasm memory grows by less than 1 MiB, the body as pi-ai's", OURS, async () => {
  const apis = ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"];
  const out = await child("tool-result", { apis, mib: 50 });
  for (const api of apis) {
    const got = out.apis[api];
    assert.equal(got.same, true, `${api}: the body is pi-ai's (google-generative-ai: the same JSON, its SDK's key order)`);
    assert.ok(got.length > 50 * MiB, `${api}: a ${got.length}-byte body`);
    assert.ok(got.grown < BUDGET, `${api}: wasm memory grew ${got.grown} bytes for two 50 MB requests`);
  }
});

test("issue 34: a 20 MB tool call streamed in 16 KiB fragments: wasm memory grows by less than 1 MiB over a 1 MiB one's, arguments as pi-ai's", OURS, async () => {
  const apis = ["openai-completions", "anthropic-messages"];
  const out = await child("tool-args", { apis, mib: 20 });
  for (const api of apis) {
    const got = out.apis[api];
    assert.equal(got.type, "done", api);
    assert.equal(got.exact, true, `${api}: the arguments are the streamed object`);
    assert.equal(got.sameArguments, true, `${api}: the arguments are pi-ai's`);
    assert.ok(got.grown < BUDGET, `${api}: wasm memory grew ${got.grown} bytes for a 20 MB tool call`);
  }
});

// One SSE line of 20 MB: a text, a thinking text or a whole tool call in one delta (Responses repeats the call's
// arguments in three more lines, each ~20 MB). Each case runs in its own process: linear memory never shrinks, so a
// case that grew it would hide the growth of the next.
for (const api of ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"]) {
  const kinds = api === "openai-responses" || api === "google-generative-ai" ? ["text", "call"] : ["text", "thinking", "call"];
  test(`issue 34: one 20 MB SSE line (${api}: ${kinds.join(", ")}): wasm memory grows by less than 1 MiB, events and message as pi-ai's`, OURS, async () => {
    for (const kind of kinds) {
      const out = await child("sse-line", { apis: [api], kinds: [kind], mib: 20 });
      const got = out.cases?.[`${api} ${kind}`];
      assert.ok(got, `${kind}: ${JSON.stringify(out).slice(0, 500)}`);
      assert.equal(got.error, undefined, kind);
      assert.equal(got.stopReason, kind === "call" ? "toolUse" : "stop", kind);
      assert.ok(got.lineBytes > 20 * MiB, `${kind}: a ${got.lineBytes}-byte stream`);
      assert.equal(got.sameEvents, true, `${kind}: the events are pi-ai's; ${got.firstDifference}`);
      assert.equal(got.sameMessage, true, `${kind}: the message is pi-ai's`);
      assert.ok(got.grown < BUDGET, `${kind}: wasm memory grew ${got.grown} bytes for a 20 MB line`);
    }
  });
}

test("issue 34: snapshots and checkpoints holding long strings restore exactly (kept in JS, put back as they were)", OURS, async () => {
  const { Agent } = await import("./impl.mjs");
  const long = (seed) => `${seed}:`.padEnd(5000, "x");
  const odd = [
    long("plain"),
    `\uFDD0s0.5\uFDD1`, // a caller string that looks like a marker
    `${long("mark")}\uFDD0`,
    `${long("lone")}\ud83d`, // a lone surrogate in a long string
    "short",
  ];
  const messages = [
    { role: "user", content: [{ type: "text", text: odd[0] }, { type: "image", data: long("img"), mimeType: "image/png" }], timestamp: 1 },
    { role: "user", content: odd.slice(1).join("|"), timestamp: 2 },
    { role: "user", content: odd[1], timestamp: 3 },
    { role: "user", content: odd[3], timestamp: 4 },
  ];
  const checkpoints = [];
  const agent = new Agent({ initialState: { messages: [] }, onCheckpoint: (c) => checkpoints.push(JSON.stringify(c)) });
  agent.state.messages = messages;
  await new Promise((r) => setTimeout(r, 0));
  const snapshot = agent.snapshot();
  assert.deepEqual(snapshot.messages, messages);
  for (const input of [snapshot, JSON.stringify(snapshot), checkpoints, [JSON.stringify(snapshot)]]) {
    const restored = Agent.restore(input, {});
    assert.deepEqual(restored.state.messages, messages, typeof input);
  }
});

test("issue 34: validating a 20 MB string argument grows wasm memory by less than 1 MiB", OURS, async () => {
  const out = await child("validate", { mib: 20 });
  assert.equal(out.valid, true, "the validated arguments hold the string");
  assert.ok(out.grown < BUDGET, `wasm memory grew ${out.grown} bytes validating a 20 MB argument`);
});

test("issue 34: long string arguments are validated as pi-ai validates them, whatever the schema asks of them", OURS, async () => {
  // A long string reaches the validator as a marker where the schema only asks for a string, and as its text anywhere
  // else: every keyword that reads a string, coerces it or compares it, and the error texts, against pi-ai's own.
  const ours = (await import("../../pkg/dist/node/index.mjs")).validateToolArguments;
  const { validateToolArguments: theirs } = await import("@earendil-works/pi-ai");
  const long = (c, n = 3000) => c.repeat(n);
  const digits = `${"0".repeat(2000)}42`;
  const cases = [
    [{ type: "string" }, long("x")],
    [{ type: "string", minLength: 5000 }, long("x")],
    [{ type: "string", maxLength: 2999 }, long("x")],
    [{ type: "string", pattern: "^x+$" }, long("x")],
    [{ type: "string", pattern: "^y" }, long("x")],
    [{ type: "string", format: "uri" }, `https://a.example/${long("p")}`],
    [{ type: "string", enum: [long("x"), "b"] }, long("x")],
    [{ type: "string", const: long("x", 2999) }, long("x")],
    [{ type: "number" }, digits],
    [{ type: "integer" }, ` ${digits} `],
    [{ type: "boolean" }, long("t")],
    [{ type: ["string", "number"] }, digits],
    [{ anyOf: [{ type: "number" }, { type: "string" }] }, digits],
    [{ type: "string", description: "file content", title: "content" }, `${long("é😀")}\ud83d`],
    [{ type: "object" }, long("x")],
  ];
  let compared = 0;
  for (const [leaf, v] of cases) {
    for (const wrap of ["property", "item", "additional", "pattern"]) {
      const parameters =
        wrap === "property" ? { type: "object", properties: { content: leaf, path: { type: "string" } }, required: ["path"] }
        : wrap === "item" ? { type: "object", properties: { content: { type: "array", items: leaf } } }
        : wrap === "additional" ? { type: "object", additionalProperties: leaf }
        : { type: "object", patternProperties: { "^c": leaf } };
      const args = wrap === "item" ? { content: [v, v] } : { content: v, path: 7 };
      const tool = { name: "write", description: "w", parameters };
      const call = { type: "toolCall", id: "c1", name: "write", arguments: args };
      const run = (f) => {
        try {
          return { ok: JSON.stringify(f(tool, call)) };
        } catch (e) {
          return { error: `${e.constructor.name}: ${e.message}` };
        }
      };
      assert.deepEqual(run(ours), run(theirs), `${JSON.stringify(leaf).slice(0, 80)} as ${wrap}`);
      compared++;
    }
  }
  assert.equal(compared, cases.length * 4);
});

// The peer table's memory row, as a test: bench/peers/memory.mjs runs 1,000 concurrent runs of 5 steps × 3 tools
// (scripted streams, after a warm-up) in a fresh process and reports what stays once they finished: the JS heap after
// a full GC (median of three settled samples) minus the same before, plus the growth of the wasm memory (which never
// shrinks: it is the runs' state at their peak) and of wasm-bindgen's externref table within the heap (it grows to
// the most JS values Rust held at once, and never shrinks either). Then what a second batch adds.
const BURST = fileURLToPath(new URL("../../bench/peers/memory.mjs", import.meta.url));

test("issue 34: after a burst of 1,000 concurrent runs the process keeps less than 1 MiB (JS heap after a full GC + wasm memory grown)", OURS, async () => {
  const { out } = await runChild(BURST, "ours", 1000, { nodeFlags: ["--expose-gc", "--no-flush-bytecode"], killAfterMs: 110000 });
  assert.equal(out.tools, 15000, "every run ran its 15 tools");
  assert.equal(out.wasmMeasured, true, "the instance's wasm memory was found and measured");
  assert.equal(typeof out.wasmGrowth, "number");
  const figures = `heap +${out.heapGrowth} bytes, wasm +${out.wasmGrowth} bytes`;
  assert.ok(out.retained <= BUDGET, `kept ${out.retained} bytes after 1,000 runs (${figures})`);
  assert.ok(out.retainedAgain < BUDGET / 4, `a second batch of 1,000 added ${out.retainedAgain} bytes`);
});
