// `anthropic-messages` (§6.8): the Messages API. Builds the request (system blocks, alternating roles, tool
// results, cache breakpoints, budget thinking) from the cleaned transcript and maps `event:` + `data:` stream
// events onto the assembler by content-block index.

import { BLOCK } from "./assemble.js";
import {
  ANTHROPIC_BASE_URL, apiKey, baseUrl, compatBool, hasHeader, invalidJsonMessage, isOpenrouter, maxTokens,
  mergeSampling, modelReasons, openrouterBilledCost, optionNumber, optionStr, thinkingLevel, thinkingLimits,
} from "./request.js";
import { asStr, blocks as content, get, isObject, kind as type, num as number, role, str as text } from "./json.js";
import { message as malformed, optionalStr, requiredIndex, requiredStr, requiredString } from "./strict.js";
import { prepare, replaceImages, strField, textBlock } from "./transcript.js";

/** The `anthropic-version` header every request sends. */
const ANTHROPIC_VERSION = "2023-06-01";
// Without a known limit `max_tokens` (required) is 4096 (P-6.2.7).
const DEFAULT_MAX_TOKENS = 4096;
const ERROR_IMAGE_PLACEHOLDER = "(image attached after the tool results)";
const FORMAT = "anthropic-messages";

/** Blank as the reference's `String#trim` sees it. */
const blank = (text) => text.trim() === "";

/**
 * P-6.5.2: every UTF-16 unit outside `[A-Za-z0-9_-]` becomes `_`; at most 64 units.
 * @param {string} id
 * @returns {string}
 */
export const normalizeToolCallId = (id) => id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);

/** `{name, description, input_schema}`; the schema keeps only what the API accepts at its root. */
function convertTool(tool) {
  const p = isObject(tool.parameters) ? tool.parameters : {};
  const field = (key, fallback) => (p[key] !== undefined ? p[key] : fallback);
  const schema = { type: "object", properties: field("properties", {}), required: field("required", []) };
  for (const key of ["additionalProperties", "$defs", "definitions"]) if (p[key] !== undefined) schema[key] = p[key];
  return { name: strField(tool, "name"), description: strField(tool, "description"), input_schema: schema };
}

const imageBlock = (image) => ({
  type: "image", source: { type: "base64", media_type: text(image, "mimeType"), data: text(image, "data") },
});
const thinkingBlock = (thinking, signature) => ({ type: "thinking", thinking, signature });

/** §6.8 Messages: alternating roles, user-side entries merged. */
function convertMessages(messages, allowEmptySignature) {
  const out = [];
  for (let index = 0; index < messages.length; ) {
    const message = messages[index++];
    const kind = role(message);
    if (kind === "user") pushUser(out, userBlocks(message));
    else if (kind === "assistant") {
      const blocks = assistantBlocks(message, allowEmptySignature);
      if (blocks.length) out.push({ role: "assistant", content: blocks });
    } else if (kind === "toolResult") {
      // All consecutive results go in one user message, error images after them.
      const errorImages = [];
      const results = [toolResult(message, errorImages)];
      while (role(messages[index]) === "toolResult") results.push(toolResult(messages[index++], errorImages));
      pushUser(out, results.concat(errorImages));
    }
  }
  return out;
}

function pushUser(out, blocks) {
  if (!blocks.length) return;
  const last = out[out.length - 1];
  if (last?.role === "user") last.content = last.content.concat(blocks);
  else out.push({ role: "user", content: blocks });
}

function userBlocks(message) {
  if (typeof message.content === "string") return blank(message.content) ? [] : [textBlock(message.content)];
  const out = [];
  for (const block of content(message)) {
    const kind = type(block);
    if (kind === "text" && !blank(text(block, "text"))) out.push(textBlock(text(block, "text")));
    else if (kind === "image") out.push(imageBlock(block));
  }
  return out;
}

function assistantBlocks(message, allowEmptySignature) {
  const out = [];
  for (const block of content(message)) {
    const kind = type(block);
    if (kind === "text" && !blank(text(block, "text"))) out.push(textBlock(text(block, "text")));
    else if (kind === "thinking") {
      const signature = text(block, "thinkingSignature");
      const thinking = text(block, "thinking");
      if (block.redacted === true) out.push({ type: "redacted_thinking", data: signature });
      else if (!blank(signature)) out.push(thinkingBlock(thinking, signature));
      else if (blank(thinking)) continue;
      else if (allowEmptySignature) out.push(thinkingBlock(thinking, ""));
      // Unsigned thinking (an interrupted stream) cannot be replayed as thinking.
      else out.push(textBlock(thinking));
    } else if (kind === "toolCall") {
      const args = block.arguments;
      out.push({
        type: "tool_use", id: text(block, "id"), name: text(block, "name"), input: args == null ? {} : args,
      });
    }
  }
  return out;
}

/** One `tool_result` block; an error result's images are replaced and queued in `errorImages`. */
function toolResult(result, errorImages) {
  const isError = result.isError === true;
  let blocks = content(result);
  const images = blocks.filter((b) => type(b) === "image");
  if (isError && images.length) {
    const id = text(result, "toolCallId");
    errorImages.push(textBlock(`Images from the error result of tool call ${id} (${text(result, "toolName")}):`));
    errorImages.push(...images.map(imageBlock));
    blocks = replaceImages(blocks, ERROR_IMAGE_PLACEHOLDER);
  }
  const id = text(result, "toolCallId");
  return { type: "tool_result", tool_use_id: id, content: resultContent(blocks), is_error: isError };
}

/** Texts only → one string (joined by "\n"); with images → blocks, a placeholder text first if none is a text. */
function resultContent(blocks) {
  if (!blocks.some((b) => type(b) === "image")) {
    return blocks.filter((b) => type(b) === "text").map((b) => text(b, "text")).join("\n");
  }
  const out = [];
  for (const block of blocks) {
    const kind = type(block);
    if (kind === "text") out.push(textBlock(text(block, "text")));
    else if (kind === "image") out.push(imageBlock(block));
  }
  if (!out.some((b) => b.type === "text")) out.unshift(textBlock("(see attached image)"));
  return out;
}

/** The cache breakpoint on the last content block of the last message (a user-side one). */
function markLastBlock(messages, cache) {
  const last = messages[messages.length - 1];
  const block = last?.role === "user" ? last.content[last.content.length - 1] : undefined;
  if (block && ["text", "image", "tool_result"].includes(block.type)) block.cache_control = { ...cache };
}

function buildRequest(input) {
  const { model, options } = input;
  const key = apiKey(input);
  if (key === undefined && !["authorization", "x-api-key", "cf-aig-authorization"].some((h) => hasHeader(input, h))) {
    throw new Error(`No API key for provider: ${strField(model, "provider")}`);
  }
  const t = prepare(input, normalizeToolCallId);
  const level = thinkingLevel(options);
  const limits = level !== undefined && modelReasons(model)
    ? thinkingLimits(input, level, DEFAULT_MAX_TOKENS) : { maxTokens: maxTokens(input) };
  const limit = limits.maxTokens ?? DEFAULT_MAX_TOKENS;
  const budget = limits.budget;
  const retention = optionStr(options, "cacheRetention");
  const cache = retention === "none" ? undefined
    : retention === "long" && compatBool(model, "supportsLongCacheRetention") !== false
      ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };

  const messages = convertMessages(t.messages, compatBool(model, "allowEmptySignature") === true);
  if (cache) markLastBlock(messages, cache);
  const body = { model: strField(model, "id"), messages, max_tokens: limit, stream: true };
  if (t.systemPrompt) {
    body.system = [{ type: "text", text: t.systemPrompt, ...(cache && { cache_control: { ...cache } }) }];
  }
  const temperature = optionNumber(options, "temperature");
  if (budget === undefined && temperature !== undefined) body.temperature = temperature;
  if (t.tools.length) body.tools = t.tools.map(convertTool);
  // The API requires a budget of at least 1024; 0 (no room) asks for the minimum.
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget || 1024 };
  const choice = get(options, "toolChoice");
  if (typeof choice === "string" && choice) body.tool_choice = { type: choice };
  else if (isObject(choice)) body.tool_choice = choice;
  mergeSampling(body, input, level);

  const headers = [
    ["content-type", "application/json"],
    ["anthropic-version", ANTHROPIC_VERSION],
    ["anthropic-dangerous-direct-browser-access", "true"],
  ];
  if (key !== undefined) headers.push(["x-api-key", key]);
  return { url: `${baseUrl(model, ANTHROPIC_BASE_URL)}/v1/messages`, headers, body };
}

/**
 * The block key of a `content_block_*` event. Issue 13: its `index` must be an integer ≥ 0 (another value would
 * open, feed or close a block no other event names).
 */
const blockKey = (event, data) => `b${requiredIndex(FORMAT, event, data, "index")}`;

/** `<event> (index <n>)`, naming the item in a stream error. */
const itemLabel = (event, key) => `${event} (index ${key.slice(1)})`;

/** The `content_block_delta` types that carry content (others, e.g. citations, are ignored) → their member. */
const DELTA_FIELD = {
  __proto__: null, text_delta: "text", thinking_delta: "thinking", signature_delta: "signature",
  input_json_delta: "partial_json",
};
/** The `message_delta` stop reasons that end the stream as done (§6.10). */
const STOP = {
  __proto__: null, end_turn: "stop", pause_turn: "stop", stop_sequence: "stop", max_tokens: "length",
  tool_use: "toolUse",
};
const BLOCK_EVENTS = ["content_block_start", "content_block_delta", "content_block_stop"];
const READ_EVENTS = ["message_start", ...BLOCK_EVENTS, "message_delta", "message_stop"];

function streamMapper(input) {
  const modelId = strField(input.model, "id");
  const openrouter = isOpenrouter(input.model);
  /** Content blocks open by Anthropic `index` → kind (ignored kinds are not here). */
  const open = new Map();
  let usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  /** `[raw, { reason } | { error }]` from `message_delta` (§6.10). */
  let stop;

  function messageStart(data, asm) {
    const message = get(data, "message");
    const id = asStr(get(message, "id"));
    if (id !== undefined) asm.meta("responseId", id);
    const name = asStr(get(message, "model"));
    if (name !== undefined && name !== modelId) asm.meta("responseModel", name);
    const u = get(message, "usage");
    const count = (key) => number(u, key) ?? 0;
    usage = {
      input: count("input_tokens"),
      output: count("output_tokens"),
      cacheRead: count("cache_read_input_tokens"),
      cacheWrite: count("cache_creation_input_tokens"),
      cacheWrite1h: number(get(u, "cache_creation"), "ephemeral_1h_input_tokens") ?? 0,
    };
    asm.usage(usage);
  }

  // Issue 13: the fields a block is made of must have their types (thrown: the stream's error).
  function blockStart(data, asm) {
    const event = "content_block_start";
    const key = blockKey(event, data);
    const block = get(data, "content_block");
    const at = itemLabel(event, key);
    if (!isObject(block)) throw new Error(malformed(FORMAT, at, "content_block", "an object", block));
    const label = `${at} content_block`;
    let kind;
    switch (requiredStr(FORMAT, label, block, "type")) {
      case "text": {
        const initial = optionalStr(FORMAT, label, block, "text") ?? "";
        asm.openBlock(key, (kind = BLOCK.TEXT));
        // Initial text is kept, as part of text_start (no delta event).
        if (initial) asm.setField(key, "text", initial);
        break;
      }
      case "thinking": {
        const thinking = optionalStr(FORMAT, label, block, "thinking") ?? "";
        const signature = optionalStr(FORMAT, label, block, "signature") ?? "";
        asm.openBlock(key, (kind = BLOCK.THINKING));
        if (thinking) asm.setField(key, "thinking", thinking);
        if (signature) asm.appendSignature(key, "thinkingSignature", signature);
        else asm.setField(key, "thinkingSignature", "");
        break;
      }
      case "redacted_thinking":
        asm.redactedThinking(key, requiredString(FORMAT, label, block, "data"));
        return;
      case "tool_use": {
        const id = requiredStr(FORMAT, label, block, "id");
        asm.toolStart(key, id, requiredStr(FORMAT, label, block, "name"));
        kind = BLOCK.TOOL_CALL;
        break;
      }
      // Server tools, citations, fallbacks: not content here; their deltas and stop are ignored.
      default:
        return;
    }
    open.delete(key);
    open.set(key, kind);
  }

  function blockDelta(data, asm) {
    const event = "content_block_delta";
    const key = blockKey(event, data);
    const delta = get(data, "delta");
    const at = itemLabel(event, key);
    if (!isObject(delta)) throw new Error(malformed(FORMAT, at, "delta", "an object", delta));
    const label = `${at} delta`;
    const type = requiredStr(FORMAT, label, delta, "type");
    const field = DELTA_FIELD[type];
    if (!field) return;
    const value = requiredString(FORMAT, label, delta, field);
    const kind = open.get(key);
    if (kind === undefined || !asm.hasOpen(key)) return;
    if (type === "text_delta" && kind === BLOCK.TEXT) asm.sentDelta(key, BLOCK.TEXT, value);
    else if (type === "thinking_delta" && kind === BLOCK.THINKING) asm.sentDelta(key, BLOCK.THINKING, value);
    else if (type === "signature_delta" && kind === BLOCK.THINKING) {
      asm.appendSignature(key, "thinkingSignature", value);
    }
    else if (type === "input_json_delta" && kind === BLOCK.TOOL_CALL) asm.toolArgsDelta(key, value);
  }

  function blockStop(data, asm) {
    const key = blockKey("content_block_stop", data);
    if (open.delete(key)) asm.close(key);
  }

  function messageDelta(data, asm) {
    const delta = get(data, "delta");
    const reason = text(delta, "stop_reason");
    if (reason) {
      if (STOP[reason]) stop = [reason, { reason: STOP[reason] }];
      else if (reason === "refusal") {
        const explanation = text(get(delta, "stop_details"), "explanation");
        stop = [reason, { error: explanation || "The model refused to complete the request" }];
      } else if (reason === "sensitive") stop = [reason, { error: "Provider stopped with: sensitive" }];
      else return asm.fail(`Unhandled stop reason: ${reason}`, reason);
    }
    // Cumulative counts: what is present overrides (§6.10).
    const u = get(data, "usage");
    if (isObject(u)) {
      const set = (slot, key) => {
        const n = number(u, key);
        if (n !== undefined) usage[slot] = n;
      };
      set("input", "input_tokens");
      set("output", "output_tokens");
      set("cacheRead", "cache_read_input_tokens");
      set("cacheWrite", "cache_creation_input_tokens");
      const long = number(get(u, "cache_creation"), "ephemeral_1h_input_tokens");
      if (long !== undefined) usage.cacheWrite1h = long;
      const reasoning = number(get(u, "output_tokens_details"), "thinking_tokens");
      if (reasoning !== undefined) usage.reasoning = reasoning;
    }
    // OpenRouter adds its billed cost to `message_delta`'s usage (issue 33).
    asm.usage({ ...usage, billed: openrouter ? openrouterBilledCost(u) : undefined });
  }

  function messageStop(asm) {
    if (!stop) asm.fail("Anthropic stream ended without a stop reason");
    else if (stop[1].error !== undefined) asm.fail(stop[1].error, stop[0]);
    else asm.finish(stop[1].reason, stop[0]);
  }

  return {
    onEvent(event, data, asm) {
      const kind = asStr(get(data, "type")) ?? event ?? "";
      if (kind === "message_start") messageStart(data, asm);
      else if (BLOCK_EVENTS.includes(kind)) {
        try {
          if (kind === "content_block_start") blockStart(data, asm);
          else if (kind === "content_block_delta") blockDelta(data, asm);
          else blockStop(data, asm);
        } catch (error) {
          asm.fail(error.message);
        }
      } else if (kind === "message_delta") messageDelta(data, asm);
      else if (kind === "message_stop") messageStop(asm);
      else if (kind === "error") {
        const error = get(data, "error");
        const message = asStr(get(error === undefined ? data : error, "message")) ?? asStr(get(data, "message"));
        asm.fail(message ?? JSON.stringify(data));
      } // ping and unknown events
    },

    // Anthropic names every event: a `ping` or an event it does not read is skipped whatever its data, one it reads
    // fails on data that is not JSON; empty data (outside a ping) is left to `onUnparsed`, as pi-ai fails it too.
    onText(event, data, asm) {
      if (event === "error") asm.fail(data);
      else if (event === "ping") return true;
      else if (blank(data)) return false;
      else if (event === undefined || READ_EVENTS.includes(event)) asm.fail(invalidJsonMessage(data));
      return true;
    },

    // A stream cut before `message_stop` is an error that keeps the stop reason `message_delta` gave (as pi-ai's
    // message does: its `rawStopReason` is written when the delta arrives).
    onEnd(asm) {
      asm.fail("Anthropic stream ended before message_stop", stop?.[0]);
    },
  };
}

/**
 * The `anthropic-messages` wire format: `buildRequest(input)` → `{ url, headers, body }` (throws an Error whose
 * message is the stream's error, e.g. a missing key) and `streamMapper(input)` → `{ onEvent, onText, onEnd }`.
 */
export const anthropicMessages = { buildRequest, streamMapper };
