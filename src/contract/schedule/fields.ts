/**
 * One cron field (SPEC §3): numbers, `*`, ranges `a-b`, steps `*\/n`, `a-b/n` and `a/n`, lists,
 * the month and weekday names, and `L` (the last day of the month) as an item of the
 * day-of-month field, parsed into a 0/1 table indexed by value (`L` sets index 0, which no day
 * uses; `cron.ts` takes it out into `CronSpec.lastDom`). Errors are thrown
 * as {@link FieldError} with a message naming the field and the value; `cron.ts` turns them into
 * parse results.
 */
import { cut, echo } from '../echo.js';

const MONTH_NAMES = [
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
];
const DOW_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** How one field is read. */
export interface FieldDef {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  /**
   * Last value of `*` (and of an open `a/n`). Equals `max`, except day-of-week, whose `7`
   * is another name for Sunday (0), so `*` covers 0..6.
   */
  readonly starMax: number;
  readonly names?: readonly string[];
  /** Value of the first name (1 for months, 0 for weekdays). */
  readonly nameBase?: number;
  /** Day-of-month: `L` alone, as a list item, is the month's last day. */
  readonly last?: boolean;
}

/** The seconds field of a 6-field expression (the seconds extension). */
export const SECOND_FIELD: FieldDef = { label: 'second', min: 0, max: 59, starMax: 59 };

/** The five classic fields, in order. */
export const CLASSIC_FIELDS: readonly FieldDef[] = [
  { label: 'minute', min: 0, max: 59, starMax: 59 },
  { label: 'hour', min: 0, max: 23, starMax: 23 },
  { label: 'day-of-month', min: 1, max: 31, starMax: 31, last: true },
  { label: 'month', min: 1, max: 12, starMax: 12, names: MONTH_NAMES, nameBase: 1 },
  { label: 'day-of-week', min: 0, max: 7, starMax: 6, names: DOW_NAMES, nameBase: 0 },
];

/** A field that cannot be read; the message names the field and the value. */
export class FieldError extends Error {}

function parseValue(token: string, def: FieldDef): number {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    if (n < def.min || n > def.max) {
      throw new FieldError(
        `${def.label} value ${cut(token)} is out of range ${def.min}-${def.max}`,
      );
    }
    return n;
  }
  const lower = token.toLowerCase();
  const idx = def.names ? def.names.indexOf(lower) : -1;
  if (idx >= 0 && def.names && def.nameBase !== undefined) return idx + def.nameBase;
  const hint = def.names
    ? ` (a number ${def.min}-${def.max} or a name like ${def.names[1]?.toUpperCase()})`
    : def.last
      ? ` (a number ${def.min}-${def.max}, or L alone for the last day of the month)`
      : ` (a number ${def.min}-${def.max})`;
  throw new FieldError(`${def.label} value ${echo(token)} is not valid${hint}`);
}

/**
 * A step: a positive integer no larger than the number of values the field has (SPEC §3:
 * `*\/61` in minutes and `*\/25` in hours are errors; `*\/60` and `*\/24` select one value).
 */
function parseStep(text: string, def: FieldDef): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new FieldError(`${def.label} step ${echo(`/${text}`)} must be a positive integer`);
  }
  const step = Number(text);
  const values = def.starMax - def.min + 1;
  if (step > values) {
    throw new FieldError(
      `${def.label} step ${echo(`/${text}`)} is larger than the field's range ` +
        `${def.min}-${def.starMax} (at most /${values})`,
    );
  }
  return step;
}

/** Parses one comma-separated field into a 0/1 table indexed by value (length `max + 1`). */
export function parseField(text: string, def: FieldDef): Uint8Array {
  const bits = new Uint8Array(def.max + 1);
  for (const item of text.split(',')) {
    if (item === '') {
      throw new FieldError(`${def.label} field ${echo(text)} has an empty list item`);
    }
    if (def.last && (item === 'L' || item === 'l')) {
      bits[0] = 1; // the last day of the month (index 0 is no day)
      continue;
    }
    const slash = item.indexOf('/');
    const rangePart = slash >= 0 ? item.slice(0, slash) : item;
    const step = slash >= 0 ? parseStep(item.slice(slash + 1), def) : 1;
    let lo: number;
    let hi: number;
    if (rangePart === '*') {
      lo = def.min;
      hi = def.starMax;
    } else {
      const dash = rangePart.indexOf('-');
      if (dash >= 0) {
        lo = parseValue(rangePart.slice(0, dash), def);
        hi = parseValue(rangePart.slice(dash + 1), def);
        if (lo > hi) {
          throw new FieldError(
            `${def.label} range ${echo(rangePart)} is reversed (start must not exceed end)`,
          );
        }
      } else {
        lo = parseValue(rangePart, def);
        // `a/n` means "from a to the end of the range, every n" (as in cronie and croner);
        // in day-of-week, `7/n` starts at Sunday (0), since 7 is Sunday too.
        if (slash >= 0 && lo > def.starMax) lo = def.min;
        hi = slash >= 0 ? def.starMax : lo;
      }
    }
    for (let v = lo; v <= hi; v += step) bits[v] = 1;
  }
  return bits;
}

/** `table[i]`: the smallest set index ≥ i of `bits[0..size)`, or -1. Length `size + 1`. */
export function nextTable(bits: Uint8Array, size: number): Int8Array {
  const table = new Int8Array(size + 1).fill(-1);
  let next = -1;
  for (let i = size - 1; i >= 0; i--) {
    if (bits[i] === 1) next = i;
    table[i] = next;
  }
  return table;
}
