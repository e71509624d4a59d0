/**
 * Normalization (SPEC §2) of a manifest that passed validation: fill every v1 default, sort
 * jobs by name, rewrite `schedule` as `schedules`, sort header keys. Extension fields (§8) are
 * copied only when the input set them; an extension object that sets nothing (`catchup: {}`)
 * is dropped, so it hashes like an absent one.
 */
import { V1_DEFAULTS } from './defaults.js';
import type {
  CommandInput,
  JobInput,
  ManifestInput,
  NotifierInput,
  NotifyInput,
  PolicyInput,
  ServiceInput,
} from './schema.js';
import type {
  BlackoutWindow,
  CatchupPolicy,
  JitterPolicy,
  WatchPolicy,
  Job,
  JobManual,
  JobCommand,
  JobPolicy,
  Manifest,
  Notifier,
  NotifyEntry,
  Service,
  ServiceReady,
  ServiceRestart,
} from './types.js';

/** Compares strings by UTF-16 code units (the order of the canonical form). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Copies a string map with keys inserted in code-unit order. Keys are defined as own data
 * properties, so a header named `__proto__` stays a header. (Integer-like keys still enumerate
 * first in JavaScript; the canonical writer sorts again and does not depend on this order.)
 */
export function sortedRecord(input: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(input).sort(compareCodeUnits)) {
    Object.defineProperty(out, key, {
      value: input[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function normalizeCatchup(input: PolicyInput['catchup']): CatchupPolicy | undefined {
  if (input === undefined) return undefined;
  const out: CatchupPolicy = {};
  if (input.mode !== undefined) out.mode = input.mode;
  if (input.window_seconds !== undefined) out.window_seconds = input.window_seconds;
  if (input.max_runs !== undefined) out.max_runs = input.max_runs;
  return Object.keys(out).length > 0 ? out : undefined;
}

function normalizeJitter(input: PolicyInput['jitter']): JitterPolicy | undefined {
  if (input === undefined) return undefined;
  const out: JitterPolicy = {};
  if (input.stable_seconds !== undefined) out.stable_seconds = input.stable_seconds;
  if (input.random_seconds !== undefined) out.random_seconds = input.random_seconds;
  return Object.keys(out).length > 0 ? out : undefined;
}

function normalizeWatch(input: PolicyInput['watch']): WatchPolicy | undefined {
  if (input?.grace_seconds === undefined) return undefined;
  return { grace_seconds: input.grace_seconds };
}

/** A blackout window as written, reduced to its kind's fields (the rules checked it is one kind). */
function normalizeWindow(w: NonNullable<PolicyInput['blackout']>[number]): BlackoutWindow {
  if (w.cron !== undefined) return { cron: w.cron, duration_seconds: w.duration_seconds as number };
  if (w.from !== undefined) return { from: w.from, to: w.to as string };
  return { dates_file: w.dates_file as string };
}

function normalizePolicy(input: PolicyInput | undefined): JobPolicy {
  const policy: JobPolicy = {
    concurrency: input?.concurrency ?? V1_DEFAULTS.concurrency,
    concurrency_scope: input?.concurrency_scope ?? V1_DEFAULTS.concurrency_scope,
    timeout_seconds: input?.timeout_seconds ?? V1_DEFAULTS.timeout_seconds,
    retries: {
      max_attempts: input?.retries?.max_attempts ?? V1_DEFAULTS.max_attempts,
      min_seconds: input?.retries?.min_seconds ?? V1_DEFAULTS.min_seconds,
      max_seconds: input?.retries?.max_seconds ?? V1_DEFAULTS.max_seconds,
    },
  };
  if (input?.max_concurrent !== undefined) policy.max_concurrent = input.max_concurrent;
  if (input?.queue_max !== undefined) policy.queue_max = input.queue_max;
  const catchup = normalizeCatchup(input?.catchup);
  if (catchup !== undefined) policy.catchup = catchup;
  const jitter = normalizeJitter(input?.jitter);
  if (jitter !== undefined) policy.jitter = jitter;
  const watch = normalizeWatch(input?.watch);
  if (watch !== undefined) policy.watch = watch;
  if (input?.rate !== undefined)
    policy.rate = { key: input.rate.key, per_second: input.rate.per_second };
  if (input?.blackout !== undefined) policy.blackout = input.blackout.map(normalizeWindow);
  return policy;
}

/**
 * The command as written: only the fields the input set; an empty `env` or `env_from_secrets`
 * map is dropped (it hashes like an absent one); map keys sorted by code unit.
 */
function normalizeCommand(input: CommandInput): JobCommand {
  const out: JobCommand = { argv: [...input.argv] };
  if (input.env !== undefined && Object.keys(input.env).length > 0)
    out.env = sortedRecord(input.env);
  if (input.env_from_secrets !== undefined && Object.keys(input.env_from_secrets).length > 0)
    out.env_from_secrets = sortedRecord(input.env_from_secrets);
  if (input.cwd !== undefined) out.cwd = input.cwd;
  if (input.graceful_stop_seconds !== undefined)
    out.graceful_stop_seconds = input.graceful_stop_seconds;
  if (input.max_output_bytes !== undefined) out.max_output_bytes = input.max_output_bytes;
  if (input.success_exit_codes !== undefined)
    out.success_exit_codes = [...input.success_exit_codes];
  if (input.reject_exit_codes !== undefined) out.reject_exit_codes = [...input.reject_exit_codes];
  return out;
}

/** A notify entry as written: only the fields the input set, `on` in the user's order. */
function normalizeNotify(input: NotifyInput): NotifyEntry {
  const out: NotifyEntry = { to: input.to };
  if (input.on !== undefined) out.on = [...input.on];
  if (input.slow_after_seconds !== undefined) out.slow_after_seconds = input.slow_after_seconds;
  if (input.repeat_every_seconds !== undefined)
    out.repeat_every_seconds = input.repeat_every_seconds;
  return out;
}

/** A notifier as written (semantic checks made sure its type's fields are there). */
export function normalizeNotifier(input: NotifierInput): Notifier {
  if (input.type === 'webhook') {
    return {
      type: 'webhook',
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.url_ref !== undefined ? { url_ref: input.url_ref } : {}),
      ...(input.secret_refs !== undefined && input.secret_refs.length > 0
        ? { secret_refs: [...input.secret_refs] }
        : {}),
    };
  }
  return {
    type: 'smtp',
    host: input.host ?? '',
    ...(input.port !== undefined ? { port: input.port } : {}),
    from: input.from ?? '',
    to: [...(input.to ?? [])],
    ...(input.starttls !== undefined ? { starttls: input.starttls } : {}),
    ...(input.username_ref !== undefined ? { username_ref: input.username_ref } : {}),
    ...(input.password_ref !== undefined ? { password_ref: input.password_ref } : {}),
  };
}

/** Normalizes one valid job (exactly one of `request` and `command` is set). */
export function normalizeJob(input: JobInput): Job {
  const schedules = input.schedules ?? (input.schedule === undefined ? [] : [input.schedule]);
  const request = input.request;
  const job: Job = {
    name: input.name,
    schedules: [...schedules],
    timezone: input.timezone ?? V1_DEFAULTS.timezone,
    // keys in canonical order; `request` only for an HTTP job
    ...(request !== undefined
      ? {
          request: {
            method: request.method ?? V1_DEFAULTS.method,
            url: request.url,
            headers: sortedRecord(request.headers ?? {}),
            body: request.body ?? V1_DEFAULTS.body,
            // an empty map hashes like an absent one
            ...(request.headers_from_secrets !== undefined &&
            Object.keys(request.headers_from_secrets).length > 0
              ? { headers_from_secrets: sortedRecord(request.headers_from_secrets) }
              : {}),
          },
        }
      : {}),
    policy: normalizePolicy(input.policy),
    auth: { secret_refs: [...(input.auth?.secret_refs ?? [])] },
  };
  if (input.enabled !== undefined) job.enabled = input.enabled;
  if (input.description !== undefined) job.description = input.description;
  if (input.command !== undefined) job.command = normalizeCommand(input.command);
  if (input.notify !== undefined && input.notify.length > 0)
    job.notify = input.notify.map(normalizeNotify);
  const manual: JobManual = {
    ...(input.manual?.allow_body === true ? { allow_body: true as const } : {}),
    ...(input.manual?.env_allowlist?.length
      ? { env_allowlist: [...input.manual.env_allowlist].sort(compareCodeUnits) }
      : {}),
  };
  if (Object.keys(manual).length > 0) job.manual = manual;
  return job;
}

/** Copies the fields of `input` that are set, in the order of `keys`. */
function setFields<T extends object>(input: T, keys: readonly (keyof T)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of keys) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

/**
 * A service as written (SPEC §17): only the fields the input set; empty maps, lists and
 * sub-objects are dropped (they hash like absent ones); map keys sorted by code unit.
 */
export function normalizeService(input: ServiceInput): Service {
  const out: Service = { argv: [...input.argv] };
  if (input.env !== undefined && Object.keys(input.env).length > 0)
    out.env = sortedRecord(input.env);
  if (input.env_from_secrets !== undefined && Object.keys(input.env_from_secrets).length > 0)
    out.env_from_secrets = sortedRecord(input.env_from_secrets);
  if (input.cwd !== undefined) out.cwd = input.cwd;
  if (input.instances !== undefined) out.instances = input.instances;
  if (input.restart !== undefined) {
    const restart: ServiceRestart = setFields(input.restart, [
      'min_seconds',
      'max_seconds',
      'reset_after_seconds',
      'crash_loop_exits',
      'crash_loop_window_seconds',
    ]);
    if (Object.keys(restart).length > 0) out.restart = restart;
  }
  if (input.graceful_stop_seconds !== undefined)
    out.graceful_stop_seconds = input.graceful_stop_seconds;
  if (input.max_output_bytes !== undefined) out.max_output_bytes = input.max_output_bytes;
  if (input.ready !== undefined) {
    const ready: ServiceReady = setFields(input.ready, ['http_get', 'tcp', 'timeout_seconds']);
    if (Object.keys(ready).length > 0) out.ready = ready;
  }
  if (input.notify !== undefined && input.notify.length > 0)
    out.notify = input.notify.map(normalizeNotify);
  return out;
}

/** Normalizes a manifest that passed structural and semantic validation. */
export function normalizeManifest(input: ManifestInput): Manifest {
  const jobs = (input.jobs ?? [])
    .map(normalizeJob)
    .sort((a, b) => compareCodeUnits(a.name, b.name));
  const manifest: Manifest = { version: 1, app: input.app, jobs };
  const names = Object.keys(input.notifiers ?? {}).sort(compareCodeUnits);
  if (names.length > 0) {
    const notifiers: Record<string, Notifier> = {};
    for (const name of names)
      Object.defineProperty(notifiers, name, {
        value: normalizeNotifier(input.notifiers![name] as NotifierInput),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    manifest.notifiers = notifiers;
  }
  const serviceNames = Object.keys(input.services ?? {}).sort(compareCodeUnits);
  if (serviceNames.length > 0) {
    const services: Record<string, Service> = {};
    for (const name of serviceNames)
      Object.defineProperty(services, name, {
        value: normalizeService(input.services![name] as ServiceInput),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    manifest.services = services;
  }
  return manifest;
}
