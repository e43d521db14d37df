// `agent-loop-wasm/otel` (issue 32): OpenTelemetry spans for agent runs, by the GenAI semantic conventions as
// published in @opentelemetry/semantic-conventions 1.45.0 (`gen_ai.*`, incubating). It owns the spans only: it reads
// the run's events and wraps the stream function and `beforeToolCall` of a run, and never changes what a run does.
// Nothing here imports the main entry (a config is recognised through a global registry the main entry reads), so
// the main entry neither grows nor loads @opentelemetry/api (an optional peer dependency) for users who do not trace.
// Spec: docs/SPEC.md §11 (O-11.1, O-11.2).
import { context as otelContext, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { codedError } from "./errors.js";

/** Where `withTelemetry` registers traced configs; pkg-template/api.js reads the same symbol. */
const RUN_HOOKS = Symbol.for("agent-loop-wasm.runHooks");
const TRACER_NAME = "agent-loop-wasm";

function runHooks() {
  let hooks = globalThis[RUN_HOOKS];
  if (hooks === undefined) {
    hooks = new WeakMap();
    Object.defineProperty(globalThis, RUN_HOOKS, { value: hooks, configurable: false, enumerable: false, writable: false });
  }
  return hooks;
}

/** `args` object a tool's `execute` receives -> the OTel Context of its execute_tool span. */
const toolContexts = new WeakMap();
/** Agent -> its telemetry state (the run in progress). */
const tracedAgents = new WeakMap();

/** model.provider -> gen_ai.provider.name where the conventions name the provider differently. */
const PROVIDER_NAMES = {
  google: "gcp.gemini",
  "google-gemini-cli": "gcp.gemini",
  "google-vertex": "gcp.vertex_ai",
  "amazon-bedrock": "aws.bedrock",
  "azure-openai-responses": "azure.ai.openai",
  mistral: "mistral_ai",
  xai: "x_ai",
};

/** Our stopReason -> a `gen_ai.response.finish_reasons` value (the conventions' output-message finish reasons). */
const FINISH_REASONS = { stop: "stop", length: "length", toolUse: "tool_call", error: "error", aborted: "error", deferred: "stop" };

function read(object, key) {
  try {
    return object !== null && (typeof object === "object" || typeof object === "function") ? object[key] : undefined;
  } catch {
    return undefined;
  }
}

function json(value) {
  try {
    const text = JSON.stringify(value);
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}

function isThenable(value) {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof read(value, "then") === "function";
}

/** One content block as a `parts` entry of the conventions' message schema (images: their type only, never data). */
function part(block) {
  switch (read(block, "type")) {
    case "text":
      return { type: "text", content: read(block, "text") };
    case "thinking":
      return { type: "reasoning", content: read(block, "thinking") };
    case "toolCall":
      return { type: "tool_call", id: read(block, "id"), name: read(block, "name"), arguments: read(block, "arguments") };
    case "image":
      return { type: "blob", modality: "image", mime_type: read(block, "mimeType") };
    default:
      return { type: String(read(block, "type")) };
  }
}

function parts(content) {
  if (typeof content === "string") return [{ type: "text", content }];
  return Array.isArray(content) ? content.map(part) : [];
}

/** A transcript message as the conventions' `gen_ai.input.messages` / `gen_ai.output.messages` entry. */
function genAiMessage(message) {
  const role = read(message, "role");
  if (role === "toolResult") {
    const text = parts(read(message, "content")).map((p) => p.content ?? "").join("");
    return { role: "tool", parts: [{ type: "tool_call_response", id: read(message, "toolCallId"), response: text }] };
  }
  const out = { role, parts: parts(read(message, "content")) };
  if (role === "assistant") out.finish_reason = FINISH_REASONS[read(message, "stopReason")] ?? read(message, "stopReason");
  return out;
}

function firstText(result) {
  const content = read(result, "content");
  if (!Array.isArray(content)) return "";
  const block = content.find((b) => read(b, "type") === "text");
  return block === undefined ? "" : String(read(block, "text"));
}

/** The `error.type` of a tool call that ended with an error, from the texts the loop itself writes (SPEC §4, D3). */
function toolErrorType(text, blocked) {
  if (blocked) return "blocked";
  if (text === "Operation aborted") return "aborted";
  if (/^Tool ".*" timed out after [0-9.e+-]+ seconds$/s.test(text)) return "timeout";
  if (/^Tool call ".*" was denied/s.test(text)) return "denied";
  if (/^Tool \S+ not found$/.test(text)) return "tool_not_found";
  if (/^(Validation failed for tool|Invalid arguments for tool) /.test(text)) return "invalid_arguments";
  if (/^Tool call ".*" was not executed: the response hit the output token limit/s.test(text)) return "truncated";
  if (/^Tool call ".*" was interrupted and not retried$/s.test(text)) return "interrupted";
  return "tool_error";
}

function messageErrorType(message) {
  const stop = read(message, "stopReason");
  if (stop === "aborted") return "aborted";
  if (stop !== "error") return undefined;
  return /^Stream idle timeout: /.test(String(read(message, "errorMessage"))) ? "timeout" : "error";
}

function linkTo(resumeOf) {
  const spanContext = read(resumeOf, "spanContext") !== undefined && typeof resumeOf.spanContext === "function" ? resumeOf.spanContext() : resumeOf;
  if (typeof read(spanContext, "traceId") !== "string" || typeof read(spanContext, "spanId") !== "string") return undefined;
  return { context: spanContext, attributes: { "agent_loop.link": "resumes" } };
}

/** The spans of one run: `invoke_agent` (the run), `chat {model}` (each model request), `execute_tool {name}`. */
class RunTrace {
  constructor(settings, kind, parent, signal) {
    this.s = settings;
    this.kind = kind;
    this.parent = parent;
    this.signal = signal;
    this.span = undefined;
    this.ctx = undefined;
    this.chat = undefined;
    /** toolCallId -> { span, ctx, blocked } of the calls started and not ended. */
    this.tools = new Map();
    this.turns = 0;
    this.requests = 0;
    this.toolCalls = 0;
    this.last = undefined;
    this.usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
    /** Issue 45: the compaction under way: { span, ctx }. */
    this.compaction = undefined;
  }

  see(event) {
    switch (event.type) {
      case "agent_start":
        this.start();
        break;
      case "turn_start":
        this.turns += 1;
        this.span?.addEvent("agent_loop.turn.start", { "agent_loop.turn": this.turns });
        break;
      case "turn_end":
        this.span?.addEvent("agent_loop.turn.end", {
          "agent_loop.turn": this.turns,
          "agent_loop.turn.tool_results": Array.isArray(event.toolResults) ? event.toolResults.length : 0,
        });
        break;
      case "message_start":
        if (this.chat !== undefined && this.chat.first === undefined && read(event.message, "role") === "assistant") this.firstChunk();
        break;
      case "message_end":
        if (read(event.message, "role") === "assistant") {
          this.last = event.message;
          this.endChat(event.message);
        }
        break;
      case "compaction_start":
        this.startCompaction(event);
        break;
      case "compaction_end":
        this.endCompaction(event);
        break;
      case "tool_execution_start":
        this.startTool(event);
        break;
      case "tool_approval_request":
        this.toolApprovalRequest(event);
        break;
      case "tool_execution_end":
        this.endTool(event);
        break;
      case "agent_end":
        this.end(event);
        break;
    }
  }

  aborted() {
    try {
      return this.signal !== undefined && this.signal !== null && this.signal.aborted === true;
    } catch {
      return false; // a broken signal: not aborted
    }
  }

  start() {
    if (this.span !== undefined) return;
    const s = this.s;
    const attributes = { "gen_ai.operation.name": "invoke_agent", "agent_loop.run.kind": this.kind };
    if (s.functionId !== undefined) attributes["gen_ai.agent.name"] = s.functionId;
    if (s.conversationId !== undefined) attributes["gen_ai.conversation.id"] = s.conversationId;
    for (const [key, value] of s.metadata) attributes[`agent_loop.metadata.${key}`] = value;
    const options = { kind: SpanKind.INTERNAL, attributes };
    const link = this.kind === "resume" && s.resumeOf !== undefined ? linkTo(s.resumeOf) : undefined;
    if (link !== undefined) options.links = [link];
    const name = s.functionId === undefined ? "invoke_agent" : `invoke_agent ${s.functionId}`;
    this.span = s.tracer.startSpan(name, options, this.parent);
    this.ctx = trace.setSpan(this.parent, this.span);
  }

  /** Issue 45: a compaction's span under the run's; its summary request's `chat` span goes under it. */
  startCompaction(event) {
    if (this.span === undefined) return;
    if (this.chat !== undefined) this.endChat(undefined);
    const attributes = { "agent_loop.compaction.reason": String(event.reason) };
    if (typeof event.tokensBefore === "number") attributes["agent_loop.compaction.tokens_before"] = event.tokensBefore;
    if (typeof event.messages === "number") attributes["agent_loop.compaction.messages"] = event.messages;
    const span = this.s.tracer.startSpan("compaction", { kind: SpanKind.INTERNAL, attributes }, this.ctx);
    this.compaction = { span, ctx: trace.setSpan(this.ctx, span) };
  }

  /** The summary request's `chat` span ends with the entry's usage (its reply is no message of the transcript). */
  endCompaction(event) {
    const compaction = this.compaction;
    if (compaction === undefined) return;
    this.compaction = undefined;
    const failed = typeof event.errorMessage === "string";
    if (this.chat !== undefined) {
      const usage = read(event.message, "usage");
      this.endChat({ stopReason: failed ? "error" : "stop", errorMessage: event.errorMessage, ...(usage === undefined ? {} : { usage }) });
    }
    const span = compaction.span;
    if (typeof event.tokensAfter === "number") span.setAttribute("agent_loop.compaction.tokens_after", event.tokensAfter);
    if (failed) {
      span.setAttribute("error.type", event.errorMessage === "Request was aborted" ? "aborted" : "error");
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.s.recordOutputs ? event.errorMessage : "compaction failed" });
    }
    span.end();
  }

  /** The stream function of this run: the same function, called the same way, after opening a `chat` span. */
  wrapStream(streamFn) {
    const run = this;
    return function tracedStreamFn(model, context, options) {
      run.startChat(model, context, options);
      return streamFn(model, context, options);
    };
  }

  /** `beforeToolCall` of this run: the caller's hook (or none), noting what the span needs (blocked, approved, args). */
  wrapBeforeToolCall(hook) {
    if (hook !== undefined && hook !== null && typeof hook !== "function") return hook; // the loop names the bad value
    const run = this;
    return function tracedBeforeToolCall(ctx, signal) {
      return run.callBeforeToolCall(hook, this, ctx, signal);
    };
  }

  /** Calls the caller's `beforeToolCall` (if any) as the loop would, with `this` as the loop gave it. */
  callBeforeToolCall(hook, self, ctx, signal) {
    this.beforeToolCall(ctx);
    if (typeof hook !== "function") return undefined;
    const result = hook.call(self, ctx, signal);
    if (isThenable(result)) {
      return Promise.resolve(result).then((value) => {
        this.afterBeforeToolCall(ctx, value);
        return value;
      });
    }
    this.afterBeforeToolCall(ctx, result);
    return result;
  }

  startChat(model, context, options) {
    if (this.span === undefined) return;
    if (this.chat !== undefined) this.endChat(undefined);
    const s = this.s;
    const id = read(model, "id");
    const provider = read(model, "provider");
    const providerName = PROVIDER_NAMES[provider] ?? provider;
    const attributes = { "gen_ai.operation.name": "chat" };
    if (typeof providerName === "string") {
      attributes["gen_ai.provider.name"] = providerName;
      attributes["gen_ai.system"] = providerName;
    }
    if (typeof id === "string") attributes["gen_ai.request.model"] = id;
    const api = read(model, "api");
    if (typeof api === "string") attributes["agent_loop.api"] = api;
    const maxTokens = read(options, "maxTokens");
    if (typeof maxTokens === "number") attributes["gen_ai.request.max_tokens"] = maxTokens;
    const temperature = read(options, "temperature");
    if (typeof temperature === "number") attributes["gen_ai.request.temperature"] = temperature;
    const sessionId = read(options, "sessionId");
    if (typeof sessionId === "string") attributes["gen_ai.conversation.id"] = sessionId;
    if (s.recordInputs) {
      const messages = read(context, "messages");
      const text = Array.isArray(messages) ? json(messages.map(genAiMessage)) : undefined;
      if (text !== undefined) attributes["gen_ai.input.messages"] = text;
    }
    this.requests += 1;
    const parent = this.compaction?.ctx ?? this.ctx;
    const span = s.tracer.startSpan(typeof id === "string" ? `chat ${id}` : "chat", { kind: SpanKind.CLIENT, attributes }, parent);
    this.chat = { span, started: performance.now(), first: undefined };
  }

  firstChunk() {
    const chat = this.chat;
    chat.first = performance.now();
    const seconds = (chat.first - chat.started) / 1000;
    chat.span.setAttribute("gen_ai.response.time_to_first_chunk", seconds);
    chat.span.addEvent("gen_ai.first_chunk", { "gen_ai.response.time_to_first_chunk": seconds });
  }

  endChat(message) {
    const chat = this.chat;
    if (chat === undefined) return;
    this.chat = undefined;
    const span = chat.span;
    if (message === undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: "no response" });
      span.setAttribute("error.type", "error");
      span.end();
      return;
    }
    const responseModel = read(message, "responseModel") ?? read(message, "model");
    if (typeof responseModel === "string") span.setAttribute("gen_ai.response.model", responseModel);
    const responseId = read(message, "responseId");
    if (typeof responseId === "string") span.setAttribute("gen_ai.response.id", responseId);
    const stop = read(message, "stopReason");
    span.setAttribute("gen_ai.response.finish_reasons", [FINISH_REASONS[stop] ?? String(stop)]);
    const usage = read(message, "usage");
    if (usage !== undefined) {
      const n = (key) => {
        const v = read(usage, key);
        return typeof v === "number" && Number.isFinite(v) ? v : 0;
      };
      const input = n("input") + n("cacheRead") + n("cacheWrite");
      span.setAttribute("gen_ai.usage.input_tokens", input);
      span.setAttribute("gen_ai.usage.output_tokens", n("output"));
      span.setAttribute("gen_ai.usage.cache_read.input_tokens", n("cacheRead"));
      span.setAttribute("gen_ai.usage.cache_creation.input_tokens", n("cacheWrite"));
      if (n("reasoning") > 0) span.setAttribute("gen_ai.usage.reasoning.output_tokens", n("reasoning"));
      const cost = read(read(usage, "cost"), "total");
      if (typeof cost === "number" && Number.isFinite(cost)) span.setAttribute("agent_loop.usage.cost_usd", cost);
      this.usage.input += input;
      this.usage.output += n("output");
      this.usage.cacheRead += n("cacheRead");
      this.usage.cacheWrite += n("cacheWrite");
      if (typeof cost === "number" && Number.isFinite(cost)) this.usage.cost += cost;
    }
    if (this.s.recordOutputs) {
      const text = json([genAiMessage(message)]);
      if (text !== undefined) span.setAttribute("gen_ai.output.messages", text);
    }
    const errorType = messageErrorType(message);
    if (errorType !== undefined) {
      span.setAttribute("error.type", errorType);
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.s.recordOutputs ? String(read(message, "errorMessage") ?? errorType) : errorType });
    }
    span.end();
  }

  startTool(event) {
    if (this.span === undefined) return;
    const s = this.s;
    const id = event.toolCallId;
    const previous = this.tools.get(id);
    if (previous !== undefined) previous.span.end();
    const attributes = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": event.toolName,
      "gen_ai.tool.call.id": id,
      "gen_ai.tool.type": "function",
    };
    if (s.recordInputs) {
      const text = json(event.args);
      if (text !== undefined) attributes["gen_ai.tool.call.arguments"] = text;
    }
    this.toolCalls += 1;
    const span = s.tracer.startSpan(`execute_tool ${event.toolName}`, { kind: SpanKind.INTERNAL, attributes }, this.ctx);
    this.tools.set(id, { span, ctx: undefined, blocked: false });
  }

  /** The Context with the call's span, made once per call (only when a hook or tool asks for it). */
  toolContext(entry) {
    if (entry.ctx === undefined) entry.ctx = trace.setSpan(this.ctx, entry.span);
    return entry.ctx;
  }

  beforeToolCall(ctx) {
    const entry = this.tools.get(read(read(ctx, "toolCall"), "id"));
    if (entry === undefined) return;
    const args = read(ctx, "args");
    if (args !== null && (typeof args === "object" || typeof args === "function")) toolContexts.set(args, this.toolContext(entry));
    if (read(ctx, "approved") === true) entry.span.setAttribute("agent_loop.tool.approval", "approved");
  }

  afterBeforeToolCall(ctx, result) {
    const entry = this.tools.get(read(read(ctx, "toolCall"), "id"));
    if (entry !== undefined && result !== null && typeof result === "object" && read(result, "block")) entry.blocked = true;
  }

  toolApprovalRequest(event) {
    const entry = this.tools.get(event.toolCallId);
    if (entry === undefined) return;
    entry.span.setAttribute("agent_loop.tool.approval", "pending");
    entry.span.addEvent("agent_loop.tool.approval_request");
  }

  endTool(event) {
    let entry = this.tools.get(event.toolCallId);
    if (entry === undefined) {
      // an end without its start in this run (e.g. a denied call of a continuation whose start the run did not see)
      this.startTool(event);
      entry = this.tools.get(event.toolCallId);
      if (entry === undefined) return;
    }
    this.tools.delete(event.toolCallId);
    const span = entry.span;
    if (typeof event.durationMs === "number") span.setAttribute("agent_loop.tool.execute_ms", event.durationMs);
    if (this.s.recordOutputs) {
      const text = json(event.result);
      if (text !== undefined) span.setAttribute("gen_ai.tool.call.result", text);
    }
    if (event.isError === true) {
      const text = firstText(event.result);
      let errorType = toolErrorType(text, entry.blocked);
      // A call that failed once the run was aborted (its own rejection, e.g. an AbortError): the abort ended it.
      if (errorType === "tool_error" && this.aborted()) errorType = "aborted";
      if (errorType === "denied") span.setAttribute("agent_loop.tool.approval", "denied");
      span.setAttribute("error.type", errorType);
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.s.recordOutputs ? text : errorType });
    }
    span.end();
  }

  /** `runAgentLoop` rejected because `emit` failed (L-3.10.4): no `agent_end` comes, so everything open ends here. */
  fail() {
    if (this.span === undefined) return;
    for (const [, entry] of this.tools) failSpan(entry.span, "emit_failed");
    this.tools.clear();
    if (this.chat !== undefined) {
      failSpan(this.chat.span, "emit_failed");
      this.chat = undefined;
    }
    if (this.compaction !== undefined) {
      failSpan(this.compaction.span, "emit_failed");
      this.compaction = undefined;
    }
    this.span.setAttribute("agent_loop.run.outcome", "error");
    failSpan(this.span, "emit_failed");
    this.span = undefined;
  }

  end(event) {
    if (this.span === undefined) return;
    const span = this.span;
    const approvals = read(event, "approvals");
    const pending = Array.isArray(read(approvals, "requests")) ? approvals.requests.length : 0;
    // Calls waiting for a person end with the run: not an error, the pause is the outcome (issue 30).
    for (const [, entry] of this.tools) entry.span.end();
    this.tools.clear();
    if (this.chat !== undefined) this.endChat(undefined);
    if (this.compaction !== undefined) this.endCompaction({ errorMessage: "no end" });
    const aborted = this.aborted();
    const lastError = this.last === undefined ? undefined : messageErrorType(this.last);
    const errorType = aborted ? "aborted" : lastError;
    // A run a budget stopped (issue 32's limits): a clean end, not an error; its attributes say which limit.
    const limit = read(event, "limitReached");
    const limited = limit !== null && typeof limit === "object" && typeof read(limit, "limit") === "string";
    const outcome = pending > 0 ? "paused" : errorType === "aborted" ? "aborted" : errorType !== undefined ? "error" : limited ? "limit" : "completed";
    span.setAttribute("agent_loop.run.outcome", outcome);
    if (limited) {
      span.setAttribute("agent_loop.run.limit", limit.limit);
      for (const key of ["scope", "max", "value"]) {
        const v = read(limit, key);
        if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) span.setAttribute(`agent_loop.run.limit.${key}`, v);
      }
    }
    span.setAttribute("agent_loop.run.turns", this.turns);
    span.setAttribute("agent_loop.run.model_requests", this.requests);
    span.setAttribute("agent_loop.run.tool_calls", this.toolCalls);
    if (pending > 0) span.setAttribute("agent_loop.run.pending_approvals", pending);
    span.setAttribute("gen_ai.usage.input_tokens", this.usage.input);
    span.setAttribute("gen_ai.usage.output_tokens", this.usage.output);
    span.setAttribute("gen_ai.usage.cache_read.input_tokens", this.usage.cacheRead);
    span.setAttribute("gen_ai.usage.cache_creation.input_tokens", this.usage.cacheWrite);
    span.setAttribute("agent_loop.usage.cost_usd", this.usage.cost);
    if (errorType !== undefined && pending === 0) {
      span.setAttribute("error.type", errorType);
      const text = this.s.recordOutputs && !aborted ? read(this.last, "errorMessage") : undefined;
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof text === "string" ? text : errorType });
    }
    span.end();
    this.span = undefined;
  }
}

function failSpan(span, errorType) {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
  span.end();
}

function settingsOf(options, fn) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== "object") throw codedError("INVALID_ARGUMENT", `${fn}: telemetry must be an object ({ tracer, recordInputs, … })`);
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  if (tracer === null || typeof tracer !== "object" || typeof tracer.startSpan !== "function") {
    throw codedError("INVALID_ARGUMENT", `${fn}: telemetry.tracer must be an OpenTelemetry Tracer (trace.getTracer(name))`);
  }
  const metadata = [];
  if (options.metadata !== undefined && options.metadata !== null) {
    if (typeof options.metadata !== "object") throw codedError("INVALID_ARGUMENT", `${fn}: telemetry.metadata must be an object of attribute values`);
    for (const [key, value] of Object.entries(options.metadata)) {
      if (value !== undefined && value !== null) metadata.push([key, value]);
    }
  }
  if (options.functionId !== undefined && typeof options.functionId !== "string") {
    throw codedError("INVALID_ARGUMENT", `${fn}: telemetry.functionId must be a string`);
  }
  return {
    tracer,
    recordInputs: options.recordInputs === true,
    recordOutputs: options.recordOutputs === true,
    metadata,
    functionId: options.functionId,
    conversationId: typeof options.conversationId === "string" ? options.conversationId : undefined,
    resumeOf: options.resumeOf,
  };
}

function isAgent(value) {
  return value !== null && typeof value === "object" && typeof value.subscribe === "function" && typeof value.prompt === "function" && "streamFunction" in value;
}

/** Replaces the agent's field `key` by an accessor that reads back `wrap(value)` of the value last assigned. */
function wrapField(agent, key, wrap) {
  let wrapped = wrap(agent[key]);
  Object.defineProperty(agent, key, {
    configurable: true,
    enumerable: true,
    get: () => wrapped,
    set: (next) => {
      wrapped = wrap(next);
    },
  });
}

function traceAgent(agent, settings) {
  if (tracedAgents.has(agent)) throw codedError("INVALID_ARGUMENT", "withTelemetry: this agent is already traced");
  const state = { run: undefined, kind: "prompt" };
  tracedAgents.set(agent, state);
  // First listener of the agent: its spans open before the caller's listeners run (each event is a barrier).
  agent.subscribe((event) => {
    if (event.type === "agent_start") {
      state.run = new RunTrace(settings, state.kind, otelContext.active(), agent.signal);
      state.kind = "prompt";
    }
    state.run?.see(event);
    if (event.type === "agent_end") state.run = undefined;
  });
  wrapField(agent, "streamFunction", (fn) =>
    typeof fn !== "function"
      ? fn
      : function tracedStreamFn(model, context, options) {
          state.run?.startChat(model, context, options);
          return fn(model, context, options);
        },
  );
  wrapField(agent, "beforeToolCall", (hook) => {
    if (hook !== undefined && hook !== null && typeof hook !== "function") return hook;
    return function tracedBeforeToolCall(ctx, signal) {
      const run = state.run;
      if (run === undefined) return typeof hook === "function" ? hook.call(this, ctx, signal) : undefined;
      return run.callBeforeToolCall(hook, this, ctx, signal);
    };
  });
  // The kind of the next run, for `agent_loop.run.kind` (and the link of a resumed run).
  for (const [method, kind] of [["prompt", "prompt"], ["continue", "continue"], ["resume", "resume"], ["approve", "approvals"], ["deny", "approvals"]]) {
    const original = agent[method];
    Object.defineProperty(agent, method, {
      configurable: true,
      writable: true,
      enumerable: false,
      value: function (...args) {
        state.kind = kind;
        return original.apply(this, args);
      },
    });
  }
  return agent;
}

/**
 * Traces runs with OpenTelemetry. Given a loop config (for `agentLoop`, `agentLoopContinue`, `runAgentLoop`,
 * `runAgentLoopContinue`) or Agent options (for `new Agent`, `Agent.restore`), returns a copy whose runs, or whose
 * agents' runs, are traced; given an `Agent`, traces its runs from now on and returns it. `telemetry`: `{ tracer?,
 * isEnabled?, recordInputs?, recordOutputs?, metadata?, functionId?, conversationId?, resumeOf? }`. With
 * `isEnabled: false` the target is returned untouched.
 */
export function withTelemetry(target, telemetry) {
  if (telemetry !== undefined && telemetry !== null && typeof telemetry === "object" && telemetry.isEnabled === false) return target;
  const settings = settingsOf(telemetry, "withTelemetry");
  if (isAgent(target)) return traceAgent(target, settings);
  if (target === null || typeof target !== "object") {
    throw codedError("INVALID_ARGUMENT", "withTelemetry: the first argument must be a loop config, Agent options or an Agent");
  }
  const traced = { ...target };
  runHooks().set(traced, {
    // a loop config: each run gets its own spans, config copy and stream function (pkg-template/api.js)
    run({ kind, config, signal, streamFn }) {
      const runKind = kind === "continue" && read(config, "approvals") !== undefined ? "approvals" : kind;
      const run = new RunTrace(settings, runKind, otelContext.active(), signal);
      const runConfig = { ...config, beforeToolCall: run.wrapBeforeToolCall(config.beforeToolCall) };
      return {
        config: runConfig,
        streamFn: typeof streamFn === "function" ? run.wrapStream(streamFn) : streamFn,
        see: (event) => run.see(event),
        fail: () => run.fail(),
      };
    },
    // AgentOptions: `new Agent(traced)` and `Agent.restore(snapshot, traced)` trace the agent (pkg-template/agent.js)
    agent: (agent) => traceAgent(agent, settings),
  });
  return traced;
}

/**
 * The OpenTelemetry Context of the `execute_tool` span of the call whose `execute` received `args` (its second
 * argument), or `undefined` when that call is not traced. A tool starts its own spans under it:
 * `tracer.startSpan("fetch", {}, toolContext(args))` or `context.with(toolContext(args), fn)`.
 */
export function toolContext(args) {
  return args !== null && (typeof args === "object" || typeof args === "function") ? toolContexts.get(args) : undefined;
}

/**
 * The OpenTelemetry Context of the `invoke_agent` span of the traced agent's run in progress, or `undefined` when it
 * is idle or not traced (e.g. to store the run's span context with your checkpoints, for `resumeOf`).
 */
export function runContext(agent) {
  const state = agent !== null && typeof agent === "object" ? tracedAgents.get(agent) : undefined;
  return state?.run?.ctx;
}
