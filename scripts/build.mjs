#!/usr/bin/env node
// Builds the npm package into pkg/: one wasm-pack build (release, --weak-refs, wasm-opt from the
// binaryen npm package), then the JS entries and declarations from pkg-template/.
// Usage: node scripts/build.mjs [--dev]   (--dev: unoptimised, faster to compile)
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dev = process.argv.includes("--dev");
const out = join(root, "pkg");
const wasmOut = join(root, "target", "wasm-pack", "web");
const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH}` };

const started = Date.now();
execFileSync(
  "wasm-pack",
  [
    "build", "--target", "web", "--out-dir", wasmOut, "--out-name", "agent_loop_wasm",
    "--weak-refs", "--no-pack", "--no-typescript", dev ? "--dev" : "--release",
  ],
  { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] },
);

rmSync(out, { recursive: true, force: true });
const node = join(out, "dist", "node");
mkdirSync(node, { recursive: true });
for (const f of ["agent_loop_wasm.js", "agent_loop_wasm_bg.wasm", "snippets"]) {
  cpSync(join(wasmOut, f), join(node, f), { recursive: true });
}
const template = join(root, "pkg-template");
cpSync(join(template, "node-core.js"), join(node, "core.js"));
for (const f of ["api.js", "streams.js", "agent.js"]) cpSync(join(template, f), join(node, f));
cpSync(join(template, "index.js"), join(node, "index.mjs"));
for (const f of ["index.d.ts", "web.d.ts"]) {
  if (existsSync(join(template, f))) cpSync(join(template, f), join(out, f));
}
if (existsSync(join(root, "README.md"))) cpSync(join(root, "README.md"), join(out, "README.md"));

const cargoVersion = /^version = "([^"]+)"/m.exec(readFileSync(join(root, "Cargo.toml"), "utf8"))[1];
const pkg = JSON.parse(readFileSync(join(template, "package.json"), "utf8"));
pkg.version = cargoVersion;
writeFileSync(join(out, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);

const size = readFileSync(join(node, "agent_loop_wasm_bg.wasm")).length;
console.log(`built pkg/ (${dev ? "dev" : "release"}, wasm ${(size / 1024).toFixed(0)} KiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
