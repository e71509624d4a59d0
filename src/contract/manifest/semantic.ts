/**
 * Semantic checks of a manifest: rules beyond the JSON structure (SPEC §2, §3, §8). They walk
 * the raw value defensively and run even when other parts are structurally invalid, so every
 * problem is reported in one pass.
 */
import { checkTimeZone, parseSchedule } from '../schedule/index.js';
import {
  CATCHUP_MODES,
  CONCURRENCY_POLICIES,
  LIMITS,
  V1_DEFAULTS,
  EXTENSION_DEFAULTS,
} from './defaults.js';
import { childPath, isRecord, own, quote } from './describe.js';
import { checkBlackout } from './blackout-rules.js';
import { checkCommand } from './command-rules.js';
import { checkNotifications } from './notify-rules.js';
import { checkReservedHeader, checkUrl } from './request-rules.js';
import { checkServices } from './service-rules.js';
import type { ManifestError } from './types.js';

/** Collects errors; `add` keeps the call sites short. */
class Collector {
  readonly errors: ManifestError[] = [];
  add(path: string, message: string): void {
    this.errors.push({ path, message });
  }
}

/** `value` when it is an integer within the bounds, else undefined. */
function boundedInt(value: unknown, min: number, max = Number.MAX_VALUE): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
    ? value
    : undefined;
}

/** `value` when it is one of `options`, else undefined. */
function oneOf<T extends string>(value: unknown, options: readonly T[]): T | undefined {
  return typeof value === 'string' && (options as readonly string[]).includes(value)
    ? (value as T)
    : undefined;
}

function checkSchedule(out: Collector, path: string, expression: unknown): void {
  if (typeof expression !== 'string') return;
  let message: string | null;
  try {
    const parsed = parseSchedule(expression);
    message = parsed.ok ? null : parsed.error;
  } catch (err) {
    message = `could not check schedule ${quote(expression)}: ${err instanceof Error ? err.message : 'unexpected error'}`;
  }
  if (message !== null) out.add(path, `invalid schedule: ${message}`);
}

function checkSchedules(out: Collector, job: Record<string, unknown>, path: string): void {
  const schedule = own(job, 'schedule');
  const schedules = own(job, 'schedules');
  if (schedule === undefined && schedules === undefined) {
    out.add(path, 'expected exactly one of "schedule" or "schedules", found neither');
  } else if (schedule !== undefined && schedules !== undefined) {
    out.add(path, 'expected exactly one of "schedule" or "schedules", found both; keep one');
  }
  checkSchedule(out, childPath(path, 'schedule'), schedule);
  if (Array.isArray(schedules)) {
    const seen = new Map<string, number>();
    const count = Math.min(schedules.length, LIMITS.schedules.max);
    for (let k = 0; k < count; k++) {
      const entry: unknown = schedules[k];
      const entryPath = childPath(childPath(path, 'schedules'), k);
      checkSchedule(out, entryPath, entry);
      if (typeof entry !== 'string') continue;
      const first = seen.get(entry.trim());
      if (first === undefined) seen.set(entry.trim(), k);
      else out.add(entryPath, `duplicate schedule ${quote(entry)}: schedules/${first} is the same`);
    }
  }
}

function checkTimezone(out: Collector, job: Record<string, unknown>, path: string): void {
  const timezone = own(job, 'timezone');
  if (typeof timezone !== 'string') return;
  let message: string | null;
  try {
    message = checkTimeZone(timezone);
  } catch {
    message = `could not check time zone ${quote(timezone)}`;
  }
  if (message !== null) out.add(childPath(path, 'timezone'), message);
}

function checkRequest(out: Collector, request: unknown, path: string): void {
  const url = own(request, 'url');
  if (typeof url === 'string') {
    const message = checkUrl(url);
    if (message !== null) out.add(childPath(path, 'url'), message);
  }
  // static headers, then those from secrets: one namespace, ignoring letter case
  const seen = new Map<string, string>();
  for (const field of ['headers', 'headers_from_secrets'] as const) {
    const headers = own(request, field);
    if (!isRecord(headers)) continue;
    const fieldPath = childPath(path, field);
    for (const name of Object.keys(headers)) {
      const reserved = checkReservedHeader(name);
      if (reserved !== null) out.add(childPath(fieldPath, name), reserved);
      const lower = name.toLowerCase();
      const first = seen.get(lower);
      if (first === undefined) {
        seen.set(lower, `${field}/${name}`);
      } else if (first.startsWith('headers/') && field === 'headers_from_secrets') {
        out.add(
          childPath(fieldPath, name),
          `header ${quote(name)} is also set in headers (${quote(first.slice(8))}); set it in one of headers and headers_from_secrets`,
        );
      } else {
        out.add(
          childPath(fieldPath, name),
          `duplicate header ${quote(name)}: header names ignore letter case and ${quote(first.slice(first.indexOf('/') + 1))} is already set`,
        );
      }
    }
  }
}

function checkRetries(out: Collector, retries: unknown, path: string): void {
  if (retries !== undefined && !isRecord(retries)) return;
  const rawMin = own(retries, 'min_seconds');
  const rawMax = own(retries, 'max_seconds');
  const min =
    rawMin === undefined ? V1_DEFAULTS.min_seconds : boundedInt(rawMin, LIMITS.minSeconds.min);
  const max =
    rawMax === undefined ? V1_DEFAULTS.max_seconds : boundedInt(rawMax, LIMITS.maxSeconds.min);
  if (min === undefined || max === undefined || min <= max) return;
  const minText = rawMin === undefined ? `${min} (the default)` : String(min);
  const maxText = rawMax === undefined ? `${max} (the default)` : String(max);
  out.add(
    path,
    `expected min_seconds ≤ max_seconds, found min_seconds ${minText} > max_seconds ${maxText}`,
  );
}

function checkPolicy(out: Collector, policy: unknown, path: string, http: boolean): void {
  if (policy !== undefined && !isRecord(policy)) return;
  checkRetries(out, own(policy, 'retries'), childPath(path, 'retries'));
  checkBlackout((p, m) => out.add(p, m), own(policy, 'blackout'), childPath(path, 'blackout'));
  const timeout = own(policy, 'timeout_seconds');
  const { max } = LIMITS.httpTimeoutSeconds;
  if (http && typeof timeout === 'number' && Number.isInteger(timeout) && timeout > max) {
    out.add(
      childPath(path, 'timeout_seconds'),
      `expected an integer from 1 to ${max} for an HTTP job (only command jobs may run up to ${LIMITS.timeoutSeconds.max}), found ${timeout}`,
    );
  }
  const rawConcurrency = own(policy, 'concurrency');
  const concurrency =
    rawConcurrency === undefined
      ? V1_DEFAULTS.concurrency
      : oneOf(rawConcurrency, CONCURRENCY_POLICIES);
  const concurrencyText =
    rawConcurrency === undefined ? `"${concurrency}" (the default)` : `"${concurrency}"`;
  if (concurrency === 'Allow' && own(policy, 'max_concurrent') !== undefined) {
    out.add(
      childPath(path, 'max_concurrent'),
      'max_concurrent does not apply to concurrency "Allow", which never limits active runs; remove it or choose Forbid, Replace or Enqueue',
    );
  }
  if (
    concurrency !== undefined &&
    concurrency !== 'Enqueue' &&
    own(policy, 'queue_max') !== undefined
  ) {
    out.add(
      childPath(path, 'queue_max'),
      `queue_max only applies to concurrency "Enqueue", found concurrency ${concurrencyText}; remove it or set concurrency to "Enqueue"`,
    );
  }
  const catchup = own(policy, 'catchup');
  if (!isRecord(catchup) || own(catchup, 'max_runs') === undefined) return;
  const rawMode = own(catchup, 'mode');
  const mode =
    rawMode === undefined ? EXTENSION_DEFAULTS.catchup_mode : oneOf(rawMode, CATCHUP_MODES);
  if (mode !== undefined && mode !== 'all') {
    const modeText = rawMode === undefined ? `"${mode}" (the default)` : `"${mode}"`;
    out.add(
      childPath(childPath(path, 'catchup'), 'max_runs'),
      `max_runs only applies to catch-up mode "all", found mode ${modeText}; remove it or set mode to "all"`,
    );
  }
}

function checkJob(
  out: Collector,
  job: Record<string, unknown>,
  path: string,
  names: Map<string, number>,
  index: number,
): void {
  const name = own(job, 'name');
  if (typeof name === 'string') {
    const first = names.get(name);
    if (first === undefined) names.set(name, index);
    else
      out.add(
        childPath(path, 'name'),
        `duplicate job name ${quote(name)}: jobs/${first} already uses it`,
      );
  }
  checkSchedules(out, job, path);
  checkTimezone(out, job, path);
  const request = own(job, 'request');
  const command = own(job, 'command');
  if (request === undefined && command === undefined) {
    out.add(path, 'expected exactly one of "request" (an HTTP job) or "command", found neither');
  } else if (request !== undefined && command !== undefined) {
    out.add(
      path,
      'expected exactly one of "request" (an HTTP job) or "command", found both; keep one',
    );
  }
  if (isRecord(request)) checkRequest(out, request, childPath(path, 'request'));
  checkCommand((p, m) => out.add(p, m), command, childPath(path, 'command'));
  checkManual(out, own(job, 'manual'), request !== undefined, command, childPath(path, 'manual'));
  checkPolicy(
    out,
    own(job, 'policy'),
    childPath(path, 'policy'),
    request !== undefined && command === undefined,
  );
}

/**
 * `manual` (SPEC §16): `allow_body` only for an HTTP job, `env_allowlist` only for a command job
 * and never a name of its `env_from_secrets` (a trigger must not replace a secret).
 */
function checkManual(
  out: Collector,
  manual: unknown,
  isHttp: boolean,
  command: unknown,
  path: string,
): void {
  if (!isRecord(manual)) return;
  if (manual['allow_body'] === true && !isHttp)
    out.add(childPath(path, 'allow_body'), 'allow_body is for HTTP jobs (a request body)');
  const allow = manual['env_allowlist'];
  if (!Array.isArray(allow) || allow.length === 0) return;
  if (!isRecord(command)) {
    out.add(childPath(path, 'env_allowlist'), 'env_allowlist is for command jobs');
    return;
  }
  const secret = command['env_from_secrets'];
  allow.forEach((name, i) => {
    if (typeof name === 'string' && isRecord(secret) && Object.hasOwn(secret, name))
      out.add(
        childPath(childPath(path, 'env_allowlist'), String(i)),
        `${quote(name)} is set from a secret (command.env_from_secrets); a manual trigger may not replace it`,
      );
  });
}

/**
 * Runs every semantic check on an untrusted value. Only the first `LIMITS.jobs.max` jobs and
 * `LIMITS.schedules.max` schedules per job are examined (more is a structural error anyway).
 */
export function checkSemantics(raw: unknown): ManifestError[] {
  const out = new Collector();
  checkNotifications((p, m) => out.add(p, m), raw, LIMITS.jobs.max);
  checkServices((p, m) => out.add(p, m), raw);
  const jobs = own(raw, 'jobs');
  if (!Array.isArray(jobs)) return out.errors;
  const names = new Map<string, number>();
  const count = Math.min(jobs.length, LIMITS.jobs.max);
  for (let i = 0; i < count; i++) {
    const job: unknown = jobs[i];
    if (isRecord(job)) checkJob(out, job, childPath('jobs', i), names, i);
  }
  return out.errors;
}
