// The one incremental Server-Sent Events decoder of the built-in providers (P-6.3.1, P-6.1.8): bytes → UTF-8 text →
// lines → events. WHATWG framing, except that `finish` processes an unterminated last line and dispatches a pending
// event that has data. `id` and `retry` are not reported (no provider reads them). Bounded: one line, and one event's
// data, may hold at most `limit` UTF-8 bytes.

import { utf8Length } from "../partial-json.js";

/** Default bound on one line and on one event's data, in UTF-8 bytes: 64 MiB (`maxStreamEventBytes`). */
export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024;

/** A partial `data` line this long (bytes) is moved to the event's data; the limit then counts its value only. */
const DIRECT_DATA_AFTER = 4096;

/** Why decoding stopped (the decoder is unusable afterwards). `.message` is the stream error text. */
export class SseError extends Error {
  /** @param {number} limit the decoder's limit, which a line or an event's data would exceed */
  constructor(limit) {
    super(`Provider stream event exceeds the limit of ${limit} bytes (maxStreamEventBytes)`);
    this.name = "SseError";
    this.limit = limit;
  }
}

// The chunk's bytes are checked strictly first (the common case); invalid input is then fed as its valid runs and one
// U+FFFD per maximal invalid subpart (WHATWG's replacement rule). The BOM is handled here, not by the decoders.
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lossy = new TextDecoder("utf-8", { ignoreBOM: true });

/** The length of the UTF-8 sequence a lead byte starts (0 for a byte that cannot lead one). */
const seqLen = (b) => (b < 0xc2 ? 0 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : b < 0xf5 ? 4 : 0);

/** Whether `b` may follow the `have` bytes of a sequence led by `lead` (narrower second byte after E0 ED F0 F4). */
function follows(lead, have, b) {
  if (have === 1) {
    if (lead === 0xe0) return b >= 0xa0 && b <= 0xbf;
    if (lead === 0xed) return b >= 0x80 && b <= 0x9f;
    if (lead === 0xf0) return b >= 0x90 && b <= 0xbf;
    if (lead === 0xf4) return b >= 0x80 && b <= 0x8f;
  }
  return b >= 0x80 && b <= 0xbf;
}

/** A field's value from `at` on, one leading space dropped. */
const valueAt = (line, at) => line.slice(line.charCodeAt(at) === 32 ? at + 1 : at);

/** Incremental decoder: `push` each network chunk, then `finish` once at end of input. Events are appended to `out`
 *  as soon as their blank line has been seen; an error is thrown after the events that came before it. */
export class SseDecoder {
  /** @param {number} [limit] the most UTF-8 bytes one line, or one event's data, may hold */
  constructor(limit = DEFAULT_MAX_EVENT_BYTES) {
    this.limit = limit;
    reset(this);
  }

  /** Decodes one network chunk.
   *  @param {Uint8Array} bytes @param {Array<{event: string|undefined, data: string}>} out @throws {SseError} */
  push(bytes, out) {
    let start = 0;
    const carry = this.carry;
    if (carry.length) {
      // Complete the character the last chunk cut, or replace it and read the breaking byte afresh.
      const lead = carry[0];
      for (;;) {
        if (carry.length === seqLen(lead)) {
          const s = lossy.decode(Uint8Array.from(carry));
          carry.length = 0;
          this.feed(s, out);
          break;
        }
        if (start === bytes.length) return;
        if (!follows(lead, carry.length, bytes[start])) {
          carry.length = 0;
          this.feed("\uFFFD", out);
          break;
        }
        carry.push(bytes[start++]);
      }
    }
    // A proper prefix of a character at the end waits for the next chunk.
    let end = bytes.length;
    for (let j = end - 1; j >= start && j >= end - 3; j--) {
      const b = bytes[j];
      if (b < 0x80 || b > 0xbf) {
        let k = j + 1;
        while (k < end && follows(b, k - j, bytes[k])) k++;
        if (k === end && end - j < seqLen(b)) end = j;
        break;
      }
    }
    if (start < end) {
      let text;
      try {
        text = strict.decode(bytes.subarray(start, end));
      } catch {
        // invalid UTF-8: below
      }
      if (text === undefined) this.feedLossy(bytes, start, end, out);
      else this.feed(text, out);
    }
    for (let j = end; j < bytes.length; j++) carry.push(bytes[j]);
  }

  /** End of input: an incomplete character becomes U+FFFD, an unterminated last line is processed and a pending
   *  event with data is dispatched. The decoder is then reset (its limit kept) for a new stream.
   *  @param {Array<{event: string|undefined, data: string}>} out @throws {SseError} */
  finish(out) {
    if (this.carry.length) {
      this.carry.length = 0;
      this.feed("\uFFFD", out);
    }
    if (this.dataLine) this.endDataLine("");
    else if (this.line) {
      const line = this.line;
      this.line = "";
      this.process(line, out);
    }
    this.dispatch(out);
    reset(this);
  }

  /** Invalid UTF-8: the valid runs and one U+FFFD per maximal invalid subpart, each fed on its own. */
  feedLossy(bytes, start, end, out) {
    let from = start;
    for (let i = start; i < end; ) {
      const b = bytes[i];
      if (b < 0x80) {
        i++;
        continue;
      }
      const need = seqLen(b);
      let k = 1;
      while (k < need && i + k < end && follows(b, k, bytes[i + k])) k++;
      if (k === need) {
        i += k;
        continue;
      }
      this.feed(lossy.decode(bytes.subarray(from, i)), out);
      this.feed("\uFFFD", out);
      from = i += k;
    }
    this.feed(lossy.decode(bytes.subarray(from, end)), out);
  }

  /** Splits decoded text into lines (`\r\n`, `\r` or `\n`; a `\r\n` may be cut between two texts). */
  feed(text, out) {
    if (!text) return;
    if (!this.bom) {
      this.bom = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.cr && text) {
      this.cr = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    let pos = 0;
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf < pos && lf !== -1) lf = text.indexOf("\n", pos);
      if (cr < pos && cr !== -1) cr = text.indexOf("\r", pos);
      const end = lf === -1 ? cr : cr === -1 || lf < cr ? lf : cr;
      if (end === -1) break;
      const piece = text.slice(pos, end);
      if (this.dataLine) this.endDataLine(piece);
      else {
        this.size(this.line, this.lineBytes, piece, 0);
        const line = this.line ? this.line + piece : piece;
        this.line = "";
        this.lineBytes = -1;
        this.process(line, out);
      }
      pos = end + 1;
      if (end === cr) {
        if (pos === text.length) this.cr = true;
        else if (text.charCodeAt(pos) === 10) pos++;
      }
    }
    if (pos < text.length) this.keepPartial(pos ? text.slice(pos) : text);
  }

  /** Keeps the start of an unfinished line; a long `data` line goes on into the event's data as it arrives. */
  keepPartial(rest) {
    if (this.dataLine) {
      this.dataBytes = this.size(this.data, this.dataBytes, rest, 0);
      this.data += rest;
      return;
    }
    this.lineBytes = this.size(this.line, this.lineBytes, rest, 0);
    this.line += rest;
    if (this.line.startsWith("data:") && this.lineAtLeast(DIRECT_DATA_AFTER)) {
      const value = valueAt(this.line, 5);
      this.line = "";
      this.lineBytes = -1;
      this.pushData(value);
      this.dataLine = true;
    }
  }

  /** Whether the unfinished line holds at least `n` UTF-8 bytes. */
  lineAtLeast(n) {
    const units = this.line.length;
    if (units >= n) return true;
    if (3 * units < n) return false;
    if (this.lineBytes < 0) this.lineBytes = utf8Length(this.line);
    return this.lineBytes >= n;
  }

  /** WHATWG: process one line (without its line end). */
  process(line, out) {
    if (!line) this.dispatch(out);
    else if (line.startsWith("data:")) this.pushData(valueAt(line, 5));
    else if (line.startsWith("event:")) this.event = valueAt(line, 6);
    else if (line === "data") this.pushData("");
    else if (line === "event") this.event = "";
    // Anything else is ignored: comments (":", keep-alives), `id`, `retry` and unknown fields.
  }

  endDataLine(tail) {
    this.dataLine = false;
    this.dataBytes = this.size(this.data, this.dataBytes, tail, 0);
    this.data += tail;
  }

  pushData(value) {
    const sep = this.hasData ? 1 : 0;
    this.dataBytes = this.size(this.data, this.dataBytes, value, sep);
    this.data = sep ? this.data + "\n" + value : value;
    this.hasData = true;
  }

  /** WHATWG: dispatch the event if a data line came, then reset its fields. */
  dispatch(out) {
    if (this.hasData) out.push({ event: this.event || undefined, data: this.data });
    this.event = "";
    this.data = "";
    this.dataBytes = -1;
    this.hasData = false;
  }

  /** The UTF-8 size of `cur` + `extra` + `add`, or throws past the limit. `bytes` is the size of `cur`, or -1 when
   *  not counted: counting starts (and -1 stops being returned) only once 3 bytes a unit could pass the limit. */
  size(cur, bytes, add, extra) {
    if (bytes < 0) {
      if (3 * (cur.length + add.length) + extra <= this.limit) return -1;
      bytes = utf8Length(cur);
    }
    bytes += extra + utf8Length(add);
    if (bytes > this.limit) throw new SseError(this.limit);
    return bytes;
  }
}

function reset(d) {
  d.carry = []; // the first bytes of a character cut by the chunk's end (a valid proper prefix)
  d.bom = false; // the first character (a possible BOM) was looked at
  d.cr = false; // the last text ended with `\r`: a `\n` starting the next is part of that line end
  d.line = ""; // the unfinished line
  d.lineBytes = -1;
  d.dataLine = false; // the unfinished line is a data line whose value is being appended to `data`
  d.event = "";
  d.data = "";
  d.dataBytes = -1;
  d.hasData = false;
}
