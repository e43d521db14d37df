// Durable agents on the built package: checkpoints written by a real process that is SIGKILLed at every
// checkpoint and inside a tool, then restored from the stored JSON lines and resumed in a new process, reach the
// transcript of the uninterrupted run (lone surrogates and deep details byte for byte), with no completed tool run
// twice and nothing left queued.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, IS_REFERENCE } from "./impl.mjs";

// Durable agents (onCheckpoint, snapshot, Agent.restore, resume; issue 16) are new in this library.
const T = { skip: IS_REFERENCE && "durable agents (onCheckpoint, snapshot, Agent.restore, resume) are not in pi-agent-core 1.6.0" };

const child = fileURLToPath(new URL("./durable/agent-process.mjs", import.meta.url));

function run(mode, dir, crash) {
  const out = spawnSync(process.execPath, [child, mode, join(dir, "store.jsonl"), join(dir, `${mode}.log`), crash ?? "none"], {
    encoding: "utf8",
    timeout: 20_000,
  });
  return out;
}

/** The transcript without times and durations (they differ between runs). */
const normalized = (messages) =>
  JSON.stringify(messages, (key, value) => (key === "timestamp" || key === "durationMs" ? undefined : value));

const lines = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);

test("durable: SIGKILL at every checkpoint and inside a tool, then restore + resume, gives the uninterrupted transcript", T, () => {
  const base = mkdtempSync(join(tmpdir(), "alw-durable-"));
  try {
    const whole = run("fresh", join(base, "."), undefined);
    assert.equal(whole.status, 0, whole.stderr);
    const expected = JSON.parse(whole.stdout);
    const stored = lines(join(base, "store.jsonl")).map((l) => JSON.parse(l));
    assert.ok(stored.length > 10, `${stored.length} checkpoints`);
    assert.deepEqual(stored.map((c) => c.seq), stored.map((_, i) => i + 1));
    // Lone surrogates and a 300-level detail made it into the transcript, and the store holds them.
    assert.ok(expected.messages.some((m) => JSON.stringify(m.content) === JSON.stringify([{ type: "text", text: "go \uD800" }])));
    assert.ok(expected.messages.some((m) => m.content === "steer \uD83D!"));

    const crashes = [...stored.map((c) => `seq:${c.seq}`), "tool:c"];
    for (const crash of crashes) {
      const dir = mkdtempSync(join(base, "crash-"));
      const killed = run("fresh", dir, crash);
      assert.equal(killed.signal, "SIGKILL", `${crash}: ${killed.stderr}`);
      // What the store says is done must not run again on resume.
      const held = lines(join(dir, "store.jsonl")).map((l) => JSON.parse(l));
      const done = new Set();
      for (const c of held) {
        for (const m of c.messages?.append ?? []) if (m.role === "toolResult") done.add(m.toolCallId);
        for (const r of c.ended ?? []) done.add(r.toolCallId);
      }
      const resumed = run("resume", dir);
      assert.equal(resumed.status, 0, `${crash}: ${resumed.stderr}`);
      const after = JSON.parse(resumed.stdout);
      const prompted = held.some((c) => (c.messages?.append ?? []).some((m) => m.role === "user"));
      if (!prompted) {
        // Killed before the prompt was stored: nothing to resume.
        assert.ok(after.messages.every((m) => m.role === "system"), crash);
        continue;
      }
      assert.equal(normalized(after.messages), normalized(expected.messages), crash);
      assert.equal(after.queued, false, crash);
      for (const id of lines(join(dir, "resume.log"))) assert.ok(!done.has(id), `${crash}: ${id} ran again`);
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("durable: restore rejects a gap or a repeat with exact errors, and a snapshot takes the checkpoints after it", T, async () => {
  const stored = [];
  const replies = [() => ({ role: "assistant", content: [{ type: "text", text: "hi" }], api: "faux", provider: "faux", model: "faux-1", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 1 })];
  const { createFaux, model } = await import("./faux.mjs");
  const faux = createFaux([...replies, ...replies]);
  const agent = new Agent({ streamFn: faux.streamFn, initialState: { model: model() }, onCheckpoint: async (c) => { stored.push(JSON.stringify(c)); } });
  await agent.prompt("one");
  const snapshot = agent.snapshot();
  assert.equal(snapshot.checkpointSeq, stored.length);
  const mark = stored.length;
  agent.state.thinkingLevel = "low";
  await agent.prompt("two");
  assert.equal(JSON.parse(stored[mark]).thinkingLevel, "low");
  const again = Agent.restore([snapshot, ...stored.slice(mark)], { streamFn: faux.streamFn });
  assert.equal(normalized(again.state.messages), normalized(agent.state.messages));
  assert.equal(again.state.thinkingLevel, "low");
  assert.throws(() => Agent.restore([stored[0], stored[2]]), { message: "Agent.restore: checkpoints[1]: checkpoint 2 is missing (next is 3)" });
  assert.throws(() => Agent.restore([stored[0], stored[0]]), {
    message: "Agent.restore: checkpoints[1]: checkpoint 1 repeats or is out of order (expected 2)",
  });
  assert.throws(() => new Agent({ onCheckpoint: 1 }), { name: "TypeError", message: "Agent: options.onCheckpoint must be a function" });
  // Idle: resume resolves at once without a run.
  let events = 0;
  again.subscribe(() => events++);
  await again.resume();
  assert.equal(events, 0);
});
