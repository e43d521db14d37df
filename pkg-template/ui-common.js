// agent-loop-wasm/ui: what its parts share — the protocol's headers, option checks, the tool part and message shapes
// both directions read and write. Spec: docs/SPEC.md §12.
import { codedError } from "./errors.js";

/** The response headers of the UI message stream protocol (the AI SDK's `UI_MESSAGE_STREAM_HEADERS`). */
export const UI_MESSAGE_STREAM_HEADERS = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
});

/** The key under which content signatures travel in `providerMetadata`, so a posted transcript gives them back. */
export const META = "agentLoop";

export const FINISH_REASONS = { stop: "stop", length: "length", toolUse: "tool-calls", error: "error" };

/** A non-null object, arrays included, functions not: what the AI SDK's parts, chunks and events are. (The binding's
 *  snippets ask `isObjectLike`, functions included, as the core does.) */
export const isObject = (v) => v !== null && typeof v === "object";
export const describe = (v) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v);

export function randomId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  return `msg-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

export function checkOptions(fn, options, spec) {
  if (options === undefined) return {};
  if (!isObject(options) || Array.isArray(options)) throw codedError("INVALID_ARGUMENT", `${fn}: options must be an object, got ${describe(options)}`);
  for (const [key, type] of Object.entries(spec)) {
    const v = options[key];
    if (v === undefined) continue;
    // "checked": checked where it is used (approvalSecret: secretKey).
    const ok = type === "checked" || (type === "array" ? Array.isArray(v) : type === "object" ? isObject(v) && !Array.isArray(v) : typeof v === type);
    if (!ok) throw codedError("INVALID_ARGUMENT", `${fn}: options.${key} must be ${type === "array" || type === "object" ? "an" : "a"} ${type}, got ${describe(v)}`);
  }
  return options;
}

// ---------------------------------------------------------------------------------------------------------------
// Events → chunks
// ---------------------------------------------------------------------------------------------------------------

/**
 * issue 30's `tool_approval_request { toolCallId, toolName, args, reason?, data?, expiresAt? }` as the protocol's
 * `tool-approval-request` chunk. The approval id is the tool call id, so a posted `approval-responded` part maps back
 * to `agent.approve(toolCallId)` / `agent.deny(toolCallId)` with no table kept between requests; with an
 * `approvalSecret`, it is the call's signed token (`approvalToken`). `data` and `expiresAt` travel as the opaque
 * `approvalDescriptor` (the client keeps it as `part.approval.descriptor`).
 */
export function approvalRequestChunk(event, approvalId = event.toolCallId) {
  const descriptor = {};
  if (event.data !== undefined) descriptor.data = event.data;
  if (typeof event.expiresAt === "number") descriptor.expiresAt = event.expiresAt;
  return {
    type: "tool-approval-request",
    approvalId,
    toolCallId: event.toolCallId,
    ...(typeof event.reason === "string" ? { reason: event.reason } : {}),
    ...(Object.keys(descriptor).length > 0 ? { approvalDescriptor: descriptor } : {}),
  };
}


export function defaultToolOutput(result) {
  if (!isObject(result)) return result;
  const output = { content: result.content, details: result.details };
  if (result.structuredContent !== undefined) output.structuredContent = result.structuredContent;
  return output;
}

export function resultText(result) {
  const content = isObject(result) ? result.content : undefined;
  const text = Array.isArray(content) ? content.filter((b) => b?.type === "text").map((b) => b.text).join("\n") : "";
  return text === "" ? "Tool call failed" : text;
}

export const errorMessage = (e) => (e instanceof Error ? e.message : typeof e === "string" ? e : JSON.stringify(e) ?? String(e));

export function signatureMeta(fields) {
  const meta = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) meta[k] = v;
  return Object.keys(meta).length > 0 ? { providerMetadata: { [META]: meta } } : {};
}

/** A user message's content as the parts a `steering-message` chunk (and a user UIMessage) holds: text, images as data: URLs. */
export function userParts(content) {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((b) => {
    if (b?.type === "text") return [{ type: "text", text: b.text }];
    if (b?.type === "image") return [{ type: "file", mediaType: b.mimeType, url: `data:${b.mimeType};base64,${b.data}` }];
    return [];
  });
}

export const isToolPart = (part) => isObject(part) && typeof part.type === "string" && (part.type === "dynamic-tool" || part.type.startsWith("tool-"));
export const toolNameOf = (part) => (part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length));

/** The client's last message when it is an assistant message this response continues (the AI SDK's rule). */
export function continuedMessage(messages) {
  const last = Array.isArray(messages) ? messages[messages.length - 1] : undefined;
  return isObject(last) && last.role === "assistant" && typeof last.id === "string" && Array.isArray(last.parts) ? last : undefined;
}
