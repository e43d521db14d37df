// Issue 17, long sessions: one Agent turn (a user prompt, a reply streamed in a few text deltas by
// a custom stream function) when the transcript already holds N = 100, 1,000 and 10,000 messages,
// ours against pi-agent-core 1.6.0, in one process, alternating. Prints the median per turn, the
// growth t(10,000) / t(100) per side and ours/pi at every N. No assertions; not a test.
//
//   node --expose-gc bench/long-session.mjs [--turns 60] [--rounds 3]
import { median, now, numberArg as arg, settle } from "./harness.mjs";
import { loadOurs } from "./impl.mjs";
import { textReplyStreamFn } from "./faux.mjs";

const TURNS = arg("turns", 60); // timed turns per agent and round (after 5 untimed ones)
const ROUNDS = arg("rounds", 3);
const SIZES = [100, 1_000, 10_000];

const ours = await import((await loadOurs()).entry);
const core = await import("@earendil-works/pi-agent-core");
const ai = await import("@earendil-works/pi-ai");
const sides = [
  { name: "ours", Agent: ours.Agent, createStream: ours.createAssistantMessageEventStream },
  { name: "pi", Agent: core.Agent, createStream: ai.createAssistantMessageEventStream },
];

const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { ...cost, total: 0 } });
const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost, contextWindow: 1e6, maxTokens: 1e5 };
const assistant = (text) => ({ role: "assistant", content: [{ type: "text", text }], api: "faux", provider: "faux", model: "m", usage: usage(), stopReason: "stop", timestamp: 1 });
const PIECES = ["a reply ", "of a few ", "words, as ", "a model ", "would give"];

/** A stream function replying with PIECES as text deltas, from a macrotask like a response would. */
const streamFnFor = (createStream) => textReplyStreamFn(createStream, PIECES, setImmediate);

const history = (n) =>
  Array.from({ length: n }, (_, i) =>
    i % 2 ? assistant(`answer ${i} with some ordinary length of text to stand for a real message`) : { role: "user", content: `question ${i} of a long session`, timestamp: i },
  );

const tool = { name: "read", label: "read", description: "reads a file", parameters: { type: "object", properties: { path: { type: "string" } } }, execute: async () => ({ content: [{ type: "text", text: "" }], details: {} }) };

/** Median ms per turn of one agent whose transcript starts with `n` messages. */
async function measure(side, n) {
  const agent = new side.Agent({
    streamFn: streamFnFor(side.createStream),
    initialState: { model, systemPrompt: "You are a bench.", tools: [tool], messages: history(n) },
  });
  let events = 0;
  agent.subscribe(() => void events++);
  const times = [];
  for (let i = 0; i < TURNS + 5; i++) {
    const t = now();
    await agent.prompt(`turn ${i}`);
    if (i >= 5) times.push(now() - t);
  }
  if (agent.state.errorMessage) throw new Error(`${side.name}: ${agent.state.errorMessage}`);
  return { ms: median(times), events, length: agent.state.messages.length };
}

const load0 = (await import("node:os")).loadavg()[0];
const results = Object.fromEntries(sides.map((s) => [s.name, Object.fromEntries(SIZES.map((n) => [n, []]))]));
for (let r = 0; r < ROUNDS; r++) {
  for (const n of SIZES) {
    for (const side of r % 2 ? [...sides].reverse() : sides) {
      await settle(1);
      const m = await measure(side, n);
      results[side.name][n].push(m.ms);
    }
  }
}
const load1 = (await import("node:os")).loadavg()[0];

const f = (ms) => `${ms < 1 ? ms.toFixed(3) : ms.toFixed(2)} ms`.padStart(10);
console.log(`one turn after N prior messages, median per turn (${TURNS} turns × ${ROUNDS} rounds per side and N); load average ${load0.toFixed(2)} → ${load1.toFixed(2)}`);
console.log(`${"N".padStart(7)} ${"ours".padStart(10)} ${"pi".padStart(10)}  ours/pi   rounds ours | pi`);
const med = {};
for (const s of sides) med[s.name] = Object.fromEntries(SIZES.map((n) => [n, median(results[s.name][n])]));
for (const n of SIZES) {
  const rounds = (name) => results[name][n].map((x) => x.toFixed(3)).join(" ");
  console.log(`${String(n).padStart(7)} ${f(med.ours[n])} ${f(med.pi[n])}  ${(med.ours[n] / med.pi[n]).toFixed(2).padStart(6)}×   ${rounds("ours")} | ${rounds("pi")}`);
}
const big = SIZES[SIZES.length - 1];
const small = SIZES[0];
for (const s of sides) {
  console.log(`growth ${s.name}: t(${big}) / t(${small}) = ${(med[s.name][big] / med[s.name][small]).toFixed(2)}`);
}

// The floor under the growth target. An exact turn reads every message of the transcript at least
// twice whatever the loop keeps between turns: E-8.1 checks at each prompt that every message is an
// object with a string role (the caller may have edited any of them in place since the last turn),
// and the default convertToLlm filters the whole transcript by role at each request (the reference
// does too), with the D6 working copy and the filter's copy besides. Here those passes alone, in
// plain JS, timed on the agent's own transcript just before each prompt (as cold in the cache as the
// real ones), then turned into the least growth a loop with our t(100) can show.
function exactPasses(list) {
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (typeof m !== "object" || m === null || Array.isArray(m) || typeof m.role !== "string") return -1;
  }
  const working = [...list]; // D6
  const llm = working.slice(); // the filter's copy; all kept, as in this transcript
  for (let i = 0; i < llm.length; i++) {
    const role = llm[i].role;
    if (role !== "user" && role !== "assistant" && role !== "toolResult" && role !== "system") return -1;
  }
  return llm.length;
}
async function floorAt(n) {
  const side = sides[0];
  const agent = new side.Agent({
    streamFn: streamFnFor(side.createStream),
    initialState: { model, systemPrompt: "You are a bench.", tools: [tool], messages: history(n) },
  });
  const times = [];
  for (let i = 0; i < TURNS + 5; i++) {
    const t = now();
    exactPasses(agent.state.messages);
    if (i >= 5) times.push(now() - t);
    await agent.prompt(`turn ${i}`);
  }
  return median(times);
}
const floor = {};
for (const n of SIZES) floor[n] = await floorAt(n);
const passes = SIZES.map((n) => `${n}: ${(floor[n] * 1000).toFixed(1)} µs`).join(", ");
const least = (med.ours[small] + floor[big] - floor[small]) / med.ours[small];
console.log(`exact O(N) passes per turn (E-8.1 check, D6 copy, the default filter), in situ: ${passes}`);
console.log(`least growth with ours t(${small}) = ${f(med.ours[small]).trim()}: ${least.toFixed(2)} (target 1.5 needs t(${small}) ≥ ${((2 * (floor[big] - floor[small]))).toFixed(3)} ms)`);
