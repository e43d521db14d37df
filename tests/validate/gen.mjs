// Random (schema, args) pairs, run through the reference validateToolArguments; writes cases.json.
import { validateToolArguments } from "@earendil-works/pi-ai";
import fs from "fs";
import { generator } from "./schemas.mjs";
const N = Number(process.argv[3] ?? 2000);
const { pick, chance, value, schema, KEYS } = generator(Number(process.argv[2] ?? 1));
const cases = [];
for (let i = 0; i < N; i++) {
  const defs = [];
  const $defs = {};
  if (chance(0.3)) { $defs.d1 = schema(2, ["#"]); defs.push("#/$defs/d1"); if (chance(0.3)) defs.push("#/$defs/missing"); }
  let root = schema(3, defs);
  if (chance(0.7)) { root = { type: "object", properties: { a: schema(2, defs), b: schema(2, defs), n: schema(1, defs) }, required: chance(0.5) ? ["a"] : [] , ...(chance(0.3) ? { additionalProperties: false } : {}) }; }
  if (defs.length > 0 && typeof root === "object") root.$defs = $defs;
  let args = chance(0.8) ? { } : value(2);
  if (typeof args === "object" && args !== null && !Array.isArray(args)) {
    for (const k of ["a", "b", "n", pick(KEYS)]) if (chance(0.6)) args[k] = value(2);
  }
  let expected;
  try { expected = { ok: validateToolArguments({ name: "t", parameters: root }, { name: "t", arguments: structuredClone(args) }) }; }
  catch (e) { expected = { err: e.message }; }
  if (expected.ok === undefined && !("err" in expected)) expected = { ok: null };
  cases.push({ schema: root, args, expected });
}
fs.writeFileSync(process.argv[4] ?? "cases.json", JSON.stringify(cases));
const errs = cases.filter(c => c.expected.err).length;
console.log(`wrote ${cases.length} cases, ${errs} errors`);
