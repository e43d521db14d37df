// wasm-bindgen names each function its glue gives the wasm `__wbg_<name>_<16 hex digits>` (or `__wbindgen_…`): about
// 120 names per module, written twice (the wasm's import section, the keys of the glue's imports object), whose hashes
// gzip cannot compress (issue 43: ~2 KiB of each module's wasm, as much of its glue). `shortenImports` renames them
// `$0`, `$1`, … in both, in the import section's order. Only the imports of the glue's own module are renamed: a
// snippet's imports are its exported function names, which its file defines.
import { readFileSync, writeFileSync } from "node:fs";

/** Reads an unsigned LEB128 at `at`: [value, next offset]. */
function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return [value, at];
  }
}

const encode = (n) => {
  const out = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
};
const name = (text) => [...encode(Buffer.byteLength(text)), ...Buffer.from(text)];

/** The wasm with the fields of `module`'s imports renamed by `rename(field, index)`; the renames made. */
function renameImports(wasm, module, rename) {
  const parts = [wasm.subarray(0, 8)];
  const renamed = new Map();
  let at = 8;
  while (at < wasm.length) {
    const start = at;
    const id = wasm[at++];
    let size;
    [size, at] = leb(wasm, at);
    const end = at + size;
    if (id !== 2) {
      parts.push(wasm.subarray(start, end));
      at = end;
      continue;
    }
    let count;
    [count, at] = leb(wasm, at);
    const body = [...encode(count)];
    for (let i = 0; i < count; i++) {
      let len;
      [len, at] = leb(wasm, at);
      const mod = wasm.subarray(at, at + len).toString();
      at += len;
      [len, at] = leb(wasm, at);
      const field = wasm.subarray(at, at + len).toString();
      at += len;
      // The import's description, copied as it is: its length by kind (function, table, memory, global, tag).
      const desc = at;
      const kind = wasm[at++];
      if (kind === 0) [, at] = leb(wasm, at);
      else if (kind === 1 || kind === 2) {
        if (kind === 1) at++; // the table's element type
        const flags = wasm[at++];
        [, at] = leb(wasm, at);
        if (flags & 1) [, at] = leb(wasm, at);
      } else if (kind === 3) at += 2;
      else if (kind === 4) [, at] = leb(wasm, at + 1);
      else throw new Error(`short-imports: import kind ${kind} of ${mod}.${field}`);
      let next = field;
      if (mod === module) {
        next = rename(field, renamed.size);
        renamed.set(field, next);
      }
      body.push(...name(mod), ...name(next), ...wasm.subarray(desc, at));
    }
    if (at !== end) throw new Error("short-imports: the import section was not read to its end");
    parts.push(Buffer.from([2, ...encode(body.length), ...body]));
  }
  return { wasm: Buffer.concat(parts), renamed };
}

/**
 * Renames the glue's imports in `wasmFiles` (the same module, one per glue) and in `glueFiles`, in place. Throws when
 * the result would not hold together: a new name already in a glue, an old name a glue does not hold, or one left.
 */
export function shortenImports(wasmFiles, glueFiles, glueModule) {
  let renamed;
  for (const file of wasmFiles) {
    const result = renameImports(readFileSync(file), glueModule, (_, i) => `$${i}`);
    if (!WebAssembly.validate(result.wasm)) throw new Error(`short-imports: ${file} is invalid once renamed`);
    if (renamed !== undefined && [...renamed].join() !== [...result.renamed].join()) {
      throw new Error(`short-imports: ${file} imports other names than ${wasmFiles[0]}`);
    }
    renamed = result.renamed;
    writeFileSync(file, result.wasm);
  }
  for (const file of glueFiles) {
    let text = readFileSync(file, "utf8");
    for (const [from, to] of renamed) {
      if (new RegExp(`(?<![\\w$])\\${to}(?![\\w$])`).test(text)) throw new Error(`short-imports: ${file} already holds ${to}`);
      const word = new RegExp(`(?<![\\w$])${from}(?![\\w$])`, "g");
      const next = text.replace(word, to);
      if (next === text) throw new Error(`short-imports: ${file} does not hold the import ${from}`);
      text = next;
    }
    writeFileSync(file, text);
  }
  return renamed.size;
}
