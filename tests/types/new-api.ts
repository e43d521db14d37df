// API that exists only in agent-loop-wasm: optional stream functions, built-in providers, timeouts, parallel limit,
// snapshots, version constants and the web entry's initialisation.
import {
  Agent,
  BUILTIN_APIS,
  DEFAULT_AGENT_IDENTITY,
  SNAPSHOT_VERSION,
  VERSION,
  agentLoop,
  getDefaultStreamFn,
  runAgentLoop,
  runToolCall,
  streamBuiltin,
  validateToolArguments,
  type AgentLoopConfig,
  type AgentRestoreOptions,
  type AgentSnapshot,
  type AgentTool,
  type AssistantMessageEventStream,
  type BuiltinApi,
  type ClientIdentity,
  type KnownApi,
  type Api,
  type KnownProvider,
  type Model,
  type ProviderId,
  type StreamFn,
  type ThinkingLevel,
  type ThinkingBudgets,
  type Transport,
  type CacheRetention,
  type QueueMode,
  type ToolExecutionMode,
} from "agent-loop-wasm";
import * as web from "agent-loop-wasm/web";
import type { Equal, Expect } from "./assert.js";

export type Apis = [
  Expect<Equal<BuiltinApi, "openai-completions" | "anthropic-messages" | "openai-responses" | "google-generative-ai">>,
  Expect<BuiltinApi extends KnownApi ? true : false>,
  Expect<Equal<ThinkingLevel, "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max">>,
  Expect<Equal<QueueMode, "all" | "one-at-a-time">>,
  Expect<Equal<ToolExecutionMode, "sequential" | "parallel">>,
  Expect<Equal<Transport, "sse" | "websocket" | "websocket-cached" | "auto">>,
  Expect<Equal<CacheRetention, "none" | "short" | "long">>,
  Expect<"anthropic" extends KnownProvider ? true : false>,
  Expect<Equal<keyof ThinkingBudgets, "minimal" | "low" | "medium" | "high">>,
];
export const anyApi: Api = "my-custom-api";
export const anyProvider: ProviderId = "my-provider";
export const apis: readonly BuiltinApi[] = BUILTIN_APIS;
export const version: string = VERSION;
export const snapshotVersion: number = SNAPSHOT_VERSION;
export const identity: ClientIdentity = DEFAULT_AGENT_IDENTITY;
export const fallback: StreamFn = getDefaultStreamFn();

const model: Model = {
  id: "claude-sonnet-4-5",
  name: "Claude Sonnet 4.5",
  api: "anthropic-messages",
  provider: "anthropic",
  baseUrl: "",
  reasoning: true,
  input: ["text", "image"],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200000,
  maxTokens: 64000,
};

const slow: AgentTool = {
  name: "wait",
  label: "Wait",
  description: "Waits",
  parameters: { type: "object", properties: { ms: { type: "integer" } }, required: ["ms"] },
  timeoutMs: 30_000,
  execute: (_id, params, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ content: [{ type: "text", text: "waited" }], details: undefined }), params.ms);
      signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)));
    }),
};

const config: AgentLoopConfig = {
  model,
  convertToLlm: (messages) => messages.filter((m) => m.role === "user"),
  toolTimeoutMs: 60_000,
  streamIdleTimeoutMs: 30_000,
  abortGraceMs: Infinity,
  maxParallelTools: 4,
  apiKey: "key",
  env: { ANTHROPIC_API_KEY: "key" },
  fetch: (input, init) => fetch(input, init),
  maxRetries: 1,
  timeoutMs: 10_000,
  toolChoice: "auto",
};

export async function main(): Promise<void> {
  // No stream function anywhere: the built-in providers are used (D7).
  const stream = agentLoop([{ role: "user", content: "hi", timestamp: Date.now() }], { messages: [], tools: [slow] }, config);
  await stream.result();
  await runAgentLoop([], { messages: [] }, config, () => undefined);
  await runAgentLoop([], { messages: [] }, config, () => undefined, undefined, streamBuiltin);

  const direct: AssistantMessageEventStream = streamBuiltin(model, { messages: [] }, { apiKey: "k", reasoning: "high" });
  for await (const event of direct) if (event.type === "error") console.log(event.error.errorMessage);
  // Issue 13: the bound on one SSE line / event.
  streamBuiltin(model, { messages: [] }, { apiKey: "k", maxStreamEventBytes: 1024 * 1024 });
  // @ts-expect-error a byte count is a number
  streamBuiltin(model, { messages: [] }, { maxStreamEventBytes: "1MB" });

  const outcome = await runToolCall(
    { type: "toolCall", id: "c1", name: "wait", arguments: { ms: 10 } },
    { tools: [slow], assistantMessage: await direct.result(), context: { messages: [] }, toolTimeoutMs: 100, abortGraceMs: 0 },
  );
  console.log(outcome.isError, validateToolArguments(slow, outcome.toolCall));

  const agent = new Agent();
  const configured = new Agent({
    initialState: { model, tools: [slow] },
    toolTimeoutMs: 1000,
    streamIdleTimeoutMs: 1000,
    abortGraceMs: 0,
    maxParallelTools: 2,
    apiKey: "k",
    maxTokens: 100,
    temperature: 0,
    headers: { "x-a": "b", "x-remove": null },
    fetch: globalThis.fetch,
  });
  configured.maxParallelTools = 8;
  configured.abortGraceMs = 5000;

  const snapshot: AgentSnapshot = agent.snapshot();
  const format: "agent-loop-wasm/agent-snapshot" = snapshot.format;
  console.log(format, snapshot.version, snapshot.toolNames, snapshot.steeringQueue.length, snapshot.sessionId);
  const text = JSON.stringify(snapshot);
  const options: AgentRestoreOptions = { tools: [slow], streamFn: streamBuiltin, sessionId: "s" };
  const restored: Agent = Agent.restore(text, options);
  await restored.prompt("again");

  class MyAgent extends Agent {
    hello(): string {
      return "hi";
    }
  }
  const mine = MyAgent.restore(snapshot);
  const sub: MyAgent = mine;
  console.log(sub.hello());
  // @ts-expect-error AgentRestoreOptions has no initialState
  Agent.restore(snapshot, { initialState: {} });

  // The web entry re-exports everything and adds explicit initialisation.
  await web.init();
  await web.init(new URL("https://cdn.example/agent_loop_wasm_bg.wasm"));
  await web.init({ module_or_path: fetch("/agent_loop_wasm_bg.wasm") });
  await web.init({ module_or_path: "/agent_loop_wasm_bg.wasm" });
  web.initSync(new Uint8Array(8));
  web.initSync({ module: new WebAssembly.Module(new Uint8Array(8)) });
  const webAgent: web.Agent = new web.Agent();
  console.log(webAgent.state.isStreaming, web.VERSION);
}

// Issue 14.4: takeQueuedMessages(predicate), as pi's newer Agent has it.
declare const queueAgent: Agent;
const takenSteering: import("agent-loop-wasm").AgentMessage[] = queueAgent.takeQueuedMessages((m) => m.role === "user");
void takenSteering;
// @ts-expect-error: the predicate is required
queueAgent.takeQueuedMessages();
