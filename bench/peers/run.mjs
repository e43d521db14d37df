// The peer table (issue 17): ours, pi-agent-core 1.6.0, the Vercel AI SDK 7 and OpenAI Agents JS
// 0.20 on the same workloads, side by side in one Node process (cold start and memory in fresh
// child processes), every figure printed with its ratio to each peer. A benchmark that prints;
// nothing asserts.
//
//   node --expose-gc bench/peers/run.mjs [--quick] [--only 1234567] [--write]
//
// Each run appends its medians to bench/peers/runs.jsonl (git-ignored); --write renders the latest
// run plus the spread of the medians over the recent runs on the same build into bench/RESULTS.md.
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { child, compare, fmtBytes, loadMonitor, median, now, spread, table, writeBlock } from "../harness.mjs";
import { PEER_ENTRIES, benchBundle, bundle } from "../bundle.mjs";
import { ROOT, ourWasmFile } from "../impl.mjs";
import { SIDES, SIDE_LABEL, SMALL, deltaPieces, loadSide, plans, toolNames } from "./sides.mjs";

const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const ALL = "1234567";
const WRITE = args.includes("--write") && !QUICK && !args.includes("--only");
const ONLY = new Set((args.includes("--only") ? args[args.indexOf("--only") + 1] : ALL).replace(/[^1-7]/g, "").split(""));
const scale = QUICK ? 0.3 : 1;
const HERE = join(ROOT, "bench/peers");
const log = (...a) => console.error(`[peers ${new Date().toISOString().slice(11, 19)}]`, ...a);

if (typeof globalThis.gc !== "function") {
  console.error("bench/peers/run.mjs: run with node --expose-gc (scripts/bench does)");
  process.exit(2);
}

// ---- figures

/** One figure per side: { key, label, unit, value: {side: number}, note, lowerIsBetter }. */
const figures = [];
const details = {};

const US = (ms) => ms * 1000;

function fmtValue(v, unit) {
  if (!Number.isFinite(v)) return "–";
  if (unit === "µs") return v >= 100 ? `${Math.round(v).toLocaleString("en")} µs` : `${v.toFixed(v >= 10 ? 1 : 2)} µs`;
  if (unit === "ms") return v >= 100 ? `${Math.round(v).toLocaleString("en")} ms` : `${v.toFixed(v >= 10 ? 1 : 2)} ms`;
  if (unit === "×") return `${v.toFixed(v >= 10 ? 0 : 1)}×`;
  if (unit === "MB") return `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(2)} MB`;
  if (unit === "KiB") return `${v.toFixed(1)} KiB`;
  return String(v);
}

/** ours / peer, or for memory (which can be ~0 or negative) the difference. */
function ratio(f, peer) {
  const o = f.value.ours;
  const p = f.value[peer];
  if (!Number.isFinite(o) || !Number.isFinite(p)) return "–";
  if (f.unit === "MB") return `${o - p >= 0 ? "+" : "−"}${Math.abs(o - p).toFixed(2)} MB`;
  return fmtRatio(o / p);
}

/** Two significant digits below 0.1 (ours/peer of 0.013 is not "0.01×"). */
function fmtRatio(x) {
  return `${x < 0.1 ? x.toPrecision(2) : x.toFixed(2)}×`;
}

function spreadNote(times, sides = SIDES) {
  return sides.map((s) => `±${Math.round(spread(times[s]) / 2)}%`).join(" / ");
}

async function perUnit(key, label, unitCount, prepare, opts) {
  const sides = [];
  for (const name of SIDES) {
    const side = loaded[name];
    sides.push({ name, run: () => prepare(side) });
  }
  log(label);
  const r = await compare(sides, { warmup: opts.warmup ?? 2, minReps: 3, maxReps: opts.maxReps ?? 11, budgetMs: Math.round(opts.budgetMs * scale) });
  const value = Object.fromEntries(SIDES.map((s) => [s, US(median(r.times[s])) / unitCount]));
  const same = SIDES.every((s) => JSON.stringify(r.checks[s]) === JSON.stringify(r.checks.ours));
  figures.push({ key, label, unit: "µs", value, note: `n=${r.reps}, spread ${spreadNote(r.times)}${same ? "" : ` ⚠ work differs: ${JSON.stringify(r.checks)}`}` });
  details[key] = r;
}

// ---- in-process workloads

const loaded = {};

async function inProcess() {
  for (const s of SIDES) loaded[s] = await loadSide(s);
  if (ONLY.has("1")) {
    const pieces = deltaPieces(20_000);
    const ps = plans.text(pieces);
    await perUnit("deltas", "20,000 streamed deltas, per delta", 20_000, (side) => side.runPlans(ps), { budgetMs: 12_000 });
  }
  if (ONLY.has("2")) {
    const names = toolNames(100);
    const ps = plans.tools(names, 20);
    await perUnit("tools", "20 steps × 100 parallel tools, per tool", 2000, (side) => side.runPlans(ps, names), { budgetMs: 20_000 });
  }
  if (ONLY.has("3")) {
    const runs = QUICK ? 200 : 1000;
    const names = toolNames(3);
    const ps = Array.from({ length: runs }, (_, k) => plans.tools(names, 5, `r${k}`));
    const batch = async (side) => {
      const results = await Promise.all(ps.map((p) => side.runPlans(p, names)));
      return results.reduce((a, x) => ({ deltas: a.deltas + x.deltas, tools: a.tools + x.tools, text: a.text + x.text }), { deltas: 0, tools: 0, text: 0 });
    };
    await perUnit("concurrent", `${runs.toLocaleString("en")} concurrent runs (5 steps × 3 tools), per run`, runs, batch, { warmup: 1, maxReps: 3, budgetMs: 1 });
  }
  if (ONLY.has("4")) {
    const Ns = [100, 10_000];
    const small = plans.text(SMALL);
    const sides = [];
    for (const name of SIDES) {
      for (const N of Ns) {
        const history = loaded[name].history(N);
        sides.push({ name: `${name}@${N}`, run: () => loaded[name].runPlans(small, [], history) });
      }
    }
    log("one turn after N prior messages, N = 100 and 10,000");
    const r = await compare(sides, { warmup: 2, minReps: 5, maxReps: 15, budgetMs: Math.round(15_000 * scale) });
    details.history = r;
    const t = (s, N) => median(r.times[`${s}@${N}`]);
    // growth: median over rounds of t(10,000) / t(100), so load drift between rounds cancels
    const growth = (s) => median(r.times[`${s}@10000`].map((x, i) => x / r.times[`${s}@100`][i]));
    const same = sides.every((s) => JSON.stringify(r.checks[s.name]) === JSON.stringify(r.checks[sides[0].name]));
    const big = Object.fromEntries(SIDES.map((s) => [s, r.times[`${s}@10000`]]));
    figures.push({
      key: "history",
      label: "one turn after 10,000 prior messages",
      unit: "ms",
      value: Object.fromEntries(SIDES.map((s) => [s, t(s, 10_000)])),
      note: `n=${r.reps}, spread ${spreadNote(big)}; at N = 100: ${SIDES.map((s) => fmtValue(t(s, 100), "ms")).join(" / ")}${same ? "" : " ⚠ work differs"}`,
    });
    figures.push({
      key: "growth",
      label: "growth t(N = 10,000) / t(N = 100)",
      unit: "×",
      value: Object.fromEntries(SIDES.map((s) => [s, growth(s)])),
      note: "median of the per-round ratios; 1.0× = independent of the transcript",
    });
  }
}

// ---- child processes

async function memory() {
  // One child per side per run (the AI SDK's and OpenAI Agents' take ~40 s each on 2 cores); the
  // spread comes from the repeated full runs.
  const reps = 1;
  const runs = QUICK ? 200 : 1000;
  log(`memory retained after ${runs.toLocaleString("en")} concurrent runs: ${reps} child process per side`);
  const res = Object.fromEntries(SIDES.map((s) => [s, []]));
  for (let r = 0; r < reps; r++) {
    for (const s of r % 2 ? [...SIDES].reverse() : SIDES) res[s].push(await child(["bench/peers/memory.mjs", s, String(runs)], { flags: ["--expose-gc", "--no-flush-bytecode"] }));
  }
  details.memory = res;
  const mb = (s) => median(res[s].map((x) => x.retained)) / 1e6;
  const wasm = median(res.ours.map((x) => x.wasmGrowth ?? 0));
  figures.push({
    key: "memory",
    label: `memory retained after ${runs.toLocaleString("en")} runs finished`,
    unit: "MB",
    value: Object.fromEntries(SIDES.map((s) => [s, mb(s)])),
    note: `${reps === 1 ? "one child" : `median of ${reps} children`}; JS heap after a full GC${res.ours[0]?.wasmGrowth === null ? "" : `, ours + wasm linear memory (grew ${fmtBytes(wasm)})`}; peak heap during the runs ${SIDES.map((s) => fmtBytes(median(res[s].map((x) => x.peakHeapGrowth)))).join(" / ")}; a second batch of ${runs.toLocaleString("en")} adds ${SIDES.map((s) => `${(median(res[s].map((x) => x.retainedAgain ?? NaN)) / 1e6).toFixed(2)} MB`).join(" / ")}`,
  });
}

async function coldStart() {
  const reps = QUICK ? 3 : 7;
  log(`cold start: ${reps} fresh child processes per side, alternating`);
  for (const s of SIDES) await child(["bench/peers/cold.mjs", s]); // untimed: file-system cache
  const res = Object.fromEntries(SIDES.map((s) => [s, []]));
  for (let r = 0; r < reps; r++) {
    for (const s of r % 2 ? [...SIDES].reverse() : SIDES) res[s].push(await child(["bench/peers/cold.mjs", s]));
  }
  details.cold = res;
  const m = (s, f) => median(res[s].map(f));
  figures.push({
    key: "cold",
    label: "cold start: import + first small run, fresh process",
    unit: "ms",
    value: Object.fromEntries(SIDES.map((s) => [s, m(s, (x) => x.importMs + x.firstRunMs)])),
    note: `n=${reps}; import ${SIDES.map((s) => fmtValue(m(s, (x) => x.importMs), "ms")).join(" / ")}; first run ${SIDES.map((s) => fmtValue(m(s, (x) => x.firstRunMs), "ms")).join(" / ")}; process wall ${SIDES.map((s) => fmtValue(m(s, (x) => x.wallMs), "ms")).join(" / ")}`,
  });
}

// ---- the download

async function download() {
  log("browser bundle with the providers, gzip (esbuild)");
  const ours = await benchBundle(); // also pi + pi-ai with its four providers, as in (g)
  if (ours.skipped) return log(`skipped: ${ours.skipped}`);
  const esbuild = await import("esbuild");
  const kib = (n) => n / 1024;
  const value = { ours: ours.ours ? kib(ours.ours.total) : NaN, pi: ours.reference ? kib(ours.reference.gzip) : NaN };
  const raw = { ours: ours.ours && ours.wasm ? ours.ours.raw + ours.wasm.raw : NaN, pi: ours.reference?.raw ?? NaN };
  for (const [side, entry] of Object.entries(PEER_ENTRIES)) {
    const b = await bundle(esbuild, entry, HERE);
    value[side] = kib(b.gzip);
    raw[side] = b.raw;
  }
  figures.push({
    key: "bundle",
    label: "browser bundle with the providers, gzip",
    unit: "KiB",
    value,
    note: `esbuild ${esbuild.version}, minified ESM for the browser, gzip -9; raw ${SIDES.map((s) => fmtBytes(raw[s])).join(" / ")}; ours = JS + .wasm; pi = pi-agent-core + pi-ai's four providers; AI SDK = ai + @ai-sdk/openai, anthropic, google; OpenAI Agents = @openai/agents (OpenAI's APIs only)`,
  });
}

// ---- main

const started = new Date();
const monitor = loadMonitor();
const wasmFile = ourWasmFile();
const build = wasmFile ? statSync(wasmFile).mtime.toISOString() : null;
log(`sides: ${SIDES.map((s) => SIDE_LABEL[s]).join(", ")}; ours built ${build}`);
if (["1", "2", "3", "4"].some((k) => ONLY.has(k))) await inProcess();
if (ONLY.has("5")) await memory();
if (ONLY.has("6")) await coldStart();
if (ONLY.has("7")) await download();
const load = monitor.stop();

const peers = SIDES.filter((s) => s !== "ours");
const header = ["workload", ...SIDES.map((s) => SIDE_LABEL[s]), ...peers.map((p) => `ours/${SIDE_LABEL[p]}`), "notes"];
const rows = figures.map((f) => [f.label, ...SIDES.map((s) => fmtValue(f.value[s], f.unit)), ...peers.map((p) => ratio(f, p)), f.note]);
const out = table(header, rows);
const underLoad = load.otherCoresBusy >= 0.25;
const loadLine = `other processes kept ${load.otherCoresBusy.toFixed(2)} of ${load.cores} cores busy on average during the ${load.seconds.toFixed(0)} s run (load average ${load.loadavgStart.toFixed(2)} → ${load.loadavgEnd.toFixed(2)})${underLoad ? ": MEASURED UNDER LOAD, figures are provisional" : ""}`;
console.log(`\n${out}\n\nLoad: ${loadLine}.`);

const record = { started: started.toISOString(), quick: QUICK, only: [...ONLY].join(""), build, node: process.version, load, figures: figures.map(({ key, label, unit, value }) => ({ key, label, unit, value })) };
writeFileSync(join(HERE, "results.json"), `${JSON.stringify({ ...record, details }, null, 1)}\n`);
if (!QUICK) appendFileSync(join(HERE, "runs.jsonl"), `${JSON.stringify(record)}\n`);

if (WRITE) writeResults(record);

/** The latest run's table, the spread of each median over the recent full runs on this build, and their load. */
function writeResults(latest) {
  const runs = existsSync(join(HERE, "runs.jsonl"))
    ? readFileSync(join(HERE, "runs.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((r) => !r.quick && r.only === ALL && r.build === latest.build)
        .slice(-5)
    : [latest];
  const spreadRows = latest.figures.map((f) => {
    const all = runs.map((r) => r.figures.find((g) => g.key === f.key)).filter(Boolean);
    const range = (s) => {
      const xs = all.map((g) => g.value[s]);
      return xs.length > 1 ? `${fmtValue(Math.min(...xs), f.unit)} – ${fmtValue(Math.max(...xs), f.unit)}` : fmtValue(xs[0], f.unit);
    };
    const ratioRange = (p) => {
      const xs = all.map((g) => (f.unit === "MB" ? g.value.ours - g.value[p] : g.value.ours / g.value[p]));
      const fm = (x) => (f.unit === "MB" ? `${x >= 0 ? "+" : "−"}${Math.abs(x).toFixed(2)}` : fmtRatio(x).slice(0, -1));
      return xs.length > 1 ? `${fm(Math.min(...xs))} – ${fm(Math.max(...xs))}` : fm(xs[0]);
    };
    return [f.label, ...SIDES.map(range), ...peers.map(ratioRange)];
  });
  const block = [
    "<!-- bench:peers:begin (written by scripts/bench) -->",
    "",
    `Latest run ${latest.started.replace("T", " ").slice(0, 16)} UTC, ours built ${latest.build}, Node ${latest.node}; ${loadLine}.`,
    "",
    out,
    "",
    `Spread of the medians over the last ${runs.length} full run(s) on this build (min – max; ratios ours/peer):`,
    "",
    table(["workload", ...SIDES.map((s) => SIDE_LABEL[s]), ...peers.map((p) => `ours/${SIDE_LABEL[p]}`)], spreadRows),
    "",
    "Load during those runs: " + runs.map((r) => `${r.started.slice(11, 16)} UTC others ${r.load.otherCoresBusy.toFixed(2)} cores, load average ${r.load.loadavgStart.toFixed(1)} → ${r.load.loadavgEnd.toFixed(1)}`).join("; ") + ".",
    "",
    "<!-- bench:peers:end -->",
  ].join("\n");
  const file = join(ROOT, "bench/RESULTS.md");
  writeBlock(file, "<!-- bench:peers:begin (written by scripts/bench) -->", "<!-- bench:peers:end -->", block, "## Peers\n\n");
  log("bench/RESULTS.md peer figures updated");
}
