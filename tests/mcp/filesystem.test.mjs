// agent-loop-wasm/mcp against @modelcontextprotocol/server-filesystem from npm (stdio), confined to a temp
// directory: a scripted model creates, writes, lists and reads through the agent loop, and the disk is checked.
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { FILESYSTEM, alive, call, reply, resultOf, scriptedAgent, stdioClient, syncMcpTools, tempDir, texts } from "./helpers.mjs";

test("server-filesystem: write, list and read through agent runs, checked on disk; outside paths refused", { timeout: 30000 }, async (t) => {
  const tmp = tempDir("mcp-fs-");
  t.after(tmp.remove);
  const dir = realpathSync(tmp.dir);
  writeFileSync(join(dir, "given.txt"), "written by the test\n");
  const { client, pid } = await stdioClient(FILESYSTEM, [dir]);
  t.after(() => client.close());

  const notes = join(dir, "notes");
  const { agent, model, events } = scriptedAgent([
    reply(call("f1", "fs_create_directory", { path: notes })),
    reply(call("f2", "fs_write_file", { path: join(notes, "a.txt"), content: "alpha\n" }), call("f3", "fs_write_file", { path: join(notes, "b.txt"), content: "beta\n" })),
    reply(
      call("f4", "fs_list_directory", { path: notes }),
      call("f5", "fs_read_text_file", { path: join(dir, "given.txt") }),
      call("f6", "fs_read_text_file", { path: "/etc/hostname" }),
    ),
    reply("files handled"),
  ]);
  const stop = await syncMcpTools(agent, client, { prefix: "fs_" });
  assert.ok(agent.state.tools.some((x) => x.name === "fs_write_file"));
  await agent.prompt("organise my notes");

  const messages = agent.state.messages;
  assert.equal(messages.at(-1).content[0].text, "files handled");
  assert.equal(model.requests.length, 4);
  assert.equal(readFileSync(join(notes, "a.txt"), "utf8"), "alpha\n");
  assert.equal(readFileSync(join(notes, "b.txt"), "utf8"), "beta\n");
  assert.deepEqual(texts(resultOf(messages, "f2").content), [`Successfully wrote to ${join(notes, "a.txt")}`]);
  const ended = events.find((e) => e.type === "tool_execution_end" && e.toolCallId === "f2");
  assert.deepEqual(ended.result.structuredContent, { content: `Successfully wrote to ${join(notes, "a.txt")}` });
  assert.deepEqual(texts(resultOf(messages, "f4").content)[0].split("\n").sort(), ["[FILE] a.txt", "[FILE] b.txt"]);
  assert.deepEqual(texts(resultOf(messages, "f5").content), ["written by the test\n"]);
  const denied = resultOf(messages, "f6");
  assert.equal(denied.isError, true);
  assert.deepEqual(texts(denied.content), [`Access denied - path outside allowed directories: /etc/hostname not in ${dir}`]);
  assert.equal(existsSync(join(dir, "hostname")), false);

  stop();
  assert.deepEqual(agent.state.tools, []);
  await client.close();
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(alive(pid), false, "the server process ended with the client");
});
