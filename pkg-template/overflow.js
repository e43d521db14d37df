// Recognising "the context window is full" in a finished assistant message (context compaction needs it), with
// the answers of pi-ai 1.6.0's `isContextOverflow` and `isRecoverableLength`. Plain JS: no imports, no wasm, and
// nothing done at load time but two constant lists (compiled to RegExps on first use): an unused import costs nothing.
//
// The phrases below are the errors providers actually send when the prompt does not fit, written in a small notation
// of our own (see `compile`): literal words are matched anywhere in the text, ignoring case, and the placeholders say
// what may stand between them (a number, digits with commas, any text on one line, an optional word).

/**
 * Overflow wordings, one a provider (or a server family) uses. Placeholders:
 * `{n}` one or more digits · `{n,}` digits and commas · `{line}` any text without a line break ·
 * `{_}` a space or an underscore · `{ws}` optional white space · `{s}` an optional "s" · `{'}` an optional
 * apostrophe · `{the}` an optional "the " · `{model's}` an optional "model's " (or "models ").
 */
const OVERFLOW_PHRASES = [
  // Anthropic: `prompt is too long: 208000 tokens > 200000 maximum`; its 413 error type; z.ai: `Prompt too long`.
  "prompt is too long",
  "prompt too long",
  "request_too_large",
  // Amazon Bedrock: `Input is too long for requested model.`
  "input is too long for requested model",
  // OpenAI Responses: `Your input exceeds the context window of this model.`
  "exceeds the context window",
  // OpenAI Completions and vLLM-style servers.
  "exceeds {the}{model's}maximum context length of {n,} token",
  "exceeds {the}{model's}maximum context length{ws}({n,})",
  "maximum context length is {n} tokens",
  // Google Gemini: `The input token count (N) exceeds the maximum number of tokens allowed (M).`
  "input token count{line}exceeds the maximum",
  // xAI: `This model's maximum prompt length is N but the request contains M tokens.`
  "maximum prompt length is {n}",
  // Groq, Cerebras: `Please reduce the length of the messages or completion.`
  "reduce the length of the messages",
  // Mistral: `Prompt contains N tokens ... too large for model with M maximum context length`
  "too large for model with {n} maximum context length",
  // OpenRouter/Poolside: `Input length N exceeds the maximum allowed input length of M tokens.`
  "exceeds {the}maximum allowed input length of {n,} token",
  // Together AI: `The input (N tokens) is longer than the model's context length (M tokens).`
  "input ({n} tokens) is longer than the model{'}s context length ({n} tokens)",
  // llama.cpp: `the request exceeds the available context size, try increasing it`
  "exceeds the available context size",
  // LM Studio: `... is greater than the context length ...`
  "greater than the context length",
  // Kimi For Coding: `exceeded model token limit: N (requested: M)`
  "exceeded model token limit",
  // DS4: `Prompt has N tokens, but the configured context size is M tokens`
  "prompt has {n,} token{s}, but the configured context size is {n,} token",
  // DashScope/Qwen: `Range of input length should be [1, N]`
  "range of input length should be",
  // GitHub Copilot: `prompt token count of N exceeds the limit of M`
  "exceeds the limit of {n}",
  // Generic codes and phrasings several gateways pass on.
  "token limit exceeded",
  "too many tokens",
  "context{_}length{_}exceeded",
  "context window exceeded",
  "context window exceeds limit",
  // Anthropic's stop reason for the same, as some gateways pass it on as an error.
  "model_context_window_exceeded",
];

/** Texts that name a throttling problem: such an error is never an overflow, whatever else it says. */
const NOT_OVERFLOW = ["rate limit", "too many requests"];

/** A phrase of `OVERFLOW_PHRASES` as a case-insensitive RegExp. */
function compile(phrase) {
  const parts = {
    "{n}": "\\d+",
    "{n,}": "[\\d,]+",
    "{line}": ".*",
    "{the}": "(?:the )?",
    "{'}": "'?",
    "{model's}": "(?:model'?s )?",
    "{_}": "[ _]",
    "{ws}": "\\s*",
    "{s}": "s?",
  };
  let source = "";
  for (const piece of phrase.split(/(\{[^}]*\})/)) {
    if (!piece.startsWith("{")) source += piece.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
    else if (Object.prototype.hasOwnProperty.call(parts, piece)) source += parts[piece];
    else throw new Error(`overflow.js: unknown placeholder ${piece}`);
  }
  return new RegExp(source, "i");
}

let compiled;
/** Both phrase lists compiled, once, on first use. */
function phrases() {
  if (compiled === undefined) compiled = [OVERFLOW_PHRASES.map(compile), NOT_OVERFLOW.map(compile)];
  return compiled;
}

/**
 * A text that starts with the status 413 (Payload Too Large) and nothing glued to the number: `413`, `413 …`,
 * `413: …` (how pi-ai's SDK-based providers word a 413, e.g. GitHub Copilot's request byte-size overflow).
 */
function leading413(text) {
  if (!text.startsWith("413")) return false;
  const next = text.charAt(3);
  return next === "" || next === ":" || /\s/.test(next);
}

/** The error text as a string (a non-string `errorMessage` is read as JS would print it); undefined if it has none. */
function errorText(value) {
  if (value === undefined || typeof value === "symbol") return undefined;
  return String(value);
}

/** Whether an error text says the request did not fit the model's context. */
function saysOverflow(text) {
  const [overflow, throttled] = phrases();
  if (throttled.some((re) => re.test(text))) return false;
  return leading413(text) || overflow.some((re) => re.test(text));
}

/**
 * Whether an assistant message shows a context overflow: an `error` whose text is a known overflow wording, a `stop`
 * whose prompt (input + cache reads) was larger than `contextWindow`, or a `length` stop with no output after a prompt
 * that filled at least 99 % of `contextWindow`. Never throws: anything unreadable is `false`.
 * @param {object} message
 * @param {number} [contextWindow]
 * @returns {boolean}
 */
export function isContextOverflow(message, contextWindow) {
  try {
    const stopReason = message.stopReason;
    if (stopReason === "error") {
      const text = errorText(message.errorMessage);
      return text !== undefined && saysOverflow(text);
    }
    if (!contextWindow || (stopReason !== "stop" && stopReason !== "length")) return false;
    const usage = message.usage;
    const prompt = usage.input + usage.cacheRead;
    if (stopReason === "stop") return prompt > contextWindow;
    return usage.output === 0 && prompt >= contextWindow * 0.99;
  } catch {
    return false;
  }
}

/**
 * Whether a `length` stop ended below `desiredMaxOutput` output tokens (the limit asked for before any clamping to
 * the context): the model was cut short by something else, so one compact-and-retry may help. Never throws.
 * @param {object} message
 * @param {number} desiredMaxOutput
 * @returns {boolean}
 */
export function isRecoverableLength(message, desiredMaxOutput) {
  try {
    if (message.stopReason !== "length" || !(desiredMaxOutput > 0)) return false;
    return message.usage.output < desiredMaxOutput;
  } catch {
    return false;
  }
}
