// Helpers of concurrent-runs.test.mjs, kept apart so that its child process can load them without node:test.
export const TOOLS = 3;
export const TURNS = 2;

const zeroUsage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** A stream function (over `createStream`) whose replies are TURNS turns of TOOLS tool calls each, then a text answer. */
export function scriptedReplies(createStream, run) {
  let turn = 0;
  return (m) => {
    const t = turn++;
    const stream = createStream();
    setImmediate(() => {
      const content =
        t < TURNS
          ? Array.from({ length: TOOLS }, (_, i) => ({ type: "toolCall", id: `r${run}_t${t}_c${i}`, name: `tool${i}`, arguments: { run, turn: t, i } }))
          : [{ type: "text", text: `run ${run} done` }];
      const message = { role: "assistant", content, api: m.api, provider: m.provider, model: m.id, usage: zeroUsage(), stopReason: t < TURNS ? "toolUse" : "stop", timestamp: 0 };
      stream.push({ type: "start", partial: message });
      stream.push({ type: "done", reason: message.stopReason, message });
      stream.end(message);
    });
    return stream;
  };
}

/** Tools that report two partial results, each naming the run, turn and call, across macrotasks. */
export const updatingTools = Array.from({ length: TOOLS }, (_, i) => ({
  name: `tool${i}`,
  label: `tool${i}`,
  description: `tool ${i}`,
  parameters: { type: "object", properties: { run: { type: "number" }, turn: { type: "number" }, i: { type: "number" } } },
  async execute(id, args, _signal, onUpdate) {
    for (const n of [1, 2]) {
      await new Promise((r) => setImmediate(r));
      onUpdate({ content: [{ type: "text", text: `${id} update ${n}` }], details: { ...args, n } });
    }
    return { content: [{ type: "text", text: `${id} ok` }], details: args };
  },
}));

