/**
 * The jobs the daemon runs, built from normalized manifests: parsed
 * schedules, change hashes, effective policies and resolved secrets.
 */
import { jobChangeHash } from '../contract/manifest/change-hash.js';
import {
  effectiveNotify,
  effectivePolicy,
  isJobEnabled,
  type EffectivePolicy,
} from '../contract/manifest/effective.js';
import type { Job, Manifest } from '../contract/manifest/types.js';
import { parseSchedule, type Schedule } from '../contract/schedule/index.js';
import { compileBlackout, type Blackout } from '../contract/calendar.js';
import type { NotifyTarget } from './notify-plan.js';
import type { CatchupPolicy, OverlapPolicy } from './policy.js';

/** One job as the scheduler sees it. */
export interface RegisteredJob {
  /** `app/job`. */
  key: string;
  app: string;
  job: Job;
  policy: EffectivePolicy;
  overlap: OverlapPolicy;
  catchup: CatchupPolicy;
  schedules: Schedule[];
  /** Change hash per schedule index (computed on first read). */
  hashes: string[];
  enabled: boolean;
  /** Notify entries with their notifier's type (SPEC §12); empty when the job has none. */
  notify: NotifyTarget[];
  /** `policy.blackout` compiled for the job's zone (SPEC §16 "Calendars"); null without windows. */
  blackout: Blackout | null;
  /**
   * `host`: a watched job (SPEC §15, `serve --watch`), fired by host schedulers and expected by
   * the daemon, never fired by it; absent or `daemon`: the daemon fires it.
   */
  firedBy?: 'daemon' | 'host';
}

/** A job's blackout windows, compiled; the manifests are validated and their dates loaded first. */
function blackoutOf(m: Manifest, job: Job): Blackout | null {
  if (job.policy.blackout === undefined) return null;
  try {
    return compileBlackout(job.policy.blackout, job.timezone);
  } catch (err) {
    throw new Error(`${m.app}/${job.name}: policy.blackout: ${(err as Error).message}`);
  }
}

/**
 * A registered job. Its change hashes are computed on first read (a fire's run key, planned
 * ahead of its instant), so start-up with 100,000 jobs does not pay 100,000 sha256 of canonical
 * JSON. A class and not an object literal with a getter: a literal with a per-object accessor
 * is a dictionary-mode object in V8 (about 800 bytes more per job, measured in a heap snapshot).
 */
class Registered implements RegisteredJob {
  #hashes: string[] | undefined;
  constructor(
    public key: string,
    public app: string,
    public job: Job,
    public policy: EffectivePolicy,
    public overlap: OverlapPolicy,
    public catchup: CatchupPolicy,
    public schedules: Schedule[],
    public enabled: boolean,
    public notify: NotifyTarget[],
    public blackout: Blackout | null,
    public firedBy: 'daemon' | 'host' = 'daemon',
  ) {}

  get hashes(): string[] {
    return (this.#hashes ??= this.job.schedules.map((_, i) =>
      jobChangeHash(this.app, this.job, i),
    ));
  }
}

/** `app/job` key. */
export const jobKey = (app: string, job: string): string => `${app}/${job}`;

/** A job's effective policy and the views the scheduler reads, shared by the jobs that have it. */
interface Policies {
  policy: EffectivePolicy;
  overlap: OverlapPolicy;
  catchup: CatchupPolicy;
}

/**
 * Every field of an effective policy, as a string: jobs whose keys are equal have equal
 * policies (test/daemon/registry.test.ts changes each field in turn and checks the key does).
 */
export function policyKey(p: EffectivePolicy): string {
  const { retries: r, catchup: c, jitter: j } = p;
  return `${p.concurrency}|${p.concurrency_scope}|${p.timeout_seconds}|${r.max_attempts}|${r.min_seconds}|${r.max_seconds}|${p.max_concurrent}|${p.queue_max}|${c.mode}|${c.window_seconds}|${c.max_runs}|${j.stable_seconds}|${j.random_seconds}|${p.watch.grace_seconds}`;
}

/** Whether two effective policies are equal field by field (the same fields as {@link policyKey}). */
export function samePolicy(a: EffectivePolicy, b: EffectivePolicy): boolean {
  return (
    a.concurrency === b.concurrency &&
    a.concurrency_scope === b.concurrency_scope &&
    a.timeout_seconds === b.timeout_seconds &&
    a.retries.max_attempts === b.retries.max_attempts &&
    a.retries.min_seconds === b.retries.min_seconds &&
    a.retries.max_seconds === b.retries.max_seconds &&
    a.max_concurrent === b.max_concurrent &&
    a.queue_max === b.queue_max &&
    a.catchup.mode === b.catchup.mode &&
    a.catchup.window_seconds === b.catchup.window_seconds &&
    a.catchup.max_runs === b.catchup.max_runs &&
    a.jitter.stable_seconds === b.jitter.stable_seconds &&
    a.jitter.random_seconds === b.jitter.random_seconds &&
    a.watch.grace_seconds === b.watch.grace_seconds
  );
}

/** A policy with the overlap and catch-up views the scheduler reads. */
function policyViews(policy: EffectivePolicy): Policies {
  return {
    policy,
    overlap: {
      concurrency: policy.concurrency,
      maxConcurrent: policy.max_concurrent,
      queueMax: policy.queue_max,
    },
    catchup: {
      mode: policy.catchup.mode,
      windowSeconds: policy.catchup.window_seconds,
      maxRuns: policy.catchup.max_runs,
    },
  };
}

const NO_NOTIFY: NotifyTarget[] = [];

/**
 * Builds the registry; a later manifest with the same app replaces an earlier one's jobs.
 *
 * Jobs with the same policy share its objects, and jobs with the same single schedule share its
 * list: they are read, never written, and 100,000 jobs held some 700,000 small objects of
 * their own, which start-up paid for in allocation and in young-generation copying.
 */
export function buildRegistry(
  manifests: readonly Manifest[],
  firedBy: 'daemon' | 'host' = 'daemon',
): Map<string, RegisteredJob> {
  const jobs = new Map<string, RegisteredJob>();
  const policies = new Map<string, Policies>();
  let previous: Policies | undefined;
  const lists = new Map<string, Schedule[]>();
  // neighbours mostly share a policy: compared field by field before a key is built and hashed
  const share = (policy: EffectivePolicy): Policies => {
    if (previous !== undefined && samePolicy(previous.policy, policy)) return previous;
    const key = policyKey(policy);
    let found = policies.get(key);
    if (found === undefined) policies.set(key, (found = policyViews(policy)));
    return (previous = found);
  };
  const parse = (m: Manifest, job: Job, s: string): Schedule => {
    const r = parseSchedule(s);
    if (!r.ok) throw new Error(`${m.app}/${job.name}: ${r.error}`); // manifests are validated first
    return r.schedule;
  };
  for (const m of manifests) {
    for (const job of m.jobs) {
      const shared = share(effectivePolicy(job));
      let schedules: Schedule[];
      if (job.schedules.length === 1) {
        const expression = job.schedules[0] as string;
        let list = lists.get(expression);
        if (list === undefined) lists.set(expression, (list = [parse(m, job, expression)]));
        schedules = list;
      } else schedules = job.schedules.map((s) => parse(m, job, s));
      const key = jobKey(m.app, job.name);
      jobs.set(
        key,
        new Registered(
          key,
          m.app,
          job,
          shared.policy,
          shared.overlap,
          shared.catchup,
          schedules,
          isJobEnabled(job),
          job.notify === undefined || job.notify.length === 0
            ? NO_NOTIFY
            : effectiveNotify(job).flatMap((n) => {
                const notifier = m.notifiers?.[n.to];
                return notifier
                  ? [
                      {
                        notifier: n.to,
                        type: notifier.type,
                        on: n.on,
                        repeatMs: n.repeat_every_seconds * 1000,
                        slowAfterSeconds: n.slow_after_seconds,
                      },
                    ]
                  : [];
              }),
          blackoutOf(m, job),
          firedBy,
        ),
      );
    }
  }
  return jobs;
}
