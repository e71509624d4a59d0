/**
 * A deliberately naive, independent model of SPEC §3 used as a test oracle:
 * it walks UTC minute by minute, reads the wall clock from Intl (not from the
 * engine's zone tables) and applies the DST rules literally.
 */
import fc from 'fast-check';
import type { CronSpec } from '../../src/contract/schedule/index.js';

const MINUTE = 60_000;
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
 * Fires of `spec` at UTC minutes in (from, to], given `table` = localTable(tz, start, ≥ to).
 * `start` should lie a day before `from` so the first-pass memory of fixed-time jobs is warm.
 */
export function oracleFires(
  spec: CronSpec,
  table: Int32Array,
  start: number,
  from: number,
  to: number,
): number[] {
  const seen = new Set<number>();
  const out: number[] = [];
  for (let i = 0; i < table.length; i++) {
    const u = start + i * MINUTE;
    if (u > to) break;
    const local = table[i] as number;
    let fire = false;
    if (spec.fixedTime) {
      const prev = i > 0 ? (table[i - 1] as number) : local - 1;
      for (let x = prev + 1; x < local && !fire; x++) fire = matchesMinute(spec, x); // skipped wall-clock minutes
      if (!seen.has(local) && matchesMinute(spec, local)) fire = true;
      seen.add(local);
    } else {
      fire = matchesMinute(spec, local);
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

/** Random 5-field cron expressions; `dense` keeps the day fields mostly `*`. */
export function cronExpression(dense: boolean): fc.Arbitrary<string> {
  const dayStar = dense ? 12 : 3;
  return fc
    .tuple(
      field(0, 59, 2),
      field(0, 23, 3),
      field(1, 31, dayStar),
      field(1, 12, dayStar, MONTHS, 1),
      field(0, 7, dayStar, DAYS),
    )
    .map((f) => f.join(' '));
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
