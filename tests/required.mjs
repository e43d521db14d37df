// A test that needs a tool from outside npm's reach in a plain checkout (Deno's binary, Debian's Chromium,
// playwright-core) may skip with the reason when the tool is missing. Under scripts/test, which installs every one of
// them first (scripts/setup) and sets AGENT_LOOP_REQUIRE_TOOLS=1, a missing tool is a failure instead: a broken install
// must not pass CI as a row of skips.
import { existsSync } from "node:fs";

export const TOOLS_REQUIRED = process.env.AGENT_LOOP_REQUIRE_TOOLS === "1";

/**
 * The skip reason for a test that needs `path`, or false when it exists. Throws (failing the file) when the tool is
 * missing under scripts/test.
 */
export function needs(path, what) {
  if (existsSync(path)) return false;
  return missing(`${path} is missing (${what})`);
}

/** `reason` as a skip reason, or a thrown Error under scripts/test; false stays false. */
export function missing(reason) {
  if (!reason) return false;
  if (TOOLS_REQUIRED) throw new Error(`${reason}; scripts/test installs it (scripts/setup), so this is a failure here`);
  return reason;
}
