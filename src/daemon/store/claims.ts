/** Which new rows take the fire claim of their instant (`fires`), in both stores. */
import type { NewRun } from './types.js';

/** Triggers whose rows claim their instant: the scheduler's, and the watcher's `missed` rows. */
export const CLAIMING_TRIGGERS = ['schedule', 'catchup', 'host'] as const;

/**
 * Whether inserting `run` claims `(app, job, schedule index, scheduled time)` first. Reported
 * host runs take their claim through `recordReports` (see `host-types.ts`); an `insert` op with
 * trigger `host` is the watcher's `missed` row.
 */
export function claimsInstant(run: NewRun): boolean {
  return (
    run.scheduleIndex !== null && (CLAIMING_TRIGGERS as readonly string[]).includes(run.trigger)
  );
}
