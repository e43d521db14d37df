// Issue 31: `agent.events({ after, signal, untilIdle })`, a numbered event stream a reconnecting client catches up
// on. The journal starts with the first `events()` call (an agent nobody reads this way pays nothing) and listens
// like any subscriber. It numbers every event and keeps the events of the current run and of the last ended run,
// compacted: a streaming message's deltas collapse into one `message_update` carrying its partial (dropped at its
// `message_end`, which carries the whole message), a tool's `tool_execution_update`s into the latest per call. So
// what it holds is bounded by the transcript, not by the number of deltas.
//
// Numbers: `seq` = max(previous + 1, Date.now() × 1000, the process's last number + 1). Strictly increasing in a
// process, across all its agents (so a restore in the same process numbers above the agent it came from); across a
// restart (another process, a Durable Object woken from its checkpoints) the clock carries them above every number the
// previous process gave, unless it emitted more than 1,000 events per millisecond above its clock. A reader whose `after` is
// not in the kept window (older, from another process, or ahead) gets an `agent_sync` item first: the agent's state
// to replace its own, then live events. `fromRunStart` replays the current run from its `agent_start` instead (what a
// chat client's resume rebuilds its answer from), or gives the sync when the journal did not see that start.
// Spec: docs/SPEC.md §5.10.
import { codedError } from "./errors.js";

const journals = new WeakMap();

/** The last number any journal of this process gave (see Journal.next). */
let processLast = 0;

// A reader whose iterator its caller dropped without `return()` is closed when the iterator is collected: the agent
// does not keep it (its buffer is bounded by its highWaterMark meanwhile).
const dropped = new FinalizationRegistry((reader) => reader.close());

/** Items a reader may hold before it is told it fell behind (then it catches up from the journal). */
const DEFAULT_HIGH_WATER_MARK = 1000;

class Journal {
  constructor(st, subscribe) {
    this.st = st;
    this.last = 0;
    // The kept events: [{ seq, event }], from the agent_start of the last ended run (or the journal's start).
    this.entries = [];
    // The seq before the first kept entry: a reader with `after` >= base is replayed from the entries.
    this.base = this.next();
    this.runStart = 0; // index in entries of the current run's agent_start
    this.readers = new Set();
    subscribe((event) => {
      try {
        this.record(event);
      } catch {
        // never a listener failure of the agent's run
      }
    });
  }

  add(reader) {
    this.readers.add(reader);
  }

  remove(reader) {
    this.readers.delete(reader);
  }

  each(f) {
    for (const reader of this.readers) f(reader);
  }

  next() {
    // Above this journal's last number, the clock, and every number any journal of this process gave: an agent
    // restored in the same process (even within the millisecond of the old one's last event) numbers above it.
    this.last = Math.max(this.last + 1, Date.now() * 1000, processLast + 1);
    processLast = this.last;
    return this.last;
  }

  record(event) {
    const seq = this.next();
    const item = { seq, event };
    this.keep(item);
    this.each((reader) => reader.push(item));
  }

  keep(item) {
    const { event } = item;
    const entries = this.entries;
    switch (event?.type) {
      case "agent_start": {
        // Keep the last ended run and this one.
        const drop = this.runStart;
        if (drop > 0) {
          this.base = entries[drop - 1].seq;
          entries.splice(0, drop);
        }
        this.runStart = entries.length;
        break;
      }
      case "message_update": {
        // The streaming message's latest partial stands for its deltas (one message streams at a time).
        const prev = entries[entries.length - 1];
        if (prev?.event?.type === "message_update") entries.pop();
        break;
      }
      case "message_end": {
        const prev = entries[entries.length - 1];
        if (prev?.event?.type === "message_update") entries.pop();
        break;
      }
      case "tool_execution_update": {
        const at = entries.findLastIndex(
          (e, i) => i >= this.runStart && e.event.type === "tool_execution_update" && e.event.toolCallId === event.toolCallId,
        );
        if (at !== -1) entries.splice(at, 1);
        break;
      }
    }
    entries.push(item);
  }

  /** The items a reader that has seen everything up to `after` needs, or null when `after` is not kept. */
  replay(after) {
    if (after < this.base || after > this.last) return null;
    let i = this.entries.length;
    while (i > 0 && this.entries[i - 1].seq > after) i--;
    return this.entries.slice(i).map((e) => ({ ...e, replay: true }));
  }

  /**
   * The items of the current run from its `agent_start` (the last ended run's when none is under way), compacted as
   * a replay after that run's start would be; null when the journal did not see that start (it began mid-run, or the
   * transcript was replaced since).
   */
  replayRun() {
    const start = this.entries[this.runStart];
    if (start?.event?.type !== "agent_start") return null;
    return this.entries.slice(this.runStart).map((e) => ({ ...e, replay: true }));
  }

  /** The agent's state as one item: what a reader that cannot be replayed starts from. */
  sync() {
    const st = this.st;
    const event = {
      type: "agent_sync",
      messages: st.messages.slice(),
      isStreaming: st.isStreaming,
      streamingMessage: st.streamingMessage,
      pendingToolCalls: [...st.pendingToolCalls],
      errorMessage: st.errorMessage,
    };
    if (Array.isArray(st.pendingApprovals)) event.pendingApprovals = st.pendingApprovals.slice();
    return { seq: this.last, event, replay: true };
  }

  /** The transcript changed without events (`state.messages = …`, `reset()`): every reader starts again. */
  changed() {
    this.entries = [];
    this.runStart = 0;
    this.base = this.next();
    this.each((reader) => reader.resync());
  }
}

class Reader {
  constructor(journal, after, highWaterMark, untilIdle, fromRunStart) {
    this.journal = journal;
    this.highWaterMark = highWaterMark;
    this.untilIdle = untilIdle;
    this.buffer = [];
    this.behind = false;
    this.needsSync = false;
    this.done = false;
    this.wake = null;
    this.delivered = after ?? journal.last;
    if (fromRunStart) {
      const items = journal.replayRun();
      if (items === null) this.buffer.push(journal.sync());
      else this.buffer.push(...items);
    } else if (after !== undefined) {
      const items = journal.replay(after);
      if (items === null) this.buffer.push(journal.sync());
      else this.buffer.push(...items);
    }
    // A reader that only wants the run catching up on an idle agent: the replay is all there is. (Without `after`,
    // it waits for the next run's agent_end.)
    if (untilIdle && (after !== undefined || fromRunStart) && !journal.st.isStreaming) this.finishAfterBuffer = true;
  }

  push(item) {
    if (this.done) return;
    if (this.behind || this.needsSync) return; // caught up from the journal when it reads again
    if (this.buffer.length >= this.highWaterMark) {
      this.behind = true;
      this.buffer = [];
    } else {
      this.buffer.push(item);
    }
    this.notify();
  }

  resync() {
    this.needsSync = true;
    this.buffer = [];
    this.notify();
  }

  notify() {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  refill() {
    const journal = this.journal;
    if (this.needsSync) {
      this.needsSync = false;
      this.behind = false;
      this.buffer = [journal.sync()];
    } else if (this.behind) {
      this.behind = false;
      const items = journal.replay(this.delivered);
      this.buffer = items === null ? [journal.sync()] : items;
      if (this.buffer.length > 0) this.buffer[0] = { ...this.buffer[0], behind: true };
      else this.buffer = [{ ...journal.sync(), behind: true }];
    }
  }

  async next() {
    for (;;) {
      if (this.done) return { done: true, value: undefined };
      this.refill();
      if (this.buffer.length > 0) {
        const item = this.buffer.shift();
        this.delivered = Math.max(this.delivered, item.seq);
        if (this.untilIdle && item.event?.type === "agent_end") this.finishAfterBuffer = true;
        return { done: false, value: item };
      }
      if (this.finishAfterBuffer) return this.close();
      await new Promise((resolve) => (this.wake = resolve));
    }
  }

  close() {
    if (!this.done) {
      this.done = true;
      this.buffer = [];
      this.journal.remove(this);
      this.notify();
    }
    return { done: true, value: undefined };
  }
}

/** `agent.events(options)`: see the file's header and the README's "Reconnecting clients and chat UIs". */
export function events(st, subscribe, options) {
  if (options !== undefined && (options === null || typeof options !== "object")) {
    throw codedError("INVALID_ARGUMENT", "Agent.events: options must be an object");
  }
  const { after, signal, untilIdle = false, fromRunStart = false, highWaterMark = DEFAULT_HIGH_WATER_MARK } = options ?? {};
  if (after !== undefined && (typeof after !== "number" || !Number.isFinite(after))) {
    throw codedError("INVALID_ARGUMENT", "Agent.events: options.after must be a finite number (the seq of the last item seen)");
  }
  if (typeof fromRunStart !== "boolean") {
    throw codedError("INVALID_ARGUMENT", "Agent.events: options.fromRunStart must be a boolean");
  }
  if (fromRunStart && after !== undefined) {
    throw codedError("INVALID_ARGUMENT", "Agent.events: options.after and options.fromRunStart exclude each other");
  }
  if (signal !== undefined && (signal === null || typeof signal.addEventListener !== "function")) {
    throw codedError("INVALID_ARGUMENT", "Agent.events: options.signal must be an AbortSignal");
  }
  if (!Number.isInteger(highWaterMark) || highWaterMark < 1) {
    throw codedError("INVALID_ARGUMENT", "Agent.events: options.highWaterMark must be a positive integer");
  }
  let journal = journals.get(st);
  if (journal === undefined) {
    journal = new Journal(st, subscribe);
    journals.set(st, journal);
  }
  const reader = new Reader(journal, after, highWaterMark, untilIdle === true, fromRunStart);
  if (signal?.aborted) reader.close();
  else {
    journal.add(reader);
    signal?.addEventListener("abort", () => reader.close(), { once: true });
  }
  const iterator = {
    next: () => reader.next(),
    return: async () => reader.close(),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  dropped.register(iterator, reader);
  return iterator;
}

/** The transcript changed without events: readers start again from an `agent_sync`. */
export function transcriptReplaced(st) {
  journals.get(st)?.changed();
}
