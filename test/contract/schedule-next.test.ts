import { describe, expect, it } from 'vitest';
import {
  nextFire,
  nextFires,
  parseSchedule,
  previousFire,
  ScheduleError,
  type Schedule,
} from '../../src/contract/schedule/index.js';
import { localFires } from '../helpers/fires.js';

const iso = (d: Date): string => d.toISOString().replace('.000Z', 'Z');
const utc = (expr: string, from: string, count: number): string[] =>
  nextFires(expr, { from: Date.parse(from), count }).map(iso);

function parsed(expr: string): Schedule {
  const r = parseSchedule(expr);
  if (!r.ok) throw new Error(r.error);
  return r.schedule;
}

describe('next fires in UTC', () => {
  it('is strictly after the reference instant', () => {
    expect(utc('*/15 * * * *', '2026-01-01T00:15:00Z', 2)).toEqual([
      '2026-01-01T00:30:00Z',
      '2026-01-01T00:45:00Z',
    ]);
    expect(utc('*/15 * * * *', '2026-01-01T00:14:59.999Z', 1)).toEqual(['2026-01-01T00:15:00Z']);
  });

  it('rolls minutes, hours, days, months and years over', () => {
    expect(utc('59 23 31 12 *', '2026-06-01T00:00:00Z', 2)).toEqual([
      '2026-12-31T23:59:00Z',
      '2027-12-31T23:59:00Z',
    ]);
    expect(utc('0 0 1 * *', '2026-01-31T12:00:00Z', 2)).toEqual([
      '2026-02-01T00:00:00Z',
      '2026-03-01T00:00:00Z',
    ]);
    expect(utc('30 */6 * * *', '2026-01-01T18:31:00Z', 2)).toEqual([
      '2026-01-02T00:30:00Z',
      '2026-01-02T06:30:00Z',
    ]);
  });

  it('applies the either rule when both day fields are restricted', () => {
    // 2026-11: the 1st and 15th, or any Friday (6, 13, 20, 27)
    expect(utc('0 0 1,15 * FRI', '2026-10-31T12:00:00Z', 6)).toEqual([
      '2026-11-01T00:00:00Z',
      '2026-11-06T00:00:00Z',
      '2026-11-13T00:00:00Z',
      '2026-11-15T00:00:00Z',
      '2026-11-20T00:00:00Z',
      '2026-11-27T00:00:00Z',
    ]);
  });

  it('uses only the restricted day field when the other is *', () => {
    expect(utc('0 0 13 * *', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2026-01-13T00:00:00Z',
      '2026-02-13T00:00:00Z',
    ]);
    expect(utc('0 0 * * 5', '2026-11-01T00:00:00Z', 2)).toEqual([
      '2026-11-06T00:00:00Z',
      '2026-11-13T00:00:00Z',
    ]);
  });

  it('treats a day field starting with * as a wildcard field (classic cron: both must match)', () => {
    // */2 in day-of-month makes it a "star" field: odd days that are also Mondays
    expect(utc('0 0 */2 * 1', '2026-11-01T00:00:00Z', 3)).toEqual([
      '2026-11-09T00:00:00Z',
      '2026-11-23T00:00:00Z',
      '2026-12-07T00:00:00Z',
    ]);
  });

  it('treats 7 and SUN as Sunday and honours weekday names', () => {
    const sunday = utc('0 12 * * 7', '2026-11-21T00:00:00Z', 1);
    expect(sunday).toEqual(['2026-11-22T12:00:00Z']);
    expect(utc('0 12 * * SUN', '2026-11-21T00:00:00Z', 1)).toEqual(sunday);
    expect(utc('0 9 * * MON-FRI', '2026-11-20T10:00:00Z', 2)).toEqual([
      '2026-11-23T09:00:00Z',
      '2026-11-24T09:00:00Z',
    ]);
  });

  it('finds Feb 29 across the skipped leap year 2100', () => {
    expect(utc('0 0 29 2 *', '2096-03-01T00:00:00Z', 1)).toEqual(['2104-02-29T00:00:00Z']);
  });

  it('finds a date restricted to one weekday up to 40 years ahead (Feb 29 on a Sunday)', () => {
    // day-of-week starts with *: Feb 29 AND Sunday — 2060, 2088, then 2128 across 2100
    expect(utc('0 0 29 2 */7', '2033-01-01T00:00:00Z', 3)).toEqual([
      '2060-02-29T00:00:00Z',
      '2088-02-29T00:00:00Z',
      '2128-02-29T00:00:00Z',
    ]);
    expect(previousFire(parsed('0 0 29 2 */7'), 'UTC', Date.parse('2127-12-31T00:00:00Z'))).toBe(
      Date.parse('2088-02-29T00:00:00Z'),
    );
    expect(utc('15 0 0 29 2 */7', '2089-01-01T00:00:00Z', 1)).toEqual(['2128-02-29T00:00:15Z']);
    // a zone without transitions is searched a year at a time all the same
    expect(localFires('0 0 29 2 */7', 'Asia/Kolkata', '2033-01-01T00:00:00Z', 1)).toEqual([
      '2060-02-29T00:00:00+05:30',
    ]);
    expect(localFires('0 0 29 2 */7', 'Europe/Berlin', '2089-01-01T00:00:00Z', 1)).toEqual([
      '2128-02-29T00:00:00+01:00',
    ]);
  });

  it('anchors @every to the Unix epoch, independent of the zone', () => {
    // 2026-01-01T00:00:00Z is 1767225600 s = 420 × 4207680, a multiple of 7 minutes
    expect(utc('@every 7m', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2026-01-01T00:07:00Z',
      '2026-01-01T00:14:00Z',
    ]);
    // 1767225600 mod 660 = 360, so the next 11-minute multiple is 300 s later
    expect(utc('@every 11m', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-01T00:05:00Z']);
    const berlin = nextFires('@every 90m', {
      timezone: 'Europe/Berlin',
      from: Date.parse('2026-03-29T00:10:00Z'),
      count: 3,
    });
    expect(berlin.map(iso)).toEqual([
      '2026-03-29T01:30:00Z',
      '2026-03-29T03:00:00Z',
      '2026-03-29T04:30:00Z',
    ]);
  });

  it('shortcuts fire at their classic times', () => {
    expect(utc('@weekly', '2026-11-21T00:00:00Z', 1)).toEqual(['2026-11-22T00:00:00Z']);
    expect(utc('@yearly', '2026-11-21T00:00:00Z', 1)).toEqual(['2027-01-01T00:00:00Z']);
    expect(utc('@hourly', '2026-11-21T00:00:00Z', 1)).toEqual(['2026-11-21T01:00:00Z']);
  });

  it('previousFire returns the latest fire at or before the instant', () => {
    const s = parsed('*/10 * * * *');
    expect(previousFire(s, 'UTC', Date.parse('2026-01-01T00:25:00Z'))).toBe(
      Date.parse('2026-01-01T00:20:00Z'),
    );
    expect(previousFire(s, 'UTC', Date.parse('2026-01-01T00:20:00Z'))).toBe(
      Date.parse('2026-01-01T00:20:00Z'),
    );
    expect(previousFire(parsed('0 0 29 2 *'), 'UTC', Date.parse('2103-01-01T00:00:00Z'))).toBe(
      Date.parse('2096-02-29T00:00:00Z'),
    );
    expect(previousFire(parsed('@every 1h'), 'UTC', Date.parse('2026-01-01T05:59:59Z'))).toBe(
      Date.parse('2026-01-01T05:00:00Z'),
    );
    // the gap fire of a fixed-time job is found backwards too
    expect(
      previousFire(parsed('30 2 * * *'), 'America/New_York', Date.parse('2026-03-08T07:30:00Z')),
    ).toBe(Date.parse('2026-03-08T07:00:00Z'));
  });

  it('nextFire returns epoch milliseconds', () => {
    expect(nextFire(parsed('0 * * * *'), 'UTC', Date.parse('2026-01-01T00:00:00Z'))).toBe(
      Date.parse('2026-01-01T01:00:00Z'),
    );
  });

  it('throws ScheduleError naming the field for bad input', () => {
    expect(() => nextFires('61 * * * *', { from: 0 })).toThrow(ScheduleError);
    try {
      nextFires('* * * * *', { from: 0, timezone: 'Mars/Olympus' });
    } catch (err) {
      expect(err).toBeInstanceOf(ScheduleError);
      expect((err as ScheduleError).field).toBe('timezone');
      expect((err as Error).message).toMatch(/unknown time zone "Mars\/Olympus"/);
    }
  });

  it('computes local times with the zone offset', () => {
    expect(localFires('0 9 * * *', 'Asia/Kolkata', '2026-01-01T00:00:00Z', 1)).toEqual([
      '2026-01-01T09:00:00+05:30',
    ]);
    expect(localFires('0 9 * * *', 'Asia/Kathmandu', '2026-01-01T00:00:00Z', 1)).toEqual([
      '2026-01-01T09:00:00+05:45',
    ]);
  });
});
