#!/usr/bin/env node
// Serves the repository root for the demo (SPEC K-9.3.1): http://localhost:8080/www/ imports
// /pkg/dist/web/index.js and /examples/offline-model.mjs as plain ES modules. No dependencies.
//
// Usage: node scripts/serve.mjs [--port N | --port=N]   (or PORT=N; 0 picks a free port)
// Listens on 127.0.0.1 only. `/` redirects to `/www/`. Prints the URL once it listens.
import { createServer } from "node:http";
import { createReadStream, existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const HOST = "127.0.0.1";

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

async function handle(req, res) {
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
  console.log(`serving ${root} on http://${HOST}:${port}/ (Ctrl+C to stop)`);
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
