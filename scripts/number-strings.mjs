#!/usr/bin/env node
// Writes tests/fixtures/number-strings.txt: 2,398 doubles (edge cases, powers of ten, random bits, short decimals, large integers) (their bits in hex) and what this engine's `String(n)`
// answers for each: the Rust reference of `core::text::number::js_number_to_string` is held to it (`cargo test
// number_strings`); in the wasm build the engine answers itself (issue 43).
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
