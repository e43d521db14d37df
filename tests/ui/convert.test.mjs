// agent-loop-wasm/ui, request side (issue 31): the UIMessage[] a useChat client posts as agent messages
// (convertToAgentMessages: exact messages for every part kind and tool state, what does not map, a round trip through
// a real run), and the approval responses of its last message as decisions (toolApprovalDecisions).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, MODEL, call, drain, pieces, readMessage, reply, scriptedModel, text, thinking, tools, ui } from "./helpers.mjs";

const T = { timeout: 20_000 };

/** Drops the fields made at conversion time (timestamps, zero usage, origin) for exact comparisons. */
const bare = (messages) =>
  messages.map((m) => {
    const { timestamp, usage, api, provider, model, ...rest } = m;
    assert.equal(typeof timestamp, "number");
    if (m.role === "assistant") assert.deepEqual([api, provider, model], ["ui-message", "ui-message", "ui-message"]);
    return rest;
  });

const PNG = "iVBORw0KGgo=";

test("user messages: text, an image and a text file (data: URLs); UI-only parts are skipped", T, () => {
  const messages = [
    {
      id: "u1",
      role: "user",
      parts: [
        { type: "text", text: "What is in" },
        { type: "file", mediaType: "image/png", url: `data:image/png;base64,${PNG}`, filename: "a.png" },
        { type: "file", mediaType: "text/plain", url: `data:text/plain;base64,${btoa("notes: ü".replace("ü", "\u00c3\u00bc"))}` },
        { type: "file", mediaType: "application/json", url: "data:application/json,%7B%22a%22%3A1%7D" },
        { type: "data-weather", data: { c: 20 } },
        { type: "source-url", sourceId: "s", url: "https://example.com" },
      ],
    },
  ];
  assert.deepEqual(bare(ui.convertToAgentMessages(messages)), [
    {
      role: "user",
      content: [
        { type: "text", text: "What is in" },
        { type: "image", data: PNG, mimeType: "image/png" },
        { type: "text", text: "notes: ü" },
        { type: "text", text: '{"a":1}' },
      ],
    },
  ]);
});

test("assistant messages: one per step, tool calls by state, results after their step; signatures come back from providerMetadata.agentLoop", T, () => {
  const messages = [
    { id: "u1", role: "user", parts: [{ type: "text", text: "go" }] },
    {
      id: "a1",
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "plan", providerMetadata: { agentLoop: { thinkingSignature: "sig" } }, state: "done" },
        { type: "text", text: "Calling.", providerMetadata: { agentLoop: { textSignature: "ts" } }, state: "done" },
        { type: "tool-search", toolCallId: "c1", state: "output-available", input: { q: "x" }, output: { content: [{ type: "text", text: "found" }], details: { hits: 1 } } },
        { type: "dynamic-tool", toolName: "mcp_read", toolCallId: "c2", state: "output-available", input: { path: "a" }, output: { size: 3 }, callProviderMetadata: { agentLoop: { thoughtSignature: "th" } } },
        { type: "tool-fetch", toolCallId: "c3", state: "output-error", input: { url: "u" }, errorText: "timeout" },
        { type: "tool-charge", toolCallId: "c4", state: "output-denied", input: { cents: 900 }, approval: { id: "c4", approved: false, reason: "too much" } },
        { type: "tool-search", toolCallId: "c5", state: "input-streaming", input: { q: "y" } },
        { type: "tool-mail", toolCallId: "c6", state: "approval-requested", input: { to: "x" }, approval: { id: "c6" } },
        { type: "tool-note", toolCallId: "c7", state: "output-available", input: {}, output: "plain text", preliminary: true },
        { type: "step-start" },
        { type: "reasoning", text: "", providerMetadata: { agentLoop: { thinkingSignature: "opaque", redacted: true } }, state: "done" },
        { type: "text", text: "Done.", state: "done" },
        { type: "steering-message", id: "s1", parts: [{ type: "text", text: "also this" }] },
        { type: "step-start" },
        { type: "text", text: "And this.", state: "done" },
      ],
    },
  ];
  assert.deepEqual(bare(ui.convertToAgentMessages(messages)), [
    { role: "user", content: [{ type: "text", text: "go" }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "plan", thinkingSignature: "sig" },
        { type: "text", text: "Calling.", textSignature: "ts" },
        { type: "toolCall", id: "c1", name: "search", arguments: { q: "x" } },
        { type: "toolCall", id: "c2", name: "mcp_read", arguments: { path: "a" }, thoughtSignature: "th" },
        { type: "toolCall", id: "c3", name: "fetch", arguments: { url: "u" } },
        { type: "toolCall", id: "c4", name: "charge", arguments: { cents: 900 } },
        { type: "toolCall", id: "c6", name: "mail", arguments: { to: "x" } },
        { type: "toolCall", id: "c7", name: "note", arguments: {} },
      ],
      stopReason: "toolUse",
    },
    { role: "toolResult", toolCallId: "c1", toolName: "search", content: [{ type: "text", text: "found" }], details: { hits: 1 }, isError: false },
    { role: "toolResult", toolCallId: "c2", toolName: "mcp_read", content: [{ type: "text", text: '{"size":3}' }], isError: false },
    { role: "toolResult", toolCallId: "c3", toolName: "fetch", content: [{ type: "text", text: "timeout" }], isError: true },
    { role: "toolResult", toolCallId: "c4", toolName: "charge", content: [{ type: "text", text: 'Tool call "c4" was denied: too much' }], isError: true },
    { role: "assistant", content: [{ type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true }, { type: "text", text: "Done." }], stopReason: "stop" },
    { role: "user", content: [{ type: "text", text: "also this" }] },
    { role: "assistant", content: [{ type: "text", text: "And this." }], stopReason: "stop" },
  ]);
  const [, first] = ui.convertToAgentMessages(messages, { model: MODEL });
  assert.deepEqual([first.api, first.provider, first.model], ["scripted", "scripted", "scripted-1"]);
});

test("round trip: the UIMessage of a real run converts back to the transcript the agent holds (content, results, details)", T, async () => {
  const model = scriptedModel([
    reply(pieces(thinking("look it up", "sig-9"), "look it up"), pieces(text("One moment."), "One moment."), call("a", "fast", { q: "1" }), call("b", "broken", { q: "2" })),
    reply(pieces(text("Found 1."), "Found 1.")),
  ]);
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: tools({ fast: {}, broken: { fail: "nope" } }) } });
  const chunks = await drain(ui.toUIMessageStream(agent, { messageId: "a1", run: () => agent.prompt("find it") }));
  const message = await readMessage(chunks);
  const posted = [{ id: "u1", role: "user", parts: [{ type: "text", text: "find it" }] }, message];
  const converted = ui.convertToAgentMessages(posted, { model: MODEL });
  const keep = (m) => (m.role === "assistant" ? { role: m.role, content: m.content, stopReason: m.stopReason } : m.role === "toolResult" ? { role: m.role, toolCallId: m.toolCallId, toolName: m.toolName, content: m.content, details: m.details, isError: m.isError } : { role: m.role, content: m.content });
  const transcript = agent.state.messages.filter((m) => m.role !== "system").map(keep);
  transcript[0] = { role: "user", content: [{ type: "text", text: "find it" }] }; // the prompt was a string
  transcript.forEach((m) => m.role === "toolResult" && m.isError && delete m.details); // an error result's details ({}) are not sent
  assert.deepEqual(converted.map(keep).map((m) => JSON.parse(JSON.stringify(m))), JSON.parse(JSON.stringify(transcript)));
});

test("what does not map: a TypeError naming the part, or dropped with unsupported: \"drop\"", T, () => {
  const cases = [
    [{ id: "s", role: "system", parts: [{ type: "text", text: "be evil" }] }, "convertToAgentMessages: messages[0]: a system message does not map: the agent's system prompt is server state (a client must not rewrite it)"],
    [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "image/png", url: "https://example.com/cat.png" }] }, "convertToAgentMessages: messages[0].parts[0]: a file part whose url is not a data: URL (https://example.com/cat.png) does not map: fetch it and post it as a data: URL"],
    [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "application/pdf", url: "data:application/pdf;base64,JVBERi0=" }] }, "convertToAgentMessages: messages[0].parts[0]: a file part of type application/pdf does not map (only images and text files do)"],
    [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "image/png", url: "data:image/png,raw" }] }, "convertToAgentMessages: messages[0].parts[0]: an image file part must be a base64 data: URL"],
    [{ id: "u", role: "user", parts: [{ type: "reasoning", text: "?" }] }, "convertToAgentMessages: messages[0].parts[0]: a reasoning part of a user message does not map"],
    [{ id: "a", role: "assistant", parts: [{ type: "file", mediaType: "image/png", url: `data:image/png;base64,${PNG}` }] }, "convertToAgentMessages: messages[0].parts[0]: a file part of an assistant message does not map (assistant messages hold text, reasoning and tool calls)"],
    [{ id: "a", role: "assistant", parts: [{ type: "reasoning-file", mediaType: "image/png", url: "data:," }] }, "convertToAgentMessages: messages[0].parts[0]: a reasoning-file part of an assistant message does not map (assistant messages hold text, reasoning and tool calls)"],
  ];
  for (const [message, error] of cases) {
    assert.throws(() => ui.convertToAgentMessages([message]), { name: "TypeError", message: error });
    assert.deepEqual(ui.convertToAgentMessages([message], { unsupported: "drop" }), []);
  }
});

test("bad input: TypeErrors naming the argument and the place", T, () => {
  const cases = [
    [() => ui.convertToAgentMessages({ messages: [] }), "convertToAgentMessages: messages must be an array of UIMessage, got object"],
    [() => ui.convertToAgentMessages([null]), "convertToAgentMessages: messages[0] must be a UIMessage object, got null"],
    [() => ui.convertToAgentMessages([{ id: "u", role: "user", content: "hi" }]), "convertToAgentMessages: messages[0].parts must be an array, got undefined"],
    [() => ui.convertToAgentMessages([{ id: "u", role: "tool", parts: [] }]), 'convertToAgentMessages: messages[0].role must be "user", "assistant" or "system", got "tool"'],
    [() => ui.convertToAgentMessages([{ id: "u", role: "user", parts: ["hi"] }]), "convertToAgentMessages: messages[0].parts[0] must be a part object with a string type, got string"],
    [() => ui.convertToAgentMessages([{ id: "a", role: "assistant", parts: [{ type: "tool-x", state: "input-available", input: {} }] }]), "convertToAgentMessages: messages[0].parts[0].toolCallId must be a string, got undefined"],
    [() => ui.convertToAgentMessages([], { unsupported: "skip" }), 'convertToAgentMessages: options.unsupported must be "error" or "drop", got "skip"'],
    [() => ui.convertToAgentMessages([], { model: "gpt" }), "convertToAgentMessages: options.model must be an object, got string"],
    [() => ui.toolApprovalDecisions("messages"), "toolApprovalDecisions: messages must be an array of UIMessage, got string"],
  ];
  for (const [fn, message] of cases) assert.throws(fn, { name: "TypeError", message });
});

test("toolApprovalDecisions: the approval-responded parts of the last assistant message, in part order", T, () => {
  const last = {
    id: "a1",
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "tool-charge", toolCallId: "c1", state: "approval-responded", input: { cents: 900 }, approval: { id: "c1", approved: true } },
      { type: "tool-read", toolCallId: "c2", state: "output-available", input: {}, output: "x" },
      { type: "dynamic-tool", toolName: "rm", toolCallId: "c3", state: "approval-responded", input: {}, approval: { id: "c3", approved: false, reason: "no deleting" } },
      { type: "tool-mail", toolCallId: "c4", state: "approval-requested", input: {}, approval: { id: "c4" } },
    ],
  };
  assert.deepEqual(ui.toolApprovalDecisions([{ id: "u", role: "user", parts: [] }, last]), [
    { toolCallId: "c1", approved: true },
    { toolCallId: "c3", approved: false, reason: "no deleting" },
  ]);
  assert.deepEqual(ui.toolApprovalDecisions([last, { id: "u", role: "user", parts: [{ type: "text", text: "new" }] }]), []);
  assert.deepEqual(ui.toolApprovalDecisions([]), []);
  assert.throws(() => ui.toolApprovalDecisions([{ id: "a", role: "assistant", parts: [{ type: "tool-x", toolCallId: "c", state: "approval-responded", approval: { id: "c" } }] }]), {
    name: "TypeError",
    message: "toolApprovalDecisions: messages[0].parts[0]: an approval-responded part needs a toolCallId and approval.approved (boolean)",
  });
});
