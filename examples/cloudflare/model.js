// The example's model: a real one when MODEL_API is set (any built-in provider of agent-loop-wasm), else the offline
// scripted model below, so that the example runs with no key and no network. The script is no language model: it
// understands the prompts of the README and answers from the tool results it is sent; anything else gets a note
// saying what it understands (never a made-up tool call).
import { createAssistantMessageEventStream } from "agent-loop-wasm";

/** The model object of the offline script (its `api` is no built-in one: only `offlineStreamFn` serves it). */
export const OFFLINE_MODEL = Object.freeze({
  id: "offline-scripted",
  name: "Offline scripted model",
  api: "offline-scripted",
  provider: "offline",
  baseUrl: "",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
});

/** Prompts the script understands, as its note lists them. */
export const OFFLINE_PROMPTS = ["Charge Ada 25 euros", "Record that Ada paid"];

/** The provider each built-in API talks to when MODEL_PROVIDER is unset. */
const PROVIDERS = {
  "openai-completions": "openai",
  "openai-responses": "openai",
  "anthropic-messages": "anthropic",
  "google-generative-ai": "google",
};

/**
 * The model the environment asks for: MODEL_API unset or empty is the offline script; otherwise MODEL_ID names the
 * model, MODEL_URL its base URL (empty: the provider's own) and MODEL_PROVIDER its provider (default by API). The
 * configuration was checked before (see `configError` in worker.js).
 */
export function configuredModel(env) {
  if (!env.MODEL_API) return OFFLINE_MODEL;
  return {
    id: env.MODEL_ID,
    name: env.MODEL_ID,
    api: env.MODEL_API,
    provider: env.MODEL_PROVIDER || PROVIDERS[env.MODEL_API],
    baseUrl: env.MODEL_URL ?? "",
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 4096,
  };
}

/** What is wrong with the model variables, or undefined. */
export function modelConfigError(env, builtinApis) {
  if (!env.MODEL_API) return undefined;
  if (!builtinApis.includes(env.MODEL_API)) return `MODEL_API "${env.MODEL_API}" is not one of ${builtinApis.join(", ")} (unset it for the offline model)`;
  if (!env.MODEL_ID) return `MODEL_API is "${env.MODEL_API}" but MODEL_ID is not set`;
  return undefined;
}

/** Milliseconds before each streamed word or argument fragment (a chat UI sees the answer stream). */
const CHUNK_MS = 15;

/**
 * The offline stream function, `(model, context, options) => AssistantMessageEventStream`: streams the scripted reply
 * like a provider (`start`, text word by word, tool-call arguments in fragments, `done`) and ends with `error`
 * ("aborted") when the signal aborts.
 */
export function offlineStreamFn(model, context, options) {
  const stream = createAssistantMessageEventStream();
  const signal = options?.signal;
  const reply = planReply(context?.messages ?? [], declaredTools(context));
  const message = {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: Date.now(),
  };
  const pause = () => new Promise((resolve) => setTimeout(resolve, CHUNK_MS));
  const aborted = () => {
    if (!signal?.aborted) return false;
    message.stopReason = "aborted";
    message.errorMessage = "Request was aborted";
    stream.push({ type: "error", reason: "aborted", error: message });
    return true;
  };
  const run = async () => {
    if (aborted()) return;
    stream.push({ type: "start", partial: message });
    if (reply.text) {
      const index = message.content.length;
      const block = { type: "text", text: "" };
      message.content.push(block);
      stream.push({ type: "text_start", contentIndex: index, partial: message });
      for (const word of reply.text.match(/\s*\S+/g) ?? []) {
        await pause();
        if (aborted()) return;
        block.text += word;
        stream.push({ type: "text_delta", contentIndex: index, delta: word, partial: message });
      }
      stream.push({ type: "text_end", contentIndex: index, content: block.text, partial: message });
    }
    for (const call of reply.toolCalls) {
      const index = message.content.length;
      const block = { type: "toolCall", id: call.id, name: call.name, arguments: {} };
      message.content.push(block);
      stream.push({ type: "toolcall_start", contentIndex: index, partial: message });
      for (const piece of JSON.stringify(call.arguments).match(/[\s\S]{1,8}/g)) {
        await pause();
        if (aborted()) return;
        stream.push({ type: "toolcall_delta", contentIndex: index, delta: piece, partial: message });
      }
      block.arguments = call.arguments;
      stream.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial: message });
    }
    message.stopReason = reply.toolCalls.length ? "toolUse" : "stop";
    stream.push({ type: "done", reason: message.stopReason, message });
  };
  run().catch((error) => {
    message.stopReason = "error";
    message.errorMessage = `Offline model failed: ${error?.message ?? error}`;
    stream.push({ type: "error", reason: "error", error: message });
  });
  return stream;
}

/**
 * The next reply from the transcript: `{ text, toolCalls: [{ id, name, arguments }] }`. New user messages since the
 * last assistant message are a request (the last one wins); otherwise the tool results since are answered.
 */
export function planReply(messages, tools) {
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  const request = messages.slice(lastAssistant + 1).findLast((m) => m.role === "user");
  if (!request) {
    const results = messages.slice(lastAssistant + 1).filter((m) => m.role === "toolResult");
    if (!results.length) return { text: "I have nothing to add.", toolCalls: [] };
    return { text: ["Here is what happened:", ...results.map(describeResult)].join("\n- "), toolCalls: [] };
  }
  const text = textOf(request);
  const wanted = [];
  const amount = chargeAmount(text);
  if (amount !== undefined) wanted.push({ name: "charge_card", arguments: { cents: amount } });
  const effect = /\brecord\s+(?:that\s+)?(.+)/i.exec(text)?.[1]?.replace(/[\s.!?]+$/, "");
  if (effect) wanted.push({ name: "record_effect", arguments: { key: effect } });
  const usable = wanted.filter((c) => tools.has(c.name));
  if (!usable.length) {
    const examples = OFFLINE_PROMPTS.map((p) => `“${p}”`).join(" or ");
    return {
      text:
        "I am the offline scripted model of this example, not a language model: I understand " +
        `${examples} (a charge above the approval limit waits for your approval). ` +
        "Set MODEL_API, MODEL_ID and MODEL_API_KEY for a real model.",
      toolCalls: [],
    };
  }
  let n = messages.reduce((k, m) => k + (m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").length : 0), 0);
  const toolCalls = usable.map((c) => ({ id: `call_${++n}`, ...c }));
  const doing = toolCalls.map((c) => (c.name === "charge_card" ? `charge ${c.arguments.cents} cents` : `record "${c.arguments.key}"`));
  return { text: `I will ${doing.join(" and ")}.`, toolCalls };
}

/** "25 euros", "€25", "12.50 dollars", "$3", "300 cents" → cents; undefined when the text asks for no charge. */
function chargeAmount(text) {
  if (!/\b(charge|bill|pay)\b/i.test(text)) return undefined;
  const cents = /(\d+)\s*(?:cents?|ct)\b/i.exec(text);
  if (cents) return Number(cents[1]);
  const money = /(\d+(?:[.,]\d{1,2})?)\s*(?:euros?|eur|dollars?|usd|pounds?|gbp|€|\$|£)|[€$£]\s*(\d+(?:[.,]\d{1,2})?)/i.exec(text);
  if (!money) return undefined;
  return Math.round(Number((money[1] ?? money[2]).replace(",", ".")) * 100);
}

/** One line of the answer for a tool result. */
function describeResult(result) {
  const text = textOf(result);
  if (!result.isError) return `${result.toolName}: ${text}`;
  if (/ was denied\b/.test(text)) return `${result.toolName} was not run: ${text}`;
  if (/ was interrupted and not retried$/.test(text)) return `${result.toolName} was interrupted: ${text}`;
  return `${result.toolName} failed: ${text}`;
}

const textOf = (message) =>
  typeof message.content === "string" ? message.content : message.content.map((b) => (b.type === "text" ? b.text : "")).join("");

/** The names of the tools the request declares (the Agent puts them in its system messages and `context.tools`). */
function declaredTools(context) {
  const names = new Set((context?.tools ?? []).map((t) => t.name));
  for (const m of context?.messages ?? []) {
    if (m.role !== "system") continue;
    for (const t of m.toolsAdded ?? []) names.add(t.name);
    for (const t of m.toolsRemoved ?? []) names.delete(typeof t === "string" ? t : t.name);
  }
  return names;
}
