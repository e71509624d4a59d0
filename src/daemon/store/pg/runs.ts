/**
 * The run reads and run-wide maintenance of the PostgreSQL store (`../postgres.ts`): a run by
 * id, the list filters, queued and running runs, run keys, last successes, checkpoints, paused
 * jobs and the outcome views, each one statement on the pool; and, inside the caller's
 * (fenced) transaction, ending crashed runs, pausing a job and pruning old runs.
 */
import type pg from 'pg';
import { clampListLimit } from '../limits.js';
import type { PauseNote } from '../freeze-types.js';
import type {
  Checkpoint,
  JobActivity,
  JobOutcomes,
  JobRef,
  OutcomeGroup,
  RunFilter,
  RunOutcome,
  RunProcess,
  RunRecord,
} from '../types.js';
import { pauseWithPg } from './freezes.js';
import { fromPgRow, PG_RUN_COLUMNS, WRITER_EPOCH } from './write.js';

const FILTERS: readonly (readonly [keyof RunFilter, string, string])[] = [
  ['app', 'app', 'text'],
  ['job', 'job', 'text'],
  ['outcome', 'outcome', 'text'],
  ['outcomes', 'outcome = ANY', 'text[]'],
  ['phase', 'phase', 'text'],
  ['beforeSeq', 'seq <', 'bigint'],
];

type Row = Parameters<typeof fromPgRow>[0];

export async function getRunPg(pool: pg.Pool, id: string): Promise<RunRecord | null> {
  const { rows } = await pool.query<Row>(`SELECT ${PG_RUN_COLUMNS} FROM runs WHERE id = $1`, [id]);
  return rows[0] ? fromPgRow(rows[0]) : null;
}

/** The runs of `ids` that exist, in one statement (a standby's live view, SPEC §10, §13). */
export async function runsByIdsPg(pool: pg.Pool, ids: readonly string[]): Promise<RunRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query<Row>(
    `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE id = ANY($1::text[]) ORDER BY seq`,
    [ids],
  );
  return rows.map(fromPgRow);
}

export async function activeCountsPg(pool: pg.Pool): Promise<JobActivity[]> {
  const { rows } = await pool.query<JobActivity>(
    `SELECT app, job, COUNT(*) FILTER (WHERE phase = 'running')::int AS running,
       COUNT(*) FILTER (WHERE phase = 'queued')::int AS queued
     FROM runs WHERE phase IN ('queued', 'running') GROUP BY app, job ORDER BY app, job`,
  );
  return rows;
}

export async function listRunsPg(pool: pg.Pool, filter: RunFilter): Promise<RunRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [field, column, type] of FILTERS) {
    const v = filter[field];
    if (v === undefined) continue;
    params.push(v);
    where.push(
      column.endsWith('<')
        ? `${column} $${params.length}::${type}`
        : column.endsWith('ANY')
          ? `${column}($${params.length}::${type})`
          : `${column} = $${params.length}::${type}`,
    );
  }
  params.push(clampListLimit(filter.limit));
  const { rows } = await pool.query<Row>(
    `SELECT ${PG_RUN_COLUMNS} FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY seq DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromPgRow);
}

export async function queuedRunsPg(
  pool: pg.Pool,
  app?: string,
  job?: string,
): Promise<RunRecord[]> {
  const { rows } = await pool.query<Row>(
    `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE phase = 'queued'
     AND ($1::text IS NULL OR app = $1) AND ($2::text IS NULL OR job = $2) ORDER BY seq`,
    [app ?? null, job ?? null],
  );
  return rows.map(fromPgRow);
}

export async function runningRunsPg(pool: pg.Pool): Promise<RunRecord[]> {
  const { rows } = await pool.query<Row>(
    `SELECT ${PG_RUN_COLUMNS} FROM runs WHERE phase IN ('planned', 'running')
     AND "trigger" <> 'host' ORDER BY seq`,
  );
  return rows.map(fromPgRow);
}

export async function runningProcessesPg(pool: pg.Pool): Promise<RunProcess[]> {
  const { rows } = await pool.query<RunProcess>(
    `SELECT id AS "runId", app, job, pid, pid_start AS "startTime" FROM runs
     WHERE phase IN ('planned', 'running') AND pid IS NOT NULL AND "trigger" <> 'host'
     ORDER BY seq`,
  );
  return rows;
}

export async function keyHolderPg(
  pool: pg.Pool,
  runKey: string,
): Promise<{ runId: string; state: 'running' | 'succeeded' } | null> {
  const { rows } = await pool.query<{ runId: string; state: 'running' | 'succeeded' }>(
    `SELECT run_id AS "runId", state FROM run_keys WHERE run_key = $1`,
    [runKey],
  );
  return rows[0] ?? null;
}

export async function lastSuccessPg(
  pool: pg.Pool,
  app: string,
  job: string,
): Promise<number | null> {
  const { rows } = await pool.query<{ at: number | null }>(
    `SELECT MAX(ended_at) AS at FROM runs WHERE app = $1 AND job = $2 AND outcome = 'success'`,
    [app, job],
  );
  return rows[0]?.at ?? null;
}

export async function lastSuccessesPg(pool: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ app: string; job: string; at: number }>(
    `SELECT app, job, MAX(ended_at) AS at FROM runs WHERE outcome = 'success' GROUP BY app, job`,
  );
  return new Map(rows.map((r) => [`${r.app}/${r.job}`, r.at]));
}

/** In the caller's transaction. */
export async function endCrashedPg(
  client: pg.PoolClient,
  now: number,
  error: string,
): Promise<number> {
  const r = await client.query(
    `UPDATE runs SET phase = 'ended', outcome = 'crashed', ended_at = $1, error = $2,
       leader_epoch = ${WRITER_EPOCH} WHERE phase IN ('planned', 'running')
       AND "trigger" <> 'host'`,
    [now, error],
  );
  await client.query(`DELETE FROM run_keys WHERE state = 'running'`);
  return r.rowCount ?? 0;
}

export async function checkpointsPg(pool: pg.Pool): Promise<Checkpoint[]> {
  const { rows } = await pool.query<Checkpoint>(
    `SELECT app, job, schedule_index AS "scheduleIndex", at FROM checkpoints ORDER BY app, job`,
  );
  return rows;
}

export async function pausedJobsPg(pool: pg.Pool): Promise<Set<string>> {
  const { rows } = await pool.query<{ app: string; job: string }>(
    'SELECT app, job FROM paused_jobs ORDER BY app, job',
  );
  return new Set(rows.map((r) => `${r.app}/${r.job}`));
}

/** In the caller's transaction. */
export async function setPausedPg(
  client: pg.PoolClient,
  app: string,
  job: string,
  paused: boolean,
  note?: PauseNote,
): Promise<void> {
  if (paused && note) return pauseWithPg(client, app, job, note);
  await client.query(
    paused
      ? 'INSERT INTO paused_jobs (app, job) VALUES ($1, $2) ON CONFLICT DO NOTHING'
      : 'DELETE FROM paused_jobs WHERE app = $1 AND job = $2',
    [app, job],
  );
}

/** In the caller's transaction. */
export async function pruneRunsPg(client: pg.PoolClient, endedBefore: number): Promise<number> {
  const r = await client.query(`DELETE FROM runs WHERE phase = 'ended' AND ended_at < $1`, [
    endedBefore,
  ]);
  await client.query(`DELETE FROM run_keys WHERE state = 'succeeded' AND updated_at < $1`, [
    endedBefore,
  ]);
  await client.query(`DELETE FROM fires WHERE scheduled_time < $1`, [endedBefore]);
  await client.query(`DELETE FROM run_outputs WHERE created_at < $1`, [endedBefore]);
  return r.rowCount ?? 0;
}

export async function outcomeCountsPg(
  pool: pg.Pool,
  app: string,
  job: string,
  since: number,
): Promise<Partial<Record<RunOutcome, number>>> {
  const { rows } = await pool.query<{ outcome: RunOutcome; n: number }>(
    `SELECT outcome, COUNT(*) AS n FROM runs
     WHERE app = $1 AND job = $2 AND scheduled_time >= $3 AND outcome IS NOT NULL
     GROUP BY outcome`,
    [app, job, since],
  );
  const out: Partial<Record<RunOutcome, number>> = {};
  for (const r of rows) out[r.outcome] = r.n;
  return out;
}

/** One statement: each job's newest ended runs through its `(app, job, seq)` index. */
export async function recentOutcomesPg(
  pool: pg.Pool,
  jobs: readonly JobRef[],
  perJob: number,
): Promise<JobOutcomes[]> {
  if (jobs.length === 0 || perJob < 1) return [];
  const { rows } = await pool.query<JobOutcomes>(
    `SELECT j.app, j.job, r.outcomes
     FROM unnest($1::text[], $2::text[]) AS j(app, job)
     CROSS JOIN LATERAL (
       SELECT array_agg(outcome ORDER BY seq DESC) AS outcomes FROM (
         SELECT seq, outcome FROM runs WHERE app = j.app AND job = j.job AND phase = 'ended'
         ORDER BY seq DESC LIMIT $3) x) r
     WHERE r.outcomes IS NOT NULL`,
    [jobs.map((j) => j.app), jobs.map((j) => j.job), Math.trunc(perJob)],
  );
  return rows;
}

/** One statement: each job's `(app, job, scheduled_time)` index range from `since`. */
export async function outcomeSummaryPg(
  pool: pg.Pool,
  jobs: readonly JobRef[],
  since: number,
): Promise<OutcomeGroup[]> {
  if (jobs.length === 0) return [];
  const { rows } = await pool.query<OutcomeGroup>(
    `SELECT r.app, r.job, (r.scheduled_time / 3600000) * 3600000 AS hour,
       (r."trigger" IN ('schedule', 'catchup') OR (r."trigger" = 'host'
         AND r.outcome NOT IN ('skipped', 'duplicate'))) AS scheduled,
       r.outcome, COUNT(*)::int AS count
     FROM unnest($1::text[], $2::text[]) AS j(app, job)
     JOIN runs r ON r.app = j.app AND r.job = j.job AND r.scheduled_time >= $3
     WHERE r.outcome IS NOT NULL AND r.phase = 'ended'
     GROUP BY r.app, r.job, hour, scheduled, r.outcome`,
    [jobs.map((j) => j.app), jobs.map((j) => j.job), since],
  );
  return rows;
}
