/**
 * Where EventBridge Scheduler's daylight-saving behaviour differs from cronix's (SPEC §3).
 *
 * AWS documents (re:Post knowledge-center article "eventbridge-scheduler-adjust-dst" and the
 * "Daylight saving time" section of the Scheduler user guide's schedule-types page): in spring
 * a cron time that falls on a non-existent local time is **skipped**; in autumn a repeated
 * local time runs **only once**. cronix instead fires a *fixed-time* job once right after a
 * spring-forward gap, and a *wildcard* job in both passes of a fall-back overlap. So the two
 * disagree exactly when a fixed-time schedule matches a local time inside a gap, or a wildcard
 * schedule matches one inside an overlap; everywhere else they give the same fires. These
 * pure functions find such a conflict over a horizon of transitions, and whether a
 * minute-only schedule can be stated in UTC instead (its fires do not depend on the zone).
 */
import {
  civilFromDays,
  DAY_MS,
  MINUTE_MS,
  SECOND_MS,
  weekdayOfDays,
} from '../../contract/schedule/civil.js';
import type { CronSpec } from '../../contract/schedule/index.js';
import { getZone, type Transition } from '../../contract/schedule/zone.js';

/**
 * How far ahead transitions are checked: 28 years, one full cycle of the Gregorian
 * weekday/leap-year pattern, so every date and weekday a transition rule can land on is seen.
 */
export const DST_HORIZON_MS = 28 * 366 * DAY_MS;

/** A local time where EventBridge and cronix would fire differently. */
export interface DstConflict {
  /** `gap`: skipped by spring-forward; `overlap`: repeated by fall-back. */
  kind: 'gap' | 'overlap';
  /**
   * The first matching local wall-clock time, `YYYY-MM-DDTHH:MM` (`YYYY-MM-DDTHH:MM:SS` for a
   * schedule with second resolution).
   */
  local: string;
}

/**
 * Whether the naive wall-clock minute `naiveMs` (local time encoded as UTC) matches `spec`'s
 * minute, hour and day fields (the seconds field aside).
 */
export function matchesLocalMinute(spec: CronSpec, naiveMs: number): boolean {
  const days = Math.floor(naiveMs / DAY_MS);
  const minuteOfDay = Math.floor((naiveMs - days * DAY_MS) / MINUTE_MS);
  if (spec.minutes[minuteOfDay % 60] !== 1 || spec.hours[Math.floor(minuteOfDay / 60)] !== 1) {
    return false;
  }
  const { m, d } = civilFromDays(days);
  if (spec.months[m] !== 1) return false;
  const domOk = spec.doms[d] === 1;
  const dowOk = spec.dows[weekdayOfDays(days)] === 1;
  return spec.domStar || spec.dowStar ? domOk && dowOk : domOk || dowOk;
}

function formatNaive(naiveMs: number, seconds: boolean): string {
  return new Date(naiveMs).toISOString().slice(0, seconds ? 19 : 16);
}

/**
 * The first naive local instant in `[lo, hi)` (ms, whole minutes or seconds) that `spec`
 * matches, at second resolution, or -1: the matching minutes, and in each the first matching
 * second inside the interval (only second 0 for a 5-field schedule).
 */
function firstMatchIn(spec: CronSpec, lo: number, hi: number): number {
  for (let t = Math.floor(lo / MINUTE_MS) * MINUTE_MS; t < hi; t += MINUTE_MS) {
    if (!matchesLocalMinute(spec, t)) continue;
    const from = Math.max(0, Math.ceil((lo - t) / SECOND_MS));
    const second = from < 60 ? (spec.nextSecond[from] as number) : -1;
    if (second >= 0 && t + second * SECOND_MS < hi) return t + second * SECOND_MS;
  }
  return -1;
}

/** Transitions of `timezone` with `from < at < until`, in order. */
export function transitionsBetween(timezone: string, from: number, until: number): Transition[] {
  const zone = getZone(timezone);
  const out: Transition[] = [];
  let t = from;
  for (;;) {
    const next = zone.transitionAfter(t, until);
    if (!next) return out;
    out.push(next);
    t = next.at;
  }
}

/**
 * The first local time in `[from, from + horizon)` where EventBridge Scheduler would fire
 * `spec` differently from cronix in `timezone`, or null when they agree throughout.
 */
export function findDstConflict(
  spec: CronSpec,
  timezone: string,
  from: number,
  horizonMs: number = DST_HORIZON_MS,
): DstConflict | null {
  for (const tr of transitionsBetween(timezone, from, from + horizonMs)) {
    const gap = tr.after > tr.before;
    // gap: fixed-time jobs differ (AWS skips, cronix fires after the gap);
    // overlap: wildcard jobs differ (AWS runs once, cronix fires in both passes)
    if (gap !== spec.fixedTime) continue;
    const lo = tr.at + Math.min(tr.before, tr.after);
    const hi = tr.at + Math.max(tr.before, tr.after);
    const t = firstMatchIn(spec, lo, hi);
    if (t >= 0) {
      return { kind: gap ? 'gap' : 'overlap', local: formatNaive(t, spec.secondResolution) };
    }
  }
  return null;
}

/**
 * For a schedule whose fires depend only on the minute (hour, day and month unrestricted):
 * the UTC minute shift (0..59) that states it in UTC with the same fires, when every offset
 * `timezone` uses from `from` over the horizon has the same minutes part; otherwise null.
 * (Berlin, +01:00/+02:00 → 0; St John's, −03:30/−02:30 → 30; Lord Howe, +10:30/+11:00 → null.)
 */
export function utcMinuteShift(
  timezone: string,
  from: number,
  horizonMs: number = DST_HORIZON_MS,
): number | null {
  const zone = getZone(timezone);
  const offsets = new Set<number>([zone.offsetAt(from)]);
  for (const tr of transitionsBetween(timezone, from, from + horizonMs)) offsets.add(tr.after);
  const parts = new Set<number>();
  for (const off of offsets) {
    if (off % MINUTE_MS !== 0) return null;
    parts.add((((off / MINUTE_MS) % 60) + 60) % 60);
  }
  return parts.size === 1 ? ([...parts][0] as number) : null;
}
