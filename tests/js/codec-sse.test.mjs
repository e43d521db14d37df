// The SSE decoder (pkg-template/providers/sse.js): framing, UTF-8 across chunks, the BOM, the size limit (P-6.3.1,
// P-6.1.8, issue 13), each test naming the requirement or issue it holds, and seeded random chunkings checked against
// a non-incremental reference. `id`/`retry` are not reported.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_MAX_EVENT_BYTES, SseDecoder, SseError } from "../../pkg-template/providers/sse.js";

/** Byte-string literal: every char is one byte (so "\xE2" is the byte E2). */
const bin = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
/** The UTF-8 bytes of `s`. */
const utf = (s) => new TextEncoder().encode(s);
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
};
const ev = (data) => ({ event: undefined, data });
const named = (event, data) => ({ event, data });
const tooLarge = (limit) => `Provider stream event exceeds the limit of ${limit} bytes (maxStreamEventBytes)`;

/** Feeds `chunks` one by one (a fresh `out` each, as the driver does), then finishes. */
function decodeChunks(chunks, limit) {
  const d = new SseDecoder(limit);
  const events = [];
  for (const c of chunks) {
    const out = [];
    d.push(typeof c === "string" ? bin(c) : c, out);
    events.push(...out);
  }
  const out = [];
  d.finish(out);
  return [...events, ...out];
}
const decode = (bytes) => decodeChunks([bytes]);
const split = (bytes, size) => {
  const chunks = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
};
/** Every byte its own chunk. */
const decodeBytewise = (bytes) => decodeChunks(split(typeof bytes === "string" ? bin(bytes) : bytes, 1));

/** The events, or the error's message (with the events dispatched before it). */
function decodeLimited(chunks, limit) {
  const events = [];
  try {
    const d = new SseDecoder(limit);
    for (const c of chunks) d.push(typeof c === "string" ? bin(c) : c, events);
    d.finish(events);
    return events;
  } catch (e) {
    assert.ok(e instanceof SseError, String(e));
    return { error: e.message, before: events };
  }
}

/** A non-incremental model of the same rules (whole-input lossy UTF-8 decode, BOM
 *  strip, lines, WHATWG fields), without id/retry. */
function reference(bytes) {
  let text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  const lines = text.split(/\r\n|\r|\n/);
  // An unterminated last line is processed; a terminated one leaves "" (the EOF dispatch below does the same).
  lines.push("");
  const out = [];
  let event = "";
  let data;
  for (const line of lines) {
    if (line === "") {
      if (data !== undefined) out.push({ event: event || undefined, data });
      event = "";
      data = undefined;
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data = data === undefined ? value : `${data}\n${value}`;
  }
  return out;
}

/** A deterministic PRNG (tests must repeat). */
function rng(seed) {
  let s = seed >>> 0;
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}
/** `bytes` cut at `k` random offsets. */
function cutAt(bytes, k, r) {
  const cuts = Array.from({ length: k }, () => r(bytes.length + 1)).sort((a, b) => a - b);
  const chunks = [];
  let prev = 0;
  for (const c of cuts) {
    chunks.push(bytes.subarray(prev, c));
    prev = c;
  }
  chunks.push(bytes.subarray(prev));
  return chunks;
}

test("p_6_3_1_basic_events_and_event_names", () => {
  assert.deepEqual(decode('event: ping\ndata: {"a":1}\n\ndata: two\n\n'), [named("ping", '{"a":1}'), ev("two")]);
});

test("p_6_3_1_multi_line_data_joined_with_newline", () => {
  assert.deepEqual(decode("data: a\ndata:b\ndata\ndata:  c\n\n"), [ev("a\nb\n\n c")]);
});

test("p_6_3_1_one_leading_space_stripped_only", () => {
  assert.deepEqual(decode("data:   x \n\n"), [ev("  x ")]);
  assert.deepEqual(decode("data:\tx\n\n"), [ev("\tx")]);
  assert.deepEqual(decode("event:  e\ndata: x\n\n"), [named(" e", "x")]);
});

test("p_6_3_1_comments_and_unknown_fields_ignored", () => {
  const out = decode(": keep-alive\n:\nfoo: bar\nDATA: no\ndata: yes\n: between\n\n");
  assert.deepEqual(out, [ev("yes")]);
  // A space before the colon makes another field name.
  assert.deepEqual(decode("data : no\nevent : no\ndata: yes\n\n"), [ev("yes")]);
});

test("p_6_3_1_event_without_data_is_not_dispatched_and_resets_type", () => {
  assert.deepEqual(decode("event: a\n\ndata: x\n\n"), [ev("x")]);
  assert.deepEqual(decode("id: 1\nretry: 5\n\n"), []);
  assert.deepEqual(decode("data\n\n"), [ev("")]);
  assert.deepEqual(decode("data:\n\n"), [ev("")]);
  assert.deepEqual(decode("event: e\ndata:\n\n"), [named("e", "")]);
  // The type is reset after a dispatch too, and an empty type is no type.
  assert.deepEqual(decode("event: e\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n"), [named("e", "1"), ev("2"), ev("3")]);
});

test("p_6_3_1_line_without_colon_is_field_with_empty_value", () => {
  assert.deepEqual(decode("data\ndata\n\n"), [ev("\n")]);
  assert.deepEqual(decode("event\ndata: x\n\n"), [ev("x")]);
  assert.deepEqual(decode("event: e\nevent\ndata: x\n\n"), [ev("x")]);
});

test("p_6_3_1_id_and_retry_fields (not reported: they neither dispatch nor change the event)", () => {
  const out = decode("id: 42\nretry: 1500\ndata: x\n\ndata: y\n\nid\nretry: 12a\ndata: z\n\n");
  assert.deepEqual(out, [ev("x"), ev("y"), ev("z")]);
  assert.deepEqual(decode("id: a\0b\ndata: x\n\n"), [ev("x")]);
  assert.deepEqual(decode("retry: 99999999999999999999999\ndata: x\n\n"), [ev("x")]);
  assert.deepEqual(decode("retry: 1\nretry: x\nid: a\nid: b\ndata: x\n\n"), [ev("x")]);
});

test("p_6_3_1_all_three_line_endings", () => {
  const expected = [named("e", "a\nb"), ev("c")];
  assert.deepEqual(decode("event: e\ndata: a\ndata: b\n\ndata: c\n\n"), expected);
  assert.deepEqual(decode("event: e\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"), expected);
  assert.deepEqual(decode("event: e\rdata: a\rdata: b\r\rdata: c\r\r"), expected);
  assert.deepEqual(decode("event: e\rdata: a\r\ndata: b\n\r\ndata: c\r\n\r"), expected);
});

test("p_6_1_8_crlf_split_across_chunks_is_one_line_end", () => {
  const out = decodeChunks(["event: a\r", "\ndata: x\r", "\n", "data: y\r", "\n\r", "\n"]);
  assert.deepEqual(out, [named("a", "x\ny")]);
  assert.deepEqual(decodeChunks(["data: x\r", "\r"]), [ev("x")]);
  assert.deepEqual(decodeChunks(["data: x\r", "data: y\r\r"]), [ev("x\ny")]);
  assert.deepEqual(decodeChunks(["data: x\r", "", "\n", "", "\r", "", "\n"]), [ev("x")]);
  assert.deepEqual(decodeBytewise("data: a\r\n\r\ndata: b\r\n\r\n"), [ev("a"), ev("b")]);
  // A chunk that only starts a character (no text yet) keeps the pending `\r` pending.
  assert.deepEqual(decodeChunks(["data: x\r", "\xE2", "\x82\xAC\ndata: y\n\n"]), [ev("x\ny")]);
  assert.deepEqual(decodeChunks(["data: x\r", "\xE2", "\x82", "\n\n"]), [ev("x")]);
});

test("find_line_end_finds_the_first_line_end_at_every_offset (as lines cut at every offset)", () => {
  for (let len = 0; len < 20; len++) {
    for (let at = 0; at <= len; at++) {
      for (const end of ["\n", "\r"]) {
        const chars = Array(len).fill("x");
        if (at < len) chars[at] = end;
        // Near misses (VT, FF, and the high-bit twins of LF/CR as text) and a later line end.
        const text = `data:${chars.join("")}${at < len ? "\x0b\x0c\u008a\u008d\n" : ""}\n`;
        const bytes = utf(text);
        assert.deepEqual(decode(bytes), reference(bytes), `len ${len}, at ${at}`);
      }
    }
  }
  assert.deepEqual(decode(utf("data:\x0b\x0c\u008a\u008d\x0e\x09\0\u00ff\n\n")), [ev("\x0b\x0c\u008a\u008d\x0e\x09\0\u00ff")]);
});

test("p_6_3_1_split_utf8_characters_are_joined", () => {
  const text = utf("data: h\u00e9\u20ac\u{1F600}\u4e2d\n\n");
  const expected = [ev("h\u00e9\u20ac\u{1F600}\u4e2d")];
  assert.deepEqual(decodeBytewise(text), expected);
  for (let cut = 0; cut < text.length; cut++) {
    assert.deepEqual(decodeChunks([text.subarray(0, cut), text.subarray(cut)]), expected, `cut at ${cut}`);
  }
  const smile = utf("\u{1F600}");
  const out = decodeChunks(["data: ", smile.subarray(0, 1), "", smile.subarray(1, 3), smile.subarray(3), "\n\n"]);
  assert.deepEqual(out, [ev("\u{1F600}")]);
});

test("p_6_3_1_invalid_utf8_becomes_replacement_characters", () => {
  const bytes = bin("data: a\xE2\x82xb\x80\x80c\xC0\x80d\xED\xA0\x80e\xF4\x90\x80\x80\n\n");
  const expected = "a\uFFFDxb\uFFFD\uFFFDc\uFFFD\uFFFDd\uFFFD\uFFFD\uFFFDe\uFFFD\uFFFD\uFFFD\uFFFD";
  assert.deepEqual(decode(bytes), [ev(expected)]);
  assert.deepEqual(decodeBytewise(bytes), [ev(expected)]);
  assert.deepEqual(decodeChunks(["data: a\xF0\x9F\x98"]), [ev("a\uFFFD")]);
  assert.deepEqual(decodeChunks(["data: \xE2\x82", "\nq\n\n"]), [ev("\uFFFD")]);
  assert.deepEqual(decodeChunks(["data: \xE2", "\xE2\x82\xAC\n\n"]), [ev("\uFFFD\u20ac")]);
  // A U+FFFD in the input is text like any other; bytes that cannot end a
  // character at a chunk's end (C0, F5, ED A0) are replaced at once, not carried.
  assert.deepEqual(decode(utf("data: \uFFFD\n\n")), [ev("\uFFFD")]);
  assert.deepEqual(decodeChunks(["data: \xC0", "\x80\n\n"]), [ev("\uFFFD\uFFFD")]);
  assert.deepEqual(decodeChunks(["data: \xF5", "\n\n"]), [ev("\uFFFD")]);
  assert.deepEqual(decodeChunks(["data: \xED\xA0", "\x80\n\n"]), [ev("\uFFFD\uFFFD\uFFFD")]);
  // A carried prefix broken at the start of a chunk, then more invalid bytes, then a new cut character.
  assert.deepEqual(decodeChunks(["data: \xF0\x9F", "\x41\xFF\xE2", "\x82\xAC\n\n"]), [ev("\uFFFDA\uFFFD\u20ac")]);
});

test("p_6_3_1_leading_bom_dropped_once", () => {
  assert.deepEqual(decode("\xEF\xBB\xBFdata: x\n\n"), [ev("x")]);
  assert.deepEqual(decodeChunks(["\xEF", "\xBB", "\xBFdata: x\n\n"]), [ev("x")]);
  assert.deepEqual(decode("\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n"), [ev("y")]);
  assert.deepEqual(decode("data: \xEF\xBB\xBFx\n\n"), [ev("\uFEFFx")]);
  // Only the first character counts: after an invalid first byte, a BOM is text.
  assert.deepEqual(decode("\xFF\xEF\xBB\xBF\ndata: x\n\n"), [ev("x")]);
  assert.deepEqual(decodeChunks(["\xEF\xBB\xBF", "\xEF\xBB\xBFdata: x\n\n"]), []);
});

test("p_6_3_1_eof_flushes_pending_event", () => {
  assert.deepEqual(decode("data: x\n"), [ev("x")]);
  assert.deepEqual(decode("data: x"), [ev("x")]);
  assert.deepEqual(decode("event: e\ndata: x\r"), [named("e", "x")]);
  assert.deepEqual(decode("event: e\n"), []);
  assert.deepEqual(decode(": only a comment"), []);
  assert.deepEqual(decode(""), []);
  const d = new SseDecoder();
  const out = [];
  d.push(bin("data: a"), out);
  d.finish(out);
  d.push(bin("\xEF\xBB\xBFdata: b\n\n"), out);
  d.finish(out);
  assert.deepEqual(out, [ev("a"), ev("b")]);
  // A character cut by the end of input is one U+FFFD, and the next stream starts clean (no carry, no `\r`).
  d.push(bin("data: c\xE2\x82\r"), out);
  d.finish(out);
  d.push(bin("\xAC\ndata: d\n\n"), out);
  d.finish(out);
  assert.deepEqual(out.slice(2), [ev("c\uFFFD"), ev("d")]);
});

test("p_6_3_1_events_dispatched_as_soon_as_blank_line_arrives", () => {
  const d = new SseDecoder();
  const out = [];
  d.push(bin("data: a\n"), out);
  assert.deepEqual(out, []);
  d.push(bin("\n"), out);
  assert.deepEqual(out, [ev("a")]);
  d.push(bin("data: b\r"), out);
  d.push(bin("\r"), out);
  assert.deepEqual(out, [ev("a"), ev("b")]);
});

test("p_6_3_1_long_line_across_many_chunks", () => {
  const payload = "x".repeat(100_000);
  assert.deepEqual(decodeChunks(split(utf(`data: ${payload}\n\n`), 7)), [ev(payload)]);
});

test("p_6_3_1_matches_reference_model_on_fixed_corpus", () => {
  const corpus = [
    'event: message_start\ndata: {"type":"message_start"}\n\nevent: ping\ndata: {}\n\n',
    "data: [DONE]\n\n",
    "\r\n\r\ndata: x\r\n",
    "data: a\r\r\rdata: b",
    "\xEF\xBB\xBF: c\rdata:\xFF\n\n",
  ].map(bin);
  for (const bytes of corpus) {
    assert.deepEqual(decode(bytes), reference(bytes));
    assert.deepEqual(decodeBytewise(bytes), reference(bytes));
  }
});

test("issue_13_line_and_event_limits_are_errors_not_aborts", () => {
  const err = { error: tooLarge(16), before: [] };
  assert.deepEqual(decodeLimited(["data: 0123456789\n\n"], 16), [ev("0123456789")]);
  assert.deepEqual(decodeLimited(["data: 0123456789a\n\n"], 16), err);
  assert.deepEqual(decodeLimited(["data: 01234", "56789a", "\n\n"], 16), err);
  assert.deepEqual(decodeLimited(["data: 0123456789abc"], 16), err);
  assert.deepEqual(decodeLimited([": 0123456789abcdefgh\n"], 16), err);
  assert.deepEqual(decodeLimited(["data: 012345678\ndata: 0123456\n\n"], 16), err);
  assert.deepEqual(decodeLimited(["data: 01234567\ndata: 0123456\n\n"], 16), [ev("01234567\n0123456")]);
  assert.equal(decodeLimited(["data: 0123456789\n\n".repeat(50)], 16).length, 50);
  assert.equal(new SseError(16).message, tooLarge(16));
});

test("issue_13_default_limit_is_64_mib", () => {
  assert.equal(DEFAULT_MAX_EVENT_BYTES, 64 * 1024 * 1024);
  assert.equal(new SseDecoder().limit, 64 * 1024 * 1024);
  const d = new SseDecoder(10);
  d.finish([]);
  assert.throws(() => d.push(bin("data: 0123456789\n\n"), []), { name: "SseError", message: tooLarge(10) });
});

test("issue_13_long_data_lines_go_straight_to_the_data", () => {
  const payload = "z".repeat(3 * 64 * 1024);
  const text = utf(`event: big\ndata: ${payload}\ndata:  tail\n\ndata: small\n\n`);
  for (const size of [1000, 4095, 4096, 4097, 65536]) {
    const events = decodeLimited(split(text, size), payload.length + 7);
    assert.deepEqual(events, [named("big", `${payload}\n tail`), ev("small")], `chunks of ${size}`);
    assert.deepEqual(events, reference(text));
  }
  assert.deepEqual(decodeLimited(split(text, 4096), payload.length + 5), { error: tooLarge(payload.length + 5), before: [] });
});

test("the limit counts UTF-8 bytes, not UTF-16 units", () => {
  // "é" is 2 bytes, "€" 3, "😀" 4 (2 units).
  assert.deepEqual(decodeLimited(["data: \u00e9\u00e9\u00e9\u00e9\u00e9\n\n"].map(utf), 16), [ev("\u00e9".repeat(5))]);
  assert.deepEqual(decodeLimited([utf("data: \u00e9\u00e9\u00e9\u00e9\u00e9x\n\n")], 16).error, tooLarge(16));
  assert.deepEqual(decodeLimited([utf("data: \u{1F600}\u{1F600}\n\n")], 14), [ev("\u{1F600}\u{1F600}")]);
  assert.deepEqual(decodeLimited([utf("data: \u{1F600}\u{1F600}\n\n")], 13).error, tooLarge(13));
  // Few enough units that 3 bytes each would fit, and then the exact count once they might not.
  assert.deepEqual(decodeLimited([utf("data: \u20ac\u20ac\u20ac\u20ac\n\n")], 18), [ev("\u20ac".repeat(4))]);
  assert.deepEqual(decodeLimited([utf("data: \u20ac\u20ac\u20ac\u20ac\n\n")], 17).error, tooLarge(17));
  // The event's data over several lines: 7 + 1 + 7 bytes of 15 allowed, then one more byte is too many.
  const lines = utf("data: \u20acab\u00e9\ndata: \u00e9\u00e9\u00e9x\n\n");
  for (const chunks of [[lines], split(lines, 1), split(lines, 3)]) {
    assert.deepEqual(decodeLimited(chunks, 15), [ev("\u20acab\u00e9\n\u00e9\u00e9\u00e9x")]);
    assert.equal(decodeLimited(chunks, 14).error, tooLarge(14));
  }
  // An invalid byte counts as the 3 bytes of its U+FFFD.
  assert.deepEqual(decodeLimited(["data: \xFF\xFF\n\n"], 12), [ev("\uFFFD\uFFFD")]);
  assert.equal(decodeLimited(["data: \xFF\xFF\n\n"], 11).error, tooLarge(11));
  // The BOM is not counted.
  assert.deepEqual(decodeLimited(["\xEF\xBB\xBFdata: 0123456789\n\n"], 16), [ev("0123456789")]);
});

test("an error comes after the events dispatched before it in the same chunk", () => {
  const d = new SseDecoder(16);
  const out = [];
  assert.throws(() => d.push(bin("event: a\ndata: 1\n\ndata: 2\n\ndata: 0123456789abcdefgh\n\n"), out), SseError);
  assert.deepEqual(out, [named("a", "1"), ev("2")]);
  const e = new SseError(5);
  assert.ok(e instanceof Error);
  assert.equal(e.name, "SseError");
  assert.equal(e.limit, 5);
});

test("a long partial data line stops counting its field name past 4096 bytes", () => {
  // A data line still unfinished at a chunk's end with 4096 bytes or more moves into the event's data
  // (DIRECT_DATA_AFTER): from then on only the value counts against the limit, not "data: ".
  const limit = 5000;
  const line = `data: ${"x".repeat(4995)}\n\n`; // 5001 bytes of line, 4995 of value
  assert.equal(decodeLimited([line], limit).error, tooLarge(limit));
  assert.deepEqual(decodeLimited([line.slice(0, 4100), line.slice(4100)], limit), [ev("x".repeat(4995))]);
  // Cut before 4096 bytes: still an ordinary line, refused when it ends.
  assert.equal(decodeLimited([line.slice(0, 4095), line.slice(4095)], limit).error, tooLarge(limit));
  // The threshold is in bytes: 1366 "中" (4098 bytes) are past it, though fewer than 4096 units.
  const cjk = utf(`data: ${"\u4e2d".repeat(1366)}${"x".repeat(897)}\n\n`); // 5001 bytes of line, 4995 of value
  assert.deepEqual(decodeLimited([cjk.subarray(0, 4104), cjk.subarray(4104)], limit), [ev("\u4e2d".repeat(1366) + "x".repeat(897))]);
  assert.equal(decodeLimited([cjk.subarray(0, 4095), cjk.subarray(4095)], limit).error, tooLarge(limit));
  // With the data of earlier lines counted, and a finish inside such a line.
  const two = `data: ab\ndata: ${"y".repeat(4990)}`;
  assert.deepEqual(decodeLimited([two.slice(0, 4200), two.slice(4200)], limit), [ev(`ab\n${"y".repeat(4990)}`)]);
  assert.equal(decodeLimited([two.slice(0, 4200), two.slice(4200), "yyyyyyy", "y"], limit).error, tooLarge(limit));
  // The text reaches the lines in pieces: an invalid byte, or a character completed from
  // the last chunk, ends a piece, so the line may pass 4096 bytes before it ends within the same chunk.
  const invalid = concat(utf(`data: ${"x".repeat(4094)}`), bin("\xFF"), utf(`${"x".repeat(900)}\n\n`));
  assert.deepEqual(decodeLimited([invalid], limit), [ev(`${"x".repeat(4094)}\uFFFD${"x".repeat(900)}`)]);
  const carried = [concat(utf(`data: ${"x".repeat(4089)}`), bin("\xE2\x82")), concat(bin("\xAC"), utf(`${"x".repeat(903)}\n\n`))];
  assert.deepEqual(decodeLimited(carried, limit), [ev(`${"x".repeat(4089)}\u20ac${"x".repeat(903)}`)]);
  // Other fields never switch.
  const comment = `: ${"c".repeat(4999)}\n`;
  assert.equal(decodeLimited([comment.slice(0, 4200), comment.slice(4200)], limit).error, tooLarge(limit));
});

test("issue_13_long_lines_any_chunking_match_reference (seeded random inputs)", () => {
  const r = rng(13);
  const heads = ["data:", "data: ", "data:  ", ": ", "event: ", "id: ", "dat"];
  const ends = ["\n", "\r\n", "\r", "\n\n"];
  for (let n = 0; n < 300; n++) {
    let text = "";
    const fields = 1 + r(4);
    for (let i = 0; i < fields; i++) {
      const fill = ["a", "\u00e9", "\u20ac", "\u{1F600}"][r(4)];
      text += heads[r(heads.length)] + String.fromCharCode(97 + (i % 26)) + fill.repeat(r(3000)) + ends[r(ends.length)];
    }
    const bytes = utf(text);
    assert.deepEqual(decodeChunks(cutAt(bytes, r(6), r)), reference(bytes), `case ${n}`);
  }
});

test("p_6_3_1_any_bytes_any_chunking_never_panics_and_matches_reference (seeded random inputs)", () => {
  const r = rng(631);
  const atoms = ["\n", "\r", "\r\n", "data:", "data: ", "event: ", "id:", "retry: ", ":", " ", "12", "\uFEFF", "\u{1F600}", "\u20ac", "\0"].map(utf);
  for (let n = 0; n < 3000; n++) {
    const parts = [];
    if (n % 2) for (let i = r(200); i > 0; i--) parts.push(Uint8Array.of(r(256)));
    else {
      for (let i = r(40); i > 0; i--) {
        const kind = r(6);
        parts.push(kind < 4 ? atoms[r(atoms.length)] : kind < 5 ? Uint8Array.of(r(256)) : utf("abcd".slice(0, 1 + r(4))));
      }
    }
    const bytes = concat(...parts);
    const expected = reference(bytes);
    assert.deepEqual(decodeChunks(cutAt(bytes, r(8), r)), expected, `case ${n}`);
    if (n % 10 === 0) assert.deepEqual(decodeBytewise(bytes), expected, `case ${n} bytewise`);
  }
});
