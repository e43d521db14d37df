// agent-loop-wasm/ui's resume against the AI SDK's own client (issue 31): `useChat({ resume: true })` reconnects with
// DefaultChatTransport's `GET …/:chatId/stream`; the server answers 204 when the agent runs nothing, else
// `resumeUIMessageStreamResponse(agent)`: the current run replayed from its start (agent.events({ fromRunStart })),
// then live. The Chat (AbstractChat, in-memory) drops its connection mid-answer at every point of a scripted run
// (reasoning, text, parallel tools, a second step) and resumes, in the same Chat (its partial message is replaced) and
// in a new one (a reloaded page): each ends with exactly the UIMessage of the uninterrupted stream, no text twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { AI_VERSION, Agent, Chat, DefaultChatTransport, MODEL, call, clean, drain, pieces, readJson, readMessage, reply, scriptedModel, serve, sleep, text, thinking, tools, ui, validateChunks } from "./helpers.mjs";

const T = { timeout: 120_000 };

const SCRIPT = () => [
  reply(pieces(thinking("Checking the weather", "sig-1"), "Checking", " the", " weather"), pieces(text("Let me look."), "Let", " me", " look."), call("a", "weather", { q: "Oslo" }), call("b", "news", { q: "Oslo" })),
  reply(pieces(text("Rainy in Oslo, calm news today."), "Rainy", " in", " Oslo,", " calm", " news", " today.")),
];
const TOOLS = { weather: { delayMs: 60 }, news: { delayMs: 20 } };

/**
 * POST /api/chat keeps one Agent per chat id (the reconnect has no body: the server must know the chat); GET
 * /api/chat/:id/stream resumes. `journal: false` streams the POST from a bare subscribe source, so the agent's journal
 * starts only with the reconnect (mid-run): the resume then rebuilds the answer from the agent_sync.
 */
async function resumableServer({ journal = true, pieceDelayMs = 8 } = {}) {
  const model = scriptedModel(SCRIPT(), { pieceDelayMs });
  const agents = new Map();
  const ids = new Map();
  const sent = []; // per POST: every chunk the server sent (the client may have gone)
  const resumed = []; // per GET: every chunk sent, or 204
  const server = await serve(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const get = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
    if (req.method === "GET" && get) {
      const agent = agents.get(decodeURIComponent(get[1]));
      const response = agent ? ui.resumeUIMessageStreamResponse(agent, { messageId: journal ? undefined : ids.get(agent) }) : new Response(null, { status: 204 });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.status === 204) {
        resumed.push(204);
        res.end();
        return;
      }
      const chunks = [];
      resumed.push(chunks);
      const [forClient, forTest] = response.body.tee();
      (async () => {
        let body = "";
        const decoder = new TextDecoder();
        for await (const bytes of forTest) body += decoder.decode(bytes, { stream: true });
        for (const frame of body.split("\n\n")) if (frame.startsWith("data: {")) chunks.push(JSON.parse(frame.slice(6)));
      })();
      Readable.fromWeb(forClient).pipe(res);
      return;
    }
    if (req.method !== "POST" || url.pathname !== "/api/chat") {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    const history = ui.convertToAgentMessages(body.messages, { model: MODEL });
    const prompt = history.pop();
    const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: tools(TOOLS), messages: history } });
    agents.set(body.id, agent);
    const source = journal ? agent : { subscribe: (listener) => agent.subscribe(listener) };
    const chunks = [];
    sent.push(chunks);
    // Without the journal the app keeps the message id itself (as a Durable Object stores it beside the run).
    const messageId = journal ? undefined : `answer-${body.id}`;
    if (!journal) ids.set(agent, messageId);
    const [forClient, forTest] = ui.toUIMessageStream(source, { messageId, originalMessages: body.messages, run: () => agent.prompt(prompt) }).tee();
    (async () => {
      for await (const c of forTest) chunks.push(c);
    })();
    await ui.pipeUIMessageStreamToResponse({ response: res, stream: forClient });
  });
  return { ...server, agents, sent, resumed };
}

let chatIds = 0;
function newChat(url, init = {}) {
  let n = 0;
  return new Chat({ id: `chat-${++chatIds}`, generateId: () => `id-${chatIds}-${++n}`, transport: new DefaultChatTransport({ api: `${url}/api/chat` }), ...init });
}

const settle = async (agent) => {
  for (let i = 0; i < 1000 && agent.state.isStreaming; i++) await sleep(5);
};

test(`resume (ai ${AI_VERSION}): GET …/:chatId/stream is 204 with no run under way; the Chat stays ready and keeps its messages`, T, async (t) => {
  const server = await resumableServer({ pieceDelayMs: 0 });
  t.after(() => server.close());
  const chat = newChat(server.url);
  await chat.resumeStream(); // no agent for this chat yet
  assert.equal(chat.status, "ready");
  assert.deepEqual(chat.messages, []);
  await chat.sendMessage({ text: "Oslo?" });
  const before = clean(chat.messages);
  await chat.resumeStream(); // the agent is idle
  assert.deepEqual(server.resumed, [204, 204]);
  assert.equal(chat.status, "ready");
  assert.deepEqual(clean(chat.messages), before);
  assert.equal(ui.resumeUIMessageStream(server.agents.get(chat.id)), null);
});

for (const mode of ["journal", "sync"]) {
  test(`resume (${mode === "journal" ? "the run replayed from its agent_start" : "rebuilt from agent_sync: the journal began mid-run"}): a Chat that drops at every point of the answer and resumes, in place and in a reloaded page, ends with the exact UIMessage`, T, async (t) => {
    const probe = await resumableServer({ journal: mode === "journal" });
    t.after(() => probe.close());
    // The uninterrupted answer: its chunks and the UIMessage they make.
    const whole = newChat(probe.url);
    await whole.sendMessage({ text: "Oslo?" });
    await validateChunks(probe.sent[0]);
    const total = probe.sent[0].length;
    const expectedParts = clean(whole.messages[1].parts);
    assert.deepEqual(expectedParts.map((p) => p.type), ["step-start", "reasoning", "text", "tool-weather", "tool-news", "step-start", "text"]);
    assert.equal(expectedParts[6].text, "Rainy in Oslo, calm news today.");
    assert.ok(total > 25, `${total} chunks`);

    let cuts = 0;
    for (let cut = 2; cut < total - 1; cut += 2) {
      for (const where of ["same chat", "reloaded page"]) {
        const server = await resumableServer({ journal: mode === "journal" });
        try {
          const chat = newChat(server.url);
          const sending = chat.sendMessage({ text: "Oslo?" });
          while ((server.sent[0]?.length ?? 0) < cut) await sleep(1);
          // The run holds at its next event (an Agent awaits its listeners) until the resume request has arrived, so it
          // cannot end in between, however slow the machine: the resume always finds the answer under way.
          const agent = server.agents.get(chat.id);
          let release;
          const gate = new Promise((r) => (release = r));
          const unsubscribe = agent.subscribe(() => gate);
          await chat.stop();
          await sending;
          assert.equal(agent.state.isStreaming, true, `cut ${cut}: still running`);
          let target = chat;
          if (where === "reloaded page") {
            // A new page: a new Chat of the same id with the messages the app stored (the user's question).
            target = newChat(server.url, { id: chat.id });
            target.messages = [structuredClone(chat.messages[0])];
          }
          const resuming = target.resumeStream();
          while (server.resumed.length === 0) await sleep(1);
          unsubscribe();
          release();
          await resuming;
          await settle(agent);
          assert.equal(target.status, "ready", `${where}, cut ${cut}`);
          const got = server.resumed[0];
          await validateChunks(got);
          assert.equal(got[0].type, "start");
          assert.equal(got[0].messageId, server.sent[0][0].messageId, "the resumed answer keeps its message id");
          assert.equal(target.messages.length, 2, `${where}, cut ${cut}: ${JSON.stringify(target.messages.map((m) => m.role))}`);
          assert.deepEqual(clean(target.messages[1]), { id: server.sent[0][0].messageId, role: "assistant", parts: expectedParts }, `${where}, cut ${cut}`);
          // The replay alone rebuilds the message too (readUIMessageStream from scratch).
          assert.deepEqual(clean((await readMessage(got)).parts), expectedParts);
          cuts++;
        } finally {
          await server.close();
        }
      }
    }
    assert.ok(cuts >= 24, `${cuts} cuts`);
  });
}

test("resume while a listener holds the run at a message's end (the journal begins then): the message is sent once", T, async () => {
  const model = scriptedModel([reply(text("Hello there."))]);
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL } });
  let release;
  const gate = new Promise((r) => (release = r));
  let held = false;
  // A listener that awaits (a database write, say) on the assistant message's end: the state already holds it.
  agent.subscribe((e) => {
    if (e.type === "message_end" && e.message.role === "assistant") {
      held = true;
      return gate;
    }
    return undefined;
  });
  const run = agent.prompt("hi");
  while (!held) await sleep(1);
  const stream = ui.resumeUIMessageStream(agent, { messageId: "m1" });
  release();
  await run;
  const message = clean(await readMessage(await drain(stream)));
  assert.deepEqual(message.parts, [{ type: "step-start" }, { type: "text", text: "Hello there.", state: "done" }]);
});
