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

/** Overlap, timeout and retry policy of a job. */
export interface JobPolicy {
  /** Overlap policy (default `Forbid`). */
  concurrency: Concurrency;
  /** Lock scope (default `host`). */
  concurrency_scope: ConcurrencyScope;
  /** Deadline of one attempt in seconds, 1..600 (default 60). */
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
