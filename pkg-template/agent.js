// The `Agent` facade (§5): a subclassable class whose methods forward to the Rust core. The
// agent's values live in a plain state object kept in a WeakMap, handed to every core call.
import core from "./trap.js";
import { getDefaultStreamFn } from "./api.js";

const internals = new WeakMap();
const STEERING = 0;
const FOLLOW_UP = 1;

function stateOf(agent) {
  const st = internals.get(agent);
  if (!st) throw new TypeError("Agent: method called on an object that is not an Agent");
  return st;
}

function createStateView(st) {
  return {
    get systemPrompt() { return core.agentSystemPrompt(st); },
    get model() { return st.model; },
    set model(model) { st.model = model; },
    get thinkingLevel() { return st.thinkingLevel; },
    set thinkingLevel(level) { st.thinkingLevel = level; },
    get tools() { return st.tools; },
    set tools(tools) { core.agentCheckArray(tools, "state.tools"); st.tools = tools.slice(); },
    get messages() { return st.messages; },
    set messages(messages) { core.agentCheckArray(messages, "state.messages"); st.messages = messages.slice(); },
    get isStreaming() { return st.isStreaming; },
    get streamingMessage() { return st.streamingMessage; },
    get pendingToolCalls() { return st.pendingToolCalls; },
    get errorMessage() { return st.errorMessage; },
  };
}

export class Agent {
  constructor(options) {
    const st = {};
    core.agentInit(this, st, options, getDefaultStreamFn());
    st.view = createStateView(st);
    internals.set(this, st);
  }

  get state() { return stateOf(this).view; }

  subscribe(listener) { return core.agentSubscribe(stateOf(this), listener); }

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
  reset() { core.agentReset(stateOf(this)); }

  snapshot() { return core.agentSnapshot(this, stateOf(this)); }

  static restore(snapshot, options) {
    const data = core.agentParseSnapshot(snapshot);
    const { initialState: _ignored, tools, ...rest } = options ?? {};
    const agent = new this(rest);
    core.agentApplySnapshot(agent, stateOf(agent), data, tools);
    return agent;
  }

  prompt(input, images) {
    const st = internals.get(this);
    if (!st) return Promise.reject(new TypeError("Agent: method called on an object that is not an Agent"));
    return core.agentPrompt(this, st, input, images);
  }

  continue() {
    const st = internals.get(this);
    if (!st) return Promise.reject(new TypeError("Agent: method called on an object that is not an Agent"));
    return core.agentContinue(this, st);
  }
}
