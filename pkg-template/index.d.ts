// Type declarations of agent-loop-wasm: an LLM agent loop whose core is Rust compiled to WebAssembly.
// Hand-written and self-contained (SPEC API-1.6): nothing here imports pi-ai or pi-schema. The loop API is a
// drop-in for `@earendil-works/pi-agent-core` 1.6.0, and the pi-ai shapes it uses are declared again
// structurally, so pi-ai values (models, messages, `models.streamSimple.bind(models)`, its streams) fit.

export * from "./ai.js";
export * from "./tools.js";
import type {
  AgentTool,
  AgentToolCall,
  AgentToolCallOutcome,
  AgentToolResult,
  QueueMode,
  Tool,
  ToolExecutionMode,
} from "./tools.js";
import type {
  Api,
  AssistantMessage,
  ClientIdentity,
  FetchFunction,
  ImageContent,
  JsonValue,
  Message,
  Model,
  ProviderHeaders,
  SimpleStreamOptions,
  StopReason,
  TextContent,
  ThinkingBudgets,
  ThinkingLevel,
  ToolCall,
  ToolResultMessage,
  TranscriptContext,
  Transport,
  Usage,
} from "./ai.js";

/**
 * App-specific message types, empty by default. Add roles by declaration merging; `convertToLlm` must then map or
 * drop them:
 *
 * ```ts
 * declare module "agent-loop-wasm" {
 *   interface CustomAgentMessages {
 *     notification: { role: "notification"; text: string; timestamp: number };
 *   }
 * }
 * ```
 */
export interface CustomAgentMessages {}

/**
 * New (issue 45): the entry a compaction appends to the transcript (pi-coding-agent's `CompactionSummaryMessage`
 * with more fields). Only with {@link AgentLoopConfig.compaction}; the transcript keeps every message before it, and
 * requests send its summary in place of the older turns (see {@link CompactionOptions}). Not part of
 * {@link AgentMessage} by default, so that code written for pi-agent-core still compiles; with compaction on, add it
 * as pi-coding-agent does:
 *
 * ```ts
 * declare module "agent-loop-wasm" {
 *   interface CustomAgentMessages {
 *     compactionSummary: CompactionSummaryMessage;
 *   }
 * }
 * ```
 */
export interface CompactionSummaryMessage {
  role: "compactionSummary";
  /** The summary sent in place of the compacted turns. */
  summary: string;
  /** The estimated input tokens of the request before and after the compaction. */
  tokensBefore: number;
  tokensAfter: number;
  /** How many messages directly before this entry (not counting other entries) are still sent whole. */
  keptMessages: number;
  /** `"threshold"`: the estimate passed the trigger. */
  reason: "threshold" | "overflow";
  timestamp: number;
  /** The summary request's usage (counted in the run's totals and limits); absent when none was made. */
  usage?: Usage;
}

/** Every message the loop carries: provider messages plus the app's custom ones. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

// ============================================================================================================
// Assistant message events and streams
// ============================================================================================================

/**
 * Events of one assistant response. Success is `start`, updates, `done`; a failure after `start` ends with `error`; a
 * setup failure may be a lone `error`. `partial` is the live, mutable message (not a snapshot); blocks may interleave,
 * so key on `contentIndex`. During `toolcall_delta`, the block's `arguments` is a best-effort parse (at least `{}`).
 */
export type AssistantMessageEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: "stop" | "length" | "toolUse" | "deferred"; message: AssistantMessage }
  | { type: "error"; reason: "aborted" | "error"; error: AssistantMessage };

/**
 * A push/pull async queue of events with a final result.
 *
 * - `push(event)` is ignored once the stream is done. An event for which `isComplete` is true ends the stream, sets the
 *   result to `extractResult(event)`, and is still delivered.
 * - `end(result?)` ends the stream; it sets the result only when `result !== undefined`.
 * - Iteration yields queued events even after the end and stops when the queue is empty and the stream done. It is
 *   meant for one consumer: each event is delivered once.
 * - `result()` resolves at the first completing event or `end(result)`; otherwise it stays pending (it never rejects).
 */
export declare class EventStream<T, R = T> implements AsyncIterable<T> {
  constructor(isComplete: (event: T) => boolean, extractResult: (event: T) => R);
  /** Delivers an event (ignored once done). */
  push(event: T): void;
  /** Ends the stream, with `result` as the result unless it is `undefined`. */
  end(result?: R): void;
  [Symbol.asyncIterator](): AsyncIterator<T>;
  /** The final result (see the class description). */
  result(): Promise<R>;
}

/**
 * The event stream of one assistant response: complete on `done` (result `message`) or `error` (result `error`). The
 * final message (of `done`, `error` or `end(message)`) gets `durationMs`, the rounded monotonic milliseconds since
 * the stream was created, unless it already has one, the stream is already done, or its `timestamp` predates the
 * stream (a response that started elsewhere).
 */
export declare class AssistantMessageEventStream extends EventStream<AssistantMessageEvent, AssistantMessage> {
  constructor();
}

/** Creates an {@link AssistantMessageEventStream}. */
export declare function createAssistantMessageEventStream(): AssistantMessageEventStream;

/**
 * What a {@link StreamFnLike} may return: any async iterable of assistant message events. With `result()` its value is
 * the final message; without it, the `done`/`error` event's message is used.
 */
export interface AssistantMessageEventSource extends AsyncIterable<AssistantMessageEvent> {
  result?(): Promise<AssistantMessage>;
}

/**
 * Stream function used by the loop (`Models.streamSimple` of pi-ai has this shape, so
 * `models.streamSimple.bind(models)` fits). It receives the transcript (prompt and tools in its system messages) and
 * the request options, and must report failures inside the stream (an `error` event whose message has
 * `stopReason` `"error"` or `"aborted"` and an `errorMessage`) rather than throw. If it throws anyway, the run ends
 * cleanly with that error (D1).
 *
 * (Declared through a method signature, whose parameters are bivariant, so functions typed with pi-ai's branded
 * context and option types fit.)
 */
export type StreamFn = {
  streamFn(
    model: Model<Api>,
    context: TranscriptContext,
    options?: SimpleStreamOptions,
  ): AssistantMessageEventStream | Promise<AssistantMessageEventStream>;
}["streamFn"];

/**
 * A stream function returning any {@link AssistantMessageEventSource}: accepted wherever a stream function is taken
 * (a superset of {@link StreamFn}).
 */
export type StreamFnLike = {
  streamFn(
    model: Model<Api>,
    context: TranscriptContext,
    options?: SimpleStreamOptions,
  ): AssistantMessageEventSource | Promise<AssistantMessageEventSource>;
}["streamFn"];

// ============================================================================================================
// Context, hooks and loop configuration
// ============================================================================================================

/** What a run works on. The system prompt lives in system messages; there is no `systemPrompt` field. */
export interface AgentContext {
  /** The transcript. */
  messages: AgentMessage[];
  /** Tools that can execute in this run; differences from the declared tools are announced before each request. */
  tools?: AgentTool<any>[];
}

/** Returned by `beforeToolCall`: `block` prevents execution (error result `reason`, or a default text). */
export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  /** With `block`: counts as a terminating result for the batch. */
  terminate?: boolean;
  /**
   * New (issue 30): the call waits for a person; `reason` and `data` go into its {@link ToolApprovalRequest}. Ignored
   * with `block`, and once the call is approved (then `beforeToolCall` runs again with `approved: true`).
   */
  approval?: true | { reason?: string; data?: unknown };
}

/**
 * Returned by `afterToolCall`: each given (non-nullish) field replaces the executed value, without deep merging.
 * `content` given without `structuredContent` drops the original `structuredContent`.
 */
export interface AfterToolCallResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  structuredContent?: JsonValue;
  isError?: boolean;
  usage?: Usage;
  terminate?: boolean;
}

/** Given to `beforeToolCall`. */
export interface BeforeToolCallContext {
  /** The message that made the call. */
  assistantMessage: AssistantMessage;
  /** The original tool-call block. */
  toolCall: AgentToolCall;
  /** The validated (coerced) arguments; mutations reach `execute`. */
  args: unknown;
  context: AgentContext;
  /** New (issue 30): `true` when a person approved this call (it runs after this hook unless it blocks). */
  approved?: true;
}

/** New (issue 30): a tool call that waits for a person, as `tool_approval_request` announces it. */
export interface ToolApprovalRequest {
  toolCallId: string;
  toolName: string;
  /** The validated arguments the person approves (or edits). */
  args: unknown;
  /** From `beforeToolCall`'s `{ approval: { reason, data } }`. */
  reason?: string;
  data?: unknown;
  /**
   * With an approval timeout (`AgentTool.approvalTimeoutMs`, else `AgentLoopConfig.approvalTimeoutMs`): when it expires, in
   * epoch milliseconds. An `Agent` denies the call then (reason `approval timed out`); `agentLoop` callers enforce it.
   */
  expiresAt?: number;
}

/** New (issue 30): a person's decision. A denied call gets the error result `Tool call "<id>" was denied: <reason>`. */
export interface ToolApprovalDecision {
  toolCallId: string;
  approved: boolean;
  /** Approved with edited arguments: validated again before the call runs. */
  args?: unknown;
  /** Why it was denied; the model sees it. */
  reason?: string;
}

/**
 * New (issue 30): where a paused run stands (`agent_end.approvals`). `completedTools` are the calls of the batch that
 * ended; their results enter the transcript with the decided ones, in request order. Add `decisions` and pass it as
 * `config.approvals` to `agentLoopContinue` to go on.
 */
export interface ToolApprovals {
  requests: ToolApprovalRequest[];
  completedTools: AgentEndedToolCall[];
  decisions?: ToolApprovalDecision[];
}

/** Given to `afterToolCall`. */
export interface AfterToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  args: unknown;
  /** The executed result, before any override. */
  result: AgentToolResult<any>;
  isError: boolean;
  context: AgentContext;
}

/** A completed turn: the assistant message and its tool results (already appended to `context`). */
export interface AgentTurnContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  context: AgentContext;
  /** What the run would return if it stopped now (the live array). */
  newMessages: AgentMessage[];
}

/** Given to `prepareNextTurn`. */
export interface PrepareNextTurnContext extends AgentTurnContext {}

/** Returned by `finishTurn`; `undefined` keeps normal scheduling. */
export type AgentTurnDecision = { action: "continue" } | { action: "end" };

/**
 * Called after each turn's assistant message and tool results, before `turn_end`. `{action: "end"}` ends the run
 * without polling queues; `{action: "continue"}` ensures one more request (a natural one counts). Error and aborted
 * responses stay hard exits.
 */
export type FinishTurn = (
  turn: AgentTurnContext,
  signal?: AbortSignal,
) => AgentTurnDecision | void | Promise<AgentTurnDecision | undefined> | Promise<void>;

/** Replacement state for the rest of a run. */
export interface AgentLoopTurnUpdate {
  /** Becomes the working context (later messages are appended to its `messages`). */
  context?: AgentContext;
  /** Messages injected before the next request, with the usual events. */
  messages?: AgentMessage[];
  model?: Model<any>;
  /** `"off"` clears `reasoning`. */
  thinkingLevel?: ThinkingLevel;
}

/** Given to `prepareRequest`. */
export interface PrepareRequestContext {
  context: AgentContext;
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
}

/** Returned by `prepareRequest` (messages cannot be injected there). */
export type AgentRequestUpdate = Omit<AgentLoopTurnUpdate, "messages">;

/**
 * Called before every request, the first included, after pending messages were injected. It never polls queues; its
 * replacements apply to this and later requests of the run.
 */
export type PrepareRequest = (
  request: PrepareRequestContext,
  signal?: AbortSignal,
) => AgentRequestUpdate | void | Promise<AgentRequestUpdate | undefined> | Promise<void>;

/**
 * Configuration of a run. Only `model` and `convertToLlm` are required. The whole object (hooks included) is passed to
 * the stream function as its options, with `apiKey`, `identity` and `signal` replaced. Hooks are called with `this` =
 * this object.
 */
export interface AgentLoopConfig extends SimpleStreamOptions {
  model: Model<any>;
  /** Maps the transcript to provider messages before every request (drop or map custom roles here). */
  convertToLlm: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  /**
   * The stream function, when the call passes none as its `streamFn` argument (which wins); without either the default
   * (`setDefaultStreamFn`) or the built-in providers are used.
   */
  streamFn?: StreamFnLike;
  /** Runs before `convertToLlm`; its output is used for that request only. */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** Called per request with `model.provider`; a falsy result falls back to `apiKey`. */
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  /** Called only when another turn will start, never before the first; no signal argument. */
  prepareNextTurn?: (
    context: PrepareNextTurnContext,
  ) => AgentLoopTurnUpdate | undefined | Promise<AgentLoopTurnUpdate | undefined>;
  /** Polled after each turn (and at the start); `undefined`/`null` count as none. */
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  /** Polled only when the run would otherwise end. */
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
  /** Default `"parallel"`; any other value than `"sequential"` means parallel. */
  toolExecution?: ToolExecutionMode;
  /** After validation, before `execute`. */
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  /** After `execute` (only for calls that executed), before `tool_execution_end`. */
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
  /** New (D3): default tool timeout in milliseconds (a tool's own `timeoutMs` wins); absent or 0 = none. */
  toolTimeoutMs?: number;
  /**
   * New (issue 30), for `agentLoopContinue` / `runAgentLoopContinue`: `agent_end.approvals` with `decisions`. The
   * continuation first finishes the batch that waited (approved calls run, denied ones get their error result, calls
   * without a decision are asked again), then goes on as a continuation does.
   */
  approvals?: ToolApprovals;
  /** New (issue 30): default approval timeout in milliseconds for waiting calls (sets `expiresAt`); absent or 0 = none. */
  approvalTimeoutMs?: number;
  /**
   * New (D3): ends a response when the provider sends no event for this many milliseconds
   * (`Stream idle timeout: no event from the provider for <N> ms`); absent or 0 = none.
   */
  streamIdleTimeoutMs?: number;
  /**
   * New (D4): after an abort, how long awaited callbacks (tools, hooks, getters, the provider stream) may still run
   * before they are abandoned. Default 5000; `Infinity` waits forever; 0 abandons at once.
   */
  abortGraceMs?: number;
  /** New (D5): most tool executions running at once in parallel mode (positive integer; default unlimited). */
  maxParallelTools?: number;
  /**
   * New (issue 32): limits of this run, checked before each model request (after the first) and before each tool
   * batch. Reaching one ends the run cleanly with `agent_end.limitReached`; see {@link AgentLimits}.
   */
  limits?: AgentLimits;
  /**
   * New (issue 45): compact the context inside the run, before a request whose estimated input passes the trigger:
   * older turns are summarized (by the same model by default), the recent ones kept whole, a tool call never
   * separated from its result. `true` = every default. Off when absent. See {@link CompactionOptions}.
   */
  compaction?: boolean | CompactionOptions;
}

/**
 * New (issue 45): compaction inside the loop (SPEC L-3.13). Before each request the loop estimates what it sends
 * (the last reply's reported usage, plus 4 characters a token for what came after); past the trigger it appends a
 * {@link CompactionSummaryMessage} and from then on sends `[system head, summary, kept messages, later messages]`
 * to `transformContext`/`convertToLlm` instead of the whole transcript.
 */
export interface CompactionOptions {
  /** When to compact: a share of the window (`0 < fraction <= 1`) or a token count. Default `{ fraction: 0.8 }`. */
  trigger?: { fraction: number } | { tokens: number };
  /** Recent tokens kept whole. Default: a quarter of the window, at most 20,000. */
  keepRecentTokens?: number;
  /** The window; default each request's `model.contextWindow` (no window: no compaction). */
  contextWindow?: number;
  /**
   * Who writes the summary: `"model"` (default: one request of the run's model through its stream function, with a
   * built-in prompt), `"drop"` (no request: the older turns are left out), or your function; a string or
   * `{ summary, usage }` back. A failure leaves the request uncompacted (`compaction_end.errorMessage`).
   */
  summarize?:
    | "model"
    | "drop"
    | ((
        messages: AgentMessage[],
        options: { model: Model<any>; signal: AbortSignal; previousSummary?: string; reason: "threshold" | "overflow" },
      ) => Promise<string | { summary: string; usage?: Usage }> | string | { summary: string; usage?: Usage });
  /** Replaces the built-in summary instructions of `"model"`. */
  instructions?: string;
}

/**
 * New (issue 32): per-run limits. Counts are positive integers, the others positive numbers; `Infinity`, `undefined`
 * or `null` = no limit. A limit is reached when the run's figure is at it (`maxToolCalls`: when a batch would pass
 * it). Before a model request (never before the run's first): no request is made and no queue polled; the stop is
 * reported when the run would have gone on by itself (tool results for the model, `finishTurn`'s `"continue"`) —
 * after a final answer the run ends as it would have. Before a tool batch: every call of the batch gets the error
 * result `Tool call "<name>" was not executed: <message>`, the turn ends, the stop is reported. Either way the
 * transcript ends with a user or tool-result message, so a continuation (`agent.continue()`, `agentLoopContinue`)
 * goes on once the limit is raised.
 */
export interface AgentLimits {
  /** Turns in the run (`Run stopped: turn limit of 5 reached`). */
  maxTurns?: number;
  /** Calls of the stream function in the run (`Run stopped: model request limit of 5 reached`). */
  maxModelRequests?: number;
  /** `usage.totalTokens` summed over the run's replies (not the stream option `maxTokens`, a per-request cap). */
  maxTokens?: number;
  /** `usage.cost.total` summed over the run's replies (`Run stopped: cost limit of $0.50 reached ($0.52 spent)`). */
  maxCostUsd?: number;
  /** Milliseconds since the run started, seen at the check points (a request or tool in flight is not cut). */
  maxDurationMs?: number;
  /** Tool calls executed in the run; a batch that would pass it runs none of its calls. */
  maxToolCalls?: number;
}

/** New (issue 32): an {@link Agent}'s limits over its whole life, against {@link AgentState.totalUsage}. */
export interface AgentTotalLimits {
  maxTokens?: number;
  maxCostUsd?: number;
}

/**
 * New (issue 32): the limit that stopped a run (`agent_end.limitReached`, {@link AgentState.limitReached}).
 * `value` is the run's figure (the agent's for `scope: "agent"`; for `maxToolCalls`, the calls run plus the batch's).
 */
export interface LimitReached {
  limit: keyof AgentLimits;
  scope: "run" | "agent";
  max: number;
  value: number;
  message: string;
  /**
   * Only on a `maxCostUsd` stop that could not count the cost: a reply reported tokens but no cost (its model has no
   * `model.cost` prices, or its stream function filled in none). The run stops at the first such reply.
   */
  uncounted?: true;
}

/**
 * New (issue 32): usage totals, summed over assistant messages' `usage` (a figure that is not a finite number counts
 * 0). Assignable to {@link Usage}.
 */
export interface UsageTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** Receives the events of a run; `runAgentLoop` awaits each call before the run goes on. */
export type AgentEventSink = (event: AgentEvent) => Promise<void> | void;

/** The `beforeToolCall` and `afterToolCall` hooks of {@link AgentLoopConfig}. */
export type ToolCallHooks = Pick<AgentLoopConfig, "beforeToolCall" | "afterToolCall">;

/** Options of {@link runToolCall}. */
export interface RunToolCallOptions extends ToolCallHooks {
  /** Tools the call is looked up in. */
  tools: readonly AgentTool<any>[];
  /** Given to the hooks as the message that made the call. */
  assistantMessage: AssistantMessage;
  /** Given to the hooks as the current context. */
  context: AgentContext;
  signal?: AbortSignal;
  /** Receives the tool's partial results (awaited). */
  onUpdate?: (partialResult: AgentToolResult<any>) => Promise<void> | void;
  /** New (D3): timeout for `execute` when the tool has no `timeoutMs`. */
  toolTimeoutMs?: number;
  /** New (D4): grace period after an abort (default 5000). */
  abortGraceMs?: number;
}

// ============================================================================================================
// Events
// ============================================================================================================

/**
 * New (issue 30): announces a tool call that waits for a person, after its `tool_execution_start`. Emitted only by
 * runs whose tools ask for approval; kept out of {@link AgentEvent} so that exhaustive `switch`es over it written for
 * pi-agent-core still compile. An Agent's listener gets it as part of {@link AgentRunEvent}.
 */
export type ToolApprovalRequestEvent = { type: "tool_approval_request" } & ToolApprovalRequest;

/**
 * New (issue 45): a compaction inside the run (only with {@link AgentLoopConfig.compaction}), between the injected
 * messages and the request it makes room for: `compaction_start`, then on success the entry's `message_start` and
 * `message_end`, then `compaction_end`. Kept out of {@link AgentEvent} for the same reason as
 * {@link ToolApprovalRequestEvent}; the loop's streams and an Agent's listeners deliver it.
 */
export type CompactionEvent =
  | {
      type: "compaction_start";
      reason: "threshold" | "overflow";
      /** The estimated input tokens of the request. */
      tokensBefore: number;
      /** How many messages are summarized. */
      messages: number;
    }
  | {
      type: "compaction_end";
      reason: "threshold" | "overflow";
      tokensBefore: number;
      /** The entry; absent when the compaction failed. */
      message?: CompactionSummaryMessage;
      /** The estimate of the request with the entry in place. */
      tokensAfter?: number;
      /** Why it failed: the request then goes out uncompacted (or, on an abort, the run ends). */
      errorMessage?: string;
    };

/** New: every event an Agent's listener receives: the run's {@link AgentEvent}s, approval requests, compactions. */
export type AgentRunEvent = AgentEvent | ToolApprovalRequestEvent | CompactionEvent;

/** New: a listener of `agent.subscribe`, awaited in order, with the run's abort signal. */
export type AgentListener = (event: AgentRunEvent, signal: AbortSignal) => Promise<void> | void;

/** New (issue 31): options of `agent.events()`. */
export interface AgentEventsOptions {
  /** The `seq` of the last item the reader saw: what came after it is replayed first. Omitted: live items only. */
  after?: number;
  /** Ends the iterator when aborted. */
  signal?: AbortSignal;
  /** End after the next `agent_end` (or after the replay, when the agent is idle and `after` is given). */
  untilIdle?: boolean;
  /**
   * Replay the current run from its `agent_start` (the last ended run's when none is under way), compacted as after
   * a cut, then live items: what a chat client's resume rebuilds its answer from. An `agent_sync` instead when the
   * journal did not see that start (no `events()` reader existed then, or the transcript was replaced). Not with `after`.
   */
  fromRunStart?: boolean;
  /** Items a reader may hold unread before it is told it fell behind and catches up from the journal (1000). */
  highWaterMark?: number;
}

/** New (issue 31): the agent's state, for a reader the journal cannot replay: replace what you hold with it. */
export interface AgentSyncEvent {
  type: "agent_sync";
  messages: AgentMessage[];
  isStreaming: boolean;
  streamingMessage?: AgentMessage;
  pendingToolCalls: string[];
  errorMessage?: string;
  pendingApprovals?: ToolApprovalRequest[];
}

/** New (issue 31): one item of `agent.events()`. */
export interface AgentEventItem {
  /** Increases over the agent's life, across runs and across a restore in another process. */
  seq: number;
  event: AgentEvent | ToolApprovalRequestEvent | CompactionEvent | AgentSyncEvent;
  /** The item comes from the journal (a replay), not live. */
  replay?: true;
  /** The reader fell behind (more than `highWaterMark` items unread): this item starts its catching up. */
  behind?: true;
}

/**
 * Events of a run, from `agent_start` to `agent_end` (always last). Every message gets `message_start` then
 * `message_end`; a streamed assistant message also gets `message_update`s (shallow copies of the partial).
 */
export type AgentEvent =
  | { type: "agent_start" }
  | {
      type: "agent_end";
      messages: AgentMessage[];
      /** New (issue 30): present when the run paused for tool calls that wait for a person. */
      approvals?: ToolApprovals;
      /** New (issue 32): present when a limit stopped the run. */
      limitReached?: LimitReached;
    }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AgentMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: any }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; args: any; partialResult: any }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: any;
      isError: boolean;
      /** Monotonic milliseconds `execute()` took; absent when the tool did not run. */
      durationMs?: number;
    };

// ============================================================================================================
// Loop entry points and helpers
// ============================================================================================================

/**
 * Starts a run with new prompt messages and returns its event stream at once (the run goes on in the background and
 * never waits for the consumer). `result()` resolves with the run's new messages. Without `streamFn`, the default from
 * {@link setDefaultStreamFn} is used, else {@link streamBuiltin}. Argument errors throw a `TypeError` synchronously.
 */
export declare function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFnLike,
): AgentLoopStream;

/**
 * The stream of {@link agentLoop} and {@link agentLoopContinue}: an {@link EventStream} whose `totalUsage()` resolves
 * with the run's usage totals once it ended (new, issue 32).
 */
export interface AgentLoopStream extends EventStream<AgentEvent, AgentMessage[]> {
  totalUsage(): Promise<UsageTotals>;
}

/**
 * New (issue 32): the usage totals of `messages` (the sum over its assistant messages), e.g. of what
 * {@link runAgentLoop} resolved with. Throws a `TypeError` when `messages` is not an array.
 */
export declare function totalUsage(messages: readonly AgentMessage[]): UsageTotals;

/**
 * Continues from the current context without adding a message (the last message must convert to a user or
 * tool-result message). Throws `Cannot continue: no messages in context` or `Cannot continue from message role:
 * assistant`. The caller's `context.messages` array is not modified.
 */
export declare function agentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFnLike,
): AgentLoopStream;

/**
 * Runs like {@link agentLoop} but awaits `emit` for every event, and resolves with the run's new messages. Callback
 * failures end the run cleanly and resolve; only a failing `emit` rejects.
 */
export declare function runAgentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFnLike,
): Promise<AgentMessage[]>;

/** Continuation counterpart of {@link runAgentLoop}; the guards of {@link agentLoopContinue} reject. */
export declare function runAgentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFnLike,
): Promise<AgentMessage[]>;

/**
 * Runs one tool call through the loop's steps (preparation, validation, `beforeToolCall`, `execute`,
 * `afterToolCall`) without events or messages. Never rejects for tool failures: aborted, unknown, invalid, blocked,
 * thrown and timed-out calls resolve with `isError: true`.
 */
export declare function runToolCall(toolCall: AgentToolCall, options: RunToolCallOptions): Promise<AgentToolCallOutcome>;

/**
 * Returns the tool unchanged; written for TypeScript, which then keeps the tool's literal types and infers what
 * `execute` receives from `parameters` (as the AI SDK's `tool()`): a zod, Valibot or ArkType schema's output, or a
 * TypeBox schema's value. `agentLoop` and the `Agent` take tools written without it just the same.
 */
export declare function tool<TParameters extends object = object, TDetails = any>(
  tool: AgentTool<TParameters, TDetails>,
): AgentTool<TParameters, TDetails>;

/**
 * Coerces and validates a tool call's arguments against `tool.parameters` (JSON Schema drafts 2020-12 and 7) and
 * returns the coerced copy; throws `Validation failed for tool "<name>": …` or `Invalid arguments for tool "<name>": …`.
 * A Standard Schema validates with its own `validate` and gives its output; one whose `validate` answers with a
 * promise is a `TypeError` here (a run awaits it).
 */
export declare function validateToolArguments(tool: Tool<any>, toolCall: ToolCall): any;

// ============================================================================================================
// Errors (E-8.6)
// ============================================================================================================

/** The stable code of each kind of error the library throws itself. */
export type ErrorCode =
  | "INVALID_ARGUMENT"
  | "AGENT_BUSY"
  | "APPROVALS_PENDING"
  | "INVALID_APPROVAL"
  | "CANNOT_CONTINUE"
  | "LIMIT_REACHED"
  | "RESTORE_REFUSED"
  | "NOT_SERIALIZABLE"
  | "NOT_INITIALIZED"
  | "INSTANCE_FAILED"
  | "NO_SUCH_MODEL"
  | "MCP_TOOLS";

/** The codes, each its own name: `ERROR_CODES.AGENT_BUSY === "AGENT_BUSY"`. */
export declare const ERROR_CODES: { readonly [K in ErrorCode]: K };

/**
 * Any error the library throws itself: `error instanceof AgentLoopError` is true for every class below (across the
 * package's entries, its ESM and CommonJS builds and runtimes) and false for an error a callback of yours threw. The
 * errors are plain `Error`s and `TypeError`s with their messages as always; each carries its `code`.
 */
export declare class AgentLoopError extends Error {
  constructor(message: string, code: ErrorCode, options?: { cause?: unknown });
  readonly code: ErrorCode;
}

/** `INVALID_ARGUMENT`: An argument or option the API does not take (every argument check: `agentLoop`, the `Agent`, `agent-loop-wasm/ui`, `/mcp`, `/otel`, `/models`). */
export declare class InvalidArgumentError extends TypeError {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "INVALID_ARGUMENT";
  static readonly code: "INVALID_ARGUMENT";
}

/** `AGENT_BUSY`: `prompt()`, `continue()`, `resume()` or `reset()` while the Agent runs. */
export declare class AgentBusyError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "AGENT_BUSY";
  static readonly code: "AGENT_BUSY";
}

/** `APPROVALS_PENDING`: `prompt()` or `continue()` while tool calls wait for approval, or decided calls wait for `resume()`. */
export declare class ApprovalsPendingError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "APPROVALS_PENDING";
  static readonly code: "APPROVALS_PENDING";
}

/** `INVALID_APPROVAL`: `approve()` or `deny()` of a call that is not waiting or was already decided, or with edited arguments that fail validation. */
export declare class InvalidApprovalError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "INVALID_APPROVAL";
  static readonly code: "INVALID_APPROVAL";
}

/** `CANNOT_CONTINUE`: `continue()` with no messages, or with an assistant message last. */
export declare class CannotContinueError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "CANNOT_CONTINUE";
  static readonly code: "CANNOT_CONTINUE";
}

/** `LIMIT_REACHED`: `prompt()` or `continue()` once the Agent's `totalLimits` are reached. */
export declare class LimitReachedError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "LIMIT_REACHED";
  static readonly code: "LIMIT_REACHED";
}

/** `RESTORE_REFUSED`: `Agent.restore()` refusing its input: not a snapshot, a newer format, a missing checkpoint, invalid JSON. */
export declare class RestoreRefusedError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "RESTORE_REFUSED";
  static readonly code: "RESTORE_REFUSED";
}

/** `NOT_SERIALIZABLE`: `agent.snapshot()` of a state JSON cannot hold. */
export declare class NotSerializableError extends TypeError {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "NOT_SERIALIZABLE";
  static readonly code: "NOT_SERIALIZABLE";
}

/** `NOT_INITIALIZED`: A call of `agent-loop-wasm/web` before `init()`. */
export declare class NotInitializedError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "NOT_INITIALIZED";
  static readonly code: "NOT_INITIALIZED";
}

/** `INSTANCE_FAILED`: Any call after the WebAssembly instance failed (a trap). */
export declare class InstanceFailedError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "INSTANCE_FAILED";
  static readonly code: "INSTANCE_FAILED";
}

/** `NO_SUCH_MODEL`: `getModel()` / `getModels()` of an unknown provider or model id. */
export declare class NoSuchModelError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "NO_SUCH_MODEL";
  static readonly code: "NO_SUCH_MODEL";
}

/** `MCP_TOOLS`: `mcpTools()` / `syncMcpTools()`: a server listing too many pages, a tool twice, or a name another server has. */
export declare class McpToolsError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly code: "MCP_TOOLS";
  static readonly code: "MCP_TOOLS";
}

/** Stores (or, with `undefined`, clears) the stream function used when none is passed. */
export declare function setDefaultStreamFn(streamFn: StreamFnLike | undefined): void;

/** The stored default stream function, or {@link streamBuiltin}. Never throws. */
export declare function getDefaultStreamFn(): StreamFn;

/** Request identity of agent loops, overlaid field by field with `AgentLoopConfig.identity`. */
export declare const DEFAULT_AGENT_IDENTITY: ClientIdentity;

/** The wire formats built in. */
export type BuiltinApi = "openai-completions" | "anthropic-messages" | "openai-responses" | "google-generative-ai";

/** The values of {@link BuiltinApi}. */
export declare const BUILTIN_APIS: readonly BuiltinApi[];

/**
 * The built-in stream function: picks the provider by `model.api` (see {@link BUILTIN_APIS}) and talks to it with
 * `fetch`. Returns its stream synchronously and never throws; every failure (unknown api, missing key, HTTP or
 * network error, abort) becomes the final `error` event.
 */
export declare function streamBuiltin(
  model: Model<Api>,
  context: TranscriptContext,
  options?: SimpleStreamOptions,
): AssistantMessageEventStream;

/**
 * Whether an assistant message shows that the request did not fit the model's context window (pi-ai's
 * `isContextOverflow`, with the same answers). Three cases count as overflow:
 *
 * 1. `stopReason: "error"` whose `errorMessage` is a provider's "context length exceeded" error, e.g. Anthropic's
 *    `prompt is too long: N tokens > M maximum` (or its `request_too_large`), OpenAI's
 *    `... exceeds the context window ...` / `maximum context length is N tokens` / `context_length_exceeded`,
 *    Gemini's `The input token count (N) exceeds the maximum number of tokens allowed (M).`, and the wordings of xAI,
 *    Groq, Mistral, OpenRouter, Together, llama.cpp, LM Studio, Kimi, DashScope, z.ai and others; also an error
 *    text starting with the status `413`. The built-in providers' `HTTP 400: <detail>` texts count when the detail
 *    is such a wording. An error that mentions `rate limit` or `too many requests` never counts.
 * 2. `stopReason: "stop"` with `usage.input + usage.cacheRead > contextWindow` (a provider that accepted an
 *    oversized prompt silently); only when `contextWindow` is given.
 * 3. `stopReason: "length"` with `usage.output === 0` after a prompt (`input + cacheRead`) of at least 99 % of
 *    `contextWindow` (a provider that truncated the input to fit); only when `contextWindow` is given.
 *
 * Anything else is `false`: other stop reasons (`aborted`, `toolUse`), unrecognised errors, a missing `usage`.
 * Never throws (pi-ai's throws on a message that is not an object, or on a `stop`/`length` message without `usage`
 * when `contextWindow` is given; this returns `false` there).
 */
export declare function isContextOverflow(message: AssistantMessage, contextWindow?: number): boolean;

/**
 * Whether a `stopReason: "length"` message ended with fewer output tokens (`usage.output`) than `desiredMaxOutput`,
 * the output limit asked for before any clamping to the context (pi-ai's `isRecoverableLength`): the model was cut
 * short by context pressure or the provider, so one compact-and-retry may help. `false` for any other stop reason or
 * a `desiredMaxOutput` that is not above 0. Never throws.
 */
export declare function isRecoverableLength(message: AssistantMessage, desiredMaxOutput: number): boolean;

/** An assistant event as a proxy server sends it to {@link streamProxy}: without `partial`, which is rebuilt. */
export type ProxyAssistantMessageEvent =
  | { type: "start" }
  | { type: "text_start"; contentIndex: number }
  | { type: "text_delta"; contentIndex: number; delta: string }
  | { type: "text_end"; contentIndex: number; contentSignature?: string }
  | { type: "thinking_start"; contentIndex: number }
  | { type: "thinking_delta"; contentIndex: number; delta: string }
  | { type: "thinking_end"; contentIndex: number; contentSignature?: string }
  | { type: "toolcall_start"; contentIndex: number; id: string; toolName: string }
  | { type: "toolcall_delta"; contentIndex: number; delta: string }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall }
  | {
      type: "done";
      reason: Extract<StopReason, "stop" | "length" | "toolUse">;
      usage: AssistantMessage["usage"];
      providerThinkingLevel?: string;
    }
  | {
      type: "error";
      reason: Extract<StopReason, "aborted" | "error">;
      errorMessage?: string;
      usage: AssistantMessage["usage"];
      providerThinkingLevel?: string;
    };

/** Options of {@link streamProxy}: the stream options forwarded to the proxy server, plus where and how to reach it. */
export interface ProxyStreamOptions
  extends Pick<
    SimpleStreamOptions,
    | "temperature"
    | "samplingParams"
    | "maxTokens"
    | "reasoning"
    | "cacheRetention"
    | "sessionId"
    | "disableContinuation"
    | "headers"
    | "metadata"
    | "transport"
    | "thinkingBudgets"
    | "maxRetryDelayMs"
  > {
  signal?: AbortSignal;
  /** Sent as `Authorization: Bearer <authToken>`. */
  authToken: string;
  /** The server's base URL; requests go to `<proxyUrl>/api/stream`. */
  proxyUrl: string;
}

/**
 * A stream function for apps whose model calls go through their own server (pi-agent-core's `streamProxy`): POSTs
 * `{model, context, options}` to `<proxyUrl>/api/stream` and rebuilds the partial message from the server-sent
 * `data:` lines of {@link ProxyAssistantMessageEvent}s. Returns its stream synchronously; an HTTP error, a malformed
 * event, a stream closed before `done`/`error` or an abort becomes the final `error` event. Throws a `TypeError` only
 * when `model` or `options` is not an object.
 */
export declare function streamProxy(
  model: Model<Api>,
  context: TranscriptContext,
  options: ProxyStreamOptions,
): AssistantMessageEventStream;

/** The library version. */
export declare const VERSION: string;

/**
 * Bytes of this package's WebAssembly memory now. Linear memory grows and never shrinks, so this is the most the
 * instance has needed so far; big payloads (images, long texts, tool results) stay in JS and do not count here. For
 * watching headroom where an isolate's memory is capped (128 MB on Cloudflare Workers).
 */
export declare function wasmMemoryBytes(): number;

/** The newest {@link AgentSnapshot} format version this library writes and reads (1). */
export declare const SNAPSHOT_VERSION: number;

// ============================================================================================================
// Agent
// ============================================================================================================

/** Public state of an {@link Agent}: one stable object. */
export interface AgentState {
  /** The prompt replayed from the transcript's system messages (read-only; append a system message to change it). */
  readonly systemPrompt: string;
  /** Model of future runs. */
  model: Model<any>;
  /** Reasoning level of future runs. */
  thinkingLevel: ThinkingLevel;
  /** Executable tools; assigning copies the array. */
  set tools(tools: AgentTool<any>[]);
  get tools(): AgentTool<any>[];
  /** The transcript (the live array); assigning copies the array. */
  set messages(messages: AgentMessage[]);
  get messages(): AgentMessage[];
  /** True while a run is active, until its `agent_end` listeners settled. */
  readonly isStreaming: boolean;
  /** The assistant message being streamed, if any. */
  readonly streamingMessage?: AgentMessage;
  /** Ids of the tool calls executing now. */
  readonly pendingToolCalls: ReadonlySet<string>;
  /** Error of the latest failed or aborted turn, if any. */
  readonly errorMessage?: string;
  /** New (issue 30): the tool calls waiting for a decision, in request order. */
  readonly pendingApprovals: ToolApprovalRequest[];
  /** New (issue 32): usage over the agent's life (kept by `reset()`, snapshots and checkpoints); a fresh copy. */
  readonly totalUsage: UsageTotals;
  /** New (issue 32): usage of the run in progress, else of the last run; a fresh copy. */
  readonly runUsage: UsageTotals;
  /** New (issue 32): the limit that stopped the last run (its `message` is also `errorMessage`), else undefined. */
  readonly limitReached?: LimitReached;
}

/**
 * Initial state of an {@link Agent}. `systemPrompt` and `tools` become a leading system message unless `messages`
 * already starts with one.
 */
export type AgentInitialState = {
  readonly systemPrompt?: string;
  model?: Model<any>;
  thinkingLevel?: ThinkingLevel;
  tools?: AgentTool<any>[];
  messages?: AgentMessage[];
};

/** Options of `new Agent(options)`. Every option except `initialState` and the modes becomes a public field. */
export interface AgentOptions {
  initialState?: AgentInitialState;
  /**
   * New (durable agents): called at every durable point (each message committed to the transcript, each tool call
   * ended, each queue, mode, model or thinking-level change, a run starting or ending) with what changed since the
   * previous checkpoint, and awaited like a listener during runs. Calls never overlap. A throw or rejection inside a
   * run fails the run as a listener's would; the change stays due and the next durable point retries it.
   */
  onCheckpoint?: (checkpoint: AgentCheckpoint) => void | Promise<void>;
  /** Default: keeps the roles `system`, `user`, `assistant` and `toolResult`. */
  convertToLlm?: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** Default: {@link getDefaultStreamFn} at construction. */
  streamFn?: StreamFnLike;
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  onPayload?: SimpleStreamOptions["onPayload"];
  onResponse?: SimpleStreamOptions["onResponse"];
  onProviderStreamEvent?: SimpleStreamOptions["onProviderStreamEvent"];
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  /** Legacy form of `prepareNextTurnWithContext`. */
  prepareNextTurn?: (signal?: AbortSignal) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
  /** Wins over `prepareNextTurn`. */
  prepareNextTurnWithContext?: (
    context: PrepareNextTurnContext,
    signal?: AbortSignal,
  ) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
  /** Default `"one-at-a-time"`. */
  steeringMode?: QueueMode;
  /** Default `"one-at-a-time"`. */
  followUpMode?: QueueMode;
  sessionId?: string;
  thinkingBudgets?: ThinkingBudgets;
  /** Default `"auto"`. */
  transport?: Transport;
  maxRetryDelayMs?: number;
  /** Default `"parallel"`. */
  toolExecution?: ToolExecutionMode;
  /** Merged field by field over {@link DEFAULT_AGENT_IDENTITY}; `{attribution: null}` sends no attribution. */
  identity?: ClientIdentity;
  /** New (D3), see {@link AgentLoopConfig.toolTimeoutMs}. */
  toolTimeoutMs?: number;
  /** New (D3), see {@link AgentLoopConfig.streamIdleTimeoutMs}. */
  streamIdleTimeoutMs?: number;
  /** New (D4), see {@link AgentLoopConfig.abortGraceMs}. */
  abortGraceMs?: number;
  /** New (D5), see {@link AgentLoopConfig.maxParallelTools}. */
  maxParallelTools?: number;
  /** New: fallback API key forwarded to the stream function. */
  apiKey?: string;
  /** New: output-token limit forwarded to the stream function. */
  maxTokens?: number;
  /** New: temperature forwarded to the stream function. */
  temperature?: number;
  /** New: request headers forwarded to the stream function. */
  headers?: ProviderHeaders;
  /** New: `fetch` forwarded to the stream function. */
  fetch?: FetchFunction;
  /** New (issue 32): limits of each run, see {@link AgentLimits}; a public field, read when a run starts. */
  limits?: AgentLimits;
  /**
   * New (issue 32): limits over the agent's life, against `state.totalUsage`. Reached during a run, it stops as
   * `limits` do (`Run stopped: agent cost limit of $5.00 reached ($5.02 spent in total)`); reached already, `prompt()`
   * and `continue()` reject (`…; raise agent.totalLimits.maxCostUsd to run again`).
   */
  totalLimits?: AgentTotalLimits;
  /** New (issue 45): compaction inside each run, see {@link CompactionOptions}; a public field, read when a run starts. */
  compaction?: boolean | CompactionOptions;
}

/**
 * New (durable agents): what changed in an agent since its previous checkpoint, handed to `onCheckpoint`. Folding
 * checkpoints 1…n in order (or a snapshot and the checkpoints after its `checkpointSeq`) rebuilds the agent exactly.
 * The values are the agent's own objects: serialise them (e.g. `JSON.stringify`), do not mutate them.
 */
export interface AgentCheckpoint {
  format: "agent-loop-wasm/agent-checkpoint";
  version: 1;
  /** 1, 2, 3, … without gaps. A failed write is retried whole under the same number: store by `seq` (replace). */
  seq: number;
  /** Present on an agent's first checkpoint, which carries every field. */
  full?: true;
  /** The transcript is `transcript.slice(0, from).concat(append)`: usually one appended message. */
  messages?: { from: number; append: AgentMessage[] };
  model?: Model<any>;
  thinkingLevel?: ThinkingLevel;
  steeringQueue?: AgentMessage[];
  followUpQueue?: AgentMessage[];
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  /** `null` once a session id was unset. */
  sessionId?: string | null;
  toolNames?: string[];
  /** A run is in progress: {@link Agent.resume} picks it up after a crash. */
  running?: boolean;
  /**
   * Tool calls that ended since the previous checkpoint (they are not run again on resume). A tool result appended to
   * the transcript settles its call's entry; `running: false` settles them all.
   */
  ended?: AgentEndedToolCall[];
  /** New (issue 30): the tool calls waiting for a person and the decisions so far; `null` once the pause is over. */
  approvals?: (ToolApprovals & { decisions: ToolApprovalDecision[] }) | null;
  /** New (issue 32): the agent's usage totals when they changed (never while no reply reported usage). */
  usage?: UsageTotals;
}

/** A tool call that ended, as a checkpoint records it until its result message is in the transcript. */
export interface AgentEndedToolCall {
  toolCallId: string;
  toolName: string;
  result: AgentToolResult<any>;
  isError: boolean;
}

/** Options of {@link Agent.restore}: {@link AgentOptions} without `initialState`, plus the executable tools. */
export type AgentRestoreOptions = Omit<AgentOptions, "initialState"> & {
  tools?: AgentTool<any>[];
};

/**
 * A JSON-compatible copy of an agent's committed state (D8). `toolNames` is informational: tools are functions and
 * must be passed again to {@link Agent.restore}.
 */
export interface AgentSnapshot {
  format: "agent-loop-wasm/agent-snapshot";
  /** {@link SNAPSHOT_VERSION} of the writer. */
  version: number;
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
  messages: AgentMessage[];
  steeringQueue: AgentMessage[];
  followUpQueue: AgentMessage[];
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  sessionId?: string;
  toolNames: string[];
  /** New (durable agents): the last checkpoint stored when the snapshot was taken (agents with `onCheckpoint`). */
  checkpointSeq?: number;
  /** New: taken during a run; {@link Agent.resume} continues it. */
  running?: boolean;
  /** Tool calls that ended during the run whose results are not in `messages` yet. */
  completedTools?: AgentEndedToolCall[];
  /** New (issue 30): tool calls waiting for a person, with the decisions made so far. */
  approvals?: ToolApprovals & { decisions: ToolApprovalDecision[] };
  /** New (issue 32): the agent's usage totals (absent while no reply reported usage). */
  usage?: UsageTotals;
}

/**
 * A stateful agent: owns the transcript, the steering and follow-up queues and the listeners, and runs the loop with
 * listeners as a barrier (each is awaited in subscription order). Subclassable.
 */
export declare class Agent {
  /**
   * Restores an idle agent of the class this is called on from a snapshot (object or JSON text). The transcript is
   * taken verbatim; tool differences are declared on the next request. Throws `Agent.restore: …` errors for input that
   * is not a valid snapshot.
   */
  static restore<TAgent extends typeof Agent>(
    this: TAgent,
    snapshot: AgentSnapshot | string | (AgentSnapshot | AgentCheckpoint | string)[],
    options?: AgentRestoreOptions,
  ): InstanceType<TAgent>;

  constructor(options?: AgentOptions);

  convertToLlm: (messages: AgentMessage[]) => Message[] | Promise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  /** The stream function of future runs (`options.streamFn`, else the default at construction). */
  streamFunction: StreamFnLike;
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  onPayload?: SimpleStreamOptions["onPayload"];
  onResponse?: SimpleStreamOptions["onResponse"];
  onProviderStreamEvent?: SimpleStreamOptions["onProviderStreamEvent"];
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => Promise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => Promise<AfterToolCallResult | undefined>;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  prepareNextTurn?: (signal?: AbortSignal) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
  prepareNextTurnWithContext?: (
    context: PrepareNextTurnContext,
    signal?: AbortSignal,
  ) => Promise<AgentLoopTurnUpdate | undefined> | AgentLoopTurnUpdate | undefined;
  /** Session id forwarded to providers (read at each run's start). */
  sessionId?: string;
  thinkingBudgets?: ThinkingBudgets;
  transport: Transport;
  maxRetryDelayMs?: number;
  toolExecution: ToolExecutionMode;
  identity?: ClientIdentity;
  toolTimeoutMs?: number;
  streamIdleTimeoutMs?: number;
  abortGraceMs?: number;
  maxParallelTools?: number;
  apiKey?: string;
  maxTokens?: number;
  temperature?: number;
  headers?: ProviderHeaders;
  fetch?: FetchFunction;
  /** New (issue 32): per-run limits (set only when given). */
  limits?: AgentLimits;
  /** New (issue 32): limits over the agent's life (set only when given). */
  totalLimits?: AgentTotalLimits;
  /** New (issue 45): compaction inside each run (set only when given). */
  compaction?: boolean | CompactionOptions;

  /**
   * Adds a listener; returns a function that removes it. No event is replayed on subscribe. Listeners are awaited one
   * by one and get the run's abort signal.
   */
  subscribe(listener: AgentListener): () => void;
  /**
   * A listener written for pi-agent-core, its parameter typed `AgentEvent`, still type-checks (it never sees an approval
   * request unless a tool asks for one).
   */
  subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void): () => void;
  /**
   * New (issue 31): the agent's events, numbered, for a reader that may reconnect. With `after` (the `seq` of the last
   * item the reader saw) it first replays what the reader missed — compacted: the streaming message as one
   * `message_update` carrying its partial, finished messages as their `message_end` — or, when `after` is not in the
   * journal (older than the last ended run, or from another process), one `agent_sync` item to start again from;
   * then live items. Ends on `return()`, on `signal`, or after `agent_end` with `untilIdle`.
   */
  events(options?: AgentEventsOptions): AsyncIterableIterator<AgentEventItem>;

  /** The state object (stable). */
  get state(): AgentState;

  /** How steering messages are drained (changeable while running; invalid values throw `TypeError`). */
  get steeringMode(): QueueMode;
  set steeringMode(mode: QueueMode);
  /** How follow-up messages are drained. */
  get followUpMode(): QueueMode;
  set followUpMode(mode: QueueMode);

  /** Queues a message for injection after the current turn. */
  steer(message: AgentMessage): void;
  /** Queues a message that runs only when the agent would otherwise stop. */
  followUp(message: AgentMessage): void;
  clearSteeringQueue(): void;
  clearFollowUpQueue(): void;
  clearAllQueues(): void;
  /** True when either queue holds a message. */
  hasQueuedMessages(): boolean;
  /** The messages the next drain would take (steering first, else follow-up), without taking them. */
  peekQueuedMessages(): AgentMessage[];
  /**
   * Removes the queued steering and follow-up messages `predicate` selects (compared by identity) and returns them,
   * steering first, each in queue order; the others keep their queue and delivery mode. A throwing predicate
   * removes nothing. As in pi's newer Agent; not in pi-agent-core 1.6.0.
   */
  takeQueuedMessages(predicate: (message: AgentMessage) => unknown): AgentMessage[];

  /** The active run's abort signal, if a run is active. */
  get signal(): AbortSignal | undefined;
  /** Aborts the active run (no-op when idle). */
  abort(): void;
  /** Resolves once the active run and its `agent_end` listeners finished (at once when idle). */
  waitForIdle(): Promise<void>;
  /** Resets the transcript to its replayed head system message and clears the queues; throws while running. */
  reset(): void;

  /** Runs a prompt: a message, an array of messages, or text with optional images. Rejects while a run is active. */
  prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
  prompt(input: string, images?: ImageContent[]): Promise<void>;
  /** Continues from the current transcript (see the Agent docs for an assistant tail). */
  /**
   * `options.approvals` (new, A-5.8.7): a pause from outside — `agent_end.approvals` of a run that paused, with
   * `decisions` — for a server that keeps no Agent between requests. The agent holds it as its own pause; when every
   * waiting call is decided, the run carries the decisions out as `approve()`/`deny()` would (else the promise resolves
   * and the rest are decided with `approve()`/`deny()`). The transcript must end with the assistant message whose calls
   * wait. `agent-loop-wasm/ui`'s `createAgentUIStreamResponse` builds it from posted `UIMessage[]`.
   */
  continue(options?: { approvals?: ToolApprovals & { decisions?: ToolApprovalDecision[] } }): Promise<void>;
  /**
   * New (durable agents): picks up the run a crash interrupted, from what the restored checkpoints or snapshot hold.
   * Resolves at once for an agent that was not mid-run. Runs exactly the tool calls the interrupted turn is missing,
   * makes an interrupted request again, and delivers queued messages as the interrupted run would have.
   */
  resume(): Promise<void>;

  /**
   * New (issue 30): approves a tool call in `state.pendingApprovals`, optionally with edited `args` (validated now:
   * invalid ones reject with the validation message). The decision that settles the last waiting call continues the
   * run at once; the promise then settles when that run ended (else at once). Rejects with an `Error` naming the id
   * for an unknown call or one already decided.
   */
  approve(toolCallId: string, options?: { args?: unknown }): Promise<void>;
  /** New (issue 30): denies a waiting tool call; it gets the error result `Tool call "<id>" was denied: <reason>`. */
  deny(toolCallId: string, options?: { reason?: string }): Promise<void>;

  /**
   * New (D8): a JSON-compatible deep copy of the committed state. Throws `TypeError` `Agent.snapshot: <path> is not
   * JSON-serializable` for values JSON cannot hold.
   */
  snapshot(): AgentSnapshot;
}

// Only the declarations marked `export` above are public (the schema helpers are not).
export {};
