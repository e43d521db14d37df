// The public API: each export gives a Rust function its public name and arity, and hands it the
// JS-side objects it needs (the result stream, the built-in stream function). No loop logic here.
import core, { track, unlessTrapped } from "./trap.js";
import { AssistantMessageEventStream, EventStream, createAssistantMessageEventStream } from "./streams.js";
import { codedError } from "./errors.js";
import { USAGE_ROLES, usageSum } from "./usage.js";
import { loadProviders, providersNow } from "./providers.js";
import { registerCompaction } from "./lazy.js";
import { RunLedger, failureMessage } from "./ending.js";

export { AssistantMessageEventStream, EventStream, createAssistantMessageEventStream };
// E-8.6: the classes of the library's own errors, and their codes.
export {
  AgentBusyError,
  AgentLoopError,
  ApprovalsPendingError,
  CannotContinueError,
  ERROR_CODES,
  InstanceFailedError,
  InvalidApprovalError,
  InvalidArgumentError,
  LimitReachedError,
  McpToolsError,
  NoSuchModelError,
  NotInitializedError,
  NotSerializableError,
  RestoreRefusedError,
} from "./errors.js";

export const VERSION = core.version();
export const SNAPSHOT_VERSION = core.snapshotVersion();
export const DEFAULT_AGENT_IDENTITY = core.defaultAgentIdentity();
export const BUILTIN_APIS = Object.freeze(core.builtinApis());

/** The sink `agentLoop` hands the core, seen by a ledger: `sink(event)` pushes an event, `sink(result, true)` ends the
 *  stream. One function, so a run in flight holds one handle on its stream (issue 34). */
function observedRun(stream, config, signal, observer) {
  const ledger = new RunLedger(config, signal, observer);
  const untrack = track((text) => {
    try {
      for (const event of ledger.ending(text)) stream.push(event);
    } finally {
      stream.end(ledger.messages);
    }
  });
  const sink = (value, ended) => {
    if (ended !== true) return stream.push(ledger.see(value));
    untrack();
    stream.end(value);
  };
  return { sink, untrack };
}

/** `emit` seen by a ledger, and the run's promise settled from JS if the instance fails. */
function barrierRun(emit, config, signal, start, observer) {
  if (typeof emit !== "function") return start(emit); // the core names the bad argument
  const ledger = new RunLedger(config, signal, observer);
  let settle;
  const settled = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  const untrack = track(async (text) => {
    try {
      for (const event of ledger.ending(text)) {
        try {
          await emit(event);
        } catch {
          // D1: the run ends anyway
        }
      }
    } finally {
      settle.resolve(ledger.messages);
    }
  });
  let promise;
  try {
    promise = start((event) => emit(ledger.see(event)));
  } catch (error) {
    untrack();
    throw error;
  }
  promise.then(
    (value) => {
      untrack();
      settle.resolve(value);
    },
    (error) => {
      untrack();
      observer?.fail(); // L-3.10.4: no agent_end follows a failing emit; the run's spans end here
      settle.reject(error);
    },
  );
  return settled;
}

// Issue 32: a run's usage totals. The sum of the `usage` of the assistant messages (and compaction entries) in `messages` (a run's
// `newMessages`: `await stream.result()`, what `runAgentLoop` resolves with, `agent_end.messages`): tokens by kind,
// `totalTokens`, and `cost` by kind with its `total`. A figure that is not a finite number counts 0. The same sum
// as `agent.state.runUsage` (core::budget::read_usage / add_figures, and the reducer's twin in snippets/agent.js).
export function totalUsage(messages) {
  if (!Array.isArray(messages)) throw codedError("INVALID_ARGUMENT", "totalUsage: messages must be an array");
  const sum = usageSum();
  for (const message of messages) {
    if (message !== null && (typeof message === "object" || typeof message === "function") && USAGE_ROLES.includes(message.role)) sum.add(message.usage);
  }
  return sum.value;
}

/** The stream `agentLoop` / `agentLoopContinue` return: an `EventStream` whose `totalUsage()` resolves with the
 *  run's usage totals when it ended (issue 32; the AI SDK's `result.totalUsage`). */
class AgentLoopStream extends EventStream {
  totalUsage() {
    return this.result().then(totalUsage);
  }
}

/**
 * Issue 32: the hooks `withTelemetry` of agent-loop-wasm/otel registered for this config object, if any. The
 * registry is a WeakMap on a global symbol, so this entry imports nothing of the telemetry entry (nor of
 * @opentelemetry/api) and a config without telemetry costs one property read per run. Its `run` gets the run's
 * arguments and returns `{ config, streamFn, see(event), fail() }`: a per-run config and stream function wrapped to
 * open the run's spans, an observer of its events (nothing is opened before the run's `agent_start`), and what ends
 * them when `runAgentLoop` rejects without an `agent_end`.
 */
const RUN_HOOKS = Symbol.for("agent-loop-wasm.runHooks");

function runHook(kind, config, signal, streamFn) {
  const hooks = globalThis[RUN_HOOKS];
  if (hooks === undefined) return undefined;
  const hook = hooks.get(config);
  if (hook === undefined) return undefined;
  return hook.run({ kind, config, signal, streamFn: streamFn ?? getDefaultStreamFn() });
}

function createAgentStream() {
  return new AgentLoopStream(
    (event) => event.type === "agent_end",
    (event) => (event.type === "agent_end" ? event.messages : []),
  );
}

/**
 * The built-in providers (D7). Their code is a JS module of its own (issue 43: ./builtin-providers.js), loaded by the
 * first call: on Node synchronously, elsewhere before this stream's first event. A module that cannot be loaded
 * (offline, blocked) is this request's error event, and the next call tries again.
 */
export function streamBuiltin(model, context, options) {
  const stream = new AssistantMessageEventStream();
  const fail = (text) => {
    if (!stream.done) stream.push({ type: "error", reason: "error", error: failureMessage(model, "error", text, false) });
  };
  // If the instance fails mid-request, the request ends with an error event (P-6.1.2: never throws).
  const untrack = track(fail);
  stream.result().then(untrack, untrack);
  const unloaded = (error) => fail(`agent-loop-wasm: the built-in providers could not be loaded (${error})`);
  let providers;
  try {
    providers = providersNow();
  } catch (error) {
    unloaded(error);
    return stream;
  }
  // The providers never throw (every failure is their `error` event); a throw here would be a bug of theirs, and
  // still ends this request as P-6.1.2 says, never the caller's call.
  const start = (loaded) => {
    try {
      loaded.streamBuiltin(model, context, options, stream);
    } catch (error) {
      fail(String(error?.message ?? error));
    }
  };
  if (providers !== undefined) start(providers);
  else {
    loadProviders().then((loaded) => {
      if (!stream.done) start(loaded);
    }, unloaded);
  }
  return stream;
}

export function agentLoop(prompts, context, config, signal, streamFn) {
  registerCompaction();
  const traced = runHook("prompt", config, signal, streamFn);
  if (traced !== undefined) ({ config, streamFn } = traced);
  const stream = createAgentStream();
  const run = observedRun(stream, config, signal, traced);
  try {
    core.agentLoop(prompts, context, config, signal, streamFn, run.sink, streamBuiltin);
  } catch (error) {
    run.untrack();
    throw error;
  }
  return stream;
}

export function agentLoopContinue(context, config, signal, streamFn) {
  registerCompaction();
  const traced = runHook("continue", config, signal, streamFn);
  if (traced !== undefined) ({ config, streamFn } = traced);
  const stream = createAgentStream();
  const run = observedRun(stream, config, signal, traced);
  try {
    core.agentLoopContinue(context, config, signal, streamFn, run.sink, streamBuiltin);
  } catch (error) {
    run.untrack();
    throw error;
  }
  return stream;
}

export function runAgentLoop(prompts, context, config, emit, signal, streamFn) {
  registerCompaction();
  const traced = runHook("prompt", config, signal, streamFn);
  if (traced !== undefined) ({ config, streamFn } = traced);
  return barrierRun(
    emit,
    config,
    signal,
    (sink) => core.runAgentLoop(prompts, context, config, sink, signal, streamFn, streamBuiltin),
    traced,
  );
}

export function runAgentLoopContinue(context, config, emit, signal, streamFn) {
  registerCompaction();
  const traced = runHook("continue", config, signal, streamFn);
  if (traced !== undefined) ({ config, streamFn } = traced);
  return barrierRun(
    emit,
    config,
    signal,
    (sink) => core.runAgentLoopContinue(context, config, sink, signal, streamFn, streamBuiltin),
    traced,
  );
}

export function runToolCall(toolCall, options) {
  const promise = core.runToolCall(toolCall, options);
  // The call gets its one result even if the instance fails while it runs (an error outcome).
  return unlessTrapped(promise, (text) => ({ toolCall, result: { content: [{ type: "text", text }], details: {} }, isError: true }));
}

/**
 * Returns `definition` itself. It exists for TypeScript (API-1.1.1): a tool written inside `tool({...})` keeps its
 * literal types (`type: "text"`) and gets its `execute` arguments typed, where a bare object literal would widen them.
 */
export function tool(definition) {
  return definition;
}

export function validateToolArguments(tool, toolCall) {
  return core.validateToolArguments(tool, toolCall);
}

/** Bytes of this package's WebAssembly memory now (it grows, never shrinks): for watching headroom where an isolate's
 *  memory is capped, as on Cloudflare Workers (issue 34). The built-in providers are JS (issue 43): they use none. */
export function wasmMemoryBytes() {
  return core.wasmMemoryBytes();
}

export function setDefaultStreamFn(streamFn) {
  core.setDefaultStreamFn(streamFn);
}

export function getDefaultStreamFn() {
  return core.getDefaultStreamFn() ?? streamBuiltin;
}
export { Agent } from "./agent.js";
export { streamProxy } from "./proxy.js";
export { isContextOverflow, isRecoverableLength } from "./overflow.js";
