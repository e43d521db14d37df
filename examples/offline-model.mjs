// The offline demo model (SPEC K-9.3.3): a scripted stand-in for an LLM, shared by the browser demo
// (www/app.js imports /examples/offline-model.mjs) and the Node examples (examples/cli.mjs, demo.mjs).
//
// It streams like a real provider through createAssistantMessageEventStream — `start`, thinking and
// text token by token with small delays, tool-call arguments in fragments, then `done` — and honours
// the abort signal between chunks (`error` with reason "aborted", at once, even mid-delay).
//
// The script: its headline is the design document's example ("list the files, then read the README"):
// one response asks for list_files and read_file together, the loop runs them in parallel, and the next
// response summarises their results. Keywords pick the other tools of the demo page (time, calculate or
// "add 2 and 3", random, wait, "every tool", and "delete <file>" for delete_file, which waits for approval); a prompt it has no script for gets a short note saying
// so and what it understands, never a made-up tool call. It only calls tools the request declares.
// Each reply carries a scripted `usage` (estimated tokens, a made-up cost; see usage() below), so that usage totals
// and budgets (issue 32) have figures offline.
//
// No imports: the package is passed in, so the same file runs in browsers, Node and Deno.
//   import * as lib from "agent-loop-wasm";
//   const streamFn = offlineModel(lib, { chunkDelayMs: 20 });

/** A model object for the offline script (any `api` works: the stream function ignores it). */
export const OFFLINE_MODEL = Object.freeze({
  id: "offline-demo",
  name: "Offline demo (scripted)",
  api: "offline-demo",
  provider: "offline",
  baseUrl: "",
  reasoning: true,
  input: ["text"],
  // Scripted prices in USD per million tokens, so that the demo's cost totals and cost limits have something to
  // show offline. No one is billed: the offline model costs nothing, and its token counts are estimates (see usage).
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 0,
  maxTokens: 0,
});

/** Prompts the script understands (the first one is the design document's example). */
export const OFFLINE_PROMPTS = [
  "List the files, then read the README",
  "What time is it? Also pick a random number between 1 and 6",
  "Calculate (17 + 25) * 3 / 2",
  "Wait 4 seconds",
  "Run every tool at once",
];

/**
 * Returns a stream function `(model, context, options) => AssistantMessageEventStream`.
 * @param {{ createAssistantMessageEventStream: () => any }} lib the package (or anything with that factory)
 * @param {{ chunkDelayMs?: number, thinking?: "auto" | "always" | "never" }} [settings]
 *   chunkDelayMs: delay before each streamed token (default 15); thinking: "auto" streams a thinking
 *   block when the request has a thinking level (`options.reasoning`), the default.
 */
export function offlineModel({ createAssistantMessageEventStream }, { chunkDelayMs = 15, thinking = "auto" } = {}) {
  return function offlineStreamFn(model, context, options) {
    const stream = createAssistantMessageEventStream();
    const signal = options?.signal;
    const messages = Array.isArray(context?.messages) ? context.messages : [];
    const reply = planReply(messages, availableTools(context));
    const withThinking = thinking === "always" || (thinking === "auto" && !!options?.reasoning);
    const message = {
      role: "assistant", content: [], api: model?.api ?? OFFLINE_MODEL.api,
      provider: model?.provider ?? OFFLINE_MODEL.provider, model: model?.id ?? OFFLINE_MODEL.id,
      usage: usage(context, messages, reply, withThinking, model?.cost ?? OFFLINE_MODEL.cost),
      stopReason: "pending", timestamp: Date.now(),
    };

    const run = async () => {
      if (signal?.aborted) return fail();
      await sleep(Math.min(120, chunkDelayMs * 4), signal); // time to first token
      if (signal?.aborted) return fail();
      stream.push({ type: "start", partial: message });
      if (withThinking && reply.thinking) {
        if (!(await streamBlock("thinking", reply.thinking))) return fail();
      }
      if (reply.text && !(await streamBlock("text", reply.text))) return fail();
      for (const call of reply.toolCalls) {
        const index = message.content.length;
        const block = { type: "toolCall", id: call.id, name: call.name, arguments: {} };
        message.content.push(block);
        stream.push({ type: "toolcall_start", contentIndex: index, partial: message });
        for (const piece of JSON.stringify(call.arguments).match(/[\s\S]{1,7}/g) ?? []) {
          await sleep(chunkDelayMs, signal);
          if (signal?.aborted) return fail();
          stream.push({ type: "toolcall_delta", contentIndex: index, delta: piece, partial: message });
        }
        block.arguments = call.arguments;
        stream.push({ type: "toolcall_end", contentIndex: index, toolCall: block, partial: message });
      }
      message.stopReason = reply.toolCalls.length > 0 ? "toolUse" : "stop";
      stream.push({ type: "done", reason: message.stopReason, message });
    };

    // Streams one text or thinking block word by word; false when aborted.
    async function streamBlock(kind, text) {
      const index = message.content.length;
      const block = kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" };
      message.content.push(block);
      stream.push({ type: `${kind}_start`, contentIndex: index, partial: message });
      for (const piece of text.match(/\s*\S+/g) ?? []) {
        await sleep(chunkDelayMs, signal);
        if (signal?.aborted) return false;
        if (kind === "text") block.text += piece;
        else block.thinking += piece;
        stream.push({ type: `${kind}_delta`, contentIndex: index, delta: piece, partial: message });
      }
      stream.push({ type: `${kind}_end`, contentIndex: index, content: text, partial: message });
      return true;
    }

    function fail() {
      message.stopReason = "aborted";
      message.errorMessage = "Request was aborted";
      stream.push({ type: "error", reason: "aborted", error: message });
    }

    run().catch((error) => {
      message.stopReason = "error";
      message.errorMessage = `Offline model failed: ${error?.message ?? error}`;
      stream.push({ type: "error", reason: "error", error: message });
    });
    return stream;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The script
// ---------------------------------------------------------------------------------------------------------------

/**
 * Decides the next response from the transcript: `{ thinking, text, toolCalls: [{ id, name, arguments }] }`.
 * Exported for tests and for anyone who wants to extend the script.
 */
export function planReply(messages, available = null) {
  const lastFinal = findLastIndex(messages, (m) => m.role === "assistant" && !hasToolCalls(m));
  const lastAssistant = findLastIndex(messages, (m) => m.role === "assistant");
  const newUsers = messages.slice(lastAssistant + 1).filter((m) => m.role === "user");
  const results = messages.slice(lastFinal + 1).filter((m) => m.role === "toolResult");
  const calls = new Map();
  for (const m of messages) {
    if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const c of m.content) if (c?.type === "toolCall") calls.set(c.id, c);
  }
  const canUse = (name) => available === null || available.has(name);
  const nextId = idAllocator(calls.size);

  if (newUsers.length === 0) {
    if (results.length === 0) {
      return { thinking: "There is nothing new to answer.", text: "I have nothing to add yet — ask me something.", toolCalls: [] };
    }
    return {
      thinking: `I have ${count(results.length, "tool result")}. Time to summarise what came back.`,
      text: summarise(results, calls),
      toolCalls: [],
    };
  }

  const request = newUsers.map(textOf).join("\n").trim();
  const firstTurn = lastAssistant < 0;
  // No script for the request: no tool call (a scripted model that guessed would misrepresent the loop).
  const wanted = routeTools(request) ?? [];
  const usable = wanted.filter((t) => canUse(t.name));
  const missing = wanted.filter((t) => !canUse(t.name)).map((t) => t.name);
  const quoted = `“${request.length > 80 ? `${request.slice(0, 77)}…` : request}”`;

  if (usable.length === 0) {
    const greeting = /^\s*(hi|hello|hey)\b/i.test(request);
    const parts = [];
    if (!firstTurn && !greeting) parts.push(`Noted: ${quoted}.`);
    if (results.length > 0) parts.push(summarise(results, calls));
    if (missing.length > 0) parts.push(`I would need ${list(missing.map(code))}, which this session does not provide.`);
    if (results.length === 0 && missing.length === 0) {
      parts.push(
        (firstTurn || greeting ? "Hello! " : "") +
          "I'm the offline demo model: a script that runs in your browser, not a language model, and I have no " +
          `script for that. Ask me to ${list(OFFLINE_PROMPTS.slice(0, 4).map((p) => `“${p[0].toLowerCase()}${p.slice(1)}”`), "or")} — ` +
          "or pick a real model in the settings (the local model, or a provider with your key) for open-ended questions.",
      );
    }
    return {
      thinking: missing.length > 0
        ? `The request ${quoted} needs ${list(missing.map(code))}, but the request declares no such tool.`
        : results.length > 0
          ? `New input: ${quoted}. No tool needed for it; I'll fold it into the summary of ${count(results.length, "result")}.`
          : `The request ${quoted} doesn't match any of my scripts, so I'll answer in text.`,
      text: parts.join("\n\n"),
      toolCalls: [],
    };
  }

  const toolCalls = usable.map((t) => ({ id: nextId(), name: t.name, arguments: t.arguments }));
  const names = toolCalls.map((c) => code(c.name));
  const isDesignExample = toolCalls.length === 2 && toolCalls[0].name === "list_files" && toolCalls[1].name === "read_file";
  const text = [
    results.length > 0 ? `Noted: ${quoted}.` : "",
    isDesignExample
      ? "I'll list the files and read the README at the same time."
      : toolCalls.length === 1
        ? `Let me use ${names[0]}.`
        : `Let me call ${list(names)} in one go.`,
  ].filter(Boolean).join(" ");
  const thinking = toolCalls.length === 1
    ? `The request ${quoted} needs ${names[0]}. One call is enough.`
    : `The request ${quoted} needs ${list(names)}. The calls don't depend on each other, so I'll ask for them ` +
      "in a single response — the agent loop can run them in parallel and send the results back in request order.";
  return { thinking, text, toolCalls };
}

const FILE_NAME = /\b([\w./-]+\.(?:md|json|toml|rs|txt|js|mjs|ts|html|css))\b/gi;

function filesExample(request) {
  const file = request.match(/\b([\w./-]+\.(?:md|json|toml|rs|txt|js|mjs|ts|html|css))\b/i)?.[1] ?? "README.md";
  return [
    { name: "list_files", arguments: { path: "." } },
    { name: "read_file", arguments: { path: file } },
  ];
}

// Keyword routing; null when nothing matched.
function routeTools(text) {
  const t = text.toLowerCase();
  // "delete notes.txt" (issue 30): one delete_file call per file named, in one response; nothing else, so a
  // request to delete never reads the file too. The tool waits for a person's approval (needsApproval).
  if (/\b(delete|remove|rm|erase)\b/.test(t)) {
    const files = [...new Set([...text.matchAll(FILE_NAME)].map((m) => m[1]))];
    if (files.length > 0) return files.map((path) => ({ name: "delete_file", arguments: { path } }));
  }
  if (/\b(every|all)\b.*\btools?\b|\beverything\b/.test(t)) {
    return [
      { name: "get_time", arguments: {} },
      { name: "calculate", arguments: { expression: "(17 + 25) * 3 / 2" } },
      { name: "random_number", arguments: { min: 1, max: 100 } },
      { name: "wait", arguments: { ms: 1500 } },
      ...filesExample(text),
    ];
  }
  const tools = [];
  const wantsList = /\b(list|ls|files|director(?:y|ies)|folders?)\b/.test(t);
  const wantsRead = /\b(read|readme|cat|open)\b/.test(t) || /\b[\w./-]+\.(md|json|toml|rs|txt|js|mjs)\b/.test(t);
  if (wantsList || wantsRead) {
    const [listCall, readCall] = filesExample(text);
    if (wantsList) tools.push(listCall);
    if (wantsRead) tools.push(readCall);
  }
  if (/\b(time|clock|date|today)\b/.test(t)) tools.push({ name: "get_time", arguments: {} });
  // "add 2 and 3", "2 plus 3", "the sum of 2 and 3": the demo's calculate tool does additions too.
  const sum = t.match(/\b(?:add|sum of)\s+(-?\d+(?:\.\d+)?)\s+(?:and|to|\+)\s+(-?\d+(?:\.\d+)?)/) ??
    t.match(/(-?\d+(?:\.\d+)?)\s+plus\s+(-?\d+(?:\.\d+)?)/);
  const expression = sum ? `${sum[1]} + ${sum[2]}` : extractExpression(text);
  if (expression && (sum || /\b(calc\w*|compute|math|evaluate|what is|what's|how much)\b/.test(t) || tools.length === 0)) {
    tools.push({ name: "calculate", arguments: { expression } });
  } else if (/\b(calc\w*|compute|math)\b/.test(t)) {
    tools.push({ name: "calculate", arguments: { expression: "(17 + 25) * 3 / 2" } });
  }
  if (/\b(random|dice|die|roll|coin)\b/.test(t)) {
    const range = t.match(/between\s+(-?\d+)\s+and\s+(-?\d+)/) ?? t.match(/\bfrom\s+(-?\d+)\s+to\s+(-?\d+)/);
    const [min, max] = range ? [Number(range[1]), Number(range[2])] : /\b(dice|die|roll)\b/.test(t) ? [1, 6] : [1, 100];
    tools.push({ name: "random_number", arguments: { min: Math.min(min, max), max: Math.max(min, max) } });
  }
  if (/\b(wait|sleep|pause|delay)\b/.test(t)) {
    const m = t.match(/(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|minutes?|min)\b/);
    let ms = 2000;
    if (m) ms = Number(m[1]) * (m[2].startsWith("m") && m[2] !== "ms" && !m[2].startsWith("milli") ? 60_000 : m[2] === "ms" || m[2].startsWith("milli") ? 1 : 1000);
    tools.push({ name: "wait", arguments: { ms: Math.max(0, Math.min(60_000, Math.round(ms))) } });
  }
  return tools.length > 0 ? tools : null;
}

function extractExpression(text) {
  const candidates = text.match(/[-+(]*\s*\d[\d\s+\-*/%^().,]*/g) ?? [];
  const best = candidates
    .map((c) => c.trim().replace(/[\s.,]+$/, "").replace(/,/g, ""))
    .filter((c) => /\d\s*[-+*/%^]\s*[\d(-]/.test(c) || /^\(.*\)$/.test(c))
    .sort((a, b) => b.length - a.length)[0];
  if (!best) return null;
  // Balance stray parentheses the sentence cut off.
  let depth = 0;
  for (const ch of best) depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
  return depth > 0 ? best + ")".repeat(depth) : best;
}

function summarise(results, calls) {
  const lines = results.map((r) => {
    const call = calls.get(r.toolCallId);
    const args = call?.arguments ?? {};
    const body = textOf(r).trim();
    const name = r.toolName ?? call?.name ?? "tool";
    if (r.isError && name === "delete_file" && / was denied\b/.test(firstLine(body))) {
      return `- I did not delete ${code(args.path ?? "the file")}: ${firstLine(body)}`;
    }
    if (r.isError) return `- ${code(name)} failed: ${firstLine(body) || "no details"}`;
    switch (name) {
      case "list_files": {
        const entries = body.split("\n").map((s) => s.trim()).filter(Boolean);
        const shown = entries.slice(0, 6).map(code).join(", ");
        return `- ${code(args.path ?? ".")} holds ${count(entries.length, "entry", "entries")}: ${shown}${entries.length > 6 ? ", …" : ""}`;
      }
      case "read_file": {
        const first = body.split("\n").find((l) => l.trim()) ?? "";
        return `- ${code(args.path ?? "the file")} (${count(body.length, "character")}) starts with **${first.replace(/^#+\s*/, "").trim()}**`;
      }
      case "get_time":
        return `- It is **${firstLine(body)}**`;
      case "calculate":
        return `- ${code(args.expression ?? "the expression")} = **${firstLine(body)}**`;
      case "random_number":
        return `- I drew **${firstLine(body)}** (from ${args.min ?? 0} to ${args.max ?? 100})`;
      case "wait":
        return `- Waited ${args.ms ?? "some"} ms: ${firstLine(body)}`;
      case "delete_file":
        return `- Deleted ${code(args.path ?? "the file")}`;
      default:
        return `- ${code(name)} returned: ${firstLine(body).slice(0, 160)}`;
    }
  });
  const timed = results.filter((r) => typeof r.durationMs === "number");
  let timing = "";
  if (timed.length >= 2) {
    timing = `\n\nTiming: ${list(timed.map((r) => `${code(r.toolName)} took ${Math.round(r.durationMs)} ms`))}. ` +
      "The results went back to me in the order I requested the calls, whatever order they finished in.";
  }
  return `Here is what the tools returned:\n\n${lines.join("\n")}${timing}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

// Tool names the request declares: system messages carry `toolsAdded`/`toolsRemoved` (the Agent and the loop
// put the tools there); `context.tools` is honoured too. null = unknown (allow every tool).
function availableTools(context) {
  const names = new Set();
  let declared = false;
  for (const t of Array.isArray(context?.tools) ? context.tools : []) {
    if (t?.name) { names.add(t.name); declared = true; }
  }
  for (const m of Array.isArray(context?.messages) ? context.messages : []) {
    if (m?.role !== "system") continue;
    for (const t of m.toolsAdded ?? []) { if (t?.name) { names.add(t.name); declared = true; } }
    for (const t of m.toolsRemoved ?? []) names.delete(typeof t === "string" ? t : t?.name);
  }
  return declared ? names : null;
}

// Scripted usage (issue 32): what a provider would report for this request, estimated, not measured. A token is
// 4 characters (rounded up) of what the request sends or the reply streams: the system prompt, the tool
// declarations (name, description, JSON Schema), texts, thinking, tool calls (name and arguments) and tool results;
// not ids, timestamps or durations, so a scripted prompt gives the same figures every time. The prompt is split
// as a provider with a prompt cache reports it: the first request of a conversation writes the system prompt and
// the tool declarations to the cache (cacheWrite); a later one reads from the cache the whole prompt of the
// request before it (cacheRead: the messages before the last reply); the rest is input. The cost is the tokens at
// the model's prices (OFFLINE_MODEL.cost, scripted), as pi-ai's calculateCost computes it.
function usage(context, messages, reply, withThinking, prices) {
  const lastReply = findLastIndex(messages, (m) => m.role === "assistant");
  const chars = (list) => list.reduce((n, m) => n + messageChars(m), 0);
  const head = charsOfTools(context?.tools) + (typeof context?.systemPrompt === "string" ? context.systemPrompt.length : 0);
  let input, cacheRead = 0, cacheWrite = 0;
  if (lastReply < 0) {
    const leading = messages.findIndex((m) => m?.role !== "system");
    const stable = messages.slice(0, leading < 0 ? messages.length : leading);
    cacheWrite = tokens(head + chars(stable));
    input = tokens(chars(messages.slice(stable.length)));
  } else {
    cacheRead = tokens(head + chars(messages.slice(0, lastReply)));
    input = tokens(chars(messages.slice(lastReply)));
  }
  const output = tokens((withThinking ? reply.thinking.length : 0) + reply.text.length +
    reply.toolCalls.reduce((n, c) => n + c.name.length + JSON.stringify(c.arguments).length, 0));
  const price = (key, n) => (Number(prices?.[key]) || 0) * n / 1e6;
  const cost = { input: price("input", input), output: price("output", output), cacheRead: price("cacheRead", cacheRead),
    cacheWrite: price("cacheWrite", cacheWrite) };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}

const tokens = (chars) => Math.ceil(chars / 4);

function messageChars(m) {
  const content = typeof m?.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m?.content) ? m.content : [];
  let n = (m?.role === "toolResult" ? String(m.toolName ?? "").length : 0) + charsOfTools(m?.toolsAdded);
  for (const t of Array.isArray(m?.toolsRemoved) ? m.toolsRemoved : []) n += String(typeof t === "string" ? t : t?.name ?? "").length;
  for (const c of content) {
    if (c?.type === "text") n += String(c.text ?? "").length;
    else if (c?.type === "thinking") n += String(c.thinking ?? "").length;
    else if (c?.type === "toolCall") n += String(c.name ?? "").length + (JSON.stringify(c.arguments ?? {})?.length ?? 0);
  }
  return n;
}

function charsOfTools(tools) {
  if (!Array.isArray(tools)) return 0;
  return tools.reduce((n, t) => n + String(t?.name ?? "").length + String(t?.description ?? "").length +
    (JSON.stringify(t?.parameters ?? {})?.length ?? 0), 0);
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) return ms <= 0 ? queueMicrotask(resolve) : resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener?.("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener?.("abort", done, { once: true });
  });
}

function idAllocator(existing) {
  let n = existing;
  return () => `call_${++n}`;
}

function hasToolCalls(m) {
  return Array.isArray(m.content) && m.content.some((c) => c?.type === "toolCall");
}

function textOf(m) {
  if (typeof m?.content === "string") return m.content;
  if (!Array.isArray(m?.content)) return "";
  return m.content.filter((c) => c?.type === "text").map((c) => c.text).join("\n");
}

function findLastIndex(array, predicate) {
  for (let i = array.length - 1; i >= 0; i--) if (predicate(array[i])) return i;
  return -1;
}

function firstLine(s) {
  return (s.split("\n").find((l) => l.trim()) ?? "").trim();
}

function code(s) {
  return `\`${s}\``;
}

function count(n, singular, plural = `${singular}s`) {
  return `${n} ${n === 1 ? singular : plural}`;
}

function list(items, conjunction = "and") {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} ${conjunction} ${items[items.length - 1]}`;
}
