// agent-loop-wasm/otel (issue 32): what withTelemetry, toolContext and runContext take and give. The OpenTelemetry
// types are matched structurally, so this compiles without @opentelemetry/api; stand-ins with the API's shapes of
// Tracer, Context and SpanContext must fit.
import { Agent, agentLoop, type AgentLoopConfig, type AgentTool } from "agent-loop-wasm";
import { runContext, toolContext, withTelemetry, type TelemetryContext, type TelemetryOptions } from "agent-loop-wasm/otel";
import type { Equal, Expect } from "./assert.js";

/** The API's Context, Span and Tracer signatures (copied shapes; tests/otel/api-types.ts checks the real ones). */
interface ApiContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): ApiContext;
  deleteValue(key: symbol): ApiContext;
}
interface ApiSpan {
  setAttribute(key: string, value: string | number | boolean | Array<null | undefined | string>): this;
  setStatus(status: { code: 0 | 1 | 2; message?: string }): this;
  addEvent(name: string, attributesOrStartTime?: Record<string, unknown> | number, startTime?: number): this;
  end(endTime?: number): void;
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
}
declare const tracer: { startSpan(name: string, options?: { kind?: number; attributes?: Record<string, string | number | boolean | undefined> }, context?: ApiContext): ApiSpan };
declare const config: AgentLoopConfig;

const traced = withTelemetry(config, { tracer, recordInputs: true, recordOutputs: false, metadata: { team: "a", n: 1 }, functionId: "helper" });
type _traced = Expect<Equal<typeof traced, AgentLoopConfig>>;
void agentLoop([], { messages: [] }, traced);

const agent = withTelemetry(new Agent(), { tracer, conversationId: "c-1", resumeOf: tracer.startSpan("x") });
const options = withTelemetry({ initialState: { systemPrompt: "hi" }, toolTimeoutMs: 1000 }, { tracer });
void new Agent(options);
void Agent.restore("{}", withTelemetry({ tools: [] }, { tracer }));
type _agent = Expect<Equal<typeof agent, Agent>>;
const ctx = runContext(agent);
type _ctx = Expect<Equal<typeof ctx, TelemetryContext | undefined>>;

const fetchTool: AgentTool = {
  name: "fetch", label: "Fetch", description: "GET a URL", parameters: { type: "object" },
  execute: async (_id, args) => {
    const parent = toolContext(args);
    // A Context of the API is what startSpan takes: the entry's type fits it both ways.
    const asApi: ApiContext | undefined = parent;
    tracer.startSpan("GET", {}, asApi).end();
    return { content: [{ type: "text", text: "ok" }], details: {} };
  },
};
void fetchTool;

const disabled: TelemetryOptions = { isEnabled: false };
void disabled;
// @ts-expect-error functionId is a string
withTelemetry(config, { functionId: 1 });
// @ts-expect-error a tracer has startSpan
withTelemetry(config, { tracer: {} });
// @ts-expect-error the target is a config or an Agent
withTelemetry(1, {});

// resumeOf takes OpenTelemetry's SpanContext, an interface without an index signature (the docs store it as JSON and
// parse it back; a live one comes from trace.getSpan(runContext(agent))?.spanContext()).
interface ApiSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { get(key: string): string | undefined };
}
declare const stored: ApiSpanContext | undefined;
withTelemetry(new Agent(), { tracer, resumeOf: stored });
