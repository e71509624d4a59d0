/**
 * Types of the normalized manifest (SPEC §2 normalization): every v1 default filled in, jobs
 * sorted by name, `schedule` rewritten as `schedules`, header keys sorted. Extension fields
 * (§8) are present only when the input set them; `effectivePolicy` supplies their defaults.
 */
import type { CatchupMode, Concurrency, ConcurrencyScope, HttpMethod } from './defaults.js';

export type { CatchupMode, Concurrency, ConcurrencyScope, HttpMethod } from './defaults.js';

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
  /** The HTTP request. */
  request: JobRequest;
  /** The policy. */
  policy: JobPolicy;
  /** Signing settings. */
  auth: JobAuth;
  /** Extension: `false` disables the job (present only when set). */
  enabled?: boolean;
}

/** A normalized manifest. */
export interface Manifest {
  /** Always 1. */
  version: 1;
  /** Application name. */
  app: string;
  /** Jobs sorted by name. */
  jobs: Job[];
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
