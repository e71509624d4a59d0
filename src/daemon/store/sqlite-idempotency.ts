/** Idempotency keys on the SQLite store (`idempotency-types.ts`). */
import type Database from 'better-sqlite3';
import type { AdmissionName, IdempotencyOp, IdempotentRun } from './idempotency-types.js';
import type { LedgerResult } from './types.js';

/** See the module comment. */
export class SqliteIdempotency {
  private readonly prune: Database.Statement<unknown[], unknown>;
  private readonly put: Database.Statement<unknown[], unknown>;
  private readonly get: Database.Statement<unknown[], unknown>;

  constructor(db: Database.Database) {
    this.prune = db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?');
    this.put = db.prepare(
      `INSERT INTO idempotency_keys (app, job, key, run_id, admission, created_at)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (app, job, key) DO NOTHING`,
    );
    this.get = db.prepare(
      `SELECT run_id, admission, created_at FROM idempotency_keys
       WHERE app = ? AND job = ? AND key = ? AND created_at >= ?`,
    );
  }

  /** Applies an {@link IdempotencyOp} (inside the caller's transaction). */
  apply(op: IdempotencyOp): LedgerResult {
    this.prune.run(op.at - op.ttlMs);
    this.put.run(op.app, op.job, op.key, op.runId, op.admission, op.at);
    return { kind: 'ok' };
  }

  find(app: string, job: string, key: string, since: number): IdempotentRun | null {
    const r = this.get.get(app, job, key, since) as
      { run_id: string; admission: AdmissionName; created_at: number } | undefined;
    return r ? { runId: r.run_id, admission: r.admission, at: r.created_at } : null;
  }
}
