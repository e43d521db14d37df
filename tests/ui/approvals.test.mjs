// agent-loop-wasm/ui and human-in-the-loop approvals (issues 30 and 31): issue 30's `tool_approval_request` event as
// the protocol's `tool-approval-request` chunk, the client's approval response (an `approval-responded` tool part in
// the posted messages) as a decision, and the run that carries the decision out continuing the same assistant
// message (`tool-output-available`, or `tool-output-denied` for a denied call). The event sequences here are the
// ones issue 30's Agent emits (tests/js/approvals.test.mjs); the Agent-driven test applies them with approve()/deny().
import { test } from "node:test";
import assert from "node:assert/strict";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { Agent, Chat, DefaultChatTransport, MODEL, call, clean, drain, labels, readJson, readMessage, reply, scriptedModel, serve, text, ui, validateChunks } from "./helpers.mjs";

const T = { timeout: 20_000 };

const assistantMessage = (content, stopReason) => ({ role: "assistant", content, api: "s", provider: "s", model: "s", usage: {}, stopReason, timestamp: 1 });
const toolResult = (id, name, textValue, isError = false) => ({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: textValue }], details: {}, isError, timestamp: 1 });
const ok = (s) => ({ content: [{ type: "text", text: s }], details: {} });

/** A parallel batch a, b, c where b waits for a person (issue 30: the event order of its parallel-batch test). */
function pausedRun(request) {
  const calls = [call("a", "work", { n: 1 }), call("b", "gate", { n: 2 }), call("c", "work", { n: 3 })];
  return [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", message: { role: "user", content: "go", timestamp: 1 } },
    { type: "message_end", message: { role: "user", content: "go", timestamp: 1 } },
    { type: "message_start", message: assistantMessage([], "pending") },
    { type: "message_end", message: assistantMessage(calls, "toolUse") },
    { type: "tool_execution_start", toolCallId: "a", toolName: "work", args: { n: 1 } },
    { type: "tool_execution_start", toolCallId: "b", toolName: "gate", args: { n: 2 } },
    { type: "tool_approval_request", toolCallId: "b", toolName: "gate", args: { n: 2 }, ...request },
    { type: "tool_execution_start", toolCallId: "c", toolName: "work", args: { n: 3 } },
    { type: "tool_execution_end", toolCallId: "a", toolName: "work", result: ok("work 1"), isError: false },
    { type: "tool_execution_end", toolCallId: "c", toolName: "work", result: ok("work 3"), isError: false },
    { type: "turn_end", message: assistantMessage(calls, "toolUse"), toolResults: [] },
    { type: "agent_end", messages: [] },
  ];
}

/** The run a decision continues: b runs (or is denied), the batch's results enter the transcript, the model answers. */
function decidedRun(approved) {
  const b = approved ? toolResult("b", "gate", "gate 2") : toolResult("b", "gate", 'Tool call "b" was denied: not today', true);
  const answer = assistantMessage([{ type: "text", text: "done" }], "stop");
  return [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "tool_execution_start", toolCallId: "b", toolName: "gate", args: { n: 2 } },
    { type: "tool_execution_end", toolCallId: "b", toolName: "gate", result: { content: b.content, details: {} }, isError: !approved },
    ...[toolResult("a", "work", "work 1"), b, toolResult("c", "work", "work 3")].flatMap((m) => [{ type: "message_start", message: m }, { type: "message_end", message: m }]),
    { type: "turn_end", message: undefined, toolResults: [] },
    { type: "turn_start" },
    { type: "message_start", message: assistantMessage([], "pending") },
    { type: "message_end", message: answer },
    { type: "turn_end", message: answer, toolResults: [] },
    { type: "agent_end", messages: [] },
  ];
}

async function* from(events) {
  yield* events;
}

/** The Chat's addToolApprovalResponse, done to a message by hand. */
function respond(message, id, approved, reason) {
  const copy = structuredClone(message);
  for (const p of copy.parts) {
    if (p.toolCallId === id) {
      p.state = "approval-responded";
      p.approval = { ...p.approval, approved, ...(reason === undefined ? {} : { reason }) };
    }
  }
  return copy;
}

test("tool_approval_request → tool-approval-request (approvalId = toolCallId; reason; data and expiresAt as approvalDescriptor); the paused run finishes with tool-calls", T, async () => {
  const chunks = await drain(ui.toUIMessageStream(from(pausedRun({ reason: "charges money", data: { cents: 500 }, expiresAt: 1767225600000 })), { messageId: "m1" }));
  assert.deepEqual(labels(chunks), [
    "start", "start-step",
    "tool-input-start:a", "tool-input-available:a", "tool-input-start:b", "tool-input-available:b", "tool-input-start:c", "tool-input-available:c",
    "tool-approval-request:b", "tool-output-available:a", "tool-output-available:c", "finish-step", "finish:tool-calls",
  ]);
  assert.deepEqual(chunks[8], {
    type: "tool-approval-request",
    approvalId: "b",
    toolCallId: "b",
    reason: "charges money",
    approvalDescriptor: { data: { cents: 500 }, expiresAt: 1767225600000 },
  });
  const message = clean(await readMessage(chunks));
  assert.deepEqual(message.parts[2], {
    type: "tool-gate",
    toolCallId: "b",
    state: "approval-requested",
    input: { n: 2 },
    approval: { id: "b", descriptor: { data: { cents: 500 }, expiresAt: 1767225600000 }, requestReason: "charges money" },
  });
  const plain = await drain(ui.toUIMessageStream(from(pausedRun({})), { messageId: "m1" }));
  assert.deepEqual(plain[8], { type: "tool-approval-request", approvalId: "b", toolCallId: "b" });
});

for (const approved of [true, false]) {
  test(`the decision's run continues the client's message: ${approved ? "tool-output-available for the approved call" : "tool-output-denied for the denied call"}, no part announced twice`, T, async () => {
    const first = await readMessage(await drain(ui.toUIMessageStream(from(pausedRun({})), { messageId: "m1" })));
    const posted = [{ id: "u1", role: "user", parts: [{ type: "text", text: "go" }] }, respond(first, "b", approved, approved ? undefined : "not today")];
    assert.deepEqual(ui.toolApprovalDecisions(posted), [approved ? { toolCallId: "b", approved: true } : { toolCallId: "b", approved: false, reason: "not today" }]);
    const chunks = await drain(ui.toUIMessageStream(from(decidedRun(approved)), { originalMessages: posted }));
    assert.deepEqual(labels(chunks), ["start", approved ? "tool-output-available:b" : "tool-output-denied:b", "start-step", "text-start", "text-delta:done", "text-end", "finish-step", "finish:stop"]);
    assert.deepEqual(chunks[0], { type: "start", messageId: "m1" });
    const final = clean(await readMessage(chunks, { message: posted[1] }));
    assert.deepEqual(final.parts.map((p) => (p.toolCallId ? `${p.type}:${p.state}` : p.type)), [
      "step-start", "tool-work:output-available", `tool-gate:${approved ? "output-available" : "output-denied"}`, "tool-work:output-available", "step-start", "text",
    ]);
    assert.deepEqual(final.parts[2].approval, approved ? { id: "b", approved: true } : { id: "b", approved: false, reason: "not today" });
  });
}

test("Chat: addToolApprovalResponse with sendAutomaticallyWhen posts the decision, and the server's continuation completes the same message", T, async (t) => {
  const posts = [];
  const server = await serve(async (req, res) => {
    const body = await readJson(req);
    posts.push(body);
    const decisions = ui.toolApprovalDecisions(body.messages);
    const events = decisions.length === 0 ? pausedRun({ reason: "charges money" }) : decidedRun(decisions[0].approved);
    await ui.pipeUIMessageStreamToResponse({ response: res, stream: ui.toUIMessageStream(from(events), { originalMessages: body.messages }) });
  });
  t.after(() => server.close());
  let n = 0;
  const chat = new Chat({
    id: "c",
    generateId: () => `id-${++n}`,
    transport: new DefaultChatTransport({ api: `${server.url}/api/chat` }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  await chat.sendMessage({ text: "go" });
  assert.equal(chat.messages[1].parts[2].state, "approval-requested");
  await chat.addToolApprovalResponse({ id: "b", approved: true });
  for (let i = 0; i < 400 && !(chat.status === "ready" && chat.messages[1].parts.some((p) => p.type === "text")); i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(posts.length, 2);
  assert.deepEqual(ui.toolApprovalDecisions(posts[1].messages), [{ toolCallId: "b", approved: true }]);
  assert.equal(chat.messages.length, 2, "the continuation went into the same assistant message");
  assert.deepEqual(clean(chat.messages[1].parts).map((p) => (p.toolCallId ? `${p.type}:${p.state}` : p.type)), [
    "step-start", "tool-work:output-available", "tool-gate:output-available", "tool-work:output-available", "step-start", "text",
  ]);
});

test("an Agent with approvals (issue 30): prompt pauses, the posted decision is applied with approve()/deny() and the run streams into the same message", T, async () => {
  const SCHEMA = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
  const tool = (name, extra = {}) => ({ name, label: name, description: name, parameters: SCHEMA, execute: async (_id, { n }) => ok(`${name} ${n}`), ...extra });
  for (const approved of [true, false]) {
    const model = scriptedModel([reply(call("a", "work", { n: 1 }), call("b", "gate", { n: 2 }), call("c", "work", { n: 3 })), reply(text("done"))]);
    const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: [tool("work"), tool("gate", { needsApproval: true })] } });
    const first = await drain(ui.toUIMessageStream(agent, { messageId: "m1", run: () => agent.prompt("go") }));
    await validateChunks(first);
    assert.deepEqual(labels(first).filter((l) => !l.startsWith("tool-input")), ["start", "start-step", "tool-approval-request:b", "tool-output-available:a", "tool-output-available:c", "finish-step", "finish:tool-calls"]);
    const message = await readMessage(first);
    const posted = [{ id: "u1", role: "user", parts: [{ type: "text", text: "go" }] }, respond(message, "b", approved, approved ? undefined : "no")];
    const decisions = ui.toolApprovalDecisions(posted);
    const apply = async () => {
      for (const d of decisions) await (d.approved ? agent.approve(d.toolCallId) : agent.deny(d.toolCallId, { reason: d.reason }));
    };
    const second = await drain(ui.toUIMessageStream(agent, { originalMessages: posted, run: apply }));
    await validateChunks(second);
    assert.deepEqual(labels(second), ["start", approved ? "tool-output-available:b" : "tool-output-denied:b", "start-step", "text-start", "text-delta:done", "text-end", "finish-step", "finish:stop"]);
    const final = clean(await readMessage(second, { message: posted[1] }));
    assert.equal(final.parts[2].state, approved ? "output-available" : "output-denied");
    assert.deepEqual(agent.state.messages.filter((m) => m.role === "toolResult").map((m) => m.content[0].text), ["work 1", approved ? "gate 2" : 'Tool call "b" was denied: no', "work 3"]);
  }
});
