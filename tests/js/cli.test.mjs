// examples/cli.mjs (SPEC K-9.3, the design document's example for real): `list_files` and `read_file` over the
// current directory, on the offline script by default (issue 15: even when a local model runs), on the local model
// with --local, and on an OpenAI-compatible server when OPENAI_BASE_URL is set (here local mocks that stream Chat
// Completions SSE). Runs the example as a child process against pkg/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const cli = join(root, "examples", "cli.mjs");
// The example always uses our package, so there is nothing to compare against the reference; Deno's node:test
// would spawn deno instead of node.
const skip =
  (process.env.AGENT_LOOP_IMPL === "reference" && "the example always runs our package") ||
  (typeof globalThis.Deno !== "undefined" && "Deno's node:test would spawn deno, not node");
const T = { timeout: 15_000, skip };

function runCli(prompt, env = {}, flags = []) {
  const base = { ...process.env };
  for (const key of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "FORCE_COLOR", "CLI_MODEL", "LOCAL_LLM_URL"]) delete base[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...flags, prompt], {
      cwd: root,
      env: { ...base, NO_COLOR: "1", OFFLINE_CHUNK_DELAY_MS: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => { stdout += d; });
    child.stderr.on("data", (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill(); reject(new Error(`cli timed out\n${stdout}\n${stderr}`)); }, 12_000);
    child.on("close", (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

test("K-9.3 examples/cli.mjs offline: both tools run, then the answer streams", T, async () => {
  const { code, stdout, stderr } = await runCli("list the files, then read the README");
  assert.equal(code, 0, `exit code 0\n${stdout}\n${stderr}`);
  assert.match(stdout, /^agent-loop-wasm \d+\.\d+\.\d+ · offline scripted model \(a script, not a language model; --local for the local model, OPENAI_BASE_URL for an OpenAI-compatible server\) · /);
  assert.match(stdout, /→ model calls list_files\(\{"path":"\."\}\)/);
  assert.match(stdout, /→ model calls read_file\(\{"path":"README\.md"\}\)/);
  assert.match(stdout, /▶ running list_files/);
  assert.match(stdout, /▶ running read_file/);
  assert.match(stdout, /✔ done list_files in \d+ ms/);
  assert.match(stdout, /✔ done read_file in \d+ ms/);
  // Both calls started before either finished: one parallel batch.
  const lines = stdout.split("\n");
  const at = (re) => lines.findIndex((l) => re.test(l));
  assert.ok(at(/▶ running read_file/) < at(/✔ done/), "both tools start before the first one ends");
  // The answer, built from what the tools really returned.
  assert.match(stdout, /Here is what the tools returned/);
  assert.match(stdout, /`README\.md` \(\d+ characters\) starts with \*\*agent-loop-wasm\*\*/);
  // The listing names the directory's real entries (the first six, sorted): the answer saw the tool's result.
  const { readdirSync } = await import("node:fs");
  const first = readdirSync(root).sort()[0];
  assert.ok(stdout.includes(`\`${first}`), `the answer names ${first}`);
  assert.match(stdout, /`\.` holds \d+ entries: /);
  assert.match(stdout, /2 requests · 2 tool calls/);
  assert.equal(stderr, "");
});

test("K-9.3 examples/cli.mjs uses an OpenAI-compatible server when OPENAI_BASE_URL is set", T, async () => {
  const requests = [];
  const sse = (chunks) => chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("");
  const delta = (d, finish = null) => ({ id: "chatcmpl-1", model: "mock-model", choices: [{ index: 0, delta: d, finish_reason: finish }] });
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      requests.push({ url: req.url, auth: req.headers.authorization, body: JSON.parse(body) });
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (requests.length === 1) {
        res.end(sse([
          delta({ role: "assistant", content: "Let me look." }),
          delta({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "list_files", arguments: "" } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
          delta({ tool_calls: [{ index: 0, function: { arguments: '"."}' } }] }),
          delta({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "read_file", arguments: '{"path":"README.md"}' } }] }),
          delta({}, "tool_calls"),
          "[DONE]",
        ]));
      } else {
        res.end(sse([
          delta({ role: "assistant", content: "The README is about " }),
          delta({ content: "agent-loop-wasm." }),
          delta({}, "stop"),
          "[DONE]",
        ]));
      }
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const { code, stdout, stderr } = await runCli("list the files, then read the README", {
      OPENAI_BASE_URL: `http://127.0.0.1:${server.address().port}/v1`,
      OPENAI_API_KEY: "test-key",
      OPENAI_MODEL: "mock-model",
    });
    assert.equal(code, 0, `exit code 0\n${stdout}\n${stderr}`);
    assert.match(stdout, /mock-model at http:\/\/127\.0\.0\.1:\d+\/v1/);
    assert.match(stdout, /Let me look\./);
    assert.match(stdout, /✔ done list_files in \d+ ms/);
    assert.match(stdout, /✔ done read_file in \d+ ms/);
    assert.match(stdout, /The README is about agent-loop-wasm\./);
    assert.equal(requests.length, 2);
    assert.equal(requests[0].url, "/v1/chat/completions");
    assert.equal(requests[0].auth, "Bearer test-key");
    assert.equal(requests[0].body.model, "mock-model");
    assert.deepEqual(requests[0].body.tools.map((t) => t.function.name).sort(), ["list_files", "read_file"]);
    const toolMessages = requests[1].body.messages.filter((m) => m.role === "tool");
    assert.deepEqual(toolMessages.map((m) => m.tool_call_id), ["call_a", "call_b"], "results in request order");
    assert.match(toolMessages[0].content, /README\.md/);
    assert.match(toolMessages[1].content, /^# agent-loop-wasm/);
    assert.ok(!stdout.includes("test-key"), "the key is never printed");
  } finally {
    server.close();
  }
});

// A scripted stand-in for scripts/local-llm: /health, and Chat Completions calling list_files, then read_file, then text.
async function fakeLocalModel() {
  const requests = [];
  const sse = (chunks) => chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("");
  const delta = (d, finish = null) => ({ id: "chatcmpl-1", model: "SmolLM2-135M-Instruct", choices: [{ index: 0, delta: d, finish_reason: finish }] });
  const server = createServer((req, res) => {
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ status: "ok", model: "SmolLM2-135M-Instruct" }));
    }
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      const request = JSON.parse(body);
      requests.push({ url: req.url, auth: req.headers.authorization, body: request });
      const done = request.messages.filter((m) => m.role === "tool").length;
      const call = (name, args) => [
        delta({ role: "assistant", content: null, tool_calls: [{ index: 0, id: `call_${done}`, type: "function", function: { name, arguments: args } }] }),
        delta({}, "tool_calls")];
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(sse([...(done === 0 ? call("list_files", '{"path": "."}') : done === 1 ? call("read_file", '{"path": "README.md"}')
        : [delta({ role: "assistant", content: "It is agent-loop-wasm." }), delta({}, "stop")]), "[DONE]"]));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { requests, server, url: `http://127.0.0.1:${server.address().port}/v1` };
}

test("issue 15: examples/cli.mjs stays on the offline script while a local model runs; --local picks it", T, async () => {
  const local = await fakeLocalModel();
  try {
    const offline = await runCli("list the files, then read the README", { LOCAL_LLM_URL: local.url });
    assert.equal(offline.code, 0, offline.stdout + offline.stderr);
    assert.match(offline.stdout, / · offline scripted model \(/);
    assert.equal(local.requests.length, 0, "the default never calls the local model");

    const { code, stdout, stderr } = await runCli("list the files, then read the README", { LOCAL_LLM_URL: local.url, OPENAI_API_KEY: "not-for-local" }, ["--local"]);
    assert.equal(code, 0, `exit code 0\n${stdout}\n${stderr}`);
    assert.match(stdout, new RegExp(` · local model SmolLM2-135M-Instruct at ${local.url.replace(/[./]/g, "\\$&")} \\(a tiny real model; its server decides when to call a tool\\) · `));
    assert.match(stdout, /> list the files, then read the README\n/, "--local is not part of the prompt");
    assert.match(stdout, /✔ done list_files in \d+ ms/);
    assert.match(stdout, /✔ done read_file in \d+ ms/);
    assert.match(stdout, /It is agent-loop-wasm\./);
    assert.match(stdout, /3 requests · 2 tool calls/);
    assert.deepEqual(local.requests.map((r) => [r.url, r.body.model, r.auth]), Array(3).fill(["/v1/chat/completions", "SmolLM2-135M-Instruct", undefined]));
    assert.equal(stderr, "");
  } finally {
    local.server.close();
  }
});

test("issue 15: examples/cli.mjs --local says how to start the local model when it is down", T, async () => {
  const closed = await new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => { const { port } = probe.address(); probe.close(() => resolve(port)); });
  });
  const url = `http://127.0.0.1:${closed}/v1`;
  const { code, stdout, stderr } = await runCli("list the files", { CLI_MODEL: "local", LOCAL_LLM_URL: url });
  assert.equal(code, 1);
  assert.equal(stdout, "");
  assert.equal(stderr, `cli: the local model is not running at ${url}: start it with scripts/local-llm start (or drop --local for the offline scripted model)\n`);
});

// Issue 30: --with-delete adds delete_file, which needs approval. The child runs in a scratch directory; its stdin
// is driven like a person at the terminal: each answer is written only once the question it answers is on stdout.
function runCliAnswering(cwd, prompt, dialogue, flags = ["--with-delete"]) {
  const base = { ...process.env };
  for (const key of ["OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "FORCE_COLOR", "CLI_MODEL", "LOCAL_LLM_URL"]) delete base[key];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...flags, prompt], {
      cwd,
      env: { ...base, NO_COLOR: "1", OFFLINE_CHUNK_DELAY_MS: "1" },
      stdio: [dialogue === null ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let next = 0;
    const asked = [];
    child.stdout.on("data", (d) => {
      stdout += d;
      while (dialogue && next < dialogue.length && stdout.endsWith(dialogue[next][0])) {
        asked.push(dialogue[next][0]);
        child.stdin.write(`${dialogue[next][1]}\n`);
        next++;
      }
    });
    child.stderr.on("data", (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill(); reject(new Error(`cli timed out\n${stdout}\n${stderr}`)); }, 12_000);
    child.on("close", (code) => { clearTimeout(timer); resolve({ code, stdout, stderr, asked }); });
  });
}

function scratch() {
  const dir = mkdtempSync(join(tmpdir(), "cli-approvals-"));
  for (const name of ["a.txt", "b.txt", "c.txt"]) writeFileSync(join(dir, name), `${name}\n`);
  return dir;
}

test("issue 30: examples/cli.mjs --with-delete asks y/n for each delete_file call; y runs it, n asks for a reason the model sees", T, async () => {
  const dir = scratch();
  try {
    const dialogue = [
      ['Approve delete_file({"path":"a.txt"})? [y/n] ', "maybe"],
      ["Please answer y or n: ", "y"],
      ['Approve delete_file({"path":"b.txt"})? [y/n] ', "n"],
      ["Reason (optional, Enter for none): ", "keep b"],
      ['Approve delete_file({"path":"c.txt"})? [y/n] ', "no"],
      ["Reason (optional, Enter for none): ", ""],
    ];
    const { code, stdout, stderr, asked } = await runCliAnswering(dir, "delete a.txt, b.txt and c.txt", dialogue);
    assert.equal(code, 0, `exit code 0\n${stdout}\n${stderr}`);
    assert.equal(stderr, "");
    assert.deepEqual(asked, dialogue.map(([q]) => q), "every question was asked, in order");
    assert.deepEqual(readdirSync(dir).sort(), ["b.txt", "c.txt"], "only the approved call deleted its file");
    const lines = stdout.split("\n").map((l) => l.replace(/^\[ *\d+ ms\] /, ""));
    // The run paused with all three calls waiting; none ran before its answer.
    const paused = lines.filter((l) => l.startsWith("⏸"));
    assert.deepEqual(paused, ["a.txt", "b.txt", "c.txt"].map((f) => `⏸ waits for approval delete_file({"path":"${f}"})`));
    assert.ok(stdout.indexOf("⏸ waits for approval") < stdout.indexOf("Approve delete_file"));
    // The dialogue as it reads on the terminal (piped answers are echoed).
    assert.ok(stdout.includes(
      'Approve delete_file({"path":"a.txt"})? [y/n] maybe\n' +
      "Please answer y or n: y\n" +
      'Approve delete_file({"path":"b.txt"})? [y/n] n\n' +
      "Reason (optional, Enter for none): keep b\n" +
      'Approve delete_file({"path":"c.txt"})? [y/n] no\n' +
      "Reason (optional, Enter for none): \n"), stdout);
    // Then the last decision continues the run: the denials are results, the approved call runs once.
    const after = lines.slice(lines.indexOf("Reason (optional, Enter for none): "));
    assert.deepEqual(after.filter((l) => /^(✖|▶|✔)/.test(l)).map((l) => l.replace(/ in \d+ ms/, "")), [
      '✖ denied delete_file: Tool call "call_2" was denied: keep b',
      '✖ denied delete_file: Tool call "call_3" was denied',
      '▶ running delete_file({"path":"a.txt"})',
      "✔ done delete_file · 1 line, 13 chars",
    ]);
    assert.equal(lines.filter((l) => l.startsWith("▶")).length, 1, "nothing ran before the approval");
    // The model's next turn saw the three results, in request order.
    assert.ok(stdout.includes("Here is what the tools returned:\n\n" +
      "- Deleted `a.txt`\n" +
      '- I did not delete `b.txt`: Tool call "call_2" was denied: keep b\n' +
      '- I did not delete `c.txt`: Tool call "call_3" was denied\n'), stdout);
    assert.match(stdout, /— [\d.]+ s · 2 requests · 3 tool calls · /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("issue 30: examples/cli.mjs denies a waiting call when stdin closes unanswered; without --with-delete there is no delete_file", T, async () => {
  const dir = scratch();
  try {
    const closed = await runCliAnswering(dir, "delete a.txt", null);
    assert.equal(closed.code, 0, closed.stdout + closed.stderr);
    assert.ok(closed.stdout.includes('Approve delete_file({"path":"a.txt"})? [y/n] \nno answer (stdin closed): denying call_1\n'), closed.stdout);
    assert.match(closed.stdout, /✖ denied delete_file: Tool call "call_1" was denied: no answer on the terminal\n/);
    assert.ok(closed.stdout.includes('- I did not delete `a.txt`: Tool call "call_1" was denied: no answer on the terminal\n'));
    assert.ok(existsSync(join(dir, "a.txt")));

    const readOnly = await runCliAnswering(dir, "delete a.txt", null, []);
    assert.equal(readOnly.code, 0, readOnly.stdout + readOnly.stderr);
    assert.ok(readOnly.stdout.includes("I would need `delete_file`, which this session does not provide.\n"), readOnly.stdout);
    assert.ok(!readOnly.stdout.includes("Approve "));
    assert.deepEqual(readdirSync(dir).sort(), ["a.txt", "b.txt", "c.txt"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("issue 44: examples/cli.mjs --record saves the run as a cassette; --replay runs it again without the model, or names the drift", T, async () => {
  const dir = mkdtempSync(join(tmpdir(), "cli-cassette-"));
  try {
    const file = join(dir, "session.json");
    const normal = (text) => text.replace(/\[ *\d+ ms\]/g, "").replace(/\d+ ms/g, "N ms").replace(/[\d.]+ s ·/, "N s ·").replace(/^cassette: .*$/m, "");
    const recorded = await runCli("list the files, then read the README", {}, ["--record", file]);
    assert.equal(recorded.code, 0, recorded.stdout + recorded.stderr);
    assert.match(recorded.stdout, new RegExp(`cassette: saved to ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    const doc = JSON.parse((await import("node:fs")).readFileSync(file, "utf8"));
    assert.deepEqual(doc.interactions.map((i) => i.type), ["stream", "tool", "tool", "stream"]);

    const replayed = await runCli("list the files, then read the README", {}, ["--replay", file]);
    assert.equal(replayed.code, 0, replayed.stdout + replayed.stderr);
    assert.match(replayed.stdout, /cassette: replayed /);
    assert.equal(normal(replayed.stdout), normal(recorded.stdout), "the replay shows the recorded run");

    const drifted = await runCli("list the files", {}, ["--replay", file]);
    assert.equal(drifted.code, 1);
    assert.match(drifted.stdout, /cassette: stream request 1 \(offline\/offline-demo\) does not match the recording \(interactions\[0\]\): it differs at messages\[1\]\.content\[0\]\.text: recorded "list the files, then read the README", got "list the files"/);

    const missing = await runCli("hi", {}, ["--replay", join(dir, "none.json")]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^cli: agent-loop-wasm\/testing: cannot read the cassette .*none\.json: ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
