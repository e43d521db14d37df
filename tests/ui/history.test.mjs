// agent-loop-wasm/ui, transcript → UIMessage[] (issue 40): `toUIMessages(agent.state.messages)` is the history a
// reloaded `useChat` page starts from, so it must equal what the AI SDK's own client (the framework-free Chat over
// DefaultChatTransport) ends with after watching the same runs live: text and reasoning with signatures, parallel tools
// with an error, a second step and a second run, a model error, an image prompt, steering, approvals (waiting,
// approved, denied), dynamic tools with a custom output. The server keeps one Agent per chat and records each run's
// start and message id (`runs`). Also: `ai`'s validateUIMessages accepts every history, convertToAgentMessages gives the
// transcript back (modulo the fields the UI does not hold), a page reloaded mid-answer resumes onto the same message,
// the default ids and grouping, and bad input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lastAssistantMessageIsCompleteWithApprovalResponses, validateUIMessages } from "ai";
import { AI_VERSION, Agent, Chat, DefaultChatTransport, MODEL, call, clean, pieces, readJson, reply, scriptedModel, serve, sleep, text, thinking, tools, ui } from "./helpers.mjs";

const T = { timeout: 60_000 };
const SCHEMA = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
const ok = (s, details = {}) => ({ content: [{ type: "text", text: s }], details });

/** `work` runs at once, `gate` waits for a person (issue 30), `slow` takes a while; `ran` lists the calls executed. */
function approvalTools(ran) {
  const tool = (name, extra = {}) => ({
    name,
    label: name,
    description: name,
    parameters: SCHEMA,
    execute: async (id, { n }) => {
      ran.push(id);
      if (name === "slow") await sleep(40);
      return ok(`${name} ${n}`, { n });
    },
    ...extra,
  });
  return [tool("work"), tool("gate", { needsApproval: true }), tool("slow")];
}

/**
 * POST /api/chat (useChat's request) and GET /api/chat/:id/stream (its resume). One Agent per chat id; a user message
 * is prompted, approval responses are applied with approve()/deny(). Each run is recorded as `{ start, messageId }`:
 * `start` is agent.state.messages.length before the run, `messageId` the id its answer streams with (the continued
 * message's for decisions).
 */
async function chatServer(replies, { toolList = () => [], streamOptions = {}, onAgent, pieceDelayMs = 0 } = {}) {
  const model = scriptedModel(replies, { pieceDelayMs });
  const chats = new Map();
  let answers = 0;
  const server = await serve(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const resume = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
    if (req.method === "GET" && resume) {
      const chat = chats.get(decodeURIComponent(resume[1]));
      const stream = chat ? ui.resumeUIMessageStream(chat.agent, { messageId: chat.runs.at(-1).messageId, ...streamOptions }) : null;
      if (!stream) {
        res.writeHead(204).end();
        return;
      }
      await ui.pipeUIMessageStreamToResponse({ response: res, stream });
      return;
    }
    const body = await readJson(req);
    let chat = chats.get(body.id);
    if (!chat) {
      const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: toolList() } });
      chat = { agent, runs: [] };
      chats.set(body.id, chat);
      onAgent?.(agent);
    }
    const { agent } = chat;
    const last = body.messages.at(-1);
    const start = agent.state.messages.length;
    let run;
    let messageId;
    if (last.role === "user") {
      const [prompt] = ui.convertToAgentMessages([last], { model: MODEL });
      messageId = `answer-${++answers}`;
      run = () => agent.prompt(prompt);
    } else {
      const decisions = ui.toolApprovalDecisions(body.messages);
      messageId = last.id;
      run = async () => {
        for (const d of decisions) await (d.approved ? agent.approve(d.toolCallId) : agent.deny(d.toolCallId, { reason: d.reason }));
      };
    }
    chat.runs.push({ start, messageId });
    await ui.pipeUIMessageStreamToResponse({ response: res, stream: ui.toUIMessageStream(agent, { messageId, originalMessages: body.messages, run, ...streamOptions }) });
  });
  return { ...server, chats, model };
}

let chatCount = 0;
function newChat(url, init = {}) {
  let n = 0;
  const id = `chat-${++chatCount}`;
  return new Chat({ id, generateId: () => `${id}-u${++n}`, transport: new DefaultChatTransport({ api: `${url}/api/chat` }), ...init });
}

const settle = async (agent) => {
  for (let i = 0; i < 2000 && agent.state.isStreaming; i++) await sleep(5);
};

/** The history for a chat: toUIMessages with the server's runs, the client's user ids (which only the client knows). */
function history(server, chat, options = {}) {
  const { agent, runs } = server.chats.get(chat.id);
  const userIds = chat.messages.filter((m) => m.role === "user").map((m) => m.id);
  let k = 0;
  const messageId = ({ role }) => (role === "user" ? userIds[k++] : assert.fail("an answer without a recorded run"));
  return ui.toUIMessages(agent.state.messages, { runs, messageId, ...options });
}

/** The history equals what the live Chat ends with; ai accepts it; it converts back to the transcript. */
async function assertSameAsLive(server, chat, options = {}) {
  const got = history(server, chat, options);
  assert.deepEqual(got, clean(chat.messages));
  assert.deepEqual(await validateUIMessages({ messages: got }), got);
  return got;
}

/**
 * The fields of an agent message the UI does not hold (see toUIMessages in ui.d.ts): dropped before comparing a
 * transcript with what convertToAgentMessages rebuilds from the history.
 */
function comparable(messages) {
  return clean(
    messages
      .filter((m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult")
      .map((m) => {
        if (m.role === "user") return { role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content };
        if (m.role === "assistant") return { role: "assistant", content: m.content, stopReason: m.content.some((b) => b.type === "toolCall") ? "toolUse" : "stop" };
        const { timestamp, details, durationMs, ...rest } = m;
        return m.isError ? { ...rest, content: [{ type: "text", text: m.content.map((b) => b.text).join("\n") }] } : { ...rest, details };
      }),
  );
}

function assertConvertsBack(transcript, uiMessages) {
  assert.deepEqual(comparable(ui.convertToAgentMessages(uiMessages, { model: MODEL })), comparable(transcript));
}

test(`U-12.4 (ai ${AI_VERSION}): reasoning and text with signatures, parallel tools with an error, a second step, a second run, a model error: the history equals the live Chat's messages`, T, async (t) => {
  const server = await chatServer(
    [
      reply(
        pieces(thinking("Two lookups", "sig-1"), "Two", " lookups"),
        pieces({ type: "text", text: "Checking.", textSignature: "ts-1" }, "Check", "ing."),
        call("a", "slow", { n: 1 }),
        call("b", "work", { n: 2 }),
        call("c", "broken", { n: 3 }),
      ),
      reply({ type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true }, pieces(text("Slow 1, work 2; broken failed."), "Slow 1,", " work 2;", " broken failed.")),
      reply(pieces(text("Still here."), "Still", " here.")),
      { blocks: [pieces(text("Half an"), "Half", " an")], fail: "Provider returned 500: overloaded" },
    ],
    {
      toolList: () => [
        ...approvalTools([]).filter((x) => x.name !== "gate"),
        { name: "broken", label: "broken", description: "broken", parameters: SCHEMA, execute: async () => { throw new Error("disk on fire"); } },
      ],
    },
  );
  t.after(() => server.close());
  const chat = newChat(server.url, { onError: () => {} });
  await chat.sendMessage({ text: "Look up both" });
  const first = await assertSameAsLive(server, chat);
  assert.deepEqual(first[1].parts.map((p) => (p.toolCallId ? `${p.type}:${p.state}` : p.type)), [
    "step-start", "reasoning", "text", "tool-slow:output-available", "tool-work:output-available", "tool-broken:output-error", "step-start", "reasoning", "text",
  ]);
  assert.deepEqual(first[1].parts[2], { type: "text", text: "Checking.", providerMetadata: { agentLoop: { textSignature: "ts-1" } }, state: "done" });
  assert.deepEqual(first[1].parts[7], { type: "reasoning", id: "2-0", text: "", providerMetadata: { agentLoop: { thinkingSignature: "opaque", redacted: true } }, state: "done" });

  await chat.sendMessage({ text: "Still there?" });
  await chat.sendMessage({ text: "And now?" });
  assert.equal(chat.status, "error");
  const all = await assertSameAsLive(server, chat);
  assert.deepEqual(all.map((m) => (m.role === "user" ? `user:${m.parts[0].text}` : `assistant:${m.id}`)), [
    "user:Look up both", "assistant:answer-1", "user:Still there?", "assistant:answer-2", "user:And now?", "assistant:answer-3",
  ]);
  assert.deepEqual(all[5].parts, [{ type: "step-start" }, { type: "text", text: "Half an", state: "done" }]);
  assertConvertsBack(server.chats.get(chat.id).agent.state.messages, all);
});

test("U-12.4: an image prompt comes back as its file part (a data: URL) before the text, as the client sent it", T, async (t) => {
  const server = await chatServer([reply(text("A small square."))]);
  t.after(() => server.close());
  const chat = newChat(server.url);
  const url = "data:image/png;base64,iVBORw0KGgo=";
  await chat.sendMessage({ text: "What is this?", files: [{ type: "file", mediaType: "image/png", url }] });
  const got = await assertSameAsLive(server, chat);
  assert.deepEqual(got[0].parts, [{ type: "file", mediaType: "image/png", url }, { type: "text", text: "What is this?" }]);
  assertConvertsBack(server.chats.get(chat.id).agent.state.messages, got);
});

test("U-12.4: steering during a run is a steering-message part of the answer, between the steps, with the stream's id", T, async (t) => {
  const server = await chatServer([reply(call("a", "slow", { n: 1 })), reply(text("Metric it is."))], {
    toolList: () => approvalTools([]),
    onAgent: (agent) => {
      let steered = false;
      agent.subscribe((e) => {
        if (e.type === "tool_execution_start" && !steered) {
          steered = true;
          agent.steer({ role: "user", content: [{ type: "text", text: "use metric" }], timestamp: Date.now() });
        }
      });
    },
  });
  t.after(() => server.close());
  const chat = newChat(server.url);
  await chat.sendMessage({ text: "How far?" });
  const got = await assertSameAsLive(server, chat);
  assert.deepEqual(got[1].parts.map((p) => p.type), ["step-start", "tool-slow", "steering-message", "step-start", "text"]);
  assert.deepEqual(got[1].parts[2], { type: "steering-message", id: "answer-1-steering-1", parts: [{ type: "text", text: "use metric" }] });
  assertConvertsBack(server.chats.get(chat.id).agent.state.messages, got);
  // Without runs, the rule (a user message right after tool results is steering) gives the same grouping.
  const { agent } = server.chats.get(chat.id);
  assert.deepEqual(ui.toUIMessages(agent.state.messages).map((m) => m.parts.map((p) => p.type).join()), ["text", "step-start,tool-slow,steering-message,step-start,text"]);
});

for (const approved of [true, false]) {
  test(`U-12.4: approvals: the waiting call shows its request (pendingApprovals, the batch's finished calls from approvals.completedTools); ${approved ? "approved: it runs once" : "denied: it never runs, output-denied with the reason"}; each history equals the live Chat's`, T, async (t) => {
    const ran = [];
    const server = await chatServer(
      [reply(pieces(thinking("Needs a person", "s"), "Needs a person"), call("a", "work", { n: 1 }), call("b", "gate", { n: 2 }), call("c", "work", { n: 3 })), reply(pieces(thinking("Decided"), "Decided"), text(approved ? "Gate 2 done." : "Not gated."))],
      { toolList: () => approvalTools(ran) },
    );
    t.after(() => server.close());
    const chat = newChat(server.url, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: "Do all three" });
    const { agent } = server.chats.get(chat.id);
    assert.deepEqual(ran, ["a", "c"]);
    const waiting = await assertSameAsLive(server, chat, { pendingApprovals: agent.state.pendingApprovals, approvals: agent.snapshot().approvals });
    assert.deepEqual(waiting[1].parts[3], { type: "tool-gate", toolCallId: "b", state: "approval-requested", input: { n: 2 }, approval: { id: "b" } });
    // pendingApprovals alone: the request shows; the batch's finished calls, whose results are not in the transcript yet, wait.
    const bare = ui.toUIMessages(agent.state.messages, { pendingApprovals: agent.state.pendingApprovals });
    assert.deepEqual(bare[1].parts.map((p) => p.state).filter(Boolean), ["done", "input-available", "approval-requested", "input-available"]);

    await chat.addToolApprovalResponse({ id: "b", approved, ...(approved ? {} : { reason: "not today" }) });
    for (let i = 0; i < 1000 && !(chat.status === "ready" && chat.messages[1].parts.some((p) => p.type === "text")); i++) await sleep(5);
    await settle(agent);
    assert.deepEqual(ran, approved ? ["a", "c", "b"] : ["a", "c"]);
    assert.equal(chat.messages.length, 2, "the decision's run continued the same message");
    // The decision is only on the client (and in the posted messages): the app passes it for an exact history.
    const decisions = [approved ? { toolCallId: "b", approved: true } : { toolCallId: "b", approved: false, reason: "not today" }];
    const done = await assertSameAsLive(server, chat, { approvals: { decisions } });
    assert.deepEqual(done[1].parts.map((p) => (p.toolCallId ? `${p.type}:${p.state}` : p.type)), [
      "step-start", "reasoning", "tool-work:output-available", `tool-gate:${approved ? "output-available" : "output-denied"}`, "tool-work:output-available", "step-start", "reasoning", "text",
    ]);
    // The continuation's steps count from 1 again, as its response did.
    assert.equal(done[1].parts[6].id, "1-0");
    // Without the decisions: a denial still shows as output-denied with its reason (from the result's text); an
    // approved call shows no approval.
    const alone = ui.toUIMessages(agent.state.messages, { runs: server.chats.get(chat.id).runs })[1].parts[3];
    assert.deepEqual(alone.approval, approved ? undefined : { id: "b", approved: false, reason: "not today" });
    assertConvertsBack(agent.state.messages, done);
  });
}

test("U-12.4: dynamicTools and a custom toolOutput give the parts the stream gave with the same options", T, async (t) => {
  const streamOptions = { dynamicTools: true, toolOutput: (result, { toolName }) => `${toolName}: ${result.content[0].text}` };
  const server = await chatServer([reply(call("a", "work", { n: 7 })), reply(text("Seven."))], { toolList: () => approvalTools([]), streamOptions });
  t.after(() => server.close());
  const chat = newChat(server.url);
  await chat.sendMessage({ text: "Seven" });
  const got = await assertSameAsLive(server, chat, streamOptions);
  assert.deepEqual(got[1].parts[1], { type: "dynamic-tool", toolName: "work", toolCallId: "a", state: "output-available", input: { n: 7 }, output: "work: work 7" });
});

test("U-12.4: a page reloaded mid-answer starts from the history and resumes onto the same message (the run's id), ending with the live message", T, async (t) => {
  const server = await chatServer(
    [reply(pieces(text("Looking."), "Look", "ing."), call("a", "slow", { n: 1 })), reply(pieces(text("Slow 1 it is, after a long wait."), "Slow", " 1", " it", " is,", " after", " a", " long", " wait."))],
    { toolList: () => approvalTools([]), pieceDelayMs: 15 },
  );
  t.after(() => server.close());
  const live = newChat(server.url);
  const sending = live.sendMessage({ text: "Slow one" });
  const chatState = () => server.chats.get(live.id);
  // Reload once the first step is in the transcript and the second is streaming.
  while (!chatState()?.agent.state.messages.some((m) => m.role === "toolResult") || !chatState().agent.state.streamingMessage) await sleep(2);
  const { agent, runs } = chatState();
  const reloaded = newChat(server.url, { id: live.id });
  reloaded.messages = ui.toUIMessages(agent.state.messages, { runs });
  // user-1: index 0 of the transcript holds the tool declarations (a system message, not shown).
  assert.deepEqual(reloaded.messages.map((m) => `${m.role}:${m.id}`), ["user:user-1", "assistant:answer-1"]);
  assert.deepEqual(reloaded.messages[1].parts.map((p) => p.type), ["step-start", "text", "tool-slow"]);
  await reloaded.resumeStream();
  await sending;
  await settle(agent);
  assert.equal(reloaded.messages.length, 2, `the resumed answer replaced the reloaded one: ${reloaded.messages.map((m) => m.id)}`);
  assert.deepEqual(clean(reloaded.messages[1]), clean(live.messages[1]));
  assert.deepEqual(ui.toUIMessages(agent.state.messages, { runs })[1], clean(live.messages[1]));
});

// Hand-made transcripts: the grouping and id rules, the options, bad input.

const user = (s, timestamp = 1) => ({ role: "user", content: s, timestamp });
const assistant = (content, stopReason = "stop") => ({ role: "assistant", content, api: "s", provider: "s", model: "s", usage: {}, stopReason, timestamp: 1 });
const result = (id, name, s, isError = false) => ({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: s }], details: {}, isError, timestamp: 1 });
const system = { role: "system", content: "", toolsAdded: [], timestamp: 0 };

test("U-12.4 default ids and grouping: user-<index>, assistant-<where its exchange began> (agent.state.messages.length before the run); tool declarations and custom roles are skipped; a prompt after tool results needs runs", T, () => {
  const transcript = [
    system,
    user("one"),
    assistant([call("t1", "work", { n: 1 })], "toolUse"),
    result("t1", "work", "w1"),
    assistant([text("first")]),
    { role: "bashExecution", command: "ls", timestamp: 1 },
    system,
    user("two"),
    assistant([text("second")]),
    assistant([text("continued")]), // agent.continue(): no user message between
  ];
  const got = ui.toUIMessages(transcript);
  assert.deepEqual(got.map((m) => `${m.role}:${m.id}:${m.parts.map((p) => p.type).join("+")}`), [
    "user:user-1:text",
    "assistant:assistant-0:step-start+tool-work+step-start+text",
    "user:user-7:text",
    "assistant:assistant-5:step-start+text+step-start+text",
  ]);
  // With runs: the continue() run is its own answer, and a prompt after a run that ended on tool results is a prompt.
  const ended = [user("go"), assistant([call("t1", "work", {})], "toolUse"), result("t1", "work", "w"), user("next"), assistant([text("ok")])];
  assert.deepEqual(ui.toUIMessages(ended).map((m) => m.role), ["user", "assistant"], "without runs: steering");
  const withRuns = ui.toUIMessages(ended, { runs: [{ start: 0, messageId: "A" }, { start: 3, messageId: "B" }] });
  assert.deepEqual(withRuns.map((m) => `${m.role}:${m.id}`), ["user:user-0", "assistant:A", "user:user-3", "assistant:B"]);
  const split = ui.toUIMessages(transcript, { runs: [{ start: 0, messageId: "A" }, { start: 5, messageId: "B" }, { start: 9, messageId: "C" }] });
  assert.deepEqual(split.map((m) => `${m.role}:${m.id}`), ["user:user-1", "assistant:A", "user:user-7", "assistant:B", "assistant:C"]);
  // A follow-up inside a recorded run is steering; messageId names what runs do not.
  const followUp = ui.toUIMessages([user("a"), assistant([text("b")]), user("c"), assistant([text("d")])], { runs: [{ start: 0, messageId: "R" }], messageId: ({ role, index, message }) => `${role}/${index}/${message.role}` });
  assert.deepEqual(followUp.map((m) => `${m.id}:${m.parts.map((p) => p.type).join("+")}`), ["user/0/user:text", "R:step-start+text+steering-message+step-start+text"]);
});

test("U-12.4 tool states from the options: completedTools, a decision not yet run (approval-responded), the request's reason and data, a denial without a reason, thoughtSignature, sendReasoning: false", T, () => {
  const transcript = [
    user("go"),
    assistant([thinking("hmm", "s"), { ...call("a", "work", { n: 1 }), thoughtSignature: "th" }, call("b", "gate", { n: 2 }), call("c", "gate", { n: 3 }), call("d", "gate", { n: 4 })], "toolUse"),
  ];
  const requests = [
    { toolCallId: "b", toolName: "gate", args: { n: 2 }, reason: "charges money", data: { cents: 500 }, expiresAt: 1767225600000 },
    { toolCallId: "c", toolName: "gate", args: { n: 3 } },
    { toolCallId: "d", toolName: "gate", args: { n: 4 } },
  ];
  const got = ui.toUIMessages(transcript, {
    sendReasoning: false,
    approvals: { requests, completedTools: [{ toolCallId: "a", toolName: "work", result: ok("w1"), isError: false }], decisions: [{ toolCallId: "c", approved: false, reason: "no" }] },
    pendingApprovals: [requests[0], requests[2]],
  });
  assert.deepEqual(got[1].parts, [
    { type: "step-start" },
    { type: "tool-work", toolCallId: "a", state: "output-available", input: { n: 1 }, output: { content: [{ type: "text", text: "w1" }], details: {} }, callProviderMetadata: { agentLoop: { thoughtSignature: "th" } } },
    { type: "tool-gate", toolCallId: "b", state: "approval-requested", input: { n: 2 }, approval: { id: "b", descriptor: { data: { cents: 500 }, expiresAt: 1767225600000 }, requestReason: "charges money" } },
    { type: "tool-gate", toolCallId: "c", state: "approval-responded", input: { n: 3 }, approval: { id: "c", approved: false, reason: "no" } },
    { type: "tool-gate", toolCallId: "d", state: "approval-requested", input: { n: 4 }, approval: { id: "d" } },
  ]);
  const denied = ui.toUIMessages([...transcript, result("b", "gate", 'Tool call "b" was denied', true), result("a", "work", "w1"), result("c", "gate", 'Tool call "c" was denied: no', true), result("d", "gate", "gate crashed", true)]);
  assert.deepEqual(denied[1].parts.slice(2).map((p) => [p.toolCallId, p.state, p.approval ?? p.errorText ?? p.output]), [
    ["a", "output-available", { content: [{ type: "text", text: "w1" }], details: {} }],
    ["b", "output-denied", { id: "b", approved: false }],
    ["c", "output-denied", { id: "c", approved: false, reason: "no" }],
    ["d", "output-error", "gate crashed"],
  ]);
});

test("U-12.4 bad input: TypeErrors naming the argument", T, () => {
  const cases = [
    [() => ui.toUIMessages({ messages: [] }), "toUIMessages: agentMessages must be an array of agent messages (agent.state.messages), got object"],
    [() => ui.toUIMessages([null]), "toUIMessages: agentMessages[0] must be an agent message object, got null"],
    [() => ui.toUIMessages([], "x"), "toUIMessages: options must be an object, got string"],
    [() => ui.toUIMessages([], { runs: {} }), "toUIMessages: options.runs must be an array, got object"],
    [() => ui.toUIMessages([], { runs: [{ start: -1, messageId: "m" }] }), 'toUIMessages: options.runs[0] must be { start, messageId } (start: an index of agentMessages, messageId: a non-empty string), got {"start":-1,"messageId":"m"}'],
    [() => ui.toUIMessages([], { pendingApprovals: [{ id: "x" }] }), "toUIMessages: options.pendingApprovals[0] must be an object with a string toolCallId, got object"],
    [() => ui.toUIMessages([], { approvals: { decisions: "b" } }), "toUIMessages: options.approvals.decisions must be an array, got string"],
    [() => ui.toUIMessages([user("hi")], { messageId: () => 7 }), "toUIMessages: options.messageId must return a non-empty string, got number for the user message at 0"],
    [() => ui.toUIMessages([], { toolOutput: "json" }), "toUIMessages: options.toolOutput must be a function, got string"],
  ];
  for (const [fn, message] of cases) assert.throws(fn, { name: "TypeError", message });
});
