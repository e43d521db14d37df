// Measurement machinery: alternating repetitions, warm-up, medians (GC forced only between workloads),
// a repetition count fitted to a time budget, a monitor of the CPU other processes used, and child processes.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export const now = () => performance.now();

/**
 * Puts `block` (a text that starts with the marker `begin` and ends with `end`) in place of the block between those
 * markers in `file`, or, when the file lacks them, appends it after `heading`. The figures blocks of
 * bench/RESULTS.md are written this way by bench/run.mjs, bench/peers/run.mjs and bench/cold-runtimes.mjs.
 */
export function writeBlock(file, begin, end, block, heading = "") {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  const next =
    a >= 0 && b > a
      ? text.slice(0, a) + block + text.slice(b + end.length)
      : `${text.trim() ? `${text.trimEnd()}\n\n` : ""}${heading}${block}\n`;
  writeFileSync(file, next);
}

/** The number after `--name` on the command line, else `fallback`. */
export function numberArg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** Spread as (max − min) / median, in percent. */
export function spread(xs) {
  const m = median(xs);
  return m > 0 ? ((Math.max(...xs) - Math.min(...xs)) / m) * 100 : NaN;
}

export const gc = typeof globalThis.gc === "function" ? () => globalThis.gc() : () => {};

/** A full collection plus a few event-loop turns, so FinalizationRegistry callbacks (wasm-bindgen weak refs) run. */
export async function settle(rounds = 3) {
  for (let i = 0; i < rounds; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 0));
  }
  gc();
}

/**
 * Runs each implementation's `run()` in alternating order (AB BA AB …), after `warmup` untimed
 * rounds. `sides`: [{ name, run }]. The repetition count is fitted to `budgetMs` from the last
 * warm-up round, within [minReps, maxReps]. One full GC before the first round only: a forced
 * GC before every repetition (`gcEach`) made the next repetition of the allocation-heavy reference
 * several times slower than in steady state (V8's heap sizing starts over), so garbage is left to
 * the normal collector and the alternation spreads its cost over both sides.
 * Returns { times: {name: ms[]}, checks: {name: value}, reps }.
 */
export async function compare(sides, { warmup = 3, minReps = 3, maxReps = 15, budgetMs = 8000, gcEach = false } = {}) {
  const checks = {};
  await settle(2);
  let lastRound = 0;
  for (let w = 0; w < warmup; w++) {
    lastRound = 0;
    for (const side of w % 2 ? [...sides].reverse() : sides) {
      const t = now();
      checks[side.name] = await side.run();
      lastRound += now() - t;
    }
  }
  const reps = Math.max(minReps, Math.min(maxReps, lastRound > 0 ? Math.floor(budgetMs / lastRound) : maxReps));
  const times = Object.fromEntries(sides.map((s) => [s.name, []]));
  for (let r = 0; r < reps; r++) {
    for (const side of r % 2 ? [...sides].reverse() : sides) {
      if (gcEach) gc();
      const t = now();
      const check = await side.run();
      times[side.name].push(now() - t);
      if (checks[side.name] === undefined) checks[side.name] = check;
    }
  }
  return { times, checks, reps };
}

// ---- what else ran on the machine meanwhile

const TICK = 100; // USER_HZ on Linux

function machineBusyTicks() {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const [user, nice, system, , , irq, softirq, steal = 0] = cpu;
    return user + nice + system + irq + softirq + steal;
  } catch {
    return NaN;
  }
}

/** CPU ticks this process and its waited-for children used. */
function ownTicks() {
  try {
    const f = readFileSync("/proc/self/stat", "utf8");
    const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
    // fields 14–17 (utime stime cutime cstime) are rest[11..14]
    return Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
  } catch {
    return NaN;
  }
}

/** Starts watching; `stop()` tells how many cores other processes kept busy on average. */
export function loadMonitor() {
  const t0 = now();
  const busy0 = machineBusyTicks();
  const own0 = ownTicks();
  const load0 = loadavg()[0];
  return {
    stop() {
      const seconds = (now() - t0) / 1000;
      const busy = machineBusyTicks() - busy0;
      const own = ownTicks() - own0;
      const others = Math.max(0, (busy - own) / TICK / seconds);
      return {
        seconds,
        cores: cpus().length,
        otherCoresBusy: others,
        ownCoresBusy: own / TICK / seconds,
        loadavgStart: load0,
        loadavgEnd: loadavg()[0],
      };
    },
  };
}

// ---- formatting

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return "–";
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

export function fmtBytes(b) {
  if (!Number.isFinite(b)) return "–";
  const sign = b < 0 ? "−" : "";
  const a = Math.abs(b);
  if (a >= 1048576) return `${sign}${(a / 1048576).toFixed(2)} MiB`;
  if (a >= 1024) return `${sign}${(a / 1024).toFixed(1)} KiB`;
  return `${sign}${a.toFixed(0)} B`;
}

/** A plain-text table (also valid Markdown). rows: arrays of cells. */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c ?? "")));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(all[0]), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...all.slice(1).map(line)].join("\n");
}

/**
 * Runs `node [...flags] ...argv` from the repository root and resolves with the JSON object its last stdout line
 * holds, plus `wallMs`; rejects with the tail of stderr on a non-zero exit.
 */
export function child(argv, { flags = [] } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const p = spawn(process.execPath, [...flags, ...argv], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("exit", (code) => {
      const wallMs = now() - t0;
      if (code !== 0) return reject(new Error(`${argv.join(" ")} exited ${code}: ${err.trim().split("\n").slice(-3).join(" | ")}`));
      try {
        resolve({ ...JSON.parse(out.trim().split("\n").pop()), wallMs });
      } catch (e) {
        reject(new Error(`${argv.join(" ")}: no JSON (${e.message}): ${out} ${err}`));
      }
    });
  });
}
