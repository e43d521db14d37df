// Reliability 2: an abort injected at every await point of a scripted run (SPEC D2, D2.5, D4, L-3.3, E-8.4.4).
// A dry run enumerates the points (every hook, every listener/emit event, every tool execution, every queue
// poll); then one run per point aborts exactly there. Each run must: end with agent_end; give exactly one
// tool_execution_end per start and a toolResult message for every call of a batch; make no provider request
// after the abort; call no hook after it except afterToolCall (for a call already executing) and finishTurn;
// and keep every queued message exactly once — in the transcript if drained, else still queued (D2.5).
import { test } from "node:test";
import assert from "node:assert/strict";
import { IS_REFERENCE, Agent, runAgentLoop } from "./impl.mjs";
import { assistant, createFaux, firstText, label, model, okResult, text, tool, toolCall, userMessage } from "./faux.mjs";
import { msgText } from "./agent-helpers.mjs";
import { R, assertRunShape, bounded, hygienic, watchProcess } from "./reliability-helpers.mjs";

const watch = watchProcess();
const tick = () => new Promise((r) => setImmediate(r));
const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);
const QUEUED = { steering: ["s1", "s2"], followUp: ["f1", "f2"] };
const ALLOWED_AFTER_ABORT = /^(afterToolCall:|finishTurn#|event:|emit:)/;

/**
 * Builds the scripted run. Turn 1: prompt + S0 steering s1 → three tool calls (a1 b1 c1); S1 drains s2 → turn 2
 * (text); F drains f1 → turn 3; F drains f2 → turn 4; then agent_end. 4 requests without an abort.
 * `point(name)` marks an await point (called on entry of every callback; hooks then wait one macrotask).
 */
function makeScript({ mode, abortAt, doAbort }) {
  const points = [];
  const seen = new Map();
  const afterAbort = [];
  const executeStarted = new Set();
  let abortInfo = null;
  const faux = createFaux([
    assistant([toolCall("a1", "a", { n: 1 }), toolCall("b1", "b", { n: 2 }), toolCall("c1", "c", { n: 3 })]),
    assistant("r2"),
    assistant("r3"),
    assistant("r4"),
    assistant("never 5"),
    assistant("never 6"),
  ]);
  const point = (name) => {
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    const id = `${name}#${n}`;
    points.push(id);
    if (abortInfo) afterAbort.push(id);
    if (id === abortAt) {
      abortInfo = { id, requests: faux.calls.length, executing: new Set(executeStarted) };
      doAbort();
    }
  };
  const mkTool = (name) =>
    tool(
      name,
      async (id, args, signal, onUpdate) => {
        executeStarted.add(id);
        point(`execute:${id}`);
        if (name === "a") onUpdate({ content: [text("a partial")], details: {} });
        await tick();
        return okResult(`${name} ok`);
      },
      {
        parameters: { type: "object", properties: { n: { type: "number" } } },
        prepareArguments(args) {
          point(`prepareArguments:${name}`);
          return args;
        },
      },
    );
  const tools = [mkTool("a"), mkTool("b"), mkTool("c")];
  const hook = (name, result) =>
    async function (...args) {
      point(typeof name === "function" ? name(...args) : name);
      await tick();
      return typeof result === "function" ? result(...args) : result;
    };
  const hooks = {
    transformContext: hook("transformContext", (m) => m),
    convertToLlm: hook("convertToLlm", (m) => m.filter((x) => LLM_ROLES.has(x.role))),
    getApiKey: hook("getApiKey", "key"),
    beforeToolCall: hook((c) => `beforeToolCall:${c.toolCall.id}`, undefined),
    afterToolCall: hook((c) => `afterToolCall:${c.toolCall.id}`, undefined),
    finishTurn: hook("finishTurn", undefined),
    prepareRequest: hook("prepareRequest", undefined),
    toolExecution: mode,
    abortGraceMs: 50,
  };
  const streamFn = async (m, c, o) => {
    const stream = faux.streamFn(m, c, o); // the request is made (and counted) when the library calls streamFn
    point("streamFn");
    await tick();
    return stream;
  };
  const onEvent = (prefix) => (e) => {
    const sub = e.type === "message_update" ? `:${e.assistantMessageEvent.type}` : "";
    point(`${prefix}:${label(e)}${sub}`);
  };
  const markAborted = (id) => {
    abortInfo = { id, requests: faux.calls.length, executing: new Set(executeStarted) };
  };
  return { points, afterAbort, executeStarted, faux, tools, hooks, streamFn, onEvent, point, markAborted, abort: () => abortInfo };
}

/**
 * Callbacks the spec still allows right after an abort at `at` (D2.1 forbids only requests, polls,
 * prepareNextTurn/prepareRequest and new executions): the rest of the same request boundary before streamFn
 * (L-3.5.1 order; D2.4 checks the signal at the boundary), and the same call's beforeToolCall after its
 * prepareArguments (§4.2 step 3 checks the signal "after the hook").
 */
function allowedAfter(at, p) {
  const [atName, atN] = at.split("#");
  const [name, n] = p.split("#");
  if (n === atN && atName === "transformContext" && (name === "convertToLlm" || name === "getApiKey")) return true;
  if (n === atN && atName === "convertToLlm" && name === "getApiKey") return true;
  if (atName.startsWith("prepareArguments:") && name === `beforeToolCall:${atName.slice(17)}1`) return true;
  return false;
}

/** Checks common to both levels. `transcript`: the run's messages; `queues`: {steering, followUp} texts left. */
function checkAbortRun(s, events, transcript, queues, what) {
  assertRunShape(events, { messages: transcript, what });
  const info = s.abort();
  // D2.3: every call of an executed batch gets a tool-result message.
  for (const m of transcript) {
    if (m.role !== "assistant" || m.stopReason !== "toolUse") continue;
    for (const b of m.content.filter((x) => x.type === "toolCall")) {
      const results = transcript.filter((r) => r.role === "toolResult" && r.toolCallId === b.id);
      assert.equal(results.length, 1, `${what}: one toolResult for ${b.id}`);
    }
  }
  assert.ok(s.faux.calls.every((c) => !c.signalAbortedAtCall), `${what}: no request with an aborted signal`);
  if (info) {
    assert.equal(s.faux.calls.length, info.requests, `${what}: no provider request after the abort`);
    const bad = s.afterAbort.filter((p) => !ALLOWED_AFTER_ABORT.test(p) && !allowedAfter(info.id, p));
    assert.deepEqual(bad, [], `${what}: callbacks after the abort`);
    for (const p of s.afterAbort.filter((x) => x.startsWith("afterToolCall:"))) {
      const id = p.slice("afterToolCall:".length).split("#")[0];
      assert.ok(info.executing.has(id), `${what}: afterToolCall(${id}) after the abort only for a call already executing`);
    }
    // Calls not executed before the abort end with "Operation aborted".
    for (const e of events.filter((x) => x.type === "tool_execution_end")) {
      if (!s.executeStarted.has(e.toolCallId)) {
        assert.equal(e.isError, true, `${what}: ${e.toolCallId} not executed → error`);
        assert.equal(firstText(e.result), "Operation aborted", `${what}: ${e.toolCallId} → Operation aborted`);
      }
    }
  } else {
    assert.equal(s.faux.calls.length, 4, `${what}: the unaborted script makes 4 requests`);
  }
  // D2.5: each queued message exactly once — in the transcript (drained) or still queued, order kept.
  const userTexts = transcript.filter((m) => m.role === "user").map(msgText);
  for (const [kind, texts] of Object.entries(QUEUED)) {
    for (const t of texts) {
      const inTranscript = userTexts.filter((x) => x === t).length;
      const inQueue = queues[kind].filter((x) => x === t).length;
      assert.equal(inTranscript + inQueue, 1, `${what}: ${t} exactly once (transcript ${inTranscript}, queue ${inQueue})`);
    }
    const delivered = userTexts.filter((x) => texts.includes(x));
    assert.deepEqual([...delivered, ...queues[kind]], texts, `${what}: ${kind} order kept across transcript and queue`);
  }
}

// ---------------------------------------------------------------------------------------------
// Agent level: queues on the Agent (one-at-a-time), listener events as await points
// ---------------------------------------------------------------------------------------------

async function agentRun(mode, abortAt) {
  let agent;
  const s = makeScript({ mode, abortAt, doAbort: () => agent.abort() });
  agent = new Agent({
    ...s.hooks,
    streamFn: s.streamFn,
    prepareNextTurnWithContext: async () => {
      s.point("prepareNextTurn");
      await tick();
      return undefined;
    },
    initialState: { model: model(), tools: s.tools },
  });
  for (const t of QUEUED.steering) agent.steer(userMessage(t));
  for (const t of QUEUED.followUp) agent.followUp(userMessage(t));
  const events = [];
  const onEvent = s.onEvent("event");
  agent.subscribe((e) => {
    events.push(e);
    onEvent(e);
  });
  await bounded(agent.prompt("go"), 3000, `Agent ${mode} abort at ${abortAt}`);
  return { s, agent, events };
}

// ---------------------------------------------------------------------------------------------
// Loop level: queue getters (S0/S1/S2/F polls) and emit as await points; prepareNextTurn prepares a message
// ---------------------------------------------------------------------------------------------

async function loopRun(mode, abortAt) {
  const controller = new AbortController();
  const s = makeScript({ mode, abortAt, doAbort: () => controller.abort() });
  const queues = { steering: QUEUED.steering.map((t) => userMessage(t)), followUp: QUEUED.followUp.map((t) => userMessage(t)) };
  const drained = [];
  const prepared = [];
  const getter = (kind) => async () => {
    s.point(`poll:${kind}`);
    await tick();
    const out = queues[kind].splice(0, 1);
    drained.push(...out);
    return out;
  };
  let nextTurns = 0;
  const cfg = {
    model: model(),
    ...s.hooks,
    getSteeringMessages: getter("steering"),
    getFollowUpMessages: getter("followUp"),
    prepareNextTurn: async () => {
      s.point("prepareNextTurn");
      await tick();
      if (nextTurns++ > 0) return undefined;
      const m = userMessage("prepared");
      prepared.push(m);
      return { messages: [m] };
    },
  };
  const events = [];
  const onEvent = s.onEvent("emit");
  if (abortAt === "pre-run") {
    controller.abort();
    s.markAborted("pre-run");
  }
  const result = await bounded(
    runAgentLoop([userMessage("go")], { messages: [], tools: s.tools }, cfg, (e) => {
      events.push(e);
      onEvent(e);
    }, controller.signal, s.streamFn),
    3000,
    `runAgentLoop ${mode} abort at ${abortAt}`,
  );
  return { s, events, result, queues, drained, prepared };
}

// ---------------------------------------------------------------------------------------------
// Enumerate the points (dry runs), then one test per point
// ---------------------------------------------------------------------------------------------

const MODES = ["sequential", "parallel"];
const enumerated = {};
if (!IS_REFERENCE) {
  for (const mode of MODES) {
    enumerated[`agent ${mode}`] = (await agentRun(mode, null)).s.points;
    enumerated[`loop ${mode}`] = ["pre-run", ...(await loopRun(mode, null)).s.points];
  }
}

test("D2 enumeration: the dry runs reach every kind of await point", R, () => {
  for (const [name, points] of Object.entries(enumerated)) {
    const kinds = new Set(points.map((p) => p.split(/[:#]/)[0]));
    for (const k of ["transformContext", "convertToLlm", "getApiKey", "prepareRequest", "streamFn", "prepareArguments", "beforeToolCall", "execute", "afterToolCall", "finishTurn", "prepareNextTurn"]) {
      assert.ok(kinds.has(k), `${name}: reaches ${k}`);
    }
    const events = points.filter((p) => /^(event|emit):/.test(p));
    for (const e of ["agent_start", "message_update:assistant:text_delta", "message_update:assistant:toolcall_end", "tool_execution_update:a1", "turn_end", "agent_end"]) {
      assert.ok(events.some((p) => p.includes(`:${e}#`)), `${name}: reaches event ${e}`);
    }
    if (name.startsWith("loop")) {
      assert.equal(points.filter((p) => p.startsWith("poll:steering")).length, 5, `${name}: S0, S1 ×4 (S2 skipped: a message is always pending)`);
      assert.equal(points.filter((p) => p.startsWith("poll:followUp")).length, 3, `${name}: F ×3`);
    }
  }
});

for (const mode of MODES) {
  for (const point of enumerated[`agent ${mode}`] ?? []) {
    test(`D2 Agent ${mode}: abort during ${point}`, R, async () => {
      await hygienic(watch, async () => {
        const { s, agent, events } = await agentRun(mode, point);
        assert.ok(s.abort(), "the abort point was reached");
        const snap = agent.snapshot();
        const queues = { steering: snap.steeringQueue.map(msgText), followUp: snap.followUpQueue.map(msgText) };
        checkAbortRun(s, events, agent.state.messages, queues, `${mode} ${point}`);
        assert.equal(agent.state.isStreaming, false);
        assert.equal(agent.signal, undefined);
        assert.equal(agent.state.pendingToolCalls.size, 0);
        // Still usable: a fresh prompt runs normally.
        agent.clearAllQueues();
        agent.streamFunction = createFaux([assistant("after")]).streamFn;
        await bounded(agent.prompt("after"), 3000, "next prompt");
        assert.equal(agent.state.messages.at(-1).stopReason, "stop");
        assert.equal(firstText(agent.state.messages.at(-1)), "after");
      }, `${mode} ${point}`);
    });
  }
  for (const point of enumerated[`loop ${mode}`] ?? []) {
    test(`D2 runAgentLoop ${mode}: abort during ${point}`, R, async () => {
      await hygienic(watch, async () => {
        const { s, events, result, queues, drained, prepared } = await loopRun(mode, point);
        if (point !== "pre-run") assert.ok(s.abort(), "the abort point was reached");
        assert.equal(events.at(-1).messages, result);
        const left = { steering: queues.steering.map(msgText), followUp: queues.followUp.map(msgText) };
        checkAbortRun(s, events, result, left, `${mode} ${point}`);
        // Drained and prepared messages always reach the transcript (D2.4/D2.5, D1.2).
        for (const m of [...drained, ...prepared]) {
          assert.equal(result.filter((x) => x === m).length, 1, `${mode} ${point}: ${msgText(m)} (same object) in the result once`);
        }
        if (point === "pre-run") {
          assert.deepEqual(s.points.filter((p) => !/^emit:/.test(p)), [], "pre-run abort: no callback at all");
          assert.deepEqual(result.map((m) => m.role), ["system", "user", "assistant"]);
          assert.equal(result[2].stopReason, "aborted");
          assert.equal(result[2].errorMessage, "Request was aborted");
        }
      }, `${mode} ${point}`);
    });
  }
}
