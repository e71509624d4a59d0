/**
 * An independent model of how EventBridge Scheduler evaluates `cron(...)` and `rate(...)`
 * expressions, written from AWS's documentation rather than from cronix's code, so tests can
 * compare the fires AWS would produce with cronix's own:
 *
 * - fields `minutes hours day-of-month month day-of-week year`; `*`, `?`, `a`, `a-b`, `a/n`,
 *   `a-b/n` and lists; day-of-week 1–7 with 1 = Sunday;
 * - the expression is matched against the wall clock of `ScheduleExpressionTimezone`;
 *   a local time that does not exist (spring forward) is skipped, and a local time that
 *   happens twice (fall back) runs only once, in the first pass (AWS re:Post,
 *   "How can I adjust my Amazon EventBridge schedule for daylight saving?").
 */
import { zoneOffset } from '../../src/contract/schedule/index.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

function fieldSet(text: string, min: number, max: number): Set<number> | null {
  if (text === '?' || text === '*') return null; // any
  const out = new Set<number>();
  for (const item of text.split(',')) {
    const [range, stepText] = item.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [min, max];
    else if (range.includes('-')) [lo, hi] = range.split('-').map(Number) as [number, number];
    else [lo, hi] = [Number(range), stepText === undefined ? Number(range) : max];
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

/** A matcher of naive wall-clock minutes (local time encoded as UTC ms) for an AWS cron. */
export function awsCronMatcher(expression: string): (naiveMs: number) => boolean {
  const m = /^cron\((.+)\)$/.exec(expression);
  if (!m) throw new Error(`not a cron expression: ${expression}`);
  const [mi, h, dom, mon, dow] = (m[1] as string).split(' ') as [
    string,
    string,
    string,
    string,
    string,
  ];
  const sets = [
    fieldSet(mi, 0, 59),
    fieldSet(h, 0, 23),
    fieldSet(dom, 1, 31),
    fieldSet(mon, 1, 12),
    fieldSet(dow, 1, 7),
  ];
  const has = (i: number, v: number): boolean => {
    const s = sets[i];
    return s === null || s === undefined || s.has(v);
  };
  const dayCache = new Map<number, boolean>();
  const dayMatches = (day: number): boolean => {
    let ok = dayCache.get(day);
    if (ok === undefined) {
      const d = new Date(day * DAY);
      ok = has(2, d.getUTCDate()) && has(3, d.getUTCMonth() + 1) && has(4, d.getUTCDay() + 1); // 1 = Sunday
      dayCache.set(day, ok);
    }
    return ok;
  };
  return (naiveMs) => {
    const minutes = Math.floor(naiveMs / MINUTE);
    const minuteOfDay = ((minutes % 1440) + 1440) % 1440;
    return (
      has(0, minuteOfDay % 60) &&
      has(1, Math.floor(minuteOfDay / 60)) &&
      dayMatches(Math.floor(naiveMs / DAY))
    );
  };
}

/** Fire instants (epoch ms) AWS would produce for `expression` in `timezone` within [from, to). */
export function awsCronFires(
  expression: string,
  timezone: string,
  from: number,
  to: number,
): number[] {
  const matches = awsCronMatcher(expression);
  const seen = new Set<number>();
  const utc = timezone === 'UTC';
  const out: number[] = [];
  for (let t = Math.ceil(from / MINUTE) * MINUTE; t < to; t += MINUTE) {
    const local = utc ? t : t + zoneOffset(timezone, t);
    if (!utc) {
      if (seen.has(local)) continue; // a repeated local time runs only once
      seen.add(local);
    }
    if (matches(local)) out.push(t);
  }
  return out;
}

/** Fire instants of `rate(n unit)` started at `start` within [start, to). */
export function awsRateFires(expression: string, start: number, to: number): number[] {
  const m = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (!m) throw new Error(`not a rate expression: ${expression}`);
  const unit = { minute: MINUTE, hour: 60 * MINUTE, day: 1440 * MINUTE }[m[2] as 'minute'];
  const out: number[] = [];
  for (let t = start; t < to; t += Number(m[1]) * unit) out.push(t);
  return out;
}
