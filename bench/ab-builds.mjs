// Two or more builds of our package side by side in one process, rotating which goes first each round: request
// building at 10,000 prior messages through each wire format (the workload of bench/request-build.mjs, the bodies
// compared byte for byte across builds), and the peer table's run of 5 steps × 3 tools. Each build is a copy of
// `pkg/dist/node` (its .wasm swapped, or built from another commit or with other flags). Not a test.
//   cp -r pkg/dist/node /tmp/a && … build the variant … && cp -r pkg/dist/node /tmp/b
//   node --expose-gc bench/ab-builds.mjs /tmp/a /tmp/b [requests|runs] [--rounds 16]
// Prints medians in ms (requests) or µs per run, each with its ratio to the first build.
import { median } from "./harness.mjs";

const argv = process.argv.slice(2);
const ROUNDS = argv.includes("--rounds") ? Number(argv[argv.indexOf("--rounds") + 1]) : 16;
const WARM = 4;
const DIRS = argv.filter((a) => a.startsWith("/"));
const only = argv.find((a) => a === "requests" || a === "runs");
if (DIRS.length < 2) throw new Error("usage: node --expose-gc bench/ab-builds.mjs /abs/build-a /abs/build-b [requests|runs]");
const label = (dir) => dir.split("/").filter(Boolean).pop();
/** Round r visits the builds starting from a different one each time. */
const order = (r) => DIRS.map((_, i) => (i + r) % DIRS.length);
const report = (what, unit, times) =>
  console.log(`${what}: ${DIRS.map((d, i) => `${label(d)} ${median(times[i]).toFixed(1)} ${unit} (${(median(times[i]) / median(times[0])).toFixed(2)})`).join(", ")}`);

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const modelFor = (api) => ({
  id: "bench-model",
  name: "bench",
  api,
  provider: api.startsWith("anthropic") ? "anthropic" : api.startsWith("google") ? "google" : "openai",
  baseUrl: "http://127.0.0.1:9/v1",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 1000,
});

/** bench/request-build.mjs's transcript: ~60 characters a message, every tenth pair a tool call and its result. */
function messages(n, api) {
  const out = [];
  for (let i = 0; out.length < n; i++) {
    const text = `message ${i}: some earlier words of the session, kept as is.`;
    if (i % 10 === 9) {
      const id = `call_${i}`;
      out.push({ role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `src/file_${i}.ts` } }], api, provider: "bench", model: "bench-model", usage, stopReason: "toolUse", timestamp: i });
      out.push({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: i });
    } else if (i % 2 === 0) {
      out.push({ role: "user", content: text, timestamp: i });
    } else {
      out.push({ role: "assistant", content: [{ type: "text", text }], api, provider: "bench", model: "bench-model", usage, stopReason: "stop", timestamp: i });
    }
  }
  out.length = n;
  out.push({ role: "user", content: "go on", timestamp: n });
  return out;
}
const tools = [{ name: "read", description: "Reads a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];

/** ms from the `streamBuiltin` call to its fetch, and the body sent. */
async function build(lib, api, context) {
  let fetched = 0;
  let body = "";
  const t0 = performance.now();
  const stream = lib.streamBuiltin(modelFor(api), context, {
    apiKey: "bench",
    fetch: async (_url, init) => {
      fetched = performance.now();
      body = init.body;
      return new Response('{"error":{"message":"bench"}}', { status: 400, headers: { "content-type": "application/json" } });
    },
  });
  for await (const _ of stream);
  if (!fetched) throw new Error(`${api}: no request was made`);
  return { ms: fetched - t0, body };
}

if (only !== "runs") {
  const libs = await Promise.all(DIRS.map((d) => import(`${d}/index.mjs`)));
  for (const api of ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"]) {
    const context = { systemPrompt: "You are a bench.", messages: messages(10_000, api), tools };
    const times = DIRS.map(() => []);
    const bodies = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of order(r)) {
        globalThis.gc?.();
        const { ms, body } = await build(libs[i], api, context);
        if (r >= WARM) times[i].push(ms);
        bodies[i] = body;
      }
    }
    if (!bodies.every((b) => b === bodies[0])) throw new Error(`${api}: the builds sent different bodies`);
    report(`request ${api}, 10,000 messages`, "ms", times);
  }
}

if (only !== "requests") {
  // Each build gets its own copy of the caller's code (sides.mjs and its faux stream function), so no call site
  // turns polymorphic over the builds' stream classes, as it would in a process that holds one build.
  const sides = [];
  let copy;
  for (const [i, d] of DIRS.entries()) {
    process.env.BENCH_OURS_ENTRY = `${d}/index.mjs`;
    copy = await import(`./peers/sides.mjs?build=${i}`);
    sides.push(await copy.loadSide("ours"));
  }
  const { plans, toolNames } = copy;
  const names = toolNames(3);
  const times = DIRS.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const i of order(r)) {
      globalThis.gc?.();
      const t0 = performance.now();
      for (let k = 0; k < 300; k++) await sides[i].runPlans(plans.tools(names, 5, `b${i}r${r}_${k}`), names);
      if (r >= WARM) times[i].push(((performance.now() - t0) * 1000) / 300);
    }
  }
  report("run of 5 steps × 3 tools", "µs", times);
}
