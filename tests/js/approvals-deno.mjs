// Run by tests/js/approvals.test.mjs with `deno run` (issue 30 under Deno): a paused Agent approved after a snapshot
// round trip, and a paused agentLoop continued with a denial. Prints one JSON line for the Node test to compare.
import { Agent, agentLoop, agentLoopContinue, createAssistantMessageEventStream } from "../../pkg/dist/deno/index.js";

const MODEL = { id: "faux", name: "faux", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** A stream function answering with the next of `replies` (each an array of content blocks). */
function scripted(replies) {
  return () => {
    const content = replies.shift() ?? [{ type: "text", text: "out of replies" }];
    const stopReason = content.some((b) => b.type === "toolCall") ? "toolUse" : "stop";
    const message = { role: "assistant", content, api: "faux", provider: "faux", model: "faux", usage, stopReason, timestamp: Date.now() };
    const stream = createAssistantMessageEventStream();
    queueMicrotask(() => {
      stream.push({ type: "start", partial: { ...message, content: [] } });
      stream.push({ type: "done", reason: stopReason, message });
      stream.end();
    });
    return stream;
  };
}

const call = (id, name, n) => ({ type: "toolCall", id, name, arguments: { n } });
function tools(ran) {
  const make = (name, extra = {}) => ({
    name, label: name, description: name,
    parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    async execute(id, { n }) { ran.push(id); return { content: [{ type: "text", text: `${name} ${n}` }], details: {} }; },
    ...extra,
  });
  return [make("work"), make("gate", { needsApproval: true })];
}
const resultTexts = (messages) => messages.filter((m) => m.role === "toolResult").map((m) => m.content[0].text);

// The Agent: pause, snapshot as JSON, restore, approve.
const ran = [];
const first = new Agent({ initialState: { model: MODEL, tools: tools(ran) }, streamFn: scripted([[call("a", "work", 1), call("b", "gate", 2), call("c", "work", 3)]]) });
await first.prompt("go");
const restored = Agent.restore(JSON.stringify(first.snapshot()), { streamFn: scripted([[{ type: "text", text: "done" }]]), tools: tools(ran) });
const pending = restored.state.pendingApprovals.map((r) => r.toolCallId);
await restored.approve("b");
const agent = { pending, ran, results: resultTexts(restored.state.messages), last: restored.state.messages.at(-1).content[0].text };

// The loop: pause, then agentLoopContinue with a denial.
const ranLoop = [];
const streamFn = scripted([[call("b", "gate", 2)], [{ type: "text", text: "ok" }]]);
const convertToLlm = (m) => m;
const stream = agentLoop([{ role: "user", content: "go", timestamp: 1 }], { messages: [], tools: tools(ranLoop) }, { model: MODEL, convertToLlm }, undefined, streamFn);
let pause;
for await (const e of stream) if (e.type === "agent_end") pause = e.approvals;
const messages = await stream.result();
const decided = { ...pause, decisions: [{ toolCallId: "b", approved: false, reason: "no" }] };
const more = agentLoopContinue({ messages, tools: tools(ranLoop) }, { model: MODEL, convertToLlm, approvals: decided }, undefined, streamFn);
for await (const _ of more);
const loop = { requests: pause.requests.map((r) => r.toolCallId), ran: ranLoop, results: resultTexts(await more.result()) };
console.log(JSON.stringify({ agent, loop }));
