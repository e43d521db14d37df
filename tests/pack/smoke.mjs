// The packaging smoke test (SPEC K-9.4.4), run unchanged in every runtime scripts/pack-test.mjs covers: Node CJS
// (as a generated CommonJS copy), Node ESM, Deno, Vite and webpack bundles in Chromium, a plain-ESM page and
// workerd. Plain ES2020 with timers only: no Node, DOM or Deno APIs.
//
// `smoke(lib)` takes the imported package and runs, through the real wasm loop:
//   1. `agentLoop` with a scripted ("faux") stream function: one assistant message calling two tools, which run as
//      one parallel batch (the slower first in source order, so their ends swap), then a final answer; events are
//      read with `for await` and their labels and the result are checked exactly (the leading system message is
//      the tool declaration, SPEC §3.4; the same labels as pi-agent-core 1.6.0 gives);
//   2. one `Agent.prompt` with a scripted reply;
//   3. `agentLoop` with no stream function: the built-in provider of "openai-completions", whose wasm module the
//      package loads on this first request (issue 43), over a `fetch` that answers with a recorded SSE body.
// It resolves to a short summary (or throws with what differed).

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

const MODEL = {
  id: "faux-1",
  name: "Faux",
  api: "faux",
  provider: "faux",
  baseUrl: "http://127.0.0.1:0",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 8192,
  maxTokens: 1024,
};

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** A stream function replaying `replies` (arrays of content blocks) in small deltas, one per request. */
function fauxStreamFn(lib, replies) {
  let index = 0;
  const requests = [];
  const streamFn = (model, context) => {
    requests.push(context.messages.map((m) => m.role).join(","));
    const blocks = replies[index++];
    const stream = lib.createAssistantMessageEventStream();
    const partial = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: ZERO_USAGE,
      stopReason: "pending",
      timestamp: Date.now(),
    };
    (async () => {
      await tick();
      if (blocks === undefined) {
        stream.push({ type: "error", reason: "error", error: { ...partial, stopReason: "error", errorMessage: "no reply left" } });
        stream.end();
        return;
      }
      stream.push({ type: "start", partial });
      for (let i = 0; i < blocks.length; i++) {
        const block = blocks[i];
        await tick();
        if (block.type === "text") {
          const live = { type: "text", text: "" };
          partial.content.push(live);
          stream.push({ type: "text_start", contentIndex: i, partial });
          for (let at = 0; at < block.text.length; at += 4) {
            const delta = block.text.slice(at, at + 4);
            live.text += delta;
            stream.push({ type: "text_delta", contentIndex: i, delta, partial });
          }
          stream.push({ type: "text_end", contentIndex: i, content: block.text, partial });
        } else {
          const live = { type: "toolCall", id: block.id, name: block.name, arguments: {} };
          partial.content.push(live);
          stream.push({ type: "toolcall_start", contentIndex: i, partial });
          const json = JSON.stringify(block.arguments);
          for (let at = 0; at < json.length; at += 5) {
            stream.push({ type: "toolcall_delta", contentIndex: i, delta: json.slice(at, at + 5), partial });
          }
          live.arguments = block.arguments;
          stream.push({ type: "toolcall_end", contentIndex: i, toolCall: live, partial });
        }
      }
      await tick();
      const stopReason = blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
      const message = { ...partial, content: blocks, stopReason };
      stream.push({ type: "done", reason: stopReason, message });
      stream.end(message);
    })();
    return stream;
  };
  return { streamFn, requests };
}

function delayTool(name, ms) {
  return {
    name,
    label: name,
    description: `waits ${ms} ms and echoes its text`,
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    executionMode: "parallel",
    execute: async (toolCallId, args) => {
      await tick(ms);
      return { content: [{ type: "text", text: `${name}:${args.text}` }], details: { ms } };
    },
  };
}

function label(e) {
  if (e.type.startsWith("message_")) return `${e.type}:${e.message.role}`;
  if (e.type.startsWith("tool_execution_")) return `${e.type}:${e.toolCallId}`;
  return e.type;
}

function check(what, actual, expected) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

const LOOP_LABELS = [
  "agent_start",
  "turn_start",
  "message_start:system",
  "message_end:system",
  "message_start:user",
  "message_end:user",
  "message_start:assistant",
  "message_end:assistant",
  "tool_execution_start:call-slow",
  "tool_execution_start:call-fast",
  "tool_execution_end:call-fast",
  "tool_execution_end:call-slow",
  "message_start:toolResult",
  "message_end:toolResult",
  "message_start:toolResult",
  "message_end:toolResult",
  "turn_end",
  "turn_start",
  "message_start:assistant",
  "message_end:assistant",
  "turn_end",
  "agent_end",
];

export async function smoke(lib) {
  // 1. agentLoop: a parallel batch of two tools, then an answer.
  const faux = fauxStreamFn(lib, [
    [
      { type: "text", text: "Calling both tools." },
      { type: "toolCall", id: "call-slow", name: "slow", arguments: { text: "a" } },
      { type: "toolCall", id: "call-fast", name: "fast", arguments: { text: "b" } },
    ],
    [{ type: "text", text: "Both tools answered: slow:a, fast:b." }],
  ]);
  const context = { systemPrompt: "You are a test.", messages: [], tools: [delayTool("slow", 40), delayTool("fast", 5)] };
  const config = { model: MODEL, convertToLlm: (messages) => messages, toolExecution: "parallel" };
  const prompt = { role: "user", content: "Run both tools.", timestamp: Date.now() };
  const stream = lib.agentLoop([prompt], context, config, undefined, faux.streamFn);
  const labels = [];
  let updates = 0;
  for await (const event of stream) {
    if (event.type === "message_update") updates++;
    else labels.push(label(event));
  }
  const result = await stream.result();
  check("agentLoop event labels", labels, LOOP_LABELS);
  if (updates < 4) throw new Error(`agentLoop: expected streamed message_update events, got ${updates}`);
  check("agentLoop result roles", result.map((m) => m.role), ["system", "user", "assistant", "toolResult", "toolResult", "assistant"]);
  check(
    "agentLoop tool results",
    result.filter((m) => m.role === "toolResult").map((m) => [m.toolCallId, m.content[0].text, m.isError]),
    [["call-slow", "slow:a", false], ["call-fast", "fast:b", false]],
  );
  check("agentLoop final text", result[5].content[0].text, "Both tools answered: slow:a, fast:b.");
  check("agentLoop requests", faux.requests, ["system,user", "system,user,assistant,toolResult,toolResult"]);

  // 2. Agent.prompt with one scripted reply.
  const agentFaux = fauxStreamFn(lib, [[{ type: "text", text: "Hello from the agent." }]]);
  const agent = new lib.Agent({ initialState: { model: MODEL }, streamFn: agentFaux.streamFn });
  const seen = [];
  agent.subscribe((event) => {
    seen.push(event.type);
  });
  await agent.prompt("Hi");
  check("Agent messages", agent.state.messages.map((m) => m.role), ["user", "assistant"]);
  check("Agent reply", agent.state.messages[1].content[0].text, "Hello from the agent.");
  if (seen[0] !== "agent_start" || seen[seen.length - 1] !== "agent_end") throw new Error(`Agent events: ${seen.join(",")}`);

  // 3. The default stream function: the built-in provider's module is loaded by this first request.
  const builtin = await builtinRun(lib);

  return {
    version: lib.VERSION,
    events: labels.length,
    updates,
    messages: result.length,
    agentMessages: agent.state.messages.length,
    builtin,
  };
}

/** The SSE body of a chat completion answering `text`, as OpenAI streams it (one delta per word). */
function completionBody(text) {
  const chunk = (delta, finish) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-test", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const words = text.split(/(?= )/);
  return [chunk({ role: "assistant", content: "" }, null), ...words.map((w) => chunk({ content: w }, null)), chunk({}, "stop"), "data: [DONE]\n\n"].join("");
}

/** One run on the built-in "openai-completions" provider (no stream function given), over a scripted `fetch`. */
async function builtinRun(lib) {
  const requests = [];
  const fetch = async (url, init) => {
    requests.push(`${init.method} ${url} ${JSON.parse(init.body).messages.map((m) => m.role).join(",")}`);
    const bytes = new TextEncoder().encode(completionBody("Hello from a built-in provider."));
    const body = new ReadableStream({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 64) controller.enqueue(bytes.slice(at, at + 64));
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const model = { ...MODEL, id: "gpt-test", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9/v1" };
  const config = { model, convertToLlm: (messages) => messages, apiKey: "test-key", fetch };
  const prompt = { role: "user", content: "Hello?", timestamp: Date.now() };
  const stream = lib.agentLoop([prompt], { messages: [] }, config);
  const labels = [];
  for await (const event of stream) if (event.type !== "message_update") labels.push(label(event));
  const result = await stream.result();
  check("built-in provider requests", requests, ["POST http://127.0.0.1:9/v1/chat/completions user"]);
  check("built-in provider events", labels, ["agent_start", "turn_start", "message_start:user", "message_end:user", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
  const reply = result[1];
  check("built-in provider reply", [reply.stopReason, reply.content.map((b) => b.text).join("")], ["stop", "Hello from a built-in provider."]);
  return reply.content[0].text;
}
