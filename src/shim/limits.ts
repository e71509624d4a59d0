/**
 * Hard limits of one `cronix trigger` process: it never outlives its
 * worst-case fire, and SIGTERM always ends it with exit 75.
 *
 * A stop (SIGTERM, SIGINT, or the deadline) aborts the fire's signal: the
 * engine closes the in-flight connection, releases the lock and the fire ends
 * `stopped` (exit 75). If the fire has not ended {@link STOP_GRACE_MS} later
 * (a phase that does not watch the signal, such as a Redis connect or a
 * Replace poll), the process is ended here with exit 75 and, unless a
 * terminal line was already written, one `stopped` line. Nothing on the
 * shim's path runs unbounded synchronous code (the schedule math is bounded by
 * the `--fire-time` range, directories are made without Node's hanging
 * recursive mkdir, secret and spec files must be regular files), so the event
 * loop always turns and these timers always fire.
 */
import { worstCaseFireSeconds } from '../contract/run.js';
import type { JobPolicy } from '../contract/manifest/types.js';

/** Budget from process start until the job's own deadline is known (spec, secrets, state dir). */
export const START_BUDGET_MS = 30_000;
/** How long a stopped fire may take to wind down before the process is ended. */
export const STOP_GRACE_MS = 5_000;
/** Lock work allowed per attempt: acquire, duplicate check, record, release (2 s deadline each on Redis). */
export const LOCK_ALLOWANCE_SECONDS = 10;
/** Fixed allowance per fire: Redis connect, last-success read, metrics textfile. */
export const FIRE_MARGIN_SECONDS = 10;

/**
 * The longest one fire of a job may take before the shim stops it: every
 * attempt timing out plus every backoff sleep (`worstCaseFireSeconds`; with
 * `stopSeconds`, a command job's graceful stop, per attempt), the Replace wait
 * (`max(timeout_seconds/2, 5)` s, plus `stopSeconds`),
 * {@link LOCK_ALLOWANCE_SECONDS} per attempt and {@link FIRE_MARGIN_SECONDS}; in ms.
 */
export function fireBudgetMs(policy: JobPolicy, stopSeconds = 0): number {
  const replace =
    policy.concurrency === 'Replace' ? Math.max(policy.timeout_seconds / 2, 5) + stopSeconds : 0;
  const seconds =
    worstCaseFireSeconds(policy, stopSeconds) +
    replace +
    policy.retries.max_attempts * LOCK_ALLOWANCE_SECONDS +
    FIRE_MARGIN_SECONDS;
  return seconds * 1000;
}

/**
 * Longest the shim spends on its own notifications after a fire (SPEC §12); a job with
 * `notify` gets this (plus a second) on top of its fire budget, so the process deadline never
 * cuts a notification short and turns the exit code into 75.
 */
export const SHIM_NOTIFY_BUDGET_MS = 5000;

/** Longest single `setTimeout` (a larger delay fires at once, with a warning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Why a fire was stopped. */
export type StopReason = 'signal' | 'deadline';

/** Injected process effects (the real process by default; in-process tests pass their own). */
export interface LimitsHost {
  /** Ends the process at once with `code`. */
  exit(code: number): void;
  /** Called once a stop was not honoured within the grace, just before `exit(75)`. */
  onForcedStop?(reason: StopReason, graceMs: number): void;
}

/** The stop signal and the deadline of one fire. */
export class FireLimits {
  readonly #controller = new AbortController();
  #deadline: NodeJS.Timeout | undefined;
  #grace: NodeJS.Timeout | undefined;
  #reason: StopReason | undefined;
  #disposed = false;
  #graceMs = STOP_GRACE_MS;

  constructor(private readonly host: LimitsHost) {}

  /** Aborts when the fire must stop; `reason` says why. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the fire was stopped, once it was. */
  get reason(): StopReason | undefined {
    return this.#reason;
  }

  /** (Re)arms the deadline `ms` from now; at the deadline the fire is stopped. */
  deadlineIn(ms: number): void {
    if (this.#disposed) return;
    clearTimeout(this.#deadline);
    const due = Date.now() + ms;
    const arm = (): void => {
      const left = due - Date.now();
      if (left <= 0) return this.stop('deadline');
      this.#deadline = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      this.#deadline.unref();
    };
    arm();
  }

  /**
   * How long a stopped fire may take to wind down: {@link STOP_GRACE_MS}, plus what a command
   * job needs to stop its process group (its `graceful_stop_seconds`).
   */
  extendStopGrace(ms: number): void {
    this.#graceMs = STOP_GRACE_MS + Math.max(0, ms);
  }

  /** Stops the fire; ends the process if it has not ended within the stop grace. */
  stop(reason: StopReason): void {
    if (this.#disposed || this.#reason !== undefined) return;
    this.#reason = reason;
    clearTimeout(this.#deadline);
    this.#controller.abort(reason);
    this.#grace = setTimeout(() => {
      this.host.onForcedStop?.(reason, this.#graceMs);
      this.host.exit(75);
    }, this.#graceMs);
    this.#grace.unref();
  }

  /** Disarms every timer (the fire ended). */
  dispose(): void {
    this.#disposed = true;
    clearTimeout(this.#deadline);
    clearTimeout(this.#grace);
  }
}
