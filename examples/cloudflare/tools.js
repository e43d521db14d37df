// The example's tools. `record_effect` does a side effect with the tool-call id as its idempotency key (safe to run
// again after a crash); `charge_card` is not idempotent, so it declares `resume: "fail"`: a call a crash interrupted
// is reported to the model instead of being run twice. A charge above `CHARGE_APPROVAL_ABOVE_CENTS` (default 1000,
// i.e. 10.00) waits for a person (`needsApproval`, issue 30).
//
// Where the effects go: with EFFECTS_URL set, each is a POST to that endpoint (`/effect`, `/charge`, JSON body,
// `idempotency-key: <tool-call id>`; its answer text is the tool's result). Unset, the example has no external system:
// each effect is only a row of the object's SQLite (`ledger.effect`). Either way each charge that ran is a row of the
// object's ledger (`ledger.charged`), keyed by its tool-call id.
const object = (properties, required = Object.keys(properties)) => ({ type: "object", properties, required });

/** `ledger`: `{ charged(toolCallId, cents), effect(toolCallId, key) }`, the Durable Object's records. */
export function exampleTools(env, ledger) {
  const approvalAbove = Number(env.CHARGE_APPROVAL_ABOVE_CENTS || 1000);
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
        let answer;
        if (env.EFFECTS_URL) answer = await post("/effect", toolCallId, { key }, signal);
        else {
          ledger.effect(toolCallId, key);
          answer = `recorded "${key}"`;
        }
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
        const answer = env.EFFECTS_URL ? await post("/charge", toolCallId, { cents }, signal) : `charged ${cents} cents`;
        ledger.charged(toolCallId, cents);
        return { content: [{ type: "text", text: answer }], details: { cents } };
      },
    },
  ];
}
