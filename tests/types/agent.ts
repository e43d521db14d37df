// A reference program: an Agent with hooks, listeners, queues, state access and a subclass.
import { Agent, type AgentEvent, type AgentMessage, type AgentOptions, type AgentState, type AgentTool, type StreamFn } from "agent-loop-wasm";
import type { AssistantMessage, ImageContent, Message, Model } from "@earendil-works/pi-ai";

declare const streamFn: StreamFn;
declare const model: Model<"anthropic-messages">;

const clock: AgentTool = {
  name: "get_time",
  label: "Clock",
  description: "Current time as ISO text",
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: new Date().toISOString() }], details: {} }),
};

const options: AgentOptions = {
  initialState: {
    systemPrompt: "You are a helpful assistant.",
    model,
    thinkingLevel: "medium",
    tools: [clock],
    messages: [],
  },
  streamFn,
  convertToLlm: (messages) => messages.filter((m): m is Message => m.role === "user" || m.role === "assistant" || m.role === "toolResult" || m.role === "system"),
  getApiKey: async () => (globalThis as { ANTHROPIC_API_KEY?: string }).ANTHROPIC_API_KEY,
  onPayload: (payload) => payload,
  beforeToolCall: async ({ toolCall }) => (toolCall.name === "rm" ? { block: true, reason: "no", terminate: true } : undefined),
  afterToolCall: async ({ result }) => ({ details: result.details, terminate: false }),
  finishTurn: async (turn, signal) => (signal?.aborted || turn.message.stopReason === "length" ? { action: "end" } : undefined),
  prepareRequest: (request) => ({ model: request.model }),
  prepareNextTurn: async (signal) => (signal?.aborted ? undefined : { thinkingLevel: "off" }),
  prepareNextTurnWithContext: (ctx, signal) => (signal && ctx.newMessages.length > 10 ? { messages: [] } : undefined),
  steeringMode: "all",
  followUpMode: "one-at-a-time",
  sessionId: "abc",
  thinkingBudgets: { minimal: 512, high: 20000 },
  transport: "auto",
  maxRetryDelayMs: 0,
  toolExecution: "parallel",
  identity: { userAgent: "short", attribution: { name: "demo", url: "https://example.com" } },
};

class LoggingAgent extends Agent {
  readonly log: string[] = [];
  constructor(opts: AgentOptions) {
    super(opts);
    this.subscribe((event) => {
      this.log.push(event.type);
    });
  }
  override prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
  override prompt(input: string, images?: ImageContent[]): Promise<void>;
  override async prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
    this.log.push("prompt");
    if (typeof input === "string") return super.prompt(input, images);
    return super.prompt(input);
  }
}

export async function main(): Promise<void> {
  const agent = new Agent(options);
  const unsubscribe = agent.subscribe(async (event: AgentEvent, signal: AbortSignal) => {
    if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") {
      console.log(event.assistantMessageEvent.delta);
    }
    if (event.type === "tool_execution_end" && signal.aborted) console.log(event.result);
    if (event.type === "agent_end") await new Promise((resolve) => setTimeout(resolve, 1));
  });

  const state: AgentState = agent.state;
  state.model = model;
  state.thinkingLevel = "high";
  state.tools = [...state.tools, clock];
  state.messages.push({ role: "user", content: "hi", timestamp: Date.now() });
  state.messages = state.messages.slice(-10);
  const busy: boolean = state.isStreaming;
  const pending: ReadonlySet<string> = state.pendingToolCalls;
  const prompt: string = state.systemPrompt;
  const streaming = state.streamingMessage;
  const error: string | undefined = state.errorMessage;
  console.log(busy, pending.size, prompt, streaming?.role, error);

  agent.steeringMode = "one-at-a-time";
  agent.followUpMode = agent.steeringMode;
  agent.steer({ role: "user", content: "also check the time", timestamp: Date.now() });
  agent.followUp({ role: "user", content: "then summarise", timestamp: Date.now() });
  console.log(agent.hasQueuedMessages(), agent.peekQueuedMessages().length);

  const image: ImageContent = { type: "image", data: "aGk=", mimeType: "image/png" };
  await agent.prompt("What time is it?");
  await agent.prompt("Describe", [image]);
  await agent.prompt({ role: "user", content: [{ type: "text", text: "one" }], timestamp: Date.now() });
  await agent.prompt([{ role: "user", content: "batch", timestamp: Date.now() }]);
  await agent.continue();

  agent.sessionId = "def";
  agent.streamFunction = streamFn;
  agent.toolExecution = "sequential";
  agent.beforeToolCall = undefined;
  agent.transport = "sse";
  const last = agent.state.messages.at(-1);
  if (last?.role === "assistant") {
    const assistant: AssistantMessage = last;
    console.log(assistant.usage.cost.total, assistant.durationMs, assistant.thinkingLevel);
  }

  const signal: AbortSignal | undefined = agent.signal;
  agent.abort();
  await agent.waitForIdle();
  agent.clearSteeringQueue();
  agent.clearFollowUpQueue();
  agent.clearAllQueues();
  agent.reset();
  unsubscribe();
  console.log(signal?.aborted);

  const logging = new LoggingAgent({ streamFn });
  await logging.prompt("hello");
}
