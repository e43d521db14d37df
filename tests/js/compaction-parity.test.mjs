// Issue 45: pkg-template/compaction.js (the JS twins the package loads on a run's first compaction check) against
// their Rust references in core::compaction, run by the parity build (target/parity/, `__fastPath`): the plan, the
// projection and the entry of seeded random transcripts — tool loops with usage, system messages declaring tools,
// earlier compaction entries, images, thinking, non-ASCII text, odd values — under random options. Same results, the
// transcript's own objects in the same places. COMPACTION_SEED=<n> reruns one seed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { IS_REFERENCE } from "./impl.mjs";
import { prng } from "./provider-server.mjs";
import * as twin from "../../pkg-template/compaction.js";

const require = createRequire(import.meta.url);
const glue = IS_REFERENCE ? null : require("../../target/parity/agent_loop_wasm.js");
const T = { timeout: 60_000, skip: IS_REFERENCE && "compaction (issue 45) is not in pi-agent-core 1.6.0" };

const FIXED_SEEDS = [1, 2, 3, 45, 20261207];
const seeds = process.env.COMPACTION_SEED ? [Number(process.env.COMPACTION_SEED)] : [...FIXED_SEEDS, Math.floor(Math.random() * 2 ** 31)];

/** A random transcript of `n` messages: user prompts, replies calling tools (with usage or not), their results,
 *  system messages, earlier compaction entries. */
function transcript(random, n) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const words = ["read", "the file", "ü", "😀", "x".repeat(40), "y".repeat(400), "", "ok"];
  const textOf = () => Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(words)).join(" ");
  const usage = () => (random() < 0.7 ? { input: Math.floor(random() * 3000), output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: random() < 0.5 ? 0 : Math.floor(random() * 4000), cost: { total: 0 } } : undefined);
  const out = [];
  let call = 0;
  while (out.length < n) {
    const r = random();
    if (r < 0.15) {
      out.push({ role: "user", content: random() < 0.5 ? textOf() : [{ type: "text", text: textOf() }, ...(random() < 0.2 ? [{ type: "image", data: "", mimeType: "image/png" }] : [])], timestamp: out.length });
    } else if (r < 0.45) {
      const ids = Array.from({ length: 1 + Math.floor(random() * 3) }, () => `c${++call}`);
      const content = [...(random() < 0.3 ? [{ type: "thinking", thinking: textOf() }] : []), ...(random() < 0.5 ? [{ type: "text", text: textOf() }] : []), ...ids.map((id) => ({ type: "toolCall", id, name: pick(["read", "ls"]), arguments: random() < 0.2 ? {} : { path: textOf(), n: call } }))];
      out.push({ role: "assistant", content, stopReason: pick(["toolUse", "toolUse", "stop", "error", "aborted"]), usage: usage(), timestamp: out.length });
      for (const id of ids) out.push({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: textOf() }], isError: false, timestamp: out.length });
    } else if (r < 0.6) {
      out.push({ role: "assistant", content: [{ type: "text", text: textOf() }], stopReason: "stop", usage: usage(), timestamp: out.length });
    } else if (r < 0.7) {
      out.push({ role: "system", content: random() < 0.5 ? textOf() : "", toolsAdded: random() < 0.5 ? [{ name: pick(["read", "ls"]), description: textOf(), parameters: {} }] : undefined, toolsRemoved: random() < 0.2 ? [{ name: "ls" }] : undefined, sections: random() < 0.2 ? { rules: textOf(), old: null } : undefined, timestamp: random() < 0.8 ? out.length : undefined });
    } else if (r < 0.78) {
      out.push({ role: "compactionSummary", summary: textOf(), tokensBefore: 100, tokensAfter: 50, keptMessages: Math.floor(random() * 6), reason: "threshold", timestamp: out.length });
    } else if (r < 0.8) {
      out.push({ role: "custom", text: textOf(), timestamp: out.length });
    } else {
      out.push({ role: "toolResult", toolCallId: `c${call}`, toolName: "read", content: textOf(), isError: random() < 0.1, timestamp: out.length });
    }
  }
  return out.slice(0, n);
}

function options(random) {
  const r = random();
  if (r < 0.2) return true;
  const o = {};
  if (random() < 0.6) o.trigger = random() < 0.5 ? { fraction: Math.max(0.01, Math.round(random() * 100) / 100) } : { tokens: 1 + Math.floor(random() * 3000) };
  if (random() < 0.6) o.keepRecentTokens = Math.floor(random() * 1500);
  if (random() < 0.3) o.contextWindow = 1 + Math.floor(random() * 8000);
  return o;
}

/** A value with the transcript's objects named by their index (`#3`), so both sides are compared by identity. */
function named(value, messages) {
  const at = new Map(messages.map((m, i) => [m, `#${i}`]));
  return JSON.parse(JSON.stringify(value, (key, v) => (typeof v === "object" && v !== null && at.has(v) && key !== "" ? at.get(v) : v)));
}

test("compaction's JS twins answer as core::compaction on seeded random transcripts", T, (t) => {
  const fast = (name, args) => glue.__fastPath(name, true, args);
  let planned = 0;
  let compared = 0;
  for (const seed of seeds) {
    const random = prng(seed);
    for (let i = 0; i < 300; i++) {
      const messages = transcript(random, 1 + Math.floor(random() * 40));
      const opts = options(random);
      const model = { id: "m", contextWindow: random() < 0.1 ? undefined : 200 + Math.floor(random() * 6000) };
      const where = `seed ${seed}, case ${i}`;
      // The projection: the same array when nothing was compacted, else the same objects in the same places.
      const ours = twin.project(messages);
      const reference = fast("compactionProject", [messages]);
      assert.equal(ours === messages, reference === messages, `${where}: project returns the transcript itself`);
      assert.deepEqual(named(ours, messages), named(reference, messages), `${where}: project`);
      // The plan.
      const plan = twin.plan(messages, opts, model);
      const planRef = fast("compactionPlan", [messages, opts, model]);
      assert.deepEqual(named(plan, messages), named(planRef, messages), `${where}: plan of ${JSON.stringify(opts)}`);
      compared++;
      if (plan === null) continue;
      planned++;
      plan.messages.forEach((m, k) => assert.equal(m, planRef.messages[k], `${where}: the plan's messages are the transcript's`));
      // The entry, with its estimate after.
      const usage = random() < 0.5 ? { input: 10, output: 5, totalTokens: 15 } : undefined;
      const entry = twin.entry(messages, plan, "SUMMARY 😀", usage, 1234);
      const entryRef = fast("compactionEntry", [messages, planRef, "SUMMARY 😀", usage, 1234]);
      assert.deepEqual(Object.keys(entry), Object.keys(entryRef), `${where}: entry fields`);
      assert.deepEqual(named(entry, messages), named(entryRef, messages), `${where}: entry`);
    }
  }
  t.diagnostic(`${compared} cases, ${planned} of them compacting (COMPACTION_SEED=<seed> reruns one)`);
  assert.ok(planned > compared / 10, `too few cases compact (${planned} of ${compared}): are the generators broken?`);
});
