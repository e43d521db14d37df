// A stateless useChat route (U-12.5) in headless Chromium with the AI SDK's own client: the page bundles `ai` 7's
// AbstractChat, DefaultChatTransport and lastAssistantMessageIsCompleteWithApprovalResponses (esbuild); the server on
// 127.0.0.1 builds a fresh Agent for every POST with createAgentUIStream and keeps only each chat's transcript. The
// page asks, the run pauses for approval, the page approves (the ai client posts the messages again by itself), the
// approved call runs once and the answer streams into the same message; a reloaded page loads the history
// (toUIMessages of the stored transcript) and shows the same conversation. A second chat denies: the call never runs.
// Playwright drives the system Chromium (/usr/bin/chromium).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, MODEL, call, chromiumPage, readJson, reply, scriptedModel, serve, text, ui } from "./helpers.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const requireRoot = createRequire(join(HERE, "..", "..", "package.json"));
const SECRET = "the server's approval secret, kept out of the page";
const SCHEMA = { type: "object", properties: { cents: { type: "number" } }, required: ["cents"] };

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>chat</title>
<div id="messages"></div>
<script type="module">
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "/ai.js";
const chatId = new URL(location.href).searchParams.get("chat");
const root = document.getElementById("messages");
const render = (messages) =>
  root.replaceChildren(...messages.map((m) => {
    const el = document.createElement("div");
    el.dataset.role = m.role;
    for (const p of m.parts) {
      const part = document.createElement("div");
      part.dataset.part = p.type;
      if (p.type === "text") part.textContent = p.text;
      else if (p.type.startsWith("tool-")) part.textContent = p.state + (p.output ? " " + p.output.content.map((b) => b.text).join("") : "");
      el.append(part);
    }
    return el;
  }));
class Chat extends AbstractChat {
  constructor(init) {
    let messages = init.messages ?? [];
    const state = {
      status: "ready",
      error: undefined,
      get messages() { return messages; },
      set messages(m) { messages = m; render(messages); },
      pushMessage: (m) => { messages = [...messages, m]; render(messages); },
      popMessage: () => { messages = messages.slice(0, -1); render(messages); },
      replaceMessage: (i, m) => { messages = messages.map((x, j) => (j === i ? m : x)); render(messages); },
      snapshot: (x) => structuredClone(x),
    };
    super({ ...init, state });
  }
}
// useChat({ messages }): the history the server keeps.
const history = await (await fetch("/api/chat/" + chatId + "/history")).json();
const chat = new Chat({
  id: chatId,
  messages: history,
  transport: new DefaultChatTransport({ api: "/api/chat" }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
});
render(chat.messages);
window.chat = chat;
window.send = (t) => chat.sendMessage({ text: t });
// The approval button: the part's approval id is what the server signed.
window.decide = (approved) => {
  const part = chat.messages.at(-1).parts.find((p) => p.state === "approval-requested");
  return chat.addToolApprovalResponse({ id: part.approval.id, approved, ...(approved ? {} : { reason: "too much" }) });
};
window.ready = true;
</script>
`;

const rendered = (page) =>
  page.evaluate(() => [...document.querySelectorAll("#messages > div")].map((m) => ({ role: m.dataset.role, parts: [...m.children].map((p) => [p.dataset.part, p.textContent]) })));

test("Chromium, a stateless route: approve once, deny never, and a reloaded page shows the history", { timeout: 90_000 }, async (t) => {
  const bundle = await requireRoot("esbuild").build({
    stdin: { contents: 'export { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";', resolveDir: HERE, loader: "js" },
    bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent",
  });
  const aiJs = bundle.outputFiles[0].text;
  const model = scriptedModel([reply(text("Charging."), call("c1", "charge", { cents: 500 })), reply(text("Charged 500 cents.")), reply(text("Charging."), call("c2", "charge", { cents: 900 })), reply(text("Not charged."))]);
  const charged = [];
  const transcripts = new Map();
  const charge = {
    name: "charge", label: "Charge", description: "Charges the card", parameters: SCHEMA, needsApproval: true,
    execute: async (id, { cents }) => (charged.push(id), { content: [text(`charged ${cents}`)], details: {} }),
  };
  const server = await serve(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/") return res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    if (req.method === "GET" && url.pathname === "/favicon.ico") return res.writeHead(204).end();
    if (req.method === "GET" && url.pathname === "/ai.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(aiJs);
    const history = /^\/api\/chat\/([^/]+)\/history$/.exec(url.pathname);
    if (req.method === "GET" && history) {
      const stored = transcripts.get(history[1]) ?? [];
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(ui.toUIMessages(stored, { approvalSecret: SECRET })));
    }
    if (req.method === "POST" && url.pathname === "/api/chat") {
      const { id, messages } = await readJson(req);
      const agent = new Agent({ streamFn: model.streamFn, initialState: { model: MODEL, tools: [charge] } });
      await ui.pipeUIMessageStreamToResponse({ response: res, stream: ui.createAgentUIStream({ agent, uiMessages: messages, approvalSecret: SECRET }) });
      transcripts.set(id, agent.state.messages);
      return undefined;
    }
    return res.writeHead(404).end();
  });
  const { page, errors } = await chromiumPage(t, server);
  const open = async (chatId) => {
    await page.goto(`${server.url}/?chat=${chatId}`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 10_000 }).catch((e) => {
      throw new Error(`the page did not start: ${errors.join("; ")} (${e.message})`);
    });
  };
  const until = (partsShown) =>
    page.waitForFunction((n) => document.querySelectorAll("#messages > div")[1]?.children.length === n && window.chat.status === "ready", partsShown, { timeout: 20_000 });

  for (const [chatId, approved] of [["approve", true], ["deny", false]]) {
    await open(chatId);
    await page.evaluate(() => window.send("Charge my card"));
    await until(3);
    assert.deepEqual((await rendered(page))[1].parts, [["step-start", ""], ["text", "Charging."], ["tool-charge", "approval-requested"]]);
    await page.evaluate((a) => window.decide(a), approved);
    await until(5);
    const final = [
      { role: "user", parts: [["text", "Charge my card"]] },
      {
        role: "assistant",
        parts: [
          ["step-start", ""],
          ["text", "Charging."],
          ["tool-charge", approved ? "output-available charged 500" : "output-denied"],
          ["step-start", ""],
          ["text", approved ? "Charged 500 cents." : "Not charged."],
        ],
      },
    ];
    assert.deepEqual(await rendered(page), final);
    assert.deepEqual(charged, ["c1"], approved ? "approved: charged once" : "denied: the second chat charged nothing");
    // A reload: the page starts from the history the server keeps.
    await page.reload();
    await page.waitForFunction(() => window.ready === true);
    assert.deepEqual(await rendered(page), final);
  }
  assert.deepEqual(errors, []);
});
