/**
 * What `runOnce` answers, for both stores: the HTTP status and JSON body a trigger request gets,
 * and the checks on the request that come before any database work.
 */
import { RUN_ONCE_HEADER } from '../../contract/run.js';
import { triggerInfo, type HeaderSource, type TriggerInfo } from '../trigger.js';

/** The states a run key goes through in the idempotency table. */
export type RunOnceState = 'received' | 'started' | 'succeeded' | 'failed';

/**
 * How a delivery ended:
 * - `executed`: this delivery ran `fn` and committed its effects with the success marker;
 * - `duplicate`: the run key had already succeeded; `fn` did not run, the stored answer is sent;
 * - `stale`: a newer leader epoch or fencing token was seen for this job; `fn` did not run (409);
 * - `failed`: `fn` threw; its effects were rolled back and the run key can be tried again (500);
 * - `invalid`: the request carries no run key (400).
 */
export type RunOnceOutcome = 'executed' | 'duplicate' | 'stale' | 'failed' | 'invalid';

/** The answer to send back: `status`, `headers` and `body` as they go on the wire. */
export interface RunOnceAnswer<T> {
  outcome: RunOnceOutcome;
  status: number;
  headers: Record<string, string>;
  /** JSON text: `fn`'s value (also the stored one for a duplicate), or `{"error":…}`. */
  body: string;
  /** `fn`'s return value (`executed` only). */
  value?: T;
}

/** The response header that tells an `executed` answer from a `duplicate` one. */
export { RUN_ONCE_HEADER };

/** What `fn` gets besides the database handle. */
export interface RunOnceRun {
  runKey: string;
  /** `<app>/<job>`: the part of the run key before the fire time; fences are kept per scope. */
  scope: string;
  trigger: TriggerInfo;
}

/** Options of `runOnce`. */
export interface RunOnceOptions {
  /**
   * The idempotency table; default `cronix_runs`. Its fences live in `<table>_fences`. Both are
   * created when missing. A PostgreSQL name may be schema-qualified (`app.cronix_runs`).
   */
  table?: string;
}

const TABLE = /^(?:[a-z_][a-z0-9_]{0,62}\.)?[a-z_][a-z0-9_]{0,54}$/;

/** The two table names, validated (they are put into SQL text). */
export function tableNames(opts: RunOnceOptions | undefined): { runs: string; fences: string } {
  const runs = opts?.table ?? 'cronix_runs';
  if (!TABLE.test(runs)) {
    throw new TypeError(
      `runOnce: option table must be a lower-case SQL name ([a-z_][a-z0-9_]*, optionally schema.name), found ${JSON.stringify(runs.slice(0, 80))}`,
    );
  }
  return { runs, fences: `${runs}_fences` };
}

function json(status: number, outcome: RunOnceOutcome, body: string): RunOnceAnswer<never> {
  return {
    outcome,
    status,
    headers: { 'content-type': 'application/json', [RUN_ONCE_HEADER]: outcome },
    body,
  };
}

/** `fn` ran and committed. */
export function executed<T>(value: T, body: string): RunOnceAnswer<T> {
  return { ...json(200, 'executed', body), value };
}

/** The stored answer of the delivery that succeeded. */
export function duplicate(status: number, body: string): RunOnceAnswer<never> {
  return json(status, 'duplicate', body);
}

/** An error answer with `{"error":{"code","message"}}`. */
export function failure(
  status: number,
  outcome: RunOnceOutcome,
  code: string,
  message: string,
): RunOnceAnswer<never> {
  return json(status, outcome, JSON.stringify({ error: { code, message } }));
}

/** The stored body of `fn`'s value (`null` for `undefined`). */
export function valueBody(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** The request's run identity, or the 400 answer when it has no run key. */
export function runOf(request: { headers: HeaderSource }): RunOnceRun | RunOnceAnswer<never> {
  const trigger = triggerInfo(request);
  const runKey = trigger.runKey;
  if (runKey === null || runKey.length === 0 || runKey.length > 1000) {
    return failure(
      400,
      'invalid',
      'MissingRunKey',
      'the request has no X-Cron-Run-Key (or Idempotency-Key) header of at most 1000 characters',
    );
  }
  const hash = runKey.indexOf('#');
  return { runKey, scope: hash > 0 ? runKey.slice(0, hash) : runKey, trigger };
}

/** The stale-fence answer, or null when the request's epoch and token are not older than seen. */
export function staleFence(
  trigger: TriggerInfo,
  seen: { leaderEpoch: number | null; fencingToken: number | null },
): RunOnceAnswer<never> | null {
  if (
    trigger.leaderEpoch !== null &&
    seen.leaderEpoch !== null &&
    trigger.leaderEpoch < seen.leaderEpoch
  ) {
    return failure(
      409,
      'stale',
      'StaleLeaderEpoch',
      `leader epoch ${trigger.leaderEpoch} is older than ${seen.leaderEpoch}, already seen for this job: the sender is a deposed leader`,
    );
  }
  if (
    trigger.fencingToken !== null &&
    seen.fencingToken !== null &&
    trigger.fencingToken < seen.fencingToken
  ) {
    return failure(
      409,
      'stale',
      'StaleFencingToken',
      `fencing token ${trigger.fencingToken} is older than ${seen.fencingToken}, already seen for this job: the sender lost its lock`,
    );
  }
  return null;
}

/** The error text kept in the table for a failed run: the message only, cut short. */
export function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.slice(0, 1000);
}

/** The answer as a Fetch `Response`. */
export function answerResponse(answer: RunOnceAnswer<unknown>): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/** A number column read back from a driver (pg returns BIGINT as a string). */
export function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}
