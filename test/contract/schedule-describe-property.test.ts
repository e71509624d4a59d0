/**
 * The words of a schedule agree with its fires. `describeSchedule` renders a small structure
 * (`scheduleMeaning`: the second, minute, hour and month sets and the day rule); here that
 * structure is read by a model of its own — "the first instant after t whose second, minute,
 * hour, day and month are in the sets" — and compared with `nextFires` on random schedules
 * (5 and 6 fields, steps, ranges, lists, names, shortcuts, `@every`). The zone plays no part in
 * the words beyond naming it, so the comparison runs in UTC (no DST). The rendering of the
 * structure into words is table-tested in schedule-describe.test.ts; below, a few properties
 * tie the words to the structure (seconds are mentioned exactly when the schedule has them).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeSchedule } from '../../src/contract/schedule/describe.js';
import { nextFires, parseSchedule } from '../../src/contract/schedule/index.js';
import {
  scheduleMeaning,
  spanValues,
  type DayMeaning,
  type FieldMeaning,
  type ScheduleMeaning,
} from '../../src/contract/schedule/meaning.js';

const SECOND = 1000;
const DAY = 86_400_000;
const FROM_2020 = Date.UTC(2020, 0, 1);
const TO_2031 = Date.UTC(2031, 0, 1);

/** The values a field selects, ascending (weekday 7 read as Sunday, 0). */
function valuesOf(f: FieldMeaning, wrap?: { at: number; to: number }): number[] {
  const all = f.spans.flatMap(spanValues).map((v) => (wrap && v === wrap.at ? wrap.to : v));
  return [...new Set(all)].sort((a, b) => a - b);
}

function dayMatches(days: DayMeaning, dom: number, weekday: number): boolean {
  const inDom = (f: FieldMeaning) => valuesOf(f).includes(dom);
  const inDow = (f: FieldMeaning) => valuesOf(f, { at: 7, to: 0 }).includes(weekday);
  switch (days.kind) {
    case 'every':
      return true;
    case 'dom':
      return inDom(days.dom);
    case 'dow':
      return inDow(days.dow);
    case 'both':
      return inDom(days.dom) && inDow(days.dow);
    case 'either':
      return inDom(days.dom) || inDow(days.dow);
  }
}

/**
 * The first UTC instant in (after, until] that the meaning selects, or null: day by day, then
 * the hour, minute and second sets in order. Knows nothing of the engine.
 */
function firstMatch(m: ScheduleMeaning, after: number, until: number): number | null {
  if (m.kind === 'every') {
    const step = m.seconds * SECOND;
    const next = (Math.floor(after / step) + 1) * step;
    return next <= until ? next : null;
  }
  const hours = valuesOf(m.hours);
  const minutes = valuesOf(m.minutes);
  const seconds = valuesOf(m.seconds);
  const months = valuesOf(m.months);
  for (let day = Math.floor(after / DAY) * DAY; day <= until; day += DAY) {
    const d = new Date(day);
    if (!months.includes(d.getUTCMonth() + 1)) continue;
    if (!dayMatches(m.days, d.getUTCDate(), d.getUTCDay())) continue;
    for (const h of hours)
      for (const mi of minutes)
        for (const s of seconds) {
          const at = day + h * 3_600_000 + mi * 60_000 + s * SECOND;
          if (at > after) return at <= until ? at : null;
        }
  }
  return null;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

/**
 * One field: `*` (weighted by `star`), `*\/n`, a value, `a-b`, `a-b/n`, `a/n` (to the field's
 * end), or a list of those; values as numbers or names.
 */
function field(min: number, max: number, star: number, names?: readonly string[], base = 0) {
  const n = fc.integer({ min, max });
  const value = names
    ? fc.oneof(
        n.map(String),
        fc.nat({ max: names.length - 1 }).map((i) => names[i]!),
      )
    : n.map(String);
  const nameOf = (v: number) => (names && v - base < names.length && v % 2 ? names[v - base] : v);
  const range = fc
    .tuple(n, n)
    .map(([a, b]) => (a <= b ? [a, b] : [b, a]))
    .map(([a, b]) => `${nameOf(a!)}-${nameOf(b!)}`);
  const step = fc.integer({ min: 1, max: Math.max(1, max - min) });
  const item = fc.oneof(
    value,
    range,
    fc.tuple(range, step).map(([r, k]) => `${r}/${k}`),
    fc.tuple(value, step).map(([v, k]) => `${v}/${k}`),
    step.map((k) => `*/${k}`),
  );
  return fc.oneof(
    { weight: star, arbitrary: fc.constant('*') },
    { weight: 4, arbitrary: item },
    {
      weight: 2,
      arbitrary: fc.array(item, { minLength: 2, maxLength: 4 }).map((v) => v.join(',')),
    },
  );
}

/** Random 5-field or (with `seconds`) 6-field expressions; `dense` keeps the days mostly `*`. */
function cronExpression(dense: boolean, seconds = false): fc.Arbitrary<string> {
  const days = dense ? 12 : 2;
  return fc
    .tuple(
      field(0, 59, 3),
      field(0, 59, 3),
      field(0, 23, 3),
      field(1, 31, days),
      field(1, 12, days, MONTHS, 1),
      field(0, 7, days, DAYS),
    )
    .map(([s, ...rest]) => (seconds ? [s, ...rest] : rest).join(' '));
}

const every = fc
  .tuple(fc.nat({ max: 30 }), fc.nat({ max: 90 }), fc.nat({ max: 90 }))
  .filter(([h, m, s]) => h + m + s > 0)
  .map(([h, m, s]) => `@every ${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`);
const shortcut = fc.constantFrom(
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
);

/** Valid schedules of every kind: 6 and 5 fields, dense and sparse days, shortcuts, `@every`. */
const schedule = fc
  .oneof(
    { weight: 4, arbitrary: cronExpression(true, true) },
    { weight: 2, arbitrary: cronExpression(false, true) },
    { weight: 3, arbitrary: cronExpression(true) },
    { weight: 2, arbitrary: cronExpression(false) },
    { weight: 1, arbitrary: shortcut },
    { weight: 1, arbitrary: every },
  )
  .filter((e) => parseSchedule(e).ok);

describe('the meaning of a schedule agrees with nextFires', () => {
  it('the next three fires after a random instant are the first instants the meaning selects', () => {
    fc.assert(
      fc.property(schedule, fc.integer({ min: FROM_2020, max: TO_2031 }), (expr, t) => {
        const meaning = scheduleMeaning(expr);
        expect(meaning).not.toBeNull();
        const fires = nextFires(expr, { from: t, count: 3, timezone: 'UTC' });
        expect(fires.length).toBeGreaterThan(0);
        let after = t;
        for (const fire of fires) {
          expect(firstMatch(meaning!, after, fire.getTime()), `${expr} after ${after}`).toBe(
            fire.getTime(),
          );
          after = fire.getTime();
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('the examples of the issue mean what they say', () => {
    expect(scheduleMeaning('*/30 * * * * *')).toMatchObject({
      seconds: { spans: [{ from: 0, to: 30, step: 30, star: true }], all: false },
      minutes: { all: true },
      hours: { all: true },
    });
    expect(scheduleMeaning('0 */30 * * * *')).toMatchObject({
      seconds: { spans: [{ from: 0, to: 0, step: 1 }] },
      minutes: { spans: [{ from: 0, to: 30, step: 30, star: true }] },
      hours: { all: true },
    });
    expect(scheduleMeaning('@every 1h30m')).toEqual({ kind: 'every', seconds: 5400 });
    expect(scheduleMeaning('61 * * * *')).toBeNull();
  });
});

describe('the words follow the meaning', () => {
  const onlyZero = (f: FieldMeaning) => valuesOf(f).length === 1 && valuesOf(f)[0] === 0;

  it('seconds are mentioned exactly when the schedule fires at other seconds than :00', () => {
    fc.assert(
      fc.property(schedule, (expr) => {
        const m = scheduleMeaning(expr)!;
        const words = describeSchedule(expr, 'UTC');
        const seconds = m.kind === 'every' ? m.seconds % 60 !== 0 : !onlyZero(m.seconds);
        expect(/\bseconds?\b|\d\d:\d\d:\d\d/.test(words), `${expr}: ${words}`).toBe(seconds);
      }),
      { numRuns: 1500 },
    );
  });

  it('every valid schedule reads as one sentence naming its zone, with nothing unfilled', () => {
    fc.assert(
      fc.property(schedule, (expr) => {
        const words = describeSchedule(expr, 'Europe/Berlin');
        expect(words).toMatch(/^[A-Z]/);
        expect(words).not.toMatch(/undefined|NaN|null|\s{2}|,,|\(invalid/);
        if (!expr.startsWith('@every')) expect(words.endsWith(', Europe/Berlin')).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });
});
