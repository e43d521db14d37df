// agent-loop-wasm/ui: Resume: the transport's reconnect (`GET …/:chatId/stream`, `useChat({ resume: true })`)
import { codedError } from "./errors.js";
import { checkOptions, describe, isObject } from "./ui-common.js";
import { RESPONSE_OPTIONS, createUIMessageStreamResponse, responseHeaders } from "./ui-response.js";
import { responseIds, toUIMessageStream } from "./ui-stream.js";

const copy = (message) => {
  try {
    return structuredClone(message);
  } catch {
    return message;
  }
};

/**
 * The events a resume translates: `agent.events({ fromRunStart: true })` as they come, except an `agent_sync` (the
 * journal did not see the run start: it began mid-run, or in a process restored from checkpoints), which stands for
 * the answer so far: the messages after the transcript's last user message, then the streaming partial. Replayed
 * messages are copied as they are read: the events of one streaming message share its live content blocks (a kept
 * message_start grows with the stream), so the copy fixes what the replay sends; the translator syncs text by length,
 * so live events after it send only what the copy lacks, nothing twice.
 */
function resumeEvents(items) {
  const pending = [];
  // What the sync already stood for: a live event about it that reaches the reader after the sync (the event being
  // delivered to the agent's listeners when the reader began, already in the state the sync was read from) is dropped.
  const ended = new Set();
  let started;
  const expand = (item) => {
    const event = item.event;
    if (event?.type === "agent_sync") {
      const messages = Array.isArray(event.messages) ? event.messages : [];
      let from = messages.length;
      while (from > 0 && messages[from - 1]?.role !== "user") from--;
      pending.push({ type: "agent_start" });
      for (const m of messages.slice(from)) {
        ended.add(m);
        const message = copy(m);
        pending.push({ type: "message_start", message }, { type: "message_end", message });
      }
      if (isObject(event.streamingMessage)) {
        started = event.streamingMessage;
        pending.push({ type: "message_start", message: copy(event.streamingMessage) });
      }
      if (!event.isStreaming) pending.push({ type: "agent_end", messages: [] });
    } else if (!item.replay && (event?.type === "message_start" || event?.type === "message_end") && ended.has(event.message)) {
      // already sent whole, from the sync
    } else if (!item.replay && event?.type === "message_start" && event.message === started) {
      // already started, from the sync
    } else if (item.replay && isObject(event?.message) && (event.type === "message_start" || event.type === "message_update")) {
      pending.push({ ...event, message: copy(event.message) });
    } else {
      pending.push(event);
    }
  };
  // A plain iterator (not an async generator), so that `return()` reaches the agent's reader at once even while a
  // `next()` waits for the next event.
  return {
    async next() {
      while (pending.length === 0) {
        const r = await items.next();
        if (r.done) return r;
        expand(r.value);
      }
      return { done: false, value: pending.shift() };
    },
    return: () => items.return(),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

const RESUME_OPTIONS = { messageId: "string", sendReasoning: "boolean", toolOutput: "function", onError: "function", dynamicTools: "boolean" };

/**
 * The answer under way, for a reconnecting chat client: null when the agent runs nothing (answer 204), else the UI
 * message stream of the current run replayed from its start (its `agent_start`: `start` with the same `messageId`,
 * which the AI SDK's client replaces its message with) and then live, ending with the run. `messageId`: the option,
 * else the id of the last response `toUIMessageStream` started for this agent in this process.
 */
export function resumeUIMessageStream(agent, options) {
  const fn = "resumeUIMessageStream";
  if (!isObject(agent) || typeof agent.events !== "function" || !isObject(agent.state)) {
    throw codedError("INVALID_ARGUMENT", `${fn}: agent must be an Agent of agent-loop-wasm (with events()), got ${describe(agent)}`);
  }
  const opts = checkOptions(fn, options, { ...RESUME_OPTIONS, signal: "object" });
  if (!agent.state.isStreaming) return null;
  const { signal, ...streamOptions } = opts;
  const items = agent.events({ fromRunStart: true, untilIdle: true, ...(signal ? { signal } : {}) });
  const messageId = streamOptions.messageId ?? responseIds.get(agent);
  return toUIMessageStream(resumeEvents(items), { ...streamOptions, ...(messageId ? { messageId } : {}) });
}

/** `resumeUIMessageStream` as a `Response`: 204 with no body when no run is under way, else the SSE stream. */
export function resumeUIMessageStreamResponse(agent, options) {
  const fn = "resumeUIMessageStreamResponse";
  const opts = checkOptions(fn, options, { ...RESUME_OPTIONS, signal: "object", ...RESPONSE_OPTIONS });
  const { status, statusText, headers, ...streamOptions } = opts;
  const headerSet = responseHeaders(fn, headers);
  const stream = resumeUIMessageStream(agent, streamOptions);
  if (stream === null) return new Response(null, { status: 204 });
  return createUIMessageStreamResponse({ stream, status, statusText, headers: headerSet });
}
