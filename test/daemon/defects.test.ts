/**
 * The twelve daemon defects of issue 9, one test each, as they were
 * reproduced: real `cronix serve` processes where the defect lives in the
 * process (data-dir lock, start-up order, hostile input), the real scheduler
 * on a fake clock with a real SQLite ledger and a real HTTP sink elsewhere.
 * Every test failed on the commit before the redesign (see docs/daemon.md).
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/daemon/store/types.js';
import {
  dropLedgers,
  freshLedger,
  LEDGERS,
  manifest,
  startTestDaemon,
  type TestDaemon,
} from '../helpers/daemon.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import {
  api,
  exitWithin,
  manifestDir,
  maxOverlap,
  spawnServe,
  TEST_SECRET,
  type Served,
  until,
} from '../helpers/serve.js';
import { freePort, startSink, type Sink } from '../helpers/sink.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 30);
let sink: Sink;
let daemon: TestDaemon | undefined;
const served: Served[] = [];

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  for (const s of served.splice(0)) s.child.kill('SIGKILL');
});

const job = (name: string, policy: Record<string, unknown> = {}, extra = {}) => ({
  name,
  schedule: '0 0 1 1 *',
  request: { url: `${sink.url}/${name}` },
  policy: { retries: { max_attempts: 1 }, timeout_seconds: 30, ...policy },
  ...extra,
});

const requestsTo = (path: string) => sink.requests.filter((r) => r.url === path);

describe('real processes', () => {
  it('defect 1: a second serve on the same data dir exits 1 at once, naming the holder', async () => {
    const dir = manifestDir('d1', [job('a', {}, { schedule: '* * * * *' })]);
    const first = await spawnServe(dir);
    served.push(first);
    const second = await spawnServe(dir, 0, { waitListening: false });
    served.push(second);
    const exit = await exitWithin(second, 60_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(second.output()).toContain(`in use by another cronix serve (pid ${first.child.pid}`);
    expect(second.output()).not.toContain('"event":"listening"');
  }, 90_000);

  it('defect 2: a taken port stops serve with exit 1 before anything is scheduled', async () => {
    const blocker = createServer();
    const port = await freePort();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
    try {
      const dir = manifestDir('d2', [job('a')]);
      const s = await spawnServe(dir, port, { waitListening: false });
      served.push(s);
      const exit = await exitWithin(s, 60_000);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(s.output()).toContain(`listen 127.0.0.1:${port}: address already in use`);
    } finally {
      blocker.close();
    }
  }, 90_000);

  it('defect 11: a 5,000-deep trigger body is a 400, not a 500', async () => {
    const dir = manifestDir('d11', [job('a')]);
    const s = await spawnServe(dir);
    served.push(s);
    const deep = `{"at": ${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const res = await api(s, 'POST', '/api/v1/jobs/d11/a/trigger', deep);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: { code: 'invalid_request', path: 'at' } });
    expect(((res.json['error'] as Record<string, string>)['message'] ?? '').length).toBeLessThan(
      400,
    );
    expect((await api(s, 'GET', '/healthz')).status).toBe(200);
  }, 20_000);

  it('defect 12: an unset secret stops serve with exit 1 naming the job and the ref', async () => {
    const dir = manifestDir('d12', [job('settle')]);
    const s = await spawnServe(dir, 0, {
      env: { PATH: process.env['PATH'] },
      waitListening: false,
    });
    served.push(s);
    const exit = await exitWithin(s, 60_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(s.output()).toContain('job d12/settle: secret ref env:CRON_SECRET');
    expect(s.output()).toContain('not set');
    expect(s.output()).not.toContain(TEST_SECRET);
  }, 90_000);
});

describe.each(LEDGERS)('the scheduler on a fake clock, on a %s ledger', (kind) => {
  afterAll(dropLedgers);
  const startOn = (clock: ManualClock, manifests: ReturnType<typeof manifest>[]) =>
    startTestDaemon(clock, manifests, freshLedger(kind));

  it('defect 3: delayed triggers sharing an instant deliver their run key once (Enqueue and Allow)', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 50 }));
    daemon = await startOn(clock, [
      manifest('d3', [
        job('q', { concurrency: 'Enqueue' }),
        job('allow', { concurrency: 'Allow' }),
      ]),
    ]);
    const at = T0 + 60_000;
    for (const name of ['q', 'allow']) {
      await daemon.scheduler.trigger('d3', name, { at });
      await daemon.scheduler.trigger('d3', name, { at });
      await daemon.scheduler.trigger('d3', name, { afterSeconds: 60 }); // the same millisecond
    }
    await clock.advance(61_000);
    await daemon.waitEnded(6);
    await settle(20);
    const rows = await daemon.store.listRuns({ app: 'd3' });
    // this ledger's runs only (the other ledger's pass sent the same run keys to the same sink)
    const ours = new Set(rows.map((r) => r.id));
    for (const name of ['q', 'allow']) {
      const sent = requestsTo(`/${name}`).filter((r) =>
        ours.has(r.headers['x-cron-run-id'] as string),
      );
      expect(sent).toHaveLength(1);
    }
    expect(rows.filter((r) => r.outcome === 'success')).toHaveLength(2);
    expect(rows.filter((r) => r.outcome === 'duplicate')).toHaveLength(4);
  });

  it('defect 4: Enqueue max_concurrent 2 with 6 concurrent triggers never runs 3 at once', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 150 }));
    const before = sink.requests.length;
    daemon = await startOn(clock, [
      manifest('d4', [job('two', { concurrency: 'Enqueue', max_concurrent: 2 })]),
    ]);
    const triggers = [];
    for (let i = 0; i < 6; i++) {
      triggers.push(daemon.scheduler.trigger('d4', 'two'));
      clock.t += 1; // one millisecond apart: six run keys
    }
    const admissions = (await Promise.all(triggers)).map((t) => t.admission);
    expect(admissions.filter((a) => a === 'started')).toHaveLength(2);
    let peak = 0;
    const watch = setInterval(
      () => (peak = Math.max(peak, daemon!.scheduler.activeCount('d4/two'))),
      1,
    );
    await daemon.waitEnded(6, 15_000);
    clearInterval(watch);
    const sent = sink.requests.slice(before);
    expect(sent).toHaveLength(6);
    expect(maxOverlap(sent)).toBe(2);
    expect(peak).toBeLessThanOrEqual(2);
  });

  it('defect 5: two Replace fires in one tick leave one active run; no run is stopped twice', async () => {
    const clock = new ManualClock(T0);
    let n = 0;
    sink.setScript(() => (n++ === 0 ? { hang: true } : { status: 200, delayMs: 100 }));
    const before = sink.requests.length;
    daemon = await startOn(clock, [
      manifest('d5', [
        {
          ...job('rep', { concurrency: 'Replace' }),
          schedule: undefined,
          schedules: ['* * * * *', '*/1 * * * *'],
        },
      ]),
    ]);
    const first = await daemon.scheduler.trigger('d5', 'rep');
    await sink.waitForRequests(before + 1);
    await clock.advance(30_000); // both schedules fire at 00:01 in one tick
    await settle(20);
    expect(daemon.scheduler.activeCount('d5/rep')).toBeLessThanOrEqual(1);
    await daemon.waitEnded(3);
    const rows = await daemon.store.listRuns({ app: 'd5' });
    const fires = rows.filter((r) => r.trigger === 'schedule');
    expect(rows.find((r) => r.id === first.run.id)?.outcome).toBe('stopped');
    expect(fires.map((r) => r.outcome).sort()).toEqual(['stopped', 'success']);
    expect(fires.find((r) => r.outcome === 'stopped')?.attempts).toBe(0);
    const sent = sink.requests.slice(before);
    expect(sent).toHaveLength(2); // the first (aborted) and one fire
    expect(maxOverlap(sent)).toBe(1);
  });

  it('defect 6: a 6-hour clock jump goes through catch-up, not 360 schedule runs', async () => {
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200 }));
    daemon = await startOn(clock, [
      manifest('d6', [job('tick', { concurrency: 'Allow' }, { schedule: '* * * * *' })]),
    ]);
    await clock.advance(60_000); // 00:01 fires normally
    await daemon.waitEnded(1);
    clock.t += 6 * 3600_000; // the VM was suspended for six hours
    await clock.advance(1000);
    await settle(50);
    await until(async () => {
      const rows = await daemon!.store.listRuns({ app: 'd6', limit: 1000 });
      return rows.some((r) => r.trigger === 'catchup' && r.phase === 'ended') ? rows : undefined;
    });
    const rows = await daemon.store.listRuns({ app: 'd6', limit: 1000 });
    const sent = rows.filter((r) => r.attempts > 0);
    expect(sent.filter((r) => r.trigger === 'schedule')).toHaveLength(1); // only 00:01
    expect(sent.filter((r) => r.trigger === 'catchup')).toHaveLength(1); // catchup.mode latest
    expect(rows.filter((r) => r.outcome === 'missed')).toHaveLength(359);
  });

  // defects 7, 8 and 9 open the SQLite file, or wrap the SQLite store, to crash, fail or slow it
  it.skipIf(kind !== 'sqlite')(
    'defect 7: a crash in the middle of a catch-up loses no fire',
    async () => {
      const clock = new ManualClock(T0);
      sink.setScript(() => ({ status: 200 }));
      const jobs = [job('cu', { concurrency: 'Allow' }, { schedule: '* * * * *' })];
      daemon = await startTestDaemon(clock, [manifest('d7', jobs)]);
      const dbPath = daemon.dbPath;
      await daemon.stop();
      clock.t = T0 + 10 * 60_000; // ten minutes down
      // the process "dies" at the write that records the catch-up run: that write and every
      // later one fail, as if the process was killed there
      let dead = false;
      const crashAtCatchup = (store: Store): Store =>
        new Proxy(store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (typeof value !== 'function' || !/^(insert|update|set|write)/.test(String(prop)))
              return typeof value === 'function' ? value.bind(target) : value;
            return async (...args: unknown[]) => {
              if (dead || JSON.stringify(args).includes('"catchup"')) {
                dead = true;
                throw new Error('killed');
              }
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
      const { openSqliteStore } = await import('../../src/daemon/store/sqlite.js');
      const { Scheduler } = await import('../../src/daemon/scheduler.js');
      const { createHttpTransport } = await import('../../src/fire/http-transport.js');
      const store = await openSqliteStore(dbPath);
      const crashing = new Scheduler({
        store: crashAtCatchup(store),
        clock,
        transport: createHttpTransport({}),
        secretsFor: () => ['test-secret-0123456789'],
      });
      const started = crashing.start([manifest('d7', jobs)]).catch(() => undefined);
      await until(() => (dead ? true : undefined));
      await Promise.race([started, settle(50)]);
      await store.close();
      // restart on the same file: every minute of the downtime has exactly one row
      daemon = await startTestDaemon(clock, [manifest('d7', jobs)], dbPath);
      await settle(20);
      await until(async () => {
        const rows = await daemon!.store.listRuns({ app: 'd7', limit: 1000 });
        return rows.some((r) => r.trigger === 'catchup' && r.phase === 'ended') ? true : undefined;
      });
      const rows = await daemon.store.listRuns({ app: 'd7', limit: 1000 });
      const instants = rows.map((r) => r.scheduledTime).sort((a, b) => a - b);
      const minutes = Array.from({ length: 10 }, (_, i) => Date.UTC(2026, 0, 1, 0, i + 1));
      expect(instants).toEqual(minutes);
    },
  );

  it.skipIf(kind !== 'sqlite')(
    'defect 8: failing store writes are retried; the daemon neither dies nor loses the run',
    async () => {
      const clock = new ManualClock(T0);
      sink.setScript(() => ({ status: 200 }));
      let failures = 3;
      const flaky = (store: Store): Store =>
        new Proxy(store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (typeof value !== 'function') return value;
            if (prop !== 'updateRuns' && prop !== 'write') return value.bind(target);
            return async (...args: unknown[]) => {
              // fail the writes that end a run
              if (JSON.stringify(args).includes('"success"') && failures > 0) {
                failures -= 1;
                throw new Error('disk I/O error');
              }
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
      const { scheduler, store, stop } = await wrappedScheduler(clock, flaky, [
        manifest('d8', [job('a')]),
      ]);
      const t = await scheduler.trigger('d8', 'a');
      const ended = await until(async () => {
        const r = await store.getRun(t.run.id);
        return r?.phase === 'ended' ? r : undefined;
      });
      expect(ended.outcome).toBe('success');
      expect(failures).toBe(0);
      expect(await scheduler.metrics.registry.metrics()).toMatch(
        /cronix_store_errors_total\{op="write"\} 3/,
      );
      await stop();
    },
    20_000,
  );

  it.skipIf(kind !== 'sqlite')(
    'defect 9: cancelling a queued run while it is being started: never sent, or aborted; row stopped',
    async () => {
      const clock = new ManualClock(T0);
      sink.setScript(() => ({ status: 200, delayMs: 100 }));
      const before = sink.requests.length;
      // the write that starts a queued run is slow, and the test cancels the run while it is pending
      let startPending: () => void = () => undefined;
      const pending = new Promise<void>((r) => (startPending = r));
      const slowStart = (store: Store): Store =>
        new Proxy(store, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (typeof value !== 'function') return value;
            if (prop !== 'updateRuns' && prop !== 'write') return value.bind(target);
            return async (...args: unknown[]) => {
              const text = JSON.stringify(args);
              if (text.includes('"kind":"start"') || text.includes('"phase":"running"')) {
                startPending();
                await new Promise((r) => setTimeout(r, 200));
              }
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
      const { scheduler, store, stop } = await wrappedScheduler(clock, slowStart, [
        manifest('d9', [job('q', { concurrency: 'Enqueue' })]),
      ]);
      try {
        const a = await scheduler.trigger('d9', 'q');
        clock.t += 1;
        const b = await scheduler.trigger('d9', 'q');
        expect(b.admission).toBe('queued');
        await pending; // a ended; b is being started
        await scheduler.cancel(b.run.id).catch(() => undefined);
        const row = await until(async () => {
          const r = await store.getRun(b.run.id);
          return r?.phase === 'ended' && (await store.getRun(a.run.id))?.phase === 'ended'
            ? r
            : undefined;
        });
        await new Promise((r) => setTimeout(r, 800)); // a started b would have sent and ended by now
        expect((await store.getRun(b.run.id))?.outcome).toBe('stopped');
        expect(row.outcome).toBe('stopped');
        const sentB = sink.requests
          .slice(before)
          .filter((r) => r.headers['x-cron-run-id'] === b.run.id);
        // never sent, or sent and aborted (its connection closed before the 100 ms answer)
        for (const r of sentB) expect(r.bytesSent).toBe(0);
      } finally {
        await stop();
      }
    },
  );

  it('defect 10: queued runs of a job removed by a reload end stopped (job removed)', async () => {
    const clock = new ManualClock(T0);
    let n = 0;
    sink.setScript(() => (n++ === 0 ? { status: 200, delayMs: 300 } : { status: 200 }));
    daemon = await startOn(clock, [
      manifest('d10', [job('q', { concurrency: 'Enqueue' }), job('stay')]),
    ]);
    const a = await daemon.scheduler.trigger('d10', 'q');
    clock.t += 1;
    const b = await daemon.scheduler.trigger('d10', 'q');
    clock.t += 1;
    const c = await daemon.scheduler.trigger('d10', 'q', { afterSeconds: 600 });
    await daemon.scheduler.reload([manifest('d10', [job('stay')])]);
    await daemon.waitEnded(3);
    await settle(20);
    expect((await daemon.store.getRun(a.run.id))?.outcome).toBe('success'); // a running run finishes
    for (const r of [b, c]) {
      const row = await daemon.store.getRun(r.run.id);
      expect(row).toMatchObject({ phase: 'ended', outcome: 'stopped' });
      expect((row as unknown as { error?: string }).error).toBe('job removed');
    }
    expect(await daemon.store.queuedRuns()).toEqual([]);
  });
});

/** A real scheduler over a wrapped real SQLite store (to inject slow or failing writes). */
async function wrappedScheduler(
  clock: ManualClock,
  wrap: (store: Store) => Store,
  manifests: ReturnType<typeof manifest>[],
) {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { openSqliteStore } = await import('../../src/daemon/store/sqlite.js');
  const { Scheduler } = await import('../../src/daemon/scheduler.js');
  const { createHttpTransport } = await import('../../src/fire/http-transport.js');
  const path = join(mkdtempSync(join(tmpdir(), 'cronix-wrapped-')), 'ledger.sqlite');
  const store = await openSqliteStore(path);
  const scheduler = new Scheduler({
    store: wrap(store),
    clock,
    transport: createHttpTransport({}),
    secretsFor: () => ['test-secret-0123456789'],
  });
  await scheduler.start(manifests);
  return {
    scheduler,
    store,
    async stop() {
      await scheduler.stop(1000);
      await store.close();
    },
  };
}
