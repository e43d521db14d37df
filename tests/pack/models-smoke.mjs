// The packaging smoke test of `agent-loop-wasm/models` (issue 42), run by scripts/pack-test.mjs in Node CJS (as a
// generated CommonJS copy) and ESM, Deno, a Vite bundle in Chromium and workerd, each with only the packed tarball
// installed. Plain ES2020; no network: the stream function's `fetch` stands in for OpenAI and answers with the
// Responses wire format.
//
// `modelsSmoke({ lib, models })`: the catalogue's providers and gpt-4o-mini's entry, the unknown-id error, a fresh
// copy per call, then gpt-4o-mini through the built-in provider of the real wasm loop: its usage priced with the
// entry's prices. Resolves to a summary, or throws with what differed.

function check(ok, what) {
  if (!ok) throw new Error(`models smoke: ${what}`);
}

const sse = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const REPLY = [
  sse("response.created", { response: { id: "resp_1", object: "response", model: "gpt-4o-mini", status: "in_progress", output: [] } }),
  sse("response.output_item.added", { output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] } }),
  sse("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hello" }),
  sse("response.output_item.done", { output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Hello", annotations: [] }] } }),
  sse("response.completed", {
    response: { id: "resp_1", object: "response", model: "gpt-4o-mini", status: "completed", output: [],
      usage: { input_tokens: 120000, input_tokens_details: { cached_tokens: 20000 }, output_tokens: 30000, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 150000 } },
  }),
].join("");

export async function modelsSmoke({ lib, models }) {
  check(typeof models.getModel === "function" && typeof models.getModels === "function" && typeof models.getProviders === "function", "the entry lacks its functions");
  const providers = models.getProviders();
  check(providers.join() === "openai,anthropic,google,openrouter,groq,deepseek,mistral,xai,cerebras", `providers ${providers}`);
  const count = providers.reduce((n, p) => n + models.getModels(p).length, 0);
  const model = models.getModel("openai", "gpt-4o-mini");
  check(model.api === "openai-responses" && model.baseUrl === "https://api.openai.com/v1" && model.contextWindow === 128000 && model.maxTokens === 16384, `gpt-4o-mini ${JSON.stringify(model)}`);
  check(model.cost.input === 0.15 && model.cost.output === 0.6 && model.cost.cacheRead === 0.075, `gpt-4o-mini prices ${JSON.stringify(model.cost)}`);
  model.cost.input = 1;
  check(models.getModel("openai", "gpt-4o-mini").cost.input === 0.15, "a caller's change reached the catalogue");
  let error = "";
  try {
    models.getModel("openai", "gpt-4o-mni");
  } catch (e) {
    error = e.message;
  }
  check(error === 'getModel: no model "gpt-4o-mni" for provider "openai"; did you mean "gpt-4o-mini"?', `unknown id: ${error}`);

  // The built-in provider with the entry, its fetch standing in for OpenAI.
  const requests = [];
  const fetch = async (url, init) => {
    requests.push({ url: String(url), model: JSON.parse(init.body).model });
    return new Response(REPLY, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const stream = lib.streamBuiltin(models.getModel("openai", "gpt-4o-mini"), { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "sk-smoke", fetch });
  const message = await stream.result();
  check(message.stopReason === "stop" && message.content[0].text === "Hello", `reply ${message.stopReason} ${message.errorMessage ?? ""}`);
  check(requests.length === 1 && requests[0].url === "https://api.openai.com/v1/responses" && requests[0].model === "gpt-4o-mini", `request ${JSON.stringify(requests)}`);
  const cost = message.usage.cost;
  // 100,000 input tokens at $0.15, 20,000 cached at $0.075 and 30,000 output at $0.60 per million.
  check(cost.total.toFixed(6) === "0.034500" && !cost.totalFromProvider, `cost ${JSON.stringify(cost)}`);
  return { providers: providers.length, models: count, cost: cost.total.toFixed(4), error: true };
}
