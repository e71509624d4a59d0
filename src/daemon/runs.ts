/** New run records: the one place their shape and run key (SPEC §5 step 4) are made. */
import { runKey } from '../contract/run.js';
import { uuidv7 } from '../fire/ids.js';
import type { RegisteredJob } from './registry.js';
import type { NewRun } from './store/types.js';

/** A new run of a job at `now` for the nominal instant `nominal` (queued, not yet decided). */
export function newRun(
  job: RegisteredJob,
  index: number | null,
  nominal: number,
  trigger: NewRun['trigger'],
  now: number,
  extra: Partial<NewRun> = {},
): NewRun {
  return {
    id: uuidv7(now),
    runKey: runKey(job.app, job.job.name, nominal, job.hashes[index ?? 0] as string),
    app: job.app,
    job: job.job.name,
    scheduleIndex: index,
    scheduledTime: nominal,
    trigger,
    phase: 'queued',
    outcome: null,
    attempts: 0,
    lastStatus: null,
    createdAt: now,
    startedAt: null,
    endedAt: null,
    dueAt: null,
    error: null,
    attemptLog: [],
    outputTruncated: false,
    outputLost: null,
    ...extra,
  };
}
