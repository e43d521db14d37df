// Runtime-neutral provider scenarios (plain ES2020 + fetch; no Node, Deno or DOM APIs), run against a scripted
// loopback server (tests/js/provider-server.mjs) in Node, Deno (tests/js/providers-deno.mjs) and headless Chromium
// (the page of providers-browser.test.mjs). The Node side scripts the server and builds the plan; these functions
// only drive the package and summarise what it emitted, so the three runtimes can be compared exactly.
//
//   plan: [{ name, kind: "text" | "tools", model, apiKey, options? }]  (model.baseUrl points at the scenario's route;
//          options: extra JSON stream options, e.g. maxRetries)
//   runScenarios(lib, plan) → { [name]: summary }

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Event label as the loop tests write them (`message_start:user`, `tool_execution_end:<id>`). */
export function label(e) {
  if (e.type.startsWith("message_")) return `${e.type}:${e.message && e.message.role}`;
  if (e.type.startsWith("tool_execution_")) return `${e.type}:${e.toolCallId}`;
  return e.type;
}

/** A JSON copy without the volatile fields (timestamp, durationMs). */
export function stableMessage(message) {
  const copy = JSON.parse(JSON.stringify(message));
  delete copy.timestamp;
  delete copy.durationMs;
  return copy;
}

/**
 * Two parallel tools, `slow` and `fast`, each echoing `<name>:<text>`. `slow` finishes only after `fast` did (plus
 * 5 ms; at most 2 s), so their ends swap deterministically however busy the machine is.
 */
export function delayTools() {
  let fastDone;
  const fastFinished = new Promise((resolve) => (fastDone = resolve));
  const make = (name, ms, wait) => ({
    name,
    label: name,
    description: `waits ${ms} ms and echoes its text`,
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    executionMode: "parallel",
    async execute(toolCallId, args) {
      await wait();
      if (name === "fast") fastDone();
      return { content: [{ type: "text", text: `${name}:${args.text}` }], details: { ms } };
    },
  });
  return [
    make("slow", 40, async () => {
      let timer;
      await Promise.race([fastFinished, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
      clearTimeout(timer); // no timer may outlive the run (the process exits at once)
      await sleep(5);
    }),
    make("fast", 5, () => sleep(5)),
  ];
}

export const TOOL_PROMPT = "Run both tools.";
export const SYSTEM_PROMPT = "You are a test.";

/** streamBuiltin on one user message: event types, live tool arguments, the final message. */
async function textScenario(lib, step) {
  const stream = lib.streamBuiltin(step.model, { messages: [{ role: "user", content: "Say hello.", timestamp: 1 }] }, { apiKey: step.apiKey, ...step.options });
  const types = [];
  const argsLive = [];
  let samePartial = true;
  let first;
  for await (const e of stream) {
    types.push(e.type);
    const m = e.partial || e.message || e.error;
    if (first === undefined) first = m;
    else if (m !== first) samePartial = false;
    if (e.type === "toolcall_delta") argsLive.push(JSON.stringify(e.partial.content[e.contentIndex].arguments));
  }
  const result = await stream.result();
  return { types, argsLive, samePartial, message: stableMessage(result) };
}

/** agentLoop with NO stream function (D7: streamBuiltin): two tools in parallel, then an answer. */
async function toolsScenario(lib, step) {
  const context = { messages: [{ role: "system", content: SYSTEM_PROMPT, timestamp: 1 }], tools: delayTools() };
  const config = {
    model: step.model,
    convertToLlm: (messages) => messages,
    toolExecution: "parallel",
    apiKey: step.apiKey,
    ...step.options,
  };
  const stream = lib.agentLoop([{ role: "user", content: TOOL_PROMPT, timestamp: 2 }], context, config);
  const labels = [];
  let updates = 0;
  for await (const e of stream) {
    if (e.type === "message_update") updates++;
    else labels.push(label(e));
  }
  const result = await stream.result();
  return {
    labels,
    updates,
    roles: result.map((m) => m.role),
    assistants: result.filter((m) => m.role === "assistant").map((m) => ({
      content: m.content,
      stopReason: m.stopReason,
      errorMessage: m.errorMessage,
    })),
    toolResults: result.filter((m) => m.role === "toolResult").map((m) => [m.toolCallId, m.toolName, m.content[0] && m.content[0].text, m.isError]),
  };
}

export async function runScenarios(lib, plan) {
  const out = {};
  for (const step of plan) {
    try {
      out[step.name] = step.kind === "tools" ? await toolsScenario(lib, step) : await textScenario(lib, step);
    } catch (e) {
      out[step.name] = { thrown: String((e && e.stack) || e) };
    }
  }
  return JSON.parse(JSON.stringify(out)); // as it crosses a process or page boundary
}
