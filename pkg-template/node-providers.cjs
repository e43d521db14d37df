// The built-in providers on Node (issue 43): the four wire formats are plain JS of their own, ./builtin-providers.js,
// required on the first request to a built-in provider (the default stream function), so that request starts at once.
"use strict";

let ready;

/** The providers' module, loaded now if it was not (synchronously, from the file beside this module). */
function providersNow() {
  if (ready === undefined) ready = require("./builtin-providers.js");
  return ready;
}

function loadProviders() {
  try {
    return Promise.resolve(providersNow());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Issue 45: the compaction module (./compaction.js), required on a run's first compaction check. */
function loadCompaction() {
  return require("./compaction.js");
}

module.exports = { loadCompaction, loadProviders, providersNow };
