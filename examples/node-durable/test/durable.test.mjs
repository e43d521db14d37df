// The server as its README runs it (`npm start`, on a free 127.0.0.1 port, the scripted model), SIGKILLed while a tool
// is in flight and while calls wait for approval, and started again on the same SQLite file: the interrupted run goes
// on by itself to the transcript of an uninterrupted one, the pause is listed again and the decisions POSTed after the
// restart continue it, an approved charge runs once (the ledger in SQLite and the effects server agree), a denied one
// never, and a charge killed in flight is reported as interrupted, not made again.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { effectsServer } from "./effects-server.mjs";

const EXAMPLE = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = randomBytes(16).toString("hex");
const DIR = mkdtempSync(join(tmpdir(), "node-durable-"));
const DB_FILE = join(DIR, "agents.sqlite");

let effects;
let port;
/** The server process now running (one at a time). */
let server;

before(async () => {
  effects = await effectsServer();
  port = await freePort();
});

after(async () => {
  if (server && server.exitCode === null && server.signalCode === null) await kill("SIGKILL");
  await effects?.close();
  rmSync(DIR, { recursive: true, force: true });
});

async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * `npm start` in the example with the test's token, port, database file and effects server, in its own process group
 * (npm, its shell and node) so that a kill reaches all of them; resolves when the server listens.
 */
async function start() {
  const env = { ...process.env, AUTH_TOKEN: TOKEN, PORT: String(port), DB_FILE, EFFECTS_URL: effects.url, COMPACT_AFTER: "4", OPENAI_API_KEY: "" };
  const child = spawn("npm", ["start"], { cwd: EXAMPLE, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.output = "";
  child.stdout.on("data", (d) => (child.output += d));
  child.stderr.on("data", (d) => (child.output += d));
  child.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  server = child;
  await waitFor(() => child.output.includes(`agents on http://127.0.0.1:${port}/agents`) || child.exitCode !== null, "the server to listen");
  assert.equal(child.exitCode, null, `the server exited:\n${child.output}`);
  return child;
}

/** Sends `signal` to the server's process group (its PID is the group's id) and waits for it to end. */
async function kill(signal) {
  process.kill(-server.pid, signal);
  return server.exited;
}

async function call(method, path, body, token = TOKEN) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const get = async (id) => (await call("GET", `/agents/${id}`)).body;

/** Polls until `check()` is true; fails after 30 s (a hang, not a speed bound). */
async function waitFor(check, what) {
  for (const deadline = Date.now() + 30_000; !(await check()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until the agent's run ended with a final answer; returns its state. */
async function finished(id) {
  let state;
  await waitFor(async () => {
    state = await get(id);
    const last = state.messages.at(-1);
    return !state.isStreaming && last.role === "assistant" && last.stopReason === "stop";
  }, `agent ${id} to finish`);
  return state;
}

/** Waits until the agent's run ended paused with `n` calls waiting; returns its state. */
async function paused(id, n) {
  let state;
  await waitFor(async () => {
    state = await get(id);
    return !state.isStreaming && state.pendingApprovals.length === n;
  }, `agent ${id} to pause`);
  return state;
}

/** The transcript without times and durations (they differ between runs). */
const transcript = (state) => JSON.parse(JSON.stringify(state.messages, (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value)));

/** Rows of the SQLite file as it is now (read by this process, not through the server). */
function query(sql, ...params) {
  const db = new DatabaseSync(DB_FILE, { readOnly: true });
  try {
    return db.prepare(sql).all(...params);
  } finally {
    db.close();
  }
}
const storedCheckpoints = (id) => query("SELECT body FROM checkpoints WHERE agent_id = ? ORDER BY seq", id).map((r) => JSON.parse(r.body));

const RUN_PROMPT = "Charge Ada 5 euros, then message Ada: your order shipped";
const PAUSE_PROMPT = "Charge Ada 25 euros and Bob 40 euros, then message Ada: thanks";
const DECISIONS = [
  ["call_1", { approved: true, arguments: { customer: "Ada", cents: 2000 } }, 200, { decided: "call_1", approved: true, running: false, waiting: ["call_2"] }],
  ["call_2", { approved: false, reason: "over budget" }, 202, { decided: "call_2", approved: false, running: true, waiting: [] }],
];
const reference = {};

test("every route needs the bearer token", async () => {
  await start();
  for (const [method, path] of [["GET", "/agents"], ["GET", "/agents/ada"], ["POST", "/agents/ada/prompt"], ["POST", "/agents/ada/approvals/call_1"], ["GET", "/agents/ada/events"]]) {
    for (const token of [null, "wrong"]) {
      const answer = await call(method, path, method === "POST" ? { text: "Charge Ada 5 euros" } : undefined, token);
      assert.deepEqual(answer, { status: 401, body: { error: "missing or wrong bearer token (Authorization: Bearer $AUTH_TOKEN)" } }, `${method} ${path}`);
    }
  }
  assert.deepEqual(await call("GET", "/agents"), { status: 200, body: { agents: [] } });
  assert.deepEqual(await call("GET", "/agents/ada"), { status: 404, body: { error: 'no agent "ada"' } });
  assert.equal(effects.requests.length, 0, "nothing reached the tools");
});

test("uninterrupted runs: two calls at once; a pause decided (an edited amount approved, a charge denied)", async () => {
  assert.deepEqual(await call("POST", "/agents/ref-run/prompt", { text: RUN_PROMPT }), { status: 202, body: { accepted: true } });
  reference.run = transcript(await finished("ref-run"));
  assert.deepEqual(reference.run.slice(1), [
    { role: "user", content: [{ type: "text", text: RUN_PROMPT }] },
    {
      role: "assistant",
      content: [
        { type: "toolCall", id: "call_1", name: "charge_card", arguments: { customer: "Ada", cents: 500 } },
        { type: "toolCall", id: "call_2", name: "send_message", arguments: { to: "Ada", text: "your order shipped" } },
      ],
      api: "scripted",
      provider: "scripted",
      model: "scripted",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "toolUse",
      thinkingLevel: "off",
    },
    { role: "toolResult", toolCallId: "call_1", toolName: "charge_card", content: [{ type: "text", text: "Charged Ada 5.00 EUR" }], details: {}, isError: false },
    { role: "toolResult", toolCallId: "call_2", toolName: "send_message", content: [{ type: "text", text: 'Sent to Ada: "your order shipped"' }], details: {}, isError: false },
    {
      role: "assistant",
      content: [{ type: "text", text: 'Here is what happened:\n- charge_card: Charged Ada 5.00 EUR\n- send_message: Sent to Ada: "your order shipped"' }],
      api: "scripted",
      provider: "scripted",
      model: "scripted",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop",
      thinkingLevel: "off",
    },
  ]);

  await call("POST", "/agents/ref-pause/prompt", { text: PAUSE_PROMPT });
  const waiting = await paused("ref-pause", 2);
  assert.deepEqual(waiting.pendingApprovals, [
    { toolCallId: "call_1", toolName: "charge_card", args: { customer: "Ada", cents: 2500 } },
    { toolCallId: "call_2", toolName: "charge_card", args: { customer: "Bob", cents: 4000 } },
  ]);
  // The call of the batch that needs no approval ran before the pause.
  assert.deepEqual(waiting.ledger, [{ toolCallId: "call_3", tool: "send_message", args: { to: "Ada", text: "thanks" }, times: 1 }]);
  assert.deepEqual(await call("POST", "/agents/ref-pause/prompt", { text: "Charge Ada 5 euros" }), {
    status: 409,
    body: { error: "tool calls wait for approval (call_1, call_2): POST /agents/:id/approvals/:toolCallId for each first" },
  });
  for (const [id, decision, status, body] of DECISIONS) {
    assert.deepEqual(await call("POST", `/agents/ref-pause/approvals/${id}`, decision), { status, body });
  }
  reference.pause = transcript(await finished("ref-pause"));
  assert.deepEqual(reference.pause.at(-1).content, [
    {
      type: "text",
      text: 'Here is what happened:\n- charge_card: Charged Ada 20.00 EUR\n- charge_card failed: Tool call "call_2" was denied: over budget\n- send_message: Sent to Ada: "thanks"',
    },
  ]);
});

test("SIGKILL inside a tool: the restarted server resumes the run by itself, to the transcript of the uninterrupted one", async () => {
  const held = effects.hold("/messages");
  await call("POST", "/agents/run/prompt", { text: RUN_PROMPT });
  const message = await held;
  assert.deepEqual(message, { path: "/messages", key: "run/call_2", body: { to: "Ada", text: "your order shipped" } });
  // The charge beside it ended and its end is in the file: it must not run again.
  await waitFor(() => storedCheckpoints("run").some((c) => c.ended?.some((e) => e.toolCallId === "call_1")), "the charge's end to be stored");
  assert.deepEqual(await kill("SIGKILL"), { code: null, signal: "SIGKILL" });

  const restarted = await start();
  const state = await finished("run");
  assert.match(restarted.output, /\nresumed 1 interrupted run\(s\): run\n/);
  assert.deepEqual(transcript(state), reference.run);
  // The message was sent again under the same idempotency key (at least once); the charge was made once.
  assert.deepEqual(effects.withKey("run/call_2").length, 2);
  assert.deepEqual(effects.withKey("run/call_1").map((r) => r.body), [{ customer: "Ada", cents: 500 }]);
  assert.deepEqual(state.ledger, [
    { toolCallId: "call_1", tool: "charge_card", args: { customer: "Ada", cents: 500 }, times: 1 },
    { toolCallId: "call_2", tool: "send_message", args: { to: "Ada", text: "your order shipped" }, times: 1 },
  ]);
});

test("SIGKILL while calls wait for approval: the pause is listed again, and the decisions POSTed after the restart continue it", async () => {
  await call("POST", "/agents/pause/prompt", { text: PAUSE_PROMPT });
  const before = await paused("pause", 2);
  await call("POST", "/agents/inflight/prompt", { text: "Charge Ada 30 euros" });
  await paused("inflight", 1);
  // Idle, the agent's rows were folded into a snapshot (COMPACT_AFTER=4): the restart restores the pause from it.
  const snapshot = () => query("SELECT body FROM snapshots WHERE agent_id = ?", "pause").map((r) => JSON.parse(r.body));
  await waitFor(() => snapshot().length === 1, "the paused agent's snapshot");
  assert.deepEqual(snapshot()[0].approvals.requests, before.pendingApprovals);
  assert.deepEqual(await kill("SIGKILL"), { code: null, signal: "SIGKILL" });

  const restarted = await start();
  assert.doesNotMatch(restarted.output, /resumed/, "a paused agent has no run to resume");
  const after = await get("pause");
  assert.deepEqual(after.pendingApprovals, before.pendingApprovals);
  assert.deepEqual(transcript(after), transcript(before));
  assert.equal(after.isStreaming, false);
  assert.deepEqual(effects.withKey("pause/call_1"), [], "no charge before its approval");

  // An invalid edit is refused with the validator's text and decides nothing.
  const invalid = await call("POST", "/agents/pause/approvals/call_1", { approved: true, arguments: { customer: "Ada", cents: 0 } });
  assert.equal(invalid.status, 400);
  assert.match(invalid.body.error, /^"arguments" of tool call "call_1" are invalid: Validation failed for tool "charge_card"/);
  assert.deepEqual(await call("POST", "/agents/pause/approvals/call_9", { approved: true }), { status: 404, body: { error: 'no tool call "call_9" is waiting for approval' } });
  assert.deepEqual(await call("POST", "/agents/pause/approvals/call_1", { approved: "yes" }), {
    status: 400,
    body: { error: 'the body must be JSON {"approved": true|false, "reason"?: string, "arguments"?: object}' },
  });
  for (const [id, decision, status, body] of DECISIONS) {
    assert.deepEqual(await call("POST", `/agents/pause/approvals/${id}`, decision), { status, body });
  }
  const state = await finished("pause");
  assert.deepEqual(transcript(state), reference.pause);
  assert.deepEqual(await call("POST", "/agents/pause/approvals/call_1", { approved: false }), { status: 409, body: { error: 'tool call "call_1" was already approved' } });
  assert.deepEqual(await call("POST", "/agents/pause/approvals/call_2", { approved: true }), { status: 409, body: { error: 'tool call "call_2" was already denied' } });
  // The approved charge ran once, with the edited amount; the denied one never.
  assert.deepEqual(effects.withKey("pause/call_1").map((r) => r.body), [{ customer: "Ada", cents: 2000 }]);
  assert.deepEqual(effects.withKey("pause/call_2"), []);
  assert.deepEqual(state.ledger, [
    { toolCallId: "call_3", tool: "send_message", args: { to: "Ada", text: "thanks" }, times: 1 },
    { toolCallId: "call_1", tool: "charge_card", args: { customer: "Ada", cents: 2000 }, times: 1 },
  ]);
});

test("SIGKILL while an approved charge is in flight: reported to the model as interrupted, not made again", async () => {
  const held = effects.hold("/charges");
  assert.deepEqual(await call("POST", "/agents/inflight/approvals/call_1", { approved: true }), {
    status: 202,
    body: { decided: "call_1", approved: true, running: true, waiting: [] },
  });
  assert.deepEqual(await held, { path: "/charges", key: "inflight/call_1", body: { customer: "Ada", cents: 3000 } });
  assert.deepEqual(await kill("SIGKILL"), { code: null, signal: "SIGKILL" });

  const restarted = await start();
  const state = await finished("inflight");
  assert.match(restarted.output, /\nresumed 1 interrupted run\(s\): inflight\n/);
  assert.deepEqual(
    transcript(state).slice(-2).map((m) => [m.role, m.content, m.isError]),
    [
      ["toolResult", [{ type: "text", text: 'Tool call "call_1" was interrupted and not retried' }], true],
      ["assistant", [{ type: "text", text: 'Here is what happened:\n- charge_card failed: Tool call "call_1" was interrupted and not retried' }], undefined],
    ],
  );
  assert.equal(effects.withKey("inflight/call_1").length, 1, "the charge reached the payment service once");
  assert.deepEqual(state.ledger, [], "and never completed here");
  assert.deepEqual(await call("POST", "/agents/inflight/approvals/call_1", { approved: true }), { status: 409, body: { error: 'tool call "call_1" was already approved' } });
});

test("events over SSE: the state first with ?after=0, then a live run; SIGTERM stops the server", async () => {
  const { agents } = (await call("GET", "/agents")).body;
  assert.deepEqual(agents, ["inflight", "pause", "ref-pause", "ref-run", "run"].map((id) => ({ id, isStreaming: false, pendingApprovals: 0 })));
  const frames = sseReader("/agents/run/events?after=0");
  const sync = await frames.next();
  assert.equal(sync.event, "agent_sync");
  assert.deepEqual(transcript({ messages: sync.data.messages }), reference.run);

  await call("POST", "/agents/run/prompt", { text: "Message Bob: hello" });
  const types = [];
  for (let frame = await frames.next(); ; frame = await frames.next()) {
    if (types.at(-1) !== frame.event) types.push(frame.event); // message_update frames collapsed
    if (frame.event === "agent_end") break;
  }
  frames.close();
  // prettier-ignore
  assert.deepEqual(types, [
    "agent_start", "turn_start", "message_start", "message_end", "message_start", "message_update", "message_end",
    "tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
    "turn_start", "message_start", "message_update", "message_end", "turn_end", "agent_end",
  ]);
  assert.deepEqual(effects.withKey("run/call_3").map((r) => r.body), [{ to: "Bob", text: "hello" }]);

  const stopped = server;
  const pid = Number(/\(pid (\d+);/.exec(stopped.output)[1]);
  process.kill(pid, "SIGTERM");
  assert.deepEqual(await stopped.exited, { code: 0, signal: null });
});

/** Reads Server-Sent Events frames ({ id, event, data }) from a GET; comment lines are skipped. */
function sseReader(path) {
  const controller = new AbortController();
  const body = fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: controller.signal }).then((r) => {
    assert.equal(r.headers.get("content-type"), "text/event-stream");
    return r.body.pipeThrough(new TextDecoderStream()).getReader();
  });
  let buffer = "";
  return {
    async next() {
      const reader = await body;
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const lines = buffer.slice(0, end).split("\n").filter((l) => !l.startsWith(":"));
          buffer = buffer.slice(end + 2);
          if (!lines.length) continue;
          const field = (name) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
          return { id: field("id"), event: field("event"), data: JSON.parse(field("data")) };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the event stream ended");
        buffer += value;
      }
    },
    close: () => controller.abort(),
  };
}
