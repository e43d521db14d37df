// E-8.4.2: a WebAssembly trap (a `WebAssembly.RuntimeError`) leaves the instance in an unknown state,
// so the first one poisons it: that call and every later call into the core throw
// `agent-loop-wasm: the WebAssembly instance failed and can no longer be used (<original error>)`.
// The core is wrapped at call time (the web entry swaps in the real glue functions at init).
//
// Background work (runs, provider streams) is polled by the core's own executor from a microtask
// whose body is `pollTasks` below, so a trap there is caught here too, never an uncaught exception.
// Every live run registers with `track`; when the instance fails, each is ended from JS (an error
// event and `agent_end`, the Agent made idle), since the core can no longer do it.
import rawCore from "./core.js";
import { codedError } from "./errors.js";

let poisoned;
/** Runs the core drives, each `{ end(message) }`, finished from JS if the instance fails. */
const live = new Set();

function poisonedError() {
  return codedError("INSTANCE_FAILED", `agent-loop-wasm: the WebAssembly instance failed and can no longer be used (${poisoned})`);
}

/**
 * The instance failed (a trap, or an exception that unwound through wasm frames): poison it and end
 * every live run, after the current call stack (a run's end awaits listeners).
 */
function fail(error) {
  if (poisoned === undefined) poisoned = error;
  if (live.size === 0) return;
  const runs = [...live];
  live.clear();
  const message = poisonedError().message;
  queueMicrotask(() => {
    for (const run of runs) {
      try {
        Promise.resolve(run.end(message)).catch(() => {});
      } catch {
        // a run's own end must not stop the others
      }
    }
  });
}

/**
 * `raw` (a wasm instance's glue functions) wrapped so that a trap in any call poisons the package. Each instance (the
 * loop's, and the providers' once loaded: issue 43) gets its own executor poller; the poison and the live runs are
 * shared: after a trap in either, every call into both is refused.
 */
export function guard(raw) {
  const wrappers = new Map();
  let pollerInstalled = false;

  /** The body of the executor's microtask (see src/js/executor.rs). */
  function pollTasks() {
    if (poisoned !== undefined) return;
    try {
      raw.pollTasks();
    } catch (error) {
      fail(error);
    }
  }

  function installPoller() {
    try {
      raw.setPoller(pollTasks, fail);
      pollerInstalled = true;
    } catch {
      // the web entry before init: installed by the first call after it
    }
  }

  function wrap(f) {
    let wrapper = wrappers.get(f);
    if (wrapper === undefined) {
      wrapper = function (...args) {
        if (poisoned !== undefined) throw poisonedError();
        if (!pollerInstalled) installPoller();
        try {
          return f.apply(this, args);
        } catch (error) {
          if (error instanceof WebAssembly.RuntimeError) {
            fail(error);
            throw poisonedError();
          }
          throw error;
        }
      };
      wrappers.set(f, wrapper);
    }
    return wrapper;
  }

  return new Proxy(raw, {
    get(target, key) {
      const value = target[key];
      return typeof value === "function" ? wrap(value) : value;
    },
  });
}

/**
 * Registers a live run; `end(message)` finishes it from JS (it may return a promise) if the instance
 * fails first. Returns the function that unregisters it, called when the run settles normally.
 */
export function track(end) {
  const run = { end };
  live.add(run);
  return () => {
    live.delete(run);
  };
}

/**
 * Settles as `promise` does, unless the instance fails first: then with what `onTrap(text)` gives (a throw of its own
 * resolves with undefined), so a call that must always answer still answers after a trap.
 */
export function unlessTrapped(promise, onTrap) {
  return new Promise((resolve, reject) => {
    const untrack = track(async (text) => {
      try {
        resolve(await onTrap(text));
      } catch {
        resolve(undefined);
      }
    });
    promise.then(
      (value) => {
        untrack();
        resolve(value);
      },
      (error) => {
        untrack();
        reject(error);
      },
    );
  });
}

const core = guard(rawCore);

export default core;
