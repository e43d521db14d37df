// Random (schema, args) pairs, run through the reference validateToolArguments; writes cases.json.
import { validateToolArguments } from "@earendil-works/pi-ai";
import fs from "fs";
import { generator } from "./schemas.mjs";
const N = Number(process.argv[3] ?? 2000);
const { pair } = generator(Number(process.argv[2] ?? 1));
const cases = [];
function answer(root, args) {
  try {
    const ok = validateToolArguments({ name: "t", parameters: root }, { name: "t", arguments: structuredClone(args) });
    return { ok: ok === undefined ? null : ok };
  } catch (e) {
    return { err: e.message };
  }
}
const nest = (n, f) => (n === 0 ? f() : nest(n - 1, f));
for (let i = 0; i < N; i++) {
  const [root, args] = pair();
  // Asked twice, the second time 2,000 frames deeper: a schema that recurses without going deeper into the value
  // overflows pi-schema's stack, and whether that overflow is caught on the way (pi-schema's coercion catches what
  // its checks throw) depends on where it happens, so the answer can change with the stack and the JIT's state. Such
  // a case is recorded as unstable and not compared.
  const first = answer(root, args);
  const second = nest(2000, () => answer(root, args));
  const expected = JSON.stringify(first) === JSON.stringify(second) ? first : { unstable: [first, second] };
  cases.push({ schema: root, args, expected });
}
fs.writeFileSync(process.argv[4] ?? "cases.json", JSON.stringify(cases));
const errs = cases.filter(c => c.expected.err).length;
const unstable = cases.filter(c => c.expected.unstable).length;
console.log(`wrote ${cases.length} cases, ${errs} errors, ${unstable} where pi-ai's answer changed with its stack`);
