/**
 * Schedule fidelity for Kubernetes CronJobs. The CronJob controller parses `spec.schedule`
 * with robfig/cron v3's standard parser (`cron.ParseStandard`, after prefixing
 * `TZ=<spec.timeZone>`), whose rules differ from ours (SPEC §3, Vixie cron) in three ways:
 *
 * 1. **The day rule.** robfig ANDs day-of-month and day-of-week when either field carries its
 *    "star bit", ORs them otherwise (`dayMatches` in `spec.go`). The star bit is set only by a
 *    list item that is `*` or `?` with no step above 1 (`getRange` in `parser.go`: `extra =
 *    starBit`, then `if step > 1 { extra = 0 }`), so `*\/2` counts as restricted. Vixie cron
 *    (and cronix) calls a day field a wildcard when it *starts with* `*`. A star bit also means
 *    the whole range, so robfig can AND two day fields only when one of them is every day:
 *    `0 0 *\/2 * MON` (Mondays on odd days) has no robfig equivalent and is refused.
 * 2. **Ranges.** robfig's day-of-week range is 0-6 (`7` is an error), so weekday `7` and
 *    ranges through it are rewritten as explicit lists.
 * 3. **Time.** robfig's `SpecSchedule.Next` walks hours and minutes in elapsed time: a
 *    wall-clock time skipped by a DST jump never fires (robfig/cron#541) and one repeated by a
 *    fall-back fires in both passes (kubernetes/kubernetes#121594). That is our rule for
 *    *wildcard* jobs; for *fixed-time* jobs cronix fires once after the gap and once in the
 *    overlap, so a fixed-time job whose time can fall into a transition is refused.
 *    `@every` is a constant delay from the CronJob's last schedule time in robfig, not
 *    epoch-anchored: only intervals that divide an hour or a day translate (to UTC steps).
 * 4. **Seconds.** `ParseStandard` takes five fields and the controller creates at most one Job
 *    per minute, so the seconds extension (6-field expressions, `@every` below a minute) is
 *    refused.
 *
 * Pure: depends on the schedule contract only.
 */
import { civilFromDays, DAY_MINUTES, DAY_MS, MINUTE_MS } from '../../contract/schedule/civil.js';
import {
  parseSchedule,
  type CronSpec,
  type EverySpec,
  type Schedule,
} from '../../contract/schedule/cron.js';
import { naiveNext } from '../../contract/schedule/next.js';
import { getZone } from '../../contract/schedule/zone.js';
import { lastDayRefusal, secondsRefusal } from './seconds.js';

/** What a CronJob does with time, for the refusal of a seconds schedule. */
export const CRONJOB_MINUTES =
  'a Kubernetes CronJob schedule has five fields (robfig/cron ParseStandard) and starts at most one Job a minute';

/** Default horizon of {@link dstConflict}: 12 years of the zone's transitions. */
export const DST_HORIZON_MS = 12 * 366 * DAY_MS;

/** A schedule as the CronJob states it, or why it cannot be stated. */
export type CronJobSchedule =
  { ok: true; schedule: string; timeZone: string } | { ok: false; reason: string };

interface Bounds {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTHS: Record<string, number> = {};
['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].forEach(
  (n, i) => (MONTHS[n] = i + 1),
);
const WEEKDAYS: Record<string, number> = {};
['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].forEach((n, i) => (WEEKDAYS[n] = i));

/** robfig/cron v3 field bounds (`spec.go`): note day-of-week 0-6. */
const ROBFIG: readonly Bounds[] = [
  { label: 'minute', min: 0, max: 59 },
  { label: 'hour', min: 0, max: 23 },
  { label: 'day-of-month', min: 1, max: 31 },
  { label: 'month', min: 1, max: 12, names: MONTHS },
  { label: 'day-of-week', min: 0, max: 6, names: WEEKDAYS },
];

/** Shortcuts robfig's `parseDescriptor` knows (case-sensitive there) with our meaning. */
const DESCRIPTORS = new Set([
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
]);

function goAtoi(text: string): number | null {
  return /^[+-]?\d+$/.test(text) ? Number(text) : null;
}

/**
 * robfig/cron v3 `getField` on one field: the bits it sets and whether the star bit is set,
 * or null where robfig rejects the field.
 */
function robfigField(text: string, b: Bounds): { bits: Uint8Array; star: boolean } | null {
  const bits = new Uint8Array(b.max + 1);
  let star = false;
  for (const expr of text.split(',').filter((s) => s !== '')) {
    const rangeAndStep = expr.split('/');
    const lowAndHigh = (rangeAndStep[0] as string).split('-');
    const value = (t: string): number | null => b.names?.[t.toLowerCase()] ?? goAtoi(t);
    let start: number | null;
    let end: number | null;
    let step: number | null = 1;
    let extra = false;
    if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
      [start, end, extra] = [b.min, b.max, true];
    } else {
      start = value(lowAndHigh[0] as string);
      if (lowAndHigh.length > 2) return null;
      end = lowAndHigh.length === 2 ? value(lowAndHigh[1] as string) : start;
    }
    if (rangeAndStep.length > 2) return null;
    if (rangeAndStep.length === 2) {
      step = goAtoi(rangeAndStep[1] as string);
      if (lowAndHigh.length === 1) end = b.max; // "N/step" means "N-max/step"
      if (step !== null && step > 1) extra = false;
    }
    if (start === null || end === null || step === null) return null;
    if (start < b.min || end > b.max || start > end || step <= 0) return null;
    for (let v = start; v <= end; v += step) bits[v] = 1;
    star ||= extra;
  }
  return { bits, star };
}

function sameBits(a: Uint8Array, ours: Uint8Array, b: Bounds): boolean {
  for (let v = b.min; v <= b.max; v++) if ((a[v] ?? 0) !== (ours[v] ?? 0)) return false;
  return true;
}

function isFull(bits: Uint8Array, min: number, max: number): boolean {
  for (let v = min; v <= max; v++) if (bits[v] !== 1) return false;
  return true;
}

/** The shortest robfig text for a bit table: `*`, or runs as `a-b` and single values. */
function canonicalField(bits: Uint8Array, b: Bounds): string {
  if (isFull(bits, b.min, b.max)) return '*';
  const parts: string[] = [];
  for (let v = b.min; v <= b.max; v++) {
    if (bits[v] !== 1) continue;
    let end = v;
    while (end + 1 <= b.max && bits[end + 1] === 1) end++;
    parts.push(end - v >= 2 ? `${v}-${end}` : end === v ? `${v}` : `${v},${end}`);
    v = end;
  }
  return parts.join(',');
}

/**
 * The user's field text when robfig reads it as the same set (and, for a day field whose star
 * bit would change the day rule, without a star bit), else our canonical text for the set.
 */
function keepOrRewrite(text: string, ours: Uint8Array, b: Bounds, allowStar = true): string {
  const theirs = robfigField(text, b);
  if (theirs && sameBits(theirs.bits, ours, b) && (allowStar || !theirs.star)) return text;
  return canonicalField(ours, b);
}

function translateEvery(s: EverySpec): CronJobSchedule {
  const n = s.intervalSeconds;
  if (n === 3600) return { ok: true, schedule: '0 * * * *', timeZone: 'UTC' };
  if (n % 60 === 0 && 3600 % n === 0) {
    const m = n / 60;
    return { ok: true, schedule: m === 1 ? '* * * * *' : `*/${m} * * * *`, timeZone: 'UTC' };
  }
  if (n % 3600 === 0 && 86_400 % n === 0) {
    const h = n / 3600;
    return { ok: true, schedule: h === 24 ? '0 0 * * *' : `0 */${h} * * *`, timeZone: 'UTC' };
  }
  return {
    ok: false,
    reason:
      `"${s.source}": Kubernetes runs @every as a delay from the CronJob's last run, not anchored ` +
      `to the Unix epoch as cronix is, so only intervals that divide an hour or a day evenly ` +
      `(@every 15m, @every 6h…) translate to an equivalent cron schedule`,
  };
}

function translateCron(spec: CronSpec, timezone: string): CronJobSchedule {
  const [minT, hourT, domT, monT, dowT] = spec.source.split(/\s+/) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const [bMin, bHour, bDom, bMon, bDow] = ROBFIG as [Bounds, Bounds, Bounds, Bounds, Bounds];
  const minute = keepOrRewrite(minT, spec.minutes, bMin);
  const hour = keepOrRewrite(hourT, spec.hours, bHour);
  const month = keepOrRewrite(monT, spec.months, bMon);
  const domFull = isFull(spec.doms, 1, 31);
  const dowFull = isFull(spec.dows, 0, 6);
  const domNone = !spec.doms.includes(1);
  const dowNone = !spec.dows.includes(1);
  let dom: string;
  let dow: string;
  if (domNone || dowNone) {
    // a day field selecting no day (`7/2` in day-of-week): under the either rule it adds
    // nothing, so the other field alone decides; under the both rule nothing ever matches
    if (spec.domStar || spec.dowStar || (domNone && dowNone)) {
      return { ok: false, reason: `"${spec.source}" selects no day, so it never fires` };
    }
    [dom, dow] = domNone
      ? ['*', keepOrRewrite(dowT, spec.dows, bDow)]
      : [keepOrRewrite(domT, spec.doms, bDom), '*'];
  } else if (spec.domStar || spec.dowStar) {
    // ours: both fields must match. robfig ANDs only with a star bit, which means "every day".
    if (domFull) [dom, dow] = ['*', dowFull ? '*' : keepOrRewrite(dowT, spec.dows, bDow)];
    else if (dowFull) [dom, dow] = [keepOrRewrite(domT, spec.doms, bDom), '*'];
    else {
      return {
        ok: false,
        reason:
          `"${spec.source}" fires on days matching both day-of-month "${domT}" and ` +
          `day-of-week "${dowT}" (a day field starting with "*" is a wildcard in cron), but ` +
          `Kubernetes' robfig/cron treats only a bare "*" as a wildcard and would fire on days ` +
          `matching either field. No CronJob schedule states this: restrict only one day field`,
      };
    }
  } else if (domFull || dowFull) {
    [dom, dow] = ['*', '*']; // either rule with an every-day field: every day
  } else {
    dom = keepOrRewrite(domT, spec.doms, bDom, false);
    dow = keepOrRewrite(dowT, spec.dows, bDow, false);
  }
  return { ok: true, schedule: [minute, hour, dom, month, dow].join(' '), timeZone: timezone };
}

/**
 * The CronJob `schedule` and `timeZone` that fire exactly the UTC instants cronix computes for
 * `source` in `timezone`, DST aside (see {@link dstConflict}). Shortcuts pass through in lower
 * case; other cron expressions keep each field's text when robfig reads it as the same set.
 */
export function translateSchedule(source: string, timezone: string): CronJobSchedule {
  const parsed = parseSchedule(source);
  if (!parsed.ok) return { ok: false, reason: parsed.error };
  const s = parsed.schedule;
  const seconds = secondsRefusal(s, CRONJOB_MINUTES) ?? lastDayRefusal(s);
  if (seconds !== null) return { ok: false, reason: seconds };
  if (s.kind === 'every') return translateEvery(s);
  const lower = s.source.toLowerCase();
  if (DESCRIPTORS.has(lower)) return { ok: true, schedule: lower, timeZone: timezone };
  return translateCron(s, timezone);
}

const hhmm = (naiveMinute: number): string => {
  const m = ((naiveMinute % DAY_MINUTES) + DAY_MINUTES) % DAY_MINUTES;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
};

const isoDay = (naiveMinute: number): string => {
  const { y, m, d } = civilFromDays(Math.floor(naiveMinute / DAY_MINUTES));
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
};

/**
 * Why the CronJob would fire `schedule` differently from cronix across a DST (or other offset)
 * transition of `timezone` between `from` and `from + horizonMs`, or null. Only fixed-time cron
 * jobs can differ: a match inside a skipped interval fires once in cronix and never in
 * Kubernetes; a match inside a repeated interval fires once in cronix and twice in Kubernetes.
 * The default horizon (12 years) covers every weekday/date combination of yearly rules.
 */
export function dstConflict(
  schedule: Schedule,
  timezone: string,
  from: number,
  horizonMs: number = DST_HORIZON_MS,
): string | null {
  if (schedule.kind !== 'cron' || !schedule.fixedTime) return null;
  const zone = getZone(timezone);
  const limit = from + horizonMs;
  for (let t = from; ;) {
    const tr = zone.transitionAfter(t, limit);
    if (!tr) return null;
    const lo = Math.floor((tr.at + Math.min(tr.before, tr.after)) / MINUTE_MS);
    const hi = Math.ceil((tr.at + Math.max(tr.before, tr.after)) / MINUTE_MS);
    const hit = naiveNext(schedule, lo, hi);
    if (hit >= 0) {
      const window = `${hhmm(lo)}–${hhmm(hi)} local`;
      const fix = `move it out of ${window}, or use timezone "UTC"`;
      return tr.after > tr.before
        ? `"${schedule.source}" names a time that ${timezone} skips on ${isoDay(hit)} ` +
            `(${window}): cronix fires it once when the clocks jump, Kubernetes (robfig/cron) ` +
            `skips it that day. To fix: ${fix}`
        : `"${schedule.source}" names a time that ${timezone} repeats on ${isoDay(hit)} ` +
            `(${window}): cronix fires it once, Kubernetes (robfig/cron) fires it in both ` +
            `passes. To fix: ${fix}`;
    }
    t = tr.at;
  }
}
