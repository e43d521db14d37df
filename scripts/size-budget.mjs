#!/usr/bin/env node
// The download budget (issue 43): what a browser fetches before a first run, JS + wasm, gzip -9, for
//   (a) the loop with the app's own stream function: `import { agentLoop, Agent } from "agent-loop-wasm"`;
//   (b) the loop and a built-in provider: (a) plus what the first built-in request loads (the providers' JS chunk);
//   (c) everything the main entry can load: (b) and the compaction module (issue 45), each loaded on first use.
// The app (bench/bundle.mjs, `ourDownloads`) is bundled as a browser app is (esbuild: bundle, minify, ESM, es2020,
// code splitting, so the providers' dynamic import is a chunk of its own), from the built package's web entry. Sizes are deterministic: a size over
// bench/size-budget.json fails (exit 1). Then headless Chromium loads the (a) app, served gzip-compressed, and the
// test counts what it downloaded: exactly the (a) files, nothing of the providers, until the page makes a
// built-in request, which fetches the providers' chunk.
//
// Usage (after a release build): node scripts/size-budget.mjs [--write]   (--write: set the budget to today's sizes)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM, CHROMIUM_ARGS, closeServer, ourDownloads, serveGzip } from "../bench/bundle.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const requireRoot = createRequire(join(root, "package.json"));
const BUDGET = join(root, "bench", "size-budget.json");

/** What headless Chromium fetches for the app: before its first run's end, and for a built-in request after it. */
async function inChromium(dir) {
  const page = '<!doctype html><meta charset="utf-8"><title>size</title><link rel="icon" href="data:,"><script type="module" src="/app.js"></script>\n';
  const server = await serveGzip(dir, page);
  const { chromium } = requireRoot("playwright-core");
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const tab = await browser.newPage();
    let fetched = [];
    const problems = [];
    tab.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    tab.on("requestfinished", (r) => {
      const { pathname } = new URL(r.url());
      fetched.push(r.sizes().then((sizes) => ({ file: pathname === "/" ? "index.html" : basename(pathname), bytes: sizes.responseBodySize })));
    });
    const take = async () => {
      const taken = await Promise.all(fetched);
      fetched = [];
      return taken;
    };
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    await tab.waitForFunction(() => window.own !== undefined, null, { timeout: 30_000 });
    const own = await tab.evaluate(() => window.own);
    if (own.error !== undefined || own.text !== "own") throw new Error(`the page's own run: ${JSON.stringify(own)} ${problems.join("; ")}`);
    await tab.waitForLoadState("networkidle");
    const before = await take();
    const builtin = await tab.evaluate(() => window.builtin());
    if (builtin !== "built-in") throw new Error(`the page's built-in run answered ${JSON.stringify(builtin)}`);
    await tab.waitForLoadState("networkidle");
    return { before, after: await take(), problems };
  } finally {
    await browser.close();
    closeServer(server);
  }
}

const dir = mkdtempSync(join(tmpdir(), "agent-loop-size-"));
let failed = false;
try {
  const { files, firstJs, laterJs, providersJs, compactionJs, loopWasm, ...sizes } = await ourDownloads(dir);
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`(a) the loop, own stream function:   ${kib(sizes.a)} (JS ${kib(firstJs)} + wasm ${kib(loopWasm)})`);
  console.log(`(b) + a built-in provider:           ${kib(sizes.b)} (+ JS ${kib(providersJs)})`);
  console.log(`(c) everything:                      ${kib(sizes.c)} (+ the compaction module, JS ${kib(compactionJs)})`);

  if (process.argv.includes("--write")) {
    // Today's sizes rounded up to the next KiB: a change that grows a download by more than that fails.
    const budget = Object.fromEntries(Object.entries(sizes).map(([k, n]) => [k, Math.ceil(n / 1024) * 1024]));
    writeFileSync(BUDGET, `${JSON.stringify({ note: "bytes, gzip -9, JS + wasm, today's sizes rounded up to the KiB; node scripts/size-budget.mjs --write", ...budget }, null, 2)}\n`);
    console.log(`wrote ${BUDGET}`);
  } else {
    const budget = JSON.parse(readFileSync(BUDGET, "utf8"));
    for (const k of ["a", "b", "c"]) {
      if (sizes[k] > budget[k]) {
        console.log(`FAIL (${k}) ${sizes[k]} B > the budget's ${budget[k]} B (bench/size-budget.json)`);
        failed = true;
      }
    }
  }

  // The browser downloads exactly (a) for a page with its own stream function; the providers only on a built-in call.
  const { before, after, problems } = await inChromium(dir);
  const names = (list) => list.map((f) => f.file).sort();
  const expectBefore = ["index.html", ...files.first, "agent_loop_wasm_bg.wasm"].sort();
  // The providers' files; never the compaction module, which the page does not use.
  const expectAfter = files.later.filter((f) => !f.startsWith("compaction")).sort();
  const downloaded = before.filter((f) => f.file !== "index.html").reduce((n, f) => n + f.bytes, 0);
  if (JSON.stringify(names(before)) !== JSON.stringify(expectBefore) || downloaded !== sizes.a) {
    console.log(`FAIL Chromium before the built-in call fetched ${JSON.stringify(before)}; expected ${expectBefore} (${sizes.a} B)`);
    failed = true;
  }
  if (JSON.stringify(names(after)) !== JSON.stringify(expectAfter)) {
    console.log(`FAIL Chromium's built-in call fetched ${JSON.stringify(after)}; expected ${expectAfter}`);
    failed = true;
  }
  if (problems.length > 0) {
    console.log(`FAIL page errors: ${problems.join("; ")}`);
    failed = true;
  }
  if (!failed) console.log(`Chromium fetched ${kib(downloaded)} before the first run (the (a) files), the providers only on the built-in call`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
