// The assembler: a wire format reports what arrived (a text delta for its block `key`, a tool call opening, usage,
// the finish reason); the assembler keeps the content blocks, applies the block rules of P-6.1.4 (a block opens at
// its first delta and closes when a block of another kind starts, when the provider closes it, or at the end in
// content order), runs the incremental argument parser (P-6.4.2) and the final parse (P-6.4.3), prices the usage
// (§6.10) and queues ops; `applyOps` applies them to the one message object every event shares and pushes the events.
//
// Ops (plain objects, oldest first):
//   { op: "meta", key, value }                      message[key] = value
//   { op: "usage", value }                          message.usage = value
//   { op: "open", index, kind, fields }             content.push(fields); `<kind>_start`
//   { op: "delta", index, kind, delta, patches }    text/thinking += delta, or the patches to `arguments`; `<kind>_delta`
//   { op: "setField", index, key, value }           content[index][key] = value, no event
//   { op: "close", index, kind, arguments, error }  tool calls: `arguments` = the final object, or {} and
//                                                   `argumentsError` = error; `<kind>_end`
//   { op: "done", reason, raw }                     stopReason (rawStopReason); `done`
//   { op: "fail", message, raw }                    stopReason "error", errorMessage (rawStopReason); `error`

import { PartialJson, apply } from "../partial-json.js";
import { parseToolArguments } from "./repair.js";

/** Block kinds: the value of a content block's `type`. */
export const BLOCK = Object.freeze({ TEXT: "text", THINKING: "thinking", TOOL_CALL: "toolCall" });
/** The reasons a reply ends with `done` (P-6.10); every other ending is an `error` event. */
export const STOP_REASONS = Object.freeze(["stop", "length", "toolUse"]);

const PREFIX = { text: "text", thinking: "thinking", toolCall: "toolcall" };
const EVENTS = {};
for (const [kind, prefix] of Object.entries(PREFIX)) {
  EVENTS[kind] = [`${prefix}_start`, `${prefix}_delta`, `${prefix}_end`];
}
const NO_PATCHES = Object.freeze([]);


/**
 * A tool call's final arguments from its text (P-6.4.3): `parseToolArguments`, except that a call of a tool whose
 * schema accepts `{}` whose text is `null` (trimmed) gets `{}` (issue 33: Groq sends `"null"` for a call without parameters).
 * @param {string} text
 * @param {boolean} acceptNull
 * @returns {object} the arguments object; throws Error(P-6.4.3 text) when the text is not one
 */
export function finalArguments(text, acceptNull) {
  try {
    return parseToolArguments(text);
  } catch (e) {
    if (acceptNull && text.trim() === "null") return {};
    throw e;
  }
}

/**
 * Whether a tool's `parameters` schema accepts `{}`: none, `true`, or an object schema (no `type`, or `"object"`, or a
 * list holding it) that requires no property and no minimum number of them; a schema this cannot read does not.
 * @param {unknown} schema
 * @returns {boolean}
 */
export function acceptsEmptyObject(schema) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema === undefined || schema === true;
  const has = (k) => Object.prototype.hasOwnProperty.call(schema, k);
  const type = schema.type;
  const objectType = !has("type") || type === "object" || (Array.isArray(type) && type.includes("object"));
  const requiresNone = !has("required") || (Array.isArray(schema.required) && schema.required.length === 0);
  const noMinimum = !has("minProperties") || schema.minProperties === 0;
  return objectType && requiresNone && noMinimum && !["anyOf", "oneOf", "allOf", "not", "if", "$ref"].some(has);
}

/** A count as §6.10 reads it: a finite positive number, else 0. */
const clamp = (n) => (typeof n === "number" && n > 0 && n < Infinity ? n : 0);
/** A usage number as the message carries it: not finite is null. */
const finite = (n) => (Number.isFinite(n) ? n : null);
/** Prices per million tokens: input, output, cacheRead, cacheWrite (missing ones are 0). */
const rates = (c) => ["input", "output", "cacheRead", "cacheWrite"].map((k) => (typeof c?.[k] === "number" ? c[k] : 0));

/** Assembles one response's content blocks and queues the message ops (see the top of this file). */
export class Assembler {
  /**
   * @param {number[]} cost prices per million tokens: input, output, cacheRead, cacheWrite
   * @param {boolean} keepOpen text and thinking blocks stay open until the end (openai-completions, P-6.1.4)
   */
  constructor(cost = [0, 0, 0, 0], keepOpen = false) {
    this.blocks = [];
    this.ops = [];
    this.cost = cost;
    /** `[inputTokensAbove, prices]`: the prices once a request's input exceeds the threshold (issue 42). */
    this.tiers = [];
    this.keepOpen = keepOpen;
    this.done = false;
    /** Tools whose schema accepts `{}`: a call of one whose arguments are `null` gets `{}` (issue 33). */
    this.acceptNull = [];
  }

  /**
   * Reads `model.cost` and its `tiers` (missing numbers are 0; a tier without a finite threshold is ignored).
   * @param {object} model
   * @param {boolean} keepOpen
   * @returns {Assembler}
   */
  static forModel(model, keepOpen) {
    const cost = model?.cost;
    const asm = new Assembler(rates(cost), keepOpen);
    const tiers = cost?.tiers;
    if (Array.isArray(tiers)) {
      for (const t of tiers) if (Number.isFinite(t?.inputTokensAbove)) asm.tiers.push([t.inputTokensAbove, rates(t)]);
    }
    return asm;
  }

  /** The queued ops, oldest first, left in the queue. @returns {object[]} */
  pending() {
    return this.ops;
  }

  /** The queued ops, oldest first; the queue is emptied. @returns {object[]} */
  drain() {
    const ops = this.ops;
    this.ops = [];
    return ops;
  }

  /** @returns {boolean} whether `finish` or `fail` ran */
  finished() {
    return this.done;
  }

  /** @returns {boolean} */
  hasToolCalls() {
    return this.blocks.some((b) => b.kind === BLOCK.TOOL_CALL);
  }

  /** `message[key] = value` (`responseId`, `responseModel`). @param {string} key @param {unknown} value */
  meta(key, value) {
    if (!this.done) this.ops.push({ op: "meta", key, value });
  }

  /** The latest open block with `key`, or -1. */
  findOpen(key) {
    const blocks = this.blocks;
    for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i].open && blocks[i].key === key) return i;
    return -1;
  }

  /** The latest block with `key`, or -1. */
  findAny(key) {
    const blocks = this.blocks;
    for (let i = blocks.length - 1; i >= 0; i--) if (blocks[i].key === key) return i;
    return -1;
  }

  openAt(key, kind, fields) {
    if (!this.keepOpen) {
      // A block of another kind starts: open text/thinking blocks of other kinds close.
      this.blocks.forEach((b, i) => {
        if (b.open && b.kind !== BLOCK.TOOL_CALL && b.kind !== kind) this.closeIndex(i);
      });
    }
    const index = this.blocks.length;
    const tool = kind === BLOCK.TOOL_CALL;
    this.blocks.push({ kind, key, open: true, parser: tool ? new PartialJson() : undefined, text: "", signature: "", atClose: undefined, name: "" });
    this.ops.push({ op: "open", index, kind, fields });
    return index;
  }

  /** `emitEmpty`: an empty delta still emits `<kind>_delta` (as the reference); without it it only opens the block. */
  streamingDelta(key, kind, delta, emitEmpty) {
    if (this.done) return;
    let index = this.findOpen(key);
    if (index < 0 || this.blocks[index].kind !== kind) {
      index = this.openAt(key, kind, kind === BLOCK.TEXT ? { type: "text", text: "" } : { type: "thinking", thinking: "" });
    }
    if (emitEmpty || delta !== "") this.ops.push({ op: "delta", index, kind, delta, patches: NO_PATCHES });
  }

  /** @param {string} key @param {string} delta */
  textDelta(key, delta) {
    this.streamingDelta(key, BLOCK.TEXT, delta, false);
  }

  /** @param {string} key @param {string} delta */
  thinkingDelta(key, delta) {
    this.streamingDelta(key, BLOCK.THINKING, delta, false);
  }

  /** A delta the provider sent, emitted even when empty (issue 33). @param {string} key @param {string} kind @param {string} delta */
  sentDelta(key, kind, delta) {
    this.streamingDelta(key, kind, delta, true);
  }

  /** Opens a text or thinking block without text yet (a provider announced it). @param {string} key @param {string} kind */
  openBlock(key, kind) {
    this.streamingDelta(key, kind, "", false);
  }

  /** A thinking block that arrives complete (redacted thinking): opened and closed at once. @param {string} key @param {string} data */
  redactedThinking(key, data) {
    if (this.done) return;
    const fields = { type: "thinking", thinking: "", thinkingSignature: data, redacted: true };
    this.closeIndex(this.openAt(key, BLOCK.THINKING, fields));
  }

  /** The tools whose schema accepts an empty object. @param {string[]} names */
  acceptNullArguments(names) {
    this.acceptNull = names;
  }

  /** Sets a field of the latest block with `key` (no event). @param {string} key @param {string} field @param {unknown} value */
  setField(key, field, value) {
    const index = this.findAny(key);
    if (index < 0) return;
    if (field === "name" && typeof value === "string") this.blocks[index].name = value;
    this.ops.push({ op: "setField", index, key: field, value });
  }

  /**
   * The value (an array at first) the open block with `key` writes to `field` as JSON text when it closes: `update`
   * gets the current value and returns the new one. Nothing happens without an open block with `key`.
   * @param {string} key @param {string} field @param {(value: unknown) => unknown} update
   */
  atClose(key, field, update) {
    const index = this.findOpen(key);
    if (index < 0) return;
    const block = this.blocks[index];
    block.atClose ??= [field, []];
    block.atClose[1] = update(block.atClose[1]);
  }

  /** Appends to the latest block's signature (`thinkingSignature`), no event. @param {string} key @param {string} field @param {string} delta */
  appendSignature(key, field, delta) {
    const index = this.findAny(key);
    if (index < 0) return;
    const block = this.blocks[index];
    block.signature += delta;
    this.ops.push({ op: "setField", index, key: field, value: block.signature });
  }

  /** @param {string} key @param {string} id @param {string} name */
  toolStart(key, id, name) {
    if (this.done) return;
    this.blocks[this.openAt(key, BLOCK.TOOL_CALL, { type: "toolCall", id, name, arguments: {} })].name = name;
  }

  /** Whether a block with this key is open. @param {string} key @returns {boolean} */
  hasOpen(key) {
    return this.findOpen(key) >= 0;
  }

  /** A fragment of a tool call's arguments text. @param {string} key @param {string} delta */
  toolArgsDelta(key, delta) {
    if (this.done) return;
    const index = this.findOpen(key);
    const block = this.blocks[index];
    if (!block?.parser) return;
    block.text += delta;
    const patches = [];
    block.parser.push(delta, patches);
    this.ops.push({ op: "delta", index, kind: BLOCK.TOOL_CALL, delta, patches });
  }

  /**
   * Arguments that arrive as changes at paths (Gemini 3's `partialArgs`), not as text: `patches` update the live
   * value; `delta` is what the `toolcall_delta` event carries. The final text comes by `toolArgsComplete`.
   * @param {string} key @param {string} delta @param {object[]} patches
   */
  toolArgsPatched(key, delta, patches) {
    if (this.done) return;
    const index = this.findOpen(key);
    if (index >= 0) this.ops.push({ op: "delta", index, kind: BLOCK.TOOL_CALL, delta, patches });
  }

  /** The provider sent the complete arguments text (Responses `.done`): it replaces what arrived. @param {string} key @param {string} full */
  toolArgsComplete(key, full) {
    const block = this.blocks[this.findOpen(key)];
    if (block?.parser) block.text = full;
  }

  /** Closes the latest open block with `key` (the provider closed it). @param {string} key */
  close(key) {
    const index = this.findOpen(key);
    if (index >= 0) this.closeIndex(index);
  }

  closeIndex(index) {
    const block = this.blocks[index];
    if (!block.open) return;
    block.open = false;
    if (block.atClose) {
      this.ops.push({ op: "setField", index, key: block.atClose[0], value: JSON.stringify(block.atClose[1]) });
      block.atClose = undefined;
    }
    const op = { op: "close", index, kind: block.kind, arguments: undefined, error: undefined };
    if (block.parser) {
      try {
        op.arguments = finalArguments(block.text, this.acceptNull.includes(block.name));
      } catch (e) {
        op.error = e.message;
      }
    }
    this.ops.push(op);
  }

  closeAll() {
    for (let i = 0; i < this.blocks.length; i++) this.closeIndex(i);
  }

  /**
   * Token counts as the provider reports them (§6.10); queues `message.usage` with its cost.
   * @param {{input: number, output: number, cacheRead: number, cacheWrite: number, cacheWrite1h?: number,
   *   reasoning?: number, total?: number, billed?: number}} u
   */
  usage(u) {
    if (this.done) return;
    const [input, output, read, write] = [clamp(u.input), clamp(u.output), clamp(u.cacheRead), clamp(u.cacheWrite)];
    // The highest tier whose threshold the request's input (fresh, read and written) exceeds, as the reference's
    // `calculateCost` picks it.
    let prices = this.cost;
    let matched = -1;
    for (const [above, tier] of this.tiers) {
      if (input + read + write > above && above > matched) [prices, matched] = [tier, above];
    }
    const [pIn, pOut, pRead, pWrite] = prices;
    // The reference's arithmetic, operation for operation, so the numbers are equal to the last bit; a 1-hour cache
    // write costs twice the input rate (issue 33).
    const long = u.cacheWrite1h === undefined ? 0 : clamp(u.cacheWrite1h);
    const cost = [(pIn / 1e6) * input, (pOut / 1e6) * output, (pRead / 1e6) * read, (pWrite * (write - long) + pIn * 2 * long) / 1e6];
    const value = { input, output, cacheRead: read, cacheWrite: write };
    if (u.cacheWrite1h !== undefined) value.cacheWrite1h = clamp(u.cacheWrite1h);
    if (u.reasoning !== undefined) value.reasoning = clamp(u.reasoning);
    value.totalTokens = u.total === undefined ? finite(input + output + read + write) : clamp(u.total);
    const billed = Number.isFinite(u.billed) && u.billed >= 0 ? u.billed : undefined;
    value.cost = {
      input: finite(cost[0]),
      output: finite(cost[1]),
      cacheRead: finite(cost[2]),
      cacheWrite: finite(cost[3]),
      total: billed ?? finite(cost[0] + cost[1] + cost[2] + cost[3]),
      totalFromProvider: billed !== undefined,
    };
    this.ops.push({ op: "usage", value });
  }

  /** Open blocks close in content order, then `done`. @param {string} reason one of `STOP_REASONS` @param {string} [raw] */
  finish(reason, raw) {
    if (this.done) return;
    this.closeAll();
    this.done = true;
    this.ops.push({ op: "done", reason, raw });
  }

  /** Open blocks close in content order, then `error` with this message. @param {string} message @param {string} [raw] */
  fail(message, raw) {
    if (this.done) return;
    this.closeAll();
    this.done = true;
    this.ops.push({ op: "fail", message, raw });
  }
}

/** `obj[key] = value`, ignoring a throwing setter or a missing object. */
function set(obj, key, value) {
  try {
    obj[key] = value;
  } catch {}
}

/** `stream.push(event)`, ignoring a throwing stream. */
export function pushEvent(stream, event) {
  try {
    stream.push(event);
  } catch {}
}

function blockAt(message, index) {
  try {
    return message.content[index];
  } catch {}
}

/**
 * The final `error` event: sets `stopReason` (`reason`), `errorMessage` (`text`) and `rawStopReason` (when given) on
 * `message` and pushes `{ type: "error", reason, error: message }`.
 * @param {object} message @param {{push(event: object): void}} stream
 * @param {"error"|"aborted"} reason @param {string} text @param {string} [raw]
 */
export function pushError(message, stream, reason, text, raw) {
  set(message, "stopReason", reason);
  set(message, "errorMessage", text);
  if (raw !== undefined) set(message, "rawStopReason", raw);
  pushEvent(stream, { type: "error", reason, error: message });
}

/**
 * Applies the assembler's ops to `message` (the one assistant message object every event shares as `partial`) and
 * pushes their events into `stream`. Errors thrown by the stream or by the message's setters are ignored.
 * @param {object[]} ops from `Assembler.drain()`
 * @param {object} message
 * @param {{push(event: object): void}} stream
 * @param {(text: string, raw: string | undefined) => void} [fail] handles a `fail` op (the driver's abort and secret
 *   rules); by default `pushError(message, stream, "error", text, raw)`
 */
export function applyOps(ops, message, stream, fail) {
  for (const o of ops) {
    switch (o.op) {
      case "delta": {
        const { index, kind, delta, patches } = o;
        try {
          const block = message.content[index];
          if (kind === BLOCK.TEXT) block.text += delta;
          else if (kind === BLOCK.THINKING) block.thinking += delta;
          else {
            const root = block.arguments;
            for (const p of patches) apply(root, p);
          }
        } catch {}
        pushEvent(stream, { type: EVENTS[kind][1], contentIndex: index, delta, partial: message });
        break;
      }
      case "open":
        try {
          message.content.push({ ...o.fields });
        } catch {}
        pushEvent(stream, { type: EVENTS[o.kind][0], contentIndex: o.index, partial: message });
        break;
      case "setField":
        set(blockAt(message, o.index), o.key, o.value);
        break;
      case "close": {
        const { index, kind } = o;
        const block = blockAt(message, index);
        if (kind === BLOCK.TOOL_CALL) {
          if (o.error === undefined) set(block, "arguments", o.arguments);
          else {
            set(block, "arguments", {});
            set(block, "argumentsError", o.error);
          }
          pushEvent(stream, { type: "toolcall_end", contentIndex: index, toolCall: block, partial: message });
        } else {
          let content;
          try {
            content = block[kind === BLOCK.TEXT ? "text" : "thinking"];
          } catch {}
          pushEvent(stream, { type: EVENTS[kind][2], contentIndex: index, content, partial: message });
        }
        break;
      }
      case "meta":
        set(message, o.key, o.value);
        break;
      case "usage":
        set(message, "usage", o.value);
        break;
      case "done":
        set(message, "stopReason", o.reason);
        if (o.raw !== undefined) set(message, "rawStopReason", o.raw);
        pushEvent(stream, { type: "done", reason: o.reason, message });
        break;
      case "fail":
        if (fail) fail(o.message, o.raw);
        else pushError(message, stream, "error", o.message, o.raw);
        break;
    }
  }
}
