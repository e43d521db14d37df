// The agents of the server, one per id, each checkpointing to the store: created on a first prompt, restored from their
// rows at start (and the runs a crash interrupted resumed), decided on over HTTP when calls wait for approval. It knows
// no HTTP beyond the status a refusal carries (Refused).
import { Agent, streamBuiltin } from "agent-loop-wasm";
import { SCRIPTED_MODEL, scriptedStreamFn } from "./scripted-model.mjs";
import { billingTools } from "./tools.mjs";

/** A request the agents refuse, with the HTTP status that says why. */
export class Refused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * The model of new agents: OpenAI when OPENAI_API_KEY is set (MODEL, default gpt-4o-mini; OPENAI_BASE_URL for another
 * OpenAI-compatible server), else the scripted stand-in. A stored agent keeps the model it was created with.
 */
export function chooseModel(env) {
  if (!env.OPENAI_API_KEY) return SCRIPTED_MODEL;
  const id = env.MODEL || "gpt-4o-mini";
  return {
    id,
    name: id,
    api: "openai-completions",
    provider: "openai",
    baseUrl: env.OPENAI_BASE_URL || "https://api.openai.com/v1",
    reasoning: false,
    input: ["text", "image"],
    // gpt-4o-mini's prices in USD per million tokens (another MODEL has its own: these are then only estimates).
    cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 16384,
  };
}

export class Agents {
  /** @param {{ store: import("./store.mjs").Store, env: Record<string, string | undefined> }} options */
  constructor({ store, env }) {
    this.store = store;
    this.env = env;
    this.model = chooseModel(env);
    this.approvalAboveCents = Number(env.APPROVAL_ABOVE_CENTS ?? 1000);
    /** Checkpoint rows an idle agent keeps before they are folded into its snapshot. */
    this.compactAfter = Number(env.COMPACT_AFTER ?? 200);
    const scripted = scriptedStreamFn({ chunkDelayMs: Number(env.SCRIPTED_DELAY_MS ?? 5) });
    // The scripted stand-in answers for its own model, the built-in providers for every other one.
    this.streamFn = (model, context, options) => (model.provider === SCRIPTED_MODEL.provider ? scripted : streamBuiltin)(model, context, options);
    /** @type {Map<string, Agent>} */
    this.agents = new Map();
  }

  /** Restores every stored agent and resumes the runs a crash interrupted; returns the ids of the resumed ones. */
  restoreAll() {
    const resumed = [];
    for (const id of this.store.agentIds()) {
      const agent = Agent.restore(this.store.rows(id), { ...this.options(id), tools: this.tools(id) });
      this.agents.set(id, agent);
      // Resolves at once for an agent that was idle or waits for approval.
      this.track(id, agent.resume());
      if (agent.state.isStreaming) resumed.push(id);
    }
    return resumed;
  }

  get(id) {
    const agent = this.agents.get(id);
    if (!agent) throw new Refused(404, `no agent "${id}"`);
    return agent;
  }

  ids() {
    return [...this.agents.keys()];
  }

  /** Starts a run on `text`, creating the agent on its first prompt. */
  prompt(id, text) {
    let agent = this.agents.get(id);
    if (agent?.state.isStreaming) throw new Refused(409, "the agent is running");
    const waiting = agent?.state.pendingApprovals.map((r) => r.toolCallId) ?? [];
    if (waiting.length) {
      throw new Refused(409, `tool calls wait for approval (${waiting.join(", ")}): POST /agents/:id/approvals/:toolCallId for each first`);
    }
    if (!agent) {
      const systemPrompt =
        "You are a billing assistant. charge_card charges a customer's card (amounts in euro cents) and send_message " +
        `writes to a customer; call independent tools together. Charges above ${this.approvalAboveCents} cents wait ` +
        "for a person's approval before they run.";
      agent = new Agent({ ...this.options(id), initialState: { model: this.model, systemPrompt, tools: this.tools(id) } });
      this.agents.set(id, agent);
    }
    this.track(id, agent.prompt(text));
  }

  /**
   * A person's decision `{ approved, reason?, arguments? }` on a call waiting for approval (already checked for
   * shape). The agent writes the decision's checkpoint, and for the last waiting call the start of the run it
   * continues, before approve()/deny() returns: those rows and the decision's row are one transaction. Returns
   * `{ running, waiting }`: running when the decision settled the last waiting call (the run goes on).
   */
  async decide(id, toolCallId, body) {
    const agent = this.get(id);
    const decided = this.store.decision(id, toolCallId);
    if (decided !== undefined) throw new Refused(409, `tool call "${toolCallId}" was already ${decided ? "approved" : "denied"}`);
    const isWaiting = () => agent.state.pendingApprovals.some((r) => r.toolCallId === toolCallId);
    if (!isWaiting()) throw new Refused(404, `no tool call "${toolCallId}" is waiting for approval`);
    let decision;
    this.store.transaction(() => {
      decision = body.approved
        ? agent.approve(toolCallId, body.arguments === undefined ? {} : { args: body.arguments })
        : agent.deny(toolCallId, body.reason === undefined ? {} : { reason: body.reason });
      if (!isWaiting()) this.store.saveDecision(id, toolCallId, body);
    });
    if (isWaiting()) {
      // Refused by the agent: edited arguments that fail validation reject the promise with the validator's text.
      const error = await decision.then(() => undefined, (e) => e);
      throw new Refused(400, String(error?.message ?? error).replace(/^Agent\.approve: options\.args of /, '"arguments" of '));
    }
    const waiting = agent.state.pendingApprovals.map((r) => r.toolCallId);
    const running = agent.state.isStreaming;
    if (running) this.track(id, decision);
    else await decision;
    return { running, waiting };
  }

  /** The agent's state as GET /agents/:id shows it. */
  describe(id) {
    const state = this.get(id).state;
    return {
      id,
      isStreaming: state.isStreaming,
      errorMessage: state.errorMessage,
      model: state.model.id,
      messages: state.messages,
      pendingToolCalls: [...state.pendingToolCalls],
      // The calls waiting for a person, in request order: {toolCallId, toolName, args, reason?, data?}.
      pendingApprovals: state.pendingApprovals,
      // The effects the tools made (one row per call; `times` counts its executions).
      ledger: this.store.ledger(id),
      storage: this.store.checkpointRows(id),
    };
  }

  options(id) {
    return {
      streamFn: this.streamFn,
      getApiKey: (provider) => (provider === "openai" ? this.env.OPENAI_API_KEY : undefined),
      toolExecution: "parallel",
      // Each checkpoint is one row, written (synchronously, atomically) before the run goes on.
      onCheckpoint: (checkpoint) => this.store.saveCheckpoint(id, checkpoint),
    };
  }

  tools(id) {
    const ledger = { record: (toolCallId, tool, args) => this.store.record(id, toolCallId, tool, args) };
    return billingTools({ agentId: id, effectsUrl: this.env.EFFECTS_URL || undefined, approvalAboveCents: this.approvalAboveCents, ledger });
  }

  /** Keeps a run's promise: logs a failure, and once the agent is idle folds old checkpoint rows into its snapshot. */
  track(id, run) {
    run.then(
      () => this.idle(id),
      (error) => {
        console.error(`agent ${id}: ${error?.message ?? error}`);
        this.idle(id);
      },
    );
  }

  idle(id) {
    const agent = this.agents.get(id);
    if (agent.state.isStreaming || this.store.checkpointRows(id).n < this.compactAfter) return;
    this.store.compact(id, agent.snapshot());
  }
}
