import { describe, expect, it } from 'vitest';
import { parseSchedule, type Schedule } from '../../src/contract/schedule/index.js';
import { upcomingFires } from '../../src/contract/schedule/upcoming.js';

const parse = (s: string): Schedule => {
  const r = parseSchedule(s);
  if (!r.ok) throw new Error(r.error);
  return r.schedule;
};
const utc = (s: string): number => Date.parse(s);

describe('upcomingFires: the next fires with DST transitions marked', () => {
  it('marks spring forward in Europe/Berlin; the 02:30 fire moves to 03:00 (fixed-time rule)', () => {
    const fires = upcomingFires(
      [parse('30 2 * * *')],
      'Europe/Berlin',
      utc('2026-03-27T12:00:00Z'),
      4,
    );
    expect(fires.map((f) => f.local)).toEqual([
      '2026-03-28T02:30:00+01:00',
      '2026-03-29T03:00:00+02:00',
      '2026-03-30T02:30:00+02:00',
      '2026-03-31T02:30:00+02:00',
    ]);
    expect(fires[0]!.transition).toBeNull();
    expect(fires[1]!.transition).toEqual({
      at: utc('2026-03-29T01:00:00Z'),
      before: '+01:00',
      after: '+02:00',
      direction: 'forward',
    });
    expect(fires[2]!.transition).toBeNull();
  });

  it('marks fall back; a wildcard job fires in both passes of the repeated hour', () => {
    const fires = upcomingFires(
      [parse('30 * * * *')],
      'Europe/Berlin',
      utc('2026-10-25T00:00:00Z'),
      3,
    );
    expect(fires.map((f) => f.local)).toEqual([
      '2026-10-25T02:30:00+02:00',
      '2026-10-25T02:30:00+01:00',
      '2026-10-25T03:30:00+01:00',
    ]);
    expect(fires[1]!.transition).toMatchObject({
      before: '+02:00',
      after: '+01:00',
      direction: 'back',
    });
    expect(fires[1]!.transition!.at).toBe(utc('2026-10-25T01:00:00Z'));
  });

  it('merges schedules in time order; a shared instant appears once with both indexes', () => {
    const fires = upcomingFires(
      [parse('0 */12 * * *'), parse('0 6,12 * * *')],
      'UTC',
      utc('2026-01-01T00:00:00Z'),
      4,
    );
    expect(fires.map((f) => [new Date(f.at).toISOString(), f.scheduleIndexes])).toEqual([
      ['2026-01-01T06:00:00.000Z', [1]],
      ['2026-01-01T12:00:00.000Z', [0, 1]],
      ['2026-01-02T00:00:00.000Z', [0]],
      ['2026-01-02T06:00:00.000Z', [1]],
    ]);
    expect(fires.every((f) => f.transition === null)).toBe(true);
  });

  it('stops at count and handles @every', () => {
    const fires = upcomingFires([parse('@every 90m')], 'UTC', 0, 2);
    expect(fires.map((f) => f.at)).toEqual([5_400_000, 10_800_000]);
    expect(upcomingFires([parse('@every 90m')], 'UTC', 0, 0)).toEqual([]);
  });
});
