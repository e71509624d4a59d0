/**
 * The per-fire engine (SPEC §5.6–5.7, §11): turns one fire into 1..max_attempts
 * attempts — signed HTTP requests, or runs of a command — and a terminal
 * outcome. The only attempt loop in the code base — the trigger shim and the
 * daemon both call `runFire`, injecting the transport, the command runner, the
 * clock and an optional per-attempt guard (the lock).
 */
import { backoffSeconds, isRetryable, RUN_ONCE_HEADER, type FireOutcome } from '../contract/run.js';
import type { AttemptCall, AttemptEnd, FireInput } from './attempt.js';
import { runCommand, type CommandDeps } from './command-attempt.js';
import { sendHttp } from './http-attempt.js';
import type { Clock, Transport } from './types.js';
import { asAbortSignal, type StopSignal } from './stop.js';

export type { FireInput } from './attempt.js';
export type { CommandDeps } from './command-attempt.js';
export { attemptHeaders } from './http-attempt.js';
export { requestTarget } from './url-target.js';

/** Held for one attempt: released before the backoff sleep, re-taken for the next attempt. */
export interface AttemptHold {
  ok: true;
  /** Fencing token of this acquisition (global locks). */
  fencingToken?: number;
  /** Aborts when the hold is lost mid-attempt (lease taken by someone else). */
  lost?: AbortSignal;
  release(): Promise<void>;
}

/** Why an attempt could not start. */
export interface AttemptRefusal {
  ok: false;
  outcome: 'lock-contended' | 'lock-unavailable' | 'duplicate' | 'internal-error' | 'stopped';
  message: string;
}

/** Taken before each attempt: the concurrency lock and the duplicate check under it. */
export interface AttemptGuard {
  acquire(attempt: number): Promise<AttemptHold | AttemptRefusal>;
}

/** One observable step of a fire; `event` uses the SPEC §5.10 log vocabulary. */
export interface FireEvent {
  event:
    | 'attempt'
    | 'success'
    | 'app-rejected'
    | 'server-error'
    | 'attempt-failed'
    | 'retries-exhausted'
    | 'lock-contended'
    | 'lock-unavailable'
    | 'duplicate-suppressed'
    | 'stopped'
    | 'internal-error'
    | 'record-failed';
  /** Whether this is the fire's single terminal event. */
  terminal: boolean;
  attempt?: number;
  status?: number;
  durationMs?: number;
  bodyExcerpt?: string;
  err?: string;
  fencingToken?: number;
  /** Seconds slept before the next attempt. */
  backoffSeconds?: number;
  /** HTTP: the `traceparent` the attempt sent (on the event that ends an attempt). */
  traceparent?: string;
  /** HTTP: the start of the response body of the attempt (any status), when one came. */
  responseBody?: string;
}

/** The outcome of the attempt that ended a fire, as handed to {@link FireDeps.record}. */
export interface EndingAttempt {
  outcome: 'success' | 'app-rejected' | 'retries-exhausted';
  attempt: number;
  /** HTTP status of the attempt, when it got a response. */
  status?: number;
}

/** Injected dependencies. */
export interface FireDeps {
  /** Sends the attempts of an HTTP job; an HTTP job without it ends `internal-error`. */
  transport?: Transport;
  /** Runs the attempts of a command job; a command job without it ends `internal-error`. */
  command?: CommandDeps;
  clock: Clock;
  guard?: AttemptGuard;
  /** Aborts the fire (SIGTERM in the shim; Replace/cancel in the daemon). */
  signal?: StopSignal;
  onEvent?: (event: FireEvent) => void;
  /**
   * Records how the fire ended while the ending attempt's hold (the lock) is
   * still held: called at most once, after the attempt that ends the fire
   * (2xx, an unretryable status, or the last retryable failure) and before
   * `hold.release()`, so whoever takes the lock next sees the outcome — "record
   * before release" (SPEC §9 item 4). Not called for refusals or a stopped
   * fire. A rejection does not change the outcome; it becomes a non-terminal
   * `record-failed` event, emitted before the terminal one.
   */
  record?: (ending: EndingAttempt) => Promise<void> | void;
}

/** Terminal result of a fire. */
export interface FireResult {
  outcome: FireOutcome;
  /** Attempts actually sent. */
  attempts: number;
  lastStatus: number | null;
  durationMs: number;
  bodyExcerpt?: string;
  message?: string;
  fencingToken?: number;
}

/** The fire's signal and the hold's, as one (no array or `AbortSignal.any` for a single one). */
function anySignal(
  signal: StopSignal | undefined,
  lost: AbortSignal | undefined,
): StopSignal | undefined {
  if (lost === undefined) return signal;
  if (signal === undefined) return lost;
  return AbortSignal.any([asAbortSignal(signal), lost]);
}

/** The event that ends an attempt: what it sent and what came back (no spreads: per fire). */
function attemptEvent(
  event: FireEvent['event'],
  terminal: boolean,
  attempt: number,
  durationMs: number,
  end: AttemptEnd,
  withBody: boolean,
): FireEvent {
  const e: FireEvent = { event, terminal, attempt, durationMs };
  if (end.status !== undefined) e.status = end.status;
  if (end.err) e.err = end.err;
  if (end.traceparent !== undefined) e.traceparent = end.traceparent;
  if (end.bodyExcerpt !== undefined) {
    e.responseBody = end.bodyExcerpt;
    if (withBody) e.bodyExcerpt = end.bodyExcerpt;
  }
  return e;
}

/**
 * One fire's running totals and how it ends. A class rather than closures over the loop's
 * variables: thousands of fires at one instant each allocate one object here.
 */
class Fire {
  lastStatus: number | null = null;
  lastExcerpt: string | undefined = undefined;
  lastToken: number | undefined = undefined;
  sent = 0;
  readonly started: number;

  constructor(
    private readonly deps: FireDeps,
    readonly signal: StopSignal | undefined,
  ) {
    this.started = deps.clock.now();
  }

  emit(e: FireEvent): void {
    this.deps.onEvent?.(e);
  }

  finish(outcome: FireOutcome, message?: string): FireResult {
    const r: FireResult = {
      outcome,
      attempts: this.sent,
      lastStatus: this.lastStatus,
      durationMs: this.deps.clock.now() - this.started,
    };
    if (this.lastExcerpt !== undefined) r.bodyExcerpt = this.lastExcerpt;
    if (this.lastToken !== undefined) r.fencingToken = this.lastToken;
    if (message !== undefined) r.message = message;
    return r;
  }

  stopped(attempt: number): FireResult {
    const message = 'fire stopped before completion';
    this.emit({ event: 'stopped', terminal: true, attempt, err: message });
    return this.finish('stopped', message);
  }

  /** Whether the fire itself was stopped (as opposed to a lost hold). */
  readonly isStopped = (): boolean => this.signal?.aborted === true;

  /** Records the ending attempt; the error's message when that failed. */
  async record(ending: EndingAttempt): Promise<string | undefined> {
    try {
      await this.deps.record?.(ending);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }
}

/** Runs one fire to its terminal outcome. Never throws for expected failures. */
export async function runFire(input: FireInput, deps: FireDeps): Promise<FireResult> {
  const { clock, guard, signal } = deps;
  const policy = input.job.policy;
  const fire = new Fire(deps, signal);
  // the transport and clock of every HTTP attempt: one object per fire, not per attempt
  const http = { transport: deps.transport as Transport, clock };

  for (let attempt = 1; attempt <= policy.retries.max_attempts; attempt++) {
    if (signal?.aborted) return fire.stopped(attempt);
    const hold = guard ? await guard.acquire(attempt) : undefined;
    if (hold && !hold.ok) {
      const event = hold.outcome === 'duplicate' ? 'duplicate-suppressed' : hold.outcome;
      fire.emit({ event, terminal: true, attempt, err: hold.message });
      return fire.finish(hold.outcome, hold.message);
    }
    fire.lastToken = hold?.fencingToken ?? fire.lastToken;
    const missing =
      input.job.command !== undefined
        ? deps.command === undefined && 'command jobs need a command runner, and none was given'
        : deps.transport === undefined && 'HTTP jobs need a transport, and none was given';
    if (missing) {
      if (hold) await hold.release();
      fire.emit({ event: 'internal-error', terminal: true, attempt, err: missing });
      return fire.finish('internal-error', missing);
    }
    const started: FireEvent = { event: 'attempt', terminal: false, attempt };
    if (hold?.fencingToken !== undefined) started.fencingToken = hold.fencingToken;
    fire.emit(started);
    const attemptStart = clock.now();
    fire.sent = attempt;
    const call: AttemptCall = {
      attempt,
      fencingToken: hold?.fencingToken,
      signal: anySignal(signal, hold?.lost),
      stopped: fire.isStopped,
    };
    let end: AttemptEnd;
    try {
      end =
        deps.command !== undefined && input.job.command !== undefined
          ? await runCommand(input, deps.command, call)
          : await sendHttp(input, http, call);
    } catch (err) {
      if (hold) await hold.release();
      throw err;
    }
    const durationMs = clock.now() - attemptStart;
    if (end.status !== undefined) fire.lastStatus = end.status;
    if (end.bodyExcerpt !== undefined) fire.lastExcerpt = end.bodyExcerpt;
    if (end.cls === 'aborted') {
      if (hold) await hold.release();
      return fire.stopped(attempt);
    }
    const { cls, status } = end;
    const last = attempt === policy.retries.max_attempts;
    const ending: EndingAttempt['outcome'] | undefined =
      cls === 'success'
        ? 'success'
        : !isRetryable(cls)
          ? 'app-rejected'
          : last
            ? 'retries-exhausted'
            : undefined;
    // record before release (SPEC §9 item 4): the next holder of the lock must see this outcome
    let recordError: string | undefined;
    if (ending !== undefined && deps.record) {
      const e: EndingAttempt = { outcome: ending, attempt };
      if (status !== undefined) e.status = status;
      recordError = await fire.record(e);
    }
    if (hold) await hold.release();
    if (recordError !== undefined) {
      fire.emit({ event: 'record-failed', terminal: false, attempt, err: recordError });
    }
    if (cls === 'success' && end.duplicate) {
      // the app had this run key already (its runOnce answered with the stored result): the key
      // is done — recorded as such above, so it is not sent again — and nothing ran twice
      const message = `the app answered ${RUN_ONCE_HEADER}: duplicate (the run key had already succeeded there)`;
      const e = attemptEvent('duplicate-suppressed', true, attempt, durationMs, end, false);
      e.err = message;
      fire.emit(e);
      return fire.finish('duplicate', message);
    }
    if (cls === 'success') {
      fire.emit(attemptEvent('success', true, attempt, durationMs, end, false));
      return fire.finish('success');
    }
    if (!isRetryable(cls)) {
      fire.emit(attemptEvent('app-rejected', true, attempt, durationMs, end, true));
      return fire.finish('app-rejected');
    }
    const sleep = last ? undefined : backoffSeconds(attempt, policy.retries);
    const failed = attemptEvent(
      cls === 'server-error' ? 'server-error' : 'attempt-failed',
      false,
      attempt,
      durationMs,
      end,
      true,
    );
    if (sleep !== undefined) failed.backoffSeconds = sleep;
    fire.emit(failed);
    if (last) break;
    if (!(await clock.sleep((sleep as number) * 1000, signal))) return fire.stopped(attempt + 1);
  }
  const exhausted: FireEvent = { event: 'retries-exhausted', terminal: true, attempt: fire.sent };
  if (fire.lastStatus !== null) exhausted.status = fire.lastStatus;
  fire.emit(exhausted);
  return fire.finish('retries-exhausted');
}
