// The built-in providers' wasm instance (issue 43) for every entry under dist/web/ and dist/deno/: the four wire
// formats live in a module of their own, `agent_loop_providers_bg.wasm`, loaded on the first request to a built-in
// provider (the default stream function) and never before, so a page that brings its own stream function never
// downloads it. Where it comes from: what `init({ providers })` or the entry set (workerd: its compiled module;
// Deno: its source phase or base64), else the file beside this module. Bundlers see both literals below (the
// dynamic import and the `new URL(…, import.meta.url)`) and emit the glue as a chunk and the wasm as an asset.
import { providersSource } from "./core.js";
import { guard } from "./trap.js";

let ready;
let loading;

/** The providers' instance once loaded, else undefined; never loads. */
export function loadedProviders() {
  return ready;
}

/** The providers' instance if it can be had without waiting: in ES modules, only once loaded (Node's can load now). */
export const providersNow = loadedProviders;

/** Loads the providers' instance (once; a failed load, e.g. offline, is tried again by the next request). */
export function loadProviders() {
  if (ready !== undefined) return Promise.resolve(ready);
  if (loading === undefined) {
    loading = (async () => {
      const glue = await import("./agent_loop_providers.js");
      const find = providersSource();
      const input = find === undefined ? new URL("agent_loop_providers_bg.wasm", import.meta.url) : await find();
      if (input instanceof WebAssembly.Module) glue.initSync({ module: input });
      else await glue.default({ module_or_path: input });
      ready = guard(glue);
      return ready;
    })();
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}
