// Every requirement id and issue number the code cites resolves inside the repository: the ids in
// docs/SPEC.md, the issue numbers in docs/ISSUES.md. Reads files as text only, so it needs no build.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
// This file names made-up ids on purpose (the resolver's self-check), so it is not scanned.
const SELF = fileURLToPath(import.meta.url);
const SPEC = readFileSync(join(ROOT, "docs/SPEC.md"), "utf8");
const ISSUES = readFileSync(join(ROOT, "docs/ISSUES.md"), "utf8");

const SCANNED = ["src", "pkg-template", "tests"];
const TEXT_FILE = /\.(rs|js|mjs|cjs|ts|mts|json|html|md|toml)$/;
// Installed dependencies and generated output are not the project's text.
const SKIPPED_DIRS = new Set(["node_modules", "artifacts", ".git"]);

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* files(path);
    } else if (TEXT_FILE.test(entry.name) && path !== SELF) {
      yield path;
    }
  }
}

// The spec's id families (docs/SPEC.md, "Conventions"), the chapter each belongs to.
const CHAPTER = { G: "0", R: "0", API: "1", S: "2", L: "3", T: "4", A: "5", P: "6", E: "8", K: "9", O: "11", U: "12", M: "13" };
const CITED = [
  // L-3.6, API-1.5.4, G-1, E-8.4.2: a requirement or a section.
  /\b(?:API|G|R|S|L|T|A|P|E|K|O|U|M)-\d+(?:\.\d+)*\b/g,
  // D1–D8, their points (D2.3) and their traces (D2-a).
  /\bD[1-8](?:\.\d+|-[a-z]\b)?\b/g,
  // Appendix A's acceptance items: AC-L12, AC-A10.
  /\bAC-[A-Z]+\d+\b/g,
  // The normative traces T1–T9 are cited as "trace T5" (a bare T5 is too common to scan for).
  /\b[Tt]races? T\d+\b/g,
];

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The spec text holds `id` as a whole id (L-3.2 is not found inside L-3.2.1). */
function literal(text, id) {
  return new RegExp(`(?<![\\w.-])${escape(id)}(?![\\w]|\\.\\d)`).test(text);
}

/** Whether an id cited in code resolves in the spec text. */
function resolves(spec, cited) {
  const trace = /^[Tt]races? (T\d+)$/.exec(cited);
  if (trace) return new RegExp(`\\*\\*${trace[1]} `).test(spec);
  const d = /^D([1-8])(?:\.\d+|-[a-z])?$/.exec(cited);
  if (d) {
    if (cited.length === 2) return new RegExp(`^### ${cited} `, "m").test(spec);
    return literal(spec, cited.includes("-") ? `Trace ${cited}` : cited);
  }
  const ac = /^AC-([A-Z]+)(\d+)$/.exec(cited);
  if (ac) {
    if (literal(spec, cited)) return true;
    // A range such as "AC-L12–L14" names the items between.
    const n = Number(ac[2]);
    for (const m of spec.matchAll(new RegExp(`\\bAC-${ac[1]}(\\d+)–${ac[1]}(\\d+)\\b`, "g"))) {
      if (Number(m[1]) <= n && n <= Number(m[2])) return true;
    }
    return false;
  }
  if (literal(spec, cited)) return true;
  // A section number with its chapter's prefix names the section (SPEC.md, "Conventions").
  const section = /^([A-Z]+)-(\d+)\.(\d+)$/.exec(cited);
  return !!section && CHAPTER[section[1]] === section[2] && new RegExp(`^### ${section[2]}\\.${section[3]} `, "m").test(spec);
}

/** Every cited thing in the scanned trees, with where it is first cited. */
function citations(patterns) {
  const found = new Map();
  for (const top of SCANNED) {
    for (const path of files(join(ROOT, top))) {
      const lines = readFileSync(path, "utf8").split("\n");
      lines.forEach((line, i) => {
        for (const pattern of patterns) {
          for (const m of line.matchAll(pattern)) {
            if (!found.has(m[0])) found.set(m[0], `${relative(ROOT, path)}:${i + 1}`);
          }
        }
      });
    }
  }
  return found;
}

test("the resolver finds real ids and refuses made-up ones", () => {
  for (const id of ["L-3.6", "L-3.1.3", "API-1.6", "D2", "D2.3", "D1-a", "D2-c", "AC-L13", "trace T5", "G-1.1", "K-9.3", "A-5.10.2", "O-11.2.4", "O-11.1", "U-12.3", "M-13.3"]) {
    assert.ok(resolves(SPEC, id), `${id} should resolve`);
  }
  // Each of these looks like an id but names nothing in the spec: a section id under the wrong chapter
  // (L-4.1), a missing section or point, a trace or acceptance item that is not there.
  for (const id of ["L-4.1", "L-3.99", "L-3.1.9", "D2-z", "D2.9", "AC-L99", "trace T10", "E-8.9"]) {
    assert.ok(!resolves(SPEC, id), `${id} should not resolve`);
  }
});

test("every requirement id cited in src/, pkg-template/ and tests/ resolves in docs/SPEC.md", () => {
  const cited = citations(CITED);
  assert.ok(cited.size > 100, `only ${cited.size} ids found: is the scan broken?`);
  const missing = [...cited].filter(([id]) => !resolves(SPEC, id)).map(([id, where]) => `${id} (${where})`);
  assert.deepEqual(missing, [], `cited but not in docs/SPEC.md:\n  ${missing.join("\n  ")}`);
});

test("every issue number cited in src/, pkg-template/ and tests/ has its entry in docs/ISSUES.md", () => {
  // "issue 13", "Issue 14.2", "issues 8 and 15", "issue 13 / …".
  const cited = citations([/\b[Ii]ssues? \d+(?:\.\d+)?(?:(?:,| and| or| \/) \d+(?:\.\d+)?)*/g]);
  const numbers = new Map();
  for (const [phrase, where] of cited) {
    for (const m of phrase.matchAll(/\d+(?:\.\d+)?/g)) if (!numbers.has(m[0])) numbers.set(m[0], where);
  }
  assert.ok(numbers.size > 0, "no issue numbers found: is the scan broken?");
  const missing = [...numbers]
    .filter(([n]) => {
      const [major, minor] = n.split(".");
      const heading = new RegExp(`^## Issue ${major}$`, "m").test(ISSUES);
      return !heading || (minor !== undefined && !ISSUES.includes(`**${n}**`));
    })
    .map(([n, where]) => `issue ${n} (${where})`);
  assert.deepEqual(missing, [], `cited but not in docs/ISSUES.md:\n  ${missing.join("\n  ")}`);
});
