// The request-building workload shared by bench/request-build.mjs and bench/ab-builds.mjs: a model per wire
// format, a transcript of N messages, one tool, and the time from `streamBuiltin` to its `fetch`.

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

export const APIS = ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"];

export function modelFor(api) {
  return {
    id: "bench-model",
    name: "bench",
    api,
    provider: api.startsWith("anthropic") ? "anthropic" : api.startsWith("google") ? "google" : "openai",
    baseUrl: "http://127.0.0.1:9/v1",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 1000,
  };
}

/** N messages of about 60 characters of text each; every tenth pair is a tool call and its result instead. */
export function messages(n, api) {
  const out = [];
  for (let i = 0; out.length < n; i++) {
    const text = `message ${i}: some earlier words of the session, kept as is.`;
    if (i % 10 === 9) {
      const id = `call_${i}`;
      out.push({ role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `src/file_${i}.ts` } }], api, provider: "bench", model: "bench-model", usage, stopReason: "toolUse", timestamp: i });
      out.push({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: i });
    } else if (i % 2 === 0) {
      out.push({ role: "user", content: text, timestamp: i });
    } else {
      out.push({ role: "assistant", content: [{ type: "text", text }], api, provider: "bench", model: "bench-model", usage, stopReason: "stop", timestamp: i });
    }
  }
  out.length = n;
  if (out.at(-1).role !== "user") out.push({ role: "user", content: "go on", timestamp: n });
  return out;
}

export const tools = [{ name: "read", description: "Reads a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];

/** ms from the `streamBuiltin` call of `lib` (our package) to its fetch, which answers 400 at once; and the body. */
export async function buildRequest(lib, api, context) {
  let fetched = 0;
  let body = "";
  const t0 = performance.now();
  const stream = lib.streamBuiltin(modelFor(api), context, {
    apiKey: "bench",
    fetch: async (_url, init) => {
      fetched = performance.now();
      body = init.body;
      return new Response('{"error":{"message":"bench"}}', { status: 400, headers: { "content-type": "application/json" } });
    },
  });
  for await (const _ of stream);
  if (!fetched) throw new Error(`${api}: no request was made`);
  return { ms: fetched - t0, body };
}
