/**
 * Schedules as Debian's cron (Vixie cron 3.0pl1 with Debian's patches) reads them, and what it
 * cannot express. Pure functions: the host zone and the reference instant are passed in.
 *
 * Fidelity rules (docs/backends/crontab.md):
 * - cron matches the wall clock of the daemon's own zone and Debian's cron ignores `CRON_TZ`,
 *   so a job whose zone is not the host's is refused;
 * - fields are rewritten in a form Vixie cron parses exactly as cronix does (numbers instead of
 *   names, which it does not accept in ranges or lists; `a/n` spelled `a-max/n`), keeping a
 *   leading `*` where the user wrote one, because that decides the day rule and DST handling;
 * - `@every N` (epoch-anchored) becomes cron fields only when N is whole minutes dividing the day
 *   and every offset the host zone uses is a multiple of N; otherwise it is refused;
 * - cron matches whole minutes and starts its jobs at second 0, so the seconds extension
 *   (6-field expressions, `@every` below a minute) is refused.
 */
import {
  checkTimeZone,
  parseSchedule,
  zoneOffset,
  type CronSpec,
} from '../../contract/schedule/index.js';
import { lastDayRefusal, secondsRefusal } from './seconds.js';

/** What cron does with time, for the refusal of a seconds schedule. */
export const CRON_MINUTES = 'cron matches whole minutes and starts jobs at second 0';

/** Cron lines (5 fields each) for one schedule, or why there are none. */
export type CronTranslation = { ok: true; fields: string[] } | { ok: false; reason: string };

const UTC_NAMES = new Set(['UTC', 'GMT']);

/** A zone's canonical name (`Etc/UTC` → `UTC`), for comparing two spellings of one zone. */
export function canonicalZone(zone: string): string {
  try {
    const name = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    return UTC_NAMES.has(name) ? 'UTC' : name;
  } catch {
    return zone;
  }
}

/** Whether two zone names denote the same zone. */
export function sameZone(a: string, b: string): boolean {
  return a === b || canonicalZone(a) === canonicalZone(b);
}

const FIELD_RANGES: readonly [number, number][] = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 6],
];

/** `1-5,7,9-10` for the set bits of `table` within [lo, hi]. */
function compress(table: Uint8Array, lo: number, hi: number): string {
  const parts: string[] = [];
  let v = lo;
  while (v <= hi) {
    if (table[v] !== 1) {
      v++;
      continue;
    }
    let end = v;
    while (end + 1 <= hi && table[end + 1] === 1) end++;
    parts.push(end === v ? `${v}` : end === v + 1 ? `${v},${end}` : `${v}-${end}`);
    v = end + 1;
  }
  return parts.join(',');
}

/** `*` or `*\/n` when `table` is exactly what that wildcard selects, else null. */
function wildcard(table: Uint8Array, lo: number, hi: number): string | null {
  for (let step = 1; step <= hi - lo + 1; step++) {
    let same = true;
    for (let v = lo; v <= hi && same; v++) same = (table[v] === 1) === ((v - lo) % step === 0);
    if (same) return step === 1 ? '*' : `*/${step}`;
  }
  return null;
}

function tablesOf(spec: CronSpec): Uint8Array[] {
  return [spec.minutes, spec.hours, spec.doms, spec.months, spec.dows];
}

/**
 * The cron fields of a parsed 5-field schedule in Vixie cron's dialect, or null when a field
 * that starts with `*` selects a set no single `*` or `*\/n` can (e.g. `*\/20,5`).
 */
export function vixieFields(spec: CronSpec): string | null {
  const [minuteStar, hourStar] = spec.source.startsWith('@')
    ? [false, spec.source.toLowerCase() === '@hourly']
    : spec.source.split(/\s+/).map((f) => f.startsWith('*'));
  const stars = [minuteStar ?? false, hourStar ?? false, spec.domStar, false, spec.dowStar];
  const tables = tablesOf(spec);
  const out: string[] = [];
  for (let i = 0; i < 5; i++) {
    const [lo, hi] = FIELD_RANGES[i] as [number, number];
    const table = tables[i] as Uint8Array;
    if (stars[i]) {
      const w = wildcard(table, lo, hi);
      if (w === null) return null;
      out.push(w);
    } else {
      // the month field's leading `*` does not matter to cron: render it as `*` when complete
      const w = i === 3 ? wildcard(table, lo, hi) : null;
      out.push(w === '*' ? '*' : compress(table, lo, hi));
    }
  }
  return out.join(' ');
}

/** Checks that `fields` means exactly `spec` to cronix (same sets, same `*` flags). */
function sameMeaning(spec: CronSpec, fields: string): boolean {
  const again = parseSchedule(fields);
  if (!again.ok || again.schedule.kind !== 'cron') return false;
  const b = again.schedule;
  const equal = (x: Uint8Array, y: Uint8Array): boolean =>
    x.length === y.length && x.every((v, i) => v === y[i]);
  const ta = tablesOf(spec);
  const tb = tablesOf(b);
  return (
    ta.every((t, i) => equal(t, tb[i] as Uint8Array)) &&
    spec.domStar === b.domStar &&
    spec.dowStar === b.dowStar &&
    spec.fixedTime === b.fixedTime
  );
}

/** Distinct UTC offsets (minutes) `zone` uses from `from` over the next three years. */
export function zoneOffsetsMinutes(zone: string, from: number): number[] {
  const seen = new Set<number>();
  const step = 6 * 3_600_000;
  for (let t = from; t < from + 3 * 366 * 86_400_000; t += step) {
    seen.add(Math.round(zoneOffset(zone, t) / 60_000));
  }
  return [...seen].sort((a, b) => a - b);
}

/** Cron lines firing at every epoch-anchored multiple of `minutes` (which divides 1440). */
function everyFields(minutes: number): string[] {
  if (minutes === 1) return ['* * * * *'];
  if (60 % minutes === 0) return [minutes === 60 ? '0 * * * *' : `*/${minutes} * * * *`];
  if (minutes % 60 === 0) {
    const hours = minutes / 60;
    return [hours === 24 ? '0 0 * * *' : `0 */${hours} * * *`];
  }
  const byMinute = new Map<number, number[]>();
  for (let t = 0; t < 1440; t += minutes) {
    const list = byMinute.get(t % 60) ?? [];
    list.push(Math.floor(t / 60));
    byMinute.set(t % 60, list);
  }
  return [...byMinute.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([minute, hours]) => `${minute} ${hours.join(',')} * * *`);
}

/**
 * Translates one schedule of a job for a cron daemon running in `hostZone`.
 * @param now reference instant (epoch ms) for the host zone's offsets.
 */
export function translateSchedule(
  schedule: string,
  jobZone: string,
  hostZone: string,
  now: number,
): CronTranslation {
  const parsed = parseSchedule(schedule);
  if (!parsed.ok) return { ok: false, reason: `schedule "${schedule}": ${parsed.error}` };
  const spec = parsed.schedule;
  const seconds = secondsRefusal(spec, CRON_MINUTES) ?? lastDayRefusal(spec);
  if (seconds !== null) return { ok: false, reason: seconds };
  if (spec.kind === 'every') {
    const seconds = spec.intervalSeconds;
    if (seconds % 60 !== 0) {
      return {
        ok: false,
        reason: `"${schedule}" is not whole minutes and cron fires on minute boundaries only; use a multiple of 1m, or cronix serve`,
      };
    }
    const minutes = seconds / 60;
    if (1440 % minutes !== 0) {
      return {
        ok: false,
        reason: `"${schedule}" does not divide the day evenly, so no cron expression repeats it exactly (cron restarts its fields every hour, day and month); use an interval that divides 24h (5m, 90m, 8h…), or cronix serve`,
      };
    }
    const zoneError = checkTimeZone(hostZone);
    if (zoneError !== null) return { ok: false, reason: `cron daemon zone: ${zoneError}` };
    const bad = zoneOffsetsMinutes(hostZone, now).filter((o) => o % minutes !== 0);
    if (bad.length > 0) {
      return {
        ok: false,
        reason: `"${schedule}" is anchored to the Unix epoch, but the cron daemon's zone ${hostZone} uses UTC offsets (${bad.map((o) => `${o} min`).join(', ')}) that are not multiples of ${minutes} min, so cron's wall-clock fields would fire at other instants; run cron in UTC (--cron-timezone must match it), or use cronix serve`,
      };
    }
    return { ok: true, fields: everyFields(minutes) };
  }
  if (!sameZone(jobZone, hostZone)) {
    return {
      ok: false,
      reason: `timezone "${jobZone}" differs from the cron daemon's zone "${hostZone}", and Debian's cron has no per-entry zone (it ignores CRON_TZ), so it would fire at the wrong time; use --backend systemd (OnCalendar= with a zone) or cronix serve, or set the job's timezone to "${hostZone}"`,
    };
  }
  const fields = vixieFields(spec);
  if (fields === null || !sameMeaning(spec, fields)) {
    return {
      ok: false,
      reason: `schedule "${schedule}" cannot be written for cron without changing its meaning (a field starting with "*" that selects more than "*" or "*/n"); rewrite that field as an explicit list`,
    };
  }
  return { ok: true, fields: [fields] };
}
