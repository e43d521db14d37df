// Issue 17: without an onPayload hook the request body goes to fetch as the text Rust wrote, and `restoreText`
// (src/js/snippets/providers.js) puts the originals of the side table back into that text, in place of parsing the body,
// restoring each marked string value (`restoreAt`) and writing it again. Seeded fuzz: random bodies with markers of
// both kinds in string values (whole, bare inside a longer string, quoted inside a longer string, several in one)
// and in keys, strings full of quotes, backslashes and controls; restoreText must give exactly the object path's
// bytes. The four wire formats' bodies are compared end to end in fidelity-requests.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { restoreString, restoreText } from "../../src/js/snippets/providers.js";

// Our request-body writer only: the reference has no such step, so its pass has nothing to run here.
const skip = process.env.AGENT_LOOP_IMPL === "reference" && "restoreText is our request-body step; the reference has none";

const SEED = Number(process.env.RESTORE_TEXT_SEED ?? 20261203);

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** The object path: parse, every marked string value restored where it is (keys left), written again. */
function objectPath(text, table) {
  const root = JSON.parse(text);
  const walk = (holder, key) => {
    const v = holder[key];
    if (typeof v === "string") {
      if (v.includes("\uFDD0")) holder[key] = restoreString(v, table);
    } else if (v !== null && typeof v === "object") {
      for (const k of Object.keys(v)) walk(v, k);
    }
  };
  const box = { root };
  walk(box, "root");
  return JSON.stringify(box.root);
}

function fuzzCase(random) {
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  const table = [];
  const tableValue = () =>
    pick([
      () => `plain ${table.length}`,
      () => "\ud83d lone",
      () => 'quote " and \\ backslash',
      () => ({ path: "src/a.ts", n: [1, 2.5, -0.000001], nested: { q: 'x "y"' } }),
      () => [1, "two", null, { three: 3 }],
      () => 42,
      () => "\u0001\n\t",
    ])();
  const marker = () => {
    const v = tableValue();
    table.push(v);
    const kind = typeof v === "string" ? pick(["s", "s", "v"]) : "v";
    return `\uFDD0${kind}${table.length - 1}.${JSON.stringify(v).length}\uFDD1`;
  };
  const text = () => {
    const parts = [];
    for (let i = Math.floor(random() * 4); i >= 0; i--) {
      parts.push(
        pick([
          () => "word",
          () => '"',
          () => "\\",
          () => '\\"',
          () => "\n\u0002",
          () => "é😀",
          () => marker(),
          () => `"${marker()}"`,
          () => `{"k":"${marker()}"}`,
        ])(),
      );
    }
    return parts.join("");
  };
  const value = (depth) => {
    const r = random();
    if (depth > 3 || r < 0.35) return pick([() => text(), () => marker(), () => 7, () => null, () => true])();
    if (r < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    const o = {};
    for (let i = Math.floor(random() * 4); i > 0; i--) o[random() < 0.15 ? marker() : `k${i}${pick(["", '"', "\\"])}`] = value(depth + 1);
    return o;
  };
  return { body: { model: "m", messages: value(0), stream: true }, table };
}

test(`restoreText gives the bytes of the object path (parse, restoreAt, stringify) on fuzzed bodies (seed ${SEED})`, { skip }, () => {
  const random = rng(SEED);
  let marked = 0;
  for (let i = 0; i < 3000; i++) {
    const { body, table } = fuzzCase(random);
    const text = JSON.stringify(body);
    if (text.includes("\uFDD0")) marked++;
    assert.equal(restoreText(text, table), objectPath(text, table), `case ${i}: ${text}`);
  }
  assert.ok(marked > 1000, `only ${marked} cases hold a marker`);
});

test("restoreText: the exact forms (whole, bare, quoted, escaped quotes and backslashes around, keys)", { skip }, () => {
  const table = ["\ud83d", { a: 1 }, 'say "hi"'];
  const cases = [
    ['{"x":"\uFDD0s0.8\uFDD1"}', '{"x":"\\ud83d"}'],
    ['{"x":"\uFDD0v1.7\uFDD1"}', '{"x":{"a":1}}'],
    ['{"x":"\\"\uFDD0v1.7\uFDD1\\""}', '{"x":"{\\"a\\":1}"}'],
    ['{"x":"a \uFDD0s2.12\uFDD1 b"}', '{"x":"a say \\"hi\\" b"}'],
    ['{"x":"\\\\\uFDD0s0.8\uFDD1\\\\"}', '{"x":"\\\\\\ud83d\\\\"}'],
    ['{"\uFDD0s0.8\uFDD1":"\uFDD0s2.12\uFDD1"}', '{"\uFDD0s0.8\uFDD1":"say \\"hi\\""}'],
    ['["\uFDD0s0.8\uFDD1\uFDD0s0.8\uFDD1","\\\\"]', '["\\ud83d\\ud83d","\\\\"]'],
    ['{"plain":"no markers"}', '{"plain":"no markers"}'],
  ];
  for (const [text, want] of cases) {
    assert.equal(restoreText(text, table), want, text);
    assert.equal(restoreText(text, table), objectPath(text, table), text);
  }
});
