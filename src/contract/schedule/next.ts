/**
 * Fire-instant computation (SPEC §3). A zone's timeline is a sequence of
 * segments of constant offset separated by transitions. Within a segment the
 * naive wall-clock search (`naiveNext`) finds the next matching local minute,
 * or `naiveNextSecond` the next matching local second for a schedule with
 * second resolution (the seconds extension; every other schedule keeps the
 * minute search, which is faster); across a transition the classic cron DST
 * rules apply, at the same resolution:
 *
 * - spring forward (gap): a fixed-time job with a match inside the skipped
 *   local interval fires once, at the transition instant (the first instant
 *   after the gap); wildcard jobs have no fire there;
 * - fall back (overlap): a fixed-time job fires only in the first pass, so the
 *   second segment's search starts at the first segment's local end; wildcard
 *   jobs fire in both passes.
 *
 * The fire set is therefore a fixed set of instants, independent of where a
 * search starts, which is what makes `previousFire` by forward search sound.
 */
import {
  DAY_MINUTES,
  MINUTE_MS,
  SECOND_MS,
  DAY_MS,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  weekdayOfDays,
} from './civil.js';
import type { CronSpec, Schedule } from './cron.js';
import type { Zone } from './zone.js';

/**
 * How far ahead a search looks before giving up. A valid schedule always fires within 40
 * years: a date restricted to one weekday (`0 0 29 2 *\/7`, Feb 29 on a Sunday: 2032, 2060,
 * 2088, 2128) recurs at most 40 years apart in the Gregorian cycle, 28 years apart except
 * across a skipped leap year such as 2100.
 */
export const SEARCH_HORIZON_MS = 41 * 366 * DAY_MS;

/** How far ahead one step of the search asks the zone for a transition. */
const TRANSITION_CHUNK_MS = 366 * DAY_MS;

function dayMatches(spec: CronSpec, dayNumber: number, y: number, m: number, dom: number): boolean {
  const domOk = spec.doms[dom] === 1 || (spec.lastDom && dom === daysInMonth(y, m));
  const dowOk = spec.dows[weekdayOfDays(dayNumber)] === 1;
  // classic cron: if either day field starts with `*`, both must match (a bare `*`
  // matches everything, so only the other counts); otherwise either may match.
  return spec.domStar || spec.dowStar ? domOk && dowOk : domOk || dowOk;
}

/**
 * Smallest naive local minute `L` (minutes since 1970-01-01 in wall-clock
 * terms) with `from <= L < limit` that matches `spec`, or -1 if none.
 */
export function naiveNext(spec: CronSpec, from: number, limit: number): number {
  if (from >= limit) return -1;
  const lastDay = Math.floor((limit - 1) / DAY_MINUTES);
  let day = Math.floor(from / DAY_MINUTES);
  const rem = from - day * DAY_MINUTES;
  let h = Math.floor(rem / 60);
  let mi = rem - h * 60;
  let { y, m, d } = civilFromDays(day);
  while (day <= lastDay) {
    if (spec.months[m] !== 1) {
      const nm = spec.nextMonth[m] as number;
      if (nm > 0) m = nm;
      else {
        y += 1;
        m = spec.nextMonth[1] as number;
      }
      d = 1;
      h = 0;
      mi = 0;
      day = daysFromCivil(y, m, 1);
      continue;
    }
    if (dayMatches(spec, day, y, m, d)) {
      if (spec.hours[h] !== 1) {
        const nh = spec.nextHour[h] as number;
        h = nh;
        mi = 0;
      }
      if (h >= 0) {
        const nmin = spec.nextMinute[mi] as number;
        if (nmin >= 0) {
          const found = day * DAY_MINUTES + h * 60 + nmin;
          return found < limit ? found : -1;
        }
        // no matching minute left in this hour: try the next hour
        if (h < 23) {
          h += 1;
          mi = 0;
          continue;
        }
      }
    }
    // next day
    day += 1;
    d += 1;
    h = 0;
    mi = 0;
    if (d > daysInMonth(y, m)) {
      d = 1;
      m += 1;
      if (m > 12) {
        m = 1;
        y += 1;
      }
    }
  }
  return -1;
}

/**
 * Smallest naive local second `S` (seconds since 1970-01-01 in wall-clock
 * terms) with `from <= S < limit` that matches `spec`, or -1 if none.
 */
export function naiveNextSecond(spec: CronSpec, from: number, limit: number): number {
  if (from >= limit) return -1;
  const minute = Math.floor(from / 60);
  const limitMinute = Math.ceil(limit / 60);
  const sameMinute = spec.nextSecond[from - minute * 60] as number;
  // a matching second left in `from`'s minute counts when that minute matches; otherwise the
  // first matching second of the next matching minute
  const m = naiveNext(spec, sameMinute >= 0 ? minute : minute + 1, limitMinute);
  if (m < 0) return -1;
  const found = m * 60 + (m === minute ? sameMinute : (spec.nextSecond[0] as number));
  return found < limit ? found : -1;
}

/** The naive search at the schedule's resolution: local seconds or local minutes. */
function naiveSearch(spec: CronSpec, from: number, limit: number): number {
  return spec.secondResolution ? naiveNextSecond(spec, from, limit) : naiveNext(spec, from, limit);
}

/**
 * The first fire instant strictly after `after` (epoch ms) of `schedule` in
 * `zone`, or null if none within the search horizon. Local times are counted
 * in units of the schedule's resolution (a minute, or a second).
 */
export function nextAfter(schedule: Schedule, zone: Zone, after: number): number | null {
  if (schedule.kind === 'every') {
    const interval = schedule.intervalSeconds * 1000;
    return (Math.floor(after / interval) + 1) * interval;
  }
  const unit = schedule.secondResolution ? SECOND_MS : MINUTE_MS;
  const horizon = after + SEARCH_HORIZON_MS;
  let off = zone.offsetAt(after);
  let segStart = after;
  let from = Math.floor((after + off) / unit) + 1;
  if (schedule.fixedTime) {
    const prev = zone.transitionAtOrBefore(after);
    if (prev && prev.before > prev.after) {
      from = Math.max(from, Math.ceil((prev.at + prev.before) / unit));
    }
  }
  for (;;) {
    // look for transitions a year at a time, so a zone without any is read only as far as
    // the search goes, not to the horizon
    const chunkEnd = Math.min(horizon, segStart + TRANSITION_CHUNK_MS);
    const tr = zone.transitionAfter(segStart, chunkEnd);
    const segEnd = tr ? tr.at : chunkEnd;
    const local = naiveSearch(schedule, from, Math.ceil((segEnd + off) / unit));
    if (local >= 0) return local * unit - off;
    if (!tr) {
      if (chunkEnd >= horizon) return null;
      // same offset on: go on searching where this chunk's search stopped
      segStart = chunkEnd;
      from = Math.ceil((chunkEnd + off) / unit);
      continue;
    }
    if (schedule.fixedTime && tr.after > tr.before) {
      const gap = naiveSearch(
        schedule,
        Math.ceil((tr.at + tr.before) / unit),
        Math.ceil((tr.at + tr.after) / unit),
      );
      if (gap >= 0) return tr.at;
    }
    segStart = tr.at;
    off = tr.after;
    from = Math.ceil((tr.at + tr.after) / unit);
    if (schedule.fixedTime && tr.before > tr.after) {
      from = Math.max(from, Math.ceil((tr.at + tr.before) / unit));
    }
  }
}

/**
 * The latest fire instant at or before `atOrBefore` (epoch ms), or null if
 * none within the search horizon. Searches forward from growing windows, so
 * it agrees with `nextAfter` by construction.
 */
export function previousAtOrBefore(
  schedule: Schedule,
  zone: Zone,
  atOrBefore: number,
): number | null {
  if (schedule.kind === 'every') {
    const interval = schedule.intervalSeconds * 1000;
    return Math.floor(atOrBefore / interval) * interval;
  }
  // the first window holds about 60 units of the schedule's resolution (an hour, or a minute)
  const first = schedule.secondResolution ? MINUTE_MS : 3_600_000;
  for (let window = first; window <= SEARCH_HORIZON_MS * 4; window *= 4) {
    let last: number | null = null;
    let fire = nextAfter(schedule, zone, atOrBefore - window);
    while (fire !== null && fire <= atOrBefore) {
      last = fire;
      fire = nextAfter(schedule, zone, fire);
    }
    if (last !== null) return last;
  }
  return null;
}
