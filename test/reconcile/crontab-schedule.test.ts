/**
 * Translation of cronix schedules into Debian cron's dialect: a table of schedules with the
 * exact fields written, each checked to fire at the same instants as the original (through
 * cronix's own engine, which implements Vixie cron's rules), and the refusals.
 */
import { describe, expect, it } from 'vitest';
import { nextFires } from '../../src/contract/schedule/index.js';
import {
  canonicalZone,
  translateSchedule,
  zoneOffsetsMinutes,
} from '../../src/reconcile/backends/crontab-schedule.js';

const NOW = Date.parse('2026-01-15T00:00:00Z');

const TABLE: [string, string[]][] = [
  ['* * * * *', ['* * * * *']],
  ['*/10 * * * *', ['*/10 * * * *']],
  ['0 * * * *', ['0 * * * *']],
  ['30 2 * * *', ['30 2 * * *']],
  ['0 9 * * MON-FRI', ['0 9 * * 1-5']],
  ['0 9 * * mon,wed,fri', ['0 9 * * 1,3,5']],
  ['0 0 1 JAN,JUL *', ['0 0 1 1,7 *']],
  ['0 0 * * 7', ['0 0 * * 0']],
  ['0 0 * * 5-7', ['0 0 * * 0,5,6']],
  ['0 0 1,15 * FRI', ['0 0 1,15 * 5']],
  ['0 0 */2 * MON', ['0 0 */2 * 1']],
  ['5/15 * * * *', ['5,20,35,50 * * * *']],
  ['0 8-18/2 * * *', ['0 8,10,12,14,16,18 * * *']],
  ['15 3 * */3 *', ['15 3 * 1,4,7,10 *']],
  ['0 12 * * *', ['0 12 * * *']],
  ['*/15 9-17 * * 1-5', ['*/15 9-17 * * 1-5']],
  ['0 0 29 2 *', ['0 0 29 2 *']],
  ['@hourly', ['0 * * * *']],
  ['@daily', ['0 0 * * *']],
  ['@midnight', ['0 0 * * *']],
  ['@weekly', ['0 0 * * 0']],
  ['@monthly', ['0 0 1 * *']],
  ['@yearly', ['0 0 1 1 *']],
  ['@every 1m', ['* * * * *']],
  ['@every 5m', ['*/5 * * * *']],
  ['@every 1h', ['0 * * * *']],
  ['@every 6h', ['0 */6 * * *']],
  ['@every 24h', ['0 0 * * *']],
  ['@every 1h30m', ['0 0,3,6,9,12,15,18,21 * * *', '30 1,4,7,10,13,16,19,22 * * *']],
  [
    '@every 45m',
    [
      '0 0,3,6,9,12,15,18,21 * * *',
      '15 2,5,8,11,14,17,20,23 * * *',
      '30 1,4,7,10,13,16,19,22 * * *',
      '45 0,3,6,9,12,15,18,21 * * *',
    ],
  ],
];

/** The fires of several cron lines merged: what cron does with one block of lines. */
function merged(lines: string[], count: number): number[] {
  const all = lines.flatMap((l) =>
    nextFires(l, { timezone: 'UTC', from: NOW, count }).map((d) => d.getTime()),
  );
  return [...new Set(all)].sort((a, b) => a - b).slice(0, count);
}

describe('cron dialect translation', () => {
  it.each(TABLE)('%s → %j, firing at the same instants', (schedule, fields) => {
    const t = translateSchedule(schedule, 'UTC', 'UTC', NOW);
    expect(t).toEqual({ ok: true, fields });
    const original = nextFires(schedule, { timezone: 'UTC', from: NOW, count: 200 }).map((d) =>
      d.getTime(),
    );
    expect(merged(fields, 200)).toEqual(original);
  });

  it('keeps a leading * in the day fields (the either-rule) and in minute/hour (DST handling)', () => {
    expect(translateSchedule('0 0 */2 * MON', 'UTC', 'UTC', NOW)).toEqual({
      ok: true,
      fields: ['0 0 */2 * 1'],
    });
    expect(translateSchedule('0 */1 * * *', 'UTC', 'UTC', NOW)).toEqual({
      ok: true,
      fields: ['0 * * * *'],
    });
    expect(translateSchedule('0-59 0-23 * * *', 'UTC', 'UTC', NOW)).toEqual({
      ok: true,
      fields: ['0-59 0-23 * * *'],
    });
  });

  it('refuses a starred field that no * or */n can state', () => {
    const t = translateSchedule('*/20,5 * * * *', 'UTC', 'UTC', NOW);
    expect(t.ok).toBe(false);
    expect(!t.ok && t.reason).toMatch(/explicit list/);
  });

  it('accepts the host zone under any spelling and refuses others', () => {
    expect(canonicalZone('Etc/UTC')).toBe('UTC');
    expect(translateSchedule('0 9 * * *', 'Etc/UTC', 'UTC', NOW).ok).toBe(true);
    expect(translateSchedule('0 9 * * *', 'America/New_York', 'America/New_York', NOW).ok).toBe(
      true,
    );
    const t = translateSchedule('0 9 * * *', 'America/New_York', 'Europe/London', NOW);
    expect(!t.ok && t.reason).toMatch(/ignores CRON_TZ.*--backend systemd.*cronix serve/);
  });

  it.each([
    ['*/10 * * * * *', /seconds field.*starts jobs at second 0.*cronix serve.*--backend systemd/],
    ['@every 5s', /"@every 5s" fires every 5 s.*cronix serve.*whole minutes/],
    ['0 0 9 * * *', /drop the seconds field: "0 9 \* \* \*" fires at the same instants/],
  ])('refuses the seconds schedule %s (cron has minute resolution)', (schedule, pattern) => {
    const t = translateSchedule(schedule, 'UTC', 'UTC', NOW);
    expect(t.ok).toBe(false);
    expect(!t.ok && t.reason).toMatch(pattern);
  });

  it('checks @every against every offset of the host zone', () => {
    expect(zoneOffsetsMinutes('Europe/Berlin', NOW)).toEqual([60, 120]);
    expect(zoneOffsetsMinutes('Asia/Kathmandu', NOW)).toEqual([345]);
    expect(translateSchedule('@every 15m', 'UTC', 'Asia/Kathmandu', NOW).ok).toBe(true);
    expect(translateSchedule('@every 30m', 'UTC', 'Asia/Kathmandu', NOW).ok).toBe(false);
    expect(translateSchedule('@every 30m', 'UTC', 'Australia/Lord_Howe', NOW).ok).toBe(true);
    expect(translateSchedule('@every 1h', 'UTC', 'Australia/Lord_Howe', NOW).ok).toBe(false);
  });
});
