// agent-loop-wasm on a plain Node HTTP server (node:http): agents whose checkpoints go to a SQLite file (node:sqlite),
// whose charges above 10.00 EUR wait for a person, and whose runs survive a crash: on start the server restores every
// stored agent and resumes the runs that were interrupted, by itself.
//
//   AUTH_TOKEN=dev-token npm start
//
// Every route needs `Authorization: Bearer $AUTH_TOKEN` (401 without it).
//
//   GET  /agents                                 the stored agents: [{id, isStreaming, pendingApprovals}]
//   POST /agents/:id/prompt  {"text": "..."}      starts a run (202), creating the agent; 409 while it runs or calls
//                                                wait for approval
//   GET  /agents/:id                             its state: messages, pendingApprovals, ledger (the effects made)
//   POST /agents/:id/approvals/:toolCallId  {"approved": true|false, "reason"?: "...", "arguments"?: {...}}
//                                                decides a call waiting for approval: 202 when it was the last one
//                                                (the run goes on), 200 while others wait; 400 bad body or invalid
//                                                arguments, 404 unknown agent or call, 409 already decided
//   GET  /agents/:id/events                      its events as Server-Sent Events (agent.events): each frame has
//                                                `id: <seq>`; send `Last-Event-ID` (or `?after=<seq>`) to get what you
//                                                missed first, or an `agent_sync` with the state (`?after=0`)
//
// Environment: AUTH_TOKEN (required), HOST (127.0.0.1), PORT (8787), DB_FILE (data/agents.sqlite), EFFECTS_URL (where
// the tools' effects go; unset: only the ledger records them), APPROVAL_ABOVE_CENTS (1000), OPENAI_API_KEY (then
// OpenAI's MODEL, default gpt-4o-mini, at OPENAI_BASE_URL; unset: the scripted stand-in of scripted-model.mjs).
import { timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { Agents, Refused } from "./agents.mjs";
import { Store } from "./store.mjs";

const env = process.env;
if (!env.AUTH_TOKEN) {
  console.error("server: set AUTH_TOKEN, the bearer token every request must carry (e.g. AUTH_TOKEN=dev-token npm start)");
  process.exit(2);
}
const TOKEN = Buffer.from(env.AUTH_TOKEN);
const HOST = env.HOST || "127.0.0.1";
const PORT = Number(env.PORT ?? 8787);
const DB_FILE = env.DB_FILE || "data/agents.sqlite";
/** An event stream with nothing to send writes a comment line this often (proxies close silent connections). */
const KEEPALIVE_MS = 15000;
const MAX_BODY = 1 << 20;

const store = new Store(DB_FILE);
const agents = new Agents({ store, env });
const resumed = agents.restoreAll();

const server = createServer((req, res) => {
  route(req, res).catch((error) => send(res, error instanceof Refused ? error.status : 500, { error: error.message }));
});

async function route(req, res) {
  if (!authorized(req.headers.authorization)) {
    res.setHeader("www-authenticate", 'Bearer realm="agents"');
    throw new Refused(401, "missing or wrong bearer token (Authorization: Bearer $AUTH_TOKEN)");
  }
  const url = new URL(req.url, "http://localhost");
  const [root, rawId, action = "", rawCallId, ...rest] = url.pathname.split("/").slice(1);
  if (root !== "agents" || rest.length) throw new Refused(404, "not found");
  if (rawId === undefined || rawId === "") {
    if (req.method !== "GET") throw new Refused(405, "GET /agents");
    const list = agents.ids().map((id) => {
      const state = agents.get(id).state;
      return { id, isStreaming: state.isStreaming, pendingApprovals: state.pendingApprovals.length };
    });
    return send(res, 200, { agents: list });
  }
  const id = decodeURIComponent(rawId);
  if (!/^[\w.-]{1,100}$/.test(id)) throw new Refused(400, "an agent id is 1 to 100 letters, digits, '_', '-' or '.'");
  if (req.method === "POST" && action === "prompt" && rawCallId === undefined) {
    const body = await readJson(req);
    if (typeof body?.text !== "string" || body.text.trim() === "") throw new Refused(400, 'the body must be JSON {"text": string}');
    agents.prompt(id, body.text);
    return send(res, 202, { accepted: true });
  }
  if (req.method === "GET" && action === "" && rawCallId === undefined) return send(res, 200, agents.describe(id));
  if (req.method === "POST" && action === "approvals" && rawCallId) {
    const toolCallId = decodeURIComponent(rawCallId);
    const body = checkDecision(await readJson(req));
    const { running, waiting } = await agents.decide(id, toolCallId, body);
    return send(res, running ? 202 : 200, { decided: toolCallId, approved: body.approved, running, waiting });
  }
  if (req.method === "GET" && action === "events" && rawCallId === undefined) return events(req, res, agents.get(id), url);
  throw new Refused(404, "not found");
}

function authorized(header) {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? "")?.[1] ?? "");
  return given.length === TOKEN.length && timingSafeEqual(given, TOKEN);
}

const DECISION = 'the body must be JSON {"approved": true|false, "reason"?: string, "arguments"?: object}';
function checkDecision(body) {
  const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isObject(body) || typeof body.approved !== "boolean") throw new Refused(400, DECISION);
  if (body.reason !== undefined && typeof body.reason !== "string") throw new Refused(400, `${DECISION}: "reason" is not a string`);
  if (body.arguments !== undefined && !isObject(body.arguments)) throw new Refused(400, `${DECISION}: "arguments" is not an object`);
  if (body.arguments !== undefined && !body.approved) throw new Refused(400, `${DECISION}: "arguments" go with "approved": true only`);
  return { approved: body.approved, ...(body.reason === undefined ? {} : { reason: body.reason }), ...(body.arguments === undefined ? {} : { arguments: body.arguments }) };
}

/**
 * Server-Sent Events from agent.events({ after }): each item is one frame, `id: <seq>`, `event: <event.type>`,
 * `data: <the event as JSON>`; a replayed item (what the client missed, or the `agent_sync` that replaces its state)
 * has a `: replay` comment line first. `after` is the Last-Event-ID header, else the `after` query parameter; a value
 * that is not a seq this process gave starts with an `agent_sync`; with neither the stream is live only. When the
 * client goes, the reader ends.
 */
async function events(req, res, agent, url) {
  const header = req.headers["last-event-id"];
  const raw = typeof header === "string" && header.trim() !== "" ? header : url.searchParams.get("after");
  const after = raw === null ? undefined : raw.trim() !== "" && Number.isFinite(Number(raw)) ? Number(raw) : 0;
  const gone = new AbortController();
  res.on("close", () => gone.abort());
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(": agent-loop-wasm events\n\n");
  const keepalive = setInterval(() => res.write(": keepalive\n\n"), Number(env.EVENTS_KEEPALIVE_MS ?? KEEPALIVE_MS));
  try {
    for await (const item of agent.events({ after, signal: gone.signal })) {
      const frame = `${item.replay ? ": replay\n" : ""}id: ${item.seq}\nevent: ${item.event.type}\ndata: ${JSON.stringify(item.event)}\n\n`;
      if (!res.write(frame)) await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
    }
  } finally {
    clearInterval(keepalive);
    res.end();
  }
}

async function readJson(req) {
  let size = 0;
  const chunks = [];
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Refused(413, "the body is over 1 MiB");
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new Refused(400, "the body is not JSON");
  }
}

function send(res, status, body) {
  if (res.headersSent) return res.end();
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

server.listen(PORT, HOST, () => {
  const { port } = server.address();
  console.log(`agents on http://${HOST}:${port}/agents (pid ${process.pid}; database ${DB_FILE}; model ${agents.model.id})`);
  if (resumed.length) console.log(`resumed ${resumed.length} interrupted run(s): ${resumed.join(", ")}`);
});
// Stopping is like a crash to the agents: what runs now resumes on the next start.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    store.close();
    process.exit(0);
  });
}
