#!/usr/bin/env node
// Runs the Durable Objects example on local workerd (the npm `workerd` package) with SQLite storage on disk:
// writes a workerd config beside the storage folder (workerd resolves no node_modules, so the package's workerd
// entry folder is listed module by module, as wrangler would bundle it) and starts `workerd serve`.
//
//   node examples/durable-objects/serve.mjs [--port 8787] [--storage DIR] [--model-url URL] [--effects-url URL]
//                                           [--package DIR] [--workerd BIN]
//
// --package: an installed agent-loop-wasm (default: this repository's pkg/, built by scripts/build.mjs).
// The model is any built-in provider: MODEL_API, MODEL_PROVIDER, MODEL_ID and MODEL_API_KEY from the environment
// (default OpenAI Chat Completions at --model-url); CHARGE_APPROVAL_ABOVE_CENTS (default 1000): charges above it wait
// for approval. Ends workerd on SIGINT/SIGTERM.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const port = Number(option("port", process.env.PORT ?? 8787));
const storage = resolve(option("storage", join(here, ".storage")));
const pkgDir = resolve(option("package", join(root, "pkg")));
const workerd = option("workerd", join(root, "node_modules", ".bin", "workerd"));
const vars = {
  MODEL_URL: option("model-url", process.env.MODEL_URL ?? "https://api.openai.com/v1"),
  EFFECTS_URL: option("effects-url", process.env.EFFECTS_URL ?? "http://127.0.0.1:9999"),
  MODEL_API: process.env.MODEL_API ?? "openai-completions",
  MODEL_PROVIDER: process.env.MODEL_PROVIDER ?? "openai",
  MODEL_ID: process.env.MODEL_ID ?? "gpt-4o-mini",
  MODEL_API_KEY: process.env.MODEL_API_KEY ?? process.env.OPENAI_API_KEY ?? "",
  CHARGE_APPROVAL_ABOVE_CENTS: process.env.CHARGE_APPROVAL_ABOVE_CENTS ?? "1000",
};

export function writeConfig({ dir, port, storage, pkgDir, vars }) {
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const entry = join(pkgDir, pkg.exports["."].workerd);
  const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  const rel = (f) => relative(dir, f).split(sep).join("/");
  const name = (f) => relative(dirname(entry), f).split(sep).join("/");
  mkdirSync(join(storage, "do"), { recursive: true });
  writeFileSync(join(dir, "package-entry.mjs"), `export * from "./${name(entry)}";\n`);
  const modules = [
    `(name = "worker.js", esModule = embed "${rel(join(here, "worker.js"))}")`,
    `(name = "tools.js", esModule = embed "${rel(join(here, "tools.js"))}")`,
    `(name = "agent-loop-wasm", esModule = embed "package-entry.mjs")`,
    // agent-loop-wasm/ui (the chat endpoints): one file with no import.
    `(name = "agent-loop-wasm/ui", esModule = embed "${rel(join(pkgDir, pkg.exports["./ui"].default))}")`,
    ...walk(dirname(entry)).map((f) =>
      f.endsWith(".wasm") ? `(name = "${name(f)}", wasm = embed "${rel(f)}")` : `(name = "${name(f)}", esModule = embed "${rel(f)}")`,
    ),
  ];
  const bindings = Object.entries(vars).map(([k, v]) => `(name = "${k}", text = ${JSON.stringify(String(v))})`);
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .agents),
    (name = "disk", disk = (path = ${JSON.stringify(join(storage, "do"))}, writable = true)),
    # Outbound fetch may reach loopback and private addresses (a local model server); workerd allows only public ones
    # by default.
    (name = "net", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const agents :Workerd.Worker = (
  compatibilityDate = "2025-09-01",
  modules = [
    ${modules.join(",\n    ")}
  ],
  durableObjectNamespaces = [ (className = "AgentObject", uniqueKey = "agent-loop-wasm-agents", enableSql = true) ],
  durableObjectStorage = (localDisk = "disk"),
  bindings = [
    (name = "AGENTS", durableObjectNamespace = "AgentObject"),
    ${bindings.join(",\n    ")}
  ],
  globalOutbound = "net",
);
`;
  const file = join(dir, "config.capnp");
  writeFileSync(file, config);
  return file;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(storage, { recursive: true });
  const config = writeConfig({ dir: storage, port, storage, pkgDir, vars });
  const child = spawn(workerd, ["serve", config], { stdio: "inherit" });
  console.log(`agent-loop-wasm Durable Objects example: http://127.0.0.1:${port}/agents/<id> (storage ${storage})`);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
