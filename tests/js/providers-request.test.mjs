// Built-in providers, the request side (SPEC P-6.1.6, P-6.2.1, P-6.2.3, P-6.2.7, P-6.2.8, P-6.5, §6.6–§6.9): what
// reaches a real loopback server — URL, method, headers (auth, merge order, null removal) and the exact JSON body for
// a transcript with a system prompt, tools, a tool call with its result and images (model with and without image
// input) — plus keys from options.env / process.env, reasoning, tool choice, session, cache and sampling fields.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { APIS, AUTH, PATH, drain, emittedText, providerModel, startProviderServer, wire } from "./provider-server.mjs";
import { P, bug, clearKeyEnv, ctx, sentHeaders, streamBuiltin, userMsg, withEnv } from "./providers-common.mjs";

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());

const KEY = "sk-test-7f3a9c";
const IMG = { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" };
const DATA_URL = "data:image/png;base64,iVBORw0KGgo=";
const READ = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};
const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** system prompt + tool, user text + image, assistant text + tool call (same model), result text + image, user. */
function transcript(api) {
  const m = providerModel(api, "");
  return {
    messages: [
      { role: "system", content: "You are terse.", toolsAdded: [READ], timestamp: 1 },
      userMsg([{ type: "text", text: "Look at this" }, IMG], 2),
      {
        role: "assistant",
        content: [{ type: "text", text: "Reading." }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }],
        api, provider: m.provider, model: m.id, usage: ZERO, stopReason: "toolUse", timestamp: 3,
      },
      { role: "toolResult", toolCallId: "call_1", toolName: "read", content: [{ type: "text", text: "file body" }, IMG], isError: false, timestamp: 4 },
      userMsg("Thanks", 5),
    ],
  };
}

/** One request through the server; returns { request, run }. */
async function send(api, { model = {}, options = {}, context = ctx(), reply } = {}) {
  const r = server.route();
  r.reply({ sse: reply ?? wire[api].text("ok") });
  const run = await drain(streamBuiltin(providerModel(api, r.baseUrl, model), context, { apiKey: KEY, ...options }));
  return { request: r.requests[0], run, route: r };
}

const DEFAULT_HEADERS = {
  "openai-completions": { "content-type": "application/json", authorization: `Bearer ${KEY}` },
  "openai-responses": { "content-type": "application/json", authorization: `Bearer ${KEY}` },
  "anthropic-messages": {
    "content-type": "application/json",
    "anthropic-version": "2023-06-01",
    "anthropic-dangerous-direct-browser-access": "true",
    "x-api-key": KEY,
  },
  "google-generative-ai": { "content-type": "application/json", "x-goog-api-key": KEY },
};

const omitted = "(image omitted: model does not support images)";
const toolOmitted = "(tool image omitted: model does not support images)";
const READ_PARAMS = READ.parameters;

/** §6.6–§6.9: the expected body for transcript(api), options {temperature: 0.5, toolChoice: "auto"}. */
const BODY = {
  "openai-completions": (images) => ({
    model: "gpt-test",
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: [{ type: "text", text: "Look at this" }, images ? { type: "image_url", image_url: { url: DATA_URL } } : { type: "text", text: omitted }] },
      { role: "assistant", content: "Reading.", tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: images ? "file body" : `file body\n${toolOmitted}` },
      ...(images ? [{ role: "user", content: [{ type: "text", text: "Tool result image:" }, { type: "image_url", image_url: { url: DATA_URL } }] }] : []),
      { role: "user", content: "Thanks" },
    ],
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: 8000,
    temperature: 0.5,
    tools: [{ type: "function", function: { name: "read", description: "Read a file", parameters: READ_PARAMS } }],
    tool_choice: "auto",
  }),
  "openai-responses": (images) => ({
    model: "gpt-test",
    input: [
      { role: "system", content: "You are terse." },
      { role: "user", content: [{ type: "input_text", text: "Look at this" }, images ? { type: "input_image", detail: "auto", image_url: DATA_URL } : { type: "input_text", text: omitted }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Reading.", annotations: [] }], status: "completed", id: "msg_1" },
      { type: "function_call", call_id: "call_1", name: "read", arguments: '{"path":"a.txt"}' },
      {
        type: "function_call_output",
        call_id: "call_1",
        // pi-ai's convertToolResultOutput: text, or input parts when the model takes images
        output: images ? [{ type: "input_text", text: "file body" }, { type: "input_image", detail: "auto", image_url: DATA_URL }] : `file body\n${toolOmitted}`,
      },
      { role: "user", content: [{ type: "input_text", text: "Thanks" }] },
    ],
    stream: true,
    store: false,
    max_output_tokens: 8000,
    temperature: 0.5,
    tools: [{ type: "function", name: "read", description: "Read a file", parameters: READ_PARAMS, strict: false }],
    tool_choice: "auto",
  }),
  "anthropic-messages": (images) => ({
    model: "claude-test",
    max_tokens: 8000,
    stream: true,
    system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
    messages: [
      { role: "user", content: [{ type: "text", text: "Look at this" }, images ? { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } } : { type: "text", text: omitted }] },
      { role: "assistant", content: [{ type: "text", text: "Reading." }, { type: "tool_use", id: "call_1", name: "read", input: { path: "a.txt" } }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "call_1",
            content: images ? [{ type: "text", text: "file body" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] : `file body\n${toolOmitted}`,
            is_error: false,
          },
          { type: "text", text: "Thanks", cache_control: { type: "ephemeral" } },
        ],
      },
    ],
    temperature: 0.5,
    tools: [{ name: "read", description: "Read a file", input_schema: { type: "object", properties: READ_PARAMS.properties, required: ["path"] } }],
    tool_choice: { type: "auto" },
  }),
  "google-generative-ai": (images) => ({
    contents: [
      { role: "user", parts: [{ text: "Look at this" }, images ? { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } } : { text: omitted }] },
      { role: "model", parts: [{ text: "Reading." }, { functionCall: { name: "read", args: { path: "a.txt" } } }] },
      ...(images
        ? [
            { role: "user", parts: [{ functionResponse: { name: "read", response: { output: "file body" } } }] },
            { role: "user", parts: [{ text: "Tool result image:" }, { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] },
          ]
        : [{ role: "user", parts: [{ functionResponse: { name: "read", response: { output: `file body\n${toolOmitted}` } } }] }]),
      { role: "user", parts: [{ text: "Thanks" }] },
    ],
    systemInstruction: { parts: [{ text: "You are terse." }] },
    tools: [{ functionDeclarations: [{ name: "read", description: "Read a file", parametersJsonSchema: READ_PARAMS }] }],
    toolConfig: { functionCallingConfig: { mode: "AUTO" } },
    generationConfig: { maxOutputTokens: 8000, temperature: 0.5 },
  }),
};

for (const api of APIS) {
  for (const images of [true, false]) {
    test(`P-6.5/§6 ${api}: POST ${PATH[api]} with the provider headers and the exact body (${images ? "image" : "text-only"} model)`, P, async () => {
      const { request, run } = await send(api, {
        model: { input: images ? ["text", "image"] : ["text"] },
        options: { temperature: 0.5, toolChoice: "auto" },
        context: transcript(api),
      });
      assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
      assert.equal(request.method, "POST");
      assert.equal(request.path, PATH[api]);
      assert.deepEqual(sentHeaders(request), DEFAULT_HEADERS[api]);
      assert.equal(request.raw, JSON.stringify(request.body), "the body is compact JSON");
      assert.deepEqual(request.body, BODY[api](images));
    });
  }
}

// ------------------------------------------------------------------------------------------------------------------
// Headers: provider defaults < model.headers < options.headers, null removes (any letter case)
// ------------------------------------------------------------------------------------------------------------------

for (const api of APIS) {
  test(`P-6.2.1 ${api}: headers merge provider defaults < model.headers < options.headers; null removes`, P, async () => {
    const [authName, authValue] = AUTH[api];
    const { request } = await send(api, {
      model: { headers: { "X-Model": "m", "X-Both": "model", "X-Drop": "m", "X-Late-Drop": "m" } },
      options: {
        headers: { "x-both": "options", "X-Drop": null, "x-opt": "o", "Content-Type": "application/json; charset=utf-8", "x-late-drop": null },
      },
    });
    const want = { ...DEFAULT_HEADERS[api], "content-type": "application/json; charset=utf-8", "x-model": "m", "x-both": "options", "x-opt": "o" };
    assert.deepEqual(sentHeaders(request), want);
    assert.equal(request.headers[authName], authValue(KEY));
  });
}

test("P-6.2.1 options.headers replace and remove provider defaults (authorization, anthropic headers)", P, async () => {
  const openai = await send("openai-completions", { options: { headers: { Authorization: "Bearer from-header" } } });
  assert.equal(openai.request.headers.authorization, "Bearer from-header");
  const anthropic = await send("anthropic-messages", {
    model: { headers: { "anthropic-version": "2099-01-01" } },
    options: { headers: { "anthropic-dangerous-direct-browser-access": null, "anthropic-beta": "x-1" } },
  });
  assert.deepEqual(sentHeaders(anthropic.request), {
    "content-type": "application/json",
    "anthropic-version": "2099-01-01",
    "x-api-key": KEY,
    "anthropic-beta": "x-1",
  });
});

// ------------------------------------------------------------------------------------------------------------------
// Keys (P-6.2.3)
// ------------------------------------------------------------------------------------------------------------------

test("P-6.2.3 OpenAI APIs without any key send no Authorization (local servers)", P, async () => {
  for (const api of ["openai-completions", "openai-responses"]) {
    const r = server.route();
    r.reply({ sse: wire[api].text("local") });
    const run = await drain(streamBuiltin(providerModel(api, r.baseUrl), ctx(), {}));
    assert.equal(run.result.stopReason, "stop");
    assert.deepEqual(sentHeaders(r.requests[0]), { "content-type": "application/json" });
  }
});

test("P-6.2.3 Anthropic and Google without a key: a lone error `No API key for provider: <provider>`, no request", P, async () => {
  for (const [api, provider] of [["anthropic-messages", "anthropic"], ["google-generative-ai", "google"]]) {
    const r = server.route();
    const run = await drain(streamBuiltin(providerModel(api, r.baseUrl), ctx(), {}));
    assert.deepEqual(run.types, ["error"]);
    assert.equal(run.result.stopReason, "error");
    assert.equal(run.result.errorMessage, `No API key for provider: ${provider}`);
    assert.equal(r.requests.length, 0);
  }
});

test("P-6.2.3 OpenAI APIs to a known cloud service without a key: a lone error `No API key for provider: <provider>`, no request", P, async () => {
  const cases = [
    ["openai-responses", "openai", "https://api.openai.com/v1"],
    ["openai-completions", "openai", undefined],
    ["openai-completions", "groq", "https://api.groq.com/openai/v1"],
    ["openai-completions", "openrouter", "https://openrouter.ai/api/v1"],
    ["openai-completions", "mistral", "https://API.Mistral.ai/v1/"],
  ];
  for (const [api, provider, baseUrl] of cases) {
    const calls = [];
    const fetch = (url) => (calls.push(url), Promise.reject(new TypeError("offline in tests")));
    const model = { ...providerModel(api, baseUrl), provider };
    if (baseUrl === undefined) delete model.baseUrl;
    const run = await drain(streamBuiltin(model, ctx(), { fetch, maxRetries: 0 }));
    assert.deepEqual(run.types, ["error"], `${provider} ${baseUrl}`);
    assert.equal(run.result.errorMessage, `No API key for provider: ${provider}`);
    assert.deepEqual(calls, [], "nothing is sent");
  }
  // An Authorization header of the caller's own stands in for the key (a gateway that authenticates the request).
  const calls = [];
  const fetch = (url, init) => (calls.push(init.headers.authorization ?? init.headers.Authorization), Promise.reject(new TypeError("offline in tests")));
  const run = await drain(streamBuiltin(providerModel("openai-responses", "https://api.openai.com/v1"), ctx(), { fetch, maxRetries: 0, headers: { Authorization: "Bearer gateway" } }));
  assert.equal(run.result.errorMessage, "offline in tests");
  assert.equal(calls.length, 1);
});

test("P-6.2.3 Anthropic without a key but with an auth header in options.headers sends the request", P, async () => {
  const r = server.route();
  r.reply({ sse: wire["anthropic-messages"].text("ok") });
  const run = await drain(streamBuiltin(providerModel("anthropic-messages", r.baseUrl), ctx(), { headers: { "x-api-key": "hdr-key" } }));
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  assert.equal(r.requests[0].headers["x-api-key"], "hdr-key");
});

const ENV_CASES = [
  ["openai-completions", "openai", "OPENAI_API_KEY"],
  ["openai-responses", "openai", "OPENAI_API_KEY"],
  ["anthropic-messages", "anthropic", "ANTHROPIC_API_KEY"],
  ["google-generative-ai", "google", "GEMINI_API_KEY"],
  ["google-generative-ai", "google", "GOOGLE_API_KEY"],
  ["openai-completions", "groq", "GROQ_API_KEY"],
  ["openai-completions", "openrouter", "OPENROUTER_API_KEY"],
  ["openai-completions", "xai", "XAI_API_KEY"],
  ["openai-completions", "deepseek", "DEEPSEEK_API_KEY"],
  ["openai-completions", "mistral", "MISTRAL_API_KEY"],
  ["openai-completions", "cerebras", "CEREBRAS_API_KEY"],
];

test("P-6.2.3 keys from options.env[VAR] and from process.env, by model.provider", P, async () => {
  for (const [api, provider, variable] of ENV_CASES) {
    const [authName, authValue] = AUTH[api];
    for (const where of ["options.env", "process.env"]) {
      const key = `k-${where}-${variable}`;
      const r = server.route();
      r.reply({ sse: wire[api].text("ok") });
      const options = where === "options.env" ? { env: { [variable]: key } } : {};
      const run = await withEnv(where === "process.env" ? { [variable]: key } : {}, () =>
        drain(streamBuiltin(providerModel(api, r.baseUrl, { provider }), ctx(), options)),
      );
      assert.equal(run.result.stopReason, "stop", `${variable} via ${where}: ${run.result.errorMessage}`);
      assert.equal(r.requests[0].headers[authName], authValue(key), `${variable} via ${where}`);
    }
  }
});

test("P-6.2.3 precedence: options.apiKey > options.env > process.env; GEMINI_API_KEY before GOOGLE_API_KEY", P, async () => {
  const api = "anthropic-messages";
  const via = async (options, env) => {
    const r = server.route();
    r.reply({ sse: wire[api].text("ok") });
    await withEnv(env, () => drain(streamBuiltin(providerModel(api, r.baseUrl), ctx(), options)));
    return r.requests[0].headers["x-api-key"];
  };
  assert.equal(await via({ apiKey: "a", env: { ANTHROPIC_API_KEY: "b" } }, { ANTHROPIC_API_KEY: "c" }), "a");
  assert.equal(await via({ env: { ANTHROPIC_API_KEY: "b" } }, { ANTHROPIC_API_KEY: "c" }), "b");
  assert.equal(await via({ apiKey: "", env: {} }, { ANTHROPIC_API_KEY: "c" }), "c");
  const r = server.route();
  r.reply({ sse: wire["google-generative-ai"].text("ok") });
  await drain(streamBuiltin(providerModel("google-generative-ai", r.baseUrl), ctx(), { env: { GOOGLE_API_KEY: "g2", GEMINI_API_KEY: "g1" } }));
  assert.equal(r.requests[0].headers["x-goog-api-key"], "g1");
});

const KEY_VAR = {
  "openai-completions": "OPENAI_API_KEY",
  "openai-responses": "OPENAI_API_KEY",
  "anthropic-messages": "ANTHROPIC_API_KEY",
  "google-generative-ai": "GEMINI_API_KEY",
};

test("P-6.2.3 a key never appears in events or errors (success, HTTP error, network error, abort)", P, async () => {
  const secret = "sk-SECRET-do-not-leak-0042";
  for (const api of APIS) {
    const runs = [];
    const r = server.route();
    r.reply(
      { sse: wire[api].reply({ text: "hello", calls: [{ id: "c1", name: "read", args: { path: "x" } }] }) },
      { status: 401, body: { error: { message: "invalid x-api-key" } } },
      { dropBeforeHeaders: true },
      { sse: wire[api].text("a long answer that is cut"), stallAfter: 60 },
    );
    const model = providerModel(api, r.baseUrl);
    runs.push(await drain(streamBuiltin(model, ctx(), { apiKey: secret })));
    runs.push(await drain(streamBuiltin(model, ctx(), { env: { [KEY_VAR[api]]: secret } })));
    runs.push(await withEnv({ OPENAI_API_KEY: secret, ANTHROPIC_API_KEY: secret, GEMINI_API_KEY: secret }, () => drain(streamBuiltin(model, ctx(), { maxRetries: 0 }))));
    const controller = new AbortController();
    const aborted = drain(streamBuiltin(model, ctx(), { apiKey: secret, signal: controller.signal }));
    await r.waitForRequests(4);
    setTimeout(() => controller.abort(), 20);
    runs.push(await aborted);
    assert.deepEqual(runs.map((x) => x.result.stopReason), ["toolUse", "error", "error", "aborted"]);
    for (const q of r.requests) assert.ok(JSON.stringify(q.headers).includes(secret), "the key was sent");
    for (const x of runs) assert.ok(!emittedText(x).includes(secret), `${api}: key leaked into ${emittedText(x).slice(0, 300)}`);
  }
});

// ------------------------------------------------------------------------------------------------------------------
// Base URL, limits, reasoning, tool choice, session, cache, sampling
// ------------------------------------------------------------------------------------------------------------------

test("P-6.1.6 a trailing / of model.baseUrl is dropped", P, async () => {
  for (const api of APIS) {
    const r = server.route();
    r.reply({ sse: wire[api].text("ok") });
    await drain(streamBuiltin(providerModel(api, `${r.baseUrl}/`), ctx(), { apiKey: KEY }));
    assert.equal(r.requests[0].path, PATH[api]);
  }
});

test("P-6.1.6 an empty or missing baseUrl uses the default base URL (recorded by options.fetch, not sent)", P, async () => {
  const want = {
    "openai-completions": "https://api.openai.com/v1/chat/completions",
    "openai-responses": "https://api.openai.com/v1/responses",
    "anthropic-messages": "https://api.anthropic.com/v1/messages",
    "google-generative-ai": "https://generativelanguage.googleapis.com/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
  };
  for (const api of APIS) {
    for (const baseUrl of [undefined, ""]) {
      const calls = [];
      const fetch = (url, init) => {
        calls.push({ url, method: init.method });
        return Promise.reject(new TypeError("offline in tests"));
      };
      const model = providerModel(api, baseUrl);
      if (baseUrl === undefined) delete model.baseUrl;
      const run = await drain(streamBuiltin(model, ctx(), { apiKey: KEY, fetch, maxRetries: 0 }));
      assert.deepEqual(calls, [{ url: want[api], method: "POST" }]);
      assert.deepEqual(run.types, ["error"]);
      assert.equal(run.result.errorMessage, "offline in tests");
    }
  }
});

test("P-6.6 completions: max_tokens for other providers/base URLs, compat.maxTokensField, no stream_options when unsupported", P, async () => {
  let { request } = await send("openai-completions", { model: { provider: "local" } });
  assert.equal(request.body.max_tokens, 8000);
  assert.equal("max_completion_tokens" in request.body, false);
  ({ request } = await send("openai-completions", { model: { compat: { maxTokensField: "max_tokens", supportsUsageInStreaming: false } } }));
  assert.equal(request.body.max_tokens, 8000);
  assert.equal("stream_options" in request.body, false);
});

test("P-6.2.7 maxTokens: options over model, 0 omits the field (Anthropic: 4096), capped by the context window", P, async () => {
  const field = { "openai-completions": "max_completion_tokens", "openai-responses": "max_output_tokens", "anthropic-messages": "max_tokens" };
  const read = (api, body) => (api === "google-generative-ai" ? body.generationConfig?.maxOutputTokens : body[field[api]]);
  for (const api of APIS) {
    assert.equal(read(api, (await send(api, { options: { maxTokens: 1234 } })).request.body), 1234, api);
    assert.equal(read(api, (await send(api, { model: { maxTokens: 0 } })).request.body), api === "anthropic-messages" ? 4096 : undefined, api);
    // contextWindow 10000, est = ceil(len(JSON of messages)/4): cap = 10000 − est − 4096
    const messages = ctx().messages;
    const est = Math.ceil(JSON.stringify(messages).length / 4);
    assert.equal(read(api, (await send(api, { model: { contextWindow: 10000, maxTokens: 9000 } })).request.body), 10000 - est - 4096, api);
  }
});

test("P-6.2.7 est is the JSON length of the messages as JS writes them: tool-call arguments, non-BMP text, a tiny number", P, async () => {
  const field = { "openai-completions": "max_completion_tokens", "openai-responses": "max_output_tokens", "anthropic-messages": "max_tokens" };
  const read = (api, body) => (api === "google-generative-ai" ? body.generationConfig?.maxOutputTokens : body[field[api]]);
  for (const api of APIS) {
    const { provider, id } = providerModel(api, "");
    const messages = [];
    for (let i = 0; i < 30; i++) {
      // 0.000001 is "0.000001" in JS's JSON (8 characters) where Rust's shortest form is "1e-6" (4)
      messages.push({ role: "user", content: `question ${i} 🦀 “quoted” \n`, timestamp: 0.000001 });
      const call = { type: "toolCall", id: `call_${i}`, name: "look", arguments: { q: `x${i}`, n: [1, 2.5, -0.000001] } };
      messages.push({ role: "assistant", content: [{ type: "text", text: "looking" }, call], api, provider, model: id, stopReason: "toolUse", timestamp: 0.000001 });
      messages.push({ role: "toolResult", toolCallId: `call_${i}`, toolName: "look", content: [{ type: "text", text: `seen ${i}` }], isError: false, timestamp: 0.000001 });
    }
    messages.push({ role: "user", content: "go on", timestamp: 0.000001 });
    const est = Math.ceil(JSON.stringify(messages).length / 4);
    const { request, run } = await send(api, { model: { contextWindow: 20000, maxTokens: 19000 }, context: { systemPrompt: "s", messages } });
    assert.equal(run.final.type, "done", run.final.error?.errorMessage);
    assert.equal(read(api, request.body), 20000 - est - 4096, api);
  }
});

test("§6.6–§6.9 reasoning models with a level: developer role, effort, budgets (P-6.2.7)", P, async () => {
  const model = { reasoning: true, maxTokens: 32000 };
  const context = ctx({ role: "system", content: "Sys.", timestamp: 0 }, userMsg("hi"));
  let { request } = await send("openai-completions", { model, context, options: { reasoning: "medium", temperature: 0.2 } });
  assert.deepEqual(request.body.messages[0], { role: "developer", content: "Sys." });
  assert.equal(request.body.reasoning_effort, "medium");
  ({ request } = await send("openai-completions", { model: { ...model, thinkingLevelMap: { high: "max-effort", low: null } }, context, options: { reasoning: "high" } }));
  assert.equal(request.body.reasoning_effort, "max-effort");
  ({ request } = await send("openai-completions", { model: { ...model, thinkingLevelMap: { low: null } }, context, options: { reasoning: "low" } }));
  assert.equal("reasoning_effort" in request.body, false);
  ({ request } = await send("openai-completions", { model, context, options: { reasoning: "xhigh" } }));
  assert.equal(request.body.reasoning_effort, "high");
  ({ request } = await send("openai-completions", { model: { ...model, provider: "local", compat: { supportsReasoningEffort: false } }, context, options: { reasoning: "high" } }));
  assert.deepEqual(request.body.messages[0], { role: "system", content: "Sys." });
  assert.equal("reasoning_effort" in request.body, false);

  ({ request } = await send("openai-responses", { model, context, options: { reasoning: "medium" } }));
  assert.deepEqual(request.body.input[0], { role: "developer", content: "Sys." });
  assert.deepEqual(request.body.reasoning, { effort: "medium", summary: "auto" });
  assert.deepEqual(request.body.include, ["reasoning.encrypted_content"]);
  ({ request } = await send("openai-responses", { model: { ...model, thinkingLevelMap: { off: "none" } }, context, options: {} }));
  assert.deepEqual(request.body.reasoning, { effort: "none" });
  assert.equal("include" in request.body, false);

  ({ request } = await send("anthropic-messages", { model, context, options: { reasoning: "medium", temperature: 0.2 } }));
  assert.deepEqual(request.body.thinking, { type: "enabled", budget_tokens: 8192 });
  assert.equal(request.body.max_tokens, 32000);
  assert.equal("temperature" in request.body, false, "no temperature with thinking");
  ({ request } = await send("anthropic-messages", { model, context, options: { reasoning: "xhigh", maxTokens: 1000 } }));
  assert.deepEqual([request.body.max_tokens, request.body.thinking.budget_tokens], [1000 + 16384, 16384]);
  ({ request } = await send("anthropic-messages", { model, context, options: { reasoning: "low", thinkingBudgets: { low: 3000 } } }));
  assert.equal(request.body.thinking.budget_tokens, 3000);

  ({ request } = await send("google-generative-ai", { model, context, options: { reasoning: "minimal", maxTokens: 500 } }));
  assert.deepEqual(request.body.generationConfig, { maxOutputTokens: 1524, thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } });
  ({ request } = await send("google-generative-ai", { model: { ...model, maxTokens: 5000 }, context, options: { reasoning: "high" } }));
  assert.deepEqual(request.body.generationConfig, { maxOutputTokens: 5000, thinkingConfig: { includeThoughts: true, thinkingBudget: 5000 - 1024 } });
});

test("§6.6–§6.9 toolChoice, sessionId and cacheRetention", P, async () => {
  const context = { messages: [{ role: "system", content: "Sys.", toolsAdded: [READ], timestamp: 0 }, userMsg("hi")] };
  let { request } = await send("openai-completions", { context, options: { toolChoice: "required", sessionId: "sess-1" } });
  assert.equal(request.body.tool_choice, "required");
  assert.equal("prompt_cache_key" in request.body, false, "prompt_cache_key only on api.openai.com");
  ({ request } = await send("openai-responses", { context, options: { toolChoice: "none", sessionId: "sess-1" } }));
  assert.equal(request.body.tool_choice, "none");
  assert.equal(request.body.prompt_cache_key, "sess-1");
  ({ request } = await send("anthropic-messages", { context, options: { toolChoice: "none", cacheRetention: "long" } }));
  assert.deepEqual(request.body.tool_choice, { type: "none" });
  assert.deepEqual(request.body.system, [{ type: "text", text: "Sys.", cache_control: { type: "ephemeral", ttl: "1h" } }]);
  assert.deepEqual(request.body.messages, [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral", ttl: "1h" } }] }]);
  ({ request } = await send("anthropic-messages", { context, options: { cacheRetention: "none" } }));
  assert.deepEqual(request.body.system, [{ type: "text", text: "Sys." }]);
  assert.deepEqual(request.body.messages, [{ role: "user", content: [{ type: "text", text: "hi" }] }]);
  ({ request } = await send("google-generative-ai", { context, options: { toolChoice: "none" } }));
  assert.deepEqual(request.body.toolConfig, { functionCallingConfig: { mode: "NONE" } });
});

test("P-6.2.8 sampling: model.samplingParams < by level < options.samplingParams, top level (Google: generationConfig)", P, async () => {
  const model = { samplingParams: { top_p: 0.9, top_k: 5 }, samplingParamsByThinkingLevel: { off: { min_p: 0.1 } } };
  const options = { samplingParams: { top_p: 0.5, seed: 7 } };
  for (const api of APIS) {
    const { request } = await send(api, { model, options });
    const target = api === "google-generative-ai" ? request.body.generationConfig : request.body;
    assert.deepEqual([target.top_p, target.top_k, target.min_p, target.seed], [0.5, 5, 0.1, 7], api);
  }
});

test("P-6.5.2 clean-up: error/aborted assistants skipped, unanswered calls get `No result provided`, foreign thinking dropped", P, async () => {
  const foreign = { api: "other-api", provider: "other", model: "other-1", usage: ZERO, timestamp: 2 };
  const context = {
    messages: [
      userMsg("q1"),
      { role: "assistant", content: [{ type: "text", text: "broken" }], ...foreign, stopReason: "error", errorMessage: "x" },
      { role: "assistant", content: [{ type: "thinking", thinking: "secret" }, { type: "text", text: "A" }, { type: "toolCall", id: "t1", name: "read", arguments: {} }], ...foreign, stopReason: "toolUse" },
      userMsg("q2"),
    ],
  };
  const { request } = await send("openai-completions", { context });
  assert.deepEqual(request.body.messages, [
    { role: "user", content: "q1" },
    { role: "assistant", content: "A", tool_calls: [{ id: "t1", type: "function", function: { name: "read", arguments: "{}" } }] },
    { role: "tool", tool_call_id: "t1", content: "No result provided" },
    { role: "user", content: "q2" },
  ]);
});

test("P-6.5.2 Anthropic tool-call ids are normalised ([A-Za-z0-9_-], ≤ 64) together with their results", P, async () => {
  const id = `call.1|item/${"x".repeat(80)}`;
  const norm = `call_1_item_${"x".repeat(80)}`.slice(0, 64);
  const context = {
    messages: [
      userMsg("q"),
      { role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: "p" } }], api: "openai-responses", provider: "openai", model: "gpt-x", usage: ZERO, stopReason: "toolUse", timestamp: 2 },
      { role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: "r" }], isError: true, timestamp: 3 },
    ],
  };
  const { request } = await send("anthropic-messages", { context, options: { cacheRetention: "none" } });
  assert.deepEqual(request.body.messages, [
    { role: "user", content: [{ type: "text", text: "q" }] },
    { role: "assistant", content: [{ type: "tool_use", id: norm, name: "read", input: { path: "p" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: norm, content: "r", is_error: true }] },
  ]);
});

test("P-6.2.4 onPayload receives the body and the model; a returned value replaces the body", P, async () => {
  for (const api of APIS) {
    const seen = [];
    const { request } = await send(api, {
      options: {
        onPayload(payload, model) {
          seen.push([typeof payload, model.id]);
          return { replaced: true, original: Object.keys(payload).length > 0 };
        },
      },
    });
    assert.deepEqual(seen, [["object", providerModel(api, "").id]]);
    assert.deepEqual(request.body, { replaced: true, original: true });
  }
  // undefined keeps the body
  const { request } = await send("openai-completions", { options: { onPayload: () => undefined } });
  assert.equal(request.body.model, "gpt-test");
});

test("P-6.2.4 onPayload may return a promise and mutate the payload in place", P, async () => {
  const { request } = await send("anthropic-messages", {
    options: {
      async onPayload(payload) {
        payload.metadata = { user_id: "u1" };
      },
    },
  });
  assert.deepEqual(request.body.metadata, { user_id: "u1" });
});

test("P-6.2.3 Google without a key but with x-goog-api-key in options.headers sends the request", P, async () => {
  const r = server.route();
  r.reply({ sse: wire["google-generative-ai"].text("ok") });
  const run = await drain(streamBuiltin(providerModel("google-generative-ai", r.baseUrl), ctx(), { headers: { "x-goog-api-key": "hdr-key" } }));
  assert.equal(run.result.stopReason, "stop", run.result.errorMessage);
  assert.equal(r.requests[0].headers["x-goog-api-key"], "hdr-key");
});
