// One process of a durable agent replaying a cassette, for tests/js/testing-cassette.test.mjs (issue 44): `fresh` runs
// the recorded prompt from the cassette (in order) with checkpoints appended to a file and SIGKILLs itself at the
// chosen checkpoint; `resume` restores from that file and resumes with the same cassette matched by content (the
// requests made before the crash are not made again). Prints the final transcript as JSON.
// Usage: node cassette-process.mjs fresh|resume <store> <cassette.json> <model.json> [crash: seq:N | none]
import { appendFileSync, readFileSync } from "node:fs";
import { Agent } from "../../../pkg/dist/node/index.mjs";
import { createCassette } from "../../../pkg/dist/node/testing.mjs";

const [mode, store, cassetteFile, modelFile, crash = "none"] = process.argv.slice(2);
const model = JSON.parse(readFileSync(modelFile, "utf8"));
const cassette = createCassette({ cassette: readFileSync(cassetteFile, "utf8"), match: mode === "fresh" ? "order" : "content" });
const weather = {
  name: "get_weather", label: "Weather", description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  async execute() {
    throw new Error("a replayed tool must not run");
  },
};
const tools = cassette.tools([weather]);
const onCheckpoint = (checkpoint) => {
  appendFileSync(store, `${JSON.stringify(checkpoint)}\n`);
  if (crash === `seq:${checkpoint.seq}`) process.kill(process.pid, "SIGKILL");
};
const options = { onCheckpoint, fetch: cassette.fetch, apiKey: "sk-replay" };

let agent;
if (mode === "fresh") {
  agent = new Agent({ ...options, initialState: { systemPrompt: "You are terse.", model, tools } });
  await agent.prompt("Weather in Oslo and Bergen?");
  await cassette.stop();
} else {
  const lines = readFileSync(store, "utf8").split("\n").filter(Boolean);
  agent = Agent.restore(lines, { ...options, tools });
  await agent.resume();
}
process.stdout.write(JSON.stringify({ messages: agent.state.messages }));
