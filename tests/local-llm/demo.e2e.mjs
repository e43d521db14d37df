// The demo page in headless Chromium against the live local model (issue 8): with scripts/local-llm
// running, the page picks "Local model" by default, and a prompt naming a tool gets a real tool call
// from SmolLM2-135M through the built-in openai-completions provider, executed by the loop, then a
// text answer. Asserts protocol and structure, not wording. Run by scripts/test while the server is up.
import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { chromium } = createRequire(join(root, "package.json"))("playwright-core");
const health = await fetch("http://127.0.0.1:8088/health").then((r) => r.ok, () => false);
assert.ok(health, "the local model server must be running (scripts/local-llm start)");

const server = spawn(process.execPath, [join(root, "scripts", "serve.mjs"), "--port", "0"], { cwd: root });
const url = await new Promise((resolve, reject) => {
  let out = "";
  const timer = setTimeout(() => reject(new Error(`serve.mjs printed no URL: ${out}`)), 10_000);
  server.stdout.on("data", (chunk) => {
    out += chunk;
    const m = out.match(/http:\/\/localhost:(\d+)\/www\//);
    if (m) {
      clearTimeout(timer);
      resolve(`http://127.0.0.1:${m[1]}/www/`);
    }
  });
});
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--no-first-run", "--disable-sync", "--disable-quic"],
});
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(60_000);
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="api"]').value === "local");
  console.log("local model selected by default");
  await page.fill('[data-testid="prompt"]', "Use get_time to tell me the current time.");
  await page.click('[data-testid="send"]');
  await page.waitForSelector('[data-testid="tool-card"][data-finished="true"]');
  await page.waitForSelector('[data-testid="status"][data-state="idle"]');
  const cards = await page.$$eval('[data-testid="tool-card"]', (els) => els.map((e) => ({ name: e.dataset.toolName, status: e.dataset.status })));
  assert.deepEqual(cards[0], { name: "get_time", status: "done" }, "the forced tool call ran in the loop");
  const answer = (await page.locator('[data-testid="assistant-text"]').allTextContents()).join("").trim();
  assert.ok(answer.length > 0, "the model answered in text after the tool result");
  assert.deepEqual(errors, [], "no page errors");
  await mkdir(join(root, "tests", "artifacts"), { recursive: true });
  await page.screenshot({ path: join(root, "tests", "artifacts", "demo-local-model.png") });
  console.log(`local model demo e2e: 1 passed, 0 failed (tool ${cards[0].name}, answer ${answer.length} chars)`);
} catch (error) {
  failed = true;
  console.error("local model demo e2e failed:", error);
} finally {
  await browser.close();
  server.kill();
}
process.exit(failed ? 1 : 0);
