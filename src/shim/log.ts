/**
 * JSON log lines of the shim (SPEC §5.10): one object per line on stdout with
 * `time level event msg app job run_id run_key` and the fields that apply.
 * Hand-written instead of pino: the shim is a one-shot process whose whole
 * start-up budget is ~40 ms, and synchronous `process.stdout.write` of one
 * line per event needs no transport, worker or flush logic.
 */
import type { FireEvent } from '../fire/engine.js';

/** Log levels used. */
export type Level = 'debug' | 'info' | 'warn' | 'error';

/** Fields shared by every line of one fire. */
export interface LogContext {
  app?: string;
  job?: string;
  run_id?: string;
  run_key?: string;
  scope?: string;
}

/** Writes one line; injected so tests can capture. */
export type LineWriter = (line: string) => void;

/** A logger bound to a fire's context. */
export class ShimLogger {
  private readonly context: LogContext = {};
  private secrets: readonly string[] = [];
  constructor(
    private readonly write: LineWriter = (line) => process.stdout.write(line),
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds fields to every following line. */
  bind(fields: LogContext): void {
    Object.assign(this.context, fields);
  }

  /** Secret values to mask in every following line (e.g. echoed in a response body). */
  redactSecrets(secrets: readonly string[]): void {
    this.secrets = secrets.filter((s) => s.length > 0);
  }

  /** Writes one line; any secret value in it is replaced by `[REDACTED]`. */
  log(level: Level, event: string, msg: string, fields: Record<string, unknown> = {}): void {
    const line = {
      time: new Date(this.now()).toISOString(),
      level,
      event,
      msg,
      ...this.context,
      ...fields,
    };
    let text = JSON.stringify(line);
    for (const secret of this.secrets) {
      const encoded = JSON.stringify(secret).slice(1, -1);
      if (text.includes(encoded)) text = text.split(encoded).join('[REDACTED]');
    }
    this.write(`${text}\n`);
  }
}

const LEVELS: Record<FireEvent['event'], Level> = {
  attempt: 'info',
  success: 'info',
  'app-rejected': 'error',
  'server-error': 'warn',
  'attempt-failed': 'warn',
  'retries-exhausted': 'error',
  'lock-contended': 'info',
  'lock-unavailable': 'error',
  'duplicate-suppressed': 'info',
  stopped: 'warn',
  'internal-error': 'error',
};

function message(e: FireEvent): string {
  switch (e.event) {
    case 'attempt':
      return `attempt ${e.attempt} started`;
    case 'success':
      return `attempt ${e.attempt} succeeded with HTTP ${e.status}`;
    case 'app-rejected':
      return `app rejected the trigger with HTTP ${e.status}; not retrying`;
    case 'server-error':
      return `attempt ${e.attempt} got HTTP ${e.status}${e.backoffSeconds !== undefined ? `; retrying in ${e.backoffSeconds}s` : ''}`;
    case 'attempt-failed':
      return `attempt ${e.attempt} failed: ${e.err}${e.backoffSeconds !== undefined ? `; retrying in ${e.backoffSeconds}s` : ''}`;
    case 'retries-exhausted':
      return `all ${e.attempt} attempts failed`;
    case 'lock-contended':
      return `lock is held elsewhere; not firing (${e.err})`;
    case 'lock-unavailable':
      return `lock backend unreachable; not firing (${e.err})`;
    case 'duplicate-suppressed':
      return 'this run key already succeeded; not firing again';
    case 'stopped':
      return 'fire stopped by a signal before it completed';
    case 'internal-error':
      return e.err ?? 'internal error';
  }
}

/** Logs one engine event with its level, message and fields. */
export function logFireEvent(logger: ShimLogger, e: FireEvent): void {
  const fields: Record<string, unknown> = {};
  if (e.attempt !== undefined) fields['attempt'] = e.attempt;
  if (e.status !== undefined) fields['status'] = e.status;
  if (e.durationMs !== undefined) fields['duration_ms'] = e.durationMs;
  if (e.err !== undefined) fields['err'] = e.err;
  if (e.bodyExcerpt !== undefined) fields['body_excerpt'] = e.bodyExcerpt.slice(0, 1024);
  if (e.fencingToken !== undefined) fields['fencing_token'] = e.fencingToken;
  if (e.backoffSeconds !== undefined) fields['backoff_seconds'] = e.backoffSeconds;
  logger.log(LEVELS[e.event], e.event, message(e), fields);
}
