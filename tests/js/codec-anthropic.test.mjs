// The anthropic-messages wire format (pkg-template/providers/anthropic.js, §6.8): request bodies compared whole, SSE
// fixtures (tests/fixtures/providers/anthropic/) driven through the decoder in random chunks, stream errors (issue 13),
// and seeded random inputs that must never throw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { anthropicMessages, normalizeToolCallId } from "../../pkg-template/providers/anthropic.js";
import { Assembler } from "../../pkg-template/providers/assemble.js";
import { names, run, sse, thrownMessage, usage } from "./codec-harness.mjs";

const fixture = (name) => readFileSync(new URL(`../fixtures/providers/anthropic/${name}`, import.meta.url), "utf8");

const model = () => ({
  id: "claude-x", name: "x", api: "anthropic-messages", provider: "anthropic",
  baseUrl: "https://api.anthropic.com/", reasoning: true, input: ["text", "image"],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200000, maxTokens: 64000,
});
const COST = [3, 15, 0.3, 3.75];

const build = (m, messages, options, apiKey) => anthropicMessages.buildRequest({ model: m, messages, options, apiKey });
const buildError = (...args) => thrownMessage(() => build(...args));
const stream = (text, m = model()) => run(anthropicMessages, m, {}, text);
const hi = [{ role: "user", content: "hi", timestamp: 1 }];
const image = (data, mime) => ({ type: "image", source: { type: "base64", media_type: mime, data } });

test("s_6_8_request_full_body", () => {
  const messages = JSON.parse(fixture("transcript.json"));
  const options = { reasoning: "medium", temperature: 0.3, toolChoice: "auto", maxTokens: 8000 };
  const request = build(model(), messages, options, "sk-ant-1");
  assert.equal(request.url, "https://api.anthropic.com/v1/messages");
  assert.deepEqual(request.headers, [
    ["content-type", "application/json"],
    ["anthropic-version", "2023-06-01"],
    ["anthropic-dangerous-direct-browser-access", "true"],
    ["x-api-key", "sk-ant-1"],
  ]);
  const expected = {
    model: "claude-x",
    messages: [
      { role: "user", content: [{ type: "text", text: "Look" }, image("QUJD", "image/png")] },
      { role: "assistant", content: [
        { type: "thinking", thinking: "Plan", signature: "sig1" },
        { type: "redacted_thinking", data: "red1" },
        { type: "text", text: "unsigned" },
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "toolu_a", name: "read", input: { path: "a.txt" } },
        { type: "tool_use", id: "toolu_b", name: "read", input: { path: "b.txt" } }] },
      { role: "user", content: [
        { type: "tool_result", tool_use_id: "toolu_a", content: "line1\nline2", is_error: false },
        { type: "tool_result", tool_use_id: "toolu_b", content: "failed\n(image attached after the tool results)", is_error: true },
        { type: "text", text: "Images from the error result of tool call toolu_b (read):" },
        image("REVG", "image/jpeg"),
        image("R0hJ", "image/jpeg"),
        { type: "text", text: "And then?" }] },
      { role: "assistant", content: [
        { type: "text", text: "Again." },
        { type: "tool_use", id: "call_9_fc_0123___", name: "read", input: { path: "c" } }] },
      { role: "user", content: [
        { type: "tool_result", tool_use_id: "call_9_fc_0123___",
          content: [{ type: "text", text: "(see attached image)" }, image("SktM", "image/png")], is_error: false }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_z", name: "read", input: {} }] },
      { role: "user", content: [
        { type: "tool_result", tool_use_id: "toolu_z", content: "No result provided", is_error: true },
        { type: "text", text: "Go on", cache_control: { type: "ephemeral" } }] },
    ],
    max_tokens: 16192,
    stream: true,
    system: [{ type: "text", text: "You are terse.\n\nNo lies.", cache_control: { type: "ephemeral" } }],
    tools: [{ name: "read", description: "Read a file", input_schema: {
      type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false } }],
    thinking: { type: "enabled", budget_tokens: 8192 },
    tool_choice: { type: "auto" },
  };
  assert.deepEqual(request.body, expected);
  // Key order too (the body is sent as JSON text).
  assert.equal(JSON.stringify(request.body), JSON.stringify(expected));
});

test("s_6_8_request_plain_defaults_temperature_and_long_cache", () => {
  const m = { ...model(), reasoning: false, maxTokens: 0, baseUrl: "", samplingParams: { top_k: 5 } };
  const messages = [
    { role: "user", content: "hi", timestamp: 1 },
    { role: "assistant", content: [{ type: "text", text: "  " }], api: "anthropic-messages",
      provider: "anthropic", model: "claude-x", stopReason: "stop", timestamp: 2 },
    { role: "user", content: [{ type: "text", text: "again" }], timestamp: 3 },
  ];
  const options = { reasoning: "high", temperature: 0.5, cacheRetention: "long", toolChoice: { type: "tool", name: "x" } };
  let request = build(m, messages, options, "k");
  assert.equal(request.url, "https://api.anthropic.com/v1/messages");
  const expected = {
    model: "claude-x",
    messages: [{ role: "user", content: [
      { type: "text", text: "hi" },
      { type: "text", text: "again", cache_control: { type: "ephemeral", ttl: "1h" } }] }],
    max_tokens: 4096,
    stream: true,
    temperature: 0.5,
    tool_choice: { type: "tool", name: "x" },
    top_k: 5,
  };
  assert.deepEqual(request.body, expected);
  assert.equal(JSON.stringify(request.body), JSON.stringify(expected));
  request = build(m, messages, { cacheRetention: "none" }, "k");
  assert.equal(request.body.messages[0].content[1].cache_control, undefined);
});

test("p_6_2_7_anthropic_budget_fits_small_limits", () => {
  const m = { ...model(), maxTokens: 4000 };
  let body = build(m, hi, { reasoning: "high" }, "k").body;
  assert.equal(body.max_tokens, 4000);
  assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 2976 });
  m.maxTokens = 1000;
  body = build(m, hi, { reasoning: "minimal" }, "k").body;
  assert.equal(body.thinking.budget_tokens, 1024);
});

test("p_6_2_3_missing_key_fails_unless_an_auth_header_is_given", () => {
  assert.equal(buildError(model(), hi, {}, undefined), "No API key for provider: anthropic");
  assert.equal(buildError(model(), hi, {}, ""), "No API key for provider: anthropic");
  const request = build(model(), hi, { headers: { Authorization: "Bearer t" } }, undefined);
  assert.ok(request.headers.every(([k]) => k !== "x-api-key"));
  assert.ok(build({ ...model(), headers: { "x-api-key": "from-model" } }, hi, {}, undefined));
  // Added: the gateway header counts too; a blank one or one removed by `null` does not.
  assert.ok(build(model(), hi, { headers: { "CF-AIG-Authorization": "t" } }, undefined));
  assert.equal(buildError(model(), hi, { headers: { "x-api-key": " " } }, undefined), "No API key for provider: anthropic");
  const removed = { ...model(), headers: { "x-api-key": "m" } };
  assert.equal(buildError(removed, hi, { headers: { "x-api-key": null } }, undefined), "No API key for provider: anthropic");
});

test("p_6_5_2_anthropic_ids", () => {
  assert.equal(normalizeToolCallId("call_1|fc+/="), "call_1_fc___");
  assert.equal(normalizeToolCallId("a😀b"), "a__b");
  assert.equal(normalizeToolCallId("x".repeat(80)), "x".repeat(64));
  assert.equal(normalizeToolCallId(`${"x".repeat(63)}😀`), `${"x".repeat(63)}_`);
  // Added: a lone surrogate is one unit; non-ASCII letters and digits are replaced.
  assert.equal(normalizeToolCallId("a\ud800b"), "a_b");
  assert.equal(normalizeToolCallId("é٣-_Z9"), "__-_Z9");
});

test("s_6_8_stream_text_keeps_initial_text_and_ignores_ping", () => {
  const [message, events] = stream(fixture("text.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
  assert.deepEqual(message.content, [{ type: "text", text: "Hello, wörld 🌍!" }]);
  assert.equal(message.responseId, "msg_01");
  assert.equal(message.responseModel, "claude-x-20250101");
  assert.equal(message.stopReason, "stop");
  assert.equal(message.rawStopReason, "end_turn");
  assert.deepEqual(message.usage, usage(25, 12, 100, 0, [["cacheWrite1h", 0]], COST));
});

test("s_6_8_stream_thinking_signatures_tools_and_ignored_server_blocks", () => {
  const [message, events] = stream(fixture("thinking_tools.sse"));
  assert.deepEqual(events, names([
    "start", "thinking_start", "thinking_delta", "thinking_end", "text_start", "text_delta", "text_end",
    "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end",
    "toolcall_start", "toolcall_delta", "toolcall_end", "done",
  ]));
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "Need the file.", thinkingSignature: "EqQBCgIYAhIkCpart2" },
    { type: "text", text: "Reading both." },
    { type: "toolCall", id: "toolu_A", name: "read", arguments: { path: "a.txt" } },
    { type: "toolCall", id: "toolu_B", name: "read", arguments: { path: "b.txt" } },
  ]);
  assert.equal(message.stopReason, "toolUse");
  assert.equal(message.responseModel, undefined);
  // message_delta values override message_start's (input 10 → 12).
  assert.deepEqual(message.usage, usage(12, 80, 0, 40, [["cacheWrite1h", 40], ["reasoning", 30]], COST));
});

test("s_6_8_stream_redacted_thinking_opens_and_closes_at_once", () => {
  const [message, events] = stream(fixture("redacted.sse"));
  assert.deepEqual(events, names(["start", "thinking_start", "thinking_end", "text_start", "text_delta", "text_end", "done"]));
  assert.deepEqual(message.content, [
    { type: "thinking", thinking: "", thinkingSignature: "EmwKAhgBEgy3va", redacted: true },
    { type: "text", text: "Done." },
  ]);
});

test("s_6_10_refusal_uses_the_explanation", () => {
  const [message, events] = stream(fixture("refusal.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_end", "error"]));
  assert.equal(message.errorMessage, "Policy violation");
  assert.equal(message.rawStopReason, "refusal");
  assert.equal(message.stopReason, "error");
  const details = ',"stop_details":{"type":"refusal","explanation":"Policy violation"}';
  assert.ok(fixture("refusal.sse").includes(details));
  const [plain] = stream(fixture("refusal.sse").replace(details, ""));
  assert.equal(plain.errorMessage, "The model refused to complete the request");
  // Added: an empty explanation also takes the default.
  const [empty] = stream(fixture("refusal.sse").replace('"Policy violation"', '""'));
  assert.equal(empty.errorMessage, "The model refused to complete the request");
});

test("s_6_10_sensitive_and_unknown_stop_reasons", () => {
  const text = fixture("text.sse");
  let [message, events] = stream(text.replace("end_turn", "sensitive"));
  assert.equal(message.errorMessage, "Provider stopped with: sensitive");
  [message, events] = stream(text.replace("end_turn", "model_context_window_exceeded"));
  assert.equal(message.errorMessage, "Unhandled stop reason: model_context_window_exceeded");
  assert.equal(message.rawStopReason, "model_context_window_exceeded");
  assert.equal(events.at(-1), "error");
  for (const [raw, reason] of [["pause_turn", "stop"], ["stop_sequence", "stop"], ["max_tokens", "length"], ["tool_use", "toolUse"]]) {
    [message] = stream(text.replace("end_turn", raw));
    assert.equal(message.stopReason, reason, raw);
    assert.equal(message.rawStopReason, raw);
  }
});

test("s_6_8_error_event_ends_with_its_message", () => {
  let [message, events] = stream(fixture("error_event.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_end", "error"]));
  assert.equal(message.errorMessage, "Overloaded");
  assert.deepEqual(message.content, [{ type: "text", text: "Partial" }]);
  [message] = stream("event: error\ndata: upstream exploded\n\n");
  assert.equal(message.errorMessage, "upstream exploded");
});

test("s_6_8_missing_message_stop_is_an_error", () => {
  let [message, events] = stream(fixture("no_stop.sse"));
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_end", "error"]));
  assert.equal(message.errorMessage, "Anthropic stream ended before message_stop");
  assert.deepEqual(message.content, [{ type: "text", text: "Cut" }]);
  assert.equal(message.rawStopReason, "end_turn", "message_delta's stop reason stays");
  [message] = stream("");
  assert.equal(message.errorMessage, "Anthropic stream ended before message_stop");
  assert.equal(message.rawStopReason, undefined);
});

// A `ping` whose data is not JSON is a ping: skipped, as pi-ai skips it.
test("p_6_3_2_a_ping_that_is_not_json_is_skipped", () => {
  const text = fixture("text.sse").replace("event: message_start", 'event: ping\ndata: {"type":"ping"\n\nevent: message_start');
  assert.ok(text.includes('data: {"type":"ping"\n'));
  const [message, events] = stream(text);
  assert.deepEqual(events, names(["start", "text_start", "text_delta", "text_delta", "text_end", "done"]));
  assert.deepEqual(message.content, [{ type: "text", text: "Hello, wörld 🌍!" }]);
});

test("s_6_10_max_tokens_truncates_a_tool_call", () => {
  const [message, events] = stream(fixture("max_tokens.sse"));
  assert.deepEqual(events, names(["start", "toolcall_start", "toolcall_delta", "toolcall_end", "done"]));
  assert.equal(message.stopReason, "length");
  const call = message.content[0];
  assert.deepEqual(call.arguments, {});
  assert.ok(call.argumentsError.endsWith('Received arguments:\n{"text": "abc'), call.argumentsError);
});

test("s_6_8_block_indices_of_ignored_blocks_do_not_break_later_ones", () => {
  const events = [
    ["message_start", { type: "message_start", message: { id: "m", model: "claude-x", usage: {} } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "web_search_tool_result", content: [] } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lost" } }],
    ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "kept" } }],
    ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "thinking_delta", thinking: "wrong kind" } }],
    ["content_block_delta", { type: "content_block_delta", index: 9, delta: { type: "text_delta", text: "unknown index" } }],
    ["content_block_stop", { type: "content_block_stop", index: 1 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" } }],
    ["message_stop", { type: "message_stop" }],
  ];
  const [message, seen] = stream(sse(events));
  assert.deepEqual(seen, names(["start", "text_start", "text_delta", "text_end", "done"]));
  assert.deepEqual(message.content, [{ type: "text", text: "kept" }]);
});

test("s_6_8_thinking_start_with_initial_content_and_signature", () => {
  const events = [
    ["message_start", { type: "message_start", message: { id: "m", usage: { input_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "Pre", signature: "S1" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "S2" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "fix" } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  const [message, seen] = stream(sse(events));
  assert.deepEqual(seen, names(["start", "thinking_start", "thinking_delta", "thinking_end", "done"]));
  assert.deepEqual(message.content, [{ type: "thinking", thinking: "Prefix", thinkingSignature: "S1S2" }]);
  assert.equal(message.responseModel, undefined);
});

test("p_6_3_2_invalid_json_in_a_message_event", () => {
  const [message, events] = stream('event: message_start\ndata: {"type":"message_start"\n\n');
  assert.deepEqual(events, names(["start", "error"]));
  assert.equal(message.errorMessage, 'Invalid JSON in provider stream: {"type":"message_start"');
});

// Issue 13: block events whose index, block or delta fields have the wrong type, and tool_use blocks without an id or
// name, end the stream with an error naming the event and field.
test("issue_13_malformed_blocks_and_deltas_are_stream_errors", () => {
  const start = { type: "message_start", message: { id: "msg_1", model: "claude-x", usage: { input_tokens: 1, output_tokens: 1 } } };
  const tool = { type: "tool_use", id: "toolu_1", name: "f", input: {} };
  const blockStart = (index, block) => ({ type: "content_block_start", index, content_block: block });
  const delta = (index, d) => ({ type: "content_block_delta", index, delta: d });
  const withField = (key, value) => ({ ...tool, [key]: value });
  const tail = [
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } },
    { type: "message_stop" },
  ];
  const opened = () => blockStart(0, tool);
  const at = "content_block_start (index 0) content_block";
  const cases = [
    [[blockStart(0, withField("id", 5))], `${at}: "id" must be a non-empty string, got a number`],
    [[blockStart(0, withField("name", null))], `${at}: "name" must be a non-empty string, got null`],
    [[blockStart(0, withField("name", ""))], `${at}: "name" must be a non-empty string, got ""`],
    [[blockStart("0", tool)], 'content_block_start: "index" must be an integer ≥ 0, got a string'],
    [[blockStart(-1, tool)], 'content_block_start: "index" must be an integer ≥ 0, got a number'],
    [[{ type: "content_block_start", content_block: tool }], 'content_block_start: "index" must be an integer ≥ 0, got missing'],
    [[blockStart(0, "tool_use")], 'content_block_start (index 0): "content_block" must be an object, got a string'],
    [[blockStart(0, { type: 1 })], `${at}: "type" must be a non-empty string, got a number`],
    [[blockStart(0, { type: "text", text: 1 })], `${at}: "text" must be a string, got a number`],
    [[blockStart(0, { type: "redacted_thinking" })], `${at}: "data" must be a string, got missing`],
    [[opened(), delta(0, { type: "input_json_delta", partial_json: { a: 1 } })],
      'content_block_delta (index 0) delta: "partial_json" must be a string, got an object'],
    [[opened(), delta(0.5, { type: "input_json_delta", partial_json: "{" })],
      'content_block_delta: "index" must be an integer ≥ 0, got a number'],
    [[opened(), delta(0, null)], 'content_block_delta (index 0): "delta" must be an object, got null'],
    [[opened(), delta(0, { partial_json: "{" })], 'content_block_delta (index 0) delta: "type" must be a non-empty string, got missing'],
    [[opened(), { type: "content_block_stop", index: true }], 'content_block_stop: "index" must be an integer ≥ 0, got a boolean'],
    // Added: the thinking block's fields, an array block and an array delta.
    [[blockStart(0, { type: "thinking", signature: 2 })], `${at}: "signature" must be a string, got a number`],
    [[blockStart(0, { type: "thinking", thinking: [] })], `${at}: "thinking" must be a string, got an array`],
    [[blockStart(0, [tool])], 'content_block_start (index 0): "content_block" must be an object, got an array'],
    [[opened(), delta(0, [])], 'content_block_delta (index 0): "delta" must be an object, got an array'],
  ];
  for (const [events, want] of cases) {
    const body = sse([start, ...events, ...tail].map((e) => [e.type, e]));
    const [message, seen] = stream(body);
    assert.equal(seen.at(-1), "error", JSON.stringify(events));
    assert.equal(message.stopReason, "error");
    assert.equal(message.errorMessage, `Malformed anthropic-messages stream: ${want}`, JSON.stringify(events));
    for (const block of message.content) {
      assert.equal(block.id, "toolu_1", JSON.stringify(events));
      assert.equal(block.name, "f");
    }
  }
  // The same events well-formed: a tool call; an unknown delta type is still ignored.
  const body = sse([start, opened(), delta(0, { type: "citations_delta", citation: 1 }), ...tail].map((e) => [e.type, e]));
  const [message] = stream(body);
  assert.equal(message.stopReason, "toolUse");
  assert.deepEqual(message.content, [{ type: "toolCall", id: "toolu_1", name: "f", arguments: {} }]);
});

// ---- Request and stream branches. ----

test("request: cache and thinking options, compat flags, tool choice and tool schemas", () => {
  const long = build({ ...model(), compat: { supportsLongCacheRetention: false } }, hi, { cacheRetention: "long" }, "k").body;
  assert.deepEqual(long.messages[0].content[0].cache_control, { type: "ephemeral" });
  // The thinking budget suppresses temperature; `reasoning: "off"` keeps it.
  assert.equal(build(model(), hi, { reasoning: "low", temperature: 1 }, "k").body.temperature, undefined);
  const off = build(model(), hi, { reasoning: "off", temperature: 1 }, "k").body;
  assert.equal(off.temperature, 1);
  assert.equal(off.thinking, undefined);
  assert.equal(off.max_tokens, 64000);
  // A non-finite or non-number temperature is left out.
  assert.equal(build(model(), hi, { temperature: "1" }, "k").body.temperature, undefined);
  // Tool choice: an empty string or an array is ignored.
  assert.equal(build(model(), hi, { toolChoice: "" }, "k").body.tool_choice, undefined);
  assert.equal(build(model(), hi, { toolChoice: ["any"] }, "k").body.tool_choice, undefined);
  assert.deepEqual(build(model(), hi, { toolChoice: "any" }, "k").body.tool_choice, { type: "any" });
  // Tool schemas: missing parameters → the empty object schema; `$defs`/`definitions` kept; `null` kept as given.
  const tools = [
    { role: "system", content: "", toolsAdded: [
      { name: "a" },
      { name: "b", description: "B", parameters: { type: "object", properties: null, $defs: { x: {} }, definitions: {}, anyOf: [] } },
    ] },
    ...hi,
  ];
  const body = build(model(), tools, {}, "k").body;
  assert.equal(body.system, undefined);
  assert.deepEqual(body.tools, [
    { name: "a", description: "", input_schema: { type: "object", properties: {}, required: [] } },
    { name: "b", description: "B", input_schema: { type: "object", properties: null, required: [], $defs: { x: {} }, definitions: {} } },
  ]);
  // Sampling by thinking level (the level is read even when the model does not reason).
  const sampled = { ...model(), reasoning: false, samplingParamsByThinkingLevel: { high: { top_p: 0.9 }, off: { top_p: 1 } } };
  assert.equal(build(sampled, hi, { reasoning: "high" }, "k").body.top_p, 0.9);
  assert.equal(build(sampled, hi, {}, "k").body.top_p, 1);
  // A custom base URL keeps its path, without its trailing slash.
  assert.equal(build({ ...model(), baseUrl: "http://localhost:8080/proxy/" }, hi, {}, "k").url, "http://localhost:8080/proxy/v1/messages");
});

test("request: thinking replay, empty signatures and the last-block cache breakpoint", () => {
  const assistant = (content) => ({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-x", stopReason: "stop" });
  const messages = [
    ...hi,
    assistant([
      { type: "thinking", thinking: "t1", thinkingSignature: "  " },
      { type: "thinking", thinking: " \ufeff ", thinkingSignature: "" },
      { type: "thinking", thinking: "", redacted: true },
      { type: "toolCall", id: "c1", name: "f", arguments: null },
    ]),
    { role: "toolResult", toolCallId: "c1", toolName: "f", content: [{ type: "text", text: "a" }, { type: "image", data: "x", mimeType: "image/png" }, { type: "text", text: "b" }], isError: false },
    assistant([{ type: "text", text: "end" }]),
  ];
  let body = build(model(), messages, {}, "k").body;
  assert.deepEqual(body.messages[1].content, [
    { type: "text", text: "t1" },
    { type: "redacted_thinking", data: "" },
    { type: "tool_use", id: "c1", name: "f", input: {} },
  ]);
  // A tool result with text and images keeps its blocks, with no placeholder text.
  assert.deepEqual(body.messages[2].content[0].content, [{ type: "text", text: "a" }, image("x", "image/png"), { type: "text", text: "b" }]);
  // The last message is the assistant's: no breakpoint anywhere in the messages.
  assert.equal(JSON.stringify(body.messages).includes("cache_control"), false);
  body = build({ ...model(), compat: { allowEmptySignature: true } }, messages, {}, "k").body;
  assert.deepEqual(body.messages[1].content[0], { type: "thinking", thinking: "t1", signature: "" });
  // Blank is what the reference's `String#trim` strips: U+FEFF is blank (dropped), U+0085 is not (sent).
  body = build(model(), [{ role: "user", content: "\ufeff" }, { role: "user", content: [{ type: "text", text: "\u0085" }] }], {}, "k").body;
  assert.deepEqual(body.messages, [{ role: "user", content: [{ type: "text", text: "\u0085", cache_control: { type: "ephemeral" } }] }]);
});

test("stream: event name fallback, error shapes and a stop without message_delta", () => {
  // Data without a `type` is read by its SSE event name.
  const events = [
    ["message_start", { message: { id: "m", usage: {} } }],
    ["content_block_start", { index: 0, content_block: { type: "text" } }],
    ["content_block_delta", { index: 0, delta: { type: "text_delta", text: "" } }],
    ["content_block_stop", { index: 0 }],
    ["message_delta", { delta: { stop_reason: "end_turn" } }],
    ["message_stop", {}],
  ];
  let [message, seen] = stream(sse(events));
  assert.deepEqual(seen, ["start", "text_start", "text_delta", "text_end", "done"]);
  assert.deepEqual(message.content, [{ type: "text", text: "" }]);
  [message] = stream(sse([events[0], ["message_stop", {}]]));
  assert.equal(message.errorMessage, "Anthropic stream ended without a stop reason");
  // `error`: error.message, else the top-level message, else the data as JSON.
  [message] = stream(sse([["error", { type: "error", message: "top" }]]));
  assert.equal(message.errorMessage, "top");
  [message] = stream(sse([["error", { type: "error", error: { type: "overloaded_error" } }]]));
  assert.equal(message.errorMessage, '{"type":"error","error":{"type":"overloaded_error"}}');
  [message] = stream(sse([["error", null]]));
  assert.equal(message.errorMessage, "null");
  // Non-JSON data of an event the mapper does not read is skipped; of an unnamed event it fails.
  [message] = stream(`event: other\ndata: nope\n\n${fixture("text.sse")}`);
  assert.equal(message.stopReason, "stop");
  [message] = stream("data: nope\n\n");
  assert.equal(message.errorMessage, "Invalid JSON in provider stream: nope");
});

test("stream: a reopened index, OpenRouter's billed cost and usage details", () => {
  const events = [
    ["message_start", { type: "message_start", message: { model: "claude-x", usage: { input_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "a" } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t", name: "f" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{}" } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" },
      usage: { output_tokens: 5, cost: 0.5, is_byok: false, cache_creation: { ephemeral_1h_input_tokens: 2 } } }],
    ["message_stop", { type: "message_stop" }],
  ];
  const routed = { ...model(), provider: "openrouter" };
  let [message] = stream(sse(events), routed);
  assert.deepEqual(message.content.map((b) => b.type), ["text", "toolCall"]);
  assert.deepEqual(message.content[1].arguments, {});
  assert.equal(message.usage.cost.total, 0.5);
  assert.equal(message.usage.cost.totalFromProvider, true);
  assert.equal(message.usage.cacheWrite1h, 2);
  [message] = stream(sse(events));
  assert.equal(message.usage.cost.totalFromProvider, false);
});

// ---- Never throws: seeded random inputs. ----

function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const KEYS = ["id", "model", "delta", "content", "index", "name", "arguments", "usage", "error", "message", "type", "text",
  "thinking", "signature", "partial_json", "content_block", "stop_reason", "stop_details", "input_tokens",
  "output_tokens", "cache_creation", "data", "role", "toolCallId", "toolName", "isError", "thinkingSignature",
  "redacted", "stopReason", "provider", "api", "mimeType", "input", "sections", "toolsAdded", "toolsRemoved", "x"];
const WORDS = ["", "stop", "x", '{"a":', "[DONE]", "user", "assistant", "toolResult", "system", "toolCall", "thinking",
  "text", "image", "tool_use", "text_delta", "thinking_delta", "input_json_delta", "signature_delta", "message_start",
  "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop",
  "redacted_thinking", "end_turn", "refusal", "anthropic-messages", "anthropic", "claude-x", "error", " \ud800"];
function jsonValue(next, depth = 4) {
  const pick = (list) => list[Math.floor(next() * list.length)];
  const r = next();
  if (depth > 0 && r < 0.2) return Array.from({ length: Math.floor(next() * 4) }, () => jsonValue(next, depth - 1));
  if (depth > 0 && r < 0.45) {
    const object = {};
    for (let i = Math.floor(next() * 6); i > 0; i--) object[pick(KEYS)] = jsonValue(next, depth - 1);
    return object;
  }
  return pick([null, true, false, 0, 1, -1, 0.5, 1e20, -0, pick(WORDS), pick(WORDS)]);
}

test("mapper_never_panics_on_arbitrary_json", () => {
  const kinds = ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
    "message_stop", "ping", "error", "x", undefined];
  for (let seed = 0; seed < 500; seed++) {
    const next = random(seed);
    const input = { model: model(), messages: [], options: {}, apiKey: undefined };
    const mapper = anthropicMessages.streamMapper(input);
    const asm = Assembler.forModel(input.model, false);
    for (let n = Math.floor(next() * 16); n > 0; n--) {
      const event = kinds[Math.floor(next() * kinds.length)];
      mapper.onEvent(event, jsonValue(next), asm);
      if (next() < 0.1) mapper.onText(event, ["[DONE]", "", "x{", " "][Math.floor(next() * 4)], asm);
    }
    mapper.onEnd(asm);
    assert.ok(asm.finished(), `seed ${seed}`);
  }
});

test("request_never_panics_on_arbitrary_messages", () => {
  for (let seed = 0; seed < 500; seed++) {
    const next = random(seed);
    const messages = Array.from({ length: Math.floor(next() * 6) }, () => jsonValue(next));
    const request = build(model(), messages, jsonValue(next), "k");
    assert.equal(request.body.model, "claude-x", `seed ${seed}`);
    JSON.stringify(request.body);
  }
});
