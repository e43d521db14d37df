// agent-loop-wasm/mcp against a server built on the official SDK (servers/control.mjs, stdio): what
// server-everything does not do on demand — every content type, tool errors, a cancellation the server logs, a
// server that dies mid-call, tools added and removed mid-session — plus syncMcpTools with several servers and
// what is left after stop() and client close.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  CONTROL,
  EVERYTHING,
  alive,
  call,
  declaredTools,
  mcpTools,
  reply,
  resultOf,
  scriptedAgent,
  sleep,
  stdioClient,
  syncMcpTools,
  tempDir,
  toolChanges,
  toolLabels,
} from "./helpers.mjs";

const T = { timeout: 30000 };
const LIST_CHANGED = "notifications/tools/list_changed";
const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** The control server with its log file; `log()` reads the lines it wrote. */
async function control(t) {
  const tmp = tempDir("mcp-control-");
  const logFile = join(tmp.dir, "server.log");
  writeFileSync(logFile, "");
  const { client, pid } = await stdioClient(CONTROL, [], { env: { CONTROL_LOG: logFile } });
  t.after(async () => {
    await client.close();
    tmp.remove();
  });
  return { client, pid, log: () => readFileSync(logFile, "utf8").split("\n").filter(Boolean) };
}

async function until(predicate, what, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

test("every MCP content type maps to text and image blocks; raw blocks and structuredContent are kept", T, async (t) => {
  const { client } = await control(t);
  const [media] = await mcpTools(client, { filter: ["media"] });
  const result = await media.execute("m1", {}, undefined, undefined);
  assert.deepEqual(result.content, [
    { type: "text", text: "media follows" },
    { type: "image", data: PNG_1x1, mimeType: "image/png" },
    { type: "text", text: "[audio audio/wav, 6 bytes]" },
    { type: "text", text: "note text" },
    { type: "image", data: PNG_1x1, mimeType: "image/png" },
    { type: "text", text: "[resource file:///data.bin (application/octet-stream), 4 bytes]" },
    { type: "text", text: "[resource link big.csv: file:///big.csv (text/csv)] All rows" },
  ]);
  assert.deepEqual(result.structuredContent, { count: 7 });
  assert.equal(result.isError, undefined);
  assert.equal(result.details.tool, "media");
  assert.deepEqual(result.details.content.map((b) => b.type), ["text", "image", "audio", "resource", "resource", "resource", "resource_link"]);
});

test("progress notifications become tool_execution_update events with the server's messages", T, async (t) => {
  const { client, log } = await control(t);
  const tools = await mcpTools(client, { filter: ["progress"] });
  const { agent, events } = scriptedAgent([reply(call("p1", "progress", { steps: 3 })), reply("ok")], { initialState: { tools } });
  await agent.prompt("go");
  const updates = events.filter((e) => e.type === "tool_execution_update");
  assert.deepEqual(
    updates.map((e) => [e.toolCallId, e.partialResult.content[0].text, e.partialResult.details]),
    [1, 2, 3].map((i) => ["p1", `step ${i} of 3`, { tool: "progress", progress: i, total: 3, message: `step ${i} of 3` }]),
  );
  assert.deepEqual(toolLabels(events), ["start:p1", "update:p1", "update:p1", "update:p1", "end:p1"]);
  assert.deepEqual(resultOf(agent.state.messages, "p1").content, [{ type: "text", text: "3 steps done" }]);
  assert.ok(log().includes("progress token present"), "the SDK asked for progress because onUpdate was given");
});

test("a tool error (isError) and a throwing handler become error results with the server's message", T, async (t) => {
  const { client } = await control(t);
  const tools = await mcpTools(client, { filter: ["fail", "throws"] });
  const { agent } = scriptedAgent([reply(call("f1", "fail", { reason: "disk full" }), call("f2", "throws")), reply("noted")], {
    initialState: { tools },
  });
  await agent.prompt("go");
  const fail = resultOf(agent.state.messages, "f1");
  assert.equal(fail.isError, true);
  assert.deepEqual(fail.content, [{ type: "text", text: "cannot do it: disk full" }]);
  assert.deepEqual(fail.details, { tool: "fail", content: [{ type: "text", text: "cannot do it: disk full" }] });
  const thrown = resultOf(agent.state.messages, "f2");
  assert.equal(thrown.isError, true);
  assert.deepEqual(thrown.content, [{ type: "text", text: "the handler broke" }]);
  assert.equal(agent.state.messages.at(-1).content[0].text, "noted", "the run went on to the next request");
});

test("abort during a call: the server receives notifications/cancelled for that request", T, async (t) => {
  const { client, log } = await control(t);
  const tools = await mcpTools(client, { filter: ["wait_for_cancel"] });
  const { agent, events, model } = scriptedAgent([reply(call("w1", "wait_for_cancel"))], { initialState: { tools } });
  const run = agent.prompt("wait");
  await until(() => log().some((l) => l.startsWith("started ")), "the server to start the call");
  agent.abort();
  await run;
  await until(() => log().some((l) => l.startsWith("cancelled ")), "the server to log the cancellation");
  const started = log().find((l) => l.startsWith("started ")).slice("started ".length);
  assert.deepEqual(log().filter((l) => l.startsWith("cancelled ")), [`cancelled ${started}: AbortError: This operation was aborted`]);
  assert.equal(resultOf(agent.state.messages, "w1").isError, true);
  assert.equal(events.at(-1).type, "agent_end");
  assert.equal(model.requests.length, 1);
});

test("a server that dies mid-call: the call gets an error result with the transport's message; the run goes on", T, async (t) => {
  const { client, pid, log } = await control(t);
  const tools = await mcpTools(client, { filter: ["die", "fail"] });
  const { agent, events, model } = scriptedAgent([reply(call("d1", "die")), reply(call("d2", "fail", { reason: "x" })), reply("gave up")], {
    initialState: { tools },
  });
  await agent.prompt("go");
  assert.ok(log().includes("dying"));
  const died = resultOf(agent.state.messages, "d1");
  assert.equal(died.isError, true);
  assert.deepEqual(died.content, [{ type: "text", text: "MCP error -32000: Connection closed" }]);
  // A call after the death fails at once with the SDK's own message.
  const after = resultOf(agent.state.messages, "d2");
  assert.equal(after.isError, true);
  assert.deepEqual(after.content, [{ type: "text", text: "Not connected" }]);
  assert.equal(model.requests.length, 3);
  assert.deepEqual(toolLabels(events), ["start:d1", "end:d1", "start:d2", "end:d2"]);
  await until(() => !alive(pid), "the server process to be gone");
});

test("syncMcpTools: tools added and removed mid-session are declared to the model exactly once each", T, async (t) => {
  const { client } = await control(t);
  const { agent, model } = scriptedAgent([
    reply(call("a1", "ctl_add_tool", { name: "triple" })),
    reply("added"),
    reply(call("a2", "ctl_triple", { x: 3 })),
    reply("tripled"),
    reply("nothing to do"),
    reply(call("a3", "ctl_remove_tool", { name: "triple" })),
    reply("removed"),
    reply("after removal"),
    reply("after stop"),
  ]);
  const changes = [];
  const stop = await syncMcpTools(agent, client, { prefix: "ctl_", onChange: (tools) => changes.push(tools.map((x) => x.name)) });
  const initial = agent.state.tools.map((x) => x.name);
  assert.ok(initial.includes("ctl_add_tool") && !initial.includes("ctl_triple"));

  await agent.prompt("add a tool");
  await until(() => agent.state.tools.some((x) => x.name === "ctl_triple"), "the list change to arrive");
  await agent.prompt("use it");
  assert.deepEqual(resultOf(agent.state.messages, "a2").content, [{ type: "text", text: "triple(3)" }]);
  await agent.prompt("again, no change");

  await agent.prompt("remove it");
  await until(() => !agent.state.tools.some((x) => x.name === "ctl_triple"), "the removal to arrive");
  await agent.prompt("after removal");

  // Transcript: the first declaration, +ctl_triple once, -ctl_triple once — nothing repeated across prompts.
  assert.deepEqual(toolChanges(agent.state.messages), [
    { added: initial, removed: [] },
    { added: ["ctl_triple"], removed: [] },
    { added: [], removed: ["ctl_triple"] },
  ]);
  // Request 3 (the second prompt) was the first to offer ctl_triple to the model.
  assert.ok(!model.requests[1].tools.includes("ctl_triple"));
  assert.ok(model.requests[2].tools.includes("ctl_triple"));
  assert.ok(!model.requests[7].tools.includes("ctl_triple"));
  assert.ok(changes.some((names) => names.includes("ctl_triple")));

  stop();
  assert.deepEqual(agent.state.tools, []);
  assert.equal(client._notificationHandlers.has(LIST_CHANGED), false, "no handler left on the client");
  await agent.prompt("after stop");
  assert.deepEqual(toolChanges(agent.state.messages).at(-1), { added: [], removed: initial });
  assert.deepEqual(declaredTools(agent.state.messages), []);
});

test("syncMcpTools: several servers; a name clash is a clear error that changes nothing, a prefix resolves it", T, async (t) => {
  const { client: ctl } = await control(t);
  const { client: everything, pid } = await stdioClient(EVERYTHING, ["stdio"]);
  t.after(() => everything.close());
  const own = { name: "own", label: "own", description: "mine", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [], details: {} }) };
  const { agent } = scriptedAgent(
    [reply(call("e1", "echo", { message: "a" }), call("e2", "ctl_echo", { message: "b" })), reply("both echoed")],
    { initialState: { tools: [own] } },
  );
  const stopEverything = await syncMcpTools(agent, everything);
  const withEverything = agent.state.tools.map((x) => x.name);
  assert.equal(withEverything[0], "own");
  assert.ok(withEverything.includes("echo"));

  await assert.rejects(syncMcpTools(agent, ctl), {
    message: 'syncMcpTools: the tool "echo" of control clashes with a tool of mcp-servers/everything; give this server a prefix (options.prefix)',
    code: "MCP_TOOLS", // E-8.6
  });
  const { McpToolsError, AgentLoopError } = await import("agent-loop-wasm");
  await assert.rejects(syncMcpTools(agent, ctl), (e) => e instanceof McpToolsError && e instanceof AgentLoopError);
  assert.deepEqual(agent.state.tools.map((x) => x.name), withEverything);
  const mine = { ...own, name: "fail" };
  const { agent: second } = scriptedAgent([], { initialState: { tools: [mine] } });
  await assert.rejects(syncMcpTools(second, ctl, { filter: ["fail"] }), {
    message: 'syncMcpTools: the tool "fail" of control clashes with a tool already in agent.state.tools; give this server a prefix (options.prefix)',
  });
  assert.deepEqual(second.state.tools, [mine]);

  const stopControl = await syncMcpTools(agent, ctl, { prefix: "ctl_" });
  await agent.prompt("echo on both");
  assert.deepEqual(resultOf(agent.state.messages, "e1").content, [{ type: "text", text: "Echo: a" }]);
  assert.deepEqual(resultOf(agent.state.messages, "e2").content, [{ type: "text", text: "control echo: b" }]);

  stopEverything();
  assert.ok(agent.state.tools.every((x) => x.name === "own" || x.name.startsWith("ctl_")));
  stopControl();
  assert.deepEqual(agent.state.tools, [own]);
  for (const c of [ctl, everything]) assert.equal(c._notificationHandlers.has(LIST_CHANGED), false);

  await everything.close();
  assert.equal(everything.transport, undefined, "the client let go of its transport");
  await until(() => !alive(pid), "server-everything to exit after close");
});

test("syncMcpTools chains a list_changed handler set before it and puts it back on stop", T, async (t) => {
  const { client } = await control(t);
  const seen = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => {
    seen.push(n.method);
  });
  const { agent } = scriptedAgent([]);
  const stopA = await syncMcpTools(agent, client, { filter: ["add_tool", "remove_tool"] });
  const { agent: other } = scriptedAgent([]);
  const stopB = await syncMcpTools(other, client, { prefix: "b_" });
  const [add] = agent.state.tools;
  await add.execute("x", { name: "extra" });
  await until(() => other.state.tools.some((x) => x.name === "b_extra"), "the second agent to see the new tool");
  await until(() => seen.length === 1, "the earlier handler to be called too");
  assert.deepEqual(agent.state.tools.map((x) => x.name), ["add_tool", "remove_tool"], "the filter still applies");

  stopA();
  stopB();
  assert.deepEqual(other.state.tools, []);
  await (await mcpTools(client, { filter: ["remove_tool"] }))[0].execute("y", { name: "extra" });
  await until(() => seen.length === 2, "the earlier handler, put back, to see the next change");
  assert.deepEqual(agent.state.tools, []);
  assert.equal(client._notificationHandlers.has(LIST_CHANGED), true, "the app's handler is back");
});

test("syncMcpTools: a clash on a later refresh goes to onError and keeps the tools as they were", T, async (t) => {
  const { client } = await control(t);
  const mine = { name: "ctl_late", label: "mine", description: "mine", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [], details: {} }) };
  const { agent } = scriptedAgent([], { initialState: { tools: [mine] } });
  const errors = [];
  const stop = await syncMcpTools(agent, client, { prefix: "ctl_", onError: (e) => errors.push(e.message) });
  const before = agent.state.tools;
  await (await mcpTools(client, { filter: ["add_tool"] }))[0].execute("x", { name: "late" });
  await until(() => errors.length > 0, "the refresh to report the clash");
  assert.deepEqual(errors, ['syncMcpTools: the tool "ctl_late" of control clashes with a tool already in agent.state.tools; give this server a prefix (options.prefix)']);
  assert.equal(agent.state.tools, before, "agent.state.tools untouched");
  stop();
  assert.deepEqual(agent.state.tools, [mine]);
});

test("syncMcpTools refuses what is not an agent or a client, with TypeErrors naming the argument", T, async () => {
  await assert.rejects(syncMcpTools({}, {}), { name: "TypeError", message: "syncMcpTools: agent must be an Agent (an object whose state.tools is an array)" });
  const { agent } = scriptedAgent([]);
  await assert.rejects(syncMcpTools(agent, null), { name: "TypeError", message: "syncMcpTools: client must be a connected Client from @modelcontextprotocol/sdk" });
  await assert.rejects(syncMcpTools(agent, { listTools() {}, callTool() {} }, { onError: 1 }), {
    name: "TypeError",
    message: "syncMcpTools: options.onError must be a function",
  });
});
