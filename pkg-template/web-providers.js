// The built-in providers (issue 43) for every entry under dist/web/ and dist/deno/: the four wire formats are plain JS
// of their own, ./builtin-providers.js, imported on the first request to a built-in provider (the default stream
// function) and never before, so a page that brings its own stream function never downloads them. Bundlers see the
// dynamic import and emit the providers as a chunk of their own.

let ready;
let loading;

/** The providers' module if it can be had without waiting: in ES modules, only once loaded (Node's can load now). */
export function providersNow() {
  return ready;
}

/** Loads the providers' module (once; a failed load, e.g. offline, is tried again by the next request). */
export function loadProviders() {
  if (ready !== undefined) return Promise.resolve(ready);
  if (loading === undefined) {
    loading = import("./builtin-providers.js").then((module) => (ready = module));
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}

let compaction;

/** Issue 45: the compaction module (./compaction.js), imported on a run's first compaction check and never before;
 *  the loop awaits the promise once, then holds the module. */
export function loadCompaction() {
  if (compaction === undefined) {
    compaction = import("./compaction.js");
    compaction.catch(() => {
      compaction = undefined;
    });
  }
  return compaction;
}
