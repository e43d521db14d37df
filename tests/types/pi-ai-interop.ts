// A reference program that mixes pi-ai values into the loop API: a model literal written for pi-ai,
// `models.streamSimple.bind(models)` as the stream function, pi-ai's own streams, messages and tools.
import {
  Agent,
  agentLoop,
  runAgentLoop,
  setDefaultStreamFn,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentTool,
  type StreamFn,
} from "agent-loop-wasm";
import {
  createAssistantMessageEventStream,
  createModels,
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
  type AssistantMessage,
  type AssistantMessageEvent,
  type Context,
  type Message,
  type Model,
  type SimpleStreamOptions,
  type Tool,
  type TranscriptContext,
  type Usage,
} from "@earendil-works/pi-ai";
import { anthropicProvider } from "@earendil-works/pi-ai/providers/anthropic";

// A model literal typed for pi-ai, with per-API compat flags, cache tiers and thinking-level maps.
const local: Model<"openai-completions"> = {
  id: "qwen3-8b",
  name: "Qwen3 8B (llama.cpp)",
  api: "openai-completions",
  provider: "llama.cpp",
  baseUrl: "http://localhost:8080/v1",
  reasoning: true,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, tiers: [{ inputTokensAbove: 1, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }] },
  contextWindow: 32768,
  maxTokens: 8192,
  headers: { "x-local": "1" },
  thinkingLevelMap: { off: null, high: "high" },
  promptCache: { short: 300 },
  samplingParams: { top_k: 20 },
  samplingParamsByThinkingLevel: { high: { temperature: 0.6 } },
  compat: { supportsDeveloperRole: false, maxTokensField: "max_tokens", thinkingFormat: "qwen" },
};

const models = createModels();
models.setProvider(anthropicProvider());
const faux = fauxProvider();
models.setProvider(faux.provider);
faux.setResponses([fauxAssistantMessage([fauxToolCall("echo", { text: "hi" })]), fauxAssistantMessage("done")]);

// API-1.6.4: the bound pi-ai method is a stream function.
const bound: StreamFn = models.streamSimple.bind(models);
setDefaultStreamFn(models.streamSimple.bind(models));

// A hand-written stream function on pi-ai's stream class and types.
const scripted: StreamFn = (model: Model<any>, context: TranscriptContext, options?: SimpleStreamOptions) => {
  const stream = createAssistantMessageEventStream();
  const usage: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const message: AssistantMessage = {
    role: "assistant",
    content: [{ type: "text", text: `${context.messages.length} messages, level ${options?.reasoning ?? "off"}` }],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage,
    stopReason: "stop",
    timestamp: Date.now(),
  };
  queueMicrotask(() => {
    const start: AssistantMessageEvent = { type: "start", partial: message };
    stream.push(start);
    stream.push({ type: "done", reason: "stop", message });
  });
  return stream;
};

// Provider-level pi-ai functions take pi-ai's branded TranscriptContext: pass them directly, or annotate the
// forwarded parameter with pi-ai's type (method-style parameters are bivariant). An unannotated lambda forwarding its
// `context` to them does not type-check here (the brand is a pi-ai unique symbol that cannot be re-declared).
const direct: StreamFn = faux.provider.streamSimple;
const forwarded: StreamFn = (model: Model<any>, context: TranscriptContext, options?: SimpleStreamOptions) =>
  faux.provider.streamSimple(model, context, options);

// An async stream function that wraps the bound one.
const wrapped: StreamFn = async (model, context, options) => {
  const normalized: Context = { messages: context.messages };
  return models.streamSimple(model, normalized, { ...options, maxRetries: 0 });
};

const echo: AgentTool = {
  name: "echo",
  label: "Echo",
  description: "Echo",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (_id, params) => ({ content: [{ type: "text", text: JSON.stringify(params) }], details: null }),
};

// pi-ai values in the loop's messages and tools.
const piTool: Tool = { name: "lookup", description: "Lookup", parameters: { type: "object" } };
const history: Message[] = [
  { role: "system", content: "Be brief.", toolsAdded: [piTool], timestamp: 0 },
  { role: "user", content: "hello", timestamp: 1 },
];

const config: AgentLoopConfig = {
  model: local,
  convertToLlm: (messages) => messages as Message[],
  onPayload: async (payload) => payload,
};

export async function main(): Promise<void> {
  const stream = agentLoop([], { messages: [...history], tools: [echo] }, { ...config, model: faux.getModel() }, undefined, bound);
  const result: AgentMessage[] = await stream.result();
  const assistant = result.find((m): m is AssistantMessage => m.role === "assistant");
  console.log(assistant?.durationMs);

  await runAgentLoop([{ role: "user", content: "x", timestamp: 2 }], { messages: [] }, config, () => {}, undefined, scripted);
  await runAgentLoop([{ role: "user", content: "y", timestamp: 3 }], { messages: [] }, config, () => {}, undefined, wrapped);
  await runAgentLoop([], { messages: [...history] }, config, () => {}, undefined, direct);
  await runAgentLoop([], { messages: [...history] }, config, () => {}, undefined, forwarded);

  const agent = new Agent({ streamFn: models.streamSimple.bind(models), initialState: { model: local } });
  agent.streamFunction = faux.provider.streamSimple.bind(faux.provider);
  await agent.prompt("hi");
  const messages: Message[] = agent.state.messages.filter((m): m is Message => m.role !== undefined);
  const context: Context = { messages };
  await models.completeSimple(agent.state.model, context, { signal: agent.signal });
}
