// `openai-responses` (§6.7): builds the `POST <base>/responses` request from the transcript and maps the Responses
// stream (`event:` + `data:` with the same `type`) onto the Assembler. The transcript clean-up, token limits and
// sampling merge are the shared rules of transcript.js and request.js.

import { BLOCK } from "./assemble.js";
import { asStr, isObject, parseContainer } from "./json.js";
import {
  OPENAI_BASE_URL, apiKey, baseUrl, compatBool, firstChars, mappedEffort, maxTokens, mergeSampling,
  missingOpenaiKey, modelReasons, thinkingLevel,
} from "./request.js";
import { optionalIndex, optionalStr, requiredStr, requiredString } from "./strict.js";
import { isSameModel, prepare } from "./transcript.js";

/** The wire format's name in stream errors. */
const FORMAT = "openai-responses";
/** The API rejects `max_output_tokens` below 16. */
const MIN_OUTPUT_TOKENS = 16;
/** Item ids and `prompt_cache_key` longer than this are rejected. */
const MAX_ID_CHARS = 64;
const UNKNOWN_ERROR = "Unknown error (no error details in response)";

/** A present field, else `fallback` (an explicit null stays null). */
const or = (v, fallback) => (v === undefined ? fallback : v);
const arr = (v) => (Array.isArray(v) ? v : []);

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

function requestBody(input) {
  const { model, options } = input;
  const transcript = prepare(input);
  const level = modelReasons(model) ? thinkingLevel(options) : undefined;
  const body = { model: or(model?.id, ""), input: inputItems(model, transcript), stream: true };
  const key = promptCacheKey(options);
  if (key !== undefined) body.prompt_cache_key = key;
  body.store = false;
  const max = maxTokens(input);
  if (max !== undefined) body.max_output_tokens = Math.max(max, MIN_OUTPUT_TOKENS);
  if (options?.temperature != null) body.temperature = options.temperature;
  if (transcript.tools.length) body.tools = transcript.tools.map(functionTool);
  if (options?.toolChoice != null) body.tool_choice = options.toolChoice;
  if (level !== undefined) {
    // A level mapped to `null` is not supported by the model: no reasoning fields.
    const effort = mappedEffort(model, level);
    if (effort !== undefined) {
      body.reasoning = { effort, summary: "auto" };
      body.include = ["reasoning.encrypted_content"];
    }
  } else if (modelReasons(model)) {
    // §6.7: level off sends an effort only when the model maps "off" to a string.
    const off = asStr(model?.thinkingLevelMap?.off);
    if (off !== undefined) body.reasoning = { effort: off };
  }
  mergeSampling(body, input, level);
  return body;
}

/** `options.sessionId`, unless caching is off, clamped to the API's 64 characters. */
function promptCacheKey(options) {
  if (options?.cacheRetention === "none") return undefined;
  const id = asStr(options?.sessionId);
  return id === undefined ? undefined : firstChars(id, MAX_ID_CHARS);
}

const functionTool = (tool) => ({
  type: "function",
  name: or(tool?.name, ""),
  description: or(tool?.description, ""),
  parameters: or(tool?.parameters, {}),
  strict: false,
});

/** The `input` items: the system head, then one or more items per transcript message. */
function inputItems(model, transcript) {
  const items = [];
  if (transcript.systemPrompt) {
    const developer = modelReasons(model) && compatBool(model, "supportsDeveloperRole") !== false;
    items.push({ role: developer ? "developer" : "system", content: transcript.systemPrompt });
  }
  transcript.messages.forEach((message, n) => {
    switch (message?.role) {
      case "user": {
        const content = userContent(message.content);
        if (content.length) items.push({ role: "user", content });
        break;
      }
      case "assistant":
        assistantItems(model, message, n, items);
        break;
      case "toolResult":
        items.push({
          type: "function_call_output",
          call_id: (asStr(message.toolCallId) ?? "").split("|")[0],
          output: toolOutput(model, message.content),
        });
    }
  });
  return items;
}

function userContent(content) {
  if (typeof content === "string") return [inputText(content)];
  const out = [];
  for (const part of arr(content)) {
    if (part?.type === "text") out.push(inputText(asStr(part.text) ?? ""));
    else if (part?.type === "image") out.push(inputImage(part));
  }
  return out;
}

const inputImage = (part) => ({
  type: "input_image",
  detail: "auto",
  image_url: `data:${asStr(part?.mimeType) ?? ""};base64,${asStr(part?.data) ?? ""}`,
});

const inputText = (text) => ({ type: "input_text", text });

/** Tool-result text (joined by "\n"); with images on an image model, an `input_text` + `input_image` list. */
function toolOutput(model, content) {
  const parts = arr(content);
  const text = parts.filter((p) => p?.type === "text").map((p) => asStr(p.text) ?? "").join("\n");
  const images = parts.filter((p) => p?.type === "image");
  const hasText = text.trim() !== "";
  if (!images.length || !supportsImages(model)) {
    return hasText ? text : images.length ? "(see attached image)" : "(no tool output)";
  }
  return [...(hasText ? [inputText(text)] : []), ...images.map(inputImage)];
}

function assistantItems(model, message, n, items) {
  const sameModel = isSameModel(message, model);
  let textBlocks = 0;
  for (const block of arr(message.content)) {
    switch (block?.type) {
      case "thinking": {
        if (!sameModel) break;
        // The signature is the whole reasoning item the stream delivered (encrypted content).
        const item = parseObject(asStr(block.thinkingSignature));
        if (item) items.push(item);
        break;
      }
      case "text": {
        const signature = parseTextSignature(asStr(block.textSignature));
        const fallback = textBlocks ? `msg_${n}_${textBlocks}` : `msg_${n}`;
        textBlocks++;
        const item = {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: asStr(block.text) ?? "", annotations: [] }],
          status: "completed",
          id: signature ? shortenId(signature[0]) : fallback,
        };
        if (signature?.[1] !== undefined) item.phase = signature[1];
        items.push(item);
        break;
      }
      case "toolCall": {
        const [callId, itemId] = (asStr(block.id) ?? "").split("|");
        const item = { type: "function_call" };
        if (sameModel && itemId?.startsWith("fc_")) item.id = itemId;
        item.call_id = callId;
        item.name = asStr(block.name) ?? "";
        item.arguments = block.arguments == null ? "{}" : JSON.stringify(block.arguments);
        items.push(item);
      }
    }
  }
}

/** `text` as JSON when it is an object, else undefined. */
function parseObject(text) {
  const value = parseContainer(text);
  return isObject(value) ? value : undefined;
}

/** A text signature: JSON `{v:1, id, phase?}`, or (older messages) the item id itself → `[id, phase?]`. */
function parseTextSignature(signature) {
  if (!signature) return undefined;
  const parsed = signature.startsWith("{") ? parseObject(signature) : undefined;
  if (parsed?.v === 1 && typeof parsed.id === "string") {
    const phase = parsed.phase === "commentary" || parsed.phase === "final_answer" ? parsed.phase : undefined;
    return [parsed.id, phase];
  }
  return [signature, undefined];
}

/** Ids over 64 characters become `msg_<hash>` (FNV-1a 64 of the UTF-8 bytes: stable for the same id). */
function shortenId(id) {
  if (id.length <= MAX_ID_CHARS) return id;
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(id)) {
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `msg_${hash.toString(16).padStart(16, "0")}`;
}

const supportsImages = (model) => arr(model?.input).includes("image");

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

const REASONING = "reasoning";
const MESSAGE = "message";
const FUNCTION_CALL = "function_call";

/** An event's `output_index`: missing (the item id then finds the slot) or an integer ≥ 0. */
const outputIndex = (kind, data) => optionalIndex(FORMAT, kind, data, "output_index");

/** Issue 13: `call_id` and `name` must be non-empty strings, `id` and `arguments` strings if sent. */
function callFields(item, index) {
  const label = index === undefined ? "function_call item" : `function_call item (output_index ${index})`;
  return {
    callId: requiredStr(FORMAT, label, item, "call_id"),
    name: requiredStr(FORMAT, label, item, "name"),
    id: optionalStr(FORMAT, label, item, "id") ?? "",
    arguments: optionalStr(FORMAT, label, item, "arguments"),
  };
}

/** The `text` fields of a list of parts, joined by a blank line. */
const joinedTexts = (parts) =>
  arr(parts).map((p) => asStr(p?.text)).filter((t) => t !== undefined).join("\n\n");

/** A message item's text: its `output_text` texts and `refusal`s. */
const messageText = (item) =>
  arr(item?.content).map((p) => asStr(p?.type === "output_text" ? p.text : p?.refusal) ?? "").join("");

function scalarText(value) {
  // A number prints as JS prints it (`1.0` in the stream is `1`).
  return typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean"
    ? String(value) : undefined;
}

/** The error text of a failed response (§6.7). */
function failureMessage(response) {
  const error = response?.error;
  if (isObject(error)) {
    const code = scalarText(error.code) || "unknown";
    const message = scalarText(error.message) || "no message";
    return `${code}: ${message}`;
  }
  const reason = asStr(response?.incomplete_details?.reason);
  return reason ? `incomplete: ${reason}` : UNKNOWN_ERROR;
}

/** §6.10 for Responses: a stop reason, or throws the error message; "stop" becomes toolUse with tool calls. */
function mapStatus({ status, reason, error }) {
  switch (status) {
    case undefined: case "completed": case "in_progress": case "queued":
      return "stop";
    case "incomplete":
      if (reason === "max_output_tokens") return "length";
      throw new Error(reason === undefined ? "Response incomplete without a provider reason"
        : `Response incomplete: ${reason}`);
    case "failed":
      throw new Error(error ?? UNKNOWN_ERROR);
    case "cancelled":
      throw new Error("Response cancelled");
    default:
      throw new Error(`Unhandled stop reason: ${status}`);
  }
}

/** §6.10: cached tokens are part of `input_tokens`. */
function responsesUsage(usage) {
  const number = (v) => (typeof v === "number" ? v : 0);
  const cacheRead = number(usage.input_tokens_details?.cached_tokens);
  const cacheWrite = number(usage.input_tokens_details?.cache_write_tokens);
  return {
    input: number(usage.input_tokens) - cacheRead - cacheWrite,
    output: number(usage.output_tokens),
    cacheRead,
    cacheWrite,
    reasoning: number(usage.output_tokens_details?.reasoning_tokens),
  };
}

/** One response's mapper: output items being streamed are slots, found by `output_index` (else by item id). */
class ResponsesMapper {
  constructor() {
    /** @type {Array<{outputIndex?: number, itemId?: string, kind: string, key: string, streamed: boolean, call?: string[]}>} */
    this.slots = [];
    this.nextKey = 0;
    /** What the terminal `response.completed`/`response.incomplete` said: `{status, reason, error}`. */
    this.terminal = undefined;
    /** Tool calls whose `output_item.done` has not arrived: `[id, name]`. */
    this.unfinished = [];
  }

  onEvent(event, data, asm) {
    const type = data?.type;
    try {
      this.event(typeof type === "string" ? type : event ?? "", data, asm);
    } catch (error) {
      // A malformed item (issue 13): the stream's error.
      asm.fail(error.message);
    }
  }

  onText() {
    return false;
  }

  onEnd(asm) {
    if (asm.finished()) return;
    const terminal = this.terminal;
    if (!terminal) {
      asm.fail("OpenAI Responses stream ended before a terminal response event");
      return;
    }
    const { status, reason } = terminal;
    const raw = status !== undefined && reason !== undefined ? `${status}.${reason}` : status;
    let stop;
    try {
      stop = mapStatus(terminal);
    } catch (error) {
      asm.fail(error.message, raw);
      return;
    }
    if (stop === "stop" && asm.hasToolCalls()) {
      // The agent runs every call of the final message: refuse calls that never completed.
      const first = this.unfinished[0];
      if (first) asm.fail(`OpenAI Responses stream completed with an unfinished tool call: ${first[1]} (${first[0]})`, raw);
      else asm.finish("toolUse", raw);
    } else {
      asm.finish(stop, raw);
    }
  }

  /** One parsed event; throws on a malformed item. */
  event(kind, data, asm) {
    switch (kind) {
      case "response.created": {
        const id = data?.response?.id;
        if (typeof id === "string") asm.meta("responseId", id);
        break;
      }
      case "response.output_item.added":
        if (data?.item !== undefined) this.createSlot(outputIndex(kind, data), data.item, asm);
        break;
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const delta = requiredString(FORMAT, kind, data, "delta");
        const slot = this.slot(kind, data, MESSAGE);
        if (slot) {
          slot.streamed = true;
          asm.textDelta(slot.key, delta);
        }
        break;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const delta = requiredString(FORMAT, kind, data, "delta");
        const slot = this.slot(kind, data, REASONING);
        if (slot) {
          slot.streamed = true;
          asm.thinkingDelta(slot.key, delta);
        }
        break;
      }
      // Issue 33: a summary part that ends adds a blank line, as a delta (the reference's events); the block's final
      // text is the item's, without the last one.
      case "response.reasoning_summary_part.done": {
        const slot = this.slot(kind, data, REASONING);
        if (slot) {
          slot.streamed = true;
          asm.thinkingDelta(slot.key, "\n\n");
        }
        break;
      }
      case "response.function_call_arguments.delta": {
        const delta = requiredString(FORMAT, kind, data, "delta");
        const slot = this.slot(kind, data, FUNCTION_CALL);
        if (slot) asm.toolArgsDelta(slot.key, delta);
        break;
      }
      case "response.function_call_arguments.done": {
        const full = requiredString(FORMAT, kind, data, "arguments");
        const slot = this.slot(kind, data, FUNCTION_CALL);
        if (slot) asm.toolArgsComplete(slot.key, full);
        break;
      }
      case "response.output_item.done":
        if (data?.item !== undefined) this.itemDone(outputIndex(kind, data), data.item, asm);
        break;
      case "response.completed":
      case "response.incomplete":
        if (data?.response !== undefined) this.setTerminal(data.response, asm);
        break;
      case "response.failed": {
        const response = data?.response;
        asm.fail(failureMessage(response), asStr(response?.status));
        break;
      }
      case "error": {
        const field = (key) => or(data?.[key], data?.error?.[key]);
        const code = scalarText(field("code")) ?? "unknown";
        const message = scalarText(field("message")) ?? "Unknown error";
        asm.fail(`Error Code ${code}: ${message}`);
      }
    }
  }

  /** The position of the slot with `index`, else (without an index) with `itemId`; -1 when none. */
  find(index, itemId) {
    if (index !== undefined) return this.slots.findIndex((s) => s.outputIndex === index);
    return itemId === undefined ? -1 : this.slots.findIndex((s) => s.itemId === itemId);
  }

  /** The slot an event names, when it is of `kind`. */
  slot(kind, data, slotKind) {
    const index = outputIndex(kind, data);
    const itemId = optionalStr(FORMAT, kind, data, "item_id");
    const slot = this.slots[this.find(index, itemId)];
    return slot?.kind === slotKind ? slot : undefined;
  }

  /**
   * `output_item.added` (or a `.done` without one): a reasoning item opens a thinking block, a function call a tool
   * block, a message waits for its first text. Returns the new slot's position, or -1 for another item.
   */
  createSlot(index, item, asm) {
    const kind = item?.type;
    if (kind !== REASONING && kind !== MESSAGE && kind !== FUNCTION_CALL) return -1;
    const itemId = optionalStr(FORMAT, "output item", item, "id");
    const key = `item${this.nextKey++}`;
    let call;
    if (kind === REASONING) {
      asm.openBlock(key, BLOCK.THINKING);
    } else if (kind === FUNCTION_CALL) {
      const fields = callFields(item, index);
      const id = `${fields.callId}|${fields.id}`;
      asm.toolStart(key, id, fields.name);
      if (fields.arguments) asm.toolArgsDelta(key, fields.arguments);
      call = [id, fields.name];
      this.unfinished.push(call);
    }
    // A repeated output_index replaces the older slot.
    const old = index === undefined ? -1 : this.slots.findIndex((s) => s.outputIndex === index);
    if (old >= 0) this.slots.splice(old, 1);
    this.slots.push({ outputIndex: index, itemId, kind, key, streamed: false, call });
    return this.slots.length - 1;
  }

  /** `output_item.done`: completes the block from the final item and closes it. */
  itemDone(index, item, asm) {
    const itemId = optionalStr(FORMAT, "output item", item, "id");
    let at = this.find(index, itemId);
    if (at < 0) at = this.createSlot(index, item, asm);
    const slot = this.slots[at];
    if (!slot || slot.kind !== item?.type) return;
    const { key, streamed } = slot;
    if (slot.kind === REASONING) {
      const summary = joinedTexts(item.summary);
      const text = summary || joinedTexts(item.content);
      if (!streamed) asm.thinkingDelta(key, text);
      // The item's text is the block's final text (the reference's rule).
      else if (text) asm.setField(key, "thinking", text);
      asm.setField(key, "thinkingSignature", JSON.stringify(item));
      asm.close(key);
    } else if (slot.kind === MESSAGE) {
      const text = streamed ? "" : messageText(item);
      if (streamed || text) {
        asm.textDelta(key, text);
        // The item's text is the block's final text (the reference's rule).
        if (streamed) asm.setField(key, "text", messageText(item));
        const signature = { v: 1 };
        if (typeof item.id === "string") signature.id = item.id;
        if (typeof item.phase === "string" && item.phase) signature.phase = item.phase;
        asm.setField(key, "textSignature", JSON.stringify(signature));
        asm.close(key);
      }
    } else {
      const fields = callFields(item, index);
      if (fields.arguments) asm.toolArgsComplete(key, fields.arguments);
      asm.close(key);
      const call = slot.call;
      if (call) this.unfinished = this.unfinished.filter((c) => c[0] !== call[0] || c[1] !== call[1]);
    }
    this.slots.splice(at, 1);
  }

  /** `response.completed` / `response.incomplete`: ids, usage and status (last one wins). */
  setTerminal(response, asm) {
    const id = response?.id;
    if (typeof id === "string") asm.meta("responseId", id);
    if (isObject(response?.usage)) asm.usage(responsesUsage(response.usage));
    this.terminal = {
      status: asStr(response?.status),
      reason: asStr(response?.incomplete_details?.reason),
      error: isObject(response?.error) ? failureMessage(response) : undefined,
    };
  }
}

/**
 * The `openai-responses` wire format (§6.7).
 * - `buildRequest(input)` → `{ url, headers: Array<[name, value]>, body }`; throws `Error(errorMessage)` (a missing key).
 * - `streamMapper(input)` → a fresh mapper `{ onEvent(event, data, asm), onText(event, data, asm) → false, onEnd(asm) }`.
 */
export const openaiResponses = {
  buildRequest(input) {
    const url = `${baseUrl(input.model, OPENAI_BASE_URL)}/responses`;
    // P-6.2.3: without a key a known cloud service fails here; any other server gets no Authorization.
    const missing = missingOpenaiKey(input, url);
    if (missing !== undefined) throw new Error(missing);
    const headers = [["content-type", "application/json"]];
    const key = apiKey(input);
    if (key !== undefined) headers.push(["authorization", `Bearer ${key}`]);
    return { url, headers, body: requestBody(input) };
  },
  streamMapper() {
    return new ResponsesMapper();
  },
};
