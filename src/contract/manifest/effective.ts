/**
 * Effective values of the extension fields (SPEC §8). The normalized manifest keeps them only
 * when the input set them (so canonical forms and change hashes of plain v1 manifests stay
 * v1); consumers read them through these helpers, which apply the defaults.
 */
import {
  COMMAND_DEFAULTS,
  EXTENSION_DEFAULTS,
  NOTIFY_DEFAULTS,
  SERVICE_DEFAULTS,
  type CatchupMode,
  type NotifyEvent,
} from './defaults.js';
import type { Job, JobCommand, JobPolicy, NotifyEntry, Service } from './types.js';

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

/** Watch settings with every default applied (SPEC §15). */
export interface EffectiveWatch {
  /** Seconds after an expected fire before it is recorded missed (default 120). */
  grace_seconds: number;
}

/** A job policy with every v1 and extension field present. */
export interface EffectivePolicy extends Omit<
  JobPolicy,
  'max_concurrent' | 'queue_max' | 'catchup' | 'jitter' | 'watch'
> {
  /** Most active runs (default 1). `Allow` never limits, whatever this says. */
  max_concurrent: number;
  /** Queue bound for `Enqueue` (default 100); unused by other policies. */
  queue_max: number;
  /** Catch-up settings. */
  catchup: EffectiveCatchup;
  /** Jitter settings. */
  jitter: EffectiveJitter;
  /** Watch settings (host mode, SPEC §15). */
  watch: EffectiveWatch;
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
    watch: {
      grace_seconds: policy.watch?.grace_seconds ?? EXTENSION_DEFAULTS.watch_grace_seconds,
    },
  };
}

/** Whether the job fires (`enabled`, default true). */
export function isJobEnabled(job: Job): boolean {
  return job.enabled ?? EXTENSION_DEFAULTS.enabled;
}

/** A command with every default of SPEC §11 applied. */
export interface EffectiveCommand {
  argv: string[];
  env: Record<string, string>;
  env_from_secrets: Record<string, string>;
  /** `null`: the HOME of the cronix process, else `/` (decided where the command runs). */
  cwd: string | null;
  graceful_stop_seconds: number;
  max_output_bytes: number;
  success_exit_codes: number[];
  reject_exit_codes: number[];
}

/** The command with the defaults of SPEC §11 filled in. Does not modify `command`. */
export function effectiveCommand(command: JobCommand): EffectiveCommand {
  return {
    argv: [...command.argv],
    env: { ...command.env },
    env_from_secrets: { ...command.env_from_secrets },
    cwd: command.cwd ?? null,
    graceful_stop_seconds: command.graceful_stop_seconds ?? COMMAND_DEFAULTS.graceful_stop_seconds,
    max_output_bytes: command.max_output_bytes ?? COMMAND_DEFAULTS.max_output_bytes,
    success_exit_codes: [...(command.success_exit_codes ?? COMMAND_DEFAULTS.success_exit_codes)],
    reject_exit_codes: [...(command.reject_exit_codes ?? COMMAND_DEFAULTS.reject_exit_codes)],
  };
}

/**
 * Seconds one attempt may run past its timeout while it is being stopped: a command job's
 * `graceful_stop_seconds` (SIGTERM to its process group, SIGKILL after that); 0 for an HTTP job,
 * whose connection is simply closed.
 */
export function attemptStopSeconds(job: Job): number {
  return job.command === undefined ? 0 : effectiveCommand(job.command).graceful_stop_seconds;
}

/** A notify entry with every default applied (SPEC §12). */
export interface EffectiveNotify {
  to: string;
  on: readonly NotifyEvent[];
  slow_after_seconds: number;
  repeat_every_seconds: number;
}

/** The job's (or service's) notify entries with their defaults (empty when it has none). */
export function effectiveNotify(job: { notify?: NotifyEntry[] }): EffectiveNotify[] {
  return (job.notify ?? []).map((n) => ({
    to: n.to,
    on: n.on ?? NOTIFY_DEFAULTS.on,
    slow_after_seconds: n.slow_after_seconds ?? NOTIFY_DEFAULTS.slow_after_seconds,
    repeat_every_seconds: n.repeat_every_seconds ?? NOTIFY_DEFAULTS.repeat_every_seconds,
  }));
}

/** A service with every default of SPEC §17 applied. */
export interface EffectiveService {
  argv: string[];
  env: Record<string, string>;
  env_from_secrets: Record<string, string>;
  /** `null`: the HOME of the cronix process, else `/` (decided where the service runs). */
  cwd: string | null;
  instances: number;
  restart: {
    min_seconds: number;
    max_seconds: number;
    reset_after_seconds: number;
    crash_loop_exits: number;
    crash_loop_window_seconds: number;
  };
  graceful_stop_seconds: number;
  max_output_bytes: number;
  /** Null: an instance is ready once its process started. */
  ready: { http_get: string | null; tcp: string | null; timeout_seconds: number } | null;
  /** Events other than `failed` and `recovered` are dropped (a service has no others). */
  notify: EffectiveNotify[];
}

/** The service with the defaults of SPEC §17 filled in. Does not modify `service`. */
export function effectiveService(service: Service): EffectiveService {
  const r = service.restart ?? {};
  const d = SERVICE_DEFAULTS;
  return {
    argv: [...service.argv],
    env: { ...service.env },
    env_from_secrets: { ...service.env_from_secrets },
    cwd: service.cwd ?? null,
    instances: service.instances ?? d.instances,
    restart: {
      min_seconds: r.min_seconds ?? d.min_seconds,
      max_seconds: r.max_seconds ?? d.max_seconds,
      reset_after_seconds: r.reset_after_seconds ?? d.reset_after_seconds,
      crash_loop_exits: r.crash_loop_exits ?? d.crash_loop_exits,
      crash_loop_window_seconds: r.crash_loop_window_seconds ?? d.crash_loop_window_seconds,
    },
    graceful_stop_seconds: service.graceful_stop_seconds ?? d.graceful_stop_seconds,
    max_output_bytes: service.max_output_bytes ?? d.max_output_bytes,
    ready:
      service.ready === undefined
        ? null
        : {
            http_get: service.ready.http_get ?? null,
            tcp: service.ready.tcp ?? null,
            timeout_seconds: service.ready.timeout_seconds ?? d.ready_timeout_seconds,
          },
    notify: effectiveNotify(service).map((n) => ({
      ...n,
      on: n.on.filter((e) => e === 'failed' || e === 'recovered'),
    })),
  };
}
