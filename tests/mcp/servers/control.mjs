// An MCP server for the tests, on the official SDK's McpServer over stdio: the behaviours server-everything does
// not offer on demand. Each event the tests must see from the server side (a cancellation it received, a crash it
// is about to have) is appended as one line to the file named by CONTROL_LOG.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const log = (line) => process.env.CONTROL_LOG && appendFileSync(process.env.CONTROL_LOG, `${line}\n`);
const server = new McpServer({ name: "control", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

server.registerTool("wait_for_cancel", { description: "Runs until the client cancels it", inputSchema: {} }, (_args, extra) =>
  new Promise((resolve) => {
    log(`started ${extra.requestId}`);
    extra.signal.addEventListener("abort", () => {
      log(`cancelled ${extra.requestId}: ${extra.signal.reason}`);
      resolve({ content: [{ type: "text", text: "cancelled" }] });
    });
  }),
);

server.registerTool("progress", { description: "Reports progress, then answers", inputSchema: { steps: z.number() } }, async ({ steps }, extra) => {
  const progressToken = extra._meta?.progressToken;
  log(`progress token ${progressToken === undefined ? "absent" : "present"}`);
  for (let i = 1; i <= steps; i++) {
    if (progressToken !== undefined) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: i, total: steps, message: `step ${i} of ${steps}` } });
    }
    // apart from the answer: the SDK client drops a progress notification read in the same chunk as the response
    await new Promise((r) => setTimeout(r, 30));
  }
  return { content: [{ type: "text", text: `${steps} steps done` }] };
});

server.registerTool("fail", { description: "Reports a failure", inputSchema: { reason: z.string() } }, ({ reason }) => ({
  content: [{ type: "text", text: `cannot do it: ${reason}` }],
  isError: true,
}));

server.registerTool("throws", { description: "Its handler throws", inputSchema: {} }, () => {
  throw new Error("the handler broke");
});

server.registerTool("die", { description: "The server process exits mid-call", inputSchema: {} }, () => {
  log("dying");
  setTimeout(() => process.exit(7), 50);
  return new Promise(() => {});
});

server.registerTool("media", { description: "Every content type", inputSchema: {} }, () => ({
  content: [
    { type: "text", text: "media follows" },
    { type: "image", data: PNG_1x1, mimeType: "image/png" },
    { type: "audio", data: "AAAAAAAA", mimeType: "audio/wav" },
    { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "note text" } },
    { type: "resource", resource: { uri: "file:///pixel.png", mimeType: "image/png", blob: PNG_1x1 } },
    { type: "resource", resource: { uri: "file:///data.bin", mimeType: "application/octet-stream", blob: "AAECAw==" } },
    { type: "resource_link", uri: "file:///big.csv", name: "big.csv", mimeType: "text/csv", description: "All rows" },
  ],
  structuredContent: { count: 7 },
}));

const added = new Map();
server.registerTool("add_tool", { description: "Adds a tool named `name`", inputSchema: { name: z.string() } }, ({ name }) => {
  added.set(
    name,
    server.registerTool(name, { description: `Added at run time: ${name}`, inputSchema: { x: z.number() } }, ({ x }) => ({
      content: [{ type: "text", text: `${name}(${x})` }],
    })),
  );
  return { content: [{ type: "text", text: `added ${name}` }] };
});

server.registerTool("remove_tool", { description: "Removes the tool named `name`", inputSchema: { name: z.string() } }, ({ name }) => {
  added.get(name)?.remove();
  added.delete(name);
  return { content: [{ type: "text", text: `removed ${name}` }] };
});

server.registerTool("echo", { description: "Same name as server-everything's echo", inputSchema: { message: z.string() } }, ({ message }) => ({
  content: [{ type: "text", text: `control echo: ${message}` }],
}));

await server.connect(new StdioServerTransport());
log("ready");
