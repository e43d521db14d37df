// Values for the binding: the object and array shapes it builds, copies, sets, ids, `typeof` codes, error texts, the
// clock. JS twin of the value primitives of `JsHost` in src/js/host.rs (`Host::object`, `kind`, `shallow_copy`,
// `copy_fields`, `object_id`…): each does one JS operation that js-sys cannot do without eval, in one crossing. No
// loop logic. What may run caller code (a getter, an iterator, a proxy trap) catches here (`errorMessage`) or is
// declared `catch` in host.rs.

/** A projection marker's first and last characters (view.js writes them for a long string kept in JS): twins of
 *  `core::text`'s `PROJECTION_START` and `PROJECTION_END`. */
export const MARK = "\uFDD0";
export const MARK_END = "\uFDD1";

/** `kindOf`'s codes. Twin of `protocol::kind_code` (src/js/protocol.rs). */
export const KIND_CODE = Object.freeze({
  UNDEFINED: 0, NULL: 1, BOOL: 2, NUMBER: 3, STRING: 4, ARRAY: 5, FUNCTION: 6, OBJECT: 7, OTHER: 8,
});

/** An object or a function: what can hold properties (`Kind::is_object_like` of src/core/host.rs). Not the ui
 *  entry's `isObject` (objects only) nor the argument checks' `isObjectArg` (no arrays): three questions, three names. */
export const isObjectLike = (m) => m !== null && (typeof m === "object" || typeof m === "function");

// `Host::object` for the common small shapes (events, content blocks): one crossing, keys as computed.
export function object1(k1, v1) {
  return { [k1]: v1 };
}
export function object2(k1, v1, k2, v2) {
  return { [k1]: v1, [k2]: v2 };
}
export function object3(k1, v1, k2, v2, k3, v3) {
  return { [k1]: v1, [k2]: v2, [k3]: v3 };
}
export function object4(k1, v1, k2, v2, k3, v3, k4, v4) {
  return { [k1]: v1, [k2]: v2, [k3]: v3, [k4]: v4 };
}
export function object5(k1, v1, k2, v2, k3, v3, k4, v4, k5, v5) {
  return { [k1]: v1, [k2]: v2, [k3]: v3, [k4]: v4, [k5]: v5 };
}
export function object6(k1, v1, k2, v2, k3, v3, k4, v4, k5, v5, k6, v6) {
  return { [k1]: v1, [k2]: v2, [k3]: v3, [k4]: v4, [k5]: v5, [k6]: v6 };
}

// The hottest shapes as literals (`literal` in host.rs picks them by their keys): V8 builds a
// literal from its boilerplate, several times faster than computed keys.
export function typeMessage(type, message) {
  return { type, message };
}
export function toolStartEvent(type, toolCallId, toolName, args) {
  return { type, toolCallId, toolName, args };
}
export function toolEndEvent(type, toolCallId, toolName, result, isError, durationMs) {
  return { type, toolCallId, toolName, result, isError, durationMs };
}
export function toolResultMessage(role, toolCallId, toolName, content, details, usage, isError, durationMs, timestamp) {
  return { role, toolCallId, toolName, content, details, usage, isError, durationMs, timestamp };
}

// `Host::object_id` / `collected_ids`.
const ids = new WeakMap();
let nextId = 1;
// The ids of collected objects, for the caches keyed by them to forget (issue 13: the schema
// cache keeps nothing for a `parameters` object JS has dropped).
let collected = [];
const registry =
  typeof FinalizationRegistry === "function" ? new FinalizationRegistry((id) => collected.push(id)) : null;

/** A stable number per object (never reused), or undefined for primitives. */
export function objectId(v) {
  if (v === null || (typeof v !== "object" && typeof v !== "function")) return undefined;
  let id = ids.get(v);
  if (id === undefined) {
    id = nextId++;
    ids.set(v, id);
    if (registry !== null) registry.register(v, id);
  }
  return id;
}

/** The ids collected since the last call (a Float64Array), or undefined for none. */
export function takeCollected() {
  if (collected.length === 0) return undefined;
  const out = Float64Array.from(collected);
  collected = [];
  return out;
}

/** `Host::object` for larger shapes: an object from `[key, value, key, value, …]` (shapes larger than `object6`). */
export function objectN(pairs) {
  const o = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) o[pairs[i]] = pairs[i + 1];
  return o;
}

export function copy(v) {
  return Array.isArray(v) ? [...v] : { ...v };
}

export function items(a) {
  return Array.from(a);
}

export function entries(o) {
  return Object.entries(o);
}

export function newSet(items) {
  return new Set(items);
}

export function setItems(s) {
  return [...s];
}

export function deferred() {
  let resolve;
  const promise = new Promise((r) => {
    resolve = r;
  });
  return [promise, resolve];
}

/** `Host::array_push` (also the Agent reducer's push, snippets/agent.js). */
export function push(a, v) {
  a.push(v);
}

/** `Host::kind`: a `KIND_CODE`. */
export function kindOf(v) {
  switch (typeof v) {
    case "undefined": return KIND_CODE.UNDEFINED;
    case "boolean": return KIND_CODE.BOOL;
    case "number": return KIND_CODE.NUMBER;
    case "string": return KIND_CODE.STRING;
    case "function": return KIND_CODE.FUNCTION;
    case "object": return v === null ? KIND_CODE.NULL : Array.isArray(v) ? KIND_CODE.ARRAY : KIND_CODE.OBJECT;
    default: return KIND_CODE.OTHER;
  }
}

export function errorMessage(e) {
  try {
    if (e instanceof Error) return String(e.message);
    if (e !== null && typeof e === "object" && typeof e.message === "string" && typeof e.name === "string") {
      return e.message;
    }
    return String(e);
  } catch {
    try {
      return Object.prototype.toString.call(e);
    } catch {
      return "Unknown error";
    }
  }
}

export function setAdd(set, v) {
  set.add(v);
}

export function setDelete(set, v) {
  set.delete(v);
}

/** An array from a list wasm-bindgen hands over in one step. */
export function arrayOf(values) {
  return values;
}

/** A JS function calling `f` with `first` before its own arguments. */
export function bindFirst(f, first) {
  return function (...args) {
    return Reflect.apply(f, undefined, [first, ...args]);
  };
}

/** A JS function forwarding its arguments as one array to `f`. */
export function variadic(f) {
  return function (...args) {
    return f(args);
  };
}

/** Compiled patterns (`null`: a pattern that compiles neither way), forgotten all at once past 256. */
const regexes = new Map();

/** `Host::regex_test` (pi-schema's `sharedRegex`): `pattern` compiled with the `u` flag, else (older schemas escape
 *  characters `u` rejects, as `\\-`) without it, then `RegExp.prototype.test`; `undefined` when neither compiles (or
 *  the match throws). */
export function regexTest(pattern, text) {
  let re = regexes.get(pattern);
  if (re === undefined) {
    if (regexes.size >= 256) regexes.clear();
    re = compiled(pattern, "u") ?? compiled(pattern, "") ?? null;
    regexes.set(pattern, re);
  }
  try {
    return re === null ? undefined : re.test(text);
  } catch {
    return undefined;
  }
}

function compiled(pattern, flags) {
  try {
    return new RegExp(pattern, flags);
  } catch {
    return undefined;
  }
}

/** `Host::regex_error`: the message `new RegExp(pattern)` throws for a pattern `regexTest` rejects (what pi-schema's
 *  `compile` throws), else `undefined`. */
export function regexError(pattern) {
  if (regexTest(pattern, "") !== undefined) return undefined;
  try {
    new RegExp(pattern);
  } catch (e) {
    return e.message;
  }
  return undefined;
}

/** `Host::regex_unicode`, format `regex`: whether `new RegExp(text, "u")` compiles. */
export function regexUnicode(text) {
  return compiled(text, "u") !== undefined;
}

/** `Host::url_can_parse`, format `url`: `URL.canParse` (a `new URL` that does not throw where the engine lacks it). */
export function urlCanParse(text) {
  if (typeof URL.canParse === "function") return URL.canParse(text);
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

export function now() {
  return performance.now();
}

/** `Host::copy_fields`: `to[key] = from[key]` for each key (a getter's throw throws through). `to` is an object the
 *  core made, so the assignment cannot fail where `Reflect.set` would answer false; it is ~2.5x faster. */
export function copyFields(from, to, keys) {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    to[key] = from[key];
  }
}

/** `Host::plain_object`: the prototype `null`, or one whose own prototype is `null` (`Object.prototype` of any realm). */
export function plainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

// T-4.3.8 (issue 42): the twins of `core::tool_schema` (`classify`, `standard_json_schema`), reading in the same order.

/** `classify`'s answers besides a Standard Schema: `JSON` (absent, JSON Schema, or not an object), `UNREADABLE`. */
export const SCHEMA_KIND = Object.freeze({ JSON: 0, UNREADABLE: 2 });

/** `tool_schema::classify` without the reason: a Standard Schema's `~standard` object, or a `SCHEMA_KIND`. */
export function classifySchema(p) {
  const type = typeof p;
  if (p === null || (type !== "object" && type !== "function") || Array.isArray(p)) return SCHEMA_KIND.JSON;
  const props = p["~standard"];
  if (isObjectLike(props)) {
    const version = props.version;
    const validate = props.validate;
    if (version === 1 && typeof validate === "function") {
      const converter = props.jsonSchema;
      return isObjectLike(converter) && typeof converter.input === "function" ? props : SCHEMA_KIND.UNREADABLE;
    }
  }
  return type === "object" && plainObject(p) ? SCHEMA_KIND.JSON : SCHEMA_KIND.UNREADABLE;
}

/** `tool_schema::standard_json_schema`: the JSON Schema a Standard Schema's converter writes for its input (draft-07),
 *  a copy without `$schema`. `props` is its `~standard` object. */
export function standardJsonSchema(props) {
  const converter = props.jsonSchema;
  const schema = converter.input({ target: "draft-07" });
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new TypeError("A Standard Schema's jsonSchema.input() must return a JSON Schema object");
  }
  const copy = { ...schema };
  delete copy.$schema;
  return copy;
}

/** E-8.6: the brand an error of the library's own carries, its stable code (a global symbol: every copy of the package
 *  sees the same). Twin of `BRAND` in pkg-template/errors.js. */
const ERROR_CODE = Symbol.for("agent-loop-wasm.errorCode");

/** `Host::coded_error` after `Host::error`: brands `error` with `code` and gives it a `code` property (not enumerable,
 *  so the error prints and serializes as before). Twin of `brand` in pkg-template/errors.js. */
export function brandError(error, code) {
  Object.defineProperty(error, ERROR_CODE, { value: code });
  Object.defineProperty(error, "code", { value: code, writable: true, configurable: true });
  return error;
}

/** `rust_string`'s way to a string holding a lone surrogate (which wasm-bindgen's UTF-8 copy turns into U+FFFD): its
 *  UTF-16 units, in one crossing. */
export function codeUnits(s) {
  const units = new Uint16Array(s.length);
  for (let i = 0; i < s.length; i++) units[i] = s.charCodeAt(i);
  return units;
}
