// Reliability 1: every callback kind made to misbehave (SPEC D1, D3, D4, E-8.2, E-8.3.1, E-8.4.4, A-5.6, L-3.10.4).
// Table-driven: site × behaviour. Every run must end with agent_end (runAgentLoop resolves; only a failing emit
// rejects), leave no timer/immediate handle and cause no unhandled rejection. Expected outcomes are exact.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Agent, agentLoop, runAgentLoop, runToolCall } from "./impl.mjs";
import { assistant, config, createFaux, firstText, model, okResult, text, tool, toolCall, userMessage } from "./faux.mjs";
import {
  R,
  assertRunShape,
  bounded,
  bug,
  cyclic,
  deep,
  hostileProxy,
  hygienic,
  neverThenable,
  throwingGetters,
  throwingThenable,
  watchProcess,
} from "./reliability-helpers.mjs";

const watch = watchProcess();
const GRACE = 20; // abortGraceMs for every run here
const ABORT_AFTER = 10; // a never-settling callback aborts the run this long after it was called

// ---------------------------------------------------------------------------------------------
// Behaviours: make(tag, armAbort) returns the misbehaving callback. `failure(tag)` is the errorMessage a
// failure produces (E-8.3.1): Error → message, other values → String(value), unreadable → "Unknown error".
// ---------------------------------------------------------------------------------------------

const BEHAVIOURS = {
  throw: { kind: "throws", make: (tag) => () => { throw new Error(`boom ${tag}`); }, failure: (tag) => `boom ${tag}` },
  throwString: { kind: "throws", make: (tag) => () => { throw `str ${tag}`; }, failure: (tag) => `str ${tag}` },
  throwProxy: { kind: "throws", make: (tag) => () => { throw hostileProxy(tag); }, failure: () => "Unknown error" },
  reject: { kind: "rejects", make: (tag) => async () => { throw new Error(`rej ${tag}`); }, failure: (tag) => `rej ${tag}` },
  rejectUndefined: { kind: "rejects", make: () => () => Promise.reject(undefined), failure: () => "undefined" },
  thenableThrows: { kind: "rejects", make: (tag) => () => throwingThenable(tag), failure: (tag) => `then threw (${tag})` },
  undefined: { kind: "wrong", make: () => () => undefined },
  null: { kind: "wrong", make: () => () => null },
  number: { kind: "wrong", make: () => () => 42 },
  string: { kind: "wrong", make: () => () => "str" },
  array: { kind: "wrong", make: () => () => [] },
  object: { kind: "wrong", make: () => () => ({}) },
  proxy: { kind: "wrong", make: (tag) => () => hostileProxy(tag), failure: (tag) => `hostile proxy trap (${tag})` },
  getters: { kind: "wrong", make: (tag) => () => throwingGetters(tag) },
  neverThenable: { kind: "never", make: (tag, arm) => () => (arm(), neverThenable()) },
  neverPromise: { kind: "never", make: (tag, arm) => () => (arm(), new Promise(() => {})) },
};
const NAMES = Object.keys(BEHAVIOURS);
const failing = (b) => ["throws", "rejects"].includes(BEHAVIOURS[b].kind) || b === "proxy";

// ---------------------------------------------------------------------------------------------
// Expected outcomes per site
// ---------------------------------------------------------------------------------------------

const OK = { final: "stop", requests: 2, tool: { isError: false, text: "t ok" } };
const ARRAY_EXPECTED = (site) => `${site} must return an array of messages`;
const STREAM_EXPECTED = "streamFn must return an async iterable of assistant message events";

/** D1 sites: where the failure happens (requests made before it, whether the tool ran). */
const D1_SITES = {
  transformContext: { requests: 0, tool: false },
  convertToLlm: { requests: 0, tool: false },
  getApiKey: { requests: 0, tool: false },
  prepareRequest: { requests: 0, tool: false },
  getSteeringMessages: { requests: 0, tool: false },
  streamFn: { requests: 0, tool: false },
  next: { requests: 1, tool: false }, // the stream's iterator next(), from its 2nd call (after `start`)
  finishTurn: { requests: 1, tool: true },
  prepareNextTurn: { requests: 1, tool: true },
  getFollowUpMessages: { requests: 2, tool: true },
};
const TOOL_SITES = ["execute", "prepareArguments", "beforeToolCall", "afterToolCall"];

/** Wrong-type outcome of a D1 site: "ok", an errorMessage (string/RegExp), or a `{ bug, observed }` record. */
function d1Wrong(site, b) {
  if (b === "proxy") return BEHAVIOURS.proxy.failure(site);
  switch (site) {
    case "transformContext":
    case "convertToLlm":
      return b === "array" ? "ok" : ARRAY_EXPECTED(site);
    case "getSteeringMessages":
    case "getFollowUpMessages":
      return ["undefined", "null", "array"].includes(b) ? "ok" : ARRAY_EXPECTED(site);
    case "prepareRequest":
    case "prepareNextTurn":
      if (b === "number" || b === "string") return `${site} returned an invalid update: expected an object`;
      if (b === "getters") return `throwing getter context (${site})`;
      return "ok";
    case "finishTurn":
      // E-8.2: a non-decision is ignored, but reading a property that throws counts as a throw of finishTurn.
      if (b === "getters") return { bug: "finishTurn's result property `action` is read with errors swallowed (is_end_decision uses .ok()): a throwing getter is ignored instead of ending the run as a finishTurn throw (E-8.2 'reading a caller object's property throws')", expected: "throwing getter action (finishTurn)" };
      return "ok";
    case "getApiKey":
      return "ok"; // any value: `(await getApiKey()) || apiKey`, never inspected further
    case "streamFn":
      return STREAM_EXPECTED;
    case "next":
      if (["undefined", "null", "number", "string"].includes(b)) {
        const shown = { undefined: "undefined", null: "null", number: "42", string: "str" }[b];
        return `Iterator result ${shown} is not an object`;
      }
      return "starves"; // {}, [] and getter objects: endless `done: undefined` results (see the starvation tests)
    default:
      throw new Error(site);
  }
}

/** The exact outcome of (site, behaviour) for loop runs. */
function expected(site, b) {
  const kind = BEHAVIOURS[b].kind;
  if (site in D1_SITES) {
    const at = D1_SITES[site];
    const tool = at.tool ? OK.tool : undefined;
    const fail = (final, errorMessage) => ({ final, errorMessage, requests: at.requests, tool });
    if (kind === "throws" || kind === "rejects") return fail("error", BEHAVIOURS[b].failure(site));
    if (kind === "never") return fail("aborted", site === "streamFn" || site === "next" ? "Request was aborted" : "Operation aborted");
    const w = d1Wrong(site, b);
    if (w === "ok") return OK;
    if (w === "starves") return { starves: true };
    if (typeof w === "object") return { ...fail("error", w.expected), bug: w.bug };
    return fail("error", w);
  }
  // Tool sites: failures become the call's error result; the run continues normally (2 requests).
  const toolError = (t) => ({ final: "stop", requests: 2, tool: { isError: true, text: t } });
  if (kind === "throws") return toolError(BEHAVIOURS[b].failure(site));
  if (kind === "rejects" || kind === "never") {
    // prepareArguments is synchronous: a returned promise/thenable is the arguments, which nothing awaits (so it
    // never aborts anything); validation copies them with structuredClone, as the reference does, and that throws:
    // a promise as `#<Promise> could not be cloned.`, a thenable for its `then` function (issue 13).
    if (site === "prepareArguments") {
      const promise = b === "reject" || b === "rejectUndefined" || b === "neverPromise";
      return toolError(promise ? "#<Promise> could not be cloned." : /^then\(\) \{[^]*\} could not be cloned\.$/);
    }
    if (kind === "never") return { final: "toolResult", requests: 1, tool: { isError: true, text: "Operation aborted" } };
    return toolError(BEHAVIOURS[b].failure(site));
  }
  if (b === "proxy") return toolError(BEHAVIOURS.proxy.failure(site));
  if (b === "getters") {
    const field = { execute: "isError", prepareArguments: "role", beforeToolCall: "block", afterToolCall: "\\w+" }[site];
    return toolError(new RegExp(`^throwing getter ${field} \\(${site}\\)$`));
  }
  if (site === "execute") {
    if (b === "array" || b === "object") return { ...OK, tool: { isError: false, text: undefined } };
    return toolError('Tool "t" returned an invalid result: expected an object');
  }
  if (site === "prepareArguments") {
    if (b === "object") return OK;
    const validation = (got, shown) =>
      toolError(`Validation failed for tool "t":\n  - root: expected object, got ${got}\n\nReceived arguments:\n${shown}`);
    if (b === "undefined") {
      return {
        ...validation("undefined", "undefined"),
        bug: "parity: prepareArguments returning undefined reports 'expected object, got null' where the reference (pi-ai validateToolArguments) says 'got undefined'",
      };
    }
    return { null: validation("null", "null"), number: validation("integer", "42"), string: validation("string", '"str"'), array: validation("array", "[]") }[b];
  }
  return OK; // beforeToolCall / afterToolCall non-objects are ignored (E-8.2)
}

// ---------------------------------------------------------------------------------------------
// The scripted run: one tool turn (tool t, call c1), then a text answer; every hook configured.
// ---------------------------------------------------------------------------------------------

const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);

function setup(site, b) {
  const controller = new AbortController();
  let armed;
  // prepareArguments is synchronous (nothing awaits what it returns), so a "never settling" result there must
  // not abort anything: arming would only race the rest of the run.
  const arm = () => {
    if (site !== "prepareArguments") armed ??= setTimeout(() => controller.abort(), ABORT_AFTER);
  };
  const disarm = () => clearTimeout(armed);
  let hostile = BEHAVIOURS[b].make(site, arm);
  if (site === "prepareArguments") {
    // Synchronous by contract: nothing awaits what it returns, so silence rejections we create ourselves.
    const h = hostile;
    hostile = function (...args) {
      const v = h.apply(this, args);
      if (v instanceof Promise) v.catch(() => {});
      return v;
    };
  }
  const pick = (name, benign) => (site === name ? hostile : benign);
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("done"), assistant("extra"), assistant("extra")]);
  const t = tool(
    "t",
    pick("execute", async (id, args, signal, onUpdate) => {
      onUpdate({ content: [text("partial")], details: {} });
      return okResult("t ok");
    }),
    { prepareArguments: pick("prepareArguments", (a) => a) },
  );
  let nextCalls = 0;
  let streamFn = faux.streamFn;
  if (site === "streamFn") streamFn = hostile;
  if (site === "next") {
    streamFn = (m, c, o) => {
      const s = faux.streamFn(m, c, o);
      const it = s[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]: () => ({
          next: () => (++nextCalls >= 2 ? hostile() : it.next()),
          return: () => ({ done: true, value: undefined }),
        }),
        result: () => s.result(),
      };
    };
  }
  const cfg = config({
    transformContext: pick("transformContext", async (m) => m),
    convertToLlm: pick("convertToLlm", (m) => m.filter((x) => LLM_ROLES.has(x.role))),
    getApiKey: pick("getApiKey", () => "key"),
    beforeToolCall: pick("beforeToolCall", async () => undefined),
    afterToolCall: pick("afterToolCall", async () => undefined),
    finishTurn: pick("finishTurn", () => undefined),
    prepareRequest: pick("prepareRequest", () => undefined),
    prepareNextTurn: pick("prepareNextTurn", () => undefined),
    getSteeringMessages: pick("getSteeringMessages", async () => []),
    getFollowUpMessages: pick("getFollowUpMessages", async () => []),
    abortGraceMs: GRACE,
  });
  return { controller, faux, t, cfg, streamFn, hostile, disarm };
}

/** Runs the scenario through `api` ("run" = runAgentLoop, "stream" = agentLoop). */
async function runScenario(site, b, api) {
  const s = setup(site, b);
  const prompts = [userMessage("go")];
  const context = { messages: [], tools: [s.t] };
  if (api === "run") {
    const events = [];
    const result = await bounded(
      runAgentLoop(prompts, context, s.cfg, (e) => void events.push(e), s.controller.signal, s.streamFn),
      3000,
      `runAgentLoop ${site}/${b}`,
    ).finally(s.disarm);
    assert.equal(events.at(-1)?.messages, result, "agent_end.messages is the resolved value");
    return { ...s, events, result };
  }
  const stream = agentLoop(prompts, context, s.cfg, s.controller.signal, s.streamFn);
  const events = [];
  await bounded(
    (async () => {
      for await (const e of stream) events.push(e);
    })(),
    3000,
    `agentLoop ${site}/${b}`,
  );
  const result = await bounded(stream.result(), 1000, "agentLoop result()").finally(s.disarm);
  assert.equal(events.at(-1)?.messages, result, "result() is agent_end.messages");
  return { ...s, events, result };
}

function checkOutcome(out, exp, what) {
  const { events, result, faux } = out;
  assertRunShape(events, { messages: result, what });
  const last = result.at(-1);
  if (exp.final === "toolResult") assert.equal(last.role, "toolResult", `${what}: run ends after the aborted batch`);
  else {
    assert.equal(last.role, "assistant", `${what}: final role`);
    assert.equal(last.stopReason, exp.final, `${what}: final stopReason`);
    if (exp.final === "stop") assert.equal(firstText(last), "done");
    else assert.equal(last.errorMessage, exp.errorMessage, `${what}: final errorMessage`);
  }
  if (out.site !== "streamFn") assert.equal(faux.calls.length, exp.requests, `${what}: provider requests`);
  assert.ok(faux.calls.every((c) => !c.signalAbortedAtCall), `${what}: no request with an aborted signal`);
  const tr = result.filter((m) => m.role === "toolResult");
  if (exp.tool) {
    assert.equal(tr.length, 1, `${what}: one tool result`);
    assert.equal(tr[0].isError, exp.tool.isError, `${what}: tool isError`);
    if (exp.tool.text instanceof RegExp) assert.match(firstText(tr[0]), exp.tool.text);
    else assert.equal(firstText(tr[0]), exp.tool.text, `${what}: tool result text`);
  } else assert.equal(tr.length, 0, `${what}: no tool result`);
}

for (const site of [...Object.keys(D1_SITES), ...TOOL_SITES]) {
  for (const b of NAMES) {
    const exp = expected(site, b);
    if (exp.starves) continue; // child-process tests below
    const opts = exp.bug ? bug(exp.bug) : R;
    test(`D1/D4/E-8.2 ${site} → ${b}: exact ending via runAgentLoop and agentLoop; no timer, no unhandled rejection`, opts, async () => {
      for (const api of ["run", "stream"]) {
        await hygienic(watch, async () => {
          const out = await runScenario(site, b, api);
          checkOutcome({ ...out, site }, exp, `${api} ${site}/${b}`);
        }, `${api} ${site}/${b}`);
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// emit (runAgentLoop's sink): only a failing emit rejects (L-3.10.4), with exactly the thrown value
// ---------------------------------------------------------------------------------------------

for (const b of NAMES.filter((n) => BEHAVIOURS[n].kind !== "never")) {
  test(`L-3.10.4 emit → ${b}: ${failing(b) ? "rejects with exactly that value, nothing emitted after" : "ignored; the run completes"}`, R, async () => {
    await hygienic(watch, async () => {
      const s = setup("emit", "undefined");
      let thrown;
      const mk = BEHAVIOURS[b].make("emit", () => {});
      const events = [];
      const emit = (e) => {
        events.push(e);
        try {
          const v = mk();
          if (v && typeof v === "object") thrown = v; // proxy / thenable identity
          return v;
        } catch (err) {
          thrown = err;
          throw err;
        }
      };
      const p = runAgentLoop([userMessage("go")], { messages: [], tools: [s.t] }, s.cfg, emit, s.controller.signal, s.streamFn);
      if (failing(b)) {
        let rejection;
        let resolved = false;
        await bounded(p.then(() => void (resolved = true), (e) => void (rejection = e)), 3000, "runAgentLoop");
        assert.equal(resolved, false, "runAgentLoop rejects");
        if (b === "throw" || b === "throwString" || b === "throwProxy") assert.equal(rejection, thrown);
        else if (b === "rejectUndefined") assert.equal(rejection, undefined);
        else assert.equal(rejection?.message, BEHAVIOURS[b].failure("emit"));
        assert.deepEqual(events.map((e) => e.type), ["agent_start"], "nothing emitted after the failing emit");
        assert.equal(s.faux.calls.length, 0, "no request after the failing emit");
      } else {
        const result = await bounded(p, 3000, "runAgentLoop");
        assertRunShape(events, { messages: result });
        assert.equal(result.at(-1).stopReason, "stop");
        assert.equal(s.faux.calls.length, 2);
      }
    });
  });
}

test("L-3.10.4 emit failing on tool_execution_end of a parallel batch: rejects after the other tool settled; nothing emitted after", R, async () => {
  await hygienic(watch, async () => {
    let slowSettled = false;
    const fast = tool("fast", async () => okResult("fast"));
    const slow = tool("slow", async () => {
      await new Promise((r) => setTimeout(r, 30));
      slowSettled = true;
      return okResult("slow");
    });
    const faux = createFaux([assistant([toolCall("c1", "fast"), toolCall("c2", "slow")]), assistant("never")]);
    const events = [];
    const boom = new Error("emit failed at end");
    const emit = (e) => {
      events.push(e);
      if (e.type === "tool_execution_end") throw boom;
    };
    await assert.rejects(
      bounded(runAgentLoop([userMessage("go")], { messages: [], tools: [fast, slow] }, config({ abortGraceMs: GRACE }), emit, undefined, faux.streamFn), 3000, "run"),
      (e) => e === boom,
    );
    assert.equal(slowSettled, true, "the running execution settled before the rejection");
    assert.equal(events.at(-1).type, "tool_execution_end");
    assert.equal(events.filter((e) => e.type === "tool_execution_end").length, 1);
    assert.equal(faux.calls.length, 1);
  });
});

// ---------------------------------------------------------------------------------------------
// Agent listeners: a failing listener ends the run through the failure events
// ---------------------------------------------------------------------------------------------

const LISTENER_AT = {
  "*": 0,
  agent_start: 0,
  message_update: 1,
  tool_execution_start: 1,
  tool_execution_update: 1,
  tool_execution_end: 1,
  turn_end: 1,
  agent_end: 2,
};

for (const [on, failRequests] of Object.entries(LISTENER_AT)) {
  for (const b of NAMES.filter((n) => BEHAVIOURS[n].kind !== "never")) {
    test(`A-5.6 listener on ${on} → ${b}: prompt resolves, agent idle, last event agent_end`, R, async () => {
      await hygienic(watch, async () => {
        const s = setup("listener", "undefined");
        const agent = new Agent({ streamFn: s.faux.streamFn, abortGraceMs: GRACE, initialState: { model: model(), tools: [s.t] } });
        const events = [];
        agent.subscribe((e) => void events.push(e)); // first: sees every event before the hostile listener
        const h = BEHAVIOURS[b].make(on, () => {});
        const off = agent.subscribe((e) => (on === "*" || e.type === on ? h() : undefined));
        await bounded(agent.prompt("go"), 3000, "prompt");
        const last = agent.state.messages.at(-1);
        assert.equal(events.at(-1).type, "agent_end");
        assert.equal(agent.state.isStreaming, false);
        assert.equal(agent.signal, undefined);
        assert.equal(agent.state.pendingToolCalls.size, 0);
        assert.equal(agent.state.streamingMessage, undefined);
        // L-3.10.4: nothing is emitted after the failing event, so a call whose start/update listener failed
        // has no tool_execution_end; the state's pending set is still cleared.
        const starts = events.filter((e) => e.type === "tool_execution_start").length;
        const stoppedInCall = failing(b) && (on === "tool_execution_start" || on === "tool_execution_update");
        assert.equal(events.filter((e) => e.type === "tool_execution_end").length, stoppedInCall ? 0 : starts);
        if (failing(b)) {
          assert.equal(last.stopReason, "error");
          assert.equal(last.errorMessage, BEHAVIOURS[b].failure(on));
          assert.equal(agent.state.errorMessage, BEHAVIOURS[b].failure(on));
          assert.equal(s.faux.calls.length, failRequests);
          // failure events after the loop stopped; at agent_end the loop's own agent_end came first.
          assert.deepEqual(events.slice(-4).map((e) => e.type), ["message_start", "message_end", "turn_end", "agent_end"]);
          assert.equal(events.filter((e) => e.type === "agent_end").length, on === "agent_end" ? 2 : 1);
          assert.deepEqual(events.at(-1).messages, [last]);
        } else {
          assertRunShape(events, { messages: agent.state.messages });
          assert.equal(last.stopReason, "stop");
          assert.equal(s.faux.calls.length, 2);
          assert.equal(agent.state.errorMessage, undefined);
        }
        // The agent stays usable.
        off();
        agent.streamFunction = createFaux([assistant("again")]).streamFn;
        await bounded(agent.prompt("again"), 3000, "second prompt");
        assert.equal(agent.state.messages.at(-1).stopReason, "stop");
        assert.equal(firstText(agent.state.messages.at(-1)), "again");
      });
    });
  }
}

// The Agent's own prepareNextTurn wrappers: legacy prepareNextTurn(signal) and prepareNextTurnWithContext.
for (const option of ["prepareNextTurn", "prepareNextTurnWithContext"]) {
  for (const b of ["throw", "reject", "number", "proxy", "undefined", "neverPromise"]) {
    test(`A-5.5.2/D1 Agent ${option} → ${b}: prompt resolves with the exact ending; agent idle`, R, async () => {
      await hygienic(watch, async () => {
        const s = setup("agent", "undefined");
        let agent;
        const hostile = BEHAVIOURS[b].make(option, () => setTimeout(() => agent.abort(), ABORT_AFTER));
        agent = new Agent({ streamFn: s.faux.streamFn, abortGraceMs: GRACE, [option]: hostile, initialState: { model: model(), tools: [s.t] } });
        const events = [];
        agent.subscribe((e) => void events.push(e));
        await bounded(agent.prompt("go"), 3000, "prompt");
        assertRunShape(events, { messages: agent.state.messages });
        const last = agent.state.messages.at(-1);
        const exp = { throw: ["error", `boom ${option}`], reject: ["error", `rej ${option}`], number: ["error", "prepareNextTurn returned an invalid update: expected an object"], proxy: ["error", `hostile proxy trap (${option})`], undefined: ["stop", undefined], neverPromise: ["aborted", "Operation aborted"] }[b];
        assert.deepEqual([last.stopReason, last.errorMessage], exp);
        assert.equal(s.faux.calls.length, b === "undefined" ? 2 : 1);
        assert.equal(agent.state.isStreaming, false);
      });
    });
  }
}

test("D4.1 listeners are never abandoned: a listener pending past abort + grace still holds the run, which then ends normally", R, async () => {
  await hygienic(watch, async () => {
    const s = setup("listener", "undefined");
    const agent = new Agent({ streamFn: s.faux.streamFn, abortGraceMs: GRACE, initialState: { model: model(), tools: [s.t] } });
    const events = [];
    let release;
    agent.subscribe((e) => {
      events.push(e);
      if (e.type === "tool_execution_start") {
        agent.abort();
        return new Promise((r) => (release = r));
      }
    });
    const p = agent.prompt("go");
    await new Promise((r) => setTimeout(r, GRACE * 3));
    assert.equal(agent.state.isStreaming, true, "still waiting for the listener");
    release();
    await bounded(p, 3000, "prompt");
    assertRunShape(events, { messages: agent.state.messages });
    assert.equal(firstText(agent.state.messages.at(-1)), "Operation aborted");
    assert.equal(s.faux.calls.length, 1);
  });
});

// ---------------------------------------------------------------------------------------------
// onUpdate: runToolCall's options.onUpdate misbehaving; hostile partial results inside the loop
// ---------------------------------------------------------------------------------------------

function runToolCallWith(onUpdate, { signal, abortGraceMs = GRACE } = {}) {
  const t = tool("t", async (id, args, sig, update) => {
    update({ content: [text("p1")], details: {} });
    await new Promise((r) => setTimeout(r, 5));
    update({ content: [text("p2")], details: {} });
    return okResult("t ok");
  });
  return runToolCall(toolCall("c1", "t", {}), {
    tools: [t],
    assistantMessage: assistant(toolCall("c1", "t", {})),
    context: { messages: [], tools: [t] },
    onUpdate,
    signal,
    abortGraceMs,
  });
}

for (const b of NAMES.filter((n) => BEHAVIOURS[n].kind !== "never")) {
  test(`T-4.9.1 runToolCall options.onUpdate → ${b}: resolves with the tool's own result`, R, async () => {
    await hygienic(watch, async () => {
      const outcome = await bounded(runToolCallWith(BEHAVIOURS[b].make("onUpdate", () => {})), 3000, "runToolCall");
      assert.equal(outcome.isError, false);
      assert.equal(firstText(outcome.result), "t ok");
      assert.equal(outcome.toolCall.id, "c1");
    });
  });
}

test(
  "T-4.9.1/D4 runToolCall: a never-settling options.onUpdate is bounded by abort + abortGraceMs",
  bug(
    "runToolCall awaits options.onUpdate without the D4 deadline: after the signal aborts, the call never settles (execute already returned); D4.1 exempts only emit/listeners. Repro: runToolCall(call, {tools:[t], assistantMessage, context, onUpdate: () => new Promise(() => {}), signal, abortGraceMs: 20}) with t calling onUpdate once, then abort → pending forever",
  ),
  async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), ABORT_AFTER);
    const outcome = await bounded(runToolCallWith(() => new Promise(() => {}), { signal: controller.signal }), 1000, "runToolCall");
    assert.equal(typeof outcome.isError, "boolean");
  },
);

const PARTIALS = {
  undefined: () => undefined,
  null: () => null,
  number: () => 42,
  string: () => "x".repeat(1 << 20),
  proxy: () => hostileProxy("partial"),
  getters: () => throwingGetters("partial"),
  cyclic: () => cyclic(),
  deepArray: () => deep(10_000),
  frozen: () => Object.freeze({ content: Object.freeze([text("f")]), details: Object.freeze({}) }),
};

for (const [name, make] of Object.entries(PARTIALS)) {
  test(`T-4.8.1 onUpdate(${name}) from a tool (1000 calls, sync and after settle): events carry the value; run completes`, R, async () => {
    await hygienic(watch, async () => {
      const value = make();
      let late;
      const t = tool("t", async (id, args, signal, onUpdate) => {
        for (let i = 0; i < 1000; i++) onUpdate(value);
        late = onUpdate;
        return okResult("t ok");
      });
      const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("done")]);
      const events = [];
      const result = await bounded(
        runAgentLoop([userMessage("go")], { messages: [], tools: [t] }, config(), (e) => void events.push(e), undefined, faux.streamFn),
        3000,
        "run",
      );
      assertRunShape(events, { messages: result });
      const updates = events.filter((e) => e.type === "tool_execution_update");
      assert.equal(updates.length, 1000);
      assert.ok(updates.every((e) => e.partialResult === value));
      assert.equal(result.at(-1).stopReason, "stop");
      assert.equal(late(value), undefined, "a late call is a silent no-op");
    });
  });
}

// ---------------------------------------------------------------------------------------------
// D3 timeouts alone (no abort) bound never-settling tools and streams
// ---------------------------------------------------------------------------------------------

const IDLE = "Stream idle timeout: no event from the provider for 30 ms";
const D3_CASES = [
  { name: "streamFn never resolves; streamIdleTimeoutMs 30", cfg: { streamIdleTimeoutMs: 30 }, stream: () => () => new Promise(() => {}), error: IDLE },
  { name: "streamFn returns a never-settling thenable; streamIdleTimeoutMs 30", cfg: { streamIdleTimeoutMs: 30 }, stream: () => () => neverThenable(), error: IDLE },
  {
    name: "next() never settles after start; streamIdleTimeoutMs 30 (partial kept)",
    cfg: { streamIdleTimeoutMs: 30 },
    stream: (f) => (m, c, o) => {
      const s = f.streamFn(m, c, o);
      const it = s[Symbol.asyncIterator]();
      let n = 0;
      return { [Symbol.asyncIterator]: () => ({ next: () => (++n >= 2 ? new Promise(() => {}) : it.next()) }) };
    },
    error: IDLE,
    started: true,
  },
  { name: "next() returns a never-settling thenable from the first call; streamIdleTimeoutMs 30", cfg: { streamIdleTimeoutMs: 30 }, stream: () => () => ({ [Symbol.asyncIterator]: () => ({ next: () => neverThenable() }) }), error: IDLE },
  { name: "execute never settles; toolTimeoutMs 30", cfg: { toolTimeoutMs: 30 }, tool: () => tool("t", () => new Promise(() => {})), toolText: 'Tool "t" timed out after 0.03 seconds' },
  { name: "execute returns a never-settling thenable; tool.timeoutMs 30", cfg: {}, tool: () => tool("t", () => neverThenable(), { timeoutMs: 30 }), toolText: 'Tool "t" timed out after 0.03 seconds' },
  { name: "execute never settles; tool.timeoutMs 30 with toolTimeoutMs 0", cfg: { toolTimeoutMs: 0 }, tool: () => tool("t", () => new Promise(() => {}), { timeoutMs: 30 }), toolText: 'Tool "t" timed out after 0.03 seconds' },
];

for (const c of D3_CASES) {
  test(`D3 ${c.name}: exact ending within bounds`, R, async () => {
    await hygienic(watch, async () => {
      const tools = c.tool ? [c.tool()] : [];
      const faux = createFaux([assistant(tools.length ? toolCall("c1", "t", {}) : "x"), assistant("done")]);
      const events = [];
      const started = Date.now();
      const result = await bounded(
        runAgentLoop([userMessage("go")], { messages: [], tools }, config(c.cfg), (e) => void events.push(e), undefined, c.stream ? c.stream(faux) : faux.streamFn),
        2000,
        "run",
      );
      assert.ok(Date.now() - started < 1000);
      assertRunShape(events, { messages: result });
      if (c.error) {
        assert.equal(result.at(-1).stopReason, "error");
        assert.equal(result.at(-1).errorMessage, c.error);
        assert.equal(events.filter((e) => e.type === "message_start" && e.message.role === "assistant").length, 1);
      } else {
        const tr = result.find((m) => m.role === "toolResult");
        assert.equal(tr.isError, true);
        assert.equal(firstText(tr), c.toolText);
        assert.ok(tr.durationMs >= 25);
        assert.equal(result.at(-1).stopReason, "stop");
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Starvation: sources that resolve forever from microtasks. Run in a child process (an in-process hang
// would starve the test runner's own timers), killed after 2 s.
// ---------------------------------------------------------------------------------------------

const IMPL = new URL("./impl.mjs", import.meta.url).href;
const FAUX = new URL("./faux.mjs", import.meta.url).href;

function childRun(body) {
  const script = `
    const { runAgentLoop, createAssistantMessageEventStream } = await import(${JSON.stringify(IMPL)});
    const { config, userMessage, assistant } = await import(${JSON.stringify(FAUX)});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    ${body}
    const result = await runAgentLoop([userMessage("go")], { messages: [] }, config({ abortGraceMs: 20, streamIdleTimeoutMs: 30, ...cfg }), () => {}, controller.signal, streamFn);
    console.log("ended " + result.at(-1).stopReason);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const killer = setTimeout(() => child.kill("SIGKILL"), 6000); // a starved run never ends; 6 s leaves room for six children starting on a busy machine
    child.on("error", reject);
    child.on("exit", (code, sig) => {
      clearTimeout(killer);
      resolve({ code, sig, out });
    });
  });
}

const STARVE = "the loop never yields to the macrotask queue while a source keeps settling from microtasks, so abort(), streamIdleTimeoutMs and abortGraceMs timers can never fire: the process spins at 100% CPU forever";
const STARVE_CASES = {
  "next() resolving {} forever (done: undefined)": "const cfg = {}; const streamFn = () => ({ [Symbol.asyncIterator]: () => ({ next: () => ({}) }) });",
  "next() resolving [] forever": "const cfg = {}; const streamFn = () => ({ [Symbol.asyncIterator]: () => ({ next: () => [] }) });",
  "next() yielding non-object values forever": "const cfg = {}; const streamFn = () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: false, value: 42 }) }) });",
  "next() yielding unknown event types forever": "const cfg = {}; const streamFn = () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: false, value: { type: 'bogus' } }) }) });",
  "finishTurn always 'continue' with an in-memory stream (L-3.8.2 'loops until aborted')":
    "const cfg = { finishTurn: () => ({ action: 'continue' }) }; const streamFn = () => { const s = createAssistantMessageEventStream(); const m = assistant('x'); s.push({ type: 'start', partial: m }); s.push({ type: 'done', reason: 'stop', message: m }); return s; };",
};

// The children run concurrently (each is killed after 2 s), so the cases cost ~2 s together.
test("D2/D3 starvation: an abort after 50 ms ends runs whose source settles from microtasks forever", { ...R, timeout: 15_000, concurrency: true }, async (t) => {
  await Promise.all(
    Object.entries(STARVE_CASES).map(([name, body]) =>
      t.test(`starvation: ${name}`, { ...bug(`${STARVE}. Repro (child process): ${body.replace(/\s+/g, " ")}`), timeout: 10_000 }, async () => {
        const { code, sig, out } = await childRun(body);
        assert.equal(sig, null, `child was killed after 6 s (hung): ${out}`);
        assert.equal(code, 0, out);
        // Ended is what matters (no starvation). Where the abort is seen after a turn_end with nothing
        // drained, D2.4 ends with agent_end right away, so the last message is that turn's (`stop`).
        assert.match(out, /^ended (aborted|error|stop)/m);
      }),
    ),
  );
});
