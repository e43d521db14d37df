#!/usr/bin/env node
// The design document's example, for real: an agent with two tools, `list_files` and `read_file`,
// over the current directory. "List the files, then read the README" makes the model ask for both
// at once; the loop runs them in parallel, sends the results back, and the model answers.
//
//   node examples/cli.mjs "list the files, then read the README"            # the offline scripted model
//   node examples/cli.mjs --local "list the files, then read the README"    # the local model (scripts/local-llm)
//
// The model, by default: the offline scripted model of examples/offline-model.mjs (a script, not a language
// model; no network; OFFLINE_CHUNK_DELAY_MS sets its pace). With --local (or CLI_MODEL=local): SmolLM2-135M
// from scripts/local-llm (LOCAL_LLM_URL, default http://127.0.0.1:8088/v1), a tiny real model whose server
// decides when to call a tool. With OPENAI_BASE_URL set: any OpenAI-compatible server through the built-in
// `openai-completions` provider (OPENAI_API_KEY if it needs one, OPENAI_MODEL, default gpt-4o-mini), for
// example OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=qwen2.5 for Ollama.
// The answer streams to stdout as it arrives, with the tool activity in between. Ctrl+C aborts.
//
//   node examples/cli.mjs --with-delete "delete notes.txt"
//
// `--with-delete` adds `delete_file`, a tool that needs approval (issue 30): the run pauses, the CLI asks
// `Approve delete_file({"path":"notes.txt"})? [y/n]` on the terminal (readline; piped answers work too), `n` asks for
// an optional reason the model sees (`Tool call "<id>" was denied: <reason>`), and the run goes on when every
// waiting call is decided. Without an answer (stdin closed) the call is denied. The offline model asks for it on
// "delete <file>". Without the flag the tools stay read-only.
// Needs the built package: node scripts/build.mjs (scripts/demo builds it too).
//
//   node examples/cli.mjs --mcp "npx @modelcontextprotocol/server-everything" "echo hello"
//
//   node examples/cli.mjs --record session.json "list the files"    # the run's model traffic and tool results, saved
//   node examples/cli.mjs --replay session.json "list the files"    # the same run again, offline, tools not run
//
// `--record FILE` saves the run as a cassette (agent-loop-wasm/testing: the built-in provider's HTTP bytes, or the
// offline model's events, and the file tools' results; never a key); `--replay FILE` serves the run from it with the
// same model flags, offline (no model server needed), and fails with the first differing field when the run drifts
// from the recording (another prompt, other tools).
//
// `--mcp <command>` (repeatable) also starts an MCP server over stdio and adds its tools (prefixed with
// `<name>_` when two servers are given), kept in sync with the server (agent-loop-wasm/mcp). The entry and
// @modelcontextprotocol/sdk are loaded from the working directory's node_modules, else from tests/mcp.
import { createRequire } from "node:module";
import { readdir, readFile, stat, unlink } from "node:fs/promises";
import { createInterface } from "node:readline";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as lib from "../pkg/dist/node/index.mjs";
import { createCassette, loadCassette } from "../pkg/dist/node/testing.mjs";
import { OFFLINE_MODEL, offlineModel } from "./offline-model.mjs";

const { Agent, streamBuiltin, VERSION } = lib;
const cwd = process.cwd();
const args = process.argv.slice(2);
const mcpCommands = [];
for (let i = args.indexOf("--mcp"); i >= 0; i = args.indexOf("--mcp")) {
  if (args[i + 1] === undefined) {
    console.error("cli: --mcp needs a command, e.g. --mcp \"npx @modelcontextprotocol/server-everything\"");
    process.exit(2);
  }
  mcpCommands.push(args.splice(i, 2)[1]);
}
/** `--record FILE` / `--replay FILE`: the cassette's path and mode. */
let cassettePath;
let cassetteMode;
for (const flag of ["--record", "--replay"]) {
  const i = args.indexOf(flag);
  if (i < 0) continue;
  if (args[i + 1] === undefined || cassettePath !== undefined) {
    console.error(`cli: ${flag} needs a file, and only one of --record and --replay may be given`);
    process.exit(2);
  }
  cassettePath = args.splice(i, 2)[1];
  cassetteMode = flag === "--record" ? "record" : "replay";
}
const useLocal = args.includes("--local") || process.env.CLI_MODEL === "local";
const withDelete = args.includes("--with-delete");
const prompt = args.filter((a) => a !== "--local" && a !== "--with-delete").join(" ").trim() || "List the files, then read the README";

// ------------------------------------------------------------------------------------------------
// Output helpers
// ------------------------------------------------------------------------------------------------
const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code) => (s) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
const dim = paint("2");
const bold = paint("1");
const cyan = paint("36");
const green = paint("32");
const red = paint("31");
const yellow = paint("33");
const magenta = paint("35");

const started = performance.now();
const clock = () => dim(`[${String(Math.round(performance.now() - started)).padStart(5)} ms]`);
let atLineStart = true;
function write(text) {
  if (!text) return;
  process.stdout.write(text);
  atLineStart = text.endsWith("\n");
}
function line(text) {
  if (!atLineStart) write("\n");
  write(`${text}\n`);
}
const short = (value, max = 100) => {
  const s = typeof value === "string" ? value : JSON.stringify(value);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

// ------------------------------------------------------------------------------------------------
// Tools: read-only access to the current directory
// ------------------------------------------------------------------------------------------------
function inside(path) {
  const full = resolve(cwd, String(path ?? "."));
  const rel = relative(cwd, full);
  if (rel.startsWith("..") || isAbsolute(rel)) throw new Error(`${path} is outside the working directory`);
  return full;
}

const MAX_CHARS = 8000;
const tools = [
  {
    name: "list_files",
    label: "List files",
    description: "List the entries of a directory (relative to the working directory). Directories end with '/'.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Directory path, '.' for the working directory" } },
      required: ["path"],
    },
    async execute(_id, { path }) {
      const entries = await readdir(inside(path), { withFileTypes: true });
      const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
      return { content: [{ type: "text", text: names.join("\n") }], details: { count: names.length } };
    },
  },
  {
    name: "read_file",
    label: "Read file",
    description: `Read a UTF-8 text file (relative to the working directory); at most ${MAX_CHARS} characters.`,
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "File path, e.g. README.md" } },
      required: ["path"],
    },
    async execute(_id, { path }) {
      const full = inside(path);
      if ((await stat(full)).isDirectory()) throw new Error(`${path} is a directory; use list_files`);
      const text = await readFile(full, "utf8");
      const body = text.length > MAX_CHARS
        ? `${text.slice(0, MAX_CHARS)}\n… (truncated, ${text.length - MAX_CHARS} more characters)`
        : text;
      return { content: [{ type: "text", text: body }], details: { chars: text.length } };
    },
  },
];

// With --with-delete: delete_file, which needs approval (the person at the terminal says y or n first).
const deleteFile = {
  name: "delete_file",
  label: "Delete file",
  description: "Delete a file (relative to the working directory). Each call asks the user on the terminal first.",
  parameters: {
    type: "object",
    properties: { path: { type: "string", description: "File path, e.g. notes.txt" } },
    required: ["path"],
  },
  needsApproval: true,
  async execute(_id, { path }) {
    const full = inside(path);
    if ((await stat(full)).isDirectory()) throw new Error(`${path} is a directory; delete_file deletes files only`);
    await unlink(full);
    return { content: [{ type: "text", text: `Deleted ${path}` }], details: {} };
  },
};
if (withDelete) tools.push(deleteFile);

// ------------------------------------------------------------------------------------------------
// The model: the offline script by default; the local model with --local; OPENAI_BASE_URL's server
// ------------------------------------------------------------------------------------------------
const LOCAL_LLM = (process.env.LOCAL_LLM_URL ?? "http://127.0.0.1:8088/v1").replace(/\/+$/, "");
async function localModelUp() {
  try {
    const response = await fetch(LOCAL_LLM.replace(/\/v1$/, "/health"), { signal: AbortSignal.timeout(1000) });
    return response.ok;
  } catch {
    return false;
  }
}
let baseUrl = process.env.OPENAI_BASE_URL?.trim().replace(/\/+$/, "");
let model;
let streamFn;
if (useLocal) {
  if (cassetteMode !== "replay" && !(await localModelUp())) {
    console.error(`cli: the local model is not running at ${LOCAL_LLM}: start it with scripts/local-llm start ` +
      "(or drop --local for the offline scripted model)");
    process.exit(1);
  }
  baseUrl = LOCAL_LLM;
  model = {
    id: "SmolLM2-135M-Instruct", name: "SmolLM2-135M-Instruct", api: "openai-completions", provider: "local",
    baseUrl, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 8192, maxTokens: 256,
  };
  streamFn = streamBuiltin;
} else if (baseUrl) {
  const id = process.env.OPENAI_MODEL?.trim() || "gpt-4o-mini";
  model = {
    id, name: id, api: "openai-completions",
    provider: /(^|\.)api\.openai\.com/.test(new URL(baseUrl).hostname) ? "openai" : "openai-compatible",
    baseUrl, reasoning: false, input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 0,
  };
  streamFn = streamBuiltin;
} else {
  const delay = Number(process.env.OFFLINE_CHUNK_DELAY_MS ?? 15);
  model = OFFLINE_MODEL;
  streamFn = offlineModel(lib, { chunkDelayMs: Number.isFinite(delay) && delay >= 0 ? delay : 15 });
}

let cassette;
if (cassetteMode === "record") cassette = createCassette({ mode: "record" });
if (cassetteMode === "replay") {
  try {
    cassette = await loadCassette(cassettePath);
  } catch (e) {
    console.error(`cli: ${e.message}`);
    process.exit(2);
  }
}
if (cassette !== undefined && streamFn !== streamBuiltin) streamFn = cassette.streamFn(streamFn);

const agent = new Agent({
  initialState: {
    systemPrompt:
      (withDelete
        ? `You are a concise assistant with access to the directory ${cwd} through the tools list_files, read_file ` +
          "and delete_file (paths are relative to it; the user approves each delete_file call). "
        : `You are a concise assistant with read-only access to the directory ${cwd} through the tools ` +
          "list_files and read_file (paths are relative to it). ") +
      "Use the tools to answer; call independent tools together in one response.",
    model,
    thinkingLevel: baseUrl ? "off" : "low",
    tools: cassette === undefined ? tools : cassette.tools(tools),
  },
  streamFn,
  ...(cassette === undefined ? {} : { fetch: cassette.fetch }),
  // A replay sends nothing: no key needed.
  apiKey: baseUrl && !useLocal ? process.env.OPENAI_API_KEY || (cassetteMode === "replay" ? "replay" : undefined) : undefined,
  toolTimeoutMs: 30_000,
});

// ------------------------------------------------------------------------------------------------
// MCP servers (--mcp): their tools join list_files and read_file
// ------------------------------------------------------------------------------------------------
const mcpClients = [];
if (mcpCommands.length > 0) {
  const bases = [join(cwd, "package.json"), join(dirname(fileURLToPath(import.meta.url)), "..", "tests", "mcp", "package.json")];
  const load = bases.map((b) => createRequire(b)).find((r) => {
    try {
      r.resolve("@modelcontextprotocol/sdk/client/index.js");
      r.resolve("agent-loop-wasm/mcp");
      return true;
    } catch {
      return false;
    }
  });
  if (!load) {
    console.error("cli: --mcp needs agent-loop-wasm and @modelcontextprotocol/sdk installed (npm install @modelcontextprotocol/sdk)");
    process.exit(2);
  }
  const { Client } = load("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = load("@modelcontextprotocol/sdk/client/stdio.js");
  const { syncMcpTools } = load("agent-loop-wasm/mcp");
  for (const command of mcpCommands) {
    const [bin, ...rest] = command.split(/\s+/).filter(Boolean);
    const client = new Client({ name: "agent-loop-wasm-cli", version: VERSION });
    await client.connect(new StdioClientTransport({ command: bin, args: rest, stderr: "ignore" }));
    const name = client.getServerVersion()?.name ?? bin;
    const prefix = mcpCommands.length > 1 ? `${name.replace(/[^A-Za-z0-9]+/g, "_")}_` : undefined;
    const stop = await syncMcpTools(agent, client, { prefix, onError: (e) => line(red(`mcp ${name}: ${e.message}`)) });
    mcpClients.push({ client, stop });
    line(dim(`mcp: ${name} (${command}) · tools now ${agent.state.tools.map((t) => t.name).join(", ")}`));
  }
}

// ------------------------------------------------------------------------------------------------
// Printing the run as it streams
// ------------------------------------------------------------------------------------------------
let requests = 0;
const toolCalls = new Set(); // call ids: a call that waited for approval starts twice (before the pause and after it)
const decisions = new Map(); // toolCallId → "approved" | "denied"
const waitsForApproval = (event) =>
  !decisions.has(event.toolCallId) && agent.state.tools.some((t) => t.name === event.toolName && t.needsApproval === true);
let lastAssistant;
agent.subscribe((event) => {
  switch (event.type) {
    case "message_start":
      if (event.message.role === "assistant") requests++;
      break;
    case "message_update": {
      const e = event.assistantMessageEvent;
      if (e.type === "thinking_start") {
        if (!atLineStart) write("\n");
        write(dim("thinking: "));
      } else if (e.type === "thinking_delta") {
        write(dim(e.delta));
      } else if (e.type === "thinking_end" || e.type === "text_start") {
        if (!atLineStart) write("\n");
      } else if (e.type === "text_delta") {
        write(e.delta);
      } else if (e.type === "toolcall_end") {
        line(`${clock()} ${cyan("→ model calls")} ${bold(e.toolCall.name)}(${short(e.toolCall.arguments)})`);
      }
      break;
    }
    case "message_end":
      if (event.message.role === "assistant") {
        lastAssistant = event.message;
        if (!atLineStart) write("\n");
        if (event.message.stopReason === "error" || event.message.stopReason === "aborted") {
          line(red(`${event.message.stopReason}: ${event.message.errorMessage ?? "unknown error"}`));
        }
      }
      break;
    case "tool_execution_start":
      toolCalls.add(event.toolCallId);
      // A call that waits for approval does not run yet (tool_approval_request says so); a denied one never runs.
      if (!waitsForApproval(event) && decisions.get(event.toolCallId) !== "denied") {
        line(`${clock()} ${yellow("▶ running")} ${bold(event.toolName)}(${short(event.args)})`);
      }
      break;
    case "tool_approval_request":
      line(`${clock()} ${magenta("⏸ waits for approval")} ${bold(event.toolName)}(${short(event.args)})` +
        (event.reason ? `: ${event.reason}` : ""));
      break;
    case "tool_execution_update":
      line(`${clock()} ${dim(`… ${event.toolName}: ${short(event.partialResult?.content?.[0]?.text ?? "", 80)}`)}`);
      break;
    case "tool_execution_end": {
      const ms = event.durationMs === undefined ? "" : ` in ${event.durationMs} ms`;
      const text = event.result?.content?.find?.((c) => c.type === "text")?.text ?? "";
      const lines = text.split("\n").filter(Boolean).length;
      line(decisions.get(event.toolCallId) === "denied"
        ? `${clock()} ${red("✖ denied")} ${bold(event.toolName)}: ${short(text, 120)}`
        : event.isError
        ? `${clock()} ${red("✖ failed")} ${bold(event.toolName)}${ms}: ${short(text, 120)}`
        : `${clock()} ${green("✔ done")} ${bold(event.toolName)}${ms} · ${lines} line${lines === 1 ? "" : "s"}, ${text.length} chars`);
      break;
    }
    default:
      break;
  }
});

line(dim(`agent-loop-wasm ${VERSION} · ${useLocal
  ? `local model ${model.id} at ${baseUrl} (a tiny real model; its server decides when to call a tool)`
  : baseUrl
    ? `${model.id} at ${baseUrl} (openai-completions)`
    : "offline scripted model (a script, not a language model; --local for the local model, OPENAI_BASE_URL for an OpenAI-compatible server)"} · ${cwd}`));
line(`${bold(">")} ${prompt}`);

let interrupted = false;
process.on("SIGINT", () => {
  if (interrupted || !agent.state.isStreaming) process.exit(130);
  interrupted = true;
  line(yellow("aborting… (Ctrl+C again to quit)"));
  agent.abort();
});

// ------------------------------------------------------------------------------------------------
// Approvals on the terminal: the run ended paused; ask for each waiting call in request order. The decision on
// the last one continues the run (approve()/deny() resolve when it ended), which may pause again.
// ------------------------------------------------------------------------------------------------
let input; // readline over stdin, opened at the first question; lines typed (or piped) early wait in `early`
const early = [];
let answerWaiter = null;
let inputClosed = false;
function ask(question) {
  write(question);
  if (!input) {
    input = createInterface({ input: process.stdin, crlfDelay: Infinity });
    input.on("line", (l) => {
      if (answerWaiter) { const w = answerWaiter; answerWaiter = null; w(l); } else early.push(l);
    });
    input.on("close", () => {
      inputClosed = true;
      if (answerWaiter) { const w = answerWaiter; answerWaiter = null; w(null); }
    });
  }
  return new Promise((resolve) => {
    if (early.length > 0) resolve(early.shift());
    else if (inputClosed) resolve(null);
    else answerWaiter = resolve;
  }).then((answer) => {
    // A terminal echoed the answer already; a piped one is written out so the transcript reads as a dialogue.
    if (process.stdin.isTTY) atLineStart = true;
    else write(`${answer ?? ""}\n`);
    return answer;
  });
}

async function decide(request) {
  let answer = await ask(`Approve ${request.toolName}(${short(request.args)})${request.reason ? ` (${request.reason})` : ""}? [y/n] `);
  while (answer !== null && !/^(y|yes|n|no)$/i.test(answer.trim())) answer = await ask("Please answer y or n: ");
  if (answer !== null && /^y/i.test(answer.trim())) {
    decisions.set(request.toolCallId, "approved");
    return agent.approve(request.toolCallId);
  }
  let reason;
  if (answer === null) {
    reason = "no answer on the terminal";
    line(yellow(`no answer (stdin closed): denying ${request.toolCallId}`));
  } else {
    reason = (await ask("Reason (optional, Enter for none): "))?.trim() || undefined;
  }
  decisions.set(request.toolCallId, "denied");
  return agent.deny(request.toolCallId, reason === undefined ? undefined : { reason });
}

await agent.prompt(prompt);
while ((agent.state.pendingApprovals?.length ?? 0) > 0) await decide(agent.state.pendingApprovals[0]);
input?.close();
for (const { client, stop } of mcpClients) {
  stop();
  await client.close();
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);
// The whole session's usage (the prompt and any runs approvals started): tokens by kind, and the cost where the
// model has prices.
const u = agent.state.totalUsage;
const cached = u.cacheRead + u.cacheWrite;
const tokens = u.totalTokens
  ? ` · ${u.totalTokens} tokens (${u.input} in, ${u.output} out${cached ? `, ${cached} cache` : ""})` +
    (u.cost.total > 0 ? ` · $${u.cost.total.toFixed(4)}` : "")
  : "";
line(dim(`— ${seconds} s · ${requests} request${requests === 1 ? "" : "s"} · ${toolCalls.size} tool call${toolCalls.size === 1 ? "" : "s"}${tokens}`));
let failed = !lastAssistant || lastAssistant.stopReason === "error" || lastAssistant.stopReason === "aborted";
if (cassette !== undefined) {
  try {
    if (cassetteMode === "record") await cassette.save(cassettePath);
    await cassette.stop();
    line(dim(cassetteMode === "record" ? `cassette: saved to ${cassettePath}` : `cassette: replayed ${cassettePath}`));
  } catch (e) {
    line(red(e.message));
    failed = true;
  }
}
process.exitCode = failed ? 1 : 0;
