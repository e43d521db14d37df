// agent-loop-wasm/models (issue 42, SPEC §13): the catalogue's lookups are checked against its literal unions, as
// pi-ai's `getModel` is, and give this package's `Model` with the entry's `api`; code written for pi-ai's catalogue
// reads (`getModel(provider, id)`, `getModels(provider)`, `getProviders()`) compiles unchanged.
import { Agent, agentLoop, type Api, type Model } from "agent-loop-wasm";
import { getModel, getModels, getProviders, type CatalogueModelId, type CatalogueProvider } from "agent-loop-wasm/models";
import type { Equal, Expect } from "./assert.js";

const mini = getModel("openai", "gpt-4o-mini");
type _mini = Expect<Equal<typeof mini, Model<"openai-responses">>>;
const claude = getModel("anthropic", "claude-sonnet-4-5");
type _claude = Expect<Equal<typeof claude, Model<"anthropic-messages">>>;
const gemini: Model<"google-generative-ai"> = getModel("google", "gemini-2.5-flash");
const routed = getModel("openrouter", "anthropic/claude-sonnet-4.5");
type _routed = Expect<Equal<typeof routed, Model<"anthropic-messages">>>;
const mistral = getModel("mistral", "mistral-large-latest");
type _mistral = Expect<Equal<typeof mistral, Model<"openai-completions">>>;
const any: Model<Api> = getModel("groq", "llama-3.3-70b-versatile");

// A misspelt id or provider does not compile.
// @ts-expect-error "gpt-4o-mni" is no OpenAI model of the catalogue
getModel("openai", "gpt-4o-mni");
// @ts-expect-error an Anthropic id under another provider
getModel("openai", "claude-sonnet-4-5");
// @ts-expect-error "opnai" is no provider
getModel("opnai", "gpt-4o-mini");
// @ts-expect-error a string that is not a literal of the catalogue
getModels("azure" as string);

const openai = getModels("openai");
type _openai = Expect<Equal<typeof openai, Model<"openai-responses">[]>>;
const routedAll = getModels("openrouter");
type _routedAll = Expect<Equal<typeof routedAll, Model<"openai-completions" | "anthropic-messages">[]>>;
const providers = getProviders();
type _providers = Expect<Equal<typeof providers, CatalogueProvider[]>>;
type _ids = Expect<Equal<CatalogueModelId<"deepseek">, "deepseek-v4-pro" | "deepseek-flash">>;
type _known = Expect<Equal<CatalogueProvider, "openai" | "anthropic" | "google" | "openrouter" | "groq" | "deepseek" | "mistral" | "xai" | "cerebras">>;

// The objects are ordinary models: spread with a base URL, handed to the loop and the Agent.
void agentLoop([], { messages: [] }, { model: { ...mini, baseUrl: "http://127.0.0.1:8080/v1" }, convertToLlm: (m) => m as never });
void new Agent({ initialState: { model: claude } });
void [gemini, any];
