// Declarations of the `agent-loop-wasm/mcp` entry (issue 18): MCP servers' tools as `AgentTool`s over a connected
// `Client` of `@modelcontextprotocol/sdk` (an optional peer dependency). The client is typed by the few members used,
// so these declarations compile without the SDK installed; an SDK `Client` fits them.

import type { AgentTool, AgentToolResult, ImageContent, JsonValue, TextContent } from "./index.js";

/** A tool as `tools/list` describes it (the fields read here; the SDK's `Tool` fits). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: "object"; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };
  outputSchema?: { type: "object"; [key: string]: unknown };
  annotations?: { title?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** The members of an SDK `Client` this entry calls. */
export interface McpClient {
  listTools(params?: { cursor?: string }, options?: any): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: any, options?: any): Promise<any>;
  /** Used by {@link syncMcpTools} only. */
  setNotificationHandler?(schema: any, handler: (notification: any) => void | Promise<void>): void;
  removeNotificationHandler?(method: string): void;
  getServerVersion?(): { name: string; version?: string } | undefined;
}

export interface McpToolsOptions {
  /** Put before every tool name (`"fs_"` makes `read_file` into `fs_read_file`); how clashes between servers are avoided. */
  prefix?: string;
  /** Which tools to take: a list of the server's tool names (before the prefix), or a predicate. */
  filter?: readonly string[] | ((tool: McpToolInfo) => boolean);
  /**
   * Milliseconds a `tools/call` may take without progress (the SDK's request timeout, reset by every progress
   * notification); the SDK's default (60 s) when absent.
   */
  timeoutMs?: number;
}

/** `details` of results from an MCP tool. */
export interface McpToolDetails {
  /** The server's name of the tool (without the prefix). */
  tool: string;
  /** The server's content blocks as received (audio, resources and links included). */
  content?: unknown[];
  /** The result's `_meta`, when it has one. */
  meta?: JsonValue;
  /** On partial results: the progress notification's fields. */
  progress?: number;
  total?: number;
  message?: string;
}

/** A tool of an MCP server; `execute` calls `tools/call`. */
export type McpAgentTool = AgentTool<any, McpToolDetails>;

/**
 * The server's tools (`tools/list`, every page) as `AgentTool`s: name (prefixed), `title` or name as label,
 * description, `inputSchema` as `parameters`, `outputSchema`. `execute` calls `tools/call` with the run's signal
 * (an abort sends `notifications/cancelled`), reports progress notifications through `onUpdate` and maps the result:
 * text and image blocks as they are, audio / binary resources / resource links as a line of text (raw blocks in
 * `details.content`), text resources as text, `structuredContent` kept, `isError` kept. Transport failures and
 * JSON-RPC errors make `execute` throw the SDK's error, so the loop reports an error result with its message.
 */
export declare function mcpTools(client: McpClient, options?: McpToolsOptions): Promise<McpAgentTool[]>;

export interface SyncMcpToolsOptions extends McpToolsOptions {
  /** Called with the new tools of this server after each refresh. */
  onChange?: (tools: McpAgentTool[]) => void;
  /** Called when a refresh fails (listing failed, or a name clash); default `console.error`. The old tools stay. */
  onError?: (error: unknown) => void;
}

/** Stops a {@link syncMcpTools}: no more refreshes, and this server's tools leave `agent.state.tools`. */
export type StopMcpSync = () => void;

/**
 * Puts the server's tools into `agent.state.tools` and keeps them equal to what the server lists: on each
 * `notifications/tools/list_changed` the list is fetched again and this server's tools are replaced (other tools
 * stay). The next run's next request declares the difference to the model (`toolsAdded` / `toolsRemoved`). Rejects
 * (changing nothing) when a name is already taken by another tool: give one server a `prefix`.
 */
export declare function syncMcpTools(
  agent: { state: { tools: AgentTool<any>[] } },
  client: McpClient,
  options?: SyncMcpToolsOptions,
): Promise<StopMcpSync>;

/** Content blocks a tool result can carry to the model. */
export type McpMappedContent = TextContent | ImageContent;
/** A result of an MCP tool. */
export type McpToolResult = AgentToolResult<McpToolDetails>;
