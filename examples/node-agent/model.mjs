// Which model the CLI talks to, from the environment: the first key set picks the provider (OPENAI_API_KEY → OpenAI,
// ANTHROPIC_API_KEY → Anthropic, GEMINI_API_KEY → Google), MODEL picks another model id of it, and <PROVIDER>_BASE_URL
// another endpoint of the same wire format (a proxy, a gateway). With no key: the OpenAI-compatible server at
// LOCAL_LLM_URL (default http://127.0.0.1:8088/v1, where the agent-loop-wasm repository's `scripts/local-llm start`
// runs SmolLM2-135M; Ollama or llama.cpp's server work too, with MODEL naming their model).
//
// The model objects are written out in full (every field a Model has), with the figures of @earendil-works/pi-ai
// 1.6.0's model catalogue: prices in USD per million tokens, the context window and output limit.

export const MODELS = {
  openai: {
    id: "gpt-4o-mini",
    name: "GPT-4o mini",
    api: "openai-responses",
    provider: "openai",
    baseUrl: "https://api.openai.com/v1",
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 16384,
  },
  anthropic: {
    id: "claude-haiku-4-5",
    name: "Claude Haiku 4.5",
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: "https://api.anthropic.com",
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    contextWindow: 200000,
    maxTokens: 64000,
  },
  google: {
    id: "gemini-2.5-flash",
    name: "Gemini 2.5 Flash",
    api: "google-generative-ai",
    provider: "google",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta",
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 0.3, output: 2.5, cacheRead: 0.03, cacheWrite: 0 },
    contextWindow: 1048576,
    maxTokens: 65536,
  },
};

/** The key variables in the order they are tried, with each provider's base-URL variable. */
const PROVIDERS = [
  { key: "OPENAI_API_KEY", provider: "openai", baseUrl: "OPENAI_BASE_URL" },
  { key: "ANTHROPIC_API_KEY", provider: "anthropic", baseUrl: "ANTHROPIC_BASE_URL" },
  { key: "GEMINI_API_KEY", provider: "google", baseUrl: "GEMINI_BASE_URL" },
];

export const DEFAULT_LOCAL_LLM_URL = "http://127.0.0.1:8088/v1";

/**
 * `{ model, apiKey?, local?: true, note? }` for the environment. A MODEL the table does not know keeps its provider's
 * limits, with prices of 0 (`note` says so: no cost is shown for it).
 */
export function chooseModel(env) {
  const chosen = PROVIDERS.find((p) => env[p.key]);
  if (!chosen) {
    const baseUrl = (env.LOCAL_LLM_URL || DEFAULT_LOCAL_LLM_URL).replace(/\/+$/, "");
    const id = env.MODEL || "SmolLM2-135M-Instruct";
    const model = {
      id,
      name: id,
      api: "openai-completions",
      provider: "local",
      baseUrl,
      reasoning: false,
      input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      // SmolLM2's training context; the server refuses a longer prompt, and a client must not shrink max_tokens to fit
      // a larger assumed window.
      contextWindow: 8192,
      maxTokens: 256,
    };
    return { model, local: true };
  }
  const known = MODELS[chosen.provider];
  let model = { ...known, baseUrl: env[chosen.baseUrl] || known.baseUrl };
  let note;
  if (env.MODEL && env.MODEL !== known.id) {
    model = { ...model, id: env.MODEL, name: env.MODEL, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };
    note = `the prices of ${env.MODEL} are not in this example's table: no cost is shown`;
  }
  return { model, apiKey: env[chosen.key], note };
}

/** Whether an OpenAI-compatible server answers at `baseUrl` (GET /models). */
export async function serverUp(baseUrl) {
  try {
    const response = await fetch(`${baseUrl}/models`, { signal: AbortSignal.timeout(2000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
