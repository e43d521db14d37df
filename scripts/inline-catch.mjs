// wasm-bindgen's glue wraps every import that may throw (`#[wasm_bindgen(catch)]`: Reflect.get/set, calls of caller
// functions, …) as `function() { return handleError(function (a, b) { … }, arguments); }`: each call allocates a
// closure, reads `arguments` and goes through `f.apply`. Those imports are most of the crossings of a run (an Agent
// turn makes ~60), so `inlineCatch` rewrites each one as the same body inside its own `try` (issue 43, item 3:
// -11 % per Agent turn, -9 % per tool run in bench/ab-builds.mjs). The catch does what `handleError`'s did: the
// thrown value goes into the externref table and its index to `__wbindgen_exn_store`, and the import returns
// undefined. Throws when the glue is not the shape this was written for, so a wasm-bindgen update cannot slip past.
import { readFileSync, writeFileSync } from "node:fs";

/** wasm-bindgen's `handleError`, as this rewrite knows it (exported for its test). */
export const HANDLE_ERROR = `function handleError(f, args) {
    try {
        return f.apply(this, args);
    } catch (e) {
        const idx = addToExternrefTable0(e);
        wasm.__wbindgen_exn_store(idx);
    }
}`;

const STORE_ERROR = `function storeError(e) {
    const idx = addToExternrefTable0(e);
    wasm.__wbindgen_exn_store(idx);
}`;

/** `function() { return handleError(function (params) {body}, arguments); }`, the body ending at its indented `}`. */
const WRAPPED = /function\(\) \{ return handleError\(function \(([\w, ]*)\) \{(.*?)\n {8}\}, arguments\); \}/gs;

/** Rewrites the glue `text`; returns it with the number of imports rewritten. */
export function inlineCatchText(text, file = "glue") {
  if (!text.includes(HANDLE_ERROR)) throw new Error(`inline-catch: ${file} has no handleError of the known shape`);
  let count = 0;
  const next = text.replace(WRAPPED, (_, params, body) => {
    if (/\bthis\b|\barguments\b/.test(body)) throw new Error(`inline-catch: ${file}: an import body reads this/arguments`);
    count++;
    return `function (${params}) { try {${body}\n        } catch (e) { storeError(e); } }`;
  });
  if (count === 0) throw new Error(`inline-catch: ${file}: no import wrapped by handleError`);
  const out = next.replace(HANDLE_ERROR, STORE_ERROR);
  if (out.includes("handleError")) throw new Error(`inline-catch: ${file}: a handleError call of another shape is left`);
  return { text: out, count };
}

/** Rewrites each glue file in place; returns the number of imports rewritten in the first. */
export function inlineCatch(glueFiles) {
  let first;
  for (const file of glueFiles) {
    const { text, count } = inlineCatchText(readFileSync(file, "utf8"), file);
    first ??= count;
    if (count !== first) throw new Error(`inline-catch: ${file} has ${count} imports that may throw, ${glueFiles[0]} ${first}`);
    writeFileSync(file, text);
  }
  return first;
}
