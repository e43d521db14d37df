// scripts/demo and the local model server it starts (issue 40): a server the demo started is stopped when the demo
// ends (Ctrl+C, a TERM), by its PID from the pid file; a server that already ran before the demo is left running.
// Each case uses its own free port for the model (LOCAL_LLM_PORT), so the suite's own server on 8088 is never touched.
// Needs the model and the server's dependencies installed (`scripts/local-llm install`; scripts/test has started it).
//
//   node --test tests/local-llm/demo-script.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const T = { timeout: 180_000 };

async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The environment of one case: the model on `llmPort`, the suite's LOCAL_LLM_URL (which would win) removed. */
function envFor(llmPort) {
  const env = { ...process.env, LOCAL_LLM_PORT: String(llmPort) };
  delete env.LOCAL_LLM_URL;
  return env;
}

/** Starts `scripts/demo --port 0` and waits until its page server prints its URL. */
async function startDemo(env) {
  const demo = spawn(join(ROOT, "scripts/demo"), ["--port", "0"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  demo.output = "";
  demo.stdout.on("data", (d) => (demo.output += d));
  demo.stderr.on("data", (d) => (demo.output += d));
  demo.exited = new Promise((resolve) => demo.on("exit", (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 120_000;
  while (!/demo: http:\/\/localhost:\d+\/www\//.test(demo.output) && demo.exitCode === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = /demo: (http:\/\/localhost:\d+)\/www\//.exec(demo.output);
  if (!page) {
    if (demo.exitCode === null) demo.kill("SIGKILL");
    assert.fail(`scripts/demo did not serve its page:\n${demo.output}`);
  }
  demo.page = page[1].replace("localhost", "127.0.0.1");
  return demo;
}

const pidFile = (llmPort) => join(ROOT, "local-llm", ".run", `${llmPort}.pid`);

for (const [signal, code, how] of [["SIGINT", 130, " (Ctrl+C)"], ["SIGTERM", 143, ""]]) {
  test(`scripts/demo stops the local model it started when it gets ${signal}${how}, and its page server`, T, async (t) => {
    const llmPort = await freePort();
    const demo = await startDemo(envFor(llmPort));
    t.after(() => demo.exitCode === null && demo.kill("SIGKILL"));
    const started = new RegExp(`local-llm: http://127\\.0\\.0\\.1:${llmPort}/v1 \\(model \\S+, pid (\\d+)`).exec(demo.output);
    assert.ok(started, `the demo started the model on ${llmPort}:\n${demo.output}`);
    const llmPid = Number(started[1]);
    t.after(() => alive(llmPid) && process.kill(llmPid, "SIGKILL"));
    assert.ok(alive(llmPid));
    assert.equal((await fetch(`http://127.0.0.1:${llmPort}/health`)).status, 200);
    assert.equal((await fetch(`${demo.page}/www/`)).status, 200);

    process.kill(demo.pid, signal);
    assert.deepEqual(await demo.exited, { code, signal: null });
    assert.match(demo.output, new RegExp(`local-llm: stopped \\(pid ${llmPid}\\)`));
    assert.equal(alive(llmPid), false, "the model server is gone");
    assert.equal(existsSync(pidFile(llmPort)), false, "its pid file is removed");
    await assert.rejects(fetch(`${demo.page}/www/`), "the page server is gone");
  });
}

test("scripts/demo leaves a local model that already ran before it running", T, async (t) => {
  const llmPort = await freePort();
  const env = envFor(llmPort);
  execFileSync(join(ROOT, "scripts/local-llm"), ["start"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
  // Stopped by its PID (the pid file the script wrote) however the test ends.
  t.after(() => execFileSync(join(ROOT, "scripts/local-llm"), ["stop"], { cwd: ROOT, env, stdio: "ignore" }));
  const demo = await startDemo(env);
  t.after(() => demo.exitCode === null && demo.kill("SIGKILL"));
  assert.match(demo.output, new RegExp(`demo: the local model already runs \\(http://127\\.0\\.0\\.1:${llmPort}/v1\\); it keeps running after the demo`));
  process.kill(demo.pid, "SIGINT");
  await demo.exited;
  assert.equal((await fetch(`http://127.0.0.1:${llmPort}/health`)).status, 200, "still answering");
  assert.doesNotMatch(demo.output, /local-llm: stopped/);
});
