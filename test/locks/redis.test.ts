/**
 * Global-scope locks against a real Redis: the shared contract, three real
 * processes racing as three hosts, fencing, expiry and takeover, refresh, the
 * key layout, and the duplicate-suppression helpers. Every key lives under a
 * random per-file prefix and is deleted at the end.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBackend } from '../../src/locks/index.js';
import { HOLDER_A, HOLDER_B, lockContract, mustAcquire } from './contract.js';
import { deleteKeys, exited, randomPrefix, sharedRedis, waitForLine } from './helpers.js';

const RACER = fileURLToPath(new URL('./fixtures/race-redis.ts', import.meta.url));
const prefix = randomPrefix();
let url = '';
let stopRedis: () => Promise<void> = async () => {};
let raw: Redis;
let backend: RedisBackend;

beforeAll(async () => {
  ({ url, stop: stopRedis } = await sharedRedis());
  raw = new Redis(url);
  backend = await RedisBackend.connect(url, { prefix });
});

afterAll(async () => {
  await backend?.close();
  await deleteKeys(raw, prefix);
  expect(await raw.keys(`${prefix}*`)).toEqual([]);
  await raw.quit();
  await stopRedis();
});

let contractRun = 0;
lockContract('redis', () => RedisBackend.connect(url, { prefix: `${prefix}c${++contractRun}:` }));

describe('RedisBackend against a real server', () => {
  it('three processes posing as three hosts race for one key: exactly one wins', async () => {
    const hosts = ['host-1', 'host-2', 'host-3'];
    const racers = hosts.map((host) =>
      spawn(process.execPath, ['--import', 'tsx', RACER, url, prefix, 'race.job'], {
        env: { ...process.env, CRONIX_HOST_ID: host },
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    try {
      await Promise.all(racers.map((r) => waitForLine(r, /^ready$/)));
      const results = racers.map((r) => waitForLine(r, /^\{/));
      for (const r of racers) r.stdin.write('go\n');
      const parsed = (await Promise.all(results)).map(
        (line) =>
          JSON.parse(line) as {
            ok: boolean;
            host: string;
            fencingToken?: number;
            holder?: { host: string };
          },
      );
      const winners = parsed.filter((p) => p.ok);
      expect(winners).toHaveLength(1);
      const winner = winners[0];
      expect(winner?.fencingToken).toBeGreaterThan(0);
      for (const loser of parsed.filter((p) => !p.ok)) {
        expect(loser.holder?.host).toBe(winner?.host);
      }
      expect((await backend.holder('race.job'))?.host).toBe(winner?.host);
    } finally {
      for (const r of racers) r.stdin.end();
      await Promise.all(racers.map((r) => exited(r)));
    }
    expect(await backend.holder('race.job')).toBeNull(); // the winner released on exit
  });

  it('fencing tokens strictly increase over 20 cycles and never lag the server clock (µs)', async () => {
    const tokens: number[] = [];
    for (let i = 0; i < 20; i++) {
      const [seconds, micros] = await raw.time();
      const serverUs = Number(seconds) * 1_000_000 + Number(micros);
      const lease = await mustAcquire(backend, 'fence.job');
      tokens.push(lease.fencingToken ?? -1);
      expect(lease.fencingToken).toBeGreaterThanOrEqual(serverUs);
      expect(Number.isSafeInteger(lease.fencingToken)).toBe(true);
      expect(await lease.release()).toBe(true);
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1] ?? 0);
  });

  it('a fence ahead of the clock goes on by one; a missing or foreign one restarts at the clock', async () => {
    const ahead = (Date.now() + 10 * 86_400_000) * 1000;
    await raw.set(`${prefix}fence:ahead.job`, String(ahead));
    const lease = await mustAcquire(backend, 'ahead.job');
    expect(lease.fencingToken).toBe(ahead + 1);
    await lease.release();
    await raw.set(`${prefix}fence:ahead.job`, 'not a number');
    const again = await mustAcquire(backend, 'ahead.job');
    expect(again.fencingToken).toBeGreaterThan((Date.now() - 60_000) * 1000);
    expect(again.fencingToken).toBeLessThan(ahead);
    await again.release();
  });

  it('stores token, fence and holder under the documented keys with the TTL', async () => {
    const lease = await mustAcquire(backend, 'layout.job', HOLDER_A, 60_000);
    expect(await raw.get(`${prefix}lock:layout.job`)).toMatch(/^[0-9a-f]{32}$/);
    expect(Number(await raw.get(`${prefix}fence:layout.job`))).toBe(lease.fencingToken);
    expect(JSON.parse((await raw.get(`${prefix}holder:layout.job`)) ?? '')).toEqual({
      pid: HOLDER_A.pid,
      host: HOLDER_A.host,
      acquired_at: new Date(HOLDER_A.acquiredAt).toISOString(),
    });
    for (const k of ['lock', 'holder']) {
      const pttl = await raw.pttl(`${prefix}${k}:layout.job`);
      expect(pttl).toBeGreaterThan(55_000);
      expect(pttl).toBeLessThanOrEqual(60_000);
    }
    expect(await raw.pttl(`${prefix}fence:layout.job`)).toBe(-1); // the fence never expires
    await lease.release();
    expect(await raw.exists(`${prefix}lock:layout.job`, `${prefix}holder:layout.job`)).toBe(0);
  });

  it('an expired holder cannot refresh or release its successor', async () => {
    const stale = await mustAcquire(backend, 'expiry.job', HOLDER_A, 200);
    await sleep(400);
    const fresh = await mustAcquire(backend, 'expiry.job', HOLDER_B, 30_000);
    expect(fresh.fencingToken).toBeGreaterThan(stale.fencingToken ?? Infinity);
    const token = await raw.get(`${prefix}lock:expiry.job`);

    expect(await stale.refresh()).toBe(false);
    expect(await stale.release()).toBe(false);

    expect(await raw.get(`${prefix}lock:expiry.job`)).toBe(token);
    expect(await raw.pttl(`${prefix}lock:expiry.job`)).toBeGreaterThan(25_000);
    expect(await backend.holder('expiry.job')).toEqual(HOLDER_B);
    expect(await fresh.refresh()).toBe(true);
    expect(await fresh.release()).toBe(true);
  });

  it('refresh keeps a lock alive past its TTL and nobody else gets it', async () => {
    const lease = await mustAcquire(backend, 'refresh.job', HOLDER_A, 300);
    const other = await RedisBackend.connect(url, { prefix });
    try {
      const started = Date.now();
      while (Date.now() - started < 1000) {
        await sleep(100);
        expect(await lease.refresh()).toBe(true);
        const attempt = await other.acquire('refresh.job', { ttlMs: 300, holder: HOLDER_B });
        expect(attempt).toEqual({ ok: false, reason: 'contended', holder: HOLDER_A });
      }
      expect(await backend.holder('refresh.job')).toEqual(HOLDER_A);
      expect(await lease.release()).toBe(true);
      await (await mustAcquire(other, 'refresh.job', HOLDER_B, 300)).release();
    } finally {
      await other.close();
    }
  });

  it('an unrefreshed lock expires and can be taken by another host', async () => {
    await mustAcquire(backend, 'crashed.job', HOLDER_A, 150); // the holder "crashes"
    expect((await backend.acquire('crashed.job', { ttlMs: 150, holder: HOLDER_B })).ok).toBe(false);
    await sleep(300);
    await (await mustAcquire(backend, 'crashed.job', HOLDER_B)).release();
  });
});

describe('RedisBackend duplicate suppression (SPEC §5.8)', () => {
  it('markSucceeded / hasSucceeded / lastSuccess round-trip', async () => {
    const runKey = 'billing/settle#2024-05-01T10:00:00Z#abc123';
    expect(await backend.hasSucceeded(runKey)).toBe(false);
    expect(await backend.lastSuccess('billing.settle')).toBeNull();

    await backend.markSucceeded(runKey, 1_714_557_612_345, 'billing.settle');
    expect(await backend.hasSucceeded(runKey)).toBe(true);
    expect(await backend.hasSucceeded(`${runKey}x`)).toBe(false);
    expect(await backend.lastSuccess('billing.settle')).toBe(1_714_557_612_000);
    expect(await raw.get(`${prefix}done:${runKey}`)).toBe('1714557612');
    const ttl = await raw.ttl(`${prefix}done:${runKey}`);
    expect(ttl).toBeGreaterThan(30 * 86_400 - 10);
    expect(ttl).toBeLessThanOrEqual(30 * 86_400);
  });

  it('last success only moves forward; done markers take the given TTL', async () => {
    await backend.markSucceeded('r#2', 2_000_000_000_000, 'app.ordered', 60);
    await backend.markSucceeded('r#1', 1_000_000_000_000, 'app.ordered', 60);
    expect(await backend.lastSuccess('app.ordered')).toBe(2_000_000_000_000);
    expect(await backend.hasSucceeded('r#1')).toBe(true);
    expect(await raw.ttl(`${prefix}done:r#1`)).toBeLessThanOrEqual(60);
    expect(await raw.ttl(`${prefix}last-success:app.ordered`)).toBe(-1);
  });
});
