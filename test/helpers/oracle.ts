/**
 * A deliberately naive, independent model of SPEC §3 used as a test oracle:
 * it walks UTC minute by minute (or second by second for schedules with a
 * seconds field), reads the wall clock from Intl (not from the engine's zone
 * tables) and applies the DST rules literally.
 */
import fc from 'fast-check';
import type { CronSpec } from '../../src/contract/schedule/index.js';

const MINUTE = 60_000;
const SECOND = 1000;
const formats = new Map<string, Intl.DateTimeFormat>();

function format(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    formats.set(tz, f);
  }
  return f;
}

/** Wall-clock minutes since 1970-01-01 (local time read as if UTC) of instant `ms` in `tz`. */
export function localMinute(tz: string, ms: number): number {
  const text = format(tz).format(ms); // "03/08/2026, 03:00"
  const m = /^(\d{2})\/(\d{2})\/(\d+), (\d{2}):(\d{2})$/.exec(text);
  if (!m) throw new Error(`unexpected Intl output ${text}`);
  return (
    Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5])) / MINUTE
  );
}

/** Local minute of every UTC minute in [start, end). */
export function localTable(tz: string, start: number, end: number): Int32Array {
  const n = Math.floor((end - start) / MINUTE);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = localMinute(tz, start + i * MINUTE);
  return out;
}

/** Whether naive local minute `x` matches the spec's fields (classic day rule). */
export function matchesMinute(spec: CronSpec, x: number): boolean {
  const d = new Date(x * MINUTE);
  const dom = spec.doms[d.getUTCDate()] === 1;
  const dow = spec.dows[d.getUTCDay()] === 1;
  const day = spec.domStar || spec.dowStar ? dom && dow : dom || dow;
  return (
    day &&
    spec.minutes[d.getUTCMinutes()] === 1 &&
    spec.hours[d.getUTCHours()] === 1 &&
    spec.months[d.getUTCMonth() + 1] === 1
  );
}

/**
 * Local second of every UTC second in [start, end), from one Intl reading per minute. Throws
 * unless each minute's local time advances by exactly 59 s within the minute (whole-minute
 * offsets, transitions on minute boundaries), which is what makes that derivation exact.
 */
export function localSecondTable(tz: string, start: number, end: number): Float64Array {
  if (start % MINUTE !== 0) throw new Error('start must be a whole UTC minute');
  const n = Math.floor((end - start) / SECOND);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 60) {
    const u = start + i * SECOND;
    const first = localMinute(tz, u);
    if (localMinute(tz, u + 59 * SECOND) !== first) {
      throw new Error(
        `${tz}: the local minute changes inside UTC minute ${new Date(u).toISOString()}`,
      );
    }
    for (let k = 0; k < 60 && i + k < n; k++) out[i + k] = first * 60 + k;
  }
  return out;
}

/** Whether naive local second `x` matches the spec, seconds field included. */
export function matchesSecond(spec: CronSpec, x: number): boolean {
  const minute = Math.floor(x / 60);
  return spec.seconds[x - minute * 60] === 1 && matchesMinute(spec, minute);
}

/**
 * Fires of `spec` in (from, to], walking the UTC instants `start + i * unit` of `table`, which
 * holds the local time of each in the same unit: localTable (minutes) or localSecondTable
 * (seconds, for schedules with a seconds field). `start` should lie before any repeated
 * interval that `from` may be in, so the first-pass memory of fixed-time jobs is warm.
 */
export function oracleFires(
  spec: CronSpec,
  table: ArrayLike<number>,
  start: number,
  from: number,
  to: number,
  unit: number = MINUTE,
): number[] {
  // seconds are walked in order: remember the last minute's verdict
  let lastMinute = Number.NaN;
  let lastMinuteMatches = false;
  const matches = (x: number): boolean => {
    if (unit === MINUTE) return matchesMinute(spec, x);
    const minute = Math.floor(x / 60);
    if (spec.seconds[x - minute * 60] !== 1) return false;
    if (minute !== lastMinute) {
      lastMinute = minute;
      lastMinuteMatches = matchesMinute(spec, minute);
    }
    return lastMinuteMatches;
  };
  const seen = new Set<number>();
  const out: number[] = [];
  for (let i = 0; i < table.length; i++) {
    const u = start + i * unit;
    if (u > to) break;
    const local = table[i] as number;
    let fire = false;
    if (spec.fixedTime) {
      const prev = i > 0 ? (table[i - 1] as number) : local - 1;
      for (let x = prev + 1; x < local && !fire; x++) fire = matches(x); // skipped wall-clock times
      if (!seen.has(local) && matches(local)) fire = true;
      seen.add(local);
    } else {
      fire = matches(local);
    }
    if (fire && u > from) out.push(u);
  }
  return out;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

function field(
  min: number,
  max: number,
  starWeight: number,
  names?: readonly string[],
  base = 0,
): fc.Arbitrary<string> {
  const value = names
    ? fc.oneof(
        fc.integer({ min, max }).map(String),
        fc.constantFrom(...names.map((n, i) => ({ n, i: i + base }))).map((x) => x.n),
      )
    : fc.integer({ min, max }).map(String);
  const range = fc
    .tuple(fc.integer({ min, max }), fc.integer({ min, max }))
    .map(([a, b]) => (a <= b ? `${a}-${b}` : `${b}-${a}`));
  const step = fc.integer({ min: 1, max: Math.max(1, max - min) });
  return fc.oneof(
    { weight: starWeight, arbitrary: fc.constant('*') },
    { weight: 2, arbitrary: step.map((s) => `*/${s}`) },
    { weight: 2, arbitrary: value },
    { weight: 2, arbitrary: range },
    { weight: 1, arbitrary: fc.tuple(range, step).map(([r, s]) => `${r}/${s}`) },
    {
      weight: 2,
      arbitrary: fc.array(value, { minLength: 2, maxLength: 4 }).map((v) => v.join(',')),
    },
  );
}

/**
 * Random cron expressions; `dense` keeps the day fields mostly `*`. With `seconds`, a
 * leading seconds field makes them 6-field expressions.
 */
export function cronExpression(dense: boolean, seconds = false): fc.Arbitrary<string> {
  const dayStar = dense ? 12 : 3;
  return fc
    .tuple(
      seconds ? field(0, 59, 2) : fc.constant(''),
      field(0, 59, 2),
      field(0, 23, 3),
      field(1, 31, dayStar),
      field(1, 12, dayStar, MONTHS, 1),
      field(0, 7, dayStar, DAYS),
    )
    .map((f) => (seconds ? f : f.slice(1)).join(' '));
}

/** The five zones SPEC §3 names, plus UTC. */
export const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/Berlin',
  'Australia/Lord_Howe',
  'America/Santiago',
  'America/Havana',
] as const;

/** Offset transitions of `tz` between two instants, found by hourly Intl probes and bisection. */
export function oracleTransitions(tz: string, from: number, to: number): number[] {
  const offset = (ms: number): number =>
    localMinute(tz, ms) * MINUTE - Math.floor(ms / MINUTE) * MINUTE;
  const out: number[] = [];
  let prev = offset(from);
  for (let t = from + 3_600_000; t <= to; t += 3_600_000) {
    const cur = offset(t);
    if (cur !== prev) {
      let lo = t - 3_600_000;
      let hi = t;
      while (hi - lo > MINUTE) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
        if (offset(mid) === prev) lo = mid;
        else hi = mid;
      }
      out.push(hi);
      prev = cur;
    }
  }
  return out;
}
