/**
 * Test oracle: robfig/cron v3.0.1 as vendored by Kubernetes (`vendor/github.com/robfig/cron/v3`,
 * the parser behind `cron.ParseStandard` in the CronJob controller), ported line by line for
 * what the backend relies on: `getRange`/`getField` bit sets with the star bit,
 * `parseDescriptor`, and `dayMatches`. Used to check that every schedule the Kubernetes backend
 * emits fires, in UTC, on exactly the days and times cronix computes.
 */

/** `spec.go` bounds; note day-of-week 0-6. */
interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}
const names = (list: string[], base: number): Record<string, number> =>
  Object.fromEntries(list.map((n, i) => [n, i + base]));
const B = {
  minutes: { min: 0, max: 59 },
  hours: { min: 0, max: 23 },
  dom: { min: 1, max: 31 },
  months: {
    min: 1,
    max: 12,
    names: names(
      ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'],
      1,
    ),
  },
  dow: { min: 0, max: 6, names: names(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'], 0) },
} satisfies Record<string, Bounds>;

/** `starBit = 1 << 63`, kept as a flag beside the value bits. */
export interface RobfigSpec {
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  domStar: boolean;
  dowStar: boolean;
}

class ParseError extends Error {}

function mustParseInt(expr: string): number {
  // strconv.Atoi: optional sign, decimal digits
  if (!/^[+-]?[0-9]+$/.test(expr)) throw new ParseError(`failed to parse int from ${expr}`);
  const n = Number(expr);
  if (n < 0) throw new ParseError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, r: Bounds): number {
  const named = r.names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

/** `getRange`: the bits of one list item, and whether it contributes the star bit. */
function getRange(expr: string, r: Bounds): { bits: number[]; star: boolean } {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  const singleDigit = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let step: number;
  let extra = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = r.min;
    end = r.max;
    extra = true;
  } else {
    start = parseIntOrName(lowAndHigh[0] ?? '', r);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1] ?? '', r);
    else throw new ParseError(`too many hyphens: ${expr}`);
  }
  if (rangeAndStep.length === 1) step = 1;
  else if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1] ?? '');
    if (singleDigit) end = r.max; // "N/step" means "N-max/step"
    if (step > 1) extra = false;
  } else throw new ParseError(`too many slashes: ${expr}`);
  if (start < r.min) throw new ParseError(`beginning of range (${start}) below minimum`);
  if (end > r.max) throw new ParseError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new ParseError(`beginning of range (${start}) beyond end of range`);
  if (step === 0) throw new ParseError(`step of range should be a positive number: ${expr}`);
  const bits: number[] = [];
  for (let i = start; i <= end; i += step) bits.push(i);
  return { bits, star: extra };
}

/** `getField`: `strings.FieldsFunc` on "," (empty items vanish), OR of the ranges. */
function getField(field: string, r: Bounds): { bits: Set<number>; star: boolean } {
  const bits = new Set<number>();
  let star = false;
  for (const expr of field.split(',').filter((s) => s !== '')) {
    const got = getRange(expr, r);
    got.bits.forEach((b) => bits.add(b));
    star ||= got.star;
  }
  return { bits, star };
}

const all = (r: Bounds): Set<number> => {
  const s = new Set<number>();
  for (let i = r.min; i <= r.max; i++) s.add(i);
  return s;
};

/** `ParseStandard` (5 fields or a descriptor; no TZ prefix, no @every), or the error text. */
export function robfigParse(spec: string): RobfigSpec | string {
  try {
    if (spec.startsWith('@')) {
      const one = (n: number): Set<number> => new Set([n]);
      const base = { minute: one(0), hour: one(0), month: all(B.months) };
      switch (spec) {
        case '@yearly':
        case '@annually':
          return {
            ...base,
            month: one(1),
            dom: one(1),
            dow: all(B.dow),
            domStar: false,
            dowStar: true,
          };
        case '@monthly':
          return { ...base, dom: one(1), dow: all(B.dow), domStar: false, dowStar: true };
        case '@weekly':
          return { ...base, dom: all(B.dom), dow: one(0), domStar: true, dowStar: false };
        case '@daily':
        case '@midnight':
          return { ...base, dom: all(B.dom), dow: all(B.dow), domStar: true, dowStar: true };
        case '@hourly':
          return {
            ...base,
            hour: all(B.hours),
            dom: all(B.dom),
            dow: all(B.dow),
            domStar: true,
            dowStar: true,
          };
        default:
          return `unrecognized descriptor: ${spec}`;
      }
    }
    const f = spec.trim().split(/\s+/);
    if (f.length !== 5) return `expected exactly 5 fields, found ${f.length}`;
    const dom = getField(f[2] as string, B.dom);
    const dow = getField(f[4] as string, B.dow);
    return {
      minute: getField(f[0] as string, B.minutes).bits,
      hour: getField(f[1] as string, B.hours).bits,
      dom: dom.bits,
      month: getField(f[3] as string, B.months).bits,
      dow: dow.bits,
      domStar: dom.star,
      dowStar: dow.star,
    };
  } catch (err) {
    if (err instanceof ParseError) return err.message;
    throw err;
  }
}

/** `dayMatches`: AND when either day field has the star bit, else OR. */
export function robfigDayMatches(s: RobfigSpec, dom: number, weekday: number): boolean {
  const domMatch = s.dom.has(dom);
  const dowMatch = s.dow.has(weekday);
  return s.domStar || s.dowStar ? domMatch && dowMatch : domMatch || dowMatch;
}
