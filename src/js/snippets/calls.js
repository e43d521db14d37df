// The checked calls: the hottest operations that may run caller code (property reads, callback calls), catching
// here instead of through wasm-bindgen's exception wrapper (a fresh closure and arguments object per call). JS twin
// of `checked` in src/js/host.rs, which serves `Host::get` and `Host::call_sync`. Holds the shared failure state
// (the flag word and the caught value); other snippets report a throw through `failed`. No loop logic.
//
// A throw sets a flag word in wasm memory (`CALL_FLAG.THREW`, `CALL_FAILED` in host.rs), which the binding checks
// after the call, and the thrown value waits for `takeCaught`.

/** Twin of `protocol::call_flag` (src/js/protocol.rs). */
export const CALL_FLAG = Object.freeze({ CLEAR: 0, THREW: 1 });

let flagMemory = null;
let flagView = null;
let flagIndex = 0;
let caught;

export function setFailureFlag(memory, address) {
  flagMemory = memory;
  flagView = new Int32Array(memory.buffer);
  flagIndex = address >>> 2;
}

/** Reports a throw to the binding: the flag word set, `e` kept for `takeCaught`. */
export function failed(e) {
  caught = e;
  if (flagView.buffer !== flagMemory.buffer) flagView = new Int32Array(flagMemory.buffer); // memory grew
  flagView[flagIndex] = CALL_FLAG.THREW;
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

export function apply4(f, self, a, b, c, d) {
  try {
    return Reflect.apply(f, self, [a, b, c, d]);
  } catch (e) {
    failed(e);
  }
}

export function apply(f, self, args) {
  return Reflect.apply(f, self, args);
}
