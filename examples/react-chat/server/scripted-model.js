// The offline stand-in for a language model: a small scripted stream function, NOT a language model. It reads the
// last user message with two regular expressions (an order number, the word "refund"), looks at the tool results
// since then, and streams a reply as a provider would, built with the package's createAssistantMessageEventStream:
// reasoning and text token by token, then at most one tool call. It only knows this example's two tools.
import { randomUUID } from "node:crypto";
import { createAssistantMessageEventStream } from "agent-loop-wasm";

export const SCRIPTED_MODEL = Object.freeze({
  id: "scripted-support",
  name: "Scripted stand-in (not a language model)",
  api: "scripted",
  provider: "scripted",
  baseUrl: "",
  reasoning: true,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 0,
  maxTokens: 0,
});

export const HELP = 'I am the offline scripted model of this example, not a language model. Ask me "Where is order 1042?" or "Refund order 2077".';

const textOf = (message) =>
  typeof message?.content === "string" ? message.content : (message?.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");

/** The reply to a conversation: { thinking, text, call? }. */
export function planReply(messages) {
  let i = messages.length - 1;
  while (i >= 0 && messages[i].role !== "user") i--;
  const prompt = textOf(messages[i]);
  const results = messages.slice(i + 1).filter((m) => m.role === "toolResult");
  const orderId = /\b(\d{4})\b/.exec(prompt)?.[1];
  const wantsRefund = /\brefund/i.test(prompt);
  const looked = results.find((r) => r.toolName === "lookup_order");
  const refunded = results.find((r) => r.toolName === "refund_order");
  if (!orderId) return { thinking: "There is no order number in the message, so there is nothing to look up.", text: HELP };
  if (!looked) {
    return { thinking: `The customer asks about order ${orderId}. I look it up first.`, text: `Let me look up order ${orderId}.`, call: { name: "lookup_order", arguments: { orderId } } };
  }
  if (looked.isError) return { thinking: "The lookup failed.", text: `${textOf(looked)} Please check the order number.` };
  if (wantsRefund && !refunded) {
    return {
      thinking: `Order ${orderId} exists. A refund moves money, so a person approves it first.`,
      text: `${textOf(looked)} I am asking to refund it in full.`,
      call: { name: "refund_order", arguments: { orderId } },
    };
  }
  if (refunded?.isError) {
    const reason = /was denied: (.*)$/s.exec(textOf(refunded))?.[1];
    return { thinking: "The refund was not approved, so no money moved.", text: `I did not refund order ${orderId}: the refund was denied${reason ? ` (${reason})` : ""}. The order stays as it is.` };
  }
  if (refunded) return { thinking: "The refund went through.", text: `Done. ${textOf(refunded)} The money reaches the card within 5 to 10 days.` };
  return { thinking: "I have the order, so I answer with its status.", text: `${textOf(looked)} Is there anything else I can do for this order? I can refund it if you ask me to.` };
}

const tokens = (s) => s.match(/\s*\S+/g) ?? [];
const ZERO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** The stream function: `(model, context, options) => AssistantMessageEventStream`, one token every `delayMs`. */
export function scriptedStreamFn({ delayMs = 40 } = {}) {
  return (model, context, options) => {
    const stream = createAssistantMessageEventStream();
    const signal = options?.signal;
    const reply = planReply(context.messages ?? []);
    const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: ZERO_USAGE, stopReason: "stop", timestamp: Date.now() };
    const wait = () => new Promise((resolve) => setTimeout(resolve, delayMs));
    (async () => {
      stream.push({ type: "start", partial });
      for (const [key, value] of [["thinking", reply.thinking], ["text", reply.text]]) {
        const block = { type: key, [key]: "" };
        const i = partial.content.push(block) - 1;
        stream.push({ type: `${key}_start`, contentIndex: i, partial });
        for (const token of tokens(value)) {
          await wait();
          if (signal?.aborted) return abort();
          block[key] += token;
          stream.push({ type: `${key}_delta`, contentIndex: i, delta: token, partial });
        }
        stream.push({ type: `${key}_end`, contentIndex: i, content: block[key], partial });
      }
      if (reply.call) {
        const call = { type: "toolCall", id: `call_${randomUUID().slice(0, 8)}`, name: reply.call.name, arguments: {} };
        const i = partial.content.push(call) - 1;
        stream.push({ type: "toolcall_start", contentIndex: i, partial });
        const json = JSON.stringify(reply.call.arguments);
        for (const piece of [json.slice(0, 8), json.slice(8)]) {
          await wait();
          if (signal?.aborted) return abort();
          stream.push({ type: "toolcall_delta", contentIndex: i, delta: piece, partial });
        }
        call.arguments = reply.call.arguments;
        stream.push({ type: "toolcall_end", contentIndex: i, toolCall: call, partial });
        partial.stopReason = "toolUse";
      }
      stream.push({ type: "done", reason: partial.stopReason, message: partial });
      stream.end();
    })();

    function abort() {
      partial.stopReason = "aborted";
      partial.errorMessage = "Request was aborted";
      stream.push({ type: "error", reason: "aborted", error: partial });
      stream.end();
    }
    return stream;
  };
}
