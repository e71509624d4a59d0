/**
 * The seconds extension of SPEC §3 by example: 6-field expressions (`sec min hour dom month
 * dow`) and `@every` below a minute, in UTC and across the DST transitions of 2026.
 */
import { describe, expect, it } from 'vitest';
import {
  fireServedAt,
  nextFire,
  nextFires,
  parseSchedule,
  previousFire,
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

describe('6-field schedules in UTC', () => {
  it('fires at the matching seconds, strictly after the reference instant', () => {
    expect(utc('*/15 * * * * *', '2026-01-01T00:00:07Z', 4)).toEqual([
      '2026-01-01T00:00:15Z',
      '2026-01-01T00:00:30Z',
      '2026-01-01T00:00:45Z',
      '2026-01-01T00:01:00Z',
    ]);
    expect(utc('*/15 * * * * *', '2026-01-01T00:00:15Z', 1)).toEqual(['2026-01-01T00:00:30Z']);
    expect(utc('*/15 * * * * *', '2026-01-01T00:00:14.999Z', 1)).toEqual(['2026-01-01T00:00:15Z']);
    expect(utc('* * * * * *', '2026-01-01T00:00:59.5Z', 2)).toEqual([
      '2026-01-01T00:01:00Z',
      '2026-01-01T00:01:01Z',
    ]);
  });

  it('skips to the next matching minute when no matching second is left in this one', () => {
    expect(utc('10,20 5 * * * *', '2026-01-01T00:05:20Z', 2)).toEqual([
      '2026-01-01T01:05:10Z',
      '2026-01-01T01:05:20Z',
    ]);
    expect(utc('10,20 5 * * * *', '2026-01-01T00:04:30Z', 1)).toEqual(['2026-01-01T00:05:10Z']);
  });

  it('rolls seconds over into minutes, hours, days, months and years', () => {
    expect(utc('30 59 23 31 12 *', '2026-06-01T00:00:00Z', 2)).toEqual([
      '2026-12-31T23:59:30Z',
      '2027-12-31T23:59:30Z',
    ]);
    expect(utc('59 59 23 * * *', '2026-02-28T23:59:59Z', 1)).toEqual(['2026-03-01T23:59:59Z']);
    expect(utc('45 0 0 29 2 *', '2096-03-01T00:00:00Z', 1)).toEqual(['2104-02-29T00:00:45Z']);
  });

  it('applies the day rule of the 5-field form (either rule when both are restricted)', () => {
    expect(utc('30 0 0 1,15 * FRI', '2026-10-31T12:00:00Z', 3)).toEqual([
      '2026-11-01T00:00:30Z',
      '2026-11-06T00:00:30Z',
      '2026-11-13T00:00:30Z',
    ]);
  });

  it('a seconds field of 0 gives the fires of the 5-field form', () => {
    const from = '2026-03-01T10:17:23Z';
    expect(utc('0 */7 9-17 * * MON-FRI', from, 20)).toEqual(utc('*/7 9-17 * * MON-FRI', from, 20));
  });

  it('previousFire returns the latest fire at or before the instant, to the second', () => {
    const s = parsed('*/10 * * * * *');
    expect(previousFire(s, 'UTC', Date.parse('2026-01-01T00:00:10Z'))).toBe(
      Date.parse('2026-01-01T00:00:10Z'),
    );
    expect(previousFire(s, 'UTC', Date.parse('2026-01-01T00:00:09.999Z'))).toBe(
      Date.parse('2026-01-01T00:00:00Z'),
    );
    // far back: the search widens until it finds one
    expect(previousFire(parsed('5 0 0 1 1 *'), 'UTC', Date.parse('2026-06-01T00:00:00Z'))).toBe(
      Date.parse('2026-01-01T00:00:05Z'),
    );
  });
});

describe('@every below a minute', () => {
  it('is anchored to the Unix epoch, in any zone', () => {
    expect(utc('@every 5s', '2026-01-01T00:00:03.2Z', 3)).toEqual([
      '2026-01-01T00:00:05Z',
      '2026-01-01T00:00:10Z',
      '2026-01-01T00:00:15Z',
    ]);
    // 1767225600 s is a multiple of 7 (= 252460800 × 7): fires at 7 s, 14 s, …
    expect(utc('@every 7s', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2026-01-01T00:00:07Z',
      '2026-01-01T00:00:14Z',
    ]);
    const zoned = nextFires('@every 1s', {
      timezone: 'Europe/Berlin',
      from: Date.parse('2026-10-25T00:59:59Z'),
      count: 2,
    });
    expect(zoned.map(iso)).toEqual(['2026-10-25T01:00:00Z', '2026-10-25T01:00:01Z']);
  });

  it('previousFire is the last multiple of the interval at or before the instant', () => {
    expect(previousFire(parsed('@every 5s'), 'UTC', Date.parse('2026-01-01T00:00:04.999Z'))).toBe(
      Date.parse('2026-01-01T00:00:00Z'),
    );
    expect(previousFire(parsed('@every 1s'), 'UTC', Date.parse('2026-01-01T00:00:04.5Z'))).toBe(
      Date.parse('2026-01-01T00:00:04Z'),
    );
  });
});

describe('6-field schedules across DST (the rule of SPEC §3 is unchanged)', () => {
  const ny = 'America/New_York'; // 02:00 → 03:00 on 2026-03-08; 02:00 → 01:00 on 2026-11-01

  it('spring forward: a fixed-time job with several seconds in the gap fires once, after it', () => {
    expect(localFires('*/20 30 2 * * *', ny, '2026-03-07T12:00:00Z', 4)).toEqual([
      '2026-03-08T03:00:00-04:00',
      '2026-03-09T02:30:00-04:00',
      '2026-03-09T02:30:20-04:00',
      '2026-03-09T02:30:40-04:00',
    ]);
  });

  it('spring forward: a wildcard job has no fires in the gap', () => {
    expect(localFires('30 */30 * * * *', ny, '2026-03-08T06:20:00Z', 3)).toEqual([
      '2026-03-08T01:30:30-05:00',
      '2026-03-08T03:00:30-04:00',
      '2026-03-08T03:30:30-04:00',
    ]);
  });

  it('fall back: a fixed-time job fires in the first pass only, every matching second of it', () => {
    expect(localFires('0,30 30 1 * * *', ny, '2026-10-31T12:00:00Z', 3)).toEqual([
      '2026-11-01T01:30:00-04:00',
      '2026-11-01T01:30:30-04:00',
      '2026-11-02T01:30:00-05:00',
    ]);
  });

  it('fall back: a wildcard job fires in both passes', () => {
    expect(localFires('15 45 * * * *', ny, '2026-11-01T05:00:00Z', 3)).toEqual([
      '2026-11-01T01:45:15-04:00',
      '2026-11-01T01:45:15-05:00',
      '2026-11-01T02:45:15-05:00',
    ]);
  });

  it('a 30-minute shift (Australia/Lord_Howe) and a midnight gap (America/Santiago)', () => {
    // Lord Howe falls back 02:00 → 01:30 on 2026-04-05: a wildcard job repeats 01:30–02:00
    expect(localFires('10 */20 * * * *', 'Australia/Lord_Howe', '2026-04-04T14:30:00Z', 3)).toEqual(
      ['2026-04-05T01:40:10+11:00', '2026-04-05T01:40:10+10:30', '2026-04-05T02:00:10+10:30'],
    );
    // Santiago skips 00:00–01:00 on 2026-09-06: a fixed-time job at 00:00:30 fires at 01:00
    expect(localFires('30 0 0 * * *', 'America/Santiago', '2026-09-05T12:00:00Z', 2)).toEqual([
      '2026-09-06T01:00:00-03:00',
      '2026-09-07T00:00:30-03:00',
    ]);
  });

  it('nextFire returns whole seconds in epoch milliseconds', () => {
    expect(
      nextFire(parsed('*/7 * * * * *'), 'Asia/Kathmandu', Date.parse('2026-01-01T00:00:00Z')),
    ).toBe(Date.parse('2026-01-01T00:00:07Z'));
  });
});

describe('fireServedAt: the fire a host-scheduler start serves (SPEC §5.4, +1 s tolerance)', () => {
  const T = Date.parse('2026-01-01T00:10:00Z');
  it.each([
    // minute schedules: the latest fire ≤ start + 1 s, as before
    ['* * * * *', -200, 0],
    ['* * * * *', -1000, 0],
    ['* * * * *', -1001, -60_000],
    ['* * * * *', 500, 0],
    ['* * * * *', 58_500, 0],
    ['* * * * *', 59_500, 60_000],
    // fires 10 s apart: an early start within the second still serves the coming fire
    ['*/10 * * * * *', -300, 0],
    ['*/10 * * * * *', 1500, 0],
    ['*/10 * * * * *', 9200, 10_000],
    // fires every second: a start up to 1 s late serves the fire before it, not the next one
    ['* * * * * *', 130, 0],
    ['* * * * * *', 999, 0],
    ['* * * * * *', 1000, 1000],
    ['@every 1s', 700, 0],
    // fires 1 s apart twice a minute: a late start serves the first, an early start the first
    ['0,1 * * * * *', 400, 0],
    ['0,1 * * * * *', 1400, 1000],
    ['0,1 * * * * *', -400, 0],
  ] as const)('%s started at T + %i ms serves T + %i ms', (schedule, start, fire) => {
    expect(fireServedAt(parsed(schedule), 'UTC', T + start)).toBe(T + fire);
  });
});
