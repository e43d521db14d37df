// Many runs at once (issue 17, T-4.8.1): `onUpdate` calls reach their own execution when a hundred runs with
// parallel tools interleave, and a run leaves nothing per run behind in the package's tables. The first test runs
// against the reference too; the second counts FinalizationRegistry registrations of our wasm glue (ours only).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { IS_REFERENCE, agentLoop, createAssistantMessageEventStream } from "./impl.mjs";
import { model } from "./faux.mjs";
import { TOOLS, TURNS, scriptedReplies, updatingTools as tools } from "./concurrent-helpers.mjs";

const RUNS = 100;
const scripted = (run) => scriptedReplies(createAssistantMessageEventStream, run);

test(`T-4.8.1 ${RUNS} concurrent runs × ${TURNS} turns × ${TOOLS} parallel tools: every onUpdate reaches its own execution, in order`, { timeout: 20_000 }, async () => {
  const runs = Array.from({ length: RUNS }, async (_, run) => {
    const stream = agentLoop([{ role: "user", content: `go ${run}`, timestamp: 0 }], { systemPrompt: "", messages: [], tools }, { model: model(), convertToLlm: (ms) => ms }, undefined, scripted(run));
    const updates = [];
    const ends = [];
    for await (const e of stream) {
      if (e.type === "tool_execution_update") updates.push(`${e.toolCallId}: ${e.partialResult.content[0].text} ${JSON.stringify(e.partialResult.details)}`);
      if (e.type === "tool_execution_end") ends.push(`${e.toolCallId}: ${e.result.content[0].text}`);
    }
    return { run, updates, ends };
  });
  for (const { run, updates, ends } of await Promise.all(runs)) {
    const expected = [];
    for (let t = 0; t < TURNS; t++) {
      for (const n of [1, 2]) {
        for (let i = 0; i < TOOLS; i++) expected.push(`r${run}_t${t}_c${i}: r${run}_t${t}_c${i} update ${n} ${JSON.stringify({ run, turn: t, i, n })}`);
      }
    }
    assert.deepEqual(updates, expected, `run ${run}'s updates`);
    assert.equal(ends.length, TURNS * TOOLS);
  }
});

// A child process, so FinalizationRegistry is counted from before the package loads.
const CHILD = `
let registered = 0;
const FR = globalThis.FinalizationRegistry;
globalThis.FinalizationRegistry = class extends FR { register(...a) { registered++; return super.register(...a); } };
const lib = await import(${JSON.stringify(new URL("../../pkg/dist/node/index.mjs", import.meta.url).href)});
const { scriptedReplies, updatingTools: tools } = await import("./concurrent-helpers.mjs");
const scripted = (run) => scriptedReplies(lib.createAssistantMessageEventStream, run);
const model = () => ({ id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 });
const batch = (n, tag) => Promise.all(Array.from({ length: n }, async (_, k) => {
  const s = lib.agentLoop([{ role: "user", content: "go", timestamp: 0 }], { systemPrompt: "", messages: [], tools }, { model: model(), convertToLlm: (ms) => ms }, undefined, scripted(k));
  for await (const e of s);
}));
await batch(5, "warm");
const before = registered;
await batch(50, "measured");
console.log(JSON.stringify({ registrations: registered - before }));
`;

test(
  "issue 17: runs with tool batches register no finalizer (no closure per batch or run in the wasm glue)",
  { timeout: 20_000, skip: IS_REFERENCE && "counts our wasm glue's registrations" },
  () => {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", CHILD], { encoding: "utf8", cwd: fileURLToPath(new URL(".", import.meta.url)) });
    assert.equal(r.status, 0, r.stderr);
    // 50 runs of two tool batches each; the old glue made one closure per batch (100)
    assert.deepEqual(JSON.parse(r.stdout.trim().split("\n").at(-1)), { registrations: 0 });
  },
);

