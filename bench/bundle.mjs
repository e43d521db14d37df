// (g) Browser bundle size, gzip: our package (loop + 4 built-in providers; JS bundle plus the .wasm
// file) vs pi-agent-core + pi-ai with the same four providers, both bundled by esbuild for the
// browser (bundle, minify, tree-shaking, ESM, es2020).
import { existsSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { OUR_WEB_ENTRY, OUR_WEB_WASM, ROOT, ourWasmFile } from "./impl.mjs";

const gz = (buf) => gzipSync(buf, { level: 9 }).length;

const REFERENCE_ENTRY = `
export { agentLoop, agentLoopContinue, runAgentLoop, runAgentLoopContinue, Agent, setDefaultStreamFn, DEFAULT_AGENT_IDENTITY } from "@earendil-works/pi-agent-core";
export { EventStream, AssistantMessageEventStream, createAssistantMessageEventStream, validateToolArguments } from "@earendil-works/pi-ai";
export { streamSimple as streamOpenAICompletions } from "@earendil-works/pi-ai/api/openai-completions";
export { streamSimple as streamAnthropicMessages } from "@earendil-works/pi-ai/api/anthropic-messages";
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

/** Returns { reference, ours | oursSkipped, wasm } with byte counts. */
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
  } catch (e) {
    out.referenceError = String(e.message ?? e).split("\n")[0];
  }
  const wasmFile = existsSync(OUR_WEB_WASM) ? OUR_WEB_WASM : ourWasmFile();
  if (wasmFile) {
    const w = readFileSync(wasmFile);
    out.wasm = { file: wasmFile.slice(ROOT.length + 1), raw: w.length, gzip: gz(w) };
  }
  if (!existsSync(OUR_WEB_ENTRY)) {
    out.oursSkipped = `${OUR_WEB_ENTRY.slice(ROOT.length + 1)} is absent (web entry not built yet)`;
    return out;
  }
  try {
    out.ours = await bundle(esbuild, `export * from ${JSON.stringify(OUR_WEB_ENTRY)};`);
    out.ours.total = out.ours.gzip + (out.wasm?.gzip ?? 0);
  } catch (e) {
    out.oursSkipped = `esbuild failed on our web entry: ${String(e.message ?? e).split("\n")[0]}`;
  }
  return out;
}
