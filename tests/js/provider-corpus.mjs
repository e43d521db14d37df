// The recorded provider streams of tests/fixtures/provider-corpus/ (issue 33), and how to compare ours with pi-ai 1.6.0
// on them: replay a stream's bytes through `streamBuiltin` and through the reference's own provider for the same wire
// format, then rewrite the reference's result by the documented differences (DOCUMENTED, each a README entry) before
// comparing. Shared by providers-corpus.test.mjs (the streams as recorded) and reliability-provider-fuzz.test.mjs
// (the streams mutated, truncated and split); holds no test of its own.
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { parseJsonWithRepair, parseToolCallArguments } from "@earendil-works/pi-ai/utils/json-parse";

export const dir = new URL("../fixtures/provider-corpus/", import.meta.url);
export const manifest = JSON.parse(readFileSync(new URL("manifest.json", dir), "utf8"));
/** Cut points: random sizes 1–64, plus every cut between `\r` and `\n` and inside the first 50 multi-byte characters. */
export function cuts(bytes, random) {
  const at = new Set();
  for (let i = 0; i < bytes.length; i += 1 + Math.floor(random() * 64)) at.add(i);
  let inside = 0;
  for (let i = 1; i < bytes.length; i++) {
    if (bytes[i - 1] === 13 && bytes[i] === 10) at.add(i);
    else if ((bytes[i] & 0xc0) === 0x80 && inside < 50) (at.add(i), inside++);
  }
  at.delete(0);
  const sorted = [...at].sort((a, b) => a - b);
  const chunks = [];
  let from = 0;
  for (const to of sorted) (chunks.push(bytes.subarray(from, to)), (from = to));
  chunks.push(bytes.subarray(from));
  return chunks;
}

/** A fetch that answers every request with `chunks` as an SSE body (exact chunk boundaries, no network). */
export function replay(chunks, requests) {
  return async (url, init) => {
    requests.push({ url: String(url), body: init?.body });
    let i = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (i < chunks.length) controller.enqueue(chunks[i++].slice());
        else controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

export function model(entry) {
  const base = {
    "openai-completions": { provider: "openai", id: "gpt-4o", baseUrl: "https://api.openai.com/v1" },
    "openai-responses": { provider: "openai", id: "gpt-4.1", baseUrl: "https://api.openai.com/v1" },
    "anthropic-messages": { provider: "anthropic", id: "claude-sonnet-4-5", baseUrl: "https://api.anthropic.com" },
    "google-generative-ai": { provider: "google", id: "gemini-2.5-flash", baseUrl: "https://generativelanguage.googleapis.com/v1beta" },
  }[entry.api];
  return {
    name: entry.name, api: entry.api, ...base, reasoning: false, input: ["text"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, contextWindow: 200000, maxTokens: 8000, ...entry.model,
  };
}

// One tool without parameters (the recordings' parameterless calls name it). The reference reads `context.tools`;
// ours declares tools by system messages (§3.4), as the agent loop sends them.
const tool = { name: "weather", description: "Weather", parameters: { type: "object", properties: {} } };
const user = { role: "user", content: "Go.", timestamp: 1 };
export const theirContext = { systemPrompt: "You are terse.", messages: [user], tools: [tool] };
export const ourContext = { messages: [{ role: "system", content: "You are terse.", toolsAdded: [tool], timestamp: 0 }, user] };

const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** Events as comparable rows, and the final message without its timestamp. */
export async function run(stream) {
  const events = [];
  for await (const e of stream) {
    const row = { type: e.type };
    if ("contentIndex" in e) row.i = e.contentIndex;
    if ("delta" in e) row.delta = e.delta;
    if ("content" in e) row.content = e.content;
    if (e.type === "toolcall_end") row.toolCall = clone(e.toolCall);
    if ("reason" in e) row.reason = e.reason;
    if (e.type === "error") row.errorMessage = e.error.errorMessage;
    events.push(row);
  }
  const { timestamp, durationMs, ...message } = clone(await stream.result());
  return sameIds({ events, message });
}

/** Gemini's made-up tool-call ids (`<name>_<Date.now()>_<counter>`) differ by clock and counter: one stable form. */
function sameIds(result) {
  return JSON.parse(JSON.stringify(result).replace(/"id":"((?:[^"\\]|\\.)*?)_\d{13}_\d+"/g, '"id":"$1_<generated>"'));
}

/**
 * `chunks` through the reference's provider (or `theirChunks`, where the reference is to read other bytes) and through
 * `ours.streamBuiltin`: `{ theirs, mine }` as `run` gives them.
 */
export async function both(ours, entry, chunks, theirChunks = chunks) {
  const requests = [];
  const key = { apiKey: "sk-corpus", maxRetries: 0 };
  const reference = await import(`@earendil-works/pi-ai/api/${entry.api}`);
  const theirs = await run(reference.streamSimple(model(entry), theirContext, { ...key, fetch: replay(theirChunks, requests) }));
  const mine = await run(ours.streamBuiltin(model(entry), ourContext, { ...key, fetch: replay(chunks, requests) }));
  return { theirs, mine };
}

// ---------------------------------------------------------------------------------------------------------------
// The documented differences: each rewrites the reference's result into ours where the difference applies, and
// says in which README entry the reason is. `applies(entry, sse)` limits it to the streams it is about.
// ---------------------------------------------------------------------------------------------------------------

/**
 * The payloads of the stream's `data:` lines, in order, as the providers read them: JSON, or JSON after the repair
 * pass (P-6.3.2), up to the first line that is neither (where a stream ends with `Invalid JSON`); `[DONE]` is skipped.
 */
const payloads = (sse) => {
  const out = [];
  for (const [, data] of sse.matchAll(/^data: ?(.*)$/gm)) {
    if (data.trim() === "[DONE]") continue;
    try {
      out.push(parseJsonWithRepair(data));
    } catch {
      break;
    }
  }
  return out;
};
/** Every tool call of a result (events and message). */
const toolCalls = (r) => [...r.events.filter((e) => e.type === "toolcall_end").map((e) => e.toolCall), ...r.message.content.filter((b) => b.type === "toolCall")];
const rowsAndMessage = (r) => [...r.events, r.message];
/** The arguments text a result's tool call `i` streamed (its `toolcall_delta`s). */
const argumentsText = (r, i) => r.events.filter((e) => e.type === "toolcall_delta" && e.i === i).map((e) => e.delta).join("");
/** P-6.4.3's text for arguments that are JSON but not an object (pi-ai 1.6.0 says `Tool arguments must be …`). */
export const NOT_AN_OBJECT = "Tool call arguments must be a JSON object";
/**
 * A tool call's final arguments as ours gives them at `toolcall_end` (P-6.4.3): pi-ai's own final parse (JSON.parse,
 * then once more after its repair pass), in ours' words for a value that is not an object; `null` for the one tool
 * here (it accepts `{}`) is `{}`.
 */
export function finalArguments(text, name) {
  // Groq's `null` for the tool without parameters (`null-arguments`).
  if (text.trim() === "null" && name === tool.name) return { arguments: {} };
  const { arguments: args, argumentsError } = parseToolCallArguments(text);
  if (argumentsError === undefined) return { arguments: args };
  return { arguments: args, argumentsError: argumentsError.replace(/^Tool arguments must be a JSON object\n/, `${NOT_AN_OBJECT}\n`) };
}

// `rewrite(reference result, {entry, sse})` → the result ours gives (only where the difference applies, `applies(entry,
// sse)`);
// `normalize` (rarely) is applied to both sides instead, for what neither side chooses (the engine's wording).
export const DOCUMENTED = [
  {
    id: "null-arguments", readme: "Tool calls with `null` arguments",
    rewrite(r) {
      for (const call of toolCalls(r)) {
        if (call.name === tool.name && call.argumentsError === "Tool arguments must be a JSON object\n\nReceived arguments:\nnull") {
          delete call.argumentsError;
          call.arguments = {};
        }
      }
      return r;
    },
  },
  {
    id: "reasoning-signature-kept", readme: "OpenRouter's reasoning signature",
    applies: (entry) => entry.api === "openai-completions",
    rewrite(r, { sse }) {
      const signature = payloads(sse)
        .flatMap((p) => p.choices?.[0]?.delta?.reasoning_details ?? [])
        .find((d) => d?.type === "reasoning.text" && d.text === undefined && typeof d.signature === "string" && d.signature)?.signature;
      if (!signature) return r;
      for (const block of r.message.content.filter((b) => b.type === "thinking")) {
        const details = JSON.parse(block.thinkingSignature || "null");
        const last = Array.isArray(details) ? details.findLast((d) => d.type === "reasoning.text") : undefined;
        if (last && !last.signature) {
          delete last.signature;
          last.signature = signature;
          block.thinkingSignature = JSON.stringify(details);
        }
      }
      return r;
    },
  },
  {
    id: "chat-refusal-is-text", readme: "Chat Completions refusals",
    applies: (entry) => entry.api === "openai-completions",
    rewrite(r, { sse }) {
      const refusals = payloads(sse).map((p) => p.choices?.[0]?.delta?.refusal).filter((t) => typeof t === "string" && t !== "");
      if (refusals.length === 0 || r.message.content.length > 0) return r;
      const text = refusals.join("");
      const at = r.events.findIndex((e) => e.type === "done" || e.type === "error");
      r.events.splice(at, 0, { type: "text_start", i: 0 }, ...refusals.map((delta) => ({ type: "text_delta", i: 0, delta })), { type: "text_end", i: 0, content: text });
      r.message.content = [{ type: "text", text }];
      return r;
    },
  },
  {
    id: "mistral-content-parts", readme: "Mistral's content parts",
    applies: (entry) => entry.api === "openai-completions",
    // The reference writes each part as `[object Object]` text; ours reads thinking and text parts (Chat keeps both
    // blocks open to the end, then ends them in content order).
    rewrite(r, { sse }) {
      const deltas = payloads(sse).flatMap((p) => {
        const content = p.choices?.[0]?.delta?.content;
        if (!Array.isArray(content)) return [];
        return content.flatMap((part) =>
          part.type === "text" ? [["text", part.text]] : part.type === "thinking" ? (part.thinking ?? []).map((t) => ["thinking", t.text]) : []);
      }).filter(([, text]) => text);
      if (deltas.length === 0) return r;
      const blocks = [];
      const events = [];
      for (const [kind, delta] of deltas) {
        let i = blocks.findIndex((b) => b.type === kind);
        if (i < 0) (i = blocks.push({ type: kind, [kind]: "" }) - 1), events.push({ type: `${kind}_start`, i });
        blocks[i][kind] += delta;
        events.push({ type: `${kind}_delta`, i, delta });
      }
      blocks.forEach((b, i) => events.push({ type: `${b.type}_end`, i, content: b[b.type] }));
      const at = r.events.findIndex((e) => e.type.endsWith("_start") && e.type !== "start");
      const end = r.events.findIndex((e) => e.type === "done" || e.type === "error");
      r.events.splice(at, end - at, ...events);
      r.message.content = blocks;
      return r;
    },
  },
  {
    id: "redacted-thinking-empty", readme: "Redacted thinking",
    applies: (entry) => entry.api === "anthropic-messages",
    rewrite(r) {
      const redacted = new Set(r.message.content.flatMap((b, i) => (b.redacted ? [i] : [])));
      for (const i of redacted) r.message.content[i].thinking = "";
      for (const e of r.events) if (e.type === "thinking_end" && redacted.has(e.i)) e.content = "";
      return r;
    },
  },
  {
    id: "error-ends-blocks", readme: "An error in the middle of a stream",
    rewrite(r) {
      const last = r.events.at(-1);
      if (last?.type !== "error") return r;
      // The provider's own message, where the reference shows the error event as JSON (read as ours reads data, P-6.3.2).
      let message = last.errorMessage;
      try {
        const parsed = parseJsonWithRepair(message);
        if (typeof parsed?.error?.message === "string") message = parsed.error.message;
      } catch {}
      last.errorMessage = r.message.errorMessage = message;
      // Every started block ends before the error (P-6.1.4), in content order.
      const ended = new Set(r.events.filter((e) => e.type.endsWith("_end")).map((e) => e.i));
      const ends = r.message.content.flatMap((b, i) => {
        if (ended.has(i) || !r.events.some((e) => e.type.endsWith("_start") && e.i === i)) return [];
        if (b.type === "text") return [{ type: "text_end", i, content: b.text }];
        if (b.type === "thinking") return [{ type: "thinking_end", i, content: b.thinking }];
        // A tool call ended here gets its final arguments (P-6.4.3), where the reference keeps the partial ones.
        Object.assign(b, finalArguments(argumentsText(r, i), b.name));
        return [{ type: "toolcall_end", i, toolCall: clone(b) }];
      });
      r.events.splice(r.events.length - 1, 0, ...ends);
      return r;
    },
  },
  {
    id: "cut-call-ends-with-error", readme: "A tool call cut off by the token limit",
    rewrite(r) {
      const done = r.events.at(-1);
      if (done?.type !== "done") return r;
      const ended = new Set(r.events.filter((e) => e.type === "toolcall_end").map((e) => e.i));
      r.message.content.forEach((block, i) => {
        if (block.type !== "toolCall" || ended.has(i)) return;
        const final = finalArguments(argumentsText(r, i), block.name);
        if (final.argumentsError === undefined) return;
        Object.assign(block, final);
        r.events.splice(r.events.length - 1, 0, { type: "toolcall_end", i, toolCall: clone(block) });
      });
      return r;
    },
  },
  {
    id: "responses-error-code", readme: "Responses errors name their code",
    applies: (entry) => entry.api === "openai-responses",
    rewrite(r, { sse }) {
      const error = payloads(sse).find((p) => p.type === "error");
      const fields = error && (error.error ?? error);
      if (!fields?.code) return r;
      const text = `Error Code ${fields.code}: ${fields.message}`;
      for (const row of rowsAndMessage(r)) if (row.errorMessage === fields.message) row.errorMessage = text;
      return r;
    },
  },
  {
    id: "responses-done-no-delta", readme: "Responses arguments that arrive only whole",
    applies: (entry) => entry.api === "openai-responses",
    rewrite(r, { sse }) {
      if (payloads(sse).some((p) => p.type === "response.function_call_arguments.delta")) return r;
      r.events = r.events.filter((e) => e.type !== "toolcall_delta");
      return r;
    },
  },
  {
    id: "responses-block-closes-early", readme: "Responses blocks that overlap",
    applies: (entry) => entry.api === "openai-responses",
    // P-6.1.4: a thinking or text block closes when a block of another kind starts; the reference keeps a reasoning
    // item open until its own output_item.done, even after the message began (OpenRouter sends them so).
    rewrite(r) {
      for (let at = 0; at < r.events.length; at++) {
        const end = r.events[at];
        if (end.type !== "thinking_end" && end.type !== "text_end") continue;
        const start = r.events.findIndex((e) => e.type === end.type.replace("_end", "_start") && e.i === end.i);
        const other = r.events.findIndex((e, k) => k > start && k < at && e.type.endsWith("_start") && e.type.split("_")[0] !== end.type.split("_")[0]);
        if (start >= 0 && other >= 0) r.events.splice(other, 0, ...r.events.splice(at, 1));
      }
      return r;
    },
  },
  {
    id: "responses-no-empty-text", readme: "Responses messages without text",
    applies: (entry) => entry.api === "openai-responses",
    rewrite(r) {
      for (let i = r.message.content.length - 1; i >= 0; i--) {
        const b = r.message.content[i];
        if (b.type !== "text" || b.text !== "" || r.events.some((e) => e.type === "text_delta" && e.i === i)) continue;
        r.message.content.splice(i, 1);
        r.events = r.events.filter((e) => e.i !== i).map((e) => (e.i > i ? { ...e, i: e.i - 1 } : e));
      }
      return r;
    },
  },
  {
    id: "gemini-response-model", readme: "Gemini's `responseModel`",
    applies: (entry) => entry.api === "google-generative-ai",
    rewrite(r, { sse }) {
      const version = payloads(sse).map((p) => p.modelVersion).filter(Boolean).at(-1);
      if (version) r.message.responseModel = version;
      return r;
    },
  },
  {
    id: "gemini-streamed-arguments", readme: "Gemini 3's streamed function-call arguments",
    applies: (entry, sse) => entry.api === "google-generative-ai" && sse.includes('"willContinue":true'),
    // Both sides without their tool calls (and block indices, which the reference's invented calls shift): the
    // rest must still match; ours' calls are checked exactly by providers-corpus-fixes.test.mjs.
    normalize(r) {
      r.events = r.events.filter((e) => !e.type.startsWith("toolcall_")).map(({ i, ...e }) => e);
      r.message.content = r.message.content.filter((b) => b.type !== "toolCall");
      return r;
    },
  },
  {
    id: "engine-parse-message", readme: "(none: the JS engine's own wording)", engine: true,
    // Our argument parser words its errors as V8 on Node 22 does (`… (line 1 column 3)`); the reference's are the
    // running engine's own: without the position on Node 20, and in older words altogether on Node 18's V8 10
    // (`Unexpected token { in JSON at position 2`), where only the text after the message is compared.
    normalize(r) {
      const old = Number(process.versions.node.split(".")[0]) < 20;
      for (const call of toolCalls(r)) {
        // Not an engine's words: arguments that are JSON but not an object (P-6.4.3).
        if (!call.argumentsError || /^Tool (call )?arguments must be a JSON object\n/.test(call.argumentsError)) continue;
        call.argumentsError = old
          ? call.argumentsError.replace(/^[^\n]*/, "<the engine's JSON.parse message>")
          : call.argumentsError.replace(/ \(line \d+ column \d+\)/, "");
      }
      return r;
    },
  },
];

const sseCache = new Map();
export function readSse(entry) {
  if (!sseCache.has(entry.name)) sseCache.set(entry.name, readFileSync(new URL(entry.file, dir), "utf8"));
  return sseCache.get(entry.name);
}

/**
 * The two results to compare: the reference's rewritten by each documented difference that applies (the normalisations
 * on both sides), and the ids of those that changed something. `sse` is the stream the reference was given (default:
 * the recording); `rules`, the differences to apply (default: DOCUMENTED).
 */
export function explain(entry, theirs, mine, sse = readSse(entry), rules = DOCUMENTED) {
  let expected = clone(theirs);
  let actual = clone(mine);
  const used = [];
  for (const d of rules) {
    if (d.applies && !d.applies(entry, sse)) continue;
    const before = JSON.stringify([expected, actual]);
    if (d.rewrite) expected = d.rewrite(expected, { entry, sse });
    if (d.normalize) (expected = d.normalize(expected)), (actual = d.normalize(actual));
    // A normalisation counts as shown only where it made the two sides meet.
    const changed = d.rewrite ? JSON.stringify([expected, actual]) !== before : !isDeepStrictEqual(clone(JSON.parse(before)[0]), clone(JSON.parse(before)[1])) && JSON.stringify([expected, actual]) !== before;
    if (changed) used.push(d.id);
  }
  return { expected, actual, used };
}

/** The first place two values differ, as a path and both sides. */
export function firstDifference(a, b, path = "") {
  if (isDeepStrictEqual(a, b)) return undefined;
  if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return { path, ours: a, reference: b };
}
