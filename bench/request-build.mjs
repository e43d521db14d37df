// The built-in providers' request building against `JSON.stringify` of the same messages (issue 17: "only the
// provider request itself may be O(N), and the built-in providers' request building must then cost ≤
// JSON.stringify of the same messages"). For each wire format and N prior messages (user / assistant text, an
// assistant tool call and its result every tenth pair), `streamBuiltin` is called with an `options.fetch` that notes
// the time and answers 400 at once: the span from the call to the fetch is the request's building (the context read
// from JS, the provider's message projection, the JSON body as one string). Alternating with `JSON.stringify` of the
// context's messages, medians of 15 rounds after 3 untimed. pi-ai 1.6.0's own providers are timed the same way
// (their SDKs call `globalThis.fetch`, replaced for the run). Not a test; prints a table.
//   node --expose-gc bench/request-build.mjs [--ns 100,1000,10000] [--rounds 15]
import { loadOurs } from "./impl.mjs";
import { median } from "./harness.mjs";
import { APIS, buildRequest, messages, modelFor, tools } from "./request-fixture.mjs";

const arg = (name, dflt) => (process.argv.includes(`--${name}`) ? process.argv[process.argv.indexOf(`--${name}`) + 1] : dflt);
const NS = arg("ns", "100,1000,10000").split(",").map(Number);
const ROUNDS = Number(arg("rounds", "15"));

const ours = await loadOurs();
const piStream = {};
for (const api of APIS) piStream[api] = (await import(`@earendil-works/pi-ai/api/${api}`)).stream;

/** ms from the streamBuiltin call to its fetch, and the body it sent. */
const build = (api, context) => buildRequest(ours, api, context);

/** The same for pi-ai's provider: ms from its `stream` call to the (global) fetch. */
async function buildPi(api, context) {
  let fetched = 0;
  const realFetch = globalThis.fetch;
  globalThis.fetch = async () => {
    fetched = performance.now();
    return new Response('{"error":{"message":"bench"}}', { status: 400, headers: { "content-type": "application/json" } });
  };
  try {
    const t0 = performance.now();
    const stream = piStream[api](modelFor(api), context, { apiKey: "bench", maxRetries: 0 });
    for await (const _ of stream);
    if (!fetched) throw new Error(`pi-ai ${api}: no request was made`);
    return { ms: fetched - t0 };
  } finally {
    globalThis.fetch = realFetch;
  }
}

function stringify(context) {
  const t0 = performance.now();
  JSON.stringify(context.messages);
  return { ms: performance.now() - t0 };
}

// The boundary floor: the least any request builder in wasm pays to read JS messages and hand a body back, with no
// work in between: the messages written as JSON text (the read), that text encoded into linear memory, and a body of
// the size ours sent decoded back into a JS string. Nothing of the wire format's conversion is in it.
const encoder = new TextEncoder();
const decoder = new TextDecoder();
let linear = new Uint8Array(1 << 20);
function boundaryFloor(context, bodyBytes) {
  const t0 = performance.now();
  const text = JSON.stringify(context.messages);
  if (linear.length < text.length * 3) linear = new Uint8Array(text.length * 3);
  encoder.encodeInto(text, linear);
  decoder.decode(bodyBytes);
  return { ms: performance.now() - t0 };
}

console.log(`request building vs JSON.stringify of the same messages (ms, medians of ${ROUNDS}); Node ${process.version}`);
console.log("| wire format | N | ours: request built | pi-ai: request built | JSON.stringify(messages) | boundary floor | ours / stringify | pi-ai / stringify | floor / stringify | ours / pi-ai |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const api of APIS) {
  for (const n of NS) {
    const context = { systemPrompt: "You are a bench.", messages: messages(n, api), tools };
    const t = { build: [], pi: [], json: [], floor: [] };
    const bodyBytes = encoder.encode((await build(api, context)).body);
    for (let r = 0; r < ROUNDS + 3; r++) {
      const b = await build(api, context);
      const p = await buildPi(api, context);
      const j = stringify(context);
      const f = boundaryFloor(context, bodyBytes);
      if (r >= 3) {
        t.build.push(b.ms);
        t.pi.push(p.ms);
        t.json.push(j.ms);
        t.floor.push(f.ms);
      }
    }
    const [b, p, j, f] = [median(t.build), median(t.pi), median(t.json), median(t.floor)];
    const ms = (x) => x.toFixed(x < 1 ? 3 : 2);
    console.log(`| ${api} | ${n.toLocaleString("en")} | ${ms(b)} | ${ms(p)} | ${ms(j)} | ${ms(f)} | ${(b / j).toFixed(2)}× | ${(p / j).toFixed(2)}× | ${(f / j).toFixed(2)}× | ${(b / p).toFixed(2)}× |`);
  }
}
