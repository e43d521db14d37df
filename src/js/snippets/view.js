// The validator's value view: `ViewPaths::json_copy`, `ViewPaths::patch_copy` (references: src/core/fast/view.rs) and `Host::json_stringify` of src/js/host.rs,
// the JS side of the reference validator `core::validate` (src/core/validate/special.rs reads the markers written here, and
// src/core/fast/check_call.rs writes the `z` one; validate.js, the validator's twin, validates the same view as values). Copies and writes values of any depth without recursion (issue 13).
// Runs no caller code but `toJSON` (in `stringify`) and what `structuredClone` reads. No loop logic.

import { MARK, MARK_END } from "./values.js";

// `ViewPaths::json_copy`: the text goes to Rust, the copy waits here for `takeCopy` (the next call of
// the binding), so it never crosses as text. The copy is a `structuredClone`, as the reference's
// `validateToolArguments` makes it (T-4.3): what it cannot clone (a promise, a function) throws
// the reference's own `DataCloneError`. Nesting too deep for the engine's recursive clone and
// `JSON.stringify` is copied and written again without recursion (issue 13): any depth JS holds.
//
// A clone holding what JSON cannot (NaN, ±Infinity, BigInts, undefined, holes, -0, Dates and other
// class instances, Uint8Arrays, cycles) is written as a *view* instead: `VIEW_MARK` first, then JSON in
// which each such value is a marker string (`validate/special.rs` reads them), so that the
// validator types it as pi-schema does; `patchCopy` then changes only what coercion changed.
let copied = null;
/** The first character of every marker: twin of `MARK` in src/core/validate/special.rs (a private-use code point
 *  outside the lone-surrogate stand-ins of src/core/text/wtf.rs). */
export const VIEW_MARK = "\u{10F7FE}";
/** The letter after `VIEW_MARK`: twins of the arms of `special` in src/core/validate/special.rs, except `NEG_ZERO`,
 *  which only Rust writes (src/core/fast/check_call.rs) and `revive` reads. */
export const VIEW_KIND = Object.freeze({
  NAN: "n", INFINITY: "+", NEG_INFINITY: "-", UNDEFINED: "u", BIGINT: "b", BYTES: "y", CYCLE: "c", NEG_ZERO: "z",
  LONG: "l",
});
/** Issue 34: from this many UTF-16 units on, a string of the arguments stays here as a `LONG` marker
 *  (`l<index>`); the validator takes it for the string it is where the schema only asks for a string, and asks for
 *  its text (`viewString`) anywhere else. */
const VIEW_LONG = 1024;
/** The values the `y` (bytes) and `c` (cycle) markers of the last view stand for, by index. */
let viewRefs = null;

export function jsonCopy(v) {
  const clone = cloneArgs(v);
  copied = clone;
  viewRefs = null;
  let text;
  try {
    text = stringify(clone);
  } catch (e) {
    // A BigInt or a cycle: JSON.stringify's TypeErrors.
    if (!(e instanceof TypeError)) throw e;
    return VIEW_MARK + viewText(clone);
  }
  return text !== undefined && isJsonData(clone) ? text : VIEW_MARK + viewText(clone);
}

/** The validator's copy of a tool call's arguments: a `structuredClone` (its errors thrown), without recursion where
 *  the engine's clone overflows (also the copy of `checkToolCall` in validate.js). */
export function cloneArgs(v) {
  try {
    return structuredClone(v);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return cloneDeep(v);
  }
}

/** Whether `root` is exactly what its JSON text says. A clone JSON.stringify wrote has no cycles; on any other, past
 *  `limit` containers the walk stops and answers `undefined`. */
export function isJsonData(root, limit = Infinity) {
  const stack = [root];
  while (stack.length > 0) {
    if (limit-- < 0) return undefined;
    const v = stack.pop();
    if (typeof v !== "object" || v === null) {
      if (!isJsonScalar(v)) return false;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (!(i in v)) return false;
        const item = v[i];
        if (typeof item === "object" && item !== null) stack.push(item);
        else if (!isJsonScalar(item)) return false;
      }
    } else {
      if (Object.getPrototypeOf(v) !== Object.prototype) return false;
      for (const key in v) {
        const item = v[key];
        if (typeof item === "object" && item !== null) stack.push(item);
        else if (!isJsonScalar(item)) return false;
      }
    }
  }
  return true;
}

function isJsonScalar(v) {
  switch (typeof v) {
    case "string":
      // A long string goes to the validator as a marker, which only a view carries.
      return v.length < VIEW_LONG;
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v) && !(v === 0 && 1 / v < 0);
    default:
      return v === null;
  }
}

/** The view of `root`: JSON with a marker for each value JSON cannot hold; iterative, any depth. */
/** Past this many characters of strings and keys written, this many containers, or this deep, a cycle met again is
 *  no longer written out (also the rule of `viewTree` in validate.js). */
export const VIEW_CYCLE_CHARS = 8 << 20;
export const VIEW_CYCLE_CONTAINERS = 20000;
export const VIEW_CYCLE_DEPTH = 64;

function viewText(root) {
  const refs = [];
  const out = [];
  // The containers being written, with how often each is on the path: one met again is a cycle. It is written
  // again (pi-schema reads a cycle as deep as the schema goes) while the path and the whole view stay small, then
  // as a marker that the validator takes for an object without members. Small in bytes too: a cycle through a
  // 1 MB string would otherwise be written 20,000 times (gigabytes: the engine's heap limit, which ends the process).
  const onPath = new Map();
  const longs = new Map();
  let containers = 0;
  let chars = 0;
  const stack = [];
  const marker = (kind) => JSON.stringify(VIEW_MARK + kind);
  const write = (v) => {
    switch (typeof v) {
      case "string":
        // A long string counts as written (the cycle bound below reads the same as for the text itself), and an
        // equal one met again (a cycle writes it again) is the same marker.
        chars += v.length;
        if (v.length >= VIEW_LONG) {
          let index = longs.get(v);
          if (index === undefined) longs.set(v, (index = refs.push(v) - 1));
          return void out.push(marker(VIEW_KIND.LONG + index));
        }
        return void out.push(JSON.stringify(v));
      case "boolean":
        return void out.push(v ? "true" : "false");
      case "number":
        if (Number.isFinite(v)) return void out.push(String(v === 0 ? 0 : v));
        return void out.push(marker(v !== v ? VIEW_KIND.NAN : v > 0 ? VIEW_KIND.INFINITY : VIEW_KIND.NEG_INFINITY));
      case "bigint":
        return void out.push(marker(VIEW_KIND.BIGINT + v));
      case "object":
        if (v === null) return void out.push("null");
        if (v instanceof Uint8Array) {
          // Its bytes too: pi-schema's coercion may copy a Uint8Array's members into a plain object.
          return void out.push(marker(VIEW_KIND.BYTES + (refs.push(v) - 1) + (v.length > 0 ? "," + v.join(",") : "")));
        }
        if (onPath.has(v) && (stack.length >= VIEW_CYCLE_DEPTH || containers >= VIEW_CYCLE_CONTAINERS || chars >= VIEW_CYCLE_CHARS)) {
          return void out.push(marker(VIEW_KIND.CYCLE + (refs.push(v) - 1)));
        }
        onPath.set(v, (onPath.get(v) ?? 0) + 1);
        containers++;
        if (Array.isArray(v)) {
          out.push("[");
          stack.push({ v, keys: null, i: 0 });
        } else {
          out.push("{");
          stack.push({ v, keys: Object.keys(v), i: 0 });
        }
        return;
      default:
        // undefined (symbols and functions never survive structuredClone)
        return void out.push(marker(VIEW_KIND.UNDEFINED));
    }
  };
  write(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.keys === null) {
      if (top.i < top.v.length) {
        const i = top.i++;
        if (i > 0) out.push(",");
        write(i in top.v ? top.v[i] : undefined);
        continue;
      }
      out.push("]");
    } else {
      if (top.i < top.keys.length) {
        const key = top.keys[top.i++];
        chars += key.length;
        out.push((top.i > 1 ? "," : "") + JSON.stringify(key) + ":");
        write(top.v[key]);
        continue;
      }
      out.push("}");
    }
    stack.pop();
    const times = onPath.get(top.v);
    if (times > 1) onPath.set(top.v, times - 1);
    else onPath.delete(top.v);
  }
  viewRefs = refs;
  // Released once the validation that asked for this view is over (its copy, long-string reads and patches run in
  // one synchronous job): an argument's long string must not stay reachable from here until the next validation.
  if (refs.length > 0) queueMicrotask(() => viewRefs === refs && (viewRefs = null));
  return out.join("");
}

/**
 * `ViewPaths::patch_copy`: `copy` with the coercion's patches applied (`[path, value]` sets, `[path]`
 * deletes, `[path, 0, 0]` wraps the value into a one-item array),
 * copy-on-write as pi-schema's coercion is: every container on a changed path is replaced by a
 * copy (`slice()`, or `{ ...value }`, which makes a Date or a Map a plain object), so a cycle or a
 * shared reference elsewhere still sees the value before coercion.
 */
export function patchCopy(copy, text) {
  return applyPatches(copy, parseView(text));
}

/** `patchCopy` of patches already parsed, their values the values they stand for (also `checkToolCall`'s, validate.js). */
export function applyPatches(copy, patches) {
  let root = copy;
  const fresh = new Set();
  const own = (holder, key, node) => {
    if (node === null || typeof node !== "object" || fresh.has(node)) return node;
    const next = Array.isArray(node) ? node.slice() : { ...node };
    fresh.add(next);
    if (holder === null) root = next;
    else holder[key] = next;
    return next;
  };
  const wrapped = (item) => {
    const array = [item];
    fresh.add(array);
    return array;
  };
  for (const patch of patches) {
    const path = patch[0];
    const wrap = patch.length === 3;
    if (path.length === 0) {
      root = wrap ? wrapped(root) : patch[1];
      continue;
    }
    let node = own(null, null, root);
    for (let i = 0; i < path.length - 1; i++) node = own(node, path[i], node[path[i]]);
    const last = path[path.length - 1];
    if (wrap) node[last] = wrapped(node[last]);
    else if (patch.length === 1) delete node[last];
    else node[last] = patch[1];
  }
  viewRefs = null;
  return root;
}

/** `JSON.parse(text)`, turning markers back into what they stand for, in place (keys keep their order). */
function parseView(text) {
  const parsed = JSON.parse(text);
  if (!text.includes(VIEW_MARK)) return parsed;
  const isMarker = (v) => typeof v === "string" && v.startsWith(VIEW_MARK);
  const stack = [parsed];
  while (stack.length > 0) {
    const node = stack.pop();
    for (const key of Object.keys(node)) {
      const v = node[key];
      if (isMarker(v)) node[key] = revive(v);
      else if (typeof v === "object" && v !== null) stack.push(v);
    }
  }
  return parsed;
}

function revive(marker) {
  const rest = marker.slice(VIEW_MARK.length + 1);
  switch (marker[VIEW_MARK.length]) {
    case VIEW_KIND.NAN:
      return NaN;
    case VIEW_KIND.INFINITY:
      return Infinity;
    case VIEW_KIND.NEG_INFINITY:
      return -Infinity;
    case VIEW_KIND.UNDEFINED:
      return undefined;
    case VIEW_KIND.NEG_ZERO:
      return -0;
    case VIEW_KIND.BIGINT:
      return BigInt(rest);
    case VIEW_KIND.BYTES:
    case VIEW_KIND.CYCLE:
    case VIEW_KIND.LONG:
      return viewRefs?.[Number.parseInt(rest, 10)] ?? marker;
    default:
      return marker;
  }
}

/** `JSON.stringify(v)`, at any depth. */
// Issue 34: what Rust reads of a snapshot is its structure. `jsonTextKept` writes a value's JSON with each long
// string (and each string holding the projection marker character) left here, a projection marker in its place, and
// `parseKept` puts them back into the parsed result: images and long texts never enter wasm memory.
/** From this many UTF-16 units on, a string of a snapshot stays in JS. */
const KEEP_FROM = 1024;
const WHOLE_KEPT = new RegExp(`^${MARK}s(\\d+)\\.\\d+${MARK_END}$`);
let kept;

/** `FastPaths::json_text_kept`: the JSON text of `v`, long strings as markers; their table waits for `takeKept`. Too deep
 *  for the engine's recursive stringify, the value is written whole, as `stringify` writes it. */
export function jsonTextKept(v) {
  const table = [];
  const keep = (_, x) => {
    if (typeof x !== "string" || (x.length < KEEP_FROM && !x.includes(MARK))) return x;
    table.push(x);
    return `${MARK}s${table.length - 1}.${x.length}${MARK_END}`;
  };
  let text;
  try {
    text = JSON.stringify(v, keep);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    table.length = 0;
    text = stringifyDeep(v);
  }
  kept = table.length > 0 ? table : undefined;
  return text;
}

export function takeKept() {
  const table = kept;
  kept = undefined;
  return table;
}

/** `FastPaths::json_parse_kept`: `JSON.parse(text)` with each whole marker replaced by what `table` kept for it. */
export function parseKept(text, table) {
  return JSON.parse(text, (_, x) => {
    if (typeof x !== "string" || !x.startsWith(MARK)) return x;
    const m = WHOLE_KEPT.exec(x);
    return m === null ? x : table[Number(m[1])];
  });
}

/** `Host::json_parse_value`: `JSON.parse` of a JS string, where it is. */
export function parseText(text) {
  return JSON.parse(text);
}

/** `ViewPaths::view_string`: the JSON text of the string a `LONG` marker of the last view stands for (JSON, so that
 *  a lone surrogate reaches Rust as the escape the view would have written). */
export function viewString(index) {
  const v = viewRefs?.[index];
  return typeof v === "string" ? JSON.stringify(v) : undefined;
}

/** `Host::json_clone`: `JSON.parse(JSON.stringify(v))` at any depth, in JS (`undefined` when the text is). */
export function jsonClone(v) {
  const text = stringify(v);
  return text === undefined ? undefined : JSON.parse(text);
}

export function stringify(v) {
  try {
    return JSON.stringify(v);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return stringifyDeep(v);
  }
}

const isPlainContainer = (v) =>
  v !== null && typeof v === "object" && (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype);

/**
 * `structuredClone(root)` with an explicit stack for plain objects and arrays (what deep tool
 * arguments are made of); anything else is left to `structuredClone` (and its errors), and shared
 * or cyclic containers stay shared or cyclic.
 */
function cloneDeep(root) {
  if (!isPlainContainer(root)) return structuredClone(root);
  const fresh = (v) => (Array.isArray(v) ? new Array(v.length) : {});
  const copies = new Map([[root, fresh(root)]]);
  const stack = [root];
  while (stack.length > 0) {
    const source = stack.pop();
    const target = copies.get(source);
    for (const key of Object.keys(source)) {
      const value = source[key];
      if (!isPlainContainer(value)) {
        target[key] = structuredClone(value);
        continue;
      }
      let copy = copies.get(value);
      if (copy === undefined) {
        copy = fresh(value);
        copies.set(value, copy);
        stack.push(value);
      }
      target[key] = copy;
    }
  }
  return copies.get(root);
}

/** A value's `JSON.stringify` text for what `JSON.stringify` writes as a primitive; `null` for a container. */
function jsonScalar(v) {
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "number":
      return Number.isFinite(v) ? String(v) : "null";
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt");
    case "object":
      return v === null ? "null" : null;
    default:
      return undefined; // undefined, functions, symbols: left out
  }
}

function jsonPrepare(v, key) {
  if (v !== null && (typeof v === "object" || typeof v === "bigint") && typeof v.toJSON === "function") v = v.toJSON(key);
  if (v instanceof Number) return Number(v);
  if (v instanceof String) return String(v);
  if (v instanceof Boolean) return v.valueOf();
  return v;
}

/** `JSON.stringify(root)` with an explicit stack, writing tokens once (linear at any depth). */
function stringifyDeep(root) {
  const out = [];
  const stack = [];
  const open = new Set(); // the containers being written: one met again closes a cycle
  let value = jsonPrepare(root, "");
  let key = "";
  for (;;) {
    const text = jsonScalar(value);
    const frame = stack[stack.length - 1];
    if (text === undefined) {
      if (!frame) return undefined;
      if (frame.array) out.push(frame.written++ > 0 ? ",null" : "null");
    } else {
      if (frame) {
        if (frame.written++ > 0) out.push(",");
        if (!frame.array) out.push(JSON.stringify(key), ":");
      }
      if (text !== null) {
        out.push(text);
      } else {
        if (open.has(value)) throw new TypeError("Converting circular structure to JSON");
        open.add(value);
        const array = Array.isArray(value);
        out.push(array ? "[" : "{");
        stack.push({ value, array, keys: array ? null : Object.keys(value), i: 0, written: 0 });
      }
    }
    for (;;) {
      const top = stack[stack.length - 1];
      if (!top) return out.join("");
      if (top.i < (top.array ? top.value.length : top.keys.length)) {
        key = top.array ? String(top.i) : top.keys[top.i];
        top.i++;
        value = jsonPrepare(top.value[key], key);
        break;
      }
      stack.pop();
      open.delete(top.value);
      out.push(top.array ? "]" : "}");
    }
  }
}

export function takeCopy() {
  const v = copied;
  copied = null;
  return v;
}
