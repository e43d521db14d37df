// Issue 34: an SSE line past 256 KiB leaves wasm memory as it arrives and is parsed in JS; the wire format reads a
// copy of the event whose long strings are markers, put back wherever the result reaches JS. This file holds the
// result to pi-ai 1.6.0's on the same bytes (random chunk sizes, seeded): every event's fields (its type, delta,
// content, tool call) and the final message, for text, thinking and tool calls in one line, with escapes, lone surrogates and
// the marker character itself in the provider's text, before and after a long line. The memory it saves is measured
// by memory-payloads.test.mjs.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { APIS, SEED, data, providerModel, startProviderServer, stable, wire } from "./provider-server.mjs";
import { P, clearKeyEnv, ctx, streamBuiltin } from "./providers-common.mjs";

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());
console.log(`# provider chunking seed ${SEED} (rerun with PROVIDER_SEED=${SEED})`);

const KEY = "sk-long";
/** Random chunk sizes up to past the 64 KiB window the decoder copies at a time. */
const CHUNKS = { minChunk: 1, maxChunk: 100000 };
const T = { ...P, timeout: 60000 };
/** Past the point where a line is parsed in JS (SPILL_LINE_AFTER, 256 KiB). */
const LONG = 300 * 1024;
const MARKERISH = "\uFDD0s0.5\uFDD1";
/** Text with what the projection must keep exact: quotes, backslashes, newlines, astral characters, a lone
 *  surrogate, the marker character in and around a marker-like form. */
const long = (seed, size = LONG) => `${seed} ${MARKERISH} \ud83d "q" \\ é😀\n`.repeat(Math.ceil(size / 30)).slice(0, size);

/** Every event as JSON without its shared partial message (which both sides fill at their own pace), and the
 *  final message. */
async function record(stream) {
  const events = [];
  for await (const e of stream) {
    const { partial, message, error, ...rest } = e;
    events.push(JSON.stringify(rest));
    const last = message ?? error;
    // Gemini's responseModel: the reference sets none (README, Differences).
    if (last) events.push(JSON.stringify({ ...stable(last), usage: undefined, responseModel: undefined }));
  }
  return events;
}

async function both(api, sse, { model = {}, options = {} } = {}) {
  const r = server.route();
  r.reply({ sse, ...CHUNKS }, { sse, ...CHUNKS });
  const m = providerModel(api, r.baseUrl, model);
  const ours = await record(streamBuiltin(m, ctx(), { apiKey: KEY, ...options }));
  const { streamSimple } = await import(`@earendil-works/pi-ai/api/${api}`);
  const theirs = await record(streamSimple(m, ctx(), { apiKey: KEY, ...options }));
  return { ours, theirs };
}

function assertSame({ ours, theirs }, what) {
  assert.equal(ours.length, theirs.length, `${what}: ${ours.length} events, pi-ai ${theirs.length}`);
  for (let i = 0; i < ours.length; i++) {
    if (ours[i] !== theirs[i]) {
      let at = 0;
      while (ours[i][at] === theirs[i][at]) at++;
      assert.fail(`${what}: event ${i} differs at ${at}: ours …${ours[i].slice(at - 80, at + 80)}… pi-ai …${theirs[i].slice(at - 80, at + 80)}…`);
    }
  }
}

const call = (size) => ({ id: "call_1", name: "write", args: { path: "a.txt", content: long("arg", size), n: [1, 2.5, null] } });

for (const api of APIS) {
  const thinking = api === "openai-completions" || api === "anthropic-messages";
  test(`issue 34 ${api}: a long text${thinking ? ", thinking" : ""} and tool call, each in one line: every event and the message as pi-ai's`, T, async () => {
    assertSame(await both(api, wire[api].reply({ text: long("text"), whole: true })), "text");
    if (thinking) {
      assertSame(await both(api, wire[api].reply({ thinking: long("think"), text: "ok", whole: true }), { model: { reasoning: true } }), "thinking");
    }
    assertSame(await both(api, wire[api].reply({ calls: [call(LONG)], whole: true })), "tool call");
    // Several calls, long and short, in one line where the API allows it.
    assertSame(await both(api, wire[api].reply({ text: "a", calls: [call(LONG), { ...call(10), id: "call_2" }], whole: true })), "two calls");
  });

  test(`issue 34 ${api}: after a long line, the provider's own marker character (raw and escaped) in short lines is text`, T, async () => {
    const sse = wire[api].reply({ text: `${MARKERISH} short ${MARKERISH}`, calls: [call(LONG)], whole: true });
    // The short text's marker characters also as JSON escapes, in either case.
    const escaped = sse.replace(`${MARKERISH} short`, "\\uFDD0s0.5\\ufdd1 short");
    assert.notEqual(escaped, sse);
    // A long line first: a thinking block where the API has one, else a long tool call before a short text.
    assertSame(await both(api, sse), "raw");
    assertSame(await both(api, escaped), "escaped");
    const after = wire[api].reply({ calls: [call(LONG), { id: "call_2", name: "write", args: { content: MARKERISH } }], whole: true });
    assertSame(await both(api, after), "a short call after a long one");
  });
}

test("issue 34: a long line's event reaches onProviderStreamEvent as the provider sent it", T, async () => {
  const api = "openai-completions";
  const text = long("hook");
  const r = server.route();
  const sse = wire[api].reply({ text, whole: true });
  r.reply({ sse, ...CHUNKS });
  const seen = [];
  const onProviderStreamEvent = (event) => seen.push(JSON.stringify(event));
  const events = await record(streamBuiltin(providerModel(api, r.baseUrl), ctx(), { apiKey: KEY, onProviderStreamEvent }));
  const sent = sse.split("\n\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.stringify(JSON.parse(l.slice(6))));
  assert.deepEqual(seen, sent);
  assert.ok(seen.some((e) => e.length > LONG), "the long event is among them");
  assert.ok(events.at(-2).includes('"type":"done"'), events.at(-2));
});

test("issue 34: a long line's limit and its errors read as before (maxStreamEventBytes, invalid JSON)", T, async () => {
  const api = "openai-completions";
  const run = async (sse, options = {}) => {
    const r = server.route();
    r.reply({ sse, ...CHUNKS });
    const events = [];
    for await (const e of streamBuiltin(providerModel(api, r.baseUrl), ctx(), { apiKey: KEY, ...options })) events.push(e);
    const last = events.at(-1);
    return { types: events.map((e) => e.type), error: last.error?.errorMessage };
  };
  const sse = wire[api].reply({ text: long("limit", 600 * 1024), whole: true });
  // Over the limit before a line leaves wasm memory, and after (the limit counts what was handed out).
  for (const limit of [200 * 1024, 400 * 1024]) {
    assert.deepEqual(await run(sse, { maxStreamEventBytes: limit }), {
      types: ["start", "error"],
      error: `Provider stream event exceeds the limit of ${limit} bytes (maxStreamEventBytes)`,
    });
  }
  // A long line that is not JSON: the usual error, with its first 200 characters.
  const bad = `{"oops": "${"x".repeat(LONG)}`;
  assert.deepEqual(await run(`${data({ choices: [{ index: 0, delta: { content: "a" } }] })}data: ${bad}\n\n`), {
    types: ["start", "text_start", "text_delta", "text_end", "error"],
    error: `Invalid JSON in provider stream: ${bad.slice(0, 200)}`,
  });
});
