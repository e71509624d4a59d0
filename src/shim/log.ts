/**
 * JSON log lines of the shim (SPEC §5.10): one object per line on stdout with
 * `time level event msg app job run_id run_key` and the fields that apply.
 * Hand-written instead of pino: the shim is a one-shot process whose whole
 * start-up budget is ~40 ms, and synchronous `process.stdout.write` of one
 * line per event needs no transport, worker or flush logic.
 */
import { cut } from '../contract/echo.js';
import type { FireEvent } from '../fire/engine.js';
import { redact } from '../secrets/resolve.js';

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

/** `body_excerpt` characters kept in a line (after redaction). */
export const MAX_EXCERPT_CHARS = 1024;
/** Characters kept of any other string field (after redaction): a last cap behind `echo`. */
export const MAX_FIELD_CHARS = 2048;

/** Events that end a fire: exactly one of them per fire (SPEC §5.10). */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'success',
  'app-rejected',
  'retries-exhausted',
  'lock-contended',
  'lock-unavailable',
  'duplicate-suppressed',
  'stopped',
  'internal-error',
]);

/** Fields that are our own vocabulary, never echoed input: not redacted, so never rewritten. */
const OWN_FIELDS = new Set(['time', 'level', 'event']);

/** Writes one line; injected so tests can capture. */
export type LineWriter = (line: string) => void;

/** A logger bound to a fire's context. */
export class ShimLogger {
  private readonly context: LogContext = {};
  private secrets: readonly string[] = [];
  #ended = false;
  constructor(
    private readonly write: LineWriter = (line) => process.stdout.write(line),
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a terminal line ({@link TERMINAL_EVENTS}) was written. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Adds fields to every following line. */
  bind(fields: LogContext): void {
    Object.assign(this.context, fields);
  }

  /** Secret values to mask in every following line (e.g. echoed in a response body). */
  redactSecrets(secrets: readonly string[]): void {
    this.secrets = secrets.filter((s) => s.length > 0);
  }

  /**
   * Writes one line. In every string field but `time`, `level` and `event`,
   * each secret value is replaced by `[REDACTED]` first, and only then is the
   * field cut (`body_excerpt` to {@link MAX_EXCERPT_CHARS}, others to
   * {@link MAX_FIELD_CHARS}): cutting first could leave a secret's prefix.
   */
  log(level: Level, event: string, msg: string, fields: Record<string, unknown> = {}): void {
    const line: Record<string, unknown> = {
      time: new Date(this.now()).toISOString(),
      level,
      event,
      msg,
      ...this.context,
      ...fields,
    };
    for (const [key, value] of Object.entries(line)) {
      if (typeof value !== 'string' || OWN_FIELDS.has(key)) continue;
      const clean = this.secrets.length > 0 ? redact(value, this.secrets) : value;
      line[key] = cut(clean, key === 'body_excerpt' ? MAX_EXCERPT_CHARS : MAX_FIELD_CHARS);
    }
    if (TERMINAL_EVENTS.has(event)) this.#ended = true;
    this.write(`${JSON.stringify(line)}\n`);
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
  'record-failed': 'warn',
};

function message(e: FireEvent, stoppedBy: () => string): string {
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
      // with a status: sent, and the app answered that it had done this key already
      return e.status !== undefined && e.err !== undefined
        ? e.err
        : 'this run key already succeeded; not firing again';
    case 'stopped':
      return stoppedBy();
    case 'internal-error':
      return e.err ?? 'internal error';
    case 'record-failed':
      return `could not record the outcome, so duplicate suppression may not see it: ${e.err}`;
  }
}

/** Message of a `stopped` line when nothing better is known. */
const STOPPED_BY_SIGNAL = (): string => 'fire stopped by a signal before it completed';

/**
 * Logs one engine event with its level, message and fields; `stoppedBy` says
 * why a `stopped` fire stopped (a signal, or the process deadline).
 */
export function logFireEvent(
  logger: ShimLogger,
  e: FireEvent,
  stoppedBy: () => string = STOPPED_BY_SIGNAL,
): void {
  const fields: Record<string, unknown> = {};
  if (e.attempt !== undefined) fields['attempt'] = e.attempt;
  if (e.status !== undefined) fields['status'] = e.status;
  if (e.durationMs !== undefined) fields['duration_ms'] = e.durationMs;
  if (e.err !== undefined) fields['err'] = e.err;
  if (e.bodyExcerpt !== undefined) fields['body_excerpt'] = e.bodyExcerpt; // cut after redaction
  if (e.fencingToken !== undefined) fields['fencing_token'] = e.fencingToken;
  if (e.backoffSeconds !== undefined) fields['backoff_seconds'] = e.backoffSeconds;
  logger.log(LEVELS[e.event], e.event, message(e, stoppedBy), fields);
}
