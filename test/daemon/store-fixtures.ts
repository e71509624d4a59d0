/** Run rows for the store tests; no vitest import, so child processes can use it too. */
import { randomUUID } from 'node:crypto';
import type { LedgerResult, NewRun, RunRecord, Store } from '../../src/daemon/store/types.js';

/** A fixed instant: 2026-01-01T00:00:00.123Z. */
export const T0 = 1_767_225_600_123;

let counter = 0;

/** A queued scheduled run of `app/job` with unique id, run key and instant; override anything. */
export function newRun(overrides: Partial<NewRun> = {}): NewRun {
  const n = ++counter;
  const app = overrides.app ?? 'billing';
  const job = overrides.job ?? 'settle';
  return {
    id: randomUUID(),
    runKey: `${app}/${job}#${new Date(T0 + n * 60_000).toISOString()}#h${n}`,
    app,
    job,
    scheduleIndex: 0,
    scheduledTime: T0 + n * 60_000,
    trigger: 'schedule',
    phase: 'queued',
    outcome: null,
    attempts: 0,
    lastStatus: null,
    createdAt: T0 + n * 60_000 + 5,
    startedAt: null,
    endedAt: null,
    dueAt: null,
    error: null,
    attemptLog: [],
    outputTruncated: false,
    outputLost: null,
    host: null,
    exitCode: null,
    clockSkewMs: null,
    latenessMs: null,
    fencingToken: null,
    ...overrides,
  };
}

/** Inserts runs in one transaction; every one must be recorded (no fire collisions). */
export async function insertRuns(store: Store, runs: NewRun[]): Promise<RunRecord[]> {
  const results = await store.write(runs.map((run) => ({ kind: 'insert' as const, run })));
  return results.map((r: LedgerResult) => {
    if (r.kind !== 'recorded') throw new Error(`expected recorded, got ${r.kind}`);
    return r.run;
  });
}
