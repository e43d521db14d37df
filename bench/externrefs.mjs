// What wasm-bindgen's externref table holds while 1,000 runs of the peer table's memory row (5 steps × 3 tools) are
// in flight, and what it keeps after them (issue 17, "memory retained after 1,000 runs"). Each JS value Rust holds
// takes a slot; the table grows to the most slots ever held at once and never shrinks, and V8 keeps its backing
// store on the JS heap. Not a test. Usage: node --expose-gc bench/externrefs.mjs [--runs 1000]
// Prints the table's length before and after, the JS heap growth, and the live slots by kind at the fullest moment
// seen between macrotasks (the peak inside a microtask burst is higher: the table's growth shows it).
import { captureWasmInstances } from "./impl.mjs";
import { settle } from "./harness.mjs";

if (typeof globalThis.gc !== "function") throw new Error("run with --expose-gc");
const argv = process.argv.slice(2);
const RUNS = argv.includes("--runs") ? Number(argv[argv.indexOf("--runs") + 1]) : 1000;
const captured = captureWasmInstances(); // before the package loads
const { loadSide, plans, toolNames } = await import("./peers/sides.mjs");
const side = await loadSide("ours");
const table = captured.find((instance) => instance.exports?.__wbindgen_externrefs)?.exports.__wbindgen_externrefs;
if (!table) throw new Error("the externref table was not found (BENCH_OURS_ENTRY must be a Node build)");
const names = toolNames(3);
const batch = (n, tag) => Promise.all(Array.from({ length: n }, (_, k) => side.runPlans(plans.tools(names, 5, `${tag}${k}`), names)));

/** A short name for what a slot holds: its type, constructor and first keys. */
function kind(v) {
  if (typeof v === "function") return `function ${v.name || "(anonymous)"}`;
  if (typeof v !== "object") return typeof v;
  if (Array.isArray(v)) return "array";
  const keys = Object.keys(v).slice(0, 4).join(", ");
  const role = typeof v.role === "string" ? ` (${v.role})` : "";
  return `${v.constructor?.name ?? "object"} {${keys}${Object.keys(v).length > 4 ? ", …" : ""}}${role}`;
}

/** Live slots (wasm-bindgen writes null into a freed one) by kind. */
function census() {
  const kinds = new Map();
  let live = 0;
  for (let i = 0; i < table.length; i++) {
    const v = table.get(i);
    if (v === null || v === undefined) continue;
    live++;
    const k = kind(v);
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  return { live, kinds };
}

for (let i = 0; i < 5; i++) await batch(20, `w${i}_`);
await settle(4);
const before = { length: table.length, live: census().live, heap: process.memoryUsage().heapUsed };
let fullest = { live: 0, kinds: new Map() };
let done = false;
const running = batch(RUNS, "m").then(() => (done = true));
while (!done) {
  await new Promise((resolve) => setImmediate(resolve));
  const c = census();
  if (c.live > fullest.live) fullest = c;
}
await running;
await settle(4);
const after = { length: table.length, live: census().live, heap: process.memoryUsage().heapUsed };

console.log(`${RUNS} runs in flight (5 steps × 3 tools); wasm-bindgen's externref table:`);
console.log(`  slots before ${before.length} (${before.live} live), after ${after.length} (${after.live} live): +${after.length - before.length}, ${((after.length - before.length) / RUNS).toFixed(1)} per run`);
console.log(`  JS heap after a full GC: ${((after.heap - before.heap) / 1e6).toFixed(2)} MB more than before`);
console.log(`  fullest between macrotasks: ${fullest.live - before.live} slots more than before, ${((fullest.live - before.live) / RUNS).toFixed(1)} per run:`);
for (const [k, n] of [...fullest.kinds].sort((a, b) => b[1] - a[1]).slice(0, 16)) {
  if (n >= RUNS / 10) console.log(`    ${(n / RUNS).toFixed(2).padStart(5)} per run  ${k}`);
}
