// Standard Schema tools (T-4.3.8, issue 42) with the real zod, Valibot (@valibot/to-json-schema) and ArkType from npm
// (this folder's node_modules, installed by scripts/setup): scenario.mjs's run, required exactly in Node and equal in
// headless Chromium (the package's web build) and in workerd (its workerd entry), the schema libraries bundled by
// esbuild as an app's bundler would; and in Node, each built-in wire format sends the converted JSON Schema.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import { ROOT, bundle, runInChromium, runInWorkerd } from "../runtimes.mjs";
import { APIS, providerModel, startProviderServer, wire } from "../js/provider-server.mjs";
import { runSchemas, schemaTools } from "./scenario.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const PKG = join(ROOT, "pkg");
const lib = await import(join(PKG, "dist", "node", "index.mjs"));
const T = { timeout: 120_000 };

const received = (args) => `\n\nReceived arguments:\n${JSON.stringify(args, null, 2)}`;
const BAD = { city: 7, days: 0.5 };
const CONVERTER =
  "is a Standard Schema of \"valibot\" without a JSON Schema converter (~standard.jsonSchema), and the model needs JSON " +
  "Schema: pass a schema that has one (zod 4.2 or later, ArkType 2.1.28 or later, Valibot through toStandardJsonSchema " +
  "of @valibot/to-json-schema) or JSON Schema";
const FOREIGN =
  "is neither JSON Schema (a plain object) nor a Standard Schema (an object with ~standard): pass JSON Schema, a " +
  "TypeBox schema, or a Standard Schema with a JSON Schema converter (zod 4, ArkType, Valibot through toStandardJsonSchema)";

/** What scenario.mjs must observe, in every runtime. */
const EXPECTED = {
  // Each tool is declared by its library's own JSON Schema (draft-07), without `$schema`.
  declared: [
    {
      name: "zod_weather",
      description: "Weather (zod)",
      parameters: { type: "object", properties: { city: { type: "string", description: "City name" }, days: { default: 1, type: "integer", minimum: 1, maximum: 9007199254740991 } }, required: ["city"] },
    },
    { name: "zod_async", description: "A city that exists", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
    { name: "valibot_weather", description: "Weather (Valibot)", parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer", minimum: 1 } }, required: ["city"] } },
    { name: "arktype_weather", description: "Weather (ArkType)", parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "number", minimum: 1 } }, required: ["city"] } },
  ],
  declarations: 1,
  // `execute` receives the schema's output: zod's default fills `days`.
  seen: [
    ["zod_weather", { city: "Paris", days: 2 }],
    ["zod_weather", { city: "Rome", days: 1 }],
    ["zod_async", { city: "Lima" }],
    ["valibot_weather", { city: "Paris", days: 2 }],
    ["arktype_weather", { city: "Oslo" }],
  ],
  // Bad arguments: the library's validation error, each issue as `path: message` in its library's words.
  results: [
    ["z1", false, "zod_weather: Paris, 2 days"],
    ["z2", true, `Validation failed for tool "zod_weather":\n  - city: Invalid input: expected string, received number\n  - days: Invalid input: expected int, received number${received(BAD)}`],
    ["z3", false, "zod_weather: Rome, 1 days"],
    ["s1", false, "zod_async: Lima, no days"],
    ["s2", true, `Validation failed for tool "zod_async":\n  - city: No such city${received({ city: "Atlantis" })}`],
    ["v1", false, "valibot_weather: Paris, 2 days"],
    ["v2", true, `Validation failed for tool "valibot_weather":\n  - city: Invalid type: Expected string but received 7\n  - days: Invalid integer: Received 0.5\n  - days: Invalid value: Expected >=1 but received 0.5${received(BAD)}`],
    ["a1", false, "arktype_weather: Oslo, no days"],
    ["a2", true, `Validation failed for tool "arktype_weather":\n  - city: city must be a string (was a number)\n  - days: days must be at least 1 (was 0.5)${received(BAD)}`],
  ],
  refused: [
    `TypeError: agentLoop: context.tools[0].parameters (tool "valibot_weather") ${CONVERTER}`,
    `TypeError: agentLoop: context.tools[0].parameters (tool "foreign") ${FOREIGN}`,
  ],
  direct: [
    { city: "Paris", days: 1 },
    `Error: Validation failed for tool "zod_weather":\n  - city: Invalid input: expected string, received number\n  - days: Invalid input: expected int, received number${received(BAD)}`,
    "TypeError: validateToolArguments: the tool's Standard Schema validates asynchronously (its validate returned a promise); validateToolArguments cannot wait for it (a run and runToolCall do)",
  ],
  requests: 2,
};

test("T-4.3.8, Node: zod, Valibot and ArkType tools are declared by their JSON Schema, validated by their own schema, and execute gets the output", T, async () => {
  assert.deepEqual(await runSchemas({ lib, z, v, toStandardJsonSchema, type }), EXPECTED);
});

/** The page's and the Worker's module: the same scenario on the package and the bundled libraries. */
const MAIN = `import * as lib from "agent-loop-wasm";
import { z, v, toStandardJsonSchema, type } from "./schemas.mjs";
import { runSchemas } from "./scenario.mjs";
export default () => runSchemas({ lib, z, v, toStandardJsonSchema, type });
`;

const LIBS = 'export { z } from "zod";\nexport * as v from "valibot";\nexport { toStandardJsonSchema } from "@valibot/to-json-schema";\nexport { type } from "arktype";\n';

/** The modules both runtimes load: the libraries in one bundle (for a Worker, ArkType configured first) and the scenario. */
async function files({ worker = false } = {}) {
  const [libs, scenario] = await Promise.all([
    bundle((worker ? 'import "./ark-jitless.mjs";\n' : "") + LIBS, HERE),
    readFile(join(HERE, "scenario.mjs"), "utf8"),
  ]);
  return { "/schemas.mjs": libs, "/scenario.mjs": scenario };
}

test("T-4.3.8, Chromium: the same run in a page (the package's web build, the libraries bundled by esbuild)", T, async () => {
  const { result, problems } = await runInChromium({ pkgDir: PKG, files: await files(), main: MAIN });
  assert.deepEqual(problems, []);
  assert.deepEqual(result, EXPECTED);
});

test("T-4.3.8, workerd: the same run in a Worker (the package's workerd entry; ArkType jitless, as a Worker needs)", T, async () => {
  assert.deepEqual(await runInWorkerd({ pkgDir: PKG, files: await files({ worker: true }), main: MAIN }), EXPECTED);
});

/** Where each wire format puts a tool's JSON Schema in its request body. */
const SCHEMA_IN_BODY = {
  "openai-completions": (body) => body.tools.map((t) => [t.function.name, t.function.parameters]),
  "openai-responses": (body) => body.tools.map((t) => [t.name, t.parameters]),
  "anthropic-messages": (body) => body.tools.map((t) => [t.name, t.input_schema]),
  "google-generative-ai": (body) => body.tools[0].functionDeclarations.map((t) => [t.name, t.parametersJsonSchema ?? t.parameters]),
};

test("T-4.3.8: each built-in wire format sends the schema library's JSON Schema and runs the tool on its output", T, async () => {
  const server = await startProviderServer();
  try {
    for (const api of APIS) {
      const seen = [];
      const [zodTool, , valibotTool, arkTool] = schemaTools({ z, v, toStandardJsonSchema, type }, seen);
      const route = server.route(`schemas-${api}`);
      route.reply({ sse: wire[api].reply({ calls: [{ id: "c1", name: "zod_weather", args: { city: "Paris" } }] }) });
      route.reply({ sse: wire[api].reply({ text: "Sunny." }) });
      const agent = new lib.Agent({
        initialState: { model: providerModel(api, route.baseUrl), tools: [zodTool, valibotTool, arkTool] },
        getApiKey: () => "test-key",
      });
      await agent.prompt("weather?");
      assert.equal(agent.state.errorMessage, undefined, `${api}: ${agent.state.errorMessage}`);
      assert.equal(route.requests.length, 2, api);
      const sent = SCHEMA_IN_BODY[api](route.requests[0].body);
      assert.deepEqual(
        sent.map(([name]) => name),
        ["zod_weather", "valibot_weather", "arktype_weather"],
        api,
      );
      const { $schema: _, ...zodSchema } = z.toJSONSchema(zodTool.parameters, { target: "draft-07", io: "input" });
      assert.deepEqual(sent[0][1], zodSchema, `${api}: zod's own JSON Schema`);
      assert.deepEqual(seen, [["zod_weather", { city: "Paris", days: 1 }]], api);
    }
  } finally {
    await server.close();
  }
});
