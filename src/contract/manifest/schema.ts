/**
 * The manifest's structural rules as one TypeBox schema (SPEC §2, §8).
 *
 * The same schema drives the compiled checker of `parseManifest` and the shipped JSON Schema
 * (`schema/manifest.schema.json`, see `json-schema.ts`), so editors and the parser agree.
 * Rules that JSON Schema cannot say well (unique names, schedule syntax, time zones, URLs,
 * reserved headers, cross-field constraints) live in `semantic.ts` and are described here.
 */
import { Type, type Static } from '@sinclair/typebox';
import { envMap, int, literalUnion } from './schema-parts.js';
import { NotifySchema } from './notify-schema.js';
import { ServiceSchema } from './service-schema.js';
import type { PolicyInput } from './types.js';
import { BlackoutSchema } from './blackout-schema.js';

export { NotifySchema, type NotifyInput } from './notify-schema.js';
export { BlackoutSchema, BlackoutWindowSchema, BLACKOUT_LIMITS } from './blackout-schema.js';
export { ReadySchema, RestartSchema, ServiceSchema, type ServiceInput } from './service-schema.js';
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
  SECRET_REF_PATTERN,
  V1_DEFAULTS,
} from './defaults.js';

const ScheduleExpression = Type.String({
  description:
    '5-field cron (min hour dom month dow; L alone in dom is the last day of the month, daemon mode only), 6-field cron with seconds first (sec min hour dom month dow; daemon mode and the systemd backend only), a shortcut (@hourly @daily @midnight @weekly @monthly @yearly @annually) or @every <N>{s|m|h} of at least 1 s (below 60 s: daemon mode and the systemd backend only).',
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
    headers_from_secrets: Type.Optional(
      Type.Record(
        Type.String({ pattern: HEADER_NAME_PATTERN }),
        Type.String({ pattern: SECRET_REF_PATTERN }),
        {
          additionalProperties: false,
          maxProperties: LIMITS.headersFromSecrets.max,
          description:
            'Extension: request headers whose values are secret refs (env:NAME, file:/path, raw:literal), resolved by cronix at start-up and sent on every attempt; never shown by the API or the UI, redacted from errors. The same names as headers: not reserved, not also in headers (ignoring case).',
          default: {},
        },
      ),
    ),
  },
  { additionalProperties: false, description: 'The HTTP request sent at each fire.' },
);

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

/** `jobs[].policy.watch` (extension, SPEC §15). */
export const WatchSchema = Type.Object(
  {
    grace_seconds: Type.Optional(
      int(LIMITS.watchGraceSeconds.min, LIMITS.watchGraceSeconds.max, {
        description:
          'cronix serve --watch: seconds after an expected fire with no report from any host before the fire is recorded missed.',
        default: EXTENSION_DEFAULTS.watch_grace_seconds,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Host mode: how a cronix serve --watch expects this job's reports (accepted by every backend).",
  },
);

/** `jobs[].policy.rate` (daemon mode, SPEC §16 "Rate limits"). */
export const RateSchema = Type.Object(
  {
    key: Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$',
      description:
        'The target the rate protects (e.g. its host); every job naming the same key shares one budget.',
    }),
    per_second: int(1, 10_000, {
      description:
        'At most this many attempts start in any one-second window across the jobs of the key (the lowest per_second of those jobs applies).',
    }),
  },
  {
    additionalProperties: false,
    description:
      'Daemon mode: a per-target rate limit on attempts, whatever their trigger; waiting runs say so.',
  },
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
        description:
          'Deadline of one attempt in seconds: 1..600 for an HTTP job (the v1 limit), 1..86400 for a command job.',
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
    watch: Type.Optional(WatchSchema),
    rate: Type.Optional(RateSchema),
    blackout: Type.Optional(BlackoutSchema),
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

/** What a manual trigger may carry (daemon mode, SPEC §16 "Run parameters"). */
export const ManualSchema = Type.Object(
  {
    allow_body: Type.Optional(
      Type.Boolean({
        description:
          'HTTP jobs: a manual trigger may give the request body of its run ("body", at most 65536 bytes).',
        default: false,
      }),
    ),
    env_allowlist: Type.Optional(
      Type.Array(Type.String({ pattern: ENV_NAME_PATTERN }), {
        maxItems: 64,
        uniqueItems: true,
        description:
          'Command jobs: the environment variables a manual trigger may set ("env"; values at most 4096 bytes, no NUL).',
        default: [],
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Daemon mode: what a manual trigger may carry, recorded with its run.',
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
    manual: Type.Optional(ManualSchema),
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
    // 1..256 jobs, required; 0..256 (and optional) when `services` is present: semantic.ts
    // says so in the manifest's words, the `anyOf` below tells editors
    jobs: Type.Optional(
      Type.Array(JobSchema, {
        minItems: 0,
        maxItems: LIMITS.jobs.max,
        description:
          'The jobs of this application (1 to 256; 0 to 256 when "services" is present); names must be unique.',
      }),
    ),
    notifiers: Type.Optional(
      Type.Record(Type.String({ pattern: NAME_PATTERN }), NotifierSchema, {
        additionalProperties: false,
        maxProperties: LIMITS.notifiers.max,
        description: 'Notifiers by name, referred to by jobs[].notify[].to (SPEC §12).',
        default: {},
      }),
    ),
    services: Type.Optional(
      Type.Record(Type.String({ pattern: NAME_PATTERN }), ServiceSchema, {
        additionalProperties: false,
        maxProperties: LIMITS.services.max,
        description:
          'Supervised services by name (daemon mode, SPEC §17); a name is not also a job name.',
        default: {},
      }),
    ),
  },
  {
    additionalProperties: false,
    // For editors only: the compiled checker ignores `allOf`; service-rules.ts reports this rule.
    allOf: [
      {
        anyOf: [
          { required: ['services'], properties: { services: { minProperties: 1 } } },
          { required: ['jobs'], properties: { jobs: { minItems: 1 } } },
        ],
      },
    ],
  },
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
/** A job's policy as written: the plain interface of `types.ts`, which the SDK publishes. */
export type { PolicyInput };

/** `true` when A and B are the same type (not merely assignable: all-optional objects always are). */
type Same<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
/** Compiles only while `PolicyInput` is exactly what `PolicySchema` accepts (no drift). */
export type PolicyInputIsTheSchema = Assert<Same<PolicyInput, Static<typeof PolicySchema>>>;
