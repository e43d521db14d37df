#!/usr/bin/env node
// Serves the repository root for the demo (SPEC K-9.3.1): http://localhost:8080/www/ imports
// /pkg/dist/web/index.js and /examples/offline-model.mjs as plain ES modules. No dependencies.
// It also fronts the local model (scripts/local-llm) same-origin, so the page never makes a failing
// cross-origin request: GET /local-llm/status always answers 200 ({running, model, url, start}), and
// /local-llm/v1/* is proxied to the local model server (502 with an OpenAI-style error when it is down).
//
// Usage: node scripts/serve.mjs [--port N | --port=N]   (or PORT=N; 0 picks a free port)
// Environment: LOCAL_LLM_PORT (8088) or LOCAL_LLM_URL (http://127.0.0.1:8088/v1) say where the local model is.
// Listens on 127.0.0.1 only. `/` redirects to `/www/`. Prints the URL, then which model the page uses.
import { createServer, request as httpRequest } from "node:http";
import { createReadStream, existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const HOST = "127.0.0.1";
// The local model server's origin (loopback only: this is a dev server, not an open proxy).
const LOCAL_LLM = (() => {
  const raw = process.env.LOCAL_LLM_URL?.trim() || `http://127.0.0.1:${process.env.LOCAL_LLM_PORT || 8088}/v1`;
  let url;
  try {
    url = new URL(raw);
  } catch {
    console.error(`serve: LOCAL_LLM_URL is not a URL: ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  if (url.protocol !== "http:" || !["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) {
    console.error(`serve: LOCAL_LLM_URL must be an http:// loopback URL, got ${raw}`);
    process.exit(2);
  }
  return { origin: url.origin, base: `${url.origin}/v1` };
})();
const LOCAL_START = "scripts/local-llm start";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".cjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".md": "text/markdown; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
  ".rs": "text/plain; charset=utf-8",
  ".toml": "text/plain; charset=utf-8",
};

function parsePort() {
  const args = process.argv.slice(2);
  let value = process.env.PORT;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--port") value = args[++i];
    else if (args[i].startsWith("--port=")) value = args[i].slice(7);
    else if (args[i] === "--help" || args[i] === "-h") {
      console.log("Usage: node scripts/serve.mjs [--port N]   (or PORT=N; default 8080, 0 = any free port)");
      process.exit(0);
    } else {
      console.error(`serve: unknown argument ${JSON.stringify(args[i])} (try --help)`);
      process.exit(2);
    }
  }
  if (value === undefined || value === "") return 8080;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`serve: invalid port ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return port;
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", ...headers });
  res.end(body);
}

// ---------------------------------------------------------------------------------------------------------------
// The local model, same-origin
// ---------------------------------------------------------------------------------------------------------------
async function localStatus() {
  try {
    const response = await fetch(`${LOCAL_LLM.origin}/health`, { signal: AbortSignal.timeout(1500) });
    const health = await response.json();
    if (response.ok && health?.status === "ok") {
      return { running: true, model: String(health.model ?? ""), url: LOCAL_LLM.base, start: LOCAL_START };
    }
  } catch {
    // not running (or not our server): the answer below says so
  }
  return { running: false, model: null, url: LOCAL_LLM.base, start: LOCAL_START };
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store" });
  res.end(text);
}

// /local-llm/v1/… → LOCAL_LLM/v1/…, streamed both ways; a client that goes away aborts the upstream request
// (the local server then stops generating).
function proxyLocal(req, res, path) {
  const headers = {};
  for (const name of ["content-type", "content-length", "accept", "authorization"]) {
    if (req.headers[name] !== undefined) headers[name] = req.headers[name];
  }
  const upstream = httpRequest(`${LOCAL_LLM.origin}${path}`, { method: req.method, headers }, (answer) => {
    // The model server's own headers (its SSE ones: no-cache, keep-alive, no buffering), minus hop-by-hop and CORS
    // ones. With only content-type passed on, Chromium recorded 1–2 of 5 finished streams as failed
    // (net::ERR_ABORTED); with these, none in 6 runs.
    const out = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (!["transfer-encoding", "keep-alive", "date", "access-control-allow-origin", "access-control-allow-methods",
        "access-control-allow-headers", "access-control-max-age"].includes(name)) out[name] = value;
    }
    res.writeHead(answer.statusCode ?? 502, out);
    res.socket?.setNoDelay(true);
    answer.pipe(res);
    answer.on("error", () => res.destroy());
  });
  upstream.on("error", (error) => {
    if (res.headersSent) return res.destroy();
    sendJson(res, 502, { error: {
      message: `The local model is not running at ${LOCAL_LLM.base} (${error.code ?? error.message}): start it with ${LOCAL_START}`,
      type: "server_error", param: null, code: "local_model_unavailable",
    } });
  });
  res.on("close", () => { if (!res.writableFinished) upstream.destroy(); });
  req.pipe(upstream);
}

async function handle(req, res) {
  const { pathname: route, search } = new URL(req.url ?? "/", "http://localhost");
  if (route === "/local-llm/status") {
    if (req.method !== "GET") return send(res, 405, "Method Not Allowed\n", { Allow: "GET" });
    return sendJson(res, 200, await localStatus());
  }
  if (route.startsWith("/local-llm/v1/")) return proxyLocal(req, res, route.slice("/local-llm".length) + search);
  if (req.method !== "GET" && req.method !== "HEAD") {
    return send(res, 405, "Method Not Allowed\n", { Allow: "GET, HEAD" });
  }
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === "/") return send(res, 302, "Found: /www/\n", { Location: "/www/" });

  let pathname;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return send(res, 400, "Bad Request\n");
  }
  if (pathname.includes("\0")) return send(res, 400, "Bad Request\n");
  const file = normalize(join(root, pathname));
  if (file !== root && !file.startsWith(root + sep)) return send(res, 403, "Forbidden\n");

  let info;
  try {
    info = await stat(file);
  } catch {
    return send(res, 404, `Not Found: ${pathname}\n`);
  }
  let target = file;
  if (info.isDirectory()) {
    // Directories answer with their index.html only (no listings); `/www` → `/www/` so relative URLs work.
    if (!url.pathname.endsWith("/")) return send(res, 301, "Moved\n", { Location: `${url.pathname}/${url.search}` });
    target = join(file, "index.html");
    try {
      info = await stat(target);
    } catch {
      return send(res, 404, `Not Found: ${pathname} (no index.html)\n`);
    }
  }
  if (!info.isFile()) return send(res, 404, `Not Found: ${pathname}\n`);

  res.writeHead(200, {
    "Content-Type": MIME[extname(target).toLowerCase()] ?? "application/octet-stream",
    "Content-Length": info.size,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  if (req.method === "HEAD") return res.end();
  createReadStream(target)
    .on("error", () => res.destroy())
    .pipe(res);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error) => {
    if (!res.headersSent) send(res, 500, `Internal Server Error: ${error?.message ?? error}\n`);
    else res.destroy();
  });
});

server.on("error", (error) => {
  if (error.code === "EADDRINUSE") {
    console.error(`serve: port ${error.port} is in use; pick another with --port N or PORT=N`);
  } else {
    console.error(`serve: ${error.message}`);
  }
  process.exit(1);
});

server.listen(parsePort(), HOST, () => {
  const { port } = server.address();
  if (!existsSync(join(root, "pkg", "dist", "web", "index.js"))) {
    console.warn("serve: pkg/dist/web/index.js is missing; build it first: node scripts/build.mjs (or run scripts/demo)");
  }
  console.log(`agent-loop-wasm demo: http://localhost:${port}/www/`);
  localStatus().then(({ running }) => {
    console.log("model: the page starts on the Offline demo model (scripted, in the browser, no network); switch in " +
      `Settings → API → "Local model" (SmolLM2-135M, ${running ? `running at ${LOCAL_LLM.base}` : `not running: ${LOCAL_START}`})` +
      " or a cloud provider");
    console.log(`serving ${root} on http://${HOST}:${port}/ (Ctrl+C to stop)`);
  });
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
