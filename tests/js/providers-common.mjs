// Shared by the providers-*.test.mjs files: the package under test, test options, environment hygiene and a few
// assertions. The built-in providers (SPEC §6) are this package's own, so these suites are skipped when
// AGENT_LOOP_IMPL=reference.
import assert from "node:assert/strict";
import { IS_REFERENCE } from "./impl.mjs";

export const lib = await import("../../pkg/dist/node/index.mjs");
export const { streamBuiltin, agentLoop, BUILTIN_APIS } = lib;

export const SKIP = IS_REFERENCE && "built-in providers (§6) exist only in agent-loop-wasm";
/** Options of every provider test: 5 s at most. */
export const P = { timeout: 5000, skip: SKIP };
/**
 * A test written against a bug found while the suite was built. The bugs are fixed: these are ordinary tests that fail
 * the suite like any other; the diagnosis stays only as documentation of what they guard.
 */
export const bug = (_fixedDiagnosis) => ({ ...P });

/** Every key variable the built-ins read (P-6.2.3); cleared so the machine's environment cannot leak in. */
export const KEY_VARS = [
  "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY",
  "XAI_API_KEY", "DEEPSEEK_API_KEY", "MISTRAL_API_KEY", "CEREBRAS_API_KEY",
];
export function clearKeyEnv() {
  for (const v of KEY_VARS) delete process.env[v];
}

/** Runs `fn` with `process.env` patched (values `undefined` delete), then restores it. */
export async function withEnv(vars, fn) {
  const saved = {};
  for (const [k, v] of Object.entries(vars)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

export const userMsg = (content, timestamp = 1) => ({ role: "user", content, timestamp });
export const ctx = (...messages) => ({ messages: messages.length ? messages : [userMsg("hi")] });

/** The request headers the library chose (the runtime's own fetch headers left out). */
const RUNTIME_HEADERS = new Set([
  "host", "connection", "accept", "accept-language", "sec-fetch-mode", "user-agent", "accept-encoding",
  "content-length", "origin", "referer", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "sec-fetch-site",
  "sec-fetch-dest",
]);
export function sentHeaders(request) {
  return Object.fromEntries(Object.entries(request.headers).filter(([k]) => !RUNTIME_HEADERS.has(k)));
}

/** Whether `partial` is a prefix state of `final` as a streaming JSON parser shows it (P-6.4.2). */
export function isPrefixState(partial, final) {
  if (typeof partial === "string") return typeof final === "string" && final.startsWith(partial);
  if (Array.isArray(partial)) {
    if (!Array.isArray(final) || partial.length > final.length) return false;
    return partial.every((v, i) => (i < partial.length - 1 ? isDeepEqual(v, final[i]) : isPrefixState(v, final[i])));
  }
  if (partial !== null && typeof partial === "object") {
    if (final === null || typeof final !== "object" || Array.isArray(final)) return false;
    const keys = Object.keys(partial);
    const finalKeys = Object.keys(final);
    // keys appear in source order; all but the last are complete
    if (!keys.every((k, i) => finalKeys[i] === k)) return false;
    return keys.every((k, i) => (i < keys.length - 1 ? isDeepEqual(partial[k], final[k]) : isPrefixState(partial[k], final[k])));
  }
  return Object.is(partial, final);
}
const isDeepEqual = (a, b) => {
  try {
    assert.deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
};

/**
 * Asserts the live arguments seen at each toolcall_delta of block `index` grow towards `final`: every snapshot is a
 * prefix state, sizes never shrink, at least one is strictly partial (neither `{}` nor final) when `streamed`, and
 * the last equals `final`.
 */
export function assertArgsGrow(argsLive, index, final, { streamed = true } = {}) {
  const seen = argsLive.filter((a) => a.index === index).map((a) => a.args);
  assert.ok(seen.length > 0, `no toolcall_delta for block ${index}`);
  let size = 0;
  for (const s of seen) {
    assert.ok(isPrefixState(s, final), `block ${index}: ${JSON.stringify(s)} is not a prefix state of ${JSON.stringify(final)}`);
    const n = JSON.stringify(s).length;
    assert.ok(n >= size, `block ${index}: live arguments shrank (${JSON.stringify(s)})`);
    size = n;
  }
  assert.deepEqual(seen[seen.length - 1], final);
  if (streamed) {
    const middle = seen.filter((s) => JSON.stringify(s) !== "{}" && !isDeepEqual(s, final));
    assert.ok(middle.length > 0, `block ${index}: arguments never seen partially: ${JSON.stringify(seen)}`);
  }
}

/** Usage with cost from token counts and the model's prices (cost compared with a tolerance); 1-hour cache writes
 *  cost twice the input price (issue 33, as pi-ai); `totalFromProvider` is false (no provider-billed cost). */
export function assertUsage(actual, tokens, price, { cacheWrite1h = 0 } = {}) {
  const { cost, ...counts } = actual;
  const want = { cacheRead: 0, cacheWrite: 0, ...tokens };
  want.totalTokens = want.input + want.output + want.cacheRead + want.cacheWrite;
  assert.deepEqual(counts, want);
  const c = {
    input: (want.input * price.input) / 1e6,
    output: (want.output * price.output) / 1e6,
    cacheRead: (want.cacheRead * price.cacheRead) / 1e6,
    cacheWrite: ((want.cacheWrite - cacheWrite1h) * price.cacheWrite + cacheWrite1h * 2 * price.input) / 1e6,
  };
  c.total = c.input + c.output + c.cacheRead + c.cacheWrite;
  assert.equal(cost.totalFromProvider, false, "cost.totalFromProvider");
  assert.deepEqual(Object.keys(cost).filter((k) => k !== "totalFromProvider").sort(), Object.keys(c).sort());
  for (const k of Object.keys(c)) assert.ok(Math.abs(cost[k] - c[k]) < 1e-12, `cost.${k}: ${cost[k]} ≠ ${c[k]}`);
}

/** Event types with runs of `*_delta` collapsed to `name*` (readable exact sequences). */
export function squash(types) {
  const out = [];
  for (const t of types) {
    if (t.endsWith("_delta") && out[out.length - 1] === `${t}*`) continue;
    out.push(t.endsWith("_delta") ? `${t}*` : t);
  }
  return out.join(" ");
}
