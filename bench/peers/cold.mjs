// Child process: one side's import and its first small run (9 text deltas) in a fresh process.
// Usage: node bench/peers/cold.mjs SIDE → one JSON line. Loads nothing but that side and the
// bench's scripted model (no pi-ai for ours: a text-only run needs no argument parser).
const bootMs = performance.now();
const name = process.argv[2];
const { loadSide, plans, SMALL } = await import("./sides.mjs");
const t0 = performance.now();
const side = await loadSide(name);
const t1 = performance.now();
const check = await side.runPlans(plans.text(SMALL));
const t2 = performance.now();
process.stdout.write(`${JSON.stringify({ name, bootMs, importMs: t1 - t0, firstRunMs: t2 - t1, check })}\n`);
