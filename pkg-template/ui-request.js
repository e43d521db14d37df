// agent-loop-wasm/ui: Request side: UIMessage[] → agent messages, approval responses → decisions
import { codedError } from "./errors.js";
import { zeroUsage } from "./usage.js";
import { META, checkOptions, describe, isObject, toolNameOf } from "./ui-common.js";

const IGNORED_PARTS = new Set(["step-start", "source-url", "source-document", "custom"]);

/** `data:<type>[;base64],<data>` → { mediaType, base64?, text? }, or undefined. */
function parseDataUrl(url) {
  const m = /^data:([^,]*?),(.*)$/s.exec(url);
  if (!m) return undefined;
  const params = m[1].split(";");
  const base64 = params.includes("base64");
  return { mediaType: params[0] || "text/plain", base64, data: m[2] };
}

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-ndjson|yaml|x-yaml)\b)/;

function decodeText(parsed) {
  if (!parsed.base64) return decodeURIComponent(parsed.data);
  const binary = atob(parsed.data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/** A UI file part as a content block, or a string saying why it cannot be one. */
function fileBlock(part) {
  if (typeof part.url !== "string" || typeof part.mediaType !== "string") return "a file part needs string url and mediaType";
  const parsed = parseDataUrl(part.url);
  if (!parsed) return `a file part whose url is not a data: URL (${part.url.slice(0, 60)}) does not map: fetch it and post it as a data: URL`;
  if (part.mediaType.startsWith("image/")) {
    if (!parsed.base64) return "an image file part must be a base64 data: URL";
    return { type: "image", data: parsed.data, mimeType: part.mediaType };
  }
  if (TEXT_TYPES.test(part.mediaType)) return { type: "text", text: decodeText(parsed) };
  return `a file part of type ${part.mediaType} does not map (only images and text files do)`;
}

const metaOf = (part, key) => (isObject(part?.[key]) && isObject(part[key][META]) ? part[key][META] : {});

/** The tool result a tool part holds (output, error, denial), or undefined when the call has none yet. */
function toolResultOf(part, toolName, timestamp) {
  const base = { role: "toolResult", toolCallId: part.toolCallId, toolName };
  if (part.state === "output-available" && part.preliminary !== true) {
    const o = part.output;
    if (isObject(o) && Array.isArray(o.content)) {
      const r = { ...base, content: o.content };
      if (o.details !== undefined) r.details = o.details;
      if (o.structuredContent !== undefined) r.structuredContent = o.structuredContent;
      return { ...r, isError: false, timestamp };
    }
    const text = typeof o === "string" ? o : JSON.stringify(o) ?? "";
    return { ...base, content: [{ type: "text", text }], isError: false, timestamp };
  }
  if (part.state === "output-error") {
    return { ...base, content: [{ type: "text", text: String(part.errorText ?? "") }], isError: true, timestamp };
  }
  if (part.state === "output-denied") {
    const reason = part.approval?.reason;
    const text = typeof reason === "string" && reason !== "" ? `Tool call "${part.toolCallId}" was denied: ${reason}` : `Tool call "${part.toolCallId}" was denied`;
    return { ...base, content: [{ type: "text", text }], isError: true, timestamp };
  }
  return undefined;
}

/**
 * The `messages` a `useChat` client posts (UIMessage[]) as agent messages: user messages (text, image and text files
 * as data: URLs), and per step of an assistant message one assistant message (text, reasoning, tool calls) followed by
 * the tool results its tool parts hold. What has no agent form throws a TypeError naming the part, or is dropped with
 * `options.unsupported: "drop"`; parts meant for the UI only (step-start, sources, data-*, custom) are skipped.
 */
export function convertToAgentMessages(messages, options) {
  const fn = "convertToAgentMessages";
  if (!Array.isArray(messages)) throw codedError("INVALID_ARGUMENT", `${fn}: messages must be an array of UIMessage, got ${describe(messages)}`);
  const opts = checkOptions(fn, options, { unsupported: "string", model: "object" });
  if (opts.unsupported !== undefined && opts.unsupported !== "error" && opts.unsupported !== "drop") {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.unsupported must be "error" or "drop", got ${JSON.stringify(opts.unsupported)}`);
  }
  const model = opts.model ?? {};
  const origin = {
    api: typeof model.api === "string" ? model.api : "ui-message",
    provider: typeof model.provider === "string" ? model.provider : "ui-message",
    model: typeof model.id === "string" ? model.id : "ui-message",
  };
  const drop = opts.unsupported === "drop";
  const timestamp = Date.now();
  const result = [];
  const unsupported = (path, why) => {
    if (!drop) throw codedError("INVALID_ARGUMENT", `${fn}: ${path}: ${why}`);
  };

  const userContent = (parts, path) => {
    const content = [];
    parts.forEach((part, j) => {
      const at = `${path}[${j}]`;
      if (!isObject(part) || typeof part.type !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${at} must be a part object with a string type, got ${describe(part)}`);
      if (part.type === "text") content.push({ type: "text", text: String(part.text ?? "") });
      else if (part.type === "file") {
        const block = fileBlock(part);
        if (typeof block === "string") unsupported(at, block);
        else content.push(block);
      } else if (!IGNORED_PARTS.has(part.type) && !part.type.startsWith("data-")) {
        unsupported(at, `a ${part.type} part of a user message does not map`);
      }
    });
    return content;
  };

  messages.forEach((message, i) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw codedError("INVALID_ARGUMENT", `${fn}: ${at} must be a UIMessage object, got ${describe(message)}`);
    if (!Array.isArray(message.parts)) throw codedError("INVALID_ARGUMENT", `${fn}: ${at}.parts must be an array, got ${describe(message.parts)}`);
    if (message.role === "user") {
      const content = userContent(message.parts, `${at}.parts`);
      if (content.length > 0) result.push({ role: "user", content, timestamp });
      return;
    }
    if (message.role === "system") {
      unsupported(at, "a system message does not map: the agent's system prompt is server state (a client must not rewrite it)");
      return;
    }
    if (message.role !== "assistant") throw codedError("INVALID_ARGUMENT", `${fn}: ${at}.role must be "user", "assistant" or "system", got ${JSON.stringify(message.role)}`);

    let content = [];
    let results = [];
    const flush = () => {
      if (content.length > 0) {
        const calls = content.some((b) => b.type === "toolCall");
        result.push({ role: "assistant", content, ...origin, usage: zeroUsage(), stopReason: calls ? "toolUse" : "stop", timestamp });
      }
      result.push(...results);
      content = [];
      results = [];
    };
    message.parts.forEach((part, j) => {
      const pat = `${at}.parts[${j}]`;
      if (!isObject(part) || typeof part.type !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${pat} must be a part object with a string type, got ${describe(part)}`);
      const type = part.type;
      if (type === "step-start") {
        flush();
      } else if (type === "text") {
        content.push({ type: "text", text: String(part.text ?? ""), ...pick(metaOf(part, "providerMetadata"), ["textSignature"]) });
      } else if (type === "reasoning") {
        const meta = metaOf(part, "providerMetadata");
        content.push({ type: "thinking", thinking: String(part.text ?? ""), ...pick(meta, ["thinkingSignature"]), ...(meta.redacted === true ? { redacted: true } : {}) });
      } else if (type === "dynamic-tool" || type.startsWith("tool-")) {
        if (typeof part.toolCallId !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${pat}.toolCallId must be a string, got ${describe(part.toolCallId)}`);
        const name = toolNameOf(part);
        if (typeof name !== "string" || name === "") throw codedError("INVALID_ARGUMENT", `${fn}: ${pat} names no tool`);
        if (part.state === "input-streaming") return; // the model never finished the call: it was not made
        const args = isObject(part.input) && !Array.isArray(part.input) ? part.input : {};
        content.push({ type: "toolCall", id: part.toolCallId, name, arguments: args, ...pick(metaOf(part, "callProviderMetadata"), ["thoughtSignature"]) });
        const r = toolResultOf(part, name, timestamp);
        if (r) results.push(r);
      } else if (type === "steering-message") {
        flush();
        const steered = userContent(Array.isArray(part.parts) ? part.parts : [], `${pat}.parts`);
        if (steered.length > 0) result.push({ role: "user", content: steered, timestamp });
      } else if (type === "file" || type === "reasoning-file") {
        unsupported(pat, `a ${type} part of an assistant message does not map (assistant messages hold text, reasoning and tool calls)`);
      } else if (!IGNORED_PARTS.has(type) && !type.startsWith("data-")) {
        unsupported(pat, `a ${type} part does not map`);
      }
    });
    flush();
  });
  return result;
}

function pick(obj, keys) {
  const out = {};
  for (const k of keys) if (typeof obj[k] === "string") out[k] = obj[k];
  return out;
}

/**
 * The approval responses of the last message (an assistant message whose tool parts are `approval-responded`, as the
 * client's `addToolApprovalResponse` leaves them) as decisions `{ toolCallId, approved, reason? }`: apply each with
 * `agent.approve(toolCallId)` / `agent.deny(toolCallId, { reason })`, or pass them as `config.approvals.decisions`.
 */
export function toolApprovalDecisions(messages) {
  const fn = "toolApprovalDecisions";
  if (!Array.isArray(messages)) throw codedError("INVALID_ARGUMENT", `${fn}: messages must be an array of UIMessage, got ${describe(messages)}`);
  const last = messages[messages.length - 1];
  if (!isObject(last) || last.role !== "assistant" || !Array.isArray(last.parts)) return [];
  const decisions = [];
  last.parts.forEach((part, j) => {
    if (!isObject(part) || part.state !== "approval-responded") return;
    const approval = part.approval;
    if (!isObject(approval) || typeof approval.approved !== "boolean" || typeof part.toolCallId !== "string") {
      throw codedError("INVALID_ARGUMENT", `${fn}: messages[${messages.length - 1}].parts[${j}]: an approval-responded part needs a toolCallId and approval.approved (boolean)`);
    }
    decisions.push({ toolCallId: part.toolCallId, approved: approval.approved, ...(typeof approval.reason === "string" ? { reason: approval.reason } : {}) });
  });
  return decisions;
}
