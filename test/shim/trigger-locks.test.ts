/**
 * Concurrency with real processes: two shims of one Forbid job, SIGKILL of the
 * holder, Replace (with a holder that leaves and one that will not), global
 * scope across three "hosts" on a real Redis, Redis down, duplicates.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequence, startSink, type Sink } from '../helpers/sink.js';
import {
  dirArgs,
  events,
  normalizedJob,
  runShim,
  shimDirs,
  startShim,
  writeSpec,
  type ShimDirs,
} from '../helpers/shim.js';
import { SHARED_REDIS_URL } from '../helpers/common.js';

const REDIS = SHARED_REDIS_URL;
const PREFIX = `cronix-test-${randomBytes(4).toString('hex')}:`;
let sink: Sink;
let n = 0;

beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

function job(dirs: ShimDirs, policy: Record<string, unknown> = {}): string {
  const name = `lock-${++n}`;
  writeSpec(
    dirs.specDir,
    'app',
    normalizedJob('app', {
      name,
      schedule: '* * * * *',
      request: { url: `${sink.url}/run/${name}` },
      policy: {
        timeout_seconds: 10,
        retries: { max_attempts: 1, min_seconds: 1, max_seconds: 1 },
        ...policy,
      },
    }),
  );
  return `app.${name}`;
}

/** Starts a process that holds the job's host lock as `host` and ignores SIGTERM. */
async function holdLock(dirs: ShimDirs, target: string, host: string) {
  const holder = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('./fixtures/hold-flock.mjs', import.meta.url)),
      dirs.lockDir,
      target,
      host,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  holder.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  while (!out.includes('locked')) await once(holder.stdout!, 'data');
  return { holder, output: () => out };
}

describe('host scope (flock)', () => {
  it('two shims of one Forbid job: exactly one runs, the other exits 4 with lock-contended', async () => {
    const dirs = shimDirs();
    const target = job(dirs);
    sink.setScript(sequence([{ status: 200, delayMs: 1500 }]));
    const before = sink.requests.length;
    const a = startShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z']);
    await sink.waitForRequests(before + 1, 10_000);
    const b = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:01:00Z']);
    const ra = await a.done;
    expect(ra.code).toBe(0);
    expect(b.code).toBe(4);
    expect(b.lines.at(-1)).toMatchObject({ event: 'lock-contended', level: 'info' });
    expect(b.lines.at(-1)?.['err']).toMatch(/held by pid \d+/);
    expect(sink.requests.length - before).toBe(1);
  });

  it('--contended-exit 75 changes the contention exit code', async () => {
    const dirs = shimDirs();
    const target = job(dirs);
    sink.setScript(sequence([{ status: 200, delayMs: 1500 }]));
    const before = sink.requests.length;
    const a = startShim(target, dirArgs(dirs));
    await sink.waitForRequests(before + 1, 10_000);
    const b = await runShim(target, [...dirArgs(dirs), '--contended-exit', '75']);
    await a.done;
    expect(b.code).toBe(75);
  });

  it('SIGKILL of the holder frees the lock at once', async () => {
    const dirs = shimDirs();
    const target = job(dirs);
    sink.setScript(sequence([{ hang: true }, 200]));
    const before = sink.requests.length;
    const a = startShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z']);
    await sink.waitForRequests(before + 1, 10_000);
    a.child.kill('SIGKILL');
    const ra = await a.done;
    expect(ra.signal).toBe('SIGKILL');
    const b = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:01:00Z']);
    expect(b.code).toBe(0);
    expect(events(b)).toContain('success');
  });

  it('Replace SIGTERMs the local holder, which stops (75), and proceeds', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency: 'Replace' });
    sink.setScript(sequence([{ hang: true }, 200]));
    const before = sink.requests.length;
    const a = startShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z']);
    await sink.waitForRequests(before + 1, 10_000);
    const b = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:01:00Z']);
    const ra = await a.done;
    expect(ra.code).toBe(75);
    expect(ra.lines.at(-1)).toMatchObject({ event: 'stopped' });
    expect(b.code).toBe(0);
    expect(events(b)).toContain('replaced-holder');
    expect(sink.requests.length - before).toBe(2);
    // the replaced attempt's connection was closed
    expect(await sink.requests[before]!.whenClosed).toBeGreaterThan(0);
  });

  it('Replace exits 4 when the holder ignores SIGTERM past max(timeout/2, 5) s', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency: 'Replace', timeout_seconds: 4 });
    const { holder, output } = await holdLock(dirs, target, 'host-a');
    const before = sink.requests.length;
    const started = Date.now();
    const b = await runShim(target, dirArgs(dirs), { CRONIX_HOST_ID: 'host-a' });
    const waited = Date.now() - started;
    holder.kill('SIGKILL');
    expect(output()).toContain('ignored SIGTERM');
    expect(b.code).toBe(4);
    expect(b.lines.at(-1)?.['err']).toMatch(/did not release the lock within 5s/);
    expect(waited).toBeGreaterThanOrEqual(5000);
    expect(sink.requests.length).toBe(before);
  });

  it('SIGTERM while Replace waits for a holder that ignores SIGTERM → stopped (75) at once, nothing sent', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency: 'Replace', timeout_seconds: 20 }); // waits up to 10 s
    const { holder } = await holdLock(dirs, target, 'host-a');
    const before = sink.requests.length;
    const b = startShim(target, dirArgs(dirs), { CRONIX_HOST_ID: 'host-a' });
    await new Promise((r) => setTimeout(r, 1500)); // B sent SIGTERM to the holder and polls
    const t0 = Date.now();
    b.child.kill('SIGTERM');
    const rb = await b.done;
    holder.kill('SIGKILL');
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(rb.code).toBe(75);
    expect(rb.lines.at(-1)).toMatchObject({ event: 'stopped', level: 'warn' });
    expect(sink.requests.length).toBe(before);
  });

  it('Replace does not signal a holder on another host', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency: 'Replace' });
    const { holder, output } = await holdLock(dirs, target, 'other-host');
    const b = await runShim(target, dirArgs(dirs), { CRONIX_HOST_ID: 'host-a' });
    holder.kill('SIGKILL');
    expect(b.code).toBe(4);
    expect(output()).not.toContain('ignored SIGTERM');
  });

  it('duplicate suppression: the same --fire-time twice → the second sends nothing and exits 0', async () => {
    const dirs = shimDirs();
    const target = job(dirs);
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    const first = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z']);
    const second = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z']);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(second.lines.at(-1)).toMatchObject({ event: 'duplicate-suppressed' });
    expect(sink.requests.length - before).toBe(1);
    // a failed run key is not suppressed: it may be fired again
    sink.setScript(sequence([500]));
    const failed = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:01:00Z']);
    sink.setScript(sequence([200]));
    const again = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:01:00Z']);
    expect(failed.code).toBe(2);
    expect(again.code).toBe(0);
    expect(events(again)).toContain('success');
  });
});

describe('global scope (Redis)', () => {
  const env = { CRONIX_REDIS_URL: REDIS, CRONIX_REDIS_PREFIX: PREFIX };

  it('three processes posing as three hosts: exactly one runs', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency_scope: 'global' });
    sink.setScript(sequence([{ status: 200, delayMs: 1500 }]));
    const before = sink.requests.length;
    const runs = await Promise.all(
      ['host-a', 'host-b', 'host-c'].map((host, i) =>
        runShim(
          target,
          [
            ...dirArgs(dirs),
            '--lock-dir',
            `${dirs.lockDir}-${i}`,
            '--fire-time',
            `2026-01-01T00:0${i}:00Z`,
          ],
          {
            ...env,
            CRONIX_HOST_ID: host,
          },
        ),
      ),
    );
    expect(runs.map((r) => r.code).sort()).toEqual([0, 4, 4]);
    expect(sink.requests.length - before).toBe(1);
    expect(sink.requests[before]?.headers['x-cron-fencing-token']).toMatch(/^\d+$/);
  });

  it('fencing tokens strictly increase across fires', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency_scope: 'global' });
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    for (let i = 0; i < 3; i++) {
      const r = await runShim(
        target,
        [...dirArgs(dirs), '--fire-time', `2026-01-01T00:0${i}:00Z`],
        env,
      );
      expect(r.code).toBe(0);
    }
    const tokens = sink.requests
      .slice(before)
      .map((r) => Number(r.headers['x-cron-fencing-token']));
    expect(tokens[1]).toBeGreaterThan(tokens[0] as number);
    expect(tokens[2]).toBeGreaterThan(tokens[1] as number);
  });

  it('duplicate suppression across hosts: the same --fire-time twice sends once', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency_scope: 'global' });
    sink.setScript(sequence([200]));
    const before = sink.requests.length;
    const a = await runShim(target, [...dirArgs(dirs), '--fire-time', '2026-01-01T00:00:00Z'], {
      ...env,
      CRONIX_HOST_ID: 'h1',
    });
    const b = await runShim(
      target,
      [
        ...dirArgs(dirs),
        '--lock-dir',
        `${dirs.lockDir}-b`,
        '--state-dir',
        `${dirs.stateDir}-b`,
        '--fire-time',
        '2026-01-01T00:00:00Z',
      ],
      {
        ...env,
        CRONIX_HOST_ID: 'h2',
      },
    );
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(b.lines.at(-1)).toMatchObject({ event: 'duplicate-suppressed' });
    expect(sink.requests.length - before).toBe(1);
  });

  it('Redis unreachable → exit 75, nothing sent (fail closed)', async () => {
    const dirs = shimDirs();
    const target = job(dirs, { concurrency_scope: 'global' });
    const before = sink.requests.length;
    const r = await runShim(target, dirArgs(dirs), {
      CRONIX_REDIS_URL: 'redis://127.0.0.1:1',
      CRONIX_REDIS_PREFIX: PREFIX,
    });
    expect(r.code).toBe(75);
    expect(r.lines.at(-1)).toMatchObject({ event: 'lock-unavailable', level: 'error' });
    expect(sink.requests.length).toBe(before);
  });
});
