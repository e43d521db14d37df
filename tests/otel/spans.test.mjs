// agent-loop-wasm/otel (issue 32) with the real OpenTelemetry SDK (sdk-trace-base, in-memory exporter): the exact
// span trees of scripted runs — parallel tools, errors, blocked calls, aborts, D3 timeouts, a pause for approval, a
// resumed run — and 100 concurrent runs whose spans never cross. Run after node tests/otel/install-pkg.mjs.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import * as api from "@opentelemetry/api";
import { trace } from "@opentelemetry/api";
import { HERE, lib, otel, tracing, render, scripted, model, convertToLlm, tool, ok, sleep, user, usage } from "./helpers.mjs";
import { runParallel } from "./scenarios.mjs";
import { SCENARIOS } from "./matrix.mjs";

const T = { timeout: 20_000 };

async function drain(stream) {
  for await (const _ of stream);
  return stream.result();
}

/** The full tree of the parallel script (every attribute; times shown as <t>). */
const PARALLEL_TREE = [
  'invoke_agent helper UNSET agent_loop.metadata.team="a" agent_loop.run.kind="prompt" agent_loop.run.model_requests=2 agent_loop.run.outcome="completed" agent_loop.run.tool_calls=2 agent_loop.run.turns=2 agent_loop.usage.cost_usd=0.25 gen_ai.agent.name="helper" gen_ai.operation.name="invoke_agent" gen_ai.usage.cache_creation.input_tokens=1 gen_ai.usage.cache_read.input_tokens=3 gen_ai.usage.input_tokens=34 gen_ai.usage.output_tokens=7 events[agent_loop.turn.start{agent_loop.turn=1}, agent_loop.turn.end{agent_loop.turn=1 agent_loop.turn.tool_results=2}, agent_loop.turn.start{agent_loop.turn=2}, agent_loop.turn.end{agent_loop.turn=2 agent_loop.turn.tool_results=0}]',
  '  chat m-1 UNSET agent_loop.api="openai-completions" agent_loop.usage.cost_usd=0.25 gen_ai.operation.name="chat" gen_ai.provider.name="openai" gen_ai.request.model="m-1" gen_ai.response.finish_reasons=["tool_call"] gen_ai.response.id="r-1" gen_ai.response.model="m-1-2026" gen_ai.response.time_to_first_chunk=<t> gen_ai.system="openai" gen_ai.usage.cache_creation.input_tokens=1 gen_ai.usage.cache_read.input_tokens=3 gen_ai.usage.input_tokens=14 gen_ai.usage.output_tokens=5 events[gen_ai.first_chunk{gen_ai.response.time_to_first_chunk=<t>}]',
  '  execute_tool slow UNSET agent_loop.tool.execute_ms=<t> gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="c1" gen_ai.tool.name="slow" gen_ai.tool.type="function"',
  "    GET /slow UNSET",
  '  execute_tool fast UNSET agent_loop.tool.execute_ms=<t> gen_ai.operation.name="execute_tool" gen_ai.tool.call.id="c2" gen_ai.tool.name="fast" gen_ai.tool.type="function"',
  '  chat m-1 UNSET agent_loop.api="openai-completions" agent_loop.usage.cost_usd=0 gen_ai.operation.name="chat" gen_ai.provider.name="openai" gen_ai.request.model="m-1" gen_ai.response.finish_reasons=["stop"] gen_ai.response.id="r-2" gen_ai.response.model="m-1" gen_ai.response.time_to_first_chunk=<t> gen_ai.system="openai" gen_ai.usage.cache_creation.input_tokens=0 gen_ai.usage.cache_read.input_tokens=0 gen_ai.usage.input_tokens=20 gen_ai.usage.output_tokens=2 events[gen_ai.first_chunk{gen_ai.response.time_to_first_chunk=<t>}]',
].join("\n");

const ns = (hr) => hr[0] * 1e9 + hr[1];

for (const entry of ["agentLoop", "runAgentLoop", "Agent"]) {
  test(`issue 32: ${entry}, parallel tools: the exact span tree, one trace, tools overlapping, a tool's own span under its call`, T, async () => {
    const t = await runParallel(entry);
    const spans = t.spans();
    assert.equal(render(spans, t.order), PARALLEL_TREE);
    assert.equal(new Set(spans.map((s) => s.spanContext().traceId)).size, 1, "one trace");
    const [slow, fast] = ["execute_tool slow", "execute_tool fast"].map((n) => spans.find((s) => s.name === n));
    // Parallel: fast starts after slow started and ends before slow ends (slow waits for it).
    assert.ok(ns(fast.startTime) >= ns(slow.startTime) && ns(fast.endTime) < ns(slow.endTime), "the two calls overlap");
    // Nothing secret, no content: the key and the prompt appear nowhere.
    const all = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.status, s.events]));
    assert.ok(!all.includes("sk-SECRET"), "no API key");
    assert.ok(!all.includes("PROMPT-TEXT") && !all.includes("slow ok"), "no content without recordInputs/recordOutputs");
  });
}

test("issue 32: content only on opt-in: recordInputs gives the request's messages and tool arguments, recordOutputs the response, results and error texts", T, async () => {
  const t = await runParallel("agentLoop", { recordInputs: true, recordOutputs: true });
  const spans = t.spans();
  const byName = (n) => spans.filter((s) => s.name === n);
  const [chat1, chat2] = byName("chat m-1");
  // The system message is the loop's declaration of the tools (L-3.4: no prompt, toolsAdded).
  assert.equal(
    chat1.attributes["gen_ai.input.messages"],
    JSON.stringify([{ role: "system", parts: [{ type: "text", content: "" }] }, { role: "user", parts: [{ type: "text", content: "PROMPT-TEXT" }] }]),
  );
  assert.equal(
    chat1.attributes["gen_ai.output.messages"],
    JSON.stringify([{ role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "slow", arguments: { n: 1 } }, { type: "tool_call", id: "c2", name: "fast", arguments: { n: 2 } }], finish_reason: "tool_call" }]),
  );
  assert.equal(JSON.parse(chat2.attributes["gen_ai.input.messages"]).at(-1).parts[0].type, "tool_call_response");
  assert.equal(chat2.attributes["gen_ai.output.messages"], JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "done" }], finish_reason: "stop" }]));
  const [slow] = byName("execute_tool slow");
  assert.equal(slow.attributes["gen_ai.tool.call.arguments"], '{"n":1}');
  assert.equal(slow.attributes["gen_ai.tool.call.result"], JSON.stringify({ content: [{ type: "text", text: "slow ok" }], details: {} }));
  const all = JSON.stringify(spans.map((s) => [s.attributes, s.status]));
  assert.ok(!all.includes("sk-SECRET"), "the key never, even with content recorded");
});

test("issue 32: errors: a throwing tool, a blocked call, an unknown tool, invalid arguments, a provider error (its text only on opt-in)", T, async () => {
  for (const recordOutputs of [false, true]) {
    const t = tracing();
    await SCENARIOS.errors({ lib, otel, api }, t, { recordOutputs }); // tests/otel/matrix.mjs's scenario
    const tree = render(t.spans(), t.order, { brief: true });
    if (!recordOutputs) {
      assert.equal(
        tree,
        [
          'invoke_agent ERROR(error) agent_loop.run.kind="prompt" agent_loop.run.outcome="error" error.type="error"',
          "  chat m-1 UNSET",
          '  execute_tool boom ERROR(tool_error) error.type="tool_error" gen_ai.tool.call.id="e1"',
          '  execute_tool rm ERROR(blocked) error.type="blocked" gen_ai.tool.call.id="e2"',
          '  execute_tool nope ERROR(tool_not_found) error.type="tool_not_found" gen_ai.tool.call.id="e3"',
          '  execute_tool boom ERROR(invalid_arguments) error.type="invalid_arguments" gen_ai.tool.call.id="e4"',
          '  chat m-1 ERROR(error) error.type="error"',
        ].join("\n"),
      );
      assert.ok(!JSON.stringify(t.spans().map((s) => [s.attributes, s.status, s.events])).includes("sk-SECRET"), "no key, no provider text");
    } else {
      // Opted in: the texts are the status messages (the provider's text is the caller's to record or not).
      const lines = tree.split("\n");
      assert.equal(lines[2], '  execute_tool boom ERROR(disk on fire) error.type="tool_error" gen_ai.tool.call.id="e1"');
      assert.equal(lines[3], '  execute_tool rm ERROR(not here) error.type="blocked" gen_ai.tool.call.id="e2"');
      assert.equal(lines[4], '  execute_tool nope ERROR(Tool nope not found) error.type="tool_not_found" gen_ai.tool.call.id="e3"');
      assert.equal(lines.at(-1), '  chat m-1 ERROR(401 Incorrect API key provided: sk-SECRET-1) error.type="error"');
      assert.ok(lines[5].startsWith('  execute_tool boom ERROR(Validation failed for tool "boom":'));
    }
  }
});

test("issue 32: abort during a tool (Agent) and during a stream (agentLoop): ERROR(aborted) on the run and on what it cut", T, async () => {
  // The scenarios of tests/otel/matrix.mjs (traced there in Chromium and workerd too).
  {
    const t = tracing();
    await SCENARIOS.abortTool({ lib, otel, api }, t);
    assert.equal(
      render(t.spans(), t.order, { brief: true }),
      [
        'invoke_agent ERROR(aborted) agent_loop.run.kind="prompt" agent_loop.run.outcome="aborted" error.type="aborted"',
        "  chat m-1 UNSET",
        '  execute_tool wait ERROR(aborted) error.type="aborted" gen_ai.tool.call.id="w1"',
      ].join("\n"),
    );
  }
  {
    const t = tracing();
    await SCENARIOS.abortStream({ lib, otel, api }, t);
    assert.equal(
      render(t.spans(), t.order, { brief: true }),
      ['invoke_agent ERROR(aborted) agent_loop.run.kind="prompt" agent_loop.run.outcome="aborted" error.type="aborted"', '  chat m-1 ERROR(aborted) error.type="aborted"'].join("\n"),
    );
  }
});

test("issue 32: D3 timeouts: a tool past toolTimeoutMs is ERROR(timeout) and the run goes on; a stream past streamIdleTimeoutMs ends the run ERROR(timeout)", T, async () => {
  {
    const t = tracing();
    const { streamFn } = scripted([{ calls: [["t1", "stuck", {}], ["t2", "quick", {}]] }, { text: "ok" }]);
    const tools = [tool("stuck", () => new Promise(() => {})), tool("quick", async () => ok("q"))];
    const config = otel.withTelemetry({ model, convertToLlm, toolTimeoutMs: 20 }, { tracer: t.tracer });
    await drain(lib.agentLoop([user("go")], { messages: [], tools }, config, undefined, streamFn));
    assert.equal(
      render(t.spans(), t.order, { brief: true }),
      [
        'invoke_agent UNSET agent_loop.run.kind="prompt" agent_loop.run.outcome="completed"',
        "  chat m-1 UNSET",
        '  execute_tool stuck ERROR(timeout) error.type="timeout" gen_ai.tool.call.id="t1"',
        '  execute_tool quick UNSET gen_ai.tool.call.id="t2"',
        "  chat m-1 UNSET",
      ].join("\n"),
    );
  }
  {
    const t = tracing();
    const { streamFn } = scripted([{ hang: true }]);
    const config = otel.withTelemetry({ model, convertToLlm, streamIdleTimeoutMs: 20 }, { tracer: t.tracer });
    await drain(lib.agentLoop([user("go")], { messages: [] }, config, undefined, streamFn));
    assert.equal(
      render(t.spans(), t.order, { brief: true }),
      ['invoke_agent ERROR(timeout) agent_loop.run.kind="prompt" agent_loop.run.outcome="error" error.type="timeout"', '  chat m-1 ERROR(timeout) error.type="timeout"'].join("\n"),
    );
  }
});

test("issue 32: a run a limit stopped ends UNSET with outcome limit and the limit's name, scope, maximum and figure", T, async () => {
  const t = tracing();
  const { streamFn } = scripted([{ calls: [["c1", "quick", {}]] }, { calls: [["c2", "quick", {}]] }, { text: "never asked" }]);
  const tools = [tool("quick", async () => ok("q"))];
  const config = otel.withTelemetry({ model, convertToLlm, limits: { maxTurns: 2 } }, { tracer: t.tracer });
  const stream = lib.agentLoop([user("go")], { messages: [], tools }, config, undefined, streamFn);
  let end;
  for await (const e of stream) if (e.type === "agent_end") end = e;
  assert.equal(end.limitReached.limit, "maxTurns");
  assert.equal(
    render(t.spans(), t.order, { brief: true }),
    [
      'invoke_agent UNSET agent_loop.run.kind="prompt" agent_loop.run.limit="maxTurns" agent_loop.run.limit.max=2 agent_loop.run.limit.scope="run" agent_loop.run.limit.value=2 agent_loop.run.outcome="limit"',
      "  chat m-1 UNSET",
      '  execute_tool quick UNSET gen_ai.tool.call.id="c1"',
      "  chat m-1 UNSET",
      '  execute_tool quick UNSET gen_ai.tool.call.id="c2"',
    ].join("\n"),
  );
});

test("issue 32: a call waiting for approval ends with the paused run (UNSET, approval pending); the approving run traces it approved", T, async () => {
  const t = tracing();
  const { streamFn } = scripted([{ calls: [["a1", "charge", { n: 5 }], ["a2", "look", {}]] }, { text: "charged" }]);
  const tools = [tool("charge", async () => ok("charged"), { needsApproval: true }), tool("look", async () => ok("seen"))];
  const agent = otel.withTelemetry(new lib.Agent({ initialState: { model, tools }, streamFn }), { tracer: t.tracer });
  await agent.prompt("go");
  await agent.approve("a1");
  assert.equal(
    render(t.spans(), t.order, { brief: true }),
    [
      'invoke_agent UNSET agent_loop.run.kind="prompt" agent_loop.run.outcome="paused" agent_loop.run.pending_approvals=1',
      "  chat m-1 UNSET",
      '  execute_tool charge UNSET agent_loop.tool.approval="pending" gen_ai.tool.call.id="a1"',
      '  execute_tool look UNSET gen_ai.tool.call.id="a2"',
      'invoke_agent UNSET agent_loop.run.kind="approvals" agent_loop.run.outcome="completed"',
      '  execute_tool charge UNSET agent_loop.tool.approval="approved" gen_ai.tool.call.id="a1"',
      "  chat m-1 UNSET",
    ].join("\n"),
  );
  assert.deepEqual(
    t.spans().find((s) => s.attributes["agent_loop.tool.approval"] === "pending").events.map((e) => e.name),
    ["agent_loop.tool.approval_request"],
  );
});

test("issue 32: a resumed run (Agent.restore of an interrupted run's checkpoints, resume()) is kind resume, links to the interrupted run's span, and a resume: \"fail\" call in flight is ERROR(interrupted)", T, async () => {
  // The scenario of tests/otel/matrix.mjs (traced there in Chromium and workerd too): agent A interrupted while both
  // its tools run, Agent.restore of its checkpoints with resumeOf, resume(); `charge` is resume: "fail".
  const t = tracing();
  const { a, interrupted } = await SCENARIOS.resumed({ lib, otel, api }, t);
  assert.equal(otel.runContext(a), undefined, "idle: no run context");
  assert.equal(
    render(t.spans(), t.order, { brief: true }),
    [
      'invoke_agent ERROR(aborted) agent_loop.run.kind="prompt" agent_loop.run.outcome="aborted" error.type="aborted"',
      "  chat m-1 UNSET",
      '  execute_tool work ERROR(aborted) error.type="aborted" gen_ai.tool.call.id="r1"',
      '  execute_tool charge ERROR(aborted) error.type="aborted" gen_ai.tool.call.id="r2"',
      'invoke_agent UNSET agent_loop.run.kind="resume" agent_loop.run.outcome="completed" link:<resumes>',
      '  execute_tool charge ERROR(interrupted) error.type="interrupted" gen_ai.tool.call.id="r2"',
      '  execute_tool work UNSET gen_ai.tool.call.id="r1"',
      "  chat m-1 UNSET",
    ].join("\n"),
  );
  const resumed = t.spans().find((s) => s.attributes["agent_loop.run.kind"] === "resume");
  assert.equal(resumed.links[0].context.spanId, interrupted.spanId);
  assert.equal(resumed.links[0].context.traceId, interrupted.traceId);
  assert.notEqual(resumed.spanContext().traceId, interrupted.traceId, "a new trace, linked");
});

test("issue 32: a failing emit (L-3.10.4): runAgentLoop rejects with no agent_end, and the spans it left open end ERROR(emit_failed)", T, async () => {
  const t = tracing();
  const { streamFn } = scripted([{ text: "hi" }]);
  const config = otel.withTelemetry({ model, convertToLlm }, { tracer: t.tracer });
  let n = 0;
  const emit = (e) => {
    if (e.type === "message_start" && e.message.role === "assistant" && ++n === 1) throw new Error("emit broke");
  };
  await assert.rejects(lib.runAgentLoop([user("go")], { messages: [] }, config, emit, undefined, streamFn), { message: "emit broke" });
  assert.equal(
    render(t.spans(), t.order, { brief: true }),
    ['invoke_agent ERROR(emit_failed) agent_loop.run.kind="prompt" agent_loop.run.outcome="error" error.type="emit_failed"', '  chat m-1 ERROR(emit_failed) error.type="emit_failed"'].join("\n"),
  );
});

/** Every span of `spans` by trace: exactly one invoke_agent root per trace, every other span's parent in its trace. */
function checkIsolated(spans, expectedTraces) {
  const byTrace = new Map();
  for (const s of spans) {
    const id = s.spanContext().traceId;
    if (!byTrace.has(id)) byTrace.set(id, []);
    byTrace.get(id).push(s);
  }
  assert.equal(byTrace.size, expectedTraces);
  for (const group of byTrace.values()) {
    const ids = new Set(group.map((s) => s.spanContext().spanId));
    const roots = group.filter((s) => s.parentSpanContext === undefined);
    assert.equal(roots.length, 1);
    assert.equal(roots[0].name, "invoke_agent");
    for (const s of group) if (s !== roots[0]) assert.ok(ids.has(s.parentSpanContext.spanId), `${s.name}: parent in its own trace`);
  }
  return byTrace;
}

test("issue 32: 100 concurrent Agents and 100 concurrent agentLoop runs sharing one traced config: no span crosses into another run", T, async () => {
  const t = tracing();
  const N = 100;
  // Each run's tools tag their own spans with the run's number; the tag must match the run the span nests under.
  const script = (i) =>
    scripted([
      { calls: [["x", "a", { n: i }], ["y", "b", { n: i }]], usage: usage(i, 1) },
      { text: `done ${i}` },
    ]).streamFn;
  const tools = [
    tool("a", async (_id, args) => {
      await sleep((args.n * 7) % 13);
      t.tracer.startSpan("inner a", { attributes: { n: args.n } }, otel.toolContext(args)).end();
      return ok("a");
    }),
    tool("b", async (_id, args) => {
      await sleep((args.n * 5) % 11);
      t.tracer.startSpan("inner b", { attributes: { n: args.n } }, otel.toolContext(args)).end();
      return ok("b");
    }),
  ];
  const agents = Array.from({ length: N }, (_, i) => otel.withTelemetry(new lib.Agent({ initialState: { model, tools }, streamFn: script(i) }), { tracer: t.tracer, metadata: { n: i } }));
  const shared = otel.withTelemetry({ model, convertToLlm }, { tracer: t.tracer });
  await Promise.all([
    ...agents.map((agent) => agent.prompt("go")),
    ...Array.from({ length: N }, (_, i) => drain(lib.agentLoop([user(`go ${i}`)], { messages: [], tools }, shared, undefined, script(N + i)))),
  ]);
  const byTrace = checkIsolated(t.spans(), 2 * N);
  const seen = new Set();
  for (const group of byTrace.values()) {
    const root = group.find((s) => s.parentSpanContext === undefined);
    // The run's number: the input tokens of its first request (usage(i, 1)); an agent's metadata says it too.
    const n = root.attributes["gen_ai.usage.input_tokens"];
    if (n < N) assert.equal(root.attributes["agent_loop.metadata.n"], n);
    seen.add(n);
    const inner = group.filter((s) => s.name.startsWith("inner"));
    assert.equal(inner.length, 2);
    for (const s of inner) {
      assert.equal(s.attributes.n, n, "a tool's span is in the trace of the run that called it");
      const parent = group.find((p) => p.spanContext().spanId === s.parentSpanContext.spanId);
      assert.equal(parent.name, `execute_tool ${s.name.slice(-1)}`);
    }
    assert.deepEqual(
      group.filter((s) => s.parentSpanContext?.spanId === root.spanContext().spanId).map((s) => s.name).sort(),
      ["chat m-1", "chat m-1", "execute_tool a", "execute_tool b"],
    );
  }
  assert.equal(seen.size, 2 * N);
});

test("issue 32: withTelemetry's arguments: isEnabled false returns the config untouched; bad tracers and agents traced twice are TypeErrors", T, async () => {
  const config = { model, convertToLlm };
  assert.equal(otel.withTelemetry(config, { isEnabled: false }), config);
  assert.notEqual(otel.withTelemetry(config, {}), config);
  assert.throws(() => otel.withTelemetry(config, { tracer: {} }), { name: "TypeError", message: "withTelemetry: telemetry.tracer must be an OpenTelemetry Tracer (trace.getTracer(name))" });
  assert.throws(() => otel.withTelemetry(config, { functionId: 1 }), { name: "TypeError", message: "withTelemetry: telemetry.functionId must be a string" });
  assert.throws(() => otel.withTelemetry(1, {}), { name: "TypeError", message: "withTelemetry: the first argument must be a loop config, Agent options or an Agent" });
  const agent = otel.withTelemetry(new lib.Agent({}), {});
  assert.throws(() => otel.withTelemetry(agent, {}), { name: "TypeError", message: "withTelemetry: this agent is already traced" });
  // An untraced config next to a traced one: no spans from it.
  const t = tracing();
  otel.withTelemetry({ model, convertToLlm }, { tracer: t.tracer });
  const { streamFn } = scripted([{ text: "hi" }]);
  await drain(lib.agentLoop([user("go")], { messages: [] }, config, undefined, streamFn));
  assert.equal(t.spans().length, 0);
  assert.equal(otel.toolContext({}), undefined);
  assert.equal(otel.toolContext(1), undefined);
});

test("issue 32: the main entry loads neither agent-loop-wasm/otel nor @opentelemetry/api (CommonJS, checked in require.cache)", T, () => {
  const script = `
    const loaded = () => Object.keys(require.cache).filter((f) => /opentelemetry|otel\\.c?js$/.test(f));
    require("agent-loop-wasm");
    const before = loaded();
    require("agent-loop-wasm/otel");
    console.log(JSON.stringify({ before, after: loaded().length }));`;
  const out = JSON.parse(execFileSync(process.execPath, ["-e", script], { cwd: HERE, encoding: "utf8" }));
  assert.deepEqual(out.before, []);
  assert.ok(out.after >= 2, "the check sees the entry and the API once they are loaded");
});

test("issue 45: a compaction is a span under the run with its summary request's chat span under it; the run's usage counts the summary", T, async () => {
  const t = tracing();
  const { streamFn } = scripted([
    { calls: [["c1", "big", {}]], usage: usage(700, 10) },
    { text: "SUMMARY of the work so far", usage: usage(300, 20) },
    { text: "done", usage: usage(400, 5) },
  ]);
  const tools = [tool("big", async () => ok("x".repeat(800)))];
  const config = otel.withTelemetry({ model, convertToLlm, compaction: { keepRecentTokens: 100 } }, { tracer: t.tracer });
  const stream = lib.agentLoop([user("go")], { messages: [], tools }, config, undefined, streamFn);
  const result = await drain(stream);
  assert.deepEqual(result.map((m) => m.role), ["system", "user", "assistant", "toolResult", "compactionSummary", "assistant"]);
  assert.equal(
    render(t.spans(), t.order, { brief: true }),
    [
      'invoke_agent UNSET agent_loop.run.kind="prompt" agent_loop.run.outcome="completed"',
      "  chat m-1 UNSET",
      '  execute_tool big UNSET gen_ai.tool.call.id="c1"',
      "  compaction UNSET",
      "    chat m-1 UNSET",
      "  chat m-1 UNSET",
    ].join("\n"),
  );
  const spans = t.spans();
  const compaction = spans.find((s) => s.name === "compaction");
  const entry = result[4];
  assert.deepEqual(compaction.attributes, {
    "agent_loop.compaction.reason": "threshold",
    "agent_loop.compaction.tokens_before": entry.tokensBefore,
    "agent_loop.compaction.messages": 1,
    "agent_loop.compaction.tokens_after": entry.tokensAfter,
  });
  const summaryChat = spans.find((s) => s.parentSpanContext?.spanId === compaction.spanContext().spanId);
  assert.equal(summaryChat.attributes["gen_ai.usage.input_tokens"], 300);
  assert.deepEqual(summaryChat.attributes["gen_ai.response.finish_reasons"], ["stop"]);
  const run = spans.find((s) => s.name === "invoke_agent");
  assert.equal(run.attributes["gen_ai.usage.input_tokens"], 1400);
  assert.equal(run.attributes["gen_ai.usage.output_tokens"], 35);
  assert.equal(run.attributes["agent_loop.run.model_requests"], 3);
});
