// Child process: memory one side retains after 1,000 concurrent runs (5 steps × 3 tools) finished.
// Usage: node --expose-gc --no-flush-bytecode bench/peers/memory.mjs SIDE → one JSON line.
// Retained = JS heap after a full GC (median of 3 settled samples) minus the same before the
// batch, plus for ours the growth of the wasm linear memory (it never shrinks back); then what a second batch adds.
import { captureWasmInstances } from "../impl.mjs";
import { median, settle } from "../harness.mjs";
import { loadSide, plans, toolNames } from "./sides.mjs";

if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
const name = process.argv[2];
const RUNS = Number(process.argv[3] ?? 1000);
captureWasmInstances(); // before loading: the Node glue exports neither its memory nor its instance
const side = await loadSide(name);
const wasm = side.wasmMemory ? await side.wasmMemory() : null;
// Ours has wasm: a memory not found would count its growth as 0, an error, never a figure (the other sides have none:
// their `wasmMemory` answers null).
if (name === "ours" && !wasm?.memory) throw new Error(`${name}: its wasm memory was not found (captureWasmInstances saw no instance)`);
const names = toolNames(3);
const batch = (n, tag) => Promise.all(Array.from({ length: n }, (_, k) => side.runPlans(plans.tools(names, 5, `${tag}${k}`), names)));

async function sample() {
  const s = [];
  for (let i = 0; i < 3; i++) {
    await settle(4);
    s.push(process.memoryUsage().heapUsed);
  }
  return { heapUsed: median(s), wasmBytes: wasm ? wasm.memory.buffer.byteLength : null };
}

// Warm-up: JIT code, feedback and caches of every code path the batch uses, on small batches, so
// what remains afterwards is what the 1,000 runs themselves left behind. Forty: with five, V8 was still optimizing
// during the measured batch (code space grew 48–303 KB there, varying by build and run: Dec 7); with forty it grows
// ~40 KB and the wasm memory still starts from a 20-run peak.
for (let i = 0; i < 40; i++) await batch(20, `w${i}_`);
const before = await sample();
let peak = 0;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
const results = await batch(RUNS, "m");
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().heapUsed);
const tools = results.reduce((a, r) => a + r.tools, 0);
results.length = 0;
const after = await sample();
const wasmGrowth = wasm ? after.wasmBytes - before.wasmBytes : null;
// A second batch of the same size: what it adds is what each batch leaves behind, as opposed to capacity the
// first one grew (wasm memory, wasm-bindgen's externref table) that the next batch reuses.
await batch(RUNS, "n");
const again = await sample();
const retainedAgain = again.heapUsed - after.heapUsed + (wasm ? again.wasmBytes - after.wasmBytes : 0);
process.stdout.write(
  `${JSON.stringify({ name, runs: RUNS, tools, wasmMeasured: wasm !== null, before, after, heapGrowth: after.heapUsed - before.heapUsed, wasmGrowth, retained: after.heapUsed - before.heapUsed + (wasmGrowth ?? 0), peakHeapGrowth: peak - before.heapUsed, again, retainedAgain })}\n`,
);
