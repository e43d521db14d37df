// What the loop loads on first use and how (issue 45): the compaction module (./compaction.js) is imported on a run's
// first compaction check, so that an app without compaction never downloads it. Internal: not re-exported.
import core from "./trap.js";
import { loadCompaction } from "./providers.js";

let registered = false;

/** Tells the loop how to load the compaction module; once, before a first run, when the instance exists. */
export function registerCompaction() {
  if (registered) return;
  core.setCompactionLoader(loadCompaction);
  registered = true;
}
