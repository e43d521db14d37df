// E-8.4.2: a WebAssembly trap (a `WebAssembly.RuntimeError`) leaves the instance in an unknown state,
// so the first one poisons it: that call and every later call into the core throw
// `agent-loop-wasm: the WebAssembly instance failed and can no longer be used (<original error>)`.
// The core is wrapped at call time (the web entry swaps in the real glue functions at init).
import rawCore from "./core.js";

let poisoned;
const wrappers = new Map();

function poisonedError() {
  return new Error(`agent-loop-wasm: the WebAssembly instance failed and can no longer be used (${poisoned})`);
}

function wrap(f) {
  let wrapper = wrappers.get(f);
  if (wrapper === undefined) {
    wrapper = function (...args) {
      if (poisoned !== undefined) throw poisonedError();
      try {
        return f.apply(this, args);
      } catch (error) {
        if (error instanceof WebAssembly.RuntimeError) {
          poisoned = error;
          throw poisonedError();
        }
        throw error;
      }
    };
    wrappers.set(f, wrapper);
  }
  return wrapper;
}

const core = new Proxy(rawCore, {
  get(target, key) {
    const value = target[key];
    return typeof value === "function" ? wrap(value) : value;
  },
});

export default core;
