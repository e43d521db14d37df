// The cost of durability (issue 16): one turn (a user prompt, a streamed reply) of an agent whose transcript
// already holds N messages, stored three ways: no storage; `onCheckpoint` writing each checkpoint as JSON (what
// examples/cloudflare does); and `snapshot()` + JSON after the turn (what storing a whole agent costs). Prints
// medians per turn, bytes written per turn, and the ratio of N = 5,000 to N = 100. No assertions; not a test.
//
//   node --expose-gc bench/checkpoint.mjs
import { median, now } from "./harness.mjs";
import { loadOurs } from "./impl.mjs";

const { Agent, createAssistantMessageEventStream } = await import((await loadOurs()).entry);
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost: usage.cost, contextWindow: 1e6, maxTokens: 1e5 };
const reply = (text) => ({ role: "assistant", content: [{ type: "text", text }], api: "faux", provider: "faux", model: "m", usage, stopReason: "stop", timestamp: 1 });
const streamFn = () => {
  const s = createAssistantMessageEventStream();
  const message = reply("a reply of a few words, as a model would give");
  queueMicrotask(() => {
    s.push({ type: "start", partial: message });
    s.push({ type: "done", reason: "stop", message });
    s.end();
  });
  return s;
};
const history = (n) =>
  Array.from({ length: n }, (_, i) =>
    i % 2 ? reply(`answer ${i} with some ordinary length of text to stand for a real message`) : { role: "user", content: `question ${i} of a long session`, timestamp: i },
  );

async function measure(n, mode) {
  let bytes = 0;
  const options = { streamFn, initialState: { model, messages: history(n) } };
  if (mode === "checkpoints") options.onCheckpoint = (c) => void (bytes += JSON.stringify(c).length);
  const agent = new Agent(options);
  const times = [];
  for (let i = 0; i < 40; i++) {
    bytes = 0;
    const t = now();
    await agent.prompt(`turn ${i}`);
    if (mode === "snapshot") bytes += JSON.stringify(agent.snapshot()).length;
    times.push(now() - t);
  }
  // The first turn of a checkpointing agent writes its full first checkpoint: the steady state is what matters.
  return { ms: median(times.slice(5)), bytes };
}

const rows = [];
for (const mode of ["none", "checkpoints", "snapshot"]) {
  const small = await measure(100, mode);
  const large = await measure(5000, mode);
  rows.push({ mode, small, large });
}
console.log("storage per turn            N=100 time   bytes     N=5,000 time   bytes       time ratio  bytes ratio");
for (const { mode, small, large } of rows) {
  const f = (ms) => `${ms.toFixed(3)} ms`.padStart(11);
  const b = (n) => String(n).padStart(9);
  console.log(
    `${mode.padEnd(26)} ${f(small.ms)} ${b(small.bytes)}   ${f(large.ms)} ${b(large.bytes)}   ${(large.ms / small.ms).toFixed(2).padStart(9)}x ${(large.bytes / Math.max(1, small.bytes)).toFixed(1).padStart(10)}x`,
  );
}
