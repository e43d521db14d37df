// Declarations of the `agent-loop-wasm/testing` entry (issue 44): cassettes that record a run's model traffic and tool
// results once and replay them offline. Spec: docs/SPEC.md §14.

import type { AgentTool, StreamFnLike } from "./index.js";

/** The cassette document version this package writes and reads. */
export declare const CASSETTE_VERSION: 1;

/** How a cassette serves requests: from the recording (`"replay"`) or from the real service, recording it (`"record"`). */
export type CassetteMode = "replay" | "record";

export interface CassetteOptions {
  /** The recording to replay or extend: an earlier `toJSON()` value, or its JSON text. Required in replay mode. */
  cassette?: CassetteDocument | string;
  /** Default `"replay"`: never the network; a request the cassette does not hold is a {@link CassetteMismatchError}. */
  mode?: CassetteMode;
  /** In replay mode, send a request the cassette lacks to the real service and record it (default false). */
  recordIfMissing?: boolean;
  /**
   * `"order"` (default): the n-th request is served the n-th recording of its kind and must equal it (method, URL
   * and body; a tool's name and arguments; a stream request's model and transcript). `"content"`: served the first
   * unplayed recording equal to it.
   */
  match?: "order" | "content";
  /** The real fetch, when recording (default `globalThis.fetch` at call time). */
  fetch?: typeof fetch;
  /** Replay at the recorded pace: the delay before the response headers and between chunks (default false). */
  realtime?: boolean;
  /** More strings never to store (credentials found in headers and URLs are removed anyway). */
  redact?: string[];
}

/** One recorded network chunk: its UTF-8 text, or its bytes in base64 when they are not whole UTF-8. */
export type CassetteChunk = { delayMs: number; text: string } | { delayMs: number; base64: string };

/** A built-in provider's HTTP exchange, without credentials. */
export interface CassetteHttpInteraction {
  type: "http";
  request: { method: string; url: string; headers: Record<string, string>; body?: unknown; bodyText?: string };
  response?: {
    status: number;
    statusText: string;
    headers: Record<string, string>;
    delayMs: number;
    chunks: CassetteChunk[];
    /** How the body ended while recording. */
    end?: "done" | "cancelled" | { error: { name: string; message: string } };
  };
  /** When `fetch` itself failed. */
  error?: { name: string; message: string };
}

/** A tool call's outcome. */
export interface CassetteToolInteraction {
  type: "tool";
  name: string;
  toolCallId: string;
  args: unknown;
  updates?: unknown[];
  result?: unknown;
  error?: { name: string; message: string };
  /** Why the result or an update could not be stored (JSON cannot hold it); replaying it is a CassetteMismatchError. */
  unstorable?: string;
}

/** A custom stream function's request (without timestamps) and the events it produced (without `partial`). */
export interface CassetteStreamInteraction {
  type: "stream";
  request: { model: { api?: string; provider?: string; id?: string }; messages: unknown[] };
  events: Record<string, unknown>[];
  /** When the stream function threw instead of returning a stream. */
  error?: { name: string; message: string };  /** Why an event could not be stored (JSON cannot hold it); replaying it is a lone error event. */
  unstorable?: string;
}

export type CassetteInteraction = CassetteHttpInteraction | CassetteToolInteraction | CassetteStreamInteraction;

/** The JSON document a cassette is stored as. */
export interface CassetteDocument {
  format: "agent-loop-wasm/cassette";
  version: typeof CASSETTE_VERSION;
  interactions: CassetteInteraction[];
}

export interface Cassette {
  readonly mode: CassetteMode;
  /** Where `save()` and `stop()` write (set by {@link loadCassette}). */
  path: string | undefined;
  /** A `fetch` for the built-in providers: pass it as the Agent's or the loop's `fetch` option. */
  readonly fetch: typeof fetch;
  /** Copies of the tools whose `execute` is recorded, or replayed without running. */
  tools<T extends AgentTool<any, any>>(tools: T[]): T[];
  /** A custom stream function, recorded or replayed (for the built-in providers use {@link Cassette.fetch}). */
  streamFn(streamFn: StreamFnLike): StreamFnLike;
  /** The cassette document (a copy). */
  toJSON(): CassetteDocument;
  /** Writes the cassette (indented JSON) to `path`, default where it was loaded from (Node, Deno). */
  save(path?: string): Promise<void>;
  /**
   * Ends a test: saves what was recorded when the cassette has a path, then throws the run's first
   * {@link CassetteMismatchError}, or one when recorded interactions were never played (replay mode).
   */
  stop(): Promise<void>;
}

/** A request the recording cannot serve. Its message names the request and the first field that differs. */
export declare class CassetteMismatchError extends Error {
  readonly name: "CassetteMismatchError";
  readonly details: { index: number; path: string; recorded: unknown; actual: unknown };
  readonly retryable: false;
}

/** A cassette from a recording held in memory (any runtime). */
export declare function createCassette(options?: CassetteOptions): Cassette;

/** The cassette stored at `path` (Node, Deno); a missing file starts empty in record mode or with `recordIfMissing`. */
export declare function loadCassette(path: string, options?: Omit<CassetteOptions, "cassette">): Promise<Cassette>;

