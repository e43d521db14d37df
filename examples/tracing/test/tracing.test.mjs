// The example as its README runs it (`npm start`, the offline scripted model) while an OTLP/HTTP receiver listens on
// 127.0.0.1 as the collector (OTEL_EXPORTER_OTLP_ENDPOINT): the spans it receives, decoded from OTLP's JSON
// encoding, form the exact tree of the run (names, kinds, parent links, key attributes), and the console exporter
// printed the same spans (names and span ids) on stdout.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { otlpReceiver } from "./otlp-receiver.mjs";

const EXAMPLE = fileURLToPath(new URL("..", import.meta.url));
let receiver;

before(async () => {
  receiver = await otlpReceiver();
});
after(() => receiver.close());

/** `npm start [-- prompt]` in the example; resolves with its status and output once it exited. */
function npmStart(env, prompt) {
  const child = spawn("npm", ["start", ...(prompt ? ["--", prompt] : [])], {
    cwd: EXAMPLE,
    env: { ...process.env, OPENAI_API_KEY: "", OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Attributes shown in the tree, per span kind of name (the others, times and token counts, are checked apart). */
const SHOWN = [
  "gen_ai.operation.name",
  "gen_ai.agent.name",
  "agent_loop.metadata.example",
  "agent_loop.run.kind",
  "agent_loop.run.outcome",
  "agent_loop.run.turns",
  "agent_loop.run.model_requests",
  "agent_loop.run.tool_calls",
  "gen_ai.provider.name",
  "gen_ai.request.model",
  "gen_ai.response.finish_reasons",
  "gen_ai.tool.name",
  "gen_ai.tool.call.id",
  "error.type",
  "weather.city",
];

/** The spans as an indented tree (children in start order), one line each: name, kind, status, shown attributes. */
function render(spans) {
  const children = (parent) =>
    spans.filter((s) => s.parentSpanId === parent).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.name < b.name ? -1 : 1));
  const lines = [];
  const walk = (span, depth) => {
    const shown = SHOWN.filter((k) => k in span.attributes).map((k) => `${k}=${JSON.stringify(span.attributes[k])}`);
    lines.push(`${"  ".repeat(depth)}${[span.name, span.kind, span.status, ...shown].join(" ")}`);
    for (const child of children(span.spanId)) walk(child, depth + 1);
  };
  for (const root of children(undefined)) walk(root, 0);
  return lines;
}

/** The (name, span id) pairs the console exporter printed (console.dir of each span as it ended). */
function printed(stdout) {
  return [...stdout.matchAll(/\n {2}name: '([^']+)',\n {2}id: '([0-9a-f]{16})',/g)].map(([, name, id]) => `${name} ${id}`).sort();
}

const RUN = (outcome, turns, requests, calls) =>
  `invoke_agent weather-bot INTERNAL UNSET gen_ai.operation.name="invoke_agent" gen_ai.agent.name="weather-bot" agent_loop.metadata.example="tracing" agent_loop.run.kind="prompt" agent_loop.run.outcome="${outcome}" agent_loop.run.turns=${turns} agent_loop.run.model_requests=${requests} agent_loop.run.tool_calls=${calls}`;
const CHAT = (reason) =>
  `  chat scripted-weather CLIENT UNSET gen_ai.operation.name="chat" gen_ai.provider.name="scripted" gen_ai.request.model="scripted-weather" gen_ai.response.finish_reasons=["${reason}"]`;
const TOOL = (name, id, status = "UNSET", error) =>
  `  execute_tool ${name} INTERNAL ${status} gen_ai.operation.name="execute_tool" gen_ai.tool.name="${name}" gen_ai.tool.call.id="${id}"${error ? ` error.type="${error}"` : ""}`;

test("OTLP/HTTP to the collector at OTEL_EXPORTER_OTLP_ENDPOINT: the exact span tree of the run, and the console exporter printed it", async () => {
  const run = await npmStart({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  assert.equal(run.code, 0, run.stderr);
  const spans = receiver.spans.splice(0);
  // What the example prints (npm's own "> start" lines and the console exporter's span objects left out).
  const lines = run.stdout.split("\n").filter((l) => /^[>→A-Za-z]/.test(l) && !["> start", "> node agent.mjs"].includes(l));
  assert.deepEqual(lines, [
    "> What's the weather and the air quality in Oslo?",
    '→ get_weather({"city":"Oslo"})',
    '→ get_air_quality({"city":"Oslo"})',
    "In Oslo: 4 °C, light snow; air quality good (AQI 21).",
    `spans sent to ${receiver.url}/v1/traces`,
  ]);
  assert.deepEqual(receiver.refused, []);
  assert.deepEqual(render(spans), [
    RUN("completed", 2, 2, 2),
    CHAT("tool_call"),
    TOOL("get_weather", "call_1"),
    '    weather lookup INTERNAL UNSET weather.city="Oslo"',
    TOOL("get_air_quality", "call_2"),
    CHAT("stop"),
  ]);
  assert.equal(new Set(spans.map((s) => s.traceId)).size, 1, "one trace");
  for (const s of spans) {
    assert.deepEqual(s.resource, { "service.name": "weather-bot-example" });
    assert.equal(s.scope, "weather-bot-example");
  }
  // The run's token totals are the sums of its requests'; the scripted model reports some on each.
  const [root] = spans.filter((s) => s.parentSpanId === undefined);
  const chats = spans.filter((s) => s.name.startsWith("chat "));
  for (const key of ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"]) {
    assert.ok(chats.every((c) => c.attributes[key] > 0), key);
    assert.equal(root.attributes[key], chats[0].attributes[key] + chats[1].attributes[key], key);
  }
  assert.ok(chats.every((c) => c.events.includes("gen_ai.first_chunk") && c.attributes["gen_ai.response.time_to_first_chunk"] >= 0));
  // The parallel calls overlap: the air quality ends while the weather lookup still waits.
  const [weather, air] = ["execute_tool get_weather", "execute_tool get_air_quality"].map((n) => spans.find((s) => s.name === n));
  assert.ok(air.start >= weather.start && air.end < weather.end, "the two calls overlap");
  // No content without recordInputs/recordOutputs: neither the prompt nor a result is in any span.
  const all = JSON.stringify(spans.map((s) => s.attributes));
  assert.ok(!all.includes("What's the weather") && !all.includes("light snow"), "no content");

  assert.deepEqual(printed(run.stdout), spans.map((s) => `${s.name} ${s.spanId}`).sort(), "the console exporter printed the same spans");
});

test("a tool that fails: its span and its own span end in ERROR, the run goes on; console only without an endpoint", async () => {
  const run = await npmStart({}, "What's the weather in Paris?");
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\n\(failed\) no weather for Paris\.\nspans printed above \(set OTEL_EXPORTER_OTLP_ENDPOINT to send them to a collector\)\n$/);
  assert.deepEqual(receiver.spans, [], "nothing sent without an endpoint");
  assert.deepEqual(
    printed(run.stdout).map((l) => l.split(" ").slice(0, -1).join(" ")),
    ["chat scripted-weather", "chat scripted-weather", "execute_tool get_weather", "invoke_agent weather-bot", "weather lookup"],
  );

  const traced = await npmStart({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, "What's the weather in Paris?");
  assert.equal(traced.code, 0, traced.stderr);
  assert.deepEqual(render(receiver.spans.splice(0)), [
    RUN("completed", 2, 2, 1),
    CHAT("tool_call"),
    TOOL("get_weather", "call_1", "ERROR", "tool_error"),
    '    weather lookup INTERNAL ERROR weather.city="Paris"',
    CHAT("stop"),
  ]);
});

test("a collector that is not there: the answer still comes, the failed export is reported and the status is 1", async () => {
  const closed = await otlpReceiver();
  await closed.close();
  const run = await npmStart({ OTEL_EXPORTER_OTLP_ENDPOINT: closed.url });
  assert.equal(run.code, 1);
  assert.match(run.stdout, /\nIn Oslo: 4 °C, light snow; air quality good \(AQI 21\)\.\n/);
  assert.match(run.stderr, new RegExp(`the spans could not be sent to ${closed.url}/v1/traces: .*ECONNREFUSED`));
});
