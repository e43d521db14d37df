// openai-completions (§6.6): OpenAI Chat Completions and the servers that speak it (llama.cpp, vLLM, Ollama,
// LM Studio, OpenRouter, Groq, …). Builds the request from the cleaned transcript and maps `data:` chunks (until
// `[DONE]`) onto the assembler; blocks stay open until the end (P-6.1.4).

import { BLOCK } from "./assemble.js";
import { blocks, isObject, kind, num, parseContainer, str } from "./json.js";
import {
  OPENAI_BASE_URL, apiKey, baseUrl, compatBool, compatStr, firstChars, invalidJsonMessage, isOpenrouter,
  mappedEffort, maxTokens, mergeSampling, missingOpenaiKey, modelReasons, openrouterBilledCost, optionNumber,
  optionStr, thinkingLevel,
} from "./request.js";
import { message as strictMessage, optionalIndex, optionalStr, typeName } from "./strict.js";
import { prepare } from "./transcript.js";

/** The reasoning fields servers stream (and accept back), in the order they are read. */
const REASONING_FIELDS = ["reasoning_content", "reasoning", "reasoning_text"];
const TEXT = "text";
const THINKING = "thinking";
/** The wire format's name in stream errors. */
const FORMAT = "openai-completions";

// The JSON text of a non-string value (error messages, odd finish reasons).
const display = (v) => JSON.stringify(v);

/**
 * Tool-call ids for Chat Completions: a Responses id `"<call_id>|<item_id>"` becomes `<call_id>_<item_id>`
 * (characters outside `[A-Za-z0-9_-]` → `_`), shortened with a hash past 40 characters; OpenAI's own ids are
 * cut at 40.
 * @param {string} id
 * @param {boolean} providerIsOpenai
 * @returns {string}
 */
export function normalizeToolCallId(id, providerIsOpenai) {
  const bar = id.indexOf("|");
  if (bar >= 0) {
    const call = sanitizeId(id.slice(0, bar));
    const item = sanitizeId(id.slice(bar + 1));
    const combined = item ? `${call}_${item}` : call;
    if (combined.length <= 40) return combined;
    const hash = shortHash(id).slice(0, 8);
    return `${call.slice(0, Math.max(40 - (hash.length + 1), 1))}_${hash}`;
  }
  return providerIsOpenai && id.length > 40 ? firstChars(id, 40) : id;
}

/**
 * Characters outside `[A-Za-z0-9_-]` → `_` (one per UTF-16 unit, as a JS regex replace does).
 * @param {string} id
 * @returns {string}
 */
export function sanitizeId(id) {
  return id.replace(/[^A-Za-z0-9_-]/g, "_");
}

/** A fast deterministic 53-bit-style string hash (two 32-bit lanes, base 36), over UTF-16 units (the reference's). */
function shortHash(text) {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(36) + (h1 >>> 0).toString(36);
}

const dataUrl = (image) => ({
  type: "image_url",
  image_url: { url: `data:${str(image, "mimeType")};base64,${str(image, "data")}` },
});

/** §6.6 Messages: the system head, then user / assistant / tool messages. */
function convertMessages(model, t, isOpenai) {
  const out = [];
  if (t.systemPrompt) {
    const developer = modelReasons(model) && (compatBool(model, "supportsDeveloperRole") ?? isOpenai);
    out.push({ role: developer ? "developer" : "system", content: t.systemPrompt });
  }
  const input = isObject(model) ? model.input : undefined;
  const images = Array.isArray(input) && input.includes("image");
  let results = [];
  const flush = () => {
    pushToolResults(out, results, model, images);
    results = [];
  };
  for (const message of t.messages) {
    const role = str(message, "role");
    if (role === "toolResult") {
      results.push(message);
      continue;
    }
    flush();
    const converted = role === "user" ? convertUser(message) : role === "assistant" ? convertAssistant(model, message) : undefined;
    if (converted) out.push(converted);
  }
  flush();
  return out;
}

function convertUser(message) {
  if (typeof message.content === "string") return { role: "user", content: message.content };
  const parts = [];
  for (const block of blocks(message)) {
    const type = kind(block);
    if (type === "text" && str(block, "text")) parts.push({ type: "text", text: str(block, "text") });
    else if (type === "image") parts.push(dataUrl(block));
  }
  return parts.length ? { role: "user", content: parts } : undefined;
}

function convertAssistant(model, message) {
  const content = blocks(message);
  const details = reasoningDetailsToSend(content);
  const text = content.filter((b) => kind(b) === "text" && str(b, "text").trim()).map((b) => str(b, "text")).join("");
  const thinking = content.filter((b) => kind(b) === "thinking" && str(b, "thinking").trim());
  const joinedThinking = thinking.map((b) => str(b, "thinking")).join("\n");
  const calls = content.filter((b) => kind(b) === "toolCall").map((call) => ({
    id: str(call, "id"),
    type: "function",
    function: { name: str(call, "name"), arguments: JSON.stringify(call.arguments === undefined ? {} : call.arguments) },
  }));
  const out = {
    role: "assistant",
    content: text || (compatBool(model, "requiresNonNullAssistantContent") === true ? "" : null),
  };
  // Issue 33: streamed `reasoning_details` (the thinking block's signature, JSON) go back as they came, so a signed
  // or encrypted thinking turn can be replayed (OpenRouter), in place of the plain reasoning field, which otherwise
  // goes back under the name it streamed in (its thinkingSignature).
  if (thinking.length && !details) {
    const field = str(thinking[0], "thinkingSignature");
    if (REASONING_FIELDS.includes(field)) out[field] = joinedThinking;
  }
  if (calls.length) out.tool_calls = calls;
  if (details) out.reasoning_details = details;
  if (
    compatBool(model, "requiresReasoningContentOnAssistantMessages") === true &&
    modelReasons(model) &&
    !("reasoning_content" in out)
  ) {
    out.reasoning_content = joinedThinking;
  }
  return text || calls.length ? out : undefined;
}


/**
 * The `reasoning_details` an assistant message sends back (the reference's rule): those of the first thinking block
 * whose signature is a JSON array of valid details, else the encrypted details (with an id) kept as tool calls'
 * `thoughtSignature`s.
 */
function reasoningDetailsToSend(content) {
  for (const block of content) {
    if (kind(block) !== "thinking") continue;
    const details = parseContainer(str(block, "thinkingSignature"));
    if (Array.isArray(details) && details.length && details.every(isReasoningDetail)) return details;
  }
  const legacy = content
    .filter((b) => kind(b) === "toolCall")
    .map((call) => parseContainer(str(call, "thoughtSignature")))
    .filter((d) => isReasoningDetail(d) && d.type === "reasoning.encrypted" && str(d, "id") && str(d, "data"));
  return legacy.length ? legacy : undefined;
}

/**
 * A reasoning detail as OpenRouter defines them: `reasoning.text` (`text`, optional `signature`),
 * `reasoning.summary` (`summary`) or `reasoning.encrypted` (`data`); `id`, `format`, `index` typed when present.
 */
function isReasoningDetail(d) {
  if (!isObject(d)) return false;
  const absentOr = (key, type) => d[key] === undefined || typeof d[key] === type;
  const nullOr = (key) => d[key] === null || absentOr(key, "string");
  if (!(nullOr("id") && absentOr("format", "string") && absentOr("index", "number"))) return false;
  switch (d.type) {
    case "reasoning.summary":
      return typeof d.summary === "string";
    case "reasoning.encrypted":
      return typeof d.data === "string";
    // Issue 33: OpenRouter streams Anthropic's signature as a `reasoning.text` detail without `text`; it is kept
    // (the reference drops it, and the thinking goes back unsigned).
    case "reasoning.text":
      return (typeof d.text === "string" || !!str(d, "signature")) && absentOr("text", "string") && nullOr("signature");
    default:
      return false;
  }
}

/**
 * Appends a streamed detail as the reference merges them: consecutive `reasoning.text` (and `reasoning.summary`)
 * fragments join into one entry (text appended, the first non-empty signature, missing `id`/`format` filled);
 * encrypted ones stay separate.
 */
function appendReasoningDetail(details, detail) {
  const type = str(detail, "type");
  const field = type === "reasoning.text" ? "text" : type === "reasoning.summary" ? "summary" : "";
  const last = details[details.length - 1];
  if (field && isObject(last) && last.type === type) {
    if (typeof last[field] === "string") last[field] += str(detail, field);
    // `last.k ||= detail.k` (`??=` for `id` and `index`): a value missing on the right leaves the key out.
    const replace = [
      ["signature", type === "reasoning.text" && !last.signature],
      ["id", last.id == null],
      ["format", !last.format],
      ["index", last.index == null],
    ];
    for (const [key, yes] of replace) {
      if (!yes) continue;
      if (detail[key] === undefined) delete last[key];
      else last[key] = detail[key];
    }
    return;
  }
  details.push({ ...detail });
}

/** One `tool` message per result; their images (if supported) in one following user message. */
function pushToolResults(out, results, model, imagesSupported) {
  if (!results.length) return;
  const images = [];
  for (const result of results) {
    const content = blocks(result);
    const joined = content.filter((b) => kind(b) === "text").map((b) => str(b, "text")).join("\n");
    const resultImages = content.filter((b) => kind(b) === "image");
    const text = joined.trim() ? joined : resultImages.length ? "(see attached image)" : "(no tool output)";
    const message = { role: "tool", content: text, tool_call_id: str(result, "toolCallId") };
    const name = str(result, "toolName");
    if (compatBool(model, "requiresToolResultName") === true && name) message.name = name;
    out.push(message);
    if (imagesSupported) images.push(...resultImages.map(dataUrl));
  }
  if (images.length) out.push({ role: "user", content: [{ type: "text", text: "Tool result image:" }, ...images] });
}

/** §6.10 Chat usage. */
function chatUsage(usage) {
  const prompt = num(usage, "prompt_tokens") ?? 0;
  const details = usage.prompt_tokens_details;
  const cacheRead = num(details, "cached_tokens") ?? num(usage, "prompt_cache_hit_tokens") ?? num(usage, "cached_tokens") ?? 0;
  const cacheWrite = num(details, "cache_write_tokens") ?? 0;
  const reasoning = num(usage.completion_tokens_details, "reasoning_tokens") || num(usage, "reasoning_tokens") || 0;
  return {
    input: Math.max(prompt - cacheRead - cacheWrite, 0),
    output: num(usage, "completion_tokens") ?? 0,
    cacheRead,
    cacheWrite,
    reasoning,
  };
}

/** The stream mapper of one response. */
function mapper(input) {
  const modelId = str(input.model, "id");
  // OpenRouter reports the billed cost in its usage (issue 33).
  const openrouter = isOpenrouter(input.model);
  const supportsFinishReason = compatBool(input.model, "supportsFinishReason") !== false;
  let responseId = false;
  let responseModel = false;
  let thinkingOpen = false;
  let finishReason;
  /** @type {Array<{ key: string, index?: number, ids: string[], synthetic: boolean, named: boolean }>} */
  const calls = [];

  function chunk(data, asm) {
    const error = data.error;
    if (error) {
      const m = error.message;
      asm.fail(typeof m === "string" && m ? m : m ? display(m) : display(error), finishReason);
      return;
    }
    if (!responseId && typeof data.id === "string" && data.id) {
      responseId = true;
      asm.meta("responseId", data.id);
    }
    if (!responseModel && typeof data.model === "string" && data.model && data.model !== modelId) {
      responseModel = true;
      asm.meta("responseModel", data.model);
    }
    const choices = data.choices;
    const hasChoice = Array.isArray(choices) && choices.length > 0;
    const choice = hasChoice ? choices[0] : undefined;
    const usage = data.usage || choice?.usage;
    if (isObject(usage)) {
      const now = chatUsage(usage);
      if (openrouter) now.billed = openrouterBilledCost(usage);
      asm.usage(now);
    }
    if (!hasChoice) return;
    const reason = choice?.finish_reason;
    if (reason) finishReason = typeof reason === "string" ? reason : display(reason);
    const delta = choice?.delta;
    if (!isObject(delta)) return;
    const field = REASONING_FIELDS.find((f) => typeof delta[f] === "string" && delta[f]);
    if (field) {
      asm.thinkingDelta(THINKING, delta[field]);
      if (!thinkingOpen) {
        thinkingOpen = true;
        asm.setField(THINKING, "thinkingSignature", field);
      }
    }
    // Issue 33: `reasoning_details` (OpenRouter) are replay data, not text: kept whole and written once, as the
    // thinking block's signature (JSON), when the block closes, so the next request can send them back.
    if (Array.isArray(delta.reasoning_details)) {
      for (const detail of delta.reasoning_details) {
        if (!isReasoningDetail(detail)) continue;
        if (!thinkingOpen) {
          thinkingOpen = true;
          asm.openBlock(THINKING, BLOCK.THINKING);
          asm.setField(THINKING, "thinkingSignature", "");
        }
        asm.atClose(THINKING, "thinkingSignature", (kept) => {
          if (Array.isArray(kept)) appendReasoningDetail(kept, detail);
          return kept;
        });
      }
    }
    for (const key of ["content", "refusal"]) {
      if (typeof delta[key] === "string" && delta[key]) asm.textDelta(TEXT, delta[key]);
    }
    // Issue 33: Mistral's reasoning models (Magistral) stream `content` as typed parts: `{type: "thinking",
    // thinking: [{type: "text", text}]}` and `{type: "text", text}` (the reference writes `[object Object]`).
    if (Array.isArray(delta.content)) {
      for (const part of delta.content) {
        const type = part?.type;
        if (type === "text") {
          if (typeof part.text === "string" && part.text) asm.textDelta(TEXT, part.text);
        } else if (type === "thinking") {
          for (const item of Array.isArray(part.thinking) ? part.thinking : []) {
            const text = item?.text;
            if (typeof text === "string" && text) {
              asm.thinkingDelta(THINKING, text);
              thinkingOpen = true;
            }
          }
        }
      }
    }
    const fragments = delta.tool_calls ?? [];
    if (!Array.isArray(fragments)) {
      asm.fail(strictMessage(FORMAT, "choices[0].delta", "tool_calls", "an array", fragments));
      return;
    }
    for (let position = 0; position < fragments.length; position++) {
      try {
        toolFragment(position, fragments[position], asm);
      } catch (e) {
        asm.fail(e.message);
        return;
      }
    }
  }

  /**
   * P-6.4.1: fragments by `index` (fallback `id`); the first carries id and name. Issue 13: a field of the wrong
   * type is the stream's error, never read as missing.
   */
  function toolFragment(position, fragment, asm) {
    const label = `choices[0].delta.tool_calls[${position}]`;
    if (!isObject(fragment)) {
      throw new Error(`Malformed ${FORMAT} stream: ${label} must be an object, got ${typeName(fragment)}`);
    }
    // An index of 2^63 or more counts as none: the fragment is matched by its id, else starts a call (P-6.4.1).
    let index = optionalIndex(FORMAT, label, fragment, "index");
    if (index >= 2 ** 63) index = undefined;
    const id = optionalStr(FORMAT, label, fragment, "id") || undefined;
    const fn = fragment.function ?? undefined;
    if (fn !== undefined && !isObject(fn)) throw new Error(strictMessage(FORMAT, label, "function", "an object", fn));
    const field = (key) => (fn ? optionalStr(FORMAT, `${label}.function`, fn, key) : undefined) ?? "";
    const name = field("name");
    const args = field("arguments");
    let slot = index === undefined ? undefined : calls.find((c) => c.index === index);
    if (!slot && id) slot = calls.find((c) => c.ids.includes(id));
    if (slot) {
      slot.index ??= index;
      if (id) {
        if (slot.synthetic) {
          slot.synthetic = false;
          asm.setField(slot.key, "id", id);
        }
        if (!slot.ids.includes(id)) slot.ids.push(id);
      }
      if (!slot.named && name) {
        slot.named = true;
        asm.setField(slot.key, "name", name);
      }
    } else {
      const n = calls.length;
      slot = { key: `tool${n}`, index, ids: id ? [id] : [], synthetic: !id, named: !!name };
      asm.toolStart(slot.key, id ?? `call_${n}`, name);
      calls.push(slot);
    }
    asm.toolArgsDelta(slot.key, args);
  }

  /** §6.10: the recorded finish reason decides; none is an error unless the server never sends one. */
  function end(asm) {
    // Issue 13: a call no fragment named cannot run (its id may be the made-up `call_<n>`).
    const unnamed = calls.findIndex((c) => !c.named);
    if (unnamed >= 0) {
      asm.fail(`Malformed ${FORMAT} stream: tool call ${unnamed}: no fragment carried "function.name"`, finishReason);
      return;
    }
    const reason = finishReason;
    if (reason === "stop" || reason === "end") asm.finish("stop", reason);
    else if (reason === "length") asm.finish("length", reason);
    else if (reason === "tool_calls" || reason === "function_call") asm.finish("toolUse", reason);
    else if (reason !== undefined) asm.fail(`Provider finish_reason: ${reason}`, reason);
    else if (!supportsFinishReason) asm.finish(asm.hasToolCalls() ? "toolUse" : "stop", undefined);
    else asm.fail("Stream ended without finish_reason", undefined);
  }

  return {
    onEvent(_event, data, asm) {
      if (isObject(data)) chunk(data, asm);
    },
    /** `[DONE]` ends the reply and other text fails it; empty data is left to `onUnparsed`. */
    onText(_event, data, asm) {
      const text = data.trim();
      if (!text) return false;
      if (text === "[DONE]") end(asm);
      else asm.fail(invalidJsonMessage(data), undefined);
      return true;
    },
    onEnd: end,
  };
}

/**
 * The `openai-completions` wire format: `buildRequest(input) → { url, headers, body }` (throws `Error(message)`,
 * e.g. a missing key) and `streamMapper(input) → { onEvent, onText, onEnd }`.
 */
export const openaiCompletions = {
  buildRequest(input) {
    const { model, options } = input;
    const base = baseUrl(model, OPENAI_BASE_URL);
    const provider = str(model, "provider");
    const isOpenai = provider === "openai" || base.includes("api.openai.com");
    const t = prepare(input, (id) => normalizeToolCallId(id, provider === "openai"));
    const level = thinkingLevel(options);

    const body = { model: str(model, "id"), messages: convertMessages(model, t, isOpenai), stream: true };
    const session = optionStr(options, "sessionId");
    if (base.includes("api.openai.com") && optionStr(options, "cacheRetention") !== "none" && session !== undefined) {
      body.prompt_cache_key = firstChars(session, 64);
    }
    if (compatBool(model, "supportsUsageInStreaming") !== false) body.stream_options = { include_usage: true };
    const limit = maxTokens(input);
    if (limit !== undefined) {
      const given = compatStr(model, "maxTokensField");
      const field =
        given === "max_tokens" || given === "max_completion_tokens" ? given : isOpenai ? "max_completion_tokens" : "max_tokens";
      body[field] = limit;
    }
    const temperature = optionNumber(options, "temperature");
    if (temperature !== undefined) body.temperature = temperature;
    if (t.tools.length) {
      body.tools = t.tools.map((tool) => ({
        type: "function",
        function: {
          name: str(tool, "name"),
          description: str(tool, "description"),
          parameters: tool.parameters === undefined ? {} : tool.parameters,
        },
      }));
    }
    const choice = isObject(options) ? options.toolChoice : undefined;
    if (choice) body.tool_choice = choice;
    if (level !== undefined && modelReasons(model) && compatBool(model, "supportsReasoningEffort") !== false) {
      const effort = mappedEffort(model, level);
      if (effort !== undefined) body.reasoning_effort = effort;
    }
    mergeSampling(body, input, level);

    const url = `${base}/chat/completions`;
    // P-6.2.3: without a key a known cloud service fails here; any other server gets no Authorization.
    const missing = missingOpenaiKey(input, url);
    if (missing !== undefined) throw new Error(missing);
    const headers = [["content-type", "application/json"]];
    const key = apiKey(input);
    if (key !== undefined) headers.push(["authorization", `Bearer ${key}`]);
    return { url, headers, body };
  },
  streamMapper: mapper,
};
