/**
 * The Redis lock backend when Redis loses its data or stalls, on a
 * `redis-server` of our own (no persistence): a restart, FLUSHALL, and a
 * SIGSTOP past the lock TTL. Fencing tokens must keep increasing across every
 * one of them (a plain INCR restarts at 1). Also: a database number the
 * server does not have is a configuration error, not a silent db 0.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockConfigError, RedisBackend } from '../../src/locks/index.js';
import { HOLDER_A, HOLDER_B, mustAcquire } from './contract.js';
import { type RedisServer, randomPrefix, startRedisServer } from './helpers.js';
import { sleep } from '../helpers/common.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer(['--databases', '16']);
});
afterAll(async () => {
  server.child.kill('SIGCONT');
  await server.kill();
});

const url = (db = 0): string => `redis://127.0.0.1:${server.port}/${db}`;
const connect = (prefix: string, db = 0) =>
  RedisBackend.connect(url(db), { prefix, connectTimeoutMs: 1000, commandTimeoutMs: 1000 });

/** Acquires and releases `key` `n` times, returning the tokens. */
async function cycle(backend: RedisBackend, key: string, n: number): Promise<number[]> {
  const tokens: number[] = [];
  for (let i = 0; i < n; i++) {
    const lease = await mustAcquire(backend, key);
    tokens.push(lease.fencingToken ?? Number.NaN);
    await lease.release();
  }
  return tokens;
}

function expectStrictlyIncreasing(tokens: readonly number[]): void {
  for (let i = 1; i < tokens.length; i++) {
    expect(
      tokens[i],
      `token ${i} (${tokens[i]}) > token ${i - 1} (${tokens[i - 1]})`,
    ).toBeGreaterThan(tokens[i - 1] as number);
  }
}

describe('fencing tokens across Redis data loss', () => {
  it('keep increasing across a restart without persistence and a FLUSHALL', async () => {
    const prefix = randomPrefix();
    let backend = await connect(prefix);
    const tokens = await cycle(backend, 'loss.job', 50);
    await backend.close();

    await server.kill(); // no RDB, no AOF: everything is gone
    server = await startRedisServer(['--databases', '16'], server.port);
    const raw = new Redis(url());
    expect(await raw.dbsize()).toBe(0);
    backend = await connect(prefix);
    tokens.push(...(await cycle(backend, 'loss.job', 50)));

    await raw.flushall();
    tokens.push(...(await cycle(backend, 'loss.job', 50)));
    await backend.close();
    raw.disconnect();

    expect(tokens).toHaveLength(150);
    expectStrictlyIncreasing(tokens);
  });

  it('keep increasing when the lock expires while Redis is stopped (SIGSTOP past the TTL)', async () => {
    const prefix = randomPrefix();
    const a = await connect(prefix);
    const b = await connect(prefix);
    const stale = await mustAcquire(a, 'stall.job', HOLDER_A, 300);
    server.child.kill('SIGSTOP');
    try {
      await expect(stale.refresh()).rejects.toThrow(/unavailable during refresh/); // fail closed
      expect(a.connected).toBe(false); // unanswered: a daemon would open a new connection
      await sleep(400); // past the TTL on Redis' own clock
    } finally {
      server.child.kill('SIGCONT');
    }
    const fresh = await mustAcquire(b, 'stall.job', HOLDER_B, 30_000);
    expect(fresh.fencingToken).toBeGreaterThan(stale.fencingToken as number);
    expect(await stale.refresh()).toBe(false); // the stale holder learns it lost the lock
    expect(a.connected).toBe(true); // the late answer was read (and dropped) before this one
    expect(await stale.release()).toBe(false); // and cannot delete its successor's
    expect(await b.holder('stall.job')).toMatchObject({ host: HOLDER_B.host });
    await fresh.release();
    await a.close();
    await b.close();
  });
});

describe('database selection', () => {
  it('a database the server does not have is a LockConfigError naming it; nothing lands in db 0', async () => {
    const prefix = randomPrefix();
    const err = await connect(prefix, 99).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockConfigError);
    expect((err as Error).message).toBe(
      `redis at 127.0.0.1:${server.port} has no database 99 (ERR DB index is out of range): ` +
        'check the /db part of the redis URL (--lock-backend or CRONIX_REDIS_URL)',
    );
    const raw = new Redis(url(0));
    expect(await raw.keys(`${prefix}*`)).toEqual([]);
    raw.disconnect();
  });

  it('an existing database other than 0 holds the keys, and db 0 stays empty', async () => {
    const prefix = randomPrefix();
    const backend = await connect(prefix, 15);
    const lease = await mustAcquire(backend, 'db.job');
    const db15 = new Redis(url(15));
    const db0 = new Redis(url(0));
    expect(await db15.exists(`${prefix}lock:db.job`)).toBe(1);
    expect(await db0.keys(`${prefix}*`)).toEqual([]);
    await lease.release();
    await backend.close();
    db15.disconnect();
    db0.disconnect();
  });
});
