// End-to-end test of the demo page (SPEC K-9.3) in headless Chromium, on the offline model:
//   1. the page loads the package from /pkg/dist/web/index.js, with the offline model selected by default;
//   2. the design document's example: text streams in progressively, two tool cards (list_files, read_file)
//      finish, and their timeline bars overlap in time (read_file, the 10 ms tool, ends first);
//   3. a screenshot is saved to tests/artifacts/demo.png;
//   4. steering while a tool runs: the steering message joins the next turn;
//   5. abort mid-run: the run ends at once, the running tool reports the abort, and Send works again;
//   6. export a snapshot, reset, import it: the transcript comes back, and the restored agent answers.
//
// Usage: node tests/e2e/demo.e2e.mjs      (after node scripts/build.mjs; needs playwright-core and /usr/bin/chromium)
// Starts node scripts/serve.mjs on a free port. Exit code 0 when every step passed.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const artifacts = join(root, "tests", "artifacts");
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--no-first-run", "--disable-sync", "--disable-quic",
];
const started = Date.now();
console.log("\n=== demo e2e: tests/e2e/demo.e2e.mjs (www/ on the offline model, headless Chromium)");
const log = (message) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}`);

if (!existsSync(join(root, "pkg", "dist", "web", "index.js"))) {
  console.error("demo e2e: pkg/dist/web/index.js is missing; run node scripts/build.mjs first");
  process.exit(1);
}
const { chromium } = createRequire(join(root, "package.json"))("playwright-core");

// ------------------------------------------------------------------------------------------------
// Server and browser
// ------------------------------------------------------------------------------------------------
function startServer() {
  const child = spawn(process.execPath, [join(root, "scripts", "serve.mjs"), "--port", "0"], {
    cwd: root, stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve.mjs did not print its URL:\n${out}`)), 10_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/http:\/\/localhost:(\d+)\/www\//);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: `http://127.0.0.1:${m[1]}/www/`, origin: `http://127.0.0.1:${m[1]}` });
      }
    });
    child.stderr.on("data", (chunk) => { out += chunk; });
    child.on("exit", (code) => reject(new Error(`serve.mjs exited with ${code}:\n${out}`)));
  });
}

const server = await startServer();
log(`server: ${server.url}`);
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true, colorScheme: "light" });
const page = await context.newPage();
page.setDefaultTimeout(20_000);
const pageErrors = [];
page.on("pageerror", (error) => pageErrors.push(`pageerror: ${error.message}`));
page.on("console", (m) => { if (m.type() === "error") pageErrors.push(`console.error: ${m.text()}`); });

const $$count = (selector) => page.locator(selector).count();
const waitIdle = (timeout = 20_000) => page.waitForSelector('[data-testid="status"][data-state="idle"]', { timeout });
async function send(text) {
  await page.fill('[data-testid="prompt"]', text);
  assert.equal(await page.isEnabled('[data-testid="send"]'), true, "Send is enabled when idle with text");
  await page.click('[data-testid="send"]');
}
const texts = (selector) => page.locator(selector).allTextContents();

let failed = false;
try {
  // ----------------------------------------------------------------------------------------------
  log("1. the page loads, offline model by default");
  await page.goto(`${server.url}?offline`); // the offline default, even if a local model server runs
  await page.waitForSelector('body[data-ready="true"]');
  // The server: / redirects to /www/, and the wasm is served as application/wasm.
  const redirect = await fetch(`${server.origin}/`, { redirect: "manual" });
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.get("location"), "/www/");
  const wasm = await fetch(`${server.origin}/pkg/dist/web/agent_loop_wasm_bg.wasm`, { method: "HEAD" });
  assert.equal(wasm.headers.get("content-type"), "application/wasm");
  assert.equal(await page.inputValue('[data-testid="api"]'), "offline");
  assert.match((await page.textContent('[data-testid="offline-note"]')).toLowerCase(), /runs in your browser, no network/);
  assert.match(await page.textContent('[data-testid="version"]'), /^v\d+\.\d+\.\d+/);
  assert.equal(await page.isDisabled('[data-testid="abort"]'), true, "Abort is disabled when idle");

  // ----------------------------------------------------------------------------------------------
  log("2. the design document's example: streaming text, two tools in parallel, an answer");
  await send("List the files, then read the README");
  assert.equal(await page.getAttribute('[data-testid="status"]', "data-state"), "running");
  // Sample the first text block in the page while it streams: its length must grow in several steps.
  const lengths = await page.evaluate(() => new Promise((resolve, reject) => {
    const seen = [];
    const t0 = performance.now();
    (function sample() {
      const block = document.querySelector('[data-testid="assistant-text"]');
      if (block) {
        const n = block.textContent.length;
        if (seen[seen.length - 1] !== n) seen.push(n);
        if (!block.classList.contains("streaming")) return resolve(seen);
      }
      if (performance.now() - t0 > 15_000) return reject(new Error(`text never finished streaming: ${seen}`));
      setTimeout(sample, 4);
    })();
  }));
  const growing = lengths.filter((n) => n > 0);
  assert.ok(growing.length >= 3, `text appeared progressively (lengths seen: ${lengths.join(", ")})`);
  for (let i = 1; i < growing.length; i++) assert.ok(growing[i] > growing[i - 1], `text only grows: ${growing}`);
  log(`   streamed text lengths: ${growing.join(" → ")}`);

  await page.waitForFunction(() => document.querySelectorAll('[data-testid="tool-card"][data-finished="true"]').length === 2);
  await waitIdle();
  const cards = await page.$$eval('[data-testid="tool-card"]', (els) => els.map((e) => ({
    name: e.dataset.toolName, status: e.dataset.status, id: e.dataset.toolCallId,
    args: e.querySelector('[data-testid="tool-args"]').textContent,
    result: e.querySelector('[data-testid="tool-result"]').textContent,
    duration: e.querySelector('[data-testid="tool-duration"]').textContent,
  })));
  assert.deepEqual(cards.map((c) => c.name), ["list_files", "read_file"]);
  assert.deepEqual(cards.map((c) => c.status), ["done", "done"]);
  assert.match(cards[0].args, /"path":\s*"\."/);
  assert.match(cards[0].result, /README\.md/);
  assert.match(cards[1].result, /# demo-project/);
  for (const c of cards) assert.match(c.duration, /\d+ ms/, `${c.name} shows a duration`);

  const bars = await page.$$eval('[data-testid="timeline-bar"][data-kind="tool"]', (els) => els.map((e) => ({
    name: e.dataset.toolName, start: Number(e.dataset.start), end: Number(e.dataset.end),
  })));
  assert.equal(bars.length, 2, "two tool bars on the timeline");
  const [list, read] = [bars.find((b) => b.name === "list_files"), bars.find((b) => b.name === "read_file")];
  for (const b of bars) assert.ok(Number.isFinite(b.start) && Number.isFinite(b.end) && b.end > b.start, `bar ${JSON.stringify(b)}`);
  assert.ok(Math.max(list.start, read.start) < Math.min(list.end, read.end),
    `the two tool bars overlap in time: ${JSON.stringify(bars)}`);
  assert.ok(read.end < list.end, "read_file (10 ms) finishes before list_files (100 ms), as in the design document");
  log(`   timeline: list_files ${list.start}→${list.end} ms, read_file ${read.start}→${read.end} ms (overlapping)`);

  const answers = await texts('[data-testid="assistant-text"]');
  assert.equal(answers.length, 2, "a text before the tools, and the answer");
  assert.match(answers[1], /holds 6 entries/);
  assert.match(answers[1], /README\.md/);
  assert.ok((await $$count('[data-testid="thinking"]')) >= 1, "thinking blocks are shown");
  assert.ok((await $$count('#event-log li[data-type="tool_execution_end"]')) === 2, "the raw event log lists the events");

  // ----------------------------------------------------------------------------------------------
  log("3. screenshot");
  await mkdir(artifacts, { recursive: true });
  await page.waitForTimeout(150); // let the last frame paint
  await page.screenshot({ path: join(artifacts, "demo.png") });
  log(`   saved ${join("tests", "artifacts", "demo.png")}`);

  // ----------------------------------------------------------------------------------------------
  log("4. steering while a tool runs");
  await send("Wait 2 seconds");
  await page.waitForSelector('[data-testid="tool-card"][data-tool-name="wait"][data-status="running"]');
  await page.fill('[data-testid="prompt"]', "Also, what time is it?");
  await page.click('[data-testid="steer"]');
  await page.waitForSelector('[data-testid="queued-message"]');
  await waitIdle();
  assert.equal(await $$count('[data-testid="queued-message"]'), 0, "the steering message was consumed");
  assert.deepEqual(await texts(".msg.user.steer .md"), ["Also, what time is it?"]);
  await page.waitForSelector('[data-testid="tool-card"][data-tool-name="get_time"][data-status="done"]');

  // ----------------------------------------------------------------------------------------------
  log("5. abort mid-run");
  await send("Wait 5 seconds");
  await page.waitForSelector('[data-testid="tool-card"][data-tool-name="wait"][data-status="running"] >> nth=-1');
  await page.waitForTimeout(300);
  const abortClicked = Date.now();
  await page.click('[data-testid="abort"]');
  await waitIdle(3_000);
  log(`   idle ${Date.now() - abortClicked} ms after Abort`);
  await page.waitForSelector('[data-testid="run-aborted"]');
  const waitCard = page.locator('[data-testid="tool-card"][data-tool-name="wait"]').last();
  assert.equal(await waitCard.getAttribute("data-status"), "error");
  assert.match(await waitCard.locator('[data-testid="tool-result"]').textContent(), /Aborted after \d+ ms/);
  assert.equal(await page.isDisabled('[data-testid="abort"]'), true);
  // The UI is usable again: a new prompt runs to the end.
  const assistantsBefore = await $$count('[data-testid="assistant-message"]');
  await send("Calculate (17 + 25) * 3 / 2");
  await waitIdle();
  assert.ok((await $$count('[data-testid="assistant-message"]')) >= assistantsBefore + 2);
  assert.match((await texts('[data-testid="assistant-text"]')).at(-1), /= 63/);

  // ----------------------------------------------------------------------------------------------
  log("6. export a snapshot, reset, import it");
  const signature = async () => ({
    users: await texts('[data-testid="user-message"] .md'),
    answers: await texts('[data-testid="assistant-text"]'),
    tools: await page.$$eval('[data-testid="tool-card"]', (els) => els.map((e) => `${e.dataset.toolName}:${e.dataset.status}`)),
  });
  const before = await signature();
  const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="export"]')]);
  const snapshotPath = join(artifacts, "demo-snapshot.json");
  await download.saveAs(snapshotPath);
  const snapshot = JSON.parse(await readFile(snapshotPath, "utf8"));
  assert.equal(snapshot.format, "agent-loop-wasm/agent-snapshot");
  assert.ok(snapshot.messages.length >= 10, `the snapshot holds the transcript (${snapshot.messages.length} messages)`);

  await page.click('[data-testid="reset"]');
  assert.equal(await $$count('[data-testid="user-message"]'), 0, "reset clears the transcript");
  assert.equal(await $$count('[data-testid="tool-card"]'), 0);

  await page.setInputFiles('[data-testid="import"]', snapshotPath);
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="user-message"]').length === n, before.users.length);
  const after = await signature();
  assert.deepEqual(after.users, before.users, "user messages restored");
  assert.deepEqual(after.answers, before.answers, "assistant texts restored");
  // Cards whose call was cut off by the abort have no result in the transcript either way.
  assert.deepEqual(after.tools, before.tools, "tool cards restored");
  // The restored agent carries on from the imported transcript.
  await send("What time is it?");
  await waitIdle();
  assert.match((await texts('[data-testid="assistant-text"]')).at(-1), /It is/);

  assert.deepEqual(pageErrors, [], "no page errors");
  log("all demo e2e checks passed");
} catch (error) {
  failed = true;
  console.error(error);
  if (pageErrors.length) console.error(pageErrors.join("\n"));
  await mkdir(artifacts, { recursive: true }).catch(() => {});
  await page.screenshot({ path: join(artifacts, "demo-failure.png") }).catch(() => {});
  console.error(`failure screenshot: ${join("tests", "artifacts", "demo-failure.png")}`);
} finally {
  await browser.close().catch(() => {});
  server.child.kill();
}
process.exit(failed ? 1 : 0);
