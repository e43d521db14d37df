// A reference program (issue 14.1): `streamProxy` as an Agent's stream function, its options and proxy events.
import {
  Agent,
  streamProxy,
  type AgentMessage,
  type ProxyAssistantMessageEvent,
  type ProxyStreamOptions,
} from "agent-loop-wasm";
import type { Model } from "@earendil-works/pi-ai";

declare const model: Model<"openai-completions">;
declare function getAuthToken(): Promise<string>;

const agent = new Agent({
  initialState: { model },
  streamFn: async (m, context, options) =>
    streamProxy(m, context, { ...options, authToken: await getAuthToken(), proxyUrl: "https://genai.example.com" }),
});

const options: ProxyStreamOptions = { proxyUrl: "http://127.0.0.1:1", authToken: "t", temperature: 0, maxTokens: 10 };
declare const context: Parameters<typeof streamProxy>[1];
const stream = streamProxy(model, context, options);
void (async () => {
  for await (const event of stream) if (event.type === "text_delta") event.delta.toUpperCase();
  const message = await stream.result();
  message.stopReason satisfies string;
})();

const done: ProxyAssistantMessageEvent = {
  type: "done",
  reason: "stop",
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
};
// @ts-expect-error: "error" is not a reason of done
const wrong: ProxyAssistantMessageEvent = { ...done, reason: "error" };
void wrong;
// @ts-expect-error: proxyUrl is required
const missing: ProxyStreamOptions = { authToken: "t" };
void missing;
void agent;
export type { AgentMessage };
