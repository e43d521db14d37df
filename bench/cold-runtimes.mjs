// Cold start on every server runtime (issue 17): ours against pi-agent-core 1.6.0 on Node, Deno and workerd.
// Not a test; prints medians and ratios. Usage: node bench/cold-runtimes.mjs [--runs 7] [--write] [--json]
// (`scripts/bench --cold`; also part of a full `scripts/bench`). --write replaces the cold-start block of
// bench/RESULTS.md with the table.
//
// - Node and Deno: fresh children of `bench/cold.mjs SIDE` (as (d)): the time of `import` + the first small run (9 text
//   deltas), measured inside the child, and the whole process wall time from the parent. Deno runs ours from the
//   package's "deno" entry (pkg/dist/deno/index.js) and pi from node_modules, as `deno run` resolves it.
// - workerd: each side bundled by esbuild as wrangler would (ESM, conditions workerd/worker/browser, our .wasm as a
//   compiled wasm module), served by a fresh `workerd serve`; the wall time from the spawn to the answer of a first
//   request that does the small run. workerd evaluates the modules at startup, so that time holds workerd's boot, the
//   side's module evaluation (and our wasm instantiation) and the first run; a worker with no library gives
//   workerd's own part, which is subtracted in the `side` column. (Inside a worker, clocks stand still while code
//   runs, so only the parent can time it.)
// Children alternate ours, pi, ours, … after one untimed start of each.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { cpSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median, writeBlock } from "./harness.mjs";
import { PKG, ROOT } from "./impl.mjs";

const args = process.argv.slice(2);
const RUNS = args.includes("--runs") ? Number(args[args.indexOf("--runs") + 1]) : 7;
const bin = (name) => join(ROOT, "node_modules", ".bin", name);
const ms = (t) => `${t.toFixed(1)} ms`;

/** One child of `cmd` printing bench/cold.mjs's JSON line; adds its wall time. */
function child(cmd, argv, env = {}) {
  const t = performance.now();
  const r = spawnSync(cmd, argv, { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...env } });
  const wall = performance.now() - t;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout.trim().split("\n").pop());
  return { coldMs: out.importMs + out.firstRunMs, importMs: out.importMs, firstRunMs: out.firstRunMs, wall, events: out.events };
}

const processRuntimes = {
  node: (side) => child(process.execPath, ["bench/cold.mjs", side === "ours" ? "ours" : "reference"]),
  deno: (side) =>
    child(bin("deno"), ["run", "-A", "bench/cold.mjs", side === "ours" ? "ours" : "reference"], side === "ours" ? { BENCH_OURS_ENTRY: join(PKG, "dist/deno/index.js") } : {}),
};

// ---- workerd --------------------------------------------------------------------------------------

const SIDE_ENTRY = {
  ours: `export { agentLoop, createAssistantMessageEventStream } from ${JSON.stringify(join(PKG, "dist/web/workerd.js"))};\n`,
  pi: 'export { agentLoop } from "@earendil-works/pi-agent-core";\nexport { createAssistantMessageEventStream } from "@earendil-works/pi-ai";\n',
};

// `run`: the first request does the small run; without it the worker still imports the side (so workerd
// evaluates its modules, and compiles and instantiates our wasm, at startup) but answers at once.
const WORKER = (withSide, run) => `${withSide ? 'import * as lib from "./side.mjs";\nimport { convertToLlm, model, scriptedStreamFn, textPlan, userMessage } from ' + JSON.stringify(join(ROOT, "bench/faux.mjs")) + ";\n" : ""}
globalThis.setImmediate ??= (f) => setTimeout(f, 0);
export default {
  async fetch() {
    ${!run && withSide ? "if (typeof lib.agentLoop !== 'function') throw new Error('no agentLoop');\n    " : ""}${run ? `const streamFn = scriptedStreamFn(lib.createAssistantMessageEventStream, [textPlan(["Hello", ", ", "world", "!", " How", " can", " I", " help", "?"])]);
    const stream = lib.agentLoop([userMessage("go")], { systemPrompt: "You are a bench.", messages: [], tools: [] }, { model: model(), convertToLlm }, undefined, streamFn);
    let events = 0;
    for await (const _e of stream) events++;
    return Response.json({ events });` : "return Response.json({ events: 0 });"}
  },
};
`;

async function freePort() {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  return port;
}

/** esbuild's `build(options)`; a failed build removes the folder it was to write in. */
async function buildOrClean(dir, build, options) {
  try {
    await build(options);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Bundles the worker of `side` (or none) into its own folder; returns the folder. `run: false`: the
 *  side is loaded but the request does no run. */
async function bundleWorker(side, { run = true } = {}) {
  const { build } = await import("esbuild");
  const dir = mkdtempSync(join(tmpdir(), `cold-workerd-${side}-`));
  if (side !== "none") writeFileSync(join(dir, "side.mjs"), SIDE_ENTRY[side]);
  writeFileSync(join(dir, "src.mjs"), WORKER(side !== "none", side !== "none" && run));
  await buildOrClean(dir, build, {
    entryPoints: [join(dir, "src.mjs")],
    outfile: join(dir, "worker.mjs"),
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    minify: true,
    // the faux stream loads pi-ai's argument parser only for tool calls (never in this run); ours keeps it out
    external: ["*.wasm", ...(side === "ours" ? ["@earendil-works/pi-ai"] : [])],
    absWorkingDir: ROOT,
    nodePaths: [join(ROOT, "node_modules")],
    logLevel: "silent",
  });
  const modules = ['(name = "worker.mjs", esModule = embed "worker.mjs")'];
  // The workerd entry imports the loop's wasm module (the built-in providers are JS, bundled in: issue 43).
  const wasms = side === "ours" ? ["agent_loop_wasm_bg.wasm"] : [];
  for (const file of wasms) {
    cpSync(join(PKG, "dist/web", file), join(dir, file));
    modules.push(`(name = "${file}", wasm = embed "${file}")`);
  }
  const bytes = statSync(join(dir, "worker.mjs")).size + wasms.reduce((n, file) => n + statSync(join(dir, file)).size, 0);
  return { dir, modules, bytes };
}

async function workerdOnce({ dir, modules }) {
  const port = await freePort();
  writeFileSync(
    join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const w :Workerd.Worker = (modules = [ ${modules.join(", ")} ], compatibilityDate = "2025-09-01");
`,
  );
  const t = performance.now();
  const proc = spawn(bin("workerd"), ["serve", "config.capnp"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  proc.stderr.on("data", (d) => (log += d));
  const exited = once(proc, "exit");
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`workerd exited ${proc.exitCode}: ${log.slice(-1500)}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/`);
        const body = await res.json();
        const wall = performance.now() - t;
        const t2 = performance.now();
        await (await fetch(`http://127.0.0.1:${port}/`)).json();
        return { wall, second: performance.now() - t2, events: body.events };
      } catch (e) {
        if (performance.now() - t > 20_000) throw new Error(`workerd did not answer: ${e.message} ${log.slice(-1500)}`);
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  } finally {
    proc.kill("SIGTERM"); // by its PID
    await exited;
  }
}

// ---- main -----------------------------------------------------------------------------------------

const report = {};
for (const [runtime, runOnce] of Object.entries(processRuntimes)) {
  const rows = { ours: [], pi: [] };
  runOnce("ours");
  runOnce("pi");
  for (let i = 0; i < RUNS; i++) for (const side of i % 2 ? ["pi", "ours"] : ["ours", "pi"]) rows[side].push(runOnce(side));
  report[runtime] = rows;
}
const bundles = {
  none: await bundleWorker("none"),
  ours: await bundleWorker("ours"),
  pi: await bundleWorker("pi"),
  oursLoaded: await bundleWorker("ours", { run: false }),
  piLoaded: await bundleWorker("pi", { run: false }),
};
try {
  const order = Object.keys(bundles);
  const rows = Object.fromEntries(order.map((k) => [k, []]));
  for (const side of order) await workerdOnce(bundles[side]);
  for (let i = 0; i < RUNS; i++) for (const side of i % 2 ? [...order].reverse() : order) rows[side].push(await workerdOnce(bundles[side]));
  report.workerd = rows;
} finally {
  for (const b of Object.values(bundles)) rmSync(b.dir, { recursive: true, force: true });
}

const lines = [];
const say = (line) => {
  lines.push(line);
  console.log(line);
};
const med = (list, key) => median(list.map((r) => r[key]));
const version = (cmd, a) => spawnSync(cmd, a, { encoding: "utf8" }).stdout.trim().split("\n")[0];
say(`cold start, ours vs pi-agent-core 1.6.0: medians of ${RUNS} fresh processes per side (alternating)`);
say(`node ${process.version}; ${version(bin("deno"), ["--version"])}; workerd ${version(bin("workerd"), ["--version"])}`);
say("| runtime | what | ours | pi | ours/pi |");
say("|---|---|---|---|---|");
for (const runtime of ["node", "deno"]) {
  const { ours, pi } = report[runtime];
  for (const [key, label] of [["coldMs", "import + first small run (in the process)"], ["importMs", "  of which import"], ["firstRunMs", "  of which first run"], ["wall", "whole process, wall"]]) {
    say(`| ${runtime} | ${label} | ${ms(med(ours, key))} | ${ms(med(pi, key))} | ${(med(ours, key) / med(pi, key)).toFixed(2)}× |`);
  }
}
{
  const { none, ours, pi } = report.workerd;
  const base = med(none, "wall");
  say(`| workerd | spawn → first answer (boot + modules + first run) | ${ms(med(ours, "wall"))} | ${ms(med(pi, "wall"))} | ${(med(ours, "wall") / med(pi, "wall")).toFixed(2)}× |`);
  say(`| workerd | the same minus an empty worker's ${ms(base)} | ${ms(med(ours, "wall") - base)} | ${ms(med(pi, "wall") - base)} | ${((med(ours, "wall") - base) / (med(pi, "wall") - base)).toFixed(2)}× |`);
  const loaded = { ours: med(report.workerd.oursLoaded, "wall") - base, pi: med(report.workerd.piLoaded, "wall") - base };
  say(`| workerd |   of which the modules (ours: compiling and instantiating the wasm) | ${ms(loaded.ours)} | ${ms(loaded.pi)} | ${(loaded.ours / loaded.pi).toFixed(2)}× |`);
  say(`| workerd |   of which the first run | ${ms(med(ours, "wall") - base - loaded.ours)} | ${ms(med(pi, "wall") - base - loaded.pi)} | ${((med(ours, "wall") - base - loaded.ours) / (med(pi, "wall") - base - loaded.pi)).toFixed(2)}× |`);
  say(`| workerd | a second request (warm) | ${ms(med(ours, "second"))} | ${ms(med(pi, "second"))} | ${(med(ours, "second") / med(pi, "second")).toFixed(2)}× |`);
  const events = new Set([...ours, ...pi].map((r) => r.events));
  if (events.size !== 1) say(`⚠ the sides produced different event counts: ${[...events].join(", ")}`);
}
const kib = (b) => `${(b / 1024).toFixed(0)} KiB`;
say(`| workerd | the worker uploaded (bundle + .wasm, raw) | ${kib(bundles.ours.bytes)} | ${kib(bundles.pi.bytes)} | ${(bundles.ours.bytes / bundles.pi.bytes).toFixed(2)}× |`);
if (args.includes("--json")) console.log(JSON.stringify(report));
if (args.includes("--write")) {
  const begin = "<!-- bench:cold:begin (written by scripts/bench) -->";
  const end = "<!-- bench:cold:end -->";
  const stamp = `Measured ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC with \`node bench/cold-runtimes.mjs --runs ${RUNS}\`.`;
  writeBlock(join(ROOT, "bench/RESULTS.md"), begin, end, `${begin}\n\n${stamp}\n\n${lines.join("\n")}\n\n${end}`, "## Cold start\n\n");
}
