// (f) Built-in providers: the same SSE bytes, served from a loopback server in a child process,
// parsed by our `streamBuiltin` and by pi-ai 1.6.0's providers; throughput in MB/s of SSE bytes.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { ROOT, loadOurs } from "./impl.mjs";
import { PAYLOADS } from "./sse.mjs";
import { compare } from "./harness.mjs";

const APIS = ["openai-completions", "anthropic-messages"];

function modelFor(api, port) {
  const anthropic = api === "anthropic-messages";
  return {
    id: anthropic ? "claude-bench" : "gpt-bench",
    name: "bench",
    api,
    provider: anthropic ? "anthropic" : "openai",
    baseUrl: anthropic ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200000,
    maxTokens: 32000,
  };
}

const context = () => ({ systemPrompt: "You are a bench.", messages: [{ role: "user", content: "go", timestamp: Date.now() }] });

/** Consumes one provider stream; returns { events, stopReason, errorMessage, textLength }. */
async function drain(stream) {
  let events = 0;
  let last;
  for await (const e of stream) {
    events++;
    last = e;
  }
  const message = last?.type === "done" ? last.message : last?.error;
  return { events, stopReason: message?.stopReason, errorMessage: message?.errorMessage, textLength: message?.content?.find((b) => b.type === "text")?.text.length };
}

async function startServerChild() {
  const child = spawn(process.execPath, [join(ROOT, "bench/sse.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once("line", (l) => resolve(Number(l)));
    child.once("exit", (code) => reject(new Error(`SSE server exited (${code})`)));
  });
  return { port, stop: () => child.stdin.end() };
}

/**
 * Returns { skipped: reason } or { results: [{ api, bytes, times, checks, reps }] }.
 */
export async function benchProviders({ budgetMs = 6000 } = {}) {
  const ours = await loadOurs();
  if (typeof ours.streamBuiltin !== "function") return { skipped: "our package exports no streamBuiltin" };
  const server = await startServerChild();
  try {
    // Is there a built-in provider for these apis yet?
    for (const api of APIS) {
      const probe = await drain(ours.streamBuiltin(modelFor(api, server.port), context(), { apiKey: "bench-key" }));
      if (probe.stopReason === "error" && /^No built-in provider for api/.test(probe.errorMessage ?? "")) {
        return { skipped: `streamBuiltin answers "${probe.errorMessage.split(".")[0]}" (built-in providers not there yet)` };
      }
    }
    const piApi = {
      "openai-completions": (await import("@earendil-works/pi-ai/api/openai-completions")).stream,
      "anthropic-messages": (await import("@earendil-works/pi-ai/api/anthropic-messages")).stream,
    };
    const results = [];
    for (const api of APIS) {
      const bytes = PAYLOADS[api]().length;
      const m = modelFor(api, server.port);
      const impls = [
        { name: "ours", stream: () => ours.streamBuiltin(m, context(), { apiKey: "bench-key", maxRetries: 0 }) },
        { name: "reference", stream: () => piApi[api](m, context(), { apiKey: "bench-key", maxRetries: 0 }) },
      ];
      const sides = impls.map((impl) => ({ name: impl.name, run: () => drain(impl.stream()) }));
      const { times, checks, reps } = await compare(sides, { warmup: 2, minReps: 3, maxReps: 9, budgetMs });
      results.push({ api, bytes, times, checks, reps });
    }
    return { results };
  } finally {
    server.stop();
  }
}
