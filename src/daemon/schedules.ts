/**
 * Every schedule's place in time (SPEC §7, §8): the last instant processed per
 * schedule (the in-memory side of the durable checkpoint), the next fire of each
 * schedule on the timer with its jitter, and the checkpoint writes. One copy of
 * the "seen for the first time starts from now" rule serves start-up and
 * reload.
 */
import { nextFire } from '../contract/schedule/index.js';
import type { Lane } from './admission/lane.js';
import { jitterMs } from './policy.js';
import type { RegisteredJob } from './registry.js';
import type { LedgerOp } from './store/types.js';
import type { TimerLoop } from './timer.js';

/** The next nominal fire of a job across its schedules after `now`, or null (disabled, none). */
export function nextFireOf(job: RegisteredJob | undefined, now: number): number | null {
  if (!job || !job.enabled) return null;
  let best: number | null = null;
  for (const s of job.schedules) {
    const n = nextFire(s, job.job.timezone, now);
    if (n !== null && (best === null || n < best)) best = n;
  }
  return best;
}

/** See the module comment. */
export class Schedules {
  /** Last scheduled instant processed per schedule, by `app/job#index`. */
  private readonly processed = new Map<string, number>();
  /** Registry generation: timer items of a replaced registry are ignored. */
  generation = 0;

  constructor(
    private readonly timer: TimerLoop,
    /** Uniform [0, 1) for random jitter. */
    private readonly random: () => number,
  ) {}

  /** The last instant processed of a schedule, if it was seen. */
  last(lane: Lane, index: number): number | undefined {
    return this.processed.get(key(lane, index));
  }

  /** Records that a schedule's instant `at` was processed (in memory; the checkpoint is a write). */
  processedUpTo(lane: Lane, index: number, at: number): void {
    this.processed.set(key(lane, index), at);
  }

  /** The checkpoint write of a schedule's instant. */
  checkpoint(lane: Lane, index: number, at: number): LedgerOp {
    return {
      kind: 'checkpoint',
      ref: { app: lane.job.app, job: lane.job.job.name, scheduleIndex: index },
      at,
    };
  }

  /**
   * Schedules seen for the first time start from `now`: processed up to now, their next fire on
   * the timer; returns their checkpoint writes. Schedules already seen are left alone unless
   * `push` (a reload re-arms every kept schedule from its last instant).
   */
  startNew(lane: Lane, now: number, push: boolean): LedgerOp[] {
    const ops: LedgerOp[] = [];
    for (let index = 0; index < lane.job.schedules.length; index++) {
      let last = this.last(lane, index);
      if (last === undefined) {
        last = now;
        this.processedUpTo(lane, index, now);
        ops.push(this.checkpoint(lane, index, now));
      } else if (!push) continue;
      this.pushNext(lane, index, Math.max(now, last));
    }
    return ops;
  }

  /** Pushes the next fire of a schedule after `after` onto the timer, jittered. */
  pushNext(lane: Lane, index: number, after: number): void {
    const job = lane.job;
    const schedule = job.schedules[index]!;
    const nominal = nextFire(schedule, job.job.timezone, after);
    if (nominal === null) return;
    const { stable_seconds, random_seconds } = job.policy.jitter;
    let at = nominal;
    if (stable_seconds > 0 || random_seconds > 0) {
      at += jitterMs(
        { app: job.app, job: job.job.name, scheduleIndex: index },
        stable_seconds,
        random_seconds,
        this.random(),
        nominal,
        nextFire(schedule, job.job.timezone, nominal),
      );
    }
    this.timer.push({
      at,
      kind: 'fire',
      key: lane.key,
      index,
      nominal,
      generation: this.generation,
    });
  }
}

const key = (lane: Lane, index: number): string => `${lane.key}#${index}`;
