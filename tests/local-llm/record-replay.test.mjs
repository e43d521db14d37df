// Issue 44 (SPEC §14): a real run recorded from the local model (local-llm/, a real llama.cpp engine) — an Agent's tool
// loop through the built package's openai-completions provider — then replayed 100 times with no network at all
// (`globalThis.fetch` refuses every call): each replay's events and transcript equal the recorded run's, byte for
// byte but for the clock's fields (timestamp, durationMs). The cassette is written to target/local-llm.cassette.json.
// Then the same cassette is replayed 100 times each in Deno, headless Chromium and workerd (./replay-runtimes.mjs),
// with the same result. The flow itself (model, `add` tool, prompt) is ./replay-flow.mjs, shared by every runtime.
//
//   node --test tests/local-llm/record-replay.test.mjs   # starts the server with scripts/local-llm, stops it after
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCRIPT = `${ROOT}scripts/local-llm`;
const T = { timeout: 300_000 };
const REPLAYS = 100;

let base = process.env.LOCAL_LLM_URL?.replace(/\/+$/, "");
let startedHere = false;
const pkg = await import(`${ROOT}pkg/dist/node/index.mjs`);
const testing = await import(`${ROOT}pkg/dist/node/testing.mjs`);
const { createCassette } = testing;
const { calls, replayMany, replayRun } = await import("./replay-flow.mjs");
const { replayElsewhere } = await import("./replay-runtimes.mjs");

before(() => {
  if (base) return;
  if (spawnSync(SCRIPT, ["status"], { stdio: "ignore" }).status !== 0) {
    execFileSync(SCRIPT, ["start"], { stdio: ["ignore", "inherit", "inherit"] });
    startedHere = true;
  }
  base = execFileSync(SCRIPT, ["url"], { encoding: "utf8" }).trim();
});

after(() => {
  if (startedHere) execFileSync(SCRIPT, ["stop"], { stdio: ["ignore", "inherit", "inherit"] });
});

/** One run of the shared flow through `cassette`, against the local engine at `base`: { events, transcript }. */
const run = (cassette) => replayRun({ lib: pkg, testing, cassette, baseUrl: base });

test(`R-14.2 a tool loop recorded from the local model replays ${REPLAYS} times offline, identical to the recording`, T, async () => {
  const recorder = createCassette({ mode: "record" });
  const live = await run(recorder);
  const doc = recorder.toJSON();
  const kinds = doc.interactions.map((i) => i.type);
  assert.ok(kinds.filter((k) => k === "http").length >= 2 && kinds.includes("tool"), `a tool loop was recorded: ${kinds}`);
  assert.equal(calls.add, 1);
  assert.ok(doc.interactions[0].response.chunks.length > 3, "the stream's chunks, as the engine sent them");
  mkdirSync(`${ROOT}target`, { recursive: true });
  writeFileSync(`${ROOT}target/local-llm.cassette.json`, `${JSON.stringify(doc, null, 2)}\n`);

  // The same loop as in the other runtimes (./replay-flow.mjs): globalThis.fetch refuses every call meanwhile.
  const here = await replayMany({ lib: pkg, testing, doc, expected: live, baseUrl: base, replays: REPLAYS });
  assert.deepEqual(here, { replays: REPLAYS, mismatch: null, networkCalls: 0, adds: 1 });
  assert.equal(calls.add, 1, "the tool ran only while recording");

  const elsewhere = await replayElsewhere(doc, live, { replays: REPLAYS });
  assert.deepEqual(elsewhere, ["deno", "chromium", "workerd"].map((runtime) => ({ runtime, replays: REPLAYS, ok: true })));
});
