// API-1.1.1: `tool()` gives a tool written inside it its contextual type. The same object literal assigned to a
// variable first widens `type: "text"` to string and no longer fits AgentTool (the failure the docs test met).
import { Agent, tool, type AgentTool } from "agent-loop-wasm";
import { num, obj } from "@earendil-works/pi-schema";
import type { Equal, Expect } from "./assert.js";

const weather = tool({
  name: "get_weather",
  label: "Weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: async (_id, { city }) => ({ content: [{ type: "text", text: `Sunny in ${city}` }], details: {} }),
});
new Agent({ initialState: { tools: [weather] } });

const widened = {
  name: "get_weather",
  label: "Weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: {} },
  execute: async () => ({ content: [{ type: "text", text: "Sunny" }], details: {} }),
};
// @ts-expect-error a bare literal's `type: string` is not `"text"`: what tool() is for
const notATool: AgentTool = widened;

// With a schema that records its value type, execute's arguments are that type.
const addSchema = obj({ a: num(), b: num() });
const add = tool({
  name: "add",
  label: "Add",
  description: "Adds two numbers",
  parameters: addSchema,
  execute: async (_id, args) => {
    type _ = Expect<Equal<typeof args, { a: number; b: number }>>;
    return { content: [{ type: "text", text: String(args.a + args.b) }], details: { sum: args.a + args.b } };
  },
});
export type Results = [Expect<Equal<typeof add, AgentTool<typeof addSchema, { sum: number }>>>];
export { notATool };
