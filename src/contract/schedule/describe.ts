/**
 * Schedules in words (SPEC §13): `30 2 * * *` in `Europe/Berlin` reads
 * "At 02:30 every day, Europe/Berlin". Pure and table-tested
 * (`test/contract/schedule-describe.test.ts`); the web UI and the API use it.
 *
 * Written here rather than taken from cronstrue because our dialect differs
 * where it matters: `@every` anchored to the epoch, the classic cron day rule
 * (both day fields restricted → either matches; one starting with `*` → both
 * must match, so `0 0 *\/2 * MON` is "Mondays that fall on odd days"), `a/n`
 * meaning "from a to the end of the field", and the zone in the sentence.
 * The wording follows the expression as written (`*\/15` reads "every 15
 * minutes"), so an operator can map the words back to the fields.
 */
import { parseSchedule } from './cron.js';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_KEYS = MONTHS.map((m) => m.slice(0, 3).toLowerCase());
const WEEKDAY_KEYS = WEEKDAYS.map((d) => d.slice(0, 3).toLowerCase());

const SHORTCUTS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** One comma item of a field: `*`, `a`, `a-b`, with an optional step. */
interface Item {
  star: boolean;
  lo: number;
  /** Null for `a/n` (to the end of the field). */
  hi: number | null;
  step: number;
}

/** A field: `any` is a bare `*`. */
type Field = { any: true } | { any: false; items: Item[] };

function value(token: string, names: readonly string[] | null, base: number): number {
  if (/^\d+$/.test(token)) return Number(token);
  const i = names ? names.indexOf(token.toLowerCase()) : -1;
  return i + base;
}

function parseField(text: string, names: readonly string[] | null, base: number): Field {
  if (text === '*') return { any: true };
  const items = text.split(',').map((part): Item => {
    const [range = '', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    if (range === '*') return { star: true, lo: -1, hi: -1, step };
    const [lo = '', hi] = range.split('-');
    const loV = value(lo, names, base);
    if (hi !== undefined) return { star: false, lo: loV, hi: value(hi, names, base), step };
    return { star: false, lo: loV, hi: stepText === undefined ? loV : null, step };
  });
  return { any: false, items };
}

const pad = (n: number): string => String(n).padStart(2, '0');
const ordinal = (n: number): string => {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${teen ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;
};

/** `a`, `a and b`, `a, b and c`. */
export function joinWords(words: readonly string[], last = 'and'): string {
  if (words.length <= 1) return words[0] ?? '';
  return `${words.slice(0, -1).join(', ')} ${last} ${words[words.length - 1]}`;
}

/** Single values only (no star, range or step): the list of values, else null. */
function singles(f: Field): number[] | null {
  if (f.any) return null;
  const out: number[] = [];
  for (const it of f.items) {
    if (it.star || it.step !== 1 || it.hi !== it.lo) return null;
    out.push(it.lo);
  }
  return out;
}

/** Describes one item of a field with `name` giving each value's word. */
function itemWords(it: Item, unit: string, name: (v: number) => string, end: string): string {
  const every = it.step === 1 ? '' : `every ${ordinal(it.step)} ${unit}`;
  if (it.star) return it.step === 1 ? `every ${unit}` : every;
  if (it.hi === it.lo) return name(it.lo);
  const to = it.hi === null ? end : name(it.hi);
  if (it.step === 1) return `${name(it.lo)} to ${to}`;
  return `${every} from ${name(it.lo)} to ${to}`;
}

function minutePhrase(f: Field, hourAny: boolean): string {
  if (f.any) return 'every minute';
  const one = f.items.length === 1 ? f.items[0] : undefined;
  if (one?.star) return `every ${one.step} minutes`;
  const vals = singles(f);
  if (vals) {
    const list = joinWords(vals.map(String));
    const unit = vals.length === 1 ? 'minute' : 'minutes';
    return hourAny ? `at ${unit} ${list} past every hour` : `at ${unit} ${list}`;
  }
  const parts = f.items.map((it) =>
    it.step === 1 && !it.star && it.hi !== it.lo
      ? `every minute from ${it.lo} to ${it.hi ?? 59}`
      : it.star
        ? `every ${it.step} minutes`
        : it.hi === it.lo
          ? `at minute ${it.lo}`
          : `every ${it.step} minutes from minute ${it.lo} to ${it.hi ?? 59}`,
  );
  return joinWords(parts);
}

function hourPhrase(f: Field): string {
  if (f.any) return '';
  const parts = f.items.map((it) => {
    if (it.star) return `every ${it.step} hours`;
    if (it.hi === it.lo) return `in the ${pad(it.lo)}:00 hour`;
    const span = `from ${pad(it.lo)}:00 to ${pad(it.hi ?? 23)}:59`;
    return it.step === 1 ? span : `every ${it.step} hours ${span}`;
  });
  const vals = singles(f);
  if (vals && vals.length > 1) return `in the hours ${joinWords(vals.map((h) => `${pad(h)}:00`))}`;
  return joinWords(parts);
}

/** "At 02:30", "At 08:00 and 20:00", or "Every 15 minutes, from 09:00 to 17:59". */
function timePhrase(minute: Field, hour: Field): string {
  const mins = singles(minute);
  const hours = singles(hour);
  if (mins && hours && mins.length * hours.length <= 6) {
    const times = hours.flatMap((h) => mins.map((m) => `${pad(h)}:${pad(m)}`));
    return `At ${joinWords(times)}`;
  }
  const m = minutePhrase(minute, hour.any);
  const h = hourPhrase(hour);
  const text = h === '' ? m : `${m}, ${h}`;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function weekdayPhrase(f: Field): string {
  if (f.any) return '';
  const name = (v: number): string => WEEKDAYS[v % 7] as string;
  return joinWords(f.items.map((it) => itemWords(it, 'day of the week', name, 'Saturday')));
}

function domPhrase(f: Field): string {
  if (f.any) return '';
  if (f.items.every((it) => !it.star && it.step === 1)) {
    const parts = f.items.map((it) => (it.hi === it.lo ? String(it.lo) : `${it.lo} to ${it.hi}`));
    const one = f.items.length === 1 && f.items[0]?.hi === f.items[0]?.lo;
    return `on ${one ? 'day' : 'days'} ${joinWords(parts)} of the month`;
  }
  const parts = f.items.map((it) => itemWords(it, 'day', (v) => `day ${v}`, 'the last day'));
  return `on ${joinWords(parts)} of the month`;
}

function monthPhrase(f: Field): string {
  if (f.any) return '';
  const name = (v: number): string => MONTHS[v - 1] as string;
  return `in ${joinWords(f.items.map((it) => itemWords(it, 'month', name, 'December')))}`;
}

/** The day part, with the classic cron day rule (SPEC §3). */
function dayPhrase(domText: string, dowText: string, dom: Field, month: Field, dow: Field): string {
  const domStar = domText.startsWith('*');
  const dowStar = dowText.startsWith('*');
  const days = singles(dom);
  const months = singles(month);
  const weekdays = weekdayPhrase(dow);
  // "on 1 January": one day of one month, no weekday
  if (dow.any && days?.length === 1 && months?.length === 1) {
    return `on ${days[0]} ${MONTHS[(months[0] as number) - 1]}`;
  }
  const inMonths = monthPhrase(month);
  const parts: string[] = [];
  if (dom.any && dow.any) parts.push('every day');
  else if (dom.any) parts.push(`on ${weekdays}`);
  else if (dow.any) parts.push(domPhrase(dom));
  else if (!domStar && !dowStar) parts.push(`${domPhrase(dom)} or on ${weekdays}`);
  else parts.push(`${domPhrase(dom)} if it is ${weekdays}`);
  if (inMonths) parts.push(inMonths);
  return parts.join(' ');
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
 * Friday, UTC`, `Every 1 hour 30 minutes (counted from the Unix epoch)`.
 * An invalid expression comes back as written, with `(invalid schedule)`.
 */
export function describeSchedule(expression: string, timezone = 'UTC'): string {
  const parsed = parseSchedule(expression);
  if (!parsed.ok) return `${expression} (invalid schedule)`;
  const s = parsed.schedule;
  if (s.kind === 'every') {
    const n = s.intervalSeconds;
    const text = n === 60 ? 'Every minute' : `Every ${intervalWords(n)}`;
    return `${text} (counted from the Unix epoch, in every zone alike)`;
  }
  const source = SHORTCUTS[s.source.toLowerCase()] ?? s.source;
  const [mi = '', ho = '', dm = '', mo = '', dw = ''] = source.split(/\s+/);
  const minute = parseField(mi, null, 0);
  const hour = parseField(ho, null, 0);
  const dom = parseField(dm, null, 0);
  const month = parseField(mo, MONTH_KEYS, 1);
  const dow = parseField(dw, WEEKDAY_KEYS, 0);
  const time = timePhrase(minute, hour);
  let days = dayPhrase(dm, dw, dom, month, dow);
  // "Every 10 minutes every day" says nothing the shorter form does not
  if (days === 'every day' && !/^At \d/.test(time)) days = '';
  const sep = time.includes(',') && !/^At \d/.test(time) ? ', ' : ' ';
  return `${time}${days === '' ? '' : sep + days}, ${timezone}`;
}
