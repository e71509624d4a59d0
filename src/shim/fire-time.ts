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

/** Latest a Job-name fire time may lie in the future (clock skew between node and controller). */
const JOB_NAME_SKEW_MS = 1000;

/**
 * The fire time a Kubernetes CronJob controller encoded in its Job's name, or null. The
 * controller names each Job `<cronjob>-<scheduled time in minutes since the epoch>` (since the
 * v2 controller, Kubernetes 1.21) and labels the Job's pods `batch.kubernetes.io/job-name`, which
 * the downward API hands to the shim as `$CRONIX_K8S_JOB_NAME`. So a pod started late — node
 * pressure, image pull, `startingDeadlineSeconds` — still gets the run key of *its* fire, not of
 * the newest one. Taken only when that minute is one of the job's fire instants and not in the
 * future: a Job created by hand (`kubectl create job --from=cronjob/…`) falls back to the latest
 * fire.
 */
export function fireTimeFromJobName(spec: JobSpec, jobName: string, nowMs: number): number | null {
  const m = /-(\d{1,12})$/.exec(jobName);
  if (!m) return null;
  const ms = Number(m[1]) * 60_000;
  if (!Number.isSafeInteger(ms) || ms > nowMs + JOB_NAME_SKEW_MS) return null;
  const fires = spec.schedules.some((sc) => previousFire(sc, spec.job.timezone, ms) === ms);
  return fires ? ms : null;
}
