// `agent-loop-wasm/web` on Node (require): the wasm is already loaded synchronously by the main entry, so
// `init` and `initSync` only resolve. Same instance as `require("agent-loop-wasm")`.
"use strict";
const api = require("./index.cjs");

function init(_input) {
  return Promise.resolve();
}
function initSync(_bytesOrModule) {}

module.exports = Object.assign({}, api, { init, initSync });
