// Waiting from Rust: promises, timers, abort signals and async iterators, each settling a numbered slot through one
// settle function installed by src/js/host.rs (`Awaited`, `Cancellable`, behind `Host::settle`, `call`, `sleep`,
// `wait_abort`, `iterator_next`). Rust keeps the slots; this side keeps no per-wait closure of wasm. A trap while
// settling goes to the executor's failure handler (snippets/executor.js).

import { instanceFailed } from "./executor.js";

/** The outcome code handed to the settle function. Twin of `protocol::settled` (src/js/protocol.rs). */
export const SETTLED = Object.freeze({ REJECTED: 0, FULFILLED: 1, DONE: 2 });

const DONE = Symbol("agent-loop-wasm.done");

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

/** `Host::signal_aborted` in one crossing: `signal.aborted` as a boolean; false for no signal, or when it cannot be read. */
export function signalAborted(signal) {
  if (signal === undefined || signal === null) return false;
  try {
    return Boolean(Reflect.get(signal, "aborted"));
  } catch {
    return false;
  }
}

/**
 * Settles `slot` (`FULFILLED`) in a microtask once `signal` aborts, or right away if it has; answers true. Answers
 * false when the wait can never end (not an event target), and then keeps nothing. A throwing `aborted` getter counts
 * as an abort, as a rejected wait did before.
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
    queueMicrotask(() => settle(slot, SETTLED.FULFILLED, undefined));
    return true;
  }
  let watch = abortWatches.get(signal);
  if (watch === undefined) {
    const slots = new Set();
    const listener = () => {
      const fired = [...slots];
      slots.clear();
      queueMicrotask(() => {
        for (const s of fired) settle(s, SETTLED.FULFILLED, undefined);
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

// Awaiting from Rust: one function, installed once, receives every outcome as (slot, `SETTLED` code, value); Rust
// keeps the slots. Cheaper than two fresh wasm closures per awaited promise.
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
  promise.then((v) => settle(slot, SETTLED.FULFILLED, v), (e) => settle(slot, SETTLED.REJECTED, e));
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

/** `await it.next()` into `slot`: `FULFILLED` with the value, `DONE` when done. */
export function nextInto(it, slot) {
  Promise.resolve(it.next()).then(unwrapStep).then(
    (v) => (v === DONE ? settle(slot, SETTLED.DONE, undefined) : settle(slot, SETTLED.FULFILLED, v)),
    (e) => settle(slot, SETTLED.REJECTED, e),
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
