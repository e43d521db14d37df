#!/usr/bin/env node
// `npm run dev`: the example on local workerd (the npm `workerd` package) with its Durable Objects' SQLite storage on
// disk, from this folder's own node_modules. workerd resolves no node_modules, so the config it is given lists the
// package's workerd entry module by module, as wrangler bundles it for a deployment.
//
//   npm run dev [-- --port 8787] [--storage .storage] [--dev-vars .dev.vars] [--package DIR] [--workerd BIN]
//
// The worker's variables, as `wrangler dev` takes them: wrangler.toml's [vars], then the --dev-vars file (KEY=value
// lines: the secrets, MODEL_API_KEY and AUTH_TOKEN), then the environment, for the names the README lists. When no
// AUTH_TOKEN is given anywhere, a random one is appended to the --dev-vars file (and printed), so the next start has
// the same; an AUTH_TOKEN that is set but empty is passed on as it is (the worker then answers 500 to everything).
// Binds 127.0.0.1 only; ends workerd on SIGINT/SIGTERM.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The worker's own modules, embedded by name as wrangler bundles them. */
const SOURCES = ["worker.js", "access.js", "model.js", "tools.js"];
/** Every variable and secret the worker reads (README, "Configuration"). */
export const VARIABLES = [
  "AUTH_TOKEN",
  "CORS_ORIGINS",
  "MODEL_API",
  "MODEL_URL",
  "MODEL_ID",
  "MODEL_PROVIDER",
  "MODEL_API_KEY",
  "EFFECTS_URL",
  "CHARGE_APPROVAL_ABOVE_CENTS",
  "EVENTS_KEEPALIVE_MS",
  "SYSTEM_PROMPT",
];

/** wrangler.toml's [vars]: `NAME = "value"` lines (TOML basic strings are JSON strings). */
export function tomlVars(file) {
  const vars = {};
  let inVars = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const t = line.trim();
    if (t.startsWith("[")) inVars = t === "[vars]";
    const m = inVars && /^([A-Z_][A-Z0-9_]*)\s*=\s*(".*")\s*(#.*)?$/.exec(t);
    if (m) vars[m[1]] = JSON.parse(m[2]);
  }
  return vars;
}

/** A .dev.vars file: `NAME=value` lines, `#` comments, values optionally in double quotes; {} when absent. */
export function devVars(file) {
  if (!existsSync(file)) return {};
  const vars = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m && !line.trim().startsWith("#")) vars[m[1]] = m[2].startsWith('"') ? JSON.parse(m[2]) : m[2];
  }
  return vars;
}

/** Writes config.capnp into `dir` for workerd: the worker on 127.0.0.1:`port`, its objects' SQLite under `storage`. */
export function writeConfig({ dir, port, storage, pkgDir, vars }) {
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const entry = join(pkgDir, pkg.exports["."].workerd);
  const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  const rel = (f) => relative(dir, f).split(sep).join("/");
  const name = (f) => relative(dirname(entry), f).split(sep).join("/");
  mkdirSync(join(storage, "do"), { recursive: true });
  writeFileSync(join(dir, "package-entry.mjs"), `export * from "./${name(entry)}";\n`);
  // agent-loop-wasm/ui (the chat endpoints) re-exports the entry's file, listed below with its parts: a module's
  // relative imports resolve from its name's folder ("agent-loop-wasm/").
  writeFileSync(join(dir, "package-ui.mjs"), `export * from "../${name(join(pkgDir, pkg.exports["./ui"].default))}";\n`);
  const modules = [
    ...SOURCES.map((f) => `(name = "${f}", esModule = embed "${rel(join(here, f))}")`),
    `(name = "agent-loop-wasm", esModule = embed "package-entry.mjs")`,
    `(name = "agent-loop-wasm/ui", esModule = embed "package-ui.mjs")`,
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
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
  };
  const require = createRequire(join(here, "package.json"));
  const port = Number(option("port", process.env.PORT || 8787));
  const storage = resolve(option("storage", join(here, ".storage")));
  const varsFile = resolve(option("dev-vars", join(here, ".dev.vars")));
  const pkgDir = resolve(option("package", dirname(require.resolve("agent-loop-wasm/package.json"))));
  const workerd = option("workerd", join(dirname(require.resolve("workerd/package.json")), "bin", "workerd"));

  const fromEnv = Object.fromEntries(VARIABLES.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
  const vars = { ...tomlVars(join(here, "wrangler.toml")), ...devVars(varsFile), ...fromEnv };
  const shown = relative(process.cwd(), varsFile) || varsFile;
  if (vars.AUTH_TOKEN === undefined) {
    vars.AUTH_TOKEN = randomBytes(32).toString("hex");
    const before = existsSync(varsFile) ? readFileSync(varsFile, "utf8") : "";
    appendFileSync(varsFile, `${before === "" || before.endsWith("\n") ? "" : "\n"}AUTH_TOKEN=${vars.AUTH_TOKEN}\n`);
    console.log(`No AUTH_TOKEN was set: wrote a random one to ${shown} (kept for the next start).`);
  }
  mkdirSync(storage, { recursive: true });
  const config = writeConfig({ dir: storage, port, storage, pkgDir, vars });
  const child = spawn(workerd, ["serve", config], { stdio: "inherit" });
  const model = vars.MODEL_API ? `${vars.MODEL_API} ${vars.MODEL_ID}` : "the offline scripted model";
  console.log(`agent-loop-wasm on workerd: http://127.0.0.1:${port}/agents/<id> (${model}; storage ${storage})`);
  const from = fromEnv.AUTH_TOKEN !== undefined ? "the environment" : shown;
  console.log(`Every request needs the header Authorization: Bearer <AUTH_TOKEN> (its value is in ${from}).`);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
