// The live `arguments` of a streaming tool call (P-6.4.2): a tolerant, incremental JSON parser that turns argument
// fragments into patches on a root object `{}`. It keeps its state between fragments and never looks at a character
// twice, so a tool call of megabytes in thousands of deltas costs time linear in its text.
//
// What the live value shows: containers appear when opened, an object key once its value starts; a string appears
// when it starts (at the end of its fragment, maybe empty) and grows by one `appendString` per fragment, escapes
// decoded, an incomplete escape (`\`, `\u00`, a high surrogate awaiting its low half) held back; numbers, `true`,
// `false` and `null` appear only once their delimiter arrived (`{"n": 12` shows `{}`: 12 may become 123); a
// non-object root leaves `{}`; malformed input freezes the last good value. Inside strings it is exactly as tolerant
// as the final parse's repair pass (repair.js), so the live value converges to the final one: raw control characters
// are kept, a backslash that starts no valid escape is a literal backslash; lone surrogates are kept.
// Limits: MAX_DEPTH nested containers and MAX_PATH_KEY_BYTES along the path of a live value; beyond either the live
// value freezes. The second keeps the total patch payload (each patch carries its full path) linear in the input.

/** Containers nested deeper than this are not parsed (E-8.4.1; repair.js has the same limit). */
export const MAX_DEPTH = 512;

/** The most key bytes (UTF-8, a lone surrogate counting 4) the path of a live value may hold. */
export const MAX_PATH_KEY_BYTES = 1024;

// Where the parser is between two characters.
const START = 0, // before the root value
  FIRST_KEY = 1, // after `{`: a key or `}`
  KEY = 2, // after `,` in an object
  IN_KEY = 3,
  COLON = 4,
  VALUE = 5, // after `:`, or `,` in an array
  FIRST_ELEMENT = 6, // after `[`: a value or `]`
  IN_STRING = 7,
  SCALAR = 8, // inside a number or literal
  AFTER_VALUE = 9, // `,` or the closing bracket
  DONE = 10, // the root object closed: only whitespace may follow
  FROZEN = 11;

const OBJECT = -1; // a stack frame; an array's frame is the index of its next element
const STOP = /["\\]/g;

/**
 * The incremental parser. Patches are `{ path: Array<string|number>, op, value }`, `op` one of `"setObject"`,
 * `"setArray"`, `"setValue"` (a complete number, boolean or null: `value`), `"setString"` (a string starts: its
 * decoded text so far, maybe empty) and `"appendString"` (text appended to the string at `path`); applied in order
 * to `{}` with `apply` they give the live value.
 */
export class PartialJson {
  constructor() {
    this.state = START;
    this.stack = []; // open containers, the root object first
    this.path = []; // the path of the innermost open container
    this.keyBytes = 0; // the bytes of the keys in `path`
    this.key = ""; // the key of the value about to start
    this.slot = undefined; // the path segment of the string or scalar being read
    this.text = ""; // the key being read, or decoded string text not yet sent
    this.announced = false; // whether the string value was sent with `setString`
    this.scalar = ""; // the text of the number or literal being read
    this.esc = ""; // the escape being read as typed (`\`, `\u`, `\u1`…), "" outside one
    this.high = -1; // a `\uD800`–`\uDBFF` escape waiting for its low half
  }

  /**
   * Whether the text so far is one whole object within the limits: then `JSON.parse` of the text is the final
   * arguments (issue 34). `false` does not mean invalid, only that the text must go through `parseToolArguments`.
   * @returns {boolean}
   */
  clean() {
    return this.state === DONE;
  }

  /**
   * Feeds the next fragment of the arguments text; the patches for the changes it brings are appended to `out`.
   * Cost: proportional to the fragment plus the patches produced.
   * @param {string} fragment
   * @param {Array<{path: Array<string|number>, op: string, value: *}>} out
   */
  push(fragment, out) {
    let i = 0;
    while (i < fragment.length && this.state !== FROZEN) {
      if (this.state !== IN_KEY && this.state !== IN_STRING) structural(this, fragment.charCodeAt(i++), out);
      else if ((i = scan(this, fragment, i)) < 0) {
        i = -i;
        if (this.state === IN_KEY) {
          this.key = this.text;
          this.text = "";
          this.state = COLON;
        } else {
          flush(this, out);
          this.slot = undefined;
          this.state = AFTER_VALUE;
        }
      }
    }
    if (this.state === IN_STRING) flush(this, out);
  }
}

const isSpace = (c) => c === 32 || c === 10 || c === 13 || c === 9;

/** One character (code unit `c`) outside strings. */
function structural(p, c, out) {
  if (isSpace(c) && p.state !== SCALAR) return;
  const top = p.stack[p.stack.length - 1];
  switch (p.state) {
    case START:
      // A non-object root leaves `{}`.
      if (c !== 123) return freeze(p);
      p.stack.push(OBJECT);
      p.state = FIRST_KEY;
      return;
    case FIRST_KEY:
    case KEY:
      if (c === 34) {
        p.text = "";
        p.esc = "";
        p.high = -1;
        p.state = IN_KEY;
      } else if (c === 125 && p.state === FIRST_KEY) close(p);
      else freeze(p);
      return;
    case COLON:
      if (c !== 58) return freeze(p);
      p.state = VALUE;
      return;
    case VALUE:
    case FIRST_ELEMENT:
      if (c === 93 && p.state === FIRST_ELEMENT) close(p);
      else startValue(p, c, out);
      return;
    case SCALAR:
      if (isSpace(c) || c === 44 || c === 125 || c === 93) {
        finishScalar(p, out);
        if (p.state !== FROZEN) {
          p.state = AFTER_VALUE;
          structural(p, c, out);
        }
      } else if ((c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122) || c === 43 || c === 45 || c === 46) {
        p.scalar += String.fromCharCode(c);
      } else freeze(p);
      return;
    case AFTER_VALUE:
      if (c === 44) p.state = top === OBJECT ? KEY : VALUE;
      else if (c === (top === OBJECT ? 125 : 93)) close(p);
      else freeze(p);
      return;
    case DONE:
      freeze(p);
  }
}

/** The first character of a value in the innermost container. */
function startValue(p, c, out) {
  const last = p.stack.length - 1;
  const top = p.stack[last];
  let seg = top, bytes = 0;
  if (top === OBJECT) {
    seg = p.key;
    p.key = "";
    bytes = utf8Length(seg);
  } else p.stack[last] = top + 1;
  if (p.keyBytes + bytes > MAX_PATH_KEY_BYTES) return freeze(p);
  if (c === 123 || c === 91) {
    if (p.stack.length >= MAX_DEPTH) return freeze(p);
    const object = c === 123;
    emit(p, out, seg, object ? "setObject" : "setArray");
    p.path.push(seg);
    p.keyBytes += bytes;
    p.stack.push(object ? OBJECT : 0);
    p.state = object ? FIRST_KEY : FIRST_ELEMENT;
  } else if (c === 34) {
    p.slot = seg;
    p.text = "";
    p.announced = false;
    p.esc = "";
    p.high = -1;
    p.state = IN_STRING;
  } else if (c === 45 || (c >= 48 && c <= 57) || c === 116 || c === 102 || c === 110) {
    p.slot = seg;
    p.scalar = String.fromCharCode(c);
    p.state = SCALAR;
  } else freeze(p);
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** A number or literal met its delimiter. */
function finishScalar(p, out) {
  const s = p.scalar;
  let value;
  if (s === "true") value = true;
  else if (s === "false") value = false;
  else if (s === "null") value = null;
  else if (NUMBER.test(s)) value = Number(s);
  else return freeze(p);
  emit(p, out, p.slot, "setValue", value);
  p.slot = undefined;
}

/** Sends the decoded text of the current string value: `setString` the first time, then `appendString` when there
 *  is new text. */
function flush(p, out) {
  if (!p.announced) {
    p.announced = true;
    emit(p, out, p.slot, "setString", p.text);
  } else if (p.text) emit(p, out, p.slot, "appendString", p.text);
  p.text = "";
}

function close(p) {
  p.stack.pop();
  if (!p.stack.length) {
    p.state = DONE;
    return;
  }
  const seg = p.path.pop();
  if (typeof seg === "string") p.keyBytes -= utf8Length(seg);
  p.state = AFTER_VALUE;
}

function freeze(p) {
  p.state = FROZEN;
  p.stack = p.path = [];
  p.key = p.text = p.scalar = "";
  p.slot = undefined;
}

function emit(p, out, seg, op, value) {
  const path = p.path.slice();
  path.push(seg);
  out.push({ path, op, value });
}

/**
 * The UTF-8 size of `s` in bytes; a lone surrogate counts 4, as a whole pair would (the key limit is a bound, not an
 * encoding). Also the SSE decoder's byte count (its text has no lone surrogates).
 * @param {string} s @returns {number}
 */
export function utf8Length(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c < 0xd800 || c > 0xdfff) n += 2;
    else if (c < 0xdc00 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) (n += 2), i++;
    else n += 3;
  }
  return n;
}

/** Reads string content from `s` at `i` into `p.text` until the closing quote (consumed) or the end of `s`. Returns
 *  the index after the last character consumed, negated when the string closed. Runs without quotes and backslashes
 *  are copied in one piece. */
function scan(p, s, i) {
  for (;;) {
    if (!p.esc && p.high < 0) {
      STOP.lastIndex = i;
      const end = STOP.test(s) ? STOP.lastIndex - 1 : s.length;
      p.text += s.slice(i, end);
      i = end;
    }
    if (i >= s.length) return i;
    if (step(p, s[i++])) return -i;
  }
}

const ESCAPED = '"\\/bfnrt', DECODED = '"\\/\b\f\n\r\t', HEX = "0123456789abcdefABCDEF";

/** One string character; true at the closing quote. As the repair pass: a backslash that starts no valid escape is
 *  a literal backslash, and the character after it is read afresh. */
function step(p, c) {
  const esc = p.esc;
  if (!esc) {
    if (c === "\\") {
      p.esc = c;
      return false;
    }
    flushHigh(p);
    if (c === '"') return true;
    p.text += c;
    return false;
  }
  if (esc === "\\") {
    const k = ESCAPED.indexOf(c);
    if (c === "u") p.esc = "\\u";
    else if (k >= 0) {
      p.esc = "";
      flushHigh(p);
      p.text += DECODED[k];
    } else return literal(p, c);
    return false;
  }
  if (!HEX.includes(c)) return literal(p, c);
  if ((p.esc += c).length < 6) return false;
  const unit = parseInt(p.esc.slice(2), 16);
  p.esc = "";
  // Surrogates pair as `JSON.parse` pairs them; a lone one is kept.
  if (p.high >= 0) {
    const high = p.high;
    p.high = -1;
    if (unit >= 0xdc00 && unit <= 0xdfff) {
      p.text += String.fromCharCode(high, unit);
      return false;
    }
    p.text += String.fromCharCode(high);
  }
  if (unit >= 0xd800 && unit <= 0xdbff) p.high = unit;
  else p.text += String.fromCharCode(unit);
  return false;
}

/** Not an escape after all: the escape typed so far is literal text, and `c` is read afresh. */
function literal(p, c) {
  const esc = p.esc;
  p.esc = "";
  flushHigh(p);
  p.text += esc;
  return step(p, c);
}

function flushHigh(p) {
  if (p.high >= 0) p.text += String.fromCharCode(p.high);
  p.high = -1;
}

const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** The value at `seg` of `node`: an own key of an object, or an index of an array. */
function child(node, seg) {
  if (typeof seg === "number") return Array.isArray(node) ? node[seg] : undefined;
  return isObject(node) && own(node, seg) ? node[seg] : undefined;
}

function put(node, seg, value) {
  // `__proto__` is a key like any other for `JSON.parse`, so an own property, not the prototype.
  if (seg === "__proto__") Object.defineProperty(node, seg, { value, writable: true, enumerable: true, configurable: true });
  else node[seg] = value;
}

/**
 * Applies one patch to the live object `root`. A patch whose parent does not exist (or is not the container its
 * segment names: a key of an object, an index of an array at most its length) is ignored, as is one with an empty
 * path; never throws on plain JSON values.
 * @param {object} root
 * @param {{path: Array<string|number>, op: string, value: *}} patch
 */
export function apply(root, { path, op, value }) {
  const last = path.length - 1;
  let node = root;
  for (let i = 0; i < last && node !== undefined; i++) node = child(node, path[i]);
  if (last < 0 || node === undefined) return;
  const seg = path[last];
  if (op === "appendString") {
    const text = child(node, seg);
    if (typeof text === "string") put(node, seg, text + value);
    return;
  }
  const v = op === "setObject" ? {} : op === "setArray" ? [] : value;
  if (typeof seg === "number" ? Array.isArray(node) && seg <= node.length : isObject(node)) put(node, seg, v);
}

/**
 * The live value after all of `text` at once (the loop's `partialToolArguments`).
 * @param {string} text
 * @returns {object}
 */
export function parsePartial(text) {
  const out = [];
  new PartialJson().push(text, out);
  const root = {};
  for (const patch of out) apply(root, patch);
  return root;
}
