// The implementation under test.
// AGENT_LOOP_IMPL=reference → @earendil-works/pi-agent-core 1.6.0 (+ the pi-ai stream classes and validator);
// otherwise → our built package (pkg/dist/node/index.mjs).

export const IS_REFERENCE = process.env.AGENT_LOOP_IMPL === "reference";

let m;
if (IS_REFERENCE) {
  const core = await import("@earendil-works/pi-agent-core");
  const ai = await import("@earendil-works/pi-ai");
  m = {
    ...core,
    EventStream: ai.EventStream,
    AssistantMessageEventStream: ai.AssistantMessageEventStream,
    createAssistantMessageEventStream: ai.createAssistantMessageEventStream,
    validateToolArguments: ai.validateToolArguments,
    getDefaultStreamFn: undefined, // module-internal in the reference
    VERSION: undefined,
  };
} else {
  m = await import("../../pkg/dist/node/index.mjs");
}

export const {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  runToolCall,
  validateToolArguments,
  setDefaultStreamFn,
  getDefaultStreamFn,
  DEFAULT_AGENT_IDENTITY,
  EventStream,
  AssistantMessageEventStream,
  createAssistantMessageEventStream,
  VERSION,
  Agent,
  SNAPSHOT_VERSION,
  streamProxy,
} = m;
