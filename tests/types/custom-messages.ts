// A reference program: custom message roles added by declaration merging, filtered or mapped by convertToLlm.
import { agentLoop, Agent, type AgentMessage, type AgentLoopConfig, type StreamFn } from "agent-loop-wasm";
import type { Message, Model } from "@earendil-works/pi-ai";
import type { Equal, Expect } from "./assert.js";

interface NotificationMessage {
  role: "notification";
  text: string;
  level: "info" | "warn";
  timestamp: number;
}

interface ArtifactMessage {
  role: "artifact";
  title: string;
  body: string;
  timestamp: number;
}

declare module "agent-loop-wasm" {
  interface CustomAgentMessages {
    notification: NotificationMessage;
    artifact: ArtifactMessage;
  }
}

declare const streamFn: StreamFn;
declare const model: Model<"openai-responses">;

type Roles = AgentMessage["role"];
export type RolesIncludeCustom = Expect<
  Equal<Roles, "system" | "user" | "assistant" | "toolResult" | "notification" | "artifact">
>;

function toLlm(messages: AgentMessage[]): Message[] {
  return messages.flatMap((m): Message[] => {
    switch (m.role) {
      case "notification":
        return [];
      case "artifact":
        return [{ role: "user", content: `<artifact title="${m.title}">${m.body}</artifact>`, timestamp: m.timestamp }];
      default:
        return [m];
    }
  });
}

const config: AgentLoopConfig = { model, convertToLlm: toLlm };

export async function main(): Promise<void> {
  const note: AgentMessage = { role: "notification", text: "build started", level: "info", timestamp: Date.now() };
  const stream = agentLoop(
    [note, { role: "user", content: "go", timestamp: Date.now() }],
    { messages: [] },
    config,
    undefined,
    streamFn,
  );
  for await (const event of stream) {
    if (event.type === "message_end" && event.message.role === "notification") console.log(event.message.level);
  }

  const agent = new Agent({ streamFn, convertToLlm: toLlm });
  agent.followUp({ role: "artifact", title: "t", body: "b", timestamp: 1 });
  agent.state.messages.push(note);
  const artifacts = agent.state.messages.filter((m): m is ArtifactMessage => m.role === "artifact");
  console.log(artifacts.length);
}
