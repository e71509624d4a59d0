/**
 * The canonical form (SPEC §2): the normalized manifest as compact JSON with keys in one fixed
 * order. Written by explicit construction, never from an object's own key order, so the bytes
 * depend only on the values. Extension fields (§8) appear only when set, after the v1 keys of
 * their object, so a plain v1 manifest canonicalizes exactly like the public v1 reference.
 */
import { compareCodeUnits } from './normalize.js';
import type {
  Job,
  JobCommand,
  JobPolicy,
  JobRequest,
  Manifest,
  Notifier,
  NotifyEntry,
} from './types.js';

/** One JSON string or number. */
function lit(value: string | number | boolean): string {
  return JSON.stringify(value);
}

/** `"key":value` for each field that is set, in the given order. */
function optionalFields(
  fields: readonly (readonly [string, string | number | boolean | undefined])[],
): string {
  return fields
    .filter(
      (entry): entry is readonly [string, string | number | boolean] => entry[1] !== undefined,
    )
    .map(([key, value]) => `,${lit(key)}:${lit(value)}`)
    .join('');
}

function writeHeaders(headers: Readonly<Record<string, string>>): string {
  const keys = Object.keys(headers).sort(compareCodeUnits);
  return `{${keys.map((key) => `${lit(key)}:${lit(headers[key] ?? '')}`).join(',')}}`;
}

function writeRequest(request: JobRequest): string {
  return (
    `{"method":${lit(request.method)},"url":${lit(request.url)},` +
    `"headers":${writeHeaders(request.headers)},"body":${lit(request.body)}}`
  );
}

function writeSubObject(
  fields: readonly (readonly [string, string | number | undefined])[],
): string {
  return `{${optionalFields(fields).slice(1)}}`;
}

function writePolicy(policy: JobPolicy): string {
  const { retries } = policy;
  let out =
    `{"concurrency":${lit(policy.concurrency)},"concurrency_scope":${lit(policy.concurrency_scope)},` +
    `"timeout_seconds":${lit(policy.timeout_seconds)},"retries":{"max_attempts":${lit(retries.max_attempts)},` +
    `"min_seconds":${lit(retries.min_seconds)},"max_seconds":${lit(retries.max_seconds)}}`;
  out += optionalFields([
    ['max_concurrent', policy.max_concurrent],
    ['queue_max', policy.queue_max],
  ]);
  if (policy.catchup !== undefined) {
    const { mode, window_seconds, max_runs } = policy.catchup;
    out += `,"catchup":${writeSubObject([
      ['mode', mode],
      ['window_seconds', window_seconds],
      ['max_runs', max_runs],
    ])}`;
  }
  if (policy.jitter !== undefined) {
    const { stable_seconds, random_seconds } = policy.jitter;
    out += `,"jitter":${writeSubObject([
      ['stable_seconds', stable_seconds],
      ['random_seconds', random_seconds],
    ])}`;
  }
  return `${out}}`;
}

function writeCodes(codes: readonly number[]): string {
  return `[${codes.map(lit).join(',')}]`;
}

/**
 * `command` (SPEC §11): `argv`, then only the fields that were set, in the order `env,
 * env_from_secrets, cwd, graceful_stop_seconds, max_output_bytes, success_exit_codes,
 * reject_exit_codes` (map keys sorted by code unit).
 */
function writeCommand(command: JobCommand): string {
  let out = `{"argv":[${command.argv.map(lit).join(',')}]`;
  if (command.env !== undefined) out += `,"env":${writeHeaders(command.env)}`;
  if (command.env_from_secrets !== undefined)
    out += `,"env_from_secrets":${writeHeaders(command.env_from_secrets)}`;
  out += optionalFields([
    ['cwd', command.cwd],
    ['graceful_stop_seconds', command.graceful_stop_seconds],
    ['max_output_bytes', command.max_output_bytes],
  ]);
  if (command.success_exit_codes !== undefined)
    out += `,"success_exit_codes":${writeCodes(command.success_exit_codes)}`;
  if (command.reject_exit_codes !== undefined)
    out += `,"reject_exit_codes":${writeCodes(command.reject_exit_codes)}`;
  return `${out}}`;
}

function writeStrings(values: readonly string[]): string {
  return `[${values.map(lit).join(',')}]`;
}

/** A notify entry: `to`, then the fields set, in the order `on, slow_after_seconds, repeat_every_seconds`. */
function writeNotify(entry: NotifyEntry): string {
  const on = entry.on === undefined ? '' : `,"on":${writeStrings(entry.on)}`;
  return `{"to":${lit(entry.to)}${on}${optionalFields([
    ['slow_after_seconds', entry.slow_after_seconds],
    ['repeat_every_seconds', entry.repeat_every_seconds],
  ])}}`;
}

/**
 * A notifier: `type`, then the fields set, in the order `url, url_ref, secret_refs` (webhook) or
 * `host, port, from, to, starttls, username_ref, password_ref` (smtp).
 */
export function canonicalNotifier(n: Notifier): string {
  if (n.type === 'webhook') {
    const refs = n.secret_refs === undefined ? '' : `,"secret_refs":${writeStrings(n.secret_refs)}`;
    return `{"type":"webhook"${optionalFields([
      ['url', n.url],
      ['url_ref', n.url_ref],
    ])}${refs}}`;
  }
  return (
    `{"type":"smtp","host":${lit(n.host)}${optionalFields([['port', n.port]])}` +
    `,"from":${lit(n.from)},"to":${writeStrings(n.to)}${optionalFields([
      ['starttls', n.starttls],
      ['username_ref', n.username_ref],
      ['password_ref', n.password_ref],
    ])}}`
  );
}

/** The `notifiers` object, keys sorted by code unit (also the shim spec file's `notifiers`). */
export function writeNotifiers(notifiers: Readonly<Record<string, Notifier>>): string {
  const keys = Object.keys(notifiers).sort(compareCodeUnits);
  return `{${keys.map((k) => `${lit(k)}:${canonicalNotifier(notifiers[k] as Notifier)}`).join(',')}}`;
}

/**
 * The canonical JSON of one job object: `name, schedules, timezone, request, policy, auth`,
 * then the extension fields that are set: `enabled`, `description`, `command`, `notify`. A command job has no `request`
 * (it is the one v1 key a job may lack). This is the `job` object of the shim's spec file (SPEC §5).
 */
export function canonicalJob(job: Job): string {
  const request = job.request === undefined ? '' : `"request":${writeRequest(job.request)},`;
  const command = job.command === undefined ? '' : `,"command":${writeCommand(job.command)}`;
  const notify =
    job.notify === undefined ? '' : `,"notify":[${job.notify.map(writeNotify).join(',')}]`;
  return (
    `{"name":${lit(job.name)},"schedules":[${job.schedules.map(lit).join(',')}],` +
    `"timezone":${lit(job.timezone)},${request}` +
    `"policy":${writePolicy(job.policy)},"auth":{"secret_refs":[${job.auth.secret_refs.map(lit).join(',')}]}` +
    `${optionalFields([
      ['enabled', job.enabled],
      ['description', job.description],
    ])}${command}${notify}}`
  );
}

/**
 * The canonical form of a normalized manifest: compact JSON, keys in the SPEC order, jobs
 * sorted by name and header keys sorted by code unit (both re-sorted here, so a manifest built
 * in code canonicalizes the same as a parsed one).
 */
export function canonicalize(manifest: Manifest): string {
  const jobs = [...manifest.jobs].sort((a, b) => compareCodeUnits(a.name, b.name));
  const notifiers =
    manifest.notifiers === undefined ? '' : `,"notifiers":${writeNotifiers(manifest.notifiers)}`;
  return `{"version":1,"app":${lit(manifest.app)},"jobs":[${jobs.map(canonicalJob).join(',')}]${notifiers}}`;
}
