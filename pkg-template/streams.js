// Push/pull event streams (SPEC API-1.5): `EventStream`, `AssistantMessageEventStream` and
// `createAssistantMessageEventStream`, with the observable behaviour of pi-ai 1.6.0's classes.
// This file owns only stream semantics; it holds no loop, queue-mode, provider or scheduling logic.
//
// Marker for the Rust core (SPEC L-3.6.4). Both classes carry, on their prototypes:
//   - `__agentLoopWasmStream`: a non-enumerable, read-only property whose value is `true`. The core
//     reads it to tell this library's streams (including subclasses) from foreign ones.
//   - `hasResult()`: a method returning `true` when `result()` has resolved or may still resolve
//     (the stream is not done yet), and `false` when the stream is done without a result, so
//     `result()` stays pending. The core calls it after iteration ended without a `done`/`error`
//     event: `false` means "no result will come" and needs no timeout. (As in pi-ai, a later
//     `end(r)` with a defined `r` can still set a result; `hasResult()` describes the moment of
//     the call.)
// Neither member is in `index.d.ts`: they are internal, and leaving them out keeps pi-ai stream
// instances assignable to the declared classes (API-1.5.3).
//
// Speed: events are kept in an array with a head index (no `shift()`), a single pending reader is
// held in one slot (extra concurrent readers, which the single-consumer model does not expect,
// go to a rarely used overflow list), and iteration uses a plain iterator object rather than an
// async generator. Plain ES2020: no class fields, no `#private`.

const MARKER = "__agentLoopWasmStream";

const noop = () => {};

/** Monotonic milliseconds; `Date.now()` where `performance` is missing. */
const monotonicNow =
  typeof performance !== "undefined" && performance !== null && typeof performance.now === "function"
    ? () => performance.now()
    : () => Date.now();

/** Compact the queue once this many consumed slots sit before the head (and they are the majority). */
const COMPACT_AFTER = 1024;

const DONE_RESULT = Object.freeze({ value: undefined, done: true });

/** A generic push/pull async queue of events `T` with a final result `R`. */
export class EventStream {
  /**
   * @param {(event: any) => boolean} isComplete - whether an event ends the stream
   * @param {(event: any) => any} extractResult - the result carried by a completing event
   */
  constructor(isComplete, extractResult) {
    this._isComplete = isComplete;
    this._extractResult = extractResult;
    /** Events not yet read; `_queue[_head]` is the next one. */
    this._queue = [];
    this._head = 0;
    /** The pending reader's resolve function, if a reader waits on an empty queue. */
    this._waiter = null;
    /** Further concurrent readers (unexpected for a single consumer; kept for safety). */
    this._waiters = null;
    /** Named as in pi-ai, so subclasses written for pi-ai that read `this.done` keep working. */
    this.done = false;
    this._hasResult = false;
    this._resolveResult = null;
    // Never rejected, so it can never become an unhandled rejection.
    this._resultPromise = new Promise((resolve) => {
      this._resolveResult = resolve;
    });
    // A thenable result that rejects must not become an unhandled rejection when nobody asks.
    // (Not `.catch(f)`: its derived promise would re-resolve with the value and read `then` again.)
    this._resultPromise.then(noop, noop);
  }

  /** Deliver an event. Ignored once the stream is done; a completing event is still delivered. */
  push(event) {
    if (this.done) return;
    if (this._isComplete(event)) {
      this.done = true;
      this._setResult(this._extractResult(event));
    }
    const waiter = this._waiter;
    if (waiter !== null) {
      // A waiting reader implies an empty queue, so handing the event over keeps the order.
      this._waiter = this._takeOverflowWaiter();
      waiter({ value: event, done: false });
      if (this.done) this._wakeAllWithDone();
    } else {
      this._queue.push(event);
    }
  }

  /** Mark the stream done; `result` becomes the result only if it is not `undefined`. */
  end(result) {
    this.done = true;
    if (result !== undefined) this._setResult(result);
    this._wakeAllWithDone();
  }

  /** The final result: resolves at the first completing event or `end(result)`, else stays pending. */
  result() {
    return this._resultPromise;
  }

  /** Internal (see the top of this file): whether a result is set or may still be set. */
  hasResult() {
    return this._hasResult || !this.done;
  }

  [Symbol.asyncIterator]() {
    return new EventStreamIterator(this);
  }

  _setResult(value) {
    if (this._hasResult) return;
    this._hasResult = true;
    this._resolveResult(value);
  }

  _takeOverflowWaiter() {
    const rest = this._waiters;
    if (rest === null || rest.length === 0) return null;
    return rest.shift();
  }

  _wakeAllWithDone() {
    let waiter = this._waiter;
    this._waiter = null;
    while (waiter !== null) {
      waiter(DONE_RESULT);
      waiter = this._takeOverflowWaiter();
    }
  }

  /**
   * Internal, for the Rust core: the next queued event taken synchronously, or `empty` when none is
   * queued (the caller then awaits `next()` as usual). Same single-consumer queue as iteration.
   */
  _take(empty) {
    const queue = this._queue;
    const head = this._head;
    if (head >= queue.length) return empty;
    const value = queue[head];
    queue[head] = undefined;
    const next = head + 1;
    if (next === queue.length) {
      clear(queue);
      this._head = 0;
    } else if (next >= COMPACT_AFTER && next * 2 >= queue.length) {
      queue.splice(0, next);
      this._head = 0;
    } else {
      this._head = next;
    }
    return value;
  }

  /** The next iteration step for any reader of this stream. */
  _next() {
    const queue = this._queue;
    const head = this._head;
    if (head < queue.length) {
      const value = queue[head];
      queue[head] = undefined;
      const next = head + 1;
      if (next === queue.length) {
        clear(queue);
        this._head = 0;
      } else if (next >= COMPACT_AFTER && next * 2 >= queue.length) {
        queue.splice(0, next);
        this._head = 0;
      } else {
        this._head = next;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.done) return Promise.resolve(DONE_RESULT);
    return new Promise((resolve) => {
      if (this._waiter === null) this._waiter = resolve;
      else if (this._waiters === null) this._waiters = [resolve];
      else this._waiters.push(resolve);
    });
  }
}

Object.defineProperty(EventStream.prototype, MARKER, {
  value: true,
  enumerable: false,
  writable: false,
  configurable: false,
});

/** One reader's view of a stream. The stream holds the queue; readers only pull from it. */
class EventStreamIterator {
  constructor(stream) {
    this._stream = stream;
    this._finished = false;
  }

  next() {
    if (this._finished) return Promise.resolve(DONE_RESULT);
    return this._stream._next();
  }

  /** Called by `break`/`return` in `for await`: ends this reader only, never the stream. */
  return(value) {
    this._finished = true;
    return Promise.resolve({ value, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

/** Empties a fully read queue. Mostly one event was queued: `pop` is cheap where setting the
 *  length goes through the runtime (~20× the cost in V8). */
function clear(queue) {
  if (queue.length === 1) queue.pop();
  else queue.length = 0;
}

function isAssistantTerminal(event) {
  return event !== null && typeof event === "object" && (event.type === "done" || event.type === "error");
}

function extractAssistantResult(event) {
  return event.type === "done" ? event.message : event.error;
}

/**
 * The event stream of one assistant response: complete on `done`/`error`, whose `message`/`error`
 * is the result. The final message (of `done`, `error` or `end(message)`) gets `durationMs`, the
 * rounded monotonic milliseconds since the stream was created, unless it already has one, the stream
 * is already done, or its `timestamp` predates the stream (a response that started elsewhere).
 */
export class AssistantMessageEventStream extends EventStream {
  constructor() {
    super(isAssistantTerminal, extractAssistantResult);
    this._createdAt = Date.now();
    this._createdAtMonotonic = monotonicNow();
  }

  push(event) {
    if (!this.done && event !== null && typeof event === "object") {
      const type = event.type;
      if (type === "done") this._stampDuration(event.message);
      else if (type === "error") this._stampDuration(event.error);
    }
    super.push(event);
  }

  end(result) {
    if (result !== undefined) this._stampDuration(result);
    super.end(result);
  }

  _stampDuration(message) {
    if (this.done || message === null || typeof message !== "object") return;
    if (message.durationMs !== undefined || message.timestamp < this._createdAt) return;
    message.durationMs = Math.max(0, Math.round(monotonicNow() - this._createdAtMonotonic));
  }
}

/** Factory for {@link AssistantMessageEventStream}, as in pi-ai. */
export function createAssistantMessageEventStream() {
  return new AssistantMessageEventStream();
}
