// The CLI as its README runs it (`npm start -- "<prompt>"`) against a scripted stand-in of each cloud API on 127.0.0.1
// (OpenAI Responses, Anthropic Messages, Google Generative AI; chosen by the key set, pointed there by the example's
// <PROVIDER>_BASE_URL variables): the exact output, the approval asked on the terminal and answered y (the file is
// written) and n (it is not, and the model is told), the requests each API received; then, when LOCAL_LLM_URL is set,
// a real run on the local model with a tool call (required when CI or AGENT_LOOP_FULL is set).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { modelServer } from "./model-server.mjs";

const EXAMPLE = fileURLToPath(new URL("..", import.meta.url));
const PROMPT = "Read README.md and save a summary to summary.txt";
/** Every variable that picks or points the model, cleared so that only the test's choice counts. */
const CLEARED = Object.fromEntries(
  ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL", "MODEL", "LOCAL_LLM_URL"].map((k) => [k, ""]),
);

let server;
before(async () => {
  server = await modelServer();
});
after(() => server.close());

/** A folder for the agent: README.md ("hello\n") and an empty notes/. */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), "node-agent-"));
  writeFileSync(join(dir, "README.md"), "hello\n");
  mkdirSync(join(dir, "notes"));
  return dir;
}

/** `npm start -- prompt` with `env`, `stdin` piped in; resolves with the status, stdout from the CLI's first line, stderr. */
function npmStart(env, prompt, stdin = "") {
  const child = spawn("npm", ["start", "--", prompt], { cwd: EXAMPLE, env: { ...process.env, ...CLEARED, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.end(stdin);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) =>
    child.on("close", (code) => {
      // npm's own lines ("> start", "> node agent.mjs …") come first.
      const at = stdout.indexOf("node-agent · ");
      resolve({ code, stdout: at >= 0 ? stdout.slice(at) : stdout, stderr });
    }),
  );
}

const PROVIDERS = [
  {
    wire: "openai-responses",
    env: () => ({ OPENAI_API_KEY: "sk-test-openai", OPENAI_BASE_URL: `${server.url}/openai/v1` }),
    header: () => `gpt-4o-mini (openai, openai-responses) at ${server.url}/openai/v1`,
    auth: ["authorization", "Bearer sk-test-openai"],
    cost: "$0.000081", // 300 input tokens at $0.15 per million, 60 output at $0.60
    // pi-ai's Responses provider keeps the output item's id with the call id (as sent back in the next request).
    writeId: (requests) => `c3|${requests[2].body.input.find((i) => i.call_id === "c3" && i.type === "function_call").id}`,
    /** The tool results of a request: [id, text, isError?]. */
    results: (body) => body.input.filter((i) => i.type === "function_call_output").map((i) => [i.call_id, i.output]),
  },
  {
    wire: "anthropic-messages",
    env: () => ({ ANTHROPIC_API_KEY: "sk-test-anthropic", ANTHROPIC_BASE_URL: `${server.url}/anthropic` }),
    header: () => `claude-haiku-4-5 (anthropic, anthropic-messages) at ${server.url}/anthropic`,
    auth: ["x-api-key", "sk-test-anthropic"],
    cost: "$0.000600", // $1 and $5 per million
    writeId: () => "c3",
    results: (body) =>
      body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === "tool_result").map((b) => [b.tool_use_id, b.content, b.is_error]),
  },
  {
    wire: "google-generative-ai",
    env: () => ({ GEMINI_API_KEY: "test-gemini", GEMINI_BASE_URL: `${server.url}/google/v1beta` }),
    header: () => `gemini-2.5-flash (google, google-generative-ai) at ${server.url}/google/v1beta`,
    auth: ["x-goog-api-key", "test-gemini"],
    cost: "$0.000240", // $0.30 and $2.50 per million
    writeId: () => "c3",
    results: (body) =>
      body.contents.flatMap((c) => c.parts).filter((p) => p.functionResponse).map((p) => [p.functionResponse.name, p.functionResponse.response.output ?? p.functionResponse.response.error]),
  },
];

const usage = { input: 100, output: 20 };
const SCRIPT = (last) => [
  { calls: [{ id: "c1", name: "list_files", args: { path: "." } }, { id: "c2", name: "read_file", args: { path: "README.md" } }], usage },
  { text: "README.md says hello.", calls: [{ id: "c3", name: "write_file", args: { path: "summary.txt", content: "It says hello." } }], usage },
  { text: last, usage },
];

test("MODEL picks a catalogue model with its own prices; an id the catalogue lacks runs with no prices and says so", async () => {
  const dir = workspace();
  try {
    const anthropic = PROVIDERS[1];
    const oneAnswer = [{ text: "Hi.", usage }];
    server.script(oneAnswer);
    const known = await npmStart({ ...anthropic.env(), WORKSPACE: dir, MODEL: "claude-sonnet-4-5" }, "Say hi");
    assert.equal(known.code, 0, known.stderr);
    assert.match(known.stdout, /^node-agent · claude-sonnet-4-5 \(anthropic, anthropic-messages\)/);
    // $3 and $15 per million (the catalogue's claude-sonnet-4-5): 100 in, 20 out.
    assert.match(known.stdout, /— 1 request · 0 tool calls · 120 tokens \(100 in, 20 out\) · \$0\.000600\n$/);
    assert.equal(server.requests.at(-1).body.model, "claude-sonnet-4-5");

    server.script(oneAnswer);
    const unknown = await npmStart({ ...anthropic.env(), WORKSPACE: dir, MODEL: "claude-next" }, "Say hi");
    assert.equal(unknown.code, 0, unknown.stderr);
    assert.match(unknown.stdout, /note: no model "claude-next" for provider "anthropic"/);
    assert.match(unknown.stdout, /— 1 request · 0 tool calls · 120 tokens \(100 in, 20 out\)\n$/, "no cost without prices");
    assert.equal(server.requests.at(-1).body.model, "claude-next");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const p of PROVIDERS) {
  for (const answer of ["y", "n"]) {
    test(`${p.wire}: list and read at once, then a write the user answers ${answer} on the terminal`, async () => {
      const dir = workspace();
      try {
        server.script(SCRIPT(answer === "y" ? "Saved summary.txt." : "Not saved."));
        const run = await npmStart({ ...p.env(), WORKSPACE: dir }, PROMPT, `${answer}\n`);
        assert.equal(run.code, 0, run.stderr);
        const requests = server.requests;
        assert.deepEqual(requests.map((r) => r.wire), [p.wire, p.wire, p.wire]);
        const writeId = p.writeId(requests);
        const decided =
          answer === "y"
            ? "✔ write_file: wrote 14 characters to summary.txt\nSaved summary.txt."
            : `✖ write_file: Tool call "${writeId}" was denied: the user said no\nNot saved.`;
        assert.equal(
          run.stdout,
          [
            `node-agent · ${p.header()} · folder ${dir}`,
            `> ${PROMPT}`,
            '→ list_files {"path":"."}',
            '→ read_file {"path":"README.md"}',
            "✔ list_files: 2 entries",
            "✔ read_file: 6 characters",
            "README.md says hello.",
            '→ write_file {"path":"summary.txt","content":"It says hello."}',
            `? write_file {"path":"summary.txt","content":"It says hello."}: approve? [y/n] ${answer}`,
            decided,
            `— 3 requests · 3 tool calls · 360 tokens (300 in, 60 out) · ${p.cost}`,
            "",
          ].join("\n"),
        );
        if (answer === "y") assert.equal(readFileSync(join(dir, "summary.txt"), "utf8"), "It says hello.");
        else assert.equal(existsSync(join(dir, "summary.txt")), false, "a denied write writes nothing");

        for (const r of requests) assert.equal(r.headers[p.auth[0]], p.auth[1], "the key from the environment");
        // What the model was sent back: both results at once, then the write's outcome.
        const firstResults = p.results(requests[1].body);
        assert.deepEqual(firstResults.map((r) => r[1]), ["README.md\nnotes/", "hello\n"]);
        const lastResult = p.results(requests[2].body).at(-1);
        assert.equal(lastResult[1], answer === "y" ? "Wrote 14 characters to summary.txt" : `Tool call "${writeId}" was denied: the user said no`);
        if (p.wire === "anthropic-messages") assert.equal(lastResult[2], answer === "n", "a denial is an error result");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}

test("no key and no local model: a clear error, status 1", async () => {
  const closed = await modelServer();
  await closed.close();
  const run = await npmStart({ LOCAL_LLM_URL: `${closed.url}/v1` }, "List the files");
  assert.equal(run.code, 1);
  assert.equal(
    run.stderr,
    "node-agent: no API key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY) and no local model answers at " +
      `${closed.url}/v1: start one (scripts/local-llm start in the agent-loop-wasm repository, or Ollama with ` +
      "LOCAL_LLM_URL=http://127.0.0.1:11434/v1 MODEL=<its model>) or set a key\n",
  );
});

// The local model: scripts/test (and CI) start it and set LOCAL_LLM_URL; a full run must not pass without it.
const LOCAL = process.env.LOCAL_LLM_URL?.replace(/\/+$/, "");
const FULL = Boolean(process.env.CI || process.env.AGENT_LOOP_FULL);
test("the local model (LOCAL_LLM_URL, no key): a real run with a tool call", { skip: !LOCAL && !FULL && "LOCAL_LLM_URL is not set (scripts/local-llm start)" }, async () => {
  assert.ok(LOCAL, "LOCAL_LLM_URL must be set in a full run (CI or AGENT_LOOP_FULL): start scripts/local-llm and set it");
  const dir = workspace();
  try {
    const run = await npmStart({ LOCAL_LLM_URL: LOCAL, WORKSPACE: dir }, "List the files");
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const lines = run.stdout.trimEnd().split("\n");
    assert.equal(lines[0], `node-agent · SmolLM2-135M-Instruct (local, openai-completions) at ${LOCAL} · folder ${dir}`);
    assert.equal(lines[1], "> List the files");
    // The server's tool policy calls list_files for this prompt; the model fills in the path (any string).
    assert.match(lines[2], /^→ list_files \{"path":".*"\}$/);
    assert.match(lines[3], /^(✔ list_files: \d+ entr(y|ies)|✖ list_files: .+)$/);
    assert.ok(lines.slice(4, -1).join("").trim().length > 0, "an answer in text");
    assert.match(lines.at(-1), /^— 2 requests · 1 tool call · \d+ tokens \(\d+ in, \d+ out\)$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
