// A node:test reporter for the reference pass (AGENT_LOOP_IMPL=reference, scripts/test): per test file, how many of its
// tests ran against pi-agent-core 1.6.0 and how many were skipped, with each skip reason and its count. So the pass
// says which files are ours only and why, and a test of shared behaviour skipped by mistake shows in CI's log.
//
//   AGENT_LOOP_IMPL=reference node --test --test-reporter=./tests/js/reference-summary.mjs tests/js/
export default async function* referenceSummary(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    // Top-level tests only: a subtest belongs to its test's outcome.
    if (event.data.nesting !== 0 || event.data.details?.type === "suite") continue;
    const file = String(event.data.file ?? "?").replace(/^.*\/tests\/js\//, "");
    const row = files.get(file) ?? { ran: 0, skipped: 0, reasons: new Map() };
    if (event.data.skip === undefined) row.ran++;
    else {
      row.skipped++;
      const reason = String(event.data.skip);
      row.reasons.set(reason, (row.reasons.get(reason) ?? 0) + 1);
    }
    files.set(file, row);
  }
  const rows = [...files].sort(([a], [b]) => a.localeCompare(b));
  const ran = rows.reduce((n, [, r]) => n + r.ran, 0);
  const skipped = rows.reduce((n, [, r]) => n + r.skipped, 0);
  yield `\nreference pass: ${ran} tests ran against pi-agent-core 1.6.0, ${skipped} skipped (what the reference lacks or does otherwise)\n`;
  const width = Math.max(...rows.map(([f]) => f.length));
  for (const [file, r] of rows) {
    const why = [...r.reasons].map(([reason, n]) => `${n}× ${reason}`).join("; ");
    const kind = r.skipped === 0 ? "shared" : r.ran === 0 ? "ours only" : "mixed";
    yield `  ${file.padEnd(width)}  ${String(r.ran).padStart(4)} ran ${String(r.skipped).padStart(4)} skipped  ${kind}${why ? `: ${why}` : ""}\n`;
  }
}
