// The built-in providers' wasm instance on Node (issue 43): the four wire formats live in a module of their own,
// required on the first request to a built-in provider (the default stream function). The nodejs glue reads and
// instantiates agent_loop_providers_bg.wasm synchronously, so on Node that first request starts at once, as before.
"use strict";
const { guard } = require("./trap.js");

let ready;

/** The providers' instance once loaded, else undefined; never loads. */
function loadedProviders() {
  return ready;
}

/** The providers' instance, loaded now if it was not (synchronously, from the file beside this module). */
function providersNow() {
  if (ready === undefined) ready = guard(require("./agent_loop_providers.js"));
  return ready;
}

function loadProviders() {
  try {
    return Promise.resolve(providersNow());
  } catch (error) {
    return Promise.reject(error);
  }
}

module.exports = { loadedProviders, loadProviders, providersNow };
