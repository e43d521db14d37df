// Issue 33, §6: the built-in providers on real recorded streams, side by side with pi-ai 1.6.0. Every stream of the
// corpus (tests/fixtures/provider-corpus/, sources in its manifest) is served to `streamBuiltin` and to the
// reference's own provider for the same wire format — whole, and in seeded random chunks with cuts inside UTF-8
// characters and between `\r` and `\n` — and the two event sequences and final messages are compared. Each
// difference must be one of DOCUMENTED (each the README's Differences entry, with its reason), which rewrite the
// reference's result into ours; anything else fails, and so does a documented difference no stream shows any more.
//   CORPUS_SEED=<n> replays the chunking; CORPUS_ONLY=<name> runs one stream; CORPUS_PRINT=1 prints the differences
//   (2: in full).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { IS_REFERENCE } from "./impl.mjs";
import { prng } from "./provider-server.mjs";
import { DOCUMENTED, both, cuts, dir, explain, firstDifference, manifest } from "./provider-corpus.mjs";

// CORPUS_PKG=<a built index.mjs> compares another build (e.g. main's, to see what a change fixed).
const ours = IS_REFERENCE ? undefined : await import(process.env.CORPUS_PKG ?? "../../pkg/dist/node/index.mjs");
const SKIP = IS_REFERENCE && "compares the built-in providers (ours) with the reference's";
const SEED = Number(process.env.CORPUS_SEED ?? Math.floor(Math.random() * 1e9));

const exercised = new Set();
const only = process.env.CORPUS_ONLY;
const entries = manifest.entries.filter((e) => !only || e.name === only);

for (const entry of entries) {
  test(`issue 33 ${entry.api} ${entry.name} (${entry.service}): ours equals the reference up to the documented differences (seed ${SEED})`, { skip: SKIP, timeout: 20_000 }, async () => {
    const bytes = new Uint8Array(readFileSync(new URL(entry.file, dir)));
    const random = prng(SEED ^ entry.name.length * 7919);
    for (const [mode, chunks] of [["whole", [bytes]], ["cut", cuts(bytes, random)]]) {
      const { theirs, mine } = await both(ours, entry, chunks);
      const { expected, actual, used } = explain(entry, theirs, mine);
      for (const id of used) exercised.add(id);
      const diff = firstDifference(actual, expected);
      if (process.env.CORPUS_PRINT && diff) console.log(entry.name, mode, JSON.stringify(diff).slice(0, Number(process.env.CORPUS_PRINT) > 1 ? 1e6 : 1500));
      assert.equal(diff, undefined, `${entry.name} (${mode}): an undocumented difference at ${diff?.path}\nours: ${JSON.stringify(diff?.ours)?.slice(0, 600)}\nreference (after documented rewrites ${used.join(", ") || "none"}): ${JSON.stringify(diff?.reference)?.slice(0, 600)}`);
    }
  });
}

test("issue 33 every documented difference is still shown by some recorded stream", { skip: SKIP || (only && "one stream only") }, () => {
  const stale = DOCUMENTED.filter((d) => !d.engine && !exercised.has(d.id)).map((d) => d.id);
  assert.deepEqual(stale, [], "documented differences no stream shows any more: remove them from the list and the README");
});
