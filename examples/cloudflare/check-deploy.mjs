#!/usr/bin/env node
// `npm run check-deploy`: `npm run deploy` as far as it goes with no Cloudflare account. `wrangler deploy --dry-run`
// bundles the worker as a deployment would, then this checks the bundle: it is built from agent-loop-wasm's "workerd"
// entry (it imports the .wasm files as modules, which only that entry does) and the two .wasm it imports are beside it,
// byte for byte the package's. Exits 1 with the reason otherwise.
//
//   npm run check-deploy [-- --outdir DIR]      (default: a temporary folder, removed afterwards)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "package.json"));
const args = process.argv.slice(2);
const given = args.includes("--outdir") ? resolve(args[args.indexOf("--outdir") + 1]) : undefined;
const outdir = given ?? mkdtempSync(join(tmpdir(), "agent-loop-wasm-deploy-"));

class CheckFailed extends Error {}
function fail(reason) {
  throw new CheckFailed(reason);
}

try {
  const wranglerDir = dirname(require.resolve("wrangler/package.json"));
  const wrangler = JSON.parse(readFileSync(join(wranglerDir, "package.json"), "utf8"));
  // No account, no login: the dry run only bundles. Metrics off, as nothing is deployed.
  try {
    execFileSync(process.execPath, [join(wranglerDir, wrangler.bin.wrangler), "deploy", "--dry-run", "--outdir", outdir], {
      cwd: here,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "inherit", "inherit"],
    });
  } catch (error) {
    fail(`wrangler deploy --dry-run failed (${error.message.split("\n")[0]})`);
  }

  // The package's wasm module (its "./agent_loop_wasm_bg.wasm" export: the loop; the built-in providers are JS),
  // whatever entry the bundle took.
  const packageWasms = ["agent_loop_wasm_bg.wasm"].map((f) => require.resolve(`agent-loop-wasm/${f}`));
  const wasmOf = (dir) => readdirSync(dir).filter((f) => f.endsWith(".wasm"));

  const bundleFile = join(outdir, "worker.js");
  if (!existsSync(bundleFile)) fail(`wrangler wrote no worker.js into ${outdir}: ${readdirSync(outdir).join(", ")}`);
  const bundle = readFileSync(bundleFile, "utf8");
  const wasms = wasmOf(outdir);
  if (wasms.length !== packageWasms.length) {
    fail(`the bundle has ${wasms.length} .wasm modules (${wasms.join(", ")}); expected the package's ${packageWasms.length} (was its "workerd" entry bundled?)`);
  }
  for (const packageWasm of packageWasms) {
    const expected = readFileSync(packageWasm);
    const wasm = wasms.find((f) => readFileSync(join(outdir, f)).equals(expected));
    if (wasm === undefined) fail(`no .wasm of the bundle (${wasms.join(", ")}) is agent-loop-wasm's ${basename(packageWasm)}`);
    if (!new RegExp(`^import \\w+ from "\\./${wasm.replace(/[.]/g, "\\.")}";$`, "m").test(bundle)) {
      fail(`worker.js does not import ./${wasm} as a module (not the package's workerd entry?)`);
    }
  }
  if (!/^export \{[^}]*\bAgentObject\b[^}]*\}/m.test(bundle)) fail("worker.js does not export the AgentObject class");
  const kib = (bytes) => `${Math.round(bytes / 1024)} KiB`;
  const sizes = packageWasms.map((f) => `${basename(f)} (${kib(statSync(f).size)})`).join(" and ");
  console.log(
    `check-deploy: wrangler ${wrangler.version} bundled worker.js (${kib(statSync(bundleFile).size)}) with agent-loop-wasm's ` +
      `workerd entry and its wasm module ${sizes}, the package's bytes, into ${outdir}`,
  );
} catch (error) {
  if (!(error instanceof CheckFailed)) throw error;
  console.error(`check-deploy: ${error.message}`);
  process.exitCode = 1;
} finally {
  if (!given) rmSync(outdir, { recursive: true, force: true });
}
