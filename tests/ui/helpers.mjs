// Shared parts of the UI message stream tests (issue 31): the built package (pkg/, Node entries), the real `ai`
// package pinned in this folder (its chunk schema, readUIMessageStream, AbstractChat, DefaultChatTransport), scripted
// stream functions built with the package's own stream class, and an http server on 127.0.0.1 the tests close.
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AbstractChat, DefaultChatTransport, readUIMessageStream, uiMessageChunkSchema } from "ai";

const HERE = dirname(fileURLToPath(import.meta.url));
const PKG = join(HERE, "..", "..", "pkg");

// The built entry and its parts must be this source's: a stale pkg/ would test old code.
for (const file of readdirSync(join(HERE, "..", "..", "pkg-template")).filter((f) => /^ui(-[\w-]+)?\.js$/.test(f))) {
  if (readFileSync(join(PKG, "dist", "web", file), "utf8") !== readFileSync(join(HERE, "..", "..", "pkg-template", file), "utf8")) {
    throw new Error(`tests/ui: pkg/dist/web/${file} differs from pkg-template/${file}: run node scripts/build.mjs`);
  }
}

// UI_TEST_AGENT_PKG=<a built pkg/> runs the Agent of another build (e.g. a branch with human-in-the-loop approvals)
// under this build's ui entry.
const AGENT_PKG = process.env.UI_TEST_AGENT_PKG || PKG;
export const { Agent, createAssistantMessageEventStream } = await import(join(AGENT_PKG, "dist", "node", "index.mjs"));
export const ui = await import(join(PKG, "dist", "node", "ui.mjs"));
export const AI_VERSION = JSON.parse(readFileSync(join(HERE, "node_modules", "ai", "package.json"), "utf8")).version;
export { DefaultChatTransport, readUIMessageStream };

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tickNow = () => new Promise((r) => setImmediate(r));

export const MODEL = {
  id: "scripted-1",
  name: "Scripted",
  api: "scripted",
  provider: "scripted",
  baseUrl: "http://127.0.0.1:0",
  reasoning: true,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 4096,
};

const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

export const text = (s) => ({ type: "text", text: s });
export const thinking = (s, signature) => ({ type: "thinking", thinking: s, ...(signature ? { thinkingSignature: signature } : {}) });
export const call = (id, name, args = {}) => ({ type: "toolCall", id, name, arguments: args });

/**
 * A scripted model: each request takes the next reply. A reply is a list of steps, streamed as a provider would:
 * blocks as `*_start`, one `*_delta` per piece, `*_end` (text and thinking pieces: the strings of `pieces`, tool call
 * arguments: their JSON cut in two). `{ fail: "message" }` ends the response with an error; `{ waitForAbort: true }`
 * after some blocks holds the response until the run's signal aborts.
 */
export function scriptedModel(replies, { pieceDelayMs = 0 } = {}) {
  // pieceDelayMs: a slow stream (each piece after that many ms), for readers that drop mid-answer.
  const tick = pieceDelayMs > 0 ? () => sleep(pieceDelayMs) : tickNow;
  const queue = [...replies];
  const requests = [];
  const reached = [];
  const streamFn = (model, context, options) => {
    requests.push(context);
    const reply = queue.shift() ?? { blocks: [text("(no reply queued)")] };
    const stream = createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: reply.usage ?? usage(), stopReason: "pending", timestamp: Date.now() };
    (async () => {
      await tick();
      stream.push({ type: "start", partial });
      for (const block of reply.blocks) {
        const i = partial.content.length;
        if (block.type === "text" || block.type === "thinking") {
          const key = block.type === "text" ? "text" : "thinking";
          const { pieces: parts, ...fields } = block;
          const live = { ...fields, [key]: "" };
          partial.content.push(live);
          stream.push({ type: `${key}_start`, contentIndex: i, partial });
          for (const piece of parts ?? [block[key]]) {
            await tick();
            live[key] += piece;
            stream.push({ type: `${key}_delta`, contentIndex: i, delta: piece, partial });
          }
          await tick();
          stream.push({ type: `${key}_end`, contentIndex: i, content: live[key], partial });
        } else {
          const live = { type: "toolCall", id: block.id, name: block.name, arguments: {} };
          partial.content.push(live);
          stream.push({ type: "toolcall_start", contentIndex: i, partial });
          const json = JSON.stringify(block.arguments);
          const half = Math.ceil(json.length / 2);
          for (const piece of [json.slice(0, half), json.slice(half)]) {
            await tick();
            stream.push({ type: "toolcall_delta", contentIndex: i, delta: piece, partial });
          }
          live.arguments = block.arguments;
          stream.push({ type: "toolcall_end", contentIndex: i, toolCall: live, partial });
        }
      }
      if (reply.waitForAbort) {
        const signal = options?.signal;
        reached.push(true);
        await new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", resolve, { once: true })));
        partial.stopReason = "aborted";
        partial.errorMessage = "Request was aborted";
        stream.push({ type: "error", reason: "aborted", error: partial });
        stream.end();
        return;
      }
      await tick();
      if (reply.fail) {
        partial.stopReason = "error";
        partial.errorMessage = reply.fail;
        stream.push({ type: "error", reason: "error", error: partial });
      } else {
        partial.stopReason = partial.content.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
        stream.push({ type: "done", reason: partial.stopReason, message: partial });
      }
      stream.end();
    })();
    return stream;
  };
  /** Resolves when the `n`th `waitForAbort` reply has streamed its blocks. */
  const waiting = async (n = 1) => {
    while (reached.length < n) await sleep(2);
  };
  return { streamFn, requests, waiting };
}

/** Blocks of a reply: `{ blocks: [...] }`; text and thinking may carry `pieces` (the deltas). */
export const reply = (...blocks) => ({ blocks });
export const pieces = (block, ...parts) => ({ ...block, pieces: parts });

/** Tools with a fixed delay, so parallel calls end in a known order. `fail` throws. */
export function tools(spec) {
  return Object.entries(spec).map(([name, { delayMs = 0, fail, result }]) => ({
    name,
    label: name,
    description: `${name} tool`,
    parameters: { type: "object", properties: { q: { type: "string" } } },
    async execute(_id, args) {
      await sleep(delayMs);
      if (fail) throw new Error(fail);
      return { content: [text(result ?? `${name}(${args.q})`)], details: { q: args.q } };
    },
  }));
}

const schema = uiMessageChunkSchema();

/** Validates each chunk with the `ai` package's own schema; throws naming the first one it refuses. */
export async function validateChunks(chunks) {
  for (const [i, chunk] of chunks.entries()) {
    const r = await schema.validate(chunk);
    if (!r.success) throw new Error(`chunk ${i} ${JSON.stringify(chunk)} is refused by ai's uiMessageChunkSchema: ${r.error?.message}`);
  }
  return chunks;
}

/** Reads a chunk stream to the end: [chunks]. */
export async function drain(stream) {
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

/** The last UIMessage `readUIMessageStream` builds from the chunks (validated first); errors reach `onError`. */
export async function readMessage(chunks, { message, onError, terminateOnError = true } = {}) {
  await validateChunks(chunks);
  const stream = new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  let last;
  for await (const m of readUIMessageStream({ stream, message, onError: onError ?? ((e) => { throw e; }), terminateOnError })) last = m;
  return structuredClone(last);
}

/** Labels of chunks: `type` plus the distinguishing field, for compact exact sequences. */
export function labels(chunks) {
  return chunks.map((c) => {
    if (c.type.endsWith("-delta")) return `${c.type}:${c.delta ?? c.inputTextDelta}`;
    if (c.toolCallId) return `${c.type}:${c.toolCallId}`;
    if (c.type === "error") return `error:${c.errorText}`;
    if (c.type === "finish") return `finish:${c.finishReason}`;
    if (c.type === "abort") return `abort:${c.reason}`;
    return c.type;
  });
}

/** Parts without fields the protocol leaves undefined (readUIMessageStream writes `key: undefined`). */
export function clean(value) {
  return JSON.parse(JSON.stringify(value));
}

/** The framework-free Chat: the AI SDK's AbstractChat over an in-memory state (what @ai-sdk/react's Chat does with React state). */
export class Chat extends AbstractChat {
  constructor(init) {
    const state = {
      status: "ready",
      error: undefined,
      messages: init.messages ? structuredClone(init.messages) : [], // a reloaded page's history (useChat({ messages }))
      pushMessage: (m) => state.messages.push(m),
      popMessage: () => state.messages.pop(),
      replaceMessage: (i, m) => (state.messages[i] = m),
      snapshot: (x) => structuredClone(x),
    };
    super({ ...init, state });
  }
}

/** An http server on 127.0.0.1 (ephemeral port) running `handler(req, res)`; `close()` ends it and its sockets. */
export async function serve(handler) {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((e) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(e?.stack ?? e));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

export async function readJson(req) {
  let body = "";
  for await (const piece of req) body += piece;
  return JSON.parse(body);
}

/** Parses an SSE body as the protocol frames it: the JSON chunks and whether `[DONE]` ended it. */
export function parseSse(body) {
  const frames = body.split("\n\n");
  if (frames.pop() !== "") throw new Error(`SSE body does not end with a blank line: ${JSON.stringify(body.slice(-40))}`);
  const last = frames.pop();
  if (last !== "data: [DONE]") throw new Error(`SSE body does not end with data: [DONE] but ${JSON.stringify(last)}`);
  return frames.map((f) => {
    if (!f.startsWith("data: ")) throw new Error(`not a data line: ${JSON.stringify(f)}`);
    return JSON.parse(f.slice(6));
  });
}

/**
 * A page in headless Chromium (the system's, through playwright-core from the repository's root), its page errors and
 * console errors collected in `errors`; the browser and `server` are closed when test `t` ends.
 */
export async function chromiumPage(t, server) {
  const { chromium } = createRequire(join(HERE, "..", "..", "package.json"))("playwright-core");
  const args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"];
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args });
  t.after(async () => {
    await browser.close().catch(() => {});
    await server.close();
  });
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  return { page, errors };
}
