/**
 * The SQL of the SQLite store (`sqlite.ts`): run columns, the list filters and every
 * statement, prepared once the schema exists, and how a row becomes a {@link RunRecord}.
 */
import type Database from 'better-sqlite3';
import { RUN_INSERT_COLUMNS, runInsertValues } from './record.js';
import type { RunParams } from './run-types.js';
import type { AttemptLogEntry, JobRef, NewRun, RunFilter, RunRecord } from './types.js';

export const RUN_COLUMNS = `seq, id, run_key AS runKey, app, job, schedule_index AS scheduleIndex,
  scheduled_time AS scheduledTime, "trigger", phase, outcome, attempts,
  last_status AS lastStatus, created_at AS createdAt, started_at AS startedAt,
  ended_at AS endedAt, due_at AS dueAt, error, attempt_log AS attemptLog,
  output_truncated AS outputTruncated, output_lost AS outputLost, host,
  exit_code AS exitCode, clock_skew_ms AS clockSkewMs, lateness_ms AS latenessMs,
  fencing_token AS fencingToken, params`;

export const INSERT_RUN = `INSERT INTO runs (${RUN_INSERT_COLUMNS})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The parameters of {@link INSERT_RUN} for a new run, by position (SQLite: the flag as 0/1). */
export const insertParams = (row: NewRun): unknown[] => runInsertValues(row, (b) => (b ? 1 : 0));

/** List filters and their conditions, in a fixed order (keys of a statement cache). */
export const FILTER_CONDITIONS: readonly (readonly [keyof RunFilter, string])[] = [
  ['app', 'app = @app'],
  ['job', 'job = @job'],
  ['outcome', 'outcome = @outcome'],
  ['outcomes', 'outcome IN (SELECT value FROM json_each(@outcomes))'],
  ['phase', 'phase = @phase'],
  ['beforeSeq', 'seq < @beforeSeq'],
];

export type Stmt = Database.Statement<unknown[], unknown>;

/** A row as SQLite returns it: the attempt log is JSON text, booleans are 0/1. */
export type Row = Omit<RunRecord, 'attemptLog' | 'outputTruncated' | 'params'> & {
  attemptLog: string | null;
  outputTruncated: number;
  params?: string | null;
};

/** Statements prepared once the schema exists. */
export interface Prepared {
  insertRun: Stmt;
  getRun: Stmt;
  runsByIds: Stmt;
  activeCounts: Stmt;
  queuedAll: Stmt;
  queuedOfApp: Stmt;
  queuedOfJob: Stmt;
  running: Stmt;
  runningProcesses: Stmt;
  setProcess: Stmt;
  setParams: Stmt;
  lastSuccess: Stmt;
  lastSuccesses: Stmt;
  endCrashed: Stmt;
  releaseRunningKeys: Stmt;
  pruneRuns: Stmt;
  pruneKeys: Stmt;
  pruneFires: Stmt;
  pruneOutputs: Stmt;
  checkpoints: Stmt;
  setCheckpoint: Stmt;
  pausedJobs: Stmt;
  pause: Stmt;
  resume: Stmt;
  outcomeCounts: Stmt;
  recentOutcomes: Stmt;
  outcomeSummary: Stmt;
  claimFire: Stmt;
  claimKey: Stmt;
  keyHolder: Stmt;
  succeedKey: Stmt;
  releaseKey: Stmt;
  startRun: Stmt;
  attemptRun: Stmt;
  endRun: Stmt;
  dueRun: Stmt;
  withdrawRun: Stmt;
  unclaimFire: Stmt;
}

/** A row the store cannot read (altered by hand, damaged): reads answer it, not a crash. */
export class StoreReadError extends Error {
  override name = 'StoreReadError';
}

/** A run's attempt log from its JSON text; a damaged one names the run. */
export function parseLog(text: string | null, id = '?'): AttemptLogEntry[] {
  if (text === null) return [];
  try {
    const log = JSON.parse(text) as unknown;
    if (Array.isArray(log)) return log as AttemptLogEntry[];
  } catch {
    // below
  }
  throw new StoreReadError(`run ${id}: its attempt_log in the ledger is damaged (not a JSON list)`);
}
export const logText = (log: readonly AttemptLogEntry[]): string | null =>
  log.length === 0 ? null : JSON.stringify(log);
/**
 * A run from its row: every field written out (no rest/spread), so each record has one shape
 * and the copy costs what its fields do — this is on the path of every run end.
 */
export const fromRow = (row: Row): RunRecord => toRun(row, parseLog(row.attemptLog, row.id));

/** {@link fromRow} with the run's attempt log already in hand (a run end just wrote it). */
export function toRun(row: Row, attemptLog: AttemptLogEntry[]): RunRecord {
  // the field order and the always-present `params` of `withSeq` (record.ts): one map for all
  return {
    id: row.id,
    runKey: row.runKey,
    app: row.app,
    job: row.job,
    scheduleIndex: row.scheduleIndex,
    scheduledTime: row.scheduledTime,
    trigger: row.trigger,
    phase: row.phase,
    outcome: row.outcome,
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    dueAt: row.dueAt,
    error: row.error,
    attemptLog,
    outputTruncated: row.outputTruncated === 1,
    outputLost: row.outputLost,
    seq: row.seq,
    host: row.host,
    exitCode: row.exitCode,
    clockSkewMs: row.clockSkewMs,
    latenessMs: row.latenessMs,
    fencingToken: row.fencingToken,
    params: row.params ? (JSON.parse(row.params) as RunParams) : undefined,
  };
}

/**
 * A row of `endRun` (an array in {@link RUN_COLUMNS}' order) as a {@link Row}: a raw row is an
 * array of values where a named one is an object built column by column, for every run end.
 */
export function endedRow(v: unknown[]): Row {
  return {
    seq: v[0],
    id: v[1],
    runKey: v[2],
    app: v[3],
    job: v[4],
    scheduleIndex: v[5],
    scheduledTime: v[6],
    trigger: v[7],
    phase: v[8],
    outcome: v[9],
    attempts: v[10],
    lastStatus: v[11],
    createdAt: v[12],
    startedAt: v[13],
    endedAt: v[14],
    dueAt: v[15],
    error: v[16],
    attemptLog: v[17],
    outputTruncated: v[18],
    outputLost: v[19],
    host: v[20],
    exitCode: v[21],
    clockSkewMs: v[22],
    latenessMs: v[23],
    fencingToken: v[24],
    params: v[25],
  } as Row;
}

/** Prepares every statement of the store (once the schema exists). */
export function prepareStatements(db: Database.Database): Prepared {
  const p = (sql: string): Stmt => db.prepare(sql);
  return {
    insertRun: p(INSERT_RUN),
    getRun: p(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`),
    setParams: p('UPDATE runs SET params = ? WHERE id = ?'),
    runsByIds: p(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    ),
    activeCounts: p(
      `SELECT app, job, SUM(phase = 'running') AS running, SUM(phase = 'queued') AS queued
       FROM runs WHERE phase IN ('queued', 'running') GROUP BY app, job ORDER BY app, job`,
    ),
    queuedAll: p(`SELECT ${RUN_COLUMNS} FROM runs WHERE phase = 'queued' ORDER BY seq`),
    queuedOfApp: p(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE phase = 'queued' AND app = ? ORDER BY seq`,
    ),
    queuedOfJob: p(
      `SELECT ${RUN_COLUMNS} FROM runs
       WHERE phase = 'queued' AND app = ? AND job = ? ORDER BY seq`,
    ),
    running: p(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE phase IN ('planned', 'running') AND "trigger" <> 'host'
       ORDER BY seq`,
    ),
    runningProcesses: p(
      `SELECT id AS runId, app, job, pid, pid_start AS startTime FROM runs
       WHERE phase IN ('planned', 'running') AND pid IS NOT NULL AND "trigger" <> 'host'
       ORDER BY seq`,
    ),
    setProcess: p(
      `UPDATE runs SET pid = ?, pid_start = ? WHERE id = ? AND phase IN ('planned', 'running')`,
    ),
    lastSuccess: p(
      `SELECT MAX(ended_at) FROM runs WHERE app = ? AND job = ? AND outcome = 'success'`,
    ).pluck(),
    lastSuccesses: p(
      `SELECT app, job, MAX(ended_at) AS at FROM runs WHERE outcome = 'success' GROUP BY app, job`,
    ),
    endCrashed: p(
      `UPDATE runs SET phase = 'ended', outcome = 'crashed', ended_at = ?, error = ?
       WHERE phase IN ('planned', 'running') AND "trigger" <> 'host'`,
    ),
    releaseRunningKeys: p(`DELETE FROM run_keys WHERE state = 'running'`),
    pruneRuns: p(`DELETE FROM runs WHERE phase = 'ended' AND ended_at < ?`),
    pruneKeys: p(`DELETE FROM run_keys WHERE state = 'succeeded' AND updated_at < ?`),
    pruneFires: p(`DELETE FROM fires WHERE scheduled_time < ?`),
    pruneOutputs: p(`DELETE FROM run_outputs WHERE created_at < ?`),
    checkpoints: p(
      'SELECT app, job, schedule_index AS scheduleIndex, at FROM checkpoints ORDER BY app, job',
    ),
    setCheckpoint: p(
      `INSERT INTO checkpoints (app, job, schedule_index, at) VALUES (?, ?, ?, ?)
       ON CONFLICT (app, job, schedule_index) DO UPDATE SET at = MAX(at, excluded.at)`,
    ),
    pausedJobs: p('SELECT app, job FROM paused_jobs ORDER BY app, job'),
    pause: p('INSERT INTO paused_jobs (app, job) VALUES (?, ?) ON CONFLICT DO NOTHING'),
    resume: p('DELETE FROM paused_jobs WHERE app = ? AND job = ?'),
    outcomeCounts: p(
      `SELECT outcome, COUNT(*) AS n FROM runs
       WHERE app = ? AND job = ? AND scheduled_time >= ? AND outcome IS NOT NULL
       GROUP BY outcome`,
    ),
    // the jobs arrive as one JSON array of [app, job] pairs; for each, a correlated
    // subquery walks the (app, job, seq) index backwards, so old history is never read
    // (10,000 jobs × 20 runs: about 0.25 s)
    recentOutcomes: p(
      `WITH j AS (SELECT json_extract(value, '$[0]') AS app, json_extract(value, '$[1]') AS job
                  FROM json_each(@jobs))
       SELECT j.app, j.job, (
         SELECT json_group_array(outcome ORDER BY seq DESC) FROM (
           SELECT seq, outcome FROM runs WHERE app = j.app AND job = j.job AND phase = 'ended'
           ORDER BY seq DESC LIMIT @n)) AS outcomes
       FROM j`,
    ),
    outcomeSummary: p(
      `WITH j AS (SELECT json_extract(value, '$[0]') AS app, json_extract(value, '$[1]') AS job
                  FROM json_each(@jobs))
       SELECT r.app, r.job, (r.scheduled_time / 3600000) * 3600000 AS hour,
              (r."trigger" IN ('schedule', 'catchup') OR (r."trigger" = 'host'
                AND r.outcome NOT IN ('skipped', 'duplicate'))) AS scheduled,
              r.outcome, COUNT(*) AS n
       FROM j JOIN runs r ON r.app = j.app AND r.job = j.job AND r.scheduled_time >= @since
       WHERE r.outcome IS NOT NULL AND r.phase = 'ended'
       GROUP BY r.app, r.job, hour, scheduled, r.outcome`,
    ),
    claimFire: p(
      `INSERT INTO fires (app, job, schedule_index, scheduled_time, run_id)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    claimKey: p(
      `INSERT INTO run_keys (run_key, run_id, state, updated_at) VALUES (?, ?, 'running', ?)
       ON CONFLICT DO NOTHING`,
    ),
    keyHolder: p('SELECT run_id, state FROM run_keys WHERE run_key = ?'),
    succeedKey: p(
      `INSERT INTO run_keys (run_key, run_id, state, updated_at) VALUES (?, ?, 'succeeded', ?)
       ON CONFLICT (run_key) DO UPDATE
       SET run_id = excluded.run_id, state = 'succeeded', updated_at = excluded.updated_at`,
    ),
    releaseKey: p(`DELETE FROM run_keys WHERE run_key = ? AND run_id = ? AND state = 'running'`),
    startRun: p(`UPDATE runs SET phase = 'planned', started_at = ?, due_at = NULL WHERE id = ?`),
    attemptRun: p(
      `UPDATE runs SET phase = 'running', attempts = MAX(attempts, ?)
       WHERE id = ? AND phase IN ('planned', 'running')`,
    ),
    // positional, in the order of `endParams` (sqlite-write.ts); the row comes back as an array
    // (`endedRow`), without the attempt log when the end wrote one (the caller has it)
    endRun: p(
      `UPDATE runs SET phase = 'ended', outcome = ?, ended_at = ?,
       error = ?, attempts = COALESCE(?, attempts),
       last_status = CASE WHEN ? THEN ? ELSE last_status END,
       attempt_log = CASE WHEN ? THEN ? ELSE attempt_log END,
       output_truncated = COALESCE(?, output_truncated),
       output_lost = COALESCE(?, output_lost)
       WHERE id = ? AND phase <> 'ended'
       RETURNING ${RUN_COLUMNS.replace('attempt_log AS attemptLog', 'CASE WHEN ? THEN NULL ELSE attempt_log END')}`,
    ).raw(),
    dueRun: p(`UPDATE runs SET due_at = NULL WHERE id = ? AND phase = 'queued'`),
    withdrawRun: p(
      `DELETE FROM runs WHERE id = ? AND phase IN ('planned', 'running') AND attempts = 0
       RETURNING run_key AS runKey, app, job, schedule_index AS scheduleIndex,
       scheduled_time AS scheduledTime`,
    ),
    unclaimFire: p(
      `DELETE FROM fires WHERE app = ? AND job = ? AND schedule_index = ? AND scheduled_time = ?
       AND run_id = ?`,
    ),
  };
}

/** Jobs as the JSON array of `[app, job]` pairs the batch statements read with `json_each`. */
export const jobsJson = (jobs: readonly JobRef[]): string =>
  JSON.stringify(jobs.map((j) => [j.app, j.job]));
