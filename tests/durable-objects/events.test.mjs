// Issue 31: the Durable Objects example's resumable `GET /agents/:id/events` on real workerd (SQLite on local disk),
// against a scripted OpenAI-compatible model on 127.0.0.1 that streams slowly (so runs can be cut in the middle).
// 50 clients follow 50 agents over SSE and keep a transcript with the reducer the replay rule is proved with
// (tests/js/events-reduce.mjs). Each drops its connection at seeded random points and reconnects with Last-Event-ID;
// then workerd is SIGKILLed (by PID) with half of the agents mid-run and restarted: their clients reconnect, get an
// `agent_sync` (a new process, a new journal) and then live events while the agents resume from their checkpoints.
// Every client ends with exactly the messages `GET /agents/:id` has; across a reconnect the text it shows only grows
// (a client that dropped mid-message gets back the partial it had, never a shorter one), no item comes twice; after
// a restart the committed messages it had are still the start of the transcript. When a client goes, the object
// keeps no reader for it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setMaxListeners } from "node:events";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUTH, killWorkerd, listenForWorkerd, startWorkerd, streamFrames } from "./workerd.mjs";
import { prng, wire } from "../js/provider-server.mjs";
import { apply, initial } from "../js/events-reduce.mjs";

const SEED = Number(process.env.EVENTS_SEED ?? 31);
/** Milliseconds between two SSE frames of the scripted model: a 190-character answer streams for about 1.2 s. */
const FRAME_MS = 30;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the scripted model (slow streaming) and the effects endpoint, one loopback server

/** Agents `a*` take 2 turns (a tool, then the answer); `b*` take 4 (three tools), so they are mid-run at the kill. */
const turnsOf = (name) => (name.startsWith("a") ? 2 : 4);
const answer = (name, t) => `Turn ${t} of ${name}: ` + "the quick brown fox jumps over the lazy dog, ".repeat(4) + `end ${name}.`;

function script(name, t) {
  if (t < turnsOf(name) - 1) {
    return { text: `Noting step ${t} for ${name}.`, calls: [{ id: `c_${name}_${t}`, name: "record_effect", args: { key: `${name}:${t}` } }] };
  }
  return { text: answer(name, t) };
}

async function startWorld() {
  const world = { started: new Map(), finished: new Map(), open: new Set() };
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const body = raw ? JSON.parse(raw) : {};
    if (req.url.endsWith("/chat/completions")) {
      const user = body.messages.find((m) => m.role === "user");
      const name = String(typeof user.content === "string" ? user.content : user.content.map((p) => p.text).join("")).replace(/^go /, "");
      const t = body.messages.filter((m) => m.role === "assistant").length;
      world.started.set(name, t);
      if (await streamFrames(res, wire["openai-completions"].reply(script(name, t)), FRAME_MS, world.open)) world.finished.set(name, t);
      return;
    }
    if (req.url === "/effect") {
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(`ok ${body.key}`);
    }
    res.writeHead(404).end();
  });
  Object.assign(world, await listenForWorkerd(server, world.open));
  return world;
}

// ---- the client: an SSE reader that keeps a transcript and reconnects with Last-Event-ID (test-only, not shipped)

const textOf = (m) =>
  m === null ? "" : typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? b.thinking ?? "").join("");
/** The text a client shows: every message's, then the streaming one's. It may only grow while the process lives. */
const visible = (state) => [...state.messages.map(textOf), textOf(state.streaming)].join("\n");

/** Splits an SSE byte stream into frames: { comments, id, event, data } (data undefined for comment-only frames). */
async function* frames(body) {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const frame = { comments: [] };
      for (const line of buffer.slice(0, end).split("\n")) {
        if (line.startsWith(":")) frame.comments.push(line.slice(1).trim());
        else {
          const colon = line.indexOf(":");
          frame[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, "");
        }
      }
      buffer = buffer.slice(end + 2);
      yield frame;
    }
  }
}

/**
 * Follows agent `name` until its run ended: connects with `?after=0` (the state first), drops the connection after
 * the items counted in `drops` and reconnects after `pause()` ms with `Last-Event-ID`; a connection that breaks (the
 * server was killed) is retried until `base()` answers. `generation()` tells which workerd process serves (a
 * reconnect into a new one must begin with an agent_sync, one into the same process must not).
 */
async function follow({ name, base, generation, drops, pause, stop }) {
  const c = { name, state: initial(), lastSeq: 0, items: 0, connects: 0, drops: 0, syncs: [], midMessage: 0, replayed: 0, keepalives: 0, done: false };
  let shown = "";
  let dropping = [...drops];
  let ac;
  stop.addEventListener("abort", () => ac?.abort(), { once: true });
  while (!c.done) {
    if (stop.aborted) throw new Error(`${name}: stopped before its run ended`);
    const gen = generation();
    ac = new AbortController();
    let response;
    try {
      const headers = c.lastSeq ? { ...AUTH, "last-event-id": String(c.lastSeq) } : AUTH;
      response = await fetch(`${base()}/agents/${name}/events?after=0`, { headers, signal: ac.signal });
    } catch {
      await sleep(50); // workerd is down: the test restarts it
      continue;
    }
    assert.equal(response.status, 200, name);
    assert.equal(response.headers.get("content-type"), "text/event-stream", name);
    c.connects++;
    let first = true;
    let live = false;
    try {
      for await (const f of frames(response.body)) {
        if (f.data === undefined) {
          if (f.comments.includes("keepalive")) c.keepalives++;
          continue;
        }
        const seq = Number(f.id);
        const event = JSON.parse(f.data);
        const replay = f.comments.includes("replay");
        assert.equal(f.event, event.type, `${name}: the frame's event: line is the event's type`);
        assert.ok(seq > c.lastSeq, `${name}: item ${seq} after ${c.lastSeq} (no item twice, none out of order)`);
        // Replayed items come first, live ones after (no one falls behind here).
        assert.ok(!(live && replay), `${name}: a replayed item after a live one`);
        live ||= !replay;
        if (replay) c.replayed++;
        if (event.type === "agent_sync") {
          assert.ok(replay && first, `${name}: an agent_sync comes first and is marked replay`);
          // ?after=0 on the first connection; afterwards only a new process has no journal for Last-Event-ID.
          assert.equal(c.lastSeq === 0 || gen !== c.gen, true, `${name}: agent_sync on a reconnect to the same process`);
          const committed = JSON.parse(JSON.stringify(c.state.messages));
          assert.deepEqual(event.messages.slice(0, committed.length), committed, `${name}: the committed messages survive the restart`);
          c.syncs.push(gen);
          apply(c.state, event);
          shown = visible(c.state); // the partial a killed process streamed is requested again
        } else {
          if (first && c.lastSeq !== 0) assert.equal(gen, c.gen, `${name}: a reconnect to a new process must start with agent_sync`);
          apply(c.state, event);
          const now = visible(c.state);
          assert.ok(now.startsWith(shown), `${name}: the text shown shrank or changed at ${event.type} (seq ${seq}):\n${shown}\n---\n${now}`);
          shown = now;
        }
        first = false;
        c.lastSeq = seq;
        c.gen = gen;
        c.items++;
        const ran = c.state.messages.some((m) => m.role === "user");
        if (event.type === "agent_end" || (event.type === "agent_sync" && !event.isStreaming && ran)) {
          c.done = true;
          break;
        }
        if (dropping.length && c.items >= dropping[0]) {
          dropping = dropping.slice(1);
          c.drops++;
          if (textOf(c.state.streaming).length > 0) c.midMessage++;
          break;
        }
      }
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error;
      // otherwise the connection broke (workerd was killed): reconnect
    }
    ac.abort();
    if (!c.done) await sleep(pause());
  }
  return c;
}

// ---- the test

/** The frames `url` sends in `ms` milliseconds: ": <comments>" for comment-only frames, else "[: <comments> | ]<event>". */
async function collect(url, headers, ms) {
  const seen = [];
  const signal = AbortSignal.timeout(ms);
  try {
    const response = await fetch(url, { headers: { ...AUTH, ...headers }, signal });
    for await (const f of frames(response.body)) {
      const comments = f.comments.length ? `: ${f.comments.join(" ")}` : "";
      seen.push(f.data === undefined ? comments : comments ? `${comments} | ${f.event}` : f.event);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  return seen;
}

const state = async (base, name) => (await fetch(`${base}/agents/${name}`, { headers: AUTH })).json();

test("issue 31: 50 SSE clients of 50 Durable Object agents drop and reconnect with Last-Event-ID, some across a SIGKILL and restart of workerd: each ends with the agent's exact transcript", { timeout: 120_000 }, async (t) => {
  const started = performance.now();
  const storage = mkdtempSync(join(tmpdir(), "alw-do-events-"));
  const world = await startWorld();
  const vars = { MODEL_URL: `${world.url}/v1`, EFFECTS_URL: world.url, MODEL_API: "openai-completions", MODEL_PROVIDER: "openai", MODEL_ID: "scripted", MODEL_API_KEY: "test-key", EVENTS_KEEPALIVE_MS: "400" };
  let workerd;
  let generation = 1;
  const stop = new AbortController(); // ends every client when the test ends (a failure included)
  setMaxListeners(100, stop.signal);
  const random = prng(SEED);
  t.diagnostic(`seed ${SEED} (rerun with EVENTS_SEED=${SEED})`);
  try {
    workerd = await startWorkerd(storage, vars);
    // An idle agent's live-only stream (no Last-Event-ID, no ?after): comment lines keep it alive, no item comes.
    const live = await collect(`${workerd.base}/agents/idle/events`, {}, 1000);
    assert.deepEqual(live.slice(0, 3), [": agent-loop-wasm events", ": keepalive", ": keepalive"]);
    assert.ok(live.every((s) => s.startsWith(": ")), `no item on an idle agent's live stream: ${live}`);
    // An id this object never gave (not a number) is answered with the state, marked as a replay.
    const unknown = await collect(`${workerd.base}/agents/idle/events`, { "last-event-id": "not-a-seq" }, 300);
    assert.deepEqual(unknown.slice(0, 2), [": agent-loop-wasm events", ": replay | agent_sync"]);

    const names = [...Array.from({ length: 25 }, (_, i) => `a${i}`), ...Array.from({ length: 25 }, (_, i) => `b${i}`)];
    const drops = () => {
      const points = [2 + Math.floor(random() * 40)];
      if (random() < 0.4) points.push(points[0] + 5 + Math.floor(random() * 40));
      return points;
    };
    const follows = names.map((name, i) => {
      const options = { name, base: () => workerd.base, generation: () => generation, stop: stop.signal, drops: drops(), pause: () => Math.floor(random() * 300) };
      // Even clients connect before the prompt; odd ones mid-run (their ?after=0 gets the state first).
      const delay = i % 2 ? 100 + Math.floor(random() * 700) : 0;
      const p = sleep(delay).then(() => follow(options));
      p.catch(() => {}); // a failure is reported once, by the Promise.all that waits for it
      return p;
    });
    await sleep(50);
    const accepted = await Promise.all(
      names.map((n) => fetch(`${workerd.base}/agents/${n}/prompt`, { method: "POST", headers: { ...AUTH, "content-type": "application/json" }, body: JSON.stringify({ text: `go ${n}` }) })),
    );
    assert.deepEqual(accepted.map((r) => r.status), names.map(() => 202));

    // The `a` agents finish; the `b` agents are mid-run (their last answer not streamed yet) when workerd is killed.
    const a = await Promise.all(follows.slice(0, 25));
    const running = names.filter((n) => n.startsWith("b") && world.finished.get(n) !== turnsOf(n) - 1);
    assert.equal(running.length, 25, `b agents still running at the kill: ${running.length}`);
    await killWorkerd(workerd);
    generation = 2;
    workerd = await startWorkerd(storage, vars);
    const restartedAt = performance.now();
    const b = await Promise.all(follows.slice(25));
    const resumedMs = Math.round(performance.now() - restartedAt);

    for (const c of [...a, ...b]) {
      const s = await state(workerd.base, c.name);
      assert.equal(s.isStreaming, false, c.name);
      assert.equal(s.errorMessage, undefined, c.name);
      assert.equal(textOf(s.messages.at(-1)), answer(c.name, turnsOf(c.name) - 1), `${c.name}: the run finished`);
      assert.equal(s.messages.length, 2 + 2 * (turnsOf(c.name) - 1) + 1, `${c.name}: system, user, (assistant, result) per tool turn, answer`);
      // The client's transcript is the agent's, message for message (no text missing or twice).
      assert.deepEqual(c.state.messages, s.messages, c.name);
      assert.equal(c.state.streaming, null, c.name);
      assert.deepEqual(c.state.tools, {}, c.name);
      // A reconnect into the process that served it was a replay; into the restarted one, exactly one agent_sync.
      // (the first connection's ?after=0 is answered with the state too).
      assert.deepEqual(c.syncs, c.name.startsWith("b") ? [1, 2] : [1], `${c.name}: the processes its agent_syncs came from`);
    }
    // The object keeps no reader for a client that went (the body's cancel ended its agent.events() iterator).
    const deadline = Date.now() + 5000;
    let open;
    for (;;) {
      open = (await Promise.all(names.map((n) => state(workerd.base, n)))).map((s) => s.eventStreams);
      if (open.every((n) => n === 0) || Date.now() > deadline) break;
      await sleep(100);
    }
    assert.deepEqual(open, names.map(() => 0), "open event streams after every client went");

    const all = [...a, ...b];
    const figures = {
      connects: all.reduce((n, c) => n + c.connects, 0),
      drops: all.reduce((n, c) => n + c.drops, 0),
      midMessageReconnects: all.reduce((n, c) => n + c.midMessage, 0),
      replayed: all.reduce((n, c) => n + c.replayed, 0),
      items: all.reduce((n, c) => n + c.items, 0),
      resumedMs,
      totalMs: Math.round(performance.now() - started),
    };
    // The clients dropped their connections by themselves (about 1.4 times each, at seeded points; each drop is a
    // reconnect), the b ones at the kill too unless they were away then; many drops came in the middle of a message.
    assert.ok(figures.drops >= 40, JSON.stringify(figures));
    assert.ok(figures.connects >= 50 + figures.drops, JSON.stringify(figures));
    assert.ok(figures.midMessageReconnects >= 10, `reconnects in the middle of a message: ${figures.midMessageReconnects}`);
    t.diagnostic(`figures: ${JSON.stringify(figures)}`);
    console.log(
      `durable objects, resumable events: 50 clients, ${figures.connects} connections, ${figures.drops} dropped by the client (${figures.midMessageReconnects} mid-message), ` +
        `${figures.items} items (${figures.replayed} replayed); the 25 runs cut by the SIGKILL done ${resumedMs} ms after the restart; ${figures.totalMs} ms in all`,
    );
  } finally {
    stop.abort();
    if (workerd) await killWorkerd(workerd);
    await world.close();
    rmSync(storage, { recursive: true, force: true });
  }
});
