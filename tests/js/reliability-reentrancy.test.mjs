// Reliability 4: re-entrancy matrix (SPEC API-1.3.6, E-8.4.3, A-5.4, A-5.5.1). From inside every callback
// (each hook, the stream function and its iterator, tools, every listener event type, queue getters, emit,
// runToolCall's onUpdate) call every public method — including nested runs. The run must end normally and the
// instance must stay usable. Extends agent.test.mjs's E-8.4.3 tests: combinations already there are skipped.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Agent,
  IS_REFERENCE,
  agentLoop,
  getDefaultStreamFn,
  runAgentLoop,
  runToolCall,
  setDefaultStreamFn,
  validateToolArguments,
} from "./impl.mjs";
import { assistant, config, createFaux, firstText, model, okResult, text, tool, toolCall, userMessage } from "./faux.mjs";
import { CONTINUE_BUSY, PROMPT_BUSY, RESET_BUSY, msgText } from "./agent-helpers.mjs";
import { assertRunShape, bounded, hygienic, watchProcess } from "./reliability-helpers.mjs";

// Calling the public API from inside callbacks is shared behaviour: this matrix runs against pi-agent-core too, but
// for what the reference lacks or does otherwise, each skipped with its reason.
const R = { timeout: 5000 };
const REFERENCE_LACKS = {
  abort: "reference differs: D2 (after an abort it makes one more request, with the aborted signal)",
  snapshot: "reference differs: D8 (snapshots are new)",
  "setDefaultStreamFn/getDefaultStreamFn": "reference differs: getDefaultStreamFn is module-internal there",
};
const options = (name) => ({ ...R, skip: IS_REFERENCE && (REFERENCE_LACKS[name] ?? false) });

const watch = watchProcess();
const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);
const tick = () => new Promise((r) => setImmediate(r));

const EVENT_TYPES = [
  "agent_start",
  "turn_start",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "turn_end",
  "agent_end",
];
const AGENT_SITES = [
  "transformContext",
  "convertToLlm",
  "getApiKey",
  "prepareRequest",
  "streamFn",
  "next",
  "prepareArguments", // synchronous: nothing can be awaited there
  "beforeToolCall",
  "execute",
  "afterToolCall",
  "finishTurn",
  "prepareNextTurn",
  ...EVENT_TYPES.map((t) => `listener:${t}`),
];
const SYNC_SITES = new Set(["prepareArguments"]);

// Already covered by agent.test.mjs (E-8.4.3): its sites × its methods.
const COVERED_SITES = new Set(["listener:message_update", "execute", "beforeToolCall", "afterToolCall", "finishTurn", "prepareNextTurn", "prepareRequest", "convertToLlm", "streamFn"]);
const COVERED_METHODS = new Set(["steer", "followUp", "prompt", "continue", "reset", "snapshot", "runToolCall", "abort"]);

// ---------------------------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------------------------

const aux = tool("aux", async () => okResult("aux ok"), { parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } });

async function nestedLoopRun(kind) {
  const faux = createFaux([assistant(`nested ${kind}`)]);
  if (kind === "agentLoop") {
    const stream = agentLoop([userMessage("nested")], { messages: [] }, config(), undefined, faux.streamFn);
    const events = [];
    for await (const e of stream) events.push(e);
    const result = await stream.result();
    assertRunShape(events, { messages: result, what: "nested agentLoop" });
    return result;
  }
  const events = [];
  const result = await runAgentLoop([userMessage("nested")], { messages: [] }, config(), (e) => void events.push(e), undefined, faux.streamFn);
  assertRunShape(events, { messages: result, what: "nested runAgentLoop" });
  return result;
}

function checkNested(result, kind) {
  assert.deepEqual(result.map((m) => m.role), ["user", "assistant"]);
  assert.equal(firstText(result[1]), `nested ${kind}`);
}

async function runToolCallOk() {
  const outcome = await runToolCall(toolCall("x1", "aux", { n: "5" }), {
    tools: [aux],
    assistantMessage: assistant(toolCall("x1", "aux", { n: "5" })),
    context: { messages: [], tools: [aux] },
  });
  assert.equal(outcome.isError, false);
  assert.equal(firstText(outcome.result), "aux ok");
}

function validateOk() {
  assert.deepEqual(validateToolArguments(aux, toolCall("x1", "aux", { n: "5" })), { n: 5 });
  assert.throws(() => validateToolArguments(aux, toolCall("x1", "aux", {})), (e) => e instanceof Error && /n: missing/.test(e.message));
}

async function defaultStreamFnSwap() {
  const faux = createFaux([assistant("via default")]);
  const before = getDefaultStreamFn();
  setDefaultStreamFn(faux.streamFn);
  try {
    assert.equal(getDefaultStreamFn(), faux.streamFn);
    const stream = agentLoop([userMessage("nested")], { messages: [] }, config()); // resolved at call time
    setDefaultStreamFn(undefined);
    const result = await stream.result();
    assert.equal(firstText(result.at(-1)), "via default");
  } finally {
    setDefaultStreamFn(undefined);
  }
  assert.equal(getDefaultStreamFn(), before);
}

async function otherAgentPrompt() {
  const other = new Agent({ streamFn: createFaux([assistant("other agent")]).streamFn, initialState: { model: model() } });
  await other.prompt("hi");
  assert.equal(firstText(other.state.messages.at(-1)), "other agent");
  assert.equal(other.state.isStreaming, false);
}

// ---------------------------------------------------------------------------------------------
// Agent-level matrix
// ---------------------------------------------------------------------------------------------

/**
 * Agent methods: `call(ctx)` runs inside the callback (may return a promise, awaited there unless the site is
 * synchronous); `after(ctx)` checks after the outer prompt() resolved. `ctx`: { agent, site, recorder, data }.
 */
const METHODS = {
  steer: {
    call: ({ agent, site }) => agent.steer(userMessage(`steer@${site}`)),
    after: ({ agent, site }) => onceDeliveredOrQueued(agent, `steer@${site}`, site !== "listener:agent_end"),
  },
  followUp: {
    call: ({ agent, site }) => agent.followUp(userMessage(`follow@${site}`)),
    after: ({ agent, site }) => onceDeliveredOrQueued(agent, `follow@${site}`, site !== "listener:agent_end"),
  },
  abort: {
    call: ({ agent }) => agent.abort(),
    after: ({ faux }) => assert.ok(faux.calls.every((c) => !c.signalAbortedAtCall), "no request with an aborted signal"),
  },
  prompt: { call: ({ agent }) => assert.rejects(agent.prompt("nested"), { message: PROMPT_BUSY }) },
  continue: { call: ({ agent }) => assert.rejects(agent.continue(), { message: CONTINUE_BUSY }) },
  reset: { call: ({ agent }) => assert.throws(() => agent.reset(), { message: RESET_BUSY }) },
  snapshot: {
    call: ({ agent, data }) => {
      data.snap = agent.snapshot();
      data.committed = agent.state.messages.map((m) => m.role);
    },
    after: ({ data }) => {
      assert.equal(data.snap.format, "agent-loop-wasm/agent-snapshot");
      assert.deepEqual(data.snap.messages.map((m) => m.role), data.committed, "committed messages only");
    },
  },
  "subscribe/unsubscribe": {
    call: ({ agent, data }) => {
      data.seen = [];
      const off = agent.subscribe((e) => {
        data.seen.push(e);
        if (data.seen.length === 3) off(); // unsubscribing itself during delivery
      });
      data.off = off;
    },
    after: ({ data, recorder }) => {
      assert.ok(data.seen.length <= 3);
      if (data.seen.length > 0) {
        const start = recorder.events.indexOf(data.seen[0]);
        assert.ok(start >= 0);
        assert.deepEqual(data.seen, recorder.events.slice(start, start + data.seen.length), "a contiguous run of the same events");
      }
      data.off(); // idempotent
    },
  },
  clearSteeringQueue: {
    call: ({ agent, site }) => {
      agent.steer(userMessage(`cleared steer@${site}`));
      agent.clearSteeringQueue();
    },
    after: ({ agent }) => noneLeft(agent, /^cleared/),
  },
  clearFollowUpQueue: {
    call: ({ agent, site }) => {
      agent.followUp(userMessage(`cleared follow@${site}`));
      agent.clearFollowUpQueue();
    },
    after: ({ agent }) => noneLeft(agent, /^cleared/),
  },
  clearAllQueues: {
    call: ({ agent, site }) => {
      agent.steer(userMessage(`cleared steer@${site}`));
      agent.followUp(userMessage(`cleared follow@${site}`));
      assert.equal(agent.hasQueuedMessages(), true);
      agent.clearAllQueues();
      assert.equal(agent.hasQueuedMessages(), false);
      assert.deepEqual(agent.peekQueuedMessages(), []);
    },
    after: ({ agent }) => noneLeft(agent, /^cleared/),
  },
  runToolCall: { call: () => runToolCallOk() },
  validateToolArguments: { call: () => validateOk() },
  "agentLoop (nested run)": { call: async () => checkNested(await nestedLoopRun("agentLoop"), "agentLoop") },
  "runAgentLoop (nested run)": { call: async () => checkNested(await nestedLoopRun("runAgentLoop"), "runAgentLoop") },
  "setDefaultStreamFn/getDefaultStreamFn": { call: () => defaultStreamFnSwap() },
  "another Agent's prompt (nested run)": { call: () => otherAgentPrompt() },
  waitForIdle: {
    call: ({ agent, data }) => {
      data.idle = false;
      agent.waitForIdle().then(() => (data.idle = true));
    },
    after: async ({ data }) => {
      await tick();
      assert.equal(data.idle, true, "waitForIdle() called inside the run resolves once the run is over");
    },
  },
  "modes and state setters": {
    call: ({ agent }) => {
      agent.steeringMode = "all";
      agent.followUpMode = "all";
      agent.steeringMode = "one-at-a-time";
      agent.followUpMode = "one-at-a-time";
      // E-8.1 (ours): a bad mode is a TypeError; the reference takes it.
      if (!IS_REFERENCE) assert.throws(() => (agent.steeringMode = "bogus"), TypeError);
      agent.state.model = model({ id: "switched" });
      agent.state.thinkingLevel = "high";
    },
    after: ({ agent, faux }) => {
      assert.ok(faux.calls.every((c) => c.model.id === "faux-1" && c.options.reasoning === undefined), "A-5.5.1: only the next run changes");
      assert.equal(agent.state.model.id, "switched");
      agent.state.model = model();
      agent.state.thinkingLevel = "off";
    },
  },
};

/**
 * The message `t` queued from inside the run is delivered exactly once: by that run (`mustDeliver`), or, queued at
 * its very end, by the next `continue()`. Read through the API both libraries have (no snapshot of the queues).
 */
async function onceDeliveredOrQueued(agent, t, mustDeliver) {
  const delivered = () => agent.state.messages.filter((m) => msgText(m) === t).length;
  if (mustDeliver) {
    assert.equal(delivered(), 1, `${t} delivered once by the same run`);
    assert.equal(agent.hasQueuedMessages(), false, `${t} is not also left queued`);
    return;
  }
  if (delivered() === 0) {
    assert.equal(agent.hasQueuedMessages(), true, `${t} is queued`);
    await agent.continue();
  }
  assert.equal(delivered(), 1, `${t}: exactly once`);
  assert.equal(agent.hasQueuedMessages(), false);
}

function noneLeft(agent, re) {
  assert.ok(!agent.state.messages.some((m) => re.test(msgText(m))), "cleared messages never delivered");
  assert.equal(agent.hasQueuedMessages(), false);
}

/** An agent whose callbacks call `poke()` at the first occurrence of `site`; a tool turn, then text. */
function harness(site, poke) {
  const faux = createFaux([assistant(toolCall("c1", "t", { n: 1 })), ...Array.from({ length: 8 }, (_, i) => assistant(`answer ${i + 1}`))]);
  let reached = false;
  const pending = [];
  const at = (where) => {
    if (where !== site || reached) return undefined;
    reached = true;
    const p = Promise.resolve().then(poke);
    if (SYNC_SITES.has(site)) {
      pending.push(p);
      return undefined;
    }
    return p;
  };
  const t = tool(
    "t",
    async (id, args, signal, onUpdate) => {
      await at("execute");
      onUpdate({ content: [text("partial")], details: {} });
      return okResult("t ok");
    },
    {
      parameters: { type: "object", properties: { n: { type: "number" } } },
      prepareArguments(args) {
        at("prepareArguments");
        return args;
      },
    },
  );
  let nextCalls = 0;
  const agent = new Agent({
    initialState: { model: model(), tools: [t] },
    abortGraceMs: 50,
    transformContext: async (m) => (await at("transformContext"), m),
    convertToLlm: async (m) => (await at("convertToLlm"), m.filter((x) => LLM_ROLES.has(x.role))),
    getApiKey: async () => (await at("getApiKey"), "key"),
    prepareRequest: async () => void (await at("prepareRequest")),
    beforeToolCall: async () => void (await at("beforeToolCall")),
    afterToolCall: async () => void (await at("afterToolCall")),
    finishTurn: async () => void (await at("finishTurn")),
    prepareNextTurnWithContext: async () => void (await at("prepareNextTurn")),
    streamFn: async (m, c, o) => {
      const s = faux.streamFn(m, c, o);
      await at("streamFn");
      const it = s[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            if (++nextCalls === 2) await at("next");
            return it.next();
          },
        }),
        result: () => s.result(),
      };
    },
  });
  return { agent, faux, pending, reached: () => reached, at };
}

for (const site of AGENT_SITES) {
  for (const [name, method] of Object.entries(METHODS)) {
    if (COVERED_SITES.has(site) && COVERED_METHODS.has(name)) continue;
    test(`E-8.4.3 from ${site} call ${name}: the run ends normally; the agent stays usable`, options(name), async () => {
      await hygienic(watch, async () => {
        const data = {};
        const problems = [];
        let ctx;
        const poke = async () => {
          try {
            await method.call(ctx);
          } catch (err) {
            problems.push(`${name}: ${err?.stack ?? err}`);
          }
        };
        const h = harness(site, poke);
        const events = [];
        const recorder = { events };
        h.agent.subscribe(async (e) => {
          events.push(e);
          if (site === `listener:${e.type}`) await h.at(site);
        });
        ctx = { agent: h.agent, site, recorder, data, faux: h.faux };
        await bounded(h.agent.prompt("go"), 3000, "prompt");
        await bounded(Promise.all(h.pending), 3000, "calls made from a synchronous callback");
        assert.ok(h.reached(), `${site} was reached`);
        assert.deepEqual(problems, []);
        assertRunShape(events, { messages: h.agent.state.messages });
        assert.equal(h.agent.state.isStreaming, false);
        assert.equal(h.agent.signal, undefined);
        const last = h.agent.state.messages.at(-1);
        if (name !== "abort") {
          assert.equal(last.role, "assistant");
          assert.equal(last.stopReason, "stop");
        }
        if (method.after) await method.after(ctx);
        // Usable: a fresh prompt runs normally.
        h.agent.clearAllQueues();
        h.agent.streamFunction = createFaux([assistant("after")]).streamFn;
        await bounded(h.agent.prompt("after"), 3000, "next prompt");
        assert.equal(h.agent.state.messages.at(-1).stopReason, "stop");
        assert.equal(firstText(h.agent.state.messages.at(-1)), "after");
      }, `${site}/${name}`);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Loop-level sites: queue getters, emit, runToolCall's onUpdate × module functions and nested runs
// ---------------------------------------------------------------------------------------------

const LOOP_METHODS = {
  abort: ({ controller }) => controller.abort(),
  runToolCall: () => runToolCallOk(),
  validateToolArguments: () => validateOk(),
  "agentLoop (nested run)": async () => checkNested(await nestedLoopRun("agentLoop"), "agentLoop"),
  "runAgentLoop (nested run)": async () => checkNested(await nestedLoopRun("runAgentLoop"), "runAgentLoop"),
  "setDefaultStreamFn/getDefaultStreamFn": () => defaultStreamFnSwap(),
  "an Agent's prompt (nested run)": () => otherAgentPrompt(),
};
const LOOP_SITES = ["getSteeringMessages", "getFollowUpMessages", "emit", "runToolCall.onUpdate"];

for (const site of LOOP_SITES) {
  for (const [name, call] of Object.entries(LOOP_METHODS)) {
    test(`E-8.4.3 from ${site} call ${name}: the run ends normally`, options(name), async () => {
      await hygienic(watch, async () => {
        const controller = new AbortController();
        const problems = [];
        let reached = false;
        const at = async (where) => {
          if (where !== site || reached) return;
          reached = true;
          try {
            await call({ controller });
          } catch (err) {
            problems.push(`${name}: ${err?.stack ?? err}`);
          }
        };
        const t = tool("t", async (id, args, signal, onUpdate) => {
          await onUpdate({ content: [text("partial")], details: {} });
          return okResult("t ok");
        });
        if (site === "runToolCall.onUpdate") {
          const outcome = await bounded(
            runToolCall(toolCall("c1", "t", {}), {
              tools: [t],
              assistantMessage: assistant(toolCall("c1", "t", {})),
              context: { messages: [], tools: [t] },
              signal: controller.signal,
              onUpdate: () => at(site),
            }),
            3000,
            "runToolCall",
          );
          assert.ok(reached);
          assert.deepEqual(problems, []);
          assert.equal(outcome.isError, false);
          assert.equal(firstText(outcome.result), "t ok");
          return;
        }
        const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("done"), assistant("extra")]);
        const events = [];
        const result = await bounded(
          runAgentLoop(
            [userMessage("go")],
            { messages: [], tools: [t] },
            config({
              abortGraceMs: 50,
              getSteeringMessages: async () => (await at("getSteeringMessages"), []),
              getFollowUpMessages: async () => (await at("getFollowUpMessages"), []),
            }),
            async (e) => {
              events.push(e);
              if (e.type === "message_update") await at("emit");
            },
            controller.signal,
            faux.streamFn,
          ),
          3000,
          "runAgentLoop",
        );
        assert.ok(reached);
        assert.deepEqual(problems, []);
        assertRunShape(events, { messages: result });
        assert.equal(events.at(-1).messages, result);
        if (name === "abort") assert.ok(faux.calls.every((c) => !c.signalAbortedAtCall));
        else {
          assert.equal(result.at(-1).stopReason, "stop");
          assert.equal(faux.calls.length, 2);
        }
      }, `${site}/${name}`);
    });
  }
}

// Checked calls report a throw through one flag word (src/js/host.rs `checked`); a throw caught inside a
// callback by a nested library call must neither leak into the outer call nor hide a later one.
test("E-8.4.3 a getter throw caught by a nested library call inside a tool does not fail the outer call", R, async () => {
  const hostile = {
    name: "hostile",
    description: "",
    get parameters() {
      throw new Error("parameters getter");
    },
    execute: async () => okResult(),
  };
  const seen = [];
  const outer = tool("outer", async () => {
    for (let i = 0; i < 3; i++) {
      try {
        validateToolArguments(hostile, toolCall("h", "hostile", {}));
        seen.push("no throw");
      } catch (e) {
        seen.push(e.message);
      }
    }
    return okResult("outer ok");
  });
  const faux = createFaux([assistant([toolCall("c1", "outer", {})]), assistant("done")]);
  const events = [];
  const result = await runAgentLoop([userMessage("go")], { messages: [], tools: [outer] }, config(), (e) => void events.push(e), undefined, faux.streamFn);
  assertRunShape(events, { messages: result });
  assert.deepEqual(seen, ["parameters getter", "parameters getter", "parameters getter"]);
  const toolResult = result.find((m) => m.role === "toolResult");
  assert.equal(toolResult.isError, false);
  assert.equal(firstText(toolResult), "outer ok");
  assert.equal(result.at(-1).stopReason, "stop");
  // And a throw of the outer call itself is still reported after the nested ones were swallowed.
  const failing = tool("outer", () => {
    // Synchronous: the throw comes back through the same checked call as the swallowed one.
    try {
      validateToolArguments(hostile, toolCall("h", "hostile", {}));
    } catch {
      // swallowed
    }
    throw new Error("outer threw");
  });
  const again = await runAgentLoop([userMessage("go")], { messages: [], tools: [failing] }, config(), () => {}, undefined, createFaux([assistant([toolCall("c2", "outer", {})]), assistant("done")]).streamFn);
  const failed = again.find((m) => m.role === "toolResult");
  assert.equal(failed.isError, true);
  assert.equal(firstText(failed), "outer threw");
});
