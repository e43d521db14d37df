// T-4.3.4 `pattern`, `patternProperties` and the formats the engine decides, with the exact answers of the reference
// (pi-ai's validateToolArguments on Node): a pattern compiles with the `u` flag, else without it (older schemas
// escape characters `u` rejects, as `\-`); one that compiles neither way is the schema's error, the SyntaxError
// `new RegExp` throws; the format `regex` is the `u` flag's grammar; the format `url` is `URL.canParse`. Runs on both
// implementations (AGENT_LOOP_IMPL=reference).
import test from "node:test";
import assert from "node:assert/strict";
import { validateToolArguments } from "./impl.mjs";

/** What validating `args` against `parameters` answers: the arguments, or the first two lines of the error. */
function answer(parameters, args) {
  try {
    return validateToolArguments({ name: "t", parameters }, { id: "c", name: "t", arguments: args });
  } catch (e) {
    return `${e.constructor.name}: ${e.message.split("\n").slice(0, 2).join(" | ")}`;
  }
}

const string = (keyword) => ({ type: "object", properties: { a: { type: "string", ...keyword } } });

test("T-4.3.4 a pattern the u flag rejects is compiled without it", () => {
  assert.deepEqual(answer(string({ pattern: "\\-" }), { a: "x-y" }), { a: "x-y" });
  assert.equal(answer(string({ pattern: "\\-" }), { a: "xy" }), 'Error: Validation failed for tool "t": |   - a: expected to match \\-');
  assert.deepEqual(answer(string({ pattern: "\\p{L}" }), { a: "é" }), { a: "é" });
  assert.deepEqual(answer({ type: "object", patternProperties: { "^x\\-": { type: "number" } } }, { "x-1": "2" }), { "x-1": 2 });
});

test("T-4.3.4 a pattern that compiles neither way is the schema's error, in the engine's words", () => {
  assert.equal(answer(string({ pattern: "[" }), { a: "x" }), "SyntaxError: Invalid regular expression: /[/: Unterminated character class");
  assert.equal(answer(string({ pattern: "(" }), { a: "x" }), "SyntaxError: Invalid regular expression: /(/: Unterminated group");
  assert.equal(
    answer({ type: "object", patternProperties: { "a{2,1}": {} } }, {}),
    "SyntaxError: Invalid regular expression: /a{2,1}/: numbers out of order in {} quantifier",
  );
});

test("T-4.3.4 format regex is the u flag's grammar; format url is URL.canParse", () => {
  const fails = (format) => `Error: Validation failed for tool "t": |   - a: expected format ${format}`;
  assert.equal(answer(string({ format: "regex" }), { a: "\\-" }), fails("regex"));
  assert.equal(answer(string({ format: "regex" }), { a: "[" }), fails("regex"));
  assert.deepEqual(answer(string({ format: "regex" }), { a: "^a+\\p{L}$" }), { a: "^a+\\p{L}$" });
  for (const url of ["http://a", "x:", "mailto:x", "HTTP://EXAMPLE.com:80/p?q#f", "file:///tmp/a"]) {
    assert.deepEqual(answer(string({ format: "url" }), { a: url }), { a: url }, url);
  }
  for (const url of ["a b", "http://[::1", "//a", "http://a b", "http://a:99999", ""]) {
    assert.equal(answer(string({ format: "url" }), { a: url }), fails("url"), url);
  }
});
