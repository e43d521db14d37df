// The incremental tool-argument parser (pkg-template/partial-json.js, P-6.4.2): the live value after each fragment,
// the depth and path-key limits, linear patch work, and seeded random inputs against the final parse.

import { test } from "node:test";
import assert from "node:assert/strict";
import { PartialJson, apply, parsePartial, MAX_DEPTH, MAX_PATH_KEY_BYTES } from "../../pkg-template/partial-json.js";
import { parseToolArguments } from "../../pkg-template/providers/repair.js";
import { prng as rng } from "./provider-server.mjs";

/** Feeds `fragments` one by one: the live value after each (deep copies, if `copies`) and all patches. */
function feed(fragments, copies = true) {
  const p = new PartialJson();
  const root = {};
  const values = [];
  const all = [];
  for (const f of fragments) {
    const out = [];
    p.push(f, out);
    for (const patch of out) apply(root, patch);
    all.push(...out);
    if (copies) values.push(structuredClone(root));
  }
  return { values, patches: all, root, parser: p };
}

const last = (fragments) => feed(fragments, false).root;
/** One code point at a time. */
const charwise = (text) => last([...text]);
/** One UTF-16 unit at a time: JS deltas may split a surrogate pair. */
const unitwise = (text) => last(text.split(""));
const codeUnits = (s) => {
  const out = [];
  for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i));
  return out;
};

test("p_6_4_2_values_grow_fragment_by_fragment", () => {
  const { values } = feed(['{"path": "/tm', 'p/a.txt", "n": 12', ', "ok": tr', 'ue, "list": [1, "x', 'y"]}']);
  assert.deepEqual(values, [
    { path: "/tm" },
    { path: "/tmp/a.txt" },
    { path: "/tmp/a.txt", n: 12 },
    { path: "/tmp/a.txt", n: 12, ok: true, list: [1, "x"] },
    { path: "/tmp/a.txt", n: 12, ok: true, list: [1, "xy"] },
  ]);
});

test("p_6_4_2_exact_patches", () => {
  const { patches } = feed(['{"a": {"b": [', '"hi', ' there", 1.5, null]', "}}"]);
  assert.deepEqual(patches, [
    { path: ["a"], op: "setObject", value: undefined },
    { path: ["a", "b"], op: "setArray", value: undefined },
    { path: ["a", "b", 0], op: "setString", value: "hi" },
    { path: ["a", "b", 0], op: "appendString", value: " there" },
    { path: ["a", "b", 1], op: "setValue", value: 1.5 },
    { path: ["a", "b", 2], op: "setValue", value: null },
  ]);
});

test("p_6_4_2_string_appears_when_it_starts_even_empty", () => {
  const { values, patches } = feed(['{"a": "', "", "x", '"', "}"]);
  assert.deepEqual(values[0], { a: "" });
  assert.deepEqual(values[2], { a: "x" });
  // No empty appends: one setString, one appendString.
  assert.equal(patches.length, 2);
});

test("p_6_4_2_key_appears_once_its_value_starts", () => {
  assert.deepEqual(parsePartial('{"a'), {});
  assert.deepEqual(parsePartial('{"a"'), {});
  assert.deepEqual(parsePartial('{"a" :'), {});
  assert.deepEqual(parsePartial('{"a" : ['), { a: [] });
  assert.deepEqual(parsePartial('{"a" : {'), { a: {} });
  assert.deepEqual(parsePartial('{"a" : "'), { a: "" });
  assert.deepEqual(parsePartial('{"a" : 1'), {});
  assert.deepEqual(parsePartial('{"a" : 1 '), { a: 1 });
});

test("p_6_4_2_scalars_appear_only_when_terminated", () => {
  assert.deepEqual(parsePartial('{"a": -12.5e3'), {});
  assert.deepEqual(parsePartial('{"a": -12.5e3}'), { a: -12500 });
  assert.deepEqual(parsePartial('{"a": -0.5e0 }'), { a: -0.5 });
  assert.deepEqual(parsePartial('{"a": [1, 2'), { a: [1] });
  assert.deepEqual(parsePartial('{"a": [1, 2]'), { a: [1, 2] });
  assert.deepEqual(parsePartial('{"a": tru'), {});
  assert.deepEqual(parsePartial('{"a": true'), {});
  assert.deepEqual(parsePartial('{"a": true\n'), { a: true });
  assert.deepEqual(parsePartial('{"a": false,"b":null}'), { a: false, b: null });
  // A number literal's value is Number(text), as JSON.parse reads it: ±Infinity past the double range.
  assert.deepEqual(parsePartial('{"a": 1e400, "b": -1e400, "c": -0}'), { a: Infinity, b: -Infinity, c: -0 });
  assert.equal(JSON.stringify(parsePartial('{"a": 12345678901234567890}')), '{"a":12345678901234567000}');
});

test("p_6_4_2_escapes_decoded_and_incomplete_ones_held_back", () => {
  const text = String.raw`{"s": "a\n\t\"\\\/\b\f\r\u00e9\uD83D\uDE00z"}`;
  const expected = { s: 'a\n\t"\\/\b\f\r\u00e9\u{1F600}z' };
  assert.deepEqual(parsePartial(text), expected);
  assert.deepEqual(charwise(text), expected);
  // Held back: a lone backslash, a partial \u, a high surrogate awaiting its pair.
  assert.deepEqual(parsePartial('{"s": "a\\'), { s: "a" });
  assert.deepEqual(parsePartial(String.raw`{"s": "a\u00`), { s: "a" });
  assert.deepEqual(parsePartial(String.raw`{"s": "a\uD83D`), { s: "a" });
  assert.deepEqual(parsePartial('{"s": "a\\uD83D\\'), { s: "a" });
  assert.deepEqual(parsePartial(String.raw`{"s": "a\uD83D\uDE`), { s: "a" });
  assert.deepEqual(parsePartial(String.raw`{"s": "a\uD83D\uDE00`), { s: "a\u{1F600}" });
  // Escapes split over fragments.
  const { values } = feed(['{"s": "x\\', "u", "D8", "3D", "\\", "uDE00", "\\", "n", '"}']);
  assert.deepEqual(
    values.map((v) => v.s),
    ["x", "x", "x", "x", "x", "x\u{1F600}", "x\u{1F600}", "x\u{1F600}\n", "x\u{1F600}\n"],
  );
});

test("p_6_4_2_lone_surrogates_are_kept", () => {
  assert.deepEqual(codeUnits(parsePartial(String.raw`{"s": "\uD800"}`).s), [0xd800]);
  assert.deepEqual(codeUnits(parsePartial(String.raw`{"s": "\uDC00x"}`).s), [0xdc00, 0x78]);
  assert.deepEqual(codeUnits(parsePartial(String.raw`{"s": "\uD800\uD800\uDC00"}`).s), [0xd800, 0xd800, 0xdc00]);
  assert.deepEqual(codeUnits(parsePartial(String.raw`{"s": "\uD800\n"}`).s), [0xd800, 0x0a]);
  assert.deepEqual(codeUnits(parsePartial(String.raw`{"s": "\uD800\u0041"}`).s), [0xd800, 0x41]);
  assert.deepEqual(Object.keys(parsePartial(String.raw`{"\uD800": 1}`)).map(codeUnits), [[0xd800]]);
  // JS only: raw lone surrogates in the text are kept, and an escaped high half joins a raw low one as JSON.parse does.
  assert.deepEqual(parsePartial('{"s": "\uD800x"}'), JSON.parse('{"s": "\uD800x"}'));
  assert.deepEqual(parsePartial('{"s": "\\uD83D\uDE00"}'), { s: "\u{1F600}" });
});

test("p_6_4_2_string_tolerance_matches_the_repair_pass", () => {
  // Raw control characters are kept; a bad escape is a literal backslash.
  assert.deepEqual(parsePartial('{"s": "a\nb\tc\u0001"}'), { s: "a\nb\tc\u0001" });
  assert.deepEqual(parsePartial(String.raw`{"s": "C:\dir\x"}`), { s: "C:\\dir\\x" });
  assert.deepEqual(parsePartial(String.raw`{"s": "\u12G"}`), { s: "\\u12G" });
  assert.deepEqual(parsePartial(String.raw`{"s": "\u12"}`), { s: "\\u12" });
  assert.deepEqual(parsePartial(String.raw`{"s": "\u"}`), { s: "\\u" });
  assert.deepEqual(parsePartial(String.raw`{"s": "\u\"}`), { s: '\\u"}' });
  assert.deepEqual(codeUnits(parsePartial(String.raw`{"s": "\uD83D\q"}`).s), [0xd83d, 0x5c, 0x71]);
  assert.deepEqual(parsePartial(String.raw`{"s": "\é"}`), { s: "\\é" });
  // Extra: the literal fallback of `\u` + digits flushes a pending high surrogate first; keys decode alike.
  assert.deepEqual(codeUnits(parsePartial(String.raw`{"s": "\uD83D\u12"}`).s), [0xd83d, 0x5c, 0x75, 0x31, 0x32]);
  assert.deepEqual(parsePartial(String.raw`{"k\n\u0041\q": 1}`), { "k\nA\\q": 1 });
});

test("p_6_4_2_non_object_root_leaves_empty_object", () => {
  for (const text of ["[1, 2]", '"str"', "12 ", "true ", "null ", "x", "\uFEFF{}"]) {
    assert.equal(feed([text]).patches.length, 0, text);
    assert.deepEqual(parsePartial(text), {}, text);
  }
  assert.deepEqual(parsePartial(""), {});
  assert.deepEqual(parsePartial("  \n"), {});
});

test("p_6_4_2_malformed_input_freezes_last_good_value", () => {
  const cases = [
    ['{"a": 1, "b": x, "c": 2}', { a: 1 }],
    ['{"a": 1,}', { a: 1 }],
    ['{"a": [1,], "b": 2}', { a: [1] }],
    ['{"a": 01, "b": 2}', {}],
    ['{"a": 1.}', {}],
    ['{"a": "s" "b": 2}', { a: "s" }],
    ['{"a" 1}', {}],
    ["{a: 1}", {}],
    ['{"a": [1 2]}', { a: [1] }],
    ['{"a": {"b": 1]}', { a: { b: 1 } }],
    ['{"a": 1} {"b": 2}', { a: 1 }],
    ['{"a": truex}', {}],
    ['{"a": 1"b"}', {}],
    // Extra branches: a bad scalar character, a bad value start, a bad delimiter after a scalar.
    ['{"a": 1:}', {}],
    ['{"a": @}', {}],
    ['{"a": [], "b": 1e}', { a: [] }],
    ['{"a": [}', { a: [] }],
    ['{"a": {}, }', { a: {} }],
  ];
  for (const [text, expected] of cases) {
    assert.deepEqual(parsePartial(text), expected, text);
    assert.deepEqual(charwise(text), expected, text);
    // Frozen: nothing more, whatever follows.
    const p = new PartialJson();
    p.push(text, []);
    const out = [];
    p.push(', "z": "more"}', out);
    assert.equal(out.length, 0, text);
    assert.equal(p.clean(), false, text);
  }
});

test("p_6_4_2_duplicate_keys_last_wins", () => {
  assert.deepEqual(parsePartial('{"a": 1, "b": 2, "a": [3]}'), { a: [3], b: 2 });
  assert.deepEqual(Object.keys(parsePartial('{"a": 1, "b": 2, "a": "x"}')), ["a", "b"]);
  // `__proto__` is an own key, as JSON.parse makes it, and its value is patched in place.
  const v = parsePartial('{"__proto__": {"x": 1}, "b": {"__proto__": "s"}}');
  assert.deepEqual(v, JSON.parse('{"__proto__": {"x": 1}, "b": {"__proto__": "s"}}'));
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.deepEqual(Object.keys(v), ["__proto__", "b"]);
  const { values } = feed(['{"__proto__": "a', 'b"']);
  assert.deepEqual(values[1], JSON.parse('{"__proto__": "ab"}'));
});

test("e_8_4_1_nesting_limit_512", () => {
  assert.equal(MAX_DEPTH, 512);
  const dig = (v) => {
    let node = v.a;
    for (let i = 0; i < 510; i++) node = node[0];
    return node;
  };
  // The root object plus 511 arrays = 512 containers: fine.
  const ok = `{"a":${"[".repeat(511)}${"]".repeat(511)}}`;
  assert.deepEqual(dig(parsePartial(ok)), []);
  // One more freezes the live value where it stood.
  const deep = `{"a":${"[".repeat(512)}${"]".repeat(512)}}`;
  assert.deepEqual(dig(parsePartial(deep)), []);
  const p = new PartialJson();
  p.push(deep, []);
  assert.equal(p.clean(), false);
  // A very deep input does not overflow anything.
  assert.ok(Array.isArray(parsePartial(`{"a":${"[".repeat(100_000)}`).a));
});

test("p_6_4_2_long_key_path_freezes_live_value", () => {
  assert.equal(MAX_PATH_KEY_BYTES, 1024);
  const k = "k".repeat(600);
  // The second key would make the path 1200 key bytes: frozen with the first container open.
  assert.deepEqual(parsePartial(`{"${k}": {"${k}": 1, "x": 2}, "y": 3}`), { [k]: {} });
  const ok = `{"${k}": {"${"k".repeat(424)}": 1}}`;
  assert.deepEqual(parsePartial(ok), { [k]: { ["k".repeat(424)]: 1 } });
  // Extra: keys count UTF-8 bytes (é 2, € 3, 😀 4, a lone surrogate 4, as a whole pair), and a closed
  // container gives its key's bytes back.
  const at = (key, rest) => parsePartial(`{"${k}": {"${key}": 1${rest}}}`)[k];
  assert.deepEqual(at("é".repeat(212), ""), { ["é".repeat(212)]: 1 });
  assert.deepEqual(at("é".repeat(213), ""), {});
  assert.deepEqual(at("€".repeat(141) + "k", ""), { ["€".repeat(141) + "k"]: 1 });
  assert.deepEqual(at("€".repeat(142), ""), {});
  assert.deepEqual(at("😀".repeat(106), ""), { ["😀".repeat(106)]: 1 });
  assert.deepEqual(at("😀".repeat(106) + "k", ""), {});
  assert.deepEqual(at("\\uD800".repeat(106), ""), { ["\uD800".repeat(106)]: 1 });
  assert.deepEqual(at("\\uD800".repeat(106) + "k", ""), {});
  const sibling = `{"${k}": {"a": 1}, "${"j".repeat(1024)}": 2}`;
  assert.deepEqual(parsePartial(sibling), { [k]: { a: 1 }, ["j".repeat(1024)]: 2 });
  assert.deepEqual(parsePartial(`{"${"j".repeat(1025)}": 2}`), {});
});

test("clean: one whole object within the limits, trailing whitespace allowed", () => {
  const p = new PartialJson();
  const out = [];
  assert.equal(p.clean(), false);
  p.push('{"a": [1, {"b": "c"}]', out);
  assert.equal(p.clean(), false);
  p.push("}", out);
  assert.equal(p.clean(), true);
  p.push(" \n\t\r", out);
  assert.equal(p.clean(), true);
  p.push("x", out);
  assert.equal(p.clean(), false);
  const empty = new PartialJson();
  empty.push(" {} ", out);
  assert.equal(empty.clean(), true);
  const junk = new PartialJson();
  junk.push('{"a": 1}}', out);
  assert.equal(junk.clean(), false);
});

test("apply_ignores_patches_without_parent", () => {
  const root = { a: [1] };
  apply(root, { path: ["x", "y"], op: "setArray" });
  apply(root, { path: ["a", 5], op: "setArray" });
  apply(root, { path: ["a", "b"], op: "setArray" });
  apply(root, { path: ["a", 0], op: "appendString", value: "x" });
  // A key on an array parent, an index on an object parent, a parent inherited from the prototype.
  apply(root, { path: ["a", "length", "z"], op: "setArray" });
  apply(root, { path: [0, "z"], op: "setArray" });
  apply(root, { path: ["constructor", "z"], op: "setValue", value: 1 });
  apply(root, { path: ["toString"], op: "appendString", value: "!" });
  assert.deepEqual(root, { a: [1] });
  apply(root, { path: ["a", 1], op: "setString", value: "s" });
  apply(root, { path: ["a", 1], op: "appendString", value: "t" });
  apply(root, { path: ["a", 0], op: "setValue", value: 2 });
  assert.deepEqual(root, { a: [2, "st"] });
  // An empty path names the root, which a caller's object stays: nothing changes.
  apply(root, { path: [], op: "setObject" });
  assert.deepEqual(root, { a: [2, "st"] });
  apply(root, { path: ["a", 1, "x"], op: "setValue", value: 1 });
  apply(root, { path: ["n"], op: "setValue", value: null });
  apply(root, { path: ["n", "x"], op: "setValue", value: 1 });
  assert.deepEqual(root, { a: [2, "st"], n: null });
});

/** Realistic arguments of about `size` characters: a file write with a long escaped string plus small edits. */
function documentOf(size) {
  const parts = ['{"path": "src/main.rs", "content": "'];
  const line = String.raw`fn main() {\n    println!(\"hello, world \u00e9\");\n}\n\t// café \uD83D\uDE00\n`;
  let length = parts[0].length;
  while (length < size / 2) {
    parts.push(line);
    length += line.length;
  }
  parts.push('", "edits": [');
  for (let i = 0; length < size; i++) {
    const edit = `${i ? ", " : ""}{"line": ${i}, "ok": true, "ratio": -${i}.25e-3, "text": "edit ${i}", "tags": [null, false]}`;
    parts.push(edit);
    length += edit.length;
  }
  parts.push("]}");
  return parts.join("");
}

/** Feeds `text` in `step`-character fragments: the work the patches carry (path segments, key characters and
 *  payload, plus the characters examined), the patch count and the value. Counts, not timings: deterministic. */
function measure(text, step) {
  const p = new PartialJson();
  const root = {};
  const out = [];
  let work = 0, patches = 0;
  for (let i = 0; i < text.length; i += step) {
    p.push(text.slice(i, i + step), out);
    patches += out.length;
    for (const patch of out) {
      apply(root, patch);
      work += patch.path.length + (typeof patch.value === "string" ? patch.value.length : 1);
      for (const seg of patch.path) if (typeof seg === "string") work += seg.length;
    }
    out.length = 0;
  }
  return { work: work + text.length, patches, root };
}

test("p_6_4_2_linear_work_4mib_vs_1mib_in_16_byte_fragments", () => {
  const small = documentOf(1 << 20);
  const large = documentOf(4 << 20);
  const s = measure(small, 16);
  const l = measure(large, 16);
  assert.deepEqual(s.root, JSON.parse(small));
  assert.deepEqual(l.root, JSON.parse(large));
  const ratio = l.work / s.work;
  const patchRatio = l.patches / s.patches;
  assert.ok(ratio >= 3.8 && ratio <= 4.2, `work ratio ${ratio}`);
  assert.ok(patchRatio >= 3.8 && patchRatio <= 4.2, `patch ratio ${patchRatio}`);
  assert.ok(l.work < 4 * large.length, `${l.work} work for ${large.length} characters`);
});

test("p_6_4_2_linear_work_deep_long_keys_and_one_big_string", () => {
  // Adversarial shapes: keys near the path limit with an array of many small scalars, and a single huge string
  // fed in tiny fragments at depth 100.
  const shapeA = (n) => `{"${"k".repeat(1000)}": [${"1,".repeat(n)}0]}`;
  const shapeB = (n) => `${'{"a":'.repeat(100)}{"s": "${"x".repeat(n)}"}${"}".repeat(100)}`;
  for (const [name, make] of [["long key", shapeA], ["deep string", shapeB]]) {
    const small = measure(make(1 << 16), 16);
    const large = measure(make(1 << 18), 16);
    const ratio = large.work / small.work;
    assert.ok(ratio >= 3.8 && ratio <= 4.2, `${name}: work ratio ${ratio}`);
  }
});

test("p_6_4_2 linear time: a backslash-dense string in one fragment and a huge key in small fragments", () => {
  // Escape-dense text must not rescan to the next quote at every backslash, nor re-read a growing key.
  const escapes = (n) => `{"s": "${"\\n".repeat(n)}"}`;
  const key = (n) => `{"${"k".repeat(n)}": 1}`;
  // Held here by the patch work (4× the text, 4× the work); the scan itself is not timed.
  for (const [name, make, step] of [["escapes", escapes, 1 << 30], ["key", key, 16]]) {
    const small = measure(make(1 << 17), step);
    const large = measure(make(1 << 19), step);
    const ratio = large.work / small.work;
    assert.ok(ratio >= 3.8 && ratio <= 4.2, `${name}: work ratio ${ratio}`);
  }
  assert.equal(parsePartial(escapes(3)).s, "\n\n\n");
});


const STRING_CHARS = ['a', '"', "\\", "\n", "\u0000", "\u001f", "-", "é", "😀", "/", " ", "\uD800", "\uDC00", "\u2028"];
const KEY_CHARS = ["a", "z", '"', "\\", "é", "😀", "\n"];

function randomString(r, chars, max) {
  let s = "";
  for (let n = Math.floor(r() * (max + 1)); n > 0; n--) s += chars[Math.floor(r() * chars.length)];
  return s;
}

function randomLeaf(r) {
  switch (Math.floor(r() * 7)) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return Math.floor((r() - 0.5) * 2 ** 53);
    case 3: return (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
    case 4: return r() < 0.5 ? -0 : Number.MAX_VALUE * r();
    case 5: return String.fromCharCode(...Array.from({ length: Math.floor(r() * 8) }, () => Math.floor(r() * 0x10000)));
    default: return randomString(r, STRING_CHARS, 12);
  }
}

function randomValue(r, depth) {
  const roll = r();
  if (depth <= 0 || roll < 0.5) return randomLeaf(r);
  const n = Math.floor(r() * 6);
  if (roll < 0.75) return Array.from({ length: n }, () => randomValue(r, depth - 1));
  return randomObject(r, depth - 1, n);
}

function randomObject(r, depth, n = Math.floor(r() * 6)) {
  const o = {};
  for (let i = 0; i < n; i++) {
    const k = randomString(r, KEY_CHARS, 6);
    o[k] = randomValue(r, depth);
  }
  return o;
}

/** Splits `text` at up to `max` random UTF-16 offsets (a surrogate pair may be split, as JS deltas may). */
function fragmentsOf(r, text, max) {
  const cuts = Array.from({ length: Math.floor(r() * (max + 1)) }, () => Math.floor(r() * (text.length + 1)));
  cuts.sort((a, b) => a - b);
  const out = [];
  let prev = 0;
  for (const c of cuts) {
    out.push(text.slice(prev, c));
    prev = c;
  }
  out.push(text.slice(prev));
  return out;
}

const ATOMS = ["{", "}", "[", "]", ":", ",", '"', "\\", "\\u", "\\uD83D", "\\uDE00", "\\n", " ", "\n", "true", "null",
  "-1.5e3", "0", '"k":'];

/** Inputs near JSON: fragments of JSON syntax, escapes and junk. */
function jsonish(r) {
  if (r() < 0.2) return randomString(r, [...STRING_CHARS, "{", "}", "[", ":", ","], 20);
  let s = "{";
  for (let n = Math.floor(r() * 40); n > 0; n--) {
    const roll = r();
    if (roll < 0.67) s += ATOMS[Math.floor(r() * ATOMS.length)];
    else if (roll < 0.83) s += randomString(r, [..."abcdef0123456789"], 4) || "a";
    else s += String.fromCodePoint(Math.floor(r() * 0x110000));
  }
  return s;
}

test("p_6_4_2_valid_objects_in_random_fragments_equal_json_parse", () => {
  const r = rng(1);
  for (let i = 0; i < 1500; i++) {
    const value = randomObject(r, 6);
    const text = r() < 0.5 ? JSON.stringify(value, null, 2) : JSON.stringify(value);
    const expected = JSON.parse(text);
    const pieces = fragmentsOf(r, text, 24);
    assert.deepEqual(last(pieces), expected, JSON.stringify(pieces));
    assert.deepEqual(charwise(text), expected, text);
    const p = new PartialJson();
    p.push(text, []);
    assert.equal(p.clean(), true, text);
  }
});

test("p_6_4_2_any_input_never_throws_and_fragmentation_does_not_matter", () => {
  const r = rng(2);
  for (let i = 0; i < 3000; i++) {
    const text = jsonish(r);
    const whole = parsePartial(text);
    assert.ok(whole !== null && typeof whole === "object" && !Array.isArray(whole));
    assert.deepEqual(last(fragmentsOf(r, text, 12)), whole, text);
    assert.deepEqual(charwise(text), whole, text);
    assert.deepEqual(unitwise(text), whole, text);
  }
});

test("p_6_4_2_live_value_converges_to_the_final_parse", () => {
  // Whenever the final parse (JSON.parse, then repaired) yields an object, the live value after the whole text is it.
  const r = rng(3);
  let compared = 0;
  for (let i = 0; i < 6000; i++) {
    const text = jsonish(r);
    let final;
    try {
      final = parseToolArguments(text);
    } catch {
      continue;
    }
    compared++;
    assert.deepEqual(parsePartial(text), final, text);
  }
  // Valid objects with raw control characters and lone backslashes put into their strings: repaired.
  for (let i = 0; i < 1000; i++) {
    const text = JSON.stringify(randomObject(r, 4)).replace(/\\(["n\\])/g, (m, c) =>
      r() < 0.5 ? m : c === "n" ? "\n" : c === "\\" ? "\\" : m,
    );
    let final;
    try {
      final = parseToolArguments(text);
    } catch {
      continue;
    }
    compared++;
    assert.deepEqual(parsePartial(text), final, text);
  }
  assert.ok(compared > 500, `${compared} objects compared`);
  // Hand-picked: the repair pass and the live parser agree on what they tolerate.
  for (const text of ['{"a": "x\ny\u0001\\q\\u12G\\\\", "b": [1, {"c": "\\uD83D\\uDE00"}]}', '{"s": "\\uD800\\u0041"}']) {
    assert.deepEqual(parsePartial(text), parseToolArguments(text), text);
  }
});
