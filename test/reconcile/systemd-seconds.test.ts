/**
 * The systemd backend honours the seconds extension of SPEC §3: 6-field expressions and
 * `@every` below a minute become `OnCalendar=` times with seconds that the real
 * `systemd-analyze calendar` evaluates to exactly cronix's fires (DST transitions included),
 * the timer gets `AccuracySec=1us`, the units pass `systemd-analyze verify`, and what systemd
 * cannot state (an epoch-anchored interval that does not divide the day, a DST difference) is
 * refused with the reason.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSchedule } from '../../src/contract/schedule/index.js';
import { createSystemdBackend } from '../../src/reconcile/backends/systemd.js';
import { accuracySec, toOnCalendar } from '../../src/reconcile/backends/systemd-calendar.js';
import { minFireGapSeconds } from '../../src/reconcile/backends/systemd-policy.js';
import { desiredEntries } from '../../src/reconcile/desired.js';
import { contractManifest } from './contract.js';
import { mergedInstants, ours, run } from './systemd-analyze.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const QUIET = '2026-05-13T10:17:23Z'; // far from any DST transition of the zones below

function parsed(schedule: string) {
  const p = parseSchedule(schedule);
  if (!p.ok) throw new Error(p.error);
  return p.schedule;
}

function translate(schedule: string, tz: string): string[] {
  const r = toOnCalendar(parsed(schedule), tz, { now: NOW });
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.lines;
}

function refused(schedule: string, tz: string): string {
  const r = toOnCalendar(parsed(schedule), tz, { now: NOW });
  if (r.ok) throw new Error(`expected a refusal, got ${r.lines.join(' | ')}`);
  return r.reason;
}

type Row = [schedule: string, tz: string, base: string, n?: number];

const TABLE: Row[] = [
  ['*/10 * * * * *', 'UTC', QUIET, 20],
  ['* * * * * *', 'UTC', QUIET, 20],
  ['0,15,20-25 * * * * *', 'UTC', QUIET, 20],
  ['30 */15 9-17 * * MON-FRI', 'America/New_York', QUIET, 20],
  ['5,35 0 0 1,15 * FRI', 'UTC', QUIET], // either rule, with seconds
  ['15-20/2 30 9 * * *', 'Europe/Berlin', QUIET],
  ['0 */5 * * * *', 'UTC', QUIET], // seconds field 0: the 5-field fires
  ['*/20 * * * * *', 'Asia/Kolkata', QUIET],
  ['45 59 23 31 12 *', 'Australia/Lord_Howe', QUIET, 3],
  ['@every 5s', 'Europe/Berlin', QUIET, 20], // stated in UTC: epoch-anchored
  ['@every 1s', 'UTC', QUIET, 10],
  ['@every 45s', 'UTC', QUIET, 20],
  ['@every 16s', 'America/New_York', QUIET, 20],
];

const TRANSITIONS: Row[] = [
  // minute-only wildcard with seconds, stated in UTC: both passes of the repeated hour
  ['*/20 */15 * * * *', 'America/New_York', '2026-11-01T05:50:00Z', 40],
  ['*/20 */15 * * * *', 'America/New_York', '2026-03-08T06:50:00Z', 40],
  // fixed-time in a repeated hour: both fire in the first pass only
  ['10,40 30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', 4],
  // wildcard in a skipped hour: neither fires there
  ['0 */30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 4],
];

describe('systemd-analyze agrees with cronix next for seconds schedules', () => {
  it.each([...TABLE, ...TRANSITIONS])('%s in %s from %s', async (schedule, tz, base, n = 12) => {
    const baseMs = Date.parse(base);
    expect(await mergedInstants(translate(schedule, tz), baseMs, n)).toEqual(
      ours(schedule, tz, baseMs, n),
    );
  });

  it('renders the seconds field in the OnCalendar= time', () => {
    expect(translate('*/10 * * * * *', 'UTC')).toEqual(['*-*-* *:*:00/10 UTC']);
    expect(translate('30 0 9 * * MON-FRI', 'Europe/Berlin')).toEqual([
      'Mon..Fri *-*-* 09:00:30 Europe/Berlin',
    ]);
    expect(translate('0 */5 * * * *', 'UTC')).toEqual(translate('*/5 * * * *', 'UTC'));
    expect(translate('@every 5s', 'Asia/Kolkata')).toEqual(['*-*-* *:*:00/5 UTC']);
    expect(translate('@every 45s', 'UTC')).toEqual([
      '*-*-* *:00/3:00,45 UTC',
      '*-*-* *:01/3:30 UTC',
      '*-*-* *:02/3:15 UTC',
    ]);
  });
});

describe('seconds schedules systemd cannot state are refused with the reason', () => {
  it('@every intervals that do not divide the day (the anchor is the Unix epoch)', () => {
    expect(refused('@every 7s', 'UTC')).toMatch(/"@every 7s" \(7 s\).*divides 24 h.*cronix serve/);
    // 64 s divides the day, but the pattern repeats only every 16 h: too many lines
    expect(refused('@every 1m4s', 'UTC')).toMatch(/would need 60 OnCalendar= lines.*cronix serve/);
  });

  it('a fixed-time seconds schedule in a spring-forward gap names the local second', () => {
    expect(refused('*/20 30 2 * * *', 'America/New_York')).toMatch(
      /matches 2026-03-08T02:30:00, a local time skipped by a spring-forward change/,
    );
  });

  it('a wildcard seconds schedule in a fall-back overlap (not minute-only)', () => {
    expect(refused('15 0 */2 * * *', 'Europe/Berlin')).toMatch(
      /matches 2026-10-25T02:00:15, a local time repeated by a fall-back change/,
    );
  });
});

describe('timer accuracy and the gap between fires', () => {
  it('AccuracySec=1us for second resolution, 1s for everything else (SPEC §6)', () => {
    expect(accuracySec(parsed('*/10 * * * * *'))).toBe('1us');
    expect(accuracySec(parsed('30 0 9 * * *'))).toBe('1us');
    expect(accuracySec(parsed('@every 5s'))).toBe('1us');
    expect(accuracySec(parsed('0 */5 * * * *'))).toBe('1s');
    expect(accuracySec(parsed('*/5 * * * *'))).toBe('1s');
    expect(accuracySec(parsed('@every 90s'))).toBe('1s');
  });

  it.each([
    ['*/10 * * * * *', 10],
    ['0,30 * * * * *', 30],
    ['59 * * * * *', 60],
    ['10,50 0 0 * * *', 40],
    ['58 59 * * * *', 3600],
    ['0 */5 * * * *', 300],
    ['*/5 * * * *', 300],
    ['0 3 * * *', 86_400],
    ['@every 5s', 5],
  ] as const)('minFireGapSeconds(%s) = %i', (schedule, gap) => {
    expect(minFireGapSeconds(parsed(schedule), 'UTC', NOW)).toBe(gap);
  });
});

describe('the backend installs seconds schedules', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const backendIn = (dir: string) =>
    createSystemdBackend({
      systemdUnitDir: dir,
      triggerCommand: [process.execPath, '/opt/cronix/dist/bin/cronix.mjs'],
      shimArgs: ['--spec-dir', '/etc/cronix/jobs'],
      systemdRunning: () => false,
      now: () => NOW,
    });
  const refusal = (schedule: string, policy?: Record<string, unknown>): string | null => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-systemd-seconds-'));
    dirs.push(dir);
    const m = contractManifest('billing', [
      { name: 'tick', schedules: [schedule], ...(policy ? { policy } : {}) },
    ]);
    return backendIn(dir).refuse(desiredEntries(m)[0]!).join('; ') || null;
  };

  it('writes timers that pass systemd-analyze verify, with AccuracySec=1us', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-systemd-seconds-'));
    dirs.push(dir);
    const m = contractManifest('billing', [
      { name: 'tick', schedules: ['*/10 * * * * *'] },
      { name: 'pulse', schedules: ['@every 5s'] },
      { name: 'settle', schedules: ['0 */5 * * * *'] },
    ]);
    await backendIn(dir).apply({ deletes: [], updates: [], creates: desiredEntries(m) });
    const names = ['tick', 'pulse', 'settle'].flatMap((n) => [
      join(dir, `cronix-billing_${n}-0.service`),
      join(dir, `cronix-billing_${n}-0.timer`),
    ]);
    const { stderr } = await run('systemd-analyze', ['verify', ...names], {
      env: { ...process.env, SYSTEMD_LOG_COLOR: '0' },
    });
    expect(stderr.split('\n').filter((l) => l.trim() !== '')).toEqual([]);
    const timer = (n: string): string =>
      readFileSync(join(dir, `cronix-billing_${n}-0.timer`), 'utf8');
    expect(timer('tick')).toContain(
      'OnCalendar=*-*-* *:*:00/10 UTC\nPersistent=true\nAccuracySec=1us\n',
    );
    expect(timer('pulse')).toContain(
      'OnCalendar=*-*-* *:*:00/5 UTC\nPersistent=true\nAccuracySec=1us\n',
    );
    expect(timer('settle')).toContain(
      'OnCalendar=*-*-* *:00/5:00 UTC\nPersistent=true\nAccuracySec=1s\n',
    );
  });

  it('policies are checked against the gap in seconds', () => {
    expect(refusal('*/10 * * * * *')).toBeNull(); // Forbid: an overlapping fire is dropped
    expect(refusal('*/10 * * * * *', { concurrency: 'Allow' })).toMatch(/"Allow".*10 s apart/);
    expect(refusal('*/10 * * * * *', { jitter: { random_seconds: 5 } })).toBeNull();
    expect(refusal('*/10 * * * * *', { jitter: { random_seconds: 10 } })).toMatch(
      /random_seconds 10 reaches the next fire \(fires can be 10 s apart\)/,
    );
  });
});
