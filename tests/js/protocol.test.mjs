// The numbers and marker characters the binding and its JS snippets agree on without a compiler to check them: the
// return codes of src/js/protocol.rs against their twin objects in src/js/snippets/, and the private-use encodings
// defined in Rust (src/core/text/mod.rs, where the three encodings are documented side by side, and src/core/text/wtf.rs,
// src/core/validate/special.rs) against their JS copies.
// Reads the Rust sources as text and imports the snippets themselves (not the built package): no build needed.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const root = new URL("../../", import.meta.url);
const rust = (path) => readFileSync(new URL(path, root), "utf8");
const snippet = (name) => import(new URL(`src/js/snippets/${name}.js`, root).href);
const hex = (digits) => Number.parseInt(digits, 16);

/** `pub mod name { pub const KEY: type = value; … }` of src/js/protocol.rs, as `{ name: { KEY: value } }`. */
function rustModules(text) {
  const modules = {};
  for (const m of text.matchAll(/^pub mod (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const consts = {};
    for (const c of m[2].matchAll(/^\s*pub const (\w+): \w+ = (-?\d+(?:\.\d+)?);/gm)) consts[c[1]] = Number(c[2]);
    modules[m[1]] = consts;
  }
  return modules;
}

/** Each module of protocol.rs and the snippet holding its twin (named in capitals). */
const TWINS = {
  pump: "pump",
  settled: "waits",
  kind_code: "values",
  bad_message: "args",
  call_flag: "calls",
  checked: "validate",
};

test("every code of src/js/protocol.rs has the same name and value in its snippet, and no other", async () => {
  const modules = rustModules(rust("src/js/protocol.rs"));
  assert.deepEqual(Object.keys(modules).sort(), Object.keys(TWINS).sort(), "protocol.rs and TWINS list other modules");
  for (const [name, file] of Object.entries(TWINS)) {
    const twin = (await snippet(file))[name.toUpperCase()];
    assert.ok(twin, `snippets/${file}.js exports no ${name.toUpperCase()}`);
    assert.ok(Object.keys(modules[name]).length > 0, `protocol::${name} read no consts`);
    const where = `protocol::${name} (Rust) vs ${name.toUpperCase()} (snippets/${file}.js)`;
    assert.deepEqual({ ...twin }, modules[name], where);
  }
});

/** A Rust `char` literal (`'\u{10F7FE}'`) of `pub const NAME: char` in `text`, as a JS string. */
function rustChar(text, name) {
  const m = new RegExp(`pub const ${name}: char = '\\\\u\\{([0-9A-Fa-f]+)\\}';`).exec(text);
  assert.ok(m, `no char const ${name}`);
  return String.fromCodePoint(hex(m[1]));
}

test("the validator's view mark and kind letters (snippets/view.js) are core::text's and validate/special.rs's", async () => {
  const special = rust("src/core/validate/special.rs");
  const { VIEW_MARK, VIEW_KIND } = await snippet("view");
  assert.equal(VIEW_MARK, rustChar(rust("src/core/text/mod.rs"), "VIEW_MARK"));
  assert.match(special, /pub const MARK: char = crate::core::text::VIEW_MARK;/);
  // The letters special() reads, each an arm `'x' =>` or `'x' if …`; NEG_ZERO is written by fast/check_call.rs, and
  // LONG (issue 34) read there.
  const { NEG_ZERO, LONG, ...read } = VIEW_KIND;
  assert.ok(rust("src/core/fast/check_call.rs").includes(`.strip_prefix('${LONG}')`), "VIEW_KIND.LONG");
  for (const [name, letter] of Object.entries(read)) {
    assert.match(special, new RegExp(`^\\s*'${letter.replace(/[+-]/, "\\$&")}' (?:if|=>)`, "m"), `VIEW_KIND.${name}`);
  }
  assert.ok(rust("src/core/fast/check_call.rs").includes(`format!("{MARK}${NEG_ZERO}")`), "VIEW_KIND.NEG_ZERO");
});

test("the projection markers (snippets/values.js, written by view.js) are core::text's PROJECTION_START and PROJECTION_END", async () => {
  const text = rust("src/core/text/mod.rs");
  const { MARK, MARK_END } = await snippet("values");
  assert.equal(MARK, rustChar(text, "PROJECTION_START"));
  assert.equal(MARK_END, rustChar(text, "PROJECTION_END"));
});
