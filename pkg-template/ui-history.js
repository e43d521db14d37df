// agent-loop-wasm/ui: Transcript → UIMessage[]: the history a reloaded `useChat` page starts from (the inverse of convertToAgentMessages)
import { codedError } from "./errors.js";
import { approvalRequestChunk, checkOptions, defaultToolOutput, describe, isObject, resultText, signatureMeta, userParts } from "./ui-common.js";
import { approvalToken, secretKey } from "./ui-sign.js";

/** The default id of a UIMessage `toUIMessages` makes: `user-<index>`, `assistant-<index>` (see its `messageId`). */
const defaultMessageId = ({ role, index }) => `${role}-${index}`;

/** The reason of issue 30's denial result `Tool call "<id>" was denied[: <reason>]`: { reason? }, or undefined. */
function denialOf(result, toolCallId) {
  const text = resultText(result);
  const head = `Tool call "${toolCallId}" was denied`;
  if (text === head) return {};
  if (text.startsWith(`${head}: `)) return { reason: text.slice(head.length + 2) };
  return undefined;
}

/** `part.approval` as the client holds it after the request (and, once made, the decision). */
function approvalOf(toolCallId, request, decision, approvalId = toolCallId) {
  const approval = { id: approvalId };
  if (request) {
    const chunk = approvalRequestChunk(request);
    if (chunk.approvalDescriptor) approval.descriptor = chunk.approvalDescriptor;
    if (chunk.reason !== undefined) approval.requestReason = chunk.reason;
  }
  if (decision) {
    approval.approved = decision.approved;
    if (typeof decision.reason === "string") approval.reason = decision.reason;
  }
  return approval;
}

/** options.runs → Map(start → messageId), checked. */
function runStarts(fn, runs) {
  const starts = new Map();
  (runs ?? []).forEach((run, k) => {
    if (!isObject(run) || !Number.isInteger(run.start) || run.start < 0 || typeof run.messageId !== "string" || run.messageId === "") {
      throw codedError("INVALID_ARGUMENT", `${fn}: options.runs[${k}] must be { start, messageId } (start: an index of agentMessages, messageId: a non-empty string), got ${describe(run) === "object" ? JSON.stringify(run) : describe(run)}`);
    }
    starts.set(run.start, run.messageId);
  });
  return starts;
}

/** toolCallId → item of a list option (requests, decisions, completed tool calls), checked. */
function byToolCall(fn, list, path) {
  const map = new Map();
  if (list === undefined) return map;
  if (!Array.isArray(list)) throw codedError("INVALID_ARGUMENT", `${fn}: ${path} must be an array, got ${describe(list)}`);
  list.forEach((item, k) => {
    if (!isObject(item) || typeof item.toolCallId !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: ${path}[${k}] must be an object with a string toolCallId, got ${describe(item)}`);
    map.set(item.toolCallId, item);
  });
  return map;
}

const TO_UI_MESSAGES_OPTIONS = {
  messageId: "function",
  runs: "array",
  pendingApprovals: "array",
  approvals: "object",
  sendReasoning: "boolean",
  toolOutput: "function",
  dynamicTools: "boolean",
  approvalSecret: "checked",
};

/**
 * An agent transcript as the `UIMessage[]` a `useChat` client that watched its runs live ends with (for
 * `useChat({ messages })` when a page loads): per exchange a user message (text, images as data: URLs) and the answer
 * as one assistant message, its steps joined with `step-start` parts, parts in their final states as
 * `toUIMessageStream` leaves them. Exchanges are told apart by `options.runs` (exact), else by the rule that a user
 * message right after tool results is steering and any other begins an exchange. Ids: `options.runs` for answers,
 * else `options.messageId`, else `user-<index>` / `assistant-<index>`. Spec: U-12.4.
 */
export function toUIMessages(agentMessages, options) {
  const fn = "toUIMessages";
  if (!Array.isArray(agentMessages)) throw codedError("INVALID_ARGUMENT", `${fn}: agentMessages must be an array of agent messages (agent.state.messages), got ${describe(agentMessages)}`);
  const opts = checkOptions(fn, options, TO_UI_MESSAGES_OPTIONS);
  const runs = runStarts(fn, opts.runs);
  const requests = byToolCall(fn, opts.approvals?.requests, "options.approvals.requests");
  for (const [id, request] of byToolCall(fn, opts.pendingApprovals, "options.pendingApprovals")) requests.set(id, request);
  const decisions = byToolCall(fn, opts.approvals?.decisions, "options.approvals.decisions");
  const completed = byToolCall(fn, opts.approvals?.completedTools, "options.approvals.completedTools");
  const sendReasoning = opts.sendReasoning !== false;
  const toolOutput = opts.toolOutput ?? defaultToolOutput;
  const dynamic = opts.dynamicTools === true;
  const approvalKey = opts.approvalSecret === undefined ? undefined : secretKey(fn, opts.approvalSecret);
  // U-12.5: with a secret, the approval id the stream gave (signed over the call as the part holds it).
  const approval = (part, toolName, decision) => {
    const id = part.toolCallId;
    const request = requests.get(id);
    const approvalId = approvalKey ? approvalToken(approvalKey, id, toolName, part.input, request?.expiresAt) : id;
    return approvalOf(id, request, decision, approvalId);
  };
  const idOf = (role, index, message) => {
    const id = (opts.messageId ?? defaultMessageId)({ role, index, message });
    if (typeof id !== "string" || id === "") throw codedError("INVALID_ARGUMENT", `${fn}: options.messageId must return a non-empty string, got ${describe(id)} for the ${role} message at ${index}`);
    return id;
  };

  const result = [];
  /** The answer being built: { message, step, steering } (step and steering count per run, as a response does). */
  let answer;
  /** The tool parts without a result yet: toolCallId → { part, toolName }. */
  const open = new Map();
  /** The recorded run the messages belong to: { messageId, begun } (begun: it has a model response or tool result). */
  let run;
  /** Where the exchange under way began (the index after the previous answer's last message). */
  let start = 0;
  let afterAnswer = 0;
  let lastRole;

  const settle = (part, toolName, ended) => {
    const id = part.toolCallId;
    const denial = ended.isError ? denialOf(ended.result, id) : undefined;
    const decision = decisions.get(id) ?? (denial ? { approved: false, ...denial } : undefined);
    if (denial) part.state = "output-denied";
    else if (ended.isError) {
      part.state = "output-error";
      part.errorText = resultText(ended.result);
    } else {
      part.state = "output-available";
      part.output = toolOutput(ended.result, { toolCallId: id, toolName });
    }
    if (decision) part.approval = approval(part, toolName, decision);
    open.delete(id);
  };

  const openAnswer = () => {
    const id = run ? run.messageId : idOf("assistant", start, agentMessages[start]);
    answer = { message: { id, role: "assistant", parts: [] }, step: 0, steering: 0 };
    result.push(answer.message);
  };

  agentMessages.forEach((m, i) => {
    if (runs.has(i)) {
      const messageId = runs.get(i);
      run = { messageId, begun: false };
      if (answer?.message.id === messageId) {
        // A run that continues the answer (its decisions, as `originalMessages` continues the client's message).
        answer.step = 0;
        answer.steering = 0;
      } else {
        answer = undefined;
        start = i;
      }
    }
    if (!isObject(m)) throw codedError("INVALID_ARGUMENT", `${fn}: agentMessages[${i}] must be an agent message object, got ${describe(m)}`);
    if (m.role === "user") {
      const steering = answer !== undefined && (run ? run.begun : lastRole === "toolResult");
      lastRole = "user";
      if (steering) {
        answer.steering += 1;
        answer.message.parts.push({ type: "steering-message", id: `${answer.message.id}-steering-${answer.steering}`, parts: userParts(m.content) });
        afterAnswer = i + 1;
        return;
      }
      if (answer !== undefined) {
        answer = undefined;
        start = afterAnswer;
      }
      result.push({ id: idOf("user", i, m), role: "user", parts: userParts(m.content) });
      return;
    }
    if (m.role === "toolResult") {
      const pending = open.get(m.toolCallId);
      if (answer === undefined || pending === undefined) return; // a result whose call this history does not show
      if (run) run.begun = true;
      lastRole = "toolResult";
      settle(pending.part, pending.toolName, { result: m, isError: m.isError === true });
      afterAnswer = i + 1;
      return;
    }
    if (m.role !== "assistant") return; // system messages (tool declarations) and custom roles: not shown
    if (run) run.begun = true;
    lastRole = "assistant";
    if (answer === undefined) openAnswer();
    answer.step += 1;
    const parts = answer.message.parts;
    parts.push({ type: "step-start" });
    (Array.isArray(m.content) ? m.content : []).forEach((block, j) => {
      if (block?.type === "text") {
        parts.push({ type: "text", text: typeof block.text === "string" ? block.text : "", ...signatureMeta({ textSignature: block.textSignature }), state: "done" });
      } else if (block?.type === "thinking" && sendReasoning) {
        const meta = signatureMeta({ thinkingSignature: block.thinkingSignature, redacted: block.redacted === true ? true : undefined });
        parts.push({ type: "reasoning", id: `${answer.step}-${j}`, text: typeof block.thinking === "string" ? block.thinking : "", ...meta, state: "done" });
      } else if (block?.type === "toolCall" && typeof block.id === "string") {
        const part = {
          type: dynamic ? "dynamic-tool" : `tool-${block.name}`,
          ...(dynamic ? { toolName: block.name } : {}),
          toolCallId: block.id,
          state: "input-available",
          input: block.arguments ?? {},
        };
        const meta = signatureMeta({ thoughtSignature: block.thoughtSignature });
        if (meta.providerMetadata) part.callProviderMetadata = meta.providerMetadata;
        parts.push(part);
        open.set(block.id, { part, toolName: block.name });
      }
    });
    afterAnswer = i + 1;
  });

  // Calls with no result in the transcript: ended in a batch that waits for approvals, waiting, or decided.
  for (const [id, { part, toolName }] of open) {
    const ended = completed.get(id);
    if (ended) settle(part, toolName, { result: ended.result, isError: ended.isError === true });
    else if (requests.has(id) || decisions.has(id)) {
      const decision = decisions.get(id);
      part.state = decision ? "approval-responded" : "approval-requested";
      part.approval = approval(part, toolName, decision);
    }
  }
  return result;
}
