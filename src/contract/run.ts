/**
 * The shared run vocabulary of both modes (SPEC §5): run keys, backoff,
 * response classification, outcomes, exit codes and the trigger headers.
 * Pure functions, table-tested in `test/contract/run.test.ts`.
 */
import type { RetryPolicy } from './manifest/types.js';

/** Header names set on every trigger attempt, after the manifest's static headers. */
export const TRIGGER_HEADERS = {
  runId: 'X-Cron-Run-Id',
  runKey: 'X-Cron-Run-Key',
  idempotencyKey: 'Idempotency-Key',
  scheduleName: 'X-Cron-Schedule-Name',
  fireTime: 'X-Cron-Fire-Time',
  fireTimeActual: 'X-Cron-Fire-Time-Actual',
  attempt: 'X-Cron-Attempt',
  previousSuccessTime: 'X-Cron-Previous-Success-Time',
  fencingToken: 'X-Cron-Fencing-Token',
  leaderEpoch: 'X-Cron-Leader-Epoch',
  traceparent: 'traceparent',
  signature: 'X-Cron-Signature',
} as const;

/**
 * The response header an app sends to say what it did with a delivery (the SDK's `runOnce`):
 * `executed`, or `duplicate` when the run key had already succeeded there and the stored answer
 * was sent instead — recorded as the run's outcome `duplicate`, not `success` (nothing was done
 * twice). The other values (`stale`, `failed`, `invalid`) come with a non-2xx status.
 */
export const RUN_ONCE_HEADER = 'X-Cron-Run-Once';

/**
 * Environment variables cronix sets for every attempt of a command job (SPEC §11), after the
 * job's own `env` and `env_from_secrets`, so they cannot be overridden. Times are Unix seconds,
 * as in the trigger headers.
 */
export const COMMAND_ENV = {
  runId: 'CRONIX_RUN_ID',
  runKey: 'CRONIX_RUN_KEY',
  fireTime: 'CRONIX_FIRE_TIME',
  attempt: 'CRONIX_ATTEMPT',
  previousSuccessTime: 'CRONIX_PREVIOUS_SUCCESS_TIME',
  fencingToken: 'CRONIX_FENCING_TOKEN',
  leaderEpoch: 'CRONIX_LEADER_EPOCH',
} as const;

/** Variables of the cronix process passed on to a command (SPEC §11); nothing else is. */
export const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'TZ'] as const;

/** Response bytes kept per attempt (SPEC §5.6). */
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;
/** Extra lock lifetime beyond one attempt's timeout (SPEC §5.5). */
export const LOCK_TTL_MARGIN_SECONDS = 30;

/**
 * Instants already formatted. Fire times repeat (every job due at one boundary shares its run
 * key's instant, and the jobs view formats 100,000 next fires over a few thousand boundaries);
 * a lookup is ~0.05 µs where `toISOString` is ~1.7 µs. Cleared when full.
 */
const formatted = new Map<number, string>();
const MAX_FORMATTED = 4096;

/** RFC 3339 UTC without milliseconds when they are zero: `2026-03-29T01:00:00Z`. */
export function rfc3339Utc(ms: number): string {
  let text = formatted.get(ms);
  if (text === undefined) {
    const iso = new Date(ms).toISOString();
    text = iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
    if (formatted.size >= MAX_FORMATTED) formatted.clear();
    formatted.set(ms, text);
  }
  return text;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an instant given as RFC 3339 or Unix seconds; epoch ms, or null when neither. */
export function parseInstant(text: string): number | null {
  if (/^-?\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (RFC3339.test(text)) {
    const ms = Date.parse(text.replace(' ', 'T'));
    if (!Number.isNaN(ms)) return ms;
  }
  return null;
}

const JOB_NAME = /^([a-z][a-z0-9-]{0,62})[/.]([a-z][a-z0-9-]{0,62})$/;

/**
 * A job named on a command line: `app/job`, as logs, the API, the UI and the metrics print it,
 * or `app.job`, the form of `cronix trigger` and the spec files (a name holds neither `/` nor
 * `.`, so both read the same). Null for anything else.
 */
export function parseJobName(text: string): { app: string; job: string } | null {
  const m = JOB_NAME.exec(text);
  return m ? { app: m[1] as string, job: m[2] as string } : null;
}

/** Run key `<app>/<job>#<fire time, RFC 3339 UTC>#<change hash>` (SPEC §5.4). */
export function runKey(app: string, job: string, fireTimeMs: number, changeHash: string): string {
  return `${app}/${job}#${rfc3339Utc(fireTimeMs)}#${changeHash}`;
}

/** Sleep before attempt `attempt + 1`: `min(min_seconds · 2^(attempt−1), max_seconds)`. */
export function backoffSeconds(
  attempt: number,
  retries: Pick<RetryPolicy, 'min_seconds' | 'max_seconds'>,
): number {
  return Math.min(retries.min_seconds * 2 ** (attempt - 1), retries.max_seconds);
}

/** The backoff sleeps of a whole fire, between attempts 1→2, 2→3, … */
export function backoffSchedule(retries: RetryPolicy): number[] {
  return Array.from({ length: retries.max_attempts - 1 }, (_, i) => backoffSeconds(i + 1, retries));
}

/**
 * Longest a fire can take: every attempt timing out plus every backoff sleep, in seconds.
 * `stopSeconds` is what each attempt may take past its timeout while it is being stopped (a
 * command job's `graceful_stop_seconds`, see `attemptStopSeconds`; 0 for HTTP).
 */
export function worstCaseFireSeconds(
  policy: {
    timeout_seconds: number;
    retries: RetryPolicy;
  },
  stopSeconds = 0,
): number {
  return (
    policy.retries.max_attempts * (policy.timeout_seconds + stopSeconds) +
    backoffSchedule(policy.retries).reduce((a, b) => a + b, 0)
  );
}

/** Lock TTL for a job: `timeout_seconds + 30 s`, in ms. */
export function lockTtlMs(timeoutSeconds: number): number {
  return (timeoutSeconds + LOCK_TTL_MARGIN_SECONDS) * 1000;
}

/** How one attempt ended. */
export type AttemptClass =
  'success' | 'app-rejected' | 'server-error' | 'network-error' | 'timeout' | 'command-failed';

/**
 * Classifies an HTTP status: 2xx success; 4xx app rejected (no retry); 5xx
 * server error (retry). Redirects are not followed, and a 1xx/3xx final
 * status cannot become a success by retrying, so they count as rejected.
 */
export function classifyStatus(status: number): AttemptClass {
  if (status >= 200 && status <= 299) return 'success';
  if (status >= 500 && status <= 599) return 'server-error';
  return 'app-rejected';
}

/**
 * Classifies how a command ended (SPEC §11): an exit code in `success` is a success; in
 * `reject`, the job refused the run (no retry); any other exit code, or death by a signal
 * (`code` null), is a failure that may be retried.
 */
export function classifyExit(
  code: number | null,
  success: readonly number[],
  reject: readonly number[],
): AttemptClass {
  if (code !== null && success.includes(code)) return 'success';
  if (code !== null && reject.includes(code)) return 'app-rejected';
  return 'command-failed';
}

/** Whether another attempt may follow an attempt of this class. */
export function isRetryable(c: AttemptClass): boolean {
  return c === 'server-error' || c === 'network-error' || c === 'timeout' || c === 'command-failed';
}

/** Terminal outcome of one fire. */
export type FireOutcome =
  | 'success'
  | 'app-rejected'
  | 'retries-exhausted'
  | 'lock-contended'
  | 'lock-unavailable'
  | 'duplicate'
  | 'stopped'
  | 'internal-error';

/** Exit codes of `cronix trigger` (SPEC §5.9). */
export const SHIM_EXIT = {
  ok: 0,
  appRejected: 1,
  retriesExhausted: 2,
  internal: 3,
  lockContended: 4,
  tempfail: 75,
} as const;

/**
 * The one table from outcome to exit code. A duplicate is not a failure (0);
 * a fire stopped by SIGTERM did not complete and may be retried (75).
 */
export function exitCodeFor(outcome: FireOutcome, contendedExit: 4 | 75 = 4): number {
  switch (outcome) {
    case 'success':
    case 'duplicate':
      return SHIM_EXIT.ok;
    case 'app-rejected':
      return SHIM_EXIT.appRejected;
    case 'retries-exhausted':
      return SHIM_EXIT.retriesExhausted;
    case 'lock-contended':
      return contendedExit;
    case 'lock-unavailable':
    case 'stopped':
      return SHIM_EXIT.tempfail;
    case 'internal-error':
      return SHIM_EXIT.internal;
  }
}
