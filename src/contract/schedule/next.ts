/**
 * Fire-instant computation (SPEC §3). A zone's timeline is a sequence of
 * segments of constant offset separated by transitions. Within a segment the
 * naive wall-clock search (`naiveNext`) finds the next matching local minute;
 * across a transition the classic cron DST rules apply:
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
  DAY_MS,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  weekdayOfDays,
} from './civil.js';
import type { CronSpec, Schedule } from './cron.js';
import type { Zone } from './zone.js';

/**
 * How far ahead a search looks before giving up. A valid schedule always
 * fires within 8 years (Feb 29 across a skipped leap year such as 2100).
 */
export const SEARCH_HORIZON_MS = 12 * 366 * DAY_MS;

function dayMatches(spec: CronSpec, dayNumber: number, dom: number): boolean {
  const domOk = spec.doms[dom] === 1;
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
    if (dayMatches(spec, day, d)) {
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

const ceilMinutes = (ms: number): number => Math.ceil(ms / MINUTE_MS);

/**
 * The first fire instant strictly after `after` (epoch ms) of `schedule` in
 * `zone`, or null if none within the search horizon.
 */
export function nextAfter(schedule: Schedule, zone: Zone, after: number): number | null {
  if (schedule.kind === 'every') {
    const interval = schedule.intervalSeconds * 1000;
    return (Math.floor(after / interval) + 1) * interval;
  }
  const horizon = after + SEARCH_HORIZON_MS;
  let off = zone.offsetAt(after);
  let segStart = after;
  let from = Math.floor((after + off) / MINUTE_MS) + 1;
  if (schedule.fixedTime) {
    const prev = zone.transitionAtOrBefore(after);
    if (prev && prev.before > prev.after) from = Math.max(from, ceilMinutes(prev.at + prev.before));
  }
  for (;;) {
    const tr = zone.transitionAfter(segStart, horizon);
    const segEnd = tr ? tr.at : horizon;
    const local = naiveNext(schedule, from, ceilMinutes(segEnd + off));
    if (local >= 0) return local * MINUTE_MS - off;
    if (!tr) return null;
    if (schedule.fixedTime && tr.after > tr.before) {
      const gap = naiveNext(
        schedule,
        ceilMinutes(tr.at + tr.before),
        ceilMinutes(tr.at + tr.after),
      );
      if (gap >= 0) return tr.at;
    }
    segStart = tr.at;
    off = tr.after;
    from = ceilMinutes(tr.at + tr.after);
    if (schedule.fixedTime && tr.before > tr.after)
      from = Math.max(from, ceilMinutes(tr.at + tr.before));
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
  for (let window = 3_600_000; window <= SEARCH_HORIZON_MS * 4; window *= 4) {
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
