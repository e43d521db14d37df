// Shared parts of the MCP tests: the built package (installed here by install-pkg.mjs, loaded by name), a scripted
// model (a streamFn whose replies are functions of the request), the MCP servers from npm and the SDK's client
// transports. Every server a test starts listens on 127.0.0.1 and is ended by its PID.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

// The copy under node_modules must be this build's: a stale one would test old code.
{
  const built = join(HERE, "..", "..", "pkg", "dist", "node", "agent_loop_wasm_bg.wasm");
  const copy = join(HERE, "node_modules", "agent-loop-wasm", "dist", "node", "agent_loop_wasm_bg.wasm");
  const mcpBuilt = join(HERE, "..", "..", "pkg", "dist", "node", "mcp.cjs");
  const mcpCopy = join(HERE, "node_modules", "agent-loop-wasm", "dist", "node", "mcp.cjs");
  let fresh = false;
  try {
    fresh = statSync(built).size === statSync(copy).size && Math.trunc(statSync(built).mtimeMs / 1000) === Math.trunc(statSync(copy).mtimeMs / 1000) && readFileSync(mcpBuilt, "utf8") === readFileSync(mcpCopy, "utf8");
  } catch {
    fresh = false;
  }
  if (!fresh) throw new Error("tests/mcp: the installed agent-loop-wasm is missing or older than pkg/: run node tests/mcp/install-pkg.mjs");
}

export const { Agent, createAssistantMessageEventStream } = await import("agent-loop-wasm");
export const { mcpTools, syncMcpTools } = await import("agent-loop-wasm/mcp");

export const EVERYTHING = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
export const FILESYSTEM = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
export const CONTROL = join(HERE, "servers", "control.mjs");

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const MODEL = {
  id: "scripted-1",
  name: "Scripted",
  api: "scripted",
  provider: "scripted",
  baseUrl: "http://127.0.0.1:0",
  reasoning: false,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 4096,
};

const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

export const call = (id, name, args = {}) => ({ type: "toolCall", id, name, arguments: args });

/** An assistant message: tool calls (stopReason toolUse) or text (stop). */
export function reply(...blocks) {
  const content = blocks.map((b) => (typeof b === "string" ? { type: "text", text: b } : b));
  return {
    role: "assistant",
    content,
    api: MODEL.api,
    provider: MODEL.provider,
    model: MODEL.id,
    usage: usage(),
    stopReason: content.some((b) => b.type === "toolCall") ? "toolUse" : "stop",
    timestamp: Date.now(),
  };
}

/** The tool names a transcript declares to the model, by replaying its system messages (SPEC L-3.4.1). */
export function declaredTools(messages) {
  const tools = new Map();
  for (const m of messages) {
    if (m.role !== "system") continue;
    for (const t of m.toolsRemoved ?? []) tools.delete(t.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  return [...tools.keys()];
}

/** The system messages of a transcript that change its tools, as `{added, removed}` name lists. */
export const toolChanges = (messages) =>
  messages
    .filter((m) => m.role === "system" && (m.toolsAdded || m.toolsRemoved))
    .map((m) => ({ added: (m.toolsAdded ?? []).map((t) => t.name), removed: (m.toolsRemoved ?? []).map((t) => t.name) }));

/**
 * A scripted model: each request takes the next reply (a message, or `(context) => message`). Records each
 * request's messages and the names of its tools.
 */
export function scriptedModel(replies) {
  const pending = [...replies];
  const requests = [];
  const streamFn = (_model, context) => {
    requests.push({ messages: [...context.messages], tools: declaredTools(context.messages) });
    const stream = createAssistantMessageEventStream();
    const next = pending.shift();
    setImmediate(async () => {
      const message = next === undefined ? reply("(script ended)") : typeof next === "function" ? await next(context) : next;
      stream.push({ type: "start", partial: { ...message, content: [] } });
      stream.push({ type: "done", reason: message.stopReason, message });
      stream.end();
    });
    return stream;
  };
  return { streamFn, requests, get remaining() { return pending.length; } };
}

/** An Agent on a scripted model that records its events. */
export function scriptedAgent(replies, options = {}) {
  const model = scriptedModel(replies);
  const agent = new Agent({ streamFn: model.streamFn, ...options, initialState: { model: MODEL, ...(options.initialState ?? {}) } });
  const events = [];
  agent.subscribe((e) => {
    events.push(e);
  });
  return { agent, model, events };
}

/** `tool_execution_*` events as `type:toolCallId` labels. */
export const toolLabels = (events) =>
  events.filter((e) => e.type.startsWith("tool_execution_")).map((e) => `${e.type.slice("tool_execution_".length)}:${e.toolCallId}`);

/** The result message of a tool call in a message list. */
export const resultOf = (messages, id) => messages.find((m) => m.role === "toolResult" && m.toolCallId === id);

export const texts = (content) => content.filter((b) => b.type === "text").map((b) => b.text);

/** A Client connected over stdio to `node <script> ...args`; `stderr` of the server is collected. */
export async function stdioClient(script, args = [], { env, name = "agent-loop-wasm-tests" } = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [script, ...args], env: { ...process.env, ...env }, stderr: "pipe" });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, pid: transport.pid };
}

/**
 * server-everything in Streamable HTTP mode as its own process on 127.0.0.1 (a random port), found by reading the
 * port it reports; `stop()` ends it by its PID and waits for its exit.
 */
export async function startEverythingHttp() {
  const child = spawn(process.execPath, ["--import", join(HERE, "servers", "loopback.mjs"), EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: "0" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen within 15 s:\n${stderr}`)), 15000);
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const m = /LISTENING (\d+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on("exit", (code) => reject(new Error(`server-everything exited ${code}:\n${stderr}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, "SIGTERM");
      await exited;
    },
  };
}

export async function httpClient(url, { name = "agent-loop-wasm-tests" } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** True while a process with this PID exists. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
