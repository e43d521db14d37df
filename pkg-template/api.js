// The public API: each export gives a Rust function its public name and arity, and hands it the
// JS-side objects it needs (the result stream, the built-in stream function). No loop logic here.
import core from "./trap.js";
import { AssistantMessageEventStream, EventStream, createAssistantMessageEventStream } from "./streams.js";

export { AssistantMessageEventStream, EventStream, createAssistantMessageEventStream };

export const VERSION = core.version();
export const SNAPSHOT_VERSION = core.snapshotVersion();
export const DEFAULT_AGENT_IDENTITY = core.defaultAgentIdentity();
export const BUILTIN_APIS = Object.freeze(core.builtinApis());

function createAgentStream() {
  return new EventStream(
    (event) => event.type === "agent_end",
    (event) => (event.type === "agent_end" ? event.messages : []),
  );
}

export function streamBuiltin(model, context, options) {
  const stream = new AssistantMessageEventStream();
  core.streamBuiltin(model, context, options, stream);
  return stream;
}

export function agentLoop(prompts, context, config, signal, streamFn) {
  const stream = createAgentStream();
  core.agentLoop(prompts, context, config, signal, streamFn, stream, streamBuiltin);
  return stream;
}

export function agentLoopContinue(context, config, signal, streamFn) {
  const stream = createAgentStream();
  core.agentLoopContinue(context, config, signal, streamFn, stream, streamBuiltin);
  return stream;
}

export function runAgentLoop(prompts, context, config, emit, signal, streamFn) {
  return core.runAgentLoop(prompts, context, config, emit, signal, streamFn, streamBuiltin);
}

export function runAgentLoopContinue(context, config, emit, signal, streamFn) {
  return core.runAgentLoopContinue(context, config, emit, signal, streamFn, streamBuiltin);
}

export function runToolCall(toolCall, options) {
  return core.runToolCall(toolCall, options);
}

export function validateToolArguments(tool, toolCall) {
  return core.validateToolArguments(tool, toolCall);
}

export function setDefaultStreamFn(streamFn) {
  core.setDefaultStreamFn(streamFn);
}

export function getDefaultStreamFn() {
  return core.getDefaultStreamFn() ?? streamBuiltin;
}
export { Agent } from "./agent.js";
export { streamProxy } from "./proxy.js";
