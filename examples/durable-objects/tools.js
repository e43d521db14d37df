// The example's tools. `record_effect` does a side effect through an HTTP endpoint with the tool-call id as its
// idempotency key (safe to run again after a crash); `charge_card` is not idempotent, so it declares
// `resume: "fail"`: a call a crash interrupted is reported to the model instead of being run twice. A charge above
// `CHARGE_APPROVAL_ABOVE_CENTS` (default 1000, i.e. 10.00) waits for a person (`needsApproval`, issue 30); each charge
// that ran is a row of the object's ledger (`ledger.charged`), keyed by its tool-call id.
const object = (properties, required = Object.keys(properties)) => ({ type: "object", properties, required });

/** `ledger`: `{ charged(toolCallId, cents) }`, the Durable Object's record of the charges it made. */
export function exampleTools(env, ledger) {
  const approvalAbove = Number(env.CHARGE_APPROVAL_ABOVE_CENTS ?? 1000);
  const post = async (path, toolCallId, body, signal) => {
    const response = await fetch(`${env.EFFECTS_URL}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": toolCallId },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return response.text();
  };
  return [
    {
      name: "record_effect",
      label: "Record effect",
      description: "Records a named effect in the external system",
      parameters: object({ key: { type: "string" } }),
      async execute(toolCallId, { key }, signal) {
        const answer = await post("/effect", toolCallId, { key }, signal);
        return { content: [{ type: "text", text: answer }], details: { key } };
      },
    },
    {
      name: "charge_card",
      label: "Charge card",
      description: `Charges an amount in cents (not idempotent; above ${approvalAbove} cents a person approves it first)`,
      parameters: object({ cents: { type: "number" } }),
      resume: "fail",
      // Decided on the validated arguments; a person may approve an edited amount, validated again.
      needsApproval: ({ cents }) => cents > approvalAbove,
      async execute(toolCallId, { cents }, signal) {
        const answer = await post("/charge", toolCallId, { cents }, signal);
        ledger?.charged(toolCallId, cents);
        return { content: [{ type: "text", text: answer }], details: { cents } };
      },
    },
  ];
}
