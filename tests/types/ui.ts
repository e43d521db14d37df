// agent-loop-wasm/ui (issue 31): what the UI message stream adapter takes and gives. The AI SDK is not installed for
// the type tests, so its shapes are written out here as the AI SDK declares them (UIMessage, a tool part, a chunk
// stream) and must fit the entry's parameters.
import { Agent, type AgentEvent, type AgentMessage, type AgentToolResult } from "agent-loop-wasm";
import {
  JsonToSseTransformStream,
  UI_MESSAGE_STREAM_HEADERS,
  convertToAgentMessages,
  createAgentUIStream,
  createAgentUIStreamResponse,
  createUIMessageStreamResponse,
  pipeUIMessageStreamToResponse,
  resumeUIMessageStream,
  resumeUIMessageStreamResponse,
  toUIMessageStream,
  toUIMessageStreamResponse,
  toolApprovalDecisions,
  type UIMessageChunk,
  type UIMessageLike,
  type UIToolApprovalDecision,
} from "agent-loop-wasm/ui";
import type { Equal, Expect } from "./assert.js";

/** The AI SDK's UIMessage and two of its part types, as `ai` 7 declares them (abridged: same field types). */
type SdkToolPart = { type: `tool-${string}`; toolCallId: string; state: "approval-responded"; input: unknown; approval: { id: string; approved: boolean; reason?: string } };
type SdkTextPart = { type: "text"; text: string; state?: "streaming" | "done" };
interface SdkUIMessage {
  id: string;
  role: "system" | "user" | "assistant";
  metadata?: unknown;
  parts: Array<SdkTextPart | SdkToolPart | { type: "step-start" }>;
}
declare const posted: SdkUIMessage[];
declare const sdkChunks: ReadableStream<{ type: "text-delta"; id: string; delta: string } | { type: "finish" }>;
declare const events: AsyncIterable<{ seq: number; event: AgentEvent }>;
declare const plainEvents: AsyncIterable<AgentEvent>;
declare const res: { writeHead(status: number, headers?: object): unknown; write(chunk: string): boolean; end(): unknown; once(e: "close" | "drain", l: () => void): unknown; off(e: "close" | "drain", l: () => void): unknown };

async function main(agent: Agent): Promise<void> {
  const history: AgentMessage[] = convertToAgentMessages(posted, { unsupported: "drop", model: { api: "openai-responses", provider: "openai", id: "gpt-5" } });
  agent.state.messages = history;
  const decisions = toolApprovalDecisions(posted);
  type _d = Expect<Equal<typeof decisions, UIToolApprovalDecision[]>>;
  for (const d of decisions) void (d.approved ? d.toolCallId : d.reason);

  const stream = toUIMessageStream(agent, { originalMessages: posted, run: () => agent.prompt("hi"), sendReasoning: false, dynamicTools: true });
  type _s = Expect<Equal<typeof stream, ReadableStream<UIMessageChunk>>>;
  const reader = stream.getReader();
  const { value } = await reader.read();
  if (value?.type === "text-delta") void value.delta.length;
  if (value?.type === "tool-approval-request") void value.approvalId;
  if (value?.type === "finish") {
    const reason: "stop" | "length" | "tool-calls" | "error" | "other" | undefined = value.finishReason;
    void reason;
  }
  toUIMessageStream(events, { messageId: "m1", toolOutput: (result, { toolName }) => ({ toolName, text: result.content }), onError: () => "failed" });
  // A toolOutput written for one tool's details type fits (the option is a method: its parameter is not contravariant).
  const weatherOutput = (result: AgentToolResult<{ celsius: number }>) => result.details.celsius;
  toUIMessageStream(events, { toolOutput: weatherOutput });
  // A writeHead with Node's own overloads fits NodeServerResponseLike.
  const nodeLike = {
    writeHead(status: number, statusMessage?: string | Record<string, string>, headers?: Record<string, string>) { void [status, statusMessage, headers]; return nodeLike; },
    write: (_chunk: string) => true,
    end: () => undefined,
  };
  await pipeUIMessageStreamToResponse({ response: nodeLike, stream: toUIMessageStream(agent) });
  toUIMessageStream(plainEvents);
  const response: Response = toUIMessageStreamResponse(agent, { status: 201, headers: { "x-chat": "1" } });
  void response;
  createUIMessageStreamResponse({ stream: sdkChunks, headers: new Headers() });
  await pipeUIMessageStreamToResponse({ response: res, stream: toUIMessageStream(agent) });
  const sse: TransformStream<unknown, string> = new JsonToSseTransformStream();
  void sse;
  const v: "v1" = UI_MESSAGE_STREAM_HEADERS["x-vercel-ai-ui-message-stream"];
  void v;

  // The reconnect (resume): null when no run is under way; the Response is 204 then.
  const resumed = resumeUIMessageStream(agent, { messageId: "m1", signal: new AbortController().signal });
  type _r = Expect<Equal<typeof resumed, ReadableStream<UIMessageChunk> | null>>;
  const again: Response = resumeUIMessageStreamResponse(agent, { headers: { "x-chat": "1" } });
  void again;
  for await (const item of agent.events({ fromRunStart: true, untilIdle: true })) void item.seq;
  // @ts-expect-error a resume takes no run (it follows the one under way)
  resumeUIMessageStream(agent, { run: () => agent.prompt("hi") });

  // @ts-expect-error a source is an Agent or an async iterable of events
  toUIMessageStream([{ type: "agent_start" }]);
  // @ts-expect-error options are checked
  toUIMessageStream(agent, { messageId: 1 });
  // @ts-expect-error unsupported is "error" or "drop"
  convertToAgentMessages(posted, { unsupported: "skip" });
  // @ts-expect-error messages are UIMessages
  convertToAgentMessages([{ role: "user", content: "hi" }]);
}
void main;

// U-12.5: the route in one call, stateless with a secret.
export function statelessRoute(messages: UIMessageLike[], secret: string): Response {
  const agent = new Agent();
  const stream: ReadableStream<UIMessageChunk> = createAgentUIStream({ agent, uiMessages: messages, approvalSecret: secret, unsupported: "drop" });
  void stream;
  return createAgentUIStreamResponse({ agent, uiMessages: messages, approvalSecret: new Uint8Array(32), status: 200 });
}
