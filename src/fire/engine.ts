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
  signal?: AbortSignal;
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

function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

/** Runs one fire to its terminal outcome. Never throws for expected failures. */
export async function runFire(input: FireInput, deps: FireDeps): Promise<FireResult> {
  const { clock, guard, signal } = deps;
  const started = clock.now();
  const policy = input.job.policy;
  const emit = (e: FireEvent): void => deps.onEvent?.(e);
  let lastStatus: number | null = null;
  let lastExcerpt: string | undefined;
  let lastToken: number | undefined;
  let sent = 0;
  const finish = (outcome: FireOutcome, extra: Partial<FireResult> = {}): FireResult => ({
    outcome,
    attempts: sent,
    lastStatus,
    durationMs: clock.now() - started,
    ...(lastExcerpt !== undefined ? { bodyExcerpt: lastExcerpt } : {}),
    ...(lastToken !== undefined ? { fencingToken: lastToken } : {}),
    ...extra,
  });
  const record = async (ending: EndingAttempt): Promise<string | undefined> => {
    if (!deps.record) return undefined;
    try {
      await deps.record(ending);
      return undefined;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  };
  const stopped = (attempt: number): FireResult => {
    emit({ event: 'stopped', terminal: true, attempt, err: 'fire stopped before completion' });
    return finish('stopped', { message: 'fire stopped before completion' });
  };

  for (let attempt = 1; attempt <= policy.retries.max_attempts; attempt++) {
    if (signal?.aborted) return stopped(attempt);
    const hold = guard ? await guard.acquire(attempt) : undefined;
    if (hold && !hold.ok) {
      const event = hold.outcome === 'duplicate' ? 'duplicate-suppressed' : hold.outcome;
      emit({ event, terminal: true, attempt, err: hold.message });
      return finish(hold.outcome, { message: hold.message });
    }
    lastToken = hold?.fencingToken ?? lastToken;
    const missing =
      input.job.command !== undefined
        ? deps.command === undefined && 'command jobs need a command runner, and none was given'
        : deps.transport === undefined && 'HTTP jobs need a transport, and none was given';
    if (missing) {
      await hold?.release();
      const message = missing;
      emit({ event: 'internal-error', terminal: true, attempt, err: message });
      return finish('internal-error', { message });
    }
    emit({
      event: 'attempt',
      terminal: false,
      attempt,
      ...(hold?.fencingToken !== undefined ? { fencingToken: hold.fencingToken } : {}),
    });
    const attemptStart = clock.now();
    sent = attempt;
    const call: AttemptCall = {
      attempt,
      fencingToken: hold?.fencingToken,
      signal: anySignal([signal, hold?.lost]),
      stopped: () => signal?.aborted === true,
    };
    let end: AttemptEnd;
    try {
      end =
        deps.command !== undefined && input.job.command !== undefined
          ? await runCommand(input, deps.command, call)
          : await sendHttp(input, { transport: deps.transport as Transport, clock }, call);
    } catch (err) {
      await hold?.release();
      throw err;
    }
    const durationMs = clock.now() - attemptStart;
    if (end.status !== undefined) lastStatus = end.status;
    if (end.bodyExcerpt !== undefined) lastExcerpt = end.bodyExcerpt;
    if (end.cls === 'aborted') {
      await hold?.release();
      return stopped(attempt);
    }
    const { cls, status, bodyExcerpt: excerpt, err } = end;
    const base = {
      attempt,
      durationMs,
      ...(status !== undefined ? { status } : {}),
      ...(err ? { err } : {}),
      ...(end.traceparent !== undefined ? { traceparent: end.traceparent } : {}),
      ...(excerpt !== undefined ? { responseBody: excerpt } : {}),
    };
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
    const recordError =
      ending === undefined
        ? undefined
        : await record({ outcome: ending, attempt, ...(status !== undefined ? { status } : {}) });
    await hold?.release();
    if (recordError !== undefined) {
      emit({ event: 'record-failed', terminal: false, attempt, err: recordError });
    }
    if (cls === 'success' && end.duplicate) {
      // the app had this run key already (its runOnce answered with the stored result): the key
      // is done — recorded as such above, so it is not sent again — and nothing ran twice
      const message = `the app answered ${RUN_ONCE_HEADER}: duplicate (the run key had already succeeded there)`;
      emit({ event: 'duplicate-suppressed', terminal: true, ...base, err: message });
      return finish('duplicate', { message });
    }
    if (cls === 'success') {
      emit({ event: 'success', terminal: true, ...base });
      return finish('success');
    }
    if (!isRetryable(cls)) {
      emit({
        event: 'app-rejected',
        terminal: true,
        ...base,
        ...(excerpt !== undefined ? { bodyExcerpt: excerpt } : {}),
      });
      return finish('app-rejected');
    }
    const sleep = last ? undefined : backoffSeconds(attempt, policy.retries);
    emit({
      event: cls === 'server-error' ? 'server-error' : 'attempt-failed',
      terminal: false,
      ...base,
      ...(excerpt !== undefined ? { bodyExcerpt: excerpt } : {}),
      ...(sleep !== undefined ? { backoffSeconds: sleep } : {}),
    });
    if (last) break;
    if (!(await clock.sleep((sleep as number) * 1000, signal))) return stopped(attempt + 1);
  }
  emit({
    event: 'retries-exhausted',
    terminal: true,
    attempt: sent,
    ...(lastStatus !== null ? { status: lastStatus } : {}),
  });
  return finish('retries-exhausted');
}
