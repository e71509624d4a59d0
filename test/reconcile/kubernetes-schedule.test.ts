/**
 * Schedule fidelity of the Kubernetes backend: the translation table, a cross-check of every
 * emitted schedule against a port of robfig/cron (the CronJob controller's parser), and the
 * DST rule: a schedule that is not refused fires in Kubernetes' elapsed-time semantics exactly
 * where cronix fires it.
 */
import { fc, test as fcTest } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  nextFire,
  nextFires,
  parseSchedule,
  type Schedule,
} from '../../src/contract/schedule/index.js';
import {
  dstConflict,
  translateSchedule,
} from '../../src/reconcile/backends/kubernetes-schedule.js';
import { robfigDayMatches, robfigParse, type RobfigSpec } from './kubernetes-robfig.js';

const DAY = 86_400_000;
const mustParse = (s: string): Schedule => {
  const r = parseSchedule(s);
  if (!r.ok) throw new Error(r.error);
  return r.schedule;
};

describe('translateSchedule', () => {
  it.each([
    ['*/10 * * * *', 'UTC', '*/10 * * * *', 'UTC'],
    ['0 3 * * *', 'Europe/Berlin', '0 3 * * *', 'Europe/Berlin'],
    ['@daily', 'UTC', '@daily', 'UTC'],
    ['@WEEKLY', 'UTC', '@weekly', 'UTC'],
    ['0 0 * * 7', 'UTC', '0 0 * * 0', 'UTC'],
    ['0 0 * * 5-7', 'UTC', '0 0 * * 0,5,6', 'UTC'],
    ['0 0 * * 1-7/2', 'UTC', '0 0 * * 0,1,3,5', 'UTC'],
    ['0 0 * * 7/2', 'UTC', '0 0 * * 0,2,4,6', 'UTC'], // 7/n starts at Sunday
    ['0 9 * * MON-FRI', 'UTC', '0 9 * * MON-FRI', 'UTC'],
    ['0 0 1,15 * FRI', 'UTC', '0 0 1,15 * FRI', 'UTC'],
    ['0 0 */2 * *', 'UTC', '0 0 */2 * *', 'UTC'],
    ['0 0 * * */2', 'UTC', '0 0 * * */2', 'UTC'],
    ['0 0 1-31 * MON', 'UTC', '0 0 * * *', 'UTC'], // either rule with every day: every day
    ['0 0 */1 * MON', 'UTC', '0 0 * * MON', 'UTC'],
    ['0 0 *,15 * MON', 'UTC', '0 0 * * MON', 'UTC'],
    ['0 0 1-7 * */1', 'UTC', '0 0 1-7 * *', 'UTC'],
    ['5/15 * * jan-mar *', 'UTC', '5/15 * * jan-mar *', 'UTC'],
    ['@every 1m', 'Asia/Kolkata', '* * * * *', 'UTC'],
    ['@every 15m', 'Asia/Kolkata', '*/15 * * * *', 'UTC'],
    ['@every 1h', 'UTC', '0 * * * *', 'UTC'],
    ['@every 6h', 'America/New_York', '0 */6 * * *', 'UTC'],
    ['@every 24h', 'UTC', '0 0 * * *', 'UTC'],
  ])('%s in %s → %s (timeZone %s)', (source, tz, schedule, timeZone) => {
    expect(translateSchedule(source, tz)).toEqual({ ok: true, schedule, timeZone });
  });

  it.each([
    ['0 0 */2 * MON', /both day-of-month "\*\/2" and day-of-week "MON"/],
    ['0 0 1 * */2', /robfig\/cron treats only a bare "\*"/],
    ['@every 90m', /@every as a delay from the CronJob's last run/],
    ['@every 7m', /divide an hour or a day/],
    ['@every 48h', /divide an hour or a day/],
    ['@every 2h30m', /divide an hour or a day/],
    // the seconds extension: five fields and one Job a minute at most
    ['*/10 * * * * *', /seconds field.*five fields.*cronix serve.*--backend systemd/],
    ['@every 30s', /fires every 30 s.*at most one Job a minute.*--backend systemd/],
    ['0 */5 * * * *', /drop the seconds field: "\*\/5 \* \* \* \*"/],
  ])('refuses %s', (source, reason) => {
    const t = translateSchedule(source, 'UTC');
    expect(t.ok).toBe(false);
    expect(t.ok ? '' : t.reason).toMatch(reason);
  });
});

/** Compares cronix's UTC fires of `source` with robfig's reading of `translated`, day by day. */
function crossCheck(source: string, translated: string, days = 2922): void {
  const ours = mustParse(source);
  const theirs = robfigParse(translated) as RobfigSpec | string;
  if (typeof theirs === 'string') throw new Error(`robfig rejects "${translated}": ${theirs}`);
  const start = Date.UTC(2024, 0, 1);
  let timesChecked = false;
  for (let d = 0; d < days; d++) {
    const dayStart = start + d * DAY;
    const date = new Date(dayStart);
    const robfigDay =
      theirs.month.has(date.getUTCMonth() + 1) &&
      robfigDayMatches(theirs, date.getUTCDate(), date.getUTCDay());
    const first = nextFire(ours, 'UTC', dayStart - 1);
    const oursDay = first !== null && first < dayStart + DAY;
    if (oursDay !== robfigDay) {
      throw new Error(
        `${source} vs "${translated}" on ${date.toISOString().slice(0, 10)}: cronix ${oursDay}, robfig ${robfigDay}`,
      );
    }
    if (oursDay && !timesChecked) {
      timesChecked = true;
      const fires = nextFires(ours, { timezone: 'UTC', from: new Date(dayStart - 1), count: 1441 })
        .map((f) => f.getTime())
        .filter((t) => t < dayStart + DAY)
        .map((t) => (t - dayStart) / 60_000);
      const expected: number[] = [];
      for (const h of [...theirs.hour].sort((a, b) => a - b))
        for (const m of [...theirs.minute].sort((a, b) => a - b)) expected.push(h * 60 + m);
      expect(fires, `${source} vs "${translated}": times of day`).toEqual(expected);
    }
  }
}

describe('every emitted schedule fires like cronix under robfig/cron (UTC, 2024-2031)', () => {
  it.each([
    '*/10 * * * *',
    '0 0 * * 7',
    '0 0 * * 5-7',
    '0 0 1,15 * FRI',
    '0 0 */2 * *',
    '0 0 1-31 * MON',
    '0 0 */1 * MON',
    '30 6 1-7 * */1',
    '5/15 2 * jan-mar *',
    '0 12 29 2 *',
    '0 0 31 * 1-7/2',
    '0 0 1/2 JAN 7/1', // a day-of-week selecting no day adds nothing under the either rule
    '@weekly',
    '@monthly',
    '@yearly',
    '@every 15m',
    '@every 6h',
  ])('%s', (source) => {
    const t = translateSchedule(source, 'UTC');
    if (!t.ok) throw new Error(t.reason);
    crossCheck(source, t.schedule);
  });

  const item = (lo: number, hi: number, words: string[] = []): fc.Arbitrary<string> => {
    const n = fc.integer({ min: lo, max: hi });
    const step = fc.integer({ min: 1, max: Math.max(2, Math.ceil((hi - lo) / 2)) });
    const pair = fc.tuple(n, n).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);
    return fc.oneof(
      fc.constant('*'),
      step.map((s) => `*/${s}`),
      n.map(String),
      pair.map(([a, b]) => `${a}-${b}`),
      fc.tuple(pair, step).map(([[a, b], s]) => `${a}-${b}/${s}`),
      fc.tuple(n, step).map(([a, s]) => `${a}/${s}`),
      ...(words.length > 0 ? [fc.constantFrom(...words)] : []),
    );
  };
  const field = (lo: number, hi: number, words?: string[]): fc.Arbitrary<string> =>
    fc.array(item(lo, hi, words), { minLength: 1, maxLength: 3 }).map((a) => a.join(','));
  const cron = fc
    .tuple(
      field(0, 59),
      field(0, 23),
      field(1, 31),
      field(1, 12, ['JAN', 'jun', 'Dec']),
      field(0, 7, ['MON', 'fri', 'SUN']),
    )
    .map((f) => f.join(' '))
    .filter((s) => parseSchedule(s).ok);

  fcTest.prop([cron], { numRuns: 150 })(
    'random schedules: translated or refused for the day rule',
    (source) => {
      const t = translateSchedule(source, 'UTC');
      if (t.ok) {
        crossCheck(source, t.schedule, 800);
        return;
      }
      const spec = mustParse(source);
      expect(spec.kind === 'cron' && (spec.domStar || spec.dowStar)).toBe(true);
      expect(t.reason).toMatch(/robfig\/cron treats only a bare "\*" as a wildcard|never fires/);
    },
  );
});

/** Local wall-clock fields of `t` in `zone` as a naive ms value, read from Intl (not our engine). */
function localNaive(zone: string): (t: number) => number {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  return (t) => {
    const p = Object.fromEntries(f.formatToParts(t).map((x) => [x.type, Number(x.value)]));
    return Date.UTC(p['year'] ?? 0, (p['month'] ?? 1) - 1, p['day'], p['hour'], p['minute']);
  };
}

/**
 * robfig's elapsed-time semantics: every minute whose local wall clock matches, including both
 * passes of a repeated hour and nothing for a skipped one.
 */
function elapsedTimeFires(source: string, zone: string, from: number, to: number): number[] {
  const spec = mustParse(source);
  if (spec.kind !== 'cron') throw new Error('cron only');
  const local = localNaive(zone);
  const offsets = new Set<number>();
  for (let t = from - DAY; t < to + DAY; t += 3_600_000) offsets.add(local(t) - t);
  const out = new Set<number>();
  for (let day = from - DAY; day < to + DAY; day += DAY) {
    const d = new Date(day);
    const [y, mo, dd, wd] = [
      d.getUTCFullYear(),
      d.getUTCMonth() + 1,
      d.getUTCDate(),
      d.getUTCDay(),
    ];
    if (spec.months[mo] !== 1) continue;
    const domOk = spec.doms[dd] === 1;
    const dowOk = spec.dows[wd] === 1;
    if (!(spec.domStar || spec.dowStar ? domOk && dowOk : domOk || dowOk)) continue;
    for (let h = 0; h < 24; h++) {
      if (spec.hours[h] !== 1) continue;
      for (let m = 0; m < 60; m++) {
        if (spec.minutes[m] !== 1) continue;
        const naive = Date.UTC(y, mo - 1, dd, h, m);
        for (const off of offsets) {
          const t = naive - off;
          if (t > from && t <= to && local(t) === naive) out.add(t);
        }
      }
    }
  }
  return [...out].sort((a, b) => a - b);
}

function cronixFires(source: string, zone: string, from: number, to: number): number[] {
  const out: number[] = [];
  for (
    let t = nextFire(mustParse(source), zone, from);
    t !== null && t <= to;
    t = nextFire(mustParse(source), zone, t)
  )
    out.push(t);
  return out;
}

describe('DST: what is not refused fires in Kubernetes exactly where cronix fires it', () => {
  const from = Date.UTC(2026, 0, 1);
  const to = Date.UTC(2027, 0, 1);

  it.each([
    [
      '30 2 * * *',
      'America/New_York',
      /America\/New_York skips on 2026-03-08 \(02:00–03:00 local\).*skips it that day/,
    ],
    ['30 1 * * *', 'America/New_York', /repeats on 2026-11-01 \(01:00–02:00 local\).*both passes/],
    ['30 2 * * *', 'Europe/Berlin', /skips on 2026-03-29/],
    ['0 0 * * *', 'America/Santiago', /skips on 2026-09-06 \(00:00–01:00 local\)/],
    ['0 0 * * *', 'America/Havana', /skips on 2026-03-08 \(00:00–01:00 local\)/],
    ['15 2 * * *', 'Australia/Lord_Howe', /Australia\/Lord_Howe (skips|repeats)/],
  ])('refuses fixed-time %s in %s, and the two semantics really differ', (source, zone, reason) => {
    expect(dstConflict(mustParse(source), zone, from)).toMatch(reason);
    expect(elapsedTimeFires(source, zone, from, to)).not.toEqual(
      cronixFires(source, zone, from, to),
    );
  });

  it('reports the first conflict after the reference instant', () => {
    const june = Date.UTC(2026, 5, 1);
    expect(dstConflict(mustParse('0 0 * * *'), 'America/Havana', june)).toMatch(
      /repeats on 2026-11-01 \(00:00–01:00 local\): cronix fires it once/,
    );
  });

  it('finds a transition that meets the schedule only in a later year (12-year horizon)', () => {
    // the second Sunday of March is March 8 in 2026, then again in 2037
    expect(dstConflict(mustParse('30 2 8 3 *'), 'America/New_York', Date.UTC(2027, 0, 1))).toMatch(
      /2037-03-08/,
    );
    expect(
      dstConflict(mustParse('30 2 8 3 *'), 'America/New_York', Date.UTC(2027, 0, 1), 5 * 366 * DAY),
    ).toBeNull();
  });

  it.each([
    ['0 9 * * *', 'America/New_York'],
    ['30 3 * * 1-5', 'Europe/Berlin'],
    ['*/20 * * * *', 'Australia/Lord_Howe'],
    ['0 * * * *', 'America/New_York'],
    ['30 * * * *', 'America/Santiago'],
    ['15 1 * * *', 'America/Havana'],
    ['0 0 * * *', 'America/New_York'],
    ['30 2 * * *', 'Asia/Kolkata'],
    ['45 23 * * 0', 'Europe/London'],
  ])('accepts %s in %s and fires identically through 2026', (source, zone) => {
    expect(dstConflict(mustParse(source), zone, from)).toBeNull();
    expect(cronixFires(source, zone, from, to)).toEqual(elapsedTimeFires(source, zone, from, to));
  });

  it('never flags @every or UTC', () => {
    expect(dstConflict(mustParse('@every 15m'), 'America/New_York', from)).toBeNull();
    expect(dstConflict(mustParse('30 2 * * *'), 'UTC', from)).toBeNull();
  });
});
