// scripts/inline-catch.mjs (issue 43, item 3): the glue's imports that may throw catch in place. The rewrite of a
// glue of the known shape, its refusals, and the built package: no `handleError` left, and a throw inside an import
// still reaches the Rust side as the error it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { HANDLE_ERROR, inlineCatchText } from "../../scripts/inline-catch.mjs";
import { IS_REFERENCE } from "./impl.mjs";

const PKG_NODE = new URL("../../pkg/dist/node", import.meta.url).pathname;
const PKG_WEB = new URL("../../pkg/dist/web", import.meta.url).pathname;
const skip = IS_REFERENCE && "ours only: a build step of our package";

const glue = (imports) => `${HANDLE_ERROR}\nconst imports = {\n${imports}\n};\n`;
const wrapped = (params, body) => `        $1: function() { return handleError(function (${params}) {\n${body}\n        }, arguments); },`;

test("an import wrapped by handleError becomes its body inside try, with handleError's catch", { skip }, () => {
  const { text, count } = inlineCatchText(glue(wrapped("arg0, arg1", "            const ret = Reflect.get(arg0, arg1);\n            return ret;")));
  assert.equal(count, 1);
  assert.equal(
    text,
    `function storeError(e) {\n    const idx = addToExternrefTable0(e);\n    wasm.__wbindgen_exn_store(idx);\n}\nconst imports = {\n` +
      `        $1: function (arg0, arg1) { try {\n            const ret = Reflect.get(arg0, arg1);\n            return ret;\n        } catch (e) { storeError(e); } },\n};\n`,
  );
});

test("a glue of another shape is refused, never half rewritten", { skip }, () => {
  const body = "            return 1;";
  assert.throws(() => inlineCatchText(wrapped("", body)), /no handleError of the known shape/);
  assert.throws(() => inlineCatchText(glue("")), /no import wrapped by handleError/);
  assert.throws(() => inlineCatchText(glue(wrapped("a", "            return this.x;"))), /reads this\/arguments/);
  const other = `${wrapped("a", body)}\n        $2: function(a) { return handleError(f, [a]); },`;
  assert.throws(() => inlineCatchText(glue(other)), /another shape is left/);
});

test("the built glues hold no handleError, and the imports that may throw still pass a throw on", { skip }, async () => {
  for (const file of [`${PKG_NODE}/agent_loop_wasm.js`, `${PKG_WEB}/agent_loop_wasm.js`]) {
    const text = readFileSync(file, "utf8");
    assert.ok(!text.includes("handleError"), file);
    assert.ok(text.includes("catch (e) { storeError(e); }"), file);
  }
  // A getter that throws is read by the Rust side through `Reflect.get`, an import that may throw: the run gets it.
  const { validateToolArguments } = await import(`${PKG_NODE}/index.mjs`);
  const tool = { name: "t", parameters: { type: "object" } };
  const call = { type: "toolCall", id: "c", name: "t", get arguments() { throw new Error("getter says no"); } };
  assert.throws(() => validateToolArguments(tool, call), /getter says no/);
});
