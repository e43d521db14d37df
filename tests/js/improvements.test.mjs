// Improvements and deviations (SPEC §7 D2, D6, D7; L-3.10.3, L-3.10.4).
import { test } from "node:test";
import assert from "node:assert/strict";
import { IS_REFERENCE, agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue } from "./impl.mjs";
import {
  assistant,
  collect,
  config,
  createFaux,
  firstText,
  model,
  okResult,
  queue,
  recorder,
  sleep,
  tool,
  toolCall,
  userMessage,
  zeroUsage,
} from "./faux.mjs";

const T = { timeout: 5000 };
const deviation = (why) => ({ ...T, skip: IS_REFERENCE && `reference differs: ${why}` });

const HEAD = ["agent_start", "turn_start", "message_start:user", "message_end:user"];

function declaring(tools) {
  return {
    role: "system",
    content: "",
    timestamp: 0,
    toolsAdded: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
  };
}

function assertAbortedSynth(msg, m = model()) {
  assert.deepEqual(Object.keys(msg).slice(0, 9), [
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
    { ...msg, timestamp: 0, thinkingLevel: undefined },
    {
      role: "assistant",
      content: [{ type: "text", text: "" }],
      api: m.api,
      provider: m.provider,
      model: m.id,
      usage: zeroUsage(),
      stopReason: "aborted",
      errorMessage: "Request was aborted",
      timestamp: 0,
      thinkingLevel: undefined,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// D2 abort is final
// ---------------------------------------------------------------------------------------------

test("D2.2 abort during a request: the aborted response takes the hard-exit path", T, async () => {
  const controller = new AbortController();
  const steering = queue();
  const followUp = queue();
  let finish = 0;
  const faux = createFaux([assistant("a long answer that will be cut off by the abort"), assistant("never")], { delayMs: 2 });
  const rec = recorder((e) => {
    if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") controller.abort();
  });
  const result = await runAgentLoop(
    [userMessage("go")],
    { messages: [] },
    config({
      getSteeringMessages: steering.get,
      getFollowUpMessages: followUp.get,
      finishTurn: () => (finish++, { action: "continue" }),
    }),
    rec.emit,
    controller.signal,
    faux.streamFn,
  );
  assert.equal(faux.calls.length, 1);
  assert.equal(result.at(-1).stopReason, "aborted");
  assert.equal(result.at(-1).errorMessage, "Request was aborted");
  assert.deepEqual(rec.labels().slice(-4), ["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
  assert.deepEqual([steering.polls, followUp.polls, finish], [1, 0, 1]);
});

test("D2.3 abort during a batch: no further request, no queue drained; finishTurn, turn_end, agent_end", deviation("D2"), async () => {
  const controller = new AbortController();
  const steering = queue();
  const followUp = queue([userMessage("follow")]);
  const finishDecisions = [];
  const t = tool("t", async () => {
    steering.push(userMessage("steer during tool"));
    controller.abort();
    return okResult("stopped");
  });
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("never")]);
  const { labels, result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([t])], tools: [t] },
      config({
        getSteeringMessages: steering.get,
        getFollowUpMessages: followUp.get,
        finishTurn: (turn) => {
          finishDecisions.push(turn.toolResults.length);
          return { action: "continue" };
        },
      }),
      controller.signal,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(labels(), [
    ...HEAD,
    "message_start:assistant",
    "message_end:assistant",
    "tool_execution_start:c1",
    "tool_execution_end:c1",
    "message_start:toolResult",
    "message_end:toolResult",
    "turn_end",
    "agent_end",
  ]);
  assert.deepEqual(finishDecisions, [1]);
  assert.deepEqual(
    result.map((m) => m.role),
    ["user", "assistant", "toolResult"],
  );
  assert.equal(steering.polls, 1);
  assert.equal(followUp.polls, 0);
  assert.equal(steering.items.length, 1);
  assert.equal(followUp.items.length, 1);
});

test("D2.3 parallel abort: running calls keep their results and run afterToolCall; one result per call", deviation("D2"), async () => {
  const controller = new AbortController();
  const after = [];
  const aborter = tool("aborter", async () => {
    await sleep(5);
    controller.abort();
    return okResult("aborted the run");
  });
  const waiter = tool("waiter", (id, args, signal) =>
    new Promise((resolve) => {
      signal.addEventListener("abort", () => resolve(okResult("noticed abort", { isError: true })), { once: true });
    }),
  );
  const faux = createFaux([assistant([toolCall("c1", "aborter", {}), toolCall("c2", "waiter", {})]), assistant("never")]);
  const { events, result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([aborter, waiter])], tools: [aborter, waiter] },
      config({ afterToolCall: async ({ toolCall: tc }) => void after.push(tc.id) }),
      controller.signal,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 1);
  const ends = events.filter((e) => e.type === "tool_execution_end");
  assert.deepEqual(ends.map((e) => e.toolCallId).sort(), ["c1", "c2"]);
  const byId = Object.fromEntries(ends.map((e) => [e.toolCallId, e]));
  assert.equal(firstText(byId.c1.result), "aborted the run");
  assert.equal(firstText(byId.c2.result), "noticed abort");
  assert.deepEqual(after.sort(), ["c1", "c2"]);
  assert.deepEqual(
    result.filter((m) => m.role === "toolResult").map((m) => m.toolCallId),
    ["c1", "c2"],
  );
  assert.deepEqual(
    events.slice(-2).map((e) => e.type),
    ["turn_end", "agent_end"],
  );
});

test("D2.4 abort seen between turns with nothing drained: agent_end right after turn_end", deviation("D2"), async () => {
  const controller = new AbortController();
  const steering = queue();
  let next = 0;
  const faux = createFaux([assistant(toolCall("c1", "echo", {})), assistant("never")]);
  const echo = tool("echo");
  const { labels } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([echo])], tools: [echo] },
      config({
        getSteeringMessages: steering.get,
        prepareNextTurn: () => void next++,
        finishTurn: () => void controller.abort(),
      }),
      controller.signal,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(labels().slice(-6), [
    "tool_execution_start:c1",
    "tool_execution_end:c1",
    "message_start:toolResult",
    "message_end:toolResult",
    "turn_end",
    "agent_end",
  ]);
  assert.equal(steering.polls, 1);
  assert.equal(next, 0);
});

for (const kind of ["steering", "follow-up"]) {
  test(`D2.4 trace D2-b: prepareNextTurn aborts after a drained ${kind} message`, deviation("D2"), async () => {
    const controller = new AbortController();
    const queued = userMessage(`queued ${kind}`);
    const steering = queue();
    const followUp = queue();
    let prepareRequests = 0;
    const faux = createFaux([assistant("first"), assistant("never")]);
    const { labels, result, events } = await collect(
      agentLoop(
        [userMessage("go")],
        { messages: [] },
        config({
          getSteeringMessages: steering.get,
          getFollowUpMessages: followUp.get,
          prepareRequest: () => void prepareRequests++,
          finishTurn: () => void (kind === "steering" ? steering : followUp).push(queued),
          prepareNextTurn: () => void controller.abort(),
        }),
        controller.signal,
        faux.streamFn,
      ),
    );
    assert.equal(faux.calls.length, 1);
    assert.equal(prepareRequests, 1);
    assert.deepEqual(labels(), [
      ...HEAD,
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "turn_start",
      "message_start:user",
      "message_end:user",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    assert.equal(events.filter((e) => e.type === "turn_start").length, 2);
    assert.equal(events.filter((e) => e.type === "turn_end").length, 2);
    assert.equal(result.at(-2), queued);
    assertAbortedSynth(result.at(-1));
  });
}

test("D2.4 abort seen at the request boundary before streamFn: synthesized aborted assistant", deviation("D2"), async () => {
  const controller = new AbortController();
  const faux = createFaux([assistant("never")]);
  let finishDecision = 0;
  const { labels, result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [] },
      config({
        prepareRequest: () => void controller.abort(),
        finishTurn: () => (finishDecision++, { action: "continue" }),
      }),
      controller.signal,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 0);
  assert.deepEqual(labels(), [...HEAD, "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
  assertAbortedSynth(result.at(-1));
  assert.equal(result.length, 2);
});

test("D2.1 a signal aborted before the run: no poll, no request; prompts still reach the result", deviation("D2"), async () => {
  const controller = new AbortController();
  controller.abort();
  const steering = queue([userMessage("not drained")]);
  const followUp = queue();
  const faux = createFaux([assistant("never")]);
  const prompt = userMessage("go");
  const { labels, result } = await collect(
    agentLoop(
      [prompt],
      { messages: [] },
      config({ getSteeringMessages: steering.get, getFollowUpMessages: followUp.get }),
      controller.signal,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 0);
  assert.deepEqual([steering.polls, followUp.polls], [0, 0]);
  assert.equal(steering.items.length, 1);
  assert.deepEqual(labels(), [...HEAD, "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
  assert.equal(result[0], prompt);
  assertAbortedSynth(result[1]);
});

// ---------------------------------------------------------------------------------------------
// D6 no mutation by continuation
// ---------------------------------------------------------------------------------------------

test("D6.1 agentLoopContinue / runAgentLoopContinue leave the caller's messages array unchanged", deviation("D6"), async () => {
  const messages = [userMessage("hi")];
  const context = { messages, tools: [] };
  const r1 = await collect(agentLoopContinue(context, config(), undefined, createFaux([assistant("a")]).streamFn));
  assert.equal(messages.length, 1);
  assert.equal(context.messages, messages);
  assert.equal(r1.result.length, 1);
  const rec = recorder();
  const r2 = await runAgentLoopContinue(context, config(), rec.emit, undefined, createFaux([assistant("b")]).streamFn);
  assert.equal(messages.length, 1);
  assert.equal(firstText(r2[0]), "b");
});

// ---------------------------------------------------------------------------------------------
// D7 built-in default
// ---------------------------------------------------------------------------------------------

test("D7.1 no streamFn and no default: the built-in stream answers (unknown api -> assistant error)", deviation("D7"), async () => {
  const { result, labels } = await collect(
    agentLoop([userMessage("go")], { messages: [] }, config({ model: model({ api: "unknown" }) })),
  );
  assert.deepEqual(labels().slice(-4), ["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
  const final = result.at(-1);
  assert.equal(final.role, "assistant");
  assert.equal(final.stopReason, "error");
  assert.equal(final.errorMessage, 'No built-in provider for api "unknown". Pass streamFn or call setDefaultStreamFn().');
  const rec = recorder();
  const r2 = await runAgentLoop([userMessage("go")], { messages: [] }, config({ model: model({ api: "unknown" }) }), rec.emit);
  assert.equal(r2.at(-1).errorMessage, final.errorMessage);
});

test("D7.1 config.streamFn answers when the call passes none; a streamFn argument wins over it; a non-function throws", deviation("D7: pi-agent-core ignores config.streamFn"), async () => {
  const fromConfig = createFaux([assistant("from config"), assistant("from config again")]);
  const { result } = await collect(agentLoop([userMessage("go")], { messages: [] }, config({ streamFn: fromConfig.streamFn })));
  assert.equal(firstText(result.at(-1)), "from config");
  const rec = recorder();
  const run = await runAgentLoop([userMessage("go")], { messages: [] }, config({ streamFn: fromConfig.streamFn }), rec.emit);
  assert.equal(firstText(run.at(-1)), "from config again");
  const argument = createFaux([assistant("from the argument")]);
  const unused = createFaux([assistant("never")]);
  const both = await collect(agentLoop([userMessage("go")], { messages: [] }, config({ streamFn: unused.streamFn }), undefined, argument.streamFn));
  assert.equal(firstText(both.result.at(-1)), "from the argument");
  assert.equal(unused.calls.length, 0);
  assert.throws(() => agentLoop([userMessage("go")], { messages: [] }, config({ streamFn: "openai" })), {
    name: "TypeError",
    message: "agentLoop: config.streamFn must be a function",
  });
});

// ---------------------------------------------------------------------------------------------
// L-3.10.3 serialised delivery, L-3.10.4 failing emit
// ---------------------------------------------------------------------------------------------

test("L-3.10.3 emit is never called while a previous emit is pending (parallel updates and ends)", deviation("L-3.10.3"), async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const delivered = [];
  const mk = (name, ms) =>
    tool(name, async (id, args, signal, onUpdate) => {
      onUpdate(okResult(`${id} 1`));
      await sleep(ms);
      onUpdate(okResult(`${id} 2`));
      return okResult(id);
    });
  const faux = createFaux([assistant([toolCall("a", "ta", {}), toolCall("b", "tb", {})]), assistant("done")]);
  const emit = async (e) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    delivered.push(e.type.startsWith("tool_execution_") ? `${e.type.slice(15)}:${e.toolCallId}` : e.type);
    if (e.type.startsWith("tool_execution_")) await sleep(6);
    inFlight--;
  };
  await runAgentLoop(
    [userMessage("go")],
    { messages: [], tools: [mk("ta", 4), mk("tb", 5)] },
    config(),
    emit,
    undefined,
    faux.streamFn,
  );
  assert.equal(maxInFlight, 1);
  const toolEvents = delivered.filter((d) => /^(start|update|end):/.test(d));
  for (const id of ["a", "b"]) {
    assert.deepEqual(
      toolEvents.filter((d) => d.endsWith(`:${id}`)),
      [`start:${id}`, `update:${id}`, `update:${id}`, `end:${id}`],
    );
  }
});

test("L-3.10.4 a failing emit rejects runAgentLoop after running tools settle; nothing is emitted after", deviation("L-3.10.4"), async () => {
  const failure = new Error("listener failed");
  let slowSettled = false;
  let callsAfterFailure = 0;
  let failed = false;
  const fast = tool("fast", async () => okResult("fast"));
  const slow = tool("slow", async () => {
    await sleep(40);
    slowSettled = true;
    return okResult("slow");
  });
  const faux = createFaux([assistant([toolCall("f", "fast", {}), toolCall("s", "slow", {})]), assistant("never")]);
  const emit = async (e) => {
    if (failed) callsAfterFailure++;
    if (e.type === "tool_execution_end" && e.toolCallId === "f") {
      failed = true;
      throw failure;
    }
  };
  let settledAtRejection;
  await assert.rejects(
    runAgentLoop([userMessage("go")], { messages: [], tools: [fast, slow] }, config(), emit, undefined, faux.streamFn).catch(
      (err) => {
        settledAtRejection = slowSettled;
        throw err;
      },
    ),
    (err) => err === failure,
  );
  assert.equal(settledAtRejection, true);
  await sleep(60);
  assert.equal(callsAfterFailure, 0);
  assert.equal(faux.calls.length, 1);
});

test("L-3.10.4 emit throwing on agent_start: rejects with that error, no request", T, async () => {
  const failure = new Error("sink down");
  const faux = createFaux([assistant("never")]);
  let calls = 0;
  await assert.rejects(
    runAgentLoop([userMessage("go")], { messages: [] }, config(), () => {
      calls++;
      throw failure;
    }, undefined, faux.streamFn),
    (err) => err === failure,
  );
  assert.equal(calls, 1);
  assert.equal(faux.calls.length, 0);
});

test("API-1.1.1 tool() returns the very object it is given, which the loop runs like any tool", { ...T, skip: IS_REFERENCE && "new export" }, async () => {
  const { tool: defineTool } = await import("../../pkg/dist/node/index.mjs");
  const definition = tool("echo", async (_id, args) => okResult(`echo ${args.text}`));
  assert.equal(defineTool(definition), definition);
  assert.equal(Object.keys(defineTool(definition)).join(), Object.keys(definition).join());
  const faux = createFaux([assistant([toolCall("c1", "echo", { text: "hi" })]), assistant("done")]);
  const messages = await agentLoop([userMessage("go")], { messages: [], tools: [defineTool(definition)] }, config(), undefined, faux.streamFn).result();
  assert.equal(messages.find((m) => m.role === "toolResult")?.content[0].text, "echo hi");
});
