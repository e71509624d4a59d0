/**
 * Freeze (SPEC §16) in the daemon, on SQLite and PostgreSQL with a real HTTP sink and a manual
 * clock: while frozen nothing starts — a burst of manual triggers is recorded `skipped` with the
 * reason and who, scheduled fires record nothing, a backfill waits, a queued run stays queued —
 * while the run in flight finishes; the unfreeze catches the schedule up through its catch-up
 * policy (the newest fire runs, the others are recorded `missed` with reason `frozen`), the
 * queue and the backfill move on. A freeze survives a restart; `until` ends it by itself; pause
 * takes the same note.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/common.js';
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

const T0 = Date.UTC(2026, 0, 10, 12, 0, 30);
const MIN = 60_000;
let sink: Sink;
let daemon: TestDaemon | undefined;

beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

function job(name: string, policy: Record<string, unknown> = {}) {
  return {
    name,
    schedule: '* * * * *',
    request: { url: `${sink.url}/${name}` },
    policy: { retries: { max_attempts: 1 }, timeout_seconds: 10, ...policy },
  };
}

/** Requests the sink received for `path` since `from` (an index into its requests). */
const hits = (path: string, from: number): number =>
  sink.requests.slice(from).filter((r) => r.url === path).length;

describe.each(LEDGERS)('on a %s ledger', (kind) => {
  afterAll(dropLedgers);

  it('a burst of manual triggers, scheduled fires, a backfill and the queue: nothing starts while frozen; the unfreeze catches up explicitly', async () => {
    const clock = new ManualClock(T0);
    const start = sink.requests.length;
    let slow = true;
    sink.setScript((_i, r) =>
      r.url === '/q' && slow ? { status: 200, delayMs: 400 } : { status: 200 },
    );
    daemon = await startTestDaemon(
      clock,
      [
        manifest('fz', [
          job('tick', { concurrency: 'Allow' }),
          job('q', { concurrency: 'Enqueue', max_concurrent: 1 }),
        ]),
      ],
      freshLedger(kind),
    );
    const d = daemon;
    // one run in flight and one queued behind it, then the freeze
    const first = await d.scheduler.trigger('fz', 'q');
    clock.t += 1; // a manual run key is per instant: two triggers in one ms are one run
    const queued = await d.scheduler.trigger('fz', 'q');
    expect([first.admission, queued.admission]).toEqual(['started', 'queued']);
    const f = await d.scheduler.freeze(
      { app: 'fz', job: null, reason: 'duplicates suspected', until: null },
      'cli',
    );
    expect(f).toMatchObject({ app: 'fz', job: null, by: 'cli', since: T0 + 1 });
    expect(await d.store.freezes()).toEqual([f]);

    // a burst of manual triggers: every one recorded skipped, with the reason and who
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => d.scheduler.trigger('fz', i % 2 ? 'tick' : 'q')),
    );
    expect(new Set(burst.map((b) => b.admission))).toEqual(new Set(['skipped']));
    for (const b of burst) {
      expect(b.run.outcome).toBe('skipped');
      expect(b.run.error).toBe('frozen: duplicates suspected (by cli)');
    }
    // a backfill while frozen: created, but it hands out nothing
    const bf = await d.scheduler.backfill(
      {
        app: 'fz',
        job: 'tick',
        from: T0 - 5 * MIN,
        to: T0 - 2 * MIN,
        onlyMissing: false,
        parallel: 2,
        stopAfterFailures: null,
      },
      'cli',
    );
    // the run in flight finishes; the queued one stays queued
    await until(
      async () => ((await d.store.getRun(first.run.id))?.phase === 'ended' ? true : undefined),
      10_000,
      'the run in flight to end',
    );
    expect((await d.store.getRun(first.run.id))?.outcome).toBe('success');
    // three scheduled fires come and go (12:01, 12:02, 12:03)
    for (let m = 0; m < 3; m++) {
      await clock.advance(MIN);
      await d.quiesce();
    }
    await d.quiesce();
    expect((await d.store.getRun(queued.run.id))?.phase).toBe('queued');
    expect(sink.requests.length - start).toBe(1); // only the run already in flight
    expect(hits('/tick', start)).toBe(0);
    const scheduled = await d.store.listRuns({ app: 'fz', job: 'tick', limit: 1000 });
    expect(scheduled.filter((r) => r.trigger !== 'manual')).toEqual([]);
    expect((await d.store.getBackfill(bf.id))?.counts).toMatchObject({ pending: 3, active: 0 });

    // unfreeze: the queue moves, the backfill runs, the schedule catches up explicitly
    slow = false;
    await d.scheduler.unfreeze('fz', null, 'ui');
    expect(await d.store.freezes()).toEqual([]);
    await until(
      async () => {
        const b = await d.store.getBackfill(bf.id);
        const q = await d.store.getRun(queued.run.id);
        return b?.state === 'done' && q?.outcome === 'success' ? true : undefined;
      },
      15_000,
      'the backfill and the queued run',
    ).catch(async (err: Error) => {
      const b = await d.store.getBackfill(bf.id);
      const q = await d.store.getRun(queued.run.id);
      throw new Error(`${err.message}: ${JSON.stringify(b)} ${JSON.stringify(q)}`);
    });
    await d.quiesce();
    const runs = await d.store.listRuns({ app: 'fz', job: 'tick', limit: 1000 });
    const missed = runs.filter((r) => r.outcome === 'missed');
    const caught = runs.filter((r) => r.trigger === 'catchup');
    const at = (ms: number) => new Date(ms).toISOString();
    expect(caught.map((r) => at(r.scheduledTime))).toEqual(['2026-01-10T12:03:00.000Z']);
    expect(missed.map((r) => at(r.scheduledTime)).sort()).toEqual([
      '2026-01-10T12:01:00.000Z',
      '2026-01-10T12:02:00.000Z',
    ]);
    for (const r of missed)
      expect(r.error).toMatch(/^missed: frozen: duplicates suspected \(by cli\)/);
    // the q job's schedule too: its 12:03 fire was caught up (queued behind nothing)
    const qRuns = await d.store.listRuns({ app: 'fz', job: 'q', limit: 1000 });
    expect(qRuns.filter((r) => r.outcome === 'missed')).toHaveLength(2);
    // after the thaw the schedule fires again as usual
    await clock.advance(MIN);
    await d.quiesce();
    await until(() => (hits('/tick', start) >= 5 ? true : undefined), 10_000, 'the 12:04 fire');
    expect(hits('/tick', start)).toBe(5); // 3 backfill + 1 catch-up + 12:04
  });

  it('a freeze survives a restart; until ends it by itself; a job-level freeze inside the app; pause takes a note', async () => {
    const clock = new ManualClock(T0);
    const start = sink.requests.length;
    sink.setScript(() => ({ status: 200 }));
    const ledger = freshLedger(kind);
    const m = [manifest('fy', [job('a', { concurrency: 'Allow' }), job('b')])];
    daemon = await startTestDaemon(clock, m, ledger);
    await daemon.scheduler.freeze(
      { app: 'fy', job: 'a', reason: 'vendor outage', until: T0 + 10 * MIN },
      'api',
    );
    expect((await daemon.scheduler.trigger('fy', 'b')).admission).toBe('started');
    await daemon.scheduler.setPaused('fy', 'b', true, { reason: 'migration', by: 'cli' });
    expect(daemon.scheduler.pauseNote('fy/b')).toEqual({
      reason: 'migration',
      by: 'cli',
      since: T0,
    });
    await daemon.quiesce();
    await daemon.stop();
    clock.t = T0 + 3 * MIN;
    daemon = await startTestDaemon(clock, m, ledger);
    const d = daemon;
    // still frozen after the restart, and b still paused with its note
    expect((await d.scheduler.freezeList()).map((f) => f.reason)).toEqual(['vendor outage']);
    expect(d.scheduler.pauseNote('fy/b')).toMatchObject({ reason: 'migration', by: 'cli' });
    const t = await d.scheduler.trigger('fy', 'a');
    expect(t.admission).toBe('skipped');
    expect(t.run.error).toBe('frozen: vendor outage (by api)');
    await d.quiesce();
    expect(hits('/a', start)).toBe(0);
    // until comes: the freeze ends by itself and the fires while frozen are caught up
    for (let i = 0; i < 8; i++) {
      await clock.advance(MIN);
      await d.quiesce();
    }
    await until(
      async () => ((await d.store.freezes()).length === 0 ? true : undefined),
      10_000,
      'the freeze to end at until',
    );
    await d.quiesce();
    const runs = await d.store.listRuns({ app: 'fy', job: 'a', limit: 1000 });
    const missed = runs.filter((r) => r.outcome === 'missed');
    expect(missed.length).toBe(9); // 12:01 … 12:10 less the newest, which ran
    for (const r of missed) expect(r.error).toMatch(/frozen: vendor outage \(by api\)/);
    expect(runs.filter((r) => r.trigger === 'catchup')).toHaveLength(1);
    expect(await d.scheduler.trigger('fy', 'a')).toMatchObject({ admission: 'started' });
  });
});
