/**
 * The one contract every {@link LockBackend} passes (STYLE habit 3). Run by
 * `flock.test.ts` and `redis.test.ts` with a backend factory that isolates
 * each test (fresh temp dir, random key prefix).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Holder,
  type Lease,
  type LockBackend,
  LockConfigError,
} from '../../src/locks/index.js';

/** Holder records of two distinct "processes". */
export const HOLDER_A: Holder = { pid: 4242, host: 'host-a', acquiredAt: 1_700_000_000_123 };
/** See {@link HOLDER_A}. */
export const HOLDER_B: Holder = { pid: 5353, host: 'host-b', acquiredAt: 1_700_000_001_456 };

/** Acquires `key` and fails the test unless it got a lease. */
export async function mustAcquire(
  backend: LockBackend,
  key: string,
  holder: Holder = HOLDER_A,
  ttlMs = 30_000,
): Promise<Lease> {
  const result = await backend.acquire(key, { ttlMs, holder });
  if (!result.ok) throw new Error(`expected to acquire ${key}, held by ${JSON.stringify(result)}`);
  return result.lease;
}

/** Registers the shared lock contract suite for one backend. */
export function lockContract(name: string, makeBackend: () => Promise<LockBackend>): void {
  describe(`lock contract: ${name}`, () => {
    let backend: LockBackend;
    let n = 0;
    let key: string;

    beforeEach(async () => {
      backend = await makeBackend();
      key = `app.job-${++n}`;
    });
    afterEach(async () => {
      await backend.close();
    });

    it('a second acquisition of a held key is contended and names the holder', async () => {
      const lease = await mustAcquire(backend, key, HOLDER_A);
      expect(lease.key).toBe(key);
      const second = await backend.acquire(key, { ttlMs: 30_000, holder: HOLDER_B });
      expect(second).toEqual({ ok: false, reason: 'contended', holder: HOLDER_A });
      await lease.release();
    });

    it('release lets the next acquisition succeed', async () => {
      const first = await mustAcquire(backend, key, HOLDER_A);
      expect(await first.release()).toBe(true);
      const second = await mustAcquire(backend, key, HOLDER_B);
      expect(await backend.holder(key)).toEqual(HOLDER_B);
      expect(await second.release()).toBe(true);
    });

    it('release is true once, then false', async () => {
      const lease = await mustAcquire(backend, key);
      expect(await lease.release()).toBe(true);
      expect(await lease.release()).toBe(false);
    });

    it('a stale lease cannot release its successor', async () => {
      const first = await mustAcquire(backend, key, HOLDER_A);
      await first.release();
      const second = await mustAcquire(backend, key, HOLDER_B);
      expect(await first.release()).toBe(false);
      const third = await backend.acquire(key, { ttlMs: 30_000, holder: HOLDER_A });
      expect(third).toMatchObject({ ok: false, holder: HOLDER_B });
      await second.release();
    });

    it('different keys are independent', async () => {
      const a = await mustAcquire(backend, `${key}.a`, HOLDER_A);
      const b = await mustAcquire(backend, `${key}.b`, HOLDER_B);
      expect(await backend.holder(`${key}.a`)).toEqual(HOLDER_A);
      expect(await backend.holder(`${key}.b`)).toEqual(HOLDER_B);
      expect(await a.release()).toBe(true);
      expect((await backend.acquire(`${key}.b`, { ttlMs: 30_000, holder: HOLDER_A })).ok).toBe(
        false,
      );
      expect(await b.release()).toBe(true);
    });

    it('holder metadata round-trips while held and is gone after release', async () => {
      expect(await backend.holder(key)).toBeNull();
      const lease = await mustAcquire(backend, key, HOLDER_B);
      expect(await backend.holder(key)).toEqual(HOLDER_B);
      await lease.release();
      expect(await backend.holder(key)).toBeNull();
    });

    it('refresh resolves true while held and false after release', async () => {
      const lease = await mustAcquire(backend, key);
      expect(await lease.refresh()).toBe(true);
      expect(await lease.refresh()).toBe(true);
      await lease.release();
      expect(await lease.refresh()).toBe(false);
    });

    it('fencing tokens are either absent or strictly increasing', async () => {
      const tokens: (number | undefined)[] = [];
      for (let i = 0; i < 3; i++) {
        const lease = await mustAcquire(backend, key);
        tokens.push(lease.fencingToken);
        await lease.release();
      }
      if (backend.scope === 'host') expect(tokens).toEqual([undefined, undefined, undefined]);
      else expect(tokens).toEqual([...tokens].sort((x, y) => (x ?? 0) - (y ?? 0)));
      if (backend.scope === 'global') expect(new Set(tokens).size).toBe(3);
    });

    it.each(['', 'a/b', '..', 'app..job', '../etc', 'x'.repeat(201), 'nul\0byte'])(
      'rejects the invalid key %j with LockConfigError',
      async (bad) => {
        await expect(backend.acquire(bad, { ttlMs: 1000, holder: HOLDER_A })).rejects.toThrow(
          LockConfigError,
        );
        await expect(backend.holder(bad)).rejects.toThrow(LockConfigError);
      },
    );
  });
}
