// A reference program: agentLoop and runAgentLoop with tools whose parameters are plain JSON Schema objects.
// pi-ai types come from pi-ai, as in a program written for pi-agent-core.
import {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  setDefaultStreamFn,
  type AgentContext,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentTool,
  type AgentToolResult,
  type StreamFn,
} from "agent-loop-wasm";
import type { Message } from "@earendil-works/pi-ai";

declare const streamFn: StreamFn;

interface WeatherDetails {
  city: string;
  celsius: number;
}

const weatherTool: AgentTool<
  {
    type: "object";
    properties: { city: { type: "string" } };
    required: ["city"];
    additionalProperties: false;
  },
  WeatherDetails
> = {
  name: "get_weather",
  label: "Weather",
  description: "Current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  executionMode: "parallel",
  async execute(toolCallId, params, signal, onUpdate) {
    // A plain JSON Schema records no static type: `params` is `any` here and `unknown` in the reference.
    const city = String((params as { city: string }).city);
    signal?.throwIfAborted();
    onUpdate?.({ content: [{ type: "text", text: `looking up ${city}` }], details: { city, celsius: NaN } });
    const result: AgentToolResult<WeatherDetails> = {
      content: [{ type: "text", text: `${city}: 21°C (${toolCallId})` }],
      details: { city, celsius: 21 },
    };
    return result;
  },
};

const echoTool: AgentTool = {
  name: "echo",
  label: "Echo",
  description: "Echoes its input",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  prepareArguments: (args) => (typeof args === "string" ? { text: args } : args),
  execute: async (_id, params) => ({ content: [{ type: "text", text: JSON.stringify(params) }], details: undefined }),
};

const anyTool: AgentTool<any> = {
  name: "raw",
  label: "Raw",
  description: "Anything",
  parameters: {},
  async execute(_id, params) {
    const n: number = params.whatever;
    return { content: [], details: n, isError: false, terminate: true };
  },
};

const context: AgentContext = {
  messages: [{ role: "system", content: "You are terse.", timestamp: 0 }],
  tools: [weatherTool, echoTool, anyTool],
};

const config: AgentLoopConfig = {
  model: {
    id: "gpt-4o-mini",
    name: "GPT-4o mini",
    api: "openai-completions",
    provider: "openai",
    baseUrl: "https://api.openai.com/v1",
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 16384,
  },
  convertToLlm: (messages) =>
    messages.filter(
      (m): m is Message =>
        m.role === "system" || m.role === "user" || m.role === "assistant" || m.role === "toolResult",
    ),
  transformContext: async (messages, signal) => (signal?.aborted ? messages : messages.slice(-20)),
  getApiKey: (provider) => (provider === "openai" ? "sk-test" : undefined),
  toolExecution: "sequential",
  temperature: 0.2,
  maxTokens: 1024,
  reasoning: "low",
  sessionId: "session-1",
  headers: { "x-trace": "1", "user-agent": null },
  identity: { attribution: null },
  cacheRetention: "short",
  transport: "sse",
  thinkingBudgets: { low: 1024 },
  onPayload: (payload, model) => (model.id === "x" ? payload : undefined),
  onResponse: async (response) => {
    if (response.status >= 500) console.warn(response.headers);
  },
  beforeToolCall: async ({ toolCall, args }, signal) => {
    if (signal?.aborted) return { block: true, reason: "aborted" };
    if (toolCall.name === "raw") (args as Record<string, unknown>).value = 123;
    return undefined;
  },
  afterToolCall: async ({ result, isError }) => (isError ? { content: result.content, isError: true } : undefined),
  finishTurn: (turn) => (turn.toolResults.length > 3 ? { action: "end" } : undefined),
  prepareRequest: async ({ context, model, thinkingLevel }) =>
    thinkingLevel === "off" ? { context, model, thinkingLevel: "high" } : undefined,
  prepareNextTurn: (ctx) => ({ messages: [{ role: "user", content: `turn after ${ctx.message.stopReason}`, timestamp: Date.now() }] }),
  getSteeringMessages: async () => [],
  getFollowUpMessages: async () => [],
};

function describe(event: AgentEvent): string {
  switch (event.type) {
    case "agent_start":
    case "turn_start":
      return event.type;
    case "agent_end":
      return `end with ${event.messages.length}`;
    case "turn_end":
      return `${event.toolResults.map((r) => r.toolCallId).join(",")}`;
    case "message_start":
    case "message_end":
      return event.message.role;
    case "message_update": {
      const e = event.assistantMessageEvent;
      return e.type === "text_delta" ? e.delta : e.type;
    }
    case "tool_execution_start":
    case "tool_execution_update":
      return `${event.toolName}(${JSON.stringify(event.args)})`;
    case "tool_execution_end":
      return `${event.toolCallId} ${event.isError} ${event.durationMs ?? "-"}`;
  }
}

export async function main(): Promise<AgentMessage[]> {
  setDefaultStreamFn(streamFn);
  setDefaultStreamFn(undefined);

  const prompt: AgentMessage = { role: "user", content: "Weather in Oslo?", timestamp: Date.now() };
  const controller = new AbortController();

  const stream = agentLoop([prompt], context, config, controller.signal, streamFn);
  for await (const event of stream) console.log(describe(event));
  const messages: AgentMessage[] = await stream.result();

  const again = agentLoopContinue({ ...context, messages }, config, undefined, streamFn);
  for await (const event of again) if (event.type === "agent_end") console.log(event.messages.length);

  const emitted: AgentEvent[] = [];
  const result = await runAgentLoop(
    [prompt],
    context,
    config,
    async (event) => {
      emitted.push(event);
    },
    controller.signal,
    streamFn,
  );
  await runAgentLoopContinue(context, config, (event) => void emitted.push(event), undefined, streamFn);
  return result;
}
