// The scripted runs the telemetry tests trace (tests/otel/spans.test.mjs): each returns the tracing it used.
import { lib, otel, tracing, model, convertToLlm, user } from "./helpers.mjs";
import { parallelScript as parallelScriptWith, TELEMETRY } from "./matrix.mjs";

/** The parallel script of matrix.mjs (two tools at once, one starting its own span) on this build, traced by `t`. */
export const parallelScript = (t) => parallelScriptWith({ lib, otel }, t.tracer);

export { TELEMETRY };

/** The parallel script through one entry point: "agentLoop", "runAgentLoop" or "Agent". */
export async function runParallel(entry, options = {}) {
  const t = tracing();
  const { streamFn, tools } = parallelScript(t);
  const telemetry = { tracer: t.tracer, ...TELEMETRY, ...options };
  if (entry === "Agent") {
    // Traced through its options (the instance form is the other tests').
    const agent = new lib.Agent(otel.withTelemetry({ initialState: { model, tools }, streamFn, apiKey: "sk-SECRET-1" }, telemetry));
    await agent.prompt(user("PROMPT-TEXT"));
  } else {
    const config = otel.withTelemetry({ model, convertToLlm, apiKey: "sk-SECRET-1" }, telemetry);
    const context = { messages: [], tools };
    if (entry === "agentLoop") {
      for await (const _ of lib.agentLoop([user("PROMPT-TEXT")], context, config, undefined, streamFn));
    } else {
      await lib.runAgentLoop([user("PROMPT-TEXT")], context, config, async () => {}, undefined, streamFn);
    }
  }
  return t;
}
