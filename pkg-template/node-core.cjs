// Node: wasm-bindgen's `--target nodejs` glue reads agent_loop_wasm_bg.wasm beside it (`__dirname`) and
// instantiates it synchronously when first required, so the API below is ready with no user action.
"use strict";
module.exports = require("./agent_loop_wasm.js");
