// agent-loop-wasm/ui: an Agent's events → the AI SDK's UI message chunks (U-12.1) as a stream: toUIMessageStream
// reads an Agent or an event source, feeds the translator (ui-translate.js) and ends the stream with the response.
import { codedError } from "./errors.js";
import { usageSum } from "./usage.js";
import { checkOptions, describe, errorMessage, isObject } from "./ui-common.js";
import { secretKey } from "./ui-sign.js";
import { Translator } from "./ui-translate.js";
import { RESPONSE_OPTIONS, createUIMessageStreamResponse, responseHeaders } from "./ui-response.js";

/** The event of a source item: an AgentEvent, or `{ seq, event }` from `agent.events()`. */
function eventOf(item) {
  if (isObject(item) && typeof item.type === "string") return item;
  if (isObject(item) && isObject(item.event) && typeof item.event.type === "string") return item.event;
  return undefined;
}

export const TO_STREAM_OPTIONS = {
  messageId: "string",
  originalMessages: "array",
  run: "function",
  sendReasoning: "boolean",
  toolOutput: "function",
  onError: "function",
  dynamicTools: "boolean",
  messageMetadata: "function",
  onFinish: "function",
  abortSignal: "object",
  approvalSecret: "checked",
};


/**
 * One run of an agent as a `ReadableStream` of UI message chunks: `start` (with `messageId`), per model response
 * `start-step` … `finish-step` with text, reasoning and tool parts, then `finish` (or `abort`) at `agent_end`, where the
 * stream ends. `source` is an Agent (subscribed now, unsubscribed at the end) or an async iterable of AgentEvents or of
 * `{ seq, event }` items (read as fast as it yields; `return()` is called at the end).
 */
export function toUIMessageStream(source, options) {
  const fn = "toUIMessageStream";
  const isAgent = isObject(source) && typeof source.subscribe === "function";
  const isIterable = isObject(source) && typeof source[Symbol.asyncIterator] === "function";
  if (!isAgent && !isIterable) {
    throw codedError("INVALID_ARGUMENT", `${fn}: source must be an Agent or an async iterable of agent events (or of { seq, event }), got ${describe(source)}`);
  }
  const opts = checkOptions(fn, options, TO_STREAM_OPTIONS);
  const signal = opts.abortSignal;
  if (signal !== undefined && (typeof signal.aborted !== "boolean" || typeof signal.addEventListener !== "function")) {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.abortSignal must be an AbortSignal, got ${describe(signal)}`);
  }
  const approvalKey = opts.approvalSecret === undefined ? undefined : secretKey(fn, opts.approvalSecret);
  const translator = new Translator({ ...opts, approvalKey });
  // What onFinish and messageMetadata are told: the run's usage so far, its messages, how the response ended.
  const usage = usageSum();
  let runMessages;
  const ended = [];
  let lastChunk;
  if (isAgent) {
    responseIds.set(source, translator.messageId);
    // Start the agent's journal before its run, so that a resume can replay the run from its start (a reader ended
    // at once; the journal stays, bounded by two runs).
    if (typeof source.events === "function") {
      try {
        source.events().return();
      } catch {
        // not agent-loop-wasm's Agent: a resume then rebuilds the answer from the transcript
      }
    }
  }
  let stop = () => {};
  let unlisten = () => {};
  let closed = false;
  return new ReadableStream({
    start(controller) {
      // The end of the response: once, after its last chunk; onFinish is awaited before the stream closes, and its
      // throw errors the stream.
      const close = () => {
        closed = true;
        stop();
        unlisten();
        if (!opts.onFinish) return controller.close();
        const messages = runMessages ?? ended;
        Promise.resolve()
          .then(() => opts.onFinish({ messages, usage: usage.value, isAborted: lastChunk?.type === "abort", isError: lastChunk?.type === "error", messageId: translator.messageId }))
          .then(() => controller.close(), (e) => controller.error(e));
      };
      const enqueue = (chunk) => {
        lastChunk = chunk;
        if (!opts.messageMetadata) return controller.enqueue(chunk);
        const metadata = opts.messageMetadata({ part: chunk, usage: usage.value });
        if (metadata === undefined) return controller.enqueue(chunk);
        if (chunk.type === "start" || chunk.type === "finish") return controller.enqueue({ ...chunk, messageMetadata: metadata });
        controller.enqueue(chunk);
        controller.enqueue({ type: "message-metadata", messageMetadata: metadata });
      };
      const send = (chunks) => {
        if (closed) return;
        try {
          for (const c of chunks) enqueue(c);
        } catch (e) {
          // A throwing messageMetadata: the response ends with its error (once).
          if (!translator.done) return send(translator.fail(e));
          const errorText = (opts.onError ?? errorMessage)(e);
          enqueue({ type: "error", errorText });
        }
        if (translator.done) close();
      };
      const failWith = (e) => send(translator.fail(e));
      let index = 0;
      const take = (item) => {
        const event = eventOf(item);
        if (event === undefined) {
          failWith(codedError("INVALID_ARGUMENT", `${fn}: source item ${index} is neither an agent event nor { seq, event }, got ${describe(item)}`));
        } else {
          if (event.type === "message_end" && isObject(event.message)) {
            if (opts.onFinish) ended.push(event.message);
            if (event.message.role === "assistant") usage.add(event.message.usage);
          } else if (event.type === "agent_end" && Array.isArray(event.messages)) {
            runMessages = event.messages;
          }
          send(translator.push(event));
        }
        index += 1;
      };
      if (signal !== undefined) {
        // Aborts the run of an Agent source (its agent_end then ends the response as aborted); any other source, or
        // an Agent running nothing, ends the response with `abort` at once.
        const onAbort = () => {
          if (closed) return;
          if (isAgent && typeof source.abort === "function" && source.state?.isStreaming === true) source.abort();
          else send(translator.abort(typeof signal.reason === "string" ? signal.reason : undefined));
        };
        unlisten = () => signal.removeEventListener("abort", onAbort);
        if (signal.aborted) queueMicrotask(onAbort);
        else signal.addEventListener("abort", onAbort, { once: true });
      }
      if (isAgent) {
        const unsubscribe = source.subscribe((event) => take(event));
        stop = () => unsubscribe();
      } else {
        const iterator = source[Symbol.asyncIterator]();
        stop = () => {
          try {
            Promise.resolve(iterator.return?.()).catch(() => {});
          } catch {
            // an iterator whose return() throws: nothing more to release
          }
        };
        (async () => {
          for (;;) {
            const r = await iterator.next();
            if (closed) return;
            if (r.done) {
              // The source ended before agent_end (its reader was stopped): end the response without `finish`.
              close();
              return;
            }
            take(r.value);
          }
        })().catch(failWith);
      }
      if (opts.run) {
        Promise.resolve()
          // Not started once the response ended (an abortSignal aborted before the run began).
          .then(() => (closed ? undefined : opts.run()))
          .then(
            () => {
              // An Agent has delivered agent_end before its run's promise settles: a run that resolves with the
              // stream still open started no run (e.g. a decision that leaves other calls waiting).
              if (isAgent && !closed && !translator.done) close();
            },
            failWith,
          );
      }
    },
    cancel() {
      closed = true;
      stop();
      unlisten();
    },
  });
}

/** agent → the messageId of the last response `toUIMessageStream` started for it in this process (what a resume reuses). */
export const responseIds = new WeakMap();

/** `createUIMessageStreamResponse({ stream: toUIMessageStream(source, options), ...init })`. */
export function toUIMessageStreamResponse(source, options) {
  const fn = "toUIMessageStreamResponse";
  const opts = checkOptions(fn, options, { ...TO_STREAM_OPTIONS, ...RESPONSE_OPTIONS });
  const { status, statusText, headers, ...streamOptions } = opts;
  const headerSet = responseHeaders(fn, headers);
  const stream = toUIMessageStream(source, streamOptions);
  return createUIMessageStreamResponse({ stream, status, statusText, headers: headerSet });
}
