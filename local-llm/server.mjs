#!/usr/bin/env node
// An OpenAI-compatible Chat Completions server on loopback over SmolLM2-135M-Instruct (see README.md here).
// Owns HTTP only: routes, CORS, SSE framing, the one-at-a-time queue. The prompt and tool policy are chat.mjs's;
// generation is engine.mjs's.
//
//   node local-llm/server.mjs --model PATH.gguf [--port 8088] [--host 127.0.0.1] [--threads 1] [--ctx 8192]
//                             [--max-tokens 1024]
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { MODEL_ID, RequestError, decideTool, parseRequest, renderPrompt } from "./chat.mjs";
import { loadEngine } from "./engine.mjs";

const { values: args } = parseArgs({
  options: {
    model: { type: "string", default: process.env.LOCAL_LLM_MODEL },
    port: { type: "string", default: process.env.LOCAL_LLM_PORT ?? "8088" },
    host: { type: "string", default: process.env.LOCAL_LLM_HOST ?? "127.0.0.1" },
    threads: { type: "string", default: "1" },
    ctx: { type: "string", default: "8192" },
    "max-tokens": { type: "string", default: "1024" },
  },
});
if (!args.model) {
  console.error("server.mjs: --model PATH (or LOCAL_LLM_MODEL) is required: the SmolLM2-135M-Instruct GGUF file");
  process.exit(2);
}
const log = (msg) => console.error(`[local-llm ${new Date().toISOString().slice(11, 23)}] ${msg}`);

const engine = await loadEngine({
  modelPath: args.model, threads: Number(args.threads), contextSize: Number(args.ctx), log,
});
const defaults = { maxTokens: Number(args["max-tokens"]) };
const startedAt = Math.floor(Date.now() / 1000);
const FINGERPRINT = "fp_local_smollm2";

// ---------------------------------------------------------------------------------------------------------------
// One request at a time: each job waits for the previous one.
let chain = Promise.resolve();
let queued = 0;
function enqueue(job) {
  queued++;
  const run = chain.then(job).finally(() => queued--);
  chain = run.catch(() => {});
  return run;
}

const newId = (prefix) => `${prefix}${randomBytes(12).toString("hex")}`;

function cors(req, res) {
  res.setHeader("Access-Control-Allow-Origin", "*");
  res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  res.setHeader("Access-Control-Allow-Headers", req.headers["access-control-request-headers"] ?? "authorization, content-type");
  res.setHeader("Access-Control-Max-Age", "86400");
  // Chromium's Private Network Access: a page served from elsewhere may then call this loopback server.
  if (req.headers["access-control-request-private-network"] === "true") {
    res.setHeader("Access-Control-Allow-Private-Network", "true");
  }
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res, status, message, { type = "invalid_request_error", param = null, code = null } = {}) {
  sendJson(res, status, { error: { message, type, param, code } });
}

async function readBody(req, limit = 8 << 20) {
  const parts = [];
  let size = 0;
  for await (const part of req) {
    size += part.length;
    if (size > limit) throw new RequestError("Request body too large", { status: 413 });
    parts.push(part);
  }
  const text = Buffer.concat(parts).toString("utf8");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new RequestError(`Invalid JSON body: ${e.message}`);
  }
}

const modelObject = () => ({ id: MODEL_ID, object: "model", created: startedAt, owned_by: "local" });

// ---------------------------------------------------------------------------------------------------------------
// POST /v1/chat/completions

async function chatCompletions(req, res) {
  const body = await readBody(req);
  const request = parseRequest(body, defaults);
  const decision = decideTool(request);
  const pieces = renderPrompt(request, decision);
  const abort = new AbortController();
  res.on("close", () => { if (!res.writableFinished) abort.abort(); });
  const started = performance.now();

  await enqueue(async () => {
    if (abort.signal.aborted) return;
    const id = newId("chatcmpl-");
    const created = Math.floor(Date.now() / 1000);
    const callId = newId("call_");
    let firstAt = 0;
    let result;
    if (request.stream) {
      let headersSent = false;
      const write = (obj) => {
        if (!headersSent) {
          res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
            Connection: "keep-alive", "X-Accel-Buffering": "no" });
          res.socket?.setNoDelay(true);
          headersSent = true;
        }
        res.write(`data: ${typeof obj === "string" ? obj : JSON.stringify(obj)}\n\n`);
      };
      const chunk = (delta, finish = null) => ({
        id, object: "chat.completion.chunk", created, model: MODEL_ID, system_fingerprint: FINGERPRINT,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(request.includeUsage ? { usage: null } : {}),
      });
      let roleSent = false;
      const role = () => {
        const r = roleSent ? {} : { role: "assistant" };
        roleSent = true;
        return r;
      };
      try {
        result = await engine.complete(request, decision, pieces, {
          signal: abort.signal,
          onText(delta) {
            firstAt ||= performance.now();
            if (!roleSent) write(chunk({ ...role(), content: "", refusal: null }));
            write(chunk({ content: delta }));
          },
          onToolStart(name) {
            write(chunk({ ...role(), content: null, tool_calls: [{ index: 0, id: callId, type: "function",
              function: { name, arguments: "" } }], refusal: null }));
          },
          onToolArguments(delta) {
            firstAt ||= performance.now();
            write(chunk({ tool_calls: [{ index: 0, function: { arguments: delta } }] }));
          },
        });
      } catch (e) {
        if (!headersSent) throw e;
        write({ error: { message: e.message, type: "server_error", param: null, code: e.code ?? null } });
        write("[DONE]");
        res.end();
        return;
      }
      if (!result) {
        log("chat stream aborted: the client went away");
        return res.destroy();
      }
      if (!roleSent) write(chunk({ ...role(), content: "" }));
      write(chunk({}, result.finishReason));
      if (request.includeUsage) {
        write({ id, object: "chat.completion.chunk", created, model: MODEL_ID, system_fingerprint: FINGERPRINT,
          choices: [], usage: result.usage });
      }
      write("[DONE]");
      res.end();
    } else {
      let text = "";
      let args = "";
      let toolName;
      result = await engine.complete(request, decision, pieces, {
        signal: abort.signal,
        onText: (d) => { firstAt ||= performance.now(); text += d; },
        onToolStart: (name) => { toolName = name; },
        onToolArguments: (d) => { firstAt ||= performance.now(); args += d; },
      });
      if (!result) return log("chat json aborted: the client went away");
      const message = { role: "assistant", content: toolName ? null : text, refusal: null };
      if (toolName) message.tool_calls = [{ id: callId, type: "function", function: { name: toolName, arguments: args } }];
      sendJson(res, 200, {
        id, object: "chat.completion", created, model: MODEL_ID, system_fingerprint: FINGERPRINT,
        choices: [{ index: 0, message, logprobs: null, finish_reason: result.finishReason }],
        usage: result.usage,
      });
    }
    const ms = (t) => Math.round(t - started);
    log(`chat ${request.stream ? "stream" : "json"} ${decision.mode === "tool" ? `tool(${decision.reason})` : "text"} ` +
      `${result.finishReason} prompt ${result.usage.prompt_tokens} completion ${result.usage.completion_tokens} ` +
      `first ${firstAt ? ms(firstAt) : "-"} ms total ${ms(performance.now())} ms`);
  });
}

// ---------------------------------------------------------------------------------------------------------------

const server = createServer(async (req, res) => {
  cors(req, res);
  const path = new URL(req.url, "http://x").pathname.replace(/\/+$/, "") || "/";
  try {
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "Content-Length": "0" });
      return res.end();
    }
    if (req.method === "GET" && path === "/health") {
      return sendJson(res, 200, { status: "ok", model: MODEL_ID, threads: engine.threads, context: engine.contextSize,
        queued, uptime_s: Math.floor(Date.now() / 1000) - startedAt });
    }
    if (req.method === "GET" && path === "/v1/models") return sendJson(res, 200, { object: "list", data: [modelObject()] });
    if (req.method === "GET" && path.startsWith("/v1/models/")) {
      const id = decodeURIComponent(path.slice("/v1/models/".length));
      if (id === MODEL_ID) return sendJson(res, 200, modelObject());
      return sendError(res, 404, `The model '${id}' does not exist`, { code: "model_not_found", param: "model" });
    }
    if (path === "/v1/chat/completions") {
      if (req.method !== "POST") return sendError(res, 405, "Use POST for /v1/chat/completions");
      return await chatCompletions(req, res);
    }
    sendError(res, 404, `Unknown route: ${req.method} ${path}`, { code: "unknown_url" });
  } catch (e) {
    if (res.headersSent) return res.destroy();
    if (e instanceof RequestError) return sendError(res, e.status, e.message, e);
    if (e.code === "context_length_exceeded") return sendError(res, 400, e.message, { code: e.code, param: "messages" });
    log(`error: ${e.stack ?? e}`);
    sendError(res, 500, e.message ?? String(e), { type: "server_error" });
  }
});

server.on("error", (e) => {
  console.error(`server.mjs: cannot listen on ${args.host}:${args.port}: ${e.code === "EADDRINUSE" ? "the port is in use" : e.message}`);
  process.exit(1);
});
server.listen(Number(args.port), args.host, () => {
  const { address, port } = server.address();
  console.log(`local-llm: ${MODEL_ID} on http://${address}:${port}/v1 (pid ${process.pid})`);
});

let stopping = false;
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping`);
    server.close();
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 2000).unref();
    engine.dispose().finally(() => process.exit(0));
  });
}
