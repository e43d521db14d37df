// Issue 45: compaction's option, entry and events as an app writes them.
import {
  agentLoop,
  Agent,
  type AgentRunEvent,
  type CompactionEvent,
  type CompactionOptions,
  type CompactionSummaryMessage,
  type AgentLoopConfig,
} from "agent-loop-wasm";
import type { Message, Model } from "@earendil-works/pi-ai";
import type { Equal, Expect } from "./assert.js";

declare const model: Model<"openai-completions">;
const convertToLlm = (messages: unknown[]): Message[] => messages as Message[];

const byShare: CompactionOptions = { trigger: { fraction: 0.75 }, keepRecentTokens: 2000 };
const byTokens: CompactionOptions = { trigger: { tokens: 6000 }, summarize: "drop" };
const mine: CompactionOptions = {
  summarize: async (messages, { model, signal, previousSummary, reason }) => {
    signal.throwIfAborted();
    return { summary: `${reason}: ${messages.length} messages of ${model.id} after ${previousSummary ?? "nothing"}`, usage: undefined };
  },
  instructions: "Keep every order id.",
};
const config: AgentLoopConfig = { model, convertToLlm, compaction: true };
const configs: AgentLoopConfig[] = [config, { ...config, compaction: byShare }, { ...config, compaction: byTokens }, { ...config, compaction: mine }];

export type Reasons = Expect<Equal<CompactionEvent["reason"], "threshold" | "overflow">>;
export type EntryRole = Expect<Equal<CompactionSummaryMessage["role"], "compactionSummary">>;

export async function main(): Promise<void> {
  for await (const event of agentLoop([], { messages: [] }, configs[0])) {
    const e = event as AgentRunEvent;
    if (e.type === "compaction_end" && e.message !== undefined) {
      const entry: CompactionSummaryMessage = e.message;
      console.log(entry.summary, entry.tokensBefore, entry.tokensAfter, entry.keptMessages);
    }
  }
  const agent = new Agent({ compaction: { trigger: { fraction: 0.8 } } });
  agent.compaction = true;
  agent.subscribe((event) => {
    if (event.type === "compaction_start") console.log(event.tokensBefore, event.messages);
  });
}
