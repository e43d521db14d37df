// The four agent loops of the peer table (ours, pi, Vercel AI SDK 7, OpenAI Agents JS 0.20) behind
// one `runPlans(plans, toolNames, history)`, each driven by a scripted model doing the same work.
// Measures nothing itself; bench/peers/run.mjs times it.
//
// ours and pi get the bench's faux stream function (bench/faux.mjs); the AI SDK a custom
// LanguageModelV4 under `streamText` + tools + `stopWhen`; OpenAI Agents a custom `Model` under
// `run(agent, input, { stream: true })`. Same delta strings, same `{}` tool calls of the same no-op
// tools run in parallel within a step, one short final answer, every event consumed with
// `for await`. Not identical: OpenAI Agents' model stream has no tool-argument delta event, so its
// tool calls arrive whole in `response_done` (the cheaper side of the difference). Import once per
// side (`loadSide`: `sides.mjs?side=NAME`) so each side's caller code keeps its own JIT feedback.

export const SIDES = ["ours", "pi", "aisdk", "agents"];
export const SIDE_LABEL = { ours: "ours", pi: "pi", aisdk: "AI SDK", agents: "OpenAI Agents" };

/** This module's copy for side `name`, loaded and ready. */
export async function loadSide(name) {
  const m = await import(new URL(`./sides.mjs?side=${name}`, import.meta.url).href);
  return m.make(name);
}

const tick = () => new Promise((r) => setImmediate(r));
const BURST = 32; // a macrotask every 32 model events, as bench/faux.mjs does

/** The scripted replies of one run: [{ text: string[] } | { tools: [{ id, name }] }]. */
export const plans = {
  text: (pieces) => [{ text: pieces }],
  tools: (toolNames, turns, tag = "") => {
    const out = [];
    for (let t = 0; t < turns; t++) out.push({ tools: toolNames.map((name, i) => ({ id: `call${tag}_${t}_${i}`, name })) });
    out.push({ text: ["done"] });
    return out;
  },
};

export const deltaPieces = (n) => Array.from({ length: n }, (_, i) => (i % 7 === 0 ? " tok" : "en "));
export const SMALL = ["Hello", ", ", "world", "!", " How", " can", " I", " help", "?"];
export const toolNames = (n) => Array.from({ length: n }, (_, i) => `noop_${i}`);

/** `n` prior messages, alternating user / assistant, about 60 characters each. */
export function historyTexts(n) {
  return Array.from({ length: n }, (_, i) => ({ role: i % 2 ? "assistant" : "user", text: `message ${i}: some earlier words of the session, kept as is.` }));
}

export async function make(name) {
  if (name === "ours" || name === "pi") return makePiShaped(name);
  if (name === "aisdk") return makeAiSdk();
  if (name === "agents") return makeAgents();
  throw new Error(`unknown side ${name}`);
}

// ---- ours and pi-agent-core: the same caller code, each with its own event stream class

async function makePiShaped(name) {
  const impl = name === "ours" ? await (await import("../impl.mjs")).loadOurs() : await (await import("../impl.mjs")).loadReference();
  // A copy of this module imported with a query (bench/ab-builds.mjs: one per build) gets its own faux module too,
  // so the call sites of one build never see another build's stream class.
  const copy = new URL(import.meta.url).search.slice(1);
  const faux = await import(new URL(`../faux.mjs?side=${name}${copy ? `&${copy}` : ""}`, import.meta.url).href);
  // pi-ai's argument parser only when a run has tool calls, so a cold start of ours never loads pi-ai
  let parser = null;
  const { convertToLlm, model, scriptedStreamFn, textPlan, toolPlan, userMessage, zeroUsage } = faux;
  const okResult = { content: [{ type: "text", text: "ok" }], details: {} };
  const toolCache = new Map();
  const toolsFor = (names) => {
    const key = names.join(",");
    if (!toolCache.has(key)) {
      toolCache.set(
        key,
        names.map((n) => ({ name: n, label: n, description: `${n} tool`, parameters: { type: "object", properties: {} }, execute: async () => okResult })),
      );
    }
    return toolCache.get(key);
  };
  const fauxPlans = (ps) => ps.map((p) => (p.text ? textPlan(p.text) : toolPlan(p.tools.map((c) => ({ id: c.id, name: c.name, pieces: ["{}"] })))));
  const m = model();

  async function runPlans(ps, names = [], history = []) {
    if (names.length) await (parser ??= faux.loadArgumentsParser());
    const streamFn = scriptedStreamFn(impl.createAssistantMessageEventStream, fauxPlans(ps));
    const context = { systemPrompt: "You are a bench.", messages: history, tools: toolsFor(names) };
    const stream = impl.agentLoop([userMessage("go")], context, { model: m, convertToLlm }, undefined, streamFn);
    let deltas = 0;
    let tools = 0;
    let text = 0;
    for await (const e of stream) {
      if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") deltas++;
      else if (e.type === "tool_execution_end") tools++;
      else if (e.type === "message_end" && e.message.role === "assistant") for (const b of e.message.content) if (b.type === "text") text += b.text.length;
    }
    return { deltas, tools, text };
  }

  function history(n) {
    return historyTexts(n).map((h, i) =>
      h.role === "user"
        ? { role: "user", content: h.text, timestamp: i }
        : { role: "assistant", content: [{ type: "text", text: h.text }], api: m.api, provider: m.provider, model: m.id, usage: zeroUsage(), stopReason: "stop", timestamp: i },
    );
  }
  return { name, version: name === "ours" ? `pkg/ (${impl.entry.split("/pkg/")[1] ?? impl.entry})` : "pi-agent-core 1.6.0 + pi-ai 1.6.0", runPlans, history, wasmMemory: impl.wasmMemory };
}

// ---- Vercel AI SDK 7: streamText + tools + stopWhen over a custom LanguageModelV4

async function makeAiSdk() {
  globalThis.AI_SDK_LOG_WARNINGS = false;
  const ai = await import("ai");
  const usage = () => ({
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  });

  /** A model replaying `ps` in order, one reply per doStream call. */
  function scriptedModel(ps) {
    let calls = 0;
    return {
      specificationVersion: "v4",
      provider: "bench",
      modelId: "bench-1",
      supportedUrls: {},
      doGenerate() {
        throw new Error("bench model: streaming only");
      },
      async doStream() {
        const plan = ps[Math.min(calls++, ps.length - 1)];
        const stream = new ReadableStream({
          start(controller) {
            produce(controller, plan).catch((error) => {
              controller.enqueue({ type: "error", error });
              controller.close();
            });
          },
        });
        return { stream };
      },
    };
  }

  async function produce(c, plan) {
    await tick();
    let n = 0;
    const emit = async (part) => {
      c.enqueue(part);
      if (++n % BURST === 0) await tick();
    };
    await emit({ type: "stream-start", warnings: [] });
    await emit({ type: "response-metadata", id: "resp", modelId: "bench-1" });
    if (plan.text) {
      await emit({ type: "text-start", id: "t0" });
      for (const delta of plan.text) await emit({ type: "text-delta", id: "t0", delta });
      await emit({ type: "text-end", id: "t0" });
    } else {
      for (const call of plan.tools) {
        await emit({ type: "tool-input-start", id: call.id, toolName: call.name });
        await emit({ type: "tool-input-delta", id: call.id, delta: "{}" });
        await emit({ type: "tool-input-end", id: call.id });
        await emit({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: "{}" });
      }
    }
    c.enqueue({ type: "finish", usage: usage(), finishReason: plan.text ? { unified: "stop", raw: "stop" } : { unified: "tool-calls", raw: "tool_calls" } });
    c.close();
  }

  const schema = ai.jsonSchema({ type: "object", properties: {} });
  const toolCache = new Map();
  const toolsFor = (names) => {
    const key = names.join(",");
    if (!toolCache.has(key)) {
      toolCache.set(key, Object.fromEntries(names.map((n) => [n, ai.tool({ description: `${n} tool`, inputSchema: schema, execute: async () => "ok" })])));
    }
    return toolCache.get(key);
  };

  async function runPlans(ps, names = [], history = []) {
    const result = ai.streamText({
      model: scriptedModel(ps),
      system: "You are a bench.",
      messages: history.length ? [...history, { role: "user", content: "go" }] : [{ role: "user", content: "go" }],
      tools: names.length ? toolsFor(names) : undefined,
      stopWhen: ai.stepCountIs(ps.length),
    });
    let deltas = 0;
    let tools = 0;
    let text = 0;
    for await (const p of result.fullStream) {
      if (p.type === "text-delta") {
        deltas++;
        text += p.text.length;
      } else if (p.type === "tool-result") tools++;
      else if (p.type === "error") throw p.error;
    }
    return { deltas, tools, text };
  }

  function history(n) {
    return historyTexts(n).map((h) => ({ role: h.role, content: h.text }));
  }
  return { name: "aisdk", version: "ai 7.0.173", runPlans, history };
}

// ---- OpenAI Agents JS 0.20: run(agent, input, { stream: true }) over a custom Model

async function makeAgents() {
  const agents = await import("@openai/agents");
  agents.setTracingDisabled(true); // no exporter, no API key: tracing would be work nobody sees
  const usage = { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 };

  function scriptedModel(ps) {
    let calls = 0;
    return {
      async getResponse() {
        throw new Error("bench model: streaming only");
      },
      async *getStreamedResponse() {
        const plan = ps[Math.min(calls++, ps.length - 1)];
        await tick();
        let n = 0;
        yield { type: "response_started" };
        const output = [];
        if (plan.text) {
          let full = "";
          for (const delta of plan.text) {
            full += delta;
            yield { type: "output_text_delta", delta };
            if (++n % BURST === 0) await tick();
          }
          output.push({ type: "message", id: "msg", role: "assistant", status: "completed", content: [{ type: "output_text", text: full }] });
        } else {
          for (const call of plan.tools) output.push({ type: "function_call", id: call.id, callId: call.id, name: call.name, status: "completed", arguments: "{}" });
        }
        yield { type: "response_done", response: { id: `resp_${calls}`, usage, output } };
      },
    };
  }

  const params = { type: "object", properties: {}, required: [], additionalProperties: false };
  const toolCache = new Map();
  const toolsFor = (names) => {
    const key = names.join(",");
    if (!toolCache.has(key)) toolCache.set(key, names.map((n) => agents.tool({ name: n, description: `${n} tool`, parameters: params, strict: true, execute: async () => "ok" })));
    return toolCache.get(key);
  };

  async function runPlans(ps, names = [], history = []) {
    const agent = new agents.Agent({ name: "bench", instructions: "You are a bench.", model: scriptedModel(ps), tools: names.length ? toolsFor(names) : [] });
    const input = history.length ? [...history, { type: "message", role: "user", content: "go" }] : "go";
    const result = await agents.run(agent, input, { stream: true, maxTurns: ps.length + 1 });
    let deltas = 0;
    let tools = 0;
    let text = 0;
    for await (const e of result) {
      if (e.type === "raw_model_stream_event" && e.data.type === "output_text_delta") {
        deltas++;
        text += e.data.delta.length;
      } else if (e.type === "run_item_stream_event" && e.name === "tool_output") tools++;
    }
    await result.completed;
    if (result.error) throw result.error;
    return { deltas, tools, text };
  }

  function history(n) {
    return historyTexts(n).map((h) =>
      h.role === "user"
        ? { type: "message", role: "user", content: h.text }
        : { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: h.text }] },
    );
  }
  return { name: "agents", version: "@openai/agents 0.20.0", runPlans, history };
}
