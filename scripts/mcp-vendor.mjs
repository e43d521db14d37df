#!/usr/bin/env node
// Bundles the parts of @modelcontextprotocol/sdk the demo page needs (its Streamable HTTP client, and types.js for
// agent-loop-wasm/mcp) into www/vendor/mcp-sdk.js, one ES module: the page has no build step, and the SDK's client
// cannot load unbundled (it pulls in CommonJS ajv). The SDK comes from tests/mcp (scripts/setup installs it).
// Usage: node scripts/mcp-vendor.mjs   (the demo's "Connect" button says so when the file is missing)
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "vite";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const work = join(root, "tests", "mcp", ".vendor-entry");
mkdirSync(work, { recursive: true });
// The entry lives under tests/mcp so that its imports resolve from tests/mcp/node_modules.
writeFileSync(
  join(work, "entry.js"),
  `export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export * from "@modelcontextprotocol/sdk/types.js";
`,
);
await build({
  configFile: false,
  logLevel: "warn",
  root: work,
  build: {
    outDir: join(root, "www", "vendor"),
    emptyOutDir: true,
    minify: true,
    lib: { entry: join(work, "entry.js"), formats: ["es"], fileName: () => "mcp-sdk.js" },
  },
});
console.log("built www/vendor/mcp-sdk.js");
