// `agent-loop-wasm/ui` (issue 31): an Agent's events as the AI SDK's UI message stream (the protocol `useChat`, the
// `Chat` classes and `DefaultChatTransport` read: SSE of JSON chunks, header `x-vercel-ai-ui-message-stream: v1`), and
// the request side back (the `UIMessage[]` a `useChat` client posts → agent messages; its approval responses →
// decisions for `agent.approve` / `agent.deny`), a transcript as the `UIMessage[]` a reloaded page starts from
// (issue 40), and a route in one call with approvals a page cannot forge (issue 42). Plain JS importing only its own
// parts (ui-*.js) and the error classes (errors.js), all import-free otherwise: it never loads the wasm or the main
// entry, and needs only what every runtime has (ReadableStream, TransformStream, TextEncoderStream, Response).
// Spec: docs/SPEC.md §12 (U-12.1 to U-12.5).
//
//   ui-common.js     what both directions share (headers, option checks, part shapes)
//   ui-stream.js     events → a stream of chunks: toUIMessageStream (U-12.1)
//   ui-translate.js  one event → its chunks: the translator (its frame, streamed message, tool parts)
//   ui-response.js   chunks → SSE, a Response, a Node ServerResponse
//   ui-resume.js     the reconnect: resumeUIMessageStream (U-12.3)
//   ui-request.js    posted UIMessage[] → agent messages, approval responses → decisions (U-12.2)
//   ui-history.js    a transcript → UIMessage[] (U-12.4)
//   ui-sign.js       approval tokens: SHA-256, HMAC (U-12.5)
//   ui-route.js      createAgentUIStream: a prompt or the posted approvals, streamed (U-12.5)

export { UI_MESSAGE_STREAM_HEADERS } from "./ui-common.js";
export { toUIMessageStream, toUIMessageStreamResponse } from "./ui-stream.js";
export { JsonToSseTransformStream, createUIMessageStreamResponse, pipeUIMessageStreamToResponse } from "./ui-response.js";
export { resumeUIMessageStream, resumeUIMessageStreamResponse } from "./ui-resume.js";
export { convertToAgentMessages, toolApprovalDecisions } from "./ui-request.js";
export { toUIMessages } from "./ui-history.js";
export { createAgentUIStream, createAgentUIStreamResponse } from "./ui-route.js";
