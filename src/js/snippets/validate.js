// `FastPaths::check_tool_call` (T-4.3): the JS twin of the reference `core::fast::check_call::check_tool_call` and
// of the validator it runs (src/core/validate/: coercion in three passes, the check, the explanation, `$ref`
// resolution, formats, the `plain` shortcut, schema problems), on JS values: no crossing per call but one, and none of
// the validator in the downloaded wasm (issue 43). Depth is counted as the Rust counts it (`MAX_DEPTH` of a release
// build), so `Maximum call stack size exceeded` is reported where the reference reports it. Runs no caller code but
// what `structuredClone` reads, `toJSON` of a schema, a Standard Schema's `validate` and `JSON.stringify` of the
// arguments for an error. `tests/js/parity.test.mjs` holds it to the reference.

import {
  classifySchema, errorMessage, isObjectLike, regexError, regexTest, regexUnicode, SCHEMA_KIND, urlCanParse,
} from "./values.js";
import {
  VIEW_CYCLE_CHARS, VIEW_CYCLE_CONTAINERS, VIEW_CYCLE_DEPTH, applyPatches, cloneArgs, isJsonData, jsonClone, stringify,
} from "./view.js";

/** What `checkToolCall` answers: the value of `ARGS` (the arguments `execute` gets) and `STANDARD` (what a Standard
 *  Schema's `validate` returned) waits for `takeChecked`; for `UNREADABLE` (`parameters` neither JSON Schema nor a
 *  usable Standard Schema) the binding writes the error, whose reasons are `core::tool_schema`'s. Twin of
 *  `protocol::checked` (src/js/protocol.rs). */
export const CHECKED = Object.freeze({ ARGS: 0, STANDARD: 1, UNREADABLE: 2 });

// The limits of `core::validate` (src/core/validate/mod.rs) in a release build.
const MAX_DEPTH = 1400;
const MAX_SCHEMA_DEPTH = 2 * MAX_DEPTH + 8;
const MAX_VALUE_DEPTH = 10000;
const TOO_DEEP = "Maximum call stack size exceeded";
const WEAK_MAP_KEY = "Invalid value used as weak map key";
const NOT_A_SCHEMA = "A schema must be an object or a boolean, got ";
const DEFAULT_BASE = "https://json-schema.invalid/root.json";
/** Containers `isJsonData` walks before a value is asked of `JSON.stringify` instead (a cycle walks forever). */
const JSON_WALK = 1 << 16;
const TYPE_NAMES = ["string", "number", "integer", "boolean", "null", "array", "object", "bytes", "bigint", "undefined"];
const NEUTRAL = ["$schema", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly",
  "writeOnly", "$defs", "definitions", "contentEncoding", "contentMediaType", "minContains", "maxContains", "$vocabulary"];
/** The annotations a node of the `plain` shortcut may hold. */
const ANNOTATIONS = NEUTRAL.slice(1, 9);
const NUMBER_KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];

/** A schema's pattern that compiles neither way: thrown as the `SyntaxError` `new RegExp` throws, its words `m`. */
class Pattern {
  constructor(m) {
    this.m = m;
  }
}

/** "Nothing": a value unchanged by coercion, a member absent. */
const NO = Symbol();
/** A prepared schema that is a Standard Schema (its `~standard` is read at each call) or unusable. */
const STANDARD = {};
const UNREADABLE = {};
/** The prepared form of each `parameters` object: `{ s: its JSON copy, p: its problem }`, `STANDARD`, `UNREADABLE`.
 *  Weak, as pi-ai's validator cache: it needs no bound (an entry goes with its object). */
const schemas = new WeakMap();

let taken;
export function takeChecked() {
  const v = taken;
  taken = undefined;
  return v;
}

/** A `Uint8Array` of the view (`bytes`), or an object met again inside itself and cut there (`cut`, an object without
 *  members): each one a value of its own, equal to no other (the reference's markers carry an index). */
class Held {
  constructor(v, cut) {
    this.v = v;
    this.c = cut;
  }
}

const isArray = Array.isArray;
const hasOwn = Object.hasOwn;
const keys = Object.keys;
const isObject = (v) => v !== null && typeof v === "object" && !isArray(v);
const isMap = (v) => isObject(v) && !(v instanceof Held);
const isPrimitive = (v) => !isArray(v) && !isMap(v);
const kw = (o, key) => (hasOwn(o, key) ? o[key] : undefined);
const num = (o, key) => {
  const v = kw(o, key);
  return typeof v === "number" ? v : undefined;
};
const same = (a, b) => a === b || (a !== a && b !== b);
const put = (o, key, v) =>
  key === "__proto__" ? Object.defineProperty(o, key, { value: v, writable: true, enumerable: true, configurable: true }) : (o[key] = v);
const lower = (s, word) => s.toLowerCase() === word;
const joinElement = (v) => [v].join();

// ---- the call (src/core/fast/check_call.rs)

export function checkToolCall(tool, call, args) {
  if (isObjectLike(call)) {
    const error = call.argumentsError;
    if (error) throw new Error(`Invalid arguments for tool "${callName(call)}": ${text(error)}`);
  }
  const parameters = tool.parameters;
  if (parameters === undefined) throw new Error(NOT_A_SCHEMA + "undefined");
  let prepared = isObjectLike(parameters) ? schemas.get(parameters) : undefined;
  if (prepared === undefined) {
    prepared = prepareSchema(parameters);
    if (isObjectLike(parameters)) schemas.set(parameters, prepared);
  }
  if (prepared === STANDARD) {
    // T-4.3.8: the schema's own `validate`, on a JSON copy.
    const props = parameters["~standard"];
    taken = Reflect.apply(props.validate, props, [jsonClone(args)]);
    return CHECKED.STANDARD;
  }
  if (prepared === UNREADABLE) return CHECKED.UNREADABLE;
  const { s: schema, p: problem } = prepared;
  if (problem !== undefined) {
    if (problem instanceof Pattern) throw new SyntaxError(problem.m);
    throw problem === TOO_DEEP ? new RangeError(problem) : problem === WEAK_MAP_KEY ? new TypeError(problem) : new Error(problem);
  }
  const copy = cloneArgs(args);
  let json = isJsonData(copy, JSON_WALK);
  if (json === undefined) json = jsonText(copy);
  let result = NO;
  if (!json || !accepts(schema, copy, 0)) {
    // A value JSON cannot hold is validated as the reference's view of it, and what coercion changed is written back.
    const value = json ? copy : viewTree(copy);
    result = deeper(value, MAX_VALUE_DEPTH) ? tooDeep() : coerceThenCheck(schema, value);
    forget();
    if (result === FAILED) {
      if (failures.length === 1 && failures[0][0] === "root" && failures[0][1] === TOO_DEEP) throw new RangeError(TOO_DEEP);
      if (args === undefined) {
        // JSON has no undefined: where the coerced value is null, the message names what was given.
        for (const f of failures) if (f[0] === "root" && f[1].endsWith(", got null")) f[1] = f[1].slice(0, -4) + "undefined";
      }
      const lines = failures.map(([path, message]) => `  - ${path}: ${message}`).join("\n");
      const received = JSON.stringify(args, null, 2) ?? "undefined";
      throw new Error(`Validation failed for tool "${callName(call)}":\n${lines}\n\nReceived arguments:\n${received}`);
    }
    if (result !== NO && !json) result = applyPatches(copy, patches(value, result));
  }
  taken = result === NO ? copy : result;
  return CHECKED.ARGS;
}

function text(v) {
  return typeof v === "string" ? v : errorMessage(v);
}

function callName(call) {
  return isObjectLike(call) ? text(call.name) : "undefined";
}

/** Whether `v` (a clone over which `isJsonData` gave up) is JSON data: `JSON.stringify` throws for a cycle. */
function jsonText(v) {
  try {
    return stringify(v) !== undefined && isJsonData(v);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    return false;
  }
}

function prepareSchema(parameters) {
  const kind = classifySchema(parameters);
  if (kind === SCHEMA_KIND.UNREADABLE) return UNREADABLE;
  if (kind !== SCHEMA_KIND.JSON) return STANDARD;
  const json = stringify(parameters);
  const s = json === undefined ? null : JSON.parse(json);
  if (deeper(s, MAX_SCHEMA_DEPTH)) return { s: null, p: TOO_DEEP };
  return { s, p: typeof s === "boolean" ? WEAK_MAP_KEY : problemOf(s) };
}

/** Whether `root` nests deeper than `limit` (a scalar is 1); no recursion. */
function deeper(root, limit) {
  const values = [root];
  const depths = [1];
  while (values.length > 0) {
    const v = values.pop();
    const d = depths.pop();
    if (d > limit) return true;
    if (isArray(v)) for (const x of v) values.push(x), depths.push(d + 1);
    else if (isMap(v)) for (const k of keys(v)) values.push(v[k]), depths.push(d + 1);
  }
  return false;
}

/** The view the reference validates (view.js `viewText`) as values: containers copied (holes as `undefined`, an
 *  object's own keys only), -0 as 0, a `Uint8Array` and a cycle cut where `viewText` cuts it `Held`. */
function viewTree(root) {
  const onPath = new Map();
  const stack = [];
  let containers = 0;
  let chars = 0;
  const node = (v) => {
    if (typeof v === "string") chars += v.length;
    if (typeof v !== "object" || v === null) return v === 0 ? 0 : v;
    if (v instanceof Uint8Array) return new Held(v, false);
    if (onPath.has(v) && (stack.length >= VIEW_CYCLE_DEPTH || containers >= VIEW_CYCLE_CONTAINERS || chars >= VIEW_CYCLE_CHARS)) {
      return new Held(v, true);
    }
    onPath.set(v, (onPath.get(v) ?? 0) + 1);
    containers++;
    const out = isArray(v) ? [] : {};
    stack.push({ v, out, keys: isArray(v) ? null : keys(v), i: 0 });
    return out;
  };
  const tree = node(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const { v, out } = top;
    if (top.keys === null) {
      if (top.i < v.length) {
        const i = top.i++;
        out.push(node(i in v ? v[i] : undefined));
        continue;
      }
    } else if (top.i < top.keys.length) {
      const key = top.keys[top.i++];
      chars += key.length;
      put(out, key, node(v[key]));
      continue;
    }
    stack.pop();
    const times = onPath.get(v);
    if (times > 1) onPath.set(v, times - 1);
    else onPath.delete(v);
  }
  return tree;
}

/** What coercion changed from `old` to `next` (check_call.rs `patches`), for `applyPatches`: `[path, value]`,
 *  `[path]` to delete, `[path, 0, 0]` to wrap. Unchanged parts are the same values (copy-on-write): not walked. */
function patches(old, next) {
  const out = [];
  const stack = [[old, next, []]];
  while (stack.length > 0) {
    const [a, b, path] = stack.pop();
    if (a === b) continue;
    if (isMap(a) && isMap(b)) {
      for (const key of keys(b)) {
        if (hasOwn(a, key)) stack.push([a[key], b[key], [...path, key]]);
        else out.push([[...path, key], b[key]]);
      }
      for (const key of keys(a)) if (!hasOwn(b, key)) out.push([[...path, key]]);
    } else if (isArray(a) && isArray(b) && a.length === b.length) {
      for (let i = 0; i < a.length; i++) stack.push([a[i], b[i], [...path, i]]);
    } else if (!isArray(a) && isArray(b) && b.length === 1) {
      out.push([path, 0, 0]);
      stack.push([a, b[0], [...path, 0]]);
    } else if (!same(a, b)) {
      out.push([path, b]);
    }
  }
  return out;
}

// ---- the validator (validate/mod.rs)

const FAILED = {};
/** The errors of the last `FAILED`: `[dotted path, message]`. */
let failures;

let root;
let resolver;
let depth;
let tooDeepSeen;
/** (schema node, value) pairs pass 2 is converting through a re-entry point. */
let entered;
let cuts;
/** Pass-2 results of `$ref` targets, by node then value. */
let convertMemo;
/** Answers of `$ref` targets for containers within one outermost `valid`, by node then value. */
let checkMemo;
let checkCalls;
/** Errors of `$ref` targets for containers, by node then value: `[path, errors]`. */
let explainMemo;

function tooDeep() {
  failures = [["root", TOO_DEEP]];
  return FAILED;
}

function coerceThenCheck(schema, args) {
  root = schema;
  resolver = resolverOf(schema);
  depth = 0;
  tooDeepSeen = false;
  entered = [];
  cuts = 0;
  convertMemo = new Map();
  checkMemo = new Map();
  checkCalls = 0;
  explainMemo = new Map();
  const coerced = run(coerce(args));
  if (tooDeepSeen) return tooDeep();
  const value = coerced === NO ? args : coerced;
  if (run(valid(schema, 0, value)) && !tooDeepSeen) return coerced;
  const raw = [];
  run(walk(schema, 0, value, "", raw));
  if (tooDeepSeen) return tooDeep();
  if (raw.length === 0) raw.push(["", "invalid"]);
  failures = raw.map(([path, message]) => [dotted(path), message]);
  return FAILED;
}

/** Lets go of the last validation's schema and values. */
function forget() {
  root = resolver = entered = convertMemo = checkMemo = explainMemo = undefined;
}

// The walks below recurse as deep as the schema (`MAX_DEPTH` levels), more than the engine's stack takes of JS
// frames: each is a generator whose `yield f(…)` is a call, run by `run` on a stack of its own.

/** Runs generator `g` and every call it yields, each given its callee's result; `g`'s result. */
function run(g) {
  const stack = [g];
  let value;
  for (;;) {
    const step = stack[stack.length - 1].next(value);
    if (step.done) {
      stack.pop();
      if (stack.length === 0) return step.value;
      value = step.value;
    } else {
      stack.push(step.value);
      value = undefined;
    }
  }
}

function enter() {
  if (tooDeepSeen || depth >= MAX_DEPTH) {
    tooDeepSeen = true;
    return false;
  }
  depth++;
  return true;
}

/** Whether `value` passes `node`; `undefined` when `node` is no schema or the check went past `MAX_DEPTH` (then
 *  coercion goes on as if the branch did not pass). */
function* passes(node, base, value) {
  if (typeof node !== "boolean" && !isObject(node)) return undefined;
  const before = tooDeepSeen;
  const ok = (yield valid(node, base, value));
  if (tooDeepSeen && !before) {
    tooDeepSeen = false;
    return undefined;
  }
  return ok;
}

const memoGet = (memo, node, v) => memo.get(node)?.get(v);
function memoSet(memo, node, v, result) {
  let inner = memo.get(node);
  if (inner === undefined) memo.set(node, (inner = new Map()));
  inner.set(v, result);
}

// ---- values (check.rs `has_type`, explain.rs `type_name`)

function typeName(v) {
  switch (typeof v) {
    case "number":
      return v !== v ? "NaN" : v === Infinity ? "Infinity" : v === -Infinity ? "-Infinity" : Number.isInteger(v) ? "integer" : "number";
    case "object":
      return v === null ? "null" : isArray(v) ? "array" : v instanceof Held && !v.c ? "bytes" : "object";
    default:
      return typeof v;
  }
}

function hasType(name, v) {
  const t = typeName(v);
  return name === t ? typeof v !== "number" || Number.isFinite(v) : name === "number" && t === "integer";
}

const typeMatches = (t, v) => (typeof t === "string" ? hasType(t, v) : isArray(t) && t.some((n) => typeof n === "string" && hasType(n, v)));

/** JSON equality as `const`, `enum` and `uniqueItems` compare; no recursion. */
function jsonEqual(a, b) {
  if (typeof a !== "object" || a === null) return same(a, b);
  const stack = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (isArray(x)) {
      if (!isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push(x[i], y[i]);
    } else if (isMap(x)) {
      const kx = keys(x);
      if (!isMap(y) || kx.length !== keys(y).length) return false;
      for (const k of kx) {
        if (!hasOwn(y, k)) return false;
        stack.push(x[k], y[k]);
      }
    } else if (x instanceof Held || !same(x, y)) return false;
  }
  return true;
}

const matches = (pattern, s) => regexTest(pattern, s) === true;

/** A string's length in code points. */
function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function itemSchemas(o) {
  const items = kw(o, "items");
  if (isArray(items)) return [items, kw(o, "additionalItems")];
  const prefix = kw(o, "prefixItems");
  return isArray(prefix) ? [prefix, items] : [[], items];
}

const itemSchema = ([prefix, rest], i) => (i < prefix.length ? prefix[i] : rest);

function itemSchemaAt(o, i) {
  const items = kw(o, "items");
  if (isArray(items)) return items[i];
  const prefix = kw(o, "prefixItems");
  return isArray(prefix) && i < prefix.length ? prefix[i] : items;
}

const entries = (v) => (isObject(v) ? keys(v).map((k) => [k, v[k]]) : []);
const patternsOf = (o) => entries(kw(o, "patternProperties"));
const objectKw = (o, key) => {
  const v = kw(o, key);
  return isObject(v) ? v : undefined;
};
const isRequired = (o, key) => {
  const list = kw(o, "required");
  return isArray(list) && list.includes(key);
};
const isBytesType = (o) => kw(o, "type") === "bytes";

function containsBounds(o) {
  return [num(o, "minContains") ?? 1, num(o, "maxContains") ?? Infinity];
}

function unique(items) {
  for (let i = 1; i < items.length; i++) for (let j = 0; j < i; j++) if (jsonEqual(items[i], items[j])) return false;
  return true;
}

// ---- numbers (number.rs)

function multiple(x, big, m) {
  if (typeof big === "bigint") {
    if (!Number.isInteger(m) || m === 0) return false;
    return Math.abs(m) >= 1.7e38 ? big === 0n : big % BigInt(Math.abs(m)) === 0n;
  }
  const q = x / m;
  if (Number.isInteger(q)) return true;
  if (!Number.isFinite(q)) return x % m === 0;
  const [vc, ve] = decimal(x);
  const [dc, de] = decimal(m);
  if (dc === 0n) return false;
  return ve >= de ? (vc * 10n ** BigInt(ve - de)) % dc === 0n : vc % (dc * 10n ** BigInt(de - ve)) === 0n;
}

/** `|x|` as an integer coefficient and a power of ten, from its JavaScript text. */
function decimal(x) {
  const [mantissa, exponent = "0"] = String(Math.abs(x)).split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  return [BigInt(whole + fraction), Number(exponent) - fraction.length];
}

function validNumber(o, x, big) {
  if (!Number.isFinite(x) && NUMBER_KEYWORDS.some((k) => num(o, k) !== undefined)) return false;
  const bound = (k, ok) => {
    const m = num(o, k);
    return m === undefined || ok(m);
  };
  return bound("minimum", (m) => x >= m) && bound("maximum", (m) => x <= m) && bound("exclusiveMinimum", (m) => x > m) &&
    bound("exclusiveMaximum", (m) => x < m) && bound("multipleOf", (m) => multiple(x, big, m));
}

// ---- the check (check.rs)

function* valid(node, base, v) {
  if (!isObject(node)) return node !== false;
  if (!enter()) return false;
  checkCalls++;
  const b = resolver.baseFor(node, base);
  const ok = (yield validObject(node, b, v));
  if (--checkCalls === 0) checkMemo.clear();
  depth--;
  return ok;
}

function* validObject(o, b, v) {
  const t = kw(o, "type");
  if (t !== undefined && !typeMatches(t, v)) return false;
  let typed = true;
  if (typeof v === "string") typed = validString(o, v);
  else if (typeof v === "number") typed = validNumber(o, v);
  else if (typeof v === "bigint") typed = validNumber(o, Number(v), v);
  else if (v instanceof Held) typed = v.c || !isBytesType(o) || validLength(o, v.v.length);
  else if (isArray(v)) typed = (yield validItems(o, b, v));
  else if (isMap(v)) typed = (yield validMembers(o, b, v));
  return typed && (yield validInPlace(o, b, v));
}

function validLength(o, len) {
  const min = num(o, "minLength");
  const max = num(o, "maxLength");
  return !(min !== undefined && len < min) && !(max !== undefined && len > max);
}

function* validInPlace(o, b, v) {
  const values = kw(o, "enum");
  if (isArray(values) && !values.some((x) => jsonEqual(x, v))) return false;
  if (hasOwn(o, "const") && !jsonEqual(o.const, v)) return false;
  const all = kw(o, "allOf");
  if (isArray(all)) for (const s of all) if (!(yield valid(s, b, v))) return false;
  const any = kw(o, "anyOf");
  if (isArray(any) && !(yield anyPasses(any, b, v))) return false;
  const one = kw(o, "oneOf");
  if (isArray(one) && (yield countPassing(one, b, v, 2)) !== 1) return false;
  if (hasOwn(o, "not") && (yield valid(o.not, b, v))) return false;
  if (hasOwn(o, "if")) {
    const then = kw(o, "then");
    const otherwise = kw(o, "else");
    if (then !== undefined || otherwise !== undefined) {
      const branch = (yield valid(o.if, b, v)) ? then : otherwise;
      if (branch !== undefined && !(yield valid(branch, b, v))) return false;
    }
  }
  for (const key of ["$ref", "$dynamicRef"]) {
    const reference = kw(o, key);
    if (typeof reference === "string" && !(yield validRef(reference, b, v))) return false;
  }
  return true;
}

/** A schema of one known type name and annotations: pi-schema's `anyOf` tries those first. */
function bareTypeBranch(s) {
  return isObject(s) && typeof s.type === "string" && hasOwn(s, "type") && TYPE_NAMES.includes(s.type) &&
    keys(s).every((k) => k === "type" || NEUTRAL.includes(k));
}

function* anyPasses(branches, b, v) {
  for (const s of branches) if (bareTypeBranch(s) && (yield valid(s, b, v))) return true;
  for (const s of branches) if (!bareTypeBranch(s) && (yield valid(s, b, v))) return true;
  return false;
}

function* countPassing(branches, b, v, stop) {
  let n = 0;
  for (const s of branches) if ((yield valid(s, b, v)) && ++n >= stop) break;
  return n;
}

function* validRef(reference, b, v) {
  const found = resolver.resolve(reference, b);
  if (found === undefined) return false;
  const [target, tb] = found;
  if (isPrimitive(v)) return (yield valid(target, tb, v));
  const known = memoGet(checkMemo, target, v);
  if (known !== undefined) return known;
  const ok = (yield valid(target, tb, v));
  if (!tooDeepSeen) memoSet(checkMemo, target, v, ok);
  return ok;
}

function validString(o, s) {
  if (!validLength(o, codePoints(s))) return false;
  const pattern = kw(o, "pattern");
  if (typeof pattern === "string" && !matches(pattern, s)) return false;
  const name = kw(o, "format");
  return typeof name !== "string" || format(name, s) !== false;
}

function* validMembers(o, b, m) {
  const properties = objectKw(o, "properties");
  if (properties !== undefined) {
    for (const k of keys(properties)) {
      if (hasOwn(m, k) && (m[k] !== undefined || isRequired(o, k)) && !(yield valid(properties[k], b, m[k]))) return false;
    }
  }
  const required = kw(o, "required");
  if (isArray(required) && required.some((r) => typeof r === "string" && !hasOwn(m, r))) return false;
  const patterns = objectKw(o, "patternProperties");
  const additional = kw(o, "additionalProperties");
  const names = kw(o, "propertyNames");
  const memberKeys = keys(m);
  if (patterns !== undefined || additional !== undefined || names !== undefined) {
    for (const k of memberKeys) {
      const x = m[k];
      let matched = properties !== undefined && hasOwn(properties, k);
      if (patterns !== undefined) {
        for (const p of keys(patterns)) {
          if (matches(p, k)) {
            matched = true;
            if (!(yield valid(patterns[p], b, x))) return false;
          }
        }
      }
      if (!matched && additional !== undefined && !(yield valid(additional, b, x))) return false;
      if (names !== undefined && !(yield valid(names, b, k))) return false;
    }
  }
  if (!countWithin(o, "Properties", memberKeys.length)) return false;
  for (const key of ["dependentRequired", "dependencies"]) {
    for (const [k, d] of entries(kw(o, key))) {
      if (!hasOwn(m, k)) continue;
      if (isArray(d) ? d.some((r) => !hasOwn(m, String(r))) : key === "dependencies" && !(yield valid(d, b, m))) return false;
    }
  }
  for (const [k, s] of entries(kw(o, "dependentSchemas"))) if (hasOwn(m, k) && !(yield valid(s, b, m))) return false;
  return true;
}

/** `min<what>` and `max<what>` hold for `count`. */
function countWithin(o, what, count) {
  const min = num(o, "min" + what);
  const max = num(o, "max" + what);
  return !(min !== undefined && count < min) && !(max !== undefined && count > max);
}

function* validItems(o, b, items) {
  const schemas = itemSchemas(o);
  for (let i = 0; i < items.length; i++) {
    const s = itemSchema(schemas, i);
    if (s !== undefined && !(yield valid(s, b, items[i]))) return false;
  }
  if (!countWithin(o, "Items", items.length)) return false;
  if (kw(o, "uniqueItems") === true && !unique(items)) return false;
  if (hasOwn(o, "contains")) {
    const [min, max] = containsBounds(o);
    const n = (yield countContained(o.contains, b, items, max));
    if (n < min || n > max) return false;
  }
  return true;
}

function* countContained(contains, b, items, max) {
  let n = 0;
  for (const x of items) if ((yield valid(contains, b, x)) && ++n > max) break;
  return n;
}

// ---- the explanation (explain.rs)

const err = (out, path, message) => out.push([path, message]);
const pointer = (path, key) => `${path}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;

function dotted(path) {
  if (!path.startsWith("/")) return path === "" ? "root" : path;
  return path.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~")).join(".");
}

function listValues(values) {
  if (values.length <= 20) return JSON.stringify(values);
  return `${JSON.stringify(values.slice(0, 20)).slice(0, -1)}, ... and ${values.length - 20} more]`;
}

function* walk(node, base, v, path, out) {
  if (!isObject(node)) {
    if (node === false) err(out, path, "no value is allowed here");
    return;
  }
  if (!enter()) return;
  const b = resolver.baseFor(node, base);
  if (!(yield valid(node, b, v))) (yield walkObject(node, b, v, path, out));
  depth--;
}

function* walkObject(o, b, v, path, out) {
  const start = out.length;
  const t = kw(o, "type");
  if (t !== undefined && !typeMatches(t, v)) {
    const names = isArray(t) ? t.map(joinElement).join(" or ") : joinElement(t);
    return err(out, path, `expected ${names}, got ${typeName(v)}`);
  }
  const values = kw(o, "enum");
  if (isArray(values) && !values.some((x) => jsonEqual(x, v))) err(out, path, `expected one of ${listValues(values)}`);
  if (hasOwn(o, "const") && !jsonEqual(o.const, v)) err(out, path, `expected ${JSON.stringify(o.const)}`);
  if (typeof v === "string") walkString(o, v, path, out);
  else if (typeof v === "number") walkNumber(o, v, undefined, path, out);
  else if (typeof v === "bigint") walkNumber(o, Number(v), v, path, out);
  else if (v instanceof Held) {
    if (!v.c && isBytesType(o)) walkCounts(o, "Length", v.v.length, "bytes", path, out);
  } else if (isArray(v)) (yield walkItems(o, b, v, path, out));
  else if (isMap(v)) (yield walkMembers(o, b, v, path, out));
  const all = kw(o, "allOf");
  if (isArray(all)) for (const s of all) (yield walk(s, b, v, path, out));
  const any = kw(o, "anyOf");
  if (isArray(any)) (yield walkUnion(any, b, v, path, out, false));
  const one = kw(o, "oneOf");
  if (isArray(one)) (yield walkUnion(one, b, v, path, out, true));
  if (hasOwn(o, "not") && (yield valid(o.not, b, v))) err(out, path, "must not match the schema in not");
  if (hasOwn(o, "if")) {
    const branch = (yield valid(o.if, b, v)) ? kw(o, "then") : kw(o, "else");
    if (branch !== undefined) (yield walk(branch, b, v, path, out));
  }
  const reference = kw(o, "$ref");
  if (typeof reference === "string") (yield walkRef(reference, b, v, path, out));
  if (out.length === start && typeof kw(o, "$dynamicRef") === "string") {
    err(out, path, "does not match the dynamically referenced schema");
  }
}

function* walkRef(reference, b, v, path, out) {
  const found = resolver.resolve(reference, b);
  if (found === undefined) return err(out, path, `unresolved reference ${reference}`);
  const [target, tb] = found;
  if (isPrimitive(v) || !isObject(target)) return (yield walk(target, tb, v, path, out));
  const known = memoGet(explainMemo, target, v);
  if (known !== undefined && known[0] === path) return void out.push(...known[1]);
  const errors = [];
  (yield walk(target, tb, v, path, errors));
  memoSet(explainMemo, target, v, [path, errors]);
  out.push(...errors);
}

/** `expected at least|at most <n> <noun>` for `min<what>` and `max<what>`. */
function walkCounts(o, what, count, noun, path, out) {
  const min = num(o, "min" + what);
  if (min !== undefined && count < min) err(out, path, `expected at least ${min} ${noun}`);
  const max = num(o, "max" + what);
  if (max !== undefined && count > max) err(out, path, `expected at most ${max} ${noun}`);
}

function walkString(o, s, path, out) {
  walkCounts(o, "Length", codePoints(s), "characters", path, out);
  const pattern = kw(o, "pattern");
  if (typeof pattern === "string" && !matches(pattern, s)) err(out, path, `expected to match ${pattern}`);
  const name = kw(o, "format");
  if (typeof name === "string" && format(name, s) === false) err(out, path, `expected format ${name}`);
}

function walkNumber(o, x, big, path, out) {
  const check = (k, fails, word) => {
    const m = num(o, k);
    if (m !== undefined && fails(m)) err(out, path, `expected ${word} ${m}`);
  };
  check("minimum", (m) => x < m, ">=");
  check("maximum", (m) => x > m, "<=");
  check("exclusiveMinimum", (m) => x <= m, ">");
  check("exclusiveMaximum", (m) => x >= m, "<");
  check("multipleOf", (m) => !multiple(x, big, m), "a multiple of");
}

function* walkMembers(o, b, m, path, out) {
  const properties = objectKw(o, "properties");
  const required = kw(o, "required");
  for (const k of isArray(required) ? required : []) {
    if (typeof k !== "string") continue;
    // Present and `undefined`: missing unless its declared schema takes `undefined`.
    const missing = !hasOwn(m, k) ||
      (m[k] === undefined && !(properties !== undefined && hasOwn(properties, k) && (yield valid(properties[k], b, undefined))));
    if (missing) err(out, pointer(path, k), "missing");
  }
  for (const [k, s] of entries(properties)) if (hasOwn(m, k) && m[k] !== undefined) (yield walk(s, b, m[k], pointer(path, k), out));
  const patterns = patternsOf(o);
  const additional = kw(o, "additionalProperties");
  const names = kw(o, "propertyNames");
  const memberKeys = keys(m);
  for (const k of memberKeys) {
    const x = m[k];
    let matched = properties !== undefined && hasOwn(properties, k);
    for (const [p, s] of patterns) {
      if (matches(p, k)) {
        matched = true;
        (yield walk(s, b, x, pointer(path, k), out));
      }
    }
    if (!matched && additional === false) err(out, pointer(path, k), "unknown field");
    else if (!matched && additional !== undefined) (yield walk(additional, b, x, pointer(path, k), out));
    if (names !== undefined && !(yield valid(names, b, k))) err(out, pointer(path, k), "invalid property name");
  }
  walkCounts(o, "Properties", memberKeys.length, "properties", path, out);
  const dependencies = {};
  for (const key of ["dependentRequired", "dependencies"]) for (const [k, d] of entries(kw(o, key))) put(dependencies, k, d);
  for (const [k, d] of entries(dependencies)) {
    if (!hasOwn(m, k)) continue;
    if (isArray(d)) {
      for (const r of d) if (!hasOwn(m, String(r))) err(out, pointer(path, String(r)), `required when ${k} is present`);
    } else (yield walk(d, b, m, path, out));
  }
  for (const [k, s] of entries(kw(o, "dependentSchemas"))) if (hasOwn(m, k)) (yield walk(s, b, m, path, out));
}

function* walkItems(o, b, items, path, out) {
  const schemas = itemSchemas(o);
  for (let i = 0; i < items.length; i++) {
    const s = itemSchema(schemas, i);
    if (s !== undefined) (yield walk(s, b, items[i], `${path}/${i}`, out));
  }
  walkCounts(o, "Items", items.length, "items", path, out);
  if (kw(o, "uniqueItems") === true && !unique(items)) err(out, path, "expected unique items");
  if (hasOwn(o, "contains")) {
    const [min, max] = containsBounds(o);
    const found = (yield countContained(o.contains, b, items, max));
    if (found < min || found > max) {
      const noun = (x) => (x === 1 ? "item" : "items");
      err(out, path, max === Infinity ? `expected at least ${min} matching ${noun(min)}`
        : min === 0 ? `expected at most ${max} matching ${noun(max)}` : `expected between ${min} and ${max} matching items`);
    }
  }
}

function* walkUnion(branches, b, v, path, out, exactlyOne) {
  const n = (yield countPassing(branches, b, v, 2));
  if (n === 1 || (!exactlyOne && n > 0)) return;
  if (n > 1) return err(out, path, "matches more than one alternative");
  // A tagged union reports the branch its tag selects.
  const tag = isMap(v) ? tagOf(branches, b) : undefined;
  if (tag !== undefined) {
    const [key, values] = tag;
    const i = hasOwn(v, key) ? values.findIndex((t) => same(t, v[key])) : -1;
    if (i >= 0 && i < branches.length) (yield walk(branches[i], b, v, path, out));
    else err(out, pointer(path, key), `expected one of ${listValues(values)}`);
    return;
  }
  // Otherwise the branch declaring most of the object's keys, then the one whose first error is deepest.
  let best;
  let bestDeclared = 0;
  for (const s of branches) {
    const errors = [];
    (yield walk(s, b, v, path, errors));
    if (errors.length === 0) continue;
    const declared = isMap(v) ? declaredKeys(s, b, v) : 0;
    if (best === undefined || declared > bestDeclared || (declared === bestDeclared && errors[0][0].length > (best[0]?.[0].length ?? 0))) {
      best = errors;
      bestDeclared = declared;
    }
  }
  if (best === undefined) err(out, path, "matches no alternative");
  else out.push(...best);
}

/** A branch, through its `$ref` when it has one; `undefined` for an unresolved one. */
function throughRef(s, b) {
  const reference = isObject(s) ? kw(s, "$ref") : undefined;
  if (typeof reference !== "string") return s;
  return resolver.resolve(reference, resolver.baseFor(s, b))?.[0];
}

const propertiesOf = (s) => (isObject(s) ? objectKw(s, "properties") : undefined);

function declaredKeys(s, b, m) {
  const properties = propertiesOf(throughRef(s, b));
  return properties === undefined ? 0 : keys(m).filter((k) => hasOwn(properties, k)).length;
}

/** The first property of the first branch on which every branch has a distinct primitive `const`. */
function tagOf(branches, b) {
  const resolved = branches.map((s) => throughRef(s, b));
  const first = propertiesOf(resolved[0]);
  if (first === undefined) return undefined;
  for (const key of keys(first)) {
    const values = [];
    for (const s of resolved) {
      const properties = propertiesOf(s);
      const property = properties === undefined ? undefined : kw(properties, key);
      const t = isObject(property) ? kw(property, "const") : undefined;
      if (t === undefined || !isPrimitive(t) || values.some((x) => same(x, t))) break;
      values.push(t);
    }
    if (values.length === resolved.length) return [key, values];
  }
  return undefined;
}

// ---- coercion, passes 1 and 3 (coerce.rs)

const changed = (next, old) => (same(next, old) ? NO : next);

/** Sets `key` of the copy of `m` being built (made on the first change); the copy. */
function set(out, m, key, next) {
  if (next === NO) return out;
  if (out === NO) out = { ...m };
  put(out, key, next);
  return out;
}

function setItem(out, items, i, next) {
  if (next === NO) return out;
  if (out === NO) out = items.slice();
  out[i] = next;
  return out;
}

function* coerce(args) {
  const first = (yield dropNulls(args, root, 0));
  const v1 = first === NO ? args : first;
  const second = (yield convert(root, 0, v1));
  convertMemo.clear();
  entered = [];
  cuts = 0;
  const third = (yield coerceTypes(second === NO ? v1 : second, root, 0));
  return third !== NO ? third : second !== NO ? second : first;
}

function* dropNulls(value, schema, base) {
  if (!isObject(schema) || !enter()) return NO;
  const b = resolver.baseFor(schema, base);
  let out = NO;
  if (isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const s = itemSchemaAt(schema, i);
      if (s !== undefined) out = setItem(out, value, i, (yield dropNulls(value[i], s, b)));
    }
  } else if (isMap(value)) out = (yield dropNullsInObject(schema, b, value));
  depth--;
  return out;
}

function* dropNullsInObject(o, b, m) {
  const properties = objectKw(o, "properties");
  const patterns = patternsOf(o);
  const additional = objectKw(o, "additionalProperties");
  if (patterns.length === 0 && additional === undefined && properties === undefined) return NO;
  const required = kw(o, "required");
  let out = NO;
  for (const [key, property] of entries(properties)) {
    if (!hasOwn(m, key)) continue;
    const x = m[key];
    const isRef = isObject(property) && typeof kw(property, "$ref") === "string";
    if (x === null && !(isArray(required) && required.includes(key)) && !isRef && (yield passes(property, b, null)) === false) {
      if (out === NO) out = { ...m };
      delete out[key];
      continue;
    }
    out = set(out, m, key, (yield dropNulls(x, property, b)));
  }
  // Values of pattern and additional properties are walked for their own optional nulls; their keys stay.
  if (patterns.length > 0 || additional !== undefined) {
    out = (yield patternMembers(m, out, properties, patterns, additional, (v, s) => dropNulls(v, s, b)));
  }
  return out;
}

/** The members of `m` that `patterns` or `additional` reach (one of `properties` only through a pattern), each passed
 *  through `step(value, schema)` into `out`: both coercion passes walk them alike. */
function* patternMembers(m, out, properties, patterns, additional, step) {
  for (const key of keys(m)) {
    let matched = properties !== undefined && hasOwn(properties, key);
    for (const [p, item] of patterns) {
      if (!matches(p, key)) continue;
      matched = true;
      const from = out === NO ? m : out;
      if (hasOwn(from, key)) out = set(out, m, key, (yield step(from[key], item)));
    }
    if (!matched && additional !== undefined && hasOwn(m, key)) out = set(out, m, key, (yield step(m[key], additional)));
  }
  return out;
}

function* coerceTypes(value, schema, base) {
  if (!isObject(schema) || !enter()) return NO;
  const o = schema;
  const b = resolver.baseFor(schema, base);
  let next = NO;
  const all = kw(o, "allOf");
  if (isArray(all)) {
    for (const member of all) {
      const coerced = (yield coerceTypes(next === NO ? value : next, member, b));
      if (coerced !== NO) next = coerced;
    }
  }
  for (const key of ["anyOf", "oneOf"]) {
    const branches = kw(o, key);
    if (isArray(branches)) {
      const coerced = (yield coerceUnion(next === NO ? value : next, branches, b));
      if (coerced !== NO) next = coerced;
    }
  }
  const t = kw(o, "type");
  const types = typeof t === "string" ? [t] : isArray(t) ? t.filter((n) => typeof n === "string") : [];
  let current = next === NO ? value : next;
  if (!(types.length > 1 && types.some((n) => hasType(n, current)))) {
    if (current !== current) {
      // pi-schema stops at the first type whose coercion gives a value `!==` the input: for NaN, the first.
      if (types[0] === "string") next = "NaN";
    } else {
      for (const n of types) {
        const coerced = coercePrimitive(current, n);
        if (coerced !== NO) {
          next = coerced;
          break;
        }
      }
    }
  }
  current = next === NO ? value : next;
  let coerced = NO;
  if (isMap(current) && types.includes("object")) coerced = (yield coerceProperties(current, o, b));
  // A Uint8Array is an object to pi-schema's coercion (see `convertObject`).
  else if (current instanceof Held && !current.c && types.includes("object")) coerced = (yield coerceProperties({ ...current.v }, o, b));
  else if (isArray(current) && types.includes("array")) coerced = (yield coerceItems(current, o, b));
  if (coerced !== NO) next = coerced;
  depth--;
  return next;
}

function* coerceUnion(value, branches, b) {
  for (const branch of branches) if ((yield passes(branch, b, value)) === true) return NO;
  for (const branch of branches) {
    const coerced = (yield coerceTypes(value, branch, b));
    if ((yield passes(branch, b, coerced === NO ? value : coerced)) === true) return coerced;
  }
  return NO;
}

function* coerceProperties(m, o, b) {
  const properties = objectKw(o, "properties");
  const patterns = patternsOf(o);
  const additional = objectKw(o, "additionalProperties");
  let out = NO;
  for (const [key, property] of entries(properties)) if (hasOwn(m, key)) out = set(out, m, key, (yield coerceTypes(m[key], property, b)));
  return (yield patternMembers(m, out, properties, patterns, additional, (v, s) => coerceTypes(v, s, b)));
}

function* coerceItems(items, o, b) {
  let out = NO;
  for (let i = 0; i < items.length; i++) {
    const s = itemSchemaAt(o, i);
    if (isObject(s)) out = setItem(out, items, i, (yield coerceTypes(items[i], s, b)));
  }
  return out;
}

/** Ajv's primitive coercion of `value` to type `t`. */
function coercePrimitive(value, t) {
  let c = NO;
  switch (typeof value) {
    case "number":
      if (!Number.isFinite(value)) return t === "string" && value === value ? String(value) : NO;
      if (t === "string") c = String(value);
      else if (t === "boolean" && (value === 1 || value === 0)) c = value === 1;
      else if (t === "null" && value === 0) c = null;
      break;
    case "string":
      if ((t === "number" || t === "integer") && value.trim() !== "") {
        const x = Number(value);
        if (t === "number" ? Number.isFinite(x) : Number.isInteger(x)) c = x;
      } else if (t === "boolean" && (value === "true" || value === "false")) c = value === "true";
      else if (t === "null" && value === "") c = null;
      break;
    case "boolean":
      if (t === "number" || t === "integer") c = value ? 1 : 0;
      else if (t === "string") c = String(value);
      else if (t === "null" && !value) c = null;
      break;
    case "object":
      if (value === null) c = t === "number" || t === "integer" ? 0 : t === "boolean" ? false : t === "string" ? "" : NO;
  }
  return c === NO ? NO : changed(c, value);
}

// ---- coercion, pass 2 (convert.rs)

function* convert(node, base, value) {
  if (!isObject(node) || !enter()) return NO;
  const b = resolver.baseFor(node, base);
  let result = NO;
  const reference = kw(node, "$ref");
  if (typeof reference === "string") {
    const found = resolver.resolve(reference, b);
    if (found !== undefined && isObject(found[0])) result = (yield reenter(found[0], found[1], value, true));
  } else result = (yield convertNode(node, b, value));
  depth--;
  return result;
}

/** `node` converted for `value` at a re-entry point (a `$ref`, a wrap): unchanged when that pair is already being
 *  converted, so a recursive schema that meets a value it cannot convert terminates. */
function* reenter(node, base, value, memoize) {
  if (entered.some(([n, v]) => n === node && same(v, value))) {
    cuts++;
    return NO;
  }
  if (memoize) {
    const inner = convertMemo.get(node);
    if (inner !== undefined && inner.has(value)) return inner.get(value);
  }
  const before = cuts;
  entered.push([node, value]);
  const result = (yield convert(node, base, value));
  entered.pop();
  if (memoize && cuts === before) memoSet(convertMemo, node, value, result);
  return result;
}

function* convertNode(o, b, value) {
  if (hasOwn(o, "const")) return convertLiteral(o.const, value);
  const values = kw(o, "enum");
  if (isArray(values)) return (yield convertEnum(o, values, b, value));
  for (const key of ["anyOf", "oneOf"]) {
    const branches = kw(o, key);
    if (isArray(branches)) return (yield convertUnion(o, branches, b, value));
  }
  const all = kw(o, "allOf");
  if (isArray(all)) {
    let next = NO;
    for (const member of all) {
      const converted = (yield convert(member, b, next === NO ? value : next));
      if (converted !== NO) next = converted;
    }
    const members = (yield convertMembers(o, b, next === NO ? value : next));
    return members !== NO ? members : next;
  }
  const t = kw(o, "type");
  if (t === undefined) {
    if (hasOwn(o, "properties") || hasOwn(o, "patternProperties")) return (yield convertObject(o, b, value));
    return hasOwn(o, "items") || hasOwn(o, "prefixItems") ? (yield convertArray(o, b, value)) : NO;
  }
  let c = NO;
  switch (t) {
    case "string":
      c = tryString(value);
      break;
    case "number":
      c = tryNumber(value);
      break;
    case "integer":
      c = tryNumber(value);
      if (c !== NO) c = Math.trunc(c);
      break;
    case "boolean":
      c = tryBoolean(value);
      break;
    case "null":
      c = tryNull(value) ? null : NO;
      break;
    case "bigint":
      c = tryBigInt(value);
      break;
    case "undefined":
      // TypeBox's TryUndefined takes exactly the values its TryNull takes.
      c = tryNull(value) ? undefined : NO;
      break;
    case "array":
      return (yield convertArray(o, b, value));
    case "object":
      return (yield convertObject(o, b, value));
  }
  return c === NO ? NO : changed(c, value);
}

/** An enum is a union of its values: a member stays, else the first member the value converts to that passes. */
function* convertEnum(node, values, b, value) {
  if (values.some((member) => same(member, value))) return NO;
  for (const member of values) {
    const candidate = convertLiteral(member, value);
    if (candidate !== NO && (yield passes(node, b, candidate)) === true) return candidate;
  }
  return NO;
}

function* convertUnion(o, branches, b, value) {
  for (const branch of branches) if ((yield passes(branch, b, value)) === true) return (yield convertMembers(o, b, value));
  for (const branch of branches) {
    const converted = (yield convert(branch, b, value));
    const members = (yield convertMembers(o, b, converted === NO ? value : converted));
    const candidate = members !== NO ? members : converted;
    if ((yield passes(o, b, candidate === NO ? value : candidate)) === true) return candidate;
  }
  return (yield convertMembers(o, b, value));
}

function* convertMembers(o, b, value) {
  return hasOwn(o, "properties") || hasOwn(o, "patternProperties") || hasOwn(o, "additionalProperties")
    ? (yield convertObject(o, b, value)) : NO;
}

function* convertArray(o, b, value) {
  const items = kw(o, "items");
  const prefix = kw(o, "prefixItems");
  const tuple = isArray(items) ? [items, undefined] : isArray(prefix) ? [prefix, items] : undefined;
  let out = NO;
  if (tuple !== undefined) {
    // A tuple converts its items and never wraps a single value.
    if (!isArray(value)) return NO;
    for (let i = 0; i < value.length; i++) {
      const s = itemSchema(tuple, i);
      if (s !== undefined) out = setItem(out, value, i, (yield convert(s, b, value[i])));
    }
    return out;
  }
  if (isArray(value)) {
    if (items === undefined) return NO;
    for (let i = 0; i < value.length; i++) out = setItem(out, value, i, (yield convert(items, b, value[i])));
    return out;
  }
  // A single value becomes a one-item array, converted by the item schema: a re-entry point.
  const item = isObject(items) ? (yield reenter(items, b, value, false)) : NO;
  return [item === NO ? value : item];
}

function* convertObject(o, b, value) {
  // pi-schema's coercion takes a Uint8Array for an object: one member changed makes it a plain copy.
  const m = isMap(value) ? value : value instanceof Held && !value.c ? { ...value.v } : undefined;
  if (m === undefined) return NO;
  const properties = objectKw(o, "properties");
  const patterns = patternsOf(o);
  const additional = objectKw(o, "additionalProperties");
  let out = NO;
  for (const key of keys(m)) {
    const x = m[key];
    // An undefined property counts as absent.
    if (x === undefined) continue;
    let next = NO;
    let matched = false;
    if (properties !== undefined && hasOwn(properties, key)) {
      matched = true;
      next = (yield convert(properties[key], b, x));
    }
    for (const [p, s] of patterns) {
      if (matches(p, key)) {
        matched = true;
        const converted = (yield convert(s, b, next === NO ? x : next));
        if (converted !== NO) next = converted;
      }
    }
    if (!matched && additional !== undefined) next = (yield convert(additional, b, x));
    out = set(out, m, key, next);
  }
  return out;
}

/** A literal (`const`, an enum member) from a value of another type that converts to exactly it. */
function convertLiteral(literal, value) {
  if (same(literal, value)) return NO;
  let c = NO;
  if (typeof literal === "string") c = tryString(value);
  else if (typeof literal === "number") c = tryNumber(value);
  else if (typeof literal === "boolean") c = tryBoolean(value);
  return c !== NO && same(c, literal) ? c : NO;
}

// TypeBox's Try* conversions, on values of the view (NaN, ±Infinity and `Held` convert to nothing but where said).

function tryString(value) {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
      return Number.isFinite(value) ? String(value) : NO;
    case "boolean":
    case "bigint":
      return String(value);
    case "undefined":
      return "";
    default:
      return value === null ? "null" : NO;
  }
}

function tryNumber(value) {
  switch (typeof value) {
    case "string": {
      const x = Number(value);
      if (Number.isFinite(x)) return x;
      if (lower(value, "false")) return 0;
      if (lower(value, "true")) return 1;
      const digits = bigIntOfText(value);
      return digits === undefined ? NO : safeNumber(BigInt(digits));
    }
    case "number":
      return Number.isFinite(value) ? value : NO;
    case "boolean":
      return value ? 1 : 0;
    case "bigint":
      return safeNumber(value);
    case "undefined":
      return 0;
    default:
      return value === null ? 0 : NO;
  }
}

const safeNumber = (n) => (n <= 9007199254740991n && n >= -9007199254740991n ? Number(n) : NO);

function tryBoolean(value) {
  switch (typeof value) {
    case "string":
      return value === "0" || lower(value, "false") ? false : value === "1" || lower(value, "true") ? true : NO;
    case "number":
      return value === 0 ? false : value === 1 ? true : NO;
    case "bigint":
      return value === 0n ? false : value === 1n ? true : NO;
    case "boolean":
      return value;
    case "undefined":
      return false;
    default:
      return value === null ? false : NO;
  }
}

function tryNull(value) {
  switch (typeof value) {
    case "string":
      return value === "" || value === "0" || lower(value, "null") || lower(value, "undefined");
    case "number":
      return value === 0;
    case "bigint":
      return value === 0n;
    case "boolean":
      return !value;
    default:
      return value === undefined || value === null;
  }
}

function tryBigInt(value) {
  switch (typeof value) {
    case "bigint":
      return value;
    case "boolean":
      return value ? 1n : 0n;
    case "number":
      return Number.isFinite(value) ? BigInt(Math.trunc(value)) : NO;
    case "string": {
      const digits = bigIntOfText(value);
      return digits !== undefined ? BigInt(digits) : lower(value, "false") ? 0n : lower(value, "true") ? 1n : NO;
    }
    case "undefined":
      return 0n;
    default:
      return value === null ? 0n : NO;
  }
}

/** pi-schema's `bigIntOfString`: `-?(0|[1-9]\d*)` optionally followed by `n` or by a fraction (truncated). */
function bigIntOfText(s) {
  let body = s;
  if (s.endsWith("n")) body = s.slice(0, -1);
  else {
    const dot = s.indexOf(".");
    if (dot >= 0) body = /^\d+$/.test(s.slice(dot + 1)) ? s.slice(0, dot) : "";
  }
  return /^-?(0|[1-9]\d*)$/.test(body) ? (body === "-0" ? "0" : body) : undefined;
}

// ---- the shortcut (plain.rs): a schema of `type`, `properties`, `required`, `items`, a boolean
// `additionalProperties` and annotations, and JSON data that already has every type it declares.

function plain(o) {
  const node = { t: undefined, p: undefined, r: undefined, closed: false, items: undefined };
  let structural = false;
  for (const key of keys(o)) {
    const v = o[key];
    switch (key) {
      case "type":
        if (typeof v !== "string") return undefined;
        node.t = v;
        break;
      case "properties":
        if (!isObject(v)) return undefined;
        node.p = v;
        break;
      case "required":
        if (!isArray(v)) return undefined;
        node.r = v;
        break;
      case "additionalProperties":
        if (typeof v !== "boolean") return undefined;
        node.closed = !v;
        break;
      case "items":
        if (typeof v !== "boolean" && !isObject(v)) return undefined;
        node.items = v;
        break;
      default:
        if (ANNOTATIONS.includes(key)) continue;
        return undefined;
    }
    structural ||= key !== "type";
  }
  // Without a type, structure keywords still convert (e.g. `properties` alone means an object).
  return node.t === undefined && structural ? undefined : node;
}

function accepts(schema, value, d) {
  if (!isObject(schema)) return schema === true;
  if (d >= MAX_DEPTH) return false;
  const node = plain(schema);
  if (node === undefined) return false;
  const t = node.t;
  if (t === undefined) return true;
  if (!hasType(t, value)) return false;
  if (t === "object" && isMap(value)) {
    if (node.r !== undefined && !node.r.every((r) => typeof r === "string" && hasOwn(value, r))) return false;
    for (const key of keys(value)) {
      if (node.p !== undefined && hasOwn(node.p, key) ? !accepts(node.p[key], value[key], d + 1) : node.closed) return false;
    }
  } else if (t === "array" && isArray(value) && node.items !== undefined) {
    for (const x of value) if (!accepts(node.items, x, d + 1)) return false;
  }
  return true;
}

// ---- schema problems (problems.rs): what pi-schema's `compile` throws, the first in its order

function problemOf(schema) {
  const finder = resolverOf(schema);
  const seen = new Set();
  let d = 0;
  const pattern = (p) => {
    const m = regexError(p);
    return m === undefined ? undefined : new Pattern(m);
  };
  /** The subschemas of `o` in the order pi-schema compiles them, a pattern's check (a function) in its place. */
  const parts = (o) => {
    const list = [];
    const p = kw(o, "pattern");
    if (typeof p === "string") list.push(() => pattern(p));
    list.push(...entries(kw(o, "properties")).map((e) => e[1]));
    for (const [key, s] of entries(kw(o, "patternProperties"))) list.push(() => pattern(key), s);
    const additional = kw(o, "additionalProperties");
    if (additional !== undefined && additional !== true) list.push(additional);
    if (hasOwn(o, "propertyNames")) list.push(o.propertyNames);
    list.push(...entries(kw(o, "dependentSchemas")).map((e) => e[1]));
    list.push(...entries(kw(o, "dependencies")).map((e) => e[1]).filter((x) => !isArray(x)));
    const [prefix, rest] = itemSchemas(o);
    list.push(...prefix);
    if (rest !== undefined && rest !== true) list.push(rest);
    if (hasOwn(o, "contains")) list.push(o.contains);
    const allOf = kw(o, "allOf");
    if (isArray(allOf)) list.push(...allOf);
    for (const key of ["anyOf", "oneOf"]) {
      const branches = kw(o, key);
      if (isArray(branches) && !constUnion(branches)) list.push(...branches);
    }
    if (hasOwn(o, "not")) list.push(o.not);
    if (hasOwn(o, "if")) {
      const then = kw(o, "then");
      const otherwise = kw(o, "else");
      if (then !== undefined || otherwise !== undefined) list.push(...[then, otherwise].filter((s) => s !== undefined), o.if);
    }
    return list;
  };
  function* visit(node, base) {
    if (!isObject(node)) return typeof node === "boolean" ? undefined : NOT_A_SCHEMA + JSON.stringify(node);
    if (seen.has(node) || bareType(node)) return undefined;
    seen.add(node);
    if (d >= MAX_DEPTH) return TOO_DEEP;
    d++;
    const b = finder.baseFor(node, base);
    let found;
    for (const part of parts(node)) {
      found = typeof part === "function" ? part() : yield visit(part, b);
      if (found !== undefined) break;
    }
    for (const key of ["$ref", "$dynamicRef"]) {
      const reference = kw(node, key);
      if (found === undefined && typeof reference === "string") {
        const target = finder.resolve(reference, b);
        if (target !== undefined) found = yield visit(target[0], target[1]);
      }
    }
    d--;
    return found;
  }
  return run(visit(schema, 0));
}

/** A schema of only `type` (not a list) and annotations: compiled without a look at anything else. */
const bareType = (o) => keys(o).every((k) => k === "type" || NEUTRAL.includes(k)) && !isArray(kw(o, "type"));

/** A union whose branches are all `{const: primitive}`: compiled as an enum. */
const constUnion = (branches) =>
  branches.every((s) => isObject(s) && hasOwn(s, "const") && !isObject(s.const) && !isArray(s.const) &&
    keys(s).every((k) => k === "const" || NEUTRAL.includes(k)));

// ---- `$ref` resolution (resolve.rs)

/** The keywords whose value is one subschema, a map of them, or a list of them. */
const SCHEMA_KEYWORDS = ["additionalProperties", "propertyNames", "contains", "not", "if", "then", "else",
  "unevaluatedProperties", "unevaluatedItems", "additionalItems", "contentSchema", "items"];
const MAP_KEYWORDS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
const ARRAY_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/** The identifiers of `root`, indexed when first needed (a schema without `$id` and `$ref` never is); bases are
 *  interned URIs, identified by index (0: the root's). `baseFor(node, base)`: the base of `node` whose parent has
 *  `base`; `resolve(reference, base)`: what `reference` names, `[value, base]`, or `undefined`. */
function resolverOf(root) {
  let indexed = false;
  const bases = [];
  const ids = new Map();
  const baseOf = new Map();
  const resources = new Map();
  const anchors = new Map();
  const intern = (uri) => {
    let id = ids.get(uri);
    if (id === undefined) ids.set(uri, (id = bases.push(uri) - 1));
    return id;
  };
  const uriOf = (id) => bases[id] ?? DEFAULT_BASE;
  const ensureIndexed = () => {
    if (indexed) return;
    indexed = true;
    resources.set(DEFAULT_BASE, root);
    // Depth first, subschemas in keyword order; no recursion.
    const stack = [[root, intern(DEFAULT_BASE)]];
    while (stack.length > 0) {
      const [node, parent] = stack.pop();
      if (!isObject(node) || baseOf.has(node)) continue;
      let b = parent;
      const id = kw(node, "$id");
      if (typeof id === "string") {
        const uri = resolveUri(id, uriOf(parent));
        const doc = documentOf(uri);
        b = intern(doc);
        // As pi-schema: even a fragment-only `$id` ("#foo") registers its node as the document's resource.
        resources.set(doc, node);
        if (uri.length > doc.length + 1) anchors.set(uri, node);
      }
      baseOf.set(node, b);
      const doc = uriOf(b);
      for (const key of ["$anchor", "$dynamicAnchor"]) {
        const anchor = kw(node, key);
        if (typeof anchor === "string") anchors.set(`${doc}#${anchor}`, node);
      }
      const children = [];
      for (const key of SCHEMA_KEYWORDS) if (hasOwn(node, key)) children.push(node[key]);
      for (const key of MAP_KEYWORDS) for (const [, child] of entries(kw(node, key))) children.push(child);
      for (const key of ARRAY_KEYWORDS) {
        const list = kw(node, key);
        if (isArray(list)) children.push(...list);
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], b]);
    }
  };
  return {
    baseFor(node, base) {
      const id = isObject(node) ? kw(node, "$id") : undefined;
      if (!indexed) {
        if (typeof id !== "string") return base;
        ensureIndexed();
      }
      const known = baseOf.get(node);
      if (known !== undefined) return known;
      return typeof id === "string" ? intern(documentOf(resolveUri(id, uriOf(base)))) : base;
    },
    resolve(reference, base) {
      ensureIndexed();
      const uri = resolveUri(reference, uriOf(base));
      const doc = documentOf(uri);
      let fragment = uri.slice(doc.length);
      if (fragment.startsWith("#")) fragment = fragment.slice(1);
      try {
        fragment = decodeURIComponent(fragment);
      } catch {
        return undefined;
      }
      const found = resources.get(doc);
      if (found === undefined) return undefined;
      const docId = intern(doc);
      if (fragment === "") return [found, docId];
      if (fragment.startsWith("/")) {
        let node = found;
        let b = docId;
        for (const raw of fragment.split("/").slice(1)) {
          const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
          if (isArray(node)) node = /^(0|[1-9]\d*)$/.test(key) ? node[Number(key)] : undefined;
          else node = isObject(node) ? kw(node, key) : undefined;
          if (node === undefined) return undefined;
          b = baseOf.get(node) ?? b;
        }
        return [node, b];
      }
      const target = anchors.get(`${doc}#${fragment}`);
      return target === undefined ? undefined : [target, baseOf.get(target) ?? docId];
    },
  };
}

const documentOf = (uri) => {
  const hash = uri.indexOf("#");
  return hash < 0 ? uri : uri.slice(0, hash);
};

const fragmentOf = (uri) => {
  const hash = uri.indexOf("#");
  return hash < 0 ? undefined : uri.slice(hash + 1);
};

function schemeLength(s) {
  const colon = s.indexOf(":");
  return colon >= 0 && /^[A-Za-z][A-Za-z0-9+.-]*$/.test(s.slice(0, colon)) ? colon : undefined;
}

/** `scheme:[//authority]path[?query]` of an absolute URI: `[scheme, authority, path, query]`. */
function splitUri(uri) {
  const colon = schemeLength(uri);
  if (colon === undefined) return undefined;
  let rest = documentOf(uri.slice(colon + 1));
  let query;
  const q = rest.indexOf("?");
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith("//")) return [uri.slice(0, colon), undefined, rest, query];
  const after = rest.slice(2);
  const end = after.indexOf("/") < 0 ? after.length : after.indexOf("/");
  return [uri.slice(0, colon), after.slice(0, end), after.slice(end), query];
}

function joinUri(scheme, authority, path, query, fragment) {
  scheme = scheme.toLowerCase();
  let out = scheme + ":";
  if (authority !== undefined) out += "//" + authority;
  const p = authority !== undefined || path.startsWith("/") ? removeDotSegments(path) : path;
  if (p === "" && authority !== undefined && ["http", "https", "ws", "wss", "ftp", "file"].includes(scheme)) out += "/";
  out += p;
  if (query !== undefined) out += "?" + query;
  if (fragment !== undefined) out += "#" + fragment;
  return out;
}

function removeDotSegments(path) {
  const out = [];
  const segments = path.split("/");
  const last = segments.length - 1;
  segments.forEach((seg, i) => {
    if (seg === "." || seg === "..") {
      if (seg === ".." && out.length > 1) out.pop();
      if (i === last) out.push("");
    } else out.push(seg);
  });
  const joined = out.join("/");
  return path.startsWith("/") && !joined.startsWith("/") ? "/" + joined : joined;
}

/** `new URL(reference, base).href` for the URIs schemas use; what a URL parser would reject stays as it is. */
function resolveUri(reference, base) {
  if (schemeLength(reference) !== undefined) {
    const p = splitUri(reference);
    return p === undefined ? reference : joinUri(p[0], p[1], p[2], p[3], fragmentOf(reference));
  }
  const b = splitUri(base);
  if (b === undefined) return reference.startsWith("#") ? documentOf(base) + reference : reference;
  const [scheme, authority, path, query] = b;
  const fragment = fragmentOf(reference);
  const body = documentOf(reference);
  if (authority === undefined && !path.startsWith("/")) {
    // An opaque base (`urn:…`) takes only fragment references.
    return body === "" ? joinUri(scheme, undefined, path, query, fragment) : reference;
  }
  const q = body.indexOf("?");
  const refPath = q < 0 ? body : body.slice(0, q);
  const refQuery = q < 0 ? undefined : body.slice(q + 1);
  if (refPath.startsWith("//")) {
    const after = refPath.slice(2);
    const end = after.indexOf("/") < 0 ? after.length : after.indexOf("/");
    return joinUri(scheme, after.slice(0, end), after.slice(end), refQuery, fragment);
  }
  if (refPath === "") return joinUri(scheme, authority, path, refQuery !== undefined ? refQuery : query, fragment);
  if (refPath.startsWith("/")) return joinUri(scheme, authority, refPath, refQuery, fragment);
  const slash = path.lastIndexOf("/");
  return joinUri(scheme, authority, (slash < 0 ? "/" : path.slice(0, slash + 1)) + refPath, refQuery, fragment);
}

// ---- formats (format.rs, ip.rs, uri.rs)

/** Whether `s` has format `name`; `undefined` for a format that is not checked. */
function format(name, s) {
  switch (name) {
    case "date":
      return isDate(s);
    case "date-time": {
      const parts = s.split(/[Tt]/);
      return parts.length === 2 && isDate(parts[0]) && isTime(parts[1]);
    }
    case "time":
      return isTime(s);
    case "duration":
      return isDuration(s);
    case "email":
      return isEmail(s);
    case "hostname":
      return isHostname(s);
    case "ipv4":
      return isIpv4(s);
    case "ipv6":
      return isIpv6(s);
    case "uri":
      return isUri(s);
    case "uri-reference":
      return isUri(s) || isRelativeRef(s);
    case "url":
      return urlCanParse(s);
    case "uuid":
      return /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s);
    case "regex":
      return regexUnicode(s);
    case "json-pointer":
      return /^(\/([^~/]|~[01])*)*$/.test(s);
  }
  return undefined;
}

function isDate(s) {
  const m = /^(\d{4})-(\d\d)-(\d\d)$/.exec(s);
  if (m === null) return false;
  const [year, month, day] = [+m[1], +m[2], +m[3]];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : month >= 1 && month <= 12 ? 31 : 0;
  return day >= 1 && day <= days;
}

function isTime(s) {
  const m = /^(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))$/.exec(s);
  if (m === null) return false;
  const [hour, minute, second] = [+m[1], +m[2], +m[3]];
  const sign = m[4] === "-" ? -1 : m[4] === "+" ? 1 : 0;
  const [tzHour, tzMinute] = sign === 0 ? [0, 0] : [+m[5], +m[6]];
  if (hour > 23 || minute > 59 || second > 60 || tzHour > 23 || tzMinute > 59) return false;
  if (second < 60) return true;
  const utc = hour * 60 + minute - sign * (tzHour * 60 + tzMinute);
  return ((utc % 1440) + 1440) % 1440 === 1439;
}

/** ISO 8601 durations: `P[nY[nM[nD]]|nM[nD]|nD][T…]`, `PT…`, `PnW`; units contiguous and in order. */
function isDuration(s) {
  if (!s.startsWith("P")) return false;
  const rest = s.slice(1);
  const t = rest.indexOf("T");
  const date = t < 0 ? rest : rest.slice(0, t);
  const time = t < 0 ? undefined : rest.slice(t + 1);
  if (time === undefined && /^\d+W$/.test(date)) return true;
  const dateOk = date === "" || unitsInOrder(date, "YMD");
  const timeOk = time === undefined || (time !== "" && unitsInOrder(time, "HMS"));
  return dateOk && timeOk && !(date === "" && time === undefined);
}

/** `n<U>` groups whose units are a contiguous run of `order` (`1Y2M`, `2M3D`; not `1Y3D`). */
const unitsInOrder = (s, order) => /^(\d+\D)+$/.test(s) && order.includes(s.replace(/\d+/g, ""));

const ldhLabel = (l) => /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(l);

function isEmail(s) {
  let domain;
  if (s.startsWith('"')) {
    let i = 1;
    for (;;) {
      if (i >= s.length) return false;
      const c = s[i];
      if (c === '"') break;
      if (c === "\\") {
        const e = s[i + 1];
        if (e === undefined || e < " " || e > "~") return false;
        i++;
      }
      i++;
    }
    if (s[i + 1] !== "@") return false;
    domain = s.slice(i + 2);
  } else {
    const at = s.indexOf("@");
    if (at < 0) return false;
    const local = s.slice(0, at);
    if (local === "" || !local.split(".").every((atom) => /^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+$/.test(atom))) return false;
    domain = s.slice(at + 1);
  }
  if (domain.startsWith("[") && domain.endsWith("]") && domain.length >= 2) {
    const literal = domain.slice(1, -1);
    return lower(literal.slice(0, 5), "ipv6:") ? /^[0-9a-fA-F:]+$/.test(literal.slice(5)) : isIpv4(literal);
  }
  return domain.split(".").every(ldhLabel);
}

function isHostname(s) {
  if (s === "" || s.length > 253 || s.endsWith(".")) return false;
  return s.split(".").every((l) => l.length > 0 && l.length <= 63 && (isPunyLabel(l) || /^(?!-)(?!..--)[a-zA-Z0-9-]*$/.test(l) && !l.endsWith("-")));
}

const PERMITTED = /^(?:\p{L}|\p{Nd}|\p{Mn}|\p{Mc}|[-+.,:/\u{b7}\u{375}\u{5f3}\u{5f4}\u{200c}\u{200d}\u{30fb}\u{df}\u{3c2}\u{6fd}\u{6fe}\u{f0b}\u{3007}])$/u;
const COMBINING_MARK = /^(?:\p{Mn}|\p{Mc}|\p{Me})/u;
const DISALLOWED = "\u0640\u07fa\u302e\u302f\u3031\u3032\u3033\u3034\u3035\u303b";

/** An `xn--` label whose punycode decodes to a U-label (pi-schema's contextual and bidi rules are not reproduced). */
function isPunyLabel(l) {
  const lowered = l.replace(/[A-Z\u212A]/g, (c) => (c === "\u212A" ? "k" : c.toLowerCase()));
  if (!lowered.startsWith("xn--")) return false;
  const body = lowered.slice(4);
  if (body.lastIndexOf("-") === 0) return false;
  const chars = punycodeDecode(body);
  if (chars === undefined) return false;
  const first = chars[0];
  const last = chars[chars.length - 1];
  return chars.some((c) => c > "\x7f") && first !== "-" && last !== "-" && !(chars[2] === "-" && chars[3] === "-") &&
    !(first !== undefined && COMBINING_MARK.test(first)) && chars.every((c) => !DISALLOWED.includes(c) && PERMITTED.test(c));
}

/** RFC 3492 decoding into code points as strings; `undefined` for malformed input or a step past 32 bits. */
function punycodeDecode(input) {
  const U32 = 0xffffffff;
  const dash = input.lastIndexOf("-");
  const basic = dash < 0 ? "" : input.slice(0, dash);
  const extended = dash < 0 ? input : input.slice(dash + 1);
  if (/[^\0-\x7f]/.test(basic)) return undefined;
  const output = [...basic];
  let n = 128;
  let i = 0;
  let bias = 72;
  let at = 0;
  while (at < extended.length) {
    const oldI = i;
    let w = 1;
    for (let k = 36; ; k += 36) {
      if (at >= extended.length) return undefined;
      const c = extended.charCodeAt(at++);
      const digit = c >= 48 && c <= 57 ? c - 22 : c >= 65 && c <= 90 ? c - 65 : c >= 97 && c <= 122 ? c - 97 : -1;
      if (digit < 0 || digit * w > U32) return undefined;
      i += digit * w;
      if (i > U32) return undefined;
      const t = Math.min(Math.max(k - bias, 1), 26);
      if (digit < t) break;
      w *= 36 - t;
      if (w > U32 || k + 36 > U32) return undefined;
    }
    const len = output.length + 1;
    bias = adapt(i - oldI, len, oldI === 0);
    n += Math.floor(i / len);
    if (n > U32) return undefined;
    i %= len;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
    output.splice(i, 0, String.fromCodePoint(n));
    i++;
  }
  return output;
}

function adapt(delta, points, first) {
  delta = first ? Math.floor(delta / 700) : Math.floor(delta / 2);
  delta += Math.floor(delta / points);
  let k = 0;
  while (delta > 455) {
    delta = Math.floor(delta / 35);
    k += 36;
  }
  return k + Math.floor((delta * 36) / (delta + 38));
}

const isIpv4 = (s) => /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s);

/** Eight groups, or fewer around one `::`, the last two possibly an IPv4 address. */
function isIpv6(s) {
  const count = (part, last) => {
    if (part === "") return 0;
    const groups = part.split(":");
    let n = 0;
    for (let i = 0; i < groups.length; i++) {
      const g = groups[i];
      if (last && i === groups.length - 1 && g.includes(".")) {
        if (!isIpv4(g)) return undefined;
        n += 2;
      } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) n++;
      else return undefined;
    }
    return n;
  };
  const gap = s.indexOf("::");
  if (gap < 0) return count(s, true) === 8;
  const tail = s.slice(gap + 2);
  if (tail.includes("::")) return false;
  const h = count(s.slice(0, gap), false);
  const t = count(tail, true);
  return h !== undefined && t !== undefined && h + t <= 7;
}

/** RFC 3986 characters, and `%XX` escapes: `^(?:…)*$` of unreserved and sub-delims characters and `extra`. */
const uriChars = (extra) => new RegExp(`^(?:[A-Za-z0-9._~!$&'()*+,;=${extra}-]|%[0-9A-Fa-f]{2})*$`);
const PCHARS = uriChars(":@");
const QUERY_CHARS = uriChars(":@/?");
const USER_CHARS = uriChars(":");
const HOST_CHARS = uriChars("");
const NO_COLON_CHARS = uriChars("@");

function isAuthority(a) {
  const at = a.lastIndexOf("@");
  const hostport = at < 0 ? a : a.slice(at + 1);
  if (at >= 0 && !USER_CHARS.test(a.slice(0, at))) return false;
  let host;
  let port;
  if (hostport.startsWith("[")) {
    const close = hostport.indexOf("]");
    if (close < 0) return false;
    const literal = hostport.slice(1, close);
    if (!isIpv6(literal) && !/^[vV][0-9A-Fa-f]+\.[A-Za-z0-9._~!$&'()*+,;=:-]+$/.test(literal)) return false;
    port = hostport.slice(close + 1);
  } else {
    const colon = hostport.indexOf(":");
    host = colon < 0 ? hostport : hostport.slice(0, colon);
    port = colon < 0 ? "" : hostport.slice(colon);
  }
  if (host !== undefined && !HOST_CHARS.test(host)) return false;
  return /^(:\d*)?$/.test(port);
}

/** A hier-part or relative part after its query and fragment (checked) are cut: `undefined` when those fail. */
function splitTail(s) {
  const hash = s.indexOf("#");
  if (hash >= 0 && !QUERY_CHARS.test(s.slice(hash + 1))) return undefined;
  const before = hash < 0 ? s : s.slice(0, hash);
  const q = before.indexOf("?");
  if (q >= 0 && !QUERY_CHARS.test(before.slice(q + 1))) return undefined;
  return q < 0 ? before : before.slice(0, q);
}

function isPart(part, first) {
  const segmentsOk = (path) => path.split("/").every((seg) => PCHARS.test(seg));
  if (part.startsWith("//")) {
    const rest = part.slice(2);
    const end = rest.indexOf("/") < 0 ? rest.length : rest.indexOf("/");
    return isAuthority(rest.slice(0, end)) && segmentsOk(rest.slice(end));
  }
  if (part.startsWith("/")) {
    const path = part.slice(1);
    return path === "" || (!path.startsWith("/") && segmentsOk(path));
  }
  if (part === "") return true;
  const slash = part.indexOf("/");
  const head = slash < 0 ? part : part.slice(0, slash);
  return head !== "" && first.test(head) && segmentsOk(slash < 0 ? "" : part.slice(slash + 1));
}

function isUri(s) {
  const colon = schemeLength(s);
  if (colon === undefined) return false;
  const part = splitTail(s.slice(colon + 1));
  return part !== undefined && isPart(part, PCHARS);
}

function isRelativeRef(s) {
  const part = splitTail(s);
  return part !== undefined && isPart(part, NO_COLON_CHARS);
}

