// Built-in providers (P-6.1.3, P-6.1.4): without `onProviderStreamEvent` the driver maps all events of a network
// chunk and then applies their operations together (their strings decoded as one JS string and sliced); with the
// hook it applies each event's operations before the next event. Both must push the same events with the same
// message state at every push, whatever the chunking: non-ASCII text, thinking, signatures and tool-call arguments
// with escapes and astral characters included.
import { test } from "node:test";
import assert from "node:assert/strict";
import { APIS, providerModel, wire } from "./provider-server.mjs";
import { P, clearKeyEnv, ctx, streamBuiltin } from "./providers-common.mjs";

clearKeyEnv();

const TEXT = "Hello, wörld 🌍! \"Quoted\", tab\tand newline\n, ünïcödé 𝄞 and a tail long enough for many deltas.";
const THINK = "Thinking about ünïcode… 🤔 done.";
const CALLS = [
  { id: "call_1", name: "write", args: { path: "nötes/😀.md", content: "line \"one\"\nline ☃ two\n", n: [1, 2.5, { a: "é" }] } },
  { id: "call_2", name: "read", args: { path: "a\\b", flags: [true, null], empty: "" } },
];

/** A fetch answering `body` in chunks of the given sizes (cycled), as one ReadableStream. */
function fetchWith(body, sizes) {
  return async () => {
    let at = 0;
    let i = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (at >= body.length) return controller.close();
        const size = sizes[i++ % sizes.length];
        controller.enqueue(body.slice(at, at + size));
        at += size;
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
}

/** Every pushed event, with the JSON of the shared message at the moment of the push. */
async function pushes(api, body, sizes, options) {
  const s = streamBuiltin(providerModel(api, "http://127.0.0.1:9"), ctx(), { apiKey: "k", fetch: fetchWith(body, sizes), ...options });
  const seen = [];
  const push = s.push.bind(s);
  s.push = (event) => {
    const { partial, message, error, ...rest } = event;
    const shared = partial ?? message ?? error;
    const { timestamp, ...state } = JSON.parse(JSON.stringify(shared ?? {}));
    seen.push(JSON.stringify({ ...rest, state }));
    return push(event);
  };
  for await (const _ of s);
  return seen;
}

for (const api of APIS) {
  test(`P-6.1.4 ${api}: a chunk's operations applied together push what per-event application pushes`, P, async () => {
    const body = new TextEncoder().encode(wire[api].reply({ thinking: THINK, text: TEXT, calls: CALLS }));
    const perEvent = await pushes(api, body, [body.length], { onProviderStreamEvent: () => {} });
    assert.ok(perEvent.some((p) => p.includes('"type":"toolcall_delta"')), "the reply streams tool-call arguments");
    assert.match(perEvent.at(-1), /"type":"done"/);
    for (const sizes of [[body.length], [4096], [7, 1, 13], [64]]) {
      assert.deepEqual(await pushes(api, body, sizes, {}), perEvent, `chunk sizes ${sizes}`);
    }
  });
}
