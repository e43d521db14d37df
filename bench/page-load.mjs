#!/usr/bin/env node
// (h) Page load to a first run's end (issue 43): the time from navigation to the end of one scripted tool loop in
// headless Chromium, for ours and for pi-agent-core + pi-ai, each a browser app bundled by esbuild (bundle, minify,
// ESM, es2020, code splitting) and served gzip -9 from 127.0.0.1 with the cache off, loopback and on a throttled
// mobile network. Prints only; no assertions on times (a page whose run goes wrong fails loudly).
//
// Usage (after a release build): node bench/page-load.mjs [--reps N]
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BROWSER_APP, CHROMIUM, CHROMIUM_ARGS, buildApp, closeServer, serveGzip } from "./bundle.mjs";
import { fmtBytes, fmtMs, median, numberArg, table } from "./harness.mjs";
import { OUR_WEB_ENTRY, OUR_WEB_WASM, ROOT } from "./impl.mjs";

const requireRoot = createRequire(join(ROOT, "package.json"));

/** The network conditions, as CDP's Network.emulateNetworkConditions takes them (null: none). */
export const CONDITIONS = [
  { name: "loopback", label: "loopback", emulate: null },
  {
    name: "mobile",
    label: "throttled mobile (1.6 Mbps, 150 ms)",
    emulate: { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 },
  },
];

/** What each app imports: the loop and the stream class of its implementation, nothing else. */
const IMPORTS = {
  ours: `import { agentLoop, createAssistantMessageEventStream } from "agent-loop-wasm";\n`,
  reference: `import { agentLoop } from "@earendil-works/pi-agent-core";\nimport { createAssistantMessageEventStream } from "@earendil-works/pi-ai";\n`,
};

/** The app, the same for both after its imports: one run of a scripted tool loop (turn 1 calls `echo` with
 *  {text:"hi"}, turn 2 answers "done"), whose end sets `window.done` ({ ms since navigation, text, echoed } or
 *  { error }). */
const APP_BODY = `
const model = { id: "m", name: "m", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9/v1", reasoning: false,
  input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8192, maxTokens: 1024 };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const convertToLlm = (messages) => messages;
let echoed = null;
const echo = {
  name: "echo",
  label: "Echo",
  description: "Returns its text.",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (toolCallId, params, signal, onUpdate) => {
    echoed = params.text;
    return { content: [{ type: "text", text: params.text }], details: {} };
  },
};

let turns = 0;
function streamFn(model) {
  const stream = createAssistantMessageEventStream();
  const first = turns++ === 0;
  const block = first ? { type: "toolCall", id: "call_1", name: "echo", arguments: { text: "hi" } } : { type: "text", text: "done" };
  const message = { role: "assistant", content: [block], api: model.api, provider: model.provider, model: model.id, usage,
    stopReason: first ? "toolUse" : "stop", timestamp: Date.now() };
  queueMicrotask(() => {
    const partial = { ...message, content: [] };
    stream.push({ type: "start", partial });
    if (first) {
      partial.content = [{ ...block, arguments: {} }];
      stream.push({ type: "toolcall_start", contentIndex: 0, partial });
      stream.push({ type: "toolcall_delta", contentIndex: 0, delta: JSON.stringify(block.arguments), partial });
      partial.content = [block];
      stream.push({ type: "toolcall_end", contentIndex: 0, toolCall: block, partial });
    } else {
      partial.content = [{ type: "text", text: "" }];
      stream.push({ type: "text_start", contentIndex: 0, partial });
      partial.content = [block];
      stream.push({ type: "text_delta", contentIndex: 0, delta: block.text, partial });
      stream.push({ type: "text_end", contentIndex: 0, content: block.text, partial });
    }
    stream.push({ type: "done", reason: message.stopReason, message });
    stream.end(message);
  });
  return stream;
}

async function run() {
  const context = { systemPrompt: "You are a page.", messages: [], tools: [echo] };
  const stream = agentLoop([{ role: "user", content: "echo hi", timestamp: Date.now() }], context, { model, convertToLlm }, undefined, streamFn);
  for await (const _ of stream);
  const messages = await stream.result();
  const last = messages.at(-1);
  return last.content.filter((b) => b.type === "text").map((b) => b.text).join("");
}

run().then(
  (text) => (window.done = { ms: performance.now(), text, echoed, turns }),
  (e) => (window.done = { error: String(e?.stack ?? e) }),
);
`;

const PAGE = '<!doctype html><meta charset="utf-8"><title>page load</title><link rel="icon" href="data:,"><script type="module" src="/app.js"></script>\n';

/** Bundles pi's app into `out` as a browser app is bundled (Node built-ins that pi-ai names behind runtime checks
 *  left out, as bench/bundle.mjs does for its sizes). */
async function buildReferenceApp(out) {
  const esbuild = await import("esbuild");
  await esbuild.build({
    stdin: { contents: IMPORTS.reference + APP_BODY, resolveDir: ROOT, sourcefile: "app.js", loader: "js" },
    ...BROWSER_APP,
    external: ["node:*"],
    outdir: out,
    logLevel: "error",
  });
}

/** One page load in a fresh context of `browser`: ms from navigation to the run's end, and the bytes received
 *  (response bodies as sent, gzip). Throws when the run failed, answered other than "done", or skipped the tool. */
async function loadOnce(browser, url, condition) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    if (condition.emulate) await cdp.send("Network.emulateNetworkConditions", condition.emulate);
    const problems = [];
    const sizes = [];
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on("requestfinished", (r) => sizes.push(r.sizes().then((s) => s.responseBodySize)));
    await page.goto(url, { waitUntil: "commit" });
    await page.waitForFunction(() => window.done !== undefined, null, { timeout: 60_000, polling: 50 });
    const done = await page.evaluate(() => window.done);
    if (done.error !== undefined || done.text !== "done" || done.echoed !== "hi" || done.turns !== 2) {
      throw new Error(`the page's run at ${url}: ${JSON.stringify(done)} ${problems.join("; ")}`);
    }
    if (problems.length > 0) throw new Error(`${url}: ${problems.join("; ")}`);
    await page.waitForLoadState("networkidle");
    const bytes = (await Promise.all(sizes)).reduce((n, b) => n + b, 0);
    return { ms: done.ms, bytes };
  } finally {
    await context.close();
  }
}

/**
 * (h) Median ms from navigation to a first run's end, ours and pi's, loopback and throttled, `reps` loads each
 * (alternating, a fresh browser context and the cache off every time, one untimed load of each first). Returns
 * { reps, chromium, esbuild, conditions: [{ name, label, ours, reference }] } where each side is
 * { times, median, bytes }, or { skipped } without our built web entry.
 */
export async function benchPageLoad({ reps = 7 } = {}) {
  if (!existsSync(OUR_WEB_ENTRY) || !existsSync(OUR_WEB_WASM)) {
    return { skipped: `${OUR_WEB_ENTRY.slice(ROOT.length + 1)} is absent (web entry not built yet)` };
  }
  const dirs = { ours: mkdtempSync(join(tmpdir(), "agent-loop-page-ours-")), reference: mkdtempSync(join(tmpdir(), "agent-loop-page-pi-")) };
  const servers = [];
  let browser;
  try {
    await buildApp(dirs.ours, IMPORTS.ours + APP_BODY);
    await buildReferenceApp(dirs.reference);
    const urls = {};
    for (const side of ["ours", "reference"]) {
      const server = await serveGzip(dirs[side], PAGE);
      servers.push(server);
      urls[side] = `http://127.0.0.1:${server.address().port}/`;
    }
    const { chromium } = requireRoot("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    for (const side of ["ours", "reference"]) await loadOnce(browser, urls[side], CONDITIONS[0]);
    const conditions = [];
    for (const condition of CONDITIONS) {
      const loads = { ours: [], reference: [] };
      for (let r = 0; r < reps; r++) {
        for (const side of r % 2 ? ["reference", "ours"] : ["ours", "reference"]) loads[side].push(await loadOnce(browser, urls[side], condition));
      }
      const summary = (xs) => ({ times: xs.map((x) => x.ms), median: median(xs.map((x) => x.ms)), bytes: median(xs.map((x) => x.bytes)) });
      conditions.push({ name: condition.name, label: condition.label, ours: summary(loads.ours), reference: summary(loads.reference) });
    }
    const esbuild = await import("esbuild");
    return { reps, chromium: browser.version(), esbuild: esbuild.version, conditions };
  } finally {
    await browser?.close();
    for (const server of servers) closeServer(server);
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  }
}

/** The printed table of `benchPageLoad`'s result. */
export function pageLoadTable(r) {
  const rows = r.conditions.map((c) => [
    c.label,
    fmtMs(c.ours.median),
    fmtMs(c.reference.median),
    `${(c.ours.median / c.reference.median).toFixed(2)}×`,
    fmtBytes(c.ours.bytes),
    fmtBytes(c.reference.bytes),
    `${fmtMs(Math.min(...c.ours.times))}–${fmtMs(Math.max(...c.ours.times))} / ${fmtMs(Math.min(...c.reference.times))}–${fmtMs(Math.max(...c.reference.times))}`,
  ]);
  return table(["network", "ours", "pi", "ours/pi", "bytes ours", "bytes pi", "range ours / pi"], rows);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = await benchPageLoad({ reps: numberArg("reps", 7) });
  if (r.skipped) {
    console.log(`(h) SKIPPED: ${r.skipped}`);
  } else {
    console.log(`(h) navigation to a first run's end, headless Chromium ${r.chromium}, gzip -9, cache off; median of ${r.reps} (esbuild ${r.esbuild})`);
    console.log(pageLoadTable(r));
  }
}
