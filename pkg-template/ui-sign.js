// agent-loop-wasm/ui: Signed approvals (U-12.5): a stateless route trusts no approval it did not sign
import { codedError } from "./errors.js";
import { describe } from "./ui-common.js";

// SHA-256 (FIPS 180-4) and HMAC (RFC 2104), synchronous so that a chunk is signed where it is made, in every runtime.
// The constants are the first 32 bits of the fractional parts of the square and cube roots of the first primes.
const PRIMES = [];
for (let c = 2; PRIMES.length < 64; c++) if (PRIMES.every((p) => c % p !== 0)) PRIMES.push(c);
const frac32 = (x) => ((x - Math.floor(x)) * 4294967296) >>> 0;
const SHA256_K = Uint32Array.from(PRIMES, (p) => frac32(Math.cbrt(p)));
const SHA256_H = Uint32Array.from(PRIMES.slice(0, 8), (p) => frac32(Math.sqrt(p)));
const ror = (x, n) => (x >>> n) | (x << (32 - n));

/** SHA-256 of `data` (a Uint8Array). */
function sha256(data) {
  const padded = new Uint8Array(((data.length + 72) >> 6) << 6);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(data.length / 0x20000000));
  view.setUint32(padded.length - 4, (data.length * 8) >>> 0);
  const h = SHA256_H.slice();
  const w = new Uint32Array(64);
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15];
      const y = w[i - 2];
      w[i] = (w[i - 16] + (ror(x, 7) ^ ror(x, 18) ^ (x >>> 3)) + w[i - 7] + (ror(y, 17) ^ ror(y, 19) ^ (y >>> 10))) >>> 0;
    }
    let [a, b, c, d, e, f, g, k] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i] + w[i]) >>> 0;
      const t2 = ((ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    [a, b, c, d, e, f, g, k].forEach((v, i) => (h[i] = (h[i] + v) >>> 0));
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((v, i) => outView.setUint32(i * 4, v));
  return out;
}

/** HMAC-SHA-256 of `message` under `key` (both Uint8Array). */
function hmacSha256(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

const base64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** The approval secret's bytes: a string (UTF-8) or bytes, at least 16 of them. */
export function secretKey(fn, secret) {
  const bytes = typeof secret === "string" ? new TextEncoder().encode(secret)
    : secret instanceof Uint8Array ? secret
    : secret instanceof ArrayBuffer ? new Uint8Array(secret)
    : undefined;
  if (bytes === undefined || bytes.length < 16) {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.approvalSecret must be a string or bytes, at least 16 bytes long (a random secret kept on the server), got ${describe(secret)}`);
  }
  return bytes;
}

/**
 * The approval id a signed `tool-approval-request` carries: `v1.` and the HMAC-SHA-256 (base64url) of the call as the
 * client holds it — its id, its tool, its input, and when the approval expires. A client cannot make one for a call it
 * invented or changed, nor extend its deadline.
 */
export function approvalToken(key, toolCallId, toolName, input, expiresAt) {
  const signed = JSON.stringify(["agent-loop-wasm approval v1", toolCallId, toolName, input ?? {}, typeof expiresAt === "number" ? expiresAt : null]);
  return `v1.${base64url(hmacSha256(key, new TextEncoder().encode(signed)))}`;
}

/** Whether `token` is the approval id of that call under `key` (compared in constant time). */
export function approvalTokenValid(key, token, toolCallId, toolName, input, expiresAt) {
  if (typeof token !== "string") return false;
  const expected = approvalToken(key, toolCallId, toolName, input, expiresAt);
  let diff = token.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ (token.charCodeAt(i) | 0);
  return diff === 0;
}
