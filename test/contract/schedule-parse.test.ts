import { describe, expect, it } from 'vitest';
import { parseSchedule, type CronSpec } from '../../src/contract/schedule/index.js';

function cron(expr: string): CronSpec {
  const r = parseSchedule(expr);
  if (!r.ok) throw new Error(`expected ${expr} to parse: ${r.error}`);
  if (r.schedule.kind !== 'cron') throw new Error('expected a cron schedule');
  return r.schedule;
}

const set = (bits: Uint8Array): number[] => [...bits.keys()].filter((i) => bits[i] === 1);

function error(expr: string): string {
  const r = parseSchedule(expr);
  if (r.ok) throw new Error(`expected ${expr} to be rejected`);
  return r.error;
}

describe('parseSchedule: fields', () => {
  it.each([
    ['*/15 * * * *', 'minutes', [0, 15, 30, 45]],
    ['5-10/2 * * * *', 'minutes', [5, 7, 9]],
    ['1,2,59 * * * *', 'minutes', [1, 2, 59]],
    ['10/20 * * * *', 'minutes', [10, 30, 50]],
    ['0 9-17 * * *', 'hours', [9, 10, 11, 12, 13, 14, 15, 16, 17]],
    ['0 */8 * * *', 'hours', [0, 8, 16]],
    ['0 0 1,15,31 * *', 'doms', [1, 15, 31]],
    ['0 0 * JAN-MAR,dec *', 'months', [1, 2, 3, 12]],
    ['0 0 * */4 *', 'months', [1, 5, 9]],
    ['0 0 * * MON-FRI', 'dows', [1, 2, 3, 4, 5]],
    ['0 0 * * sun,Sat', 'dows', [0, 6]],
    ['0 0 * * 7', 'dows', [0]],
    ['0 0 * * 5-7', 'dows', [0, 5, 6]],
    ['0 0 * * 0', 'dows', [0]],
    ['0 0 * * */2', 'dows', [0, 2, 4, 6]],
    ['0 0 * * 7/1', 'dows', [0, 1, 2, 3, 4, 5, 6]],
    ['0 0 * * 7/3', 'dows', [0, 3, 6]],
  ] as const)('%s → %s %j', (expr, field, expected) => {
    expect(set(cron(expr)[field])).toEqual(expected);
  });

  it('expands shortcuts to their classic meaning', () => {
    const cases: Record<string, string> = {
      '@yearly': '0 0 1 1 *',
      '@annually': '0 0 1 1 *',
      '@monthly': '0 0 1 * *',
      '@weekly': '0 0 * * 0',
      '@daily': '0 0 * * *',
      '@midnight': '0 0 * * *',
      '@hourly': '0 * * * *',
    };
    for (const [shortcut, expanded] of Object.entries(cases)) {
      const a = cron(shortcut);
      const b = cron(expanded);
      expect(a.source).toBe(shortcut);
      for (const f of ['minutes', 'hours', 'doms', 'months', 'dows'] as const)
        expect(set(a[f])).toEqual(set(b[f]));
      expect(a.fixedTime).toBe(b.fixedTime);
    }
  });

  it('classifies fixed-time and wildcard jobs by a leading *', () => {
    expect(cron('30 2 * * *').fixedTime).toBe(true);
    expect(cron('0,30 1-3 * * *').fixedTime).toBe(true);
    expect(cron('* 2 * * *').fixedTime).toBe(false);
    expect(cron('0 * * * *').fixedTime).toBe(false);
    expect(cron('0 */2 * * *').fixedTime).toBe(false);
    expect(cron('@daily').fixedTime).toBe(true);
    expect(cron('@hourly').fixedTime).toBe(false);
  });

  it('records which day fields start with * (the either rule)', () => {
    expect(cron('0 0 1 * 1')).toMatchObject({ domStar: false, dowStar: false });
    expect(cron('0 0 * * 1')).toMatchObject({ domStar: true, dowStar: false });
    expect(cron('0 0 */2 * 1')).toMatchObject({ domStar: true, dowStar: false });
  });

  it('accepts extra whitespace between fields', () => {
    expect(set(cron('  0\t12   *  * *  ').hours)).toEqual([12]);
  });
});

describe('parseSchedule: six fields (seconds first)', () => {
  it.each([
    ['*/15 * * * * *', [0, 15, 30, 45]],
    ['5-10/2 * * * * *', [5, 7, 9]],
    ['1,2,59 0 * * * *', [1, 2, 59]],
    ['10/20 * * * * *', [10, 30, 50]],
    ['* * * * * *', Array.from({ length: 60 }, (_, i) => i)],
    ['0 * * * * *', [0]],
  ] as const)('%s → seconds %j', (expr, expected) => {
    const s = cron(expr);
    expect(s.fields).toBe(6);
    expect(set(s.seconds)).toEqual(expected);
  });

  it('reads the other five fields exactly as the 5-field form does', () => {
    const six = cron('30 */15 9-17 1,15 JAN-MAR MON-FRI');
    const five = cron('*/15 9-17 1,15 JAN-MAR MON-FRI');
    for (const f of ['minutes', 'hours', 'doms', 'months', 'dows'] as const)
      expect(set(six[f])).toEqual(set(five[f]));
    expect([six.domStar, six.dowStar, six.fixedTime]).toEqual([
      five.domStar,
      five.dowStar,
      five.fixedTime,
    ]);
  });

  it('a 5-field expression or shortcut fires at second 0 and has minute resolution', () => {
    for (const expr of ['* * * * *', '30 2 * * *', '@hourly']) {
      const s = cron(expr);
      expect([s.fields, set(s.seconds), s.secondResolution]).toEqual([5, [0], false]);
    }
  });

  it('needs second resolution exactly when the seconds field selects more than second 0', () => {
    expect(cron('0 * * * * *').secondResolution).toBe(false);
    expect(cron('0,0 */5 * * * *').secondResolution).toBe(false);
    expect(cron('30 * * * * *').secondResolution).toBe(true);
    expect(cron('0,30 * * * * *').secondResolution).toBe(true);
    expect(cron('* 0 9 * * *').secondResolution).toBe(true);
  });

  it('fixed-time looks at the minute and hour fields only, whatever the seconds field (SPEC §3)', () => {
    expect(cron('* 30 2 * * *').fixedTime).toBe(true);
    expect(cron('*/10 0 9 * * *').fixedTime).toBe(true);
    expect(cron('0 * 2 * * *').fixedTime).toBe(false);
    expect(cron('0 30 */2 * * *').fixedTime).toBe(false);
    expect(cron('15 */5 * * * *').fixedTime).toBe(false);
  });
});

describe('parseSchedule: @every', () => {
  it.each([
    ['@every 1m', 60],
    ['@every 5m', 300],
    ['@every 90s', 90],
    ['@every 1h30m', 5400],
    ['@every 2h', 7200],
    ['@every 1h0m30s', 3630],
  ])('%s = %is', (expr, seconds) => {
    const r = parseSchedule(expr);
    expect(r.ok && r.schedule.kind === 'every' && r.schedule.intervalSeconds).toBe(seconds);
  });

  it.each([
    ['@every 1s', 1],
    ['@every 5s', 5],
    ['@every 30s', 30],
    ['@every 59s', 59],
    ['@every 1m1s', 61],
  ])(
    'accepts sub-minute and odd-second intervals (seconds extension): %s = %is',
    (expr, seconds) => {
      const r = parseSchedule(expr);
      expect(r.ok && r.schedule.kind === 'every' && r.schedule.intervalSeconds).toBe(seconds);
    },
  );

  it.each(['@every 0s', '@every 0m', '@every 0h0m0s'])('rejects %s as too fast', (expr) => {
    expect(error(expr)).toMatch(/at least 1s, found 0s/);
  });

  it.each(['@every', '@every 5', '@every 5d', '@every m5', '@every 30m1h', '@every -5m'])(
    'rejects malformed %s',
    (expr) => {
      expect(error(expr)).toMatch(/not a valid @every interval/);
    },
  );
});

describe('parseSchedule: errors name the field and the value', () => {
  it.each([
    ['', /empty/],
    ['not a cron', /expected 5 fields .* or 6 .* found 3 in "not a cron"/],
    ['* * * * * * *', /expected 5 fields .* or 6 \(second minute hour .*\), found 7/],
    ['* * * *', /found 4/],
    ['60 * * * *', /minute value 60 is out of range 0-59/],
    ['0 24 * * *', /hour value 24 is out of range 0-23/],
    ['0 0 0 * *', /day-of-month value 0 is out of range 1-31/],
    ['0 0 32 * *', /day-of-month value 32/],
    ['0 0 * 13 *', /month value 13 is out of range 1-12/],
    ['0 0 * * 8', /day-of-week value 8 is out of range 0-7/],
    ['0 0 * FOO *', /month value "FOO" is not valid/],
    ['0 0 * * MONDAY', /day-of-week value "MONDAY" is not valid/],
    ['0 0 * * MON-', /day-of-week value "" is not valid/],
    ['10-5 * * * *', /minute range "10-5" is reversed/],
    ['*/0 * * * *', /minute step "\/0" must be a positive integer/],
    // SPEC §3: a step larger than its field's range is an error in every field
    ['*/61 * * * *', /minute step "\/61" is larger than the field's range 0-59 \(at most \/60\)/],
    ['0-30/61 * * * *', /minute step "\/61" is larger than the field's range 0-59/],
    ['0 */25 * * *', /hour step "\/25" is larger than the field's range 0-23 \(at most \/24\)/],
    ['0 0 */32 * *', /day-of-month step "\/32" is larger than the field's range 1-31/],
    ['0 0 1 */13 *', /month step "\/13" is larger than the field's range 1-12/],
    ['0 0 * * */8', /day-of-week step "\/8" is larger than the field's range 0-6 \(at most \/7\)/],
    ['0 0 * * 1/8', /day-of-week step "\/8"/],
    ['*/61 * * * * *', /second step "\/61" is larger than the field's range 0-59/],
    ['0 */61 * * * *', /minute step "\/61"/],
    ['60 * * * * *', /second value 60 is out of range 0-59 in "60 \* \* \* \* \*"/],
    ['x * * * * *', /second value "x" is not valid \(a number 0-59\)/],
    ['5-1 * * * * *', /second range "5-1" is reversed/],
    ['*/0 * * * * *', /second step "\/0" must be a positive integer/],
    ['1,,2 * * * * *', /second field "1,,2" has an empty list item/],
    ['0 60 * * * *', /minute value 60 is out of range 0-59/],
    ['0 0 24 * * *', /hour value 24 is out of range 0-23/],
    ['0 0 0 30 2 *', /can never fire/],
    // long values are cut in the message
    [
      `${'9'.repeat(300)} * * * *`,
      /^minute value 9+…\(\d+ more characters\) is out of range 0-59 in "9+…\(\d+ more characters\)"$/,
    ],
    [`*/${'9'.repeat(300)} * * * *`, /minute step "\/9+…\(\d+ more characters\)" is larger than/],
    ['*/x * * * *', /minute step/],
    ['1,,2 * * * *', /empty list item/],
    ['? * * * *', /minute value "\?" is not valid/],
    ['0 0 L-1 * *', /day-of-month value "L" is not valid \(a number 1-31, or L alone/],
    ['0 0 * * 1#2', /day-of-week value "1#2"/],
    ['@reboot', /unknown shortcut "@reboot"/],
  ])('%j → %s', (expr, pattern) => {
    expect(error(expr)).toMatch(pattern);
  });

  it('accepts the largest step of each field (it selects the first value only)', () => {
    expect(set(cron('*/60 * * * *').minutes)).toEqual([0]);
    expect(set(cron('0 */24 * * *').hours)).toEqual([0]);
    expect(set(cron('0 0 */31 * *').doms)).toEqual([1]);
    expect(set(cron('0 0 * */12 *').months)).toEqual([1]);
    expect(set(cron('0 0 * * */7').dows)).toEqual([0]);
    expect(set(cron('*/60 * * * * *').seconds)).toEqual([0]);
  });

  it.each(['0 0 30 2 *', '0 0 31 4,6,9,11 *', '0 0 31 2,4 *', '0 0 30,31 FEB *'])(
    'rejects never-firing %s',
    (expr) => {
      expect(error(expr)).toMatch(/can never fire/);
    },
  );

  it('accepts rare but possible days (Feb 29, the 31st of a long month)', () => {
    expect(parseSchedule('0 0 29 2 *').ok).toBe(true);
    expect(parseSchedule('0 0 31 2,3 *').ok).toBe(true);
    // with both day fields restricted the weekday makes it fire
    expect(parseSchedule('0 0 30 2 1').ok).toBe(true);
  });

  it('never throws on non-string input', () => {
    expect(parseSchedule(42 as unknown as string)).toEqual({
      ok: false,
      error: 'schedule must be a string',
    });
  });
});

describe('parseSchedule agrees with cron-parser on field expansion', () => {
  it('for random 5- and 6-field expressions (names, ranges, steps, lists)', async () => {
    const fc = (await import('fast-check')).default;
    const { CronExpressionParser } = await import('cron-parser');
    const { cronExpression } = await import('../helpers/oracle.js');
    const norm = (v: readonly (number | string)[], sunday7 = false): number[] =>
      [...new Set(v.map((x) => (sunday7 && x === 7 ? 0 : Number(x))))].sort((a, b) => a - b);
    fc.assert(
      fc.property(fc.oneof(cronExpression(false), cronExpression(false, true)), (expr) => {
        const ours = parseSchedule(expr);
        let theirs;
        try {
          theirs = CronExpressionParser.parse(expr, { strict: false }).fields;
        } catch {
          return; // cron-parser rejects some forms we accept (e.g. never-firing checks differ)
        }
        if (!ours.ok) {
          // the only expressions we reject that cron-parser accepts are the never-firing ones
          expect(ours.error).toMatch(/can never fire/);
          return;
        }
        const s = ours.schedule as CronSpec;
        expect(set(s.seconds)).toEqual(norm(theirs.second.values));
        expect(set(s.minutes)).toEqual(norm(theirs.minute.values));
        expect(set(s.hours)).toEqual(norm(theirs.hour.values));
        // cron-parser drops days that no selected month has (e.g. 31 with April only)
        const longest = Math.max(
          ...set(s.months).map(
            (m) => [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m] as number,
          ),
        );
        expect(set(s.doms).filter((d) => d <= longest)).toEqual(
          norm(theirs.dayOfMonth.values.filter((d) => d !== 'L' && d <= longest)),
        );
        expect(set(s.months)).toEqual(norm(theirs.month.values));
        expect(set(s.dows)).toEqual(norm(theirs.dayOfWeek.values, true));
      }),
      { numRuns: 500 },
    );
  });
});
