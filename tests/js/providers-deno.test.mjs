// The built-in providers under Deno (SPEC P-6.2.1, P-6.2.2, P-6.2.3, K-9.4.2): this Node test starts the loopback
// server and scripts it; `deno run` (node_modules/.bin/deno) executes tests/js/providers-deno.mjs, which imports
// pkg/dist/deno/index.js and runs the same scenarios as Node (a text reply per API through streamBuiltin, and an
// agentLoop run without streamFn: two parallel tools, then an answer) with Deno's own fetch. Also: the key from
// Deno.env, and no key (not a crash) when env access is not permitted.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { drain, providerModel, startProviderServer, wire } from "./provider-server.mjs";
import { runScenarios } from "./provider-scenarios.mjs";
import { checkPlan, scriptPlan } from "./provider-plan.mjs";
import { P, SKIP, clearKeyEnv, lib, streamBuiltin } from "./providers-common.mjs";
import { missing, needs } from "../required.mjs";

clearKeyEnv();
const DENO = fileURLToPath(new URL("../../node_modules/.bin/deno", import.meta.url));
const SCRIPT = fileURLToPath(new URL("./providers-deno.mjs", import.meta.url));
const skip = SKIP || needs(DENO, "npm ci installs deno 2.9.6");
// The first `deno run` after a new build fills Deno's caches for the package (dependency analysis, V8 code cache:
// ~0.6 s alone, seconds more under the full suite's parallel load, and every time on a fresh machine): the tests
// check behaviour, so they wait for that instead of the providers' usual 5 s.
const D = { ...P, skip, timeout: 30_000 };
const server = await startProviderServer();
after(() => server.close());

/** Runs the Deno script with `plan`; resolves the parsed RESULT line. */
function deno(plan, { flags = ["--allow-net=127.0.0.1"], env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, ["run", "--no-prompt", ...flags, SCRIPT, JSON.stringify(plan)], {
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 12000);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (code !== 0 || !line) return reject(new Error(`deno exited ${code}\n${out}\n${err}`));
      resolve(JSON.parse(line.slice(7)));
    });
  });
}

const withoutTimes = (results) => JSON.parse(JSON.stringify(results, (k, v) => (k === "$runtime" ? undefined : v)));

const denoRuns = {};
for (const kind of ["text", "tools"]) {
  test(`K-9.4.2 Deno: ${kind === "text" ? "a text reply (streamBuiltin)" : "an agentLoop run without streamFn (two parallel tools, then an answer)"} through all four providers`, D, async () => {
    const { plan, routes } = scriptPlan(server, "deno", undefined, [kind]);
    const results = await deno(plan);
    assert.match(results.$runtime, /^deno \d/);
    checkPlan("deno", plan, routes, results);
    // Deno's fetch sent the requests (its user agent), not a Node polyfill
    for (const s of plan) assert.match(routes[s.name].requests[0].headers["user-agent"], /^Deno\//);
    denoRuns[kind] = withoutTimes(results);
  });
}

test("K-9.4.2 Deno and Node give identical summaries for the same plan", D, async () => {
  assert.ok(denoRuns.text && denoRuns.tools, "the Deno runs above passed");
  const node = scriptPlan(server, "deno-node");
  const nodeResults = await runScenarios(lib, node.plan);
  checkPlan("node", node.plan, node.routes, nodeResults);
  const rename = (r) => Object.fromEntries(Object.entries(withoutTimes(r)).map(([k, v]) => [k.replace(/^deno-node-/, "deno-"), v]));
  assert.deepEqual(rename(nodeResults), { ...denoRuns.text, ...denoRuns.tools });
});

test("P-6.2.3 Deno: the key comes from Deno.env; without env permission there is simply no key", D, async () => {
  const api = "anthropic-messages";
  const plan = (route) => [{ name: route.name, api, kind: "text", model: providerModel(api, route.baseUrl) }];
  const withEnv = server.route("deno-env-allowed");
  withEnv.reply({ sse: wire[api].text("Hello from the loopback server, wörld 🌍!") });
  const allowed = await deno(plan(withEnv), { flags: ["--allow-net=127.0.0.1", "--allow-env=ANTHROPIC_API_KEY"], env: { ANTHROPIC_API_KEY: "deno-env-key" } });
  assert.equal(allowed[withEnv.name].message.stopReason, "stop");
  assert.equal(withEnv.requests[0].headers["x-api-key"], "deno-env-key");

  const denied = server.route("deno-env-denied");
  denied.reply({ sse: wire[api].text("never") });
  const results = await deno(plan(denied), { env: { ANTHROPIC_API_KEY: "deno-env-key" } });
  const got = results[denied.name];
  assert.equal(got.thrown, undefined);
  assert.deepEqual(got.types, ["error"]);
  assert.equal(got.message.errorMessage, "No API key for provider: anthropic");
  assert.equal(denied.requests.length, 0);
});

test("P-6.2.6 Deno: HTTP errors and retries behave as in Node", D, async () => {
  const api = "openai-completions";
  const r = server.route("deno-retry");
  r.reply(
    { status: 503, headers: { "retry-after": "0" }, body: { error: { message: "busy" } } },
    { sse: wire[api].text("Hello from the loopback server, wörld 🌍!") },
  );
  const results = await deno([{ name: r.name, api, kind: "text", model: providerModel(api, r.baseUrl) }]);
  assert.equal(results[r.name].message.stopReason, "stop");
  assert.equal(r.requests.length, 2);
  // sanity in Node for the same script
  const n = server.route("deno-retry-node");
  n.reply({ status: 400, body: { error: { message: "bad" } } });
  assert.equal((await drain(streamBuiltin(providerModel(api, n.baseUrl), { messages: [] }))).result.errorMessage, "HTTP 400: bad");
});
