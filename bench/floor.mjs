// The floor under (a) (issue 17): how much of a 20,000-delta run is not the loop's. Side by side, alternating, in
// one process (25 rounds, the first 5 untimed), with the bench's own faux stream (bench/faux.mjs):
//   full   (a) as scripts/bench runs it: agentLoop + for await, per side;
//   floor  the faux stream into each side's stream class, consumed directly (no loop at all);
//   min    the least a loop with the reference's events can do, in plain JS: read the source stream, push each
//          event as message_update with a shallow copy of the partial into a second stream of the same class,
//          consumed by the caller (no checks, hooks, aborts or partial tracking).
// Prints medians and the ratios to pi's full run. No assertions; not a test.
//   node --expose-gc bench/floor.mjs
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
