/**
 * Translation of cronix schedules (SPEC §3) into EventBridge Scheduler schedule expressions
 * (pure). Rules of the AWS dialect, from the Scheduler user guide ("Schedule types on
 * EventBridge Scheduler") and the EventBridge cron reference:
 *
 * - `cron(minutes hours day-of-month month day-of-week year)`, six fields;
 * - day-of-week is 1–7 with **1 = Sunday** (names SUN–SAT also accepted; we emit numbers);
 * - exactly one of day-of-month / day-of-week is `?`; both restricted is not allowed;
 * - `/` steps are allowed in minutes, hours, day-of-month, month and year, not in
 *   day-of-week (`, - * ? L #` only);
 * - `rate(value unit)` with unit `minute|minutes|hour|hours|day|days`, singular for 1;
 * - both have minute resolution, so the seconds extension (6-field expressions, `@every` below
 *   a minute) is refused.
 *
 * Fields are rendered from the parsed bit tables, not rewritten from the source text, so
 * names, `7` for Sunday, steps and ranges all reduce to one canonical form: `*` for a full
 * field, `a/n` for a progression running to the field's end, else a list of values and ranges.
 */
import type { CronSpec, EverySpec, Schedule } from '../../contract/schedule/index.js';
import { checkTimeZone, parseSchedule } from '../../contract/schedule/index.js';
import { findDstConflict, utcMinuteShift } from './aws-dst.js';
import { lastDayRefusal, secondsRefusal } from './seconds.js';

/** What EventBridge Scheduler does with time, for the refusal of a seconds schedule. */
export const AWS_MINUTES =
  'EventBridge Scheduler cron() and rate() expressions have minute resolution';

/** An EventBridge Scheduler expression and the zone it is evaluated in. */
export interface AwsScheduleExpression {
  /** `cron(...)` or `rate(...)`: `ScheduleExpression`. */
  expression: string;
  /** IANA zone: `ScheduleExpressionTimezone`. */
  timezone: string;
  /**
   * For `rate()` only: the interval in seconds. cronix anchors `@every` on the Unix epoch, so
   * the backend sets `StartDate` to the next multiple of it (see {@link rateStartDate}).
   */
  rateSeconds?: number;
}

/** A translation, or the reason the schedule cannot be stated faithfully. */
export type AwsTranslation =
  { ok: true; value: AwsScheduleExpression } | { ok: false; reason: string };

/** Longest `ScheduleExpression` the API accepts. */
export const AWS_EXPRESSION_MAX = 256;

const ALTERNATIVES =
  'use another backend (systemd, kubernetes) or the daemon (cronix serve) for this schedule';

/**
 * Renders the set bits of `bits[min..max]` in AWS syntax. `steps` allows `a/n`.
 * `shift` maps a value to the emitted number (day-of-week renumbering).
 */
export function renderField(
  bits: ArrayLike<number>,
  min: number,
  max: number,
  steps: boolean,
  shift = 0,
): string {
  const values: number[] = [];
  for (let v = min; v <= max; v++) if (bits[v] === 1) values.push(v + shift);
  if (values.length === max - min + 1) return '*';
  const first = values[0] as number;
  if (steps && values.length >= 3) {
    const step = (values[1] as number) - first;
    const progression =
      step > 1 &&
      values.every((v, i) => v === first + i * step) &&
      (values[values.length - 1] as number) + step > max + shift;
    if (progression) return `${first}/${step}`;
  }
  const parts: string[] = [];
  for (let i = 0; i < values.length;) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === (values[j] as number) + 1) j++;
    parts.push(j === i ? String(values[i]) : `${values[i]}-${values[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

function full(bits: ArrayLike<number>, min: number, max: number): boolean {
  for (let v = min; v <= max; v++) if (bits[v] !== 1) return false;
  return true;
}

/** Day-of-week in AWS numbering: ours 0 (Sunday)..6 → 1..7. */
function renderDow(dows: Uint8Array): string {
  return renderField(dows, 0, 6, false, 1);
}

/**
 * The day-of-month and day-of-week fields of `spec` in AWS form (one of them `?`), or the
 * reason the classic day rule cannot be stated with one AWS expression.
 */
export function dayFields(spec: CronSpec): { dom: string; dow: string } | { reason: string } {
  const domFull = full(spec.doms, 1, 31);
  const dowFull = full(spec.dows, 0, 6);
  if (domFull && dowFull) return { dom: '*', dow: '?' };
  const either = !spec.domStar && !spec.dowStar;
  if (either) {
    // classic cron: a day matches if EITHER field does; a full field matches every day
    if (domFull || dowFull) return { dom: '*', dow: '?' };
    return {
      reason:
        `both day fields are restricted, so classic cron fires when EITHER matches ` +
        `(day-of-month OR day-of-week); EventBridge Scheduler needs one of them to be "?" and ` +
        `cannot state OR. Split it into two schedules (one per day field) or ${ALTERNATIVES}`,
    };
  }
  // at least one field starts with `*`: a day must match BOTH (a full field matches any day)
  if (dowFull) return { dom: renderField(spec.doms, 1, 31, true), dow: '?' };
  if (domFull) return { dom: '?', dow: renderDow(spec.dows) };
  return {
    reason:
      `a day field starting with "*" but not matching every day (such as "*/2") together with ` +
      `a restricted other day field means day-of-month AND day-of-week in classic cron; ` +
      `EventBridge Scheduler needs one of them to be "?" and cannot state AND. ` +
      `Use "*" in one day field, or ${ALTERNATIVES}`,
  };
}

/**
 * `cron(...)` for a parsed 5-field schedule (no time-zone checks), or the reason. With
 * `minuteShift`, minute m is emitted as m − shift (mod 60): the UTC form of a minute-only
 * schedule in a zone whose offsets all have that minutes part.
 */
export function cronExpression(
  spec: CronSpec,
  minuteShift = 0,
): { expression: string } | { reason: string } {
  const days = dayFields(spec);
  if ('reason' in days) return days;
  let minutes = spec.minutes;
  if (minuteShift !== 0) {
    minutes = new Uint8Array(60);
    for (let m = 0; m < 60; m++)
      if (spec.minutes[m] === 1) minutes[(m - minuteShift + 60) % 60] = 1;
  }
  const fields = [
    renderField(minutes, 0, 59, true),
    renderField(spec.hours, 0, 23, true),
    days.dom,
    renderField(spec.months, 1, 12, true),
    days.dow,
    '*',
  ];
  const expression = `cron(${fields.join(' ')})`;
  if (expression.length > AWS_EXPRESSION_MAX) {
    return {
      reason: `its EventBridge form is ${expression.length} characters, over the API's limit of ${AWS_EXPRESSION_MAX}; simplify the schedule or ${ALTERNATIVES}`,
    };
  }
  return { expression };
}

const RATE_UNITS: readonly [number, string][] = [
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
];

/** `rate(value unit)` for an `@every` interval, largest exact unit, singular for 1; or the reason. */
export function rateExpression(intervalSeconds: number): string | { reason: string } {
  for (const [size, unit] of RATE_UNITS) {
    if (intervalSeconds % size === 0) {
      const n = intervalSeconds / size;
      return `rate(${n} ${n === 1 ? unit : `${unit}s`})`;
    }
  }
  return {
    reason: `EventBridge Scheduler rate() counts whole minutes, and ${intervalSeconds}s is not a whole number of minutes; use a multiple of 60s or ${ALTERNATIVES}`,
  };
}

/**
 * The `StartDate` that anchors a `rate()` schedule on cronix's `@every` grid: the first
 * multiple of the interval since the Unix epoch strictly after `now` (epoch ms).
 */
export function rateStartDate(intervalSeconds: number, now: number): Date {
  const step = intervalSeconds * 1000;
  return new Date((Math.floor(now / step) + 1) * step);
}

function everyTranslation(spec: EverySpec): AwsTranslation {
  const rate = rateExpression(spec.intervalSeconds);
  if (typeof rate !== 'string') return { ok: false, reason: `"${spec.source}": ${rate.reason}` };
  // @every is epoch-anchored in UTC; the job's zone does not affect it
  return {
    ok: true,
    value: { expression: rate, timezone: 'UTC', rateSeconds: spec.intervalSeconds },
  };
}

function dstReason(
  spec: CronSpec,
  timezone: string,
  kind: 'gap' | 'overlap',
  local: string,
): string {
  const what =
    kind === 'gap'
      ? `it matches ${local} local time, which does not exist (clocks spring forward); cronix fires a fixed-time schedule once right after the gap (SPEC §3), but EventBridge Scheduler skips it`
      : `it matches ${local} local time, which happens twice (clocks fall back); cronix fires a wildcard schedule in both passes (SPEC §3), but EventBridge Scheduler runs it only once`;
  return `"${spec.source}" in ${timezone}: ${what}. Pick a time outside the DST change, use timezone UTC, or ${ALTERNATIVES}`;
}

function everyDayEveryHour(spec: CronSpec): boolean {
  const days = dayFields(spec);
  return (
    full(spec.hours, 0, 23) &&
    full(spec.months, 1, 12) &&
    !('reason' in days) &&
    days.dom === '*' &&
    days.dow === '?'
  );
}

/**
 * Translates one cronix schedule in `timezone` into an EventBridge Scheduler expression, or
 * explains why it cannot be stated faithfully. `now` (epoch ms) starts the DST horizon: a
 * schedule that EventBridge would fire differently around a DST change in the next 28 years
 * is refused, except that a minute-only schedule (every 15 minutes, `@hourly`) whose fires
 * do not depend on the zone is stated in UTC instead.
 */
export function toAwsSchedule(schedule: string, timezone: string, now: number): AwsTranslation {
  const parsed = parseSchedule(schedule);
  if (!parsed.ok) return { ok: false, reason: parsed.error };
  const zoneError = checkTimeZone(timezone);
  if (zoneError) return { ok: false, reason: zoneError };
  return translateSchedule(parsed.schedule, timezone, now);
}

/** {@link toAwsSchedule} for an already parsed schedule. */
export function translateSchedule(spec: Schedule, timezone: string, now: number): AwsTranslation {
  const seconds = secondsRefusal(spec, AWS_MINUTES) ?? lastDayRefusal(spec);
  if (seconds !== null) return { ok: false, reason: seconds };
  if (spec.kind === 'every') return everyTranslation(spec);
  const cron = cronExpression(spec);
  if ('reason' in cron) return { ok: false, reason: `"${spec.source}": ${cron.reason}` };
  const conflict = findDstConflict(spec, timezone, now);
  if (!conflict) return { ok: true, value: { expression: cron.expression, timezone } };
  const shift =
    conflict.kind === 'overlap' && everyDayEveryHour(spec) ? utcMinuteShift(timezone, now) : null;
  if (shift === null) {
    return { ok: false, reason: dstReason(spec, timezone, conflict.kind, conflict.local) };
  }
  const utc = cronExpression(spec, shift);
  if ('reason' in utc) return { ok: false, reason: `"${spec.source}": ${utc.reason}` };
  return { ok: true, value: { expression: utc.expression, timezone: 'UTC' } };
}
