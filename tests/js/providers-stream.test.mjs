// Built-in providers, the response side (SPEC P-6.1.3, P-6.1.4, P-6.1.8, P-6.3, P-6.4, §6.6–§6.10): fixture bytes
// streamed by a real loopback server in random chunk sizes (seeded; PROVIDER_SEED=<n> reproduces a run) and read
// through `streamBuiltin`. Exact event sequences and final messages for text, thinking and parallel tool calls (with
// the live partial arguments growing during toolcall_delta), usage and cost, ids, stop reasons and error texts.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { APIS, SEED, data, drain, event, providerModel, stable, startProviderServer, wire } from "./provider-server.mjs";
import { P, assertArgsGrow, assertUsage, clearKeyEnv, ctx, squash, streamBuiltin } from "./providers-common.mjs";

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());
console.log(`# provider chunking seed ${SEED} (rerun with PROVIDER_SEED=${SEED})`);

const KEY = "sk-stream";
const PRICE = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/** Streams `sse` (string) for `api` and drains the result. */
async function stream(api, sse, { model = {}, options = {}, response = {} } = {}) {
  const r = server.route();
  r.reply({ sse, ...response });
  const run = await drain(streamBuiltin(providerModel(api, r.baseUrl, model), ctx(), { apiKey: KEY, ...options }));
  return { ...run, request: r.requests[0] };
}

const BASE = (api) => ({
  role: "assistant",
  api,
  provider: providerModel(api, "").provider,
  model: providerModel(api, "").id,
});

const TEXT = "Hello, wörld 🌍! Ünïcödé and a longer tail so that several deltas arrive.";
const THINK = "Let me think about ünïcode… done.";
const nDeltas = (s, n = 5) => Math.ceil(Array.from(s).length / n);

// ------------------------------------------------------------------------------------------------------------------
// Text, thinking
// ------------------------------------------------------------------------------------------------------------------

for (const api of APIS) {
  test(`P-6.1.4 ${api}: text reply — start, text_start, text_delta…, text_end, done; one shared message object`, P, async () => {
    const run = await stream(api, wire[api].text(TEXT));
    const deltas = Array(nDeltas(TEXT)).fill("text_delta");
    assert.deepEqual(run.types, ["start", "text_start", ...deltas, "text_end", "done"]);
    const message = run.result;
    for (const e of run.events) {
      if (e.type === "done") assert.equal(e.message, message);
      else assert.equal(e.partial, message, `${e.type}.partial is the one message object (P-6.1.3)`);
    }
    assert.equal(run.final.reason, "stop");
    assert.equal(run.events.filter((e) => e.type === "text_delta").map((e) => e.delta).join(""), TEXT);
    assert.equal(run.events.find((e) => e.type === "text_end").content, TEXT);
    assert.ok(run.events.slice(1).every((e) => e.type === "done" || e.contentIndex === 0));
    assert.equal(typeof message.timestamp, "number");
    const { usage, ...rest } = stable(message);
    const ids = {
      "openai-completions": { responseId: "chatcmpl-1", responseModel: "gpt-test-2025", rawStopReason: "stop" },
      "openai-responses": { responseId: "resp_1", rawStopReason: "completed" },
      "anthropic-messages": { responseId: "msg_01", responseModel: "claude-test-2025", rawStopReason: "end_turn" },
      "google-generative-ai": { responseId: "resp-g1", responseModel: "gemini-test-2025", rawStopReason: "STOP" },
    }[api];
    const textBlock = api === "openai-responses" ? { type: "text", text: TEXT, textSignature: '{"v":1,"id":"msg_1"}' } : { type: "text", text: TEXT };
    assert.deepEqual(rest, { ...BASE(api), content: [textBlock], stopReason: "stop", ...ids });
    assert.equal(usage.input + usage.output, 120);
  });

  test(`P-6.1.4 ${api}: thinking then text — event order and blocks`, P, async () => {
    const run = await stream(api, wire[api].reply({ thinking: THINK, text: TEXT }), { model: { reasoning: true } });
    const thinking = ["thinking_start", ...Array(nDeltas(THINK)).fill("thinking_delta")];
    const text = ["text_start", ...Array(nDeltas(TEXT)).fill("text_delta")];
    const want =
      api === "openai-completions" // blocks stay open until the stream ends, then close in content order
        ? ["start", ...thinking, ...text, "thinking_end", "text_end", "done"]
        : ["start", ...thinking, "thinking_end", ...text, "text_end", "done"];
    assert.deepEqual(run.types, want);
    assert.deepEqual(run.events.filter((e) => e.type.endsWith("_end")).map((e) => [e.contentIndex, e.content]), [[0, THINK], [1, TEXT]]);
    assert.equal(run.result.content[0].type, "thinking");
    assert.equal(run.result.content[0].thinking, THINK);
    assert.deepEqual(run.result.content[1], api === "openai-responses" ? { type: "text", text: TEXT, textSignature: '{"v":1,"id":"msg_1"}' } : { type: "text", text: TEXT });
    const signature = {
      "openai-completions": "reasoning_content",
      "openai-responses": JSON.stringify({ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: THINK }], encrypted_content: "ENC" }),
      "anthropic-messages": "SIG",
      "google-generative-ai": undefined,
    }[api];
    assert.equal(run.result.content[0].thinkingSignature, signature);
  });
}

// ------------------------------------------------------------------------------------------------------------------
// Parallel tool calls with live partial arguments
// ------------------------------------------------------------------------------------------------------------------

const CALLS = [
  { id: "call_A", name: "read", args: { path: "dir/ä 🌍.txt", opts: { depth: 2, flags: [true, null, 'x"y'] } } },
  { id: "call_B", name: "grep", args: { pattern: "a\\b\n\ttab", n: -1500, deep: { list: [[1, 2], { k: "v" }] } } },
];

for (const api of APIS) {
  test(`P-6.4 ${api}: two parallel tool calls — arguments grow live during toolcall_delta, final at toolcall_end`, P, async () => {
    const run = await stream(api, wire[api].reply({ text: "Checking.", calls: CALLS }));
    const seq = squash(run.types);
    const want = {
      // Chat: text stays open; both calls open, fragments interleave, everything closes at the end in content order
      "openai-completions": "start text_start text_delta* toolcall_start toolcall_delta* toolcall_start toolcall_delta* text_end toolcall_end toolcall_end done",
      "openai-responses": "start text_start text_delta* text_end toolcall_start toolcall_start toolcall_delta* toolcall_end toolcall_end done",
      "anthropic-messages": "start text_start text_delta* text_end toolcall_start toolcall_delta* toolcall_end toolcall_start toolcall_delta* toolcall_end done",
      "google-generative-ai": "start text_start text_delta* text_end toolcall_start toolcall_delta* toolcall_end toolcall_start toolcall_delta* toolcall_end done",
    }[api];
    assert.equal(seq, want);
    assert.equal(run.final.reason, "toolUse");
    assert.equal(run.result.stopReason, "toolUse");
    const ids = api === "openai-responses" ? ["call_A|fc_1", "call_B|fc_2"] : ["call_A", "call_B"];
    assert.deepEqual(
      run.result.content.slice(1),
      CALLS.map((c, i) => ({ type: "toolCall", id: ids[i], name: c.name, arguments: c.args })),
    );
    // the raw fragments of each call concatenate to its JSON text
    for (const [i, c] of CALLS.entries()) {
      const deltas = run.events.filter((e) => e.type === "toolcall_delta" && e.contentIndex === i + 1).map((e) => e.delta);
      assert.equal(deltas.join(""), JSON.stringify(c.args));
      assertArgsGrow(run.argsLive, i + 1, c.args, { streamed: api !== "google-generative-ai" });
      const end = run.events.find((e) => e.type === "toolcall_end" && e.contentIndex === i + 1);
      assert.deepEqual(end.toolCall, { type: "toolCall", id: ids[i], name: c.name, arguments: c.args });
      assert.equal(end.toolCall, run.result.content[i + 1], "toolcall_end.toolCall is the message's block");
    }
    if (api === "openai-completions" || api === "openai-responses") {
      // interleaved: a delta of call B comes before the last delta of call A
      const order = run.events.filter((e) => e.type === "toolcall_delta").map((e) => e.contentIndex);
      assert.ok(order.indexOf(2) < order.lastIndexOf(1), `fragments interleave: ${order.join("")}`);
    }
  });
}

test("P-6.4.1 completions: tool-call indices starting at 1 and fragments without id get `call_<n>`", P, async () => {
  const chunk = (delta, extra = {}) => data({ id: "c", model: "gpt-test", choices: [{ index: 0, delta, ...extra }] });
  const sse =
    chunk({ tool_calls: [{ index: 1, id: "call_X", function: { name: "a", arguments: '{"q":' } }] }) +
    chunk({ tool_calls: [{ index: 2, function: { name: "b", arguments: "{}" } }] }) +
    chunk({ tool_calls: [{ index: 1, function: { arguments: "1}" } }] }) +
    chunk({}, { finish_reason: "tool_calls" }) +
    data("[DONE]");
  const run = await stream("openai-completions", sse);
  assert.deepEqual(run.result.content, [
    { type: "toolCall", id: "call_X", name: "a", arguments: { q: 1 } },
    { type: "toolCall", id: "call_1", name: "b", arguments: {} },
  ]);
  assert.equal(run.result.stopReason, "toolUse");
});

test("P-6.4.3 malformed final arguments → {} plus argumentsError; non-object → `must be a JSON object`", P, async () => {
  const start = (index, id) => event("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id, name: "t", input: {} } });
  const delta = (index, partial_json) => event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
  const stop = (index) => event("content_block_stop", { type: "content_block_stop", index });
  const sse =
    event("message_start", { type: "message_start", message: { id: "m", model: "claude-test", usage: { input_tokens: 1, output_tokens: 1 } } }) +
    start(0, "a") + delta(0, '{"a": [1, 2') + delta(0, ", oops}") + stop(0) +
    start(1, "b") + delta(1, "[1, 2]") + stop(1) +
    start(2, "c") + delta(2, '{"raw": "line1\nline2", "path": "C:\\dir"}') + stop(2) +
    start(3, "d") + stop(3) +
    event("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } }) +
    event("message_stop", { type: "message_stop" });
  const run = await stream("anthropic-messages", sse);
  const [a, b, c, d] = run.result.content;
  assert.deepEqual(a.arguments, {});
  assert.match(a.argumentsError, /\n\nReceived arguments:\n\{"a": \[1, 2, oops\}$/);
  assert.deepEqual(b.arguments, {});
  assert.equal(b.argumentsError, "Tool call arguments must be a JSON object\n\nReceived arguments:\n[1, 2]");
  // repaired: raw control character escaped, lone backslash doubled
  assert.deepEqual(c.arguments, { raw: "line1\nline2", path: "C:\\dir" });
  assert.equal(c.argumentsError, undefined);
  assert.deepEqual(d.arguments, {});
  assert.equal(d.argumentsError, undefined);
  // the live value of the malformed one froze at the last good state
  const live = run.argsLive.filter((x) => x.index === 0).map((x) => x.args);
  assert.deepEqual(live[0], { a: [1] });
});

test("issue 34: arguments past JSON.parse's reach (nesting past 512, a text cut short) get the P-6.4.3 error; a number beyond f64 is JSON.parse's", P, async () => {
  // The arguments text is read as the reference reads it (JSON.parse), with the nesting limit and the repair of P-6.4.3.
  const start = (index, id) => event("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id, name: "t", input: {} } });
  const delta = (index, partial_json) => event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
  const stop = (index) => event("content_block_stop", { type: "content_block_stop", index });
  const deep = `{"d":${"[".repeat(520)}${"]".repeat(520)}}`;
  const sse =
    event("message_start", { type: "message_start", message: { id: "m", model: "claude-test", usage: { input_tokens: 1, output_tokens: 1 } } }) +
    start(0, "a") + delta(0, '{"n": 1e4') + delta(0, '00, "m": 2}') + stop(0) +
    start(1, "b") + delta(1, deep) + stop(1) +
    start(2, "c") + delta(2, '{"ok": [1, {"x": "\\ud83d"}]}') + stop(2) +
    // Cut short, a lone surrogate (decoded from the SSE line) inside: the core parses the text JS kept.
    start(3, "d") + delta(3, '{"x": "\ud83d') + stop(3) +
    event("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } }) +
    event("message_stop", { type: "message_stop" });
  const run = await stream("anthropic-messages", sse);
  const [a, b, c, d] = run.result.content;
  assert.deepEqual(a.arguments, { n: Infinity, m: 2 }, "beyond the f64 range: JSON.parse's Infinity, as the reference");
  assert.deepEqual(b.arguments, {});
  assert.match(b.argumentsError, /^Maximum nesting depth \(512\) exceeded in JSON at position \d+/);
  assert.deepEqual(c.arguments, { ok: [1, { x: "\ud83d" }] }, "clean: JSON.parse's reading, a lone surrogate kept");
  assert.deepEqual(d.arguments, {});
  assert.ok(d.argumentsError.endsWith('\n\nReceived arguments:\n{"x": "\ud83d'), JSON.stringify(d.argumentsError));
});

// ------------------------------------------------------------------------------------------------------------------
// Usage and cost (§6.10)
// ------------------------------------------------------------------------------------------------------------------

test("§6.10 usage and cost per API (cached, cache writes, reasoning tokens)", P, async () => {
  const cases = {
    "openai-completions": [
      { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 5 } },
      { input: 60, output: 20, cacheRead: 30, cacheWrite: 10, reasoning: 5 },
    ],
    "openai-responses": [
      { input_tokens: 100, input_tokens_details: { cached_tokens: 30 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 120 },
      { input: 70, output: 20, cacheRead: 30, reasoning: 5 },
    ],
    "anthropic-messages": [
      { input_tokens: 100, cache_read_input_tokens: 30, cache_creation_input_tokens: 10, cache_creation: { ephemeral_1h_input_tokens: 4 }, output_tokens: 20, output_tokens_details: { thinking_tokens: 5 } },
      { input: 100, output: 20, cacheRead: 30, cacheWrite: 10, cacheWrite1h: 4, reasoning: 5 },
    ],
    "google-generative-ai": [
      { promptTokenCount: 100, cachedContentTokenCount: 30, candidatesTokenCount: 20, thoughtsTokenCount: 5, totalTokenCount: 125 },
      { input: 70, output: 25, cacheRead: 30, reasoning: 5 },
    ],
  };
  for (const api of APIS) {
    const [usage, want] = cases[api];
    const run = await stream(api, wire[api].reply({ text: "ok", usage }));
    assert.equal(run.result.stopReason, "stop", `${api}: ${run.result.errorMessage}`);
    const { cacheWrite1h, reasoning, ...tokens } = want;
    const got = { ...run.result.usage };
    assert.equal(got.reasoning ?? 0, reasoning, `${api} reasoning`);
    if (cacheWrite1h !== undefined) assert.equal(got.cacheWrite1h, cacheWrite1h, `${api} cacheWrite1h`);
    delete got.reasoning;
    delete got.cacheWrite1h;
    assertUsage(got, tokens, PRICE, { cacheWrite1h });
  }
});

test("§6.10 Anthropic: message_delta usage overrides message_start; missing numbers are 0", P, async () => {
  const sse =
    event("message_start", { type: "message_start", message: { id: "m", model: "claude-test", usage: { input_tokens: 50, output_tokens: 1 } } }) +
    event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "Hi" } }) +
    event("content_block_stop", { type: "content_block_stop", index: 0 }) +
    event("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { input_tokens: 60, output_tokens: 7 } }) +
    event("message_stop", { type: "message_stop" });
  const run = await stream("anthropic-messages", sse);
  // initial text of content_block_start is kept (one text_delta for it is not required)
  assert.equal(run.result.content[0].text, "Hi");
  assert.equal(run.result.responseModel, undefined, "same model id → no responseModel");
  const { cacheWrite1h, reasoning, ...usage } = run.result.usage;
  assertUsage(usage, { input: 60, output: 7 }, PRICE);
});

// ------------------------------------------------------------------------------------------------------------------
// Stop reasons (§6.10)
// ------------------------------------------------------------------------------------------------------------------

const STOPS = [
  ["openai-completions", { finish: "length" }, "length", undefined, "length"],
  ["openai-completions", { finish: "function_call" }, "toolUse", undefined, "function_call"],
  ["openai-completions", { finish: "content_filter" }, "error", "Provider finish_reason: content_filter", "content_filter"],
  ["anthropic-messages", { stop: "max_tokens" }, "length", undefined, "max_tokens"],
  ["anthropic-messages", { stop: "pause_turn" }, "stop", undefined, "pause_turn"],
  ["anthropic-messages", { stop: "stop_sequence" }, "stop", undefined, "stop_sequence"],
  ["anthropic-messages", { stop: "refusal" }, "error", "The model refused to complete the request", "refusal"],
  ["anthropic-messages", { stop: "sensitive" }, "error", "Provider stopped with: sensitive", "sensitive"],
  ["anthropic-messages", { stop: "weird_reason" }, "error", "Unhandled stop reason: weird_reason", "weird_reason"],
  ["google-generative-ai", { finish: "MAX_TOKENS" }, "length", undefined, "MAX_TOKENS"],
  ["google-generative-ai", { finish: "SAFETY" }, "error", "Provider stopped with: SAFETY", "SAFETY"],
];

for (const [api, extra, reason, message, raw] of STOPS) {
  test(`§6.10 ${api}: provider stop ${JSON.stringify(Object.values(extra)[0])} → ${reason}${message ? ` (${message})` : ""}`, P, async () => {
    const run = await stream(api, wire[api].reply({ text: "partial answer", ...extra }));
    assert.equal(run.result.stopReason, reason);
    assert.equal(run.result.errorMessage, message);
    assert.equal(run.result.rawStopReason, raw);
    assert.equal(run.final.type, message ? "error" : "done");
    assert.equal(run.final.reason, reason);
    assert.equal(run.result.content[0].text, "partial answer", "content kept");
    assert.deepEqual(run.types.slice(-2), ["text_end", run.final.type]);
  });
}

test("§6.10 Anthropic refusal with stop_details.explanation uses the explanation", P, async () => {
  const sse = wire["anthropic-messages"].reply({ text: "no" }).replace(
    '"delta":{"stop_reason":"end_turn","stop_sequence":null}',
    '"delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":{"explanation":"Declined for policy reasons"}}',
  );
  const run = await stream("anthropic-messages", sse);
  assert.equal(run.result.stopReason, "error");
  assert.equal(run.result.errorMessage, "Declined for policy reasons");
});

const responsesTerminal = (type, response) =>
  event("response.created", { type: "response.created", response: { id: "resp_9", model: "gpt-test", status: "in_progress" } }) +
  event("response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_9", role: "assistant", content: [] } }) +
  event("response.output_text.delta", { type: "response.output_text.delta", item_id: "msg_9", output_index: 0, content_index: 0, delta: "cut" }) +
  event(type, { type, response: { id: "resp_9", model: "gpt-test", ...response } });

const RESPONSES_STOPS = [
  ["response.incomplete", { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }, "length", undefined],
  ["response.incomplete", { status: "incomplete", incomplete_details: { reason: "content_filter" } }, "error", "Response incomplete: content_filter"],
  ["response.incomplete", { status: "incomplete" }, "error", "Response incomplete without a provider reason"],
  ["response.failed", { status: "failed", error: { code: "server_error", message: "The server had an error" } }, "error", "server_error: The server had an error"],
  ["response.failed", { status: "failed" }, "error", "Unknown error (no error details in response)"],
  ["response.completed", { status: "cancelled" }, "error", "Response cancelled"],
  ["response.completed", { status: "in_progress" }, "stop", undefined],
  ["response.completed", { status: "queued" }, "stop", undefined],
];

for (const [type, response, reason, message] of RESPONSES_STOPS) {
  test(`§6.10 openai-responses: ${type} ${JSON.stringify(response)} → ${reason}${message ? ` (${message})` : ""}`, P, async () => {
    const run = await stream("openai-responses", responsesTerminal(type, response));
    assert.equal(run.result.stopReason, reason);
    assert.equal(run.result.errorMessage, message);
    assert.equal(run.result.responseId, "resp_9");
    assert.deepEqual(run.result.content.map((b) => b.text), ["cut"]);
    assert.equal(run.types.at(-1), message ? "error" : "done");
  });
}

// ------------------------------------------------------------------------------------------------------------------
// Errors inside the stream: provider error events, invalid JSON, missing terminal events
// ------------------------------------------------------------------------------------------------------------------

/** A stream with some text, then `tail` (raw SSE). */
function textThen(api, tail) {
  const full = wire[api].text("Some text so far");
  const cut = {
    "openai-completions": full.indexOf('data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test-2025","choices":[{"index":0,"delta":{},"finish_reason":"stop"'),
    "openai-responses": full.indexOf("event: response.output_text.done"),
    "anthropic-messages": full.indexOf('event: content_block_stop'),
    "google-generative-ai": full.lastIndexOf("data: "),
  }[api];
  assert.ok(cut > 0);
  return full.slice(0, cut) + tail;
}
const partialText = { "google-generative-ai": "Some text so fa" }; // its last chunk was cut
const textSoFar = (api) => partialText[api] ?? "Some text so far";

const PROVIDER_ERRORS = [
  ["openai-completions", data({ error: { message: "Rate limit reached for requests", type: "requests" } }), "Rate limit reached for requests"],
  ["openai-responses", event("error", { type: "error", code: "rate_limit_exceeded", message: "Slow down", param: null }), "Error Code rate_limit_exceeded: Slow down"],
  ["openai-responses", event("error", { type: "error", error: { code: "server_error", message: "Nested" } }), "Error Code server_error: Nested"],
  ["anthropic-messages", event("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }), "Overloaded"],
];

for (const [api, tail, message] of PROVIDER_ERRORS) {
  test(`§6 ${api}: a provider error event → error \`${message}\`, open blocks closed, text kept`, P, async () => {
    const run = await stream(api, textThen(api, tail));
    assert.equal(squash(run.types), "start text_start text_delta* text_end error");
    assert.equal(run.final.reason, "error");
    assert.equal(run.result.stopReason, "error");
    assert.equal(run.result.errorMessage, message);
    assert.equal(run.result.content[0].text, textSoFar(api));
  });
}

test("P-6.9 google-generative-ai: a chunk with a top-level error object → error containing the provider's message", P, async () => {
  const run = await stream("google-generative-ai", textThen("google-generative-ai", data({ error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } })));
  assert.equal(squash(run.types), "start text_start text_delta* text_end error");
  assert.equal(run.result.stopReason, "error");
  assert.ok(run.result.errorMessage.includes("Resource has been exhausted (e.g. check quota)."), run.result.errorMessage);
});

for (const api of APIS) {
  test(`P-6.3.2 ${api}: data that is not JSON (even after repair) → \`Invalid JSON in provider stream: <first 200>\``, P, async () => {
    const bad = `{"oops": ${"x".repeat(300)}`;
    const tail = api === "openai-responses" || api === "anthropic-messages" ? `event: content_block_delta\ndata: ${bad}\n\n` : `data: ${bad}\n\n`;
    const run = await stream(api, textThen(api, tail));
    assert.equal(squash(run.types), "start text_start text_delta* text_end error");
    assert.equal(run.result.errorMessage, `Invalid JSON in provider stream: ${bad.slice(0, 200)}`);
    assert.equal(run.result.stopReason, "error");
  });
}

test("P-6.3.2 a repairable data line (raw control character in a string) is accepted", P, async () => {
  const sse = data({ id: "c", model: "gpt-test", choices: [{ index: 0, delta: { content: "A" } }] }).replace('"A"', '"A\tB"') + data({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) + data("[DONE]");
  const run = await stream("openai-completions", sse);
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  assert.equal(run.result.content[0].text, "A\tB");
});

const MISSING_END = [
  ["openai-completions", "Stream ended without finish_reason"],
  ["openai-responses", "OpenAI Responses stream ended before a terminal response event"],
  ["anthropic-messages", "Anthropic stream ended before message_stop"],
  ["google-generative-ai", "Google stream ended without a finish reason"],
];

for (const [api, message] of MISSING_END) {
  test(`§6 ${api}: the stream ends without its terminal event → \`${message}\``, P, async () => {
    const run = await stream(api, textThen(api, ""));
    assert.equal(squash(run.types), "start text_start text_delta* text_end error");
    assert.equal(run.result.errorMessage, message);
    assert.equal(run.result.content[0].text, textSoFar(api));
  });
}

test("P-6.6 completions: a finish_reason without [DONE] still ends normally; compat.supportsFinishReason false", P, async () => {
  const full = wire["openai-completions"].text("done");
  let run = await stream("openai-completions", full.replace("data: [DONE]\n\n", ""));
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  const noFinish = textThen("openai-completions", "");
  run = await stream("openai-completions", noFinish, { model: { compat: { supportsFinishReason: false } } });
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  assert.equal(run.result.errorMessage, undefined);
});

test("P-6.1.4 a completely empty 200 body → error, no content", P, async () => {
  for (const [api, message] of MISSING_END) {
    const run = await stream(api, "");
    assert.deepEqual(run.types, ["start", "error"], api);
    assert.equal(run.result.errorMessage, message, api);
    assert.deepEqual(run.result.content, []);
  }
});

// ------------------------------------------------------------------------------------------------------------------
// Bytes on the wire: CRLF split across chunks (P-6.1.8), split UTF-8, comments, BOM, multi-line data (P-6.3.1)
// ------------------------------------------------------------------------------------------------------------------

for (const api of APIS) {
  test(`P-6.1.8/P-6.3.1 ${api}: CRLF line ends and multi-byte characters split over 1–3 byte chunks`, P, async () => {
    const sse = "\uFEFF: a comment line\r\n\r\n" + wire[api].reply({ text: TEXT, calls: [CALLS[0]] }).replace(/\n/g, "\r\n");
    const run = await stream(api, sse, { response: { minChunk: 1, maxChunk: 3 } });
    assert.equal(run.result.stopReason, "toolUse", run.result.errorMessage);
    assert.equal(run.result.content[0].text, TEXT);
    assert.deepEqual(run.result.content[1].arguments, CALLS[0].args);
  });
}

test("P-6.3.1 bare \\r line ends, data split over several data: lines, unknown fields and id/retry", P, async () => {
  const chunk = JSON.stringify({ id: "c", model: "gpt-test", choices: [{ index: 0, delta: { content: "multi" } }] });
  const half = chunk.length >> 1;
  const sse =
    `id: 7\rretry: 1000\rfoo: bar\rdata: ${chunk.slice(0, half)}\rdata: ${chunk.slice(half)}\r\r` +
    `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\r\rdata: [DONE]\r\r`;
  // joined with "\n": JSON whitespace, so still valid
  const run = await stream("openai-completions", sse, { response: { chunks: [1] } });
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  assert.equal(run.result.content[0].text, "multi");
});

test("P-6.3.1 a final event without the trailing blank line is still dispatched at end of input", P, async () => {
  const sse = wire["google-generative-ai"].text("tail").replace(/\n\n$/, "");
  const run = await stream("google-generative-ai", sse);
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  assert.equal(run.result.content[0].text, "tail");
});

test("P-6.3.1 invalid UTF-8 bytes become U+FFFD", P, async () => {
  const head = Buffer.from('data: {"id":"c","model":"gpt-test","choices":[{"index":0,"delta":{"content":"a', "utf8");
  const tail = Buffer.from(`b"}}]}\n\n${data({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}data: [DONE]\n\n`, "utf8");
  const r = server.route();
  r.reply({ sse: Buffer.concat([head, Buffer.from([0xff, 0xfe]), tail]) });
  const run = await drain(streamBuiltin(providerModel("openai-completions", r.baseUrl), ctx(), {}));
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  assert.equal(run.result.content[0].text, "a\uFFFD\uFFFDb");
});

test("P-6.7 Responses: reasoning summary parts are separated by a blank line; output_item.done closes blocks", P, async () => {
  const ev = (type, extra) => event(type, { type, ...extra });
  const sse =
    ev("response.created", { response: { id: "r", model: "gpt-test", status: "in_progress" } }) +
    ev("response.output_item.added", { output_index: 0, item: { type: "reasoning", id: "rs_9", summary: [] } }) +
    ev("response.reasoning_summary_text.delta", { item_id: "rs_9", output_index: 0, summary_index: 0, delta: "First." }) +
    ev("response.reasoning_summary_part.done", { item_id: "rs_9", output_index: 0, summary_index: 0, part: { type: "summary_text", text: "First." } }) +
    ev("response.reasoning_summary_part.added", { item_id: "rs_9", output_index: 0, summary_index: 1, part: { type: "summary_text", text: "" } }) +
    ev("response.reasoning_summary_text.delta", { item_id: "rs_9", output_index: 0, summary_index: 1, delta: "Second." }) +
    ev("response.output_item.done", { output_index: 0, item: { type: "reasoning", id: "rs_9", summary: [{ type: "summary_text", text: "First." }, { type: "summary_text", text: "Second." }] } }) +
    ev("response.output_item.added", { output_index: 1, item: { type: "message", id: "msg_9", role: "assistant", content: [] } }) +
    ev("response.refusal.delta", { item_id: "msg_9", output_index: 1, content_index: 0, delta: "I can't." }) +
    ev("response.output_item.done", { output_index: 1, item: { type: "message", id: "msg_9", role: "assistant", content: [{ type: "refusal", refusal: "I can't." }], phase: "final_answer" } }) +
    ev("response.completed", { response: { id: "r", model: "gpt-test", status: "completed", usage: { input_tokens: 1, output_tokens: 2 } } });
  const run = await stream("openai-responses", sse);
  assert.equal(squash(run.types), "start thinking_start thinking_delta* thinking_end text_start text_delta* text_end done");
  assert.equal(run.result.content[0].thinking, "First.\n\nSecond.");
  assert.equal(run.result.content[1].text, "I can't.");
  assert.deepEqual(JSON.parse(run.result.content[1].textSignature), { v: 1, id: "msg_9", phase: "final_answer" });
});

test("P-6.8 Anthropic: redacted_thinking opens and closes at once; signature_delta appends without an event", P, async () => {
  const ev = (type, extra) => event(type, { type, ...extra });
  const sse =
    ev("message_start", { message: { id: "m", model: "claude-test", usage: { input_tokens: 1, output_tokens: 1 } } }) +
    ev("content_block_start", { index: 0, content_block: { type: "redacted_thinking", data: "REDACTED-DATA" } }) +
    ev("content_block_stop", { index: 0 }) +
    ev("content_block_start", { index: 1, content_block: { type: "thinking", thinking: "", signature: "" } }) +
    ev("content_block_delta", { index: 1, delta: { type: "thinking_delta", thinking: "hm" } }) +
    ev("content_block_delta", { index: 1, delta: { type: "signature_delta", signature: "AB" } }) +
    ev("content_block_delta", { index: 1, delta: { type: "signature_delta", signature: "CD" } }) +
    ev("content_block_stop", { index: 1 }) +
    ev("content_block_start", { index: 2, content_block: { type: "server_tool_use", id: "s", name: "web_search", input: {} } }) +
    ev("content_block_stop", { index: 2 }) +
    ev("content_block_start", { index: 3, content_block: { type: "text", text: "" } }) +
    ev("content_block_delta", { index: 3, delta: { type: "text_delta", text: "ok" } }) +
    ev("content_block_delta", { index: 3, delta: { type: "citations_delta", citation: {} } }) +
    ev("content_block_stop", { index: 3 }) +
    ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }) +
    ev("message_stop", {});
  const run = await stream("anthropic-messages", sse);
  assert.equal(run.types.join(" "), "start thinking_start thinking_end thinking_start thinking_delta thinking_end text_start text_delta text_end done");
  assert.deepEqual(run.result.content, [
    { type: "thinking", thinking: "", thinkingSignature: "REDACTED-DATA", redacted: true },
    { type: "thinking", thinking: "hm", thinkingSignature: "ABCD" },
    { type: "text", text: "ok" },
  ]);
  assert.deepEqual(run.events.map((e) => e.contentIndex).filter((i) => i !== undefined), [0, 0, 1, 1, 1, 2, 2, 2]);
});

test("P-6.9 Google: kind switches close blocks; generated tool-call ids are unique; thoughtSignature kept", P, async () => {
  const chunk = (parts, extra = {}) => data({ candidates: [{ content: { role: "model", parts }, index: 0, ...extra }], responseId: "g", modelVersion: "gemini-test" });
  const sse =
    chunk([{ text: "think", thought: true, thoughtSignature: "TS1" }]) +
    chunk([{ text: "say" }]) +
    chunk([{ text: " more", thought: true }]) +
    chunk([{ functionCall: { name: "f", args: { a: 1 } } }, { functionCall: { name: "f", args: {} } }], { finishReason: "STOP" });
  const run = await stream("google-generative-ai", sse);
  assert.equal(run.types.join(" "), "start thinking_start thinking_delta thinking_end text_start text_delta text_end thinking_start thinking_delta thinking_end toolcall_start toolcall_delta toolcall_end toolcall_start toolcall_delta toolcall_end done");
  const [t1, , , c1, c2] = run.result.content;
  assert.equal(t1.thinkingSignature, "TS1");
  assert.match(c1.id, /^f_\d+_\d+$/);
  assert.match(c2.id, /^f_\d+_\d+$/);
  assert.notEqual(c1.id, c2.id);
  assert.equal(run.events.filter((e) => e.type === "toolcall_delta")[0].delta, '{"a":1}');
  assert.equal(run.result.stopReason, "toolUse");
});

// ------------------------------------------------------------------------------------------------------------------
// More per-API details
// ------------------------------------------------------------------------------------------------------------------

test("P-6.1.3 the message at `start`: empty content, zero usage, stopReason pending; durationMs on the final message", P, async () => {
  for (const api of APIS) {
    const r = server.route();
    r.reply({ sse: wire[api].text("yo") });
    let atStart;
    const run = await drain(streamBuiltin(providerModel(api, r.baseUrl), ctx(), { apiKey: KEY }), {
      onEvent: (e) => {
        if (e.type === "start") atStart = JSON.parse(JSON.stringify(e.partial));
      },
    });
    const { timestamp, ...rest } = atStart;
    assert.deepEqual(rest, {
      ...BASE(api),
      content: [],
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "pending",
    });
    assert.ok(Math.abs(timestamp - Date.now()) < 5000);
    assert.equal(run.result.timestamp, timestamp);
    assert.ok(Number.isInteger(run.result.durationMs) && run.result.durationMs >= 0, `durationMs ${run.result.durationMs}`);
  }
});

test("P-6.1.8 Anthropic: every CRLF split between two network chunks (1-byte chunks) is one line end", P, async () => {
  const run = await stream("anthropic-messages", wire["anthropic-messages"].reply({ text: "crlf ok", calls: [CALLS[1]] }).replace(/\n/g, "\r\n"), { response: { chunks: [1] } });
  assert.equal(run.result.stopReason, "toolUse", run.result.errorMessage);
  assert.equal(run.result.content[0].text, "crlf ok");
  assert.deepEqual(run.result.content[1].arguments, CALLS[1].args);
});

test("P-6.7 Responses: function_call_arguments.done gives the full text even when deltas were incomplete", P, async () => {
  const ev = (type, extra) => event(type, { type, ...extra });
  const item = { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: "" };
  const sse =
    ev("response.created", { response: { id: "r", model: "gpt-test" } }) +
    ev("response.output_item.added", { output_index: 0, item }) +
    ev("response.function_call_arguments.delta", { item_id: "fc_1", output_index: 0, delta: '{"a":' }) +
    ev("response.function_call_arguments.done", { item_id: "fc_1", output_index: 0, arguments: '{"a":1,"b":2}' }) +
    ev("response.output_item.done", { output_index: 0, item: { ...item, arguments: '{"a":1,"b":2}' } }) +
    ev("response.completed", { response: { id: "r", status: "completed" } });
  const run = await stream("openai-responses", sse);
  assert.deepEqual(run.result.content, [{ type: "toolCall", id: "c1|fc_1", name: "f", arguments: { a: 1, b: 2 } }]);
  assert.equal(run.result.stopReason, "toolUse", "Responses: stop with tool calls → toolUse");
});

test("P-6.8 Anthropic: the initial text of content_block_start is kept", P, async () => {
  const sse = wire["anthropic-messages"].text("lo").replace('"content_block":{"type":"text","text":""}', '"content_block":{"type":"text","text":"Hel"}');
  const run = await stream("anthropic-messages", sse);
  assert.equal(run.result.content[0].text, "Hello");
  assert.equal(run.events.find((e) => e.type === "text_end").content, "Hello");
});

test("P-6.6 completions: reasoning / reasoning_text → thinking, refusal → text, usage inside choices[0]", P, async () => {
  const ch = (delta, extra = {}) => data({ id: "c", model: "gpt-test", choices: [{ index: 0, delta, ...extra }] });
  const sse = ch({ reasoning: "R1" }) + ch({ reasoning_text: "R2" }) + ch({ refusal: "no." }) + ch({}, { finish_reason: "stop", usage: { prompt_tokens: 5, completion_tokens: 2 } }) + data("[DONE]");
  const run = await stream("openai-completions", sse);
  assert.equal(run.types.join(" "), "start thinking_start thinking_delta thinking_delta text_start text_delta thinking_end text_end done");
  assert.deepEqual(run.result.content, [{ type: "thinking", thinking: "R1R2", thinkingSignature: "reasoning" }, { type: "text", text: "no." }]);
  const { reasoning, ...usage } = run.result.usage;
  assertUsage(usage, { input: 5, output: 2 }, PRICE);
});

test("P-6.4.1 completions: fragments without index are matched by id", P, async () => {
  const ch = (delta, extra = {}) => data({ id: "c", model: "gpt-test", choices: [{ index: 0, delta, ...extra }] });
  const sse =
    ch({ tool_calls: [{ id: "A", function: { name: "a", arguments: '{"x"' } }] }) +
    ch({ tool_calls: [{ id: "B", function: { name: "b", arguments: "{}" } }] }) +
    ch({ tool_calls: [{ id: "A", function: { arguments: ":1}" } }] }) +
    ch({}, { finish_reason: "tool_calls" }) +
    data("[DONE]");
  const run = await stream("openai-completions", sse);
  assert.deepEqual(run.result.content, [
    { type: "toolCall", id: "A", name: "a", arguments: { x: 1 } },
    { type: "toolCall", id: "B", name: "b", arguments: {} },
  ]);
});

test("P-6.9 Google: a functionCall's thoughtSignature is kept on the tool call", P, async () => {
  const sse = data({ candidates: [{ content: { parts: [{ functionCall: { id: "fc-9", name: "f", args: { q: "x" } }, thoughtSignature: "SIGF" }] }, finishReason: "STOP" }] });
  const run = await stream("google-generative-ai", sse);
  assert.deepEqual(run.result.content, [{ type: "toolCall", id: "fc-9", name: "f", arguments: { q: "x" }, thoughtSignature: "SIGF" }]);
});

test("§6 twelve concurrent streams over the four APIs each get their own reply", P, async () => {
  const texts = Array.from({ length: 12 }, (_, i) => `answer number ${i} ${"z".repeat(i * 7)}`);
  const runs = await Promise.all(texts.map((t, i) => stream(APIS[i % 4], wire[APIS[i % 4]].reply({ text: t, calls: [{ id: `c${i}`, name: "n", args: { i } }] }))));
  runs.forEach((run, i) => {
    assert.equal(run.result.content[0].text, texts[i]);
    assert.deepEqual(run.result.content[1].arguments, { i });
    assert.equal(run.result.stopReason, "toolUse");
  });
});

test("P-6.4.2 escapes split across argument fragments (\\u surrogate pairs, a lone backslash) are held back and joined", P, async () => {
  const ch = (delta, extra = {}) => data({ id: "c", model: "gpt-test", choices: [{ index: 0, delta, ...extra }] });
  for (const frags of [['{"p":"\\ud83c', '\\udf0d x"}'], ['{"p":"\\ud8', '3c\\udf0d x"}'], ['{"p":"a\\', 'u00e9\\u0041"}']]) {
    const sse =
      ch({ tool_calls: [{ index: 0, id: "A", function: { name: "a", arguments: "" } }] }) +
      frags.map((f) => ch({ tool_calls: [{ index: 0, function: { arguments: f } }] })).join("") +
      ch({}, { finish_reason: "tool_calls" }) +
      data("[DONE]");
    const run = await stream("openai-completions", sse);
    const final = JSON.parse(frags.join(""));
    assert.deepEqual(run.result.content[0].arguments, final);
    // the live value never shows half an escape
    assertArgsGrow(run.argsLive, 0, final, { streamed: false });
  }
});
