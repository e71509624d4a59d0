/**
 * The canonical form (SPEC §2): the normalized manifest as compact JSON with keys in one fixed
 * order. Written by explicit construction, never from an object's own key order, so the bytes
 * depend only on the values. Extension fields (§8) appear only when set, after the v1 keys of
 * their object, so a plain v1 manifest canonicalizes exactly like the public v1 reference.
 */
import { compareCodeUnits } from './normalize.js';
import type {
  BlackoutWindow,
  Job,
  JobCommand,
  JobManual,
  JobPolicy,
  JobRequest,
  Manifest,
  Notifier,
  NotifyEntry,
  Service,
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

/** The request: `method, url, headers, body`, then the extension `headers_from_secrets` when set. */
function writeRequest(request: JobRequest): string {
  const secrets =
    request.headers_from_secrets === undefined
      ? ''
      : `,"headers_from_secrets":${writeHeaders(request.headers_from_secrets)}`;
  return (
    `{"method":${lit(request.method)},"url":${lit(request.url)},` +
    `"headers":${writeHeaders(request.headers)},"body":${lit(request.body)}${secrets}}`
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
  if (policy.watch !== undefined) {
    out += `,"watch":${writeSubObject([['grace_seconds', policy.watch.grace_seconds]])}`;
  }
  if (policy.rate !== undefined)
    out += `,"rate":{"key":${lit(policy.rate.key)},"per_second":${lit(policy.rate.per_second)}}`;
  if (policy.blackout !== undefined)
    out += `,"blackout":[${policy.blackout.map(writeWindow).join(',')}]`;
  return `${out}}`;
}

/**
 * A blackout window: `cron, duration_seconds`, `from, to` or `dates_file` (the dates the loader
 * read are not part of the canonical form: a holiday list changes no run key).
 */
function writeWindow(w: BlackoutWindow): string {
  if ('cron' in w) return `{"cron":${lit(w.cron)},"duration_seconds":${lit(w.duration_seconds)}}`;
  if ('from' in w) return `{"from":${lit(w.from)},"to":${lit(w.to)}}`;
  return `{"dates_file":${lit(w.dates_file)}}`;
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
  const manual = job.manual === undefined ? '' : `,"manual":${writeManual(job.manual)}`;
  return (
    `{"name":${lit(job.name)},"schedules":[${job.schedules.map(lit).join(',')}],` +
    `"timezone":${lit(job.timezone)},${request}` +
    `"policy":${writePolicy(job.policy)},"auth":{"secret_refs":[${job.auth.secret_refs.map(lit).join(',')}]}` +
    `${optionalFields([
      ['enabled', job.enabled],
      ['description', job.description],
    ])}${command}${notify}${manual}}`
  );
}

/** `manual`: `allow_body`, then `env_allowlist` (sorted), each when set. */
function writeManual(manual: JobManual): string {
  const parts: string[] = [];
  if (manual.allow_body) parts.push('"allow_body":true');
  if (manual.env_allowlist)
    parts.push(`"env_allowlist":[${manual.env_allowlist.map(lit).join(',')}]`);
  return `{${parts.join(',')}}`;
}

/**
 * A service (SPEC §17): `argv`, then the fields set, in the order `env, env_from_secrets, cwd,
 * instances, restart, graceful_stop_seconds, max_output_bytes, ready, notify`. Also what a reload
 * compares to tell a changed service from a kept one.
 */
export function canonicalService(service: Service): string {
  let out = `{"argv":${writeStrings(service.argv)}`;
  if (service.env !== undefined) out += `,"env":${writeHeaders(service.env)}`;
  if (service.env_from_secrets !== undefined)
    out += `,"env_from_secrets":${writeHeaders(service.env_from_secrets)}`;
  out += optionalFields([
    ['cwd', service.cwd],
    ['instances', service.instances],
  ]);
  if (service.restart !== undefined) {
    const r = service.restart;
    out += `,"restart":${writeSubObject([
      ['min_seconds', r.min_seconds],
      ['max_seconds', r.max_seconds],
      ['reset_after_seconds', r.reset_after_seconds],
      ['crash_loop_exits', r.crash_loop_exits],
      ['crash_loop_window_seconds', r.crash_loop_window_seconds],
    ])}`;
  }
  out += optionalFields([
    ['graceful_stop_seconds', service.graceful_stop_seconds],
    ['max_output_bytes', service.max_output_bytes],
  ]);
  if (service.ready !== undefined) {
    const r = service.ready;
    out += `,"ready":${writeSubObject([
      ['http_get', r.http_get],
      ['tcp', r.tcp],
      ['timeout_seconds', r.timeout_seconds],
    ])}`;
  }
  if (service.notify !== undefined)
    out += `,"notify":[${service.notify.map(writeNotify).join(',')}]`;
  return `${out}}`;
}

/**
 * The canonical form of a normalized manifest: compact JSON, keys in the SPEC order (`version,
 * app, jobs`, then the extensions `notifiers`, `services` when set), jobs
 * sorted by name and header keys sorted by code unit (both re-sorted here, so a manifest built
 * in code canonicalizes the same as a parsed one).
 */
export function canonicalize(manifest: Manifest): string {
  const jobs = [...manifest.jobs].sort((a, b) => compareCodeUnits(a.name, b.name));
  const notifiers =
    manifest.notifiers === undefined ? '' : `,"notifiers":${writeNotifiers(manifest.notifiers)}`;
  const names = Object.keys(manifest.services ?? {}).sort(compareCodeUnits);
  const services =
    manifest.services === undefined
      ? ''
      : `,"services":{${names.map((n) => `${lit(n)}:${canonicalService(manifest.services![n] as Service)}`).join(',')}}`;
  return `{"version":1,"app":${lit(manifest.app)},"jobs":[${jobs.map(canonicalJob).join(',')}]${notifiers}${services}}`;
}
