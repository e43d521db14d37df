// Standard Schema tools (T-4.3.8, issue 42), runtime-neutral: no Node API and no import, so the same file runs in Node,
// headless Chromium and workerd (schemas.test.mjs). The package (`lib`) and the schema libraries (`z` of zod, `v` of
// Valibot with `toStandardJsonSchema` of @valibot/to-json-schema, `type` of ArkType) are passed in. runSchemas runs
// one Agent with a zod, a Valibot and an ArkType tool on a scripted model that calls each with good and with bad
// arguments, and returns what was observable: the tools the model was declared, what each `execute` received, each
// result's text and error flag, and the argument checks' errors.

const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
export const model = { id: "m-1", name: "M", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };

/** The tools, one per library, each `{ city: string, days?: integer ≥ 1 }` (ArkType: a number ≥ 1; zod: `days`
 *  defaults to 1), and a zod tool whose refinement is asynchronous (its `validate` answers with a promise). */
export function schemaTools({ z, v, toStandardJsonSchema, type }, seen) {
  const execute = (name) => async (_id, args) => {
    seen.push([name, args]);
    return { content: [{ type: "text", text: `${name}: ${args.city}, ${args.days ?? "no"} days` }], details: {} };
  };
  return [
    {
      name: "zod_weather",
      label: "zod",
      description: "Weather (zod)",
      parameters: z.object({ city: z.string().describe("City name"), days: z.number().int().min(1).default(1) }),
      execute: execute("zod_weather"),
    },
    {
      name: "zod_async",
      label: "zod async",
      description: "A city that exists",
      parameters: z.object({ city: z.string().refine(async (city) => city !== "Atlantis", "No such city") }),
      execute: execute("zod_async"),
    },
    {
      name: "valibot_weather",
      label: "valibot",
      description: "Weather (Valibot)",
      parameters: toStandardJsonSchema(v.object({ city: v.string(), days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))) })),
      execute: execute("valibot_weather"),
    },
    {
      name: "arktype_weather",
      label: "arktype",
      description: "Weather (ArkType)",
      parameters: type({ city: "string", "days?": "number >= 1" }),
      execute: execute("arktype_weather"),
    },
  ];
}

/** A scripted model: each reply `{ text }` or `{ calls: [[id, name, args]] }`; records each request's messages. */
function scripted(lib, replies) {
  const requests = [];
  const streamFn = (m, context) => {
    requests.push(context.messages);
    const reply = replies[requests.length - 1] ?? { text: "(no more replies)" };
    const stream = lib.createAssistantMessageEventStream();
    const content = reply.calls ? reply.calls.map(([id, name, args]) => ({ type: "toolCall", id, name, arguments: args })) : [{ type: "text", text: reply.text }];
    const message = { role: "assistant", content, api: m.api, provider: m.provider, model: m.id, usage: ZERO, stopReason: reply.calls ? "toolUse" : "stop", timestamp: 2 };
    queueMicrotask(() => {
      stream.push({ type: "start", partial: { ...message, content: [] } });
      stream.push({ type: "done", reason: message.stopReason, message });
    });
    return stream;
  };
  return { streamFn, requests };
}

export async function runSchemas(libs) {
  const { lib } = libs;
  const seen = [];
  const tools = schemaTools(libs, seen);
  const good = { city: "Paris", days: 2 };
  const bad = { city: 7, days: 0.5 };
  const { streamFn, requests } = scripted(lib, [
    {
      calls: [
        ["z1", "zod_weather", good],
        ["z2", "zod_weather", bad],
        ["z3", "zod_weather", { city: "Rome" }],
        ["s1", "zod_async", { city: "Lima" }],
        ["s2", "zod_async", { city: "Atlantis" }],
        ["v1", "valibot_weather", good],
        ["v2", "valibot_weather", bad],
        ["a1", "arktype_weather", { city: "Oslo" }],
        ["a2", "arktype_weather", bad],
      ],
    },
    { text: "done" },
  ]);
  const agent = new lib.Agent({ initialState: { model, tools }, streamFn });
  await agent.prompt("weather?");
  // Declared once: later turns compare the tools with what was declared and find nothing changed.
  const declared = requests[0].find((m) => m.role === "system")?.toolsAdded ?? [];
  const declarations = agent.state.messages.filter((m) => m.role === "system").length;
  const results = agent.state.messages
    .filter((m) => m.role === "toolResult")
    .map((m) => [m.toolCallId, m.isError, m.content[0].text]);

  // The argument checks: a Standard Schema without a JSON Schema converter, and a validator of another library.
  const refused = [];
  const valibotBare = { ...tools[2], parameters: libs.v.object({ city: libs.v.string() }) };
  class Foreign {
    parse(x) {
      return x;
    }
  }
  const foreign = { ...tools[0], name: "foreign", parameters: new Foreign() };
  for (const t of [valibotBare, foreign]) {
    try {
      lib.agentLoop([{ role: "user", content: "x", timestamp: 1 }], { systemPrompt: "", messages: [], tools: [t] }, { model, convertToLlm: (m) => m }, undefined, streamFn);
      refused.push("(accepted)");
    } catch (e) {
      refused.push(`${e.name}: ${e.message}`);
    }
  }
  // validateToolArguments: the schema's output, its issues, and a schema it cannot wait for.
  const direct = [];
  for (const [t, args] of [[tools[0], { city: "Paris" }], [tools[0], bad], [tools[1], { city: "Lima" }]]) {
    try {
      direct.push(lib.validateToolArguments(t, { type: "toolCall", id: "d", name: t.name, arguments: args }));
    } catch (e) {
      direct.push(`${e.name}: ${e.message}`);
    }
  }
  return { declared, declarations, seen, results, refused, direct, requests: requests.length };
}
