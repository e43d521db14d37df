// The demo store's tools: `lookup_order` runs at once; `refund_order` moves money, so it waits for a person's
// approval (`needsApproval`, issue 30 of agent-loop-wasm) before it runs. The orders are made up; the refunds made are
// kept in `refunds` (in memory), so that a test can check that an approved refund ran once and a denied one never.

const ORDERS = {
  1042: { item: "Blue kettle", cents: 3900, status: "shipped on May 3" },
  2077: { item: "Espresso machine", cents: 24900, status: "delivered on May 9" },
};

const dollars = (cents) => `$${(cents / 100).toFixed(2)}`;

/** Every refund made in this process, in order: { orderId, cents }. */
export const refunds = [];

const ORDER_ID = { type: "object", properties: { orderId: { type: "string", description: "The order number, e.g. 1042" } }, required: ["orderId"] };

function order(orderId) {
  const found = ORDERS[orderId];
  if (!found) throw new Error(`There is no order ${orderId}.`);
  return found;
}

export const tools = [
  {
    name: "lookup_order",
    label: "Look up an order",
    description: "Looks up an order of the store: its item, price and shipping status.",
    parameters: ORDER_ID,
    async execute(_toolCallId, { orderId }) {
      const { item, cents, status } = order(orderId);
      return { content: [{ type: "text", text: `Order ${orderId}: ${item}, ${dollars(cents)}, ${status}.` }], details: { orderId, item, cents, status } };
    },
  },
  {
    name: "refund_order",
    label: "Refund an order",
    description: "Refunds an order in full to the card it was paid with. A person approves each refund first.",
    parameters: ORDER_ID,
    needsApproval: true,
    async execute(_toolCallId, { orderId }) {
      const { cents } = order(orderId);
      refunds.push({ orderId, cents });
      const count = refunds.filter((r) => r.orderId === orderId).length;
      return { content: [{ type: "text", text: `Refunded ${dollars(cents)} for order ${orderId} (refund ${count} of this order).` }], details: { orderId, cents } };
    },
  },
];
