// workerd serving examples/cloudflare/ for the tests in this folder (the same start-up as do.test.mjs: a port the
// kernel picked, retried when another socket took it first, a health check that gives up after 2 s).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeConfig } from "../../examples/cloudflare/serve.mjs";
import { freePort } from "../runtimes.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The example's AUTH_TOKEN in these tests; every request sends `AUTH` (the example answers 401 without it). */
const TOKEN = "durable-objects-test-token-0123456789";
export const AUTH = Object.freeze({ authorization: `Bearer ${TOKEN}` });

/**
 * workerd on 127.0.0.1 with its SQLite storage in `storage`; `vars` are the worker's text bindings (and AUTH_TOKEN).
 * With `inspector`, its V8 inspector listens too, and `inspectorUrl` is the worker's session (see inspector.mjs).
 */
export async function startWorkerd(storage, vars, { inspector = false } = {}) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const inspectorPort = inspector ? await freePort() : undefined;
    const config = writeConfig({ dir: storage, port, storage, pkgDir: join(root, "pkg"), vars: { AUTH_TOKEN: TOKEN, ...vars } });
    const args = ["serve", config, ...(inspector ? ["--inspector-addr", `127.0.0.1:${inspectorPort}`] : [])];
    const child = spawn(join(root, "node_modules", ".bin", "workerd"), args, { stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    child.stdout.on("data", (d) => (log += d));
    child.stderr.on("data", (d) => (log += d));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    let started = false;
    for (;;) {
      if (child.exitCode !== null) {
        if (attempt < 5 && log.includes("Address already in use")) break;
        throw new Error(`workerd exited ${child.exitCode}: ${log.slice(-2000)}`);
      }
      try {
        await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) });
        started = true;
        break;
      } catch {
        if (Date.now() > deadline) {
          child.kill("SIGKILL");
          throw new Error(`workerd did not start: ${log.slice(-2000)}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    // The worker's service is "main" in the example's config (serve.mjs).
    const inspectorUrl = inspector ? `ws://127.0.0.1:${inspectorPort}/main` : undefined;
    if (started) return { child, base, inspectorUrl, log: () => log };
  }
}

/** SIGKILL by PID (the child we spawned), resolved when it exited. */
export async function killWorkerd(workerd) {
  if (workerd.child.exitCode !== null || workerd.child.signalCode !== null) return;
  const exited = once(workerd.child, "exit");
  workerd.child.kill("SIGKILL");
  await exited;
}

/**
 * Streams `sse` (a scripted model's reply) to `res` one SSE frame every `frameMs` ms, holding `res` in `open` meanwhile
 * (so `listenForWorkerd`'s close can cut every stream at once). True when it was sent whole, false when the client went
 * away first.
 */
export async function streamFrames(res, sse, frameMs, open, holdEnd) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  open.add(res);
  const frames = sse.split(/(?<=\n\n)/);
  for (const [i, frame] of frames.entries()) {
    // `holdEnd`: a promise the reply's last two frames (its finish and [DONE]) wait for, so its run stays under way.
    if (holdEnd !== undefined && i === frames.length - 2) await holdEnd;
    if (res.destroyed) {
      open.delete(res);
      return false;
    }
    res.write(frame);
    await new Promise((r) => setTimeout(r, frameMs));
  }
  open.delete(res);
  res.end();
  return true;
}

/** `server` listening on 127.0.0.1 for workerd's requests: its URL, and a close that first cuts the streams in `open`. */
export async function listenForWorkerd(server, open) {
  // workerd pools outbound connections: idle ones stay open longer than it keeps them (see do.test.mjs).
  server.keepAliveTimeout = 120_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}
