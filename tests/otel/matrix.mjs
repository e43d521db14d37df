// The span-tree matrix of agent-loop-wasm/otel (issue 32), runtime-neutral: no Node API and no import but
// script.mjs, so the same file runs in Node (matrix.test.mjs: with the real SDK and with the minimal tracer below), in
// headless Chromium and in workerd (matrix.test.mjs serves it to both as it is). The package (`lib`), its otel entry
// (`otel`) and @opentelemetry/api (`api`) are passed in. runMatrix runs eight scripted scenarios and returns each one's
// spans rendered as text (renderTree: in full, or brief), which matrix.test.mjs compares with the trees it expects,
// written once.
import { scriptedWith, model, convertToLlm, tool, ok, sleep, user, usage } from "./script.mjs";

const KINDS = ["INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
const STATUS = ["UNSET", "OK", "ERROR"];
/** Attributes whose values are times: rendered as their presence only. */
const TIMES = new Set(["gen_ai.response.time_to_first_chunk", "agent_loop.tool.execute_ms"]);

/**
 * A minimal tracer on @opentelemetry/api alone (no SDK), keeping what the SDK keeps: a span's parent is the span of
 * the context it is started in (the active one when none is given; none with `root`), its trace is its parent's or a
 * new one, attribute values that are null or undefined are dropped, and nothing changes a span once it ended. Each
 * finished span is recorded in the normalized shape renderTree reads.
 */
export function minimalTracing(api) {
  const finished = [];
  let next = 0;
  const hex = (n, width) => n.toString(16).padStart(width, "0");
  const clean = (attributes) => Object.fromEntries(Object.entries(attributes ?? {}).filter(([, v]) => v !== undefined && v !== null));
  const tracer = {
    startSpan(name, options = {}, context = api.context.active()) {
      const parent = options.root ? undefined : api.trace.getSpan(context)?.spanContext();
      const order = next++;
      const ids = { traceId: parent?.traceId ?? hex(order + 1, 32), spanId: hex(order + 1, 16), traceFlags: 1 };
      const record = {
        order,
        name,
        kind: options.kind ?? 0,
        traceId: ids.traceId,
        spanId: ids.spanId,
        parentSpanId: parent?.spanId,
        status: { code: 0 },
        attributes: clean(options.attributes),
        events: [],
        links: (options.links ?? []).map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: clean(l.attributes) })),
      };
      let ended = false;
      const span = {
        spanContext: () => ids,
        isRecording: () => !ended,
        setAttribute(key, value) {
          if (!ended && value !== undefined && value !== null) record.attributes[key] = value;
          return span;
        },
        setAttributes(attributes) {
          if (!ended) Object.assign(record.attributes, clean(attributes));
          return span;
        },
        addEvent(eventName, attributes) {
          if (!ended) record.events.push({ name: eventName, attributes: clean(typeof attributes === "object" ? attributes : {}) });
          return span;
        },
        addLink(link) {
          if (!ended) record.links.push({ traceId: link.context.traceId, spanId: link.context.spanId, attributes: clean(link.attributes) });
          return span;
        },
        addLinks(links) {
          for (const l of links) span.addLink(l);
          return span;
        },
        setStatus(status) {
          if (!ended) record.status = { code: status.code, ...(status.message !== undefined ? { message: status.message } : {}) };
          return span;
        },
        updateName(newName) {
          if (!ended) record.name = newName;
          return span;
        },
        recordException() {},
        end() {
          if (ended) return;
          ended = true;
          finished.push(record);
        },
      };
      return span;
    },
  };
  return { tracer, spans: () => finished };
}

function renderAttributes(attributes, replace) {
  return Object.keys(attributes)
    .sort()
    .map((k) => (TIMES.has(k) ? `${k}=<t>` : `${k}=${replace(k, attributes[k]) ?? JSON.stringify(attributes[k])}`))
    .join(" ");
}

/** The attributes a brief tree shows: what tells operations, calls, outcomes and errors apart. */
export const KEY_ATTRIBUTES = [
  "gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.response.finish_reasons", "error.type",
  "agent_loop.run.kind", "agent_loop.run.outcome", "agent_loop.run.turns", "agent_loop.run.model_requests", "agent_loop.run.tool_calls",
  "agent_loop.tool.approval", "agent_loop.metadata.n", "n",
];

/**
 * Normalized spans (minimalTracing's shape) as trees: one line per span, two spaces of indent per level, children in
 * start order; a span whose parent is not among them is a root, and roots are numbered (run 1, run 2, …) in start
 * order. A line says: name, kind, status (and message), the attributes sorted (times as <t>), events, links (to
 * `run k` when the linked span is root k, else `?`). A child in another trace than its parent is marked `!trace`, a
 * root in the trace of an earlier root `!shared-trace`. `brief`: only KEY_ATTRIBUTES, no events. `replace(key,
 * value)`: a text to show instead of a value.
 */
export function renderTree(spans, { brief = false, replace = () => undefined } = {}) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const children = new Map();
  const roots = [];
  for (const s of [...spans].sort((a, b) => a.order - b.order)) {
    if (s.parentSpanId !== undefined && byId.has(s.parentSpanId)) {
      if (!children.has(s.parentSpanId)) children.set(s.parentSpanId, []);
      children.get(s.parentSpanId).push(s);
    } else roots.push(s);
  }
  const rootNumber = new Map(roots.map((r, i) => [r.spanId, i + 1]));
  const lines = [];
  const line = (s, depth) => {
    const status = STATUS[s.status.code] + (s.status.message ? `(${s.status.message})` : "");
    const attributes = brief ? Object.fromEntries(KEY_ATTRIBUTES.filter((k) => k in s.attributes).map((k) => [k, s.attributes[k]])) : s.attributes;
    const events = brief ? [] : s.events.map((e) => e.name + (Object.keys(e.attributes).length ? `{${renderAttributes(e.attributes, replace)}}` : ""));
    const links = s.links.map((l) => `link{${renderAttributes(l.attributes, replace)}}->${rootNumber.has(l.spanId) && byId.get(l.spanId).traceId === l.traceId ? `run ${rootNumber.get(l.spanId)}` : "?"}`);
    const parent = byId.get(s.parentSpanId);
    const marks = [];
    if (parent !== undefined && parent.traceId !== s.traceId) marks.push("!trace");
    if (parent === undefined && roots.some((r) => r.order < s.order && r.traceId === s.traceId)) marks.push("!shared-trace");
    const head = `${"  ".repeat(depth)}${s.name} ${KINDS[s.kind] ?? s.kind} ${status}`;
    return [head, renderAttributes(attributes, replace), ...(events.length ? [`events[${events.join(", ")}]`] : []), ...links, ...marks].filter((x) => x !== "").join(" ");
  };
  const walk = (s, depth) => {
    lines.push(line(s, depth));
    for (const c of children.get(s.spanId) ?? []) walk(c, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return lines.join("\n");
}

export const TELEMETRY = { functionId: "helper", metadata: { team: "a" } };

/**
 * Turn 1 asks for `slow` (ends after `fast` ended, starts a span of its own under toolContext) and `fast` (5 ms) at
 * once; turn 2 answers. `slow` waits for `fast` rather than a longer timer, so their overlap holds on a loaded machine.
 */
export function parallelScript({ lib, otel }, tracer) {
  let fastDone;
  const fastEnded = new Promise((r) => (fastDone = r));
  const { streamFn, calls } = scriptedWith(lib, [
    { calls: [["c1", "slow", { n: 1 }], ["c2", "fast", { n: 2 }]], usage: usage(10, 5, 3, 1, 0.25), responseId: "r-1", responseModel: "m-1-2026" },
    { text: "done", usage: usage(20, 2), responseId: "r-2" },
  ]);
  const tools = [
    tool("slow", async (_id, args) => {
      await fastEnded;
      await sleep(5);
      tracer.startSpan("GET /slow", {}, otel.toolContext(args)).end();
      return ok("slow ok");
    }),
    tool("fast", async () => {
      await sleep(5);
      setTimeout(fastDone, 0); // after this call's end is emitted
      return ok("fast ok");
    }),
  ];
  return { streamFn, calls, tools };
}

async function drain(stream) {
  for await (const _ of stream);
  return stream.result();
}

/** (1) Parallel tools: an Agent traced through its options; `slow` starts its own span under toolContext(args). */
async function parallel(env, t) {
  const { lib, otel } = env;
  const { streamFn, tools } = parallelScript(env, t.tracer);
  const agent = new lib.Agent(otel.withTelemetry({ initialState: { model, tools }, streamFn, apiKey: "sk-SECRET-1" }, { tracer: t.tracer, ...TELEMETRY }));
  await agent.prompt(user("PROMPT-TEXT"));
}

/**
 * (2) Errors through agentLoop: a throwing tool, a blocked call, an unknown tool, invalid arguments, then a provider
 * error. `telemetry`: more options (spans.test.mjs traces it with recordOutputs too).
 */
async function errors({ lib, otel }, t, telemetry = {}) {
  const { streamFn } = scriptedWith(lib, [
    { calls: [["e1", "boom", {}], ["e2", "rm", {}], ["e3", "nope", {}], ["e4", "boom", { n: "x" }]] },
    { stopReason: "error", errorMessage: "401 Incorrect API key provided: sk-SECRET-1" },
  ]);
  const tools = [
    tool("boom", async () => {
      throw new Error("disk on fire");
    }),
    tool("rm", async () => ok("removed")),
  ];
  const beforeToolCall = ({ toolCall }) => (toolCall.name === "rm" ? { block: true, reason: "not here" } : undefined);
  const config = otel.withTelemetry({ model, convertToLlm, apiKey: "sk-SECRET-1", beforeToolCall }, { tracer: t.tracer, ...telemetry });
  await drain(lib.agentLoop([user("go")], { messages: [], tools }, config, undefined, streamFn));
}

/** (3a) An abort during a tool: an Agent (traced as an instance) aborted while its one tool waits. */
async function abortTool({ lib, otel }, t) {
  const { streamFn } = scriptedWith(lib, [{ calls: [["w1", "wait", {}]] }]);
  let started;
  const waiting = new Promise((r) => (started = r));
  const tools = [
    tool("wait", (_id, _args, signal) =>
      new Promise((_, reject) => {
        started();
        signal.addEventListener("abort", () => reject(new Error("stopped by abort")));
      }),
    ),
  ];
  const agent = otel.withTelemetry(new lib.Agent({ initialState: { model, tools }, streamFn }), { tracer: t.tracer });
  const done = agent.prompt("go");
  await waiting;
  agent.abort();
  await done;
}

/** (3b) An abort during a stream: agentLoop's signal aborted once the request is made, the stream hanging. */
async function abortStream({ lib, otel }, t) {
  const controller = new AbortController();
  // The abort comes once the request is made (a timer from the start could fire before it on a loaded machine).
  const { streamFn } = scriptedWith(lib, [
    () => {
      setTimeout(() => controller.abort(), 5);
      return { hang: true };
    },
  ]);
  const config = otel.withTelemetry({ model, convertToLlm }, { tracer: t.tracer });
  await drain(lib.agentLoop([user("go")], { messages: [] }, config, controller.signal, streamFn));
}

/** (4a) D3: a tool past toolTimeoutMs (20 ms) beside one that answers; the run goes on. */
async function toolTimeout({ lib, otel }, t) {
  const { streamFn } = scriptedWith(lib, [{ calls: [["t1", "stuck", {}], ["t2", "quick", {}]] }, { text: "ok" }]);
  const tools = [tool("stuck", () => new Promise(() => {})), tool("quick", async () => ok("q"))];
  const config = otel.withTelemetry({ model, convertToLlm, toolTimeoutMs: 20 }, { tracer: t.tracer });
  await drain(lib.agentLoop([user("go")], { messages: [], tools }, config, undefined, streamFn));
}

/** (4b) D3: a stream silent past streamIdleTimeoutMs (20 ms). */
async function streamTimeout({ lib, otel }, t) {
  const { streamFn } = scriptedWith(lib, [{ hang: true }]);
  const config = otel.withTelemetry({ model, convertToLlm, streamIdleTimeoutMs: 20 }, { tracer: t.tracer });
  await drain(lib.agentLoop([user("go")], { messages: [] }, config, undefined, streamFn));
}

/**
 * (5) A resumed run: agent A is "interrupted" while both its tools run (its checkpoints and its run's span context
 * are what a crashed process left); Agent.restore of those checkpoints with resumeOf, then resume(); A is aborted
 * last, so its span ends too. `charge` is resume: "fail" (must not run twice). Returns A and the span context it
 * resumed from (for spans.test.mjs's checks of the link).
 */
async function resumed({ lib, otel, api }, t) {
  const rows = [];
  const { streamFn } = scriptedWith(lib, [{ calls: [["r1", "work", {}], ["r2", "charge", {}]] }, { text: "after resume" }]);
  let started = 0;
  let bothStarted;
  const inTools = new Promise((r) => (bothStarted = r));
  const hang = (signal) => {
    if (++started === 2) bothStarted();
    return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("gone"))));
  };
  let first = true;
  const work = tool("work", (_id, _args, signal) => {
    if (!first) return Promise.resolve(ok("worked"));
    first = false;
    return hang(signal);
  });
  const charge = tool("charge", (_id, _args, signal) => hang(signal), { resume: "fail" });
  const tools = [work, charge];
  const a = otel.withTelemetry(new lib.Agent({ initialState: { model, tools }, streamFn, onCheckpoint: (c) => void rows.push(JSON.stringify(c)) }), { tracer: t.tracer });
  const running = a.prompt("go");
  await inTools;
  const interrupted = api.trace.getSpan(otel.runContext(a)).spanContext();
  const b = lib.Agent.restore(rows, otel.withTelemetry({ streamFn, tools }, { tracer: t.tracer, resumeOf: interrupted }));
  await b.resume();
  a.abort();
  await running;
  return { a, interrupted };
}

const AGENTS = 100;

/**
 * (6) 100 Agents at once in one isolate, one tracer: each agent's metadata and its tools' own spans carry its number;
 * the tools wait different times, so the runs interleave. Returned as each run's tree with its own number shown as N,
 * the distinct trees with how many runs gave each: a span in another run's trace, or under another run's call, makes
 * a tree of its own (another run's number shows, or a span is missing or extra).
 */
async function concurrentAgents({ lib, otel }, t) {
  const script = () => scriptedWith(lib, [{ calls: [["x", "a", { n: 0 }], ["y", "b", { n: 0 }]], usage: usage(1, 1) }, { text: "done" }]).streamFn;
  const agents = Array.from({ length: AGENTS }, (_, i) => {
    const own = [
      tool("a", async (_id, args) => {
        await sleep((i * 7) % 13);
        t.tracer.startSpan("inner a", { attributes: { n: i } }, otel.toolContext(args)).end();
        return ok("a");
      }),
      tool("b", async (_id, args) => {
        await sleep((i * 5) % 11);
        t.tracer.startSpan("inner b", { attributes: { n: i } }, otel.toolContext(args)).end();
        return ok("b");
      }),
    ];
    return otel.withTelemetry(new lib.Agent({ initialState: { model, tools: own }, streamFn: script() }), { tracer: t.tracer, metadata: { n: i } });
  });
  await Promise.all(agents.map((agent) => agent.prompt("go")));
}

/** Each trace of `spans` rendered on its own with its run's number (the root's agent_loop.metadata.n) shown as N. */
function perRunTrees(spans, brief) {
  const byTrace = new Map();
  for (const s of spans) {
    if (!byTrace.has(s.traceId)) byTrace.set(s.traceId, []);
    byTrace.get(s.traceId).push(s);
  }
  const counts = new Map();
  for (const group of byTrace.values()) {
    const root = group.find((s) => s.parentSpanId === undefined);
    const n = root?.attributes["agent_loop.metadata.n"];
    const tree = renderTree(group, { brief, replace: (k, v) => ((k === "n" || k === "agent_loop.metadata.n") && v === n ? "N" : undefined) });
    counts.set(tree, (counts.get(tree) ?? 0) + 1);
  }
  return [...counts].map(([tree, count]) => `${count} runs:\n${tree}`).join("\n");
}

export const SCENARIOS = { parallel, errors, abortTool, abortStream, toolTimeout, streamTimeout, resumed };

/**
 * Runs every scenario, each with a fresh `tracing()` (`{ tracer, spans() }`, spans in minimalTracing's shape), one
 * after the other, and returns `{ [scenario]: { full, brief } }`, its spans rendered by renderTree; for
 * `concurrentAgents` (100 agents at once) each run's tree with the number of runs that gave it.
 */
export async function runMatrix(env, tracing) {
  const trees = {};
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    const t = tracing();
    await scenario(env, t);
    trees[name] = { full: renderTree(t.spans()), brief: renderTree(t.spans(), { brief: true }) };
  }
  const t = tracing();
  await concurrentAgents(env, t);
  trees.concurrentAgents = { full: perRunTrees(t.spans(), false), brief: perRunTrees(t.spans(), true) };
  return trees;
}
