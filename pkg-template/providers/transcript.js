// The request transcript (P-6.5), shared by every wire format: the replayed system head (system prompt text and
// current tools) and pi-ai's clean-up of the conversation. Plain values in and out; the caller's messages and blocks
// are never modified: a message the clean-up changes is a copy, one it leaves alone is the caller's own object.
//
// `prepare(input, normalizeId)` gives `{ systemPrompt, tools, messages }`: the prompt (content, then non-null
// sections, blank-line joined; "" = send none), the current tools as declared, and only the "user", "assistant" and
// "toolResult" messages, in order, where (P-6.5.2) `content` is a string (user only) or an array; images are
// placeholder texts when `model.input` lacks "image"; no `error`/`aborted` assistant messages; assistant messages of
// another provider/api/model carry no thinking blocks, `textSignature` or `thoughtSignature`; tool-call ids went
// through `normalizeId` and the matching results' `toolCallId` follow; every tool call of a kept assistant message
// has a result before the next assistant or user message (a synthetic `isError` "No result provided" one if needed).
// Fields may otherwise still be missing or mistyped: read them with json.js.
import { asArray, asStr, get, isObject, kind, role, str } from "./json.js";

export { role, kind as blockType, str as strField, get as field };

export const USER_IMAGE_OMITTED = "(image omitted: model does not support images)";
export const TOOL_IMAGE_OMITTED = "(tool image omitted: model does not support images)";
export const NO_RESULT_PROVIDED = "No result provided";

/**
 * P-6.5.1 + P-6.5.2: the head of the transcript and the cleaned conversation. Later system messages are not sent
 * (their content only reaches the prompt through the replayed head).
 * @param {{ model: object, messages: unknown[] }} input
 * @param {(id: string) => string} [normalizeId] tool-call ids as the wire format accepts them (undefined: kept)
 * @returns {{ systemPrompt: string, tools: object[], messages: object[] }}
 */
export const prepare = (input, normalizeId) => {
  const [systemPrompt, tools] = systemHead(input.messages);
  const messages = cleanUp(input.messages, input.model, normalizeId).filter((m) =>
    ["user", "assistant", "toolResult"].includes(role(m)),
  );
  return { systemPrompt, tools, messages };
};

/**
 * Replays every system message in order: the prompt text (non-empty contents joined by blank lines, then
 * the non-null sections as patched by name) and the current tools (`toolsRemoved`, then `toolsAdded`, per message; a
 * re-added name keeps its place).
 * @param {unknown[]} messages @returns {[string, object[]]}
 */
export const systemHead = (messages) => {
  const contents = [];
  // Maps keep insertion order: setting an existing name keeps its place, a deleted one re-added goes last.
  const sections = new Map();
  const tools = new Map();
  for (const message of messages) {
    if (role(message) !== "system") continue;
    const text = contentText(get(message, "content"));
    if (text) contents.push(text);
    const patch = get(message, "sections");
    if (isObject(patch)) {
      for (const [name, value] of Object.entries(patch)) {
        if (value === null) sections.delete(name);
        else sections.set(name, value);
      }
    }
    for (const removed of asArray(get(message, "toolsRemoved")) ?? []) tools.delete(str(removed, "name"));
    for (const added of asArray(get(message, "toolsAdded")) ?? []) {
      if (isObject(added)) tools.set(str(added, "name"), added);
    }
  }
  const parts = [contents.join("\n\n"), ...[...sections.values()].filter((v) => typeof v === "string")];
  return [parts.filter(Boolean).join("\n\n"), [...tools.values()]];
};

/** A text content block. @param {string} text @returns {{type: "text", text: string}} */
export const textBlock = (text) => ({ type: "text", text });
/** Exactly `{ type, text }` in that order, the text a string: what `textBlock` would make of it. */
const isPlainText = (block) => {
  const keys = Object.keys(block);
  return keys.length === 2 && keys[0] === "type" && keys[1] === "text" && typeof block.text === "string";
};
const hasImage = (content) => Array.isArray(content) && content.some((b) => kind(b) === "image");

/**
 * P-6.5.2 on the whole transcript, system messages included (they stay in place, except that one between a tool call
 * and its results moves after the results). Non-object messages are dropped.
 * @param {unknown[]} messages @param {object} model @param {(id: string) => string} [normalizeId]
 * @returns {object[]}
 */
export const cleanUp = (messages, model, normalizeId) => {
  const images = asArray(get(model, "input"))?.includes("image") ?? false;
  const renamed = [];
  const out = [];
  let pending = []; // [id, name] of the last assistant's calls
  let answered = [];
  let held = [];
  const closePending = () => {
    for (const [id, name] of pending) {
      if (!answered.includes(id)) {
        out.push({
          role: "toolResult",
          toolCallId: id,
          toolName: name,
          content: [textBlock(NO_RESULT_PROVIDED)],
          isError: true,
          timestamp: 0,
        });
      }
    }
    pending = [];
    answered = [];
    out.push(...held);
    held = [];
  };
  for (const original of messages) {
    if (!isObject(original)) continue;
    const message = transform(original, model, images, normalizeId, renamed);
    switch (role(message)) {
      case "assistant": {
        closePending();
        const stop = str(message, "stopReason");
        if (stop === "error" || stop === "aborted") continue;
        const calls = message.content.filter((b) => kind(b) === "toolCall").map((b) => [str(b, "id"), str(b, "name")]);
        if (calls.length) {
          pending = calls;
          answered = [];
        }
        out.push(message);
        break;
      }
      case "toolResult":
        answered.push(str(message, "toolCallId"));
        out.push(message);
        break;
      case "user":
        closePending();
        out.push(message);
        break;
      case "system":
        if (pending.length) {
          held.push(message);
          break;
        }
      // falls through
      default:
        out.push(message);
    }
  }
  closePending();
  return out;
};

/** The first pass on one message: content, images, thinking and signatures, tool-call ids. */
const transform = (original, model, images, normalizeId, renamed) => {
  let message = original;
  const set = (key, value) => {
    if (message === original) message = { ...original };
    message[key] = value;
  };
  let content = get(message, "content");
  if (content == null) set("content", (content = []));
  switch (role(message)) {
    case "user":
      if (!images && hasImage(content)) set("content", replaceImages(content, USER_IMAGE_OMITTED));
      break;
    case "toolResult": {
      if (typeof content === "string") set("content", [textBlock(content)]);
      else if (!Array.isArray(content)) set("content", []);
      else if (!images && hasImage(content)) set("content", replaceImages(content, TOOL_IMAGE_OMITTED));
      const id = str(message, "toolCallId");
      let rename; // the latest rename of this id
      for (const [old, renamedTo] of renamed) if (old === id) rename = renamedTo;
      if (rename !== undefined) set("toolCallId", rename);
      break;
    }
    case "assistant": {
      const same = isSameModel(message, model);
      const kept = [];
      for (const block of asArray(content) ?? []) {
        switch (kind(block)) {
          case "thinking":
            if (
              same &&
              (get(block, "redacted") === true || str(block, "thinkingSignature") || str(block, "thinking").trim())
            ) {
              kept.push(block);
            }
            break;
          case "text":
            kept.push(same || isPlainText(block) ? block : textBlock(str(block, "text")));
            break;
          case "toolCall": {
            let call = block;
            if (!same && "thoughtSignature" in call) {
              const { thoughtSignature, ...rest } = call;
              call = rest;
            }
            if (normalizeId) {
              const id = str(call, "id");
              const newId = normalizeId(id);
              if (newId !== id) {
                renamed.push([id, newId]);
                call = { ...call, id: newId };
              }
            }
            kept.push(call);
            break;
          }
          default:
            kept.push(block);
        }
      }
      // An assistant message the rules leave alone stays the caller's object (no copy per request).
      if (!Array.isArray(content) || kept.length !== content.length || kept.some((block, i) => block !== content[i])) set("content", kept);
      break;
    }
  }
  return message;
};

/**
 * Images replaced by one `placeholder` text per run of images (a placeholder text already there absorbs the images
 * that follow it).
 * @param {unknown[]} content @param {string} placeholder @returns {unknown[]}
 */
export const replaceImages = (content, placeholder) => {
  const out = [];
  let previousWasPlaceholder = false;
  for (const block of content) {
    if (kind(block) === "image") {
      if (!previousWasPlaceholder) out.push(textBlock(placeholder));
      previousWasPlaceholder = true;
      continue;
    }
    previousWasPlaceholder = get(block, "text") === placeholder;
    out.push(block);
  }
  return out;
};

/**
 * Whether an assistant message came from this model (same provider, api and id; a missing or non-string field equals
 * only another such).
 * @param {unknown} message @param {object} model @returns {boolean}
 */
export const isSameModel = (message, model) =>
  isObject(message) &&
  asStr(get(message, "provider")) === asStr(get(model, "provider")) &&
  asStr(get(message, "api")) === asStr(get(model, "api")) &&
  asStr(get(message, "model")) === asStr(get(model, "id"));

/**
 * A string content itself, else its text blocks' texts joined with "\n".
 * @param {unknown} content @returns {string}
 */
export const contentText = (content) =>
  typeof content === "string"
    ? content
    : (asArray(content) ?? [])
        .filter((b) => kind(b) === "text")
        .map((b) => str(b, "text"))
        .join("\n");
