/** Freezes and pause notes on the SQLite store (SPEC §16, `freeze-types.ts`). */
import type Database from 'better-sqlite3';
import { scopeCol, scopeOf, type FreezeRecord, type PauseNote } from './freeze-types.js';

interface FreezeRow {
  app: string;
  job: string;
  reason: string;
  frozen_by: string;
  since: number;
  until: number | null;
}

const fromRow = (r: FreezeRow): FreezeRecord => ({
  app: scopeOf(r.app),
  job: scopeOf(r.job),
  reason: r.reason,
  by: r.frozen_by,
  since: r.since,
  until: r.until,
});

/** Widest scope first: every app, then an app, then a job. */
export const FREEZE_ORDER = `ORDER BY (app <> '') , (job <> ''), app, job`;

/** See the module comment. */
export class SqliteFreezes {
  private readonly list: Database.Statement<unknown[], unknown>;
  private readonly upsert: Database.Statement<unknown[], unknown>;
  private readonly remove: Database.Statement<unknown[], unknown>;
  private readonly notes: Database.Statement<unknown[], unknown>;
  private readonly pause: Database.Statement<unknown[], unknown>;

  constructor(db: Database.Database) {
    this.list = db.prepare(`SELECT * FROM freezes ${FREEZE_ORDER}`);
    this.upsert = db.prepare(
      `INSERT INTO freezes (app, job, reason, frozen_by, since, until) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (app, job) DO UPDATE SET reason = excluded.reason,
         frozen_by = excluded.frozen_by, since = excluded.since, until = excluded.until`,
    );
    this.remove = db.prepare(`DELETE FROM freezes WHERE app = ? AND job = ? RETURNING *`);
    this.notes = db.prepare(
      'SELECT app, job, reason, paused_by, paused_at FROM paused_jobs ORDER BY app, job',
    );
    this.pause = db.prepare(
      `INSERT INTO paused_jobs (app, job, reason, paused_by, paused_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (app, job) DO UPDATE SET reason = excluded.reason,
         paused_by = excluded.paused_by, paused_at = excluded.paused_at`,
    );
  }

  all(): FreezeRecord[] {
    return (this.list.all() as FreezeRow[]).map(fromRow);
  }

  set(f: FreezeRecord): void {
    this.upsert.run(scopeCol(f.app), scopeCol(f.job), f.reason, f.by, f.since, f.until);
  }

  delete(app: string | null, job: string | null): FreezeRecord | null {
    const row = this.remove.get(scopeCol(app), scopeCol(job)) as FreezeRow | undefined;
    return row ? fromRow(row) : null;
  }

  pauseNotes(): Map<string, PauseNote> {
    const rows = this.notes.all() as {
      app: string;
      job: string;
      reason: string | null;
      paused_by: string | null;
      paused_at: number | null;
    }[];
    return new Map(
      rows.map((r) => [
        `${r.app}/${r.job}`,
        { reason: r.reason, by: r.paused_by, since: r.paused_at },
      ]),
    );
  }

  /** Pauses a job with its note (a second pause replaces the note). */
  pauseWith(app: string, job: string, note: PauseNote): void {
    this.pause.run(app, job, note.reason, note.by, note.since);
  }
}
