// The real-client test (issue 14): pi-coding-agent 1.6.0 runs unchanged on agent-loop-wasm. Each scenario runs the
// unmodified client and the client with our pi-agent-core (tests/clients/harness.mjs) against the same scripted
// OpenAI-compatible server, then compares exit codes, stdout (JSON / RPC records or printed text), stderr, the
// request bodies the server received, session files and files on disk, all normalised. Any difference fails the
// scenario unless it is a known difference listed below (named in the test and in README's Differences).
//
// Run: node --test tests/clients/   (needs scripts/setup and a built pkg/; about a minute)
// CLIENTS_ONLY=<substring> runs the matching scenarios only; CLIENTS_KEEP=1 keeps the runs' folders (in the OS temp dir).
import { rmSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { RUNS, missing, normalise, parse, prepareCopies, prepareMutant, runScenario } from "./harness.mjs";

// Nothing is skipped: without the client, Node 22 or pkg/, before() fails and names what to run.
const T = { timeout: 360000 };

// ------------------------------------------------------------------------------------------------------------------
// Scenarios
// ------------------------------------------------------------------------------------------------------------------

const json = (prompt, ...more) => ({ args: ["--mode", "json", ...more, prompt] });
const call = (id, name, args) => ({ id, name, args });
const isType = (type) => (r) => r?.type === type;
const settled = isType("agent_settled");
/** The records of the first invocation's stdout. */
const out = (run, i = 0) => run.invocations[i].stdout;
const toolEnds = (run, i = 0) => out(run, i).filter(isType("tool_execution_end")).map((e) => [e.toolName, e.result.content.map((c) => c.text).join(""), e.isError]);
const lastAssistantText = (run, i = 0) => {
  const end = out(run, i).filter(isType("agent_end")).at(-1);
  const m = end?.messages.filter((x) => x.role === "assistant").at(-1);
  return m?.content.filter((c) => c.type === "text").map((c) => c.text).join("");
};
const sessionTexts = (run) => run.sessions.flat().filter((e) => e.type === "message" && e.message.role !== "system")
  .map((e) => `${e.message.role}: ${typeof e.message.content === "string" ? e.message.content : e.message.content.map((c) => c.text ?? c.type).join("")}`);

const EXPORTS_PROBE = `import * as core from "@earendil-works/pi-agent-core";
import { Agent, DEFAULT_AGENT_IDENTITY, agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue, runToolCall,
  setDefaultStreamFn, streamProxy } from "@earendil-works/pi-agent-core";
import { writeFileSync } from "node:fs";

const named = { Agent, DEFAULT_AGENT_IDENTITY, agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue,
  runToolCall, setDefaultStreamFn, streamProxy };
const kind = (v) => typeof v === "function" ? (/^class[\\s{]/.test(Function.prototype.toString.call(v)) ? "class" : "function") : typeof v;

export default function (pi) {
  // The nine names of pi-agent-core 1.6.0 (ours exports more; additive, so not listed).
  writeFileSync("exports.txt", Object.keys(named).map((k) => k + ": " + kind(named[k])).join("\\n") + "\\n"
    + "namespace: " + Object.keys(named).every((k) => core[k] === named[k]) + "\\n");
  pi.on("tool_call", async (event) => {
    if (event.toolName === "bash" && String(event.input.command).includes("forbidden")) {
      return { block: true, reason: "blocked by the probe" };
    }
  });
  pi.on("tool_result", async (event) => {
    if (event.toolName === "probe_echo") return { content: [{ type: "text", text: "rewritten: " + event.content[0].text }] };
  });
  pi.registerTool({
    name: "probe_echo", label: "Echo", description: "Echo text",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async execute(_id, params) {
      return { content: [{ type: "text", text: "echo " + params.text }], details: {}, terminate: params.text === "stop" };
    },
  });
  pi.registerTool({
    name: "probe_nested", label: "Nested", description: "Reads a file through the read tool",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    async execute(_id, params, signal, _onUpdate, ctx) {
      const inner = await ctx.executeTool("read", { path: params.path }, { signal });
      return { content: [{ type: "text", text: "nested: " + inner.result.content.map((c) => c.text).join("") }], details: {} };
    },
  });
  pi.registerTool({
    name: "probe_tools", label: "Tools", description: "Switches the active tools to read and probe_echo",
    parameters: { type: "object", properties: {} },
    async execute() {
      pi.setActiveTools(["read", "probe_echo"]);
      return { content: [{ type: "text", text: "tools switched" }], details: {} };
    },
  });
}
`;

export const SCENARIOS = [
  {
    name: "streamed text (json mode)",
    script: [{ text: "Hello there, this is a streamed answer." }],
    runs: [json("say hello")],
  },
  {
    name: "print mode prints the final text",
    script: [{ text: "Printed answer." }],
    runs: [{ args: ["-p", "say it"] }],
  },
  {
    name: "one read",
    files: { "a.txt": "alpha\nbeta\n" },
    script: [{ calls: [call("call_1", "read", { path: "a.txt" })] }, { text: "The file has two lines." }],
    runs: [json("read a.txt")],
  },
  {
    name: "parallel tools in one message",
    files: { "a.txt": "alpha\n", "b.txt": "bravo\n" },
    script: [
      // Completion order is fixed by the sleeps, so the event streams are deterministic.
      { calls: [call("call_1", "bash", { command: "sleep 1; echo second" }), call("call_2", "read", { path: "a.txt" }), call("call_3", "bash", { command: "sleep 0.4; echo first" })] },
      { text: "Read both and ran bash." },
    ],
    runs: [json("read both")],
  },
  {
    name: "bash, edit and write, checked on disk",
    files: { "a.txt": "hello world\n" },
    script: [
      { calls: [call("call_1", "write", { path: "c.txt", content: "created\n" })] },
      { calls: [call("call_2", "edit", { path: "a.txt", edits: [{ oldText: "world", newText: "there" }] })] },
      { calls: [call("call_3", "bash", { command: "cat a.txt c.txt > d.txt && wc -l d.txt" })] },
      { text: "Done." },
    ],
    runs: [json("change the files")],
  },
  {
    name: "a validation error the model corrects",
    files: { "a.txt": "alpha\n" },
    script: [
      { calls: [call("call_1", "read", { file: "a.txt" })] },
      { calls: [call("call_2", "read", { path: "a.txt" })] },
      { text: "Corrected." },
    ],
    runs: [json("read it")],
  },
  {
    name: "finish_reason length with an open call",
    script: [{ calls: [call("call_1", "write", { path: "x.txt", content: "never" })], finish: "length" }, { text: "Shorter now." }],
    runs: [json("write x")],
  },
  {
    name: "HTTP 500 then success (retry)",
    script: [{ status: 500, body: { error: { message: "upstream exploded" } } }, { text: "Recovered." }],
    runs: [json("try")],
  },
  {
    name: "a stream cut mid-way",
    script: [{ cut: "partial ans" }, { text: "Second try." }],
    runs: [json("go")],
  },
  {
    name: "a session continued with -c",
    script: [{ text: "First answer." }, { text: "Second answer." }],
    runs: [json("first"), json("second", "-c")],
  },
  {
    name: "an extension importing every named export: hooks, terminate, a tool-set change, nested calls",
    files: { "a.txt": "alpha\n" },
    agentFiles: { "extensions/probe.js": EXPORTS_PROBE },
    script: [
      { calls: [call("call_1", "probe_echo", { text: "hi" }), call("call_2", "bash", { command: "echo forbidden" })] },
      { calls: [call("call_3", "probe_nested", { path: "a.txt" })] },
      { calls: [call("call_4", "probe_tools", {})] },
      { calls: [call("call_5", "probe_echo", { text: "stop" })] },
      { text: "never requested: the batch terminated" },
    ],
    runs: [json("use the probe")],
    unused: 1,
  },
  {
    name: "RPC prompt, steer and follow-up during a tool",
    script: [
      { calls: [call("call_1", "bash", { command: "sleep 1; echo slept" })] },
      { text: "Saw the steering." },
      { text: "Did the follow-up." },
    ],
    runs: [{
      args: ["--mode", "rpc"],
      rpc: [
        { send: { id: "p1", type: "prompt", message: "run the slow command" } },
        { until: isType("tool_execution_start") },
        { send: { id: "s1", type: "steer", message: "then summarise" } },
        { until: (r) => r.type === "response" && r.id === "s1" },
        { send: { id: "f1", type: "follow_up", message: "and finally say bye" } },
        { until: (r) => r.type === "response" && r.id === "f1" },
        { until: settled },
      ],
    }],
  },
  {
    name: "RPC steer during a tool, abort, then prompt again",
    script: [
      { calls: [call("call_1", "bash", { command: "sleep 10; echo never" })] },
      { text: "Answer to the new prompt." },
    ],
    runs: [{
      args: ["--mode", "rpc"],
      rpc: [
        { send: { id: "p1", type: "prompt", message: "run the slow command" } },
        { until: isType("tool_execution_start") },
        { send: { id: "s1", type: "steer", message: "stale steering" } },
        { until: (r) => r.type === "response" && r.id === "s1" },
        { send: { id: "a1", type: "abort" } },
        { until: settled },
        { send: { id: "p2", type: "prompt", message: "new prompt" } },
        { until: settled },
      ],
    }],
  },
  {
    name: "RPC abort during a stream, queue modes, clear queue, new session",
    script: [
      { stall: "a long answer that never" },
      { text: "After the abort." },
      { text: "In the new session." },
    ],
    runs: [{
      args: ["--mode", "rpc"],
      rpc: [
        { send: { id: "m1", type: "set_steering_mode", mode: "all" } },
        { send: { id: "m2", type: "set_follow_up_mode", mode: "all" } },
        { send: { id: "p1", type: "prompt", message: "stream something long" } },
        { until: (r) => r.type === "message_update" && r.assistantMessageEvent?.type === "text_delta" },
        { send: { id: "f1", type: "follow_up", message: "queued then cleared" } },
        { until: (r) => r.type === "response" && r.id === "f1" },
        { send: { id: "c1", type: "clear_queue" } },
        { until: (r) => r.type === "response" && r.id === "c1" },
        { send: { id: "a1", type: "abort" } },
        { until: settled },
        { send: { id: "p2", type: "prompt", message: "again" } },
        { until: settled },
        { send: { id: "n1", type: "new_session" } },
        { until: (r) => r.type === "response" && r.id === "n1" },
        { send: { id: "p3", type: "prompt", message: "fresh" } },
        { until: settled },
        { send: { id: "g1", type: "get_messages" } },
        { until: (r) => r.type === "response" && r.id === "g1" },
      ],
    }],
  },
  {
    name: "automatic compaction",
    contextWindow: 3000,
    settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 200 } },
    files: { "big.txt": `${"lorem ipsum dolor sit amet ".repeat(300)}\n` },
    script: [
      { calls: [call("call_1", "read", { path: "big.txt" })] },
      { text: "It is long." },
      { text: "## Summary\nThe user read big.txt." },
      { text: "After compaction." },
    ],
    runs: [json("read big.txt"), json("and now?", "-c")],
  },
];

// What each scenario must show on our copy, so that two copies failing alike cannot pass (normalised run).
const CHECKS = {
  "streamed text (json mode)": (r) => {
    assert.equal(lastAssistantText(r), "Hello there, this is a streamed answer.");
    assert.ok(out(r).filter((e) => e.type === "message_update" && e.assistantMessageEvent.type === "text_delta").length >= 3);
  },
  "print mode prints the final text": (r) => assert.deepEqual(out(r), ["Printed answer."]),
  "one read": (r) => assert.deepEqual(toolEnds(r), [["read", "alpha\nbeta\n", false]]),
  "parallel tools in one message": (r) => {
    assert.deepEqual(toolEnds(r), [["read", "alpha\n", false], ["bash", "first\n", false], ["bash", "second\n", false]]);
    // Results in source order.
    assert.deepEqual(r.requests[1].body.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id), ["call_1", "call_2", "call_3"]);
    assert.equal(r.requests.length, 2);
    assert.equal(r.requests[1].body.messages.filter((m) => m.role === "tool").length, 3);
  },
  "bash, edit and write, checked on disk": (r) => {
    assert.deepEqual(r.files, { "a.txt": "hello there\n", "c.txt": "created\n", "d.txt": "hello there\ncreated\n" });
    assert.equal(toolEnds(r).at(-1)[1].trim(), "2 d.txt");
  },
  "a validation error the model corrects": (r) => {
    const [first, second] = toolEnds(r);
    assert.equal(first[2], true);
    assert.match(first[1], /Validation failed for tool "read"/);
    assert.deepEqual(second, ["read", "alpha\n", false]);
  },
  "finish_reason length with an open call": (r) => {
    assert.equal(r.files["x.txt"], undefined, "the open call is not executed");
    assert.deepEqual(toolEnds(r).map(([name, text, e]) => [name, text.slice(0, 63), e]), [
      ["write", 'Tool call "write" was not executed: the response hit the output', true],
    ]);
    assert.equal(lastAssistantText(r), "Shorter now.");
  },
  "HTTP 500 then success (retry)": (r) => {
    assert.equal(r.requests.length, 2);
    assert.equal(lastAssistantText(r), "Recovered.");
  },
  "a stream cut mid-way": (r) => {
    assert.equal(r.requests.length, 2);
    assert.equal(lastAssistantText(r), "Second try.");
  },
  "a session continued with -c": (r) => {
    assert.equal(r.sessions.length, 1);
    assert.deepEqual(sessionTexts(r), ["user: first", "assistant: First answer.", "user: second", "assistant: Second answer."]);
    assert.deepEqual(r.requests[1].body.messages.slice(1).map((m) => m.role), ["user", "assistant", "user"]);
  },
  "an extension importing every named export: hooks, terminate, a tool-set change, nested calls": (r) => {
    assert.equal(r.files["exports.txt"], ["Agent: class", "DEFAULT_AGENT_IDENTITY: object", "agentLoop: function",
      "agentLoopContinue: function", "runAgentLoop: function", "runAgentLoopContinue: function", "runToolCall: function",
      "setDefaultStreamFn: function", "streamProxy: function", "namespace: true", ""].join("\n"));
    assert.deepEqual(toolEnds(r).filter(([name]) => name !== "read"), [
      ["bash", "blocked by the probe", true],
      ["probe_echo", "rewritten: echo hi", false],
      ["probe_nested", "nested: alpha\n", false],
      ["probe_tools", "tools switched", false],
      ["probe_echo", "rewritten: echo stop", false],
    ]);
    assert.equal(r.requests.length, 4, "terminate: no request after the last batch");
    assert.deepEqual(r.requests[3].body.tools.map((t) => t.function.name).sort(), ["probe_echo", "read"]);
  },
  "RPC prompt, steer and follow-up during a tool": (r) => {
    assert.equal(r.requests.length, 3);
    assert.deepEqual(sessionTexts(r).filter((t) => t.startsWith("user")), ["user: run the slow command", "user: then summarise", "user: and finally say bye"]);
  },
  "RPC steer during a tool, abort, then prompt again": (r) => {
    assert.deepEqual(sessionTexts(r).filter((t) => t.startsWith("user")), ["user: run the slow command", "user: stale steering", "user: new prompt"]);
    assert.equal(r.requests.length, 2, "D2: no request after the abort");
    assert.deepEqual(r.requests[1].body.messages.slice(-2).map((m) => m.content[0].text), ["stale steering", "new prompt"]);
  },
  "RPC abort during a stream, queue modes, clear queue, new session": (r) => {
    assert.equal(r.requests.length, 3);
    assert.equal(r.sessions.length, 2);
    assert.ok(!JSON.stringify(r.requests).includes("queued then cleared"));
    assert.deepEqual(r.requests[2].body.messages.slice(1).map((m) => m.role), ["user"]);
  },
  "automatic compaction": (r) => {
    assert.deepEqual(out(r).filter((e) => e.type.startsWith("compaction")).map((e) => e.type), ["compaction_start", "compaction_end"]);
    assert.equal(r.requests.length, 4);
  },
};

// ------------------------------------------------------------------------------------------------------------------
// Known differences (README, Differences from pi-agent-core). Each one is applied to the reference's normalised run
// before the comparison and must change it (a known difference that no longer shows fails, so this list stays true).
// ------------------------------------------------------------------------------------------------------------------

const textOf = (m) => (typeof m?.content === "string" ? m.content : m?.content?.map?.((c) => c.text ?? "").join(""));

/**
 * D2 (abort is final) with issue 14.2's rule. The reference delivers steering queued during an aborted run inside
 * that run: one more turn (the steering message, then an assistant message aborted by the same signal, "This
 * operation was aborted"); we make no further turn, keep the message queued and deliver it first in the next
 * prompt's turn, before the new prompt. The model sees the same requests either way (pi-coding-agent drops aborted
 * assistant messages from the context). Rewrites the reference's run into ours: the extra turn's records leave the
 * aborted run (its agent_end messages too) and the steering message's records open the next run's first turn; the
 * aborted assistant entry leaves the session file (its child re-parented).
 */
function steeringLeftByAbort(run) {
  const [inv] = run.invocations;
  const out = inv.stdout;
  const at = out.findIndex((r, i) =>
    r.type === "turn_start" && out[i + 1]?.type === "queue_update" && out[i + 2]?.type === "message_start" &&
    out[i + 2].message.role === "user" && out[i + 4]?.type === "message_start" && out[i + 4].message.stopReason === "aborted" &&
    out[i + 6]?.type === "turn_end" && out[i + 7]?.type === "agent_end");
  if (at < 0) return false;
  const [, queueUpdate, userStart, userEnd] = out.splice(at, 7);
  const steering = userEnd.message;
  const abortedEnd = out[at];
  abortedEnd.messages = abortedEnd.messages.filter((m) => m.role !== "user" || textOf(m) !== textOf(steering)).filter((m) => m.stopReason !== "aborted");
  const nextTurn = out.findIndex((r, i) => i > at && r.type === "turn_start");
  if (nextTurn < 0) return false;
  out.splice(nextTurn + 1, 0, queueUpdate, userStart, userEnd);
  const nextEnd = out.findIndex((r, i) => i > nextTurn && r.type === "agent_end");
  if (nextEnd >= 0) out[nextEnd].messages.unshift(steering);
  for (const entries of run.sessions) {
    const i = entries.findIndex((e) => e.type === "message" && e.message?.role === "assistant" && e.message.stopReason === "aborted" && e.message.errorMessage === "This operation was aborted");
    if (i < 0) return false;
    const [removed] = entries.splice(i, 1);
    for (const e of entries) if (e.parentId === removed.id) e.parentId = removed.parentId;
  }
  return true;
}

export const KNOWN = {
  "RPC steer during a tool, abort, then prompt again": {
    name: "D2: no turn after an abort; the steering it left goes before the next prompt",
    apply: steeringLeftByAbort,
  },
};

// ------------------------------------------------------------------------------------------------------------------

/** Up to `limit` differing paths between two values, for a readable failure. */
function differences(a, b, path = "", out = [], limit = 8) {
  if (out.length >= limit || Object.is(a, b)) return out;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object" || Array.isArray(a) !== Array.isArray(b)) {
    out.push({ path, reference: a, ours: b });
    return out;
  }
  if (Array.isArray(a) && a.length !== b.length) out.push({ path: `${path}.length`, reference: a.length, ours: b.length });
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    differences(a[k], b[k], `${path}${Array.isArray(a) ? `[${k}]` : `.${k}`}`, out, limit);
  }
  return out;
}

export function compare(reference, ours) {
  return ["invocations", "requests", "sessions", "files"].flatMap((part) => differences(reference[part], ours[part], part));
}

const only = process.env.CLIENTS_ONLY;

before(() => {
  const why = missing();
  if (why) throw new Error(`the real-client test cannot run: ${why}`);
  prepareCopies();
});
// CLIENTS_KEEP=1 keeps the runs' folders (stdout-N.txt, stderr-N.txt, sessions, files) for reading a failure.
after(() => {
  if (!process.env.CLIENTS_KEEP) rmSync(RUNS, { recursive: true, force: true });
});

/** Runs `scenario` on the reference and on `copy`; answers both normalised, the known difference applied. */
async function compareRun(scenario, copy) {
  const [reference, other] = (await Promise.all(["reference", copy].map((c) => runScenario(c, scenario)))).map(parse);
  for (const inv of [...reference.invocations, ...other.invocations]) assert.notEqual(inv.signal, "SIGKILL", "a run was killed");
  const known = KNOWN[scenario.name];
  // A known difference that no longer shows fails, so the list stays true.
  if (known) assert.ok(known.apply(reference), `the known difference "${known.name}" no longer shows: remove it`);
  const ref = normalise(reference);
  const mine = normalise(other);
  return { ref, mine, diffs: compare(ref, mine) };
}

const byName = (name) => SCENARIOS.find((s) => s.name === name);

// The runs mostly wait (process start, retries, sleeps), so a few scenarios run at once.
describe("pi-coding-agent 1.6.0 on agent-loop-wasm", { concurrency: 3 }, () => {
  for (const scenario of SCENARIOS) {
    if (only && !scenario.name.includes(only)) continue;
    const known = KNOWN[scenario.name];
    const title = `${scenario.name}: both copies agree${known ? ` except the known difference "${known.name}"` : ""}`;
    test(title, T, async () => {
      const { mine, diffs } = await compareRun(scenario, "ours");
      assert.deepEqual(diffs, [], `${scenario.name}: the copies differ`);
      assert.equal(mine.unusedResponses, scenario.unused ?? 0, "every scripted response was requested");
      CHECKS[scenario.name](mine);
    });
  }

  // The comparison must catch a broken drop-in: a copy of ours without the streamProxy export, and with the
  // issue 14.2 rule undone in the Agent facade (the steering an abort left then follows the new prompt).
  test("the comparison catches a missing export and a reordered queue (a mutated copy of ours)", { ...T, skip: only && "CLIENTS_ONLY" }, async () => {
    prepareMutant({
      // The ESM face and the CommonJS module behind it (jiti loads extensions through `require`).
      "dist/node/index.mjs": (text) => text.replace(/^ {2}streamProxy,\n/m, ""),
      "dist/node/api.js": (text) =>
        text.replace(/^Object\.defineProperty\(exports, "streamProxy".*\n/m, "").replace("exports.streamProxy = ", ""),
      "dist/node/agent.js": (text) =>
        text.replace(/^( {4}prompt\(input, images\) \{\n)/m, "$1        if (internals.get(this)) internals.get(this).steeringLeftByAbort = [];\n"),
    });
    const probe = await compareRun(byName("an extension importing every named export: hooks, terminate, a tool-set change, nested calls"), "mutant");
    assert.notDeepEqual(probe.diffs, []);
    assert.equal(probe.ref.files["exports.txt"].split("\n")[8], "streamProxy: function");
    assert.ok(!(probe.mine.files["exports.txt"] ?? "").includes("streamProxy: function"), "the extension lacks streamProxy");
    assert.ok(probe.diffs.some((d) => d.path.startsWith("files")), "the difference shows in the files on disk");

    const queue = await compareRun(byName("RPC steer during a tool, abort, then prompt again"), "mutant");
    assert.notDeepEqual(queue.diffs, []);
    assert.deepEqual(sessionTexts(queue.mine).filter((t) => t.startsWith("user")), ["user: run the slow command", "user: new prompt", "user: stale steering"]);
  });
});
