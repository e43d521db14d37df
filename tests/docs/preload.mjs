// Loaded with `node --import` into every docs code block the runner starts: the block's requests to a model service
// go to the scripted docs model (DOCS_MODEL_URL) instead, as if the service answered; nothing else leaves the machine.
// The block itself is run as written: only the process's environment differs from a user's.
const target = process.env.DOCS_MODEL_URL;
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
    const redirected = `${target}/${host}${url.pathname}${url.search}`;
    return realFetch(request ? new Request(redirected, request) : redirected, init);
  }
  return realFetch(input, init);
};
