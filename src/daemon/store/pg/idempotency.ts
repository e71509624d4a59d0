/** Idempotency keys on the PostgreSQL store (`idempotency-types.ts`). */
import type pg from 'pg';
import type { AdmissionName, IdempotencyOp, IdempotentRun } from '../idempotency-types.js';
import type { LedgerResult } from '../types.js';

/** Applies an {@link IdempotencyOp} inside the write's transaction. */
export async function applyIdempotencyOp(
  client: pg.PoolClient,
  op: IdempotencyOp,
): Promise<LedgerResult> {
  await client.query('DELETE FROM idempotency_keys WHERE created_at < $1', [op.at - op.ttlMs]);
  await client.query(
    `INSERT INTO idempotency_keys (app, job, key, run_id, admission, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (app, job, key) DO NOTHING`,
    [op.app, op.job, op.key, op.runId, op.admission, op.at],
  );
  return { kind: 'ok' };
}

export async function idempotentRunPg(
  db: pg.Pool,
  app: string,
  job: string,
  key: string,
  since: number,
): Promise<IdempotentRun | null> {
  const { rows } = await db.query<{ run_id: string; admission: AdmissionName; created_at: number }>(
    `SELECT run_id, admission, created_at FROM idempotency_keys
     WHERE app = $1 AND job = $2 AND key = $3 AND created_at >= $4`,
    [app, job, key, since],
  );
  const r = rows[0];
  return r ? { runId: r.run_id, admission: r.admission, at: r.created_at } : null;
}
