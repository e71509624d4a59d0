/**
 * `jobs[].policy.blackout` (daemon mode, SPEC §16 "Calendars"): windows in which a job's fires
 * are recorded `skipped` instead of run. One object for the three kinds of window, so that
 * errors name the field (as the notifiers do); `blackout-rules.ts` checks that each window is
 * exactly one kind and reads its values.
 */
import { Type } from '@sinclair/typebox';
import { BLACKOUT_LIMITS, NO_NUL_PATTERN } from './defaults.js';

export { BLACKOUT_LIMITS } from './defaults.js';
import { int } from './schema-parts.js';

/** One window, as written. */
export const BlackoutWindowSchema = Type.Object(
  {
    cron: Type.Optional(
      Type.String({
        description:
          'Recurring window: a schedule expression (as "schedule") whose instants, in the job\'s time zone and with the same DST rules, start the window; with duration_seconds.',
      }),
    ),
    duration_seconds: Type.Optional(
      int(BLACKOUT_LIMITS.durationSeconds.min, BLACKOUT_LIMITS.durationSeconds.max, {
        description:
          'Recurring window: how long each window lasts from its start, in elapsed seconds (1 to 31622400); with cron.',
      }),
    ),
    from: Type.Optional(
      Type.String({
        description:
          'Date range: its first instant, RFC 3339 with an offset or Z (e.g. 2026-12-24T00:00:00+01:00); with to.',
      }),
    ),
    to: Type.Optional(
      Type.String({
        description:
          'Date range: its end, RFC 3339, excluded (the range is [from, to)); with from.',
      }),
    ),
    dates_file: Type.Optional(
      Type.String({
        maxLength: BLACKOUT_LIMITS.path.max,
        pattern: NO_NUL_PATTERN,
        description:
          "Holiday list: a file of dates, one YYYY-MM-DD a line (# comments and blank lines allowed), each a whole day in the job's time zone. A relative path is read from the manifest file's directory.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A blackout window: exactly one of {cron, duration_seconds}, {from, to} or {dates_file}.',
    // For editors only: the compiled checker ignores `oneOf`; blackout-rules.ts reports this rule.
    oneOf: [
      { required: ['cron', 'duration_seconds'] },
      { required: ['from', 'to'] },
      { required: ['dates_file'] },
    ],
  },
);

/** `policy.blackout`. */
export const BlackoutSchema = Type.Array(BlackoutWindowSchema, {
  minItems: BLACKOUT_LIMITS.windows.min,
  maxItems: BLACKOUT_LIMITS.windows.max,
  description:
    'Daemon mode: windows in which a scheduled or catch-up fire is not run but recorded skipped with reason "blackout: <window>"; manual triggers, replays and backfills are not blocked. Host-mode backends refuse it.',
});
