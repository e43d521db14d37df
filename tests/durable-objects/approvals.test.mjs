// Human in the loop on Durable Objects (issue 30), on real workerd with SQLite storage on local disk, against a scripted
// OpenAI-compatible model and a payment endpoint on 127.0.0.1: 50 agents each pause on `charge_card` calls above the
// approval limit; workerd is SIGKILLed (by PID) and restarted; the restored objects list the same pending approvals;
// the decisions are POSTed over HTTP (approved, denied with and without a reason, edited arguments, an invalid edit,
// two calls of one batch decided one by one); then workerd is SIGKILLed again while two approved charges are in
// flight, and the alarms alone wake those two objects. Every agent ends with the exact transcript; every approved
// charge ran exactly once (the object's ledger in SQLite and the payment endpoint both count it), a denied one never;
// repeated decisions get 409 and unknown ones 404, with exact messages.
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wire } from "../js/provider-server.mjs";
import { AUTH, killWorkerd, startWorkerd } from "./workerd.mjs";

const AGENTS = 50;
const KINDS = ["approve", "deny", "silent", "pair", "mixed"];
const names = Array.from({ length: AGENTS }, (_, i) => `pay${i}`);
const indexOf = (name) => Number(name.slice(3));
const kindOf = (name) => KINDS[indexOf(name) % KINDS.length];
/** Approved, then SIGKILLed while the payment endpoint holds their charge: only their alarms wake them. */
const HELD = ["pay15", "pay20"];
const EDITED = "pay0"; // approved with edited arguments
const INVALID = "pay5"; // an invalid edit first (400), then approved as asked

// ---- what the scripted model asks for, and what each agent's person decides

/** The calls of the first (and only tool-calling) assistant message of `name`. Above 1000 cents a charge waits. */
function calls(name) {
  const i = indexOf(name);
  const big = { id: `c_${name}_big`, name: "charge_card", args: { cents: 2000 + i } };
  if (kindOf(name) === "pair") return [big, { id: `c_${name}_big2`, name: "charge_card", args: { cents: 3000 + i } }];
  if (kindOf(name) === "mixed") {
    return [
      { id: `c_${name}_effect`, name: "record_effect", args: { key: `${name}:effect` } },
      { id: `c_${name}_small`, name: "charge_card", args: { cents: 500 } },
      big,
    ];
  }
  return [big];
}
const waitingCalls = (name) => calls(name).filter((c) => c.name === "charge_card" && c.args.cents > 1000);

/** The decisions POSTed for `name`, in order, each with the status and body the object answers. */
function decisions(name) {
  const [big, big2] = waitingCalls(name);
  const taken = (call, approved, status, waiting = []) => ({ decided: call.id, approved, running: status === 202, waiting });
  switch (kindOf(name)) {
    case "approve": {
      const body = name === EDITED ? { approved: true, arguments: { cents: 1999 } } : { approved: true };
      return [{ id: big.id, body, status: 202, answer: taken(big, true, 202) }];
    }
    case "deny":
      return [{ id: big.id, body: { approved: false, reason: `over budget for ${name}` }, status: 202, answer: taken(big, false, 202) }];
    case "silent":
      return [{ id: big.id, body: { approved: false }, status: 202, answer: taken(big, false, 202) }];
    case "pair":
      return [
        { id: big.id, body: { approved: true }, status: 200, answer: taken(big, true, 200, [big2.id]) },
        // Repeated while the other call of the batch still waits: the object's record of decisions refuses it.
        { id: big.id, body: { approved: false }, status: 409, answer: { error: `tool call "${big.id}" was already approved` } },
        { id: big2.id, body: { approved: false, reason: "one is enough" }, status: 202, answer: taken(big2, false, 202) },
      ];
    case "mixed":
      return [{ id: big.id, body: { approved: true }, status: 202, answer: taken(big, true, 202) }];
  }
}

/** The result each call of `name` ends with: [isError, text]. */
function outcome(name, call) {
  if (call.name === "record_effect") return [false, `ok ${call.args.key}`];
  if (call.args.cents <= 1000) return [false, `charged ${call.args.cents}`];
  if (HELD.includes(name)) return [true, `Tool call "${call.id}" was interrupted and not retried`];
  const d = decisions(name).find((x) => x.id === call.id && x.status !== 409);
  if (!d.body.approved) return [true, `Tool call "${call.id}" was denied${d.body.reason ? `: ${d.body.reason}` : ""}`];
  return [false, `charged ${d.body.arguments?.cents ?? call.args.cents}`];
}

/** The charges that ran to their end (the ledger's rows), sorted by tool-call id as the object lists them. */
function ledger(name) {
  return calls(name)
    .filter((c) => c.name === "charge_card")
    .map((c) => [c, outcome(name, c)])
    .filter(([, [isError]]) => !isError)
    .map(([c, [, text]]) => ({ toolCallId: c.id, cents: Number(text.replace("charged ", "")), times: 1 }))
    .sort((a, b) => (a.toolCallId < b.toolCallId ? -1 : 1));
}

/** role + what matters of each message (as do.test.mjs). */
function shape(messages) {
  return messages.map((m) => {
    if (m.role === "assistant") {
      const ids = m.content.filter((b) => b.type === "toolCall").map((b) => b.id);
      return ids.length ? `assistant ${ids.join(",")}` : `assistant "${m.content.map((b) => b.text ?? "").join("")}"`;
    }
    const text = typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("");
    return m.role === "toolResult" ? `result ${m.toolCallId}${m.isError ? " error" : ""} ${text}` : `${m.role} ${text}`;
  });
}

function transcript(name, { paused = false } = {}) {
  const all = calls(name);
  const head = ["system ", `user go ${name}`, `assistant ${all.map((c) => c.id).join(",")}`];
  if (paused) return head; // results enter the transcript only when the batch ends, in request order
  const results = all.map((c) => outcome(name, c));
  return [
    ...head,
    ...all.map((c, k) => `result ${c.id}${results[k][0] ? " error" : ""} ${results[k][1]}`),
    `assistant "done ${name}: ${results.map(([, text]) => text).join(" | ")}"`,
  ];
}

// ---- the scripted model and the payment endpoint (one loopback server)

async function startWorld() {
  const world = { charges: new Map(), effects: new Map(), held: new Map(), hold: new Set(), requested: null };
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = raw ? JSON.parse(raw) : {};
    if (req.url.endsWith("/chat/completions")) {
      const user = body.messages.find((m) => m.role === "user");
      const name = (typeof user.content === "string" ? user.content : user.content.map((p) => p.text ?? "").join("")).replace(/^go /, "");
      world.requested?.add(name);
      const turn = body.messages.filter((m) => m.role === "assistant").length;
      // The final answer repeats the tool results the model was sent, so the transcript shows what it saw.
      const seen = body.messages
        .filter((m) => m.role === "tool")
        .map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("")));
      const sse = wire["openai-completions"].reply(turn === 0 ? { calls: calls(name) } : { text: `done ${name}: ${seen.join(" | ")}` });
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end(sse);
    }
    if (req.url === "/effect" || req.url === "/charge") {
      const id = req.headers["idempotency-key"];
      const map = req.url === "/charge" ? world.charges : world.effects;
      map.set(id, (map.get(id) ?? 0) + 1);
      if (req.url === "/charge" && world.hold.has(id)) return void world.held.set(id, res);
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(req.url === "/charge" ? `charged ${body.cents}` : `ok ${body.key}`);
    }
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 120_000; // longer than workerd keeps a pooled connection (see do.test.mjs)
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  world.url = `http://127.0.0.1:${server.address().port}`;
  world.release = () => {
    for (const res of world.held.values()) res.destroy();
    world.held.clear();
    world.hold.clear();
  };
  world.close = () => new Promise((r) => server.close(r));
  return world;
}

// ---- HTTP helpers

const vars = (world) => ({
  MODEL_URL: `${world.url}/v1`,
  EFFECTS_URL: world.url,
  MODEL_API: "openai-completions",
  MODEL_PROVIDER: "openai",
  MODEL_ID: "scripted",
  MODEL_API_KEY: "test-key",
});
const postJson = async (url, body) => {
  const r = await fetch(url, { method: "POST", headers: { ...AUTH, "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
};
const decide = (base, name, id, body) => postJson(`${base}/agents/${name}/approvals/${encodeURIComponent(id)}`, body);
const state = async (base, name) => (await fetch(`${base}/agents/${name}`, { headers: AUTH })).json();

async function waitIdle(base, list, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  const states = new Map();
  let pending = [...list];
  while (pending.length) {
    if (Date.now() > deadline) throw new Error(`still running after ${timeoutMs} ms: ${pending.slice(0, 5).join(", ")}…`);
    const now = await Promise.all(pending.map(async (n) => [n, await state(base, n)]));
    for (const [n, s] of now) if (!s.isStreaming) states.set(n, s);
    pending = pending.filter((n) => !states.has(n));
    if (pending.length) await new Promise((r) => setTimeout(r, 100));
  }
  return states;
}

async function until(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("issue 30 on Durable Objects: 50 agents pause for approval, workerd is SIGKILLed, the decisions are POSTed after the restart; every approved charge runs once, a denied one never", { timeout: 120_000 }, async (t) => {
  const storage = mkdtempSync(join(tmpdir(), "alw-do-approvals-"));
  const world = await startWorld();
  const started = performance.now();
  let workerd = await startWorkerd(storage, vars(world));
  try {
    // 1. Every agent runs until its batch waits for a person.
    const prompted = await Promise.all(names.map((n) => postJson(`${workerd.base}/agents/${n}/prompt`, { text: `go ${n}` })));
    assert.deepEqual(new Set(prompted.map((r) => r.status)), new Set([202]));
    const paused = await waitIdle(workerd.base, names, 60_000);
    const pending = new Map();
    for (const n of names) {
      const s = paused.get(n);
      assert.equal(s.errorMessage, undefined, n);
      assert.deepEqual(shape(s.messages), transcript(n, { paused: true }), n);
      assert.deepEqual(s.pendingApprovals, waitingCalls(n).map((c) => ({ toolCallId: c.id, toolName: "charge_card", args: c.args })), n);
      // The calls of the batch that need no approval ran before the pause: the small charge, the effect.
      assert.deepEqual(s.charges, kindOf(n) === "mixed" ? [{ toolCallId: `c_${n}_small`, cents: 500, times: 1 }] : [], n);
      pending.set(n, s.pendingApprovals);
    }
    assert.deepEqual([...world.charges.keys()].sort(), names.filter((n) => kindOf(n) === "mixed").map((n) => `c_${n}_small`).sort());
    assert.deepEqual(await postJson(`${workerd.base}/agents/pay3/prompt`, { text: "again" }), {
      status: 409,
      body: { error: "tool calls wait for approval (c_pay3_big, c_pay3_big2): POST /agents/:id/approvals/:toolCallId for each first" },
    });

    // 2. SIGKILL: the pause is in the checkpoint rows; the restored objects list the same requests.
    await killWorkerd(workerd);
    workerd = await startWorkerd(storage, vars(world));
    const restored = await Promise.all(names.map(async (n) => [n, await state(workerd.base, n)]));
    for (const [n, s] of restored) {
      assert.equal(s.isStreaming, false, n);
      assert.deepEqual(s.pendingApprovals, pending.get(n), n);
    }

    // 3. Decisions refused before they reach the agent, with the exact error; nothing changes.
    const shapeError = 'the body must be JSON {"approved": true|false, "reason"?: string, "arguments"?: object}';
    assert.deepEqual(await decide(workerd.base, "pay1", "c_pay1_big", { approved: "yes" }), { status: 400, body: { error: shapeError } });
    assert.deepEqual(await decide(workerd.base, "pay1", "c_pay1_big", "{not json"), { status: 400, body: { error: shapeError } });
    assert.deepEqual(await decide(workerd.base, "pay1", "c_pay1_big", { approved: false, arguments: { cents: 1 } }), {
      status: 400,
      body: { error: `${shapeError}: "arguments" go with "approved": true only` },
    });
    assert.deepEqual(await decide(workerd.base, "pay1", "nope", { approved: true }), {
      status: 404,
      body: { error: 'no tool call "nope" is waiting for approval' },
    });
    assert.deepEqual(await decide(workerd.base, "ghost", "c_ghost_big", { approved: true }), { status: 404, body: { error: 'no agent "ghost"' } });
    assert.deepEqual(await decide(workerd.base, INVALID, `c_${INVALID}_big`, { approved: true, arguments: { cents: "lots" } }), {
      status: 400,
      body: {
        error: `"arguments" of tool call "c_${INVALID}_big" are invalid: Validation failed for tool "charge_card":\n  - cents: expected number, got string\n\nReceived arguments:\n{\n  "cents": "lots"\n}`,
      },
    });
    assert.deepEqual((await state(workerd.base, INVALID)).pendingApprovals, pending.get(INVALID), "a refused decision changes nothing");

    // 4. The decisions, over HTTP after the restart; two approved charges are held in flight at the payment endpoint.
    for (const n of HELD) world.hold.add(`c_${n}_big`);
    const decidedAt = performance.now();
    await Promise.all(
      names.map(async (n) => {
        for (const d of decisions(n)) assert.deepEqual(await decide(workerd.base, n, d.id, d.body), { status: d.status, body: d.answer }, `${n} ${d.id}`);
      }),
    );
    const others = names.filter((n) => !HELD.includes(n));
    const done = await waitIdle(workerd.base, others, 60_000);
    const decidedMs = Math.round(performance.now() - decidedAt);
    await until("the held charges", () => HELD.every((n) => world.held.has(`c_${n}_big`)), 30_000);

    // 5. SIGKILL while those two runs are inside charge_card: their alarms wake them (no request is sent to them until
    //    both made their model request); the interrupted charge is reported (resume: "fail"), not repeated.
    await killWorkerd(workerd);
    world.release();
    world.requested = new Set();
    workerd = await startWorkerd(storage, vars(world));
    await until("the held agents' alarms", () => HELD.every((n) => world.requested.has(n)), 30_000);
    for (const [n, s] of await waitIdle(workerd.base, HELD, 30_000)) done.set(n, s);

    for (const n of names) {
      const s = done.get(n);
      assert.equal(s.errorMessage, undefined, n);
      assert.deepEqual(shape(s.messages), transcript(n), n);
      assert.deepEqual(s.pendingApprovals, [], n);
      assert.deepEqual(s.charges, ledger(n), `${n}: the ledger in the object's SQLite storage`);
      for (const c of calls(n).filter((x) => x.name === "charge_card")) {
        const ran = HELD.includes(n) || !outcome(n, c)[0];
        assert.equal(world.charges.get(c.id), ran ? 1 : undefined, `${c.id}: payment requests`);
      }
    }
    assert.equal(world.charges.size, names.reduce((k, n) => k + ledger(n).length, 0) + HELD.length, "no other charge was made");
    const mixed = names.filter((n) => kindOf(n) === "mixed");
    assert.deepEqual([...world.effects].sort(), mixed.map((n) => [`c_${n}_effect`, 1]).sort(), "each plain call of a paused batch ran once, before the pause");

    // 6. A decision posted again after the run went on: 409, from the object's record of decisions.
    assert.deepEqual(await decide(workerd.base, "pay10", "c_pay10_big", { approved: true }), {
      status: 409,
      body: { error: 'tool call "c_pay10_big" was already approved' },
    });
    assert.deepEqual(await decide(workerd.base, "pay1", "c_pay1_big", { approved: true }), {
      status: 409,
      body: { error: 'tool call "c_pay1_big" was already denied' },
    });
    assert.deepEqual(await decide(workerd.base, "pay1", "c_pay1_zzz", { approved: true }), {
      status: 404,
      body: { error: 'no tool call "c_pay1_zzz" is waiting for approval' },
    });
    const totalMs = Math.round(performance.now() - started);
    t.diagnostic(`decisions to 48 agents done: ${decidedMs} ms; whole test ${totalMs} ms`);
    console.log(`durable objects, approvals: 50 agents paused, 2 SIGKILLs; 48 runs done ${decidedMs} ms after the decisions; test ${totalMs} ms`);
  } finally {
    await killWorkerd(workerd);
    world.release();
    await world.close();
    rmSync(storage, { recursive: true, force: true });
  }
});
