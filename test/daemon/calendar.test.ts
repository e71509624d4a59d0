/**
 * Calendars (SPEC §16) in the daemon, on SQLite and PostgreSQL with a real HTTP sink and a
 * manual clock:
 *
 * - a recurring blackout window across the Europe/Berlin spring-forward night: every fire inside
 *   it is recorded `skipped` with the window named, nothing reaches the sink, the fires after it
 *   run; a manual trigger inside it runs;
 * - a holiday file (loaded from disk beside the manifest) and a date range, met by catch-up after
 *   downtime across the America/New_York 25-hour day: the fires inside are recorded `skipped`
 *   (not `missed`), the newest outside runs;
 * - `skip --next` and `skip --at`: durable across a restart before the instant and across
 *   downtime over it (catch-up skips it), consumed when its fire is recorded, idempotent, a fire
 *   already planned ahead ends `skipped`, bad instants refused.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadManifests } from '../../src/daemon/boot.js';
import type { RunRecord } from '../../src/daemon/store/types.js';
import {
  dropLedgers,
  freshLedger,
  LEDGERS,
  manifest,
  startTestDaemon,
  type TestDaemon,
} from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startSink, type Sink } from '../helpers/sink.js';

const MIN = 60_000;
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();
let sink: Sink;
let daemon: TestDaemon | undefined;

beforeAll(async () => {
  sink = await startSink();
  sink.setScript(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

function job(name: string, schedule: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    schedule,
    request: { url: `${sink.url}/${name}` },
    ...extra,
    policy: {
      retries: { max_attempts: 1 },
      timeout_seconds: 10,
      ...((extra['policy'] as object | undefined) ?? {}),
    },
  };
}

const hits = (path: string, from: number): number =>
  sink.requests.slice(from).filter((r) => r.url === path).length;

/** The job's runs of `trigger`s, oldest instant first. */
async function runsOf(d: TestDaemon, app: string, name: string): Promise<RunRecord[]> {
  const runs = await d.store.listRuns({ app, job: name, limit: 1000 });
  return runs.sort((a, b) => a.scheduledTime - b.scheduledTime || a.seq - b.seq);
}

/** Moves the clock in steps, letting the daemon settle after each. */
async function walk(clock: ManualClock, d: TestDaemon, to: number, step = 5 * MIN): Promise<void> {
  while (clock.t < to) {
    await clock.advance(Math.min(step, to - clock.t));
    await d.quiesce();
  }
  await d.quiesce();
}

describe.each(LEDGERS)('on a %s ledger', (kind) => {
  afterAll(dropLedgers);

  it('a recurring window across the Berlin spring-forward night: fires inside are skipped, named, never sent; a manual trigger runs', async () => {
    // 01:00 CET + 3 h of elapsed time: 00:00Z to 03:00Z (05:00 CEST) on 2026-03-29
    const clock = new ManualClock(at('2026-03-28T23:40:00Z'));
    const start = sink.requests.length;
    daemon = await startTestDaemon(
      clock,
      [
        manifest('cal', [
          job('berlin', '*/30 * * * *', {
            timezone: 'Europe/Berlin',
            policy: { blackout: [{ cron: '0 1 * * *', duration_seconds: 3 * 3600 }] },
          }),
        ]),
      ],
      freshLedger(kind),
    );
    const d = daemon;
    await walk(clock, d, at('2026-03-29T01:10:00Z'));
    const manual = await d.scheduler.trigger('cal', 'berlin');
    expect(manual.admission).toBe('started');
    await walk(clock, d, at('2026-03-29T03:40:00Z'));
    const runs = (await runsOf(d, 'cal', 'berlin')).filter((r) => r.trigger === 'schedule');
    const reason = 'blackout: window 0 (cron "0 1 * * *", 10800 s from 2026-03-29T01:00:00+01:00)';
    expect(runs.map((r) => [iso(r.scheduledTime), r.outcome, r.error])).toEqual([
      ['2026-03-29T00:00:00.000Z', 'skipped', reason], // 01:00 CET
      ['2026-03-29T00:30:00.000Z', 'skipped', reason],
      ['2026-03-29T01:00:00.000Z', 'skipped', reason], // 03:00 CEST, after the gap
      ['2026-03-29T01:30:00.000Z', 'skipped', reason],
      ['2026-03-29T02:00:00.000Z', 'skipped', reason],
      ['2026-03-29T02:30:00.000Z', 'skipped', reason],
      ['2026-03-29T03:00:00.000Z', 'success', null], // 05:00 CEST: the window is over
      ['2026-03-29T03:30:00.000Z', 'success', null],
    ]);
    expect(hits('/berlin', start)).toBe(3); // the manual run and the two after the window
    expect((await d.store.getRun(manual.run.id))?.outcome).toBe('success');
  });

  it('a holiday file and a date range met by catch-up across the New York 25-hour day: skipped, not missed; the newest outside runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-cal-'));
    writeFileSync(join(dir, 'holidays.txt'), '# US\n2026-11-01 # a Sunday\n2026-12-25\n');
    const file = join(dir, 'cal.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        app: 'hol',
        jobs: [
          {
            ...job('hourly', '0 * * * *', {
              timezone: 'America/New_York',
              policy: {
                catchup: { mode: 'latest' },
                blackout: [
                  { dates_file: 'holidays.txt' },
                  { from: '2026-11-02T00:00:00-05:00', to: '2026-11-02T00:30:00-05:00' },
                ],
              },
            }),
            auth: { secret_refs: ['raw:test-secret-0123456789'] },
          },
        ],
      }),
    );
    const loaded = await loadManifests([file]);
    expect(loaded.errors).toEqual([]);
    const ledger = freshLedger(kind);
    const start = sink.requests.length;
    // up just before the holiday (23:30 EDT on Oct 31), then down across all of it
    const clock = new ManualClock(at('2026-11-01T03:30:00Z'));
    daemon = await startTestDaemon(clock, loaded.manifests, ledger);
    await daemon.quiesce();
    await daemon.stop();
    daemon = undefined;
    clock.t = at('2026-11-02T06:30:00Z'); // 01:30 EST on Nov 2
    daemon = await startTestDaemon(clock, loaded.manifests, ledger);
    const d = daemon;
    await d.quiesce();
    const runs = await runsOf(d, 'hol', 'hourly');
    const holiday = runs.filter((r) => r.error === 'blackout: window 0 (holidays.txt: 2026-11-01)');
    // 25 hourly fires on the 25-hour day: 00:00 EDT (04:00Z) … 23:00 EST (2026-11-02T04:00Z)
    expect(holiday.map((r) => iso(r.scheduledTime))[0]).toBe('2026-11-01T04:00:00.000Z');
    expect(holiday.map((r) => iso(r.scheduledTime)).at(-1)).toBe('2026-11-02T04:00:00.000Z');
    expect(holiday).toHaveLength(25);
    expect(new Set(holiday.map((r) => r.outcome))).toEqual(new Set(['skipped']));
    expect(
      runs.map((r) => [iso(r.scheduledTime), r.trigger, r.outcome, r.error]).slice(25),
    ).toEqual([
      [
        '2026-11-02T05:00:00.000Z',
        'schedule',
        'skipped',
        'blackout: window 1 (2026-11-02T00:00:00-05:00 to 2026-11-02T00:30:00-05:00)',
      ],
      ['2026-11-02T06:00:00.000Z', 'catchup', 'success', null],
    ]);
    expect(runs.filter((r) => r.outcome === 'missed')).toEqual([]);
    expect(hits('/hourly', start)).toBe(1);
  });

  it('skip --next and --at: durable across a restart and across downtime, consumed once, idempotent; a fire planned ahead ends skipped', async () => {
    const T0 = at('2026-01-10T12:04:00Z');
    const clock = new ManualClock(T0);
    const ledger = freshLedger(kind);
    const start = sink.requests.length;
    const m = [manifest('sk', [job('ten', '*/10 * * * *')])];
    daemon = await startTestDaemon(clock, m, ledger);
    const s1 = await daemon.scheduler.skip('sk', 'ten', { next: true }, 'cli');
    expect(s1).toEqual({
      created: true,
      skip: { app: 'sk', job: 'ten', at: at('2026-01-10T12:10:00Z'), by: 'cli', since: T0 },
    });
    // asked again (a retried call): the same skip, not the one after
    expect(await daemon.scheduler.skip('sk', 'ten', { next: true }, 'ui')).toEqual({
      ...s1,
      created: false,
    });
    const s2 = await daemon.scheduler.skip(
      'sk',
      'ten',
      { at: at('2026-01-10T12:20:00Z') },
      'ops-token',
    );
    expect(s2.created).toBe(true);
    await expect(
      daemon.scheduler.skip('sk', 'ten', { at: at('2026-01-10T12:25:00Z') }, 'cli'),
    ).rejects.toThrow(
      '2026-01-10T12:25:00Z is not a fire of sk/ten (its next fire is 2026-01-10T12:10:00Z)',
    );
    await expect(
      daemon.scheduler.skip('sk', 'ten', { at: at('2026-01-10T12:00:00Z') }, 'cli'),
    ).rejects.toThrow('2026-01-10T12:00:00Z is not in the future');
    await expect(daemon.scheduler.skip('sk', 'nope', { next: true }, 'cli')).rejects.toThrow(
      'no job "sk/nope"',
    );
    expect((await daemon.store.skips()).map((s) => [iso(s.at), s.by])).toEqual([
      ['2026-01-10T12:10:00.000Z', 'cli'],
      ['2026-01-10T12:20:00.000Z', 'ops-token'],
    ]);

    // a restart before the first instant keeps both
    await daemon.stop();
    daemon = await startTestDaemon(clock, m, ledger);
    expect(daemon.scheduler.skipsOf('sk/ten').map((s) => iso(s.at))).toEqual([
      '2026-01-10T12:10:00.000Z',
      '2026-01-10T12:20:00.000Z',
    ]);
    await walk(clock, daemon, at('2026-01-10T12:12:00Z'), MIN);
    // the first came while up: recorded skipped, consumed with its row
    expect((await daemon.store.skips()).map((s) => iso(s.at))).toEqual([
      '2026-01-10T12:20:00.000Z',
    ]);
    // down across the second and the next one: catch-up skips the one, runs the other
    await daemon.stop();
    clock.t = at('2026-01-10T12:35:00Z');
    daemon = await startTestDaemon(clock, m, ledger);
    const d = daemon;
    await d.quiesce();
    expect(await d.store.skips()).toEqual([]);
    expect(d.scheduler.skipsOf('sk/ten')).toEqual([]);
    const runs = await runsOf(d, 'sk', 'ten');
    expect(runs.map((r) => [iso(r.scheduledTime), r.trigger, r.outcome, r.error])).toEqual([
      ['2026-01-10T12:10:00.000Z', 'schedule', 'skipped', 'skip: by cli'],
      ['2026-01-10T12:20:00.000Z', 'schedule', 'skipped', 'skip: by ops-token'],
      ['2026-01-10T12:30:00.000Z', 'catchup', 'success', null],
    ]);
    expect(hits('/ten', start)).toBe(1);

    // a fire already planned ahead (a second before its instant): ends skipped, never sent
    clock.t = at('2026-01-10T12:39:59Z');
    await clock.advance(0);
    await d.quiesce();
    const planned = (await runsOf(d, 'sk', 'ten')).at(-1);
    expect([iso(planned!.scheduledTime), planned!.phase]).toEqual([
      '2026-01-10T12:40:00.000Z',
      'planned',
    ]);
    const s3 = await d.scheduler.skip('sk', 'ten', { next: true }, 'ui');
    expect(iso(s3.skip.at)).toBe('2026-01-10T12:40:00.000Z');
    // asked again before the instant (the planned run already ended skipped): the same skip
    expect(await d.scheduler.skip('sk', 'ten', { next: true }, 'cli')).toEqual({
      ...s3,
      created: false,
    });
    await walk(clock, d, at('2026-01-10T12:41:00Z'), 1000);
    const after = await d.store.getRun(planned!.id);
    expect([after?.outcome, after?.error]).toEqual(['skipped', 'skip: by ui']);
    expect(await d.store.skips()).toEqual([]);
    expect(d.scheduler.skipsOf('sk/ten')).toEqual([]);
    expect(hits('/ten', start)).toBe(1);
    // the schedule goes on
    await walk(clock, d, at('2026-01-10T12:51:00Z'), MIN);
    expect(hits('/ten', start)).toBe(2);
  });
});
