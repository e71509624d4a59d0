/** Wire shapes of the REST API (SPEC §7): snake_case, RFC 3339 UTC times, absent values null. */
import { rfc3339Utc } from '../contract/run.js';
import type { RunRecord } from '../daemon/store/types.js';

const time = (ms: number | null): string | null => (ms === null ? null : rfc3339Utc(ms));
const seconds = (ms: number | null | undefined): number | null =>
  ms === null || ms === undefined ? null : Math.round(ms / 100) / 10;

/**
 * A run as the API returns it; `waitingFor` is what a launched run waits for before its next
 * attempt (the daemon's answer; null when it does not wait or is not known here).
 */
export function runJson(r: RunRecord, waitingFor: string | null = null): Record<string, unknown> {
  return {
    id: r.id,
    run_key: r.runKey,
    app: r.app,
    job: r.job,
    schedule_index: r.scheduleIndex,
    scheduled_time: time(r.scheduledTime),
    trigger: r.trigger,
    phase: r.phase,
    outcome: r.outcome,
    attempts: r.attempts,
    last_status: r.lastStatus,
    created_at: time(r.createdAt),
    started_at: time(r.startedAt),
    ended_at: time(r.endedAt),
    due_at: time(r.dueAt),
    duration_ms: r.startedAt !== null && r.endedAt !== null ? r.endedAt - r.startedAt : null,
    error: r.error,
    attempt_log: r.attemptLog.map((a) => ({
      attempt: a.attempt,
      started_at: time(a.startedAt),
      duration_ms: a.durationMs,
      status: a.status,
      error: a.error,
      traceparent: a.traceparent ?? null,
      response: a.response ?? null,
      exit_code: a.exitCode ?? null,
    })),
    output_truncated: r.outputTruncated,
    output_lost: r.outputLost !== null,
    output_error: r.outputLost,
    // host mode (SPEC §15): null for the daemon's own runs
    host: r.host ?? null,
    exit_code: r.exitCode ?? null,
    clock_skewed: (r.clockSkewMs ?? null) !== null,
    clock_skew_seconds: seconds(r.clockSkewMs),
    lateness_seconds: seconds(r.latenessMs),
    fencing_token: r.fencingToken ?? null,
    // a manual run's parameters (SPEC §16): {"body"?, "env"?}, null without any
    params: r.params ?? null,
    waiting_for: waitingFor,
  };
}

/** An API error body. */
export function errorJson(
  code: string,
  message: string,
  path?: string,
): { error: Record<string, string> } {
  return { error: { code, message, ...(path !== undefined ? { path } : {}) } };
}

/** A bad query or body: 400 with the offending field as `path`. */
export class BadRequest extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}
