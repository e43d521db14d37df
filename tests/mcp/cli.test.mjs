// examples/cli.mjs --mcp (issue 18): the CLI starts server-everything over stdio, its tools join the CLI's own, and
// a scripted OpenAI-compatible server on 127.0.0.1 (the exact chat-completions SSE) calls two of them in parallel.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { EVERYTHING, HERE } from "./helpers.mjs";

const CLI = join(HERE, "..", "..", "examples", "cli.mjs");
const sse = (chunks) => chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("");
const delta = (d, finish = null) => ({ id: "chatcmpl-1", model: "mock-model", choices: [{ index: 0, delta: d, finish_reason: finish }] });

test("examples/cli.mjs --mcp: server-everything's tools are offered to the model and its calls reach the server", { timeout: 60000 }, async (t) => {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      requests.push(JSON.parse(body));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        requests.length === 1
          ? sse([
              delta({ role: "assistant", content: "" }),
              delta({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "echo", arguments: '{"message":"via cli"}' } }] }),
              delta({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "get-sum", arguments: '{"a":20,"b":22}' } }] }),
              delta({}, "tool_calls"),
              "[DONE]",
            ])
          : sse([delta({ role: "assistant", content: "Both tools answered." }), delta({}, "stop"), "[DONE]"]),
      );
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise((r) => server.close(r)));
  const env = { ...process.env, NO_COLOR: "1", OPENAI_BASE_URL: `http://127.0.0.1:${server.address().port}/v1`, OPENAI_MODEL: "mock-model" };
  delete env.OPENAI_API_KEY;
  const child = spawn(process.execPath, [CLI, "--mcp", `${process.execPath} ${EVERYTHING} stdio`, "echo and add"], { cwd: HERE, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((r) => child.on("close", r));
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  assert.match(stdout, /^mcp: mcp-servers\/everything \(.*\) · tools now list_files, read_file, echo, /m);
  assert.match(stdout, /✔ done echo in \d+ ms/);
  assert.match(stdout, /✔ done get-sum in \d+ ms/);
  assert.match(stdout, /Both tools answered\./);
  assert.equal(requests.length, 2);
  const offered = requests[0].tools.map((x) => x.function.name);
  assert.ok(["list_files", "read_file", "echo", "get-sum"].every((n) => offered.includes(n)), `offered ${offered}`);
  const results = requests[1].messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content]);
  assert.deepEqual(results, [["call_a", "Echo: via cli"], ["call_b", "The sum of 20 and 22 is 42."]]);
});
