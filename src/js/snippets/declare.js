// Tool declarations (L-3.4): `FastPaths::tool_changes` of src/js/host.rs, the JS twin of `core::declare::tools`
// (`declareToolChanges`): replays the `toolsAdded` / `toolsRemoved` of a transcript's system messages and compares
// the declared tools with the executable ones by declaration text, reading each field in the reference's order.
// Reads caller values, never writes them (D6); a throwing getter throws through.

import { SCHEMA_KIND, classifySchema, isObjectLike, standardJsonSchema } from "./values.js";

const UNSET = Symbol("agent-loop-wasm.unset");

/** Thrown by `declarationParts` for parameters the reference refuses (T-4.3.8): `toolChanges` then answers `undefined`,
 *  and the host runs the reference, whose error names the tool. */
const REFUSED = Symbol("agent-loop-wasm.refused");

/** The JSON Schema a Standard Schema's converter wrote, by its `~standard` object: converted once, then only read
 *  (the declaration is a JSON copy). Unlike the reference, which converts at every comparison. */
const converted = new WeakMap();

/** The parameters as `core::declare::tools::declaration` declares them (T-4.3.8), a Standard Schema's conversion
 *  remembered. */
function declaredSchema(parameters) {
  const props = classifySchema(parameters);
  if (props === SCHEMA_KIND.JSON) return parameters;
  if (props === SCHEMA_KIND.UNREADABLE) throw REFUSED;
  let schema = converted.get(props);
  if (schema === undefined) {
    schema = standardJsonSchema(props);
    converted.set(props, schema);
  }
  return schema;
}

/** A tool's declaration fields, each read once, in `toToolDeclaration`'s order. */
function declarationParts(tool) {
  return {
    name: tool.name,
    description: tool.description,
    parameters: declaredSchema(tool.parameters),
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
      if (isObjectLike(m) && m.role === "system") systems.push(i, m);
    }
    return systems;
  }
  for (let i = n - 1; i >= 0 && i >= n - SCAN_LOOKBACK; i--) {
    const m = list[i];
    const scan = isObjectLike(m) ? scans.get(m) : undefined;
    if (scan !== undefined && scan.index === i && resumable(scan, list)) {
      start = i + 1;
      systems = scan.systems;
      break;
    }
  }
  let owned = false;
  for (let i = start; i < n; i++) {
    const m = list[i];
    if (isObjectLike(m) && m.role === "system") {
      if (!owned) {
        systems = systems.slice();
        owned = true;
      }
      systems.push(i, m);
    }
  }
  const last = list[n - 1];
  if (n > 0 && isObjectLike(last)) {
    const scan = scans.get(last);
    if (scan === undefined || scan.index !== n - 1 || scan.systems !== systems) scans.set(last, { index: n - 1, systems });
  }
  return systems;
}

/** `FastPaths::tool_changes` (L-3.4.2) in one step: the tools the system messages of `messages` and then
 *  the pairs of `extra` declare, against `tools` by declaration text. `null` when nothing changed,
 *  else `[toolsAdded, toolsRemoved]`; `undefined` for a tool whose parameters the reference refuses. */
export function toolChanges(messages, extra, tools) {
  try {
    return changes(messages, extra, tools);
  } catch (e) {
    if (e === REFUSED) return undefined;
    throw e;
  }
}

function changes(messages, extra, tools) {
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
