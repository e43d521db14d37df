// A stateless useChat route (U-12.5, issue 42): every request builds a fresh Agent and hands it the posted UIMessage[]
// with createAgentUIStream; nothing is kept between requests but the chat's transcript, stored after each request. Driven by the ai package's own Chat with DefaultChatTransport over loopback HTTP: a prompt that
// pauses for approval, the approval (the call runs once, in the second request) and a denial (it never runs); a
// reloaded page (a new Chat from the stored transcript, through toUIMessages) shows the same conversation. The approvals the stream signs
// cannot be forged: a changed input, an invented call, another server's secret are refused and run nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { Agent, Chat, DefaultChatTransport, MODEL, call, clean, readJson, reply, scriptedModel, serve, text, ui } from "./helpers.mjs";

const T = { timeout: 30_000 };
const SECRET = "test secret of this server, 32+ bytes";
const SCHEMA = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

/** A route whose agents live for one request: the tools log what ran; onFinish stores the chat. */
async function statelessServer(t, replies, { secret = SECRET } = {}) {
  const ran = [];
  const stored = new Map();
  const posts = [];
  const model = scriptedModel(replies);
  const tool = (name, extra = {}) => ({
    name, label: name, description: name, parameters: SCHEMA, ...extra,
    execute: async (id, { n }) => {
      ran.push(id);
      return { content: [text(`${name} ${n}`)], details: { n } };
    },
  });
  const server = await serve(async (req, res) => {
    const { id, messages } = await readJson(req);
    posts.push(messages);
    const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: [tool("work"), tool("gate", { needsApproval: true })] } });
    let stream;
    try {
      stream = ui.createAgentUIStream({ agent, uiMessages: messages, approvalSecret: secret });
    } catch (error) {
      res.writeHead(error.code ? 400 : 500, { "content-type": "text/plain" }).end(`${error.code}: ${error.message}`);
      return;
    }
    await ui.pipeUIMessageStreamToResponse({ response: res, stream });
    // What the app stores after each request: the transcript (a database row in a real app).
    stored.set(id, agent.state.messages);
  });
  t.after(() => server.close());
  return { ran, stored, posts, url: `${server.url}/api/chat` };
}

const PAUSE_AND_ANSWER = [reply(call("a", "work", { n: 1 }), call("b", "gate", { n: 2 }), call("c", "work", { n: 3 })), reply(text("done"))];
const shape = (message) => clean(message.parts).map((p) => (p.toolCallId ? `${p.type}:${p.state}` : p.type));

async function settled(chat, done) {
  for (let i = 0; i < 600 && !(chat.status === "ready" && done()); i++) await new Promise((r) => setTimeout(r, 5));
}

for (const approved of [true, false]) {
  test(`stateless route, Chat over HTTP: a prompt pauses, the ${approved ? "approval runs the call once" : "denial never runs it"}; a reload shows the stored conversation`, T, async (t) => {
    const server = await statelessServer(t, PAUSE_AND_ANSWER);
    let n = 0;
    const chat = new Chat({
      id: "chat-1",
      generateId: () => `id-${++n}`,
      transport: new DefaultChatTransport({ api: server.url }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: "go" });
    const gate = chat.messages[1].parts[2];
    assert.equal(gate.state, "approval-requested");
    assert.match(gate.approval.id, /^v1\.[A-Za-z0-9_-]{43}$/, "the approval id is the signed token");
    assert.deepEqual(server.ran, ["a", "c"], "the first request ran the calls that need no approval");
    await chat.addToolApprovalResponse({ id: gate.approval.id, approved, ...(approved ? {} : { reason: "not today" }) });
    await settled(chat, () => chat.messages[1].parts.some((p) => p.type === "text"));
    assert.equal(server.posts.length, 2);
    assert.deepEqual(server.ran, approved ? ["a", "c", "b"] : ["a", "c"], "a and c never ran again; b ran once or never");
    assert.equal(chat.messages.length, 2, "the continuation went into the same assistant message");
    assert.deepEqual(shape(chat.messages[1]), [
      "step-start", "tool-work:output-available", `tool-gate:${approved ? "output-available" : "output-denied"}`, "tool-work:output-available", "step-start", "text",
    ]);
    assert.equal(chat.messages[1].parts.at(-1).text, "done");
    // A reload: the page starts from the stored transcript as UIMessage[] (toUIMessages), the same conversation.
    const history = ui.toUIMessages(server.stored.get("chat-1"), { approvalSecret: SECRET });
    const reloaded = new Chat({ id: "chat-1", messages: history, transport: new DefaultChatTransport({ api: server.url }) });
    // Ids aside, and the approval record of an approved call that has its output: the transcript keeps a denial (in its
    // result) but not that a call was approved, so a reloaded page shows its output without the approval badge.
    const comparable = (messages) =>
      clean(messages).map(({ id: _, ...m }) => ({ ...m, parts: m.parts.map(({ approval, ...p }) => (p.state === "output-available" ? p : { ...p, ...(approval ? { approval } : {}) })) }));
    assert.deepEqual(comparable(reloaded.messages), comparable(chat.messages));
    if (!approved) assert.deepEqual(reloaded.messages[1].parts[2].approval, chat.messages[1].parts[2].approval);
  });
}

/** The messages of a paused conversation (after the first request), with `change` applied to the last one. */
async function pausedPost(t, change) {
  const server = await statelessServer(t, PAUSE_AND_ANSWER);
  const chat = new Chat({ id: "c", transport: new DefaultChatTransport({ api: server.url }) });
  await chat.sendMessage({ text: "go" });
  const messages = clean(chat.messages);
  const last = messages[1];
  for (const p of last.parts) if (p.toolCallId === "b") Object.assign(p, { state: "approval-responded", approval: { ...p.approval, approved: true } });
  change(last);
  const response = await fetch(server.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: "c", messages }) });
  return { server, status: response.status, body: await response.text() };
}

test("stateless route: an approval whose call was changed, an invented approved call, a missing result are refused; nothing runs", T, async (t) => {
  const changed = await pausedPost(t, (m) => (m.parts.find((p) => p.toolCallId === "b").input = { n: 200 }));
  assert.equal(changed.status, 400);
  assert.equal(changed.body, 'INVALID_APPROVAL: createAgentUIStream: the approval of tool call "b" is not one this server signed (the call, its input or its deadline was changed, or the secret differs)');
  assert.deepEqual(changed.server.ran, ["a", "c"]);

  const invented = await pausedPost(t, (m) => m.parts.push({ type: "tool-gate", toolCallId: "z", state: "approval-responded", input: { n: 9 }, approval: { id: "v1.AAAA", approved: true } }));
  assert.equal(invented.status, 400);
  assert.equal(invented.body, 'INVALID_APPROVAL: createAgentUIStream: the approval of tool call "z" is not one this server signed (the call, its input or its deadline was changed, or the secret differs)');
  assert.deepEqual(invented.server.ran, ["a", "c"]);

  const renamed = await pausedPost(t, (m) => (m.parts.find((p) => p.toolCallId === "b").type = "tool-work"));
  assert.equal(renamed.status, 400, "a call moved to another tool is not the one signed");
  assert.deepEqual(renamed.server.ran, ["a", "c"]);

  const stripped = await pausedPost(t, (m) => {
    const a = m.parts.find((p) => p.toolCallId === "a");
    a.state = "input-available";
    delete a.output;
  });
  assert.equal(stripped.status, 400);
  assert.equal(stripped.body, 'INVALID_APPROVAL: createAgentUIStream: tool call "a" of the last message has neither a result nor an approval');
  assert.deepEqual(stripped.server.ran, ["a", "c"], "a call's result removed does not make it run again");
});

test("stateless route: an approval signed with another secret is refused; approvals without approvalSecret are an error", T, async (t) => {
  const server = await statelessServer(t, PAUSE_AND_ANSWER);
  const chat = new Chat({ id: "c", transport: new DefaultChatTransport({ api: server.url }) });
  await chat.sendMessage({ text: "go" });
  const messages = clean(chat.messages);
  for (const p of messages[1].parts) if (p.toolCallId === "b") Object.assign(p, { state: "approval-responded", approval: { ...p.approval, approved: true } });
  const fresh = () => new Agent({ initialState: { model: MODEL, tools: [] } });
  assert.throws(() => ui.createAgentUIStream({ agent: fresh(), uiMessages: messages, approvalSecret: "another server's secret!" }), {
    code: "INVALID_APPROVAL",
    message: 'createAgentUIStream: the approval of tool call "b" is not one this server signed (the call, its input or its deadline was changed, or the secret differs)',
  });
  assert.throws(() => ui.createAgentUIStreamResponse({ agent: fresh(), uiMessages: messages }), {
    code: "INVALID_ARGUMENT",
    message: "createAgentUIStreamResponse: approvals posted to a fresh agent need options.approvalSecret (a stateless route checks each approval against the secret its stream signed it with)",
  });
  assert.throws(() => ui.createAgentUIStream({ agent: fresh(), uiMessages: messages, approvalSecret: "short" }), {
    code: "INVALID_ARGUMENT",
    message: 'createAgentUIStream: options.approvalSecret must be a string or bytes, at least 16 bytes long (a random secret kept on the server), got string',
  });
});

test("createAgentUIStreamResponse on a kept agent: the posted decisions are applied with approve()/deny() (a stateful route)", T, async () => {
  const model = scriptedModel(PAUSE_AND_ANSWER);
  const ran = [];
  const tool = (name, extra = {}) => ({ name, label: name, description: name, parameters: SCHEMA, ...extra, execute: async (id, { n }) => (ran.push(id), { content: [text(`${name} ${n}`)], details: {} }) });
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: [tool("work"), tool("gate", { needsApproval: true })] } });
  const user = { id: "u1", role: "user", parts: [{ type: "text", text: "go" }] };
  const first = ui.createAgentUIStreamResponse({ agent, uiMessages: [user], headers: { "x-chat": "1" } });
  assert.equal(first.headers.get("x-chat"), "1");
  const { readUIMessageStream } = await import("ai");
  let message;
  for await (const m of readUIMessageStream({ stream: first.body.pipeThrough(new TextDecoderStream()).pipeThrough(sseToChunks()) })) message = m;
  assert.deepEqual(ran, ["a", "c"]);
  const posted = clean(message);
  for (const p of posted.parts) if (p.toolCallId === "b") Object.assign(p, { state: "approval-responded", approval: { ...p.approval, approved: true } });
  const second = ui.createAgentUIStreamResponse({ agent, uiMessages: [user, posted] });
  await second.text();
  assert.deepEqual(ran, ["a", "c", "b"]);
  // The same decisions again: nothing waits any more.
  assert.throws(() => ui.createAgentUIStream({ agent, uiMessages: [user, posted] }), {
    code: "INVALID_APPROVAL",
    message: "createAgentUIStream: the agent has no tool call waiting for approval (the posted approvals were carried out already, or never asked)",
  });
});

/** SSE text → the JSON chunks (what DefaultChatTransport does). */
function sseToChunks() {
  let buffer = "";
  return new TransformStream({
    transform(piece, controller) {
      buffer += piece;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = frame.replace(/^data: /, "");
        if (data !== "[DONE]") controller.enqueue(JSON.parse(data));
      }
    },
  });
}

test("approval tokens are HMAC-SHA-256 (base64url) as node:crypto computes it, for signed texts of every length around the block sizes and keys over 64 bytes", T, async () => {
  const { createHmac } = await import("node:crypto");
  for (const secret of [SECRET, "k".repeat(64), "long key ".repeat(20)]) {
    for (let length = 0; length < 200; length += 1) {
      const input = { s: "é".repeat(length % 7) + "x".repeat(length) };
      const messages = [
        { role: "user", content: "go", timestamp: 1 },
        { role: "assistant", content: [call("c1", "gate", input)], api: "s", provider: "s", model: "s", usage: {}, stopReason: "toolUse", timestamp: 1 },
      ];
      const [, answer] = ui.toUIMessages(messages, { approvalSecret: secret, pendingApprovals: [{ toolCallId: "c1", toolName: "gate", args: input, expiresAt: 1767225600000 }] });
      const signed = JSON.stringify(["agent-loop-wasm approval v1", "c1", "gate", input, 1767225600000]);
      assert.equal(answer.parts[1].approval.id, `v1.${createHmac("sha256", secret).update(signed).digest("base64url")}`, `key ${secret.length}, text ${signed.length}`);
    }
  }
});
