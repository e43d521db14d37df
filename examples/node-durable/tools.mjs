// The agents' tools. Each does its effect through the external system at EFFECTS_URL when it is set (a payment and
// messaging API stand-in; unset, nothing leaves the process) and then writes a row of the agent's ledger in SQLite.
//
// send_message is idempotent: the external call carries "<agent id>/<tool-call id>" as its idempotency key, so running
// it again after a crash (resume() runs a call that was in flight again) sends nothing twice. charge_card is not, so it
// declares resume: "fail": a charge a crash interrupted is reported to the model as interrupted instead of being made
// again. A charge above APPROVAL_ABOVE_CENTS (default 1000, i.e. 10.00 EUR) waits for a person (needsApproval).

/**
 * @param {{ agentId: string, effectsUrl?: string, approvalAboveCents: number,
 *           ledger: { record(toolCallId: string, tool: string, args: object): void } }} options
 */
export function billingTools({ agentId, effectsUrl, approvalAboveCents, ledger }) {
  const call = async (path, toolCallId, body, signal) => {
    if (!effectsUrl) return;
    const response = await fetch(`${effectsUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": `${agentId}/${toolCallId}` },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
  };
  return [
    {
      name: "send_message",
      label: "Send message",
      description: "Sends a short text message to a customer",
      parameters: {
        type: "object",
        properties: { to: { type: "string", description: "The customer's name" }, text: { type: "string" } },
        required: ["to", "text"],
      },
      async execute(toolCallId, args, signal) {
        await call("/messages", toolCallId, args, signal);
        ledger.record(toolCallId, "send_message", args);
        return { content: [{ type: "text", text: `Sent to ${args.to}: ${JSON.stringify(args.text)}` }], details: {} };
      },
    },
    {
      name: "charge_card",
      label: "Charge card",
      description: `Charges a customer's card, in euro cents (above ${approvalAboveCents} cents a person approves it first)`,
      parameters: {
        type: "object",
        properties: { customer: { type: "string", description: "The customer's name" }, cents: { type: "integer", minimum: 1 } },
        required: ["customer", "cents"],
      },
      resume: "fail",
      // Decided on the validated arguments; a person may approve an edited amount, validated again.
      needsApproval: ({ cents }) => cents > approvalAboveCents,
      async execute(toolCallId, args, signal) {
        await call("/charges", toolCallId, args, signal);
        ledger.record(toolCallId, "charge_card", args);
        return { content: [{ type: "text", text: `Charged ${args.customer} ${(args.cents / 100).toFixed(2)} EUR` }], details: {} };
      },
    },
  ];
}
