/**
 * The intended fire time of a fire and the schedule it belongs to (SPEC §5.4).
 * Every schedule of a job shares one spec file: the schedule that fired is the
 * one whose instant this is (lowest index when several coincide), and the
 * spec's `schedule_index` is the fallback for a `--fire-time` that no schedule
 * hits.
 */
import { fireServedAt, previousFire } from '../contract/schedule/index.js';
import type { JobSpec } from './spec.js';

/** The fire time (epoch ms) and the index of the schedule that fired. */
export interface FireChoice {
  fireTimeMs: number;
  scheduleIndex: number;
}

/**
 * With `flagMs` (`--fire-time`, already range-checked): that instant, and the
 * schedule that fires at it. Without: the latest instant of any schedule at or
 * before `nowMs + 1 s`, a fire less than 1 s before `nowMs` winning over one in the
 * second after it (`fireServedAt`). Null when no schedule has fired yet.
 */
export function chooseFireTime(
  spec: JobSpec,
  flagMs: number | undefined,
  nowMs: number,
): FireChoice | null {
  const { job } = spec;
  if (flagMs !== undefined) {
    const k = spec.schedules.findIndex((sc) => previousFire(sc, job.timezone, flagMs) === flagMs);
    return {
      fireTimeMs: flagMs,
      scheduleIndex: k >= 0 && spec.schedules.length > 1 ? k : spec.scheduleIndex,
    };
  }
  let best: FireChoice | null = null;
  for (const [k, sc] of spec.schedules.entries()) {
    const t = fireServedAt(sc, job.timezone, nowMs);
    if (t !== null && (best === null || t > best.fireTimeMs))
      best = { fireTimeMs: t, scheduleIndex: k };
  }
  return best;
}
