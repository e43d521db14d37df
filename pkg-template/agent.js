// The `Agent` facade (§5): a subclassable class whose methods forward to the Rust core. The
// agent's values live in a plain state object kept in a WeakMap, handed to every core call.
import core, { unlessTrapped } from "./trap.js";
import { getDefaultStreamFn } from "./api.js";
import { registerCompaction } from "./lazy.js";
import { failureMessage } from "./ending.js";
import { events, transcriptReplaced } from "./journal.js";
import { codedError } from "./errors.js";
import { copyUsage } from "./usage.js";

/**
 * The state object of one agent, kept in `internals` and handed to every core call. Its fields are defined once,
 * in `KEYS` of src/core/agent_state/mod.rs; tests/js/agent-state-keys.test.mjs holds this list to it.
 * @typedef {object} AgentStateObject
 * @property {object} model the Model; agent.state.model
 * @property {string} thinkingLevel "off" or a reasoning level; agent.state.thinkingLevel
 * @property {object[]} tools the tools, a copy of the caller's array; agent.state.tools
 * @property {object[]} messages the transcript; agent.state.messages
 * @property {boolean} isStreaming a run is in progress; agent.state.isStreaming
 * @property {object | undefined} streamingMessage the partial assistant message while it streams
 * @property {Set<string>} pendingToolCalls a Set of the ids of tool calls executing now
 * @property {string | undefined} errorMessage the last run's error, if it ended with one
 * @property {object[]} steering the steering queue
 * @property {object[]} followUp the follow-up queue
 * @property {string} steeringMode "all" or "one-at-a-time"
 * @property {string} followUpMode "all" or "one-at-a-time"
 * @property {object[]} steeringLeftByAbort steering an aborted run left queued, delivered first by the next prompt (issue 14.2)
 * @property {Set<Function>} listeners the Set of subscribed listeners
 * @property {object | undefined} active the run in progress: {controller, signal, promise, resolve}, else undefined
 * @property {Agent} agent the Agent instance the state belongs to
 * @property {Function | undefined} onCheckpoint the caller's checkpoint callback, or undefined (checkpoints off)
 * @property {object | undefined} ck checkpoint bookkeeping (core::checkpoint), present only when checkpoints are on
 * @property {object[]} transitSteering drained steering not yet in the transcript (still queued for checkpoints)
 * @property {object[]} transitFollowUp drained follow-ups not yet in the transcript
 * @property {object[]} completedTools ended tool calls whose result message is not in the transcript yet (kept across a restore)
 * @property {object[]} endedTools the same, since the last checkpoint
 * @property {boolean} interrupted a restored agent was mid-run: resume() picks it up
 * @property {object | undefined} approvals calls waiting for a person (issue 30): {requests, completedTools, decisions}, or undefined
 * @property {object[]} pendingApprovals the requests of approvals without a decision; agent.state.pendingApprovals
 * @property {object} totalUsage the agent's usage totals over its life (issue 32), all zero until a reply reports usage
 * @property {object} runUsage the usage totals of the current or last run (issue 32), all zero until a reply reports usage
 * @property {object | undefined} limitReached the limit that stopped the last run (issue 32): {limit, scope, max, value, message}
 * @property {object | undefined} view the agent.state object the facade hands out (made by pkg-template/agent.js on its first read)
 */

/**
 * A new state object: every field of `AgentStateObject` (KEYS' order), undefined until `agentInit` fills it. Made as
 * one literal so V8 gives it one fixed shape: the core's 28 keyed stores into an empty object turned it into a
 * dictionary (issue 43: ~2 KB and ~4 µs per Agent). tests/js/agent-state-keys.test.mjs holds it to KEYS.
 * @returns {AgentStateObject}
 */
function newStateObject() {
  return {
    model: undefined, thinkingLevel: undefined, tools: undefined, messages: undefined, isStreaming: undefined,
    streamingMessage: undefined, pendingToolCalls: undefined, errorMessage: undefined, steering: undefined,
    followUp: undefined, steeringMode: undefined, followUpMode: undefined, steeringLeftByAbort: undefined,
    listeners: undefined, active: undefined, agent: undefined, onCheckpoint: undefined, ck: undefined,
    transitSteering: undefined, transitFollowUp: undefined, completedTools: undefined, endedTools: undefined,
    interrupted: undefined, approvals: undefined, pendingApprovals: undefined, totalUsage: undefined,
    runUsage: undefined, limitReached: undefined, view: undefined,
  };
}

/** @type {WeakMap<Agent, AgentStateObject>} */
const internals = new WeakMap();
const STEERING = 0;
const FOLLOW_UP = 1;

function stateOf(agent) {
  const st = internals.get(agent);
  if (!st) throw codedError("INVALID_ARGUMENT", "Agent: method called on an object that is not an Agent");
  return st;
}

// A durable point for `onCheckpoint` (only agents that have one write checkpoints).
function changed(st) {
  if (st.ck !== undefined) core.agentStateChanged(st);
}

/** The reducer's part that the failure events below touch. */
function reduceFailure(st, event) {
  switch (event.type) {
    case "message_start":
      st.streamingMessage = event.message;
      break;
    case "message_end":
      st.streamingMessage = undefined;
      st.messages.push(event.message);
      break;
    case "turn_end":
      if (event.message.errorMessage) st.errorMessage = event.message.errorMessage;
      break;
    case "agent_end":
      st.streamingMessage = undefined;
      break;
  }
}

/**
 * E-8.4.2: the instance failed during the run `active`, so JS ends it as the core ends a run whose
 * listener failed: the failure events through the reducer and every listener (their errors
 * swallowed), then the agent becomes idle and `waitForIdle()` resolves.
 */
async function failRun(st, active, text) {
  if (st.active !== active) return;
  let aborted = false;
  try {
    aborted = active.signal.aborted === true;
  } catch {
    // a broken signal: not aborted
  }
  const failure = failureMessage(st.model, aborted ? "aborted" : "error", text);
  const events = [
    { type: "message_start", message: failure },
    { type: "message_end", message: failure },
    { type: "turn_end", message: failure, toolResults: [] },
    { type: "agent_end", messages: [failure] },
  ];
  for (const event of events) {
    try {
      reduceFailure(st, event);
    } catch {
      // a state replaced by a caller: the listeners still hear the event
    }
    // The live Set, as every other dispatch walks it (a listener subscribed meanwhile hears the event).
    try {
      for (const listener of st.listeners) {
        try {
          await listener(event, active.signal);
        } catch {
          //
        }
      }
    } catch {
      // no listener list to walk
    }
  }
  st.errorMessage = text;
  st.isStreaming = false;
  st.streamingMessage = undefined;
  st.pendingToolCalls = new Set();
  try {
    active.resolve();
  } finally {
    st.active = undefined;
  }
}

// The twins above, for tests/js/parity.test.mjs (not re-exported by the package).
export { failRun as __failRun, reduceFailure as __reduceFailure };

/** The promise of `prompt()`/`continue()`: the core's, or settled by `failRun` if the instance fails. */
function guardRun(st, before, start) {
  registerCompaction();
  const promise = start();
  const active = st.active;
  // Issue 30: whatever the run or decision changed in a pause, the approval deadline follows it.
  promise.then(() => armApprovalTimer(st), () => armApprovalTimer(st));
  if (active === undefined || active === before) return promise; // refused before it started
  return unlessTrapped(promise, async (text) => {
    await failRun(st, active, text);
  });
}

/** Per agent state: the timer that denies the next waiting call whose `expiresAt` passes (issue 30). */
const approvalTimers = new WeakMap();
const MAX_TIMER_MS = 2147483647;
const APPROVAL_TIMED_OUT = "approval timed out";

/**
 * Arms (or clears) the timer of the earliest `expiresAt` among the calls waiting for approval. When it fires, every
 * waiting call past its deadline is denied with the reason "approval timed out" (the last denial continues the run).
 * A pause without deadlines holds no timer.
 */
function armApprovalTimer(st) {
  clearTimeout(approvalTimers.get(st));
  approvalTimers.delete(st);
  if (st.approvals === undefined || st.active !== undefined) return;
  const deadlines = st.pendingApprovals.map((r) => r.expiresAt).filter((t) => typeof t === "number" && Number.isFinite(t));
  if (deadlines.length === 0) return;
  const wait = Math.min(Math.max(0, Math.min(...deadlines) - Date.now()), MAX_TIMER_MS);
  approvalTimers.set(st, setTimeout(() => {
    approvalTimers.delete(st);
    const now = Date.now();
    if (st.approvals === undefined || st.active !== undefined) return;
    const expired = st.pendingApprovals.filter((r) => typeof r.expiresAt === "number" && r.expiresAt <= now);
    if (expired.length === 0) return armApprovalTimer(st);
    // Each denial re-arms through guardRun; a call decided meanwhile refuses the denial, which changes nothing.
    for (const r of expired) st.agent.deny(r.toolCallId, { reason: APPROVAL_TIMED_OUT }).catch(() => {});
  }, wait));
}

/** The state object behind an `agent.state` view, in a slot of the view that is not enumerable. */
const VIEW_STATE = Symbol("agent-loop-wasm.state");

/**
 * The accessors of `agent.state`, in its key order: own, enumerable and configurable properties of each view, as an
 * object literal's would be (spread and `JSON.stringify` see them), but one set of functions for every agent, each
 * finding its state object through the view. Defined one by one (`VIEW_ACCESSORS`), the view keeps V8's fast shape;
 * a literal with accessors is a dictionary with a closure per accessor: ~2.1 KB per Agent instead of ~70 B (issue 43).
 */
const VIEW_ACCESSORS = Object.entries({
  systemPrompt: { get() { return core.agentSystemPrompt(this[VIEW_STATE]); } },
  model: {
    get() { return this[VIEW_STATE].model; },
    set(model) { const st = this[VIEW_STATE]; st.model = model; changed(st); },
  },
  thinkingLevel: {
    get() { return this[VIEW_STATE].thinkingLevel; },
    set(level) { const st = this[VIEW_STATE]; st.thinkingLevel = level; changed(st); },
  },
  tools: {
    get() { return this[VIEW_STATE].tools; },
    set(tools) {
      const st = this[VIEW_STATE];
      core.agentCheckArray(tools, "state.tools");
      st.tools = tools.slice();
      changed(st);
    },
  },
  messages: {
    get() { return this[VIEW_STATE].messages; },
    set(messages) {
      const st = this[VIEW_STATE];
      core.agentCheckArray(messages, "state.messages");
      st.messages = messages.slice();
      changed(st);
      transcriptReplaced(st);
    },
  },
  isStreaming: { get() { return this[VIEW_STATE].isStreaming; } },
  streamingMessage: { get() { return this[VIEW_STATE].streamingMessage; } },
  pendingToolCalls: { get() { return this[VIEW_STATE].pendingToolCalls; } },
  errorMessage: { get() { return this[VIEW_STATE].errorMessage; } },
  /** Issue 30: the tool calls waiting for a decision, in request order. */
  pendingApprovals: { get() { return this[VIEW_STATE].pendingApprovals; } },
  /** Issue 32: the agent's usage totals over its life (kept by snapshots and checkpoints), a fresh object. */
  totalUsage: { get() { return copyUsage(this[VIEW_STATE].totalUsage); } },
  /** Issue 32: the usage totals of the run in progress, else of the last run, a fresh object. */
  runUsage: { get() { return copyUsage(this[VIEW_STATE].runUsage); } },
  /** Issue 32: the limit that stopped the last run, `{limit, scope, max, value, message}`, else undefined. */
  limitReached: { get() { return this[VIEW_STATE].limitReached; } },
}).map(([name, accessors]) => [name, { set: undefined, ...accessors, enumerable: true, configurable: true }]);

function createStateView(st) {
  const view = {};
  Object.defineProperty(view, VIEW_STATE, { value: st });
  for (const [name, descriptor] of VIEW_ACCESSORS) Object.defineProperty(view, name, descriptor);
  return view;
}

/** Issue 32: options from `withTelemetry` of agent-loop-wasm/otel trace the agent made with them (see api.js). */
const RUN_HOOKS = Symbol.for("agent-loop-wasm.runHooks");

function traceIfAsked(agent, options) {
  const hooks = globalThis[RUN_HOOKS];
  if (hooks !== undefined) hooks.get(options)?.agent(agent);
}

export class Agent {
  // The public fields `agentInit` sets (FIELDS of src/core/agent/options.rs, in order, then `streamFunction`), declared
  // so that each Agent has one fixed shape: set one by one from the core they made it a dictionary (issue 43).
  // tests/js/agent-state-keys.test.mjs holds this list to FIELDS.
  convertToLlm; transformContext; getApiKey; onPayload; onResponse; onProviderStreamEvent; beforeToolCall;
  afterToolCall; finishTurn; prepareRequest; prepareNextTurn; prepareNextTurnWithContext; sessionId; thinkingBudgets;
  transport; maxRetryDelayMs; toolExecution; identity; toolTimeoutMs; streamIdleTimeoutMs; abortGraceMs;
  maxParallelTools; apiKey; maxTokens; temperature; headers; fetch; streamFunction;

  constructor(options) {
    const st = newStateObject();
    core.agentInit(this, st, options, getDefaultStreamFn());
    internals.set(this, st);
    traceIfAsked(this, options);
  }

  /** Made on the first read (an Agent whose state is never read costs no view). */
  get state() {
    const st = stateOf(this);
    return (st.view ??= createStateView(st));
  }

  subscribe(listener) { return core.agentSubscribe(stateOf(this), listener); }

  /** Issue 31: the agent's events numbered, with a replay of what a reader that saw up to `after` missed. */
  events(options) {
    const st = stateOf(this);
    return events(st, (listener) => core.agentSubscribe(st, listener), options);
  }

  get steeringMode() { return stateOf(this).steeringMode; }
  set steeringMode(mode) { core.agentSetMode(stateOf(this), STEERING, mode); }
  get followUpMode() { return stateOf(this).followUpMode; }
  set followUpMode(mode) { core.agentSetMode(stateOf(this), FOLLOW_UP, mode); }

  steer(message) { core.agentEnqueue(stateOf(this), STEERING, message); }
  followUp(message) { core.agentEnqueue(stateOf(this), FOLLOW_UP, message); }
  clearSteeringQueue() { core.agentClearQueue(stateOf(this), STEERING); }
  clearFollowUpQueue() { core.agentClearQueue(stateOf(this), FOLLOW_UP); }
  clearAllQueues() { this.clearSteeringQueue(); this.clearFollowUpQueue(); }
  hasQueuedMessages() { const st = stateOf(this); return st.steering.length > 0 || st.followUp.length > 0; }
  peekQueuedMessages() { return core.agentPeekQueued(stateOf(this)); }
  takeQueuedMessages(predicate) { return core.agentTakeQueued(stateOf(this), predicate); }

  get signal() { return stateOf(this).active?.signal; }
  abort() { stateOf(this).active?.controller.abort(); }
  waitForIdle() { return stateOf(this).active?.promise ?? Promise.resolve(); }
  reset() {
    const st = stateOf(this);
    core.agentReset(st);
    armApprovalTimer(st);
    transcriptReplaced(st);
  }

  snapshot() { return core.agentSnapshot(this, stateOf(this)); }

  static restore(snapshot, options) {
    const data = core.agentParseRestore(snapshot);
    const { initialState: _ignored, tools, ...rest } = options ?? {};
    const agent = new this(rest);
    core.agentApplySnapshot(agent, stateOf(agent), data, tools);
    armApprovalTimer(stateOf(agent));
    traceIfAsked(agent, options);
    return agent;
  }

  prompt(input, images) {
    const st = internals.get(this);
    if (!st) return Promise.reject(codedError("INVALID_ARGUMENT", "Agent: method called on an object that is not an Agent"));
    return guardRun(st, st.active, () => core.agentPrompt(this, st, input, images));
  }

  /** `options.approvals`: a pause from outside (`agent_end.approvals` with `decisions`) to hold and carry out. */
  continue(options) {
    const st = internals.get(this);
    if (!st) return Promise.reject(codedError("INVALID_ARGUMENT", "Agent: method called on an object that is not an Agent"));
    return guardRun(st, st.active, () => core.agentContinue(this, st, options));
  }

  resume() {
    const st = internals.get(this);
    if (!st) return Promise.reject(codedError("INVALID_ARGUMENT", "Agent: method called on an object that is not an Agent"));
    return guardRun(st, st.active, () => core.agentResume(this, st));
  }

  /**
   * Issue 30: approves a tool call that waits (`options.args`: edited arguments, validated now and again before the
   * call runs). The decision that settles the last waiting call continues the run; the promise settles when it ended.
   */
  approve(toolCallId, options) {
    const st = internals.get(this);
    if (!st) return Promise.reject(codedError("INVALID_ARGUMENT", "Agent: method called on an object that is not an Agent"));
    return guardRun(st, st.active, () => core.agentDecide(this, st, toolCallId, options, true));
  }

  /** Issue 30: denies a tool call that waits: it gets the error result `Tool call "<id>" was denied: <reason>`. */
  deny(toolCallId, options) {
    const st = internals.get(this);
    if (!st) return Promise.reject(codedError("INVALID_ARGUMENT", "Agent: method called on an object that is not an Agent"));
    return guardRun(st, st.active, () => core.agentDecide(this, st, toolCallId, options, false));
  }
}
