// The wire-format test driver: drives a wire format over an SSE fixture the way driver.js does (byte chunks of random
// sizes → SseDecoder → JSON → mapper → Assembler → applyOps) and returns the final message and the event names
// (`start` first).

import assert from "node:assert/strict";
import { SseDecoder } from "../../pkg-template/providers/sse.js";
import { mapperFor, onUnparsed } from "../../pkg-template/providers/index.js";
import { parseData } from "../../pkg-template/providers/json.js";
import { Assembler, applyOps } from "../../pkg-template/providers/assemble.js";

const MASK = (1n << 64n) - 1n;
const MUL = 6364136223846793005n;
const ADD = 1442695040888963407n;

/** Splits `bytes` into chunks of 1..=23 bytes chosen by a 64-bit LCG seeded with `seed` (reproducible). */
function chunks(bytes, seed) {
  let state = (BigInt(seed) * MUL + ADD) & MASK;
  const out = [];
  for (let at = 0; at < bytes.length; ) {
    state = (state * MUL + ADD) & MASK;
    const size = Number((state >> 33n) % 23n) + 1;
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

/**
 * The SSE events of `sse`, fed to an `SseDecoder` in the chunks `seed` picks.
 * @param {string} sse @param {number} seed
 * @returns {{event: string | undefined, data: string}[]}
 */
export function decode(sse, seed) {
  const decoder = new SseDecoder();
  const events = [];
  for (const chunk of chunks(new TextEncoder().encode(sse), seed)) decoder.push(chunk, events);
  decoder.finish(events);
  return events;
}

/** The message the driver starts with. @param {object} model */
export function initialMessage(model) {
  return {
    role: "assistant",
    content: [],
    api: model?.api ?? null,
    provider: model?.provider ?? null,
    model: model?.id ?? null,
    usage: {
      input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "pending",
  };
}

/** One run: the final message, the event names (`start` first) and the events themselves. */
export function runOnce(format, model, options, sse, seed) {
  const input = { model, messages: [], options, apiKey: "k" };
  const mapper = mapperFor(format, input);
  const asm = Assembler.forModel(model, model?.api === "openai-completions");
  for (const event of decode(sse, seed)) {
    if (asm.finished()) break;
    const data = parseData(event.data);
    if (data !== undefined) mapper.onEvent(event.event, data, asm);
    else onUnparsed(mapper, event.event, event.data, asm);
  }
  if (!asm.finished()) mapper.onEnd(asm);
  const message = initialMessage(model);
  const events = [];
  applyOps(asm.drain(), message, { push: (e) => events.push(e) });
  assert.ok(asm.finished(), "the mapper must finish the assembler");
  return [message, ["start", ...events.map((e) => e.type)], events];
}

/**
 * Runs `sse` through `format`'s mapper with six chunkings, which must all agree.
 * @param {object} format a wire format ({ buildRequest, streamMapper })
 * @param {object} model @param {object} options @param {string} sse
 * @returns {[object, string[]]} the final message and the event names, `start` first
 */
export function run(format, model, options, sse) {
  let first;
  for (let seed = 0; seed < 6; seed++) {
    const [message, names] = runOnce(format, model, options, sse, seed);
    if (!first) first = [message, names];
    else assert.deepStrictEqual([message, names], first, `chunking with seed ${seed} changed the result`);
  }
  return first;
}

/**
 * `event: <name>` (optional) + `data: <json>` events, blank-line separated.
 * @param {Array<[string | null | undefined, unknown]>} events
 */
export function sse(events) {
  let out = "";
  for (const [name, data] of events) {
    if (name != null) out += `event: ${name}\n`;
    out += `data: ${JSON.stringify(data)}\n\n`;
  }
  return out;
}

/** @param {string[]} list */
export function names(list) {
  return [...list];
}

/**
 * Usage as the assembler renders it (pi-ai's `calculateCost`: rate per token × count; a 1-hour cache write at twice
 * the input rate).
 * @param {number} input @param {number} output @param {number} read @param {number} write
 * @param {Array<[string, number]>} extra entries after `cacheWrite` (`cacheWrite1h`, `reasoning`)
 * @param {number[]} cost prices per million: input, output, cacheRead, cacheWrite
 */
export function usage(input, output, read, write, extra, cost) {
  const object = { input, output, cacheRead: read, cacheWrite: write };
  for (const [k, v] of extra) object[k] = v;
  object.totalTokens = input + output + read + write;
  const long = extra.find(([k]) => k === "cacheWrite1h")?.[1] ?? 0;
  const c = [
    (cost[0] / 1e6) * input,
    (cost[1] / 1e6) * output,
    (cost[2] / 1e6) * read,
    (cost[3] * (write - long) + cost[0] * 2 * long) / 1e6,
  ];
  object.cost = {
    input: c[0], output: c[1], cacheRead: c[2], cacheWrite: c[3], total: c[0] + c[1] + c[2] + c[3],
    totalFromProvider: false,
  };
  return object;
}

/** A seeded PRNG (mulberry32, provider-server.mjs's): `() => number in [0, 1)`, for the never-throw tests. */
export { prng as rng } from "./provider-server.mjs";

const pick = (random, list) => list[Math.floor(random() * list.length)];

/**
 * Arbitrary JSON whose object keys (and some strings) come from `keys`, other strings from `strings`, nested up to
 * `depth` (drawn from `random`).
 * @param {() => number} random @param {string[]} keys @param {string[]} strings @param {number} depth
 */
export function keyedJson(random, keys, strings, depth) {
  const r = random();
  if (depth > 0 && r < 0.5) {
    if (r < 0.2) return Array.from({ length: Math.floor(random() * 5) }, () => keyedJson(random, keys, strings, depth - 1));
    const object = {};
    for (let n = Math.floor(random() * 8); n > 0; n--) object[pick(random, keys)] = keyedJson(random, keys, strings, depth - 1);
    return object;
  }
  switch (Math.floor(random() * 6)) {
    case 0: return null;
    case 1: return random() < 0.5;
    case 2: return Math.floor((random() - 0.5) * 2 ** 53);
    case 3: return pick(random, [0, -0, 1.5, -1e300, 1e-7, 2 ** 64, 0.1]);
    case 4: return pick(random, strings);
    default: return pick(random, keys);
  }
}

const JSON_KEYS = [
  "id", "model", "choices", "delta", "content", "refusal", "reasoning_content", "reasoning", "tool_calls", "index",
  "function", "name", "arguments", "finish_reason", "usage", "prompt_tokens", "completion_tokens",
  "prompt_tokens_details", "cached_tokens", "error", "message", "type", "text", "thinking", "signature",
  "partial_json", "content_block", "stop_reason", "stop_details", "input_tokens", "output_tokens", "cache_creation",
  "data", "role", "toolCallId", "toolName", "isError", "thinkingSignature", "redacted", "stopReason", "provider", "api",
  "mimeType", "input", "sections", "toolsAdded", "toolsRemoved", "x",
];
const JSON_STRINGS = [
  "", "stop", "length", "tool_calls", "x", '{"a":', "[DONE]", "user", "assistant", "toolResult", "system", "toolCall",
  "thinking", "text", "image", "tool_use", "text_delta", "thinking_delta", "input_json_delta", "signature_delta",
  "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
  "message_stop", "redacted_thinking", "end_turn", "refusal", "anthropic-messages", "anthropic", "m1", "error",
  "\u00e9\ud83d\ude00", "a\nb", "\ud800",
];

/** Arbitrary JSON biased towards the keys and values the mappers and transcript read. */
export function jsonValue(random, depth = 5) {
  return keyedJson(random, JSON_KEYS, JSON_STRINGS, depth);
}

/** The message of the Error `fn()` throws; fails the test when it returns. */
export function thrownMessage(fn) {
  try {
    fn();
  } catch (error) {
    return error.message;
  }
  assert.fail("expected an error");
}
