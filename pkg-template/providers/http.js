// What the built-in providers' driver (driver.js) needs of the runtime: the global `fetch`, environment variables, a
// response's headers, and the texts and retry classification of a failed fetch. None of these throws: a hostile
// value's getters are caught.

import { errorMessage } from "../../src/js/snippets/values.js";

export function globalFetch() {
  return typeof globalThis.fetch === "function" ? globalThis.fetch.bind(globalThis) : undefined;
}

/** An environment variable from process.env or Deno.env; undefined in browsers. */
export function envVar(name) {
  try {
    if (typeof process !== "undefined" && process?.env) return process.env[name];
  } catch {}
  try {
    if (typeof Deno !== "undefined") return Deno.env.get(name);
  } catch {}
  return undefined;
}

export function headerEntries(headers) {
  const out = [];
  try {
    headers.forEach((value, key) => out.push([key, value]));
  } catch {}
  return out;
}

// Fetch and body-read failures (P-6.2.6, issue 13). Runtimes hide the reason of a network error in
// `cause` (undici: `fetch failed` ← `redirect count exceeded`); pi-ai appends the deepest cause and
// its code, and so do we. Neither helper throws: a hostile error's getters are caught.

const CAUSE_DEPTH = 5;

/** `<message>: <deepest cause>[ (<code>)]`, worded as pi-ai's `withCauseDetail`. */
export function failureMessage(e) {
  const message = errorMessage(e);
  try {
    if (!(e instanceof Error)) return message;
    let deepest;
    let current = e.cause;
    for (let depth = 0; depth < CAUSE_DEPTH && current instanceof Error; depth++) {
      deepest = current;
      current = current.cause;
    }
    if (deepest === undefined) return message;
    let detail = String(deepest.message || deepest.name).trim();
    const code = deepest.code;
    if ((typeof code === "string" || typeof code === "number") && !detail.includes(String(code))) {
      detail = detail ? `${detail} (${code})` : String(code);
    }
    if (!detail || message.includes(detail)) return message;
    return message ? `${message}: ${detail}` : detail;
  } catch {
    return message;
  }
}

// The TypeError texts of a failed connection (Node, Chromium, Firefox, WebKit, Deno, Workers):
// any other TypeError from fetch is a bad URL, header or init, which a retry cannot fix.
const NETWORK_TEXTS = ["fetch failed", "failed to fetch", "networkerror when attempting to fetch resource.", "load failed",
  "network connection lost."];
const NETWORK_PREFIXES = ["error sending request", "client error", "network error", "networkerror"];
// undici causes of `fetch failed` that answer the same way every time.
const FIXED_CAUSES = ["redirect count exceeded", "unknown scheme", "bad port"];

/** Whether a failed fetch may succeed when tried again (network trouble), or is deterministic. */
export function retryableFailure(e) {
  try {
    if (e === null || typeof e !== "object") return true;
    // An error that says so is not retried (a cassette's mismatch, issue 44: the same request fails the same way).
    if (e.retryable === false) return false;
    const name = String(e.name);
    if (name === "SyntaxError" || name === "NotSupportedError" || name === "RangeError") return false;
    if (name !== "TypeError") return true;
    const message = String(e.message).trim().toLowerCase();
    if (!NETWORK_TEXTS.includes(message) && !NETWORK_PREFIXES.some((p) => message.startsWith(p))) return false;
    let current = e.cause;
    for (let depth = 0; depth < CAUSE_DEPTH && current !== null && typeof current === "object"; depth++) {
      if (current.code === "ERR_INVALID_URL") return false;
      if (typeof current.message === "string" && FIXED_CAUSES.includes(current.message)) return false;
      current = current.cause;
    }
    return true;
  } catch {
    return true;
  }
}
