// agent-loop-wasm/mcp against @modelcontextprotocol/server-everything from npm (issue 18), over stdio (a child
// process) and over Streamable HTTP (its own process on 127.0.0.1): the tool listing as AgentTools, and full agent
// runs on a scripted model whose tool calls reach the real server.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  EVERYTHING,
  alive,
  call,
  httpClient,
  mcpTools,
  reply,
  resultOf,
  scriptedAgent,
  sleep,
  startEverythingHttp,
  stdioClient,
  texts,
  toolLabels,
} from "./helpers.mjs";

const T = { timeout: 30000 };

const transports = {
  stdio: async () => {
    const { client, pid } = await stdioClient(EVERYTHING, ["stdio"]);
    return { client, pid, stop: async () => {} };
  },
  "Streamable HTTP": async () => {
    const server = await startEverythingHttp();
    const { client } = await httpClient(server.url);
    return { client, pid: server.pid, stop: server.stop };
  },
};

for (const [transportName, connect] of Object.entries(transports)) {
  describe(`server-everything over ${transportName}`, () => {
    let client;
    let server;
    before(async () => {
      server = await connect();
      client = server.client;
    });
    after(async () => {
      await client?.close();
      await server?.stop();
    });

    test("mcpTools: every listed tool with its name, title as label, description and inputSchema as parameters", T, async () => {
      const { tools: listed } = await client.listTools();
      const tools = await mcpTools(client);
      assert.deepEqual(
        tools.map((t) => [t.name, t.label, t.description, t.parameters]),
        listed.map((t) => [t.name, t.title ?? t.name, t.description ?? "", t.inputSchema]),
      );
      assert.ok(tools.some((t) => t.name === "echo"));
      const structured = tools.find((t) => t.name === "get-structured-content");
      assert.deepEqual(structured.outputSchema, listed.find((t) => t.name === "get-structured-content").outputSchema);
      assert.equal(typeof structured.execute, "function");
    });

    test("mcpTools: prefix and filter (names list and predicate)", T, async () => {
      const byList = await mcpTools(client, { prefix: "ev_", filter: ["get-sum", "echo"] });
      assert.deepEqual(byList.map((t) => t.name).sort(), ["ev_echo", "ev_get-sum"]);
      const byPredicate = await mcpTools(client, { filter: (t) => t.name.startsWith("get-s") });
      assert.deepEqual(byPredicate.map((t) => t.name).sort(), ["get-structured-content", "get-sum"]);
      await assert.rejects(mcpTools(client, { prefix: 1 }), { name: "TypeError", message: "mcpTools: options.prefix must be a string" });
      await assert.rejects(mcpTools({}), {
        name: "TypeError",
        message: "mcpTools: client.listTools is not a function (pass a Client from @modelcontextprotocol/sdk)",
      });
    });

    test("a run with parallel calls: results mapped (text, image, structured, resources), progress as updates", T, async () => {
      const tools = await mcpTools(client, { prefix: "ev_" });
      const { agent, model, events } = scriptedAgent(
        [
          reply(
            call("c1", "ev_trigger-long-running-operation", { duration: 0.6, steps: 3 }),
            call("c2", "ev_echo", { message: "hi" }),
            call("c3", "ev_get-sum", { a: 2, b: 3 }),
            call("c4", "ev_get-tiny-image"),
            call("c5", "ev_get-structured-content", { location: "Chicago" }),
            call("c6", "ev_get-resource-links", { count: 2 }),
            call("c7", "ev_get-resource-reference", { resourceType: "Text", resourceId: 1 }),
          ),
          reply("all done"),
        ],
        { initialState: { tools } },
      );
      const warnings = [];
      const onWarning = (w) => warnings.push(w.name);
      process.on("warning", onWarning);
      await agent.prompt("use the tools");
      await sleep(10); // warnings are emitted on a later tick
      process.off("warning", onWarning);
      assert.deepEqual(warnings, [], "no listener pile-up on the run's signal (one SDK listener per call would pass 10)");
      const messages = agent.state.messages;
      assert.equal(messages.at(-1).content[0].text, "all done");
      // The first request declared every tool; the second carried the seven results.
      assert.deepEqual(model.requests[0].tools, tools.map((t) => t.name));
      assert.equal(model.requests[1].messages.filter((m) => m.role === "toolResult").length, 7);

      const labels = toolLabels(events);
      assert.deepEqual(labels.filter((l) => l.startsWith("start:")), ["c1", "c2", "c3", "c4", "c5", "c6", "c7"].map((id) => `start:${id}`));
      assert.equal(labels.at(-1), "end:c1", "the long-running call ends last: the calls ran in parallel");

      const echo = resultOf(messages, "c2");
      assert.deepEqual(echo.content, [{ type: "text", text: "Echo: hi" }]);
      assert.equal(echo.isError, false);
      assert.deepEqual(echo.details, { tool: "echo", content: [{ type: "text", text: "Echo: hi" }] });
      assert.deepEqual(resultOf(messages, "c3").content, [{ type: "text", text: "The sum of 2 and 3 is 5." }]);
      assert.deepEqual(texts(resultOf(messages, "c1").content), ["Long running operation completed. Duration: 0.6 seconds, Steps: 3."]);

      const image = resultOf(messages, "c4").content;
      assert.deepEqual(image.map((b) => b.type), ["text", "image", "text"]);
      assert.equal(image[1].mimeType, "image/png");
      assert.ok(image[1].data.startsWith("iVBORw0KGgo"), "the PNG's base64 as sent");

      const weather = resultOf(messages, "c5");
      assert.equal(typeof weather.details.content[0].text, "string");
      const structured = JSON.parse(weather.details.content[0].text);
      assert.deepEqual(Object.keys(structured).sort(), ["conditions", "humidity", "temperature"]);
      assert.deepEqual(texts(weather.content), [weather.details.content[0].text]);

      assert.deepEqual(texts(resultOf(messages, "c6").content), [
        "Here are 2 resource links to resources available in this server:",
        "[resource link Blob Resource 1: demo://resource/dynamic/blob/1 (text/plain)] Resource 1: plaintext resource",
        "[resource link Text Resource 2: demo://resource/dynamic/text/2 (text/plain)] Resource 2: plaintext resource",
      ]);
      const reference = texts(resultOf(messages, "c7").content);
      assert.equal(reference.length, 3);
      assert.equal(reference[0], "Returning resource reference for Resource 1:");
      assert.match(reference[1], /^Resource 1: This is a plaintext resource created at /);
      assert.equal(reference[2], "You can access this resource using the URI: demo://resource/dynamic/text/1");

      // Progress notifications became tool_execution_update events of c1, in order. The SDK client drops a
      // notification it reads in the same chunk as the response (an "unknown token" error), so the last may miss.
      const updates = events.filter((e) => e.type === "tool_execution_update");
      assert.ok(updates.every((e) => e.toolCallId === "c1" && e.toolName === "ev_trigger-long-running-operation"));
      const progress = updates.map((e) => e.partialResult.content[0].text);
      assert.ok(progress.length >= 2, `progress updates: ${JSON.stringify(progress)}`);
      assert.deepEqual(progress, ["1/3", "2/3", "3/3"].slice(0, progress.length));
      assert.deepEqual(updates[0].partialResult.details, { tool: "trigger-long-running-operation", progress: 1, total: 3 });
    });

    test("structuredContent reaches the tool result; bad arguments stop at our validator", T, async () => {
      const tools = await mcpTools(client, { filter: ["get-structured-content", "get-sum"] });
      const { agent } = scriptedAgent(
        [reply(call("s1", "get-structured-content", { location: "New York" }), call("s2", "get-sum", { a: 1, b: "two" })), reply("ok")],
        { initialState: { tools } },
      );
      let structured;
      agent.subscribe((e) => {
        if (e.type === "tool_execution_end" && e.toolCallId === "s1") structured = e.result.structuredContent;
      });
      await agent.prompt("weather");
      assert.deepEqual(Object.keys(structured).sort(), ["conditions", "humidity", "temperature"]);
      const bad = resultOf(agent.state.messages, "s2");
      assert.equal(bad.isError, true);
      assert.deepEqual(bad.details, {}, "the tool never ran");
      assert.equal(bad.content[0].text, 'Validation failed for tool "get-sum":\n  - b: expected number, got string\n\nReceived arguments:\n{\n  "a": 1,\n  "b": "two"\n}');
    });

    test("abort during a long-running call ends the run at once with an aborted result", T, async () => {
      const tools = await mcpTools(client, { filter: ["trigger-long-running-operation"] });
      const { agent, model, events } = scriptedAgent([reply(call("l1", "trigger-long-running-operation", { duration: 20, steps: 20 }))], {
        initialState: { tools },
      });
      agent.subscribe((e) => {
        if (e.type === "tool_execution_update") agent.abort();
      });
      const started = Date.now();
      await agent.prompt("long");
      assert.ok(Date.now() - started < 5000, "the run did not wait for the 20 s operation");
      const result = resultOf(agent.state.messages, "l1");
      assert.equal(result.isError, true);
      assert.deepEqual(result.content, [{ type: "text", text: "MCP error -32001: AbortError: This operation was aborted" }]);
      assert.equal(events.at(-1).type, "agent_end");
      assert.equal(model.requests.length, 1, "no request after the abort");
      assert.equal(agent.state.messages.at(-1), result);
      assert.ok(alive(server.pid), "the server process lives on");
      // The session is still usable after the cancellation.
      const [echo] = await mcpTools(client, { filter: ["echo"] });
      assert.deepEqual((await echo.execute("x", { message: "still here" })).content, [{ type: "text", text: "Echo: still here" }]);
      await sleep(0);
    });
  });
}
