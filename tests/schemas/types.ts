// `npx tsc -p tests/schemas`: `tool()` infers what `execute` receives from a zod, a Valibot (through
// toStandardJsonSchema) and an ArkType schema, with the real packages' own types; an Agent takes the tools.
import { z } from "zod";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import { Agent, tool, type AgentToolResult } from "agent-loop-wasm";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expect = <T extends true>() => {};
const ok = (text: string): AgentToolResult<{}> => ({ content: [{ type: "text", text }], details: {} });

const withZod = tool({
  name: "zod_weather",
  label: "zod",
  description: "Weather",
  parameters: z.object({ city: z.string(), days: z.number().int().default(1) }),
  execute: async (_id, args) => {
    // The schema's output: the default makes `days` a number.
    expect<Equal<typeof args, { city: string; days: number }>>();
    return ok(`${args.city} ${args.days.toFixed(0)}`);
  },
});

const withValibot = tool({
  name: "valibot_weather",
  label: "valibot",
  description: "Weather",
  parameters: toStandardJsonSchema(v.object({ city: v.string(), days: v.optional(v.number()) })),
  execute: async (_id, args) => {
    expect<Equal<typeof args, { city: string; days?: number | undefined }>>();
    return ok(args.city);
  },
});

const withArkType = tool({
  name: "arktype_weather",
  label: "arktype",
  description: "Weather",
  parameters: type({ city: "string", "days?": "number" }),
  execute: async (_id, args) => {
    expect<Equal<typeof args, { city: string; days?: number }>>();
    return ok(args.city);
  },
});

// @ts-expect-error: `city` is a string, so `execute` cannot read it as a number.
tool({ name: "wrong", label: "w", description: "w", parameters: z.object({ city: z.string() }), execute: async (_id, args: { city: number }) => ok(String(args.city)) });

export const agent = new Agent({ initialState: { tools: [withZod, withValibot, withArkType] } });
