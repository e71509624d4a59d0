/** Host-mode reports for the store and watch tests (no vitest import). */
import { randomUUID } from 'node:crypto';
import type { Report, ReportedRun } from '../../src/contract/report.js';
import type { ReportWrite } from '../../src/daemon/store/host-types.js';

/** A report of `kind` for `app/job` at instant `at` (schedule 0); override the run's fields. */
export function report(
  kind: 'started' | 'ended',
  at: number,
  over: Partial<ReportedRun> = {},
): Report {
  const app = over.app ?? 'shop';
  const job = over.job ?? 'report';
  const ended = kind === 'ended';
  return {
    kind,
    spoolDropped: 0,
    run: {
      id: randomUUID(),
      runKey: `${app}/${job}#${new Date(at).toISOString()}#abc123`,
      app,
      job,
      scheduleIndex: 0,
      scheduledTime: at,
      host: 'web-1',
      startedAt: at + 1000,
      fencingToken: null,
      endedAt: ended ? at + 3000 : null,
      outcome: ended ? 'success' : null,
      exitCode: ended ? 0 : null,
      attempts: 1,
      lastStatus: null,
      error: null,
      durationMs: ended ? 2000 : null,
      attemptLog: ended
        ? [
            {
              attempt: 1,
              startedAt: at + 1000,
              durationMs: 2000,
              status: null,
              exitCode: 0,
              error: null,
            },
          ]
        : [],
      output: null,
      outputTruncated: false,
      ...over,
    },
  };
}

/** The write of a report received at `receivedAt` (no skew, not late). */
export function write(r: Report, receivedAt = r.run.startedAt + 50): ReportWrite {
  return { report: r, receivedAt, hostOffsetMs: 0, clockSkewMs: null, latenessMs: null };
}

/** The ended report of the same run as a started one. */
export function endOf(started: Report, over: Partial<ReportedRun> = {}): Report {
  const r = started.run;
  return report('ended', r.scheduledTime, {
    ...r,
    endedAt: r.startedAt + 2000,
    outcome: 'success',
    exitCode: 0,
    durationMs: 2000,
    attemptLog: [
      {
        attempt: 1,
        startedAt: r.startedAt,
        durationMs: 2000,
        status: null,
        exitCode: 0,
        error: null,
      },
    ],
    ...over,
  });
}

export const uuid = randomUUID;
