/**
 * Blackout windows (SPEC §16 "Calendars"), pure: recurring windows checked minute by minute
 * against the independent DST oracle (test/helpers/oracle.ts) over the spring-forward and
 * fall-back days of Europe/Berlin and America/New_York, date ranges at their edges, holiday
 * dates as whole local days (23- and 25-hour days included), the dates file's text, the
 * manifest's rules and the canonical form.
 */
import { describe, expect, it } from 'vitest';
import { compileBlackout } from '../../src/contract/calendar.js';
import { parseDatesText } from '../../src/contract/manifest/dates-text.js';
import { canonicalize, jobChangeHash, parseManifest } from '../../src/contract/manifest/index.js';
import type { BlackoutWindow } from '../../src/contract/manifest/types.js';
import { parseSchedule, type CronSpec } from '../../src/contract/schedule/index.js';
import { localTable, oracleFires } from '../helpers/oracle.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const at = (iso: string): number => Date.parse(iso);

/** Whether `t` is inside a window starting at an oracle instant of `cron` and lasting `seconds`. */
function oracleInside(starts: readonly number[], seconds: number, t: number): boolean {
  return starts.some((s) => s <= t && t < s + seconds * 1000);
}

describe('recurring windows across DST transitions, against the oracle', () => {
  const cases: { tz: string; day: string; cron: string; seconds: number }[] = [
    // Berlin spring forward 2026-03-29 02:00 → 03:00, fall back 2026-10-25 03:00 → 02:00
    { tz: 'Europe/Berlin', day: '2026-03-29', cron: '0 1 * * *', seconds: 3 * 3600 },
    { tz: 'Europe/Berlin', day: '2026-03-29', cron: '30 2 * * *', seconds: 3600 },
    { tz: 'Europe/Berlin', day: '2026-03-29', cron: '*/20 * * * *', seconds: 300 },
    { tz: 'Europe/Berlin', day: '2026-10-25', cron: '30 2 * * *', seconds: 1800 },
    { tz: 'Europe/Berlin', day: '2026-10-25', cron: '0 22 * * 6', seconds: 8 * 3600 },
    { tz: 'Europe/Berlin', day: '2026-10-25', cron: '15 * * * *', seconds: 900 },
    // New York spring forward 2026-03-08 02:00 → 03:00, fall back 2026-11-01 02:00 → 01:00
    { tz: 'America/New_York', day: '2026-03-08', cron: '30 2 * * *', seconds: 7200 },
    { tz: 'America/New_York', day: '2026-03-08', cron: '0 0 * * 0', seconds: 6 * 3600 },
    { tz: 'America/New_York', day: '2026-11-01', cron: '30 1 * * *', seconds: 3600 },
    { tz: 'America/New_York', day: '2026-11-01', cron: '*/30 1 * * *', seconds: 600 },
  ];
  for (const { tz, day, cron, seconds } of cases)
    it(`${tz} ${day}: "${cron}" for ${seconds} s`, () => {
      const spec = parseSchedule(cron);
      if (!spec.ok || spec.schedule.kind !== 'cron') throw new Error('bad case');
      const from = at(`${day}T00:00:00Z`) - 2 * 24 * HOUR;
      const to = at(`${day}T00:00:00Z`) + 2 * 24 * HOUR;
      const start = from - 2 * 24 * HOUR;
      const table = localTable(tz, start, to + MIN);
      const starts = oracleFires(spec.schedule as CronSpec, table, start, start - 1, to);
      const blackout = compileBlackout([{ cron, duration_seconds: seconds }], tz);
      const wrong: string[] = [];
      let inside = 0;
      for (let t = from; t < to; t += MIN) {
        const expected = oracleInside(starts, seconds, t);
        const hit = blackout?.at(t) ?? null;
        if (expected) inside += 1;
        if ((hit !== null) !== expected)
          wrong.push(`${new Date(t).toISOString()}: expected ${expected}, found ${hit}`);
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      expect(inside).toBeGreaterThan(0);
    });

  it('a window of elapsed time across spring forward: 01:00 CET + 3 h ends at 05:00 CEST', () => {
    const b = compileBlackout([{ cron: '0 1 * * *', duration_seconds: 3 * 3600 }], 'Europe/Berlin');
    expect(b?.at(at('2026-03-28T23:59:00Z'))).toBeNull(); // 00:59 CET
    expect(b?.at(at('2026-03-29T00:00:00Z'))).toBe(
      'window 0 (cron "0 1 * * *", 10800 s from 2026-03-29T01:00:00+01:00)',
    );
    expect(b?.at(at('2026-03-29T02:59:59Z'))).not.toBeNull(); // 04:59:59 CEST
    expect(b?.at(at('2026-03-29T03:00:00Z'))).toBeNull(); // 05:00 CEST
  });

  it('a start inside the spring-forward gap starts the window at the transition', () => {
    const b = compileBlackout([{ cron: '30 2 * * *', duration_seconds: 600 }], 'Europe/Berlin');
    expect(b?.at(at('2026-03-29T00:59:59Z'))).toBeNull();
    expect(b?.at(at('2026-03-29T01:00:00Z'))).toBe(
      'window 0 (cron "30 2 * * *", 600 s from 2026-03-29T03:00:00+02:00)',
    );
    expect(b?.at(at('2026-03-29T01:10:00Z'))).toBeNull();
  });

  it('in the fall-back overlap a fixed-time start opens one window, in the first pass', () => {
    const b = compileBlackout([{ cron: '30 1 * * *', duration_seconds: 1200 }], 'America/New_York');
    expect(b?.at(at('2026-11-01T05:35:00Z'))).toMatch(/from 2026-11-01T01:30:00-04:00/);
    expect(b?.at(at('2026-11-01T06:35:00Z'))).toBeNull(); // 01:35 EST, the second pass
  });
});

describe('date ranges', () => {
  const b = compileBlackout(
    [
      { from: '2026-12-24T00:00:00+01:00', to: '2026-12-27T00:00:00+01:00' },
      { from: '2027-01-01T00:00:00Z', to: '2027-01-01T00:00:01Z' },
    ],
    'Europe/Berlin',
  );
  it('from is included, to excluded; each window named by its index', () => {
    expect(b?.at(at('2026-12-23T22:59:59.999Z'))).toBeNull();
    expect(b?.at(at('2026-12-23T23:00:00Z'))).toBe(
      'window 0 (2026-12-24T00:00:00+01:00 to 2026-12-27T00:00:00+01:00)',
    );
    expect(b?.at(at('2026-12-26T22:59:59.999Z'))).not.toBeNull();
    expect(b?.at(at('2026-12-26T23:00:00Z'))).toBeNull();
    expect(b?.at(at('2027-01-01T00:00:00Z'))).toMatch(/^window 1 /);
    expect(b?.at(at('2027-01-01T00:00:01Z'))).toBeNull();
  });
});

describe('holiday dates: whole days in the job zone', () => {
  it('the 23-hour spring-forward day in Berlin', () => {
    const w: BlackoutWindow = { dates_file: 'holidays.txt', dates: ['2026-03-29'] };
    const b = compileBlackout([w], 'Europe/Berlin');
    expect(b?.at(at('2026-03-28T22:59:59Z'))).toBeNull();
    expect(b?.at(at('2026-03-28T23:00:00Z'))).toBe('window 0 (holidays.txt: 2026-03-29)');
    expect(b?.at(at('2026-03-29T21:59:59Z'))).not.toBeNull(); // 23:59:59 CEST
    expect(b?.at(at('2026-03-29T22:00:00Z'))).toBeNull();
  });
  it('the 25-hour fall-back day in New York', () => {
    const b = compileBlackout([{ dates_file: 'h', dates: ['2026-11-01'] }], 'America/New_York');
    expect(b?.at(at('2026-11-01T03:59:59Z'))).toBeNull();
    expect(b?.at(at('2026-11-01T04:00:00Z'))).not.toBeNull(); // 00:00 EDT
    expect(b?.at(at('2026-11-02T04:59:59Z'))).not.toBeNull(); // 23:59:59 EST
    expect(b?.at(at('2026-11-02T05:00:00Z'))).toBeNull();
  });
  it('a window whose dates were not read is an error, never an empty list', () => {
    expect(() => compileBlackout([{ dates_file: 'h' }], 'UTC')).toThrow(/were not read/);
  });
  it('the first window covering an instant names it', () => {
    const b = compileBlackout(
      [
        { cron: '0 0 * * *', duration_seconds: 60 },
        { dates_file: 'h', dates: ['2026-05-01'] },
      ],
      'UTC',
    );
    expect(b?.at(at('2026-05-01T00:00:30Z'))).toMatch(/^window 0 /);
    expect(b?.at(at('2026-05-01T12:00:00Z'))).toBe('window 1 (h: 2026-05-01)');
  });
  it('no windows: null', () => {
    expect(compileBlackout(undefined, 'UTC')).toBeNull();
  });
});

describe('the dates file text', () => {
  it('reads dates, comments, blank lines, CRLF and a byte-order mark; sorts and dedupes', () => {
    const r = parseDatesText(
      '\uFEFF# 2026 holidays\r\n2026-12-25  # Christmas\r\n\r\n2026-01-01\n   \n2026-12-25\n',
    );
    expect(r).toEqual({ ok: true, dates: ['2026-01-01', '2026-12-25'] });
  });
  it('names every bad line (not a date, not a day of the calendar)', () => {
    const r = parseDatesText('2026-01-01\n2026-13-01\n25.12.2026\n2027-02-29\n2028-02-29\n');
    expect(r).toEqual({
      ok: false,
      errors: [
        { line: 2, message: '"2026-13-01" is not a day of the calendar' },
        { line: 3, message: 'expected a date YYYY-MM-DD, found "25.12.2026"' },
        { line: 4, message: '"2027-02-29" is not a day of the calendar' },
      ],
    });
  });
  it('lists at most ten bad lines and counts the rest; a long line is cut', () => {
    const r = parseDatesText(`${'x\n'.repeat(15)}${'y'.repeat(5000)}\n`);
    if (r.ok) throw new Error('expected errors');
    expect(r.errors).toHaveLength(11);
    expect(r.errors[10]).toEqual({ line: null, message: '6 more bad line(s) not listed' });
    const big = parseDatesText('z'.repeat(5000));
    if (big.ok) throw new Error('expected errors');
    expect(big.errors[0]?.message.length).toBeLessThan(150);
  });
});

function job(blackout: unknown): Record<string, unknown> {
  return {
    name: 'j',
    schedule: '0 * * * *',
    request: { url: 'http://x.test/' },
    policy: { blackout },
  };
}
const errorsOf = (blackout: unknown) => {
  const r = parseManifest({ version: 1, app: 'a', jobs: [job(blackout)] });
  return r.ok ? [] : r.errors;
};

describe('manifest rules', () => {
  it('accepts the three kinds and keeps them in order', () => {
    const windows = [
      { cron: '0 22 * * 5', duration_seconds: 3600 },
      { from: '2026-12-24T00:00:00+01:00', to: '2026-12-27T00:00:00+01:00' },
      { dates_file: 'holidays.txt' },
    ];
    const r = parseManifest({ version: 1, app: 'a', jobs: [job(windows)] });
    expect(r.ok && r.manifest.jobs[0]?.policy.blackout).toEqual(windows);
  });
  it.each([
    [[{}], 'jobs/0/policy/blackout/0', /expected one of \{"cron", "duration_seconds"\}/],
    [[{ cron: '0 22 * * 5' }], 'jobs/0/policy/blackout/0', /"duration_seconds" is missing/],
    [[{ to: '2026-01-01T00:00:00Z' }], 'jobs/0/policy/blackout/0', /"from" is missing/],
    [
      [{ cron: '* * * * *', duration_seconds: 5, from: '2026-01-01T00:00:00Z' }],
      'jobs/0/policy/blackout/0',
      /found fields of 2 kinds \("cron", "from"\); write one window each/,
    ],
    [
      [{ cron: '0 99 * * *', duration_seconds: 5 }],
      'jobs/0/policy/blackout/0/cron',
      /invalid schedule: hour value 99/,
    ],
    [
      [{ cron: '0 1 * * *', duration_seconds: 0 }],
      'jobs/0/policy/blackout/0/duration_seconds',
      /from 1 to 31622400, found 0/,
    ],
    [
      [{ from: '2026-02-30T00:00:00Z', to: '2026-03-01T00:00:00Z' }],
      'jobs/0/policy/blackout/0/from',
      /expected an RFC 3339 instant with an offset .*found "2026-02-30T00:00:00Z"/,
    ],
    [
      [{ from: '2026-01-01T00:00:00', to: '2026-03-01T00:00:00Z' }],
      'jobs/0/policy/blackout/0/from',
      /RFC 3339 instant with an offset/,
    ],
    [
      [{ from: '2026-03-01T00:00:00Z', to: '2026-03-01T01:00:00+01:00' }],
      'jobs/0/policy/blackout/0',
      /expected "from" before "to" \(to is excluded\)/,
    ],
    [[{ dates_file: '' }], 'jobs/0/policy/blackout/0/dates_file', /the path of a file of dates/],
    [
      [{ dates_file: 'h', dates: ['2026-01-01'] }],
      'jobs/0/policy/blackout/0/dates',
      /unknown field "dates"/,
    ],
    [[], 'jobs/0/policy/blackout', /array of 1 to 32 entries/],
  ])('%j → %s', (blackout, path, message) => {
    const errors = errorsOf(blackout);
    expect(errors.map((e) => e.path)).toContain(path);
    expect(errors.find((e) => e.path === path)?.message).toMatch(message);
  });
  it('a long value is cut in the message', () => {
    const [e] = errorsOf([{ from: `2026-${'9'.repeat(10_000)}`, to: '2027-01-01T00:00:00Z' }]);
    expect(e?.message.length).toBeLessThan(400);
  });
});

describe('canonical form', () => {
  it('writes the windows in order; the dates read from a file are not part of it', () => {
    const r = parseManifest({
      version: 1,
      app: 'a',
      jobs: [
        job([
          { dates_file: 'h.txt' },
          { to: '2027-01-01T00:00:00Z', from: '2026-12-31T00:00:00Z' },
          { duration_seconds: 60, cron: '@daily' },
        ]),
      ],
    });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const before = canonicalize(r.manifest);
    const hash = jobChangeHash('a', r.manifest.jobs[0]!, 0);
    expect(before).toContain(
      '"blackout":[{"dates_file":"h.txt"},{"from":"2026-12-31T00:00:00Z","to":"2027-01-01T00:00:00Z"},{"cron":"@daily","duration_seconds":60}]',
    );
    const w = r.manifest.jobs[0]!.policy.blackout![0]!;
    if ('dates_file' in w) w.dates = ['2026-05-01'];
    expect(canonicalize(r.manifest)).toBe(before);
    expect(jobChangeHash('a', r.manifest.jobs[0]!, 0)).toBe(hash);
    // the canonical form parses again to the same manifest
    const again = parseManifest(JSON.parse(before));
    expect(again.ok && canonicalize(again.manifest)).toBe(before);
  });
});
