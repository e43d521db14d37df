import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BLOCK, Assembler, applyOps, pushError, finalArguments, acceptsEmptyObject,
} from "../../pkg-template/providers/assemble.js";

/** Applies what `asm` queued to a fresh message; the message and the events. */
function built(asm, message = { role: "assistant", content: [] }) {
  const events = [];
  applyOps(asm.drain(), message, { push: (e) => events.push(e) });
  return { message, events, types: events.map((e) => e.type) };
}

test("issue 33: which schemas accept an empty object (issue_33_which_schemas_accept_an_empty_object)", () => {
  for (const yes of [{ type: "object", properties: {} }, {}, { type: ["object", "null"], required: [] }, true]) {
    assert.ok(acceptsEmptyObject(yes), JSON.stringify(yes));
  }
  for (const no of [
    { type: "object", required: ["a"] }, { type: "string" }, { minProperties: 1 }, { anyOf: [{ type: "object" }] },
    "\ufdd0v1.2\ufdd1", false, null, [], { type: 1 }, { required: "a" }, { minProperties: "0" }, { $ref: "#" },
    { not: {} }, { if: {} }, { oneOf: [] }, { allOf: [] }, { type: ["string"] },
  ]) {
    assert.ok(!acceptsEmptyObject(no), JSON.stringify(no));
  }
  assert.ok(acceptsEmptyObject(undefined), "a tool without parameters");
  assert.ok(acceptsEmptyObject({ minProperties: 0, required: [] }));
  // A present `null` member counts: `type: null` is no object type.
  assert.ok(!acceptsEmptyObject({ type: null }));
  assert.ok(!acceptsEmptyObject({ required: null }));
});

/** The `usage.cost` the assembler renders for these token counts. */
function cost(model, input, output, read, write) {
  const asm = Assembler.forModel(model, false);
  asm.usage({ input, output, cacheRead: read, cacheWrite: write });
  const [op] = asm.drain();
  assert.equal(op.op, "usage");
  return op.value.cost;
}

test("issue 42: cost tiers price a request above their threshold as the reference", () => {
  const model = { cost: { input: 2.5, output: 15, cacheRead: 0.25, cacheWrite: 0, tiers: [
    { inputTokensAbove: 272000, input: 5, output: 22.5, cacheRead: 0.5, cacheWrite: 0 },
    { inputTokensAbove: 500000, input: 7, output: 30, cacheRead: 0.7, cacheWrite: 0 },
    { input: 99 },
  ] } };
  const at = (input, read) => cost(model, input, 1000, read, 0);
  assert.equal(at(200_000, 72_000).input, (2.5 / 1e6) * 200_000);
  assert.equal(at(200_000, 72_001).input, (5 / 1e6) * 200_000);
  assert.equal(at(200_000, 72_001).output, (22.5 / 1e6) * 1000);
  assert.equal(at(200_000, 72_001).cacheRead, (0.5 / 1e6) * 72_001);
  assert.equal(at(600_000, 0).output, (30 / 1e6) * 1000);
  assert.equal(cost({ cost: { input: 1 } }, 1e7, 0, 0, 0).input, 10);
  // Tiers listed highest first: the highest matching threshold still wins; a non-finite threshold is ignored.
  const reversed = { cost: { input: 1, tiers: [{ inputTokensAbove: 20, input: 3 }, { inputTokensAbove: 10, input: 2 },
    { inputTokensAbove: Infinity, input: 9 }, null, "x"] } };
  assert.equal(cost(reversed, 30, 0, 0, 0).input, (3 / 1e6) * 30);
  assert.equal(cost(reversed, 15, 0, 0, 0).input, (2 / 1e6) * 15);
  // Missing or non-number prices are 0; a model without cost prices nothing.
  assert.deepEqual(cost({ cost: { input: "1", output: null } }, 5, 5, 5, 5),
    { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, totalFromProvider: false });
  assert.equal(cost({}, 5, 5, 5, 5).total, 0);
  assert.equal(cost(undefined, 5, 5, 5, 5).total, 0);
});

test("§6.10: usage fields in order, clamped counts, 1-hour cache writes, reasoning, total and billed", () => {
  const asm = new Assembler([3, 15, 0.3, 3.75], false);
  asm.usage({ input: 100, output: 50, cacheRead: 20, cacheWrite: 30, cacheWrite1h: 10, reasoning: 7 });
  const [{ value }] = asm.drain();
  assert.deepEqual(Object.keys(value), ["input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "reasoning", "totalTokens", "cost"]);
  assert.equal(value.totalTokens, 200);
  assert.equal(value.cost.cacheWrite, (3.75 * 20 + 3 * 2 * 10) / 1e6);
  const c = [(3 / 1e6) * 100, (15 / 1e6) * 50, (0.3 / 1e6) * 20, (3.75 * 20 + 3 * 2 * 10) / 1e6];
  assert.deepEqual(value.cost, { input: c[0], output: c[1], cacheRead: c[2], cacheWrite: c[3], total: c[0] + c[1] + c[2] + c[3], totalFromProvider: false });
  assert.deepEqual(Object.keys(value.cost), ["input", "output", "cacheRead", "cacheWrite", "total", "totalFromProvider"]);

  asm.usage({ input: -5, output: NaN, cacheRead: Infinity, cacheWrite: 4, total: 99, billed: 0.5, reasoning: -1 });
  const [{ value: v2 }] = asm.drain();
  assert.deepEqual(v2, {
    input: 0, output: 0, cacheRead: 0, cacheWrite: 4, reasoning: 0, totalTokens: 99,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: (3.75 * 4) / 1e6, total: 0.5, totalFromProvider: true },
  });
  // A provider total that is not a count is 0; a billed cost that is negative or not finite is not used.
  asm.usage({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, total: NaN, billed: -1 });
  const [{ value: v3 }] = asm.drain();
  assert.equal(v3.totalTokens, 0);
  assert.equal(v3.cost.totalFromProvider, false);
  asm.usage({ input: 1, output: 0, cacheRead: 0, cacheWrite: 0, billed: Infinity });
  assert.equal(asm.drain()[0].value.cost.totalFromProvider, false);
  // Billed 0 is a provider's cost.
  asm.usage({ input: 1, output: 0, cacheRead: 0, cacheWrite: 0, billed: 0 });
  assert.deepEqual(asm.drain()[0].value.cost.total, 0);
  // After the end nothing is queued.
  asm.finish("stop");
  asm.drain();
  asm.usage({ input: 1, output: 0, cacheRead: 0, cacheWrite: 0 });
  asm.meta("responseId", "r");
  assert.deepEqual(asm.pending(), []);
});

test("P-6.1.4: a text block opens at its first delta; another kind closes it; the end closes in content order", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.textDelta("t", "");
  asm.textDelta("t", "Hel");
  asm.textDelta("t", "lo");
  asm.thinkingDelta("r", "hmm");
  asm.textDelta("t", "again");
  asm.toolStart("c", "call_1", "read");
  asm.toolArgsDelta("c", '{"path": "a');
  asm.toolArgsDelta("c", '.txt"}');
  asm.toolStart("d", "call_2", "list");
  asm.finish("toolUse", "tool_calls");
  assert.ok(asm.finished());
  assert.ok(asm.hasToolCalls());
  const { message, events, types } = built(asm);
  assert.deepEqual(types, [
    "text_start", "text_delta", "text_delta", "text_end",
    "thinking_start", "thinking_delta", "thinking_end",
    "text_start", "text_delta", "text_end",
    "toolcall_start", "toolcall_delta", "toolcall_delta",
    "toolcall_start", "toolcall_end", "toolcall_end", "done",
  ]);
  assert.deepEqual(message, {
    role: "assistant",
    content: [
      { type: "text", text: "Hello" },
      { type: "thinking", thinking: "hmm" },
      { type: "text", text: "again" },
      { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } },
      { type: "toolCall", id: "call_2", name: "list", arguments: {} },
    ],
    stopReason: "toolUse",
    rawStopReason: "tool_calls",
  });
  // Every block event shares the one message; keys in the order applyOps builds the events.
  for (const e of events.slice(0, -1)) assert.equal(e.partial, message);
  assert.deepEqual(Object.keys(events[0]), ["type", "contentIndex", "partial"]);
  assert.deepEqual(Object.keys(events[1]), ["type", "contentIndex", "delta", "partial"]);
  assert.deepEqual(Object.keys(events[3]), ["type", "contentIndex", "content", "partial"]);
  assert.equal(events[3].content, "Hello");
  assert.equal(events[6].content, "hmm");
  assert.equal(events[11].delta, '{"path": "a');
  const ends = events.filter((e) => e.type === "toolcall_end");
  assert.deepEqual(ends.map((e) => e.contentIndex), [3, 4]);
  assert.deepEqual(Object.keys(ends[0]), ["type", "contentIndex", "toolCall", "partial"]);
  assert.equal(ends[0].toolCall, message.content[3]);
  const done = events.at(-1);
  assert.deepEqual(Object.keys(done), ["type", "reason", "message"]);
  assert.equal(done.reason, "toolUse");
  assert.equal(done.message, message);
});

test("P-6.1.4: the live arguments grow with each fragment (P-6.4.2)", () => {
  const asm = new Assembler(undefined, false);
  const message = { content: [] };
  const seen = [];
  const stream = { push: (e) => e.type === "toolcall_delta" && seen.push(JSON.parse(JSON.stringify(e.partial.content[0].arguments))) };
  asm.toolStart("c", "id", "f");
  for (const piece of ['{"a": "x', 'y", "n": [1', ", 2]", ', "o": {"k": true}}']) {
    asm.toolArgsDelta("c", piece);
    applyOps(asm.drain(), message, stream);
  }
  assert.deepEqual(seen, [{ a: "x" }, { a: "xy", n: [] }, { a: "xy", n: [1, 2] }, { a: "xy", n: [1, 2], o: { k: true } }]);
  asm.close("c");
  applyOps(asm.drain(), message, stream);
  assert.deepEqual(message.content[0].arguments, { a: "xy", n: [1, 2], o: { k: true } });
});

test("issue 34 (plain path): arguments split anywhere give the same message", () => {
  const content = 'é😀"\\n line '.repeat(200);
  const args = JSON.stringify({ path: "a.txt", content, n: [1, 2] });
  let expected;
  for (const split of [args.length, 17, 500, 1, 0]) {
    const asm = new Assembler([0, 0, 0, 0], false);
    asm.toolStart("t", "call_1", "write");
    asm.toolArgsDelta("t", args.slice(0, split));
    asm.toolArgsDelta("t", args.slice(split));
    asm.close("t");
    const { message } = built(asm);
    expected ??= message;
    assert.deepEqual(message, expected, `split at ${split}`);
  }
  assert.deepEqual(expected.content[0].arguments, JSON.parse(args));
});

test("P-6.1.4: keepOpen (openai-completions) keeps text and thinking open until the end", () => {
  const asm = new Assembler([0, 0, 0, 0], true);
  asm.thinkingDelta("r", "a");
  asm.textDelta("t", "b");
  asm.toolStart("c", "id", "f");
  asm.thinkingDelta("r", "c");
  asm.finish("stop");
  const { message, types, events } = built(asm);
  assert.deepEqual(types, [
    "thinking_start", "thinking_delta", "text_start", "text_delta", "toolcall_start", "thinking_delta",
    "thinking_end", "text_end", "toolcall_end", "done",
  ]);
  assert.equal(message.content[0].thinking, "ac");
  assert.deepEqual(events.filter((e) => e.type.endsWith("_end")).map((e) => e.contentIndex), [0, 1, 2]);
});

test("P-6.1.4: a tool call closes open text and thinking; a new key of the same kind opens a new block", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.textDelta(0, "a");
  asm.textDelta(1, "b");
  asm.toolStart("c", "id", "f");
  asm.textDelta(0, "c");
  asm.close("c");
  asm.close(0);
  asm.close(0);
  asm.finish("stop");
  const { message, types } = built(asm);
  assert.deepEqual(types, [
    "text_start", "text_delta", "text_start", "text_delta", "text_end", "text_end", "toolcall_start",
    "text_start", "text_delta", "toolcall_end", "text_end", "done",
  ]);
  assert.deepEqual(message.content.map((b) => b.text ?? b.type), ["a", "b", "toolCall", "c"]);
});

test("P-6.1.4: a delta of another kind under an open block's key opens a new block (and closes the other)", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.textDelta("k", "a");
  asm.thinkingDelta("k", "b");
  asm.textDelta("k", "c");
  asm.close("k");
  asm.finish("stop");
  const { message, types } = built(asm);
  assert.deepEqual(types, ["text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end",
    "text_start", "text_delta", "text_end", "done"]);
  assert.deepEqual(message.content, [{ type: "text", text: "a" }, { type: "thinking", thinking: "b" }, { type: "text", text: "c" }]);
});

test("issue 33: sentDelta emits an empty delta; textDelta and openBlock only open", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.openBlock("t", BLOCK.TEXT);
  asm.textDelta("t", "");
  asm.sentDelta("t", BLOCK.TEXT, "");
  asm.sentDelta("r", BLOCK.THINKING, "x");
  asm.openBlock("r", BLOCK.THINKING);
  const { types, events } = built(asm);
  assert.deepEqual(types, ["text_start", "text_delta", "text_end", "thinking_start", "thinking_delta"]);
  assert.equal(events[1].delta, "");
});

test("redacted thinking opens and closes at once with its fields in order", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.textDelta("t", "a");
  asm.redactedThinking("r", "opaque");
  asm.finish("stop");
  const { message, types, events } = built(asm);
  assert.deepEqual(types, ["text_start", "text_delta", "text_end", "thinking_start", "thinking_end", "done"]);
  assert.deepEqual(Object.keys(message.content[1]), ["type", "thinking", "thinkingSignature", "redacted"]);
  assert.deepEqual(message.content[1], { type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true });
  assert.equal(events[4].content, "");
});

test("signatures and set fields: no events; latest block of the key, closed or not", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.thinkingDelta("r", "x");
  asm.appendSignature("r", "thinkingSignature", "S1");
  asm.close("r");
  asm.appendSignature("r", "thinkingSignature", "S2");
  asm.setField("r", "extra", { a: 1 });
  asm.setField("missing", "extra", 1);
  asm.appendSignature("missing", "thinkingSignature", "x");
  asm.toolStart("c", "id", "old");
  asm.setField("c", "name", "new");
  asm.finish("stop");
  const { message, types } = built(asm);
  assert.deepEqual(types, ["thinking_start", "thinking_delta", "thinking_end", "toolcall_start", "toolcall_end", "done"]);
  assert.deepEqual(message.content[0], { type: "thinking", thinking: "x", thinkingSignature: "S1S2", extra: { a: 1 } });
  assert.equal(message.content[1].name, "new");
});

test("issue 33: a field kept until the block closes is written once as JSON text", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.atClose("none", "reasoning_details", () => assert.fail("no open block"));
  asm.thinkingDelta("r", "x");
  asm.atClose("r", "reasoning_details", (v) => [...v, { type: "reasoning.text", text: "x" }]);
  asm.atClose("r", "ignored-name", (v) => { v.push({ n: 1 }); return v; });
  assert.equal(asm.pending().filter((o) => o.op === "setField").length, 0);
  asm.finish("stop");
  const { message } = built(asm);
  assert.equal(message.content[0].reasoning_details, '[{"type":"reasoning.text","text":"x"},{"n":1}]');
});

test("P-6.4.3: arguments that are not an object: {} and argumentsError; blank text is {}", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.toolStart("a", "1", "f");
  asm.toolArgsDelta("a", "[1, 2]");
  asm.toolStart("b", "2", "g");
  asm.toolArgsDelta("b", "  ");
  asm.toolStart("c", "3", "h");
  asm.toolArgsDelta("c", '{"x": 1');
  asm.finish("toolUse");
  const { message } = built(asm);
  assert.deepEqual(message.content[0].arguments, {});
  assert.equal(message.content[0].argumentsError, "Tool call arguments must be a JSON object\n\nReceived arguments:\n[1, 2]");
  assert.deepEqual(Object.keys(message.content[0]), ["type", "id", "name", "arguments", "argumentsError"]);
  assert.deepEqual(message.content[1].arguments, {});
  assert.equal(message.content[1].argumentsError, undefined);
  // An unterminated object: the repair pass's verdict.
  let expected;
  try {
    expected = { arguments: finalArguments('{"x": 1', false) };
  } catch (e) {
    expected = { arguments: {}, argumentsError: e.message };
  }
  assert.deepEqual({ arguments: message.content[2].arguments, argumentsError: message.content[2].argumentsError },
    { argumentsError: undefined, ...expected });
});

test("issue 33: `null` arguments of a tool whose schema accepts {} become {}", () => {
  assert.deepEqual(finalArguments(" null\n", true), {});
  // Trimmed as the reference's `String#trim` trims: U+FEFF is white space, U+0085 is not.
  assert.deepEqual(finalArguments("\ufeffnull", true), {});
  assert.throws(() => finalArguments("\u0085null", true));
  assert.throws(() => finalArguments("null", false), /must be a JSON object/);
  assert.throws(() => finalArguments("nul", true));
  assert.deepEqual(finalArguments('{"a":1}', true), { a: 1 });
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.acceptNullArguments(["ping", "renamed"]);
  asm.toolStart("a", "1", "ping");
  asm.toolArgsDelta("a", "null");
  asm.toolStart("b", "2", "other");
  asm.toolArgsDelta("b", "null");
  asm.toolStart("c", "3", "other");
  asm.setField("c", "name", "renamed");
  asm.toolArgsDelta("c", "null");
  asm.finish("toolUse");
  const { message } = built(asm);
  assert.deepEqual(message.content[0], { type: "toolCall", id: "1", name: "ping", arguments: {} });
  assert.match(message.content[1].argumentsError, /^Tool call arguments must be a JSON object/);
  assert.equal(message.content[2].argumentsError, undefined);
});

test("toolArgsComplete replaces the text; toolArgsPatched applies patches without text", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.toolStart("a", "1", "f");
  asm.toolArgsDelta("a", '{"x": "partial');
  asm.toolArgsComplete("a", '{"x": "whole"}');
  asm.toolArgsComplete("missing", "{}");
  asm.toolStart("g", "2", "g");
  asm.toolArgsPatched("g", "", [
    { path: ["q"], op: "setString", value: "a" },
    { path: ["q"], op: "appendString", value: "b" },
    { path: ["list"], op: "setArray" },
    { path: ["list", 0], op: "setValue", value: 3 },
    { path: ["o"], op: "setObject" },
    { path: ["o", "k"], op: "setValue", value: null },
    { path: ["missing", "k"], op: "setValue", value: 1 },
    { path: [], op: "setValue", value: 1 },
  ]);
  const message = { content: [] };
  const seen = [];
  applyOps(asm.drain(), message, { push: (e) => e.type === "toolcall_delta" && e.contentIndex === 1 && seen.push(structuredClone(e.partial.content[1].arguments)) });
  assert.deepEqual(seen, [{ q: "ab", list: [3], o: { k: null } }]);
  asm.toolArgsPatched("g", "x", [{ path: ["q"], op: "appendString", value: "c" }]);
  asm.toolArgsPatched("nothing", "x", []);
  asm.toolArgsComplete("g", '{"q": "final"}');
  asm.finish("toolUse");
  applyOps(asm.drain(), message, { push() {} });
  assert.deepEqual(message.content[0].arguments, { x: "whole" });
  assert.deepEqual(message.content[1].arguments, { q: "final" });
  // Without the final text a patched call's arguments are those of its (empty) text: {}.
  const b = new Assembler([0, 0, 0, 0], false);
  b.toolStart("g", "1", "g");
  b.toolArgsPatched("g", "", [{ path: ["q"], op: "setString", value: "a" }]);
  b.finish("toolUse");
  assert.deepEqual(built(b).message.content[0].arguments, {});
});

test("a tool-call fragment for a key with no open tool call does nothing", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.toolArgsDelta("c", "{}");
  asm.textDelta("t", "x");
  asm.toolArgsDelta("t", '{"a":1}');
  assert.deepEqual(asm.pending().map((o) => o.op), ["open", "delta"]);
  assert.ok(!asm.hasOpen("c"));
  assert.ok(asm.hasOpen("t"));
  assert.ok(!asm.hasToolCalls());
});

test("fail: blocks close, then error with the message on the message; nothing after the end", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.meta("responseId", "resp_1");
  asm.textDelta("t", "part");
  asm.fail("boom", "error_raw");
  asm.finish("stop");
  asm.fail("again");
  asm.textDelta("t", "more");
  asm.thinkingDelta("r", "more");
  asm.toolStart("c", "1", "f");
  asm.redactedThinking("r", "x");
  asm.toolArgsPatched("c", "", []);
  const { message, types, events } = built(asm, { content: [], stopReason: "pending" });
  assert.deepEqual(types, ["text_start", "text_delta", "text_end", "error"]);
  assert.deepEqual(message, { content: [{ type: "text", text: "part" }], stopReason: "error", responseId: "resp_1", errorMessage: "boom", rawStopReason: "error_raw" });
  assert.deepEqual(Object.keys(events.at(-1)), ["type", "reason", "error"]);
  assert.equal(events.at(-1).reason, "error");
  assert.equal(events.at(-1).error, message);
});

test("applyOps: a fail hook replaces the default error; pushError sets the fields and pushes", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.fail("secret sk-1");
  const message = { content: [] };
  const events = [];
  const stream = { push: (e) => events.push(e) };
  applyOps(asm.drain(), message, stream, (text, raw) => pushError(message, stream, "aborted", text.replace("sk-1", "***"), raw));
  assert.deepEqual(message, { content: [], stopReason: "aborted", errorMessage: "secret ***" });
  assert.deepEqual(events, [{ type: "error", reason: "aborted", error: message }]);
  const done = new Assembler([0, 0, 0, 0], false);
  done.finish("length");
  const m2 = { content: [] };
  applyOps(done.drain(), m2, stream);
  assert.deepEqual(m2, { content: [], stopReason: "length" });
  assert.deepEqual(events.at(-1), { type: "done", reason: "length", message: m2 });
});

test("applyOps: a throwing stream or a frozen message does not stop the rest", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.textDelta("t", "a");
  asm.toolStart("c", "1", "f");
  asm.toolArgsDelta("c", '{"a":');
  asm.usage({ input: 1, output: 2, cacheRead: 0, cacheWrite: 0 });
  asm.finish("stop");
  const ops = asm.drain();
  const message = { content: [] };
  let calls = 0;
  applyOps(ops, message, { push() { calls++; throw new Error("listener"); } });
  assert.equal(calls, 7);
  assert.equal(message.stopReason, "stop");
  assert.equal(message.usage.totalTokens, 3);
  const frozen = Object.freeze({ content: Object.freeze([]) });
  const types = [];
  assert.doesNotThrow(() => applyOps(ops, frozen, { push: (e) => types.push(e.type) }));
  assert.deepEqual(types, ["text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_end", "done"]);
});

test("meta and usage ops set message fields without events", () => {
  const asm = Assembler.forModel({ cost: { input: 1, output: 2 } }, false);
  asm.meta("responseModel", "m-2");
  asm.usage({ input: 1e6, output: 1e6, cacheRead: 0, cacheWrite: 0 });
  const { message, types } = built(asm);
  assert.deepEqual(types, []);
  assert.equal(message.responseModel, "m-2");
  assert.deepEqual(message.usage.cost, { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, total: 3, totalFromProvider: false });
});

test("drain empties the queue; pending leaves it", () => {
  const asm = new Assembler([0, 0, 0, 0], false);
  asm.textDelta("t", "a");
  assert.equal(asm.pending().length, 2);
  assert.equal(asm.pending().length, 2);
  assert.equal(asm.drain().length, 2);
  assert.deepEqual(asm.pending(), []);
  assert.deepEqual(asm.drain(), []);
});

test("the wire-format harness: run drives a mapper over SSE as driver.js does", async () => {
  const { run, sse, names, usage, initialMessage, decode } = await import("./codec-harness.mjs");
  // A tiny wire format: `t` text deltas, `c` tool-call fragments, `u` usage, `[DONE]` ends.
  const format = {
    streamMapper: () => ({
      onEvent(event, data, asm) {
        if (event === "text") asm.textDelta("0", data.t);
        else if (event === "tool") {
          if (!asm.hasOpen("c")) asm.toolStart("c", data.id, data.name);
          asm.toolArgsDelta("c", data.args);
        } else if (event === "usage") asm.usage({ input: data.in, output: data.out, cacheRead: 0, cacheWrite: 0 });
      },
      onText(event, data, asm) {
        if (data === "[DONE]") asm.finish(asm.hasToolCalls() ? "toolUse" : "stop");
        return data === "[DONE]";
      },
      onEnd(asm) {
        asm.fail("ended early");
      },
    }),
  };
  const model = { id: "m1", api: "x-api", provider: "p", cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 } };
  const text = sse([
    ["text", { t: "Héllo 😀 " }], ["text", { t: "world" }],
    ["tool", { id: "call_1", name: "read", args: '{"path":' }], ["tool", { args: ' "a.txt"}' }],
    ["usage", { in: 10, out: 5 }],
  ]) + "data: [DONE]\n\n";
  const [message, seen] = run(format, model, {}, text);
  assert.deepEqual(seen, names(["start", "text_start", "text_delta", "text_delta", "text_end", "toolcall_start",
    "toolcall_delta", "toolcall_delta", "toolcall_end", "done"]));
  assert.deepEqual(message, {
    ...initialMessage(model),
    content: [{ type: "text", text: "Héllo 😀 world" }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }],
    usage: usage(10, 5, 0, 0, [], [1, 2, 0, 0]),
    stopReason: "toolUse",
  });
  assert.deepEqual(initialMessage({}).api, null);
  // The stream ends without [DONE]: the mapper's onEnd; data that is not JSON: P-6.3.2's error.
  const [ended] = run(format, model, {}, sse([["text", { t: "a" }]]));
  assert.equal(ended.errorMessage, "ended early");
  const [bad, badNames] = run(format, model, {}, "data: {oops\n\n");
  assert.deepEqual(badNames, ["start", "error"]);
  assert.equal(bad.errorMessage, "Invalid JSON in provider stream: {oops");
  // Every seed decodes the same events.
  for (let seed = 0; seed < 6; seed++) assert.equal(decode(text, seed).length, 6);
});
