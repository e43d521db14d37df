// Request helpers shared by the wire formats (P-6.1.6, P-6.2.3, P-6.2.7, P-6.2.8): key variable names, base URLs,
// output-token limits, thinking budgets and levels, sampling parameters, readers of `model`/`options`. Pure
// functions of plain values; no HTTP, no wire shapes.
//
// A request input is `{ model, messages, options, apiKey }`: the `Model`, the transcript after `convertToLlm` as
// plain JSON data, the stream options and the resolved key (never echoed into errors or events).
import { asBool, asF64, asStr, get, isObject, num, str } from "./json.js";

export const OPENAI_BASE_URL = "https://api.openai.com/v1";
export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
export const GOOGLE_BASE_URL = "https://generativelanguage.googleapis.com/v1beta";

/** The thinking levels a request may carry (`options.reasoning`; `"off"` and others = none). */
export const THINKING_LEVELS = ["minimal", "low", "medium", "high", "xhigh", "max"];

const ENV_VARS = {
  __proto__: null,
  openai: ["OPENAI_API_KEY"],
  anthropic: ["ANTHROPIC_API_KEY"],
  google: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  groq: ["GROQ_API_KEY"],
  openrouter: ["OPENROUTER_API_KEY"],
  xai: ["XAI_API_KEY"],
  deepseek: ["DEEPSEEK_API_KEY"],
  mistral: ["MISTRAL_API_KEY"],
  cerebras: ["CEREBRAS_API_KEY"],
};

/**
 * P-6.2.3: the environment variables holding the key for `model.provider`, in lookup order.
 * @param {string} provider @returns {string[]}
 */
export const apiKeyEnvVars = (provider) => ENV_VARS[provider] ?? [];

// P-6.2.3: the cloud services behind the built-in providers; a request to one of them needs a key, any other host (a
// local server, a proxy) gets the request without `Authorization`.
const CLOUD_HOSTS = [
  "api.openai.com",
  "api.anthropic.com",
  "generativelanguage.googleapis.com",
  "openrouter.ai",
  "api.groq.com",
  "api.x.ai",
  "api.deepseek.com",
  "api.mistral.ai",
  "api.cerebras.ai",
];

/** The lowercased host of an `http(s)://host[:port]/…` URL, or undefined. */
const urlHost = (url) => {
  const at = url.indexOf("://");
  if (at < 0) return undefined;
  const authority = url.slice(at + 3).split(/[/?#]/)[0];
  const host = authority.slice(authority.lastIndexOf("@") + 1).split(":")[0].replace(/\.+$/, "");
  return host ? host.toLowerCase() : undefined;
};

/**
 * P-6.2.3, the OpenAI APIs: `No API key for provider: <provider>` when `url` goes to a known cloud service and
 * neither a key nor an `Authorization` header was given; undefined (send without a key) otherwise.
 * @param {object} input @param {string} url @returns {string | undefined}
 */
export const missingOpenaiKey = (input, url) => {
  if (apiKey(input) || hasHeader(input, "authorization")) return undefined;
  return CLOUD_HOSTS.includes(urlHost(url)) ? `No API key for provider: ${str(input.model, "provider")}` : undefined;
};

/**
 * P-6.1.6: `model.baseUrl` without trailing `/`, or `fallback` when it is missing or empty.
 * @param {object} model @param {string} fallback @returns {string}
 */
export const baseUrl = (model, fallback) =>
  str(model, "baseUrl").replace(/\/+$/, "") || fallback.replace(/\/+$/, "");

/** `options[key]` as a finite number. @param {object} options @param {string} key @returns {number | undefined} */
export const optionNumber = (options, key) => num(options, key);

/** `options[key]` as a string. @param {object} options @param {string} key @returns {string | undefined} */
export const optionStr = (options, key) => asStr(get(options, key));

/**
 * OpenRouter, by provider or base URL: its streamed usage carries the billed cost.
 * @param {object} model @returns {boolean}
 */
export const isOpenrouter = (model) =>
  str(model, "provider") === "openrouter" || str(model, "baseUrl").includes("openrouter.ai");

const valid = (n) => (Number.isFinite(n) && n >= 0 ? n : undefined);

/**
 * Issue 33: the cost OpenRouter billed, from a streamed `usage` (`cost`, `is_byok`, `cost_details`): without BYOK
 * `cost`; with BYOK `cost` plus the upstream cost (given, or prompt + completions). Undefined when the accounting is
 * missing or not a finite number ≥ 0.
 * @param {unknown} usage @returns {number | undefined}
 */
export const openrouterBilledCost = (usage) => {
  const cost = valid(get(usage, "cost"));
  if (cost === undefined) return undefined;
  const byok = get(usage, "is_byok");
  if (byok === false) return cost;
  if (byok !== true) return undefined;
  const details = get(usage, "cost_details");
  if (!details) return undefined;
  let upstream = get(details, "upstream_inference_cost");
  if (upstream === null) {
    const prompt = valid(get(details, "upstream_inference_prompt_cost"));
    const completions = valid(get(details, "upstream_inference_completions_cost"));
    if (prompt === undefined || completions === undefined) return undefined;
    upstream = prompt + completions;
  }
  upstream = valid(upstream);
  return upstream === undefined ? undefined : cost + upstream;
};

/** `model.compat[key]` as a boolean. @param {object} model @param {string} key @returns {boolean | undefined} */
export const compatBool = (model, key) => asBool(get(get(model, "compat"), key));

/** `model.compat[key]` as a string. @param {object} model @param {string} key @returns {string | undefined} */
export const compatStr = (model, key) => asStr(get(get(model, "compat"), key));

/** `model.reasoning === true`. @param {object} model @returns {boolean} */
export const modelReasons = (model) => get(model, "reasoning") === true;

/** A token count: finite, floored, negative → 0; else undefined. */
const tokens = (n) => (Number.isFinite(n) ? (n <= 0 ? 0 : Math.floor(n)) : undefined);

/**
 * `est` of P-6.2.7: the UTF-16 length of the messages as JSON (`JSON.stringify`), divided by 4, rounded up.
 * @param {unknown[]} messages @returns {number}
 */
export const estimateTokens = (messages) => Math.ceil(JSON.stringify(messages).length / 4);

/**
 * P-6.2.7 context cap: `contextWindow − est − max(4096, ⌈0.15·est⌉)`, at least 1; undefined when
 * `model.contextWindow` is not positive.
 * @param {object} input @returns {number | undefined}
 */
export const contextCap = (input) => {
  const window = tokens(asF64(get(input.model, "contextWindow")));
  if (!(window > 0)) return undefined;
  const est = estimateTokens(input.messages);
  return Math.max(1, window - est - Math.max(4096, Math.ceil((est * 15) / 100)));
};

const capped = (maxTokens, input) => {
  if (maxTokens === 0) return undefined;
  const cap = contextCap(input);
  return cap === undefined ? maxTokens : Math.min(maxTokens, cap);
};

/**
 * P-6.2.7: `options.maxTokens ?? model.maxTokens`, capped by the context window; undefined (field omitted) when that
 * is 0 or unknown.
 * @param {object} input @returns {number | undefined}
 */
export const maxTokens = (input) =>
  capped(tokens(optionNumber(input.options, "maxTokens") ?? asF64(get(input.model, "maxTokens"))) ?? 0, input);

/**
 * The default budget of a level (`xhigh`, `max` count as `high`).
 * @param {string} level @returns {number}
 */
export const defaultBudget = (level) => ({ minimal: 1024, low: 2048, medium: 8192 })[clampLevel(level)] ?? 16384;

/**
 * P-6.2.7 budget-based thinking (Anthropic, Google): budget = `thinkingBudgets[level]` or the default (after
 * `xhigh`/`max` → `high`); an explicit `options.maxTokens` becomes `min(given + budget, model.maxTokens)`, then the
 * context cap applies; `fallbackMax` stands in for a missing limit; if the limit is ≤ budget, budget =
 * `max(0, limit − 1024)`. `maxTokens` undefined: omit the field.
 * @param {object} input @param {string} level @param {number} [fallbackMax]
 * @returns {{ maxTokens: number | undefined, budget: number }}
 */
export const thinkingLimits = (input, level, fallbackMax) => {
  level = clampLevel(level);
  let budget = tokens(asF64(get(get(input.options, "thinkingBudgets"), level))) ?? defaultBudget(level);
  const modelMax = tokens(asF64(get(input.model, "maxTokens"))) ?? 0;
  const given = tokens(optionNumber(input.options, "maxTokens"));
  const maxTokens =
    // An unknown model limit (0) caps nothing.
    capped(given === undefined ? modelMax : modelMax > 0 ? Math.min(given + budget, modelMax) : given + budget, input) ??
    fallbackMax;
  if (maxTokens !== undefined && maxTokens <= budget) budget = Math.max(0, maxTokens - 1024);
  return { maxTokens, budget };
};

/**
 * The requested thinking level (`options.reasoning`), or undefined for off, missing or unknown.
 * @param {object} options @returns {string | undefined}
 */
export const thinkingLevel = (options) => {
  const level = optionStr(options, "reasoning");
  return THINKING_LEVELS.includes(level) ? level : undefined;
};

/** `xhigh` and `max` → `high`; other levels unchanged. @param {string} level @returns {string} */
export const clampLevel = (level) => (level === "xhigh" || level === "max" ? "high" : level);

/**
 * The provider's name for a level: `model.thinkingLevelMap[level]` when a string, undefined when that entry is `null`
 * (omit), else the level with `xhigh`/`max` → `high`.
 * @param {object} model @param {string} level @returns {string | undefined}
 */
export const mappedEffort = (model, level) => {
  const name = get(get(model, "thinkingLevelMap"), level);
  return typeof name === "string" ? name : name === null ? undefined : clampLevel(level);
};

/**
 * P-6.2.8: `model.samplingParams`, `model.samplingParamsByThinkingLevel[level]` (`"off"` without a level) and
 * `options.samplingParams`, assigned in that order onto `target` (existing keys keep their place).
 * @param {object} target @param {object} input @param {string} [level]
 */
export const mergeSampling = (target, input, level) => {
  const { model, options } = input;
  const byLevel = get(get(model, "samplingParamsByThinkingLevel"), level ?? "off");
  for (const source of [get(model, "samplingParams"), byLevel, get(options, "samplingParams")]) {
    if (!isObject(source)) continue;
    // Defined, not assigned: a `__proto__` key of parsed JSON is a key of the body, never its prototype.
    for (const [key, value] of Object.entries(source)) {
      Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
    }
  }
};

/**
 * Whether header `name` (any case) has a non-blank value after merging `model.headers` and `options.headers` (a later
 * value wins; `null` removes).
 * @param {object} input @param {string} name @returns {boolean}
 */
export const hasHeader = (input, name) => {
  name = name.toLowerCase();
  let found = false;
  for (const headers of [get(input.model, "headers"), get(input.options, "headers")]) {
    if (!isObject(headers)) continue;
    for (const [key, value] of Object.entries(headers)) {
      if (key.toLowerCase() === name) found = typeof value === "string" && value.trim() !== "";
    }
  }
  return found;
};

/** The resolved key, if non-empty. @param {object} input @returns {string | undefined} */
export const apiKey = (input) => input.apiKey || undefined;

/**
 * The first `n` characters (code points) of `text`.
 * @param {string} text @param {number} n @returns {string}
 */
export const firstChars = (text, n) => {
  if (text.length <= n) return text;
  let out = "";
  for (const c of text) {
    if (n-- <= 0) break;
    out += c;
  }
  return out;
};

/**
 * `Invalid JSON in provider stream: <first 200 characters>` (P-6.3.2).
 * @param {string} data @returns {string}
 */
export const invalidJsonMessage = (data) => `Invalid JSON in provider stream: ${firstChars(data, 200)}`;
