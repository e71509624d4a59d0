/**
 * Fail-closed behaviour of the Redis backend against real servers of our own:
 * nothing listening, a server killed under a held lease, rejected credentials.
 * Messages never carry the password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockConfigError, LockUnavailableError, RedisBackend } from '../../src/locks/index.js';
import { HOLDER_A, mustAcquire } from './contract.js';
import { type RedisServer, freePort, randomPrefix, startRedisServer } from './helpers.js';

const PASSWORD = 'hunter2-very-secret';

describe('RedisBackend when Redis is unreachable', () => {
  it('connecting to a port nothing listens on → LockUnavailableError naming host:port', async () => {
    const port = await freePort();
    const err = await RedisBackend.connect(`redis://:${PASSWORD}@127.0.0.1:${port}/0`, {
      connectTimeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockUnavailableError);
    expect((err as Error).message).toBe(`redis at 127.0.0.1:${port} unreachable: ECONNREFUSED`);
    expect((err as Error).message).not.toContain(PASSWORD);
  });

  it('a malformed URL → LockConfigError before any connection', async () => {
    await expect(RedisBackend.connect(`redis://:${PASSWORD}@`)).rejects.toThrow(LockConfigError);
  });
});

describe('RedisBackend when the server dies under a held lease', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(['--requirepass', PASSWORD]);
  });
  afterAll(async () => {
    await server.kill();
  });

  it('rejects the wrong password with LockConfigError that does not echo it', async () => {
    const err = await RedisBackend.connect(`redis://:wrong-${PASSWORD}@127.0.0.1:${server.port}`, {
      connectTimeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockConfigError);
    expect((err as Error).message).toMatch(
      /^redis at 127\.0\.0\.1:\d+ rejected the connection \(WRONGPASS\)/,
    );
    expect((err as Error).message).not.toContain(PASSWORD);
  });

  it('rejects a missing password with LockConfigError', async () => {
    await expect(
      RedisBackend.connect(`redis://127.0.0.1:${server.port}`, { connectTimeoutMs: 1000 }),
    ).rejects.toThrow(/\(NOAUTH\)/);
  });

  it('an ACL user (redis://user:password@…) is authenticated as that user', async () => {
    const { Redis } = await import('ioredis');
    const admin = new Redis({ port: server.port, password: PASSWORD });
    await admin.call('ACL', 'SETUSER', 'locker', 'on', '>locker-pw', '~*', '&*', '+@all');
    await admin.quit();
    const backend = await RedisBackend.connect(
      `redis://locker:locker-pw@127.0.0.1:${server.port}`,
      {
        prefix: randomPrefix(),
        connectTimeoutMs: 1000,
      },
    );
    const lease = await mustAcquire(backend, 'acl.job');
    expect(await lease.release()).toBe(true);
    await backend.close();
    await expect(
      RedisBackend.connect(`redis://locker:nope@127.0.0.1:${server.port}`, {
        connectTimeoutMs: 1000,
      }),
    ).rejects.toThrow(/\(WRONGPASS\)/);
  });

  it('after the kill, acquire, refresh, release and holder reject with LockUnavailableError', async () => {
    const backend = await RedisBackend.connect(`redis://:${PASSWORD}@127.0.0.1:${server.port}/3`, {
      prefix: randomPrefix(),
      connectTimeoutMs: 1000,
    });
    const lease = await mustAcquire(backend, 'app.job');
    expect(await lease.refresh()).toBe(true);

    await server.kill();

    const attempts: [string, () => Promise<unknown>][] = [
      ['acquire', () => backend.acquire('app.other', { ttlMs: 1000, holder: HOLDER_A })],
      ['refresh', () => lease.refresh()],
      ['release', () => lease.release()],
      ['holder', () => backend.holder('app.job')],
      ['hasSucceeded', () => backend.hasSucceeded('run')],
    ];
    for (const [what, attempt] of attempts) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(LockUnavailableError);
      expect((err as Error).message).toContain(`redis at 127.0.0.1:${server.port} unavailable`);
      expect((err as Error).message).not.toContain(PASSWORD);
    }
    await backend.close(); // closing a dead connection does not throw
  });
});
