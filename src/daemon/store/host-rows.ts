/**
 * Reports as ledger rows (SPEC §15), shared by both stores: the new row a report makes, the
 * end an `ended` report writes, and which reports claim their instant.
 */
import type { ReportedRun } from '../../contract/report.js';
import type { ReportWrite } from './host-types.js';
import type { AttemptLogEntry, NewRun } from './types.js';

/** Outcomes of contenders: extra rows, they never claim (or take over) their instant. */
const CONTENDERS = new Set(['skipped', 'duplicate']);

/** Whether the report's run claims its expected instant (see `host-types.ts`). */
export function claimsFire(w: ReportWrite): boolean {
  const r = w.report.run;
  return r.scheduleIndex !== null && !(r.outcome !== null && CONTENDERS.has(r.outcome));
}

/** The reported attempts as attempt-log entries. */
export function reportedLog(r: ReportedRun): AttemptLogEntry[] {
  return r.attemptLog.map((a) => ({
    attempt: a.attempt,
    startedAt: a.startedAt,
    durationMs: a.durationMs,
    status: a.status,
    error: a.error,
    exitCode: a.exitCode,
  }));
}

/** The end of a reported run: when it ended (the duration counts where the end time is odd). */
function endedAt(r: ReportedRun): number | null {
  if (r.endedAt === null) return null;
  return r.durationMs !== null && r.endedAt < r.startedAt ? r.startedAt + r.durationMs : r.endedAt;
}

/** The row a report records when its run id is new. */
export function reportRow(w: ReportWrite): NewRun {
  const r = w.report.run;
  const ended = w.report.kind === 'ended';
  return {
    id: r.id,
    runKey: r.runKey,
    app: r.app,
    job: r.job,
    scheduleIndex: r.scheduleIndex,
    scheduledTime: r.scheduledTime,
    trigger: 'host',
    phase: ended ? 'ended' : 'running',
    outcome: ended ? r.outcome : null,
    attempts: Math.max(r.attempts, ended ? 0 : 1),
    lastStatus: r.lastStatus,
    createdAt: w.receivedAt,
    startedAt: r.startedAt,
    endedAt: ended ? endedAt(r) : null,
    dueAt: null,
    error: ended ? r.error : null,
    attemptLog: reportedLog(r),
    outputTruncated: r.outputTruncated,
    outputLost: null,
    host: r.host,
    exitCode: r.exitCode,
    clockSkewMs: w.clockSkewMs,
    latenessMs: w.latenessMs,
    fencingToken: r.fencingToken,
  };
}

/** The fields an `ended` report writes over its run's `started` row. */
export function reportEnd(w: ReportWrite): {
  outcome: string;
  endedAt: number;
  error: string | null;
  attempts: number;
  lastStatus: number | null;
  attemptLog: string | null;
  exitCode: number | null;
  outputTruncated: number;
} {
  const r = w.report.run;
  const log = reportedLog(r);
  return {
    outcome: r.outcome as string,
    endedAt: endedAt(r) ?? w.receivedAt,
    error: r.error,
    attempts: r.attempts,
    lastStatus: r.lastStatus,
    attemptLog: log.length === 0 ? null : JSON.stringify(log),
    exitCode: r.exitCode,
    outputTruncated: r.outputTruncated ? 1 : 0,
  };
}
