/**
 * `L` in the day-of-month field (the last day of the month), checked against an independent
 * computation over 2020–2035: the last day from `Date` arithmetic, the weekday rule written out,
 * and each fire's instant found from the wall clock through Intl (the first UTC minute whose
 * local time reaches the target: the transition instant in a spring-forward gap, the first pass
 * in a fall-back overlap) — no table or code of the schedule engine. Plus the parser's refusals
 * of other uses of `L`, the words, and the engine's DST cases on the Berlin last Sundays.
 */
import { describe, expect, it } from 'vitest';
import { describeSchedule } from '../../src/contract/schedule/describe.js';
import { nextFires, parseSchedule } from '../../src/contract/schedule/index.js';
import { localMinute } from '../helpers/oracle.js';

const MIN = 60_000;
const FROM = Date.UTC(2020, 0, 1) - 2 * 86_400_000;
const TO = Date.UTC(2036, 0, 1);

/** The instant a wall-clock minute `target` (naive minutes) is reached in `tz`, from Intl alone. */
function reached(tz: string, target: number): number {
  const guess = target * MIN;
  const offset = localMinute(tz, guess) * MIN - guess;
  for (let u = guess - offset - 3 * 3_600_000; ; u += MIN) {
    if (localMinute(tz, u) >= target) return u;
  }
}

/** The oracle's fires in [2020, 2036): days chosen by `day`, at hh:mm local. */
function oracle(
  tz: string,
  hh: number,
  mm: number,
  day: (d: { y: number; m: number; d: number; last: number; dow: number }) => boolean,
): number[] {
  const out: number[] = [];
  for (let t = Date.UTC(2020, 0, 1); t < TO; t += 86_400_000) {
    const date = new Date(t);
    const y = date.getUTCFullYear();
    const m = date.getUTCMonth();
    const d = date.getUTCDate();
    const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    if (!day({ y, m: m + 1, d, last, dow: date.getUTCDay() })) continue;
    out.push(reached(tz, Date.UTC(y, m, d, hh, mm) / MIN));
  }
  return out;
}

const engine = (expr: string, tz: string): number[] =>
  nextFires(expr, { timezone: tz, from: FROM, count: 2000 })
    .map((d) => d.getTime())
    .filter((t) => t >= Date.UTC(2020, 0, 1) - 14 * 3_600_000 && t < TO - 14 * 3_600_000);

describe('L against an independent computation, 2020–2035', () => {
  const cases: [string, string, number, number, Parameters<typeof oracle>[3]][] = [
    ['30 2 L * *', 'Europe/Berlin', 2, 30, (x) => x.d === x.last],
    ['0 0 L * *', 'America/Santiago', 0, 0, (x) => x.d === x.last],
    ['0 12 L 2 *', 'UTC', 12, 0, (x) => x.m === 2 && x.d === x.last],
    ['15 9 1,L * *', 'America/New_York', 9, 15, (x) => x.d === 1 || x.d === x.last],
    // both day fields restricted: either matches (the last day, or any Monday)
    ['0 9 L * 1', 'Australia/Lord_Howe', 9, 0, (x) => x.d === x.last || x.dow === 1],
    // a `*` day-of-week: both must match, and `*` matches every day
    ['45 23 L * *', 'Australia/Lord_Howe', 23, 45, (x) => x.d === x.last],
    [
      '30 2 L 3,10 0',
      'Europe/Berlin',
      2,
      30,
      (x) => (x.m === 3 || x.m === 10) && (x.d === x.last || x.dow === 0),
    ],
  ];
  it.each(cases)('%s in %s', (expr, tz, hh, mm, day) => {
    const expected = oracle(tz, hh, mm, day).filter((t) => t < TO - 14 * 3_600_000);
    const found = engine(expr, tz).filter((t) => t >= (expected[0] ?? 0));
    expect(found.length).toBeGreaterThanOrEqual(16); // 16 years of Februaries at the least
    expect(found.map((t) => new Date(t).toISOString())).toEqual(
      expected.slice(0, found.length).map((t) => new Date(t).toISOString()),
    );
    expect(found.length).toBe(expected.length);
  });
});

describe('L on the Berlin DST Sundays', () => {
  it('31 March 2024 (spring forward): 02:30 is skipped, the fire is at 03:00 CEST', () => {
    const [fire] = nextFires('30 2 L 3 *', {
      timezone: 'Europe/Berlin',
      from: Date.UTC(2024, 0, 1),
    });
    expect(fire?.toISOString()).toBe('2024-03-31T01:00:00.000Z');
  });
  it('31 October 2021 (fall back): 02:30 fires once, in the first pass', () => {
    const fires = nextFires('30 2 L 10 *', {
      timezone: 'Europe/Berlin',
      from: Date.UTC(2021, 9, 30),
      count: 2,
    });
    expect(fires.map((d) => d.toISOString())).toEqual([
      '2021-10-31T00:30:00.000Z',
      '2022-10-31T01:30:00.000Z',
    ]);
  });
});

describe('what L is not', () => {
  it.each([
    [
      '0 0 L-2 * *',
      'day-of-month value "L" is not valid (a number 1-31, or L alone for the last day of the month)',
    ],
    ['0 0 1-L * *', 'day-of-month value "L" is not valid'],
    ['0 0 LW * *', 'day-of-month value "LW" is not valid'],
    ['0 0 */L * *', 'day-of-month step "/L" must be a positive integer'],
    ['0 L * * *', 'hour value "L" is not valid (a number 0-23)'],
    ['0 0 * * L', 'day-of-week value "L" is not valid'],
    ['0 0 * L *', 'month value "L" is not valid'],
  ])('%s is refused', (expr, message) => {
    const r = parseSchedule(expr);
    expect(r.ok ? '' : r.error).toContain(message);
  });
  it('l is L; L in a list with days; an L schedule can fire in any month', () => {
    expect(parseSchedule('0 0 l * *')).toMatchObject({ ok: true, schedule: { lastDom: true } });
    expect(parseSchedule('0 0 3,L,10 * *')).toMatchObject({
      ok: true,
      schedule: { lastDom: true },
    });
    expect(parseSchedule('0 0 L 2 *').ok).toBe(true);
    expect(parseSchedule('0 0 31 * *')).toMatchObject({ ok: true, schedule: { lastDom: false } });
  });
});

describe('in words', () => {
  it.each([
    ['0 12 L * *', 'At 12:00 on the last day of the month, UTC'],
    ['0 9 15,L * *', 'At 09:00 on day 15 and the last day of the month, UTC'],
    ['0 9 L * 1', 'At 09:00 on the last day of the month or on Monday, UTC'],
    ['30 2 L 3 *', 'At 02:30 on the last day of the month in March, UTC'],
  ])('%s', (expr, words) => {
    expect(describeSchedule(expr, 'UTC')).toBe(words);
  });
});
