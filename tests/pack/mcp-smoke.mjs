// The packaging smoke test of `agent-loop-wasm/mcp` (issue 18), run by scripts/pack-test.mjs in Node CJS (as a
// generated CommonJS copy) and ESM, Deno and a Vite bundle in Chromium, each with the packed tarball and
// @modelcontextprotocol/sdk installed from npm. Plain ES2020 with timers only.
//
// `mcpSmoke({ lib, mcp, Server, Client, InMemoryTransport, types })`: an MCP server of the SDK (low-level `Server`,
// JSON Schema tools, no zod) linked to an SDK `Client` in memory; `syncMcpTools` puts its tool into an Agent of the
// real wasm loop; a scripted model calls it; then the server adds a tool (`notifications/tools/list_changed`) and
// the next prompt declares it. Resolves to a summary, or throws with what differed.

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
const NUMBERS = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };

function check(ok, what) {
  if (!ok) throw new Error(`mcp smoke: ${what}`);
}

export async function mcpSmoke({ lib, mcp, Server, Client, InMemoryTransport, types }) {
  check(typeof mcp.mcpTools === "function" && typeof mcp.syncMcpTools === "function", "agent-loop-wasm/mcp lacks mcpTools/syncMcpTools");
  let tools = [{ name: "add", description: "Adds a and b", inputSchema: NUMBERS }];
  const server = new Server({ name: "smoke", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(types.CallToolRequestSchema, async ({ params }) => {
    const { a, b } = params.arguments;
    return { content: [{ type: "text", text: `${params.name}=${params.name === "add" ? a + b : a * b}` }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "smoke-client", version: "1.0.0" });
  await client.connect(clientSide);

  const replies = [
    [{ type: "toolCall", id: "t1", name: "s_add", arguments: { a: 2, b: 3 } }],
    [{ type: "text", text: "five" }],
    [{ type: "toolCall", id: "t2", name: "s_mul", arguments: { a: 2, b: 3 } }],
    [{ type: "text", text: "six" }],
  ];
  const streamFn = () => {
    const content = replies.shift() ?? [{ type: "text", text: "(none)" }];
    const message = {
      role: "assistant",
      content,
      api: MODEL.api,
      provider: MODEL.provider,
      model: MODEL.id,
      usage: ZERO_USAGE,
      stopReason: content[0].type === "toolCall" ? "toolUse" : "stop",
      timestamp: Date.now(),
    };
    const stream = lib.createAssistantMessageEventStream();
    tick().then(() => {
      stream.push({ type: "start", partial: { ...message, content: [] } });
      stream.push({ type: "done", reason: message.stopReason, message });
      stream.end();
    });
    return stream;
  };
  const agent = new lib.Agent({ streamFn, initialState: { model: MODEL } });
  const stop = await mcp.syncMcpTools(agent, client, { prefix: "s_" });
  check(agent.state.tools.map((t) => t.name).join() === "s_add", `tools after sync: ${agent.state.tools.map((t) => t.name)}`);
  await agent.prompt("add");
  const first = agent.state.messages.find((m) => m.role === "toolResult");
  check(first && first.content[0].text === "add=5" && first.isError === false, `add result ${JSON.stringify(first)}`);

  tools = [...tools, { name: "mul", description: "Multiplies a and b", inputSchema: NUMBERS }];
  await server.sendToolListChanged();
  for (let i = 0; i < 200 && agent.state.tools.length < 2; i++) await tick(5);
  check(agent.state.tools.map((t) => t.name).join() === "s_add,s_mul", `tools after list_changed: ${agent.state.tools.map((t) => t.name)}`);
  await agent.prompt("multiply");
  const results = agent.state.messages.filter((m) => m.role === "toolResult").map((m) => m.content[0].text);
  check(results.join() === "add=5,mul=6", `results ${results}`);
  const declarations = agent.state.messages.filter((m) => m.role === "system").map((m) => (m.toolsAdded ?? []).map((t) => t.name).join("+"));
  check(declarations.join() === "s_add,s_mul", `declarations ${declarations}`);

  stop();
  check(agent.state.tools.length === 0, "tools left after stop()");
  await client.close();
  await server.close();
  return { results, declarations, messages: agent.state.messages.length };
}
