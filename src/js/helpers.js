// Tiny helpers the Rust binding calls: each does one JS operation that js-sys cannot do
// without eval or without letting a caller's exception unwind through wasm. No loop logic here.

export const DONE = Symbol("agent-loop-wasm.done");

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

export function apply(f, self, args) {
  return Reflect.apply(f, self, args);
}

/** The thenable a value is, or undefined for plain values. */
export function thenable(v) {
  if (v !== null && (typeof v === "object" || typeof v === "function") && typeof v.then === "function") {
    return Promise.resolve(v);
  }
  return undefined;
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

export function timer(ms) {
  let id;
  const promise = new Promise((resolve) => {
    id = setTimeout(resolve, ms);
  });
  return { promise, cancel: () => clearTimeout(id) };
}

export function onAbort(signal) {
  let cancel = () => {};
  const promise = new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const listener = () => resolve();
    signal.addEventListener("abort", listener, { once: true });
    cancel = () => signal.removeEventListener("abort", listener);
  });
  return { promise, cancel: () => cancel() };
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

/** `it.next()` as a promise of the next value, or DONE. */
export function next(it) {
  return Promise.resolve(it.next()).then(unwrapStep);
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

/** `obj[key] += delta`: strings grow on the JS side, never rebuilt from Rust (P-6.1.7). */
export function append(obj, key, delta) {
  obj[key] += delta;
}

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
