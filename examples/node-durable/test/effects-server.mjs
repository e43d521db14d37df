// The external system of the tests, on 127.0.0.1: it answers the tools' POST /messages and /charges, records every
// request with its idempotency key, and can hold the next request to a path unanswered (so a test can kill the agent
// server while a tool waits on it).
import { createServer } from "node:http";

export async function effectsServer() {
  /** Every request, in arrival order: { path, key, body }. */
  const requests = [];
  /** Armed holds: the next request to `path` is not answered (until close()). */
  const holds = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const request = { path: req.url, key: req.headers["idempotency-key"], body: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
    const duplicate = requests.some((r) => r.key === request.key);
    requests.push(request);
    const hold = holds.findIndex((h) => h.path === request.path);
    if (hold >= 0) return holds.splice(hold, 1)[0].arrived(request);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, duplicate }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** Holds the next request to `path`; resolves with it when it arrived. */
    hold(path) {
      return new Promise((arrived) => holds.push({ path, arrived }));
    },
    /** The requests that carried `key`. */
    withKey(key) {
      return requests.filter((r) => r.key === key);
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
