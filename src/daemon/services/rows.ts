/** The ledger rows of a service's instances (SPEC §17): one per start, trigger `service`. */
import { uuidv7 } from '../../fire/ids.js';
import type { NewRun } from '../store/types.js';

/** A manual start of a running instance, recorded `skipped` (SPEC §17). */
export function skippedRow(app: string, service: string, index: number, now: number): NewRun {
  return {
    ...serviceRow(app, service, index, now),
    phase: 'ended',
    outcome: 'skipped',
    attempts: 0,
    startedAt: null,
    endedAt: now,
    error: `instance ${index} is already running`,
  };
}

/** The row of one start of an instance (trigger `service`, running from `now`). */
export function serviceRow(app: string, service: string, index: number, now: number): NewRun {
  const id = uuidv7(now);
  return {
    id,
    runKey: `service:${app}/${service}/${index}/${id}`,
    app,
    job: service,
    // a service run's "schedule index" is its instance (trigger `service`)
    scheduleIndex: index,
    scheduledTime: now,
    trigger: 'service',
    phase: 'running',
    outcome: null,
    attempts: 1,
    lastStatus: null,
    createdAt: now,
    startedAt: now,
    endedAt: null,
    dueAt: null,
    error: null,
    attemptLog: [],
    outputTruncated: false,
    outputLost: null,
  };
}
