// agent-loop-wasm/testing (issue 44): what the cassettes take and give. The tools keep their own type through
// cassette.tools, cassette.fetch fits the Agent's `fetch`, cassette.streamFn gives a stream function back.
import { Agent, agentLoop, type AgentTool, type StreamFnLike } from "agent-loop-wasm";
import {
  CASSETTE_VERSION,
  CassetteMismatchError,
  createCassette,
  loadCassette,
  type Cassette,
  type CassetteDocument,
  type CassetteInteraction,
} from "agent-loop-wasm/testing";
import type { Equal, Expect } from "./assert.js";

declare const weather: AgentTool<{ type: "object"; properties: { city: { type: "string" } } }, { celsius: number }>;
declare const streamFn: StreamFnLike;

async function usage(): Promise<void> {
  const cassette = await loadCassette("weather.cassette.json", { recordIfMissing: true, match: "content" });
  const tools = cassette.tools([weather]);
  type _tools = Expect<Equal<typeof tools, (typeof weather)[]>>;
  const agent = new Agent({ initialState: { tools }, fetch: cassette.fetch, streamFn: cassette.streamFn(streamFn) });
  await agent.prompt("hi");
  agentLoop([], { messages: [] }, { model: agent.state.model, convertToLlm: (m) => m as never, fetch: cassette.fetch });
  await cassette.stop();

  const doc: CassetteDocument = createCassette({ cassette: cassette.toJSON(), realtime: true, redact: ["x"] }).toJSON();
  const version: 1 = doc.version;
  type _version = Expect<Equal<typeof CASSETTE_VERSION, 1>>;
  const first: CassetteInteraction | undefined = doc.interactions[0];
  if (first?.type === "http") first.response?.chunks.map((c) => ("text" in c ? c.text : c.base64));
  const recorder: Cassette = createCassette({ mode: "record", fetch: globalThis.fetch });
  void recorder.save("out.json");
  void version;
  try {
    await recorder.stop();
  } catch (e) {
    if (e instanceof CassetteMismatchError) {
      const path: string = e.details.path;
      const retryable: false = e.retryable;
      void path, retryable;
    }
  }
  // @ts-expect-error a mode the cassette does not have
  createCassette({ mode: "play" });
}
void usage;
