// The stream pump: `FastPaths::pump` of src/js/host.rs (reference: src/core/fast/pump.rs) in one crossing per event (L-3.6.2). Takes the next event of one
// of our own streams (pkg-template/streams.js, marked `__agentLoopWasmStream`) or dispatches one the iterator
// produced, puts a block event's partial into its transcript slot and hands the `message_update` to the observing
// sink. The hottest call of a run. Answers a `PUMP` code and never throws: a throw is a code too.

/** What `pumpEvent` / `pumpQueued` answer. Twin of `protocol::pump` (src/js/protocol.rs), which documents each;
 *  `START`…`OTHER` are the loop's `EventCode`s (src/core/fast/pump.rs). */
export const PUMP = Object.freeze({
  START: 0, BLOCK: 1, DONE: 2, ERROR: 3, OTHER: 4,
  DELIVERED: 5, UPDATE: 6, SINK_FAILED: 7, EMPTY: 8, THREW: 9,
  NO_SLOT: -1,
});

const EMPTY = Symbol("agent-loop-wasm.empty");

/** The next event queued in one of our own streams, or EMPTY. */
function take(source) {
  // Only our own streams carry the marker; a caller's hostile object must not throw from here.
  try {
    if (source !== null && typeof source === "object" && source.__agentLoopWasmStream === true &&
        typeof source._take === "function") {
      return source._take(EMPTY);
    }
  } catch {
    // not ours, or broken: the iterator path handles it
  }
  return EMPTY;
}

/** `EventCode::of` of src/core/fast/pump.rs. */
const EVENT_CODES = {
  start: PUMP.START,
  text_start: PUMP.BLOCK, text_delta: PUMP.BLOCK, text_end: PUMP.BLOCK,
  thinking_start: PUMP.BLOCK, thinking_delta: PUMP.BLOCK, thinking_end: PUMP.BLOCK,
  toolcall_start: PUMP.BLOCK, toolcall_delta: PUMP.BLOCK, toolcall_end: PUMP.BLOCK,
  done: PUMP.DONE,
  error: PUMP.ERROR,
};

/** The loop's dispatch code of an assistant message event: `PUMP.START`…`PUMP.OTHER`. */
function eventCode(event) {
  if (event === null || typeof event !== "object") return PUMP.OTHER;
  const type = event.type; // read once: a caller's getter may answer differently the second time
  return typeof type === "string" && Object.prototype.hasOwnProperty.call(EVENT_CODES, type)
    ? EVENT_CODES[type]
    : PUMP.OTHER;
}

/** L-3.6.2 fused: the partial replaces messages[index]; returns the message_update event. */
function streamUpdate(event, messages, index) {
  const partial = event.partial;
  messages[index] = partial;
  return { type: "message_update", assistantMessageEvent: event, message: { ...partial } };
}

// `FastPaths::pump` in one step. The value of every code but `DELIVERED` and `EMPTY` waits in `pumped` for
// `takePumped`. Never throws, so the binding needs no exception wrapper on the hottest call of a stream.
let pumped;

export function takePumped() {
  const v = pumped;
  pumped = undefined;
  return v;
}

/** An event the iterator produced (or one taken from our own queue), dispatched. */
export function pumpEvent(event, messages, index, sink) {
  let code;
  let update;
  try {
    code = eventCode(event);
    if (code !== PUMP.BLOCK || index < 0 /* PUMP.NO_SLOT: no transcript slot */) {
      pumped = event;
      return code;
    }
    update = streamUpdate(event, messages, index);
  } catch (e) {
    pumped = e;
    return PUMP.THREW;
  }
  if (sink === undefined) {
    pumped = update;
    return PUMP.UPDATE;
  }
  try {
    Reflect.apply(sink, undefined, [update]);
  } catch (e) {
    pumped = e;
    return PUMP.SINK_FAILED;
  }
  return PUMP.DELIVERED;
}

/** The most queued events one `pumpQueued` call delivers to the sink. */
const DRAIN = 32;

/** The next event queued in our own stream `source`, dispatched; `PUMP.EMPTY` when none is queued. Block events
 *  the sink takes (`PUMP.DELIVERED`) are drained in one call while more are queued: the loop does nothing between
 *  two of them, so it only needs to hear that some were delivered. */
export function pumpQueued(source, messages, index, sink) {
  let event = take(source);
  if (event === EMPTY) return PUMP.EMPTY;
  let code = pumpEvent(event, messages, index, sink);
  for (let n = 1; code === PUMP.DELIVERED && n < DRAIN; n++) {
    event = take(source);
    if (event === EMPTY) break;
    code = pumpEvent(event, messages, index, sink);
  }
  return code;
}
