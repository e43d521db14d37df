// The openai-responses wire format (pkg-template/providers/openai-responses.js, §6.7): request bodies compared whole,
// Responses streams driven through the decoder in random chunks, stream errors (issue 13), and seeded random inputs
// that must never throw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openaiResponses } from "../../pkg-template/providers/openai-responses.js";
import { mapperFor, onUnparsed } from "../../pkg-template/providers/index.js";
import { Assembler, applyOps } from "../../pkg-template/providers/assemble.js";
import { initialMessage, run as runFormat, sse as sseEvents } from "./codec-harness.mjs";

const model = () => ({
  id: "gpt-5", name: "GPT-5", api: "openai-responses", provider: "openai",
  baseUrl: "https://api.openai.com/v1", input: ["text", "image"], reasoning: true,
  cost: { input: 2.0, output: 8.0, cacheRead: 0.5, cacheWrite: 0.0 },
  contextWindow: 0, maxTokens: 8,
});

const run = (sse) => runFormat(openaiResponses, model(), {}, sse);

/** The wire framing: `event: <type>` + `data:` carrying the same `type` and a sequence number. */
const sse = (events) =>
  sseEvents(events.map((data, n) => [typeof data.type === "string" ? data.type : undefined, { ...data, sequence_number: n }]));

/** Event names after the binding's `start`. */
const names = (list) => ["start", ...list.split(/\s+/).filter(Boolean)];

const created = () => ({ type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } });

function completed(status, extra = {}) {
  const response = {
    id: "resp_1", status,
    usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 40 },
      output_tokens: 20, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 120 },
    ...extra,
  };
  return { type: status === "incomplete" ? "response.incomplete" : "response.completed", response };
}

/** 60 input, 20 output, 40 cached at 2/8/0.5 per million. */
function usage() {
  const c = [(2.0 / 1e6) * 60.0, (8.0 / 1e6) * 20.0, (0.5 / 1e6) * 40.0];
  return { input: 60, output: 20, cacheRead: 40, cacheWrite: 0, reasoning: 5, totalTokens: 120,
    cost: { input: c[0], output: c[1], cacheRead: c[2], cacheWrite: 0, total: c[0] + c[1] + c[2] + 0.0,
      totalFromProvider: false } };
}

const expected = (content, tail) => ({ ...initialMessage(model()), content, ...tail });

// ---- stream fixtures ----

test("p_6_7_text_stream_with_text_signature", () => {
  const body = sse([
    created(),
    { type: "response.in_progress", response: { id: "resp_1" } },
    { type: "response.output_item.added", output_index: 0,
      item: { type: "message", id: "msg_1", status: "in_progress", role: "assistant", content: [] } },
    { type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0,
      part: { type: "output_text", text: "", annotations: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hel" },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "lo wörld" },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: " 👋" },
    { type: "response.output_text.done", item_id: "msg_1", output_index: 0, content_index: 0, text: "Hello wörld 👋" },
    { type: "response.output_item.done", output_index: 0,
      item: { type: "message", id: "msg_1", status: "completed", role: "assistant", phase: "final_answer",
        content: [{ type: "output_text", text: "Hello wörld 👋", annotations: [] }] } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_delta text_delta text_end done"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "Hello wörld 👋", textSignature: '{"v":1,"id":"msg_1","phase":"final_answer"}' }],
    { responseId: "resp_1", usage: usage(), stopReason: "stop", rawStopReason: "completed" },
  ));
});

const reasoningItem = () => ({
  type: "reasoning", id: "rs_1",
  summary: [{ type: "summary_text", text: "First part" }, { type: "summary_text", text: "Second" }],
  encrypted_content: "gAAAAB-secret",
});

test("p_6_7_thinking_summary_parts_and_reasoning_signature", () => {
  const delta = (summary_index, delta) =>
    ({ type: "response.reasoning_summary_text.delta", item_id: "rs_1", output_index: 0, summary_index, delta });
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_1", summary: [] } },
    { type: "response.reasoning_summary_part.added", item_id: "rs_1", output_index: 0,
      summary_index: 0, part: { type: "summary_text", text: "" } },
    delta(0, "First "),
    delta(0, "part"),
    { type: "response.reasoning_summary_part.done", item_id: "rs_1", output_index: 0, summary_index: 0 },
    { type: "response.reasoning_summary_part.added", item_id: "rs_1", output_index: 0, summary_index: 1 },
    delta(1, "Second"),
    { type: "response.output_item.done", output_index: 0, item: reasoningItem() },
    { type: "response.output_item.added", output_index: 1,
      item: { type: "message", id: "msg_2", role: "assistant", content: [] } },
    { type: "response.output_text.delta", item_id: "msg_2", output_index: 1, delta: "Answer" },
    { type: "response.output_item.done", output_index: 1,
      item: { type: "message", id: "msg_2", role: "assistant", content: [{ type: "output_text", text: "Answer" }] } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names(
    "thinking_start thinking_delta thinking_delta thinking_delta thinking_delta thinking_end text_start text_delta text_end done",
  ));
  assert.deepEqual(message, expected(
    [
      { type: "thinking", thinking: "First part\n\nSecond", thinkingSignature: JSON.stringify(reasoningItem()) },
      { type: "text", text: "Answer", textSignature: '{"v":1,"id":"msg_2"}' },
    ],
    { responseId: "resp_1", usage: usage(), stopReason: "stop", rawStopReason: "completed" },
  ));
});

test("p_6_7_reasoning_without_deltas_takes_the_item_text", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_1", summary: [] } },
    { type: "response.output_item.done", output_index: 0, item: reasoningItem() },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("thinking_start thinking_delta thinking_end done"));
  assert.equal(message.content[0].thinking, "First part\n\nSecond");
});

const callAdded = (index, call, item, name) => ({
  type: "response.output_item.added", output_index: index,
  item: { type: "function_call", id: item, call_id: call, name, arguments: "", status: "in_progress" },
});

const argsDelta = (index, item, delta) =>
  ({ type: "response.function_call_arguments.delta", item_id: item, output_index: index, delta });

const callDone = (index, call, item, name, args) => ({
  type: "response.output_item.done", output_index: index,
  item: { type: "function_call", id: item, call_id: call, name, arguments: args, status: "completed" },
});

test("p_6_7_interleaved_parallel_tool_calls_end_in_tool_use", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0,
      item: { type: "message", id: "msg_1", role: "assistant", content: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "Checking." },
    { type: "response.output_item.done", output_index: 0,
      item: { type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: "Checking." }] } },
    callAdded(1, "call_a", "fc_a", "weather"),
    callAdded(2, "call_b", "fc_b", "time"),
    argsDelta(1, "fc_a", '{"city":'),
    argsDelta(2, "fc_b", '{"zone":"UTC"}'),
    argsDelta(1, "fc_a", '"Paris"}'),
    { type: "response.function_call_arguments.done", item_id: "fc_b", output_index: 2, arguments: '{"zone":"UTC"}' },
    callDone(2, "call_b", "fc_b", "time", '{"zone":"UTC"}'),
    { type: "response.function_call_arguments.done", item_id: "fc_a", output_index: 1, arguments: '{"city":"Paris"}' },
    callDone(1, "call_a", "fc_a", "weather", '{"city":"Paris"}'),
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names(
    "text_start text_delta text_end toolcall_start toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_end toolcall_end done",
  ));
  assert.deepEqual(message, expected(
    [
      { type: "text", text: "Checking.", textSignature: '{"v":1,"id":"msg_1"}' },
      { type: "toolCall", id: "call_a|fc_a", name: "weather", arguments: { city: "Paris" } },
      { type: "toolCall", id: "call_b|fc_b", name: "time", arguments: { zone: "UTC" } },
    ],
    { responseId: "resp_1", usage: usage(), stopReason: "toolUse", rawStopReason: "completed" },
  ));
});

test("p_6_7_arguments_done_replaces_the_streamed_text", () => {
  const body = sse([
    created(),
    callAdded(0, "call_a", "fc_a", "f"),
    argsDelta(0, "fc_a", '{"a":'),
    { type: "response.function_call_arguments.done", item_id: "fc_a", output_index: 0, arguments: '{"a":2}' },
    { type: "response.output_item.done", output_index: 0,
      item: { type: "function_call", id: "fc_a", call_id: "call_a", name: "f", arguments: "" } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("toolcall_start toolcall_delta toolcall_end done"));
  assert.deepEqual(message.content[0].arguments, { a: 2 });
  assert.equal(message.stopReason, "toolUse");
});

test("p_6_7_refusal_is_text", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0,
      item: { type: "message", id: "msg_r", role: "assistant", content: [] } },
    { type: "response.refusal.delta", item_id: "msg_r", output_index: 0, content_index: 0, delta: "I can't " },
    { type: "response.refusal.delta", item_id: "msg_r", output_index: 0, content_index: 0, delta: "help with that." },
    { type: "response.refusal.done", item_id: "msg_r", output_index: 0, refusal: "I can't help with that." },
    { type: "response.output_item.done", output_index: 0,
      item: { type: "message", id: "msg_r", role: "assistant",
        content: [{ type: "refusal", refusal: "I can't help with that." }] } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_delta text_end done"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "I can't help with that.", textSignature: '{"v":1,"id":"msg_r"}' }],
    { responseId: "resp_1", usage: usage(), stopReason: "stop", rawStopReason: "completed" },
  ));
});

test("p_6_7_message_done_without_added_or_deltas_still_yields_its_text", () => {
  const body = sse([
    created(),
    { type: "response.output_item.done", output_index: 0,
      item: { type: "message", id: "msg_x", role: "assistant",
        content: [{ type: "output_text", text: "Whole" }, { type: "output_text", text: " text" }] } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_end done"));
  assert.deepEqual(message.content, [{ type: "text", text: "Whole text", textSignature: '{"v":1,"id":"msg_x"}' }]);
});

test("p_6_7_error_event_nested_and_top_level", () => {
  for (const error of [
    { type: "error", error: { type: "invalid_request_error", code: "bad_thing", message: "Something broke", param: null } },
    { type: "error", code: "bad_thing", message: "Something broke", param: null },
  ]) {
    const textAdded = { type: "response.output_item.added", output_index: 0,
      item: { type: "message", id: "m", role: "assistant", content: [] } };
    const delta = { type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "Par" };
    const [message, events] = run(sse([created(), textAdded, delta, error, completed("completed")]));
    assert.deepEqual(events, names("text_start text_delta text_end error"));
    assert.deepEqual(message, expected(
      [{ type: "text", text: "Par" }],
      { responseId: "resp_1", stopReason: "error", errorMessage: "Error Code bad_thing: Something broke" },
    ));
  }
});

test("p_6_7_response_failed_messages", () => {
  const cases = [
    [{ status: "failed", error: { code: "server_error", message: "The model failed" } }, "server_error: The model failed"],
    [{ status: "failed", error: { message: "No code" } }, "unknown: No code"],
    [{ status: "failed", incomplete_details: { reason: "max_output_tokens" } }, "incomplete: max_output_tokens"],
    [{ status: "failed" }, "Unknown error (no error details in response)"],
  ];
  for (const [response, text] of cases) {
    const [message, events] = run(sse([created(), { type: "response.failed", response }]));
    assert.deepEqual(events, names("error"));
    assert.deepEqual(message, expected(
      [],
      { responseId: "resp_1", stopReason: "error", errorMessage: text, rawStopReason: "failed" },
    ));
  }
});

test("p_6_7_no_terminal_event_is_an_error", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "m", content: [] } },
    { type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "cut" },
  ]);
  let [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_end error"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "cut" }],
    { responseId: "resp_1", stopReason: "error",
      errorMessage: "OpenAI Responses stream ended before a terminal response event" },
  ));
  [message, events] = run("");
  assert.deepEqual(events, names("error"));
  assert.equal(message.errorMessage, "OpenAI Responses stream ended before a terminal response event");
});

// Issue 13: malformed function_call items and deltas end the stream with an error naming the item and field; no tool
// call with invented fields survives as the message's content.
test("issue_13_malformed_items_are_stream_errors", () => {
  const added = (item) => ({ type: "response.output_item.added", output_index: 0, item });
  const done = (item) => ({ type: "response.output_item.done", output_index: 0, item });
  const call = { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "" };
  const withField = (key, value) => ({ ...call, [key]: value });
  const without = (key) => {
    const item = { ...call };
    delete item[key];
    return item;
  };
  const item0 = "function_call item (output_index 0)";
  const cases = [
    [[added(withField("call_id", 5))], `${item0}: "call_id" must be a non-empty string, got a number`],
    [[added(withField("name", null))], `${item0}: "name" must be a non-empty string, got null`],
    [[added(withField("name", ""))], `${item0}: "name" must be a non-empty string, got ""`],
    [[added(without("call_id"))], `${item0}: "call_id" must be a non-empty string, got missing`],
    [[added(withField("id", ["fc"]))], 'output item: "id" must be a string, got an array'],
    [[added(withField("arguments", { a: 1 }))], `${item0}: "arguments" must be a string, got an object`],
    // A .done without an .added creates the call from the done item: the same checks.
    [[done(withField("call_id", {}))], `${item0}: "call_id" must be a non-empty string, got an object`],
    // The done item of a well-formed call is checked too.
    [[added(call), done(withField("arguments", 7))], `${item0}: "arguments" must be a string, got a number`],
    [
      [{ type: "response.output_item.added", output_index: "0", item: call }],
      'response.output_item.added: "output_index" must be an integer ≥ 0, got a string',
    ],
    [
      [{ type: "response.output_item.added", output_index: -1, item: call }],
      'response.output_item.added: "output_index" must be an integer ≥ 0, got a number',
    ],
    [
      [added(call), { type: "response.function_call_arguments.delta", output_index: 0, delta: 3 }],
      'response.function_call_arguments.delta: "delta" must be a string, got a number',
    ],
    [
      [added(call), { type: "response.function_call_arguments.delta", output_index: 0.5, delta: "{" }],
      'response.function_call_arguments.delta: "output_index" must be an integer ≥ 0, got a number',
    ],
    [
      [added(call), { type: "response.function_call_arguments.delta", item_id: 1, delta: "{" }],
      'response.function_call_arguments.delta: "item_id" must be a string, got a number',
    ],
    [
      [added(call), { type: "response.function_call_arguments.done", output_index: 0 }],
      'response.function_call_arguments.done: "arguments" must be a string, got missing',
    ],
    [
      [{ type: "response.output_text.delta", output_index: 0, delta: null }],
      'response.output_text.delta: "delta" must be a string, got null',
    ],
    [
      [{ type: "response.reasoning_summary_text.delta", output_index: 0, delta: false }],
      'response.reasoning_summary_text.delta: "delta" must be a string, got a boolean',
    ],
    // A .done without an output_index labels the item without one.
    [
      [{ type: "response.output_item.done", item: withField("name", 1) }],
      'function_call item: "name" must be a non-empty string, got a number',
    ],
  ];
  for (const [events, want] of cases) {
    const [message, eventNames] = run(sse([created(), ...events, completed("completed")]));
    const label = JSON.stringify(events);
    assert.equal(eventNames.at(-1), "error", label);
    assert.equal(message.stopReason, "error");
    assert.equal(message.errorMessage, `Malformed openai-responses stream: ${want}`, label);
    // A call opened before the bad event keeps its real fields; none has invented ones.
    for (const block of message.content) {
      assert.equal(block.id, "call_1|fc_1", label);
      assert.equal(block.name, "f");
    }
  }
  // The well-formed stream of the same items is a tool call (the checks refuse only bad fields).
  let [message] = run(sse([created(), added(call), done(call), completed("completed")]));
  assert.equal(message.stopReason, "toolUse");
  // Without an item id the call id is `<call_id>|`, as the reference builds it.
  [message] = run(sse([created(), added(without("id")), done(without("id")), completed("completed")]));
  assert.equal(message.content[0].id, "call_1|");
});

test("p_6_10_truncated_by_max_output_tokens_is_length", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "m", content: [] } },
    { type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "The answer is" },
    completed("incomplete", { incomplete_details: { reason: "max_output_tokens" } }),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_end done"));
  assert.deepEqual(message, expected(
    [{ type: "text", text: "The answer is" }],
    { responseId: "resp_1", usage: usage(), stopReason: "length", rawStopReason: "incomplete.max_output_tokens" },
  ));
});

test("p_6_10_truncated_tool_call_is_length_with_an_arguments_error", () => {
  const body = sse([
    created(),
    callAdded(0, "call_a", "fc_a", "write"),
    argsDelta(0, "fc_a", '{"path":"a.txt","text":"abc'),
    completed("incomplete", { incomplete_details: { reason: "max_output_tokens" } }),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("toolcall_start toolcall_delta toolcall_end done"));
  assert.equal(message.stopReason, "length");
  const call = message.content[0];
  assert.deepEqual(call.arguments, {});
  assert.ok(call.argumentsError.endsWith('\n\nReceived arguments:\n{"path":"a.txt","text":"abc'), call.argumentsError);
});

test("p_6_10_other_terminal_statuses", () => {
  const cases = [
    ["incomplete", { incomplete_details: { reason: "content_filter" } }, { err: "Response incomplete: content_filter" },
      "incomplete.content_filter"],
    ["incomplete", {}, { err: "Response incomplete without a provider reason" }, "incomplete"],
    ["cancelled", {}, { err: "Response cancelled" }, "cancelled"],
    ["failed", { error: { code: "x", message: "y" } }, { err: "x: y" }, "failed"],
    ["in_progress", {}, { ok: "stop" }, "in_progress"],
    ["queued", {}, { ok: "stop" }, "queued"],
    ["paused", {}, { err: "Unhandled stop reason: paused" }, "paused"],
    // A failed status without error details.
    ["failed", {}, { err: "Unknown error (no error details in response)" }, "failed"],
  ];
  for (const [status, extra, outcome, raw] of cases) {
    const [message, events] = run(sse([created(), completed(status, extra)]));
    assert.equal(message.rawStopReason, raw);
    if (outcome.ok) {
      assert.deepEqual(events, names("done"));
      assert.equal(message.stopReason, outcome.ok);
    } else {
      assert.deepEqual(events, names("error"));
      assert.equal(message.errorMessage, outcome.err);
    }
  }
});

test("p_6_7_completed_with_an_unfinished_tool_call_is_an_error", () => {
  const body = sse([created(), callAdded(0, "call_a", "fc_a", "f"), argsDelta(0, "fc_a", "{}"), completed("completed")]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("toolcall_start toolcall_delta toolcall_end error"));
  assert.equal(message.errorMessage, "OpenAI Responses stream completed with an unfinished tool call: f (call_a|fc_a)");
});

test("p_6_7_usage_only_terminal_and_unknown_events", () => {
  const body = 'event: response.created\ndata: {"type":"response.created","response":{"id":"r9"}}\n\n' +
    ": keep-alive\n\n" +
    'event: response.web_search_call.in_progress\ndata: {"type":"response.web_search_call.in_progress","output_index":0}\n\n' +
    'event: response.output_item.added\ndata: {"type":"response.output_item.added","output_index":0,"item":{"type":"web_search_call","id":"ws"}}\n\n' +
    'event: response.completed\ndata: {"type":"response.completed","response":{"id":"r9","status":"completed","usage":{"input_tokens":7,"output_tokens":3}}}\n\n';
  const [message, events] = run(body);
  assert.deepEqual(events, names("done"));
  const cost = { input: (2.0 / 1e6) * 7.0, output: (8.0 / 1e6) * 3.0, cacheRead: 0, cacheWrite: 0,
    total: (2.0 / 1e6) * 7.0 + (8.0 / 1e6) * 3.0, totalFromProvider: false };
  assert.deepEqual(message, expected([], {
    responseId: "r9",
    usage: { input: 7, output: 3, cacheRead: 0, cacheWrite: 0, reasoning: 0, totalTokens: 10, cost },
    stopReason: "stop", rawStopReason: "completed",
  }));
});

// ---- stream: more branches ----

test("slots are found by item id when an event has no output_index", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", item: { type: "message", id: "msg_a", content: [] } },
    { type: "response.output_text.delta", item_id: "msg_a", delta: "by id" },
    // Unknown item id, and a delta for a slot of another kind: both ignored.
    { type: "response.output_text.delta", item_id: "nope", delta: "lost" },
    { type: "response.reasoning_text.delta", item_id: "msg_a", delta: "lost" },
    { type: "response.function_call_arguments.delta", item_id: "msg_a", delta: "lost" },
    { type: "response.output_text.delta", delta: "no id, no index" },
    { type: "response.output_item.done", item: { type: "message", id: "msg_a", content: [{ type: "output_text", text: "by id" }] } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("text_start text_delta text_end done"));
  assert.deepEqual(message.content, [{ type: "text", text: "by id", textSignature: '{"v":1,"id":"msg_a"}' }]);
});

test("the done item's text is the block's final text (message and reasoning)", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs", summary: [] } },
    { type: "response.reasoning_text.delta", output_index: 0, delta: "raw thoughts" },
    // No summary: the content's texts.
    { type: "response.output_item.done", output_index: 0,
      item: { type: "reasoning", id: "rs", summary: [], content: [{ text: "A" }, { text: 1 }, { text: "B" }] } },
    { type: "response.output_item.added", output_index: 1, item: { type: "message", id: "m", content: [] } },
    { type: "response.output_text.delta", output_index: 1, delta: "draft" },
    { type: "response.output_item.done", output_index: 1,
      item: { type: "message", id: "m", phase: "", content: [{ type: "output_text", text: "final" }, { type: "refusal", refusal: "!" }] } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("thinking_start thinking_delta thinking_end text_start text_delta text_end done"));
  assert.equal(message.content[0].thinking, "A\n\nB");
  assert.equal(message.content[0].thinkingSignature,
    '{"type":"reasoning","id":"rs","summary":[],"content":[{"text":"A"},{"text":1},{"text":"B"}]}');
  // An empty phase is left out of the signature.
  assert.deepEqual(message.content[1], { type: "text", text: "final!", textSignature: '{"v":1,"id":"m"}' });
});

test("streamed reasoning whose item has no text keeps the streamed text", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs" } },
    { type: "response.reasoning_summary_text.delta", output_index: 0, delta: "kept" },
    { type: "response.output_item.done", output_index: 0, item: { type: "reasoning", id: "rs", summary: [] } },
    completed("completed"),
  ]);
  const [message] = run(body);
  assert.equal(message.content[0].thinking, "kept");
});

test("a message item without text and without deltas adds no block", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "m", content: [] } },
    { type: "response.output_item.done", output_index: 0, item: { type: "message", id: "m", content: [] } },
    // The slot is gone: a late delta for index 0 goes nowhere.
    { type: "response.output_text.delta", output_index: 0, delta: "late" },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("done"));
  assert.deepEqual(message.content, []);
});

test("a repeated output_index replaces the older slot; a done of another type changes nothing", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "m1", content: [] } },
    callAdded(0, "call_a", "fc_a", "f"),
    { type: "response.output_text.delta", output_index: 0, delta: "ignored: index 0 is the call now" },
    argsDelta(0, "fc_a", '{"x":1}'),
    // A done item of another type than its slot: ignored, the call stays unfinished.
    { type: "response.output_item.done", output_index: 0, item: { type: "message", id: "m1", content: [{ type: "output_text", text: "t" }] } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("toolcall_start toolcall_delta toolcall_end error"));
  assert.equal(message.errorMessage, "OpenAI Responses stream completed with an unfinished tool call: f (call_a|fc_a)");
  assert.deepEqual(message.content[0].arguments, { x: 1 });
});

test("arguments on the added item stream as the first delta", () => {
  const body = sse([
    created(),
    { type: "response.output_item.added", output_index: 0,
      item: { type: "function_call", id: "fc", call_id: "c", name: "f", arguments: '{"a":' } },
    argsDelta(0, "fc", "1}"),
    { type: "response.output_item.done", output_index: 0, item: { type: "function_call", id: "fc", call_id: "c", name: "f" } },
    completed("completed"),
  ]);
  const [message, events] = run(body);
  assert.deepEqual(events, names("toolcall_start toolcall_delta toolcall_delta toolcall_end done"));
  assert.deepEqual(message.content, [{ type: "toolCall", id: "c|fc", name: "f", arguments: { a: 1 } }]);
  assert.equal(message.stopReason, "toolUse");
});

test("the SSE event name stands in for a missing data type; unknown and non-object data are skipped", () => {
  const body = "event: response.created\ndata: {\"response\":{\"id\":\"r2\"}}\n\n" +
    "data: 5\n\n" + "data: null\n\n" + "data: [1,2]\n\n" + "data: \"text\"\n\n" +
    "event: response.output_item.added\ndata: null\n\n" +
    "event: response.failed\ndata: 7\n\n";
  const [message, events] = run(body);
  assert.deepEqual(events, names("error"));
  assert.equal(message.responseId, "r2");
  assert.equal(message.errorMessage, "Unknown error (no error details in response)");
  assert.equal(message.rawStopReason, undefined);
});

test("a null response of a terminal event ends as stop without status; the last terminal wins", () => {
  let [message, events] = run(sse([created(), { type: "response.completed", response: null }]));
  assert.deepEqual(events, names("done"));
  assert.equal(message.stopReason, "stop");
  assert.equal(message.rawStopReason, undefined);
  [message, events] = run(sse([created(), completed("incomplete"), completed("completed")]));
  assert.deepEqual(events, names("done"));
  assert.equal(message.rawStopReason, "completed");
  // A later terminal without a response changes nothing.
  [message, events] = run(sse([created(), completed("cancelled"), { type: "response.completed" }]));
  assert.equal(message.errorMessage, "Response cancelled");
});

test("error events: scalar codes and messages, an explicit null is not looked up in error", () => {
  const cases = [
    [{ type: "error", code: 429, message: true }, "Error Code 429: true"],
    [{ type: "error", code: null, message: null, error: { code: "x", message: "y" } }, "Error Code unknown: Unknown error"],
    [{ type: "error", error: { code: { a: 1 }, message: ["m"] } }, "Error Code unknown: Unknown error"],
    [{ type: "error" }, "Error Code unknown: Unknown error"],
  ];
  for (const [event, text] of cases) {
    const [message, events] = run(sse([created(), event]));
    assert.deepEqual(events, names("error"));
    assert.equal(message.errorMessage, text);
    assert.equal(message.rawStopReason, undefined);
  }
  // response.failed: empty code/message strings count as missing; a numeric code is its text.
  const failed = (error) => run(sse([created(), { type: "response.failed", response: { status: "failed", error } }]))[0];
  assert.equal(failed({ code: "", message: "" }).errorMessage, "unknown: no message");
  assert.equal(failed({ code: 500, message: false }).errorMessage, "500: false");
});

test("[DONE] and other non-JSON data", () => {
  let [message] = run(sse([created(), completed("completed")]) + "data: [DONE]\n\n");
  assert.equal(message.stopReason, "stop");
  [message] = run(sse([created()]) + "data: {oops\n\n");
  assert.equal(message.errorMessage, "Invalid JSON in provider stream: {oops");
});

test("usage: cache writes are part of input_tokens; missing numbers are 0", () => {
  const response = { id: "r", status: "completed",
    usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 10, cache_write_tokens: 5 }, output_tokens: "x" } };
  const [message] = run(sse([{ type: "response.completed", response }]));
  assert.equal(message.usage.input, 35);
  assert.equal(message.usage.cacheRead, 10);
  assert.equal(message.usage.cacheWrite, 5);
  assert.equal(message.usage.output, 0);
  assert.equal(message.usage.reasoning, 0);
  // A usage that is not an object is ignored.
  const [plain] = run(sse([{ type: "response.completed", response: { status: "completed", usage: [1] } }]));
  assert.deepEqual(plain.usage, initialMessage(model()).usage);
});

// ---- request fixtures ----

const usageZero = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

const assistant = (modelId, content) => ({ role: "assistant", api: "openai-responses", provider: "openai", model: modelId,
  content, usage: usageZero(), stopReason: "toolUse", timestamp: 2 });

const build = (m, messages, options, key) => openaiResponses.buildRequest({ model: m, messages, options, apiKey: key });

test("p_6_7_request_reasoning_model_full_body", () => {
  const signature = JSON.stringify({ type: "reasoning", id: "rs_1", summary: [], encrypted_content: "ENC" });
  const messages = [
    { role: "system", content: "You are helpful.", sections: { a: "Sec A", b: null },
      toolsAdded: [{ name: "get", description: "Get it", parameters: { type: "object", properties: { x: { type: "string" } } } }],
      timestamp: 0 },
    { role: "user", content: "hi", timestamp: 1 },
    assistant("gpt-5", [
      { type: "thinking", thinking: "hmm", thinkingSignature: signature },
      { type: "text", text: "Hello", textSignature: '{"v":1,"id":"msg_abc","phase":"commentary"}' },
      { type: "text", text: "Second" },
      { type: "toolCall", id: "call_1|fc_1", name: "get", arguments: { x: "y" } },
    ]),
    { role: "toolResult", toolCallId: "call_1|fc_1", toolName: "get", isError: false, timestamp: 3,
      content: [{ type: "text", text: "res" }, { type: "image", data: "AAAA", mimeType: "image/png" }] },
    { role: "user", timestamp: 4,
      content: [{ type: "text", text: "look" }, { type: "image", data: "BBBB", mimeType: "image/jpeg" }] },
  ];
  const m = { ...model(), thinkingLevelMap: { high: "high" } };
  const options = { reasoning: "high", maxTokens: 4, temperature: 0.5, toolChoice: "auto", sessionId: "sess-1" };
  const request = build(m, messages, options, "sk-test");
  assert.equal(request.url, "https://api.openai.com/v1/responses");
  assert.deepEqual(request.headers, [["content-type", "application/json"], ["authorization", "Bearer sk-test"]]);
  const want = {
    model: "gpt-5",
    input: [
      { role: "developer", content: "You are helpful.\n\nSec A" },
      { role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "ENC" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [] }],
        status: "completed", id: "msg_abc", phase: "commentary" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Second", annotations: [] }],
        status: "completed", id: "msg_1_1" },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "get", arguments: '{"x":"y"}' },
      { type: "function_call_output", call_id: "call_1",
        output: [{ type: "input_text", text: "res" },
          { type: "input_image", detail: "auto", image_url: "data:image/png;base64,AAAA" }] },
      { role: "user", content: [{ type: "input_text", text: "look" },
        { type: "input_image", detail: "auto", image_url: "data:image/jpeg;base64,BBBB" }] },
    ],
    stream: true,
    prompt_cache_key: "sess-1",
    store: false,
    max_output_tokens: 16,
    temperature: 0.5,
    tools: [{ type: "function", name: "get", description: "Get it",
      parameters: { type: "object", properties: { x: { type: "string" } } }, strict: false }],
    tool_choice: "auto",
    reasoning: { effort: "high", summary: "auto" },
    include: ["reasoning.encrypted_content"],
  };
  assert.deepEqual(request.body, want);
  assert.equal(JSON.stringify(request.body), JSON.stringify(want), "key order");
});

test("p_6_7_request_plain_model_foreign_history_no_key", () => {
  const longId = "x".repeat(70);
  const messages = [
    { role: "system", content: [{ type: "text", text: "Sys" }], timestamp: 0 },
    { role: "user", content: [{ type: "text", text: "q" }], timestamp: 1 },
    assistant("other-model", [
      { type: "thinking", thinking: "secret", thinkingSignature: '{"type":"reasoning","id":"rs_9"}' },
      { type: "text", text: "A", textSignature: longId },
      { type: "toolCall", id: "call_9|fc_9", name: "get", arguments: {} },
      { type: "toolCall", id: "plain", name: "get", arguments: { n: 1 } },
    ]),
    { role: "toolResult", toolCallId: "call_9|fc_9", toolName: "get", isError: true, timestamp: 3,
      content: [{ type: "text", text: "boom" }, { type: "text", text: "again" }] },
    { role: "toolResult", toolCallId: "plain", toolName: "get", isError: false, timestamp: 3, content: [] },
    { role: "user", content: [], timestamp: 4 },
    { role: "assistant", api: "openai-responses", provider: "local", model: "llama", stopReason: "stop",
      content: [{ type: "text", text: "B", textSignature: longId }], timestamp: 5 },
  ];
  const m = { id: "llama", api: "openai-responses", provider: "local", baseUrl: "http://localhost:8080/v1/",
    input: ["text"], reasoning: false, maxTokens: 0, contextWindow: 0 };
  const options = { reasoning: "high", sessionId: "s", cacheRetention: "none", samplingParams: { top_p: 0.9 } };
  const request = build(m, messages, options, undefined);
  assert.equal(request.url, "http://localhost:8080/v1/responses");
  assert.deepEqual(request.headers, [["content-type", "application/json"]]);
  // FNV-1a 64 of the id's UTF-8 bytes (computed independently of the module).
  const hashed = "msg_513a36f59147a8dd";
  const want = {
    model: "llama",
    input: [
      { role: "system", content: "Sys" },
      { role: "user", content: [{ type: "input_text", text: "q" }] },
      // The clean-up dropped the foreign text signature: the fallback id.
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "A", annotations: [] }],
        status: "completed", id: "msg_1" },
      { type: "function_call", call_id: "call_9", name: "get", arguments: "{}" },
      { type: "function_call", call_id: "plain", name: "get", arguments: '{"n":1}' },
      { type: "function_call_output", call_id: "call_9", output: "boom\nagain" },
      { type: "function_call_output", call_id: "plain", output: "(no tool output)" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "B", annotations: [] }],
        status: "completed", id: hashed },
    ],
    stream: true,
    store: false,
    top_p: 0.9,
  };
  assert.deepEqual(request.body, want);
});

test("p_6_7_request_reasoning_levels", () => {
  const m = model();
  const body = (mm, options) => build(mm, [], options, "k").body;
  // Level off: nothing unless thinkingLevelMap.off is a string.
  assert.equal(body(m, {}).reasoning, undefined);
  m.thinkingLevelMap = { off: null, medium: "low" };
  assert.equal(body(m, {}).reasoning, undefined);
  m.thinkingLevelMap = { off: "minimal", medium: "low" };
  const off = body(m, {});
  assert.deepEqual(off.reasoning, { effort: "minimal" });
  assert.equal(off.include, undefined);
  // A mapped level.
  const medium = body(m, { reasoning: "medium" });
  assert.deepEqual(medium.reasoning, { effort: "low", summary: "auto" });
  assert.deepEqual(medium.include, ["reasoning.encrypted_content"]);
  // max_output_tokens from the model, developer role switched off by compat.
  m.maxTokens = 32000;
  m.compat = { supportsDeveloperRole: false };
  const request = build(m, [{ role: "system", content: "S", timestamp: 0 }], {}, "k");
  assert.equal(request.body.max_output_tokens, 32000);
  assert.deepEqual(request.body.input, [{ role: "system", content: "S" }]);
  // prompt_cache_key is clamped to 64 characters.
  assert.equal(build(m, [], { sessionId: "k".repeat(80) }, "k").body.prompt_cache_key, "k".repeat(64));
});

// ---- request: more branches ----

test("P-6.2.3: a cloud URL without a key fails; an Authorization header stands in for the key", () => {
  assert.throws(() => build(model(), [], {}, undefined), { message: "No API key for provider: openai" });
  assert.throws(() => build(model(), [], {}, ""), { message: "No API key for provider: openai" });
  const request = build(model(), [], { headers: { Authorization: "Bearer t" } }, undefined);
  assert.deepEqual(request.headers, [["content-type", "application/json"]]);
  // Without a base URL the OpenAI default.
  const { baseUrl, ...noBase } = model();
  assert.equal(build(noBase, [], {}, "k").url, "https://api.openai.com/v1/responses");
});

test("a level mapped to null sends no reasoning fields; a level on a plain model neither", () => {
  const m = { ...model(), thinkingLevelMap: { high: null } };
  const body = build(m, [], { reasoning: "high" }, "k").body;
  assert.equal(body.reasoning, undefined);
  assert.equal(body.include, undefined);
  // xhigh without a map entry → high.
  assert.deepEqual(build(model(), [], { reasoning: "xhigh" }, "k").body.reasoning, { effort: "high", summary: "auto" });
  const plain = build({ ...model(), reasoning: false, thinkingLevelMap: { off: "none" } }, [], { reasoning: "high" }, "k").body;
  assert.equal(plain.reasoning, undefined);
  // Sampling by level: the level of a reasoning model, "off" without one.
  const sampled = { ...model(), samplingParamsByThinkingLevel: { high: { top_k: 1 }, off: { top_k: 2 } } };
  assert.equal(build(sampled, [], { reasoning: "high" }, "k").body.top_k, 1);
  assert.equal(build(sampled, [], {}, "k").body.top_k, 2);
});

test("null options are not sent; sampling overrides keep the key's place; prompt_cache_key counts code points", () => {
  const body = build(model(), [], {
    temperature: null, toolChoice: null, maxTokens: 100,
    sessionId: "😀".repeat(70), samplingParams: { stream: false, top_p: 1 },
  }, "k").body;
  assert.equal("temperature" in body, false);
  assert.equal("tool_choice" in body, false);
  assert.equal(body.max_output_tokens, 100);
  assert.deepEqual(Object.keys(body), ["model", "input", "stream", "prompt_cache_key", "store", "max_output_tokens", "top_p"]);
  assert.equal(body.stream, false);
  assert.equal(body.prompt_cache_key, "😀".repeat(64));
  const choice = { type: "function", name: "get" };
  assert.deepEqual(build(model(), [], { toolChoice: choice, temperature: 0 }, "k").body.tool_choice, choice);
  assert.equal(build(model(), [], { temperature: 0 }, "k").body.temperature, 0);
});

test("assistant history: text signatures, ids, item ids of this model only, arguments", () => {
  const longSig = JSON.stringify({ v: 1, id: "é".repeat(40), phase: "other" });
  const messages = [
    { role: "user", content: "q", timestamp: 1 },
    assistant("gpt-5", [
      { type: "text", text: "a", textSignature: "legacy_id" },
      { type: "text", text: "b", textSignature: '{"v":2,"id":"x"}' },
      { type: "text", text: "c", textSignature: longSig },
      { type: "text", text: "d", textSignature: "" },
      { type: "text", textSignature: "{not json" },
      { type: "thinking", thinking: "t", thinkingSignature: "[1]" },
      { type: "thinking", thinking: "t", thinkingSignature: "not json" },
      { type: "thinking", thinking: "t" },
      { type: "toolCall", id: "c1|item_1", name: "get", arguments: null },
      { type: "toolCall", id: "c2|fc_2|more", name: "get", arguments: "raw" },
      { type: "toolCall", name: 5 },
      { type: "image", data: "x" },
    ]),
  ];
  const items = build(model(), messages, {}, "k").body.input;
  const texts = items.filter((i) => i.type === "message");
  assert.deepEqual(texts.map((t) => [t.id, t.phase, t.content[0].text]), [
    ["legacy_id", undefined, "a"],
    ['{"v":2,"id":"x"}', undefined, "b"],
    // 40 two-byte characters: 40 UTF-16 units, kept (the limit counts UTF-16 units).
    ["é".repeat(40), undefined, "c"],
    ["msg_1_3", undefined, "d"],
    ["{not json", undefined, ""],
  ]);
  const calls = items.filter((i) => i.type === "function_call");
  assert.deepEqual(calls, [
    { type: "function_call", call_id: "c1", name: "get", arguments: "{}" },
    { type: "function_call", id: "fc_2", call_id: "c2", name: "get", arguments: '"raw"' },
    { type: "function_call", call_id: "", name: "", arguments: "{}" },
  ]);
  // Thinking signatures that are not JSON objects send nothing.
  assert.equal(items.filter((i) => i.type === "reasoning" || Array.isArray(i)).length, 0);
});

test("ids over 64 UTF-16 units are hashed over their UTF-8 bytes", () => {
  const id = "é".repeat(65);
  const messages = [assistant("gpt-5", [{ type: "text", text: "x", textSignature: JSON.stringify({ v: 1, id }) }])];
  const [item] = build(model(), messages, {}, "k").body.input;
  // FNV-1a 64 of the 130 UTF-8 bytes (computed independently of the module).
  assert.equal(item.id, "msg_889a44f6a4c80b01");
});

test("tool outputs: images only, blank text, String#trim whitespace rules", () => {
  const result = (content) => ({ role: "toolResult", toolCallId: "c", toolName: "t", isError: false, content, timestamp: 3 });
  const call = assistant("gpt-5", [{ type: "toolCall", id: "c", name: "t", arguments: {} }]);
  const output = (m, content) =>
    build(m, [{ role: "user", content: "q" }, call, result(content)], {}, "k").body.input.at(-1).output;
  const image = { type: "image", data: "QQ", mimeType: "image/gif" };
  const url = { type: "input_image", detail: "auto", image_url: "data:image/gif;base64,QQ" };
  assert.deepEqual(output(model(), [image]), [url]);
  assert.deepEqual(output(model(), [{ type: "text", text: " \n" }, image]), [url]);
  // Blank as the reference's `String#trim` sees it: U+FEFF is white space, U+0085 is not.
  assert.equal(output(model(), [{ type: "text", text: "\ufeff" }]), "(no tool output)");
  assert.equal(output(model(), [{ type: "text", text: "\u0085" }]), "\u0085");
  // The clean-up makes a string content one text block, any other non-array content none.
  assert.equal(output(model(), "a string"), "a string");
  assert.equal(output(model(), 5), "(no tool output)");
  // On a text-only model the clean-up already turned images into placeholder text.
  const textOnly = { ...model(), input: ["text"] };
  assert.equal(output(textOnly, [image]), "(tool image omitted: model does not support images)");
});

test("user content: string, parts, unknown parts, empty", () => {
  const items = build(model(), [
    { role: "user", content: [{ type: "text" }, { type: "image" }, { type: "audio" }, null] },
    { role: "user", content: [{ type: "audio" }] },
    { role: "user", content: "" },
  ], {}, "k").body.input;
  assert.deepEqual(items, [
    { role: "user", content: [{ type: "input_text", text: "" }, { type: "input_image", detail: "auto", image_url: "data:;base64," }] },
    { role: "user", content: [{ type: "input_text", text: "" }] },
  ]);
});

test("tools without fields get defaults", () => {
  const body = build(model(), [{ role: "system", content: "", toolsAdded: [{ name: "n" }] }], {}, "k").body;
  assert.deepEqual(body.tools, [{ type: "function", name: "n", description: "", parameters: {}, strict: false }]);
  assert.equal(body.input.length, 0);
});

// ---- never throws (seeded random inputs) ----

/** A small seeded PRNG (mulberry32). */
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = [
  "type", "response", "item", "output_index", "item_id", "delta", "arguments", "id", "call_id", "name", "status",
  "usage", "error", "code", "message", "incomplete_details", "reason", "summary", "content", "text", "refusal", "phase",
  "summary_index", "content_index", "input_tokens", "output_tokens", "input_tokens_details", "cached_tokens",
  "response.created", "response.output_item.added", "response.output_item.done", "response.output_text.delta",
  "response.refusal.delta", "response.reasoning_summary_text.delta", "response.reasoning_text.delta",
  "response.reasoning_summary_part.done",
  "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.completed",
  "response.incomplete", "response.failed", "reasoning", "function_call", "output_text", "completed", "incomplete",
  "max_output_tokens", "role", "model", "provider", "api", "toolCall", "thinking", "thinkingSignature", "textSignature",
  "user", "assistant", "toolResult", "system", "image", "toolsAdded", "parameters", "reasoning", "thinkingLevelMap",
  "off", "high", "sessionId", "maxTokens", "samplingParams", "input", "baseUrl", "error",
];

function arbJson(r, depth) {
  const pick = (list) => list[Math.floor(r() * list.length)];
  const roll = r();
  if (depth > 0 && roll < 0.35) {
    const out = {};
    for (let n = Math.floor(r() * 8); n > 0; n--) out[pick(KEYS)] = arbJson(r, depth - 1);
    return out;
  }
  if (depth > 0 && roll < 0.45) return Array.from({ length: Math.floor(r() * 5) }, () => arbJson(r, depth - 1));
  return pick([
    () => null, () => r() < 0.5, () => Math.floor((r() - 0.5) * 2 ** 40), () => (r() - 0.5) * 1e6, () => Math.floor(r() * 4),
    () => pick(KEYS), () => pick(KEYS), () => pick(["", "{", '{"a":1}', "x|y", "fc_1|x", "[DONE]", " "]),
  ])();
}

const ERROR_FORMS = /^(Malformed openai-responses stream: |Error Code |OpenAI Responses stream |Response |Unhandled stop reason: |Unknown error|unknown: |incomplete: |[^:]+: |Invalid JSON)/;

test("p_6_1_2_mapper_never_panics", () => {
  const r = rng(1234);
  for (let round = 0; round < 3000; round++) {
    const m = model();
    const input = { model: m, messages: [], options: {}, apiKey: undefined };
    const mapper = mapperFor(openaiResponses, input);
    const asm = Assembler.forModel(m, false);
    const message = initialMessage(m);
    const events = Array.from({ length: Math.floor(r() * 24) }, () => {
      const data = arbJson(r, 5);
      // Bias towards well-typed events so the deeper branches run.
      if (r() < 0.7 && data && typeof data === "object" && !Array.isArray(data)) {
        data.type = KEYS[28 + Math.floor(r() * 18)];
      }
      return [r() < 0.5 ? KEYS[Math.floor(r() * KEYS.length)] : undefined, data];
    });
    for (const [event, data] of events) {
      if (asm.finished()) break;
      mapper.onEvent(event, data, asm);
      onUnparsed(mapper, event, "[DONE]", asm);
    }
    mapper.onEnd(asm);
    assert.ok(asm.finished());
    const out = [];
    applyOps(asm.drain(), message, { push: (e) => out.push(e) });
    if (message.stopReason === "error") {
      // No TypeError or other slip of the mapper reaches the stream as its error.
      assert.doesNotMatch(message.errorMessage, /Cannot read|is not a function|is not iterable|Cannot convert|call stack/);
      assert.ok(ERROR_FORMS.test(message.errorMessage), message.errorMessage);
    }
  }
});

test("p_6_1_2_request_never_panics", () => {
  const r = rng(99);
  for (let round = 0; round < 3000; round++) {
    const m = arbJson(r, 5);
    const messages = Array.from({ length: Math.floor(r() * 6) }, () => arbJson(r, 5));
    const options = arbJson(r, 5);
    try {
      const request = openaiResponses.buildRequest({ model: m, messages, options, apiKey: "k" });
      assert.equal(typeof request.url, "string");
      JSON.stringify(request.body);
    } catch (error) {
      assert.fail(`buildRequest threw ${error?.stack} for ${JSON.stringify({ m, messages, options })}`);
    }
  }
});
