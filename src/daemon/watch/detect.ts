/**
 * Detection of host mode (SPEC §15), pure: from the watched jobs, where each schedule's
 * detection stands, the host runs still open and the time, which expected instants are now
 * overdue (each gets a `missed` row unless a run claimed it), which open runs ended without an
 * end report (`crashed`), and when to look again. No clock, no store: table-tested in
 * `test/daemon/watch-detect.test.ts`; `detector.ts` carries the decisions out.
 */
import { attemptStopSeconds } from '../../contract/manifest/effective.js';
import { worstCaseFireSeconds } from '../../contract/run.js';
import { nextFire } from '../../contract/schedule/index.js';
import { jitterMs } from '../policy.js';
import type { RegisteredJob } from '../registry.js';
import { newRun } from '../runs.js';
import type { NewRun, RunRecord } from '../store/types.js';

/** Most instants of one schedule decided in one turn (the rest in the next ones). */
export const MAX_DUE_PER_TURN = 1000;

/** The watch grace of a job in ms. */
export const graceMs = (job: RegisteredJob): number => job.policy.watch.grace_seconds * 1000;

/**
 * The latest instant a `started` report of the fire at `nominal` may arrive: the nominal instant,
 * the job's largest jitter (stable offset plus all of the random one, as the daemon computes
 * them), and the watch grace.
 */
export function startDeadline(job: RegisteredJob, index: number, nominal: number): number {
  const { stable_seconds, random_seconds } = job.policy.jitter;
  let jitter = 0;
  if (stable_seconds > 0 || random_seconds > 0) {
    const schedule = job.schedules[index];
    const next = schedule ? nextFire(schedule, job.job.timezone, nominal) : null;
    const ref = { app: job.app, job: job.job.name, scheduleIndex: index };
    jitter = jitterMs(ref, stable_seconds, random_seconds, 1 - Number.EPSILON, nominal, next);
  }
  return nominal + jitter + graceMs(job);
}

/** The latest an open run started at `startedAt` may end: its worst-case run time plus the grace. */
export function endDeadline(job: RegisteredJob, startedAt: number): number {
  return (
    startedAt + worstCaseFireSeconds(job.policy, attemptStopSeconds(job.job)) * 1000 + graceMs(job)
  );
}

/** Where detection stands on one schedule of a watched job. */
export interface Cursor {
  job: RegisteredJob;
  index: number;
  /** The last instant decided (recorded missed or found claimed); the checkpoint. */
  through: number;
}

/** What {@link detect} reads. */
export interface DetectInput {
  now: number;
  /**
   * When detection began in this process. An instant is not declared missed before
   * `since + grace` either: a server that was down gives the hosts' spooled reports their grace.
   */
  since: number;
  cursors: readonly Cursor[];
  /** Host runs started and not ended. */
  open: readonly RunRecord[];
  /** A watched job by `app/job` (open runs of jobs no longer watched are left alone). */
  jobOf(key: string): RegisteredJob | undefined;
}

/** One overdue instant of a schedule. */
export interface DueInstant {
  job: RegisteredJob;
  index: number;
  at: number;
}

/** What {@link detect} decided. */
export interface Detection {
  /** Overdue instants, oldest first per schedule: each is recorded missed unless claimed. */
  due: DueInstant[];
  /** Cursors that moved, with their new position (the last of their due instants). */
  advanced: { cursor: Cursor; through: number }[];
  /** Open runs past their end deadline. */
  crashed: { run: RunRecord; job: RegisteredJob }[];
  /** When the next instant or open run falls due; null: nothing is expected. */
  nextAt: number | null;
}

/** See the module comment. */
export function detect(input: DetectInput): Detection {
  const out: Detection = { due: [], advanced: [], crashed: [], nextAt: null };
  const later = (t: number): void => {
    if (out.nextAt === null || t < out.nextAt) out.nextAt = t;
  };
  for (const cursor of input.cursors) {
    const { job, index } = cursor;
    const schedule = job.schedules[index];
    if (!job.enabled || !schedule) continue;
    const floor = input.since + graceMs(job);
    let through = cursor.through;
    for (let n = 0; ; n++) {
      const at = nextFire(schedule, job.job.timezone, through);
      if (at === null) break;
      const deadline = Math.max(startDeadline(job, index, at), floor);
      if (deadline > input.now || n >= MAX_DUE_PER_TURN) {
        later(n >= MAX_DUE_PER_TURN ? input.now : deadline);
        break;
      }
      out.due.push({ job, index, at });
      through = at;
    }
    if (through !== cursor.through) out.advanced.push({ cursor, through });
  }
  for (const run of input.open) {
    const job = input.jobOf(`${run.app}/${run.job}`);
    if (!job) continue;
    const deadline = endDeadline(job, run.startedAt ?? run.createdAt);
    if (deadline <= input.now) out.crashed.push({ run, job });
    else later(deadline);
  }
  return out;
}

/** The reason of a missed row of a watched job. */
export const missedReason = (job: RegisteredJob): string =>
  `no report from any host within ${job.policy.watch.grace_seconds} s`;

/** The `missed` row of an overdue instant (recorded only if no run claimed the instant). */
export function missedRow(due: DueInstant, now: number): NewRun {
  return newRun(due.job, due.index, due.at, 'host', now, {
    phase: 'ended',
    outcome: 'missed',
    endedAt: now,
    error: missedReason(due.job),
  });
}
