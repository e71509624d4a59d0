/**
 * The next fires of a job across all its schedules, each with its local time
 * and, where the zone's offset changed since the previous fire, the DST
 * transition in between (SPEC §13: "the next 10 fires (DST transitions
 * marked)"). Pure: the reference instant is passed in.
 */
import { formatLocal, formatOffset } from './civil.js';
import type { Schedule } from './cron.js';
import { nextAfter } from './next.js';
import { getZone, type Zone } from './zone.js';

/** A change of the zone's offset between two fires. */
export interface OffsetChange {
  /** The transition instant (epoch ms). */
  at: number;
  /** Offsets as `+01:00`. */
  before: string;
  after: string;
  /** `forward`: clocks jump ahead (a wall-clock gap); `back`: an hour repeats. */
  direction: 'forward' | 'back';
}

/** One upcoming fire. */
export interface UpcomingFire {
  /** Epoch ms. */
  at: number;
  /** RFC 3339 in the job's zone, e.g. `2026-03-29T03:00:00+02:00`. */
  local: string;
  /** The schedules (indexes) that fire at this instant. */
  scheduleIndexes: number[];
  /** The offset change since the previous fire (or since `from` for the first), if any. */
  transition: OffsetChange | null;
}

/**
 * The first `count` distinct fire instants strictly after `from` of the given
 * schedules in `timezone` (a valid zone), merged in time order; instants that
 * several schedules share appear once.
 */
export function upcomingFires(
  schedules: readonly Schedule[],
  timezone: string,
  from: number,
  count: number,
): UpcomingFire[] {
  const zone = getZone(timezone);
  const heads = schedules.map((s) => nextAfter(s, zone, from));
  const out: UpcomingFire[] = [];
  let previous = from;
  while (out.length < count) {
    let at: number | null = null;
    for (const h of heads) if (h !== null && (at === null || h < at)) at = h;
    if (at === null) break;
    const indexes: number[] = [];
    heads.forEach((h, i) => {
      if (h === at) {
        indexes.push(i);
        heads[i] = nextAfter(schedules[i] as Schedule, zone, at);
      }
    });
    out.push({
      at,
      local: formatLocal(at, zone.offsetAt(at)),
      scheduleIndexes: indexes,
      transition: offsetChange(zone, previous, at),
    });
    previous = at;
  }
  return out;
}

/** The last offset transition in (from, to], when the offset at `to` differs from the one at `from`. */
function offsetChange(zone: Zone, from: number, to: number): OffsetChange | null {
  const before = zone.offsetAt(from);
  const after = zone.offsetAt(to);
  if (before === after) return null;
  const t = zone.transitionAtOrBefore(to);
  return {
    at: t && t.at > from ? t.at : to,
    before: formatOffset(before),
    after: formatOffset(after),
    direction: after > before ? 'forward' : 'back',
  };
}
