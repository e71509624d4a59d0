/**
 * Building run records the way V8 keeps cheap.
 *
 * `{ ...run, seq }` — a spread plus a property the source does not have — gives every object it
 * makes a hidden class (map) of its own in node 20 (V8 11.3): a heap snapshot of a 10,000-fire
 * burst held 9,987 run records with 9,987 maps (~550 bytes each with their descriptors), and
 * every function reading those records (`execute`, the attempt headers, the lanes) sees them
 * as megamorphic. Built field by field, all records share one map.
 */
import type { NewRun, RunRecord } from './types.js';

/** The record of a new run once the store has given it its `seq`. */
export function withSeq(run: NewRun, seq: number): RunRecord {
  return {
    id: run.id,
    runKey: run.runKey,
    app: run.app,
    job: run.job,
    scheduleIndex: run.scheduleIndex,
    scheduledTime: run.scheduledTime,
    trigger: run.trigger,
    phase: run.phase,
    outcome: run.outcome,
    attempts: run.attempts,
    lastStatus: run.lastStatus,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    dueAt: run.dueAt,
    error: run.error,
    attemptLog: run.attemptLog,
    outputTruncated: run.outputTruncated,
    outputLost: run.outputLost,
    seq,
    host: run.host ?? null,
    exitCode: run.exitCode ?? null,
    clockSkewMs: run.clockSkewMs ?? null,
    latenessMs: run.latenessMs ?? null,
    fencingToken: run.fencingToken ?? null,
    params: run.params, // undefined for runs without parameters (every record has the field)
  };
}

/** The same record in another phase (a planned run once its first attempt starts), one map. */
export function withPhase(run: RunRecord, phase: RunRecord['phase']): RunRecord {
  const copy = withSeq(run, run.seq);
  copy.phase = phase;
  return copy;
}

/**
 * The columns of a run row as both stores insert it, in the order of {@link runInsertValues}.
 */
export const RUN_INSERT_COLUMNS = `id, run_key, app, job, schedule_index, scheduled_time,
  "trigger", phase, outcome, attempts, last_status, created_at, started_at, ended_at, due_at,
  error, attempt_log, output_truncated, output_lost, host, exit_code, clock_skew_ms, lateness_ms,
  fencing_token`;

/**
 * The values of {@link RUN_INSERT_COLUMNS} for a new run (host fields null for daemon runs), by
 * position: the attempt log as JSON text (null when empty), `output_truncated` as `flag` makes
 * it (SQLite binds no booleans). Positional, as a store binds it by index instead of looking
 * each name up on an object (a plan-ahead of 10,000 rows: ~3× faster to insert, BENCHMARKS.md).
 */
export function runInsertValues(
  row: NewRun,
  flag: (b: boolean) => boolean | number = (b) => b,
): unknown[] {
  return [
    row.id,
    row.runKey,
    row.app,
    row.job,
    row.scheduleIndex,
    row.scheduledTime,
    row.trigger,
    row.phase,
    row.outcome,
    row.attempts,
    row.lastStatus,
    row.createdAt,
    row.startedAt,
    row.endedAt,
    row.dueAt,
    row.error,
    row.attemptLog.length === 0 ? null : JSON.stringify(row.attemptLog),
    flag(row.outputTruncated),
    row.outputLost,
    row.host ?? null,
    row.exitCode ?? null,
    row.clockSkewMs ?? null,
    row.latenessMs ?? null,
    row.fencingToken ?? null,
  ];
}
