// The one Agent flow of tests/local-llm/record-replay.test.mjs (issue 44, SPEC §14): SmolLM2 through the built-in
// openai-completions provider, an `add` tool, one prompt. Node records and replays it; tests/local-llm/replay-runtimes.mjs
// reads this file as text and runs it unchanged in Deno, headless Chromium and workerd. So it is runtime-neutral: it
// imports nothing — the package (`lib`, its main entry) and `agent-loop-wasm/testing` (`testing`) are passed in, as each
// runtime loads them its own way.

export const SYSTEM_PROMPT = "You are a helpful assistant.";
export const PROMPT = "Use the add tool to add 2 and 3.";

/** The model: the local engine at `baseUrl` (a replay keeps the recorded one: the request URL must match). */
export const model = (baseUrl) => ({
  id: "SmolLM2-135M-Instruct", name: "SmolLM2 135M", api: "openai-completions", provider: "local",
  baseUrl, input: ["text"], reasoning: false, contextWindow: 8192, maxTokens: 96,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});

/** How many times the `add` tool really ran in this runtime (a replay's tool results come from the cassette). */
export const calls = { add: 0 };

export const add = {
  name: "add",
  label: "Add",
  description: "Add two numbers",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  async execute(_id, { a, b }) {
    calls.add++;
    return { content: [{ type: "text", text: JSON.stringify({ sum: a + b }) }], details: { a, b } };
  },
};

/** JSON without the clock's fields (timestamp, durationMs): what a replay must reproduce byte for byte. */
export const clockless = (value) => JSON.stringify(value, (k, v) => (k === "timestamp" || k === "durationMs" ? undefined : v));

/** One run of the flow through `cassette` (recording or replaying): every event the listener saw, and the transcript. */
export async function replayRun({ lib, testing: _testing, cassette, baseUrl }) {
  const agent = new lib.Agent({
    initialState: { systemPrompt: SYSTEM_PROMPT, model: model(baseUrl), tools: cassette.tools([add]) },
    fetch: cassette.fetch,
  });
  const events = [];
  agent.subscribe((e) => events.push(clockless(e)));
  await agent.prompt(PROMPT);
  return { events, transcript: clockless(agent.state.messages) };
}

/** The first difference of a run from `expected` ({ events, transcript }), or null: `{ index, actual, expected }`
 *  (index is an event's, or "length" / "transcript"). */
export function firstDifference(run, expected) {
  const n = Math.max(run.events.length, expected.events.length);
  for (let i = 0; i < n; i++) {
    if (run.events[i] !== expected.events[i]) return { index: i, actual: run.events[i] ?? null, expected: expected.events[i] ?? null };
  }
  if (run.transcript !== expected.transcript) return { index: "transcript", actual: run.transcript, expected: expected.transcript };
  return null;
}

/**
 * What each runtime runs: `globalThis.fetch` replaced by one that rejects (and counts its calls), then `replays` fresh
 * cassettes of `doc`, each run compared with `expected` and stopped (which throws if the run drifted). Resolves
 * `{ replays, mismatch, networkCalls, adds }` (mismatch: the first difference, with the replay's number) — plain JSON,
 * so a page or a Worker can hand it back; the caller decides.
 */
export async function replayMany({ lib, testing, doc, expected, baseUrl, replays }) {
  const realFetch = globalThis.fetch;
  let networkCalls = 0;
  globalThis.fetch = () => {
    networkCalls++;
    return Promise.reject(new TypeError("the replay used the network"));
  };
  const stored = JSON.stringify(doc);
  let done = 0;
  let mismatch = null;
  try {
    for (; done < replays && mismatch === null; done++) {
      const player = testing.createCassette({ cassette: stored });
      const run = await replayRun({ lib, testing, cassette: player, baseUrl });
      const diff = firstDifference(run, expected);
      if (diff !== null) mismatch = { replay: done, ...diff };
      else await player.stop();
    }
  } finally {
    globalThis.fetch = realFetch;
  }
  return { replays: done, mismatch, networkCalls, adds: calls.add };
}
