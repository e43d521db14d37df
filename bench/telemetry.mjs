// The cost of tracing (issue 32): one scripted run of 5 turns (4 with two parallel tools, then an answer) through
// `agentLoop`, untraced and traced by agent-loop-wasm/otel into the OpenTelemetry SDK's in-memory exporter
// (BasicTracerProvider + SimpleSpanProcessor; 14 spans a run: invoke_agent, 5 chat, 8 execute_tool). Prints medians
// per run and per turn, the cost per span (traced − untraced, over the spans) and that cost as a ratio to a turn; the
// same into the API's no-op tracer (no SDK) shows this library's own part. No
// assertions; not a test. Needs the package and the SDK of tests/otel (scripts/setup, node tests/otel/install-pkg.mjs).
//
//   node --expose-gc bench/telemetry.mjs
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gc, loadMonitor, median, now } from "./harness.mjs";

const otelTests = join(dirname(fileURLToPath(import.meta.url)), "..", "tests", "otel");
const require = createRequire(join(otelTests, "package.json"));
const lib = require("agent-loop-wasm");
const { withTelemetry } = require("agent-loop-wasm/otel");
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");

const TURNS = 5;
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost: usage.cost, contextWindow: 1e6, maxTokens: 1e5 };
const result = { content: [{ type: "text", text: "ok" }], details: {} };
const tools = ["a", "b"].map((name) => ({ name, label: name, description: name, parameters: { type: "object", properties: {} }, execute: async () => result }));

function streamFn(_model, context) {
  const turn = context.messages.filter((m) => m.role === "assistant").length;
  const content = turn < TURNS - 1 ? [{ type: "toolCall", id: `a${turn}`, name: "a", arguments: {} }, { type: "toolCall", id: `b${turn}`, name: "b", arguments: {} }] : [{ type: "text", text: "done" }];
  const message = { role: "assistant", content, api: "faux", provider: "faux", model: "m", usage, stopReason: turn < TURNS - 1 ? "toolUse" : "stop", timestamp: 1 };
  const s = lib.createAssistantMessageEventStream();
  queueMicrotask(() => {
    s.push({ type: "start", partial: message });
    s.push({ type: "done", reason: message.stopReason, message });
  });
  return s;
}

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer("bench");
const plain = { model, convertToLlm: (m) => m };
const traced = withTelemetry(plain, { tracer });
// The API's no-op tracer (no provider registered): what this library's own work costs, without an SDK.
const tracedNoop = withTelemetry(plain, { tracer: require("@opentelemetry/api").trace.getTracer("bench") });

async function run(config) {
  const stream = lib.agentLoop([{ role: "user", content: "go", timestamp: 1 }], { messages: [], tools }, config, undefined, streamFn);
  for await (const _ of stream);
}

async function batch(config, n) {
  gc();
  const t0 = now();
  for (let i = 0; i < n; i++) await run(config);
  const ms = (now() - t0) / n;
  exporter.reset();
  return ms;
}

const monitor = loadMonitor();
await run(traced);
const spansPerRun = exporter.getFinishedSpans().length;
exporter.reset();
for (let i = 0; i < 3; i++) {
  await batch(plain, 50);
  await batch(traced, 50);
}
const off = [];
const on = [];
const noop = [];
for (let i = 0; i < 15; i++) {
  off.push(await batch(plain, 40));
  on.push(await batch(traced, 40));
  noop.push(await batch(tracedNoop, 40));
}
const runOff = median(off);
const runOn = median(on);
const runNoop = median(noop);
const perSpan = (runOn - runOff) / spansPerRun;
const perTurn = runOff / TURNS;
const load = monitor.stop();
console.log(`| run of ${TURNS} turns, untraced | ${runOff.toFixed(3)} ms (${perTurn.toFixed(3)} ms a turn) |`);
console.log(`| the same run traced (${spansPerRun} spans, in-memory exporter) | ${runOn.toFixed(3)} ms (${(runOn / runOff).toFixed(2)}×) |`);
console.log(`| cost per span | ${(perSpan * 1000).toFixed(1)} µs = ${(perSpan / perTurn).toFixed(3)} of a turn |`);
const perSpanNoop = (runNoop - runOff) / spansPerRun;
console.log(`| traced into the API's no-op tracer (this library's part) | ${runNoop.toFixed(3)} ms (${(runNoop / runOff).toFixed(2)}×): ${(perSpanNoop * 1000).toFixed(1)} µs a span = ${(perSpanNoop / perTurn).toFixed(3)} of a turn |`);
console.log(JSON.stringify({ runOff, runOn, runNoop, spansPerRun, perSpanMs: perSpan, perSpanNoopMs: perSpanNoop, perTurnMs: perTurn, ratio: perSpan / perTurn, load }));
