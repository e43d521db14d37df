// (e) Child process: JS heap and wasm memory growth over N sequential small runs.
// Usage: node --expose-gc --no-flush-bytecode bench/memory.mjs ours|reference [runs=2000] [warmup=1500] → one JSON line.
import { captureWasmInstances, load } from "./impl.mjs";
import { prepareSmallRun } from "./workloads.mjs";
import { median, settle } from "./harness.mjs";

if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
const name = process.argv[2];
const runs = Number(process.argv[3] ?? 2000);
// Warm-up long enough for the heap to plateau (JIT code, feedback vectors, inline caches: both
// implementations keep growing by ~100 KiB over their first few thousand runs, then stop).
const WARMUP = Number(process.argv[4] ?? 1500);
captureWasmInstances(); // before loading: the Node glue exports neither its memory nor its instance
const impl = await load(name);
const small = prepareSmallRun();
const wasm = await impl.wasmMemory();

async function sampleOnce() {
  await settle(4);
  const m = process.memoryUsage();
  return {
    heapUsed: m.heapUsed,
    external: m.external,
    wasmBytes: wasm ? wasm.memory.buffer.byteLength : null,
    externrefTable: wasm?.table ? wasm.table.length : null,
  };
}

/** Three settled samples, the median heap: one sample after GC sometimes sits 100+ KiB off. */
async function sample() {
  const s = [await sampleOnce(), await sampleOnce(), await sampleOnce()];
  return { ...s[2], heapUsed: median(s.map((x) => x.heapUsed)), external: median(s.map((x) => x.external)) };
}

for (let i = 0; i < WARMUP; i++) await small.run(impl);
const before = await sample();
const checkpoints = [];
const t0 = performance.now();
for (let i = 1; i <= runs; i++) {
  await small.run(impl);
  if (i % 500 === 0 && i < runs) checkpoints.push({ runs: i, ...(await sample()) });
}
const ms = performance.now() - t0;
const after = await sample();
checkpoints.push({ runs, ...after });
process.stdout.write(
  `${JSON.stringify({
    name,
    runs,
    msPerRun: ms / runs,
    wasmVia: wasm?.via ?? null,
    before,
    after,
    checkpoints,
    heapGrowth: after.heapUsed - before.heapUsed,
    wasmGrowth: wasm ? after.wasmBytes - before.wasmBytes : null,
    tableGrowth: wasm?.table ? after.externrefTable - before.externrefTable : null,
  })}\n`,
);
