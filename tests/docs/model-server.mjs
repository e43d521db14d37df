// The scripted model the docs' code blocks talk to: one loopback server that answers every built-in wire format
// (Chat Completions, Responses, Anthropic Messages, Gemini) the way a helpful model would, deterministically, so that
// a block written for a real service runs unchanged, whichever client sends it: agent-loop-wasm's providers or
// another SDK's (the AI SDK's `@ai-sdk/openai` in docs/from-ai-sdk.md). `preload.mjs` sends each provider's requests
// here, to `/<host>/<path>` (api.openai.com/v1/chat/completions → /api.openai.com/v1/chat/completions).
//
// The policy, read off the request as the model would see it:
// - the conversation ends with tool results → a text answer that quotes them ("get_weather: It is 18 °C in Oslo.");
// - it ends with a user message and tools are declared → one call of each tool the message asks for, by name or by a
//   word only that tool's name has ("weather in Oslo" → get_weather), all in one response, arguments made from the
//   tool's schema and the message ("Oslo" or "notes/" for a string, 25 for a number the message holds), call ids
//   numbered within the conversation (call_1, call_2, …);
// - otherwise → a short text answer naming what it was asked.
// Every reply reports usage (about 4 characters a token), so usage totals and cost limits have figures.
// Requests without the provider's key header are refused as the service would (401), so a block that forgot its
// key fails here too.
//
// What the services do that clients rely on, done here too:
// - streamed or not, as asked: SSE when the body says `stream: true` (OpenAI, Anthropic) or the path is Gemini's
//   `:streamGenerateContent`; else the whole reply as one JSON body of the service's shape (`chat.completion`, a
//   Responses `response` with its `output` items, an Anthropic `message`, a Gemini `generateContent` answer), as the
//   AI SDK's `generateText` asks for it;
// - Responses items are stored (`store` defaults to true there): a reply's message and reasoning items get ids made
//   from a hash of the request and the reply (msg_<hash>, rs_<hash>: the same in every run, whatever ran before, and
//   distinct for distinct conversations), and an `item_reference` in a later request's `input` stands for the item it
//   names, as the AI SDK sends earlier assistant text; an unknown id is refused with OpenAI's 400 error. Function
//   calls keep fc_1, fc_2, … in every reply (their ids show in the call ids the docs print, `call_1|fc_1`); clients
//   send them back whole, so they are not stored.
// `requests` logs each request with the reply the model decided (`reply`: `{ text }` or `{ calls: [{id, name,
// args}] }`) and the `x-docs-block` header preload.mjs adds (`block`), so docs.test.mjs can tell which program
// got which replies (`same-calls`).
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { wire } from "../js/provider-server.mjs";
import { requestedTools } from "../../local-llm/chat.mjs";

const tokens = (text) => Math.max(1, Math.ceil(text.length / 4));
const textOf = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((b) => (typeof b === "string" ? b : (b?.text ?? ""))).join("")
      : "";

// ---------------------------------------------------------------------------------------------------------------
// Requests of each wire format, read into one shape: { tools: [{name, schema}], turns: [{role, text, calls,
// results: [{name, text}]}] }, where `results` are the tool results a "tool" turn carries.

function readCompletions(body) {
  const tools = (body.tools ?? []).map((t) => ({ name: t.function.name, schema: t.function.parameters }));
  const names = new Map();
  const turns = [];
  for (const m of body.messages ?? []) {
    if (m.role === "assistant") {
      for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
      turns.push({ role: "assistant", text: textOf(m.content), calls: (m.tool_calls ?? []).length });
    } else if (m.role === "tool") {
      const result = { name: names.get(m.tool_call_id) ?? "tool", text: textOf(m.content) };
      const last = turns.at(-1);
      if (last?.role === "tool") last.results.push(result);
      else turns.push({ role: "tool", results: [result] });
    } else turns.push({ role: m.role, text: textOf(m.content) });
  }
  return { tools, turns };
}

function readResponses(body, stored) {
  const tools = (body.tools ?? []).filter((t) => t.type === "function").map((t) => ({ name: t.name, schema: t.parameters }));
  const names = new Map();
  const turns = [];
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : (body.input ?? []);
  for (const given of input) {
    const item = given.type === "item_reference" ? stored.get(given.id) : given;
    if (!item) throw new RequestError(400, `Item with id '${given.id}' not found.`, "input");
    if (item.type === "function_call") {
      names.set(item.call_id, item.name);
      turns.push({ role: "assistant", text: "", calls: 1 });
    } else if (item.type === "function_call_output") {
      const result = { name: names.get(item.call_id) ?? "tool", text: typeof item.output === "string" ? item.output : textOf(item.output) };
      const last = turns.at(-1);
      if (last?.role === "tool") last.results.push(result);
      else turns.push({ role: "tool", results: [result] });
    } else if (item.role) {
      const text = Array.isArray(item.content) ? item.content.map((c) => c.text ?? c.refusal ?? "").join("") : textOf(item.content);
      turns.push({ role: item.role === "developer" ? "system" : item.role, text, calls: 0 });
    }
  }
  return { tools, turns };
}

function readAnthropic(body) {
  const tools = (body.tools ?? []).map((t) => ({ name: t.name, schema: t.input_schema }));
  const names = new Map();
  const turns = [];
  for (const m of body.messages ?? []) {
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    const results = blocks.filter((b) => b.type === "tool_result");
    if (results.length) {
      turns.push({ role: "tool", results: results.map((r) => ({ name: names.get(r.tool_use_id) ?? "tool", text: textOf(r.content) })) });
      continue;
    }
    const calls = blocks.filter((b) => b.type === "tool_use");
    for (const c of calls) names.set(c.id, c.name);
    turns.push({ role: m.role, text: blocks.filter((b) => b.type === "text").map((b) => b.text).join(""), calls: calls.length });
  }
  return { tools, turns };
}

function readGoogle(body) {
  const tools = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? [])
    .map((d) => ({ name: d.name, schema: d.parametersJsonSchema ?? d.parameters }));
  const turns = [];
  for (const c of body.contents ?? []) {
    const parts = c.parts ?? [];
    const responses = parts.filter((p) => p.functionResponse);
    if (responses.length) {
      turns.push({
        role: "tool",
        results: responses.map((p) => {
          const r = p.functionResponse.response ?? {};
          return { name: p.functionResponse.name, text: typeof r.output === "string" ? r.output : typeof r.error === "string" ? r.error : JSON.stringify(r) };
        }),
      });
      continue;
    }
    turns.push({
      role: c.role === "model" ? "assistant" : "user",
      text: parts.filter((p) => typeof p.text === "string" && !p.thought).map((p) => p.text).join(""),
      calls: parts.filter((p) => p.functionCall).length,
    });
  }
  return { tools, turns };
}

// ---------------------------------------------------------------------------------------------------------------
// The policy

/**
 * Values a message offers for arguments: quotes, file-like words (`notes.txt`), paths (`notes/`, `./src`), capitalised
 * words (not the first), numbers.
 */
function offered(text) {
  const words = [...text.matchAll(/[\p{L}\p{N}_.\/-]+/gu)].map((m) => m[0]);
  const quoted = [...text.matchAll(/"([^"]+)"|'([^']+)'/g)].map((m) => m[1] ?? m[2]);
  const names = words.slice(1).filter((w) => /^\p{Lu}/u.test(w) && !/^[A-Z]+$/.test(w)).map((w) => w.replace(/[.]+$/, ""));
  const files = words.filter((w) => /^[\w/-]+\.[A-Za-z0-9]+$/.test(w) && !/^\d+(\.\d+)?$/.test(w));
  const paths = words.filter((w) => w.includes("/") && !files.includes(w)).map((w) => w.replace(/(?<=\/)\.+$/, ""));
  const numbers = words.filter((w) => /^-?\d+(\.\d+)?$/.test(w)).map(Number);
  return { strings: [...quoted, ...files, ...paths, ...names], numbers };
}

/** Arguments for `schema` from what the message offers (deterministic; always valid for the simple schemas docs use). */
function argumentsFor(schema, offer, root = schema, depth = 0) {
  if (!schema || typeof schema !== "object" || depth > 8) return {};
  if (schema.$ref && typeof schema.$ref === "string" && schema.$ref.startsWith("#/")) {
    const target = schema.$ref.slice(2).split("/").reduce((node, key) => node?.[key], root);
    return argumentsFor(target, offer, root, depth + 1);
  }
  const branch = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branch) && branch.length) return argumentsFor(branch[0], offer, root, depth + 1);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) {
    return schema.enum.find((v) => offer.strings.some((s) => String(v).toLowerCase() === s.toLowerCase())) ?? schema.enum[0];
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "object":
    case undefined: {
      if (!schema.properties) return {};
      const out = {};
      for (const key of schema.required ?? Object.keys(schema.properties)) {
        if (schema.properties[key]) out[key] = argumentsFor(schema.properties[key], offer, root, depth + 1);
      }
      return out;
    }
    case "string":
      return offer.strings.shift() ?? "example";
    case "integer":
      return Math.round(offer.numbers.shift() ?? 1);
    case "number":
      return offer.numbers.shift() ?? 1;
    case "boolean":
      return false;
    case "array":
      return [];
    case "null":
      return null;
    default:
      return {};
  }
}

/**
 * The reply to a conversation: `{ text }` or `{ calls: [{id, name, args}] }`. Call ids are numbered within the
 * conversation (`call_1`, `call_2`, … after the calls its assistant turns made), so a block's ids do not depend on
 * which blocks ran before it.
 */
export function decide({ tools, turns }) {
  const last = turns.at(-1);
  if (last?.role === "tool") return { text: last.results.map((r) => `${r.name}: ${r.text}`).join("\n") };
  const asked = last?.role === "user" ? last.text : "";
  const wanted = asked ? requestedTools(asked, tools) : [];
  if (wanted.length) {
    const offer = offered(asked);
    const before = turns.reduce((n, t) => n + (t.role === "assistant" ? (t.calls ?? 0) : 0), 0);
    return { calls: wanted.map((t, i) => ({ id: `call_${before + i + 1}`, name: t.name, args: argumentsFor(t.schema, offer) })) };
  }
  return { text: asked ? `You asked: "${asked.slice(0, 120)}". This is the scripted docs model's answer.` : "Hello." };
}

// ---------------------------------------------------------------------------------------------------------------
// The server

/** A request the service would refuse: answered with `status` and the OpenAI-style error body. */
class RequestError extends Error {
  constructor(status, message, param) {
    super(message);
    this.status = status;
    this.param = param;
  }
}

const FORMATS = [
  { api: "openai-completions", path: /\/chat\/completions$/, key: "authorization", read: readCompletions },
  { api: "openai-responses", path: /\/responses$/, key: "authorization", read: readResponses },
  { api: "anthropic-messages", path: /\/messages$/, key: "x-api-key", read: readAnthropic },
  { api: "google-generative-ai", path: /:(stream)?[gG]enerateContent$/, key: "x-goog-api-key", read: readGoogle },
];

/** Whether the request asks for SSE (Gemini says so in its path, the others in the body). */
const streamed = (format, path, body) => (format.api === "google-generative-ai" ? path.endsWith(":streamGenerateContent") : body.stream === true);

function usage(api, input, output) {
  switch (api) {
    case "openai-completions":
      return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
    case "openai-responses":
      return { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + output };
    case "anthropic-messages":
      return { output_tokens: output };
    default:
      return { promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output };
  }
}

/** The `item`s of a Responses SSE text's `response.output_item.done` events: the reply's output, as stored. */
function outputItems(sse) {
  return [...sse.matchAll(/^event: response\.output_item\.done\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]).item);
}

/** The whole reply as the service's non-streamed JSON body. `items`: the Responses output items (from the SSE). */
function wholeBody(api, { text, calls = [] }, { id, model, input, output, items }) {
  const created = Math.floor(Date.now() / 1000);
  switch (api) {
    case "openai-completions": {
      const message = { role: "assistant", content: text ?? null, refusal: null };
      if (calls.length) message.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }));
      return {
        id, object: "chat.completion", created, model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length ? "tool_calls" : "stop" }],
        usage: usage(api, input, output),
      };
    }
    case "openai-responses":
      return { id, object: "response", created_at: created, status: "completed", error: null, incomplete_details: null, model, output: items, usage: usage(api, input, output) };
    case "anthropic-messages":
      return {
        id, type: "message", role: "assistant", model,
        content: [...(text ? [{ type: "text", text }] : []), ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args }))],
        stop_reason: calls.length ? "tool_use" : "end_turn", stop_sequence: null,
        usage: { input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      };
    default:
      return {
        candidates: [{
          content: { role: "model", parts: [...(text ? [{ text }] : []), ...calls.map((c) => ({ functionCall: { name: c.name, args: c.args } }))] },
          finishReason: "STOP", index: 0,
        }],
        usageMetadata: usage(api, input, output), modelVersion: model, responseId: id,
      };
  }
}

/**
 * Starts the server on 127.0.0.1 (port 0). `requests` logs { api, host, path, body, authorized, block, reply, stream }
 * (`reply` and `stream` once answered).
 */
export async function startDocsModel() {
  const requests = [];
  /** Responses output items by id, for `item_reference`s. */
  const stored = new Map();
  const server = createServer(async (req, res) => {
    const parts = [];
    for await (const part of req) parts.push(part);
    const raw = Buffer.concat(parts).toString("utf8");
    const url = new URL(req.url, "http://x");
    const [, host, path] = /^\/([^/]+)(\/.*)$/.exec(url.pathname) ?? [];
    const format = FORMATS.find((f) => f.path.test(path ?? ""));
    // A local server (preload.mjs sends 127.0.0.1:8088 and localhost:11434 to /local…/) takes no key.
    const authorized = host?.startsWith("local") || Boolean(req.headers[format?.key ?? "authorization"] || url.searchParams.get("key"));
    const record = { api: format?.api, host, path, authorized, block: req.headers["x-docs-block"], body: undefined };
    requests.push(record);
    if (!format || req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `the docs model does not serve ${req.method} ${req.url}` } }));
    }
    if (!authorized) {
      res.writeHead(401, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `no API key sent to ${host}` } }));
    }
    record.body = JSON.parse(raw);
    let reply;
    try {
      reply = decide(format.read(record.body, stored));
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      res.writeHead(error.status, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: error.message, type: "invalid_request_error", param: error.param ?? null, code: null } }));
    }
    record.reply = reply;
    record.stream = streamed(format, path, record.body);
    const input = tokens(raw);
    const output = tokens(reply.text ?? JSON.stringify(reply.calls));
    const model = record.body.model ?? "docs-model";
    const hash = createHash("sha256").update(raw).update(JSON.stringify(reply)).digest("hex").slice(0, 16);
    const id = { "openai-completions": "chatcmpl-1", "openai-responses": "resp_1", "anthropic-messages": "msg_01" }[format.api] ?? "resp-g1";
    let sse = wire[format.api].reply({ ...reply, id, model, usage: usage(format.api, input, output), messageId: `msg_${hash}`, reasoningId: `rs_${hash}` });
    // Anthropic reports input tokens in message_start: the builder's fixed figure becomes this request's.
    if (format.api === "anthropic-messages") sse = sse.replace('"input_tokens":100', `"input_tokens":${input}`);
    const items = format.api === "openai-responses" ? outputItems(sse) : [];
    for (const item of items) if (item.type !== "function_call") stored.set(item.id, item);
    if (record.stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      return res.end(sse);
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(wholeBody(format.api, reply, { id, model, input, output, items })));
  });
  const sockets = new Set();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
