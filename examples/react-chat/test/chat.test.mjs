// The example as its README runs it: `npm run build`, then `npm start` on a free 127.0.0.1 port (offline: the scripted
// stand-in), driven in headless Chromium (playwright-core, the system's /usr/bin/chromium). A prompt streams token by
// token to its exact end; a reload mid-answer resumes it to the same exact text (one answer, not two); a reload after
// the end shows the same history; an approved refund runs once and the answer follows; a denied one never runs and the
// page shows the reason. The page is built with VITE_CHAT_TOKEN and the server started with CHAT_TOKEN, so every
// request goes through the bearer token path. Last, `npm run dev` (Vite with the API plugin) answers a prompt too.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { chromium } from "playwright-core";

const EXAMPLE = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "test-token-7f3a";
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"];
const T = { timeout: 60_000 };

// The scripted model's exact texts (server/scripted-model.js).
const LOOKUP_THINKING = ["The customer asks about order 1042. I look it up first.", "I have the order, so I answer with its status."];
const LOOKUP_ANSWER = [
  "Let me look up order 1042.",
  "Order 1042: Blue kettle, $39.00, shipped on May 3. Is there anything else I can do for this order? I can refund it if you ask me to.",
];

let browser;
let server;
let base;

async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Runs an npm script in its own process group (npm, its shell, node) so that one kill by PID ends them all. */
async function startScript(args, env, ready) {
  const child = spawn("npm", args, { cwd: EXAMPLE, env: { ...process.env, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", GEMINI_API_KEY: "", ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.output = "";
  child.stdout.on("data", (d) => (child.output += d));
  child.stderr.on("data", (d) => (child.output += d));
  child.exited = new Promise((resolve) => child.on("exit", resolve));
  // Matched without colour codes: with CI set, Vite colours its banner ("127.0.0.1:\x1b[1m43761\x1b[22m/").
  const started = () => ready(stripVTControlCharacters(child.output));
  const deadline = Date.now() + 90_000;
  while (!started() && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (!started()) {
    await stop(child);
    assert.fail(`npm ${args.join(" ")} did not start:\n${child.output}`);
  }
  return child;
}

async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  process.kill(-child.pid, "SIGTERM");
  await child.exited;
}

before(async () => {
  execFileSync("npm", ["run", "build"], { cwd: EXAMPLE, env: { ...process.env, VITE_CHAT_TOKEN: TOKEN }, stdio: ["ignore", "pipe", "inherit"] });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = await startScript(["start"], { HOST: "127.0.0.1", PORT: String(port), CHAT_TOKEN: TOKEN }, (out) => out.includes(`react-chat on ${base}`));
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await stop(server);
});

/** A new page on a new chat, its console errors collected. */
async function openChat(url = base, page = undefined) {
  page ??= await browser.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && page.errors.push(`${m.text()} ${m.location().url}`));
  await page.goto(url);
  await page.getByRole("textbox", { name: "Message" }).waitFor();
  return page;
}

async function send(page, text) {
  await page.getByRole("textbox", { name: "Message" }).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** What the page shows: per message its role and parts (text, reasoning, tool name:state[:output or denial]). */
function rendered(page) {
  return page.$$eval("li[data-role]", (items) =>
    items.map((li) => ({
      role: li.dataset.role,
      id: li.dataset.id,
      parts: [...li.querySelectorAll("[data-part]")].map((p) =>
        p.dataset.part === "tool"
          ? `tool ${p.dataset.tool}:${p.dataset.state}${p.querySelector("[data-testid=output],[data-testid=denied]") ? `: ${p.querySelector("[data-testid=output],[data-testid=denied]").textContent}` : ""}`
          : `${p.dataset.part}: ${p.textContent}`,
      ),
    })),
  );
}

const idle = (page, timeout = 30_000) =>
  page.waitForFunction(() => document.querySelector("[data-testid=status]")?.dataset.status === "ready", null, { timeout });
const chatId = (page) => new URL(page.url()).searchParams.get("chat");

/** The lookup conversation as the page shows it at the end. */
const lookupShown = (question) => [
  { role: "user", parts: [`text: ${question}`] },
  {
    role: "assistant",
    parts: [
      `reasoning: ${LOOKUP_THINKING[0]}`,
      `text: ${LOOKUP_ANSWER[0]}`,
      "tool lookup_order:output-available: Order 1042: Blue kettle, $39.00, shipped on May 3.",
      `reasoning: ${LOOKUP_THINKING[1]}`,
      `text: ${LOOKUP_ANSWER[1]}`,
    ],
  },
];
const withoutIds = (messages) => messages.map(({ role, parts }) => ({ role, parts }));

test("the offline page says it is a scripted stream function; a prompt streams token by token to its exact end", T, async () => {
  const page = await openChat();
  assert.match(await page.getByTestId("offline").textContent(), /scripted stream function in this example, not a language model/);
  assert.ok(chatId(page), "the chat id is in the URL");
  await send(page, "Where is order 1042?");
  // Seen while it streams: the final text part growing (several distinct lengths before the end).
  const lengths = new Set();
  await page.waitForFunction(() => document.querySelectorAll("li.assistant [data-part=text]").length === 2);
  for (let i = 0; i < 400; i++) {
    const texts = await page.$$eval("li.assistant [data-part=text]", (els) => els.map((e) => e.textContent));
    lengths.add(texts[1]?.length ?? 0);
    if (texts[1] === LOOKUP_ANSWER[1]) break;
    await page.waitForTimeout(20);
  }
  assert.ok(lengths.size >= 4, `the answer grew in steps: ${[...lengths]}`);
  await idle(page);
  assert.deepEqual(withoutIds(await rendered(page)), lookupShown("Where is order 1042?"));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("reload mid-answer: the page loads the history, resumes the answer onto the same message and ends with the exact text", T, async () => {
  const page = await openChat();
  await send(page, "Where is order 1042 now?");
  // Mid-answer: the second text part has begun and is not complete.
  await page.waitForFunction((full) => {
    const t = document.querySelectorAll("li.assistant [data-part=text]")[1]?.textContent;
    return t && t.length > 10 && t !== full;
  }, LOOKUP_ANSWER[1]);
  const resumed = page.waitForResponse((r) => r.url().endsWith(`/api/chat/${chatId(page)}/stream`));
  await page.reload();
  const response = await resumed;
  assert.equal(response.status(), 200, "the resume found the answer under way");
  await idle(page);
  await page.waitForFunction((full) => document.querySelectorAll("li.assistant [data-part=text]")[1]?.textContent === full, LOOKUP_ANSWER[1]);
  const shown = await rendered(page);
  assert.deepEqual(withoutIds(shown), lookupShown("Where is order 1042 now?"), "one answer, exact, nothing twice");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("reload after the end: the page shows the same history (toUIMessages), same message ids, and the resume answers 204", T, async () => {
  const page = await openChat();
  await send(page, "Where is order 1042?");
  await idle(page);
  await page.waitForFunction((full) => document.querySelectorAll("li.assistant [data-part=text]")[1]?.textContent === full, LOOKUP_ANSWER[1]);
  const before = await rendered(page);
  const resumed = page.waitForResponse((r) => r.url().endsWith(`/api/chat/${chatId(page)}/stream`));
  await page.reload();
  assert.equal((await resumed).status(), 204);
  await page.waitForSelector("li.assistant");
  const after = await rendered(page);
  assert.deepEqual(withoutIds(after), lookupShown("Where is order 1042?"));
  assert.equal(after[1].id, before[1].id, "the answer keeps the id it streamed with");
  assert.deepEqual(page.errors, []);
  await page.close();
});

async function refunds() {
  const r = await fetch(`${base}/api/info`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (await r.json()).refunds;
}

test("an approval: the refund waits with Approve/Deny, runs once when approved, the answer follows; a reload shows it all", T, async () => {
  const page = await openChat();
  await send(page, "Please refund order 1042");
  await page.getByRole("button", { name: "Approve" }).waitFor();
  await idle(page);
  const waiting = await rendered(page);
  assert.deepEqual(waiting[1].parts.slice(-3), [
    "reasoning: Order 1042 exists. A refund moves money, so a person approves it first.",
    "text: Order 1042: Blue kettle, $39.00, shipped on May 3. I am asking to refund it in full.",
    "tool refund_order:approval-requested",
  ]);
  // A reload while the call waits: the history shows the request with its buttons.
  await page.reload();
  await page.getByRole("button", { name: "Approve" }).waitFor();
  assert.deepEqual(withoutIds(await rendered(page)), withoutIds(waiting));
  assert.deepEqual(await refunds(), []);

  await page.getByRole("button", { name: "Approve" }).click();
  const done = "Done. Refunded $39.00 for order 1042 (refund 1 of this order). The money reaches the card within 5 to 10 days.";
  await page.waitForFunction((text) => [...document.querySelectorAll("li.assistant [data-part=text]")].some((e) => e.textContent === text), done);
  await idle(page);
  const shown = await rendered(page);
  assert.equal(shown.length, 2, "the decision's run continued the same message");
  assert.deepEqual(shown[1].parts.slice(-3), [
    "tool refund_order:output-available: Refunded $39.00 for order 1042 (refund 1 of this order).",
    "reasoning: The refund went through.",
    `text: ${done}`,
  ]);
  assert.deepEqual(await refunds(), [{ orderId: "1042", cents: 3900 }]);
  await page.reload();
  await page.waitForSelector("[data-tool=refund_order][data-state=output-available]");
  assert.deepEqual(await rendered(page), shown);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a denial: the refund never runs; the page shows the reason and the answer quotes it", T, async () => {
  const page = await openChat();
  await send(page, "Refund order 2077");
  await page.getByRole("button", { name: "Deny" }).waitFor();
  await idle(page);
  await page.getByRole("textbox", { name: "Reason" }).fill("Too expensive to refund without a manager");
  await page.getByRole("button", { name: "Deny" }).click();
  const answer = "I did not refund order 2077: the refund was denied (Too expensive to refund without a manager). The order stays as it is.";
  await page.waitForFunction((text) => [...document.querySelectorAll("li.assistant [data-part=text]")].some((e) => e.textContent === text), answer);
  await idle(page);
  const shown = await rendered(page);
  assert.deepEqual(shown[1].parts.slice(-3), [
    "tool refund_order:output-denied: Denied: Too expensive to refund without a manager",
    "reasoning: The refund was not approved, so no money moved.",
    `text: ${answer}`,
  ]);
  assert.ok(!(await refunds()).some((r) => r.orderId === "2077"), "the denied refund never ran");
  await page.reload();
  await page.waitForSelector("[data-tool=refund_order][data-state=output-denied]");
  const reloaded = await rendered(page);
  assert.deepEqual(withoutIds(reloaded), withoutIds(shown));
  assert.equal(reloaded[1].id, shown[1].id);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the API refuses a request without the bearer token; New chat opens an empty chat with a new id in the URL", T, async () => {
  assert.equal((await fetch(`${base}/api/info`)).status, 401);
  const page = await openChat();
  await send(page, "Where is order 1042?");
  await idle(page);
  const first = chatId(page);
  await page.getByRole("button", { name: "New chat" }).click();
  await page.waitForFunction((id) => new URL(location.href).searchParams.get("chat") !== id, first);
  assert.deepEqual(await rendered(page), []);
  await page.goBack();
  await page.waitForSelector("li.assistant");
  assert.equal(chatId(page), first);
  await page.close();
});

test("npm run dev (Vite with the API plugin) serves the page and the chat: a prompt streams to its exact end", { timeout: 240_000 }, async (t) => {
  const port = await freePort();
  const dev = await startScript(["run", "dev", "--", "--port", String(port), "--strictPort"], {}, (out) => out.includes(`http://127.0.0.1:${port}/`));
  // Stopped however the test ends (a failure, or the test's own timeout), so no dev server outlives the file.
  t.after(() => stop(dev));
  let page;
  try {
    // Vite transforms the page's modules on the first load: more time per step than the built page needs.
    page = await browser.newPage();
    page.setDefaultTimeout(60_000);
    t.after(() => page.close());
    page = await openChat(`http://127.0.0.1:${port}/`, page);
    await send(page, "Where is order 1042?");
    await page.waitForFunction((full) => document.querySelectorAll("li.assistant [data-part=text]")[1]?.textContent === full, LOOKUP_ANSWER[1]);
    await idle(page, 60_000);
    assert.deepEqual(withoutIds(await rendered(page)), lookupShown("Where is order 1042?"));
    assert.deepEqual(page.errors, []);
  } catch (error) {
    // What a failure needs to be understood without a rerun: the dev server's output and what the page showed.
    const shown = page ? await page.evaluate(() => document.body?.innerText ?? "").catch((e) => `(unreadable: ${e.message})`) : "(no page)";
    error.message += `\n--- npm run dev printed:\n${dev.output}\n--- the page (${page?.url()}), errors ${JSON.stringify(page?.errors)}:\n${shown}`;
    throw error;
  }
});
