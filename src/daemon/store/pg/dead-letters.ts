/** Dead letters on the PostgreSQL store (SPEC §16), as on SQLite (`sqlite-dead-letters.ts`). */
import type pg from 'pg';
import type { DeadLetterCount, DeadLetterFilter } from '../dead-letter-types.js';
import { clampListLimit } from '../limits.js';
import type { RunRecord } from '../types.js';
import { fromPgRow, PG_RUN_COLUMNS } from './write.js';

type Db = Pick<pg.PoolClient, 'query'>;

const FAILED = `('app_rejected', 'retries_exhausted', 'crashed', 'internal_error')`;

const DEAD = `r.phase = 'ended' AND r.outcome IN ${FAILED}
  AND NOT EXISTS (SELECT 1 FROM run_keys k WHERE k.run_key = r.run_key)
  AND NOT EXISTS (SELECT 1 FROM runs n WHERE n.run_key = r.run_key AND n.seq > r.seq
                  AND (n.phase <> 'ended' OR n.outcome IN ${FAILED}))
  AND NOT EXISTS (SELECT 1 FROM dismissals d WHERE d.run_id = r.id)`;

const COLUMNS = PG_RUN_COLUMNS.split(',')
  .map((c) => `r.${c.trim()}`)
  .join(', ');

export async function deadLettersPg(db: Db, filter: DeadLetterFilter): Promise<RunRecord[]> {
  const conds: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, v: unknown): void => {
    params.push(v);
    conds.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.app !== undefined) add('r.app = ?', filter.app);
  if (filter.job !== undefined) add('r.job = ?', filter.job);
  if (filter.outcomes !== undefined) add('r.outcome = ANY(?::text[])', filter.outcomes);
  if (filter.from !== undefined) add('r.scheduled_time >= ?', filter.from);
  if (filter.to !== undefined) add('r.scheduled_time < ?', filter.to);
  if (filter.beforeSeq !== undefined) add('r.seq < ?', filter.beforeSeq);
  params.push(clampListLimit(filter.limit));
  const { rows } = await db.query<Parameters<typeof fromPgRow>[0]>(
    `SELECT ${COLUMNS} FROM runs r WHERE ${DEAD}${conds.map((c) => ` AND ${c}`).join('')}
     ORDER BY r.seq DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromPgRow);
}

export async function deadLetterCountsPg(db: Db): Promise<DeadLetterCount[]> {
  const { rows } = await db.query<DeadLetterCount>(
    `SELECT r.app, r.job, COUNT(*) AS count FROM runs r WHERE ${DEAD}
     GROUP BY r.app, r.job ORDER BY r.app, r.job`,
  );
  return rows;
}

/** In the caller's transaction: the ids that are dead letters now are dismissed. */
export async function dismissPg(
  db: Db,
  ids: readonly string[],
  note: string,
  by: string,
  at: number,
): Promise<string[]> {
  const { rows } = await db.query<{ run_id: string }>(
    `INSERT INTO dismissals (run_id, note, dismissed_by, dismissed_at)
     SELECT r.id, $2, $3, $4 FROM runs r WHERE r.id = ANY($1::text[]) AND ${DEAD}
     ON CONFLICT DO NOTHING RETURNING run_id`,
    [[...new Set(ids)], note, by, at],
  );
  return rows.map((r) => r.run_id);
}
