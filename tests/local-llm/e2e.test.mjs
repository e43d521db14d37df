// End to end against a real model: the local server (local-llm/, SmolLM2-135M-Instruct) spoken to over HTTP, then
// the BUILT package's `openai-completions` provider, `agentLoop` and `Agent` running a tool loop against it.
// Asserts protocol and structure (chunk framing, event order, roles, tool names and argument keys), never wording:
// a 135M model's answers are weak and may change with the CPU's ggml variant.
//
//   node --test tests/local-llm/                       # starts the server with scripts/local-llm, stops it after
//   LOCAL_LLM_URL=http://127.0.0.1:8088/v1 node --test tests/local-llm/   # uses a running server
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCRIPT = `${ROOT}scripts/local-llm`;
const ENTRY = `${ROOT}pkg/dist/node/index.mjs`;
const MODEL_ID = "SmolLM2-135M-Instruct";
const T = { timeout: 120_000 };

let base = process.env.LOCAL_LLM_URL?.replace(/\/+$/, "");
let startedHere = false;
let pkg;

before(async () => {
  if (!base) {
    if (spawnSync(SCRIPT, ["status"], { stdio: "ignore" }).status !== 0) {
      execFileSync(SCRIPT, ["start"], { stdio: ["ignore", "inherit", "inherit"] });
      startedHere = true;
    }
    base = execFileSync(SCRIPT, ["url"], { encoding: "utf8" }).trim();
  }
  if (!existsSync(ENTRY)) execFileSync("node", ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  pkg = await import(ENTRY);
});

after(() => {
  if (startedHere) execFileSync(SCRIPT, ["stop"], { stdio: ["ignore", "inherit", "inherit"] });
});

// ---------------------------------------------------------------------------------------------------------------
// helpers

const fn = (name, description, properties = {}, required) => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties, ...(required ? { required } : {}) } },
});
const ADD = fn("add", "Add two numbers", { a: { type: "number" }, b: { type: "number" } }, ["a", "b"]);
const GET_TIME = fn("get_time", "Get the current time (ISO 8601)");

function post(body, init = {}) {
  return fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL_ID, ...body }),
    ...init,
  });
}

/** POSTs a streaming request; returns the parsed `data:` payloads (the last one is the string "[DONE]"). */
async function sse(body) {
  const res = await post({ stream: true, ...body });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /^text\/event-stream/);
  const text = await res.text();
  const events = text.split("\n\n").filter((e) => e.trim() !== "");
  return events.map((e) => {
    assert.match(e, /^data: /, "every SSE event is one data: line");
    const data = e.slice("data: ".length);
    return data === "[DONE]" ? data : JSON.parse(data);
  });
}

/** Checks what every OpenAI stream has in common; returns the chunks with choices (not the usage chunk). */
function checkFraming(events, { usage }) {
  assert.equal(events.at(-1), "[DONE]");
  const chunks = events.slice(0, -1);
  const id = chunks[0].id;
  assert.match(id, /^chatcmpl-/);
  for (const c of chunks) {
    assert.equal(c.id, id);
    assert.equal(c.object, "chat.completion.chunk");
    assert.equal(c.model, MODEL_ID);
    assert.equal(typeof c.created, "number");
  }
  let choices = chunks;
  if (usage) {
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage.total_tokens, last.usage.prompt_tokens + last.usage.completion_tokens);
    assert.ok(last.usage.prompt_tokens > 0 && last.usage.completion_tokens > 0);
    choices = chunks.slice(0, -1);
  } else {
    assert.ok(chunks.every((c) => c.usage === undefined));
  }
  assert.equal(choices[0].choices[0].delta.role, "assistant");
  const finishes = choices.map((c) => c.choices[0].finish_reason);
  assert.ok(finishes.slice(0, -1).every((f) => f === null), "only the last choice chunk finishes");
  return choices;
}

const model = () => ({
  id: MODEL_ID, name: "SmolLM2 135M Instruct (local)", api: "openai-completions", provider: "local",
  baseUrl: base, input: ["text"], reasoning: false, contextWindow: 8192, maxTokens: 96,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
});

function addTool(calls) {
  return {
    name: "add", label: "Add", description: "Add two numbers",
    parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    async execute(id, args) {
      calls.push({ id, args });
      return { content: [{ type: "text", text: JSON.stringify({ sum: args.a + args.b }) }], details: { sum: args.a + args.b } };
    },
  };
}

/** Event labels with runs of message_update collapsed to one label per assistant event type. */
function labels(events) {
  const out = [];
  for (const e of events) {
    let l = e.type;
    if (e.type === "message_update") l = `update:${e.assistantMessageEvent.type}`;
    else if (e.message) l = `${e.type}:${e.message.role}`;
    else if (e.toolName) l = `${e.type}:${e.toolName}`;
    if (out.at(-1) !== l) out.push(l);
  }
  return out.filter((l) => !l.endsWith(":system")); // tool declarations (L-3.4) are not this test's business
}

const EXPECTED_TOOL_RUN = [
  "agent_start", "turn_start",
  "message_start:user", "message_end:user",
  "message_start:assistant", "update:toolcall_start", "update:toolcall_delta", "update:toolcall_end", "message_end:assistant",
  "tool_execution_start:add", "tool_execution_end:add",
  "message_start:toolResult", "message_end:toolResult",
  "turn_end:assistant", "turn_start",
  "message_start:assistant", "update:text_start", "update:text_delta", "update:text_end", "message_end:assistant",
  "turn_end:assistant", "agent_end",
];

function checkToolRun(messages, calls) {
  const roles = messages.filter((m) => m.role !== "system").map((m) => m.role);
  assert.deepEqual(roles, ["user", "assistant", "toolResult", "assistant"]);
  const [, call, result, answer] = messages.filter((m) => m.role !== "system");
  assert.equal(call.stopReason, "toolUse");
  assert.equal(call.api, "openai-completions");
  assert.equal(call.provider, "local");
  assert.match(call.responseId, /^chatcmpl-/);
  const toolCalls = call.content.filter((c) => c.type === "toolCall");
  assert.equal(toolCalls.length, 1);
  assert.equal(toolCalls[0].name, "add");
  assert.deepEqual(Object.keys(toolCalls[0].arguments).sort(), ["a", "b"]);
  assert.equal(typeof toolCalls[0].arguments.a, "number");
  assert.equal(typeof toolCalls[0].arguments.b, "number");
  assert.deepEqual(calls.map((c) => c.id), [toolCalls[0].id]);
  assert.equal(result.toolCallId, toolCalls[0].id);
  assert.equal(result.isError, false);
  assert.equal(answer.stopReason, "stop");
  assert.ok(answer.content.some((c) => c.type === "text" && c.text.trim().length > 0), "the answer has text");
  assert.ok(answer.usage.output > 0 && answer.usage.input > 0);
}

// ---------------------------------------------------------------------------------------------------------------
// the server, over HTTP

test("server: /health, /v1/models, CORS preflight and headers", T, async () => {
  const health = await (await fetch(base.replace(/\/v1$/, "/health"))).json();
  assert.equal(health.status, "ok");
  assert.equal(health.model, MODEL_ID);
  assert.equal(health.threads, 1);
  const models = await (await fetch(`${base}/models`)).json();
  assert.equal(models.object, "list");
  assert.deepEqual(models.data.map((m) => m.id), [MODEL_ID]);
  const pre = await fetch(`${base}/chat/completions`, {
    method: "OPTIONS",
    headers: { Origin: "http://localhost:5173", "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "authorization,content-type,x-stainless-os" },
  });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), "*");
  assert.match(pre.headers.get("access-control-allow-methods"), /POST/);
  assert.match(pre.headers.get("access-control-allow-headers"), /x-stainless-os/);
  const bad = await post({ messages: [] });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get("access-control-allow-origin"), "*");
  assert.equal((await bad.json()).error.param, "messages");
  assert.equal((await fetch(`${base}/nope`)).status, 404);
});

test("server: streamed text has several deltas, one finish_reason, usage, [DONE]", T, async () => {
  const events = await sse({
    max_tokens: 40, stream_options: { include_usage: true },
    messages: [{ role: "user", content: "What is the capital of France? Answer in one sentence." }],
  });
  const chunks = checkFraming(events, { usage: true });
  const content = chunks.map((c) => c.choices[0].delta.content).filter((d) => typeof d === "string" && d !== "");
  assert.ok(content.length >= 2, `several content deltas, got ${content.length}`);
  assert.ok(["stop", "length"].includes(chunks.at(-1).choices[0].finish_reason));
  assert.ok(chunks.every((c) => c.choices[0].delta.tool_calls === undefined));
});

test("server: max_tokens is honoured (finish_reason length)", T, async () => {
  const events = await sse({
    max_tokens: 3, stream_options: { include_usage: true },
    messages: [{ role: "user", content: "Write a long story about a dragon." }],
  });
  const chunks = checkFraming(events, { usage: true });
  assert.equal(chunks.at(-1).choices[0].finish_reason, "length");
  assert.equal(events.at(-2).usage.completion_tokens, 3);
});

test("server: a forced tool call streams id, name, then argument fragments; finish_reason tool_calls", T, async () => {
  const events = await sse({
    tools: [GET_TIME, ADD], tool_choice: { type: "function", function: { name: "add" } },
    messages: [{ role: "user", content: "What is 17 plus 25?" }],
  });
  const chunks = checkFraming(events, { usage: false });
  const fragments = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []);
  assert.ok(fragments.length >= 2, "a head and at least one argument fragment");
  const [head, ...rest] = fragments;
  assert.equal(head.index, 0);
  assert.match(head.id, /^call_/);
  assert.equal(head.type, "function");
  assert.equal(head.function.name, "add");
  for (const f of rest) {
    assert.equal(f.index, 0);
    assert.equal(f.id, undefined);
    assert.equal(f.function.name, undefined);
  }
  const args = JSON.parse(fragments.map((f) => f.function.arguments).join(""));
  assert.deepEqual(Object.keys(args).sort(), ["a", "b"]);
  assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");
});

test("server: tool policy: auto calls a named tool, not an unnamed one; text after a tool result", T, async () => {
  const named = await (await post({ tools: [GET_TIME, ADD], messages: [{ role: "user", content: "What time is it? Use the get_time tool." }] })).json();
  assert.equal(named.object, "chat.completion");
  assert.equal(named.choices[0].finish_reason, "tool_calls");
  assert.equal(named.choices[0].message.content, null);
  const [call] = named.choices[0].message.tool_calls;
  assert.equal(call.function.name, "get_time");
  assert.deepEqual(JSON.parse(call.function.arguments), {});

  const unnamed = await (await post({ max_tokens: 24, tools: [GET_TIME, ADD], messages: [{ role: "user", content: "Hello!" }] })).json();
  assert.ok(["stop", "length"].includes(unnamed.choices[0].finish_reason));
  assert.equal(unnamed.choices[0].message.tool_calls, undefined);
  assert.equal(typeof unnamed.choices[0].message.content, "string");

  const answer = await (await post({
    max_tokens: 48, tools: [GET_TIME, ADD],
    messages: [
      { role: "user", content: "What time is it? Use the get_time tool." },
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: call.id, content: "18:30" },
    ],
  })).json();
  assert.ok(["stop", "length"].includes(answer.choices[0].finish_reason));
  assert.equal(answer.choices[0].message.tool_calls, undefined);
  assert.ok(answer.choices[0].message.content.length > 0);
  assert.ok(answer.usage.completion_tokens > 0);
});

test("server: requests are served one at a time; an aborted stream frees the model", T, async () => {
  const ac = new AbortController();
  const long = await post({ stream: true, max_tokens: 400, messages: [{ role: "user", content: "Write a long story." }] },
    { signal: ac.signal });
  const reader = long.body.getReader();
  await reader.read(); // generation has started
  ac.abort();
  const started = Date.now();
  const bodies = await Promise.all([1, 2, 3].map((i) =>
    post({ max_tokens: 8, messages: [{ role: "user", content: `Say the number ${i}.` }] }).then((r) => r.json())));
  for (const b of bodies) assert.equal(b.object, "chat.completion");
  assert.ok(Date.now() - started < 60_000);
});

// ---------------------------------------------------------------------------------------------------------------
// the built package against it

test("package: streamBuiltin streams text from the local model", T, async () => {
  const events = [];
  const stream = pkg.streamBuiltin(model(), {
    messages: [{ role: "user", content: "What is the capital of France? Answer in one sentence.", timestamp: Date.now() }],
  }, { maxTokens: 40 });
  for await (const e of stream) events.push(e);
  const types = events.map((e) => e.type);
  assert.equal(types[0], "start");
  assert.equal(types[1], "text_start");
  assert.ok(types.filter((t) => t === "text_delta").length >= 2, "several text deltas");
  assert.deepEqual(types.slice(-2), ["text_end", "done"]);
  const message = await stream.result();
  assert.equal(events.at(-1).reason, message.stopReason);
  assert.ok(["stop", "length"].includes(message.stopReason));
  assert.equal(message.role, "assistant");
  assert.equal(message.model, MODEL_ID);
  assert.match(message.responseId, /^chatcmpl-/);
  assert.equal(message.content[0].text, events.filter((e) => e.type === "text_delta").map((e) => e.delta).join(""));
  assert.ok(message.usage.input > 0 && message.usage.output > 0);
});

test("package: agentLoop runs call → tool → result → answer against the local model", T, async () => {
  const calls = [];
  const payloads = [];
  const events = [];
  const stream = pkg.agentLoop(
    [{ role: "user", content: "Use the add tool to add 2 and 3.", timestamp: Date.now() }],
    { messages: [], tools: [addTool(calls)] },
    { model: model(), convertToLlm: (m) => m, onPayload: (p) => { payloads.push(structuredClone(p)); } },
  );
  for await (const e of stream) events.push(e);
  assert.deepEqual(labels(events), EXPECTED_TOOL_RUN);
  const messages = await stream.result();
  checkToolRun(messages, calls);
  // The second request carries the call and its result.
  assert.equal(payloads.length, 2);
  assert.deepEqual(payloads[0].messages.map((m) => m.role), ["user"]);
  assert.deepEqual(payloads[0].tools.map((t) => t.function.name), ["add"]);
  const second = payloads[1].messages;
  assert.deepEqual(second.map((m) => m.role), ["user", "assistant", "tool"]);
  assert.equal(second[1].tool_calls[0].function.name, "add");
  assert.equal(second[2].tool_call_id, second[1].tool_calls[0].id);
  assert.deepEqual(JSON.parse(second[2].content), { sum: calls[0].args.a + calls[0].args.b });
});

test("package: Agent runs the same loop with a system prompt", T, async () => {
  const calls = [];
  const agent = new pkg.Agent({
    initialState: { systemPrompt: "You are a helpful assistant.", model: model(), tools: [addTool(calls)] },
  });
  const events = [];
  agent.subscribe((e) => { events.push(e); });
  await agent.prompt("Use the add tool to add 2 and 3.");
  assert.deepEqual(labels(events), EXPECTED_TOOL_RUN);
  assert.equal(agent.state.isStreaming, false);
  assert.equal(agent.state.errorMessage, undefined);
  assert.equal(agent.state.messages[0].role, "system");
  checkToolRun(agent.state.messages, calls);
});

test("package: the README's prompt runs list_files, then read_file, then an answer (the server's tool policy)", T, async () => {
  const calls = [];
  const tool = (name, description) => ({
    name, label: name, description,
    parameters: { type: "object", properties: { path: { type: "string", description: name === "read_file" ? "File path, e.g. README.md" : "Directory, '.' for the project root" } }, required: ["path"] },
    async execute(id, args) {
      calls.push({ name, args });
      const text = name === "list_files" ? "README.md\nsrc/" : "# demo-project\nA tiny project.";
      return { content: [{ type: "text", text }], details: {} };
    },
  });
  const agent = new pkg.Agent({
    initialState: { model: model(), tools: [tool("list_files", "List a directory"), tool("read_file", "Read a text file")] },
  });
  const events = [];
  agent.subscribe((e) => { events.push(e); });
  await agent.prompt("list the files, then read the README");
  assert.equal(events.at(-1).type, "agent_end");
  // One call per response, in the order the prompt asks, then text: three requests.
  assert.deepEqual(calls.map((c) => c.name), ["list_files", "read_file"]);
  for (const c of calls) assert.equal(typeof c.args.path, "string");
  const messages = agent.state.messages.filter((m) => m.role !== "system");
  assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
  assert.deepEqual(messages.filter((m) => m.role === "assistant").map((m) => m.stopReason), ["toolUse", "toolUse", "stop"]);
  assert.ok(messages.at(-1).content.some((c) => c.type === "text" && c.text.trim().length > 0), "the answer has text");
  console.log(`README prompt on the local model: ${calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(", ")}`);
});
