// Runs one scenario of a child script in a fresh Node process (a fresh wasm instance, its own heap and flags) and
// gives what the child printed last, as JSON, with its stderr. Shared by the suites that measure memory or make
// traps; the child prints `{ error }` when its scenario threw.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";

/** `node [nodeFlags] script scenario JSON(args)`, killed after `killAfterMs`; resolves `{ out, stderr }`. */
export function runChild(script, scenario, args, { nodeFlags = [], killAfterMs = 45000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...nodeFlags, script, scenario, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => p.kill("SIGKILL"), killAfterMs);
    p.on("error", reject);
    p.on("close", (code, signal) => {
      clearTimeout(timer);
      try {
        assert.equal(signal, null, `child killed by ${signal}: ${stderr}`);
        assert.equal(code, 0, `child exit ${code}: ${stderr}${stdout}`);
        const out = JSON.parse(stdout.trim().split("\n").at(-1));
        assert.equal(out.error, undefined, out.error);
        resolve({ out, stderr });
      } catch (error) {
        reject(error);
      }
    });
  });
}
