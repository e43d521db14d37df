// Human in the loop (issue 30): needsApproval, beforeToolCall's approval, the request event, the Agent's decisions,
// and agentLoopContinue's config.approvals type-check as documented.
import {
  Agent,
  agentLoop,
  agentLoopContinue,
  type AgentEvent,
  type AgentListener,
  type AgentLoopConfig,
  type AgentRunEvent,
  type AgentTool,
  type AssistantMessage,
  type Model,
  type ToolApprovalDecision,
  type ToolApprovalRequest,
  type ToolApprovals,
} from "agent-loop-wasm";

declare const model: Model<any>;
declare const config: AgentLoopConfig;

const charge: AgentTool<{ type: "object"; properties: { cents: { type: "number" } }; required: ["cents"] }> = {
  name: "charge_card",
  label: "Charge",
  description: "Charges a card",
  parameters: { type: "object", properties: { cents: { type: "number" } }, required: ["cents"] },
  needsApproval: async (args, { toolCall }) => args.cents > 1000 && toolCall.id !== "",
  approvalTimeoutMs: 60_000,
  execute: async () => ({ content: [{ type: "text", text: "charged" }], details: {} }),
};
const always: AgentTool = { ...charge, needsApproval: true } as AgentTool;

const agent = new Agent({
  initialState: { model, tools: [charge, always] },
  beforeToolCall: async ({ approved }) => (approved ? undefined : { approval: { reason: "charges money", data: { cents: 1 } } }),
});
// The listener's event includes the approval requests with no cast (AgentRunEvent).
agent.subscribe((e) => {
  if (e.type === "tool_approval_request") {
    const id: string = e.toolCallId;
    const reason: string | undefined = e.reason;
    void [id, reason, e.expiresAt];
  }
  if (e.type === "agent_end" && e.approvals) {
    const waiting: ToolApprovalRequest[] = e.approvals.requests;
    void waiting;
  }
});
const pending: ToolApprovalRequest[] = agent.state.pendingApprovals;
const approved: Promise<void> = agent.approve(pending[0].toolCallId, { args: { cents: 500 } });
const denied: Promise<void> = agent.deny("call_2", { reason: "over budget" });
void [approved, denied];

const stream = agentLoop([], { messages: [], tools: [charge] }, config);
let pause: ToolApprovals | undefined;
for await (const e of stream) if (e.type === "agent_end") pause = e.approvals;
if (pause) {
  const decisions: ToolApprovalDecision[] = [{ toolCallId: "call_1", approved: true }];
  agentLoopContinue({ messages: await stream.result() }, { ...config, approvals: { ...pause, decisions } });
}

// A listener typed for pi-agent-core's events still subscribes; a named AgentListener takes every event.
agent.subscribe((event: AgentEvent) => void event.type);
const listener: AgentListener = (event: AgentRunEvent, signal) => {
  if (event.type === "tool_approval_request" && !signal.aborted) void event.args;
};
agent.subscribe(listener);
// An exhaustive switch over pi-agent-core's AgentEvent still compiles (the union itself is unchanged).
function exhaustive(event: AgentEvent): string {
  switch (event.type) {
    case "agent_start": case "agent_end": case "turn_start": case "turn_end": case "message_start":
    case "message_update": case "message_end": case "tool_execution_start": case "tool_execution_update":
    case "tool_execution_end":
      return event.type;
    default: {
      const never: never = event;
      return never;
    }
  }
}
void exhaustive;
// @ts-expect-error an approval request is not a pi-agent-core AgentEvent
const notAnAgentEvent: AgentEvent = { type: "tool_approval_request", toolCallId: "c", toolName: "t", args: {} };
void notAnAgentEvent;

// needsApproval's second argument is typed: the assistant message that made the call and the run's context.
const careful: AgentTool<{ type: "object"; properties: { cents: { type: "number" } }; required: ["cents"] }> = {
  ...charge,
  needsApproval: ({ cents }, { assistantMessage, context, toolCall }) => {
    const stop: AssistantMessage["stopReason"] = assistantMessage.stopReason;
    // @ts-expect-error the context's messages are an array, not a string
    const wrong: string = context.messages;
    void wrong;
    return cents > 100 || stop === "length" || context.messages.length > 50 || toolCall.name !== "charge_card";
  },
};
void careful;
