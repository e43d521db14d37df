// The chat API, as a node:http handler `(req, res, next?)` that `npm start` (server/start.js) and `npm run dev` (the
// Vite plugin in vite.config.js) both mount. One Agent per chat id, kept in memory (a restart forgets the chats; the
// cloudflare and node-durable examples persist theirs). Routes, under /api:
//   POST /api/chat                 useChat's request: a new user message is prompted; approval responses are applied
//                                  with agent.approve/deny; the run streams back as the AI SDK's UI message stream
//   GET  /api/chat/:id/stream      useChat's resume: the answer under way, replayed from its start; 204 when none
//   GET  /api/chats/:id            the history, toUIMessages(agent.state.messages), for useChat({ messages }) on load
//   GET  /api/info                 which model answers (the page says when it is the offline scripted one)
// With CHAT_TOKEN set, every route needs `Authorization: Bearer <CHAT_TOKEN>`.
import { randomUUID } from "node:crypto";
import { Agent, streamBuiltin } from "agent-loop-wasm";
import {
  convertToAgentMessages,
  pipeUIMessageStreamToResponse,
  resumeUIMessageStream,
  toUIMessageStream,
  toUIMessages,
  toolApprovalDecisions,
} from "agent-loop-wasm/ui";
import { SCRIPTED_MODEL, scriptedStreamFn } from "./scripted-model.js";
import { refunds, tools } from "./tools.js";

const SYSTEM_PROMPT =
  "You are the support assistant of a small online store. Use lookup_order to answer questions about an order, and " +
  "refund_order only when the customer asks for a refund (a person approves each refund). Answer in one or two sentences.";

/** A real provider when its key is in the environment (MODEL overrides the default model id), else the scripted one. */
export function chooseModel(env) {
  const model = (id, api, provider, baseUrl) => ({
    id, name: id, api, provider, baseUrl, reasoning: false, input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 8192,
  });
  if (env.OPENAI_API_KEY) return { model: model(env.MODEL || "gpt-4o-mini", "openai-completions", "openai", env.OPENAI_BASE_URL || "https://api.openai.com/v1"), apiKey: env.OPENAI_API_KEY };
  if (env.ANTHROPIC_API_KEY) return { model: model(env.MODEL || "claude-sonnet-4-5", "anthropic-messages", "anthropic", "https://api.anthropic.com"), apiKey: env.ANTHROPIC_API_KEY };
  if (env.GEMINI_API_KEY) return { model: model(env.MODEL || "gemini-2.5-flash", "google-generative-ai", "google", "https://generativelanguage.googleapis.com/v1beta"), apiKey: env.GEMINI_API_KEY };
  return { model: SCRIPTED_MODEL, apiKey: undefined };
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readJson(req) {
  let body = "";
  for await (const piece of req) body += piece;
  return JSON.parse(body);
}

export function createChatApi(env = process.env) {
  const { model, apiKey } = chooseModel(env);
  const offline = model === SCRIPTED_MODEL;
  const streamFn = offline ? scriptedStreamFn({ delayMs: Number(env.SCRIPTED_DELAY_MS ?? 40) }) : streamBuiltin;
  const token = env.CHAT_TOKEN || undefined;
  /**
   * chat id → { agent, runs, approvals }. `runs`: each run's transcript index and streamed message id, so the history
   * gives every answer the id it streamed with (a reloaded page then resumes onto it) and tells prompts from steering.
   * `approvals`: the requests and decisions, so past approvals show as the page saw them.
   */
  const chats = new Map();

  const chatOf = (id) => {
    let chat = chats.get(id);
    if (!chat) {
      const agent = new Agent({ streamFn, getApiKey: () => apiKey, initialState: { model, systemPrompt: SYSTEM_PROMPT, tools } });
      chat = { agent, runs: [], approvals: { requests: [], decisions: [] } };
      agent.subscribe((event) => {
        if (event.type === "tool_approval_request") chat.approvals.requests.push(event);
      });
      chats.set(id, chat);
    }
    return chat;
  };

  async function chat(req, res) {
    const body = await readJson(req);
    const messages = Array.isArray(body?.messages) ? body.messages : [];
    const last = messages.at(-1);
    if (typeof body?.id !== "string" || !last) return json(res, 400, { error: 'expected useChat\'s body {"id", "messages": UIMessage[]}' });
    const { agent, runs, approvals } = chatOf(body.id);
    if (agent.state.isStreaming) return json(res, 409, { error: "an answer is under way: GET /api/chat/:id/stream resumes it" });
    const start = agent.state.messages.length;
    let messageId;
    let run;
    if (last.role === "user") {
      const waiting = agent.state.pendingApprovals.map((r) => r.toolCallId);
      if (waiting.length) return json(res, 409, { error: `tool calls wait for approval (${waiting.join(", ")}): approve or deny them first` });
      const [prompt] = convertToAgentMessages([last], { model });
      if (!prompt) return json(res, 400, { error: "the message holds nothing to send" });
      messageId = randomUUID();
      run = () => agent.prompt(prompt);
    } else {
      const decisions = toolApprovalDecisions(messages);
      if (decisions.length === 0) return json(res, 400, { error: "the last message is neither a user message nor approval responses" });
      const waiting = new Set(agent.state.pendingApprovals.map((r) => r.toolCallId));
      const unknown = decisions.find((d) => !waiting.has(d.toolCallId));
      if (unknown) return json(res, 409, { error: `tool call ${unknown.toolCallId} is not waiting for approval` });
      approvals.decisions.push(...decisions);
      messageId = last.id; // the decisions' run continues the message the page holds
      run = async () => {
        for (const d of decisions) await (d.approved ? agent.approve(d.toolCallId) : agent.deny(d.toolCallId, { reason: d.reason }));
      };
    }
    runs.push({ start, messageId });
    // The page may go away mid-answer: the stream stops, the agent's run goes on, and a resume picks it up.
    await pipeUIMessageStreamToResponse({ response: res, stream: toUIMessageStream(agent, { messageId, originalMessages: messages, run }) });
  }

  async function resume(req, res, id) {
    const chat = chats.get(id);
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const stream = chat && resumeUIMessageStream(chat.agent, { messageId: chat.runs.at(-1)?.messageId, signal: controller.signal });
    if (!stream) {
      res.writeHead(204).end();
      return;
    }
    await pipeUIMessageStreamToResponse({ response: res, stream });
  }

  function history(res, id) {
    const chat = chats.get(id);
    if (!chat) return json(res, 200, []);
    const { agent, runs, approvals } = chat;
    // While calls wait, the batch's other calls have ended but their results enter the transcript with the decisions.
    const completedTools = agent.state.pendingApprovals.length ? agent.snapshot().approvals?.completedTools : undefined;
    json(res, 200, toUIMessages(agent.state.messages, { runs, pendingApprovals: agent.state.pendingApprovals, approvals: { ...approvals, completedTools } }));
  }

  return async function handle(req, res, next) {
    const { pathname } = new URL(req.url, "http://localhost");
    if (!pathname.startsWith("/api/")) return next ? next() : json(res, 404, { error: "not found" });
    try {
      if (token && req.headers.authorization !== `Bearer ${token}`) return json(res, 401, { error: "missing or wrong bearer token" });
      if (req.method === "POST" && pathname === "/api/chat") return await chat(req, res);
      const stream = /^\/api\/chat\/([^/]+)\/stream$/.exec(pathname);
      if (req.method === "GET" && stream) return await resume(req, res, decodeURIComponent(stream[1]));
      const saved = /^\/api\/chats\/([^/]+)$/.exec(pathname);
      if (req.method === "GET" && saved) return history(res, decodeURIComponent(saved[1]));
      if (req.method === "GET" && pathname === "/api/info") return json(res, 200, { offline, model: model.name, refunds });
      json(res, 404, { error: `no route ${req.method} ${pathname}` });
    } catch (error) {
      if (res.headersSent) res.end();
      else json(res, error instanceof SyntaxError || error instanceof TypeError ? 400 : 500, { error: error.message });
    }
  };
}
