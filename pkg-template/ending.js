// The run-failure ending in JS, for when the wasm instance has failed (E-8.4.2) and the core cannot end the run
// itself: the twin of `core::agent_loop::end_with_failure` (D1.2), held to it by tests/js/parity.test.mjs. Not
// re-exported by the package's entries: api.js and agent.js import it.
import { zeroUsage } from "./usage.js";

/**
 * The D1.2 failure message, built here when the instance has failed and the core cannot build it
 * (same fields, same order as the core's).
 */
export function failureMessage(model, stopReason, errorMessage, textBlock = true) {
  const field = (key) => (model !== null && (typeof model === "object" || typeof model === "function") ? model[key] : undefined);
  return {
    role: "assistant",
    content: textBlock ? [{ type: "text", text: "" }] : [],
    api: field("api"),
    provider: field("provider"),
    model: field("id"),
    usage: zeroUsage(),
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}

function isAborted(signal) {
  try {
    return signal !== null && typeof signal === "object" && signal.aborted === true;
  } catch {
    return false;
  }
}

/**
 * A loop run as its events went by, so that when the instance fails mid-run (E-8.4.2) JS can end it
 * as D1.2 ends a failed run: every started tool call gets an error result, then the final assistant
 * message (the streamed partial with the error, or the D1.2 message), `turn_end` and `agent_end`.
 */
export class RunLedger {
  constructor(config, signal, observer) {
    this.config = config;
    this.signal = signal;
    /** Issue 32: the run's telemetry (agent-loop-wasm/otel), which sees each event first; else undefined. */
    this.observer = observer;
    this.started = false;
    this.turnOpen = false;
    this.ended = false;
    /** The assistant message being streamed (between its message_start and message_end). */
    this.partial = undefined;
    /** The turn's assistant message and tool results, for a turn_end of our own. */
    this.turnMessage = undefined;
    this.toolResults = [];
    /** tool_execution_start events without their end, by call id. */
    this.tools = new Map();
    /** newMessages: every message_end's message. */
    this.messages = [];
  }

  see(event) {
    if (event === null || typeof event !== "object") return event;
    if (this.observer !== undefined) this.observer.see(event);
    switch (event.type) {
      case "agent_start":
        this.started = true;
        break;
      case "turn_start":
        this.turnOpen = true;
        this.turnMessage = undefined;
        this.toolResults = [];
        break;
      case "turn_end":
        this.turnOpen = false;
        break;
      case "message_start":
      case "message_update":
        if (event.message?.role === "assistant") this.partial = event.message;
        break;
      case "message_end":
        this.partial = undefined;
        this.messages.push(event.message);
        if (event.message?.role === "assistant") this.turnMessage = event.message;
        if (event.message?.role === "toolResult") this.toolResults.push(event.message);
        break;
      case "tool_execution_start":
        this.tools.set(event.toolCallId, event);
        break;
      case "tool_execution_end":
        this.tools.delete(event.toolCallId);
        break;
      case "agent_end":
        this.ended = true;
        break;
    }
    return event;
  }

  /** The events that end the run with the error `text`, each recorded as it is taken. */
  *ending(text) {
    if (this.ended) return;
    const stopReason = isAborted(this.signal) ? "aborted" : "error";
    if (!this.started) yield this.see({ type: "agent_start" });
    if (this.tools.size > 0) {
      for (const start of [...this.tools.values()]) {
        const { toolCallId, toolName } = start;
        const content = [{ type: "text", text }];
        const result = { content, details: {} };
        yield this.see({ type: "tool_execution_end", toolCallId, toolName, result, isError: true });
        const message = { role: "toolResult", toolCallId, toolName, content, details: {}, isError: true, timestamp: Date.now() };
        yield this.see({ type: "message_start", message });
        yield this.see({ type: "message_end", message });
      }
      if (this.turnOpen) yield this.see({ type: "turn_end", message: this.turnMessage, toolResults: this.toolResults });
    }
    if (!this.turnOpen) yield this.see({ type: "turn_start" });
    let failure;
    if (this.partial !== undefined) {
      failure = { ...this.partial, stopReason, errorMessage: text };
    } else {
      failure = failureMessage(this.config?.model, stopReason, text);
      yield this.see({ type: "message_start", message: failure });
    }
    yield this.see({ type: "message_end", message: failure });
    yield this.see({ type: "turn_end", message: failure, toolResults: [] });
    yield this.see({ type: "agent_end", messages: this.messages });
  }
}
