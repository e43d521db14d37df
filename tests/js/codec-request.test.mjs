// The shared request helpers (request.js: key variables, base URLs, token limits, thinking budgets, sampling merge;
// P-6.1.6, P-6.2.3, P-6.2.7, P-6.2.8), the JSON readers (json.js), the stream field checks (strict.js, issue 13) and the
// shared mapper rules of index.js (`mapperFor`, `onUnparsed`, `wireFormat`; P-6.1.1, P-6.3.2, issue 33).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as json from "../../pkg-template/providers/json.js";
import * as strict from "../../pkg-template/providers/strict.js";
import {
  ANTHROPIC_BASE_URL,
  GOOGLE_BASE_URL,
  OPENAI_BASE_URL,
  THINKING_LEVELS,
  apiKey,
  apiKeyEnvVars,
  baseUrl,
  clampLevel,
  compatBool,
  compatStr,
  contextCap,
  defaultBudget,
  estimateTokens,
  firstChars,
  hasHeader,
  invalidJsonMessage,
  isOpenrouter,
  mappedEffort,
  maxTokens,
  mergeSampling,
  missingOpenaiKey,
  modelReasons,
  openrouterBilledCost,
  optionNumber,
  optionStr,
  thinkingLevel,
  thinkingLimits,
} from "../../pkg-template/providers/request.js";

const input = (model, messages = [], options = {}, key) => ({ model, messages, options, apiKey: key });

test("P-6.2.3 key variables per provider (p_6_2_3_key_variables_per_provider)", () => {
  assert.deepEqual(apiKeyEnvVars("openai"), ["OPENAI_API_KEY"]);
  assert.deepEqual(apiKeyEnvVars("google"), ["GEMINI_API_KEY", "GOOGLE_API_KEY"]);
  assert.deepEqual(apiKeyEnvVars("cerebras"), ["CEREBRAS_API_KEY"]);
  assert.deepEqual(apiKeyEnvVars("local"), []);
  // Not an inherited property of a plain object either.
  assert.deepEqual(apiKeyEnvVars("constructor"), []);
});

test("P-6.1.6 base URL trailing slash and default (p_6_1_6_base_url_trailing_slash_and_default)", () => {
  assert.equal(baseUrl({ baseUrl: "http://x/v1/" }, OPENAI_BASE_URL), "http://x/v1");
  assert.equal(baseUrl({ baseUrl: "" }, ANTHROPIC_BASE_URL), "https://api.anthropic.com");
  assert.equal(baseUrl({}, GOOGLE_BASE_URL), GOOGLE_BASE_URL);
  // Every trailing slash goes; a URL of slashes only is empty: the default.
  assert.equal(baseUrl({ baseUrl: "http://x//" }, OPENAI_BASE_URL), "http://x");
  assert.equal(baseUrl({ baseUrl: "///" }, "http://d/"), "http://d");
  assert.equal(baseUrl({ baseUrl: 5 }, OPENAI_BASE_URL), OPENAI_BASE_URL);
  assert.equal(baseUrl(null, OPENAI_BASE_URL), OPENAI_BASE_URL);
});

test("P-6.2.7 max tokens: option, model, zero and cap (p_6_2_7_max_tokens_option_model_zero_and_cap)", () => {
  const model = { maxTokens: 8000, contextWindow: 0 };
  assert.equal(maxTokens(input(model)), 8000);
  assert.equal(maxTokens(input(model, [], { maxTokens: 100 })), 100);
  assert.equal(maxTokens(input(model, [], { maxTokens: 0 })), undefined);
  assert.equal(maxTokens(input({ maxTokens: 0 })), undefined);

  // est = ⌈len/4⌉; cap = window − est − max(4096, ⌈0.15·est⌉).
  const messages = [{ role: "user", content: "x".repeat(100_000) }];
  const est = estimateTokens(messages);
  assert.equal(est, Math.ceil(JSON.stringify(messages).length / 4));
  const cap = 40000 - est - Math.max(4096, Math.ceil((est * 15) / 100));
  assert.equal(maxTokens(input({ maxTokens: 64000, contextWindow: 40000 }, messages)), cap);
  assert.equal(maxTokens(input({ maxTokens: 64000, contextWindow: 100 }, messages)), 1);
});

test("P-6.2.7 estimate counts UTF-16 units of JSON.stringify, rounded up", () => {
  assert.equal(estimateTokens([]), 1); // "[]"
  assert.equal(estimateTokens([{ a: "é😀" }]), Math.ceil('[{"a":"é😀"}]'.length / 4));
  assert.equal('[{"a":"é😀"}]'.length, 13);
  // A lone surrogate is written escaped (6 units), as JSON.stringify writes it.
  assert.equal(estimateTokens(["\ud800"]), Math.ceil('["\\ud800"]'.length / 4));
});

test("P-6.2.7 context cap: window not positive, margin 15% of large estimates, floors", () => {
  assert.equal(contextCap(input({})), undefined);
  assert.equal(contextCap(input({ contextWindow: -5 })), undefined);
  assert.equal(contextCap(input({ contextWindow: "100000" })), undefined);
  assert.equal(contextCap(input({ contextWindow: 0.5 })), undefined); // floored to 0
  assert.equal(contextCap(input({ contextWindow: 10000.9 })), 10000 - 1 - 4096);
  const messages = ["y".repeat(400_000)];
  const est = estimateTokens(messages);
  assert.equal(est, 100_001);
  assert.equal(contextCap(input({ contextWindow: 1_000_000 }, messages)), 1_000_000 - est - Math.ceil(est * 0.15));
  // A fractional / negative option is floored / zero.
  assert.equal(maxTokens(input({ contextWindow: 0 }, [], { maxTokens: 10.7 })), 10);
  assert.equal(maxTokens(input({ maxTokens: 50 }, [], { maxTokens: -3 })), undefined);
  // A non-finite option falls back to the model's limit.
  assert.equal(maxTokens(input({ maxTokens: 50 }, [], { maxTokens: Infinity })), 50);
});

test("P-6.2.7 thinking budgets (p_6_2_7_thinking_budgets)", () => {
  const model = { maxTokens: 32000, contextWindow: 0 };
  assert.deepEqual(thinkingLimits(input(model), "medium"), { maxTokens: 32000, budget: 8192 });
  assert.deepEqual(thinkingLimits(input(model, [], { maxTokens: 1000 }), "xhigh"), { maxTokens: 17384, budget: 16384 });
  assert.deepEqual(thinkingLimits(input(model, [], { maxTokens: 30000 }), "low"), { maxTokens: 32000, budget: 2048 });
  assert.equal(thinkingLimits(input(model, [], { thinkingBudgets: { high: 5000 } }), "max").budget, 5000);
  assert.deepEqual(thinkingLimits(input({ maxTokens: 4000, contextWindow: 0 }), "high"), { maxTokens: 4000, budget: 2976 });
  assert.deepEqual(thinkingLimits(input({ maxTokens: 0 }), "high", 4096), { maxTokens: 4096, budget: 3072 });
});

test("P-6.2.7 thinking budgets: unknown model limit, no fallback, tiny limits, bad budgets", () => {
  // Unknown model limit (0): the given limit plus the budget, uncapped.
  assert.deepEqual(thinkingLimits(input({}, [], { maxTokens: 100 }), "minimal"), { maxTokens: 1124, budget: 1024 });
  // Nothing known, no fallback: field omitted, default budget.
  assert.deepEqual(thinkingLimits(input({}), "low"), { maxTokens: undefined, budget: 2048 });
  // A limit below 1024 leaves no budget.
  assert.deepEqual(thinkingLimits(input({ maxTokens: 500 }), "low"), { maxTokens: 500, budget: 0 });
  // A non-number budget falls back to the default; a negative one is 0.
  assert.equal(thinkingLimits(input({}, [], { thinkingBudgets: { medium: "9" } }), "medium").budget, 8192);
  assert.equal(thinkingLimits(input({}, [], { thinkingBudgets: { medium: -9 } }), "medium").budget, 0);
  // The context cap applies after the sum.
  const messages = ["z".repeat(4000)];
  const limits = thinkingLimits(input({ maxTokens: 64000, contextWindow: 10000 }, messages, { maxTokens: 5000 }), "low");
  const cap = 10000 - estimateTokens(messages) - 4096;
  assert.deepEqual(limits, { maxTokens: cap, budget: 2048 });
  assert.equal(defaultBudget("minimal"), 1024);
  assert.equal(defaultBudget("max"), 16384);
  assert.equal(defaultBudget("other"), 16384);
});

test("P-6.2.8 sampling merge order (p_6_2_8_sampling_merge_order)", () => {
  const model = {
    samplingParams: { top_p: 0.9, top_k: 40 },
    samplingParamsByThinkingLevel: { high: { top_k: 20 }, off: { min_p: 0.1 } },
  };
  const target = { model: "m", top_p: 1 };
  mergeSampling(target, input(model, [], { samplingParams: { top_p: 0.5 } }), "high");
  assert.deepEqual(target, { model: "m", top_p: 0.5, top_k: 20 });
  assert.deepEqual(Object.keys(target), ["model", "top_p", "top_k"]);
  const off = {};
  mergeSampling(off, input(model), undefined);
  assert.deepEqual(off, { top_p: 0.9, top_k: 40, min_p: 0.1 });
  // Sources that are not objects are skipped.
  const none = {};
  mergeSampling(none, input({ samplingParams: [1], samplingParamsByThinkingLevel: "x" }, [], { samplingParams: null }));
  assert.deepEqual(none, {});
});

test("levels and effort mapping (levels_and_effort_mapping)", () => {
  assert.equal(thinkingLevel({ reasoning: "off" }), undefined);
  assert.equal(thinkingLevel({ reasoning: "max" }), "max");
  assert.equal(thinkingLevel({}), undefined);
  assert.equal(thinkingLevel({ reasoning: 3 }), undefined);
  assert.deepEqual(THINKING_LEVELS, ["minimal", "low", "medium", "high", "xhigh", "max"]);
  const model = { thinkingLevelMap: { low: "lite", high: null } };
  assert.equal(mappedEffort(model, "low"), "lite");
  assert.equal(mappedEffort(model, "high"), undefined);
  assert.equal(mappedEffort(model, "xhigh"), "high");
  assert.equal(mappedEffort({ thinkingLevelMap: { medium: 2 } }, "medium"), "medium");
  assert.equal(clampLevel("max"), "high");
  assert.equal(clampLevel("low"), "low");
});

test("auth headers merge with null removal (auth_headers_merge_with_null_removal)", () => {
  const model = { headers: { Authorization: "Bearer x" } };
  assert.equal(hasHeader(input(model), "authorization"), true);
  assert.equal(hasHeader(input(model, [], { headers: { authorization: null } }), "authorization"), false);
  assert.equal(hasHeader(input({}, [], { headers: { "x-api-key": "  " } }), "x-api-key"), false);
  // A later non-blank value wins; the name is matched in any case.
  assert.equal(hasHeader(input({ headers: { "X-Api-Key": "" } }, [], { headers: { "x-api-KEY": "k" } }), "x-api-key"), true);
  assert.equal(hasHeader(input(null, [], null), "x"), false);
});

test("a known cloud host without a key fails before the request (a_known_cloud_host_without_a_key_fails_before_the_request)", () => {
  const openai = { provider: "openai" };
  const missing = (model, options, key, url) => missingOpenaiKey(input(model, [], options, key), url);
  const noKey = "No API key for provider: openai";
  assert.equal(missing(openai, {}, undefined, "https://api.openai.com/v1/responses"), noKey);
  assert.equal(missing(openai, {}, "", "https://API.OpenAI.com:443/v1/chat/completions"), noKey);
  assert.equal(
    missing({ provider: "groq" }, {}, undefined, "https://api.groq.com/openai/v1/chat/completions"),
    "No API key for provider: groq",
  );
  // A key or an Authorization header: sent.
  assert.equal(missing(openai, {}, "sk-1", "https://api.openai.com/v1/responses"), undefined);
  assert.equal(
    missing(openai, { headers: { Authorization: "Bearer t" } }, undefined, "https://api.openai.com/v1/responses"),
    undefined,
  );
  // Any other host: a local server or a proxy, sent without Authorization.
  for (const url of [
    "http://127.0.0.1:8080/v1/responses",
    "http://localhost:11434/v1/chat/completions",
    "https://api.openai.com.example.org/v1",
    "https://proxy.example/api.openai.com/v1",
    "not a url",
  ]) {
    assert.equal(missing(openai, {}, undefined, url), undefined, url);
  }
  // User info, trailing dots, query and fragment around the host; a missing provider reads as "".
  assert.equal(missing(openai, {}, undefined, "https://u:p@api.openai.com./v1"), noKey);
  assert.equal(missing(openai, {}, undefined, "https://api.mistral.ai?x=1"), noKey);
  assert.equal(missing({}, {}, undefined, "https://openrouter.ai#f"), "No API key for provider: ");
  assert.equal(missing(openai, {}, undefined, "https://"), undefined);
});

test("issue 33: OpenRouter detection and its billed cost", () => {
  assert.equal(isOpenrouter({ provider: "openrouter" }), true);
  assert.equal(isOpenrouter({ provider: "x", baseUrl: "https://openrouter.ai/api/v1" }), true);
  assert.equal(isOpenrouter({ provider: "openai" }), false);
  assert.equal(openrouterBilledCost({ cost: 0.5, is_byok: false }), 0.5);
  assert.equal(openrouterBilledCost({ cost: 0.5 }), undefined);
  assert.equal(openrouterBilledCost({ cost: -1, is_byok: false }), undefined);
  assert.equal(openrouterBilledCost({ cost: "1", is_byok: false }), undefined);
  assert.equal(openrouterBilledCost({ cost: 1, is_byok: true, cost_details: { upstream_inference_cost: 2 } }), 3);
  assert.equal(
    openrouterBilledCost({
      cost: 1,
      is_byok: true,
      cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 2, upstream_inference_completions_cost: 4 },
    }),
    7,
  );
  assert.equal(
    openrouterBilledCost({ cost: 1, is_byok: true, cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 2 } }),
    undefined,
  );
  assert.equal(openrouterBilledCost({ cost: 1, is_byok: true, cost_details: {} }), undefined);
  assert.equal(openrouterBilledCost({ cost: 1, is_byok: true, cost_details: 0 }), undefined);
  assert.equal(openrouterBilledCost({ cost: 1, is_byok: true }), undefined);
  assert.equal(openrouterBilledCost({ cost: 1, is_byok: true, cost_details: { upstream_inference_cost: -2 } }), undefined);
  assert.equal(openrouterBilledCost(null), undefined);
});

test("model and option readers", () => {
  assert.equal(compatBool({ compat: { a: true, b: "true" } }, "a"), true);
  assert.equal(compatBool({ compat: { a: true, b: "true" } }, "b"), undefined);
  assert.equal(compatBool({}, "a"), undefined);
  assert.equal(compatStr({ compat: { s: "x", n: 1 } }, "s"), "x");
  assert.equal(compatStr({ compat: { s: "x", n: 1 } }, "n"), undefined);
  assert.equal(modelReasons({ reasoning: true }), true);
  assert.equal(modelReasons({ reasoning: "true" }), false);
  assert.equal(optionNumber({ t: 0.5, n: NaN, s: "1" }, "t"), 0.5);
  assert.equal(optionNumber({ t: 0.5, n: NaN, s: "1" }, "n"), undefined);
  assert.equal(optionNumber({ t: 0.5, n: NaN, s: "1" }, "s"), undefined);
  assert.equal(optionStr({ s: "a", n: 1 }, "s"), "a");
  assert.equal(optionStr({ s: "a", n: 1 }, "n"), undefined);
  assert.equal(apiKey({ apiKey: "" }), undefined);
  assert.equal(apiKey({ apiKey: "k" }), "k");
  assert.equal(apiKey({}), undefined);
});

test("P-6.3.2 invalid JSON message: the first 200 characters (code points)", () => {
  assert.equal(invalidJsonMessage("nope"), "Invalid JSON in provider stream: nope");
  assert.equal(invalidJsonMessage("a".repeat(300)), `Invalid JSON in provider stream: ${"a".repeat(200)}`);
  assert.equal(firstChars("😀".repeat(5), 3), "😀😀😀");
  assert.equal(firstChars("ab\ud800cd", 3), "ab\ud800");
  assert.equal(firstChars("abc", 0), "");
});

// json.js: the accessors on parsed values.
test("json accessors: a missing, mistyped or non-object member reads as empty", () => {
  const v = JSON.parse('{"s":"x","n":1.5,"z":0,"neg":-0,"b":true,"a":[1],"o":{},"nul":null,"e":"","content":"t"}');
  assert.equal(json.str(v, "s"), "x");
  assert.equal(json.str(v, "n"), "");
  assert.equal(json.str(v, "missing"), "");
  assert.equal(json.str("x", "length"), "");
  assert.equal(json.str([1], "0"), "");
  assert.equal(json.num(v, "n"), 1.5);
  assert.equal(json.num(v, "nul"), undefined);
  assert.equal(json.num(v, "s"), undefined);
  assert.equal(json.num({ i: Infinity }, "i"), undefined);
  assert.equal(json.get(v, "toString"), undefined);
  assert.equal(json.get(null, "a"), undefined);
  assert.equal(json.role({ role: "user" }), "user");
  assert.equal(json.kind({ type: 3 }), "");
  assert.deepEqual(json.blocks(v), []);
  assert.deepEqual(json.blocks({ content: [1, 2] }), [1, 2]);
  assert.deepEqual(json.blocks(null), []);
  assert.equal(json.isObject({}), true);
  assert.equal(json.isObject([]), false);
  assert.equal(json.isObject(null), false);
  assert.equal(json.asBool(false), false);
  assert.equal(json.asBool(0), undefined);
  assert.equal(json.asF64(2), 2);
  assert.equal(json.asF64("2"), undefined);
  assert.deepEqual(json.asArray([]), []);
  assert.equal(json.asArray({}), undefined);
});

test("json numbers: asU64 takes integers in [0, 2^64), not -0 (p_6_3_2_numbers_read_as_serde_json_reads_them)", () => {
  const cases = [
    ["0", 0],
    ["-0", undefined],
    ["7", 7],
    ["-7", undefined],
    ["1.5", undefined],
    ["18446744073709551616", undefined],
    ["-1", undefined],
  ];
  for (const [text, u64] of cases) {
    const n = JSON.parse(text);
    assert.equal(json.asU64(n), u64, text);
    assert.equal(json.asF64(n), Number(text), text);
  }
  assert.equal(json.asU64("1"), undefined);
});

test("json parseData: JSON, the repair fallback, and undefined for non-JSON (p_6_3_2_fallback_values_are_kept)", () => {
  assert.deepEqual(json.parseData('{"a":[1,true,null]}'), { a: [1, true, null] });
  assert.equal(json.parseData("[DONE]"), undefined);
  assert.equal(json.parseData(""), undefined);
  assert.equal(json.parseData("truex"), undefined);
  // A lone surrogate: JSON.parse keeps it.
  assert.equal(json.parseData('{"s":"a\\ud800b"}').s, "a\ud800b");
  // A raw control character in a string: the repair pass escapes it.
  assert.deepEqual(json.parseData('{"s":"a\nb"}'), { s: "a\nb" });
  // Duplicate keys: the last value, at the first place.
  assert.deepEqual(Object.entries(json.parseData('{"a":1,"b":2,"a":3}')), [["a", 3], ["b", 2]]);
});

// strict.js: the stream field checks.
test("issue 13: messages name the item, field and type (issue_13_messages_name_the_item_field_and_type)", () => {
  const item = JSON.parse('{"call_id":5,"name":"","id":null,"index":-1,"ok":"x","i":3}');
  const err = (f) => {
    try {
      f();
    } catch (e) {
      return e.message;
    }
    assert.fail("no error");
  };
  assert.equal(
    err(() => strict.requiredStr("f", "item x", item, "call_id")),
    'Malformed f stream: item x: "call_id" must be a non-empty string, got a number',
  );
  assert.equal(
    err(() => strict.requiredStr("f", "item x", item, "name")),
    'Malformed f stream: item x: "name" must be a non-empty string, got ""',
  );
  assert.equal(
    err(() => strict.requiredStr("f", "item x", item, "absent")),
    'Malformed f stream: item x: "absent" must be a non-empty string, got missing',
  );
  assert.equal(strict.requiredStr("f", "i", item, "ok"), "x");
  assert.equal(strict.optionalStr("f", "i", item, "id"), undefined);
  assert.equal(strict.optionalStr("f", "i", item, "absent"), undefined);
  assert.equal(strict.optionalStr("f", "i", item, "ok"), "x");
  assert.equal(err(() => strict.optionalStr("f", "i", item, "i")), 'Malformed f stream: i: "i" must be a string, got a number');
  assert.equal(strict.optionalIndex("f", "i", item, "i"), 3);
  assert.equal(strict.optionalIndex("f", "i", item, "id"), undefined);
  assert.equal(strict.optionalIndex("f", "i", item, "absent"), undefined);
  assert.equal(
    err(() => strict.optionalIndex("f", "i", item, "index")),
    'Malformed f stream: i: "index" must be an integer ≥ 0, got a number',
  );
  assert.equal(
    err(() => strict.requiredIndex("f", "i", item, "ok")),
    'Malformed f stream: i: "ok" must be an integer ≥ 0, got a string',
  );
  assert.equal(strict.requiredIndex("f", "i", item, "i"), 3);
  assert.equal(
    err(() => strict.requiredIndex("f", "i", item, "id")),
    'Malformed f stream: i: "id" must be an integer ≥ 0, got null',
  );
  assert.equal(strict.requiredString("f", "i", item, "name"), "");
  assert.equal(err(() => strict.requiredString("f", "i", item, "id")), 'Malformed f stream: i: "id" must be a string, got null');
  assert.equal(err(() => strict.requiredString("f", "i", null, "id")), 'Malformed f stream: i: "id" must be a string, got missing');
});

test("strict type names and message", () => {
  const names = [undefined, null, true, 1, "s", [], {}].map(strict.typeName);
  assert.deepEqual(names, ["missing", "null", "a boolean", "a number", "a string", "an array", "an object"]);
  assert.equal(strict.message("g", "part", "args", "an object", [1]), 'Malformed g stream: part: "args" must be an object, got an array');
  assert.equal(strict.requiredIndex("f", "i", { i: 0 }, "i"), 0);
  assert.throws(() => strict.requiredIndex("f", "i", { i: 1.5 }, "i"), { message: 'Malformed f stream: i: "i" must be an integer ≥ 0, got a number' });
  assert.throws(() => strict.requiredIndex("f", "i", { i: -0 }, "i"), { message: 'Malformed f stream: i: "i" must be an integer ≥ 0, got a number' });
});

// index.js: `mapperFor` (the rules every format shares), `onUnparsed`, `wireFormat`. index.js imports every wire
// format, so it is loaded here, not at the top.
const loadIndex = () => import("../../pkg-template/providers/index.js");

/** An assembler stand-in that records the calls `index.js` makes. */
const recorder = (finished = false) => {
  const calls = [];
  return {
    calls,
    acceptNullArguments: (names) => calls.push(["accept", names]),
    finished: () => finished,
    fail: (message, raw) => calls.push(["fail", message, raw]),
  };
};

test("P-6.1.1 wire formats by api", async () => {
  const { wireFormat } = await loadIndex();
  for (const api of ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"]) {
    const format = wireFormat(api);
    assert.equal(typeof format.buildRequest, "function", api);
    assert.equal(typeof format.streamMapper, "function", api);
  }
  assert.equal(wireFormat("bedrock"), undefined);
  assert.equal(wireFormat("toString"), undefined);
});

test("issue 33: the shared mapper hands the tools accepting {} to the assembler once, before the first call", async () => {
  const { mapperFor } = await loadIndex();
  const seen = [];
  const inner = {
    onEvent: (e, d, asm) => seen.push(["event", e, d, asm.calls.length]),
    onText: (e, d) => (seen.push(["text", e, d]), d === "mine"),
    onEnd: () => seen.push(["end"]),
  };
  const format = { streamMapper: (i) => (seen.push(["built", i.model.id]), inner) };
  const messages = [
    {
      role: "system",
      content: "s",
      toolsAdded: [
        { name: "free", parameters: { type: "object", properties: { a: {} } } },
        { name: "needs", parameters: { type: "object", required: ["a"] } },
        { name: "none" },
        { name: 7, parameters: {} },
      ],
    },
    { role: "system", toolsRemoved: [{ name: "none" }], toolsAdded: [{ name: "later", parameters: true }] },
  ];
  const mapper = mapperFor(format, input({ id: "m" }, messages));
  const asm = recorder();
  mapper.onEvent("e", { x: 1 }, asm);
  assert.equal(mapper.onText(undefined, "mine", asm), true);
  assert.equal(mapper.onText(undefined, "other", asm), false);
  mapper.onEnd(asm);
  assert.deepEqual(asm.calls, [["accept", ["free", "later"]]]);
  assert.deepEqual(seen, [["built", "m"], ["event", "e", { x: 1 }, 1], ["text", undefined, "mine"], ["text", undefined, "other"], ["end"]]);
  // Whichever call comes first prepares; a mapper without `onText` is undecided.
  const plain = mapperFor({ streamMapper: () => ({ onEvent() {}, onEnd() {} }) }, input({}, []));
  const other = recorder();
  assert.equal(plain.onText(undefined, "x", other), false);
  plain.onEnd(other);
  assert.deepEqual(other.calls, [["accept", []]]);
});

test("P-6.3.2 unparsed data: the mapper's, [DONE], else Invalid JSON", async () => {
  const { onUnparsed } = await loadIndex();
  const decides = { onText: (e) => e === "ping" };
  let asm = recorder();
  onUnparsed(decides, "ping", "garbage", asm);
  onUnparsed(decides, undefined, " [DONE]\n", asm);
  assert.deepEqual(asm.calls, []);
  onUnparsed(decides, undefined, "garbage", asm);
  assert.deepEqual(asm.calls, [["fail", "Invalid JSON in provider stream: garbage", undefined]]);
  // A finished assembler gets nothing more.
  asm = recorder(true);
  onUnparsed({}, undefined, "garbage", asm);
  assert.deepEqual(asm.calls, []);
  asm = recorder();
  onUnparsed({}, undefined, "x".repeat(250), asm);
  assert.deepEqual(asm.calls, [["fail", `Invalid JSON in provider stream: ${"x".repeat(200)}`, undefined]]);
});
