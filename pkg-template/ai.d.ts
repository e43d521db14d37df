// The pi-ai shapes agent-loop-wasm's API uses (messages, content blocks, models, stream options), declared again
// structurally so that pi-ai values fit (SPEC API-1.6): nothing here imports pi-ai. Re-exported by index.d.ts, whose
// other declarations use them; split from it only to keep each file readable.

import type { Tool, ToolReference } from "./tools.js";

// ============================================================================================================
// JSON values
// ============================================================================================================

/** Any value that survives a JSON round trip. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

// ============================================================================================================
// Content blocks and messages
// ============================================================================================================

/** Plain text. `textSignature` is provider metadata (a legacy id, or the JSON of `{v: 1, id, phase?}`). */
export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

/**
 * Model reasoning. With `redacted`, the provider withheld the text and the opaque payload is kept in
 * `thinkingSignature` so it can be sent back on the next request.
 */
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
}

/** An image as base64 data. */
export interface ImageContent {
  type: "image";
  /** Base64-encoded bytes (no `data:` prefix). */
  data: string;
  mimeType: string;
}

/**
 * A tool call the model made. When the model's complete argument text was not a JSON object, `arguments` is `{}` and
 * `argumentsError` describes the problem (including the text received); validation then fails with it.
 */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: JsonObject;
  /** Google: signature of the reasoning that produced this call. */
  thoughtSignature?: string;
  /** OpenAI Responses: namespace of a namespaced or dynamically loaded tool. */
  namespace?: string;
  argumentsError?: string;
}

/** Token counts and their cost in USD. `totalTokens` = input + output + cacheRead + cacheWrite. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The part of `cacheWrite` written with one-hour retention (Anthropic only). */
  cacheWrite1h?: number;
  /** Reasoning tokens, a subset of `output`, when the provider reports them. */
  reasoning?: number;
  totalTokens: number;
  cost: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    /** The best known total: the provider's billed cost when reported, else the catalog estimate. */
    total: number;
    /** True when `total` is the cost the provider billed. */
    totalFromProvider?: boolean;
  };
}

/**
 * Why an assistant message ended. `"pending"` appears only on partial (streaming) messages. `"deferred"` is treated
 * like `"stop"`; `"error"` and `"aborted"` end the run (hard exit).
 */
export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";

/**
 * Reasoning effort of a request. `"off"` disables reasoning; `"xhigh"` and `"max"` exist only for some model
 * families (budget-based providers treat them as `"high"`).
 */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** pi-ai's name for {@link ThinkingLevel} (the levels including `"off"`). */
export type ModelThinkingLevel = ThinkingLevel;

/** The levels a stream request's `reasoning` option takes: {@link ThinkingLevel} without `"off"` (`undefined` = off). */
export type ReasoningLevel = Exclude<ThinkingLevel, "off">;

/** A durable handle for a response the provider finishes asynchronously (`stopReason: "deferred"`). */
export interface DeferredHandle {
  provider: string;
  modelId: string;
  api: string;
  /** Provider token, such as a response id. */
  id: string;
  expiresAt?: number;
  pollAfterMs?: number;
  /** Provider data needed to rebuild the final message. */
  data?: JsonValue;
}

/** A problem a provider recorded while producing an assistant message. */
export interface AssistantMessageDiagnostic {
  type: string;
  timestamp: number;
  error?: { name?: string; message: string; stack?: string; code?: string | number };
  details?: JsonObject;
}

/**
 * System instructions and tool declarations at one point of the transcript. The first system message is the system
 * prompt; later ones add instructions (`content`), replace or remove named `sections` (`null` removes), and change the
 * tool set (`toolsAdded`, `toolsRemoved`). Replaying every system message in order yields the current prompt and tools.
 */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  /** Named prompt sections, rendered after `content`; later messages replace them by name, `null` removes one. */
  sections?: Record<string, string | null>;
  /** Complete definitions of tools that become available here. */
  toolsAdded?: Tool[];
  /** Tools that stop being available here. */
  toolsRemoved?: ToolReference[];
  /** Unix milliseconds. */
  timestamp: number;
}

/** Input from the user. */
export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  /** Unix milliseconds. */
  timestamp: number;
}

/** A model response. */
export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: Api;
  provider: ProviderId;
  /** The requested model id. */
  model: string;
  /** The concrete model the provider reported. */
  responseModel?: string;
  /** The provider's response or message id. */
  responseId?: string;
  /** The provider-native effort level used. */
  providerThinkingLevel?: string;
  /** The level the agent loop requested for this response (set by the loop on the final message). */
  thinkingLevel?: ThinkingLevel;
  diagnostics?: AssistantMessageDiagnostic[];
  usage: Usage;
  stopReason: StopReason;
  deferred?: DeferredHandle;
  /** Set when `stopReason` is `"error"` or `"aborted"`. */
  errorMessage?: string;
  /** The provider's own stop reason. */
  rawStopReason?: string;
  /** Whether the provider said the model ended its turn (informational only). */
  endTurn?: boolean;
  /** Unix milliseconds when the request started. */
  timestamp: number;
  /** Monotonic milliseconds from the stream's creation to the response's end (set by {@link AssistantMessageEventStream}). */
  durationMs?: number;
}

/** A call a tool made to another tool while it ran (recorded by some hosts; never set by this loop). */
export interface NestedToolCallRecord {
  id: string;
  name: string;
  arguments?: JsonObject;
  argumentsBytes?: number;
  status: "ok" | "error" | "unfinished";
  durationMs?: number;
  error?: string;
}

/** Bounded record of the nested calls a tool made. */
export interface NestedToolCalls {
  calls: NestedToolCallRecord[];
  complete: boolean;
}

/**
 * The result of one tool call as the model sees it. `structuredContent` and `terminate` of an
 * {@link AgentToolResult} never reach this message.
 */
export interface ToolResultMessage<TDetails = JsonValue> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  /** Usage of the tool's own work (not main-context accounting). */
  usage?: Usage;
  nestedCalls?: NestedToolCalls;
  isError: boolean;
  /** Monotonic milliseconds `execute()` took; absent when the tool did not run. */
  durationMs?: number;
  /** Unix milliseconds. */
  timestamp: number;
}

/** A message a provider understands. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;


// ============================================================================================================
// Models, providers and stream options
// ============================================================================================================

/** The chat APIs pi-ai knows. Only {@link BuiltinApi} are built in here. */
export type KnownApi =
  | "openai-completions"
  | "mistral-conversations"
  | "openai-responses"
  | "azure-openai-responses"
  | "openai-codex-responses"
  | "anthropic-messages"
  | "bedrock-converse-stream"
  | "google-generative-ai"
  | "google-vertex"
  | "pi-messages";

/** A wire-format name: a known one (with completion in editors) or any other string. */
export type Api = KnownApi | (string & {});

/** The provider ids pi-ai knows. */
export type KnownProvider =
  | "amazon-bedrock"
  | "ant-ling"
  | "anthropic"
  | "google"
  | "google-vertex"
  | "openai"
  | "azure"
  | "openai-codex"
  | "radius"
  | "typesafe"
  | "nvidia"
  | "deepseek"
  | "github-copilot"
  | "xai"
  | "groq"
  | "cerebras"
  | "openrouter"
  | "vercel-ai-gateway"
  | "zai"
  | "zai-coding-cn"
  | "mistral"
  | "minimax"
  | "minimax-cn"
  | "moonshotai"
  | "moonshotai-cn"
  | "huggingface"
  | "fireworks"
  | "together"
  | "baseten"
  | "opencode"
  | "opencode-go"
  | "kimi-coding"
  | "meta"
  | "cloudflare-workers-ai"
  | "cloudflare-ai-gateway"
  | "qwen-token-plan"
  | "qwen-token-plan-cn"
  | "qwen-token-plan-individual"
  | "qwen-token-plan-individual-cn"
  | "xiaomi"
  | "xiaomi-token-plan-cn"
  | "xiaomi-token-plan-ams"
  | "xiaomi-token-plan-sgp";

/** A provider id (any string; {@link KnownProvider} lists pi-ai's). */
export type ProviderId = KnownProvider | string;

/** Input kinds a model accepts. */
export type ModelInputModality = "text" | "image";

/** Prices in USD per million tokens. */
export interface ModelCostRates {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Prices that apply once a request's input exceeds `inputTokensAbove` tokens. */
export interface ModelCostTier extends ModelCostRates {
  inputTokensAbove: number;
}

/** A model's prices (USD per million tokens), optionally tiered by input size. */
export interface ModelCost extends ModelCostRates {
  tiers?: ModelCostTier[];
}

/** Input limits a provider enforces. */
export interface ModelInputLimits {
  maxRequestBytes?: number;
  images?: {
    resize?: { maxWidth?: number; maxHeight?: number; maxBytes?: number; jpegQuality?: number };
    maxPerMessage?: number;
    maxPerRequest?: number;
  };
}

/** Prompt-cache lifetimes in seconds per retention tier. */
export interface ModelPromptCache {
  short?: number;
  long?: number;
}

/** Provider-specific effort names per thinking level; `null` marks a level the model does not support. */
export type ThinkingLevelMap = Partial<Record<ThinkingLevel, string | null>>;

/** Extra request-body parameters (for example `top_p`), merged into the body as they are. */
export type SamplingParams = Record<string, unknown>;

/**
 * Compatibility flags of a model's API (pi-ai's per-API `compat` objects are accepted as they are). The built-in
 * `openai-completions` and `openai-responses` providers read the flags named here; other keys are ignored.
 */
export interface ModelCompat {
  [flag: string]: any;
  /** Send the system prompt with role `developer` (reasoning models). */
  supportsDeveloperRole?: boolean;
  /** Send `reasoning_effort`. */
  supportsReasoningEffort?: boolean;
  /** Ask for usage in the stream (`stream_options.include_usage`). */
  supportsUsageInStreaming?: boolean;
  /** Whether the server sends `finish_reason`. */
  supportsFinishReason?: boolean;
  /** Body field for the output-token limit. */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
  /** Add `name` to tool-result messages. */
  requiresToolResultName?: boolean;
  /** Send `""` instead of `null` for assistant messages without text. */
  requiresNonNullAssistantContent?: boolean;
  /** Send joined thinking as `reasoning_content` on assistant messages. */
  requiresReasoningContentOnAssistantMessages?: boolean;
}

/**
 * A chat model: where and how to send requests. Literals written for pi-ai's `Model` type-check as they are. The loop
 * reads `api`, `provider` and `id`; the built-in providers also read what their wire format needs (`baseUrl`,
 * `headers`, `reasoning`, `thinkingLevelMap`, `maxTokens`, `contextWindow`, `cost`, `input`, sampling parameters and
 * `compat`).
 */
export interface Model<TApi extends Api = Api> {
  id: string;
  /** Display name. */
  name: string;
  /** Wire format; selects the built-in provider (see {@link BUILTIN_APIS}). */
  api: TApi;
  provider: ProviderId;
  /** Endpoint base; empty for the API's default. */
  baseUrl: string;
  input: ModelInputModality[];
  inputLimits?: ModelInputLimits;
  cost: ModelCost;
  /** Headers sent with every request to this model. */
  headers?: Record<string, string>;
  /** Chat is the only model type this library uses. */
  type?: "chat";
  /** Whether the model reasons (thinking levels apply only then). */
  reasoning: boolean;
  thinkingLevelMap?: ThinkingLevelMap;
  promptCache?: ModelPromptCache;
  /** Context window in tokens (0 = unknown). */
  contextWindow: number;
  /** Default output-token limit (0 = unknown). */
  maxTokens: number;
  /** Default sampling parameters of the model; request values override them per key. */
  samplingParams?: SamplingParams;
  /** Sampling parameters per effective thinking level. */
  samplingParamsByThinkingLevel?: Partial<Record<ThinkingLevel, SamplingParams>>;
  compat?: ModelCompat;
}

/** How a request identifies the app: its `User-Agent` and provider attribution headers. */
export interface ClientIdentity {
  /** `"detailed"` (default), `"short"`, or a custom value. */
  userAgent?: "short" | "detailed" | { custom: string };
  /** Attribution headers; `null` turns them off, also over a merged identity. */
  attribution?: { name: string; url: string; categories?: string[] } | null;
  /** Version shown in the detailed `User-Agent`. */
  version?: string;
}

/** Per-level thinking token budgets for budget-based providers (defaults 1024 / 2048 / 8192 / 16384). */
export interface ThinkingBudgets {
  minimal?: number;
  low?: number;
  medium?: number;
  high?: number;
}

/** Preferred transport. Only `"sse"` exists here; other values are accepted and ignored. */
export type Transport = "sse" | "websocket" | "websocket-cached" | "auto";

/** Prompt-cache retention (`"short"` by default; `"none"` sends no cache markers). */
export type CacheRetention = "none" | "short" | "long";

/** Provider-neutral tool choice. */
export type ToolChoice = "auto" | "none";

/** Extra request headers; `null` removes a default header of the same name. */
export type ProviderHeaders = Record<string, string | null>;

/** A `fetch` implementation. */
export type FetchFunction = typeof globalThis.fetch;

/** The status and headers of a provider's HTTP response, as given to `onResponse`. */
export interface ProviderResponse {
  status: number;
  headers: Record<string, string>;
}

/** Request options understood by stream functions (pi-ai's `StreamOptions`). */
export interface StreamOptions {
  /** Aborts the request. The loop always passes its own run signal here. */
  signal?: AbortSignal;
  /** Parent telemetry span (opaque to this library). */
  telemetry?: any;
  /** API key; built-in providers otherwise read `env` and the environment. */
  apiKey?: string;
  /** Replaces `globalThis.fetch` for provider requests. */
  fetch?: FetchFunction;
  /** Environment overrides (e.g. `OPENAI_API_KEY`), taking precedence over the process environment. */
  env?: Record<string, string>;
  /** Inspects the request body before it is sent; a value other than `undefined` replaces it. */
  onPayload?: (payload: unknown, model: Model<Api>) => unknown | undefined | Promise<unknown | undefined>;
  /** Called when the response headers arrived, before the body is read. */
  onResponse?: (response: ProviderResponse, model: Model<Api>) => void | Promise<void>;
  /** Observes every parsed provider event before it is mapped (read-only). */
  onProviderStreamEvent?: (data: unknown, model: Model<Api>) => void | Promise<void>;
  headers?: ProviderHeaders;
  /** Ignored by the built-in providers; the loop sends `DEFAULT_AGENT_IDENTITY` overlaid with this. */
  identity?: ClientIdentity;
  /** Bound on the wait for response headers, in milliseconds (not a tool timeout). */
  timeoutMs?: number;
  /** Retries before any event (default 2). */
  maxRetries?: number;
  /** Longest server-requested retry delay that is still waited for (default 60000; 0 = no cap). */
  maxRetryDelayMs?: number;
  /**
   * Built-in providers: the most bytes one server-sent-events line, or one event's data, may hold
   * (default 67108864, 64 MiB; a number below 1 or not a number means the default). A larger event
   * ends the request with the error `Provider stream event exceeds the limit of <n> bytes
   * (maxStreamEventBytes)`; a buffer the WebAssembly memory cannot provide ends it with
   * `Out of memory reading the provider stream: …`. New in agent-loop-wasm (issue 13).
   */
  maxStreamEventBytes?: number;
  temperature?: number;
  /** Extra body parameters, merged over `Model.samplingParams` per key. */
  samplingParams?: SamplingParams;
  /** Output-token limit (defaults to `Model.maxTokens`). */
  maxTokens?: number;
  transport?: Transport;
  cacheRetention?: CacheRetention;
  /** Session id for cache-aware routing (`prompt_cache_key` on OpenAI). */
  sessionId?: string;
  /** Do not use or record server-side continuation state (ignored here). */
  disableContinuation?: boolean;
  /** WebSocket connect timeout (ignored here). */
  websocketConnectTimeoutMs?: number;
  /** Provider metadata (ignored by the built-in providers). */
  metadata?: Record<string, unknown>;
}

/** Options of a simple (provider-neutral) stream request: pi-ai's `SimpleStreamOptions`. */
export interface SimpleStreamOptions extends StreamOptions {
  toolChoice?: ToolChoice;
  /** Requested reasoning level; `undefined` means off. */
  reasoning?: ReasoningLevel;
  /** Ask for a durable asynchronous response (ignored by the built-in providers). */
  deferred?: boolean | { window?: "15m" | "1h" | "24h" };
  thinkingBudgets?: ThinkingBudgets;
}

/**
 * The request context a stream function receives. System messages carry the prompt and tool declarations; there is
 * no `systemPrompt` or `tools` field. (pi-ai's branded `TranscriptContext` is accepted wherever this is.)
 */
export type TranscriptContext = { messages: Message[] };
