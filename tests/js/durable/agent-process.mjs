// One process of a durable agent, for tests/js/durable.test.mjs: `fresh` runs a scripted prompt with checkpoints
// appended to a file (one JSON line each, written synchronously, as a database would commit them), and SIGKILLs
// itself at the chosen point; `resume` restores from that file and resumes. Prints the final transcript as JSON.
// Usage: node agent-process.mjs fresh|resume <store> <executions-log> [crash: seq:N | tool:<id> | none]
import { appendFileSync, readFileSync } from "node:fs";
import { Agent } from "../../../pkg/dist/node/index.mjs";
import { assistant, createFaux, model, okResult, sleep, toolCall } from "../faux.mjs";

const [mode, store, log, crash = "none"] = process.argv.slice(2);
const die = () => process.kill(process.pid, "SIGKILL");

// The model: three calls in parallel, one more call, then an answer; it only looks at the context.
const script = (context) => {
  const turns = context.messages.filter((m) => m.role === "assistant").length;
  if (turns === 0) return assistant([toolCall("a", "work", { n: 1 }), toolCall("b", "work", { n: 2 }), toolCall("c", "slow")]);
  if (turns === 1) return assistant([toolCall("d", "work", { n: 3 })]);
  return assistant(`done after ${context.messages.length} messages`);
};
const faux = createFaux(Array.from({ length: 20 }, () => script));

let agent;
const deep = (n) => (n === 0 ? { leaf: "\uDBFF end" } : { next: deep(n - 1) });
const tools = [
  {
    name: "work", label: "work", description: "work", parameters: { type: "object", properties: { n: { type: "number" } } },
    async execute(id, { n }) {
      appendFileSync(log, `${id}\n`);
      await sleep(2);
      return okResult(`work ${n}`, { details: { tree: deep(300) } });
    },
  },
  {
    name: "slow", label: "slow", description: "slow", parameters: { type: "object", properties: {} },
    async execute(id) {
      appendFileSync(log, `${id}\n`);
      const all = [...agent.state.messages, ...agent.peekQueuedMessages()];
      if (!all.some((m) => m.content === "steer \uD83D!")) agent.steer({ role: "user", content: "steer \uD83D!", timestamp: 1 });
      if (crash === `tool:${id}`) die();
      await sleep(20);
      return okResult("slow done");
    },
  },
];
const onCheckpoint = (checkpoint) => {
  appendFileSync(store, `${JSON.stringify(checkpoint)}\n`);
  if (crash === `seq:${checkpoint.seq}`) die();
};
const options = { streamFn: faux.streamFn, onCheckpoint, convertToLlm: (m) => m };

if (mode === "fresh") {
  agent = new Agent({ ...options, initialState: { model: model(), tools } });
  await agent.prompt("go \uD800");
} else {
  const lines = readFileSync(store, "utf8").split("\n").filter(Boolean);
  agent = Agent.restore(lines, { ...options, tools });
  await agent.resume();
}
process.stdout.write(JSON.stringify({ messages: agent.state.messages, queued: agent.hasQueuedMessages() }));
