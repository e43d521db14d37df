// The model-free half of the server: reads an OpenAI Chat Completions request, applies the tool policy, renders the
// ChatML prompt and turns tool schemas into the JSON-schema subset node-llama-cpp can compile into a grammar.
// Pure functions only: no model, no I/O (tests/local-llm/chat.test.mjs runs them without the model).

export const MODEL_ID = "SmolLM2-135M-Instruct";
// SmolLM2's own chat template adds this system message when the conversation has none.
export const DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
export const REPEAT_PENALTY = 1.1;

/** A request the server refuses with an OpenAI-style error body. */
export class RequestError extends Error {
  constructor(message, { param = null, status = 400, code = null, type = "invalid_request_error" } = {}) {
    super(message);
    Object.assign(this, { param, status, code, type });
  }
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** Text of a message `content`: a string, null, or parts (`text` parts kept, anything else named). */
export function contentText(content, param) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new RequestError("content must be a string or an array of parts", { param });
  return content
    .map((part, i) => {
      if (!isObject(part)) throw new RequestError("content parts must be objects", { param: `${param}[${i}]` });
      if (part.type === "text" || part.type === "input_text") return String(part.text ?? "");
      if (part.type === "refusal") return String(part.refusal ?? "");
      if (part.type === "image_url" || part.type === "input_image") return "(image omitted: model does not support images)";
      return `(${String(part.type)} omitted)`;
    })
    .join("\n");
}

function numberParam(body, name, { min = -Infinity, max = Infinity, integer = false } = {}) {
  const v = body[name];
  if (v == null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw new RequestError(`${name} must be ${integer ? "an integer" : "a number"} in [${min}, ${max}]`, { param: name });
  }
  return v;
}

/**
 * Validates and normalises a request body. Unknown fields are ignored, as OpenAI-compatible servers do.
 * `defaults`: { maxTokens } used when the request gives neither max_completion_tokens nor max_tokens.
 */
export function parseRequest(body, defaults = {}) {
  if (!isObject(body)) throw new RequestError("The request body must be a JSON object");
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new RequestError("messages must be a non-empty array", { param: "messages" });
  }
  const messages = body.messages.map((m, i) => {
    const param = `messages[${i}]`;
    if (!isObject(m) || !ROLES.has(m.role)) {
      throw new RequestError(`${param}.role must be one of ${[...ROLES].join(", ")}`, { param: `${param}.role` });
    }
    const out = { role: m.role === "developer" ? "system" : m.role === "function" ? "tool" : m.role };
    out.text = contentText(m.content, `${param}.content`);
    if (m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      out.toolCalls = m.tool_calls.map((c, j) => {
        const fn = isObject(c) && isObject(c.function) ? c.function : null;
        if (!fn || typeof fn.name !== "string") {
          throw new RequestError("tool_calls[].function.name must be a string", { param: `${param}.tool_calls[${j}]` });
        }
        return { id: typeof c.id === "string" ? c.id : "", name: fn.name, arguments: argumentsText(fn.arguments) };
      });
    }
    if (out.role === "tool") {
      out.toolCallId = typeof m.tool_call_id === "string" ? m.tool_call_id : undefined;
      out.name = typeof m.name === "string" ? m.name : undefined;
    }
    return out;
  });

  const n = numberParam(body, "n", { min: 1, max: 1, integer: true });
  void n; // only n = 1 is served
  if (body.stream != null && typeof body.stream !== "boolean") throw new RequestError("stream must be a boolean", { param: "stream" });
  const maxTokens =
    numberParam(body, "max_completion_tokens", { min: 1, integer: true }) ??
    numberParam(body, "max_tokens", { min: 1, integer: true }) ??
    defaults.maxTokens ?? 1024;
  const stop = body.stop == null ? [] : Array.isArray(body.stop) ? body.stop : [body.stop];
  if (stop.length > 4 || stop.some((s) => typeof s !== "string" || s === "")) {
    throw new RequestError("stop must be a non-empty string or an array of at most 4 of them", { param: "stop" });
  }

  const tools = parseTools(body.tools);
  const toolChoice = parseToolChoice(body.tool_choice, tools);
  return {
    messages,
    stream: body.stream === true,
    includeUsage: body.stream === true && isObject(body.stream_options) && body.stream_options.include_usage === true,
    maxTokens,
    temperature: numberParam(body, "temperature", { min: 0, max: 2 }) ?? 0,
    topP: numberParam(body, "top_p", { min: 0, max: 1 }),
    seed: numberParam(body, "seed", { integer: true }),
    repeatPenalty: numberParam(body, "repeat_penalty", { min: 0 }) ?? REPEAT_PENALTY,
    frequencyPenalty: numberParam(body, "frequency_penalty", { min: -2, max: 2 }),
    presencePenalty: numberParam(body, "presence_penalty", { min: -2, max: 2 }),
    stop,
    tools,
    toolChoice,
    responseFormat: parseResponseFormat(body.response_format),
  };
}

function argumentsText(args) {
  if (args == null) return "{}";
  return typeof args === "string" ? args : JSON.stringify(args);
}

function parseTools(tools) {
  if (tools == null) return [];
  if (!Array.isArray(tools)) throw new RequestError("tools must be an array", { param: "tools" });
  const seen = new Set();
  return tools.map((t, i) => {
    const fn = isObject(t) && (t.type === "function" || t.type == null) && isObject(t.function) ? t.function : null;
    if (!fn || typeof fn.name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(fn.name)) {
      throw new RequestError("tools[] must be {type: \"function\", function: {name, description?, parameters?}} with a name of " +
        "letters, digits, _, . or - (at most 64)", { param: `tools[${i}]` });
    }
    if (seen.has(fn.name)) throw new RequestError(`Duplicate tool name: ${fn.name}`, { param: `tools[${i}]` });
    seen.add(fn.name);
    const parameters = isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} };
    return { name: fn.name, description: typeof fn.description === "string" ? fn.description : "", parameters };
  });
}

function parseToolChoice(choice, tools) {
  if (choice == null) return "auto";
  if (choice === "none" || choice === "auto" || choice === "required") return choice;
  const name = isObject(choice) && isObject(choice.function) ? choice.function.name : undefined;
  if (typeof name !== "string") {
    throw new RequestError('tool_choice must be "none", "auto", "required" or {type: "function", function: {name}}',
      { param: "tool_choice" });
  }
  if (!tools.some((t) => t.name === name)) {
    throw new RequestError(`tool_choice names a function that is not in tools: ${name}`, { param: "tool_choice" });
  }
  return { name };
}

function parseResponseFormat(format) {
  if (format == null || format.type === "text") return null;
  if (format.type === "json_object") return { type: "json_object" };
  if (format.type === "json_schema" && isObject(format.json_schema) && isObject(format.json_schema.schema)) {
    return { type: "json_schema", schema: format.json_schema.schema };
  }
  throw new RequestError('response_format must be {type: "text" | "json_object"} or {type: "json_schema", json_schema: {schema}}',
    { param: "response_format" });
}

// ---------------------------------------------------------------------------------------------------------------
// Tool policy

// Where the text mentions `name` as a whole word (case-insensitive), or -1.
function mentionAt(text, name) {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?:^|[^A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "i").exec(text)?.index ?? -1;
}

/** Tools whose name the text mentions as a whole word (case-insensitive), in order of first mention. */
export function mentionedTools(text, tools) {
  return tools.map((tool) => ({ tool, at: mentionAt(text, tool.name) })).filter((h) => h.at >= 0)
    .sort((a, b) => a.at - b.at).map((h) => h.tool);
}

const GENERIC_WORDS = new Set(["get", "set", "put", "run", "use", "call", "do", "make", "tool", "the", "and", "for", "with"]);

// The words of a tool's name that can stand for it (get_weather → weather; readFile → read, file).
const nameParts = (tool) => tool.name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/)
  .filter((w) => w.length >= 3 && !GENERIC_WORDS.has(w));

/** Tools that share a word with the text ("weather" for get_weather, "reading" for read_file), best first. */
export function relatedTools(text, tools) {
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const scored = tools.map((tool, order) => {
    const score = nameParts(tool).filter((p) => words.some((w) => w.startsWith(p))).length;
    return { tool, score, order };
  });
  return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.order - b.order).map((s) => s.tool);
}

// A word of the message stands for a part of a tool's name when it is that part, its plural or singular, or the part
// with -ing / -ed ("files" → file, "reading" → read, "timed" → time); never a mere prefix ("listen" is not list).
function wordMatchesPart(word, part) {
  if (word === part || word === `${part}s` || word === `${part}es` || part === `${word}s`) return true;
  const stem = part.endsWith("e") ? part.slice(0, -1) : part;
  return word === `${stem}ing` || word === `${stem}ed` || word === `${part}d`;
}

/**
 * The tools a user message asks for, in the order it asks for them: the tools it names (`get_time`), and the tools
 * it calls by a word of their name that no other tool's name shares ("list the files, then read the README" →
 * list_files, read_file: "file" is shared by both, so it picks neither; "what time is it" → get_time).
 */
export function requestedTools(text, tools) {
  const words = [...text.toLowerCase().matchAll(/[a-z0-9]+/g)].map((m) => ({ word: m[0], at: m.index }));
  const base = (part) => part.replace(/s$/, "");
  const owners = new Map(); // base of a name part → how many tools have it
  for (const tool of tools) for (const b of new Set(nameParts(tool).map(base))) owners.set(b, (owners.get(b) ?? 0) + 1);
  const placed = tools.map((tool, order) => {
    const mentioned = mentionAt(text, tool.name);
    let at = mentioned >= 0 ? mentioned : Infinity;
    for (const part of nameParts(tool)) {
      if (owners.get(base(part)) !== 1) continue;
      const hit = words.find((w) => wordMatchesPart(w.word, part));
      if (hit) at = Math.min(at, hit.at);
    }
    return { tool, at, order };
  });
  return placed.filter((p) => p.at !== Infinity).sort((a, b) => a.at - b.at || a.order - b.order).map((p) => p.tool);
}

/**
 * The deterministic tool policy (a 135M model cannot judge *whether* to call a tool, only fill one in):
 * - no tools, or tool_choice "none"                   → text
 * - tool_choice {type:"function", function:{name}}    → call that tool
 * - tool_choice "required"                            → call a tool: one the latest user message names, else the
 *                                                       ones sharing a word with it (get_weather: "weather"), else
 *                                                       the model picks among all of them
 * - tool_choice "auto" (the default): the latest user message's requested tools (`requestedTools`: named, or
 *   called by a word of their name) are called one per response, in the order the message asks for them; once
 *   each has been called since that message (or when it asks for none, or was already answered in text) → text,
 *   so agent loops end.
 * Returns { mode: "text" } or { mode: "tool", candidates: [tool, …], reason }. With several candidates the model
 * chooses among them under a grammar (it favours the first), so at most one call per response.
 */
export function decideTool(req) {
  const { tools, toolChoice, messages } = req;
  if (tools.length === 0 || toolChoice === "none") return { mode: "text" };
  if (isObject(toolChoice)) {
    return { mode: "tool", candidates: tools.filter((t) => t.name === toolChoice.name), reason: "tool_choice" };
  }
  let userAt = messages.length - 1;
  while (userAt >= 0 && messages[userAt].role !== "user") userAt--;
  const lastUser = messages[userAt];
  if (toolChoice === "required") {
    const text = lastUser?.text ?? "";
    const preferred = [mentionedTools(text, tools), relatedTools(text, tools), tools].find((c) => c.length > 0);
    return { mode: "tool", candidates: preferred, reason: "required" };
  }
  if (!lastUser) return { mode: "text" };
  const since = messages.slice(userAt + 1);
  // Answered in text already, or the conversation ends on the assistant: nothing left to call.
  if (since.some((m) => m.role === "assistant" && !(m.toolCalls?.length > 0)) || messages.at(-1).role === "assistant") {
    return { mode: "text" };
  }
  const called = new Set(since.flatMap((m) => (m.toolCalls ?? []).map((c) => c.name)));
  const next = requestedTools(lastUser.text, tools).find((t) => !called.has(t.name));
  return next ? { mode: "tool", candidates: [next], reason: called.size > 0 ? "requested, next" : "requested" } : { mode: "text" };
}

// ---------------------------------------------------------------------------------------------------------------
// Prompt (ChatML, as the model's own template, plus tool instructions and tool results as user turns)

/** A prompt is a list of pieces: { special: "<|im_start|>" } or { text }. */
const S = (special) => ({ special });
const T = (text) => ({ text });

/** One line per tool: `name(a: number, b?: string) - description`. */
export function toolSignature(tool) {
  const p = tool.parameters;
  const required = new Set(Array.isArray(p.required) ? p.required : []);
  const args = Object.entries(isObject(p.properties) ? p.properties : {}).map(
    ([k, s]) => `${k}${required.has(k) ? "" : "?"}: ${typeLabel(s)}`,
  );
  const desc = tool.description ? ` - ${tool.description.trim().split("\n")[0]}` : "";
  return `${tool.name}(${args.join(", ")})${desc}`;
}

function typeLabel(s) {
  if (!isObject(s)) return "any";
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.type)) return s.type.join(" | ");
  if (s.type === "array") return `${typeLabel(s.items)}[]`;
  if (typeof s.type === "string") return s.type;
  if (Array.isArray(s.anyOf ?? s.oneOf)) return (s.anyOf ?? s.oneOf).map(typeLabel).join(" | ");
  return isObject(s.properties) ? "object" : "any";
}

// The tool list, and for a call that is due with one candidate, what its arguments mean: the parameters'
// descriptions ("Directory, '.' for the project root") are what lets a 135M model fill in a usable value.
function toolInstructions(tools, due) {
  const props = due && isObject(due.parameters.properties) ? Object.entries(due.parameters.properties) : [];
  const described = props.filter(([, s]) => isObject(s) && typeof s.description === "string" && s.description.trim());
  return [
    "You can call these tools:",
    ...tools.map((t) => `- ${toolSignature(t)}`),
    ...(described.length > 0
      ? [`Arguments of ${due.name}:`, ...described.map(([k, s]) => `- ${k}: ${s.description.trim().split("\n")[0]}`)]
      : []),
    'To call a tool, reply with only a JSON object: {"name": "<tool name>", "arguments": {<argument values>}}',
  ].join("\n");
}

export function renderToolCall(call) {
  let args = call.arguments;
  try {
    args = JSON.stringify(JSON.parse(args));
  } catch {
    // keep the text as sent
  }
  return `{"name": ${JSON.stringify(call.name)}, "arguments": ${args}}`;
}

/**
 * The prompt pieces for `req` under `decision`, ending with the open assistant turn.
 * Each user message opens a round; the tool calls and tool results that follow it are folded into that round's
 * user turn ("The add tool returned: {...}"), and the round's text answers become the assistant turn. The last
 * round, when it has results, ends with "Using this result, answer in one sentence.". Rendered this way the model
 * uses the results; shown its own JSON call in an assistant turn, it repeats the call instead of answering.
 */
export function renderPrompt(req, decision) {
  const { messages, tools } = req;
  const systems = messages.filter((m) => m.role === "system").map((m) => m.text.trim()).filter(Boolean);
  let system = systems.length > 0 ? systems.join("\n\n") : DEFAULT_SYSTEM;
  if (decision.mode === "tool") {
    system += `\n\n${toolInstructions(tools, decision.candidates.length === 1 ? decision.candidates[0] : null)}`;
  }
  const pieces = [];
  const turn = (role, text) => pieces.push(S("<|im_start|>"), T(`${role}\n${text}`), S("<|im_end|>"), T("\n"));
  turn("system", system);

  const rounds = [];
  const namesById = new Map();
  for (const m of messages) {
    if (m.role === "system") continue;
    if (m.role === "user" || rounds.length === 0) rounds.push({ user: [], results: [], answer: [] });
    const round = rounds[rounds.length - 1];
    if (m.role === "user") round.user.push(m.text);
    else if (m.role === "assistant") {
      for (const c of m.toolCalls ?? []) namesById.set(c.id, c.name);
      if (m.text.trim()) round.answer.push(m.text.trim());
    } else {
      const name = m.name ?? namesById.get(m.toolCallId) ?? "called";
      round.results.push(`The ${name} tool returned: ${m.text.trim() || "(nothing)"}`);
    }
  }
  rounds.forEach((round, i) => {
    const last = i === rounds.length - 1;
    const lines = [...round.user];
    if (round.results.length > 0) {
      lines.push(round.results.join("\n"));
      // While the request still has tools to call, the model is prefilled with the next call instead.
      if (last && decision.mode !== "tool") lines.push(`Using ${round.results.length > 1 ? "these results" : "this result"}, answer in one sentence.`);
    }
    turn("user", lines.join("\n\n"));
    if (!last && round.answer.length > 0) turn("assistant", round.answer.join("\n"));
  });
  pieces.push(S("<|im_start|>"), T("assistant\n"));
  return pieces;
}

/** The prompt as one string (tests, logs). */
export const promptText = (pieces) => pieces.map((p) => p.special ?? p.text).join("");

// ---------------------------------------------------------------------------------------------------------------
// JSON Schema → node-llama-cpp's grammar subset (GbnfJsonSchema)

const MAX_DEPTH = 12;

/**
 * Converts a tool's JSON Schema into the subset node-llama-cpp compiles to a grammar. That compiler makes every
 * listed property required, so an object keeps only its `required` properties (all of them when none is required)
 * and allows no others; `$ref`s into `$defs`/`definitions` are inlined; `allOf` is merged; keywords the grammar
 * cannot express (pattern, minimum, …) are dropped, so the loop's own validation still has the last word.
 */
export function toGrammarSchema(schema, root = schema, depth = 0) {
  const any = { type: ["string", "number", "boolean", "null"] };
  if (!isObject(schema) || depth > MAX_DEPTH) return any;
  if (typeof schema.$ref === "string") {
    const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(schema.$ref);
    const target = m && isObject(root[m[1]]) ? root[m[1]][decodeURIComponent(m[2])] : undefined;
    return toGrammarSchema(target, root, depth + 1);
  }
  if (schema.const !== undefined) return literalOk(schema.const) ? { const: schema.const } : any;
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(literalOk);
    return values.length > 0 ? { enum: values } : any;
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives) && alternatives.length > 0) {
    return { oneOf: alternatives.map((s) => toGrammarSchema(s, root, depth + 1)) };
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged = { ...schema, allOf: undefined };
    for (const part of schema.allOf) {
      const p = isObject(part) && typeof part.$ref === "string" ? resolveRef(part.$ref, root) : part;
      if (!isObject(p)) continue;
      merged.type ??= p.type;
      merged.properties = { ...(merged.properties ?? {}), ...(p.properties ?? {}) };
      merged.required = [...(merged.required ?? []), ...(Array.isArray(p.required) ? p.required : [])];
    }
    return toGrammarSchema(merged, root, depth + 1);
  }
  let type = schema.type;
  if (type == null) type = isObject(schema.properties) ? "object" : schema.items !== undefined ? "array" : undefined;
  if (type == null) return any;
  if (Array.isArray(type)) {
    const types = type.filter((t) => typeof t === "string");
    if (types.length === 1) return toGrammarSchema({ ...schema, type: types[0] }, root, depth + 1);
    return { oneOf: types.map((t) => toGrammarSchema({ ...schema, type: t }, root, depth + 1)) };
  }
  switch (type) {
    case "string": {
      const out = { type: "string" };
      if (["date-time", "date", "time"].includes(schema.format)) return { type: "string", format: schema.format };
      if (Number.isInteger(schema.minLength)) out.minLength = schema.minLength;
      if (Number.isInteger(schema.maxLength)) out.maxLength = schema.maxLength;
      return out;
    }
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { type };
    case "array": {
      const out = { type: "array" };
      out.items = schema.items === undefined ? any : toGrammarSchema(schema.items, root, depth + 1);
      if (Number.isInteger(schema.minItems)) out.minItems = schema.minItems;
      if (Number.isInteger(schema.maxItems)) out.maxItems = schema.maxItems;
      return out;
    }
    case "object": {
      const props = isObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((k) => k in props) : [];
      const keys = required.length > 0 ? Object.keys(props).filter((k) => required.includes(k)) : Object.keys(props);
      const properties = {};
      for (const k of keys) properties[k] = toGrammarSchema(props[k], root, depth + 1);
      if (keys.length === 0 && schema.additionalProperties !== false && depth > 0) {
        return { type: "object", additionalProperties: any };
      }
      return { type: "object", properties };
    }
    default:
      return any;
  }
}

function resolveRef(ref, root) {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  return m && isObject(root[m[1]]) ? root[m[1]][decodeURIComponent(m[2])] : undefined;
}

const literalOk = (v) => v === null || ["string", "number", "boolean"].includes(typeof v);

/** The grammar schema for a tool's arguments: always an object at the top. */
export function argumentsGrammarSchema(tool) {
  const s = toGrammarSchema(tool.parameters);
  return isObject(s) && s.type === "object" ? s : { type: "object", properties: {} };
}

// ---------------------------------------------------------------------------------------------------------------
// JSON completion tracking: where a generated JSON value ends (the grammar allows trailing whitespace after it).

/** Incremental scanner: feed text, `done` turns true once the first top-level value is complete. */
export class JsonEnd {
  depth = 0;
  inString = false;
  escape = false;
  started = false;
  done = false;
  /** Returns the index in `text` just after the value's end, or -1. */
  feed(text) {
    for (let i = 0; i < text.length && !this.done; i++) {
      const c = text[i];
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (c === "\\") this.escape = true;
        else if (c === '"') {
          this.inString = false;
          if (this.depth === 0) this.done = true;
        }
      } else if (c === '"') {
        this.inString = true;
        this.started = true;
      } else if (c === "{" || c === "[") {
        this.depth++;
        this.started = true;
      } else if (c === "}" || c === "]") {
        this.depth--;
        if (this.depth === 0) this.done = true;
      }
      if (this.done) return i + 1;
    }
    return -1;
  }
}
