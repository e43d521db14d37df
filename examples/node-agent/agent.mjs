#!/usr/bin/env node
// A command-line agent over one folder: it lists and reads files at once and writes one only when you say y.
//
//   npm start -- "List the files, then read README.md"
//   WORKSPACE=~/notes npm start -- "Read todo.md and write a summary to summary.md"
//
// The model comes from the environment (model.mjs): OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY pick a
// built-in provider (MODEL another model id, <PROVIDER>_BASE_URL another endpoint); with no key, the local
// OpenAI-compatible server at LOCAL_LLM_URL (default http://127.0.0.1:8088/v1). The folder is WORKSPACE, else the
// current directory. The answer streams to stdout, each tool call and result on a line of its own; a write waits for
// `y` or `n` on the terminal (a piped answer works too; with stdin closed the call is denied). Ctrl+C aborts the run.
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { Agent } from "agent-loop-wasm";
import { chooseModel, serverUp } from "./model.mjs";
import { fileTools } from "./tools.mjs";

const folder = resolve(process.env.WORKSPACE || process.cwd());
const prompt = process.argv.slice(2).join(" ").trim() || "List the files, then read README.md";
const { model, apiKey, local, note } = chooseModel(process.env);
if (local && !(await serverUp(model.baseUrl))) {
  console.error(
    `node-agent: no API key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY) and no local model answers at ` +
      `${model.baseUrl}: start one (scripts/local-llm start in the agent-loop-wasm repository, or Ollama with ` +
      "LOCAL_LLM_URL=http://127.0.0.1:11434/v1 MODEL=<its model>) or set a key",
  );
  process.exit(1);
}

const agent = new Agent({
  initialState: {
    model,
    tools: fileTools(folder),
    systemPrompt:
      `You are a concise assistant working in the folder ${folder} through the tools list_files, read_file and ` +
      "write_file (paths relative to it; the user approves each write). Call independent tools together.",
  },
  // The default stream function is the package's built-in providers; this gives them the key.
  getApiKey: () => apiKey,
  toolTimeoutMs: 30_000,
});

// ------------------------------------------------------------------------------------------------------------------
// Printing the run as it streams
// ------------------------------------------------------------------------------------------------------------------
let atLineStart = true;
function write(text) {
  process.stdout.write(text);
  atLineStart = text.endsWith("\n");
}
function line(text) {
  write(`${atLineStart ? "" : "\n"}${text}\n`);
}

let requests = 0;
const toolCalls = new Set();
let last;
agent.subscribe((event) => {
  if (event.type === "message_start" && event.message.role === "assistant") requests++;
  if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") write(event.assistantMessageEvent.delta);
  if (event.type !== "message_end") return;
  const message = event.message;
  if (message.role === "assistant") {
    last = message;
    for (const c of message.content) {
      if (c.type !== "toolCall") continue;
      toolCalls.add(c.id);
      line(`→ ${c.name} ${JSON.stringify(c.arguments)}`);
    }
    if (message.stopReason === "error" || message.stopReason === "aborted") line(`✖ ${message.stopReason}: ${message.errorMessage}`);
  } else if (message.role === "toolResult") {
    const text = message.content.map((c) => c.text ?? "").join("");
    line(message.isError ? `✖ ${message.toolName}: ${text}` : `✔ ${message.toolName}: ${message.details?.summary ?? text.split("\n")[0]}`);
  }
});

// ------------------------------------------------------------------------------------------------------------------
// Approvals on the terminal: the run ends paused; each waiting call is asked in order, and the decision on the last
// one continues the run (approve()/deny() resolve when it ended), which may pause again.
// ------------------------------------------------------------------------------------------------------------------
const answers = [];
let waiter;
let inputClosed = false;
let input;
function ask(question) {
  write(question);
  if (!input) {
    input = createInterface({ input: process.stdin, crlfDelay: Infinity });
    input.on("line", (l) => (waiter ? (waiter(l), (waiter = undefined)) : answers.push(l)));
    input.on("close", () => {
      inputClosed = true;
      waiter?.(null);
      waiter = undefined;
    });
  }
  return new Promise((resolve) => {
    if (answers.length) resolve(answers.shift());
    else if (inputClosed) resolve(null);
    else waiter = resolve;
  }).then((answer) => {
    // A terminal echoed the answer; a piped one is written out, so the output reads as the dialogue it was.
    if (process.stdin.isTTY) atLineStart = true;
    else write(`${answer ?? ""}\n`);
    return answer;
  });
}

async function decide({ toolCallId, toolName, args }) {
  let answer = await ask(`? ${toolName} ${JSON.stringify(args)}: approve? [y/n] `);
  while (answer !== null && !/^(y|yes|n|no)$/i.test(answer.trim())) answer = await ask("Please answer y or n: ");
  if (answer !== null && /^y/i.test(answer.trim())) return agent.approve(toolCallId);
  return agent.deny(toolCallId, { reason: answer === null ? "no answer on the terminal" : "the user said no" });
}

process.on("SIGINT", () => (agent.state.isStreaming ? agent.abort() : process.exit(130)));

line(`node-agent · ${model.id} (${model.provider}, ${model.api}) at ${model.baseUrl} · folder ${folder}`);
if (note) line(`note: ${note}`);
line(`> ${prompt}`);
await agent.prompt(prompt);
while (agent.state.pendingApprovals.length) await decide(agent.state.pendingApprovals[0]);
input?.close();

const usage = agent.state.totalUsage;
const cost = model.cost.input || model.cost.output ? ` · $${usage.cost.total.toFixed(6)}` : "";
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
line(`— ${plural(requests, "request")} · ${plural(toolCalls.size, "tool call")} · ${usage.totalTokens} tokens (${usage.input} in, ${usage.output} out)${cost}`);
process.exitCode = last?.stopReason === "stop" ? 0 : 1;
