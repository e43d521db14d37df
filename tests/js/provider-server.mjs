// A real loopback HTTP server for the built-in provider tests (SPEC §6, K-9.4.2), plus wire-format builders,
// models and small collectors. Written for these tests; no dependencies beyond node:http.
//
//   const server = await startProviderServer();            // 127.0.0.1, port 0, seeded random chunking
//   const r = server.route("text");                         // its own script queue and request log
//   r.reply({ sse: wire["anthropic-messages"].text("Hi") }); // answered in random-size chunks
//   streamBuiltin({ ...model, baseUrl: r.baseUrl }, …)       // requests go to /r/text/…
//   r.requests[0] → { method, url, path, headers, body (JSON), raw, closedEarly, closed (promise), … }
//
// A scripted response (one per request, in order; the last one repeats when `repeat` is set):
//   { status = 200, headers, sse | body (string, or an object sent as JSON), chunks: "random" (default) | "whole" |
//     number[], minChunk = 1, maxChunk = 40, gapMs (default: setImmediate between writes),
//     delayMs (before the headers), stallBeforeHeaders, stallAfter (bytes, then wait until the client leaves),
//     dropBeforeHeaders (destroy the socket on arrival), dropAfter (bytes, then destroy the socket),
//     noCors (no CORS headers on this response), handler(req, res, record) for anything else }
// Every response carries permissive CORS headers; OPTIONS preflights are answered (and counted).

import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";

// ---------------------------------------------------------------------------------------------------------------
// Seeded randomness
// ---------------------------------------------------------------------------------------------------------------

export const SEED = Number.isFinite(Number(process.env.PROVIDER_SEED)) && process.env.PROVIDER_SEED
  ? Number(process.env.PROVIDER_SEED)
  : Math.floor(Math.random() * 1e9);

/** mulberry32: a small deterministic PRNG returning floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Splits `bytes` into chunks of random sizes in [min, max] (seeded). */
export function randomChunks(bytes, random, min = 1, max = 24) {
  const out = [];
  for (let at = 0; at < bytes.length; ) {
    const size = min + Math.floor(random() * (max - min + 1));
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

function fixedChunks(bytes, sizes) {
  const out = [];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length];
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------------------------

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "POST, GET, OPTIONS",
  "access-control-expose-headers": "*",
  "access-control-max-age": "0",
};

const tick = (ms) => new Promise((r) => (ms === undefined ? setImmediate(r) : setTimeout(r, ms)));

/**
 * Starts the scripted provider server. Returns { url, origin, route(name), routes, requests (all), preflights,
 * close() }.
 */
export async function startProviderServer({ seed = SEED } = {}) {
  const routes = new Map();
  const all = [];
  const preflights = [];
  const sockets = new Set();
  const stalls = new Set();

  function route(name = `r${routes.size}`) {
    if (routes.has(name)) throw new Error(`route ${name} exists`);
    const r = {
      name,
      baseUrl: "",
      queue: [],
      requests: [],
      repeat: false,
      /** Queues responses (answered in order). */
      reply(...responses) {
        r.queue.push(...responses);
        return r;
      },
      /** Waits until `n` requests arrived. */
      async waitForRequests(n, ms = 3000) {
        const end = Date.now() + ms;
        while (r.requests.length < n) {
          if (Date.now() > end) throw new Error(`route ${name}: ${r.requests.length} of ${n} requests after ${ms} ms`);
          await tick(5);
        }
        return r.requests[n - 1];
      },
    };
    r.baseUrl = `${server.url}/r/${name}`;
    routes.set(name, r);
    return r;
  }

  async function handle(req, res) {
    const cors = { ...CORS, "access-control-allow-headers": req.headers["access-control-request-headers"] || "*" };
    if (req.method === "OPTIONS") {
      preflights.push({ url: req.url, headers: { ...req.headers } });
      res.writeHead(204, cors);
      res.end();
      return;
    }
    const parts = [];
    for await (const part of req) parts.push(part);
    const raw = Buffer.concat(parts).toString("utf8");
    let body;
    try {
      body = raw === "" ? undefined : JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const url = new URL(req.url, "http://x");
    const match = /^\/r\/([^/]+)(\/.*)?$/.exec(url.pathname);
    let closeResolve;
    const record = {
      method: req.method,
      url: req.url,
      path: match ? (match[2] ?? "") + url.search : req.url,
      headers: { ...req.headers },
      body,
      raw,
      time: Date.now(),
      bytesSent: 0,
      closedEarly: false,
      closed: new Promise((r) => (closeResolve = r)),
    };
    res.on("close", () => {
      record.closedEarly = !res.writableFinished;
      closeResolve(record.closedEarly);
    });
    all.push(record);
    const r = match && routes.get(match[1]);
    if (!r) {
      res.writeHead(404, { ...cors, "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route for ${req.url}` } }));
      return;
    }
    r.requests.push(record);
    const index = r.requests.length - 1;
    const step = r.queue.length > 0 ? (r.repeat && r.queue.length === 1 ? r.queue[0] : r.queue.shift()) : undefined;
    if (!step) {
      res.writeHead(599, { ...cors, "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `route ${r.name}: no scripted response for request ${index + 1}` } }));
      return;
    }
    if (step.handler) return step.handler(req, res, record);
    if (step.dropBeforeHeaders) {
      req.socket.destroy();
      return;
    }
    if (step.delayMs) await tick(step.delayMs);
    if (step.stallBeforeHeaders) return stall(res);
    let bytes;
    let type = "text/event-stream";
    if (step.sse !== undefined) bytes = typeof step.sse === "string" ? Buffer.from(step.sse, "utf8") : Buffer.from(step.sse);
    else if (step.body !== undefined && typeof step.body !== "string") {
      bytes = Buffer.from(JSON.stringify(step.body), "utf8");
      type = "application/json";
    } else {
      bytes = Buffer.from(step.body ?? "", "utf8");
      type = "text/plain";
    }
    res.writeHead(step.status ?? 200, { ...(step.noCors ? {} : cors), "content-type": type, "cache-control": "no-cache", ...step.headers });
    res.flushHeaders();
    const random = prng(seed ^ hash(`${r.name}#${index}`));
    const chunks =
      step.chunks === "whole"
        ? [bytes]
        : Array.isArray(step.chunks)
          ? fixedChunks(bytes, step.chunks)
          : randomChunks(bytes, random, step.minChunk ?? 1, step.maxChunk ?? 40);
    for (const chunk of chunks) {
      if (res.destroyed) return;
      if (step.dropAfter !== undefined && record.bytesSent + chunk.length > step.dropAfter) {
        const head = chunk.subarray(0, step.dropAfter - record.bytesSent);
        if (head.length) await new Promise((r) => res.write(head, r));
        await tick(10);
        req.socket.destroy();
        return;
      }
      if (step.stallAfter !== undefined && record.bytesSent + chunk.length > step.stallAfter) {
        const head = chunk.subarray(0, step.stallAfter - record.bytesSent);
        if (head.length) res.write(head);
        record.bytesSent += head.length;
        return stall(res);
      }
      res.write(chunk);
      record.bytesSent += chunk.length;
      await tick(step.gapMs); // a macrotask between writes, so chunks leave separately
    }
    if (step.stallAtEnd) return stall(res);
    res.end();
  }

  /** Keeps a response open until the client goes away or the server closes. */
  function stall(res) {
    stalls.add(res);
    res.on("close", () => stalls.delete(res));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      try {
        res.destroy(e);
      } catch {}
    });
  });
  server.keepAliveTimeout = 1000;
  server.on("connection", (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  server.url = `http://127.0.0.1:${port}`;
  return {
    url: server.url,
    origin: server.url,
    port,
    seed,
    route,
    routes,
    requests: all,
    preflights,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// A static file server (for the Chromium page: it serves the repository, the page fetches cross-origin)
// ---------------------------------------------------------------------------------------------------------------

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".cjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

/** Serves files under `root`, plus in-memory `pages` ({"/path": "text"}). */
export async function startStaticServer(root, pages = {}) {
  const sockets = new Set();
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (pages[path] !== undefined) {
      res.writeHead(200, { "content-type": TYPES[extname(path)] ?? "text/html; charset=utf-8" });
      res.end(pages[path]);
      return;
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(root + sep)) {
      res.writeHead(403);
      res.end();
      return;
    }
    try {
      const data = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(data);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://localhost:${server.address().port}`; // another origin than the provider server's 127.0.0.1
  return {
    url,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// SSE text
// ---------------------------------------------------------------------------------------------------------------

/** `data: <json>\n\n` (strings are sent verbatim). */
export const data = (value) => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
/** `event: <name>\ndata: <json>\n\n`. */
export const event = (name, value) => `event: ${name}\n${data(value)}`;

// ---------------------------------------------------------------------------------------------------------------
// Wire builders: realistic replies of each API for text and tool calls (both usable in one message)
// ---------------------------------------------------------------------------------------------------------------

/** Splits a string into pieces of `n` code points (never inside a surrogate pair; at least one piece). */
export function pieces(s, n = 5) {
  const points = Array.from(s);
  const out = [];
  for (let i = 0; i < points.length; i += n) out.push(points.slice(i, i + n).join(""));
  return out.length ? out : [""];
}

/** `pieces`, or with `whole` each text in one piece (one SSE line of any size, issue 34). */
const split = (whole) => (whole ? (s) => [s] : pieces);

/**
 * Per API: `reply({ text?, thinking?, calls?: [{id, name, args}], usage?, whole? })` → SSE text ending normally;
 * `text(s)` and `tools(calls)` are shorthands. Tool-call arguments stream in small fragments, the calls interleaved
 * where the API allows it.
 */
export const wire = {
  "openai-completions": {
    reply({ text, thinking, calls = [], id = "chatcmpl-1", model = "gpt-test-2025", finish, usage, whole } = {}) {
      const pieces = split(whole);
      const chunk = (delta, extra = {}) => data({ id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason: null, ...extra }] });
      let out = chunk({ role: "assistant", content: "" });
      for (const p of thinking ? pieces(thinking) : []) out += chunk({ reasoning_content: p });
      for (const p of text ? pieces(text) : []) out += chunk({ content: p });
      calls.forEach((c, i) => {
        out += chunk({ tool_calls: [{ index: i, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] });
      });
      const frags = calls.map((c) => pieces(JSON.stringify(c.args), 4));
      for (let k = 0; frags.some((f) => k < f.length); k++) {
        const tool_calls = [];
        frags.forEach((f, i) => k < f.length && tool_calls.push({ index: i, function: { arguments: f[k] } }));
        out += chunk({ tool_calls });
      }
      out += chunk({}, { finish_reason: finish ?? (calls.length ? "tool_calls" : "stop") });
      const u = usage ?? { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
      out += data({ id, object: "chat.completion.chunk", created: 1, model, choices: [], usage: u });
      return out + data("[DONE]");
    },
  },
  "openai-responses": {
    // `messageId` and `reasoningId` name the message and reasoning items, for a server that stores them and resolves a
    // later request's `item_reference`s to them; function-call items are fc_1, fc_2, … in every reply.
    reply({ text, thinking, calls = [], id = "resp_1", model = "gpt-test-2025", usage, status = "completed", whole, messageId = "msg_1", reasoningId = "rs_1" } = {}) {
      const pieces = split(whole);
      let out = event("response.created", { type: "response.created", sequence_number: 0, response: { id, object: "response", created_at: 1, model, status: "in_progress", output: [] } });
      let index = 0;
      if (thinking) {
        const item = { type: "reasoning", id: reasoningId, summary: [] };
        out += event("response.output_item.added", { type: "response.output_item.added", output_index: index, item });
        out += event("response.reasoning_summary_part.added", { type: "response.reasoning_summary_part.added", item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: "" } });
        for (const p of pieces(thinking)) out += event("response.reasoning_summary_text.delta", { type: "response.reasoning_summary_text.delta", item_id: item.id, output_index: index, summary_index: 0, delta: p });
        out += event("response.reasoning_summary_text.done", { type: "response.reasoning_summary_text.done", item_id: item.id, output_index: index, summary_index: 0, text: thinking });
        out += event("response.output_item.done", { type: "response.output_item.done", output_index: index, item: { ...item, summary: [{ type: "summary_text", text: thinking }], encrypted_content: "ENC" } });
        index++;
      }
      if (text) {
        const item = { type: "message", id: messageId, role: "assistant", status: "in_progress", content: [] };
        out += event("response.output_item.added", { type: "response.output_item.added", output_index: index, item });
        out += event("response.content_part.added", { type: "response.content_part.added", item_id: item.id, output_index: index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
        for (const p of pieces(text)) out += event("response.output_text.delta", { type: "response.output_text.delta", item_id: item.id, output_index: index, content_index: 0, delta: p });
        out += event("response.output_text.done", { type: "response.output_text.done", item_id: item.id, output_index: index, content_index: 0, text });
        out += event("response.output_item.done", { type: "response.output_item.done", output_index: index, item: { ...item, status: "completed", content: [{ type: "output_text", text, annotations: [] }] } });
        index++;
      }
      const callItems = calls.map((c, i) => ({ type: "function_call", id: `fc_${i + 1}`, call_id: c.id, name: c.name, arguments: "", status: "in_progress", output_index: index + i }));
      for (const item of callItems) {
        const { output_index, ...rest } = item;
        out += event("response.output_item.added", { type: "response.output_item.added", output_index, item: rest });
      }
      const frags = calls.map((c) => pieces(JSON.stringify(c.args), 4));
      for (let k = 0; frags.some((f) => k < f.length); k++) {
        frags.forEach((f, i) => {
          if (k < f.length) out += event("response.function_call_arguments.delta", { type: "response.function_call_arguments.delta", item_id: callItems[i].id, output_index: callItems[i].output_index, delta: f[k] });
        });
      }
      calls.forEach((c, i) => {
        const { output_index, ...rest } = callItems[i];
        const args = JSON.stringify(c.args);
        out += event("response.function_call_arguments.done", { type: "response.function_call_arguments.done", item_id: rest.id, output_index, arguments: args });
        out += event("response.output_item.done", { type: "response.output_item.done", output_index, item: { ...rest, arguments: args, status: "completed" } });
      });
      const u = usage ?? { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 };
      const type = status === "completed" ? "response.completed" : status === "incomplete" ? "response.incomplete" : "response.failed";
      out += event(type, { type, response: { id, object: "response", created_at: 1, model, status, output: [], usage: u } });
      return out;
    },
  },
  "anthropic-messages": {
    reply({ text, thinking, calls = [], id = "msg_01", model = "claude-test-2025", usage, stop, whole } = {}) {
      const pieces = split(whole);
      let out = event("message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 } } });
      out += event("ping", { type: "ping" });
      let index = 0;
      if (thinking) {
        out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
        for (const p of pieces(thinking)) out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: p } });
        out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: "SIG" } });
        out += event("content_block_stop", { type: "content_block_stop", index });
        index++;
      }
      if (text) {
        out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
        for (const p of pieces(text)) out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: p } });
        out += event("content_block_stop", { type: "content_block_stop", index });
        index++;
      }
      for (const c of calls) {
        out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: c.id, name: c.name, input: {} } });
        for (const p of pieces(JSON.stringify(c.args), 4)) out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: p } });
        out += event("content_block_stop", { type: "content_block_stop", index });
        index++;
      }
      out += event("message_delta", { type: "message_delta", delta: { stop_reason: stop ?? (calls.length ? "tool_use" : "end_turn"), stop_sequence: null }, usage: usage ?? { output_tokens: 20 } });
      return out + event("message_stop", { type: "message_stop" });
    },
  },
  "google-generative-ai": {
    reply({ text, thinking, calls = [], id = "resp-g1", model = "gemini-test-2025", usage, finish = "STOP", whole } = {}) {
      const pieces = split(whole);
      // Realistic Gemini chunks: parts, then the finish reason and usage on the last chunk.
      const chunks = [];
      for (const p of thinking ? pieces(thinking) : []) chunks.push([{ text: p, thought: true }]);
      for (const p of text ? pieces(text) : []) chunks.push([{ text: p }]);
      if (calls.length) chunks.push(calls.map((c) => ({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: c.args } })));
      if (chunks.length === 0) chunks.push([]);
      const u = usage ?? { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 };
      return chunks
        .map((parts, i) => {
          const last = i === chunks.length - 1;
          const candidate = { content: { parts, role: "model" }, index: 0, ...(last && finish ? { finishReason: finish } : {}) };
          return data({ candidates: [candidate], ...(last ? { usageMetadata: u } : {}), modelVersion: model, responseId: id });
        })
        .join("");
    },
  },
};
for (const w of Object.values(wire)) {
  w.text = (text, extra) => w.reply({ text, ...extra });
  w.tools = (calls, extra) => w.reply({ calls, ...extra });
}

// ---------------------------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------------------------

export const APIS = ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"];
export const PROVIDER = {
  "openai-completions": "openai",
  "openai-responses": "openai",
  "anthropic-messages": "anthropic",
  "google-generative-ai": "google",
};
export const MODEL_ID = {
  "openai-completions": "gpt-test",
  "openai-responses": "gpt-test",
  "anthropic-messages": "claude-test",
  "google-generative-ai": "gemini-test",
};
/** The request path (after the base URL) of each API. */
export const PATH = {
  "openai-completions": "/chat/completions",
  "openai-responses": "/responses",
  "anthropic-messages": "/v1/messages",
  "google-generative-ai": "/models/gemini-test:streamGenerateContent?alt=sse",
};
/** The auth header each API sends a key in, and its value for key `k`. */
export const AUTH = {
  "openai-completions": ["authorization", (k) => `Bearer ${k}`],
  "openai-responses": ["authorization", (k) => `Bearer ${k}`],
  "anthropic-messages": ["x-api-key", (k) => k],
  "google-generative-ai": ["x-goog-api-key", (k) => k],
};

export function providerModel(api, baseUrl, overrides = {}) {
  return {
    id: MODEL_ID[api],
    name: `${api} test model`,
    api,
    provider: PROVIDER[api],
    baseUrl,
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200000,
    maxTokens: 8000,
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Collecting an assistant message event stream
// ---------------------------------------------------------------------------------------------------------------

const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/**
 * Drains an AssistantMessageEventStream. Returns { events, types, result, final (last event), deltas (per
 * toolcall_delta: the live arguments JSON at that moment), snapshots (JSON of partial after each event) }.
 */
export async function drain(stream, { onEvent } = {}) {
  const events = [];
  const argsLive = [];
  for await (const e of stream) {
    events.push(e);
    if (e.type === "toolcall_delta") {
      const block = e.partial.content[e.contentIndex];
      argsLive.push({ index: e.contentIndex, delta: e.delta, args: clone(block.arguments) });
    }
    if (onEvent) await onEvent(e);
  }
  const result = await stream.result();
  return { events, types: events.map((e) => e.type), result, final: events[events.length - 1], argsLive };
}

/** JSON text of everything a stream emitted (events with their partials, and the result). */
export function emittedText(run) {
  return JSON.stringify({ events: run.events, result: run.result });
}

/** A message without its volatile fields (timestamp, durationMs), as plain JSON. */
export function stable(message) {
  const { timestamp, durationMs, ...rest } = clone(message);
  return rest;
}

export const ZERO_COST = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
