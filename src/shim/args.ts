/**
 * Flags of `cronix trigger` (node:util parseArgs — no commander on this
 * path): settings from flags, then environment, then defaults. Every problem
 * is a one-line message naming the flag and the accepted values, with the
 * value echoed through the shared 200-character cap.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { cut, echo } from '../contract/echo.js';
import { parseInstant, parseJobName, rfc3339Utc } from '../contract/run.js';
import { REPORT_URL_ENV } from '../contract/report-constants.js';
import type { TriggerSettings } from './trigger.js';

/** Earliest accepted `--fire-time`: the Unix epoch. */
export const FIRE_TIME_MIN_MS = 0;
/**
 * Latest accepted `--fire-time`: 2199-12-31T23:59:59Z. Far enough for any
 * replay, and bounded so the schedule math (which builds a zone's offset
 * table year by year) stays in milliseconds; an instant in year 9999 costs
 * seconds and one past `Date`'s range cannot be formatted at all.
 */
export const FIRE_TIME_MAX_MS = Date.UTC(2199, 11, 31, 23, 59, 59);

/** Usage text of `cronix trigger --help`. */
export const TRIGGER_USAGE = `Usage: cronix trigger <app>.<job> [options]

Fire one job once: take its lock, send the signed HTTP request with retries,
and exit with a documented code. Run by the host scheduler (crontab, systemd,
Kubernetes, EventBridge) that "cronix apply" configured.

Options:
  --spec-dir DIR          job spec files (default $CRONIX_JOB_SPEC_DIR or /etc/cronix/jobs)
  --lock-dir DIR          host lock files (default $CRONIX_LOCK_DIR or /var/lock/cronix)
  --state-dir DIR         host run state (default $CRONIX_STATE_DIR or /var/lib/cronix)
  --lock-backend URL      redis://host:6379[/db] for global scope (default $CRONIX_REDIS_URL)
  --fire-time INSTANT     intended fire time, RFC 3339 or Unix seconds, from
                          ${rfc3339Utc(FIRE_TIME_MIN_MS)} to ${rfc3339Utc(FIRE_TIME_MAX_MS)} (default: the
                          latest scheduled instant at or before now)
  --contended-exit 4|75   exit code when the lock is held elsewhere (default 4)
  --metrics-textfile DIR  write a Prometheus textfile for node_exporter after the fire
  --report-to URL         report the fire to this cronix serve --watch (default
                          $CRONIX_REPORT_URL, else the spec file's report_to)
  --backend NAME, --otel  accepted and ignored: flags of the public cronix
                          implementation's trigger, so its installed entries keep working
  -h, --help              show this help

Exit codes: 0 ok (or duplicate suppressed) · 1 app rejected (4xx) · 2 retries
exhausted · 3 internal/config error · 4 lock contended · 75 temporary failure
(lock backend unreachable, or stopped by SIGTERM or the fire's deadline).

Environment: CRONIX_HOST_ID (host identity, default the hostname),
CRONIX_REDIS_PREFIX (Redis key prefix, default "cronix:"), CRONIX_REPORT_SECRET
(the report secret when the spec file names no report_secret_refs).
Reports never change the exit code (docs/shim.md, "Reports").`;

/**
 * Parses `--fire-time`: RFC 3339 or Unix seconds within
 * [{@link FIRE_TIME_MIN_MS}, {@link FIRE_TIME_MAX_MS}]; epoch ms or a message.
 */
export function parseFireTime(text: string): { ms: number } | { error: string } {
  const ms = parseInstant(text);
  if (ms !== null && Number.isFinite(ms) && ms >= FIRE_TIME_MIN_MS && ms <= FIRE_TIME_MAX_MS) {
    return { ms };
  }
  const range =
    `${rfc3339Utc(FIRE_TIME_MIN_MS)} to ${rfc3339Utc(FIRE_TIME_MAX_MS)} ` +
    `(Unix seconds ${FIRE_TIME_MIN_MS / 1000} to ${FIRE_TIME_MAX_MS / 1000})`;
  return {
    error:
      ms === null
        ? `--fire-time: expected RFC 3339 or Unix seconds from ${range}, found ${echo(text)}`
        : `--fire-time: ${echo(text)} is outside the accepted range ${range}`,
  };
}

/**
 * Removes the flags of the public cronix implementation's `trigger` that this shim accepts and
 * ignores (SPEC §14), so entries it installed keep working after `cronix adopt`:
 * `--backend NAME` / `--backend=NAME` (which backend installed the entry) and `--otel` /
 * `--otel=BOOL` (its OpenTelemetry switch; this shim always sends `traceparent`).
 */
export function dropForeignFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (arg === '--backend') {
      i++; // its value
      continue;
    }
    if (arg.startsWith('--backend=') || arg === '--otel' || arg.startsWith('--otel=')) continue;
    out.push(arg);
  }
  return out;
}

/** A parseArgs error as one line naming the flag and the fix (never Node's raw wording). */
function argError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = e.message ?? String(err);
  const flag = /'([^']+)'/.exec(message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag !== undefined) {
    const hint =
      flag === '-o' || flag.startsWith('--output')
        ? ': the shim always logs JSON lines on stdout, so it has no -o/--output'
        : '';
    return `unknown option ${echo(flag)}${hint} (run "cronix trigger --help" for the options)`;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag !== undefined) {
    return `option ${echo(flag.split(' ')[0] ?? flag)} needs a value (run "cronix trigger --help")`;
  }
  return `${cut(message)} (run "cronix trigger --help")`;
}

/** Parses argv (after `trigger`) into settings, or returns an error message. */
export function parseTriggerArgs(
  argv: string[],
  env: NodeJS.ProcessEnv,
): TriggerSettings | { help: true } | { error: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: dropForeignFlags(argv),
      allowPositionals: true,
      strict: true,
      options: {
        'spec-dir': { type: 'string' },
        'lock-dir': { type: 'string' },
        'state-dir': { type: 'string' },
        'lock-backend': { type: 'string' },
        'fire-time': { type: 'string' },
        'contended-exit': { type: 'string' },
        'metrics-textfile': { type: 'string' },
        'report-to': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return { error: argError(err) };
  }
  const v = parsed.values;
  if (v.help) return { help: true };
  if (parsed.positionals.length !== 1) {
    return {
      error: `expected exactly one <app>.<job> argument, found ${parsed.positionals.length}`,
    };
  }
  // app/job (how logs and the API name jobs) and app.job (the installed entries' form) both work
  const named = parseJobName(parsed.positionals[0] as string);
  if (named === null) {
    return {
      error: `<app>.<job> must look like "billing.settle-invoices" (or billing/settle-invoices), found ${echo(parsed.positionals[0] as string)}`,
    };
  }
  const target = `${named.app}.${named.job}`;
  const contended = v['contended-exit'] ?? '4';
  if (contended !== '4' && contended !== '75') {
    return { error: `--contended-exit must be 4 or 75, found ${echo(contended)}` };
  }
  let fireTimeMs: number | undefined;
  if (v['fire-time'] !== undefined) {
    const fire = parseFireTime(v['fire-time']);
    if ('error' in fire) return fire;
    fireTimeMs = fire.ms;
  }
  return {
    target,
    specDir: v['spec-dir'] ?? env['CRONIX_JOB_SPEC_DIR'] ?? '/etc/cronix/jobs',
    lockDir: v['lock-dir'] ?? env['CRONIX_LOCK_DIR'] ?? '/var/lock/cronix',
    stateDir: v['state-dir'] ?? env['CRONIX_STATE_DIR'] ?? '/var/lib/cronix',
    redisUrl: v['lock-backend'] ?? env['CRONIX_REDIS_URL'],
    redisPrefix: env['CRONIX_REDIS_PREFIX'] ?? 'cronix:',
    fireTimeMs,
    k8sJobName: env['CRONIX_K8S_JOB_NAME'] || undefined,
    contendedExit: contended === '75' ? 75 : 4,
    metricsDir: v['metrics-textfile'],
    reportTo: v['report-to'] || env[REPORT_URL_ENV] || undefined,
    hostId: env['CRONIX_HOST_ID'] || hostname(),
  };
}
