// A scripted, offline stand-in for a model: it streams like a real provider (start, token-sized
// deltas, tool-call argument fragments, done) through createAssistantMessageEventStream, and
// answers the design document's example: list the files and read the README in parallel, then
// summarise what the tools returned.
export function offlineModel({ createAssistantMessageEventStream }, { chunkDelayMs = 15 } = {}) {
  return function streamFn(model, context, options) {
    const stream = createAssistantMessageEventStream();
    const message = {
      role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "pending", timestamp: Date.now(),
    };
    const results = context.messages.filter((m) => m.role === "toolResult");
    const lastUser = [...context.messages].reverse().find((m) => m.role === "user");
    const askedForTools = results.length === 0 && lastUser !== undefined;
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const aborted = () => options?.signal?.aborted;
    (async () => {
      stream.push({ type: "start", partial: message });
      const blocks = askedForTools
        ? [
            { kind: "text", text: "I'll list the files and read the README at the same time." },
            { kind: "toolCall", id: "call_list", name: "list_files", arguments: { path: "." } },
            { kind: "toolCall", id: "call_read", name: "read_file", arguments: { path: "README.md" } },
          ]
        : [{ kind: "text", text: summarise(results) }];
      for (const block of blocks) {
        const index = message.content.length;
        if (block.kind === "text") {
          message.content.push({ type: "text", text: "" });
          stream.push({ type: "text_start", contentIndex: index, partial: message });
          for (const piece of block.text.match(/.{1,6}/gs) ?? []) {
            if (aborted()) return fail();
            await sleep(chunkDelayMs);
            message.content[index].text += piece;
            stream.push({ type: "text_delta", contentIndex: index, delta: piece, partial: message });
          }
          stream.push({ type: "text_end", contentIndex: index, content: message.content[index].text, partial: message });
        } else {
          const call = { type: "toolCall", id: block.id, name: block.name, arguments: {} };
          message.content.push(call);
          stream.push({ type: "toolcall_start", contentIndex: index, partial: message });
          const json = JSON.stringify(block.arguments);
          for (const piece of json.match(/.{1,8}/gs) ?? []) {
            if (aborted()) return fail();
            await sleep(chunkDelayMs);
            stream.push({ type: "toolcall_delta", contentIndex: index, delta: piece, partial: message });
          }
          call.arguments = block.arguments;
          stream.push({ type: "toolcall_end", contentIndex: index, toolCall: call, partial: message });
        }
      }
      message.stopReason = askedForTools ? "toolUse" : "stop";
      stream.push({ type: "done", reason: message.stopReason, message });
    })();
    function fail() {
      message.stopReason = "aborted";
      message.errorMessage = "Request was aborted";
      stream.push({ type: "error", reason: "aborted", error: message });
    }
    return stream;
  };
}

function summarise(results) {
  const text = (m) => m.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  const listing = results.find((m) => m.toolName === "list_files");
  const readme = results.find((m) => m.toolName === "read_file");
  const files = listing ? text(listing).split("\n").filter(Boolean) : [];
  const firstLine = readme ? text(readme).split("\n").find((l) => l.trim()) ?? "" : "";
  return `The directory holds ${files.length} entries (${files.slice(0, 5).join(", ")}${files.length > 5 ? ", …" : ""}). ` +
    `The README starts with: "${firstLine.replace(/^#\s*/, "")}".`;
}
