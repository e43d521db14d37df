// The built-in providers in headless Chromium (SPEC P-6.2.1, K-9.4.2): a static server (http://localhost:<port>)
// serves the repository and a small page that imports pkg/dist/web/index.js and tests/js/provider-scenarios.mjs;
// the page fetches from the scripted loopback server at http://127.0.0.1:<other port> — another origin, so every
// request needs the server's CORS answers (preflight included). Same scenarios as Node and Deno: a text reply per
// API (streamBuiltin) and an agentLoop run without streamFn (two parallel tools, then an answer). Uses
// playwright-core with /usr/bin/chromium; skipped with the reason when either is missing.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { startProviderServer, startStaticServer, wire, providerModel } from "./provider-server.mjs";
import { runScenarios } from "./provider-scenarios.mjs";
import { checkPlan, scriptPlan } from "./provider-plan.mjs";
import { P, SKIP, clearKeyEnv, lib } from "./providers-common.mjs";
import { missing, needs } from "../required.mjs";

clearKeyEnv();
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--no-first-run", "--disable-sync", "--disable-quic",
];
const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
let playwright;
try {
  // playwright-core exits the process on Node < 20, so it is not even loaded there
  if (NODE_MAJOR >= 20) playwright = createRequire(import.meta.url)("playwright-core");
} catch {}
const skip =
  SKIP ||
  (NODE_MAJOR < 20 && `playwright-core needs Node 20+ (this is ${process.version}); the Chromium run is covered on Node 20+`) ||
  missing(!playwright && "playwright-core is not installed (npm ci)") ||
  needs(CHROMIUM, "scripts/setup installs Debian's chromium");
const B = { ...P, skip };

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>provider tests</title>
<script type="module">
  import * as lib from "/pkg/dist/web/index.js";
  import { runScenarios } from "/tests/js/provider-scenarios.mjs";
  window.__run = (plan) => runScenarios(lib, plan);
  window.__ready = true;
</script>`;

let server;
let site;
let browser;
let page;
const problems = [];

before(async () => {
  if (skip) return;
  server = await startProviderServer();
  site = await startStaticServer(ROOT, { "/__providers.html": PAGE, "/favicon.ico": "" });
  browser = await playwright.chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  page = await browser.newPage();
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  await page.goto(`${site.url}/__providers.html`);
  await page.waitForFunction(() => window.__ready === true, undefined, { timeout: 10_000 });
});

after(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

const inPage = (plan) => page.evaluate((p) => window.__run(p), plan);
const pageRuns = {};

for (const kind of ["text", "tools"]) {
  test(`K-9.4.2 Chromium: ${kind === "text" ? "a text reply (streamBuiltin)" : "an agentLoop run without streamFn (two parallel tools, then an answer)"} through all four providers, cross-origin`, B, async () => {
    const preflightsBefore = server.preflights.length;
    const { plan, routes } = scriptPlan(server, "web", undefined, [kind]);
    const results = await inPage(plan);
    checkPlan("chromium", plan, routes, results);
    for (const s of plan) {
      const q = routes[s.name].requests[0];
      assert.equal(q.headers.origin, site.url, "the page's origin sent the request");
      assert.match(q.headers["user-agent"], /Chrome\//);
    }
    // each request needed a CORS preflight (JSON body + auth headers are not CORS-safelisted)
    const preflights = server.preflights.slice(preflightsBefore);
    assert.ok(preflights.length >= 1, "preflights were made");
    const asked = preflights.map((p) => p.headers["access-control-request-headers"]).join(",");
    for (const h of ["content-type", "authorization", "x-api-key", "x-goog-api-key", "anthropic-version"]) assert.ok(asked.includes(h), `${h} was preflighted (${asked})`);
    pageRuns[kind] = results;
  });
}

test("K-9.4.2 Chromium and Node give identical summaries for the same plan", B, async () => {
  assert.ok(pageRuns.text && pageRuns.tools, "the Chromium runs above passed");
  const node = scriptPlan(server, "web-node");
  const nodeResults = await runScenarios(lib, node.plan);
  checkPlan("node", node.plan, node.routes, nodeResults);
  const rename = (r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k.replace(/^web-node-/, "web-"), v]));
  assert.deepEqual(rename(nodeResults), { ...pageRuns.text, ...pageRuns.tools });
  assert.deepEqual(problems, []);
});

test("P-6.2.1 Chromium: a response without CORS headers is a network error for the page → error event, no throw", B, async () => {
  const api = "anthropic-messages";
  const r = server.route("web-no-cors");
  r.reply({ sse: wire[api].text("blocked"), noCors: true });
  const results = await inPage([{ name: r.name, api, kind: "text", model: providerModel(api, r.baseUrl), apiKey: "k", options: { maxRetries: 0 } }]);
  const got = results[r.name];
  assert.equal(got.thrown, undefined);
  assert.deepEqual(got.types, ["error"]);
  assert.equal(got.message.stopReason, "error");
  assert.equal(got.message.errorMessage, "Failed to fetch");
  assert.equal(r.requests.length, 1, "the request reached the server; the browser withheld the answer");
  problems.length = 0; // the blocked request is reported on the console
});
