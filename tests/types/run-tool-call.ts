// A reference program: a tool that runs other tools through runToolCall, so the hooks apply to nested calls too.
import {
  runToolCall,
  type AgentContext,
  type AgentTool,
  type AgentToolCall,
  type AgentToolCallOutcome,
  type RunToolCallOptions,
  type ToolCallHooks,
} from "agent-loop-wasm";
import type { AssistantMessage } from "@earendil-works/pi-ai";

const hooks: ToolCallHooks = {
  beforeToolCall: async ({ toolCall }) => (toolCall.name.startsWith("danger") ? { block: true } : undefined),
  afterToolCall: async ({ result }) => ({ content: result.content }),
};

const add: AgentTool<{ type: "object"; properties: { a: { type: "number" }; b: { type: "number" } } }> = {
  name: "add",
  label: "Add",
  description: "Adds two numbers",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  async execute(_id, params) {
    const { a, b } = params as { a: number; b: number };
    return { content: [{ type: "text", text: String(a + b) }], details: { sum: a + b }, structuredContent: { sum: a + b } };
  },
};

export function makeScriptTool(tools: AgentTool<any>[], context: AgentContext, assistantMessage: AssistantMessage): AgentTool {
  return {
    name: "script",
    label: "Script",
    description: "Runs several tool calls",
    parameters: { type: "object", properties: { calls: { type: "array" } } },
    async execute(toolCallId, _params, signal, onUpdate) {
      const call: AgentToolCall = { type: "toolCall", id: `${toolCallId}-1`, name: "add", arguments: { a: 1, b: 2 } };
      const options: RunToolCallOptions = {
        ...hooks,
        tools: [...tools, add],
        assistantMessage,
        context,
        signal,
        onUpdate: (partial) => onUpdate?.(partial),
      };
      const outcome: AgentToolCallOutcome = await runToolCall(call, options);
      const ms: number | undefined = outcome.durationMs;
      return {
        content: outcome.result.content,
        details: { isError: outcome.isError, ms, id: outcome.toolCall.id },
        isError: outcome.isError,
      };
    },
  };
}
