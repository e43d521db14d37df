// `agent-loop-wasm/ui` (issue 31): an Agent's events as the AI SDK's UI message stream (the protocol `useChat`, the
// `Chat` classes and `DefaultChatTransport` read: SSE of JSON chunks, header `x-vercel-ai-ui-message-stream: v1`), and
// the request side back (the `UIMessage[]` a `useChat` client posts → agent messages; its approval responses →
// decisions for `agent.approve` / `agent.deny`), and a transcript as the `UIMessage[]` a reloaded page starts from
// (issue 40). Plain JS whose one import is the error classes (errors.js, itself import-free): it never loads the wasm or
// the main entry, and needs only what every runtime has (ReadableStream, TransformStream, TextEncoderStream, Response).
// Spec: docs/SPEC.md §12 (U-12.1 to U-12.4).
import { codedError } from "./errors.js";

/** The response headers of the UI message stream protocol (the AI SDK's `UI_MESSAGE_STREAM_HEADERS`). */
export const UI_MESSAGE_STREAM_HEADERS = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
});

/** The key under which content signatures travel in `providerMetadata`, so a posted transcript gives them back. */
const META = "agentLoop";

const FINISH_REASONS = { stop: "stop", length: "length", toolUse: "tool-calls", error: "error" };

const isObject = (v) => v !== null && typeof v === "object";
const describe = (v) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v);

function randomId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  return `msg-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

function checkOptions(fn, options, spec) {
  if (options === undefined) return {};
  if (!isObject(options) || Array.isArray(options)) throw codedError("INVALID_ARGUMENT", `${fn}: options must be an object, got ${describe(options)}`);
  for (const [key, type] of Object.entries(spec)) {
    const v = options[key];
    if (v === undefined) continue;
    // "checked": checked where it is used (approvalSecret: secretKey).
    const ok = type === "checked" || (type === "array" ? Array.isArray(v) : type === "object" ? isObject(v) && !Array.isArray(v) : typeof v === type);
    if (!ok) throw codedError("INVALID_ARGUMENT", `${fn}: options.${key} must be ${type === "array" || type === "object" ? "an" : "a"} ${type}, got ${describe(v)}`);
  }
  return options;
}

// ---------------------------------------------------------------------------------------------------------------
// Events → chunks
// ---------------------------------------------------------------------------------------------------------------

/**
 * issue 30's `tool_approval_request { toolCallId, toolName, args, reason?, data?, expiresAt? }` as the protocol's
 * `tool-approval-request` chunk. The approval id is the tool call id, so a posted `approval-responded` part maps back
 * to `agent.approve(toolCallId)` / `agent.deny(toolCallId)` with no table kept between requests; with an
 * `approvalSecret`, it is the call's signed token (`approvalToken`). `data` and `expiresAt` travel as the opaque
 * `approvalDescriptor` (the client keeps it as `part.approval.descriptor`).
 */
function approvalRequestChunk(event, approvalId = event.toolCallId) {
  const descriptor = {};
  if (event.data !== undefined) descriptor.data = event.data;
  if (typeof event.expiresAt === "number") descriptor.expiresAt = event.expiresAt;
  return {
    type: "tool-approval-request",
    approvalId,
    toolCallId: event.toolCallId,
    ...(typeof event.reason === "string" ? { reason: event.reason } : {}),
    ...(Object.keys(descriptor).length > 0 ? { approvalDescriptor: descriptor } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Signed approvals (U-12.5): a stateless route trusts no approval it did not sign
// ---------------------------------------------------------------------------------------------------------------

// SHA-256 (FIPS 180-4) and HMAC (RFC 2104), synchronous so that a chunk is signed where it is made, in every runtime.
// The constants are the first 32 bits of the fractional parts of the square and cube roots of the first primes.
const PRIMES = [];
for (let c = 2; PRIMES.length < 64; c++) if (PRIMES.every((p) => c % p !== 0)) PRIMES.push(c);
const frac32 = (x) => ((x - Math.floor(x)) * 4294967296) >>> 0;
const SHA256_K = Uint32Array.from(PRIMES, (p) => frac32(Math.cbrt(p)));
const SHA256_H = Uint32Array.from(PRIMES.slice(0, 8), (p) => frac32(Math.sqrt(p)));
const ror = (x, n) => (x >>> n) | (x << (32 - n));

/** SHA-256 of `data` (a Uint8Array). */
function sha256(data) {
  const padded = new Uint8Array(((data.length + 72) >> 6) << 6);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(data.length / 0x20000000));
  view.setUint32(padded.length - 4, (data.length * 8) >>> 0);
  const h = SHA256_H.slice();
  const w = new Uint32Array(64);
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15];
      const y = w[i - 2];
      w[i] = (w[i - 16] + (ror(x, 7) ^ ror(x, 18) ^ (x >>> 3)) + w[i - 7] + (ror(y, 17) ^ ror(y, 19) ^ (y >>> 10))) >>> 0;
    }
    let [a, b, c, d, e, f, g, k] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i] + w[i]) >>> 0;
      const t2 = ((ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    [a, b, c, d, e, f, g, k].forEach((v, i) => (h[i] = (h[i] + v) >>> 0));
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((v, i) => outView.setUint32(i * 4, v));
  return out;
}

/** HMAC-SHA-256 of `message` under `key` (both Uint8Array). */
function hmacSha256(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

const base64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** The approval secret's bytes: a string (UTF-8) or bytes, at least 16 of them. */
function secretKey(fn, secret) {
  const bytes = typeof secret === "string" ? new TextEncoder().encode(secret)
    : secret instanceof Uint8Array ? secret
    : secret instanceof ArrayBuffer ? new Uint8Array(secret)
    : undefined;
  if (bytes === undefined || bytes.length < 16) {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.approvalSecret must be a string or bytes, at least 16 bytes long (a random secret kept on the server), got ${describe(secret)}`);
  }
  return bytes;
}

/**
 * The approval id a signed `tool-approval-request` carries: `v1.` and the HMAC-SHA-256 (base64url) of the call as the
 * client holds it — its id, its tool, its input, and when the approval expires. A client cannot make one for a call it
 * invented or changed, nor extend its deadline.
 */
function approvalToken(key, toolCallId, toolName, input, expiresAt) {
  const signed = JSON.stringify(["agent-loop-wasm approval v1", toolCallId, toolName, input ?? {}, typeof expiresAt === "number" ? expiresAt : null]);
  return `v1.${base64url(hmacSha256(key, new TextEncoder().encode(signed)))}`;
}

/** Whether `token` is the approval id of that call under `key` (compared in constant time). */
function approvalTokenValid(key, token, toolCallId, toolName, input, expiresAt) {
  if (typeof token !== "string") return false;
  const expected = approvalToken(key, toolCallId, toolName, input, expiresAt);
  let diff = token.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ (token.charCodeAt(i) | 0);
  return diff === 0;
}

function defaultToolOutput(result) {
  if (!isObject(result)) return result;
  const output = { content: result.content, details: result.details };
  if (result.structuredContent !== undefined) output.structuredContent = result.structuredContent;
  return output;
}

function resultText(result) {
  const content = isObject(result) ? result.content : undefined;
  const text = Array.isArray(content) ? content.filter((b) => b?.type === "text").map((b) => b.text).join("\n") : "";
  return text === "" ? "Tool call failed" : text;
}

const errorMessage = (e) => (e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e) ?? String(e));

function signatureMeta(fields) {
  const meta = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) meta[k] = v;
  return Object.keys(meta).length > 0 ? { providerMetadata: { [META]: meta } } : {};
}

/** A user message's content as the parts a `steering-message` chunk (and a user UIMessage) holds: text, images as data: URLs. */
function userParts(content) {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((b) => {
    if (b?.type === "text") return [{ type: "text", text: b.text }];
    if (b?.type === "image") return [{ type: "file", mediaType: b.mimeType, url: `data:${b.mimeType};base64,${b.data}` }];
    return [];
  });
}

const isToolPart = (part) => isObject(part) && typeof part.type === "string" && (part.type === "dynamic-tool" || part.type.startsWith("tool-"));
const toolNameOf = (part) => (part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length));

/** The client's last message when it is an assistant message this response continues (the AI SDK's rule). */
function continuedMessage(messages) {
  const last = Array.isArray(messages) ? messages[messages.length - 1] : undefined;
  return isObject(last) && last.role === "assistant" && typeof last.id === "string" && Array.isArray(last.parts) ? last : undefined;
}

/**
 * The translator: one AgentEvent in, the chunks it means out (sync, so a live partial message is read when its event
 * is emitted). State is kept per block as "how much of it the client has": text and reasoning are synced by length
 * from the message the event carries, so a message seen first as a snapshot (a reconnecting client's replay, or a
 * message_end with no updates before it) and one streamed delta by delta give the same parts, and a lagging reader
 * never sends a piece twice. One response: `start` … `finish` (or `abort`) for the first run seen.
 */
function createTranslator(options) {
  const continued = continuedMessage(options.originalMessages);
  const messageId = options.messageId ?? continued?.id ?? randomId();
  const sendReasoning = options.sendReasoning !== false;
  const toolOutput = options.toolOutput ?? defaultToolOutput;
  const onError = options.onError ?? errorMessage;
  const dynamic = options.dynamicTools === true ? { dynamic: true } : {};
  let started = false;
  let inStep = false;
  let stepHasResponse = false;
  let step = 0;
  let done = false;
  /** The assistant message being streamed: per content index, what the client has of that block. */
  let blocks = null;
  let lastAssistant;
  // Continuing the client's last assistant message (after approvals): its tool parts are known to the client, a user
  // message in this run is steering, and a call it denied ends with `tool-output-denied`.
  let sawAssistant = continued !== undefined;
  let steering = 0;
  /** toolCallId → { toolName, input: sent tool-input-available, sent: that input, output: sent a final output } */
  const tools = new Map();
  const denied = new Set();
  for (const part of continued?.parts ?? []) {
    if (!isToolPart(part) || typeof part.toolCallId !== "string") continue;
    const output = ["output-available", "output-error", "output-denied"].includes(part.state) && part.preliminary !== true;
    tools.set(part.toolCallId, { toolName: toolNameOf(part), input: part.state !== "input-streaming", sent: part.input, output });
    if (part.state === "approval-responded" && part.approval?.approved === false) denied.add(part.toolCallId);
  }
  let out = [];

  const emit = (chunk) => out.push(chunk);
  const ensureStart = () => {
    if (!started) {
      started = true;
      emit({ type: "start", messageId });
    }
  };
  const ensureStep = () => {
    ensureStart();
    if (!inStep) {
      inStep = true;
      step += 1;
      emit({ type: "start-step" });
    }
  };
  const finishStep = () => {
    stepHasResponse = false;
    if (inStep) {
      inStep = false;
      emit({ type: "finish-step" });
    }
  };

  function announceTool(toolCallId, toolName, input, meta = {}) {
    let t = tools.get(toolCallId);
    if (!t) {
      t = { toolName, input: false, output: false, started: false };
      tools.set(toolCallId, t);
    }
    if (!t.input) {
      t.input = true;
      t.sent = input ?? {};
      ensureStep();
      emit({ type: "tool-input-available", toolCallId, toolName: t.toolName, input: t.sent, ...dynamic, ...meta });
    }
    return t;
  }

  /**
   * Opens block `i` (`block` is the message's content[i]). `live` marks a tool call whose argument deltas are sent:
   * one opened by its toolcall_start event. One first seen in a snapshot is not (the deltas before the snapshot are
   * unknown, as a call's partial arguments keep no JSON text), unless its toolcall_start follows: its input then
   * arrives whole with tool-input-available.
   */
  function open(i, block, live) {
    if (!isObject(block)) return undefined;
    let b = blocks[i];
    if (b) return b;
    const id = `${step}-${i}`;
    if (block.type === "text") {
      b = { kind: "text", id, len: 0, ended: false };
      emit({ type: "text-start", id });
    } else if (block.type === "thinking") {
      b = { kind: "reasoning", id, len: 0, ended: false, skip: !sendReasoning };
      if (!b.skip) emit({ type: "reasoning-start", id });
    } else if (block.type === "toolCall" && typeof block.id === "string") {
      b = { kind: "tool", id: block.id, live, ended: false };
      const known = tools.get(block.id);
      if (!known) {
        tools.set(block.id, { toolName: block.name, input: false, output: false });
        emit({ type: "tool-input-start", toolCallId: block.id, toolName: block.name, ...dynamic });
      } else {
        b.ended = known.input;
      }
    } else {
      return undefined;
    }
    blocks[i] = b;
    return b;
  }

  /** Sends what the client lacks of text/reasoning block `i`, whose whole text so far is `text`. */
  function sync(b, text) {
    if (!b || b.ended || b.skip || b.kind === "tool" || typeof text !== "string" || text.length <= b.len) return;
    emit({ type: b.kind === "text" ? "text-delta" : "reasoning-delta", id: b.id, delta: text.slice(b.len) });
    b.len = text.length;
  }

  function end(b, block) {
    if (!b || b.ended) return;
    b.ended = true;
    if (b.kind === "tool") {
      announceTool(b.id, block?.name, block?.arguments, signatureMeta({ thoughtSignature: block?.thoughtSignature }));
      return;
    }
    if (b.skip) return;
    if (b.kind === "text") {
      emit({ type: "text-end", id: b.id, ...signatureMeta({ textSignature: block?.textSignature }) });
    } else {
      emit({ type: "reasoning-end", id: b.id, ...signatureMeta({ thinkingSignature: block?.thinkingSignature, redacted: block?.redacted === true ? true : undefined }) });
    }
  }

  const textOf = (block) => (block?.type === "text" ? block.text : block?.type === "thinking" ? block.thinking : undefined);

  function beginAssistant(message) {
    // One model response per step, also when no turn_end came between two (a replay made from the transcript).
    if (stepHasResponse) finishStep();
    ensureStep();
    stepHasResponse = true;
    blocks = [];
    // What the message already holds is the state so far (a replayed partial message, or a message whose content
    // came without updates): sent as one piece per block.
    const content = Array.isArray(message?.content) ? message.content : [];
    content.forEach((block, i) => sync(open(i, block, false), textOf(block)));
  }

  function endAssistant(message) {
    if (!blocks) beginAssistant(message);
    const content = Array.isArray(message?.content) ? message.content : [];
    content.forEach((block, i) => {
      const b = open(i, block, false);
      sync(b, textOf(block));
      end(b, block);
    });
    blocks.forEach((b) => end(b, undefined));
    blocks = null;
    sawAssistant = true;
    if (message !== undefined) lastAssistant = message;
    if (message?.stopReason === "error") emit({ type: "error", errorText: onError(message.errorMessage ?? "The model request failed") });
  }

  function update(event) {
    const message = event.message;
    // An update of a message not seen starting (a reader that joined mid-message): its content is the state so far.
    if (!blocks) beginAssistant(message);
    const ev = event.assistantMessageEvent;
    if (!isObject(ev) || typeof ev.contentIndex !== "number") return;
    const i = ev.contentIndex;
    const block = Array.isArray(message?.content) ? message.content[i] : undefined;
    switch (ev.type) {
      case "text_start":
      case "thinking_start":
        sync(open(i, block, true), textOf(block));
        break;
      case "toolcall_start": {
        // Every delta of this call is still to come (also when a snapshot opened it first): stream them.
        const b = open(i, block, true);
        if (b?.kind === "tool" && !b.ended) b.live = true;
        break;
      }
      case "text_delta":
      case "thinking_delta":
        sync(open(i, block, true), textOf(block));
        break;
      case "toolcall_delta": {
        const b = open(i, block, true);
        if (b?.kind === "tool" && b.live && !b.ended && typeof ev.delta === "string" && ev.delta !== "") {
          emit({ type: "tool-input-delta", toolCallId: b.id, inputTextDelta: ev.delta });
        }
        break;
      }
      case "text_end":
      case "thinking_end": {
        const b = open(i, block, true);
        sync(b, typeof ev.content === "string" ? ev.content : textOf(block));
        end(b, block);
        break;
      }
      case "toolcall_end": {
        const call = isObject(ev.toolCall) ? ev.toolCall : block;
        end(open(i, call, true), call);
        break;
      }
      default:
        break;
    }
  }

  function toolEnd(event) {
    const t = announceTool(event.toolCallId, event.toolName, event.args);
    if (t.output) return;
    t.output = true;
    if (denied.has(event.toolCallId)) emit({ type: "tool-output-denied", toolCallId: event.toolCallId });
    else if (event.isError) emit({ type: "tool-output-error", toolCallId: event.toolCallId, errorText: resultText(event.result), ...dynamic });
    else emit({ type: "tool-output-available", toolCallId: event.toolCallId, output: toolOutput(event.result, { toolCallId: event.toolCallId, toolName: t.toolName }), ...dynamic });
  }

  function push(event) {
    if (done) return [];
    out = [];
    switch (event.type) {
      case "agent_start":
        ensureStart();
        break;
      case "message_start":
        if (event.message?.role === "assistant") beginAssistant(event.message);
        break;
      case "message_update":
        if (event.message?.role === "assistant" || blocks) update(event);
        break;
      case "message_end": {
        const m = event.message;
        if (m?.role === "assistant") endAssistant(m);
        else if (m?.role === "toolResult" && typeof m.toolCallId === "string") {
          const t = tools.get(m.toolCallId);
          // Only a result whose call the client has (a replay from the transcript has no tool_execution_end).
          if (t && !t.output) toolEnd({ toolCallId: m.toolCallId, toolName: m.toolName, result: m, isError: m.isError === true });
        } else if (m?.role === "user" && sawAssistant) {
          // A user message inside a run after its first model response: steering or a follow-up.
          ensureStart();
          steering += 1;
          emit({ type: "steering-message", id: `${messageId}-steering-${steering}`, parts: userParts(m.content) });
        }
        break;
      }
      case "tool_execution_start":
        announceTool(event.toolCallId, event.toolName, event.args);
        break;
      case "tool_execution_update": {
        const t = announceTool(event.toolCallId, event.toolName, event.args);
        if (!t.output) {
          emit({ type: "tool-output-available", toolCallId: event.toolCallId, output: toolOutput(event.partialResult, { toolCallId: event.toolCallId, toolName: t.toolName }), preliminary: true, ...dynamic });
        }
        break;
      }
      case "tool_execution_end":
        toolEnd(event);
        break;
      case "tool_approval_request": {
        const t = announceTool(event.toolCallId, event.toolName, event.args);
        // U-12.5: signed over the call as the client holds it.
        const key = options.approvalKey;
        emit(approvalRequestChunk(event, key ? approvalToken(key, event.toolCallId, t.toolName, t.sent, event.expiresAt) : event.toolCallId));
        break;
      }
      case "turn_end":
        finishStep();
        break;
      case "agent_end": {
        ensureStart();
        if (blocks) endAssistant(undefined);
        finishStep();
        const reason = lastAssistant?.stopReason;
        if (reason === "aborted") {
          emit({ type: "abort", ...(typeof lastAssistant.errorMessage === "string" ? { reason: lastAssistant.errorMessage } : {}) });
        } else {
          emit({ type: "finish", finishReason: FINISH_REASONS[reason] ?? "other" });
        }
        done = true;
        break;
      }
      default:
        break; // events this version does not know: nothing for the client
    }
    return out;
  }

  function fail(error) {
    if (done) return [];
    done = true;
    out = [];
    emit({ type: "error", errorText: onError(error) });
    return out;
  }

  /** The response ends as aborted now (the caller's `abortSignal`), whatever the source still holds. */
  function abort(reason) {
    if (done) return [];
    out = [];
    ensureStart();
    if (blocks) endAssistant(undefined);
    finishStep();
    emit({ type: "abort", ...(typeof reason === "string" ? { reason } : {}) });
    done = true;
    return out;
  }

  return { push, fail, abort, messageId, get done() { return done; } };
}

/** The event of a source item: an AgentEvent, or `{ seq, event }` from `agent.events()`. */
function eventOf(item) {
  if (isObject(item) && typeof item.type === "string") return item;
  if (isObject(item) && isObject(item.event) && typeof item.event.type === "string") return item.event;
  return undefined;
}

const TO_STREAM_OPTIONS = {
  messageId: "string",
  originalMessages: "array",
  run: "function",
  sendReasoning: "boolean",
  toolOutput: "function",
  onError: "function",
  dynamicTools: "boolean",
  messageMetadata: "function",
  onFinish: "function",
  abortSignal: "object",
  approvalSecret: "checked",
};

const USAGE_KEYS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"];
const COST_KEYS = ["input", "output", "cacheRead", "cacheWrite", "total"];

/** What a response's run spent: its assistant messages' `usage` summed (`totalUsage()`'s shape; not finite counts 0). */
function runUsage() {
  const totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const finite = (v) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    add(usage) {
      if (!isObject(usage)) return;
      for (const k of USAGE_KEYS) totals[k] += finite(usage[k]);
      if (isObject(usage.cost)) for (const k of COST_KEYS) totals.cost[k] += finite(usage.cost[k]);
    },
    /** A fresh copy. */
    get value() {
      return { ...totals, cost: { ...totals.cost } };
    },
  };
}

/**
 * One run of an agent as a `ReadableStream` of UI message chunks: `start` (with `messageId`), per model response
 * `start-step` … `finish-step` with text, reasoning and tool parts, then `finish` (or `abort`) at `agent_end`, where the
 * stream ends. `source` is an Agent (subscribed now, unsubscribed at the end) or an async iterable of AgentEvents or of
 * `{ seq, event }` items (read as fast as it yields; `return()` is called at the end).
 */
export function toUIMessageStream(source, options) {
  const fn = "toUIMessageStream";
  const isAgent = isObject(source) && typeof source.subscribe === "function";
  const isIterable = isObject(source) && typeof source[Symbol.asyncIterator] === "function";
  if (!isAgent && !isIterable) {
    throw codedError("INVALID_ARGUMENT", `${fn}: source must be an Agent or an async iterable of agent events (or of { seq, event }), got ${describe(source)}`);
  }
  const opts = checkOptions(fn, options, TO_STREAM_OPTIONS);
  const signal = opts.abortSignal;
  if (signal !== undefined && (typeof signal.aborted !== "boolean" || typeof signal.addEventListener !== "function")) {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.abortSignal must be an AbortSignal, got ${describe(signal)}`);
  }
  const approvalKey = opts.approvalSecret === undefined ? undefined : secretKey(fn, opts.approvalSecret);
  const translator = createTranslator({ ...opts, approvalKey });
  // What onFinish and messageMetadata are told: the run's usage so far, its messages, how the response ended.
  const usage = runUsage();
  let runMessages;
  const ended = [];
  let lastChunk;
  if (isAgent) {
    responseIds.set(source, translator.messageId);
    // Start the agent's journal before its run, so that a resume can replay the run from its start (a reader ended
    // at once; the journal stays, bounded by two runs).
    if (typeof source.events === "function") {
      try {
        source.events().return();
      } catch {
        // not agent-loop-wasm's Agent: a resume then rebuilds the answer from the transcript
      }
    }
  }
  let stop = () => {};
  let unlisten = () => {};
  let closed = false;
  return new ReadableStream({
    start(controller) {
      // The end of the response: once, after its last chunk; onFinish is awaited before the stream closes, and its
      // throw errors the stream.
      const close = () => {
        closed = true;
        stop();
        unlisten();
        if (!opts.onFinish) return controller.close();
        const messages = runMessages ?? ended;
        Promise.resolve()
          .then(() => opts.onFinish({ messages, usage: usage.value, isAborted: lastChunk?.type === "abort", isError: lastChunk?.type === "error", messageId: translator.messageId }))
          .then(() => controller.close(), (e) => controller.error(e));
      };
      const enqueue = (chunk) => {
        lastChunk = chunk;
        if (!opts.messageMetadata) return controller.enqueue(chunk);
        const metadata = opts.messageMetadata({ part: chunk, usage: usage.value });
        if (metadata === undefined) return controller.enqueue(chunk);
        if (chunk.type === "start" || chunk.type === "finish") return controller.enqueue({ ...chunk, messageMetadata: metadata });
        controller.enqueue(chunk);
        controller.enqueue({ type: "message-metadata", messageMetadata: metadata });
      };
      const send = (chunks) => {
        if (closed) return;
        try {
          for (const c of chunks) enqueue(c);
        } catch (e) {
          // A throwing messageMetadata: the response ends with its error (once).
          if (!translator.done) return send(translator.fail(e));
          const errorText = (opts.onError ?? errorMessage)(e);
          enqueue({ type: "error", errorText });
        }
        if (translator.done) close();
      };
      const failWith = (e) => send(translator.fail(e));
      let index = 0;
      const take = (item) => {
        const event = eventOf(item);
        if (event === undefined) {
          failWith(codedError("INVALID_ARGUMENT", `${fn}: source item ${index} is neither an agent event nor { seq, event }, got ${describe(item)}`));
        } else {
          if (event.type === "message_end" && isObject(event.message)) {
            if (opts.onFinish) ended.push(event.message);
            if (event.message.role === "assistant") usage.add(event.message.usage);
          } else if (event.type === "agent_end" && Array.isArray(event.messages)) {
            runMessages = event.messages;
          }
          send(translator.push(event));
        }
        index += 1;
      };
      if (signal !== undefined) {
        // Aborts the run of an Agent source (its agent_end then ends the response as aborted); any other source, or
        // an Agent running nothing, ends the response with `abort` at once.
        const onAbort = () => {
          if (closed) return;
          if (isAgent && typeof source.abort === "function" && source.state?.isStreaming === true) source.abort();
          else send(translator.abort(typeof signal.reason === "string" ? signal.reason : undefined));
        };
        unlisten = () => signal.removeEventListener("abort", onAbort);
        if (signal.aborted) queueMicrotask(onAbort);
        else signal.addEventListener("abort", onAbort, { once: true });
      }
      if (isAgent) {
        const unsubscribe = source.subscribe((event) => take(event));
        stop = () => unsubscribe();
      } else {
        const iterator = source[Symbol.asyncIterator]();
        stop = () => {
          try {
            Promise.resolve(iterator.return?.()).catch(() => {});
          } catch {
            // an iterator whose return() throws: nothing more to release
          }
        };
        (async () => {
          for (;;) {
            const r = await iterator.next();
            if (closed) return;
            if (r.done) {
              // The source ended before agent_end (its reader was stopped): end the response without `finish`.
              close();
              return;
            }
            take(r.value);
          }
        })().catch(failWith);
      }
      if (opts.run) {
        Promise.resolve()
          // Not started once the response ended (an abortSignal aborted before the run began).
          .then(() => (closed ? undefined : opts.run()))
          .then(
            () => {
              // An Agent has delivered agent_end before its run's promise settles: a run that resolves with the
              // stream still open started no run (e.g. a decision that leaves other calls waiting).
              if (isAgent && !closed && !translator.done) close();
            },
            failWith,
          );
      }
    },
    cancel() {
      closed = true;
      stop();
      unlisten();
    },
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Resume: the transport's reconnect (`GET …/:chatId/stream`, `useChat({ resume: true })`)
// ---------------------------------------------------------------------------------------------------------------

/** agent → the messageId of the last response `toUIMessageStream` started for it in this process (what a resume reuses). */
const responseIds = new WeakMap();

const copy = (message) => {
  try {
    return structuredClone(message);
  } catch {
    return message;
  }
};

/**
 * The events a resume translates: `agent.events({ fromRunStart: true })` as they come, except an `agent_sync` (the
 * journal did not see the run start: it began mid-run, or in a process restored from checkpoints), which stands for
 * the answer so far: the messages after the transcript's last user message, then the streaming partial. Replayed
 * messages are copied as they are read: the events of one streaming message share its live content blocks (a kept
 * message_start grows with the stream), so the copy fixes what the replay sends; the translator syncs text by length,
 * so live events after it send only what the copy lacks, nothing twice.
 */
function resumeEvents(items) {
  const pending = [];
  const expand = (item) => {
    const event = item.event;
    if (event?.type === "agent_sync") {
      const messages = Array.isArray(event.messages) ? event.messages : [];
      let from = messages.length;
      while (from > 0 && messages[from - 1]?.role !== "user") from--;
      pending.push({ type: "agent_start" });
      for (const m of messages.slice(from)) {
        const message = copy(m);
        pending.push({ type: "message_start", message }, { type: "message_end", message });
      }
      if (isObject(event.streamingMessage)) pending.push({ type: "message_start", message: copy(event.streamingMessage) });
      if (!event.isStreaming) pending.push({ type: "agent_end", messages: [] });
    } else if (item.replay && isObject(event?.message) && (event.type === "message_start" || event.type === "message_update")) {
      pending.push({ ...event, message: copy(event.message) });
    } else {
      pending.push(event);
    }
  };
  // A plain iterator (not an async generator), so that `return()` reaches the agent's reader at once even while a
  // `next()` waits for the next event.
  return {
    async next() {
      while (pending.length === 0) {
        const r = await items.next();
        if (r.done) return r;
        expand(r.value);
      }
      return { done: false, value: pending.shift() };
    },
    return: () => items.return(),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

const RESUME_OPTIONS = { messageId: "string", sendReasoning: "boolean", toolOutput: "function", onError: "function", dynamicTools: "boolean" };

/**
 * The answer under way, for a reconnecting chat client: null when the agent runs nothing (answer 204), else the UI
 * message stream of the current run replayed from its start (its `agent_start`: `start` with the same `messageId`,
 * which the AI SDK's client replaces its message with) and then live, ending with the run. `messageId`: the option,
 * else the id of the last response `toUIMessageStream` started for this agent in this process.
 */
export function resumeUIMessageStream(agent, options) {
  const fn = "resumeUIMessageStream";
  if (!isObject(agent) || typeof agent.events !== "function" || !isObject(agent.state)) {
    throw codedError("INVALID_ARGUMENT", `${fn}: agent must be an Agent of agent-loop-wasm (with events()), got ${describe(agent)}`);
  }
  const opts = checkOptions(fn, options, { ...RESUME_OPTIONS, signal: "object" });
  if (!agent.state.isStreaming) return null;
  const { signal, ...streamOptions } = opts;
  const items = agent.events({ fromRunStart: true, untilIdle: true, ...(signal ? { signal } : {}) });
  const messageId = streamOptions.messageId ?? responseIds.get(agent);
  return toUIMessageStream(resumeEvents(items), { ...streamOptions, ...(messageId ? { messageId } : {}) });
}

/** `resumeUIMessageStream` as a `Response`: 204 with no body when no run is under way, else the SSE stream. */
export function resumeUIMessageStreamResponse(agent, options) {
  const fn = "resumeUIMessageStreamResponse";
  const opts = checkOptions(fn, options, { ...RESUME_OPTIONS, signal: "object", ...RESPONSE_OPTIONS });
  const { status, statusText, headers, ...streamOptions } = opts;
  const headerSet = responseHeaders(fn, headers);
  const stream = resumeUIMessageStream(agent, streamOptions);
  if (stream === null) return new Response(null, { status: 204 });
  return createUIMessageStreamResponse({ stream, status, statusText, headers: headerSet });
}

/** Chunks → SSE text: `data: <json>\n\n` per chunk, `data: [DONE]\n\n` at the end (the AI SDK's class of this name). */
export class JsonToSseTransformStream extends TransformStream {
  constructor() {
    super({
      transform(chunk, controller) {
        controller.enqueue(`data: ${JSON.stringify(chunk)}\n\n`);
      },
      flush(controller) {
        controller.enqueue("data: [DONE]\n\n");
      },
    });
  }
}

function responseHeaders(fn, headers) {
  const merged = new Headers(UI_MESSAGE_STREAM_HEADERS);
  if (headers !== undefined) {
    if (!isObject(headers)) throw codedError("INVALID_ARGUMENT", `${fn}: options.headers must be a Headers object, an array of pairs or a record, got ${describe(headers)}`);
    new Headers(headers).forEach((value, key) => merged.set(key, value));
  }
  return merged;
}

function checkChunkStream(fn, stream) {
  if (!isObject(stream) || typeof stream.pipeThrough !== "function") {
    throw codedError("INVALID_ARGUMENT", `${fn}: stream must be a ReadableStream of UI message chunks, got ${describe(stream)}`);
  }
}

const RESPONSE_OPTIONS = { status: "number", statusText: "string" };

/** A `Response` streaming the chunks as SSE with the protocol's headers (the AI SDK's function of this name). */
export function createUIMessageStreamResponse(init) {
  const fn = "createUIMessageStreamResponse";
  if (!isObject(init)) throw codedError("INVALID_ARGUMENT", `${fn}: expected { stream, status?, statusText?, headers? }, got ${describe(init)}`);
  checkChunkStream(fn, init.stream);
  checkOptions(fn, { status: init.status, statusText: init.statusText }, RESPONSE_OPTIONS);
  const body = init.stream.pipeThrough(new JsonToSseTransformStream()).pipeThrough(new TextEncoderStream());
  return new Response(body, { status: init.status ?? 200, statusText: init.statusText, headers: responseHeaders(fn, init.headers) });
}

/** `createUIMessageStreamResponse({ stream: toUIMessageStream(source, options), ...init })`. */
export function toUIMessageStreamResponse(source, options) {
  const fn = "toUIMessageStreamResponse";
  const opts = checkOptions(fn, options, { ...TO_STREAM_OPTIONS, ...RESPONSE_OPTIONS });
  const { status, statusText, headers, ...streamOptions } = opts;
  const headerSet = responseHeaders(fn, headers);
  const stream = toUIMessageStream(source, streamOptions);
  return createUIMessageStreamResponse({ stream, status, statusText, headers: headerSet });
}

/**
 * Writes the chunks as SSE to a Node `ServerResponse` (the AI SDK's function of this name); resolves when the stream
 * ended or the client went away (then the stream is cancelled: the agent's run goes on).
 */
export async function pipeUIMessageStreamToResponse(init) {
  const fn = "pipeUIMessageStreamToResponse";
  if (!isObject(init)) throw codedError("INVALID_ARGUMENT", `${fn}: expected { response, stream, status?, statusText?, headers? }, got ${describe(init)}`);
  const { response, stream } = init;
  if (!isObject(response) || typeof response.writeHead !== "function" || typeof response.write !== "function" || typeof response.end !== "function") {
    throw codedError("INVALID_ARGUMENT", `${fn}: response must be a Node http.ServerResponse, got ${describe(response)}`);
  }
  checkChunkStream(fn, stream);
  checkOptions(fn, { status: init.status, statusText: init.statusText }, RESPONSE_OPTIONS);
  const headers = {};
  responseHeaders(fn, init.headers).forEach((value, key) => (headers[key] = value));
  if (init.statusText === undefined) response.writeHead(init.status ?? 200, headers);
  else response.writeHead(init.status ?? 200, init.statusText, headers);
  const reader = stream.pipeThrough(new JsonToSseTransformStream()).getReader();
  let gone = false;
  const onClose = () => {
    gone = true;
    reader.cancel().catch(() => {});
  };
  response.once?.("close", onClose);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || gone) break;
      if (response.write(value) === false && typeof response.once === "function") {
        await new Promise((resolve) => {
          const settle = () => {
            response.off?.("drain", settle);
            response.off?.("close", settle);
            resolve();
          };
          response.once("drain", settle);
          response.once("close", settle);
        });
      }
    }
  } finally {
    response.off?.("close", onClose);
    if (!gone) response.end();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Request side: UIMessage[] → agent messages, approval responses → decisions
// ---------------------------------------------------------------------------------------------------------------

const IGNORED_PARTS = new Set(["step-start", "source-url", "source-document", "custom"]);

function zeroUsage() {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

/** `data:<type>[;base64],<data>` → { mediaType, base64?, text? }, or undefined. */
function parseDataUrl(url) {
  const m = /^data:([^,]*?),(.*)$/s.exec(url);
  if (!m) return undefined;
  const params = m[1].split(";");
  const base64 = params.includes("base64");
  return { mediaType: params[0] || "text/plain", base64, data: m[2] };
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-ndjson|yaml|x-yaml)\b)/;

function decodeText(parsed) {
  if (!parsed.base64) return decodeURIComponent(parsed.data);
  const binary = atob(parsed.data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/** A UI file part as a content block, or a string saying why it cannot be one. */
function fileBlock(part) {
  if (typeof part.url !== "string" || typeof part.mediaType !== "string") return "a file part needs string url and mediaType";
  const parsed = parseDataUrl(part.url);
  if (!parsed) return `a file part whose url is not a data: URL (${part.url.slice(0, 60)}) does not map: fetch it and post it as a data: URL`;
  if (part.mediaType.startsWith("image/")) {
    if (!parsed.base64) return "an image file part must be a base64 data: URL";
    return { type: "image", data: parsed.data, mimeType: part.mediaType };
  }
  if (TEXT_TYPES.test(part.mediaType)) return { type: "text", text: decodeText(parsed) };
  return `a file part of type ${part.mediaType} does not map (only images and text files do)`;
}

const metaOf = (part, key) => (isObject(part?.[key]) && isObject(part[key][META]) ? part[key][META] : {});

/** The tool result a tool part holds (output, error, denial), or undefined when the call has none yet. */
function toolResultOf(part, toolName, timestamp) {
  const base = { role: "toolResult", toolCallId: part.toolCallId, toolName };
  if (part.state === "output-available" && part.preliminary !== true) {
    const o = part.output;
    if (isObject(o) && Array.isArray(o.content)) {
      const r = { ...base, content: o.content };
      if (o.details !== undefined) r.details = o.details;
      if (o.structuredContent !== undefined) r.structuredContent = o.structuredContent;
      return { ...r, isError: false, timestamp };
    }
    const text = typeof o === "string" ? o : JSON.stringify(o) ?? "";
    return { ...base, content: [{ type: "text", text }], isError: false, timestamp };
  }
  if (part.state === "output-error") {
    return { ...base, content: [{ type: "text", text: String(part.errorText ?? "") }], isError: true, timestamp };
  }
  if (part.state === "output-denied") {
    const reason = part.approval?.reason;
    const text = typeof reason === "string" && reason !== "" ? `Tool call "${part.toolCallId}" was denied: ${reason}` : `Tool call "${part.toolCallId}" was denied`;
    return { ...base, content: [{ type: "text", text }], isError: true, timestamp };
  }
  return undefined;
}

/**
 * The `messages` a `useChat` client posts (UIMessage[]) as agent messages: user messages (text, image and text files
 * as data: URLs), and per step of an assistant message one assistant message (text, reasoning, tool calls) followed by
 * the tool results its tool parts hold. What has no agent form throws a TypeError naming the part, or is dropped with
 * `options.unsupported: "drop"`; parts meant for the UI only (step-start, sources, data-*, custom) are skipped.
 */
export function convertToAgentMessages(messages, options) {
  const fn = "convertToAgentMessages";
  if (!Array.isArray(messages)) throw codedError("INVALID_ARGUMENT", `${fn}: messages must be an array of UIMessage, got ${describe(messages)}`);
  const opts = checkOptions(fn, options, { unsupported: "string", model: "object" });
  if (opts.unsupported !== undefined && opts.unsupported !== "error" && opts.unsupported !== "drop") {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.unsupported must be "error" or "drop", got ${JSON.stringify(opts.unsupported)}`);
  }
  const model = opts.model ?? {};
  const origin = {
    api: typeof model.api === "string" ? model.api : "ui-message",
    provider: typeof model.provider === "string" ? model.provider : "ui-message",
    model: typeof model.id === "string" ? model.id : "ui-message",
  };
  const drop = opts.unsupported === "drop";
  const timestamp = Date.now();
  const result = [];
  const unsupported = (path, why) => {
    if (!drop) throw codedError("INVALID_ARGUMENT", `${fn}: ${path}: ${why}`);
  };

  const userContent = (parts, path) => {
    const content = [];
    parts.forEach((part, j) => {
      const at = `${path}[${j}]`;
      if (!isObject(part) || typeof part.type !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${at} must be a part object with a string type, got ${describe(part)}`);
      if (part.type === "text") content.push({ type: "text", text: String(part.text ?? "") });
      else if (part.type === "file") {
        const block = fileBlock(part);
        if (typeof block === "string") unsupported(at, block);
        else content.push(block);
      } else if (!IGNORED_PARTS.has(part.type) && !part.type.startsWith("data-")) {
        unsupported(at, `a ${part.type} part of a user message does not map`);
      }
    });
    return content;
  };

  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw codedError("INVALID_ARGUMENT", `${fn}: ${at} must be a UIMessage object, got ${describe(message)}`);
    if (!Array.isArray(message.parts)) throw codedError("INVALID_ARGUMENT", `${fn}: ${at}.parts must be an array, got ${describe(message.parts)}`);
    if (message.role === "user") {
      const content = userContent(message.parts, `${at}.parts`);
      if (content.length > 0) result.push({ role: "user", content, timestamp });
      return;
    }
    if (message.role === "system") {
      unsupported(at, "a system message does not map: the agent's system prompt is server state (a client must not rewrite it)");
      return;
    }
    if (message.role !== "assistant") throw codedError("INVALID_ARGUMENT", `${fn}: ${at}.role must be "user", "assistant" or "system", got ${JSON.stringify(message.role)}`);

    let content = [];
    let results = [];
    const flush = () => {
      if (content.length > 0) {
        const calls = content.some((b) => b.type === "toolCall");
        result.push({ role: "assistant", content, ...origin, usage: zeroUsage(), stopReason: calls ? "toolUse" : "stop", timestamp });
      }
      result.push(...results);
      content = [];
      results = [];
    };
    message.parts.forEach((part, j) => {
      const pat = `${at}.parts[${j}]`;
      if (!isObject(part) || typeof part.type !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${pat} must be a part object with a string type, got ${describe(part)}`);
      const type = part.type;
      if (type === "step-start") {
        flush();
      } else if (type === "text") {
        content.push({ type: "text", text: String(part.text ?? ""), ...pick(metaOf(part, "providerMetadata"), ["textSignature"]) });
      } else if (type === "reasoning") {
        const meta = metaOf(part, "providerMetadata");
        content.push({ type: "thinking", thinking: String(part.text ?? ""), ...pick(meta, ["thinkingSignature"]), ...(meta.redacted === true ? { redacted: true } : {}) });
      } else if (type === "dynamic-tool" || type.startsWith("tool-")) {
        if (typeof part.toolCallId !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${pat}.toolCallId must be a string, got ${describe(part.toolCallId)}`);
        const name = toolNameOf(part);
        if (typeof name !== "string" || name === "") throw codedError("INVALID_ARGUMENT", `${fn}: ${pat} names no tool`);
        if (part.state === "input-streaming") return; // the model never finished the call: it was not made
        const args = isObject(part.input) && !Array.isArray(part.input) ? part.input : {};
        content.push({ type: "toolCall", id: part.toolCallId, name, arguments: args, ...pick(metaOf(part, "callProviderMetadata"), ["thoughtSignature"]) });
        const r = toolResultOf(part, name, timestamp);
        if (r) results.push(r);
      } else if (type === "steering-message") {
        flush();
        const steered = userContent(Array.isArray(part.parts) ? part.parts : [], `${pat}.parts`);
        if (steered.length > 0) result.push({ role: "user", content: steered, timestamp });
      } else if (type === "file" || type === "reasoning-file") {
        unsupported(pat, `a ${type} part of an assistant message does not map (assistant messages hold text, reasoning and tool calls)`);
      } else if (!IGNORED_PARTS.has(type) && !type.startsWith("data-")) {
        unsupported(pat, `a ${type} part does not map`);
      }
    });
    flush();
  });
  return result;
}

function pick(obj, keys) {
  const out = {};
  for (const k of keys) if (typeof obj[k] === "string") out[k] = obj[k];
  return out;
}

/**
 * The approval responses of the last message (an assistant message whose tool parts are `approval-responded`, as the
 * client's `addToolApprovalResponse` leaves them) as decisions `{ toolCallId, approved, reason? }`: apply each with
 * `agent.approve(toolCallId)` / `agent.deny(toolCallId, { reason })`, or pass them as `config.approvals.decisions`.
 */
export function toolApprovalDecisions(messages) {
  const fn = "toolApprovalDecisions";
  if (!Array.isArray(messages)) throw codedError("INVALID_ARGUMENT", `${fn}: messages must be an array of UIMessage, got ${describe(messages)}`);
  const last = messages[messages.length - 1];
  if (!isObject(last) || last.role !== "assistant" || !Array.isArray(last.parts)) return [];
  const decisions = [];
  last.parts.forEach((part, j) => {
    if (!isObject(part) || part.state !== "approval-responded") return;
    const approval = part.approval;
    if (!isObject(approval) || typeof approval.approved !== "boolean" || typeof part.toolCallId !== "string") {
      throw codedError("INVALID_ARGUMENT", `${fn}: messages[${messages.length - 1}].parts[${j}]: an approval-responded part needs a toolCallId and approval.approved (boolean)`);
    }
    decisions.push({ toolCallId: part.toolCallId, approved: approval.approved, ...(typeof approval.reason === "string" ? { reason: approval.reason } : {}) });
  });
  return decisions;
}

// ---------------------------------------------------------------------------------------------------------------
// The route in one call (U-12.5): a prompt, or the posted approval responses, streamed
// ---------------------------------------------------------------------------------------------------------------

/**
 * The pause a stateless route carries to a fresh Agent: the posted history as agent messages up to the assistant
 * message whose calls wait, and `{ requests, completedTools, decisions }` for `agent.continue({ approvals })`. Every
 * approval part must carry the token the stream signed for that call as posted (its id, tool, input, deadline); every
 * other call of that message must hold its result. A response after the deadline is a denial (`approval timed out`).
 */
function postedPause(fn, uiMessages, key, convertOptions) {
  const refused = (why) => codedError("INVALID_APPROVAL", `${fn}: ${why}`);
  const messages = convertToAgentMessages(uiMessages, convertOptions);
  let i = messages.length - 1;
  const results = new Map();
  for (; i >= 0 && messages[i].role === "toolResult"; i--) results.set(messages[i].toolCallId, messages[i]);
  const assistant = messages[i];
  const calls = assistant?.role === "assistant" ? assistant.content.filter((b) => b.type === "toolCall") : [];
  const parts = new Map();
  for (const part of uiMessages[uiMessages.length - 1].parts) if (isToolPart(part)) parts.set(part.toolCallId, part);
  const approvals = { requests: [], completedTools: [], decisions: [] };
  const now = Date.now();
  for (const call of calls) {
    const part = parts.get(call.id);
    const result = results.get(call.id);
    if (part?.state === "approval-responded" || part?.state === "approval-requested") {
      const expiresAt = part.approval?.descriptor?.expiresAt;
      if (!approvalTokenValid(key, part.approval?.id, call.id, call.name, part.input, expiresAt)) {
        throw refused(`the approval of tool call "${call.id}" is not one this server signed (the call, its input or its deadline was changed, or the secret differs)`);
      }
      approvals.requests.push({ toolCallId: call.id, toolName: call.name, args: call.arguments, ...(typeof expiresAt === "number" ? { expiresAt } : {}) });
      if (part.state === "approval-responded") {
        const { approved, reason } = part.approval;
        if (typeof approved !== "boolean") throw refused(`the approval of tool call "${call.id}" has no approved (boolean)`);
        const late = approved && typeof expiresAt === "number" && expiresAt <= now;
        approvals.decisions.push(late ? { toolCallId: call.id, approved: false, reason: "approval timed out" }
          : { toolCallId: call.id, approved, ...(typeof reason === "string" ? { reason } : {}) });
      }
    } else if (result) {
      approvals.completedTools.push({ toolCallId: call.id, toolName: call.name, result: { content: result.content, details: result.details ?? {} }, isError: result.isError === true });
    } else {
      throw refused(`tool call "${call.id}" of the last message has neither a result nor an approval`);
    }
  }
  if (approvals.requests.length === 0) throw refused("the last of uiMessages has no tool call waiting for approval");
  return { messages: messages.slice(0, i + 1), approvals };
}

const AGENT_STREAM_OPTIONS = { ...TO_STREAM_OPTIONS, unsupported: "string" };

/**
 * A `useChat` route's whole answer as a UI message stream (the AI SDK's `createAgentUIStream`): `uiMessages` are the
 * posted messages. A user message last is prompted (a fresh agent first takes the history before it); an assistant
 * message last with approval responses is carried out — by `approve()`/`deny()` when the agent holds the pause (a
 * server that keeps its agents), else, for a fresh agent (a stateless route), by `continue({ approvals })` from the
 * posted history, every approval checked against `approvalSecret` (the stream signs its approval requests with it).
 */
export function createAgentUIStream(init) {
  return agentUIStream("createAgentUIStream", init).stream;
}

/** `createAgentUIStream` as a `Response` (the AI SDK's `createAgentUIStreamResponse`): `status`, `statusText`, `headers`. */
export function createAgentUIStreamResponse(init) {
  const fn = "createAgentUIStreamResponse";
  const { stream, response } = agentUIStream(fn, init);
  return createUIMessageStreamResponse({ stream, ...response });
}

function agentUIStream(fn, init) {
  if (!isObject(init) || Array.isArray(init)) throw codedError("INVALID_ARGUMENT", `${fn}: expected { agent, uiMessages, … }, got ${describe(init)}`);
  const { agent, uiMessages, status, statusText, headers, ...streamOptions } = init;
  if (!isObject(agent) || typeof agent.subscribe !== "function" || typeof agent.continue !== "function" || !isObject(agent.state)) {
    throw codedError("INVALID_ARGUMENT", `${fn}: agent must be an Agent of agent-loop-wasm, got ${describe(agent)}`);
  }
  if (!Array.isArray(uiMessages) || uiMessages.length === 0) {
    throw codedError("INVALID_ARGUMENT", `${fn}: uiMessages must be a non-empty array of UIMessage (useChat's messages), got ${describe(uiMessages)}`);
  }
  const opts = checkOptions(fn, streamOptions, AGENT_STREAM_OPTIONS);
  const { unsupported, ...toStream } = opts;
  const response = { status, statusText, headers: responseHeaders(fn, headers) };
  checkOptions(fn, { status, statusText }, RESPONSE_OPTIONS);
  const key = opts.approvalSecret === undefined ? undefined : secretKey(fn, opts.approvalSecret);
  const model = agent.state.model;
  const convertOptions = { ...(unsupported !== undefined ? { unsupported } : {}), ...(isObject(model) ? { model } : {}) };
  const last = uiMessages[uiMessages.length - 1];
  // A fresh agent holds no conversation (at most the system messages that declare its tools); it takes the history.
  const own = agent.state.messages;
  const fresh = own.every((m) => isObject(m) && m.role === "system");
  let run;
  if (isObject(last) && last.role === "user") {
    if (fresh && uiMessages.length > 1) agent.state.messages = [...own, ...convertToAgentMessages(uiMessages.slice(0, -1), convertOptions)];
    const prompts = convertToAgentMessages([last], convertOptions);
    if (prompts.length !== 1) throw codedError("INVALID_ARGUMENT", `${fn}: the last of uiMessages is a user message with nothing to send`);
    run = () => agent.prompt(prompts[0]);
  } else if (continuedMessage(uiMessages) && last.parts.some((p) => isObject(p) && p.state === "approval-responded")) {
    if (agent.state.pendingApprovals.length > 0) {
      const decisions = toolApprovalDecisions(uiMessages);
      run = async () => {
        for (const d of decisions) await (d.approved ? agent.approve(d.toolCallId) : agent.deny(d.toolCallId, d.reason === undefined ? undefined : { reason: d.reason }));
      };
    } else if (!fresh) {
      throw codedError("INVALID_APPROVAL", `${fn}: the agent has no tool call waiting for approval (the posted approvals were carried out already, or never asked)`);
    } else {
      if (key === undefined) {
        throw codedError("INVALID_ARGUMENT", `${fn}: approvals posted to a fresh agent need options.approvalSecret (a stateless route checks each approval against the secret its stream signed it with)`);
      }
      const { messages, approvals } = postedPause(fn, uiMessages, key, convertOptions);
      agent.state.messages = [...own, ...messages];
      run = () => agent.continue({ approvals });
    }
  } else {
    throw codedError("INVALID_ARGUMENT", `${fn}: the last of uiMessages must be the user's new message or the assistant message with the approval responses, got ${describe(last?.role)}`);
  }
  return { stream: toUIMessageStream(agent, { ...toStream, originalMessages: uiMessages, run }), response };
}

// ---------------------------------------------------------------------------------------------------------------
// Transcript → UIMessage[]: the history a reloaded `useChat` page starts from (the inverse of convertToAgentMessages)
// ---------------------------------------------------------------------------------------------------------------

/** The default id of a UIMessage `toUIMessages` makes: `user-<index>`, `assistant-<index>` (see its `messageId`). */
const defaultMessageId = ({ role, index }) => `${role}-${index}`;

/** The reason of issue 30's denial result `Tool call "<id>" was denied[: <reason>]`: { reason? }, or undefined. */
function denialOf(result, toolCallId) {
  const text = resultText(result);
  const head = `Tool call "${toolCallId}" was denied`;
  if (text === head) return {};
  if (text.startsWith(`${head}: `)) return { reason: text.slice(head.length + 2) };
  return undefined;
}

/** `part.approval` as the client holds it after the request (and, once made, the decision). */
function approvalOf(toolCallId, request, decision, approvalId = toolCallId) {
  const approval = { id: approvalId };
  if (request) {
    const chunk = approvalRequestChunk(request);
    if (chunk.approvalDescriptor) approval.descriptor = chunk.approvalDescriptor;
    if (chunk.reason !== undefined) approval.requestReason = chunk.reason;
  }
  if (decision) {
    approval.approved = decision.approved;
    if (typeof decision.reason === "string") approval.reason = decision.reason;
  }
  return approval;
}

/** options.runs → Map(start → messageId), checked. */
function runStarts(fn, runs) {
  const starts = new Map();
  (runs ?? []).forEach((run, k) => {
    if (!isObject(run) || !Number.isInteger(run.start) || run.start < 0 || typeof run.messageId !== "string" || run.messageId === "") {
      throw codedError("INVALID_ARGUMENT", `${fn}: options.runs[${k}] must be { start, messageId } (start: an index of agentMessages, messageId: a non-empty string), got ${describe(run) === "object" ? JSON.stringify(run) : describe(run)}`);
    }
    starts.set(run.start, run.messageId);
  });
  return starts;
}

/** toolCallId → item of a list option (requests, decisions, completed tool calls), checked. */
function byToolCall(fn, list, path) {
  const map = new Map();
  if (list === undefined) return map;
  if (!Array.isArray(list)) throw codedError("INVALID_ARGUMENT", `${fn}: ${path} must be an array, got ${describe(list)}`);
  list.forEach((item, k) => {
    if (!isObject(item) || typeof item.toolCallId !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${path}[${k}] must be an object with a string toolCallId, got ${describe(item)}`);
    map.set(item.toolCallId, item);
  });
  return map;
}

const TO_UI_MESSAGES_OPTIONS = {
  messageId: "function",
  runs: "array",
  pendingApprovals: "array",
  approvals: "object",
  sendReasoning: "boolean",
  toolOutput: "function",
  dynamicTools: "boolean",
  approvalSecret: "checked",
};

/**
 * An agent transcript as the `UIMessage[]` a `useChat` client that watched its runs live ends with (for
 * `useChat({ messages })` when a page loads): per exchange a user message (text, images as data: URLs) and the answer
 * as one assistant message, its steps joined with `step-start` parts, parts in their final states as
 * `toUIMessageStream` leaves them. Exchanges are told apart by `options.runs` (exact), else by the rule that a user
 * message right after tool results is steering and any other begins an exchange. Ids: `options.runs` for answers,
 * else `options.messageId`, else `user-<index>` / `assistant-<index>`. Spec: U-12.4.
 */
export function toUIMessages(agentMessages, options) {
  const fn = "toUIMessages";
  if (!Array.isArray(agentMessages)) throw codedError("INVALID_ARGUMENT", `${fn}: agentMessages must be an array of agent messages (agent.state.messages), got ${describe(agentMessages)}`);
  const opts = checkOptions(fn, options, TO_UI_MESSAGES_OPTIONS);
  const runs = runStarts(fn, opts.runs);
  const requests = byToolCall(fn, opts.approvals?.requests, "options.approvals.requests");
  for (const [id, request] of byToolCall(fn, opts.pendingApprovals, "options.pendingApprovals")) requests.set(id, request);
  const decisions = byToolCall(fn, opts.approvals?.decisions, "options.approvals.decisions");
  const completed = byToolCall(fn, opts.approvals?.completedTools, "options.approvals.completedTools");
  const sendReasoning = opts.sendReasoning !== false;
  const toolOutput = opts.toolOutput ?? defaultToolOutput;
  const dynamic = opts.dynamicTools === true;
  const approvalKey = opts.approvalSecret === undefined ? undefined : secretKey(fn, opts.approvalSecret);
  // U-12.5: with a secret, the approval id the stream gave (signed over the call as the part holds it).
  const approval = (part, toolName, decision) => {
    const id = part.toolCallId;
    const request = requests.get(id);
    const approvalId = approvalKey ? approvalToken(approvalKey, id, toolName, part.input, request?.expiresAt) : id;
    return approvalOf(id, request, decision, approvalId);
  };
  const idOf = (role, index, message) => {
    const id = (opts.messageId ?? defaultMessageId)({ role, index, message });
    if (typeof id !== "string" || id === "") throw codedError("INVALID_ARGUMENT", `${fn}: options.messageId must return a non-empty string, got ${describe(id)} for the ${role} message at ${index}`);
    return id;
  };

  const result = [];
  /** The answer being built: { message, step, steering } (step and steering count per run, as a response does). */
  let answer;
  /** The tool parts without a result yet: toolCallId → { part, toolName }. */
  const open = new Map();
  /** The recorded run the messages belong to: { messageId, begun } (begun: it has a model response or tool result). */
  let run;
  /** Where the exchange under way began (the index after the previous answer's last message). */
  let start = 0;
  let afterAnswer = 0;
  let lastRole;

  const settle = (part, toolName, ended) => {
    const id = part.toolCallId;
    const denial = ended.isError ? denialOf(ended.result, id) : undefined;
    const decision = decisions.get(id) ?? (denial ? { approved: false, ...denial } : undefined);
    if (denial) part.state = "output-denied";
    else if (ended.isError) {
      part.state = "output-error";
      part.errorText = resultText(ended.result);
    } else {
      part.state = "output-available";
      part.output = toolOutput(ended.result, { toolCallId: id, toolName });
    }
    if (decision) part.approval = approval(part, toolName, decision);
    open.delete(id);
  };

  const openAnswer = () => {
    const id = run ? run.messageId : idOf("assistant", start, agentMessages[start]);
    answer = { message: { id, role: "assistant", parts: [] }, step: 0, steering: 0 };
    result.push(answer.message);
  };

  agentMessages.forEach((m, i) => {
    if (runs.has(i)) {
      const messageId = runs.get(i);
      run = { messageId, begun: false };
      if (answer?.message.id === messageId) {
        // A run that continues the answer (its decisions, as `originalMessages` continues the client's message).
        answer.step = 0;
        answer.steering = 0;
      } else {
        answer = undefined;
        start = i;
      }
    }
    if (!isObject(m)) throw codedError("INVALID_ARGUMENT", `${fn}: agentMessages[${i}] must be an agent message object, got ${describe(m)}`);
    if (m.role === "user") {
      const steering = answer !== undefined && (run ? run.begun : lastRole === "toolResult");
      lastRole = "user";
      if (steering) {
        answer.steering += 1;
        answer.message.parts.push({ type: "steering-message", id: `${answer.message.id}-steering-${answer.steering}`, parts: userParts(m.content) });
        afterAnswer = i + 1;
        return;
      }
      if (answer !== undefined) {
        answer = undefined;
        start = afterAnswer;
      }
      result.push({ id: idOf("user", i, m), role: "user", parts: userParts(m.content) });
      return;
    }
    if (m.role === "toolResult") {
      const pending = open.get(m.toolCallId);
      if (answer === undefined || pending === undefined) return; // a result whose call this history does not show
      if (run) run.begun = true;
      lastRole = "toolResult";
      settle(pending.part, pending.toolName, { result: m, isError: m.isError === true });
      afterAnswer = i + 1;
      return;
    }
    if (m.role !== "assistant") return; // system messages (tool declarations) and custom roles: not shown
    if (run) run.begun = true;
    lastRole = "assistant";
    if (answer === undefined) openAnswer();
    answer.step += 1;
    const parts = answer.message.parts;
    parts.push({ type: "step-start" });
    (Array.isArray(m.content) ? m.content : []).forEach((block, j) => {
      if (block?.type === "text") {
        parts.push({ type: "text", text: typeof block.text === "string" ? block.text : "", ...signatureMeta({ textSignature: block.textSignature }), state: "done" });
      } else if (block?.type === "thinking" && sendReasoning) {
        const meta = signatureMeta({ thinkingSignature: block.thinkingSignature, redacted: block.redacted === true ? true : undefined });
        parts.push({ type: "reasoning", id: `${answer.step}-${j}`, text: typeof block.thinking === "string" ? block.thinking : "", ...meta, state: "done" });
      } else if (block?.type === "toolCall" && typeof block.id === "string") {
        const part = {
          type: dynamic ? "dynamic-tool" : `tool-${block.name}`,
          ...(dynamic ? { toolName: block.name } : {}),
          toolCallId: block.id,
          state: "input-available",
          input: block.arguments ?? {},
        };
        const meta = signatureMeta({ thoughtSignature: block.thoughtSignature });
        if (meta.providerMetadata) part.callProviderMetadata = meta.providerMetadata;
        parts.push(part);
        open.set(block.id, { part, toolName: block.name });
      }
    });
    afterAnswer = i + 1;
  });

  // Calls with no result in the transcript: ended in a batch that waits for approvals, waiting, or decided.
  for (const [id, { part, toolName }] of open) {
    const ended = completed.get(id);
    if (ended) settle(part, toolName, { result: ended.result, isError: ended.isError === true });
    else if (requests.has(id) || decisions.has(id)) {
      const decision = decisions.get(id);
      part.state = decision ? "approval-responded" : "approval-requested";
      part.approval = approval(part, toolName, decision);
    }
  }
  return result;
}
