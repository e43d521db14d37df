// Built by Vite in runtimes.test.mjs and opened in Chromium with ?mcp=<server-everything URL>: the SDK's Streamable
// HTTP client (cross-origin; the server allows it) and agent-loop-wasm/mcp in a page, through a full agent run.
import { Agent, createAssistantMessageEventStream } from "agent-loop-wasm";
import { mcpTools } from "agent-loop-wasm/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runScenario } from "../scenario.mjs";

async function main() {
  const client = new Client({ name: "page-client", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(new URLSearchParams(location.search).get("mcp"))));
  const summary = await runScenario({ Agent, createAssistantMessageEventStream, mcpTools, client });
  await client.close();
  return summary;
}
main().then(
  (summary) => { window.__result = { ok: true, summary }; },
  (e) => { window.__result = { ok: false, error: String((e && e.stack) || e) }; },
);
