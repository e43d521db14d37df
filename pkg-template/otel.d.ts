// Declarations of the `agent-loop-wasm/otel` entry (issue 32): OpenTelemetry spans for runs, by the GenAI semantic
// conventions. `@opentelemetry/api` is an optional peer dependency; its types are matched structurally here, so
// these declarations compile without it installed, and a Tracer, Context and SpanContext of the API fit them.

import type { Agent, AgentLoopConfig, AgentOptions, AgentRestoreOptions } from "./index.js";

/** An OpenTelemetry `Context` (from `@opentelemetry/api`): pass it to `tracer.startSpan(name, options, context)`. */
export interface TelemetryContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): TelemetryContext;
  deleteValue(key: symbol): TelemetryContext;
}

/** An attribute's value, as the OpenTelemetry API's `AttributeValue`. */
export type TelemetryAttributeValue =
  | string
  | number
  | boolean
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>;

/** Attributes of a span, a link or an event, as the API's `Attributes`. */
export type TelemetryAttributes = Record<string, TelemetryAttributeValue | undefined>;

/** What the entry passes to `startSpan`: the API's `SpanOptions`, as far as it sets them. */
export interface TelemetrySpanOptions {
  /** `SpanKind`: 0 internal, 2 client. */
  kind?: number;
  attributes?: TelemetryAttributes;
  links?: Array<{ context: { traceId: string; spanId: string; traceFlags: number }; attributes?: TelemetryAttributes }>;
}

/** An OpenTelemetry `Span`: the methods the entry calls. */
export interface TelemetrySpan {
  setAttribute(key: string, value: TelemetryAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  addEvent(name: string, attributes?: TelemetryAttributes): unknown;
  end(): void;
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
}

/** An OpenTelemetry `Tracer` (`trace.getTracer(name)`); only `startSpan` is called. */
export interface TelemetryTracer {
  startSpan(name: string, options?: TelemetrySpanOptions, context?: TelemetryContext): TelemetrySpan;
}

/** An OpenTelemetry `SpanContext`, or a `Span` (its `spanContext()` is read). */
export type TelemetrySpanReference = { traceId: string; spanId: string; traceFlags: number; isRemote?: boolean; traceState?: unknown } | { spanContext(): { traceId: string; spanId: string; traceFlags: number } };

/** What `withTelemetry` takes; names as the AI SDK's `experimental_telemetry`. */
export interface TelemetryOptions {
  /** The tracer spans are started with; default `trace.getTracer("agent-loop-wasm")` (the global provider). */
  tracer?: TelemetryTracer;
  /** `false`: `withTelemetry` returns its argument untouched (no spans, no cost). Default `true`. */
  isEnabled?: boolean;
  /**
   * Records content going in: `gen_ai.input.messages` on `chat` spans (the request's messages, image data left out)
   * and `gen_ai.tool.call.arguments` on `execute_tool` spans. Default `false`.
   */
  recordInputs?: boolean;
  /**
   * Records content coming out: `gen_ai.output.messages` on `chat` spans, `gen_ai.tool.call.result` on `execute_tool`
   * spans, and error texts (provider and tool messages) as span status descriptions. Default `false`: the status
   * description is then the `error.type`.
   */
  recordOutputs?: boolean;
  /** Attributes of every `invoke_agent` span, as `agent_loop.metadata.<key>`. */
  metadata?: Record<string, string | number | boolean | readonly string[] | readonly number[] | readonly boolean[]>;
  /** The agent's name: `gen_ai.agent.name`, and the span name `invoke_agent <functionId>`. */
  functionId?: string;
  /** `gen_ai.conversation.id` of every `invoke_agent` span (chat spans take the request's `sessionId`). */
  conversationId?: string;
  /**
   * The `invoke_agent` span of an interrupted run (saved with your checkpoints, e.g. from `runContext(agent)`):
   * the span of the `resume()` run that continues it gets a link to it.
   */
  resumeOf?: TelemetrySpanReference;
}

/**
 * Traces runs with OpenTelemetry. Given a loop config, returns a copy whose runs (through `agentLoop`,
 * `agentLoopContinue`, `runAgentLoop`, `runAgentLoopContinue`) are traced; given Agent options, a copy with which
 * `new Agent(options)` and `Agent.restore(snapshot, options)` make traced agents; given an `Agent`, traces its runs
 * from now on and returns it.
 */
export declare function withTelemetry<T extends AgentLoopConfig | AgentOptions | AgentRestoreOptions | Agent>(target: T, telemetry?: TelemetryOptions): T;

/**
 * The Context of the `execute_tool` span of the call whose `execute` received `args` (its second argument), or
 * `undefined` when that call is not traced: `tracer.startSpan("GET /weather", {}, toolContext(args))`.
 */
export declare function toolContext(args: unknown): TelemetryContext | undefined;

/** The Context of the `invoke_agent` span of a traced agent's run in progress, or `undefined` when it is idle. */
export declare function runContext(agent: Agent): TelemetryContext | undefined;
