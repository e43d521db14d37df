// The executor's wake-ups, the JS half of src/js/executor.rs: one microtask per batch of ready tasks. The npm
// wrapper installs `poller`, which calls `pollTasks` inside its own try/catch (pkg-template/trap.js), and the
// failure handler that a trap while polling or settling (snippets/waits.js) reaches; `fallbackPoller` (the bare
// export) serves a glue used without the wrapper.
let poller = null;
let fallbackPoller = null;
let failureHandler = null;

function runPoll() {
  const poll = poller ?? fallbackPoller;
  if (poll !== null) poll();
}

export function schedulePoll() {
  queueMicrotask(runPoll);
}

export function setPoller(poll, onFailure) {
  poller = typeof poll === "function" ? poll : null;
  failureHandler = typeof onFailure === "function" ? onFailure : null;
}

export function setFallbackPoller(poll) {
  fallbackPoller = poll;
}

/** A trap of the instance: to the wrapper's handler, else thrown. */
export function instanceFailed(error) {
  if (failureHandler === null) throw error;
  failureHandler(error);
}
