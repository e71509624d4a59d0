/** Skipped instants on the PostgreSQL store (SPEC §16, `skip-types.ts`). */
import type pg from 'pg';
import type { SkipDoneOp, SkipRecord } from '../skip-types.js';
import type { LedgerResult } from '../types.js';

type Queryable = pg.Pool | pg.PoolClient;

export async function skipsPg(db: Queryable): Promise<SkipRecord[]> {
  const { rows } = await db.query<{
    app: string;
    job: string;
    at: string;
    skipped_by: string;
    since: string;
  }>('SELECT * FROM skips ORDER BY app, job, at');
  return rows.map((r) => ({
    app: r.app,
    job: r.job,
    at: Number(r.at),
    by: r.skipped_by,
    since: Number(r.since),
  }));
}

export async function addSkipPg(db: Queryable, s: SkipRecord): Promise<void> {
  await db.query(
    `INSERT INTO skips (app, job, at, skipped_by, since) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (app, job, at) DO NOTHING`,
    [s.app, s.job, s.at, s.by, s.since],
  );
}

/** Applies a {@link SkipDoneOp} inside the write's transaction. */
export async function applySkipDonePg(
  client: pg.PoolClient,
  op: SkipDoneOp,
): Promise<LedgerResult> {
  await client.query('DELETE FROM skips WHERE app = $1 AND job = $2 AND at = $3', [
    op.app,
    op.job,
    op.at,
  ]);
  return { kind: 'ok' };
}
