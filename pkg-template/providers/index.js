// Built-in providers (§6): each wire format builds its request and maps its parsed stream events onto an
// `Assembler` (assemble.js). A wire format is `{ buildRequest(input) → { url, headers: [name, value][], body }
// (throws Error(errorMessage)), streamMapper(input) → mapper }`; a mapper is `{ onEvent(event, data, asm),
// onText(event, data, asm) → boolean, onEnd(asm) }`.
import { acceptsEmptyObject } from "./assemble.js";
import { anthropicMessages } from "./anthropic.js";
import { googleGenerativeAi } from "./google.js";
import { get } from "./json.js";
import { openaiCompletions } from "./openai-completions.js";
import { openaiResponses } from "./openai-responses.js";
import { invalidJsonMessage } from "./request.js";
import { systemHead } from "./transcript.js";

const FORMATS = {
  __proto__: null,
  "openai-completions": openaiCompletions,
  "openai-responses": openaiResponses,
  "anthropic-messages": anthropicMessages,
  "google-generative-ai": googleGenerativeAi,
};

/**
 * The wire format for `model.api`, or undefined (P-6.1.1).
 * @param {string} api @returns {object | undefined}
 */
export const wireFormat = (api) => FORMATS[api];

/**
 * A fresh per-response mapper: the wire format's, and first the rules every format shares (issue 33: the tools whose
 * schema accepts `{}`, so that a call of one with `null` arguments gets `{}`), handed to the assembler before the
 * first call.
 * @param {object} format @param {object} input @returns {object}
 */
export const mapperFor = (format, input) => {
  const inner = format.streamMapper(input);
  let acceptEmpty = systemHead(input.messages)[1]
    .filter((tool) => acceptsEmptyObject(get(tool, "parameters")))
    .map((tool) => get(tool, "name"))
    .filter((name) => typeof name === "string");
  const prepare = (asm) => {
    if (acceptEmpty) asm.acceptNullArguments(acceptEmpty);
    acceptEmpty = undefined;
  };
  return {
    onEvent(event, data, asm) {
      prepare(asm);
      inner.onEvent(event, data, asm);
    },
    onText(event, data, asm) {
      prepare(asm);
      return inner.onText?.(event, data, asm) ?? false;
    },
    onEnd(asm) {
      prepare(asm);
      inner.onEnd(asm);
    },
  };
};

/**
 * An SSE event whose data is not JSON: the mapper's when it decides what the event means (`onText` true); otherwise
 * `[DONE]` is nothing and anything else fails the stream with P-6.3.2's `Invalid JSON in provider stream`.
 * @param {object} mapper @param {string | undefined} event @param {string} data @param {object} asm
 */
export const onUnparsed = (mapper, event, data, asm) => {
  if (!mapper.onText?.(event, data, asm) && !asm.finished() && data.trim() !== "[DONE]") {
    asm.fail(invalidJsonMessage(data));
  }
};
