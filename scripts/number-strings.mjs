#!/usr/bin/env node
// Writes two fixtures of this engine's number conversions, which the wasm build asks the engine for (issue 43) and
// native builds compute in Rust, held to them:
// - tests/fixtures/number-strings.txt: 2,398 doubles (edge cases, powers of ten, random bits, short decimals, large
//   integers), their bits in hex and `String(n)` (`js_number_to_string`'s Rust reference: `cargo test number_strings`);
// - tests/fixtures/number-literals.txt: JSON number literals (random digits and exponents, long mantissas, the exact
//   midpoints between neighbouring doubles, the range's edges) and the bits of `Number(text)` (`json_number`'s float,
//   Rust's `str::parse` natively: `cargo test number_literals`; the wasm build: tests/js/number-literals.test.mjs).
// Seeded: the same file on every run.
//   node scripts/number-strings.mjs
import { writeFileSync } from "node:fs";

let seed = 0x9e3779b9;
const next = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};
const view = new DataView(new ArrayBuffer(8));
const fromBits = (hi, lo) => {
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  return view.getFloat64(0);
};
const bits = (x) => {
  view.setFloat64(0, x);
  return view.getBigUint64(0).toString(16).padStart(16, "0");
};

const values = [0, -0, 1, -1, 0.1, 0.5, 1e21, 1e-7, 1e-6, 5e-324, 2.2250738585072014e-308, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity];
for (let e = -330; e <= 310; e++) values.push(Number(`1e${e}`), Number(`9.999999999999999e${e}`));
for (let i = 0; i < 800; i++) values.push(fromBits(next(), next())); // any bits: every exponent, NaNs included
for (let i = 0; i < 150; i++) values.push((next() % 2_000_000) / 1000 - 1000); // short decimals
for (let i = 0; i < 150; i++) values.push(next() * 2 ** (next() % 40)); // large integers
const lines = values.map((x) => `${bits(x)} ${String(x)}`);
writeFileSync(new URL("../tests/fixtures/number-strings.txt", import.meta.url), `${lines.join("\n")}\n`);
console.log(`wrote ${lines.length} numbers`);

/** The exact decimal text of the midpoint between finite positive `x` and the next double up. */
const midpoint = (x) => {
  view.setFloat64(0, x);
  const raw = view.getBigUint64(0);
  const biased = Number(raw >> 52n);
  const fraction = raw & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  // x = mantissa * 2^e; the midpoint (2 * mantissa + 1) * 2^(e - 1)
  const e = (biased === 0 ? 1 : biased) - 1075;
  const odd = 2n * mantissa + 1n;
  const shift = e - 1;
  if (shift >= 0) return (odd << BigInt(shift)).toString();
  const digits = (odd * 5n ** BigInt(-shift)).toString().padStart(-shift + 1, "0");
  return `${digits.slice(0, digits.length + shift)}.${digits.slice(digits.length + shift)}`.replace(/^0+(?=\d)/, "");
};
const digitsOf = (n) => Array.from({ length: n }, () => next() % 10).join("");
const literals = [
  "0", "-0", "1", "-1", "0.1", "1e400", "-1e400", "1e-400", "-1e-400", "9007199254740993", "18446744073709551616",
  "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "2.2250738585072011e-308",
  "2.2250738585072014e-308", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
];
for (let i = 0; i < 600; i++) {
  const int = `${1 + (next() % 9)}${digitsOf(next() % 20)}`;
  const fraction = next() % 3 === 0 ? "" : `.${digitsOf(1 + (next() % 25))}`;
  const exponent = next() % 4 === 0 ? "" : `e${next() % 2 ? "-" : ""}${next() % 345}`;
  literals.push(`${next() % 5 === 0 ? "-" : ""}${int}${fraction}${exponent}`);
}
for (let i = 0; i < 100; i++) literals.push(`${1 + (next() % 9)}.${digitsOf(100 + (next() % 700))}e${(next() % 600) - 300}`);
for (let i = 0; i < 300; i++) {
  const x = Math.abs(fromBits(next(), next()));
  if (Number.isFinite(x) && x < Number.MAX_VALUE) literals.push(midpoint(x));
}
for (const x of [5e-324, 1, 0.1, 2.2250738585072014e-308, 9007199254740992]) literals.push(midpoint(x));
const literalLines = literals.map((text) => `${text} ${bits(Number(text))}`);
writeFileSync(new URL("../tests/fixtures/number-literals.txt", import.meta.url), `${literalLines.join("\n")}\n`);
console.log(`wrote ${literalLines.length} literals`);
