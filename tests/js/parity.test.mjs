// The fast paths (src/core/fast): each has a Rust reference, which `cargo test` runs on the scripted host, and a
// JS twin (src/js/snippets/*.js), which the package runs. Here both run on the real engine, in the loop module as the
// package builds it plus the test-only export `__fastPath(name, reference, args)` (target/parity/), on the same
// inputs, and must agree exactly: the same result, the same state afterwards, the same error, and the same reads and
// writes of the caller's objects in the same order (recorded through proxies). Inputs: seeded random values with
// hostile getters (PARITY_SEED=<n> reruns one seed; every run also takes the fixed seeds below) and the events of
// recorded Agent runs.
//
// Where the twin differs from its reference by design, the case is left out and the reason stated:
// - `pump` with no event: only the JS host can take an event already queued in one of our own streams.
// - `jsonCopy` of values JSON cannot hold: the twin writes the validator's view (markers), the reference the text.
// - `jsonTextKept` / `jsonParseKept`: the twin keeps long strings in JS (markers in the text), the reference keeps
//   nothing; what is compared is that each pair round-trips to JSON.parse(JSON.stringify(v)).
// - `toolChanges`: results and errors are compared, reads are not. The twin walks the transcript index by index,
//   compares declarations without writing their texts (reading a value whole only where the names do not decide),
//   and on a transcript of 256+ messages called again resumes from its remembered scan, reading only the new
//   messages' roles; the reference reads every field through `JSON.stringify`.
// - `callListeners` with a listener removed and added again during the dispatch: the twin follows the `Set`'s
//   iterator (which calls it again, as `for … of` does), the reference does not.
// - `checkToolCall`: outcomes are compared (the arguments `execute` gets, or the error), reads are not: the reference
//   reads the schema and the arguments through `JSON.stringify` and its view, the twin reads the values (see there).
//
// The failure ending of a run is written twice for the Agent, in Rust (`agent::lifecycle::handle_run_failure`, when a
// listener throws) and in the facade (`failRun` in pkg-template/agent.js, when the instance traps), and twice for the
// loop, in Rust (`agent_loop::end_with_failure`, D1.2, when a callback throws) and in pkg-template/ending.js
// (`RunLedger.ending`, when the instance traps mid-run); the last tests hold each pair to the same events.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { Agent, runAgentLoop } from "./impl.mjs";
import { IS_REFERENCE } from "./impl.mjs";
import { createFaux, assistant, toolCall, text, model as fauxModel, config as fauxConfig, tool as fauxTool, okResult, userMessage } from "./faux.mjs";
import { readFileSync } from "node:fs";
import { generator } from "../validate/schemas.mjs";
import { CASES as VALUE_CASES, describe as describeValue } from "../validate/values.mjs";

const require = createRequire(import.meta.url);
// The loop module built with the test-only `parity` feature (scripts/build.mjs writes it to target/parity/): the
// package's own wasm does not carry `__fastPath` or the references it calls.
const glue = IS_REFERENCE ? null : require("../../target/parity/agent_loop_wasm.js");
const facade = IS_REFERENCE ? null : require("../../pkg/dist/node/agent.js");
const pkg = IS_REFERENCE ? null : require("../../pkg/dist/node/index.cjs");
const skip = IS_REFERENCE ? "the fast paths are this package's own" : false;

const FIXED_SEEDS = [1, 2, 3, 17, 1070400717, 20261204];
const envSeed = process.env.PARITY_SEED ? Number(process.env.PARITY_SEED) : undefined;
const SEEDS = envSeed !== undefined ? [envSeed] : [...FIXED_SEEDS, (Math.random() * 2 ** 31) >>> 0];
const CASES_PER_SEED = 150;

function rng(seed) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  };
}

// ---- recording the caller's objects

/** Wraps objects so that every read and write is logged as `op name key`; a target keeps one proxy (identity
 *  holds), Sets, Maps and functions are left as they are. Names are given in order of first wrap, so two runs on
 *  isomorphic inputs give equal logs exactly when they touch the same things in the same order. */
function recorder() {
  const log = [];
  const proxies = new WeakMap();
  const names = new WeakMap();
  let count = 0;
  let paused = false;
  const nameOf = (t) => names.get(t);
  const wrap = (v) => {
    if (v === null || typeof v !== "object" || v instanceof Set || v instanceof Map) return v;
    if (proxies.has(v)) return proxies.get(v);
    if (!names.has(v)) names.set(v, `o${count++}`);
    const record = (entry) => {
      if (!paused) log.push(entry);
    };
    const proxy = new Proxy(v, {
      get(t, k, r) {
        record(`get ${nameOf(t)} ${String(k)}`);
        return wrap(Reflect.get(t, k, r));
      },
      set(t, k, value, r) {
        record(`set ${nameOf(t)} ${String(k)}`);
        return Reflect.set(t, k, value, r);
      },
      has(t, k) {
        record(`has ${nameOf(t)} ${String(k)}`);
        return Reflect.has(t, k);
      },
      deleteProperty(t, k) {
        record(`delete ${nameOf(t)} ${String(k)}`);
        return Reflect.deleteProperty(t, k);
      },
      ownKeys(t) {
        record(`keys ${nameOf(t)}`);
        return Reflect.ownKeys(t);
      },
      getOwnPropertyDescriptor(t, k) {
        record(`descriptor ${nameOf(t)} ${String(k)}`);
        return Reflect.getOwnPropertyDescriptor(t, k);
      },
    });
    proxies.set(v, proxy);
    return proxy;
  };
  /** Names every object reachable from `root` by data properties, in a fixed walk, so that names do not depend on
   *  the order in which a run happens to touch them. */
  const nameAll = (root) => {
    const stack = [root];
    while (stack.length) {
      const v = stack.pop();
      if (v === null || typeof v !== "object" || names.has(v)) continue;
      names.set(v, `o${count++}`);
      const values = v instanceof Set ? [...v] : Reflect.ownKeys(v).map((k) => Object.getOwnPropertyDescriptor(v, k))
        .filter((d) => d && "value" in d).map((d) => d.value);
      stack.push(...values.reverse());
    }
  };
  return {
    log,
    wrap,
    nameAll,
    quiet: (f) => {
      paused = true;
      try {
        return f();
      } finally {
        paused = false;
      }
    },
  };
}

/** A plain description of a value for comparison: Sets and cycles spelled out, functions by name, errors by
 *  their constructor and message. */
function describe(v, seen = new Map()) {
  if (typeof v === "function") return `[function ${v.name}]`;
  if (typeof v === "symbol") return `[symbol ${v.description}]`;
  if (typeof v === "bigint") return `[bigint ${v}]`;
  if (typeof v === "number" && Number.isNaN(v)) return "[NaN]";
  if (v === undefined) return "[undefined]";
  if (v === null || typeof v !== "object") return v;
  if (seen.has(v)) return `[cycle ${seen.get(v)}]`;
  seen.set(v, seen.size);
  if (v instanceof Error) return { error: v.constructor.name, message: v.message };
  if (v instanceof Set) return { set: [...v].map((x) => describe(x, seen)) };
  const out = Array.isArray(v) ? [] : {};
  for (const k of Reflect.ownKeys(v)) {
    const d = Object.getOwnPropertyDescriptor(v, k);
    out[String(k)] = d && "value" in d ? describe(d.value, seen) : "[accessor]";
  }
  return out;
}

/** Runs `f` and gives what it returned or threw, described. */
function outcome(f) {
  try {
    return { ok: describe(f()) };
  } catch (e) {
    return { threw: describe(e) };
  }
}

/**
 * Builds the input twice from the same seed, runs the reference on one and the twin on the other, and requires
 * the same outcome, the same inputs afterwards and the same log of reads and writes.
 */
function same(label, build, run, { compareLog = true } = {}) {
  const sides = [true, false].map((reference) => {
    const rec = recorder();
    const input = build(rec);
    rec.nameAll(input.raw ?? input);
    const result = outcome(() => run(reference, input, rec));
    return { result, after: rec.quiet(() => describe(input.raw ?? input)), log: rec.log };
  });
  const [ref, twin] = sides;
  assert.deepEqual(twin.result, ref.result, `${label}: result`);
  assert.deepEqual(twin.after, ref.after, `${label}: state afterwards`);
  if (compareLog) assert.deepEqual(twin.log, ref.log, `${label}: reads and writes`);
}

const fastPath = (name, reference, ...args) => glue.__fastPath(name, reference, args);

/** A getter that throws, on `obj[key]`. */
function hostile(obj, key, seed) {
  Object.defineProperty(obj, key, {
    get() {
      throw new Error(`getter ${key} ${seed}`);
    },
    enumerable: true,
    configurable: true,
  });
  return obj;
}

// ---- generators

const ROLES = ["user", "assistant", "toolResult", "system", "custom", 7, undefined];

function message(r, i) {
  const role = r.pick(ROLES);
  const m = { role, content: `m${i}`, timestamp: i };
  if (role === "toolResult") m.toolCallId = `c${r.int(4)}`;
  if (role === "assistant" && r.chance(0.3)) m.errorMessage = r.chance(0.5) ? `failed ${i}` : "";
  if (role === "system" && r.chance(0.6)) {
    m.toolsAdded = [tool(r, r.int(3), { schemas: false }), tool(r, r.int(3), { schemas: false })].slice(0, r.int(3));
    if (r.chance(0.4)) m.toolsRemoved = [{ name: `t${r.int(3)}` }];
  }
  if (r.chance(0.03)) hostile(m, "role", i);
  return m;
}

/** A tool; with `schemas`, its parameters are sometimes not JSON Schema (`schemaObject`). */
function tool(r, n, { schemas = true } = {}) {
  const t = { name: `t${n}`, description: r.pick(["a", "b", "a"]), parameters: { type: "object", properties: {} } };
  if (r.chance(0.2)) t.parameters.properties.x = { type: r.pick(["string", "number"]) };
  if (r.chance(0.1)) t.label = "extra";
  if (schemas && r.chance(0.15)) t.parameters = schemaObject(r);
  return t;
}

/** `parameters` of every kind T-4.3.8 tells apart: Standard Schemas with and without a JSON Schema converter (an
 *  object, a function as ArkType's), `~standard` of another version, a class instance, a function, a null-prototype
 *  object. */
function schemaObject(r) {
  const validate = (value) => ({ value });
  const jsonSchema = { input: () => ({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { x: { type: "string" } } }), output: () => ({}) };
  const standard = (props) => ({ "~standard": { version: 1, vendor: "test", validate, ...props } });
  switch (r.int(7)) {
    case 0: return standard({ jsonSchema });
    case 1: return standard({});
    case 2: return Object.assign(() => {}, standard({ jsonSchema }));
    case 3: return { "~standard": { version: 2, validate }, type: "object" };
    case 4: return new (class Schema { type = "object"; })();
    case 5: return () => {};
    default: return Object.assign(Object.create(null), { type: "object", properties: {} });
  }
}

function agentState(r, seed) {
  const st = {
    messages: Array.from({ length: r.int(4) }, (_, i) => message(r, i)),
    streamingMessage: undefined,
    pendingToolCalls: new Set(r.chance(0.5) ? ["c1"] : []),
    errorMessage: undefined,
    steering: Array.from({ length: r.int(3) }, (_, i) => ({ role: "user", content: `s${i}`, timestamp: i })),
    followUp: Array.from({ length: r.int(3) }, (_, i) => ({ role: "user", content: `f${i}`, timestamp: i })),
    steeringMode: r.pick(["all", "one-at-a-time", "one-at-a-time"]),
    followUpMode: r.pick(["all", "one-at-a-time"]),
    transitSteering: [],
    transitFollowUp: [],
    completedTools: r.chance(0.5) ? [{ toolCallId: "c1" }, { toolCallId: "c2" }] : [],
    endedTools: [],
  };
  if (r.chance(0.5)) st.ck = { seq: 0 };
  // Issue 32: usage totals already held (or odd values where they should be).
  if (r.chance(0.5)) st.totalUsage = usageLike(r);
  if (r.chance(0.3)) st.runUsage = usageLike(r);
  if (r.chance(0.04)) hostile(st, r.pick(["messages", "ck", "steering", "pendingToolCalls", "transitSteering", "totalUsage"]), seed);
  return st;
}

/** Issue 32: a usage as providers fill it, or something else where one is read (missing cost, strings, NaN). */
function usageLike(r) {
  const n = () => r.pick([0, 1, 2.5, 1000, NaN, Infinity, "3", undefined, -1]);
  switch (r.int(6)) {
    case 0: return undefined;
    case 1: return r.pick([null, 7, "usage"]);
    case 2: return { input: n(), output: n(), totalTokens: n() };
    default: return {
      input: n(), output: n(), cacheRead: n(), cacheWrite: n(), totalTokens: n(),
      cost: r.chance(0.8) ? { input: n(), output: n(), cacheRead: n(), cacheWrite: n(), total: n() } : r.pick([null, 1]),
    };
  }
}

const EVENT_TYPES = [
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_end",
  "turn_end",
  "turn_start",
  "agent_end",
  "agent_start",
  7,
  undefined,
];

function agentEvent(r, seed) {
  const type = r.pick(EVENT_TYPES);
  const m = message(r, 100 + r.int(5));
  const event = { type, message: m };
  if (String(type).startsWith("tool_execution")) {
    Object.assign(event, { toolCallId: `c${r.int(3)}`, toolName: "t0", result: { content: [] }, isError: r.chance(0.3) });
  }
  // Issue 32: a reply's usage, and the limit that stopped a run.
  if (m && typeof m === "object" && r.chance(0.6)) m.usage = usageLike(r);
  if (r.chance(0.4)) {
    event.limitReached = r.chance(0.8)
      ? { limit: "maxTurns", scope: "run", max: 2, value: 2, message: "Run stopped: turn limit of 2 reached" }
      : r.pick([null, "x", 3]);
  }
  if (r.chance(0.04)) hostile(event, r.pick(["type", "message", "toolCallId", "toolName", "limitReached"]), seed);
  return event;
}

// ---- the parity tests

test("reduceAgentEvent: the reducer's twin agrees with agent_state::reducer on random states and events", { skip }, () => {
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = (rec) => {
        const r = rng(seed * 7919 + i);
        const st = agentState(r, seed);
        // The same transit message as the event's, in one case out of four: retain compares by identity.
        const event = agentEvent(r, seed);
        const transit = Object.getOwnPropertyDescriptor(st, "transitSteering")?.value;
        const type = Object.getOwnPropertyDescriptor(event, "type")?.value;
        const sent = Object.getOwnPropertyDescriptor(event, "message")?.value;
        if (r.chance(0.25) && transit && type === "message_end" && sent) transit.push(sent);
        return { raw: { st, event }, st: rec.wrap(st), event: rec.wrap(event) };
      };
      same(`seed ${seed} case ${i}`, build, (reference, input) =>
        fastPath("reduceAgentEvent", reference, input.st, input.event),
      );
    }
  }
});

test("reduceAgentEvent: recorded Agent runs replay to the same state through both", { skip }, async () => {
  const runs = [];
  for (const parallel of [true, false]) {
    const events = [];
    // Issue 32: replies with usage, and (sequential) a limit that stops the run after its first turn.
    const usage = { input: 3, output: 4, cacheRead: 1, cacheWrite: 0, totalTokens: 8,
      cost: { input: 0.1, output: 0.2, cacheRead: 0.01, cacheWrite: 0, total: 0.31 } };
    const faux = createFaux([
      assistant([text("checking"), toolCall("c1", "echo", { v: 1 }), toolCall("c2", "echo", { v: 2 })], { usage }),
      assistant([text("done")], { usage }),
    ]);
    const echo = {
      name: "echo",
      label: "echo",
      description: "echo",
      parameters: { type: "object", properties: { v: { type: "number" } } },
      execute: async (_id, args) => ({ content: [{ type: "text", text: String(args.v) }], details: {} }),
    };
    const agent = new Agent({
      initialState: { tools: [echo], model: fauxModel() },
      streamFn: faux.streamFn,
      toolExecution: parallel ? "parallel" : "sequential",
      ...(parallel ? {} : { limits: { maxTurns: 1 } }),
    });
    agent.subscribe((e) => events.push(structuredClone(e)));
    await agent.prompt("go");
    agent.steer({ role: "user", content: "more", timestamp: 1 });
    runs.push(events);
  }
  assert.ok(runs[1].some((e) => e.type === "agent_end" && e.limitReached), "the sequential run was stopped by its limit");
  for (const [n, events] of runs.entries()) {
    assert.ok(events.length > 10, `run ${n} recorded ${events.length} events`);
    for (const durable of [false, true]) {
      same(`run ${n} durable ${durable}`, (rec) => {
        const st = { messages: [], pendingToolCalls: new Set(), completedTools: [], endedTools: [] };
        Object.assign(st, { transitSteering: [], transitFollowUp: [] });
        if (durable) st.ck = {};
        const copies = structuredClone(events);
        return { raw: st, st: rec.wrap(st), events: copies.map((e) => rec.wrap(e)) };
      }, (reference, input) => input.events.map((e) => fastPath("reduceAgentEvent", reference, input.st, e)));
    }
  }
});

test("initState: a new Agent's state as agent_state::init writes it, each empty list and set a fresh one", { skip }, () => {
  const FIELDS = ["model", "thinkingLevel", "tools", "messages", "isStreaming", "streamingMessage", "pendingToolCalls",
    "errorMessage", "steering", "followUp", "steeringLeftByAbort", "steeringMode", "followUpMode", "listeners",
    "active", "onCheckpoint", "agent", "transitSteering", "transitFollowUp", "completedTools", "endedTools",
    "interrupted", "approvals", "pendingApprovals", "totalUsage", "runUsage", "limitReached"];
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      same(`seed ${seed} case ${i}`, (rec) => {
        const r = rng(seed * 15485863 + i);
        // The facade's object (every field present, undefined), or a bare one; now and then a setter that throws.
        const st = r.chance(0.5) ? Object.fromEntries(FIELDS.map((k) => [k, undefined])) : {};
        if (r.chance(0.1)) {
          Object.defineProperty(st, r.pick(FIELDS), { set() { throw new Error(`setter ${seed}`); }, configurable: true });
        }
        const values = [
          r.chance(0.8) ? { id: `m${r.int(3)}`, api: "faux" } : undefined,
          r.pick(["off", "high"]),
          Array.from({ length: r.int(3) }, (_, n) => tool(r, n, { schemas: false })),
          Array.from({ length: r.int(4) }, (_, n) => message(r, n)),
          r.pick(["all", "one-at-a-time"]),
          r.pick(["all", "one-at-a-time"]),
          r.chance(0.5) ? function onCheckpoint() {} : undefined,
          { name: "agent" },
        ];
        return { raw: st, st: rec.wrap(st), values };
      }, (reference, input) => fastPath("initState", reference, input.st, input.values));
    }
  }
  // Fresh each time: two agents never share a queue, a set or a list.
  const made = [1, 2].map(() => {
    const st = {};
    fastPath("initState", false, st, [undefined, "off", [], [], "all", "all", undefined, {}]);
    return st;
  });
  for (const key of FIELDS) {
    const [a, b] = made.map((st) => st[key]);
    if (a !== null && typeof a === "object") assert.notEqual(a, b, `${key} is a fresh value`);
  }
  assert.deepEqual(Object.keys(made[0]), FIELDS);
});

test("beginRunState / endRunState: a run's start and end write the state as agent_state::init does", { skip }, () => {
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = (rec) => {
        const r = rng(seed * 32452843 + i);
        const st = agentState(r, seed);
        // The state is the library's own object, of data properties (a getter without a setter, which Reflect.set
        // refuses quietly and an assignment loudly, is not one of its shapes); now and then a setter that throws:
        // both stop at the same write.
        for (const key of Object.keys(st)) if (Object.getOwnPropertyDescriptor(st, key).get) delete st[key];
        if (r.chance(0.1)) {
          const key = r.pick(["active", "isStreaming", "errorMessage", "limitReached", "transitFollowUp", "pendingToolCalls"]);
          Object.defineProperty(st, key, { set() { throw new Error(`setter ${seed}`); }, configurable: true });
        }
        return { raw: st, st: rec.wrap(st), active: { controller: "c", signal: "s", promise: "p", resolve: "r" } };
      };
      same(`begin: seed ${seed} case ${i}`, build, (reference, input) => fastPath("beginRunState", reference, input.st, input.active));
      same(`end: seed ${seed} case ${i}`, build, (reference, input) => fastPath("endRunState", reference, input.st));
    }
  }
  // Fresh each time: two runs never share a list or a set.
  const ended = [1, 2].map(() => {
    const st = {};
    fastPath("endRunState", false, st);
    fastPath("beginRunState", false, st, {});
    return st;
  });
  for (const key of ["transitSteering", "transitFollowUp", "completedTools", "endedTools", "pendingToolCalls", "steeringLeftByAbort"]) {
    assert.notEqual(ended[0][key], ended[1][key], `${key} is a fresh value`);
  }
});

test("queuePoller: the poller's twin drains as agent_state::drain does", { skip }, () => {
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const queue = i % 2 ? "followUp" : "steering";
      same(`seed ${seed} case ${i} ${queue}`, (rec) => {
        const r = rng(seed * 104729 + i);
        const st = agentState(r, seed);
        return { raw: st, st: rec.wrap(st), skip: r.chance(0.3), polls: 1 + r.int(4) };
      }, (reference, input) => {
        const poll = fastPath("queuePoller", reference, input.st, queue, input.skip);
        return Array.from({ length: input.polls }, () => poll());
      });
    }
  }
});

test("toolChanges: the declaration diff's twin agrees with declare::tools", { skip }, () => {
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = (rec) => {
        const r = rng(seed * 15485863 + i);
        const messages = Array.from({ length: r.int(8) }, (_, j) => message(r, j));
        const extra = r.chance(0.3) ? [[[{ name: "t1" }], [tool(r, 2)]]] : [];
        const tools = Array.from({ length: r.int(4) }, () => tool(r, r.int(4)));
        if (r.chance(0.03)) hostile(tools, 0, seed);
        return { raw: { messages, extra, tools }, messages: rec.wrap(messages), extra, tools: rec.wrap(tools) };
      };
      // Results and errors, not reads: see the header.
      same(`seed ${seed} case ${i}`, build, (reference, input) =>
        fastPath("toolChanges", reference, input.messages, input.extra, input.tools),
      { compareLog: false });
    }
  }
});

test("toolChanges: a long transcript, scanned again after it grew, gives the same changes (reads not compared)", { skip }, () => {
  for (const seed of SEEDS) {
    const r = rng(seed);
    const base = Array.from({ length: 300 + r.int(50) }, (_, j) => message(r, j));
    const later = Array.from({ length: 1 + r.int(5) }, (_, j) => message(r, 1000 + j));
    const tools = [tool(r, 0, { schemas: false }), tool(r, 1, { schemas: false })];
    same(`seed ${seed}`, () => {
      const messages = structuredClone(base.filter((m) => !Object.getOwnPropertyDescriptor(m, "role")?.get));
      return { raw: messages, messages, tools: structuredClone(tools) };
    }, (reference, input) => {
      const first = fastPath("toolChanges", reference, input.messages, [], input.tools);
      input.messages.push(...structuredClone(later.filter((m) => !Object.getOwnPropertyDescriptor(m, "role")?.get)));
      return [first, fastPath("toolChanges", reference, input.messages, [], input.tools)];
    }, { compareLog: false });
  }
});

test("firstBadMessage and defaultConvertToLlm: the twins agree with the references", { skip }, () => {
  const entries = [
    () => ({ role: "user" }),
    () => ({ role: "assistant" }),
    () => ({ role: "toolResult" }),
    () => ({ role: "system" }),
    () => ({ role: "custom" }),
    () => ({ role: 3 }),
    () => ({}),
    () => null,
    () => [],
    () => "user",
    () => 42,
    () => Object.assign(() => {}, { role: "user" }),
    () => hostile({}, "role", "x"),
  ];
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = (rec) => {
        const r = rng(seed * 31 + i);
        const list = Array.from({ length: r.int(6) }, () => r.pick(entries)());
        return { raw: list, list: rec.wrap(list) };
      };
      same(`firstBadMessage seed ${seed} case ${i}`, build, (reference, input) =>
        fastPath("firstBadMessage", reference, input.list),
      );
      same(`defaultConvertToLlm seed ${seed} case ${i}`, build, (reference, input) =>
        fastPath("defaultConvertToLlm", reference)(input.list),
      );
    }
  }
});

test("agentStateValid: the twin's one-step check agrees with the full check", { skip }, () => {
  const fn = () => {};
  const answers = { valid: 0, invalid: 0 };
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = (rec) => {
        const r = rng(seed * 613 + i);
        const agent = { convertToLlm: fn, streamFunction: fn };
        const st = { tools: [{ ...tool(r, 0), execute: fn }], messages: [{ role: "user" }], model: { id: "m" } };
        switch (r.int(14)) {
          case 0: st.tools = "no"; break;
          case 1: st.messages = [{ role: 1 }]; break;
          case 2: st.model = null; break;
          case 3: agent.convertToLlm = 1; break;
          case 4: agent.beforeToolCall = "x"; break;
          case 5: agent.toolTimeoutMs = -1; break;
          case 6: agent.maxParallelTools = 0; break;
          case 7: st.tools = [{ name: "t" }]; break;
          case 8: hostile(agent, "transformContext", seed); break;
          case 9: agent.afterToolCall = fn; agent.toolTimeoutMs = 5; break;
          // Issue 32: limits, valid and not, on an otherwise valid state.
          case 10:
            agent.limits = r.pick([{ maxTurns: 2, maxCostUsd: 0.5 }, { maxTurns: 0 }, [], { maxCostUsd: "1" }, null]);
            break;
          case 11:
            agent.totalLimits = r.pick([{ maxCostUsd: 1 }, { maxTokens: -1 }, 5, { maxTurns: 0 }, { maxTokens: Infinity }]);
            break;
          default: break;
        }
        return { raw: { agent, st }, agent: rec.wrap(agent), st: rec.wrap(st) };
      };
      // The twin may only answer `true` where the full check passes; on these inputs it answers exactly as the
      // check does. Its reads are its own (it reads in the check's order but not the error path's extra reads).
      same(`seed ${seed} case ${i}`, build, (reference, input) => {
        const valid = fastPath("agentStateValid", reference, input.agent, input.st);
        if (reference) answers[valid ? "valid" : "invalid"]++;
        return valid;
      }, { compareLog: false });
    }
  }
  // Both answers are common: the cases are not all refused early (nor all accepted).
  assert.ok(answers.valid > SEEDS.length * CASES_PER_SEED / 4 && answers.invalid > SEEDS.length * CASES_PER_SEED / 4, JSON.stringify(answers));
});

test("loopArgsValid: the twin's one-step check of agentLoop's arguments agrees with the full check (Checker)", { skip }, () => {
  const fn = () => {};
  const answers = { valid: 0, invalid: 0 };
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = (rec) => {
        const r = rng(seed * 1171 + i);
        const args = {
          prompts: [{ role: "user", content: "go", timestamp: 1 }],
          hasPrompts: r.chance(0.7),
          context: { messages: [{ role: "user", content: "before", timestamp: 0 }], tools: [{ ...tool(r, 0), execute: fn }] },
          config: { model: { id: "m" }, convertToLlm: fn },
          emit: fn,
          hasEmit: r.chance(0.5),
          signal: r.pick([undefined, null, new AbortController().signal]),
          streamFn: r.pick([undefined, null, fn]),
        };
        switch (r.int(24)) {
          case 0: args.prompts = "go"; break;
          case 1: args.prompts = [{ role: 7 }]; break;
          case 2: args.context = null; break;
          case 3: args.context.messages = {}; break;
          case 4: args.context.tools = [{ name: 1 }]; break;
          case 5: args.config = undefined; break;
          case 6: args.config.model = "gpt"; break;
          case 7: args.config.convertToLlm = undefined; break;
          case 8: args.config[r.pick(["streamFn", "transformContext", "getApiKey", "beforeToolCall", "finishTurn"])] = r.pick(["x", 1, {}]); break;
          case 9: args.config[r.pick(["streamFn", "afterToolCall", "prepareNextTurn"])] = fn; break;
          case 10: args.config[r.pick(["toolTimeoutMs", "streamIdleTimeoutMs", "abortGraceMs"])] = r.pick([-1, 5, Infinity, "5", NaN]); break;
          case 11: args.config.limits = r.pick([{ maxTurns: 2 }, { maxTurns: 0 }, [], { maxCostUsd: "1" }, null, { maxToolCalls: 1.5 }]); break;
          case 12: args.emit = "not a function"; break;
          case 13: args.signal = {}; break;
          case 14: args.streamFn = "openai"; break;
          case 15: hostile(args.config, "transformContext", seed); break;
          case 16: hostile(args.context, "messages", seed); break;
          case 17: args.config.maxParallelTools = r.pick([0, 2, 2.5, Infinity]); break;
          case 18: args.context.systemPrompt = r.pick(["sys", 3, undefined]); break;
          default: break;
        }
        const wrapped = {
          ...args,
          context: args.context && typeof args.context === "object" ? rec.wrap(args.context) : args.context,
          config: args.config && typeof args.config === "object" ? rec.wrap(args.config) : args.config,
        };
        return { raw: args, ...wrapped };
      };
      // The twin may only answer `true` where the full check passes; on these inputs it answers exactly as the check
      // does. Its reads are its own (it reads in the check's order but not the error path's extra reads).
      same(`seed ${seed} case ${i}`, build, (reference, a) => {
        const valid = fastPath("loopArgsValid", reference, a.prompts, a.hasPrompts, a.context, a.config, a.emit, a.hasEmit, a.signal, a.streamFn);
        if (reference) answers[valid ? "valid" : "invalid"]++;
        return valid;
      }, { compareLog: false });
    }
  }
  // Both answers are common: the cases are not all refused early (nor all accepted).
  assert.ok(answers.valid > SEEDS.length * CASES_PER_SEED / 4 && answers.invalid > SEEDS.length * CASES_PER_SEED / 4, JSON.stringify(answers));
});

test("callListeners: the dispatch twin calls the same listeners in the same order", { skip }, () => {
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = () => {
        const r = rng(seed * 2741 + i);
        const calls = [];
        const listeners = new Set();
        const make = (n) => {
          const kind = r.pick(["plain", "plain", "throws", "adds", "removes", "promise"]);
          const f = (a, b) => {
            calls.push(`${n} ${a} ${b}`);
            if (kind === "throws") throw new Error(`listener ${n}`);
            if (kind === "adds" && n < 20) listeners.add(make(n + 10));
            if (kind === "removes") for (const g of listeners) if (g !== f) { listeners.delete(g); break; }
            if (kind === "promise") return Promise.resolve(n);
            return n;
          };
          return f;
        };
        for (let n = 0; n < r.int(6); n++) listeners.add(make(n));
        return { raw: calls, listeners, calls, asArray: r.chance(0.2) };
      };
      same(`seed ${seed} case ${i}`, build, (reference, input) => {
        const list = input.asArray ? [...input.listeners] : input.listeners;
        return fastPath("callListeners", reference, list, "event", "signal");
      });
    }
  }
});

test("pumpEvent: the pump's twin handles one event as fast::pump does", { skip }, () => {
  const types = ["start", "text_delta", "thinking_end", "toolcall_start", "done", "error", "other", 5, undefined];
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const build = (rec) => {
        const r = rng(seed * 3571 + i);
        const partial = { role: "assistant", content: [{ type: "text", text: `p${i}` }] };
        const event = r.chance(0.1) ? r.pick(["str", null, 4]) : { type: r.pick(types), partial };
        if (typeof event === "object" && event && r.chance(0.05)) hostile(event, r.pick(["type", "partial"]), seed);
        const messages = [{ role: "user" }, { role: "assistant" }];
        const seen = [];
        const sinkKind = r.pick(["none", "ok", "throws"]);
        const sink =
          sinkKind === "none"
            ? undefined
            : (u) => {
                seen.push(u.type);
                if (sinkKind === "throws") throw new Error("sink");
              };
        const slot = r.pick([-1, 1]);
        return {
          raw: { messages, seen },
          event: typeof event === "object" && event ? rec.wrap(event) : event,
          messages: rec.wrap(messages),
          slot,
          sink,
        };
      };
      same(`seed ${seed} case ${i}`, build, (reference, input) =>
        fastPath("pumpEvent", reference, input.event, input.messages, input.slot, input.sink),
      );
    }
  }
});

function jsonData(r, depth) {
  switch (depth > 3 ? r.int(4) : r.int(7)) {
    case 0: return r.pick([0, -1.5, 1e21, 3]);
    case 1: return r.pick(["", "a", "\u00e9", "\ud83d\ude00"]);
    case 2: return r.chance(0.5);
    case 3: return null;
    case 4: return Array.from({ length: r.int(3) }, () => jsonData(r, depth + 1));
    default: {
      const o = {};
      for (let k = 0; k < r.int(4); k++) o[r.pick(["a", "b", "1", "z"])] = jsonData(r, depth + 1);
      return o;
    }
  }
}

test("jsonCopy and patchCopy: the view's twins copy and patch JSON data as the references do", { skip }, () => {
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const r = rng(seed * 7 + i);
      const data = { root: jsonData(r, 0), list: [1, { x: "y" }], k: "v" };
      same(`jsonCopy seed ${seed} case ${i}`, () => ({ raw: structuredClone(data), v: structuredClone(data) }),
        (reference, input) => fastPath("jsonCopy", reference, input.v));
      const patches = [];
      if (r.chance(0.5)) patches.push([["k"], jsonData(r, 2)]);
      if (r.chance(0.3)) patches.push([["list", 1, "x"]]);
      if (r.chance(0.3)) patches.push([["list", 0], 0, 0]);
      if (r.chance(0.2)) patches.push([[], 0, 0]);
      if (r.chance(0.1)) patches.push([[], jsonData(r, 1)]);
      same(`patchCopy seed ${seed} case ${i}`, () => ({ raw: structuredClone(data), copy: structuredClone(data) }),
        (reference, input) => fastPath("patchCopy", reference, input.copy, JSON.stringify(patches)));
    }
  }
});

test("jsonTextKept and jsonParseKept: each round-trips what Rust reads of a snapshot; the twin keeps long strings and marker characters out of the text", { skip }, () => {
  const MARK = "\uFDD0";
  const long = (n, c = "a") => c.repeat(n);
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const r = rng(seed * 31 + i);
      const value = {
        image: { type: "image", data: long(1024 + r.int(3000), "x"), mimeType: "image/png" },
        short: long(r.int(1023), "s"),
        marked: `a${MARK}b`,
        fake: `${MARK}s0.5\uFDD1`,
        lone: r.chance(0.5) ? "\uD800" : "\uDFFF x",
        list: [jsonData(r, 0), long(1023, "y"), long(1024, "z"), { deep: [long(2000, "é")] }],
        [long(1500, "k")]: "a long key stays in the text",
      };
      const expected = JSON.parse(JSON.stringify(value));
      const sides = [true, false].map((reference) => {
        const [text, table] = fastPath("jsonTextKept", reference, structuredClone(value));
        return { text, table, back: fastPath("jsonParseKept", reference, text, table) };
      });
      for (const [k, side] of sides.entries()) assert.deepEqual(side.back, expected, `seed ${seed} case ${i}: ${k ? "twin" : "reference"} round trip`);
      const [ref, twin] = sides;
      // The reference keeps nothing; the twin keeps every long string value and every one holding the marker.
      assert.equal(ref.text, JSON.stringify(value));
      assert.equal(ref.table, undefined);
      const kept = twin.table ?? [];
      assert.ok(kept.length >= 5, `seed ${seed} case ${i}: kept ${kept.length}`);
      for (const x of kept) assert.ok(x.length >= 1024 || x.includes(MARK), "only long or marked strings are kept");
      assert.ok(!JSON.parse(twin.text, (_, x) => x).list.some((x) => typeof x === "string" && x.length >= 1024), "no long value left in the text");
      assert.ok(twin.text.length < ref.text.length - 1024, "the text is smaller by the kept strings");
    }
  }
});

// ---- checkToolCall (T-4.3): the validator's twin (snippets/validate.js) against core::fast::check_call
//
// Compared: the outcome, the arguments `execute` gets described structurally (-0, NaN, BigInts, holes, Dates, Maps,
// typed arrays, cycles by their place) or the thrown error's class and message, or for a Standard Schema what its
// `validate` returned. Not compared: reads and writes, as the reference reads the schema and the arguments through
// JSON.stringify and structuredClone while the twin reads the clone's values directly (both read the caller's
// objects only through those engine operations, `toJSON`, getters and a Standard Schema's own members). A case whose
// arguments or schema holds a string made of the view's marker character reads differently by design (the reference
// takes it for a marker, README's one collision): no input here holds one.

const VALIDATE_CASES_PER_SEED = Number(process.env.VALIDATE_PARITY_CASES ?? 3000);

/** `fn()`'s outcome as text: `args …`/`standard …` with the value described, or the thrown class and message. */
function validated(fn) {
  try {
    const [code, v] = fn();
    return `${code} ${describeValue(v)}`;
  } catch (e) {
    return `${e?.constructor?.name}: ${e?.message}`;
  }
}

const checkToolCall = (reference, tool, call, args) => fastPath("checkToolCall", reference, tool, call, args);

/** Both sides on one input: the reference's outcome and the twin's. */
function bothChecked(tool, call, args, describeWith = validated) {
  return [true, false].map((reference) => describeWith(() => checkToolCall(reference, tool, call, args)));
}

const toolOf = (parameters, name = "t") => ({ name, parameters });
const callOf = (args, name = "t") => ({ type: "toolCall", id: "c", name, arguments: args });

function expectSameChecks(cases, label) {
  const differ = [];
  for (const [name, tool, call, args] of cases) {
    const [want, got] = bothChecked(tool, call, args);
    if (got !== want) differ.push(`${label} ${name}\nschema ${JSON.stringify(tool.parameters)?.slice(0, 400)}\nargs ${describeValue(args).slice(0, 400)}\nreference ${want.slice(0, 600)}\ntwin      ${got.slice(0, 600)}`);
  }
  assert.deepEqual(differ.slice(0, 5), [], `${differ.length} of ${cases.length} differ`);
}

test("checkToolCall: the validator's twin agrees with check_call on random schemas and arguments (tests/validate/schemas.mjs)", { skip }, (t) => {
  for (const seed of SEEDS) {
    const cases = [];
    for (const specials of [false, true]) {
      const g = generator(seed, { specials });
      const n = specials ? VALIDATE_CASES_PER_SEED / 3 : VALIDATE_CASES_PER_SEED;
      for (let i = 0; i < n; i++) {
        const [root, args] = g.pair();
        cases.push([`seed ${seed}${specials ? " (specials)" : ""} case ${i}`, toolOf(root), callOf(args), args]);
      }
    }
    expectSameChecks(cases, "");
    t.diagnostic(`seed ${seed}: ${cases.length} validations compared (PARITY_SEED=${seed} reruns it)`);
  }
});

test("checkToolCall: the non-JSON argument shapes of validate-values give the reference's outcome", { skip }, () => {
  const cases = VALUE_CASES.map(([name, parameters, args]) => [name, toolOf(parameters), callOf(args), args]);
  // A cycle through a long string, whose view is cut by its size, valid, coerced and failing; long strings where the
  // schema asks only for a string, and where it reads or coerces them.
  const big = "x".repeat(1 << 20);
  const looped = (n) => {
    const o = { n, s: big, list: [1] };
    o.self = o;
    o.list.push({ back: o });
    return o;
  };
  const number = { type: "object", properties: { n: { type: "number" }, self: { $ref: "#" } } };
  for (const n of ["not a number", "7", 7]) cases.push([`looped ${n}`, toolOf(number), callOf(null), looped(n)]);
  const twice = { a: 1 };
  twice.x = twice;
  twice.y = twice;
  twice.z = { w: twice, q: "1" };
  // The view unrolls `x` and `y` until 20,000 containers are written; `z.w`, written after, is cut at once, so its
  // `a` is not coerced.
  const late = { type: "object", properties: { a: { type: "string" }, z: { properties: { q: { type: "number" }, w: { properties: { a: { type: "string" } } } } } } };
  cases.push(["a cycle unrolled past 20,000 containers", toolOf(late), callOf(null), twice]);
  const cut = checkToolCall(false, toolOf(late), callOf(null), twice)[1];
  assert.deepEqual([cut.a, cut.z.q, cut.z.w.a], ["1", 1, 1], "the twin cut the cycle where the view does");
  const long = "1".repeat(1500);
  for (const [name, schema, args] of [
    ["long plain string", { type: "object", properties: { s: { type: "string" } }, required: ["s"] }, { s: long, n: NaN }],
    ["long string coerced", { type: "object", properties: { s: { type: "number" } } }, { s: long }],
    ["long string maxLength", { type: "object", properties: { s: { type: "string", maxLength: 10 } } }, { s: long, u: undefined }],
    ["long string pattern", { type: "array", items: { type: "string", pattern: "^1+$" } }, [long, "x".repeat(2000)]],
    ["long string in an enum", { enum: [long] }, long],
    ["long string wrapped", { type: "object", properties: { s: { type: "array", items: { type: "string" } } } }, { s: long }],
  ]) cases.push([name, toolOf(schema), callOf(args), args]);
  expectSameChecks(cases, "");
});

/** The `[schema, arguments, expected]` lines of the validator's Rust tables (`expect_all` in src/core/validate/). */
function rustTableCases() {
  const cases = [];
  for (const file of ["tests_coerce.rs", "tests_errors.rs", "tests.rs"]) {
    const text = readFileSync(new URL(`../../src/core/validate/${file}`, import.meta.url), "utf8");
    for (const line of text.split("\n")) {
      if (!/^\[.*"\]$/.test(line)) continue;
      let parsed;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // Rust code, not a table line
      }
      if (Array.isArray(parsed) && parsed.length === 3) cases.push([`${file}: ${line.slice(0, 80)}`, parsed[0], parsed[1]]);
    }
  }
  return cases;
}

/** `depth` levels of `wrap` around `leaf`. */
function nested(depth, leaf, wrap) {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = wrap(v);
  return v;
}

/** A value's nesting and its innermost leaf, without recursion (for values too deep to describe). */
function shape(v) {
  let depth = 0;
  while (Array.isArray(v) || (v !== null && typeof v === "object" && Object.keys(v).length === 1)) {
    v = Array.isArray(v) ? v[0] : Object.values(v)[0];
    depth++;
  }
  return `${depth} levels of ${typeof v} ${String(v)}`;
}

function shaped(fn) {
  try {
    const [code, v] = fn();
    return `${code} ${shape(v)}`;
  } catch (e) {
    return `${e?.constructor?.name}: ${e?.message}`;
  }
}

test("checkToolCall: the cases of the validator's Rust tests agree, with calls, limits, Standard Schemas and bad schemas", { skip }, (t) => {
  const table = rustTableCases();
  assert.ok(table.length > 150, `read ${table.length} table lines`);
  const cases = table.map(([name, schema, args]) => [name, toolOf(schema), callOf(args), args]);
  const prop = (schema, arg) => ({ type: "object", properties: { v: schema }, required: ["v"] });
  const add = (name, schema, args, tool = toolOf(schema), call = callOf(args)) => cases.push([name, tool, call, args]);
  // tests.rs: measured conversions, type arrays, numbers in messages, formats, unions, recursion.
  for (const [types, arg] of [[["integer", "null"], "5"], [["integer", "null"], ""], [["integer", "null"], "null"], [["number", "string"], true],
    [["string", "number"], true], [["string", "boolean"], null], [["boolean", "string"], null], [["integer", "boolean"], "true"]]) {
    add(`type array ${types} ${arg}`, prop({ type: types }), { v: arg });
  }
  for (const arg of ["", " 12 ", "0x10", "1e3", "Infinity", "tRuE", "12n", "9007199254740993n", "-0", "1e400"]) add(`number ${arg}`, prop({ type: "number" }), { v: arg });
  add("enum null 0", prop({ enum: [null, 0] }), { v: "null" });
  add("numbers in messages", prop({ enum: [1.0, 2e21, -0.0] }), { v: 3 });
  add("minimum 1.5", prop({ type: "number", minimum: 1.5 }), { v: 1 });
  add("multipleOf decimals", { type: "array", items: { multipleOf: 0.0001 } }, [0.0075, 0.00751, 1e-8, 123456789.123]);
  for (const format of ["idn-email", "iri", "x", "url", "regex", "uri", "hostname"]) {
    for (const s of ["%% not anything %%", "https://a.com:8080/x?y#z", "mailto:a@b", "https://", "http://a b", "http://a.com:99999", "a\\-b", "(", "xn--nxasmq6b.com", "xn--a.com"]) {
      add(`format ${format} ${s}`, { type: "string", format }, s);
    }
  }
  add("lone surrogate key ranks as one unit", { oneOf: [{ properties: { "é": {} }, required: ["é"], additionalProperties: false },
    { properties: { "\udfff": {} }, required: ["\udfff"], additionalProperties: false }] }, { x: 1 });
  add("a check past the limit inside coercion", { type: "object", properties: { a: { anyOf: [{ $ref: "#anc", exclusiveMaximum: 100, $anchor: "anc" }], type: "null", minimum: 1 } } }, { a: "text" });
  add("a self-referencing union overflows", { type: "object", properties: { a: { anyOf: [{ $ref: "#anc", $anchor: "anc" }] } } }, { a: 5 });
  for (const b of [null, 0, "5"]) add(`bare type branches first ${b}`, { type: "object", properties: { b: { anyOf: [{ $ref: "#anc" }, { type: "integer" }], $anchor: "anc" } } }, { b });
  const recursiveUnion = { $defs: { n: { anyOf: [
    { type: "object", properties: { a: { $ref: "#/$defs/n" } }, required: ["a"] },
    { type: "object", properties: { a: { $ref: "#/$defs/n" }, b: { type: "string" } }, required: ["b"] },
    { type: "array", items: { $ref: "#/$defs/n" } }] } }, $ref: "#/$defs/n" };
  add("recursive unions", recursiveUnion, nested(8, 5, (v) => ({ a: v })));
  for (const schema of [{ $ref: "#" }, { $ref: "#/$defs/a", $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } } },
    { anyOf: [{ $ref: "#" }, { type: "string" }] }, { allOf: [{ $ref: "#" }], properties: { a: { type: "integer" } } },
    { not: { $ref: "#" } }, { type: "array", items: { $ref: "#" } }]) {
    for (const args of [1, "x", { a: "1" }, [[["1"]]], null]) add(`$ref cycle ${JSON.stringify(schema)} ${JSON.stringify(args)}`, schema, args);
  }
  const tree = { $defs: { t: { type: "object", properties: { v: { type: "integer" }, kids: { type: "array", items: { $ref: "#/$defs/t" } } } } }, $ref: "#/$defs/t" };
  add("recursive tree", tree, nested(40, { v: "1" }, (v) => ({ v: "2", kids: [v] })));
  add("$id and anchors", { $id: "http://x.com/root.json", $defs: { a: { $id: "a.json", type: "integer" }, b: { $anchor: "bee", type: "string" } },
    properties: { a: { $ref: "a.json" }, b: { $ref: "#bee" }, c: { $ref: "http://x.com/a.json" }, d: { $ref: "#/$defs/a%20b" }, e: { $ref: "other.json" } } },
  { a: "5", b: 5, c: "x", d: 1, e: 1 });
  // check_call.rs: patches, wraps, deletes, -0, a lone surrogate.
  add("patches", { type: "object", properties: { a: { type: "number" }, b: { type: "object", properties: { c: { type: "array", items: { type: "integer" } }, d: { type: "string" } } },
    e: { type: "array", items: { type: "string" } }, z: { type: "integer" } } }, { a: "1", b: { c: [1, "2"], d: null }, e: "x", keep: { deep: [true] }, z: "-0.5", "\ud800": "x" });
  add("a wrap at the root", { type: "array", items: { type: "object", properties: { n: { type: "number" } } } }, { n: "5" });
  add("a wrap of a value with NaN beside", { type: "object", properties: { a: { type: "array", items: { type: "number" } }, z: {} } }, { a: "-0", z: NaN });
  add("__proto__ key", { type: "object", properties: { ["__proto__"]: { type: "number" } } }, JSON.parse('{"__proto__": "1", "x": 2}'));
  // Schema problems, boolean schemas, unreadable `parameters`, calls.
  for (const schema of [{ properties: { a: 5 } }, { items: "x" }, { not: null }, { anyOf: [{}, [1, { a: 2 }]] }, { properties: { a: { $ref: "#/properties/a/minimum" } } },
    { properties: { a: { minimum: 5, $ref: "#/properties/a/minimum" } } }, { type: "string", pattern: "(" }, { patternProperties: { "[": {} } }, true, false,
    { $defs: { unused: 5 }, type: "object" }, { anyOf: [{ const: 1 }, { const: "a" }] }, { if: 5 }, { $ref: "#/$defs/missing" }, { pattern: "\\p{L}" }, { pattern: "\\-" },
    null, 5, "schema", []]) {
    add(`schema ${JSON.stringify(schema)}`, schema, { a: "x" });
  }
  add("parameters undefined", undefined, {});
  class Params {}
  add("a class instance", new Params(), {});
  add("a function", () => {}, {});
  add("a Standard Schema without a converter", { "~standard": { version: 1, vendor: "v", validate: () => ({ value: 1 }) } }, {});
  add("a Standard Schema without a converter, no vendor", { "~standard": { version: 1, validate: () => ({ value: 1 }) } }, {}, { name: 5, parameters: { "~standard": { version: 1, validate: () => ({}) } } });
  const standard = (validate) => ({ "~standard": { version: 1, vendor: "t", validate, jsonSchema: { input: () => ({ type: "object" }) } } });
  add("a Standard Schema's answer", undefined, { n: "1", d: new Date(0) }, toolOf(standard((input) => ({ value: { got: input } }))));
  add("a Standard Schema's issues", undefined, { n: "1" }, toolOf(standard(() => ({ issues: [{ message: "no", path: ["n"] }] }))));
  add("a Standard Schema's promise", undefined, { n: 1 }, toolOf(standard(async (input) => ({ value: input }))));
  add("a Standard Schema's validate throws", undefined, { n: 1 }, toolOf(standard(() => { throw new TypeError("boom"); })));
  add("argumentsError", { type: "object" }, {}, toolOf({ type: "object" }), { name: "t", argumentsError: "bad json", arguments: {} });
  add("argumentsError not a string", { type: "object" }, {}, toolOf({ type: "object" }), { name: 7, argumentsError: new Error("oops"), arguments: {} });
  add("a call without a name", { type: "number" }, "x", toolOf({ type: "number" }), { arguments: "x" });
  add("no call at all", { type: "number" }, "x", toolOf({ type: "number" }), undefined);
  add("undefined arguments", { allOf: [{ type: "integer" }], type: "null" }, undefined);
  add("undefined arguments to an object", { type: "object" }, undefined);
  add("received text of a BigInt", { type: "object", properties: { n: { type: "string", minLength: 5 } } }, { n: 5n });
  const cyclicSchema = { type: "object" };
  cyclicSchema.properties = { self: cyclicSchema };
  add("a schema with a cycle", cyclicSchema, {});
  add("a schema with a BigInt", { type: "object", minimum: 1n }, {});
  add("a schema with toJSON", { toJSON: () => ({ type: "string" }) }, 5);
  add("a promise in the arguments", { type: "object" }, { p: Promise.resolve(1) });
  // Caller code on the way: getters that throw, in the arguments, the schema and the call.
  const throwing = (o, key) => hostile(o, key, "validate");
  add("a getter in the arguments throws", { type: "object" }, throwing({ a: 1 }, "b"));
  add("a getter in the schema throws", throwing({ type: "object" }, "properties"), {});
  add("the call's name getter throws", { type: "number" }, "x", toolOf({ type: "number" }), throwing({ arguments: "x" }, "name"));
  add("the call's argumentsError getter throws", { type: "number" }, 1, toolOf({ type: "number" }), throwing({ arguments: 1 }, "argumentsError"));
  add("a Standard Schema's validate getter throws", undefined, {}, toolOf({ "~standard": throwing({ version: 1, vendor: "t", jsonSchema: { input: () => ({}) } }, "validate") }));
  expectSameChecks(cases, "");

  // The depth limits (E-8.4.1), at and past them; described by their shape. Within the limit the comparisons stay at
  // 600 levels: the reference's recursion (wasm frames on the engine's stack) overflows that stack from 900 levels on
  // once the engine has optimised it (measured on Node 20: the first call passes 1,300 levels, the next ones throw),
  // and an overflow inside wasm leaves the instance's own stack pointer behind. The twin's walks run on a stack of
  // their own: it is held to the limit itself by the spot checks below.
  const MAX_DEPTH = 1400;
  const WITHIN = 600;
  const MAX_VALUE_DEPTH = 10000;
  const deep = [];
  const addDeep = (name, schema, args) => deep.push([name, schema, args]);
  const arrays = (n, leaf = 1) => nested(n, leaf, (v) => [v]);
  const typed = (n) => nested(n, { type: "integer" }, (s) => ({ type: "array", items: s }));
  addDeep("any depth takes the shortcut", {}, arrays(100000));
  addDeep("any depth takes the shortcut (array)", { type: "array" }, arrays(100000));
  addDeep("past the value limit", { minItems: 1 }, arrays(MAX_VALUE_DEPTH));
  addDeep("at the value limit", { minItems: 1 }, arrays(MAX_VALUE_DEPTH - 1));
  addDeep("past the value limit with a long string", {}, arrays(MAX_VALUE_DEPTH, "x".repeat(1024)));
  addDeep("a deep value with NaN", { minItems: 1 }, arrays(MAX_VALUE_DEPTH - 1, NaN));
  addDeep("past the schema limit", nested(2 * MAX_DEPTH + 8, {}, (s) => ({ items: s })), []);
  addDeep("within the schema limit", nested(WITHIN, {}, (s) => ({ items: s })), arrays(WITHIN));
  addDeep("typed past the limit", typed(MAX_DEPTH + 5), arrays(MAX_DEPTH + 5, "7"));
  addDeep("typed within the limit", typed(WITHIN), arrays(WITHIN, "7"));
  addDeep("typed within the limit, wrapped level by level", typed(WITHIN), "7");
  addDeep("typed 150", typed(150), arrays(150, "7"));
  addDeep("properties within the limit", nested(WITHIN, { type: "integer" }, (s) => ({ type: "object", properties: { a: s } })), nested(WITHIN, "7", (v) => ({ a: v })));
  addDeep("properties past the limit", nested(MAX_DEPTH + 5, { type: "integer" }, (s) => ({ type: "object", properties: { a: s } })), nested(MAX_DEPTH + 5, "7", (v) => ({ a: v })));
  addDeep("anyOf within the limit", nested(WITHIN / 2, { type: "integer" }, (s) => ({ anyOf: [{ type: "array", items: s }] })), "7");
  addDeep("anyOf past the limit", nested(MAX_DEPTH / 2 + 5, { type: "integer" }, (s) => ({ anyOf: [{ type: "array", items: s }] })), "7");
  addDeep("$ref walk to the limit", { type: "array", items: { $ref: "#" } }, arrays(MAX_DEPTH + 10, "x"));
  addDeep("a deep cycle", { $ref: "#/$defs/n", $defs: { n: { type: "object", properties: { self: { $ref: "#/$defs/n" }, n: { type: "number" } }, required: ["n"] } } }, (() => {
    const o = { n: "1" };
    o.self = o;
    return o;
  })());
  // A `--dev` build's reference stops at 300 levels (`MAX_DEPTH` of a debug build); the twin has the release limits.
  const debugBuild = shaped(() => checkToolCall(true, toolOf(typed(301)), callOf(null), arrays(301, "7"))).startsWith("RangeError");
  if (debugBuild) t.diagnostic("a --dev build: the depth limits are compared on a release build only");
  const differ = [];
  for (const [name, schema, args] of debugBuild ? [] : deep) {
    const [want, got] = bothChecked(toolOf(schema), callOf(null), args, shaped);
    if (got !== want) differ.push(`${name}: reference ${want.slice(0, 300)}, twin ${got.slice(0, 300)}`);
  }
  assert.deepEqual(differ, []);
  // Spot checks, so that the comparisons cannot pass on two equal wrong answers.
  const twin = (schema, args, call = callOf(args)) => validated(() => checkToolCall(false, toolOf(schema), call, args));
  assert.equal(twin({ type: "object", properties: { n: { type: "integer" }, tags: { type: "array", items: { type: "string" } }, opt: { type: "string" }, b: { type: "boolean" } }, required: ["n", "tags", "b"] },
    { n: "42.7", tags: "one", opt: null, b: "true" }), 'args {"n":42,"tags":["one"],"b":true}');
  assert.equal(twin({ type: "object", properties: { n: { type: "integer" }, tags: { type: "array", items: { type: "string" } }, b: { type: "boolean" } }, required: ["n", "tags", "b"] }, { n: "ten", extra: 1 }),
    'Error: Validation failed for tool "t":\n  - tags: missing\n  - b: missing\n  - n: expected integer, got string\n\nReceived arguments:\n{\n  "n": "ten",\n  "extra": 1\n}');
  assert.equal(twin(true, {}), "TypeError: Invalid value used as weak map key");
  // The twin at the limit exactly, from a deep stack: 1,399 levels of wrapping pass, 1,400 stop.
  const nest = (n, f) => (n === 0 ? f() : nest(n - 1, f));
  const atLimit = (n, args) => shaped(() => nest(3000, () => checkToolCall(false, toolOf(typed(n)), callOf(null), args)));
  assert.equal(atLimit(MAX_DEPTH - 1, "7"), `args ${MAX_DEPTH - 1} levels of number 7`);
  assert.equal(atLimit(MAX_DEPTH - 1, arrays(MAX_DEPTH - 1, "7")), `args ${MAX_DEPTH - 1} levels of number 7`);
  assert.equal(atLimit(MAX_DEPTH, "7"), "RangeError: Maximum call stack size exceeded");
  const objects = (n) => nested(n, { type: "integer" }, (s) => ({ type: "object", properties: { a: s } }));
  assert.equal(shaped(() => nest(3000, () => checkToolCall(false, toolOf(objects(MAX_DEPTH - 1)), callOf(null), nested(MAX_DEPTH - 1, "7", (v) => ({ a: v }))))),
    `args ${MAX_DEPTH - 1} levels of number 7`);
});

test("totalUsage (pkg-template/usage.js) sums a reply's usage as the core's reducer does (core::budget::read_usage)", { skip }, () => {
  const figure = (r) => r.pick([0, 1, 2.5, 1e6, -3, NaN, Infinity, "7", null, undefined, 0.1]);
  let compared = 0;
  for (const seed of SEEDS) {
    for (let i = 0; i < CASES_PER_SEED; i++) {
      const r = rng(seed * 977 + i);
      const usage = { input: figure(r), output: figure(r), cacheRead: figure(r), cacheWrite: figure(r), totalTokens: figure(r) };
      if (r.chance(0.8)) usage.cost = { input: figure(r), output: figure(r), cacheRead: figure(r), cacheWrite: figure(r), total: figure(r) };
      const message = { role: "assistant", content: [], usage, timestamp: 1 };
      const st = { messages: [], pendingToolCalls: new Set() };
      fastPath("reduceAgentEvent", true, st, { type: "message_end", message });
      const js = pkg.totalUsage([message]);
      // The reducer keeps no totals for a usage that adds nothing; totalUsage() then gives zeros.
      const { cost, ...counts } = js;
      const zero = Object.values(counts).every((v) => v === 0) && Object.values(cost).every((v) => v === 0);
      assert.deepEqual(st.runUsage, zero ? undefined : js, `seed ${seed} case ${i}: ${JSON.stringify(usage)}`);
      compared++;
    }
  }
  assert.ok(compared > 0);
});

test("the run-failure ending: the facade's failRun (after a trap) ends a run as the core's does (a listener threw)", { skip }, async () => {
  const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: [], cost: {
    input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 0 };
  const strip = (e) => JSON.parse(JSON.stringify(e, (k, v) => (k === "timestamp" ? 0 : v)));

  // The core: a listener throws on agent_start, so the run ends through handle_run_failure.
  const coreEvents = [];
  const agent = new Agent({ initialState: { model }, streamFn: createFaux([assistant([text("x")])]).streamFn });
  agent.subscribe((e) => {
    coreEvents.push(strip(e));
    if (e.type === "agent_start") throw new Error("boom");
  });
  await agent.prompt("hi");
  const failureEvents = coreEvents.slice(coreEvents.findIndex((e) => e.type === "agent_start") + 1);
  const coreState = strip({
    errorMessage: agent.state.errorMessage,
    isStreaming: agent.state.isStreaming,
    streamingMessage: agent.state.streamingMessage ?? null,
    pending: agent.state.pendingToolCalls.size,
    last: agent.state.messages.at(-1),
  });

  // The facade: failRun on a state object of the same shape.
  const jsEvents = [];
  let resolved = false;
  const active = { signal: new AbortController().signal, resolve: () => { resolved = true; } };
  const st = {
    model, messages: [], active, isStreaming: true, streamingMessage: undefined, pendingToolCalls: new Set(["c"]),
    listeners: new Set([(e) => { jsEvents.push(strip(e)); throw new Error("ignored"); }]),
  };
  await facade.__failRun(st, active, "boom");
  assert.ok(resolved);
  assert.deepEqual(jsEvents, failureEvents);
  assert.deepEqual(strip({
    errorMessage: st.errorMessage,
    isStreaming: st.isStreaming,
    streamingMessage: st.streamingMessage ?? null,
    pending: st.pendingToolCalls.size,
    last: st.messages.at(-1),
  }), coreState);

  // And the facade's reducer part agrees with the core's reducer on the failure events.
  same("failure events", (rec) => {
    const s = { messages: [], streamingMessage: undefined, pendingToolCalls: new Set(), errorMessage: undefined };
    return { raw: s, s, events: structuredClone(failureEvents) };
  }, (reference, input) =>
    input.events.forEach((e) => (reference ? fastPath("reduceAgentEvent", true, input.s, e) : facade.__reduceFailure(input.s, e))),
  { compareLog: false });
});

test("the run-failure ending: RunLedger.ending (after a trap) ends a loop run as end_with_failure does (a callback threw)", { skip }, async () => {
  const ending = require("../../pkg/dist/node/ending.js");
  const strip = (e) => JSON.parse(JSON.stringify(e, (k, v) => (k === "timestamp" ? 0 : v)));
  // Each D1 site throws once, at its first call (after the first turn where it is called only then); the events the
  // core emitted before the throw go through a ledger, whose ending must be exactly the core's.
  const SITES = ["transformContext", "convertToLlm", "getApiKey", "prepareRequest", "getSteeringMessages", "streamFn", "next",
    "finishTurn", "prepareNextTurn", "getFollowUpMessages"];
  const compared = [];
  for (const site of SITES) {
    const events = [];
    let seen = -1;
    const fail = () => {
      seen = events.length;
      throw new Error(`boom ${site}`);
    };
    const faux = createFaux([assistant([toolCall("c1", "echo", { v: 1 })]), assistant([text("done")])]);
    let streamFn = faux.streamFn;
    const overrides = {};
    if (site === "streamFn") streamFn = fail;
    else if (site === "next") {
      // The stream's iterator throws from its second next(): after `start`, so a partial message is open.
      streamFn = (...args) => {
        const inner = faux.streamFn(...args);
        return { [Symbol.asyncIterator]() {
          const it = inner[Symbol.asyncIterator]();
          let calls = 0;
          return { next: () => (++calls === 2 ? fail() : it.next()) };
        }, result: () => inner.result() };
      };
    } else if (site === "convertToLlm") overrides.convertToLlm = fail;
    else overrides[site] = fail;
    const tools = [fauxTool("echo", async () => okResult("echoed"))];
    const config = fauxConfig(overrides);
    await runAgentLoop([userMessage("hi")], { systemPrompt: "", messages: [], tools }, config, (e) => events.push(strip(e)), undefined, streamFn);
    assert.ok(seen >= 0, `${site} was called`);
    const ledger = new ending.RunLedger(config, undefined, undefined);
    for (const e of events.slice(0, seen)) ledger.see(structuredClone(e));
    const js = [...ledger.ending(`boom ${site}`)].map(strip);
    assert.deepEqual(js, events.slice(seen), `${site}: the ending after ${events.slice(0, seen).map((e) => e.type).join(",")}`);
    compared.push(`${site}:${js.map((e) => e.type).join(",")}`);
  }
  // Each shape of ending is reached: the turn open or closed, a partial message or none.
  const shapes = new Set(compared.map((c) => c.split(":")[1]));
  assert.ok(shapes.has("message_start,message_end,turn_end,agent_end"), compared.join("\n"));
  assert.ok(shapes.has("turn_start,message_start,message_end,turn_end,agent_end"), compared.join("\n"));
  assert.ok(shapes.has("message_end,turn_end,agent_end"), compared.join("\n"));
});

test("the seeds", { skip }, () => {
  console.log(`# parity seeds: ${SEEDS.join(", ")} (PARITY_SEED=<n> reruns one)`);
});
