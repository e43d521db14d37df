// Issue 43: the wasm build reads the float of a JSON number literal with the engine's `Number(text)` (core's decimal
// parser and its tables are not in the modules); natively Rust's parser does, and `cargo test number_literals` holds it
// to tests/fixtures/number-literals.txt, which Node wrote (scripts/number-strings.mjs). Here the built package is held
// to the same fixture on both modules' paths: the loop's (a string coerced to a number by validateToolArguments) and
// the providers' (a tool call's arguments read from a built-in provider's stream).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { IS_REFERENCE, agentLoop, validateToolArguments } from "./impl.mjs";

const FIXTURE = readFileSync(new URL("../fixtures/number-literals.txt", import.meta.url), "utf8").trim().split("\n");
const view = new DataView(new ArrayBuffer(8));
const bits = (x) => {
  view.setFloat64(0, x);
  return view.getBigUint64(0).toString(16).padStart(16, "0");
};
const CASES = FIXTURE.map((line) => {
  const [text, want] = line.split(" ");
  return { text, want };
});
const FINITE = CASES.filter(({ want }) => !want.startsWith("7ff") && !want.startsWith("fff"));

test("every fixture literal coerced to a number by validateToolArguments has the engine's bits", () => {
  assert.equal(CASES.length, 1024);
  const tool = { name: "t", description: "", parameters: { type: "object", properties: { x: { type: "number" } } } };
  const wrong = [];
  for (const { text, want } of FINITE) {
    const { x } = validateToolArguments(tool, { type: "toolCall", id: "c", name: "t", arguments: { x: text } });
    if (bits(x) !== want) wrong.push(`${text.slice(0, 60)}: ${bits(x)}, want ${want}`);
  }
  assert.deepEqual(wrong, []);
});

const skip = IS_REFERENCE && "ours only: pi-ai's providers read JSON with JSON.parse";

test("every finite fixture literal in a built-in provider's tool call arguments has the engine's bits", { skip }, async () => {
  const sse = (o) => `data: ${JSON.stringify(o)}\n\n`;
  const chunk = (delta, finish) => sse({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
  const args = `{"values":[${FINITE.map(({ text }) => text).join(",")}]}`;
  const call = { index: 0, id: "call_1", type: "function", function: { name: "t", arguments: args } };
  const bodies = [
    chunk({ role: "assistant", tool_calls: [call] }, null) + chunk({}, "tool_calls") + "data: [DONE]\n\n",
    chunk({ role: "assistant", content: "done" }, null) + chunk({}, "stop") + "data: [DONE]\n\n",
  ];
  const fetch = async () => new Response(bodies.shift(), { status: 200, headers: { "content-type": "text/event-stream" } });
  const model = { id: "m", name: "m", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9/v1", reasoning: false,
    input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8192, maxTokens: 1024 };
  const stream = agentLoop([{ role: "user", content: "numbers", timestamp: 1 }], { messages: [] }, { model, convertToLlm: (m) => m, apiKey: "k", fetch });
  for await (const _ of stream);
  const assistant = (await stream.result()).find((m) => m.role === "assistant");
  const values = assistant.content.find((b) => b.type === "toolCall").arguments.values;
  assert.equal(values.length, FINITE.length);
  const wrong = FINITE.flatMap(({ text, want }, i) => (bits(values[i]) === want ? [] : [`${text.slice(0, 60)}: ${bits(values[i])}, want ${want}`]));
  assert.deepEqual(wrong, []);
});
