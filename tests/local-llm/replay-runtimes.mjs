// The local model's recorded run (tests/local-llm/record-replay.test.mjs, issue 44, SPEC §14) replayed in the other
// runtimes: Deno (node_modules/.bin/deno, which npm ci / scripts/setup install; the package's Deno entries
// pkg/dist/deno/index.js and testing.js), headless Chromium (a page importing pkg/dist/web/index.js and testing.js)
// and workerd (a Worker of the package's "workerd" entry and its folder, pkg/dist/web), through tests/runtimes.mjs.
// Each runs the one flow of tests/local-llm/replay-flow.mjs (read here as text) `replays` times from the cassette with
// `globalThis.fetch` refusing every call; every replay's events and transcript must equal the recording's (clockless
// JSON). Deno also runs with no permission at all (no --allow-net, no --allow-read). Child processes are ended by PID.
//
//   await replayElsewhere(doc, { events, transcript }, { replays: 20 })   // → [{ runtime, replays, ok }, ...]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT, endChild, runInChromium, runInWorkerd } from "../runtimes.mjs";

const PKG = join(ROOT, "pkg");
const DENO = join(ROOT, "node_modules", ".bin", "deno");
const FLOW = join(ROOT, "tests", "local-llm", "replay-flow.mjs");
const TIMEOUT = 120_000;
const RUNTIMES = ["deno", "chromium", "workerd"];

/** The model's baseUrl the recording was made with: its first request's URL without the endpoint's path. */
export function recordedBaseUrl(doc) {
  const http = doc.interactions.find((i) => i.type === "http");
  if (http === undefined) throw new Error("the cassette holds no HTTP interaction");
  return http.request.url.replace(/\/chat\/completions(\?.*)?$/, "");
}

/** The module each runtime runs: its default export resolves replayMany's JSON. Imports by the given specifiers. */
function mainSource({ lib, testing, flow }, doc, expected, baseUrl, replays) {
  return `import * as lib from ${JSON.stringify(lib)};
import * as testing from ${JSON.stringify(testing)};
import { replayMany } from ${JSON.stringify(flow)};

const doc = ${JSON.stringify(doc)};
const expected = ${JSON.stringify(expected)};

export default async function run() {
  return replayMany({ lib, testing, doc, expected, baseUrl: ${JSON.stringify(baseUrl)}, replays: ${replays} });
}
`;
}

/** Runs `main` with `deno run` and no permissions; resolves the value of its RESULT line. */
async function runInDeno(main) {
  const dir = mkdtempSync(join(tmpdir(), "agent-loop-wasm-deno-replay-"));
  let child;
  try {
    writeFileSync(join(dir, "main.mjs"), main);
    writeFileSync(
      join(dir, "run.mjs"),
      `import run from "./main.mjs";
console.log("RESULT " + JSON.stringify(await run()));
`,
    );
    child = spawn(DENO, ["run", "--no-prompt", "--no-config", "--no-lock", join(dir, "run.mjs")], {
      env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => process.kill(child.pid, "SIGKILL"), TIMEOUT);
    const [code, signal] = await once(child, "exit");
    clearTimeout(timer);
    const line = out.split("\n").find((l) => l.startsWith("RESULT "));
    if (code !== 0 || line === undefined) throw new Error(`deno exited ${code ?? signal}\n${out.slice(-2000)}\n${err.slice(-2000)}`);
    return JSON.parse(line.slice("RESULT ".length));
  } finally {
    await endChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The two texts around their first differing character (they can be long: a partial message per event). */
function around(a, b, width = 160) {
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  const from = Math.max(0, at - width / 2);
  const cut = (t) => `${from > 0 ? "…" : ""}${t.slice(from, from + width)}${t.length > from + width ? "…" : ""} (char ${at} of ${t.length})`;
  return [cut(a), cut(b)];
}

/** Checks one runtime's answer; returns `{ runtime, replays, ok }` or throws naming the runtime (and the event). */
function judge(runtime, answer, replays) {
  const { mismatch } = answer;
  if (mismatch !== null) {
    const where = typeof mismatch.index === "number" ? `event ${mismatch.index}` : mismatch.index;
    const [got, recorded] = around(String(mismatch.actual), String(mismatch.expected));
    throw new Error(`${runtime}: replay ${mismatch.replay}: ${where} differs from the recording:\n  got      ${got}\n  recorded ${recorded}`);
  }
  if (answer.networkCalls !== 0) throw new Error(`${runtime}: the replays called globalThis.fetch ${answer.networkCalls} times`);
  if (answer.adds !== 0) throw new Error(`${runtime}: the add tool really ran ${answer.adds} times (a replay's results come from the cassette)`);
  if (answer.replays !== replays) throw new Error(`${runtime}: ${answer.replays} of ${replays} replays ran`);
  return { runtime, replays: answer.replays, ok: true };
}

/**
 * Replays `cassetteDoc` `replays` times in Deno, headless Chromium and workerd, one runtime after the other (the
 * machine may be small), each compared with `expected` ({ events: clockless JSON per event, transcript }).
 * `baseUrl` defaults to the recorded one; `runtimes`, to all three. Resolves `[{ runtime, replays, ok }]`; throws at the first runtime that drifts.
 */
export async function replayElsewhere(cassetteDoc, expected, { replays = 20, baseUrl = recordedBaseUrl(cassetteDoc), runtimes = RUNTIMES } = {}) {
  for (const r of runtimes) if (!RUNTIMES.includes(r)) throw new TypeError(`replayElsewhere: unknown runtime ${r} (${RUNTIMES.join(", ")})`);
  const flow = readFileSync(FLOW, "utf8");
  const want = { events: expected.events, transcript: expected.transcript };
  const main = (specifiers) => mainSource(specifiers, cassetteDoc, want, baseUrl, replays);
  const neutral = { lib: "agent-loop-wasm", testing: "./testing.mjs", flow: "./replay-flow.mjs" };
  const run = {
    // Deno: the package's Deno entries and the flow file, imported by their file: URLs.
    deno: () =>
      runInDeno(
        main({
          lib: pathToFileURL(join(PKG, "dist", "deno", "index.js")).href,
          testing: pathToFileURL(join(PKG, "dist", "deno", "testing.js")).href,
          flow: pathToFileURL(FLOW).href,
        }),
      ),
    // The page: "agent-loop-wasm" is the import map's pkg/dist/web/index.js; the files are served at the root.
    chromium: async () => {
      const { result, problems } = await runInChromium({
        pkgDir: PKG,
        files: { "/testing.mjs": `export * from "/pkg/dist/web/testing.js";\n`, "/replay-flow.mjs": flow },
        main: main(neutral),
        timeout: TIMEOUT,
      });
      if (problems.length > 0) throw new Error(`chromium: the page reported errors:\n${problems.join("\n")}`);
      return result;
    },
    // The Worker: every file of pkg/dist/web is the module "pkg/dist/web/<file>", beside these.
    workerd: () =>
      runInWorkerd({
        pkgDir: PKG,
        files: { "testing.mjs": `export * from "./pkg/dist/web/testing.js";\n`, "replay-flow.mjs": flow },
        main: main(neutral),
        timeout: TIMEOUT,
      }),
  };
  const results = [];
  for (const runtime of runtimes) results.push(judge(runtime, await run[runtime](), replays));
  return results;
}
