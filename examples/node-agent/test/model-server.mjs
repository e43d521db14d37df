// A scripted stand-in for the three cloud APIs on 127.0.0.1, for the tests: it answers each request with the next
// scripted reply, streamed as Server-Sent Events in the provider's own wire format (OpenAI Responses, Anthropic
// Messages, Google Generative AI), and records every request (path, headers, JSON body).
//
//   const server = await modelServer();
//   server.script([{ calls: [{ id, name, args }] }, { text: "Done." }]);
//   OPENAI_BASE_URL=`${server.url}/openai/v1`, ANTHROPIC_BASE_URL=`${server.url}/anthropic`,
//   GEMINI_BASE_URL=`${server.url}/google/v1beta`
import { createServer } from "node:http";

const data = (value) => `data: ${JSON.stringify(value)}\n\n`;
const event = (name, value) => `event: ${name}\n${data(value)}`;
/** Splits text in pieces of up to 5 characters, as providers stream it. */
const pieces = (s) => s.match(/[\s\S]{1,5}/g) ?? [];

/** Per wire format: (`{ text?, calls?: [{ id, name, args }], usage: { input, output } }`, the server's counters) → the SSE body. */
export const WIRE = {
  "openai-responses"({ text, calls = [], usage }, n) {
    let out = event("response.created", { type: "response.created", sequence_number: 0, response: { id: "resp_1", object: "response", status: "in_progress", output: [] } });
    let index = 0;
    if (text) {
      const item = { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] };
      out += event("response.output_item.added", { type: "response.output_item.added", output_index: index, item });
      out += event("response.content_part.added", { type: "response.content_part.added", item_id: "msg_1", output_index: index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      for (const p of pieces(text)) out += event("response.output_text.delta", { type: "response.output_text.delta", item_id: "msg_1", output_index: index, content_index: 0, delta: p });
      out += event("response.output_text.done", { type: "response.output_text.done", item_id: "msg_1", output_index: index, content_index: 0, text });
      out += event("response.output_item.done", { type: "response.output_item.done", output_index: index, item: { ...item, status: "completed", content: [{ type: "output_text", text, annotations: [] }] } });
      index++;
    }
    calls.forEach((c) => {
      // Output item ids are unique over the server's life, as OpenAI's are.
      const item = { type: "function_call", id: `fc_${n.items++}`, call_id: c.id, name: c.name, arguments: "", status: "in_progress" };
      const args = JSON.stringify(c.args);
      out += event("response.output_item.added", { type: "response.output_item.added", output_index: index, item });
      for (const p of pieces(args)) out += event("response.function_call_arguments.delta", { type: "response.function_call_arguments.delta", item_id: item.id, output_index: index, delta: p });
      out += event("response.function_call_arguments.done", { type: "response.function_call_arguments.done", item_id: item.id, output_index: index, arguments: args });
      out += event("response.output_item.done", { type: "response.output_item.done", output_index: index, item: { ...item, arguments: args, status: "completed" } });
      index++;
    });
    const u = { input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: usage.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.input + usage.output };
    return out + event("response.completed", { type: "response.completed", response: { id: "resp_1", object: "response", status: "completed", output: [], usage: u } });
  },
  "anthropic-messages"({ text, calls = [], usage }) {
    const start = { id: "msg_01", type: "message", role: "assistant", model: "claude-haiku-4-5", content: [], stop_reason: null, stop_sequence: null };
    let out = event("message_start", { type: "message_start", message: { ...start, usage: { input_tokens: usage.input, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 } } });
    let index = 0;
    if (text) {
      out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const p of pieces(text)) out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: p } });
      out += event("content_block_stop", { type: "content_block_stop", index });
      index++;
    }
    for (const c of calls) {
      out += event("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: c.id, name: c.name, input: {} } });
      for (const p of pieces(JSON.stringify(c.args))) out += event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: p } });
      out += event("content_block_stop", { type: "content_block_stop", index });
      index++;
    }
    const stop = calls.length ? "tool_use" : "end_turn";
    out += event("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } });
    return out + event("message_stop", { type: "message_stop" });
  },
  "google-generative-ai"({ text, calls = [], usage }) {
    const chunks = pieces(text ?? "").map((p) => [{ text: p }]);
    if (calls.length) chunks.push(calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.args } })));
    const usageMetadata = { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output };
    return chunks
      .map((parts, i) => {
        const last = i === chunks.length - 1;
        const candidate = { content: { parts, role: "model" }, index: 0, ...(last ? { finishReason: "STOP" } : {}) };
        return data({ candidates: [candidate], ...(last ? { usageMetadata } : {}), modelVersion: "gemini-2.5-flash", responseId: "resp-g1" });
      })
      .join("");
  },
};

/** Which wire format a request path speaks. */
function wireOf(path) {
  if (path === "/openai/v1/responses") return "openai-responses";
  if (path === "/anthropic/v1/messages") return "anthropic-messages";
  if (path.startsWith("/google/v1beta/models/") && path.endsWith(":streamGenerateContent?alt=sse")) return "google-generative-ai";
  return undefined;
}

export async function modelServer() {
  let replies = [];
  const requests = [];
  const counters = { items: 1 };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const wire = wireOf(req.url);
    const reply = replies.shift();
    requests.push({ path: req.url, wire, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "null") });
    if (req.method !== "POST" || !wire || !reply) {
      res.writeHead(wire ? 500 : 404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: wire ? "no scripted reply left" : `unknown path ${req.url}` } }));
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.end(WIRE[wire](reply, counters));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** The replies of the next requests, in order. */
    script(list) {
      replies = [...list];
      requests.length = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
