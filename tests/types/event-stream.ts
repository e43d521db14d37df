// This library's stream classes (API-1.5) and stream-function shapes (API-1.6.4), including pi-ai interop.
import {
  AssistantMessageEventStream,
  EventStream,
  agentLoop,
  createAssistantMessageEventStream,
  setDefaultStreamFn,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  type AssistantMessageEvent,
  type AssistantMessageEventSource,
  type Message,
  type StreamFn,
  type StreamFnLike,
} from "agent-loop-wasm";
import * as piAi from "@earendil-works/pi-ai";
import { AssistantMessageEventStream as PiAiAssistantMessageEventStream } from "@earendil-works/pi-ai/utils/event-stream";
import type { Equal, Expect } from "./assert.js";

// A generic stream.
const numbers = new EventStream<number, string>((n) => n < 0, (n) => `ended at ${n}`);
numbers.push(1);
numbers.end("early");
export const numbersResult: Promise<string> = numbers.result();
export type PushTakesEvents = Expect<Equal<Parameters<typeof numbers.push>, [event: number]>>;

// A scripted stream function on this library's classes.
function reply(text: string): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "faux",
    provider: "faux",
    model: "faux-1",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

export const scripted: StreamFn = (_model, context) => {
  const stream = createAssistantMessageEventStream();
  const message = reply(`seen ${context.messages.length}`);
  stream.push({ type: "start", partial: message });
  stream.push({ type: "text_start", contentIndex: 0, partial: message });
  stream.push({ type: "text_delta", contentIndex: 0, delta: "seen", partial: message });
  stream.push({ type: "text_end", contentIndex: 0, content: "seen", partial: message });
  stream.push({ type: "done", reason: "stop", message });
  return stream;
};

// Subclassing, as pi-ai users do.
class TracingStream extends AssistantMessageEventStream {
  readonly seen: string[] = [];
  override push(event: AssistantMessageEvent): void {
    this.seen.push(event.type);
    super.push(event);
  }
}
export const tracing: StreamFn = async () => {
  const stream = new TracingStream();
  stream.end(reply("bye"));
  return stream;
};

// StreamFnLike: any async iterable of events, with or without result().
export const generator: StreamFnLike = async function* (model) {
  const message = reply(model.id);
  yield { type: "start", partial: message } as const;
  yield { type: "done", reason: "stop", message } as const;
};
const source: AssistantMessageEventSource = { [Symbol.asyncIterator]: () => createAssistantMessageEventStream()[Symbol.asyncIterator]() };
export const fromSource: StreamFnLike = () => source;
export const streamFnIsLike: StreamFnLike = scripted;
// @ts-expect-error a StreamFnLike is not necessarily a StreamFn
export const likeIsNotStreamFn: StreamFn = generator;
// @ts-expect-error a stream function must return a stream
export const notAStream: StreamFn = () => 42;

// pi-ai's streams are accepted as this library's (no private members here, API-1.5.3).
export const fromPiAi: AssistantMessageEventStream = piAi.createAssistantMessageEventStream();
export const piAiEventStream: EventStream<AssistantMessageEvent, AssistantMessage> = new PiAiAssistantMessageEventStream();
export const piAiGeneric: EventStream<number, string> = new piAi.EventStream<number, string>((n) => n > 1, String);
export const piAiStreamFn: StreamFn = () => piAi.createAssistantMessageEventStream();

export async function main(): Promise<void> {
  setDefaultStreamFn(generator);
  const stream: EventStream<AgentEvent, AgentMessage[]> = agentLoop(
    [{ role: "user", content: "hi", timestamp: Date.now() }],
    { messages: [] },
    { model: { id: "m", name: "m", api: "faux", provider: "faux", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 0 }, convertToLlm: (m) => m.filter((x): x is Message => x.role === "user" || x.role === "assistant") },
  );
  const iterator: AsyncIterator<AgentEvent> = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (!first.done) console.log(first.value.type);
  for await (const event of stream) console.log(event.type);
  const messages: AgentMessage[] = await stream.result();
  console.log(messages.length);
}
