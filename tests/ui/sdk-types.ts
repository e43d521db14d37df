// The entry's declarations against the real `ai` package's types (pinned in this folder): the AI SDK's UIMessage[]
// fits what convertToAgentMessages / toolApprovalDecisions / originalMessages take, and every chunk the entry declares
// is one of the AI SDK's UIMessageChunk. Checked by `npx tsc -p tests/ui` (scripts/test, types step).
import type { UIMessage, UIMessageChunk as SdkChunk } from "ai";
import { convertToAgentMessages, createUIMessageStreamResponse, toUIMessageStream, toUIMessages, toolApprovalDecisions, type UIMessageChunk } from "agent-loop-wasm/ui";
import type { Agent } from "agent-loop-wasm";

declare const messages: UIMessage[];
declare const agent: Agent;
declare const sdkStream: ReadableStream<SdkChunk>;

convertToAgentMessages(messages);
toolApprovalDecisions(messages);
const ours: ReadableStream<UIMessageChunk> = toUIMessageStream(agent, { originalMessages: messages });
const asSdk: ReadableStream<SdkChunk> = ours;
const chunk = null as unknown as UIMessageChunk;
const oneChunk: SdkChunk = chunk;
createUIMessageStreamResponse({ stream: sdkStream });
// A history is what useChat({ messages }) takes, and round-trips through convertToAgentMessages.
const history: UIMessage[] = toUIMessages(agent.state.messages, {
  runs: [{ start: 0, messageId: "m1" }],
  pendingApprovals: agent.state.pendingApprovals,
  approvals: agent.snapshot().approvals,
  messageId: ({ role, index }) => `${role}:${index}`,
});
convertToAgentMessages(history);
void asSdk;
void oneChunk;
