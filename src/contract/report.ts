/**
 * Host-mode reports (SPEC §15): the wire format the shim (or any other reporter) sends to
 * `POST /api/v1/reports` of a `cronix serve --watch`, and its validation.
 *
 * A report is `{"kind": "started"|"ended", "run": {...}, "spool_dropped"?: n}`. The `run` object
 * uses the field names of §7 runs (`id`, `run_key`, `app`, `job`, `schedule_index`,
 * `scheduled_time`, `started_at`, `ended_at`, `outcome`, `attempts`, `last_status`, `error`)
 * plus what only a host knows (`host`, `exit_code`, `fencing_token`, `attempt_log`, `output`,
 * `output_truncated`, `duration_ms`). Times are RFC 3339; outcomes are §7 outcome names.
 *
 * The body is signed with the §4 scheme (see `signature.ts`) by the report secret; the signed
 * timestamp is the host's clock at send time, which the server also uses for its clock check.
 *
 * Pure: no clock, no I/O. Validation failures are values naming the field and the value.
 */
import { MAX_REPORT_OUTPUT_BYTES } from './report-constants.js';
import { parseInstant } from './run.js';

export {
  CLOCK_SKEW_FLAG_SECONDS,
  MAX_REPORT_BYTES,
  MAX_REPORT_OUTPUT_BYTES,
  REPORT_MAX_SKEW_SECONDS,
  REPORT_PATH,
  REPORT_TIMEOUT_MS,
  REPORT_URL_ENV,
  WATCH_GRACE,
} from './report-constants.js';
export type ReportKind = 'started' | 'ended';

/** Outcomes a host can report (§7 names; `missed` and `crashed` are the server's to decide). */
export type ReportedOutcome =
  | 'success'
  | 'app_rejected'
  | 'retries_exhausted'
  | 'skipped'
  | 'stopped'
  | 'duplicate'
  | 'internal_error';

export const REPORTED_OUTCOMES: readonly ReportedOutcome[] = [
  'success',
  'app_rejected',
  'retries_exhausted',
  'skipped',
  'stopped',
  'duplicate',
  'internal_error',
];

/** One attempt as reported. Times are epoch milliseconds once parsed. */
export interface ReportedAttempt {
  attempt: number;
  startedAt: number;
  durationMs: number;
  /** HTTP status when a response arrived. */
  status: number | null;
  /** Command jobs: the exit code of this attempt. */
  exitCode: number | null;
  error: string | null;
}

/** The parsed `run` object of a report. Times are epoch milliseconds. */
export interface ReportedRun {
  /** The shim's run id (UUID): a run id is recorded once. */
  id: string;
  runKey: string;
  app: string;
  job: string;
  /** Which schedule of the job fired; null for a fire with no schedule (manual). */
  scheduleIndex: number | null;
  /** The nominal fire time (the run key's time). */
  scheduledTime: number;
  /** The host that ran the fire (its hostname unless configured). */
  host: string;
  startedAt: number;
  /** Global-scope jobs: the Redis fencing token the fire held; null otherwise. */
  fencingToken: string | null;
  /** `ended` only (null in `started`). */
  endedAt: number | null;
  outcome: ReportedOutcome | null;
  exitCode: number | null;
  attempts: number;
  lastStatus: number | null;
  error: string | null;
  durationMs: number | null;
  attemptLog: ReportedAttempt[];
  /** Command jobs: the last 64 KiB of captured output (UTF-8). */
  output: string | null;
  outputTruncated: boolean;
}

/** A parsed report. */
export interface Report {
  kind: ReportKind;
  run: ReportedRun;
  /** Reports the reporter's spool dropped (oldest first) since its last successful send. */
  spoolDropped: number;
}

/** Why a report is not valid: the field's slash path and a message naming the value. */
export interface ReportError {
  field: string;
  message: string;
}

export type ParsedReport = { ok: true; report: Report } | { ok: false; error: ReportError };

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_TEXT = 4096;
const MAX_ATTEMPTS = 1000;

/** A value shown in an error: JSON, cut to a sane length. */
function shown(v: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    text = String(v);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

class Invalid extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function fail(field: string, expected: string, v: unknown): never {
  throw new Invalid(field, `${field} must be ${expected}, got ${shown(v)}`);
}

type Obj = Record<string, unknown>;

function object(v: unknown, field: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(field, 'an object', v);
  return v as Obj;
}

function only(o: Obj, field: string, allowed: readonly string[]): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) {
      throw new Invalid(`${field}/${k}`, `${field}/${k} is not a known field`);
    }
  }
}

function text(o: Obj, field: string, key: string, max = MAX_TEXT): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length === 0 || v.length > max) {
    fail(`${field}/${key}`, `a non-empty string of at most ${max} characters`, v);
  }
  return v;
}

function optText(o: Obj, field: string, key: string, max = MAX_TEXT): string | null {
  const v = o[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > max) {
    fail(`${field}/${key}`, `a string of at most ${max} characters or null`, v);
  }
  return v;
}

function int(o: Obj, field: string, key: string, min: number, max: number): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    fail(`${field}/${key}`, `an integer from ${min} to ${max}`, v);
  }
  return v;
}

function optInt(o: Obj, field: string, key: string, min: number, max: number): number | null {
  return o[key] === undefined || o[key] === null ? null : int(o, field, key, min, max);
}

function instant(o: Obj, field: string, key: string): number {
  const v = o[key];
  const ms = typeof v === 'string' && !/^-?\d+(\.\d+)?$/.test(v) ? parseInstant(v) : null;
  if (ms === null) fail(`${field}/${key}`, 'an RFC 3339 time', v);
  return ms;
}

function optInstant(o: Obj, field: string, key: string): number | null {
  return o[key] === undefined || o[key] === null ? null : instant(o, field, key);
}

const RUN_FIELDS = [
  'id',
  'run_key',
  'app',
  'job',
  'schedule_index',
  'scheduled_time',
  'host',
  'started_at',
  'fencing_token',
  'ended_at',
  'outcome',
  'exit_code',
  'attempts',
  'last_status',
  'error',
  'duration_ms',
  'attempt_log',
  'output',
  'output_truncated',
  // §7 fields a reporter may echo; the server decides them.
  'trigger',
  'phase',
  'created_at',
] as const;

const ATTEMPT_FIELDS = ['attempt', 'started_at', 'duration_ms', 'status', 'exit_code', 'error'];

function attempt(v: unknown, field: string): ReportedAttempt {
  const o = object(v, field);
  only(o, field, ATTEMPT_FIELDS);
  return {
    attempt: int(o, field, 'attempt', 1, MAX_ATTEMPTS),
    startedAt: instant(o, field, 'started_at'),
    durationMs: int(o, field, 'duration_ms', 0, 2 ** 31),
    status: optInt(o, field, 'status', 100, 599),
    exitCode: optInt(o, field, 'exit_code', -255, 255),
    error: optText(o, field, 'error'),
  };
}

function run(v: unknown, kind: ReportKind): ReportedRun {
  const f = '/run';
  const o = object(v, f);
  only(o, f, RUN_FIELDS);
  const id = text(o, f, 'id', 64);
  if (!UUID.test(id)) fail(`${f}/id`, 'a UUID', id);
  const app = text(o, f, 'app', 63);
  if (!NAME.test(app)) fail(`${f}/app`, 'an app name (lowercase letters, digits, -)', app);
  const job = text(o, f, 'job', 63);
  if (!NAME.test(job)) fail(`${f}/job`, 'a job name (lowercase letters, digits, -)', job);
  const runKey = text(o, f, 'run_key', 512);
  if (!runKey.startsWith(`${app}/${job}#`)) {
    fail(`${f}/run_key`, `a run key of ${app}/${job} ("${app}/${job}#<time>#<hash>")`, runKey);
  }
  const ended = kind === 'ended';
  const outcome = o['outcome'] === undefined || o['outcome'] === null ? null : o['outcome'];
  if (ended && !REPORTED_OUTCOMES.includes(outcome as ReportedOutcome)) {
    fail(`${f}/outcome`, `one of ${REPORTED_OUTCOMES.join(', ')}`, outcome);
  }
  if (!ended && outcome !== null) fail(`${f}/outcome`, 'absent in a started report', outcome);
  const log = o['attempt_log'] ?? [];
  if (!Array.isArray(log) || log.length > MAX_ATTEMPTS) {
    fail(`${f}/attempt_log`, `a list of at most ${MAX_ATTEMPTS} attempts`, log);
  }
  const output = optText(o, f, 'output', MAX_REPORT_OUTPUT_BYTES);
  if (output !== null && Buffer.byteLength(output) > MAX_REPORT_OUTPUT_BYTES) {
    fail(`${f}/output`, `at most ${MAX_REPORT_OUTPUT_BYTES} bytes`, `${output.length} chars`);
  }
  const truncated = o['output_truncated'] ?? false;
  if (typeof truncated !== 'boolean') fail(`${f}/output_truncated`, 'true or false', truncated);
  const endedAt = ended ? instant(o, f, 'ended_at') : optInstant(o, f, 'ended_at');
  return {
    id: id.toLowerCase(),
    runKey,
    app,
    job,
    scheduleIndex: optInt(o, f, 'schedule_index', 0, 1000),
    scheduledTime: instant(o, f, 'scheduled_time'),
    host: text(o, f, 'host', 255),
    startedAt: instant(o, f, 'started_at'),
    fencingToken: optText(o, f, 'fencing_token', 64),
    endedAt: ended ? endedAt : null,
    outcome: ended ? (outcome as ReportedOutcome) : null,
    exitCode: optInt(o, f, 'exit_code', -255, 255),
    attempts: o['attempts'] === undefined ? log.length : int(o, f, 'attempts', 0, MAX_ATTEMPTS),
    lastStatus: optInt(o, f, 'last_status', 100, 599),
    error: optText(o, f, 'error'),
    durationMs: optInt(o, f, 'duration_ms', 0, 2 ** 40),
    attemptLog: log.map((a, i) => attempt(a, `${f}/attempt_log/${i}`)),
    output,
    outputTruncated: truncated,
  };
}

/**
 * Validates a decoded report body. Never throws; the error names the field (as a slash path)
 * and the value, cut to a sane length.
 */
export function parseReport(body: unknown): ParsedReport {
  try {
    const o = object(body, '/');
    only(o, '', ['kind', 'run', 'spool_dropped']);
    const kind = o['kind'];
    if (kind !== 'started' && kind !== 'ended') fail('/kind', '"started" or "ended"', kind);
    const dropped = o['spool_dropped'] === undefined ? 0 : int(o, '', 'spool_dropped', 0, 2 ** 40);
    return { ok: true, report: { kind, run: run(o['run'], kind), spoolDropped: dropped } };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, error: { field: e.field, message: e.message } };
    throw e;
  }
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The wire form of a report (what {@link parseReport} reads back to the same value). */
export function reportBody(report: Report): Record<string, unknown> {
  const r = report.run;
  const body: Record<string, unknown> = {
    kind: report.kind,
    run: {
      id: r.id,
      run_key: r.runKey,
      app: r.app,
      job: r.job,
      schedule_index: r.scheduleIndex,
      scheduled_time: iso(r.scheduledTime),
      host: r.host,
      started_at: iso(r.startedAt),
      fencing_token: r.fencingToken,
      ended_at: iso(r.endedAt),
      outcome: r.outcome,
      exit_code: r.exitCode,
      attempts: r.attempts,
      last_status: r.lastStatus,
      error: r.error,
      duration_ms: r.durationMs,
      attempt_log: r.attemptLog.map((a) => ({
        attempt: a.attempt,
        started_at: iso(a.startedAt),
        duration_ms: a.durationMs,
        status: a.status,
        exit_code: a.exitCode,
        error: a.error,
      })),
      output: r.output,
      output_truncated: r.outputTruncated,
    },
  };
  if (report.spoolDropped > 0) body['spool_dropped'] = report.spoolDropped;
  return body;
}

/** The last `max` bytes of `text` as UTF-8, never splitting a character. */
export function outputTail(text: string, max = MAX_REPORT_OUTPUT_BYTES): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let start = bytes.length - max;
  // skip UTF-8 continuation bytes so the tail starts on a character boundary
  while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString('utf8');
}
