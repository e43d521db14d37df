// The JS half of the built-in providers (§6): src/js/providers/ (`Driver`) calls these for what needs JS values —
// the request projection and its side table of markers, the restoring of the body, the fetch-error texts and
// retry classification, and the deltas applied to the one message object every event shares. Never throws where
// the driver cannot catch; a caller value is read, never written (D6).

import { MARK, MARK_END, errorMessage } from "./values.js";

/** `patch`'s operation, and `pushDelta`'s `NONE`. Twin of `protocol::patch_op` (src/js/protocol.rs). */
export const PATCH_OP = Object.freeze({
  SET_OBJECT: 0, SET_ARRAY: 1, SET_VALUE: 2, SET_STRING: 3, APPEND_STRING: 4, NONE: -1,
});
/** `pushDelta`'s block kind. Twin of `protocol::delta_kind` (src/js/protocol.rs). */
export const DELTA_KIND = Object.freeze({ TEXT: 0, THINKING: 1, TOOL_CALL: 2 });

/** Applies one partial-JSON patch (a `PATCH_OP`) to the live arguments object (P-6.4.2). */
export function patch(root, path, op, value) {
  let target = root;
  const last = path.length - 1;
  for (let i = 0; i < last; i++) {
    target = target?.[path[i]];
    if (target === null || typeof target !== "object") return;
  }
  if (last < 0) return;
  const key = path[last];
  switch (op) {
    case PATCH_OP.SET_OBJECT: target[key] = {}; break;
    case PATCH_OP.SET_ARRAY: target[key] = []; break;
    case PATCH_OP.SET_VALUE: case PATCH_OP.SET_STRING: target[key] = value; break;
    case PATCH_OP.APPEND_STRING: if (typeof target[key] === "string") target[key] += value; break;
  }
}

/** By `DELTA_KIND`. */
const DELTA_EVENTS = ["text_delta", "thinking_delta", "toolcall_delta"];
const DELTA_FIELDS = ["text", "thinking"];

/** A `<kind>_delta` in one call: the block `partial.content[index]` grows (`+= delta`: strings grow on the JS
 *  side, never rebuilt from Rust, P-6.1.7; for a tool call the one patch `op` of its arguments, unless
 *  `PATCH_OP.NONE`), then its event is pushed. A step that throws is skipped, as when they were separate calls. */
// Issue 34: each tool call's arguments text, kept here as its deltas arrive (the assembler keeps none, see
// `Assembler::keep_args_in_host`), and parsed here at its end: a tool call of megabytes (a file written by a coding
// agent) is never held in wasm memory whole.
const argsTexts = new WeakMap();

export function pushDelta(stream, partial, index, kind, delta, path, op, value) {
  try {
    if (kind < DELTA_KIND.TOOL_CALL) partial.content[index][DELTA_FIELDS[kind]] += delta;
    else {
      const block = partial.content[index];
      argsTexts.set(block, (argsTexts.get(block) ?? "") + delta);
      if (op !== PATCH_OP.NONE) patch(block.arguments, path, op, value);
    }
  } catch {}
  try {
    stream.push({ type: DELTA_EVENTS[kind], contentIndex: index, delta, partial });
  } catch {}
}

/** The arguments text of the tool call `block` becomes `text`: the provider sent the whole text at the end, as one
 *  long string of a stream line (`Assembler::tool_args_complete`). */
export function setArgsText(block, text) {
  argsTexts.set(block, text);
}

/** The final arguments of the tool call `block` as `JSON.parse` reads its text (called when the assembler found the
 *  text clean: read alike by `JSON.parse` and the core's parser), or undefined when that is not an object: then the
 *  core parses the text itself (`takeArgsText`), with its repair and its error texts. */
export function parseArgs(block) {
  let v;
  try {
    v = JSON.parse(argsTexts.get(block) ?? "");
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return undefined;
  argsTexts.delete(block);
  return v;
}

/** The arguments text of the tool call `block` as a JSON string literal, for the core to parse (P-6.4.3's repair and
 *  error texts): JSON, so that a lone surrogate reaches Rust as the escape `wtf::parse` turns into its stand-in, as
 *  the deltas' own text was held there before. */
export function takeArgsText(block) {
  const text = argsTexts.get(block) ?? "";
  argsTexts.delete(block);
  return JSON.stringify(text);
}

export function globalFetch() {
  return typeof globalThis.fetch === "function" ? globalThis.fetch.bind(globalThis) : undefined;
}

/** An environment variable from process.env or Deno.env; undefined in browsers. */
export function envVar(name) {
  try {
    if (typeof process !== "undefined" && process?.env) return process.env[name];
  } catch {}
  try {
    if (typeof Deno !== "undefined") return Deno.env.get(name);
  } catch {}
  return undefined;
}

export function headerEntries(headers) {
  const out = [];
  try {
    headers.forEach((value, key) => out.push([key, value]));
  } catch {}
  return out;
}

export function random() {
  return Math.random();
}

// Requests of the built-in providers (§6, issue 13): the wire formats get a copy of only the
// fields they read, as JSON text Rust can hold. A string Rust cannot hold exactly (a lone
// surrogate, or our own marker character) and an opaque value that is only forwarded (tool-call
// `arguments`, and tool schemas when they do not fit) are left here in a side table; the copy
// carries a marker `\uFDD0<s|v><index>.<JSON length>\uFDD1` instead, which `restoreAt` swaps
// back, so the body JSON.stringify writes holds exactly what the caller's values hold. `details`
// and every other field no wire format reads are never touched.

// A marker's first and last characters, `MARK` and `MARK_END`, are in values.js (the validator's view writes them
// too, in the loop's module, which has no providers: issue 43); the regular expressions below spell them out.
export { MARK, MARK_END };
/** The surrogates Rust keeps as stand-ins (src/core/text/wtf.rs, `stand_in`): a string holding one alone is marked. */
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const wellFormed = typeof String.prototype.isWellFormed === "function"
  ? (s) => s.isWellFormed()
  : (s) => !LONE_SURROGATE.test(s);

const MESSAGE_FIELDS = new Set(["role", "content", "timestamp", "toolCallId", "toolName", "isError", "api",
  "provider", "model", "stopReason", "sections", "toolsAdded", "toolsRemoved"]);
const BLOCK_FIELDS = new Set(["type", "text", "textSignature", "thinking", "thinkingSignature", "redacted", "data",
  "mimeType", "id", "name", "arguments", "thoughtSignature"]);
const TOOL_FIELDS = new Set(["name", "description", "parameters"]);

// Issue 34: big payloads stay out of wasm memory. A long string in a field the wire formats only forward (a text, a
// thinking text, an image's base64 data, a string `content`) is left here as a marker too, so the request's text in
// linear memory holds only what is small and structural, whatever the images and texts weigh; `restoreText` puts
// the originals into the body in JS. The one test the wire formats make on such a field is whether it is blank
// (Rust's `trim().is_empty()`), so a string that is blank by Rust's definition is never marked: a marker is not
// blank, and would not be dropped where the original is.
/** From this many UTF-16 units on, a forwarded string stays in JS. */
export const LONG_STRING = 1024;
const FORWARDED_TEXT = new Set(["text", "thinking", "data"]);
/** A character that is not white space by Rust's `char::is_whitespace` (Unicode White_Space). */
const NOT_RUST_SPACE = /[^\t\n\v\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]/;

class Projection {
  constructor(opaqueSchemas) {
    this.opaqueSchemas = opaqueSchemas;
    this.table = [];
    // Equal strings share one marker, so Rust still sees them equal (tool names, ids, providers).
    this.strings = new Map();
    // Markers written, and whether a schema went as it is (it may hold a marker character itself).
    this.markers = 0;
    this.rawSchemas = false;
    // Where the walk is (`"context.messages"`, then keys and indices): written out only for an error, so a long
    // transcript builds no path strings.
    this.at = [];
  }

  /** The walk's place as text: `context.messages[3].content[1].arguments`. */
  where() {
    let path = "";
    for (const step of this.at) path += typeof step === "number" ? `[${step}]` : path === "" ? step : `.${step}`;
    return path;
  }

  text(s) {
    if (wellFormed(s) && !s.includes(MARK)) return s;
    return this.marked(s);
  }

  /** A forwarded string: a long one that is not blank stays here (issue 34), any other as `text` has it. */
  forwarded(s) {
    return s.length >= LONG_STRING && NOT_RUST_SPACE.test(s) ? this.marked(s) : this.text(s);
  }

  marked(s) {
    let index = this.strings.get(s);
    if (index === undefined) {
      index = this.table.length;
      this.table.push(s);
      this.strings.set(s, index);
    }
    this.markers++;
    return `${MARK}s${index}.${JSON.stringify(s).length - 2}${MARK_END}`;
  }

  /** A forwarded value: kept here, checked now so an unsendable one is named by its path. */
  opaque(v) {
    let text;
    try {
      text = JSON.stringify(v);
    } catch (e) {
      throw new Error(`${this.where()}: ${errorMessage(e)}`);
    }
    if (text === undefined) return undefined;
    const index = this.table.length;
    this.table.push(v);
    this.markers++;
    return `${MARK}v${index}.${text.length}${MARK_END}`;
  }

  /** A scalar field as JSON.stringify would write it; objects in scalar positions are not read. */
  scalar(v) {
    switch (typeof v) {
      case "string": return this.text(v);
      case "number": case "boolean": return v;
      // No wire format sends a non-string scalar field as it is: a stand-in, never read.
      case "bigint": return null;
      case "object": return v === null ? null : this.unread(v);
      default: return undefined;
    }
  }

  /** An object where no wire format looks inside (e.g. an object `text`): a stand-in, never read. */
  unread(v) {
    return Array.isArray(v) ? [] : {};
  }

  fields(source, allowed, each) {
    const out = {};
    for (const key of Object.keys(source)) {
      if (!allowed.has(key)) continue;
      this.at.push(key);
      const v = each(key, source[key]);
      this.at.pop();
      if (v !== undefined) out[key] = v;
    }
    return out;
  }

  list(v, each) {
    if (!Array.isArray(v)) return this.scalar(v);
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      this.at.push(i);
      const item = each(v[i]);
      this.at.pop();
      out[i] = item === undefined ? null : item;
    }
    return out;
  }

  isObjectLike(v) {
    return v !== null && typeof v === "object" && !Array.isArray(v);
  }

  message(m) {
    if (!this.isObjectLike(m)) return this.scalar(m);
    return this.fields(m, MESSAGE_FIELDS, (key, v) => {
      switch (key) {
        case "content": return typeof v === "string" ? this.forwarded(v) : this.list(v, (b) => this.block(b));
        case "sections": return this.sections(v);
        case "toolsAdded": case "toolsRemoved": return this.list(v, (t) => this.tool(t));
        default: return this.scalar(v);
      }
    });
  }

  block(b) {
    if (!this.isObjectLike(b)) return this.scalar(b);
    return this.fields(b, BLOCK_FIELDS, (key, v) => {
      if (key === "arguments" && ((v !== null && typeof v === "object") || typeof v === "bigint")) return this.opaque(v);
      return typeof v === "string" && FORWARDED_TEXT.has(key) ? this.forwarded(v) : this.scalar(v);
    });
  }

  sections(v) {
    if (!this.isObjectLike(v)) return this.scalar(v);
    const out = {};
    for (const name of Object.keys(v)) {
      this.at.push(name);
      const value = this.scalar(v[name]);
      this.at.pop();
      if (value !== undefined) out[this.text(name)] = value;
    }
    return out;
  }

  tool(t) {
    if (!this.isObjectLike(t)) return this.scalar(t);
    return this.fields(t, TOOL_FIELDS, (key, v) => {
      if (key !== "parameters" || v === null || typeof v !== "object") return this.scalar(v);
      // Google rewrites schemas, so they go as JSON when Rust can hold them (the first try); else
      // the top level stays readable (Anthropic picks its keys) and each member is forwarded.
      if (this.opaqueSchemas) return this.schema(v);
      this.rawSchemas = true;
      return v;
    });
  }

  schema(v) {
    // restoreAt puts values back, not keys: a key Rust cannot hold forwards the whole schema.
    const keys = this.isObjectLike(v) && typeof v.toJSON !== "function" ? Object.keys(v) : null;
    if (keys === null || keys.some((k) => this.text(k) !== k)) return this.opaque(v);
    const out = {};
    for (const key of keys) {
      const member = v[key];
      this.at.push(key);
      const copy = (member !== null && typeof member === "object") || typeof member === "bigint"
        ? this.opaque(member)
        : this.scalar(member);
      this.at.pop();
      if (copy !== undefined) out[key] = copy;
    }
    return out;
  }
}

/** `[messagesJson, table, modelJson, optionsJson]`: the fields of `context.messages` the wire
 *  formats read, and `model` and `options` as JSON (`undefined` when they cannot be written), their
 *  strings Rust cannot hold as markers too. `null` when the schemas do not fit as JSON text (then
 *  the caller asks again with `opaqueSchemas`). Throws an Error naming the field of a message value
 *  that cannot be sent. */
export function projectMessages(messages, model, options, opaqueSchemas) {
  const p = new Projection(opaqueSchemas);
  p.at.push("context.messages");
  const copy = p.list(messages, (m) => p.message(m));
  let text;
  try {
    text = JSON.stringify(copy);
  } catch (e) {
    if (!opaqueSchemas) return null;
    throw e;
  }
  // A schema's own marker character would read as a marker: such schemas go the other way.
  if (p.rawSchemas && count(text, MARK) !== p.markers) return null;
  const strings = (_, v) => (typeof v === "string" ? p.text(v) : v);
  const json = (v) => {
    try {
      return JSON.stringify(v, strings);
    } catch {
      return undefined;
    }
  };
  return [text, p.table, json(model), json(options)];
}

function count(text, c) {
  let n = 0;
  for (let at = text.indexOf(c); at !== -1; at = text.indexOf(c, at + 1)) n++;
  return n;
}

// `MARK` and `MARK_END` spelled out (tests/js/protocol.test.mjs checks them).
const WHOLE_MARKER = /^\uFDD0[sv](\d+)\.\d+\uFDD1$/;
const MARKERS = /("?)\uFDD0([sv])(\d+)\.\d+\uFDD1("?)/g;

/** A string of the wire format's output with the originals of `table` put back: a whole marker
 *  is its value; inside a string, a quoted marker is the JSON text of its value (a stringified
 *  `arguments`), a bare string marker the string itself. */
export function restoreString(s, table) {
  const whole = WHOLE_MARKER.exec(s);
  if (whole !== null) return table[Number(whole[1])];
  return s.replace(MARKERS, (_, open, kind, index, close) => {
    const v = table[Number(index)];
    if (open !== "" && close !== "") return JSON.stringify(v);
    return open + (kind === "s" ? v : JSON.stringify(v)) + close;
  });
}

/** The body text with the originals of `table` put back: exactly what `restoreAt` on the parsed body and
 *  `JSON.stringify` of it would send, without parsing the body. The text is compact JSON from Rust
 *  (`js_json_stringify_verbatim`), where the marker character only occurs inside strings, never escaped: from each
 *  one, the string literal around it is found (its quotes are the nearest ones not escaped by a backslash), restored
 *  and written again. A key stays as it is (a `:` follows it), as `restoreAt` leaves keys. */
export function restoreText(text, table) {
  let out = "";
  let done = 0;
  for (let at = text.indexOf(MARK); at !== -1; at = text.indexOf(MARK, at)) {
    let open = at;
    do open = text.lastIndexOf('"', open - 1); while (escaped(text, open));
    let close = at;
    do close = text.indexOf('"', close + 1); while (escaped(text, close));
    if (open < done || close === -1) throw new Error("restoreText: a marker outside a string");
    if (text.charCodeAt(close + 1) !== 58 /* : */) {
      out += text.slice(done, open) + JSON.stringify(restoreString(JSON.parse(text.slice(open, close + 1)), table));
      done = close + 1;
    }
    at = close + 1;
  }
  return done === 0 ? text : out + text.slice(done);
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escaped(text, at) {
  let n = 0;
  while (at - n > 0 && text.charCodeAt(at - n - 1) === 92 /* \ */) n++;
  return n % 2 === 1;
}

/** `root[path…] = restoreString(s, table)`: one marked string of the parsed body (the paths come
 *  from `marker::marked_strings`, so the body is parsed without a reviver). */
export function restoreAt(root, path, s, table) {
  let holder = root;
  for (let i = 0; i + 1 < path.length; i++) holder = holder[path[i]];
  holder[path[path.length - 1]] = restoreString(s, table);
}

// Issue 34: a stream line of megabytes (a text delta, a tool call's arguments in one piece, a reasoning item) is
// parsed here, not in wasm: the decoder hands its bytes over as they arrive (`SseDecoder::take_spill`), and the wire
// format reads a copy of the event whose long strings are markers of `table` (`providers::marker`), put back by
// `restoreValue` wherever the assembler's output reaches JS. A tool call's fragment that is one of them is read by
// the assembler in pieces (`HostStrings`). Any string holding the marker character is a marker too, so a marker on
// the Rust side is always one of ours.

/** The event data `text` (JSON) as text whose long strings are markers of strings pushed to `table`; `undefined`
 *  when it is not JSON, or a key holds the marker character (then the core reads the text itself, as before). */
export function projectLine(text, table) {
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const marked = (s) => {
    const index = table.length;
    table.push(s);
    return `${MARK}s${index}.${s.length}${MARK_END}`;
  };
  const keep = (s) => (s.length >= LONG_STRING && NOT_RUST_SPACE.test(s)) || s.includes(MARK);
  let sound = true;
  const walk = (x) => {
    if (typeof x === "string") return keep(x) ? marked(x) : x;
    if (x === null || typeof x !== "object") return x;
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) x[i] = walk(x[i]);
    } else {
      for (const key of Object.keys(x)) {
        if (key.includes(MARK)) sound = false;
        x[key] = walk(x[key]);
      }
    }
    return x;
  };
  try {
    v = walk(v);
    return sound ? JSON.stringify(v) : undefined;
  } catch {
    return undefined; // nested past the stack: the core's parser says so, as before
  }
}

/** `v` with the strings of `table` its markers stand for put back (in place for objects and arrays). */
export function restoreValue(v, table) {
  try {
    return restoreIn(v, table);
  } catch {
    return v;
  }
}

function restoreIn(v, table) {
  if (typeof v === "string") return v.includes(MARK) ? restoreString(v, table) : v;
  if (v !== null && typeof v === "object") {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = restoreIn(v[i], table);
    } else {
      for (const key of Object.keys(v)) v[key] = restoreIn(v[key], table);
    }
  }
  return v;
}

// Fetch and body-read failures (P-6.2.6, issue 13). Runtimes hide the reason of a network error in
// `cause` (undici: `fetch failed` ← `redirect count exceeded`); pi-ai appends the deepest cause and
// its code, and so do we. Neither helper throws: a hostile error's getters are caught.

const CAUSE_DEPTH = 5;

/** `<message>: <deepest cause>[ (<code>)]`, worded as pi-ai's `withCauseDetail`. */
export function failureMessage(e) {
  const message = errorMessage(e);
  try {
    if (!(e instanceof Error)) return message;
    let deepest;
    let current = e.cause;
    for (let depth = 0; depth < CAUSE_DEPTH && current instanceof Error; depth++) {
      deepest = current;
      current = current.cause;
    }
    if (deepest === undefined) return message;
    let detail = String(deepest.message || deepest.name).trim();
    const code = deepest.code;
    if ((typeof code === "string" || typeof code === "number") && !detail.includes(String(code))) {
      detail = detail ? `${detail} (${code})` : String(code);
    }
    if (!detail || message.includes(detail)) return message;
    return message ? `${message}: ${detail}` : detail;
  } catch {
    return message;
  }
}

// The TypeError texts of a failed connection (Node, Chromium, Firefox, WebKit, Deno, Workers):
// any other TypeError from fetch is a bad URL, header or init, which a retry cannot fix.
const NETWORK_TEXTS = ["fetch failed", "failed to fetch", "networkerror when attempting to fetch resource.", "load failed",
  "network connection lost."];
const NETWORK_PREFIXES = ["error sending request", "client error", "network error", "networkerror"];
// undici causes of `fetch failed` that answer the same way every time.
const FIXED_CAUSES = ["redirect count exceeded", "unknown scheme", "bad port"];

/** Whether a failed fetch may succeed when tried again (network trouble), or is deterministic. */
export function retryableFailure(e) {
  try {
    if (e === null || typeof e !== "object") return true;
    // An error that says so is not retried (a cassette's mismatch, issue 44: the same request fails the same way).
    if (e.retryable === false) return false;
    const name = String(e.name);
    if (name === "SyntaxError" || name === "NotSupportedError" || name === "RangeError") return false;
    if (name !== "TypeError") return true;
    const message = String(e.message).trim().toLowerCase();
    if (!NETWORK_TEXTS.includes(message) && !NETWORK_PREFIXES.some((p) => message.startsWith(p))) return false;
    let current = e.cause;
    for (let depth = 0; depth < CAUSE_DEPTH && current !== null && typeof current === "object"; depth++) {
      if (current.code === "ERR_INVALID_URL") return false;
      if (typeof current.message === "string" && FIXED_CAUSES.includes(current.message)) return false;
      current = current.cause;
    }
    return true;
  } catch {
    return true;
  }
}
