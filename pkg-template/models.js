// agent-loop-wasm/models (issue 42, SPEC §13): the model catalogue. Complete model objects for the built-in providers
// (limits, input modalities, reasoning, prices), looked up as pi-ai's `getModel` / `getModels` / `getProviders` are.
// Owns the lookups and their errors; the figures are ./models-data.js, written by scripts/models-catalogue.mjs. Needs no
// wasm and is not imported by the main entry, which stays the size it was.
import { CATALOGUE } from "./models-data.js";
import { codedError } from "./errors.js";

const MODELS = CATALOGUE.models;
const PROVIDERS = Object.keys(MODELS);

/** A deep copy of plain JSON data: every call hands out its own object (M-13.2). */
function copy(value) {
  return JSON.parse(JSON.stringify(value));
}

const quoted = (names) => names.map((n) => `"${n}"`);

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`. */
function orList(names) {
  const q = quoted(names);
  return q.length < 2 ? q.join("") : `${q.slice(0, -1).join(", ")} or ${q[q.length - 1]}`;
}

/** Levenshtein distance, case-insensitive. */
function distance(a, b) {
  a = a.toLowerCase();
  b = b.toLowerCase();
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/** The names nearest to `name` (at most three, all at the least distance), or none when even those are far off. */
function closest(name, names) {
  const scored = names.map((n) => [n, distance(name, n)]);
  const best = Math.min(...scored.map(([, d]) => d));
  if (best > Math.max(2, Math.floor(name.length / 3))) return [];
  return scored.filter(([, d]) => d === best).slice(0, 3).map(([n]) => n);
}

/** The provider's list; a TypeError for a non-string, an Error naming the providers for an unknown one (M-13.3). */
function providerModels(fn, provider) {
  if (typeof provider !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: provider must be a string (one of ${orList(PROVIDERS)})`);
  if (!Object.prototype.hasOwnProperty.call(MODELS, provider)) {
    const near = closest(provider, PROVIDERS);
    const hint = near.length ? `did you mean ${orList(near)}? The` : "the";
    throw codedError("NO_SUCH_MODEL", `${fn}: no provider "${provider}"; ${hint} providers are ${quoted(PROVIDERS).join(", ")}`);
  }
  return MODELS[provider];
}

/** A fresh copy of the catalogue entry `modelId` of `provider` (M-13.1). */
export function getModel(provider, modelId) {
  const models = providerModels("getModel", provider);
  if (typeof modelId !== "string") throw codedError("INVALID_ARGUMENT", "getModel: modelId must be a string");
  const model = models.find((m) => m.id === modelId);
  if (model) return copy(model);
  const ids = models.map((m) => m.id);
  const near = closest(modelId, ids);
  const hint = near.length ? `did you mean ${orList(near)}?` : `its models are ${quoted(ids).join(", ")}`;
  throw codedError("NO_SUCH_MODEL", `getModel: no model "${modelId}" for provider "${provider}"; ${hint}`);
}

/** Fresh copies of every catalogue entry of `provider`. */
export function getModels(provider) {
  return copy(providerModels("getModels", provider));
}

/** The catalogue's providers. */
export function getProviders() {
  return [...PROVIDERS];
}
