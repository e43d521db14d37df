#!/usr/bin/env node
// Runs every example's own tests as a user would after following its README: each folder of examples/ with a
// package.json is prepared by prepare.mjs (copied alone, the packed tarball and its dependencies installed), then
// `npm test` runs in it. An example whose `engines.node` asks for 22 or later runs on Node 22 from npm (tests/ui).
//
//   node tests/examples/run.mjs [name...]      (default: every example)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { NODE22, ROOT, exampleNames, prepareExample } from "./prepare.mjs";

const names = process.argv.slice(2).length ? process.argv.slice(2) : exampleNames();
const failed = [];
for (const name of names) {
  const manifest = JSON.parse(readFileSync(join(ROOT, "examples", name, "package.json"), "utf8"));
  const floor = Number(/(\d+)/.exec(manifest.engines?.node ?? "")?.[1] ?? 0);
  const env = { ...process.env };
  if (floor >= 22) env.PATH = `${dirname(NODE22)}:${env.PATH}`;
  const started = Date.now();
  console.log(`\n--- examples/${name}${floor >= 22 ? " (Node 22)" : ""}`);
  try {
    const dir = prepareExample(name, { env });
    execFileSync("npm", ["test"], { cwd: dir, env, stdio: "inherit" });
    console.log(`--- examples/${name}: ok in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    console.log(`--- examples/${name}: FAILED (${error.message.split("\n")[0]})`);
    failed.push(name);
  }
}
if (failed.length) {
  console.error(`\nexamples failed: ${failed.join(", ")}`);
  process.exit(1);
}
