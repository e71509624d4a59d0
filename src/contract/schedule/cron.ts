/**
 * Parser for the schedule language of SPEC §3: classic 5-field cron, 6-field cron with a
 * leading seconds field (the seconds extension), the `@hourly`-style shortcuts and
 * `@every <N>{h,m,s}`. Produces plain values; matching and fire computation live in `next.ts`.
 */
import { echo } from '../echo.js';
import { daysInMonth } from './civil.js';
import {
  CLASSIC_FIELDS,
  FieldError,
  nextTable,
  parseField,
  SECOND_FIELD,
  type FieldDef,
} from './fields.js';

/**
 * A parsed cron expression: 5 fields, or 6 with a leading seconds field (shortcuts are
 * expanded to the 5-field form). A 5-field expression fires at second 0.
 */
export interface CronSpec {
  readonly kind: 'cron';
  /** The expression as written by the user (trimmed). */
  readonly source: string;
  /** How many fields the expression has: 6 when it starts with a seconds field. */
  readonly fields: 5 | 6;
  /** `seconds[s] === 1` when second s (0..59) matches; only second 0 for 5 fields. */
  readonly seconds: Uint8Array;
  /**
   * The seconds field selects more than second 0 alone, so fires need second resolution
   * (`*\/10 * * * * *`, `30 0 9 * * *`). False for every 5-field expression and for a 6-field
   * one whose seconds field is `0`: those fire on whole minutes.
   */
  readonly secondResolution: boolean;
  /** `minutes[m] === 1` when minute m (0..59) matches. */
  readonly minutes: Uint8Array;
  /** Hours 0..23. */
  readonly hours: Uint8Array;
  /** Days of month, index 1..31 (index 0 unused). */
  readonly doms: Uint8Array;
  /**
   * The day-of-month field lists `L`: the last day of each month matches too (28, 29, 30 or
   * 31), as one more day-of-month value for the classic day rule.
   */
  readonly lastDom: boolean;
  /** Months, index 1..12 (index 0 unused). */
  readonly months: Uint8Array;
  /** Days of week 0..6, Sunday = 0 (a `7` in the source sets index 0). */
  readonly dows: Uint8Array;
  /** Day-of-month field starts with `*` (classic cron's DOM_STAR). */
  readonly domStar: boolean;
  /** Day-of-week field starts with `*` (classic cron's DOW_STAR). */
  readonly dowStar: boolean;
  /**
   * Neither the minute nor the hour field starts with `*`: the job names a
   * wall-clock time, so the DST rules for fixed-time jobs apply (SPEC §3).
   */
  readonly fixedTime: boolean;
  /** `nextSecond[s]`: smallest matching second ≥ s, or -1. Length 61. */
  readonly nextSecond: Int8Array;
  /** `nextMinute[m]`: smallest matching minute ≥ m, or -1. Length 61. */
  readonly nextMinute: Int8Array;
  /** `nextHour[h]`: smallest matching hour ≥ h, or -1. Length 25. */
  readonly nextHour: Int8Array;
  /** `nextMonth[m]`: smallest matching month ≥ m, or -1. Length 14. */
  readonly nextMonth: Int8Array;
}

/** `@every` schedule: fires at every multiple of the interval since the Unix epoch. */
export interface EverySpec {
  readonly kind: 'every';
  readonly source: string;
  readonly intervalSeconds: number;
}

/** A parsed schedule. */
export type Schedule = CronSpec | EverySpec;

/** Result of parsing: a value, never an exception. */
export type ScheduleParseResult = { ok: true; schedule: Schedule } | { ok: false; error: string };

/** Smallest `@every` interval (SPEC §3, seconds extension). */
export const MIN_EVERY_SECONDS = 1;
/** Largest `@every` interval accepted (100 years); longer ones are surely typos. */
export const MAX_EVERY_SECONDS = 100 * 366 * 86_400;

/** The `@` shortcuts and the five-field expressions they stand for. */
export const SHORTCUTS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const DURATION_RE = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/i;

/**
 * A duration as `@every` writes it — hours, minutes and seconds in that order, each optional
 * (`90s`, `5m`, `1h30m`, `2h`) — in whole seconds; null when `text` is not one (or is empty).
 */
export function parseDuration(text: string): number | null {
  const match = DURATION_RE.exec(text);
  if (!match || (match[1] === undefined && match[2] === undefined && match[3] === undefined))
    return null;
  return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
}

function parseEvery(source: string): ScheduleParseResult {
  const spaced = /^@every\s+(\S+)$/i.exec(source);
  const seconds = spaced ? parseDuration(spaced[1] as string) : null;
  if (seconds === null) {
    return {
      ok: false,
      error: `${echo(source)} is not a valid @every interval (expected e.g. "@every 5m", "@every 1h30m", "@every 10s")`,
    };
  }
  if (seconds < MIN_EVERY_SECONDS) {
    return {
      ok: false,
      error: `@every interval must be at least ${MIN_EVERY_SECONDS}s, found ${seconds}s`,
    };
  }
  if (seconds > MAX_EVERY_SECONDS) {
    return { ok: false, error: `@every interval must be at most 100 years, found ${seconds}s` };
  }
  return { ok: true, schedule: { kind: 'every', source, intervalSeconds: seconds } };
}

/** Whether some (month, day) pair of the spec exists in some year (Feb counts 29 days). */
function canEverFire(
  months: Uint8Array,
  doms: Uint8Array,
  domStar: boolean,
  dowStar: boolean,
  lastDom: boolean,
): boolean {
  if (!domStar && !dowStar) return true; // either rule: any weekday eventually matches
  if (lastDom) return true; // every month has a last day
  for (let m = 1; m <= 12; m++) {
    if (months[m] !== 1) continue;
    const maxDay = daysInMonth(2000, m); // 2000 is a leap year: Feb has 29 days
    for (let d = 1; d <= maxDay; d++) if (doms[d] === 1) return true;
  }
  return false;
}

/**
 * Parses a schedule expression (SPEC §3). Never throws: errors come back as
 * `{ ok: false, error }` with a message naming the offending field and value.
 */
export function parseSchedule(expression: string): ScheduleParseResult {
  if (typeof expression !== 'string') return { ok: false, error: 'schedule must be a string' };
  // parsed schedules are immutable: jobs with the same expression share one (a daemon with
  // 100,000 jobs holds each distinct schedule's tables once)
  const cached = interned.get(expression);
  if (cached) return cached;
  const result = parseUncached(expression);
  if (result.ok) {
    if (interned.size >= MAX_INTERNED) interned.clear();
    interned.set(expression, result);
  }
  return result;
}

const MAX_INTERNED = 100_000;
const interned = new Map<string, ScheduleParseResult>();

/** The seconds table of every 5-field expression: second 0 only. */
const SECOND_ZERO = ((): Uint8Array => {
  const bits = new Uint8Array(60);
  bits[0] = 1;
  return bits;
})();

function parseUncached(expression: string): ScheduleParseResult {
  const source = expression.trim();
  if (source === '') return { ok: false, error: 'schedule is empty' };
  let cronText = source;
  if (source.startsWith('@')) {
    if (/^@every(\s|$)/i.test(source)) return parseEvery(source);
    const expanded = SHORTCUTS[source.toLowerCase()];
    if (expanded === undefined) {
      return {
        ok: false,
        error: `unknown shortcut ${echo(source)} (expected one of ${Object.keys(SHORTCUTS).join(', ')} or @every <interval>)`,
      };
    }
    cronText = expanded;
  }
  const all = cronText.split(/\s+/);
  if (all.length !== 5 && all.length !== 6) {
    return {
      ok: false,
      error:
        `expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second minute ` +
        `hour day-of-month month day-of-week), found ${all.length} in ${echo(source)}`,
    };
  }
  const withSeconds = all.length === 6;
  const fields = (withSeconds ? all.slice(1) : all) as [string, string, string, string, string];
  try {
    const seconds = withSeconds ? parseField(all[0] as string, SECOND_FIELD) : SECOND_ZERO;
    const tables = fields.map((f, i) => parseField(f, CLASSIC_FIELDS[i] as FieldDef));
    const [minutes, hours, doms, months, dowsRaw] = tables as [
      Uint8Array,
      Uint8Array,
      Uint8Array,
      Uint8Array,
      Uint8Array,
    ];
    const lastDom = doms[0] === 1;
    doms[0] = 0;
    const dows = dowsRaw.slice(0, 7);
    if (dowsRaw[7] === 1) dows[0] = 1; // 7 is Sunday too
    const [minuteField, hourField, domField, , dowField] = fields;
    const domStar = domField.startsWith('*');
    const dowStar = dowField.startsWith('*');
    if (!canEverFire(months, doms, domStar, dowStar, lastDom)) {
      return {
        ok: false,
        error: `schedule ${echo(source)} can never fire (no such day in the selected months)`,
      };
    }
    return {
      ok: true,
      schedule: {
        kind: 'cron',
        source,
        fields: withSeconds ? 6 : 5,
        seconds,
        secondResolution: seconds.some((bit, s) => bit === 1 && s !== 0),
        minutes,
        hours,
        doms,
        lastDom,
        months,
        dows,
        domStar,
        dowStar,
        // SPEC §3: the DST rule looks at the minute and hour fields only, whatever the seconds
        fixedTime: !minuteField.startsWith('*') && !hourField.startsWith('*'),
        nextSecond: nextTable(seconds, 60),
        nextMinute: nextTable(minutes, 60),
        nextHour: nextTable(hours, 24),
        nextMonth: nextTable(months, 13),
      },
    };
  } catch (err) {
    if (err instanceof FieldError) return { ok: false, error: `${err.message} in ${echo(source)}` };
    throw err;
  }
}
