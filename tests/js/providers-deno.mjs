// Run by providers-deno.test.mjs under Deno: `deno run --allow-net=127.0.0.1 [--allow-env] providers-deno.mjs <plan JSON>`.
// Imports the package's Deno entry (pkg/dist/deno/index.js), runs the plan's provider scenarios against the Node test's
// loopback server with Deno's own fetch, and prints `RESULT <json>` on one line.
import * as lib from "../../pkg/dist/deno/index.js";
import { runScenarios } from "./provider-scenarios.mjs";

const plan = JSON.parse(Deno.args[0]);
const results = await runScenarios(lib, plan);
results.$runtime = `deno ${Deno.version.deno}`;
console.log(`RESULT ${JSON.stringify(results)}`);
