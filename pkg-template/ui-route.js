// agent-loop-wasm/ui: The route in one call (U-12.5): a prompt, or the posted approval responses, streamed
import { codedError } from "./errors.js";
import { checkOptions, continuedMessage, describe, isObject, isToolPart } from "./ui-common.js";
import { approvalTokenValid, secretKey } from "./ui-sign.js";
import { RESPONSE_OPTIONS, createUIMessageStreamResponse, responseHeaders } from "./ui-response.js";
import { TO_STREAM_OPTIONS, toUIMessageStream } from "./ui-stream.js";
import { convertToAgentMessages, toolApprovalDecisions } from "./ui-request.js";

/**
 * The pause a stateless route carries to a fresh Agent: the posted history as agent messages up to the assistant
 * message whose calls wait, and `{ requests, completedTools, decisions }` for `agent.continue({ approvals })`. Every
 * approval part must carry the token the stream signed for that call as posted (its id, tool, input, deadline); every
 * other call of that message must hold its result. A response after the deadline is a denial (`approval timed out`).
 */
function postedPause(fn, uiMessages, key, convertOptions) {
  const refused = (why) => codedError("INVALID_APPROVAL", `${fn}: ${why}`);
  const messages = convertToAgentMessages(uiMessages, convertOptions);
  let i = messages.length - 1;
  const results = new Map();
  for (; i >= 0 && messages[i].role === "toolResult"; i--) results.set(messages[i].toolCallId, messages[i]);
  const assistant = messages[i];
  const calls = assistant?.role === "assistant" ? assistant.content.filter((b) => b.type === "toolCall") : [];
  const parts = new Map();
  for (const part of uiMessages[uiMessages.length - 1].parts) if (isToolPart(part)) parts.set(part.toolCallId, part);
  const approvals = { requests: [], completedTools: [], decisions: [] };
  const now = Date.now();
  for (const call of calls) {
    const part = parts.get(call.id);
    const result = results.get(call.id);
    if (part?.state === "approval-responded" || part?.state === "approval-requested") {
      const expiresAt = part.approval?.descriptor?.expiresAt;
      if (!approvalTokenValid(key, part.approval?.id, call.id, call.name, part.input, expiresAt)) {
        throw refused(`the approval of tool call "${call.id}" is not one this server signed (the call, its input or its deadline was changed, or the secret differs)`);
      }
      approvals.requests.push({ toolCallId: call.id, toolName: call.name, args: call.arguments, ...(typeof expiresAt === "number" ? { expiresAt } : {}) });
      if (part.state === "approval-responded") {
        const { approved, reason } = part.approval;
        if (typeof approved !== "boolean") throw refused(`the approval of tool call "${call.id}" has no approved (boolean)`);
        const late = approved && typeof expiresAt === "number" && expiresAt <= now;
        approvals.decisions.push(late ? { toolCallId: call.id, approved: false, reason: "approval timed out" }
          : { toolCallId: call.id, approved, ...(typeof reason === "string" ? { reason } : {}) });
      }
    } else if (result) {
      approvals.completedTools.push({ toolCallId: call.id, toolName: call.name, result: { content: result.content, details: result.details ?? {} }, isError: result.isError === true });
    } else {
      throw refused(`tool call "${call.id}" of the last message has neither a result nor an approval`);
    }
  }
  if (approvals.requests.length === 0) throw refused("the last of uiMessages has no tool call waiting for approval");
  return { messages: messages.slice(0, i + 1), approvals };
}

const AGENT_STREAM_OPTIONS = { ...TO_STREAM_OPTIONS, unsupported: "string" };

/**
 * A `useChat` route's whole answer as a UI message stream (the AI SDK's `createAgentUIStream`): `uiMessages` are the
 * posted messages. A user message last is prompted (a fresh agent first takes the history before it); an assistant
 * message last with approval responses is carried out — by `approve()`/`deny()` when the agent holds the pause (a
 * server that keeps its agents), else, for a fresh agent (a stateless route), by `continue({ approvals })` from the
 * posted history, every approval checked against `approvalSecret` (the stream signs its approval requests with it).
 */
export function createAgentUIStream(init) {
  return agentUIStream("createAgentUIStream", init).stream;
}

/** `createAgentUIStream` as a `Response` (the AI SDK's `createAgentUIStreamResponse`): `status`, `statusText`, `headers`. */
export function createAgentUIStreamResponse(init) {
  const fn = "createAgentUIStreamResponse";
  const { stream, response } = agentUIStream(fn, init);
  return createUIMessageStreamResponse({ stream, ...response });
}

function agentUIStream(fn, init) {
  if (!isObject(init) || Array.isArray(init)) throw codedError("INVALID_ARGUMENT", `${fn}: expected { agent, uiMessages, … }, got ${describe(init)}`);
  const { agent, uiMessages, status, statusText, headers, ...streamOptions } = init;
  if (!isObject(agent) || typeof agent.subscribe !== "function" || typeof agent.continue !== "function" || !isObject(agent.state)) {
    throw codedError("INVALID_ARGUMENT", `${fn}: agent must be an Agent of agent-loop-wasm, got ${describe(agent)}`);
  }
  if (!Array.isArray(uiMessages) || uiMessages.length === 0) {
    throw codedError("INVALID_ARGUMENT", `${fn}: uiMessages must be a non-empty array of UIMessage (useChat's messages), got ${describe(uiMessages)}`);
  }
  const opts = checkOptions(fn, streamOptions, AGENT_STREAM_OPTIONS);
  const { unsupported, ...toStream } = opts;
  const response = { status, statusText, headers: responseHeaders(fn, headers) };
  checkOptions(fn, { status, statusText }, RESPONSE_OPTIONS);
  const key = opts.approvalSecret === undefined ? undefined : secretKey(fn, opts.approvalSecret);
  const model = agent.state.model;
  const convertOptions = { ...(unsupported !== undefined ? { unsupported } : {}), ...(isObject(model) ? { model } : {}) };
  const last = uiMessages[uiMessages.length - 1];
  // A fresh agent holds no conversation (at most the system messages that declare its tools); it takes the history.
  const own = agent.state.messages;
  const fresh = own.every((m) => isObject(m) && m.role === "system");
  let run;
  if (isObject(last) && last.role === "user") {
    if (fresh && uiMessages.length > 1) agent.state.messages = [...own, ...convertToAgentMessages(uiMessages.slice(0, -1), convertOptions)];
    const prompts = convertToAgentMessages([last], convertOptions);
    if (prompts.length !== 1) throw codedError("INVALID_ARGUMENT", `${fn}: the last of uiMessages is a user message with nothing to send`);
    run = () => agent.prompt(prompts[0]);
  } else if (continuedMessage(uiMessages) && last.parts.some((p) => isObject(p) && p.state === "approval-responded")) {
    if (agent.state.pendingApprovals.length > 0) {
      const decisions = toolApprovalDecisions(uiMessages);
      run = async () => {
        for (const d of decisions) await (d.approved ? agent.approve(d.toolCallId) : agent.deny(d.toolCallId, d.reason === undefined ? undefined : { reason: d.reason }));
      };
    } else if (!fresh) {
      throw codedError("INVALID_APPROVAL", `${fn}: the agent has no tool call waiting for approval (the posted approvals were carried out already, or never asked)`);
    } else {
      if (key === undefined) {
        throw codedError("INVALID_ARGUMENT", `${fn}: approvals posted to a fresh agent need options.approvalSecret (a stateless route checks each approval against the secret its stream signed it with)`);
      }
      const { messages, approvals } = postedPause(fn, uiMessages, key, convertOptions);
      agent.state.messages = [...own, ...messages];
      run = () => agent.continue({ approvals });
    }
  } else {
    throw codedError("INVALID_ARGUMENT", `${fn}: the last of uiMessages must be the user's new message or the assistant message with the approval responses, got ${describe(last?.role)}`);
  }
  return { stream: toUIMessageStream(agent, { ...toStream, originalMessages: uiMessages, run }), response };
}
