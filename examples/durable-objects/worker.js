// agent-loop-wasm on Cloudflare Durable Objects: one object per agent id, its checkpoints in the object's SQLite
// storage, runs resumed after eviction, a crash or a restart. Deployable unchanged with wrangler (wrangler.toml) or
// run locally on workerd (`node examples/durable-objects/serve.mjs`).
//
//   POST /agents/:id/prompt     {"text": "...", "images"?: [{"data": base64, "mimeType": "image/png"}]}
//                                                 starts a run (202), 409 while one is running
//   POST /agents/:id/steer      {"text": "..."}   queues a steering message (202)
//   POST /agents/:id/follow-up  {"text": "..."}   queues a follow-up (202)
//   POST /agents/:id/abort                        aborts the run (202)
//   GET  /agents/:id                              the agent's state (JSON), with the wasm memory it took so far
//   GET  /agents/:id/events                       the live events (Server-Sent Events)
import { DurableObject } from "cloudflare:workers";
import { Agent, wasmMemoryBytes } from "agent-loop-wasm";
import { exampleTools } from "./tools.js";

/** Checkpoints kept as rows before they are folded into the stored snapshot. */
const COMPACT_AFTER = 200;
/** While a run is active an alarm stays armed: after eviction or a restart it wakes the object, which resumes. */
const HEARTBEAT_MS = 2000;

export class AgentObject extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.clients = new Set();
    this.settled = Promise.resolve();
    ctx.blockConcurrencyWhile(async () => {
      this.sql.exec("CREATE TABLE IF NOT EXISTS checkpoints (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)");
      this.sql.exec("CREATE TABLE IF NOT EXISTS snapshot (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL)");
      this.agent = this.load();
      // A run that a crash interrupted goes on now; an idle agent resolves at once.
      this.track(this.agent.resume());
    });
  }

  options() {
    const env = this.env;
    return {
      streamFn: undefined, // the built-in providers
      apiKey: env.MODEL_API_KEY || undefined,
      toolExecution: "parallel",
      // Each checkpoint is one row, written in its own implicit transaction before the run goes on.
      onCheckpoint: (checkpoint) => {
        this.sql.exec("INSERT OR REPLACE INTO checkpoints (seq, body) VALUES (?, ?)", checkpoint.seq, JSON.stringify(checkpoint));
      },
    };
  }

  /** The agent as storage holds it: the snapshot, then the checkpoints after it; a new agent when empty. */
  load() {
    const snapshot = this.sql.exec("SELECT body FROM snapshot").toArray()[0]?.body;
    const rows = this.sql.exec("SELECT body FROM checkpoints ORDER BY seq").toArray().map((r) => r.body);
    const tools = exampleTools(this.env);
    const agent =
      snapshot || rows.length
        ? Agent.restore(snapshot ? [snapshot, ...rows] : rows, { ...this.options(), tools })
        : new Agent({ ...this.options(), initialState: { model: this.model(), tools, systemPrompt: this.env.SYSTEM_PROMPT ?? "" } });
    agent.subscribe((event) => {
      if (event.type === "agent_start") this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
      this.broadcast(event);
    });
    return agent;
  }

  model() {
    const env = this.env;
    return {
      id: env.MODEL_ID ?? "gpt-4o-mini",
      name: env.MODEL_ID ?? "gpt-4o-mini",
      api: env.MODEL_API ?? "openai-completions",
      provider: env.MODEL_PROVIDER ?? "openai",
      baseUrl: env.MODEL_URL ?? "https://api.openai.com/v1",
      reasoning: false,
      input: ["text", "image"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 128000,
      maxTokens: 4096,
    };
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

  broadcast(event) {
    const line = new TextEncoder().encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    for (const writer of this.clients) writer.write(line).catch(() => this.clients.delete(writer));
  }

  async fetch(request) {
    const url = new URL(request.url);
    const action = url.pathname.split("/")[3] ?? "";
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
        this.track(this.agent.prompt(await message()));
        return accepted();
      }
      if (request.method === "POST" && action === "steer") return this.agent.steer(await message()), accepted();
      if (request.method === "POST" && action === "follow-up") return this.agent.followUp(await message()), accepted();
      if (request.method === "POST" && action === "abort") return this.agent.abort(), accepted();
      if (request.method === "GET" && action === "events") {
        const { readable, writable } = new TransformStream();
        const writer = writable.getWriter();
        this.clients.add(writer);
        request.signal?.addEventListener("abort", () => this.clients.delete(writer));
        return new Response(readable, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
      }
      if (request.method === "GET" && action === "") return Response.json(this.describe());
      return Response.json({ error: "not found" }, { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.message ?? error) }, { status: 400 });
    }
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
      storage: { checkpoints: rows, bytes, seq: snapshot.checkpointSeq },
      // The isolate's wasm memory (all objects share one instance): never shrinks, so this is its peak so far.
      wasmMemoryBytes: wasmMemoryBytes(),
    };
  }
}

export default {
  async fetch(request, env) {
    const match = /^\/agents\/([^/]+)(\/[a-z-]*)?$/.exec(new URL(request.url).pathname);
    if (!match) return Response.json({ error: "not found" }, { status: 404 });
    const id = env.AGENTS.idFromName(decodeURIComponent(match[1]));
    return env.AGENTS.get(id).fetch(request);
  },
};
