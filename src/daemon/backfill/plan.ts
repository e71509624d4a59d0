/**
 * A backfill's plan (SPEC §16): the job's schedule instants in `[from, to)` — every schedule of
 * the job, in time order (then schedule index) — with their run keys (§5), less those whose key
 * has succeeded (§9.4) and, with `--only-missing`, those with any ended run that ran. The same
 * function answers a dry run and makes the plan a backfill stores, so both are one list.
 */
import { runKey } from '../../contract/run.js';
import { nextFire } from '../../contract/schedule/index.js';
import type { RegisteredJob } from '../registry.js';
import type { BackfillItemSpec, BackfillSpec, BackfillStore } from '../store/backfill-types.js';

/** Most instants one backfill may hold. */
export const MAX_BACKFILL_INSTANTS = 100_000;

/** A range that is too large, or empty of instants: a value, said to the operator. */
export type PlanResult =
  | {
      ok: true;
      items: BackfillItemSpec[];
      instants: number;
      leftOut: { succeeded: number; ran: number };
    }
  | { ok: false; message: string };

/** The schedule instants of a job in `[from, to)`, by time then schedule index; null past `max`. */
export function instantsOf(
  job: RegisteredJob,
  from: number,
  to: number,
  max = MAX_BACKFILL_INSTANTS,
): { at: number; index: number }[] | null {
  const out: { at: number; index: number }[] = [];
  job.schedules.forEach((schedule, index) => {
    for (let t = nextFire(schedule, job.job.timezone, from - 1); t !== null && t < to;) {
      if (out.length > max) return;
      out.push({ at: t, index });
      t = nextFire(schedule, job.job.timezone, t);
    }
  });
  if (out.length > max) return null;
  return out.sort((a, b) => a.at - b.at || a.index - b.index);
}

/** The plan of a backfill of `job` (see the module comment). */
export async function planBackfill(
  store: BackfillStore,
  job: RegisteredJob,
  spec: Pick<BackfillSpec, 'from' | 'to' | 'onlyMissing'>,
): Promise<PlanResult> {
  const instants = instantsOf(job, spec.from, spec.to);
  if (instants === null)
    return {
      ok: false,
      message: `the range holds more than ${MAX_BACKFILL_INSTANTS} instants of ${job.key}; backfill a shorter range at a time`,
    };
  const keyed = instants.map((i) => ({
    ...i,
    runKey: runKey(job.app, job.job.name, i.at, job.hashes[i.index] as string),
  }));
  const succeeded = new Set<string>();
  for (let k = 0; k < keyed.length; k += 1000)
    for (const key of await store.succeededKeys(keyed.slice(k, k + 1000).map((i) => i.runKey)))
      succeeded.add(key);
  const ran = spec.onlyMissing
    ? await store.ranInstants(job.app, job.job.name, spec.from, spec.to)
    : new Set<number>();
  let leftSucceeded = 0;
  let leftRan = 0;
  const items: BackfillItemSpec[] = [];
  for (const i of keyed) {
    if (succeeded.has(i.runKey)) leftSucceeded += 1;
    else if (ran.has(i.at)) leftRan += 1;
    else
      items.push({
        position: items.length,
        scheduledTime: i.at,
        scheduleIndex: i.index,
        runKey: i.runKey,
      });
  }
  return {
    ok: true,
    items,
    instants: instants.length,
    leftOut: { succeeded: leftSucceeded, ran: leftRan },
  };
}
