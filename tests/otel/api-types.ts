// `npx tsc -p tests/otel`: the otel entry's declarations against the real @opentelemetry/api installed here. A Tracer,
// a Span and a Context of the API fit what withTelemetry, toolContext and runContext take and give, both ways.
import { context as contextApi, trace, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { Agent } from "agent-loop-wasm";
import { runContext, toolContext, withTelemetry, type TelemetrySpan, type TelemetryTracer } from "agent-loop-wasm/otel";

const tracer: Tracer = trace.getTracer("types");
const asOurs: TelemetryTracer = tracer;
const span: Span = tracer.startSpan("x");
const ourSpan: TelemetrySpan = span;
const agent = withTelemetry(new Agent(), { tracer, resumeOf: span, conversationId: "c" });
const run: Context | undefined = runContext(agent);
const parent: Context | undefined = toolContext({});
contextApi.with(parent ?? contextApi.active(), () => tracer.startSpan("child", {}, run).end());
void [asOurs, ourSpan];
