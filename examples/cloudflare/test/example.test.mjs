// `npm test`: the example as the README runs it. `npm run dev` is started (workerd on a free 127.0.0.1 port, SQLite on
// disk in a temporary folder) and ended by its process group's id; every request is plain HTTP. Checks: every route
// refuses a request without the bearer token or with a wrong one (401, nothing reaches an agent); a whole offline
// conversation (the scripted model) with approvals, one approved and charged once, one denied and never charged,
// both paused across a SIGKILL of the server; the chat routes; CORS off by default and opened by CORS_ORIGINS; the
// configuration errors that stop it serving; a real model configured by MODEL_* with its key in .dev.vars, the
// tools' effects at EFFECTS_URL; and `npm run check-deploy` (wrangler deploy --dry-run).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { VARIABLES } from "../serve.mjs";

const EXAMPLE = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "test-token-6f1d2c3b4a5e6f708192";
const WRONG = "test-token-6f1d2c3b4a5e6f708193";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const scratch = mkdtempSync(join(tmpdir(), "agent-loop-wasm-cloudflare-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

// ---- npm run dev

async function freePort() {
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  return port;
}

/**
 * `npm run dev` with `env` (the worker's variables; none of the caller's leak in), its storage in `storage` and its
 * --dev-vars file `devVars` (absent unless written). Resolves when the server answers HTTP.
 */
async function startDev({ env = {}, storage = mkdtempSync(join(scratch, "storage-")), devVars = join(scratch, `absent-${Math.random()}`) } = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.includes(k) && k !== "PORT"));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const args = ["run", "dev", "--", "--port", String(port), "--storage", storage, "--dev-vars", devVars];
    // Its own process group (npm, node serve.mjs, workerd): ended together by the group's id, the npm process's PID.
    const child = spawn("npm", args, { cwd: EXAMPLE, env: { ...clean, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    child.stdout.on("data", (d) => (log += d));
    child.stderr.on("data", (d) => (log += d));
    const dev = { child, base: `http://127.0.0.1:${port}`, storage, devVars, log: () => log };
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) {
        if (attempt < 5 && log.includes("Address already in use")) break;
        throw new Error(`npm run dev exited ${child.exitCode}: ${log}`);
      }
      try {
        await fetch(dev.base, { signal: AbortSignal.timeout(2000) });
        return dev;
      } catch {
        if (Date.now() > deadline) {
          await stopDev(dev);
          throw new Error(`npm run dev did not answer: ${log}`);
        }
        await sleep(50);
      }
    }
  }
}

/** SIGKILL to the process group (by its id), resolved when no process of it is left. */
async function stopDev(dev) {
  try {
    process.kill(-dev.child.pid, "SIGKILL");
  } catch {
    return; // the group is gone already
  }
  for (;;) {
    try {
      process.kill(-dev.child.pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
}

// ---- HTTP

const auth = (token = TOKEN) => ({ authorization: `Bearer ${token}` });
async function call(dev, method, path, { body, headers = auth() } = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  const response = await fetch(`${dev.base}${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}
const state = async (dev, name) => (await call(dev, "GET", `/agents/${name}`)).body;
const prompt = (dev, name, text) => call(dev, "POST", `/agents/${name}/prompt`, { body: { text } });

async function idle(dev, name) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = await state(dev, name);
    if (!s.isStreaming) return s;
    if (Date.now() > deadline) throw new Error(`${name} still running`);
    await sleep(25);
  }
}

/** role and what matters of each message (no timestamps, usage or durations). */
function shape(messages) {
  const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join(""));
  return messages.map((m) => {
    if (m.role === "assistant") {
      const calls = m.content.filter((b) => b.type === "toolCall").map((b) => ` ${b.id} ${b.name}(${JSON.stringify(b.arguments)})`);
      return `assistant ${JSON.stringify(text(m))}${calls.join("")}`;
    }
    if (m.role === "toolResult") return `result ${m.toolCallId}${m.isError ? " error" : ""} ${text(m)}`;
    return `${m.role} ${text(m)}`;
  });
}

const NOTE =
  "I am the offline scripted model of this example, not a language model: I understand “Charge Ada 25 euros” or " +
  "“Record that Ada paid” (a charge above the approval limit waits for your approval). Set MODEL_API, MODEL_ID and " +
  "MODEL_API_KEY for a real model.";

// ---- the tests

test("npm run check-deploy: wrangler deploy --dry-run bundles the worker with the package's workerd entry and its wasm module", () => {
  const outdir = mkdtempSync(join(scratch, "deploy-"));
  const out = execFileSync("npm", ["run", "--silent", "check-deploy", "--", "--outdir", outdir], { cwd: EXAMPLE, encoding: "utf8" });
  const wasm = readdirSync(outdir).filter((f) => f.endsWith(".wasm")).sort();
  assert.equal(wasm.length, 1, `the bundle's wasm modules: ${wasm}`);
  assert.match(wasm[0], /^[0-9a-f]{40}-agent_loop_wasm_bg\.wasm$/);
  assert.match(out, /check-deploy: wrangler \d+\.\d+\.\d+ bundled worker\.js \(\d+ KiB\) with agent-loop-wasm's workerd entry and its wasm module agent_loop_wasm_bg\.wasm \(\d+ KiB\), the package's bytes/);
  const worker = readFileSync(join(outdir, "worker.js"), "utf8");
  const packageWasm = createRequire(join(EXAMPLE, "package.json")).resolve("agent-loop-wasm/agent_loop_wasm_bg.wasm");
  assert.ok(readFileSync(join(outdir, wasm[0])).equals(readFileSync(packageWasm)), "the bundle's agent_loop_wasm_bg.wasm is the package's");
  assert.match(worker, new RegExp(`^import \\w+ from "\\./${wasm[0]}";$`, "m"));
  // The built-in providers (issue 43) are JS: wrangler bundles them into the worker (the dynamic import inlined).
  assert.match(worker, /"https:\/\/api\.anthropic\.com"/);
});

test("every route answers 401 without the token, with a wrong one, or with it in the URL; nothing reaches an agent", { timeout: 120_000 }, async (t) => {
  const dev = await startDev({ env: { AUTH_TOKEN: TOKEN } });
  t.after(() => stopDev(dev));
  const routes = [
    ["POST", "/agents/ada/prompt", { text: "Charge Ada 25 euros" }],
    ["POST", "/agents/ada/steer", { text: "x" }],
    ["POST", "/agents/ada/follow-up", { text: "x" }],
    ["POST", "/agents/ada/abort"],
    ["GET", "/agents/ada"],
    ["GET", "/agents/ada/messages"],
    ["GET", "/agents/ada/chats/ada"],
    ["GET", "/agents/ada/events"],
    ["GET", "/agents/ada/events?after=0"],
    ["POST", "/agents/ada/chat", { messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Charge Ada 25 euros" }] }] }],
    ["GET", "/agents/ada/chat/stream"],
    ["GET", "/agents/ada/chat/ada/stream"],
    ["POST", "/agents/ada/approvals/call_1", { approved: true }],
    ["GET", "/"],
    ["GET", "/no/such/route"],
  ];
  const missing = { status: 401, challenge: 'Bearer realm="agents"', body: { error: "this route needs an Authorization: Bearer <AUTH_TOKEN> header" } };
  const invalid = { status: 401, challenge: 'Bearer realm="agents", error="invalid_token"', body: { error: "the bearer token is not AUTH_TOKEN" } };
  const cases = [
    [{}, missing, ""],
    [auth(WRONG), invalid, ""],
    [auth("short"), invalid, ""],
    [{ authorization: `Basic ${btoa(`user:${TOKEN}`)}` }, missing, ""],
    [{ authorization: TOKEN }, missing, ""],
    [{}, missing, `${"?"}token=${TOKEN}`],
  ];
  for (const [method, path, body] of routes) {
    for (const [headers, want, query] of cases) {
      const url = query ? `${path}${path.includes("?") ? "&" : "?"}${query.slice(1)}` : path;
      const r = await call(dev, method, url, { body, headers });
      const what = `${method} ${url} with ${JSON.stringify(headers)}`;
      assert.equal(r.status, want.status, what);
      assert.equal(r.headers.get("www-authenticate"), want.challenge, what);
      assert.deepEqual(r.body, want.body, what);
    }
  }
  // None of it reached the agent: no prompt, no decision; a lower-case scheme is the same scheme (RFC 9110).
  const s = (await call(dev, "GET", "/agents/ada", { headers: { authorization: `bearer ${TOKEN}` } })).body;
  assert.deepEqual([shape(s.messages), s.pendingApprovals, s.charges], [["system "], [], []]);
  const notFound = await call(dev, "GET", "/no/such/route");
  assert.deepEqual([notFound.status, notFound.body], [404, { error: "not found" }]);
});

test("an offline conversation: a charge above the limit waits across a SIGKILL, approved it is charged once, denied never; effects, the note, /messages, events, chat", { timeout: 180_000 }, async (t) => {
  let dev = await startDev({ env: { AUTH_TOKEN: TOKEN } });
  t.after(() => stopDev(dev));
  for (const [name, text] of [
    ["ada", "Charge Ada 25 euros"],
    ["bob", "Charge Bob 30 euros"],
    ["cat", "Charge Cat 5 euros"],
    ["dan", "Record that Dan paid."],
    ["eve", "What is the weather like?"],
  ]) {
    const r = await prompt(dev, name, text);
    assert.deepEqual([r.status, r.body], [202, { accepted: true }], name);
  }
  const paused = await idle(dev, "ada");
  assert.deepEqual(paused.pendingApprovals, [{ toolCallId: "call_1", toolName: "charge_card", args: { cents: 2500 } }]);
  assert.deepEqual(shape(paused.messages), ["system ", "user Charge Ada 25 euros", 'assistant "I will charge 2500 cents." call_1 charge_card({"cents":2500})']);
  assert.deepEqual(paused.charges, []);
  assert.deepEqual((await idle(dev, "bob")).pendingApprovals, [{ toolCallId: "call_1", toolName: "charge_card", args: { cents: 3000 } }]);
  const cat = await idle(dev, "cat");
  assert.deepEqual(shape(cat.messages).slice(1), [
    "user Charge Cat 5 euros",
    'assistant "I will charge 500 cents." call_1 charge_card({"cents":500})',
    "result call_1 charged 500 cents",
    'assistant "Here is what happened:\\n- charge_card: charged 500 cents"',
  ]);
  assert.deepEqual(cat.charges, [{ toolCallId: "call_1", cents: 500, times: 1 }]);
  const dan = await idle(dev, "dan");
  assert.deepEqual(shape(dan.messages).slice(1), [
    "user Record that Dan paid.",
    'assistant "I will record \\"Dan paid\\"." call_1 record_effect({"key":"Dan paid"})',
    'result call_1 recorded "Dan paid"',
    'assistant "Here is what happened:\\n- record_effect: recorded \\"Dan paid\\""',
  ]);
  assert.deepEqual(dan.effects, [{ toolCallId: "call_1", key: "Dan paid", times: 1 }]);
  assert.deepEqual(shape((await idle(dev, "eve")).messages).slice(1), ["user What is the weather like?", `assistant ${JSON.stringify(NOTE)}`]);
  const busy = await prompt(dev, "ada", "Charge Ada 1 euro");
  assert.deepEqual([busy.status, busy.body], [409, { error: "tool calls wait for approval (call_1): POST /agents/:id/approvals/:toolCallId for each first" }]);

  // SIGKILL and a restart on the same storage: the pauses are in the checkpoint rows.
  await stopDev(dev);
  dev = await startDev({ env: { AUTH_TOKEN: TOKEN }, storage: dev.storage });
  assert.deepEqual((await state(dev, "ada")).pendingApprovals, paused.pendingApprovals);
  const approved = await call(dev, "POST", "/agents/ada/approvals/call_1", { body: { approved: true } });
  assert.deepEqual([approved.status, approved.body], [202, { decided: "call_1", approved: true, running: true, waiting: [] }]);
  const denied = await call(dev, "POST", "/agents/bob/approvals/call_1", { body: { approved: false, reason: "over budget" } });
  assert.deepEqual([denied.status, denied.body], [202, { decided: "call_1", approved: false, running: true, waiting: [] }]);
  const ada = await idle(dev, "ada");
  assert.deepEqual(shape(ada.messages).slice(3), ["result call_1 charged 2500 cents", 'assistant "Here is what happened:\\n- charge_card: charged 2500 cents"']);
  assert.deepEqual(ada.charges, [{ toolCallId: "call_1", cents: 2500, times: 1 }]);
  const bob = await idle(dev, "bob");
  assert.deepEqual(shape(bob.messages).slice(3), [
    'result call_1 error Tool call "call_1" was denied: over budget',
    'assistant "Here is what happened:\\n- charge_card was not run: Tool call \\"call_1\\" was denied: over budget"',
  ]);
  assert.deepEqual(bob.charges, []);
  const again = await call(dev, "POST", "/agents/ada/approvals/call_1", { body: { approved: true } });
  assert.deepEqual([again.status, again.body], [409, { error: 'tool call "call_1" was already approved' }]);
  assert.deepEqual((await state(dev, "ada")).charges, [{ toolCallId: "call_1", cents: 2500, times: 1 }], "charged once");

  // The transcript route answers the agent's messages.
  const messages = await call(dev, "GET", "/agents/ada/messages");
  assert.deepEqual([messages.status, messages.body], [200, ada.messages]);
  assert.deepEqual(shape((await call(dev, "GET", "/agents/nobody/messages")).body), ["system "]);

  // Events, with the token in the header: the state first (?after=0).
  const events = await fetch(`${dev.base}/agents/ada/events?after=0`, { headers: auth(), signal: AbortSignal.timeout(1000) });
  assert.equal(events.status, 200);
  assert.equal(events.headers.get("content-type"), "text/event-stream");
  let seen = "";
  try {
    for await (const chunk of events.body) seen += new TextDecoder().decode(chunk);
  } catch {
    // the timeout ends the stream
  }
  assert.match(seen, /^: agent-loop-wasm events\n\n: replay\nid: \d+\nevent: agent_sync\ndata: \{"type":"agent_sync",/);

  // The chat routes (useChat's requests): the approval request streams, the approval posted back charges once.
  const chat = async (messages) => {
    const r = await fetch(`${dev.base}/agents/fay/chat`, { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: JSON.stringify({ id: "fay", messages }) });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    return (await r.text()).split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)));
  };
  const user = { id: "u1", role: "user", parts: [{ type: "text", text: "Charge Fay 25 euros" }] };
  const asked = await chat([user]);
  const types = (chunks) => chunks.map((c) => c.type).filter((type) => !type.endsWith("-delta"));
  assert.deepEqual(types(asked), ["start", "start-step", "text-start", "text-end", "tool-input-start", "tool-input-available", "tool-approval-request", "finish-step", "finish"]);
  assert.deepEqual(asked.find((c) => c.type === "tool-approval-request"), { type: "tool-approval-request", approvalId: "call_1", toolCallId: "call_1" });
  const waiting = {
    id: asked[0].messageId,
    role: "assistant",
    parts: [{ type: "tool-charge_card", toolCallId: "call_1", state: "approval-responded", input: { cents: 2500 }, approval: { id: "call_1", approved: true } }],
  };
  const answered = await chat([user, waiting]);
  assert.deepEqual(types(answered), ["start", "tool-output-available", "start-step", "text-start", "text-end", "finish-step", "finish"]);
  assert.equal(answered.filter((c) => c.type === "text-delta").map((c) => c.delta).join(""), "Here is what happened:\n- charge_card: charged 2500 cents");
  assert.deepEqual((await idle(dev, "fay")).charges, [{ toolCallId: "call_1", cents: 2500, times: 1 }]);
  assert.equal((await fetch(`${dev.base}/agents/fay/chat/fay/stream`, { headers: auth() })).status, 204);

  // The history a reloaded page loads (the react-chat page's `<base>/chats/<chat id>`): the conversation as UI messages,
  // the answer under the id it streamed with, the approved call as the page last saw it.
  const history = await call(dev, "GET", "/agents/fay/chats/fay");
  assert.equal(history.status, 200);
  const [asking, answer] = history.body;
  assert.deepEqual(asking.role === "user" && asking.parts, [{ type: "text", text: "Charge Fay 25 euros" }]);
  assert.equal(answer.id, asked[0].messageId);
  const texts = answer.parts.filter((p) => p.type === "text").map((p) => p.text);
  assert.deepEqual(texts, ["I will charge 2500 cents.", "Here is what happened:\n- charge_card: charged 2500 cents"]);
  const charge = answer.parts.find((p) => p.type === "tool-charge_card");
  assert.deepEqual([charge.state, charge.input, charge.approval], ["output-available", { cents: 2500 }, { id: "call_1", approved: true }]);
  assert.equal(history.body.length, 2);
  assert.deepEqual((await call(dev, "GET", "/agents/nobody/chats/nobody")).body, []);
});

test("CORS: off by default (same origin only); CORS_ORIGINS lets exact origins in, preflight answered, Authorization allowed", { timeout: 120_000 }, async (t) => {
  const page = "http://localhost:5173";
  const preflight = (dev, origin) =>
    fetch(`${dev.base}/agents/ada/chat`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" } });
  const cors = (r) => Object.fromEntries([...r.headers].filter(([k]) => k.startsWith("access-control-") || k === "vary"));

  let dev = await startDev({ env: { AUTH_TOKEN: TOKEN } });
  t.after(() => stopDev(dev));
  let r = await preflight(dev, page);
  assert.equal(r.status, 403);
  assert.deepEqual(cors(r), { vary: "Origin" });
  assert.deepEqual(await r.json(), { error: `origin "${page}" is not in CORS_ORIGINS` });
  r = await fetch(`${dev.base}/agents/ada`, { headers: { ...auth(), origin: page } });
  assert.equal(r.status, 200);
  assert.deepEqual(cors(r), {});
  await stopDev(dev);

  dev = await startDev({ env: { AUTH_TOKEN: TOKEN, CORS_ORIGINS: `${page}, https://chat.example.com` } });
  for (const origin of [page, "https://chat.example.com"]) {
    r = await preflight(dev, origin);
    assert.equal(r.status, 204, origin);
    assert.deepEqual(cors(r), {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, POST",
      "access-control-allow-headers": "Authorization, Content-Type, Last-Event-ID",
      "access-control-max-age": "600",
      vary: "Origin",
    });
  }
  for (const origin of ["https://chat.example.com.evil.example", "http://localhost:5174", "null"]) {
    r = await preflight(dev, origin);
    assert.equal(r.status, 403, origin);
    assert.deepEqual(cors(r), { vary: "Origin" }, origin);
  }
  r = await fetch(`${dev.base}/agents/ada`, { headers: { ...auth(), origin: page } });
  assert.equal(r.status, 200);
  assert.deepEqual(cors(r), { "access-control-allow-origin": page, vary: "Origin" });
  // A 401 is readable by the page too (it can tell the user the token is wrong); a request from elsewhere gets no
  // CORS header, and without the token nothing at all.
  r = await fetch(`${dev.base}/agents/ada`, { headers: { ...auth(WRONG), origin: page } });
  assert.deepEqual([r.status, cors(r)], [401, { "access-control-allow-origin": page, vary: "Origin" }]);
  r = await fetch(`${dev.base}/agents/ada`, { headers: { ...auth(), origin: "https://evil.example" } });
  assert.deepEqual([r.status, cors(r)], [200, { vary: "Origin" }]);
});

test("configuration errors stop it serving: every request answers 500 with the reason; npm run dev writes a random AUTH_TOKEN when none is set", { timeout: 120_000 }, async (t) => {
  const cases = [
    [{ AUTH_TOKEN: "" }, "AUTH_TOKEN is not set: every route needs it (wrangler secret put AUTH_TOKEN; locally AUTH_TOKEN=… in .dev.vars)"],
    [{ AUTH_TOKEN: "0123456789abcde" }, "AUTH_TOKEN is 15 characters long: use at least 16 (e.g. openssl rand -hex 32)"],
    [{ AUTH_TOKEN: TOKEN, CORS_ORIGINS: "https://chat.example.com/app" }, 'CORS_ORIGINS: "https://chat.example.com/app" is not an origin (scheme://host[:port], no path, no "*")'],
    [{ AUTH_TOKEN: TOKEN, CORS_ORIGINS: "*" }, 'CORS_ORIGINS: "*" is not an origin (scheme://host[:port], no path, no "*")'],
    [{ AUTH_TOKEN: TOKEN, MODEL_API: "openai-completions" }, 'MODEL_API is "openai-completions" but MODEL_ID is not set'],
    [{ AUTH_TOKEN: TOKEN, MODEL_API: "ollama" }, 'MODEL_API "ollama" is not one of openai-completions, anthropic-messages, openai-responses, google-generative-ai (unset it for the offline model)'],
    [{ AUTH_TOKEN: TOKEN, CHARGE_APPROVAL_ABOVE_CENTS: "ten euros" }, 'CHARGE_APPROVAL_ABOVE_CENTS "ten euros" is not a number of cents'],
  ];
  for (const [env, error] of cases) {
    const dev = await startDev({ env });
    try {
      for (const [method, path] of [["GET", "/agents/ada"], ["POST", "/agents/ada/prompt"], ["GET", "/"]]) {
        const r = await call(dev, method, path, { body: method === "POST" ? { text: "Charge Ada 25 euros" } : undefined });
        assert.deepEqual([r.status, r.body], [500, { error }], `${JSON.stringify(env)}: ${method} ${path}`);
      }
    } finally {
      await stopDev(dev);
    }
  }

  // No AUTH_TOKEN anywhere: npm run dev appends a random one to the --dev-vars file and keeps it for the next start.
  const devVars = join(scratch, "generated.dev.vars");
  writeFileSync(devVars, "# mine\nMODEL_API_KEY=");
  let dev = await startDev({ devVars });
  t.after(() => stopDev(dev));
  const written = readFileSync(devVars, "utf8");
  assert.match(written, /^# mine\nMODEL_API_KEY=\nAUTH_TOKEN=[0-9a-f]{64}\n$/);
  const generated = /AUTH_TOKEN=(\w+)/.exec(written)[1];
  assert.match(dev.log(), /No AUTH_TOKEN was set: wrote a random one to .*generated\.dev\.vars \(kept for the next start\)\./);
  assert.equal((await call(dev, "GET", "/agents/ada", { headers: auth(generated) })).status, 200);
  await stopDev(dev);
  dev = await startDev({ devVars, storage: dev.storage });
  assert.equal(readFileSync(devVars, "utf8"), written);
  assert.equal((await call(dev, "GET", "/agents/ada", { headers: auth(generated) })).status, 200);
  assert.equal((await call(dev, "GET", "/agents/ada")).status, 401);
});

test("a real model: MODEL_* from the environment, MODEL_API_KEY and AUTH_TOKEN from .dev.vars, the tools' effects POSTed to EFFECTS_URL; a stored agent follows the new model", { timeout: 120_000 }, async (t) => {
  // A scripted OpenAI Chat Completions server and the effects endpoint, on 127.0.0.1.
  const seen = { keys: [], effects: [] };
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw || "{}");
    if (req.url === "/v1/chat/completions") {
      seen.keys.push(req.headers.authorization);
      const answered = body.messages.some((m) => m.role === "tool");
      const delta = answered
        ? { content: `The endpoint said: ${body.messages.find((m) => m.role === "tool").content}` }
        : { tool_calls: [{ index: 0, id: "call_real", type: "function", function: { name: "record_effect", arguments: '{"key":"Ada paid"}' } }] };
      const frames = [
        { id: "r1", object: "chat.completion.chunk", model: body.model, choices: [{ index: 0, delta: { role: "assistant", ...delta }, finish_reason: null }] },
        { id: "r1", object: "chat.completion.chunk", model: body.model, choices: [{ index: 0, delta: {}, finish_reason: answered ? "stop" : "tool_calls" }] },
      ];
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end(frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join("") + "data: [DONE]\n\n");
    }
    if (req.url === "/effect") {
      seen.effects.push([req.headers["idempotency-key"], body.key]);
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(`stored ${body.key}`);
    }
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 120_000; // longer than workerd keeps a pooled connection
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${server.address().port}`;
  const devVars = join(scratch, "real.dev.vars");
  writeFileSync(devVars, `AUTH_TOKEN=${TOKEN}\nMODEL_API_KEY="sk-test-0123"\n`);
  t.after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  // First offline: the agent is stored with the offline model.
  let dev = await startDev({ devVars });
  t.after(() => stopDev(dev));
  assert.equal((await prompt(dev, "ada", "Hello")).status, 202);
  assert.deepEqual(shape((await idle(dev, "ada")).messages).slice(1), ["user Hello", `assistant ${JSON.stringify(NOTE)}`]);
  await stopDev(dev);
  dev = await startDev({ devVars, storage: dev.storage, env: { MODEL_API: "openai-completions", MODEL_ID: "gpt-test", MODEL_URL: `${url}/v1`, EFFECTS_URL: url } });
  assert.match(dev.log(), /http:\/\/127\.0\.0\.1:\d+\/agents\/<id> \(openai-completions gpt-test; storage /);
  assert.equal((await prompt(dev, "ada", "Please record that Ada paid")).status, 202);
  const s = await idle(dev, "ada");
  assert.equal(s.errorMessage, undefined);
  assert.deepEqual(shape(s.messages).slice(3), [
    "user Please record that Ada paid",
    'assistant "" call_real record_effect({"key":"Ada paid"})',
    "result call_real stored Ada paid",
    'assistant "The endpoint said: stored Ada paid"',
  ]);
  assert.deepEqual(seen, { keys: ["Bearer sk-test-0123", "Bearer sk-test-0123"], effects: [["call_real", "Ada paid"]] });
  assert.deepEqual(s.effects, [], "with EFFECTS_URL the endpoint holds the effects, not the object");
  assert.deepEqual(s.messages.filter((m) => m.role === "assistant").map((m) => m.model), ["offline-scripted", "gpt-test", "gpt-test"]);
});
