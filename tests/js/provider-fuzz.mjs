// The byte-stream fuzz of the recorded provider streams (issue 41), on ours and on pi-ai 1.6.0: the streams of
// tests/fixtures/provider-corpus/ as SSE records, their mutations, and the driver that runs one case through both
// providers and compares them under a list of rules. The rules themselves (each difference and its reason) live in
// reliability-provider-fuzz.test.mjs; this module holds no test and decides nothing about what may differ.
import { parseJsonWithRepair } from "@earendil-works/pi-ai/utils/json-parse";
import { prng } from "./provider-server.mjs";
import { DOCUMENTED, both, explain, firstDifference, manifest, readSse } from "./provider-corpus.mjs";

const enc = new TextEncoder();
const dec = new TextDecoder();

// ---------------------------------------------------------------------------------------------------------------
// SSE records: a stream's text cut into events by the line rules its decoders share (`\r\n`, `\r` or `\n` ends a
// line, a blank line ends an event), kept exact: joinRecords(records(text)) === text. A record is { lines: [{ text,
// eol }], blank (the blank line's end, "" for an event the stream ends inside), event, data (undefined without a
// `data:` line), index (its place in the stream) }.
// ---------------------------------------------------------------------------------------------------------------

export function records(text) {
  const out = [];
  let lines = [];
  for (let at = 0; at < text.length; ) {
    let end = at;
    while (end < text.length && text[end] !== "\r" && text[end] !== "\n") end++;
    const eol = text.startsWith("\r\n", end) ? "\r\n" : text.slice(end, end + 1);
    const line = text.slice(at, end);
    at = end + eol.length;
    if (line !== "") lines.push({ text: line, eol });
    else (out.push(record(lines, eol)), (lines = []));
  }
  if (lines.length > 0) out.push(record(lines, ""));
  out.forEach((r, i) => (r.index = i));
  return out;
}

function record(lines, blank) {
  const r = { lines, blank, event: undefined, data: undefined };
  for (const { text } of lines) {
    if (text.startsWith(":")) continue;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "event") r.event = value;
    else if (field === "data") r.data = r.data === undefined ? value : `${r.data}\n${value}`;
  }
  return r;
}

export const joinRecords = (list) => list.map((r) => r.lines.map((l) => l.text + l.eol).join("") + r.blank).join("");
/** `r` with other lines (same place in the stream). */
export const withLines = (r, lines) => ({ ...record(lines, r.blank), index: r.index });
/** `r` with its `data:` line(s) replaced by one holding `data`. */
export const withData = (r, data) => {
  const at = r.lines.findIndex((l) => /^data(:|$)/.test(l.text));
  const lines = r.lines.filter((l, i) => i === at || !/^data(:|$)/.test(l.text));
  return withLines(r, lines.map((l) => (/^data(:|$)/.test(l.text) ? { ...l, text: `data: ${data}` } : l)));
};

/** `{ value }` or `{ error }` (the message) of `JSON.parse(text)`. */
export function jsonOf(text) {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: e.message };
  }
}
/** As jsonOf, with the repair pass when JSON.parse fails (P-6.3.2; pi-ai's own). */
export function repairedJsonOf(text) {
  try {
    return { value: parseJsonWithRepair(text) };
  } catch (e) {
    return { error: e.message };
  }
}
/** A record's data as the providers read it (repaired), when it is a JSON object. */
export const objectOf = (r) => {
  const { value } = r.data === undefined ? {} : repairedJsonOf(r.data);
  return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
};
/** The JSON payloads of a stream, in order, up to the first that does not parse even repaired (`[DONE]` skipped). */
export function payloads(sse) {
  const out = [];
  for (const r of records(sse)) {
    if (r.data === undefined || r.data.trim() === "[DONE]") continue;
    const { value, error } = repairedJsonOf(r.data);
    if (error !== undefined) break;
    out.push(value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations of a recording (each deterministic from its random source); then random chunk sizes 1–64.
// ---------------------------------------------------------------------------------------------------------------

const PUNCTUATION = [..."{}[]\"\\,: "].map((c) => c.charCodeAt(0));
export const MUTATIONS = {
  /** The recording as it is (only the chunking changes). */
  split: (text) => text,
  /** Every line end written as `\r\n`, `\r` or `\n`. */
  "line ends": (text, random) => text.replace(/\r\n|\r|\n/g, ["\r\n", "\r", "\n"][Math.floor(random() * 3)]),
  /** The connection drops after a random byte (inside a UTF-8 character too). */
  truncate: (text, random) => {
    const bytes = enc.encode(text);
    return bytes.subarray(0, Math.floor(random() * bytes.length));
  },
  /** The connection drops between two events. */
  "truncate at an event": (text, random) => {
    const list = records(text);
    return joinRecords(list.slice(0, Math.floor(random() * list.length)));
  },
  /** One to three bytes of one event's data replaced by JSON punctuation (keys, values, brackets, escapes). */
  corrupt: (text, random) => {
    const list = records(text);
    const withData = list.filter((r) => r.data !== undefined);
    const r = withData[Math.floor(random() * withData.length)];
    const lines = r.lines.map((l) => ({ ...l }));
    const data = lines.filter((l) => l.text.startsWith("data:"));
    const line = data[Math.floor(random() * data.length)];
    const bytes = enc.encode(line.text);
    for (let k = 0, n = 1 + Math.floor(random() * 3); k < n && bytes.length > 5; k++) {
      bytes[5 + Math.floor(random() * (bytes.length - 5))] = PUNCTUATION[Math.floor(random() * PUNCTUATION.length)];
    }
    line.text = dec.decode(bytes);
    list[r.index] = withLines(r, lines);
    return { text: joinRecords(list), touched: r.index };
  },
};

/** `bytes` cut into chunks of `sizes` (repeated). */
export function chunked(bytes, sizes) {
  const out = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length];
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

/**
 * A case: `entry`'s recording as `mutated` (text, or bytes) with `touched` (the record a mutation damaged in place, if
 * any) and chunk `sizes`.
 */
export function makeCase(entry, kind, mutated, sizes, touched) {
  const bytes = typeof mutated === "string" ? enc.encode(mutated) : mutated;
  return { entry, kind, bytes, text: dec.decode(bytes), touched, sizes };
}

/** `perKind[kind]` cases of each mutation for every recording, from `seed`; numbered in order. */
export function* fuzzCases(seed, perKind) {
  let n = 0;
  for (const entry of manifest.entries) {
    const original = readSse(entry);
    for (const [kind, count] of Object.entries(perKind)) {
      for (let k = 0; k < count; k++, n++) {
        const random = prng(seed * 7919 + n);
        const mutated = MUTATIONS[kind](original, random);
        const sizes = Array.from({ length: 512 }, () => 1 + Math.floor(random() * 64));
        const c = mutated.touched === undefined ? makeCase(entry, kind, mutated, sizes) : makeCase(entry, kind, mutated.text, sizes, mutated.touched);
        yield { ...c, n };
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// One case through both providers. A rule is { id, kind, apis, … } of one of these kinds:
//   input  `input(records, api)` → the records the reference is given instead (what ours reads differently);
//   chunks `chunks(chunks)` → the chunks the reference is given instead;
//   cut    `find(records, { mine, touched, entry })` → { at, error } where ours ends the stream with `error` at record
//          `at` (or the first of several candidates where the two then agree) that the reference reads on: the
//          reference is given the records before it, and its ending becomes ours;
//   result `rewrite(result, { entry, sse })` → the reference's result as ours gives it (`first`: before DOCUMENTED);
//   text   `rewrite(result, { entry, sse })` → the reference's error text replaced by ours.
// ---------------------------------------------------------------------------------------------------------------

/** What is compared: the event types, the final message's content, stopReason and error text, the error event's. */
const project = (r) => ({ types: r.events.map((e) => e.type), error: r.events.at(-1)?.errorMessage, content: r.message.content, stopReason: r.message.stopReason, errorMessage: r.message.errorMessage });

/**
 * `c` through `ours` and the reference under `rules`: `{ diff (undefined when they agree), used (the ids of the rules
 * that changed something), reference, ours (both results as given, the reference's after a cut) }`.
 */
export async function compare(ours, c, rules) {
  const used = new Set();
  const own = rules.filter((rule) => rule.apis.includes(c.entry.api));
  let theirList = records(c.text);
  for (const rule of own.filter((x) => x.kind === "input")) {
    const next = rule.input(theirList, c.entry.api);
    if (joinRecords(next) !== joinRecords(theirList)) used.add(rule.id);
    theirList = next;
  }
  const ourChunks = chunked(c.bytes, c.sizes);
  const theirChunks = (list) => {
    const text = joinRecords(list);
    let chunks = text === c.text ? ourChunks : chunked(enc.encode(text), c.sizes);
    for (const rule of own.filter((x) => x.kind === "chunks")) {
      const next = rule.chunks(chunks);
      if (next.length !== chunks.length || next.some((chunk, i) => chunk.length !== chunks[i].length)) used.add(rule.id);
      chunks = next;
    }
    return chunks;
  };
  const { theirs, mine } = await both(ours, c.entry, ourChunks, theirChunks(theirList));
  const result = own.filter((x) => x.kind === "result");
  const rewrites = [...result.filter((x) => x.first), ...DOCUMENTED, ...result.filter((x) => !x.first), ...own.filter((x) => x.kind === "text")];
  const outcome = (reference, list, also = []) => {
    const { expected, actual, used: applied } = explain(c.entry, reference, mine, joinRecords(list), rewrites);
    const ids = new Set([...used, ...also, ...applied.filter((id) => own.some((x) => x.id === id))]);
    return { diff: firstDifference(project(actual), project(expected)), used: ids, reference, ours: mine };
  };
  for (const rule of own.filter((x) => x.kind === "cut")) {
    const cut = rule.find(theirList, { mine, touched: c.touched, entry: c.entry });
    if (!cut) continue;
    // The first place (of the rule's candidates) where the reference, given the stream before it, meets ours.
    let first;
    for (const at of [cut.at].flat()) {
      const list = theirList.filter((r) => r.index < at);
      const { theirs: reference } = await both(ours, c.entry, ourChunks, theirChunks(list));
      reference.events[reference.events.length - 1] = { type: "error", reason: "error", errorMessage: cut.error };
      reference.message.stopReason = "error";
      reference.message.errorMessage = cut.error;
      const tried = outcome(reference, list, [rule.id]);
      if (!tried.diff) return tried;
      first ??= tried;
    }
    return first;
  }
  return outcome(theirs, theirList);
}
