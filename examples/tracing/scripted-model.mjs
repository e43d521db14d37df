// The offline default: a scripted stand-in for a model. It is not a language model: it looks for "weather" and "air"
// in the prompt, asks for get_weather and get_air_quality (together, for the city named after "in", default Oslo),
// and once the results are in answers with them in one sentence. It streams through the package's
// createAssistantMessageEventStream as a provider would, and reports a usage estimated from the request's length
// (about 4 characters a token), so the spans have token counts to show.
import { createAssistantMessageEventStream } from "agent-loop-wasm";

export const SCRIPTED_MODEL = Object.freeze({
  id: "scripted-weather",
  name: "Scripted stand-in (not a language model)",
  api: "scripted",
  provider: "scripted",
  baseUrl: "",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
});

export function scriptedStreamFn() {
  return (model, context, options) => {
    const stream = createAssistantMessageEventStream();
    const reply = planReply(context.messages);
    const tokens = (value) => Math.ceil(JSON.stringify(value).length / 4);
    const input = tokens([context.systemPrompt, context.messages, context.tools]);
    const output = tokens([reply.text, reply.toolCalls]);
    const message = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: reply.toolCalls.length ? "toolUse" : "stop",
      timestamp: Date.now(),
    };
    setTimeout(() => {
      if (options?.signal?.aborted) {
        stream.push({ type: "error", reason: "aborted", error: { ...message, stopReason: "aborted", errorMessage: "Request was aborted" } });
        return;
      }
      stream.push({ type: "start", partial: message });
      if (reply.text) {
        message.content.push({ type: "text", text: reply.text });
        stream.push({ type: "text_start", contentIndex: 0, partial: message });
        stream.push({ type: "text_delta", contentIndex: 0, delta: reply.text, partial: message });
        stream.push({ type: "text_end", contentIndex: 0, content: reply.text, partial: message });
      }
      for (const call of reply.toolCalls) {
        const block = { type: "toolCall", ...call };
        message.content.push(block);
        const index = message.content.length - 1;
        stream.push({ type: "toolcall_start", contentIndex: index, partial: message });
        stream.push({ type: "toolcall_delta", contentIndex: index, delta: JSON.stringify(call.arguments), partial: message });
        stream.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial: message });
      }
      stream.push({ type: "done", reason: message.stopReason, message });
    }, 5);
    return stream;
  };
}

/** The next reply: `{ text, toolCalls: [{ id, name, arguments }] }`. */
export function planReply(messages) {
  const last = messages.at(-1);
  const results = messages.slice(messages.findLastIndex((m) => m.role === "user") + 1).filter((m) => m.role === "toolResult");
  if (last?.role === "toolResult") {
    const text = results.map((r) => `${r.isError ? "(failed) " : ""}${r.content.map((c) => c.text ?? "").join("")}`).join("; ");
    return { text: `${text}.`, toolCalls: [] };
  }
  const prompt = typeof last?.content === "string" ? last.content : (last?.content ?? []).map((c) => c.text ?? "").join("");
  const city = /\bin (\p{Lu}\p{L}*)/u.exec(prompt)?.[1] ?? "Oslo";
  const names = [/weather/i.test(prompt) && "get_weather", /\bair\b/i.test(prompt) && "get_air_quality"].filter(Boolean);
  if (!names.length) {
    return { text: 'I am a scripted stand-in, not a language model: ask me about "the weather and the air quality in Oslo".', toolCalls: [] };
  }
  let next = messages.flatMap((m) => (m.role === "assistant" ? m.content.filter((c) => c.type === "toolCall") : [])).length;
  return { text: "", toolCalls: names.map((name) => ({ id: `call_${++next}`, name, arguments: { city } })) };
}
