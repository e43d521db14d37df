// Issue 13 on the built package, over real loopback HTTP: secrets and errors, network causes, strict wire parsing.
//  - API keys with CR, LF or NUL are refused before any request, naming the source and never showing the key; no
//    key (or credential header) text in any error, event, transcript or snapshot, also when a provider's error
//    body or a fetch TypeError echoes it.
//  - Deterministic failures (bad URL, invalid header, a redirect loop) are not retried; network errors still are.
//  - Network errors keep their cause as pi-ai 1.6.0 words it (`withCauseDetail`: the deepest cause and its code):
//    its google-generative-ai provider, which calls fetch directly as we do, gives exactly (each test runs it too)
//    `fetch failed: redirect count exceeded`, `fetch failed: other side closed (UND_ERR_SOCKET)` and
//    `terminated: other side closed (UND_ERR_SOCKET)` for these servers (its SDK providers say `Connection error.`
//    instead of `fetch failed`).
//  - Malformed tool-call items of every wire format end the run with one error naming the item and field; a server
//    that replays the item gets exactly one request (pi-ai runs a tool call `{id: "5|fc_1", name: 5}`).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { APIS, drain, event, providerModel, startProviderServer, wire } from "./provider-server.mjs";
import { P, clearKeyEnv, ctx, lib, streamBuiltin, withEnv } from "./providers-common.mjs";

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());

const ENV_VAR = {
  "openai-completions": "OPENAI_API_KEY",
  "openai-responses": "OPENAI_API_KEY",
  "anthropic-messages": "ANTHROPIC_API_KEY",
  "google-generative-ai": "GEMINI_API_KEY",
};
const refused = (source) =>
  `Invalid API key in ${source}: it contains a line break or NUL character (the request was not sent)`;

/** A fetch that counts its calls and forwards to the runtime's. */
function countingFetch() {
  const calls = [];
  const fetchFn = (url, init) => {
    calls.push(url);
    return fetch(url, init);
  };
  return { fetchFn, calls };
}

// ------------------------------------------------------------------------------------------------------------------
// Keys with CR / LF / NUL
// ------------------------------------------------------------------------------------------------------------------

for (const api of APIS) {
  test(`issue 13 ${api}: a key with CR, LF or NUL is refused before any request, the message names the source, not the key`, P, async () => {
    const r = server.route();
    r.repeat = true;
    r.reply({ sse: wire[api].text("never") });
    const model = providerModel(api, r.baseUrl);
    const variable = ENV_VAR[api];
    for (const bad of ["\n", "\r", "\0", "\r\n"]) {
      const key = `sk-secret${bad}injected: header`;
      const runs = [
        [{ apiKey: key }, "options.apiKey"],
        [{ env: { [variable]: key } }, `options.env.${variable}`],
      ];
      for (const [options, source] of runs) {
        const x = await drain(streamBuiltin(model, ctx(), { maxRetries: 2, ...options }));
        assert.deepEqual(x.types, ["error"], source);
        assert.equal(x.result.stopReason, "error");
        assert.equal(x.result.errorMessage, refused(source));
        assert.ok(!JSON.stringify(x).includes("sk-secret"), "no key text in any event");
      }
      if (bad === "\0") continue; // Node's process.env cuts a value at NUL
      const x = await withEnv({ [variable]: key }, () => drain(streamBuiltin(model, ctx(), {})));
      assert.equal(x.result.errorMessage, refused(`the environment variable ${variable}`));
    }
    assert.equal(r.requests.length, 0, "no request was sent, so none was retried");
    // A good key still works on the same route.
    const ok = await drain(streamBuiltin(model, ctx(), { apiKey: "sk-good-key" }));
    assert.equal(ok.result.stopReason, "stop");
    assert.equal(r.requests.length, 1);
  });
}

test("issue 13: an Agent with a bad key keeps no key text in its transcript, events or snapshot, and the next prompt works", P, async () => {
  const api = "anthropic-messages";
  const r = server.route();
  r.reply({ sse: wire[api].text("fine") });
  let key = "sk-ant-secret\nX-Evil: 1";
  const agent = new lib.Agent({ initialState: { model: providerModel(api, r.baseUrl) }, getApiKey: () => key });
  const events = [];
  agent.subscribe((e) => events.push(e));
  await agent.prompt("hi");
  const last = agent.state.messages.at(-1);
  assert.equal(last.stopReason, "error");
  assert.equal(last.errorMessage, refused("options.apiKey"));
  assert.equal(events.at(-1).type, "agent_end");
  for (const text of [JSON.stringify(agent.state.messages), JSON.stringify(events), JSON.stringify(agent.snapshot())]) {
    assert.ok(!text.includes("sk-ant-secret"), text.slice(0, 200));
  }
  assert.equal(r.requests.length, 0);
  key = "sk-ant-good";
  await agent.prompt("again");
  assert.equal(agent.state.messages.at(-1).content[0].text, "fine");
  assert.equal(r.requests[0].headers["x-api-key"], "sk-ant-good");
});

// ------------------------------------------------------------------------------------------------------------------
// Keys echoed back
// ------------------------------------------------------------------------------------------------------------------

test("issue 13: a key a provider echoes in its error body or stream error is redacted", P, async () => {
  const key = "sk-proj-0123456789abcdef";
  for (const api of APIS) {
    const r = server.route();
    r.reply({ status: 401, body: { error: { message: `Incorrect API key provided: ${key}. See your dashboard.` } } });
    const x = await drain(streamBuiltin(providerModel(api, r.baseUrl), ctx(), { apiKey: key }));
    assert.equal(x.result.errorMessage, "HTTP 401: Incorrect API key provided: [redacted]. See your dashboard.", api);
    assert.equal(r.requests.length, 1, `${api}: a 401 is not retried`);
    assert.ok(!JSON.stringify(x).includes(key));
  }
  // In the stream, after `start` (Anthropic error event).
  const r = server.route();
  r.reply({ sse: event("error", { type: "error", error: { type: "authentication_error", message: `bad key ${key}` } }) });
  const x = await drain(streamBuiltin(providerModel("anthropic-messages", r.baseUrl), ctx(), { apiKey: key }));
  assert.deepEqual(x.types, ["start", "error"]);
  assert.equal(x.result.errorMessage, "bad key [redacted]");
});

test("issue 13: credential headers given by the caller are redacted from fetch's TypeError, which is not retried", P, async () => {
  const r = server.route();
  r.repeat = true;
  r.reply({ sse: wire["openai-completions"].text("never") });
  const { fetchFn, calls } = countingFetch();
  const x = await drain(streamBuiltin(providerModel("openai-completions", r.baseUrl), ctx(), {
    fetch: fetchFn,
    maxRetries: 2,
    headers: { Authorization: "Bearer sk-header-secret\nX-Evil: 1" },
  }));
  assert.deepEqual(x.types, ["error"]);
  // Node's text is `Headers.append: "<value>" is an invalid header value.`; the value is gone.
  assert.equal(x.result.errorMessage, 'Headers.append: "[redacted]" is an invalid header value.');
  assert.equal(calls.length, 1, "an invalid header is not retried");
  assert.equal(r.requests.length, 0);
  assert.ok(!JSON.stringify(x).includes("sk-header-secret"));
});

// ------------------------------------------------------------------------------------------------------------------
// Deterministic errors are not retried; network errors are, and keep their cause
// ------------------------------------------------------------------------------------------------------------------

test("issue 13: a bad URL fails once with the cause (no retries)", P, async () => {
  const { fetchFn, calls } = countingFetch();
  const x = await drain(streamBuiltin(providerModel("anthropic-messages", "http://127.0.0.1:99999"), ctx(), { apiKey: "k", fetch: fetchFn, maxRetries: 2 }));
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "Failed to parse URL from http://127.0.0.1:99999/v1/messages: Invalid URL (ERR_INVALID_URL)");
  assert.equal(calls.length, 1);
});

/** The error message of pi-ai 1.6.0's own google-generative-ai provider (it calls fetch directly, as ours does). */
async function piAiGoogleError(baseUrl) {
  const { streamSimple } = await import("@earendil-works/pi-ai/api/google-generative-ai");
  return (await drain(streamSimple(providerModel("google-generative-ai", baseUrl), ctx(), { apiKey: "k" }))).result?.errorMessage;
}

test("issue 13: a socket closed before the headers is retried and reported as `fetch failed: other side closed (UND_ERR_SOCKET)`", P, async () => {
  const r = server.route();
  r.reply({ dropBeforeHeaders: true }, { dropBeforeHeaders: true });
  const x = await drain(streamBuiltin(providerModel("openai-responses", r.baseUrl), ctx(), { apiKey: "k", maxRetries: 1 }));
  assert.deepEqual(x.types, ["error"]);
  assert.equal(x.result.errorMessage, "fetch failed: other side closed (UND_ERR_SOCKET)");
  const theirs = server.route();
  theirs.reply({ dropBeforeHeaders: true });
  assert.equal(await piAiGoogleError(theirs.baseUrl), x.result.errorMessage, "pi-ai's wording");
  assert.equal(r.requests.length, 2, "a network error is still retried");
});

for (const api of APIS) {
  test(`issue 13 ${api}: a socket destroyed mid-body → \`terminated: other side closed (UND_ERR_SOCKET)\`, partial kept`, P, async () => {
    const r = server.route();
    const sse = wire[api].text("A long enough answer that the server cuts off halfway through its body.");
    r.reply({ sse, dropAfter: Math.floor(sse.length / 2) }, { sse: wire[api].text("retry") });
    const x = await drain(streamBuiltin(providerModel(api, r.baseUrl), ctx(), { apiKey: "k" }));
    assert.equal(x.types[0], "start");
    assert.equal(x.final.type, "error");
    assert.equal(x.result.errorMessage, "terminated: other side closed (UND_ERR_SOCKET)");
    assert.equal(r.requests.length, 1);
    const theirs = server.route();
    const same = wire["google-generative-ai"].text("A long enough answer that the server cuts off halfway through its body.");
    theirs.reply({ sse: same, dropAfter: Math.floor(same.length / 2) });
    assert.equal(await piAiGoogleError(theirs.baseUrl), x.result.errorMessage, "pi-ai's wording");
  });
}

test("issue 13: a redirect loop → `fetch failed: redirect count exceeded`, not retried (one fetch, 21 requests)", P, async () => {
  let hits = 0;
  const loop = createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(307, { location: req.url });
    res.end();
  });
  await new Promise((resolve) => loop.listen(0, "127.0.0.1", resolve));
  try {
    const { fetchFn, calls } = countingFetch();
    const base = `http://127.0.0.1:${loop.address().port}`;
    const x = await drain(streamBuiltin(providerModel("google-generative-ai", base), ctx(), { apiKey: "k", fetch: fetchFn, maxRetries: 2 }));
    assert.deepEqual(x.types, ["error"]);
    assert.equal(x.result.errorMessage, "fetch failed: redirect count exceeded");
    assert.equal(calls.length, 1);
    assert.equal(hits, 21, "undici follows 20 redirects, then gives up; no second round");
    assert.equal(await piAiGoogleError(base), x.result.errorMessage, "pi-ai's wording");
  } finally {
    loop.closeAllConnections();
    await new Promise((resolve) => loop.close(resolve));
  }
});

test("issue 13: a caller's fetch that throws its own Error is still retried (it may be transient)", P, async () => {
  let n = 0;
  const fetchFn = () => {
    n++;
    throw new Error(`attempt ${n}`);
  };
  const x = await drain(streamBuiltin(providerModel("openai-completions", "http://127.0.0.1:9"), ctx(), { fetch: fetchFn, maxRetries: 1, maxRetryDelayMs: 0 }));
  assert.equal(x.result.errorMessage, "attempt 2");
  assert.equal(n, 2);
});

// ------------------------------------------------------------------------------------------------------------------
// Strict wire parsing: a replaying server gets one request
// ------------------------------------------------------------------------------------------------------------------

const MALFORMED = {
  "openai-responses": {
    sse:
      event("response.created", { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } }) +
      event("response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { type: "function_call", id: "fc_1", call_id: 5, name: {}, arguments: "" } }) +
      event("response.output_item.done", { type: "response.output_item.done", output_index: 0, item: { type: "function_call", id: "fc_1", call_id: 5, name: {}, arguments: "{}" } }) +
      event("response.completed", { type: "response.completed", response: { id: "resp_1", status: "completed", output: [] } }),
    message: 'Malformed openai-responses stream: function_call item (output_index 0): "call_id" must be a non-empty string, got a number',
  },
  "openai-completions": {
    sse:
      `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { tool_calls: [{ index: "0", id: "call_1", function: { name: "echo", arguments: "{}" } }] } }] })}\n\n` +
      `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })}\n\ndata: [DONE]\n\n`,
    message: 'Malformed openai-completions stream: choices[0].delta.tool_calls[0]: "index" must be an integer ≥ 0, got a string',
  },
  "anthropic-messages": {
    sse:
      event("message_start", { type: "message_start", message: { id: "m", model: "claude-test", usage: { input_tokens: 1, output_tokens: 1 } } }) +
      event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: 7, name: "echo", input: {} } }) +
      event("content_block_stop", { type: "content_block_stop", index: 0 }) +
      event("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } }) +
      event("message_stop", { type: "message_stop" }),
    message: 'Malformed anthropic-messages stream: content_block_start (index 0) content_block: "id" must be a non-empty string, got a number',
  },
  "google-generative-ai": {
    sse: `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "echo", args: "{\"text\":1}" } }] }, finishReason: "STOP" }] })}\n\n`,
    message: 'Malformed google-generative-ai stream: candidates[0].content.parts[0].functionCall: "args" must be an object, got a string',
  },
};

for (const api of APIS) {
  test(`issue 13 ${api}: a malformed tool call ends the run with an error naming item and field; a replaying server gets one request`, P, async () => {
    const r = server.route();
    r.repeat = true;
    r.reply({ sse: MALFORMED[api].sse });
    let executed = 0;
    const echo = {
      name: "echo",
      label: "echo",
      description: "echoes",
      parameters: { type: "object", properties: {} },
      execute: async () => {
        executed++;
        return { content: [{ type: "text", text: "ran" }], details: {} };
      },
    };
    const agent = new lib.Agent({ initialState: { model: providerModel(api, r.baseUrl), tools: [echo] }, getApiKey: () => "k" });
    const types = [];
    agent.subscribe((e) => types.push(e.type));
    await agent.prompt("go");
    const last = agent.state.messages.at(-1);
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "error");
    assert.equal(last.errorMessage, MALFORMED[api].message);
    assert.ok(!last.content.some((b) => b.type === "toolCall" && (typeof b.id !== "string" || typeof b.name !== "string" || b.name === "")), "no call with invented fields");
    assert.equal(types.at(-1), "agent_end");
    assert.equal(executed, 0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(r.requests.length, 1, "no request loop");
  });
}
