// The packaging smoke test of `agent-loop-wasm/ui` (issue 31), run by scripts/pack-test.mjs in Node CJS (as a generated
// CommonJS copy) and ESM, Deno, a Vite bundle in Chromium and workerd, each with only the packed tarball installed.
// Plain ES2020 with timers only.
//
// `uiSmoke({ lib, ui })`: an Agent of the real wasm loop on a scripted model (a tool call, then text) streamed as the
// AI SDK's UI message stream through `toUIMessageStreamResponse`: the protocol's header, the SSE framing and the exact
// chunk sequence; then the posted form of that answer through `convertToAgentMessages`. Resolves to a summary, or
// throws with what differed.

const ZERO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
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

function check(ok, what) {
  if (!ok) throw new Error(`ui smoke: ${what}`);
}

export async function uiSmoke({ lib, ui }) {
  check(typeof ui.toUIMessageStreamResponse === "function" && typeof ui.convertToAgentMessages === "function", "agent-loop-wasm/ui lacks its functions");
  const replies = [
    [{ type: "toolCall", id: "t1", name: "add", arguments: { a: 2, b: 3 } }],
    [{ type: "text", text: "five" }],
  ];
  const streamFn = () => {
    const content = replies.shift() ?? [{ type: "text", text: "(none)" }];
    const message = { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id, usage: ZERO_USAGE, stopReason: content[0].type === "toolCall" ? "toolUse" : "stop", timestamp: Date.now() };
    const stream = lib.createAssistantMessageEventStream();
    tick().then(() => {
      stream.push({ type: "start", partial: { ...message, content: [] } });
      stream.push({ type: "done", reason: message.stopReason, message });
      stream.end();
    });
    return stream;
  };
  const add = {
    name: "add",
    label: "add",
    description: "Adds a and b",
    parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    execute: async (_id, { a, b }) => ({ content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } }),
  };
  const agent = new lib.Agent({ streamFn, initialState: { model: MODEL, tools: [add] } });
  const response = ui.toUIMessageStreamResponse(agent, { messageId: "m1", run: () => agent.prompt("add 2 and 3") });
  check(response.headers.get("x-vercel-ai-ui-message-stream") === "v1", `header ${response.headers.get("x-vercel-ai-ui-message-stream")}`);
  check(response.headers.get("content-type") === "text/event-stream", `content-type ${response.headers.get("content-type")}`);
  const body = await response.text();
  const frames = body.split("\n\n");
  check(frames.pop() === "" && frames.pop() === "data: [DONE]", `SSE ending ${JSON.stringify(body.slice(-30))}`);
  const chunks = frames.map((f) => JSON.parse(f.slice("data: ".length)));
  const labels = chunks.map((c) => c.type + (c.toolCallId ? `:${c.toolCallId}` : c.delta ? `:${c.delta}` : ""));
  const expected = [
    "start", "start-step", "tool-input-start:t1", "tool-input-available:t1", "tool-output-available:t1", "finish-step",
    "start-step", "text-start", "text-delta:five", "text-end", "finish-step", "finish",
  ];
  check(labels.join() === expected.join(), `chunks ${labels.join()}`);
  check(JSON.stringify(chunks[4].output) === JSON.stringify({ content: [{ type: "text", text: "5" }], details: { sum: 5 } }), `output ${JSON.stringify(chunks[4])}`);

  // The same answer as a useChat client posts it back.
  const posted = [
    { id: "u1", role: "user", parts: [{ type: "text", text: "add 2 and 3" }] },
    {
      id: "m1",
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "tool-add", toolCallId: "t1", state: "output-available", input: { a: 2, b: 3 }, output: chunks[4].output },
        { type: "step-start" },
        { type: "text", text: "five", state: "done" },
      ],
    },
  ];
  const messages = ui.convertToAgentMessages(posted);
  const roles = messages.map((m) => m.role).join();
  check(roles === "user,assistant,toolResult,assistant", `converted roles ${roles}`);
  check(messages[2].content[0].text === "5" && messages[2].details.sum === 5, `converted result ${JSON.stringify(messages[2])}`);
  return { chunks: chunks.length, roles };
}
