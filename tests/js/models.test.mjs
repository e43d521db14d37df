// The model catalogue, agent-loop-wasm/models (issue 42, SPEC §13), on the built package: every entry complete and
// well-formed; the same objects as pi-ai 1.6.0's `getModel` on the fields both have (the deliberate differences
// listed with their reasons); fresh copies; the errors; the data file as scripts/models-catalogue.mjs writes it; each
// provider's entry driving the built-in provider with its key variable against the loopback server; and the prices
// reaching `usage.cost` and `limits.maxCostUsd` for an OpenAI, a Claude and a Gemini model.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { IS_REFERENCE } from "./impl.mjs";
import { drain, startProviderServer, wire } from "./provider-server.mjs";

const T = { timeout: 20_000, skip: IS_REFERENCE && "the model catalogue (issue 42) is agent-loop-wasm's own entry" };
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const models = IS_REFERENCE ? {} : await import("../../pkg/dist/node/models.mjs");
const lib = IS_REFERENCE ? {} : await import("../../pkg/dist/node/index.mjs");
const pi = await import("@earendil-works/pi-ai/compat");
const { calculateCost } = await import("@earendil-works/pi-ai/models");

const server = IS_REFERENCE ? undefined : await startProviderServer();
after(() => server?.close());

const FIELDS = ["id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens"];
/** Each provider's endpoint (P-6.1.6 for the first three), by api where a provider serves two. */
const BASE_URL = {
  openai: { "openai-responses": "https://api.openai.com/v1" },
  anthropic: { "anthropic-messages": "https://api.anthropic.com" },
  google: { "google-generative-ai": "https://generativelanguage.googleapis.com/v1beta" },
  openrouter: { "openai-completions": "https://openrouter.ai/api/v1", "anthropic-messages": "https://openrouter.ai/api" },
  groq: { "openai-completions": "https://api.groq.com/openai/v1" },
  deepseek: { "openai-completions": "https://api.deepseek.com" },
  mistral: { "openai-completions": "https://api.mistral.ai/v1" },
  xai: { "openai-responses": "https://api.x.ai/v1" },
  cerebras: { "openai-completions": "https://api.cerebras.ai/v1" },
};

/** Where an entry deliberately differs from pi-ai's `getModel`, and why. The test fails on any other difference. */
const DIFFERENCES = {
  "mistral/*": {
    fields: ["api", "baseUrl", "compat"],
    why: "pi-ai speaks Mistral's own Conversations API (mistral-conversations); the built-in providers speak its OpenAI-compatible " +
      "Chat Completions at https://api.mistral.ai/v1, which rejects stream_options (422), hence compat.supportsUsageInStreaming false",
  },
};
/** Fields of pi-ai's entries the catalogue leaves out: no built-in provider reads them. */
const OMITTED = ["inputLimits", "promptCache", "type"];

/** The provider → key variable table of SPEC P-6.2.3, read from the spec. */
function keyTable() {
  const spec = readFileSync(`${ROOT}docs/SPEC.md`, "utf8");
  const at = spec.indexOf("**P-6.2.3 Keys**");
  const text = /by `model\.provider`: (.*?)\. Without a key/.exec(spec.slice(at, spec.indexOf("\n- **P-6.2.4", at)).replace(/\s+/g, " "))[1];
  const table = {};
  for (const m of text.matchAll(/\b([a-z]+) `([A-Z_]+)`(?: then `([A-Z_]+)`)?/g)) table[m[1]] = m[2];
  return table;
}

test("M-13.1 every entry is complete and well-formed: limits, modalities, prices of every paid provider, a built-in api, an https base URL", T, () => {
  assert.deepEqual(models.getProviders().sort(), Object.keys(keyTable()).sort(), "the providers are those of SPEC P-6.2.3's key table");
  let count = 0;
  for (const provider of models.getProviders()) {
    const list = models.getModels(provider);
    assert.ok(list.length > 0, provider);
    assert.equal(new Set(list.map((m) => m.id)).size, list.length, `${provider}: ids are unique`);
    for (const m of list) {
      const at = `${provider}/${m.id}`;
      count++;
      for (const f of FIELDS) assert.ok(m[f] !== undefined, `${at} lacks ${f}`);
      assert.equal(m.provider, provider, at);
      assert.ok(typeof m.name === "string" && m.name.length > 0, at);
      assert.ok(lib.BUILTIN_APIS.includes(m.api), `${at}: api ${m.api}`);
      assert.equal(m.baseUrl, BASE_URL[provider][m.api], `${at}: baseUrl`);
      assert.match(m.baseUrl, /^https:\/\/[^/]+/, at);
      assert.equal(typeof m.reasoning, "boolean", at);
      assert.ok(m.input.includes("text") && m.input.every((x) => x === "text" || x === "image"), `${at}: input ${m.input}`);
      assert.ok(Number.isInteger(m.contextWindow) && m.contextWindow > 0, `${at}: contextWindow`);
      assert.ok(Number.isInteger(m.maxTokens) && m.maxTokens > 0, `${at}: maxTokens`);
      assert.ok(m.maxTokens <= m.contextWindow, `${at}: maxTokens ${m.maxTokens} > contextWindow ${m.contextWindow}`);
      const rates = [m.cost, ...(m.cost.tiers ?? [])];
      for (const r of rates) {
        for (const k of ["input", "output", "cacheRead", "cacheWrite"]) assert.ok(Number.isFinite(r[k]) && r[k] >= 0, `${at}: cost.${k}`);
        // Every provider here bills by the token: a free entry would make maxCostUsd silently never stop.
        assert.ok(r.input > 0 && r.output > 0, `${at}: a paid model priced 0`);
      }
      let above = 0;
      for (const tier of m.cost.tiers ?? []) {
        assert.ok(tier.inputTokensAbove > above && tier.inputTokensAbove <= m.contextWindow, `${at}: tiers ascend, within the window`);
        above = tier.inputTokensAbove;
      }
      for (const [level, name] of Object.entries(m.thinkingLevelMap ?? {})) {
        assert.ok(["off", "minimal", "low", "medium", "high", "xhigh", "max"].includes(level) && (name === null || typeof name === "string"), `${at}: thinkingLevelMap.${level}`);
      }
    }
  }
  assert.equal(count, 89);
});

test("M-13.1 the coverage the issue asks for: gpt-4o-mini and GPT-5, Claude Sonnet and Haiku, Gemini 2.5 Flash and Pro, and each OpenAI-compatible host", T, () => {
  const ids = (p) => models.getModels(p).map((m) => m.id);
  for (const id of ["gpt-4o-mini", "gpt-5", "gpt-5-mini", "gpt-5.5"]) assert.ok(ids("openai").includes(id), id);
  for (const id of ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-sonnet-5-5", "claude-haiku-5-5"]) assert.ok(ids("anthropic").includes(id), id);
  for (const id of ["gemini-2.5-flash", "gemini-2.5-pro"]) assert.ok(ids("google").includes(id), id);
  // The api each OpenAI model gets by default is pi-ai's: Responses.
  assert.deepEqual([...new Set(models.getModels("openai").map((m) => m.api))], ["openai-responses"]);
});

test("M-13.1 getModel equals pi-ai 1.6.0's getModel on the fields both have; the differences are the listed ones", T, () => {
  const found = {};
  const omitted = new Set();
  for (const provider of models.getProviders()) {
    for (const m of models.getModels(provider)) {
      const theirs = pi.getModel(provider, m.id);
      assert.ok(theirs, `pi-ai has no ${provider}/${m.id}`);
      for (const k of Object.keys(theirs)) if (!(k in m)) omitted.add(k);
      for (const k of Object.keys(m)) {
        if (!(k in theirs) && k !== "compat") assert.fail(`${provider}/${m.id}: ${k} is not pi-ai's`);
        if (JSON.stringify(m[k]) !== JSON.stringify(theirs[k])) (found[`${provider}/*`] ??= new Set()).add(k);
      }
    }
  }
  const listed = Object.fromEntries(Object.entries(DIFFERENCES).map(([k, v]) => [k, v.fields]));
  assert.deepEqual(Object.fromEntries(Object.entries(found).map(([k, v]) => [k, [...v].sort()])), listed);
  assert.deepEqual([...omitted].sort(), OMITTED);
  // The mistral difference, exactly.
  const ours = models.getModel("mistral", "mistral-large-latest");
  const theirs = pi.getModel("mistral", "mistral-large-latest");
  assert.deepEqual([theirs.api, theirs.baseUrl, theirs.compat], ["mistral-conversations", "https://api.mistral.ai", undefined]);
  assert.deepEqual([ours.api, ours.baseUrl, ours.compat], ["openai-completions", "https://api.mistral.ai/v1", { supportsUsageInStreaming: false }]);
});

test("M-13.2 each call returns a fresh object: a caller's changes never reach the catalogue", T, () => {
  const a = models.getModel("openai", "gpt-4o-mini");
  assert.notEqual(a, models.getModel("openai", "gpt-4o-mini"));
  a.cost.input = 99;
  a.input.push("audio");
  a.baseUrl = "http://127.0.0.1:1";
  const list = models.getModels("openai");
  list[list.findIndex((m) => m.id === "gpt-4o-mini")].cost.output = 99;
  list.length = 0;
  models.getProviders().length = 0;
  const fresh = models.getModel("openai", "gpt-4o-mini");
  assert.deepEqual([fresh.cost.input, fresh.cost.output, fresh.input, fresh.baseUrl], [0.15, 0.6, ["text", "image"], "https://api.openai.com/v1"]);
  assert.equal(models.getModels("openai").length, 21);
  assert.equal(models.getProviders().length, 9);
});

test("M-13.3 an unknown id names the closest ids, an unknown provider the providers; non-strings are TypeErrors", T, () => {
  const PROVIDERS = '"openai", "anthropic", "google", "openrouter", "groq", "deepseek", "mistral", "xai", "cerebras"';
  assert.throws(() => models.getModel("openai", "gpt-4o-mni"),
    { name: "Error", message: 'getModel: no model "gpt-4o-mni" for provider "openai"; did you mean "gpt-4o-mini"?' });
  assert.throws(() => models.getModel("anthropic", "claude-sonnet-4.5"),
    { name: "Error", message: 'getModel: no model "claude-sonnet-4.5" for provider "anthropic"; did you mean "claude-sonnet-4-5"?' });
  assert.throws(() => models.getModel("openai", "gpt-5-nan0"),
    { name: "Error", message: 'getModel: no model "gpt-5-nan0" for provider "openai"; did you mean "gpt-5-nano"?' });
  assert.throws(() => models.getModel("openai", "GPT-5"),
    { name: "Error", message: 'getModel: no model "GPT-5" for provider "openai"; did you mean "gpt-5"?' });
  assert.throws(() => models.getModel("openai", "gpt-5.3"),
    { name: "Error", message: 'getModel: no model "gpt-5.3" for provider "openai"; did you mean "gpt-5.5", "gpt-5.4" or "gpt-5.2"?' });
  assert.throws(() => models.getModel("deepseek", "llama-3"),
    { name: "Error", message: 'getModel: no model "llama-3" for provider "deepseek"; its models are "deepseek-v4-pro", "deepseek-flash"' });
  assert.throws(() => models.getModel("opnai", "gpt-4o-mini"),
    { name: "Error", message: `getModel: no provider "opnai"; did you mean "openai"? The providers are ${PROVIDERS}` });
  assert.throws(() => models.getModels("OpenAI"),
    { name: "Error", message: `getModels: no provider "OpenAI"; did you mean "openai"? The providers are ${PROVIDERS}` });
  assert.throws(() => models.getModels("azure"),
    { name: "Error", message: `getModels: no provider "azure"; the providers are ${PROVIDERS}` });
  assert.throws(() => models.getModel("constructor", "x"),
    { name: "Error", message: `getModel: no provider "constructor"; the providers are ${PROVIDERS}` });
  assert.throws(() => models.getModel(undefined, "gpt-4o-mini"),
    { name: "TypeError", message: 'getModel: provider must be a string (one of "openai", "anthropic", "google", "openrouter", "groq", "deepseek", "mistral", "xai" or "cerebras")' });
  assert.throws(() => models.getModel("openai", 4), { name: "TypeError", message: "getModel: modelId must be a string" });
});

test("M-13.4 the data file and the declarations' unions are what scripts/models-catalogue.mjs writes from pi-ai's catalogue", T, () => {
  const out = execFileSync(process.execPath, ["scripts/models-catalogue.mjs", "--check"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(out, "models-catalogue: up to date\n");
  const dts = readFileSync(`${ROOT}pkg/models.d.ts`, "utf8");
  for (const provider of models.getProviders()) {
    for (const m of models.getModels(provider)) assert.ok(dts.includes(`    ${JSON.stringify(m.id)}: ${JSON.stringify(m.api)};`), `models.d.ts lacks ${provider}/${m.id}`);
  }
});

test("M-13.5 the main entry imports nothing of the catalogue (its files and bundle are unchanged)", T, () => {
  const graph = (file, pattern) => {
    const seen = new Set();
    const visit = (f) => {
      if (seen.has(f)) return;
      seen.add(f);
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(pattern)) if (m[1].startsWith(".")) visit(fileURLToPath(new URL(m[1], `file://${f}`)));
    };
    visit(fileURLToPath(new URL(file, `file://${ROOT}`)));
    return [...seen].map((f) => f.slice(ROOT.length));
  };
  const esm = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?(?:from\s*)?["']([^"']+)["']/g;
  const web = graph("pkg/dist/web/index.js", esm);
  const node = graph("pkg/dist/node/index.cjs", /require\(["']([^"']+)["']\)/g);
  assert.ok(web.includes("pkg/dist/web/api.js") && node.includes("pkg/dist/node/api.js"), "the walk follows imports");
  assert.deepEqual([...web, ...node].filter((f) => /models/.test(f)), []);
  // And the entry itself loads its data file and the error classes only (E-8.6), no wasm.
  assert.deepEqual(graph("pkg/dist/web/models.js", esm), ["pkg/dist/web/models.js", "pkg/dist/web/models-data.js", "pkg/dist/web/errors.js"]);
});

// ---------------------------------------------------------------------------------------------------------------
// The entries against the built-in providers (loopback server, SPEC §6)
// ---------------------------------------------------------------------------------------------------------------

/** The request path and auth header of each api (P-6.6 to P-6.9). */
const WIRE = {
  "openai-completions": { path: "/chat/completions", auth: ["authorization", (k) => `Bearer ${k}`] },
  "openai-responses": { path: "/responses", auth: ["authorization", (k) => `Bearer ${k}`] },
  "anthropic-messages": { path: "/v1/messages", auth: ["x-api-key", (k) => k] },
  "google-generative-ai": { path: (id) => `/models/${id}:streamGenerateContent?alt=sse`, auth: ["x-goog-api-key", (k) => k] },
};

test("M-13.1/P-6.2.3 each provider's first entry of each api streams through its built-in provider with its provider's key variable", T, async () => {
  const table = keyTable();
  const firsts = models.getProviders().flatMap((p) => [...new Map(models.getModels(p).reverse().map((m) => [m.api, m])).values()]);
  assert.equal(firsts.length, 10, "nine providers, OpenRouter with two apis");
  for (const { provider, id } of firsts) {
    const model = models.getModel(provider, id);
    const r = server.route(`wire-${provider}-${model.api}`);
    r.reply({ sse: wire[model.api].text("ok") });
    const key = `sk-${provider}`;
    const run = await drain(lib.streamBuiltin({ ...model, baseUrl: r.baseUrl }, { messages: [{ role: "user", content: "hi", timestamp: 1 }] },
      { env: { [table[provider]]: key } }));
    assert.equal(run.result.stopReason, "stop", `${provider}: ${run.result.errorMessage}`);
    const request = r.requests[0];
    const { path, auth } = WIRE[model.api];
    assert.equal(request.path, typeof path === "function" ? path(model.id) : path, provider);
    assert.equal(request.headers[auth[0]], auth[1](key), provider);
    if (model.api !== "google-generative-ai") assert.equal(request.body.model, model.id, provider);
    // Mistral's Chat Completions refuses stream_options; the others ask for usage in the stream.
    if (model.api === "openai-completions") assert.equal("stream_options" in request.body, provider !== "mistral", provider);
  }
});

const TOOL = {
  name: "lookup",
  label: "lookup",
  description: "looks up",
  parameters: { type: "object", properties: {} },
  async execute() {
    return { content: [{ type: "text", text: "found" }], details: {} };
  },
};

/**
 * Three models, three wire formats, one usage each: 100,000 input tokens, 20,000 read from the cache, 10,000 written
 * to it (Anthropic), 30,000 output tokens. `cost` is the total the catalogue's prices give, written out.
 */
const PRICED = [
  {
    provider: "openai", id: "gpt-4o-mini", cost: 0.0345, message: "Run stopped: cost limit of $0.02 reached ($0.03 spent)", max: 0.02,
    usage: { input: 100000, cacheRead: 20000, cacheWrite: 0, output: 30000 },
    reply: (extra) => wire["openai-responses"].reply({ ...extra, usage: { input_tokens: 120000, input_tokens_details: { cached_tokens: 20000 }, output_tokens: 30000, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 150000 } }),
  },
  {
    provider: "anthropic", id: "claude-sonnet-4-5", cost: 0.7935, message: "Run stopped: cost limit of $0.50 reached ($0.79 spent)", max: 0.5,
    usage: { input: 100000, cacheRead: 20000, cacheWrite: 10000, output: 30000 },
    reply: (extra) => wire["anthropic-messages"].reply({ ...extra, usage: { input_tokens: 100000, cache_read_input_tokens: 20000, cache_creation_input_tokens: 10000, output_tokens: 30000 } }),
  },
  {
    provider: "google", id: "gemini-2.5-flash", cost: 0.1056, message: "Run stopped: cost limit of $0.10 reached ($0.11 spent)", max: 0.1,
    usage: { input: 100000, cacheRead: 20000, cacheWrite: 0, output: 30000 },
    reply: (extra) => wire["google-generative-ai"].reply({ ...extra, usage: { promptTokenCount: 120000, cachedContentTokenCount: 20000, candidatesTokenCount: 25000, thoughtsTokenCount: 5000, totalTokenCount: 150000 } }),
  },
];

for (const c of PRICED) {
  test(`M-13.6 ${c.provider}/${c.id}: a run's usage.cost is the tokens times the catalogue's prices (as pi-ai's calculateCost), totals and maxCostUsd use it`, T, async () => {
    const model = models.getModel(c.provider, c.id);
    const r = server.route(`cost-${c.provider}`);
    r.reply({ sse: c.reply({ text: "done" }) });
    const stream = lib.agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] },
      { model: { ...model, baseUrl: r.baseUrl }, convertToLlm: (m) => m, apiKey: "sk-test" });
    const messages = await stream.result();
    const { usage } = messages.at(-1);
    assert.equal(messages.at(-1).stopReason, "stop", messages.at(-1).errorMessage);
    assert.deepEqual([usage.input, usage.cacheRead, usage.cacheWrite, usage.output], [c.usage.input, c.usage.cacheRead, c.usage.cacheWrite, c.usage.output]);
    const p = model.cost;
    const expected = {
      input: (p.input / 1e6) * c.usage.input,
      output: (p.output / 1e6) * c.usage.output,
      cacheRead: (p.cacheRead / 1e6) * c.usage.cacheRead,
      cacheWrite: (p.cacheWrite / 1e6) * c.usage.cacheWrite,
    };
    assert.deepEqual(usage.cost, { ...expected, total: expected.input + expected.output + expected.cacheRead + expected.cacheWrite, totalFromProvider: false });
    assert.ok(usage.cost.total > 0);
    assert.equal(Number(usage.cost.total.toFixed(12)), c.cost);
    // Side by side: pi-ai's own arithmetic over its own entry gives the same figures.
    const theirs = calculateCost(pi.getModel(c.provider, c.id), { ...structuredClone(usage), cost: {} });
    assert.deepEqual(theirs, usage.cost);
    assert.equal((await stream.totalUsage()).cost.total, usage.cost.total);

    // The limit: the first reply asks for a tool and costs more than maxCostUsd, so the batch is refused (L-3.12.4).
    const r2 = server.route(`limit-${c.provider}`);
    r2.reply({ sse: c.reply({ calls: [{ id: "call_1", name: "lookup", args: {} }] }) });
    const limited = lib.agentLoop([{ role: "user", content: "look it up", timestamp: 1 }], { messages: [], tools: [TOOL] },
      { model: { ...model, baseUrl: r2.baseUrl }, convertToLlm: (m) => m, apiKey: "sk-test", limits: { maxCostUsd: c.max } });
    const events = [];
    for await (const e of limited) events.push(e);
    const end = events.at(-1);
    assert.equal(end.type, "agent_end");
    assert.deepEqual(end.limitReached, { limit: "maxCostUsd", scope: "run", max: c.max, value: usage.cost.total, message: c.message });
    const result = end.messages.find((m) => m.role === "toolResult");
    assert.deepEqual([result.isError, result.content[0].text], [true, `Tool call "lookup" was not executed: ${c.message}`]);
    assert.equal(r2.requests.length, 1, "no second request");
  });
}

test("M-13.6/§6.10 a tiered entry is priced at its tier above the threshold, as pi-ai's calculateCost (claude-haiku-5-5 above 100k input)", T, async () => {
  const model = models.getModel("anthropic", "claude-haiku-5-5");
  assert.equal(model.cost.tiers[0].inputTokensAbove, 100000);
  const r = server.route("tiers");
  const usage = (input) => ({ input_tokens: input, cache_read_input_tokens: 30000, cache_creation_input_tokens: 0, output_tokens: 2000 });
  r.reply({ sse: wire["anthropic-messages"].reply({ text: "below", usage: usage(70000) }) }, { sse: wire["anthropic-messages"].reply({ text: "above", usage: usage(70001) }) });
  const costs = [];
  for (let i = 0; i < 2; i++) {
    const message = await lib.streamBuiltin({ ...model, baseUrl: r.baseUrl }, { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "sk-test" }).result();
    assert.equal(message.stopReason, "stop", message.errorMessage);
    assert.deepEqual(calculateCost(pi.getModel("anthropic", "claude-haiku-5-5"), { ...structuredClone(message.usage), cost: {} }), message.usage.cost);
    costs.push(message.usage.cost);
  }
  // 70,000 + 30,000 input tokens is at the threshold (base prices), one more is above it (the tier's).
  const [base, tier] = [model.cost, model.cost.tiers[0]];
  assert.deepEqual([costs[0].input, costs[0].output], [(base.input / 1e6) * 70000, (base.output / 1e6) * 2000]);
  assert.deepEqual([costs[1].input, costs[1].output, costs[1].cacheRead], [(tier.input / 1e6) * 70001, (tier.output / 1e6) * 2000, (tier.cacheRead / 1e6) * 30000]);
});

test("M-13.6 an Agent with a catalogue model reports the cost in state.totalUsage (and its totalLimits stop the next prompt)", T, async () => {
  const model = models.getModel("openai", "gpt-4o-mini");
  const r = server.route("agent-cost");
  r.reply({ sse: PRICED[0].reply({ text: "one" }) });
  const agent = new lib.Agent({ initialState: { model: { ...model, baseUrl: r.baseUrl } }, getApiKey: () => "sk-test", totalLimits: { maxCostUsd: 0.03 } });
  await agent.prompt("hi");
  assert.equal(Number(agent.state.totalUsage.cost.total.toFixed(12)), 0.0345);
  await assert.rejects(agent.prompt("again"), {
    message: "Agent.prompt: agent cost limit of $0.03 reached ($0.03 spent in total); raise agent.totalLimits.maxCostUsd to run again",
  });
  assert.equal(r.requests.length, 1);
});

