// The floors under (a) and (b) (issue 17): how much of a 20,000-delta run, and of 20 turns × 100 parallel tools, is
// not the loop's. Side by side, alternating, in one process (25 rounds for (a), 15 for (b), the first 5 untimed),
// with the bench's own faux stream (bench/faux.mjs):
//   full   (a) / (b) as scripts/bench runs them: agentLoop + for await, per side;
//   floor  (a) only: the faux stream into each side's stream class, consumed directly (no loop at all);
//   min    the least a loop with the reference's events can do, in plain JS: read the source stream, push each
//          event as message_update with a shallow copy of the partial into a second stream of the same class,
//          consumed by the caller (no checks, hooks, aborts or partial tracking); for (b) also each turn's tool
//          calls, executed in parallel (no lookup errors, validation or hooks) with their start/end events and
//          result messages, and the turn events.
//   (c)   the peer table's 1,000 concurrent runs (5 steps × 3 parallel tools, then a short answer; 9 rounds, the
//         first 3 untimed): `full` is each side's `runPlans` of bench/peers/sides.mjs as the peer table times it,
//         `min` the same minimal loop as (b) over the same scripted replies, 1,000 at once.
// Prints medians and the ratios to pi's full run. No assertions; not a test.
//   node --expose-gc bench/floor.mjs [--only a|b|c] (default ab)
import { loadOurs, loadReference } from "./impl.mjs";
import { median } from "./harness.mjs";
const ours = await loadOurs();
const ref = await loadReference();
const faux = await import("./faux.mjs");
const w = await import("./workloads.mjs");
const pieces = Array.from({ length: 20000 }, (_, i) => (i % 7 === 0 ? " tok" : "en "));
const plans = [faux.textPlan(pieces)];
const m = faux.model();
async function floor(impl) {
  const s = faux.scriptedStreamFn(impl.createAssistantMessageEventStream, plans)(m, {}, {});
  let n = 0;
  for await (const _ of s) n++;
  return n;
}
// The least any loop with the reference's events can do: read the source stream, emit message_update with a shallow
// copy of the partial into a second stream of the same class, which the caller consumes.
async function minimalLoop(impl) {
  const src = faux.scriptedStreamFn(impl.createAssistantMessageEventStream, plans)(m, {}, {});
  const out = impl.createAssistantMessageEventStream();
  (async () => {
    for await (const e of src) out.push({ type: "message_update", message: { ...e.partial }, assistantMessageEvent: e });
    out.end();
  })();
  let n = 0;
  for await (const _ of out) n++;
  return n;
}
async function floorA() {
const full = w.prepareManyDeltas(20000);
const t = { oursFull: [], refFull: [], oursFloor: [], refFloor: [], oursMin: [], refMin: [] };
const time = async (k, f) => { const a = performance.now(); await f(); t[k].push(performance.now() - a); };
for (let i = 0; i < 25; i++) {
  await time("oursFull", () => full.run(ours)); await time("refFull", () => full.run(ref));
  await time("oursFloor", () => floor(ours)); await time("refFloor", () => floor(ref));
  await time("oursMin", () => minimalLoop(ours)); await time("refMin", () => minimalLoop(ref));
}
for (const k of Object.keys(t)) t[k] = median(t[k].slice(5));
console.log(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, +v.toFixed(2)])));
console.log(`minimal loop on our streams / pi full = ${(t.oursMin / t.refFull).toFixed(2)}; on pi's streams ${(t.refMin / t.refFull).toFixed(2)}`);
console.log(`floor(ours stream)/refFull = ${(t.oursFloor / t.refFull).toFixed(2)}; floor(pi stream)/refFull = ${(t.refFloor / t.refFull).toFixed(2)}; ours loop part ${(t.oursFull - t.oursFloor).toFixed(2)} ms vs pi loop part ${(t.refFull - t.refFloor).toFixed(2)} ms`);
}

// (b): 20 turns of 100 parallel no-op tool calls ({} arguments), then a short answer.
const TOOLS = 100;
const TURNS = 20;
const okResult = { content: [{ type: "text", text: "ok" }], details: {} };
const toolDefs = Array.from({ length: TOOLS }, (_, i) => ({ name: `noop_${i}`, label: `noop_${i}`, description: `noop_${i} tool`, parameters: { type: "object", properties: {} }, execute: async () => okResult }));
const toolPlans = [];
for (let t = 0; t < TURNS; t++) toolPlans.push(faux.toolPlan(toolDefs.map((d, i) => ({ id: `call_${t}_${i}`, name: d.name, pieces: ["{}"] }))));
toolPlans.push(faux.textPlan(["done"]));

async function minimalToolLoop(impl, replies = toolPlans, defs = toolDefs) {
  const streamFn = faux.scriptedStreamFn(impl.createAssistantMessageEventStream, replies);
  const byName = new Map(defs.map((d) => [d.name, d]));
  const out = impl.createAssistantMessageEventStream();
  (async () => {
    const messages = [faux.userMessage("go")];
    out.push({ type: "agent_start" });
    out.push({ type: "turn_start" });
    out.push({ type: "message_start", message: messages[0] });
    out.push({ type: "message_end", message: messages[0] });
    for (;;) {
      let final;
      for await (const e of streamFn(m, { messages }, {})) {
        if (e.type === "start") out.push({ type: "message_start", message: { ...e.partial } });
        else if (e.type === "done") final = e.message;
        else out.push({ type: "message_update", message: { ...e.partial }, assistantMessageEvent: e });
      }
      messages.push(final);
      out.push({ type: "message_end", message: final });
      const calls = final.content.filter((c) => c.type === "toolCall");
      for (const c of calls) out.push({ type: "tool_execution_start", toolCallId: c.id, toolName: c.name, args: c.arguments });
      const results = await Promise.all(
        calls.map(async (c) => {
          const result = await byName.get(c.name).execute(c.id, c.arguments);
          out.push({ type: "tool_execution_end", toolCallId: c.id, toolName: c.name, result, isError: false });
          return { role: "toolResult", toolCallId: c.id, toolName: c.name, content: result.content, details: result.details, isError: false, timestamp: Date.now() };
        }),
      );
      for (const r of results) {
        out.push({ type: "message_start", message: r });
        out.push({ type: "message_end", message: r });
        messages.push(r);
      }
      out.push({ type: "turn_end", message: final, toolResults: results });
      if (calls.length === 0) break;
      out.push({ type: "turn_start" });
    }
    out.push({ type: "agent_end", messages });
    out.end();
  })();
  let n = 0;
  for await (const _ of out) n++;
  return n;
}

async function floorB() {
  const full = w.prepareParallelTools(TOOLS, TURNS);
  const t = { oursFull: [], refFull: [], oursMin: [], refMin: [] };
  const events = {};
  const time = async (k, f) => {
    const a = performance.now();
    events[k] = await f();
    t[k].push(performance.now() - a);
  };
  for (let i = 0; i < 15; i++) {
    await time("oursFull", () => full.run(ours));
    await time("refFull", () => full.run(ref));
    await time("oursMin", () => minimalToolLoop(ours));
    await time("refMin", () => minimalToolLoop(ref));
  }
  for (const k of Object.keys(t)) t[k] = median(t[k].slice(5));
  console.log("(b)", Object.fromEntries(Object.entries(t).map(([k, v]) => [k, +v.toFixed(2)])), "events", events);
  console.log(`(b) ours full / pi full = ${(t.oursFull / t.refFull).toFixed(2)}; minimal loop on our streams / pi full = ${(t.oursMin / t.refFull).toFixed(2)}; on pi's streams ${(t.refMin / t.refFull).toFixed(2)}`);
}

async function floorC() {
  const RUNS = 1000;
  const { loadSide, plans, toolNames } = await import("./peers/sides.mjs");
  const sides = { ours: await loadSide("ours"), pi: await loadSide("pi") };
  const names = toolNames(3);
  const defs = names.map((n) => ({ name: n, label: n, description: `${n} tool`, parameters: { type: "object", properties: {} }, execute: async () => okResult }));
  const replies = (tag) => plans.tools(names, 5, tag).map((p) => (p.text ? faux.textPlan(p.text) : faux.toolPlan(p.tools.map((c) => ({ id: c.id, name: c.name, pieces: ["{}"] })))));
  const batch = (f) => Promise.all(Array.from({ length: RUNS }, (_, k) => f(k)));
  const t = { oursFull: [], refFull: [], oursMin: [], refMin: [] };
  const events = {};
  const time = async (k, f) => {
    globalThis.gc?.();
    const a = performance.now();
    const out = await batch(f);
    t[k].push((performance.now() - a) / RUNS);
    events[k] = out.reduce((sum, r) => sum + (typeof r === "number" ? r : r.tools), 0) / RUNS;
  };
  for (let i = 0; i < 9; i++) {
    await time("oursFull", (k) => sides.ours.runPlans(plans.tools(names, 5, `o${i}_${k}`), names));
    await time("refFull", (k) => sides.pi.runPlans(plans.tools(names, 5, `p${i}_${k}`), names));
    await time("oursMin", (k) => minimalToolLoop(ours, replies(`mo${i}_${k}`), defs));
    await time("refMin", (k) => minimalToolLoop(ref, replies(`mp${i}_${k}`), defs));
  }
  for (const k of Object.keys(t)) t[k] = median(t[k].slice(3));
  console.log("(c) µs per run", Object.fromEntries(Object.entries(t).map(([k, v]) => [k, +(v * 1000).toFixed(1)])), "tools or events per run", events);
  console.log(`(c) ours full / pi full = ${(t.oursFull / t.refFull).toFixed(2)}; minimal loop on our streams / pi full = ${(t.oursMin / t.refFull).toFixed(2)}; on pi's streams ${(t.refMin / t.refFull).toFixed(2)}`);
}

const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : "ab";
await faux.loadArgumentsParser();
if (only.includes("a")) await floorA();
if (only.includes("b")) await floorB();
if (only.includes("c")) await floorC();
