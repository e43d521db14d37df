// The demo's default model (examples/offline-model.mjs) with the demo page's tools (www/tools.js): every suggestion
// chip of the page and every example prompt of the README gives a correct run (issue 15) — the tool calls the prompt
// asks for, no tool error, an answer built from the results, `agent_end` — and a prompt the script does not know
// gets a note, not an invented tool call. The Chromium e2e (tests/e2e/demo.e2e.mjs) types the same prompts into the page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";
import * as impl from "./impl.mjs";
import { OFFLINE_MODEL, OFFLINE_PROMPTS, offlineModel } from "../../examples/offline-model.mjs";
import { TOOLS } from "../../www/tools.js";

// www/tools.js is browser code (random_number uses crypto.getRandomValues); Node 18 has no global `crypto`.
globalThis.crypto ??= webcrypto;

const README_PROMPTS = ["list the files, then read the README", "Summarise the README", "Use the add tool to add 2 and 3."];

// prompt → the tool calls (name and arguments, in order) and what the answer must say.
const EXPECTED = new Map([
  ["List the files, then read the README", {
    calls: [["list_files", { path: "." }], ["read_file", { path: "README.md" }]],
    answer: [/`\.` holds 6 entries: `Cargo\.toml`, `README\.md`/, /`README\.md` \(\d+ characters\) starts with \*\*demo-project\*\*/],
  }],
  ["list the files, then read the README", {
    calls: [["list_files", { path: "." }], ["read_file", { path: "README.md" }]],
    answer: [/`\.` holds 6 entries/, /starts with \*\*demo-project\*\*/],
  }],
  ["What time is it? Also pick a random number between 1 and 6", {
    calls: [["get_time", {}], ["random_number", { min: 1, max: 6 }]],
    answer: [/- It is \*\*\w+day,? \d+ \w+ \d{4}/, /- I drew \*\*[1-6]\*\* \(from 1 to 6\)/],
  }],
  ["Calculate (17 + 25) * 3 / 2", { calls: [["calculate", { expression: "(17 + 25) * 3 / 2" }]], answer: [/= \*\*63\*\*/] }],
  ["Wait 4 seconds", { calls: [["wait", { ms: 4000 }]], answer: [/Waited 4000 ms: done after \d+ ms/] }],
  ["Run every tool at once", {
    calls: [["get_time", {}], ["calculate", { expression: "(17 + 25) * 3 / 2" }], ["random_number", { min: 1, max: 100 }],
      ["wait", { ms: 1500 }], ["list_files", { path: "." }], ["read_file", { path: "README.md" }]],
    answer: [/It is \*\*/, /= \*\*63\*\*/, /I drew \*\*\d+\*\*/, /Waited 1500 ms/, /holds 6 entries/, /starts with \*\*demo-project\*\*/],
  }],
  ["Summarise the README", { calls: [["read_file", { path: "README.md" }]], answer: [/starts with \*\*demo-project\*\*/] }],
  ["Use the add tool to add 2 and 3.", { calls: [["calculate", { expression: "2 + 3" }]], answer: [/`2 \+ 3` = \*\*5\*\*/] }],
]);

async function run(prompt) {
  const agent = new impl.Agent({
    initialState: { systemPrompt: "demo", model: { ...OFFLINE_MODEL }, thinkingLevel: "medium", tools: TOOLS },
    streamFn: offlineModel(impl, { chunkDelayMs: 0 }),
    toolExecution: "parallel",
  });
  const events = [];
  agent.subscribe((e) => { events.push(e); });
  await agent.prompt(prompt);
  return { events, messages: agent.state.messages };
}

test("issue 15: the page's suggestions are the prompts this test checks, and the README's prompts are among them", () => {
  for (const p of [...OFFLINE_PROMPTS, ...README_PROMPTS]) assert.ok(EXPECTED.has(p), `expectations for ${JSON.stringify(p)}`);
  assert.equal(OFFLINE_PROMPTS[0], "List the files, then read the README");
});

for (const [prompt, expected] of EXPECTED) {
  test(`issue 15: the offline model runs ${JSON.stringify(prompt)} correctly`, { timeout: 15_000 }, async () => {
    const { events, messages } = await run(prompt);
    assert.equal(events.at(-1).type, "agent_end");
    const calls = messages.filter((m) => m.role === "assistant").flatMap((m) => m.content.filter((c) => c.type === "toolCall"));
    assert.deepEqual(calls.map((c) => [c.name, c.arguments]), expected.calls);
    const results = messages.filter((m) => m.role === "toolResult");
    assert.deepEqual(results.map((r) => [r.toolName, r.isError]), expected.calls.map(([name]) => [name, false]));
    // All of one prompt's calls come in one response, so the loop runs them as one parallel batch.
    assert.equal(messages.filter((m) => m.role === "assistant").length, 2, "a response with the calls, then the answer");
    const last = messages.at(-1);
    assert.equal(last.role, "assistant");
    assert.equal(last.stopReason, "stop");
    const answer = last.content.filter((c) => c.type === "text").map((c) => c.text).join("");
    for (const re of expected.answer) assert.match(answer, re);
    assert.ok(!events.some((e) => e.type === "message_end" && e.message.errorMessage), "no error message");
  });
}

test("issue 15: a prompt the script does not know gets a note, not an invented tool call", async () => {
  for (const prompt of ["What is the capital of France?", "Hello!"]) {
    const { events, messages } = await run(prompt);
    assert.equal(events.at(-1).type, "agent_end");
    assert.deepEqual(messages.map((m) => m.role), ["system", "user", "assistant"].slice(messages[0].role === "system" ? 0 : 1));
    const text = messages.at(-1).content.filter((c) => c.type === "text").map((c) => c.text).join("");
    assert.match(text, /I'm the offline demo model: a script that runs in your browser, not a language model/);
    assert.match(text, /“list the files, then read the README”/);
  }
});

test("issue 30: \"delete <file>\" asks for delete_file, which waits for approval; approved it deletes, denied the file stays, and the answer says which", {
  timeout: 15_000,
  skip: impl.IS_REFERENCE && "tool approvals (issue 30) are not in pi-agent-core 1.6.0",
}, async () => {
  const { VIRTUAL_FILES } = await import("../../www/tools.js");
  const saved = { ...VIRTUAL_FILES };
  try {
    const agent = new impl.Agent({
      initialState: { systemPrompt: "demo", model: { ...OFFLINE_MODEL }, thinkingLevel: "medium", tools: TOOLS },
      streamFn: offlineModel(impl, { chunkDelayMs: 0 }),
      toolExecution: "parallel",
    });
    const answer = () => agent.state.messages.at(-1).content.filter((c) => c.type === "text").map((c) => c.text).join("");
    await agent.prompt("Delete notes.txt");
    assert.deepEqual(agent.state.pendingApprovals, [{ toolCallId: "call_1", toolName: "delete_file", args: { path: "notes.txt" } }]);
    assert.equal(typeof VIRTUAL_FILES["notes.txt"], "string", "nothing is deleted before the approval");
    await agent.approve("call_1");
    assert.equal(VIRTUAL_FILES["notes.txt"], undefined);
    assert.equal(answer(), "Here is what the tools returned:\n\n- Deleted `notes.txt`");

    await agent.prompt("Remove docs/design.md and README.md");
    assert.deepEqual(agent.state.pendingApprovals.map((r) => [r.toolCallId, r.args.path]), [["call_2", "docs/design.md"], ["call_3", "README.md"]]);
    await agent.deny("call_2", { reason: "keep the design" });
    await agent.deny("call_3");
    assert.equal(typeof VIRTUAL_FILES["docs/design.md"], "string");
    assert.equal(typeof VIRTUAL_FILES["README.md"], "string");
    assert.equal(answer(), "Here is what the tools returned:\n\n" +
      "- I did not delete `docs/design.md`: Tool call \"call_2\" was denied: keep the design\n" +
      "- I did not delete `README.md`: Tool call \"call_3\" was denied");
  } finally {
    for (const key of Object.keys(VIRTUAL_FILES)) delete VIRTUAL_FILES[key];
    Object.assign(VIRTUAL_FILES, saved);
  }
});
