// Node side of the cross-runtime provider scenarios (provider-scenarios.mjs): scripts the loopback server for a plan
// (per API: a text reply; an agent run calling two tools in parallel, then an answer) and checks the summaries a
// runtime returns, plus what the server received, exactly.
import assert from "node:assert/strict";
import { APIS, PATH, providerModel, wire } from "./provider-server.mjs";
import { SYSTEM_PROMPT, TOOL_PROMPT } from "./provider-scenarios.mjs";

export const PLAN_KEY = "sk-plan-test";
export const HELLO = "Hello from the loopback server, wörld 🌍!";
export const CALLING = "Calling both tools.";
export const ANSWER = "Both tools answered: slow:a, fast:b.";
export const CALLS = [
  { id: "call_slow", name: "slow", args: { text: "a" } },
  { id: "call_fast", name: "fast", args: { text: "b" } },
];

/** The tool-call ids the loop sees (Responses: "<call_id>|<item id>"). */
export const callIds = (api) => (api === "openai-responses" ? ["call_slow|fc_1", "call_fast|fc_2"] : ["call_slow", "call_fast"]);

/**
 * Creates the routes of a plan on `server` (names `<prefix>-text-<api>`, `<prefix>-tools-<api>`) and scripts them.
 * Returns { plan (JSON-serialisable), routes: { [name]: route } }.
 */
export function scriptPlan(server, prefix, apis = APIS, kinds = ["text", "tools"]) {
  const plan = [];
  const routes = {};
  for (const api of apis) {
    for (const kind of kinds) {
      const route = server.route(`${prefix}-${kind}-${api}`);
      if (kind === "text") route.reply({ sse: wire[api].text(HELLO) });
      else route.reply({ sse: wire[api].reply({ text: CALLING, calls: CALLS }) }, { sse: wire[api].text(ANSWER) });
      routes[route.name] = route;
      plan.push({ name: route.name, api, kind, model: providerModel(api, route.baseUrl), apiKey: PLAN_KEY });
    }
  }
  return { plan, routes };
}

export function expectedLabels(api) {
  const [slow, fast] = callIds(api);
  return [
    "agent_start", "turn_start",
    "message_start:system", "message_end:system", // the tool declaration (§3.4)
    "message_start:user", "message_end:user",
    "message_start:assistant", "message_end:assistant",
    `tool_execution_start:${slow}`, `tool_execution_start:${fast}`,
    `tool_execution_end:${fast}`, `tool_execution_end:${slow}`, // parallel: the fast one ends first
    "message_start:toolResult", "message_end:toolResult",
    "message_start:toolResult", "message_end:toolResult",
    "turn_end", "turn_start",
    "message_start:assistant", "message_end:assistant",
    "turn_end", "agent_end",
  ];
}

const TOOL_DECLS = [
  { name: "slow", description: "waits 40 ms and echoes its text", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
  { name: "fast", description: "waits 5 ms and echoes its text", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
];

/** The conversation part of request 2 (after the tool batch) in each provider's format. */
export function secondRequestConversation(api) {
  const args = CALLS.map((c) => JSON.stringify(c.args));
  switch (api) {
    case "openai-completions":
      return [
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: TOOL_PROMPT },
        {
          role: "assistant",
          content: CALLING,
          tool_calls: CALLS.map((c, i) => ({ id: c.id, type: "function", function: { name: c.name, arguments: args[i] } })),
        },
        { role: "tool", tool_call_id: "call_slow", content: "slow:a" },
        { role: "tool", tool_call_id: "call_fast", content: "fast:b" },
      ];
    case "openai-responses":
      return [
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: [{ type: "input_text", text: TOOL_PROMPT }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: CALLING, annotations: [] }], status: "completed", id: "msg_1" },
        { type: "function_call", call_id: "call_slow", name: "slow", arguments: args[0], id: "fc_1" },
        { type: "function_call", call_id: "call_fast", name: "fast", arguments: args[1], id: "fc_2" },
        { type: "function_call_output", call_id: "call_slow", output: "slow:a" },
        { type: "function_call_output", call_id: "call_fast", output: "fast:b" },
      ];
    case "anthropic-messages":
      return [
        { role: "user", content: [{ type: "text", text: TOOL_PROMPT }] },
        {
          role: "assistant",
          content: [{ type: "text", text: CALLING }, ...CALLS.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args }))],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_slow", content: "slow:a", is_error: false },
            { type: "tool_result", tool_use_id: "call_fast", content: "fast:b", is_error: false, cache_control: { type: "ephemeral" } },
          ],
        },
      ];
    case "google-generative-ai":
      return [
        { role: "user", parts: [{ text: TOOL_PROMPT }] },
        { role: "model", parts: [{ text: CALLING }, ...CALLS.map((c) => ({ functionCall: { name: c.name, args: c.args } }))] },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "slow", response: { output: "slow:a" } } },
            { functionResponse: { name: "fast", response: { output: "fast:b" } } },
          ],
        },
      ];
  }
}

/** What a request body declares as tools, in the provider's format. */
function declaredTools(api, body) {
  switch (api) {
    case "openai-completions":
      return body.tools.map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters }));
    case "openai-responses":
      return body.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    case "anthropic-messages":
      return body.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema }));
    case "google-generative-ai":
      return body.tools[0].functionDeclarations.map((t) => ({ name: t.name, description: t.description, parameters: t.parametersJsonSchema }));
  }
}

const conversation = (api, body) =>
  api === "openai-responses" ? body.input : api === "google-generative-ai" ? body.contents : body.messages;

/** Checks one runtime's summaries and what the server received for the plan. `runtime` names it in messages. */
export function checkPlan(runtime, plan, routes, results) {
  for (const step of plan) {
    const got = results[step.name];
    const where = `${runtime} ${step.name}`;
    assert.ok(got, `${where}: no result`);
    assert.equal(got.thrown, undefined, `${where} threw: ${got.thrown}`);
    const { api } = step;
    const requests = routes[step.name].requests;
    for (const q of requests) {
      assert.equal(q.method, "POST", where);
      assert.equal(q.path, PATH[api], where);
    }
    if (step.kind === "text") {
      assert.equal(requests.length, 1, where);
      assert.deepEqual(got.types, ["start", "text_start", ...Array(Math.ceil(Array.from(HELLO).length / 5)).fill("text_delta"), "text_end", "done"], where);
      assert.equal(got.samePartial, true, `${where}: every event shares one message object`);
      assert.deepEqual(got.message.content.map((b) => [b.type, b.text]), [["text", HELLO]], where);
      assert.equal(got.message.stopReason, "stop", where);
      assert.equal(got.message.api, api);
      assert.equal(got.message.usage.totalTokens, 120, where);
    } else {
      assert.deepEqual(got.labels, expectedLabels(api), where);
      assert.ok(got.updates >= 4, `${where}: ${got.updates} message_update events`);
      assert.deepEqual(got.roles, ["system", "user", "assistant", "toolResult", "toolResult", "assistant"], where);
      const ids = callIds(api);
      assert.deepEqual(got.assistants, [
        {
          content: [
            got.assistants[0].content[0], // the text block (Responses adds a textSignature)
            ...CALLS.map((c, i) => ({ type: "toolCall", id: ids[i], name: c.name, arguments: c.args })),
          ],
          stopReason: "toolUse",
        },
        { content: [got.assistants[1].content[0]], stopReason: "stop" },
      ], where);
      assert.deepEqual([got.assistants[0].content[0].text, got.assistants[1].content[0].text], [CALLING, ANSWER], where);
      assert.deepEqual(got.toolResults, [[ids[0], "slow", "slow:a", false], [ids[1], "fast", "fast:b", false]], where);
      assert.equal(requests.length, 2, where);
      for (const q of requests) assert.deepEqual(declaredTools(api, q.body), TOOL_DECLS, `${where}: tools declared`);
      assert.deepEqual(conversation(api, requests[1].body), secondRequestConversation(api), `${where}: request 2`);
      // request 1 is the head of request 2
      const first = conversation(api, requests[0].body);
      const expectedFirst = secondRequestConversation(api).slice(0, api === "anthropic-messages" || api === "google-generative-ai" ? 1 : 2);
      if (api === "anthropic-messages") expectedFirst[0] = { role: "user", content: [{ type: "text", text: TOOL_PROMPT, cache_control: { type: "ephemeral" } }] };
      assert.deepEqual(first, expectedFirst, `${where}: request 1`);
      if (api === "anthropic-messages") assert.deepEqual(requests[1].body.system, [{ type: "text", text: SYSTEM_PROMPT, cache_control: { type: "ephemeral" } }]);
      if (api === "google-generative-ai") assert.deepEqual(requests[1].body.systemInstruction, { parts: [{ text: SYSTEM_PROMPT }] });
    }
  }
}
