// Everything the server keeps, in one SQLite file (node:sqlite): each agent's checkpoints (one row each, written before
// its run goes on), a snapshot that older rows are folded into, the decisions people made on approvals, and the
// ledger of effects the tools made (one row per tool call, `times` counting its executions: exactly once is 1).
// Every statement is synchronous and atomic; several go together in transaction().
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS checkpoints (agent_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (agent_id, seq));
  CREATE TABLE IF NOT EXISTS snapshots (agent_id TEXT PRIMARY KEY, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS decisions (agent_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, approved INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (agent_id, tool_call_id));
  CREATE TABLE IF NOT EXISTS ledger (agent_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
    times INTEGER NOT NULL, PRIMARY KEY (agent_id, tool_call_id));
`;

export class Store {
  constructor(file) {
    mkdirSync(dirname(file), { recursive: true });
    this.db = new DatabaseSync(file);
    // WAL: readers (another process, a backup) never block the writes; FULL: a commit is on disk when it returns.
    this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;");
    this.db.exec(SCHEMA);
    const sql = (text) => this.db.prepare(text);
    this.q = {
      agentIds: sql("SELECT agent_id FROM checkpoints UNION SELECT agent_id FROM snapshots ORDER BY agent_id"),
      snapshot: sql("SELECT body FROM snapshots WHERE agent_id = ?"),
      checkpoints: sql("SELECT body FROM checkpoints WHERE agent_id = ? ORDER BY seq"),
      // By seq, with replace: a checkpoint whose write failed is retried whole under the same seq.
      saveCheckpoint: sql("INSERT OR REPLACE INTO checkpoints (agent_id, seq, body) VALUES (?, ?, ?)"),
      countCheckpoints: sql("SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(body)), 0) AS bytes FROM checkpoints WHERE agent_id = ?"),
      saveSnapshot: sql("INSERT OR REPLACE INTO snapshots (agent_id, body) VALUES (?, ?)"),
      dropCheckpoints: sql("DELETE FROM checkpoints WHERE agent_id = ? AND seq <= ?"),
      decision: sql("SELECT approved FROM decisions WHERE agent_id = ? AND tool_call_id = ?"),
      saveDecision: sql("INSERT INTO decisions (agent_id, tool_call_id, approved, body) VALUES (?, ?, ?, ?)"),
      record: sql(
        "INSERT INTO ledger (agent_id, tool_call_id, tool, args, times) VALUES (?, ?, ?, ?, 1) " +
          "ON CONFLICT (agent_id, tool_call_id) DO UPDATE SET times = times + 1",
      ),
      ledger: sql("SELECT tool_call_id AS toolCallId, tool, args, times FROM ledger WHERE agent_id = ? ORDER BY rowid"),
    };
  }

  /** The ids of every stored agent. */
  agentIds() {
    return this.q.agentIds.all().map((r) => r.agent_id);
  }

  /** What Agent.restore takes: the snapshot (if any), then the checkpoints after it, as JSON texts. */
  rows(agentId) {
    const snapshot = this.q.snapshot.get(agentId)?.body;
    const rows = this.q.checkpoints.all(agentId).map((r) => r.body);
    return snapshot ? [snapshot, ...rows] : rows;
  }

  saveCheckpoint(agentId, checkpoint) {
    this.q.saveCheckpoint.run(agentId, checkpoint.seq, JSON.stringify(checkpoint));
  }

  /** `{ n, bytes }` of an agent's checkpoint rows. */
  checkpointRows(agentId) {
    const { n, bytes } = this.q.countCheckpoints.get(agentId);
    return { n, bytes };
  }

  /** Folds the rows a snapshot covers into it, in one transaction. */
  compact(agentId, snapshot) {
    this.transaction(() => {
      this.q.saveSnapshot.run(agentId, JSON.stringify(snapshot));
      this.q.dropCheckpoints.run(agentId, snapshot.checkpointSeq);
    });
  }

  /** `true` (approved), `false` (denied) or `undefined` (not decided here). */
  decision(agentId, toolCallId) {
    const row = this.q.decision.get(agentId, toolCallId);
    return row === undefined ? undefined : row.approved === 1;
  }

  saveDecision(agentId, toolCallId, body) {
    this.q.saveDecision.run(agentId, toolCallId, body.approved ? 1 : 0, JSON.stringify(body));
  }

  record(agentId, toolCallId, tool, args) {
    this.q.record.run(agentId, toolCallId, tool, JSON.stringify(args));
  }

  ledger(agentId) {
    return this.q.ledger.all(agentId).map((r) => ({ toolCallId: r.toolCallId, tool: r.tool, args: JSON.parse(r.args), times: r.times }));
  }

  /** Runs `fn` in one transaction (committed when it returns, rolled back when it throws). */
  transaction(fn) {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      const result = fn();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  close() {
    this.db.close();
  }
}
