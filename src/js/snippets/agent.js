// The Agent's fused operations (§5): the event reducer, the queue poller, the awaited listeners and the default
// `convertToLlm`. JS twins of the fast paths `FastPaths::reduce_agent_event`, `queue_poller`, `call_listeners` and
// `default_convert_to_llm` (src/core/fast/mod.rs), each the same reads and writes in the same order as its Rust
// reference (src/core/agent_state/reducer.rs, drain.rs, convert.rs, src/core/fast/listeners.rs), in one crossing per
// event, poll or stretch of listeners; tests/js/parity.test.mjs holds each to its reference.

import { failed } from "./calls.js";
import { isObjectLike, push } from "./values.js";

/** `Array.from(v)` for an array, else `[]` (the core's `items`). */
const listOf = (v) => (Array.isArray(v) ? Array.from(v) : []);

/** A string `role` of an object-like message, else undefined (the core's `role`). */
function roleOf(m) {
  if (!isObjectLike(m)) return undefined;
  const role = Reflect.get(m, "role");
  return typeof role === "string" ? role : undefined;
}

/** Drops the entries of the list `st[key]` that `keep` rejects, only when one does (the core's `retain`). */
function retainList(st, key, keep) {
  const list = listOf(Reflect.get(st, key));
  if (!list.every(keep)) Reflect.set(st, key, list.filter(keep));
}

function toolCallIdOf(record) {
  try {
    return Reflect.get(record, "toolCallId");
  } catch {
    return undefined;
  }
}

/** `FastPaths::init_state`: the state a new Agent starts with, in one crossing. Twin of
 *  `agent_state::init::init_state`: the same fields in the same order, each empty list and set a fresh one. */
export function initState(st, model, thinkingLevel, tools, messages, steeringMode, followUpMode, onCheckpoint, agent) {
  st.model = model;
  st.thinkingLevel = thinkingLevel;
  st.tools = tools;
  st.messages = messages;
  st.isStreaming = false;
  st.streamingMessage = undefined;
  st.pendingToolCalls = new Set();
  st.errorMessage = undefined;
  st.steering = [];
  st.followUp = [];
  st.steeringLeftByAbort = [];
  st.steeringMode = steeringMode;
  st.followUpMode = followUpMode;
  st.listeners = new Set();
  st.active = undefined;
  st.onCheckpoint = onCheckpoint;
  st.agent = agent;
  st.transitSteering = [];
  st.transitFollowUp = [];
  st.completedTools = [];
  st.endedTools = [];
  st.interrupted = false;
  st.approvals = undefined;
  st.pendingApprovals = [];
  st.totalUsage = undefined;
  st.runUsage = undefined;
  st.limitReached = undefined;
}

/** `FastPaths::begin_run_state`: a run starts. Twin of `agent_state::init::begin_run_state`. */
export function beginRunState(st, active) {
  st.active = active;
  st.steeringLeftByAbort = [];
  st.isStreaming = true;
  st.streamingMessage = undefined;
  st.errorMessage = undefined;
  st.interrupted = false;
  st.runUsage = undefined;
  st.limitReached = undefined;
}

/** `FastPaths::end_run_state`: a run ended. Twin of `agent_state::init::end_run_state`. */
export function endRunState(st) {
  st.transitSteering = [];
  st.transitFollowUp = [];
  st.completedTools = [];
  st.endedTools = [];
  st.isStreaming = false;
  st.streamingMessage = undefined;
  st.pendingToolCalls = new Set();
}

/** `FastPaths::reduce_agent_event`: the Agent's reducer (A-5.2.2), the core's `agent_state::reducer::reduce` read for read
 *  and write for write, in one crossing per event. `true` at a durable point of an agent that writes
 *  checkpoints. A getter's or setter's throw throws through. `st` is the agent's own record and `event` one the run
 *  made: their fields are read and written directly (a property access, several times faster than `Reflect`'s). */
export function reduceAgentEvent(st, event) {
  const type = event.type;
  const durable = isObjectLike(st.ck);
  switch (typeof type === "string" ? type : "") {
    case "message_start":
    case "message_update":
      st.streamingMessage = event.message;
      break;
    case "message_end": {
      st.streamingMessage = undefined;
      const message = event.message;
      push(st.messages, message);
      const role = roleOf(message);
      // a model reply's usage adds to the agent's totals and the run's (none while it adds nothing);
      // so does a compaction's summary request (L-3.13.10, `compaction::ROLE`).
      if (role === "assistant" || role === "compactionSummary") {
        const figures = readUsage(Reflect.get(message, "usage"));
        if (figures !== undefined) {
          st.totalUsage = addFigures(st.totalUsage, figures);
          st.runUsage = addFigures(st.runUsage, figures);
        }
      }
      if (!durable) break;
      retainList(st, "transitSteering", (m) => !Object.is(m, message));
      retainList(st, "transitFollowUp", (m) => !Object.is(m, message));
      if (role === "toolResult") {
        const id = Reflect.get(message, "toolCallId");
        retainList(st, "completedTools", (r) => !Object.is(toolCallIdOf(r), id));
      }
      return true;
    }
    case "tool_execution_start":
    case "tool_execution_end": {
      const id = event.toolCallId;
      const ids = [...st.pendingToolCalls].filter((x) => !Object.is(x, id));
      if (type === "tool_execution_start") ids.push(id);
      st.pendingToolCalls = new Set(ids);
      if (!durable || type !== "tool_execution_end") break;
      // Ended, but its result message may come later (a parallel batch emits them at its end).
      const record = {
        toolCallId: id,
        toolName: event.toolName,
        result: event.result,
        isError: event.isError,
      };
      push(st.completedTools, record);
      push(st.endedTools, record);
      return true;
    }
    case "turn_end": {
      const message = event.message;
      if (roleOf(message) === "assistant") {
        const error = Reflect.get(message, "errorMessage");
        if (error) st.errorMessage = error;
      }
      break;
    }
    case "agent_end": {
      st.streamingMessage = undefined;
      // Issue 32: a limit stopped the run.
      const reached = event.limitReached;
      if (isObjectLike(reached)) {
        st.limitReached = reached;
        st.errorMessage = Reflect.get(reached, "message");
      }
      break;
    }
  }
  return false;
}

// Issue 32: `budget::read_usage` and `budget::add_figures` (src/core/budget.rs), read for read.
const USAGE_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"];
const COST_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "total"];

function finite(v) {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function readUsage(usage) {
  if (!isObjectLike(usage)) return undefined;
  const counts = USAGE_FIELDS.map((key) => finite(Reflect.get(usage, key)));
  const cost = Reflect.get(usage, "cost");
  const costs = isObjectLike(cost) ? COST_FIELDS.map((key) => finite(Reflect.get(cost, key))) : [0, 0, 0, 0, 0];
  if (counts.every((n) => n === 0) && costs.every((n) => n === 0)) return undefined;
  return [counts, costs];
}

function addFigures(before, [counts, costs]) {
  counts = counts.slice();
  costs = costs.slice();
  if (isObjectLike(before)) {
    for (let i = 0; i < 5; i++) counts[i] += finite(Reflect.get(before, USAGE_FIELDS[i]));
    const cost = Reflect.get(before, "cost");
    if (isObjectLike(cost)) for (let i = 0; i < 5; i++) costs[i] += finite(Reflect.get(cost, COST_FIELDS[i]));
  }
  return {
    input: counts[0], output: counts[1], cacheRead: counts[2], cacheWrite: counts[3], totalTokens: counts[4],
    cost: { input: costs[0], output: costs[1], cacheRead: costs[2], cacheWrite: costs[3], total: costs[4] },
  };
}

/** `FastPaths::queue_poller`: the function a run polls for the queue `st[list]`, the core's
 *  `agent_state::drain` in JS: the selection (`st[mode] === "all"`: all, else the first), the rest left
 *  queued, the selection also kept in `st[transit]` while the agent writes checkpoints. A throw
 *  gives an empty poll. With `skip`, the first poll is empty. */
export function queuePoller(st, list, mode, transit, skip) {
  return () => {
    if (skip) {
      skip = false;
      return [];
    }
    try {
      const all = listOf(Reflect.get(st, list));
      const selected = Reflect.get(st, mode) === "all" ? all : all.slice(0, 1);
      Reflect.set(st, list, listOf(Reflect.get(st, list)).slice(selected.length));
      if (selected.length > 0 && isObjectLike(Reflect.get(st, "ck"))) {
        const waiting = Reflect.get(st, transit);
        if (Array.isArray(waiting)) for (const m of selected) push(waiting, m);
      }
      return selected;
    } catch {
      return [];
    }
  };
}

/** The agent's default `convertToLlm`: the messages with one of the four LLM roles. Never
 *  throws: a non-array gives `[]`, an entry that is not an object or whose `role` getter throws is
 *  left out. One function for every agent, so an agent keeps no closure of its own for it. Reads
 *  each `role` once; a transcript of LLM messages only (the usual case) costs one copy and one pass. */
function convertToLlm(messages) {
  let list;
  try {
    list = Array.from(messages);
  } catch {
    return [];
  }
  const n = list.length;
  let i = 0;
  try {
    while (i < n && isLlmMessage(list[i])) i++;
  } catch {
    // list[i]'s role threw: left out
  }
  if (i === n) return list;
  const kept = list.slice(0, i);
  // list[i] stopped the loop above: it is not an LLM message (or its role threw), so it is not read again.
  for (let j = i + 1; j < n; j++) {
    try {
      if (isLlmMessage(list[j])) kept.push(list[j]);
    } catch {
      // a throwing role getter: left out
    }
  }
  return kept;
}

function isLlmMessage(m) {
  if (m === null || (typeof m !== "object" && typeof m !== "function")) return false;
  const role = m.role;
  return role === "user" || role === "assistant" || role === "toolResult" || role === "system";
}

export function defaultConvertToLlm() {
  return convertToLlm;
}

// `FastPaths::call_listeners`: `for (const f of listeners) await f(a, b)` a stretch at a time. `cursor` is undefined at
// first (the iterator is made here, live over the Set as `for … of` is) and then the one `takeCursor` gave. Calls
// until one returns a thenable: answers true, and `takeListened` gives the thenable, `takeCursor` the iterator to go on
// with; false when every listener was called (a boolean, so the common case costs one crossing). A throw sets the
// failure flag; when a listener threw, `takeCursor` gives the iterator (to go on after it), when the list itself
// failed, undefined.
let listened;
let listenCursor;

export function callListeners(listeners, cursor, a, b) {
  listened = undefined;
  listenCursor = undefined;
  let it;
  try {
    it = cursor === undefined ? listeners[Symbol.iterator]() : cursor;
  } catch (e) {
    failed(e);
    return false;
  }
  for (;;) {
    let step;
    try {
      step = it.next();
      if (step.done) return false;
    } catch (e) {
      failed(e);
      return false;
    }
    try {
      const r = Reflect.apply(step.value, undefined, [a, b]);
      if (r !== null && (typeof r === "object" || typeof r === "function") && typeof r.then === "function") {
        listened = r;
        listenCursor = it;
        return true;
      }
    } catch (e) {
      listenCursor = it;
      failed(e);
      return false;
    }
  }
}

export function takeListened() {
  const v = listened;
  listened = undefined;
  return v;
}

export function takeCursor() {
  const v = listenCursor;
  listenCursor = undefined;
  return v;
}
