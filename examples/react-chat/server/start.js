// `npm start`: the built page (dist/, from `npm run build`) and the chat API on one node:http server.
// HOST (default 127.0.0.1) and PORT (default 3000; 0 picks a free one) choose where it listens.
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { createChatApi } from "./chat.js";

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
if (!existsSync(join(DIST, "index.html"))) {
  console.error("dist/index.html is missing: run `npm run build` first");
  process.exit(1);
}
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".json": "application/json" };

const api = createChatApi(process.env);

function page(req, res) {
  const { pathname } = new URL(req.url, "http://localhost");
  const file = normalize(join(DIST, decodeURIComponent(pathname)));
  // Any path that is not a built file is the page (the chat id is in its query).
  const found = file.startsWith(DIST) && existsSync(file) && statSync(file).isFile() ? file : join(DIST, "index.html");
  res.writeHead(200, { "content-type": TYPES[extname(found)] ?? "application/octet-stream" });
  createReadStream(found).pipe(res);
}

const server = createServer((req, res) => api(req, res, () => page(req, res)));
server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address();
  console.log(`react-chat on http://${address}:${port} (pid ${process.pid})`);
});
