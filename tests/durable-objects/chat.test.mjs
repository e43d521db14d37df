// Issue 31: the Durable Objects example's chat endpoints on real workerd (SQLite on local disk), read by the AI SDK's
// own `readUIMessageStream` (ai 7, from tests/ui/node_modules), against a scripted OpenAI-compatible model on
// 127.0.0.1 that streams slowly. `POST /agents/:id/chat` answers the UI message stream; clients drop it at every
// point of the answer and reconnect with `GET /agents/:id/chat/stream` (and the default transport's
// `/agents/:id/chat/:id/stream`): the replay alone rebuilds exactly the uninterrupted answer, under the same message
// id. Then workerd is SIGKILLed (by PID) mid-answer and restarted: the restored objects answer the reconnect with the
// answer rebuilt from their checkpoints (the committed steps, then the model's response requested again from its
// start) and the client ends with the same exact message. Approvals: the client's `approval-responded` part, posted
// back, approves the call and the run streams into the same message.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUTH, killWorkerd, listenForWorkerd, startWorkerd, streamFrames } from "./workerd.mjs";
import { wire } from "../js/provider-server.mjs";

const { readUIMessageStream } = await import(new URL("../ui/node_modules/ai/dist/index.js", import.meta.url));

/** Milliseconds between two SSE frames of the scripted model: the final answer streams for about 2 s. */
const FRAME_MS = 25;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ANSWER = "Done: " + "the quick brown fox jumps over the lazy dog, ".repeat(6) + "end.";

// ---- the scripted model (slow) and the effects/payment endpoint, one loopback server

function script(name, turn) {
  if (name.startsWith("pay")) return turn === 0 ? { calls: [{ id: "c_pay", name: "charge_card", args: { cents: 2500 } }] } : { text: "Charged 25.00." };
  // The call id is the effect's idempotency key: one per agent, so the endpoint counts each agent's effect apart.
  if (turn === 0) return { text: "Noting it first.", calls: [{ id: `c_note_${name}`, name: "record_effect", args: { key: "note" } }] };
  return { text: ANSWER };
}

async function startWorld() {
  // `held`: agents whose final reply holds its last frames until the test releases them (see streamFrames).
  const world = { open: new Set(), effects: new Map(), held: new Map() };
  world.hold = (name) => {
    let release;
    world.held.set(name, new Promise((r) => (release = r)));
    return release;
  };
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = raw ? JSON.parse(raw) : {};
    if (req.url.endsWith("/chat/completions")) {
      const user = body.messages.find((m) => m.role === "user");
      const name = String(typeof user.content === "string" ? user.content : user.content.map((p) => p.text).join("")).replace(/^go /, "");
      const turn = body.messages.filter((m) => m.role === "assistant").length;
      const holdEnd = turn === 1 ? world.held.get(name) : undefined;
      return void (await streamFrames(res, wire["openai-completions"].reply(script(name, turn)), FRAME_MS, world.open, holdEnd));
    }
    if (req.url === "/effect" || req.url === "/charge") {
      const id = `${req.url}:${req.headers["idempotency-key"]}:${body.key ?? body.cents}`;
      world.effects.set(id, (world.effects.get(id) ?? 0) + 1);
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(req.url === "/charge" ? `charged ${body.cents}` : `ok ${body.key}`);
    }
    res.writeHead(404).end();
  });
  Object.assign(world, await listenForWorkerd(server, world.open));
  return world;
}

// ---- the client side: the protocol's SSE frames, read as they come

/** Reads the UI message chunks of `response` (`data: <json>` frames); `stopAfter(chunks)` true drops the connection. */
async function readChunks(response, ac, stopAfter = () => false) {
  const chunks = [];
  let done = false;
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const bytes of response.body) {
      buffer += decoder.decode(bytes, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame === "data: [DONE]") done = true;
        else if (frame.startsWith("data: ")) chunks.push(JSON.parse(frame.slice(6)));
      }
      if (!done && stopAfter(chunks)) {
        ac.abort();
        break;
      }
    }
  } catch (e) {
    if (!ac.signal.aborted) throw e;
  }
  return { chunks, done };
}

/** The UIMessage the AI SDK builds from `chunks` (from scratch, or continuing `message`). */
async function uiMessage(chunks, message) {
  const stream = new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  let last;
  for await (const m of readUIMessageStream({ stream, message, terminateOnError: true, onError: (e) => { throw e; } })) last = m;
  return JSON.parse(JSON.stringify(last));
}

const user = (name) => ({ id: `u-${name}`, role: "user", parts: [{ type: "text", text: `go ${name}` }] });

async function postChat(base, name, messages, stopAfter) {
  const ac = new AbortController();
  const response = await fetch(`${base}/agents/${name}/chat`, {
    method: "POST",
    headers: { ...AUTH, "content-type": "application/json" },
    body: JSON.stringify({ id: name, messages, trigger: "submit-message" }),
    signal: ac.signal,
  });
  assert.equal(response.status, 200, `${name}: ${response.status}`);
  assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
  return readChunks(response, ac, stopAfter);
}

/** The reconnect of `name`; `answered()` runs once its status is in, before its chunks are read. */
async function resume(base, name, path = "chat/stream", answered = () => {}) {
  const ac = new AbortController();
  const response = await fetch(`${base}/agents/${name}/${path}`, { headers: AUTH, signal: ac.signal });
  answered();
  if (response.status === 204) return { status: 204 };
  assert.equal(response.status, 200, name);
  assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
  return { status: 200, ...(await readChunks(response, ac)) };
}

async function idle(base, name) {
  for (let i = 0; i < 400; i++) {
    const s = await (await fetch(`${base}/agents/${name}`, { headers: AUTH })).json();
    if (!s.isStreaming) return s;
    await sleep(25);
  }
  throw new Error(`${name} still running`);
}

/** The finished answer of the agent `name`. */
const expectedParts = (name) => [
  { type: "step-start" },
  { type: "text", text: "Noting it first.", state: "done" },
  { type: "tool-record_effect", toolCallId: `c_note_${name}`, state: "output-available", input: { key: "note" }, output: { content: [{ type: "text", text: "ok note" }], details: { key: "note" } } },
  { type: "step-start" },
  { type: "text", text: ANSWER, state: "done" },
];

test("issue 31: the Durable Objects example's chat endpoints — a chat, reconnects at every point via /chat/stream, a SIGKILL and restart mid-answer, approvals posted back", { timeout: 180_000 }, async (t) => {
  const world = await startWorld();
  const storage = mkdtempSync(join(tmpdir(), "alw-do-chat-"));
  const vars = { MODEL_URL: `${world.url}/v1`, EFFECTS_URL: world.url, MODEL_API: "openai-completions", MODEL_PROVIDER: "openai", MODEL_ID: "scripted", MODEL_API_KEY: "test-key" };
  let workerd = await startWorkerd(storage, vars);
  t.after(async () => {
    if (workerd) await killWorkerd(workerd);
    await world.close();
    rmSync(storage, { recursive: true, force: true });
  });
  const base = () => workerd.base;

  // 1. An uninterrupted chat: the exact UIMessage; then no run: 204 (also for an agent never prompted).
  const whole = await postChat(base(), "ref", [user("ref")]);
  assert.equal(whole.done, true);
  const messageId = whole.chunks[0].messageId;
  assert.deepEqual(await uiMessage(whole.chunks), { id: messageId, role: "assistant", parts: expectedParts("ref") });
  assert.deepEqual(await resume(base(), "ref"), { status: 204 });
  assert.deepEqual(await resume(base(), "nobody"), { status: 204 });
  const total = whole.chunks.length;
  assert.ok(total > 40, `${total} chunks`);

  // 2. Clients drop the POST's stream after k chunks, for every k up to two text deltas before the end, and reconnect
  // at once (all in parallel). Each reply's last frames wait for its reconnect's answer, so however slow the machine,
  // the run is under way when the reconnect arrives (a run already over answers 204: step 1).
  const lastDelta = whole.chunks.findLastIndex((c) => c.type === "text-delta");
  const cuts = [];
  for (let k = 1; k < lastDelta - 1; k++) cuts.push(k);
  await Promise.all(
    cuts.map(async (k) => {
      const name = `cut${k}`;
      const release = world.hold(name);
      const first = await postChat(base(), name, [user(name)], (chunks) => chunks.length >= k);
      assert.equal(first.done, false, `${name}: dropped`);
      const again = await resume(base(), name, k % 2 ? "chat/stream" : `chat/${name}/stream`, release);
      assert.equal(again.status, 200, `${name}: a run is under way`);
      assert.equal(again.done, true);
      assert.equal(again.chunks[0].type, "start");
      assert.equal(again.chunks[0].messageId, first.chunks[0].messageId, `${name}: the same message id`);
      assert.deepEqual(await uiMessage(again.chunks), { id: first.chunks[0].messageId, role: "assistant", parts: expectedParts(name) }, name);
    }),
  );
  // A second POST while the agent runs is refused; the running agent is resumed instead.
  const busy = postChat(base(), "busy", [user("busy")], (chunks) => chunks.length >= 3);
  await busy;
  const refused = await fetch(`${base()}/agents/busy/chat`, { method: "POST", headers: AUTH, body: JSON.stringify({ messages: [user("busy")] }) });
  assert.equal(refused.status, 409);
  assert.deepEqual(await uiMessage((await resume(base(), "busy")).chunks).then((m) => m.parts), expectedParts("busy"));

  // 3. SIGKILL mid-answer (during the final text of 6 agents, and during the first step of 2), restart, reconnect.
  const killed = ["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"];
  const ids = new Map();
  await Promise.all(
    killed.map(async (name, i) => {
      const early = i >= 6;
      const r = await postChat(base(), name, [user(name)], (chunks) => (early ? chunks.length >= 4 : chunks.filter((c) => c.type === "text-delta").length >= 4));
      ids.set(name, r.chunks[0].messageId);
    }),
  );
  await killWorkerd(workerd);
  workerd = await startWorkerd(storage, vars);
  const restarted = await Promise.all(killed.map((name) => resume(base(), name)));
  restarted.forEach((r, i) => assert.equal(r.status, 200, `${killed[i]}: the restored agent's run is under way`));
  for (const [i, name] of killed.entries()) {
    const r = restarted[i];
    assert.equal(r.done, true, name);
    assert.equal(r.chunks[0].messageId, ids.get(name), `${name}: the stored message id`);
    assert.deepEqual(await uiMessage(r.chunks), { id: ids.get(name), role: "assistant", parts: expectedParts(name) }, name);
    const state = await idle(base(), name);
    assert.equal(state.messages.at(-1).content[0].text, ANSWER);
  }
  // 4. Approvals: the call waits (tool-approval-request); the client's approval-responded part, posted back,
  // approves it and the run streams into the same message.
  const asked = await postChat(base(), "pay", [user("pay")]);
  assert.deepEqual(
    asked.chunks.map((c) => c.type).filter((type) => type !== "tool-input-delta"),
    ["start", "start-step", "tool-input-start", "tool-input-available", "tool-approval-request", "finish-step", "finish"],
  );
  assert.equal(asked.chunks.find((c) => c.type === "tool-approval-request").approvalId, "c_pay");
  const waiting = await uiMessage(asked.chunks);
  const part = waiting.parts.find((p) => p.type === "tool-charge_card");
  assert.equal(part.state, "approval-requested");
  part.state = "approval-responded";
  part.approval = { ...part.approval, approved: true };
  const answered = await postChat(base(), "pay", [user("pay"), waiting]);
  assert.equal(answered.chunks[0].messageId, waiting.id);
  const final = await uiMessage(answered.chunks, waiting);
  assert.deepEqual(final.parts, [
    { type: "step-start" },
    { type: "tool-charge_card", toolCallId: "c_pay", state: "output-available", input: { cents: 2500 }, output: { content: [{ type: "text", text: "charged 2500" }], details: { cents: 2500 } }, approval: { id: "c_pay", approved: true } },
    { type: "step-start" },
    { type: "text", text: "Charged 25.00.", state: "done" },
  ]);
  assert.equal((await idle(base(), "pay")).charges[0].times, 1);

  // 5. What the external system saw: each agent's effect and the charge exactly once, the SIGKILL included (k1-k6
  // were killed after their effect ran), and nothing else. Only k7 and k8, killed during their first step, may have
  // been cut inside the effect's request, so theirs may have come twice (the idempotency key makes that safe).
  const seen = Object.fromEntries(world.effects);
  const agents = ["ref", ...cuts.map((k) => `cut${k}`), "busy", ...killed];
  assert.deepEqual(Object.keys(seen).sort(), [...agents.map((name) => `/effect:c_note_${name}:note`), "/charge:c_pay:2500"].sort());
  for (const name of agents) {
    const times = seen[`/effect:c_note_${name}:note`];
    if (name === "k7" || name === "k8") assert.ok(times === 1 || times === 2, `${name}: ${times}`);
    else assert.equal(times, 1, `${name}'s effect ran ${times} times`);
  }
  assert.equal(seen["/charge:c_pay:2500"], 1, "the approved charge ran once");
});
