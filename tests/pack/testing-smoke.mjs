// The packaging smoke test of `agent-loop-wasm/testing` (issue 44), run by scripts/pack-test.mjs in Node CJS (as a
// generated CommonJS copy) and ESM, Deno, a Vite bundle in Chromium and workerd, each with only the packed tarball
// installed. Plain ES2020; no network: the recorder's real `fetch` is a local function that answers OpenAI's Responses
// wire format as a ReadableStream in several chunks (one boundary cutting a UTF-8 character in two).
//
// `testingSmoke({ lib, testing })`: records a run of the built-in provider of the real wasm loop through
// `cassette.fetch`, checks the cassette document (its format and version, one interaction, the chunks as delivered, no
// API key anywhere), replays it from its JSON text with no real fetch and gets the same reply, then replays it with
// another prompt: the run ends with the exact mismatch message and `stop()` throws it as a CassetteMismatchError.
// Resolves to a summary, or throws with what differed.

function check(ok, what) {
  if (!ok) throw new Error(`testing smoke: ${what}`);
}

const SECRET = "sk-smoke-SECRET";
const URL_ = "https://api.openai.com/v1/responses";
const TEXT = "It is 18 °C in Oslo.";
const CHUNK = 37;

const MODEL = {
  id: "gpt-4o-mini",
  name: "GPT-4o mini",
  api: "openai-responses",
  provider: "openai",
  baseUrl: "https://api.openai.com/v1",
  reasoning: false,
  input: ["text", "image"],
  cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 16384,
};

const sse = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const REPLY = [
  sse("response.created", { response: { id: "resp_1", object: "response", model: "gpt-4o-mini", status: "in_progress", output: [] } }),
  sse("response.output_item.added", { output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] } }),
  sse("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "It is 18 °C" }),
  sse("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: " in Oslo." }),
  sse("response.output_item.done", { output_index: 0, item: { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: TEXT, annotations: [] }] } }),
  sse("response.completed", {
    response: { id: "resp_1", object: "response", model: "gpt-4o-mini", status: "completed", output: [],
      usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 19 } },
  }),
].join("");

const context = (prompt) => ({ messages: [{ role: "user", content: prompt, timestamp: 1 }] });

export async function testingSmoke({ lib, testing }) {
  check(typeof testing.createCassette === "function" && typeof testing.loadCassette === "function", "the entry lacks its functions");
  check(typeof testing.CassetteMismatchError === "function" && testing.CASSETTE_VERSION === 1, `CASSETTE_VERSION ${testing.CASSETTE_VERSION}`);

  // The service: a local fetch whose body arrives in pieces of at most CHUNK bytes, one boundary inside a "°".
  const bytes = new TextEncoder().encode(REPLY);
  const cut = bytes.indexOf(0xc2) + 1; // between the two bytes of the first "°"
  check(cut > 0 && bytes[cut] === 0xb0, "no \"°\" in the reply");
  const bounds = [0, cut, bytes.length];
  for (let at = CHUNK; at < bytes.length; at += CHUNK) if (at !== cut) bounds.push(at);
  bounds.sort((a, b) => a - b);
  const pieces = bounds.slice(1).map((end, i) => bytes.slice(bounds[i], end));
  const requests = [];
  const service = async (url, init) => {
    const headers = new Headers(init.headers);
    requests.push({ url: String(url), auth: headers.get("authorization"), input: JSON.parse(init.body).input });
    const body = new ReadableStream({
      start(controller) {
        for (const piece of pieces) controller.enqueue(piece);
        controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };

  // 1. Record.
  const recorder = testing.createCassette({ mode: "record", fetch: service });
  check(recorder.mode === "record", `recorder mode ${recorder.mode}`);
  const recorded = await lib.streamBuiltin(MODEL, context("Weather in Oslo?"), { apiKey: SECRET, fetch: recorder.fetch }).result();
  check(recorded.stopReason === "stop" && recorded.content[0].text === TEXT, `recorded reply ${recorded.stopReason} ${recorded.errorMessage ?? JSON.stringify(recorded.content)}`);
  check(requests.length === 1 && requests[0].url === URL_ && requests[0].auth === `Bearer ${SECRET}`, `the service saw ${JSON.stringify(requests)}`);
  await recorder.stop();

  // 2. The document.
  const doc = recorder.toJSON();
  const json = JSON.stringify(doc);
  check(!json.includes(SECRET) && !json.includes("smoke-SECRET"), "the cassette holds the API key");
  check(doc.format === "agent-loop-wasm/cassette" && doc.version === 1, `format ${doc.format} version ${doc.version}`);
  check(Array.isArray(doc.interactions) && doc.interactions.length === 1 && doc.interactions[0].type === "http", `interactions ${json.slice(0, 200)}`);
  const entry = doc.interactions[0];
  check(entry.request.method === "POST" && entry.request.url === URL_, `request ${entry.request.method} ${entry.request.url}`);
  check(entry.response.status === 200 && entry.response.end === "done", `response ${entry.response.status} ${JSON.stringify(entry.response.end)}`);
  check(entry.response.chunks.length === pieces.length, `${entry.response.chunks.length} chunks recorded, ${pieces.length} sent`);
  const base64 = entry.response.chunks.filter((c) => typeof c.base64 === "string").length;
  check(base64 >= 2, `${base64} chunks kept in base64 (the cut "°" needs 2)`);

  // 3. Replay from the JSON text: the same reply, and the service is not asked.
  const player = testing.createCassette({ cassette: json });
  check(player.mode === "replay", `player mode ${player.mode}`);
  const replayed = await lib.streamBuiltin(MODEL, context("Weather in Oslo?"), { apiKey: "replay", fetch: player.fetch }).result();
  check(replayed.stopReason === "stop" && replayed.content[0].text === TEXT, `replayed reply ${replayed.stopReason} ${replayed.errorMessage ?? JSON.stringify(replayed.content)}`);
  check(replayed.usage.input === recorded.usage.input && replayed.usage.output === recorded.usage.output, `usage ${JSON.stringify(replayed.usage)}`);
  check(requests.length === 1, "the replay called the service");
  await player.stop();

  // 4. Drift: another prompt ends the run with the mismatch, and stop() throws it.
  const expected = `cassette: request 1 (POST ${URL_}) does not match the recording (interactions[0]): it differs at body.input[0].content[0].text: recorded "Weather in Oslo?", got "Weather in Bergen?"`;
  const drifted = testing.createCassette({ cassette: json });
  const failed = await lib.streamBuiltin(MODEL, context("Weather in Bergen?"), { apiKey: "replay", fetch: drifted.fetch }).result();
  check(failed.stopReason === "error" && failed.errorMessage === expected, `drifted run ${failed.stopReason}: ${failed.errorMessage}`);
  check(requests.length === 1, "the drifted replay called the service");
  let thrown;
  try {
    await drifted.stop();
  } catch (e) {
    thrown = e;
  }
  check(thrown instanceof testing.CassetteMismatchError && thrown.name === "CassetteMismatchError", `stop() threw ${thrown}`);
  check(thrown.message === expected && thrown.retryable === false, `stop() threw "${thrown.message}"`);
  check(thrown.details.path === "body.input[0].content[0].text" && thrown.details.index === 0, `details ${JSON.stringify(thrown.details)}`);

  return { format: doc.format, version: doc.version, chunks: entry.response.chunks.length, base64, text: replayed.content[0].text, mismatch: thrown.name };
}
