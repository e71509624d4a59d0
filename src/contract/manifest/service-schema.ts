/**
 * `services` (extension, SPEC §17): long-running commands the daemon keeps alive, each with
 * `instances` copies. Rules JSON Schema cannot say well (argv[0], cwd, reserved variables,
 * min ≤ max, readiness addresses, names shared with jobs) live in `service-rules.ts`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { LIMITS, NO_NUL_PATTERN, SECRET_REF_PATTERN, SERVICE_DEFAULTS } from './defaults.js';
import { NotifySchema } from './notify-schema.js';
import { envMap, int } from './schema-parts.js';

/** `services.<name>.restart`. */
export const RestartSchema = Type.Object(
  {
    min_seconds: Type.Optional(
      int(LIMITS.restartSeconds.min, LIMITS.restartSeconds.max, {
        description: 'First delay before an exited instance is started again; ≤ max_seconds.',
        default: SERVICE_DEFAULTS.min_seconds,
      }),
    ),
    max_seconds: Type.Optional(
      int(LIMITS.restartSeconds.min, LIMITS.restartSeconds.max, {
        description:
          'Backoff ceiling: the delay doubles after each exit in a row, up to this many seconds.',
        default: SERVICE_DEFAULTS.max_seconds,
      }),
    ),
    reset_after_seconds: Type.Optional(
      int(LIMITS.resetAfterSeconds.min, LIMITS.resetAfterSeconds.max, {
        description:
          'An instance up this long counts as healthy: its backoff starts again from min_seconds, and a crash loop of the service is over (recovered).',
        default: SERVICE_DEFAULTS.reset_after_seconds,
      }),
    ),
    crash_loop_exits: Type.Optional(
      int(LIMITS.crashLoopExits.min, LIMITS.crashLoopExits.max, {
        description:
          'Exits of one instance within crash_loop_window_seconds that make a crash loop (notified "failed").',
        default: SERVICE_DEFAULTS.crash_loop_exits,
      }),
    ),
    crash_loop_window_seconds: Type.Optional(
      int(LIMITS.crashLoopWindowSeconds.min, LIMITS.crashLoopWindowSeconds.max, {
        description: 'The window of crash_loop_exits, in seconds.',
        default: SERVICE_DEFAULTS.crash_loop_window_seconds,
      }),
    ),
  },
  { additionalProperties: false, description: 'Restart backoff and crash-loop detection.' },
);

/** `services.<name>.ready`: exactly one of `http_get` and `tcp` (checked in `service-rules.ts`). */
export const ReadySchema = Type.Object(
  {
    http_get: Type.Optional(
      Type.String({
        description:
          'http:// or https:// URL answered with 2xx once the instance is ready; {instance} is replaced by the instance index.',
      }),
    ),
    tcp: Type.Optional(
      Type.String({
        description:
          'HOST:PORT ([v6 address]:PORT) accepting a connection once the instance is ready; {instance} is replaced by the instance index (127.0.0.1:80{instance}).',
      }),
    ),
    timeout_seconds: Type.Optional(
      int(LIMITS.readyTimeoutSeconds.min, LIMITS.readyTimeoutSeconds.max, {
        description:
          'Longest wait for readiness after a start; the instance stays "starting" until then, and is "unready" after.',
        default: SERVICE_DEFAULTS.ready_timeout_seconds,
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'When an instance counts as ready. Absent: once its process has started.',
  },
);

/** One entry of `services` (SPEC §17). */
export const ServiceSchema = Type.Object(
  {
    argv: Type.Array(Type.String({ pattern: NO_NUL_PATTERN }), {
      minItems: LIMITS.argv.min,
      maxItems: LIMITS.argv.max,
      description:
        'Program and arguments, run without a shell. Each instance gets CRONIX_SERVICE and CRONIX_INSTANCE (0..instances-1) in its environment.',
    }),
    env: Type.Optional(
      envMap(
        NO_NUL_PATTERN,
        LIMITS.commandEnv.max,
        'Environment variables of the service (not secret). Names starting with CRONIX_ are reserved.',
      ),
    ),
    env_from_secrets: Type.Optional(
      envMap(
        SECRET_REF_PATTERN,
        LIMITS.envFromSecrets.max,
        'Environment variables whose values are secret refs, resolved by cronix at start-up; redacted from captured output.',
      ),
    ),
    cwd: Type.Optional(
      Type.String({
        pattern: NO_NUL_PATTERN,
        description: 'Absolute working directory. Absent: the HOME of cronix, else /.',
      }),
    ),
    instances: Type.Optional(
      int(LIMITS.instances.min, LIMITS.instances.max, {
        description: 'Copies kept running, each in a process group of its own.',
        default: SERVICE_DEFAULTS.instances,
      }),
    ),
    restart: Type.Optional(RestartSchema),
    graceful_stop_seconds: Type.Optional(
      int(LIMITS.gracefulStopSeconds.min, LIMITS.gracefulStopSeconds.max, {
        description:
          'When an instance is stopped (stop, restart, reload, shutdown): seconds between SIGTERM and SIGKILL to its process group.',
        default: SERVICE_DEFAULTS.graceful_stop_seconds,
      }),
    ),
    max_output_bytes: Type.Optional(
      int(LIMITS.maxOutputBytes.min, LIMITS.maxOutputBytes.max, {
        description:
          'Bytes of stdout and stderr kept per start of an instance; the rest is dropped.',
        default: SERVICE_DEFAULTS.max_output_bytes,
      }),
    ),
    ready: Type.Optional(ReadySchema),
    notify: Type.Optional(
      Type.Array(NotifySchema, {
        maxItems: LIMITS.notify.max,
        description:
          'Who to tell about a crash loop ("failed") and its end ("recovered"); "missed" and "slow" do not apply to services.',
        default: [],
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A supervised service (daemon mode only, SPEC §17): a long-running command kept alive with N instances, restarted after an exponential backoff.',
  },
);

/** A service as written. */
export type ServiceInput = Static<typeof ServiceSchema>;
