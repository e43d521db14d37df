// The offline default: a scripted stand-in for a model. It is not a language model: it reads the latest user message
// with two regular expressions and streams a fixed kind of answer, through the package's
// createAssistantMessageEventStream, as a provider would (start, text word by word, tool calls, done).
//
//   "Charge Ada 25 euros"                       → charge_card {customer: "Ada", cents: 2500}  (waits for approval)
//   "Charge Ada 5 euros"                        → charge_card {customer: "Ada", cents: 500}   (runs at once)
//   "Message Ada: your order shipped"           → send_message {to: "Ada", text: "your order shipped"}
//   "Charge Ada 25 euros and Bob 40 euros, then message Ada: thanks"  → the three calls in one response
//
// Every "<Name> <amount> euros" is a charge, "message <Name>: <text>" (to the end of the prompt) a message; the calls
// go out together in the order the prompt names them, with the ids call_1, call_2, … counted over the transcript.
// When the results are in, it answers with one line per result. Anything else gets a note saying what it understands.
import { createAssistantMessageEventStream } from "agent-loop-wasm";

/** The model object of the script (no provider reads it: the stream function below answers for it). */
export const SCRIPTED_MODEL = Object.freeze({
  id: "scripted",
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

const CHARGE = /(\p{Lu}\p{L}*) (\d+(?:\.\d{1,2})?) euros?/gu;
const MESSAGE = /\bmessage (\p{Lu}\p{L}*): (.+)$/isu;
const NO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** `(model, context, options) => AssistantMessageEventStream`; `chunkDelayMs` paces the words of its text. */
export function scriptedStreamFn({ chunkDelayMs = 5 } = {}) {
  return (model, context, options) => {
    const stream = createAssistantMessageEventStream();
    const signal = options?.signal;
    const reply = planReply(context.messages);
    const message = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: NO_USAGE,
      stopReason: "stop",
      timestamp: Date.now(),
    };
    const aborted = () => {
      message.stopReason = "aborted";
      message.errorMessage = "Request was aborted";
      stream.push({ type: "error", reason: "aborted", error: message });
    };
    (async () => {
      await sleep(chunkDelayMs);
      if (signal?.aborted) return aborted();
      stream.push({ type: "start", partial: message });
      if (reply.text) {
        const block = { type: "text", text: "" };
        message.content.push(block);
        const index = message.content.length - 1;
        stream.push({ type: "text_start", contentIndex: index, partial: message });
        for (const word of reply.text.match(/\s*\S+/g)) {
          await sleep(chunkDelayMs);
          if (signal?.aborted) return aborted();
          block.text += word;
          stream.push({ type: "text_delta", contentIndex: index, delta: word, partial: message });
        }
        stream.push({ type: "text_end", contentIndex: index, content: block.text, partial: message });
      }
      for (const call of reply.toolCalls) {
        const block = { type: "toolCall", id: call.id, name: call.name, arguments: call.arguments };
        message.content.push(block);
        const index = message.content.length - 1;
        stream.push({ type: "toolcall_start", contentIndex: index, partial: message });
        stream.push({ type: "toolcall_delta", contentIndex: index, delta: JSON.stringify(call.arguments), partial: message });
        stream.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial: message });
      }
      message.stopReason = reply.toolCalls.length ? "toolUse" : "stop";
      stream.push({ type: "done", reason: message.stopReason, message });
    })();
    return stream;
  };
}

/** The next reply for a transcript: `{ text, toolCalls: [{ id, name, arguments }] }`. */
export function planReply(messages) {
  const last = messages.at(-1);
  if (last?.role === "toolResult") {
    const start = messages.findLastIndex((m) => m.role === "user");
    const lines = messages
      .slice(start + 1)
      .filter((m) => m.role === "toolResult")
      .map((r) => `- ${r.toolName}${r.isError ? " failed" : ""}: ${r.content.map((c) => c.text ?? "").join("")}`);
    return { text: `Here is what happened:\n${lines.join("\n")}`, toolCalls: [] };
  }
  const prompt = typeof last?.content === "string" ? last.content : (last?.content ?? []).map((c) => c.text ?? "").join("");
  const found = [];
  for (const m of prompt.matchAll(CHARGE)) {
    found.push({ at: m.index, name: "charge_card", arguments: { customer: m[1], cents: Math.round(Number(m[2]) * 100) } });
  }
  const message = MESSAGE.exec(prompt);
  if (message) found.push({ at: message.index, name: "send_message", arguments: { to: message[1], text: message[2].trim() } });
  if (!found.length) {
    return {
      text: 'I am a scripted stand-in, not a language model. I understand "Charge Ada 25 euros" and "Message Ada: <text>".',
      toolCalls: [],
    };
  }
  let next = messages.flatMap((m) => (m.role === "assistant" ? m.content.filter((c) => c.type === "toolCall") : [])).length;
  const toolCalls = found.sort((a, b) => a.at - b.at).map(({ name, arguments: args }) => ({ id: `call_${++next}`, name, arguments: args }));
  return { text: "", toolCalls };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
