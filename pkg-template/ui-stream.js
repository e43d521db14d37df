// agent-loop-wasm/ui: an Agent's events → the AI SDK's UI message chunks (U-12.1): the translator and toUIMessageStream.
import { codedError } from "./errors.js";
import { usageSum } from "./usage.js";
import { FINISH_REASONS, approvalRequestChunk, checkOptions, continuedMessage, defaultToolOutput, describe, errorMessage, isObject, isToolPart, randomId, resultText, signatureMeta, toolNameOf, userParts } from "./ui-common.js";
import { approvalToken, secretKey } from "./ui-sign.js";
import { RESPONSE_OPTIONS, createUIMessageStreamResponse, responseHeaders } from "./ui-response.js";

/**
 * The translator: one AgentEvent in, the chunks it means out (sync, so a live partial message is read when its event
 * is emitted). State is kept per block as "how much of it the client has": text and reasoning are synced by length
 * from the message the event carries, so a message seen first as a snapshot (a reconnecting client's replay, or a
 * message_end with no updates before it) and one streamed delta by delta give the same parts, and a lagging reader
 * never sends a piece twice. One response: `start` … `finish` (or `abort`) for the first run seen.
 */
function createTranslator(options) {
  const continued = continuedMessage(options.originalMessages);
  const messageId = options.messageId ?? continued?.id ?? randomId();
  const sendReasoning = options.sendReasoning !== false;
  const toolOutput = options.toolOutput ?? defaultToolOutput;
  const onError = options.onError ?? errorMessage;
  const dynamic = options.dynamicTools === true ? { dynamic: true } : {};
  let started = false;
  let inStep = false;
  let stepHasResponse = false;
  let step = 0;
  let done = false;
  /** The assistant message being streamed: per content index, what the client has of that block. */
  let blocks = null;
  let lastAssistant;
  // Continuing the client's last assistant message (after approvals): its tool parts are known to the client, a user
  // message in this run is steering, and a call it denied ends with `tool-output-denied`.
  let sawAssistant = continued !== undefined;
  let steering = 0;
  /** toolCallId → { toolName, input: sent tool-input-available, sent: that input, output: sent a final output } */
  const tools = new Map();
  const denied = new Set();
  for (const part of continued?.parts ?? []) {
    if (!isToolPart(part) || typeof part.toolCallId !== "string") continue;
    const output = ["output-available", "output-error", "output-denied"].includes(part.state) && part.preliminary !== true;
    tools.set(part.toolCallId, { toolName: toolNameOf(part), input: part.state !== "input-streaming", sent: part.input, output });
    if (part.state === "approval-responded" && part.approval?.approved === false) denied.add(part.toolCallId);
  }
  let out = [];

  const emit = (chunk) => out.push(chunk);
  const ensureStart = () => {
    if (!started) {
      started = true;
      emit({ type: "start", messageId });
    }
  };
  const ensureStep = () => {
    ensureStart();
    if (!inStep) {
      inStep = true;
      step += 1;
      emit({ type: "start-step" });
    }
  };
  const finishStep = () => {
    stepHasResponse = false;
    if (inStep) {
      inStep = false;
      emit({ type: "finish-step" });
    }
  };

  function announceTool(toolCallId, toolName, input, meta = {}) {
    let t = tools.get(toolCallId);
    if (!t) {
      t = { toolName, input: false, output: false, started: false };
      tools.set(toolCallId, t);
    }
    if (!t.input) {
      t.input = true;
      t.sent = input ?? {};
      ensureStep();
      emit({ type: "tool-input-available", toolCallId, toolName: t.toolName, input: t.sent, ...dynamic, ...meta });
    }
    return t;
  }

  /**
   * Opens block `i` (`block` is the message's content[i]). `live` marks a tool call whose argument deltas are sent:
   * one opened by its toolcall_start event. One first seen in a snapshot is not (the deltas before the snapshot are
   * unknown, as a call's partial arguments keep no JSON text), unless its toolcall_start follows: its input then
   * arrives whole with tool-input-available.
   */
  function open(i, block, live) {
    if (!isObject(block)) return undefined;
    let b = blocks[i];
    if (b) return b;
    const id = `${step}-${i}`;
    if (block.type === "text") {
      b = { kind: "text", id, len: 0, ended: false };
      emit({ type: "text-start", id });
    } else if (block.type === "thinking") {
      b = { kind: "reasoning", id, len: 0, ended: false, skip: !sendReasoning };
      if (!b.skip) emit({ type: "reasoning-start", id });
    } else if (block.type === "toolCall" && typeof block.id === "string") {
      b = { kind: "tool", id: block.id, live, ended: false };
      const known = tools.get(block.id);
      if (!known) {
        tools.set(block.id, { toolName: block.name, input: false, output: false });
        emit({ type: "tool-input-start", toolCallId: block.id, toolName: block.name, ...dynamic });
      } else {
        b.ended = known.input;
      }
    } else {
      return undefined;
    }
    blocks[i] = b;
    return b;
  }

  /** Sends what the client lacks of text/reasoning block `i`, whose whole text so far is `text`. */
  function sync(b, text) {
    if (!b || b.ended || b.skip || b.kind === "tool" || typeof text !== "string" || text.length <= b.len) return;
    emit({ type: b.kind === "text" ? "text-delta" : "reasoning-delta", id: b.id, delta: text.slice(b.len) });
    b.len = text.length;
  }

  function end(b, block) {
    if (!b || b.ended) return;
    b.ended = true;
    if (b.kind === "tool") {
      announceTool(b.id, block?.name, block?.arguments, signatureMeta({ thoughtSignature: block?.thoughtSignature }));
      return;
    }
    if (b.skip) return;
    if (b.kind === "text") {
      emit({ type: "text-end", id: b.id, ...signatureMeta({ textSignature: block?.textSignature }) });
    } else {
      emit({ type: "reasoning-end", id: b.id, ...signatureMeta({ thinkingSignature: block?.thinkingSignature, redacted: block?.redacted === true ? true : undefined }) });
    }
  }

  const textOf = (block) => (block?.type === "text" ? block.text : block?.type === "thinking" ? block.thinking : undefined);

  function beginAssistant(message) {
    // One model response per step, also when no turn_end came between two (a replay made from the transcript).
    if (stepHasResponse) finishStep();
    ensureStep();
    stepHasResponse = true;
    blocks = [];
    // What the message already holds is the state so far (a replayed partial message, or a message whose content
    // came without updates): sent as one piece per block.
    const content = Array.isArray(message?.content) ? message.content : [];
    content.forEach((block, i) => sync(open(i, block, false), textOf(block)));
  }

  function endAssistant(message) {
    if (!blocks) beginAssistant(message);
    const content = Array.isArray(message?.content) ? message.content : [];
    content.forEach((block, i) => {
      const b = open(i, block, false);
      sync(b, textOf(block));
      end(b, block);
    });
    blocks.forEach((b) => end(b, undefined));
    blocks = null;
    sawAssistant = true;
    if (message !== undefined) lastAssistant = message;
    if (message?.stopReason === "error") emit({ type: "error", errorText: onError(message.errorMessage ?? "The model request failed") });
  }

  function update(event) {
    const message = event.message;
    // An update of a message not seen starting (a reader that joined mid-message): its content is the state so far.
    if (!blocks) beginAssistant(message);
    const ev = event.assistantMessageEvent;
    if (!isObject(ev) || typeof ev.contentIndex !== "number") return;
    const i = ev.contentIndex;
    const block = Array.isArray(message?.content) ? message.content[i] : undefined;
    switch (ev.type) {
      case "text_start":
      case "thinking_start":
        sync(open(i, block, true), textOf(block));
        break;
      case "toolcall_start": {
        // Every delta of this call is still to come (also when a snapshot opened it first): stream them.
        const b = open(i, block, true);
        if (b?.kind === "tool" && !b.ended) b.live = true;
        break;
      }
      case "text_delta":
      case "thinking_delta":
        sync(open(i, block, true), textOf(block));
        break;
      case "toolcall_delta": {
        const b = open(i, block, true);
        if (b?.kind === "tool" && b.live && !b.ended && typeof ev.delta === "string" && ev.delta !== "") {
          emit({ type: "tool-input-delta", toolCallId: b.id, inputTextDelta: ev.delta });
        }
        break;
      }
      case "text_end":
      case "thinking_end": {
        const b = open(i, block, true);
        sync(b, typeof ev.content === "string" ? ev.content : textOf(block));
        end(b, block);
        break;
      }
      case "toolcall_end": {
        const call = isObject(ev.toolCall) ? ev.toolCall : block;
        end(open(i, call, true), call);
        break;
      }
      default:
        break;
    }
  }

  function toolEnd(event) {
    const t = announceTool(event.toolCallId, event.toolName, event.args);
    if (t.output) return;
    t.output = true;
    if (denied.has(event.toolCallId)) emit({ type: "tool-output-denied", toolCallId: event.toolCallId });
    else if (event.isError) emit({ type: "tool-output-error", toolCallId: event.toolCallId, errorText: resultText(event.result), ...dynamic });
    else emit({ type: "tool-output-available", toolCallId: event.toolCallId, output: toolOutput(event.result, { toolCallId: event.toolCallId, toolName: t.toolName }), ...dynamic });
  }

  function push(event) {
    if (done) return [];
    out = [];
    switch (event.type) {
      case "agent_start":
        ensureStart();
        break;
      case "message_start":
        if (event.message?.role === "assistant") beginAssistant(event.message);
        break;
      case "message_update":
        if (event.message?.role === "assistant" || blocks) update(event);
        break;
      case "message_end": {
        const m = event.message;
        if (m?.role === "assistant") endAssistant(m);
        else if (m?.role === "toolResult" && typeof m.toolCallId === "string") {
          const t = tools.get(m.toolCallId);
          // Only a result whose call the client has (a replay from the transcript has no tool_execution_end).
          if (t && !t.output) toolEnd({ toolCallId: m.toolCallId, toolName: m.toolName, result: m, isError: m.isError === true });
        } else if (m?.role === "user" && sawAssistant) {
          // A user message inside a run after its first model response: steering or a follow-up.
          ensureStart();
          steering += 1;
          emit({ type: "steering-message", id: `${messageId}-steering-${steering}`, parts: userParts(m.content) });
        }
        break;
      }
      case "tool_execution_start":
        announceTool(event.toolCallId, event.toolName, event.args);
        break;
      case "tool_execution_update": {
        const t = announceTool(event.toolCallId, event.toolName, event.args);
        if (!t.output) {
          emit({ type: "tool-output-available", toolCallId: event.toolCallId, output: toolOutput(event.partialResult, { toolCallId: event.toolCallId, toolName: t.toolName }), preliminary: true, ...dynamic });
        }
        break;
      }
      case "tool_execution_end":
        toolEnd(event);
        break;
      case "tool_approval_request": {
        const t = announceTool(event.toolCallId, event.toolName, event.args);
        // U-12.5: signed over the call as the client holds it.
        const key = options.approvalKey;
        emit(approvalRequestChunk(event, key ? approvalToken(key, event.toolCallId, t.toolName, t.sent, event.expiresAt) : event.toolCallId));
        break;
      }
      case "turn_end":
        finishStep();
        break;
      case "agent_end": {
        ensureStart();
        if (blocks) endAssistant(undefined);
        finishStep();
        const reason = lastAssistant?.stopReason;
        if (reason === "aborted") {
          emit({ type: "abort", ...(typeof lastAssistant.errorMessage === "string" ? { reason: lastAssistant.errorMessage } : {}) });
        } else {
          emit({ type: "finish", finishReason: FINISH_REASONS[reason] ?? "other" });
        }
        done = true;
        break;
      }
      default:
        break; // events this version does not know: nothing for the client
    }
    return out;
  }

  function fail(error) {
    if (done) return [];
    done = true;
    out = [];
    emit({ type: "error", errorText: onError(error) });
    return out;
  }

  /** The response ends as aborted now (the caller's `abortSignal`), whatever the source still holds. */
  function abort(reason) {
    if (done) return [];
    out = [];
    ensureStart();
    if (blocks) endAssistant(undefined);
    finishStep();
    emit({ type: "abort", ...(typeof reason === "string" ? { reason } : {}) });
    done = true;
    return out;
  }

  return { push, fail, abort, messageId, get done() { return done; } };
}

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
  const translator = createTranslator({ ...opts, approvalKey });
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
