// Agent snapshots (SPEC §7 D8, §5.7): agent.snapshot(), Agent.restore(), SNAPSHOT_VERSION.
// D8 is new in this library: every test is skipped against the reference.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, SNAPSHOT_VERSION } from "./impl.mjs";
import { assistant, createFaux, model, okResult, tool, toolCall, userMessage } from "./faux.mjs";
import { deviation, makeAgent, record, roles, msgText, toolViews, userTexts, normalize, decl } from "./agent-helpers.mjs";

const D8 = deviation("D8 (snapshots are new)");
const FORMAT = "agent-loop-wasm/agent-snapshot";
const KEYS = [
  "format",
  "version",
  "model",
  "thinkingLevel",
  "messages",
  "steeringQueue",
  "followUpQueue",
  "steeringMode",
  "followUpMode",
  "sessionId",
  "toolNames",
];
const json = (v) => JSON.parse(JSON.stringify(v));
const toolResult = (id, name, extra = {}) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text: `${name} ok` }],
  details: {},
  isError: false,
  timestamp: 3,
  ...extra,
});

/** A hand-written, valid version-1 snapshot. */
function sampleSnapshot(overrides = {}) {
  return {
    format: FORMAT,
    version: 1,
    model: model({ id: "faux-restored" }),
    thinkingLevel: "high",
    messages: [userMessage("q", 1), assistant("a")],
    steeringQueue: [userMessage("s", 2)],
    followUpQueue: [userMessage("f", 3)],
    steeringMode: "all",
    followUpMode: "one-at-a-time",
    sessionId: "sid-1",
    toolNames: ["t"],
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// D8.1 snapshot()
// ---------------------------------------------------------------------------------------------

test("D8.1 SNAPSHOT_VERSION is 1", D8, () => {
  assert.equal(SNAPSHOT_VERSION, 1);
});

test("D8.1 snapshot(): exact shape, values, JSON-compatible deep copy", D8, async () => {
  const a = tool("a");
  const b = tool("b");
  const m = model({ id: "faux-snap" });
  const faux = createFaux([assistant(toolCall("c1", "a", {})), assistant("done")]);
  const agent = makeAgent(faux, {
    initialState: { systemPrompt: "sys", model: m, thinkingLevel: "high", tools: [a, b] },
    sessionId: "sess",
    steeringMode: "all",
  });
  await agent.prompt("go");
  agent.steer(userMessage("s"));
  agent.followUp(userMessage("f"));
  const snap = agent.snapshot();
  assert.deepEqual(Object.keys(snap).sort(), [...KEYS].sort());
  assert.equal(snap.format, FORMAT);
  assert.equal(snap.version, 1);
  assert.deepEqual(snap.model, m);
  assert.equal(snap.thinkingLevel, "high");
  assert.deepEqual(snap.messages, json(agent.state.messages));
  assert.deepEqual(roles(snap.messages), ["system", "user", "assistant", "toolResult", "assistant"]);
  assert.deepEqual(snap.steeringQueue, [json(userMessage("s", snap.steeringQueue[0].timestamp))]);
  assert.deepEqual(snap.followUpQueue.map(msgText), ["f"]);
  assert.equal(snap.steeringMode, "all");
  assert.equal(snap.followUpMode, "one-at-a-time");
  assert.equal(snap.sessionId, "sess");
  assert.deepEqual(snap.toolNames, ["a", "b"]);
  // JSON-compatible.
  assert.deepEqual(json(snap), snap);
  // Deep copy: no shared objects either way.
  assert.notEqual(snap.messages, agent.state.messages);
  assert.notEqual(snap.messages[1], agent.state.messages[1]);
  assert.notEqual(snap.model, agent.state.model);
  snap.messages[1].content = "changed";
  snap.messages.push(userMessage("extra"));
  snap.model.id = "changed";
  snap.steeringQueue.length = 0;
  assert.equal(msgText(agent.state.messages[1]), "go");
  assert.equal(agent.state.messages.length, 5);
  assert.equal(agent.state.model.id, "faux-snap");
  assert.deepEqual(agent.peekQueuedMessages().map(msgText), ["s"]);
  const again = agent.snapshot();
  agent.state.messages[1].content = "mutated later";
  assert.equal(msgText(again.messages[1]), "go");
  // The agent still works after snapshotting.
  assert.equal(agent.state.isStreaming, false);
});

test("D8.1 snapshot(): sessionId omitted when undefined; undefined fields dropped; defaults", D8, () => {
  const agent = makeAgent([], {
    initialState: { messages: [{ role: "user", content: "x", timestamp: 1, extra: undefined, nested: { a: 1, b: undefined } }] },
  });
  const snap = agent.snapshot();
  assert.equal("sessionId" in snap, false);
  assert.deepEqual(snap.messages, [{ role: "user", content: "x", timestamp: 1, nested: { a: 1 } }]);
  assert.equal("extra" in snap.messages[0], false);
  assert.deepEqual(snap.steeringQueue, []);
  assert.deepEqual(snap.followUpQueue, []);
  assert.equal(snap.steeringMode, "one-at-a-time");
  assert.equal(snap.followUpMode, "one-at-a-time");
  assert.equal(snap.thinkingLevel, "off");
  assert.deepEqual(snap.toolNames, []);
  assert.deepEqual(Object.keys(snap).sort(), KEYS.filter((k) => k !== "sessionId").sort());
});

test("D8.1 snapshot() during streaming holds committed messages only (no streamingMessage)", D8, async () => {
  const faux = createFaux([assistant("streaming text here")]);
  const agent = makeAgent(faux);
  const snaps = [];
  agent.subscribe((e) => {
    if (e.type === "message_update" && snaps.length === 0) {
      assert.ok(agent.state.streamingMessage);
      snaps.push({ snap: agent.snapshot(), committed: agent.state.messages.length });
    }
  });
  await agent.prompt("hi");
  assert.equal(snaps.length, 1);
  assert.equal(snaps[0].committed, 1);
  assert.deepEqual(roles(snaps[0].snap.messages), ["user"]);
  assert.deepEqual(roles(agent.snapshot().messages), ["user", "assistant"]);
});

/** [system, user, assistant(toolCall), toolResult with `details`] — the toolResult is messages[3]. */
function agentWithDetails(details) {
  return makeAgent([], {
    initialState: {
      systemPrompt: "sys",
      messages: [userMessage("q", 1), assistant(toolCall("c1", "t", {})), toolResult("c1", "t", { details })],
    },
  });
}

test("D8.1 snapshot(): a function value throws TypeError 'Agent.snapshot: messages[3].details.fn is not JSON-serializable'", D8, () => {
  const agent = agentWithDetails({ ok: 1, fn: () => 1 });
  assert.equal(agent.state.messages[3].role, "toolResult");
  assert.throws(() => agent.snapshot(), {
    name: "TypeError",
    message: "Agent.snapshot: messages[3].details.fn is not JSON-serializable",
  });
  // Nothing changed; fixing the value makes it work.
  assert.equal(agent.state.messages.length, 4);
  delete agent.state.messages[3].details.fn;
  assert.deepEqual(agent.snapshot().messages[3].details, { ok: 1 });
});

test("D8.1 snapshot(): BigInt and symbol values, array elements and queue entries are named by path", D8, () => {
  assert.throws(() => agentWithDetails({ n: 10n }).snapshot(), {
    name: "TypeError",
    message: "Agent.snapshot: messages[3].details.n is not JSON-serializable",
  });
  assert.throws(() => agentWithDetails({ s: Symbol("x") }).snapshot(), {
    name: "TypeError",
    message: "Agent.snapshot: messages[3].details.s is not JSON-serializable",
  });
  assert.throws(() => agentWithDetails({ list: [1, () => 2] }).snapshot(), {
    name: "TypeError",
    message: "Agent.snapshot: messages[3].details.list[1] is not JSON-serializable",
  });
  const agent = makeAgent([]);
  agent.steer({ role: "user", content: "s", timestamp: 1, details: { fn() {} } });
  assert.throws(() => agent.snapshot(), {
    name: "TypeError",
    message: "Agent.snapshot: steeringQueue[0].details.fn is not JSON-serializable",
  });
});

test("D8.1 snapshot(): a cycle throws TypeError naming its path", D8, () => {
  const details = { a: 1 };
  details.self = details;
  const agent = agentWithDetails(details);
  assert.throws(
    () => agent.snapshot(),
    (err) =>
      err instanceof TypeError &&
      /^Agent\.snapshot: messages\[3\]\.details(\.self)? is not JSON-serializable$/.test(err.message),
  );
});

test("D8.1 snapshot(): a shared (non-cyclic) object is not a cycle", D8, () => {
  const shared = { v: 1 };
  const agent = agentWithDetails({ a: shared, b: shared });
  assert.deepEqual(agent.snapshot().messages[3].details, { a: { v: 1 }, b: { v: 1 } });
});

// ---------------------------------------------------------------------------------------------
// D8.2 restore()
// ---------------------------------------------------------------------------------------------

test("D8.2 Agent.restore(object): idle; transcript verbatim; model, level, queues, modes, sessionId restored", D8, async () => {
  const t = tool("t");
  const snap = sampleSnapshot();
  const original = json(snap);
  const faux = createFaux([assistant("r1"), assistant("r2")]);
  const agent = Agent.restore(snap, { streamFn: faux.streamFn, tools: [t] });
  assert.ok(agent instanceof Agent);
  assert.deepEqual(snap, original, "the snapshot is not mutated");
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.signal, undefined);
  assert.deepEqual(json(agent.state.messages), original.messages, "no system message inserted");
  assert.deepEqual(agent.state.model, original.model);
  assert.equal(agent.state.thinkingLevel, "high");
  assert.equal(agent.steeringMode, "all");
  assert.equal(agent.followUpMode, "one-at-a-time");
  assert.equal(agent.sessionId, "sid-1");
  assert.deepEqual(
    agent.state.tools.map((x) => x.name),
    ["t"],
  );
  assert.equal(agent.state.tools[0], t);
  assert.deepEqual(agent.peekQueuedMessages().map(msgText), ["s"]);
  // No sharing with the snapshot.
  snap.messages[0].content = "changed";
  snap.steeringQueue.push(userMessage("x"));
  assert.equal(msgText(agent.state.messages[0]), "q");
  assert.deepEqual(agent.peekQueuedMessages().map(msgText), ["s"]);
  // The restored agent runs: assistant tail → steering batch, then the follow-up; tools declared on the next request.
  const rec = record(agent);
  await agent.continue();
  assert.equal(faux.calls.length, 2);
  assert.equal(faux.calls[0].model.id, "faux-restored");
  assert.equal(faux.calls[0].options.reasoning, "high");
  assert.equal(faux.calls[0].options.sessionId, "sid-1");
  assert.deepEqual(toolViews(faux.calls[0]), ["+t"]);
  assert.deepEqual(userTexts(faux.calls[0]), ["q", "s"]);
  assert.deepEqual(userTexts(faux.calls[1]), ["q", "s", "f"]);
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant", "system", "user", "assistant", "user", "assistant"]);
  assert.equal(rec.events.at(-1).type, "agent_end");
});

test("D8.2 Agent.restore(jsonText) equals restore(object); restore(snapshot()) round-trips the snapshot", D8, () => {
  const t = tool("t");
  const snap = sampleSnapshot();
  const fromText = Agent.restore(JSON.stringify(snap), { tools: [t] });
  const fromObject = Agent.restore(snap, { tools: [t] });
  assert.deepEqual(fromText.snapshot(), fromObject.snapshot());
  assert.deepEqual(fromObject.snapshot(), json(snap));
  const noSession = sampleSnapshot();
  delete noSession.sessionId;
  const restored = Agent.restore(noSession, { tools: [t] });
  assert.equal(restored.sessionId, undefined);
  assert.equal("sessionId" in restored.snapshot(), false);
});

test("D8.2 restore() returns an instance of the class it is called on; options become fields", D8, async () => {
  let constructed = 0;
  class MyAgent extends Agent {
    constructor(options) {
      super(options);
      constructed++;
    }
    hello() {
      return "hi";
    }
  }
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("never")]);
  const finishTurn = () => ({ action: "end" });
  const t = tool("t");
  const agent = MyAgent.restore(JSON.stringify(sampleSnapshot({ steeringQueue: [], followUpQueue: [] })), {
    streamFn: faux.streamFn,
    tools: [t],
    finishTurn,
    toolExecution: "sequential",
  });
  assert.ok(agent instanceof MyAgent);
  assert.ok(agent instanceof Agent);
  assert.equal(agent.hello(), "hi");
  assert.equal(constructed, 1);
  assert.equal(agent.finishTurn, finishTurn);
  assert.equal(agent.toolExecution, "sequential");
  assert.equal(agent.streamFunction, faux.streamFn);
  agent.state.messages.push(userMessage("next"));
  await agent.continue();
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(roles(agent.state.messages).slice(-3), ["system", "assistant", "toolResult"]);
  assert.equal(agent.state.messages.at(-1).isError, false);
});

test("D8.3 restore errors: not a snapshot", D8, () => {
  for (const bad of [{}, { format: "something-else", version: 1 }, { ...sampleSnapshot(), format: undefined }, [], "[1]", "42", "null"]) {
    assert.throws(
      () => Agent.restore(bad),
      (err) => err instanceof Error && err.message === "Agent.restore: not an agent-loop-wasm snapshot",
      `input ${JSON.stringify(bad)}`,
    );
  }
});

test("D8.3 restore errors: newer and unknown versions", D8, () => {
  assert.throws(() => Agent.restore(sampleSnapshot({ version: 2 })), {
    message: "Agent.restore: snapshot version 2 is newer than this library supports (1)",
  });
  assert.throws(() => Agent.restore(JSON.stringify(sampleSnapshot({ version: 17 }))), {
    message: "Agent.restore: snapshot version 17 is newer than this library supports (1)",
  });
  assert.throws(() => Agent.restore(sampleSnapshot({ version: 0 })), {
    message: "Agent.restore: unknown snapshot version 0",
  });
  assert.throws(() => Agent.restore(sampleSnapshot({ version: -1 })), {
    message: "Agent.restore: unknown snapshot version -1",
  });
  assert.throws(() => Agent.restore(sampleSnapshot({ version: 1.5 })), {
    message: "Agent.restore: unknown snapshot version 1.5",
  });
});

test("D8.3 restore errors: invalid snapshot names the path and problem", D8, () => {
  const snap = sampleSnapshot({
    messages: [userMessage("q", 1), assistant("a"), { role: 7, content: "x", timestamp: 1 }],
  });
  const before = json(snap);
  assert.throws(() => Agent.restore(snap), {
    message: "Agent.restore: invalid snapshot: messages[2].role: expected a string",
  });
  assert.throws(() => Agent.restore(JSON.stringify(snap)), {
    message: "Agent.restore: invalid snapshot: messages[2].role: expected a string",
  });
  assert.deepEqual(snap, before, "nothing mutated");
  // Other fields are checked too (problem texts not fixed by the spec: prefix and path only).
  const cases = [
    [{ messages: "nope" }, "messages"],
    [{ steeringQueue: [{ content: "no role" }] }, "steeringQueue[0]"],
    [{ followUpMode: "bogus" }, "followUpMode"],
    [{ model: 5 }, "model"],
  ];
  for (const [override, path] of cases) {
    assert.throws(
      () => Agent.restore(sampleSnapshot(override)),
      (err) => err instanceof Error && err.message.startsWith(`Agent.restore: invalid snapshot: ${path}`),
      path,
    );
  }
});

test("D8.3 restore errors: invalid JSON text", D8, () => {
  for (const text of ["{not json", "", '{"format": '])
    assert.throws(
      () => Agent.restore(text),
      (err) =>
        err instanceof Error &&
        err.message.startsWith("Agent.restore: snapshot is not valid JSON: ") &&
        err.message.length > "Agent.restore: snapshot is not valid JSON: ".length,
      JSON.stringify(text),
    );
});

test("D8.3 nothing is applied partly: a failed restore constructs no agent and leaves the input intact", D8, () => {
  let constructed = 0;
  class Counting extends Agent {
    constructor(options) {
      super(options);
      constructed++;
    }
  }
  const snap = sampleSnapshot({ followUpQueue: [userMessage("ok"), { role: null }] });
  const before = json(snap);
  assert.throws(() => Counting.restore(snap), (err) => err.message.startsWith("Agent.restore: invalid snapshot: followUpQueue[1]"));
  assert.equal(constructed, 0);
  assert.deepEqual(json(snap), before);
  // Two restores of one snapshot are independent.
  const good = sampleSnapshot();
  const x = Agent.restore(good);
  const y = Agent.restore(good);
  x.state.messages.push(userMessage("only x"));
  x.clearAllQueues();
  assert.equal(y.state.messages.length, 2);
  assert.equal(y.hasQueuedMessages(), true);
});

// ---------------------------------------------------------------------------------------------
// Round trip mid-conversation
// ---------------------------------------------------------------------------------------------

for (const scenario of ["assistant tail with queued steering and follow-up", "toolResult tail after finishTurn end"]) {
  test(`D8 round trip (${scenario}): restore then continue() sends the same provider requests as the original`, D8, async () => {
    const t = tool("t", async () => okResult("t ok"));
    const endFirst = scenario.startsWith("toolResult");
    const firstRun = endFirst ? [assistant(toolCall("c1", "t", { v: 1 }))] : [assistant(toolCall("c1", "t", { v: 1 })), assistant("done")];
    const later = () => [assistant(toolCall("c2", "t", { v: 2 })), assistant("r1"), assistant("r2"), assistant("r3")];
    const fauxA = createFaux([...firstRun, ...later()]);
    const original = makeAgent(fauxA, {
      initialState: { systemPrompt: "sys", tools: [t], thinkingLevel: "low" },
      sessionId: "sid",
      steeringMode: "all",
      finishTurn: endFirst ? () => ({ action: "end" }) : undefined,
    });
    await original.prompt("go");
    original.finishTurn = undefined;
    if (endFirst) assert.equal(original.state.messages.at(-1).role, "toolResult");
    else assert.equal(original.state.messages.at(-1).role, "assistant");
    original.steer(userMessage("s1", 10));
    original.steer(userMessage("s2", 11));
    original.followUp(userMessage("f1", 12));
    const text = JSON.stringify(original.snapshot());
    const requestsBefore = fauxA.calls.length;

    const fauxB = createFaux(later());
    const restored = Agent.restore(text, { streamFn: fauxB.streamFn, tools: [t] });
    assert.deepEqual(json(restored.state.messages), json(original.state.messages));

    await original.continue();
    await restored.continue();
    const a = fauxA.calls.slice(requestsBefore);
    const b = fauxB.calls;
    assert.ok(a.length >= 2);
    assert.equal(b.length, a.length);
    for (let i = 0; i < a.length; i++) {
      assert.deepEqual(normalize(b[i].messages), normalize(a[i].messages), `request ${i + 1}`);
      assert.equal(b[i].model.id, a[i].model.id);
      assert.equal(b[i].options.reasoning, a[i].options.reasoning);
      assert.equal(b[i].options.sessionId, a[i].options.sessionId);
    }
    assert.deepEqual(normalize(restored.state.messages), normalize(original.state.messages));
    assert.deepEqual(normalize(restored.snapshot()), normalize(original.snapshot()));
  });
}

test("D8.2 restore with different tools: the difference is declared before the next request", D8, async () => {
  const a = tool("a");
  const b = tool("b");
  const faux = createFaux([assistant("one")]);
  const agent = makeAgent(faux, { initialState: { tools: [a] } });
  await agent.prompt("go");
  const snap = agent.snapshot();
  assert.deepEqual(snap.toolNames, ["a"]);
  const fauxB = createFaux([assistant("two")]);
  const restored = Agent.restore(snap, { streamFn: fauxB.streamFn, tools: [b] });
  await restored.prompt("again");
  const systems = restored.state.messages.filter((m) => m.role === "system");
  assert.equal(systems.length, 2);
  assert.deepEqual(systems[1].toolsAdded, [decl(b)]);
  assert.deepEqual(systems[1].toolsRemoved, [{ name: "a" }]);
  assert.deepEqual(toolViews(fauxB.calls[0]), ["+a", "+b", "-a"]);
});
