/**
 * The systemd `OnCalendar=` translation against the real `systemd-analyze calendar` (Debian's
 * `systemd` package; it works without systemd running). Every rendered expression is evaluated
 * by systemd from a base time, the iterations of all expressions of a schedule are merged, and
 * the first N instants must equal cronix's own `nextFires` from the same base time.
 */
import { describe, expect, it } from 'vitest';
import { parseSchedule, type CronSpec } from '../../src/contract/schedule/index.js';
import {
  compactValues,
  cronExpressions,
  toOnCalendar,
  weekdayPart,
} from '../../src/reconcile/backends/systemd-calendar.js';
import { mergedInstants, ours, run } from './systemd-analyze.js';

/** The reference instant of the DST check (the horizon runs 28 years from here). */
const NOW = Date.parse('2026-01-01T00:00:00Z');

function translate(schedule: string, tz: string): string[] {
  const parsed = parseSchedule(schedule);
  if (!parsed.ok) throw new Error(parsed.error);
  const r = toOnCalendar(parsed.schedule, tz, { now: NOW });
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.lines;
}

type Row = [schedule: string, tz: string, base: string, n?: number];
const QUIET = '2026-05-13T10:17:23Z'; // far from any DST transition of the zones below

/** At least 30 schedules, base times away from DST transitions. */
const TABLE: Row[] = [
  ['* * * * *', 'UTC', QUIET],
  ['*/15 * * * *', 'UTC', QUIET],
  ['5,35 */2 * * *', 'UTC', QUIET],
  ['10-20/5 3 * * *', 'UTC', QUIET],
  ['0 1-23/4 * * *', 'UTC', QUIET],
  ['0 9-17 * * 1-5', 'America/New_York', QUIET, 20],
  ['30 9 * * MON-FRI', 'Europe/Berlin', QUIET],
  ['0 0 1,15 * FRI', 'UTC', QUIET], // either rule: the 1st, the 15th and every Friday
  ['0 12 13 * 5', 'America/New_York', QUIET], // either rule: Friday or the 13th
  ['0 0 1 * 7', 'UTC', QUIET], // either rule, 7 = Sunday
  ['0 0 */2 * MON', 'UTC', QUIET], // day-of-month starts with *: Mondays on odd days
  ['0 0 * * */2', 'UTC', QUIET], // day-of-week starts with *: Sun, Tue, Thu, Sat
  ['0 6 1-7 * */3', 'Europe/Berlin', QUIET], // days 1-7 that are Sun, Wed or Sat
  ['0 22 * * SUN-SAT', 'UTC', QUIET], // a restricted day-of-week covering every day
  ['0 0 31 * *', 'UTC', QUIET],
  ['0 0 29 2 *', 'UTC', QUIET, 3], // leap days
  ['0 8 * JAN,APR,JUL,OCT *', 'Asia/Kolkata', QUIET],
  ['45 23 * * 6,0', 'UTC', QUIET],
  ['0 12 * * 0-2,4', 'America/New_York', QUIET],
  ['5 4 * jan-mar,dec sun,sat', 'UTC', QUIET],
  ['@hourly', 'UTC', QUIET],
  ['@daily', 'Asia/Kolkata', QUIET],
  ['@midnight', 'Europe/Berlin', QUIET],
  ['@weekly', 'America/New_York', QUIET],
  ['@monthly', 'UTC', QUIET],
  ['@yearly', 'Australia/Lord_Howe', QUIET, 4],
  ['@annually', 'UTC', QUIET, 4],
  ['@every 5m', 'Europe/Berlin', QUIET], // stated in UTC: epoch-anchored
  ['@every 2h', 'America/New_York', QUIET],
  ['@every 90m', 'Asia/Kolkata', QUIET],
  ['@every 8m', 'UTC', QUIET],
  ['@every 1m30s', 'UTC', QUIET],
  ['@every 24h', 'Australia/Lord_Howe', QUIET],
  ['*/20 * * * *', 'Asia/Kolkata', QUIET],
  ['7 */3 * * *', 'Asia/Kolkata', QUIET],
  ['*/15 8-17 * * *', 'Australia/Lord_Howe', QUIET, 40],
  ['0 9 * * *', 'Australia/Lord_Howe', QUIET],
  ['*/10 * * * *', 'America/New_York', QUIET], // minute-only: stated in UTC
  ['0 0 1 1,7 *', 'Europe/Berlin', QUIET],
];

/** Rows across DST transitions that the translation accepts: systemd agrees there too. */
const TRANSITIONS: Row[] = [
  // minute-only wildcard, stated in UTC: both passes of the repeated hour, nothing in the gap
  ['*/15 * * * *', 'America/New_York', '2026-11-01T04:50:00Z', 12],
  ['*/15 * * * *', 'America/New_York', '2026-03-08T06:20:00Z', 12],
  // fixed-time in a repeated hour: systemd and cronix both fire once, in the first pass
  ['30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', 3],
  ['45 1 * * *', 'Australia/Lord_Howe', '2026-04-03T12:00:00Z', 4], // 01:30–02:00 repeats
  // wildcard in a skipped hour: neither fires
  ['*/30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 4],
  // fixed times outside the transition hours
  ['0 9 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', 4],
  ['0 9 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', 4],
  ['*/15 8-17 * * *', 'Australia/Lord_Howe', '2026-10-03T12:00:00Z', 60],
];

describe('systemd-analyze agrees with cronix next', () => {
  it('has systemd-analyze (Debian package systemd; .ci/run installs it)', async () => {
    await expect(run('systemd-analyze', ['--version'])).resolves.toBeDefined();
  });

  it.each([...TABLE, ...TRANSITIONS])('%s in %s from %s', async (schedule, tz, base, n = 12) => {
    const baseMs = Date.parse(base);
    const lines = translate(schedule, tz);
    expect(await mergedInstants(lines, baseMs, n)).toEqual(ours(schedule, tz, baseMs, n));
  });

  it('the table covers at least 30 schedules', () => {
    expect(new Set(TABLE.map(([s, tz]) => `${s}|${tz}`)).size).toBeGreaterThanOrEqual(30);
  });
});

/**
 * What systemd does with a zone-suffixed expression across a transition where cronix's rules
 * differ (SPEC §3): the reason these schedules are refused. Each row states what systemd gives.
 */
describe('where systemd and cronix differ across DST (refused schedules)', () => {
  const raw = (schedule: string, tz: string): string[] => {
    const p = parseSchedule(schedule);
    if (!p.ok || p.schedule.kind !== 'cron') throw new Error('cron schedule expected');
    return cronExpressions(p.schedule, tz);
  };
  const refused = (schedule: string, tz: string): string => {
    const p = parseSchedule(schedule);
    if (!p.ok) throw new Error(p.error);
    const r = toOnCalendar(p.schedule, tz, { now: NOW });
    if (r.ok) throw new Error(`expected a refusal, got ${r.lines.join(' | ')}`);
    return r.reason;
  };

  it('spring forward, fixed time in the gap: systemd skips the day, cronix fires after the gap', async () => {
    const base = Date.parse('2026-03-07T12:00:00Z');
    expect(await mergedInstants(raw('30 2 * * *', 'America/New_York'), base, 2)).toEqual([
      '2026-03-09T06:30:00.000Z',
      '2026-03-10T06:30:00.000Z',
    ]);
    expect(ours('30 2 * * *', 'America/New_York', base, 2)).toEqual([
      '2026-03-08T07:00:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ]);
    expect(refused('30 2 * * *', 'America/New_York')).toMatch(/2026-03-08T02:30.*spring-forward/);
  });

  it('spring forward at midnight (America/Santiago): systemd skips the day', async () => {
    const base = Date.parse('2026-09-05T12:00:00Z');
    const sd = await mergedInstants(raw('0 0 * * *', 'America/Santiago'), base, 2);
    const cx = ours('0 0 * * *', 'America/Santiago', base, 2);
    expect(cx[0]).toBe('2026-09-06T04:00:00.000Z'); // 01:00-03:00, right after the gap
    expect(sd[0]).toBe('2026-09-07T03:00:00.000Z'); // the next midnight
    expect(refused('0 0 * * *', 'America/Santiago')).toMatch(/spring-forward/);
  });

  it('fall back, wildcard: systemd fires in the first pass only, cronix in both', async () => {
    const base = Date.parse('2026-10-24T22:30:00Z');
    // 00:30+02:00 on the day Berlin falls back (03:00+02:00 → 02:00+01:00)
    expect(await mergedInstants(raw('0 */2 * * *', 'Europe/Berlin'), base, 3)).toEqual([
      '2026-10-25T00:00:00.000Z', // 02:00+02:00, first pass
      '2026-10-25T03:00:00.000Z', // 04:00+01:00: the second pass (01:00Z) is skipped
      '2026-10-25T05:00:00.000Z',
    ]);
    expect(ours('0 */2 * * *', 'Europe/Berlin', base, 3)).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z', // 02:00+01:00, second pass
      '2026-10-25T03:00:00.000Z',
    ]);
    expect(refused('0 */2 * * *', 'Europe/Berlin')).toMatch(/2026-10-25T02:00.*fall-back/);
  });

  it('fall back with a 30-minute shift (Australia/Lord_Howe): systemd skips the second pass', async () => {
    const base = Date.parse('2026-04-04T14:00:00Z');
    const sd = await mergedInstants(raw('*/20 * * * *', 'Australia/Lord_Howe'), base, 6);
    const cx = ours('*/20 * * * *', 'Australia/Lord_Howe', base, 6);
    expect(cx).toContain('2026-04-04T15:10:00.000Z'); // 01:40+10:30, second pass
    expect(sd).not.toContain('2026-04-04T15:10:00.000Z');
    expect(refused('*/20 * * * *', 'Australia/Lord_Howe')).toMatch(/fall-back/);
  });

  it('a zone-suffixed minute-only schedule would lose the repeated hour; the UTC form does not', async () => {
    const base = Date.parse('2026-11-01T04:50:00Z');
    const sd = await mergedInstants(raw('*/15 * * * *', 'America/New_York'), base, 8);
    expect(sd).not.toContain('2026-11-01T06:15:00.000Z'); // 01:15-05:00, the second pass
    expect(ours('*/15 * * * *', 'America/New_York', base, 8)).toContain('2026-11-01T06:15:00.000Z');
    expect(translate('*/15 * * * *', 'America/New_York')).toEqual(['*-*-* *:00/15:00 UTC']);
  });
});

describe('expression shapes', () => {
  const cron = (s: string): CronSpec => {
    const p = parseSchedule(s);
    if (!p.ok || p.schedule.kind !== 'cron') throw new Error('cron schedule expected');
    return p.schedule;
  };

  it.each([
    ['*/15 * * * *', 'UTC', ['*-*-* *:00/15:00 UTC']],
    ['0 9 * * 1-5', 'Europe/Berlin', ['Mon..Fri *-*-* 09:00:00 Europe/Berlin']],
    ['0 0 1,15 * FRI', 'UTC', ['Fri *-*-* 00:00:00 UTC', '*-*-01,15 00:00:00 UTC']],
    ['0 0 */2 * MON', 'UTC', ['Mon *-*-01/2 00:00:00 UTC']],
    ['0 0 * * 7', 'UTC', ['Sun *-*-* 00:00:00 UTC']],
    ['0 12 * * 0-2,4', 'UTC', ['Mon,Tue,Thu,Sun *-*-* 12:00:00 UTC']],
    ['0 0 1-31 * 1', 'UTC', ['*-*-* 00:00:00 UTC']], // either rule with every day of month
    ['0 9-17/2 * 1-3,12 *', 'UTC', ['*-01..03,12-* 09..17/2:00:00 UTC']],
    ['@every 90m', 'Asia/Kolkata', ['*-*-* 00/3:00:00 UTC', '*-*-* 01/3:30:00 UTC']],
    ['@every 1m30s', 'UTC', ['*-*-* *:00/3:00 UTC', '*-*-* *:01/3:30 UTC']],
  ])('%s in %s → %j', (schedule, tz, lines) => {
    expect(translate(schedule, tz)).toEqual(lines);
  });

  it('compacts value sets', () => {
    expect(compactValues([0, 15, 30, 45], 0, 59)).toBe('00/15');
    expect(compactValues([9, 11, 13], 0, 23)).toBe('09..13/2');
    expect(compactValues([1, 2], 1, 31)).toBe('01,02');
    expect(compactValues([1, 2, 3, 7, 9, 10], 1, 31)).toBe('01..03,07,09,10');
    expect(compactValues([5], 0, 59)).toBe('05');
    expect(() => compactValues([], 0, 59)).toThrow(RangeError);
  });

  it('orders weekdays Monday first, never wrapping a range past Sunday', () => {
    expect(weekdayPart(cron('0 0 * * 5-6,0').dows)).toBe('Fri..Sun');
    expect(weekdayPart(cron('0 0 * * 0,1,2,3').dows)).toBe('Mon..Wed,Sun');
    expect(weekdayPart(cron('0 0 * * *').dows)).toBe('');
  });

  it('refuses @every intervals that do not divide the day, naming the reason', () => {
    const p = parseSchedule('@every 7m');
    if (!p.ok) throw new Error(p.error);
    const r = toOnCalendar(p.schedule, 'UTC', { now: NOW });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/divides 24 h/);
    const odd = parseSchedule('@every 1m4s');
    if (!odd.ok) throw new Error(odd.error);
    expect(toOnCalendar(odd.schedule, 'UTC', { now: NOW })).toMatchObject({ ok: false });
  });
});
