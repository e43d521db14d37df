// The agent-loop-wasm/otel smoke of scripts/pack-test.mjs (issue 32), run in every runtime with the packed tarball and
// `@opentelemetry/api` from npm, and a minimal tracer written on the API here (no SDK: a span records its name, its
// parent, its attributes and status, and is "exported" into an array when it ends). An Agent run with two parallel
// tools, one starting a span of its own under toolContext(args), must give the exact tree below; then 10 agentLoop runs
// of one traced config at once must give 10 traces, each tool's own span in its own run's trace.
export async function otelSmoke({ lib, otel, api }) {
  const finished = [];
  let next = 0;
  const hex = (n, width) => n.toString(16).padStart(width, "0");
  const tracer = {
    startSpan(name, options = {}, context = api.context.active()) {
      const parent = api.trace.getSpan(context)?.spanContext();
      const id = ++next;
      const spanContext = { traceId: parent?.traceId ?? hex(id, 32), spanId: hex(id, 16), traceFlags: 1 };
      const span = {
        name,
        order: id,
        parentId: parent?.spanId,
        attributes: { ...(options.attributes ?? {}) },
        status: { code: 0 },
        spanContext: () => spanContext,
        isRecording: () => true,
        setAttribute(key, value) {
          this.attributes[key] = value;
          return this;
        },
        setAttributes(attributes) {
          Object.assign(this.attributes, attributes);
          return this;
        },
        addEvent() {
          return this;
        },
        setStatus(status) {
          this.status = status;
          return this;
        },
        updateName(newName) {
          this.name = newName;
          return this;
        },
        recordException() {},
        end() {
          finished.push(this);
        },
      };
      return span;
    },
  };
  const render = (spans) => {
    const lines = [];
    const walk = (parentId, depth) => {
      for (const s of spans.filter((x) => x.parentId === parentId).sort((a, b) => a.order - b.order)) {
        const error = s.attributes["error.type"];
        lines.push(`${"  ".repeat(depth)}${s.name} ${["UNSET", "OK", "ERROR"][s.status.code]}${error ? ` ${error}` : ""}`);
        walk(s.spanContext().spanId, depth + 1);
      }
    };
    walk(undefined, 0);
    return lines.join("\n");
  };

  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const model = { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost: usage.cost, contextWindow: 1000, maxTokens: 100 };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const streamFn = (_model, context) => {
    const turn = context.messages.filter((m) => m.role === "assistant").length;
    const prompt = context.messages.find((m) => m.role === "user")?.content;
    const n = typeof prompt === "string" ? prompt : prompt[0].text;
    const content = turn === 0 ? [{ type: "toolCall", id: "c1", name: "slow", arguments: { n } }, { type: "toolCall", id: "c2", name: "fast", arguments: { n } }] : [{ type: "text", text: "done" }];
    const message = { role: "assistant", content, api: "faux", provider: "faux", model: "m", usage, stopReason: turn === 0 ? "toolUse" : "stop", timestamp: 1 };
    const s = lib.createAssistantMessageEventStream();
    setTimeout(() => {
      s.push({ type: "start", partial: message });
      s.push({ type: "done", reason: message.stopReason, message });
    }, 1);
    return s;
  };
  const ok = (text) => ({ content: [{ type: "text", text }], details: {} });
  const tools = [
    { name: "slow", label: "slow", description: "slow", parameters: { type: "object", properties: { n: { type: "string" } } }, execute: async (_id, args) => {
      await sleep(20);
      tracer.startSpan(`inner ${args.n}`, {}, otel.toolContext(args)).end();
      return ok("slow");
    } },
    { name: "fast", label: "fast", description: "fast", parameters: { type: "object", properties: { n: { type: "string" } } }, execute: async () => ok("fast") },
  ];

  const agent = otel.withTelemetry(new lib.Agent({ initialState: { model, tools }, streamFn }), { tracer });
  await agent.prompt("0");
  const tree = render(finished);
  const expected = ["invoke_agent UNSET", "  chat m UNSET", "  execute_tool slow UNSET", "    inner 0 UNSET", "  execute_tool fast UNSET", "  chat m UNSET"].join("\n");
  if (tree !== expected) throw new Error(`span tree:\n${tree}\nexpected:\n${expected}`);

  finished.length = 0;
  const config = otel.withTelemetry({ model, convertToLlm: (m) => m }, { tracer });
  await Promise.all(
    Array.from({ length: 10 }, async (_, i) => {
      for await (const _e of lib.agentLoop([{ role: "user", content: String(i + 1), timestamp: 1 }], { messages: [], tools }, config, undefined, streamFn));
    }),
  );
  const roots = finished.filter((s) => s.parentId === undefined);
  const numbers = new Set(finished.filter((s) => s.name.startsWith("inner ")).map((s) => s.name));
  if (numbers.size !== 10) throw new Error(`${numbers.size} distinct tool spans of 10 runs`);
  if (roots.length !== 10 || new Set(roots.map((s) => s.spanContext().traceId)).size !== 10) throw new Error(`${roots.length} roots`);
  for (const root of roots) {
    const trace = finished.filter((s) => s.spanContext().traceId === root.spanContext().traceId);
    const inner = trace.filter((s) => s.name.startsWith("inner "));
    const n = inner[0]?.name.slice(6);
    const one = render(trace).replace(`inner ${n}`, "inner N");
    if (inner.length !== 1 || one !== expected.replace("inner 0", "inner N")) throw new Error(`run ${n}:\n${one}`);
    const own = trace.filter((s) => s.name === "execute_tool slow")[0];
    if (inner[0].parentId !== own.spanContext().spanId) throw new Error(`run ${n}: the tool's span is not under its call`);
  }
  return { tree, concurrentRuns: roots.length, spans: finished.length };
}
