/**
 * Backfills in the daemon (SPEC §16), on SQLite and PostgreSQL with a real HTTP sink: the plan
 * (a dry run) is exactly what runs, each key once, in order, never more than `parallel` (nor the
 * job's `max_concurrent`) at once, keys that succeeded left out, `only_missing`, the safety gate,
 * cancel, and a resume after a crash (runs left running are run again, nothing twice).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { planBackfill } from '../../src/daemon/backfill/plan.js';
import { jobKey } from '../../src/daemon/registry.js';
import { newRun } from '../../src/daemon/runs.js';
import { PostgresStore } from '../../src/daemon/store/postgres.js';
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import type { BackfillRecord, RunRecord, Store } from '../../src/daemon/store/types.js';
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
import { startSink, type RecordedRequest, type Sink } from '../helpers/sink.js';

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

async function openStore(ledger: string): Promise<Store> {
  if (!ledger.startsWith('postgres')) return openSqliteStore(ledger);
  const store = PostgresStore.open(ledger);
  await store.migrate();
  return store;
}

const keyOf = (r: RecordedRequest): string => String(r.headers['x-cron-run-key']);
const finished = (d: TestDaemon, id: string): Promise<BackfillRecord> =>
  until(
    async () => {
      const b = await d.store.getBackfill(id);
      return b && b.state !== 'running' && b.counts.active === 0 ? b : undefined;
    },
    30_000,
    `backfill ${id} to end`,
  );

/** Most requests of `path` the sink held at once (head arrived, response not yet finished). */
function peakAtSink(path: string): number {
  const edges: [number, number][] = [];
  for (const r of sink.requests.filter((q) => q.url === path)) {
    edges.push([r.receivedAtPerf, 1], [r.handlerEndPerf ?? Infinity, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let n = 0;
  let peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (n += d));
  return peak;
}

describe.each(LEDGERS)('on a %s ledger', (kind) => {
  afterAll(dropLedgers);

  it('runs the dry run, each key once, in order, at most parallel at once; succeeded keys left out', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 20 }));
    daemon = await startTestDaemon(
      clock,
      [manifest('bf', [job('par', { concurrency: 'Allow' })])],
      freshLedger(kind),
    );
    const d = daemon;
    const reg = d.scheduler.jobs().get(jobKey('bf', 'par'))!;
    // one instant already succeeded: never run again
    const done = newRun(reg, 0, T0 - 50 * MIN - 30_000, 'schedule', T0, {
      phase: 'ended',
      outcome: 'success',
      endedAt: T0,
    });
    await d.store.write([{ kind: 'insert', run: done }]);
    const spec = {
      app: 'bf',
      job: 'par',
      from: T0 - 60 * MIN,
      to: T0,
      onlyMissing: false,
      parallel: 4,
      stopAfterFailures: null,
    };
    const dry = await planBackfill(d.store, reg, spec);
    if (!dry.ok) throw new Error(dry.message);
    expect(dry.instants).toBe(60);
    expect(dry.items).toHaveLength(59);
    expect(dry.items.map((i) => i.runKey)).not.toContain(done.runKey);

    let inFlight = 0;
    let peak = 0;
    d.scheduler.events.on('run-launched', (r) => {
      if (r.trigger === 'backfill') peak = Math.max(peak, ++inFlight);
    });
    d.scheduler.events.on('run-ended', (r) => {
      if (r.trigger === 'backfill' && r.attempts > 0) inFlight -= 1;
    });
    const before = sink.requests.length;
    const b = await d.scheduler.backfill(spec, 'cli');
    expect(b).toMatchObject({ state: 'running', total: 59, createdBy: 'cli' });
    const end = await finished(d, b.id);
    expect(end).toMatchObject({ state: 'done', reason: null });
    expect(end.counts).toEqual({ pending: 0, active: 0, succeeded: 59, failed: 0, other: 0 });
    const got = sink.requests.slice(before).map(keyOf);
    // each once (4 at a time may arrive out of order on their connections)
    expect([...got].sort()).toEqual(dry.items.map((i) => i.runKey).sort());
    expect(new Set(got).size).toBe(got.length);
    expect(peak).toBeLessThanOrEqual(4);
    expect(peak).toBeGreaterThan(1);
    expect(peakAtSink('/par')).toBeLessThanOrEqual(4);
    const runs = await d.store.listRuns({ app: 'bf', job: 'par', limit: 1000 });
    expect(runs.filter((r) => r.trigger === 'backfill')).toHaveLength(59);
    // a second backfill of the same range has nothing left to run
    const again = await planBackfill(d.store, reg, spec);
    expect(again.ok && again.items.length).toBe(0);
  });

  it("through the job's lane: max_concurrent 1 bounds a parallel 3 backfill; only_missing; the safety gate stops it", async () => {
    const clock = new ManualClock(T0);
    daemon = await startTestDaemon(
      clock,
      [manifest('bf', [job('one', { concurrency: 'Forbid' })])],
      freshLedger(kind),
    );
    const d = daemon;
    const reg = d.scheduler.jobs().get(jobKey('bf', 'one'))!;
    // an instant with a failed run: only_missing leaves it out, a plain backfill runs it
    const failed = newRun(reg, 0, T0 - 10 * MIN - 30_000, 'schedule', T0, {
      phase: 'ended',
      outcome: 'retries_exhausted',
      endedAt: T0,
    });
    await d.store.write([{ kind: 'insert', run: failed }]);
    const spec = {
      app: 'bf',
      job: 'one',
      from: T0 - 20 * MIN,
      to: T0,
      onlyMissing: true,
      parallel: 3,
      stopAfterFailures: 3,
    };
    const plain = await planBackfill(d.store, reg, { ...spec, onlyMissing: false });
    const missing = await planBackfill(d.store, reg, spec);
    expect(plain.ok && plain.items.length).toBe(20);
    expect(missing.ok && missing.items.length).toBe(19);

    // the sink fails from the 6th request of this job on: 5 succeed, then 3 fail, then it stops
    let seen = 0;
    sink.setScript((_i, r) => (r.url === '/one' && ++seen > 5 ? { status: 500 } : { status: 200 }));
    let launched = 0;
    let maxActive = 0;
    d.scheduler.events.on('run-launched', () => {
      launched += 1;
      maxActive = Math.max(maxActive, d.scheduler.activeCount('bf/one'));
    });
    const b = await d.scheduler.backfill(spec, 'api');
    const end = await finished(d, b.id);
    expect(end.state).toBe('stopped');
    expect(end.reason).toMatch(/stopped after 3 failed run\(s\)/);
    expect(end.counts.succeeded).toBe(5);
    expect(end.counts.failed).toBe(3);
    expect(end.counts.pending).toBe(19 - 8);
    expect(launched).toBe(8);
    expect(maxActive).toBeLessThanOrEqual(1);
    // no run was skipped for lack of room: a backfill waits for the lane
    const runs = await d.store.listRuns({ app: 'bf', job: 'one', outcome: 'skipped' });
    expect(runs).toEqual([]);
  });

  it('cancel stops handing out runs; the runs in flight finish', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 100 }));
    daemon = await startTestDaemon(
      clock,
      [manifest('bf', [job('slow', { concurrency: 'Allow' })])],
      freshLedger(kind),
    );
    const d = daemon;
    const b = await d.scheduler.backfill(
      {
        app: 'bf',
        job: 'slow',
        from: T0 - 30 * MIN,
        to: T0,
        onlyMissing: false,
        parallel: 2,
        stopAfterFailures: null,
      },
      'cli',
    );
    await until(() => (d.ended.length >= 2 ? true : undefined), 10_000, 'two runs');
    const c = await d.scheduler.cancelBackfill(b.id, 'cli');
    expect(c).toMatchObject({ state: 'cancelled', reason: 'cancelled by cli' });
    const end = await finished(d, b.id);
    expect(end.counts.succeeded).toBeGreaterThanOrEqual(2);
    expect(end.counts.pending).toBe(30 - end.counts.succeeded);
    await expect(d.scheduler.cancelBackfill(b.id, 'cli')).rejects.toThrow(/already ended/);
  });

  it('resumes after a crash: runs left running are run again, the rest in order, no key twice', async () => {
    const clock = new ManualClock(T0);
    const ledger = freshLedger(kind);
    const m = [manifest('bf', [job('res', { concurrency: 'Allow' })])];
    sink.setScript(() => ({ status: 200 }));
    daemon = await startTestDaemon(clock, m, ledger);
    const reg = daemon.scheduler.jobs().get(jobKey('bf', 'res'))!;
    const spec = {
      app: 'bf',
      job: 'res',
      from: T0 - 10 * MIN,
      to: T0,
      onlyMissing: false,
      parallel: 2,
      stopAfterFailures: null,
    };
    const plan = await planBackfill(daemon.store, reg, spec);
    if (!plan.ok) throw new Error(plan.message);
    await daemon.stop();
    daemon = undefined;
    // what a daemon killed mid-way leaves: items 0-2 succeeded, 3-4 running, the rest not handed out
    const store = await openStore(ledger);
    const id = 'bf-crashed-0001';
    await store.write([
      {
        kind: 'backfill-create',
        backfill: { ...spec, id, createdBy: 'cli', createdAt: T0 },
        items: plan.items,
      },
    ]);
    const left: RunRecord[] = [];
    for (const item of plan.items.slice(0, 5)) {
      const ok = item.position < 3;
      const run = {
        ...newRun(reg, 0, item.scheduledTime, 'backfill', T0),
        runKey: item.runKey,
        phase: ok ? ('ended' as const) : ('running' as const),
        outcome: ok ? ('success' as const) : null,
        startedAt: T0,
        endedAt: ok ? T0 : null,
        attempts: 1,
      };
      const [res] = await store.write([
        { kind: 'insert', run },
        { kind: 'backfill-link', backfillId: id, position: item.position, runId: run.id },
      ]);
      if (res?.kind === 'recorded') left.push(res.run);
    }
    await store.close();

    const before = sink.requests.length;
    daemon = await startTestDaemon(clock, m, ledger);
    const end = await finished(daemon, id);
    expect(end.state).toBe('done');
    expect(end.counts).toEqual({ pending: 0, active: 0, succeeded: 10, failed: 0, other: 0 });
    const got = sink.requests.slice(before).map(keyOf);
    expect([...got].sort()).toEqual(
      plan.items
        .slice(3)
        .map((i) => i.runKey)
        .sort(),
    );
    // the crashed runs are in the ledger as crashed, their keys succeeded once by the new runs
    for (const r of left.slice(3))
      expect((await daemon.store.getRun(r.id))?.outcome).toBe('crashed');
    const succeeded = (await daemon.store.listRuns({ app: 'bf', job: 'res', outcome: 'success' }))
      .map((r) => r.runKey)
      .sort();
    expect(succeeded).toEqual(plan.items.map((i) => i.runKey).sort());
  });
});
