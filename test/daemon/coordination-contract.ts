/**
 * The one contract every {@link Coordination} passes (STYLE habit 3): run by
 * `coordination.test.ts` on PostgreSQL (a schema per test) and in memory (a
 * manual clock). `make` gives two replicas' connections to one fresh store, the
 * shared ledger, and `advance(ms)`, which lets that much store time pass (a real
 * wait on PostgreSQL, a manual clock step in memory).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FencedError,
  type Coordination,
  type FeedMessage,
} from '../../src/daemon/store/coordination.js';
import type { Store } from '../../src/daemon/store/types.js';
import { insertRuns, newRun } from './store-fixtures.js';

/** What a contract factory returns. */
export interface CoordinationUnderTest {
  a: Coordination;
  b: Coordination;
  store: Store;
  advance(ms: number): Promise<void>;
  cleanup(): Promise<void>;
}

const A1 = { replica: 'a', incarnation: 'a-1' };
const A2 = { replica: 'a', incarnation: 'a-2' };
const B1 = { replica: 'b', incarnation: 'b-1' };

/** Registers the coordination contract for one implementation; `ttlMs`: a short lease. */
export function coordinationContract(
  name: string,
  make: () => Promise<CoordinationUnderTest>,
  ttlMs: number,
): void {
  describe(`coordination contract: ${name}`, () => {
    let t: CoordinationUnderTest;
    beforeEach(async () => {
      t = await make();
    });
    afterEach(async () => {
      await t.cleanup();
    });

    it('a renewal keeps the epoch; another replica waits for expiry and gets the next one', async () => {
      const first = await t.a.acquireLease(A1, ttlMs);
      expect(first).toMatchObject({ won: true, lease: { replica: 'a', epoch: 1 } });
      expect(first.lease.previousExpiresAt).toBeNull();
      expect(first.lease.expiresAt - first.lease.storeNow).toBeGreaterThan(ttlMs / 2);
      const refused = await t.b.acquireLease(B1, ttlMs);
      expect(refused).toMatchObject({ won: false, lease: { replica: 'a', epoch: 1 } });
      const renewed = await t.a.acquireLease(A1, ttlMs);
      expect(renewed).toMatchObject({ won: true, lease: { epoch: 1 } });
      expect(renewed.lease.acquiredAt).toBe(first.lease.acquiredAt);
      await t.advance(ttlMs + 100);
      const b = await t.b.acquireLease(B1, ttlMs);
      expect(b).toMatchObject({ won: true, lease: { replica: 'b', epoch: 2 } });
      // no one led from a's expiry to b's acquisition
      expect(b.lease.previousExpiresAt).toBe(renewed.lease.expiresAt);
      expect(b.lease.acquiredAt).toBeGreaterThanOrEqual(renewed.lease.expiresAt);
      expect((await t.a.acquireLease(A1, ttlMs)).won).toBe(false);
      // a released lease passes at once, at the next epoch
      expect(await t.b.releaseLease(B1, 2)).toBe(true);
      expect(await t.b.releaseLease(B1, 2)).toBe(false);
      expect(await t.a.acquireLease(A1, ttlMs)).toMatchObject({ won: true, lease: { epoch: 3 } });
      // the same claimant after its own lease lapsed starts a new term too
      await t.advance(ttlMs + 100);
      expect(await t.a.acquireLease(A1, ttlMs)).toMatchObject({ won: true, lease: { epoch: 4 } });
      expect(await t.b.readLease()).toMatchObject({ replica: 'a', incarnation: 'a-1', epoch: 4 });
    });

    it('another incarnation of the same replica waits for the live lease and never shares its epoch', async () => {
      await t.a.acquireLease(A1, ttlMs);
      expect(await t.b.acquireLease(A2, ttlMs)).toMatchObject({
        won: false,
        lease: { replica: 'a', incarnation: 'a-1', epoch: 1 },
      });
      await t.advance(ttlMs + 100);
      expect(await t.b.acquireLease(A2, ttlMs)).toMatchObject({
        won: true,
        lease: { replica: 'a', incarnation: 'a-2', epoch: 2 },
      });
      // the old process, woken, can neither renew nor take it
      expect(await t.a.acquireLease(A1, ttlMs)).toMatchObject({ won: false, lease: { epoch: 2 } });
      expect(await t.a.releaseLease(A1, 2)).toBe(false);
      expect(await t.a.releaseLease(A1, 1)).toBe(false);
    });

    it('concurrent acquisitions: exactly one claimant wins', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? t.a : t.b).acquireLease({ replica: `r${i}`, incarnation: `i${i}` }, 5000),
        ),
      );
      expect(results.filter((r) => r.won)).toHaveLength(1);
      const epochs = new Set(results.map((r) => r.lease.epoch));
      expect([...epochs]).toEqual([1]);
    });

    it('a term store writes only while its fence is the live lease', async () => {
      await t.a.acquireLease(A1, ttlMs);
      const ok = t.a.termStore({ holder: 'a', epoch: 1 });
      await insertRuns(ok, [newRun()]);
      const stale = t.a.termStore({ holder: 'a', epoch: 2 });
      await expect(insertRuns(stale, [newRun()])).rejects.toThrow(FencedError);
      expect(await stale.refused).toMatch(/epoch 2/);
      await expect(t.a.termStore({ holder: 'b', epoch: 1 }).endCrashed(0, 'x')).rejects.toThrow(
        FencedError,
      );
      ok.revoke();
      await expect(insertRuns(ok, [newRun()])).rejects.toThrow(FencedError);
      // reads are not fenced
      expect((await stale.listRuns({})).length).toBe(1);
      // an expired lease fences its own holder
      const again = t.a.termStore({ holder: 'a', epoch: 1 });
      await t.advance(ttlMs + 100);
      await expect(insertRuns(again, [newRun()])).rejects.toThrow(FencedError);
    });

    it('a command is taken or withdrawn, never both; done carries the result', async () => {
      await t.a.acquireLease(A1, ttlMs * 10);
      const fence = { holder: 'a', epoch: 1 };
      const one = await t.b.enqueueCommand('trigger', { kind: 'trigger', app: 'x', job: 'y' });
      const two = await t.b.enqueueCommand('pause', { kind: 'pause' });
      expect((await t.a.pendingCommands(10)).map((c) => [c.id, c.kind])).toEqual([
        [one, 'trigger'],
        [two, 'pause'],
      ]);
      expect((await t.a.pendingCommands(1)).map((c) => c.id)).toEqual([one]);
      expect(await t.b.commandStatus(one)).toEqual({
        state: 'pending',
        result: undefined,
        takenEpoch: null,
      });
      // one: taken, then its withdrawal fails, and it completes
      expect(await t.a.takeCommand(one, { holder: 'a', epoch: 7 })).toBe(false); // stale fence
      expect(await t.a.takeCommand(one, fence)).toBe(true);
      expect(await t.a.takeCommand(one, fence)).toBe(false);
      expect(await t.b.withdrawCommand(one)).toBe(false);
      expect(await t.b.commandStatus(one)).toMatchObject({ state: 'taken', takenEpoch: 1 });
      expect(await t.a.completeCommand(one, { ok: { n: 1 } })).toBe(true);
      expect(await t.a.completeCommand(one, { ok: { n: 2 } })).toBe(false);
      expect(await t.b.commandStatus(one)).toEqual({
        state: 'done',
        result: { ok: { n: 1 } },
        takenEpoch: 1,
      });
      // two: withdrawn, then the leader can neither take nor complete it
      expect(await t.b.withdrawCommand(two)).toBe(true);
      expect(await t.b.withdrawCommand(two)).toBe(false);
      expect(await t.a.takeCommand(two, fence)).toBe(false);
      expect(await t.a.completeCommand(two, { ok: 1 })).toBe(false);
      expect(await t.b.commandStatus(two)).toMatchObject({ state: 'abandoned' });
      expect(await t.a.pendingCommands(10)).toEqual([]);
      expect(await t.b.commandStatus(9999)).toBeNull();
    });

    it('pruning deletes old finished and pending commands, keeps a live term’s taken ones', async () => {
      await t.a.acquireLease(A1, 60_000);
      const fence = { holder: 'a', epoch: 1 };
      const done = await t.b.enqueueCommand('k', {});
      await t.a.takeCommand(done, fence);
      await t.a.completeCommand(done, { ok: 1 });
      const withdrawn = await t.b.enqueueCommand('k', {});
      await t.b.withdrawCommand(withdrawn);
      const pending = await t.b.enqueueCommand('k', {});
      const taken = await t.b.enqueueCommand('k', {});
      await t.a.takeCommand(taken, fence);
      expect(await t.a.pruneCommands(60_000)).toBe(0);
      await t.advance(300);
      const fresh = await t.b.enqueueCommand('k', {});
      expect(await t.a.pruneCommands(200)).toBe(3);
      for (const [id, kept] of [
        [done, false],
        [withdrawn, false],
        [pending, false],
        [taken, true],
        [fresh, true],
      ] as const)
        expect((await t.a.commandStatus(id)) !== null, `command ${id}`).toBe(kept);
      // once its term is over, a taken command that old goes too
      await t.a.releaseLease(A1, 1);
      expect(await t.a.pruneCommands(200)).toBe(1);
      expect(await t.a.commandStatus(taken)).toBeNull();
    });

    it('the feed carries wake-ups and announcements to every subscriber', async () => {
      const got: FeedMessage[] = [];
      const sub = await t.a.subscribe((m) => got.push(m));
      const until = async (n: number): Promise<void> => {
        for (let i = 0; i < 200 && got.length < n; i++) await new Promise((r) => setTimeout(r, 5));
      };
      await t.b.acquireLease(B1, ttlMs);
      const id = await t.b.enqueueCommand('k', {});
      await t.b.takeCommand(id, { holder: 'b', epoch: 1 });
      await t.b.completeCommand(id, { ok: 1 });
      await t.b.publish({ kind: 'live', change: { runs: ['r1'], notifications: [] } });
      await t.b.publish({ kind: 'live', change: { job: { app: 'x', job: 'y', paused: true } } });
      await t.b.releaseLease(B1, 1);
      await until(5);
      expect(got).toEqual([
        { kind: 'command', id },
        { kind: 'done', id },
        { kind: 'live', change: { runs: ['r1'], notifications: [] } },
        { kind: 'live', change: { job: { app: 'x', job: 'y', paused: true } } },
        { kind: 'released' },
      ]);
      await sub.close();
      await sub.closed;
    });

    it('replicas seen, and the store clock', async () => {
      await t.a.touchReplica('a', 'leader');
      await t.b.touchReplica('b', 'standby');
      expect(
        (await t.a.listReplicas(60_000)).map((r) => [r.replica, r.role, typeof r.lastSeen]),
      ).toEqual([
        ['a', 'leader', 'number'],
        ['b', 'standby', 'number'],
      ]);
      expect(typeof (await t.a.storeNow())).toBe('number');
    });
  });
}
