// The google-generative-ai wire format (pkg-template/providers/google.js, §6.9/§6.10): request bodies compared whole,
// SSE chunks driven through the decoder in random chunks, streamed calls (issue 33), stream errors (issue 13), and
// seeded random inputs that must never throw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { googleGenerativeAi } from "../../pkg-template/providers/google.js";
import { Assembler, applyOps } from "../../pkg-template/providers/assemble.js";
import { mapperFor } from "../../pkg-template/providers/index.js";
import { initialMessage, keyedJson, rng, run as runWith, sse as sseOf, thrownMessage, usage as usageOf } from "./codec-harness.mjs";

const NOW = 1_700_000_000_000;

const model = () => ({
  id: "gemini-2.5-flash", name: "Gemini 2.5 Flash", api: "google-generative-ai", provider: "google",
  baseUrl: "https://generativelanguage.googleapis.com/v1beta", input: ["text", "image"], reasoning: true,
  cost: { input: 0.3, output: 2.5, cacheRead: 0.075, cacheWrite: 0 },
  contextWindow: 0, maxTokens: 8000,
});

const run = (text, options = { timestamp: NOW }) => runWith(googleGenerativeAi, model(), options, text);
/** Gemini's framing: `data:` lines only, no terminator. */
const sse = (chunks) => sseOf(chunks.map((c) => [null, c]));
const names = (list) => ["start", ...list.split(/\s+/).filter(Boolean)];

function chunk(parts, finish) {
  const candidate = { content: { role: "model", parts }, index: 0 };
  if (finish !== undefined) candidate.finishReason = finish;
  return { candidates: [candidate], modelVersion: "gemini-2.5-flash-001", responseId: "resp-g1" };
}

const usageMetadata = () => ({
  promptTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 10, cachedContentTokenCount: 30, totalTokenCount: 130,
});
/** 70 input, 30 output (20 + 10 thoughts), 30 cached; the total is the API's 130. */
const usage = () => usageOf(70, 30, 30, 0, [["reasoning", 10]], [0.3, 2.5, 0.075, 0]);

function expected(content, tail) {
  return { ...initialMessage(model()), content, responseId: "resp-g1", responseModel: "gemini-2.5-flash-001", ...tail };
}

// ---- stream fixtures ----

test("issue_33_streamed_call_assembles_its_partial_args", () => {
  const part = (call) => chunk([{ functionCall: call }]);
  const arg = (path, value) => ({ jsonPath: path, ...value });
  const body = sse([
    part({ name: "cook", willContinue: true }),
    part({ partialArgs: [arg("$.r.items[1].name", { stringValue: "Ri", willContinue: true })], willContinue: true }),
    part({ partialArgs: [arg("$.r.items[1].name", { stringValue: "ce" })], willContinue: true }),
    part({ partialArgs: [arg("$.r['n']", { numberValue: 2 }), arg("$.ok", { boolValue: true })], willContinue: true }),
    part({ partialArgs: [arg("$.none", { nullValue: null })] }),
    chunk([{ functionCall: { name: "whole", args: { a: 1 } } }], "STOP"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names(
    "toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_delta toolcall_delta toolcall_end " +
    "toolcall_start toolcall_delta toolcall_end done",
  ));
  const calls = message.content;
  assert.equal(calls[0].name, "cook");
  assert.deepEqual(calls[0].arguments, { r: { items: [null, { name: "Rice" }], n: 2 }, ok: true, none: null });
  assert.deepEqual(calls[1].arguments, { a: 1 });
  assert.equal(message.stopReason, "toolUse");
});

// parse_json_path is private in the JS: its cases go through a streamed call.
test("issue_33_json_paths", () => {
  const streamed = (path) => sse([
    chunk([{ functionCall: { name: "f", willContinue: true } }]),
    chunk([{ functionCall: { partialArgs: [{ jsonPath: path, stringValue: "v" }] } }], "STOP"),
  ]);
  const [good] = run(streamed("$.a[2]['b.c']"));
  assert.deepEqual(good.content[0].arguments, { a: [null, null, { "b.c": "v" }] });
  for (const bad of ["a", "$", "$.", "$[x]", "$.a[1", "$..a"]) {
    const [message, events] = run(streamed(bad));
    assert.equal(events.at(-1), "error", bad);
    assert.equal(message.errorMessage, "Malformed google-generative-ai stream: candidates[0].content.parts[0]" +
      `.functionCall.partialArgs[0].jsonPath is not a path this provider reads: ${bad}`);
  }
});

test("p_6_9_text_stream", () => {
  const last = chunk([{ text: "!" }], "STOP");
  last.usageMetadata = usageMetadata();
  const body = sse([chunk([{ text: "Hel" }]), chunk([{ text: "lo wörld 👋" }]), last]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_delta text_delta text_end done"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "Hello wörld 👋!" }],
    { usage: usage(), stopReason: "stop", rawStopReason: "STOP" },
  ));
});

test("p_6_9_thinking_then_text_with_signatures_crlf_framing", () => {
  const body = sse([
    chunk([{ text: "Let me ", thought: true, thoughtSignature: "c2lnMQ==" }]),
    chunk([{ text: "think.", thought: true }]),
    chunk([{ text: "Answer", thoughtSignature: "c2lnMg==" }]),
    chunk([{ text: "", thoughtSignature: "c2lnMw==" }], "STOP"),
  ]).replaceAll("\n", "\r\n");
  const [message, events] = run(body);
  // Issue 33: the empty text part carrying the signature is a delta too (as the reference emits it).
  assert.deepEqual(events, names(
    "thinking_start thinking_delta thinking_delta thinking_end text_start text_delta text_delta text_end done",
  ));
  assert.deepEqual(message, expected(
    [
      { type: "thinking", thinking: "Let me think.", thinkingSignature: "c2lnMQ==" },
      { type: "text", text: "Answer", textSignature: "c2lnMw==" },
    ],
    { stopReason: "stop", rawStopReason: "STOP" },
  ));
});

test("p_6_9_interleaved_and_parallel_tool_calls", () => {
  const body = sse([
    chunk([{ text: "Looking up." }]),
    chunk([{ functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "QUJD" }]),
    chunk([{ text: "And " }, { text: "time." }]),
    chunk([
      { functionCall: { name: "time", args: { zone: "UTC", list: [1, 2.5, null] }, id: "call_x" } },
      { functionCall: { name: "time", id: "call_x" } },
      { functionCall: { name: "weather", args: {} } },
    ], "STOP"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names(
    "text_start text_delta text_end toolcall_start toolcall_delta toolcall_end text_start text_delta text_delta " +
    "text_end toolcall_start toolcall_delta toolcall_end toolcall_start toolcall_delta toolcall_end " +
    "toolcall_start toolcall_delta toolcall_end done",
  ));
  assert.deepEqual(message, expected(
    [
      { type: "text", text: "Looking up." },
      { type: "toolCall", id: `weather_${NOW}_1`, name: "weather", arguments: { city: "Paris" }, thoughtSignature: "QUJD" },
      { type: "text", text: "And time." },
      { type: "toolCall", id: "call_x", name: "time", arguments: { zone: "UTC", list: [1, 2.5, null] } },
      // A repeated id is replaced by a generated one; missing args are `{}`.
      { type: "toolCall", id: `time_${NOW}_2`, name: "time", arguments: {} },
      { type: "toolCall", id: `weather_${NOW}_3`, name: "weather", arguments: {} },
    ],
    { stopReason: "toolUse", rawStopReason: "STOP" },
  ));
});

// Issue 13: parts and functionCall fields of the wrong type (or a call without a name) end the stream with an error
// naming the part and field.
test("issue_13_malformed_parts_are_stream_errors", () => {
  const call = (c) => ({ functionCall: c });
  const at = "candidates[0].content.parts[1]";
  const cases = [
    [call({ args: {} }), `${at}.functionCall: "name" must be a non-empty string, got missing`],
    [call({ name: 5 }), `${at}.functionCall: "name" must be a non-empty string, got a number`],
    [call({ name: "" }), `${at}.functionCall: "name" must be a non-empty string, got ""`],
    [call({ name: "f", id: 1 }), `${at}.functionCall: "id" must be a string, got a number`],
    [call({ name: "f", args: "{}" }), `${at}.functionCall: "args" must be an object, got a string`],
    [call({ name: "f", args: [1] }), `${at}.functionCall: "args" must be an object, got an array`],
    [{ functionCall: "f" }, `${at}: "functionCall" must be an object, got a string`],
    [{ text: 5 }, `${at}: "text" must be a string, got a number`],
    [{ text: "x", thoughtSignature: 5 }, `${at}: "thoughtSignature" must be a string, got a number`],
    ["text", `${at} must be an object, got a string`],
    // Added: more wrong types.
    [[1], `${at} must be an object, got an array`],
    [null, `${at} must be an object, got null`],
    [{ functionCall: [] }, `${at}: "functionCall" must be an object, got an array`],
    [call({ name: "f", willContinue: true, partialArgs: {} }), `${at}.functionCall: "partialArgs" must be an array, got an object`],
  ];
  for (const [part, want] of cases) {
    const good = { functionCall: { name: "ok", id: "c1", args: {} } };
    const [message, events] = run(sse([chunk([good, part], "STOP")]));
    assert.equal(events.at(-1), "error", JSON.stringify(part));
    assert.equal(message.stopReason, "error");
    assert.equal(message.errorMessage, `Malformed google-generative-ai stream: ${want}`, JSON.stringify(part));
    // The good call before it stays as it was; no call with invented fields follows (a streamed call's start, whose
    // fragments were wrong, is there with empty arguments).
    assert.deepEqual(message.content[0], { type: "toolCall", id: "c1", name: "ok", arguments: {} }, JSON.stringify(part));
    assert.equal(message.content.length, JSON.stringify(part).includes("partialArgs") ? 2 : 1);
  }
  const [message] = run(sse([chunk([{ text: null, functionCall: { name: "f", id: null, args: null } }], "STOP")]));
  assert.equal(message.stopReason, "toolUse");
  assert.equal(message.content[0].name, "f");
  assert.deepEqual(message.content[0].arguments, {});
});

test("p_6_9_generated_ids_without_timestamp_use_zero", () => {
  const body = sse([chunk([{ functionCall: { name: "f", args: { a: 1 } } }], "STOP")]);
  const [message] = run(body, {});
  assert.equal(message.content[0].id, "f_0_1");
});

test("p_6_9_usage_only_final_chunk", () => {
  const body = sse([
    chunk([{ text: "Hi" }], "STOP"),
    { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 }, modelVersion: "gemini-2.5-flash-001" },
    { usageMetadata: usageMetadata(), modelVersion: "gemini-2.5-flash-001" },
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_end done"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "Hi" }],
    { usage: usage(), stopReason: "stop", rawStopReason: "STOP" },
  ));
});

test("p_6_10_safety_refusal_is_an_error", () => {
  const blocked = {
    candidates: [{ finishReason: "SAFETY", index: 0,
      safetyRatings: [{ category: "HARM_CATEGORY_DANGEROUS_CONTENT", probability: "HIGH", blocked: true }] }],
    modelVersion: "gemini-2.5-flash-001", responseId: "resp-g1",
  };
  const [message, events] = run(sse([chunk([{ text: "I can" }]), blocked]));
  assert.deepEqual(events, names("text_start text_delta text_end error"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "I can" }],
    { stopReason: "error", errorMessage: "Provider stopped with: SAFETY", rawStopReason: "SAFETY" },
  ));
});

// A finish reason the API does not define ends the stream at its chunk (its usage unread), as pi-ai's mapping throws
// `Unhandled stop reason` there.
test("p_6_10_an_unknown_finish_reason_is_unhandled", () => {
  const odd = {
    candidates: [{ finishReason: "STOPPED", index: 0 }],
    usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
  };
  const [message, events] = run(sse([chunk([{ text: "I can" }]), odd]));
  assert.deepEqual(events, names("text_start text_delta text_end error"));
  assert.equal(message.errorMessage, "Unhandled stop reason: STOPPED");
  assert.equal(message.rawStopReason, "STOPPED");
  assert.equal(message.usage.input, 0, "the chunk's usage is not read");
});

// Depends on the JSON text of the chunk: integers only, so the text is the same however it is written.
test("p_6_9_error_chunk_carries_the_provider_message", () => {
  const error = { error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } };
  const [message, events] = run(sse([chunk([{ text: "Par" }]), error, chunk([{ text: "x" }], "STOP")]));
  assert.deepEqual(events, names("text_start text_delta text_end error"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "Par" }],
    { stopReason: "error", errorMessage: `got status: RESOURCE_EXHAUSTED. ${JSON.stringify(error)}` },
  ));
  assert.ok(message.errorMessage.includes("Resource has been exhausted (e.g. check quota)."));
});

test("p_6_9_no_finish_reason_is_an_error", () => {
  let [message, events] = run(sse([chunk([{ text: "cut" }])]));
  assert.deepEqual(events, names("text_start text_delta text_end error"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "cut" }],
    { stopReason: "error", errorMessage: "Google stream ended without a finish reason" },
  ));
  [message, events] = run("");
  assert.deepEqual(events, names("error"));
  assert.equal(message.errorMessage, "Google stream ended without a finish reason");
});

test("p_6_10_max_tokens_and_continuation_are_length", () => {
  for (const reason of ["MAX_TOKENS", "CONTINUATION"]) {
    const [message, events] = run(sse([chunk([{ text: "The answer is" }], reason)]));
    assert.deepEqual(events, names("text_start text_delta text_end done"));
    assert.deepEqual(message, expected(
      [{ type: "text", text: "The answer is" }],
      { stopReason: "length", rawStopReason: reason },
    ));
  }
  // With tool calls, MAX_TOKENS stays `length`; `STOP` would be `toolUse`.
  const body = sse([chunk([{ functionCall: { name: "f", args: {} } }], "MAX_TOKENS")]);
  assert.equal(run(body)[0].stopReason, "length");
});

// ---- request fixtures ----

const usageZero = () => ({
  input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const build = (m, messages, options, apiKey) => googleGenerativeAi.buildRequest({ model: m, messages, options, apiKey });
const buildError = (...args) => thrownMessage(() => build(...args));

test("p_6_9_request_full_body", () => {
  const messages = [
    { role: "system", content: "You are helpful.", timestamp: 0,
      toolsAdded: [{ name: "get", description: "Get it", parameters: { type: "object",
        properties: { x: { type: "string", const: "k" }, n: { const: 3 }, b: { const: true } } } }] },
    { role: "user", content: "hi", timestamp: 1 },
    { role: "assistant", api: "google-generative-ai", provider: "google", model: "gemini-2.5-flash",
      usage: usageZero(), stopReason: "toolUse", timestamp: 2, content: [
        { type: "thinking", thinking: "hmm", thinkingSignature: "c2lnMQ==" },
        { type: "text", text: "Hello", textSignature: "c2lnMg==" },
        { type: "text", text: "  " },
        { type: "toolCall", id: "get_1", name: "get", arguments: { x: "y" }, thoughtSignature: "c2lnMw==" },
        { type: "toolCall", id: "get_2", name: "get", arguments: { x: "z" }, thoughtSignature: "not base64!" }] },
    { role: "toolResult", toolCallId: "get_1", toolName: "get", isError: false, timestamp: 3,
      content: [{ type: "text", text: "res" }, { type: "image", data: "AAAA", mimeType: "image/png" }] },
    { role: "toolResult", toolCallId: "get_2", toolName: "get", isError: true, timestamp: 3,
      content: [{ type: "text", text: "bad" }] },
    { role: "user", timestamp: 4,
      content: [{ type: "text", text: "look" }, { type: "image", data: "BBBB", mimeType: "image/jpeg" }] },
  ];
  const options = { reasoning: "medium", maxTokens: 100, temperature: 0.5, toolChoice: "none" };
  const request = build(model(), messages, options, "gk");
  assert.equal(request.url,
    "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  assert.deepEqual(request.headers, [["content-type", "application/json"], ["x-goog-api-key", "gk"]]);
  const want = {
    contents: [
      { role: "user", parts: [{ text: "hi" }] },
      { role: "model", parts: [
        { thought: true, text: "hmm", thoughtSignature: "c2lnMQ==" },
        { text: "Hello", thoughtSignature: "c2lnMg==" },
        { functionCall: { name: "get", args: { x: "y" } }, thoughtSignature: "c2lnMw==" },
        { functionCall: { name: "get", args: { x: "z" } } },
      ] },
      { role: "user", parts: [
        { functionResponse: { name: "get", response: { output: "res" } } },
        { functionResponse: { name: "get", response: { error: "bad" } } },
      ] },
      { role: "user", parts: [{ text: "Tool result image:" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }] },
      { role: "user", parts: [{ text: "look" }, { inlineData: { mimeType: "image/jpeg", data: "BBBB" } }] },
    ],
    systemInstruction: { parts: [{ text: "You are helpful." }] },
    tools: [{ functionDeclarations: [{ name: "get", description: "Get it", parametersJsonSchema: { type: "object",
      properties: { x: { type: "string", enum: ["k"] }, n: { enum: [3] }, b: { const: true } } } }] }],
    toolConfig: { functionCallingConfig: { mode: "NONE" } },
    // P-6.2.7: min(100 + 8192, 8000) = 8000 ≤ 8192, so the budget is 8000 − 1024.
    generationConfig: { maxOutputTokens: 8000, temperature: 0.5,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 6976 } },
  };
  assert.deepEqual(request.body, want);
  assert.equal(JSON.stringify(request.body), JSON.stringify(want), "key order");
});

test("p_6_9_request_plain_model_foreign_history", () => {
  const messages = [
    { role: "user", content: [{ type: "text", text: "q" }, { type: "image", data: "B", mimeType: "image/png" }], timestamp: 1 },
    { role: "assistant", api: "openai-responses", provider: "openai", model: "gpt-5", stopReason: "toolUse",
      usage: usageZero(), timestamp: 2, content: [
        { type: "thinking", thinking: "secret", thinkingSignature: "c2lnMQ==" },
        { type: "text", text: "A", textSignature: "c2lnMg==" },
        { type: "toolCall", id: "call_1|fc_1", name: "get", arguments: { n: 1 }, thoughtSignature: "c2lnMw==" }] },
    { role: "toolResult", toolCallId: "call_1|fc_1", toolName: "get", isError: false, timestamp: 3,
      content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
    { role: "assistant", api: "openai-responses", provider: "openai", model: "gpt-5", stopReason: "error",
      usage: usageZero(), timestamp: 4, content: [{ type: "text", text: "dropped" }] },
    { role: "user", content: "next", timestamp: 5 },
  ];
  const m = { id: "gemma-3", api: "google-generative-ai", provider: "google", baseUrl: "http://localhost:9/v1beta/",
    input: ["text"], reasoning: false, maxTokens: 0, contextWindow: 0, samplingParams: { topK: 40 } };
  const request = build(m, messages, { reasoning: "high", toolChoice: "none" }, "gk");
  assert.equal(request.url, "http://localhost:9/v1beta/models/gemma-3:streamGenerateContent?alt=sse");
  assert.deepEqual(request.body, {
    contents: [
      { role: "user", parts: [{ text: "q" }, { text: "(image omitted: model does not support images)" }] },
      { role: "model", parts: [{ text: "A" }, { functionCall: { name: "get", args: { n: 1 } } }] },
      { role: "user", parts: [{ functionResponse: { name: "get",
        response: { output: "(tool image omitted: model does not support images)" } } }] },
      { role: "user", parts: [{ text: "next" }] },
    ],
    generationConfig: { topK: 40 },
  });
});

test("p_6_2_3_key_or_auth_header_required", () => {
  assert.equal(buildError(model(), [], {}, undefined), "No API key for provider: google");
  const withHeader = build(model(), [], { headers: { Authorization: "Bearer t" } }, undefined);
  assert.deepEqual(withHeader.headers, [["content-type", "application/json"]]);
  const m = { ...model(), headers: { "x-goog-api-key": "from-model" } };
  assert.ok(build(m, [], {}, undefined));
  assert.equal(buildError(m, [], { headers: { "x-goog-api-key": null } }, undefined), "No API key for provider: google");
  // Added: an empty key is no key; a model without a provider names none.
  assert.equal(buildError(model(), [], {}, ""), "No API key for provider: google");
  assert.equal(buildError({ ...model(), provider: 5 }, [], {}, undefined), "No API key for provider: ");
});

test("p_6_9_request_thinking_budget_tool_choice_and_empty_config", () => {
  const tools = [{ role: "system", content: "", timestamp: 0,
    toolsAdded: [{ name: "f", description: "d", parameters: { type: "object" } }] }];
  const body = (m, options) => build(m, tools, options, "k").body;
  const m = model();
  // No explicit maxTokens: the model limit, the level's budget (thinkingBudgets wins).
  const high = body(m, { reasoning: "high", thinkingBudgets: { high: 4000 }, toolChoice: "any" });
  assert.deepEqual(high.generationConfig,
    { maxOutputTokens: 8000, thinkingConfig: { includeThoughts: true, thinkingBudget: 4000 } });
  assert.deepEqual(high.toolConfig, { functionCallingConfig: { mode: "ANY" } });
  assert.equal(high.systemInstruction, undefined);
  // Level off: no thinkingConfig; toolChoice auto → AUTO; unknown choices send nothing.
  const off = body(m, { toolChoice: "auto" });
  assert.deepEqual(off.generationConfig, { maxOutputTokens: 8000 });
  assert.deepEqual(off.toolConfig, { functionCallingConfig: { mode: "AUTO" } });
  assert.equal(body(m, { toolChoice: { type: "function" } }).toolConfig, undefined);
  // Nothing to configure: no generationConfig at all.
  assert.equal(body({ ...m, maxTokens: 0 }, {}).generationConfig, undefined);
});

test("p_6_9_const_becomes_enum_only_in_schema_positions", () => {
  const schema = {
    type: "object",
    properties: {
      const: { type: "string", const: "a" },
      mode: { anyOf: [{ const: "x" }, { const: 1.5 }, { const: null }] },
      list: { type: "array", items: { const: 2 }, default: [{ const: "keep" }] },
      kept: { const: "c", enum: ["c", "d"] },
    },
    $defs: { d: { const: "z" } },
    examples: [{ const: "data" }],
    const: "root",
  };
  const want = {
    type: "object",
    properties: {
      const: { type: "string", enum: ["a"] },
      mode: { anyOf: [{ enum: ["x"] }, { enum: [1.5] }, { const: null }] },
      list: { type: "array", items: { enum: [2] }, default: [{ const: "keep" }] },
      kept: { const: "c", enum: ["c", "d"] },
    },
    $defs: { d: { enum: ["z"] } },
    examples: [{ const: "data" }],
    enum: ["root"],
  };
  // const_as_enum is private in the JS: it is reached through a tool's parameters.
  const system = { role: "system", content: "", toolsAdded: [{ name: "t", description: "", parameters: schema }] };
  const before = JSON.stringify(schema);
  const sent = build(model(), [system], {}, "k").body.tools[0].functionDeclarations[0].parametersJsonSchema;
  assert.deepEqual(sent, want);
  assert.equal(JSON.stringify(sent), JSON.stringify(want), "key order: the enum replaces const at the end");
  assert.equal(JSON.stringify(schema), before, "the tool's schema is not changed");
});

// ---- never throws (seeded random inputs) ----

const KEYS = [
  "candidates", "content", "parts", "text", "thought", "thoughtSignature", "functionCall", "name", "args", "id",
  "finishReason", "usageMetadata", "promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount",
  "cachedContentTokenCount", "responseId", "modelVersion", "error", "code", "message", "status", "STOP", "MAX_TOKENS",
  "SAFETY", "role", "model", "provider", "api", "toolCall", "thinking", "thinkingSignature", "textSignature", "user",
  "assistant", "toolResult", "system", "image", "toolsAdded", "parameters", "properties", "items", "anyOf", "const",
  "enum", "reasoning", "maxTokens", "headers", "toolChoice", "none", "timestamp", "google-generative-ai", "google",
  "isError", "toolName", "arguments", "input", "data", "mimeType", "type",
  // Added: the streamed-call fields.
  "willContinue", "partialArgs", "jsonPath", "stringValue", "numberValue", "boolValue", "nullValue",
];
const STRINGS = ["", "a", "QUJD", "c2lnMQ==", "x y", "$.a", "$.a[1]", "$['b']", "$[0]", "$.a.b", "=+/", "_"];

test("p_6_1_2_mapper_never_panics", () => {
  const random = rng(33);
  const arb = () => keyedJson(random, KEYS, STRINGS, 6);
  for (let round = 0; round < 400; round++) {
    const m = model();
    const input = { model: m, messages: [], options: arb(), apiKey: undefined };
    const mapper = mapperFor(googleGenerativeAi, input);
    const asm = Assembler.forModel(m, false);
    for (let n = Math.floor(random() * 24); n > 0; n--) {
      if (asm.finished()) break;
      mapper.onEvent(undefined, arb(), asm);
    }
    mapper.onEnd(asm);
    assert.ok(asm.finished(), `round ${round}`);
    applyOps(asm.drain(), initialMessage(m), { push() {} });
  }
});

test("p_6_1_2_request_never_panics", () => {
  const random = rng(34);
  const arb = () => keyedJson(random, KEYS, STRINGS, 6);
  for (let round = 0; round < 400; round++) {
    const messages = Array.from({ length: Math.floor(random() * 6) }, arb);
    const key = random() < 0.5 ? undefined : ["", "a", "abc"][Math.floor(random() * 3)];
    try {
      JSON.stringify(googleGenerativeAi.buildRequest({ model: arb(), messages, options: arb(), apiKey: key }).body);
    } catch (error) {
      assert.match(error.message, /^No API key for provider: /, `round ${round}`);
    }
  }
});

// ---- More request and stream branches. ----

/** A chunk with only what is given (no responseId/modelVersion). */
const bare = (parts, finish, extra = {}) => ({
  candidates: [{ content: { parts }, ...(finish === undefined ? {} : { finishReason: finish }) }], ...extra,
});
const streamedCall = (...fragmentLists) => [
  chunk([{ functionCall: { name: "f", willContinue: true } }]),
  ...fragmentLists.map((partialArgs, i) =>
    chunk([{ functionCall: { partialArgs, ...(i < fragmentLists.length - 1 ? { willContinue: true } : {}) } }])),
];
const argsOf = (...fragmentLists) => {
  const [message, events] = run(sse([...streamedCall(...fragmentLists), bare([], "STOP")]));
  assert.equal(events.at(-1), "done", message.errorMessage);
  return message.content[0].arguments;
};

test("stream: responseId is the first non-empty one; responseModel follows modelVersion", () => {
  const body = sse([
    { responseId: "", modelVersion: "" },
    { responseId: "r1", modelVersion: "v1" },
    { responseId: "r2", modelVersion: "v2", ...bare([{ text: "x" }], "STOP") },
    { responseId: 5, modelVersion: 6 },
  ]);
  const [message] = run(body);
  assert.equal(message.responseId, "r1");
  assert.equal(message.responseModel, "v2");
  const [none] = run(sse([bare([{ text: "x" }], "STOP")]));
  assert.equal(none.responseId, undefined);
  assert.equal(none.responseModel, undefined);
});

test("stream: thought switches open new blocks; an empty signature keeps the earlier one", () => {
  const body = sse([bare([
    { text: "a", thought: true, thoughtSignature: "S1" },
    { text: "b", thought: true, thoughtSignature: "" },
    { text: "c" },
    { text: "d", thought: "true" },
    { text: "e", thought: true },
    { thoughtSignature: "S2" },
  ], "STOP")]);
  const [message, events] = run(body);
  assert.deepEqual(events, names(
    "thinking_start thinking_delta thinking_delta thinking_end text_start text_delta text_delta text_end " +
    "thinking_start thinking_delta thinking_end done",
  ));
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "ab", thinkingSignature: "S1" },
    { type: "text", text: "cd" },
    { type: "thinking", thinking: "e" },
  ]);
});

// These depend on the chunk's JSON text: integers only, so the text is the same however it is written.
test("stream: error chunk status, code and UNKNOWN", () => {
  const fail = (error) => run(sse([{ error }]))[0].errorMessage;
  assert.equal(fail({ code: 429 }), 'got status: 429. {"error":{"code":429}}');
  assert.equal(fail({ status: 503, code: 1 }), 'got status: 503. {"error":{"status":503,"code":1}}');
  // A `status` that is there but not a string or number is UNKNOWN: `code` is only read when `status` is missing.
  assert.equal(fail({ status: null, code: 429 }), 'got status: UNKNOWN. {"error":{"status":null,"code":429}}');
  assert.equal(fail({ status: true }), 'got status: UNKNOWN. {"error":{"status":true}}');
  assert.equal(fail({}), 'got status: UNKNOWN. {"error":{}}');
  // An `error` that is not an object is no error.
  const [message, events] = run(sse([{ error: "x", ...bare([{ text: "ok" }], "STOP") }]));
  assert.equal(events.at(-1), "done");
  assert.deepEqual(message.content, [{ type: "text", text: "ok" }]);
  assert.equal(run(sse([{ error: [1] }]))[0].errorMessage, "Google stream ended without a finish reason");
});

test("stream: generated ids skip ids already used and replace empty ones", () => {
  const body = sse([bare([
    { functionCall: { name: "f", id: `f_${NOW}_1` } },
    { functionCall: { name: "f" } },
    { functionCall: { name: "g", id: "" } },
    { functionCall: { name: "g", id: `f_${NOW}_1` } },
  ], "STOP")]);
  const [message] = run(body);
  assert.deepEqual(message.content.map((c) => c.id), [`f_${NOW}_1`, `f_${NOW}_2`, `g_${NOW}_3`, `g_${NOW}_4`]);
});

test("stream: the id timestamp is options.timestamp truncated to an unsigned integer", () => {
  const idWith = (timestamp) => {
    const [message] = run(sse([bare([{ functionCall: { name: "f" } }], "STOP")]), { timestamp });
    return message.content[0].id;
  };
  assert.equal(idWith(12.9), "f_12_1");
  assert.equal(idWith(-5), "f_0_1");
  assert.equal(idWith("7"), "f_0_1");
  assert.equal(idWith(null), "f_0_1");
  // The timestamp is printed digit for digit and saturates at 2^64 − 1.
  assert.equal(idWith(2 ** 60), "f_1152921504606846976_1");
  assert.equal(idWith(1e20), "f_18446744073709551615_1");
});

test("stream: every finish reason the API defines", () => {
  const others = [
    "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "SAFETY", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION",
    "IMAGE_OTHER", "RECITATION", "FINISH_REASON_UNSPECIFIED", "OTHER", "LANGUAGE", "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "NO_IMAGE",
  ];
  for (const reason of others) {
    const [message, events] = run(sse([bare([{ text: "x" }], reason)]));
    assert.equal(events.at(-1), "error");
    assert.equal(message.errorMessage, `Provider stopped with: ${reason}`);
    assert.equal(message.rawStopReason, reason);
  }
  // The last finish reason wins; one that is not a string is not read.
  let [message] = run(sse([bare([{ text: "x" }], "SAFETY"), bare([], "STOP"), bare([], 5)]));
  assert.equal(message.stopReason, "stop");
  [message] = run(sse([bare([{ text: "x" }], 5)]));
  assert.equal(message.errorMessage, "Google stream ended without a finish reason");
  // The chunk's parts come before its unknown finish reason.
  const [odd, events] = run(sse([bare([{ text: "kept" }], "stop")]));
  assert.deepEqual(events, names("text_start text_delta text_end error"));
  assert.deepEqual(odd.content, [{ type: "text", text: "kept" }]);
  assert.equal(odd.errorMessage, "Unhandled stop reason: stop");
  // A malformed part comes before the finish reason.
  [message] = run(sse([bare([{ text: 1 }], "STOP")]));
  assert.equal(message.errorMessage, 'Malformed google-generative-ai stream: candidates[0].content.parts[0]: "text" must be a string, got a number');
  assert.equal(message.rawStopReason, undefined);
});

test("stream: candidates, content and parts of other shapes are skipped", () => {
  const body = sse([
    { candidates: {} },
    { candidates: [] },
    { candidates: [null] },
    { candidates: [{ content: "x" }] },
    { candidates: [{ content: { parts: {} } }] },
    { candidates: [{ content: { parts: [{}] } }, { content: { parts: [{ text: "second candidate" }] } }] },
    { candidates: [{ finishReason: "STOP" }] },
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("done"));
  assert.deepEqual(message.content, []);
  assert.equal(message.stopReason, "stop");
});

test("stream: usage fields that are not numbers count 0; the last usage wins", () => {
  const body = sse([
    { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 9, totalTokenCount: 18 } },
    { usageMetadata: "x" },
    { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: "5", thoughtsTokenCount: null }, ...bare([], "STOP") },
  ]);
  const [message] = run(body);
  // No totalTokenCount: the total is 0.
  assert.deepEqual(message.usage, { ...usageOf(10, 0, 0, 0, [["reasoning", 0]], [0.3, 2.5, 0.075, 0]), totalTokens: 0 });
});

test("stream: a streamed call ends at a new named call, at the end, or with its last part", () => {
  // Ended by a named call; a part with name, willContinue and args is a whole call.
  let [message, events] = run(sse([
    chunk([{ functionCall: { name: "a", willContinue: true, partialArgs: [{ jsonPath: "$.x", numberValue: 1 }] },
      thoughtSignature: "U0lH" }]),
    chunk([{ functionCall: { name: "b", willContinue: true, args: { y: 2 } } }]),
    chunk([{ functionCall: { name: "c", willContinue: true } }], "STOP"),
  ]));
  assert.deepEqual(events, names(
    "toolcall_start toolcall_delta toolcall_end toolcall_start toolcall_delta toolcall_end toolcall_start toolcall_end done",
  ));
  assert.deepEqual(message.content, [
    { type: "toolCall", id: `a_${NOW}_1`, name: "a", arguments: { x: 1 }, thoughtSignature: "U0lH" },
    { type: "toolCall", id: `b_${NOW}_2`, name: "b", arguments: { y: 2 } },
    // Still open at the end: closed with what its fragments built.
    { type: "toolCall", id: `c_${NOW}_3`, name: "c", arguments: {} },
  ]);
  assert.equal(message.stopReason, "toolUse");
  // After the streamed call ended, a part without a name is an error.
  [message] = run(sse([...streamedCall([{ jsonPath: "$.x", boolValue: false }]), chunk([{ functionCall: { partialArgs: [] } }], "STOP")]));
  assert.equal(message.errorMessage,
    'Malformed google-generative-ai stream: candidates[0].content.parts[0].functionCall: "name" must be a non-empty string, got missing');
  assert.deepEqual(message.content[0].arguments, { x: false });
  // A text part in between does not end it; `willContinue` must be `true` itself.
  [message, events] = run(sse([
    chunk([{ functionCall: { name: "f", willContinue: true } }]),
    chunk([{ text: "t" }, { functionCall: { partialArgs: [{ jsonPath: "$.s", stringValue: "v" }], willContinue: "yes" } }]),
    chunk([{ functionCall: { name: "g", willContinue: 1, partialArgs: [{ jsonPath: "$.z", numberValue: 1 }] } }], "STOP"),
  ]));
  assert.deepEqual(message.content.map((b) => b.type === "toolCall" ? b.arguments : b.text), [{ s: "v" }, "t", {}]);
});

test("stream: partialArgs values, continued strings and skipped fragments", () => {
  // A continued string appends only at the same path; a new path or a value ends the continuation.
  assert.deepEqual(argsOf(
    [{ jsonPath: "$.a", stringValue: "x", willContinue: true }, { jsonPath: "$.b", stringValue: "y" }],
    [{ jsonPath: "$.a", stringValue: "z" }],
  ), { a: "z", b: "y" });
  assert.deepEqual(argsOf(
    [{ jsonPath: "$.a", stringValue: "x", willContinue: true }],
    [{ jsonPath: "$.a", stringValue: "y", willContinue: true }, { jsonPath: "$.a", stringValue: "z" }],
    [{ jsonPath: "$.a", stringValue: "!" }],
  ), { a: "!" });
  assert.equal(argsOf(
    [{ jsonPath: "$.a", stringValue: "x", willContinue: true }, { jsonPath: "$.a", numberValue: 3, willContinue: true }],
    [{ jsonPath: "$.a", stringValue: "y" }],
  ).a, "y");
  // The first value kind present wins; a fragment without one only makes its containers.
  assert.deepEqual(argsOf([
    { jsonPath: "$.s", stringValue: "s", numberValue: 1 },
    { jsonPath: "$.n", numberValue: 1, boolValue: true },
    { jsonPath: "$.b", numberValue: "1", boolValue: true },
    { jsonPath: "$.z", boolValue: "true", nullValue: 0 },
    { jsonPath: "$.skip.me" },
    { jsonPath: "$.skip2", numberValue: "1" },
  ]), { s: "s", n: 1, b: true, z: null, skip: {} });
});

test("stream: partialArgs paths make and replace containers", () => {
  assert.deepEqual(argsOf([
    { jsonPath: "$.a", stringValue: "flat" },
    { jsonPath: "$.a.b", numberValue: 1 },
    { jsonPath: "$.l[2]", numberValue: 2 },
    { jsonPath: "$.m[1][1]", boolValue: true },
    { jsonPath: "$.o.k", numberValue: 0 },
    { jsonPath: "$.o[0]", numberValue: 5 },
    { jsonPath: '$["q"][+1]', stringValue: "p" },
    { jsonPath: "$.i[01].j", numberValue: 3 },
  ]), { a: { b: 1 }, l: [null, null, 2], m: [null, [null, true]], o: [5], q: [null, "p"], i: [null, { j: 3 }] });
  // A root index is no member of the arguments object.
  assert.deepEqual(argsOf([{ jsonPath: "$[0]", numberValue: 1 }, { jsonPath: "$[0].a", numberValue: 1 }]), {});
  // `__proto__` is a member like any other, never the prototype.
  const args = argsOf([{ jsonPath: "$.__proto__.a.b", stringValue: "v" }, { jsonPath: "$['__proto__'].c", numberValue: 1 }]);
  assert.equal(JSON.stringify(args), '{"__proto__":{"a":{"b":"v"},"c":1}}');
  assert.equal(Object.getPrototypeOf(args), Object.prototype);
  assert.equal({}.a, undefined, "Object.prototype untouched");
  for (const bad of ["$[]", "$['a]", "$[-1]", "$[1.5]", "$[1]x", "$.a..b", "$ .a"]) {
    const [message] = run(sse([...streamedCall([{ jsonPath: bad, numberValue: 1 }]), bare([], "STOP")]));
    assert.match(message.errorMessage, /jsonPath is not a path this provider reads: /, bad);
  }
});

// Depends on the fragments' JSON text (the `toolcall_delta` deltas): integers only.
test("stream: each fragment is one toolcall_delta carrying it as JSON; the live arguments follow", () => {
  const fragments = [{ jsonPath: "$.a[1]", stringValue: "x", willContinue: true }, { jsonPath: "$.a[1]", stringValue: "y" }];
  const body = sse([...streamedCall(fragments), bare([], "STOP")]);
  // The events share the one live message: its arguments are copied as each event is pushed.
  const input = { model: model(), messages: [], options: { timestamp: NOW }, apiKey: "k" };
  const mapper = mapperFor(googleGenerativeAi, input);
  const asm = Assembler.forModel(input.model, false);
  const message = initialMessage(input.model);
  const seen = [];
  const push = (e) => seen.push([e.type, e.delta, JSON.stringify(message.content[0]?.arguments)]);
  for (const data of [...streamedCall(fragments), bare([], "STOP")]) {
    mapper.onEvent(undefined, data, asm);
    applyOps(asm.drain(), message, { push });
  }
  mapper.onEnd(asm);
  applyOps(asm.drain(), message, { push });
  assert.deepEqual(seen, [
    ["toolcall_start", undefined, "{}"],
    ["toolcall_delta", JSON.stringify(fragments[0]), '{"a":[null,"x"]}'],
    ["toolcall_delta", JSON.stringify(fragments[1]), '{"a":[null,"xy"]}'],
    ["toolcall_end", undefined, '{"a":[null,"xy"]}'],
    ["done", undefined, '{"a":[null,"xy"]}'],
  ]);
  assert.deepEqual(run(body)[0].content[0].arguments, { a: [null, "xy"] });
});

test("stream: malformed partialArgs fragments", () => {
  const at = "candidates[0].content.parts[0].functionCall.partialArgs[1]";
  const cases = [
    [{ stringValue: "x" }, `${at}: "jsonPath" must be a non-empty string, got missing`],
    [{ jsonPath: "" }, `${at}: "jsonPath" must be a non-empty string, got ""`],
    [{ jsonPath: 1 }, `${at}: "jsonPath" must be a non-empty string, got a number`],
    ["$.a", `${at}: "jsonPath" must be a non-empty string, got missing`],
    [{ jsonPath: "$.a", stringValue: 1 }, `${at}: "stringValue" must be a string, got a number`],
  ];
  for (const [fragment, want] of cases) {
    const [message] = run(sse([...streamedCall([{ jsonPath: "$.ok", numberValue: 1 }, fragment]), bare([], "STOP")]));
    assert.equal(message.errorMessage, `Malformed google-generative-ai stream: ${want}`, JSON.stringify(fragment));
    // The stream fails before the call is completed: it closes with the arguments text it has (none).
    assert.deepEqual(message.content[0].arguments, {});
  }
  // `partialArgs: null` is none.
  assert.deepEqual(argsOf(null, [{ jsonPath: "$.a", numberValue: 1 }]), { a: 1 });
});

// ---- Added: request branches. ----

const system = (tools) => ({ role: "system", content: "", toolsAdded: tools });
const hi = { role: "user", content: "hi" };
const own = (content) => ({ role: "assistant", api: "google-generative-ai", provider: "google", model: "gemini-2.5-flash",
  stopReason: "stop", usage: usageZero(), content });

test("request: tool declarations keep given nulls; tool choice is read only from its own names", () => {
  const tools = [{ name: "a" }, { name: null, description: null, parameters: null }, { name: "c", parameters: { type: "string", const: 1 } }];
  const body = build(model(), [system(tools), hi], {}, "k").body;
  assert.deepEqual(body.tools, [{ functionDeclarations: [
    { name: "a", description: "", parametersJsonSchema: {} },
    { name: null, description: null, parametersJsonSchema: null },
    { name: "c", description: "", parametersJsonSchema: { type: "string", enum: [1] } },
  ] }]);
  for (const toolChoice of ["constructor", "toString", "__proto__", "NONE", ["none"]]) {
    assert.equal(build(model(), [system(tools), hi], { toolChoice }, "k").body.toolConfig, undefined, String(toolChoice));
  }
  // Without tools there is no toolConfig.
  assert.equal(build(model(), [hi], { toolChoice: "any" }, "k").body.toolConfig, undefined);
});

test("request: const becomes enum under every schema keyword, to depth 256", () => {
  const params = {
    patternProperties: { "^x": { const: "a" } },
    definitions: { d: { const: "b" } },
    dependentSchemas: { k: { const: "c" } },
    dependencies: { k: ["other"], j: { const: "d" } },
    prefixItems: [{ const: "e" }],
    additionalProperties: { const: "f" },
    not: { const: "g" },
    if: { const: "h" }, then: { const: "i" }, else: { const: "j" },
    contentSchema: { const: "k" },
    oneOf: [{ const: { o: 1 } }, { const: [1] }, { const: false }],
    properties: { p: { const: "x", enum: null } },
    description: { const: "not a schema" },
  };
  const sent = build(model(), [system([{ name: "t", parameters: params }]), hi], {}, "k").body
    .tools[0].functionDeclarations[0].parametersJsonSchema;
  assert.deepEqual(sent, {
    patternProperties: { "^x": { enum: ["a"] } },
    definitions: { d: { enum: ["b"] } },
    dependentSchemas: { k: { enum: ["c"] } },
    dependencies: { k: ["other"], j: { enum: ["d"] } },
    prefixItems: [{ enum: ["e"] }],
    additionalProperties: { enum: ["f"] },
    not: { enum: ["g"] },
    if: { enum: ["h"] }, then: { enum: ["i"] }, else: { enum: ["j"] },
    contentSchema: { enum: ["k"] },
    oneOf: [{ const: { o: 1 } }, { const: [1] }, { const: false }],
    properties: { p: { const: "x", enum: null } },
    description: { const: "not a schema" },
  });
  // A `__proto__` key (as JSON.parse makes it) stays an own member and is not read as the prototype.
  const proto = JSON.parse('{"__proto__": {"const": "x"}, "items": {"__proto__": {"const": "y"}}}');
  const protoSent = build(model(), [system([{ name: "t", parameters: proto }]), hi], {}, "k").body
    .tools[0].functionDeclarations[0].parametersJsonSchema;
  assert.equal(JSON.stringify(protoSent), '{"__proto__":{"const":"x"},"items":{"__proto__":{"const":"y"}}}');
  // Depth: each nested value is one level; a schema at depth 256 is rewritten, one at 257 is sent unchanged.
  const nested = (levels) => {
    let schema = { const: "deep" };
    for (let i = 0; i < levels; i++) schema = { items: schema };
    return schema;
  };
  const innermost = (levels) => {
    let schema = build(model(), [system([{ name: "t", parameters: nested(levels) }]), hi], {}, "k").body
      .tools[0].functionDeclarations[0].parametersJsonSchema;
    for (let i = 0; i < levels; i++) schema = schema.items;
    return schema;
  };
  assert.deepEqual(innermost(256), { enum: ["deep"] });
  assert.deepEqual(innermost(257), { const: "deep" });
});

test("request: model parts, signatures and whitespace", () => {
  const messages = [
    hi,
    own([
      { type: "text", text: "", textSignature: "YQ==" },
      // Blank as the reference's `String#trim` sees it: U+FEFF is white space (dropped), U+0085 is not (sent).
      { type: "text", text: "\ufeff " },
      { type: "text", text: "\u0085" },
      { type: "thinking", thinking: " ", thinkingSignature: "YWJj" },
      { type: "thinking", thinking: "t", thinkingSignature: "ab=c" },
      { type: "thinking", thinking: "u", thinkingSignature: "a===" },
      { type: "text", text: "v", textSignature: "abc" },
      { type: "text", text: "w", textSignature: 5 },
      { type: "text", text: "x", textSignature: "a+/9" },
      { type: "toolCall", id: "1", name: "f", arguments: null, thoughtSignature: "" },
      { type: "toolCall", id: "2", name: "g" },
      { type: "toolCall", id: "3", arguments: "raw" },
      { type: "image", data: "AAAA", mimeType: "image/png" },
    ]),
  ];
  const body = build(model(), messages, {}, "k").body;
  assert.deepEqual(body.contents[1], { role: "model", parts: [
    { text: "", thoughtSignature: "YQ==" },
    { text: "\u0085" },
    { thought: true, text: " ", thoughtSignature: "YWJj" },
    { thought: true, text: "t" },
    { thought: true, text: "u" },
    { text: "v" },
    { text: "w" },
    { text: "x", thoughtSignature: "a+/9" },
    { functionCall: { name: "f", args: {} } },
    { functionCall: { name: "g", args: {} } },
    { functionCall: { name: "", args: "raw" } },
  ] });
  // An assistant message with nothing to send makes no turn.
  const empty = build(model(), [hi, own([{ type: "text", text: " \n" }]), { role: "user", content: "again" }], {}, "k").body;
  assert.deepEqual(empty.contents, [{ role: "user", parts: [{ text: "hi" }] }, { role: "user", parts: [{ text: "again" }] }]);
});

test("request: tool results, their images and turn order", () => {
  const result = (id, content, extra = {}) => ({ role: "toolResult", toolCallId: id, toolName: "f", isError: false, content, ...extra });
  const img = (data) => ({ type: "image", data, mimeType: "image/png" });
  const calls = own([{ type: "toolCall", id: "1", name: "f", arguments: {} }, { type: "toolCall", id: "2", name: "f", arguments: {} },
    { type: "toolCall", id: "3", name: "f", arguments: {} }]);
  const messages = [
    hi, calls,
    result("1", [img("AA"), { type: "text", text: " " }, img("BB")]),
    result("2", [{ type: "text", text: "a" }, { type: "text", text: "b" }], { isError: "true" }),
    result("3", [img("CC")], { toolName: 7 }),
    { role: "user", content: [{ type: "other" }] },
    { role: "user", content: [{ type: "text", text: "end" }] },
  ];
  const body = build(model(), messages, {}, "k").body;
  assert.deepEqual(body.contents.slice(2), [
    { role: "user", parts: [
      { functionResponse: { name: "f", response: { output: "(see attached image)" } } },
      { functionResponse: { name: "f", response: { output: "a\nb" } } },
      { functionResponse: { name: "", response: { output: "(see attached image)" } } },
    ] },
    { role: "user", parts: [{ text: "Tool result image:" }, { inlineData: { mimeType: "image/png", data: "AA" } },
      { inlineData: { mimeType: "image/png", data: "BB" } }] },
    { role: "user", parts: [{ text: "Tool result image:" }, { inlineData: { mimeType: "image/png", data: "CC" } }] },
    { role: "user", parts: [{ text: "end" }] },
  ]);
  // Whitespace-only text without images is sent as "" (and an error result as `error`).
  const blank = build(model(), [hi, own([{ type: "toolCall", id: "1", name: "f", arguments: {} }]),
    result("1", [{ type: "text", text: "  " }], { isError: true })], {}, "k").body;
  assert.deepEqual(blank.contents[2], { role: "user", parts: [{ functionResponse: { name: "f", response: { error: "" } } }] });
});

test("request: generation config order, temperature and non-reasoning models", () => {
  const m = { ...model(), samplingParams: { topP: 0.9, maxOutputTokens: 5 } };
  const body = build(m, [hi], { temperature: 0, reasoning: "low", samplingParams: { seed: 1 } }, "k").body;
  assert.equal(JSON.stringify(body.generationConfig),
    '{"maxOutputTokens":5,"temperature":0,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048},"topP":0.9,"seed":1}');
  assert.equal(build(model(), [hi], { temperature: null }, "k").body.generationConfig.temperature, undefined);
  const plain = build({ ...model(), reasoning: "yes" }, [hi], { reasoning: "high" }, "k").body;
  assert.deepEqual(plain.generationConfig, { maxOutputTokens: 8000 });
  // System prompts of several system messages are joined; a missing id and base URL still make a URL.
  const request = build({ provider: "google" }, [{ role: "system", content: "A" }, { role: "system", content: "B" }, hi], {}, "k");
  assert.equal(request.url, "https://generativelanguage.googleapis.com/v1beta/models/:streamGenerateContent?alt=sse");
  assert.deepEqual(request.body.systemInstruction, { parts: [{ text: "A\n\nB" }] });
  // The key header given in options stands in for the key.
  assert.deepEqual(build(model(), [hi], { headers: { "X-Goog-Api-Key": "h" } }, undefined).headers, [["content-type", "application/json"]]);
});
