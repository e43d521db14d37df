// The usage record (S-2.1.2) on the JS side, defined once: its fields, its zero, and the sum `totalUsage()` gives
// (issue 32): the twin of `core::budget` (`read_usage`, `USAGE_FIELDS`, `COST_FIELDS`), reading in its order; a figure
// that is not a finite number counts 0. Plain JS, no import: every entry may use it (the ui entry too).

export const USAGE_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"];
export const COST_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "total"];
/** The roles whose `usage` a run's totals sum: model replies, and compaction entries for their summary requests
 *  (issue 45, L-3.13.10; `core::compaction::ROLE`). */
export const USAGE_ROLES = ["assistant", "compactionSummary"];

/** Zero usage: no tokens, no cost. */
export function zeroUsage() {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

/** A copy of a usage record, its fields in their order, each absent one 0 (zero usage for none). */
export function copyUsage(usage) {
  const out = {};
  for (const f of USAGE_FIELDS) out[f] = usage?.[f] ?? 0;
  out.cost = {};
  for (const f of COST_FIELDS) out.cost[f] = usage?.cost?.[f] ?? 0;
  return out;
}

const finite = (v) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const isRecord = (v) => (typeof v === "object" && v !== null) || typeof v === "function";

/** A running sum of usages: `add(usage)` (anything else than a usage object adds nothing), `value` a fresh record. */
export function usageSum() {
  const counts = [0, 0, 0, 0, 0];
  const costs = [0, 0, 0, 0, 0];
  return {
    add(usage) {
      if (!isRecord(usage)) return;
      for (let i = 0; i < 5; i++) counts[i] += finite(usage[USAGE_FIELDS[i]]);
      const cost = usage.cost;
      if (isRecord(cost)) for (let i = 0; i < 5; i++) costs[i] += finite(cost[COST_FIELDS[i]]);
    },
    get value() {
      return {
        input: counts[0], output: counts[1], cacheRead: counts[2], cacheWrite: counts[3], totalTokens: counts[4],
        cost: { input: costs[0], output: costs[1], cacheRead: costs[2], cacheWrite: costs[3], total: costs[4] },
      };
    },
  };
}
