// Compaction (issue 45, SPEC L-3.13) on the built package: a 300-turn tool loop on a model with a 4,000-token window
// — a scripted model that counts its request and answers with the OpenAI overflow error when it is over the window —
// never overflows and ends normally, with exact events (derived from what the model was asked, request by request),
// the full transcript kept, the summaries' usage in the totals; the Agent with `compaction`; the TypeErrors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, IS_REFERENCE, agentLoop, createAssistantMessageEventStream } from "./impl.mjs";
import { collect, convertToLlm, model, text, toolCall, zeroUsage } from "./faux.mjs";

const T = { timeout: 60_000, skip: IS_REFERENCE && "compaction (issue 45) is not in pi-agent-core 1.6.0" };
const pkg = IS_REFERENCE ? {} : await import("../../pkg/dist/node/index.mjs");

const WINDOW = 4000;
const SUMMARIZER = "You are a context summarization assistant.";

/** The characters of what a request sends, as the scripted model counts them (3.5 a token: stricter than the
 *  loop's 4). */
function requestTokens(messages) {
  let chars = 0;
  for (const m of messages) {
    if (typeof m.content === "string") chars += m.content.length;
    else for (const b of m.content ?? []) chars += b.type === "text" ? b.text.length : b.type === "toolCall" ? b.name.length + JSON.stringify(b.arguments).length : 0;
  }
  return Math.ceil(chars / 3.5);
}

const usage = (input, output) => ({ ...zeroUsage(), input, output, totalTokens: input + output, cost: { ...zeroUsage().cost, input: input / 1e6, output: output / 1e6, total: (input + output) / 1e6 } });

/** A model that calls `step` until `turns` tool results came back, then answers; summary requests get a summary.
 *  Every request over the window gets the provider's overflow error instead. `log`: one entry per request. */
function scriptedModel(turns) {
  const log = [];
  let steps = 0;
  let summaries = 0;
  const streamFn = (m, context) => {
    const stream = createAssistantMessageEventStream();
    const tokens = requestTokens(context.messages);
    const isSummary = context.messages[0]?.role === "system" && String(context.messages[0].content).startsWith(SUMMARIZER);
    let message;
    const base = { role: "assistant", api: m.api, provider: m.provider, model: m.id, timestamp: Date.now() };
    if (tokens > WINDOW) {
      log.push({ kind: "overflow", tokens });
      message = { ...base, content: [], usage: zeroUsage(), stopReason: "error",
        errorMessage: `This model's maximum context length is ${WINDOW} tokens. However, your messages resulted in ${tokens} tokens.` };
    } else if (isSummary) {
      summaries++;
      log.push({ kind: "summary", tokens });
      message = { ...base, content: [text(`## Goal\nRun step ${turns} times.\n## Progress\nSummary ${summaries}: steps done so far are in order.`)], usage: usage(tokens, 60), stopReason: "stop" };
    } else if (steps < turns) {
      steps++;
      log.push({ kind: "step", tokens });
      message = { ...base, content: [toolCall(`call_${steps}`, "step", { n: steps })], usage: usage(tokens, 12), stopReason: "toolUse" };
    } else {
      log.push({ kind: "answer", tokens });
      message = { ...base, content: [text("finished")], usage: usage(tokens, 2), stopReason: "stop" };
    }
    queueMicrotask(() => {
      stream.push({ type: "start", partial: { ...message, content: [] } });
      if (message.stopReason === "error") stream.push({ type: "error", reason: "error", error: message });
      else stream.push({ type: "done", reason: message.stopReason, message });
      stream.end(message);
    });
    return stream;
  };
  return { streamFn, log };
}

/** The tool: a 600-character result naming its step. */
const step = {
  name: "step",
  label: "step",
  description: "Runs one step.",
  parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  async execute(id, { n }) {
    return { content: [text(`step ${n} output: ${"x".repeat(580)}`)], details: { n } };
  },
};

const plain = (labels) => labels.filter((l) => !l.startsWith("message_update"));

/** The events a run must have given what the model was asked, request by request: a step's turn ends and the next
 *  one starts at once; a compaction comes inside that turn, before its request. */
function expectedLabels(log) {
  const labels = ["agent_start", "turn_start", "message_start:system", "message_end:system", "message_start:user", "message_end:user"];
  let calls = 0;
  for (const entry of log) {
    if (entry.kind === "summary") {
      labels.push("compaction_start", "message_start:compactionSummary", "message_end:compactionSummary", "compaction_end");
      continue;
    }
    labels.push("message_start:assistant", "message_end:assistant");
    if (entry.kind === "step") {
      const id = `call_${++calls}`;
      labels.push(`tool_execution_start:${id}`, `tool_execution_end:${id}`, "message_start:toolResult", "message_end:toolResult", "turn_end", "turn_start");
    } else {
      labels.push("turn_end");
    }
  }
  return labels.concat("agent_end");
}

test("a 300-turn tool loop on a 4,000-token window never overflows and ends normally", T, async () => {
  const turns = 300;
  const { streamFn, log } = scriptedModel(turns);
  const m = model({ contextWindow: WINDOW });
  const stream = agentLoop(
    [{ role: "user", content: `Run step ${turns} times, then say finished.`, timestamp: Date.now() }],
    { systemPrompt: "", messages: [], tools: [step] },
    { model: m, convertToLlm, compaction: true },
    undefined,
    streamFn,
  );
  const { events, labels, result } = await collect(stream);
  assert.equal(log.filter((e) => e.kind === "overflow").length, 0, "no request passed the window");
  assert.equal(log.filter((e) => e.kind === "step").length, turns);
  assert.equal(log.at(-1).kind, "answer");
  const summaries = log.filter((e) => e.kind === "summary").length;
  assert.ok(summaries >= 10, `compacted ${summaries} times`);
  assert.ok(Math.max(...log.map((e) => e.tokens)) <= WINDOW);
  // Exact events, request by request.
  assert.deepEqual(plain(labels()), expectedLabels(log));
  // The full transcript: every step's call and result, the entries between them, the final answer.
  assert.equal(result.filter((x) => x.role === "toolResult").length, turns);
  assert.equal(result.filter((x) => x.role === "compactionSummary").length, summaries);
  assert.equal(result.at(-1).content[0].text, "finished");
  // Each entry: its summary, the estimate before and after, what it kept, the summary request's usage.
  for (const entry of result.filter((x) => x.role === "compactionSummary")) {
    assert.match(entry.summary, /^## Goal\nRun step 300 times\./);
    assert.ok(entry.tokensBefore > 0.8 * WINDOW && entry.tokensAfter < entry.tokensBefore, JSON.stringify(entry));
    assert.ok(entry.keptMessages >= 1 && entry.reason === "threshold" && entry.usage.output === 60);
  }
  // compaction_end carries the entry itself; compaction_start how many messages were summarized.
  const ends = events.filter((e) => e.type === "compaction_end");
  assert.equal(ends.length, summaries);
  assert.ok(ends.every((e, i) => e.message === result.filter((x) => x.role === "compactionSummary")[i]));
  assert.ok(events.filter((e) => e.type === "compaction_start").every((e) => e.reason === "threshold" && e.messages > 0));
  // The totals count the summary requests.
  const totals = await stream.totalUsage();
  const expectedOutput = log.reduce((n, e) => n + (e.kind === "summary" ? 60 : e.kind === "step" ? 12 : e.kind === "answer" ? 2 : 0), 0);
  assert.equal(totals.output, expectedOutput);
  assert.deepEqual(pkg.totalUsage(result), totals);
});

test("an Agent with compaction keeps the whole transcript and counts the summaries", T, async () => {
  const { streamFn, log } = scriptedModel(60);
  const agent = new Agent({ streamFn, compaction: { trigger: { fraction: 0.5 } }, initialState: { model: model({ contextWindow: WINDOW }), tools: [step] } });
  assert.deepEqual(agent.compaction, { trigger: { fraction: 0.5 } });
  const seen = [];
  agent.subscribe((e) => {
    if (e.type.startsWith("compaction_")) seen.push(e.type);
  });
  await agent.prompt("Run step 60 times, then say finished.");
  const summaries = log.filter((e) => e.kind === "summary").length;
  assert.ok(summaries >= 2 && log.every((e) => e.kind !== "overflow"));
  assert.deepEqual(seen, Array.from({ length: summaries }, () => ["compaction_start", "compaction_end"]).flat());
  const messages = agent.state.messages;
  assert.equal(messages.filter((x) => x.role === "toolResult").length, 60);
  assert.equal(messages.filter((x) => x.role === "compactionSummary").length, summaries);
  assert.equal(agent.state.totalUsage.output, 60 * 12 + 2 + summaries * 60);
  // A later run sends the projection: the last summary, then what it kept.
  const before = log.length;
  agent.state.messages = messages; // the same transcript, re-set
  await agent.prompt("One more thing.");
  assert.equal(log.length, before + 1);
  assert.ok(log.at(-1).tokens < WINDOW / 2);
});

test("bad compaction options are TypeErrors naming the field", T, () => {
  const base = { model: model(), convertToLlm };
  const cases = [
    [1, "agentLoop: config.compaction must be true, false or an object"],
    [{ trigger: 0.8 }, "agentLoop: config.compaction.trigger must be { fraction } (0 < fraction <= 1) or { tokens } (a positive integer)"],
    [{ trigger: { fraction: 2 } }, "agentLoop: config.compaction.trigger must be { fraction } (0 < fraction <= 1) or { tokens } (a positive integer)"],
    [{ keepRecentTokens: -5 }, "agentLoop: config.compaction.keepRecentTokens must be a non-negative integer"],
    [{ contextWindow: 1.5 }, "agentLoop: config.compaction.contextWindow must be a positive integer"],
    [{ summarize: "llm" }, 'agentLoop: config.compaction.summarize must be "model", "drop" or a function'],
    [{ instructions: 7 }, "agentLoop: config.compaction.instructions must be a string"],
  ];
  for (const [compaction, message] of cases) {
    assert.throws(() => agentLoop([], { messages: [] }, { ...base, compaction }), { name: "TypeError", message });
  }
  assert.throws(() => new Agent({ compaction: { trigger: { tokens: 0 } } }), {
    name: "TypeError",
    message: "Agent: options.compaction.trigger must be { fraction } (0 < fraction <= 1) or { tokens } (a positive integer)",
  });
  const agent = new Agent({ initialState: { model: model() } });
  agent.compaction = { summarize: 3 };
  return assert.rejects(agent.prompt("hi"), {
    name: "TypeError",
    message: 'Agent.prompt: agent.compaction.summarize must be "model", "drop" or a function',
  });
});

test("D2: an abort while the summary is written ends the run with an aborted reply; no entry, compaction_end says why", T, async () => {
  const { streamFn, log } = scriptedModel(10);
  const controller = new AbortController();
  const seen = [];
  const summarize = (messages, { signal }) =>
    new Promise((resolve) => {
      // The summary waits; the abort comes from outside while it does.
      signal.addEventListener("abort", () => resolve("too late"));
      setTimeout(() => controller.abort(), 5);
    });
  const stream = agentLoop(
    [{ role: "user", content: "Run step 10 times, then say finished.", timestamp: Date.now() }],
    { messages: [], tools: [step] },
    { model: model({ contextWindow: WINDOW }), convertToLlm, compaction: { summarize, trigger: { tokens: 500 } } },
    controller.signal,
    streamFn,
  );
  for await (const e of stream) if (e.type.startsWith("compaction_") || e.type === "agent_end") seen.push(e);
  const result = await stream.result();
  assert.deepEqual(seen.map((e) => e.type), ["compaction_start", "compaction_end", "agent_end"]);
  assert.equal(seen[1].errorMessage, "Request was aborted");
  assert.equal(seen[1].message, undefined);
  assert.equal(result.filter((m) => m.role === "compactionSummary").length, 0);
  assert.equal(result.at(-1).stopReason, "aborted");
  assert.ok(log.every((e) => e.kind === "step"), "no request after the abort");
});
