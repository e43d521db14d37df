// Per-run cost of the peer table's "1,000 concurrent runs" workload at several concurrency levels, ours vs pi,
// alternating in one process: does a run cost more when many are in flight? (issue 17)
// Usage: node --expose-gc bench/concurrency.mjs [--levels 1,10,100,1000] [--rounds 5]
import { loadSide, plans, toolNames } from "./peers/sides.mjs";
import { median } from "./harness.mjs";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const LEVELS = arg("levels", "1,10,100,1000").split(",").map(Number);
const ROUNDS = Number(arg("rounds", "5"));
const TOTAL = Number(arg("total", "2000")); // runs per measurement at every level
const SIDES = arg("sides", "ours,pi").split(",");

const names = toolNames(3);
const sides = {};
for (const s of SIDES) sides[s] = await loadSide(s);

async function measure(side, level, tag) {
  const t0 = performance.now();
  let k = 0;
  while (k < TOTAL) {
    const n = Math.min(level, TOTAL - k);
    await Promise.all(Array.from({ length: n }, (_, i) => side.runPlans(plans.tools(names, 5, `${tag}${k + i}`), names)));
    k += n;
  }
  return ((performance.now() - t0) * 1000) / TOTAL;
}

const times = {};
for (const s of SIDES) for (const l of LEVELS) times[`${s}@${l}`] = [];
for (const s of SIDES) for (const l of LEVELS) await measure(sides[s], l, "w"); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const l of LEVELS) {
    const order = r % 2 ? [...SIDES].reverse() : SIDES;
    for (const s of order) {
      globalThis.gc?.();
      times[`${s}@${l}`].push(await measure(sides[s], l, `r${r}_`));
    }
  }
}
const rows = LEVELS.map((l) => {
  const cells = SIDES.map((s) => `${median(times[`${s}@${l}`]).toFixed(0)} µs`);
  const ratio = SIDES.length > 1 ? (median(times[`${SIDES[0]}@${l}`]) / median(times[`${SIDES[1]}@${l}`])).toFixed(2) + "×" : "";
  return `| ${l} | ${cells.join(" | ")} | ${ratio} |`;
});
console.log(`| concurrency | ${SIDES.join(" | ")} | ${SIDES.join("/")} |`);
console.log(`|---|${SIDES.map(() => "---").join("|")}|---|`);
console.log(rows.join("\n"));
