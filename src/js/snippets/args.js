// E-8.1 in one crossing for the valid case: `FastPaths::agent_state_valid` and `FastPaths::first_bad_message` of
// src/js/host.rs and `loop_args_look_valid` there, the JS twins of `Checker` in src/core/args.rs (and `check_state`
// of src/core/agent/lifecycle.rs). Each answers only whether everything is valid; the core's check then names what is not.

import { SCHEMA_KIND, classifySchema } from "./values.js";

/** `firstBadMessage`'s answer: `ALL_MESSAGES`, or `index * 2 + NOT_OBJECT | NO_ROLE`. Twin of
 *  `protocol::bad_message` (src/js/protocol.rs). */
export const BAD_MESSAGE = Object.freeze({ ALL_MESSAGES: -1, NOT_OBJECT: 0, NO_ROLE: 1 });

// E-8.1 in one step for the valid case (src/core/args.rs `Checker`): each reads the fields the core's check
// reads, in its order, and answers whether all of them are valid; `false` sends the caller through the core's
// check, which names what is wrong. The hook and timer lists come from the core.
const isNullish = (v) => v === undefined || v === null;
const isFunction = (v) => typeof v === "function";
/** `Checker::object`: an object that is not an array, or a function. */
const isObjectArg = (v) => isFunction(v) || (typeof v === "object" && v !== null && !Array.isArray(v));
const messagesValid = (list) => Array.isArray(list) && firstBadMessage(list) === BAD_MESSAGE.ALL_MESSAGES;

function toolsValid(tools) {
  if (isNullish(tools)) return true;
  if (!Array.isArray(tools)) return false;
  for (const t of Array.from(tools)) {
    if (!isObjectArg(t) || typeof t.name !== "string" || !isFunction(t.execute)) return false;
    const parameters = t.parameters;
    if (parameters !== undefined && (!isObjectArg(parameters) || classifySchema(parameters) === SCHEMA_KIND.UNREADABLE)) {
      return false;
    }
  }
  return true;
}

function hooksValid(owner, hooks) {
  for (let i = 0; i < hooks.length; i++) {
    const f = owner[hooks[i]];
    if (!isNullish(f) && !isFunction(f)) return false;
  }
  return true;
}

/** `Checker::limits`; `timeoutMs` only when `withTimeout` (not on a loop config). */
function limitsValid(owner, timers, withTimeout) {
  for (let i = 0; i < timers.length; i++) {
    if (!withTimeout && timers[i] === "timeoutMs") continue;
    const v = owner[timers[i]];
    if (v === undefined) continue;
    if (typeof v !== "number") return false;
    if (timers[i] === "abortGraceMs" && v === Infinity) continue;
    if (!(v >= 0 && v <= 2147483647)) return false;
  }
  const max = owner.maxParallelTools;
  return max === undefined || (typeof max === "number" && Number.isInteger(max) && max >= 1);
}

// Issue 32: `Checker::budgets` (src/core/args.rs) and `budget::check_limit`.
const RUN_LIMITS = ["maxTurns", "maxModelRequests", "maxTokens", "maxCostUsd", "maxDurationMs", "maxToolCalls"];
const TOTAL_LIMITS = ["maxTokens", "maxCostUsd"];
const COUNT_LIMITS = ["maxTurns", "maxModelRequests", "maxToolCalls"];

function budgetsValid(owner, agent) {
  for (const key of agent ? ["limits", "totalLimits"] : ["limits"]) {
    const limits = owner[key];
    if (limits === undefined || limits === null) continue;
    if (typeof limits !== "object" || Array.isArray(limits)) return false;
    for (const field of key === "limits" ? RUN_LIMITS : TOTAL_LIMITS) {
      const v = limits[field];
      if (v === undefined || v === null) continue;
      if (typeof v !== "number") return false;
      const ok = COUNT_LIMITS.includes(field) ? v === Infinity || (Number.isInteger(v) && v >= 1) : v > 0;
      if (!ok) return false;
    }
  }
  return true;
}

/** `FastPaths::agent_state_valid`: `check_state_fully` of src/core/agent/lifecycle.rs. */
export function agentStateValid(agent, st, hooks, timers) {
  return toolsValid(st.tools) && messagesValid(st.messages) && isObjectArg(st.model) && isFunction(agent.convertToLlm) &&
    isFunction(agent.streamFunction) && hooksValid(agent, hooks) && limitsValid(agent, timers, true) &&
    budgetsValid(agent, true) && compactionValid(agent);
}

// Issue 45: `FastPaths::compaction_problem` (reference: core::compaction::read_options), read for read.
const TRIGGER = "{ fraction } (0 < fraction <= 1) or { tokens } (a positive integer)";
const isCount = (n) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;

/** A `compaction` option's problem (L-3.13.1): `undefined` when it can be read, else `[field, what it must be]`
 *  (`""`: the option itself). A throwing getter throws through. */
export function compactionProblem(c) {
  if (isNullish(c) || typeof c === "boolean") return undefined;
  if (typeof c !== "object" || Array.isArray(c)) return ["", "true, false or an object"];
  const trigger = c.trigger;
  if (!isNullish(trigger)) {
    if (typeof trigger !== "object" || Array.isArray(trigger)) return ["trigger", TRIGGER];
    const fraction = trigger.fraction;
    const tokens = trigger.tokens;
    if (!isNullish(fraction) && isNullish(tokens)) {
      if (!(typeof fraction === "number" && fraction > 0 && fraction <= 1)) return ["trigger", TRIGGER];
    } else if (isNullish(fraction) && !isNullish(tokens)) {
      if (!(isCount(tokens) && tokens > 0)) return ["trigger", TRIGGER];
    } else {
      return ["trigger", TRIGGER];
    }
  }
  const keep = c.keepRecentTokens;
  if (!isNullish(keep) && !isCount(keep)) return ["keepRecentTokens", "a non-negative integer"];
  const window = c.contextWindow;
  if (!isNullish(window) && !(isCount(window) && window > 0)) return ["contextWindow", "a positive integer"];
  const summarize = c.summarize;
  if (!isNullish(summarize) && typeof summarize !== "function" && summarize !== "model" && summarize !== "drop") {
    return ["summarize", '"model", "drop" or a function'];
  }
  const instructions = c.instructions;
  if (!isNullish(instructions) && typeof instructions !== "string") return ["instructions", "a string"];
  return undefined;
}

const compactionValid = (owner) => compactionProblem(owner.compaction) === undefined;

/** `check_loop_args` of src/js/mod.rs. */
export function loopArgsValid(prompts, hasPrompts, context, config, emit, hasEmit, signal, streamFn, hooks, timers) {
  if (hasPrompts && !messagesValid(prompts)) return false;
  if (!isObjectArg(context) || !messagesValid(context.messages) || !toolsValid(context.tools)) return false;
  if (!isObjectArg(config) || !isObjectArg(config.model) || !isFunction(config.convertToLlm)) return false;
  if (!hooksValid(config, hooks) || !limitsValid(config, timers, false) || !budgetsValid(config, false)) return false;
  if (!compactionValid(config)) return false;
  if (hasEmit && !isFunction(emit)) return false;
  if (!isNullish(signal)) {
    if (typeof signal !== "object" || Array.isArray(signal)) return false;
    if (typeof signal.aborted !== "boolean" || !isFunction(signal.addEventListener)) return false;
  }
  return isNullish(streamFn) || isFunction(streamFn);
}

/** `FastPaths::first_bad_message` (E-8.1, reference src/core/fast/args.rs) in one step: `BAD_MESSAGE.ALL_MESSAGES` when every entry of the array `list`
 *  is a message (an object or function with a string `role`), else `index * 2 + NOT_OBJECT` for an entry that is
 *  not an object, `index * 2 + NO_ROLE` for one whose `role` is not a string. A throwing getter throws through. */
export function firstBadMessage(list) {
  const n = list.length;
  for (let i = 0; i < n; i++) {
    const m = list[i];
    if (typeof m !== "function" && (typeof m !== "object" || m === null || Array.isArray(m))) {
      return i * 2 + BAD_MESSAGE.NOT_OBJECT;
    }
    if (typeof m.role !== "string") return i * 2 + BAD_MESSAGE.NO_ROLE;
  }
  return BAD_MESSAGE.ALL_MESSAGES;
}
