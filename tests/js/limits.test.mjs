// Usage totals and limits (issue 32, SPEC L-3.12, A-5.9) on the built package: agentLoop / runAgentLoop with
// `config.limits` (exact events, `agent_end.limitReached`, the refused batch's results, `stream.totalUsage()`,
// `totalUsage(messages)`), the Agent's `state.totalUsage` / `runUsage` / `limitReached`, raise-and-continue with the
// queue kept, `totalLimits`, snapshots and checkpoints, and the TypeErrors for bad values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, IS_REFERENCE, agentLoop, agentLoopContinue, runAgentLoop } from "./impl.mjs";
import { assistant, collect, config, createFaux, firstText, model, text, toolCall, userMessage, withVirtualClock } from "./faux.mjs";
import { makeAgent, record } from "./agent-helpers.mjs";

// Limits and totals are new in this library: pi-agent-core 1.6.0 has neither.
const T = { timeout: 10_000, skip: IS_REFERENCE && "usage totals and limits (issue 32) are not in pi-agent-core 1.6.0" };
const pkg = IS_REFERENCE ? {} : await import("../../pkg/dist/node/index.mjs");

const usage = (tokens, cost) => ({
  input: tokens / 2,
  output: tokens / 2,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: tokens,
  cost: { input: cost / 2, output: cost / 2, cacheRead: 0, cacheWrite: 0, total: cost },
});
const calls = (ids, tokens, cost) =>
  assistant(ids.map((id) => toolCall(id, "work", {})), { stopReason: "toolUse", usage: usage(tokens, cost) });
const answer = (s, tokens, cost) => assistant([text(s)], { usage: usage(tokens, cost) });
const work = (ran = []) => ({
  name: "work",
  label: "work",
  description: "work tool",
  parameters: { type: "object" },
  async execute(id) {
    ran.push(id);
    return { content: [text("done")], details: {} };
  },
});
const plain = (labels) => labels.filter((l) => !l.startsWith("message_update"));
const HEAD = ["agent_start", "turn_start", "message_start:system", "message_end:system", "message_start:user", "message_end:user"];
const turn = (ids, { first = false } = {}) => [
  ...(first ? [] : ["turn_start"]),
  "message_start:assistant", "message_end:assistant",
  ...ids.map((id) => `tool_execution_start:${id}`),
  ...ids.map((id) => `tool_execution_end:${id}`),
  ...ids.flatMap(() => ["message_start:toolResult", "message_end:toolResult"]),
  "turn_end",
];
const refused = (ids) => [
  "turn_start", "message_start:assistant", "message_end:assistant",
  ...ids.flatMap((id) => [`tool_execution_start:${id}`, `tool_execution_end:${id}`, "message_start:toolResult", "message_end:toolResult"]),
  "turn_end",
];
const totals = (tokens, cost) => ({
  input: tokens / 2, output: tokens / 2, cacheRead: 0, cacheWrite: 0, totalTokens: tokens,
  cost: { input: cost / 2, output: cost / 2, cacheRead: 0, cacheWrite: 0, total: cost },
});

test("L-3.12.6 a cost limit on a model without prices stops at the first reply with tokens, uncounted: true; the Agent's state says why", T, async () => {
  const ran = [];
  const faux = createFaux([calls(["a"], 10, 0), answer("never", 0, 0)]);
  const run = await collect(agentLoop([userMessage("go")], { messages: [], tools: [work(ran)] },
    config({ limits: { maxCostUsd: 0.5 } }), undefined, faux.streamFn));
  assert.deepEqual(plain(run.labels()), [...HEAD, ...refused(["a"]).slice(1), "agent_end"]);
  const stop = 'Run stopped: cost limit of $0.50 cannot be checked: model "faux-1" has no prices (set model.cost)';
  assert.deepEqual(run.ofType("agent_end")[0].limitReached,
    { limit: "maxCostUsd", scope: "run", max: 0.5, value: 0, message: stop, uncounted: true });
  assert.deepEqual(ran, []);
  assert.equal(faux.calls.length, 1);
  // The Agent, its agent-wide limit, a priced model whose stream function fills in no cost.
  const priced = { cost: { input: 0.15, output: 0.6, cacheRead: 0, cacheWrite: 0 } };
  const agent = makeAgent([calls(["a"], 10, 0), answer("never", 0, 0)],
    { initialState: { tools: [work()], model: model(priced) }, totalLimits: { maxCostUsd: 5 } });
  await agent.prompt("go");
  assert.deepEqual(agent.state.limitReached, {
    limit: "maxCostUsd", scope: "agent", max: 5, value: 0, uncounted: true,
    message: 'Run stopped: agent cost limit of $5.00 cannot be checked: a reply of model "faux-1" reported tokens but no cost',
  });
  assert.equal(agent.state.errorMessage, agent.state.limitReached.message);
});

test("L-3.12.4 agentLoop: a cost limit before a batch gives each call one error result naming it, agent_end.limitReached, stream.totalUsage()", T, async () => {
  const ran = [];
  const faux = createFaux([calls(["a"], 10, 0.25), calls(["b", "c"], 10, 0.25), answer("never", 0, 0)]);
  const stream = agentLoop([userMessage("go")], { messages: [], tools: [work(ran)] },
    config({ limits: { maxCostUsd: 0.5 } }), undefined, faux.streamFn);
  const run = await collect(stream);
  assert.deepEqual(plain(run.labels()), [...HEAD, ...turn(["a"], { first: true }), ...refused(["b", "c"]), "agent_end"]);
  const stop = "Run stopped: cost limit of $0.50 reached ($0.50 spent)";
  const end = run.ofType("agent_end")[0];
  assert.deepEqual(Object.keys(end), ["type", "messages", "limitReached"]);
  assert.deepEqual(end.limitReached, { limit: "maxCostUsd", scope: "run", max: 0.5, value: 0.5, message: stop });
  assert.deepEqual(ran, ["a"]);
  assert.equal(faux.calls.length, 2);
  const results = run.result.filter((m) => m.role === "toolResult");
  assert.deepEqual(results.map((m) => [m.toolCallId, firstText(m), m.isError]), [
    ["a", "done", false],
    ["b", `Tool call "work" was not executed: ${stop}`, true],
    ["c", `Tool call "work" was not executed: ${stop}`, true],
  ]);
  for (const id of ["b", "c"]) {
    const e = run.ofType("tool_execution_end").find((x) => x.toolCallId === id);
    assert.deepEqual(Object.keys(e), ["type", "toolCallId", "toolName", "result", "isError"]);
  }
  assert.deepEqual(await stream.totalUsage(), totals(20, 0.5));
  assert.deepEqual(pkg.totalUsage(run.result), totals(20, 0.5));
});

test("L-3.12.3 runAgentLoop: a turn limit stops before the next request, polls no queue, and the result ends with the tool result", T, async () => {
  let polls = 0;
  const steering = [userMessage("later")];
  const faux = createFaux([calls(["a"], 4, 0), calls(["b"], 4, 0), answer("never", 0, 0)]);
  const events = [];
  const messages = await runAgentLoop([userMessage("go")], { messages: [], tools: [work()] },
    config({
      limits: { maxTurns: 2 },
      getSteeringMessages: async () => {
        polls++;
        return polls > 3 ? steering.splice(0) : [];
      },
    }),
    (e) => { events.push(e); }, undefined, faux.streamFn);
  assert.equal(faux.calls.length, 2);
  assert.deepEqual(events.at(-1).limitReached,
    { limit: "maxTurns", scope: "run", max: 2, value: 2, message: "Run stopped: turn limit of 2 reached" });
  assert.equal(messages.at(-1).role, "toolResult");
  assert.equal(polls, 3, "S0, S1 and S2 around turn 1; none after the stop");
  assert.equal(steering.length, 1, "the queue keeps its message");
  assert.deepEqual(pkg.totalUsage(messages), totals(8, 0));
});

test("L-3.12.4 agentLoopContinue with a raised limit goes on from the refused batch: the model sees the errors", T, async () => {
  const ran = [];
  const faux = createFaux([calls(["a", "b"], 0, 0), calls(["c"], 0, 0), answer("done", 0, 0)]);
  const context = { messages: [userMessage("go")], tools: [work(ran)] };
  const first = await collect(agentLoopContinue(context, config({ limits: { maxToolCalls: 1 } }), undefined, faux.streamFn));
  const stop = "Run stopped: tool call limit of 1 reached (0 run, 2 more requested)";
  assert.deepEqual(first.ofType("agent_end")[0].limitReached,
    { limit: "maxToolCalls", scope: "run", max: 1, value: 2, message: stop });
  assert.deepEqual(first.ofType("tool_execution_end").map((e) => [e.toolCallId, e.isError, firstText(e.result)]), [
    ["a", true, `Tool call "work" was not executed: ${stop}`],
    ["b", true, `Tool call "work" was not executed: ${stop}`],
  ]);
  assert.equal(context.messages.length, 1, "D6: the caller's array is untouched");
  const next = await collect(agentLoopContinue({ ...context, messages: [...context.messages, ...first.result] },
    config({ limits: { maxToolCalls: 10 } }), undefined, faux.streamFn));
  assert.deepEqual(ran, ["c"]);
  assert.equal(next.ofType("agent_end")[0].limitReached, undefined);
  assert.equal(firstText(next.result.at(-1)), "done");
  // The second request carried the refused calls' error results.
  assert.deepEqual(faux.calls[1].messages.filter((m) => m.role === "toolResult").map((m) => m.isError), [true, true]);
});

test("L-3.12.3/L-3.12.4 on the built package: a token limit refuses the batch, a time limit stops before the next request", T, async () => {
  // maxTokens: the reply that passes it asks for tools, so its batch is refused (L-3.12.4).
  const ran = [];
  let faux = createFaux([calls(["a"], 1200, 0.01), answer("never", 0, 0)]);
  let run = await collect(agentLoop([userMessage("go")], { messages: [], tools: [work(ran)] },
    config({ limits: { maxTokens: 1000 } }), undefined, faux.streamFn));
  assert.deepEqual(plain(run.labels()), [...HEAD, ...refused(["a"]).slice(1), "agent_end"]);
  assert.deepEqual(run.ofType("agent_end")[0].limitReached,
    { limit: "maxTokens", scope: "run", max: 1000, value: 1200, message: "Run stopped: token limit of 1000 reached (1200 tokens used)" });
  assert.deepEqual(ran, []);
  // maxDurationMs, on a virtual clock the tool moves by 61 s: the batch runs, then no second request (L-3.12.3).
  faux = createFaux([calls(["a"], 10, 0.01), answer("never", 0, 0)]);
  run = await withVirtualClock((clock) => {
    const slow = { ...work(ran), execute: async (id) => (clock.advance(61_000), ran.push(id), { content: [text("done")], details: {} }) };
    return collect(agentLoop([userMessage("go")], { messages: [], tools: [slow] },
      config({ limits: { maxDurationMs: 60_000 } }), undefined, faux.streamFn));
  });
  assert.deepEqual(plain(run.labels()), [...HEAD, ...turn(["a"], { first: true }), "agent_end"]);
  assert.deepEqual(run.ofType("agent_end")[0].limitReached,
    { limit: "maxDurationMs", scope: "run", max: 60_000, value: 61_000, message: "Run stopped: time limit of 60000 ms reached (61000 ms elapsed)" });
  assert.deepEqual(ran, ["a"]);
  assert.equal(faux.calls.length, 1);
});

test("L-3.12.3 a reached limit after a final answer ends the run as it would have: no limitReached, events as without limits", T, async () => {
  const run = async (limits) => {
    const faux = createFaux([answer("hi", 2000, 1)]);
    const r = await collect(agentLoop([userMessage("go")], { messages: [] }, config(limits), undefined, faux.streamFn));
    return { labels: r.labels({ updates: true }), end: Object.keys(r.ofType("agent_end")[0]), calls: faux.calls.length };
  };
  const limited = await run({ limits: { maxTokens: 1000 } });
  assert.deepEqual(limited, await run({}));
  assert.deepEqual(limited.end, ["type", "messages"]);
});

test("L-3.12.2 bad limits are TypeErrors naming the field, thrown before any event", T, () => {
  const faux = createFaux([answer("x", 0, 0)]);
  const start = (limits) => agentLoop([userMessage("go")], { messages: [] }, config({ limits }), undefined, faux.streamFn);
  assert.throws(() => start({ maxTurns: 0 }),
    { name: "TypeError", message: "agentLoop: config.limits.maxTurns must be a positive integer or Infinity" });
  assert.throws(() => start({ maxCostUsd: "1" }),
    { name: "TypeError", message: "agentLoop: config.limits.maxCostUsd must be a positive number or Infinity" });
  assert.throws(() => start([]), { name: "TypeError", message: "agentLoop: config.limits must be an object" });
  assert.throws(() => new Agent({ totalLimits: { maxTokens: -5 } }),
    { name: "TypeError", message: "Agent: options.totalLimits.maxTokens must be a positive number or Infinity" });
  assert.throws(() => pkg.totalUsage("x"), { name: "TypeError", message: "totalUsage: messages must be an array" });
  assert.equal(faux.calls.length, 0);
});

test("A-5.9 the Agent: run and total usage, limitReached and errorMessage, raise and continue() with the follow-up kept", T, async () => {
  const faux = createFaux([calls(["a"], 10, 0.1), calls(["b"], 20, 0.2), answer("after", 30, 0.3), answer("final", 6, 0)]);
  const agent = makeAgent(faux, { initialState: { tools: [work()] }, limits: { maxTurns: 2 } });
  assert.deepEqual(agent.state.totalUsage, totals(0, 0));
  assert.equal(agent.state.limitReached, undefined);
  agent.followUp(userMessage("and then"));
  const rec = record(agent);
  await agent.prompt("go");
  const head = HEAD.filter((l) => !l.endsWith(":system")); // the agent's system message is in its initial state
  assert.deepEqual(plain(rec.labels()), [...head, ...turn(["a"], { first: true }), ...turn(["b"]), "agent_end"]);
  assert.equal(agent.state.errorMessage, "Run stopped: turn limit of 2 reached");
  assert.equal(agent.state.limitReached.limit, "maxTurns");
  assert.equal(agent.state.messages.at(-1).role, "toolResult");
  assert.deepEqual(agent.peekQueuedMessages().map(firstText), ["and then"]);
  assert.deepEqual(agent.state.runUsage, totals(30, 0.30000000000000004));
  // A fresh copy each time: the caller cannot change the agent's totals.
  agent.state.totalUsage.totalTokens = 1e9;
  assert.equal(agent.state.totalUsage.totalTokens, 30);

  agent.limits = { maxTurns: 10 };
  await agent.continue();
  assert.equal(agent.state.limitReached, undefined);
  assert.equal(agent.state.errorMessage, undefined);
  assert.equal(agent.hasQueuedMessages(), false);
  assert.deepEqual(agent.state.messages.slice(-3).map(firstText), ["after", "and then", "final"]);
  assert.equal(agent.state.runUsage.totalTokens, 36);
  assert.equal(agent.state.totalUsage.totalTokens, 66);

  agent.reset();
  assert.equal(agent.state.runUsage.totalTokens, 0);
  assert.equal(agent.state.totalUsage.totalTokens, 66);
});

test("A-5.9.2 totalLimits stop a run, then prompt() refuses until they are raised", T, async () => {
  const faux = createFaux([calls(["a"], 10, 0.3), calls(["b"], 10, 0.3), answer("done", 0, 0)]);
  const agent = makeAgent(faux, { initialState: { tools: [work()] }, totalLimits: { maxCostUsd: 0.5 } });
  await agent.prompt("go");
  assert.equal(agent.state.errorMessage, "Run stopped: agent cost limit of $0.50 reached ($0.60 spent in total)");
  assert.equal(agent.state.limitReached.scope, "agent");
  await assert.rejects(agent.prompt("more"), {
    message: "Agent.prompt: agent cost limit of $0.50 reached ($0.60 spent in total); raise agent.totalLimits.maxCostUsd to run again",
  });
  agent.limits = { maxTurns: 0 };
  await assert.rejects(agent.continue(),
    { name: "TypeError", message: "Agent.continue: agent.limits.maxTurns must be a positive integer or Infinity" });
  agent.limits = undefined;
  agent.totalLimits = { maxCostUsd: 1 };
  await agent.continue();
  assert.equal(firstText(agent.state.messages.at(-1)), "done");
  assert.equal(faux.calls.length, 3);
});

test("A-5.9.1 totals ride in snapshots and checkpoints (only once non-zero) and come back with a restore", T, async () => {
  const rows = [];
  const faux = createFaux([answer("free", 0, 0), answer("paid", 100, 0.25)]);
  const agent = makeAgent(faux, { onCheckpoint: (c) => { rows.push(JSON.parse(JSON.stringify(c))); } });
  await agent.prompt("one");
  assert.equal(agent.snapshot().usage, undefined);
  assert.ok(rows.every((r) => !("usage" in r)));
  await agent.prompt("two");
  assert.deepEqual(agent.snapshot().usage, totals(100, 0.25));
  assert.deepEqual(rows.filter((r) => "usage" in r).map((r) => r.usage), [totals(100, 0.25)]);
  const fromRows = Agent.restore(rows, { streamFn: faux.streamFn });
  assert.deepEqual(fromRows.state.totalUsage, totals(100, 0.25));
  const fromSnapshot = Agent.restore(JSON.stringify(agent.snapshot()), { streamFn: faux.streamFn });
  assert.deepEqual(fromSnapshot.state.totalUsage, totals(100, 0.25));
  assert.deepEqual(fromSnapshot.state.runUsage, totals(0, 0));
});
