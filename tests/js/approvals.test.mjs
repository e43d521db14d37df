// Tool calls that wait for a person (issue 30, T-4.10, A-5.8) on the built package: the pause in parallel and
// sequential batches through agentLoop / agentLoopContinue, and through the Agent (approve, deny, pendingApprovals,
// misuse while paused, abort/reset/prompt during the pause, a snapshot and checkpoints restored elsewhere); one file
// also runs under Deno.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, IS_REFERENCE, agentLoop, agentLoopContinue } from "./impl.mjs";
import { assistant, collect, config, createFaux, firstText, text, toolCall, userMessage } from "./faux.mjs";
import { makeAgent, record } from "./agent-helpers.mjs";
import { needs } from "../required.mjs";

// Human in the loop is new in this library: pi-agent-core 1.6.0 has no pause, so these tests are ours only.
const T = { timeout: 10_000, skip: IS_REFERENCE && "tool approvals (issue 30) are not in pi-agent-core 1.6.0" };

const SCHEMA = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

/** `work` (plain), `gate` (needsApproval: true), `stop` (terminates); every execution logged by call id. */
function toolset(ran) {
  const make = (name, extra = {}) => ({
    name,
    label: name,
    description: `${name} tool`,
    parameters: SCHEMA,
    async execute(id, { n }) {
      ran.push(id);
      await new Promise((r) => setTimeout(r, 1));
      return { content: [text(`${name} ${n}`)], details: {}, ...(name === "stop" ? { terminate: true } : {}) };
    },
    ...extra,
  });
  return [make("work"), make("gate", { needsApproval: true }), make("stop")];
}

const calls3 = (a, b, c) =>
  assistant([toolCall("a", a, { n: 1 }), toolCall("b", b, { n: 2 }), toolCall("c", c, { n: 3 })], { stopReason: "toolUse" });
const results = (messages) => messages.filter((m) => m.role === "toolResult").map((m) => [m.toolCallId, firstText(m)]);
const texts = (messages) => messages.map((m) => (typeof m.content === "string" ? m.content : firstText(m) ?? ""));
const plain = (labels) => labels.filter((l) => !l.startsWith("message_update"));

test("T-4.10.2 agentLoop: a parallel batch runs its plain calls, announces the waiting one and ends; agentLoopContinue with the decision finishes it in request order", T, async () => {
  const ran = [];
  const faux = createFaux([calls3("work", "gate", "work"), assistant([text("done")])]);
  const tools = toolset(ran);
  const first = await collect(agentLoop([userMessage("go")], { messages: [], tools }, config(), undefined, faux.streamFn));
  assert.deepEqual(plain(first.labels()), [
    "agent_start", "turn_start", "message_start:system", "message_end:system", "message_start:user", "message_end:user",
    "message_start:assistant", "message_end:assistant",
    "tool_execution_start:a", "tool_execution_start:b", "tool_approval_request", "tool_execution_start:c",
    "tool_execution_end:a", "tool_execution_end:c", "turn_end", "agent_end",
  ]);
  const [request] = first.ofType("tool_approval_request");
  assert.deepEqual(request, { type: "tool_approval_request", toolCallId: "b", toolName: "gate", args: { n: 2 } });
  const end = first.ofType("agent_end")[0];
  assert.deepEqual(end.approvals.requests, [{ toolCallId: "b", toolName: "gate", args: { n: 2 } }]);
  assert.deepEqual(end.approvals.completedTools.map((r) => r.toolCallId), ["a", "c"]);
  assert.deepEqual(first.result.map((m) => m.role), ["system", "user", "assistant"], "no result message yet");
  assert.deepEqual(ran, ["a", "c"]);

  // Stored as JSON and continued later (another process could do this part).
  const approvals = JSON.parse(JSON.stringify(end.approvals));
  approvals.decisions = [{ toolCallId: "b", approved: true }];
  const context = { messages: first.result, tools };
  const second = await collect(agentLoopContinue(context, config({ approvals }), undefined, faux.streamFn));
  assert.deepEqual(plain(second.labels()), [
    "agent_start", "turn_start", "tool_execution_start:b", "tool_execution_end:b",
    "message_start:toolResult", "message_end:toolResult", "message_start:toolResult", "message_end:toolResult",
    "message_start:toolResult", "message_end:toolResult", "turn_end",
    "turn_start", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end",
  ]);
  assert.deepEqual(results(second.result), [["a", "work 1"], ["b", "gate 2"], ["c", "work 3"]]);
  assert.deepEqual(ran, ["a", "c", "b"], "every call ran exactly once");
  assert.deepEqual(faux.calls[1].messages.map((m) => m.role), ["system", "user", "assistant", "toolResult", "toolResult", "toolResult"]);
});

test("T-4.10.3 agentLoop: in a sequential batch the calls after the waiting one wait with it; a denial is the result the model sees", T, async () => {
  const ran = [];
  const faux = createFaux([calls3("work", "gate", "work"), assistant([text("done")])]);
  const tools = toolset(ran);
  const cfg = (extra) => config({ toolExecution: "sequential", ...extra });
  const first = await collect(agentLoop([userMessage("go")], { messages: [], tools }, cfg(), undefined, faux.streamFn));
  assert.deepEqual(plain(first.labels()).slice(8), [
    "tool_execution_start:a", "tool_execution_end:a", "message_start:toolResult", "message_end:toolResult",
    "tool_execution_start:b", "tool_approval_request", "turn_end", "agent_end",
  ]);
  assert.deepEqual(ran, ["a"]);
  const approvals = { ...first.ofType("agent_end")[0].approvals, decisions: [{ toolCallId: "b", approved: false, reason: "not today" }] };
  const second = await collect(agentLoopContinue({ messages: first.result, tools }, cfg({ approvals }), undefined, faux.streamFn));
  assert.deepEqual(results(second.result), [["b", 'Tool call "b" was denied: not today'], ["c", "work 3"]]);
  assert.equal(second.result.find((m) => m.toolCallId === "b").isError, true);
  assert.deepEqual(ran, ["a", "c"], "the denied call never ran");
});

test("T-4.10.4 agentLoop: beforeToolCall asks with a payload, runs again with approved: true, and a terminating batch still ends the run", T, async () => {
  const ran = [];
  const seen = [];
  const beforeToolCall = async ({ toolCall: call, approved }) => {
    seen.push([call.id, approved]);
    return { approval: { reason: "charges money", data: { cents: 500 } } };
  };
  const faux = createFaux([assistant([toolCall("a", "stop", { n: 1 })], { stopReason: "toolUse" }), assistant([text("never")])]);
  const tools = toolset(ran);
  const first = await collect(agentLoop([userMessage("go")], { messages: [], tools }, config({ beforeToolCall }), undefined, faux.streamFn));
  assert.deepEqual(first.ofType("tool_approval_request")[0], {
    type: "tool_approval_request", toolCallId: "a", toolName: "stop", args: { n: 1 }, reason: "charges money", data: { cents: 500 },
  });
  const approvals = { ...first.ofType("agent_end")[0].approvals, decisions: [{ toolCallId: "a", approved: true, args: { n: 5 } }] };
  const second = await collect(agentLoopContinue({ messages: first.result, tools }, config({ beforeToolCall, approvals }), undefined, faux.streamFn));
  assert.deepEqual(results(second.result), [["a", "stop 5"]]);
  assert.deepEqual(seen, [["a", undefined], ["a", true]]);
  assert.equal(faux.calls.length, 1, "the approved call terminated the batch: no further request");
});

test("T-4.10.5 agentLoopContinue: malformed approvals are TypeErrors naming the field; edited arguments are validated again", T, async () => {
  const ran = [];
  const faux = createFaux([assistant([toolCall("b", "gate", { n: 2 })], { stopReason: "toolUse" }), assistant([text("done")])]);
  const tools = toolset(ran);
  const first = await collect(agentLoop([userMessage("go")], { messages: [], tools }, config(), undefined, faux.streamFn));
  const pause = first.ofType("agent_end")[0].approvals;
  const context = { messages: first.result, tools };
  const start = (decisions) => agentLoopContinue(context, config({ approvals: { ...pause, decisions } }), undefined, faux.streamFn);
  assert.throws(() => start([{ toolCallId: "zz", approved: true }]), {
    name: "TypeError",
    message: 'agentLoopContinue: config.approvals.decisions[0]: no tool call "zz" is waiting for approval',
  });
  assert.throws(() => start([{ toolCallId: "b", approved: true }, { toolCallId: "b", approved: false }]), {
    name: "TypeError",
    message: 'agentLoopContinue: config.approvals.decisions[1]: tool call "b" is decided twice',
  });
  assert.throws(() => agentLoopContinue(context, config({ approvals: [] }), undefined, faux.streamFn), {
    name: "TypeError",
    message: "agentLoopContinue: config.approvals must be an object (agent_end.approvals)",
  });
  const second = await collect(start([{ toolCallId: "b", approved: true, args: { n: "two" } }]));
  assert.deepEqual(results(second.result), [
    ["b", 'Validation failed for tool "gate":\n  - n: expected number, got string\n\nReceived arguments:\n{\n  "n": "two"\n}'],
  ]);
  assert.deepEqual(ran, []);
});

test("A-5.8 Agent: pendingApprovals, prompt()/continue() refused while calls wait, abort() keeps the pause, steering waits, the last decision continues the run", T, async () => {
  const ran = [];
  const faux = createFaux([
    assistant([toolCall("a", "work", { n: 1 }), toolCall("b", "gate", { n: 2 }), toolCall("c", "gate", { n: 3 })], { stopReason: "toolUse" }),
    assistant([text("after approvals")]),
  ]);
  const agent = makeAgent(faux, { initialState: { tools: toolset(ran) } });
  const rec = record(agent);
  await agent.prompt("go");
  assert.deepEqual(agent.state.pendingApprovals.map((r) => r.toolCallId), ["b", "c"]);
  assert.equal(agent.state.isStreaming, false);
  assert.deepEqual(rec.labels().slice(-7), [
    "tool_execution_start:b", "tool_approval_request", "tool_execution_start:c", "tool_approval_request",
    "tool_execution_end:a", "turn_end", "agent_end",
  ]);
  const waiting = "Agent has tool calls waiting for approval (b, c): approve() or deny() each of them first, or reset()";
  await assert.rejects(agent.prompt("again"), { name: "Error", message: waiting });
  await assert.rejects(agent.continue(), { name: "Error", message: waiting });
  agent.abort(); // no run: the pause stays
  assert.deepEqual(agent.state.pendingApprovals.map((r) => r.toolCallId), ["b", "c"]);
  agent.steer(userMessage("steer!"));
  const before = rec.events.length;
  await agent.approve("b");
  assert.equal(rec.events.length, before, "c still waits: no run yet");
  await assert.rejects(agent.deny("b"), { name: "Error", message: 'Agent.deny: tool call "b" was already approved' });
  await agent.deny("c", { reason: "too risky" });
  assert.deepEqual(agent.state.pendingApprovals, []);
  assert.deepEqual(ran, ["a", "b"]);
  assert.deepEqual(texts(agent.state.messages), [
    "", "go", "", "work 1", "gate 2", 'Tool call "c" was denied: too risky', "steer!", "after approvals",
  ]);
  await assert.rejects(agent.approve("c"), { name: "Error", message: 'Agent.approve: no tool call "c" is waiting for approval' });
});

test("A-5.8 Agent: misuse is a clear error naming the id or option; edited args are checked at once; reset() drops the pause", T, async () => {
  const ran = [];
  const faux = createFaux([assistant([toolCall("b", "gate", { n: 2 })], { stopReason: "toolUse" }), assistant([text("done")])]);
  const agent = makeAgent(faux, { initialState: { tools: toolset(ran) } });
  await agent.prompt("go");
  await assert.rejects(agent.approve("b", { args: { n: "two" } }), {
    name: "Error",
    message: 'Agent.approve: options.args of tool call "b" are invalid: Validation failed for tool "gate":\n  - n: expected number, got string\n\nReceived arguments:\n{\n  "n": "two"\n}',
  });
  await assert.rejects(agent.approve(42), { name: "TypeError", message: "Agent.approve: toolCallId must be a string" });
  await assert.rejects(agent.approve("b", { arguments: {} }), {
    name: "TypeError",
    message: "Agent.approve: options.arguments is not an option; edited arguments go in options.args",
  });
  await assert.rejects(agent.deny("b", { reason: 1 }), { name: "TypeError", message: "Agent.deny: options.reason must be a string" });
  await assert.rejects(agent.approve("zz"), { name: "Error", message: 'Agent.approve: no tool call "zz" is waiting for approval' });
  assert.deepEqual(agent.state.pendingApprovals.map((r) => r.toolCallId), ["b"], "a refused decision changes nothing");
  await agent.approve("b", { args: { n: 9 } });
  assert.deepEqual(ran, ["b"]);
  assert.deepEqual(agent.state.messages.filter((m) => m.role === "toolResult").map(firstText), ["gate 9"]);

  const again = makeAgent([assistant([toolCall("x", "gate", { n: 1 })], { stopReason: "toolUse" }), assistant([text("fresh")])], {
    initialState: { tools: toolset(ran) },
  });
  await again.prompt("go");
  again.reset();
  assert.deepEqual(again.state.pendingApprovals, []);
  await assert.rejects(again.approve("x"), { name: "Error", message: 'Agent.approve: no tool call "x" is waiting for approval' });
  await again.prompt("hello");
  assert.equal(firstText(again.state.messages.at(-1)), "fresh");
});

test("A-5.8.5 Agent: a paused agent restored elsewhere (snapshot JSON, or checkpoint rows) shows the same requests and accepts the decisions", T, async () => {
  const rows = [];
  const ran = [];
  const agent = makeAgent([calls3("work", "gate", "work")], {
    initialState: { tools: toolset(ran) },
    onCheckpoint: (c) => void rows.push(JSON.stringify(c)),
  });
  await agent.prompt("go");
  const snapshot = JSON.stringify(agent.snapshot());
  assert.ok(rows.some((r) => JSON.parse(r).approvals?.requests?.length === 1), "the pause is a checkpoint");

  for (const saved of [snapshot, rows]) {
    const ran2 = [];
    const faux = createFaux([assistant([text("done")])]);
    const restored = Agent.restore(saved, { streamFn: faux.streamFn, tools: toolset(ran2) });
    assert.deepEqual(restored.state.pendingApprovals, [{ toolCallId: "b", toolName: "gate", args: { n: 2 } }]);
    await restored.resume(); // a pause is not a crash: nothing runs
    assert.equal(faux.calls.length, 0);
    await restored.approve("b");
    assert.deepEqual(ran2, ["b"], "a and c ran before the pause and not again");
    assert.deepEqual(results(restored.state.messages), [["a", "work 1"], ["b", "gate 2"], ["c", "work 3"]]);
    assert.equal(firstText(restored.state.messages.at(-1)), "done");
  }
});

test("A-5.8.6 Agent: a call of a tool with approvalTimeoutMs is denied when its deadline passes, and the run goes on", T, async () => {
  const ran = [];
  const tools = toolset(ran).map((t) => (t.name === "gate" ? { ...t, approvalTimeoutMs: 40 } : t));
  const faux = createFaux([
    assistant([toolCall("a", "work", { n: 1 }), toolCall("b", "gate", { n: 2 })], { stopReason: "toolUse" }),
    assistant([text("after the timeout")]),
  ]);
  const agent = makeAgent(faux, { initialState: { tools } });
  const startedAt = Date.now();
  await agent.prompt("go");
  const [request] = agent.state.pendingApprovals;
  assert.equal(request.toolCallId, "b");
  assert.ok(request.expiresAt >= startedAt + 40 && request.expiresAt <= Date.now() + 40, `${request.expiresAt}`);
  // A snapshot restored elsewhere keeps the deadline.
  const restoredFaux = createFaux([assistant([text("restored, after the timeout")])]);
  const restored = Agent.restore(JSON.stringify(agent.snapshot()), { streamFn: restoredFaux.streamFn, tools });
  assert.equal(restored.state.pendingApprovals[0].expiresAt, request.expiresAt);
  for (const a of [agent, restored]) {
    const deadline = Date.now() + 3000;
    while (a.state.pendingApprovals.length > 0 || a.state.isStreaming) {
      assert.ok(Date.now() < deadline, "the timeout never denied the call");
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.deepEqual(results(a.state.messages), [["a", "work 1"], ["b", 'Tool call "b" was denied: approval timed out']]);
  }
  assert.equal(firstText(agent.state.messages.at(-1)), "after the timeout");
  assert.equal(firstText(restored.state.messages.at(-1)), "restored, after the timeout");
  assert.deepEqual(ran, ["a"]);
  assert.ok(Date.now() - startedAt >= 40);
});

const PROCESS = fileURLToPath(new URL("./durable/approval-process.mjs", import.meta.url));
const normalized = (messages) =>
  JSON.stringify(messages, (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value));
const lines = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);

test("A-5.8.5 a process SIGKILLed at every checkpoint of a run that pauses and is approved: another process restores, decides and reaches the same transcript; nothing runs twice", { ...T, timeout: 120_000 }, () => {
  const base = mkdtempSync(join(tmpdir(), "alw-approvals-"));
  const run = (dir, name, crash) =>
    spawnSync(process.execPath, [PROCESS, join(dir, "store.jsonl"), join(dir, `${name}.log`), crash ?? "none"], {
      encoding: "utf8",
      timeout: 20_000,
    });
  try {
    const whole = run(base, "whole");
    assert.equal(whole.status, 0, whole.stderr);
    const expected = JSON.parse(whole.stdout);
    assert.deepEqual(expected.pending, []);
    assert.deepEqual(results(expected.messages), [
      ["a", "work 1"], ["b", "gate 20"], ["c", "work 3"], ["d", 'Tool call "d" was denied: no'],
    ]);
    assert.deepEqual(lines(join(base, "whole.log")), ["a", "c", "b"]);
    const stored = lines(join(base, "store.jsonl")).map((l) => JSON.parse(l));
    assert.ok(stored.length > 10 && stored.some((c) => c.approvals?.decisions?.length === 1), `${stored.length} checkpoints`);
    // Whether a store holds the prompt is read from the store itself, never from what the next process printed: a
    // restore that dropped the prompt must fail here, not pass as "killed too early".
    const holdsPrompt = (checkpoints) => checkpoints.some((c) => (c.messages?.append ?? []).some((m) => m.role === "user"));
    const beforePrompt = stored.slice(0, stored.findIndex((_, i) => holdsPrompt(stored.slice(0, i + 1)))).map((c) => c.seq);
    const killedEarly = [];
    for (const { seq } of stored) {
      const dir = mkdtempSync(join(base, "crash-"));
      const killed = run(dir, "first", `seq:${seq}`);
      assert.equal(killed.signal, "SIGKILL", `seq ${seq}: ${killed.stderr}`);
      const kept = lines(join(dir, "store.jsonl")).map((l) => JSON.parse(l));
      const done = new Set();
      for (const c of kept) {
        for (const m of c.messages?.append ?? []) if (m.role === "toolResult") done.add(m.toolCallId);
        for (const r of [...(c.ended ?? []), ...(c.approvals?.completedTools ?? [])]) done.add(r.toolCallId);
      }
      const after = run(dir, "second");
      assert.equal(after.status, 0, `seq ${seq}: ${after.stderr}`);
      const got = JSON.parse(after.stdout);
      if (!holdsPrompt(kept)) {
        // Nothing to resume: the restored transcript holds at most the tools' system message, and nothing ran.
        assert.deepEqual(got.messages.map((m) => m.role).filter((r) => r !== "system"), [], `crash at checkpoint ${seq}: no prompt stored`);
        assert.deepEqual(lines(join(dir, "second.log")), []);
        killedEarly.push(seq);
        continue;
      }
      assert.equal(normalized(got.messages), normalized(expected.messages), `crash at checkpoint ${seq}`);
      for (const id of lines(join(dir, "second.log"))) assert.ok(!done.has(id), `crash at checkpoint ${seq}: ${id} ran again`);
    }
    // Counted: exactly the checkpoints stored before the prompt's own were cut too early to resume.
    assert.deepEqual(killedEarly, beforePrompt);
    assert.ok(killedEarly.length < stored.length / 4, `${killedEarly.length} of ${stored.length} crashes had nothing to resume`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

const DENO = fileURLToPath(new URL("../../node_modules/.bin/deno", import.meta.url));
const DENO_SCRIPT = fileURLToPath(new URL("./approvals-deno.mjs", import.meta.url));

test("issue 30 under Deno: the same pause and approval through Agent and agentLoop", {
  ...T,
  timeout: 30_000,
  skip: T.skip || needs(DENO, "npm ci installs deno 2.9.6"),
}, () => {
  const out = spawnSync(DENO, ["run", "--no-prompt", DENO_SCRIPT], {
    encoding: "utf8",
    timeout: 25_000,
    env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  });
  assert.equal(out.status, 0, out.stderr);
  assert.deepEqual(JSON.parse(out.stdout.trim().split("\n").at(-1)), {
    agent: { pending: ["b"], ran: ["a", "c", "b"], results: ["work 1", "gate 2", "work 3"], last: "done" },
    loop: { requests: ["b"], ran: [], results: ['Tool call "b" was denied: no'] },
  });
});

test("T-4.3.8 a Standard Schema that validates asynchronously and rejects: no unhandled rejection where the answer cannot be awaited", T, async () => {
  const { validateToolArguments } = await import("./impl.mjs");
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    let validations = 0;
    const parameters = {
      "~standard": {
        version: 1,
        vendor: "test",
        // Answers the proposed arguments ({ n: 2 }); rejects anything else, as a validator whose service is down.
        validate: (value) => (validations++, value.n === 2 ? Promise.resolve({ value }) : Promise.reject(new Error("the validator's service is down"))),
        jsonSchema: { input: () => SCHEMA, output: () => SCHEMA },
      },
    };
    const gate = { name: "gate", label: "gate", description: "gate", parameters, needsApproval: true, execute: async () => ({ content: [text("ran")], details: {} }) };
    assert.throws(() => validateToolArguments(gate, { type: "toolCall", id: "c", name: "gate", arguments: { n: 1 } }), {
      name: "TypeError",
      message: "validateToolArguments: the tool's Standard Schema validates asynchronously (its validate returned a promise); validateToolArguments cannot wait for it (a run and runToolCall do)",
    });
    // Agent.approve checks edited arguments at once; an async answer is left to the run, which awaits it.
    const agent = makeAgent([assistant([toolCall("b", "gate", { n: 2 })], { stopReason: "toolUse" }), assistant([text("done")])], { initialState: { tools: [gate] } });
    await agent.prompt("go");
    await agent.approve("b", { args: { n: 3 } });
    assert.equal(validations, 4, "validateToolArguments, the run before the pause, the edited-args check, the run after");
    assert.deepEqual(agent.state.messages.filter((m) => m.role === "toolResult").map(firstText), ["the validator's service is down"]);
    await new Promise((resolve) => setTimeout(resolve, 20)); // unhandled rejections are reported after a macrotask
    assert.deepEqual(unhandled.map(String), []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
