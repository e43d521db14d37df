// The HTTP side of the built-in providers (§6, P-6.2): builds the request with the wire format, sends it through
// `options.fetch` or `globalThis.fetch` with retries and abort, reads the body chunk by chunk through the SSE decoder
// into the wire format's mapper and the assembler, and applies the assembler's ops to the one message object every
// event shares. Never throws: every failure is the final `error` event.

import { errorMessage } from "../../src/js/snippets/values.js";
import { stringify } from "../../src/js/snippets/view.js";
import { zeroUsage } from "../usage.js";
import { Assembler, applyOps, pushError, pushEvent } from "./assemble.js";
import { mapperFor, onUnparsed, wireFormat } from "./index.js";
import { get, parseData, str } from "./json.js";
import { parseJson } from "./repair.js";
import { apiKeyEnvVars } from "./request.js";
import { envVar, failureMessage, globalFetch, headerEntries, retryableFailure } from "./http.js";
import { projectMessages } from "./project.js";
import { DEFAULT_MAX_EVENT_BYTES, SseDecoder } from "./sse.js";

const REQUEST_ABORTED = "Request was aborted";
const ERROR_BODY_LIMIT = 64 * 1024;
/** What stands in an error text for a secret the request carried (P-6.2.3). */
const REDACTED = "[redacted]";
/** Shorter secrets (in UTF-8 bytes) are not scrubbed: they would cut ordinary words out of messages. */
const MIN_SECRET_LEN = 6;
/** Header names whose values are credentials, scrubbed from errors like the API key. */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"];

/** How a request ended early: `text` is its error, or undefined for an abort. */
class End {
  constructor(text) {
    this.text = text;
  }
}
const ABORTED = new End();

/** Any non-null object, arrays included (unlike json.js `isObject`). */
const isNonNullObject = (v) => v !== null && typeof v === "object";
/** `v[key]`, or undefined where reading throws (a primitive, a hostile getter). */
const read = (v, key) => {
  try {
    return Reflect.get(v, key);
  } catch {}
};
const silence = (p) => {
  if (p && typeof p.then === "function") p.then(undefined, () => {});
};
/** `f(...args)` with `this`, awaited: a sync throw is a rejection too. */
const call = async (f, self, args) => Reflect.apply(f, self, args);
const cancel = (v) => {
  try {
    silence(Reflect.apply(Reflect.get(v, "cancel"), v, []));
  } catch {}
};
const asciiLower = (s) => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());
/** The bytes `TextEncoder` writes for `s` (a lone surrogate as U+FFFD). */
const encodedLength = (s) => new TextEncoder().encode(s).length;

/** The assistant message of a request: no content, zero usage (`empty_assistant` of the core). */
function emptyAssistant(model, stopReason, text) {
  const [api, provider, id] = ["api", "provider", "id"].map((key) => read(model, key));
  const message = { role: "assistant", content: [], api, provider, model: id, usage: zeroUsage(), stopReason };
  if (text !== undefined) message.errorMessage = text;
  message.timestamp = Date.now();
  return message;
}

/**
 * Fills `stream` (an AssistantMessageEventStream: `push(event)`) with the events of one request of a built-in
 * provider (D7, §6). Never throws: a `model.api` no wire format serves is one `error` event at once (P-6.1.1); any
 * other failure is the final `error` event.
 * @param {object} model
 * @param {{ messages: object[] }} context
 * @param {object} [options]
 * @param {{ push(event: object): void }} stream
 */
export function streamBuiltin(model, context, options, stream) {
  const api = read(model, "api");
  const format = typeof api === "string" ? wireFormat(api) : undefined;
  if (format === undefined) {
    const name = typeof api === "string" ? api : errorMessage(api);
    const text = `No built-in provider for api "${name}". Pass streamFn or call setDefaultStreamFn().`;
    pushEvent(stream, { type: "error", reason: "error", error: emptyAssistant(model, "error", text) });
    return;
  }
  const driver = new Driver(stream, model, context, isNonNullObject(options) ? options : {});
  Promise.resolve()
    .then(() => driver.run(format))
    .catch((e) => driver.end(e instanceof End ? e : new End(errorMessage(e))));
}

// One abort listener per signal, shared by every wait on it: concurrent requests on one signal add one listener, not
// one each (Node warns past ten).
const watches = new WeakMap();

/**
 * `{ promise, cancel }`: the promise resolves once `signal` aborts (at once if it has, or if `aborted` throws), never
 * for no signal or one without `addEventListener`.
 */
function abortWait(signal) {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  let stop = () => {};
  if (isNonNullObject(signal) || typeof signal === "function") {
    let aborted;
    try {
      aborted = signal.aborted;
    } catch {
      aborted = true;
    }
    if (aborted) resolve();
    else {
      let watch = watches.get(signal);
      if (watch === undefined) {
        const waits = new Set();
        const listener = () => {
          for (const wake of waits) wake();
          waits.clear();
        };
        watches.set(signal, (watch = { waits, listener }));
      }
      try {
        if (watch.waits.size === 0) signal.addEventListener("abort", watch.listener, { once: true });
        watch.waits.add(resolve);
        stop = () => {
          if (!watch.waits.delete(resolve) || watch.waits.size > 0) return;
          try {
            signal.removeEventListener("abort", watch.listener);
          } catch {}
        };
      } catch {}
    }
  }
  return { promise, cancel: stop };
}

function sleep(ms) {
  let id;
  const promise = new Promise((r) => (id = setTimeout(r, ms)));
  return { promise, cancel: () => clearTimeout(id) };
}

/** 500 ms · 2^attempt ± 20 % (P-6.2.6). */
const backoff = (attempt) => 500 * 2 ** Math.min(attempt, 16) * (0.8 + 0.4 * Math.random());

/** `Retry-After` seconds (P-6.2.6): a decimal with optional sign, fraction and exponent, or `inf`/`infinity`/`nan`. */
const DECIMAL = /^[+-]?(?:inf|infinity|nan|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)$/i;

/** `Retry-After` in seconds or as an HTTP date, in milliseconds; undefined when absent or unreadable. */
function retryAfter(headers) {
  let value;
  try {
    value = Reflect.apply(Reflect.get(headers, "get"), headers, ["retry-after"]);
  } catch {}
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (DECIMAL.test(text)) {
    const seconds = Number(text.replace(/inf(inity)?/i, "Infinity"));
    return seconds > 0 ? seconds * 1000 : 0;
  }
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(date - Date.now(), 0) : undefined;
}

/** The response headers as an object of lower-case names (for `onResponse`). */
function headerObject(headers) {
  const object = {};
  for (const [key, value] of headerEntries(headers)) object[key] = value;
  return object;
}

/** The bytes of a chunk as a `TextDecoder` reads them: a `Uint8Array`, any other view, or an `ArrayBuffer`. */
function chunkBytes(value) {
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
}

/** At most `limit` bytes of a response body as text (invalid UTF-8 as U+FFFD), the rest cancelled. */
async function readLimited(response, limit) {
  let reader, pull;
  try {
    const body = Reflect.get(response, "body");
    reader = Reflect.apply(Reflect.get(body, "getReader"), body, []);
    pull = Reflect.get(reader, "read");
  } catch {
    return "";
  }
  const parts = [];
  let size = 0;
  while (size < limit) {
    let chunk, done;
    try {
      chunk = await call(pull, reader, []);
      done = Boolean(Reflect.get(chunk, "done"));
    } catch {
      break;
    }
    if (done) break;
    const bytes = chunkBytes(read(chunk, "value"));
    if (bytes !== undefined) {
      parts.push(bytes);
      size += bytes.length;
    }
  }
  cancel(reader);
  const all = new Uint8Array(Math.min(size, limit));
  let at = 0;
  for (const part of parts) {
    if (at >= all.length) break;
    all.set(part.subarray(0, all.length - at), at);
    at += part.length;
  }
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(all);
}

class Driver {
  constructor(stream, model, context, options) {
    this.stream = stream;
    this.message = emptyAssistant(model, "pending");
    this.model = model;
    this.context = context;
    this.options = options;
    this.signal = read(options, "signal");
    /** The API key and credential header values of the request: never shown in an error (P-6.2.3). */
    this.secrets = [];
  }

  option(key) {
    return read(this.options, key);
  }

  aborted() {
    return Boolean(read(this.signal, "aborted"));
  }

  /** Calls an option hook with `(value, model)`; a throw becomes the error of the request. */
  async hook(name, value) {
    const f = this.option(name);
    if (typeof f !== "function") return undefined;
    try {
      return await Reflect.apply(f, undefined, [value, this.model]);
    } catch (e) {
      throw new End(errorMessage(e));
    }
  }

  async run(format) {
    if (this.aborted()) throw ABORTED;
    const raw = isNonNullObject(this.context) ? read(this.context, "messages") : undefined;
    if (!Array.isArray(raw)) throw new End("streamBuiltin: context.messages must be an array");
    // The fields of the messages the wire formats read, and model and options as JSON data.
    let messages, model, options;
    try {
      [messages, model, options] = projectMessages(raw, this.model, this.options);
    } catch (e) {
      throw new End(errorMessage(e));
    }
    // Generated tool-call ids (Google) take the request's start time.
    if (isNonNullObject(options) && !Array.isArray(options)) options.timestamp = Date.now();
    const input = { model, messages, options, apiKey: this.apiKey(str(model, "provider")) };
    let request;
    try {
      request = format.buildRequest(input);
    } catch (e) {
      throw new End(errorMessage(e));
    }
    const mapper = mapperFor(format, input);
    // openai-completions keeps text and thinking blocks open until the end (P-6.1.4).
    const asm = Assembler.forModel(model, get(model, "api") === "openai-completions");
    // P-6.2.4: onPayload gets the body and may replace it.
    const replaced = await this.hook("onPayload", request.body);
    const response = await this.send(request, replaced === undefined ? request.body : replaced);
    pushEvent(this.stream, { type: "start", partial: this.message });
    await this.readBody(response, mapper, asm);
  }

  /** P-6.2.3: options.apiKey, else options.env[VAR], else the environment. A key that cannot be a header value (CR,
   *  LF, NUL) is refused before any request, naming where it came from but never showing it: fetch would put it
   *  into its TypeError, and that into the transcript. */
  apiKey(provider) {
    const key = this.option("apiKey");
    if (typeof key === "string" && key !== "") return this.checkedKey(key, "options.apiKey");
    const env = this.option("env");
    for (const name of apiKeyEnvVars(provider)) {
      const given = isNonNullObject(env) ? read(env, name) : undefined;
      if (typeof given === "string" && given !== "") return this.checkedKey(given, `options.env.${name}`);
      const found = envVar(name);
      if (typeof found === "string" && found !== "") return this.checkedKey(found, `the environment variable ${name}`);
    }
    return undefined;
  }

  checkedKey(key, source) {
    this.secrets.push(key);
    if (/[\r\n\0]/.test(key)) {
      throw new End(
        `Invalid API key in ${source}: it contains a line break or NUL character (the request was not sent)`,
      );
    }
    return key;
  }

  /** `text` with every secret of the request replaced (longest first, so none survives in part). */
  scrub(text) {
    return this.secrets
      .filter((s) => encodedLength(s) >= MIN_SECRET_LEN && text.includes(s))
      .sort((a, b) => encodedLength(b) - encodedLength(a))
      .reduce((t, secret) => t.split(secret).join(REDACTED), text);
  }

  /** Provider defaults < model.headers < options.headers (`null` removes). */
  headers(request) {
    const merged = request.headers.map(([key, value]) => [key, value]);
    for (const source of [read(this.model, "headers"), this.option("headers")]) {
      if (!isNonNullObject(source)) continue;
      let entries;
      try {
        entries = Object.entries(source);
      } catch {
        continue;
      }
      for (const [key, value] of entries) {
        const name = asciiLower(key);
        for (let i = merged.length - 1; i >= 0; i--) if (asciiLower(merged[i][0]) === name) merged.splice(i, 1);
        if (CREDENTIAL_HEADERS.includes(name) && typeof value === "string") {
          // The value, and its token without the scheme (`Bearer <token>`).
          const trimmed = value.trim();
          const space = trimmed.indexOf(" ");
          if (space !== -1) this.secrets.push(trimmed.slice(space + 1).trim());
          this.secrets.push(value);
        }
        if (value !== null && value !== undefined) merged.push([key, value]);
      }
    }
    const object = {};
    for (const [key, value] of merged) object[key] = value;
    return object;
  }

  /** P-6.2.1, P-6.2.5, P-6.2.6: fetch with headers, retries before any event, HTTP errors. */
  async send(request, payload) {
    const given = this.option("fetch");
    const fetch = typeof given === "function" ? given : globalFetch();
    if (typeof fetch !== "function") throw new End("No fetch function available: pass options.fetch");
    const headers = this.headers(request);
    // A payload `onPayload` made unsendable ends the request with JSON.stringify's error.
    let body;
    try {
      body = stringify(payload) ?? "null";
    } catch (e) {
      throw new End(errorMessage(e));
    }
    const number = (key, ok) => {
      const n = this.option(key);
      return typeof n === "number" && Number.isFinite(n) && ok(n) ? n : undefined;
    };
    const maxRetries = Math.trunc(number("maxRetries", (n) => n >= 0) ?? 2);
    const maxDelay = number("maxRetryDelayMs", (n) => n >= 0) ?? 60000;
    const timeout = number("timeoutMs", (n) => n > 0);
    for (let attempt = 0; ; attempt++) {
      if (this.aborted()) throw ABORTED;
      // With a header timeout, fetch gets its own signal so that a timed-out request is cancelled.
      const controller = timeout === undefined ? undefined : new AbortController();
      const init = { method: "POST", headers, body, signal: controller ? controller.signal : this.signal };
      const sent = call(fetch, undefined, [request.url, init]).then(
        (response) => ({ response }),
        (e) => ({ failure: failureMessage(e), retryable: retryableFailure(e) }),
      );
      let outcome;
      if (controller) {
        const timer = sleep(timeout);
        const stop = abortWait(this.signal);
        outcome = await Promise.race([sent, timer.promise, stop.promise.then(() => ABORTED)]);
        timer.cancel();
        stop.cancel();
        if (outcome === ABORTED) {
          controller.abort();
          throw ABORTED;
        }
        if (outcome === undefined) {
          const text = `Request timed out after ${timeout} ms`;
          controller.abort(new Error(text));
          outcome = { failure: text, retryable: true };
        }
      } else outcome = await sent;
      let wait;
      if ("failure" in outcome) {
        if (this.aborted()) throw ABORTED;
        // A bad URL, header or init fails the same way every time (issue 13). P-6.2.6: a wait above
        // maxRetryDelayMs is not retried, whatever failed.
        wait = backoff(attempt);
        if (!outcome.retryable || attempt >= maxRetries || (maxDelay > 0 && wait > maxDelay)) {
          throw new End(outcome.failure);
        }
      } else {
        const { response } = outcome;
        const found = read(response, "status");
        const status = typeof found === "number" ? found : 0;
        const responseHeaders = read(response, "headers");
        await this.hook("onResponse", { status, headers: headerObject(responseHeaders) });
        if (status >= 200 && status < 300) return response;
        const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
        wait = retryAfter(responseHeaders) ?? backoff(attempt);
        if (!retryable || attempt >= maxRetries || (maxDelay > 0 && wait > maxDelay)) {
          throw new End(`HTTP ${status}: ${await errorDetail(response)}`);
        }
        cancel(read(response, "body"));
      }
      const timer = sleep(wait);
      const stop = abortWait(this.signal);
      const stopped = await Promise.race([timer.promise, stop.promise.then(() => ABORTED)]);
      timer.cancel();
      stop.cancel();
      if (stopped === ABORTED) throw ABORTED;
    }
  }

  async readBody(response, mapper, asm) {
    let reader, pull;
    try {
      const body = read(response, "body");
      reader = Reflect.apply(Reflect.get(body, "getReader"), body, []);
      pull = Reflect.get(reader, "read");
    } catch (e) {
      throw new End(errorMessage(e));
    }
    const stopReading = (end) => {
      cancel(reader);
      return end;
    };
    const limit = this.option("maxStreamEventBytes");
    const decoder = new SseDecoder(
      typeof limit === "number" && limit >= 1 ? Math.floor(Math.min(limit, 2 ** 32 - 1)) : DEFAULT_MAX_EVENT_BYTES,
    );
    const onEvent = this.option("onProviderStreamEvent");
    // With the hook, JS runs between events: each event's ops are applied before the next event. Without it, a
    // chunk's events are mapped, then their ops applied together (in the same order).
    const perEvent = typeof onEvent === "function";
    for (;;) {
      const stop = abortWait(this.signal);
      const next = await Promise.race([
        call(pull, reader, []).then((chunk) => ({ chunk }), (error) => ({ error })),
        stop.promise,
      ]);
      stop.cancel();
      // Once the reply is whole (`done` delivered), what is left of the body is only read to its end: an abort or a
      // failed read then stops reading and adds nothing (P-6.1.5).
      if (next === undefined) {
        if (asm.finished()) return void cancel(reader);
        throw stopReading(ABORTED);
      }
      if ("error" in next) {
        if (asm.finished()) return;
        throw stopReading(this.aborted() ? ABORTED : new End(failureMessage(next.error)));
      }
      const { chunk } = next;
      let done;
      try {
        done = Boolean(Reflect.get(chunk, "done"));
      } catch {
        done = true;
      }
      const events = [];
      try {
        if (done) decoder.finish(events);
        else {
          let value = events; // stays so when `value` cannot be read: the chunk is skipped
          try {
            value = Reflect.get(chunk, "value");
          } catch {}
          if (value !== events) {
            const bytes = chunkBytes(value);
            if (bytes === undefined) throw new End("Provider stream chunk is not an ArrayBuffer or a view of one");
            decoder.push(bytes, events);
          }
        }
      } catch (e) {
        throw stopReading(e instanceof End ? e : new End(errorMessage(e)));
      }
      for (const { event, data: text } of events) {
        if (asm.finished()) break;
        const data = parseData(text);
        // A reply finished by an event that is not JSON (openai-completions' `[DONE]`) reads the body on to its end,
        // so the request completes as the server sent it (a browser shows a cancelled one as failed).
        if (data === undefined) onUnparsed(mapper, event, text, asm);
        else {
          if (perEvent) {
            try {
              await Reflect.apply(onEvent, undefined, [structuredClone(data), this.model]);
            } catch (e) {
              throw stopReading(new End(errorMessage(e)));
            }
          }
          mapper.onEvent(event, data, asm);
        }
        if (perEvent || asm.finished()) this.applyAll(asm);
        if (asm.finished() && data !== undefined) {
          cancel(reader);
          return;
        }
      }
      this.applyAll(asm);
      if (done) {
        if (asm.finished()) return;
        mapper.onEnd(asm);
        if (!asm.finished()) asm.fail("Stream ended before the response completed");
        this.applyAll(asm);
        return;
      }
    }
  }

  applyAll(asm) {
    applyOps(asm.drain(), this.message, this.stream, (text, raw) => this.fail(this.aborted(), text, raw));
  }

  /** The final `error` event for a request that ended early. */
  end(end) {
    this.fail(end === ABORTED || this.aborted(), end.text, undefined);
  }

  /** The final `error` event: `stopReason` `aborted` (with the P-6.1.5 text) or `error`. */
  fail(aborted, text, raw) {
    const reason = aborted ? "aborted" : "error";
    pushError(this.message, this.stream, reason, aborted ? REQUEST_ABORTED : this.scrub(text), raw);
  }
}

/** P-6.2.5: at most 64 KiB of the body; `error.message`, `message` or a string `error`. */
async function errorDetail(response) {
  const text = await readLimited(response, ERROR_BODY_LIMIT);
  try {
    const v = parseJson(text);
    const found = [v?.error?.message, v?.message, v?.error].find((s) => typeof s === "string");
    if (found !== undefined) return found;
  } catch {}
  return text;
}
