// G-1.2: pi-ai values are accepted by this library's types, and values typed here are accepted by pi-ai.
// (Only pi-ai's stream classes cannot take values typed here: they have private members, which TypeScript compares
// nominally.)
import type * as Ours from "agent-loop-wasm";
import type * as Pi from "@earendil-works/pi-ai";

declare const models: Pi.Models;
declare const ours: {
  message: Ours.Message;
  messages: Ours.Message[];
  assistant: Ours.AssistantMessage;
  toolResult: Ours.ToolResultMessage;
  system: Ours.SystemMessage;
  event: Ours.AssistantMessageEvent;
  model: Ours.Model;
  completionsModel: Ours.Model<"openai-completions">;
  options: Ours.SimpleStreamOptions;
  config: Ours.AgentLoopConfig;
  tool: Ours.Tool;
  agentTool: Ours.AgentTool;
  identity: Ours.ClientIdentity;
  usage: Ours.Usage;
  context: Ours.TranscriptContext;
  level: Exclude<Ours.ThinkingLevel, "off">;
  stopReason: Ours.StopReason;
};
declare const pi: {
  message: Pi.Message;
  assistant: Pi.AssistantMessage;
  toolResult: Pi.ToolResultMessage;
  event: Pi.AssistantMessageEvent;
  model: Pi.Model<Pi.Api>;
  anthropicModel: Pi.Model<"anthropic-messages">;
  options: Pi.SimpleStreamOptions;
  tool: Pi.Tool;
  identity: Pi.ClientIdentity;
  transcript: Pi.TranscriptContext;
  context: Pi.Context;
  level: Pi.ThinkingLevel;
};

// Ours -> pi-ai.
export const toPi: [
  Pi.Message,
  Pi.Message[],
  Pi.AssistantMessage,
  Pi.ToolResultMessage,
  Pi.SystemMessage,
  Pi.AssistantMessageEvent,
  Pi.Model<Pi.Api>,
  Pi.Model<"openai-completions">,
  Pi.SimpleStreamOptions,
  Pi.SimpleStreamOptions,
  Pi.Tool,
  Pi.Tool,
  Pi.ClientIdentity,
  Pi.Usage,
  Pi.ThinkingLevel,
  Pi.StopReason,
] = [
  ours.message,
  ours.messages,
  ours.assistant,
  ours.toolResult,
  ours.system,
  ours.event,
  ours.model,
  ours.completionsModel,
  ours.options,
  ours.config,
  ours.tool,
  ours.agentTool,
  ours.identity,
  ours.usage,
  ours.level,
  ours.stopReason,
];
export const piStream = models.streamSimple(ours.model, { messages: ours.messages }, ours.config);
export const piComplete = models.completeSimple(ours.model, ours.context, ours.options);

// pi-ai -> ours.
export const fromPi: [
  Ours.Message,
  Ours.AssistantMessage,
  Ours.ToolResultMessage,
  Ours.AssistantMessageEvent,
  Ours.Model,
  Ours.Model<"anthropic-messages">,
  Ours.SimpleStreamOptions,
  Ours.Tool,
  Ours.ClientIdentity,
  Ours.TranscriptContext,
  Ours.TranscriptContext,
  Ours.ThinkingLevel,
] = [
  pi.message,
  pi.assistant,
  pi.toolResult,
  pi.event,
  pi.model,
  pi.anthropicModel,
  pi.options,
  pi.tool,
  pi.identity,
  pi.transcript,
  pi.context,
  pi.level,
];
