/**
 * What a schedule means, as a small structure the words are rendered from
 * (`describe.ts`): the seconds, minutes, hours and months it selects, and
 * which days, with the classic cron day rule already applied. Each field
 * keeps the items as written (`*\/15`, `9-17`, `MON-FRI`), so the words can
 * follow the expression, and each item says exactly which values it selects,
 * so `test/contract/schedule-describe-property.test.ts` can check the
 * structure against `nextFires` without reading any words.
 *
 * Read from the expression's text, not from the parser's tables: the
 * property test then compares two independent readings of it. Pure; only
 * expressions that `parseSchedule` accepts are read.
 */
import { parseSchedule, SHORTCUTS } from './cron.js';

/**
 * One comma item of a field: the values `from`, `from + step`, … up to `to`.
 * `to` is the last value the item reaches (`10-42/5` has `to` 40), so a
 * single value is `from === to`.
 */
export interface Span {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  /** Written as `*` or `*\/n`: the item starts at the field's first value and runs to its end. */
  readonly star: boolean;
}

/** One field: its items, and whether together they select every value of the field. */
export interface FieldMeaning {
  readonly spans: readonly Span[];
  /** Every value of the field is selected (a bare `*`, `0-59`, `*,5`, …). */
  readonly all: boolean;
  /** Day-of-month only: the field lists `L`, the last day of the month (not in `spans`). */
  readonly last?: true;
}

/**
 * The days a schedule fires on, the day rule of SPEC §3 applied: when both
 * day fields are restricted a day matches if either matches (`either`); when
 * one starts with `*`, both must (`both`), which is the other one alone when
 * the `*` one selects every day (`dom`, `dow`).
 */
export type DayMeaning =
  | { readonly kind: 'every' }
  | { readonly kind: 'dom'; readonly dom: FieldMeaning }
  | { readonly kind: 'dow'; readonly dow: FieldMeaning }
  | { readonly kind: 'both'; readonly dom: FieldMeaning; readonly dow: FieldMeaning }
  | { readonly kind: 'either'; readonly dom: FieldMeaning; readonly dow: FieldMeaning };

/** A cron schedule's meaning. Weekday values are 0–7 as written (7 is Sunday, like 0). */
export interface CronMeaning {
  readonly kind: 'cron';
  /** `{0}` for a 5-field expression (it fires on whole minutes). */
  readonly seconds: FieldMeaning;
  readonly minutes: FieldMeaning;
  readonly hours: FieldMeaning;
  readonly days: DayMeaning;
  readonly months: FieldMeaning;
}

/** `@every`: every `seconds` seconds, counted from the Unix epoch. */
export interface EveryMeaning {
  readonly kind: 'every';
  readonly seconds: number;
}

/** What a valid schedule means. */
export type ScheduleMeaning = CronMeaning | EveryMeaning;

/** How one field is read: its values, its `*`, and its names. */
interface FieldRead {
  readonly min: number;
  /** The last value of `*` and of an open `a/n` (6 for weekdays, whose 7 is Sunday again). */
  readonly starMax: number;
  readonly names?: readonly string[];
  readonly nameBase?: number;
}

const MONTH_NAMES = 'jan feb mar apr may jun jul aug sep oct nov dec'.split(' ');
const WEEKDAY_NAMES = 'sun mon tue wed thu fri sat'.split(' ');
const SECOND: FieldRead = { min: 0, starMax: 59 };
const MINUTE: FieldRead = { min: 0, starMax: 59 };
const HOUR: FieldRead = { min: 0, starMax: 23 };
const DOM: FieldRead = { min: 1, starMax: 31 };
const MONTH: FieldRead = { min: 1, starMax: 12, names: MONTH_NAMES, nameBase: 1 };
const DOW: FieldRead = { min: 0, starMax: 6, names: WEEKDAY_NAMES, nameBase: 0 };

function value(token: string, read: FieldRead): number {
  if (/^\d+$/.test(token)) return Number(token);
  return (read.names?.indexOf(token.toLowerCase()) ?? -1) + (read.nameBase ?? 0);
}

/** The values a span selects, in order (weekday 7 stays 7). */
export function spanValues(s: Span): number[] {
  const out: number[] = [];
  for (let v = s.from; v <= s.to; v += s.step) out.push(v);
  return out;
}

function readSpan(item: string, read: FieldRead): Span {
  const slash = item.indexOf('/');
  const range = slash >= 0 ? item.slice(0, slash) : item;
  const step = slash >= 0 ? Number(item.slice(slash + 1)) : 1;
  let from: number;
  let hi: number;
  if (range === '*') {
    from = read.min;
    hi = read.starMax;
  } else if (range.includes('-')) {
    const [a = '', b = ''] = range.split('-');
    from = value(a, read);
    hi = value(b, read);
  } else {
    from = value(range, read);
    // `a/n` runs to the end of the field; a weekday `7/n` starts at Sunday (0)
    if (slash >= 0 && from > read.starMax) from = read.min;
    hi = slash >= 0 ? read.starMax : from;
  }
  const to = from + Math.floor((hi - from) / step) * step;
  return { from, to, step, star: range === '*' };
}

function readField(text: string, read: FieldRead): FieldMeaning {
  const spans = text.split(',').map((item) => readSpan(item, read));
  const seen = new Set(spans.flatMap(spanValues).map((v) => (v > read.starMax ? read.min : v)));
  return { spans, all: seen.size === read.starMax - read.min + 1 };
}

/** The day-of-month field: its `L` item apart (the month's last day), the rest as any field. */
function readDom(text: string): FieldMeaning {
  const items = text.split(',');
  const rest = items.filter((i) => i.toUpperCase() !== 'L');
  if (rest.length === items.length) return readField(text, DOM);
  const f = rest.length > 0 ? readField(rest.join(','), DOM) : { spans: [], all: false };
  return { ...f, last: true };
}

function readDays(domText: string, dowText: string): DayMeaning {
  const dom = readDom(domText);
  const dow = readField(dowText, DOW);
  if (domText.startsWith('*') || dowText.startsWith('*')) {
    if (dom.all && dow.all) return { kind: 'every' };
    if (dom.all) return { kind: 'dow', dow };
    if (dow.all) return { kind: 'dom', dom };
    return { kind: 'both', dom, dow };
  }
  if (dom.all || dow.all) return { kind: 'every' };
  return { kind: 'either', dom, dow };
}

const ZERO: FieldMeaning = { spans: [{ from: 0, to: 0, step: 1, star: false }], all: false };

/** The meaning of a schedule of SPEC §3, or null when it is not valid. */
export function scheduleMeaning(expression: string): ScheduleMeaning | null {
  const parsed = parseSchedule(expression);
  if (!parsed.ok) return null;
  const s = parsed.schedule;
  if (s.kind === 'every') return { kind: 'every', seconds: s.intervalSeconds };
  const text = SHORTCUTS[s.source.toLowerCase()] ?? s.source;
  const fields = text.split(/\s+/);
  const [sec, min = '', hour = '', dom = '', month = '', dow = ''] =
    fields.length === 6 ? fields : ['0', ...fields];
  return {
    kind: 'cron',
    seconds: fields.length === 6 ? readField(sec ?? '0', SECOND) : ZERO,
    minutes: readField(min, MINUTE),
    hours: readField(hour, HOUR),
    days: readDays(dom, dow),
    months: readField(month, MONTH),
  };
}
