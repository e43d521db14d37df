// The real-client test (issue 14): pi-coding-agent 1.6.0 runs unchanged on agent-loop-wasm. Each scenario runs the
// unmodified client and the client with our pi-agent-core (tests/clients/harness.mjs) against the same scripted
// OpenAI-compatible server, then compares exit codes, stdout (JSON / RPC records or printed text), stderr, the
// request bodies the server received, session files and files on disk, all normalised. Any difference fails the
// scenario unless it is a known difference listed below (named in the test and in README's Differences).
//
// Run: node --test tests/clients/   (needs scripts/setup and a built pkg/; about a minute)
// CLIENTS_ONLY=<substring> runs the matching scenarios only.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { COPIES, missing, normalise, prepareCopies, runScenario } from "./harness.mjs";

const SKIP = missing();
const T = { timeout: 120000, skip: SKIP };

// ------------------------------------------------------------------------------------------------------------------
// Scenarios
// ------------------------------------------------------------------------------------------------------------------

const json = (prompt, ...more) => ({ args: ["--mode", "json", ...more, prompt] });
const call = (id, name, args) => ({ id, name, args });
const isType = (type) => (r) => r?.type === type;
const settled = isType("agent_settled");

const EXPORTS_PROBE = `import * as core from "@earendil-works/pi-agent-core";
import { Agent, DEFAULT_AGENT_IDENTITY, agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue, runToolCall,
  setDefaultStreamFn, streamProxy } from "@earendil-works/pi-agent-core";
import { writeFileSync } from "node:fs";

const named = { Agent, DEFAULT_AGENT_IDENTITY, agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue,
  runToolCall, setDefaultStreamFn, streamProxy };
const kind = (v) => typeof v === "function" ? (/^class[\\s{]/.test(Function.prototype.toString.call(v)) ? "class" : "function") : typeof v;

export default function (pi) {
  writeFileSync("exports.txt", Object.keys(core).sort().map((k) => k + ": " + kind(core[k])).join("\\n") + "\\n"
    + "named: " + Object.keys(named).filter((k) => named[k] !== undefined).length + "\\n");
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
      return { content: [{ type: "text", text: "nested: " + inner.content.map((c) => c.text).join("") }], details: {} };
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
      { calls: [call("call_1", "read", { path: "a.txt" }), call("call_2", "read", { path: "b.txt" }), call("call_3", "bash", { command: "echo from-bash" })] },
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
    script: [{ calls: [call("call_1", "write", { path: "x.txt", content: "never" })], finish: "length" }],
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

// ------------------------------------------------------------------------------------------------------------------
// Known differences (README, Differences from pi-agent-core). Each one is applied to the reference's normalised run
// before the comparison and must change it (a known difference that no longer shows fails, so this list stays true).
// ------------------------------------------------------------------------------------------------------------------

export const KNOWN = {};

// ------------------------------------------------------------------------------------------------------------------

/** The first differing path between two values, for a readable failure. */
function firstDifference(a, b, path = "") {
  if (Object.is(a, b)) return undefined;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object" || Array.isArray(a) !== Array.isArray(b)) {
    return { path, reference: a, ours: b };
  }
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  for (const k of keys) {
    const d = firstDifference(a[k], b[k], `${path}${Array.isArray(a) ? `[${k}]` : `.${k}`}`);
    if (d) return d;
  }
  return undefined;
}

export function compare(reference, ours) {
  const diffs = [];
  for (const part of ["invocations", "requests", "sessions", "files"]) {
    const d = firstDifference(reference[part], ours[part], part);
    if (d) diffs.push(d);
  }
  return diffs;
}

const only = process.env.CLIENTS_ONLY;

before(() => {
  if (!SKIP) prepareCopies();
});

for (const scenario of SCENARIOS) {
  if (only && !scenario.name.includes(only)) continue;
  const known = KNOWN[scenario.name];
  const title = `pi-coding-agent 1.6.0, ${scenario.name}: both copies agree${known ? ` except the known difference "${known.name}"` : ""}`;
  test(title, T, async () => {
    const [reference, ours] = await Promise.all(COPIES.map((copy) => runScenario(copy, scenario)));
    let ref = normalise(reference);
    const mine = normalise(ours);
    if (known) {
      const before = JSON.stringify(ref);
      ref = known.apply(ref, mine);
      assert.notEqual(JSON.stringify(ref), before, `the known difference "${known.name}" no longer shows: remove it`);
    }
    for (const inv of ref.invocations) assert.notEqual(inv.signal, "SIGKILL", "the reference run was killed");
    const diffs = compare(ref, mine);
    assert.deepEqual(diffs, [], `${scenario.name}: the copies differ (first difference per part)`);
    if (scenario.check) scenario.check(ours, reference);
  });
}
