// Issue 44, SPEC §14: agent-loop-wasm/testing's cassettes on the built package. A tool loop recorded from a real HTTP
// server on 127.0.0.1 (random chunk boundaries) replays with the server closed, event for event; every stream of the
// provider corpus as a cassette replays to the events of the corpus test's direct replay; a changed prompt, a changed
// tool set and an extra request each give the documented error; an aborted replay ends like an aborted live stream;
// recordIfMissing adds requests; no credential reaches a cassette; custom stream functions and tools replay.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APIS, providerModel, startProviderServer, wire, prng } from "./provider-server.mjs";
import { cuts, dir, manifest, model as corpusModel, ourContext, replay, run } from "./provider-corpus.mjs";
import { P, clearKeyEnv, lib } from "./providers-common.mjs";

const testing = await import("../../pkg/dist/node/testing.mjs");
const { CassetteMismatchError, CASSETTE_VERSION } = testing;
// Every cassette this file makes, searched at the end for every key the tests used.
const made = [];
const createCassette = (options) => {
  const cassette = testing.createCassette(options);
  made.push(cassette);
  return cassette;
};
const loadCassette = async (path, options) => {
  const cassette = await testing.loadCassette(path, options);
  made.push(cassette);
  return cassette;
};
after(() => {
  for (const cassette of made) {
    const text = JSON.stringify(cassette.toJSON());
    assert.ok(!text.includes(KEY) && !/SECRET/.test(text), `a cassette holds a key: ${text.slice(0, 300)}`);
  }
});

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());
const work = mkdtempSync(join(tmpdir(), "cassette-"));
after(() => rmSync(work, { recursive: true, force: true }));

const KEY = "sk-cassette-SECRET-4242";
const T = { ...P, timeout: 30_000 };

/** Everything a run showed, as JSON, with the clock's fields (timestamp, durationMs) taken out. */
function clockless(value) {
  return JSON.stringify(value, (k, v) => (k === "timestamp" || k === "durationMs" ? undefined : v));
}

const weatherCalls = [];
const weather = {
  name: "get_weather",
  label: "Weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  async execute(_id, { city }) {
    weatherCalls.push(city);
    // Oslo's answer comes last: parallel calls end in another order than they were called.
    if (city === "Oslo") await new Promise((resolve) => setTimeout(resolve, 30));
    return { content: [{ type: "text", text: `${city}: 7°C, rain` }], details: { city } };
  },
};

/** Scripts a two-request tool loop on a fresh route: a call to get_weather, then the answer. */
function script(api) {
  const r = server.route();
  r.reply(
    { sse: wire[api].reply({ calls: [{ id: "call_1", name: "get_weather", args: { city: "Oslo" } }] }) },
    { sse: wire[api].reply({ text: "It is 7°C and raining in Oslo — take an umbrella ☂." }) },
  );
  return r;
}

/** One Agent run through the cassette: the events it emitted and its transcript. */
async function agentRun(api, baseUrl, cassette, prompt = "Weather in Oslo?", tools = [weather]) {
  const agent = new lib.Agent({
    initialState: { systemPrompt: "You are terse.", model: providerModel(api, baseUrl), tools: cassette.tools(tools) },
    fetch: cassette.fetch,
    apiKey: KEY,
  });
  const events = [];
  agent.subscribe((e) => events.push(structuredClone(e)));
  await agent.prompt(prompt);
  return { events, messages: agent.state.messages };
}

for (const api of APIS) {
  test(`R-14.1/R-14.2 ${api}: a tool loop recorded from the server replays with the server gone, event for event, the tool never run`, T, async () => {
    const r = script(api);
    const recorder = createCassette({ mode: "record" });
    weatherCalls.length = 0;
    const live = await agentRun(api, r.baseUrl, recorder);
    assert.equal(r.requests.length, 2);
    assert.deepEqual(weatherCalls, ["Oslo"]);
    const last = live.messages.at(-1);
    assert.equal(last.stopReason, "stop", JSON.stringify(last));
    const doc = recorder.toJSON();
    assert.deepEqual(doc.interactions.map((i) => i.type), ["http", "tool", "http"]);
    assert.equal(doc.version, CASSETTE_VERSION);
    // The bytes as they arrived: the server's random chunks, one stored chunk each.
    const chunks = doc.interactions[0].response.chunks;
    assert.ok(chunks.length > 3, `chunks: ${chunks.length}`);
    const text = JSON.stringify(doc);
    assert.ok(!text.includes(KEY) && !text.includes("SECRET"), "no key in the cassette");

    // Replay from the stored text, with the route's server answering nothing more (a request there would fail).
    const stored = JSON.stringify(doc);
    r.reply({ status: 500, body: { error: { message: "the replay reached the server" } } });
    for (let i = 0; i < 5; i++) {
      const player = createCassette({ cassette: stored });
      const replayed = await agentRun(api, r.baseUrl, player);
      const [got, want] = [replayed.events.map(clockless), live.events.map(clockless)];
      const at = got.findIndex((e, k) => e !== want[k]);
      assert.equal(at, -1, `replay ${i}: event ${at} differs:\n${got[at]}\n${want[at]}`);
      assert.equal(got.length, want.length);
      assert.equal(clockless(replayed.messages), clockless(live.messages));
      await player.stop();
    }
    assert.equal(r.requests.length, 2, "no request reached the server in replay");
    assert.deepEqual(weatherCalls, ["Oslo"], "the tool ran only while recording");
  });
}

test("R-14.2 every corpus stream as a cassette replays to the direct replay's events, whole and in random chunks", T, async () => {
  const random = prng(44);
  for (const entry of manifest.entries) {
    const bytes = new Uint8Array(readFileSync(new URL(entry.file, dir)));
    for (const chunks of [[bytes], cuts(bytes, random)]) {
      const direct = await run(lib.streamBuiltin(corpusModel(entry), ourContext, { apiKey: KEY, fetch: replay(chunks, []) }));
      // The cassette: recorded from the same bytes served by the direct replay's fetch.
      const recorder = createCassette({ mode: "record", fetch: replay(chunks, []) });
      const recorded = await run(lib.streamBuiltin(corpusModel(entry), ourContext, { apiKey: KEY, fetch: recorder.fetch }));
      assert.deepEqual(recorded, direct, `${entry.name}: recording changes nothing`);
      const doc = recorder.toJSON();
      // One stored chunk per network chunk read (the decoder stops reading after the stream's last event).
      const stored = doc.interactions[0].response.chunks;
      assert.ok(stored.length > 0 && stored.length <= chunks.length, `${entry.name}: ${stored.length} chunks stored of ${chunks.length}`);
      stored.forEach((c, i) => assert.deepEqual(c.text !== undefined ? [...new TextEncoder().encode(c.text)] : [...Buffer.from(c.base64, "base64")], [...chunks[i]], `${entry.name}: chunk ${i}`));
      const player = createCassette({ cassette: JSON.stringify(doc) });
      const replayed = await run(lib.streamBuiltin(corpusModel(entry), ourContext, { apiKey: KEY, fetch: player.fetch }));
      assert.deepEqual(replayed, direct, `${entry.name}: the cassette's replay equals the direct replay`);
      await player.stop();
    }
  }
});

/** A recording of one openai-completions tool loop, for the mismatch tests. */
async function recorded(api = "openai-completions") {
  const r = script(api);
  const recorder = createCassette({ mode: "record" });
  await agentRun(api, r.baseUrl, recorder);
  return { doc: recorder.toJSON(), baseUrl: r.baseUrl, url: `${r.baseUrl}/chat/completions` };
}

test("R-14.3 a changed prompt: the run ends with an error naming the message field, and stop() throws it", T, async () => {
  const { doc, baseUrl, url } = await recorded();
  const player = createCassette({ cassette: doc });
  const { messages } = await agentRun("openai-completions", baseUrl, player, "Weather in Bergen?");
  const expected = `cassette: request 1 (POST ${url}) does not match the recording (interactions[0]): it differs at body.messages[1].content[0].text: recorded "Weather in Oslo?", got "Weather in Bergen?"`;
  assert.equal(messages.at(-1).stopReason, "error");
  assert.equal(messages.at(-1).errorMessage, expected);
  await assert.rejects(player.stop(), (e) => e instanceof CassetteMismatchError && e.message === expected && e.details.path === "body.messages[1].content[0].text");
});

test("R-14.3 a changed tool set: the error names the tools field", T, async () => {
  const { doc, baseUrl } = await recorded();
  const player = createCassette({ cassette: doc });
  const clock = { ...weather, name: "get_time", description: "The time", parameters: { type: "object", properties: {} } };
  const { messages } = await agentRun("openai-completions", baseUrl, player, "Weather in Oslo?", [weather, clock]);
  assert.match(messages.at(-1).errorMessage, /^cassette: request 1 \(POST .*\) does not match the recording \(interactions\[0\]\): it differs at body\.tools\[1\]: recorded nothing, got \{"type":"function","function":\{"name":"get_time"/);
});

test("R-14.3 an extra request: the error says it was not recorded; unplayed recordings fail stop()", T, async () => {
  const { doc, baseUrl, url } = await recorded();
  const player = createCassette({ cassette: doc });
  await agentRun("openai-completions", baseUrl, player);
  // A second prompt: a third request the cassette lacks (its tool call never happens: the request fails).
  const agent = new lib.Agent({ initialState: { model: providerModel("openai-completions", baseUrl) }, fetch: player.fetch, apiKey: KEY });
  await agent.prompt("And tomorrow?");
  assert.equal(agent.state.messages.at(-1).errorMessage, `cassette: request 3 (POST ${url}) was not recorded: the cassette holds 2 requests of this kind, all played`);

  const short = createCassette({ cassette: doc });
  await assert.rejects(short.stop(), { name: "CassetteMismatchError", message: `cassette: 3 recorded interactions were never played; the first: interactions[0], POST ${url}` });
});

test("R-14.3 match: content serves requests out of order; order refuses them", T, async () => {
  const r = server.route();
  const api = "anthropic-messages";
  r.reply({ sse: wire[api].reply({ text: "one" }) }, { sse: wire[api].reply({ text: "two" }) });
  const ask = async (cassette, prompt) => {
    const result = await lib.streamBuiltin(providerModel(api, r.baseUrl), { messages: [{ role: "user", content: prompt, timestamp: 1 }] }, { apiKey: KEY, fetch: cassette.fetch }).result();
    return result.errorMessage ?? result.content[0].text;
  };
  const recorder = createCassette({ mode: "record" });
  assert.deepEqual([await ask(recorder, "first"), await ask(recorder, "second")], ["one", "two"]);
  const byContent = createCassette({ cassette: recorder.toJSON(), match: "content" });
  assert.deepEqual([await ask(byContent, "second"), await ask(byContent, "first")], ["two", "one"]);
  await byContent.stop();
  const inOrder = createCassette({ cassette: recorder.toJSON() });
  assert.match(await ask(inOrder, "second"), /^cassette: request 1 \(POST .*\/v1\/messages\) does not match the recording \(interactions\[0\]\): it differs at body\.messages\[0\]\.content\[0\]\.text: recorded "first", got "second"$/);
  const missing = createCassette({ cassette: recorder.toJSON(), match: "content" });
  assert.match(await ask(missing, "third"), /^cassette: no recording matches request 1 \(POST .*\/v1\/messages\); the nearest, interactions\[0\], differs at body\.messages\[0\]\.content\[0\]\.text: recorded "first", got "third"$/);
});

test("R-14.2/D2 aborting a replay mid-stream ends it as an aborted live stream ends", T, async () => {
  const api = "openai-responses";
  const r = server.route();
  r.reply({ sse: wire[api].reply({ text: "This answer is long and the user aborts it halfway through the stream, really." }) });
  const recorder = createCassette({ mode: "record" });
  const context = { messages: [{ role: "user", content: "hi", timestamp: 1 }] };
  await lib.streamBuiltin(providerModel(api, r.baseUrl), context, { apiKey: KEY, fetch: recorder.fetch }).result();
  for (const realtime of [false, true]) {
    const player = createCassette({ cassette: recorder.toJSON(), realtime });
    const controller = new AbortController();
    let deltas = 0;
    const stream = lib.streamBuiltin(providerModel(api, r.baseUrl), context, { apiKey: KEY, fetch: player.fetch, signal: controller.signal });
    const types = [];
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "text_delta" && ++deltas === 2) controller.abort();
    }
    const last = await stream.result();
    assert.equal(types.at(-1), "error");
    assert.equal(last.stopReason, "aborted");
    assert.equal(last.errorMessage, "Request was aborted");
    assert.ok(last.content[0].text.length > 0);
  }
});

test("R-14.3 recordIfMissing: a test run adds its new requests to the cassette file, which then replays offline", T, async () => {
  const api = "google-generative-ai";
  const r = server.route();
  r.reply({ sse: wire[api].reply({ text: "first answer" }) }, { sse: wire[api].reply({ text: "second answer" }) });
  const path = join(work, "grow.json");
  const ask = async (cassette, prompt) => (await lib.streamBuiltin(providerModel(api, r.baseUrl), { messages: [{ role: "user", content: prompt, timestamp: 1 }] }, { apiKey: KEY, fetch: cassette.fetch }).result()).content[0].text;

  const first = await loadCassette(path, { recordIfMissing: true });
  assert.equal(await ask(first, "one"), "first answer");
  await first.stop();
  assert.ok(existsSync(path));
  const second = await loadCassette(path, { recordIfMissing: true });
  assert.equal(await ask(second, "one"), "first answer");
  assert.equal(await ask(second, "two"), "second answer");
  await second.stop();
  assert.equal(r.requests.length, 2, "the recorded request was replayed, the new one recorded");
  const offline = await loadCassette(path);
  assert.deepEqual([await ask(offline, "one"), await ask(offline, "two")], ["first answer", "second answer"]);
  await offline.stop();
  const text = readFileSync(path, "utf8");
  assert.equal(JSON.parse(text).interactions.length, 2);
  assert.ok(!text.includes(KEY), "no key in the file");
});

test("R-14.1 no credential reaches a cassette: auth headers, keys in URLs, user info, and their values anywhere", T, async () => {
  const secrets = { header: "sk-header-SECRET-1", bearer: "sk-bearer-SECRET-2", query: "query-SECRET-3", user: "user-SECRET-4", extra: "extra-SECRET-5" };
  const answer = (body) => new Response(body, { status: 200, headers: { "content-type": "text/plain", "set-cookie": "session=cookie-SECRET-6" } });
  const recorder = createCassette({ mode: "record", redact: [secrets.extra], fetch: async () => answer(`echo ${secrets.bearer} ${secrets.extra}`) });
  const response = await recorder.fetch(`https://${secrets.user}:pw-SECRET-7@example.test/v1?key=${secrets.query}&x=1`, {
    method: "POST",
    headers: { authorization: `Bearer ${secrets.bearer}`, "x-api-key": secrets.header, "x-goog-api-key": secrets.header, cookie: "a=cookie-SECRET-8" },
    body: JSON.stringify({ note: `copy of ${secrets.header}`, extra: secrets.extra }),
  });
  assert.equal(await response.text(), `echo ${secrets.bearer} ${secrets.extra}`, "the live response is untouched");
  const text = JSON.stringify(recorder.toJSON());
  assert.doesNotMatch(text, /SECRET/);
  const [entry] = recorder.toJSON().interactions;
  assert.equal(entry.request.url, "https://example.test/v1?x=1");
  assert.deepEqual(entry.request.body, { note: "copy of [redacted]", extra: "[redacted]" });
  assert.deepEqual(entry.response.chunks.map((c) => c.text), ["echo [redacted] [redacted]"]);
});

test("R-14.1 chunks that are not whole UTF-8 are stored in base64 and replay byte for byte", T, async () => {
  const bytes = new TextEncoder().encode("data: é€😀\n\n");
  const parts = [bytes.subarray(0, 8), bytes.subarray(8, 10), bytes.subarray(10)];
  const recorder = createCassette({ mode: "record", fetch: async () => new Response(new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } })) });
  await (await recorder.fetch("http://127.0.0.1:9/x", { method: "POST", body: "{}" })).arrayBuffer();
  const chunks = recorder.toJSON().interactions[0].response.chunks;
  assert.deepEqual(chunks.map((c) => Object.keys(c).sort().join()), ["delayMs,text", "base64,delayMs", "base64,delayMs"]);
  const player = createCassette({ cassette: recorder.toJSON() });
  const reader = (await player.fetch("http://127.0.0.1:9/x", { method: "POST", body: "{}" })).body.getReader();
  const got = [];
  for (let step = await reader.read(); !step.done; step = await reader.read()) got.push([...step.value]);
  assert.deepEqual(got, parts.map((p) => [...p]));
});

test("R-14.1 a custom stream function and its tools recorded and replayed (events with their partial message)", T, async () => {
  const api = "faux";
  const model = { ...providerModel("openai-completions", "http://127.0.0.1:9"), api, provider: "faux", id: "faux-1" };
  let calls = 0;
  // An async generator (a StreamFnLike source): each event is seen before the message changes again.
  const streamFn = async function* (m, context) {
    calls++;
    const toolTurn = context.messages.at(-1).role === "user";
    const message = { role: "assistant", content: [], api: m.api, provider: m.provider, model: m.id, usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: toolTurn ? "toolUse" : "stop", timestamp: Date.now() };
    yield { type: "start", partial: message };
    if (toolTurn) {
      const call = { type: "toolCall", id: "c1", name: "get_weather", arguments: {} };
      message.content.push(call);
      yield { type: "toolcall_start", contentIndex: 0, partial: message };
      call.arguments = { city: "Os" };
      yield { type: "toolcall_delta", contentIndex: 0, delta: '{"city":"Os', partial: message };
      call.arguments = { city: "Oslo" };
      yield { type: "toolcall_delta", contentIndex: 0, delta: 'lo"}', partial: message };
      yield { type: "toolcall_end", contentIndex: 0, toolCall: call, partial: message };
      yield { type: "done", reason: "toolUse", message };
    } else {
      const block = { type: "text", text: "" };
      message.content.push(block);
      yield { type: "text_start", contentIndex: 0, partial: message };
      for (const d of ["Rain ", "in Oslo."]) {
        block.text += d;
        yield { type: "text_delta", contentIndex: 0, delta: d, partial: message };
      }
      yield { type: "text_end", contentIndex: 0, content: block.text, partial: message };
      yield { type: "done", reason: "stop", message };
    }
  };
  const runWith = async (cassette) => {
    const agent = new lib.Agent({ initialState: { model, tools: cassette.tools([weather]) }, streamFn: cassette.streamFn(streamFn) });
    const seen = [];
    agent.subscribe((e) => {
      if (e.type === "message_update") seen.push({ type: e.assistantMessageEvent.type, partial: structuredClone(e.assistantMessageEvent.partial ?? null) });
      else seen.push({ type: e.type });
    });
    await agent.prompt("Weather in Oslo?");
    return { seen, messages: agent.state.messages };
  };
  const recorder = createCassette({ mode: "record" });
  const live = await runWith(recorder);
  assert.equal(calls, 2);
  assert.deepEqual(recorder.toJSON().interactions.map((i) => i.type), ["stream", "tool", "stream"]);
  const player = createCassette({ cassette: JSON.stringify(recorder.toJSON()) });
  const replayed = await runWith(player);
  assert.equal(calls, 2, "the stream function did not run in replay");
  assert.equal(clockless(replayed.seen), clockless(live.seen));
  assert.equal(clockless(replayed.messages), clockless(live.messages));
  await player.stop();

  // A stream function that throws: the replay throws the same, so the run ends the same way.
  const throwing = () => {
    throw new RangeError("quota gone");
  };
  const endOf = async (cassette) => {
    const a = new lib.Agent({ initialState: { model }, streamFn: cassette.streamFn(throwing) });
    await a.prompt("hi");
    return clockless(a.state.messages);
  };
  const thrower = createCassette({ mode: "record" });
  const thrown = await endOf(thrower);
  assert.match(thrown, /quota gone/);
  assert.deepEqual(thrower.toJSON().interactions[0].error, { name: "RangeError", message: "quota gone" });
  assert.equal(await endOf(createCassette({ cassette: thrower.toJSON() })), thrown);

  // A changed prompt: a lone error event naming the field.
  const drifted = createCassette({ cassette: recorder.toJSON() });
  const agent = new lib.Agent({ initialState: { model, tools: drifted.tools([weather]) }, streamFn: drifted.streamFn(streamFn) });
  await agent.prompt("Weather in Bergen?");
  assert.equal(agent.state.messages.at(-1).errorMessage, 'cassette: stream request 1 (faux/faux-1) does not match the recording (interactions[0]): it differs at messages[1].content[0].text: recorded "Weather in Oslo?", got "Weather in Bergen?"');
});

test("R-14.4 bad input: clear TypeErrors naming the argument; other versions refused", () => {
  assert.throws(() => createCassette(), { name: "TypeError", message: 'agent-loop-wasm/testing: createCassette(options): options.cassette is required in "replay" mode (a recording, or its JSON text)' });
  assert.throws(() => createCassette({ mode: "play" }), { name: "TypeError", message: 'agent-loop-wasm/testing: createCassette(options): options.mode must be "replay" or "record", got "play"' });
  assert.throws(() => createCassette({ cassette: "{" }), { name: "TypeError", message: /^agent-loop-wasm\/testing: createCassette\(options\): options.cassette is not JSON: / });
  assert.throws(() => createCassette({ cassette: { format: "agent-loop-wasm/cassette", version: 2, interactions: [] } }), {
    name: "TypeError",
    message: "agent-loop-wasm/testing: createCassette(options): the cassette's version 2 is not supported (this package reads version 1); record it again",
  });
  assert.throws(() => createCassette({ cassette: { version: 1, interactions: [] } }), { message: /is not a cassette \(its "format" is undefined/ });
  assert.throws(() => createCassette({ mode: "record" }).tools([{ name: "x" }]), { name: "TypeError", message: 'agent-loop-wasm/testing: cassette.tools(tools): tools[0] ("x") has no execute function' });
  assert.throws(() => createCassette({ mode: "record" }).streamFn(1), { name: "TypeError", message: "agent-loop-wasm/testing: cassette.streamFn(streamFn): streamFn must be a function, got number" });
});

test("R-14.2 a durable Agent on a cassette: SIGKILL at every checkpoint, restore and resume (matched by content) give the uninterrupted transcript", T, async () => {
  const { spawnSync } = await import("node:child_process");
  const { writeFileSync } = await import("node:fs");
  const api = "openai-completions";
  const r = server.route();
  r.reply(
    { sse: wire[api].reply({ calls: [{ id: "call_1", name: "get_weather", args: { city: "Oslo" } }, { id: "call_2", name: "get_weather", args: { city: "Bergen" } }] }) },
    { sse: wire[api].reply({ text: "Rain in both." }) },
  );
  const recorder = createCassette({ mode: "record" });
  const agent = new lib.Agent({
    initialState: { systemPrompt: "You are terse.", model: providerModel(api, r.baseUrl), tools: recorder.tools([weather]) },
    fetch: recorder.fetch,
    apiKey: KEY,
  });
  await agent.prompt("Weather in Oslo and Bergen?");
  const dir = mkdtempSync(join(work, "durable-"));
  const cassetteFile = join(dir, "cassette.json");
  const modelFile = join(dir, "model.json");
  writeFileSync(cassetteFile, JSON.stringify(recorder.toJSON()));
  writeFileSync(modelFile, JSON.stringify(providerModel(api, r.baseUrl)));
  const child = new URL("./durable/cassette-process.mjs", import.meta.url).pathname;
  const run = (mode, store, crash = "none") => spawnSync(process.execPath, [child, mode, store, cassetteFile, modelFile, crash], { encoding: "utf8", timeout: 20_000 });
  const expected = clockless(agent.state.messages);

  const wholeStore = join(dir, "whole.jsonl");
  const whole = run("fresh", wholeStore);
  assert.equal(whole.status, 0, whole.stderr);
  assert.equal(clockless(JSON.parse(whole.stdout).messages), expected, "the uninterrupted replay equals the live run");
  const seqs = readFileSync(wholeStore, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).seq);
  assert.ok(seqs.length > 4, `${seqs.length} checkpoints`);
  for (const seq of seqs) {
    const store = join(dir, `crash-${seq}.jsonl`);
    const killed = run("fresh", store, `seq:${seq}`);
    assert.equal(killed.signal, "SIGKILL", `seq ${seq}: ${killed.stderr}`);
    const resumed = run("resume", store);
    assert.equal(resumed.status, 0, `seq ${seq}: ${resumed.stderr}`);
    const after = JSON.parse(resumed.stdout).messages;
    const held = readFileSync(store, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    if (!held.some((c) => (c.messages?.append ?? []).some((m) => m.role === "user"))) {
      // Killed before the prompt was stored: nothing to resume.
      assert.ok(after.every((m) => m.role === "system"), `seq ${seq}`);
      continue;
    }
    assert.equal(clockless(after), expected, `seq ${seq}`);
  }
  assert.equal(r.requests.length, 2, "only the recording reached the server");
});

test("R-14.2 agentLoop's config takes the cassette's fetch and tools as the Agent does", T, async () => {
  const api = "anthropic-messages";
  const r = script(api);
  const loop = async (cassette) => {
    const stream = lib.agentLoop(
      [{ role: "user", content: "Weather in Oslo?", timestamp: 1 }],
      { messages: [], tools: cassette.tools([weather]) },
      { model: providerModel(api, r.baseUrl), convertToLlm: (m) => m, apiKey: KEY, fetch: cassette.fetch },
    );
    const types = [];
    for await (const e of stream) types.push(e.type);
    return { types, messages: clockless(await stream.result()) };
  };
  const recorder = createCassette({ mode: "record" });
  const live = await loop(recorder);
  assert.equal(r.requests.length, 2);
  const player = createCassette({ cassette: recorder.toJSON() });
  assert.deepEqual(await loop(player), live);
  await player.stop();
  assert.equal(r.requests.length, 2);
});

test("R-14.1 recording never changes the live run: a tool result JSON cannot hold is returned, and its replay says why it cannot be", T, async () => {
  const cyclic = { name: "cyclic", label: "c", description: "c", parameters: { type: "object", properties: {} },
    async execute() {
      const details = { big: 1n };
      details.self = details;
      return { content: [{ type: "text", text: "ok" }], details };
    } };
  const recorder = createCassette({ mode: "record" });
  const [tool] = recorder.tools([cyclic]);
  const result = await tool.execute("c1", {}, undefined, undefined);
  assert.equal(result.details.self, result.details, "the live result is the tool's own");
  const [entry] = recorder.toJSON().interactions;
  assert.match(entry.unstorable, /^TypeError: /);
  const player = createCassette({ cassette: recorder.toJSON() });
  await assert.rejects(player.tools([cyclic])[0].execute("c1", {}), (e) => e instanceof CassetteMismatchError && /^cassette: interactions\[0\] \(tool cyclic\) could not be recorded \(TypeError: .*\); make its values JSON and record it again$/.test(e.message));
});
