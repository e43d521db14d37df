// Issue 44 (SPEC §14): a real run recorded from the local model (local-llm/, a real llama.cpp engine) — an Agent's tool
// loop through the built package's openai-completions provider — then replayed 100 times with no network at all
// (`globalThis.fetch` refuses every call): each replay's events and transcript equal the recorded run's, byte for
// byte but for the clock's fields (timestamp, durationMs). The cassette is written to target/local-llm.cassette.json.
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
const { createCassette } = await import(`${ROOT}pkg/dist/node/testing.mjs`);

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

const model = () => ({
  id: "SmolLM2-135M-Instruct", name: "SmolLM2 135M", api: "openai-completions", provider: "local",
  baseUrl: base, input: ["text"], reasoning: false, contextWindow: 8192, maxTokens: 96,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});

let adds = 0;
const add = {
  name: "add",
  label: "Add",
  description: "Add two numbers",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  async execute(_id, { a, b }) {
    adds++;
    return { content: [{ type: "text", text: JSON.stringify({ sum: a + b }) }], details: { a, b } };
  },
};

const clockless = (value) => JSON.stringify(value, (k, v) => (k === "timestamp" || k === "durationMs" ? undefined : v));

async function run(cassette) {
  const agent = new pkg.Agent({
    initialState: { systemPrompt: "You are a helpful assistant.", model: model(), tools: cassette.tools([add]) },
    fetch: cassette.fetch,
  });
  const events = [];
  agent.subscribe((e) => events.push(clockless(e)));
  await agent.prompt("Use the add tool to add 2 and 3.");
  return { events, transcript: clockless(agent.state.messages) };
}

test(`R-14 a tool loop recorded from the local model replays ${REPLAYS} times offline, identical to the recording`, T, async () => {
  const recorder = createCassette({ mode: "record" });
  const live = await run(recorder);
  const doc = recorder.toJSON();
  const kinds = doc.interactions.map((i) => i.type);
  assert.ok(kinds.filter((k) => k === "http").length >= 2 && kinds.includes("tool"), `a tool loop was recorded: ${kinds}`);
  assert.equal(adds, 1);
  assert.ok(doc.interactions[0].response.chunks.length > 3, "the stream's chunks, as the engine sent them");
  mkdirSync(`${ROOT}target`, { recursive: true });
  writeFileSync(`${ROOT}target/local-llm.cassette.json`, `${JSON.stringify(doc, null, 2)}\n`);

  const realFetch = globalThis.fetch;
  globalThis.fetch = () => Promise.reject(new TypeError("the replay used the network"));
  try {
    const stored = JSON.stringify(doc);
    for (let i = 0; i < REPLAYS; i++) {
      const player = createCassette({ cassette: stored });
      const replayed = await run(player);
      const at = replayed.events.findIndex((e, k) => e !== live.events[k]);
      assert.equal(replayed.events.length, live.events.length, `replay ${i}: as many events`);
      assert.equal(at, -1, `replay ${i}: event ${at} differs:\n${replayed.events[at]}\n${live.events[at]}`);
      assert.equal(replayed.transcript, live.transcript, `replay ${i}: transcript`);
      await player.stop();
    }
  } finally {
    globalThis.fetch = realFetch;
  }
  assert.equal(adds, 1, "the tool ran only while recording");
});
