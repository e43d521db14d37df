// Child process of memory-traps.test.mjs (issue 13): one heavy scenario per process, so a poisoned or
// memory-capped instance affects nothing else. Usage: node [--expose-gc] [--wasm-max-mem-pages=N]
// memory-traps-child.mjs <scenario> [json-args]. Prints one JSON line (the observations) on stdout;
// records every uncaught exception and unhandled rejection, which the parent asserts are none.
import { createServer } from "node:http";
import { createRequire } from "node:module";

const uncaught = [];
process.on("uncaughtException", (error) => uncaught.push(`uncaughtException: ${error?.stack ?? error}`));
process.on("unhandledRejection", (error) => uncaught.push(`unhandledRejection: ${error?.stack ?? error}`));

const lib = await import("../../pkg/dist/node/index.mjs");
const glue = createRequire(import.meta.url)("../../pkg/dist/node/agent_loop_wasm.js");
const { streamBuiltin, agentLoop, runAgentLoop, validateToolArguments, Agent } = lib;

const [scenario, rawArgs] = process.argv.slice(2);
const args = rawArgs ? JSON.parse(rawArgs) : {};
const MiB = 1024 * 1024;

/** Bytes of wasm linear memory (it never shrinks: growth is what a payload cost for good). */
const wasmBytes = () => glue.wasmMemoryBytes();
const gc = () => globalThis.gc?.();

// ---- a scripted openai-completions server on 127.0.0.1 (the exact wire format, big lines streamed)

const chunkLine = (delta, extra = {}) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-test", choices: [{ index: 0, delta, finish_reason: null, ...extra }] })}\n\n`;

/** The parts of one response: strings, or `{ bigContent: n }` for a text delta of n "x" sent in 1 MiB writes. */
function textReply(parts) {
  return [chunkLine({ role: "assistant", content: "" }), ...parts, chunkLine({}, { finish_reason: "stop" }), "data: [DONE]\n\n"];
}

async function startServer(replies) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const record = { closed: false };
    requests.push(record);
    res.on("close", () => {
      record.closed = true;
    });
    for await (const _ of req);
    const parts = replies.length > 1 ? replies.shift() : replies[0];
    res.writeHead(200, { "content-type": "text/event-stream" });
    const write = (text) => (res.write(text) ? undefined : new Promise((r) => res.once("drain", r)));
    for (const part of parts) {
      if (res.destroyed) break;
      if (typeof part === "string") {
        await write(part);
        continue;
      }
      if (part.bigInvalid !== undefined) {
        // One data line of n bytes that is not JSON: it leaves wasm memory as it arrives, and the core must then read
        // it whole.
        await write('data: {"oops": "');
        const piece = "x".repeat(MiB);
        for (let left = part.bigInvalid; left > 0 && !res.destroyed; left -= MiB) await write(piece);
        if (res.destroyed) break;
        await write("\n\n");
        continue;
      }
      if (part.bigLines !== undefined) {
        // One event of n bytes in data lines of 1 KiB (their JSON joined by newlines, a padding array the wire format
        // ignores): no line is long enough to leave wasm memory early (issue 34), so the event's data is held there.
        await write(`data: ${chunkLine({ content: "a" }).slice(6, -3)},"pad":[\n`);
        const line = `data: ${"0,".repeat(509)}\n`;
        let left = part.bigLines;
        while (left > 0 && !res.destroyed) {
          await write(line.repeat(1024));
          left -= line.length * 1024;
        }
        if (res.destroyed) break;
        await write("data: 0]}\n\n");
        continue;
      }
      // A text delta, or the arguments fragment of a tool call (JSON in a JSON string), of n "x".
      const head = part.bigContent !== undefined
        ? chunkLine({ content: "@" }).split('"@"').map((s, i) => (i === 0 ? `${s}"` : `"${s}`))
        : chunkLine({ tool_calls: [{ index: 0, function: { arguments: '{"text":"@"}' } }] }).split("@");
      await write(head[0]);
      const piece = "x".repeat(MiB);
      let left = part.bigContent ?? part.bigArguments;
      while (left > 0 && !res.destroyed) {
        const n = Math.min(left, MiB);
        await write(n === MiB ? piece : piece.slice(0, n));
        left -= n;
      }
      if (res.destroyed) break;
      await write(head[1]);
    }
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
  return { baseUrl, requests, close: () => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  } };
}

const model = (baseUrl) => ({
  id: "gpt-test",
  name: "test",
  api: "openai-completions",
  provider: "openai",
  baseUrl,
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 200000,
  maxTokens: 8000,
});
const context = () => ({ messages: [{ role: "user", content: "hi", timestamp: 1 }] });

/** The events of one streamBuiltin request, summarised (no huge strings in the output). */
async function request(baseUrl, options = {}) {
  const events = [];
  for await (const event of streamBuiltin(model(baseUrl), context(), { apiKey: "k", maxRetries: 0, ...options })) {
    events.push(event);
  }
  const last = events.at(-1);
  const final = last?.type === "done" ? last.message : last?.error;
  const text = final?.content?.find((b) => b.type === "text")?.text ?? "";
  return { types: events.map((e) => e.type), stopReason: final?.stopReason, errorMessage: final?.errorMessage, textLength: text.length };
}

const summary = (event) => {
  const out = { type: event.type };
  const m = event.message;
  if (m) {
    out.role = m.role;
    if (m.stopReason !== undefined) out.stopReason = m.stopReason;
    if (m.errorMessage !== undefined) out.errorMessage = m.errorMessage;
  }
  if (event.type === "tool_execution_end") {
    out.isError = event.isError;
    if (event.isError) out.text = event.result?.content?.[0]?.text;
  }
  if (event.type === "agent_end") out.messages = event.messages.map((x) => x.role);
  return out;
};

const POISONED = "agent-loop-wasm: the WebAssembly instance failed and can no longer be used (RuntimeError: unreachable)";

function nextCallError() {
  try {
    validateToolArguments({ name: "t", parameters: { type: "object" } }, { type: "toolCall", id: "c", name: "t", arguments: {} });
    return null;
  } catch (error) {
    return error.message;
  }
}

/** A stream function answering first with one tool call whose arguments hold `size` bytes of text, then "done". */
function hugeArgumentsStreamFn(size) {
  let calls = 0;
  return (m) => {
    const stream = new lib.AssistantMessageEventStream();
    const first = calls++ === 0;
    const message = {
      role: "assistant",
      content: first
        ? [{ type: "toolCall", id: "call-1", name: "echo", arguments: { text: "y".repeat(size) } }]
        : [{ type: "text", text: "done" }],
      api: m.api,
      provider: m.provider,
      model: m.id,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: first ? "toolUse" : "stop",
      timestamp: 1,
    };
    queueMicrotask(() => {
      stream.push({ type: "start", partial: message });
      stream.push({ type: "done", reason: message.stopReason, message });
    });
    return stream;
  };
}

const echoTool = {
  name: "echo",
  label: "echo",
  description: "echo",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

/** `echoTool` whose `prepareArguments` throws an error of `size` characters: the core reads the message whole into
 *  wasm for the call's error result (E-8.3.1), an allocation the capped memory cannot give: the real trap the E-8.4.2
 *  scenarios need. (Argument validation itself runs in JS, snippets/validate.js, and copies nothing into wasm.) */
const throwingTool = (size) => ({ ...echoTool, prepareArguments: () => {
  throw new Error("y".repeat(size));
} });

const scenarios = {
  /** One line over the limit (default or `limit`), then a normal request on the same instance. */
  async "line-limit"({ size, limit }) {
    const server = await startServer([textReply([{ bigContent: size }]), textReply([chunkLine({ content: "fine" })])]);
    const before = wasmBytes();
    const options = limit === undefined ? {} : { maxStreamEventBytes: limit };
    const big = await request(server.baseUrl, options);
    const grown = wasmBytes() - before;
    const after = await request(server.baseUrl, options);
    await new Promise((r) => setTimeout(r, 50));
    const closedEarly = server.requests[0].closed;
    await server.close();
    return { big, after, grown, closedEarly };
  },

  /** The same line through agentLoop: the run ends with the error message and agent_end. */
  async "line-limit-loop"({ size, limit }) {
    const server = await startServer([textReply([{ bigContent: size }])]);
    const config = { model: model(server.baseUrl), convertToLlm: (m) => m, apiKey: "k", maxRetries: 0 };
    const streamFn = (m, c, o) => streamBuiltin(m, c, { ...o, maxRetries: 0, maxStreamEventBytes: limit });
    const events = [];
    for await (const e of agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, config, undefined, streamFn)) {
      events.push(summary(e));
    }
    await server.close();
    return { events, next: nextCallError() };
  },

  /** wasm memory growth for two lines of `size` bytes of text in one delta. */
  async "big-line-memory"({ size }) {
    const small = textReply([chunkLine({ content: "warm" })]);
    const server = await startServer([small, textReply([{ bigContent: size }])]);
    // Warm up: the first request of a process allocates the ordinary buffers.
    await request(server.baseUrl);
    gc();
    const start = wasmBytes();
    const first = await request(server.baseUrl);
    gc();
    const afterFirst = wasmBytes();
    const second = await request(server.baseUrl);
    gc();
    const afterSecond = wasmBytes();
    await server.close();
    return { first, second, firstGrowth: afterFirst - start, secondGrowth: afterSecond - afterFirst };
  },

  /** validateToolArguments with a fresh large `parameters` object per call (tools rebuilt per request). */
  async "fresh-schemas"({ count, schemaBytes }) {
    const call = { type: "toolCall", id: "c", name: "t", arguments: { p0: "v" } };
    const fresh = (i) => {
      const properties = {};
      const per = 1000;
      for (let k = 0; k * per < schemaBytes; k++) properties[`p${k}`] = { type: "string", description: `${i}:${"d".repeat(per)}` };
      return { type: "object", properties };
    };
    const marks = {};
    for (let i = 1; i <= count; i++) {
      validateToolArguments({ name: "t", parameters: fresh(i) }, call);
      if (i % 100 === 0) {
        gc();
        marks[i] = wasmBytes();
      }
    }
    return { marks };
  },

  /** Schemas of `parameters` objects JS dropped are forgotten: the validator's cache (a WeakMap in snippets/validate.js)
   *  keeps none of them alive. Counted by a FinalizationRegistry of our own on each `parameters` object. */
  async "collected-schemas"({ count }) {
    const call = { type: "toolCall", id: "c", name: "t", arguments: {} };
    let collected = 0;
    const registry = new FinalizationRegistry(() => collected++);
    const validate = () => {
      const parameters = { type: "object", properties: {} };
      registry.register(parameters, 0);
      validateToolArguments({ name: "t", parameters }, call);
    };
    for (let i = 0; i < count; i++) validate();
    // Collect the dropped objects and let the registry's callbacks run.
    for (let i = 0; i < 5; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    return { validated: count, alive: count - collected };
  },

  /** Every task of finished runs is gone from the executor. */
  async "no-live-tasks"() {
    const server = await startServer([textReply([chunkLine({ content: "fine" })])]);
    const before = glue.liveTasks();
    await request(server.baseUrl);
    const stream = agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, { model: model(server.baseUrl), convertToLlm: (m) => m, apiKey: "k" });
    await stream.result();
    await new Promise((r) => setTimeout(r, 20));
    const after = glue.liveTasks();
    await server.close();
    return { before, after };
  },

  /** An allocation the capped memory cannot give, on the fallible SSE path: a clean error, no poison. */
  /** An event larger than the capped wasm memory, read by the built-in providers (JS: no wasm memory touched). */
  async "sse-huge-event"({ size, invalid }) {
    const part = invalid ? { bigInvalid: size } : { bigLines: size };
    const server = await startServer([textReply([part]), textReply([chunkLine({ content: "fine" })])]);
    const before = wasmBytes();
    const big = await request(server.baseUrl, { maxStreamEventBytes: 2048 * MiB });
    const after = await request(server.baseUrl);
    await server.close();
    return { big, after, grew: wasmBytes() - before, next: nextCallError() };
  },

  /** A trap inside a run (an infallible allocation fails while the run reads a huge error message of a tool's). */
  async "trap-in-run"({ size, mode }) {
    const config = { model: model("http://127.0.0.1:9/v1"), convertToLlm: (m) => m };
    const ctx = { messages: [], tools: [throwingTool(size)] };
    const prompt = [{ role: "user", content: "hi", timestamp: 1 }];
    const events = [];
    let result;
    if (mode === "agentLoop") {
      const stream = agentLoop(prompt, ctx, config, undefined, hugeArgumentsStreamFn(size));
      for await (const e of stream) events.push(summary(e));
      result = (await stream.result()).map((m) => m.role);
    } else if (mode === "runAgentLoop") {
      const messages = await runAgentLoop(prompt, ctx, config, async (e) => events.push(summary(e)), undefined, hugeArgumentsStreamFn(size));
      result = messages.map((m) => m.role);
    } else {
      const agent = new Agent({ initialState: { model: config.model, tools: [throwingTool(size)] }, streamFn: hugeArgumentsStreamFn(size) });
      agent.subscribe((e) => events.push(summary(e)));
      const outcome = await agent.prompt("hi").then(() => "resolved", (e) => `rejected: ${e.message}`);
      const s = agent.state;
      result = {
        outcome,
        isStreaming: s.isStreaming,
        errorMessage: s.errorMessage,
        pendingToolCalls: s.pendingToolCalls.size,
        roles: s.messages.map((m) => m.role),
        idle: await Promise.race([agent.waitForIdle().then(() => true), new Promise((r) => setTimeout(() => r(false), 1000))]),
      };
    }
    let promptError = null;
    if (mode === "agent") {
      promptError = await Promise.resolve()
        .then(() => new Agent().prompt("again"))
        .then(() => null, (e) => e.message);
    }
    return { events, result, next: nextCallError(), promptError };
  },
};

const started = Date.now();
let out;
try {
  out = await scenarios[scenario](args);
} catch (error) {
  out = { error: String(error?.stack ?? error) };
}
// Let late callbacks (an uncaught exception from a microtask, a rejection) surface before reporting.
await new Promise((r) => setTimeout(r, 100));
console.log(JSON.stringify({ ...out, uncaught, ms: Date.now() - started }));
// A scenario that failed may leave its server open: do not wait for the parent's timeout.
if (out.error !== undefined) process.exit(1);
