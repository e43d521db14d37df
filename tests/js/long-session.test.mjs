// Issue 17, long sessions: the loop remembers how far it scanned the transcript for system messages
// instead of re-reading it every turn (src/js/helpers.js `systemMessages`). These check that tool
// declarations (L-3.4) stay exactly what a full replay gives when the caller edits the transcript
// between turns: a system message edited in place, `state.messages` replaced or spliced, and a long
// transcript with a declaring system message in the middle. They run against the reference too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assistant, createFaux, userMessage } from "./faux.mjs";
import { T, deviation, makeAgent, replayedTools, roles, toolViews, decl } from "./agent-helpers.mjs";
import { tool } from "./faux.mjs";

/** An agent with `tools` that already ran two prompts (so a scan of its transcript is remembered). */
async function warmAgent(tools, replies = 6, initialState = {}) {
  const faux = createFaux(Array.from({ length: replies }, (_, i) => assistant(`reply ${i}`)));
  const agent = makeAgent(faux, { initialState: { tools, ...initialState } });
  await agent.prompt("p1");
  await agent.prompt("p2");
  return { agent, faux };
}

test("a system message's role edited in place: its declarations no longer count, the tool is declared again", T, async () => {
  const first = tool("first");
  const { agent, faux } = await warmAgent([first]);
  assert.deepEqual(faux.calls.map(toolViews), [["+first"], ["+first"]]);
  agent.state.messages[0].role = "custom";
  await agent.prompt("p3");
  assert.deepEqual(toolViews(faux.calls[2]), ["+first"]);
  assert.deepEqual(roles(agent.state.messages), ["custom", "user", "assistant", "user", "assistant", "system", "user", "assistant"]);
  assert.deepEqual(agent.state.messages[5].toolsAdded, [decl(first)]);
  await agent.prompt("p4");
  assert.equal(agent.state.messages.filter((m) => m.role === "system").length, 1, "nothing more to declare");
});

test("a system message's toolsAdded edited in place is seen by the next request", T, async () => {
  const first = tool("first");
  const { agent, faux } = await warmAgent([first]);
  agent.state.messages[0].toolsAdded = [];
  await agent.prompt("p3");
  assert.deepEqual(toolViews(faux.calls[2]), ["+first"]);
  assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
  assert.equal(agent.state.messages.filter((m) => m.role === "system").length, 2);
});

test("state.messages replaced by one of the same length ending in the same message: a full replay decides", T, async () => {
  const first = tool("first");
  const { agent, faux } = await warmAgent([first]);
  const before = agent.state.messages;
  const last = before[before.length - 1];
  // The head that declared `first` becomes a system message declaring nothing; everything after it is the same.
  agent.state.messages = [{ role: "system", content: "", timestamp: 0 }, ...before.slice(1)];
  assert.equal(agent.state.messages[before.length - 1], last);
  await agent.prompt("p3");
  assert.deepEqual(toolViews(faux.calls[2]), ["+first"]);
  assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
});

test("a long transcript: a middle system message's declaration is replayed, and splicing out the head re-declares", T, async () => {
  const first = tool("first");
  const second = tool("second");
  const history = [];
  for (let i = 0; i < 300; i++) {
    history.push(i % 2 ? assistant(`answer ${i}`) : userMessage(`question ${i}`));
    if (i === 150) history.push({ role: "system", content: "", timestamp: 5, toolsAdded: [decl(second)] });
  }
  const head = { role: "system", content: "", timestamp: 1, toolsAdded: [decl(first)] };
  const faux = createFaux(Array.from({ length: 5 }, (_, i) => assistant(`reply ${i}`)));
  const agent = makeAgent(faux, { initialState: { tools: [first], messages: [head, ...history] } });
  await agent.prompt("p1");
  // second is declared by the transcript but not executable: removed before the first request.
  assert.deepEqual(toolViews(faux.calls[0]), ["+first", "+second", "-second"]);
  await agent.prompt("p2");
  assert.deepEqual(toolViews(faux.calls[1]), ["+first", "+second", "-second"], "nothing new declared");
  agent.state.messages.splice(0, 1);
  await agent.prompt("p3");
  assert.deepEqual(toolViews(faux.calls[2]), ["+second", "-second", "+first"]);
  assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
  assert.equal(agent.state.messages.length, 301 + 2 + 6, "301 kept, 2 declaring system messages, 3 turns");
});

test("a system message inserted into the middle of the transcript (later messages shift) is replayed", T, async () => {
  const first = tool("first");
  const { agent, faux } = await warmAgent([first]);
  agent.state.messages.splice(2, 0, { role: "system", content: "", timestamp: 3, toolsRemoved: [{ name: "first" }] });
  await agent.prompt("p3");
  assert.deepEqual(toolViews(faux.calls[2]), ["+first", "-first", "+first"]);
  assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
});

test("E-8.1 over a long transcript: the first entry that is not a message is named by its index", deviation("the reference does not check state.messages"), async () => {
  const faux = createFaux([assistant("never")]);
  const history = Array.from({ length: 300 }, (_, i) => (i % 2 ? assistant(`a${i}`) : userMessage(`q${i}`)));
  const agent = makeAgent(faux, { initialState: { messages: history } });
  const check = async (bad, expected) => {
    agent.state.messages.splice(250, 1, bad);
    await assert.rejects(agent.prompt("p"), (e) => e instanceof TypeError && e.message === expected);
  };
  await check(null, "Agent.prompt: state.messages[250] must be an object");
  await check([{ role: "user" }], "Agent.prompt: state.messages[250] must be an object");
  await check({ role: 7, content: "" }, "Agent.prompt: state.messages[250].role must be a string");
  const thrown = new Error("role getter");
  agent.state.messages.splice(250, 1, { get role() { throw thrown; } });
  await assert.rejects(agent.prompt("p"), (e) => e === thrown);
  await assert.rejects(agent.continue(), (e) => e === thrown);
  assert.equal(faux.calls.length, 0);
  agent.state.messages.splice(250, 1, Object.assign(() => {}, { role: "user", content: "a function with a role is a message" }));
  await agent.prompt("p");
  assert.equal(faux.calls.length, 1);
});

test("the default convertToLlm skips entries that are not messages and roles that throw", deviation("the reference's filter throws on null"), async () => {
  const agent = makeAgent(createFaux([]));
  const u = userMessage("u");
  const s = { role: "system", content: "", timestamp: 0 };
  const hostile = { get role() { throw new Error("no"); } };
  assert.deepEqual(await agent.convertToLlm([null, 3, u, hostile, { role: "custom" }, s, [u]]), [u, s]);
  const list = [u, s];
  const all = await agent.convertToLlm(list);
  assert.deepEqual(all, list);
  assert.notEqual(all, list, "a new array");
  let reads = 0;
  const counted = { get role() { reads++; throw new Error("no"); } };
  assert.deepEqual(await agent.convertToLlm([u, counted, s, { role: "custom" }, u]), [u, s, u]);
  assert.equal(reads, 1, "each role is read once");
  assert.deepEqual(await agent.convertToLlm("not an array"), []);
  assert.deepEqual(await agent.convertToLlm(undefined), []);
  assert.equal(agent.convertToLlm, makeAgent(createFaux([])).convertToLlm, "one default function for every agent");
});
