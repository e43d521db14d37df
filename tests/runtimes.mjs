// Runs one runtime-neutral test module in headless Chromium and in workerd, the way a user's page and Worker load the
// package: a page importing `agent-loop-wasm` through an import map from the package's web build, and a Worker whose
// modules are the package's "workerd" entry and its folder (the .wasm as a compiled module), as wrangler uploads them.
// The test modules and any bundled libraries are given as files; each runtime's answer is the JSON the module's
// promise resolves to. Servers bind 127.0.0.1 and are ended by PID. Used by tests/otel/matrix.test.mjs and
// tests/schemas/schemas.test.mjs.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const requireRoot = createRequire(join(ROOT, "package.json"));
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"];
const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

/** A free port on 127.0.0.1 (another process may take it before it is used: callers retry). */
export async function freePort() {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** One ES module of `source` (imports resolved from `resolveDir`'s node_modules), bundled for browsers by esbuild. */
export async function bundle(source, resolveDir) {
  const result = await requireRoot("esbuild").build({
    stdin: { contents: source, resolveDir, loader: "js" },
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "warning",
  });
  return result.outputFiles[0].text;
}

/**
 * Serves `files` (`{ "/name.mjs": text }`) and the package `pkgDir`'s web build, and opens a page that runs `main`
 * (module code that may import `agent-loop-wasm` and the files, and ends with `export default <promise>`'s value
 * in `window.result`). Returns `{ result, problems }`: the resolved value, page errors and console errors.
 */
export async function runInChromium({ pkgDir, files, main, timeout = 45_000 }) {
  const page = `<!doctype html>
<meta charset="utf-8">
<title>agent-loop-wasm test</title>
<link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "agent-loop-wasm": "/pkg/dist/web/index.js" } }</script>
<script type="module">
import run from "/main.mjs";
run().then((value) => (window.result = { value }), (e) => (window.result = { error: String(e?.stack ?? e) }));
</script>
`;
  const served = { "/": ["text/html", page], "/main.mjs": ["text/javascript", main] };
  for (const [name, text] of Object.entries(files)) served[name] = ["text/javascript", text];
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    let file = served[path];
    if (file === undefined && path.startsWith("/pkg/dist/web/") && !path.includes("..")) {
      try {
        file = [TYPES[extname(path)] ?? "application/octet-stream", readFileSync(join(pkgDir, path.slice("/pkg/".length)))];
      } catch {}
    }
    if (file === undefined) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": file[0] }).end(file[1]);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { chromium } = requireRoot("playwright-core");
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const tab = await browser.newPage();
    const problems = [];
    tab.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    tab.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    await tab.waitForFunction(() => window.result !== undefined, null, { timeout });
    const outcome = await tab.evaluate(() => window.result);
    if (outcome.error !== undefined) throw new Error(`Chromium: ${outcome.error}`);
    return { result: outcome.value, problems };
  } finally {
    await browser.close();
    server.close();
    server.closeAllConnections();
  }
}

function walk(dir) {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
}

/**
 * Runs `main` (module code as for runInChromium) in a workerd Worker whose modules are `files` (`{ "name.mjs": text }`,
 * imported as "./name.mjs") and the package `pkgDir` under its name. Returns the resolved value.
 */
export async function runInWorkerd({ pkgDir, files, main, timeout = 45_000 }) {
  const dir = mkdtempSync(join(tmpdir(), "agent-loop-wasm-workerd-"));
  let child;
  try {
    const entry = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).exports["."].workerd;
    const entryDir = join(pkgDir, entry, "..");
    const rel = (f) => relative(pkgDir, f).split(sep).join("/");
    const modules = [];
    const add = (name, contents, wasm = false) => {
      const file = `m${modules.length}${wasm ? ".wasm" : ".mjs"}`;
      writeFileSync(join(dir, file), contents);
      modules.push(`(name = "${name}", ${wasm ? "wasm" : "esModule"} = embed "${file}")`);
    };
    add(
      "worker.mjs",
      `import run from "./main.mjs";
export default {
  async fetch() {
    try {
      return Response.json({ value: await run() });
    } catch (e) {
      return Response.json({ error: String(e?.stack ?? e) });
    }
  },
};
`,
    );
    add("main.mjs", main);
    for (const [name, text] of Object.entries(files)) add(name.replace(/^\//, ""), text);
    add("agent-loop-wasm", `export * from "./pkg/${rel(join(pkgDir, entry))}";\n`);
    for (const f of walk(entryDir)) add(`pkg/${rel(f)}`, readFileSync(f), f.endsWith(".wasm"));
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      writeFileSync(
        join(dir, "config.capnp"),
        `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .test) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const test :Workerd.Worker = (
  modules = [
    ${modules.join(",\n    ")}
  ],
  compatibilityDate = "2025-09-01",
);
`,
      );
      child = spawn(join(ROOT, "node_modules", ".bin", "workerd"), ["serve", "config.capnp"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
      let log = "";
      child.stdout.on("data", (d) => (log += d));
      child.stderr.on("data", (d) => (log += d));
      const deadline = Date.now() + timeout;
      let outcome;
      while (outcome === undefined) {
        if (child.exitCode !== null) break;
        try {
          outcome = await (await fetch(`http://127.0.0.1:${port}/`)).json();
        } catch (e) {
          if (Date.now() > deadline) throw new Error(`workerd did not answer: ${e.message}\n${log.slice(-2000)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (outcome === undefined) {
        if (attempt < 5 && log.includes("Address already in use")) continue;
        throw new Error(`workerd exited ${child.exitCode}: ${log.slice(-2000)}`);
      }
      if (outcome.error !== undefined) throw new Error(`workerd: ${outcome.error}`);
      return outcome.value;
    }
  } finally {
    await endChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Ends a child process still running (by its PID) and waits for its exit; nothing when it is gone or undefined. */
export async function endChild(child) {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  process.kill(child.pid, "SIGKILL");
  await exited;
}
