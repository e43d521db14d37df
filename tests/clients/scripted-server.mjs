// A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for the real-client test: each request gets
// the next scripted response, streamed in the exact SSE wire format; every request is recorded (method, path, body).
//
// A scripted response is one of:
//   { text, finish = "stop" }                         streamed content in a few deltas
//   { calls: [{ id, name, args }], text?, finish }    tool calls (arguments streamed in pieces), finish "tool_calls"
//   { status, body }                                  an HTTP error with a JSON body
//   { cut: text }                                     starts streaming text, then destroys the socket mid-way
//   { stall: text }                                   streams text, then waits until the client goes away
import { createServer } from "node:http";

const CREATED = 1700000000;

function chunk(model, delta, finish = null, usage) {
  const body = { id: "chatcmpl-1", object: "chat.completion.chunk", created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finish }] };
  if (usage) body.usage = usage;
  return `data: ${JSON.stringify(body)}\n\n`;
}

const USAGE = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };

/** Splits `s` into `n` roughly equal pieces (at least one). */
function pieces(s, n = 3) {
  if (s.length <= 1) return [s];
  const size = Math.ceil(s.length / n);
  const out = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function sseFrames(model, response) {
  const frames = [chunk(model, { role: "assistant", content: "" })];
  if (response.text) for (const p of pieces(response.text)) frames.push(chunk(model, { content: p }));
  (response.calls ?? []).forEach((call, index) => {
    const args = JSON.stringify(call.args);
    const [first, ...rest] = pieces(args);
    frames.push(chunk(model, { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: first } }] }));
    for (const p of rest) frames.push(chunk(model, { tool_calls: [{ index, function: { arguments: p } }] }));
  });
  const finish = response.finish ?? (response.calls?.length ? "tool_calls" : "stop");
  frames.push(chunk(model, {}, finish));
  frames.push(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: CREATED, model, choices: [], usage: USAGE })}\n\n`);
  frames.push("data: [DONE]\n\n");
  return frames;
}

export async function startScriptedServer(script) {
  const queue = script.slice();
  const requests = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      let body;
      try { body = JSON.parse(raw); } catch { body = raw; }
      requests.push({ method: req.method, path: req.url, body });
      const response = queue.shift() ?? { status: 500, body: { error: { message: "script exhausted" } } };
      const model = typeof body === "object" && body?.model ? body.model : "mock-model";
      if (response.status) {
        res.writeHead(response.status, { "content-type": "application/json", connection: "close" }).end(JSON.stringify(response.body ?? {}));
        return;
      }
      // No keep-alive: a socket left by an aborted response is never reused, so no request races its reset.
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
      if (response.cut !== undefined) {
        res.write(chunk(model, { role: "assistant", content: "" }));
        res.write(chunk(model, { content: response.cut }));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (response.stall !== undefined) {
        res.write(chunk(model, { role: "assistant", content: "" }));
        res.write(chunk(model, { content: response.stall }));
        return; // held open until the client aborts
      }
      for (const frame of sseFrames(model, response)) res.write(frame);
      res.end();
    });
  });
  server.on("connection", (s) => { sockets.add(s); s.on("close", () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    remaining: () => queue.length,
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}
