/** Skipped instants on the SQLite store (SPEC §16, `skip-types.ts`). */
import type Database from 'better-sqlite3';
import type { SkipDoneOp, SkipRecord } from './skip-types.js';
import type { LedgerResult } from './types.js';

interface SkipRow {
  app: string;
  job: string;
  at: number;
  skipped_by: string;
  since: number;
}

/** See the module comment. */
export class SqliteSkips {
  private readonly list: Database.Statement<unknown[], unknown>;
  private readonly put: Database.Statement<unknown[], unknown>;
  private readonly remove: Database.Statement<unknown[], unknown>;

  constructor(db: Database.Database) {
    this.list = db.prepare('SELECT * FROM skips ORDER BY app, job, at');
    this.put = db.prepare(
      `INSERT INTO skips (app, job, at, skipped_by, since) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (app, job, at) DO NOTHING`,
    );
    this.remove = db.prepare('DELETE FROM skips WHERE app = ? AND job = ? AND at = ?');
  }

  all(): SkipRecord[] {
    return (this.list.all() as SkipRow[]).map((r) => ({
      app: r.app,
      job: r.job,
      at: r.at,
      by: r.skipped_by,
      since: r.since,
    }));
  }

  add(s: SkipRecord): void {
    this.put.run(s.app, s.job, s.at, s.by, s.since);
  }

  /** Applies a {@link SkipDoneOp} (inside the caller's transaction). */
  apply(op: SkipDoneOp): LedgerResult {
    this.remove.run(op.app, op.job, op.at);
    return { kind: 'ok' };
  }
}
