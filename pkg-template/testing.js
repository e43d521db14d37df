// `agent-loop-wasm/testing` (issue 44): record a run's model traffic once, replay it offline, byte for byte. A cassette
// stands in for `fetch` (the built-in providers' HTTP: the request, then the response's bytes with their chunk
// boundaries and timing, so a replay goes through exactly the decoder that read them live), for a custom stream
// function (its request and the events it produced) and for tools (their results), and is one versioned JSON
// document that never holds a credential. Plain JS, no wasm, imports nothing of the main entry: it works wherever
// `fetch`, `Response` and `ReadableStream` do (Node 18+, Deno, browsers, workerd). Spec: docs/SPEC.md §14.

/** The version `toJSON()` writes; `createCassette` reads it and refuses any other with a clear error. */
export const CASSETTE_VERSION = 1;
const FORMAT = "agent-loop-wasm/cassette";
const MODES = ["replay", "record"];
const MATCHES = ["order", "content"];

/** Request and response headers that carry credentials: never written to a cassette. */
const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "set-cookie"]);
/** URL query parameters that carry credentials (compared lower-case): dropped from the stored URL. */
const SECRET_PARAMS = new Set(["key", "api_key", "apikey", "api-key", "access_token", "token", "auth", "password", "secret", "signature", "sig"]);
/** What stands in a stored text for a secret value seen in a header or URL (as the providers' errors do). */
const REDACTED = "[redacted]";
/** Shorter values are not scrubbed from texts: they would cut ordinary words. */
const MIN_SECRET_LEN = 6;
/** How much of a differing value a mismatch message shows. */
const SHOWN = 120;

/** A request the cassette cannot serve: the recording and the run have drifted apart. Never retried. */
export class CassetteMismatchError extends Error {
  constructor(message, details) {
    super(message);
    this.name = "CassetteMismatchError";
    /** `{ index, path, recorded, actual }`: which request (0-based), where it first differs, the two values. */
    this.details = details;
    /** The built-in providers retry a failed `fetch` unless the error says it is not worth it. */
    this.retryable = false;
  }
}

function typeError(message) {
  return new TypeError(`agent-loop-wasm/testing: ${message}`);
}

/**
 * A cassette. `options.cassette`: a recording (the value of an earlier `toJSON()`, or its JSON text) to replay or
 * extend; `options.mode`: `"replay"` (default: serve what is recorded, never the network) or `"record"` (call the
 * real service and record everything, starting empty); `options.recordIfMissing`: in replay mode, pass a request the
 * cassette does not hold to the real service and record it (a test run adds its new requests); `options.match`:
 * `"order"` (default: the n-th request gets the n-th recording and must equal it) or `"content"` (the first unplayed
 * recording with the same method, URL and body); `options.fetch`: the real fetch (default `globalThis.fetch` at call
 * time); `options.realtime`: replay at the recorded pace; `options.redact`: more strings never to store.
 */
export function createCassette(options = {}) {
  if (options === null || typeof options !== "object") throw typeError(`createCassette(options): options must be an object, got ${describeType(options)}`);
  const mode = options.mode ?? "replay";
  if (!MODES.includes(mode)) throw typeError(`createCassette(options): options.mode must be "replay" or "record", got ${JSON.stringify(mode)}`);
  const match = options.match ?? "order";
  if (!MATCHES.includes(match)) throw typeError(`createCassette(options): options.match must be "order" or "content", got ${JSON.stringify(match)}`);
  if (options.fetch !== undefined && typeof options.fetch !== "function") throw typeError("createCassette(options): options.fetch must be a function");
  if (options.redact !== undefined && (!Array.isArray(options.redact) || options.redact.some((s) => typeof s !== "string"))) {
    throw typeError("createCassette(options): options.redact must be an array of strings");
  }
  const recorded = mode === "record" ? [] : readRecording(options.cassette);
  return new Cassette({ mode, match, recorded, options });
}

/** Reads the cassette at `path` (Node, Deno), or starts an empty one when the file does not exist and `options.mode`
 *  is `"record"` or `options.recordIfMissing` is set; `save()` writes it back there. */
export async function loadCassette(path, options = {}) {
  if (typeof path !== "string" || path === "") throw typeError("loadCassette(path, options): path must be a non-empty string");
  if (options === null || typeof options !== "object") throw typeError(`loadCassette(path, options): options must be an object, got ${describeType(options)}`);
  const files = fileSystem();
  let text;
  if (options.mode !== "record") {
    try {
      text = await files.read(path);
    } catch (e) {
      if (!(isMissingFile(e) && options.recordIfMissing === true)) {
        throw new Error(`agent-loop-wasm/testing: cannot read the cassette ${path}: ${e?.message ?? e}`, { cause: e });
      }
    }
  }
  const cassette = createCassette({ ...options, cassette: text ?? { format: FORMAT, version: CASSETTE_VERSION, interactions: [] } });
  cassette.path = path;
  return cassette;
}

function readRecording(input) {
  if (input === undefined) throw typeError('createCassette(options): options.cassette is required in "replay" mode (a recording, or its JSON text)');
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch (e) {
      throw typeError(`createCassette(options): options.cassette is not JSON: ${e.message}`);
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw typeError("createCassette(options): options.cassette must be a cassette object");
  if (value.format !== FORMAT) throw typeError(`createCassette(options): options.cassette is not a cassette (its "format" is ${JSON.stringify(value.format)}, expected "${FORMAT}")`);
  if (value.version !== CASSETTE_VERSION) {
    throw typeError(`createCassette(options): the cassette's version ${JSON.stringify(value.version)} is not supported (this package reads version ${CASSETTE_VERSION}); record it again`);
  }
  if (!Array.isArray(value.interactions)) throw typeError('createCassette(options): the cassette has no "interactions" array');
  value.interactions.forEach((entry, i) => {
    const ok = entry !== null && typeof entry === "object" && ["http", "tool", "stream"].includes(entry.type);
    if (!ok) throw typeError(`createCassette(options): interactions[${i}] is not an "http", "tool" or "stream" interaction`);
  });
  return structuredClone(value.interactions);
}

class Cassette {
  #mode;
  #match;
  #recordIfMissing;
  #realtime;
  #realFetch;
  #interactions;
  #played = new Set();
  /** Per interaction type: how many requests of it the run made. */
  #requests = { http: 0, tool: 0, stream: 0 };
  #errors = [];
  #secrets;

  constructor({ mode, match, recorded, options }) {
    this.#mode = mode;
    this.#match = match;
    this.#recordIfMissing = options.recordIfMissing === true;
    this.#realtime = options.realtime === true;
    this.#realFetch = options.fetch;
    this.#interactions = recorded;
    this.#secrets = new Set((options.redact ?? []).filter((s) => s.length >= MIN_SECRET_LEN));
    /** Where `save()` writes (set by `loadCassette`). */
    this.path = undefined;
    this.fetch = (input, init) => this.#fetch(input, init);
    Object.freeze(this.fetch);
  }

  get mode() {
    return this.#mode;
  }

  /** The recording as a cassette document (a copy): `JSON.stringify` it to store it. */
  toJSON() {
    return { format: FORMAT, version: CASSETTE_VERSION, interactions: structuredClone(this.#interactions) };
  }

  /** Writes the cassette as indented JSON to `path` (default: where `loadCassette` read it). */
  async save(path = this.path) {
    if (typeof path !== "string" || path === "") throw typeError("cassette.save(path): path must be a non-empty string (or load the cassette with loadCassette)");
    await fileSystem().write(path, `${JSON.stringify(this.toJSON(), null, 2)}\n`);
  }

  /** Ends a test: writes the cassette when it recorded something and has a path, then throws the first mismatch of
   *  the run (a `CassetteMismatchError`), or when recorded requests were never played (replay mode). */
  async stop() {
    if (this.#dirty && this.path !== undefined) await this.save();
    if (this.#errors.length > 0) throw this.#errors[0];
    if (this.#mode === "replay") {
      const unplayed = this.#interactions.map((e, i) => i).filter((i) => !this.#played.has(i));
      if (unplayed.length > 0) {
        const first = this.#interactions[unplayed[0]];
        throw new CassetteMismatchError(
          `cassette: ${unplayed.length} recorded interaction${unplayed.length === 1 ? " was" : "s were"} never played; the first: interactions[${unplayed[0]}], ${label(first)}`,
          { index: unplayed[0], path: "", recorded: first.type, actual: undefined },
        );
      }
    }
  }

  #dirty = false;

  #record(entry) {
    this.#interactions.push(entry);
    this.#played.add(this.#interactions.length - 1);
    this.#dirty = true;
  }

  #fail(error) {
    this.#errors.push(error);
    return error;
  }

  /** The recorded interaction that answers the `n`-th request of `type` whose stored form is `request`, or a
   *  mismatch (returned, not thrown), or undefined when the cassette has none left and may record it. */
  #find(type, n, request, what) {
    const candidates = [];
    for (let i = 0; i < this.#interactions.length; i++) {
      if (this.#interactions[i].type === type && !this.#played.has(i)) candidates.push(i);
    }
    if (this.#match === "content") {
      const same = candidates.find((i) => firstDifference(comparable(this.#interactions[i]), request, "") === undefined);
      if (same !== undefined) return { index: same };
    } else if (candidates.length > 0) {
      const diff = firstDifference(comparable(this.#interactions[candidates[0]]), request, "");
      if (diff === undefined) return { index: candidates[0] };
    }
    if (this.#recordIfMissing && (this.#match === "content" || candidates.length === 0)) return undefined;
    if (candidates.length === 0) {
      const held = this.#interactions.filter((e) => e.type === type).length;
      return { error: new CassetteMismatchError(`cassette: ${what} ${n + 1} (${describeRequest(type, request)}) was not recorded: the cassette holds ${held} ${type === "tool" ? "tool call" : "request"}${held === 1 ? "" : "s"} of this kind, all played`, { index: n, path: "", recorded: undefined, actual: request }) };
    }
    // The one to blame: in order, the next recording; by content, the next with the same method and URL, if any.
    const near = this.#match === "content"
      ? candidates.find((i) => sameTarget(this.#interactions[i], request)) ?? candidates[0]
      : candidates[0];
    const diff = firstDifference(comparable(this.#interactions[near]), request, "");
    const prefix = this.#match === "content"
      ? `cassette: no recording matches ${what} ${n + 1} (${describeRequest(type, request)}); the nearest, interactions[${near}],`
      : `cassette: ${what} ${n + 1} (${describeRequest(type, request)}) does not match the recording (interactions[${near}]): it`;
    return {
      error: new CassetteMismatchError(`${prefix} differs at ${diff.path || "the top"}: recorded ${show(diff.recorded)}, got ${show(diff.actual)}`, { index: n, ...diff }),
    };
  }

  // ---- fetch: the built-in providers' HTTP ---------------------------------------------------------------------

  async #fetch(input, init) {
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    throwIfAborted(signal);
    const n = this.#requests.http++;
    const { method, url, headers, bodyText } = await readRequest(input, init);
    const secrets = this.#secretsOf(url, headers);
    const request = { method, url: cleanUrl(url), ...storedBody(bodyText, secrets) };
    if (this.#mode === "replay") {
      const found = this.#find("http", n, request, "request");
      if (found?.error) throw this.#fail(found.error);
      if (found !== undefined) {
        this.#played.add(found.index);
        return this.#replayResponse(this.#interactions[found.index], signal);
      }
    }
    const entry = { type: "http", request: { ...request, headers: cleanHeaders(headers, secrets) } };
    const real = this.#realFetch ?? globalThis.fetch;
    if (typeof real !== "function") throw new TypeError("agent-loop-wasm/testing: no fetch to record with (pass options.fetch)");
    const started = now();
    // Recorded in call order, as tools are; the response is filled in as it arrives.
    this.#record(entry);
    let response;
    try {
      response = await real(input, init);
    } catch (e) {
      entry.error = describeError(e);
      throw e;
    }
    entry.response = {
      status: response.status,
      statusText: response.statusText,
      headers: cleanHeaders([...response.headers], secrets),
      delayMs: Math.round(now() - started),
      chunks: [],
    };
    if (response.body === null) {
      entry.response.end = "done";
      return response;
    }
    const reader = response.body.getReader();
    const chunks = entry.response.chunks;
    let last = now();
    const body = new ReadableStream({
      async pull(controller) {
        let step;
        try {
          step = await reader.read();
        } catch (e) {
          entry.response.end = { error: describeError(e) };
          controller.error(e);
          return;
        }
        if (step.done) {
          entry.response.end = "done";
          controller.close();
          return;
        }
        const t = now();
        chunks.push(encodeChunk(step.value, Math.round(t - last), secrets));
        last = t;
        controller.enqueue(step.value);
      },
      cancel(reason) {
        entry.response.end = "cancelled";
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  #secretsOf(url, headers) {
    const found = new Set(this.#secrets);
    for (const [name, value] of headers) {
      if (!SECRET_HEADERS.has(name)) continue;
      const bare = value.replace(/^(bearer|basic|token)\s+/i, "");
      for (const v of [value, bare]) if (v.length >= MIN_SECRET_LEN) found.add(v);
    }
    try {
      const parsed = new URL(url);
      for (const [k, v] of parsed.searchParams) if (SECRET_PARAMS.has(k.toLowerCase()) && v.length >= MIN_SECRET_LEN) found.add(v);
      for (const v of [decodeURIComponent(parsed.username), decodeURIComponent(parsed.password)]) if (v.length >= MIN_SECRET_LEN) found.add(v);
    } catch {
      // not a URL: nothing in it to find
    }
    return [...found].sort((a, b) => b.length - a.length);
  }

  async #replayResponse(entry, signal) {
    if (entry.error !== undefined) throw rebuildError(entry.error);
    if (entry.response === undefined) throw new CassetteMismatchError("cassette: this request's response was still awaited when the cassette was saved", { index: -1, path: "response", recorded: undefined, actual: undefined });
    const { response } = entry;
    const realtime = this.#realtime;
    if (realtime) await sleep(response.delayMs ?? 0, signal);
    throwIfAborted(signal);
    const chunks = response.chunks ?? [];
    let i = 0;
    let onAbort;
    const body = new ReadableStream({
      start(controller) {
        if (signal === undefined) return;
        onAbort = () => {
          try {
            controller.error(abortReason(signal));
          } catch {
            // already closed
          }
        };
        signal.addEventListener("abort", onAbort, { once: true });
      },
      async pull(controller) {
        if (signal?.aborted) return controller.error(abortReason(signal));
        if (i < chunks.length) {
          const chunk = chunks[i++];
          // Each chunk in a task of its own, as the network delivers them: whatever the run does with one chunk
          // (events, listeners) is done before the next arrives, as it was while recording.
          if (realtime && chunk.delayMs > 0) await sleep(chunk.delayMs, signal).catch(() => {});
          else await nextTask();
          if (signal?.aborted) return controller.error(abortReason(signal));
          controller.enqueue(decodeChunk(chunk));
          return;
        }
        // The end of the body, too, comes in a task of its own.
        await nextTask();
        if (signal?.aborted) return controller.error(abortReason(signal));
        signal?.removeEventListener("abort", onAbort);
        const end = response.end ?? "done";
        if (end === "done") controller.close();
        else if (end === "cancelled") controller.error(new Error("cassette: the recorded response ends here (its reader was cancelled while recording)"));
        else controller.error(rebuildError(end.error));
      },
      cancel() {
        signal?.removeEventListener("abort", onAbort);
      },
    });
    const nullBody = response.status === 204 || response.status === 205 || response.status === 304;
    return new Response(nullBody ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  // ---- tools ---------------------------------------------------------------------------------------------------

  /** The tools with their `execute` recorded (record mode) or replayed from the cassette (replay mode: the real
   *  `execute` never runs, unless `recordIfMissing` and the call was not recorded). Each is a copy; the originals are
   *  not changed. */
  tools(tools) {
    if (!Array.isArray(tools)) throw typeError(`cassette.tools(tools): tools must be an array, got ${describeType(tools)}`);
    return tools.map((tool, i) => {
      if (tool === null || typeof tool !== "object" || typeof tool.name !== "string") throw typeError(`cassette.tools(tools): tools[${i}] is not a tool (no name)`);
      if (typeof tool.execute !== "function") throw typeError(`cassette.tools(tools): tools[${i}] ("${tool.name}") has no execute function`);
      const cassette = this;
      return { ...tool, execute: (toolCallId, params, signal, onUpdate) => cassette.#execute(tool, toolCallId, params, signal, onUpdate) };
    });
  }

  async #execute(tool, toolCallId, params, signal, onUpdate) {
    const n = this.#requests.tool++;
    const request = { name: tool.name, args: jsonCopy(params) };
    if (this.#mode === "replay") {
      const found = this.#find("tool", n, request, "tool call");
      if (found?.error) throw this.#fail(found.error);
      if (found !== undefined) {
        this.#played.add(found.index);
        const entry = this.#interactions[found.index];
        if (entry.unstorable !== undefined) throw this.#fail(unstorableError(found.index, entry));
        for (const update of entry.updates ?? []) onUpdate?.(structuredClone(update));
        if (entry.error !== undefined) throw rebuildError(entry.error);
        if (!("result" in entry)) throw new CassetteMismatchError(`cassette: the recorded call of ${entry.name} had not ended when the cassette was saved`, { index: n, path: "result", recorded: undefined, actual: undefined });
        return structuredClone(entry.result);
      }
    }
    const entry = { type: "tool", name: tool.name, toolCallId, args: request.args };
    // Recorded in call order (parallel calls may finish in another), its outcome filled in when it ends.
    this.#record(entry);
    const updates = [];
    const record = (update) => {
      const stored = storable(update);
      if ("value" in stored) updates.push(stored.value);
      else entry.unstorable ??= stored.reason;
      return onUpdate?.(update);
    };
    let result;
    try {
      result = await tool.execute(toolCallId, params, signal, record);
    } catch (e) {
      entry.error = describeError(e);
      throw e;
    } finally {
      if (updates.length > 0) entry.updates = updates;
    }
    // Recording never changes the live run: a result JSON cannot hold (a cycle, a BigInt) is returned as it is, and
    // the cassette says why it cannot replay it.
    const stored = storable(result);
    if ("value" in stored) entry.result = stored.value;
    else entry.unstorable ??= stored.reason;
    return result;
  }

  // ---- a custom stream function --------------------------------------------------------------------------------

  /** `streamFn` recorded or replayed: the request (model and transcript, without the clock's fields) and the events it
   *  produced. For the built-in providers, pass `cassette.fetch` instead: their bytes replay through their decoder. */
  streamFn(streamFn) {
    if (typeof streamFn !== "function") throw typeError(`cassette.streamFn(streamFn): streamFn must be a function, got ${describeType(streamFn)}`);
    return (model, context, options) => this.#stream(streamFn, model, context, options);
  }

  async #stream(inner, model, context, options) {
    const n = this.#requests.stream++;
    const request = { model: modelKey(model), messages: withoutTimestamps(jsonCopy(context?.messages ?? [])) };
    if (this.#mode === "replay") {
      const found = this.#find("stream", n, request, "stream request");
      if (found?.error) return errorSource(model, this.#fail(found.error).message);
      if (found !== undefined) {
        this.#played.add(found.index);
        const entry = this.#interactions[found.index];
        if (entry.unstorable !== undefined) return errorSource(model, this.#fail(unstorableError(found.index, entry)).message);
        if (entry.error !== undefined) throw rebuildError(entry.error);
        return replayEvents(entry, options?.signal);
      }
    }
    const entry = { type: "stream", request, events: [] };
    this.#record(entry);
    let source;
    try {
      source = await inner(model, context, options);
    } catch (e) {
      // A stream function that throws (the loop ends the run with its message, D1) throws again in the replay.
      entry.error = describeError(e);
      throw e;
    }
    return recordEvents(source, entry);
  }
}

// ---- the stream function's events ------------------------------------------------------------------------------

/** An event as stored: without `partial` (the message it builds is rebuilt on replay), the final message in full;
 *  a tool call's arguments as they stood at each delta. */
function storedEvent(event) {
  const stored = {};
  for (const [k, v] of Object.entries(event)) if (k !== "partial") stored[k] = jsonCopy(v);
  if (event.type === "toolcall_delta" || event.type === "toolcall_start") {
    const block = event.partial?.content?.[event.contentIndex];
    if (block !== undefined) stored.block = jsonCopy(block);
  }
  if (event.type === "start") stored.partial = jsonCopy(event.partial);
  return stored;
}

function recordEvents(source, entry) {
  let result;
  const iterate = async function* () {
    for await (const event of source) {
      if (entry.unstorable === undefined) {
        try {
          entry.events.push(storedEvent(event));
        } catch (e) {
          // Recording never changes the live stream (see `storable`).
          entry.unstorable = storable(undefined, e).reason;
        }
      }
      yield event;
    }
    if (typeof source.result === "function") result = await source.result();
  };
  const events = iterate();
  return {
    [Symbol.asyncIterator]: () => events,
    result: async () => result ?? final(entry.events),
  };
}

function final(events) {
  const last = events.at(-1);
  return last?.type === "done" ? last.message : last?.type === "error" ? last.error : undefined;
}

function replayEvents(entry, signal) {
  const events = entry.events;
  let partial;
  const generate = async function* () {
    for (const stored of events) {
      if (signal?.aborted) {
        const error = { ...(partial ?? {}), stopReason: "aborted", errorMessage: "Request was aborted" };
        yield { type: "error", reason: "aborted", error };
        return;
      }
      const event = structuredClone(stored);
      if (event.type === "start") partial = event.partial;
      else if (partial !== undefined && "contentIndex" in event) applyToPartial(partial, event);
      delete event.block;
      if (event.type !== "done" && event.type !== "error" && partial !== undefined) event.partial = partial;
      if (event.type === "done") partial = event.message;
      yield event;
    }
  };
  const iterator = generate();
  return { [Symbol.asyncIterator]: () => iterator, result: async () => structuredClone(final(events)) };
}

function applyToPartial(partial, event) {
  const content = partial.content ?? (partial.content = []);
  const i = event.contentIndex;
  switch (event.type) {
    case "text_start": content[i] = { type: "text", text: "" }; break;
    case "text_delta": content[i].text += event.delta; break;
    case "text_end": content[i].text = event.content; break;
    case "thinking_start": content[i] = { type: "thinking", thinking: "" }; break;
    case "thinking_delta": content[i].thinking += event.delta; break;
    case "thinking_end": content[i].thinking = event.content; break;
    case "toolcall_start": case "toolcall_delta": if (event.block !== undefined) content[i] = event.block; break;
    case "toolcall_end": content[i] = event.toolCall; break;
  }
}

function errorSource(model, message) {
  const error = {
    role: "assistant", content: [], api: model?.api, provider: model?.provider, model: model?.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "error", errorMessage: message, timestamp: Date.now(),
  };
  const events = [{ type: "error", reason: "error", error }];
  return { [Symbol.asyncIterator]: async function* () { yield* events; }, result: async () => error };
}

function modelKey(model) {
  return { api: model?.api, provider: model?.provider, id: model?.id };
}

/** The transcript without the clock's fields (a message's `timestamp` and `durationMs`), which differ in every run. */
function withoutTimestamps(messages) {
  if (!Array.isArray(messages)) return messages;
  for (const m of messages) {
    if (m !== null && typeof m === "object") {
      delete m.timestamp;
      delete m.durationMs;
    }
  }
  return messages;
}

// ---- requests, comparison, storage -----------------------------------------------------------------------------

/** The part of a recorded interaction a request is compared with. */
function comparable(entry) {
  if (entry.type === "http") {
    const { headers: _headers, ...compared } = entry.request;
    return compared;
  }
  if (entry.type === "tool") return { name: entry.name, args: entry.args };
  return entry.request;
}

function sameTarget(entry, request) {
  if (entry.type === "http") return entry.request.method === request.method && entry.request.url === request.url;
  if (entry.type === "tool") return entry.name === request.name;
  return firstDifference(entry.request.model, request.model, "") === undefined;
}

function label(entry) {
  if (entry.type === "http") return `${entry.request.method} ${entry.request.url}`;
  if (entry.type === "tool") return `tool ${entry.name}`;
  return `stream request to ${entry.request?.model?.provider}/${entry.request?.model?.id}`;
}

function describeRequest(type, request) {
  if (type === "http") return `${request.method} ${request.url}`;
  if (type === "tool") return request.name;
  return `${request.model.provider}/${request.model.id}`;
}

/** Where two JSON values first differ (depth first, object keys in the recording's order, then the new keys), or
 *  undefined when equal: `{ path, recorded, actual }` with a path like `body.messages[3].content`. */
function firstDifference(recorded, actual, path = "") {
  if (Object.is(recorded, actual)) return undefined;
  const kind = (v) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
  if (kind(recorded) !== kind(actual) || kind(recorded) !== "object" && kind(recorded) !== "array") {
    return { path, recorded, actual };
  }
  if (Array.isArray(recorded)) {
    const shared = Math.min(recorded.length, actual.length);
    for (let i = 0; i < shared; i++) {
      const d = firstDifference(recorded[i], actual[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    if (recorded.length !== actual.length) return { path: `${path}[${shared}]`, recorded: recorded[shared], actual: actual[shared] };
    return undefined;
  }
  for (const key of Object.keys(recorded)) {
    const d = firstDifference(recorded[key], Object.hasOwn(actual, key) ? actual[key] : undefined, member(path, key));
    if (d !== undefined) return d;
  }
  for (const key of Object.keys(actual)) if (!Object.hasOwn(recorded, key)) return { path: member(path, key), recorded: undefined, actual: actual[key] };
  return undefined;
}

function member(path, key) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? (path === "" ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`;
}

function show(value) {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

async function readRequest(input, init) {
  // Not through `new Request`: it refuses a URL with user info, which is still a request to record (without it).
  const from = input instanceof Request ? input : undefined;
  const url = from?.url ?? String(input);
  const method = (init?.method ?? from?.method ?? "GET").toUpperCase();
  const headers = [...new Headers(init?.headers ?? from?.headers ?? undefined)];
  let bodyText;
  if (init?.body !== undefined && init?.body !== null) bodyText = typeof init.body === "string" ? init.body : await new Response(init.body).text();
  else if (from?.body) bodyText = await from.clone().text();
  return { method, url, headers, bodyText };
}

function storedBody(text, secrets) {
  if (text === undefined) return {};
  const clean = scrub(text, secrets);
  try {
    return { body: JSON.parse(clean) };
  } catch {
    return { bodyText: clean };
  }
}

function cleanUrl(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  parsed.username = "";
  parsed.password = "";
  for (const k of [...parsed.searchParams.keys()]) if (SECRET_PARAMS.has(k.toLowerCase())) parsed.searchParams.delete(k);
  return parsed.href;
}

function cleanHeaders(pairs, secrets) {
  const out = {};
  for (const [name, value] of pairs) if (!SECRET_HEADERS.has(name.toLowerCase())) out[name.toLowerCase()] = scrub(value, secrets);
  return out;
}

function scrub(text, secrets) {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A network chunk as stored: its text when it is whole UTF-8 (what a diff reads), else its bytes in base64. */
function encodeChunk(bytes, delayMs, secrets) {
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { delayMs, base64: toBase64(bytes) };
  }
  return { delayMs, text: scrub(text, secrets) };
}

function decodeChunk(chunk) {
  if (typeof chunk.text === "string") return new TextEncoder().encode(chunk.text);
  if (typeof chunk.base64 === "string") return fromBase64(chunk.base64);
  throw new TypeError("cassette: a recorded chunk has neither text nor base64");
}

function toBase64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function describeError(e) {
  if (e !== null && typeof e === "object") return { name: String(e.name ?? "Error"), message: String(e.message ?? "") };
  return { name: "Error", message: String(e) };
}

/** A recorded error as the class a caller would have seen (fetch's network failures are `TypeError`s). */
function rebuildError({ name, message }) {
  let error;
  if (name === "TypeError") error = new TypeError(message);
  else if (name === "AbortError" || name === "TimeoutError") return new DOMException(message, name);
  else error = new Error(message);
  if (error.name !== name) error.name = name;
  return error;
}

/** `{ value }`: JSON's copy of `value`; or `{ reason }` when JSON cannot hold it (a cycle, a BigInt, too deep). */
function storable(value, error) {
  if (error === undefined) {
    try {
      return { value: jsonCopy(value) };
    } catch (e) {
      error = e;
    }
  }
  return { reason: `${error?.name ?? "Error"}: ${error?.message ?? error}` };
}

/** What replaying an interaction recorded with a value JSON cannot hold says. */
function unstorableError(index, entry) {
  return new CassetteMismatchError(
    `cassette: interactions[${index}] (${label(entry)}) could not be recorded (${entry.unstorable}); make its values JSON and record it again`,
    { index, path: "", recorded: undefined, actual: undefined },
  );
}

/** JSON's copy of a value (what a cassette can hold); undefined stays undefined. */
function jsonCopy(value) {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

function abortReason(signal) {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function throwIfAborted(signal) {
  if (signal?.aborted) throw abortReason(signal);
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (!(ms > 0)) return resolve();
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A new task (not a microtask): `setImmediate` where there is one, else a zero timeout. */
function nextTask() {
  return new Promise((resolve) => (globalThis.setImmediate ?? setTimeout)(resolve));
}

function now() {
  return globalThis.performance?.now?.() ?? Date.now();
}

function describeType(v) {
  return v === null ? "null" : Array.isArray(v) ? "an array" : typeof v;
}

function isMissingFile(e) {
  return e?.code === "ENOENT" || e?.name === "NotFound";
}

/** Files where there are some: Deno's API, else Node's `fs/promises` (Node 20.16+ through `getBuiltinModule`; in the
 *  CommonJS build, Node 18's `require`). */
function fileSystem() {
  const deno = globalThis.Deno;
  if (deno?.readTextFile !== undefined) return { read: (p) => deno.readTextFile(p), write: (p, t) => deno.writeTextFile(p, t) };
  const node = globalThis.process?.getBuiltinModule?.("node:fs/promises")
    ?? (typeof module === "object" && typeof module?.require === "function" ? module.require("node:fs/promises") : undefined);
  if (node === undefined) throw new Error("agent-loop-wasm/testing: no file system here; use createCassette({ cassette }) and cassette.toJSON()");
  return { read: (p) => node.readFile(p, "utf8"), write: (p, t) => node.writeFile(p, t) };
}
