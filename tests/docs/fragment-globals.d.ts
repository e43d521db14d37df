// The names a block marked `<!-- test: fragment -->` may use without defining them: the things every guide has made
// by the time it shows a fragment (an agent, its model and tools, a stream function, a prompt's messages). A fragment
// that needs anything else imports it, as a program would.
import type { Agent, AgentContext, AgentMessage, AgentTool, Model, StreamFn } from "agent-loop-wasm";

declare global {
  const agent: Agent;
  const model: Model<any>;
  const tools: AgentTool<any>[];
  const streamFn: StreamFn;
  const context: AgentContext;
  const messages: AgentMessage[];
}
export {};
