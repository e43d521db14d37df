// Test doubles for the loop: a scripted, realistically streaming provider and small helpers.
// Written for these tests (pi-ai's faux provider is deliberately not used).
import { createAssistantMessageEventStream } from "./impl.mjs";

// ---------------------------------------------------------------------------------------------
// Messages, content, models
// ---------------------------------------------------------------------------------------------

export function zeroUsage() {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

export const text = (s) => ({ type: "text", text: s });
export const thinking = (s) => ({ type: "thinking", thinking: s });
export const toolCall = (id, name, args = {}) => ({ type: "toolCall", id, name, arguments: args });

/** A scripted assistant reply. `content`: string, block or block array. */
export function assistant(content, options = {}) {
  const blocks = typeof content === "string" ? [text(content)] : Array.isArray(content) ? content : [content];
  const stopReason = options.stopReason ?? (blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop");
  return {
    role: "assistant",
    content: blocks,
    api: "faux",
    provider: "faux",
    model: "faux-1",
    usage: options.usage ?? zeroUsage(),
    stopReason,
    ...(options.errorMessage === undefined ? {} : { errorMessage: options.errorMessage }),
    timestamp: Date.now(),
  };
}

export function model(overrides = {}) {
  return {
    id: "faux-1",
    name: "Faux Model",
    api: "faux",
    provider: "faux",
    baseUrl: "http://localhost:0",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 4096,
    ...overrides,
  };
}

const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);
/** Identity converter: keeps system/user/assistant/toolResult messages (same objects). */
export function convertToLlm(messages) {
  return messages.filter((m) => LLM_ROLES.has(m.role));
}

export const userMessage = (s, timestamp = Date.now()) => ({ role: "user", content: s, timestamp });
export const systemMessage = (content, extra = {}) => ({ role: "system", content, timestamp: Date.now(), ...extra });

/** A tool with an empty object schema unless overridden. */
export function tool(name, execute, extra = {}) {
  return {
    name,
    label: name,
    description: `${name} tool`,
    parameters: { type: "object", properties: {} },
    execute: execute ?? (async () => ({ content: [text(`${name} ok`)], details: {} })),
    ...extra,
  };
}

export const okResult = (s = "ok", extra = {}) => ({ content: [text(s)], details: {}, ...extra });

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `body(clock)` with `performance.now()` (what both libraries time tool calls with) reading a virtual clock that
 * only `clock.advance(ms)` moves, so a duration is exact and no assertion depends on how fast the machine is.
 */
export async function withVirtualClock(body) {
  const real = Object.getOwnPropertyDescriptor(performance, "now");
  let now = 1_000;
  const clock = { advance: (ms) => void (now += ms) };
  // Defined, not assigned: on Node 18 `now` is a non-writable property of Performance.prototype.
  Object.defineProperty(performance, "now", { value: () => now, configurable: true, writable: true });
  try {
    return await body(clock);
  } finally {
    if (real) Object.defineProperty(performance, "now", real);
    else delete performance.now;
  }
}

/** Text of the first text block of a tool result / message content. */
export function firstText(x) {
  const content = x?.content ?? x;
  if (typeof content === "string") return content;
  return content?.find?.((b) => b.type === "text")?.text;
}

/** All text of a provider request (roles and contents), for "request N contains X" checks. */
export function requestText(call) {
  return JSON.stringify(call.messages);
}

// ---------------------------------------------------------------------------------------------
// Event labels and collection
// ---------------------------------------------------------------------------------------------

export function label(e) {
  if (e.type.startsWith("message_")) return `${e.type}:${e.message?.role}`;
  if (e.type.startsWith("tool_execution_")) return `${e.type}:${e.toolCallId}`;
  return e.type;
}

const isUpdate = (e) => e.type === "message_update" || e.type === "tool_execution_update";

/** Records events (as an awaited sink for runAgentLoop, or fed from a stream). */
export function recorder(onEvent) {
  const events = [];
  const emit = async (e) => {
    events.push(e);
    if (onEvent) await onEvent(e);
  };
  return {
    events,
    emit,
    labels: ({ updates = false } = {}) => events.filter((e) => updates || !isUpdate(e)).map(label),
    ofType: (type) => events.filter((e) => e.type === type),
  };
}

/** Drains a loop stream; returns { events, labels(), result }. */
export async function collect(stream, onEvent) {
  const rec = recorder(onEvent);
  for await (const e of stream) await rec.emit(e);
  const result = await stream.result();
  return { ...rec, result };
}

/** A queue getter (mode "all" by default) that counts its polls. */
export function queue(initial = [], { mode = "all" } = {}) {
  const items = [...initial];
  const q = {
    items,
    polls: 0,
    push: (...m) => items.push(...m),
    get: async () => {
      q.polls++;
      return mode === "all" ? items.splice(0) : items.splice(0, 1);
    },
  };
  return q;
}

// ---------------------------------------------------------------------------------------------
// Faux stream
// ---------------------------------------------------------------------------------------------

/** Best-effort parse of a JSON prefix: at least `{}`. */
export function parsePartialJson(textSoFar) {
  for (let end = textSoFar.length; end >= 0; end--) {
    const prefix = textSoFar.slice(0, end);
    const stack = [];
    let inString = false;
    let escaped = false;
    for (const ch of prefix) {
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === "\\") escaped = true;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === "{") stack.push("}");
      else if (ch === "[") stack.push("]");
      else if (ch === "}" || ch === "]") stack.pop();
    }
    if (escaped) continue;
    const candidate = prefix + (inString ? '"' : "") + stack.reverse().join("");
    try {
      const value = JSON.parse(candidate);
      if (value && typeof value === "object" && !Array.isArray(value)) return value;
    } catch {
      // try a shorter prefix
    }
  }
  return {};
}

function chunkText(s, sizes) {
  const chunks = [];
  let i = 0;
  let k = 0;
  while (i < s.length) {
    const n = sizes[k++ % sizes.length];
    chunks.push(s.slice(i, i + n));
    i += n;
  }
  return chunks;
}

/**
 * Scripted provider. Replies: assistant messages or (context, options, index) => message (may be async or throw).
 * Options: delayMs (per chunk; 0 = one macrotask), chunkSizes (default [3, 4]), finalCopy (done/error carry a
 * shallow copy of the partial instead of the partial itself).
 * Returns { streamFn, calls: [{model, context, options, messages, signalAbortedAtCall}], push(...replies) }.
 */
export function createFaux(replies = [], { delayMs = 0, chunkSizes = [3, 4], finalCopy = false } = {}) {
  const pending = [...replies];
  const calls = [];
  const tick = () => new Promise((r) => (delayMs > 0 ? setTimeout(r, delayMs) : setImmediate(r)));

  async function produce(stream, reply, call) {
    const { model: m, context, options } = call;
    const signal = options?.signal;
    await tick();
    const partial = {
      role: "assistant",
      content: [],
      api: m?.api,
      provider: m?.provider,
      model: m?.id,
      usage: zeroUsage(),
      stopReason: "pending",
      timestamp: Date.now(),
    };
    const finish = (event) => {
      stream.push(event);
      stream.end();
    };
    const failEarly = (reason, errorMessage) =>
      finish({ type: "error", reason, error: { ...partial, stopReason: reason, errorMessage } });
    if (reply === undefined) return failEarly("error", "No more faux responses queued");
    let message;
    try {
      message = typeof reply === "function" ? await reply(context, options, call.index) : reply;
    } catch (err) {
      return failEarly("error", err instanceof Error ? err.message : String(err));
    }
    const aborted = () => {
      if (!signal?.aborted) return false;
      partial.stopReason = "aborted";
      partial.errorMessage = "Request was aborted";
      finish({ type: "error", reason: "aborted", error: finalCopy ? { ...partial } : partial });
      return true;
    };
    if (aborted()) return;
    stream.push({ type: "start", partial });
    await tick();
    if (aborted()) return;
    for (let i = 0; i < message.content.length; i++) {
      const block = message.content[i];
      if (block.type === "text" || block.type === "thinking") {
        const key = block.type === "text" ? "text" : "thinking";
        const live = { ...block, [key]: "" };
        partial.content.push(live);
        stream.push({ type: `${key}_start`, contentIndex: i, partial });
        for (const chunk of chunkText(block[key], chunkSizes)) {
          await tick();
          if (aborted()) return;
          live[key] += chunk;
          stream.push({ type: `${key}_delta`, contentIndex: i, delta: chunk, partial });
        }
        await tick();
        if (aborted()) return;
        stream.push({ type: `${key}_end`, contentIndex: i, content: block[key], partial });
      } else if (block.type === "toolCall") {
        const live = { type: "toolCall", id: block.id, name: block.name, arguments: {} };
        partial.content.push(live);
        stream.push({ type: "toolcall_start", contentIndex: i, partial });
        const json = JSON.stringify(block.arguments ?? {});
        let acc = "";
        for (const chunk of chunkText(json, chunkSizes)) {
          await tick();
          if (aborted()) return;
          acc += chunk;
          live.arguments = parsePartialJson(acc);
          stream.push({ type: "toolcall_delta", contentIndex: i, delta: chunk, partial });
        }
        await tick();
        if (aborted()) return;
        live.arguments = JSON.parse(json);
        for (const [k, v] of Object.entries(block)) if (!(k in live)) live[k] = v;
        stream.push({ type: "toolcall_end", contentIndex: i, toolCall: live, partial });
      } else {
        partial.content.push(block);
      }
    }
    await tick();
    if (aborted()) return;
    partial.usage = message.usage ?? zeroUsage();
    partial.stopReason = message.stopReason;
    if (message.errorMessage !== undefined) partial.errorMessage = message.errorMessage;
    const final = finalCopy ? { ...partial } : partial;
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      finish({ type: "error", reason: message.stopReason, error: final });
    } else {
      finish({ type: "done", reason: message.stopReason, message: final });
    }
  }

  const faux = {
    calls,
    push: (...r) => pending.push(...r),
    get remaining() {
      return pending.length;
    },
    streamFn(model, context, options) {
      const call = {
        index: calls.length,
        model,
        context,
        options,
        messages: [...(context?.messages ?? [])],
        signalAbortedAtCall: options?.signal?.aborted === true,
      };
      calls.push(call);
      const stream = createAssistantMessageEventStream();
      const reply = pending.shift();
      produce(stream, reply, call).catch((err) => {
        stream.push({
          type: "error",
          reason: "error",
          error: { ...assistant([], { stopReason: "error" }), errorMessage: String(err) },
        });
      });
      return stream;
    },
  };
  return faux;
}

/** Base loop config with the faux converter. */
export function config(extra = {}) {
  return { model: model(), convertToLlm, ...extra };
}
