/**
 * Parser for the schedule language of SPEC §3: classic 5-field cron, the
 * `@hourly`-style shortcuts and `@every <N>{h,m,s}`. Produces plain values;
 * matching and fire computation live in `next.ts`.
 */
import { daysInMonth } from './civil.js';

/** A parsed 5-field cron expression (shortcuts are expanded to this form). */
export interface CronSpec {
  readonly kind: 'cron';
  /** The expression as written by the user (trimmed). */
  readonly source: string;
  /** `minutes[m] === 1` when minute m (0..59) matches. */
  readonly minutes: Uint8Array;
  /** Hours 0..23. */
  readonly hours: Uint8Array;
  /** Days of month, index 1..31 (index 0 unused). */
  readonly doms: Uint8Array;
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

/** Smallest `@every` interval (SPEC §3). */
export const MIN_EVERY_SECONDS = 60;
/** Largest `@every` interval accepted (100 years); longer ones are surely typos. */
export const MAX_EVERY_SECONDS = 100 * 366 * 86_400;

const SHORTCUTS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_NAMES = [
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
];
const DOW_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldDef {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** Value of the first name (1 for months, 0 for weekdays). */
  readonly nameBase?: number;
}

const FIELDS: readonly FieldDef[] = [
  { label: 'minute', min: 0, max: 59 },
  { label: 'hour', min: 0, max: 23 },
  { label: 'day-of-month', min: 1, max: 31 },
  { label: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { label: 'day-of-week', min: 0, max: 7, names: DOW_NAMES, nameBase: 0 },
];

class FieldError extends Error {}

function parseValue(token: string, def: FieldDef): number {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    if (n < def.min || n > def.max) {
      throw new FieldError(`${def.label} value ${token} is out of range ${def.min}-${def.max}`);
    }
    return n;
  }
  const lower = token.toLowerCase();
  const idx = def.names ? def.names.indexOf(lower) : -1;
  if (idx >= 0 && def.names && def.nameBase !== undefined) return idx + def.nameBase;
  const hint = def.names
    ? ` (a number ${def.min}-${def.max} or a name like ${def.names[1]?.toUpperCase()})`
    : ` (a number ${def.min}-${def.max})`;
  throw new FieldError(`${def.label} value "${token}" is not valid${hint}`);
}

function parseStep(text: string, def: FieldDef): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new FieldError(`${def.label} step "/${text}" must be a positive integer`);
  }
  return Number(text);
}

/** Parses one comma-separated field into a 0/1 table indexed by value. */
function parseField(text: string, def: FieldDef): Uint8Array {
  const bits = new Uint8Array(def.max + 1);
  for (const item of text.split(',')) {
    if (item === '') throw new FieldError(`${def.label} field "${text}" has an empty list item`);
    const slash = item.indexOf('/');
    const rangePart = slash >= 0 ? item.slice(0, slash) : item;
    const step = slash >= 0 ? parseStep(item.slice(slash + 1), def) : 1;
    let lo: number;
    let hi: number;
    if (rangePart === '*') {
      lo = def.min;
      hi = def.label === 'day-of-week' ? 6 : def.max;
    } else {
      const dash = rangePart.indexOf('-');
      if (dash >= 0) {
        lo = parseValue(rangePart.slice(0, dash), def);
        hi = parseValue(rangePart.slice(dash + 1), def);
        if (lo > hi) {
          throw new FieldError(
            `${def.label} range "${rangePart}" is reversed (start must not exceed end)`,
          );
        }
      } else {
        lo = parseValue(rangePart, def);
        // `a/n` means "from a to the end of the range, every n" (as in cronie and croner);
        // in day-of-week, `7/n` starts at Sunday (0), since 7 is Sunday too.
        if (slash >= 0 && def.label === 'day-of-week' && lo === 7) lo = 0;
        hi = slash >= 0 ? (def.label === 'day-of-week' ? 6 : def.max) : lo;
      }
    }
    for (let v = lo; v <= hi; v += step) bits[v] = 1;
  }
  return bits;
}

function nextTable(bits: Uint8Array, size: number): Int8Array {
  const table = new Int8Array(size + 1).fill(-1);
  let next = -1;
  for (let i = size - 1; i >= 0; i--) {
    if (bits[i] === 1) next = i;
    table[i] = next;
  }
  return table;
}

const EVERY_RE = /^@every\s+(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/i;

function parseEvery(source: string): ScheduleParseResult {
  const match = EVERY_RE.exec(source);
  if (!match || (match[1] === undefined && match[2] === undefined && match[3] === undefined)) {
    return {
      ok: false,
      error: `"${source}" is not a valid @every interval (expected e.g. "@every 5m", "@every 1h30m", "@every 90s")`,
    };
  }
  const seconds = Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
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
): boolean {
  if (!domStar && !dowStar) return true; // either rule: any weekday eventually matches
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
        error: `unknown shortcut "${source}" (expected one of ${Object.keys(SHORTCUTS).join(', ')} or @every <interval>)`,
      };
    }
    cronText = expanded;
  }
  const fields = cronText.split(/\s+/);
  if (fields.length !== 5) {
    return {
      ok: false,
      error: `expected 5 fields (minute hour day-of-month month day-of-week), found ${fields.length} in "${source}"`,
    };
  }
  try {
    const tables = fields.map((f, i) => parseField(f, FIELDS[i] as FieldDef));
    const [minutes, hours, doms, months, dowsRaw] = tables as [
      Uint8Array,
      Uint8Array,
      Uint8Array,
      Uint8Array,
      Uint8Array,
    ];
    const dows = dowsRaw.slice(0, 7);
    if (dowsRaw[7] === 1) dows[0] = 1; // 7 is Sunday too
    const [minuteField, hourField, domField, , dowField] = fields as [
      string,
      string,
      string,
      string,
      string,
    ];
    const domStar = domField.startsWith('*');
    const dowStar = dowField.startsWith('*');
    if (!canEverFire(months, doms, domStar, dowStar)) {
      return {
        ok: false,
        error: `schedule "${source}" can never fire (no such day in the selected months)`,
      };
    }
    return {
      ok: true,
      schedule: {
        kind: 'cron',
        source,
        minutes,
        hours,
        doms,
        months,
        dows,
        domStar,
        dowStar,
        fixedTime: !minuteField.startsWith('*') && !hourField.startsWith('*'),
        nextMinute: nextTable(minutes, 60),
        nextHour: nextTable(hours, 24),
        nextMonth: nextTable(months, 13),
      },
    };
  } catch (err) {
    if (err instanceof FieldError) return { ok: false, error: `${err.message} in "${source}"` };
    throw err;
  }
}
