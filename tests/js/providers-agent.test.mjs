// Full agent runs through each built-in provider (SPEC D7, API-1.3.2, §6): `agentLoop` with NO stream function and
// no default, against the loopback server — two tools in parallel, then a final answer; request 2 must carry the tool
// results in the provider's format. Plus provider failures and aborts inside a run, and the Agent class.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { APIS, drain, providerModel, startProviderServer, wire } from "./provider-server.mjs";
import { runScenarios, label } from "./provider-scenarios.mjs";
import { checkPlan, scriptPlan } from "./provider-plan.mjs";
import { P, clearKeyEnv, lib, streamBuiltin } from "./providers-common.mjs";

clearKeyEnv();
const server = await startProviderServer();
after(() => server.close());

const KEY = "sk-agent";
const convertToLlm = (messages) => messages;

test("D7/API-1.3.2 no default stream function is set, so getDefaultStreamFn() is streamBuiltin", P, () => {
  assert.equal(lib.getDefaultStreamFn(), streamBuiltin);
});

for (const api of APIS) {
  test(`D7 ${api}: agentLoop without streamFn — text reply, then two parallel tools and an answer (request 2 carries the results)`, P, async () => {
    const { plan, routes } = scriptPlan(server, `node-${api}`, [api]);
    const results = await runScenarios(lib, plan);
    checkPlan("node", plan, routes, results);
  });
}

for (const api of APIS) {
  test(`D1/§6 ${api}: an HTTP error inside a run ends it with an error assistant message (no hang, no throw)`, P, async () => {
    const r = server.route();
    r.reply({ status: 401, body: { error: { message: "invalid api key" } } });
    const stream = lib.agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, { model: providerModel(api, r.baseUrl), convertToLlm, apiKey: KEY });
    const labels = [];
    for await (const e of stream) if (e.type !== "message_update") labels.push(label(e));
    const result = await stream.result();
    assert.deepEqual(labels, ["agent_start", "turn_start", "message_start:user", "message_end:user", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]);
    const last = result.at(-1);
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "error");
    assert.equal(last.errorMessage, "HTTP 401: invalid api key");
    assert.equal(r.requests.length, 1);
  });
}

test("D2/P-6.1.5 aborting a run mid-stream: the assistant keeps its partial text, stopReason aborted, connection closed", P, async () => {
  const api = "openai-responses";
  const r = server.route();
  const sse = wire[api].text("This answer is long and the user aborts it halfway through the stream.");
  r.reply({ sse, stallAfter: Math.floor(sse.length / 2) });
  const controller = new AbortController();
  let deltas = 0;
  const stream = lib.agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, { model: providerModel(api, r.baseUrl), convertToLlm, apiKey: KEY }, controller.signal);
  for await (const e of stream) {
    if (e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta" && ++deltas === 2) controller.abort();
  }
  const result = await stream.result();
  const last = result.at(-1);
  assert.equal(last.stopReason, "aborted");
  assert.equal(last.errorMessage, "Request was aborted");
  assert.ok(last.content[0].text.length > 0);
  assert.equal(await r.requests[0].closed, true);
});

test("D7 the config's stream options reach the built-in provider (apiKey, getApiKey, headers, maxTokens, onPayload)", P, async () => {
  const api = "anthropic-messages";
  const r = server.route();
  r.reply({ sse: wire[api].text("ok") });
  const payloads = [];
  const stream = lib.agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, {
    model: providerModel(api, r.baseUrl),
    convertToLlm,
    getApiKey: (provider) => (provider === "anthropic" ? "from-getApiKey" : undefined),
    apiKey: "from-config",
    headers: { "x-run": "1" },
    maxTokens: 321,
    onPayload: (p) => void payloads.push(p.max_tokens),
  });
  for await (const _ of stream);
  const result = await stream.result();
  assert.equal(result.at(-1).stopReason, "stop");
  const q = r.requests[0];
  assert.equal(q.headers["x-api-key"], "from-getApiKey");
  assert.equal(q.headers["x-run"], "1");
  assert.equal(q.body.max_tokens, 321);
  assert.deepEqual(payloads, [321]);
});

test("D7 Agent without streamFn uses the built-in provider for prompt() and a tool round trip", P, async () => {
  const api = "google-generative-ai";
  const r = server.route();
  r.reply(
    { sse: wire[api].reply({ calls: [{ id: "g1", name: "echo", args: { text: "ping" } }] }) },
    { sse: wire[api].text("pong received") },
  );
  const echo = {
    name: "echo",
    label: "echo",
    description: "echoes",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: async (id, args) => ({ content: [{ type: "text", text: `echo:${args.text}` }], details: {} }),
  };
  const agent = new lib.Agent({ initialState: { model: providerModel(api, r.baseUrl), tools: [echo] }, getApiKey: () => KEY });
  await agent.prompt("Echo ping");
  const roles = agent.state.messages.map((m) => m.role);
  assert.deepEqual(roles.slice(-4), ["user", "assistant", "toolResult", "assistant"]);
  assert.equal(agent.state.messages.at(-1).content[0].text, "pong received");
  assert.equal(r.requests.length, 2);
  assert.deepEqual(r.requests[1].body.contents.at(-1), { role: "user", parts: [{ functionResponse: { name: "echo", response: { output: "echo:ping" } } }] });
});

test("§6 streamBuiltin is also usable as an explicit streamFn (same result as the default)", P, async () => {
  const api = "openai-completions";
  const r = server.route();
  r.reply({ sse: wire[api].text("explicit") });
  const stream = lib.agentLoop([{ role: "user", content: "hi", timestamp: 1 }], { messages: [] }, { model: providerModel(api, r.baseUrl), convertToLlm }, undefined, streamBuiltin);
  for await (const _ of stream);
  const result = await stream.result();
  assert.equal(result.at(-1).content[0].text, "explicit");
  assert.equal(r.requests[0].headers.authorization, undefined, "no key anywhere → no Authorization");
  // sanity: the stream itself completes with drain too
  const r2 = server.route();
  r2.reply({ sse: wire[api].text("again") });
  assert.equal((await drain(streamBuiltin(providerModel(api, r2.baseUrl), { messages: [] }))).result.stopReason, "stop");
});
