// Agent class (SPEC §5): construction, state, listeners and the event barrier, lifecycle, run failure,
// re-entrancy (E-8.4.3). Appendix A items AC-A1…AC-A17, AC-A22…AC-A25, AC-A28, AC-A29, AC-A36.
// Queue items are in agent-queues.test.mjs, snapshots (D8) in agent-snapshot.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  IS_REFERENCE,
  Agent,
  setDefaultStreamFn,
  runToolCall,
  DEFAULT_AGENT_IDENTITY,
  createAssistantMessageEventStream,
} from "./impl.mjs";
import {
  assistant,
  createFaux,
  firstText,
  model,
  okResult,
  sleep,
  text,
  tool,
  toolCall,
  userMessage,
  zeroUsage,
} from "./faux.mjs";
import {
  T,
  deviation,
  PROMPT_BUSY,
  CONTINUE_BUSY,
  RESET_BUSY,
  DEFAULT_MODEL,
  makeAgent,
  record,
  roles,
  msgText,
  replayedTools,
  toolViews,
  decl,
  deferred,
  waitFor,
  trackUnhandled,
} from "./agent-helpers.mjs";

/** The failure message of for the faux model, timestamp normalised. */
function failure(errorMessage, stopReason = "error", m = model()) {
  return {
    role: "assistant",
    content: [{ type: "text", text: "" }],
    api: m.api,
    provider: m.provider,
    model: m.id,
    usage: zeroUsage(),
    stopReason,
    errorMessage,
    timestamp: 0,
  };
}
const withTs0 = (m) => ({ ...m, timestamp: 0 });

// ---------------------------------------------------------------------------------------------
// Appendix A
// ---------------------------------------------------------------------------------------------

test("AC-A1 new Agent({}) after setDefaultStreamFn: prompt() calls the default once", T, async () => {
  const faux = createFaux([assistant("hello")]);
  let calls = 0;
  setDefaultStreamFn((m, c, o) => {
    calls++;
    return faux.streamFn(m, c, o);
  });
  try {
    const agent = Reflect.construct(Agent, [{}]);
    await agent.prompt("hi");
    assert.equal(calls, 1);
    assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
    assert.equal(msgText(agent.state.messages[1]), "hello");
  } finally {
    setDefaultStreamFn(undefined);
  }
});

test("AC-A2 default state: default model, level off, empty tools/messages, idle, empty pending set, no error", T, () => {
  const agent = new Agent({ streamFn: createFaux().streamFn });
  const s = agent.state;
  assert.deepEqual(s.model, DEFAULT_MODEL);
  assert.equal(s.thinkingLevel, "off");
  assert.deepEqual(s.tools, []);
  assert.deepEqual(s.messages, []);
  assert.equal(s.isStreaming, false);
  assert.equal(s.streamingMessage, undefined);
  assert.ok(s.pendingToolCalls instanceof Set);
  assert.equal(s.pendingToolCalls.size, 0);
  assert.equal(s.errorMessage, undefined);
  assert.equal(s.systemPrompt, "");
});

test("AC-A3 custom initial state keeps model and level; the prompt becomes a leading system message", T, () => {
  const m = model({ id: "custom-1", name: "Custom" });
  const agent = new Agent({
    streamFn: createFaux().streamFn,
    initialState: { systemPrompt: "You are a helpful assistant.", model: m, thinkingLevel: "low" },
  });
  assert.deepEqual(agent.state.model, m);
  assert.equal(agent.state.thinkingLevel, "low");
  assert.deepEqual(agent.state.messages, [{ role: "system", content: "You are a helpful assistant.", timestamp: 0 }]);
  assert.equal(agent.state.systemPrompt, "You are a helpful assistant.");
  assert.deepEqual(agent.state.tools, []);
});

test("AC-A4 initial prompt and tools become one leading system message declaring [echo]", T, async () => {
  const echo = tool("echo");
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux, { initialState: { systemPrompt: "Be brief.", tools: [echo] } });
  assert.equal(agent.state.messages.length, 1);
  const head = agent.state.messages[0];
  assert.deepEqual(head, { role: "system", content: "Be brief.", toolsAdded: [decl(echo)], timestamp: 0 });
  assert.deepEqual(
    head.toolsAdded.map((t) => t.name),
    ["echo"],
  );
  assert.equal(head.toolsAdded[0].execute, undefined);
  await agent.prompt("hi");
  // Already declared: no further system message.
  assert.deepEqual(roles(agent.state.messages), ["system", "user", "assistant"]);
  assert.deepEqual(toolViews(faux.calls[0]), ["+echo"]);
});

test("AC-A5 tool loadout changes are declared before the next request: +first, then +first +second -first (twice)", T, async () => {
  const first = tool("first");
  const second = tool("second");
  const faux = createFaux([assistant("one"), assistant("two"), assistant("three")]);
  const agent = makeAgent(faux, { initialState: { tools: [first] } });
  await agent.prompt("p1");
  agent.state.tools = [second];
  await agent.prompt("p2");
  await agent.prompt("p3");
  assert.equal(faux.calls.length, 3);
  assert.deepEqual(faux.calls.map(toolViews), [
    ["+first"],
    ["+first", "+second", "-first"],
    ["+first", "+second", "-first"],
  ]);
  const systems = agent.state.messages.filter((m) => m.role === "system");
  assert.equal(systems.length, 2);
  const update = systems[1];
  assert.equal(typeof update.timestamp, "number");
  assert.deepEqual(update, {
    role: "system",
    content: "",
    timestamp: update.timestamp,
    toolsAdded: [decl(second)],
    toolsRemoved: [{ name: "first" }],
  });
  for (const s of systems) for (const d of s.toolsAdded ?? []) assert.deepEqual(Object.keys(d), ["name", "description", "parameters"]);
  assert.deepEqual(roles(agent.state.messages), [
    "system",
    "user",
    "assistant",
    "system",
    "user",
    "assistant",
    "user",
    "assistant",
  ]);
  assert.deepEqual(replayedTools(agent.state.messages), ["second"]);
});

test("AC-A6 a prompted system message gains toolsAdded [echo], keeps timestamp 1; the provider sees 2 system messages", T, async () => {
  const echo = tool("echo");
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux, { initialState: { systemPrompt: "base" } });
  agent.state.tools = [echo];
  const pending = { role: "system", content: "extra", sections: { style: "terse" }, timestamp: 1 };
  await agent.prompt([pending, userMessage("go")]);
  const stored = agent.state.messages[1];
  assert.equal(stored.role, "system");
  assert.equal(stored.timestamp, 1);
  assert.equal(stored.content, "extra");
  assert.deepEqual(stored.sections, { style: "terse" });
  assert.deepEqual(
    stored.toolsAdded.map((t) => t.name),
    ["echo"],
  );
  assert.equal(pending.toolsAdded, undefined, "the caller's message is not mutated");
  assert.equal(faux.calls[0].messages.filter((m) => m.role === "system").length, 2);
  assert.deepEqual(roles(agent.state.messages), ["system", "system", "user", "assistant"]);
});

test("AC-A7 a pending system message claiming +second -first is stored without tool fields; replayed tools stay [first]", T, async () => {
  const first = tool("first");
  const second = tool("second");
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux, { initialState: { tools: [first] } });
  const claim = { role: "system", content: "", timestamp: 2, toolsAdded: [decl(second)], toolsRemoved: [{ name: "first" }] };
  await agent.prompt([claim, userMessage("go")]);
  assert.deepEqual(agent.state.messages[1], { role: "system", content: "", timestamp: 2 });
  assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
  assert.deepEqual(replayedTools(faux.calls[0].messages), ["first"]);
});

test("AC-A8 reset() restores the transcript baseline [initial system message]", T, async () => {
  const echo = tool("echo");
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux, { initialState: { systemPrompt: "You are terse.", tools: [echo] } });
  const initial = JSON.parse(JSON.stringify(agent.state.messages));
  await agent.prompt("hi");
  assert.equal(agent.state.messages.length, 3);
  agent.reset();
  assert.deepEqual(JSON.parse(JSON.stringify(agent.state.messages)), initial);
  assert.equal(agent.state.systemPrompt, "You are terse.");
});

test("AC-A9 a dispatch iterates the listeners live, as the reference's Set: one subscribed meanwhile hears the same event, one removed before its turn does not", T, async () => {
  const agent = makeAgent(createFaux([assistant("ok")]));
  const log = [];
  let first = true;
  let offB;
  agent.subscribe(async (e) => {
    log.push(`A:${e.type}`);
    if (first) {
      first = false;
      agent.subscribe((e2) => log.push(`C:${e2.type}`));
      offB();
    }
    await sleep(1);
    log.push(`A-done:${e.type}`);
  });
  offB = agent.subscribe((e) => log.push(`B:${e.type}`));
  await agent.prompt("hi");
  assert.deepEqual(log.slice(0, 6), ["A:agent_start", "A-done:agent_start", "C:agent_start", "A:turn_start", "A-done:turn_start", "C:turn_start"]);
  assert.equal(log.filter((x) => x.startsWith("B:")).length, 0);
});

test("AC-A9 subscribe: no initial event, setters emit nothing, unsubscribe stops delivery", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux);
  const a = record(agent);
  await sleep(5);
  assert.equal(a.events.length, 0);
  agent.state.model = model({ id: "other" });
  agent.state.thinkingLevel = "high";
  agent.state.tools = [tool("x")];
  agent.state.messages = [];
  agent.steeringMode = "all";
  agent.followUpMode = "all";
  agent.sessionId = "s";
  agent.steer(userMessage("s"));
  agent.followUp(userMessage("f"));
  agent.clearAllQueues();
  await sleep(5);
  assert.equal(a.events.length, 0);
  const b = record(agent);
  a.unsubscribe();
  await agent.prompt("hi");
  assert.equal(a.events.length, 0);
  assert.equal(b.events[0].type, "agent_start");
  assert.equal(b.events.at(-1).type, "agent_end");
});

test("AC-A10 streamFn throwing: full lifecycle events, an error assistant, state.errorMessage", T, async () => {
  const agent = makeAgent(createFaux(), {
    streamFn: () => {
      throw new Error("provider exploded");
    },
  });
  const rec = record(agent);
  await agent.prompt("hi");
  assert.deepEqual(rec.labels({ updates: true }), [
    "agent_start",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  const last = agent.state.messages.at(-1);
  assert.equal(last.role, "assistant");
  assert.equal(last.stopReason, "error");
  assert.equal(last.errorMessage, "provider exploded");
  assert.deepEqual(last.content, [{ type: "text", text: "" }]);
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
  assert.equal(agent.state.errorMessage, "provider exploded");
  assert.equal(agent.state.isStreaming, false);
});

test("AC-A10/D1 agent_end.messages for a streamFn failure is the run's newMessages [user, failure]", deviation("D1 (G-1.1)"), async () => {
  const agent = makeAgent(createFaux(), {
    streamFn: () => {
      throw new Error("provider exploded");
    },
  });
  const rec = record(agent);
  await agent.prompt("hi");
  const end = rec.ofType("agent_end")[0];
  assert.deepEqual(roles(end.messages), ["user", "assistant"]);
  assert.equal(end.messages[1].errorMessage, "provider exploded");
  assert.deepEqual(withTs0(end.messages[1]), { ...failure("provider exploded"), ...pick(end.messages[1], ["thinkingLevel"]) });
});

function pick(o, keys) {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}

test("AC-A11 an async agent_end listener holds prompt(); isStreaming stays true meanwhile", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  const gate = deferred();
  let reachedEnd = false;
  let streamingInEnd;
  agent.subscribe(async (e) => {
    if (e.type !== "agent_end") return;
    reachedEnd = true;
    streamingInEnd = agent.state.isStreaming;
    await gate.promise;
  });
  let resolved = false;
  const p = agent.prompt("hi").then(() => (resolved = true));
  await waitFor(() => reachedEnd);
  await sleep(20);
  assert.equal(resolved, false);
  assert.equal(streamingInEnd, true);
  assert.equal(agent.state.isStreaming, true);
  gate.resolve();
  await p;
  assert.equal(resolved, true);
  assert.equal(agent.state.isStreaming, false);
});

test("AC-A12 waitForIdle() waits for an async assistant message_end listener", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  const gate = deferred();
  let held = false;
  agent.subscribe(async (e) => {
    if (e.type === "message_end" && e.message.role === "assistant") {
      held = true;
      await gate.promise;
    }
  });
  const p = agent.prompt("hi");
  await waitFor(() => held);
  let idle = false;
  const w = agent.waitForIdle().then(() => (idle = true));
  await sleep(20);
  assert.equal(idle, false);
  assert.equal(agent.state.isStreaming, true);
  gate.resolve();
  await w;
  await p;
  assert.equal(idle, true);
  assert.equal(agent.state.isStreaming, false);
});

test("AC-A13 listeners get the run's signal, which is aborted after abort()", T, async () => {
  const faux = createFaux([assistant("a long answer that will be cut off by the abort")], { delayMs: 1 });
  const agent = makeAgent(faux);
  let signalAtStart;
  const rec = record(agent, (e, signal) => {
    if (e.type === "agent_start") {
      signalAtStart = agent.signal;
      assert.equal(signal.aborted, false);
    }
    if (e.type === "message_update") agent.abort();
  });
  await agent.prompt("hi");
  assert.ok(signalAtStart instanceof AbortSignal);
  assert.ok(rec.signals.every((s) => s === signalAtStart));
  assert.equal(signalAtStart.aborted, true);
  assert.equal(agent.state.messages.at(-1).stopReason, "aborted");
  assert.equal(agent.signal, undefined);
});

test("AC-A14 a late onUpdate after the tool settled emits nothing (exactly 1 update, no unhandled rejection)", T, async () => {
  const tracker = trackUnhandled();
  let late;
  const t = tool("t", async (id, args, signal, onUpdate) => {
    onUpdate({ content: [text("progress")], details: {} });
    late = onUpdate;
    return okResult();
  });
  const agent = makeAgent([assistant(toolCall("c1", "t", {})), assistant("done")], { initialState: { tools: [t] } });
  const rec = record(agent, (e) => {
    if (e.type === "tool_execution_end") late({ content: [text("late in run")], details: {} });
  });
  await agent.prompt("go");
  late({ content: [text("late after run")], details: {} });
  await sleep(10);
  assert.equal(rec.ofType("tool_execution_update").length, 1);
  assert.equal(rec.events.at(-1).type, "agent_end");
  assert.deepEqual(tracker.stop(), []);
});

test("AC-A15 a settled parallel tool's late update is ignored while another still runs (0 updates)", T, async () => {
  const tracker = trackUnhandled();
  let fastDone = false;
  const fast = tool("fast", async (id, args, signal, onUpdate) => {
    setTimeout(() => onUpdate({ content: [text("late")], details: {} }), 5);
    fastDone = true;
    return okResult("fast");
  });
  const slow = tool("slow", async () => {
    await sleep(40);
    return okResult("slow");
  });
  const agent = makeAgent([assistant([toolCall("s1", "slow", {}), toolCall("f1", "fast", {})]), assistant("done")], {
    initialState: { tools: [slow, fast] },
  });
  const rec = record(agent);
  await agent.prompt("go");
  assert.ok(fastDone);
  assert.equal(rec.ofType("tool_execution_update").length, 0);
  assert.deepEqual(
    rec.ofType("tool_execution_end").map((e) => e.toolCallId),
    ["f1", "s1"],
  );
  assert.deepEqual(tracker.stop(), []);
});

test("AC-A16 (deviation) a listener throwing on the fast tool's end: prompt/waitForIdle wait for the slow tool", deviation("L-3.10.4"), async () => {
  const log = [];
  const fast = tool("fast", async () => okResult("fast"));
  const slow = tool("slow", async () => {
    await sleep(40);
    log.push("slow effect");
    return okResult("slow");
  });
  const faux = createFaux([assistant([toolCall("s1", "slow", {}), toolCall("f1", "fast", {})]), assistant("never")]);
  const agent = makeAgent(faux, { initialState: { tools: [slow, fast] } });
  const rec = record(agent, (e) => {
    if (e.type === "agent_end") log.push("agent_end");
  });
  agent.subscribe((e) => {
    if (e.type === "tool_execution_end" && e.toolCallId === "f1") throw new Error("listener failed on fast");
  });
  let idle = false;
  const p = agent.prompt("go");
  const w = agent.waitForIdle().then(() => (idle = true));
  await p;
  assert.deepEqual(log, ["slow effect", "agent_end"]);
  await w;
  assert.equal(idle, true);
  assert.equal(agent.state.errorMessage, "listener failed on fast");
  assert.equal(faux.calls.length, 1);
  const labels = rec.labels();
  const i = labels.indexOf("tool_execution_end:f1");
  assert.deepEqual(labels.slice(i + 1), ["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
  assert.deepEqual(withTs0(agent.state.messages.at(-1)), failure("listener failed on fast"));
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.state.pendingToolCalls.size, 0);
});

test("AC-A17 state mutators: model and level setters; tools/messages setters copy; state.messages.push mutates", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux);
  const m2 = model({ id: "faux-2" });
  agent.state.model = m2;
  assert.deepEqual(agent.state.model, m2);
  agent.state.thinkingLevel = "high";
  assert.equal(agent.state.thinkingLevel, "high");
  const tools = [tool("a")];
  agent.state.tools = tools;
  assert.notEqual(agent.state.tools, tools);
  assert.deepEqual(
    agent.state.tools.map((t) => t.name),
    ["a"],
  );
  tools.push(tool("b"));
  assert.equal(agent.state.tools.length, 1);
  const messages = [userMessage("earlier")];
  agent.state.messages = messages;
  assert.notEqual(agent.state.messages, messages);
  messages.push(userMessage("not in state"));
  assert.equal(agent.state.messages.length, 1);
  agent.state.messages.push(assistant("pushed"));
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
  agent.state.messages.push(userMessage("now"));
  await agent.continue();
  assert.equal(faux.calls[0].model.id, "faux-2");
  assert.equal(faux.calls[0].options.reasoning, "high");
  assert.deepEqual(
    faux.calls[0].messages.filter((m) => m.role !== "system").map(msgText),
    ["earlier", "pushed", "now"],
  );
  assert.deepEqual(toolViews(faux.calls[0]), ["+a"]);
});

test("AC-A22 abort() while idle does not throw", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  agent.abort();
  await agent.prompt("hi");
  agent.abort();
  assert.equal(agent.state.messages.at(-1).stopReason, "stop");
});

test("AC-A23 reset() while running throws the exact error; messages untouched", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  let during;
  agent.subscribe((e) => {
    if (e.type === "message_start" && e.message.role === "assistant") {
      assert.throws(() => agent.reset(), { name: "Error", message: RESET_BUSY });
      during = roles(agent.state.messages);
    }
  });
  await agent.prompt("hi");
  assert.deepEqual(during, ["user"]);
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
});

test("AC-A24 prompt() while running rejects with the exact error", T, async () => {
  const agent = makeAgent(createFaux([assistant("first")], { delayMs: 1 }));
  const p = agent.prompt("hi");
  await assert.rejects(agent.prompt("again"), { name: "Error", message: PROMPT_BUSY });
  await assert.rejects(agent.prompt(userMessage("again")), { message: PROMPT_BUSY });
  await p;
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
});

test("AC-A25 continue() while running rejects with the exact error", T, async () => {
  const agent = makeAgent(createFaux([assistant("first")], { delayMs: 1 }));
  const p = agent.prompt("hi");
  await assert.rejects(agent.continue(), { name: "Error", message: CONTINUE_BUSY });
  await p;
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
});

test("AC-A28 legacy prepareNextTurn(signal) gets an AbortSignal; 2 requests", T, async () => {
  const seen = [];
  const t = tool("t");
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("done")]);
  const agent = makeAgent(faux, {
    initialState: { tools: [t] },
    prepareNextTurn(...args) {
      seen.push({ args, active: agent.signal });
      return undefined;
    },
  });
  await agent.prompt("go");
  assert.equal(faux.calls.length, 2);
  assert.equal(seen.length, 1);
  assert.ok(seen[0].args[0] instanceof AbortSignal);
  assert.equal(seen[0].args[0], seen[0].active);
});

test("A-5.1.1 prepareNextTurnWithContext(ctx, signal) wins over the legacy prepareNextTurn", T, async () => {
  const t = tool("t");
  let legacy = 0;
  const seen = [];
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("done")]);
  const agent = makeAgent(faux, {
    initialState: { tools: [t] },
    prepareNextTurn: () => {
      legacy++;
    },
    prepareNextTurnWithContext: (ctx, signal) => {
      seen.push({ ctx, signal });
      return { messages: [userMessage("injected")] };
    },
  });
  await agent.prompt("go");
  assert.equal(legacy, 0);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].ctx.message.role, "assistant");
  assert.deepEqual(
    seen[0].ctx.toolResults.map((r) => r.toolCallId),
    ["c1"],
  );
  assert.ok(seen[0].signal instanceof AbortSignal);
  assert.equal(faux.calls[1].messages.at(-1).content, "injected");
});

test("AC-A29 finishTurn via options gets the signal; end after a tool turn → 1 request", T, async () => {
  const t = tool("t");
  const seen = [];
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("never")]);
  const agent = makeAgent(faux, {
    initialState: { systemPrompt: "sys", tools: [t] },
    finishTurn: (ctx, signal) => {
      seen.push({ roles: roles(ctx.context.messages), signal });
      return { action: "end" };
    },
  });
  const rec = record(agent);
  await agent.prompt("go");
  assert.equal(faux.calls.length, 1);
  assert.equal(seen.length, 1);
  assert.ok(seen[0].signal instanceof AbortSignal);
  assert.deepEqual(seen[0].roles, ["system", "user", "assistant", "toolResult"]);
  assert.deepEqual(roles(agent.state.messages), ["system", "user", "assistant", "toolResult"]);
  assert.equal(rec.events.at(-1).type, "agent_end");
});

test("AC-A36 sessionId reaches the stream options, also after changing the field", T, async () => {
  const faux = createFaux([assistant("one"), assistant("two"), assistant("three")]);
  const agent = makeAgent(faux, { sessionId: "session-1" });
  assert.equal(agent.sessionId, "session-1");
  await agent.prompt("a");
  agent.sessionId = "session-2";
  await agent.prompt("b");
  agent.sessionId = undefined;
  await agent.prompt("c");
  assert.deepEqual(
    faux.calls.map((c) => c.options.sessionId),
    ["session-1", "session-2", undefined],
  );
});

// ---------------------------------------------------------------------------------------------
// construction
// ---------------------------------------------------------------------------------------------

test("A-5.1.3 initial state: arrays copied; no system message without prompt/tools; none inserted before a system head", T, () => {
  const streamFn = createFaux().streamFn;
  const messages = [userMessage("u")];
  const tools = [tool("a")];
  const a = new Agent({ streamFn, initialState: { messages, tools: [] } });
  assert.notEqual(a.state.messages, messages);
  assert.deepEqual(roles(a.state.messages), ["user"]);
  messages.push(userMessage("later"));
  assert.equal(a.state.messages.length, 1);
  // Tools but no prompt: content "".
  const b = new Agent({ streamFn, initialState: { tools } });
  assert.notEqual(b.state.tools, tools);
  assert.deepEqual(b.state.messages, [{ role: "system", content: "", toolsAdded: [decl(tools[0])], timestamp: 0 }]);
  // Messages starting with a system message: nothing inserted, even with a prompt and tools.
  const head = { role: "system", content: "given", timestamp: 7 };
  const c = new Agent({ streamFn, initialState: { systemPrompt: "ignored", tools, messages: [head, userMessage("u")] } });
  assert.deepEqual(roles(c.state.messages), ["system", "user"]);
  assert.deepEqual(c.state.messages[0], head);
  // Messages not starting with a system message: inserted first.
  const d = new Agent({ streamFn, initialState: { systemPrompt: "p", messages: [userMessage("u")] } });
  assert.deepEqual(d.state.messages[0], { role: "system", content: "p", timestamp: 0 });
  assert.deepEqual(roles(d.state.messages), ["system", "user"]);
  // Empty prompt and no tools: nothing inserted.
  const e = new Agent({ streamFn, initialState: { systemPrompt: "" } });
  assert.deepEqual(e.state.messages, []);
});

test("A-5.1.2 options become public mutable fields; defaults transport auto, toolExecution parallel, modes one-at-a-time", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const hooks = {
    transformContext: async (m) => m,
    getApiKey: () => undefined,
    beforeToolCall: async () => undefined,
    afterToolCall: async () => undefined,
    finishTurn: () => undefined,
    prepareRequest: () => undefined,
  };
  const agent = new Agent({ streamFn: faux.streamFn, ...hooks, sessionId: "s", maxRetryDelayMs: 5 });
  assert.equal(agent.streamFunction, faux.streamFn);
  for (const [k, v] of Object.entries(hooks)) assert.equal(agent[k], v, k);
  assert.equal(typeof agent.convertToLlm, "function");
  assert.equal(agent.transport, "auto");
  assert.equal(agent.toolExecution, "parallel");
  assert.equal(agent.steeringMode, "one-at-a-time");
  assert.equal(agent.followUpMode, "one-at-a-time");
  assert.equal(agent.sessionId, "s");
  assert.equal(agent.maxRetryDelayMs, 5);
  // Default convertToLlm keeps system/user/assistant/toolResult and drops custom roles.
  const converted = await agent.convertToLlm([
    { role: "system", content: "s", timestamp: 0 },
    userMessage("u"),
    { role: "notification", text: "n", timestamp: 0 },
    assistant("a"),
  ]);
  assert.deepEqual(roles(converted), ["system", "user", "assistant"]);
  // A replaced field is used by the next run.
  let called = 0;
  agent.streamFunction = (m, c, o) => {
    called++;
    return faux.streamFn(m, c, o);
  };
  agent.state.model = model();
  await agent.prompt("hi");
  assert.equal(called, 1);
});

test("A-5.1.1 new Agent() without options or a default stream function (D7)", deviation("D7"), () => {
  const agent = new Agent();
  assert.equal(typeof agent.streamFunction, "function");
  assert.deepEqual(agent.state.model, DEFAULT_MODEL);
  assert.deepEqual(agent.state.messages, []);
});

test("A-5.5.2 forwarded stream options: model, reasoning, sessionId, transport, budgets, retry cap, identity, signal", T, async () => {
  const faux = createFaux([assistant("one"), assistant("two")]);
  const budgets = { low: 100 };
  const agent = makeAgent(faux, {
    initialState: { thinkingLevel: "medium" },
    sessionId: "sid",
    thinkingBudgets: budgets,
    maxRetryDelayMs: 1234,
    transport: "sse",
  });
  let runSignal;
  agent.subscribe((e, s) => (runSignal = s));
  await agent.prompt("a");
  const o = faux.calls[0].options;
  assert.equal(faux.calls[0].model.id, "faux-1");
  assert.equal(o.reasoning, "medium");
  assert.equal(o.sessionId, "sid");
  assert.deepEqual(o.thinkingBudgets, budgets);
  assert.equal(o.maxRetryDelayMs, 1234);
  assert.equal(o.transport, "sse");
  assert.deepEqual(o.identity, DEFAULT_AGENT_IDENTITY ?? { attribution: { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] } });
  assert.equal(o.signal, runSignal);
  agent.state.thinkingLevel = "off";
  await agent.prompt("b");
  assert.equal(faux.calls[1].options.reasoning, undefined);
});

test("A-5.5.2 new options apiKey/maxTokens/temperature/headers/fetch and D3-D5 numbers are fields and reach the stream options", deviation("new options"), async () => {
  const faux = createFaux([assistant("ok")]);
  const fetchFn = async () => new Response("");
  const agent = makeAgent(faux, {
    apiKey: "k-1",
    maxTokens: 321,
    temperature: 0.5,
    headers: { "x-test": "1" },
    fetch: fetchFn,
    toolTimeoutMs: 1000,
    streamIdleTimeoutMs: 2000,
    abortGraceMs: 300,
    maxParallelTools: 2,
  });
  assert.equal(agent.apiKey, "k-1");
  assert.equal(agent.maxTokens, 321);
  assert.equal(agent.temperature, 0.5);
  assert.equal(agent.fetch, fetchFn);
  assert.equal(agent.toolTimeoutMs, 1000);
  assert.equal(agent.streamIdleTimeoutMs, 2000);
  assert.equal(agent.abortGraceMs, 300);
  assert.equal(agent.maxParallelTools, 2);
  await agent.prompt("go");
  const o = faux.calls[0].options;
  assert.equal(o.apiKey, "k-1");
  assert.equal(o.maxTokens, 321);
  assert.equal(o.temperature, 0.5);
  assert.deepEqual(o.headers, { "x-test": "1" });
  assert.equal(o.fetch, fetchFn);
  // A field changed later applies to the next run.
  agent.maxTokens = 99;
  faux.push(assistant("again"));
  await agent.prompt("again");
  assert.equal(faux.calls[1].options.maxTokens, 99);
});

test("A-5.5.2/D3.1 Agent toolTimeoutMs applies to tool executions", deviation("D3"), async () => {
  // The tool ends only when its signal aborts, or on its own after 2 s (50× the timeout), so an implementation
  // without the timeout fails on the order below instead of hanging; no wall-clock bound on the run.
  const seen = [];
  let timer;
  const slow = tool("slow", async (id, args, signal) => {
    await new Promise((resolve) => {
      timer = setTimeout(() => (seen.push("tool ended on its own"), resolve()), 2000);
      const aborted = () => (clearTimeout(timer), seen.push("tool signal aborted"), resolve());
      signal?.addEventListener("abort", aborted, { once: true });
    });
    return okResult("late");
  });
  const faux = createFaux([assistant(toolCall("c1", "slow", {})), assistant("done")]);
  const agent = makeAgent(faux, { initialState: { tools: [slow] }, toolTimeoutMs: 20 });
  agent.subscribe((e) => {
    if (e.type === "tool_execution_end") seen.push(`tool_execution_end ${firstText(e.result)}`);
  });
  await agent.prompt("go");
  clearTimeout(timer);
  const result = agent.state.messages.find((m) => m.role === "toolResult");
  assert.equal(result.isError, true);
  assert.equal(firstText(result), 'Tool "slow" timed out after 0.02 seconds');
  assert.equal(seen.includes("tool ended on its own"), false, seen.join(", "));
  assert.equal(seen.at(-1), 'tool_execution_end Tool "slow" timed out after 0.02 seconds', seen.join(", "));
  assert.equal(faux.calls.length, 2);
});

test("A-5.5.2/D3.2 Agent streamIdleTimeoutMs ends a stalled stream with the idle-timeout error", deviation("D3"), async () => {
  let calls = 0;
  const stalled = (m, context, options) => {
    calls++;
    const stream = createAssistantMessageEventStream();
    const partial = { ...assistant([]), stopReason: "pending" };
    stream.push({ type: "start", partial });
    // Fallback so an implementation without the timeout fails fast instead of hanging.
    const fallback = setTimeout(() => {
      stream.push({ type: "error", reason: "error", error: { ...partial, stopReason: "error", errorMessage: "no idle timeout fired" } });
    }, 1000);
    options?.signal?.addEventListener("abort", () => clearTimeout(fallback), { once: true });
    return stream;
  };
  const agent = makeAgent(createFaux(), { streamFn: stalled, streamIdleTimeoutMs: 30 });
  const rec = record(agent);
  await agent.prompt("go");
  assert.equal(calls, 1);
  const last = agent.state.messages.at(-1);
  assert.equal(last.stopReason, "error");
  assert.equal(last.errorMessage, "Stream idle timeout: no event from the provider for 30 ms");
  assert.equal(agent.state.errorMessage, last.errorMessage);
  assert.deepEqual(rec.labels().slice(-4), ["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
});

test("A-5.5.2/D4 Agent abortGraceMs bounds a tool that ignores the abort", deviation("D4"), async () => {
  // The tool ignores the abort and ends on its own after 1 s (50× the grace): the run must end before it does.
  let toolEnded = false;
  let timer;
  const stubborn = tool("stubborn", async () => {
    await new Promise((resolve) => (timer = setTimeout(resolve, 1000)));
    toolEnded = true;
    return okResult("late");
  });
  const faux = createFaux([assistant(toolCall("c1", "stubborn", {})), assistant("never")]);
  const agent = makeAgent(faux, { initialState: { tools: [stubborn] }, abortGraceMs: 20 });
  let abortedAt;
  agent.subscribe((e) => {
    if (e.type === "tool_execution_start") {
      setTimeout(() => {
        abortedAt = Date.now();
        agent.abort();
      }, 5);
    }
  });
  await agent.prompt("go");
  const elapsed = Date.now() - abortedAt;
  // Timers never fire early, so the grace was waited out; the tool still running proves it was not waited for.
  assert.ok(elapsed >= 15, `ended ${elapsed} ms after the abort, before the 20 ms grace`);
  assert.equal(toolEnded, false, `the run waited for the tool (${elapsed} ms after the abort)`);
  clearTimeout(timer);
  const result = agent.state.messages.at(-1);
  assert.equal(result.role, "toolResult");
  assert.equal(result.isError, true);
  assert.equal(firstText(result), "Operation aborted");
  assert.equal(faux.calls.length, 1);
});

test("A-5.5.2/D5 Agent maxParallelTools caps concurrent executions", deviation("D5"), async () => {
  let running = 0;
  let max = 0;
  const p = tool("p", async () => {
    running++;
    max = Math.max(max, running);
    await sleep(10);
    running--;
    return okResult();
  });
  const faux = createFaux([assistant([toolCall("a", "p", {}), toolCall("b", "p", {}), toolCall("c", "p", {})]), assistant("done")]);
  const agent = makeAgent(faux, { initialState: { tools: [p] }, maxParallelTools: 2 });
  const rec = record(agent);
  await agent.prompt("go");
  assert.equal(max, 2);
  // Parallel layout kept: the first two start before any end.
  assert.deepEqual(rec.labels().filter((l) => l.startsWith("tool_execution")).slice(0, 2), [
    "tool_execution_start:a",
    "tool_execution_start:b",
  ]);
  assert.deepEqual(
    rec.ofType("turn_end")[0].toolResults.map((r) => r.toolCallId),
    ["a", "b", "c"],
  );
});

test("E-8.4.4 hygiene: Node exits at once after Agent runs ending normally and in aborts (no leftover timer)", T, async () => {
  const impl = new URL("./impl.mjs", import.meta.url).href;
  const faux = new URL("./faux.mjs", import.meta.url).href;
  const script = `
    const { Agent } = await import(${JSON.stringify(impl)});
    const { createFaux, assistant, model, toolCall, tool } = await import(${JSON.stringify(faux)});
    const t = tool("t", (id, args, signal) => new Promise((res, rej) => signal.addEventListener("abort", () => rej(new Error("aborted")), { once: true })));
    const f = createFaux([assistant("plain"), assistant(toolCall("c1", "t", {})), assistant("after"), assistant("long text ".repeat(30))], { delayMs: 1 });
    const agent = new Agent({ streamFn: f.streamFn, initialState: { model: model(), tools: [t] } });
    await agent.prompt("one");
    const off = agent.subscribe((e) => { if (e.type === "tool_execution_start") setTimeout(() => agent.abort(), 2); });
    await agent.prompt("two");
    off();
    agent.clearAllQueues();
    agent.state.messages.push({ role: "user", content: "three", timestamp: 1 });
    agent.subscribe((e) => { if (e.type === "message_update") agent.abort(); });
    await agent.continue();
    // What keeps the event loop alive now: a timer left by a run would show as "Timeout".
    console.log("done " + agent.state.messages.length + " " + JSON.stringify(process.getActiveResourcesInfo()));
  `;
  const { code, out } = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const killer = setTimeout(() => child.kill(), 4500);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(killer);
      resolve({ code, out });
    });
  });
  assert.equal(code, 0, out);
  assert.match(out, /^done \d+ /);
  // No wall-clock bound (the child may be slow under a parallel run): what would keep Node alive after the last run
  // is listed instead. Only the child's own stdout/stderr pipes remain; a leftover timer would add "Timeout".
  const resources = JSON.parse(out.slice(out.indexOf("[")).split("\n")[0]);
  assert.deepEqual(resources.filter((r) => r !== "PipeWrap" && r !== "TTYWrap"), [], out);
});

test("E-8.1 options.steeringMode / followUpMode must be valid (TypeError)", deviation("E-8.1 TypeErrors"), () => {
  const streamFn = createFaux().streamFn;
  assert.throws(() => new Agent({ streamFn, steeringMode: "bogus" }), {
    name: "TypeError",
    message: 'Agent: options.steeringMode must be "all" or "one-at-a-time"',
  });
  assert.throws(() => new Agent({ streamFn, followUpMode: 3 }), {
    name: "TypeError",
    message: 'Agent: options.followUpMode must be "all" or "one-at-a-time"',
  });
  assert.throws(() => new Agent(42), TypeError);
});

test("E-8.1 misuse rejects prompt()/continue() with a TypeError before any event; the agent stays idle", deviation("E-8.1 TypeErrors"), async () => {
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux);
  const rec = record(agent);
  agent.state.tools = [{ name: "broken", description: "", parameters: { type: "object", properties: {} } }];
  await assert.rejects(agent.prompt("hi"), TypeError);
  assert.equal(agent.state.isStreaming, false);
  agent.state.tools = [];
  agent.convertToLlm = "not a function";
  await assert.rejects(agent.prompt("hi"), TypeError);
  agent.convertToLlm = (m) => m;
  await assert.rejects(agent.prompt(42), TypeError);
  await assert.rejects(agent.prompt([userMessage("ok"), { content: "no role" }]), TypeError);
  agent.state.messages = [userMessage("u")];
  agent.state.tools = [{ name: "broken" }];
  await assert.rejects(agent.continue(), TypeError);
  assert.equal(rec.events.length, 0);
  assert.equal(faux.calls.length, 0);
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.signal, undefined);
  assert.deepEqual(roles(agent.state.messages), ["user"]);
  agent.state.tools = [];
  await agent.continue();
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
});

test("E-8.1 every field a run checks, set after construction: the exact TypeError, or the run when valid", deviation("E-8.1 TypeErrors"), async () => {
  const faux = createFaux(Array.from({ length: 8 }, () => assistant("ok")));
  const agent = makeAgent(faux);
  const bad = [
    ["toolTimeoutMs", -1, "agent.toolTimeoutMs must be a finite number between 0 and 2147483647"],
    ["streamIdleTimeoutMs", Infinity, "agent.streamIdleTimeoutMs must be a finite number between 0 and 2147483647"],
    ["abortGraceMs", NaN, "agent.abortGraceMs must be a number between 0 and 2147483647, or Infinity"],
    ["timeoutMs", "5", "agent.timeoutMs must be a finite number between 0 and 2147483647"],
    ["maxParallelTools", 1.5, "agent.maxParallelTools must be a positive integer"],
    ["maxParallelTools", 0, "agent.maxParallelTools must be a positive integer"],
    ["finishTurn", 7, "agent.finishTurn must be a function"],
    ["prepareNextTurnWithContext", {}, "agent.prepareNextTurnWithContext must be a function"],
    ["streamFunction", null, "agent.streamFunction must be a function"],
  ];
  for (const [key, value, message] of bad) {
    const before = agent[key];
    agent[key] = value;
    await assert.rejects(agent.prompt("hi"), (e) => e instanceof TypeError && e.message === `Agent.prompt: ${message}`, key);
    agent[key] = before;
  }
  agent.state.model = [];
  await assert.rejects(agent.prompt("hi"), (e) => e instanceof TypeError && e.message === "Agent.prompt: state.model must be an object");
  agent.state.model = model();
  agent.state.tools = [tool("t", undefined, { parameters: "schema" })];
  await assert.rejects(agent.prompt("hi"), (e) => e instanceof TypeError && e.message === "Agent.prompt: state.tools[0].parameters must be an object");
  agent.state.tools = [];
  assert.equal(faux.calls.length, 0);
  for (const [key, value] of [["abortGraceMs", Infinity], ["toolTimeoutMs", -0], ["maxParallelTools", 3], ["finishTurn", null]]) {
    agent[key] = value;
    await agent.prompt("hi");
  }
  assert.equal(faux.calls.length, 4);
  assert.equal(agent.state.errorMessage, undefined);
});

// ---------------------------------------------------------------------------------------------
// state
// ---------------------------------------------------------------------------------------------

test("A-5.2.1 agent.state is one stable object; getters return the live arrays", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const agent = makeAgent(faux);
  const state = agent.state;
  assert.equal(agent.state, state);
  const live = state.messages;
  assert.equal(state.messages, live);
  assert.equal(state.tools, state.tools);
  await agent.prompt("hi");
  assert.equal(agent.state, state);
  assert.equal(state.messages, live);
  assert.deepEqual(roles(live), ["user", "assistant"]);
  state.tools.push(tool("pushed"));
  assert.deepEqual(
    agent.state.tools.map((t) => t.name),
    ["pushed"],
  );
});

test("A-5.2.1 systemPrompt is replayed: contents joined by blank lines, then non-null sections", T, () => {
  const agent = makeAgent(createFaux(), { initialState: { systemPrompt: "base" } });
  assert.equal(agent.state.systemPrompt, "base");
  agent.state.messages.push(userMessage("u"));
  agent.state.messages.push({ role: "system", content: "more", sections: { style: "terse", gone: "x" }, timestamp: 5 });
  agent.state.messages.push({ role: "system", content: "", sections: { gone: null }, timestamp: 6 });
  assert.equal(agent.state.systemPrompt, "base\n\nmore\n\nterse");
});

test("A-5.2.2 reducer: streamingMessage during streaming, pendingToolCalls is a new Set per start/end", T, async () => {
  const t1 = tool("slow", async () => {
    await sleep(20);
    return okResult();
  });
  const t2 = tool("fast", async () => okResult());
  const faux = createFaux([assistant([toolCall("c1", "slow", {}), toolCall("c2", "fast", {})]), assistant("done")]);
  const agent = makeAgent(faux, { initialState: { tools: [t1, t2] } });
  const sets = [];
  const streaming = [];
  record(agent, (e) => {
    if (e.type === "tool_execution_start" || e.type === "tool_execution_end") {
      const s = agent.state.pendingToolCalls;
      sets.push({ label: `${e.type}:${e.toolCallId}`, set: s, ids: [...s] });
    }
    if (e.type === "message_update") streaming.push(agent.state.streamingMessage === e.message || agent.state.streamingMessage?.role === "assistant");
    if (e.type === "message_end") streaming.push(agent.state.streamingMessage === undefined ? "cleared" : "still");
  });
  await agent.prompt("go");
  assert.deepEqual(
    sets.map((x) => [x.label, x.ids]),
    [
      ["tool_execution_start:c1", ["c1"]],
      ["tool_execution_start:c2", ["c1", "c2"]],
      ["tool_execution_end:c2", ["c1"]],
      ["tool_execution_end:c1", []],
    ],
  );
  for (let i = 0; i < sets.length; i++) {
    for (let j = i + 1; j < sets.length; j++) assert.notEqual(sets[i].set, sets[j].set);
    assert.deepEqual([...sets[i].set], sets[i].ids, "a published set is never mutated later");
  }
  assert.ok(streaming.length > 0);
  assert.ok(streaming.every((x) => x === true || x === "cleared"));
  assert.equal(agent.state.pendingToolCalls.size, 0);
  assert.equal(agent.state.streamingMessage, undefined);
});

test("A-5.2.2 turn_end with an assistant errorMessage sets state.errorMessage; the next run clears it", T, async () => {
  const faux = createFaux([assistant("bad", { stopReason: "error", errorMessage: "rate limited" }), assistant("ok")]);
  const agent = makeAgent(faux);
  let errorAtStart = "unset";
  await agent.prompt("a");
  assert.equal(agent.state.errorMessage, "rate limited");
  agent.subscribe((e) => {
    if (e.type === "agent_start") errorAtStart = agent.state.errorMessage;
  });
  await agent.prompt("b");
  assert.equal(errorAtStart, undefined);
  assert.equal(agent.state.errorMessage, undefined);
});

// ---------------------------------------------------------------------------------------------
// methods
// ---------------------------------------------------------------------------------------------

test("A-5.4.1 prompt(text, images) builds a user message; prompt(array) uses the array; prompt(message)", T, async () => {
  const faux = createFaux([assistant("1"), assistant("2"), assistant("3")]);
  const agent = makeAgent(faux);
  const image = { type: "image", data: "AAAA", mimeType: "image/png" };
  const before = Date.now();
  await agent.prompt("look", [image]);
  const u = agent.state.messages[0];
  assert.deepEqual(Object.keys(u), ["role", "content", "timestamp"]);
  assert.deepEqual(u.content, [{ type: "text", text: "look" }, image]);
  assert.ok(u.timestamp >= before && u.timestamp <= Date.now());
  const m1 = userMessage("x");
  const m2 = userMessage("y");
  await agent.prompt([m1, m2]);
  assert.deepEqual(agent.state.messages.slice(2, 4), [m1, m2]);
  const m3 = userMessage("z");
  await agent.prompt(m3);
  assert.deepEqual(agent.state.messages[5], m3);
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant", "user", "user", "assistant", "user", "assistant"]);
  await agent.prompt("plain");
  assert.deepEqual(agent.state.messages.at(-2).content, [{ type: "text", text: "plain" }]);
});

test("A-5.4.2/A-5.4.3 continue(): assistant tail without queued messages rejects; user tail continues", T, async () => {
  const faux = createFaux([assistant("ok"), assistant("again")]);
  const agent = makeAgent(faux);
  await agent.prompt("hi");
  await assert.rejects(agent.continue(), { name: "Error", message: "Cannot continue from message role: assistant" });
  assert.equal(agent.state.isStreaming, false);
  agent.state.messages.push(userMessage("more"));
  await agent.continue();
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant", "user", "assistant"]);
  assert.equal(faux.calls.length, 2);
});

test("A-5.4.4 idle: abort() is a no-op, signal is undefined, waitForIdle() resolves at once", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  assert.equal(agent.signal, undefined);
  agent.abort();
  const r = await Promise.race([agent.waitForIdle().then(() => "idle"), sleep(50).then(() => "timeout")]);
  assert.equal(r, "idle");
  let during;
  agent.subscribe((e) => {
    if (e.type === "turn_start") during = agent.signal;
  });
  await agent.prompt("hi");
  assert.ok(during instanceof AbortSignal);
  assert.equal(during.aborted, false);
  assert.equal(agent.signal, undefined);
  agent.abort();
  assert.equal(during.aborted, false);
  const r2 = await Promise.race([agent.waitForIdle().then(() => "idle"), sleep(50).then(() => "timeout")]);
  assert.equal(r2, "idle");
});

test("A-5.4.4 reset(): replayed head (contents joined, sections patched, current tools, first timestamp), runtime fields and queues cleared", T, async () => {
  const a = tool("a");
  const b = tool("b");
  const faux = createFaux([assistant("bad", { stopReason: "error", errorMessage: "boom" })]);
  const agent = makeAgent(faux, { initialState: { systemPrompt: "base", tools: [a] } });
  await agent.prompt("hi");
  agent.state.messages.push({
    role: "system",
    content: "more",
    sections: { style: "terse", x: "1" },
    toolsAdded: [decl(b)],
    timestamp: 5,
  });
  agent.state.messages.push({ role: "system", content: "", sections: { x: null }, timestamp: 6 });
  agent.steer(userMessage("s"));
  agent.followUp(userMessage("f"));
  assert.equal(agent.state.errorMessage, "boom");
  agent.reset();
  assert.deepEqual(JSON.parse(JSON.stringify(agent.state.messages)), [
    { role: "system", content: "base\n\nmore", sections: { style: "terse" }, toolsAdded: [decl(a), decl(b)], timestamp: 0 },
  ]);
  assert.equal(agent.state.errorMessage, undefined);
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.state.streamingMessage, undefined);
  assert.equal(agent.state.pendingToolCalls.size, 0);
  assert.equal(agent.hasQueuedMessages(), false);
  // No system message at all: [].
  const bare = makeAgent(createFaux([assistant("ok")]));
  await bare.prompt("hi");
  bare.reset();
  assert.deepEqual(bare.state.messages, []);
});

test("A-5.4.5 listeners are called as listener(event, signal) in subscription order, this undefined", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  const calls = [];
  agent.subscribe(function (...args) {
    calls.push({ who: 1, n: args.length, self: this, type: args[0].type, signal: args[1] });
  });
  agent.subscribe(function (...args) {
    calls.push({ who: 2, n: args.length, self: this, type: args[0].type, signal: args[1] });
  });
  await agent.prompt("hi");
  assert.ok(calls.length >= 16);
  for (let i = 0; i < calls.length; i += 2) {
    assert.equal(calls[i].who, 1);
    assert.equal(calls[i + 1].who, 2);
    assert.equal(calls[i].type, calls[i + 1].type);
  }
  assert.ok(calls.every((c) => c.n === 2 && c.self === undefined && c.signal instanceof AbortSignal));
  assert.ok(calls.every((c) => c.signal === calls[0].signal));
});

test("A-5.4.5 unsubscribing during a run stops delivery from the next event", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  const got = [];
  const off = agent.subscribe((e) => {
    got.push(e.type);
    if (e.type === "turn_start") off();
  });
  const rec = record(agent);
  await agent.prompt("hi");
  assert.deepEqual(got, ["agent_start", "turn_start"]);
  assert.equal(rec.events.at(-1).type, "agent_end");
});

// ---------------------------------------------------------------------------------------------
// lifecycle, barrier timing
// ---------------------------------------------------------------------------------------------

test("A-5.5.3 isStreaming is true from agent_start through the agent_end listeners; cleared after", T, async () => {
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("done")]);
  const agent = makeAgent(faux, { initialState: { tools: [tool("t")] } });
  const flags = [];
  agent.subscribe(async (e) => {
    flags.push(agent.state.isStreaming);
    if (e.type === "agent_end") {
      await sleep(10);
      flags.push(agent.state.isStreaming);
    }
  });
  const p = agent.prompt("go");
  assert.equal(agent.state.isStreaming, true);
  await p;
  assert.ok(flags.length > 10);
  assert.ok(flags.every((f) => f === true));
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.state.streamingMessage, undefined);
  assert.equal(agent.state.pendingToolCalls.size, 0);
});

test("A-5.5.1 state changed mid-run affects the next run only", T, async () => {
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("done"), assistant("next")]);
  const agent = makeAgent(faux, { initialState: { tools: [tool("t")] } });
  agent.subscribe((e) => {
    if (e.type === "tool_execution_start") {
      agent.state.model = model({ id: "faux-2" });
      agent.state.thinkingLevel = "high";
      agent.state.tools = [];
    }
  });
  await agent.prompt("go");
  assert.deepEqual(
    faux.calls.map((c) => [c.model.id, c.options.reasoning]),
    [
      ["faux-1", undefined],
      ["faux-1", undefined],
    ],
  );
  assert.equal(agent.state.messages.find((m) => m.role === "toolResult").isError, false);
  await agent.prompt("again");
  assert.deepEqual([faux.calls[2].model.id, faux.calls[2].options.reasoning], ["faux-2", "high"]);
  assert.deepEqual(toolViews(faux.calls[2]), ["+t", "-t"]);
});

test("L-3.10.2 barrier: a slow async listener delays the next event; listeners in subscription order", T, async () => {
  const agent = makeAgent([assistant("ok")]);
  const log = [];
  agent.subscribe(async (e) => {
    if (e.type === "message_start" && e.message.role === "user") {
      log.push("slow:start");
      await sleep(30);
      log.push("slow:done");
    }
  });
  agent.subscribe((e) => {
    log.push(`second:${e.type}:${e.message?.role ?? ""}`);
  });
  const t0 = Date.now();
  let tEnd;
  agent.subscribe((e) => {
    if (e.type === "message_end" && e.message.role === "user") tEnd = Date.now();
  });
  await agent.prompt("hi");
  const i = log.indexOf("slow:start");
  assert.deepEqual(log.slice(i, i + 4), ["slow:start", "slow:done", "second:message_start:user", "second:message_end:user"]);
  assert.ok(tEnd - t0 >= 25, `message_end delivered after ${tEnd - t0} ms`);
});

test("L-3.10.3 (deviation) listener calls never overlap, also for parallel tool updates and ends", deviation("L-3.10.3"), async () => {
  const mk = (name, ms) =>
    tool(name, async (id, args, signal, onUpdate) => {
      onUpdate({ content: [text(`${name} 1`)], details: {} });
      await sleep(ms);
      onUpdate({ content: [text(`${name} 2`)], details: {} });
      return okResult(name);
    });
  const faux = createFaux([assistant([toolCall("a", "ta", {}), toolCall("b", "tb", {}), toolCall("c", "tc", {})]), assistant("done")]);
  const agent = makeAgent(faux, { initialState: { tools: [mk("ta", 3), mk("tb", 1), mk("tc", 2)] } });
  let inside = 0;
  let maxInside = 0;
  const seen = [];
  agent.subscribe(async (e) => {
    inside++;
    maxInside = Math.max(maxInside, inside);
    if (e.type.startsWith("tool_execution")) {
      seen.push(`${e.type}:${e.toolCallId}`);
      await sleep(4);
    }
    inside--;
  });
  await agent.prompt("go");
  assert.equal(maxInside, 1);
  assert.equal(seen.filter((l) => l.startsWith("tool_execution_update")).length, 6);
  assert.equal(seen.filter((l) => l.startsWith("tool_execution_end")).length, 3);
});

test("L-3.10.2 beforeToolCall sees the assistant message already in agent.state.messages (listener effects visible)", T, async () => {
  let listenerSaw = false;
  const seen = [];
  const t = tool("t");
  const agent = makeAgent([assistant(toolCall("c1", "t", { v: 1 })), assistant("done")], {
    initialState: { tools: [t] },
    beforeToolCall: async (ctx) => {
      const last = agent.state.messages.at(-1);
      seen.push({
        role: last.role,
        ids: last.content.filter((b) => b.type === "toolCall").map((b) => b.id),
        listenerSaw,
        same: JSON.stringify(last.content) === JSON.stringify(ctx.assistantMessage.content),
      });
      return undefined;
    },
  });
  agent.subscribe(async (e) => {
    if (e.type === "message_end" && e.message.role === "assistant" && !listenerSaw) {
      await sleep(5);
      listenerSaw = true;
    }
  });
  await agent.prompt("go");
  assert.deepEqual(seen, [{ role: "assistant", ids: ["c1"], listenerSaw: true, same: true }]);
});

test("A-5.5.3 prompt() resolves after a slow agent_end listener; runs ending in error or abort resolve", T, async () => {
  const faux = createFaux([assistant("bad", { stopReason: "error", errorMessage: "nope" }), assistant("long text to abort")], {
    delayMs: 1,
  });
  const agent = makeAgent(faux);
  const log = [];
  agent.subscribe(async (e) => {
    if (e.type === "agent_end") {
      await sleep(20);
      log.push("listener done");
    }
  });
  await agent.prompt("a");
  log.push("prompt resolved");
  assert.deepEqual(log, ["listener done", "prompt resolved"]);
  const off = agent.subscribe((e) => {
    if (e.type === "message_update") agent.abort();
  });
  await agent.prompt("b");
  off();
  assert.equal(agent.state.messages.at(-1).stopReason, "aborted");
  assert.equal(agent.state.errorMessage, "Request was aborted");
});

// ---------------------------------------------------------------------------------------------
// run failure
// ---------------------------------------------------------------------------------------------

test("A-5.6.1 a listener throws: the run stops; failure events pass reducer and listeners; errorMessage; prompt resolves", T, async () => {
  const faux = createFaux([]);
  const agent = makeAgent(faux);
  const rec = record(agent);
  let thrown = false;
  agent.subscribe((e) => {
    if (e.type === "message_end" && e.message.role === "user" && !thrown) {
      thrown = true;
      throw new Error("listener boom");
    }
  });
  await agent.prompt("hi");
  assert.equal(faux.calls.length, 0);
  assert.deepEqual(rec.labels({ updates: true }), [
    "agent_start",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  const f = agent.state.messages.at(-1);
  assert.deepEqual(withTs0(f), failure("listener boom"));
  assert.ok(Math.abs(f.timestamp - Date.now()) < 5000);
  const end = rec.ofType("agent_end")[0];
  assert.deepEqual(end.messages.map(withTs0), [failure("listener boom")]);
  const turnEnd = rec.ofType("turn_end")[0];
  assert.deepEqual(turnEnd.toolResults, []);
  assert.equal(turnEnd.message.errorMessage, "listener boom");
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
  assert.equal(agent.state.errorMessage, "listener boom");
  assert.equal(agent.state.isStreaming, false);
  // Usable afterwards.
  faux.push(assistant("fine"));
  await agent.prompt("again");
  assert.equal(msgText(agent.state.messages.at(-1)), "fine");
  assert.equal(agent.state.errorMessage, undefined);
});

test("A-5.6.1 a listener subscribed during a failure event hears that event: the failure events walk the live Set too", T, async () => {
  const agent = makeAgent(createFaux([]));
  const log = [];
  let thrown = false;
  let added = false;
  agent.subscribe((e) => {
    if (e.type === "message_end" && e.message.role === "user" && !thrown) {
      thrown = true;
      throw new Error("listener boom");
    }
  });
  agent.subscribe(async (e) => {
    log.push(`B:${e.type}`);
    if (thrown && !added) {
      added = true;
      agent.subscribe((e2) => log.push(`C:${e2.type}`));
    }
    await sleep(1);
  });
  await agent.prompt("hi");
  // The user's message_end failed at the first listener, so B never heard it; the failure events follow.
  assert.deepEqual(log, [
    "B:agent_start", "B:turn_start", "B:message_start", "B:message_start", "C:message_start",
    "B:message_end", "C:message_end", "B:turn_end", "C:turn_end", "B:agent_end", "C:agent_end",
  ]);
  assert.equal(agent.state.errorMessage, "listener boom");
});

test("A-5.6.1 a listener aborts then throws: the failure message has stopReason aborted, the state model", T, async () => {
  const faux = createFaux([assistant("never")]);
  const m = model({ id: "other-model", api: "other-api", provider: "other-provider" });
  const agent = makeAgent(faux, { initialState: { model: m } });
  const rec = record(agent);
  let thrown = false;
  agent.subscribe((e) => {
    if (e.type === "turn_start" && !thrown) {
      thrown = true;
      agent.abort();
      throw "plain string failure";
    }
  });
  await agent.prompt("hi");
  assert.equal(faux.calls.length, 0);
  assert.deepEqual(withTs0(agent.state.messages.at(-1)), failure("plain string failure", "aborted", m));
  assert.equal(agent.state.errorMessage, "plain string failure");
  assert.deepEqual(rec.labels().slice(-4), ["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
});

test("A-5.6.2 (deviation) listener errors during the failure events are swallowed; the run becomes idle", deviation("A-5.6.2"), async () => {
  const faux = createFaux([assistant("never")]);
  const agent = makeAgent(faux);
  const rec = record(agent);
  const off = agent.subscribe((e) => {
    throw new Error(`always fails on ${e.type}`);
  });
  let rejected = false;
  await agent.prompt("hi").catch(() => (rejected = true));
  assert.equal(rejected, false);
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.signal, undefined);
  assert.equal(agent.state.errorMessage, "always fails on agent_start");
  assert.deepEqual(rec.labels(), ["agent_start", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
  assert.deepEqual(withTs0(agent.state.messages.at(-1)), failure("always fails on agent_start"));
  assert.equal(faux.calls.length, 0);
  off();
  await agent.prompt("again");
  assert.equal(msgText(agent.state.messages.at(-1)), "never");
});

// ---------------------------------------------------------------------------------------------
// E-8.4.3 re-entrancy
// ---------------------------------------------------------------------------------------------

const SITES = [
  "listener",
  "execute",
  "beforeToolCall",
  "afterToolCall",
  "finishTurn",
  "prepareNextTurn",
  "prepareRequest",
  "convertToLlm",
  "streamFn",
];

/** An agent whose callbacks call `poke(site)` (once per site); tool turn, then text. */
function reentrantAgent(site, poke) {
  let toolCalled = false;
  const reply = (ctx) => {
    if (!toolCalled) {
      toolCalled = true;
      return assistant(toolCall("c1", "t", {}));
    }
    return assistant(`done after ${ctx.messages.length}`);
  };
  const faux = createFaux(Array.from({ length: 12 }, () => reply));
  let done = false;
  const at = async (where) => {
    if (where === site && !done) {
      done = true;
      await poke();
    }
  };
  const t = tool("t", async () => {
    await at("execute");
    return okResult("t ok");
  });
  let agent;
  agent = makeAgent(faux, {
    initialState: { tools: [t] },
    beforeToolCall: async () => {
      await at("beforeToolCall");
      return undefined;
    },
    afterToolCall: async () => {
      await at("afterToolCall");
      return undefined;
    },
    finishTurn: async () => {
      await at("finishTurn");
      return undefined;
    },
    prepareNextTurnWithContext: async () => {
      await at("prepareNextTurn");
      return undefined;
    },
    prepareRequest: async () => {
      await at("prepareRequest");
      return undefined;
    },
    convertToLlm: async (messages) => {
      await at("convertToLlm");
      return messages.filter((m) => ["system", "user", "assistant", "toolResult"].includes(m.role));
    },
    streamFn: async (m, c, o) => {
      await at("streamFn");
      return faux.streamFn(m, c, o);
    },
  });
  agent.subscribe(async (e) => {
    if (e.type === "message_update") await at("listener");
  });
  return { agent, faux, reached: () => done };
}

const aux = tool("aux", async () => okResult("aux ok"));

for (const site of SITES) {
  test(`E-8.4.3 re-entrancy from ${site}: steer, followUp, prompt (rejects), continue (rejects), reset (throws), snapshot, runToolCall`, T, async () => {
    const problems = [];
    let snapshotted;
    const check = async (what, fn) => {
      try {
        await fn();
      } catch (err) {
        problems.push(`${what}: ${err?.message ?? err}`);
      }
    };
    let agentRef;
    const poke = async () => {
      const agent = agentRef;
      await check("steer", () => agent.steer(userMessage(`steer from ${site}`)));
      await check("followUp", () => agent.followUp(userMessage(`follow from ${site}`)));
      await check("prompt", () => assert.rejects(agent.prompt("nested"), { message: PROMPT_BUSY }));
      await check("continue", () => assert.rejects(agent.continue(), { message: CONTINUE_BUSY }));
      await check("reset", () => assert.throws(() => agent.reset(), { message: RESET_BUSY }));
      await check("state", () => {
        assert.equal(agent.state.isStreaming, true);
        assert.ok(agent.signal instanceof AbortSignal);
        assert.ok(agent.hasQueuedMessages());
        assert.ok(agent.peekQueuedMessages().length >= 1);
      });
      if (!IS_REFERENCE) {
        await check("snapshot", () => {
          snapshotted = agent.snapshot();
          assert.equal(snapshotted.format, "agent-loop-wasm/agent-snapshot");
        });
      }
      await check("runToolCall", async () => {
        const outcome = await runToolCall(toolCall("x1", "aux", {}), {
          tools: [aux],
          assistantMessage: assistant(toolCall("x1", "aux", {})),
          context: { messages: [], tools: [aux] },
        });
        assert.equal(outcome.isError, false);
        assert.equal(firstText(outcome.result), "aux ok");
      });
    };
    const { agent, faux, reached } = reentrantAgent(site, poke);
    agentRef = agent;
    const rec = record(agent);
    await agent.prompt("go");
    assert.ok(reached(), `${site} was reached`);
    assert.deepEqual(problems, []);
    assert.equal(rec.ofType("agent_start").length, 1);
    assert.equal(rec.ofType("agent_end").length, 1);
    assert.equal(rec.events.at(-1).type, "agent_end");
    assert.equal(agent.state.isStreaming, false);
    assert.equal(agent.state.messages.at(-1).role, "assistant");
    assert.equal(agent.state.messages.at(-1).stopReason, "stop");
    // The steering and follow-up messages were delivered by the same run.
    const texts = agent.state.messages.map(msgText);
    assert.ok(texts.includes(`steer from ${site}`));
    assert.ok(texts.includes(`follow from ${site}`));
    assert.ok(!texts.includes("nested"));
    assert.equal(agent.hasQueuedMessages(), false);
    if (!IS_REFERENCE) assert.ok(snapshotted && Array.isArray(snapshotted.messages));
    // Usable for a next prompt.
    const before = faux.calls.length;
    await agent.prompt("next");
    assert.equal(faux.calls.length, before + 1);
    assert.equal(agent.state.messages.at(-1).stopReason, "stop");
    assert.equal(agent.state.isStreaming, false);
  });

  test(`E-8.4.3 re-entrancy from ${site}: abort() ends the run normally; the agent stays usable`, T, async () => {
    let agentRef;
    const { agent, faux, reached } = reentrantAgent(site, async () => {
      agentRef.steer(userMessage("steer before abort"));
      agentRef.abort();
    });
    agentRef = agent;
    const rec = record(agent);
    await agent.prompt("go");
    assert.ok(reached(), `${site} was reached`);
    assert.equal(rec.ofType("agent_start").length, 1);
    assert.equal(rec.ofType("agent_end").length, 1);
    assert.equal(rec.events.at(-1).type, "agent_end");
    assert.equal(agent.state.isStreaming, false);
    assert.equal(agent.signal, undefined);
    if (!IS_REFERENCE && site !== "streamFn") {
      // D2: no request starts with an aborted signal.
      assert.ok(faux.calls.every((c) => !c.signalAbortedAtCall));
    }
    agent.clearAllQueues();
    const before = faux.calls.length;
    await agent.prompt("next");
    // (1 request, or 2 if the abort came before the scripted tool turn was consumed.)
    assert.ok(faux.calls.length > before);
    assert.equal(agent.state.messages.at(-1).stopReason, "stop");
    assert.equal(agent.state.isStreaming, false);
  });
}
