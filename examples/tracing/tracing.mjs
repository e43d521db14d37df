// The OpenTelemetry SDK for this process: a NodeTracerProvider (its AsyncLocalStorage context manager lets a tool
// make its span's context active for the code it calls) with two exporters, the console exporter (each span printed
// when it ends) and, when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, the OTLP/HTTP
// exporter (JSON over HTTP; it reads those variables, and OTEL_EXPORTER_OTLP_HEADERS, itself), batched.
import { DiagConsoleLogger, DiagLogLevel, diag } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";

/** Starts tracing; returns `{ provider, endpoint }` (endpoint: where OTLP goes, or undefined). */
export function startTracing(env = process.env) {
  // Failed exports (no collector listening, a 4xx) are reported on stderr instead of dropped silently.
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.ERROR);
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT && `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, "")}/v1/traces`);
  const spanProcessors = [new SimpleSpanProcessor(new ConsoleSpanExporter())];
  if (endpoint) spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter()));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || "weather-bot-example" }),
    spanProcessors,
  });
  provider.register();
  return { provider, endpoint };
}
