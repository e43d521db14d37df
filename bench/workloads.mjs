// The in-process workloads (a)–(c) and the small run used by (d) and (e). Each `prepare*` builds
// its inputs once (outside timing) and returns `run(impl)`, which performs one repetition on an
// implementation and resolves to a check value (events seen) so both sides provably did the work.
//
// Import this module once per implementation with a distinct query (`workloads.mjs?impl=ours`, see
// `workloadsFor`): each import gets its own copy of this file and of faux.mjs, so the caller-side
// code (stream producer, `for await` consumer) keeps separate JIT type feedback for each side and
// neither implementation's objects make the other's call sites polymorphic.
const faux = await import(new URL(`./faux.mjs${new URL(import.meta.url).search}`, import.meta.url).href);
const { convertToLlm, model, scriptedStreamFn, textPlan, toolPlan, userMessage } = faux;
export const loadArgumentsParser = faux.loadArgumentsParser;

/** This module's copy for implementation `name` (its own faux copy; pi-ai's parser loaded). */
export async function workloadsFor(name) {
  const w = await import(new URL(`./workloads.mjs?impl=${name}`, import.meta.url).href);
  await w.loadArgumentsParser();
  return w;
}

const okResult = { content: [{ type: "text", text: "ok" }], details: {} };

function noopTool(name, parameters = { type: "object", properties: {} }) {
  return {
    name,
    label: name,
    description: `${name} tool`,
    parameters,
    execute: async () => okResult,
  };
}

/** One run, every event consumed with `for await`; returns the number of events. */
async function consume(impl, streamFn, tools = []) {
  const context = { systemPrompt: "You are a bench.", messages: [], tools };
  const config = { model: model(), convertToLlm };
  const stream = impl.agentLoop([userMessage("go")], context, config, undefined, streamFn);
  let events = 0;
  for await (const _event of stream) events++;
  return events;
}

/** (a) one run whose reply streams `deltas` small text deltas. */
export function prepareManyDeltas(deltas = 20_000) {
  const pieces = Array.from({ length: deltas }, (_, i) => (i % 7 === 0 ? " tok" : "en "));
  const plans = [textPlan(pieces)];
  return {
    label: `(a) ${deltas.toLocaleString("en")} text deltas, for await`,
    run: (impl) => consume(impl, scriptedStreamFn(impl.createAssistantMessageEventStream, plans)),
  };
}

/** (b) `tools` parallel no-op tools per turn over `turns` turns, then a short answer. */
export function prepareParallelTools(tools = 100, turns = 20) {
  const toolDefs = Array.from({ length: tools }, (_, i) => noopTool(`noop_${i}`));
  const plans = [];
  for (let t = 0; t < turns; t++) {
    plans.push(toolPlan(toolDefs.map((d, i) => ({ id: `call_${t}_${i}`, name: d.name, pieces: ["{}"] }))));
  }
  plans.push(textPlan(["done"]));
  return {
    label: `(b) ${tools} parallel no-op tools × ${turns} turns`,
    run: (impl) => consume(impl, scriptedStreamFn(impl.createAssistantMessageEventStream, plans), toolDefs),
  };
}

/** A JSON object of about `bytes` bytes: a write-file call whose content has newlines and quotes. */
export function bigArguments(bytes) {
  const line = 'const value = "hello, world"; // a line of source text that goes on a bit\n';
  const head = JSON.stringify({ path: "src/big_file.ts", content: "" });
  const room = bytes - head.length;
  const escaped = JSON.stringify(line).length - 2;
  const reps = Math.floor(room / escaped);
  const content = line.repeat(reps) + "x".repeat(room - reps * escaped);
  return JSON.stringify({ path: "src/big_file.ts", content });
}

/** (c) tool-call arguments of `bytes` bytes streamed in `fragment`-byte fragments with live partials. */
export function prepareBigArguments(bytes, fragment = 16) {
  const json = bigArguments(bytes);
  const pieces = { text: json, size: fragment };
  const writeTool = noopTool("write_file", {
    type: "object",
    properties: { path: { type: "string" }, content: { type: "string" } },
    required: ["path", "content"],
  });
  const plans = [toolPlan([{ id: "call_big", name: "write_file", pieces }]), textPlan(["written", "."])];
  return {
    label: `(c) ${(bytes / 1048576).toFixed(0)} MiB tool arguments, ${fragment}-byte fragments`,
    bytes: json.length,
    fragments: Math.ceil(json.length / fragment),
    run: (impl) => consume(impl, scriptedStreamFn(impl.createAssistantMessageEventStream, plans), [writeTool]),
  };
}

/** A small run: one short streamed text reply (used for cold start and the memory check). */
export function prepareSmallRun() {
  const plans = [textPlan(["Hello", ", ", "world", "!", " How", " can", " I", " help", "?"])];
  return {
    label: "small run (9 text deltas)",
    run: (impl) => consume(impl, scriptedStreamFn(impl.createAssistantMessageEventStream, plans)),
  };
}
