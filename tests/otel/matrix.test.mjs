// The span-tree matrix of agent-loop-wasm/otel (issue 32) in three runtimes: matrix.mjs (runtime-neutral) runs eight
// scripted scenarios — parallel tools, errors, an abort during a tool and during a stream, the two D3 timeouts, a
// resumed run, 100 concurrent agents — and renders their spans. Here the trees are written once (EXPECTED) and
// required (1) in Node with the real SDK (sdk-trace-base, in-memory exporter) and with matrix.mjs's minimal tracer on
// @opentelemetry/api, so the minimal tracer is held to the SDK; (2) in headless Chromium (the system Chromium through
// playwright-core) on the package's ES modules as shipped (dist/web, an import map) with the minimal tracer; (3) in
// workerd on the package's workerd entry with the minimal tracer. In both, the full trees must also equal the SDK's
// of (1). Both load matrix.mjs and script.mjs as they are, the package from this folder's node_modules (installed there
// by install-pkg.mjs), and one esbuild bundle of agent-loop-wasm/otel with @opentelemetry/api, as a bundler would make.
// The page's server binds 127.0.0.1 and closes; Chromium and workerd are killed by PID when their test ends.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as api from "@opentelemetry/api";
import { HERE, lib, otel, tracing } from "./helpers.mjs";
import { minimalTracing, runMatrix } from "./matrix.mjs";
import { bundle, runInChromium, runInWorkerd } from "../runtimes.mjs";

const PKG = join(HERE, "node_modules", "agent-loop-wasm");
const T = { timeout: 60_000 };

/**
 * The trees every runtime must give, by matrix.mjs's renderTree: the parallel run in full (every attribute, event and
 * link: spans.test.mjs's PARALLEL_TREE, with span kinds), every scenario in brief (KEY_ATTRIBUTES). The brief trees
 * have the spans, nesting, statuses, error types and call ids of spans.test.mjs's trees of the same runs.
 */
const EXPECTED = {
  parallelFull: [
    'invoke_agent helper INTERNAL UNSET agent_loop.metadata.team="a" agent_loop.run.kind="prompt" agent_loop.run.model_requests=2 agent_loop.run.outcome="completed" agent_loop.run.tool_calls=2 agent_loop.run.turns=2 agent_loop.usage.cost_usd=0.25 gen_ai.agent.name="helper" gen_ai.operation.name="invoke_agent" gen_ai.usage.cache_creation.input_tokens=1 gen_ai.usage.cache_read.input_tokens=3 gen_ai.usage.input_tokens=34 gen_ai.usage.output_tokens=7 events[agent_loop.turn.start{agent_loop.turn=1}, agent_loop.turn.end{agent_loop.turn=1 agent_loop.turn.tool_results=2}, agent_loop.turn.start{agent_loop.turn=2}, agent_loop.turn.end{agent_loop.turn=2 agent_loop.turn.tool_results=0}]',
    '  chat m-1 CLIENT UNSET agent_loop.api="openai-completions" agent_loop.usage.cost_usd=0.25 gen_ai.operation.name="chat" gen_ai.provider.name="openai" gen_ai.request.model="m-1" gen_ai.response.finish_reasons=["tool_call"] gen_ai.response.id="r-1" gen_ai.response.model="m-1-2026" gen_ai.response.time_to_first_chunk=<t> gen_ai.system="openai" gen_ai.usage.cache_creation.input_tokens=1 gen_ai.usage.cache_read.input_tokens=3 gen_ai.usage.input_tokens=14 gen_ai.usage.output_tokens=5 events[gen_ai.first_chunk{gen_ai.response.time_to_first_chunk=<t>}]',
    '  execute_tool slow INTERNAL UNSET agent_loop.tool.execute_ms=<t> gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="c1" gen_ai.tool.name="slow" gen_ai.tool.type="function"',
    '    GET /slow INTERNAL UNSET',
    '  execute_tool fast INTERNAL UNSET agent_loop.tool.execute_ms=<t> gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="c2" gen_ai.tool.name="fast" gen_ai.tool.type="function"',
    '  chat m-1 CLIENT UNSET agent_loop.api="openai-completions" agent_loop.usage.cost_usd=0 gen_ai.operation.name="chat" gen_ai.provider.name="openai" gen_ai.request.model="m-1" gen_ai.response.finish_reasons=["stop"] gen_ai.response.id="r-2" gen_ai.response.model="m-1" gen_ai.response.time_to_first_chunk=<t> gen_ai.system="openai" gen_ai.usage.cache_creation.input_tokens=0 gen_ai.usage.cache_read.input_tokens=0 gen_ai.usage.input_tokens=20 gen_ai.usage.output_tokens=2 events[gen_ai.first_chunk{gen_ai.response.time_to_first_chunk=<t>}]',
  ].join("\n"),
  parallel: [
    'invoke_agent helper INTERNAL UNSET agent_loop.run.kind="prompt" agent_loop.run.model_requests=2 agent_loop.run.outcome="completed" agent_loop.run.tool_calls=2 agent_loop.run.turns=2 gen_ai.agent.name="helper" gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["tool_call"]',
    '  execute_tool slow INTERNAL UNSET gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="c1" gen_ai.tool.name="slow"',
    '    GET /slow INTERNAL UNSET',
    '  execute_tool fast INTERNAL UNSET gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="c2" gen_ai.tool.name="fast"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["stop"]',
  ].join("\n"),
  errors: [
    'invoke_agent INTERNAL ERROR(error) agent_loop.run.kind="prompt" agent_loop.run.model_requests=2 agent_loop.run.outcome="error" agent_loop.run.tool_calls=4 agent_loop.run.turns=2 error.type="error" gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["tool_call"]',
    '  execute_tool boom INTERNAL ERROR(tool_error) error.type="tool_error" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="e1" gen_ai.tool.name="boom"',
    '  execute_tool rm INTERNAL ERROR(blocked) error.type="blocked" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="e2" gen_ai.tool.name="rm"',
    '  execute_tool nope INTERNAL ERROR(tool_not_found) error.type="tool_not_found" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="e3" gen_ai.tool.name="nope"',
    '  execute_tool boom INTERNAL ERROR(invalid_arguments) error.type="invalid_arguments" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="e4" gen_ai.tool.name="boom"',
    '  chat m-1 CLIENT ERROR(error) error.type="error" gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["error"]',
  ].join("\n"),
  abortTool: [
    'invoke_agent INTERNAL ERROR(aborted) agent_loop.run.kind="prompt" agent_loop.run.model_requests=1 agent_loop.run.outcome="aborted" agent_loop.run.tool_calls=1 agent_loop.run.turns=1 error.type="aborted" gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["tool_call"]',
    '  execute_tool wait INTERNAL ERROR(aborted) error.type="aborted" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="w1" gen_ai.tool.name="wait"',
  ].join("\n"),
  abortStream: [
    'invoke_agent INTERNAL ERROR(aborted) agent_loop.run.kind="prompt" agent_loop.run.model_requests=1 agent_loop.run.outcome="aborted" agent_loop.run.tool_calls=0 agent_loop.run.turns=1 error.type="aborted" gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT ERROR(aborted) error.type="aborted" gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["error"]',
  ].join("\n"),
  toolTimeout: [
    'invoke_agent INTERNAL UNSET agent_loop.run.kind="prompt" agent_loop.run.model_requests=2 agent_loop.run.outcome="completed" agent_loop.run.tool_calls=2 agent_loop.run.turns=2 gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["tool_call"]',
    '  execute_tool stuck INTERNAL ERROR(timeout) error.type="timeout" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="t1" gen_ai.tool.name="stuck"',
    '  execute_tool quick INTERNAL UNSET gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="t2" gen_ai.tool.name="quick"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["stop"]',
  ].join("\n"),
  streamTimeout: [
    'invoke_agent INTERNAL ERROR(timeout) agent_loop.run.kind="prompt" agent_loop.run.model_requests=1 agent_loop.run.outcome="error" agent_loop.run.tool_calls=0 agent_loop.run.turns=1 error.type="timeout" gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT ERROR(timeout) error.type="timeout" gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["error"]',
  ].join("\n"),
  resumed: [
    'invoke_agent INTERNAL ERROR(aborted) agent_loop.run.kind="prompt" agent_loop.run.model_requests=1 agent_loop.run.outcome="aborted" agent_loop.run.tool_calls=2 agent_loop.run.turns=1 error.type="aborted" gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["tool_call"]',
    '  execute_tool work INTERNAL ERROR(aborted) error.type="aborted" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="r1" gen_ai.tool.name="work"',
    '  execute_tool charge INTERNAL ERROR(aborted) error.type="aborted" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="r2" gen_ai.tool.name="charge"',
    'invoke_agent INTERNAL UNSET agent_loop.run.kind="resume" agent_loop.run.model_requests=1 agent_loop.run.outcome="completed" agent_loop.run.tool_calls=2 agent_loop.run.turns=2 gen_ai.operation.name="invoke_agent" link{agent_loop.link="resumes"}->run 1',
    '  execute_tool charge INTERNAL ERROR(interrupted) error.type="interrupted" gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="r2" gen_ai.tool.name="charge"',
    '  execute_tool work INTERNAL UNSET gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="r1" gen_ai.tool.name="work"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["stop"]',
  ].join("\n"),
  concurrentAgents: [
    '100 runs:',
    'invoke_agent INTERNAL UNSET agent_loop.metadata.n=N agent_loop.run.kind="prompt" agent_loop.run.model_requests=2 agent_loop.run.outcome="completed" agent_loop.run.tool_calls=2 agent_loop.run.turns=2 gen_ai.operation.name="invoke_agent"',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["tool_call"]',
    '  execute_tool a INTERNAL UNSET gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="x" gen_ai.tool.name="a"',
    '    inner a INTERNAL UNSET n=N',
    '  execute_tool b INTERNAL UNSET gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="y" gen_ai.tool.name="b"',
    '    inner b INTERNAL UNSET n=N',
    '  chat m-1 CLIENT UNSET gen_ai.operation.name="chat" gen_ai.response.finish_reasons=["stop"]',
  ].join("\n"),
};

/** The SDK's finished spans (ReadableSpan) in matrix.mjs's normalized shape; `order` is the start order. */
function sdkTracing() {
  const t = tracing();
  return {
    tracer: t.tracer,
    spans: () =>
      t.spans().map((s) => ({
        order: t.order.get(s.spanContext().spanId),
        name: s.name,
        kind: s.kind,
        traceId: s.spanContext().traceId,
        spanId: s.spanContext().spanId,
        parentSpanId: s.parentSpanContext?.spanId,
        status: { code: s.status.code, ...(s.status.message !== undefined ? { message: s.status.message } : {}) },
        attributes: { ...s.attributes },
        events: s.events.map((e) => ({ name: e.name, attributes: { ...(e.attributes ?? {}) } })),
        links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: { ...(l.attributes ?? {}) } })),
      })),
  };
}

/** `trees` (runMatrix's) are the expected ones, and each full tree is `full`'s (the SDK's) when given. */
function assertTrees(trees, where, full) {
  assert.equal(trees.parallel?.full, EXPECTED.parallelFull, `${where}: parallel, in full`);
  const { parallelFull: _, ...brief } = EXPECTED;
  assert.deepEqual(Object.keys(trees), Object.keys(brief), `${where}: the scenarios`);
  for (const [name, tree] of Object.entries(brief)) assert.equal(trees[name].brief, tree, `${where}: ${name}`);
  if (full !== undefined) for (const name of Object.keys(brief)) assert.equal(trees[name].full, full[name].full, `${where}: ${name}, in full, as the SDK's`);
}

/** The SDK's trees, computed once (the first test), for the other runtimes' full trees to equal. */
let sdkTrees;

test("issue 32, Node: the real SDK (in-memory exporter) and the minimal tracer give the exact expected span trees", T, async () => {
  sdkTrees = await runMatrix({ lib, otel, api }, sdkTracing);
  assertTrees(sdkTrees, "Node, the SDK");
  assertTrees(await runMatrix({ lib, otel, api }, () => minimalTracing(api)), "Node, the minimal tracer", sdkTrees);
});

/**
 * One ES module bundling agent-loop-wasm/otel (the package's "import" file, dist/web/otel.js) and @opentelemetry/api
 * from this folder's node_modules, as a bundler would (esbuild, browser platform); both runtimes load it.
 */
let otelBundle;
function bundleOtel() {
  otelBundle ??= bundle('export * as otel from "agent-loop-wasm/otel";\nexport * as api from "@opentelemetry/api";\n', HERE);
  return otelBundle;
}

/** The SDK's trees of the first test, or this file's own SDK run when that test was filtered out. */
async function sdkReference() {
  sdkTrees ??= await runMatrix({ lib, otel, api }, sdkTracing);
  return sdkTrees;
}

/** What the page and the Worker run: the matrix on the package and the bundled entry, with the minimal tracer. */
const MAIN = `import * as lib from "agent-loop-wasm";
import { otel, api } from "./otel-api.mjs";
import { runMatrix, minimalTracing } from "./matrix.mjs";
export default () => runMatrix({ lib, otel, api }, () => minimalTracing(api));
`;

async function files() {
  const files = { "/otel-api.mjs": await bundleOtel() };
  for (const f of ["matrix.mjs", "script.mjs"]) files[`/${f}`] = readFileSync(join(HERE, f), "utf8");
  return files;
}

test("issue 32, Chromium: the same exact span trees in a page (the package's ES modules, the minimal tracer on @opentelemetry/api)", T, async () => {
  const [reference, served] = await Promise.all([sdkReference(), files()]);
  const { result, problems } = await runInChromium({ pkgDir: PKG, files: served, main: MAIN });
  assert.deepEqual(problems, []);
  assertTrees(result, "Chromium", reference);
});

test("issue 32, workerd: the same exact span trees in a Worker (the package's workerd entry, the minimal tracer on @opentelemetry/api)", T, async () => {
  const [reference, served] = await Promise.all([sdkReference(), files()]);
  assertTrees(await runInWorkerd({ pkgDir: PKG, files: served, main: MAIN }), "workerd", reference);
});
