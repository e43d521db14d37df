// The JS heap of a workerd isolate, read through the V8 inspector that `workerd serve --inspector-addr` opens (issue
// 41). A worker cannot read its own heap: workerd has no `performance.memory`, no `process.memoryUsage` (not even with
// nodejs_compat) and no `node:v8`; `gc()` exists only with the config's `v8Flags`, and still reads nothing. The
// inspector answers `Runtime.getHeapUsage`; a full GC comes from `HeapProfiler.takeHeapSnapshot`, which collects all
// garbage before it walks the heap (`HeapProfiler.collectGarbage` answers only when the isolate next runs a task).
// Owns only the inspector connection; starting workerd is workerd.mjs's.
import { request } from "node:http";
import { randomBytes } from "node:crypto";

/**
 * A Chrome DevTools Protocol session on `wsUrl` (e.g. ws://127.0.0.1:9229/main, the worker named "main"). The
 * WebSocket is written here, client side only (text frames out, masked; text, continuation, ping and close in):
 * the Node these tests run on (20) has no WebSocket without a flag.
 */
export async function openInspector(wsUrl) {
  const url = new URL(wsUrl);
  const socket = await new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": randomBytes(16).toString("base64") },
    });
    req.on("upgrade", (_res, sock) => resolve(sock));
    req.on("response", (res) => reject(new Error(`inspector ${wsUrl}: HTTP ${res.statusCode}, not a WebSocket`)));
    req.on("error", reject);
    req.end();
  });
  const pending = new Map();
  let nextId = 0;
  let closed = null;
  const settleAll = (error) => {
    closed = error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  const onMessage = (text) => {
    const msg = JSON.parse(text);
    const waiter = msg.id !== undefined && pending.get(msg.id);
    if (!waiter) return; // an event (heap snapshot chunks): not asked for
    pending.delete(msg.id);
    if (msg.error) waiter.reject(new Error(`inspector ${waiter.method}: ${msg.error.message}`));
    else waiter.resolve(msg.result);
  };
  const frames = frameReader(onMessage, (payload) => socket.write(frame(0xa, payload)));
  socket.on("data", (bytes) => {
    try {
      frames(bytes);
    } catch (e) {
      socket.destroy(e);
    }
  });
  socket.on("close", () => settleAll(new Error(`inspector ${wsUrl}: the connection closed`)));
  socket.on("error", () => {}); // reported by "close"
  return {
    /** One command; resolves with its result, rejects with its error. */
    send(method, params = {}) {
      if (closed) return Promise.reject(closed);
      const id = ++nextId;
      socket.write(frame(0x1, Buffer.from(JSON.stringify({ id, method, params }))));
      return new Promise((resolve, reject) => pending.set(id, { method, resolve, reject }));
    },
    /** Ends the session; resolves once the connection closed (workerd serves one session at a time). */
    close() {
      const gone = new Promise((resolve) => socket.once("close", resolve));
      if (!socket.destroyed) socket.end(frame(0x8, Buffer.alloc(0)));
      return socket.destroyed ? Promise.resolve() : gone;
    },
  };
}

/** One client frame: final, masked (RFC 6455 §5.3 requires a client to mask). */
function frame(opcode, payload) {
  const n = payload.length;
  const head = Buffer.alloc(n < 126 ? 2 : n < 65536 ? 4 : 10);
  head[0] = 0x80 | opcode;
  if (n < 126) {
    head[1] = 0x80 | n;
  } else if (n < 65536) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < n; i++) body[i] ^= mask[i % 4];
  return Buffer.concat([head, mask, body]);
}

/** Server frames (unmasked) from a byte stream: each whole text message to `onMessage`, each ping's payload to `onPing`. */
function frameReader(onMessage, onPing) {
  let buffered = Buffer.alloc(0);
  let message = [];
  return (bytes) => {
    buffered = Buffer.concat([buffered, bytes]);
    for (;;) {
      if (buffered.length < 2) return;
      const fin = (buffered[0] & 0x80) !== 0;
      const opcode = buffered[0] & 0x0f;
      if (buffered[1] & 0x80) throw new Error("inspector: a masked frame from the server");
      let length = buffered[1] & 0x7f;
      let at = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        at = 10;
      }
      if (buffered.length < at + length) return;
      const payload = buffered.subarray(at, at + length);
      buffered = buffered.subarray(at + length);
      if (opcode === 0x9) onPing(payload);
      if (opcode !== 0x1 && opcode !== 0x0) continue; // pong, close (the socket's end says it), binary: none expected
      message.push(Buffer.from(payload));
      if (!fin) continue;
      const text = Buffer.concat(message).toString("utf8");
      message = [];
      onMessage(text);
    }
  };
}

/**
 * What the isolate of the inspector session at `wsUrl` holds after a full GC (a heap snapshot collects all garbage
 * before it is taken; its chunks are dropped): `heap`, V8's heap in use; `embedder`, workerd's C++ objects that V8
 * traces; `backing`, array buffers and external strings (not the wasm instances' memories, which this figure leaves
 * out); `bytes`, their sum.
 */
export async function isolateMemory(wsUrl) {
  const inspector = await openInspector(wsUrl);
  try {
    await inspector.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const usage = await inspector.send("Runtime.getHeapUsage");
    const parts = { heap: usage.usedSize, embedder: usage.embedderHeapUsedSize, backing: usage.backingStorageSize };
    return { bytes: parts.heap + parts.embedder + parts.backing, ...parts };
  } finally {
    await inspector.close();
  }
}
