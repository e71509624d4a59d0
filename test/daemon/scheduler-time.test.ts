/**
 * Time behaviour of the daemon on a fake clock: DST transitions per SPEC §3,
 * catch-up after downtime per mode with window and max_runs, delayed manual
 * triggers, pause.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rfc3339Utc } from '../../src/contract/run.js';
import {
  dropLedgers,
  freshLedger,
  LEDGERS,
  manifest,
  startTestDaemon,
  type TestDaemon,
} from '../helpers/daemon.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { startSink, type Sink } from '../helpers/sink.js';

let sink: Sink;
let daemon: TestDaemon | undefined;
beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

const job = (name: string, schedule: string, extra: Record<string, unknown> = {}) => ({
  name,
  schedule,
  request: { url: `${sink.url}/${name}` },
  policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
  ...extra,
});

/** Advances the clock minute by minute (so every tick runs), waiting for each tick's writes. */
async function walk(clock: ManualClock, ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 60_000) {
    await clock.advance(Math.min(60_000, left));
    await daemon?.quiesce();
  }
}

const scheduled = (d: TestDaemon, name: string) =>
  d.ended
    .filter((r) => r.job === name && r.trigger === 'schedule')
    .map((r) => rfc3339Utc(r.scheduledTime))
    .sort();

describe.each(LEDGERS)('on a %s ledger', (kind) => {
  afterAll(dropLedgers);

  describe('DST on a fake clock (America/New_York, 2026)', () => {
    it('spring forward: the fixed-time job fires once at 03:00 EDT; the wildcard job skips the gap', async () => {
      const clock = new ManualClock(Date.UTC(2026, 2, 8, 5, 50)); // 00:50 EST
      daemon = await startTestDaemon(
        clock,
        [
          manifest('dst', [
            job('fixed', '30 2 * * *', { timezone: 'America/New_York' }),
            job('wild', '*/30 * * * *', { timezone: 'America/New_York' }),
          ]),
        ],
        freshLedger(kind),
      );
      await walk(clock, 3 * 3600_000);
      await daemon.waitEnded(7);
      expect(scheduled(daemon, 'fixed')).toEqual(['2026-03-08T07:00:00Z']); // 03:00 EDT, the first instant after the gap
      // 01:00, 01:30 EST, then 03:00, 03:30 EDT: no 02:xx
      expect(scheduled(daemon, 'wild')).toEqual([
        '2026-03-08T06:00:00Z',
        '2026-03-08T06:30:00Z',
        '2026-03-08T07:00:00Z',
        '2026-03-08T07:30:00Z',
        '2026-03-08T08:00:00Z',
        '2026-03-08T08:30:00Z',
      ]);
    });

    it('fall back: the fixed-time job fires once (first pass); the wildcard job fires in both passes', async () => {
      const clock = new ManualClock(Date.UTC(2026, 10, 1, 4, 50)); // 00:50 EDT
      daemon = await startTestDaemon(
        clock,
        [
          manifest('dst', [
            job('fixed', '30 1 * * *', { timezone: 'America/New_York' }),
            job('wild', '30 * * * *', { timezone: 'America/New_York' }),
          ]),
        ],
        freshLedger(kind),
      );
      await walk(clock, 3 * 3600_000);
      await daemon.waitEnded(4);
      expect(scheduled(daemon, 'fixed')).toEqual(['2026-11-01T05:30:00Z']); // 01:30 EDT only
      expect(scheduled(daemon, 'wild')).toEqual([
        '2026-11-01T05:30:00Z',
        '2026-11-01T06:30:00Z',
        '2026-11-01T07:30:00Z',
      ]); // 01:30 EDT, 01:30 EST, 02:30 EST
    });
  });

  describe('catch-up after downtime', () => {
    it('per mode: none, latest, all with window and max_runs; the rest recorded missed', async () => {
      const start = Date.UTC(2026, 0, 1, 0, 0, 30);
      const clock = new ManualClock(start);
      const jobs = [
        job('none', '* * * * *', {
          policy: { concurrency: 'Allow', retries: { max_attempts: 1 }, catchup: { mode: 'none' } },
        }),
        job('latest', '* * * * *'),
        job('all', '* * * * *', {
          policy: {
            concurrency: 'Allow',
            retries: { max_attempts: 1 },
            catchup: { mode: 'all', max_runs: 3 },
          },
        }),
        job('window', '* * * * *', {
          policy: {
            concurrency: 'Allow',
            retries: { max_attempts: 1 },
            catchup: { mode: 'all', window_seconds: 150 },
          },
        }),
      ];
      daemon = await startTestDaemon(clock, [manifest('cu', jobs)], freshLedger(kind));
      const ledger = daemon.ledger;
      await daemon.stop(); // down from 00:00:30 …
      clock.t = Date.UTC(2026, 0, 1, 0, 10, 30); // … to 00:10:30: 10 fires missed per job
      daemon = await startTestDaemon(clock, [manifest('cu', jobs)], ledger);
      await settle(10);
      await daemon.waitEnded(10 + (9 + 1) + (7 + 3) + (7 + 3)); // missed rows end at once, catch-up runs after their request
      await settle(10);
      const rows = await daemon.store.listRuns({ app: 'cu', limit: 1000 });
      const count = (jobName: string, trigger: string, outcome: string) =>
        rows.filter((r) => r.job === jobName && r.trigger === trigger && r.outcome === outcome)
          .length;
      expect(count('none', 'catchup', 'success')).toBe(0);
      expect(count('none', 'schedule', 'missed')).toBe(10);
      expect(count('latest', 'catchup', 'success')).toBe(1);
      expect(count('latest', 'schedule', 'missed')).toBe(9);
      expect(rows.find((r) => r.job === 'latest' && r.trigger === 'catchup')?.scheduledTime).toBe(
        Date.UTC(2026, 0, 1, 0, 10),
      );
      expect(count('all', 'catchup', 'success')).toBe(3);
      expect(count('all', 'schedule', 'missed')).toBe(7);
      expect(count('window', 'catchup', 'success')).toBe(3); // 00:08, 00:09 and 00:10 are within 150 s of 00:10:30
      expect(count('window', 'schedule', 'missed')).toBe(7);
      const metrics = await daemon.scheduler.metrics.registry.metrics();
      expect(metrics).toMatch(/cronix_job_backfill_total\{job="cu\/all"\} 3/);
      expect(metrics).toMatch(/cronix_job_missed_total\{job="cu\/none"\} 10/);
    });
  });

  describe('manual triggers and pause', () => {
    it('a delayed trigger runs at its time; a paused job skips scheduled fires but not manual ones', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 30));
      daemon = await startTestDaemon(
        clock,
        [manifest('m', [job('j', '* * * * *')])],
        freshLedger(kind),
      );
      const delayed = await daemon.scheduler.trigger('m', 'j', { afterSeconds: 90 });
      expect(delayed.admission).toBe('scheduled');
      expect(delayed.run).toMatchObject({ phase: 'queued', dueAt: Date.UTC(2026, 0, 1, 0, 2) });
      await daemon.scheduler.setPaused('m', 'j', true);
      await walk(clock, 120_000);
      await daemon.waitEnded(1);
      expect(daemon.ended.map((r) => r.trigger)).toEqual(['manual']);
      expect(daemon.ended[0]?.id).toBe(delayed.run.id);
      await daemon.scheduler.setPaused('m', 'j', false);
      await walk(clock, 60_000);
      await daemon.waitEnded(2);
      expect(daemon.ended[1]?.trigger).toBe('schedule');
    });

    it('cancel ends a delayed run as stopped before it starts', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 30));
      daemon = await startTestDaemon(
        clock,
        [manifest('m', [job('j', '0 0 1 1 *')])],
        freshLedger(kind),
      );
      const at = Date.UTC(2026, 0, 1, 0, 5);
      const r = await daemon.scheduler.trigger('m', 'j', { at });
      const cancelled = await daemon.scheduler.cancel(r.run.id);
      expect(cancelled).toMatchObject({ phase: 'ended', outcome: 'stopped' });
      await walk(clock, 10 * 60_000);
      expect(daemon.ended.map((e) => e.outcome)).toEqual(['stopped']);
    });
  });

  describe('retention', () => {
    it('deletes ended runs older than the retention, hourly, and keeps the rest', async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 30));
      daemon = await startTestDaemon(
        clock,
        [manifest('r', [job('j', '0 * * * *')])],
        freshLedger(kind),
        2 * 3600_000,
      );
      await walk(clock, 60_000 * 65); // the 01:00 fire runs and ends
      await daemon.waitEnded(1);
      const id = daemon.ended[0]!.id;
      expect(await daemon.store.getRun(id)).not.toBeNull();
      await walk(clock, 3 * 3600_000); // past the 2 h retention, and past an hourly prune
      await daemon.waitEnded(4);
      expect(await daemon.store.getRun(id)).toBeNull();
      expect((await daemon.store.listRuns({ app: 'r' })).length).toBeGreaterThanOrEqual(2);
    });
  });

  describe('reload', () => {
    it("writes every new schedule's checkpoint before it resolves, in grouped transactions", async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 30));
      daemon = await startTestDaemon(
        clock,
        [manifest('old', [job('j', '0 0 1 1 *')])],
        freshLedger(kind),
      );
      // 10 manifests of 250 new jobs (a manifest holds at most 256)
      const added = Array.from({ length: 10 }, (_, m) =>
        manifest(
          `new${m}`,
          Array.from({ length: 250 }, (_, i) => job(`n${i}`, '0 0 1 1 *')),
        ),
      );
      await daemon.scheduler.reload([manifest('old', [job('j', '0 0 1 1 *')]), ...added]);
      const after = await daemon.store.checkpoints();
      const fresh = after.filter((c) => c.app.startsWith('new'));
      expect(fresh).toHaveLength(2500);
      expect(fresh.every((c) => c.at === clock.now())).toBe(true);
      // the start-up one, written behind start-up but before these (the ledger keeps order)
      expect(after.filter((c) => c.app === 'old')).toHaveLength(1);
    });
  });
});
