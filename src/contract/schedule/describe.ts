/**
 * Schedules in words (SPEC §13): `30 2 * * *` in `Europe/Berlin` reads
 * "At 02:30 every day, Europe/Berlin", `*\/30 * * * * *` "Every 30 seconds".
 * Pure; the web UI uses it.
 *
 * Two steps, each checked on its own: `scheduleMeaning` (meaning.ts) reads the
 * expression into the sets it selects, which a property test compares with
 * `nextFires`; this file renders that structure into words, table-tested
 * (`test/contract/schedule-describe.test.ts`).
 *
 * Written here rather than taken from cronstrue because our dialect differs
 * where it matters: `@every` anchored to the epoch, the classic cron day rule
 * (both day fields restricted → either matches; one starting with `*` → both
 * must match, so `0 0 *\/2 * MON` is "Mondays that fall on odd days"), `a/n`
 * meaning "from a to the end of the field", the seconds field, and the zone in
 * the sentence. The wording follows the expression as written (`*\/15` reads
 * "every 15 minutes"), so an operator can map the words back to the fields;
 * a step that does not divide its field is never called an interval
 * (`*\/7` minutes is "every 7th minute from 0 to 56": 56 → 0 is 4 minutes).
 */
import {
  scheduleMeaning,
  spanValues,
  type CronMeaning,
  type DayMeaning,
  type FieldMeaning,
  type Span,
} from './meaning.js';

export { scheduleMeaning } from './meaning.js';
export type { ScheduleMeaning } from './meaning.js';

const MONTH_WORDS =
  'January February March April May June July August September October November December'.split(
    ' ',
  );
const WEEKDAY_WORDS = 'Sunday Monday Tuesday Wednesday Thursday Friday Saturday'.split(' ');

const pad = (n: number): string => String(n).padStart(2, '0');
const ordinal = (n: number): string => {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;
};
const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** `a`, `a and b`, `a, b and c`. */
export function joinWords(words: readonly string[], last = 'and'): string {
  if (words.length <= 1) return words[0] ?? '';
  return `${words.slice(0, -1).join(', ')} ${last} ${words[words.length - 1]}`;
}

/** A field's sizes: its first value and how many values it has. */
interface Scale {
  readonly min: number;
  readonly size: number;
}
const SIXTY: Scale = { min: 0, size: 60 };
const HOURS: Scale = { min: 0, size: 24 };

const single = (s: Span): boolean => s.from === s.to;
const count = (s: Span): number => Math.floor((s.to - s.from) / s.step) + 1;

/**
 * A true interval: a step from the field's first value that divides the field, so the gap
 * across the field's end is the step too (`*\/15` minutes, `0-59/20`).
 */
const isRate = (s: Span, scale: Scale): boolean =>
  s.step > 1 &&
  s.from === scale.min &&
  s.to + s.step === scale.min + scale.size &&
  scale.size % s.step === 0;

/**
 * The spans to put in words: a stepped span of at most `upTo` values that is not a rate reads
 * better as its values (`5/10` in days is days 5, 15 and 25).
 */
function items(f: FieldMeaning, scale: Scale | null, upTo: number): Span[] {
  return f.spans.flatMap((s) =>
    s.step > 1 && !single(s) && !(scale && isRate(s, scale)) && count(s) <= upTo
      ? spanValues(s).map((v) => ({ from: v, to: v, step: 1, star: false }))
      : [s],
  );
}

/** The sorted distinct values of single-valued items, or null when an item is not one value. */
function singles(spans: readonly Span[]): number[] | null {
  if (!spans.every(single)) return null;
  return [...new Set(spans.map((s) => s.from))].sort((a, b) => a - b);
}

/** The field's single values (after small steps are spelled out), or null. */
const singleValues = (f: FieldMeaning, scale: Scale): number[] | null =>
  f.all ? null : singles(items(f, scale, scale === HOURS ? 6 : 3));

/** The whole field selected as one interval (`*`, `*\/15`): "every minute", "every 15 minutes". */
function rateOf(f: FieldMeaning, scale: Scale): number | null {
  if (f.all) return 1;
  const [s, ...rest] = f.spans;
  return s && rest.length === 0 && isRate(s, scale) ? s.step : null;
}

/** The finest field of a time in words: "every 10 seconds", "at minutes 0 and 30", … */
function leadWords(f: FieldMeaning, unit: 'second' | 'minute'): string {
  const rate = rateOf(f, SIXTY);
  if (rate !== null) return rate === 1 ? `every ${unit}` : `every ${rate} ${unit}s`;
  const spans = items(f, SIXTY, 3);
  const values = singles(spans.filter(single)) ?? [];
  const parts = values.length
    ? [`at ${unit}${values.length > 1 ? 's' : ''} ${joinWords(values.map(String))}`]
    : [];
  for (const s of spans.filter((x) => !single(x)))
    parts.push(
      s.step === 1
        ? `every ${unit} from ${s.from} to ${s.to}`
        : `every ${ordinal(s.step)} ${unit} from ${s.from} to ${s.to}`,
    );
  return joinWords(parts);
}

/** Minutes as a condition on a finer field: "in minute 5", "in minutes 0 to 9", … */
function minuteCondition(f: FieldMeaning): string {
  const spans = items(f, SIXTY, 3);
  const values = singles(spans.filter(single)) ?? [];
  const parts = values.length
    ? [`minute${values.length > 1 ? 's' : ''} ${joinWords(values.map(String))}`]
    : [];
  for (const s of spans.filter((x) => !single(x)))
    parts.push(
      s.step === 1
        ? `minutes ${s.from} to ${s.to}`
        : isRate(s, SIXTY)
          ? `every ${ordinal(s.step)} minute`
          : `every ${ordinal(s.step)} minute from ${s.from} to ${s.to}`,
    );
  return `in ${joinWords(parts)}`;
}

/** Hours as a condition: "in the 03:00 hour", "from 09:00 to 17:59", "every 6 hours", … */
function hourCondition(f: FieldMeaning, oncePerHour: boolean): string {
  if (f.all) return '';
  const spans = items(f, HOURS, 6);
  const values = singles(spans.filter(single)) ?? [];
  const parts: string[] = [];
  if (values.length === 1) parts.push(`in the ${pad(values[0] as number)}:00 hour`);
  if (values.length > 1) parts.push(`in the hours ${joinWords(values.map((h) => `${pad(h)}:00`))}`);
  for (const s of spans.filter((x) => !single(x))) {
    const span = `from ${pad(s.from)}:00 to ${pad(s.to)}:59`;
    if (s.step === 1) parts.push(span);
    else if (isRate(s, HOURS))
      parts.push(oncePerHour ? `every ${s.step} hours` : `in every ${ordinal(s.step)} hour`);
    else parts.push(`in every ${ordinal(s.step)} hour ${span}`);
  }
  return joinWords(parts);
}

/** "At 02:30", "At 08:00:30 and 20:00:30", or "Every 15 minutes, from 09:00 to 17:59". */
function timeWords(m: CronMeaning): string {
  const secs = singleValues(m.seconds, SIXTY);
  const mins = singleValues(m.minutes, SIXTY);
  const hours = singleValues(m.hours, HOURS);
  const withSeconds = !(secs?.length === 1 && secs[0] === 0);
  const clock = (h: number, mi: number, s: number) =>
    `${pad(h)}:${pad(mi)}${withSeconds ? `:${pad(s)}` : ''}`;
  if (secs && mins && hours && secs.length * mins.length * hours.length <= 6)
    return `At ${joinWords(hours.flatMap((h) => mins.flatMap((mi) => secs.map((s) => clock(h, mi, s)))))}`;
  const parts: string[] = [];
  const oncePerHour = !withSeconds || secs?.length === 1;
  if (withSeconds) {
    const lead = leadWords(m.seconds, 'second');
    const rate = rateOf(m.seconds, SIXTY) !== null;
    if (m.minutes.all) parts.push(rate ? lead : `${lead} of every minute`);
    else if (mins && hours && mins.length * hours.length <= 6) {
      const times = hours.flatMap((h) => mins.map((mi) => `${pad(h)}:${pad(mi)}`));
      return capital(`${lead}, in the minute${times.length > 1 ? 's' : ''} ${joinWords(times)}`);
    } else {
      parts.push(lead, minuteCondition(m.minutes) + (m.hours.all ? ' of every hour' : ''));
    }
  } else {
    const lead = leadWords(m.minutes, 'minute');
    const rate = rateOf(m.minutes, SIXTY) !== null;
    parts.push(rate || !m.hours.all ? lead : `${lead} past every hour`);
  }
  parts.push(hourCondition(m.hours, oncePerHour && mins?.length === 1));
  return capital(parts.filter((p) => p !== '').join(', '));
}

/** Names of months or weekdays: ranges as "Monday to Friday", steps spelled out. */
function nameWords(f: FieldMeaning, name: (v: number) => string, last = 'and'): string {
  const words = f.spans.flatMap((s) =>
    s.step === 1 && !single(s) ? [`${name(s.from)} to ${name(s.to)}`] : spanValues(s).map(name),
  );
  return joinWords([...new Set(words)], last);
}
const weekday = (v: number): string => WEEKDAY_WORDS[v % 7] as string;
const month = (v: number): string => MONTH_WORDS[v - 1] as string;

function domWords(f: FieldMeaning): string {
  if (f.last) {
    const lastDay = 'on the last day of the month';
    if (f.spans.length === 0) return lastDay;
    const rest = domWords({ spans: f.spans, all: false }).replace(/ of the month$/, '');
    return `${rest} and ${lastDay.slice(3)}`;
  }
  const spans = items(f, null, 4);
  const plain = spans.every((s) => s.step === 1);
  const parts = spans.map((s) => {
    if (s.step === 1) return single(s) ? `${s.from}` : `${s.from} to ${s.to}`;
    if (s.star) return `every ${ordinal(s.step)} day`;
    return `every ${ordinal(s.step)} day from day ${s.from} to day ${s.to}`;
  });
  if (plain)
    return `on ${spans.length === 1 && single(spans[0]!) ? 'day' : 'days'} ${joinWords(parts)} of the month`;
  const named = parts.map((p, i) => (spans[i]!.step === 1 ? `day ${p}` : p));
  return `on ${joinWords(named)} of the month`;
}

/** The day part, with the classic cron day rule (SPEC §3) already applied by the meaning. */
function dayWords(days: DayMeaning, months: FieldMeaning): string {
  const monthValues = months.all ? null : singles(months.spans);
  if (days.kind === 'dom' && monthValues?.length === 1) {
    const d = singles(days.dom.spans);
    if (d?.length === 1) return `on ${d[0]} ${month(monthValues[0] as number)}`;
  }
  let day: string;
  switch (days.kind) {
    case 'every':
      day = 'every day';
      break;
    case 'dom':
      day = domWords(days.dom);
      break;
    case 'dow':
      day = `on ${nameWords(days.dow, weekday)}`;
      break;
    case 'both':
      day = `${domWords(days.dom)} if it is ${nameWords(days.dow, weekday, 'or')}`;
      break;
    case 'either':
      day = `${domWords(days.dom)} or on ${nameWords(days.dow, weekday)}`;
      break;
  }
  return months.all ? day : `${day} in ${nameWords(months, month)}`;
}

function intervalWords(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  const words: string[] = [];
  let rest = seconds;
  for (const [size, unit] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) words.push(`${n} ${unit}${n === 1 ? '' : 's'}`);
  }
  return words.join(' ');
}

/**
 * A schedule of SPEC §3 in words, with its zone: `At 02:30 every day,
 * Europe/Berlin`, `Every 15 minutes, from 09:00 to 17:59, on Monday to
 * Friday, UTC`, `Every 30 seconds, UTC`, `Every 1 hour 30 minutes (counted
 * from the Unix epoch, in every zone alike)`. An invalid expression comes
 * back as written, with `(invalid schedule)`.
 */
export function describeSchedule(expression: string, timezone = 'UTC'): string {
  const m = scheduleMeaning(expression);
  if (m === null) return `${expression} (invalid schedule)`;
  if (m.kind === 'every') {
    const n = m.seconds;
    const text = n === 60 ? 'Every minute' : n === 1 ? 'Every second' : `Every ${intervalWords(n)}`;
    return `${text} (counted from the Unix epoch, in every zone alike)`;
  }
  const time = timeWords(m);
  const at = /^At \d/.test(time);
  let days = dayWords(m.days, m.months);
  // "Every 10 minutes every day" says nothing the shorter form does not
  if (days === 'every day' && !at) days = '';
  const sep = time.includes(',') && !at ? ', ' : ' ';
  return `${time}${days === '' ? '' : sep + days}, ${timezone}`;
}
