// K-9.2.4 (issue 43): the built-in providers are a JS module of their own (builtin-providers.js), loaded on the first
// built-in request. When it cannot be loaded, that request ends with the error event the spec names (never a throw),
// the run ends normally, and the next request tries again. On Node (a copy of dist/node without the module, then with
// it: the retry) and in headless Chromium (the web loader's dynamic import fails with a 404).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IS_REFERENCE } from "./impl.mjs";
import { ROOT, runInChromium } from "../runtimes.mjs";

const skip = IS_REFERENCE && "ours only: pi-ai's providers are JS modules of the package";
// playwright-core exits the process on Node < 20 (the Node 18 pass of scripts/test): Chromium runs on Node 20+.
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const chromiumSkip = skip || (NODE_MAJOR < 20 && `playwright-core needs Node 20+ (this is ${process.version}); the Chromium run is covered on Node 20+`);
const PREFIX = "agent-loop-wasm: the built-in providers could not be loaded (";

/** A run on the built-in "openai-completions" provider over a scripted fetch; resolves to what the caller sees. */
const RUN = `
const sse = (o) => "data: " + JSON.stringify(o) + "\\n\\n";
const chunk = (delta, finish) => sse({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });
const body = chunk({ role: "assistant", content: "loaded" }, null) + chunk({}, "stop") + "data: [DONE]\\n\\n";
let fetched = 0;
const fetch = async () => (fetched++, new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }));
const model = { id: "m", name: "m", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9/v1", reasoning: false,
  input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8192, maxTokens: 1024 };
async function run(lib) {
  const stream = lib.agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, { model, convertToLlm: (m) => m, apiKey: "k", fetch });
  const types = [];
  for await (const e of stream) types.push(e.type);
  const last = (await stream.result()).at(-1);
  return { types, stopReason: last.stopReason, text: last.errorMessage ?? last.content.map((b) => b.text).join(""), fetched };
}
`;

const FAILED_EVENTS = ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"];

test("K-9.2.4 Node: without the providers' module a built-in request ends with the named error event; with it back, the next one runs", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-loop-providers-"));
  try {
    cpSync(join(ROOT, "pkg", "dist", "node"), join(dir, "node"), { recursive: true });
    const script = `${RUN}
const { renameSync } = require("node:fs");
const lib = require("./node/index.cjs");
renameSync("./node/builtin-providers.js", "./providers.js");
(async () => {
  const first = await run(lib);
  renameSync("./providers.js", "./node/builtin-providers.js");
  const before = lib.wasmMemoryBytes();
  const second = await run(lib);
  console.log(JSON.stringify({ first, second, before, after: lib.wasmMemoryBytes() }));
})();
`;
    const child = spawnSync(process.execPath, ["-e", script], { cwd: dir, encoding: "utf8", timeout: 30_000 });
    assert.equal(child.status, 0, child.stderr);
    const { first, second, before, after } = JSON.parse(child.stdout);
    assert.equal(after, before, "the providers are JS: loading them adds no wasm memory");
    assert.deepEqual(first.types, FAILED_EVENTS);
    assert.equal(first.stopReason, "error");
    assert.ok(first.text.startsWith(`${PREFIX}Error: Cannot find module`), first.text);
    assert.equal(first.fetched, 0, "nothing was sent");
    assert.deepEqual(second.types.filter((t) => t !== "message_update"), FAILED_EVENTS);
    assert.deepEqual([second.stopReason, second.text, second.fetched], ["stop", "loaded", 1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("P-6.1.2 a providers' module that throws (a bug of its own) ends that request with its error event, never the caller's call", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-loop-providers-"));
  try {
    cpSync(join(ROOT, "pkg", "dist", "node"), join(dir, "node"), { recursive: true });
    const script = `${RUN}
const { writeFileSync } = require("node:fs");
writeFileSync("./node/builtin-providers.js", "exports.streamBuiltin = () => { throw new Error('provider bug'); };");
const lib = require("./node/index.cjs");
(async () => {
  // Called directly (a run would also catch a throwing stream function): a stream, never a throw.
  const stream = lib.streamBuiltin(model, { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "k", fetch });
  const types = [];
  for await (const e of stream) types.push(e.type);
  const message = await stream.result();
  console.log(JSON.stringify({ types, stopReason: message.stopReason, text: message.errorMessage, loop: await run(lib) }));
})();
`;
    const child = spawnSync(process.execPath, ["-e", script], { cwd: dir, encoding: "utf8", timeout: 30_000 });
    assert.equal(child.status, 0, child.stderr);
    const result = JSON.parse(child.stdout);
    assert.deepEqual([result.types, result.stopReason, result.text], [["error"], "error", "provider bug"]);
    assert.deepEqual(result.loop.types, FAILED_EVENTS);
    assert.deepEqual([result.loop.stopReason, result.loop.text, result.loop.fetched], ["error", "provider bug", 0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("K-9.2.4 Chromium: a providers' module the page cannot fetch ends the built-in request with the named error event", { skip: chromiumSkip, timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "agent-loop-providers-"));
  try {
    cpSync(join(ROOT, "pkg", "dist", "web"), join(dir, "dist", "web"), { recursive: true });
    rmSync(join(dir, "dist", "web", "builtin-providers.js"));
    const main = `import * as lib from "agent-loop-wasm";
${RUN}
export default async () => [await run(lib), await run(lib)];
`;
    const { result, problems } = await runInChromium({ pkgDir: dir, files: {}, main });
    for (const attempt of result) {
      assert.deepEqual(attempt.types, FAILED_EVENTS);
      assert.equal(attempt.stopReason, "error");
      assert.ok(attempt.text.startsWith(PREFIX), attempt.text);
    }
    assert.equal(result[1].fetched, 0, "nothing was sent");
    assert.ok(result[0].text.includes("Failed to fetch dynamically imported module") && result[0].text.includes("/builtin-providers.js"), result[0].text);
    // The page saw a 404 for each attempt (the second request tried again), and nothing else went wrong.
    assert.equal(problems.filter((p) => p.includes("404")).length, 2, JSON.stringify(problems));
    assert.deepEqual(problems.filter((p) => !p.includes("404")), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
