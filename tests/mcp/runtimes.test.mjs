// agent-loop-wasm/mcp over Streamable HTTP from other runtimes (issue 18): Deno, and a Chromium page (a Vite build
// of browser/, since the SDK's client needs a bundler), each running scenario.mjs against server-everything
// listening on 127.0.0.1 in its own process.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { HERE, startEverythingHttp } from "./helpers.mjs";

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

test("Deno: agent-loop-wasm/mcp with the SDK's Streamable HTTP client, a full run", { timeout: 90000, skip: !existsSync(DENO) && "no deno in node_modules/.bin (scripts/setup)" }, async () => {
  const r = await run(DENO, ["run", `--allow-net=127.0.0.1`, "--allow-read", "--allow-env", "deno/client.mjs", server.url], {
    cwd: HERE,
    env: { ...process.env, DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", DENO_DIR: join(ROOT, "target", "deno-mcp") },
  });
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split("\n").at(-1));
  assert.match(summary.entry, /\/node_modules\/agent-loop-wasm\/dist\/deno\/mcp\.js$/);
  checkSummary(summary);
});
