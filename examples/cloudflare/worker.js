// agent-loop-wasm on Cloudflare Durable Objects: one object per agent id, its checkpoints in the object's SQLite
// storage, runs resumed after eviction, a crash or a restart. Deployed with wrangler (`npm run deploy`) or run locally
// on workerd (`npm run dev`). Every request needs `Authorization: Bearer <AUTH_TOKEN>` (access.js).
//
//   POST /agents/:id/prompt     {"text": "...", "images"?: [{"data": base64, "mimeType": "image/png"}]}
//                                                 starts a run (202), 409 while one is running or calls wait
//                                                 for approval
//   POST /agents/:id/steer      {"text": "..."}   queues a steering message (202)
//   POST /agents/:id/follow-up  {"text": "..."}   queues a follow-up (202)
//   POST /agents/:id/abort                        aborts the run (202)
//   GET  /agents/:id                              the agent's state (JSON): pendingApprovals, charges, effects, the
//                                                 wasm memory it took so far
//   GET  /agents/:id/messages                     the transcript (the agent's messages, JSON array)
//   GET  /agents/:id/chats/:id                    the chat's history as UIMessage[] (toUIMessages), for useChat's
//                                                 initial `messages` when a page loads (the react-chat example's
//                                                 `<base>/chats/<chat id>` with base /agents/:id)
//   GET  /agents/:id/events                       the agent's events (Server-Sent Events), resumable: each frame has
//                                                 `id: <seq>`; a client sends `Last-Event-ID` (or `?after=<seq>`) and
//                                                 first gets what it missed, or an `agent_sync` (issue 31)
//   POST /agents/:id/chat                         the AI SDK's chat request (useChat, DefaultChatTransport: {"messages":
//                                                 UIMessage[], ...}); answers the UI message stream of the run. The
//                                                 object keeps the transcript: only the last posted message is read,
//                                                 a user message (the prompt) or an assistant message whose tool
//                                                 parts hold approval responses (the decisions). 409 as for prompt
//   GET  /agents/:id/chat/stream                  the reconnect (useChat's `resume: true`; also at
//                                                 /agents/:id/chat/:id/stream, the default transport's URL when the
//                                                 chat id is the agent id): 204 when no run is under way, else the
//                                                 current answer replayed from its start, then live (issue 31)
//   POST /agents/:id/approvals/:toolCallId  {"approved": true|false, "reason"?: "...", "arguments"?: {...}}
//                                                 decides a call waiting for approval: 202 when it was the last one
//                                                 (the run goes on), 200 while others wait; 400 bad body or invalid
//                                                 arguments, 404 unknown agent or call, 409 already decided
import { DurableObject } from "cloudflare:workers";
import { Agent, BUILTIN_APIS, wasmMemoryBytes } from "agent-loop-wasm";
import { convertToAgentMessages, resumeUIMessageStreamResponse, toolApprovalDecisions, toUIMessageStreamResponse, toUIMessages } from "agent-loop-wasm/ui";
import { accessConfigError, allowOrigin, answerPreflight, refuseUnauthorized } from "./access.js";
import { OFFLINE_MODEL, configuredModel, modelConfigError, offlineStreamFn } from "./model.js";
import { exampleTools } from "./tools.js";

/** Checkpoints kept as rows before they are folded into the stored snapshot. */
const COMPACT_AFTER = 200;
/** While a run is active an alarm stays armed: after eviction or a restart it wakes the object, which resumes. */
const HEARTBEAT_MS = 2000;
/** An event stream with nothing to send writes a comment line this often (proxies close silent connections). */
const KEEPALIVE_MS = 15000;

export class AgentObject extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    /** The open event streams (each holds one `agent.events()` reader until its client goes). */
    this.streams = new Set();
    this.settled = Promise.resolve();
    ctx.blockConcurrencyWhile(async () => {
      this.sql.exec("CREATE TABLE IF NOT EXISTS checkpoints (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)");
      this.sql.exec("CREATE TABLE IF NOT EXISTS snapshot (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL)");
      // Issue 30: each decision a person made (answers a repeated one with 409 after the run went on), and the ledger
      // of charges that ran, one row per tool call (`times` counts executions: exactly once is 1).
      this.sql.exec("CREATE TABLE IF NOT EXISTS decisions (tool_call_id TEXT PRIMARY KEY, approved INTEGER NOT NULL, body TEXT NOT NULL)");
      this.sql.exec("CREATE TABLE IF NOT EXISTS charges (tool_call_id TEXT PRIMARY KEY, cents REAL NOT NULL, times INTEGER NOT NULL)");
      // The effects `record_effect` made when EFFECTS_URL is unset (then this table is the only external system).
      this.sql.exec("CREATE TABLE IF NOT EXISTS effects (tool_call_id TEXT PRIMARY KEY, key TEXT NOT NULL, times INTEGER NOT NULL)");
      // Issue 31: the message id of the chat answer under way, so that a resume (in this process or after a restart)
      // streams it under the id the client has.
      this.sql.exec("CREATE TABLE IF NOT EXISTS chat (id INTEGER PRIMARY KEY CHECK (id = 1), message_id TEXT NOT NULL)");
      // Each chat run: where it began in the transcript and the message id it streamed with, so the history
      // (toUIMessages' `runs`) gives every answer the id the page saw, and a page loaded mid-answer resumes onto it.
      this.sql.exec("CREATE TABLE IF NOT EXISTS chat_runs (start INTEGER NOT NULL, message_id TEXT NOT NULL)");
      this.agent = this.load();
      // A run that a crash interrupted goes on now; an idle agent resolves at once.
      this.track(this.agent.resume());
    });
  }

  options() {
    const env = this.env;
    return {
      // The offline script, else the built-in providers (model.js).
      streamFn: configuredModel(env) === OFFLINE_MODEL ? offlineStreamFn : undefined,
      apiKey: env.MODEL_API_KEY || undefined,
      toolExecution: "parallel",
      // Each checkpoint is one row, written in its own implicit transaction before the run goes on.
      onCheckpoint: (checkpoint) => {
        this.sql.exec("INSERT OR REPLACE INTO checkpoints (seq, body) VALUES (?, ?)", checkpoint.seq, JSON.stringify(checkpoint));
        this.stored = true;
      },
    };
  }

  /** The agent as storage holds it: the snapshot, then the checkpoints after it; a new agent when empty. */
  load() {
    const snapshot = this.sql.exec("SELECT body FROM snapshot").toArray()[0]?.body;
    const rows = this.sql.exec("SELECT body FROM checkpoints ORDER BY seq").toArray().map((r) => r.body);
    const ledger = {
      charged: (toolCallId, cents) =>
        this.sql.exec(
          "INSERT INTO charges (tool_call_id, cents, times) VALUES (?, ?, 1) ON CONFLICT (tool_call_id) DO UPDATE SET times = times + 1",
          toolCallId,
          cents,
        ),
      effect: (toolCallId, key) =>
        this.sql.exec(
          "INSERT INTO effects (tool_call_id, key, times) VALUES (?, ?, 1) ON CONFLICT (tool_call_id) DO UPDATE SET times = times + 1",
          toolCallId,
          key,
        ),
    };
    const tools = exampleTools(this.env, ledger);
    /** Whether storage holds this agent (a prompt reached it), or the object was only named. */
    this.stored = Boolean(snapshot || rows.length);
    const model = configuredModel(this.env);
    const agent =
      snapshot || rows.length
        ? Agent.restore(snapshot ? [snapshot, ...rows] : rows, { ...this.options(), tools })
        : new Agent({ ...this.options(), initialState: { model, tools, systemPrompt: this.env.SYSTEM_PROMPT ?? "" } });
    // A stored agent follows the configuration: after MODEL_* changed, its next request goes to the new model.
    const same = (a, b) => ["id", "api", "provider", "baseUrl"].every((k) => a?.[k] === b[k]);
    if (!same(agent.state.model, model)) agent.state.model = model;
    agent.subscribe((event) => {
      if (event.type === "agent_start") this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
    });
    return agent;
  }

  /** Keeps a run's promise; when the agent is idle again, folds old checkpoints into the snapshot. */
  track(run) {
    this.settled = run.then(
      () => this.idle(),
      () => this.idle(),
    );
  }

  async idle() {
    if (this.agent.state.isStreaming) return;
    await this.ctx.storage.deleteAlarm();
    const [{ n }] = this.sql.exec("SELECT COUNT(*) AS n FROM checkpoints").toArray();
    if (n < COMPACT_AFTER) return;
    const snapshot = this.agent.snapshot();
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("INSERT OR REPLACE INTO snapshot (id, body) VALUES (1, ?)", JSON.stringify(snapshot));
      this.sql.exec("DELETE FROM checkpoints WHERE seq <= ?", snapshot.checkpointSeq);
    });
  }

  async alarm() {
    // Waking up restored the agent and resumed its run (constructor); keep the heartbeat while it runs.
    if (this.agent.state.isStreaming) await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
  }

  /**
   * Issue 31: `GET /agents/:id/events` as Server-Sent Events from `agent.events({ after })`. Each item is one frame:
   * `id: <seq>`, `event: <event.type>` and `data: <the event as JSON>` (the event object as listeners get it); an item
   * that is replayed (what the client missed, or the `agent_sync` that replaces its state) has a `: replay` comment
   * line first, and the first item after the client fell behind a `: behind` line too (EventSource ignores both; the
   * reducer needs neither). `after` is the `Last-Event-ID` header, else the `after` query parameter; a value that is
   * not a number this object gave starts with an `agent_sync` (so `?after=0` means "send me the state first"); with
   * neither the stream is live only. When the client goes, the body is cancelled, which ends the reader
   * (`return()`): the object keeps nothing for it.
   */
  events(request, url) {
    const header = request.headers.get("last-event-id");
    const raw = header !== null && header.trim() !== "" ? header : url.searchParams.get("after");
    const after = raw === null ? undefined : Number.isFinite(Number(raw)) && raw.trim() !== "" ? Number(raw) : 0;
    const iterator = this.agent.events({ after });
    const encoder = new TextEncoder();
    const keepalive = Number(this.env.EVENTS_KEEPALIVE_MS || KEEPALIVE_MS);
    let timer;
    const streams = this.streams;
    const body = new ReadableStream({
      start(controller) {
        streams.add(iterator);
        // A first line at once: the client sees the response start before any event.
        controller.enqueue(encoder.encode(": agent-loop-wasm events\n\n"));
        timer = setInterval(() => controller.enqueue(encoder.encode(": keepalive\n\n")), keepalive);
      },
      async pull(controller) {
        const { done, value } = await iterator.next();
        if (done) {
          clearInterval(timer);
          streams.delete(iterator);
          try {
            controller.close();
          } catch {
            // cancelled: the client went
          }
          return;
        }
        const marks = (value.replay ? ": replay\n" : "") + (value.behind ? ": behind\n" : "");
        const frame = `${marks}id: ${value.seq}\nevent: ${value.event.type}\ndata: ${JSON.stringify(value.event)}\n\n`;
        controller.enqueue(encoder.encode(frame));
      },
      async cancel() {
        clearInterval(timer);
        // Ends the reader: the journal forgets it, and a next() answers done at once (it would wait for an event).
        await iterator.return();
        if ((await iterator.next()).done) streams.delete(iterator);
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  }

  /**
   * Issue 31: `POST /agents/:id/chat`, the AI SDK's chat request. The object keeps the transcript (a client must not
   * rewrite it), so only the last posted message is read: a user message is the prompt; an assistant message whose
   * tool parts hold approval responses (`addToolApprovalResponse`) gives the decisions, taken as
   * `POST …/approvals/:toolCallId` takes them, and the run they continue streams into that same message.
   */
  async chat(request) {
    const body = await request.json();
    const messages = Array.isArray(body?.messages) ? body.messages : null;
    if (!messages || messages.length === 0) return Response.json({ error: 'the body must be JSON {"messages": UIMessage[]}' }, { status: 400 });
    if (this.agent.state.isStreaming) return Response.json({ error: "the agent is running: GET /agents/:id/chat/stream resumes its answer" }, { status: 409 });
    const last = messages[messages.length - 1];
    let messageId;
    let run;
    if (last?.role === "user") {
      const waiting = this.agent.state.pendingApprovals.map((r) => r.toolCallId);
      if (waiting.length) return Response.json({ error: `tool calls wait for approval (${waiting.join(", ")}): answer them first` }, { status: 409 });
      const [prompt] = convertToAgentMessages([last], { model: this.agent.state.model });
      if (!prompt) return Response.json({ error: "the last message holds nothing to send" }, { status: 400 });
      messageId = crypto.randomUUID();
      run = () => {
        const running = this.agent.prompt(prompt);
        this.track(running);
        return running;
      };
    } else {
      const decisions = toolApprovalDecisions(messages);
      if (decisions.length === 0) return Response.json({ error: "the last message is neither a user message nor approval responses" }, { status: 400 });
      for (const d of decisions) {
        if (!this.agent.state.pendingApprovals.some((r) => r.toolCallId === d.toolCallId)) {
          return Response.json({ error: `no tool call "${d.toolCallId}" is waiting for approval` }, { status: 404 });
        }
      }
      messageId = last.id;
      run = async () => {
        for (const d of decisions) {
          const { decision, running } = this.take(d.toolCallId, { approved: d.approved, ...(d.reason === undefined ? {} : { reason: d.reason }) });
          if (running) this.track(decision);
          await decision;
        }
      };
    }
    this.sql.exec("INSERT OR REPLACE INTO chat (id, message_id) VALUES (1, ?)", messageId);
    this.sql.exec("INSERT INTO chat_runs (start, message_id) VALUES (?, ?)", this.agent.state.messages.length, messageId);
    return toUIMessageStreamResponse(this.agent, { messageId, originalMessages: messages, run });
  }

  /** The chat's history as the page shows it: `toUIMessages` with each run's id and the approvals decided and waiting. */
  chatHistory() {
    const runs = this.sql.exec("SELECT start, message_id FROM chat_runs ORDER BY rowid").toArray().map((r) => ({ start: r.start, messageId: r.message_id }));
    const decisions = this.sql.exec("SELECT tool_call_id, approved, body FROM decisions").toArray().map((r) => {
      const reason = JSON.parse(r.body).reason;
      return { toolCallId: r.tool_call_id, approved: Boolean(r.approved), ...(typeof reason === "string" ? { reason } : {}) };
    });
    const pendingApprovals = this.agent.state.pendingApprovals;
    // While calls wait, the batch's other calls have ended, but their results enter the transcript with the decisions.
    const completedTools = pendingApprovals.length ? this.agent.snapshot().approvals?.completedTools : undefined;
    return toUIMessages(this.agent.state.messages, { runs, pendingApprovals, approvals: { requests: [], decisions, completedTools } });
  }

  /** Issue 31: the reconnect of a chat client: 204 when no run is under way, else the current answer from its start. */
  chatStream(request) {
    const messageId = this.sql.exec("SELECT message_id FROM chat").toArray()[0]?.message_id;
    return resumeUIMessageStreamResponse(this.agent, { ...(messageId ? { messageId } : {}), signal: request.signal });
  }

  async fetch(request) {
    const url = new URL(request.url);
    const [, , name, action = "", toolCallId, rest] = url.pathname.split("/");
    const message = async () => {
      const body = await request.json();
      const text = String(body.text ?? "");
      // Screenshots and photos go with the text as image blocks; they stay JS strings, out of the wasm memory.
      const images = Array.isArray(body.images) ? body.images : [];
      const content = images.length
        ? [{ type: "text", text }, ...images.map((i) => ({ type: "image", data: String(i.data), mimeType: String(i.mimeType ?? "image/png") }))]
        : text;
      return { role: "user", content, timestamp: Date.now() };
    };
    const accepted = () => Response.json({ accepted: true }, { status: 202 });
    try {
      if (request.method === "POST" && action === "prompt") {
        if (this.agent.state.isStreaming) return Response.json({ error: "the agent is running: steer or follow up" }, { status: 409 });
        const waiting = this.agent.state.pendingApprovals.map((r) => r.toolCallId);
        if (waiting.length) {
          const error = `tool calls wait for approval (${waiting.join(", ")}): POST /agents/:id/approvals/:toolCallId for each first`;
          return Response.json({ error }, { status: 409 });
        }
        this.track(this.agent.prompt(await message()));
        return accepted();
      }
      if (request.method === "POST" && action === "steer") return this.agent.steer(await message()), accepted();
      if (request.method === "POST" && action === "follow-up") return this.agent.followUp(await message()), accepted();
      if (request.method === "POST" && action === "abort") return this.agent.abort(), accepted();
      if (request.method === "GET" && action === "events") return this.events(request, url);
      // The transcript in the agent's own format. To become toUIMessages(messages) (agent-loop-wasm/ui) for useChat's
      // initial `messages`.
      if (request.method === "GET" && action === "messages" && toolCallId === undefined) return Response.json(this.agent.state.messages);
      if (request.method === "GET" && action === "chats" && toolCallId === name && rest === undefined) return Response.json(this.chatHistory());
      if (request.method === "POST" && action === "chat" && toolCallId === undefined) return await this.chat(request);
      if (request.method === "GET" && action === "chat" && (toolCallId === "stream" || (toolCallId === name && rest === "stream"))) {
        return this.chatStream(request);
      }
      if (request.method === "POST" && action === "approvals" && toolCallId) {
        return this.decide(decodeURIComponent(name), decodeURIComponent(toolCallId), request);
      }
      if (request.method === "GET" && action === "") return Response.json(this.describe());
      return Response.json({ error: "not found" }, { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.message ?? error) }, { status: 400 });
    }
  }

  /**
   * Issue 30: a person's decision on a call waiting for approval, checked before it reaches the agent. Its checkpoint
   * row and the decision row are one transaction; the heartbeat alarm of the run it continues is set in the same turn.
   * The agent refuses a second decision for a call and runs an approved call once; the ledger row written by
   * `charge_card` shows it.
   */
  async decide(name, toolCallId, request) {
    const fail = (status, error) => Response.json({ error }, { status });
    const shape = 'the body must be JSON {"approved": true|false, "reason"?: string, "arguments"?: object}';
    let body;
    try {
      body = await request.json();
    } catch {
      return fail(400, shape);
    }
    const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
    if (!isObject(body) || typeof body.approved !== "boolean") return fail(400, shape);
    if (body.reason !== undefined && typeof body.reason !== "string") return fail(400, `${shape}: "reason" is not a string`);
    if (body.arguments !== undefined && !isObject(body.arguments)) return fail(400, `${shape}: "arguments" is not an object`);
    if (body.arguments !== undefined && !body.approved) return fail(400, `${shape}: "arguments" go with "approved": true only`);
    if (!this.stored) return fail(404, `no agent "${name}"`);
    const decided = this.sql.exec("SELECT approved FROM decisions WHERE tool_call_id = ?", toolCallId).toArray()[0];
    if (decided) return fail(409, `tool call "${toolCallId}" was already ${decided.approved ? "approved" : "denied"}`);
    if (!this.agent.state.pendingApprovals.some((r) => r.toolCallId === toolCallId)) {
      return fail(404, `no tool call "${toolCallId}" is waiting for approval`);
    }
    const { decision, taken, running } = this.take(toolCallId, body);
    if (!taken) {
      // Refused: edited arguments that fail validation reject the promise.
      try {
        await decision;
      } catch (error) {
        return fail(400, String(error?.message ?? error).replace(/^Agent\.approve: options\.args of /, '"arguments" of '));
      }
      return fail(500, `the decision on tool call "${toolCallId}" was neither taken nor refused`);
    }
    const waiting = this.agent.state.pendingApprovals.map((r) => r.toolCallId);
    if (running) {
      this.track(decision);
      return Response.json({ decided: toolCallId, approved: body.approved, running: true, waiting }, { status: 202 });
    }
    await decision;
    return Response.json({ decided: toolCallId, approved: body.approved, running: false, waiting });
  }

  /**
   * A checked decision `{ approved, reason?, arguments? }` given to the agent. The agent writes the decision's
   * checkpoint (and, for the last one, the run's start) before approve()/deny() returns; it is taken exactly when the
   * call left pendingApprovals, and then recorded in the same transaction. The last decision starts the run: the
   * alarm wakes the object to resume it if it is evicted or crashes. `taken` false: refused (the promise rejects).
   */
  take(toolCallId, body) {
    const isWaiting = () => this.agent.state.pendingApprovals.some((r) => r.toolCallId === toolCallId);
    let decision;
    this.ctx.storage.transactionSync(() => {
      decision = body.approved
        ? this.agent.approve(toolCallId, body.arguments === undefined ? {} : { args: body.arguments })
        : this.agent.deny(toolCallId, body.reason === undefined ? {} : { reason: body.reason });
      if (!isWaiting()) {
        this.sql.exec("INSERT INTO decisions (tool_call_id, approved, body) VALUES (?, ?, ?)", toolCallId, body.approved ? 1 : 0, JSON.stringify(body));
      }
    });
    const taken = !isWaiting();
    const running = taken && this.agent.state.isStreaming;
    if (running) this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
    return { decision, taken, running };
  }

  describe() {
    const state = this.agent.state;
    const snapshot = this.agent.snapshot();
    const [{ rows, bytes }] = this.sql.exec("SELECT COUNT(*) AS rows, COALESCE(SUM(LENGTH(body)), 0) AS bytes FROM checkpoints").toArray();
    return {
      isStreaming: state.isStreaming,
      errorMessage: state.errorMessage,
      messages: state.messages,
      steeringQueue: snapshot.steeringQueue,
      followUpQueue: snapshot.followUpQueue,
      // Issue 30: the calls waiting for a person, in request order ({toolCallId, toolName, args, reason?, data?,
      // expiresAt?}), and the charges that ran.
      pendingApprovals: state.pendingApprovals,
      charges: this.sql.exec("SELECT tool_call_id AS toolCallId, cents, times FROM charges ORDER BY tool_call_id").toArray(),
      // The effects recorded here when EFFECTS_URL is unset (with it, the endpoint holds them).
      effects: this.sql.exec("SELECT tool_call_id AS toolCallId, key, times FROM effects ORDER BY tool_call_id").toArray(),
      storage: { checkpoints: rows, bytes, seq: snapshot.checkpointSeq },
      // The isolate's wasm memory (all objects share one instance): never shrinks, so this is its peak so far.
      wasmMemoryBytes: wasmMemoryBytes(),
      // Issue 31: the event streams open now (each one reader of agent.events(); 0 once their clients went).
      eventStreams: this.streams.size,
    };
  }
}

/** What makes the configuration unusable (the Worker then answers every request with it, as a 500), or undefined. */
function configError(env) {
  const given = (name) => env[name] !== undefined && env[name] !== "";
  const access = accessConfigError(env);
  if (access) return access;
  if (given("CHARGE_APPROVAL_ABOVE_CENTS") && !(Number(env.CHARGE_APPROVAL_ABOVE_CENTS) >= 0)) {
    return `CHARGE_APPROVAL_ABOVE_CENTS "${env.CHARGE_APPROVAL_ABOVE_CENTS}" is not a number of cents`;
  }
  if (given("EVENTS_KEEPALIVE_MS") && !(Number(env.EVENTS_KEEPALIVE_MS) > 0)) {
    return `EVENTS_KEEPALIVE_MS "${env.EVENTS_KEEPALIVE_MS}" is not a positive number of milliseconds`;
  }
  return modelConfigError(env, BUILTIN_APIS);
}

const AGENT_ROUTE = /^\/agents\/([^/]+)(\/[a-z-]*|\/approvals\/[^/]+|\/chat\/stream|\/chat\/[^/]+\/stream|\/chats\/[^/]+)?$/;

export default {
  async fetch(request, env) {
    const problem = configError(env);
    if (problem) return Response.json({ error: problem }, { status: 500 });
    const preflight = answerPreflight(request, env);
    if (preflight) return preflight;
    // Before routing: without the token nothing is told, not even which paths exist.
    const refused = await refuseUnauthorized(request, env.AUTH_TOKEN);
    if (refused) return allowOrigin(refused, request, env);
    const match = AGENT_ROUTE.exec(new URL(request.url).pathname);
    if (!match) return allowOrigin(Response.json({ error: "not found" }, { status: 404 }), request, env);
    const id = env.AGENTS.idFromName(decodeURIComponent(match[1]));
    return allowOrigin(await env.AGENTS.get(id).fetch(request), request, env);
  },
};
