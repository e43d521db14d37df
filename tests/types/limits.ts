// Usage totals and limits (issue 32): config.limits, the Agent's limits / totalLimits and state getters, the loop
// stream's totalUsage(), the totalUsage export and agent_end.limitReached type-check as documented.
import {
  Agent,
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  totalUsage,
  type AgentEvent,
  type AgentLimits,
  type AgentLoopConfig,
  type AgentLoopStream,
  type AgentSnapshot,
  type AgentTotalLimits,
  type LimitReached,
  type Usage,
  type UsageTotals,
} from "agent-loop-wasm";

declare const config: AgentLoopConfig;

const limits: AgentLimits = {
  maxTurns: 10,
  maxModelRequests: 12,
  maxTokens: 200_000,
  maxCostUsd: 0.5,
  maxDurationMs: 60_000,
  maxToolCalls: Infinity,
};
const stream: AgentLoopStream = agentLoop([], { messages: [] }, { ...config, limits });
async function loop(): Promise<void> {
  for await (const e of stream) {
    if (e.type === "agent_end" && e.limitReached) {
      const r: LimitReached = e.limitReached;
      const scope: "run" | "agent" = r.scope;
      const name: keyof AgentLimits = r.limit;
      console.log(scope, name, r.max, r.value, r.message.length);
    }
  }
  const totals: UsageTotals = await stream.totalUsage();
  const asUsage: Usage = totals; // totals are a Usage
  const cost: number = totals.cost.total + asUsage.totalTokens;
  const again = agentLoopContinue({ messages: [] }, config);
  const more: Promise<UsageTotals> = again.totalUsage();
  const messages = await runAgentLoop([], { messages: [] }, config, (_e: AgentEvent) => {});
  const sum: UsageTotals = totalUsage(messages);
  console.log(cost, more, sum.totalTokens);
}

const total: AgentTotalLimits = { maxCostUsd: 5, maxTokens: 1_000_000 };
const agent = new Agent({ limits: { maxTurns: 5 }, totalLimits: total });
agent.limits = { ...agent.limits, maxTurns: 10 };
agent.totalLimits = undefined;
const run: UsageTotals = agent.state.runUsage;
const life: UsageTotals = agent.state.totalUsage;
const reached: LimitReached | undefined = agent.state.limitReached;
const saved: AgentSnapshot = agent.snapshot();
const stored: UsageTotals | undefined = saved.usage;
console.log(run, life, reached, stored, loop);

// @ts-expect-error: a limit is a number
const bad: AgentLimits = { maxTurns: "5" };
// @ts-expect-error: totalLimits has no per-run fields
const badTotal: AgentTotalLimits = { maxTurns: 5 };
// @ts-expect-error: the agent's state is read-only here
agent.state.totalUsage = life;
console.log(bad, badTotal);
