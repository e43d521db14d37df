// One process of an agent whose tool calls wait for approval (issue 30), for tests/js/approvals.test.mjs. With an
// empty store it prompts; otherwise it restores from the store (one checkpoint per JSON line, written synchronously)
// and resumes. Then it decides every waiting call as the person would (b approved with edited args, any other call
// denied), until none waits. SIGKILLs itself when the checkpoint `seq:N` is stored. Prints the final transcript.
// Usage: node approval-process.mjs <store> <executions-log> [crash: seq:N | none]
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { Agent } from "../../../pkg/dist/node/index.mjs";
import { assistant, createFaux, model, okResult, sleep, toolCall } from "../faux.mjs";

const [store, log, crash = "none"] = process.argv.slice(2);

const script = (context) => {
  const turns = context.messages.filter((m) => m.role === "assistant").length;
  if (turns === 0) return assistant([toolCall("a", "work", { n: 1 }), toolCall("b", "gate", { n: 2 }), toolCall("c", "work", { n: 3 })]);
  if (turns === 1) return assistant([toolCall("d", "gate", { n: 4 })]);
  return assistant(`done after ${context.messages.length} messages`);
};
const faux = createFaux(Array.from({ length: 20 }, () => script));
const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
const make = (name, extra = {}) => ({
  name, label: name, description: name, parameters: schema,
  async execute(id, { n }) {
    appendFileSync(log, `${id}\n`);
    await sleep(2);
    return okResult(`${name} ${n}`);
  },
  ...extra,
});
const tools = [make("work"), make("gate", { needsApproval: true })];
const onCheckpoint = (checkpoint) => {
  appendFileSync(store, `${JSON.stringify(checkpoint)}\n`);
  if (crash === `seq:${checkpoint.seq}`) process.kill(process.pid, "SIGKILL");
};
const options = { streamFn: faux.streamFn, onCheckpoint, convertToLlm: (m) => m };

const lines = existsSync(store) ? readFileSync(store, "utf8").split("\n").filter(Boolean) : [];
let agent;
if (lines.length === 0) {
  agent = new Agent({ ...options, initialState: { model: model(), tools } });
  await agent.prompt("go");
} else {
  agent = Agent.restore(lines, { ...options, tools });
  await agent.resume();
}
for (let round = 0; round < 5 && agent.state.pendingApprovals.length > 0; round++) {
  for (const { toolCallId } of agent.state.pendingApprovals) {
    if (toolCallId === "b") await agent.approve("b", { args: { n: 20 } });
    else await agent.deny(toolCallId, { reason: "no" });
  }
}
process.stdout.write(JSON.stringify({ messages: agent.state.messages, pending: agent.state.pendingApprovals }));
