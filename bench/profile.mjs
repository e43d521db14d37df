// Where our time goes on (a) and (b) (and (f) once the built-in providers exist): JS↔wasm crossing
// counts per event, the raw cost of one crossing on this machine, and CPU profiles split by layer. Ours only needs the built package;
// the CPU profile of our wasm uses a copy with function names (see `namedBuild`).
//
//   node bench/profile.mjs            → prints a Markdown report (also written to bench/profile-latest.md)
//
// Internal modes (child processes): `count <a|b>`, `cpu <ours|reference> <a|b|f>`, `probe`.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ROOT, captureWasmInstances, load, ourNodeEntry } from "./impl.mjs";
import { median } from "./harness.mjs";

const [mode, ...rest] = process.argv.slice(2);

async function workload(which) {
  const { workloadsFor } = await import("./workloads.mjs");
  const w = await workloadsFor("profile");
  return which === "a" ? w.prepareManyDeltas(20_000) : w.prepareParallelTools(100, 20);
}

const shortName = (n) => n.replace(/_[0-9a-f]{16}$/, "").replace(/^__wbg_/, "").replace(/__h[0-9a-f]{16}$/, "");

// ---- child: count crossings --------------------------------------------------------------------

/** Labels for wasm-bindgen's numbered cast intrinsics, from the comments in the glue. */
function castLabels() {
  const labels = new Map();
  try {
    const glue = readFileSync(join(dirname(ourNodeEntry()), "agent_loop_wasm.js"), "utf8");
    for (const m of glue.matchAll(/(__wbindgen_generic_\d+): function[^\n]*\n\s*\/\/ Cast intrinsic for `([^`]*)`/g)) {
      const what = m[2].startsWith("Closure(") ? `Closure(${/mutable: true/.test(m[2]) ? "FnMut" : "Fn"}) -> Externref` : m[2];
      labels.set(m[1], `cast ${what}`);
    }
  } catch {}
  return labels;
}

async function countMode(which) {
  const labels = castLabels();
  const imports = new Map();
  const exports = new Map();
  const strings = new Map(); // the strings decoded from wasm memory, by text
  const bump = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
  captureWasmInstances({
    wrapImports(obj) {
      const out = {};
      for (const [mod, fns] of Object.entries(obj)) {
        out[mod] = {};
        for (const [name, f] of Object.entries(fns)) {
          const key = labels.get(name) ?? shortName(name);
          const isStringCast = key.startsWith("cast Ref(String)");
          out[mod][name] =
            typeof f !== "function"
              ? f
              : isStringCast
                ? function (...a) {
                    bump(imports, key);
                    const s = f.apply(this, a);
                    bump(strings, JSON.stringify(String(s).slice(0, 24)));
                    return s;
                  }
                : function (...a) {
                    bump(imports, key);
                    return f.apply(this, a);
                  };
        }
      }
      return out;
    },
    wrapExports(ex) {
      const out = {};
      for (const [name, v] of Object.entries(ex)) {
        const key = shortName(name);
        out[name] = typeof v === "function" ? (...a) => { bump(exports, key); return v(...a); } : v;
      }
      return out;
    },
  });
  const impl = await load("ours");
  const w = which === "f" ? await providerWorkload("ours", impl) : await workload(which);
  await w.run(impl); // warm
  imports.clear();
  exports.clear();
  strings.clear();
  const events = await w.run(impl);
  const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
  const top = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25);
  process.stdout.write(`${JSON.stringify({ which, events, wasmToJs: sum(imports), jsToWasm: sum(exports), topImports: top(imports), topExports: top(exports), topStrings: top(strings) })}\n`);
}

// ---- child: CPU profile ------------------------------------------------------------------------

/** (f) over an in-process loopback server: one implementation's OpenAI Chat provider. */
async function providerWorkload(name, impl) {
  const { startServer } = await import("./sse.mjs");
  const server = await startServer();
  server.unref();
  const port = server.address().port;
  // PROFILE_API=anthropic-messages profiles the Anthropic wire format instead.
  const api = process.env.PROFILE_API === "anthropic-messages" ? "anthropic-messages" : "openai-completions";
  const anthropic = api === "anthropic-messages";
  const m = { id: anthropic ? "claude-bench" : "gpt-bench", name: "bench", api, provider: anthropic ? "anthropic" : "openai", baseUrl: anthropic ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e5, maxTokens: 1000 };
  const ctx = () => ({ messages: [{ role: "user", content: "go", timestamp: Date.now() }] });
  const stream = name === "ours" ? impl.streamBuiltin : (await import(`@earendil-works/pi-ai/api/${api}`)).stream;
  return {
    run: async () => {
      let n = 0;
      for await (const _e of stream(m, ctx(), { apiKey: "bench-key", maxRetries: 0 })) n++;
      return n;
    },
  };
}

async function cpuMode(name, which) {
  const impl = await load(name);
  const w = which === "f" ? await providerWorkload(name, impl) : await workload(which);
  for (let i = 0; i < 2; i++) await w.run(impl); // warm-up (in the profile too, but small)
  const times = [];
  for (let i = 0; i < (which === "a" ? 6 : 4); i++) {
    const t = performance.now();
    await w.run(impl);
    times.push(performance.now() - t);
  }
  process.stdout.write(`${JSON.stringify({ name, which, times })}\n`);
}

// ---- parent ------------------------------------------------------------------------------------

function run(args, env = {}) {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

/**
 * A copy of our Node package whose .wasm keeps its function names: wasm-bindgen over the release
 * cargo artifact, then wasm-opt -Oz -g (names kept, otherwise the release optimisation). Returns
 * the copy's entry, or null (the profile then shows wasm functions by index only).
 */
function namedBuild(tmp) {
  const entry = ourNodeEntry();
  const raw = join(ROOT, "target/wasm32-unknown-unknown/release/agent_loop_wasm.wasm");
  if (!existsSync(raw)) return { entry: null, why: "no release cargo artifact in target/" };
  const nodeDir = dirname(entry);
  const glue = readFileSync(join(nodeDir, "agent_loop_wasm.js"), "utf8");
  const target = /import\.meta\.url|export function initSync|function initSync/.test(glue) ? "web" : "nodejs";
  const out = join(tmp, "wb");
  try {
    execFileSync("wasm-bindgen", [raw, "--out-dir", out, "--out-name", "agent_loop_wasm", "--target", target, "--weak-refs", "--no-typescript", "--keep-debug"], { stdio: "pipe" });
    const wasmOpt = join(ROOT, "node_modules/.bin/wasm-opt");
    const wasm = join(out, "agent_loop_wasm_bg.wasm");
    execFileSync(wasmOpt, [wasm, "-Oz", "-g", "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext", "--enable-reference-types", "--enable-multivalue", "--enable-mutable-globals", "-o", wasm], { stdio: "pipe" });
  } catch (e) {
    return { entry: null, why: `wasm-bindgen/wasm-opt failed: ${String(e.message).split("\n")[0]}` };
  }
  const copy = join(tmp, "node");
  cpSync(nodeDir, copy, { recursive: true });
  // Only the glue and the wasm: the package's snippets (src/js/snippets/, transpiled for its glue) stay.
  for (const f of ["agent_loop_wasm.js", "agent_loop_wasm_bg.wasm"]) cpSync(join(out, f), join(copy, f));
  const rawTime = statSync(raw).mtime.toISOString();
  const pkgTime = statSync(join(nodeDir, "agent_loop_wasm_bg.wasm")).mtime.toISOString();
  return { entry: join(copy, entry.slice(nodeDir.length + 1)), rawTime, pkgTime };
}

function categorize(frame) {
  const { url, functionName } = frame;
  // V8 shares one wrapper per signature between imports, so a wrapper's name is only one of its users.
  if (functionName.startsWith("wasm-to-js:")) return "wasm→JS call wrappers";
  if (functionName.startsWith("js-to-wasm:")) return "JS→wasm call wrappers";
  if (url.startsWith("wasm://") || /^\$|^wasm-function/.test(functionName)) {
    // Our named copy has a name for every function; unnamed ones belong to other modules (undici's
    // llhttp behind fetch) or to our package when the named copy could not be made.
    return /^\$|^wasm-function|^$/.test(functionName) ? "wasm, unnamed (undici's llhttp, …)" : "wasm (Rust core)";
  }
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(program)" || functionName === "(idle)" || functionName === "(root)") return functionName;
  if (/agent_loop_wasm\.js$/.test(url)) return "wasm-bindgen glue";
  if (/\/src\/js\/snippets\/\w+\.js$/.test(url)) return "src/js/snippets (Rust's JS snippets)";
  if (/\/(streams|api|agent|index|core)\.(m?js|cjs)$/.test(url) && /pkg|agent-loop|bench-prof/.test(url)) return "our JS wrapper (streams.js, api.js)";
  if (/pi-agent-core/.test(url)) return "pi-agent-core loop";
  if (/pi-ai\/dist\/utils\/event-stream/.test(url)) return "pi-ai EventStream";
  if (/pi-ai\/dist\/utils\/streaming-json/.test(url)) return "pi-ai ToolCallArgumentsStream (the faux's)";
  if (/pi-ai/.test(url)) return "pi-ai (transcript, validation, providers)";
  if (/node_modules\/(openai|@anthropic-ai)\//.test(url)) return "provider SDK (openai / anthropic)";
  if (/bench\//.test(url)) return "bench faux + consumer";
  if (url === "") return "V8/Node natives (TextDecoder, typed arrays, …)";
  if (url.startsWith("node:")) return "node internals";
  return "other";
}

function analyseProfile(file) {
  const prof = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i] ?? 0;
    self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
  }
  const cats = new Map();
  const fns = new Map();
  let total = 0;
  for (const [id, us] of self) {
    const n = byId.get(id);
    const cat = categorize(n.callFrame);
    if (cat === "(idle)") continue;
    total += us;
    cats.set(cat, (cats.get(cat) ?? 0) + us);
    const fname = `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url ? `[${n.callFrame.url.split("/").pop()}]` : ""}`;
    fns.set(fname, (fns.get(fname) ?? 0) + us);
  }
  // Inclusive time of our Rust functions (each sample counted once per function on its stack).
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map();
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i] ?? 0;
    const seen = new Set();
    for (let id = prof.samples[i]; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id).callFrame.functionName;
      if (!/^agent_loop_wasm::(core|providers|js)::/.test(f)) continue;
      const key = f.replace(/::h[0-9a-f]{16}$/, "");
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + dt);
    }
  }
  const pct = (us) => `${((us / total) * 100).toFixed(1)}%`;
  return {
    inclusive: [...incl.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, us]) => [k, (us / 1000).toFixed(0), pct(us)]),
    totalMs: total / 1000,
    categories: [...cats.entries()].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, (us / 1000).toFixed(0), pct(us)]),
    functions: [...fns.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, us]) => [k, (us / 1000).toFixed(0), pct(us)]),
  };
}

/** Raw crossing costs on this machine, with a 160-byte hand-written module (see the WAT below). */
function crossingMicrobench() {
  // (func loopRef (n i32) (x externref) → externref: n × x = f(x)), (func loopI32 (n) → Σ g(i)), (func nop (i32) → i32)
  const bytes = Buffer.from(
    "AGFzbQEAAAABEQNgAX8Bf2ABbwFvYAJ/bwFvAg0CAW0BZgABAW0BZwAAAwQDAgAABxsDB2xvb3BSZWYAAgdsb29wSTMyAAMDbm9wAAQKUQMjAQF/AkADQCACIABPDQEgARAAIQEgAkEBaiECDAALAAsgAQsmAQJ/AkADQCABIABPDQEgAiABEAFqIQIgAUEBaiEBDAALAAsgAgsEACAACw==",
    "base64",
  );
  const N = 2_000_000;
  const time = (f) => {
    const ts = [];
    for (let r = 0; r < 7; r++) {
      const t = performance.now();
      f();
      ts.push(performance.now() - t);
    }
    return (median(ts) * 1e6) / N; // ns per call
  };
  // wasm-bindgen's style for imports declared `catch`: a fresh closure, `arguments`, apply, try/catch.
  function handleError(f, args) {
    try {
      return f.apply(this, args);
    } catch (e) {
      return undefined;
    }
  }
  const mk = (f, g) => new WebAssembly.Instance(new WebAssembly.Module(bytes), { m: { f, g } }).exports;
  const plain = mk((x) => x, (i) => i);
  const caught = mk(function () { return handleError(function (x) { return x; }, arguments); }, (i) => i);
  const obj = {};
  const jsF = (x) => x;
  let sink;
  return {
    "wasm→JS import call, externref in/out": time(() => plain.loopRef(N, obj)),
    "wasm→JS import call, i32 in/out": time(() => plain.loopI32(N)),
    "wasm→JS import call wrapped like a `catch` import (closure + arguments + apply + try)": time(() => caught.loopRef(N, obj)),
    "JS→wasm export call (i32 → i32)": time(() => {
      for (let i = 0; i < N; i++) sink = plain.nop(i);
    }),
    "JS→JS call (baseline)": time(() => {
      for (let i = 0; i < N; i++) sink = jsF(i);
    }),
  };
}

async function report() {
  const tmp = mkdtempSync(join(tmpdir(), "bench-prof-"));
  const lines = [];
  const say = (s = "") => {
    lines.push(s);
    console.log(s);
  };
  try {
    const micro = crossingMicrobench();
    say("### Raw crossing cost on this machine (ns per call, median of 7 × 2M calls)");
    say();
    for (const [k, v] of Object.entries(micro)) say(`- ${k}: ${v.toFixed(1)} ns`);
    say();

    const probe = run(["bench/profile.mjs", "probe"]);
    const workloads = (probe.builtin ? ["a", "b", "f"] : ["a", "b"]).filter((w) => !process.env.PROFILE_ONLY || process.env.PROFILE_ONLY.includes(w));
    if (!probe.builtin) say(`(f) not profiled: ${probe.why}\n`);
    for (const which of workloads) {
      const c = run(["bench/profile.mjs", "count", which]);
      const title = which === "f" ? "(f) openai-completions SSE" : `(${which})`;
      say(`### Crossings on ${title}, one warm run: ${c.events.toLocaleString("en")} events`);
      say();
      say(`- wasm→JS (imports): ${c.wasmToJs.toLocaleString("en")} = ${(c.wasmToJs / c.events).toFixed(1)} per event`);
      say(`- JS→wasm (exports, incl. closure and future wake-ups): ${c.jsToWasm.toLocaleString("en")} = ${(c.jsToWasm / c.events).toFixed(1)} per event`);
      say(`- top imports: ${c.topImports.slice(0, 25).map(([k, v]) => `${k} ${(v / c.events).toFixed(2)}`).join(", ")}`);
      say(`- strings decoded from wasm memory (TextDecoder), per event: ${c.topStrings.slice(0, 10).map(([k, v]) => `${k} ${(v / c.events).toFixed(2)}`).join(", ")}`);
      say(`- top exports: ${c.topExports.slice(0, 8).map(([k, v]) => `${k} ${(v / c.events).toFixed(2)}`).join(", ")}`);
      say();
    }

    const named = namedBuild(tmp);
    say(
      named.entry
        ? `CPU profiles: ours with function names (wasm-bindgen + wasm-opt -Oz -g over target/…/release/agent_loop_wasm.wasm of ${named.rawTime}; pkg/ wasm of ${named.pkgTime}).`
        : `CPU profiles: ours without wasm function names (${named.why}).`,
    );
    say();
    for (const which of workloads) {
      for (const name of ["ours", "reference"]) {
        const dir = join(tmp, `prof-${name}-${which}`);
        const env = name === "ours" && named.entry ? { BENCH_OURS_ENTRY: named.entry } : {};
        const r = run(["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "200", "bench/profile.mjs", "cpu", name, which], env);
        const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".cpuprofile")));
        const a = analyseProfile(file);
        const title = which === "f" ? "(f) openai-completions SSE" : `(${which})`;
        say(`#### ${title} ${name}: median run ${median(r.times).toFixed(0)} ms under the profiler; ${a.totalMs.toFixed(0)} ms of samples (whole process, not idle)`);
        say();
        say("| layer | self ms | share |");
        say("|---|---|---|");
        for (const [k, ms, p] of a.categories) say(`| ${k} | ${ms} | ${p} |`);
        say();
        say("| top functions (self) | ms | share |");
        say("|---|---|---|");
        for (const [k, ms, p] of a.functions.slice(0, name === "ours" ? 25 : 12)) say(`| \`${k.replace(/\|/g, "\\|")}\` | ${ms} | ${p} |`);
        say();
        if (a.inclusive.length) {
          say("| Rust functions (inclusive) | ms | share |");
          say("|---|---|---|");
          for (const [k, ms, p] of a.inclusive) say(`| \`${k.replace(/\|/g, "\\|")}\` | ${ms} | ${p} |`);
          say();
        }
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  writeFileSync(join(ROOT, "bench/profile-latest.md"), `${lines.join("\n")}\n`);
}

/** Whether our streamBuiltin has the OpenAI Chat provider yet. */
async function probeMode() {
  const impl = await load("ours");
  let last;
  // Port 9 on loopback: the connection is refused at once; only the kind of error matters here.
  const m = { id: "x", name: "x", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9/v1", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e5, maxTokens: 1000 };
  for await (const e of impl.streamBuiltin(m, { messages: [] }, { apiKey: "k" })) last = e;
  const msg = last?.error?.errorMessage ?? "";
  const builtin = !/^No built-in provider for api/.test(msg);
  process.stdout.write(`${JSON.stringify({ builtin, why: builtin ? "" : msg })}\n`);
  process.exit(0);
}

if (mode === "count") await countMode(rest[0]);
else if (mode === "probe") await probeMode();
else if (mode === "cpu") await cpuMode(rest[0], rest[1]);
else await report();
