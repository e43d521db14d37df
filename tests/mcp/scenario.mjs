// One agent run against server-everything shared by the Deno and Chromium clients (runtimes.test.mjs): a scripted
// model calls echo and a long-running operation in parallel, then answers. Plain ES2020, no runtime APIs.
const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const MODEL = { id: "s", name: "s", api: "scripted", provider: "scripted", baseUrl: "http://127.0.0.1:0", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8192, maxTokens: 1024 };

export async function runScenario({ Agent, createAssistantMessageEventStream, mcpTools, client }) {
  const replies = [
    [
      { type: "toolCall", id: "c1", name: "ev_trigger-long-running-operation", arguments: { duration: 0.4, steps: 2 } },
      { type: "toolCall", id: "c2", name: "ev_echo", arguments: { message: "from afar" } },
    ],
    [{ type: "text", text: "done" }],
  ];
  const streamFn = () => {
    const content = replies.shift() ?? [{ type: "text", text: "(none)" }];
    const message = { role: "assistant", content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id, usage: ZERO, stopReason: content[0].type === "toolCall" ? "toolUse" : "stop", timestamp: Date.now() };
    const stream = createAssistantMessageEventStream();
    setTimeout(() => {
      stream.push({ type: "start", partial: { ...message, content: [] } });
      stream.push({ type: "done", reason: message.stopReason, message });
      stream.end();
    }, 0);
    return stream;
  };
  const tools = await mcpTools(client, { prefix: "ev_", filter: ["echo", "trigger-long-running-operation"] });
  const agent = new Agent({ streamFn, initialState: { model: MODEL, tools } });
  const events = [];
  agent.subscribe((e) => {
    if (e.type.startsWith("tool_execution_")) events.push(`${e.type.slice(15)}:${e.toolCallId}`);
  });
  await agent.prompt("go");
  const results = agent.state.messages.filter((m) => m.role === "toolResult").map((m) => `${m.toolCallId}=${m.content[0].text}`);
  return { tools: tools.map((t) => t.name), results, events, last: agent.state.messages.at(-1).content[0].text };
}
