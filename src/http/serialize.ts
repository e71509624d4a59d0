/** Wire shapes of the REST API (SPEC §7): snake_case, RFC 3339 UTC times, absent values null. */
import { rfc3339Utc } from '../contract/run.js';
import type { RunRecord } from '../daemon/store/types.js';

const time = (ms: number | null): string | null => (ms === null ? null : rfc3339Utc(ms));

/** A run as the API returns it. */
export function runJson(r: RunRecord): Record<string, unknown> {
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
    })),
    output_truncated: r.outputTruncated,
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
