// Agent queues and continuation (SPEC §5.3, A-5.4.2, A-5.4.3, §7 D2 traces D2-a and D2-b).
// Appendix A items AC-A18…AC-A21, AC-A26, AC-A27, AC-A30…AC-A35.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, IS_REFERENCE } from "./impl.mjs";
import { assistant, createFaux, okResult, tool, toolCall, userMessage, zeroUsage, model } from "./faux.mjs";
import {
  T,
  deviation,
  NO_MESSAGES,
  ASSISTANT_TAIL,
  makeAgent,
  record,
  roles,
  msgText,
  requestHas,
  userTexts,
} from "./agent-helpers.mjs";

const texts = (messages) => messages.map(msgText);

// ---------------------------------------------------------------------------------------------
// Appendix A
// ---------------------------------------------------------------------------------------------

test("AC-A18 steer() queues without touching the transcript", T, () => {
  const agent = makeAgent([]);
  const before = agent.state.messages;
  agent.steer(userMessage("steer"));
  assert.equal(agent.state.messages, before);
  assert.deepEqual(agent.state.messages, []);
  assert.equal(agent.hasQueuedMessages(), true);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["steer"]);
});

test("AC-A19 followUp() queues without touching the transcript", T, () => {
  const agent = makeAgent([], { initialState: { messages: [userMessage("u")] } });
  agent.followUp(userMessage("follow"));
  assert.deepEqual(roles(agent.state.messages), ["user"]);
  assert.equal(agent.hasQueuedMessages(), true);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["follow"]);
});

test("AC-A20 provider abort keeps both queues; continue() runs steering (request 2) then the follow-up (request 3)", T, async () => {
  const faux = createFaux([assistant("a long answer that the abort will cut short")], { delayMs: 1 });
  const agent = makeAgent(faux);
  let queued = false;
  const off = agent.subscribe((e) => {
    if (e.type === "message_update" && !queued) {
      queued = true;
      agent.steer(userMessage("steer"));
      agent.followUp(userMessage("follow"));
      agent.abort();
    }
  });
  await agent.prompt("go");
  off();
  assert.equal(faux.calls.length, 1);
  assert.equal(agent.state.messages.at(-1).stopReason, "aborted");
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["steer"]);
  agent.clearSteeringQueue();
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["follow"]);
  agent.steer(userMessage("steer"));
  faux.push(assistant("after steer"), assistant("after follow"));
  await agent.continue();
  assert.equal(faux.calls.length, 3);
  assert.ok(faux.calls.every((c) => !c.signalAbortedAtCall));
  assert.equal(faux.calls[1].messages.at(-1).content, "steer");
  assert.ok(!requestHas(faux.calls[1], "follow"));
  assert.equal(faux.calls[2].messages.at(-1).content, "follow");
  assert.deepEqual(texts(agent.state.messages).slice(2), ["steer", "after steer", "follow", "after follow"]);
  assert.equal(agent.hasQueuedMessages(), false);
});

test("AC-A20 normal completion keeps messages queued after the last poll; continue() delivers them (2 more requests)", T, async () => {
  const faux = createFaux([assistant("first"), assistant("after steer"), assistant("after follow")]);
  const agent = makeAgent(faux);
  const off = agent.subscribe((e) => {
    if (e.type === "agent_end") {
      agent.steer(userMessage("steer"));
      agent.followUp(userMessage("follow"));
    }
  });
  await agent.prompt("go");
  off();
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant"]);
  assert.equal(agent.hasQueuedMessages(), true);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["steer"]);
  await agent.continue();
  assert.equal(faux.calls.length, 3);
  assert.equal(faux.calls[1].messages.at(-1).content, "steer");
  assert.equal(faux.calls[2].messages.at(-1).content, "follow");
  assert.equal(agent.hasQueuedMessages(), false);
});

/** Trace D2-a: a tool aborted mid-batch while steering and follow-up are queued. */
test("AC-A20 (D2) trace D2-a: tool abort keeps both queues; 1 request; continue() → request 2 steering, request 3 follow-up", deviation("D2"), async () => {
  const t = tool("t", (id, args, signal) => {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new Error("tool aborted"));
      signal.addEventListener("abort", () => reject(new Error("tool aborted")), { once: true });
    });
  });
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("after steer"), assistant("after follow")]);
  const agent = makeAgent(faux, { initialState: { tools: [t] } });
  const rec = record(agent, (e) => {
    if (e.type === "tool_execution_start") {
      agent.steer(userMessage("steer"));
      agent.followUp(userMessage("follow"));
      agent.abort();
    }
  });
  await agent.prompt("go");
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(roles(agent.state.messages), ["system", "user", "assistant", "toolResult"]);
  assert.equal(agent.state.messages[3].isError, true);
  assert.equal(agent.hasQueuedMessages(), true);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["steer"]);
  assert.deepEqual(rec.labels().slice(-4), ["message_start:toolResult", "message_end:toolResult", "turn_end", "agent_end"]);
  assert.equal(rec.ofType("turn_start").length, 1);
  rec.unsubscribe();
  await agent.continue();
  assert.equal(faux.calls.length, 3);
  assert.ok(faux.calls.every((c) => !c.signalAbortedAtCall));
  assert.equal(faux.calls[1].messages.at(-1).content, "steer");
  assert.ok(!requestHas(faux.calls[1], "follow"));
  assert.equal(faux.calls[2].messages.at(-1).content, "follow");
  assert.deepEqual(roles(agent.state.messages), [
    "system",
    "user",
    "assistant",
    "toolResult",
    "user",
    "assistant",
    "user",
    "assistant",
  ]);
  assert.equal(agent.hasQueuedMessages(), false);
});

/** Trace D2-b: prepareNextTurn aborts after a queue poll drained a message. */
for (const variant of ["steer", "followUp"]) {
  test(`AC-A21 (D2) trace D2-b, ${variant} variant: prepareNextTurn aborts after the drain; no 2nd request; drained message then aborted assistant`, deviation("D2"), async () => {
    const faux = createFaux([assistant("first"), assistant("never")]);
    let prepared = 0;
    const agent = makeAgent(faux, {
      prepareNextTurn: () => {
        prepared++;
        agent.abort();
        return undefined;
      },
    });
    const rec = record(agent, (e) => {
      if (e.type === "message_end" && e.message.role === "assistant" && rec.ofType("message_end").length === 2) {
        agent[variant](userMessage(`queued by ${variant}`));
      }
    });
    await agent.prompt("go");
    assert.equal(prepared, 1);
    assert.equal(faux.calls.length, 1);
    assert.deepEqual(roles(agent.state.messages), ["user", "assistant", "user", "assistant"]);
    assert.equal(msgText(agent.state.messages[2]), `queued by ${variant}`);
    const last = agent.state.messages.at(-1);
    assert.equal(last.stopReason, "aborted");
    assert.equal(last.errorMessage, "Request was aborted");
    assert.deepEqual(last.content, [{ type: "text", text: "" }]);
    assert.deepEqual(last.usage, zeroUsage());
    assert.equal(last.model, model().id);
    assert.equal(rec.ofType("turn_start").length, 2);
    assert.equal(rec.ofType("turn_end").length, 2);
    assert.deepEqual(rec.labels(), [
      "agent_start",
      "turn_start",
      "message_start:user",
      "message_end:user",
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
    assert.equal(agent.state.errorMessage, "Request was aborted");
    assert.equal(agent.hasQueuedMessages(), false);
    assert.equal(agent.state.isStreaming, false);
  });
}

/** Trace D2-c (issue 14.2): steering an aborted run left queued goes before the next prompt's messages. */
test("(D2) trace D2-c: steering left by an aborted run reaches the transcript before the next prompt; the follow-up stays a follow-up", deviation("D2: the reference delivers it inside the aborted run"), async () => {
  const t = tool("t", (id, args, signal) => new Promise((resolve, reject) => {
    signal.addEventListener("abort", () => reject(new Error("tool aborted")), { once: true });
  }));
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("after next"), assistant("after follow")]);
  const agent = makeAgent(faux, { initialState: { tools: [t] } });
  const off = agent.subscribe((e) => {
    if (e.type === "tool_execution_start") {
      agent.steer(userMessage("s1"));
      agent.steer(userMessage("s2"));
      agent.followUp(userMessage("follow"));
      agent.abort();
    }
  });
  await agent.prompt("go");
  off();
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["s1"]);
  const rec = record(agent);
  await agent.prompt("next");
  assert.equal(faux.calls.length, 3);
  assert.deepEqual(userTexts(faux.calls[1]).slice(-3), ["s1", "s2", "next"]);
  assert.equal(faux.calls[2].messages.at(-1).content, "follow");
  assert.deepEqual(texts(agent.state.messages).slice(-6), ["s1", "s2", "next", "after next", "follow", "after follow"]);
  assert.deepEqual(rec.labels().slice(0, 8), [
    "agent_start", "turn_start",
    "message_start:user", "message_end:user", "message_start:user", "message_end:user", "message_start:user", "message_end:user",
  ]);
  assert.equal(agent.hasQueuedMessages(), false);
});

test("issue 14.2: steering queued while idle keeps the reference's order (prompt first); only what an abort left goes first", T, async () => {
  const faux = createFaux([assistant("first"), assistant("second")]);
  const agent = makeAgent(faux);
  await agent.prompt("go");
  agent.steer(userMessage("idle"));
  await agent.prompt("next");
  assert.deepEqual(texts(agent.state.messages), ["go", "first", "next", "idle", "second"]);
  assert.equal(faux.calls.length, 2);
  assert.deepEqual(userTexts(faux.calls[1]), ["go", "next", "idle"]);
});

test("issue 14.4 takeQueuedMessages(predicate): removes the selected by identity, steering first; the rest keep queue and mode", { ...T, skip: IS_REFERENCE && "not in pi-agent-core 1.6.0" }, async () => {
  const agent = makeAgent([]);
  const [s1, s2, f1, f2] = ["s1", "s2", "f1", "f2"].map((t) => userMessage(t));
  const twin = userMessage("s1"); // equal, not identical: stays
  agent.steer(s1);
  agent.steer(twin);
  agent.steer(s2);
  agent.followUp(f1);
  agent.followUp(f2);
  agent.followUpMode = "all";
  const seen = [];
  const taken = agent.takeQueuedMessages((m) => (seen.push(m), m === s1 || m === f2));
  assert.deepEqual(seen, [s1, twin, s2, f1, f2]);
  assert.equal(taken.length, 2);
  assert.ok(taken[0] === s1 && taken[1] === f2);
  assert.ok(agent.peekQueuedMessages()[0] === twin);
  agent.clearSteeringQueue();
  assert.ok(agent.peekQueuedMessages()[0] === f1);
  assert.equal(agent.followUpMode, "all");
  assert.throws(() => agent.takeQueuedMessages(() => { throw new Error("no"); }), { message: "no" });
  assert.ok(agent.peekQueuedMessages()[0] === f1);
  assert.throws(() => agent.takeQueuedMessages(), { name: "TypeError", message: "Agent.takeQueuedMessages: predicate must be a function" });
  assert.deepEqual(agent.takeQueuedMessages(() => true), [f1]);
  assert.equal(agent.hasQueuedMessages(), false);
});

test("D2.5 abort while a queue holds messages: undrained messages stay queued", deviation("D2"), async () => {
  const faux = createFaux([assistant(toolCall("c1", "t", {})), assistant("never")]);
  const t = tool("t", async () => {
    agent.steer(userMessage("s1"));
    agent.steer(userMessage("s2"));
    agent.abort();
    return okResult();
  });
  const agent = makeAgent(faux, { initialState: { tools: [t] } });
  await agent.prompt("go");
  assert.equal(faux.calls.length, 1);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["s1"]);
  agent.steeringMode = "all";
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["s1", "s2"]);
});

test("AC-A26 continue() after an assistant turn runs a queued follow-up", T, async () => {
  const faux = createFaux([assistant("first"), assistant("second")]);
  const agent = makeAgent(faux);
  await agent.prompt("hi");
  agent.followUp(userMessage("follow"));
  await agent.continue();
  assert.equal(faux.calls.length, 2);
  assert.deepEqual(texts(agent.state.messages), ["hi", "first", "follow", "second"]);
  assert.equal(agent.state.messages.at(-1).role, "assistant");
  assert.equal(agent.hasQueuedMessages(), false);
});

for (const mode of ["one-at-a-time", "all"]) {
  for (const prepare of [false, true]) {
    test(`AC-A27 continue() from an assistant tail, ${mode} steering${prepare ? ", prepareRequest returning {context}" : ""} → ${mode === "all" ? "1 request" : "2 requests"}`, T, async () => {
      const faux = createFaux([assistant("r1"), assistant("r2"), assistant("r3")]);
      let prepareCalls = 0;
      const agent = makeAgent(faux, {
        steeringMode: mode,
        initialState: { messages: [userMessage("start"), assistant("earlier")] },
        ...(prepare
          ? {
              prepareRequest: (req) => {
                prepareCalls++;
                return { context: req.context };
              },
            }
          : {}),
      });
      const rec = record(agent);
      agent.steer(userMessage("s1"));
      agent.steer(userMessage("s2"));
      await agent.continue();
      const added = agent.state.messages.slice(2);
      if (mode === "one-at-a-time") {
        assert.equal(faux.calls.length, 2);
        assert.deepEqual(roles(added), ["user", "assistant", "user", "assistant"]);
        assert.deepEqual(texts(added), ["s1", "r1", "s2", "r2"]);
        assert.deepEqual(userTexts(faux.calls[0]), ["start", "s1"]);
      } else {
        assert.equal(faux.calls.length, 1);
        assert.deepEqual(roles(added), ["user", "user", "assistant"]);
        assert.deepEqual(texts(added), ["s1", "s2", "r1"]);
      }
      if (prepare) assert.equal(prepareCalls, faux.calls.length);
      assert.equal(agent.hasQueuedMessages(), false);
      // The steering batch runs as a prompt: its messages are emitted right after the first turn_start.
      assert.deepEqual(rec.labels().slice(0, 4), ["agent_start", "turn_start", "message_start:user", "message_end:user"]);
    });
  }
}

for (const name of ["empty", "system-only"]) {
  test(`AC-A30 continue() on an ${name} transcript rejects "No messages to continue from" without draining queues`, T, async () => {
    const faux = createFaux([]);
    const agent = makeAgent(faux, { initialState: name === "empty" ? {} : { systemPrompt: "sys" } });
    assert.deepEqual(roles(agent.state.messages), name === "empty" ? [] : ["system"]);
    agent.steer(userMessage("steer"));
    agent.followUp(userMessage("follow"));
    const rec = record(agent);
    await assert.rejects(agent.continue(), { name: "Error", message: NO_MESSAGES });
    assert.equal(rec.events.length, 0);
    assert.equal(faux.calls.length, 0);
    assert.equal(agent.state.isStreaming, false);
    assert.deepEqual(texts(agent.peekQueuedMessages()), ["steer"]);
    agent.clearSteeringQueue();
    assert.deepEqual(texts(agent.peekQueuedMessages()), ["follow"]);
    assert.equal(agent.hasQueuedMessages(), true);
  });
}

for (const tail of ["user", "toolResult"]) {
  test(`AC-A31 from a ${tail} tail the follow-up waits for request 2`, T, async () => {
    const messages =
      tail === "user"
        ? [userMessage("question")]
        : [
            userMessage("question"),
            assistant(toolCall("c1", "t", {})),
            { role: "toolResult", toolCallId: "c1", toolName: "t", content: [{ type: "text", text: "res" }], isError: false, timestamp: 1 },
          ];
    const faux = createFaux([assistant("r1"), assistant("r2")]);
    const agent = makeAgent(faux, { initialState: { messages } });
    agent.followUp(userMessage("follow"));
    await agent.continue();
    assert.equal(faux.calls.length, 2);
    assert.ok(!requestHas(faux.calls[0], "follow"));
    assert.equal(faux.calls[0].messages.at(-1).role, tail);
    assert.equal(faux.calls[1].messages.at(-1).content, "follow");
    assert.deepEqual(texts(agent.state.messages.slice(messages.length)), ["r1", "follow", "r2"]);
  });
}

for (const mode of ["one-at-a-time", "all"]) {
  test(`AC-A32 continuation startup polls ${mode} steering → ${mode === "all" ? "1 request" : "2 requests"}`, T, async () => {
    const faux = createFaux([assistant("r1"), assistant("r2")]);
    const agent = makeAgent(faux, { steeringMode: mode, initialState: { messages: [userMessage("q")] } });
    agent.steer(userMessage("s1"));
    agent.steer(userMessage("s2"));
    const rec = record(agent);
    await agent.continue();
    if (mode === "one-at-a-time") {
      assert.equal(faux.calls.length, 2);
      assert.deepEqual(userTexts(faux.calls[0]), ["q", "s1"]);
      assert.deepEqual(texts(agent.state.messages), ["q", "s1", "r1", "s2", "r2"]);
    } else {
      assert.equal(faux.calls.length, 1);
      assert.deepEqual(userTexts(faux.calls[0]), ["q", "s1", "s2"]);
      assert.deepEqual(texts(agent.state.messages), ["q", "s1", "s2", "r1"]);
    }
    // Continuation: no prompt events before the polled steering.
    assert.deepEqual(rec.labels().slice(0, 4), ["agent_start", "turn_start", "message_start:user", "message_end:user"]);
    assert.equal(rec.ofType("message_end")[0].message.content, "s1");
  });
}

test("AC-A33 steering before follow-up from a non-assistant continuation tail", T, async () => {
  const faux = createFaux([assistant("r1"), assistant("r2")]);
  const agent = makeAgent(faux, { initialState: { messages: [userMessage("q")] } });
  agent.followUp(userMessage("follow"));
  agent.steer(userMessage("steer"));
  await agent.continue();
  assert.equal(faux.calls.length, 2);
  assert.equal(faux.calls[0].messages.at(-1).content, "steer");
  assert.ok(!requestHas(faux.calls[0], "follow"));
  assert.equal(faux.calls[1].messages.at(-1).content, "follow");
  assert.deepEqual(texts(agent.state.messages), ["q", "steer", "r1", "follow", "r2"]);
});

for (const stopReason of ["error", "aborted"]) {
  for (const decision of ["continue", "end"]) {
    test(`AC-A34 queues kept on an ${stopReason} response when finishTurn says ${decision}`, T, async () => {
      const faux = createFaux([
        assistant("bad", { stopReason, errorMessage: stopReason === "error" ? "provider failed" : "Request was aborted" }),
        assistant("never"),
      ]);
      let finishCalls = 0;
      const agent = makeAgent(faux, {
        finishTurn: () => {
          finishCalls++;
          return { action: decision };
        },
      });
      agent.followUp(userMessage("follow"));
      const rec = record(agent, (e) => {
        if (e.type === "message_end" && e.message.role === "assistant") agent.steer(userMessage("steer"));
      });
      await agent.prompt("go");
      assert.equal(faux.calls.length, 1);
      assert.equal(finishCalls, 1);
      assert.equal(agent.state.messages.at(-1).stopReason, stopReason);
      assert.deepEqual(texts(agent.peekQueuedMessages()), ["steer"]);
      agent.clearSteeringQueue();
      assert.deepEqual(texts(agent.peekQueuedMessages()), ["follow"]);
      assert.deepEqual(rec.labels().slice(-2), ["turn_end", "agent_end"]);
    });
  }
}

test("AC-A35 peekQueuedMessages respects the modes and repeats identically without consuming", T, () => {
  const agent = makeAgent([]);
  const s1 = userMessage("s1");
  const s2 = userMessage("s2");
  const f1 = userMessage("f1");
  const f2 = userMessage("f2");
  assert.deepEqual(agent.peekQueuedMessages(), []);
  agent.followUp(f1);
  agent.followUp(f2);
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["f1"]);
  agent.followUpMode = "all";
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["f1", "f2"]);
  agent.steer(s1);
  agent.steer(s2);
  const p1 = agent.peekQueuedMessages();
  const p2 = agent.peekQueuedMessages();
  assert.deepEqual(texts(p1), ["s1"]);
  assert.deepEqual(p1, p2);
  agent.steeringMode = "all";
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["s1", "s2"]);
  assert.deepEqual(agent.peekQueuedMessages(), agent.peekQueuedMessages());
  // A copy: mutating it does not change the queue.
  agent.peekQueuedMessages().length = 0;
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["s1", "s2"]);
  assert.deepEqual(agent.peekQueuedMessages()[0], s1);
  agent.clearSteeringQueue();
  assert.deepEqual(texts(agent.peekQueuedMessages()), ["f1", "f2"]);
  agent.clearFollowUpQueue();
  assert.deepEqual(agent.peekQueuedMessages(), []);
  assert.equal(agent.hasQueuedMessages(), false);
});

// ---------------------------------------------------------------------------------------------
// queues
// ---------------------------------------------------------------------------------------------

test("A-5.3.1 modes: default one-at-a-time; options and setters; drain takes one or all", T, async () => {
  const a = makeAgent([]);
  assert.equal(a.steeringMode, "one-at-a-time");
  assert.equal(a.followUpMode, "one-at-a-time");
  const b = makeAgent([], { steeringMode: "all", followUpMode: "all" });
  assert.equal(b.steeringMode, "all");
  assert.equal(b.followUpMode, "all");
  b.steeringMode = "one-at-a-time";
  assert.equal(b.steeringMode, "one-at-a-time");
  assert.equal(b.followUpMode, "all");
  // Follow-ups in mode all: both in one request after the prompt's reply.
  const faux = createFaux([assistant("r1"), assistant("r2")]);
  const c = makeAgent(faux, { followUpMode: "all" });
  c.followUp(userMessage("f1"));
  c.followUp(userMessage("f2"));
  await c.prompt("go");
  assert.equal(faux.calls.length, 2);
  assert.deepEqual(userTexts(faux.calls[1]).slice(-2), ["f1", "f2"]);
});

test("A-5.3.2 clearSteeringQueue / clearFollowUpQueue / clearAllQueues / hasQueuedMessages", T, () => {
  const agent = makeAgent([]);
  assert.equal(agent.hasQueuedMessages(), false);
  agent.steer(userMessage("s"));
  assert.equal(agent.hasQueuedMessages(), true);
  agent.clearSteeringQueue();
  assert.equal(agent.hasQueuedMessages(), false);
  agent.followUp(userMessage("f"));
  assert.equal(agent.hasQueuedMessages(), true);
  agent.clearFollowUpQueue();
  assert.equal(agent.hasQueuedMessages(), false);
  agent.steer(userMessage("s"));
  agent.followUp(userMessage("f"));
  agent.clearAllQueues();
  assert.equal(agent.hasQueuedMessages(), false);
  assert.deepEqual(agent.peekQueuedMessages(), []);
});

test("A-5.3.2 steeringMode changed while running applies to the next drain", T, async () => {
  const faux = createFaux([assistant("r1"), assistant("r2"), assistant("r3")]);
  const agent = makeAgent(faux);
  let done = false;
  agent.subscribe((e) => {
    if (e.type === "message_end" && e.message.role === "assistant" && !done) {
      done = true;
      agent.steer(userMessage("s1"));
      agent.steer(userMessage("s2"));
      agent.steeringMode = "all";
    }
  });
  await agent.prompt("go");
  assert.equal(faux.calls.length, 2);
  assert.deepEqual(userTexts(faux.calls[1]).slice(-2), ["s1", "s2"]);
});

test("A-5.3.1 queued messages are the same objects the transcript receives", T, async () => {
  const faux = createFaux([assistant("r1"), assistant("r2")]);
  const agent = makeAgent(faux);
  const f = userMessage("follow");
  agent.followUp(f);
  assert.equal(agent.peekQueuedMessages()[0], f);
  await agent.prompt("go");
  assert.deepEqual(agent.state.messages[2], f);
});

test("A-5.3.2 invalid steeringMode / followUpMode values throw TypeError from the setters", deviation("E-8.1 TypeErrors"), () => {
  const agent = makeAgent([]);
  for (const bad of ["bogus", undefined, null, 1, "ALL"]) {
    assert.throws(
      () => {
        agent.steeringMode = bad;
      },
      (err) => err instanceof TypeError && err.message.startsWith("Agent") && err.message.includes("steeringMode"),
    );
    assert.throws(
      () => {
        agent.followUpMode = bad;
      },
      (err) => err instanceof TypeError && err.message.startsWith("Agent") && err.message.includes("followUpMode"),
    );
  }
  assert.equal(agent.steeringMode, "one-at-a-time");
  assert.equal(agent.followUpMode, "one-at-a-time");
});

test("A-5.4.3 continue() from an assistant tail: steering wins over follow-up; skips S0; follow-up via F", T, async () => {
  const faux = createFaux([assistant("r1"), assistant("r2")]);
  const agent = makeAgent(faux, { initialState: { messages: [userMessage("q"), assistant("a")] } });
  agent.followUp(userMessage("follow"));
  agent.steer(userMessage("steer"));
  await agent.continue();
  assert.equal(faux.calls.length, 2);
  assert.deepEqual(userTexts(faux.calls[0]), ["q", "steer"]);
  assert.deepEqual(userTexts(faux.calls[1]), ["q", "steer", "follow"]);
  // Now only a follow-up: it runs as a prompt with a normal S0 (a steering message queued by the
  // follow-up's message_end listener is polled at S0 and joins the first request).
  faux.push(assistant("r3"));
  agent.followUp(userMessage("f2"));
  const off = agent.subscribe((e) => {
    if (e.type === "message_end" && msgText(e.message) === "f2") agent.steer(userMessage("s0"));
  });
  await agent.continue();
  off();
  assert.equal(faux.calls.length, 3);
  assert.deepEqual(userTexts(faux.calls[2]).slice(-2), ["f2", "s0"]);
  await assert.rejects(agent.continue(), { message: ASSISTANT_TAIL });
});

test("A-5.4.3 from a toolResult tail continue() runs the continuation (no prompt events)", T, async () => {
  const faux = createFaux([assistant("r1")]);
  const agent = makeAgent(faux, {
    initialState: {
      messages: [
        userMessage("q"),
        assistant(toolCall("c1", "t", {})),
        { role: "toolResult", toolCallId: "c1", toolName: "t", content: [{ type: "text", text: "res" }], isError: false, timestamp: 1 },
      ],
    },
  });
  const rec = record(agent);
  await agent.continue();
  assert.deepEqual(rec.labels(), [
    "agent_start",
    "turn_start",
    "message_start:assistant",
    "message_end:assistant",
    "turn_end",
    "agent_end",
  ]);
  assert.deepEqual(roles(agent.state.messages), ["user", "assistant", "toolResult", "assistant"]);
});

test("A-5.4.4 reset() clears both queues", T, () => {
  const agent = makeAgent([]);
  agent.steer(userMessage("s"));
  agent.followUp(userMessage("f"));
  agent.reset();
  assert.equal(agent.hasQueuedMessages(), false);
});

test("A-5.3 class check: Agent is subclassable and queue methods work on a subclass", T, async () => {
  class MyAgent extends Agent {
    extra() {
      return this.peekQueuedMessages().length;
    }
  }
  const faux = createFaux([assistant("r1")]);
  const agent = makeAgent(faux, {}, MyAgent);
  assert.ok(agent instanceof MyAgent);
  agent.steer(userMessage("s"));
  assert.equal(agent.extra(), 1);
  await agent.prompt("go");
  assert.equal(agent.extra(), 0);
  assert.deepEqual(texts(agent.state.messages), ["go", "s", "r1"]);
});
