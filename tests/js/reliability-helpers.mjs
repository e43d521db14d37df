// Helpers for the adversarial reliability suites (reliability-*.test.mjs; SPEC §7 D1–D5, §8 E-8.2–E-8.4).
// Hostile values, bounded waits, process-level watchers (unhandled rejections, leftover timers) and the
// run invariants every run must satisfy whatever its callbacks do.
import { after } from "node:test";
import assert from "node:assert/strict";
import { IS_REFERENCE } from "./impl.mjs";

/** The reliability guarantees are D1–D5 and E-8.4, which the reference lacks (it hangs): ours only. */
export const SKIP_REFERENCE = IS_REFERENCE && "reliability suites check D1–D5/E-8.4, which the reference lacks";
/** Options of a reliability test: 5 s bound, skipped against the reference. */
export const R = { timeout: 5000, skip: SKIP_REFERENCE };
/**
 * A test written against a bug found while the suite was built. The bugs are fixed: these are ordinary tests that fail
 * the suite like any other; the diagnosis stays only as documentation of what they guard.
 */
export const bug = (_fixedDiagnosis) => ({ ...R });

// ---------------------------------------------------------------------------------------------
// Process watchers
// ---------------------------------------------------------------------------------------------

/**
 * Installs file-wide watchers: every unhandled rejection (and, with `uncaught`, every uncaught exception) is
 * recorded unless `ignore(reason)` (a rejection a test raises on purpose and checks itself); an `after` hook asserts
 * there were none. Returns the live lists for per-test checks.
 */
export function watchProcess({ uncaught = false, ignore = () => false } = {}) {
  const unhandled = [];
  const exceptions = [];
  const onRejection = (reason) => {
    if (!ignore(reason)) unhandled.push(reason);
  };
  const onException = (err) => exceptions.push(err);
  process.on("unhandledRejection", onRejection);
  if (uncaught) process.on("uncaughtException", onException);
  after(() => {
    process.off("unhandledRejection", onRejection);
    if (uncaught) process.off("uncaughtException", onException);
    if (SKIP_REFERENCE) return;
    assert.deepEqual(unhandled.map(describe), [], "no unhandled rejection in the whole file");
    assert.deepEqual(exceptions.map(describe), [], "no uncaught exception in the whole file");
  });
  return { unhandled, exceptions };
}

export function describe(v) {
  try {
    if (v instanceof Error) return `${v.constructor.name}: ${v.message}`;
    return `${typeof v}: ${String(v)}`;
  } catch {
    return "<undescribable>";
  }
}

/** Lets pending microtasks, immediates and 0 ms timers run (so unhandled rejections get reported). */
export async function settle() {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 0));
  await new Promise((r) => setImmediate(r));
}

/** Counts of active timer-like handles (`Timeout`, `Immediate`). */
export function activeTimers() {
  const info = process.getActiveResourcesInfo();
  return {
    Timeout: info.filter((r) => r === "Timeout").length,
    Immediate: info.filter((r) => r === "Immediate").length,
  };
}

/**
 * Runs `fn` with leak accounting: records the active timers and unhandled-rejection count before, and after
 * the run settled asserts no new timer/immediate handle remains (the test's own ones must be gone by then)
 * and no unhandled rejection happened.
 */
export async function hygienic(watch, fn, what = "run") {
  const before = activeTimers();
  const rejections = watch.unhandled.length;
  const out = await fn();
  await settle();
  // Test doubles (the faux provider) may still be ticking with setImmediate: give them up to 100 ms. Timeouts
  // are checked at once — the tests clear their own, so any remaining one is the library's.
  for (let i = 0; i < 100 && activeTimers().Immediate > before.Immediate; i++) await new Promise((r) => setTimeout(r, 1));
  const afterRun = activeTimers();
  assert.ok(
    afterRun.Timeout <= before.Timeout && afterRun.Immediate <= before.Immediate,
    `${what}: leftover timer handles (before ${JSON.stringify(before)}, after ${JSON.stringify(afterRun)})`,
  );
  assert.deepEqual(watch.unhandled.slice(rejections).map(describe), [], `${what}: unhandled rejection`);
  return out;
}

/** Races `promise` against `ms`; a loss rejects with a `HANG:` error naming `what`. */
export async function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: ${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

export const TRAPS = [
  "get",
  "set",
  "has",
  "ownKeys",
  "getOwnPropertyDescriptor",
  "getPrototypeOf",
  "setPrototypeOf",
  "defineProperty",
  "deleteProperty",
  "isExtensible",
  "preventExtensions",
  "apply",
  "construct",
];

/** A Proxy whose every trap throws an Error tagged `tag` (a function target, so apply/construct exist too). */
export function hostileProxy(tag = "proxy", target = {}) {
  const fail = () => {
    throw new Error(`hostile proxy trap (${tag})`);
  };
  return new Proxy(target, Object.fromEntries(TRAPS.map((t) => [t, fail])));
}

/** An object whose getters for every field the library reads throw. */
export function throwingGetters(tag = "getter") {
  const o = {};
  const keys = [
    "role", "content", "details", "isError", "terminate", "usage", "structuredContent", "action", "block",
    "reason", "context", "messages", "model", "thinkingLevel", "tools", "type", "id", "name", "arguments",
    "stopReason", "partial", "message", "error", "api", "provider", "execute", "parameters", "length",
  ];
  for (const k of keys) {
    Object.defineProperty(o, k, {
      enumerable: true,
      get() {
        throw new Error(`throwing getter ${k} (${tag})`);
      },
    });
  }
  return o;
}

/** A thenable that never settles. */
export const neverThenable = () => ({ then() {} });
/** A thenable whose `then` throws synchronously. */
export const throwingThenable = (tag = "then") => ({
  then() {
    throw new Error(`then threw (${tag})`);
  },
});

/** Nested arrays (or objects) `depth` levels deep. */
export function deep(depth, kind = "array") {
  let v = kind === "array" ? [] : {};
  for (let i = 0; i < depth; i++) v = kind === "array" ? [v] : { a: v };
  return v;
}

/** An object with a cycle. */
export function cyclic() {
  const o = { role: "user", content: "cyclic", timestamp: 1 };
  o.self = o;
  o.list = [o, { back: o }];
  return o;
}

// ---------------------------------------------------------------------------------------------
// Run invariants
// ---------------------------------------------------------------------------------------------

const count = (xs, pred) => xs.filter(pred).length;

/**
 * Invariants of a complete run's events (all events, including updates): starts with agent_start, ends with
 * agent_end (exactly one each); turns and message pairs balanced; exactly one tool_execution_end per
 * tool_execution_start; every started tool call has exactly one tool-result message in `messages`
 * (agent_end.messages or the transcript) when given.
 */
export function assertRunShape(events, { messages, what = "run" } = {}) {
  const types = events.map((e) => e.type);
  assert.equal(types[0], "agent_start", `${what}: first event`);
  assert.equal(types.at(-1), "agent_end", `${what}: last event is agent_end (got ${types.slice(-3).join(", ")})`);
  assert.equal(count(types, (t) => t === "agent_start"), 1, `${what}: one agent_start`);
  assert.equal(count(types, (t) => t === "agent_end"), 1, `${what}: one agent_end`);
  assert.equal(count(types, (t) => t === "turn_start"), count(types, (t) => t === "turn_end"), `${what}: turns balanced`);
  assert.equal(
    count(types, (t) => t === "message_start"),
    count(types, (t) => t === "message_end"),
    `${what}: message_start/message_end balanced`,
  );
  const starts = events.filter((e) => e.type === "tool_execution_start").map((e) => e.toolCallId);
  const ends = events.filter((e) => e.type === "tool_execution_end").map((e) => e.toolCallId);
  assert.deepEqual([...ends].sort(), [...starts].sort(), `${what}: one tool_execution_end per tool_execution_start`);
  assert.equal(new Set(starts).size, starts.length, `${what}: tool call ids unique in this scenario`);
  if (messages) {
    for (const id of starts) {
      assert.equal(
        count(messages, (m) => m?.role === "toolResult" && m.toolCallId === id),
        1,
        `${what}: one toolResult message for ${id}`,
      );
    }
  }
}
