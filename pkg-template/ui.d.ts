// Declarations of the `agent-loop-wasm/ui` entry (issue 31): an Agent's events as the AI SDK's UI message stream
// (protocol v1, as `ai` 7 reads it), the request side back, and a transcript as the history a page loads (issue 40).
// The chunk and message types are written out here, so these declarations compile without the `ai` package; the AI
// SDK's `UIMessage[]` fits the parameters that take one, and the messages toUIMessages makes fit `UIMessage[]`.

import type { Agent, AgentEndedToolCall, AgentEvent, AgentMessage, AgentToolResult, Model, ToolApprovalDecision, ToolApprovalRequest, UsageTotals } from "./index.js";

/** What `toUIMessageStream` reads: an Agent (subscribed), or the events of one as an async iterable. */
export type AgentEventSource =
  | Pick<Agent, "subscribe">
  | AsyncIterable<AgentEvent | { type: string } | { seq: number; event: AgentEvent | { type: string } }>;

/** `providerMetadata` as this entry fills it: signatures of the agent's content blocks, given back on the way in. */
export type AgentLoopProviderMetadata = {
  agentLoop: { textSignature?: string; thinkingSignature?: string; redacted?: true; thoughtSignature?: string };
};

/** The chunks this entry produces (a subset of the AI SDK's `UIMessageChunk`, with the same fields). */
export type UIMessageChunk =
  | { type: "start"; messageId?: string; messageMetadata?: unknown }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start"; id: string }
  | { type: "text-delta"; id: string; delta: string }
  | { type: "text-end"; id: string; providerMetadata?: AgentLoopProviderMetadata }
  | { type: "reasoning-start"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  | { type: "reasoning-end"; id: string; providerMetadata?: AgentLoopProviderMetadata }
  | { type: "tool-input-start"; toolCallId: string; toolName: string; dynamic?: boolean }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown; dynamic?: boolean; providerMetadata?: AgentLoopProviderMetadata }
  | { type: "tool-output-available"; toolCallId: string; output: unknown; preliminary?: boolean; dynamic?: boolean }
  | { type: "tool-output-error"; toolCallId: string; errorText: string; dynamic?: boolean }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string; reason?: string; approvalDescriptor?: { data?: unknown; expiresAt?: number } }
  | { type: "steering-message"; id: string; parts: Array<{ type: "text"; text: string } | { type: "file"; mediaType: string; url: string }> }
  | { type: "finish"; finishReason?: "stop" | "length" | "tool-calls" | "error" | "other"; messageMetadata?: unknown }
  | { type: "message-metadata"; messageMetadata: unknown }
  | { type: "abort"; reason?: string }
  | { type: "error"; errorText: string };

/** A message as `useChat` holds and posts it (the fields read here; the AI SDK's `UIMessage` fits). */
export interface UIMessageLike {
  id: string;
  role: "system" | "user" | "assistant";
  parts: ReadonlyArray<{ type: string }>;
}

/** The default `output` of a tool part: the tool's result without `terminate` and `usage`. */
export interface UIToolOutput {
  content: AgentToolResult<unknown>["content"];
  details: unknown;
  structuredContent?: unknown;
}

export interface ToUIMessageStreamOptions {
  /** The `messageId` of the `start` chunk; default: the id of `originalMessages`' last message when it is an assistant message, else a new UUID. */
  messageId?: string;
  /**
   * The `messages` the client posted. When the last is an assistant message (the client continues it, e.g. after
   * approving tool calls), the response continues it: its id is the `messageId`, its tool parts are not announced
   * again, a user message of the run is sent as `steering-message`, and a call it denied ends with `tool-output-denied`.
   */
  originalMessages?: readonly UIMessageLike[];
  /**
   * Started once the stream listens (e.g. `() => agent.prompt(text)`): its rejection ends the stream with an `error`
   * chunk; with an Agent source, settling while no run is under way (a decision that leaves other calls waiting) ends
   * the stream.
   */
  run?: () => unknown;
  /**
   * A secret kept on the server (a string or bytes, at least 16 bytes; U-12.5): each `tool-approval-request` carries
   * as its `approvalId` a token signed over the call (id, tool, input, deadline) instead of the tool call id, so a
   * stateless route (`createAgentUIStream`) can tell the approvals it asked for from ones a client made up.
   */
  approvalSecret?: string | Uint8Array;
  /** Send reasoning parts (default true). */
  sendReasoning?: boolean;
  /** A tool part's `output` from the tool's result (and its preliminary ones); default {@link UIToolOutput}. Must be JSON. */
  toolOutput?(result: AgentToolResult<unknown>, call: { toolCallId: string; toolName: string }): unknown;
  /** The `errorText` of an `error` chunk; default: the error's message (`errorMessage` of a failed model response). */
  onError?: (error: unknown) => string;
  /** Tool parts as `dynamic-tool` (tools the client does not declare, e.g. MCP tools) rather than `tool-<name>`. */
  dynamicTools?: boolean;
  /**
   * Metadata for the UI message (`message.metadata` on the client), asked before each chunk is sent with the chunk and
   * the run's usage so far. A value other than `undefined` rides on a `start` or `finish` chunk as its
   * `messageMetadata`, and follows any other chunk as a `message-metadata` chunk. E.g. the usage on the client:
   * `({ part, usage }) => (part.type === "finish" ? { usage } : undefined)`. A throw ends the response with `error`.
   */
  messageMetadata?: (options: { part: UIMessageChunk; usage: UsageTotals }) => unknown;
  /**
   * Called once the response ended (after its last chunk, before the stream closes; awaited, and a throw errors the
   * stream): the run's new messages (`agent_end`'s, or those that ended so far when the response ended without it),
   * its usage totals, whether it ended with `abort` or `error`, and the `messageId` it streamed. Not called when the
   * reader cancels the stream (the run goes on).
   */
  onFinish?: (event: UIMessageStreamFinishEvent) => void | Promise<void>;
  /**
   * Aborts the response, e.g. the request's signal when the client goes away: with an Agent source running, its run is
   * aborted (`agent.abort()`) and the response ends with its `abort`; otherwise the response ends with `abort` at once
   * (and `run` is not started). `resumeUIMessageStream`'s `signal` only stops reading.
   */
  abortSignal?: AbortSignal;
}

/** What {@link ToUIMessageStreamOptions.onFinish} is given. */
export interface UIMessageStreamFinishEvent {
  /** The run's new messages: what to store. */
  messages: AgentMessage[];
  /** The run's assistant messages' usage, summed. */
  usage: UsageTotals;
  /** The response ended with an `abort` chunk. */
  isAborted: boolean;
  /** The response ended with an `error` chunk. */
  isError: boolean;
  /** The `messageId` of the response. */
  messageId: string;
}

export interface UIMessageStreamResponseInit {
  status?: number;
  statusText?: string;
  /** Added to (and overriding) {@link UI_MESSAGE_STREAM_HEADERS}. */
  headers?: HeadersInit;
}

/** The protocol's response headers, `x-vercel-ai-ui-message-stream: v1` among them. */
export declare const UI_MESSAGE_STREAM_HEADERS: Readonly<{
  "content-type": "text/event-stream";
  "cache-control": "no-cache";
  connection: "keep-alive";
  "x-vercel-ai-ui-message-stream": "v1";
  "x-accel-buffering": "no";
}>;

/**
 * One run as UI message chunks: `start`, per model response `start-step` … `finish-step` (text, reasoning, tool input
 * and output parts), then `finish` (or `abort`) at `agent_end`, where the stream ends. Cancelling it (the client went
 * away) stops listening; it does not abort the agent.
 */
export declare function toUIMessageStream(source: AgentEventSource, options?: ToUIMessageStreamOptions): ReadableStream<UIMessageChunk>;

/** `createUIMessageStreamResponse({ stream: toUIMessageStream(source, options), ...init })`. */
export declare function toUIMessageStreamResponse(source: AgentEventSource, options?: ToUIMessageStreamOptions & UIMessageStreamResponseInit): Response;

/** What {@link createAgentUIStream} takes: the agent, the posted messages, and the stream's options. */
export interface CreateAgentUIStreamOptions extends Omit<ToUIMessageStreamOptions, "originalMessages" | "run"> {
  /** The Agent that answers: a fresh one per request (a stateless route) or the chat's own. */
  agent: Agent;
  /** The messages `useChat` posted (`body.messages`). */
  uiMessages: readonly UIMessageLike[];
  /** How parts with no agent form are treated (see {@link convertToAgentMessages}); default `"error"`. */
  unsupported?: "error" | "drop";
}

/**
 * A `useChat` route's whole answer (the AI SDK's `createAgentUIStream`, U-12.5): with a user message last, the agent
 * (a fresh one first takes the history before it) is prompted; with the assistant message of approval responses last,
 * they are carried out — by `approve()`/`deny()` when the agent holds the pause, else, for a fresh agent, by
 * `agent.continue({ approvals })` from the posted history, each approval checked against `approvalSecret` (an
 * `InvalidApprovalError` for one this server did not sign, or a call of that message without a result). The response
 * continues the client's message. Approvals are checked, not remembered: a client that posts the same approved
 * request again runs the call again; give requests a deadline (`approvalTimeoutMs`) or keep the agents when a call
 * must run at most once.
 */
export declare function createAgentUIStream(options: CreateAgentUIStreamOptions): ReadableStream<UIMessageChunk>;

/** {@link createAgentUIStream} as a `Response` (the AI SDK's `createAgentUIStreamResponse`). */
export declare function createAgentUIStreamResponse(options: CreateAgentUIStreamOptions & UIMessageStreamResponseInit): Response;

/** Options of {@link resumeUIMessageStream}. */
export interface ResumeUIMessageStreamOptions extends Pick<ToUIMessageStreamOptions, "sendReasoning" | "toolOutput" | "onError" | "dynamicTools"> {
  /** The `messageId` the answer was streamed with; default: the id of the last response `toUIMessageStream` started for this agent in this process. */
  messageId?: string;
  /** Ends the stream (and the agent's reader) when aborted, e.g. the request's signal. */
  signal?: AbortSignal;
}

/**
 * The answer under way, for the AI SDK's reconnect (`useChat({ resume: true })` → `GET …/:chatId/stream`): null when
 * the agent runs nothing (answer 204), else the current run from its start (`agent.events({ fromRunStart: true })`),
 * then live, as UI message chunks, ending with the run.
 */
export declare function resumeUIMessageStream(agent: Pick<Agent, "events" | "state">, options?: ResumeUIMessageStreamOptions): ReadableStream<UIMessageChunk> | null;

/** `resumeUIMessageStream` as a `Response`: 204 when no run is under way, else the SSE stream with the protocol's headers. */
export declare function resumeUIMessageStreamResponse(agent: Pick<Agent, "events" | "state">, options?: ResumeUIMessageStreamOptions & UIMessageStreamResponseInit): Response;

/** A `Response` whose body is the chunks as SSE (`data: <json>\n\n`, then `data: [DONE]\n\n`) with the protocol's headers. */
export declare function createUIMessageStreamResponse(init: UIMessageStreamResponseInit & { stream: ReadableStream<{ type: string }> }): Response;

/** The members of a Node `http.ServerResponse` used. */
export interface NodeServerResponseLike {
  writeHead(status: number, ...rest: unknown[]): unknown;
  write(chunk: string): boolean;
  end(): unknown;
  once?(event: "close" | "drain", listener: () => void): unknown;
  off?(event: "close" | "drain", listener: () => void): unknown;
}

/** Writes the chunks as SSE to a Node `ServerResponse`; resolves when the stream ended or the client went away. */
export declare function pipeUIMessageStreamToResponse(
  init: UIMessageStreamResponseInit & { response: NodeServerResponseLike; stream: ReadableStream<{ type: string }> },
): Promise<void>;

/** Chunks → SSE text (the AI SDK's class of this name). */
export declare class JsonToSseTransformStream extends TransformStream<unknown, string> {
  constructor();
}

export interface ConvertToAgentMessagesOptions {
  /** What has no agent form: a TypeError naming the part (default), or dropped. */
  unsupported?: "error" | "drop";
  /** `api`, `provider` and `id` of the assistant messages made (default `"ui-message"` each). */
  model?: Pick<Model, "api" | "provider" | "id">;
}

/**
 * The posted `messages` as agent messages: user text, images and text files (data: URLs); per step of an assistant
 * message one assistant message (text, reasoning, finished tool calls) and the tool results its parts hold.
 */
export declare function convertToAgentMessages(messages: readonly UIMessageLike[], options?: ConvertToAgentMessagesOptions): AgentMessage[];

/** A decision for `agent.approve` / `agent.deny` (issue 30's `ToolApprovalDecision` without edited `args`). */
export interface UIToolApprovalDecision {
  toolCallId: string;
  approved: boolean;
  reason?: string;
}

/** The `approval-responded` tool parts of the last (assistant) message as decisions. */
export declare function toolApprovalDecisions(messages: readonly UIMessageLike[]): UIToolApprovalDecision[];

/** A part of a message {@link toUIMessages} makes (a subset of the AI SDK's `UIMessagePart`, with the same fields). */
export type AgentUIPart =
  | { type: "step-start" }
  | { type: "text"; text: string; state: "done"; providerMetadata?: AgentLoopProviderMetadata }
  | { type: "reasoning"; id: string; text: string; state: "done"; providerMetadata?: AgentLoopProviderMetadata }
  | { type: "file"; mediaType: string; url: string }
  | { type: "steering-message"; id: string; parts: Array<{ type: "text"; text: string } | { type: "file"; mediaType: string; url: string }> }
  | AgentUIToolPart;

/** `part.approval` of a tool call that asked for a person: the request's `reason` and `data`/`expiresAt`, then the decision. */
interface AgentUIApprovalRequest {
  id: string;
  descriptor?: { data?: unknown; expiresAt?: number };
  requestReason?: string;
}

/** A tool part in the state the stream leaves it in: `tool-<name>`, or `dynamic-tool` with `dynamicTools`. */
export type AgentUIToolPart = (
  | { type: `tool-${string}`; toolCallId: string }
  | { type: "dynamic-tool"; toolName: string; toolCallId: string }
) &
  (
    | { state: "input-available"; input: unknown; callProviderMetadata?: AgentLoopProviderMetadata }
    | { state: "approval-requested"; input: unknown; callProviderMetadata?: AgentLoopProviderMetadata; approval: AgentUIApprovalRequest }
    | { state: "approval-responded"; input: unknown; callProviderMetadata?: AgentLoopProviderMetadata; approval: AgentUIApprovalRequest & { approved: boolean; reason?: string } }
    | { state: "output-available"; input: unknown; output: unknown; callProviderMetadata?: AgentLoopProviderMetadata; approval?: AgentUIApprovalRequest & { approved: true } }
    | { state: "output-error"; input: unknown; errorText: string; callProviderMetadata?: AgentLoopProviderMetadata; approval?: AgentUIApprovalRequest & { approved: true } }
    | { state: "output-denied"; input: unknown; callProviderMetadata?: AgentLoopProviderMetadata; approval: AgentUIApprovalRequest & { approved: false; reason?: string } }
  );

/** A message of a history (assignable to the AI SDK's `UIMessage`, for `useChat({ messages })`). */
export interface AgentUIMessage {
  id: string;
  role: "user" | "assistant";
  parts: AgentUIPart[];
}

/** One run as the server streamed it, for {@link toUIMessages}' `runs`. */
export interface UIMessageRun {
  /** Where the run's messages begin in the transcript: `agent.state.messages.length` read just before the run started. */
  start: number;
  /** The `messageId` its answer streamed with (for a run that decisions continue: the continued message's id). */
  messageId: string;
}

export interface ToUIMessagesOptions extends Pick<ToUIMessageStreamOptions, "sendReasoning" | "toolOutput" | "dynamicTools" | "approvalSecret"> {
  /**
   * The runs that made the transcript, as the server recorded them when it streamed each. They make the history exact:
   * each answer gets the id its run streamed with, so a page that loads the history mid-answer and then resumes
   * (`resumeUIMessageStream` with that id) lands on the same message instead of adding a second; the user messages at
   * a run's start are its prompt and later ones are steering or follow-ups (`steering-message` parts); a run whose
   * `messageId` is the answer before it (the run that decisions continue) joins that answer, another begins an
   * answer of its own; reasoning ids and steering ids count per run, as the stream's do. Without it (or before its
   * first run): a user message right after tool results is steering and any other begins an exchange, and runs with no
   * user message between them (`continue()`, decisions) form one answer.
   */
  runs?: readonly UIMessageRun[];
  /**
   * The id of each message `runs` does not name. `index` is where the message begins in `agentMessages` (a user
   * message's own index; for an answer, where its exchange began: the index after the previous answer, which is
   * `agent.state.messages.length` read before its run), and `message` is `agentMessages[index]`. Default
   * `${role}-${index}` (`user-1`, `assistant-0`): stable while the transcript only grows, so a server that streams each
   * answer with the messageId `"assistant-" + agent.state.messages.length` (read before the run) needs no `runs` for
   * its ids (an app that drops the transcript's first messages must keep its own ids: the indexes move).
   */
  messageId?: (info: { role: "user" | "assistant"; index: number; message: AgentMessage }) => string;
  /** `agent.state.pendingApprovals`: those calls show `approval-requested` with their request's reason and data. */
  pendingApprovals?: readonly ToolApprovalRequest[];
  /**
   * Issue 30's approval record, e.g. `agent.snapshot().approvals` while a run waits: `requests` (their reason and
   * data in `part.approval`), `completedTools` (the waiting batch's calls that ended: their results are not in the
   * transcript until the decisions, and the stream showed their output), `decisions` (a call decided but not yet run
   * shows `approval-responded`; a finished one keeps `approval` as the client's response left it). A log the app
   * keeps across pauses makes past approvals exact too; without it an approved call shows no `approval`, and a denied
   * one `{ id, approved: false, reason }` read from its result (`Tool call "<id>" was denied: <reason>`).
   */
  approvals?: {
    requests?: readonly ToolApprovalRequest[];
    completedTools?: readonly AgentEndedToolCall[];
    decisions?: readonly Pick<ToolApprovalDecision, "toolCallId" | "approved" | "reason">[];
  };
}

/**
 * An agent transcript (`agent.state.messages`) as the `UIMessage[]` a `useChat` client that watched its runs live ends
 * with, for `useChat({ messages })` when a page loads (the inverse of {@link convertToAgentMessages}): per exchange a
 * user message (text; images as `file` parts with data: URLs) and its answer as one assistant message, one
 * `step-start` and the text, reasoning (`state: "done"`, signatures in `providerMetadata.agentLoop`) and tool parts
 * (`output-available` with `toolOutput`'s output (given the tool result message), `output-error`, `output-denied`,
 * and, with the options, `approval-requested` / `approval-responded`) of each model response; steering as
 * `steering-message` parts between the steps. Not shown: system messages (tool declarations) and custom message roles.
 *
 * What the transcript does not hold, so the history lacks it: a user file's `filename` (a text file comes back as a
 * text part), message `metadata`, preliminary tool outputs, the error of a failed response (`chat.error`); a denial the
 * agent made itself (an approval that timed out) shows as `output-denied`, where the stream sent `tool-output-error`.
 * `convertToAgentMessages(toUIMessages(m))` gives `m` back without timestamps, usage, `api`/`provider`/`model`,
 * `durationMs`, `errorMessage`, a `stopReason` other than `toolUse`/`stop`, system messages, and with an error
 * result's content as one text block and no `details`.
 */
export declare function toUIMessages(agentMessages: readonly AgentMessage[], options?: ToUIMessagesOptions): AgentUIMessage[];
