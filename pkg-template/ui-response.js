// agent-loop-wasm/ui: UI message chunks as a response — SSE framing, a `Response`, a Node `ServerResponse`.
import { codedError } from "./errors.js";
import { UI_MESSAGE_STREAM_HEADERS, checkOptions, describe, isObject } from "./ui-common.js";

/** Chunks → SSE text: `data: <json>\n\n` per chunk, `data: [DONE]\n\n` at the end (the AI SDK's class of this name). */
export class JsonToSseTransformStream extends TransformStream {
  constructor() {
    super({
      transform(chunk, controller) {
        controller.enqueue(`data: ${JSON.stringify(chunk)}\n\n`);
      },
      flush(controller) {
        controller.enqueue("data: [DONE]\n\n");
      },
    });
  }
}

export function responseHeaders(fn, headers) {
  const merged = new Headers(UI_MESSAGE_STREAM_HEADERS);
  if (headers !== undefined) {
    if (!isObject(headers)) throw codedError("INVALID_ARGUMENT", `${fn}: options.headers must be a Headers object, an array of pairs or a record, got ${describe(headers)}`);
    new Headers(headers).forEach((value, key) => merged.set(key, value));
  }
  return merged;
}

function checkChunkStream(fn, stream) {
  if (!isObject(stream) || typeof stream.pipeThrough !== "function") {
    throw codedError("INVALID_ARGUMENT", `${fn}: stream must be a ReadableStream of UI message chunks, got ${describe(stream)}`);
  }
}

export const RESPONSE_OPTIONS = { status: "number", statusText: "string" };

/** A `Response` streaming the chunks as SSE with the protocol's headers (the AI SDK's function of this name). */
export function createUIMessageStreamResponse(init) {
  const fn = "createUIMessageStreamResponse";
  if (!isObject(init)) throw codedError("INVALID_ARGUMENT", `${fn}: expected { stream, status?, statusText?, headers? }, got ${describe(init)}`);
  checkChunkStream(fn, init.stream);
  checkOptions(fn, { status: init.status, statusText: init.statusText }, RESPONSE_OPTIONS);
  const body = init.stream.pipeThrough(new JsonToSseTransformStream()).pipeThrough(new TextEncoderStream());
  return new Response(body, { status: init.status ?? 200, statusText: init.statusText, headers: responseHeaders(fn, init.headers) });
}

/**
 * Writes the chunks as SSE to a Node `ServerResponse` (the AI SDK's function of this name); resolves when the stream
 * ended or the client went away (then the stream is cancelled: the agent's run goes on).
 */
export async function pipeUIMessageStreamToResponse(init) {
  const fn = "pipeUIMessageStreamToResponse";
  if (!isObject(init)) throw codedError("INVALID_ARGUMENT", `${fn}: expected { response, stream, status?, statusText?, headers? }, got ${describe(init)}`);
  const { response, stream } = init;
  if (!isObject(response) || typeof response.writeHead !== "function" || typeof response.write !== "function" || typeof response.end !== "function") {
    throw codedError("INVALID_ARGUMENT", `${fn}: response must be a Node http.ServerResponse, got ${describe(response)}`);
  }
  checkChunkStream(fn, stream);
  checkOptions(fn, { status: init.status, statusText: init.statusText }, RESPONSE_OPTIONS);
  const headers = {};
  responseHeaders(fn, init.headers).forEach((value, key) => (headers[key] = value));
  if (init.statusText === undefined) response.writeHead(init.status ?? 200, headers);
  else response.writeHead(init.status ?? 200, init.statusText, headers);
  const reader = stream.pipeThrough(new JsonToSseTransformStream()).getReader();
  let gone = false;
  const onClose = () => {
    gone = true;
    reader.cancel().catch(() => {});
  };
  response.once?.("close", onClose);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || gone) break;
      if (response.write(value) === false && typeof response.once === "function") {
        await new Promise((resolve) => {
          const settle = () => {
            response.off?.("drain", settle);
            response.off?.("close", settle);
            resolve();
          };
          response.once("drain", settle);
          response.once("close", settle);
        });
      }
    }
  } finally {
    response.off?.("close", onClose);
    if (!gone) response.end();
  }
}
