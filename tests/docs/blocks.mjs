// The code blocks of the user docs (README.md and docs/*.md but the spec and the issue list), each with the directive
// that says how the docs test checks it. A directive is an HTML comment on the line before the fence (invisible on
// GitHub and npm):
//
//   (none)                          a js/ts program: run as written, must exit 0
//   <!-- test: expect "text" -->    a program whose output must contain "text" (repeatable: expect "a" expect "b")
//   <!-- test: stdin "y\n" -->      a program that reads its answers from standard input
//   <!-- test: output -->           this block (text) is the exact output of the program just above it
//   <!-- test: output both -->      … of each of the two programs just above it (a pair that does the same thing)
//   <!-- test: same-calls -->       a program (also with expect, or after a handler's body) that must get the same
//                                   replies from the scripted model as the program just above it (past that
//                                   program's output block, if it has one): as many requests, the same tool calls
//                                   with the same arguments, in the same order, at least one call (docs/from-ai-sdk.md's
//                                   pairs: the AI SDK's program, then ours)
//   <!-- test: fragment -->         part of a program by design: type-checked against the package's types, with the
//                                   names tests/docs/fragment-globals.d.ts declares (agent, model, tools, …)
//   <!-- test: handler POST /api/chat {json} -->
//                                   a module exporting a request handler (`POST`, `GET`, or a Worker's
//                                   `default.fetch`): called with that request; must answer 2xx (expect works too)
//   <!-- test: not-code -->         a text, a diagram, an output shown without its program (never js/ts/sh)
//
// html blocks are pages: served beside the installed package and loaded in headless Chromium (no page error, no
// failed request). sh blocks may only hold `npm install …` lines (every package named must be one
// tests/docs/package.json pins) and the repository's two commands, scripts/demo and scripts/test.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Not user docs: the spec and the issue list (their blocks are requirement text), the generated API reference. */
const NOT_USER_DOCS = new Set(["SPEC.md", "ISSUES.md"]);

export function docFiles() {
  const docs = readdirSync(join(ROOT, "docs"), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md") && !NOT_USER_DOCS.has(e.name))
    .map((e) => `docs/${e.name}`)
    .sort();
  return ["README.md", ...docs];
}

const CODE = new Set(["js", "mjs", "javascript", "ts", "typescript", "jsx", "tsx"]);
const SHELL = new Set(["sh", "bash", "shell", "console"]);

/** Parses one directive text ("expect \"a\" stdin \"b\"", "handler POST /x {…}") into an object. */
export function parseDirective(text, where) {
  const d = { kind: "run", expect: [], stdin: undefined, sameCalls: false, both: false };
  let rest = text.trim();
  const word = /^([a-z-]+)\s*/.exec(rest);
  if (word && ["run", "fragment", "output", "handler", "not-code"].includes(word[1])) {
    d.kind = word[1];
    rest = rest.slice(word[0].length);
  }
  if (d.kind === "output" && /^both\b/.test(rest)) {
    d.both = true;
    rest = rest.slice(4).trim();
  }
  if (d.kind === "handler") {
    const m = /^(GET|POST|PUT|DELETE)\s+(\S+)\s*(.*)$/s.exec(rest);
    if (!m) throw new Error(`${where}: a handler directive is "handler METHOD /path [json body]"`);
    d.method = m[1];
    d.path = m[2];
    rest = m[3];
    const body = /^(\{.*\}|\[.*\])(?=\s*(?:expect|same-calls|$))/s.exec(rest);
    if (body) {
      d.body = JSON.parse(body[1]);
      rest = rest.slice(body[0].length);
    }
  }
  const words = /\s*(?:(same-calls)|(expect|stdin)\s+("(?:[^"\\]|\\.)*"))/g;
  for (const m of rest.matchAll(words)) {
    if (m[1]) d.sameCalls = true;
    else if (m[2] === "expect") d.expect.push(JSON.parse(m[3]));
    else d.stdin = JSON.parse(m[3]);
  }
  if (d.sameCalls && !["run", "handler"].includes(d.kind)) throw new Error(`${where}: same-calls is for programs (run or handler)`);
  const leftover = rest.replace(words, "").trim();
  if (leftover) throw new Error(`${where}: cannot read "${leftover}" in the directive "${text}"`);
  return d;
}

/** The fenced blocks of one markdown file: { file, line, lang, code, directive }. */
export function blocksOf(file, text = readFileSync(join(ROOT, file), "utf8")) {
  const lines = text.split("\n");
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !lines[i].startsWith(`${indent}${fence}`); i++) body.push(lines[i].slice(indent.length));
    let j = start - 1;
    while (j >= 0 && lines[j].trim() === "") j--;
    const comment = j >= 0 ? /^\s*<!--\s*test:\s*(.*?)\s*-->\s*$/.exec(lines[j]) : null;
    const where = `${file}:${start + 1}`;
    out.push({
      file,
      line: start + 1,
      where,
      lang: lang.toLowerCase(),
      code: body.join("\n") + "\n",
      directive: comment ? parseDirective(comment[1], where) : parseDirective("", where),
      explicit: Boolean(comment),
    });
  }
  return out;
}

export const isCode = (b) => CODE.has(b.lang);
export const isShell = (b) => SHELL.has(b.lang);
export const isHtml = (b) => b.lang === "html";
