// The design document's example, offline: "list the files, then read the README" — two tools run
// in parallel, their results go back to the model, and it answers. Every event is printed as it
// streams. Run: node examples/demo.mjs  (after node scripts/build.mjs)
import { readdir, readFile } from "node:fs/promises";
import * as agent from "../pkg/dist/node/index.mjs";
import { offlineModel } from "./offline-model.mjs";

const { agentLoop } = agent;

const tools = [
  {
    name: "list_files", label: "List files", description: "List the entries of a directory",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    async execute(_id, { path }) {
      const entries = (await readdir(path)).sort();
      return { content: [{ type: "text", text: entries.join("\n") }], details: { count: entries.length } };
    },
  },
  {
    name: "read_file", label: "Read file", description: "Read a UTF-8 text file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    async execute(_id, { path }) {
      const text = await readFile(path, "utf8");
      return { content: [{ type: "text", text: text.slice(0, 2000) }], details: { bytes: text.length } };
    },
  },
];

const model = { id: "offline-demo", name: "Offline demo", api: "offline", provider: "offline" };
const prompt = { role: "user", content: "List the files, then read the README.", timestamp: Date.now() };
const started = performance.now();
const ms = () => `${String(Math.round(performance.now() - started)).padStart(5)} ms`;

const stream = agentLoop([prompt], { messages: [], tools }, { model, convertToLlm: (m) => m }, undefined,
  offlineModel(agent));
for await (const event of stream) {
  switch (event.type) {
    case "message_update":
      if (event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
      break;
    case "message_end":
      if (event.message.role === "assistant") process.stdout.write("\n");
      else console.log(`${ms()}  ${event.message.role} message`);
      break;
    case "tool_execution_start":
      console.log(`${ms()}  ▶ ${event.toolName}(${JSON.stringify(event.args)})`);
      break;
    case "tool_execution_end":
      console.log(`${ms()}  ✔ ${event.toolName} ${event.isError ? "failed" : "done"} in ${event.durationMs ?? 0} ms`);
      break;
    default:
      console.log(`${ms()}  ${event.type}`);
  }
}
const messages = await stream.result();
console.log(`${ms()}  run finished with ${messages.length} new messages: ${messages.map((m) => m.role).join(", ")}`);
