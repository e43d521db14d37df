// Readers of parsed provider JSON, shared by every wire format: a missing member, a member of a non-object or one of
// the wrong type reads as the empty value; no reader throws.
import { parseJsonWithRepair } from "./repair.js";

const hasOwn = Object.prototype.hasOwnProperty;

/** Whether `v` is a JSON object (not null, not an array). @param {unknown} v @returns {boolean} */
export const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/** The member `key` of an object, else undefined. @param {unknown} v @param {string} key @returns {unknown} */
export const get = (v, key) => (isObject(v) && hasOwn.call(v, key) ? v[key] : undefined);

/** `v` when a string, else undefined. @param {unknown} v @returns {string | undefined} */
export const asStr = (v) => (typeof v === "string" ? v : undefined);

/** `v` when an array, else undefined. @param {unknown} v @returns {unknown[] | undefined} */
export const asArray = (v) => (Array.isArray(v) ? v : undefined);

/** `v` when a boolean, else undefined. @param {unknown} v @returns {boolean | undefined} */
export const asBool = (v) => (typeof v === "boolean" ? v : undefined);

/** `v` when a number, else undefined. @param {unknown} v @returns {number | undefined} */
export const asF64 = (v) => (typeof v === "number" ? v : undefined);

/**
 * `v` when an integer in [0, 2^64) (`-0` is not one), else undefined.
 * @param {unknown} v @returns {number | undefined}
 */
export const asU64 = (v) => (Number.isInteger(v) && v >= 0 && v < 2 ** 64 && !Object.is(v, -0) ? v : undefined);

/** A string member, or "" when missing or not a string. @param {unknown} v @param {string} key @returns {string} */
export const str = (v, key) => asStr(get(v, key)) ?? "";

/** A finite number member, else undefined. @param {unknown} v @param {string} key @returns {number | undefined} */
export const num = (v, key) => {
  const n = get(v, key);
  return Number.isFinite(n) ? n : undefined;
};

/** A message's `role`, or "". @param {unknown} v @returns {string} */
export const role = (v) => str(v, "role");

/** A block's `type`, or "". @param {unknown} v @returns {string} */
export const kind = (v) => str(v, "type");

/** A message's content blocks (empty for a string or missing content). @param {unknown} v @returns {unknown[]} */
export const blocks = (v) => asArray(get(v, "content")) ?? [];

/**
 * Stream data as the driver reads it (P-6.3.2): `JSON.parse`, then the repair pass (repair.js). Undefined when it is
 * not JSON (`[DONE]`, garbage).
 * @param {string} text @returns {unknown}
 */
export const parseData = (text) => {
  try {
    return parseJsonWithRepair(text);
  } catch {
    return undefined;
  }
};

/** Text that may be JSON of an array or an object (after JSON's white space); most texts tried are not (an id, an
 *  empty signature), and telling them apart first spares a thrown `SyntaxError` each. */
const CONTAINER = /^[ \t\n\r]*[[{]/;

/**
 * `JSON.parse(text)` when `text` is the JSON of an array or an object, else undefined (never throws).
 * @param {unknown} text @returns {unknown}
 */
export const parseContainer = (text) => {
  if (typeof text !== "string" || !CONTAINER.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
