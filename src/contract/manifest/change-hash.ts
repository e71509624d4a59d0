/**
 * Change hashes (SPEC §2): the identity of one (job, schedule index) as the reconciler and the
 * run key see it. Any change to the job's canonical form or to the selected schedule changes
 * the hash; changes to other jobs do not.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from './canonical.js';
import type { Job, Manifest } from './types.js';

/** Number of hex characters of the sha256 digest kept in a change hash. */
export const CHANGE_HASH_LENGTH = 16;

/**
 * The manifest holding only `job`, with only its schedule at `scheduleIndex`.
 * @throws RangeError when `scheduleIndex` does not name one of the job's schedules.
 */
export function singleScheduleManifest(app: string, job: Job, scheduleIndex: number): Manifest {
  const schedule = Number.isInteger(scheduleIndex) ? job.schedules[scheduleIndex] : undefined;
  if (schedule === undefined) {
    throw new RangeError(
      `job "${job.name}" has no schedule index ${String(scheduleIndex)} (it has ${job.schedules.length})`,
    );
  }
  return { version: 1, app, jobs: [{ ...job, schedules: [schedule] }] };
}

/**
 * Change hash of one job's schedule: sha256 of the canonical form of the manifest holding only
 * that job with only that schedule, first 16 lowercase hex characters.
 * @throws RangeError when `scheduleIndex` is out of range.
 */
export function jobChangeHash(app: string, job: Job, scheduleIndex: number): string {
  const canonical = canonicalize(singleScheduleManifest(app, job, scheduleIndex));
  return createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, CHANGE_HASH_LENGTH);
}

/**
 * Change hash of the job named `jobName` in a normalized manifest (see `jobChangeHash`).
 * @throws RangeError when there is no such job or schedule index.
 */
export function changeHash(manifest: Manifest, jobName: string, scheduleIndex: number): string {
  const job = manifest.jobs.find((j) => j.name === jobName);
  if (job === undefined) throw new RangeError(`manifest "${manifest.app}" has no job "${jobName}"`);
  return jobChangeHash(manifest.app, job, scheduleIndex);
}
