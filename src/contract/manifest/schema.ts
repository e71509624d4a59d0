/**
 * The manifest's structural rules as one TypeBox schema (SPEC §2, §8).
 *
 * The same schema drives the compiled checker of `parseManifest` and the shipped JSON Schema
 * (`schema/manifest.schema.json`, see `json-schema.ts`), so editors and the parser agree.
 * Rules that JSON Schema cannot say well (unique names, schedule syntax, time zones, URLs,
 * reserved headers, cross-field constraints) live in `semantic.ts` and are described here.
 */
import {
  Type,
  type Static,
  type TLiteral,
  type TUnion,
  type SchemaOptions,
} from '@sinclair/typebox';
import {
  CATCHUP_MODES,
  CONCURRENCY_POLICIES,
  COMMAND_DEFAULTS,
  CONCURRENCY_SCOPES,
  EMAIL_PATTERN,
  ENV_NAME_PATTERN,
  EXTENSION_DEFAULTS,
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  HOST_PATTERN,
  HTTP_METHODS,
  LIMITS,
  NAME_PATTERN,
  NO_NUL_PATTERN,
  NOTIFIER_TYPES,
  NOTIFY_DEFAULTS,
  NOTIFY_EVENTS,
  SECRET_REF_PATTERN,
  V1_DEFAULTS,
} from './defaults.js';

/** A union of string literals (rendered as `anyOf` of `const` in JSON Schema). */
function literalUnion<const T extends readonly [string, ...string[]]>(
  values: T,
  options: SchemaOptions,
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<TLiteral<T[number]>[]>;
}

/** An integer field with inclusive bounds. */
function int(min: number, max: number | undefined, options: SchemaOptions) {
  return Type.Integer(
    max === undefined ? { minimum: min, ...options } : { minimum: min, maximum: max, ...options },
  );
}

const ScheduleExpression = Type.String({
  description:
    '5-field cron (min hour dom month dow), 6-field cron with seconds first (sec min hour dom month dow; daemon mode and the systemd backend only), a shortcut (@hourly @daily @midnight @weekly @monthly @yearly @annually) or @every <N>{s|m|h} of at least 1 s (below 60 s: daemon mode and the systemd backend only).',
});

/** `jobs[].request`. */
export const RequestSchema = Type.Object(
  {
    method: Type.Optional(
      literalUnion(HTTP_METHODS, { description: 'HTTP method.', default: V1_DEFAULTS.method }),
    ),
    url: Type.String({
      description:
        'Absolute http:// or https:// URL with a host; no user name or password (keep secrets in auth.secret_refs).',
    }),
    headers: Type.Optional(
      Type.Record(
        Type.String({ pattern: HEADER_NAME_PATTERN }),
        Type.String({
          pattern: HEADER_VALUE_PATTERN,
          description: 'Header value without CR, LF or NUL.',
        }),
        {
          additionalProperties: false,
          description:
            'Static request headers. Names are HTTP tokens, unique ignoring case. X-Cron-*, Idempotency-Key and traceparent are set by cronix and framing/hop-by-hop headers (Content-Length, Transfer-Encoding, Connection, ...) by the HTTP client, so they cannot be set here.',
          default: {},
        },
      ),
    ),
    body: Type.Optional(
      Type.String({
        description: 'Request body, sent verbatim on every attempt.',
        default: V1_DEFAULTS.body,
      }),
    ),
  },
  { additionalProperties: false, description: 'The HTTP request sent at each fire.' },
);

/** A map from environment variable names to strings matching `valuePattern`. */
function envMap(valuePattern: string, maxProperties: number, description: string) {
  return Type.Record(
    Type.String({ pattern: ENV_NAME_PATTERN }),
    Type.String({ pattern: valuePattern }),
    { additionalProperties: false, maxProperties, description, default: {} },
  );
}

/** A list of process exit codes. */
function exitCodes(minItems: number, description: string, defaults: readonly number[]) {
  return Type.Array(int(LIMITS.exitCode.min, LIMITS.exitCode.max, {}), {
    minItems,
    maxItems: LIMITS.exitCodes.max,
    description,
    default: [...defaults],
  });
}

/** `jobs[].command` (extension, SPEC §11). */
export const CommandSchema = Type.Object(
  {
    argv: Type.Array(Type.String({ pattern: NO_NUL_PATTERN }), {
      minItems: LIMITS.argv.min,
      maxItems: LIMITS.argv.max,
      description:
        'Program and arguments, run without a shell (no globbing, pipes or $VAR expansion). argv[0] is a path, or a name looked up in PATH.',
    }),
    env: Type.Optional(
      envMap(
        NO_NUL_PATTERN,
        LIMITS.commandEnv.max,
        'Environment variables of the command (not secret: they are part of the manifest). Names starting with CRONIX_ are reserved.',
      ),
    ),
    env_from_secrets: Type.Optional(
      envMap(
        SECRET_REF_PATTERN,
        LIMITS.envFromSecrets.max,
        'Environment variables whose values are secret refs (env:NAME, file:/path, raw:literal), resolved by cronix at start-up; redacted from captured output.',
      ),
    ),
    cwd: Type.Optional(
      Type.String({
        pattern: NO_NUL_PATTERN,
        description: 'Absolute working directory. Absent: the HOME of cronix, else /.',
      }),
    ),
    graceful_stop_seconds: Type.Optional(
      int(LIMITS.gracefulStopSeconds.min, LIMITS.gracefulStopSeconds.max, {
        description:
          'When the command is stopped (timeout, Replace, cancel): seconds between SIGTERM and SIGKILL to its process group.',
        default: COMMAND_DEFAULTS.graceful_stop_seconds,
      }),
    ),
    max_output_bytes: Type.Optional(
      int(LIMITS.maxOutputBytes.min, LIMITS.maxOutputBytes.max, {
        description: 'Bytes of stdout and stderr kept per run; the rest is dropped.',
        default: COMMAND_DEFAULTS.max_output_bytes,
      }),
    ),
    success_exit_codes: Type.Optional(
      exitCodes(1, 'Exit codes that mean success.', COMMAND_DEFAULTS.success_exit_codes),
    ),
    reject_exit_codes: Type.Optional(
      exitCodes(
        0,
        'Exit codes that mean the job refused the run (app_rejected, no retry). Any other exit code or a signal is retried.',
        COMMAND_DEFAULTS.reject_exit_codes,
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'A command run at each fire, instead of an HTTP request (SPEC §11).',
  },
);

/** `jobs[].policy.retries`. */
export const RetriesSchema = Type.Object(
  {
    max_attempts: Type.Optional(
      int(LIMITS.maxAttempts.min, LIMITS.maxAttempts.max, {
        description: 'Attempts per fire, including the first.',
        default: V1_DEFAULTS.max_attempts,
      }),
    ),
    min_seconds: Type.Optional(
      int(LIMITS.minSeconds.min, undefined, {
        description: 'First backoff delay in seconds; must not exceed max_seconds.',
        default: V1_DEFAULTS.min_seconds,
      }),
    ),
    max_seconds: Type.Optional(
      int(LIMITS.maxSeconds.min, undefined, {
        description:
          'Backoff ceiling in seconds: delay = min(min_seconds * 2^(attempt-1), max_seconds).',
        default: V1_DEFAULTS.max_seconds,
      }),
    ),
  },
  { additionalProperties: false, description: 'Retries of 5xx, network errors and timeouts.' },
);

/** `jobs[].policy.catchup` (extension, §8). */
export const CatchupSchema = Type.Object(
  {
    mode: Type.Optional(
      literalUnion(CATCHUP_MODES, {
        description:
          'Fires missed during downtime: none, only the latest, or all (up to max_runs).',
        default: EXTENSION_DEFAULTS.catchup_mode,
      }),
    ),
    window_seconds: Type.Optional(
      int(LIMITS.catchupWindowSeconds.min, undefined, {
        description: 'Only fires missed within this many seconds are caught up. Absent: unlimited.',
      }),
    ),
    max_runs: Type.Optional(
      int(LIMITS.catchupMaxRuns.min, LIMITS.catchupMaxRuns.max, {
        description: 'Most missed fires run in mode "all"; only valid with mode "all".',
        default: EXTENSION_DEFAULTS.catchup_max_runs,
      }),
    ),
  },
  { additionalProperties: false, description: 'Daemon mode: catch-up after downtime.' },
);

/** `jobs[].policy.jitter` (extension, §8). */
export const JitterSchema = Type.Object(
  {
    stable_seconds: Type.Optional(
      int(LIMITS.jitterSeconds.min, LIMITS.jitterSeconds.max, {
        description:
          'Stable per-job offset, up to this many seconds, from a hash of app/job/index.',
        default: EXTENSION_DEFAULTS.jitter_stable_seconds,
      }),
    ),
    random_seconds: Type.Optional(
      int(LIMITS.jitterSeconds.min, LIMITS.jitterSeconds.max, {
        description: 'Fresh random delay of up to this many seconds at each fire.',
        default: EXTENSION_DEFAULTS.jitter_random_seconds,
      }),
    ),
  },
  { additionalProperties: false, description: 'Daemon mode: delay fires to spread load.' },
);

/** `jobs[].policy`. */
export const PolicySchema = Type.Object(
  {
    concurrency: Type.Optional(
      literalUnion(CONCURRENCY_POLICIES, {
        description:
          'What to do when a run is still active: Allow, Forbid (skip), Replace (stop the old run) or Enqueue (daemon mode).',
        default: V1_DEFAULTS.concurrency,
      }),
    ),
    concurrency_scope: Type.Optional(
      literalUnion(CONCURRENCY_SCOPES, {
        description: 'Lock scope: this host, or global across the fleet (Redis).',
        default: V1_DEFAULTS.concurrency_scope,
      }),
    ),
    timeout_seconds: Type.Optional(
      int(LIMITS.timeoutSeconds.min, LIMITS.timeoutSeconds.max, {
        description: 'Deadline of one attempt in seconds.',
        default: V1_DEFAULTS.timeout_seconds,
      }),
    ),
    retries: Type.Optional(RetriesSchema),
    max_concurrent: Type.Optional(
      int(LIMITS.maxConcurrent.min, LIMITS.maxConcurrent.max, {
        description: 'Daemon mode: most runs active at once; not with concurrency "Allow".',
        default: EXTENSION_DEFAULTS.max_concurrent,
      }),
    ),
    queue_max: Type.Optional(
      int(LIMITS.queueMax.min, LIMITS.queueMax.max, {
        description: 'Daemon mode: queue length for concurrency "Enqueue"; only with "Enqueue".',
        default: EXTENSION_DEFAULTS.queue_max,
      }),
    ),
    catchup: Type.Optional(CatchupSchema),
    jitter: Type.Optional(JitterSchema),
  },
  { additionalProperties: false, description: 'Overlap, timeout and retry policy.' },
);

/** `jobs[].auth`. */
export const AuthSchema = Type.Object(
  {
    secret_refs: Type.Optional(
      Type.Array(Type.String({ pattern: SECRET_REF_PATTERN }), {
        minItems: LIMITS.secretRefs.min,
        maxItems: LIMITS.secretRefs.max,
        description:
          'Secrets that sign requests (env:NAME, file:/path, raw:literal; bare = env:). The first signs; all verify.',
        default: [],
      }),
    ),
  },
  { additionalProperties: false, description: 'Request signing.' },
);

/** One entry of `jobs[].notify` (extension, SPEC §12). */
export const NotifySchema = Type.Object(
  {
    to: Type.String({
      pattern: NAME_PATTERN,
      description: 'Name of a notifier defined in the top-level "notifiers".',
    }),
    on: Type.Optional(
      Type.Array(literalUnion(NOTIFY_EVENTS, {}), {
        minItems: 1,
        maxItems: NOTIFY_EVENTS.length,
        uniqueItems: true,
        description:
          'Events to notify: failed (app_rejected, retries_exhausted, crashed, internal_error), missed (a fire recorded missed), recovered (the first success after failed or missed), slow (a run still active after slow_after_seconds).',
        default: [...NOTIFY_DEFAULTS.on],
      }),
    ),
    slow_after_seconds: Type.Optional(
      int(LIMITS.slowAfterSeconds.min, LIMITS.slowAfterSeconds.max, {
        description:
          'A run still active after this many seconds is "slow"; only with "slow" in on.',
        default: NOTIFY_DEFAULTS.slow_after_seconds,
      }),
    ),
    repeat_every_seconds: Type.Optional(
      int(LIMITS.repeatEverySeconds.min, LIMITS.repeatEverySeconds.max, {
        description:
          'Repeated failed/missed events of the job notify at most once per this many seconds, with the count since the last message.',
        default: NOTIFY_DEFAULTS.repeat_every_seconds,
      }),
    ),
  },
  { additionalProperties: false, description: 'Who to tell about which events of this job.' },
);

const SecretRef = Type.String({ pattern: SECRET_REF_PATTERN });

/**
 * One entry of the top-level `notifiers` (extension, SPEC §12). One object for both types so
 * that errors name the field; `semantic.ts` checks which fields each type needs and allows.
 */
export const NotifierSchema = Type.Object(
  {
    type: literalUnion(NOTIFIER_TYPES, {
      description: 'webhook (a signed JSON POST) or smtp (a plain-text mail).',
    }),
    url: Type.Optional(
      Type.String({
        description:
          'webhook: the http:// or https:// URL to POST to (exactly one of url and url_ref).',
      }),
    ),
    url_ref: Type.Optional(
      Type.String({
        pattern: SECRET_REF_PATTERN,
        description:
          'webhook: a secret ref holding the URL, for URLs that are themselves secrets (Slack incoming webhooks).',
      }),
    ),
    secret_refs: Type.Optional(
      Type.Array(SecretRef, {
        minItems: LIMITS.secretRefs.min,
        maxItems: LIMITS.secretRefs.max,
        description:
          'webhook: secrets that sign each POST with X-Cron-Signature (the first signs).',
        default: [],
      }),
    ),
    host: Type.Optional(
      Type.String({ pattern: HOST_PATTERN, description: 'smtp: the mail server host.' }),
    ),
    port: Type.Optional(
      int(LIMITS.port.min, LIMITS.port.max, {
        description: 'smtp: the mail server port.',
        default: NOTIFY_DEFAULTS.smtp_port,
      }),
    ),
    from: Type.Optional(
      Type.String({ pattern: EMAIL_PATTERN, description: 'smtp: the sender address.' }),
    ),
    to: Type.Optional(
      Type.Array(Type.String({ pattern: EMAIL_PATTERN }), {
        minItems: LIMITS.mailTo.min,
        maxItems: LIMITS.mailTo.max,
        description: 'smtp: recipient addresses.',
      }),
    ),
    starttls: Type.Optional(
      Type.Boolean({
        description:
          'smtp: true requires STARTTLS before anything is sent (a server without it fails the delivery); false never upgrades.',
        default: NOTIFY_DEFAULTS.starttls,
      }),
    ),
    username_ref: Type.Optional(
      Type.String({
        pattern: SECRET_REF_PATTERN,
        description: 'smtp: secret ref of the user name (with password_ref).',
      }),
    ),
    password_ref: Type.Optional(
      Type.String({
        pattern: SECRET_REF_PATTERN,
        description: 'smtp: secret ref of the password (with username_ref).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A notifier: type webhook needs url or url_ref; type smtp needs host, from and to.',
  },
);

/** One entry of `jobs`. Exactly one of `schedule` / `schedules` (checked in `semantic.ts`). */
export const JobSchema = Type.Object(
  {
    name: Type.String({
      pattern: NAME_PATTERN,
      description: 'Job name, unique within the manifest.',
    }),
    schedule: Type.Optional(ScheduleExpression),
    schedules: Type.Optional(
      Type.Array(ScheduleExpression, {
        minItems: LIMITS.schedules.min,
        maxItems: LIMITS.schedules.max,
        description: 'Several schedules (instead of "schedule"); the job fires on each.',
      }),
    ),
    timezone: Type.Optional(
      Type.String({
        description: 'IANA time zone whose wall clock the schedules follow.',
        default: V1_DEFAULTS.timezone,
      }),
    ),
    request: Type.Optional(RequestSchema),
    command: Type.Optional(CommandSchema),
    policy: Type.Optional(PolicySchema),
    auth: Type.Optional(AuthSchema),
    enabled: Type.Optional(
      Type.Boolean({
        description: 'Daemon mode: false keeps the job declared but never fires it.',
        default: EXTENSION_DEFAULTS.enabled,
      }),
    ),
    description: Type.Optional(
      Type.String({
        maxLength: LIMITS.description.max,
        description:
          'What the job does, for people: shown by the UI and kept by cronix import from crontab comments (at most 500 characters).',
      }),
    ),
    notify: Type.Optional(
      Type.Array(NotifySchema, {
        maxItems: LIMITS.notify.max,
        description: 'Failure notifications of this job (SPEC §12); each "to" at most once.',
        default: [],
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A periodic job: an HTTP request or a command. Exactly one of "schedule" or "schedules", and exactly one of "request" or "command".',
    // For editors only: the compiled checker ignores `allOf`; semantic.ts reports these rules.
    allOf: [
      { oneOf: [{ required: ['schedule'] }, { required: ['schedules'] }] },
      { oneOf: [{ required: ['request'] }, { required: ['command'] }] },
    ],
  },
);

/** The whole manifest, as an application writes it. */
export const ManifestSchema = Type.Object(
  {
    version: Type.Literal(1, { description: 'Manifest format version; must be 1.' }),
    app: Type.String({ pattern: NAME_PATTERN, description: 'Application name.' }),
    jobs: Type.Array(JobSchema, {
      minItems: LIMITS.jobs.min,
      maxItems: LIMITS.jobs.max,
      description: 'The jobs of this application; names must be unique.',
    }),
    notifiers: Type.Optional(
      Type.Record(Type.String({ pattern: NAME_PATTERN }), NotifierSchema, {
        additionalProperties: false,
        maxProperties: LIMITS.notifiers.max,
        description: 'Notifiers by name, referred to by jobs[].notify[].to (SPEC §12).',
        default: {},
      }),
    ),
  },
  { additionalProperties: false },
);

/** A manifest as written (before defaults and normalization); the type of valid raw input. */
export type ManifestInput = Static<typeof ManifestSchema>;
/** One job as written. */
export type JobInput = Static<typeof JobSchema>;
/** A job's request as written. */
export type RequestInput = Static<typeof RequestSchema>;
/** A job's command as written. */
export type CommandInput = Static<typeof CommandSchema>;
/** A notifier as written. */
export type NotifierInput = Static<typeof NotifierSchema>;
/** A notify entry as written. */
export type NotifyInput = Static<typeof NotifySchema>;
/** A job's policy as written. */
export type PolicyInput = Static<typeof PolicySchema>;
