// agent-loop-wasm/ui: the translator (U-12.1), one AgentEvent in, the UI message chunks it means out. It owns what
// the client has of one response: its frame (start, steps, the end), the assistant message being streamed, and the
// tool parts. It knows no stream, no option checks and no source of events: that is ui-stream.js.
import { FINISH_REASONS, approvalRequestChunk, continuedMessage, defaultToolOutput, errorMessage, isObject, isToolPart, randomId, resultText, signatureMeta, toolNameOf, userParts } from "./ui-common.js";
import { approvalToken } from "./ui-sign.js";

/**
 * The response's frame: `start` once, `start-step` … `finish-step` around each model response, and the chunks the
 * event in hand has produced so far (`out`; `collect` starts a new batch).
 */
class Frame {
  constructor(messageId) {
    this.messageId = messageId;
    this.out = [];
    this.started = false;
    this.inStep = false;
    this.stepHasResponse = false;
    this.step = 0;
  }

  collect() {
    this.out = [];
  }

  emit(chunk) {
    this.out.push(chunk);
  }

  ensureStart() {
    if (this.started) return;
    this.started = true;
    this.emit({ type: "start", messageId: this.messageId });
  }

  ensureStep() {
    this.ensureStart();
    if (this.inStep) return;
    this.inStep = true;
    this.step += 1;
    this.emit({ type: "start-step" });
  }

  finishStep() {
    this.stepHasResponse = false;
    if (!this.inStep) return;
    this.inStep = false;
    this.emit({ type: "finish-step" });
  }

  /** A model response begins: one per step, also when no turn_end came between two (a replay made from the
   *  transcript). */
  beginResponse() {
    if (this.stepHasResponse) this.finishStep();
    this.ensureStep();
    this.stepHasResponse = true;
  }
}

/**
 * The tool parts, by toolCallId: what the client has of each call (`{ toolName, input, sent, output }`: whether
 * tool-input-available went out, the input it carried, whether a final output went out). A continued message's tool
 * parts are known to the client already, and a call it denied ends with `tool-output-denied`.
 */
class ToolParts {
  constructor(frame, options, continued) {
    this.frame = frame;
    this.toolOutput = options.toolOutput ?? defaultToolOutput;
    this.dynamic = options.dynamicTools === true ? { dynamic: true } : {};
    this.approvalKey = options.approvalKey;
    this.calls = new Map();
    this.denied = new Set();
    for (const part of continued?.parts ?? []) {
      if (!isToolPart(part) || typeof part.toolCallId !== "string") continue;
      const output = ["output-available", "output-error", "output-denied"].includes(part.state) && part.preliminary !== true;
      this.calls.set(part.toolCallId, { toolName: toolNameOf(part), input: part.state !== "input-streaming", sent: part.input, output });
      if (part.state === "approval-responded" && part.approval?.approved === false) this.denied.add(part.toolCallId);
    }
  }

  /**
   * A call first seen as a block of the assistant message: `tool-input-start`, unless the client knows the call.
   * Returns whether the client has its input already (then the block has nothing more to send).
   */
  open(toolCallId, toolName) {
    const known = this.calls.get(toolCallId);
    if (known) return known.input;
    this.calls.set(toolCallId, { toolName, input: false, output: false });
    this.frame.emit({ type: "tool-input-start", toolCallId, toolName, ...this.dynamic });
    return false;
  }

  /** Sends a call's whole input (`tool-input-available`) unless the client has it; returns the call's record. */
  announce(toolCallId, toolName, input, meta = {}) {
    let call = this.calls.get(toolCallId);
    if (!call) {
      call = { toolName, input: false, output: false };
      this.calls.set(toolCallId, call);
    }
    if (!call.input) {
      call.input = true;
      call.sent = input ?? {};
      this.frame.ensureStep();
      this.frame.emit({ type: "tool-input-available", toolCallId, toolName: call.toolName, input: call.sent, ...this.dynamic, ...meta });
    }
    return call;
  }

  /** tool_execution_update: a preliminary output, while no final one went out. */
  progress(event) {
    const call = this.announce(event.toolCallId, event.toolName, event.args);
    if (call.output) return;
    const output = this.toolOutput(event.partialResult, { toolCallId: event.toolCallId, toolName: call.toolName });
    this.frame.emit({ type: "tool-output-available", toolCallId: event.toolCallId, output, preliminary: true, ...this.dynamic });
  }

  /** The call's final output, once: denied, an error, or its result. */
  end(event) {
    const call = this.announce(event.toolCallId, event.toolName, event.args);
    if (call.output) return;
    call.output = true;
    const { toolCallId } = event;
    if (this.denied.has(toolCallId)) {
      this.frame.emit({ type: "tool-output-denied", toolCallId });
    } else if (event.isError) {
      this.frame.emit({ type: "tool-output-error", toolCallId, errorText: resultText(event.result), ...this.dynamic });
    } else {
      const output = this.toolOutput(event.result, { toolCallId, toolName: call.toolName });
      this.frame.emit({ type: "tool-output-available", toolCallId, output, ...this.dynamic });
    }
  }

  /** A tool result message: its output, but only for a call the client has (a replay from the transcript has no
   *  tool_execution_end). */
  result(message) {
    const call = this.calls.get(message.toolCallId);
    if (!call || call.output) return;
    this.end({ toolCallId: message.toolCallId, toolName: message.toolName, result: message, isError: message.isError === true });
  }

  /** U-12.5: the approval request, its token signed over the call as the client holds it. */
  requestApproval(event) {
    const call = this.announce(event.toolCallId, event.toolName, event.args);
    const key = this.approvalKey;
    const token = key ? approvalToken(key, event.toolCallId, call.toolName, call.sent, event.expiresAt) : event.toolCallId;
    this.frame.emit(approvalRequestChunk(event, token));
  }
}

/** The content blocks of a message, or none. */
const contentOf = (message) => (Array.isArray(message?.content) ? message.content : []);

/** The text of a text or thinking block, else undefined. */
const textOf = (block) => (block?.type === "text" ? block.text : block?.type === "thinking" ? block.thinking : undefined);

/**
 * The assistant message being streamed: per content index, what the client has of that block. Text and reasoning
 * are synced by length from the message the event carries, so a message seen first as a snapshot (a reconnecting
 * client's replay, or a message_end with no updates before it) and one streamed delta by delta give the same parts,
 * and a lagging reader never sends a piece twice.
 */
class StreamedMessage {
  constructor(frame, tools, sendReasoning) {
    this.frame = frame;
    this.tools = tools;
    this.sendReasoning = sendReasoning;
    this.blocks = null; // null between messages
  }

  get streaming() {
    return this.blocks !== null;
  }

  begin(message) {
    this.frame.beginResponse();
    this.blocks = [];
    // What the message already holds is the state so far (a replayed partial message, or a message whose content
    // came without updates): sent as one piece per block.
    contentOf(message).forEach((block, i) => this.sync(this.open(i, block, false), textOf(block)));
  }

  end(message) {
    if (!this.streaming) this.begin(message);
    contentOf(message).forEach((block, i) => {
      const b = this.open(i, block, false);
      this.sync(b, textOf(block));
      this.close(b, block);
    });
    this.blocks.forEach((b) => this.close(b, undefined));
    this.blocks = null;
  }

  update(event) {
    const message = event.message;
    // An update of a message not seen starting (a reader that joined mid-message): its content is the state so far.
    if (!this.streaming) this.begin(message);
    const ev = event.assistantMessageEvent;
    if (!isObject(ev) || typeof ev.contentIndex !== "number") return;
    const i = ev.contentIndex;
    const block = Array.isArray(message?.content) ? message.content[i] : undefined;
    switch (ev.type) {
      case "text_start":
      case "thinking_start":
      case "text_delta":
      case "thinking_delta":
        this.sync(this.open(i, block, true), textOf(block));
        break;
      case "toolcall_start": {
        // Every delta of this call is still to come (also when a snapshot opened it first): stream them.
        const b = this.open(i, block, true);
        if (b?.kind === "tool" && !b.ended) b.live = true;
        break;
      }
      case "toolcall_delta": {
        const b = this.open(i, block, true);
        if (b?.kind === "tool" && b.live && !b.ended && typeof ev.delta === "string" && ev.delta !== "") {
          this.frame.emit({ type: "tool-input-delta", toolCallId: b.id, inputTextDelta: ev.delta });
        }
        break;
      }
      case "text_end":
      case "thinking_end": {
        const b = this.open(i, block, true);
        this.sync(b, typeof ev.content === "string" ? ev.content : textOf(block));
        this.close(b, block);
        break;
      }
      case "toolcall_end": {
        const call = isObject(ev.toolCall) ? ev.toolCall : block;
        this.close(this.open(i, call, true), call);
        break;
      }
      default:
        break;
    }
  }

  /**
   * Opens block `i` (`block` is the message's content[i]). `live` marks a tool call whose argument deltas are sent:
   * one opened by its toolcall_start event. One first seen in a snapshot is not (the deltas before the snapshot are
   * unknown, as a call's partial arguments keep no JSON text), unless its toolcall_start follows: its input then
   * arrives whole with tool-input-available.
   */
  open(i, block, live) {
    if (!isObject(block)) return undefined;
    if (this.blocks[i]) return this.blocks[i];
    const id = `${this.frame.step}-${i}`;
    let b;
    if (block.type === "text") {
      b = { kind: "text", id, len: 0, ended: false };
      this.frame.emit({ type: "text-start", id });
    } else if (block.type === "thinking") {
      b = { kind: "reasoning", id, len: 0, ended: false, skip: !this.sendReasoning };
      if (!b.skip) this.frame.emit({ type: "reasoning-start", id });
    } else if (block.type === "toolCall" && typeof block.id === "string") {
      b = { kind: "tool", id: block.id, live, ended: false };
      b.ended = this.tools.open(block.id, block.name);
    } else {
      return undefined;
    }
    this.blocks[i] = b;
    return b;
  }

  /** Sends what the client lacks of a text or reasoning block, whose whole text so far is `text`. */
  sync(b, text) {
    if (!b || b.ended || b.skip || b.kind === "tool" || typeof text !== "string" || text.length <= b.len) return;
    this.frame.emit({ type: b.kind === "text" ? "text-delta" : "reasoning-delta", id: b.id, delta: text.slice(b.len) });
    b.len = text.length;
  }

  /** Ends a block once: a tool call's input goes out whole, text and reasoning end with their signatures. */
  close(b, block) {
    if (!b || b.ended) return;
    b.ended = true;
    if (b.kind === "tool") {
      this.tools.announce(b.id, block?.name, block?.arguments, signatureMeta({ thoughtSignature: block?.thoughtSignature }));
    } else if (b.skip) {
      // reasoning the caller chose not to send
    } else if (b.kind === "text") {
      this.frame.emit({ type: "text-end", id: b.id, ...signatureMeta({ textSignature: block?.textSignature }) });
    } else {
      const meta = signatureMeta({ thinkingSignature: block?.thinkingSignature, redacted: block?.redacted === true ? true : undefined });
      this.frame.emit({ type: "reasoning-end", id: b.id, ...meta });
    }
  }
}

/**
 * The translator: sync, so a live partial message is read when its event is emitted. One response: `start` …
 * `finish` (or `abort`) for the first run seen; after that (`done`) every event gives no chunks.
 */
export class Translator {
  constructor(options) {
    const continued = continuedMessage(options.originalMessages);
    this.messageId = options.messageId ?? continued?.id ?? randomId();
    this.onError = options.onError ?? errorMessage;
    this.frame = new Frame(this.messageId);
    this.tools = new ToolParts(this.frame, options, continued);
    this.message = new StreamedMessage(this.frame, this.tools, options.sendReasoning !== false);
    this.done = false;
    this.lastAssistant = undefined;
    // When continuing the client's last assistant message (after approvals), a user message in this run is steering.
    this.sawAssistant = continued !== undefined;
    this.steering = 0;
  }

  push(event) {
    if (this.done) return [];
    this.frame.collect();
    switch (event.type) {
      case "agent_start":
        this.frame.ensureStart();
        break;
      case "message_start":
        if (event.message?.role === "assistant") this.message.begin(event.message);
        break;
      case "message_update":
        if (event.message?.role === "assistant" || this.message.streaming) this.message.update(event);
        break;
      case "message_end":
        this.messageEnd(event.message);
        break;
      case "tool_execution_start":
        this.tools.announce(event.toolCallId, event.toolName, event.args);
        break;
      case "tool_execution_update":
        this.tools.progress(event);
        break;
      case "tool_execution_end":
        this.tools.end(event);
        break;
      case "tool_approval_request":
        this.tools.requestApproval(event);
        break;
      case "turn_end":
        this.frame.finishStep();
        break;
      case "agent_end":
        this.agentEnd();
        break;
      default:
        break; // events this version does not know: nothing for the client
    }
    return this.frame.out;
  }

  /** The response ends with an error chunk now (a failed source or a throwing callback). */
  fail(error) {
    if (this.done) return [];
    this.done = true;
    this.frame.collect();
    this.frame.emit({ type: "error", errorText: this.onError(error) });
    return this.frame.out;
  }

  /** The response ends as aborted now (the caller's `abortSignal`), whatever the source still holds. */
  abort(reason) {
    if (this.done) return [];
    this.frame.collect();
    this.closeOpenParts();
    this.frame.emit({ type: "abort", ...(typeof reason === "string" ? { reason } : {}) });
    this.done = true;
    return this.frame.out;
  }

  messageEnd(m) {
    if (m?.role === "assistant") {
      this.endAssistant(m);
    } else if (m?.role === "toolResult" && typeof m.toolCallId === "string") {
      this.tools.result(m);
    } else if (m?.role === "user" && this.sawAssistant) {
      // A user message inside a run after its first model response: steering or a follow-up.
      this.frame.ensureStart();
      this.steering += 1;
      this.frame.emit({ type: "steering-message", id: `${this.messageId}-steering-${this.steering}`, parts: userParts(m.content) });
    }
  }

  /** `message` is undefined when the response ends while the message streams (its end never came). */
  endAssistant(message) {
    this.message.end(message);
    this.sawAssistant = true;
    if (message !== undefined) this.lastAssistant = message;
    if (message?.stopReason === "error") this.frame.emit({ type: "error", errorText: this.onError(message.errorMessage ?? "The model request failed") });
  }

  /** The run's end: `abort` if its last model response was aborted, else `finish` with that response's reason. */
  agentEnd() {
    this.closeOpenParts();
    const last = this.lastAssistant;
    if (last?.stopReason === "aborted") {
      this.frame.emit({ type: "abort", ...(typeof last.errorMessage === "string" ? { reason: last.errorMessage } : {}) });
    } else {
      this.frame.emit({ type: "finish", finishReason: FINISH_REASONS[last?.stopReason] ?? "other" });
    }
    this.done = true;
  }

  /** Before the last chunk: the response started, a streaming message ended, its step finished. */
  closeOpenParts() {
    this.frame.ensureStart();
    if (this.message.streaming) this.endAssistant(undefined);
    this.frame.finishStep();
  }
}
