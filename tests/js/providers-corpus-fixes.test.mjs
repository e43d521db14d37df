// Issue 33: what the recorded streams showed, fixed — each case on the recording (tests/fixtures/provider-corpus/)
// that showed it, exact about ours (the corpus test compares ours with the reference; these say what ours is).
// `CORPUS_PKG=<path to a built index.mjs>` runs them on another build (the fixes' proof: each fails on the build
// before them).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { IS_REFERENCE } from "./impl.mjs";
import { startProviderServer } from "./provider-server.mjs";

const SKIP = IS_REFERENCE && "the built-in providers (§6) exist only in agent-loop-wasm";
const T = { skip: SKIP, timeout: 10_000 };
const lib = IS_REFERENCE ? undefined : await import(process.env.CORPUS_PKG ?? "../../pkg/dist/node/index.mjs");

const dir = new URL("../fixtures/provider-corpus/", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("manifest.json", dir), "utf8"));
const entry = (name) => manifest.entries.find((e) => e.name === name);
const sse = (name) => readFileSync(new URL(entry(name).file, dir), "utf8");
const payloads = (text) => [...text.matchAll(/^data: (.*)$/gm)].flatMap(([, d]) => (d === "[DONE]" ? [] : [JSON.parse(d)]));

const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const model = (api, extra = {}) => ({ id: "m", name: "m", api, provider: "p", baseUrl: "http://127.0.0.1:9", reasoning: false, input: ["text"], cost: PRICE, contextWindow: 0, maxTokens: 1000, ...extra });
const user = { role: "user", content: "Go.", timestamp: 1 };
const declare = (...tools) => ({ role: "system", content: "", toolsAdded: tools, timestamp: 0 });
const noParams = { name: "weather", description: "W", parameters: { type: "object", properties: {} } };

/** Streams `text` (a whole SSE body) through streamBuiltin; returns { events, message }. */
async function run(api, text, { extra, messages = [user] } = {}) {
  const fetch = async () => new Response(text, { status: 200, headers: { "content-type": "text/event-stream" } });
  const stream = lib.streamBuiltin(model(api, extra), { messages }, { apiKey: "k", fetch, maxRetries: 0 });
  const events = [];
  for await (const e of stream) events.push({ ...e, arguments: e.type === "toolcall_delta" ? structuredClone(e.partial.content[e.contentIndex].arguments) : undefined });
  return { events, message: await stream.result() };
}

test("issue 33 empty deltas: Anthropic's \"\" thinking_delta before the signature and Gemini 3's empty signed text part are events", T, async () => {
  const anthropic = await run("anthropic-messages", sse("anthropic-thinking-tools"));
  const sent = payloads(sse("anthropic-thinking-tools")).filter((p) => p.delta?.type === "thinking_delta").map((p) => p.delta.thinking);
  assert.ok(sent.includes(""), "the recording has an empty thinking_delta");
  assert.deepEqual(anthropic.events.filter((e) => e.type === "thinking_delta").map((e) => e.delta), sent);
  const gemini = await run("google-generative-ai", sse("gemini3-reasoning"));
  const parts = payloads(sse("gemini3-reasoning")).flatMap((p) => p.candidates?.[0]?.content?.parts ?? []).filter((p) => typeof p.text === "string");
  assert.ok(parts.some((p) => p.text === "" && p.thoughtSignature), "the recording has an empty signed part");
  assert.deepEqual(gemini.events.filter((e) => e.type === "text_delta" || e.type === "thinking_delta").map((e) => e.delta), parts.map((p) => p.text));
});

test("issue 33 Groq's \"arguments\": \"null\" for a tool whose schema accepts {} is {}; a schema that requires a property still gets the error", T, async () => {
  const ok = await run("openai-completions", sse("groq-null-arguments"), { messages: [declare(noParams), user] });
  const call = ok.message.content.find((b) => b.type === "toolCall");
  assert.deepEqual(call.arguments, {});
  assert.equal(call.argumentsError, undefined);
  const strict = { ...noParams, parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
  const bad = await run("openai-completions", sse("groq-null-arguments"), { messages: [declare(strict), user] });
  assert.match(bad.message.content.find((b) => b.type === "toolCall").argumentsError, /must be a JSON object\n\nReceived arguments:\nnull$/);
});

test("issue 33 Anthropic 1-hour cache writes cost twice the input price (not the 5-minute write price); totalFromProvider is false", T, async () => {
  const { message } = await run("anthropic-messages", sse("anthropic-cache-write-1h"));
  assert.equal(message.usage.cacheWrite, 2048);
  assert.equal(message.usage.cacheWrite1h, 2048);
  assert.equal(message.usage.cost.cacheWrite, (PRICE.cacheWrite * 0 + PRICE.input * 2 * 2048) / 1e6);
  assert.equal(message.usage.cost.totalFromProvider, false);
});

test("issue 33 OpenRouter's billed usage.cost is the total (totalFromProvider), not the catalog price", T, async () => {
  const text = sse("openrouter-claude35-tools");
  const billed = payloads(text).map((p) => p.usage).filter(Boolean).at(-1);
  assert.equal(billed.is_byok, false);
  const { message } = await run("openai-completions", text, { extra: { provider: "openrouter" } });
  assert.equal(message.usage.cost.total, billed.cost);
  assert.equal(message.usage.cost.totalFromProvider, true);
  assert.notEqual(message.usage.cost.input + message.usage.cost.output, billed.cost, "the catalog price differs (the recorded case)");
  // BYOK: the provider's fee plus the upstream cost; without complete accounting, the catalog price stays.
  const chunk = (usage) => `data: ${JSON.stringify({ id: "g", choices: [{ index: 0, delta: { content: "x" }, finish_reason: "stop" }], usage })}\n\ndata: [DONE]\n\n`;
  const byok = await run("openai-completions", chunk({ prompt_tokens: 10, completion_tokens: 2, cost: 0.001, is_byok: true, cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.002, upstream_inference_completions_cost: 0.003 } }), { extra: { provider: "openrouter" } });
  assert.equal(byok.message.usage.cost.total, 0.001 + 0.005);
  const missing = await run("openai-completions", chunk({ prompt_tokens: 10, completion_tokens: 2, cost: 0.001, is_byok: true }), { extra: { provider: "openrouter" } });
  assert.equal(missing.message.usage.cost.totalFromProvider, false);
  const other = await run("openai-completions", chunk({ prompt_tokens: 10, completion_tokens: 2, cost: 0.001, is_byok: false }));
  assert.equal(other.message.usage.cost.totalFromProvider, false, "only OpenRouter's cost is read");
  // Anthropic Messages through OpenRouter: the billed cost rides on message_delta's usage.
  const messages = sse("anthropic-text").replace(/("type":"message_delta".*?"usage":\{)/, '$1"cost":0.0042,"is_byok":false,');
  assert.ok(messages.includes('"cost":0.0042'));
  const anthropic = await run("anthropic-messages", messages, { extra: { provider: "openrouter" } });
  assert.equal(anthropic.message.usage.cost.total, 0.0042);
  assert.equal(anthropic.message.usage.cost.totalFromProvider, true);
});

test("issue 33 Gemini's totalTokens is the API's totalTokenCount (with code execution it counts tool-use prompt tokens)", T, async () => {
  const usage = { promptTokenCount: 100, candidatesTokenCount: 20, toolUsePromptTokenCount: 300, thoughtsTokenCount: 5, totalTokenCount: 425 };
  const text = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: "4" }], role: "model" }, finishReason: "STOP" }], usageMetadata: usage })}\r\n\r\n`;
  const { message } = await run("google-generative-ai", text);
  assert.equal(message.usage.totalTokens, 425);
  assert.equal(message.usage.input, 100);
  assert.equal(message.usage.output, 25);
});

test("issue 33 Gemini 3 streamed function calls (willContinue, partialArgs): one call each, arguments assembled, live toolcall_deltas", T, async () => {
  const cases = {
    "gemini3-streamed-args": [["getWeather", { location: "Boston" }], ["getWeather", { location: "San Francisco" }]],
    "gemini3-streamed-no-args": [["read_theme", {}], ["read_screen", { id: "A" }], ["read_screen", { id: "B" }], ["read_screen", { id: "C" }]],
    "gemini3-streamed-array-args": [["writeItems", { operations: [
      { action: "add", description: "Fresh red apple", itemid: "apple_001", price: 0.5 },
      { action: "add", description: "Ripe yellow banana", itemid: "banana_001", price: 0.3 },
    ] }]],
  };
  for (const [name, want] of Object.entries(cases)) {
    const { events, message } = await run("google-generative-ai", sse(name));
    assert.equal(message.stopReason, "toolUse", `${name}: ${message.errorMessage}`);
    const calls = message.content.filter((b) => b.type === "toolCall");
    assert.deepEqual(calls.map((c) => [c.name, c.arguments]), want, name);
    assert.ok(calls.every((c) => c.argumentsError === undefined && c.id), name);
    assert.equal(new Set(calls.map((c) => c.id)).size, calls.length, `${name}: ids unique`);
    const streamed = calls.filter((c) => JSON.stringify(c.arguments) !== "{}");
    for (const call of streamed) {
      const index = message.content.indexOf(call);
      const live = events.filter((e) => e.type === "toolcall_delta" && e.contentIndex === index).map((e) => e.arguments);
      assert.ok(live.length > 1, `${name}: live deltas for ${call.name}`);
      assert.deepEqual(live.at(-1), call.arguments, `${name}: the live value ends as the final arguments`);
    }
  }
  // The nested Vertex recording: objects and arrays made along each path.
  const nested = await run("google-generative-ai", sse("gemini3-vertex-nested-args"));
  const recipe = nested.message.content.find((b) => b.type === "toolCall").arguments.recipe;
  assert.ok(recipe.ingredients.length >= 6 && recipe.ingredients.every((i) => typeof i.name === "string" && typeof i.amount === "string"), JSON.stringify(recipe));
  assert.deepEqual(recipe.ingredients[0], { amount: "16 oz", name: "Lasagna noodles" });
});

// OpenRouter, over a loopback server that answers as OpenRouter does: the first reply is the recorded
// claude-sonnet-4.5 turn (streamed reasoning_details, Anthropic's signature in a detail of its own, then the answer);
// the next request must send the details back on that assistant message, merged, signature included.
const server = IS_REFERENCE ? undefined : await startProviderServer();
after(() => server?.close());

test("issue 33 OpenRouter reasoning_details are kept (signature included) and sent back on the next request", T, async () => {
  const name = "openrouter-claude45-2";
  const recorded = payloads(sse(name)).flatMap((p) => p.choices?.[0]?.delta?.reasoning_details ?? []);
  const signature = recorded.find((d) => d.signature)?.signature;
  assert.ok(signature, "the recording carries a signature");
  const r = server.route();
  r.reply({ sse: sse(name) }, { sse: 'data: {"id":"g2","choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n' });
  const m = model("openai-completions", { provider: "openrouter", baseUrl: r.baseUrl, reasoning: true, id: "anthropic/claude-sonnet-4.5" });
  const first = lib.streamBuiltin(m, { messages: [user] }, { apiKey: "k" });
  for await (const _ of first);
  const assistant = await first.result();
  assert.ok(["stop", "toolUse"].includes(assistant.stopReason), assistant.errorMessage);
  const thinking = assistant.content.find((b) => b.type === "thinking");
  const details = JSON.parse(thinking.thinkingSignature);
  assert.deepEqual(details.map((d) => d.type), ["reasoning.text"]);
  assert.equal(details[0].text, thinking.thinking);
  assert.equal(details[0].signature, signature);
  const second = lib.streamBuiltin(m, { messages: [user, assistant, { role: "user", content: "And?", timestamp: 3 }] }, { apiKey: "k" });
  for await (const _ of second);
  assert.equal((await second.result()).stopReason, "stop");
  const sent = r.requests[1].body.messages.find((msg) => msg.role === "assistant");
  assert.deepEqual(sent.reasoning_details, details, "sent back as streamed");
  assert.equal(sent.reasoning, undefined, "the details replace the plain reasoning field");
});

test("issue 33 Mistral's typed content parts (Magistral): thinking parts are thinking, text parts text", T, async () => {
  const { message } = await run("openai-completions", sse("mistral-reasoning"));
  assert.equal(message.stopReason, "stop", message.errorMessage);
  assert.deepEqual(message.content.map((b) => b.type), ["thinking", "text"]);
  assert.match(message.content[0].thinking, /^The user is asking for 2\+2\./);
  assert.equal(message.content[1].text, "2 + 2 = 4");
});
