// agent-loop-wasm/ui against the AI SDK's own client (issue 31): the framework-free Chat (AbstractChat over an
// in-memory state) with DefaultChatTransport posts to a node:http server on 127.0.0.1 that rebuilds the transcript
// from the posted messages (convertToAgentMessages), runs an Agent on a scripted model and streams the run back
// (toUIMessageStream + pipeUIMessageStreamToResponse, or toUIMessageStreamResponse). Exact chunk sequences as sent,
// and the messages the Chat ends with: text, reasoning, parallel tool calls with an error, a second turn whose
// request carries the first turn's tool calls and results, an aborted run (by the server, and by the client's stop()),
// a model error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { AI_VERSION, Agent, Chat, DefaultChatTransport, MODEL, call, clean, labels, pieces, readJson, reply, scriptedModel, serve, sleep, text, thinking, tools, ui, validateChunks } from "./helpers.mjs";

const T = { timeout: 30_000 };

/**
 * A chat endpoint: POST /api/chat. Each request gets a fresh Agent over the posted history (the server keeps no chat
 * state) and the next reply of `replies`. `sent` collects each response's chunks as they leave the server.
 */
async function chatServer(replies, { toolSpec = {}, useResponse = false, onAgent } = {}) {
  const model = scriptedModel(replies);
  const sent = [];
  const agents = [];
  const server = await serve(async (req, res) => {
    if (req.method !== "POST" || req.url !== "/api/chat") {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    const history = ui.convertToAgentMessages(body.messages, { model: MODEL });
    const prompt = history.pop();
    const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: tools(toolSpec), messages: history } });
    agents.push(agent);
    onAgent?.(agent, req, res);
    const chunks = [];
    sent.push(chunks);
    const options = { originalMessages: body.messages, run: () => agent.prompt(prompt) };
    if (useResponse) {
      const response = ui.toUIMessageStreamResponse(agent, options);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      const [forClient, forTest] = response.body.tee();
      (async () => {
        const decoder = new TextDecoder();
        let textSoFar = "";
        for await (const bytes of forTest) textSoFar += decoder.decode(bytes, { stream: true });
        for (const frame of textSoFar.split("\n\n")) if (frame.startsWith("data: {")) chunks.push(JSON.parse(frame.slice(6)));
      })();
      Readable.fromWeb(forClient).pipe(res);
      return;
    }
    const [forClient, forTest] = ui.toUIMessageStream(agent, options).tee();
    (async () => {
      for await (const c of forTest) chunks.push(c);
    })();
    await ui.pipeUIMessageStreamToResponse({ response: res, stream: forClient });
  });
  return { ...server, model, sent, agents };
}

function newChat(url, extra = {}) {
  let n = 0;
  const finished = [];
  const chat = new Chat({
    id: "chat-1",
    generateId: () => `id-${++n}`,
    transport: new DefaultChatTransport({ api: `${url}/api/chat` }),
    onFinish: (f) => finished.push({ finishReason: f.finishReason, isAbort: f.isAbort, isError: f.isError }),
    ...extra,
  });
  return { chat, finished };
}

test(`Chat + DefaultChatTransport (ai ${AI_VERSION}): reasoning and text stream into one assistant message`, T, async (t) => {
  const server = await chatServer([reply(pieces(thinking("Greeting the user", "sig"), "Greeting", " the user"), pieces(text("Hello there!"), "Hello", " there!"))]);
  t.after(() => server.close());
  const { chat, finished } = newChat(server.url);
  await chat.sendMessage({ text: "Hi" });
  assert.equal(chat.status, "ready");
  assert.deepEqual(labels(server.sent[0]), [
    "start", "start-step", "reasoning-start", "reasoning-delta:Greeting", "reasoning-delta: the user", "reasoning-end",
    "text-start", "text-delta:Hello", "text-delta: there!", "text-end", "finish-step", "finish:stop",
  ]);
  await validateChunks(server.sent[0]);
  const messageId = server.sent[0][0].messageId;
  assert.deepEqual(clean(chat.messages), [
    { id: "id-1", role: "user", parts: [{ type: "text", text: "Hi" }] },
    {
      id: messageId,
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "reasoning", id: "1-0", text: "Greeting the user", providerMetadata: { agentLoop: { thinkingSignature: "sig" } }, state: "done" },
        { type: "text", text: "Hello there!", state: "done" },
      ],
    },
  ]);
  assert.deepEqual(finished, [{ finishReason: "stop", isAbort: false, isError: false }]);
});

test("Chat: parallel tool calls with outputs and one error; the next turn's request rebuilds the calls and results for the model", T, async (t) => {
  const server = await chatServer(
    [
      reply(call("a", "weather", { q: "Oslo" }), call("b", "news", { q: "Oslo" }), call("c", "traffic", { q: "Oslo" })),
      reply(pieces(text("Rainy, calm news."), "Rainy,", " calm news.")),
      reply(text("You are welcome.")),
    ],
    { toolSpec: { weather: { delayMs: 40 }, news: { delayMs: 5 }, traffic: { delayMs: 20, fail: "traffic API down" } }, useResponse: true },
  );
  t.after(() => server.close());
  const { chat } = newChat(server.url);
  await chat.sendMessage({ text: "Oslo today?" });
  assert.deepEqual(labels(server.sent[0]), [
    "start", "start-step",
    "tool-input-start:a", 'tool-input-delta:{"q":"', 'tool-input-delta:Oslo"}', "tool-input-available:a",
    "tool-input-start:b", 'tool-input-delta:{"q":"', 'tool-input-delta:Oslo"}', "tool-input-available:b",
    "tool-input-start:c", 'tool-input-delta:{"q":"', 'tool-input-delta:Oslo"}', "tool-input-available:c",
    "tool-output-available:b", "tool-output-error:c", "tool-output-available:a", "finish-step",
    "start-step", "text-start", "text-delta:Rainy,", "text-delta: calm news.", "text-end", "finish-step", "finish:stop",
  ]);
  await validateChunks(server.sent[0]);
  const out = (s) => ({ content: [{ type: "text", text: s }], details: { q: "Oslo" } });
  assert.deepEqual(clean(chat.messages[1].parts), [
    { type: "step-start" },
    { type: "tool-weather", toolCallId: "a", state: "output-available", input: { q: "Oslo" }, output: out("weather(Oslo)") },
    { type: "tool-news", toolCallId: "b", state: "output-available", input: { q: "Oslo" }, output: out("news(Oslo)") },
    { type: "tool-traffic", toolCallId: "c", state: "output-error", input: { q: "Oslo" }, errorText: "traffic API down" },
    { type: "step-start" },
    { type: "text", text: "Rainy, calm news.", state: "done" },
  ]);

  await chat.sendMessage({ text: "Thanks" });
  assert.equal(chat.messages.length, 4);
  assert.deepEqual(clean(chat.messages[3].parts), [{ type: "step-start" }, { type: "text", text: "You are welcome.", state: "done" }]);
  // The third model request: the whole conversation, rebuilt from what the Chat posted.
  const request = server.model.requests[2].messages.filter((m) => m.role !== "system");
  assert.deepEqual(
    request.map((m) => (m.role === "toolResult" ? `toolResult:${m.toolCallId}:${m.isError}:${m.content[0].text}` : m.role === "assistant" ? `assistant:${m.content.map((b) => (b.type === "toolCall" ? `${b.name}(${b.arguments.q})` : b.text)).join("+")}` : `user:${m.content[0].text}`)),
    [
      "user:Oslo today?",
      "assistant:weather(Oslo)+news(Oslo)+traffic(Oslo)",
      "toolResult:a:false:weather(Oslo)",
      "toolResult:b:false:news(Oslo)",
      "toolResult:c:true:traffic API down",
      "assistant:Rainy, calm news.",
      "user:Thanks",
    ],
  );
});

test("Chat: a run the server aborts ends with abort (the text so far stays, the Chat is ready); the client's stop() aborts the agent", T, async (t) => {
  let serverAgent;
  const server = await chatServer(
    [{ blocks: [pieces(text("Once upon a"), "Once", " upon a")], waitForAbort: true }, { blocks: [pieces(text("Long story"), "Long", " story")], waitForAbort: true }],
    {
      onAgent: (agent, req, res) => {
        serverAgent = agent;
        // The app's choice: when the client goes away (stop(), a closed tab), abort the run.
        res.on("close", () => {
          if (!res.writableFinished) agent.abort();
        });
      },
    },
  );
  t.after(() => server.close());
  const { chat, finished } = newChat(server.url);
  const sending = chat.sendMessage({ text: "A story" });
  await server.model.waiting();
  serverAgent.abort();
  await sending;
  assert.deepEqual(labels(server.sent[0]), ["start", "start-step", "text-start", "text-delta:Once", "text-delta: upon a", "text-end", "finish-step", "abort:Request was aborted"]);
  assert.equal(chat.status, "ready");
  assert.deepEqual(clean(chat.messages[1].parts), [{ type: "step-start" }, { type: "text", text: "Once upon a", state: "done" }]);
  assert.deepEqual(finished, [{ finishReason: undefined, isAbort: false, isError: false }]);

  // The client stops mid-answer: its request is aborted, the server sees the connection close and aborts the agent.
  const second = chat.sendMessage({ text: "Another" });
  await server.model.waiting(2);
  while (!(chat.messages[3]?.parts ?? []).some((p) => p.type === "text" && p.state === "done")) await sleep(5);
  await chat.stop();
  await second;
  for (let i = 0; i < 200 && serverAgent.state.isStreaming; i++) await sleep(5);
  assert.equal(serverAgent.state.messages.at(-1).stopReason, "aborted");
  assert.equal(chat.status, "ready");
  assert.deepEqual(clean(chat.messages[3].parts), [{ type: "step-start" }, { type: "text", text: "Long story", state: "done" }]);
  assert.deepEqual(finished[1], { finishReason: undefined, isAbort: true, isError: false });
});

test("Chat: a model error sets the Chat's error to the agent's errorMessage and keeps the partial answer", T, async (t) => {
  const server = await chatServer([{ blocks: [pieces(text("Let me"), "Let me")], fail: "429 Too Many Requests: slow down" }]);
  t.after(() => server.close());
  const errors = [];
  const { chat, finished } = newChat(server.url, { onError: (e) => errors.push(e.message) });
  await chat.sendMessage({ text: "Hi" });
  assert.deepEqual(labels(server.sent[0]), ["start", "start-step", "text-start", "text-delta:Let me", "text-end", "error:429 Too Many Requests: slow down", "finish-step", "finish:error"]);
  assert.equal(chat.status, "error");
  assert.equal(chat.error.message, "429 Too Many Requests: slow down");
  assert.deepEqual(errors, ["429 Too Many Requests: slow down"]);
  assert.deepEqual(clean(chat.messages[1].parts), [{ type: "step-start" }, { type: "text", text: "Let me", state: "done" }]);
  assert.deepEqual(finished, [{ finishReason: undefined, isAbort: false, isError: true }]);
});
