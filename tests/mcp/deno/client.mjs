// Run by runtimes.test.mjs under Deno (`deno run --allow-net=127.0.0.1 deno/client.mjs <url>`, from tests/mcp so
// bare specifiers resolve from its node_modules): agent-loop-wasm/mcp over the SDK's Streamable HTTP client to
// server-everything, through a full agent run with a scripted model. Prints one JSON line.
import { Agent, createAssistantMessageEventStream } from "agent-loop-wasm";
import { mcpTools } from "agent-loop-wasm/mcp";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runScenario } from "../scenario.mjs";

const client = new Client({ name: "deno-client", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(Deno.args[0])));
const summary = await runScenario({ Agent, createAssistantMessageEventStream, mcpTools, client });
await client.close();
console.log(JSON.stringify({ entry: import.meta.resolve("agent-loop-wasm/mcp"), ...summary }));
// Deno stays alive after client.close() here; the client alone, direct tool calls, and an agent run without MCP
// each exit by themselves, so it is this combination (not chased yet, see the report of issue 18): exit.
Deno.exit(0);
