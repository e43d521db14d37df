// agent-loop-wasm/ui, events → chunks (issue 31): exact chunk sequences of real Agent runs (text, reasoning, parallel
// tool calls with an error, a model error, an abort), every chunk checked by the `ai` package's own schema and the
// final UIMessage built by its readUIMessageStream; the same chunks from an async iterable of events or of
// { seq, event }; a replay (a partial message seen first as a snapshot, at every cut point) and a reader that lags
// behind the live message give the same UIMessage; SSE framing and headers; bad input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AI_VERSION, Agent, MODEL, call, clean, drain, labels, parseSse, pieces, readMessage, reply, scriptedModel, text, thinking, tools, ui, validateChunks } from "./helpers.mjs";

const T = { timeout: 20_000 };

/** Runs one prompt on a fresh Agent, with the stream listening first: { chunks, events, agent }. */
async function run(replies, { toolSpec = {}, prompt = "go", options = {}, during } = {}) {
  const model = scriptedModel(replies);
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: tools(toolSpec) } });
  const events = [];
  agent.subscribe((e) => {
    events.push({ event: e, snapshot: e.message ? structuredClone(e.message) : undefined });
  });
  const stream = ui.toUIMessageStream(agent, { messageId: "msg-1", run: () => agent.prompt(prompt), ...options });
  if (during) during({ agent, model });
  const chunks = await drain(stream);
  await validateChunks(chunks);
  return { chunks, events, agent, model };
}

test(`text: start, one step, the model's deltas as text deltas, finish (ai ${AI_VERSION})`, T, async () => {
  const { chunks } = await run([reply(pieces(text("Hello, world"), "Hello", ", ", "world"))]);
  assert.deepEqual(chunks, [
    { type: "start", messageId: "msg-1" },
    { type: "start-step" },
    { type: "text-start", id: "1-0" },
    { type: "text-delta", id: "1-0", delta: "Hello" },
    { type: "text-delta", id: "1-0", delta: ", " },
    { type: "text-delta", id: "1-0", delta: "world" },
    { type: "text-end", id: "1-0" },
    { type: "finish-step" },
    { type: "finish", finishReason: "stop" },
  ]);
  assert.deepEqual(clean(await readMessage(chunks)), {
    id: "msg-1",
    role: "assistant",
    parts: [{ type: "step-start" }, { type: "text", text: "Hello, world", state: "done" }],
  });
});

test("reasoning then text: reasoning parts with the signature in providerMetadata.agentLoop; sendReasoning: false leaves them out", T, async () => {
  const replies = () => [reply(pieces(thinking("Think twice", "sig-1"), "Think", " twice"), pieces(text("Answer"), "Ans", "wer"))];
  const { chunks } = await run(replies());
  assert.deepEqual(chunks, [
    { type: "start", messageId: "msg-1" },
    { type: "start-step" },
    { type: "reasoning-start", id: "1-0" },
    { type: "reasoning-delta", id: "1-0", delta: "Think" },
    { type: "reasoning-delta", id: "1-0", delta: " twice" },
    { type: "reasoning-end", id: "1-0", providerMetadata: { agentLoop: { thinkingSignature: "sig-1" } } },
    { type: "text-start", id: "1-1" },
    { type: "text-delta", id: "1-1", delta: "Ans" },
    { type: "text-delta", id: "1-1", delta: "wer" },
    { type: "text-end", id: "1-1" },
    { type: "finish-step" },
    { type: "finish", finishReason: "stop" },
  ]);
  assert.deepEqual(clean(await readMessage(chunks)).parts, [
    { type: "step-start" },
    { type: "reasoning", id: "1-0", text: "Think twice", providerMetadata: { agentLoop: { thinkingSignature: "sig-1" } }, state: "done" },
    { type: "text", text: "Answer", state: "done" },
  ]);
  const without = await run(replies(), { options: { sendReasoning: false } });
  assert.deepEqual(labels(without.chunks), ["start", "start-step", "text-start", "text-delta:Ans", "text-delta:wer", "text-end", "finish-step", "finish:stop"]);
});

test("parallel tool calls: input streamed per call, outputs in completion order, a throwing tool as tool-output-error; a second step answers", T, async () => {
  const { chunks, agent } = await run(
    [
      reply(call("a", "slow", { q: "x" }), call("b", "fast", { q: "y" }), call("c", "broken", { q: "z" })),
      reply(pieces(text("x and y"), "x and y")),
    ],
    { toolSpec: { slow: { delayMs: 60 }, fast: { delayMs: 5 }, broken: { delayMs: 30, fail: "disk on fire" } } },
  );
  assert.deepEqual(labels(chunks), [
    "start", "start-step",
    "tool-input-start:a", 'tool-input-delta:{"q":', 'tool-input-delta:"x"}', "tool-input-available:a",
    "tool-input-start:b", 'tool-input-delta:{"q":', 'tool-input-delta:"y"}', "tool-input-available:b",
    "tool-input-start:c", 'tool-input-delta:{"q":', 'tool-input-delta:"z"}', "tool-input-available:c",
    "tool-output-available:b", "tool-output-error:c", "tool-output-available:a",
    "finish-step",
    "start-step", "text-start", "text-delta:x and y", "text-end", "finish-step",
    "finish:stop",
  ]);
  assert.deepEqual(chunks[2], { type: "tool-input-start", toolCallId: "a", toolName: "slow" });
  assert.deepEqual(chunks[5], { type: "tool-input-available", toolCallId: "a", toolName: "slow", input: { q: "x" } });
  assert.deepEqual(chunks[14], { type: "tool-output-available", toolCallId: "b", output: { content: [{ type: "text", text: "fast(y)" }], details: { q: "y" } } });
  assert.deepEqual(chunks[15], { type: "tool-output-error", toolCallId: "c", errorText: "disk on fire" });
  assert.deepEqual(clean(await readMessage(chunks)).parts, [
    { type: "step-start" },
    { type: "tool-slow", toolCallId: "a", state: "output-available", input: { q: "x" }, output: { content: [{ type: "text", text: "slow(x)" }], details: { q: "x" } } },
    { type: "tool-fast", toolCallId: "b", state: "output-available", input: { q: "y" }, output: { content: [{ type: "text", text: "fast(y)" }], details: { q: "y" } } },
    { type: "tool-broken", toolCallId: "c", state: "output-error", input: { q: "z" }, errorText: "disk on fire" },
    { type: "step-start" },
    { type: "text", text: "x and y", state: "done" },
  ]);
  assert.equal(agent.state.messages.filter((m) => m.role === "toolResult").find((m) => m.toolCallId === "c").content[0].text, "disk on fire");
});

test("dynamicTools: tool parts as dynamic-tool (tools the client does not declare)", T, async () => {
  const { chunks } = await run([reply(call("a", "fast", { q: "y" })), reply(text("ok"))], { toolSpec: { fast: {} }, options: { dynamicTools: true } });
  assert.deepEqual(chunks[2], { type: "tool-input-start", toolCallId: "a", toolName: "fast", dynamic: true });
  const parts = clean(await readMessage(chunks)).parts;
  assert.deepEqual(parts[1], { type: "dynamic-tool", toolName: "fast", toolCallId: "a", state: "output-available", input: { q: "y" }, output: { content: [{ type: "text", text: "fast(y)" }], details: { q: "y" } } });
});

test("a tool's onUpdate: preliminary tool-output-available before the final output", T, async () => {
  const progress = {
    name: "progress",
    label: "progress",
    description: "reports progress",
    parameters: { type: "object", properties: {} },
    async execute(_id, _args, _signal, onUpdate) {
      onUpdate({ content: [text("50%")], details: { done: 1 } });
      return { content: [text("100%")], details: { done: 2 } };
    },
  };
  const model = scriptedModel([reply(call("p", "progress", {})), reply(text("ok"))]);
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: [progress] } });
  const chunks = await drain(ui.toUIMessageStream(agent, { messageId: "m", run: () => agent.prompt("go"), toolOutput: (r) => r.content[0].text }));
  assert.deepEqual(chunks.filter((c) => c.type.startsWith("tool-output")), [
    { type: "tool-output-available", toolCallId: "p", output: "50%", preliminary: true },
    { type: "tool-output-available", toolCallId: "p", output: "100%" },
  ]);
  const parts = clean(await readMessage(chunks)).parts;
  assert.deepEqual(parts[1], { type: "tool-progress", toolCallId: "p", state: "output-available", input: {}, output: "100%" });
});

test("a model error: the partial text, an error chunk with the errorMessage, finish with finishReason error", T, async () => {
  const { chunks } = await run([{ blocks: [pieces(text("Half an ans"), "Half", " an ans")], fail: "Provider returned 500: overloaded" }]);
  assert.deepEqual(labels(chunks), [
    "start", "start-step", "text-start", "text-delta:Half", "text-delta: an ans", "text-end",
    "error:Provider returned 500: overloaded", "finish-step", "finish:error",
  ]);
  const errors = [];
  const message = clean(await readMessage(chunks, { onError: (e) => errors.push(e.message), terminateOnError: false }));
  assert.deepEqual(errors, ["Provider returned 500: overloaded"]);
  assert.deepEqual(message.parts, [{ type: "step-start" }, { type: "text", text: "Half an ans", state: "done" }]);
  const masked = await run([{ blocks: [], fail: "secret detail" }], { options: { onError: () => "Something went wrong." } });
  assert.deepEqual(labels(masked.chunks), ["start", "start-step", "error:Something went wrong.", "finish-step", "finish:error"]);
});

test("an aborted run: the text so far, then abort with the reason, and no finish", T, async () => {
  const { chunks, agent } = await run([{ blocks: [pieces(text("Once upon"), "Once", " upon")], waitForAbort: true }], {
    during: ({ agent, model }) => model.waiting().then(() => agent.abort()),
  });
  assert.deepEqual(labels(chunks), [
    "start", "start-step", "text-start", "text-delta:Once", "text-delta: upon", "text-end", "finish-step", "abort:Request was aborted",
  ]);
  assert.deepEqual(clean(await readMessage(chunks)).parts, [{ type: "step-start" }, { type: "text", text: "Once upon", state: "done" }]);
  assert.equal(agent.state.messages.at(-1).stopReason, "aborted");
});

const spent = (tokens, cost) => ({ input: tokens / 2, output: tokens / 2, cacheRead: 0, cacheWrite: 0, totalTokens: tokens, cost: { input: cost / 2, output: cost / 2, cacheRead: 0, cacheWrite: 0, total: cost } });

test("messageMetadata: on start and finish as messageMetadata, after any other chunk as message-metadata; the usage so far; the client's message.metadata", T, async () => {
  const asked = [];
  const { chunks } = await run([{ ...reply(call("c1", "work", { n: 1 })), usage: spent(10, 0.25) }, { ...reply(text("done")), usage: spent(6, 0.5) }], {
    toolSpec: { work: {} },
    options: {
      messageMetadata: ({ part, usage }) => {
        asked.push(part.type);
        if (part.type === "start") return { model: "scripted" };
        if (part.type === "finish-step") return { step: usage.totalTokens };
        if (part.type === "finish") return { usage };
        return undefined;
      },
    },
  });
  assert.deepEqual(asked, chunks.filter((c) => c.type !== "message-metadata").map((c) => c.type), "asked once per chunk, in order");
  assert.deepEqual(chunks[0], { type: "start", messageId: "msg-1", messageMetadata: { model: "scripted" } });
  const steps = chunks.filter((c, i) => c.type === "message-metadata" || chunks[i + 1]?.type === "message-metadata").map((c) => c.type === "message-metadata" ? c.messageMetadata : c.type);
  assert.deepEqual(steps, ["finish-step", { step: 10 }, "finish-step", { step: 16 }]);
  assert.deepEqual(chunks.at(-1), { type: "finish", finishReason: "stop", messageMetadata: { usage: spent(16, 0.75) } });
  // What the client holds: the AI SDK's reader merges each piece into message.metadata.
  assert.deepEqual((await readMessage(chunks)).metadata, { model: "scripted", step: 16, usage: spent(16, 0.75) });
});

test("onFinish: once, after the last chunk and before the stream closes, with the run's messages, usage and how it ended", T, async () => {
  const finished = [];
  const { chunks, agent } = await run([{ ...reply(text("hi")), usage: spent(8, 0.1) }], {
    options: { onFinish: async (event) => void finished.push(event) },
  });
  assert.equal(finished.length, 1);
  const [event] = finished;
  assert.deepEqual(Object.keys(event).sort(), ["isAborted", "isError", "messageId", "messages", "usage"]);
  assert.deepEqual(event.messages, agent.state.messages, "the run's new messages (the prompt and the answer)");
  assert.deepEqual({ ...event, messages: event.messages.map((m) => m.role) }, { messages: ["user", "assistant"], usage: spent(8, 0.1), isAborted: false, isError: false, messageId: "msg-1" });
  assert.equal(chunks.at(-1).type, "finish");
  // Awaited before the stream closes; a throw errors the stream.
  const model = scriptedModel([reply(text("again"))]);
  const other = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL } });
  const stream = ui.toUIMessageStream(other, {
    run: () => other.prompt("go"),
    onFinish: async () => {
      throw new Error("could not store the chat");
    },
  });
  await assert.rejects(drain(stream), { message: "could not store the chat" });
  // An aborted run: isAborted.
  const aborted = [];
  await run([{ blocks: [pieces(text("Once upon"), "Once", " upon")], waitForAbort: true }], {
    options: { onFinish: (e) => void aborted.push(e) },
    during: ({ agent: a, model: m }) => m.waiting().then(() => a.abort()),
  });
  assert.deepEqual(aborted.map((e) => [e.isAborted, e.isError, e.messages.at(-1).stopReason]), [[true, false, "aborted"]]);
});

test("abortSignal: aborts the Agent's run and the response ends with abort; before the run began, run is never started", T, async () => {
  const controller = new AbortController();
  const finished = [];
  const { chunks, agent } = await run([{ blocks: [pieces(text("Once upon"), "Once", " upon")], waitForAbort: true }], {
    options: { abortSignal: controller.signal, onFinish: (e) => void finished.push(e) },
    during: ({ model }) => model.waiting().then(() => controller.abort()),
  });
  assert.deepEqual(labels(chunks), [
    "start", "start-step", "text-start", "text-delta:Once", "text-delta: upon", "text-end", "finish-step", "abort:Request was aborted",
  ]);
  assert.equal(agent.state.messages.at(-1).stopReason, "aborted");
  assert.equal(agent.state.isStreaming, false);
  assert.deepEqual(finished.map((e) => e.isAborted), [true]);
  // Already aborted: abort at once, and the prompt never runs.
  const model = scriptedModel([reply(text("never"))]);
  const idle = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL } });
  let ran = false;
  const early = await drain(ui.toUIMessageStream(idle, { messageId: "m2", abortSignal: AbortSignal.abort("gone"), run: () => ((ran = true), idle.prompt("go")) }));
  assert.deepEqual(early, [{ type: "start", messageId: "m2" }, { type: "abort", reason: "gone" }]);
  await validateChunks(early);
  assert.equal(ran, false);
  assert.deepEqual(idle.state.messages, []);
  // An iterable source: the response ends with abort and the iterator is returned.
  let returned = false;
  const never = { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}), return: async () => ((returned = true), { done: true }) }) };
  const cut = new AbortController();
  const reading = drain(ui.toUIMessageStream(never, { messageId: "m3", abortSignal: cut.signal }));
  cut.abort();
  assert.deepEqual(await reading, [{ type: "start", messageId: "m3" }, { type: "abort" }]);
  assert.equal(returned, true);
  assert.throws(() => ui.toUIMessageStream(idle, { abortSignal: {} }), { name: "TypeError", message: "toUIMessageStream: options.abortSignal must be an AbortSignal, got object" });
});

test("a run that rejects before any event (run: the prompt) ends the stream with its error", T, async () => {
  const model = scriptedModel([]);
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL } });
  const chunks = await drain(ui.toUIMessageStream(agent, { messageId: "m", run: () => Promise.reject(new Error("no prompt today")) }));
  assert.deepEqual(chunks, [{ type: "error", errorText: "no prompt today" }]);
  await validateChunks(chunks);
});

test("an async iterable of events and one of { seq, event } give the chunks the Agent source gave", T, async () => {
  const first = await run([reply(pieces(thinking("hm"), "hm"), call("a", "fast", { q: "1" })), reply(pieces(text("done"), "do", "ne"))], { toolSpec: { fast: {} } });
  // Each event as it was when emitted (the message a copy), as a source that keeps up with the Agent sees them.
  const asEmitted = first.events.map(({ event, snapshot }) => (snapshot ? { ...event, message: snapshot } : event));
  async function* plain() {
    yield* asEmitted;
    yield { type: "agent_start" }; // a next run: never read, the stream ended at agent_end
  }
  async function* numbered() {
    let seq = 100;
    for (const event of asEmitted) yield { seq: seq++, event };
  }
  assert.deepEqual(await drain(ui.toUIMessageStream(plain(), { messageId: "msg-1" })), first.chunks);
  assert.deepEqual(await drain(ui.toUIMessageStream(numbered(), { messageId: "msg-1" })), first.chunks);
});

test("the stream ends at agent_end and returns the iterator; cancelling the stream unsubscribes from the Agent", T, async () => {
  let returned = 0;
  const iterable = {
    [Symbol.asyncIterator]() {
      const items = [{ type: "agent_start" }, { type: "agent_end", messages: [] }, { type: "agent_start" }];
      return {
        next: async () => (items.length ? { value: items.shift(), done: false } : { value: undefined, done: true }),
        return: async () => {
          returned += 1;
          return { value: undefined, done: true };
        },
      };
    },
  };
  assert.deepEqual(await drain(ui.toUIMessageStream(iterable, { messageId: "m" })), [{ type: "start", messageId: "m" }, { type: "finish", finishReason: "other" }]);
  assert.equal(returned, 1);

  const listeners = new Set();
  const agentLike = { subscribe: (l) => (listeners.add(l), () => listeners.delete(l)) };
  const stream = ui.toUIMessageStream(agentLike, { messageId: "m" });
  assert.equal(listeners.size, 1);
  await stream.cancel();
  assert.equal(listeners.size, 0);
});

/**
 * Reconnect rule: a client that reconnects during message `k` is sent the run's completed messages (from the
 * transcript, as message_start/message_end), the partial message as one message_start carrying a snapshot, then
 * the live events after the cut. At every cut point the UIMessage equals the uninterrupted one.
 */
test("replay: completed messages from the transcript, a snapshot of the partial message, then live events give the same UIMessage at every cut", T, async () => {
  const first = await run(
    [reply(pieces(thinking("plan it", "s"), "plan", " it"), pieces(text("Calling."), "Call", "ing."), call("a", "fast", { q: "1" })), reply(pieces(text("All done"), "All", " done"))],
    { toolSpec: { fast: {} } },
  );
  const expected = clean(await readMessage(first.chunks));
  const events = first.events;
  let cuts = 0;
  for (let cut = 1; cut < events.length; cut++) {
    const { event } = events[cut];
    if (event.type !== "message_update") continue;
    cuts += 1;
    // the replay: what the transcript holds at the cut, the partial message, then live
    const replay = [{ type: "agent_start" }];
    for (const { event: e, snapshot } of events.slice(0, cut)) {
      if (e.type === "message_end" && e.message.role !== "user") replay.push({ type: "message_start", message: snapshot }, { type: "message_end", message: snapshot });
    }
    replay.push({ type: "message_start", message: events[cut].snapshot });
    for (const { event: e } of events.slice(cut + 1)) replay.push(e);
    async function* source() {
      yield* replay;
    }
    const chunks = await drain(ui.toUIMessageStream(source(), { messageId: "msg-1" }));
    assert.deepEqual(clean(await readMessage(chunks)), expected, `cut at event ${cut}`);
  }
  assert.ok(cuts >= 8, `cuts: ${cuts}`);
});

test("a reader that lags behind the live message (events read after the run, their message objects already final) sends each piece once", T, async () => {
  const first = await run([reply(pieces(text("one two three"), "one", " two", " three"), call("a", "fast", { q: "1" })), reply(pieces(text("end"), "e", "nd"))], { toolSpec: { fast: {} } });
  async function* late() {
    for (const { event } of first.events) yield event; // message_update.message shares the final content now
  }
  const chunks = await drain(ui.toUIMessageStream(late(), { messageId: "msg-1" }));
  await validateChunks(chunks);
  assert.deepEqual(labels(chunks).filter((l) => l.startsWith("text-delta")), ["text-delta:one two three", "text-delta:end"]);
  assert.deepEqual(clean(await readMessage(chunks)), clean(await readMessage(first.chunks)));
});

test("a user message within a run (steering) is a steering-message chunk before the next step", T, async () => {
  const model = scriptedModel([reply(call("a", "fast", { q: "1" })), reply(text("steered"))]);
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: tools({ fast: { delayMs: 10 } }) } });
  let steered = false;
  agent.subscribe((e) => {
    if (e.type === "tool_execution_start" && !steered) {
      steered = true;
      agent.steer({ role: "user", content: [{ type: "text", text: "use metric" }], timestamp: Date.now() });
    }
  });
  const chunks = await drain(ui.toUIMessageStream(agent, { messageId: "m", run: () => agent.prompt("go") }));
  const i = chunks.findIndex((c) => c.type === "steering-message");
  assert.deepEqual(chunks[i], { type: "steering-message", id: "m-steering-1", parts: [{ type: "text", text: "use metric" }] });
  assert.deepEqual(labels(chunks.slice(i - 1, i + 2)), ["finish-step", "steering-message", "start-step"]);
  const parts = clean(await readMessage(chunks)).parts;
  assert.deepEqual(parts.find((p) => p.type === "steering-message"), { type: "steering-message", id: "m-steering-1", parts: [{ type: "text", text: "use metric" }] });
});

test("SSE: toUIMessageStreamResponse frames every chunk as data: <json>, ends with data: [DONE], and sends the protocol's headers", T, async () => {
  const model = scriptedModel([reply(pieces(text("hi"), "hi"))]);
  const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL } });
  const response = ui.toUIMessageStreamResponse(agent, { messageId: "m", run: () => agent.prompt("go"), status: 202, headers: { "x-chat-id": "c1", "cache-control": "no-store" } });
  assert.equal(response.status, 202);
  assert.deepEqual(Object.fromEntries(response.headers), {
    "cache-control": "no-store",
    connection: "keep-alive",
    "content-type": "text/event-stream",
    "x-accel-buffering": "no",
    "x-chat-id": "c1",
    "x-vercel-ai-ui-message-stream": "v1",
  });
  const body = await response.text();
  assert.equal(
    body,
    'data: {"type":"start","messageId":"m"}\n\ndata: {"type":"start-step"}\n\ndata: {"type":"text-start","id":"1-0"}\n\n' +
      'data: {"type":"text-delta","id":"1-0","delta":"hi"}\n\ndata: {"type":"text-end","id":"1-0"}\n\ndata: {"type":"finish-step"}\n\n' +
      'data: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n',
  );
  await validateChunks(parseSse(body));
  assert.deepEqual({ ...ui.UI_MESSAGE_STREAM_HEADERS }, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
  });
});

test("bad input: TypeErrors naming the argument; a source item that is no event ends the stream with an error chunk", T, async () => {
  const agent = new Agent({ initialState: { model: MODEL } });
  assert.throws(() => ui.toUIMessageStream(42), {
    name: "TypeError",
    message: "toUIMessageStream: source must be an Agent or an async iterable of agent events (or of { seq, event }), got number",
  });
  assert.throws(() => ui.toUIMessageStream([{ type: "agent_start" }]), { name: "TypeError", message: /^toUIMessageStream: source must be an Agent .*got an array$/ });
  assert.throws(() => ui.toUIMessageStream(agent, "m1"), { name: "TypeError", message: "toUIMessageStream: options must be an object, got string" });
  assert.throws(() => ui.toUIMessageStream(agent, { messageId: 7 }), { name: "TypeError", message: "toUIMessageStream: options.messageId must be a string, got number" });
  assert.throws(() => ui.toUIMessageStream(agent, { run: "go" }), { name: "TypeError", message: "toUIMessageStream: options.run must be a function, got string" });
  assert.throws(() => ui.toUIMessageStream(agent, { originalMessages: {} }), { name: "TypeError", message: "toUIMessageStream: options.originalMessages must be an array, got object" });
  assert.throws(() => ui.toUIMessageStreamResponse(agent, { status: "200" }), { name: "TypeError", message: "toUIMessageStreamResponse: options.status must be a number, got string" });
  assert.throws(() => ui.toUIMessageStreamResponse(agent, { headers: 5 }), { name: "TypeError", message: "toUIMessageStreamResponse: options.headers must be a Headers object, an array of pairs or a record, got number" });
  assert.throws(() => ui.createUIMessageStreamResponse({ stream: [] }), { name: "TypeError", message: "createUIMessageStreamResponse: stream must be a ReadableStream of UI message chunks, got an array" });
  assert.throws(() => ui.createUIMessageStreamResponse(), { name: "TypeError", message: "createUIMessageStreamResponse: expected { stream, status?, statusText?, headers? }, got undefined" });
  await assert.rejects(ui.pipeUIMessageStreamToResponse({ response: {}, stream: new ReadableStream() }), {
    name: "TypeError",
    message: "pipeUIMessageStreamToResponse: response must be a Node http.ServerResponse, got object",
  });
  async function* junk() {
    yield { type: "agent_start" };
    yield "agent_end";
  }
  assert.deepEqual(await drain(ui.toUIMessageStream(junk(), { messageId: "m" })), [
    { type: "start", messageId: "m" },
    { type: "error", errorText: "toUIMessageStream: source item 1 is neither an agent event nor { seq, event }, got string" },
  ]);
});
