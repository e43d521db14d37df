// (d) Child process: import one implementation and do a first small run, timing both.
// Usage: node bench/cold.mjs ours|reference   → prints one JSON line.
// Loads nothing but the implementation and the bench's own faux stream (no pi-ai for "ours").
const bootMs = performance.now(); // since this process started
const name = process.argv[2];
const { load } = await import("./impl.mjs");
const { prepareSmallRun } = await import("./workloads.mjs");
const small = prepareSmallRun();
const t0 = performance.now();
const impl = await load(name);
const t1 = performance.now();
const events = await small.run(impl);
const t2 = performance.now();
process.stdout.write(`${JSON.stringify({ name, bootMs, importMs: t1 - t0, firstRunMs: t2 - t1, events })}\n`);
