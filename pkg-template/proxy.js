// `streamProxy` (issue 14): a stream function for apps whose model calls go through their own server, with the
// observable behaviour of pi-agent-core 1.6.0's: one POST to `<proxyUrl>/api/stream`, server-sent `data:` lines of
// proxy events (assistant events without `partial`), the partial message rebuilt here. No loop logic; the live
// tool-call arguments come from the partial-JSON parser (P-6.4.2) the built-in providers use.
import { parsePartial } from "./partial-json.js";
import { AssistantMessageEventStream } from "./streams.js";
import { codedError } from "./errors.js";
import { zeroUsage } from "./usage.js";

const ABORTED = "Request aborted by user";
const CUT = "Connection closed by proxy server before the response completed";

/** The request options the proxy server gets, in the reference's order (JSON.stringify drops the undefined ones). */
function requestOptions(options) {
  return {
    temperature: options.temperature,
    samplingParams: options.samplingParams,
    maxTokens: options.maxTokens,
    reasoning: options.reasoning,
    cacheRetention: options.cacheRetention,
    sessionId: options.sessionId,
    disableContinuation: options.disableContinuation,
    headers: options.headers,
    metadata: options.metadata,
    transport: options.transport,
    thinkingBudgets: options.thinkingBudgets,
    maxRetryDelayMs: options.maxRetryDelayMs,
  };
}

function emptyPartial(model) {
  return {
    role: "assistant",
    stopReason: "pending",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: zeroUsage(),
    timestamp: Date.now(),
  };
}

/** The live arguments of `text` (an object; `{}` until one shows), from the tolerant parser. */
const partialArguments = parsePartial;

/**
 * Applies one proxy event to `partial` and answers the assistant event to push (undefined: push nothing).
 * A delta or end for a block of another type throws, which ends the stream with an error, as in the reference.
 */
function applyProxyEvent(event, partial, argumentTexts) {
  const index = event.contentIndex;
  const block = partial.content[index];
  switch (event.type) {
    case "start":
      return { type: "start", partial };
    case "text_start":
      partial.content[index] = { type: "text", text: "" };
      return { type: "text_start", contentIndex: index, partial };
    case "text_delta":
      if (block?.type !== "text") throw new Error("Received text_delta for non-text content");
      block.text += event.delta;
      return { type: "text_delta", contentIndex: index, delta: event.delta, partial };
    case "text_end":
      if (block?.type !== "text") throw new Error("Received text_end for non-text content");
      block.textSignature = event.contentSignature;
      return { type: "text_end", contentIndex: index, content: block.text, partial };
    case "thinking_start":
      partial.content[index] = { type: "thinking", thinking: "" };
      return { type: "thinking_start", contentIndex: index, partial };
    case "thinking_delta":
      if (block?.type !== "thinking") throw new Error("Received thinking_delta for non-thinking content");
      block.thinking += event.delta;
      return { type: "thinking_delta", contentIndex: index, delta: event.delta, partial };
    case "thinking_end":
      if (block?.type !== "thinking") throw new Error("Received thinking_end for non-thinking content");
      block.thinkingSignature = event.contentSignature;
      return { type: "thinking_end", contentIndex: index, content: block.thinking, partial };
    case "toolcall_start":
      partial.content[index] = { type: "toolCall", id: event.id, name: event.toolName, arguments: {} };
      argumentTexts.set(index, "");
      return { type: "toolcall_start", contentIndex: index, partial };
    case "toolcall_delta": {
      const text = argumentTexts.get(index);
      if (block?.type !== "toolCall" || text === undefined) {
        throw new Error("Received toolcall_delta for non-toolCall content");
      }
      const next = text + event.delta;
      argumentTexts.set(index, next);
      // A fresh block object per delta, so consumers comparing by identity see the change.
      partial.content[index] = { ...block, arguments: partialArguments(next) };
      return { type: "toolcall_delta", contentIndex: index, delta: event.delta, partial };
    }
    case "toolcall_end":
      if (block?.type !== "toolCall") return undefined;
      Object.assign(block, event.toolCall);
      argumentTexts.delete(index);
      return { type: "toolcall_end", contentIndex: index, toolCall: block, partial };
    case "done":
      partial.stopReason = event.reason;
      partial.usage = event.usage;
      if (event.providerThinkingLevel !== undefined) partial.providerThinkingLevel = event.providerThinkingLevel;
      return { type: "done", reason: event.reason, message: partial };
    case "error":
      partial.stopReason = event.reason;
      partial.errorMessage = event.errorMessage;
      partial.usage = event.usage;
      if (event.providerThinkingLevel !== undefined) partial.providerThinkingLevel = event.providerThinkingLevel;
      return { type: "error", reason: event.reason, error: partial };
    default:
      console.warn(`Unhandled proxy event type: ${event.type}`);
      return undefined;
  }
}

async function pump(model, context, options, stream) {
  const partial = emptyPartial(model);
  const signal = options.signal;
  let reader;
  const onAbort = () => {
    if (reader) reader.cancel(ABORTED).catch(() => {});
  };
  try {
    signal?.addEventListener("abort", onAbort);
    const response = await fetch(`${options.proxyUrl}/api/stream`, {
      method: "POST",
      headers: { Authorization: `Bearer ${options.authToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model, context, options: requestOptions(options) }),
      signal,
    });
    if (!response.ok) {
      let message = `Proxy error: ${response.status} ${response.statusText}`;
      try {
        const body = await response.json();
        if (body.error) message = `Proxy error: ${body.error}`;
      } catch {
        // not a JSON body: keep the status line
      }
      throw new Error(message);
    }
    reader = response.body.getReader();
    const decoder = new TextDecoder();
    const argumentTexts = new Map();
    let buffer = "";
    let ended = false;
    const line = (text) => {
      if (!text.startsWith("data: ")) return;
      const data = text.slice(6).trim();
      if (!data) return;
      const event = applyProxyEvent(JSON.parse(data), partial, argumentTexts);
      if (event === undefined) return;
      if (event.type === "done" || event.type === "error") ended = true;
      stream.push(event);
    };
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (signal?.aborted) throw new Error(ABORTED);
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop() || "";
      for (const text of lines) line(text);
    }
    if (signal?.aborted) throw new Error(ABORTED);
    // The last line may lack its newline.
    buffer += decoder.decode();
    if (buffer) line(buffer);
    if (!ended) {
      partial.stopReason = "error";
      partial.errorMessage = CUT;
      stream.push({ type: "error", reason: "error", error: partial });
    }
    stream.end();
  } catch (error) {
    const reason = signal?.aborted ? "aborted" : "error";
    partial.stopReason = reason;
    partial.errorMessage = error instanceof Error ? error.message : String(error);
    stream.push({ type: "error", reason, error: partial });
    stream.end();
  } finally {
    try {
      signal?.removeEventListener("abort", onAbort);
    } catch {
      // a hostile signal: nothing left to release
    }
  }
}

/** What ends the stream when reading the arguments themselves threw (hostile getters): no request was made. */
function failed(stream, error) {
  const message = error instanceof Error ? error.message : String(error);
  const partial = { role: "assistant", stopReason: "error", content: [], usage: zeroUsage(), timestamp: Date.now(), errorMessage: message };
  stream.push({ type: "error", reason: "error", error: partial });
  stream.end();
}

/**
 * `streamProxy(model, context, { proxyUrl, authToken, signal, ...streamOptions })`: an `AssistantMessageEventStream`
 * filled from the proxy server. Failures (HTTP status, malformed events, a cut stream, abort) end it with an `error`
 * event, never a rejection.
 */
export function streamProxy(model, context, options) {
  if (model === null || typeof model !== "object") throw codedError("INVALID_ARGUMENT", "streamProxy: model must be an object");
  if (options === null || typeof options !== "object") throw codedError("INVALID_ARGUMENT", "streamProxy: options must be an object");
  const stream = new AssistantMessageEventStream();
  // pump handles every failure after it read the model and the signal; a throw before that lands here.
  pump(model, context, options, stream).catch((error) => failed(stream, error));
  return stream;
}
