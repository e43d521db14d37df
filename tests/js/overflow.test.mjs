// isContextOverflow / isRecoverableLength (groundwork for context compaction; pi-ai 1.6.0's names): ours must give pi-ai's
// boolean answer on every message — each provider's overflow wording in full (as the provider sends it, as our
// built-in providers word it, `HTTP 400: <detail>`, and as pi-ai's own providers word it), errors that only look
// close, the other stop reasons, silent and length-stop overflow with and without a context window, odd fields, and a
// seeded random set built from fragments of the wordings (`OVERFLOW_SEED=<n>`). Where pi-ai throws (a message that is
// not an object, `stop`/`length` without `usage`), ours returns false: the one deliberate difference.
//
// The functions are tested from pkg-template/overflow.js (no build needed); the built package is checked to export
// the same functions when pkg/ has them, and the built-in providers' real overflow errors go through them end to end.
// In the reference pass (AGENT_LOOP_IMPL=reference) the implementation under test is pi-ai's own.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as pi from "@earendil-works/pi-ai";
import * as source from "../../pkg-template/overflow.js";
import { prng as random } from "./provider-server.mjs";

// As tests/js/impl.mjs decides it; not imported from there, since that loads pkg/ and this file must run without it.
const IS_REFERENCE = process.env.AGENT_LOOP_IMPL === "reference";
const PKG_ENTRY = fileURLToPath(new URL("../../pkg/dist/node/index.mjs", import.meta.url));
const pkg = !IS_REFERENCE && existsSync(PKG_ENTRY) ? await import(PKG_ENTRY) : undefined;
const PKG_HAS_IT = typeof pkg?.isContextOverflow === "function" && typeof pkg?.isRecoverableLength === "function";

/** The implementations under test, by name. */
const IMPLS = IS_REFERENCE ? { "pi-ai": pi } : { "pkg-template/overflow.js": source, ...(PKG_HAS_IT ? { "pkg/dist/node": pkg } : {}) };
const T = { timeout: 5000 };
const OURS_ONLY = { ...T, skip: IS_REFERENCE && "ours never throws; pi-ai does on these inputs (the deliberate difference)" };

// ---- messages

const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
function usage(input = 0, output = 0, cacheRead = 0, cacheWrite = 0) {
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost: { ...zero } };
}
function assistant(stopReason, fields = {}) {
  return { role: "assistant", content: [], api: "openai-completions", provider: "openai", model: "m", usage: usage(), stopReason, timestamp: 1, ...fields };
}
const errorWith = (errorMessage, fields = {}) => assistant("error", { errorMessage, ...fields });

/** pi-ai's answer, or the text of what it threw. */
function theirs(fn, ...args) {
  try {
    return pi[fn](...args);
  } catch (e) {
    return `throws ${e?.message}`;
  }
}

/** Asserts every implementation under test answers `fn(...args)` as pi-ai does; returns pi-ai's answer. */
function same(fn, args, label) {
  const expected = theirs(fn, ...args);
  assert.equal(typeof expected, "boolean", `${label}: pi-ai ${expected} (move this case to the never-throws test)`);
  for (const [name, impl] of Object.entries(IMPLS)) {
    assert.equal(impl[fn](...args), expected, `${name} ${fn}: ${label}`);
  }
  return expected;
}
const overflow = (message, contextWindow, label = JSON.stringify(message.errorMessage ?? message.stopReason)) =>
  same("isContextOverflow", contextWindow === undefined ? [message] : [message, contextWindow], label);

// ---- the provider wordings (pi-ai's doc comment, plus the ones its function recognises beyond it)

/** Each provider's overflow error text, as the provider's body says it. */
const WORDINGS = {
  anthropic: "prompt is too long: 208415 tokens > 200000 maximum",
  "anthropic 413": "request_too_large: Request exceeds the maximum allowed number of bytes.",
  "openai completions": "This model's maximum context length is 128000 tokens. However, your messages resulted in 131942 tokens. Please reduce the length of the messages.",
  "openai responses": "Your input exceeds the context window of this model. Please adjust your input and try again.",
  "openai (vLLM)": "This model's maximum context length is 32768 tokens. However, you requested 33201 tokens (32177 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.",
  "openai-compatible (of N tokens)": "Requested token count exceeds the model's maximum context length of 131,072 tokens. You requested a total of 140,211 tokens.",
  "openai-compatible ((N))": "The requested token count exceeds model's maximum context length (65536). Please shorten the input.",
  google: "The input token count (1203456) exceeds the maximum number of tokens allowed (1048576).",
  xai: "This model's maximum prompt length is 131072 but the request contains 145003 tokens.",
  groq: "Please reduce the length of the messages or completion.",
  "github copilot (pi-ai's SDK form)": "413 failed to parse request",
  "github copilot (token count)": "prompt token count of 140123 exceeds the limit of 128000",
  cerebras: "413 status code (no body)",
  mistral: "Prompt contains 40321 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
  openrouter: "This endpoint's maximum context length is 200000 tokens. However, you requested about 251342 tokens (241342 of text input, 10000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.",
  "openrouter/poolside": "Input length 300412 exceeds the maximum allowed input length of 262144 tokens.",
  together: "The input (40211 tokens) is longer than the model's context length (32768 tokens).",
  "llama.cpp": "the request exceeds the available context size, try increasing it",
  "lm studio": "Trying to keep the first 9124 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input. The number of tokens to keep from the initial prompt is greater than the context length.",
  "kimi for coding": "exceeded model token limit: 262144 (requested: 300117)",
  ds4: "Prompt has 300117 tokens, but the configured context size is 262144 tokens",
  "dashscope/qwen": "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 30720]",
  "z.ai": "Prompt too long",
  ollama: "prompt too long; exceeded max context length by 1234 tokens",
  bedrock: "Input is too long for requested model.",
  "azure code": "context_length_exceeded",
  "gateway (context length exceeded)": "Request failed: context length exceeded (requested 140000, limit 128000)",
  "gateway (context window exceeded)": "Context window exceeded for model claude-sonnet-4.",
  "gateway (token limit exceeded)": "Token limit exceeded: 210000 > 200000",
  "gateway (context window exceeds limit)": "Context window exceeds limit: 210000 tokens requested",
  "gateway (anthropic stop reason)": "model_context_window_exceeded",
  cohere: "too many tokens: total number of tokens in the prompt cannot exceed 4081 - received 5210",
  fireworks: "The prompt is too long: 200000, model maximum context length: 163840",
};

/** How our built-in providers word an HTTP error: `HTTP <status>: <body's error.message, message or error>`. */
const ours400 = (text) => `HTTP 400: ${text}`;
/** How pi-ai's SDK-based providers word one (the OpenAI and Anthropic SDKs' `APIError.message`, Google's body). */
const PI_FORMS = {
  openai: (text) => `400 ${text}`,
  anthropic: (text) => `400 ${JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: text } })}`,
  google: (text) => JSON.stringify({ error: { code: 400, message: text, status: "INVALID_ARGUMENT" } }),
};

/** Answers pi-ai gives, pinned, so a change of pi-ai's (or a case that stops testing what it says) shows. */
const PINNED_FALSE = new Set([
  // Our driver's texts for a bodyless or unrecognised 413 / 400: pi-ai's 413 rule wants the status first (its SDKs'
  // `413 status code (no body)`), and a bodyless 400 is no overflow anywhere.
  "HTTP 413: ",
  "HTTP 413: failed to parse request",
  "HTTP 400: ",
  "400 status code (no body)",
]);

test("P-6.11.1 every provider wording, as sent and in every wrapping, is an overflow for both", T, () => {
  let count = 0;
  for (const [provider, text] of Object.entries(WORDINGS)) {
    const forms = [text, ours400(text), ...Object.values(PI_FORMS).map((f) => f(text)), text.toUpperCase(), `Error: ${text}`];
    for (const form of forms) {
      const expected = overflow(errorWith(form), undefined, `${provider}: ${form}`);
      // a 413 counts only with its status first, so its wrapped forms are compared, not pinned
      if (!text.startsWith("413") || form === text) assert.equal(expected, true, `${provider}: ${form} should be an overflow`);
      count++;
    }
  }
  assert.ok(count > 150);
});

test("P-6.11.1 a 413 with its status first is an overflow; our driver's `HTTP 413: …` only when the detail says so", T, () => {
  for (const text of ["413", "413 ", "413: Payload Too Large", "413 Request Entity Too Large", "413\tx", "413\nbody"]) {
    assert.equal(overflow(errorWith(text)), true, text);
  }
  for (const text of ["4130 tokens", "x413 ", " 413", "413.", "413,", "HTTP 413", "status 413"]) {
    assert.equal(overflow(errorWith(text)), false, text);
  }
  for (const text of PINNED_FALSE) assert.equal(overflow(errorWith(text)), false, text);
  assert.equal(overflow(errorWith("HTTP 413: request_too_large")), true);
  assert.equal(overflow(errorWith(`HTTP 413: ${JSON.stringify({ type: "error", error: { type: "request_too_large", message: "Request exceeds the maximum size" } })}`)), true);
});

/** Errors that share words with the overflow wordings but are not overflows. */
const NEAR_MISSES = [
  // rate limits, even where they mention tokens, maxima or "too long"
  "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 4000. Please try again in 2s.",
  "HTTP 429: This request would exceed the rate limit for your organization of 40,000 input tokens per minute.",
  "429 Too Many Requests",
  "HTTP 429: Too many requests, please slow down",
  "rate limit: prompt is too long",
  "Rate limit exceeded: the maximum context length is 8192 tokens",
  "too many requests: request_too_large",
  "413 rate limit",
  "413 Too Many Requests",
  // "maximum" in other senses
  "HTTP 400: max_tokens: 300000 > 128000, which is the maximum allowed number of output tokens for claude-sonnet-4",
  "HTTP 400: Invalid 'messages': array too long. Expected an array with maximum length 2048, but got an array with length 3000 instead.",
  "HTTP 400: Invalid 'max_tokens': integer above maximum value. Expected a value <= 16384, but got 50000 instead.",
  "the maximum number of tools is 128",
  "exceeds the maximum",
  "maximum context length",
  "exceeds the model's maximum context length",
  "maximum context length is unknown",
  "input token count",
  "maximum prompt length is unknown",
  // "too long" of other things
  "HTTP 400: tool name too long: get_the_weather_for_a_city_with_a_very_long_name_that_keeps_going",
  "HTTP 400: Invalid 'input[3].content': string too long. Expected a string with maximum length 10485760.",
  "HTTP 400: Request URI too long",
  "The response was too long to display",
  "input too long",
  "message too long",
  "request too large",
  "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 50000.",
  "request-too-large",
  "too many token",
  "context size exceeded",
  "context window exceeds",
  "token limit exceed",
  // other failures
  "HTTP 400: model: field required",
  "HTTP 401: Invalid API key",
  "HTTP 500: boom",
  "HTTP 503: Overloaded",
  "Overloaded",
  "Request timed out after 150 ms",
  "Request was aborted",
  "fetch failed: other side closed (UND_ERR_SOCKET)",
  "No built-in provider for api \"x\". Pass streamFn or call setDefaultStreamFn().",
  "",
];

test("P-6.11.1 errors that only look close are not overflows for both", T, () => {
  for (const text of NEAR_MISSES) assert.equal(overflow(errorWith(text)), false, text);
});

test("P-6.11.1 throttling words win over any overflow wording, in any case", T, () => {
  for (const text of Object.values(WORDINGS)) {
    for (const throttle of ["rate limit", "Rate Limit", "RATE LIMITED", "too many requests", "Too Many Requests"]) {
      assert.equal(overflow(errorWith(`${throttle}: ${text}`)), false, `${throttle}: ${text}`);
      assert.equal(overflow(errorWith(`${text} (${throttle})`)), false, `${text} (${throttle})`);
    }
    // not these: other spellings and other kinds of limit
    for (const other of ["ratelimit", "rate_limit", "rate-limit", "too many request", "429", "quota exceeded", "overloaded"]) {
      overflow(errorWith(`${other}: ${text}`));
    }
  }
});

test("P-6.11.1 an overflow wording counts only on stopReason error", T, () => {
  for (const stopReason of ["stop", "length", "toolUse", "aborted", "deferred", "Error", "", undefined]) {
    for (const text of Object.values(WORDINGS)) {
      assert.equal(overflow(assistant(stopReason, { errorMessage: text }), undefined, `${stopReason}: ${text}`), false);
      overflow(assistant(stopReason, { errorMessage: text }), 100_000, `${stopReason} with a window: ${text}`);
    }
  }
  // aborted, as the built-in providers and pi-ai end an aborted request
  assert.equal(overflow(assistant("aborted", { errorMessage: "Request was aborted" })), false);
  assert.equal(overflow(assistant("aborted", { errorMessage: "Request was aborted", usage: usage(300_000) }), 200_000), false);
});

test("P-6.11.1 silent overflow: a stop whose input and cache reads exceed the window, only with a window", T, () => {
  const cases = [
    [usage(200_001), 200_000],
    [usage(200_000), 200_000],
    [usage(199_999), 200_000],
    [usage(100_000, 0, 100_001), 200_000],
    [usage(100_000, 0, 0, 100_001), 200_000], // cache writes do not count
    [usage(100_000, 100_001), 200_000], // output does not count
    [usage(300_000), undefined],
    [usage(300_000), 0],
    [usage(300_000), NaN],
    [usage(300_000), Infinity],
    [usage(1), -1],
    [usage(101), "100"],
    [{ input: 101 }, 100], // no cacheRead: NaN, not an overflow
    [{ cacheRead: 101 }, 100],
    [{ input: "101", cacheRead: 0 }, 100], // JS arithmetic, as pi-ai's
    [{ input: NaN, cacheRead: 101 }, 100],
    [{ totalTokens: 500 }, 100],
  ];
  for (const [u, window] of cases) {
    const label = `stop ${JSON.stringify(u)} / ${window}`;
    const expected = overflow(assistant("stop", { usage: u }), window, label);
    for (const stopReason of ["toolUse", "aborted", "error"]) overflow(assistant(stopReason, { usage: u }), window, `${stopReason}: ${label}`);
    if (u === cases[0][0]) assert.equal(expected, true);
  }
  // an error message on a stop does not matter, nor does a throttling text
  assert.equal(overflow(assistant("stop", { errorMessage: "rate limit", usage: usage(101) }), 100), true);
  assert.equal(overflow(errorWith("HTTP 500: boom", { usage: usage(300_000) }), 200_000), false);
});

test("P-6.11.1 length-stop overflow: zero output after a prompt of at least 99 % of the window, only with a window", T, () => {
  for (const window of [1, 2, 3, 99, 100, 101, 150, 199, 200, 1000, 1234, 12345, 128_000, 200_000, 1_000_000, 1_048_576]) {
    const threshold = Math.ceil(window * 0.99);
    for (const prompt of [0, threshold - 2, threshold - 1, threshold, threshold + 1, window, window + 1]) {
      for (const [input, cacheRead] of [[prompt, 0], [Math.floor(prompt / 2), prompt - Math.floor(prompt / 2)]]) {
        overflow(assistant("length", { usage: usage(input, 0, cacheRead) }), window, `length ${input}+${cacheRead} / ${window}`);
        overflow(assistant("length", { usage: usage(input, 1, cacheRead) }), window, `length, 1 output, ${input}+${cacheRead} / ${window}`);
      }
    }
  }
  assert.equal(overflow(assistant("length", { usage: usage(99, 0) }), 100), true);
  assert.equal(overflow(assistant("length", { usage: usage(98, 0) }), 100), false);
  assert.equal(overflow(assistant("length", { usage: usage(100_000, 0) })), false, "no window");
  for (const output of [-0, "0", null, false, -1, undefined, NaN]) {
    overflow(assistant("length", { usage: { input: 100, output, cacheRead: 0 } }), 100, `length output ${String(output)}`);
  }
  for (const window of [0, -1, NaN, Infinity, "100", 100.5, 0.5]) {
    for (const input of [0, 95, 99, 100]) overflow(assistant("length", { usage: usage(input, 0) }), window, `length ${input} / ${String(window)}`);
  }
  // a length stop with an error text: the text does not matter
  assert.equal(overflow(assistant("length", { errorMessage: "rate limit", usage: usage(100, 0) }), 100), true);
  assert.equal(overflow(assistant("length", { errorMessage: WORDINGS.anthropic, usage: usage(1, 0) }), 100), false);
});

test("P-6.11.1 missing and odd fields: no usage on an error, errorMessage not a string, no errorMessage", T, () => {
  const text = WORDINGS.anthropic;
  const messages = [
    { stopReason: "error", errorMessage: text },
    { stopReason: "error" },
    {},
    { stopReason: "error", errorMessage: text, usage: null },
    { stopReason: "error", errorMessage: undefined },
    { stopReason: "error", errorMessage: null },
    { stopReason: "error", errorMessage: 0 },
    { stopReason: "error", errorMessage: false },
    { stopReason: "error", errorMessage: 413 },
    { stopReason: "error", errorMessage: 400 },
    { stopReason: "error", errorMessage: 413n },
    { stopReason: "error", errorMessage: [text] },
    { stopReason: "error", errorMessage: [] },
    { stopReason: "error", errorMessage: {} },
    { stopReason: "error", errorMessage: { message: text } },
    { stopReason: "error", errorMessage: { toString: () => text } },
    { stopReason: "error", errorMessage: new String(text) },
    { stopReason: "error", errorMessage: new Error(text) },
    { stopReason: "error", errorMessage: `${text}\u0000` },
    { stopReason: "stop" },
    { stopReason: "length" },
  ];
  for (const message of messages) {
    const label = `${JSON.stringify(message, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))}`;
    overflow(message, undefined, label);
    if (message.usage !== undefined || message.stopReason === "error" || message.stopReason === undefined) {
      overflow(message, 100, `${label} / 100`);
    }
  }
  assert.equal(overflow({ stopReason: "error", errorMessage: text }), true);
  assert.equal(overflow({ stopReason: "error", errorMessage: 413 }), true, "pi-ai reads a number as its text");
});

test("P-6.11.1 ours never throws: false where pi-ai throws", OURS_ONLY, () => {
  const hostile = { get stopReason() { throw new Error("no"); } };
  const cases = [
    ["isContextOverflow", [null]],
    ["isContextOverflow", [undefined]],
    ["isContextOverflow", [hostile]],
    ["isContextOverflow", [{ stopReason: "stop" }, 100]],
    ["isContextOverflow", [{ stopReason: "length" }, 100]],
    ["isContextOverflow", [{ stopReason: "stop", usage: null }, 100]],
    ["isContextOverflow", [{ stopReason: "error", errorMessage: Symbol("x") }]],
    ["isContextOverflow", [{ stopReason: "error", errorMessage: { toString() { throw new Error("no"); } } }]],
    ["isContextOverflow", [{ stopReason: "length", usage: usage(100, 0) }, 100n]],
    ["isRecoverableLength", [null, 100]],
    ["isRecoverableLength", [{ stopReason: "length" }, 100]],
    ["isRecoverableLength", [hostile, 100]],
  ];
  for (const [fn, args] of cases) {
    assert.match(theirs(fn, ...args), /^throws /, `pi-ai no longer throws on ${fn} ${String(args[0])}: compare it instead`);
    for (const [name, impl] of Object.entries(IMPLS)) assert.equal(impl[fn](...args), false, `${name} ${fn}`);
  }
});

test("P-6.11.1 isRecoverableLength: a length stop below the output limit asked for", T, () => {
  const outputs = [0, 1, 99, 100, 101, -1, 1.5, "5", null, undefined, NaN];
  const limits = [100, 0, -1, 6, 2, 1, NaN, Infinity, undefined, "100", 100.5, 0.5, true, [5], 5n, -0];
  for (const stopReason of ["length", "stop", "error", "aborted", "toolUse"]) {
    for (const output of outputs) {
      for (const limit of limits) {
        const message = assistant(stopReason, { usage: { input: 10, output, cacheRead: 0, cacheWrite: 0 } });
        same("isRecoverableLength", [message, limit], `${stopReason} output ${String(output)} limit ${String(limit)}`);
      }
    }
  }
  assert.equal(same("isRecoverableLength", [assistant("length", { usage: usage(10, 99) }), 100], "99 < 100"), true);
  assert.equal(same("isRecoverableLength", [assistant("length", { usage: usage(10, 100) }), 100], "100 = 100"), false);
  assert.equal(same("isRecoverableLength", [assistant("stop", { usage: usage(10, 5) }), 100], "stop"), false);
  // the text of an error or a full context does not matter
  same("isRecoverableLength", [assistant("length", { errorMessage: WORDINGS.anthropic, usage: usage(200_000, 5) }), 100], "length with text");
  same("isRecoverableLength", [{ stopReason: "stop" }, 100], "stop without usage");
});

// ---- a seeded random set from fragments of the wordings

const SEED = Number.isFinite(Number(process.env.OVERFLOW_SEED)) && process.env.OVERFLOW_SEED ? Number(process.env.OVERFLOW_SEED) : 45;


const FRAGMENTS = [
  ...Object.values(WORDINGS),
  ...Object.values(WORDINGS).flatMap((w) => w.split(/(?<=[.:;,)])\s+/)),
  ...NEAR_MISSES,
  "prompt is too long", "request_too_large", "exceeds the context window", "exceeds the model's maximum context length of 5,000 tokens",
  "exceeds model's maximum context length (5)", "maximum context length is 5 tokens", "input token count (5) exceeds the maximum",
  "maximum prompt length is 5 but request contains 6", "reduce the length of the messages", "too large for model with 6 maximum context length",
  "exceeds the maximum allowed input length of 6 tokens", "input (5 tokens) is longer than the model's context length (6 tokens)",
  "exceeds the available context size", "greater than the context length", "exceeded model token limit",
  "prompt has 5 tokens, but the configured context size is 6 tokens", "range of input length should be", "input is too long for requested model",
  "exceeds the limit of 6", "token limit exceeded", "too many tokens", "context_length_exceeded", "context window exceeded",
  "413", "413 ", "413:", "HTTP 413: ", "HTTP 400: ", "400 status code (no body)", "rate limit", "too many requests", "429",
  "maximum", "context", "length", "tokens", "token", "too long", "exceeds", "exceeded", "limit", "the", "model's", "models", "of", "is",
  " ", "  ", "\n", ": ", ", ", "(", ")", "5", "1,000", ",", "_", "-", "'", "’", "\t", "x", "Error: ", "{\"error\":{\"message\":\"",
];
const JOINERS = ["", " ", ": ", "\n", ". ", "\"}}"];

function mutate(text, next) {
  const pick = (items) => items[Math.floor(next() * items.length)];
  const at = () => Math.floor(next() * (text.length + 1));
  const r = next();
  if (r < 0.08) return text.toUpperCase();
  if (r < 0.16) { const i = at(); return text.slice(0, i) + text.slice(i + 1); }
  if (r < 0.24) { const i = at(); return text.slice(0, i) + pick([" ", "\n", "5", "_", "x", "(", ",", "'"]) + text.slice(i); }
  if (r < 0.3) return text.replace(/\d+/g, pick(["", "x", "1,000", "12", ",", "1.5"]));
  if (r < 0.36) return text.replace(/ /g, pick(["  ", "_", "\n", "\t", "", "-"]));
  if (r < 0.42) { const words = text.split(" "); words.splice(Math.floor(next() * words.length), 1); return words.join(" "); }
  if (r < 0.46) return text.replace("'", pick(["", "’", "''"]));
  if (r < 0.5) return text.replace(/s\b/, "");
  if (r < 0.54) return text.replace(/the /i, "");
  return text;
}

test(`P-6.11.1 seeded random messages from fragments of the wordings: ours = pi-ai on every one (seed ${SEED})`, T, () => {
  const next = random(SEED);
  const pick = (items) => items[Math.floor(next() * items.length)];
  const stopReasons = ["error", "error", "error", "error", "stop", "length", "aborted", "toolUse"];
  const windows = [undefined, undefined, 100, 1000, 128_000, 0];
  let [count, overflows] = [0, 0];
  for (let i = 0; i < 20_000; i++) {
    const parts = Array.from({ length: 1 + Math.floor(next() * 4) }, () => mutate(pick(FRAGMENTS), next));
    const text = parts.join(pick(JOINERS));
    const window = pick(windows);
    const size = window ?? 1000;
    const u = usage(Math.floor(next() * size * 1.05), next() < 0.5 ? 0 : Math.floor(next() * 50), next() < 0.7 ? 0 : Math.floor(next() * size * 0.1));
    const message = assistant(pick(stopReasons), { errorMessage: text, usage: u });
    if (overflow(message, window, `#${i} ${message.stopReason} / ${window}: ${JSON.stringify(text)} ${JSON.stringify(u)}`)) overflows++;
    same("isRecoverableLength", [message, pick([1, 50, 1000])], `#${i} isRecoverableLength`);
    count++;
  }
  // both answers are common, so the comparison means something
  assert.ok(overflows > count * 0.15 && overflows < count * 0.85, `${overflows} of ${count} overflows`);
});

// ---- the built package

test("P-6.11.1 the built package exports both functions, the same as pkg-template/overflow.js", {
  ...T,
  skip: (IS_REFERENCE && "agent-loop-wasm's own entry") || (!PKG_HAS_IT && `${pkg ? "pkg/ was built before overflow.js" : "pkg/ is not built"}: rebuild (scripts/build.mjs) to check the package's export`),
}, async () => {
  const { createRequire } = await import("node:module");
  const cjs = createRequire(import.meta.url)("../../pkg/dist/node/index.cjs");
  const web = await import("../../pkg/dist/web/slim.js").catch(() => undefined);
  for (const entry of [pkg, cjs, ...(web ? [web] : [])]) {
    assert.equal(typeof entry.isContextOverflow, "function");
    assert.equal(typeof entry.isRecoverableLength, "function");
    assert.equal(entry.isContextOverflow(errorWith(ours400(WORDINGS.anthropic))), true);
    assert.equal(entry.isContextOverflow(errorWith("HTTP 429: rate limit")), false);
    assert.equal(entry.isRecoverableLength(assistant("length", { usage: usage(1, 5) }), 100), true);
  }
});

// ---- end to end: each built-in wire format's real overflow error body through streamBuiltin

const E2E = {
  "openai-completions": { status: 400, body: { error: { message: WORDINGS["openai completions"], type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } },
  "openai-responses": { status: 400, body: { error: { message: WORDINGS["openai responses"], type: "invalid_request_error", param: "input", code: "context_length_exceeded" } } },
  "anthropic-messages": { status: 400, body: { type: "error", error: { type: "invalid_request_error", message: WORDINGS.anthropic } } },
  "google-generative-ai": { status: 400, body: { error: { code: 400, message: WORDINGS.google, status: "INVALID_ARGUMENT" } } },
};
const E2E_SKIP = (IS_REFERENCE && "the built-in providers are agent-loop-wasm's own") || (!pkg && "pkg/ is not built: rebuild to run the built-in providers");
const server = E2E_SKIP ? undefined : await (await import("./provider-server.mjs")).startProviderServer();
after(() => server?.close());

for (const [api, reply] of Object.entries(E2E)) {
  test(`end to end, ${api}: the provider's ${reply.status} overflow body → a final message isContextOverflow recognises`, { timeout: 5000, skip: E2E_SKIP }, async () => {
    const { drain, providerModel, wire } = await import("./provider-server.mjs");
    const r = server.route();
    r.reply(reply, { sse: wire[api].text("never") });
    const run = await drain(pkg.streamBuiltin(providerModel(api, r.baseUrl), { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "sk-overflow", maxRetries: 0 }));
    const message = run.result;
    assert.equal(message.stopReason, "error");
    assert.equal(message.errorMessage, `HTTP ${reply.status}: ${reply.body.error.message}`);
    assert.equal(theirs("isContextOverflow", message), true, "pi-ai");
    for (const [name, impl] of Object.entries(IMPLS)) {
      assert.equal(impl.isContextOverflow(message), true, name);
      assert.equal(impl.isContextOverflow(message, 1_000_000), true, `${name} with a window`);
    }
    // the same request answered with a rate limit is no overflow
    const limited = server.route();
    limited.reply({ status: 429, body: { error: { message: "Rate limit reached: too many tokens per minute" } } });
    const other = (await drain(pkg.streamBuiltin(providerModel(api, limited.baseUrl), { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "sk-overflow", maxRetries: 0 }))).result;
    assert.equal(other.errorMessage, "HTTP 429: Rate limit reached: too many tokens per minute");
    for (const impl of Object.values(IMPLS)) assert.equal(impl.isContextOverflow(other), false);
    assert.equal(theirs("isContextOverflow", other), false);
  });
}
