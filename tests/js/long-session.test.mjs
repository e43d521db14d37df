// Issue 17, long sessions: the loop remembers how far it scanned the transcript for system messages
// instead of re-reading it every turn (src/js/snippets/declare.js `systemMessages`). These check that tool
// declarations (L-3.4) stay exactly what a full replay gives when the caller edits the transcript
// between turns: a system message edited in place, `state.messages` replaced or spliced, and a long
// transcript with a declaring system message in the middle. They run against the reference too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assistant, createFaux, userMessage } from "./faux.mjs";
import { T, deviation, makeAgent, replayedTools, roles, toolViews, decl } from "./agent-helpers.mjs";
import { tool } from "./faux.mjs";

/** An agent with `tools` that already ran two prompts (so a scan of its transcript is remembered), after `pad`
 *  prior user/assistant messages (a transcript this long is where the scan is remembered at all). */
async function warmAgent(tools, pad, replies = 6, initialState = {}) {
  const faux = createFaux(Array.from({ length: replies }, (_, i) => assistant(`reply ${i}`)));
  const history = Array.from({ length: pad }, (_, i) => (i % 2 ? assistant(`a${i}`) : userMessage(`q${i}`)));
  const agent = makeAgent(faux, { initialState: { tools, messages: history, ...initialState } });
  await agent.prompt("p1");
  await agent.prompt("p2");
  // p1 declared the tools; where that system message went is the reference's business (checked elsewhere).
  const at = agent.state.messages.findIndex((m) => m.role === "system");
  assert.ok(at >= 0);
  return { agent, faux, at };
}

// Each edit on a short transcript (scanned whole every turn) and after 300 prior messages (the remembered scan).
for (const pad of [0, 300]) {
  const after = pad ? ` (after ${pad} prior messages)` : "";

  test(`a system message's role edited in place: its declarations no longer count, the tool is declared again${after}`, T, async () => {
    const first = tool("first");
    const { agent, faux, at } = await warmAgent([first], pad);
    assert.deepEqual(faux.calls.map(toolViews), [["+first"], ["+first"]]);
    agent.state.messages[at].role = "custom";
    await agent.prompt("p3");
    assert.deepEqual(toolViews(faux.calls[2]), ["+first"]);
    const list = agent.state.messages;
    assert.deepEqual(roles([list[at], ...list.slice(-7)]), ["custom", "user", "assistant", "user", "assistant", "system", "user", "assistant"]);
    assert.deepEqual(list.at(-3).toolsAdded, [decl(first)]);
    await agent.prompt("p4");
    assert.equal(agent.state.messages.filter((m) => m.role === "system").length, 1, "nothing more to declare");
  });

  test(`a system message's toolsAdded edited in place is seen by the next request${after}`, T, async () => {
    const first = tool("first");
    const { agent, faux, at } = await warmAgent([first], pad);
    agent.state.messages[at].toolsAdded = [];
    await agent.prompt("p3");
    assert.deepEqual(toolViews(faux.calls[2]), ["+first"]);
    assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
    assert.equal(agent.state.messages.filter((m) => m.role === "system").length, 2);
  });

  test(`state.messages replaced by one of the same length ending in the same message: a full replay decides${after}`, T, async () => {
    const first = tool("first");
    const { agent, faux, at } = await warmAgent([first], pad);
    const before = agent.state.messages;
    const last = before[before.length - 1];
    // The message that declared `first` becomes a system message declaring nothing; everything else is the same.
    agent.state.messages = [...before.slice(0, at), { role: "system", content: "", timestamp: 0 }, ...before.slice(at + 1)];
    assert.equal(agent.state.messages[before.length - 1], last);
    await agent.prompt("p3");
    assert.deepEqual(toolViews(faux.calls[2]), ["+first"]);
    assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
  });

  test(`a system message inserted into the middle of the transcript (later messages shift) is replayed${after}`, T, async () => {
    const first = tool("first");
    const { agent, faux, at } = await warmAgent([first], pad);
    agent.state.messages.splice(at + 2, 0, { role: "system", content: "", timestamp: 3, toolsRemoved: [{ name: "first" }] });
    await agent.prompt("p3");
    assert.deepEqual(toolViews(faux.calls[2]), ["+first", "-first", "+first"]);
    assert.deepEqual(replayedTools(agent.state.messages), ["first"]);
  });
}

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

// L-3.4.1: a declared tool is the same as the executable one when their declarations' JSON texts are equal. The
// loop decides most of these without building the texts (src/js/snippets/declare.js `sameJson`); each case here is one
// where a structural comparison and the texts could disagree. `same` is what the texts say (the reference agrees).
const DECLARATION_CASES = [
  ["0 and -0", { a: 0 }, { a: -0 }, true],
  ["keys in another order", { a: 1, b: 2 }, { b: 2, a: 1 }, false],
  ["an undefined property and none", { a: undefined, b: 1 }, { b: 1 }, true],
  ["NaN and null", { n: NaN }, { n: null }, true],
  ["Infinity and -Infinity", { n: Infinity }, { n: -Infinity }, true],
  ["equal nested arrays", { e: [1, [2, "x"], true] }, { e: [1, [2, "x"], true] }, true],
  ["nested arrays differing deep inside", { e: [1, [2, "x"]] }, { e: [1, [2, "y"]] }, false],
  ["a hole and null", { e: [1, , 2] }, { e: [1, null, 2] }, true], // eslint-disable-line no-sparse-arrays
  ["a function property and none", { a: 1, f() {} }, { a: 1 }, true],
  ["an own toJSON", { x: 1, toJSON: () => ({ y: 1 }) }, { y: 1 }, true],
  ["a null-prototype object", Object.assign(Object.create(null), { a: 1 }), { a: 1 }, true],
  ["a Date and its ISO text", { d: new Date(0) }, { d: "1970-01-01T00:00:00.000Z" }, true],
  ["a Map and an empty object", { m: new Map([[1, 2]]) }, { m: {} }, true],
  ["a string and a number", { a: "1" }, { a: 1 }, false],
  ["true and 1", { a: true }, { a: 1 }, false],
  ["an empty array and an empty object", { a: [] }, { a: {} }, false],
  ["equal 60 levels deep", nest(60, "leaf"), nest(60, "leaf"), true],
  ["differing 60 levels deep", nest(60, "leaf"), nest(60, "other"), false],
  ["a differing value before a hole", { a: [1, , 2], b: "x" }, { a: [1, null, 2], b: "y" }, false], // eslint-disable-line no-sparse-arrays
];

function nest(depth, leaf) {
  let v = { leaf };
  for (let i = 0; i < depth; i++) v = { type: "object", properties: { inner: v } };
  return v;
}

for (const [name, declared, executable, same] of DECLARATION_CASES) {
  test(`L-3.4.1 declaration compared by its JSON text: ${name} → ${same ? "the same tool" : "declared again"}`, T, async () => {
    const head = { role: "system", content: "", timestamp: 1, toolsAdded: [{ name: "x", description: "x tool", parameters: declared }] };
    const faux = createFaux([assistant("done")]);
    const agent = makeAgent(faux, { initialState: { tools: [tool("x", undefined, { parameters: executable })], messages: [head] } });
    await agent.prompt("p");
    assert.deepEqual(toolViews(faux.calls[0]), same ? ["+x"] : ["+x", "+x", "-x"]);
  });
}
