// The scripted runs the telemetry tests trace (tests/otel/spans.test.mjs): each returns the tracing it used.
import { lib, otel, tracing, scripted, model, convertToLlm, tool, ok, sleep, user, usage } from "./helpers.mjs";

/**
 * Turn 1 asks for `slow` (ends after `fast` ended, starts a span of its own under toolContext) and `fast` (5 ms) at
 * once; turn 2 answers. `slow` waits for `fast` rather than a longer timer, so their overlap holds on a loaded machine.
 */
export function parallelScript(t) {
  let fastDone;
  const fastEnded = new Promise((r) => (fastDone = r));
  const { streamFn, calls } = scripted([
    { calls: [["c1", "slow", { n: 1 }], ["c2", "fast", { n: 2 }]], usage: usage(10, 5, 3, 1, 0.25), responseId: "r-1", responseModel: "m-1-2026" },
    { text: "done", usage: usage(20, 2), responseId: "r-2" },
  ]);
  const tools = [
    tool("slow", async (_id, args) => {
      await fastEnded;
      await sleep(5);
      t.tracer.startSpan("GET /slow", {}, otel.toolContext(args)).end();
      return ok("slow ok");
    }),
    tool("fast", async () => {
      await sleep(5);
      setTimeout(fastDone, 0); // after this call's end is emitted
      return ok("fast ok");
    }),
  ];
  return { streamFn, calls, tools };
}

export const TELEMETRY = { functionId: "helper", metadata: { team: "a" } };

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
