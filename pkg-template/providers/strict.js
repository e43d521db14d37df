// Field checks for the stream items the wire formats turn into content (issue 13, P-6.1.2): a wrong or missing
// field ends the stream with one error naming the item and the field. Each check returns the value or throws an
// Error whose message is that error's text.
import { asU64, get } from "./json.js";

/**
 * The JSON type of a value as the messages name it (undefined: "missing").
 * @param {unknown} value @returns {string}
 */
export const typeName = (value) =>
  value === undefined
    ? "missing"
    : value === null
      ? "null"
      : Array.isArray(value)
        ? "an array"
        : { boolean: "a boolean", number: "a number", string: "a string" }[typeof value] ?? "an object";

/**
 * `Malformed <format> stream: <item>: "<field>" must be <expected>, got <type>`.
 * @param {string} format @param {string} item @param {string} field @param {string} expected @param {unknown} got
 * @returns {string}
 */
export const message = (format, item, field, expected, got) =>
  `Malformed ${format} stream: ${item}: "${field}" must be ${expected}, got ${typeName(got)}`;

const fail = (format, item, field, expected, got) => {
  throw new Error(message(format, item, field, expected, got));
};

/**
 * A field that must be a non-empty string. @param {string} format @param {string} item @param {unknown} parent
 * @param {string} field @returns {string}
 */
export const requiredStr = (format, item, parent, field) => {
  const value = get(parent, field);
  if (value === "") throw new Error(`Malformed ${format} stream: ${item}: "${field}" must be a non-empty string, got ""`);
  return typeof value === "string" ? value : fail(format, item, field, "a non-empty string", value);
};

/**
 * A field that must be a string (empty allowed). @param {string} format @param {string} item @param {unknown} parent
 * @param {string} field @returns {string}
 */
export const requiredString = (format, item, parent, field) => {
  const value = get(parent, field);
  return typeof value === "string" ? value : fail(format, item, field, "a string", value);
};

/**
 * A field that may be missing or null (→ undefined), else must be a string. @param {string} format
 * @param {string} item @param {unknown} parent @param {string} field @returns {string | undefined}
 */
export const optionalStr = (format, item, parent, field) => {
  const value = get(parent, field);
  if (value == null) return undefined;
  return typeof value === "string" ? value : fail(format, item, field, "a string", value);
};

/**
 * A field that may be missing or null (→ undefined), else must be an integer ≥ 0. @param {string} format
 * @param {string} item @param {unknown} parent @param {string} field @returns {number | undefined}
 */
export const optionalIndex = (format, item, parent, field) => {
  const value = get(parent, field);
  return value == null ? undefined : requiredIndex(format, item, parent, field);
};

/**
 * A field that must be an integer ≥ 0. @param {string} format @param {string} item @param {unknown} parent
 * @param {string} field @returns {number}
 */
export const requiredIndex = (format, item, parent, field) => {
  const value = get(parent, field);
  return asU64(value) ?? fail(format, item, field, "an integer ≥ 0", value);
};
