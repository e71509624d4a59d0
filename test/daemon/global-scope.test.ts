/**
 * `concurrency_scope: global` in the daemon (SPEC §9 item 8): the daemon and
 * real `cronix trigger` processes share one job's Redis lock and its record of
 * succeeded run keys; the daemon sends the fencing token; a Redis restart
 * makes the daemon reconnect instead of failing every later run.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GlobalLocks } from '../../src/daemon/global-locks.js';
import { Scheduler } from '../../src/daemon/scheduler.js';
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import { ServeError, startDaemon } from '../../src/http/serve.js';
import { createHttpTransport } from '../../src/fire/http-transport.js';
import { RedisBackend } from '../../src/locks/redis.js';
import { manifest } from '../helpers/daemon.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { until } from '../helpers/serve.js';
import { dirArgs, normalizedJob, runShim, shimDirs, writeSpec } from '../helpers/shim.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { randomPrefix, sharedRedis, startRedisServer } from '../locks/helpers.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 30);
const MINUTE_1 = Date.UTC(2026, 0, 1, 0, 1);
let sink: Sink;
let redis: { url: string; stop: () => Promise<void> };
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sink = await startSink();
  redis = await sharedRedis();
});
afterAll(async () => {
  await sink.close();
  await redis.stop();
});
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

const jobRaw = (name: string) => ({
  name,
  schedule: '* * * * *',
  request: { url: `${sink.url}/${name}` },
  policy: {
    concurrency: 'Forbid',
    concurrency_scope: 'global',
    timeout_seconds: 30,
    retries: { max_attempts: 1 },
  },
  auth: { secret_refs: ['env:CRON_SECRET'] },
});

async function daemonWith(url: string, prefix: string, clock: ManualClock, name: string) {
  const dir = mkdtempSync(join(tmpdir(), 'cronix-global-'));
  const store = await openSqliteStore(join(dir, 'ledger.sqlite'));
  const locks = new GlobalLocks(() => RedisBackend.connect(url, { prefix }), clock, {
    pid: process.pid,
    host: 'daemon-host',
  });
  await locks.open();
  const transport = createHttpTransport({ keepAlive: true });
  const scheduler = new Scheduler({
    store,
    clock,
    transport,
    secretsFor: () => ['test-secret-0123456789'],
    guardFor: (job, runKey, signal) => locks.for(job, runKey, signal),
  });
  await scheduler.start([manifest('glob', [jobRaw(name)])]);
  stops.push(async () => {
    await scheduler.stop(1000);
    await locks.close();
    await store.close();
    await transport.close?.();
  });
  return { scheduler, store };
}

function shimFor(name: string, prefix: string) {
  const dirs = shimDirs();
  writeSpec(dirs.specDir, 'glob', normalizedJob('glob', jobRaw(name)));
  return (fireTime: number) =>
    runShim(
      `glob.${name}`,
      [...dirArgs(dirs), '--fire-time', String(fireTime / 1000), '--lock-backend', redis.url],
      { CRONIX_REDIS_PREFIX: prefix },
    );
}

describe('global scope shared by the daemon and the shim', () => {
  it('a daemon run holds the lock against a shim, records its success for it, and sends the token', async () => {
    const prefix = randomPrefix();
    const clock = new ManualClock(T0);
    let first = true;
    sink.setScript(() => {
      if (!first) return { status: 200 };
      first = false;
      return { status: 200, delayMs: 4000 }; // the daemon holds the lock this long
    });
    const before = sink.requests.length;
    const { scheduler, store } = await daemonWith(redis.url, prefix, clock, 'settle');
    const shim = shimFor('settle', prefix);
    await clock.advance(30_000); // 00:01: the daemon fires and holds the lock
    await sink.waitForRequests(before + 1);
    const daemonReq = sink.requests[before]!;
    expect(Number(daemonReq.headers['x-cron-fencing-token'])).toBeGreaterThan(0);
    const contended = await shim(MINUTE_1);
    expect(contended.code).toBe(4);
    expect(contended.lines.at(-1)).toMatchObject({ event: 'lock-contended' });
    await until(async () => {
      const runs = await store.listRuns({ app: 'glob' });
      return runs[0]?.phase === 'ended' ? runs : undefined;
    }, 40_000);
    const dup = await shim(MINUTE_1);
    expect(dup.code).toBe(0);
    expect(dup.lines.map((l) => l['event'])).toContain('duplicate-suppressed');
    expect(sink.requests.length - before).toBe(1);
    expect((await store.listRuns({ app: 'glob' }))[0]).toMatchObject({ outcome: 'success' });
    expect(scheduler.activeCount('glob/settle')).toBe(0);
  }, 60_000);

  it('a shim holding the lock makes the daemon run end skipped, naming the holder', async () => {
    const prefix = randomPrefix();
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200, delayMs: 5000 }));
    const { store } = await daemonWith(redis.url, prefix, clock, 'report');
    const shim = shimFor('report', prefix);
    const shimRun = shim(MINUTE_1 - 60_000); // another fire of the job, holding the lock
    await until(() =>
      sink.requests.some((r) => r.url === '/report' && r.headers['x-cron-fencing-token'])
        ? true
        : undefined,
    );
    await clock.advance(30_000);
    const run = await until(async () => {
      const [r] = await store.listRuns({ app: 'glob' });
      return r?.phase === 'ended' ? r : undefined;
    });
    expect(run).toMatchObject({ outcome: 'skipped', attempts: 0 });
    expect(run.error).toMatch(/^held by pid \d+ on /);
    expect((await shimRun).code).toBe(0);
  }, 60_000);

  it('after a Redis restart the daemon reconnects; while Redis is down runs fail closed', async () => {
    const server = await startRedisServer();
    const url = `redis://127.0.0.1:${server.port}`;
    const prefix = randomPrefix();
    const clock = new ManualClock(T0);
    sink.setScript(() => ({ status: 200 }));
    const { scheduler, store } = await daemonWith(url, prefix, clock, 'sync');
    await server.kill();
    const down = await scheduler.trigger('glob', 'sync');
    const failed = await until(async () => {
      const r = await store.getRun(down.run.id);
      return r?.phase === 'ended' ? r : undefined;
    });
    expect(failed.outcome).toBe('internal_error');
    expect(failed.error).toMatch(/redis|Redis|unreachable|ECONNREFUSED/);
    const restarted = await startRedisServer([], server.port);
    stops.unshift(() => restarted.kill());
    clock.t += 1;
    const up = await scheduler.trigger('glob', 'sync');
    const ok = await until(async () => {
      const r = await store.getRun(up.run.id);
      return r?.phase === 'ended' ? r : undefined;
    });
    expect(ok).toMatchObject({ outcome: 'success', attempts: 1 });
    await settle();
  }, 60_000);
});

describe('start-up checks of global scope', () => {
  const manifestFile = (policy: Record<string, unknown>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-global-start-'));
    const file = join(dir, 'm.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        app: 'g',
        jobs: [{ ...jobRaw('j'), policy: { ...jobRaw('j').policy, ...policy } }],
      }),
    );
    return file;
  };
  const start = (file: string, lockBackend?: string) =>
    startDaemon({
      manifests: [file],
      dataDir: join(file, '..', 'data'),
      listen: '127.0.0.1:0',
      env: { CRON_SECRET: 'test-secret-0123456789' },
      ...(lockBackend ? { lockBackend } : {}),
    });

  it('refuses a global job without a lock backend, an unreachable one, and max_concurrent > 1', async () => {
    await expect(start(manifestFile({}))).rejects.toThrow(
      /^job g\/j has concurrency_scope global, .*--lock-backend redis:\/\/host:6379 \(or set CRONIX_REDIS_URL\)/,
    );
    await expect(start(manifestFile({}), 'redis://127.0.0.1:1')).rejects.toThrow(ServeError);
    await expect(start(manifestFile({ max_concurrent: 2 }), redis.url)).rejects.toThrow(
      /job g\/j: concurrency_scope global takes one Redis lock per job, so max_concurrent 2 cannot be honoured/,
    );
    const ok = await start(manifestFile({}), redis.url);
    await ok.stop(100);
  });
});
