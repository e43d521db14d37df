// agent-loop-wasm/mcp (issue 18): what mcpTools and syncMcpTools take and give. The client is typed structurally,
// so this compiles without @modelcontextprotocol/sdk; a stand-in with the SDK Client's method shapes must fit.
import { Agent, type AgentTool } from "agent-loop-wasm";
import { mcpTools, syncMcpTools, type McpAgentTool, type McpClient, type McpToolDetails, type StopMcpSync } from "agent-loop-wasm/mcp";
import type { Equal, Expect } from "./assert.js";

/** The SDK Client's signatures of the methods used (copied shapes: params, resultSchema, RequestOptions). */
declare class SdkLikeClient {
  listTools(params?: { cursor?: string; _meta?: object }, options?: { signal?: AbortSignal }): Promise<{ tools: { name: string; inputSchema: { type: "object"; properties?: Record<string, object> } }[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: unknown, options?: { signal?: AbortSignal; onprogress?: (p: { progress: number }) => void }): Promise<{ content: unknown[] }>;
  setNotificationHandler(schema: object, handler: (notification: { method: string }) => void): void;
  removeNotificationHandler(method: string): void;
  getServerVersion(): { name: string; version: string } | undefined;
}
declare const client: SdkLikeClient;
const asClient: McpClient = client;

async function main(agent: Agent): Promise<void> {
  const tools = await mcpTools(asClient, { prefix: "fs_", filter: ["read_file"], timeoutMs: 30_000 });
  type _tools = Expect<Equal<typeof tools, McpAgentTool[]>>;
  const asAgentTools: AgentTool<any>[] = tools;
  agent.state.tools = [...agent.state.tools, ...asAgentTools];
  const result = await tools[0]!.execute("id", { path: "README.md" });
  const details: McpToolDetails = result.details;
  void details.content;
  const stop = await syncMcpTools(agent, client, { filter: (t) => t.name !== "danger", onError: (e) => console.log(e), onChange: (ts) => void ts.length });
  type _stop = Expect<Equal<typeof stop, StopMcpSync>>;
  stop();
  // @ts-expect-error the options are checked
  await mcpTools(client, { prefix: 1 });
  // @ts-expect-error a client needs callTool
  await mcpTools({ listTools: async () => ({ tools: [] }) });
}
void main;
