// `google-generative-ai` (§6.9): the `streamGenerateContent?alt=sse` request built from the transcript, and Gemini's
// `data:` chunks (no terminator) mapped onto the assembler. Generated tool-call ids are `<name>_<timestamp>_<n>`: the
// timestamp is `options.timestamp` (ms, e.g. the message's `Date.now()`), else 0; `n` counts the message's calls and
// skips ids already used in it.

import { BLOCK } from "./assemble.js";
import { asArray, asStr, get, isObject, str } from "./json.js";
import { apply } from "../partial-json.js";
import * as request from "./request.js";
import * as strict from "./strict.js";
import { isSameModel, prepare } from "./transcript.js";

/** The wire format's name in stream errors. */
const FORMAT = "google-generative-ai";
/** Schemas nested deeper than this are sent unchanged below that depth. */
const MAX_SCHEMA_DEPTH = 256;

export const googleGenerativeAi = {
  buildRequest(input) {
    const { model } = input;
    const headers = [["content-type", "application/json"]];
    const key = request.apiKey(input);
    if (key !== undefined) headers.push(["x-goog-api-key", key]);
    // P-6.2.3: an auth header given in model.headers/options.headers stands in for the key.
    else if (!request.hasHeader(input, "x-goog-api-key") && !request.hasHeader(input, "authorization")) {
      throw new Error(`No API key for provider: ${str(model, "provider")}`);
    }
    const id = str(model, "id");
    const url = `${request.baseUrl(model, request.GOOGLE_BASE_URL)}/models/${id}:streamGenerateContent?alt=sse`;
    return { url, headers, body: requestBody(input) };
  },

  streamMapper(input) {
    const t = get(input.options, "timestamp");
    // A whole number of ms ≥ 0, at most 2^64 − 1, printed digit for digit (a BigInt, even past 2^53).
    const ok = typeof t === "number" && Number.isFinite(t) && t >= 0;
    return new GoogleMapper(!ok ? 0n : t >= 2 ** 64 ? 2n ** 64n - 1n : BigInt(Math.floor(t)));
  },
};

// ---- the request

function requestBody(input) {
  const { model, options } = input;
  const transcript = prepare(input);
  const level = request.modelReasons(model) ? request.thinkingLevel(options) : undefined;
  const body = { contents: contents(model, transcript.messages) };
  if (transcript.systemPrompt !== "") body.systemInstruction = { parts: [{ text: transcript.systemPrompt }] };
  if (transcript.tools.length > 0) {
    body.tools = [{ functionDeclarations: transcript.tools.map(functionDeclaration) }];
    const mode = { __proto__: null, none: "NONE", any: "ANY", auto: "AUTO" }[asStr(get(options, "toolChoice"))];
    if (mode !== undefined) body.toolConfig = { functionCallingConfig: { mode } };
  }
  const config = {};
  let max;
  let thinking;
  if (level !== undefined) {
    const limits = request.thinkingLimits(input, level);
    max = limits.maxTokens;
    thinking = { includeThoughts: true, thinkingBudget: limits.budget };
  } else {
    max = request.maxTokens(input);
  }
  if (max !== undefined) config.maxOutputTokens = max;
  const temperature = get(options, "temperature");
  if (temperature !== undefined && temperature !== null) config.temperature = temperature;
  if (thinking !== undefined) config.thinkingConfig = thinking;
  request.mergeSampling(config, input, level);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

// A member given as `null` is sent as `null`; only a missing one gets the default.
function functionDeclaration(tool) {
  const or = (key, fallback) => (get(tool, key) === undefined ? fallback : tool[key]);
  return {
    name: or("name", ""),
    description: or("description", ""),
    parametersJsonSchema: constAsEnum(or("parameters", {}), false, 0),
  };
}

/** Keywords whose values are subschemas (or lists of them). */
const SUBSCHEMA_KEYS = new Set([
  "additionalProperties", "unevaluatedProperties", "propertyNames", "items", "prefixItems", "additionalItems",
  "unevaluatedItems", "contains", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "contentSchema",
]);
/** Keywords whose values map names to subschemas. */
const NAME_MAP_KEYS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]);

/** Gemini ignores `const` in `parametersJsonSchema` but honours `enum`: a string or number `const` becomes a
 *  one-value `enum` (in schema positions only, not in literal data). Returns a copy; the input is not changed. */
function constAsEnum(schema, nameMap, depth) {
  if (depth > MAX_SCHEMA_DEPTH) return schema;
  if (Array.isArray(schema)) return schema.map((s) => constAsEnum(s, false, depth + 1));
  if (!isObject(schema)) return schema;
  // `fromEntries` keeps a `__proto__` key an own member, as JSON.parse made it.
  const out = Object.fromEntries(Object.entries(schema).map(([key, value]) => [
    key,
    nameMap || SUBSCHEMA_KEYS.has(key)
      ? constAsEnum(value, false, depth + 1)
      : NAME_MAP_KEYS.has(key)
        ? constAsEnum(value, true, depth + 1)
        : value,
  ]));
  const c = get(out, "const");
  if (!nameMap && !("enum" in out) && (typeof c === "string" || typeof c === "number")) {
    delete out.const;
    out.enum = [c];
  }
  return out;
}

/** The `contents` turns of the transcript (§6.9). Tool results in a row share one user turn; their images follow. */
function contents(model, messages) {
  const turns = [];
  let responses = [];
  let imageTurns = [];
  const flush = () => {
    if (responses.length > 0) turns.push({ role: "user", parts: responses });
    turns.push(...imageTurns);
    responses = [];
    imageTurns = [];
  };
  for (const message of messages) {
    const role = asStr(get(message, "role"));
    if (role !== "toolResult") flush();
    if (role === "user") {
      const parts = userParts(get(message, "content"));
      if (parts.length > 0) turns.push({ role: "user", parts });
    } else if (role === "assistant") {
      const parts = modelParts(model, message);
      if (parts.length > 0) turns.push({ role: "model", parts });
    } else if (role === "toolResult") {
      const [response, images] = functionResponse(model, message);
      responses.push(response);
      if (images.length > 0) imageTurns.push({ role: "user", parts: [{ text: "Tool result image:" }, ...images] });
    }
  }
  flush();
  return turns;
}

function userParts(content) {
  if (typeof content === "string") return [{ text: content }];
  if (!Array.isArray(content)) return [];
  const parts = [];
  for (const part of content) {
    const type = asStr(get(part, "type"));
    if (type === "text") parts.push({ text: str(part, "text") });
    else if (type === "image") parts.push(inlineData(part));
  }
  return parts;
}

const inlineData = (image) => ({ inlineData: { mimeType: str(image, "mimeType"), data: str(image, "data") } });

/** An assistant message's parts; signatures (and thoughts) only for the same model. */
function modelParts(model, message) {
  const sameModel = isSameModel(message, model);
  const signature = (block, key) => {
    const s = asStr(get(block, key));
    return sameModel && s !== undefined && isBase64(s) ? s : undefined;
  };
  const withSignature = (part, sig) => {
    if (sig !== undefined) part.thoughtSignature = sig;
    return part;
  };
  const parts = [];
  for (const block of asArray(get(message, "content")) ?? []) {
    const type = asStr(get(block, "type"));
    if (type === "text") {
      const [text, sig] = [str(block, "text"), signature(block, "textSignature")];
      // An empty part is kept only when it carries a signature Gemini wants echoed.
      if (text.trim() !== "" || sig !== undefined) parts.push(withSignature({ text }, sig));
    } else if (type === "thinking" && sameModel) {
      const [text, sig] = [str(block, "thinking"), signature(block, "thinkingSignature")];
      if (text.trim() !== "" || sig !== undefined) parts.push(withSignature({ thought: true, text }, sig));
    } else if (type === "toolCall") {
      const args = get(block, "arguments");
      const functionCall = { name: str(block, "name"), args: args === undefined || args === null ? {} : args };
      parts.push(withSignature({ functionCall }, signature(block, "thoughtSignature")));
    }
  }
  return parts;
}

/** Gemini signatures are base64 bytes; anything else would be rejected. */
const isBase64 = (s) => s.length > 0 && s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);

/** A tool result as a `functionResponse` part, plus its images (for a following user turn). */
function functionResponse(model, message) {
  const parts = asArray(get(message, "content")) ?? [];
  const ofType = (type) => parts.filter((p) => asStr(get(p, "type")) === type);
  const text = ofType("text").map((p) => str(p, "text")).join("\n");
  const supportsImages = (asArray(get(model, "input")) ?? []).includes("image");
  const images = supportsImages ? ofType("image").map(inlineData) : [];
  const value = text.trim() !== "" ? text : images.length === 0 ? "" : "(see attached image)";
  const response = get(message, "isError") === true ? { error: value } : { output: value };
  return [{ functionResponse: { name: str(message, "toolName"), response } }, images];
}

// ---- the stream

/** The finish reasons the Gemini API defines: `STOP`, the two of `length`, and those that end the reply with
 *  `Provider stopped with: <REASON>` (§6.10). Any other is `Unhandled stop reason: <REASON>`. */
const FINISH_REASONS = new Set([
  "STOP", "MAX_TOKENS", "CONTINUATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "SAFETY", "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "IMAGE_OTHER", "RECITATION", "FINISH_REASON_UNSPECIFIED", "OTHER",
  "LANGUAGE", "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "NO_IMAGE",
]);

class GoogleMapper {
  constructor(timestamp) {
    this.timestamp = timestamp;
    /** The open text or thinking block: `[key, kind]`. */
    this.current = undefined;
    this.nextKey = 0;
    /** Tool calls of the message (the `<n>` of generated ids) and their ids. */
    this.calls = 0;
    this.ids = [];
    this.finishReason = undefined;
    this.responseIdSent = false;
    this.responseModel = undefined;
    /** Gemini 3's streamed call (`willContinue`), whose arguments arrive as `partialArgs` (issue 33):
     *  `{ key, args, continuing }`, `continuing` the path of a string the next fragment continues. */
    this.streamed = undefined;
  }

  newKey() {
    return `part${++this.nextKey}`;
  }

  textPart(part, text, asm) {
    const kind = get(part, "thought") === true ? BLOCK.THINKING : BLOCK.TEXT;
    let key;
    if (this.current !== undefined && this.current[1] === kind) key = this.current[0];
    else {
      key = this.newKey();
      this.current = [key, kind];
    }
    asm.sentDelta(key, kind, text);
    // A later part without a signature keeps the block's earlier one.
    const signature = asStr(get(part, "thoughtSignature"));
    if (signature) asm.setField(key, kind === BLOCK.THINKING ? "thinkingSignature" : "textSignature", signature);
  }

  /** One part of `candidates[0].content.parts`; fields of the wrong type are the stream's error (issue 13). */
  part(position, part, asm) {
    const label = `candidates[0].content.parts[${position}]`;
    if (!isObject(part)) throw new Error(`Malformed ${FORMAT} stream: ${label} must be an object, got ${strict.typeName(part)}`);
    strict.optionalStr(FORMAT, label, part, "thoughtSignature");
    const text = strict.optionalStr(FORMAT, label, part, "text");
    if (text !== undefined) this.textPart(part, text, asm);
    const call = get(part, "functionCall");
    if (call === undefined || call === null) return;
    if (!isObject(call)) throw new Error(strict.message(FORMAT, label, "functionCall", "an object", call));
    this.functionCall(`${label}.functionCall`, part, call, asm);
  }

  /** A whole call: start, one delta with its JSON text, end. Gemini 3 may stream one instead (issue 33): a part
   *  with `name` and `willContinue: true` starts it, parts without `name` carry `partialArgs`, and the first part
   *  without `willContinue` ends it. */
  functionCall(label, part, call, asm) {
    const continues = get(call, "willContinue") === true;
    const name = get(call, "name");
    const named = name !== undefined && name !== null;
    if (!named && this.streamed !== undefined) {
      this.partialArgs(label, call, asm);
      if (!continues) this.endStreamed(asm);
      return;
    }
    this.endStreamed(asm);
    const callName = strict.requiredStr(FORMAT, label, call, "name");
    const given = strict.optionalStr(FORMAT, label, call, "id");
    const rawArgs = get(call, "args");
    let args;
    if (rawArgs === undefined || rawArgs === null) args = "{}";
    else if (isObject(rawArgs)) args = JSON.stringify(rawArgs);
    else throw new Error(strict.message(FORMAT, label, "args", "an object", rawArgs));
    this.current = undefined;
    let id = given !== undefined && given !== "" && !this.ids.includes(given) ? given : undefined;
    while (id === undefined) {
      const candidate = `${callName}_${this.timestamp}_${++this.calls}`;
      if (!this.ids.includes(candidate)) id = candidate;
    }
    this.ids.push(id);
    const key = this.newKey();
    asm.toolStart(key, id, callName);
    const signature = asStr(get(part, "thoughtSignature"));
    if (signature) asm.setField(key, "thoughtSignature", signature);
    if (continues && (rawArgs === undefined || rawArgs === null)) {
      this.streamed = { key, args: {}, continuing: undefined };
      this.partialArgs(label, call, asm);
      return;
    }
    asm.toolArgsDelta(key, args);
    asm.close(key);
  }

  /** Applies a streamed call's `partialArgs`: each fragment sets (or, continuing a string, appends to) the value at
   *  its `jsonPath`, creating the containers on the way, and emits one `toolcall_delta` whose `delta` is the
   *  fragment as JSON. */
  partialArgs(label, call, asm) {
    const streamed = this.streamed;
    if (streamed === undefined) return;
    const fragments = get(call, "partialArgs");
    if (fragments === undefined || fragments === null) return;
    if (!Array.isArray(fragments)) throw new Error(strict.message(FORMAT, label, "partialArgs", "an array", fragments));
    fragments.forEach((fragment, position) => {
      const at = `${label}.partialArgs[${position}]`;
      const pathText = strict.requiredStr(FORMAT, at, fragment, "jsonPath");
      const path = parseJsonPath(pathText);
      if (path === undefined) throw new Error(`Malformed ${FORMAT} stream: ${at}.jsonPath is not a path this provider reads: ${pathText}`);
      const patches = [];
      ensureContainers(streamed.args, path, patches);
      const continues = get(fragment, "willContinue") === true;
      const text = strict.optionalStr(FORMAT, at, fragment, "stringValue");
      let patch;
      if (text !== undefined) {
        patch = { path, op: samePath(streamed.continuing, path) ? "appendString" : "setString", value: text };
      } else if (typeof get(fragment, "numberValue") === "number") {
        patch = { path, op: "setValue", value: fragment.numberValue };
      } else if (typeof get(fragment, "boolValue") === "boolean") {
        patch = { path, op: "setValue", value: fragment.boolValue };
      } else if (get(fragment, "nullValue") !== undefined) {
        patch = { path, op: "setValue", value: null };
      } else {
        return;
      }
      streamed.continuing = continues && patch.op !== "setValue" ? path : undefined;
      apply(streamed.args, patch);
      patches.push(patch);
      asm.toolArgsPatched(streamed.key, JSON.stringify(fragment), patches);
    });
  }

  /** Closes the streamed call (if any) with the arguments its fragments built. */
  endStreamed(asm) {
    const streamed = this.streamed;
    if (streamed === undefined) return;
    this.streamed = undefined;
    asm.toolArgsComplete(streamed.key, JSON.stringify(streamed.args));
    asm.close(streamed.key);
  }

  onEvent(_event, data, asm) {
    const error = get(data, "error");
    if (isObject(error)) {
      // The reference's wording: `got status: <STATUS>. <the chunk as JSON>`.
      // A `status` of `null` is there: it does not fall back to `code`.
      const status = get(error, get(error, "status") === undefined ? "code" : "status");
      const text = typeof status === "string" ? status : typeof status === "number" ? JSON.stringify(status) : "UNKNOWN";
      asm.fail(`got status: ${text}. ${JSON.stringify(data)}`);
      return;
    }
    const responseId = asStr(get(data, "responseId"));
    if (!this.responseIdSent && responseId) {
      this.responseIdSent = true;
      asm.meta("responseId", responseId);
    }
    const version = asStr(get(data, "modelVersion"));
    if (version && this.responseModel !== version) {
      this.responseModel = version;
      asm.meta("responseModel", version);
    }
    const candidate = asArray(get(data, "candidates"))?.[0];
    const parts = asArray(get(get(candidate, "content"), "parts")) ?? [];
    for (let i = 0; i < parts.length; i++) {
      try {
        this.part(i, parts[i], asm);
      } catch (e) {
        asm.fail(e.message);
        return;
      }
    }
    const reason = asStr(get(candidate, "finishReason"));
    if (reason !== undefined) {
      // §6.10: a reason the API does not define ends the stream at once, before the chunk's usage.
      if (!FINISH_REASONS.has(reason)) {
        asm.fail(`Unhandled stop reason: ${reason}`, reason);
        return;
      }
      this.finishReason = reason;
    }
    const usage = get(data, "usageMetadata");
    if (isObject(usage)) asm.usage(googleUsage(usage));
  }

  onText() {
    return false;
  }

  onEnd(asm) {
    if (asm.finished()) return;
    this.endStreamed(asm);
    const reason = this.finishReason;
    if (reason === undefined) asm.fail("Google stream ended without a finish reason");
    else if (reason === "STOP") asm.finish(asm.hasToolCalls() ? "toolUse" : "stop", reason);
    else if (reason === "MAX_TOKENS" || reason === "CONTINUATION") asm.finish("length", reason);
    else asm.fail(`Provider stopped with: ${reason}`, reason);
  }
}

const samePath = (a, b) => a !== undefined && a.length === b.length && a.every((seg, i) => seg === b[i]);

/** `$.a.b[0].c` (also `['a']`, `["a"]`) as path segments (keys strings, indexes numbers); undefined otherwise. */
function parseJsonPath(text) {
  if (!text.startsWith("$")) return undefined;
  let rest = text.slice(1);
  const path = [];
  while (rest !== "") {
    if (rest[0] === ".") {
      const after = rest.slice(1);
      const match = /[.[]/.exec(after);
      const end = match === null ? after.length : match.index;
      if (end === 0) return undefined;
      path.push(after.slice(0, end));
      rest = after.slice(end);
    } else if (rest[0] === "[") {
      const end = rest.indexOf("]");
      if (end < 0) return undefined;
      const inner = rest.slice(1, end);
      rest = rest.slice(end + 1);
      const quoted = inner.length >= 2 && (inner[0] === "'" || inner[0] === '"') && inner.at(-1) === inner[0];
      if (quoted) path.push(inner.slice(1, -1));
      else if (/^\+?[0-9]+$/.test(inner) && Number(inner) <= Number.MAX_SAFE_INTEGER) path.push(Number(inner));
      else return undefined;
    } else {
      return undefined;
    }
  }
  return path.length > 0 ? path : undefined;
}

/** Creates the containers `path` passes through (an object before a key, an array before an index; missing array
 *  items before an index as `null`), recording each creation as a patch for the live message's arguments. The
 *  patches are applied with partial-json's `apply` so that a `__proto__` key is an own member, never the prototype. */
function ensureContainers(root, path, patches) {
  const add = (patch) => {
    apply(root, patch);
    patches.push(patch);
  };
  const fill = (list, at, index) => {
    while (list.length < index) add({ path: [...at, list.length], op: "setValue", value: null });
  };
  let node = root;
  for (let depth = 1; depth < path.length; depth++) {
    const seg = path[depth - 1];
    const index = typeof seg === "number";
    if (index ? !Array.isArray(node) : !isObject(node)) return;
    if (index) fill(node, path.slice(0, depth - 1), seg);
    const wantArray = typeof path[depth] === "number";
    const slot = () => (index ? node[seg] : get(node, seg));
    const value = slot();
    if (!(wantArray ? Array.isArray(value) : isObject(value))) {
      add({ path: path.slice(0, depth), op: wantArray ? "setArray" : "setObject" });
    }
    node = slot();
  }
  // The last segment: an array index past the end gets `null`s before it.
  const last = path.at(-1);
  if (typeof last === "number" && Array.isArray(node)) fill(node, path.slice(0, -1), last);
}

/** §6.10: cached tokens are part of `promptTokenCount`; thoughts count as output; `totalTokens` is the API's (it
 *  also counts tool-use prompt tokens, issue 33). */
function googleUsage(usage) {
  const number = (key) => {
    const n = get(usage, key);
    return typeof n === "number" ? n : 0;
  };
  const cacheRead = number("cachedContentTokenCount");
  const thoughts = number("thoughtsTokenCount");
  return {
    input: number("promptTokenCount") - cacheRead,
    output: number("candidatesTokenCount") + thoughts,
    cacheRead,
    cacheWrite: 0,
    reasoning: thoughts,
    total: number("totalTokenCount"),
  };
}
