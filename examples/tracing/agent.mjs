// An agent with two tools, traced with OpenTelemetry by agent-loop-wasm/otel: one trace per run,
//
//   invoke_agent weather-bot          the run
//   ├── chat scripted-weather         the model request that asks for both tools
//   ├── execute_tool get_weather      one tool call
//   │   └── weather lookup            the tool's own span, in the call's context (toolContext)
//   ├── execute_tool get_air_quality  (the two calls run in parallel)
//   └── chat scripted-weather         the request with the results
//
// printed by the console exporter and sent to an OTLP/HTTP collector when OTEL_EXPORTER_OTLP_ENDPOINT is set.
//
//   npm start                                                     the offline scripted model, console only
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm start   also to a collector (Jaeger, the OTel Collector…)
//   npm start -- "What's the weather in Bergen?"                  another prompt
//
// With OPENAI_API_KEY set the model is OpenAI's MODEL (default gpt-4o-mini) instead of the scripted stand-in.
import { SpanStatusCode, context, trace } from "@opentelemetry/api";
import { Agent, streamBuiltin } from "agent-loop-wasm";
import { toolContext, withTelemetry } from "agent-loop-wasm/otel";
import { SCRIPTED_MODEL, scriptedStreamFn } from "./scripted-model.mjs";
import { startTracing } from "./tracing.mjs";

const { provider, endpoint } = startTracing();
const tracer = trace.getTracer("weather-bot-example");

const WEATHER = { Oslo: "4 °C, light snow", Bergen: "7 °C, rain", Lisbon: "19 °C, sunny" };
const AIR = { Oslo: "good (AQI 21)", Bergen: "good (AQI 12)", Lisbon: "moderate (AQI 54)" };
const citySchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const text = (value) => ({ content: [{ type: "text", text: value }], details: {} });

/** A "weather service" call with a span of its own: started as a child of whatever context is active. */
function lookUpWeather(city) {
  return tracer.startActiveSpan("weather lookup", { attributes: { "weather.city": city } }, async (span) => {
    try {
      await new Promise((resolve) => setTimeout(resolve, 20)); // the service's latency
      if (!WEATHER[city]) throw new Error(`no weather for ${city}`);
      return WEATHER[city];
    } catch (error) {
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

const tools = [
  {
    name: "get_weather",
    label: "Weather",
    description: "The current weather in a city",
    parameters: citySchema,
    // toolContext(args): the context of this call's execute_tool span; made active, the lookup's span (and any
    // instrumented client's, e.g. an HTTP request) becomes its child.
    execute: async (_id, args) => text(`In ${args.city}: ${await context.with(toolContext(args), () => lookUpWeather(args.city))}`),
  },
  {
    name: "get_air_quality",
    label: "Air quality",
    description: "The current air quality in a city",
    parameters: citySchema,
    execute: async (_id, { city }) => {
      if (!AIR[city]) throw new Error(`no air quality for ${city}`);
      return text(`air quality ${AIR[city]}`);
    },
  },
];

const model = process.env.OPENAI_API_KEY
  ? {
      id: process.env.MODEL || "gpt-4o-mini",
      name: process.env.MODEL || "gpt-4o-mini",
      api: "openai-completions",
      provider: "openai",
      baseUrl: process.env.OPENAI_BASE_URL || "https://api.openai.com/v1",
      reasoning: false,
      input: ["text", "image"],
      cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
      contextWindow: 128000,
      maxTokens: 16384,
    }
  : SCRIPTED_MODEL;

const agent = new Agent(
  withTelemetry(
    {
      initialState: { model, tools, systemPrompt: "You answer questions about the weather with the tools; call them together." },
      streamFn: model === SCRIPTED_MODEL ? scriptedStreamFn() : streamBuiltin,
      getApiKey: () => process.env.OPENAI_API_KEY,
    },
    // Content (messages, arguments, results) stays out of the spans unless recordInputs/recordOutputs say otherwise.
    { tracer, functionId: "weather-bot", metadata: { example: "tracing" } },
  ),
);

agent.subscribe((event) => {
  if (event.type === "tool_execution_start") console.log(`→ ${event.toolName}(${JSON.stringify(event.args)})`);
});

const prompt = process.argv.slice(2).join(" ").trim() || "What's the weather and the air quality in Oslo?";
console.log(`> ${prompt}`);
await agent.prompt(prompt);
const last = agent.state.messages.at(-1);
console.log(last.content.map((c) => c.text ?? "").join("") || `(${last.stopReason}: ${last.errorMessage})`);
process.exitCode = last.stopReason === "stop" ? 0 : 1;
// Flushes the batched OTLP export before the process ends.
try {
  await provider.shutdown();
  console.log(endpoint ? `spans sent to ${endpoint}` : "spans printed above (set OTEL_EXPORTER_OTLP_ENDPOINT to send them to a collector)");
} catch (error) {
  console.error(`the spans could not be sent to ${endpoint}: ${error.message}`);
  process.exitCode = 1;
}
