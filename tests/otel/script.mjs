// The scripted model, tools and values the telemetry tests share, with no import and no Node API: spans.test.mjs uses
// them in Node (through helpers.mjs), matrix.mjs in Node, Chromium and workerd. The package is passed in.
export const ZERO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

export function usage(input, output, cacheRead = 0, cacheWrite = 0, total = 0) {
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total } };
}

export const model = { id: "m-1", name: "M", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
export const convertToLlm = (messages) => messages.filter((m) => ["system", "user", "assistant", "toolResult"].includes(m.role));
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const user = (text) => ({ role: "user", content: text, timestamp: 1 });

/** A tool with an empty object schema whose `execute` is given. */
export function tool(name, execute, extra = {}) {
  return { name, label: name, description: `${name} tool`, parameters: { type: "object", properties: { n: { type: "number" } } }, execute, ...extra };
}

export const ok = (text) => ({ content: [{ type: "text", text }], details: {} });

/**
 * A scripted model over `lib` (the package: its createAssistantMessageEventStream). Each reply: `{ text?, calls?: [[id, name, args]], stopReason?, usage?, responseId?, errorMessage?,
 * hang?: true }` or a function of (context, options, index) returning one (`throw` inside: the stream function
 * throws). A reply with `hang` streams its start and then nothing until the signal aborts.
 */
export function scriptedWith(lib, replies) {
  const calls = [];
  const streamFn = (m, context, options) => {
    const index = calls.length;
    calls.push({ model: m, context, options });
    let reply = replies[index] ?? { text: "(no more replies)" };
    if (typeof reply === "function") reply = reply(context, options, index);
    const stream = lib.createAssistantMessageEventStream();
    const partial = { role: "assistant", content: [], api: m.api, provider: m.provider, model: m.id, usage: ZERO_USAGE, stopReason: "pending", timestamp: 2 };
    const signal = options?.signal;
    const abort = () => {
      if (stream.done) return;
      stream.push({ type: "error", reason: "aborted", error: { ...partial, stopReason: "aborted", errorMessage: "Request was aborted" } });
    };
    (async () => {
      await sleep(1);
      stream.push({ type: "start", partial });
      if (reply.hang) {
        if (signal?.aborted) abort();
        else signal?.addEventListener("abort", abort, { once: true });
        return;
      }
      await sleep(1);
      if (reply.text !== undefined) {
        partial.content.push({ type: "text", text: "" });
        const i = partial.content.length - 1;
        stream.push({ type: "text_start", contentIndex: i, partial });
        partial.content[i].text = reply.text;
        stream.push({ type: "text_delta", contentIndex: i, delta: reply.text, partial });
        stream.push({ type: "text_end", contentIndex: i, content: reply.text, partial });
      }
      for (const [id, name, args] of reply.calls ?? []) {
        const call = { type: "toolCall", id, name, arguments: args ?? {} };
        partial.content.push(call);
        const i = partial.content.length - 1;
        stream.push({ type: "toolcall_start", contentIndex: i, partial });
        stream.push({ type: "toolcall_end", contentIndex: i, toolCall: call, partial });
      }
      const stopReason = reply.stopReason ?? (reply.calls?.length ? "toolUse" : "stop");
      const final = { ...partial, content: [...partial.content], usage: reply.usage ?? ZERO_USAGE, stopReason };
      if (reply.responseId !== undefined) final.responseId = reply.responseId;
      if (reply.responseModel !== undefined) final.responseModel = reply.responseModel;
      if (stopReason === "error" || stopReason === "aborted") {
        final.errorMessage = reply.errorMessage ?? "failed";
        stream.push({ type: "error", reason: stopReason, error: final });
      } else {
        stream.push({ type: "done", reason: stopReason, message: final });
      }
    })();
    return stream;
  };
  return { streamFn, calls };
}
