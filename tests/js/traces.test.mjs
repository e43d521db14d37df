// Normative traces (SPEC §3.11, D1-a) and the design document's parallel example, with exact event labels.
import { test } from "node:test";
import assert from "node:assert/strict";
import { IS_REFERENCE, agentLoop, agentLoopContinue, runAgentLoop } from "./impl.mjs";
import {
  assistant,
  collect,
  config,
  createFaux,
  firstText,
  okResult,
  queue,
  recorder,
  requestText,
  sleep,
  tool,
  toolCall,
  userMessage,
  withVirtualClock,
  zeroUsage,
} from "./faux.mjs";

const T = { timeout: 5000 };
const deviation = (why) => ({ ...T, skip: IS_REFERENCE && `reference differs: ${why}` });

test("T1 prompt, one tool, undeclared tools: exact trace, roles, thinkingLevel, result JSON, stream options", T, async () => {
  const faux = createFaux([assistant(toolCall("c1", "noop", {})), assistant("done")]);
  // On a virtual clock the tool takes exactly 7 ms (durationMs below).
  const { labels, result } = await withVirtualClock((clock) => {
    const noop = tool("noop", async () => (clock.advance(7), { content: [{ type: "text", text: "noop" }], details: {} }));
    return collect(agentLoop([userMessage("go")], { messages: [], tools: [noop] }, config(), undefined, faux.streamFn));
  });
  assert.deepEqual(labels(), [
    "agent_start",
    "turn_start",
    "message_start:system",
    "message_end:system",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "tool_execution_start:c1",
    "tool_execution_end:c1",
    "message_start:toolResult",
    "message_end:toolResult",
    "turn_end",
    "turn_start",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.deepEqual(
    result.map((m) => m.role),
    ["system", "user", "assistant", "toolResult", "assistant"],
  );
  assert.equal(result.at(-1).thinkingLevel, "off");
  const tr = result[3];
  assert.equal(tr.durationMs, 7);
  assert.equal(
    JSON.stringify({ ...tr, durationMs: 0, timestamp: 1 }),
    '{"role":"toolResult","toolCallId":"c1","toolName":"noop","content":[{"type":"text","text":"noop"}],"details":{},"isError":false,"durationMs":0,"timestamp":1}',
  );
  assert.equal(typeof tr.timestamp, "number");
  for (const call of faux.calls) {
    assert.equal(
      JSON.stringify(call.options.identity),
      '{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]}}',
    );
    assert.equal(call.options.reasoning, undefined);
  }
});

test("AC-L36 T2 sequential batch: ok, unknown, coerced, blocked, missing argument", T, async () => {
  const received = [];
  const ok = tool("ok", async (id, args) => (received.push([id, args]), okResult(`ok ${id}`)), {
    parameters: { type: "object", properties: { v: { type: "string" } }, required: ["v"] },
  });
  const faux = createFaux([
    assistant([
      toolCall("a", "ok", { v: "x" }),
      toolCall("b", "nope", {}),
      toolCall("c", "ok", { v: 5 }),
      toolCall("d", "ok", { v: "block me" }),
      toolCall("e", "ok", {}),
    ]),
    assistant("done"),
  ]);
  const { labels, events } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [ok] },
      config({
        toolExecution: "sequential",
        beforeToolCall: async ({ args }) => (args.v === "block me" ? { block: true } : undefined),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  const ends = Object.fromEntries(events.filter((e) => e.type === "tool_execution_end").map((e) => [e.toolCallId, e]));
  assert.equal(firstText(ends.a.result), "ok a");
  assert.equal(ends.a.isError, false);
  assert.equal(typeof ends.a.durationMs, "number");
  assert.deepEqual(ends.b.result, { content: [{ type: "text", text: "Tool nope not found" }], details: {} });
  assert.equal(ends.b.isError, true);
  assert.equal("durationMs" in ends.b, false);
  assert.equal(firstText(ends.c.result), "ok c");
  assert.equal(ends.c.isError, false);
  assert.deepEqual(received, [
    ["a", { v: "x" }],
    ["c", { v: "5" }],
  ]);
  assert.deepEqual(ends.d.result, { content: [{ type: "text", text: "Tool execution was blocked" }], details: {} });
  assert.equal(ends.d.isError, true);
  assert.equal(
    firstText(ends.e.result),
    'Validation failed for tool "ok":\n  - v: missing\n\nReceived arguments:\n{}',
  );
  assert.equal(ends.e.isError, true);
  const toolPart = labels().filter((l) => l.startsWith("tool_") || l.endsWith(":toolResult"));
  const expected = [];
  for (const id of ["a", "b", "c", "d", "e"]) {
    expected.push(
      `tool_execution_start:${id}`,
      `tool_execution_end:${id}`,
      "message_start:toolResult",
      "message_end:toolResult",
    );
  }
  assert.deepEqual(toolPart, expected);
});

test("T3 design-document parallel example: toolA 100 ms, toolB 10 ms", T, async () => {
  const toolA = tool("toolA", async () => (await sleep(100), okResult("A")));
  const toolB = tool("toolB", async () => (await sleep(10), okResult("B")));
  const faux = createFaux([assistant([toolCall("A", "toolA", {}), toolCall("B", "toolB", {})]), assistant("done")]);
  const { events } = await collect(
    agentLoop([userMessage("go")], { messages: [], tools: [toolA, toolB] }, config(), undefined, faux.streamFn),
  );
  const part = events
    .filter((e) => e.type.startsWith("tool_execution_") || e.message?.role === "toolResult" || e.type === "turn_end")
    .map((e) =>
      e.type === "turn_end"
        ? e.type
        : e.message
          ? `${e.type}:toolResult(${e.message.toolCallId})`
          : `${e.type}:${e.toolCallId}`,
    );
  assert.deepEqual(part.slice(0, 9), [
    "tool_execution_start:A",
    "tool_execution_start:B",
    "tool_execution_end:B",
    "tool_execution_end:A",
    "message_start:toolResult(A)",
    "message_end:toolResult(A)",
    "message_start:toolResult(B)",
    "message_end:toolResult(B)",
    "turn_end",
  ]);
  assert.deepEqual(
    faux.calls[1].messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId),
    ["A", "B"],
  );
});

test("AC-L25 T4 finishTurn end after a tool turn: exact events, ids, roles, counts", T, async () => {
  let executed = 0;
  const steering = queue();
  const followUp = queue();
  let prepared = 0;
  const seen = [];
  const faux = createFaux([assistant(toolCall("tool-1", "echo", {})), assistant("never")]);
  const { labels, events } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [tool("echo", async () => (executed++, okResult()))] },
      config({
        getSteeringMessages: steering.get,
        getFollowUpMessages: followUp.get,
        prepareNextTurn: () => void prepared++,
        finishTurn: (turn) => {
          seen.push({
            ids: turn.toolResults.map((r) => r.toolCallId),
            roles: turn.context.messages.map((m) => m.role),
          });
          return { action: "end" };
        },
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.deepEqual(
    events.filter((e) => e.type !== "message_update").map((e) => e.type),
    [
      "agent_start",
      "turn_start",
      ...Array(3).fill(["message_start", "message_end"]).flat(),
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
    ],
  );
  assert.deepEqual(labels(), [
    "agent_start",
    "turn_start",
    "message_start:system",
    "message_end:system",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "tool_execution_start:tool-1",
    "tool_execution_end:tool-1",
    "message_start:toolResult",
    "message_end:toolResult",
    "turn_end",
    "agent_end",
  ]);
  assert.equal(executed, 1);
  assert.deepEqual(seen, [{ ids: ["tool-1"], roles: ["system", "user", "assistant", "toolResult"] }]);
  assert.equal(faux.calls.length, 1);
  assert.equal(steering.polls, 1);
  assert.equal(followUp.polls, 0);
  assert.equal(prepared, 0);
});

test("AC-L34 T5 continuation with undeclared tools: a system message comes first", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const { labels, result } = await collect(
    agentLoopContinue({ messages: [userMessage("hi")], tools: [tool("echo")] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(labels(), [
    "agent_start",
    "turn_start",
    "message_start:system",
    "message_end:system",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.deepEqual(
    result.map((m) => m.role),
    ["system", "assistant"],
  );
  assert.deepEqual(
    result[0].toolsAdded.map((t) => t.name),
    ["echo"],
  );
  assert.deepEqual(
    faux.calls[0].messages.map((m) => m.role),
    ["user", "system"],
  );
});

test("AC-L11 T7 steering queued during the first of two sequential executions waits for the batch", T, async () => {
  const steering = queue();
  const t = tool("t", async (id) => {
    if (id === "c1") steering.push(userMessage("interrupt"));
    await sleep(2);
    return okResult(id);
  });
  const faux = createFaux([assistant([toolCall("c1", "t", {}), toolCall("c2", "t", {})]), assistant("done")]);
  const { labels } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [t] },
      config({ toolExecution: "sequential", getSteeringMessages: steering.get }),
      undefined,
      faux.streamFn,
    ),
  );
  const l = labels();
  const from = l.indexOf("tool_execution_start:c1");
  assert.deepEqual(l.slice(from), [
    "tool_execution_start:c1",
    "tool_execution_end:c1",
    "message_start:toolResult",
    "message_end:toolResult",
    "tool_execution_start:c2",
    "tool_execution_end:c2",
    "message_start:toolResult",
    "message_end:toolResult",
    "turn_end",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.ok(!requestText(faux.calls[0]).includes("interrupt"));
  assert.ok(requestText(faux.calls[1]).includes("interrupt"));
  assert.deepEqual(
    faux.calls[1].messages.map((m) => m.role),
    ["system", "user", "assistant", "toolResult", "toolResult", "user"],
  );
});

test("T6 hard exit trace: message_end:assistant, finishTurn, turn_end, agent_end", T, async () => {
  const order = [];
  const faux = createFaux([assistant("x", { stopReason: "error", errorMessage: "503" })]);
  const rec = recorder((e) => {
    if (e.type !== "message_update") order.push(e.type.startsWith("message_") ? `${e.type}:${e.message.role}` : e.type);
  });
  const steering = queue();
  const followUp = queue();
  await runAgentLoop(
    [userMessage("go")],
    { messages: [] },
    config({
      getSteeringMessages: steering.get,
      getFollowUpMessages: followUp.get,
      finishTurn: () => (order.push("finishTurn"), { action: "continue" }),
    }),
    rec.emit,
    undefined,
    faux.streamFn,
  );
  assert.deepEqual(order, [
    "agent_start",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "finishTurn",
    "turn_end",
    "agent_end",
  ]);
  assert.equal(faux.calls.length, 1);
  assert.equal(steering.polls, 1);
  assert.equal(followUp.polls, 0);
});

test("T8 explicit continuation trace: 2 requests, 2 finishTurn, 4 steering polls, 2 follow-up polls", T, async () => {
  const faux = createFaux([assistant("one"), assistant("two")]);
  const steering = queue();
  const followUp = queue();
  let finish = 0;
  await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [] },
      config({
        getSteeringMessages: steering.get,
        getFollowUpMessages: followUp.get,
        finishTurn: () => (finish++ === 0 ? { action: "continue" } : undefined),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.deepEqual([faux.calls.length, finish, steering.polls, followUp.polls], [2, 2, 4, 2]);
});

test("T9 terminate plus one queued follow-up: 2 requests", T, async () => {
  const t = tool("t", async () => okResult("x", { terminate: true }));
  const followUp = queue([userMessage("next task")]);
  const faux = createFaux([assistant([toolCall("1", "t", {}), toolCall("2", "t", {})]), assistant("did next task")]);
  const { labels, result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [t] },
      config({ getFollowUpMessages: followUp.get }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 2);
  assert.ok(requestText(faux.calls[1]).includes("next task"));
  assert.deepEqual(
    result.map((m) => m.role),
    ["system", "user", "assistant", "toolResult", "toolResult", "user", "assistant"],
  );
  assert.deepEqual(labels().slice(-8), [
    "turn_end",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
});

test("D1-a streamFn throws 'provider exploded': the run ends with an error assistant", deviation("D1"), async () => {
  const model = config().model;
  const user = userMessage("hi");
  const before = Date.now();
  const stream = agentLoop([user], { messages: [] }, config(), undefined, () => {
    throw new Error("provider exploded");
  });
  const { labels, result, events } = await collect(stream);
  assert.deepEqual(labels(), [
    "agent_start",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.equal(result.length, 2);
  assert.equal(result[0], user);
  const failure = result[1];
  assert.deepEqual(Object.keys(failure).slice(0, 9), [
    "role",
    "content",
    "api",
    "provider",
    "model",
    "usage",
    "stopReason",
    "errorMessage",
    "timestamp",
  ]);
  assert.deepEqual(
    { ...failure, timestamp: 0 },
    {
      role: "assistant",
      content: [{ type: "text", text: "" }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: zeroUsage(),
      stopReason: "error",
      errorMessage: "provider exploded",
      timestamp: 0,
      ...Object.fromEntries(Object.entries(failure).filter(([k]) => k === "thinkingLevel")),
    },
  );
  assert.ok(failure.timestamp >= before);
  const turnEnd = events.find((e) => e.type === "turn_end");
  assert.equal(turnEnd.message, failure);
  assert.deepEqual(turnEnd.toolResults, []);
  assert.equal(events.find((e) => e.type === "message_end" && e.message.role === "assistant").message, failure);
});
