/**
 * Blackout windows (SPEC §16 "Calendars"): whether an instant lies inside one of a job's
 * windows, and which. Pure: no clock, no I/O (a `dates_file` window carries the dates the
 * manifest loader read).
 *
 * - **Recurring** `{cron, duration_seconds}`: every instant of `cron` in the job's zone — the
 *   schedule engine's instants, with its DST rules (a fixed-time start inside a spring-forward
 *   gap starts the window at the transition; in a fall-back overlap only the first pass starts
 *   one) — starts a window `[start, start + duration)` of elapsed time. An instant `t` is inside
 *   when the first start after `t − duration` is at or before `t`: one engine call, exact.
 * - **Range** `{from, to}`: `[from, to)`.
 * - **Dates** `{dates_file}`: the whole local day, in the job's zone, of each date: `t` is inside
 *   when its wall-clock date there is listed (a 23- or 25-hour day on a DST change included).
 */
import type { BlackoutWindow } from './manifest/types.js';
import { civilFromDays, DAY_MS, formatLocal } from './schedule/civil.js';
import { parseSchedule, type Schedule } from './schedule/cron.js';
import { rfc3339Like } from './schedule/instant.js';
import { nextAfter } from './schedule/next.js';
import { getZone, type Zone } from './schedule/zone.js';

/** One window, ready to test instants. */
interface Compiled {
  /** The window covering `t`, described for a run's reason; null when `t` is outside it. */
  cover(t: number): string | null;
}

/** A job's blackout windows, compiled. */
export interface Blackout {
  /**
   * The first window (in the order written) covering instant `t`, as the text a skipped run's
   * reason carries after `blackout: `; null when none does.
   */
  at(t: number): string | null;
}

/** Thrown for a window that cannot be compiled (a manifest not validated, dates not loaded). */
export class BlackoutError extends Error {}

const ymd = (day: number): string => {
  const { y, m, d } = civilFromDays(day);
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
};

/** Days since 1970-01-01 of a `YYYY-MM-DD` date. */
function dayOf(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

function recurring(i: number, cron: string, seconds: number, zone: Zone): Compiled {
  const parsed = parseSchedule(cron);
  if (!parsed.ok) throw new BlackoutError(`window ${i}: ${parsed.error}`);
  const schedule: Schedule = parsed.schedule;
  const length = seconds * 1000;
  return {
    cover(t) {
      const start = nextAfter(schedule, zone, t - length);
      if (start === null || start > t) return null;
      const local = formatLocal(start, zone.offsetAt(start));
      return `window ${i} (cron ${JSON.stringify(cron)}, ${seconds} s from ${local})`;
    },
  };
}

function range(i: number, fromText: string, toText: string): Compiled {
  const from = rfc3339Like(fromText);
  const to = rfc3339Like(toText);
  if (from === null || to === null || from >= to)
    throw new BlackoutError(`window ${i}: from and to must be RFC 3339 instants, from before to`);
  const text = `window ${i} (${fromText} to ${toText})`;
  return { cover: (t) => (t >= from && t < to ? text : null) };
}

function dates(i: number, file: string, list: readonly string[] | undefined, zone: Zone): Compiled {
  if (list === undefined)
    throw new BlackoutError(
      `window ${i}: the dates of ${file} were not read (load the manifest from its file)`,
    );
  const days = new Set(list.map(dayOf));
  return {
    cover(t) {
      const day = Math.floor((t + zone.offsetAt(t)) / DAY_MS);
      return days.has(day) ? `window ${i} (${file}: ${ymd(day)})` : null;
    },
  };
}

/**
 * Compiles a job's windows for its zone; null when it has none.
 * @throws {BlackoutError} for a window that is not valid (validate the manifest first) or a
 *   `dates_file` window whose dates were not loaded.
 */
export function compileBlackout(
  windows: readonly BlackoutWindow[] | undefined,
  timezone: string,
): Blackout | null {
  if (windows === undefined || windows.length === 0) return null;
  const zone = getZone(timezone);
  const compiled = windows.map((w, i): Compiled => {
    if ('cron' in w) return recurring(i, w.cron, w.duration_seconds, zone);
    if ('from' in w) return range(i, w.from, w.to);
    return dates(i, w.dates_file, w.dates, zone);
  });
  return {
    at(t) {
      for (const c of compiled) {
        const hit = c.cover(t);
        if (hit !== null) return hit;
      }
      return null;
    },
  };
}
