// agent-loop-wasm/mcp over Streamable HTTP from other runtimes (issue 18): Deno, and a Chromium page (a Vite build
// of browser/, since the SDK's client needs a bundler), each running scenario.mjs against server-everything
// listening on 127.0.0.1 in its own process.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, resolve, sep } from "node:path";
import { after, before, test } from "node:test";
import { HERE, startEverythingHttp } from "./helpers.mjs";
import { needs } from "../required.mjs";

const ROOT = join(HERE, "..", "..");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
let server;
before(async () => {
  server = await startEverythingHttp();
});
after(() => server?.stop());

function run(cmd, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What both clients must report: the same run as in Node. */
function checkSummary(summary) {
  assert.deepEqual(summary.tools, ["ev_echo", "ev_trigger-long-running-operation"]);
  assert.deepEqual(summary.results, ["c1=Long running operation completed. Duration: 0.4 seconds, Steps: 2.", "c2=Echo: from afar"]);
  assert.equal(summary.last, "done");
  assert.deepEqual(summary.events.filter((e) => e.startsWith("start:")), ["start:c1", "start:c2"]);
  assert.equal(summary.events.at(-1), "end:c1");
  assert.ok(summary.events.includes("update:c1"), `progress reached the run: ${summary.events}`);
}

test("Deno: agent-loop-wasm/mcp with the SDK's Streamable HTTP client, a full run", { timeout: 90000, skip: needs(DENO, "npm ci installs deno") }, async () => {
  const r = await run(DENO, ["run", `--allow-net=127.0.0.1`, "--allow-read", "--allow-env", "deno/client.mjs", server.url], {
    cwd: HERE,
    env: { ...process.env, DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", DENO_DIR: join(ROOT, "target", "deno-mcp") },
  });
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1));
  assert.match(summary.entry, /\/node_modules\/agent-loop-wasm\/dist\/deno\/mcp\.js$/);
  checkSummary(summary);
});

/** The built page on 127.0.0.1 (its own origin, so the MCP requests are cross-origin as on a real site). */
async function serve(dir) {
  const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };
  const http = createServer((req, res) => {
    const file = resolve(dir, `.${new URL(req.url, "http://x").pathname}`);
    const path = file === resolve(dir) ? join(file, "index.html") : file;
    if (!path.startsWith(resolve(dir) + sep) || !existsSync(path) || statSync(path).isDirectory()) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": types[extname(path)] ?? "application/octet-stream" });
    createReadStream(path).pipe(res);
  });
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${http.address().port}/`, close: () => new Promise((r) => http.close(r)) };
}

test("Chromium: a page (Vite build) with the SDK's Streamable HTTP client and agent-loop-wasm/mcp, a full run", { timeout: 120000, skip: needs("/usr/bin/chromium", "scripts/setup installs Debian's chromium") }, async (t) => {
  const outDir = join(ROOT, "target", "mcp-browser");
  const built = await run(process.execPath, [join(ROOT, "node_modules", "vite", "bin", "vite.js"), "build", "--logLevel", "warn", "--emptyOutDir", "--outDir", outDir, join(HERE, "browser")], { cwd: HERE });
  assert.equal(built.code, 0, built.stderr || built.stdout);
  const site = await serve(outDir);
  t.after(site.close);
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(`${site.url}?mcp=${encodeURIComponent(server.url)}`);
  await page.waitForFunction(() => window.__result !== undefined, undefined, { timeout: 60000 });
  const result = await page.evaluate(() => window.__result);
  assert.ok(result.ok, `${result.error}\n${problems.join("\n")}`);
  checkSummary(result.summary);
});
