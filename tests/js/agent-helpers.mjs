// Helpers for the Agent suites (agent*.test.mjs): construction with the faux provider, listener recording,
// message inspection, timing utilities. Written for these tests.
import { IS_REFERENCE, Agent } from "./impl.mjs";
import { createFaux, label, model } from "./faux.mjs";

export const T = { timeout: 5000 };
/** Options of a test of behaviour the spec deliberately changes: skipped only against the reference. */
export const deviation = (why) => ({ ...T, skip: IS_REFERENCE && `reference differs: ${why}` });

export const PROMPT_BUSY =
  "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
export const CONTINUE_BUSY = "Agent is already processing. Wait for completion before continuing.";
export const RESET_BUSY = "Agent is already processing. Wait for completion before resetting.";
export const NO_MESSAGES = "No messages to continue from";
export const ASSISTANT_TAIL = "Cannot continue from message role: assistant";

export const DEFAULT_MODEL = {
  id: "unknown",
  name: "unknown",
  api: "unknown",
  provider: "unknown",
  baseUrl: "",
  reasoning: false,
  input: [],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
};

/**
 * An Agent on a faux provider. `initialState.model` defaults to the faux model; other options pass through.
 * `faux` may be a createFaux() result or an array of replies.
 */
export function makeAgent(faux, { initialState = {}, ...options } = {}, AgentClass = Agent) {
  const f = Array.isArray(faux) ? createFaux(faux) : faux;
  return new AgentClass({ streamFn: f.streamFn, ...options, initialState: { model: model(), ...initialState } });
}

/** Subscribes a recording listener (first in order if subscribed first). `onEvent(e, signal)` may be async. */
export function record(agent, onEvent) {
  const events = [];
  const signals = [];
  const unsubscribe = agent.subscribe(async (e, signal) => {
    events.push(e);
    signals.push(signal);
    if (onEvent) await onEvent(e, signal);
  });
  const isUpdate = (e) => e.type === "message_update" || e.type === "tool_execution_update";
  return {
    events,
    signals,
    unsubscribe,
    labels: ({ updates = false } = {}) => events.filter((e) => updates || !isUpdate(e)).map(label),
    ofType: (type) => events.filter((e) => e.type === type),
  };
}

export const roles = (messages) => messages.map((m) => m.role);

/** Text of a message (string content or its text blocks joined). */
export function msgText(m) {
  if (typeof m?.content === "string") return m.content;
  return (m?.content ?? [])
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
}

/** True if a provider request (faux call) contains a message with exactly this text. */
export const requestHas = (call, s) => call.messages.some((m) => msgText(m) === s);

/** Texts of the user messages of a provider request. */
export const userTexts = (call) => call.messages.filter((m) => m.role === "user").map(msgText);

/** The tools a transcript declares, by replaying its system messages. */
export function replayedTools(messages) {
  const tools = new Map();
  for (const m of messages) {
    if (m.role !== "system") continue;
    for (const t of m.toolsRemoved ?? []) tools.delete(t.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  return [...tools.keys()];
}

/** Per request: the declaration deltas of its system messages, as `+name` / `-name` in message order. */
export function toolViews(call) {
  const view = [];
  for (const m of call.messages) {
    if (m.role !== "system") continue;
    for (const t of m.toolsAdded ?? []) view.push(`+${t.name}`);
    for (const t of m.toolsRemoved ?? []) view.push(`-${t.name}`);
  }
  return view;
}

/** A declaration as the loop writes it. */
export const decl = (t) => ({
  name: t.name,
  description: t.description,
  parameters: JSON.parse(JSON.stringify(t.parameters)),
});

export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Polls `cond` every macrotask until true (rejects after `ms`). */
export async function waitFor(cond, ms = 2000) {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error("waitFor: condition not met in time");
    await new Promise((r) => setImmediate(r));
  }
}

/** Counts unhandled rejections while active; call stop() to detach and get the list. */
export function trackUnhandled() {
  const seen = [];
  const handler = (reason) => seen.push(reason);
  process.on("unhandledRejection", handler);
  return {
    seen,
    stop: () => {
      process.off("unhandledRejection", handler);
      return seen;
    },
  };
}

/** Replaces timestamps and durations (which differ between two runs) for request comparisons. */
export function normalize(value) {
  return JSON.parse(
    JSON.stringify(value, (k, v) => (k === "timestamp" || k === "durationMs" ? 0 : v)),
  );
}
