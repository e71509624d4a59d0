/**
 * Schedules and time (SPEC §3): parsing, validation, next/previous fire
 * instants in an IANA time zone with the classic cron DST rules. 5-field
 * cron fires on whole minutes; 6-field cron (seconds first) and `@every`
 * down to 1 s fire on whole seconds (the seconds extension).
 *
 * All instants are epoch milliseconds (UTC). The engine is written here rather
 * than wrapped from croner or cron-parser because neither implements the
 * classic cron DST rules of SPEC §3 (fixed-time jobs fire once after a
 * spring-forward gap and once in a fall-back overlap, wildcard jobs follow
 * elapsed time), and both call `Intl` per computation; see
 * docs/schedules.md for the comparison and BENCHMARKS.md for the speed.
 */
import { formatLocal } from './civil.js';
import { parseSchedule, type Schedule } from './cron.js';
import { nextAfter, previousAtOrBefore } from './next.js';
import { checkTimeZone, getZone } from './zone.js';

export { parseSchedule, parseDuration, MIN_EVERY_SECONDS } from './cron.js';
export type { Schedule, CronSpec, EverySpec, ScheduleParseResult } from './cron.js';
export { checkTimeZone } from './zone.js';
export { formatLocal, formatOffset } from './civil.js';

/** Thrown by the convenience functions below for an invalid schedule or zone. */
export class ScheduleError extends RangeError {
  /** Which input was wrong: `schedule` or `timezone`. */
  readonly field: 'schedule' | 'timezone';
  constructor(field: 'schedule' | 'timezone', message: string) {
    super(message);
    this.name = 'ScheduleError';
    this.field = field;
  }
}

function resolve(schedule: Schedule | string, timezone: string): Schedule {
  const zoneError = checkTimeZone(timezone);
  if (zoneError) throw new ScheduleError('timezone', zoneError);
  if (typeof schedule !== 'string') return schedule;
  const parsed = parseSchedule(schedule);
  if (!parsed.ok) throw new ScheduleError('schedule', parsed.error);
  return parsed.schedule;
}

/**
 * The first fire instant strictly after `after` (epoch ms), or null when the
 * schedule has no fire within the search horizon (41 years; every valid schedule fires within
 * 40).
 * `schedule` must be a parsed schedule and `timezone` a valid zone.
 */
export function nextFire(schedule: Schedule, timezone: string, after: number): number | null {
  return nextAfter(schedule, getZone(timezone), after);
}

/** The latest fire instant at or before `atOrBefore` (epoch ms), or null. */
export function previousFire(
  schedule: Schedule,
  timezone: string,
  atOrBefore: number,
): number | null {
  return previousAtOrBefore(schedule, getZone(timezone), atOrBefore);
}

/** How early a host scheduler may start a fire's process and still serve it (SPEC §5.4). */
export const EARLY_START_TOLERANCE_MS = 1000;

/**
 * The fire a process started by a host scheduler at `startedAt` (epoch ms) serves: the latest
 * fire ≤ `startedAt` + 1 s (SPEC §5.4; the second covers a scheduler that starts it a little
 * early). A fire at most that second *before* the start wins over one within the second
 * *after* it, so a start of a schedule firing every second, a few hundred milliseconds late,
 * is not mistaken for an early start of the next fire. For fires 2 s or more apart this is
 * exactly the latest fire ≤ `startedAt` + 1 s.
 */
export function fireServedAt(
  schedule: Schedule,
  timezone: string,
  startedAt: number,
): number | null {
  const latest = previousFire(schedule, timezone, startedAt);
  if (latest !== null && startedAt - latest < EARLY_START_TOLERANCE_MS) return latest;
  return previousFire(schedule, timezone, startedAt + EARLY_START_TOLERANCE_MS);
}

/** Options of {@link nextFires}. */
export interface NextFiresOptions {
  /** IANA zone whose wall clock decides matching; default `UTC`. */
  timezone?: string;
  /** Reference instant; fires are strictly after it. */
  from: Date | number;
  /** How many fires to return; default 1. */
  count?: number;
}

/**
 * The next `count` fire instants strictly after `from`, per SPEC §3.
 * @throws {ScheduleError} when the schedule or time zone is invalid.
 */
export function nextFires(schedule: Schedule | string, options: NextFiresOptions): Date[] {
  const timezone = options.timezone ?? 'UTC';
  const spec = resolve(schedule, timezone);
  const zone = getZone(timezone);
  const out: Date[] = [];
  let t = typeof options.from === 'number' ? options.from : options.from.getTime();
  const count = options.count ?? 1;
  while (out.length < count) {
    const next = nextAfter(spec, zone, t);
    if (next === null) break;
    out.push(new Date(next));
    t = next;
  }
  return out;
}

/** Offset (local − UTC, ms) of `timezone` at instant `at`. */
export function zoneOffset(timezone: string, at: number): number {
  return getZone(timezone).offsetAt(at);
}

/** RFC 3339 local time of instant `at` in `timezone`, e.g. `2026-03-29T03:00:00+02:00`. */
export function toLocalRfc3339(timezone: string, at: number): string {
  return formatLocal(at, zoneOffset(timezone, at));
}
