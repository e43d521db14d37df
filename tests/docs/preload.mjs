// Loaded with `node --import` into every docs code block the runner starts: the block's requests to a model service
// go to the scripted docs model (DOCS_MODEL_URL) instead, as if the service answered; nothing else leaves the machine.
// The block itself is run as written: only the process's environment differs from a user's. Each redirected request
// carries the block's id (DOCS_BLOCK) in `x-docs-block`, so the docs model's log says which program asked what.
const target = process.env.DOCS_MODEL_URL;
const block = process.env.DOCS_BLOCK;
if (!target) throw new Error("tests/docs/preload.mjs: DOCS_MODEL_URL is not set");
/** The model services a block may name, each answered by the docs model under /<host>/…. */
const SERVICES = new Set([
  "api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com", "openrouter.ai", "api.groq.com",
  "api.deepseek.com", "api.mistral.ai", "api.x.ai", "api.cerebras.ai",
]);
/** Local OpenAI-compatible servers the docs name: the local model (scripts/local-llm) and Ollama. */
const LOCAL = new Map([["127.0.0.1:8088", "local"], ["localhost:8088", "local"], ["localhost:11434", "local-ollama"], ["127.0.0.1:11434", "local-ollama"]]);

const realFetch = globalThis.fetch;
globalThis.fetch = function fetch(input, init) {
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request ? request.url : String(input));
  const host = SERVICES.has(url.hostname) ? url.hostname : LOCAL.get(url.host);
  if (host) {
    const to = `${target}/${host}${url.pathname}${url.search}`;
    const redirected = new Request(request ? new Request(to, request) : to, init);
    if (block) redirected.headers.set("x-docs-block", block);
    return realFetch(redirected);
  }
  return realFetch(input, init);
};
