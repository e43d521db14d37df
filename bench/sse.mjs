// (f) SSE payloads for the built-in provider workload, and the loopback server that serves them.
// The same bytes go to both implementations. Each payload: a streamed text answer of many small
// deltas followed by one tool call whose arguments arrive in small fragments, as real APIs send.
import { createServer } from "node:http";

const TEXT_DELTAS = 10_000;
const ARG_FRAGMENTS = 2_000;

function pieces() {
  const text = Array.from({ length: TEXT_DELTAS }, (_, i) => (i % 5 === 0 ? " token" : "s and"));
  const args = JSON.stringify({ path: "notes.md", content: "line of text that goes on\n".repeat(ARG_FRAGMENTS / 2) });
  const frag = [];
  const n = Math.ceil(args.length / ARG_FRAGMENTS);
  for (let i = 0; i < args.length; i += n) frag.push(args.slice(i, i + n));
  return { text, frag };
}

export function openAIChatPayload() {
  const { text, frag } = pieces();
  const base = { id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1_700_000_000, model: "gpt-bench" };
  const out = [];
  const chunk = (delta, finish = null) => out.push(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: "assistant", content: "" });
  for (const t of text) chunk({ content: t });
  chunk({ tool_calls: [{ index: 0, id: "call_bench_1", type: "function", function: { name: "write_file", arguments: "" } }] });
  for (const f of frag) chunk({ tool_calls: [{ index: 0, function: { arguments: f } }] });
  chunk({}, "tool_calls");
  out.push(`data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: TEXT_DELTAS + ARG_FRAGMENTS, total_tokens: 12 + TEXT_DELTAS + ARG_FRAGMENTS } })}\n\n`);
  out.push("data: [DONE]\n\n");
  return Buffer.from(out.join(""));
}

export function anthropicPayload() {
  const { text, frag } = pieces();
  const out = [];
  const ev = (type, data) => out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev("message_start", {
    message: { id: "msg_bench", type: "message", role: "assistant", model: "claude-bench", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
  });
  ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
  ev("ping", {});
  for (const t of text) ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: t } });
  ev("content_block_stop", { index: 0 });
  ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "toolu_bench_1", name: "write_file", input: {} } });
  for (const f of frag) ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: f } });
  ev("content_block_stop", { index: 1 });
  ev("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: TEXT_DELTAS + ARG_FRAGMENTS } });
  ev("message_stop", {});
  return Buffer.from(out.join(""));
}

export const PAYLOADS = { "openai-completions": openAIChatPayload, "anthropic-messages": anthropicPayload };

/** Serves the payloads on 127.0.0.1 (any path ending in /chat/completions or /messages), written in 16 KiB chunks. */
export function startServer() {
  const bodies = { openai: openAIChatPayload(), anthropic: anthropicPayload() };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      const path = req.url.split("?")[0];
      const body = path.endsWith("/chat/completions") ? bodies.openai : path.endsWith("/messages") ? bodies.anthropic : null;
      if (!body) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (let i = 0; i < body.length; i += 16384) {
        if (!res.write(body.subarray(i, i + 16384))) await new Promise((r) => res.once("drain", r));
      }
      res.end();
    });
  });
  server.keepAliveTimeout = 1000;
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// As a child process: serve until stdin closes, print the port.
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startServer();
  process.stdout.write(`${server.address().port}\n`);
  process.stdin.on("end", () => server.close(() => process.exit(0)));
  process.stdin.resume();
}
