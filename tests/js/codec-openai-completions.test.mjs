// The openai-completions wire format (pkg-template/providers/openai-completions.js, §6.6): request bodies compared
// whole, SSE fixtures (tests/fixtures/providers/openai-completions/) driven through the decoder in random chunks, tool
// call fragments (P-6.4.1), stream errors (issue 13), and seeded random inputs that must never throw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  normalizeToolCallId,
  openaiCompletions,
  sanitizeId,
} from "../../pkg-template/providers/openai-completions.js";
import { Assembler } from "../../pkg-template/providers/assemble.js";
import { mapperFor } from "../../pkg-template/providers/index.js";
import { names, run, sse as sseOf, usage } from "./codec-harness.mjs";

const FIXTURES = new URL("../fixtures/providers/openai-completions/", import.meta.url);
const fixture = (name) => readFileSync(new URL(name, FIXTURES), "utf8");

const model = () => ({
  id: "gpt-x", name: "x", api: "openai-completions", provider: "openai",
  baseUrl: "https://api.openai.com/v1/", reasoning: true, input: ["text", "image"],
  cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000, maxTokens: 16384,
});

const localModel = () => ({
  id: "qwen", name: "q", api: "openai-completions", provider: "llama.cpp",
  baseUrl: "http://127.0.0.1:8080/v1", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0, maxTokens: 0,
});

const build = (m, messages, options, key) => openaiCompletions.buildRequest({ model: m, messages, options, apiKey: key });
const stream = (m, text) => run(openaiCompletions, m, {}, text);
const DONE = "data: [DONE]\n\n";

/** An assistant message of `model()` (the transcript keeps its thinking and signatures). */
const own = (content, extra = {}) => ({
  role: "assistant", content, api: "openai-completions", provider: "openai", model: "gpt-x",
  stopReason: "stop", timestamp: 2, ...extra,
});

test("s_6_6_request_full_body_matches_reference", () => {
  const options = { reasoning: "high", temperature: 0.3, sessionId: "sess-1", toolChoice: "auto", samplingParams: { top_p: 0.8 } };
  const request = build(model(), JSON.parse(fixture("transcript.json")), options, "sk-1");
  assert.equal(request.url, "https://api.openai.com/v1/chat/completions");
  assert.deepEqual(request.headers, [["content-type", "application/json"], ["authorization", "Bearer sk-1"]]);
  // pi-ai 1.6.0 sends the same body plus `store: false`, and heads tool-result images with
  // "Attached image(s) from tool result:" where §6.6 says "Tool result image:".
  const expected = {
    model: "gpt-x",
    messages: [
      { role: "developer", content: "You are terse.\n\nLater update\n\nNo lies." },
      { role: "user", content: [
        { type: "text", text: "Look" },
        { type: "image_url", image_url: { url: "data:image/png;base64,QUJD" } }] },
      { role: "assistant", content: "Reading.", reasoning_content: "Plan", tool_calls: [
        { id: "call_a", type: "function", function: { name: "read", arguments: "{\"path\":\"a.txt\"}" } }] },
      { role: "tool", content: "line1\nline2", tool_call_id: "call_a" },
      { role: "user", content: [
        { type: "text", text: "Tool result image:" },
        { type: "image_url", image_url: { url: "data:image/jpeg;base64,REVG" } }] },
      { role: "assistant", content: "Again.", tool_calls: [
        { id: "call_9_1x7rido1", type: "function", function: { name: "read", arguments: "{\"path\":\"b\"}" } }] },
      { role: "tool", content: "(no tool output)", tool_call_id: "call_9_1x7rido1" },
      { role: "user", content: "Go on" },
    ],
    stream: true,
    prompt_cache_key: "sess-1",
    stream_options: { include_usage: true },
    max_completion_tokens: 16384,
    temperature: 0.3,
    tools: [{ type: "function", function: { name: "read", description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } } }],
    tool_choice: "auto",
    reasoning_effort: "high",
    top_p: 0.8,
  };
  assert.deepEqual(request.body, expected);
  // Key order too, all the way down (the wire text is what the server sees).
  assert.equal(JSON.stringify(request.body), JSON.stringify(expected));
});

test("s_6_6_request_local_server_minimal", () => {
  const messages = [{ role: "system", content: "Sys", timestamp: 0 }, { role: "user", content: "hi", timestamp: 1 }];
  const request = build(localModel(), messages, { reasoning: "high", sessionId: "s" }, undefined);
  assert.equal(request.url, "http://127.0.0.1:8080/v1/chat/completions");
  assert.deepEqual(request.headers, [["content-type", "application/json"]]);
  assert.deepEqual(request.body, {
    model: "qwen", messages: [{ role: "system", content: "Sys" }, { role: "user", content: "hi" }],
    stream: true, stream_options: { include_usage: true },
  });
});

test("s_6_6_request_compat_switches", () => {
  const m = localModel();
  m.reasoning = true;
  m.maxTokens = 2048;
  m.thinkingLevelMap = { low: "lite", medium: null };
  m.compat = {
    supportsUsageInStreaming: false, maxTokensField: "max_completion_tokens", supportsDeveloperRole: true,
    requiresNonNullAssistantContent: true, requiresToolResultName: true, requiresReasoningContentOnAssistantMessages: true,
  };
  const messages = [
    { role: "system", content: "Sys", timestamp: 0 },
    { role: "user", content: [{ type: "text", text: "hi" }, { type: "image", data: "AA", mimeType: "image/png" }], timestamp: 1 },
    { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "t", arguments: { a: [1] } }],
      api: "openai-completions", provider: "llama.cpp", model: "qwen", stopReason: "toolUse", timestamp: 2 },
    { role: "toolResult", toolCallId: "c1", toolName: "t", content: [{ type: "image", data: "BB", mimeType: "image/png" }], isError: false, timestamp: 3 },
  ];
  const body = build(m, messages, { reasoning: "low", toolChoice: "required" }).body;
  const expected = {
    model: "qwen",
    messages: [
      { role: "developer", content: "Sys" },
      { role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: "(image omitted: model does not support images)" }] },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function",
        function: { name: "t", arguments: "{\"a\":[1]}" } }], reasoning_content: "" },
      { role: "tool", content: "(tool image omitted: model does not support images)", tool_call_id: "c1", name: "t" },
    ],
    stream: true,
    max_completion_tokens: 2048,
    tool_choice: "required",
    reasoning_effort: "lite",
  };
  assert.deepEqual(body, expected);
  assert.equal(JSON.stringify(body), JSON.stringify(expected));
  // A null map entry omits the effort; xhigh/max become high; supportsReasoningEffort false omits it.
  assert.equal("reasoning_effort" in build(m, messages, { reasoning: "medium" }).body, false);
  assert.equal(build(m, messages, { reasoning: "max" }).body.reasoning_effort, "high");
  m.compat.supportsReasoningEffort = false;
  assert.equal("reasoning_effort" in build(m, messages, { reasoning: "low" }).body, false);
});

test("s_6_6_request_max_tokens_field_and_cache_key_rules", () => {
  const messages = [{ role: "user", content: "hi", timestamp: 1 }];
  let m = localModel();
  m.maxTokens = 1000;
  assert.equal(build(m, messages, {}).body.max_tokens, 1000);
  m.compat = { maxTokensField: "max_tokens" };
  m.provider = "openai";
  assert.equal(build(m, messages, { maxTokens: 10 }).body.max_tokens, 10);
  m = model();
  m.baseUrl = "";
  assert.equal("prompt_cache_key" in build(m, messages, { sessionId: "s", cacheRetention: "none" }, "k").body, false);
  assert.equal(build(m, messages, { sessionId: "k".repeat(100) }, "k").body.prompt_cache_key, "k".repeat(64));
});

test("tool_call_ids_normalised_like_the_reference", () => {
  // Values computed with pi-ai 1.6.0's normaliser (its shortHash: "sbtd1t3g86n" for this id).
  assert.equal(normalizeToolCallId("call_abc|fc_1", false), "call_abc_fc_1");
  assert.equal(normalizeToolCallId(`call_abc|fc_${"x".repeat(60)}`, false), "call_abc_sbtd1t3g");
  assert.equal(normalizeToolCallId("a|b😀", false), "a_b__");
  assert.equal(normalizeToolCallId("x".repeat(50), true), "x".repeat(40));
  assert.equal(normalizeToolCallId("x".repeat(50), false), "x".repeat(50));
  // The hash runs over UTF-16 units (pi-ai's shortHash of this id: "jtpk73xfdnw0").
  assert.equal(normalizeToolCallId(`${"a".repeat(30)}|${"😀".repeat(10)}`, false), `${"a".repeat(30)}_jtpk73xf`);
});

test("normalize_tool_call_id: empty item, long call part, OpenAI cut counts characters", () => {
  // An empty item keeps the call alone; only the first `|` splits.
  assert.equal(normalizeToolCallId("call_1|", true), "call_1");
  assert.equal(normalizeToolCallId("a|b|c", false), "a_b_c");
  // A call part past 40 is cut to 31 before the hash.
  const long = normalizeToolCallId(`${"c".repeat(50)}|x`, false);
  assert.match(long, /^c{31}_[0-9a-z]{8}$/);
  // OpenAI's cut is on characters (an astral one is kept whole) once the UTF-16 length passes 40.
  assert.equal(normalizeToolCallId(`${"x".repeat(39)}😀yy`, true), `${"x".repeat(39)}😀`);
  assert.equal(normalizeToolCallId(`${"x".repeat(38)}😀`, true), `${"x".repeat(38)}😀`);
});

test("sanitize_id: one underscore per UTF-16 unit outside [A-Za-z0-9_-]", () => {
  assert.equal(sanitizeId("aZ0_-"), "aZ0_-");
  assert.equal(sanitizeId("a.b c/é😀"), "a_b_c____");
  assert.equal(sanitizeId(""), "");
});

test("s_6_6_stream_text_with_usage_only_final_chunk", () => {
  const [message, events] = stream(model(), fixture("text.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
  assert.deepEqual(message.content, [{ type: "text", text: "Hello, wörld 🌍!" }]);
  assert.equal(message.responseId, "chatcmpl-1");
  assert.equal(message.responseModel, "gpt-x-2025");
  assert.equal(message.stopReason, "stop");
  assert.equal(message.rawStopReason, "stop");
  assert.deepEqual(message.usage, usage(20, 9, 100, 0, [["reasoning", 3]], [1, 2, 0, 0]));
});

test("p_6_1_4_completions_blocks_stay_open_and_close_in_content_order", () => {
  const [message, events] = stream(model(), fixture("thinking.sse"));
  assert.deepEqual(events, names([
    "start", "thinking_start", "thinking_delta", "thinking_delta", "text_start", "text_delta", "thinking_delta",
    "text_delta", "thinking_end", "text_end", "done",
  ]));
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "Let me think. More.", thinkingSignature: "reasoning_content" },
    { type: "text", text: "Answer done" },
  ]);
  // The model echoed its own id: no responseModel.
  assert.equal("responseModel" in message, false);
});

test("p_6_4_1_parallel_interleaved_tool_calls_with_index_starting_at_1", () => {
  const [message, events] = stream(model(), fixture("tools_index1.sse"));
  assert.deepEqual(events, names([
    "start", "text_start", "text_delta", "toolcall_start", "toolcall_delta", "toolcall_start", "toolcall_delta",
    "toolcall_delta", "toolcall_delta", "toolcall_delta", "text_end", "toolcall_end", "toolcall_end", "done",
  ]));
  assert.deepEqual(message.content, [
    { type: "text", text: "Checking." },
    { type: "toolCall", id: "call_A", name: "read", arguments: { path: "a.txt" } },
    { type: "toolCall", id: "call_B", name: "grep", arguments: { pattern: "x\ty" } },
  ]);
  assert.equal(message.stopReason, "toolUse");
  assert.equal(message.rawStopReason, "tool_calls");
  assert.deepEqual(message.usage, usage(50, 20, 0, 0, [["reasoning", 0]], [1, 2, 0, 0]));
});

test("p_6_4_1_missing_id_becomes_call_n_and_id_only_fragments_join", () => {
  // pi-ai leaves the id "" where §6.6 says call_<n>.
  const [message, events] = stream(model(), fixture("tools_no_id.sse"));
  assert.deepEqual(events, names([
    "start", "toolcall_start", "toolcall_delta", "toolcall_start", "toolcall_delta", "toolcall_delta",
    "toolcall_end", "toolcall_end", "done",
  ]));
  assert.deepEqual(message.content, [
    { type: "toolCall", id: "call_0", name: "ls", arguments: {} },
    { type: "toolCall", id: "only-id", name: "cat", arguments: { f: 1 } },
  ]);
});

test("P-6.4.1: a made-up call_<n> id is replaced by the first id a later fragment brings; the name by the first name", () => {
  const sse = sseOf([
    [null, { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: "{\"a\"" } }] } }] }],
    [null, { choices: [{ delta: { tool_calls: [{ index: 0, id: "real", function: { name: "f", arguments: ":1" } }] } }] }],
    [null, { choices: [{ delta: { tool_calls: [{ index: 0, id: "other", function: { name: "g", arguments: "}" } }] } }] }],
    // Found by its second id (no index).
    [null, { choices: [{ delta: { tool_calls: [{ id: "other", function: { arguments: "" } }] }, finish_reason: "function_call" }] }],
  ]) + DONE;
  const [message] = stream(model(), sse);
  assert.deepEqual(message.content, [{ type: "toolCall", id: "real", name: "f", arguments: { a: 1 } }]);
  assert.equal(message.stopReason, "toolUse");
  assert.equal(message.rawStopReason, "function_call");
});

test("s_6_6_refusal_streams_as_text", () => {
  // pi-ai 1.6.0 drops `refusal`; §6.6 maps it to text.
  const [message, events] = stream(model(), fixture("refusal.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
  assert.deepEqual(message.content, [{ type: "text", text: "I can't help with that." }]);
});

test("s_6_6_error_chunk_ends_the_stream", () => {
  let [message, events] = stream(model(), fixture("error_chunk.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_end", "error"]));
  assert.deepEqual(message.content, [{ type: "text", text: "Partial" }]);
  assert.equal(message.stopReason, "error");
  assert.equal(message.errorMessage, "Rate limit exceeded");
  [message] = stream(model(), "data: {\"error\":\"boom\"}\n\n");
  assert.equal(message.errorMessage, "\"boom\"");
});

test("s_6_6 error chunk: a non-string or empty message is written as JSON", () => {
  const error = (value) => stream(model(), `data: ${JSON.stringify({ error: value })}\n\n`)[0];
  assert.equal(error({ message: { text: "x" } }).errorMessage, "{\"text\":\"x\"}");
  assert.equal(error({ message: "", code: 5 }).errorMessage, "{\"message\":\"\",\"code\":5}");
  assert.equal(error({ code: 5 }).errorMessage, "{\"code\":5}");
  // A falsy error is no error: the chunk is read as usual.
  const [message] = stream(model(), `data: {"error":null,"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n${DONE}`);
  assert.equal(message.stopReason, "stop");
  // The finish reason seen before the error is its raw stop reason.
  const [failed] = stream(model(), `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\ndata: {"error":{"message":"late"}}\n\n`);
  assert.equal(failed.errorMessage, "late");
  assert.equal(failed.rawStopReason, "stop");
});

test("s_6_6_missing_finish_reason_is_an_error_unless_compat_says_none_come", () => {
  const text = fixture("no_finish.sse");
  let [message, events] = stream(model(), text);
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_delta", "text_end", "error"]));
  assert.equal(message.errorMessage, "Stream ended without finish_reason");
  assert.equal("rawStopReason" in message, false);

  const m = model();
  m.compat = { supportsFinishReason: false };
  [message, events] = stream(m, text);
  assert.equal(events.at(-1), "done");
  assert.equal(message.stopReason, "stop");
  [message] = stream(m, fixture("tools_no_id.sse").replace("\"tool_calls\"}", "null}"));
  assert.equal(message.stopReason, "toolUse");
});

test("s_6_10_length_truncates_a_tool_call", () => {
  const [message, events] = stream(model(), fixture("length.sse"));
  assert.deepEqual(events, names([
    "start", "text_start", "text_delta", "toolcall_start", "toolcall_delta", "text_end", "toolcall_end", "done",
  ]));
  assert.equal(message.stopReason, "length");
  const call = message.content[1];
  assert.deepEqual(call.arguments, {});
  assert.ok(call.argumentsError.endsWith("\n\nReceived arguments:\n{\"text\": \"abc"), call.argumentsError);
});

test("s_6_10_content_filter_is_provider_finish_reason_error", () => {
  const [message, events] = stream(model(), fixture("content_filter.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_end", "error"]));
  assert.equal(message.errorMessage, "Provider finish_reason: content_filter");
  assert.equal(message.rawStopReason, "content_filter");
});

test("§6.10 finish reasons: `end` is stop; a truthy non-string one is written as JSON", () => {
  let [message] = stream(model(), `data: {"choices":[{"delta":{"content":"a"},"finish_reason":"end"}]}\n\n${DONE}`);
  assert.equal(message.stopReason, "stop");
  assert.equal(message.rawStopReason, "end");
  [message] = stream(model(), `data: {"choices":[{"delta":{},"finish_reason":1}]}\n\n${DONE}`);
  assert.equal(message.errorMessage, "Provider finish_reason: 1");
  assert.equal(message.rawStopReason, "1");
  // "" and false record nothing; a later reason still counts.
  [message] = stream(model(), `data: {"choices":[{"delta":{},"finish_reason":"length"}]}\n\ndata: {"choices":[{"delta":{},"finish_reason":""}]}\n\n${DONE}`);
  assert.equal(message.stopReason, "length");
});

test("s_6_10_usage_inside_the_choice_and_top_level_cached_tokens", () => {
  const [message] = stream(model(), fixture("choice_usage.sse"));
  assert.deepEqual(message.usage, usage(20, 2, 10, 0, [["reasoning", 0]], [1, 2, 0, 0]));
  assert.equal(message.responseModel, "kimi");
});

test("s_6_10_usage_cache_write_and_deepseek_hits", () => {
  const sse = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,\"prompt_cache_hit_tokens\":30,\"prompt_tokens_details\":{\"cache_write_tokens\":50},\"reasoning_tokens\":4}}\n\ndata: [DONE]\n\n";
  const [message] = stream(model(), sse);
  assert.deepEqual(message.usage, usage(20, 5, 30, 50, [["reasoning", 4]], [1, 2, 0, 0]));
});

test("§6.10 usage: a zero completion reasoning count falls back to the top-level one; input never below 0", () => {
  const chunk = { choices: [{ delta: {}, finish_reason: "stop" }], usage: {
    prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 30 },
    completion_tokens_details: { reasoning_tokens: 0 }, reasoning_tokens: 7 } };
  const [message] = stream(model(), sseOf([[null, chunk]]) + DONE);
  assert.deepEqual(message.usage, usage(0, 1, 30, 0, [["reasoning", 7]], [1, 2, 0, 0]));
  // A top-level usage that is not an object (or falsy) is skipped, the choice's is read.
  const odd = { choices: [{ delta: {}, finish_reason: "stop", usage: { prompt_tokens: 4 } }], usage: 0 };
  assert.deepEqual(stream(model(), sseOf([[null, odd]]) + DONE)[0].usage, usage(4, 0, 0, 0, [["reasoning", 0]], [1, 2, 0, 0]));
  const arrayUsage = { choices: [{ delta: {}, finish_reason: "stop" }], usage: [1] };
  assert.equal(stream(model(), sseOf([[null, arrayUsage]]) + DONE)[0].usage.totalTokens, 0);
});

test("issue 33: OpenRouter's usage carries the billed cost", () => {
  const m = model();
  m.provider = "openrouter";
  m.baseUrl = "https://openrouter.ai/api/v1";
  const chunk = { choices: [{ delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 2, cost: 0.5, is_byok: false } };
  const [message] = stream(m, sseOf([[null, chunk]]) + DONE);
  assert.equal(message.usage.cost.total, 0.5);
  assert.equal(message.usage.cost.totalFromProvider, true);
  // Elsewhere the same field is ignored.
  const [plain] = stream(model(), sseOf([[null, chunk]]) + DONE);
  assert.equal(plain.usage.cost.totalFromProvider, false);
});

test("p_6_3_2_non_json_data_is_an_error_and_done_stops_reading", () => {
  let [message, events] = stream(model(), "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {oops\n\n");
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_end", "error"]));
  assert.equal(message.errorMessage, "Invalid JSON in provider stream: {oops");
  const sse = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n";
  [message, events] = stream(model(), sse);
  assert.deepEqual(events, names(["start", "done"]));
  assert.deepEqual(message.content, []);
});

test("on_text: [DONE] is read trimmed (the reference's String#trim); empty data is left to on_unparsed; JSON that is no object is skipped", () => {
  const mapper = openaiCompletions.streamMapper({ model: model(), messages: [], options: {} });
  const asm = Assembler.forModel(model(), true);
  assert.equal(mapper.onText(undefined, " \t", asm), false);
  assert.equal(asm.finished(), false);
  mapper.onEvent(undefined, [1, 2], asm);
  mapper.onEvent(undefined, "text", asm);
  assert.deepEqual(asm.drain(), []);
  mapper.onEvent(undefined, { choices: [{ delta: {}, finish_reason: "stop" }] }, asm);
  assert.equal(mapper.onText(undefined, "\ufeff[DONE] \n", asm), true);
  assert.equal(asm.finished(), true);
  // U+0085 is no white space to `String#trim`: the text is not [DONE].
  const other = openaiCompletions.streamMapper({ model: model(), messages: [], options: {} });
  const failed = Assembler.forModel(model(), true);
  assert.equal(other.onText(undefined, "\u0085[DONE]", failed), true);
  const ops = failed.drain();
  assert.equal(ops.at(-1).message, "Invalid JSON in provider stream: \u0085[DONE]");
});

test("issue_13_malformed_tool_call_fragments_are_stream_errors", () => {
  const chunk = (toolCalls) => `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { tool_calls: toolCalls } }] })}\n\n`;
  const good = () => ({ index: 0, id: "call_1", function: { name: "f", arguments: "{}" } });
  const withField = (key, value) => ({ ...good(), [key]: value });
  const fnField = (key, value) => {
    const fragment = good();
    fragment.function[key] = value;
    return fragment;
  };
  const finish = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
  const at = "choices[0].delta.tool_calls[0]";
  const cases = [
    [chunk([withField("index", "0")]), `${at}: "index" must be an integer ≥ 0, got a string`],
    [chunk([withField("index", -1)]), `${at}: "index" must be an integer ≥ 0, got a number`],
    [chunk([withField("index", 1.5)]), `${at}: "index" must be an integer ≥ 0, got a number`],
    [chunk([withField("id", 7)]), `${at}: "id" must be a string, got a number`],
    [chunk([withField("function", "f")]), `${at}: "function" must be an object, got a string`],
    [chunk([fnField("name", ["f"])]), `${at}.function: "name" must be a string, got an array`],
    [chunk([fnField("arguments", { a: 1 })]), `${at}.function: "arguments" must be a string, got an object`],
    [chunk(["call"]), `${at} must be an object, got a string`],
    [chunk({ index: 0 }), "choices[0].delta: \"tool_calls\" must be an array, got an object"],
    [chunk([{ index: 0, id: "call_1", function: { arguments: "{}" } }]), "tool call 0: no fragment carried \"function.name\""],
    [chunk([fnField("name", null)]), "tool call 0: no fragment carried \"function.name\""],
  ];
  for (const [body, want] of cases) {
    const [message, events] = stream(model(), `${body}${finish}`);
    assert.equal(events.at(-1), "error", body);
    assert.equal(message.stopReason, "error");
    assert.equal(message.errorMessage, `Malformed openai-completions stream: ${want}`, body);
  }
  // The well-formed fragment is a tool call; null fields read as missing (servers send them).
  let [message] = stream(model(), `${chunk([good()])}${finish}`);
  assert.equal(message.stopReason, "toolUse");
  assert.deepEqual(message.content, [{ type: "toolCall", id: "call_1", name: "f", arguments: {} }]);
  const nulls = [{ index: 0, id: "call_1", type: null, function: { name: "f", arguments: null } }, { index: null, id: "call_1", function: null }];
  [message] = stream(model(), `${chunk(nulls)}${finish}`);
  assert.equal(message.stopReason, "toolUse");
  assert.deepEqual(message.content, [{ type: "toolCall", id: "call_1", name: "f", arguments: {} }]);
});

test("issue 13: the second bad fragment is named by its position; the unnamed call's error keeps the finish reason", () => {
  const chunk = { choices: [{ delta: { tool_calls: [{ index: 0, id: "a", function: { name: "f" } }, { index: 1, id: 3 }] } }] };
  let [message] = stream(model(), sseOf([[null, chunk]]));
  assert.equal(message.errorMessage, "Malformed openai-completions stream: choices[0].delta.tool_calls[1]: \"id\" must be a string, got a number");
  const unnamed = { choices: [{ delta: { tool_calls: [{ index: 0, function: { name: "f" } }, { index: 1 }] }, finish_reason: "tool_calls" }] };
  [message] = stream(model(), sseOf([[null, unnamed]]) + DONE);
  assert.equal(message.errorMessage, "Malformed openai-completions stream: tool call 1: no fragment carried \"function.name\"");
  assert.equal(message.rawStopReason, "tool_calls");
});

test("P-6.4.1: an index of 2^63 or more is no index: each such fragment starts a call", () => {
  const fragment = (name) => ({ index: 1e19, function: { name, arguments: "{}" } });
  const sse = sseOf([[null, { choices: [{ delta: { tool_calls: [fragment("a"), fragment("b")] }, finish_reason: "tool_calls" }] }]]) + DONE;
  const [message] = stream(model(), sse);
  assert.deepEqual(message.content.map((c) => [c.id, c.name]), [["call_0", "a"], ["call_1", "b"]]);
});

test("issue_33_reasoning_details_merge_keep_the_signature_and_close_into_the_thinking_signature", () => {
  const chunk = (details) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { reasoning_details: details } }] })}\n\n`;
  const fmt = "anthropic-claude-v1";
  const end = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
  let sse = [
    chunk([{ type: "reasoning.text", text: "", signature: "", format: fmt, index: 0 }]),
    chunk([{ type: "reasoning.text", text: "Think", format: fmt, index: 0 }]),
    chunk([{ type: "reasoning.text", text: "ing.", format: fmt, index: 0 }]),
    chunk([{ type: "reasoning.text", signature: "SIG", format: fmt, index: 0 }]),
    chunk([{ type: "reasoning.encrypted", data: "opaque", id: "r1" }, { type: "unknown" }, 7]),
    end,
  ].join("");
  let [message, events] = stream(model(), sse);
  assert.deepEqual(events, ["start", "thinking_start", "text_start", "text_delta", "thinking_end", "text_end", "done"]);
  const thinking = message.content[0];
  assert.equal(thinking.thinking, "", "details are replay data, not text");
  // `signature ||= …` drops the empty one, then the signature-only detail's joins (the reference drops that one).
  assert.deepEqual(JSON.parse(thinking.thinkingSignature), [
    { type: "reasoning.text", text: "Thinking.", format: fmt, index: 0, signature: "SIG" },
    { type: "reasoning.encrypted", data: "opaque", id: "r1" },
  ]);
  // `index ??= …`, as `id`: a first fragment without one takes the next fragment's, at the end of its keys.
  sse = [
    chunk([{ type: "reasoning.text", text: "A", format: fmt }]),
    chunk([{ type: "reasoning.text", text: "B", format: fmt, index: 0 }]),
    end,
  ].join("");
  [message] = stream(model(), sse);
  assert.equal(message.content[0].thinkingSignature, '[{"type":"reasoning.text","text":"AB","format":"anthropic-claude-v1","index":0}]');
});

test("issue 33: summaries merge like texts; a missing id on the right removes the key; encrypted ones stay apart", () => {
  const chunk = (details) => `data: ${JSON.stringify({ choices: [{ delta: { reasoning_details: details } }] })}\n\n`;
  const sse = [
    chunk([{ type: "reasoning.summary", summary: "S1", id: null, format: "" }]),
    chunk([{ type: "reasoning.summary", summary: "S2", format: "f" }]),
    chunk([{ type: "reasoning.encrypted", data: "d1" }, { type: "reasoning.encrypted", data: "d2" }]),
    // Invalid: a mistyped `index`, a `reasoning.text` with neither text nor signature, a non-string text.
    chunk([{ type: "reasoning.summary", summary: "x", index: "0" }, { type: "reasoning.text" }, { type: "reasoning.text", text: 1 }]),
    `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n${DONE}`,
  ].join("");
  const [message] = stream(model(), sse);
  assert.equal(message.content[0].thinkingSignature,
    '[{"type":"reasoning.summary","summary":"S1S2","format":"f"},{"type":"reasoning.encrypted","data":"d1"},{"type":"reasoning.encrypted","data":"d2"}]');
});

test("issue 33: a reasoning field opens the block with its name as signature; details then still write at close", () => {
  const sse = sseOf([
    [null, { choices: [{ delta: { reasoning: "R" } }] }],
    [null, { choices: [{ delta: { reasoning_text: "x", reasoning_details: [{ type: "reasoning.text", text: "R", signature: "S" }] } }] }],
    [null, { choices: [{ delta: {}, finish_reason: "stop" }] }],
  ]) + DONE;
  const [message] = stream(model(), sse);
  assert.deepEqual(message.content, [{ type: "thinking", thinking: "Rx", thinkingSignature: '[{"type":"reasoning.text","text":"R","signature":"S"}]' }]);
});

test("issue 33: Magistral streams content as typed text and thinking parts", () => {
  const sse = sseOf([
    [null, { choices: [{ delta: { content: [{ type: "thinking", thinking: [{ type: "text", text: "Hmm" }, { text: "" }, 5, { text: 1 }] }] } }] }],
    [null, { choices: [{ delta: { content: [{ type: "text", text: "Yes" }, { type: "text", text: "" }, null, { type: "image" }] } }] }],
    [null, { choices: [{ delta: { content: [{ type: "thinking" }, { type: "thinking", thinking: [{ text: "!" }] }] }, finish_reason: "stop" }] }],
  ]) + DONE;
  const [message, events] = stream(model(), sse);
  assert.deepEqual(message.content, [{ type: "thinking", thinking: "Hmm!" }, { type: "text", text: "Yes" }]);
  assert.deepEqual(events, ["start", "thinking_start", "thinking_delta", "text_start", "text_delta", "thinking_delta", "thinking_end", "text_end", "done"]);
});

test("responseId and responseModel: the first non-empty ones, the model only when it differs", () => {
  const sse = sseOf([
    [null, { id: "", model: "gpt-x", choices: [] }],
    [null, { id: "a", model: "m2", choices: [] }],
    [null, { id: "b", model: "m3", choices: [{ delta: {}, finish_reason: "stop" }] }],
  ]) + DONE;
  const [message] = stream(model(), sse);
  assert.equal(message.responseId, "a");
  assert.equal(message.responseModel, "m2");
});

test("§6.6 request: reasoning_details go back in place of the reasoning field", () => {
  const details = [{ type: "reasoning.text", text: "T", signature: "S" }];
  const messages = [
    { role: "user", content: "q", timestamp: 1 },
    own([
      { type: "thinking", thinking: "T", thinkingSignature: "reasoning_content" },
      { type: "thinking", thinking: "U", thinkingSignature: JSON.stringify(details) },
      { type: "text", text: "A" },
    ]),
  ];
  const sent = build(model(), messages, {}, "k").body.messages[1];
  assert.deepEqual(sent, { role: "assistant", content: "A", reasoning_details: details });
  // An invalid detail in the array: no details; the first thinking block's field carries all thinking.
  messages[1].content[1].thinkingSignature = JSON.stringify([...details, { type: "reasoning.text", text: 1 }]);
  assert.deepEqual(build(model(), messages, {}, "k").body.messages[1], { role: "assistant", content: "A", reasoning_content: "T\nU" });
  // A signature naming no reasoning field sends no thinking (blank thinking is left out of the join).
  messages[1].content[0].thinkingSignature = "other";
  messages[1].content[1].thinking = " ";
  assert.deepEqual(build(model(), messages, {}, "k").body.messages[1], { role: "assistant", content: "A" });
});

test("§6.6 request: encrypted details kept as tool calls' thoughtSignature go back", () => {
  const encrypted = { type: "reasoning.encrypted", id: "r1", data: "opaque" };
  const messages = [
    { role: "user", content: "q", timestamp: 1 },
    own([
      { type: "toolCall", id: "c1", name: "t", arguments: {}, thoughtSignature: JSON.stringify(encrypted) },
      { type: "toolCall", id: "c2", name: "t", arguments: {}, thoughtSignature: JSON.stringify({ ...encrypted, id: "" }) },
      { type: "toolCall", id: "c3", name: "t", arguments: {}, thoughtSignature: "not json" },
    ], { stopReason: "toolUse" }),
    ...["c1", "c2", "c3"].map((id) => ({ role: "toolResult", toolCallId: id, toolName: "t", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 3 })),
  ];
  const sent = build(model(), messages, {}, "k").body.messages[1];
  assert.equal(sent.content, null);
  assert.deepEqual(sent.reasoning_details, [encrypted]);
  assert.deepEqual(Object.keys(sent), ["role", "content", "tool_calls", "reasoning_details"]);
});

test("§6.6 request: assistant content rules", () => {
  const m = model();
  const messages = [
    { role: "user", content: "", timestamp: 1 },
    // Blank text only, no calls: not sent.
    own([{ type: "text", text: " \n" }, { type: "thinking", thinking: "T", thinkingSignature: "reasoning" }]),
    // Blank as the reference's `String#trim` sees it: U+FEFF is white space, U+0085 is not.
    own([{ type: "text", text: "\ufeff" }]),
    own([{ type: "text", text: "\u0085" }, { type: "text", text: "B" }]),
    { role: "user", content: [{ type: "text", text: "" }, { type: "other" }], timestamp: 5 },
    { role: "user", content: [{ type: "text", text: "x" }], timestamp: 6 },
  ];
  assert.deepEqual(build(m, messages, {}, "k").body.messages, [
    { role: "user", content: "" },
    { role: "assistant", content: "\u0085B" },
    { role: "user", content: [{ type: "text", text: "x" }] },
  ]);
  // requiresReasoningContentOnAssistantMessages keeps a streamed reasoning_content; a tool call's missing
  // arguments are `{}`, null ones `null`.
  m.compat = { requiresReasoningContentOnAssistantMessages: true };
  const withCalls = [
    { role: "user", content: "q", timestamp: 1 },
    own([
      { type: "thinking", thinking: "T", thinkingSignature: "reasoning_content" },
      { type: "toolCall", id: "a", name: "t" },
      { type: "toolCall", id: "b", name: "t", arguments: null },
    ], { stopReason: "toolUse" }),
  ];
  const sent = build(m, withCalls, {}, "k").body.messages[1];
  assert.equal(sent.reasoning_content, "T");
  assert.deepEqual(sent.tool_calls.map((c) => c.function.arguments), ["{}", "null"]);
  // Without model.reasoning the compat switch adds nothing.
  m.reasoning = false;
  m.compat = { requiresReasoningContentOnAssistantMessages: true };
  withCalls[1].content[0].thinkingSignature = "x";
  assert.equal("reasoning_content" in build(m, withCalls, {}, "k").body.messages[1], false);
});

test("§6.6 request: tool results, their names and images", () => {
  const m = model();
  m.compat = { requiresToolResultName: true };
  const messages = [
    { role: "user", content: "q", timestamp: 1 },
    own([{ type: "toolCall", id: "a", name: "t", arguments: {} }, { type: "toolCall", id: "b", name: "", arguments: {} }], { stopReason: "toolUse" }),
    { role: "toolResult", toolCallId: "a", toolName: "t", content: [{ type: "text", text: " " }, { type: "image", data: "I1", mimeType: "image/png" }], isError: false, timestamp: 3 },
    { role: "toolResult", toolCallId: "b", toolName: "", content: [{ type: "image", data: "I2", mimeType: "image/gif" }], isError: false, timestamp: 4 },
  ];
  assert.deepEqual(build(m, messages, {}, "k").body.messages.slice(2), [
    { role: "tool", content: "(see attached image)", tool_call_id: "a", name: "t" },
    { role: "tool", content: "(see attached image)", tool_call_id: "b" },
    { role: "user", content: [
      { type: "text", text: "Tool result image:" },
      { type: "image_url", image_url: { url: "data:image/png;base64,I1" } },
      { type: "image_url", image_url: { url: "data:image/gif;base64,I2" } },
    ] },
  ]);
});

test("§6.6 request: system role, tools without parameters, falsy toolChoice, temperature", () => {
  const system = { role: "system", content: "S", toolsAdded: [{ name: "n" }], timestamp: 0 };
  const messages = [system, { role: "user", content: "hi", timestamp: 1 }];
  const m = model();
  m.reasoning = false;
  let body = build(m, messages, { toolChoice: "", temperature: 0 }, "k").body;
  assert.deepEqual(body.messages[0], { role: "system", content: "S" });
  assert.deepEqual(body.tools, [{ type: "function", function: { name: "n", description: "", parameters: {} } }]);
  assert.equal("tool_choice" in body, false);
  assert.equal(body.temperature, 0);
  assert.deepEqual(build(m, messages, { toolChoice: { type: "function", function: { name: "n" } } }, "k").body.tool_choice,
    { type: "function", function: { name: "n" } });
  m.reasoning = true;
  m.compat = { supportsDeveloperRole: false };
  assert.equal(build(m, messages, {}, "k").body.messages[0].role, "system");
  // Another provider's server: system unless compat says developer; no prompt_cache_key off api.openai.com.
  body = build({ ...localModel(), reasoning: true }, messages, { sessionId: "s", reasoning: "off" }, undefined).body;
  assert.equal(body.messages[0].role, "system");
  assert.equal("prompt_cache_key" in body, false);
  assert.equal("reasoning_effort" in body, false);
});

test("P-6.2.3: a known cloud host without a key fails; an Authorization header stands in for it", () => {
  const messages = [{ role: "user", content: "hi", timestamp: 1 }];
  assert.throws(() => build(model(), messages, {}, undefined), { message: "No API key for provider: openai" });
  assert.throws(() => build(model(), messages, {}, ""), { message: "No API key for provider: openai" });
  const request = build(model(), messages, { headers: { Authorization: "Bearer x" } }, undefined);
  assert.deepEqual(request.headers, [["content-type", "application/json"]]);
});

test("§6.6 request: the provider decides which ids are cut at 40, the base URL which token field", () => {
  const long = `call_${"x".repeat(50)}`;
  const messages = [
    { role: "user", content: "q", timestamp: 1 },
    own([{ type: "toolCall", id: long, name: "t", arguments: {} }], { stopReason: "toolUse" }),
    { role: "toolResult", toolCallId: long, toolName: "t", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 3 },
  ];
  let body = build(model(), messages, {}, "k").body;
  assert.equal(body.messages[1].tool_calls[0].id, long.slice(0, 40));
  assert.equal(body.messages[2].tool_call_id, long.slice(0, 40));
  // An OpenAI base URL under another provider: ids whole, but max_completion_tokens.
  const proxy = { ...model(), provider: "proxy" };
  messages[1].provider = "proxy";
  body = build(proxy, messages, {}, "k").body;
  assert.equal(body.messages[1].tool_calls[0].id, long);
  assert.equal(body.max_completion_tokens, 16384);
});

// Never throws: arbitrary JSON built from the keys the mappers and the transcript read.
const KEYS = ["id", "model", "choices", "delta", "content", "refusal", "reasoning_content", "reasoning", "reasoning_text",
  "reasoning_details", "tool_calls", "index", "function", "name", "arguments", "finish_reason", "usage", "prompt_tokens",
  "completion_tokens", "prompt_tokens_details", "cached_tokens", "error", "message", "type", "text", "thinking",
  "signature", "data", "summary", "format", "role", "toolCallId", "toolName", "isError", "thinkingSignature",
  "thoughtSignature", "stopReason", "provider", "api", "mimeType", "input", "sections", "toolsAdded", "toolsRemoved", "x"];
const WORDS = ["", "stop", "length", "tool_calls", "x", "{\"a\":", "[DONE]", "user", "assistant", "toolResult", "system",
  "toolCall", "thinking", "text", "image", "reasoning.text", "reasoning.encrypted", "reasoning.summary", "openai",
  "openai-completions", "gpt-x", "error", "[{\"type\":\"reasoning.text\",\"text\":\"t\"}]", "a|b"];

function randomJson(rand, depth) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const r = rand();
  if (depth > 0 && r < 0.2) return Array.from({ length: Math.floor(rand() * 4) }, () => randomJson(rand, depth - 1));
  if (depth > 0 && r < 0.45) {
    const object = {};
    for (let n = Math.floor(rand() * 6); n > 0; n--) object[pick(KEYS)] = randomJson(rand, depth - 1);
    return object;
  }
  return pick([null, true, false, 0, -1, 1.5, 2 ** 31, -1e20, pick(WORDS), pick(WORDS), pick(KEYS)]);
}

function lcg(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

test("mapper_never_panics_on_arbitrary_json", () => {
  const rand = lcg(7);
  for (let round = 0; round < 400; round++) {
    const m = model();
    const mapper = mapperFor(openaiCompletions, { model: m, messages: [], options: {}, apiKey: undefined });
    const asm = Assembler.forModel(m, true);
    for (let n = Math.floor(rand() * 16); n > 0; n--) {
      const data = rand() < 0.5 ? { choices: [randomJson(rand, 5)] } : randomJson(rand, 5);
      mapper.onEvent(undefined, data, asm);
      if (rand() < 0.1) mapper.onText(undefined, rand() < 0.5 ? "[DONE]" : String(randomJson(rand, 0)), asm);
    }
    mapper.onEnd(asm);
    assert.ok(asm.finished());
  }
});

test("request_never_panics_on_arbitrary_messages", () => {
  const rand = lcg(11);
  for (let round = 0; round < 400; round++) {
    const messages = Array.from({ length: Math.floor(rand() * 6) }, () => randomJson(rand, 5));
    const options = randomJson(rand, 3);
    const request = openaiCompletions.buildRequest({ model: model(), messages, options, apiKey: "k" });
    assert.equal(request.url, "https://api.openai.com/v1/chat/completions");
  }
});
