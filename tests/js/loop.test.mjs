// Loop semantics (SPEC §3): entry points, scheduling, hooks, queues, tool declaration, streaming, stream options.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  IS_REFERENCE,
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  setDefaultStreamFn,
  getDefaultStreamFn,
  DEFAULT_AGENT_IDENTITY,
  createAssistantMessageEventStream,
} from "./impl.mjs";
import {
  assistant,
  collect,
  config,
  convertToLlm,
  createFaux,
  firstText,
  model,
  okResult,
  queue,
  recorder,
  requestText,
  systemMessage,
  text,
  thinking,
  tool,
  toolCall,
  userMessage,
} from "./faux.mjs";

const T = { timeout: 5000 };
const deviation = (why) => ({ ...T, skip: IS_REFERENCE && `reference differs: ${why}` });

const PI_IDENTITY = { attribution: { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] } };

/** Declares `tools` the way the loop would, so no system message is inserted. */
function declaring(tools) {
  return {
    role: "system",
    content: "",
    timestamp: 0,
    toolsAdded: tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: JSON.parse(JSON.stringify(t.parameters)),
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Appendix A: loop items
// ---------------------------------------------------------------------------------------------

test("AC-L1 setDefaultStreamFn: agentLoop without streamFn calls the default once", T, async () => {
  const faux = createFaux([assistant("hello")]);
  let calls = 0;
  setDefaultStreamFn((m, c, o) => {
    calls++;
    return faux.streamFn(m, c, o);
  });
  try {
    const { result } = await collect(agentLoop([userMessage("hi")], { messages: [] }, config()));
    assert.equal(calls, 1);
    assert.deepEqual(
      result.map((m) => m.role),
      ["user", "assistant"],
    );
  } finally {
    setDefaultStreamFn(undefined);
  }
});

test("AC-L2 prompt run: result [user, assistant], all six lifecycle event types", T, async () => {
  const faux = createFaux([assistant("hello")]);
  const prompt = userMessage("hi");
  const { result, events, labels } = await collect(
    agentLoop([prompt], { messages: [] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(
    result.map((m) => m.role),
    ["user", "assistant"],
  );
  assert.equal(result[0], prompt);
  for (const type of ["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end"]) {
    assert.ok(
      events.some((e) => e.type === type),
      `missing ${type}`,
    );
  }
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
  assert.equal(events.at(-1).messages, result);
  assert.equal(firstText(result[1]), "hello");
});

test("AC-L3 provider context has exactly the key messages; messages[0] is the prompt's system object", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const sys = systemMessage("You are terse.");
  const user = userMessage("hi");
  await collect(agentLoop([sys, user], { messages: [] }, config(), undefined, faux.streamFn));
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(Object.keys(faux.calls[0].context), ["messages"]);
  assert.equal(faux.calls[0].context.messages[0], sys);
  assert.equal(faux.calls[0].context.messages[1], user);
  assert.equal(faux.calls[0].context.messages.length, 2);
});

test("AC-L4 a custom notification message is filtered by convertToLlm", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const seen = [];
  const notification = { role: "notification", text: "build finished", timestamp: 1 };
  const user = userMessage("hi");
  const { result } = await collect(
    agentLoop(
      [user],
      { messages: [notification] },
      config({
        convertToLlm: (messages) => {
          seen.push(messages.map((m) => m.role));
          return messages.filter((m) => m.role !== "notification");
        },
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.deepEqual(seen, [["notification", "user"]]);
  assert.deepEqual(faux.calls[0].messages, [user]);
  assert.deepEqual(
    result.map((m) => m.role),
    ["user", "assistant"],
  );
});

test("AC-L5 transformContext keeping the last 2 of 5 -> convertToLlm receives 2", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const history = [userMessage("1"), assistant("2"), userMessage("3"), assistant("4")];
  const controller = new AbortController();
  let transformInput;
  let transformSignal;
  let converted;
  await collect(
    agentLoop(
      [userMessage("5")],
      { messages: history },
      config({
        transformContext: async (messages, signal) => {
          transformInput = messages.length;
          transformSignal = signal;
          return messages.slice(-2);
        },
        convertToLlm: (messages) => {
          converted = messages;
          return convertToLlm(messages);
        },
      }),
      controller.signal,
      faux.streamFn,
    ),
  );
  assert.equal(transformInput, 5);
  assert.equal(transformSignal, controller.signal);
  assert.equal(converted.length, 2);
  assert.deepEqual(
    converted.map((m) => firstText(m)),
    ["4", "5"],
  );
  assert.equal(faux.calls[0].messages.length, 2);
});

test("AC-L15 finishTurn runs after the result message_end and before turn_end", T, async () => {
  const faux = createFaux([assistant(toolCall("tool-1", "echo", {})), assistant("done")]);
  const order = [];
  const seen = [];
  const rec = recorder((e) => {
    if (e.type === "message_end" || e.type === "turn_end") order.push(`${e.type}:${e.message.role}`);
  });
  await runAgentLoop(
    [userMessage("go")],
    { messages: [], tools: [tool("echo")] },
    config({
      finishTurn: (turn) => {
        order.push("finishTurn");
        seen.push({
          results: turn.toolResults.length,
          lastRole: turn.context.messages.at(-1).role,
          message: turn.message,
          newMessages: turn.newMessages,
        });
      },
    }),
    rec.emit,
    undefined,
    faux.streamFn,
  );
  assert.deepEqual(order.slice(0, 6), [
    "message_end:system",
    "message_end:user",
    "message_end:assistant",
    "message_end:toolResult",
    "finishTurn",
    "turn_end:assistant",
  ]);
  assert.equal(seen[0].results, 1);
  assert.equal(seen[0].lastRole, "toolResult");
  assert.equal(seen[0].message, rec.ofType("turn_end")[0].message);
  assert.equal(seen.length, 2);
  // newMessages is the live array that agent_end carries
  assert.equal(seen[0].newMessages, rec.events.at(-1).messages);
});

test("AC-L15 the turn's toolResults is one array: finishTurn's turn.toolResults is turn_end's, additions included", T, async () => {
  const faux = createFaux([assistant([toolCall("c1", "echo", {}), toolCall("c2", "echo", {})]), assistant("done")]);
  const turns = [];
  const rec = recorder();
  await runAgentLoop(
    [userMessage("go")],
    { messages: [declaring([tool("echo")])], tools: [tool("echo")] },
    config({
      finishTurn: (turn) => {
        turns.push(turn);
        turn.toolResults.push({ role: "toolResult", toolCallId: "added", toolName: "echo", content: [], isError: false, timestamp: 0 });
      },
    }),
    rec.emit,
    undefined,
    faux.streamFn,
  );
  const ends = rec.ofType("turn_end");
  assert.equal(ends.length, 2);
  for (let i = 0; i < 2; i++) assert.equal(ends[i].toolResults, turns[i].toolResults);
  assert.deepEqual(ends[0].toolResults.map((r) => r.toolCallId), ["c1", "c2", "added"]);
  assert.deepEqual(ends[1].toolResults.map((r) => r.toolCallId), ["added"]);
});

for (const stopReason of ["error", "aborted"]) {
  test(`AC-L16 T6 hard exit on ${stopReason}: finishTurn(continue) ignored, no tools, no queue polls`, T, async () => {
    const faux = createFaux([
      assistant([text("partial"), toolCall("c1", "echo", {})], { stopReason, errorMessage: "provider failed" }),
      assistant("never"),
    ]);
    let executed = 0;
    const steering = queue();
    const followUp = queue();
    const order = [];
    const turns = [];
    const rec = recorder((e) => order.push(e.type === "message_end" ? `message_end:${e.message.role}` : e.type));
    const result = await runAgentLoop(
      [userMessage("go")],
      { messages: [declaring([tool("echo")])], tools: [tool("echo", async () => (executed++, okResult()))] },
      config({
        getSteeringMessages: steering.get,
        getFollowUpMessages: followUp.get,
        finishTurn: (turn) => {
          order.push("finishTurn");
          turns.push(turn);
          return { action: "continue" };
        },
      }),
      rec.emit,
      undefined,
      faux.streamFn,
    );
    assert.deepEqual(order.slice(-4), ["message_end:assistant", "finishTurn", "turn_end", "agent_end"]);
    assert.equal(faux.calls.length, 1);
    assert.equal(executed, 0);
    assert.equal(steering.polls, 1);
    assert.equal(followUp.polls, 0);
    assert.deepEqual(turns[0].toolResults, []);
    assert.equal(rec.ofType("tool_execution_start").length, 0);
    assert.deepEqual(rec.ofType("turn_end")[0].toolResults, []);
    // here the reference hands finishTurn and turn_end two arrays
    assert.notEqual(rec.ofType("turn_end")[0].toolResults, turns[0].toolResults);
    assert.equal(result.at(-1).stopReason, stopReason);
    assert.equal(result.at(-1).errorMessage, "provider failed");
    assert.deepEqual(
      result.map((m) => m.role),
      ["user", "assistant"],
    );
  });
}

test("AC-L17 finishTurn end after a tool turn: 1 request, 1 steering poll, 0 follow-up polls, 0 prepareNextTurn", T, async () => {
  const faux = createFaux([assistant(toolCall("tool-1", "echo", {})), assistant("never")]);
  const steering = queue();
  const followUp = queue();
  let prepared = 0;
  await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [tool("echo")] },
      config({
        getSteeringMessages: steering.get,
        getFollowUpMessages: followUp.get,
        prepareNextTurn: () => void prepared++,
        finishTurn: () => ({ action: "end" }),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 1);
  assert.equal(steering.polls, 1);
  assert.equal(followUp.polls, 0);
  assert.equal(prepared, 0);
});

test("AC-L18 T8 explicit continuation: 2 requests, 2 finishTurn calls, 4 steering polls, 2 follow-up polls", T, async () => {
  const faux = createFaux([assistant("first"), assistant("second")]);
  const steering = queue();
  const followUp = queue();
  let finishCalls = 0;
  let nextTurnCalls = 0;
  const { labels, result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [] },
      config({
        getSteeringMessages: steering.get,
        getFollowUpMessages: followUp.get,
        prepareNextTurn: () => void nextTurnCalls++,
        finishTurn: () => (finishCalls++ === 0 ? { action: "continue" } : undefined),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 2);
  assert.equal(finishCalls, 2);
  assert.equal(steering.polls, 4);
  assert.equal(followUp.polls, 2);
  assert.equal(nextTurnCalls, 1);
  // the context-only request sees the first answer as the tail
  assert.deepEqual(
    faux.calls[1].messages.map((m) => m.role),
    ["user", "assistant"],
  );
  assert.deepEqual(labels(), [
    "agent_start",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "turn_start",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.deepEqual(
    result.map((m) => m.role),
    ["user", "assistant", "assistant"],
  );
});

test("AC-L19 a natural tool-result request satisfies continue: 2 requests in total", T, async () => {
  const faux = createFaux([assistant(toolCall("tool-1", "echo", {})), assistant("done"), assistant("extra")]);
  let finishCalls = 0;
  await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [tool("echo")] },
      config({ finishTurn: () => (finishCalls++ === 0 ? { action: "continue" } : undefined) }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 2);
  assert.equal(finishCalls, 2);
});

for (const kind of ["steering", "follow-up"]) {
  test(`AC-L20 a natural ${kind} request satisfies continue: 2 requests, request 2 has the queued text`, T, async () => {
    const faux = createFaux([assistant("first"), assistant("second"), assistant("extra")]);
    const steering = queue();
    const followUp = queue();
    let finishCalls = 0;
    await collect(
      agentLoop(
        [userMessage("go")],
        { messages: [] },
        config({
          getSteeringMessages: steering.get,
          getFollowUpMessages: followUp.get,
          finishTurn: () => {
            if (finishCalls++ > 0) return undefined;
            (kind === "steering" ? steering : followUp).push(userMessage(`queued ${kind} text`));
            return { action: "continue" };
          },
        }),
        undefined,
        faux.streamFn,
      ),
    );
    assert.equal(faux.calls.length, 2);
    assert.ok(!requestText(faux.calls[0]).includes(`queued ${kind} text`));
    assert.ok(requestText(faux.calls[1]).includes(`queued ${kind} text`));
    assert.deepEqual(
      faux.calls[1].messages.map((m) => m.role),
      ["user", "assistant", "user"],
    );
  });
}

test("AC-L21 prepareRequest sees injected steering and replaces model, messages and thinking level", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const steer = userMessage("steer now");
  const steering = queue([steer]);
  const canonical = userMessage("canonical");
  const other = model({ id: "other-model" });
  const baseConfig = config({ getSteeringMessages: steering.get });
  const requests = [];
  baseConfig.prepareRequest = (req, signal) => {
    requests.push({
      roles: req.context.messages.map((m) => m.role),
      hasSteer: req.context.messages.includes(steer),
      model: req.model,
      thinkingLevel: req.thinkingLevel,
      signal,
    });
    return { context: { ...req.context, messages: [canonical] }, model: other, thinkingLevel: "high" };
  };
  const controller = new AbortController();
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages: [] }, baseConfig, controller.signal, faux.streamFn),
  );
  assert.equal(requests.length, 1);
  assert.deepEqual(requests[0].roles, ["user", "user"]);
  assert.equal(requests[0].hasSteer, true);
  assert.equal(requests[0].model, baseConfig.model);
  assert.equal(requests[0].thinkingLevel, "off");
  assert.equal(requests[0].signal, controller.signal);
  assert.equal(faux.calls.length, 1);
  assert.equal(faux.calls[0].model, other);
  assert.equal(faux.calls[0].options.reasoning, "high");
  assert.equal(faux.calls[0].messages.length, 1);
  assert.equal(faux.calls[0].messages[0], canonical);
  assert.equal(result.at(-1).thinkingLevel, "high");
  assert.equal(result.at(-1).model, "other-model");
  // newMessages is never rewritten
  assert.deepEqual(
    result.map((m) => firstText(m)),
    ["go", "steer now", "ok"],
  );
});

test("AC-L22 steering queued during the first prepareRequest reaches only request 2; 3 steering polls", T, async () => {
  const faux = createFaux([assistant("first"), assistant("second")]);
  const steering = queue();
  let preparations = 0;
  await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [] },
      config({
        getSteeringMessages: steering.get,
        prepareRequest: () => {
          if (preparations++ === 0) steering.push(userMessage("late steer"));
        },
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.deepEqual(
    faux.calls.map((c) => requestText(c).includes("late steer")),
    [false, true],
  );
  assert.equal(preparations, 2);
  assert.equal(steering.polls, 3);
});

test("AC-L23 prepareNextTurn returning a new context plus a system message reaches request 2", T, async () => {
  const faux = createFaux([assistant(toolCall("tool-1", "echo", {})), assistant("done")]);
  let calls = 0;
  let replacement;
  const guidance = systemMessage("updated guidance");
  const { result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [tool("echo")] },
      config({
        prepareNextTurn: (turn) => {
          calls++;
          replacement = { ...turn.context, messages: [...turn.context.messages] };
          return { context: replacement, messages: [guidance] };
        },
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(calls, 1);
  assert.equal(faux.calls.length, 2);
  assert.ok(faux.calls[1].messages.includes(guidance));
  assert.equal(faux.calls[1].messages.at(-1), guidance);
  // later appends go into the replacement context's array
  assert.equal(replacement.messages.at(-2), guidance);
  assert.equal(replacement.messages.at(-1), result.at(-1));
  assert.deepEqual(
    result.map((m) => m.role),
    ["system", "user", "assistant", "toolResult", "system", "assistant"],
  );
});

test("AC-L24 steering queued during prepareNextTurn is picked up by S2 for request 2", T, async () => {
  const faux = createFaux([assistant(toolCall("tool-1", "echo", {})), assistant("done")]);
  const steering = queue();
  await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [], tools: [tool("echo")] },
      config({
        getSteeringMessages: steering.get,
        prepareNextTurn: () => void steering.push(userMessage("steer during prepare")),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 2);
  assert.ok(requestText(faux.calls[1]).includes("steer during prepare"));
  assert.equal(firstText(faux.calls[1].messages.at(-1)), "steer during prepare");
  // S0, S1, S2, S1
  assert.equal(steering.polls, 4);
});

test("AC-L31 agentLoopContinue on an empty context throws synchronously; stream function never called", T, () => {
  let called = 0;
  const streamFn = () => {
    called++;
    return createAssistantMessageEventStream();
  };
  assert.throws(
    () => agentLoopContinue({ messages: [] }, config(), undefined, streamFn),
    (err) => err instanceof Error && err.message === "Cannot continue: no messages in context",
  );
  assert.throws(
    () => agentLoopContinue({ messages: [userMessage("a"), assistant("b")] }, config(), undefined, streamFn),
    (err) => err instanceof Error && err.message === "Cannot continue from message role: assistant",
  );
  assert.equal(called, 0);
});

test("AC-L31 runAgentLoopContinue guards reject with the same texts before any event", T, async () => {
  const rec = recorder();
  await assert.rejects(
    runAgentLoopContinue({ messages: [] }, config(), rec.emit, undefined, createFaux().streamFn),
    (err) => err instanceof Error && err.message === "Cannot continue: no messages in context",
  );
  await assert.rejects(
    runAgentLoopContinue({ messages: [assistant("x")] }, config(), rec.emit, undefined, createFaux().streamFn),
    (err) => err.message === "Cannot continue from message role: assistant",
  );
  assert.equal(rec.events.length, 0);
});

test("AC-L32 continuation returns [assistant] with exactly one message_end", T, async () => {
  const faux = createFaux([assistant("continued")]);
  const user = userMessage("hi");
  const { result, events, labels } = await collect(
    agentLoopContinue({ messages: [user] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(
    result.map((m) => m.role),
    ["assistant"],
  );
  assert.equal(events.filter((e) => e.type === "message_end").length, 1);
  assert.deepEqual(labels(), [
    "agent_start",
    "turn_start",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.equal(faux.calls[0].messages[0], user);
});

test("AC-L33 a custom tail converted to user by convertToLlm gives one assistant result", T, async () => {
  const faux = createFaux([assistant("answer")]);
  const custom = { role: "custom", payload: "do it", timestamp: 1 };
  const { result } = await collect(
    agentLoopContinue(
      { messages: [custom] },
      config({
        convertToLlm: (messages) =>
          messages.map((m) => (m.role === "custom" ? { role: "user", content: m.payload, timestamp: m.timestamp } : m)),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(result.length, 1);
  assert.equal(result[0].role, "assistant");
  assert.deepEqual(faux.calls[0].messages, [{ role: "user", content: "do it", timestamp: 1 }]);
});

test("AC-L35 text_delta before start: no message_update, but message_start and message_end", T, async () => {
  const final = assistant("hello");
  let partialSeen;
  const streamFn = () => {
    const s = createAssistantMessageEventStream();
    setImmediate(() => {
      const partial = { ...final, content: [text("he")], stopReason: "pending" };
      partialSeen = partial;
      s.push({ type: "text_delta", contentIndex: 0, delta: "he", partial });
      s.push({ type: "done", reason: "stop", message: final });
    });
    return s;
  };
  const { events, labels, result } = await collect(
    agentLoop([userMessage("hi")], { messages: [] }, config(), undefined, streamFn),
  );
  assert.ok(partialSeen);
  assert.equal(events.filter((e) => e.type === "message_update").length, 0);
  assert.deepEqual(labels({ updates: true }), [
    "agent_start",
    "turn_start",
    "message_start:user",
    "message_end:user",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  const start = events.find((e) => e.type === "message_start" && e.message.role === "assistant");
  const end = events.find((e) => e.type === "message_end" && e.message.role === "assistant");
  assert.notEqual(start.message, final); // a shallow copy
  assert.equal(start.message.content, final.content);
  assert.equal(end.message, final);
  assert.equal(result.at(-1), final);
});

// ---------------------------------------------------------------------------------------------
// §3.2 / §3.3 scheduling details
// ---------------------------------------------------------------------------------------------

test("L-3.3 S0 steering follows the prompts in the first turn, before prepareRequest", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const steering = queue([userMessage("s0")]);
  const order = [];
  const rec = recorder((e) => order.push(e.type.startsWith("message_") ? `${e.type}:${firstText(e.message) ?? e.message.role}` : e.type));
  await runAgentLoop(
    [userMessage("prompt")],
    { messages: [] },
    config({ getSteeringMessages: steering.get, prepareRequest: () => void order.push("prepareRequest") }),
    rec.emit,
    undefined,
    faux.streamFn,
  );
  assert.deepEqual(order.slice(0, 7), [
    "agent_start",
    "turn_start",
    "message_start:prompt",
    "message_end:prompt",
    "message_start:s0",
    "message_end:s0",
    "prepareRequest",
  ]);
});

test("L-3.3 one-at-a-time steering: S2 does not re-poll while a message is pending", T, async () => {
  const faux = createFaux([assistant("1"), assistant("2"), assistant("3")]);
  const steering = queue([], { mode: "one-at-a-time" });
  let finishCalls = 0;
  await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [] },
      config({
        getSteeringMessages: steering.get,
        finishTurn: () => {
          if (finishCalls++ === 0) steering.push(userMessage("a"), userMessage("b"));
        },
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 3);
  assert.deepEqual(
    faux.calls.map((c) => c.messages.filter((m) => m.role === "user").map(firstText)),
    [["go"], ["go", "a"], ["go", "a", "b"]],
  );
  // S0, S1 (a), S1 (b), S1 (empty); never S2 while a message was pending
  assert.equal(steering.polls, 4);
});

test("L-3.2 follow-ups are polled only when the inner loop ends and start a new turn", T, async () => {
  const faux = createFaux([assistant(toolCall("t1", "echo", {})), assistant("after tool"), assistant("after follow-up")]);
  const followUp = queue([userMessage("follow")]);
  const { labels } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([tool("echo")])], tools: [tool("echo")] },
      config({ getFollowUpMessages: followUp.get }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 3);
  assert.equal(followUp.polls, 2);
  assert.ok(!requestText(faux.calls[1]).includes("follow"));
  assert.ok(requestText(faux.calls[2]).includes("follow"));
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

test("L-3.2.1 queue getters returning undefined or null count as empty", T, async () => {
  const faux = createFaux([assistant("ok")]);
  let polls = 0;
  const { result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [] },
      config({
        getSteeringMessages: async () => (polls++, undefined),
        getFollowUpMessages: async () => (polls++, null),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(faux.calls.length, 1);
  assert.equal(polls, 3);
  assert.equal(result.length, 2);
});

test("L-3.2.1 prepareNextTurn thinkingLevel and model last for the rest of the run; 'off' clears reasoning", T, async () => {
  const faux = createFaux([
    assistant(toolCall("a", "echo", {})),
    assistant(toolCall("b", "echo", {})),
    assistant("done"),
  ]);
  const m2 = model({ id: "m2" });
  let n = 0;
  const { result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([tool("echo")])], tools: [tool("echo")] },
      config({
        reasoning: "low",
        prepareNextTurn: () => (n++ === 0 ? { model: m2, thinkingLevel: "high" } : { thinkingLevel: "off" }),
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.deepEqual(
    faux.calls.map((c) => [c.model.id, c.options.reasoning]),
    [
      ["faux-1", "low"],
      ["m2", "high"],
      ["m2", undefined],
    ],
  );
  assert.deepEqual(
    result.filter((m) => m.role === "assistant").map((m) => m.thinkingLevel),
    ["low", "high", "off"],
  );
});

test("L-3.1.3 agentLoop does not mutate the caller's context array; prompts keep their identity", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const messages = [userMessage("old"), assistant("old answer")];
  const prompt = userMessage("new");
  const { result, events } = await collect(agentLoop([prompt], { messages }, config(), undefined, faux.streamFn));
  assert.equal(messages.length, 2);
  assert.equal(result[0], prompt);
  assert.equal(events.find((e) => e.type === "message_start").message, prompt);
  assert.equal(events.find((e) => e.type === "message_end").message, prompt);
  assert.equal(faux.calls[0].messages[2], prompt);
});

// ---------------------------------------------------------------------------------------------
// §3.4 declareToolChanges
// ---------------------------------------------------------------------------------------------

test("L-3.4 undeclared tools: a system message is inserted before the first non-system prompt", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const echo = tool("echo", undefined, {
    parameters: { type: "object", properties: { v: { type: "string", description: undefined } } },
    extra: "ignored",
  });
  const before = Date.now();
  const u1 = userMessage("go");
  const u2 = userMessage("now");
  const { result, labels } = await collect(
    agentLoop([u1, u2], { messages: [], tools: [echo] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(labels().slice(0, 8), [
    "agent_start",
    "turn_start",
    "message_start:system",
    "message_end:system",
    "message_start:user",
    "message_end:user",
    "message_start:user",
    "message_end:user",
  ]);
  assert.equal(result[1], u1);
  assert.equal(result[2], u2);
  const inserted = result[0];
  assert.deepEqual(Object.keys(inserted), ["role", "content", "timestamp", "toolsAdded"]);
  assert.equal(inserted.role, "system");
  assert.equal(inserted.content, "");
  assert.ok(inserted.timestamp >= before && inserted.timestamp <= Date.now());
  assert.deepEqual(JSON.parse(JSON.stringify(inserted.toolsAdded)), [
    { name: "echo", description: "echo tool", parameters: { type: "object", properties: { v: { type: "string" } } } },
  ]);
  assert.deepEqual(Object.keys(inserted.toolsAdded[0]), ["name", "description", "parameters"]);
  assert.equal(inserted.toolsAdded[0].execute, undefined);
  assert.equal(inserted.toolsAdded[0].label, undefined);
  assert.deepEqual(
    faux.calls[0].messages.map((m) => m.role),
    ["system", "user", "user"],
  );
});

test("L-3.4 constrainedSampling is kept in declarations only when defined", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const a = tool("a", undefined, { constrainedSampling: false });
  const b = tool("b", undefined, { constrainedSampling: undefined });
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages: [], tools: [a, b] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(result[0].toolsAdded, [
    { name: "a", description: "a tool", parameters: { type: "object", properties: {} }, constrainedSampling: false },
    { name: "b", description: "b tool", parameters: { type: "object", properties: {} } },
  ]);
});

test("L-3.4 tools already declared in the context: no system message", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const echo = tool("echo");
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages: [declaring([echo])], tools: [echo] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(
    result.map((m) => m.role),
    ["user", "assistant"],
  );
});

test("L-3.4 a pending system message without tool fields and no changes stays the same object", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const echo = tool("echo");
  const pendingSys = { role: "system", content: "extra", timestamp: 1, toolsAdded: [] };
  const { result } = await collect(
    agentLoop(
      [pendingSys, userMessage("go")],
      { messages: [declaring([echo])], tools: [echo] },
      config(),
      undefined,
      faux.streamFn,
    ),
  );
  assert.equal(result[0], pendingSys);
  assert.deepEqual(pendingSys.toolsAdded, []);
});

test("L-3.4 a pending system message gains the tool changes as a copy (keys kept, tool fields last)", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const echo = tool("echo");
  const pendingSys = { role: "system", content: "", sections: { style: "terse" }, timestamp: 1 };
  const { result } = await collect(
    agentLoop([pendingSys, userMessage("go")], { messages: [], tools: [echo] }, config(), undefined, faux.streamFn),
  );
  assert.notEqual(result[0], pendingSys);
  assert.deepEqual(Object.keys(result[0]), ["role", "content", "sections", "timestamp", "toolsAdded"]);
  assert.equal(result[0].timestamp, 1);
  assert.deepEqual(
    result[0].toolsAdded.map((t) => t.name),
    ["echo"],
  );
  assert.equal(pendingSys.toolsAdded, undefined);
  assert.deepEqual(
    result.map((m) => m.role),
    ["system", "user", "assistant"],
  );
});

test("L-3.4 a pending system message's claimed tool fields are overwritten by the real delta", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const first = tool("first");
  const second = tool("second");
  const claim = {
    role: "system",
    content: "",
    timestamp: 2,
    toolsAdded: declaring([second]).toolsAdded,
    toolsRemoved: [{ name: "first" }],
  };
  const { result } = await collect(
    agentLoop(
      [claim, userMessage("go")],
      { messages: [declaring([first])], tools: [first] },
      config(),
      undefined,
      faux.streamFn,
    ),
  );
  assert.notEqual(result[0], claim);
  assert.deepEqual(result[0], { role: "system", content: "", timestamp: 2 });
});

test("L-3.4 a changed tool is declared as removed and added; a removed tool only as removed", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const a = tool("a");
  const b = tool("b");
  const a2 = tool("a", undefined, { description: "a tool, v2" });
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages: [declaring([a, b])], tools: [a2] }, config(), undefined, faux.streamFn),
  );
  assert.equal(result[0].role, "system");
  assert.deepEqual(result[0].toolsAdded, [
    { name: "a", description: "a tool, v2", parameters: { type: "object", properties: {} } },
  ]);
  assert.deepEqual(result[0].toolsRemoved, [{ name: "a" }, { name: "b" }]);
  assert.deepEqual(Object.keys(result[0]), ["role", "content", "timestamp", "toolsAdded", "toolsRemoved"]);
});

test("L-3.4 tools are keyed by their name values: a declared name 1 is not the tool named \"1\"", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const one = tool("1");
  const declared = { ...declaring([one]).toolsAdded[0], name: 1 };
  const sys = { role: "system", content: "", timestamp: 1, toolsAdded: [declared] };
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages: [sys], tools: [one] }, config(), undefined, faux.streamFn),
  );
  assert.equal(result[0].role, "system");
  assert.deepEqual(
    result[0].toolsAdded.map((t) => t.name),
    ["1"],
  );
  assert.deepEqual(result[0].toolsRemoved, [{ name: 1 }]);
});

test("L-3.4 declarations compare by their JSON text: a toJSON description equal in text is unchanged, a deep schema change is not", T, async () => {
  const faux = createFaux([assistant("ok"), assistant("ok")]);
  const schema = () => ({ type: "object", properties: { p: { type: "string", enum: ["x", "y"] } } });
  const declared = { name: "a", description: "d", parameters: schema() };
  const sys = { role: "system", content: "", timestamp: 1, toolsAdded: [declared] };
  const same = tool("a", undefined, { description: { toJSON: () => "d" }, parameters: schema() });
  const first = await collect(agentLoop([userMessage("go")], { messages: [sys], tools: [same] }, config(), undefined, faux.streamFn));
  assert.deepEqual(
    first.result.map((m) => m.role),
    ["user", "assistant"],
  );
  const changed = tool("a", undefined, { description: "d", parameters: schema() });
  changed.parameters.properties.p.enum.push("z");
  const second = await collect(agentLoop([userMessage("go")], { messages: [sys], tools: [changed] }, config(), undefined, faux.streamFn));
  assert.equal(second.result[0].role, "system");
  assert.deepEqual(second.result[0].toolsRemoved, [{ name: "a" }]);
  assert.deepEqual(second.result[0].toolsAdded[0].parameters.properties.p.enum, ["x", "y", "z"]);
});

test("L-3.4 parameters are stringified on their own, as toToolDeclaration does (toJSON sees the key \"\")", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const schema = { type: "object", properties: {} };
  const sys = { role: "system", content: "", timestamp: 1, toolsAdded: [{ name: "a", description: "a tool", parameters: schema }] };
  const parameters = { toJSON: (key) => (key === "" ? schema : { keyed: key }) };
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages: [sys], tools: [tool("a", undefined, { parameters })] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(
    result.map((m) => m.role),
    ["user", "assistant"],
  );
});

test("L-3.4 a redeclared tool after a removal counts once; the last declaration wins", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const a = tool("a");
  const old = tool("a", undefined, { description: "old" });
  const messages = [
    declaring([old]),
    { role: "system", content: "", timestamp: 2, toolsRemoved: [{ name: "a" }] },
    { role: "system", content: "", timestamp: 3, toolsAdded: declaring([old]).toolsAdded },
    { role: "system", content: "", timestamp: 4, toolsAdded: declaring([a]).toolsAdded },
  ];
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages, tools: [a] }, config(), undefined, faux.streamFn),
  );
  assert.deepEqual(
    result.map((m) => m.role),
    ["user", "assistant"],
  );
});

test("L-3.4.3 tools changed in prepareRequest are declared before the next request, alone after turn_start", T, async () => {
  const faux = createFaux([assistant(toolCall("c1", "a", {})), assistant("done")]);
  const a = tool("a");
  const b = tool("b");
  let n = 0;
  const { labels, result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([a])], tools: [a] },
      config({
        prepareRequest: (req) => {
          if (n++ === 0) return { context: { ...req.context, tools: [a, b] } };
        },
      }),
      undefined,
      faux.streamFn,
    ),
  );
  assert.deepEqual(labels(), [
    "agent_start",
    "turn_start",
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
    "message_start:system",
    "message_end:system",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.equal(faux.calls[0].messages.filter((m) => m.role === "system").length, 1);
  const declared = result.find((m) => m.role === "system");
  assert.deepEqual(
    declared.toolsAdded.map((t) => t.name),
    ["b"],
  );
  assert.equal(declared.toolsRemoved, undefined);
  assert.equal(faux.calls[1].messages.at(-1), declared);
});

// ---------------------------------------------------------------------------------------------
// §3.5 request boundary and stream options
// ---------------------------------------------------------------------------------------------

test("L-3.5.1 stream options: config spread, identity, apiKey, reasoning, the run's signal", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const controller = new AbortController();
  const cfg = config({
    temperature: 0.25,
    sessionId: "s-1",
    maxTokens: 77,
    metadata: { user: "u" },
    apiKey: "static-key",
    reasoning: "medium",
  });
  await collect(agentLoop([userMessage("go")], { messages: [] }, cfg, controller.signal, faux.streamFn));
  const o = faux.calls[0].options;
  assert.equal(faux.calls[0].model, cfg.model);
  assert.equal(o.temperature, 0.25);
  assert.equal(o.sessionId, "s-1");
  assert.equal(o.maxTokens, 77);
  assert.deepEqual(o.metadata, { user: "u" });
  assert.equal(o.apiKey, "static-key");
  assert.equal(o.reasoning, "medium");
  assert.equal(o.signal, controller.signal);
  assert.deepEqual(o.identity, PI_IDENTITY);
});

test("L-3.5.1 identity: DEFAULT_AGENT_IDENTITY overlaid field by field with config.identity", T, async () => {
  assert.deepEqual(DEFAULT_AGENT_IDENTITY, PI_IDENTITY);
  const cases = [
    [undefined, PI_IDENTITY],
    [{ userAgent: "short" }, { ...PI_IDENTITY, userAgent: "short" }],
    [{ attribution: null }, { attribution: null }],
    [
      { attribution: { name: "me", url: "https://me.dev" }, version: "9" },
      { attribution: { name: "me", url: "https://me.dev" }, version: "9" },
    ],
  ];
  for (const [identity, expected] of cases) {
    const faux = createFaux([assistant("ok")]);
    await collect(agentLoop([userMessage("go")], { messages: [] }, config({ identity }), undefined, faux.streamFn));
    assert.deepEqual(faux.calls[0].options.identity, expected);
  }
});

test("L-3.5.1 apiKey: getApiKey(model.provider) first, falsy falls back to config.apiKey", T, async () => {
  const asked = [];
  for (const [returned, expected] of [
    ["dynamic", "dynamic"],
    [undefined, "static"],
    ["", "static"],
  ]) {
    const faux = createFaux([assistant("ok")]);
    await collect(
      agentLoop(
        [userMessage("go")],
        { messages: [] },
        config({
          model: model({ provider: "acme" }),
          apiKey: "static",
          getApiKey: async (provider) => {
            asked.push(provider);
            return returned;
          },
        }),
        undefined,
        faux.streamFn,
      ),
    );
    assert.equal(faux.calls[0].options.apiKey, expected);
  }
  assert.deepEqual(asked, ["acme", "acme", "acme"]);
});

test("L-3.5.1 boundary order: transformContext, convertToLlm, getApiKey, streamFn — per request", T, async () => {
  const order = [];
  const faux = createFaux([assistant(toolCall("c1", "echo", {})), assistant("done")]);
  await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([tool("echo")])], tools: [tool("echo")] },
      config({
        transformContext: async (m) => (order.push("transformContext"), m),
        convertToLlm: (m) => (order.push("convertToLlm"), convertToLlm(m)),
        getApiKey: () => void order.push("getApiKey"),
      }),
      undefined,
      (m, c, o) => (order.push("streamFn"), faux.streamFn(m, c, o)),
    ),
  );
  assert.deepEqual(order, [
    "transformContext",
    "convertToLlm",
    "getApiKey",
    "streamFn",
    "transformContext",
    "convertToLlm",
    "getApiKey",
    "streamFn",
  ]);
});

// ---------------------------------------------------------------------------------------------
// §3.6 streaming and the partial message
// ---------------------------------------------------------------------------------------------

test("L-3.6.1/2 message_start and message_update carry shallow copies of the live partial", T, async () => {
  const faux = createFaux([
    assistant([thinking("let me think"), text("hello world"), toolCall("c1", "echo", { v: "abc" })]),
  ]);
  const checks = [];
  const rec = recorder((e) => {
    if (e.type === "message_start" && e.message.role === "assistant") {
      checks.push({ kind: "start", stopReason: e.message.stopReason, role: e.message.role });
    }
    if (e.type === "message_update") {
      const p = e.assistantMessageEvent.partial;
      checks.push({
        kind: e.assistantMessageEvent.type,
        copy: e.message !== p,
        sameContent: JSON.stringify(e.message.content) === JSON.stringify(p.content),
        stopReason: e.message.stopReason,
      });
    }
  });
  await runAgentLoop(
    [userMessage("go")],
    { messages: [declaring([tool("echo")])], tools: [tool("echo")] },
    config({ finishTurn: () => ({ action: "end" }) }),
    rec.emit,
    undefined,
    faux.streamFn,
  );
  assert.deepEqual(checks[0], { kind: "start", stopReason: "pending", role: "assistant" });
  const updates = checks.slice(1);
  assert.ok(updates.length >= 8);
  assert.ok(updates.every((u) => u.copy && u.sameContent && u.stopReason === "pending"));
  assert.deepEqual(
    [...new Set(updates.map((u) => u.kind))],
    [
      "thinking_start",
      "thinking_delta",
      "thinking_end",
      "text_start",
      "text_delta",
      "text_end",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_end",
    ],
  );
  const start = rec.events.find((e) => e.type === "message_start" && e.message.role === "assistant");
  const update = rec.ofType("message_update")[0];
  assert.notEqual(start.message, update.assistantMessageEvent.partial);
  assert.equal(rec.ofType("message_update").at(-1).assistantMessageEvent.toolCall.arguments.v, "abc");
});

test("L-3.6.3 message_end carries the final object: the one in the context, the result and done.message", T, async () => {
  const faux = createFaux([assistant(toolCall("c1", "echo", {})), assistant("bye")], { finalCopy: true });
  let doneMessages = [];
  const streamFn = (m, c, o) => {
    const s = faux.streamFn(m, c, o);
    s.result().then((msg) => doneMessages.push(msg));
    return s;
  };
  let contextSeenByHook;
  const { events, result } = await collect(
    agentLoop(
      [userMessage("go")],
      { messages: [declaring([tool("echo")])], tools: [tool("echo")] },
      config({
        beforeToolCall: ({ context }) => {
          contextSeenByHook = context.messages.at(-1);
        },
      }),
      undefined,
      streamFn,
    ),
  );
  const ends = events.filter((e) => e.type === "message_end" && e.message.role === "assistant");
  assert.equal(ends.length, 2);
  assert.equal(ends[0].message, doneMessages[0]);
  assert.equal(ends[1].message, doneMessages[1]);
  assert.equal(result[1], doneMessages[0]);
  assert.equal(result[3], doneMessages[1]);
  assert.equal(contextSeenByHook, doneMessages[0]);
  // the partial was replaced, not kept, in the context of request 2
  assert.equal(faux.calls[1].messages[2], doneMessages[0]);
  const updates = events.filter((e) => e.type === "message_update");
  assert.ok(!faux.calls[1].messages.includes(updates[0].assistantMessageEvent.partial));
});

test("L-3.6.3 thinkingLevel is stamped on the final message, after durationMs", T, async () => {
  for (const [reasoning, expected] of [
    [undefined, "off"],
    ["high", "high"],
  ]) {
    const faux = createFaux([assistant("ok")]);
    const { result } = await collect(
      agentLoop([userMessage("go")], { messages: [] }, config({ reasoning }), undefined, faux.streamFn),
    );
    const final = result.at(-1);
    assert.equal(final.thinkingLevel, expected);
    assert.equal(typeof final.durationMs, "number");
    assert.deepEqual(Object.keys(final).slice(-2), ["durationMs", "thinkingLevel"]);
    assert.equal(faux.calls[0].options.reasoning, reasoning);
  }
});

test("L-3.6.3 final = source.result() when the source has one", T, async () => {
  const eventMessage = assistant("from event");
  const resultMessage = assistant("from result");
  const source = {
    async *[Symbol.asyncIterator]() {
      yield { type: "start", partial: { ...eventMessage, stopReason: "pending" } };
      yield { type: "done", reason: "stop", message: eventMessage };
    },
    result: async () => resultMessage,
  };
  const { events, result } = await collect(
    agentLoop([userMessage("go")], { messages: [] }, config(), undefined, () => source),
  );
  assert.equal(result.at(-1), resultMessage);
  assert.equal(events.filter((e) => e.type === "message_end").at(-1).message, resultMessage);
  assert.equal(resultMessage.thinkingLevel, "off");
});

test("L-3.6.3 source without result(): the done event's message is the final (StreamFnLike)", deviation("StreamFnLike sources without result()"), async () => {
  const message = assistant("plain iterable");
  const source = {
    async *[Symbol.asyncIterator]() {
      yield { type: "start", partial: { ...message, stopReason: "pending" } };
      yield { type: "text_start", contentIndex: 0, partial: { ...message, stopReason: "pending" } };
      yield { type: "done", reason: "stop", message };
    },
  };
  const { result, labels } = await collect(
    agentLoop([userMessage("go")], { messages: [] }, config(), undefined, async () => source),
  );
  assert.equal(result.at(-1), message);
  assert.equal(message.thinkingLevel, "off");
  assert.deepEqual(labels({ updates: true }).slice(4), [
    "message_start:assistant",
    "message_update:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
});

test("L-3.6.3 a lone error event (setup failure) gives message_start + message_end of the error", T, async () => {
  const failure = { ...assistant([], { stopReason: "error" }), errorMessage: "setup failed" };
  const streamFn = () => {
    const s = createAssistantMessageEventStream();
    queueMicrotask(() => s.push({ type: "error", reason: "error", error: failure }));
    return s;
  };
  const { labels, result } = await collect(
    agentLoop([userMessage("go")], { messages: [] }, config(), undefined, streamFn),
  );
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
  assert.equal(result.at(-1), failure);
  assert.equal(failure.errorMessage, "setup failed");
  assert.equal(failure.thinkingLevel, "off");
});

test("L-3.6 an async streamFn (Promise of a stream) is awaited", T, async () => {
  const faux = createFaux([assistant("async")]);
  const { result } = await collect(
    agentLoop([userMessage("go")], { messages: [] }, config(), undefined, async (m, c, o) => faux.streamFn(m, c, o)),
  );
  assert.equal(firstText(result.at(-1)), "async");
});

test("S-2.7 faux stream follows the protocol: start, block events, done; partial args at least {}", T, async () => {
  // Self-check of the test double against the impl's stream class.
  const faux = createFaux([assistant([text("abcdefgh"), toolCall("c1", "t", { k: "value", n: [1, 2] })])]);
  const s = faux.streamFn(model(), { messages: [] }, {});
  const types = [];
  const argSnapshots = [];
  for await (const e of s) {
    types.push(e.type);
    if (e.type === "toolcall_delta") argSnapshots.push(JSON.stringify(e.partial.content[e.contentIndex].arguments));
  }
  assert.equal(types[0], "start");
  assert.equal(types.at(-1), "done");
  assert.ok(types.includes("text_delta") && types.includes("toolcall_delta"));
  assert.equal(argSnapshots.at(-1), JSON.stringify({ k: "value", n: [1, 2] }));
  assert.ok(argSnapshots.every((a) => a.startsWith("{")));
  const final = await s.result();
  assert.equal(final.stopReason, "toolUse");
  assert.equal(typeof final.durationMs, "number");
  const empty = createFaux();
  const lone = await empty.streamFn(model(), { messages: [] }, {}).result();
  assert.equal(lone.errorMessage, "No more faux responses queued");
});

// ---------------------------------------------------------------------------------------------
// API-1.3.5 `this` bindings; API-1.4 defaults
// ---------------------------------------------------------------------------------------------

test("API-1.3.5 this: tools for execute/prepareArguments, the config for hooks, undefined for streamFn/emit/onUpdate", T, async () => {
  const seen = {};
  const faux = createFaux([assistant(toolCall("c1", "echo", {})), assistant("done")]);
  const echo = tool("echo", async function (id, args, signal, onUpdate) {
    seen.execute = this;
    await onUpdate(okResult("partial"));
    return okResult();
  });
  echo.prepareArguments = function (args) {
    seen.prepareArguments = this;
    return args;
  };
  const cfg = config();
  const hook = (name, value) =>
    function () {
      seen[name] = this;
      return value;
    };
  cfg.convertToLlm = function (messages) {
    seen.convertToLlm = this;
    return convertToLlm(messages);
  };
  cfg.transformContext = async function (messages) {
    seen.transformContext = this;
    return messages;
  };
  cfg.getApiKey = hook("getApiKey", undefined);
  cfg.getSteeringMessages = hook("getSteeringMessages", []);
  cfg.getFollowUpMessages = hook("getFollowUpMessages", []);
  cfg.beforeToolCall = hook("beforeToolCall", undefined);
  cfg.afterToolCall = hook("afterToolCall", undefined);
  cfg.finishTurn = hook("finishTurn", undefined);
  cfg.prepareRequest = hook("prepareRequest", undefined);
  cfg.prepareNextTurn = hook("prepareNextTurn", undefined);
  let emitThis = "unset";
  let streamThis = "unset";
  await runAgentLoop(
    [userMessage("go")],
    { messages: [declaring([echo])], tools: [echo] },
    cfg,
    function () {
      emitThis = this;
    },
    undefined,
    function (m, c, o) {
      streamThis = this;
      return faux.streamFn(m, c, o);
    },
  );
  assert.equal(seen.execute, echo);
  assert.equal(seen.prepareArguments, echo);
  for (const name of [
    "convertToLlm",
    "transformContext",
    "getApiKey",
    "getSteeringMessages",
    "getFollowUpMessages",
    "beforeToolCall",
    "afterToolCall",
    "finishTurn",
    "prepareRequest",
    "prepareNextTurn",
  ]) {
    assert.equal(seen[name], cfg, `this of ${name}`);
  }
  assert.equal(emitThis, undefined);
  assert.equal(streamThis, undefined);
});

test("API-1.3.5 onUpdate is called with this undefined (runToolCall options.onUpdate)", T, async () => {
  const { runToolCall } = await import("./impl.mjs");
  let onUpdateThis = "unset";
  const echo = tool("echo", async (id, args, signal, onUpdate) => {
    await onUpdate(okResult("p"));
    return okResult();
  });
  const options = {
    tools: [echo],
    assistantMessage: assistant(toolCall("c1", "echo", {})),
    context: { messages: [], tools: [echo] },
    onUpdate: function () {
      onUpdateThis = this;
    },
  };
  const outcome = await runToolCall(toolCall("c1", "echo", {}), options);
  assert.equal(outcome.isError, false);
  assert.equal(onUpdateThis, undefined);
});

test("API-1.4.1 getDefaultStreamFn returns the configured default", deviation("getDefaultStreamFn is module-internal"), () => {
  const fn = () => createAssistantMessageEventStream();
  setDefaultStreamFn(fn);
  try {
    assert.equal(getDefaultStreamFn(), fn);
  } finally {
    setDefaultStreamFn(undefined);
  }
  assert.equal(typeof getDefaultStreamFn(), "function");
  assert.notEqual(getDefaultStreamFn(), fn);
});

test("API-1.5.4 the loop stream completes on agent_end with result agent_end.messages", T, async () => {
  const faux = createFaux([assistant("ok")]);
  const stream = agentLoop([userMessage("go")], { messages: [] }, config(), undefined, faux.streamFn);
  const resultPromise = stream.result();
  const events = [];
  for await (const e of stream) events.push(e);
  const result = await resultPromise;
  assert.equal(events.at(-1).type, "agent_end");
  assert.equal(result, events.at(-1).messages);
});

// ---------------------------------------------------------------------------------------------
// Hook reads in the reference's order
// ---------------------------------------------------------------------------------------------

test("L-3.5.1 a turn reads config hooks as `config.hook?.(args)` does: prepareRequest first, its model and level only when it exists", T, async () => {
  const KEYS = new Set(["prepareRequest", "prepareNextTurn", "finishTurn", "model", "reasoning"]);
  const reads = async (hooks) => {
    const log = [];
    const base = { model: model(), convertToLlm, reasoning: "low", ...hooks };
    const cfg = new Proxy(base, {
      get(t, k, r) {
        if (KEYS.has(k)) log.push(k);
        return Reflect.get(t, k, r);
      },
    });
    const faux = createFaux([assistant([toolCall("c1", "echo", {})], "toolUse"), assistant([text("done")])]);
    const stream = agentLoop([userMessage("go")], { systemPrompt: "", messages: [], tools: [tool("echo")] }, cfg, undefined, faux.streamFn);
    log.length = 0; // what agentLoop reads before it returns (our E-8.1 argument checks) is not a turn's
    for await (const _ of stream);
    return log;
  };
  // two turns: finishTurn after each, prepareNextTurn before the second, prepareRequest before each request
  const turn = ["model", "model", "reasoning", "reasoning"];
  assert.deepEqual(await reads({}), ["prepareRequest", ...turn, "finishTurn", "prepareNextTurn", "prepareRequest", ...turn, "finishTurn"]);
  // with the hooks: prepareRequest and its arguments; `config.model` for the stream call; the stream options' copy of
  // the config (its own keys in order: model, reasoning, prepareRequest, finishTurn); the level recorded on the
  // message; then finishTurn itself
  const withHooks = ["prepareRequest", "model", "reasoning", "model", "model", "reasoning", "prepareRequest", "finishTurn", "reasoning", "finishTurn"];
  assert.deepEqual(await reads({ prepareRequest: () => undefined, finishTurn: () => undefined }), [...withHooks, "prepareNextTurn", ...withHooks]);
});
