// The fixed cost of a run (issue 17): what one small run costs when nothing in it is big. Ours against
// pi-agent-core 1.6.0, one process, sides alternating in rounds. No assertions; not a test.
//   agent turn  `agent.prompt()` on an Agent (system prompt, one tool, a listener) whose custom stream function
//               replies with 5 text deltas synchronously; the transcript is reset every 100 turns (so N ≤ 200);
//   agentLoop   one bare `agentLoop` run (fresh context with one tool, default-like convertToLlm) of the same reply.
// Prints the median µs per turn / run over the rounds and ours / pi.
//   node bench/fixed-cost.mjs [--rounds 5] [--count 2000]
import { median, numberArg as arg } from "./harness.mjs";
import { loadOurs } from "./impl.mjs";
import { textReplyStreamFn } from "./faux.mjs";

const ROUNDS = arg("rounds", 5);
const COUNT = arg("count", 2000);

const ours = await import((await loadOurs()).entry);
const core = await import("@earendil-works/pi-agent-core");
const ai = await import("@earendil-works/pi-ai");
const SIDES = {
  ours: { Agent: ours.Agent, agentLoop: ours.agentLoop, createStream: ours.createAssistantMessageEventStream },
  pi: { Agent: core.Agent, agentLoop: core.agentLoop, createStream: ai.createAssistantMessageEventStream },
};

const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost, contextWindow: 1e6, maxTokens: 1e5 };
const PIECES = ["a reply ", "of a few ", "words, as ", "a model ", "would give"];
const tool = { name: "read", label: "read", description: "reads a file", parameters: { type: "object", properties: { path: { type: "string" } } }, execute: async () => ({ content: [{ type: "text", text: "" }], details: {} }) };
const LLM = new Set(["user", "assistant", "toolResult"]);
const convertToLlm = (messages) => messages.filter((m) => LLM.has(m.role));

const streamFnFor = (createStream) => textReplyStreamFn(createStream, PIECES);

const agents = {};
for (const [name, side] of Object.entries(SIDES)) {
  const agent = new side.Agent({ streamFn: streamFnFor(side.createStream), initialState: { model, systemPrompt: "You are a bench.", tools: [tool], messages: [] } });
  agent.subscribe(() => {});
  agents[name] = agent;
}

async function agentTurns(name, n) {
  const agent = agents[name];
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    await agent.prompt(`turn ${i}`);
    if (agent.state.messages.length > 200) agent.state.messages = [];
  }
  if (agent.state.errorMessage) throw new Error(`${name}: ${agent.state.errorMessage}`);
  return ((performance.now() - t) / n) * 1000;
}

async function loopRuns(name, n) {
  const side = SIDES[name];
  const streamFn = streamFnFor(side.createStream);
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const stream = side.agentLoop([{ role: "user", content: `run ${i}`, timestamp: 1 }], { systemPrompt: "You are a bench.", messages: [], tools: [tool] }, { model, convertToLlm }, undefined, streamFn);
    for await (const _e of stream);
  }
  return ((performance.now() - t) / n) * 1000;
}

const results = { agent: { ours: [], pi: [] }, loop: { ours: [], pi: [] } };
for (const name of ["ours", "pi"]) {
  await agentTurns(name, 300); // warm-up
  await loopRuns(name, 300);
}
for (let r = 0; r < ROUNDS; r++) {
  for (const name of r % 2 ? ["pi", "ours"] : ["ours", "pi"]) {
    results.agent[name].push(await agentTurns(name, COUNT));
    results.loop[name].push(await loopRuns(name, COUNT));
  }
}
const f = (x) => `${x.toFixed(1)} µs`;
console.log(`fixed cost per run: medians of ${ROUNDS} rounds × ${COUNT}, sides alternating (node ${process.version})`);
console.log("| | ours | pi | ours / pi | rounds ours — pi |");
console.log("|---|---|---|---|---|");
for (const [key, label] of [["agent", "Agent turn (5 deltas, one tool, one listener)"], ["loop", "bare agentLoop run (5 deltas, one tool)"]]) {
  const o = median(results[key].ours);
  const p = median(results[key].pi);
  const rounds = (list) => list.map((x) => x.toFixed(0)).join(" ");
  console.log(`| ${label} | ${f(o)} | ${f(p)} | ${(o / p).toFixed(2)}× | ${rounds(results[key].ours)} — ${rounds(results[key].pi)} |`);
}
