// The final parse of a tool call's arguments at `toolcall_end` (P-6.4.3) and of provider stream data (P-6.3.2):
// `JSON.parse`, then once more after a linear repair pass, as pi-ai does. The engine's `JSON.parse` is the parser,
// so its SyntaxError messages are the ones reported; the one addition is the nesting limit (E-8.4.1).

// The nesting limit (E-8.4.1) is the incremental parser's.
import { MAX_DEPTH } from "../partial-json.js";

/** The parser message for arguments that are valid JSON but not an object, as P-6.4.3 words it. */
export const NOT_AN_OBJECT = "Tool call arguments must be a JSON object";

/**
 * The final arguments of a tool call (P-6.4.3): the arguments object (blank text, as `trim` sees it, → `{}`).
 * @param {string} text
 * @returns {object}
 * @throws {Error} whose message is the whole `argumentsError`:
 *   `"<parser message | Tool call arguments must be a JSON object>\n\nReceived arguments:\n<text>"`
 */
export function parseToolArguments(text) {
  if (text.trim() === "") return {};
  let message = NOT_AN_OBJECT;
  try {
    const value = parseJsonWithRepair(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value;
  } catch (e) {
    message = e.message;
  }
  throw new Error(`${message}\n\nReceived arguments:\n${text}`);
}

/**
 * `parseJson(text)`; if that fails and the repair pass changes the text, `parseJson(repaired)` (whose error is then
 * the one thrown, positions in the repaired text, as pi-ai does).
 * @param {string} text
 * @returns {*}
 * @throws {Error}
 */
export function parseJsonWithRepair(text) {
  try {
    return parseJson(text);
  } catch (e) {
    const repaired = repairJson(text);
    if (repaired === text) throw e;
    return parseJson(repaired);
  }
}

/**
 * `JSON.parse(text)`, except that nesting deeper than `MAX_DEPTH` containers is rejected with
 * `Maximum nesting depth (512) exceeded in JSON at position <p> (line <l> column <c>)` wherever the parse meets the
 * 513th open container before any other error.
 * @param {string} text
 * @returns {*}
 * @throws {Error} the engine's SyntaxError, or the depth error
 */
export function parseJson(text) {
  let value, error;
  try {
    value = JSON.parse(text);
  } catch (e) {
    error = e;
  }
  // 513 open brackets need at least 513 characters.
  const at = text.length > MAX_DEPTH ? tooDeepAt(text, error !== undefined) : -1;
  if (at >= 0) {
    const prefix = text.slice(0, at);
    const line = (prefix.match(/\r\n|\r|\n/g)?.length ?? 0) + 1;
    const column = at - Math.max(prefix.lastIndexOf("\n"), prefix.lastIndexOf("\r"));
    throw new Error(`Maximum nesting depth (512) exceeded in JSON at position ${at} (line ${line} column ${column})`);
  }
  if (error !== undefined) throw error;
  return value;
}

const BRACKET = /["[\]{}]/g;

/** The position of the first container opened below `MAX_DEPTH` others, if the parse reaches it, else -1. For a
 *  text `JSON.parse` rejected, the parse reaches it when the text before it, completed by a value and the closing
 *  brackets, is valid: every earlier error would have stopped it there. */
function tooDeepAt(text, invalid) {
  const closers = [];
  BRACKET.lastIndex = 0;
  while (BRACKET.test(text)) {
    const i = BRACKET.lastIndex - 1, c = text[i];
    if (c === '"') {
      let end = i;
      do end = text.indexOf('"', end + 1);
      while (end > 0 && escapedQuote(text, end));
      if (end < 0) return -1;
      BRACKET.lastIndex = end + 1;
    } else if (c === "[" || c === "{") {
      if (closers.length < MAX_DEPTH) closers.push(c === "[" ? "]" : "}");
      else if (!invalid) return i;
      else {
        try {
          JSON.parse(`${text.slice(0, i)} 0${closers.reverse().join("")}`);
          return i;
        } catch {
          return -1;
        }
      }
    } else closers.pop();
  }
  return -1;
}

/** Whether the `"` at `at` is escaped: preceded by an odd run of backslashes. */
function escapedQuote(text, at) {
  let k = at - 1;
  while (text.charCodeAt(k) === 92) k--;
  return (at - k) % 2 === 0;
}

const STRING_STOP = /["\\\0-\x1f]/g;
const HEX4 = /[0-9a-fA-F]{4}/y;

/**
 * The repair pass (linear, one scan): inside strings, raw control characters become escapes (`\b \f \n \r \t` by
 * name, the others `\u00xx`) and a backslash that starts no valid escape (including `\u` without four hex digits, and
 * a backslash at the very end) is doubled. Text outside strings is untouched.
 * @param {string} text
 * @returns {string}
 */
export function repairJson(text) {
  let out = "", from = 0, i = 0;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) break;
    STRING_STOP.lastIndex = quote + 1;
    let j, c = -1;
    while (STRING_STOP.test(text) && (c = text.charCodeAt((j = STRING_STOP.lastIndex - 1))) !== 34) {
      if (c === 92) {
        const next = text[j + 1];
        if (next !== undefined && '"\\/bfnrt'.includes(next)) STRING_STOP.lastIndex = j + 2;
        else if (next === "u" && ((HEX4.lastIndex = j + 2), HEX4.test(text))) STRING_STOP.lastIndex = j + 6;
        else {
          // Doubled; the character after it is then read on its own.
          out += `${text.slice(from, j)}\\\\`;
          from = j + 1;
        }
      } else {
        // JSON.stringify names \b \f \n \r \t and writes the others as \u00xx (lowercase), as the repair does.
        out += text.slice(from, j) + JSON.stringify(text[j]).slice(1, -1);
        from = j + 1;
      }
      c = -1;
    }
    if (c !== 34) break;
    i = j + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}
