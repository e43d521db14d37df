// Issue 31: what a client of `agent.events()` shows, rebuilt from the items it got: the transcript, the streaming
// message's partial, the tools in flight. One reducer for every test of the rule (tests/js/events-replay.test.mjs)
// and for the Durable Objects clients that read it over SSE (tests/durable-objects/events.test.mjs).

/** A client's state before any item. */
export const initial = () => ({ messages: [], streaming: null, tools: {} });

/** `state` after one event (it is changed in place and returned). */
export function apply(state, event) {
  switch (event.type) {
    case "agent_sync":
      state.messages = JSON.parse(JSON.stringify(event.messages));
      state.streaming = event.streamingMessage ? JSON.parse(JSON.stringify(event.streamingMessage)) : null;
      state.tools = Object.fromEntries(event.pendingToolCalls.map((id) => [id, "running"]));
      break;
    case "message_start":
    case "message_update":
      state.streaming = JSON.parse(JSON.stringify(event.message));
      break;
    case "message_end":
      state.messages.push(JSON.parse(JSON.stringify(event.message)));
      state.streaming = null;
      break;
    case "tool_execution_start":
      state.tools[event.toolCallId] = "running";
      break;
    case "tool_execution_update":
      state.tools[event.toolCallId] = JSON.stringify(event.partialResult);
      break;
    case "tool_execution_end":
      delete state.tools[event.toolCallId];
      break;
  }
  return state;
}

/** What a client shows after `items` ([{ seq, event }]). */
export function reduce(items) {
  const state = initial();
  for (const { event } of items) apply(state, event);
  return state;
}
