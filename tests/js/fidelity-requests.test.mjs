// Issue 13, requests of the built-in providers: every value is sent exactly as JS holds it, and only what is sent
// is read. Over the loopback provider server, for all four wire formats: lone UTF-16 surrogates in prompts, system
// prompts and tool-call arguments reach the body as JSON.stringify writes them (`\ud83d`); `details` nested 100,000
// levels, cyclic, BigInt or with a throwing `toJSON`, and getters on fields no wire format reads, are never touched;
// an unsendable value gives an error naming the message and field, and the next request works. Each case compares the
// exact body bytes with a control request whose hostile parts are replaced by plain ones of the same JSON length.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { APIS, drain, providerModel, startProviderServer, wire } from "./provider-server.mjs";
import { P, clearKeyEnv, lib, streamBuiltin } from "./providers-common.mjs";

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());

const KEY = "sk-fidelity";
const LONE = "\ud83d"; // the first half of 😀: a prompt cut mid-emoji
const SAME_LENGTH = "ZZZZZZ"; // JSON.stringify writes LONE as six characters (`\ud83d`) too
const escaped = (s) => JSON.stringify(s).slice(1, -1);

/** One request through streamBuiltin; returns the exact body text the server received and the drained run. */
async function send(api, context, { model = {}, options = {} } = {}) {
  const r = server.route();
  r.reply({ sse: wire[api].text("ok") });
  const run = await drain(streamBuiltin(providerModel(api, r.baseUrl, model), context, { apiKey: KEY, ...options }));
  return { raw: r.requests[0]?.raw, url: r.requests[0]?.url, requests: r.requests.length, run };
}

const user = (content, timestamp = 1) => ({ role: "user", content, timestamp });

for (const api of APIS) {
  test(`issue 13 ${api}: a lone surrogate in the prompt and the system prompt is sent as JSON.stringify writes it`, P, async () => {
    const context = (text, system) => ({ systemPrompt: system, messages: [{ role: "system", content: system, timestamp: 0 }, user(text)] });
    // contextWindow small enough that est (P-6.2.7) decides max tokens: the surrogate must count as its 6 characters.
    const model = { contextWindow: 5000 };
    const got = await send(api, context(`cut ${LONE}`, `sys ${LONE}!`), { model });
    const control = await send(api, context(`cut ${SAME_LENGTH}`, `sys ${SAME_LENGTH}!`), { model });
    assert.equal(got.run.final.type, "done", got.run.final.error?.errorMessage);
    assert.ok(got.raw.includes(`cut \\ud83d`), got.raw);
    assert.equal(got.raw, control.raw.replaceAll(SAME_LENGTH, escaped(LONE)));
  });

  test(`issue 13 ${api}: details nested 100,000 levels, cyclic, BigInt, throwing toJSON, and unread getters are never touched`, P, async () => {
    let deep = {};
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const cyclic = {};
    cyclic.self = cyclic;
    let reads = 0;
    const spy = (o, key) => Object.defineProperty(o, key, { enumerable: true, get: () => (reads++, "x") });
    const conversation = (hostile) => {
      const call = { type: "toolCall", id: "call_1", name: "look", arguments: { q: "x" } };
      const assistant = { role: "assistant", content: [call], api, provider: providerModel(api, "").provider, model: providerModel(api, "").id, stopReason: "toolUse", usage: {}, timestamp: 2 };
      const result = { role: "toolResult", toolCallId: "call_1", toolName: "look", content: [{ type: "text", text: "seen" }], isError: false, timestamp: 3 };
      if (hostile) {
        result.details = { deep, cyclic, big: 10n, bad: { toJSON() { throw new Error("never call me"); } } };
        spy(result, "custom");
        spy(result.content[0], "extra");
        spy(call, "note");
        assistant.usage = { big: 1n };
      }
      return { messages: [user("look"), assistant, result] };
    };
    const got = await send(api, conversation(true));
    const control = await send(api, conversation(false));
    assert.equal(got.run.final.type, "done", got.run.final.error?.errorMessage);
    assert.equal(reads, 0);
    assert.equal(got.raw, control.raw);
    // The reference's provider sends this context too, without reading those fields either.
    const r = server.route();
    r.reply({ sse: wire[api].text("ok") });
    const reference = await import(`@earendil-works/pi-ai/api/${api}`);
    const theirs = await drain(reference.streamSimple(providerModel(api, r.baseUrl), conversation(true), { apiKey: KEY }));
    assert.equal(theirs.final.type, "done", theirs.final.error?.errorMessage);
    assert.equal(reads, 0);
  });

  test(`issue 13 ${api}: tool-call arguments are forwarded as they are (lone surrogates, 1,000 levels)`, P, async () => {
    let deep = { end: `tail ${LONE}` };
    for (let i = 0; i < 1000; i++) deep = { d: deep };
    const conversation = (args) => ({ messages: [
      user("go"),
      { role: "assistant", content: [{ type: "toolCall", id: "call_1", name: "look", arguments: args }], api, provider: "other", model: "other", stopReason: "toolUse", timestamp: 2 },
      { role: "toolResult", toolCallId: "call_1", toolName: "look", content: [{ type: "text", text: "done" }], isError: false, timestamp: 3 },
    ] });
    const got = await send(api, conversation(deep));
    assert.equal(got.run.final.type, "done", got.run.final.error?.errorMessage);
    const plain = JSON.parse(JSON.stringify(deep).replace(escaped(LONE), SAME_LENGTH));
    const control = await send(api, conversation(plain));
    // openai-* send the arguments as JSON text inside a string: the escape is escaped once more there.
    const inText = api.startsWith("openai");
    const sent = inText ? escaped(escaped(LONE)) : escaped(LONE);
    assert.ok(got.raw.includes(inText ? escaped(JSON.stringify(deep)) : JSON.stringify(deep)));
    assert.equal(got.raw, control.raw.replace(SAME_LENGTH, sent));
  });

  test(`issue 13 ${api}: unsendable arguments give an error naming the message and field; the next request works`, P, async () => {
    const cyclic = { a: 1 };
    cyclic.loop = cyclic;
    let deep = {};
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const cases = [[{ n: 10n }, "Do not know how to serialize a BigInt"], [cyclic, null], [10n, "Do not know how to serialize a BigInt"],
      // JSON.stringify's own limit (JS's stack), as the reference meets it when it writes the body.
      [deep, "Maximum call stack size exceeded"]];
    for (const [args, reason] of cases) {
      const context = { messages: [
        user("go"),
        { role: "assistant", content: [{ type: "text", text: "calling" }, { type: "toolCall", id: "c1", name: "f", arguments: args }], api, provider: "p", model: "m", stopReason: "toolUse", timestamp: 2 },
        { role: "toolResult", toolCallId: "c1", toolName: "f", content: [], isError: false, timestamp: 3 },
      ] };
      const bad = await send(api, context);
      assert.equal(bad.requests, 0);
      assert.deepEqual(bad.run.types, ["error"]);
      const message = bad.run.final.error.errorMessage;
      const prefix = "context.messages[1].content[1].arguments: ";
      if (reason) assert.equal(message, prefix + reason);
      else assert.ok(message.startsWith(`${prefix}Converting circular structure to JSON`), message);
      const good = await send(api, { messages: [user("again")] });
      assert.equal(good.run.final.type, "done");
      assert.equal(good.requests, 1);
    }
  });

  test(`issue 13 ${api}: a payload onPayload makes unsendable ends with JSON.stringify's error, nothing is sent`, P, async () => {
    const r = server.route();
    r.reply({ sse: wire[api].text("ok") });
    const run = await drain(streamBuiltin(providerModel(api, r.baseUrl), { messages: [user("go")] }, { apiKey: KEY, onPayload: (p) => ({ ...p, extra: 1n }) }));
    assert.deepEqual(run.types, ["error"]);
    assert.equal(run.final.error.errorMessage, "Do not know how to serialize a BigInt");
    assert.equal(r.requests.length, 0);
  });

  test(`issue 13 ${api}: an Agent prompted with a lone surrogate keeps the text exactly and keeps working`, P, async () => {
    const r = server.route();
    r.reply({ sse: wire[api].text("first") }, { sse: wire[api].text("second") });
    const agent = new lib.Agent({ initialState: { model: providerModel(api, r.baseUrl), systemPrompt: `be ${LONE}` }, getApiKey: () => KEY });
    await agent.prompt(`cut ${LONE}`);
    await agent.prompt("and again");
    assert.equal(agent.state.errorMessage, undefined);
    assert.equal(r.requests.length, 2);
    const texts = agent.state.messages.map((m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text).join("")));
    assert.deepEqual(texts, [`be ${LONE}`, `cut ${LONE}`, "first", "and again", "second"]);
    for (const request of r.requests) {
      assert.ok(request.raw.includes(`cut \\ud83d`), request.raw);
      assert.ok(request.raw.includes(`be \\ud83d`), request.raw);
    }
  });
}

// Provider text the other way: `\ud83d` escapes in the SSE data (JSON.parse keeps them) stay exact in the deltas, the
// partial and final message, the tool-call arguments (live and final) and an Agent's transcript.
for (const api of APIS) {
  test(`issue 13 ${api}: lone surrogate escapes from the provider are kept in events, message and arguments`, P, async () => {
    const text = `half ${LONE} and \udc00 end`;
    const thinking = `think ${LONE}`;
    const args = { q: `x${LONE}`, [`k\udfff`]: [`\ud800`] };
    const r = server.route();
    const sse = wire[api].reply({ text, thinking, calls: [{ id: "call_1", name: "look", args }] });
    assert.ok(sse.includes("\\ud83d"), "the wire carries the escape");
    r.reply({ sse });
    r.reply({ sse });
    const run = await drain(streamBuiltin(providerModel(api, r.baseUrl), { messages: [user("go")] }, { apiKey: KEY }));
    assert.equal(run.final.type, "done", run.final.error?.errorMessage);
    // The reference's own provider (pi-ai) on the same bytes keeps the same strings.
    const reference = await import(`@earendil-works/pi-ai/api/${api}`);
    const theirs = await drain(reference.streamSimple(providerModel(api, r.baseUrl), { messages: [user("go")] }, { apiKey: KEY }));
    const texts = (m) => m.content.map((b) => [b.type, b.text ?? b.thinking ?? b.arguments]);
    assert.deepEqual(texts(run.result), texts(theirs.result));
    const deltas = (type) => run.events.filter((e) => e.type === type).map((e) => e.delta).join("");
    assert.equal(deltas("text_delta"), text);
    assert.equal(deltas("thinking_delta"), thinking);
    const message = run.result;
    assert.equal(message.content.find((b) => b.type === "text").text, text);
    assert.equal(message.content.find((b) => b.type === "thinking").thinking, thinking);
    assert.equal(run.events.find((e) => e.type === "text_end").content, text);
    const call = message.content.find((b) => b.type === "toolCall");
    assert.deepEqual(call.arguments, args);
    assert.deepEqual(run.events.find((e) => e.type === "toolcall_end").toolCall.arguments, args);
    if (run.argsLive.length > 0) assert.deepEqual(run.argsLive.at(-1).args, args);
  });

  test(`issue 13 ${api}: an Agent's transcript keeps a provider's lone surrogate, and the next request sends it back`, P, async () => {
    const r = server.route();
    const reply = `cut ${LONE}`;
    r.reply({ sse: wire[api].text(reply) }, { sse: wire[api].text("ok") });
    const agent = new lib.Agent({ initialState: { model: providerModel(api, r.baseUrl) }, getApiKey: () => KEY });
    await agent.prompt("first");
    assert.equal(agent.state.messages.at(-1).content[0].text, reply);
    await agent.prompt("second");
    assert.equal(agent.state.errorMessage, undefined);
    assert.ok(r.requests[1].raw.includes("cut \\ud83d"), r.requests[1].raw);
  });
}

for (const api of APIS) {
  test(`issue 13 ${api}: tool schemas nested 200 levels, holding a lone surrogate or our marker's text are sent exactly`, P, async () => {
    const schema = (leaf) => {
      let s = { type: "string", description: leaf };
      for (let i = 0; i < 200; i++) s = { type: "object", properties: { d: s } };
      // Text that looks like one of our markers is the caller's text like any other.
      const marked = { type: "string", description: "\ufdd0s0.3\ufdd1", enum: ["\ufdd0v0.2\ufdd1"] };
      return { type: "object", properties: { deep: s, flat: { type: "string", description: `flat ${leaf}` }, marked } };
    };
    const context = (leaf) => ({ messages: [
      { role: "system", content: "Tools.", toolsAdded: [{ name: "look", description: `look ${leaf}`, parameters: schema(leaf) }], timestamp: 0 },
      user("go"),
    ] });
    const got = await send(api, context(LONE));
    assert.equal(got.run.final.type, "done", got.run.final.error?.errorMessage);
    const control = await send(api, context(SAME_LENGTH));
    assert.ok(got.raw.includes(JSON.stringify(schema(LONE).properties.deep)), "the deep schema as JSON.stringify writes it");
    for (const raw of [got.raw, control.raw]) assert.ok(raw.includes(JSON.stringify(schema(LONE).properties.marked)), raw);
    // In a shallow schema (which would otherwise go as JSON text) next to real markers too.
    const marked = { type: "object", properties: { m: schema(LONE).properties.marked } };
    const shallow = await send(api, { messages: [{ role: "system", content: "T", toolsAdded: [{ name: "m", description: "m", parameters: marked }], timestamp: 0 }, user(`go ${LONE}`)] });
    assert.equal(shallow.run.final.type, "done", shallow.run.final.error?.errorMessage);
    assert.ok(shallow.raw.includes(JSON.stringify(marked.properties)), shallow.raw);
    assert.equal(got.raw, control.raw.replaceAll(SAME_LENGTH, escaped(LONE)));
  });

  test(`issue 13 ${api}: a lone surrogate in model fields (sent or not) and in options.sessionId`, P, async () => {
    const model = (leaf) => ({ name: `name ${leaf}`, id: `id-${leaf}` });
    const got = await send(api, { messages: [user("go")] }, { model: model(LONE), options: { sessionId: `s-${LONE}` } });
    assert.equal(got.run.final.type, "done", got.run.final.error?.errorMessage);
    const control = await send(api, { messages: [user("go")] }, { model: model(SAME_LENGTH), options: { sessionId: `s-${SAME_LENGTH}` } });
    assert.equal(got.raw, control.raw.replaceAll(SAME_LENGTH, escaped(LONE)));
    if (api === "google-generative-ai") {
      // Google names the model in the URL, where fetch writes a lone surrogate as U+FFFD (percent-encoded).
      const path = (url) => url.replace(/^\/r\/[^/]+/, "");
      assert.equal(path(got.url), path(control.url).replace(SAME_LENGTH, "%EF%BF%BD"));
      assert.equal(path(got.url), "/models/id-%EF%BF%BD:streamGenerateContent?alt=sse");
    } else {
      assert.ok(got.raw.includes(`"id-\\ud83d"`), got.raw);
    }
  });
}

// A seeded fuzz of whole contexts: random texts with lone surrogates, marker-like characters, quotes and escapes;
// unread fields that are deep, cyclic, BigInt, throwing or spied on; sometimes unsendable arguments. Every case
// either sends each text and each argument object exactly as JSON.stringify writes it (the whole body equals a control
// request's with plain placeholders, each replaced by that value's JSON), or (unsendable arguments) ends with the error
// naming the first such field and sends nothing; no unread field is ever read.
const FUZZ_SEED = Number(process.env.FIDELITY_SEED ?? Date.now() % 1e9);
test(`issue 13 fuzz: random contexts are sent exactly or refused by field, unread fields untouched (seed ${FUZZ_SEED})`, { ...P, timeout: 60_000 }, async () => {
  let s = FUZZ_SEED >>> 0 || 1;
  const rand = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const PIECES = ["a", "é", "😀", "\ud83d", "\ude00", "\udfff\ud800", "\ufdd0", "\ufdd0s0.5\ufdd1", "\ufdd0v1.2\ufdd1", "\ufdef", "\ufdef\u{f0000}", '"', "\\", "\n", "\u0000", " "];
  const str = () => `t${Array.from({ length: Math.floor(rand() * 6) }, () => pick(PIECES)).join("")}`;
  let reads = 0;
  const deep = (n) => {
    let v = {};
    for (let i = 0; i < n; i++) v = { d: v };
    return v;
  };
  const hostile = () => {
    const cyclic = {};
    cyclic.self = cyclic;
    const spied = {};
    Object.defineProperty(spied, "x", { enumerable: true, get: () => { reads++; throw new Error("read"); } });
    return pick([deep(20_000), cyclic, 7n, { toJSON() { reads++; throw new Error("toJSON"); } }, spied]);
  };
  const args = () => pick([{ q: str(), n: [1, 2.5, null, true] }, { [str()]: { deep: deep(50), s: str() } }, {}]);
  const unsendable = () => pick([{ n: 1n }, (() => { const c = {}; c.c = c; return c; })()]);
  const fetchInto = (sent, api) => async (_url, init) => {
    sent.push(init.body);
    return new Response(wire[api].text("ok"), { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  for (let i = 0; i < 120; i++) {
    const api = APIS[i % APIS.length];
    const messages = [];
    // The control: the same context with each text and each argument object a plain placeholder (`PH<k>X`,
    // `{"p":"ARG<k>"}`) and no hostile unread field. Its body, each placeholder replaced by the value as
    // JSON.stringify writes it (argument objects once more as a string for the OpenAI formats), is the exact body.
    const control = [];
    const texts = [];
    const sentArgs = [];
    const text = () => {
      const t = str();
      texts.push(t);
      return [t, `PH${texts.length - 1}X`];
    };
    let refused;
    for (let turn = 0; turn < 1 + Math.floor(rand() * 3); turn++) {
      const [said, saidPlain] = text();
      if (rand() < 0.5) {
        messages.push(user(said, turn));
        control.push(user(saidPlain, turn));
      } else {
        messages.push({ role: "user", content: [{ type: "text", text: said }], timestamp: turn, extra: hostile() });
        control.push({ role: "user", content: [{ type: "text", text: saidPlain }], timestamp: turn });
      }
      const id = `call_${turn}`;
      const bad = rand() < 0.1;
      const a = bad ? unsendable() : args();
      if (bad && refused === undefined) refused = `context.messages[${messages.length}].content[1].arguments: `;
      if (!bad) sentArgs.push(a);
      const [answer, answerPlain] = text();
      const assistant = (t, args, hostileParts) => ({
        role: "assistant", content: [{ type: "text", text: t }, { type: "toolCall", id, name: "look", arguments: args, ...(hostileParts ? { note: hostile() } : {}) }],
        api: "other", provider: "other", model: "other", stopReason: "toolUse", usage: hostileParts ? hostile() : {}, timestamp: turn,
      });
      messages.push(assistant(answer, a, true));
      control.push(assistant(answerPlain, { p: `ARG${sentArgs.length - 1}` }, false));
      const [result, resultPlain] = text();
      const toolResult = (t, hostileParts) => ({
        role: "toolResult", toolCallId: id, toolName: "look", content: [{ type: "text", text: t }], isError: false,
        ...(hostileParts ? { details: hostile() } : {}), timestamp: turn,
      });
      messages.push(toolResult(result, true));
      control.push(toolResult(resultPlain, false));
    }
    const sent = [];
    const run = await drain(streamBuiltin(providerModel(api, "http://127.0.0.1:9"), { messages }, { apiKey: KEY, fetch: fetchInto(sent, api), maxRetries: 0 }));
    const where = `case ${i} (${api}, seed ${FUZZ_SEED})`;
    if (refused !== undefined) {
      assert.deepEqual(run.types, ["error"], where);
      assert.ok(run.final.error.errorMessage.startsWith(refused), `${where}: ${run.final.error.errorMessage}`);
      assert.equal(sent.length, 0, where);
      continue;
    }
    assert.equal(run.final.type, "done", `${where}: ${run.final.error?.errorMessage}`);
    assert.equal(sent.length, 1, where);
    const controlSent = [];
    const controlRun = await drain(streamBuiltin(providerModel(api, "http://127.0.0.1:9"), { messages: control }, { apiKey: KEY, fetch: fetchInto(controlSent, api), maxRetries: 0 }));
    assert.equal(controlRun.final.type, "done", `${where} control: ${controlRun.final.error?.errorMessage}`);
    const asString = (json) => (api.startsWith("openai") ? JSON.stringify(json).slice(1, -1) : json);
    let expected = controlSent[0];
    sentArgs.forEach((a, k) => {
      const placeholder = asString(JSON.stringify({ p: `ARG${k}` }));
      assert.equal(expected.split(placeholder).length, 2, `${where}: the control holds ${placeholder} once`);
      expected = expected.replace(placeholder, () => asString(JSON.stringify(a)));
    });
    texts.forEach((t, k) => {
      assert.ok(expected.includes(`PH${k}X`), `${where}: the control holds PH${k}X`);
      expected = expected.replaceAll(`PH${k}X`, () => escaped(t));
    });
    assert.equal(sent[0], expected, where);
  }
  assert.equal(reads, 0);
});

for (const api of APIS) {
  test(`issue 13 ${api}: an Agent whose tool returns deep, cyclic, BigInt or throwing-toJSON details keeps working`, P, async () => {
    const makers = {
      deep: () => {
        let d = {};
        for (let i = 0; i < 100_000; i++) d = { d };
        return d;
      },
      cyclic: () => {
        const c = {};
        c.c = c;
        return c;
      },
      bigint: () => ({ n: 1n }),
      toJSON: () => ({ toJSON() { throw new Error("never call me"); } }),
    };
    for (const [kind, make] of Object.entries(makers)) {
      const r = server.route();
      r.reply({ sse: wire[api].tools([{ id: "call_1", name: "look", args: { q: "x" } }]) }, { sse: wire[api].text("done") }, { sse: wire[api].text("again") });
      const details = make();
      const tool = { name: "look", label: "look", description: "Look", parameters: { type: "object", properties: { q: { type: "string" } } },
        execute: async () => ({ content: [{ type: "text", text: "seen" }], details }) };
      const agent = new lib.Agent({ initialState: { model: providerModel(api, r.baseUrl), tools: [tool] }, getApiKey: () => KEY });
      await agent.prompt("go");
      await agent.prompt("more");
      assert.equal(agent.state.errorMessage, undefined, kind);
      assert.equal(r.requests.length, 3, kind);
      const result = agent.state.messages.find((m) => m.role === "toolResult");
      assert.equal(result.isError, false, kind);
      assert.equal(result.details, details, `${kind}: the transcript holds the tool's own details`);
      assert.deepEqual(agent.state.messages.filter((m) => m.role === "assistant").map((m) => m.stopReason), ["toolUse", "stop", "stop"], kind);
    }
  });
}

// Issue 17: without an onPayload hook the body is written as text in Rust (`js_json_stringify_verbatim`) and the markers are put back into
// the text, with no JSON.parse and JSON.stringify of the whole body; onPayload: () => undefined takes the object path
// (the body as JS values, JSON.stringify when sent). Both must send the same bytes: array-index keys first (a
// sampling parameter "7" merged last into the body, schema properties "10" and "2"), numbers as JS writes them
// (1 not 1.0, 0.000001 not 1e-6, 1e+21, and a thousand random doubles), escapes, and every kind of marker (lone
// surrogates, the marker character in a caller's string, forwarded arguments inside a string and as a value).
const doubles = (() => {
  let seed = 0x2545f491;
  const view = new DataView(new ArrayBuffer(8));
  const out = [];
  while (out.length < 1000) {
    for (let i = 0; i < 8; i++) view.setUint8(i, (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
    const x = view.getFloat64(0);
    if (Number.isFinite(x)) out.push(x);
  }
  return out;
})();

for (const api of APIS) {
  test(`issue 17 ${api}: the body written as text is byte for byte what JSON.stringify writes of the body's objects`, P, async () => {
    const numbers = [1, 0.5, -0, 1e21, 1e-7, 0.000001, 0.0000012, 123456789012345680000, 2 ** 60, -2.5e-10, 5e-324, 1.7976931348623157e308, ...doubles];
    const schema = { type: "object", properties: { b: { type: "string", description: `q"${LONE}\uFDD0` }, 10: { type: "number", minimum: 0.000001 }, 2: { type: "integer", maximum: 1e21 } }, required: ["10"] };
    const { provider, id } = providerModel(api, "");
    const call = { type: "toolCall", id: "call_1", name: "look", arguments: { q: `x "y" \\ ${LONE} \uFDD0`, n: 1e21, 3: [0.1, -0] } };
    const context = {
      systemPrompt: `sys "${LONE}" \uFDD0s0.1\uFDD1`,
      messages: [
        { role: "system", content: `sys "${LONE}" \uFDD0s0.1\uFDD1`, toolsAdded: [{ name: "look", description: `d\t${LONE}`, parameters: schema }], timestamp: 0 },
        user(`a "quoted" \\ ${LONE} \uFDD0 and \u2028 \u0001 text`),
        { role: "assistant", content: [{ type: "text", text: `sure ${LONE}` }, call], api, provider, model: id, stopReason: "toolUse", usage: {}, timestamp: 2 },
        { role: "toolResult", toolCallId: "call_1", toolName: "look", content: [{ type: "text", text: `seen "${LONE}"` }], isError: false, timestamp: 3 },
        user("go on", 4),
      ],
    };
    const options = { temperature: 1, samplingParams: { top_p: 0.000001, 7: 1e21, numbers } };
    const text = await send(api, context, { options });
    const objects = await send(api, context, { options: { ...options, onPayload: () => undefined } });
    assert.equal(text.run.final.type, "done", text.run.final.error?.errorMessage);
    assert.equal(objects.run.final.type, "done", objects.run.final.error?.errorMessage);
    assert.equal(text.raw, objects.raw);
    // What the comparison covers is really in the body.
    assert.match(text.raw, /\{"7":1e\+21,/, "the sampling parameters' object starts with its array-index key");
    assert.match(text.raw, /"temperature":1[,}]/);
    assert.ok(text.raw.includes('"top_p":0.000001'), text.raw);
    assert.ok(text.raw.includes("\\ud83d") && text.raw.includes("\uFDD0"), text.raw);
  });
}
