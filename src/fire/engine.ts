/**
 * The per-fire engine (SPEC §5.6–5.7): turns one fire into 1..max_attempts
 * signed HTTP attempts and a terminal outcome. The only attempt loop in the
 * code base — the trigger shim and the daemon both call `runFire`, injecting
 * the transport, the clock and an optional per-attempt guard (the lock).
 */
import type { Job } from '../contract/manifest/types.js';
import {
  MAX_RESPONSE_BODY_BYTES,
  TRIGGER_HEADERS,
  backoffSeconds,
  classifyStatus,
  isRetryable,
  type AttemptClass,
  type FireOutcome,
} from '../contract/run.js';
import { sign } from '../contract/signature.js';
import { traceparent } from './ids.js';
import type { Clock, Transport, TransportRequest, TransportResult } from './types.js';

/** What to fire. */
export interface FireInput {
  app: string;
  /** The job, normalized (canonical form). */
  job: Job;
  /** UUIDv7, constant across the attempts of this fire. */
  runId: string;
  runKey: string;
  /** Intended fire time, epoch ms. */
  fireTimeMs: number;
  /** When the firing process started (shim) or dispatched (daemon), epoch ms. */
  actualTimeMs: number;
  /** Resolved secret values; the first signs. Empty = unsigned (daemon tests only). */
  secrets: readonly string[];
  /** Last successful fire of this job, epoch ms, when known. */
  previousSuccessMs: number | null;
}

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
  outcome: 'lock-contended' | 'lock-unavailable' | 'duplicate' | 'internal-error';
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
    | 'internal-error';
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
}

/** Injected dependencies. */
export interface FireDeps {
  transport: Transport;
  clock: Clock;
  guard?: AttemptGuard;
  /** Aborts the fire (SIGTERM in the shim; Replace/cancel in the daemon). */
  signal?: AbortSignal;
  onEvent?: (event: FireEvent) => void;
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

const INJECTED = new Set(Object.values(TRIGGER_HEADERS).map((h) => h.toLowerCase()));

/** The request target (`path?query`) exactly as the transport sends it. */
export function requestTarget(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/** Headers of one attempt: static headers first, then the injected ones, which win. */
export function attemptHeaders(
  input: FireInput,
  attempt: number,
  sentAtMs: number,
  fencingToken: number | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.job.request.headers)) {
    if (!INJECTED.has(name.toLowerCase())) headers[name] = value;
  }
  const seconds = (ms: number): string => String(Math.floor(ms / 1000));
  headers[TRIGGER_HEADERS.runId] = input.runId;
  headers[TRIGGER_HEADERS.runKey] = input.runKey;
  headers[TRIGGER_HEADERS.idempotencyKey] = input.runKey;
  headers[TRIGGER_HEADERS.scheduleName] = input.job.name;
  headers[TRIGGER_HEADERS.fireTime] = seconds(input.fireTimeMs);
  headers[TRIGGER_HEADERS.fireTimeActual] = seconds(input.actualTimeMs);
  headers[TRIGGER_HEADERS.attempt] = String(attempt);
  if (input.previousSuccessMs !== null) {
    headers[TRIGGER_HEADERS.previousSuccessTime] = seconds(input.previousSuccessMs);
  }
  if (fencingToken !== undefined) headers[TRIGGER_HEADERS.fencingToken] = String(fencingToken);
  headers[TRIGGER_HEADERS.traceparent] = traceparent(input.runId);
  const secret = input.secrets[0];
  if (secret !== undefined) {
    headers[TRIGGER_HEADERS.signature] = sign({
      secret,
      method: input.job.request.method,
      path: requestTarget(input.job.request.url),
      body: input.job.request.body,
      timestamp: Math.floor(sentAtMs / 1000),
    });
  }
  return headers;
}

function attemptClass(result: TransportResult): AttemptClass | 'aborted' {
  switch (result.kind) {
    case 'response':
      return classifyStatus(result.status);
    case 'network-error':
      return 'network-error';
    case 'timeout':
      return 'timeout';
    case 'aborted':
      return 'aborted';
  }
}

function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

/** Runs one fire to its terminal outcome. Never throws for expected failures. */
export async function runFire(input: FireInput, deps: FireDeps): Promise<FireResult> {
  const { clock, transport, guard, signal } = deps;
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
    const request: TransportRequest = {
      method: input.job.request.method,
      url: input.job.request.url,
      headers: attemptHeaders(input, attempt, clock.now(), hold?.fencingToken),
      body: input.job.request.body,
    };
    emit({
      event: 'attempt',
      terminal: false,
      attempt,
      ...(hold?.fencingToken !== undefined ? { fencingToken: hold.fencingToken } : {}),
    });
    const attemptStart = clock.now();
    sent = attempt;
    let result: TransportResult;
    try {
      result = await transport.send(request, {
        timeoutMs: policy.timeout_seconds * 1000,
        maxBodyBytes: MAX_RESPONSE_BODY_BYTES,
        ...(anySignal([signal, hold?.lost])
          ? { signal: anySignal([signal, hold?.lost]) as AbortSignal }
          : {}),
      });
    } finally {
      await hold?.release();
    }
    const durationMs = clock.now() - attemptStart;
    const cls = attemptClass(result);
    if (result.kind === 'response') {
      lastStatus = result.status;
      lastExcerpt = result.bodyExcerpt;
    }
    if (cls === 'aborted') {
      if (signal?.aborted) return stopped(attempt);
      // the hold was lost mid-attempt: count it as a failed attempt and re-take the lock
      result = {
        kind: 'network-error',
        message: 'lock lost during the attempt; connection closed',
      };
    }
    const status = result.kind === 'response' ? result.status : undefined;
    const excerpt = result.kind === 'response' ? result.bodyExcerpt : undefined;
    const err =
      result.kind === 'network-error'
        ? result.message
        : result.kind === 'timeout'
          ? `timeout after ${policy.timeout_seconds}s`
          : undefined;
    const base = {
      attempt,
      durationMs,
      ...(status !== undefined ? { status } : {}),
      ...(err ? { err } : {}),
    };
    const finalClass = cls === 'aborted' ? 'network-error' : cls;
    if (finalClass === 'success') {
      emit({ event: 'success', terminal: true, ...base });
      return finish('success');
    }
    if (!isRetryable(finalClass)) {
      emit({
        event: 'app-rejected',
        terminal: true,
        ...base,
        ...(excerpt !== undefined ? { bodyExcerpt: excerpt } : {}),
      });
      return finish('app-rejected');
    }
    const last = attempt === policy.retries.max_attempts;
    const sleep = last ? undefined : backoffSeconds(attempt, policy.retries);
    emit({
      event: finalClass === 'server-error' ? 'server-error' : 'attempt-failed',
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
