/**
 * Effective values of the extension fields (SPEC §8). The normalized manifest keeps them only
 * when the input set them (so canonical forms and change hashes of plain v1 manifests stay
 * v1); consumers read them through these helpers, which apply the defaults.
 */
import { EXTENSION_DEFAULTS, type CatchupMode } from './defaults.js';
import type { Job, JobPolicy } from './types.js';

/** Catch-up settings with every default applied. */
export interface EffectiveCatchup {
  /** `none`, `latest` (default) or `all`. */
  mode: CatchupMode;
  /** Window in seconds; `null` (default) means unlimited. */
  window_seconds: number | null;
  /** Most missed fires run in mode `all` (default 100). */
  max_runs: number;
}

/** Jitter settings with every default applied. */
export interface EffectiveJitter {
  /** Stable per-job offset bound in seconds (default 0). */
  stable_seconds: number;
  /** Fresh random delay bound in seconds (default 0). */
  random_seconds: number;
}

/** A job policy with every v1 and extension field present. */
export interface EffectivePolicy extends Omit<
  JobPolicy,
  'max_concurrent' | 'queue_max' | 'catchup' | 'jitter'
> {
  /** Most active runs (default 1). `Allow` never limits, whatever this says. */
  max_concurrent: number;
  /** Queue bound for `Enqueue` (default 100); unused by other policies. */
  queue_max: number;
  /** Catch-up settings. */
  catchup: EffectiveCatchup;
  /** Jitter settings. */
  jitter: EffectiveJitter;
}

/** The job's policy with the extension defaults of §8 filled in. Does not modify `job`. */
export function effectivePolicy(job: Job): EffectivePolicy {
  const { policy } = job;
  return {
    concurrency: policy.concurrency,
    concurrency_scope: policy.concurrency_scope,
    timeout_seconds: policy.timeout_seconds,
    retries: { ...policy.retries },
    max_concurrent: policy.max_concurrent ?? EXTENSION_DEFAULTS.max_concurrent,
    queue_max: policy.queue_max ?? EXTENSION_DEFAULTS.queue_max,
    catchup: {
      mode: policy.catchup?.mode ?? EXTENSION_DEFAULTS.catchup_mode,
      window_seconds: policy.catchup?.window_seconds ?? EXTENSION_DEFAULTS.catchup_window_seconds,
      max_runs: policy.catchup?.max_runs ?? EXTENSION_DEFAULTS.catchup_max_runs,
    },
    jitter: {
      stable_seconds: policy.jitter?.stable_seconds ?? EXTENSION_DEFAULTS.jitter_stable_seconds,
      random_seconds: policy.jitter?.random_seconds ?? EXTENSION_DEFAULTS.jitter_random_seconds,
    },
  };
}

/** Whether the job fires (`enabled`, default true). */
export function isJobEnabled(job: Job): boolean {
  return job.enabled ?? EXTENSION_DEFAULTS.enabled;
}
