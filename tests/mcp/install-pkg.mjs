#!/usr/bin/env node
// Installs the built package (pkg/) into tests/mcp/node_modules/agent-loop-wasm as a copy, so the MCP tests load
// `agent-loop-wasm` and `agent-loop-wasm/mcp` by name through its exports map, and its `@modelcontextprotocol/sdk`
// import resolves to this folder's SDK (a symlink would resolve from pkg/, where no SDK is). Run after each build,
// before `node --test tests/mcp/` (the tests refuse a copy older than pkg/).
import { cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..", "..", "pkg");
const target = join(here, "node_modules", "agent-loop-wasm");
if (!existsSync(join(pkg, "package.json"))) throw new Error(`no built package at ${pkg}: run node scripts/build.mjs first`);
if (!existsSync(join(here, "node_modules", "@modelcontextprotocol", "sdk"))) {
  throw new Error("tests/mcp/node_modules lacks @modelcontextprotocol/sdk: run scripts/setup (npm ci in tests/mcp)");
}
rmSync(target, { recursive: true, force: true });
cpSync(pkg, target, { recursive: true, preserveTimestamps: true });
console.log(`installed ${pkg} as ${target}`);
