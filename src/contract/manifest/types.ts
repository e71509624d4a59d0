/**
 * Types of the normalized manifest (SPEC §2 normalization): every v1 default filled in, jobs
 * sorted by name, `schedule` rewritten as `schedules`, header keys sorted. Extension fields
 * (§8) are present only when the input set them; `effectivePolicy` supplies their defaults.
 */
import type {
  CatchupMode,
  Concurrency,
  ConcurrencyScope,
  HttpMethod,
  NotifyEvent,
} from './defaults.js';

export type {
  CatchupMode,
  Concurrency,
  ConcurrencyScope,
  HttpMethod,
  NotifierType,
  NotifyEvent,
} from './defaults.js';

/**
 * One entry of `jobs[].notify` (extension, SPEC §12), as written: only the fields the input
 * set (`effectiveNotify` supplies the defaults).
 */
export interface NotifyEntry {
  /** Name of a notifier of the manifest. */
  to: string;
  /** Events to notify (effective default `failed, missed, recovered`). */
  on?: NotifyEvent[];
  /** Threshold of `slow` (effective default 600). */
  slow_after_seconds?: number;
  /** Grouping interval of repeated failed/missed events (effective default 3600). */
  repeat_every_seconds?: number;
}

/** A webhook notifier as written (SPEC §12). Exactly one of `url` and `url_ref`. */
export interface WebhookNotifier {
  type: 'webhook';
  url?: string;
  url_ref?: string;
  /** Secrets signing each POST; absent or empty: unsigned. */
  secret_refs?: string[];
}

/** An SMTP notifier as written (SPEC §12). */
export interface SmtpNotifier {
  type: 'smtp';
  host: string;
  /** Effective default 587. */
  port?: number;
  from: string;
  to: string[];
  /** Effective default true: STARTTLS required. */
  starttls?: boolean;
  username_ref?: string;
  password_ref?: string;
}

/** A notifier. */
export type Notifier = WebhookNotifier | SmtpNotifier;

/** The HTTP request of a job. */
export interface JobRequest {
  /** HTTP method (default `POST`). */
  method: HttpMethod;
  /** Absolute `http:`/`https:` URL, exactly as written in the manifest. */
  url: string;
  /** Static headers (default `{}`); the canonical form sorts them by code unit. */
  headers: Record<string, string>;
  /** Body sent verbatim on every attempt (default `""`). */
  body: string;
  /**
   * Extension: header name → secret ref, resolved by cronix and sent on every attempt (never
   * shown). Present only when not empty; the canonical form sorts it by code unit.
   */
  headers_from_secrets?: Record<string, string>;
}

/**
 * The command of a command job (extension, SPEC §11), run without a shell. Only the fields the
 * input set are present (`effectiveCommand` supplies the defaults); `env` and `env_from_secrets`
 * keep their keys sorted by code unit.
 */
export interface JobCommand {
  /** Program and arguments, passed to the OS as they are (no shell, no expansion). */
  argv: string[];
  /** Environment variables set for the command (values are not secret). */
  env?: Record<string, string>;
  /** Environment variables whose values come from secret refs, resolved by cronix. */
  env_from_secrets?: Record<string, string>;
  /** Absolute working directory (effective default: the cronix process's HOME, else `/`). */
  cwd?: string;
  /** Seconds between SIGTERM and SIGKILL when the command is stopped (effective default 10). */
  graceful_stop_seconds?: number;
  /** Output bytes kept per run; the rest is dropped (effective default 1 MiB). */
  max_output_bytes?: number;
  /** Exit codes that mean success (effective default `[0]`). */
  success_exit_codes?: number[];
  /** Exit codes that mean the job refused the run: `app_rejected`, no retry (default `[]`). */
  reject_exit_codes?: number[];
}

/** Retry policy of one fire. */
export interface RetryPolicy {
  /** Attempts per fire including the first, 1..10 (default 3). */
  max_attempts: number;
  /** First backoff delay in seconds, ≥ 0 and ≤ `max_seconds` (default 1). */
  min_seconds: number;
  /** Backoff ceiling in seconds, ≥ 1 (default 60). */
  max_seconds: number;
}

/** Catch-up settings as written (extension, §8): only the fields the input set. */
export interface CatchupPolicy {
  /** `none`, `latest` or `all` (effective default `latest`). */
  mode?: CatchupMode;
  /** Window in seconds (effective default: unlimited). */
  window_seconds?: number;
  /** Most missed fires run in mode `all` (effective default 100). */
  max_runs?: number;
}

/** Jitter settings as written (extension, §8): only the fields the input set. */
export interface JitterPolicy {
  /** Stable per-job offset bound in seconds (effective default 0). */
  stable_seconds?: number;
  /** Fresh random delay bound in seconds (effective default 0). */
  random_seconds?: number;
}

/**
 * Host-mode watching as written (extension, SPEC §15): only the fields the input set. It is the
 * watcher's (`cronix serve --watch`) setting, so every backend accepts it.
 */
export interface WatchPolicy {
  /** Seconds after an expected fire before it is recorded `missed`, 10..86,400 (effective default 120). */
  grace_seconds?: number;
}

/** Overlap, timeout and retry policy of a job. */
export interface JobPolicy {
  /** Overlap policy (default `Forbid`). */
  concurrency: Concurrency;
  /** Lock scope (default `host`). */
  concurrency_scope: ConcurrencyScope;
  /** Deadline of one attempt in seconds: 1..600 for HTTP jobs, 1..86,400 for command jobs (default 60). */
  timeout_seconds: number;
  /** Retry policy. */
  retries: RetryPolicy;
  /** Extension: most active runs (present only when set). */
  max_concurrent?: number;
  /** Extension: queue bound for `Enqueue` (present only when set). */
  queue_max?: number;
  /** Extension: catch-up settings (present only when the input set at least one field). */
  catchup?: CatchupPolicy;
  /** Extension: jitter settings (present only when the input set at least one field). */
  jitter?: JitterPolicy;
  /** Extension: watched-job settings (present only when the input set at least one field). */
  watch?: WatchPolicy;
  /** Extension (daemon, SPEC §16): a per-target rate limit on attempts. */
  rate?: RatePolicy;
  /** Extension (daemon, SPEC §16 "Calendars"): blackout windows, in the order written. */
  blackout?: BlackoutWindow[];
}

/** A recurring blackout window: each instant of `cron` starts one lasting `duration_seconds`. */
export interface BlackoutCron {
  cron: string;
  duration_seconds: number;
}

/** A blackout range of instants `[from, to)`, RFC 3339 as written. */
export interface BlackoutRange {
  from: string;
  to: string;
}

/**
 * A holiday list: whole days in the job's zone, read from `dates_file`. `dates` is not part of
 * the manifest: the manifest loader (`src/source/dates-files.ts`) fills it with the file's
 * dates (sorted, each once) when it reads a manifest file; `parseManifest` never sets it and
 * the canonical form leaves it out.
 */
export interface BlackoutDates {
  /** As written: absolute, or relative to the manifest file's directory. */
  dates_file: string;
  /** Filled by the loader: `YYYY-MM-DD` dates, sorted, unique. */
  dates?: readonly string[];
}

/** One window of `policy.blackout`. */
export type BlackoutWindow = BlackoutCron | BlackoutRange | BlackoutDates;

/** `policy.rate`: at most `per_second` attempts in any second across the jobs naming `key`. */
export interface RatePolicy {
  key: string;
  per_second: number;
}

/**
 * A job's policy as written (before defaults): the input of `jobs[].policy`, and the `policy` of
 * the SDK's `defineApp` jobs. A plain interface rather than TypeBox's `Static<typeof
 * PolicySchema>`, so the SDK's published declarations need no TypeBox; `schema.ts` proves at
 * compile time that the two are the same type.
 */
export interface PolicyInput {
  /** Overlap policy (default `Forbid`). */
  concurrency?: Concurrency;
  /** Lock scope (default `host`). */
  concurrency_scope?: ConcurrencyScope;
  /** Deadline of one attempt in seconds: 1..600 for HTTP jobs, 1..86,400 for command jobs (default 60). */
  timeout_seconds?: number;
  /** Retry policy; each field defaults on its own. */
  retries?: Partial<RetryPolicy>;
  /** Extension (daemon): most active runs; not with `Allow`. */
  max_concurrent?: number;
  /** Extension (daemon): queue bound; only with `Enqueue`. */
  queue_max?: number;
  /** Extension (daemon): catch-up after downtime. */
  catchup?: CatchupPolicy;
  /** Extension (daemon): delay fires to spread load. */
  jitter?: JitterPolicy;
  /** Extension (host mode): how `cronix serve --watch` expects the job's reports. */
  watch?: WatchPolicy;
  /** Extension (daemon): a per-target rate limit on attempts. */
  rate?: RatePolicy;
  /** Extension (daemon, SPEC §16 "Calendars"): windows whose fires are recorded `skipped`. */
  blackout?: BlackoutWindowInput[];
}

/**
 * A blackout window as written: exactly one of `{cron, duration_seconds}`, `{from, to}` or
 * `{dates_file}` (the manifest rules report any other mix).
 */
export interface BlackoutWindowInput {
  cron?: string;
  duration_seconds?: number;
  from?: string;
  to?: string;
  dates_file?: string;
}

/** Request signing settings of a job. */
export interface JobAuth {
  /** Secret refs; the first signs (default `[]`). */
  secret_refs: string[];
}

/** One normalized job. */
export interface Job {
  /** Job name, unique within the manifest. */
  name: string;
  /** Schedule expressions in the user's order (a single `schedule` becomes a one-entry list). */
  schedules: string[];
  /** IANA time zone (default `UTC`). */
  timezone: string;
  /** The HTTP request (an HTTP job). Exactly one of `request` and `command` is set. */
  request?: JobRequest;
  /** Extension: the command (a command job, SPEC §11). Exactly one of `request` and `command`. */
  command?: JobCommand;
  /** The policy. */
  policy: JobPolicy;
  /** Signing settings. */
  auth: JobAuth;
  /** Extension: `false` disables the job (present only when set). */
  enabled?: boolean;
  /** Extension: what the job does, for people, at most 500 characters (present only when set). */
  description?: string;
  /** Extension: failure notifications (present only when the input set a non-empty list). */
  notify?: NotifyEntry[];
  /** Extension (daemon): what a manual trigger may carry; present only when it allows something. */
  manual?: JobManual;
}

/** What a manual trigger of a job may carry (SPEC §16 "Run parameters"). */
export interface JobManual {
  /** HTTP jobs: the trigger may give its run's request body (present only when true). */
  allow_body?: true;
  /** Command jobs: the environment names the trigger may set, sorted (present only when not empty). */
  env_allowlist?: string[];
}

/** A normalized manifest. */
export interface Manifest {
  /** Always 1. */
  version: 1;
  /** Application name. */
  app: string;
  /** Jobs sorted by name. */
  jobs: Job[];
  /** Extension: notifiers by name, keys sorted (present only when the input set at least one). */
  notifiers?: Record<string, Notifier>;
  /** Extension: supervised services by name, keys sorted (present only when the input set one, SPEC §17). */
  services?: Record<string, Service>;
}

/** `services.<name>.restart` as written (SPEC §17): only the fields the input set. */
export interface ServiceRestart {
  /** First backoff delay in seconds (effective default 1). */
  min_seconds?: number;
  /** Backoff ceiling in seconds (effective default 60). */
  max_seconds?: number;
  /** Up this long, an instance's backoff starts again from min_seconds (effective default 60). */
  reset_after_seconds?: number;
  /** Exits within the window that make a crash loop (effective default 3). */
  crash_loop_exits?: number;
  /** The crash loop's window in seconds (effective default 60). */
  crash_loop_window_seconds?: number;
}

/** `services.<name>.ready` as written: exactly one of `http_get` and `tcp`. */
export interface ServiceReady {
  /** `http://…` URL answered 2xx when ready; `{instance}` is replaced by the instance index. */
  http_get?: string;
  /** `HOST:PORT` accepting a connection when ready; `{instance}` is replaced likewise. */
  tcp?: string;
  /** Longest wait for readiness after a start (effective default 60). */
  timeout_seconds?: number;
}

/**
 * A supervised service (extension, SPEC §17): a long-running command kept alive with
 * `instances` copies. Only the fields the input set are present (`effectiveService` applies the
 * defaults); `env` and `env_from_secrets` keep their keys sorted by code unit.
 */
export interface Service {
  argv: string[];
  env?: Record<string, string>;
  env_from_secrets?: Record<string, string>;
  cwd?: string;
  instances?: number;
  restart?: ServiceRestart;
  graceful_stop_seconds?: number;
  max_output_bytes?: number;
  ready?: ServiceReady;
  notify?: NotifyEntry[];
}

/**
 * One validation problem. `path` is slash-joined from the root (`jobs/0/policy/retries`;
 * `""` is the root); a `/` or `~` inside a key is escaped as `~1` / `~0` (RFC 6901).
 */
export interface ManifestError {
  /** Location of the problem. */
  path: string;
  /** What was expected and what was found. */
  message: string;
}

/** Result of `parseManifest`: the normalized manifest, or every problem found. */
export type ManifestParseResult =
  { ok: true; manifest: Manifest } | { ok: false; errors: ManifestError[] };
