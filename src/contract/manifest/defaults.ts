/**
 * Limits, enumerations and default values of the manifest (SPEC §2, §8).
 *
 * The TypeBox schema (`schema.ts`), normalization and the effective-policy helpers all read
 * these constants, so a bound or a default is written down exactly once.
 */

/** Pattern of `app` and `jobs[].name`. */
export const NAME_PATTERN = '^[a-z][a-z0-9-]{0,62}$';

/** Pattern of one `auth.secret_refs` entry. */
export const SECRET_REF_PATTERN = '^[a-zA-Z][a-zA-Z0-9_:./-]{0,127}$';

/** Pattern of a request header name: an HTTP token (RFC 9110 §5.6.2). */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

/** Pattern of a request header value: any string without CR, LF or NUL. */
export const HEADER_VALUE_PATTERN = '^[^\\r\\n\\u0000]*$';

/** Pattern of an environment variable name in `command.env` and `command.env_from_secrets`. */
export const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

/** Pattern of an argv entry and an env value: any string without NUL (the OS cannot pass one). */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

/** Prefix of the environment variables cronix sets for a command (SPEC §11); a job may not set them. */
export const RESERVED_ENV_PREFIX = 'CRONIX_';

/** HTTP methods a job may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Overlap policies: the three of v1 plus `Enqueue` (§8). */
export const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace', 'Enqueue'] as const;

/** Where a concurrency lock lives. */
export const CONCURRENCY_SCOPES = ['host', 'global'] as const;

/** Catch-up modes after downtime (§8). */
export const CATCHUP_MODES = ['none', 'latest', 'all'] as const;

/** Kinds of notifier (SPEC §12). */
export const NOTIFIER_TYPES = ['webhook', 'smtp'] as const;

/** Events a job may notify about (SPEC §12). */
export const NOTIFY_EVENTS = ['failed', 'missed', 'recovered', 'slow'] as const;

/** Pattern of an e-mail address of an SMTP notifier (deliberately loose: `local@domain`). */
export const EMAIL_PATTERN = '^[^\\s@<>,;]+@[^\\s@<>,;]+$';

/** Pattern of an SMTP host name or address: no whitespace, no slash. */
export const HOST_PATTERN = '^[^\\s/]+$';

/** A notifier type. */
export type NotifierType = (typeof NOTIFIER_TYPES)[number];
/** A notification event. */
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** An HTTP method a job may use. */
export type HttpMethod = (typeof HTTP_METHODS)[number];
/** An overlap policy. */
export type Concurrency = (typeof CONCURRENCY_POLICIES)[number];
/** A concurrency lock scope. */
export type ConcurrencyScope = (typeof CONCURRENCY_SCOPES)[number];
/** A catch-up mode. */
export type CatchupMode = (typeof CATCHUP_MODES)[number];

/** Numeric bounds of the manifest (inclusive). */
export const LIMITS = {
  /** 1..256; 0..256 when the manifest has `services` (SPEC §17). */
  jobs: { min: 1, max: 256 },
  schedules: { min: 1, max: 64 },
  description: { max: 500 },
  /** Any job; an HTTP job is held to {@link LIMITS.httpTimeoutSeconds} (semantic.ts). */
  timeoutSeconds: { min: 1, max: 86_400 },
  /** The v1 bound of an HTTP request's deadline; command jobs may run up to a day. */
  httpTimeoutSeconds: { min: 1, max: 600 },
  maxAttempts: { min: 1, max: 10 },
  minSeconds: { min: 0 },
  maxSeconds: { min: 1 },
  /**
   * SPEC §2 says 1..8 with default `[]`; an explicit empty list is accepted (same as absent) so
   * that every normalized manifest, whose canonical form writes `"secret_refs":[]`, parses again.
   */
  secretRefs: { min: 0, max: 8 },
  maxConcurrent: { min: 1, max: 1024 },
  queueMax: { min: 0, max: 10_000 },
  catchupWindowSeconds: { min: 0 },
  catchupMaxRuns: { min: 1, max: 1000 },
  jitterSeconds: { min: 0, max: 3600 },
  /** `policy.watch.grace_seconds` (SPEC §15; the same bounds as `WATCH_GRACE` of report.ts). */
  watchGraceSeconds: { min: 10, max: 86_400 },
  argv: { min: 1, max: 1024 },
  commandEnv: { max: 256 },
  envFromSecrets: { max: 64 },
  headersFromSecrets: { max: 64 },
  gracefulStopSeconds: { min: 0, max: 3600 },
  maxOutputBytes: { min: 0, max: 1024 * 1024 * 1024 },
  exitCode: { min: 0, max: 255 },
  exitCodes: { max: 256 },
  notifiers: { max: 32 },
  notify: { max: 8 },
  port: { min: 1, max: 65535 },
  mailTo: { min: 1, max: 32 },
  slowAfterSeconds: { min: 1, max: 7 * 86_400 },
  repeatEverySeconds: { min: 1, max: 7 * 86_400 },
  /** Services of one manifest (SPEC §17). */
  services: { max: 64 },
  instances: { min: 1, max: 64 },
  restartSeconds: { min: 0, max: 86_400 },
  resetAfterSeconds: { min: 1, max: 86_400 },
  crashLoopExits: { min: 2, max: 100 },
  crashLoopWindowSeconds: { min: 1, max: 86_400 },
  readyTimeoutSeconds: { min: 1, max: 3600 },
} as const;

/** Bounds of `policy.blackout` (SPEC §16 "Calendars"). */
export const BLACKOUT_LIMITS = {
  /** Windows of one job. */
  windows: { min: 1, max: 32 },
  /** A recurring window's length: 1 s to 366 days. */
  durationSeconds: { min: 1, max: 366 * 86_400 },
  /** Characters of a `dates_file` path. */
  path: { max: 4096 },
} as const;

/** Defaults of the v1 fields; normalization always fills them in. */
export const V1_DEFAULTS = {
  timezone: 'UTC',
  method: 'POST' as HttpMethod,
  body: '',
  concurrency: 'Forbid' as Concurrency,
  concurrency_scope: 'host' as ConcurrencyScope,
  timeout_seconds: 60,
  max_attempts: 3,
  min_seconds: 1,
  max_seconds: 60,
} as const;

/**
 * Defaults of the extension fields (§8). Normalization does not fill them in (they stay absent
 * so a plain v1 manifest keeps its v1 canonical form); `effectivePolicy` and `isJobEnabled`
 * apply them.
 */
export const EXTENSION_DEFAULTS = {
  max_concurrent: 1,
  queue_max: 100,
  catchup_mode: 'latest' as CatchupMode,
  /** `null` means an unlimited window. */
  catchup_window_seconds: null,
  catchup_max_runs: 100,
  jitter_stable_seconds: 0,
  jitter_random_seconds: 0,
  watch_grace_seconds: 120,
  enabled: true,
} as const;

/**
 * Defaults of `jobs[].command` (SPEC §11). Like the other extension defaults they are not filled
 * in by normalization (the canonical form shows what the input set); `effectiveCommand` applies
 * them.
 */
export const COMMAND_DEFAULTS = {
  graceful_stop_seconds: 10,
  max_output_bytes: 1024 * 1024,
  success_exit_codes: [0] as readonly number[],
  reject_exit_codes: [] as readonly number[],
} as const;

/**
 * Defaults of `notify` entries and SMTP notifiers (SPEC §12). Like the other extension defaults
 * they are not filled in by normalization; `effectiveNotify` / `effectiveNotifier` apply them.
 */
export const NOTIFY_DEFAULTS = {
  on: ['failed', 'missed', 'recovered'] as readonly NotifyEvent[],
  slow_after_seconds: 600,
  repeat_every_seconds: 3600,
  smtp_port: 587,
  starttls: true,
} as const;

/** Header-name prefix (lower case) of the headers the engine sets on every attempt (SPEC §5.7). */
export const RESERVED_HEADER_PREFIX = 'x-cron-';

/** Exact header names (lower case) the engine injects and a manifest may not override. */
export const ENGINE_HEADERS = ['idempotency-key', 'traceparent'] as const;

/** Exact header names (lower case) owned by the HTTP client: framing and hop-by-hop headers. */
export const TRANSPORT_HEADERS = [
  'connection',
  'content-length',
  'expect',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
] as const;

/**
 * Defaults of `services` (SPEC §17). Like the other extension defaults they are not filled in by
 * normalization; `effectiveService` applies them. A crash loop is `crash_loop_exits` exits within
 * `crash_loop_window_seconds`.
 */
export const SERVICE_DEFAULTS = {
  instances: 1,
  min_seconds: 1,
  max_seconds: 60,
  reset_after_seconds: 60,
  crash_loop_exits: 3,
  crash_loop_window_seconds: 60,
  graceful_stop_seconds: 10,
  max_output_bytes: 1024 * 1024,
  ready_timeout_seconds: 60,
} as const;

/** Events a service may notify about: a crash loop and its end (SPEC §17). */
export const SERVICE_NOTIFY_EVENTS = ['failed', 'recovered'] as const;

/** The placeholder of a readiness address replaced by the instance index (SPEC §17). */
export const INSTANCE_PLACEHOLDER = '{instance}';
