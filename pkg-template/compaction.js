// Compaction (issue 45, SPEC L-3.13) on the JS side, loaded on first use so that the main download does not carry it:
// the exact twin of `core::compaction` (the estimate, the projection, the cut, the summary request's text, the entry),
// of `core::transcript` (`content_text`, `current_system_message`: the replayed head) and of the summary writers of
// `core::agent_loop::compact` (`model_summary`, `final_message`, `caller_summary`). Same results, same strings, same
// field order. Its one import, the loop's `errorMessage` (the host's `error_message`), is bundled in by
// scripts/build.mjs (`bundleCompaction`). Where Rust reads a field through `Reflect.get` of a value that may not be an
// object (and so throws), this module does too: the error texts are the same.

import { errorMessage } from "../src/js/snippets/values.js";

/** The role of a compaction entry (pi-coding-agent's `CompactionSummaryMessage`). */
export const ROLE = "compactionSummary";
/** What wraps a summary in the user message the projection sends in the entry's place (pi-coding-agent's texts). */
export const PREFIX =
  "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export const SUFFIX = "\n</summary>";
/** The summary request's system prompt. */
export const SYSTEM_PROMPT = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";
/** The built-in instructions of a first summary. */
export const INSTRUCTIONS = "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.\n\nUse this EXACT format:\n\n## Goal\n[What is the user trying to accomplish?]\n\n## Constraints & Preferences\n- [Requirements the user stated, or \"(none)\"]\n\n## Progress\n### Done\n- [x] [Completed tasks]\n\n### In Progress\n- [ ] [Current work]\n\n### Blocked\n- [Issues, if any]\n\n## Key Decisions\n- **[Decision]**: [Brief rationale]\n\n## Next Steps\n1. [What should happen next]\n\n## Critical Context\n- [Data needed to continue: ids, values, file paths, exact error messages, or \"(none)\"]\n\nKeep each section concise.";
/** The built-in instructions when a previous summary is folded in. */
export const UPDATE_INSTRUCTIONS = "The messages above are NEW conversation messages to incorporate into the existing summary in <previous-summary> tags. Keep everything of the previous summary that still matters, add the new progress, decisions and context, move finished items from \"In Progress\" to \"Done\", and update \"Next Steps\". Use the same EXACT format as the previous summary (Goal, Constraints & Preferences, Progress, Key Decisions, Next Steps, Critical Context). Keep exact ids, values, file paths and error messages.";

const TOOL_RESULT_MAX_CHARS = 2000;
const IMAGE_CHARS = 4800;
const KEEP_RECENT_MAX = 20000;
const KEEP_RECENT_SHARE = 0.25;
const DEFAULT_FRACTION = 0.8;
const SHAPE = "Compaction failed: compaction.summarize must return a string or { summary, usage? }";
const NO_FINAL = "Compaction failed: the summary's stream ended without a done or error event";

const isObjectLike = (v) => (typeof v === "object" && v !== null) || typeof v === "function";
const isString = (v) => typeof v === "string";
const len = (v) => (isString(v) ? v.length : 0);
const isCount = (n) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
/** Rust's `str::trim().is_empty()`: Unicode White_Space only (U+0085 is, U+FEFF is not, unlike JS `trim`). */
const blank = (s) => /^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/.test(s);

/** A message's `role` when it is a string; none for anything not object-like. */
function role(message) {
  if (!isObjectLike(message)) return undefined;
  const r = message.role;
  return isString(r) ? r : undefined;
}

// ---- the replayed head (`core::transcript`)

/** Text blocks of a content joined with `separator` (a string content is itself; a non-string `text` is read as the
 *  host's `error_message` reads a thrown value, which is what Rust does). */
function contentText(content, separator) {
  if (isString(content)) return content;
  if (!Array.isArray(content)) return "";
  const parts = [];
  for (const block of Array.from(content)) {
    if (!isObjectLike(block) || block.type !== "text") continue;
    const text = block.text;
    parts.push(isString(text) ? text : errorMessage(text));
  }
  return parts.join(separator);
}

/** A tool's name (a non-string one as `error_message` reads it). */
function nameOf(tool) {
  const name = Reflect.get(tool, "name");
  return isString(name) ? name : errorMessage(name);
}

/** `getCurrentSystemMessage`: contents joined by blank lines, sections patched by name (null removes), `toolsAdded`
 *  the current tools, `timestamp` of the first system message that has one; null with no timestamp and no tools. */
function currentSystemMessage(messages) {
  const contents = [];
  const sections = new Map();
  const tools = new Map();
  let timestamp;
  for (const message of messages) {
    if (role(message) !== "system") continue;
    if (timestamp === undefined) {
      const t = message.timestamp;
      if (t != null) timestamp = t;
    }
    const text = contentText(message.content, "\n");
    if (text !== "") contents.push(text);
    const patch = message.sections;
    if (isObjectLike(patch)) {
      // Map semantics: a re-set section keeps its place, a removed one loses it.
      for (const [name, value] of Object.entries(patch)) {
        if (value === null) sections.delete(name);
        else sections.set(name, value);
      }
    }
    const removed = message.toolsRemoved;
    for (const tool of Array.isArray(removed) ? Array.from(removed) : []) tools.delete(nameOf(tool));
    const added = message.toolsAdded;
    for (const tool of Array.isArray(added) ? Array.from(added) : []) tools.set(nameOf(tool), tool);
  }
  if (timestamp === undefined && tools.size === 0) return null;
  const head = { role: "system", content: contents.join("\n\n") };
  if (sections.size > 0) {
    head.sections = {};
    for (const [name, value] of sections) head.sections[name] = value;
  }
  if (tools.size > 0) head.toolsAdded = [...tools.values()];
  head.timestamp = timestamp ?? 0;
  return head;
}

// ---- the estimate (L-3.13.3)

/** The characters of a `content`: a string as is, text blocks' texts, 4,800 per image. */
function contentChars(content) {
  if (isString(content)) return content.length;
  if (!Array.isArray(content)) return 0;
  let chars = 0;
  for (const block of Array.from(content)) {
    if (!isObjectLike(block)) continue;
    const type = block.type;
    if (type === "text") chars += len(block.text);
    else if (type === "image") chars += IMAGE_CHARS;
  }
  return chars;
}

/** The characters L-3.13.3 counts for one message. */
export function messageChars(message) {
  switch (role(message)) {
    case "user":
    case "toolResult":
      return contentChars(message.content);
    case "assistant": {
      const content = message.content;
      if (!Array.isArray(content)) return 0;
      let chars = 0;
      for (const block of Array.from(content)) {
        if (!isObjectLike(block)) continue;
        const type = block.type;
        if (type === "text") chars += len(block.text);
        else if (type === "thinking") chars += len(block.thinking);
        else if (type === "toolCall") chars += len(block.name) + len(JSON.stringify(block.arguments));
      }
      return chars;
    }
    case "system": {
      let chars = contentChars(message.content);
      const sections = message.sections;
      if (isObjectLike(sections)) for (const [, section] of Object.entries(sections)) chars += len(section);
      const tools = message.toolsAdded;
      if (tools != null) chars += len(JSON.stringify(tools));
      return chars;
    }
    case ROLE:
      return len(message.summary);
    default:
      return 0;
  }
}

/** `ceil(chars / 4)` of one message. */
function messageTokens(message) {
  return Math.ceil(messageChars(message) / 4);
}

/** The context tokens an assistant message's usage reports, when it can be trusted (not `error`/`aborted`, > 0). */
function reportedTokens(message) {
  if (role(message) !== "assistant") return undefined;
  const stop = message.stopReason;
  if (stop === "error" || stop === "aborted") return undefined;
  const usage = message.usage;
  if (!isObjectLike(usage)) return undefined;
  const figure = (key) => {
    const n = usage[key];
    return typeof n === "number" && Number.isFinite(n) ? n : 0;
  };
  const total = figure("totalTokens");
  const tokens = total !== 0 ? total : figure("input") + figure("output") + figure("cacheRead") + figure("cacheWrite");
  return tokens > 0 ? tokens : undefined;
}

/** L-3.13.3: what the `projected` messages send, in tokens; usage is trusted only from index `trustedFrom` on. */
export function estimate(projected, trustedFrom) {
  let trailing = 0;
  for (let i = projected.length - 1; i >= 0; i--) {
    if (i >= trustedFrom) {
      const reported = reportedTokens(projected[i]);
      if (reported !== undefined) return reported + trailing;
    }
    trailing += messageTokens(projected[i]);
  }
  return trailing;
}

// ---- the projection (L-3.13.4)

/** The Rust `Projection` of a transcript: `{ messages: [head?, summary, ...kept, ...after] (a copy of the transcript
 *  when it holds no entry), liveFrom, trustedFrom, previousSummary }`. */
export function projection(transcript) {
  // The transcript array itself, read in place: a request with compaction on projects it once or twice, and a long
  // transcript is not copied for that.
  const all = transcript;
  let at = -1;
  for (let i = all.length - 1; i >= 0; i--) {
    if (role(all[i]) === ROLE) {
      at = i;
      break;
    }
  }
  if (at < 0) return { messages: all, liveFrom: 0, trustedFrom: 0, previousSummary: undefined };
  const entry = all[at];
  const keptField = entry.keptMessages;
  const kept = isCount(keptField) ? keptField : 0;
  const summaryField = entry.summary;
  const summary = isString(summaryField) ? summaryField : "";
  // The kept messages: walking back from the entry, skipping other entries.
  let firstKept = at;
  let taken = 0;
  while (taken < kept && firstKept > 0) {
    firstKept -= 1;
    if (role(all[firstKept]) !== ROLE) taken += 1;
  }
  const messages = [];
  // The replayed head; when it has none to give (no system message with a timestamp or tools), the system messages
  // themselves, so that a system prompt is never dropped.
  const before = all.slice(0, firstKept);
  const head = currentSystemMessage(before);
  if (head !== null) messages.push(head);
  else for (const message of before) if (role(message) === "system") messages.push(message);
  const text = { type: "text", text: PREFIX + summary + SUFFIX };
  messages.push({ role: "user", content: [text], timestamp: entry.timestamp });
  const liveFrom = messages.length;
  for (const message of all.slice(firstKept)) if (role(message) !== ROLE) messages.push(message);
  return { messages, liveFrom, trustedFrom: liveFrom + taken, previousSummary: summary };
}

/** L-3.13.4: what a request sends: `messages` itself while it holds no entry, else a fresh array of the projection. */
export function project(messages) {
  const p = projection(messages);
  return p.previousSummary === undefined ? messages : p.messages;
}

// ---- the cut (L-3.13.5)

/** Whether keeping `live[at..]` leaves a message other than a system one to summarize. */
function summarizesSomething(live, at) {
  for (let i = 0; i < at; i++) if (role(live[i]) !== "system") return true;
  return false;
}

/** Where the kept part of `live` starts (walking back to `keepRecent` tokens, then forward to the nearest `user` or
 *  `assistant`, else back to the newest one before); null when nothing before it is to be summarized. */
export function cut(live, keepRecent) {
  let kept = 0;
  let from = -1;
  for (let i = live.length - 1; i >= 0; i--) {
    kept += messageTokens(live[i]);
    if (kept >= keepRecent) {
      from = i;
      break;
    }
  }
  // The budget holds every live message: nothing is summarized.
  if (from < 0) return null;
  const speaks = (m) => {
    const r = role(m);
    return r === "user" || r === "assistant";
  };
  for (let i = from; i < live.length; i++) if (speaks(live[i])) return summarizesSomething(live, i) ? i : null;
  // Only tool results and system messages after the point: keep the newest assistant before it with its results.
  for (let i = from - 1; i >= 0; i--) if (speaks(live[i])) return summarizesSomething(live, i) ? i : null;
  return null;
}

/** L-3.13.5: the compaction a request needs, or null (no usable window, under the trigger, nothing to summarize). */
export function plan(messages, options, model) {
  let modelWindow;
  try {
    modelWindow = Reflect.get(model, "contextWindow");
  } catch {
    // Rust reads it with `.ok()`: an unreadable window is no window.
  }
  const number = (v) => (typeof v === "number" ? v : undefined);
  const window = number(options.contextWindow) ?? number(modelWindow);
  if (window === undefined || !Number.isFinite(window) || !(window > 0)) return null;
  const p = projection(messages);
  const tokensBefore = estimate(p.messages, p.trustedFrom);
  const trigger = options.trigger;
  const tokens = trigger == null ? undefined : trigger.tokens;
  const limit = tokens != null ? tokens : (trigger?.fraction ?? DEFAULT_FRACTION) * window;
  if (!(tokensBefore > limit)) return null;
  const live = p.messages.slice(p.liveFrom);
  const keep = options.keepRecentTokens ?? Math.min(KEEP_RECENT_MAX, Math.floor(window * KEEP_RECENT_SHARE));
  const at = cut(live, keep);
  if (at === null) return null;
  const summarized = live.slice(0, at).filter((m) => role(m) !== "system");
  const keptMessages = live.length - at;
  return { reason: "threshold", tokensBefore, messages: summarized, keptMessages, previousSummary: p.previousSummary };
}

// ---- the summary request (L-3.13.6)

/** `text` cut to `max` UTF-16 units (never inside a pair) with pi-coding-agent's marker. */
function truncateForSummary(text, max) {
  if (text.length <= max) return text;
  let out = "";
  for (const c of text) {
    if (out.length + c.length > max) break;
    out += c;
  }
  return `${out}\n\n[... ${text.length - max} more characters truncated]`;
}

/** The summarized messages as pi-coding-agent's `serializeConversation` writes them. */
export function serialize(messages) {
  const parts = [];
  for (const message of messages) {
    const r = role(message);
    if (r === "user") {
      const text = contentText(message.content, "");
      if (text !== "") parts.push(`[User]: ${text}`);
    } else if (r === "assistant") {
      const content = message.content;
      if (!Array.isArray(content)) continue;
      const calls = [];
      let hasText = false;
      for (const block of Array.from(content)) {
        if (!isObjectLike(block)) continue;
        const type = block.type;
        if (type === "text") hasText = true;
        else if (type === "toolCall") {
          const name = block.name;
          const args = block.arguments;
          const pairs = [];
          if (isObjectLike(args)) {
            for (const [key, value] of Object.entries(args)) {
              pairs.push(`${key}=${JSON.stringify(value) ?? "undefined"}`);
            }
          }
          calls.push(`${isString(name) ? name : ""}(${pairs.join(", ")})`);
        }
      }
      if (hasText) parts.push(`[Assistant]: ${contentText(content, "\n")}`);
      if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    } else if (r === "toolResult") {
      const text = contentText(message.content, "");
      if (text !== "") parts.push(`[Tool result]: ${truncateForSummary(text, TOOL_RESULT_MAX_CHARS)}`);
    }
  }
  return parts.join("\n\n");
}

/** The user message text of a summary request. */
export function requestText(conversation, previous, instructions) {
  let text = `<conversation>\n${conversation}\n</conversation>\n\n`;
  if (previous != null) text += `<previous-summary>\n${previous}\n</previous-summary>\n\n`;
  return text + (instructions ?? (previous != null ? UPDATE_INSTRUCTIONS : INSTRUCTIONS));
}

/** The summary of the `"drop"` strategy. */
export function dropSummary(removed) {
  const was = removed === 1 ? "message was" : "messages were";
  return `${removed} earlier ${was} removed to fit the context window.`;
}

/** L-3.13.2: the entry of `plan` with `summary`, its `tokensAfter` the estimate of the projection with it in place. */
export function entry(messages, plan, summary, usage, now) {
  const { tokensBefore, keptMessages, reason } = plan;
  const e = { role: ROLE, summary, tokensBefore, tokensAfter: 0, keptMessages, reason, timestamp: now };
  if (isObjectLike(usage)) e.usage = usage;
  const next = projection([...messages, e]);
  e.tokensAfter = estimate(next.messages, next.trustedFrom);
  return e;
}

// ---- writing the summary (`core::agent_loop::compact`)

/** A failure of the summary request or function: the thrown value's text after "Compaction failed: ". */
const failed = (e) => new Error(`Compaction failed: ${errorMessage(e)}`);

/** `final_message`: the stream's `done` event's `message` or `error` event's `error`, else its `result()`. */
async function finalMessage(source) {
  try {
    const f = source == null ? undefined : source[Symbol.asyncIterator];
    const it = typeof f === "function" ? f.call(source) : undefined;
    // A manual loop, not `for await`: Rust never calls the iterator's `return()`.
    while (it !== undefined) {
      const step = await it.next();
      if (Object(step) !== step) throw new TypeError(`Iterator result ${String(step)} is not an object`);
      if (step.done) break;
      const event = step.value;
      if (!isObjectLike(event)) continue;
      const type = event.type;
      if (type === "done") return event.message;
      if (type === "error") return event.error;
    }
    const result = Reflect.get(source, "result");
    if (typeof result === "function") {
      const message = await Reflect.apply(result, source, []);
      if (isObjectLike(message)) return message;
    }
  } catch (e) {
    throw failed(e);
  }
  throw new Error(NO_FINAL);
}

/** `model_summary`: one request through `streamFn` with the loop's options (L-3.5.1: the key from `getApiKey`, else
 *  `config.apiKey`; `identity`; reasoning off; `signal`), its final message's text (a stop other than `stop` fails). */
async function modelSummary(plan, options, model, streamFn, config, identity, signal) {
  const text = requestText(serialize(plan.messages), plan.previousSummary, options.instructions);
  const now = Date.now();
  const system = { role: "system", content: SYSTEM_PROMPT, timestamp: now };
  const user = { role: "user", content: [{ type: "text", text }], timestamp: now };
  const getApiKey = config.getApiKey;
  let apiKey;
  if (typeof getApiKey === "function") {
    const provider = model.provider;
    try {
      apiKey = await Reflect.apply(getApiKey, config, [provider]);
    } catch (e) {
      throw failed(e);
    }
  }
  if (!apiKey) apiKey = config.apiKey;
  const request = { ...config };
  request.apiKey = apiKey;
  request.identity = identity;
  request.reasoning = undefined;
  request.signal = signal;
  let source;
  try {
    source = await streamFn(model, { messages: [system, user] }, request);
  } catch (e) {
    throw failed(e);
  }
  const message = await finalMessage(source);
  // Read as Rust reads them: a throw here is the bare error text, without "Compaction failed: ".
  const stopField = Reflect.get(message, "stopReason");
  const stop = isString(stopField) ? stopField : "";
  const usageField = Reflect.get(message, "usage");
  const usage = isObjectLike(usageField) ? usageField : undefined;
  if (stop === "length") throw new Error("Compaction failed: the summary hit the output token limit");
  if (stop !== "stop") {
    const detail = Reflect.get(message, "errorMessage");
    throw new Error(`Compaction failed: ${isString(detail) ? detail : stop}`);
  }
  return { summary: contentText(Reflect.get(message, "content"), "\n"), usage };
}

/** `caller_summary`: `await fn(messages, { model, signal, previousSummary, reason })`, a string or `{ summary }`. */
async function callerSummary(fn, plan, model, signal) {
  let answer;
  try {
    // `this` is undefined here (Rust's `call_fn` passes the run's config, which this module does not have).
    answer = await fn(plan.messages, { model, signal, previousSummary: plan.previousSummary, reason: plan.reason });
  } catch (e) {
    throw failed(e);
  }
  if (isString(answer)) return { summary: answer, usage: undefined };
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) throw new Error(SHAPE);
  const read = (key) => {
    try {
      return answer[key];
    } catch (e) {
      throw failed(e);
    }
  };
  const summary = read("summary");
  if (!isString(summary)) throw new Error(SHAPE);
  const usage = read("usage");
  return { summary, usage: isObjectLike(usage) ? usage : undefined };
}

/** L-3.13.6: writes the summary of `plan`: resolves `{ summary, usage }`, rejects with the `compaction_end` text. */
export async function summarize(plan, options, model, streamFn, config, identity, signal) {
  let written;
  try {
    const how = options.summarize;
    if (how === "drop") written = { summary: dropSummary(plan.messages.length), usage: undefined };
    else if (typeof how === "function") written = await callerSummary(how, plan, model, signal);
    else written = await modelSummary(plan, options, model, streamFn, config, identity, signal);
  } catch (e) {
    // Rust's text of the failure: ours as they are, anything else thrown on the way (a getter) as its bare message.
    throw new Error(errorMessage(e));
  }
  if (blank(written.summary)) throw new Error("Compaction failed: the summary is empty");
  return written;
}
