// agent-loop-wasm/ui in headless Chromium with the AI SDK's own client (issue 31): a page (no React) bundles `ai`
// 7's AbstractChat and DefaultChatTransport (esbuild, from this folder's node_modules) and renders a chat; a node:http
// server on 127.0.0.1 runs an Agent per chat on a scripted, slow model (reasoning, text, a tool, a second step) and
// answers POST /api/chat (toUIMessageStream) and the reconnect GET /api/chat/:id/stream (resumeUIMessageStream).
// The page is reloaded mid-answer; on load it does what `useChat({ resume: true })` does (resumeStream() with the
// messages the app stored) and the answer comes back from our replay, then live. The rendered parts are checked
// exactly after the reload (the replay shows at least what the page had, as a prefix of the answer, nothing twice)
// and at the end. Playwright drives the system Chromium (/usr/bin/chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, MODEL, call, chromiumPage, pieces, readJson, reply, scriptedModel, serve, text, thinking, tools, ui } from "./helpers.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
const requireRoot = createRequire(join(ROOT, "package.json"));

const ANSWER_PIECES = ["Oslo", " is", " rainy", " today,", " with", " a", " light", " wind", " from", " the", " west", " and", " about", " nine", " degrees;", " take", " an", " umbrella", " and", " a", " warm", " coat", " if", " you", " go", " out", " this", " evening."];
const ANSWER = ANSWER_PIECES.join("");

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>chat</title>
<div id="messages"></div>
<script type="module">
import { AbstractChat, DefaultChatTransport } from "/ai.js";
const root = document.getElementById("messages");
function render(messages) {
  root.replaceChildren(...messages.map((m) => {
    const el = document.createElement("div");
    el.dataset.role = m.role;
    el.dataset.id = m.id;
    for (const p of m.parts) {
      const part = document.createElement("div");
      part.dataset.part = p.type;
      if (p.type === "text" || p.type === "reasoning") part.textContent = p.text;
      else if (p.type.startsWith("tool-")) part.textContent = p.state + (p.output ? " " + p.output.content.map((b) => b.text).join("") : "");
      el.append(part);
    }
    return el;
  }));
}
class Chat extends AbstractChat {
  constructor(init) {
    let messages = [];
    const changed = () => {
      render(messages);
      // The app stores the conversation's user messages as they come (what a reloaded page starts from).
      sessionStorage.setItem("messages", JSON.stringify(messages.filter((m) => m.role === "user")));
    };
    const state = {
      status: "ready",
      error: undefined,
      get messages() { return messages; },
      set messages(m) { messages = m; changed(); },
      pushMessage: (m) => { messages = [...messages, m]; changed(); },
      popMessage: () => { messages = messages.slice(0, -1); changed(); },
      replaceMessage: (i, m) => { messages = messages.map((x, j) => (j === i ? m : x)); changed(); },
      snapshot: (x) => structuredClone(x),
    };
    super({ ...init, state });
  }
}
const stored = JSON.parse(sessionStorage.getItem("messages") ?? "[]");
const chat = new Chat({ id: "chat-1", transport: new DefaultChatTransport({ api: "/api/chat" }) });
window.chat = chat;
window.send = (textToSend) => chat.sendMessage({ text: textToSend });
if (stored.length > 0) {
  // useChat({ resume: true }): the stored messages, then the transport's reconnect.
  chat.messages = stored;
  window.resumed = chat.resumeStream().then(() => chat.status);
}
window.ready = true;
</script>
`;

/** The rendered chat: per message its role and its parts as [type, text]. */
const rendered = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("#messages > div")].map((m) => ({ role: m.dataset.role, id: m.dataset.id, parts: [...m.children].map((p) => [p.dataset.part, p.textContent]) })),
  );

const FINAL_PARTS = [
  ["step-start", ""],
  ["reasoning", "Looking up Oslo"],
  ["text", "Let me check."],
  ["tool-lookup", "output-available lookup(Oslo)"],
  ["step-start", ""],
  ["text", ANSWER],
];

test("Chromium: the ai client renders text, reasoning and tool parts, and resumes an in-flight answer after a reload", { timeout: 60_000 }, async (t) => {
  const esbuild = requireRoot("esbuild");
  const bundle = await esbuild.build({
    stdin: { contents: 'export { AbstractChat, DefaultChatTransport } from "ai";', resolveDir: HERE, loader: "js" },
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  const aiJs = bundle.outputFiles[0].text;

  const model = scriptedModel(
    [reply(pieces(thinking("Looking up Oslo"), "Looking", " up", " Oslo"), pieces(text("Let me check."), "Let", " me", " check."), call("a", "lookup", { q: "Oslo" })), reply(pieces(text(ANSWER), ...ANSWER_PIECES))],
    { pieceDelayMs: 40 },
  );
  const agents = new Map();
  const requests = [];
  const server = await serve(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    requests.push(`${req.method} ${url.pathname}`);
    if (req.method === "GET" && url.pathname === "/") return res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    if (req.method === "GET" && url.pathname === "/favicon.ico") return res.writeHead(204).end();
    if (req.method === "GET" && url.pathname === "/ai.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(aiJs);
    const resume = /^\/api\/chat\/([^/]+)\/stream$/.exec(url.pathname);
    if (req.method === "GET" && resume) {
      const agent = agents.get(decodeURIComponent(resume[1]));
      const stream = agent ? ui.resumeUIMessageStream(agent) : null;
      if (stream === null) return res.writeHead(204).end();
      return ui.pipeUIMessageStreamToResponse({ response: res, stream });
    }
    if (req.method === "POST" && url.pathname === "/api/chat") {
      const body = await readJson(req);
      const history = ui.convertToAgentMessages(body.messages, { model: MODEL });
      const prompt = history.pop();
      const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: tools({ lookup: { delayMs: 300 } }), messages: history } });
      agents.set(body.id, agent);
      return ui.pipeUIMessageStreamToResponse({ response: res, stream: ui.toUIMessageStream(agent, { originalMessages: body.messages, run: () => agent.prompt(prompt) }) });
    }
    res.writeHead(404).end();
  });
  const { page, errors } = await chromiumPage(t, server);
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 10_000 }).catch((e) => {
    throw new Error(`the page did not start: ${errors.join("; ")} (${e.message})`);
  });
  page.evaluate(() => window.send("Weather in Oslo?")).catch(() => {}); // the reload ends this page's request

  // Mid-answer: the second step's text has a few pieces on screen.
  const answerSoFar = async () => (await rendered(page))[1]?.parts.filter(([type]) => type === "text")[1]?.[1] ?? "";
  for (let i = 0; i < 400 && (await answerSoFar()).length < 12; i++) await new Promise((r) => setTimeout(r, 10));
  const before = await rendered(page);
  const shownBefore = before[1].parts.at(-1)[1];
  assert.ok(shownBefore.length >= 12 && ANSWER.startsWith(shownBefore), JSON.stringify(shownBefore));
  assert.deepEqual(before[1].parts.slice(0, 5), FINAL_PARTS.slice(0, 5), "before the reload");
  const agent = [...agents.values()][0];
  assert.equal(agent.state.isStreaming, true);

  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  // The first render of the resumed answer: the replay shows the whole answer so far, then it streams on.
  await page
    .waitForFunction(() => document.querySelectorAll("#messages > div").length === 2 && document.querySelectorAll("#messages > div")[1].children.length === 6, null, { timeout: 10_000 })
    .catch(async (e) => {
      throw new Error(`the resumed answer did not render: ${JSON.stringify(await rendered(page))} ${errors.join("; ")} (${e.message})`);
    });
  const after = await rendered(page);
  assert.deepEqual(after[0], { role: "user", id: before[0].id, parts: [["text", "Weather in Oslo?"]] });
  assert.equal(after[1].id, before[1].id, "the resumed answer keeps its message id");
  assert.deepEqual(after[1].parts.slice(0, 5), FINAL_PARTS.slice(0, 5), "after the reload: the first step as it was");
  const shownAfter = after[1].parts[5][1];
  assert.ok(ANSWER.startsWith(shownAfter) && shownAfter.length >= shownBefore.length, `after the reload: ${JSON.stringify(shownAfter)} extends ${JSON.stringify(shownBefore)}`);
  assert.equal(agent.state.isStreaming, true, "the reload came mid-answer");

  assert.equal(await page.evaluate(() => window.resumed), "ready");
  const end = await rendered(page);
  assert.deepEqual(end, [
    { role: "user", id: before[0].id, parts: [["text", "Weather in Oslo?"]] },
    { role: "assistant", id: before[1].id, parts: FINAL_PARTS },
  ]);
  assert.deepEqual(requests.filter((r) => r.includes("/api/")), ["POST /api/chat", "GET /api/chat/chat-1/stream"]);
  if (process.env.UI_BROWSER_LOG) console.log(JSON.stringify({ shownBefore, shownAfter }));
  assert.deepEqual(errors, []);
});
