/**
 * Translation of a parsed schedule (SPEC §3) into systemd `OnCalendar=` expressions that fire
 * at exactly the instants of cronix's own engine, or the reason it cannot be done. Pure: the
 * reference instant for the DST check is passed in. See docs/backends/systemd.md.
 *
 * - Fields come from the parsed bit tables, so names, `7` = Sunday, ranges, steps and lists
 *   are already resolved; each field is re-emitted in its shortest systemd form (`*`,
 *   `00/15`, `09..17/2`, `1..5,20`).
 * - The classic day rule: when both day fields are restricted a day matches if EITHER does,
 *   but systemd ANDs a weekday with a date, so that case becomes two expressions (weekdays on
 *   every date; the days of month on every weekday). When a day field starts with `*` (a step
 *   over `*` included) both must match, which is one expression.
 * - Seconds (SPEC §3 extension): `OnCalendar=` times carry seconds (`*:*:00/10`), so a
 *   6-field expression keeps its seconds field and a 5-field one fires at `:00`.
 * - `@every N` is anchored to the Unix epoch; a calendar step from midnight UTC equals that
 *   only when N divides 24 h, so other intervals are refused (`@every 5s` → `*:*:00/5`,
 *   `@every 7s` refused). Its expressions are in UTC whatever the job's zone.
 * - Every expression carries its zone (`UTC` too: without a suffix systemd uses the host's
 *   local zone).
 * - systemd follows the wall clock across DST (observed with systemd 252): a time in a
 *   spring-forward gap is skipped, a time in a fall-back overlap fires once, in the first
 *   pass. cronix fires a fixed-time job once right after a gap and a wildcard job in both
 *   passes of an overlap, so a schedule that would meet either case within the horizon is
 *   refused — except a minute-only wildcard schedule (every 15 minutes of every hour, say),
 *   which is stated in UTC instead when that gives the same fires.
 */
import type { CronSpec, Schedule } from '../../contract/schedule/index.js';
import { DST_HORIZON_MS, findDstConflict, utcMinuteShift } from './aws-dst.js';
import { lastDayRefusal } from './seconds.js';

/** Result of {@link toOnCalendar}: the `OnCalendar=` values, or why there are none. */
export type CalendarResult =
  | {
      ok: true;
      /** One or more expressions; the timer fires at the union of their instants. */
      lines: string[];
      /** Set when the expressions are stated in UTC although the job's zone is not UTC. */
      utc?: 'every' | 'minute-only';
    }
  | { ok: false; reason: string };

/** Options of {@link toOnCalendar}. */
export interface CalendarOptions {
  /** Reference instant (epoch ms): DST transitions are checked from here on. */
  now: number;
  /** How far ahead DST transitions are checked; default 28 years (a full weekday cycle). */
  horizonMs?: number;
}

/** Most `OnCalendar=` lines an `@every` translation may need before it is refused. */
export const MAX_EVERY_LINES = 32;

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
/** systemd orders weekdays Monday first and has no wrap-around ranges. */
const MONDAY_FIRST = [1, 2, 3, 4, 5, 6, 0] as const;

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** The values set in `bits` between `lo` and `hi`, ascending. */
function valuesOf(bits: Uint8Array, lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let v = lo; v <= hi; v++) if (bits[v] === 1) out.push(v);
  return out;
}

/** Runs of consecutive values: `[[1,2,3],[7],[9,10]]`. */
function runsOf(values: readonly number[]): number[][] {
  const runs: number[][] = [];
  for (const v of values) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[last.length - 1] === v - 1) last.push(v);
    else runs.push([v]);
  }
  return runs;
}

/**
 * The shortest systemd form of an ascending, non-empty value set of a field whose range is
 * `lo..hi`: `*` for all of it, `a/n` for a step that runs to the field's end, `a..b/n` for one
 * that stops earlier, else a list of values and `a..b` ranges. Numbers are zero-padded.
 */
export function compactValues(values: readonly number[], lo: number, hi: number): string {
  const first = values[0];
  const last = values[values.length - 1];
  if (first === undefined || last === undefined) throw new RangeError('empty value set');
  if (values.length === hi - lo + 1) return '*';
  if (values.length === 1) return pad2(first);
  const step = (values[1] as number) - first;
  const arithmetic = values.every((v, i) => v === first + i * step);
  if (arithmetic && step === 1 && values.length > 2) return `${pad2(first)}..${pad2(last)}`;
  if (arithmetic && values.length > 2) {
    return last + step > hi ? `${pad2(first)}/${step}` : `${pad2(first)}..${pad2(last)}/${step}`;
  }
  return runsOf(values)
    .map((run) =>
      run.length >= 3
        ? `${pad2(run[0] as number)}..${pad2(run[run.length - 1] as number)}`
        : run.map(pad2).join(','),
    )
    .join(',');
}

/**
 * The weekday part of an expression (`Mon..Fri`, `Tue,Thu,Sat,Sun`), or `''` when every
 * weekday matches. `dows` is indexed Sunday = 0.
 */
export function weekdayPart(dows: Uint8Array): string {
  const days = MONDAY_FIRST.filter((d) => dows[d] === 1);
  if (days.length === 7) return '';
  // positions 0..6 in Monday-first order, so runs never wrap past Sunday
  const positions = days.map((d) => MONDAY_FIRST.indexOf(d));
  return runsOf(positions)
    .map((run) => {
      const names = run.map((p) => WEEKDAYS[MONDAY_FIRST[p] as number] as string);
      return names.length >= 3 ? `${names[0]}..${names[names.length - 1]}` : names.join(',');
    })
    .join(',');
}

function expression(weekdays: string, date: string, time: string, zone: string): string {
  return `${weekdays === '' ? '' : `${weekdays} `}${date} ${time} ${zone}`;
}

/** Whether every calendar day matches under the classic day rule. */
function everyDayMatches(spec: CronSpec): boolean {
  const allDoms = valuesOf(spec.doms, 1, 31).length === 31;
  const allDows = valuesOf(spec.dows, 0, 6).length === 7;
  return spec.domStar || spec.dowStar ? allDoms && allDows : allDoms || allDows;
}

/**
 * The `OnCalendar=` expressions of a cron schedule in `zone` (a zone name systemd knows, or
 * `UTC`). `minuteShift` restates the minutes in UTC for {@link toOnCalendar}'s minute-only
 * case: UTC minute = local minute − shift (mod 60).
 */
export function cronExpressions(spec: CronSpec, zone: string, minuteShift = 0): string[] {
  const minuteBits = new Uint8Array(60);
  for (let m = 0; m < 60; m++)
    if (spec.minutes[m] === 1) minuteBits[(m - minuteShift + 60) % 60] = 1;
  const time = [
    compactValues(valuesOf(spec.hours, 0, 23), 0, 23),
    compactValues(valuesOf(minuteBits, 0, 59), 0, 59),
    compactValues(valuesOf(spec.seconds, 0, 59), 0, 59),
  ].join(':');
  const months = compactValues(valuesOf(spec.months, 1, 12), 1, 12);
  const doms = compactValues(valuesOf(spec.doms, 1, 31), 1, 31);
  const weekdays = weekdayPart(spec.dows);
  if (everyDayMatches(spec)) return [expression('', `*-${months}-*`, time, zone)];
  if (spec.domStar || spec.dowStar) {
    // both fields must match: systemd's own AND of weekday and date
    return [expression(weekdays, `*-${months}-${doms}`, time, zone)];
  }
  // classic cron: either field may match; systemd cannot say OR in one expression
  return [
    expression(weekdays, `*-${months}-*`, time, zone),
    expression('', `*-${months}-${doms}`, time, zone),
  ];
}

/** Hours, minutes and seconds of the fires of an epoch-anchored interval, grouped into lines. */
function everyLines(intervalSeconds: number): string[] {
  // seconds of the day of every fire: the epoch is a UTC midnight and the interval divides
  // the day, so every day repeats the same set
  const byHourSet = new Map<string, { hours: number[]; minutes: Map<number, number[]> }>();
  const hoursOf = new Map<number, number[]>(); // (minute * 60 + second) → hours
  for (let t = 0; t < 86_400; t += intervalSeconds) {
    const key = t % 3600;
    const list = hoursOf.get(key) ?? [];
    list.push(Math.floor(t / 3600));
    hoursOf.set(key, list);
  }
  for (const [minuteSecond, hours] of hoursOf) {
    const hourKey = hours.join(',');
    const group = byHourSet.get(hourKey) ?? { hours, minutes: new Map<number, number[]>() };
    const second = minuteSecond % 60;
    const minutes = group.minutes.get(second) ?? [];
    minutes.push(Math.floor(minuteSecond / 60));
    group.minutes.set(second, minutes);
    byHourSet.set(hourKey, group);
  }
  const lines: string[] = [];
  for (const { hours, minutes } of byHourSet.values()) {
    // seconds that share the same minute set become one list
    const bySecondSet = new Map<string, { minutes: number[]; seconds: number[] }>();
    for (const [second, mins] of minutes) {
      const sorted = [...mins].sort((a, b) => a - b);
      const k = sorted.join(',');
      const entry = bySecondSet.get(k) ?? { minutes: sorted, seconds: [] };
      entry.seconds.push(second);
      bySecondSet.set(k, entry);
    }
    for (const { minutes: mins, seconds } of bySecondSet.values()) {
      const h = compactValues(hours, 0, 23);
      const m = compactValues(mins, 0, 59);
      const s = compactValues(
        [...seconds].sort((a, b) => a - b),
        0,
        59,
      );
      lines.push(`*-*-* ${h}:${m}:${s} UTC`);
    }
  }
  return lines.sort();
}

/** The `OnCalendar=` expressions of `@every <intervalSeconds>`, or why it has none. */
export function everyToCalendar(intervalSeconds: number, source: string): CalendarResult {
  if (86_400 % intervalSeconds !== 0) {
    return {
      ok: false,
      reason:
        `"${source}" (${intervalSeconds} s) cannot be stated as systemd OnCalendar=: cronix ` +
        'anchors @every to the Unix epoch, which a calendar expression matches only when the ' +
        'interval divides 24 h evenly (5s, 15s, 1m, 5m, 8m, 90m, 2h, …); choose such an ' +
        'interval, write a cron schedule, or run the job under `cronix serve`',
    };
  }
  const lines = everyLines(intervalSeconds);
  if (lines.length > MAX_EVERY_LINES) {
    return {
      ok: false,
      reason:
        `"${source}" would need ${lines.length} OnCalendar= lines (at most ` +
        `${MAX_EVERY_LINES}); choose an interval that divides a minute (1s, 5s, 15s, …) or ` +
        'whole minutes that divide 24 h, or run the job under `cronix serve`',
    };
  }
  return { ok: true, lines, utc: 'every' };
}

/**
 * The timer's `AccuracySec=`: `1s` (SPEC §6), except `1us` for a schedule of the seconds
 * extension (second resolution, or `@every` below a minute). With `1s` systemd elapses a timer
 * up to a second late (at a per-boot phase inside the window), which is harmless for minute
 * schedules but would start a job meant for second :10 at :10.9, and make a start belong to
 * the next fire of a schedule firing every second.
 */
export function accuracySec(schedule: Schedule): '1s' | '1us' {
  const seconds =
    schedule.kind === 'every' ? schedule.intervalSeconds < 60 : schedule.secondResolution;
  return seconds ? '1us' : '1s';
}

/** The minute-only case: only the minute field restricts the fires (hour, days, months all). */
function isMinuteOnly(spec: CronSpec): boolean {
  return (
    valuesOf(spec.hours, 0, 23).length === 24 &&
    valuesOf(spec.months, 1, 12).length === 12 &&
    everyDayMatches(spec)
  );
}

/**
 * The `OnCalendar=` expressions that fire `schedule` in `timezone` at exactly cronix's
 * instants (SPEC §3), or the reason systemd cannot state it.
 */
export function toOnCalendar(
  schedule: Schedule,
  timezone: string,
  options: CalendarOptions,
): CalendarResult {
  if (schedule.kind === 'every') return everyToCalendar(schedule.intervalSeconds, schedule.source);
  const last = lastDayRefusal(schedule);
  if (last !== null) return { ok: false, reason: last };
  const conflict = findDstConflict(
    schedule,
    timezone,
    options.now,
    options.horizonMs ?? DST_HORIZON_MS,
  );
  if (conflict === null) return { ok: true, lines: cronExpressions(schedule, timezone) };
  if (conflict.kind === 'overlap' && isMinuteOnly(schedule)) {
    const shift = utcMinuteShift(timezone, options.now, options.horizonMs ?? DST_HORIZON_MS);
    if (shift !== null) {
      return { ok: true, lines: cronExpressions(schedule, 'UTC', shift), utc: 'minute-only' };
    }
  }
  const where = `"${schedule.source}" in ${timezone} matches ${conflict.local}`;
  const fix =
    'move it out of the transition hours, use timezone UTC, or run the job under `cronix serve`';
  return {
    ok: false,
    reason:
      conflict.kind === 'gap'
        ? `${where}, a local time skipped by a spring-forward change: cronix fires a fixed-time ` +
          `job once right after the gap, systemd skips that day's fire; ${fix}`
        : `${where}, a local time repeated by a fall-back change: cronix fires a wildcard ` +
          `job in both passes, systemd only in the first; ${fix}`,
  };
}
