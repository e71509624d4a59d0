/**
 * The EventBridge Scheduler dialect (pure): a translation table with exact expected strings,
 * the refusals with their reasons, rate() anchoring, and a cross-check of every accepted
 * translation against the AWS grammar the fake endpoint enforces.
 */
import { describe, expect, it } from 'vitest';
import { nextFire, nextFires } from '../../src/contract/schedule/index.js';
import { rateStartDate, toAwsSchedule } from '../../src/reconcile/backends/aws-cron.js';
import { findDstConflict, utcMinuteShift } from '../../src/reconcile/backends/aws-dst.js';
import { parseSchedule, type CronSpec } from '../../src/contract/schedule/index.js';
import { awsCronFires, awsRateFires } from '../helpers/fake-aws-cron.js';
import { awsExpressionProblem } from '../helpers/fake-aws-scheduler.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

/** cronix's fires of `schedule` in `zone` within [from, to). */
function firesBetween(schedule: string, zone: string, from: number, to: number): number[] {
  const p = parseSchedule(schedule);
  if (!p.ok) throw new Error(p.error);
  const out: number[] = [];
  for (let t = nextFire(p.schedule, zone, from - 1); t !== null && t < to;) {
    out.push(t);
    t = nextFire(p.schedule, zone, t);
  }
  return out;
}

/** [schedule, zone, expected expression, expected ScheduleExpressionTimezone] */
const TABLE: readonly (readonly [string, string, string, string])[] = [
  // steps, ranges, lists
  ['*/15 * * * *', 'UTC', 'cron(0/15 * * * ? *)', 'UTC'],
  ['5/20 * * * *', 'UTC', 'cron(5/20 * * * ? *)', 'UTC'],
  ['0-30/10 * * * *', 'UTC', 'cron(0,10,20,30 * * * ? *)', 'UTC'],
  ['0 */6 * * *', 'UTC', 'cron(0 0/6 * * ? *)', 'UTC'],
  ['0 8-17 * * *', 'UTC', 'cron(0 8-17 * * ? *)', 'UTC'],
  ['15,45 9,18 * * *', 'UTC', 'cron(15,45 9,18 * * ? *)', 'UTC'],
  // day-of-week renumbering (1 = Sunday) and `?` in day-of-month
  ['0 9 * * MON-FRI', 'UTC', 'cron(0 9 ? * 2-6 *)', 'UTC'],
  ['0 9 * * 1-5', 'UTC', 'cron(0 9 ? * 2-6 *)', 'UTC'],
  ['0 0 * * 0', 'UTC', 'cron(0 0 ? * 1 *)', 'UTC'],
  ['0 0 * * 7', 'UTC', 'cron(0 0 ? * 1 *)', 'UTC'],
  ['0 0 * * SUN', 'UTC', 'cron(0 0 ? * 1 *)', 'UTC'],
  ['0 0 * * SAT', 'UTC', 'cron(0 0 ? * 7 *)', 'UTC'],
  ['0 0 * * SAT,SUN', 'UTC', 'cron(0 0 ? * 1,7 *)', 'UTC'],
  ['0 0 * * 5-7', 'UTC', 'cron(0 0 ? * 1,6-7 *)', 'UTC'],
  ['0 0 * * mon,wed,fri', 'UTC', 'cron(0 0 ? * 2,4,6 *)', 'UTC'],
  ['0 0 * * */2', 'UTC', 'cron(0 0 ? * 1,3,5,7 *)', 'UTC'], // no `/` in AWS day-of-week
  // `?` in day-of-week
  ['0 0 1,15 * *', 'UTC', 'cron(0 0 1,15 * ? *)', 'UTC'],
  ['0 0 */2 * *', 'UTC', 'cron(0 0 1/2 * ? *)', 'UTC'],
  ['0 0 31 * *', 'UTC', 'cron(0 0 31 * ? *)', 'UTC'],
  ['0 0 1 */3 *', 'UTC', 'cron(0 0 1 1/3 ? *)', 'UTC'],
  ['0 12 1 JAN,JUL *', 'UTC', 'cron(0 12 1 1,7 ? *)', 'UTC'],
  // both day fields restricted, but one matches every day: the either-rule gives every day
  ['0 0 1-31 * MON', 'UTC', 'cron(0 0 * * ? *)', 'UTC'],
  ['0 0 1 * 0-7', 'UTC', 'cron(0 0 * * ? *)', 'UTC'],
  // shortcuts
  ['@hourly', 'UTC', 'cron(0 * * * ? *)', 'UTC'],
  ['@daily', 'UTC', 'cron(0 0 * * ? *)', 'UTC'],
  ['@midnight', 'UTC', 'cron(0 0 * * ? *)', 'UTC'],
  ['@weekly', 'UTC', 'cron(0 0 ? * 1 *)', 'UTC'],
  ['@monthly', 'UTC', 'cron(0 0 1 * ? *)', 'UTC'],
  ['@yearly', 'UTC', 'cron(0 0 1 1 ? *)', 'UTC'],
  ['@annually', 'UTC', 'cron(0 0 1 1 ? *)', 'UTC'],
  // @every → rate(), singular for 1, largest exact unit
  ['@every 1m', 'UTC', 'rate(1 minute)', 'UTC'],
  ['@every 5m', 'UTC', 'rate(5 minutes)', 'UTC'],
  ['@every 60s', 'UTC', 'rate(1 minute)', 'UTC'],
  ['@every 1h30m', 'UTC', 'rate(90 minutes)', 'UTC'],
  ['@every 1h', 'UTC', 'rate(1 hour)', 'UTC'],
  ['@every 12h', 'UTC', 'rate(12 hours)', 'UTC'],
  ['@every 24h', 'UTC', 'rate(1 day)', 'UTC'],
  ['@every 168h', 'UTC', 'rate(7 days)', 'UTC'],
  ['@every 10m', 'Europe/Berlin', 'rate(10 minutes)', 'UTC'], // epoch-anchored: zone-free
  // time zones: times clear of every DST change keep the zone
  ['0 9 * * *', 'Europe/Berlin', 'cron(0 9 * * ? *)', 'Europe/Berlin'],
  ['30 1 * * *', 'Europe/Berlin', 'cron(30 1 * * ? *)', 'Europe/Berlin'], // fall-back pass 1 = once
  ['0 2 * * 1-5', 'Europe/Berlin', 'cron(0 2 ? * 2-6 *)', 'Europe/Berlin'], // DST days are Sundays
  ['*/5 * * * 1-5', 'America/New_York', 'cron(0/5 * ? * 2-6 *)', 'America/New_York'],
  ['0 12 * JAN,JUL SAT,SUN', 'Asia/Tokyo', 'cron(0 12 ? 1,7 1,7 *)', 'Asia/Tokyo'],
  ['30 2 * * *', 'Asia/Kolkata', 'cron(30 2 * * ? *)', 'Asia/Kolkata'], // no DST
  // minute-only schedules in a DST zone fire as in UTC (shifted by the zone's minutes part)
  ['*/15 * * * *', 'Europe/Berlin', 'cron(0/15 * * * ? *)', 'UTC'],
  ['@hourly', 'America/New_York', 'cron(0 * * * ? *)', 'UTC'],
  ['0 * * * *', 'America/St_Johns', 'cron(30 * * * ? *)', 'UTC'],
  ['15 * * * *', 'America/St_Johns', 'cron(45 * * * ? *)', 'UTC'],
];

describe('EventBridge translation table', () => {
  it.each(TABLE)('%s in %s → %s (%s)', (schedule, zone, expression, timezone) => {
    const r = toAwsSchedule(schedule, zone, NOW);
    expect(r).toMatchObject({ ok: true, value: { expression, timezone } });
    expect(awsExpressionProblem(expression)).toBeNull();
  });

  it('every translation fires exactly like cronix, under an independent model of AWS (incl. DST)', () => {
    // windows of 2026 holding a new year, a quarter start, and the spring and autumn changes
    // of Europe and North America
    const windows = [
      [Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-01-08T00:00:00Z')],
      [Date.parse('2026-03-05T00:00:00Z'), Date.parse('2026-04-02T00:00:00Z')],
      [Date.parse('2026-10-20T00:00:00Z'), Date.parse('2026-11-05T00:00:00Z')],
    ] as const;
    for (const [schedule, zone] of TABLE) {
      const r = toAwsSchedule(schedule, zone, NOW);
      if (!r.ok) throw new Error(r.reason);
      for (const [from, to] of windows) {
        const cronix = firesBetween(schedule, zone, from, to);
        const aws = r.value.expression.startsWith('rate(')
          ? awsRateFires(
              r.value.expression,
              rateStartDate(r.value.rateSeconds ?? 0, from - 1).getTime(),
              to,
            )
          : awsCronFires(r.value.expression, r.value.timezone, from, to);
        expect({ schedule, zone, fires: aws }).toEqual({ schedule, zone, fires: cronix });
      }
    }
  });

  it('and the model agrees with AWS on what it refuses: they would fire differently', () => {
    const day = (iso: string): number => Date.parse(`${iso}T00:00:00Z`);
    for (const [schedule, zone, expression, from, to] of [
      ['30 2 * * *', 'Europe/Berlin', 'cron(30 2 * * ? *)', day('2026-03-27'), day('2026-04-01')],
      [
        '*/10 2 * * *',
        'Europe/Berlin',
        'cron(0/10 2 * * ? *)',
        day('2026-10-23'),
        day('2026-10-28'),
      ],
      [
        '*/20 * * * *',
        'Australia/Lord_Howe',
        'cron(0/20 * * * ? *)',
        day('2026-04-03'),
        day('2026-04-07'),
      ],
    ] as const) {
      const cronix = firesBetween(schedule, zone, from, to);
      const aws = awsCronFires(expression, zone, from, to);
      expect(aws.length).not.toBe(cronix.length);
    }
  });

  it('covers at least 20 schedules', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(20);
  });

  it('a UTC-restated minute-only schedule has the same fires as the original (St Johns, a year)', () => {
    for (const [schedule, utcCron] of [
      ['0 * * * *', '30 * * * *'],
      ['*/20 * * * *', '10,30,50 * * * *'],
    ] as const) {
      const r = toAwsSchedule(schedule, 'America/St_Johns', NOW);
      expect(r.ok && r.value.timezone).toBe('UTC');
      const opts = { from: NOW, count: 24 * 365 };
      const local = nextFires(schedule, { ...opts, timezone: 'America/St_Johns' });
      const utc = nextFires(utcCron, { ...opts, timezone: 'UTC' });
      expect(local.map((d) => d.getTime())).toEqual(utc.map((d) => d.getTime()));
    }
  });
});

/** [schedule, zone, pattern the reason must match] */
const REFUSED: readonly (readonly [string, string, RegExp])[] = [
  ['0 0 1,15 * FRI', 'UTC', /EITHER matches.*Split it into two schedules/],
  ['0 0 1 * MON', 'UTC', /cannot state OR/],
  ['0 0 */2 * MON', 'UTC', /month AND day-of-week in classic cron.*cannot state AND/],
  ['@every 90s', 'UTC', /whole minutes.*90s/],
  ['@every 1m30s', 'UTC', /whole minutes/],
  ['30 2 * * *', 'Europe/Berlin', /2026-03-29T02:30 local time, which does not exist.*skips it/],
  ['30 2 * * *', 'America/New_York', /2026-03-08T02:30.*does not exist/],
  ['0 0 * * *', 'America/Santiago', /2026-09-06T00:00.*does not exist/],
  ['0 0 * * *', 'America/Havana', /does not exist/],
  ['*/10 2 * * *', 'Europe/Berlin', /2026-10-25T02:00 local time, which happens twice.*only once/],
  ['0 */2 * * *', 'Europe/Berlin', /happens twice/],
  ['*/20 * * * *', 'Australia/Lord_Howe', /2026-04-05T01:40.*happens twice/],
  ['61 * * * *', 'UTC', /minute value 61/],
  ['0 0 * * *', 'Mars/Olympus', /unknown time zone/],
];

describe('EventBridge refusals', () => {
  it.each(REFUSED)('%s in %s is refused: %s', (schedule, zone, pattern) => {
    const r = toAwsSchedule(schedule, zone, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toMatch(pattern);
      if (!/value 61|time zone/.test(pattern.source)) {
        expect(r.reason).toMatch(/another backend|UTC|two schedules|multiple of 60s/);
      }
    }
  });

  it.each([
    ['*/10 * * * * *', /"\*\/10 \* \* \* \* \*" has a seconds field.*minute resolution/],
    ['30 0 9 * * MON-FRI', /has a seconds field/],
    ['@every 5s', /"@every 5s" fires every 5 s.*minute resolution/],
    ['@every 59s', /fires every 59 s/],
  ])('refuses the seconds schedule %s, naming daemon mode and systemd', (schedule, pattern) => {
    const r = toAwsSchedule(schedule, 'UTC', NOW);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(pattern);
    expect(!r.ok && r.reason).toMatch(/cronix serve.*--backend systemd/);
  });

  it('names the schedule in every reason', () => {
    const r = toAwsSchedule('0 0 1,15 * FRI', 'UTC', NOW);
    expect(!r.ok && r.reason).toMatch(/^"0 0 1,15 \* FRI": /);
  });
});

describe('DST comparison with AWS behaviour', () => {
  const cron = (s: string): CronSpec => {
    const p = parseSchedule(s);
    if (!p.ok || p.schedule.kind !== 'cron') throw new Error(s);
    return p.schedule;
  };

  it('gaps only matter for fixed-time jobs, overlaps only for wildcard jobs', () => {
    // wildcard job in the spring gap: neither cronix nor AWS fires the missing times
    expect(findDstConflict(cron('*/10 2 * * *'), 'Europe/Berlin', NOW)?.kind).toBe('overlap');
    // fixed-time in the autumn overlap: both fire once
    expect(findDstConflict(cron('30 2 * * *'), 'Europe/Berlin', NOW)?.kind).toBe('gap');
    expect(findDstConflict(cron('30 2 * 4-12 *'), 'Europe/Berlin', NOW)).toBeNull();
  });

  it('looks decades ahead: a day-of-month that meets a DST Sunday only some years is caught', () => {
    // Europe's last Sunday of March is the 25th in 2029
    const c = findDstConflict(cron('30 2 25 3 *'), 'Europe/Berlin', NOW);
    expect(c).toEqual({ kind: 'gap', local: '2029-03-25T02:30' });
  });

  it('UTC minute shift: Berlin 0, St Johns 30, Lord Howe none', () => {
    expect(utcMinuteShift('Europe/Berlin', NOW)).toBe(0);
    expect(utcMinuteShift('America/St_Johns', NOW)).toBe(30);
    expect(utcMinuteShift('Australia/Lord_Howe', NOW)).toBeNull();
  });
});

describe('rate() anchoring', () => {
  it('starts on the next multiple of the interval since the Unix epoch', () => {
    const now = Date.parse('2026-05-05T10:07:31Z');
    expect(rateStartDate(300, now).toISOString()).toBe('2026-05-05T10:10:00.000Z');
    expect(rateStartDate(5400, now).toISOString()).toBe('2026-05-05T10:30:00.000Z');
    expect(rateStartDate(86_400, now).toISOString()).toBe('2026-05-06T00:00:00.000Z');
    // strictly after: a now on the grid starts one interval later
    const onGrid = Date.parse('2026-05-05T10:10:00Z');
    expect(rateStartDate(300, onGrid).toISOString()).toBe('2026-05-05T10:15:00.000Z');
  });

  it('the anchored start is a fire of the same @every schedule in cronix', () => {
    const now = Date.parse('2026-05-05T10:07:31Z');
    for (const [every, seconds] of [
      ['@every 7m', 420],
      ['@every 1h30m', 5400],
      ['@every 48h', 172_800],
    ] as const) {
      const [first] = nextFires(every, { from: now });
      expect(rateStartDate(seconds, now).getTime()).toBe(first?.getTime());
    }
  });
});
