/** `jobs[].notify` and `services.<name>.notify` entries (extension, SPEC §12, §17). */
import { Type, type Static } from '@sinclair/typebox';
import { LIMITS, NAME_PATTERN, NOTIFY_DEFAULTS, NOTIFY_EVENTS } from './defaults.js';
import { int, literalUnion } from './schema-parts.js';

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

/** A notify entry as written. */
export type NotifyInput = Static<typeof NotifySchema>;
