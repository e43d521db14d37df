// The bench's scripted stream function: the caller's code, identical for both implementations.
//
// A reply is a plan built once, outside the timed region: its text chunks and argument fragments are
// precomputed strings. Streaming follows what pi-ai's real providers do: one live `partial` message
// object carried by every event (no per-event copies), text blocks grown with `+=`, and tool-call
// arguments maintained with pi-ai's `ToolCallArgumentsStream` (the parser its faux and real providers
// use), whose `append()` returns a fresh partial-arguments object whenever they changed; at the end
// `finish()` parses the full text once. Only the event stream class differs: each side gets its own
// implementation's `createAssistantMessageEventStream`, as its users would.
//
// Pacing: the producer starts on a macrotask (like a response arriving) and yields a macrotask
// (setImmediate) after every `burst` events — a network read carrying several SSE events — so the
// consumer keeps up with the producer instead of reading one huge backlog.

// pi-ai's parser, loaded on demand (`loadArgumentsParser()`), so a child process that measures our
// package alone (cold start, memory) never loads pi-ai; only tool-call plans need it.
let ToolCallArgumentsStream = null;
export async function loadArgumentsParser() {
  ToolCallArgumentsStream ??= (await import("@earendil-works/pi-ai")).ToolCallArgumentsStream;
}

const tick = () => new Promise((r) => setImmediate(r));

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

/**
 * A stream function whose reply is `pieces` as text deltas of one live partial, all pushed by one call of `defer`
 * (default: at once, inside the stream function; pass `setImmediate` for a reply from a macrotask). The small
 * reply of bench/long-session.mjs and bench/fixed-cost.mjs.
 */
export function textReplyStreamFn(createStream, pieces, defer = (f) => f()) {
  return (m) => {
    const stream = createStream();
    defer(() => {
      const live = { type: "text", text: "" };
      const partial = { role: "assistant", content: [live], api: m.api, provider: m.provider, model: m.id, usage: zeroUsage(), stopReason: "stop", timestamp: Date.now() };
      stream.push({ type: "start", partial });
      stream.push({ type: "text_start", contentIndex: 0, partial });
      for (const piece of pieces) {
        live.text += piece;
        stream.push({ type: "text_delta", contentIndex: 0, delta: piece, partial });
      }
      stream.push({ type: "text_end", contentIndex: 0, content: live.text, partial });
      stream.push({ type: "done", reason: "stop", message: partial });
      stream.end();
    });
    return stream;
  };
}

export function model() {
  return {
    id: "bench-1",
    name: "Bench Model",
    api: "bench",
    provider: "bench",
    baseUrl: "http://127.0.0.1:0",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 1_000_000,
  };
}

const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);
export const convertToLlm = (messages) => messages.filter((m) => LLM_ROLES.has(m.role));
export const userMessage = (s) => ({ role: "user", content: s, timestamp: Date.now() });

/** Splits `s` into pieces of `size` characters. */
export function chunks(s, size) {
  const out = new Array(Math.ceil(s.length / size));
  for (let i = 0, k = 0; i < s.length; i += size, k++) out[k] = s.slice(i, i + size);
  return out;
}

// ---- plans

/** A text reply streamed as the given pieces. */
export const textPlan = (pieces) => ({ blocks: [{ type: "text", pieces }], stopReason: "stop" });

/**
 * A reply with tool calls: [{ id, name, pieces }] where pieces are the argument JSON fragments, or
 * `{ text, size }` to cut `text` into `size`-character fragments while streaming (for megabytes of
 * arguments: a precomputed array of 262,144 strings per side would stay live during the run and make
 * every major GC, and so the 4 MiB run, slower for reasons that are not the loop's).
 */
export const toolPlan = (calls) => ({
  blocks: calls.map((c) => ({ type: "toolCall", id: c.id, name: c.name, pieces: c.pieces })),
  stopReason: "toolUse",
});

/**
 * A stream function replaying `plans` in order (call i gets plans[i]; past the end, the last one).
 * `createStream` is the implementation's createAssistantMessageEventStream.
 */
export function scriptedStreamFn(createStream, plans, { burst = 32 } = {}) {
  let calls = 0;
  const streamFn = (m, _context, options) => {
    const plan = plans[Math.min(calls++, plans.length - 1)];
    const stream = createStream();
    produce(stream, plan, m, options?.signal, burst).catch((err) => {
      stream.push({ type: "error", reason: "error", error: { role: "assistant", content: [], stopReason: "error", errorMessage: String(err), timestamp: Date.now() } });
      stream.end();
    });
    return stream;
  };
  streamFn.reset = () => {
    calls = 0;
  };
  return streamFn;
}

function* fragments(pieces) {
  if (Array.isArray(pieces)) {
    yield* pieces;
    return;
  }
  const { text, size } = pieces;
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function produce(stream, plan, m, signal, burst) {
  await tick();
  const partial = {
    role: "assistant",
    content: [],
    api: m.api,
    provider: m.provider,
    model: m.id,
    usage: zeroUsage(),
    stopReason: "pending",
    timestamp: Date.now(),
  };
  let n = 0;
  // Yields a macrotask every `burst` events.
  const emit = async (event) => {
    stream.push(event);
    if (++n % burst === 0) await tick();
  };
  await emit({ type: "start", partial });
  for (let i = 0; i < plan.blocks.length; i++) {
    if (signal?.aborted) break;
    const block = plan.blocks[i];
    if (block.type === "text") {
      const live = { type: "text", text: "" };
      partial.content.push(live);
      await emit({ type: "text_start", contentIndex: i, partial });
      for (const piece of block.pieces) {
        live.text += piece;
        await emit({ type: "text_delta", contentIndex: i, delta: piece, partial });
      }
      await emit({ type: "text_end", contentIndex: i, content: live.text, partial });
    } else {
      const live = { type: "toolCall", id: block.id, name: block.name, arguments: {} };
      partial.content.push(live);
      await emit({ type: "toolcall_start", contentIndex: i, partial });
      if (ToolCallArgumentsStream === null) throw new Error("bench/faux.mjs: call loadArgumentsParser() first");
      const args = new ToolCallArgumentsStream();
      for (const piece of fragments(block.pieces)) {
        live.arguments = args.append(piece);
        await emit({ type: "toolcall_delta", contentIndex: i, delta: piece, partial });
      }
      Object.assign(live, args.finish());
      await emit({ type: "toolcall_end", contentIndex: i, toolCall: live, partial });
    }
  }
  partial.stopReason = plan.stopReason;
  stream.push({ type: "done", reason: plan.stopReason, message: partial });
  stream.end();
}
