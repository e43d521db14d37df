// (g) Browser download, gzip (issue 43): what an app fetches before a first run, JS + .wasm, for (a) the loop with
// the app's own stream function, (b) the loop and a built-in provider, (c) everything, beside pi-agent-core alone, with
// one pi-ai provider, and with the four; all bundled by esbuild for the browser (bundle, minify, tree-shaking, ESM,
// es2020; ours with code splitting, so what the providers' dynamic import loads is counted only where it is loaded).
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { OUR_WEB_ENTRY, OUR_WEB_WASM, ROOT } from "./impl.mjs";

const gz = (buf) => gzipSync(buf, { level: 9 }).length;

const REFERENCE_LOOP = `
export { agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue, Agent, setDefaultStreamFn, DEFAULT_AGENT_IDENTITY } from "@earendil-works/pi-agent-core";
export { EventStream, AssistantMessageEventStream, createAssistantMessageEventStream, validateToolArguments } from "@earendil-works/pi-ai";
`;
const REFERENCE_ONE = `${REFERENCE_LOOP}export { streamSimple as streamOpenAICompletions } from "@earendil-works/pi-ai/api/openai-completions";
`;
const REFERENCE_ENTRY = `${REFERENCE_ONE}export { streamSimple as streamAnthropicMessages } from "@earendil-works/pi-ai/api/anthropic-messages";
export { streamSimple as streamOpenAIResponses } from "@earendil-works/pi-ai/api/openai-responses";
export { streamSimple as streamGoogleGenerativeAI } from "@earendil-works/pi-ai/api/google-generative-ai";
`;

/** The bundle of the entry `contents` (resolved from `resolveDir`): bytes raw and gzip -9. */
export async function bundle(esbuild, contents, resolveDir = ROOT) {
  const result = await esbuild.build({
    stdin: { contents, resolveDir, sourcefile: "bench-entry.js", loader: "js" },
    bundle: true,
    minify: true,
    treeShaking: true,
    format: "esm",
    platform: "browser",
    target: "es2020",
    write: false,
    logLevel: "silent",
    // Node built-ins some SDK files name behind runtime checks; a browser build leaves them out.
    external: ["node:*"],
    supported: { "top-level-await": true },
  });
  const js = Buffer.concat(result.outputFiles.map((f) => Buffer.from(f.contents)));
  return { raw: js.length, gzip: gz(js), warnings: result.warnings.length };
}

/** What a browser app with each peer's loop and its providers imports (bench/peers, the peer table's
 *  bundle row). The AI SDK: `streamText` with tools and its providers for the same four wire formats
 *  (`@ai-sdk/openai` speaks both OpenAI APIs). OpenAI Agents: `Agent`, `run` and `tool` as the package
 *  ships them, with its one provider (OpenAI's two APIs, through the `openai` SDK). */
export const PEER_ENTRIES = {
  aisdk: `
export { streamText, tool, jsonSchema, stepCountIs } from "ai";
export { createOpenAI } from "@ai-sdk/openai";
export { createAnthropic } from "@ai-sdk/anthropic";
export { createGoogleGenerativeAI } from "@ai-sdk/google";
`,
  agents: `export { Agent, run, tool } from "@openai/agents";\n`,
};

/** The app: a run with its own stream function, and (on `window.builtin()`) one on the built-in provider. */
const APP = `import { agentLoop, createAssistantMessageEventStream } from "agent-loop-wasm";

const model = { id: "m", name: "m", api: "openai-completions", provider: "openai", baseUrl: "http://127.0.0.1:9/v1", reasoning: false,
  input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8192, maxTokens: 1024 };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (content) => ({ role: "user", content, timestamp: 1 });
const convertToLlm = (messages) => messages;

function ownStreamFn(model) {
  const stream = createAssistantMessageEventStream();
  const message = { role: "assistant", content: [{ type: "text", text: "own" }], api: model.api, provider: model.provider, model: model.id, usage, stopReason: "stop", timestamp: 1 };
  queueMicrotask(() => {
    stream.push({ type: "start", partial: { ...message, content: [] } });
    stream.push({ type: "done", reason: "stop", message });
    stream.end(message);
  });
  return stream;
}

async function lastText(stream) {
  for await (const _ of stream);
  const messages = await stream.result();
  return messages.at(-1).content.map((b) => b.text).join("");
}

const sse = (o) => "data: " + JSON.stringify(o) + "\\n\\n";
const body = sse({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "built-in" }, finish_reason: null }] })
  + sse({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) + "data: [DONE]\\n\\n";
const fetch = async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });

window.builtin = () => lastText(agentLoop([user("hi")], { messages: [] }, { model, convertToLlm, apiKey: "k", fetch }));
lastText(agentLoop([user("hi")], { messages: [] }, { model, convertToLlm }, undefined, ownStreamFn)).then(
  (text) => (window.own = { text }),
  (e) => (window.own = { error: String(e?.stack ?? e) }),
);
`;

/** How a browser app is bundled here (esbuild): minified ES modules for es2020, code splitting, the entry as app.js. */
export const BROWSER_APP = {
  bundle: true,
  minify: true,
  splitting: true,
  format: "esm",
  platform: "browser",
  target: "es2020",
  supported: { "top-level-await": true },
  entryNames: "app",
};

/** Bundles the app (`app`, the source of its entry; default the one above) into `out` with the wasm file beside it;
 *  returns its JS files by role: `first` (loaded before the first run), `later` (chunks behind a dynamic import). */
export async function buildApp(out, app = APP) {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    stdin: { contents: app, resolveDir: ROOT, sourcefile: "app.js", loader: "js" },
    alias: { "agent-loop-wasm": OUR_WEB_ENTRY },
    ...BROWSER_APP,
    outdir: out,
    metafile: true,
    // wasm-bindgen's web glue names a snippet module more than once as a key of its imports object (same value).
    logLevel: "error",
  });
  // The entry's static closure is what runs before the first run; every other output is behind a dynamic import.
  const outputs = result.metafile.outputs;
  const first = new Set();
  const visit = (file) => {
    if (first.has(file)) return;
    first.add(file);
    for (const i of outputs[file].imports) if (i.kind === "import-statement" && i.path in outputs) visit(i.path);
  };
  const entry = Object.keys(outputs).find((f) => outputs[f].entryPoint !== undefined);
  visit(entry);
  const js = Object.keys(outputs).filter((f) => f.endsWith(".js"));
  writeFileSync(join(out, "agent_loop_wasm_bg.wasm"), readFileSync(join(dirname(OUR_WEB_ENTRY), "agent_loop_wasm_bg.wasm")));
  return {
    first: js.filter((f) => first.has(f)).map((f) => basename(f)),
    later: js.filter((f) => !first.has(f)).map((f) => basename(f)),
  };
}

/** The system Chromium that playwright-core drives (no browser download), and its flags for a quiet headless run. */
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"];

/** Serves the files of `dir` (by base name) and `page` at `/` on 127.0.0.1, port 0, gzip -9 (as the sizes above
 *  count; compressed once, at start, so no request pays for it), no caching. */
export async function serveGzip(dir, page) {
  const types = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };
  const bodies = new Map([["/", { type: types[".html"], body: gzipSync(Buffer.from(page), { level: 9 }) }]]);
  for (const f of readdirSync(dir, { withFileTypes: true })) {
    if (!f.isFile()) continue;
    bodies.set(`/${f.name}`, { type: types[extname(f.name)] ?? "application/octet-stream", body: gzipSync(readFileSync(join(dir, f.name)), { level: 9 }) });
  }
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    const file = bodies.get(path === "/" ? path : `/${basename(path)}`);
    if (file === undefined) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": file.type, "content-encoding": "gzip", "content-length": file.body.length, "cache-control": "no-store" }).end(file.body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

/** Closes `server` and the connections it still holds. */
export function closeServer(server) {
  server.close();
  server.closeAllConnections();
}

const sizeOf = (dir, files) => files.reduce((n, f) => n + gz(readFileSync(join(dir, f))), 0);

/**
 * What a browser app downloads (issue 43), gzip -9, JS + wasm, from the built package: (a) before a first run with its
 * own stream function, (b) with a built-in provider too, (c) everything the main entry can load (today (b): the four
 * wire formats are one JS chunk). The app and its wasm are left in `out` (scripts/size-budget.mjs serves them).
 */
export async function ourDownloads(out) {
  const files = await buildApp(out);
  const loopWasm = gz(readFileSync(join(out, "agent_loop_wasm_bg.wasm")));
  const firstJs = sizeOf(out, files.first);
  // Behind dynamic imports: the providers' chunk (and what it shares), and the compaction module (issue 45).
  const compaction = files.later.filter((f) => f.startsWith("compaction"));
  const providersJs = sizeOf(out, files.later.filter((f) => !compaction.includes(f)));
  const laterJs = sizeOf(out, files.later);
  const a = firstJs + loopWasm;
  return { a, b: a + providersJs, c: a + laterJs, files, firstJs, laterJs, providersJs, compactionJs: laterJs - providersJs, loopWasm };
}

/**
 * Returns { reference, referenceLoop, referenceOne, downloads | oursSkipped, ours } with byte counts: pi with its four
 * providers, alone, with one; ours as `ourDownloads` measures it (`ours.total`: everything, (c)).
 */
export async function benchBundle() {
  let esbuild;
  try {
    esbuild = await import("esbuild");
  } catch {
    return { skipped: "esbuild is not installed (npm install)" };
  }
  const out = { esbuildVersion: esbuild.version };
  try {
    out.reference = await bundle(esbuild, REFERENCE_ENTRY);
    out.referenceLoop = await bundle(esbuild, REFERENCE_LOOP);
    out.referenceOne = await bundle(esbuild, REFERENCE_ONE);
  } catch (e) {
    out.referenceError = String(e.message ?? e).split("\n")[0];
  }
  if (!existsSync(OUR_WEB_ENTRY) || !existsSync(OUR_WEB_WASM)) {
    out.oursSkipped = `${OUR_WEB_ENTRY.slice(ROOT.length + 1)} is absent (web entry not built yet)`;
    return out;
  }
  const dir = mkdtempSync(join(tmpdir(), "agent-loop-bundle-"));
  try {
    out.downloads = await ourDownloads(dir);
    const d = out.downloads;
    out.ours = { total: d.c, raw: 0 };
    for (const f of [...d.files.first, ...d.files.later, "agent_loop_wasm_bg.wasm"]) {
      out.ours.raw += readFileSync(join(dir, f)).length;
    }
  } catch (e) {
    out.oursSkipped = `esbuild failed on our web entry: ${String(e.message ?? e).split("\n")[0]}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
