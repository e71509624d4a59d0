/**
 * The unit files of one systemd entry (SPEC §6) and their ownership marker. Pure: text in,
 * text out. Each entry `cronix-<app>_<job>-<index>` is a `.service` that runs the trigger shim
 * once and a `.timer` that starts it on the translated `OnCalendar=` expressions. The first
 * line of both files is the marker
 *
 * ```
 * # cronix:v1 app=billing job=settle index=0 hash=0123456789abcdef sum=fedcba9876543210
 * ```
 *
 * where `sum` is a digest of the rest of the file, so a hand edit is noticed and rewritten.
 */
import { createHash } from 'node:crypto';
import type { Job } from '../../contract/manifest/types.js';
import { worstCaseFireSeconds } from '../../contract/run.js';

/** Extra runtime beyond the worst-case fire (SPEC §6: "plus 30 s"). */
export const RUNTIME_MARGIN_SECONDS = 30;

/** What the marker line says about the entry its file belongs to. */
export interface UnitMarker {
  app: string;
  job: string;
  scheduleIndex: number;
  hash: string;
  /** Digest of the file below the marker line; absent in files written by hand. */
  sum?: string;
}

const MARKER_RE =
  /^# cronix:v1 app=([a-z][a-z0-9-]*) job=([a-z][a-z0-9-]*) index=(\d{1,4}) hash=([0-9a-f]{16})(?: sum=([0-9a-f]{16}))?$/;

/** Digest of a unit file's body (everything after the marker line): 16 hex characters. */
export function bodySum(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

/** The marker line (without newline) for a body. */
export function formatMarker(m: Omit<UnitMarker, 'sum'>, body: string): string {
  return `# cronix:v1 app=${m.app} job=${m.job} index=${m.scheduleIndex} hash=${m.hash} sum=${bodySum(body)}`;
}

/** A parsed unit file: its marker (null when the first line is not one) and its body. */
export interface ParsedUnit {
  marker: UnitMarker | null;
  body: string;
}

/** Splits a unit file into marker and body. Files without a marker are foreign. */
export function parseUnitFile(text: string): ParsedUnit {
  const nl = text.indexOf('\n');
  const first = nl >= 0 ? text.slice(0, nl) : text;
  const body = nl >= 0 ? text.slice(nl + 1) : '';
  const m = MARKER_RE.exec(first);
  if (!m) return { marker: null, body: text };
  const marker: UnitMarker = {
    app: m[1] as string,
    job: m[2] as string,
    scheduleIndex: Number(m[3]),
    hash: m[4] as string,
  };
  if (m[5] !== undefined) marker.sum = m[5];
  return { marker, body };
}

/**
 * `RuntimeMaxSec=` of a job's service: every attempt timing out plus every backoff sleep
 * ({@link worstCaseFireSeconds}), plus what Replace may wait for the previous holder to exit
 * (`max(timeout/2, 5)` s, SPEC §5.5), plus {@link RUNTIME_MARGIN_SECONDS}. A command job's
 * graceful stop (`stopSeconds`) is added to each attempt and to the Replace wait.
 */
export function runtimeMaxSeconds(policy: Job['policy'], stopSeconds = 0): number {
  const replaceWait =
    policy.concurrency === 'Replace'
      ? Math.ceil(Math.max(policy.timeout_seconds / 2, 5)) + stopSeconds
      : 0;
  return worstCaseFireSeconds(policy, stopSeconds) + replaceWait + RUNTIME_MARGIN_SECONDS;
}

/** Escapes `%` specifiers (`%%`) for settings systemd expands specifiers in. */
function specifiers(text: string): string {
  return text.replace(/%/g, '%%');
}

/**
 * One `ExecStart=` argument in systemd's syntax: `%` and `$` doubled (no specifier or
 * variable expansion), quoted with C escapes when it holds whitespace, quotes or backslashes.
 */
export function execArg(arg: string): string {
  const plain = specifiers(arg).replace(/\$/g, '$$$$');
  if (plain !== '' && !/[\s"'\\;]/.test(plain)) return plain;
  const escaped = plain
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\n/g, '\\n')
    .replace(/\t/g, '\\t')
    .replace(/\r/g, '\\r');
  return `"${escaped}"`;
}

/** An `ExecStart=` value from an argv (`<trigger-bin> trigger <app>.<job> --spec-dir <dir>`). */
export function execLine(argv: readonly string[]): string {
  return argv.map(execArg).join(' ');
}

/** Everything that decides the content of one entry's two files. */
export interface UnitInput {
  /** `cronix-<app>-<job>-<index>`. */
  id: string;
  app: string;
  job: string;
  scheduleIndex: number;
  hash: string;
  /** The schedule as written and the job's zone, for the description. */
  schedule: string;
  timezone: string;
  policy: Job['policy'];
  /** A command job's `graceful_stop_seconds` (0 for HTTP): part of `RuntimeMaxSec=`. */
  stopSeconds?: number;
  /** The `ExecStart=` value ({@link execLine}). */
  execStart: string;
  /** The `OnCalendar=` expressions. */
  calendar: readonly string[];
  /** `Persistent=` (false for catch-up mode `none`). */
  persistent: boolean;
  /** `RandomizedDelaySec=` in seconds, 0 for none (jitter `random_seconds`). */
  randomizedDelaySeconds: number;
  /** `AccuracySec=`: `1s`, or `1us` for a seconds schedule (see `accuracySec`); default `1s`. */
  accuracy?: '1s' | '1us';
}

/**
 * The unit name (without suffix) of (app, job, index): `cronix-<app>_<job>-<index>`. App and job
 * names never hold `_`, so the name is unambiguous — the older `cronix-<app>-<job>-<index>` was
 * the same for app `a` + job `b-c` and app `a-b` + job `c`. Units still carrying the old name
 * are listed as modified and renamed by the next apply ({@link legacyUnitName}).
 */
export function unitName(app: string, job: string, scheduleIndex: number): string {
  return `cronix-${app}_${job}-${scheduleIndex}`;
}

/** The unit name used before 0.2 (and by the public cronix reconciler): `cronix-<app>-<job>-<index>`. */
export function legacyUnitName(app: string, job: string, scheduleIndex: number): string {
  return `cronix-${app}-${job}-${scheduleIndex}`;
}

/** The service file name and timer file name of a unit name. */
export function unitFileNames(name: string): { service: string; timer: string } {
  return { service: `${name}.service`, timer: `${name}.timer` };
}

function withMarker(input: UnitInput, body: string): string {
  return `${formatMarker(input, body)}\n${body}`;
}

/** The `.service` file of an entry (marker line first). */
export function renderService(input: UnitInput): string {
  const seconds = runtimeMaxSeconds(input.policy, input.stopSeconds ?? 0);
  const name = unitName(input.app, input.job, input.scheduleIndex);
  const body = [
    '# Managed by `cronix apply`: changes here are overwritten. Drop-ins in',
    `# ${name}.service.d/ (User=, EnvironmentFile= for secrets) are kept.`,
    '[Unit]',
    `Description=${specifiers(`cronix ${input.app}.${input.job} (schedule ${input.scheduleIndex}: ${input.schedule})`)}`,
    '',
    '[Service]',
    'Type=oneshot',
    `ExecStart=${input.execStart}`,
    '# Worst-case fire (all attempts, timeouts and backoffs) + 30 s. A oneshot is bounded',
    '# by TimeoutStartSec= (RuntimeMaxSec= has no effect with Type=oneshot).',
    `TimeoutStartSec=${seconds}`,
    '',
  ].join('\n');
  return withMarker(input, body);
}

/** The `.timer` file of an entry (marker line first). */
export function renderTimer(input: UnitInput): string {
  const body = [
    '# Managed by `cronix apply`: changes here are overwritten.',
    '[Unit]',
    `Description=${specifiers(`cronix ${input.app}.${input.job} schedule ${input.scheduleIndex}: ${input.schedule} (${input.timezone})`)}`,
    '',
    '[Timer]',
    ...input.calendar.map((c) => `OnCalendar=${c}`),
    `Persistent=${input.persistent ? 'true' : 'false'}`,
    `AccuracySec=${input.accuracy ?? '1s'}`,
    ...(input.randomizedDelaySeconds > 0
      ? [`RandomizedDelaySec=${input.randomizedDelaySeconds}`]
      : []),
    `Unit=${unitName(input.app, input.job, input.scheduleIndex)}.service`,
    '',
    '[Install]',
    'WantedBy=timers.target',
    '',
  ].join('\n');
  return withMarker(input, body);
}

/** The value of the first `Key=` line of a unit file body, or undefined. */
export function unitSetting(body: string, key: string): string | undefined {
  const prefix = `${key}=`;
  for (const line of body.split('\n'))
    if (line.startsWith(prefix)) return line.slice(prefix.length);
  return undefined;
}
