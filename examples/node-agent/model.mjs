// Which model the CLI talks to, from the environment: the first key set picks the provider (OPENAI_API_KEY → OpenAI,
// ANTHROPIC_API_KEY → Anthropic, GEMINI_API_KEY → Google), MODEL picks another model id of it, and <PROVIDER>_BASE_URL
// another endpoint of the same wire format (a proxy, a gateway). With no key: the OpenAI-compatible server at
// LOCAL_LLM_URL (default http://127.0.0.1:8088/v1, where the agent-loop-wasm repository's `scripts/local-llm start`
// runs SmolLM2-135M; Ollama or llama.cpp's server work too, with MODEL naming their model).
//
// The cloud models come from the package's catalogue (agent-loop-wasm/models: complete model objects with their limits
// and prices), so a MODEL the catalogue knows gets its own prices too.
import { getModel } from "agent-loop-wasm/models";

/** Each provider's default model id. */
export const DEFAULT_MODEL = { openai: "gpt-4o-mini", anthropic: "claude-haiku-4-5", google: "gemini-2.5-flash" };

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
  const id = env.MODEL || DEFAULT_MODEL[chosen.provider];
  let model;
  let note;
  try {
    model = getModel(chosen.provider, id);
  } catch (error) {
    // An id the catalogue does not know (a newer model, a fine-tune): the provider's default model's limits, no prices.
    model = { ...getModel(chosen.provider, DEFAULT_MODEL[chosen.provider]), id, name: id, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };
    note = `${error.message.replace(/^getModel: /, "")}: using it with ${DEFAULT_MODEL[chosen.provider]}'s limits and no prices (no cost is shown)`;
  }
  return { model: { ...model, baseUrl: env[chosen.baseUrl] || model.baseUrl }, apiKey: env[chosen.key], note };
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
