// Node: loads the wasm beside this file synchronously, before the API module evaluates.
import { readFileSync } from "node:fs";
import * as core from "./agent_loop_wasm.js";

core.initSync({ module: readFileSync(new URL("./agent_loop_wasm_bg.wasm", import.meta.url)) });

export default core;
