// The final parse of tool arguments and stream data (pkg-template/providers/repair.js): blank → {}, the repair pass,
// the nesting limit (P-6.4.3, E-8.4.1). The parser is the engine's JSON.parse, so its messages are the engine's: the
// expected texts are current V8's; on an older V8 (Node 20) the ` (line … column …)` suffix is missing and a missing
// `:` after a non-first key is an unexpected token. Both are detected here, not assumed.

import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_DEPTH } from "../../pkg-template/partial-json.js";
import {
  NOT_AN_OBJECT,
  parseJson,
  parseJsonWithRepair,
  parseToolArguments,
  repairJson,
} from "../../pkg-template/providers/repair.js";
import { prng as rng } from "./provider-server.mjs";

const message = (f) => {
  try {
    f();
  } catch (e) {
    return e.message;
  }
  assert.fail("no error");
};
const err = (text) => message(() => parseJson(text));
const argsErr = (text) => message(() => parseToolArguments(text));

/** Node 18's V8 words JSON.parse errors otherwise again ("Unexpected end of JSON input", "Unexpected token x in
 *  JSON at position 17"): the engine's message is the message, as pi-ai's on the same engine, so the wording tests
 *  run on the V8 of Node 20 and later (scripts/test runs them there). */
const WORDING = { skip: !message(() => JSON.parse("{")).startsWith("Expected property name") && "Node 18's V8 words JSON.parse's errors otherwise (the engine's message is the message, as pi-ai's); the wording tests run on Node 20+" };
const LINE_COLUMN = / \(line \d+ column \d+\)$/.test(message(() => JSON.parse("{")));
const COLON_TEMPLATE = message(() => JSON.parse('{"a":1,"b" 2}')).startsWith("Expected ':'");
/** A current-V8 message as this engine words it (`old`: the older V8's text where it differs beyond the suffix). */
const v8 = (current, old = current) => {
  const text = COLON_TEMPLATE ? current : old;
  return LINE_COLUMN ? text : text.replace(/ \(line \d+ column \d+\)$/, "");
};

test("p_6_4_3_blank_is_empty_object", () => {
  for (const text of ["", "  ", "\n\t\r ", "\uFEFF", "\u00a0\u2028\u3000", "\u000b\u000c\u1680\u2000\u200a\u2029\u202f\u205f"]) {
    assert.deepEqual(parseToolArguments(text), {}, JSON.stringify(text));
  }
  // Blank is what `String#trim` (the reference's) strips: not U+0085, not U+200B.
  assert.throws(() => parseToolArguments("\u0085"));
  assert.throws(() => parseToolArguments("\u200b"));
});

test("p_6_4_3_valid_objects", () => {
  const m = parseToolArguments(' {"a": [1, -0.5e2, true, null], "b": {"c": "\\u00e9\\n"}, "__proto__": 1} ');
  assert.deepEqual(m, JSON.parse('{"a": [1, -50, true, null], "b": {"c": "é\\n"}, "__proto__": 1}'));
  assert.ok(Object.prototype.hasOwnProperty.call(m, "__proto__"));
  // Duplicate keys: last value, first position (as JSON.parse).
  const d = parseToolArguments('{"a":1,"b":2,"a":3}');
  assert.deepEqual(Object.keys(d), ["a", "b"]);
  assert.equal(d.a, 3);
});

test("p_6_4_3_non_objects", () => {
  for (const text of ["[1]", "1", '"s"', "null", "true", " [] "]) {
    assert.equal(argsErr(text), `${NOT_AN_OBJECT}\n\nReceived arguments:\n${text}`);
  }
  assert.equal(NOT_AN_OBJECT, "Tool call arguments must be a JSON object");
  // A repaired text that parses to a non-object is a non-object too.
  assert.equal(argsErr('["a\nb"]'), `${NOT_AN_OBJECT}\n\nReceived arguments:\n["a\nb"]`);
});

test("p_6_4_3_messages_as_pi_ai_on_v8", WORDING, () => {
  const cases = [
    ['{"a":', "Unexpected end of JSON input"],
    ["{", "Expected property name or '}' in JSON at position 1 (line 1 column 2)"],
    ['{"a":1,}', "Expected double-quoted property name in JSON at position 7 (line 1 column 8)"],
    ['{"a" 1}', "Expected ':' after property name in JSON at position 5 (line 1 column 6)"],
    ['{"a":tru}', `Unexpected token '}', "{"a":tru}" is not valid JSON`],
    ["{a:1}", "Expected property name or '}' in JSON at position 1 (line 1 column 2)"],
    ['{"a":1} x', "Unexpected non-whitespace character after JSON at position 8 (line 1 column 9)"],
    ["NaN", `"NaN" is not valid JSON`],
    ["undefined", `"undefined" is not valid JSON`],
    ["abc", `Unexpected token 'a', "abc" is not valid JSON`],
    ['{"a":-}', "No number after minus sign in JSON at position 6 (line 1 column 7)"],
    ['{"a":1e}', "Exponent part is missing a number in JSON at position 7 (line 1 column 8)"],
    ['{"a":1.}', "Unterminated fractional number in JSON at position 7 (line 1 column 8)"],
    ['{"a":01}', "Unexpected number in JSON at position 6 (line 1 column 7)"],
    ['{"a":1', "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)"],
    ["[1", "Expected ',' or ']' after array element in JSON at position 2 (line 1 column 3)"],
    ['{"a":"x', "Unterminated string in JSON at position 7 (line 1 column 8)"],
    [
      '{\n  "a": 1,\r\n  "b" 2}',
      "Expected ':' after property name in JSON at position 19 (line 3 column 7)",
      "Unexpected number in JSON at position 19",
    ],
  ];
  for (const [text, current, old] of cases) {
    assert.equal(argsErr(text), `${v8(current, old)}\n\nReceived arguments:\n${text}`, text);
  }
});

test("p_6_4_3_unexpected_token_context_windows", WORDING, () => {
  assert.equal(
    err('{"abcdefghijkl": x, "mnopqrstuv": 1}'),
    `Unexpected token 'x', ..."fghijkl": x, "mnopqr"... is not valid JSON`,
  );
  assert.equal(err('{"k": x123456789012345678}'), `Unexpected token 'x', "{"k": x123456789"... is not valid JSON`);
  assert.equal(err('{"k123456789012345678": x}'), `Unexpected token 'x', ..."2345678": x}" is not valid JSON`);
  // A window edge inside a surrogate pair: current V8 writes U+FFFD for the half, Node 20's V8 the half itself.
  assert.ok(
    ["\uFFFD", "\uDE00"]
      .map((half) => `Unexpected token 'x', ..."${half}😀😀😀": x}" is not valid JSON`)
      .includes(err('{"😀😀😀😀😀😀😀😀😀😀": x}')),
  );
  assert.equal(
    err('{"a":1,"b"}'),
    v8("Expected ':' after property name in JSON at position 10 (line 1 column 11)", `Unexpected token '}', "{"a":1,"b"}" is not valid JSON`),
  );
  assert.equal(
    err('{"a":1,"b" 2}'),
    v8("Expected ':' after property name in JSON at position 11 (line 1 column 12)", "Unexpected number in JSON at position 11"),
  );
  assert.equal(err("[object Object]"), `"[object Object]" is not valid JSON`);
  assert.equal(err("Infinity"), `"Infinity" is not valid JSON`);
});

test("p_6_4_3_positions_are_utf16_units", WORDING, () => {
  assert.equal(err('{"😀":1,}'), v8("Expected double-quoted property name in JSON at position 8 (line 1 column 9)"));
  assert.equal(err('{"é":1 x}'), v8("Expected ',' or '}' after property value in JSON at position 7 (line 1 column 8)"));
});

test("p_6_4_3_string_errors", WORDING, () => {
  assert.equal(err('"a\u0001"'), v8("Bad control character in string literal in JSON at position 2 (line 1 column 3)"));
  assert.equal(err('"\\q"'), v8("Bad escaped character in JSON at position 2 (line 1 column 3)"));
  assert.equal(err('"\\u12x4"'), v8("Bad Unicode escape in JSON at position 5 (line 1 column 6)"));
  assert.equal(err('"\\u12'), v8("Bad Unicode escape in JSON at position 5 (line 1 column 6)"));
  assert.equal(err('"\\'), "Unexpected end of JSON input");
  assert.equal(err('"\\é"'), v8("Bad escaped character in JSON at position 2 (line 1 column 3)"));
  assert.equal(err('"\\€"'), `Unexpected token '€', ""\\€"" is not valid JSON`);
});

test("p_6_4_3_repair_pass", WORDING, () => {
  // Raw control characters inside strings, invalid escapes: repaired.
  const m = parseToolArguments('{"code": "line1\nline2\ttab\u0001", "path": "C:\\dir\\x"}');
  assert.deepEqual(m, { code: "line1\nline2\ttab\u0001", path: "C:\\dir\\x" });
  assert.equal(repairJson('{"a":"\b\f\u001f"}'), '{"a":"\\b\\f\\u001f"}');
  assert.equal(repairJson(String.raw`{"a":"\u12G\uABCD\q\\\""}`), String.raw`{"a":"\\u12G\uABCD\\q\\\""}`);
  assert.equal(repairJson('"\\'), '"\\\\');
  // Outside strings nothing changes.
  assert.equal(repairJson('{\n"a" :\t1}'), '{\n"a" :\t1}');
  // An unrepairable text reports the first message if repair changed nothing, else the repaired text's message
  // (positions in the repaired text), as pi-ai.
  assert.ok(argsErr('{"a":1,}').startsWith("Expected double-quoted property name in JSON at position 7"));
  // The strict message would be "Bad control character … at position 6"; the repaired text `{"a":"\n",}` fails at
  // position 10 instead.
  assert.ok(argsErr('{"a":"\n",}').startsWith("Expected double-quoted property name in JSON at position 10"));
});

test("p_6_4_3 repair pass: every control character, escapes kept, strings across the text", () => {
  // Each raw control character as JSON writes it: \b \t \n \f \r by name, the others \u00xx in lowercase.
  for (let c = 0; c < 0x20; c++) {
    const raw = String.fromCharCode(c);
    const named = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" }[c] ?? `\\u00${c.toString(16).padStart(2, "0")}`;
    assert.equal(repairJson(`"${raw}"`), `"${named}"`, `${c}`);
    assert.equal(parseJsonWithRepair(`"${raw}"`), raw);
  }
  // 0x7f and non-ASCII are not control characters here; valid escapes are copied, in either case of hex.
  assert.equal(repairJson('"\u007f\u2028😀\\u00E9\\uabcd\\/\\b\\f\\n\\r\\t"'), '"\u007f\u2028😀\\u00E9\\uabcd\\/\\b\\f\\n\\r\\t"');
  // Escaped quotes do not end a string; text between strings is untouched, raw control characters included.
  assert.equal(repairJson('["a\\"\n", \u0001 "b\tc" \t'), '["a\\"\\n", \u0001 "b\\tc" \t');
  // An unterminated string is repaired to its end; a backslash before a non-ASCII character is doubled.
  assert.equal(repairJson('{"a": "x\n\\é\\😀'), '{"a": "x\\n\\\\é\\\\😀');
  // `\u` with too few hex digits, at the end or before a quote.
  assert.equal(repairJson('"\\u12"'), '"\\\\u12"');
  assert.equal(repairJson('"\\uABC'), '"\\\\uABC');
  // No change: the very same string.
  const same = '{"a": "\\n\\u00e9"}';
  assert.equal(repairJson(same), same);
  assert.equal(repairJson(""), "");
  // Lone surrogates pass through.
  assert.equal(repairJson('"\uD800\n"'), '"\uD800\\n"');
});

test("p_6_4_3 parseJsonWithRepair: the first error when repair changes nothing, else the repaired parse", () => {
  assert.deepEqual(parseJsonWithRepair('{"a": "x\ny"}'), { a: "x\ny" });
  assert.equal(parseJsonWithRepair("[1, 2]").length, 2);
  assert.equal(message(() => parseJsonWithRepair("{")), message(() => JSON.parse("{")));
  assert.equal(message(() => parseJsonWithRepair('{"a": "\n" x}')), message(() => JSON.parse('{"a": "\\n" x}')));
});

test("p_6_4_3_values_js_keeps", () => {
  // Lone surrogates are kept, as JSON.parse keeps them.
  const lone = parseJson(String.raw`["\ud800", "\udc00x", "\ud83d\ude00", "\ud83d\ud83d"]`);
  assert.deepEqual(lone, ["\uD800", "\uDC00x", "\u{1F600}", "\uD83D\uD83D"]);
  // Numbers past the double range are what JSON.parse reads: ±Infinity.
  assert.deepEqual(parseJson("[1e400, -1e400, 1e-400]"), [Infinity, -Infinity, 0]);
  assert.ok(Object.is(parseJson("-0"), -0));
  assert.equal(parseJson("12345678901234567890123"), 1.2345678901234568e22);
});

test("e_8_4_1_depth_limit", () => {
  assert.equal(MAX_DEPTH, 512);
  const ok = `${"[".repeat(512)}${"]".repeat(512)}`;
  assert.equal(JSON.stringify(parseJson(ok)), ok);
  const deep = `${"[".repeat(513)}${"]".repeat(513)}`;
  assert.equal(err(deep), "Maximum nesting depth (512) exceeded in JSON at position 512 (line 1 column 513)");
  // No stack use proportional to the input.
  assert.match(err('[{"a":'.repeat(200_000)), /^Maximum nesting depth \(512\) exceeded in JSON at position 1536 /);
});

test("e_8_4_1 depth limit: where the parse meets the 513th container before any other error", () => {
  const depthAt = (at, line = 1, column = at + 1) =>
    `Maximum nesting depth (512) exceeded in JSON at position ${at} (line ${line} column ${column})`;
  // Objects and arrays mixed, whitespace and line ends before it: UTF-16 positions, V8's line and column.
  const mixed = `{"é":\r\n${'[ {"k":\n'.repeat(256)}${"]}".repeat(256)}}`;
  assert.equal(err(mixed), depthAt(mixed.lastIndexOf("{"), 257, 3));
  // Invalid after the deep point (unterminated, junk, bad string): still the depth.
  assert.equal(err("[".repeat(600)), depthAt(512));
  assert.equal(err(`${"[".repeat(513)}x`), depthAt(512));
  assert.equal(err(`${"[".repeat(513)}"\u0001`), depthAt(512));
  assert.equal(err(`{"a": ${"[1, ".repeat(511)}[`), depthAt(6 + 4 * 511));
  // Invalid before it: the engine's message.
  for (const text of [
    `[x, ${"[".repeat(600)}`,
    `["\u0001", ${"[".repeat(600)}`,
    `${"[".repeat(512)}tru[]`,
    `${"[".repeat(512)}1[]`,
    `${"[".repeat(511)}{{}`,
    `${"[".repeat(511)}{"a" []}`,
    `{"a": 1, ${"[".repeat(600)}`,
    `${"[".repeat(512)}-[`,
  ]) {
    assert.equal(err(text), message(() => JSON.parse(text)), text);
  }
  // Brackets inside strings (escaped quotes included) are not containers.
  const strings = `["${"[".repeat(600)}\\"${"{".repeat(600)}", "\\\\", ${"[".repeat(511)}${"]".repeat(512)}`;
  assert.equal(parseJson(strings).length, 3);
  assert.equal(err(`["\\\\", ${"[".repeat(512)}`), depthAt(7 + 511));
  // An unterminated string before the deep point: the engine's message.
  assert.equal(err(`["${"[".repeat(600)}`), message(() => JSON.parse(`["${"[".repeat(600)}`)));
  const deep = `${"[".repeat(513)}${"]".repeat(513)}`;
  // Through the tool-arguments parse, and through the repair pass (positions in the repaired text).
  assert.equal(argsErr(`{"a":${deep}}`), `${depthAt(5 + 511)}\n\nReceived arguments:\n{"a":${deep}}`);
  assert.match(argsErr(`{"s": "\n", "a":${deep}}`), /^Maximum nesting depth \(512\) exceeded in JSON at position 527 /);
});

test("repair_of_a_large_string_parses_and_is_idempotent", () => {
  const big = `{"s": "${'a\\"\\u00e9\n'.repeat(200_000)}"}`;
  const repaired = repairJson(big);
  assert.equal(repairJson(repaired), repaired);
  assert.equal(parseJson(repaired).s.length, 200_000 * 4);
});

test("repair and the depth scan are linear in the text", () => {
  const time = (f) => {
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      f();
      best = Math.min(best, performance.now() - t);
    }
    return best;
  };
  // Backslash runs before quotes, raw control characters, many small strings, deep-ish nesting.
  const text = (n) => `{"a": [${'"\\\\\\\\\\"x\n", [{"b": "\\q"}], '.repeat(n)}0]}`;
  for (const f of [repairJson, (t) => message(() => parseJson(t)), (t) => parseToolArguments(t)]) {
    const small = time(() => f(text(20_000)));
    const large = time(() => f(text(80_000)));
    // Quadratic would be 16×; building the repaired text out of many pieces costs the garbage collector a little
    // more than linear.
    assert.ok(large / small < 11, `time ratio ${large / small}`);
  }
});


const randomString = (r) =>
  String.fromCharCode(...Array.from({ length: Math.floor(r() * 10) }, () => Math.floor(r() * (r() < 0.5 ? 0x80 : 0x10000))));

function randomJson(r, depth) {
  const roll = r();
  if (depth > 0 && roll < 0.2) return Array.from({ length: Math.floor(r() * 6) }, () => randomJson(r, depth - 1));
  if (depth > 0 && roll < 0.4) {
    const o = {};
    for (let n = Math.floor(r() * 6); n > 0; n--) o[randomString(r)] = randomJson(r, depth - 1);
    return o;
  }
  return [null, r() < 0.5, Math.floor((r() - 0.5) * 2 ** 64), (r() - 0.5) * 1e300 * r() ** 50, randomString(r)][
    Math.floor(r() * 5)
  ];
}

test("p_6_4_3_strict_parse_equals_json_parse_on_valid_json", () => {
  const r = rng(7);
  for (let i = 0; i < 2000; i++) {
    const value = randomJson(r, 6);
    const text = r() < 0.5 ? JSON.stringify(value, null, 2) : JSON.stringify(value);
    assert.deepEqual(parseJson(text), JSON.parse(text));
    assert.equal(repairJson(text), text);
  }
});

const PARTS = ["{", "}", "[", "]", ":", ",", '"', "\\", "\\u", "\\uD83D", "\\uDE00", "a", "1", "-", ".", "e", "0", "true",
  "nul", " ", "\n", "\r", "\u0001", "é", "😀", "\\é", "\\😀"];

test("p_6_4_3_any_text_never_throws_anything_but_its_error", () => {
  const r = rng(8);
  for (let i = 0; i < 4000; i++) {
    const text =
      i % 2 ? randomString(r) : Array.from({ length: Math.floor(r() * 40) }, () => PARTS[Math.floor(r() * PARTS.length)]).join("");
    try {
      const v = parseToolArguments(text);
      assert.ok(v !== null && typeof v === "object" && !Array.isArray(v));
    } catch (e) {
      assert.ok(e instanceof Error && e.message.endsWith(`\n\nReceived arguments:\n${text}`), text);
    }
    const repaired = repairJson(text);
    assert.equal(repairJson(repaired), repaired, text);
    // Strict success is JSON.parse's value.
    let expected;
    try {
      expected = JSON.parse(text);
    } catch {
      continue;
    }
    assert.deepEqual(parseJson(text), expected);
  }
});
