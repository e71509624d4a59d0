/**
 * The run reads and run-wide maintenance of the SQLite store (`sqlite.ts`), on its prepared
 * statements: runs by id, the list filters (a statement per set of filters, cached), queued
 * and running runs, run keys, last successes, paused jobs and the outcome views; and ending
 * crashed runs and pruning old ones, each in one `BEGIN IMMEDIATE` transaction.
 */
import type Database from 'better-sqlite3';
import { clampListLimit } from './limits.js';
import {
  FILTER_CONDITIONS,
  fromRow,
  jobsJson,
  RUN_COLUMNS,
  type Prepared,
  type Row,
  type Stmt,
} from './sqlite-sql.js';
import type {
  JobOutcomes,
  JobRef,
  OutcomeGroup,
  RunFilter,
  RunOutcome,
  RunRecord,
} from './types.js';

export function getRun(s: Prepared, id: string): RunRecord | null {
  const row = s.getRun.get(id) as Row | undefined;
  return row ? fromRow(row) : null;
}

/** The caller returns early for no ids. */
export function runsByIds(s: Prepared, ids: readonly string[]): RunRecord[] {
  return (s.runsByIds.all(JSON.stringify(ids)) as Row[]).map(fromRow);
}

/**
 * Newest first (by `seq`); `limit` defaults to 100 and is capped at 1000. The statement of a
 * set of filters is prepared once and kept in `cache`.
 */
export function listRuns(
  db: Database.Database,
  cache: Map<string, Stmt>,
  filter: RunFilter,
): RunRecord[] {
  const given = FILTER_CONDITIONS.filter(([field]) => filter[field] !== undefined);
  const key = given.map(([field]) => field).join(',');
  let stmt = cache.get(key);
  if (!stmt) {
    const where = given.length ? `WHERE ${given.map(([, cond]) => cond).join(' AND ')}` : '';
    stmt = db.prepare(`SELECT ${RUN_COLUMNS} FROM runs ${where} ORDER BY seq DESC LIMIT @limit`);
    cache.set(key, stmt);
  }
  const params: Record<string, unknown> = { limit: clampListLimit(filter.limit) };
  for (const [field] of given)
    params[field] = field === 'outcomes' ? JSON.stringify(filter.outcomes) : filter[field];
  return (stmt.all(params) as Row[]).map(fromRow);
}

export function queuedRuns(s: Prepared, app?: string, job?: string): RunRecord[] {
  let rows: Row[];
  if (app !== undefined && job !== undefined) rows = s.queuedOfJob.all(app, job) as Row[];
  else if (app !== undefined) rows = s.queuedOfApp.all(app) as Row[];
  else rows = (s.queuedAll.all() as Row[]).filter((r) => job === undefined || r.job === job);
  return rows.map(fromRow);
}

export function runningRuns(s: Prepared): RunRecord[] {
  return (s.running.all() as Row[]).map(fromRow);
}

export function keyHolder(
  s: Prepared,
  runKey: string,
): { runId: string; state: 'running' | 'succeeded' } | null {
  const row = s.keyHolder.get(runKey) as
    { run_id: string; state: 'running' | 'succeeded' } | undefined;
  return row ? { runId: row.run_id, state: row.state } : null;
}

export function lastSuccesses(s: Prepared): Map<string, number> {
  const rows = s.lastSuccesses.all() as { app: string; job: string; at: number }[];
  return new Map(rows.map((r) => [`${r.app}/${r.job}`, r.at]));
}

/** Every `running` run becomes `ended`/`crashed`, and their keys are released, in one transaction. */
export function endCrashed(db: Database.Database, s: Prepared, now: number, error: string): number {
  return db
    .transaction(() => {
      const n = s.endCrashed.run(now, error).changes;
      s.releaseRunningKeys.run();
      return n;
    })
    .immediate();
}

export function pruneRuns(db: Database.Database, s: Prepared, endedBefore: number): number {
  return db
    .transaction(() => {
      const n = s.pruneRuns.run(endedBefore).changes;
      s.pruneKeys.run(endedBefore);
      s.pruneFires.run(endedBefore);
      s.pruneOutputs.run(endedBefore);
      return n;
    })
    .immediate();
}

export function pausedJobs(s: Prepared): Set<string> {
  const rows = s.pausedJobs.all() as { app: string; job: string }[];
  return new Set(rows.map((r) => `${r.app}/${r.job}`));
}

/** Counts by outcome of the job's ended runs whose `scheduledTime >= since`. */
export function outcomeCounts(
  s: Prepared,
  app: string,
  job: string,
  since: number,
): Partial<Record<RunOutcome, number>> {
  const rows = s.outcomeCounts.all(app, job, since) as {
    outcome: RunOutcome;
    n: number;
  }[];
  const counts: Partial<Record<RunOutcome, number>> = {};
  for (const r of rows) counts[r.outcome] = r.n;
  return counts;
}

/**
 * One statement: each job's newest ended runs through its `(app, job, seq)` index range. The
 * caller returns early for no jobs or `perJob < 1`.
 */
export function recentOutcomes(
  s: Prepared,
  jobs: readonly JobRef[],
  perJob: number,
): JobOutcomes[] {
  const rows = s.recentOutcomes.all({
    jobs: jobsJson(jobs),
    n: Math.trunc(perJob),
  }) as { app: string; job: string; outcomes: string }[];
  const out: JobOutcomes[] = [];
  for (const r of rows) {
    const outcomes = JSON.parse(r.outcomes) as RunOutcome[];
    if (outcomes.length > 0) out.push({ app: r.app, job: r.job, outcomes });
  }
  return out;
}

/** One statement: each job's `(app, job, scheduled_time)` index range (the caller skips no jobs). */
export function outcomeSummary(
  s: Prepared,
  jobs: readonly JobRef[],
  since: number,
): OutcomeGroup[] {
  const rows = s.outcomeSummary.all({ jobs: jobsJson(jobs), since }) as {
    app: string;
    job: string;
    hour: number;
    scheduled: number;
    outcome: RunOutcome;
    n: number;
  }[];
  return rows.map((r) => ({
    app: r.app,
    job: r.job,
    hour: r.hour,
    scheduled: r.scheduled === 1,
    outcome: r.outcome,
    count: r.n,
  }));
}
