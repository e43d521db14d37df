// Tiny helpers the Rust binding calls: each does one JS operation that js-sys cannot do
// without eval or without letting a caller's exception unwind through wasm. No loop logic here.

const DONE = Symbol("agent-loop-wasm.done");

const EMPTY = Symbol("agent-loop-wasm.empty");

/** The next event queued in one of our own streams, or EMPTY. */
function take(source) {
  // Only our own streams carry the marker; a caller's hostile object must not throw from here.
  try {
    if (source !== null && typeof source === "object" && source.__agentLoopWasmStream === true &&
        typeof source._take === "function") {
      return source._take(EMPTY);
    }
  } catch {
    // not ours, or broken: the iterator path handles it
  }
  return EMPTY;
}

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

// `Host::json_copy`: the text goes to Rust, the copy waits here for `takeCopy` (the next call of
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
const VIEW_MARK = "\u{10F7FE}";
/** The values the `y` (bytes) and `c` (cycle) markers of the last view stand for, by index. */
let viewRefs = null;

export function jsonCopy(v) {
  let clone;
  try {
    clone = structuredClone(v);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    clone = cloneDeep(v);
  }
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

/** Whether `root` (a clone JSON.stringify wrote, so without cycles) is exactly what its JSON text says. */
function isJsonData(root) {
  const stack = [root];
  while (stack.length > 0) {
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
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v) && !(v === 0 && 1 / v < 0);
    default:
      return v === null;
  }
}

/** The view of `root`: JSON with a marker for each value JSON cannot hold; iterative, any depth. */
/** Past this many characters of strings and keys written, a cycle met again is no longer written out. */
const VIEW_CYCLE_CHARS = 8 << 20;

function viewText(root) {
  const refs = [];
  const out = [];
  // The containers being written, with how often each is on the path: one met again is a cycle. It is written
  // again (pi-schema reads a cycle as deep as the schema goes) while the path and the whole view stay small, then
  // as a marker that the validator takes for an object without members. Small in bytes too: a cycle through a
  // 1 MB string would otherwise be written 20,000 times (gigabytes: the engine's heap limit, which ends the process).
  const onPath = new Map();
  let containers = 0;
  let chars = 0;
  const stack = [];
  const marker = (kind) => JSON.stringify(VIEW_MARK + kind);
  const write = (v) => {
    switch (typeof v) {
      case "string":
        chars += v.length;
        return void out.push(JSON.stringify(v));
      case "boolean":
        return void out.push(v ? "true" : "false");
      case "number":
        if (Number.isFinite(v)) return void out.push(String(v === 0 ? 0 : v));
        return void out.push(marker(v !== v ? "n" : v > 0 ? "+" : "-"));
      case "bigint":
        return void out.push(marker("b" + v));
      case "object":
        if (v === null) return void out.push("null");
        if (v instanceof Uint8Array) {
          // Its bytes too: pi-schema's coercion may copy a Uint8Array's members into a plain object.
          return void out.push(marker("y" + (refs.push(v) - 1) + (v.length > 0 ? "," + v.join(",") : "")));
        }
        if (onPath.has(v) && (stack.length >= 64 || containers >= 20000 || chars >= VIEW_CYCLE_CHARS)) {
          return void out.push(marker("c" + (refs.push(v) - 1)));
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
        return void out.push(marker("u"));
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
  return out.join("");
}

/**
 * `Host::patch_copy`: `copy` with the coercion's patches applied (`[path, value]` sets, `[path]`
 * deletes, `[path, 0, 0]` wraps the value into a one-item array),
 * copy-on-write as pi-schema's coercion is: every container on a changed path is replaced by a
 * copy (`slice()`, or `{ ...value }`, which makes a Date or a Map a plain object), so a cycle or a
 * shared reference elsewhere still sees the value before coercion.
 */
export function patchCopy(copy, text) {
  const patches = parseView(text);
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
    case "n":
      return NaN;
    case "+":
      return Infinity;
    case "-":
      return -Infinity;
    case "u":
      return undefined;
    case "z":
      return -0;
    case "b":
      return BigInt(rest);
    case "y":
    case "c":
      return viewRefs?.[Number.parseInt(rest, 10)] ?? marker;
    default:
      return marker;
  }
}

/** `JSON.stringify(v)`, at any depth. */
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

const EVENT_CODES = {
  start: 0,
  text_start: 1, text_delta: 1, text_end: 1,
  thinking_start: 1, thinking_delta: 1, thinking_end: 1,
  toolcall_start: 1, toolcall_delta: 1, toolcall_end: 1,
  done: 2,
  error: 3,
};

/** The loop's dispatch code of an assistant message event: 0 start, 1 block, 2 done, 3 error, 4 other. */
function eventCode(event) {
  if (event === null || typeof event !== "object") return 4;
  const type = event.type; // read once: a caller's getter may answer differently the second time
  return typeof type === "string" && Object.prototype.hasOwnProperty.call(EVENT_CODES, type) ? EVENT_CODES[type] : 4;
}

/** L-3.6.2 fused: the partial replaces messages[index]; returns the message_update event. */
function streamUpdate(event, messages, index) {
  const partial = event.partial;
  messages[index] = partial;
  return { type: "message_update", assistantMessageEvent: event, message: { ...partial } };
}

// `Host::pump` in one step. Codes: 0–4 an event for the loop (its eventCode), 5 delivered to the
// sink, 6 an update to emit, 7 the sink threw, 8 nothing queued, 9 a getter of the event threw.
// The value of codes 0–4, 6, 7 and 9 waits in `pumped` for `takePumped`. Never throws, so the
// binding needs no exception wrapper on the hottest call of a stream.
let pumped;

export function takePumped() {
  const v = pumped;
  pumped = undefined;
  return v;
}

/** An event the iterator produced (or one taken from our own queue), dispatched. */
export function pumpEvent(event, messages, index, sink) {
  let code;
  let update;
  try {
    code = eventCode(event);
    if (code !== 1 || index < 0) {
      pumped = event;
      return code;
    }
    update = streamUpdate(event, messages, index);
  } catch (e) {
    pumped = e;
    return 9;
  }
  if (sink === undefined) {
    pumped = update;
    return 6;
  }
  try {
    Reflect.apply(sink, undefined, [update]);
  } catch (e) {
    pumped = e;
    return 7;
  }
  return 5;
}

/** The most queued events one `pumpQueued` call delivers to the sink. */
const DRAIN = 32;

/** The next event queued in our own stream `source`, dispatched; 8 when none is queued. Block
 *  events the sink takes (5) are drained in one call while more are queued: the loop does
 *  nothing between two of them, so it only needs to hear that some were delivered. */
export function pumpQueued(source, messages, index, sink) {
  let event = take(source);
  if (event === EMPTY) return 8;
  let code = pumpEvent(event, messages, index, sink);
  for (let n = 1; code === 5 && n < DRAIN; n++) {
    event = take(source);
    if (event === EMPTY) break;
    code = pumpEvent(event, messages, index, sink);
  }
  return code;
}

const UNSET = Symbol("agent-loop-wasm.unset");

/** A tool's declaration fields, each read once, in `toToolDeclaration`'s order. */
function declarationParts(tool) {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    cs: tool.constrainedSampling,
    text: UNSET,
  };
}

/** The parameters' JSON text (stringified once per tool, as `toToolDeclaration` does). */
function parametersText(p) {
  if (p.text === UNSET) p.text = JSON.stringify(p.parameters);
  return p.text;
}

/** `toToolDeclaration` (L-3.4.1) from the fields read: the parameters are a JSON copy. */
function declaration(p) {
  const text = parametersText(p);
  const decl = { name: p.name, description: p.description, parameters: text === undefined ? undefined : JSON.parse(text) };
  if (p.cs !== undefined) decl.constrainedSampling = p.cs;
  return decl;
}

/** Strings, booleans and undefined stringify to texts that are equal exactly when the values are. */
function plainField(v) {
  return v === undefined || typeof v === "string" || typeof v === "boolean";
}

/** Whether two declarations' JSON texts are equal (L-3.4.1). With plain names, descriptions and
 *  constrainedSampling the texts are equal exactly when those are and the parameters' texts are,
 *  so the whole texts are built only for unusual fields. */
function sameDeclaration(a, b) {
  if (plainField(a.name) && plainField(b.name) && plainField(a.description) && plainField(b.description) &&
      plainField(a.cs) && plainField(b.cs)) {
    if (a.name !== b.name || a.description !== b.description || a.cs !== b.cs) return false;
    const same = sameJsonData(a.parameters, b.parameters);
    return same === UNKNOWN ? parametersText(a) === parametersText(b) : same;
  }
  return JSON.stringify(declaration(a)) === JSON.stringify(declaration(b));
}

// Whether two values' JSON texts are equal, found without building them: exact for JSON data (strings,
// booleans, finite numbers, null, and arrays and objects of Object.prototype or null with only such values),
// UNKNOWN for anything else (a value `JSON.stringify` skips or transforms, `toJSON`, a deep or cyclic
// structure), which the caller compares by text. Both values are read whole, as building the texts would.
const UNKNOWN = 2;
const SAME_JSON_DEPTH = 48;

function sameJsonData(a, b) {
  if (Object.prototype.toJSON !== undefined || Array.prototype.toJSON !== undefined) return UNKNOWN;
  return sameJson(a, b, 0);
}

function sameJson(a, b, depth) {
  const type = typeof a;
  if (type !== typeof b) return UNKNOWN;
  if (type === "string" || type === "boolean") return a === b;
  if (type === "number") return Number.isFinite(a) && Number.isFinite(b) ? a === b : UNKNOWN;
  if (type !== "object" || depth >= SAME_JSON_DEPTH) return UNKNOWN;
  if (a === null || b === null) return a === b ? true : UNKNOWN;
  const array = Array.isArray(a);
  if (array !== Array.isArray(b)) return UNKNOWN;
  const proto = array ? Array.prototype : Object.prototype;
  const pa = Object.getPrototypeOf(a);
  const pb = Object.getPrototypeOf(b);
  if ((pa !== proto && (array || pa !== null)) || (pb !== proto && (array || pb !== null))) return UNKNOWN;
  let same = true;
  if (array) {
    const n = a.length;
    if (n !== b.length) return UNKNOWN;
    for (let i = 0; i < n; i++) {
      const r = sameJson(a[i], b[i], depth + 1);
      if (r === UNKNOWN) return UNKNOWN;
      same &&= r;
    }
    return same;
  }
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return UNKNOWN;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key !== other[i] || key === "toJSON") return UNKNOWN;
    const r = sameJson(a[key], b[key], depth + 1);
    if (r === UNKNOWN) return UNKNOWN;
    same &&= r;
  }
  return same;
}

/** Replays a `(toolsRemoved, toolsAdded)` pair into `declared` (a Map by name, as the reference keeps it). */
function replay(declared, removed, added) {
  if (Array.isArray(removed)) for (const tool of Array.from(removed)) declared.delete(tool.name);
  if (Array.isArray(added)) for (const tool of Array.from(added)) declared.set(tool.name, tool);
}

// Issue 17: a long session must not re-read its whole transcript every turn. Each scan for system
// messages is remembered under the transcript's last message: `{ index, systems }`, `systems` being
// `[index, message, index, message, …]` of the system messages up to it (never mutated once stored).
// The next scan resumes from the newest remembered message found at its remembered index within the
// last SCAN_LOOKBACK entries, provided every remembered system message is still a system message at
// its index (a replaced `state.messages` or an edited message falls back to a full scan). Only the
// role of the messages after that point is read; the tool fields of the system messages are read
// every time, so an edited `toolsAdded` is seen as before. Keys are weak: nothing outlives its message.
const scans = new WeakMap();
const SCAN_LOOKBACK = 64;
// A shorter transcript is scanned whole: cheaper than the weak-map lookups (and the ephemerons the
// collector walks: a thousand concurrent runs each left one per turn), and it reads what the reference reads.
const SCAN_CACHED_FROM = 256;

const isObject = (m) => m !== null && (typeof m === "object" || typeof m === "function");

function resumable(scan, list) {
  const systems = scan.systems;
  for (let i = 0; i < systems.length; i += 2) {
    const m = list[systems[i]];
    if (m !== systems[i + 1] || m.role !== "system") return false;
  }
  return true;
}

/** The system messages of the array `list` as `[index, message, …]`, reusing an earlier scan. Read
 *  in place (no copy of a long transcript): only the entries after the resumed point are read. */
function systemMessages(list) {
  const n = list.length;
  let start = 0;
  let systems = [];
  if (n < SCAN_CACHED_FROM) {
    for (let i = 0; i < n; i++) {
      const m = list[i];
      if (isObject(m) && m.role === "system") systems.push(i, m);
    }
    return systems;
  }
  for (let i = n - 1; i >= 0 && i >= n - SCAN_LOOKBACK; i--) {
    const m = list[i];
    const scan = isObject(m) ? scans.get(m) : undefined;
    if (scan !== undefined && scan.index === i && resumable(scan, list)) {
      start = i + 1;
      systems = scan.systems;
      break;
    }
  }
  let owned = false;
  for (let i = start; i < n; i++) {
    const m = list[i];
    if (isObject(m) && m.role === "system") {
      if (!owned) {
        systems = systems.slice();
        owned = true;
      }
      systems.push(i, m);
    }
  }
  const last = list[n - 1];
  if (n > 0 && isObject(last)) {
    const scan = scans.get(last);
    if (scan === undefined || scan.index !== n - 1 || scan.systems !== systems) scans.set(last, { index: n - 1, systems });
  }
  return systems;
}

/** `Host::tool_changes` (L-3.4.2) in one step: the tools the system messages of `messages` and then
 *  the pairs of `extra` declare, against `tools` by declaration text. `null` when nothing changed,
 *  else `[toolsAdded, toolsRemoved]`. */
export function toolChanges(messages, extra, tools) {
  const declared = new Map();
  if (Array.isArray(messages)) {
    const systems = systemMessages(messages);
    for (let i = 1; i < systems.length; i += 2) replay(declared, systems[i].toolsRemoved, systems[i].toolsAdded);
  }
  for (let i = 0; i + 1 < extra.length; i += 2) replay(declared, extra[i], extra[i + 1]);
  const executable = Array.isArray(tools) ? Array.from(tools, declarationParts) : [];
  const executableByName = new Map();
  for (const p of executable) executableByName.set(p.name, p);
  const declaredByName = new Map();
  for (const [name, tool] of declared) declaredByName.set(name, declarationParts(tool));
  const added = [];
  for (const p of executable) {
    const d = declaredByName.get(p.name);
    if (d === undefined || !sameDeclaration(d, p)) added.push(declaration(p));
  }
  const removed = [];
  for (const [name, d] of declaredByName) {
    const p = executableByName.get(name);
    if (p === undefined || !sameDeclaration(d, p)) removed.push({ name });
  }
  return added.length === 0 && removed.length === 0 ? null : [added, removed];
}

// E-8.1 in one step for the valid case (src/core/args.rs `Checker`): each reads the fields the core's check
// reads, in its order, and answers whether all of them are valid; `false` sends the caller through the core's
// check, which names what is wrong. The hook and timer lists come from the core.
const isNullish = (v) => v === undefined || v === null;
const isFunction = (v) => typeof v === "function";
/** `Checker::object`: an object that is not an array, or a function. */
const isObjectArg = (v) => isFunction(v) || (typeof v === "object" && v !== null && !Array.isArray(v));
const messagesValid = (list) => Array.isArray(list) && firstBadMessage(list) < 0;

function toolsValid(tools) {
  if (isNullish(tools)) return true;
  if (!Array.isArray(tools)) return false;
  for (const t of Array.from(tools)) {
    if (!isObjectArg(t) || typeof t.name !== "string" || !isFunction(t.execute)) return false;
    const parameters = t.parameters;
    if (parameters !== undefined && !isObjectArg(parameters)) return false;
  }
  return true;
}

function hooksValid(owner, hooks) {
  for (let i = 0; i < hooks.length; i++) {
    const f = owner[hooks[i]];
    if (!isNullish(f) && !isFunction(f)) return false;
  }
  return true;
}

/** `Checker::limits`; `timeoutMs` only when `withTimeout` (not on a loop config). */
function limitsValid(owner, timers, withTimeout) {
  for (let i = 0; i < timers.length; i++) {
    if (!withTimeout && timers[i] === "timeoutMs") continue;
    const v = owner[timers[i]];
    if (v === undefined) continue;
    if (typeof v !== "number") return false;
    if (timers[i] === "abortGraceMs" && v === Infinity) continue;
    if (!(v >= 0 && v <= 2147483647)) return false;
  }
  const max = owner.maxParallelTools;
  return max === undefined || (typeof max === "number" && Number.isInteger(max) && max >= 1);
}

/** `Host::agent_state_valid`: `check_state` of src/core/agent.rs. */
export function agentStateValid(agent, st, hooks, timers) {
  return toolsValid(st.tools) && messagesValid(st.messages) && isObjectArg(st.model) && isFunction(agent.convertToLlm) &&
    isFunction(agent.streamFunction) && hooksValid(agent, hooks) && limitsValid(agent, timers, true);
}

/** `check_loop_args` of src/js/mod.rs. */
export function loopArgsValid(prompts, hasPrompts, context, config, emit, hasEmit, signal, streamFn, hooks, timers) {
  if (hasPrompts && !messagesValid(prompts)) return false;
  if (!isObjectArg(context) || !messagesValid(context.messages) || !toolsValid(context.tools)) return false;
  if (!isObjectArg(config) || !isObjectArg(config.model) || !isFunction(config.convertToLlm)) return false;
  if (!hooksValid(config, hooks) || !limitsValid(config, timers, false)) return false;
  if (hasEmit && !isFunction(emit)) return false;
  if (!isNullish(signal)) {
    if (typeof signal !== "object" || Array.isArray(signal)) return false;
    if (typeof signal.aborted !== "boolean" || !isFunction(signal.addEventListener)) return false;
  }
  return isNullish(streamFn) || isFunction(streamFn);
}

/** `Array.from(v)` for an array, else `[]` (the core's `items`). */
const listOf = (v) => (Array.isArray(v) ? Array.from(v) : []);

/** A string `role` of an object-like message, else undefined (the core's `role`). */
function roleOf(m) {
  if (!isObject(m)) return undefined;
  const role = Reflect.get(m, "role");
  return typeof role === "string" ? role : undefined;
}

/** Drops the entries of the list `st[key]` that `keep` rejects, only when one does (the core's `retain`). */
function retainList(st, key, keep) {
  const list = listOf(Reflect.get(st, key));
  if (!list.every(keep)) Reflect.set(st, key, list.filter(keep));
}

function toolCallIdOf(record) {
  try {
    return Reflect.get(record, "toolCallId");
  } catch {
    return undefined;
  }
}

/** `Host::reduce_agent_event`: the Agent's reducer, the core's `agent::reduce` read for read
 *  and write for write, in one crossing per event. `true` at a durable point of an agent that writes
 *  checkpoints. A getter's or setter's throw throws through. */
export function reduceAgentEvent(st, event) {
  const type = Reflect.get(event, "type");
  const durable = isObject(Reflect.get(st, "ck"));
  switch (typeof type === "string" ? type : "") {
    case "message_start":
    case "message_update":
      Reflect.set(st, "streamingMessage", Reflect.get(event, "message"));
      break;
    case "message_end": {
      Reflect.set(st, "streamingMessage", undefined);
      const message = Reflect.get(event, "message");
      push(Reflect.get(st, "messages"), message);
      if (!durable) break;
      retainList(st, "transitSteering", (m) => !Object.is(m, message));
      retainList(st, "transitFollowUp", (m) => !Object.is(m, message));
      if (roleOf(message) === "toolResult") {
        const id = Reflect.get(message, "toolCallId");
        retainList(st, "completedTools", (r) => !Object.is(toolCallIdOf(r), id));
      }
      return true;
    }
    case "tool_execution_start":
    case "tool_execution_end": {
      const id = Reflect.get(event, "toolCallId");
      const ids = [...Reflect.get(st, "pendingToolCalls")].filter((x) => !Object.is(x, id));
      if (type === "tool_execution_start") ids.push(id);
      Reflect.set(st, "pendingToolCalls", new Set(ids));
      if (!durable || type !== "tool_execution_end") break;
      // Ended, but its result message may come later (a parallel batch emits them at its end).
      const record = {
        toolCallId: id,
        toolName: Reflect.get(event, "toolName"),
        result: Reflect.get(event, "result"),
        isError: Reflect.get(event, "isError"),
      };
      push(Reflect.get(st, "completedTools"), record);
      push(Reflect.get(st, "endedTools"), record);
      return true;
    }
    case "turn_end": {
      const message = Reflect.get(event, "message");
      if (roleOf(message) === "assistant") {
        const error = Reflect.get(message, "errorMessage");
        if (error) Reflect.set(st, "errorMessage", error);
      }
      break;
    }
    case "agent_end":
      Reflect.set(st, "streamingMessage", undefined);
      break;
  }
  return false;
}

/** `Host::queue_poller`: the function a run polls for the queue `st[list]`, the core's
 *  `agent::drain` in JS: the selection (`st[mode] === "all"`: all, else the first), the rest left
 *  queued, the selection also kept in `st[transit]` while the agent writes checkpoints. A throw
 *  gives an empty poll. With `skip`, the first poll is empty. */
export function queuePoller(st, list, mode, transit, skip) {
  return () => {
    if (skip) {
      skip = false;
      return [];
    }
    try {
      const all = listOf(Reflect.get(st, list));
      const selected = Reflect.get(st, mode) === "all" ? all : all.slice(0, 1);
      Reflect.set(st, list, listOf(Reflect.get(st, list)).slice(selected.length));
      if (selected.length > 0 && isObject(Reflect.get(st, "ck"))) {
        const waiting = Reflect.get(st, transit);
        if (Array.isArray(waiting)) for (const m of selected) push(waiting, m);
      }
      return selected;
    } catch {
      return [];
    }
  };
}

/** `Host::copy_fields`: `to[key] = from[key]` for each key, as `Reflect.set` (a getter's throw throws through). */
export function copyFields(from, to, keys) {
  for (let i = 0; i < keys.length; i++) Reflect.set(to, keys[i], from[keys[i]]);
}

/** `Host::first_bad_message` (E-8.1) in one step: `-1` when every entry of the array `list` is a
 *  message (an object or function with a string `role`), else `2 * index`, plus 1 when the entry is
 *  an object whose `role` is not a string. A throwing getter throws through. */
export function firstBadMessage(list) {
  const n = list.length;
  for (let i = 0; i < n; i++) {
    const m = list[i];
    if (typeof m !== "function" && (typeof m !== "object" || m === null || Array.isArray(m))) return 2 * i;
    if (typeof m.role !== "string") return 2 * i + 1;
  }
  return -1;
}

/** The agent's default `convertToLlm`: the messages with one of the four LLM roles. Never
 *  throws: a non-array gives `[]`, an entry that is not an object or whose `role` getter throws is
 *  left out. One function for every agent, so an agent keeps no closure of its own for it. Reads
 *  each `role` once; a transcript of LLM messages only (the usual case) costs one copy and one pass. */
function convertToLlm(messages) {
  let list;
  try {
    list = Array.from(messages);
  } catch {
    return [];
  }
  const n = list.length;
  let i = 0;
  try {
    while (i < n && isLlmMessage(list[i])) i++;
  } catch {
    // list[i]'s role threw: left out
  }
  if (i === n) return list;
  const kept = list.slice(0, i);
  // list[i] stopped the loop above: it is not an LLM message (or its role threw), so it is not read again.
  for (let j = i + 1; j < n; j++) {
    try {
      if (isLlmMessage(list[j])) kept.push(list[j]);
    } catch {
      // a throwing role getter: left out
    }
  }
  return kept;
}

function isLlmMessage(m) {
  if (m === null || (typeof m !== "object" && typeof m !== "function")) return false;
  const role = m.role;
  return role === "user" || role === "assistant" || role === "toolResult" || role === "system";
}

export function defaultConvertToLlm() {
  return convertToLlm;
}

/** An object from `[key, value, key, value, …]` (shapes larger than `object6`). */
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

export function push(a, v) {
  a.push(v);
}

export function kindOf(v) {
  // 0 undefined, 1 null, 2 boolean, 3 number, 4 string, 5 array, 6 function, 7 object, 8 other
  switch (typeof v) {
    case "undefined": return 0;
    case "boolean": return 2;
    case "number": return 3;
    case "string": return 4;
    case "function": return 6;
    case "object": return v === null ? 1 : Array.isArray(v) ? 5 : 7;
    default: return 8;
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

// The hottest calls that may run caller code (property reads, callback calls) catch here instead
// of through wasm-bindgen's exception wrapper (a fresh closure and arguments object per call):
// a throw sets a flag word in wasm memory, which the binding checks after the call, and the thrown
// value waits for `takeCaught`.
let flagMemory = null;
let flagView = null;
let flagIndex = 0;
let caught;

export function setFailureFlag(memory, address) {
  flagMemory = memory;
  flagView = new Int32Array(memory.buffer);
  flagIndex = address >>> 2;
}

function failed(e) {
  caught = e;
  if (flagView.buffer !== flagMemory.buffer) flagView = new Int32Array(flagMemory.buffer); // memory grew
  flagView[flagIndex] = 1;
}

export function takeCaught() {
  const e = caught;
  caught = undefined;
  return e;
}

export function getChecked(obj, key) {
  try {
    return Reflect.get(obj, key);
  } catch (e) {
    failed(e);
  }
}

export function apply0(f, self) {
  try {
    return Reflect.apply(f, self, []);
  } catch (e) {
    failed(e);
  }
}
export function apply1(f, self, a) {
  try {
    return Reflect.apply(f, self, [a]);
  } catch (e) {
    failed(e);
  }
}
export function apply2(f, self, a, b) {
  try {
    return Reflect.apply(f, self, [a, b]);
  } catch (e) {
    failed(e);
  }
}
export function setAdd(set, v) {
  set.add(v);
}

export function setDelete(set, v) {
  set.delete(v);
}

// `Host::call_listeners`: `for (const f of listeners) await f(a, b)` a stretch at a time. `cursor` is undefined at
// first (the iterator is made here, live over the Set as `for … of` is) and then the iterator this returned. Calls
// until one returns a thenable, which waits for `takeListened`; returns the iterator to go on with, or undefined
// when every listener was called. A throw sets the failure flag; when a listener threw, `takeListened` gives the
// iterator (to go on after it), when the list itself failed, undefined.
let listened;

export function callListeners(listeners, cursor, a, b) {
  listened = undefined;
  let it;
  try {
    it = cursor === undefined ? listeners[Symbol.iterator]() : cursor;
  } catch (e) {
    failed(e);
    return undefined;
  }
  for (;;) {
    let step;
    try {
      step = it.next();
      if (step.done) return undefined;
    } catch (e) {
      failed(e);
      return undefined;
    }
    try {
      const r = Reflect.apply(step.value, undefined, [a, b]);
      if (r !== null && (typeof r === "object" || typeof r === "function") && typeof r.then === "function") {
        listened = r;
        return it;
      }
    } catch (e) {
      listened = it;
      failed(e);
      return undefined;
    }
  }
}

export function takeListened() {
  const v = listened;
  listened = undefined;
  return v;
}

export function apply4(f, self, a, b, c, d) {
  try {
    return Reflect.apply(f, self, [a, b, c, d]);
  } catch (e) {
    failed(e);
  }
}

/** An array from a list wasm-bindgen hands over in one step. */
export function arrayOf(values) {
  return values;
}

export function apply(f, self, args) {
  return Reflect.apply(f, self, args);
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

export function regexTest(pattern, text) {
  try {
    return new RegExp(pattern, "u").test(text);
  } catch {
    return undefined;
  }
}

export function now() {
  return performance.now();
}

// Cancelling also settles the promise: the Rust future awaiting it frees its callbacks only when
// the promise settles, so a wait that is dropped must never be left pending.
export function timer(ms) {
  let id;
  let settle;
  const promise = new Promise((resolve) => {
    settle = resolve;
    id = setTimeout(resolve, ms);
  });
  return { promise, cancel: () => { clearTimeout(id); settle(); } };
}

/**
 * One abort listener per signal, shared by every wait on it (`watchAbort`): a run with a hundred tool calls in flight
 * adds one listener to its signal, not a hundred (Node warns past ten), and a wait costs a `Set` entry instead of a
 * promise and a listener. The listener is removed when the last wait ends, so nothing stays on the caller's signal.
 */
const abortWatches = new WeakMap();

/**
 * Settles `slot` (code 1) in a microtask once `signal` aborts, or right away if it has; answers true. Answers false
 * when the wait can never end (not an event target), and then keeps nothing. A throwing `aborted` getter counts as
 * an abort, as a rejected wait did before.
 */
export function watchAbort(signal, slot) {
  if (signal === null || (typeof signal !== "object" && typeof signal !== "function")) return false;
  let aborted;
  try {
    aborted = signal.aborted;
  } catch {
    aborted = true;
  }
  if (aborted) {
    queueMicrotask(() => settle(slot, 1, undefined));
    return true;
  }
  let watch = abortWatches.get(signal);
  if (watch === undefined) {
    const slots = new Set();
    const listener = () => {
      const fired = [...slots];
      slots.clear();
      queueMicrotask(() => {
        for (const s of fired) settle(s, 1, undefined);
      });
    };
    watch = { slots, listener };
    abortWatches.set(signal, watch);
  }
  if (watch.slots.size === 0) {
    try {
      signal.addEventListener("abort", watch.listener, { once: true });
    } catch {
      return false;
    }
  }
  watch.slots.add(slot);
  return true;
}

/** Ends the wait of `slot` on `signal` (a no-op once it fired); the last one removes the shared listener. */
export function unwatchAbort(signal, slot) {
  const watch = abortWatches.get(signal);
  if (watch === undefined || !watch.slots.delete(slot) || watch.slots.size > 0) return;
  try {
    signal.removeEventListener("abort", watch.listener);
  } catch {}
}

export function abortController() {
  const controller = new AbortController();
  return [controller, controller.signal];
}

export function abort(controller, reason) {
  controller.abort(reason);
}

export function asyncIterator(source) {
  if (source === null || source === undefined) return undefined;
  const f = source[Symbol.asyncIterator];
  if (typeof f !== "function") return undefined;
  return f.call(source);
}

function unwrapStep(r) {
  if (Object(r) !== r) throw new TypeError(`Iterator result ${String(r)} is not an object`);
  return r.done ? DONE : r.value;
}

// Awaiting from Rust: one function, installed once, receives every outcome as (slot, code, value)
// with code 0 rejected, 1 fulfilled, 2 iterator done; Rust keeps the slots. Cheaper than two fresh
// wasm closures per awaited promise.
let settle = () => {};

export function setSettle(f) {
  // A trap in Rust while settling is the instance failing: it goes to the wrapper's handler
  // (`setPoller`), not out of this promise reaction as an unhandled rejection.
  settle = (slot, code, value) => {
    try {
      f(slot, code, value);
    } catch (error) {
      instanceFailed(error);
    }
  };
}

function settleInto(promise, slot) {
  promise.then((v) => settle(slot, 1, v), (e) => settle(slot, 0, e));
}

/** A `{promise, cancel}` handle of the helpers below: its promise settles `slot`; returns cancel. */
export function awaitHandle(handle, slot) {
  settleInto(handle.promise, slot);
  return handle.cancel;
}

/** When `value` is a thenable, it settles `slot` (true); a plain value answers false. */
export function awaitThenable(value, slot) {
  if (value !== null && (typeof value === "object" || typeof value === "function") && typeof value.then === "function") {
    settleInto(Promise.resolve(value), slot);
    return true;
  }
  return false;
}

/** `await it.next()` into `slot`: code 1 with the value, 2 when done. */
export function nextInto(it, slot) {
  Promise.resolve(it.next()).then(unwrapStep).then(
    (v) => (v === DONE ? settle(slot, 2, undefined) : settle(slot, 1, v)),
    (e) => settle(slot, 0, e),
  );
}

export function iteratorReturn(it) {
  try {
    const f = it.return;
    if (typeof f !== "function") return;
    const r = f.call(it);
    if (r && typeof r.then === "function") r.then(undefined, () => {});
  } catch {
    // the stream is abandoned either way
  }
}

/** Marks a promise as handled so an abandoned callback never becomes an unhandled rejection. */
export function silence(p) {
  if (p && typeof p.then === "function") p.then(undefined, () => {});
}

// ---- built-in providers: the few JS operations their driver needs

/** Applies one partial-JSON patch to the live arguments object (P-6.4.2). op: 0 object, 1 array,
 *  2 value, 3 string start, 4 string append. */
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
    case 0: target[key] = {}; break;
    case 1: target[key] = []; break;
    case 2: case 3: target[key] = value; break;
    case 4: if (typeof target[key] === "string") target[key] += value; break;
  }
}

const DELTA_EVENTS = ["text_delta", "thinking_delta", "toolcall_delta"];
const DELTA_FIELDS = ["text", "thinking"];

/** A `<kind>_delta` in one call (kind 0 text, 1 thinking, 2 tool call): the block
 *  `partial.content[index]` grows (`+= delta`: strings grow on the JS side, never rebuilt from Rust,
 *  P-6.1.7; for a tool call the one patch `op` ≥ 0 of its arguments), then its event is pushed.
 *  A step that throws is skipped, as when they were separate calls. */
export function pushDelta(stream, partial, index, kind, delta, path, op, value) {
  try {
    if (kind < 2) partial.content[index][DELTA_FIELDS[kind]] += delta;
    else if (op >= 0) patch(partial.content[index].arguments, path, op, value);
  } catch {}
  try {
    stream.push({ type: DELTA_EVENTS[kind], contentIndex: index, delta, partial });
  } catch {}
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

const MARK = "\uFDD0";
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const wellFormed = typeof String.prototype.isWellFormed === "function"
  ? (s) => s.isWellFormed()
  : (s) => !LONE_SURROGATE.test(s);

const MESSAGE_FIELDS = new Set(["role", "content", "timestamp", "toolCallId", "toolName", "isError", "api",
  "provider", "model", "stopReason", "sections", "toolsAdded", "toolsRemoved"]);
const BLOCK_FIELDS = new Set(["type", "text", "textSignature", "thinking", "thinkingSignature", "redacted", "data",
  "mimeType", "id", "name", "arguments", "thoughtSignature"]);
const TOOL_FIELDS = new Set(["name", "description", "parameters"]);

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
    let index = this.strings.get(s);
    if (index === undefined) {
      index = this.table.length;
      this.table.push(s);
      this.strings.set(s, index);
    }
    this.markers++;
    return `${MARK}s${index}.${JSON.stringify(s).length - 2}\uFDD1`;
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
    return `${MARK}v${index}.${text.length}\uFDD1`;
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

  isObject(v) {
    return v !== null && typeof v === "object" && !Array.isArray(v);
  }

  message(m) {
    if (!this.isObject(m)) return this.scalar(m);
    return this.fields(m, MESSAGE_FIELDS, (key, v) => {
      switch (key) {
        case "content": return this.list(v, (b) => this.block(b));
        case "sections": return this.sections(v);
        case "toolsAdded": case "toolsRemoved": return this.list(v, (t) => this.tool(t));
        default: return this.scalar(v);
      }
    });
  }

  block(b) {
    if (!this.isObject(b)) return this.scalar(b);
    return this.fields(b, BLOCK_FIELDS, (key, v) =>
      key === "arguments" && ((v !== null && typeof v === "object") || typeof v === "bigint")
        ? this.opaque(v)
        : this.scalar(v));
  }

  sections(v) {
    if (!this.isObject(v)) return this.scalar(v);
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
    if (!this.isObject(t)) return this.scalar(t);
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
    const keys = this.isObject(v) && typeof v.toJSON !== "function" ? Object.keys(v) : null;
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

// The executor's wake-ups (src/js/executor.rs): one microtask per batch of ready tasks. The npm
// wrapper installs `poller`, which calls `pollTasks` inside its own try/catch (pkg-template/trap.js);
// `fallbackPoller` (the bare export) serves a glue used without the wrapper.
let poller = null;
let fallbackPoller = null;
let failureHandler = null;

function runPoll() {
  const poll = poller ?? fallbackPoller;
  if (poll !== null) poll();
}

export function schedulePoll() {
  queueMicrotask(runPoll);
}

export function setPoller(poll, onFailure) {
  poller = typeof poll === "function" ? poll : null;
  failureHandler = typeof onFailure === "function" ? onFailure : null;
}

export function setFallbackPoller(poll) {
  fallbackPoller = poll;
}

function instanceFailed(error) {
  if (failureHandler === null) throw error;
  failureHandler(error);
}
