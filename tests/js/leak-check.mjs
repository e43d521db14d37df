// Leak check (SPEC E-8.4.4, G-3): many small runs, measuring the JS heap (after forced GC) and the wasm linear
// memory and externref table before and after (after a warm-up). Run it with GC exposed:
//
//   node --expose-gc tests/js/leak-check.mjs [--runs 10000] [--warmup 500] [--gc-every 500] [--only a,b] [--json]
//
// Workloads (each measured on its own):
//   agentLoop     — agentLoop runs: one tool turn then a text turn, drained with for await
//   agentLoopWithSignal — the same with a (never aborted) AbortSignal, as every Agent run has
//   agentPrompt   — a new Agent per prompt (listener subscribed, then unsubscribed), one tool turn
//   eventReaders  — one Agent, three agent.events() readers per run: abandoned, returned, aborted (issue 31)
//   validate      — validateToolArguments with a fresh schema object each call (validator cache must not grow)
//   abortedRuns   — runAgentLoop runs aborted while a tool ignores the signal (abortGraceMs 0: abandoned)
//
// The wasm memory is not exported by the Node glue (wasm-bindgen --target nodejs keeps `wasm` module-private),
// so this script captures the instance by wrapping WebAssembly.Instance/instantiate before loading the package.
// Prints one line per workload (or JSON with --json); exits 1 if a bound is exceeded.
import { setTimeout as sleep } from "node:timers/promises";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const RUNS = opt("runs", 10_000);
const WARMUP = opt("warmup", 500);
const JSON_OUT = args.includes("--json");
let readersAgent;
const ONLY = args.includes("--only") ? args[args.indexOf("--only") + 1].split(",") : null;
const BOUNDS = { heapBytes: 2 * 1024 * 1024, wasmBytes: 1024 * 1024, externrefs: 1000 };
const GC_EVERY = opt("gc-every", 500);

if (typeof globalThis.gc !== "function") {
  console.error("leak-check: run with node --expose-gc");
  process.exit(2);
}

// --- capture the wasm instance -------------------------------------------------------------------
const instances = [];
const OriginalInstance = WebAssembly.Instance;
const originalInstantiate = WebAssembly.instantiate;
WebAssembly.Instance = new Proxy(OriginalInstance, {
  construct(target, argv, newTarget) {
    const instance = Reflect.construct(target, argv, newTarget);
    instances.push(instance);
    return instance;
  },
});
WebAssembly.instantiate = async function (...argv) {
  const r = await originalInstantiate.apply(this, argv);
  instances.push(r instanceof OriginalInstance ? r : r.instance);
  return r;
};
const lib = await import("../../pkg/dist/node/index.mjs");
WebAssembly.Instance = OriginalInstance;
WebAssembly.instantiate = originalInstantiate;
// The package's instance (not another module's, e.g. Node 18's undici llhttp): it exports the core functions.
const exportsOf = instances
  .map((i) => i.exports)
  .find((e) => e && typeof e.agentLoop === "function" && Object.values(e).some((v) => v instanceof WebAssembly.Memory));
const memory = exportsOf && Object.values(exportsOf).find((v) => v instanceof WebAssembly.Memory);
const table = exportsOf && Object.entries(exportsOf).find(([k, v]) => v instanceof WebAssembly.Table && /externref/.test(k))?.[1];

const { Agent, agentLoop, createAssistantMessageEventStream, runAgentLoop, validateToolArguments } = lib;

// --- tiny in-memory provider: a tool call, then text ------------------------------------------------
const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const convertToLlm = (ms) => ms.filter((m) => m.role !== "custom");

function streamFn(m, context) {
  const s = createAssistantMessageEventStream();
  const last = context.messages.at(-1);
  const toolTurn = last?.role !== "toolResult";
  const msg = {
    role: "assistant",
    content: toolTurn ? [{ type: "toolCall", id: "c1", name: "t", arguments: { n: 1 } }] : [{ type: "text", text: "ok" }],
    api: "faux",
    provider: "faux",
    model: "m",
    usage: usage(),
    stopReason: toolTurn ? "toolUse" : "stop",
    timestamp: Date.now(),
  };
  queueMicrotask(() => {
    s.push({ type: "start", partial: msg });
    s.push({ type: "done", reason: msg.stopReason, message: msg });
  });
  return s;
}
const makeTool = (execute) => ({
  name: "t",
  label: "t",
  description: "t",
  parameters: { type: "object", properties: { n: { type: "number" } } },
  execute: execute ?? (async () => ({ content: [{ type: "text", text: "done" }], details: {} })),
});
const tool = makeTool();
const user = (t) => ({ role: "user", content: t, timestamp: Date.now() });

const WORKLOADS = {
  async agentLoop() {
    const stream = agentLoop([user("go")], { messages: [], tools: [tool] }, { model, convertToLlm }, undefined, streamFn);
    let n = 0;
    for await (const e of stream) n += e.type === "agent_end" ? 1 : 0;
    const result = await stream.result();
    if (n !== 1 || result.length !== 5) throw new Error(`unexpected agentLoop result (${result.length} messages)`);
  },
  async agentLoopWithSignal() {
    // Same run, with an AbortSignal that is never aborted (what every Agent run passes).
    const stream = agentLoop([user("go")], { messages: [], tools: [tool] }, { model, convertToLlm }, new AbortController().signal, streamFn);
    for await (const e of stream) void e;
    if ((await stream.result()).length !== 5) throw new Error("unexpected agentLoop result");
  },
  async agentPrompt() {
    const agent = new Agent({ streamFn, convertToLlm, initialState: { model, tools: [tool] } });
    let events = 0;
    const off = agent.subscribe(() => void events++);
    await agent.prompt("go");
    off();
    if (agent.state.messages.at(-1).stopReason !== "stop" || events === 0) throw new Error("unexpected Agent result");
  },
  async eventReaders() {
    // Issue 31: one long-lived Agent; per run three readers of agent.events(): one abandoned after its first item
    // (never returned), one returned at agent_end, one whose signal is aborted mid-run. The journal must let all go.
    readersAgent ??= new Agent({ streamFn, convertToLlm, initialState: { model, tools: [tool] } });
    const agent = readersAgent;
    agent.reset();
    const abandoned = agent.events();
    const returned = agent.events({ untilIdle: true });
    const controller = new AbortController();
    const aborted = agent.events({ signal: controller.signal });
    const first = abandoned.next();
    const all = (async () => {
      let n = 0;
      for await (const item of returned) n += item.event.type === "agent_end" ? 1 : 0;
      return n;
    })();
    const cut = (async () => {
      for await (const item of aborted) if (item.event.type === "turn_start") controller.abort();
    })();
    await agent.prompt("go");
    const [ends] = await Promise.all([all, cut, first]);
    if (ends !== 1 || agent.state.messages.length !== 5) throw new Error(`unexpected events() result: ${ends} ${agent.state.messages.length}`);
  },
  async validate() {
    const t = { name: "v", description: "", parameters: { type: "object", properties: { n: { type: "integer" }, s: { type: "string", minLength: 1 } }, required: ["n"] } };
    const out = validateToolArguments(t, { type: "toolCall", id: "x", name: "v", arguments: { n: "5", s: "x" } });
    if (out.n !== 5) throw new Error("unexpected validation result");
  },
  async abortedRuns() {
    const controller = new AbortController();
    const stubborn = makeTool(() => {
      queueMicrotask(() => controller.abort());
      return new Promise(() => {}); // ignores its signal forever: abandoned at abort + abortGraceMs (0)
    });
    const result = await runAgentLoop([user("go")], { messages: [], tools: [stubborn] }, { model, convertToLlm, abortGraceMs: 0 }, () => {}, controller.signal, streamFn);
    if (result.at(-1).role !== "toolResult") throw new Error("unexpected aborted-run result");
  },
};

async function fullGc() {
  for (let i = 0; i < 6; i++) {
    globalThis.gc();
    await sleep(5); // FinalizationRegistry callbacks (wasm-bindgen weak refs) run in later tasks
  }
}

const measure = () => ({
  heap: process.memoryUsage().heapUsed,
  wasm: memory ? memory.buffer.byteLength : null,
  externrefs: table ? table.length : null,
});

const report = { runs: RUNS, warmup: WARMUP, wasmMemoryReachable: Boolean(memory), externrefTableReachable: Boolean(table), bounds: BOUNDS, workloads: {} };
if (!memory) {
  report.note =
    "wasm memory not reachable: the Rust side would need to export e.g. #[wasm_bindgen(js_name = wasmMemoryBytes)] pub fn wasm_memory_bytes() -> f64 { wasm_bindgen::memory().unchecked_into::<js_sys::WebAssembly::Memory>().buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length() as f64 }";
}
let failed = false;
for (const [name, once] of Object.entries(WORKLOADS)) {
  if (ONLY && !ONLY.includes(name)) continue;
  // The diagnostic workloads need fewer runs to show a trend (abortedRuns also waits a 0 ms timer per run).
  const runs = Math.min(RUNS, { agentLoopWithSignal: 3000, abortedRuns: 2000 }[name] ?? RUNS);
  // Every GC_EVERY runs (warm-up included): a forced GC and a turn of the event loop. These runs complete in
  // microtasks only, so without it wasm-bindgen's FinalizationRegistry cleanups (tasks) would never run during
  // the loop: Rust data of already-collected JS closures would pile up and, since wasm memory never shrinks,
  // the measured size would be the high-water mark of garbage awaiting finalization, not retained memory.
  const breathe = async (i) => {
    if (i % GC_EVERY !== GC_EVERY - 1) return;
    globalThis.gc();
    await sleep(1);
  };
  for (let i = 0; i < WARMUP; i++) {
    await once();
    await breathe(i);
  }
  await fullGc();
  const before = measure();
  const started = performance.now();
  for (let i = 0; i < runs; i++) {
    await once();
    await breathe(i);
  }
  const ms = performance.now() - started;
  await fullGc();
  const after = measure();
  const growth = {
    heapBytes: after.heap - before.heap,
    wasmBytes: memory ? after.wasm - before.wasm : null,
    externrefs: table ? after.externrefs - before.externrefs : null,
  };
  const over = Object.entries(BOUNDS).filter(([k, bound]) => growth[k] !== null && growth[k] >= bound).map(([k]) => k);
  if (over.length) failed = true;
  report.workloads[name] = { runs, ms: Math.round(ms), before, after, growth, ok: over.length === 0, over };
  if (!JSON_OUT) {
    const kb = (b) => (b === null ? "n/a" : `${(b / 1024).toFixed(1)} KiB`);
    console.log(
      `${name.padEnd(12)} ${String(runs).padStart(6)} runs in ${String(Math.round(ms)).padStart(6)} ms | heap ${kb(before.heap)} → ${kb(after.heap)} (Δ ${kb(growth.heapBytes)}) | wasm ${kb(before.wasm)} → ${kb(after.wasm)} (Δ ${kb(growth.wasmBytes)}) | externref table ${before.externrefs} → ${after.externrefs} | ${over.length ? `OVER ${over.join(",")}` : "ok"}`,
    );
  }
}
if (JSON_OUT) console.log(JSON.stringify(report));
else if (report.note) console.log(report.note);
process.exitCode = failed ? 1 : 0;
