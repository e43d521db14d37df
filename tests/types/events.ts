// Reconnecting readers (issue 31): agent.events() and its items type-check as documented.
import { Agent, type AgentEventItem, type AgentEventsOptions, type AgentSyncEvent } from "agent-loop-wasm";

declare const agent: Agent;

async function follow(after: number | undefined, signal: AbortSignal): Promise<number> {
  const options: AgentEventsOptions = { after, signal, untilIdle: true, highWaterMark: 100 };
  let last = 0;
  for await (const item of agent.events(options)) {
    const seq: number = item.seq;
    last = seq;
    if (item.event.type === "agent_sync") {
      const sync: AgentSyncEvent = item.event;
      const count: number = sync.messages.length + sync.pendingToolCalls.length;
      void count;
    } else if (item.event.type === "message_update") {
      void item.event.message;
    }
    const replayed: boolean = item.replay === true || item.behind === true;
    void replayed;
  }
  return last;
}

const items: AsyncIterableIterator<AgentEventItem> = agent.events();
void items;
void follow;
// @ts-expect-error after is a number
agent.events({ after: "7" });
