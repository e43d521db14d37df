// Issue 43, item 3: what an `Agent` costs. N agents (system prompt, one tool, a listener) are made, each runs one
// prompt (a reply of 5 text deltas from a custom stream function, from a macrotask as a response would come), all at
// once, and are kept; then after a full GC the heap they keep (JS heap + external memory, which holds our wasm
// memory). Ours against pi-agent-core 1.6.0 in one process, sides alternating over rounds, each round on fresh
// agents. No assertions; not a test.
//
//   node --expose-gc bench/agents.mjs [--agents 1000] [--rounds 5]
import { gc, median, now, numberArg as arg, settle } from "./harness.mjs";
import { loadOurs } from "./impl.mjs";
import { textReplyStreamFn } from "./faux.mjs";

const AGENTS = arg("agents", 1000);
const ROUNDS = arg("rounds", 5);
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");

const ours = await import((await loadOurs()).entry);
const core = await import("@earendil-works/pi-agent-core");
const ai = await import("@earendil-works/pi-ai");
const sides = [
  { name: "ours", Agent: ours.Agent, createStream: ours.createAssistantMessageEventStream },
  { name: "pi", Agent: core.Agent, createStream: ai.createAssistantMessageEventStream },
];

const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost, contextWindow: 1e6, maxTokens: 1e5 };
const tool = {
  name: "read", label: "read", description: "reads a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
  execute: async () => ({ content: [{ type: "text", text: "" }], details: {} }),
};
const PIECES = ["a reply ", "of a few ", "words, as ", "a model ", "would give"];

/** Heap in use plus external memory (ours: the wasm memory is external; `arrayBuffers` is part of `external`), after
 *  a full GC. */
async function footprint() {
  await settle();
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** One round of a side: [ms to make the agents, ms for their runs, bytes they keep]. */
async function round(side) {
  const before = await footprint();
  const streamFn = textReplyStreamFn(side.createStream, PIECES, setImmediate);
  let t = now();
  const agents = [];
  for (let i = 0; i < AGENTS; i++) {
    const agent = new side.Agent({ streamFn, initialState: { model, systemPrompt: "You are a bench.", tools: [tool], messages: [] } });
    agent.subscribe(() => {});
    agents.push(agent);
  }
  const made = now() - t;
  t = now();
  await Promise.all(agents.map((agent, i) => agent.prompt(`hello ${i}`)));
  const ran = now() - t;
  for (const agent of agents) if (agent.state.messages.at(-1)?.role !== "assistant" || agent.state.errorMessage) throw new Error(`${side.name}: a run failed`);
  const kept = (await footprint()) - before;
  agents.length = 0;
  return [made, ran, kept];
}

const results = Object.fromEntries(sides.map((s) => [s.name, { made: [], ran: [], kept: [] }]));
for (const side of sides) await round(side); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const side of r % 2 ? [...sides].reverse() : sides) {
    const [made, ran, kept] = await round(side);
    results[side.name].made.push(made);
    results[side.name].ran.push(ran);
    results[side.name].kept.push(kept);
  }
}
const row = (label, key, unit) => {
  const [o, p] = [median(results.ours[key]), median(results.pi[key])];
  const f = unit === "ms" ? (x) => `${x.toFixed(1)} ms` : (x) => `${(x / 1024 / 1024).toFixed(2)} MB`;
  console.log(`| ${label} | ${f(o)} | ${f(p)} | ${(o / p).toFixed(2)}× |`);
};
console.log(`${AGENTS} agents at once, medians of ${ROUNDS} rounds, sides alternating (node ${process.version})`);
console.log("| | ours | pi | ours / pi |");
console.log("|---|---|---|---|");
row(`make ${AGENTS} Agents (one tool, a listener)`, "made", "ms");
row("their first runs, all at once", "ran", "ms");
row("what they keep, after a full GC", "kept", "MB");
