/** Freezes and pause notes on the PostgreSQL store (SPEC §16, `freeze-types.ts`). */
import type pg from 'pg';
import { scopeCol, scopeOf, type FreezeRecord, type PauseNote } from '../freeze-types.js';

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

type Queryable = pg.Pool | pg.PoolClient;

export async function freezesPg(db: Queryable): Promise<FreezeRecord[]> {
  const { rows } = await db.query<FreezeRow>(
    `SELECT * FROM freezes ORDER BY (app <> ''), (job <> ''), app, job`,
  );
  return rows.map(fromRow);
}

export async function setFreezePg(db: Queryable, f: FreezeRecord): Promise<void> {
  await db.query(
    `INSERT INTO freezes (app, job, reason, frozen_by, since, until) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (app, job) DO UPDATE SET reason = excluded.reason,
       frozen_by = excluded.frozen_by, since = excluded.since, until = excluded.until`,
    [scopeCol(f.app), scopeCol(f.job), f.reason, f.by, f.since, f.until],
  );
}

export async function removeFreezePg(
  db: Queryable,
  app: string | null,
  job: string | null,
): Promise<FreezeRecord | null> {
  const { rows } = await db.query<FreezeRow>(
    'DELETE FROM freezes WHERE app = $1 AND job = $2 RETURNING *',
    [scopeCol(app), scopeCol(job)],
  );
  return rows[0] ? fromRow(rows[0]) : null;
}

export async function pauseNotesPg(db: Queryable): Promise<Map<string, PauseNote>> {
  const { rows } = await db.query<{
    app: string;
    job: string;
    reason: string | null;
    paused_by: string | null;
    paused_at: number | null;
  }>('SELECT app, job, reason, paused_by, paused_at FROM paused_jobs ORDER BY app, job');
  return new Map(
    rows.map((r) => [
      `${r.app}/${r.job}`,
      { reason: r.reason, by: r.paused_by, since: r.paused_at },
    ]),
  );
}

/** Pauses a job with its note (a second pause replaces the note). */
export async function pauseWithPg(
  db: Queryable,
  app: string,
  job: string,
  note: PauseNote,
): Promise<void> {
  await db.query(
    `INSERT INTO paused_jobs (app, job, reason, paused_by, paused_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (app, job) DO UPDATE SET reason = excluded.reason,
       paused_by = excluded.paused_by, paused_at = excluded.paused_at`,
    [app, job, note.reason, note.by, note.since],
  );
}
