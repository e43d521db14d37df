// The demo page's MCP panel (issue 18): in headless Chromium, the page (www/, served by scripts/serve.mjs) connects
// to server-everything over Streamable HTTP (another origin on 127.0.0.1), lists its tools prefixed "mcp_" next to
// its own, and the agent's tool reaches the server. Needs www/vendor/mcp-sdk.js (built here when missing).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { HERE, startEverythingHttp } from "./helpers.mjs";
import { needs } from "../required.mjs";

const ROOT = join(HERE, "..", "..");

function start(args) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.once("close", r));
  return { child, exited, output: () => out };
}

test("demo page: connect to an MCP server URL and use its tools", { timeout: 120000, skip: needs("/usr/bin/chromium", "scripts/setup installs Debian's chromium") }, async (t) => {
  if (!existsSync(join(ROOT, "www", "vendor", "mcp-sdk.js"))) {
    const vendor = start([join(ROOT, "scripts", "mcp-vendor.mjs")]);
    assert.equal(await vendor.exited, 0, vendor.output());
  }
  const mcp = await startEverythingHttp();
  t.after(() => mcp.stop());
  const serve = start([join(ROOT, "scripts", "serve.mjs"), "--port", "0"]);
  t.after(async () => {
    if (serve.child.exitCode === null) process.kill(serve.child.pid, "SIGTERM");
    await serve.exited;
  });
  let base;
  for (let i = 0; i < 200 && !base; i++) {
    base = /http:\/\/127\.0\.0\.1:\d+/.exec(serve.output())?.[0];
    if (!base) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(base, `serve.mjs printed no URL: ${serve.output()}`);

  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(`${base}/www/`);
  await page.waitForFunction(() => window.demo?.agent !== undefined, undefined, { timeout: 30000 });
  await page.fill("[data-testid=mcp-url]", mcp.url);
  await page.click("[data-testid=mcp-connect]");
  await page.waitForFunction(() => /tools$/.test(document.querySelector("[data-testid=mcp-status]").textContent), undefined, { timeout: 30000 });
  const status = await page.textContent("[data-testid=mcp-status]");
  const listed = await page.$$eval("[data-testid=mcp-tools] code", (nodes) => nodes.map((n) => n.textContent));
  const names = await page.evaluate(() => window.demo.agent.state.tools.map((x) => x.name));
  assert.match(status, /^mcp-servers\/everything: \d+ tools$/);
  assert.ok(listed.includes("mcp_echo") && listed.includes("mcp_get-sum"), `listed ${listed}`);
  assert.ok(names.includes("get_time") && names.includes("mcp_echo"), `agent tools ${names}`);
  assert.deepEqual(names.filter((n) => n.startsWith("mcp_")), listed);
  const echoed = await page.evaluate(async () => {
    const echo = window.demo.agent.state.tools.find((x) => x.name === "mcp_echo");
    return (await echo.execute("x", { message: "from the page" })).content;
  });
  assert.deepEqual(echoed, [{ type: "text", text: "Echo: from the page" }]);
  await page.screenshot({ path: join(ROOT, "target", "mcp-demo.png") });

  // Disconnecting takes the server's tools out again.
  await page.fill("[data-testid=mcp-url]", "");
  await page.click("[data-testid=mcp-connect]");
  await page.waitForFunction(() => document.querySelector("[data-testid=mcp-status]").textContent === "Not connected");
  const after = await page.evaluate(() => window.demo.agent.state.tools.map((x) => x.name));
  assert.ok(!after.some((n) => n.startsWith("mcp_")), `left ${after}`);
  assert.deepEqual(problems, []);
});
