#!/usr/bin/env node
// Installs the built package (pkg/) into tests/otel/node_modules/agent-loop-wasm as a copy, so the telemetry tests
// load `agent-loop-wasm` and `agent-loop-wasm/otel` by name through its exports map, and the entry's
// `@opentelemetry/api` import resolves to this folder's API, the one the tests' SDK uses (a symlink would resolve from
// pkg/, where there is none). Run after each build, before `node --test tests/otel/` (the tests refuse an older copy).
import { cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..", "..", "pkg");
const target = join(here, "node_modules", "agent-loop-wasm");
if (!existsSync(join(pkg, "package.json"))) throw new Error(`no built package at ${pkg}: run node scripts/build.mjs first`);
if (!existsSync(join(here, "node_modules", "@opentelemetry", "api"))) {
  throw new Error("tests/otel/node_modules lacks @opentelemetry/api: run scripts/setup (npm ci in tests/otel)");
}
rmSync(target, { recursive: true, force: true });
cpSync(pkg, target, { recursive: true, preserveTimestamps: true });
console.log(`installed ${pkg} as ${target}`);
