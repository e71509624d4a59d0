/**
 * Overlap policies of the daemon with an injected clock, a real ledger (SQLite and PostgreSQL,
 * the same tests) and a real HTTP sink: Forbid, Replace, Enqueue (FIFO, queue_full),
 * max_concurrent, and that skipped / queue-full / stopped runs are neither
 * retried nor failures.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/daemon/store/types.js';
import {
  dropLedgers,
  freshLedger,
  LEDGERS,
  manifest,
  rewindCheckpoints,
  startTestDaemon,
  type TestDaemon,
} from '../helpers/daemon.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { startSink, type Sink } from '../helpers/sink.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 30);
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

function job(name: string, policy: Record<string, unknown>) {
  return {
    name,
    schedule: '* * * * *',
    request: { url: `${sink.url}/${name}` },
    policy: { retries: { max_attempts: 1 }, timeout_seconds: 10, ...policy },
  };
}

const byId = (runs: RunRecord[], id: string) => runs.find((r) => r.id === id);

describe.each(LEDGERS)('on a %s ledger', (kind) => {
  afterAll(dropLedgers);

  it('Forbid: a fire while the previous run is active is recorded skipped, with no attempt', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 400 }));
    daemon = await startTestDaemon(
      clock,
      [manifest('p', [job('forbid', { concurrency: 'Forbid' })])],
      freshLedger(kind),
    );
    const first = await daemon.scheduler.trigger('p', 'forbid');
    expect(first.admission).toBe('started');
    await clock.advance(30_000); // the 00:01 fire arrives while the manual run is active
    const ended = await daemon.waitEnded(2);
    const skipped = ended.find((r) => r.trigger === 'schedule');
    expect(skipped).toMatchObject({
      phase: 'ended',
      outcome: 'skipped',
      attempts: 0,
      startedAt: null,
    });
    expect(byId(ended, first.run.id)).toMatchObject({ outcome: 'success', attempts: 1 });
    const metrics = await daemon.scheduler.metrics.registry.metrics();
    expect(metrics).toMatch(/cronix_job_run_total\{job="p\/forbid",outcome="skipped"\} 1/);
    expect(metrics).toMatch(/cronix_job_run_total\{job="p\/forbid",outcome="success"\} 1/);
  });

  it('Replace: the oldest run is stopped (request aborted) and the new one starts', async () => {
    const clock = new ManualClock(T0);
    let n = 0;
    sink.setScript(() => (n++ === 0 ? { hang: true } : { status: 200 }));
    const before = sink.requests.length;
    daemon = await startTestDaemon(
      clock,
      [manifest('p', [job('replace', { concurrency: 'Replace' })])],
      freshLedger(kind),
    );
    const first = await daemon.scheduler.trigger('p', 'replace');
    await sink.waitForRequests(before + 1);
    await clock.advance(30_000);
    const ended = await daemon.waitEnded(2);
    expect(byId(ended, first.run.id)).toMatchObject({ outcome: 'stopped', phase: 'ended' });
    expect(ended.find((r) => r.trigger === 'schedule')).toMatchObject({ outcome: 'success' });
    expect(await sink.requests[before]!.whenClosed).toBeGreaterThan(0); // the aborted request's connection was closed
    expect(sink.requests.length - before).toBe(2); // no retry of the stopped run
  });

  it('Enqueue: FIFO across scheduled and manual fires; queue_full past queue_max', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 200 }));
    const before = sink.requests.length;
    daemon = await startTestDaemon(
      clock,
      [manifest('p', [job('queue', { concurrency: 'Enqueue', queue_max: 2 })])],
      freshLedger(kind),
    );
    const a = await daemon.scheduler.trigger('p', 'queue'); // starts
    await clock.advance(30_000); // scheduled fire B → queued
    const c = await daemon.scheduler.trigger('p', 'queue'); // manual C → queued
    const d = await daemon.scheduler.trigger('p', 'queue'); // manual D → queue_full
    expect([a.admission, c.admission, d.admission]).toEqual(['started', 'queued', 'queue_full']);
    expect(daemon.scheduler.queueLength('p/queue')).toBe(2);
    await daemon.waitEnded(4);
    const order = sink.requests.slice(before).map((r) => r.headers['x-cron-run-id']);
    const b = daemon.ended.find((r) => r.trigger === 'schedule')!;
    expect(order).toEqual([a.run.id, b.id, c.run.id]);
    expect(byId(daemon.ended, d.run.id)).toMatchObject({ outcome: 'queue_full', attempts: 0 });
    const rows = await daemon.store.listRuns({ app: 'p', job: 'queue' });
    expect(rows.filter((r) => r.outcome === 'success')).toHaveLength(3);
  });

  it('max_concurrent N: N runs at once, the rest skipped under Forbid', async () => {
    const clock = new ManualClock(T0);
    // long enough that none of the first three has ended when the last trigger comes
    sink.setScript(() => ({ status: 200, delayMs: 2000 }));
    daemon = await startTestDaemon(
      clock,
      [manifest('p', [job('three', { concurrency: 'Forbid', max_concurrent: 3 })])],
      freshLedger(kind),
    );
    const results = [];
    for (let i = 0; i < 5; i++) {
      results.push(await daemon.scheduler.trigger('p', 'three'));
      await clock.advance(1); // a new millisecond: a new run key
    }
    expect(results.map((r) => r.admission)).toEqual([
      'started',
      'started',
      'started',
      'skipped',
      'skipped',
    ]);
    expect(daemon.scheduler.activeCount('p/three')).toBe(3);
    await daemon.waitEnded(5);
    expect(daemon.ended.filter((r) => r.outcome === 'success')).toHaveLength(3);
  });

  it('a succeeded run key is never dispatched again; a fired instant never fires again', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 100 }));
    const before = sink.requests.length;
    daemon = await startTestDaemon(
      clock,
      [manifest('p', [job('dup', { concurrency: 'Allow' })])],
      freshLedger(kind),
    );
    // two manual triggers in the same millisecond share a run key: the second is a duplicate
    const [one, two] = await Promise.all([
      daemon.scheduler.trigger('p', 'dup'),
      daemon.scheduler.trigger('p', 'dup'),
    ]);
    expect(one.run.runKey).toBe(two.run.runKey);
    expect([one.admission, two.admission]).toEqual(['started', 'skipped']);
    expect(two.run).toMatchObject({
      outcome: 'duplicate',
      error: `run key is being run by run ${one.run.id}`,
    });
    await clock.advance(30_000);
    await daemon.waitEnded(3);
    const done = daemon.ended.find((r) => r.trigger === 'schedule')!;
    expect(done.outcome).toBe('success');
    const replay = await daemon.scheduler.replay(done.id); // a succeeded run replays under a fresh key
    expect(replay.run.runKey).not.toBe(done.runKey);
    await daemon.waitEnded(4);
    // a replay of the manual success's duplicate keeps the key, which already succeeded
    const again = await daemon.scheduler.replay(two.run.id);
    expect(again.run).toMatchObject({
      outcome: 'duplicate',
      error: `run key already succeeded in run ${one.run.id}`,
    });
    // the same scheduled instant again (as after a restart whose checkpoint was lost): not fired
    const ledger = daemon.ledger;
    await daemon.stop();
    await rewindCheckpoints(ledger, Date.UTC(2026, 0, 1, 0, 0, 30));
    daemon = await startTestDaemon(
      clock,
      [manifest('p', [job('dup', { concurrency: 'Allow' })])],
      ledger,
    );
    await settle(20);
    const rows = await daemon.store.listRuns({ app: 'p', job: 'dup' });
    expect(rows.filter((r) => r.runKey === done.runKey).map((r) => r.outcome)).toEqual(['success']);
    expect(sink.requests.length - before).toBe(3); // manual, scheduled, replay
  });
});
