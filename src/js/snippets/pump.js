// The stream pump: `Host::pump` of src/js/host.rs in one crossing per event (L-3.6.2). Takes the next event of one
// of our own streams (pkg-template/streams.js, marked `__agentLoopWasmStream`) or dispatches one the iterator
// produced, puts a block event's partial into its transcript slot and hands the `message_update` to the observing
// sink. The hottest call of a run. Answers a code and never throws: a throw is a code too.

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

const EVENT_CODES = {
  start: 0,
  text_start: 1, text_delta: 1, text_end: 1,
  thinking_start: 1, thinking_delta: 1, thinking_end: 1,
  toolcall_start: 1, toolcall_delta: 1, toolcall_end: 1,
  done: 2,
  error: 3,
};

/** The loop's dispatch code of an assistant message event: 0 start, 1 block, 2 done, 3 error, 4 other. */
function eventCode(event) {
  if (event === null || typeof event !== "object") return 4;
  const type = event.type; // read once: a caller's getter may answer differently the second time
  return typeof type === "string" && Object.prototype.hasOwnProperty.call(EVENT_CODES, type) ? EVENT_CODES[type] : 4;
}

/** L-3.6.2 fused: the partial replaces messages[index]; returns the message_update event. */
function streamUpdate(event, messages, index) {
  const partial = event.partial;
  messages[index] = partial;
  return { type: "message_update", assistantMessageEvent: event, message: { ...partial } };
}

// `Host::pump` in one step. Codes: 0–4 an event for the loop (its eventCode), 5 delivered to the
// sink, 6 an update to emit, 7 the sink threw, 8 nothing queued, 9 a getter of the event threw.
// The value of codes 0–4, 6, 7 and 9 waits in `pumped` for `takePumped`. Never throws, so the
// binding needs no exception wrapper on the hottest call of a stream.
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
    if (code !== 1 || index < 0) {
      pumped = event;
      return code;
    }
    update = streamUpdate(event, messages, index);
  } catch (e) {
    pumped = e;
    return 9;
  }
  if (sink === undefined) {
    pumped = update;
    return 6;
  }
  try {
    Reflect.apply(sink, undefined, [update]);
  } catch (e) {
    pumped = e;
    return 7;
  }
  return 5;
}

/** The most queued events one `pumpQueued` call delivers to the sink. */
const DRAIN = 32;

/** The next event queued in our own stream `source`, dispatched; 8 when none is queued. Block
 *  events the sink takes (5) are drained in one call while more are queued: the loop does
 *  nothing between two of them, so it only needs to hear that some were delivered. */
export function pumpQueued(source, messages, index, sink) {
  let event = take(source);
  if (event === EMPTY) return 8;
  let code = pumpEvent(event, messages, index, sink);
  for (let n = 1; code === 5 && n < DRAIN; n++) {
    event = take(source);
    if (event === EMPTY) break;
    code = pumpEvent(event, messages, index, sink);
  }
  return code;
}
