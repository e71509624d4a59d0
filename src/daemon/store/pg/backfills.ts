/**
 * Backfills on the PostgreSQL store (SPEC §16, `backfill-types.ts`), as on SQLite: the ops run
 * in the store's (fenced) write transaction, so only the leader creates, links and ends them;
 * the reads count a backfill's progress from the runs its plan items link to.
 */
import type pg from 'pg';
import type {
  BackfillCounts,
  BackfillFilter,
  BackfillItem,
  BackfillOp,
  BackfillRecord,
} from '../backfill-types.js';
import { clampListLimit } from '../limits.js';
import type { LedgerResult } from '../types.js';

type Db = Pick<pg.PoolClient, 'query'>;

const FAILED = `('app_rejected', 'retries_exhausted', 'internal_error')`;

const COUNT = (cond: string): string =>
  `(SELECT COUNT(*) FROM backfill_items i JOIN runs r ON r.id = i.run_id
    WHERE i.backfill_id = b.id AND ${cond})`;

const COLUMNS = `b.id, b.app, b.job, b.from_time AS "from", b.to_time AS "to",
  b.only_missing AS "onlyMissing", b.parallel, b.stop_after_failures AS "stopAfterFailures",
  b.state, b.total, b.created_by AS "createdBy", b.created_at AS "createdAt",
  b.ended_at AS "endedAt", b.reason,
  (SELECT COUNT(*) FROM backfill_items i LEFT JOIN runs r ON r.id = i.run_id
   WHERE i.backfill_id = b.id AND (i.run_id IS NULL OR r.id IS NULL OR r.outcome = 'crashed')) AS pending,
  ${COUNT(`r.phase <> 'ended'`)} AS active,
  ${COUNT(`r.outcome = 'success'`)} AS succeeded,
  ${COUNT(`r.outcome IN ${FAILED}`)} AS failed,
  ${COUNT(`r.phase = 'ended' AND r.outcome NOT IN ('success', 'crashed', 'app_rejected', 'retries_exhausted', 'internal_error')`)} AS other`;

type Row = Omit<BackfillRecord, 'counts'> & BackfillCounts;

const fromRow = (r: Row): BackfillRecord => ({
  id: r.id,
  app: r.app,
  job: r.job,
  from: r.from,
  to: r.to,
  onlyMissing: r.onlyMissing,
  parallel: r.parallel,
  stopAfterFailures: r.stopAfterFailures,
  state: r.state,
  total: r.total,
  createdBy: r.createdBy,
  createdAt: r.createdAt,
  endedAt: r.endedAt,
  reason: r.reason,
  counts: {
    pending: r.pending,
    active: r.active,
    succeeded: r.succeeded,
    failed: r.failed,
    other: r.other,
  },
});

/** Applies one backfill op in the caller's transaction. */
export async function applyBackfillOp(client: Db, op: BackfillOp): Promise<LedgerResult> {
  switch (op.kind) {
    case 'backfill-create': {
      const b = op.backfill;
      await client.query(
        `INSERT INTO backfills (id, app, job, from_time, to_time, only_missing, parallel,
           stop_after_failures, state, total, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'running', $9, $10, $11)`,
        [
          b.id,
          b.app,
          b.job,
          b.from,
          b.to,
          b.onlyMissing,
          b.parallel,
          b.stopAfterFailures,
          op.items.length,
          b.createdBy,
          b.createdAt,
        ],
      );
      if (op.items.length > 0)
        await client.query(
          `INSERT INTO backfill_items (backfill_id, position, scheduled_time, schedule_index, run_key)
           SELECT $1, * FROM unnest($2::int[], $3::bigint[], $4::int[], $5::text[])`,
          [
            b.id,
            op.items.map((i) => i.position),
            op.items.map((i) => i.scheduledTime),
            op.items.map((i) => i.scheduleIndex),
            op.items.map((i) => i.runKey),
          ],
        );
      return { kind: 'ok' };
    }
    case 'backfill-link': {
      const r = await client.query(
        `UPDATE backfill_items SET run_id = $1 WHERE backfill_id = $2 AND position = $3
         AND EXISTS (SELECT 1 FROM backfills WHERE id = $2 AND state = 'running')`,
        [op.runId, op.backfillId, op.position],
      );
      return r.rowCount === 1 ? { kind: 'ok' } : { kind: 'gone' };
    }
    case 'backfill-end': {
      const r = await client.query(
        `UPDATE backfills SET state = $1, reason = $2, ended_at = $3
         WHERE id = $4 AND state = 'running'`,
        [op.state, op.reason, op.endedAt, op.id],
      );
      return r.rowCount === 1 ? { kind: 'ok' } : { kind: 'gone' };
    }
  }
}

export async function getBackfillPg(db: Db, id: string): Promise<BackfillRecord | null> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM backfills b WHERE b.id = $1`, [id]);
  return rows[0] ? fromRow(rows[0]) : null;
}

export async function listBackfillsPg(db: Db, filter: BackfillFilter): Promise<BackfillRecord[]> {
  const conds: string[] = [];
  const params: unknown[] = [];
  for (const f of ['app', 'job', 'state'] as const)
    if (filter[f] !== undefined) {
      params.push(filter[f]);
      conds.push(`b.${f} = $${params.length}`);
    }
  params.push(clampListLimit(filter.limit));
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM backfills b ${conds.length ? `WHERE ${conds.join(' AND ')}` : ''}
     ORDER BY b.created_at DESC, b.id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromRow);
}

export async function backfillItemsPg(db: Db, id: string): Promise<BackfillItem[]> {
  const { rows } = await db.query<BackfillItem>(
    `SELECT i.position, i.scheduled_time AS "scheduledTime", i.schedule_index AS "scheduleIndex",
       i.run_key AS "runKey", i.run_id AS "runId", r.phase, r.outcome
     FROM backfill_items i LEFT JOIN runs r ON r.id = i.run_id
     WHERE i.backfill_id = $1 ORDER BY i.position`,
    [id],
  );
  return rows;
}

export async function succeededKeysPg(db: Db, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await db.query<{ run_key: string }>(
    `SELECT run_key FROM run_keys WHERE state = 'succeeded' AND run_key = ANY($1::text[])`,
    [keys],
  );
  return new Set(rows.map((r) => r.run_key));
}

export async function ranInstantsPg(
  db: Db,
  app: string,
  job: string,
  from: number,
  to: number,
): Promise<Set<number>> {
  const { rows } = await db.query<{ t: number }>(
    `SELECT DISTINCT scheduled_time AS t FROM runs
     WHERE app = $1 AND job = $2 AND scheduled_time >= $3 AND scheduled_time < $4
     AND phase = 'ended' AND outcome IN ('success', 'crashed', 'app_rejected',
     'retries_exhausted', 'internal_error')`,
    [app, job, from, to],
  );
  return new Set(rows.map((r) => r.t));
}
