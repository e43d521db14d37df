// Live tests of the built-in providers against the real services (SPEC §6, K-9.4.4 "live provider tests run only
// when keys are present"). Each API runs only when its key variable is set — OPENAI_API_KEY (openai-completions and
// openai-responses), ANTHROPIC_API_KEY (anthropic-messages), GEMINI_API_KEY (google-generative-ai) — and is skipped
// with a printed reason naming the variable otherwise. Models can be overridden with LIVE_OPENAI_MODEL,
// LIVE_ANTHROPIC_MODEL and LIVE_GEMINI_MODEL. Live calls get 30 s per test (real services are slower than the
// 5 s budget of the loopback suites); nothing here runs without a key.
import { test } from "node:test";
import assert from "node:assert/strict";
import { drain } from "./provider-server.mjs";
import { SKIP, agentLoop, streamBuiltin } from "./providers-common.mjs";

const LIVE = [
  { api: "openai-completions", provider: "openai", variable: "OPENAI_API_KEY", model: process.env.LIVE_OPENAI_MODEL || "gpt-4.1-mini", baseUrl: "https://api.openai.com/v1" },
  { api: "openai-responses", provider: "openai", variable: "OPENAI_API_KEY", model: process.env.LIVE_OPENAI_MODEL || "gpt-4.1-mini", baseUrl: "https://api.openai.com/v1" },
  { api: "anthropic-messages", provider: "anthropic", variable: "ANTHROPIC_API_KEY", model: process.env.LIVE_ANTHROPIC_MODEL || "claude-haiku-4-5", baseUrl: "https://api.anthropic.com" },
  { api: "google-generative-ai", provider: "google", variable: "GEMINI_API_KEY", model: process.env.LIVE_GEMINI_MODEL || "gemini-2.5-flash", baseUrl: "https://generativelanguage.googleapis.com/v1beta" },
];

const model = (l) => ({
  id: l.model,
  name: l.model,
  api: l.api,
  provider: l.provider,
  baseUrl: l.baseUrl,
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 1024,
});

const ADD = {
  name: "add",
  label: "add",
  description: "Adds two integers and returns the sum.",
  parameters: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] },
  execute: async (id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } }),
};

for (const l of LIVE) {
  const skip = SKIP || (!process.env[l.variable] && `${l.variable} is not set: live ${l.api} tests skipped`);
  if (skip && !SKIP) console.log(`# ${skip}`);
  const options = { timeout: 30_000, skip };

  test(`live ${l.api} (${l.model}): a short text reply with usage`, options, async () => {
    const run = await drain(
      streamBuiltin(model(l), { messages: [{ role: "user", content: "Reply with the single word: pong", timestamp: Date.now() }] }, { maxTokens: 64 }),
    );
    assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
    assert.equal(run.types[0], "start");
    assert.equal(run.types.at(-1), "done");
    assert.match(run.result.content.filter((b) => b.type === "text").map((b) => b.text).join(""), /pong/i);
    assert.ok(run.result.usage.input > 0 && run.result.usage.output > 0, JSON.stringify(run.result.usage));
    assert.ok(!JSON.stringify(run.events).includes(process.env[l.variable]), "the key never appears in events");
  });

  test(`live ${l.api} (${l.model}): agentLoop without streamFn calls a tool, then answers`, options, async () => {
    const stream = agentLoop(
      [{ role: "user", content: "Use the add tool to add 17 and 25, then state the result.", timestamp: Date.now() }],
      { messages: [{ role: "system", content: "You are a careful assistant. Always use tools for arithmetic.", timestamp: Date.now() }], tools: [ADD] },
      { model: model(l), convertToLlm: (m) => m, maxTokens: 256 },
    );
    for await (const _ of stream);
    const messages = await stream.result();
    const results = messages.filter((m) => m.role === "toolResult");
    assert.ok(results.length >= 1, `no tool call: ${JSON.stringify(messages.at(-1))}`);
    assert.equal(results[0].content[0].text, "42");
    const last = messages.at(-1);
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "stop", last.errorMessage);
    assert.match(last.content.filter((b) => b.type === "text").map((b) => b.text).join(""), /42/);
  });

  test(`live ${l.api}: a wrong key gives an HTTP 4xx error event`, options, async () => {
    const run = await drain(streamBuiltin(model(l), { messages: [{ role: "user", content: "hi", timestamp: Date.now() }] }, { apiKey: "sk-invalid-key-for-test", maxRetries: 0 }));
    assert.deepEqual(run.types, ["error"]);
    assert.match(run.result.errorMessage, /^HTTP 4\d\d: /);
  });
}
